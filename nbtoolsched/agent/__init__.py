"""The agent loop: stream a model's answer, run its tool calls, feed the results back.

The session's transcript file (Claude Code's JSONL) is written by the loop; its writer
and reader live in ``nbtoolsched._session_log`` (every layer may use them) and are
re-exported here.
"""

from ..models._assembler import FinishedBlock, StreamAssembler, collect
from ._loop import Agent, AgentResult, StopReason
from ..models._protocol import Model, ModelError
from .._session_log import Transcript, TranscriptEntry, TranscriptProblem, TranscriptWriter, read_transcript
from ._transcript import InvalidTranscript, answer_dangling, transcript_problems, validate_transcript

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
