"""Permissions: who may run what, decided the way Claude Code decides it (rules,
modes, hooks, classifier, approvals).

Private modules; the public names are exported by ``nbtoolsched``.
"""
