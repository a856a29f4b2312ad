"""The terminal front ends: the ``roofline`` command line and the Textual explorer.

Importing this package imports nothing heavy: the CLI must start without Textual.
"""
