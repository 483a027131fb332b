"""Models: the protocol the agent loop drives, stream assembly, and script helpers.

The models users pass to an ``Agent`` (``ScriptedModel`` with its ``Turn``,
``AnthropicModel``, ``OpenAIModel``) and ``ModelError`` are exported by ``nbtoolsched``
itself; this namespace holds the rest of the layer: the ``Model`` protocol, the stream
assembler, the builders of scripted answers (``text``, ``tool_use``) and of raw stream
events (``stream_events``), and ``ScriptServer``, which serves a script over HTTP in
both protocols for the real SDK clients. The two SDK adapters are imported on first use:
an SDK takes a second or more to import, and a scripted session or a notebook that never
calls an API should not pay for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._exports import publish
from . import _stream_events as stream_events
from ._assembler import FinishedBlock, StreamAssembler, collect
from ._protocol import ErrorKind, Model, ModelError  # ModelError: exported by nbtoolsched, reachable here
from ._scripted import SCRIPT_FINISHED, ScriptedModel, Turn, text, tool_use  # likewise ScriptedModel, Turn
from ._serve import ScriptServer

if TYPE_CHECKING:
    from ._anthropic import AnthropicModel
    from ._openai import OpenAIModel

__all__ = [
    "ErrorKind",
    "FinishedBlock",
    "Model",
    "SCRIPT_FINISHED",
    "ScriptServer",
    "StreamAssembler",
    "collect",
    "stream_events",
    "text",
    "tool_use",
]

publish(__name__, __all__, globals())


if not TYPE_CHECKING:  # type checkers see the two adapters above, and no other name appears from here

    def __getattr__(name: str) -> type:
        if name in ("AnthropicModel", "OpenAIModel"):  # exported by nbtoolsched; reachable here too
            import nbtoolsched

            return getattr(nbtoolsched, name)
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
