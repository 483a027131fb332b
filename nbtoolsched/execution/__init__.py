"""The execution layer: one call through the whole pipeline (find, validate, hooks,
permission, call, result mapping, post hooks), and the runner that announces it.

Private modules; the public names are exported by ``nbtoolsched``.
"""
