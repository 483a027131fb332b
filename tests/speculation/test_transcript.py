"""Cleaning a speculated transcript for injection into the real conversation."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from nbtoolsched.speculation._transcript import clean_transcript, cut_to_continuable


def tu(i):
    return {"type": "tool_use", "id": f"t{i}", "name": "Read", "input": {"file_path": "a"}}


def tr(i, content="ok", error=False):
    block = {"type": "tool_result", "tool_use_id": f"t{i}", "content": content}
    if error:
        block["is_error"] = True
    return block


def test_drops_thinking_failed_pairs_placeholders_and_empty_messages():
    messages = [
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "hmm", "signature": "s"}, {"type": "text", "text": "Reading."}, tu(1), tu(2)]},
        {"role": "user", "content": [tr(1), tr(2, "boom", error=True)]},
        {"role": "assistant", "content": [{"type": "redacted_thinking", "data": "x"}, tu(3)]},
        {"role": "user", "content": [tr(3, [{"type": "text", "text": "[Request interrupted by user for tool use]"}])]},
        {"role": "user", "content": [{"type": "text", "text": "[Request interrupted by user]"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "  "}]},
        {"role": "assistant", "content": "Final words."},
    ]
    clean = clean_transcript(messages)
    assert clean == [
        {"role": "assistant", "content": [{"type": "text", "text": "Reading."}, tu(1)]},
        {"role": "user", "content": [tr(1)]},
        {"role": "assistant", "content": [{"type": "text", "text": "Final words."}]},
    ]


def test_overlay_paths_in_results_are_rewritten():
    messages = [
        {"role": "assistant", "content": [tu(1)]},
        {"role": "user", "content": [tr(1, "File written: /ovl/tree/src/a.py"), ]},
    ]
    clean = clean_transcript(messages, lambda s: s.replace("/ovl/tree/", "/proj/"))
    assert clean[1]["content"][0]["content"] == "File written: /proj/src/a.py"


def test_cut_keeps_up_to_the_last_user_message():
    msgs = [{"role": "assistant", "content": [tu(1)]}, {"role": "user", "content": [tr(1)]}, {"role": "assistant", "content": "x"}]
    assert cut_to_continuable(msgs) == msgs[:2]
    assert cut_to_continuable(msgs[:1]) == []


BLOCKS = st.one_of(
    st.builds(lambda i: ("use", i), st.integers(0, 5)),
    st.builds(lambda i, ok: ("result", i, ok), st.integers(0, 5), st.booleans()),
    st.just(("thinking",)),
    st.sampled_from([("text", "hi"), ("text", " "), ("text", "[Request interrupted by user]")]),
)


def _render(spec):
    if spec[0] == "use":
        return tu(spec[1])
    if spec[0] == "result":
        return tr(spec[1], error=not spec[2])
    if spec[0] == "thinking":
        return {"type": "thinking", "thinking": "t", "signature": "s"}
    return {"type": "text", "text": spec[1]}


@given(st.lists(st.tuples(st.sampled_from(["user", "assistant"]), st.lists(BLOCKS, min_size=1, max_size=4)), max_size=8))
def test_invariants(raw):
    messages = [{"role": role, "content": [_render(b) for b in blocks]} for role, blocks in raw]
    clean = clean_transcript(messages)
    blocks = [b for m in clean for b in m["content"]]
    uses = {b["id"] for b in blocks if b["type"] == "tool_use"}
    results = [b for b in blocks if b["type"] == "tool_result"]
    assert all(not r.get("is_error") for r in results)
    # every kept call has a kept successful result, and every kept result a successful call somewhere
    assert uses <= {r["tool_use_id"] for r in results}
    assert all(b["type"] not in ("thinking", "redacted_thinking") for b in blocks)
    assert all(m["content"] for m in clean)
    assert all(a["role"] != b["role"] for a, b in zip(clean, clean[1:]))
    assert clean_transcript(clean) == clean  # idempotent
