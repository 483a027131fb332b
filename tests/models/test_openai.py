"""OpenAIModel with the real ``openai`` SDK client against streams replayed on 127.0.0.1.

The streams in tests/fixtures/openai are written in the shapes each server sends (see
that folder's README): OpenAI's own (a call's id and name with empty arguments, then
argument pieces, a usage chunk with no choices), vLLM's (no ``arguments`` key in a
call's first delta, ``reasoning_content``), Ollama's (every call whole, all with index 0,
``finish_reason: "stop"`` after tool calls) and a proxy's that drops ``index``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

import nbtoolsched as nts
from nbtoolsched.agent._transcript import validate_transcript
from nbtoolsched.models import ModelError, ScriptServer, ScriptedModel, StreamAssembler, collect
from nbtoolsched.models._openai import ChunkTranslator, openai_messages, openai_tools

from .conftest import OPENAI_DIR, ReplayServer, Reply, weather_tools

PROMPT = [{"role": "user", "content": "What's the weather, and what do my notes say?"}]
TOOLS = [{"name": "get_weather", "description": "Weather", "input_schema": {"type": "object"}},
         {"name": "read_notes", "description": "Notes", "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}}}]
WEATHER = {"location": "San Francisco, CA", "unit": "fahrenheit", "days": [1, 2, 3]}
NOTES = {"path": "notes/caf\u00e9.md"}


def _model(replay: ReplayServer, **options: Any) -> nts.OpenAIModel:
    options.setdefault("max_retries", 0)
    return nts.OpenAIModel("gpt-4.1", api_key="test-key", base_url=replay.base_url + "/v1", **options)


def _reply(name: str, event_delay: float = 0.0) -> Reply:
    return Reply.sse(name, event_delay, folder=OPENAI_DIR)


@pytest.mark.parametrize("fixture", ["openai_parallel.txt", "vllm_parallel.txt", "ollama_parallel.txt", "ollama_one_chunk.txt",
                                     "no_index.txt"])
async def test_every_server_shape_gives_the_same_two_calls(replay: ReplayServer, fixture: str) -> None:
    replay.replies.append(_reply(fixture, event_delay=0.001))
    answer = await collect(_model(replay).stream(PROMPT, tools=TOOLS))
    calls = [b for b in answer.content() if b["type"] == "tool_use"]
    assert [(c["name"], c["input"]) for c in calls] == [("get_weather", WEATHER), ("read_notes", NOTES)]
    assert len({c["id"] for c in calls}) == 2 and all(c["id"] for c in calls)
    assert answer.stop_reason == "tool_use" and answer.unfinished == [] and answer.done
    texts = [b["text"] for b in answer.content() if b["type"] == "text"]
    if fixture != "no_index.txt":
        assert texts == ["Okay, let me check the weather in San Francisco and read the notes."]


async def test_the_request_is_chat_completions_with_function_tools(replay: ReplayServer) -> None:
    replay.replies.append(_reply("openai_parallel.txt"))
    answer = await collect(_model(replay, max_tokens=1024, temperature=0.2).stream(PROMPT, tools=TOOLS, system="Be brief."))
    sent = replay.requests[0]
    assert sent["path"] == "/v1/chat/completions" and sent["headers"]["authorization"] == "Bearer test-key"
    body = sent["json"]
    assert body["model"] == "gpt-4.1" and body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert body["messages"] == [{"role": "system", "content": "Be brief."}, *PROMPT]
    assert body["tools"][1] == {"type": "function", "function": {"name": "read_notes", "description": "Notes",
                                "parameters": TOOLS[1]["input_schema"]}}
    assert body["parallel_tool_calls"] is True and body["max_tokens"] == 1024 and body["temperature"] == 0.2
    assert answer.usage == {"input_tokens": 472, "output_tokens": 89, "cache_read_input_tokens": 128}
    assert answer.model == "gpt-4.1-2025-04-14" and answer.message_id == "chatcmpl-BWx3kQ7n2YbC1sT0dVfA9mZrLpE4"


async def test_vllm_reasoning_is_kept_as_a_thinking_block_and_never_sent_back(replay: ReplayServer) -> None:
    replay.replies.append(_reply("vllm_parallel.txt"))
    answer = await collect(_model(replay).stream(PROMPT, tools=TOOLS))
    assert answer.content()[0] == {"type": "thinking", "thinking": "The user wants the weather and the notes.", "signature": ""}
    back = openai_messages([*PROMPT, {"role": "assistant", "content": answer.content()}])
    assert back[1]["content"] == "Okay, let me check the weather in San Francisco and read the notes."
    assert "thinking" not in json.dumps(back)


_tools = weather_tools


async def test_the_agent_runs_a_real_sdk_session_and_answers_with_tool_messages(replay: ReplayServer) -> None:
    replay.replies.extend([_reply("openai_parallel.txt"), _reply("openai_text.txt")])
    seen: list[nts.events.Event] = []
    agent = nts.Agent(_model(replay), nts.Scheduler(_tools()), system="Be brief.", on_event=seen.append)
    result = await agent.run(PROMPT[0]["content"])
    validate_transcript(result.messages)
    assert result.stop_reason == "end_turn" and result.turns == 2
    finished = [e for e in seen if isinstance(e, nts.events.ModelFinished)]
    assert [(e.stop_reason, e.blocks, e.usage) for e in finished] == [
        ("tool_use", 3, {"input_tokens": 472, "output_tokens": 89, "cache_read_input_tokens": 128}),
        ("end_turn", 1, {"input_tokens": 640, "output_tokens": 17})]
    assert result.final_text == "It is 64\u00b0F in San Francisco; your notes say to bring a jacket."
    second = replay.requests[1]["json"]["messages"]
    assistant = second[2]
    assert assistant["role"] == "assistant" and assistant["content"] == "Okay, let me check the weather in San Francisco and read the notes."
    assert [(c["id"], c["function"]["name"], json.loads(c["function"]["arguments"])) for c in assistant["tool_calls"]] == [
        ("call_T1x1fJ34qAmk2tNTrN7Up6", "get_weather", WEATHER), ("call_BhNtjh3hQ7DnwGzpDmJBHa", "read_notes", NOTES)]
    assert second[3:] == [
        {"role": "tool", "tool_call_id": "call_T1x1fJ34qAmk2tNTrN7Up6", "content": "64 fahrenheit in San Francisco, CA"},
        {"role": "tool", "tool_call_id": "call_BhNtjh3hQ7DnwGzpDmJBHa", "content": "notes/caf\u00e9.md: bring a jacket"}]


async def test_a_call_starts_the_moment_a_later_index_starts(replay: ReplayServer) -> None:
    """The first call runs while the model is still writing the second (vLLM pieces, 20 ms apart)."""
    replay.replies.extend([_reply("vllm_parallel.txt", event_delay=0.02), _reply("openai_text.txt")])
    result = await nts.Agent(_model(replay), nts.Scheduler(_tools())).run("go")
    first, second = [b["id"] for b in result.messages[1]["content"] if b["type"] == "tool_use"]
    times = {(e.kind, getattr(e, "tool_use_id", "")): e.time for e in result.trace.events}
    assert times[("call_started", first)] < times[("model_block", second)] < times[("model_finished", "")]
    assert times[("model_block", first)] < times[("model_block", second)]


async def test_arguments_that_are_not_json_get_the_clear_validation_result(replay: ReplayServer) -> None:
    replay.replies.extend([_reply("invalid_arguments.txt"), _reply("openai_text.txt")])
    result = await nts.Agent(_model(replay), nts.Scheduler(_tools())).run("go")
    validate_transcript(result.messages)
    bad, good = result.messages[2]["content"]
    assert bad["is_error"] and "did not run because the input was not valid JSON" in bad["content"]
    assert "Send the call again with its input as a single JSON object" in bad["content"]
    assert good == {"type": "tool_result", "tool_use_id": "chatcmpl-tool-good", "content": "64 celsius in Paris"}


async def test_an_error_inside_the_stream_is_a_retryable_stream_error(replay: ReplayServer) -> None:
    replay.replies.append(_reply("error_midstream.txt"))
    seen = []
    with pytest.raises(ModelError) as caught:
        async for event in _model(replay).stream(PROMPT):
            seen.append(event)
    assert caught.value.kind == "stream_error" and caught.value.retryable and caught.value.error_type == "server_error"
    assert "The server had an error" in caught.value.message and caught.value.events_before == 2 and seen


async def test_a_stream_cut_short_is_a_stream_error_not_a_finished_answer(replay: ReplayServer) -> None:
    replay.replies.append(_reply("cut_short.txt"))
    with pytest.raises(ModelError) as caught:
        await collect(_model(replay).stream(PROMPT, tools=TOOLS))
    assert caught.value.kind == "stream_error" and "no finish_reason" in caught.value.message


@pytest.mark.parametrize(("status", "fixture", "kind"), [(429, "rate_limited_429.json", "rate_limited"),
                                                         (401, "unauthorized_401.json", "authentication")])
async def test_a_status_before_the_stream_has_its_kind(replay: ReplayServer, status: int, fixture: str, kind: str) -> None:
    replay.replies.append(Reply.json(status, fixture, folder=OPENAI_DIR))
    with pytest.raises(ModelError) as caught:
        await collect(_model(replay).stream(PROMPT))
    assert caught.value.kind == kind and caught.value.status == status and caught.value.events_before == 0
    assert caught.value.message.startswith(("Rate limit reached", "Incorrect API key"))


async def test_the_sdk_retries_a_429_by_itself_when_allowed(replay: ReplayServer) -> None:
    replay.replies.append(Reply.json(429, "rate_limited_429.json", folder=OPENAI_DIR, **{"retry-after-ms": "10"}))
    replay.replies.append(_reply("openai_text.txt"))
    answer = await collect(_model(replay, max_retries=1).stream(PROMPT))
    assert answer.content()[0]["text"].startswith("It is 64") and len(replay.requests) == 2


async def test_the_agent_retries_and_falls_back_as_with_anthropic(replay: ReplayServer) -> None:
    """A broken stream is retried (stream_retries); a server that keeps failing hands the run to the fallback."""
    replay.replies.extend([_reply("error_midstream.txt"), _reply("openai_text.txt")])
    retried = await nts.Agent(_model(replay), nts.ToolRegistry(), stream_retries=1).run("hello")
    assert retried.stop_reason == "end_turn" and retried.final_text.startswith("It is 64") and len(replay.requests) == 2
    replay.replies.append(Reply(500, b'{"error": {"message": "upstream down", "type": "server_error"}}', "application/json"))
    fallback = ScriptedModel(["The fallback answers."], name="fallback")
    switched = await nts.Agent(_model(replay), nts.ToolRegistry(), fallback_model=fallback).run("hello")
    assert switched.stop_reason == "end_turn" and switched.final_text == "The fallback answers."
    assert [e.kind for e in switched.trace.events if e.kind in ("stream_failed", "model_fallback")] == ["stream_failed", "model_fallback"]


def test_without_a_key_or_a_base_url_it_says_what_it_needs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ValueError, match="api_key= or OPENAI_API_KEY"):
        nts.OpenAIModel("gpt-4.1")
    with pytest.raises(ValueError, match="needs a model name"):
        nts.OpenAIModel(" ", base_url="http://127.0.0.1:1/v1")
    assert nts.OpenAIModel("llama3.2", base_url="http://127.0.0.1:1/v1").client.api_key == "not-needed"


# -- the conversation, converted ----------------------------------------------------------------------

def test_tool_results_become_tool_messages_before_what_the_person_said() -> None:
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}
    messages = [
        {"role": "user", "content": "look"},
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "hm", "signature": "s"},
                                          {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "a.png"}},
                                          {"type": "tool_use", "id": "t2", "name": "Bash", "input": {}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "an image"}, image]},
            {"type": "tool_result", "tool_use_id": "t2", "content": "<tool_use_error>denied</tool_use_error>", "is_error": True},
            {"type": "text", "text": "and now?"}]},
    ]
    out = openai_messages(messages)
    assert out[1] == {"role": "assistant", "content": None, "tool_calls": [
        {"id": "t1", "type": "function", "function": {"name": "Read", "arguments": '{"file_path": "a.png"}'}},
        {"id": "t2", "type": "function", "function": {"name": "Bash", "arguments": "{}"}}]}
    assert out[2] == {"role": "tool", "tool_call_id": "t1", "content": "an image"}
    assert out[3] == {"role": "tool", "tool_call_id": "t2", "content": "<tool_use_error>denied</tool_use_error>"}
    assert out[4] == {"role": "user", "content": [
        {"type": "text", "text": "(images returned by tool call t1)"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
        {"type": "text", "text": "and now?"}]}
    assert openai_tools([{"name": "X", "input_schema": None}]) == [
        {"type": "function", "function": {"name": "X", "description": "", "parameters": {"type": "object", "properties": {}}}}]


def test_a_call_without_a_name_is_a_bad_stream() -> None:
    translator = ChunkTranslator()
    translator.feed({"id": "c", "choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "x", "function": {"arguments": "{}"}}]}}]})
    with pytest.raises(ModelError) as caught:
        translator.feed({"id": "c", "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})
    assert caught.value.kind == "bad_stream" and "without a function name" in caught.value.message


# -- the invariant: however a server cuts the stream, the calls come out whole --------------------------

_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8),
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
                     max_leaves=6)
_CALLS = st.lists(st.tuples(st.sampled_from(["Read", "Grep", "Bash"]), st.dictionaries(st.text(max_size=6), _JSON, max_size=3)),
                  min_size=0, max_size=4)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(text=st.text(max_size=30), calls=_CALLS, cuts=st.lists(st.integers(1, 7), min_size=1, max_size=12),
       whole=st.booleans(), indexed=st.booleans(), finish=st.sampled_from(["tool_calls", "stop"]))
def test_any_cut_of_the_arguments_gives_the_same_calls(text: str, calls: list[tuple[str, dict[str, Any]]],
                                                       cuts: list[int], whole: bool, indexed: bool, finish: str) -> None:
    chunks: list[dict[str, Any]] = [{"id": "c", "model": "m", "choices": [{"index": 0, "delta": {"role": "assistant"}}]}]
    if text:
        chunks.append({"id": "c", "choices": [{"index": 0, "delta": {"content": text}}]})
    for number, (name, data) in enumerate(calls):
        raw = json.dumps(data)
        pieces, at, turn = [], 0, 0
        while at < len(raw) or not pieces:
            size = len(raw) if whole else cuts[turn % len(cuts)]
            pieces.append(raw[at:at + size])
            at, turn = at + size, turn + 1
        for k, piece in enumerate(pieces):
            call: dict[str, Any] = {"function": {"arguments": piece}}
            if indexed:
                call["index"] = number
            if k == 0:
                call.update(id=f"call_{number}", type="function")
                call["function"]["name"] = name
            chunks.append({"id": "c", "choices": [{"index": 0, "delta": {"tool_calls": [call]}}]})
    chunks.append({"id": "c", "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    translator, assembler = ChunkTranslator(), StreamAssembler()
    completed = []
    for chunk in chunks:
        for event in translator.feed(chunk):
            finished = assembler.feed(event)
            if finished is not None and finished.is_tool_use:
                completed.append(finished)
    for event in translator.finish():
        assembler.feed(event)
    got = [(b["name"], b["input"]) for b in assembler.content() if b["type"] == "tool_use"]
    assert got == calls and all(f.input_error is None for f in completed) and len(completed) == len(calls)
    assert [b["id"] for b in assembler.content() if b["type"] == "tool_use"] == [f"call_{n}" for n in range(len(calls))]
    assert assembler.stop_reason == ("tool_use" if calls or finish == "tool_calls" else "end_turn") and assembler.done
    assert "".join(b["text"] for b in assembler.content() if b["type"] == "text") == text


# -- what an outside review found ---------------------------------------------------------------------

def _events(chunks: list[object], taken: tuple[str, ...] = ()) -> StreamAssembler:
    translator, assembler = ChunkTranslator(taken=taken), StreamAssembler()
    for chunk in chunks:
        for event in translator.feed(chunk):
            assembler.feed(event)
    for event in translator.finish():
        assembler.feed(event)
    return assembler


def _chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {"id": "c", "model": "m", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def _call(index: int | None, call_id: str | None, name: str | None, arguments: Any) -> dict[str, Any]:
    function: dict[str, Any] = {"arguments": arguments}
    if name is not None:
        function["name"] = name
    call: dict[str, Any] = {"function": function}
    if index is not None:
        call["index"] = index
    if call_id is not None:
        call["id"] = call_id
    return {"tool_calls": [call]}


def test_ids_are_unique_across_turns_and_within_an_answer() -> None:
    """A server that numbers calls from 0 each turn, or repeats an id, gets fresh ids (the results go back under them)."""
    answer = _events([_chunk(_call(0, "call_0", "Read", '{"a": 1}')), _chunk(_call(1, "call_0", "Read", '{"a": 2}')),
                      _chunk(_call(2, None, "Read", '{"a": 3}')), _chunk({}, "tool_calls")], taken=("call_1",))
    ids = [b["id"] for b in answer.content()]
    assert ids[0] == "call_0" and len(set(ids)) == 3 and "call_1" not in ids
    assert [b["input"] for b in answer.content()] == [{"a": 1}, {"a": 2}, {"a": 3}]
    again = _events([_chunk(_call(0, "call_0", "Read", "{}")), _chunk({}, "tool_calls")], taken=ids)
    assert again.content()[0]["id"] not in ids


def test_a_name_sent_in_pieces_is_whole() -> None:
    answer = _events([_chunk(_call(0, "x", "get_", "")), _chunk(_call(0, None, "weather", "")),
                      _chunk(_call(0, None, None, '{"city": "Oslo"}')), _chunk({}, "tool_calls")])
    assert [(b["name"], b["input"]) for b in answer.content()] == [("get_weather", {"city": "Oslo"})]


@pytest.mark.parametrize(("arguments", "problem"), [([1, 2], "must be a JSON object, got list"),
                                                    (7, "must be a JSON object, got int")])
def test_arguments_that_are_not_a_string_or_an_object_say_so(arguments: Any, problem: str) -> None:
    translator, assembler = ChunkTranslator(), StreamAssembler()
    finished = [assembler.feed(e) for chunk in (_chunk(_call(0, "x", "Read", arguments)), _chunk({}, "tool_calls"))
                for e in translator.feed(chunk)]
    errors = [f.input_error for f in finished if f is not None]
    assert len(errors) == 1 and errors[0] is not None and problem in errors[0]


def test_surrogate_halves_split_across_chunks_are_joined_and_lone_ones_replaced(tmp_path: Any) -> None:
    answer = _events([_chunk({"content": "smile \ud83d"}), _chunk({"content": "\ude00 ok"}),
                      _chunk(_call(0, "x", "Write", '{"text": "\\ud83d", "b": "\\ud83d\\ude00"}')), _chunk({}, "tool_calls")])
    text, call = answer.content()
    assert text["text"] == "smile \U0001F600 ok" and call["input"] == {"text": "\ufffd", "b": "\U0001F600"}
    writer = nts.TranscriptWriter(tmp_path / "t.jsonl", "s", tmp_path)
    writer.append_user("a file name decoded with surrogateescape: caf\udce9.txt")  # must not raise
    assert nts.read_transcript(tmp_path / "t.jsonl").messages[0]["content"].endswith("caf\udce9.txt")


def test_chunks_of_the_wrong_shape_are_a_bad_stream_not_a_crash() -> None:
    for chunk, words in ((123, "not a JSON object"), (_chunk({"tool_calls": ["x"]}), "tool call delta is not an object"),
                         (_chunk({"tool_calls": [{"index": 0, "function": "Read"}]}), "function is not an object")):
        with pytest.raises(ModelError) as caught:
            ChunkTranslator().feed(chunk)
        assert caught.value.kind == "bad_stream" and words in caught.value.message
    usage = {"id": "c", "choices": [], "usage": {"prompt_tokens": "lots", "completion_tokens": 3, "prompt_tokens_details": [1]}}
    answer = _events([_chunk({"content": "hi"}, "stop"), usage])
    assert answer.usage == {"input_tokens": 0, "output_tokens": 3} and answer.content() == [{"type": "text", "text": "hi"}]
    assert _events([{"choices": [{"index": None, "delta": {"content": "x"}, "finish_reason": "stop"}]}]).content()[0]["text"] == "x"
    with pytest.raises(ModelError) as caught:
        ChunkTranslator().finish()
    assert caught.value.kind == "bad_stream" and "base_url" in caught.value.message and not caught.value.retryable


def test_an_endless_block_is_refused_and_many_deltas_cost_linear_time(monkeypatch: pytest.MonkeyPatch) -> None:
    import nbtoolsched.models._assembler as assembly

    monkeypatch.setattr(assembly, "MAX_BLOCK_CHARS", 1000)
    translator, assembler = ChunkTranslator(), StreamAssembler()
    with pytest.raises(ModelError) as caught:
        for _ in range(200):
            for event in translator.feed(_chunk({"content": "0123456789"})):
                assembler.feed(event)
    assert caught.value.kind == "bad_stream" and "grew past 1,000 characters" in caught.value.message
    monkeypatch.setattr(assembly, "MAX_BLOCK_CHARS", 10**9)
    many = [_chunk({"content": "x" * 10}) for _ in range(200_000)]
    assert len(_events([*many, _chunk({}, "stop")]).content()[0]["text"]) == 2_000_000  # quadratic joins took 30 s here


def test_conversion_says_what_chat_completions_cannot_carry() -> None:
    out = openai_messages([
        {"role": "assistant", "content": [{"type": "text", "text": "one"}, {"type": "text", "text": "two"}]},
        {"role": "user", "content": [
            {"type": "document", "title": "spec", "source": {"type": "text", "media_type": "text/plain", "data": "body"}},
            {"type": "image", "source": {"type": "file", "file_id": "f1"}},
            {"type": "tool_result", "tool_use_id": "t", "content": [{"type": "search_result", "title": "T", "source": "s",
                                                                      "content": [{"type": "text", "text": "hit"}]}]}]}])
    assert out[0] == {"role": "assistant", "content": "one\n\ntwo"}
    assert out[1] == {"role": "tool", "tool_call_id": "t", "content": "T (s)\nhit"}
    assert out[2]["content"] == "spec\n\nbody\n\n[a image block that Chat Completions cannot carry was left out]"


def test_anthropic_never_gets_another_models_unsigned_reasoning(replay: ReplayServer) -> None:
    from nbtoolsched.models._anthropic import _signed_only

    messages = [{"role": "user", "content": "q"},
                {"role": "assistant", "content": [{"type": "thinking", "thinking": "vLLM's", "signature": ""},
                                                  {"type": "text", "text": "a"}]},
                {"role": "assistant", "content": [{"type": "thinking", "thinking": "only", "signature": ""}]},
                {"role": "assistant", "content": [{"type": "thinking", "thinking": "Claude's", "signature": "sig"}]}]
    assert _signed_only(messages) == [messages[0], {"role": "assistant", "content": [{"type": "text", "text": "a"}]},
                                      {"role": "assistant", "content": [{"type": "text", "text": "(reasoning only)"}]},
                                      messages[3]]
    assert _signed_only(messages[:1]) is messages[:1] or _signed_only(messages[:1]) == messages[:1]


def test_the_script_server_answers_bad_requests_with_400() -> None:
    import http.client

    with ScriptServer(["hi"]) as server:
        for body in (b"[1, 2]", b'{"messages": 5}', b"not json", b'{"stream": false}'):
            connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
            connection.request("POST", "/v1/chat/completions", body, {"Content-Type": "application/json"})
            reply = connection.getresponse()
            assert reply.status == 400 and b"invalid_request_error" in reply.read(), body
            connection.close()
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
        connection.request("POST", "/v1/messages", b"{}", {"Content-Length": "x1"})
        assert connection.getresponse().status == 400
