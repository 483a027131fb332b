"""AnthropicModel with the real SDK client against recorded streams replayed on 127.0.0.1."""

from __future__ import annotations

import asyncio

import pytest

import nbtoolsched as nts
from nbtoolsched.agent._loop import Agent
from nbtoolsched.agent._transcript import validate_transcript
from nbtoolsched.models import AnthropicModel, ModelError, collect

from .conftest import ReplayServer, Reply, weather_tools

PROMPT = [{"role": "user", "content": "What's the weather, and what do my notes say?"}]


def _model(replay: ReplayServer, **options: object) -> AnthropicModel:
    options.setdefault("max_retries", 0)
    return AnthropicModel("claude-sonnet-4-6", api_key="test-key", base_url=replay.base_url, **options)


async def test_text_and_a_tool_input_split_across_many_deltas(replay: ReplayServer) -> None:
    replay.replies.append(Reply.sse("text_tool_use.txt", event_delay=0.001))
    tools = [{"name": "get_weather", "description": "Weather", "input_schema": {"type": "object"}}]
    events = [e async for e in _model(replay, max_tokens=1024).stream(PROMPT, tools=tools, system="Be brief.")]
    deltas = [e for e in events if e["type"] == "content_block_delta" and e["delta"]["type"] == "input_json_delta"]
    assert len(deltas) >= 15 and all(isinstance(e, dict) for e in events)
    answer = await collect(_aiter(events))
    assert answer.content()[1]["input"] == {"location": "San Francisco, CA", "unit": "fahrenheit", "days": [1, 2, 3]}
    assert answer.content()[2]["input"] == {"path": "notes/caf\u00e9.md"}
    assert answer.stop_reason == "tool_use" and answer.usage["output_tokens"] == 89
    sent = replay.requests[0]
    assert sent["path"] == "/v1/messages"
    assert "test-key" in sent["headers"].get("x-api-key", "") + sent["headers"].get("authorization", "")
    assert sent["json"]["stream"] is True and sent["json"]["max_tokens"] == 1024
    assert sent["json"]["tools"] == tools and sent["json"]["system"] == "Be brief." and sent["json"]["messages"] == PROMPT


async def test_an_error_event_mid_stream_is_a_stream_error_after_the_events_before_it(replay: ReplayServer) -> None:
    replay.replies.append(Reply.sse("error_midstream.txt"))
    seen = []
    with pytest.raises(ModelError) as caught:
        async for event in _model(replay).stream(PROMPT):
            seen.append(event)
    assert caught.value.kind == "stream_error" and caught.value.error_type == "overloaded_error"
    assert caught.value.events_before == len(seen) > 0 and caught.value.retryable


async def test_529_before_the_first_byte_is_overloaded_when_retries_are_off(replay: ReplayServer) -> None:
    replay.replies.append(Reply.json(529, "overloaded_529.json"))
    with pytest.raises(ModelError) as caught:
        await collect(_model(replay).stream(PROMPT))
    assert caught.value.kind == "overloaded" and caught.value.status == 529 and caught.value.events_before == 0
    assert len(replay.requests) == 1


async def test_the_sdk_retries_a_529_by_itself_when_allowed(replay: ReplayServer) -> None:
    replay.replies.append(Reply.json(529, "overloaded_529.json", **{"retry-after-ms": "10"}))
    replay.replies.append(Reply.sse("text_only.txt"))
    answer = await collect(_model(replay, max_retries=1).stream(PROMPT))
    assert answer.content()[0]["text"].startswith("It is 64") and len(replay.requests) == 2


@pytest.mark.parametrize("adapter", ["anthropic", "openai"])
async def test_an_unreachable_server_is_a_connection_error(adapter: str) -> None:
    server = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    server.close()
    await server.wait_closed()
    model = (AnthropicModel(api_key="k", base_url=f"http://127.0.0.1:{port}", max_retries=0, timeout=5) if adapter == "anthropic"
             else nts.OpenAIModel("m", base_url=f"http://127.0.0.1:{port}/v1", max_retries=0, timeout=5))
    with pytest.raises(ModelError) as caught:
        await collect(model.stream(PROMPT))
    assert caught.value.kind == "connection"


async def test_the_agent_loop_runs_a_real_sdk_session_end_to_end(replay: ReplayServer) -> None:
    replay.replies.extend([Reply.sse("text_tool_use.txt"), Reply.sse("text_only.txt")])
    registry = weather_tools()
    result = await Agent(_model(replay), nts.Scheduler(registry), system="Be brief.").run(PROMPT[0]["content"])
    validate_transcript(result.messages)
    assert result.stop_reason == "end_turn" and result.turns == 2
    assert result.final_text.endswith("bring a jacket.")
    second = replay.requests[1]["json"]
    assert [t["name"] for t in second["tools"]] == ["get_weather", "read_notes"]
    results = second["messages"][2]["content"]
    assert [r["tool_use_id"] for r in results] == ["toolu_01T1x1fJ34qAmk2tNTrN7Up6", "toolu_01BhNtjh3hQ7DnwGzpDmJBHa"]
    assert results[0]["content"] == "64 fahrenheit in San Francisco, CA"
    assert results[1]["content"] == "notes/caf\u00e9.md: bring a jacket"


async def test_the_agent_ends_with_model_error_on_529_and_keeps_a_valid_transcript(replay: ReplayServer) -> None:
    replay.replies.append(Reply.json(529, "overloaded_529.json"))
    result = await Agent(_model(replay), nts.ToolRegistry()).run("hello")
    assert result.stop_reason == "model_error" and result.error is not None and result.error.kind == "overloaded"
    validate_transcript(result.messages)


async def _aiter(items: list[dict]):
    for item in items:
        yield item
