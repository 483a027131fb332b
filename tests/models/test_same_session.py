"""One session, three models: the same turns through ScriptedModel, and through the real
Anthropic and OpenAI SDK clients against a ScriptServer on 127.0.0.1, with the real
built-in tools on a real project folder. The tool results and the transcript must be the
same apart from the model's own fields (message ids, the model's name, token counts).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import pytest

import nbtoolsched as nts
from nbtoolsched.models import ScriptServer, ScriptedModel, Turn, text, tool_use

# What a model writes about itself; everything else must match across the three models.
MODEL_FIELDS = {"id", "model", "usage", "stop_reason", "stop_sequence", "type"}
ENTRY_FIELDS = {"uuid", "parentUuid", "timestamp", "sessionId", "requestId", "cwd", "version", "gitBranch", "userType",
                "promptId"}


def script(project: Path) -> list[Turn]:
    timing = dict(input_deltas=7, text_deltas=3)
    return [
        Turn([text("I'll read the module and look for its callers."),
              tool_use("Read", file_path=str(project / "calc.py")),
              tool_use("Grep", pattern="add\\(", path=str(project), output_mode="content", **{"-n": True}),
              tool_use("Glob", pattern="*.py", path=str(project))], **timing),
        Turn([text("Fixing the sign."),
              tool_use("Edit", file_path=str(project / "calc.py"), old_string="return a - b", new_string="return a + b")],
             **timing),
        Turn([text("Fixed: add() now adds.")], **timing),
    ]


def fresh_project(root: Path) -> Path:
    root.mkdir(exist_ok=True)
    (root / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (root / "main.py").write_text("from calc import add\n\nprint(add(2, 3))\n")
    return root


async def run(make_model: Callable[[list[Turn]], nts.Agent | Any], project: Path, transcript: Path) -> nts.AgentResult:
    registry = nts.default_registry(str(project))
    permissions = nts.Permissions(cwd=str(project), approver=nts.ApprovalBroker("allow"))
    agent = nts.Agent(make_model(script(project)), nts.Scheduler(registry, permissions=permissions, cwd=str(project)),
                      transcript=transcript)
    return await agent.run("add() subtracts; fix it.")


def without_model_fields(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for entry in entries:
        entry = {k: v for k, v in entry.items() if k not in ENTRY_FIELDS}
        message = entry.get("message")
        if isinstance(message, dict) and message.get("role") == "assistant":
            entry["message"] = {k: v for k, v in message.items() if k not in MODEL_FIELDS}
        out.append(entry)
    return out


@pytest.fixture
def claude_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude-config"))


async def test_scripted_anthropic_and_openai_give_the_same_session(tmp_path: Path, claude_home: None) -> None:
    project = tmp_path / "project"
    results: dict[str, nts.AgentResult] = {}
    files: dict[str, list[dict[str, Any]]] = {}
    requests: dict[str, list[dict[str, Any]]] = {}
    for kind in ("scripted", "anthropic", "openai"):
        fresh_project(project)
        transcript = tmp_path / f"{kind}.jsonl"
        if kind == "scripted":
            results[kind] = await run(lambda turns: ScriptedModel(turns), project, transcript)
        else:
            with ScriptServer(script(project)) as server:
                if kind == "anthropic":
                    results[kind] = await run(lambda _: nts.AnthropicModel(api_key="k", base_url=server.anthropic_url,
                                                                           max_retries=0), project, transcript)
                else:
                    results[kind] = await run(lambda _: nts.OpenAIModel("scripted", base_url=server.openai_url,
                                                                        max_retries=0), project, transcript)
                requests[kind] = server.requests
        assert (project / "calc.py").read_text() == "def add(a, b):\n    return a + b\n", kind
        files[kind] = [json.loads(line) for line in transcript.read_text().splitlines()]
        nts.validate_transcript(results[kind].messages)

    scripted = results["scripted"]
    assert scripted.stop_reason == "end_turn" and scripted.turns == 3
    tool_results = [b for m in scripted.messages if m["role"] == "user" and isinstance(m["content"], list)
                    for b in m["content"] if b["type"] == "tool_result"]
    assert len(tool_results) == 4 and not any(r.get("is_error") for r in tool_results)
    assert "return a - b" in json.dumps(tool_results[0]) and "main.py" in json.dumps(tool_results[1])
    for kind in ("anthropic", "openai"):
        assert results[kind].messages == scripted.messages, kind  # same blocks, same ids, same tool results
        assert results[kind].stop_reason == "end_turn" and results[kind].turns == 3
        assert without_model_fields(files[kind]) == without_model_fields(files["scripted"]), kind
        assert len(requests[kind]) == 3
    # Each protocol carried the same conversation in its own shape.
    anthropic_last = requests["anthropic"][2]["json"]["messages"]
    openai_last = requests["openai"][2]["json"]["messages"]
    assert anthropic_last == scripted.messages[:5]
    assert [m["role"] for m in openai_last] == ["system", "user", "assistant", "tool", "tool", "tool", "assistant", "tool"]
    assert openai_last[0]["content"] == requests["anthropic"][2]["json"]["system"]  # the deferred tools' list
    assert [t["function"]["name"] for t in requests["openai"][0]["json"]["tools"]] == \
        [t["name"] for t in requests["anthropic"][0]["json"]["tools"]]
