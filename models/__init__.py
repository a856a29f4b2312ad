"""The analytical core: pure functions over frozen dataclasses, SI units inside.

No file, terminal or Textual code lives here (an architecture test enforces it).
Glossary of canonical names: ``*_flops`` (FLOP, 2 per multiply-add), ``*_bytes`` (bytes),
``*_s`` (seconds), ``*_flops_per_s``, ``*_bytes_per_s``, ``*_tokens`` (token counts).
"""
