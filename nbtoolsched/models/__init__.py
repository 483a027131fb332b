"""Models: the protocol the agent loop drives, a scripted model and the Anthropic adapter.

``AnthropicModel`` is imported on first use: the SDK takes seconds to import, and a
scripted session or a notebook that never calls the API should not pay for it.
"""

from typing import Any

from . import _stream_events as events
from ._assembler import FinishedBlock, StreamAssembler, collect
from ._protocol import ErrorKind, Model, ModelError
from ._scripted import SCRIPT_FINISHED, ScriptedModel, Turn, text, tool_use

__all__ = [
    "AnthropicModel",
    "ErrorKind",
    "FinishedBlock",
    "Model",
    "ModelError",
    "SCRIPT_FINISHED",
    "ScriptedModel",
    "StreamAssembler",
    "Turn",
    "collect",
    "events",
    "text",
    "tool_use",
]


def __getattr__(name: str) -> Any:
    if name == "AnthropicModel":
        from ._anthropic import AnthropicModel

        return AnthropicModel
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
