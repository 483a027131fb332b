"""The tool layer: what a tool is, what it gets (its context), what it answers
(output, validation, permission decision), and the abort tree.

Private modules; the public names are exported by ``nbtoolsched``.
"""
