"""The agent loop: stream a model's answer, run its tool calls, feed the results back.

Private modules; the public names are exported by ``nbtoolsched``.
"""
