"""Speed-ups that touch private names of Textual or plotext: the only place allowed to.

Every patch here is measured (benchmarks/README.md) and tested for equivalence with the public path. One switch
turns all of them off: ``ROOFLINE_SPEEDUPS=0`` (see :mod:`roofline.tui.perf.switch`); they also stay off on library
versions the suite has not verified.
"""
