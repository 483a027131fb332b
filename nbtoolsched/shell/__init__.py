"""Static analysis of shell commands: tree-sitter-bash parsing, splitting, and the
read-only check. A pure utility layer: it imports nothing else from nbtoolsched
but the errors.

Private modules; ``nbtoolsched.internals`` exports ``analyze`` and ``parse_command``.
"""
