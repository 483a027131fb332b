"""validate_transcript catches each way a loop can break a conversation; answer_dangling mends one."""

from __future__ import annotations

import pytest

from nbtoolsched.agent._transcript import InvalidTranscript, answer_dangling, transcript_problems, validate_transcript
from nbtoolsched._messages import Message


def use(i: str) -> dict:
    return {"type": "tool_use", "id": i, "name": "T", "input": {}}


def res(i: str) -> dict:
    return {"type": "tool_result", "tool_use_id": i, "content": "ok"}


def good() -> list[dict]:
    return [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [{"type": "text", "text": "x"}, use("a"), use("b")]},
        {"role": "user", "content": [res("a"), res("b"), {"type": "text", "text": "note"}]},
        {"role": "assistant", "content": "done"},
    ]


def test_a_good_transcript_passes_as_dicts_and_as_models() -> None:
    validate_transcript(good())
    validate_transcript([Message.model_validate(m) for m in good()])
    assert transcript_problems([]) == []


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (lambda t: t.pop(0), "roles must alternate"),
        (lambda t: t[2]["content"].pop(1), "['b'] in message 1 have no tool_result"),
        (lambda t: t[2]["content"].insert(0, res("a")), "answered more than once"),
        (lambda t: t[2]["content"].append(res("zzz")), "did not call"),
        (lambda t: t[2]["content"].insert(0, t[2]["content"].pop(2)), "must start with its tool_result blocks"),
        (lambda t: t[3].update(content=[use("a")]), "used more than once"),
        (lambda t: t[3].update(content=[]), "empty"),
        (lambda t: t[1]["content"].append(res("q")), "assistant) contains tool_result"),
        (lambda t: t[0].update(content=[use("u")]), "user) contains tool_use"),
        (lambda t: t.__delitem__(slice(2, None)), "never answered"),
    ],
)
def test_each_broken_rule_is_named(change, words: str) -> None:
    transcript = good()
    change(transcript)
    with pytest.raises(InvalidTranscript) as caught:
        validate_transcript(transcript)
    assert any(words in p for p in caught.value.problems), caught.value.problems


def test_answer_dangling_mends_a_cut_off_transcript() -> None:
    transcript = good()[:2]
    assert answer_dangling(transcript, "cancelled") == 2
    validate_transcript(transcript)
    partial = good()
    partial[2]["content"] = [res("b"), {"type": "text", "text": "t"}]
    assert answer_dangling(partial, "cancelled") == 1
    validate_transcript(partial)
    assert answer_dangling(partial, "again") == 0
