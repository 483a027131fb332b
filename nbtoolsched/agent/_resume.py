"""Taking up a session from its JSONL transcript (ours or Claude Code's), to go on writing it.

The conversation is the file's ``parentUuid`` chain, read by ``read_transcript``. A
session that stopped mid-turn (a crash, a killed kernel) can end with calls that have no
result: those get a placeholder result, appended to the file, so the file and the
conversation stay equal and the next request is one the API accepts (Claude Code pairs
such calls with a placeholder when it sends them). Anything else wrong is refused with
every problem named: a resumed model must not silently miss part of its history.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._errors import TranscriptError
from .._session_log import TranscriptWriter, read_transcript
from ..execution._results import error_result
from . import _texts as texts
from ._transcript import transcript_problems

__all__ = ["Resumed", "resume_transcript"]

_CUT_SHORT = "the file ends in the middle of this entry"


@dataclass
class Resumed:
    messages: list[dict[str, Any]]  # the conversation, valid, equal to what the file holds
    writer: TranscriptWriter  # appends to the same file, after its last entry
    session_id: str
    repaired: list[str]  # tool_use ids that got a placeholder result


def resume_transcript(path: str | os.PathLike[str], cwd: str | os.PathLike[str]) -> Resumed:
    """Read ``path`` to continue it; ``TranscriptError`` lists what makes that unsafe.

    The session id is the file's own (new entries join the same session, as a resumed
    Claude Code session does); ``cwd`` is where the new entries say they ran."""
    file = Path(path)
    try:
        transcript = read_transcript(file)
    except OSError as err:
        raise TranscriptError(f"cannot read the transcript {file}: {err.strerror or err}") from None
    problems = [str(p) for p in transcript.problems if _CUT_SHORT not in p.message]
    if problems:
        raise TranscriptError(f"the transcript {file} cannot be continued safely:\n" + "\n".join(f"- {p}" for p in problems))
    messages = transcript.messages
    if not messages:
        raise TranscriptError(f"the transcript {file} holds no conversation (no user or assistant entries)")
    session_id = transcript.session_id or file.stem
    writer = TranscriptWriter(file, session_id, cwd)
    repaired = _answer_the_last_calls(messages, writer)
    left = transcript_problems(messages)
    if left:
        raise TranscriptError(f"the conversation in {file} is not valid, so it cannot be continued:\n"
                              + "\n".join(f"- {p}" for p in left))
    return Resumed(messages, writer, session_id, repaired)


def _answer_the_last_calls(messages: list[dict[str, Any]], writer: TranscriptWriter) -> list[str]:
    """Calls of the last answer with no result get a placeholder, in memory and in the file."""
    answer_at = len(messages) - 1 if messages[-1]["role"] == "assistant" else len(messages) - 2
    if answer_at < 0 or messages[answer_at]["role"] != "assistant" or isinstance(messages[answer_at]["content"], str):
        return []
    uses = [b["id"] for b in messages[answer_at]["content"] if isinstance(b, dict) and b.get("type") == "tool_use"]
    reply = messages[answer_at + 1] if answer_at + 1 < len(messages) else None
    reply_blocks = reply["content"] if reply is not None else []
    if isinstance(reply_blocks, str) or any(not isinstance(b, dict) or b.get("type") != "tool_result" for b in reply_blocks):
        return []  # results followed by other content: appending more would break the order; refused later
    answered = {b.get("tool_use_id") for b in reply_blocks}
    missing = [use for use in uses if use not in answered]
    if not missing:
        return []
    results = [error_result(use, texts.MISSING_RESULT) for use in missing]
    writer.append_tool_results(results)
    blocks = [r.to_dict() for r in results]
    if reply is None:
        messages.append({"role": "user", "content": blocks})
    else:
        reply["content"] = list(reply_blocks) + blocks
    return missing
