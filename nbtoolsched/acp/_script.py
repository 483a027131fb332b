"""``--script path.json``: a ScriptedModel written down as JSON, for tests and demos.

The file holds the model's answers in order (each session plays them from the first),
and optionally the model's ``name``::

    {"name": "demo",
     "turns": [
       [{"type": "tool_use", "name": "Read", "input": {"file_path": "a.txt"}}],
       {"blocks": ["Reading on", {"type": "tool_use", "name": "Bash", "input": {"command": "ls"}}],
        "delay_before_block": 0.1},
       "All done."
     ]}

``turns`` may also be the whole file (a bare list). A turn is a string (one text block),
a list of blocks, or an object with ``blocks`` and any of ``Turn``'s streaming options
(``delay_before_block``, ``delay_per_delta``, ``text_deltas``, ``input_deltas``,
``stop_reason``). A block is a string (text) or a content block in the API's shape.
When the turns run out the model says ``(script finished)`` and calls no tool.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

from ..models._scripted import ScriptedModel, Turn

__all__ = ["load_script", "ScriptError"]

_TURN_OPTIONS = ("delay_before_block", "delay_per_delta", "text_deltas", "input_deltas", "stop_reason")


class ScriptError(ValueError):
    """The script file cannot be used; the message names the file and the turn."""


def load_script(path: str | Path) -> Callable[[], ScriptedModel]:
    """Read and check the whole script now; the result makes a fresh model per session."""
    file = Path(path)
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except OSError as err:
        raise ScriptError(f"cannot read the script {file}: {err.strerror or err}") from None
    except json.JSONDecodeError as err:
        raise ScriptError(f"the script {file} is not valid JSON: {err}") from None
    name = "scripted"
    if isinstance(data, dict):
        name = data.get("name", name)
        data = data.get("turns")
        if not isinstance(name, str) or not name:
            raise ScriptError(f"the script {file}: 'name' must be a non-empty string")
    if not isinstance(data, list):
        raise ScriptError(f"the script {file} must be a list of turns, or an object with a 'turns' list")
    turns = [_turn(item, number, file) for number, item in enumerate(data, 1)]
    return lambda: ScriptedModel(list(turns), name=name)


def _turn(item: Any, number: int, file: Path) -> Turn:
    try:
        if isinstance(item, dict):
            unknown = set(item) - {"blocks", *_TURN_OPTIONS}
            if unknown:
                raise ValueError(f"unknown keys {sorted(unknown)}; a turn takes 'blocks' and {', '.join(_TURN_OPTIONS)}")
            blocks = item.get("blocks")
            if not isinstance(blocks, list):
                raise ValueError("'blocks' must be a list")
            return Turn(blocks, **{key: item[key] for key in _TURN_OPTIONS if key in item})
        if isinstance(item, str):
            return Turn([item])
        if isinstance(item, list):
            return Turn(item)
        raise ValueError(f"a turn must be a string, a list of blocks or an object, got {type(item).__name__}")
    except (TypeError, ValueError) as err:
        raise ScriptError(f"the script {file}, turn {number}: {err}") from None
