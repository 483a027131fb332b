"""The real SDK against the local SSE stand-in: many text deltas, and 529s that trigger the fallback.

The primary model's SDK client retries a 529 twice by itself (three requests, as Claude
Code tries three times before it falls back); the agent then switches to the fallback
model, whose answer streams in a few hundred small deltas that arrive in order.
"""

from __future__ import annotations

import json

import nbtoolsched as nts
from nbtoolsched.agent._loop import Agent
from nbtoolsched.agent._transcript import validate_transcript
from nbtoolsched.models import AnthropicModel
from nbtoolsched._session_log import read_transcript

from .conftest import ReplayServer, Reply

PIECES = [f"word{i} " for i in range(300)]


def sse(events: list[dict]) -> bytes:
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


def many_deltas(model: str) -> Reply:
    events = [{"type": "message_start", "message": {"id": "msg_fallback", "type": "message", "role": "assistant", "model": model,
                                                    "content": [], "stop_reason": None, "stop_sequence": None,
                                                    "usage": {"input_tokens": 10, "output_tokens": 1}}},
              {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}]
    events += [{"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": p}} for p in PIECES]
    events += [{"type": "content_block_stop", "index": 0},
               {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None}, "usage": {"output_tokens": 300}},
               {"type": "message_stop"}]
    return Reply(200, sse(events))


def model(replay: ReplayServer, name: str, retries: int) -> AnthropicModel:
    return AnthropicModel(name, api_key="test-key", base_url=replay.base_url, max_retries=retries)


async def test_529s_switch_to_the_fallback_whose_many_deltas_arrive_in_order(replay: ReplayServer, tmp_path) -> None:
    for _ in range(3):  # the first request and the SDK's two retries
        replay.replies.append(Reply.json(529, "overloaded_529.json", **{"retry-after-ms": "5"}))
    replay.replies.append(many_deltas("claude-sonnet-4-6"))
    agent = Agent(model(replay, "claude-opus-4-1", 2), nts.Scheduler(nts.ToolRegistry(), cwd=tmp_path, session_dir=tmp_path),
                  fallback_model=model(replay, "claude-sonnet-4-6", 0))
    deltas: list[str] = []
    switches: list[nts.events.ModelFallback] = []
    agent.subscribe(lambda e: deltas.append(e.text) if isinstance(e, nts.events.TextDelta) else None)
    agent.subscribe(lambda e: switches.append(e) if isinstance(e, nts.events.ModelFallback) else None)
    result = await agent.run("say many words")
    assert [r["json"]["model"] for r in replay.requests] == ["claude-opus-4-1"] * 3 + ["claude-sonnet-4-6"]
    assert [(s.from_model, s.to_model) for s in switches] == [("claude-opus-4-1", "claude-sonnet-4-6")]
    assert deltas == PIECES  # every delta, in order, none merged or lost
    assert result.stop_reason == "end_turn" and result.final_text == "".join(PIECES)
    validate_transcript(result.messages)
    assert read_transcript(agent.transcript.path).messages == result.messages


async def test_an_overloaded_error_mid_stream_answers_the_abandoned_call_and_falls_back(replay: ReplayServer, tmp_path) -> None:
    @nts.tool(read_only=True)
    async def get_weather(location: str) -> str:
        """Weather for a place."""
        return f"sunny in {location}"

    replay.replies.append(Reply.sse("error_midstream.txt"))  # text, a tool_use cut off, then overloaded_error
    replay.replies.append(Reply.sse("text_only.txt"))
    sched = nts.Scheduler(nts.ToolRegistry([get_weather]), cwd=tmp_path, session_dir=tmp_path)
    agent = Agent(model(replay, "claude-opus-4-1", 0), sched, fallback_model=model(replay, "claude-sonnet-4-6", 0))
    failures: list[nts.events.StreamFailed] = []
    agent.subscribe(lambda e: failures.append(e) if isinstance(e, nts.events.StreamFailed) else None)
    result = await agent.run("weather?")
    assert [(f.error_kind, f.will_retry) for f in failures] == [("stream_error", True)]
    assert result.final_text.startswith("It is 64") and len(replay.requests) == 2
    assert replay.requests[1]["json"]["messages"] == [{"role": "user", "content": [{"type": "text", "text": "weather?"}]}]
    validate_transcript(result.messages)
    lines = [json.loads(line) for line in agent.transcript.path.read_text().splitlines()]
    assert [e["type"] for e in lines] == ["user", "assistant", "system", "assistant"]  # the cut-off tool_use never finished
    assert "claude-opus-4-1 could not answer" in lines[2]["content"]
    assert read_transcript(agent.transcript.path).messages == result.messages
