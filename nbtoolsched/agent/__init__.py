"""The agent loop: stream a model's answer, run its tool calls, feed the results back.

The session's transcript file (Claude Code's JSONL) is written by the loop; its writer
and reader live in ``nbtoolsched.session_log`` (every layer may use them) and are
re-exported here.
"""

from .assembler import FinishedBlock, StreamAssembler, collect
from .loop import Agent, AgentResult, StopReason
from .protocol import Model, ModelError
from ..session_log import Transcript, TranscriptEntry, TranscriptProblem, TranscriptWriter, read_transcript
from .transcript import InvalidTranscript, answer_dangling, transcript_problems, validate_transcript

__all__ = [
    "Agent",
    "AgentResult",
    "FinishedBlock",
    "InvalidTranscript",
    "Model",
    "ModelError",
    "StopReason",
    "StreamAssembler",
    "Transcript",
    "TranscriptEntry",
    "TranscriptProblem",
    "TranscriptWriter",
    "answer_dangling",
    "collect",
    "read_transcript",
    "transcript_problems",
    "validate_transcript",
]
