"""The scheduling layer: partition, the one engine (the streaming executor), the
``Scheduler`` that drives it, run handles, traces and timelines.

Private modules; the public names are exported by ``nbtoolsched``.
"""
