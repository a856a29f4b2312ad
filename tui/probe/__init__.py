"""Helpers for the GPU box itself: find the local accelerators, measure their ceilings, sample live counters.

Everything here talks to the machine (subprocesses, NVML, PyTorch/CuPy); nothing in :mod:`roofline.models`
does. Each helper degrades to a clear reason when the box lacks what it needs.
"""
