"""The agent loop: stream a model's answer, run its tool calls, feed the results back."""

from .assembler import FinishedBlock, StreamAssembler, collect
from .loop import Agent, AgentResult, StopReason
from .protocol import Model, ModelError
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
    "answer_dangling",
    "collect",
    "transcript_problems",
    "validate_transcript",
]
