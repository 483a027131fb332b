"""The execution layer: one call through the whole pipeline (find, validate, hooks,
permission, call, result mapping, post hooks), and the rules every path shares (stop
reasons, context modifiers, the traced approver).

Private modules; the public names are exported by ``nbtoolsched``.
"""
