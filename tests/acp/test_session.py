"""The session a host runs, end to end over stdio: parallel reads, an edit asked and approved
through ``session/request_permission``, and a command cancelled while it runs.

The agent is the real ``python -m nbtoolsched acp`` process, the client the SDK's own
connection; Bash runs in the real OS sandbox. Concurrency is proven by the reads
themselves: the client answers the first ``fs/read_text_file`` only once the second has
arrived, so two Reads run one after the other could not both complete.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from acp import text_block

from nbtoolsched._session_log import read_transcript
from nbtoolsched.agent._transcript import transcript_problems
from tests.sandbox.conftest import require_sandbox

from .harness import FINAL, PATIENCE, Client, choose, following, running, running_agent, same_pid_namespace, tool_use, transcript_of

pytestmark = pytest.mark.heavy  # each test starts the agent in a subprocess


async def test_parallel_reads_an_approved_edit_and_a_cancelled_command(project: Path, work: Path) -> None:
    require_sandbox()
    command, marker = following(project, "session")
    client = Client(choose("allow_always"), hold_reads=2)
    script = [
        [tool_use("Read", file_path="a.txt"), tool_use("Read", file_path="b.txt"), tool_use("Read", file_path="secret.txt")],
        [tool_use("Edit", file_path="a.txt", old_string="alpha", new_string="ALPHA")],
        ["Now the command.", tool_use("Bash", command=command)],
        "never reached",
    ]
    async with running_agent(client, project, work, script, fs=True) as agent:
        session = await agent.new_session(project)
        async with asyncio.timeout(PATIENCE), asyncio.TaskGroup() as group:
            prompt = group.create_task(agent.conn.prompt(session_id=session, prompt=[text_block("tidy up")]))
            await client.wait_until(lambda: "started" in client.text_of("`tail"), "the command's first output line")
            [tail] = running("tail", marker)  # it printed that line itself: it runs
            assert not same_pid_namespace(tail), "the command runs in the sandbox's own PID namespace"
            await agent.conn.cancel(session_id=session)
        await agent.settled()
        assert prompt.result().stop_reason == "cancelled"
        assert running("tail", marker) == [], "the cancel killed the command"

        calls = client.calls()
        assert {call.status for call in calls.values()} <= set(FINAL) and len(calls) == 5, client.describe()
        # the two reads ran at once (both started before either ended), through the client
        read_a, read_b = client.call_named("Read a.txt"), client.call_named("Read b.txt")
        order = agent.order()  # as the agent sent them
        started = [order.index((call.id, "in_progress")) for call in (read_a, read_b)]
        ended = [order.index((call.id, "completed")) for call in (read_a, read_b)]
        assert max(started) < min(ended)
        assert sorted(client.reads[:2]) == [str(project / "a.txt"), str(project / "b.txt")]
        assert "alpha" in read_a.texts() and "beta" in read_b.texts()
        assert (read_a.kind, read_a.locations[0].path, read_a.raw_input) == ("read", str(project / "a.txt"), {"file_path": "a.txt"})
        # the settings' deny rule holds
        secret = client.call_named("Read secret.txt")
        assert secret.status == "failed" and "secret.txt" not in client.reads[2:] and "password" not in secret.texts()

        # the edit was asked, with its diff, and approved with "Always allow"
        [(asked, options)] = client.permission_requests
        edit = client.call_named("Edit a.txt")
        assert asked.tool_call_id == edit.id and asked.status == "pending"
        assert [option.kind for option in options] == ["allow_once", "allow_always", "reject_once"]
        [preview] = [c for c in asked.content or [] if c.type == "diff"]
        assert (preview.path, preview.old_text, preview.new_text) == (str(project / "a.txt"), "alpha\n", "ALPHA\n")
        assert edit.statuses == ["pending", "in_progress", "in_progress", "completed"]
        [diff] = edit.diffs()
        assert (diff.path, diff.old_text, diff.new_text) == (str(project / "a.txt"), "alpha\n", "ALPHA\n")
        assert client.writes == [(str(project / "a.txt"), "ALPHA\n")]  # written through the editor
        assert (project / "a.txt").read_text() == "ALPHA\n"
        saved = json.loads((project / ".claude" / "settings.local.json").read_text())["permissions"]["allow"]
        assert len(saved) == 1 and saved[0].startswith("Edit(") and "a.txt" in saved[0], saved

        # the command: its output as it came, then its end
        bash = client.call_named("`tail")
        assert bash.kind == "execute" and bash.status == "failed"
        assert any("started" in str(content) for content in bash.contents[:-1])
        assert "Now the command." in client.message_text()

        # the transcript is valid: every tool_use answered
        transcript = read_transcript(transcript_of(work, session))
        assert transcript.problems == [] and transcript_problems(transcript.messages) == []
        uses = [b["id"] for m in transcript.messages if m["role"] == "assistant" for b in m["content"] if b.get("type") == "tool_use"]
        results = [b["tool_use_id"] for m in transcript.messages if m["role"] == "user" and isinstance(m["content"], list)
                   for b in m["content"] if b.get("type") == "tool_result"]
        assert len(uses) == 5 and sorted(uses) == sorted(results)

        assert await agent.close_stdin_and_wait() == 0  # the client quits: the agent exits by itself
