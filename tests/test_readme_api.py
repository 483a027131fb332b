"""The README's API sketch, run for real, so the front page never lies."""

import json
from pathlib import Path

import pytest

import nbtoolsched as nts
from nbtoolsched.models._scripted import tool_use
from nbtoolsched.speculation import agent_loop


@pytest.mark.kernel_overlay  # its speculation runs in the kernel overlay where it starts
async def test_the_readme_sketch_runs(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text(json.dumps({"permissions": {"allow": ["Write", "Edit"], "defaultMode": "acceptEdits"}}))
    (tmp_path / "notes.txt").write_text("one\n")

    @nts.tool(read_only=True)
    async def word_count(path: str) -> int:
        """Count the words of a file."""
        return len(Path(path).read_text().split())

    registry = nts.default_registry()
    registry.register(word_count)
    sched = nts.Scheduler(registry, permissions=nts.Permissions.from_settings(".", user_dir=tmp_path / "no-user"),
                          max_concurrency=10)
    blocks = [tool_use("word_count", path="notes.txt", id="a"), tool_use("Read", file_path="notes.txt", id="b"),
              tool_use("Edit", file_path="notes.txt", old_string="one", new_string="two", id="c")]
    results = await sched.run(blocks)
    assert [r.tool_use_id for r in results] == ["a", "b", "c"] and not any(r.is_error for r in results)
    assert results[0].content == "1" and (tmp_path / "notes.txt").read_text() == "two\n"
    events = [e async for e in sched.stream(blocks[:2])]
    assert {type(e).__name__ for e in events} == {"ResultEvent"}
    run = sched.submit(blocks[:1])
    assert len(await run) == 1 and run.states["a"].status == "completed"
    assert [b.names for b in nts.partition_tool_calls(blocks, registry)] == [["word_count", "Read"], ["Edit"]]

    model = nts.ScriptedModel([[tool_use("Read", file_path="notes.txt")], "done"])
    result = await nts.Agent(model, sched).run("fix the failing test")
    nts.validate_transcript(result.messages)
    assert result.stop_reason == "end_turn"

    # A speculation edits (in its overlay) only in acceptEdits or bypassPermissions mode, as in Claude Code.
    spec_model = nts.ScriptedModel([[tool_use("Write", file_path="new.txt", content="hi\n")], "written"])
    loop = agent_loop(lambda s, messages, turns: nts.Agent(spec_model, s, messages=messages, max_turns=turns))
    spec = await nts.speculate("now write the file", loop, scheduler=sched)
    assert [c.path for c in spec.changes()] == ["new.txt"] and not (tmp_path / "new.txt").exists()
    await spec.accept()
    assert (tmp_path / "new.txt").read_text() == "hi\n"
