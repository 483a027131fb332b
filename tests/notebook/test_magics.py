"""The magics in an in-process IPython: runs, options, settings, errors, speculation, unload."""

from __future__ import annotations

import asyncio
import threading

import pytest

from .conftest import cell_error, session, wait_for


async def test_toolcall_returns_at_once_and_await_gives_results(shell, project):
    result = shell.run_cell("%%toolcall --name run\n- Read: {file_path: README.md}\n- Sleep: {seconds: 0.3}\n")
    assert result.error_in_exec is None
    run = shell.user_ns["run"]
    assert result.result is run
    assert not run.done()  # the cell returned before anything ran
    assert run.text() == ("toolcall run: 2 calls\n   1. Read [b1] queued  file_path=README.md\n"
                          "   2. Sleep [b1] queued  seconds=0.3")
    results = await run
    assert "line two" in results[0].text and "Slept" in results[1].text
    assert run.summary() == "2 calls: 2 completed"


async def test_dollar_names_come_from_the_notebook(shell, project):
    shell.user_ns["target"] = "README.md"
    shell.run_cell("%%toolcall --name run\n- Read: {file_path: $target}\n")
    assert "# demo" in (await shell.user_ns["run"])[0].text


@pytest.mark.parametrize(
    ("line", "body", "message"),
    [
        ("", "- Raed: {}", "unknown tool 'Raed'"),
        ("--bogus", "- Read: {}", "unrecognized arguments: --bogus"),
        ("--mode sideways", "- Read: {}", "invalid choice"),
        ("--delay 1", "- Read: {}", "--delay only applies with --stream"),
        ("--name 2bad", "- Read: {}", "not a valid Python variable name"),
        ("", '[{"id": "x", "name": "Read", "input": {}}, {"id": "x", "name": "Read", "input": {}}]', "duplicate tool_use id"),
        ("", "{not json", "not valid"),
        ("--max-concurrency 0", "- Read: {file_path: README.md}", "must be 1 or more"),
    ],
)
async def test_bad_input_is_one_short_error_and_harms_nothing(shell, project, line, body, message):
    shell.run_cell("%%toolcall --name r1\n- Sleep: {seconds: 0.2}\n")
    earlier = shell.user_ns["r1"]
    result = shell.run_cell(f"%%toolcall {line}\n{body}\n")
    assert message in cell_error(result)
    assert type(result.error_in_exec or result.error_before_exec).__name__ == "UsageError"
    assert (await earlier)[0].text.startswith("Slept")  # the earlier run finished untouched
    assert shell.run_cell("1 + 1").result == 2  # and the shell still works


async def test_stream_feeds_calls_one_by_one(shell, project):
    shell.run_cell("%%toolcall --stream --delay 0.3 --name run\n- Read: {file_path: README.md}\n- Read: {file_path: README.md}\n- Read: {file_path: README.md}\n")
    run = shell.user_ns["run"]
    results = await run
    assert len(results) == 3 and not any(r.is_error for r in results)
    starts = [e.time for e in run.handle.trace.of_kind("call_started")]
    assert len(starts) == 3
    # each call could only start once the "model" had streamed it: about 0.3 s apart
    assert starts[1] - starts[0] >= 0.2 and starts[2] - starts[1] >= 0.2


async def test_stream_abort_still_answers_every_call(shell, project):
    shell.run_cell("%%toolcall --stream --delay 5 --name run\n- Sleep: {seconds: 10}\n- Read: {file_path: README.md}\n")
    run = shell.user_ns["run"]
    await wait_for(lambda: run.states[run.handle.order[0]].status == "executing", what="the first call to start")
    run.abort()
    results = await asyncio.wait_for(_await(run), 10)
    assert len(results) == 2 and all(r.is_error for r in results)
    assert [o.status for o in run.outcomes] == ["cancelled", "cancelled"]


async def test_mode_policy_and_concurrency_options(shell, project):
    shell.run_cell("%%toolcall --mode plan --name r1\n- Write: {file_path: new.txt, content: hi}\n")
    assert (await shell.user_ns["r1"])[0].is_error
    assert not (project / "new.txt").exists()

    shell.run_cell("%%toolcall --policy allow --name r1\n- touch: {name: made.txt}\n")
    assert (await shell.user_ns["r1"])[0].text == "made made.txt"

    shell.run_cell("%%toolcall --policy deny --name r1\n- touch: {name: never.txt}\n")
    result = (await shell.user_ns["r1"])[0]
    assert result.is_error and "headless" in result.text and not (project / "never.txt").exists()

    shell.run_cell("%%toolcall --policy defer --name r1\n- touch: {name: later.txt}\n")
    run = shell.user_ns["r1"]
    await run
    assert run.outcomes[0].status == "deferred" and run.handle.pending_approvals[0]["tool_name"] == "touch"

    shell.run_cell("%%toolcall --max-concurrency 1 --name r1\n- Sleep: {seconds: 0.2}\n- Sleep: {seconds: 0.2}\n")
    run = shell.user_ns["r1"]
    await run
    spans = sorted(run.handle.trace.states(), key=lambda s: s.started_at)
    assert spans[1].started_at >= spans[0].finished_at - 0.01  # one at a time


async def test_headless_policy_from_the_environment(project, monkeypatch):
    from IPython.core.interactiveshell import InteractiveShell

    monkeypatch.setenv("NBTOOLSCHED_APPROVAL", "deny")
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "nbtoolsched")
    try:
        ip.run_cell("%%toolcall --name r1\n- Write: {file_path: x.txt, content: hi}\n")
        result = (await asyncio.wait_for(_await(ip.user_ns["r1"]), 10))[0]  # never hangs on a prompt
        assert result.is_error and not (project / "x.txt").exists()
    finally:
        ip.run_line_magic("unload_ext", "nbtoolsched")


async def test_tools_defined_in_cells_join_the_registry(shell, project):
    assert session().registry.get("touch") is not None  # the fixture's cell defined it
    shell.run_cell("@nts.tool(read_only=True)\ndef shout(text: str) -> str:\n    return text.upper()\n")
    shell.run_cell("%%toolcall --name r1\n- shout: {text: hey}\n")
    assert (await shell.user_ns["r1"])[0].text == "HEY"
    # redefining replaces it; a cell cannot silently replace a built-in
    shell.run_cell("@nts.tool(read_only=True, name='shout')\ndef shout2(text: str) -> str:\n    return text.lower()\n")
    shell.run_cell("@nts.tool(read_only=True, name='Read')\ndef fake(file_path: str) -> str:\n    return 'fake'\n")
    shell.run_cell("%%toolcall --name r1\n- shout: {text: HEY}\n- Read: {file_path: README.md}\n")
    results = await shell.user_ns["r1"]
    assert results[0].text == "hey" and "# demo" in results[1].text
    assert any("'Read' already exists" in n for n in session().notices)
    assert "shout" in shell.run_line_magic("tools", "").text


async def test_tools_and_toolsched_commands(shell, project):
    listing = shell.run_line_magic("tools", "").text
    assert listing.splitlines()[0].split() == ["tool", "aliases", "read-only", "parallel", "deferred"]
    assert any(line.startswith("Read ") and " yes " in line for line in listing.splitlines())
    assert "mode: default" in shell.run_line_magic("toolsched", "").text
    assert shell.run_line_magic("toolsched", "mode acceptEdits").text == "mode: acceptEdits"
    assert "Bash(git log:*)" in shell.run_line_magic("toolsched", "allow Bash(git log:*)").text
    assert "Bash(git log:*)" in shell.run_line_magic("toolsched", "").text
    assert shell.run_line_magic("toolsched", "concurrency 3").text == "max concurrency: 3"
    assert shell.run_line_magic("toolsched", "pending").text == "no approvals pending"
    for bad, message in [("mode sideways", "unknown permission mode"), ("concurrency lots", "whole number"),
                         ("policy maybe", "unknown approval policy"), ("frobnicate", "unknown %toolsched command"),
                         ("register nothing_here", "no variable")]:
        result = shell.run_cell(f"%toolsched {bad}")
        assert message in cell_error(result)


async def test_pending_approvals_and_trace(shell, project):
    shell.run_cell("%%toolcall --name r1\n- touch: {name: a.txt}\n- Read: {file_path: README.md}\n")
    run = shell.user_ns["r1"]
    await wait_for(lambda: "touch" in shell.run_line_magic("toolsched", "pending").text, what="a pending approval")
    await wait_for(lambda: run.panel._asking, what="the approval row")
    row = next(iter(run.panel._asking.values()))
    threading.Thread(target=row.always_button.click).start()
    await asyncio.wait_for(_await(run), 10)
    assert "touch" in shell.run_line_magic("toolsched", "").text  # "Always allow" saved a session rule
    timeline = shell.run_line_magic("toolsched", "trace")
    bundle = timeline._repr_mimebundle_()
    assert bundle["image/svg+xml"].startswith("<svg") and "batch 1" in bundle["text/plain"]
    assert "nts-legend" in bundle["text/html"] and "waiting for approval" in bundle["text/html"]
    assert "#" in bundle["text/plain"] and "?" in bundle["text/plain"]  # ran, and waited for a person


@pytest.mark.kernel_overlay  # the speculation runs in the kernel overlay where it starts
async def test_speculate_shows_the_overlay_diff_and_accepts(shell, project):
    shell.run_cell(
        "from nbtoolsched.models import ScriptedModel, tool_use\n"
        "model = ScriptedModel([[tool_use('Edit', file_path='README.md', old_string='line two', new_string='line 2')],"
        " [tool_use('Write', file_path='notes.txt', content='new\\n')], 'done'])\n"
    )
    assert "needs a model" in cell_error(shell.run_cell('%speculate "tidy"'))
    shell.run_line_magic("toolsched", "model model")
    shell.run_line_magic("toolsched", "mode acceptEdits")  # a speculation never asks a person
    shell.run_cell("%%toolcall --name r1\n- Read: {file_path: README.md}\n")  # Edit needs a prior Read
    await shell.user_ns["r1"]
    view = shell.run_line_magic("speculate", '"tidy the readme"')
    await wait_for(lambda: view.status == "ready", what="the speculation to finish")
    assert "modified README.md" in view.text() and "created notes.txt" in view.text()
    assert "+line 2" in view.text()
    assert "<pre class=\"nts-diff\"" in view.files.value and "style=" in view.files.value
    assert (project / "README.md").read_text() == "# demo\nline two\n"  # nothing real yet
    threading.Thread(target=view.accept_button.click).start()
    await wait_for(lambda: view.status == "accepted", what="accept to finish")
    assert (project / "README.md").read_text() == "# demo\nline 2\n"
    assert (project / "notes.txt").read_text() == "new\n"


@pytest.mark.kernel_overlay
async def test_speculate_reject_leaves_the_tree_alone(shell, project):
    shell.run_cell("from nbtoolsched.models import ScriptedModel, tool_use\n"
                   "m2 = ScriptedModel([[tool_use('Write', file_path='other.txt', content='x')], 'done'])\n")
    shell.run_line_magic("toolsched", "mode acceptEdits")
    view = shell.run_line_magic("speculate", '--model m2 "write other"')
    await wait_for(lambda: view.status == "ready", what="the speculation to finish")
    view.click("reject")
    await wait_for(lambda: view.status == "rejected", what="reject to finish")
    assert not (project / "other.txt").exists()
    await wait_for(lambda: view.accept_button.disabled and view.reject_button.disabled, what="the buttons to be disabled")
    assert "rejected" in view.header.value


async def test_interrupted_cell_aborts_running_runs(shell, project):
    from IPython.core.interactiveshell import ExecutionResult

    shell.run_cell("%%toolcall --name r1\n- Sleep: {seconds: 30}\n")
    run = shell.user_ns["r1"]
    await wait_for(lambda: run.states[run.handle.order[0]].status == "executing", what="the sleep to start")
    interrupted = ExecutionResult(None)
    interrupted.error_in_exec = KeyboardInterrupt()
    shell.events.trigger("post_run_cell", interrupted)
    await asyncio.wait_for(_await(run), 10)
    assert run.outcomes[0].status == "cancelled"


async def test_unload_aborts_runs_and_closes_widgets(project):
    from IPython.core.interactiveshell import InteractiveShell

    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "nbtoolsched")
    ip.run_cell("%%toolcall --name r1\n- Sleep: {seconds: 30}\n")
    run = ip.user_ns["r1"]
    await wait_for(lambda: run.states[run.handle.order[0]].status == "executing", what="the sleep to start")
    ip.run_line_magic("unload_ext", "nbtoolsched")
    results = await asyncio.wait_for(_await(run), 10)
    assert results[0].is_error and run.outcomes[0].status == "cancelled"
    assert run.panel.comm is None
    assert "toolcall" not in ip.magics_manager.magics["cell"]
    assert "Cell magic `%%toolcall` not found" in str(ip.run_cell("%%toolcall\n- Read: {}\n").error_in_exec)


async def _await(run):
    return await run


# -- blocking mode, policies, re-runs, the short form, help ------------------------------------------
async def test_wait_refuses_clearly_where_no_click_can_reach_the_cell(shell, project):
    result = shell.run_cell("%%toolcall --wait --name r1\n- touch: {name: never.txt}\n")
    message = cell_error(result)
    assert "--wait cannot wait for your click here" in message and "no Jupyter kernel" in message
    assert "--policy allow" in message and "touch would ask" in message
    assert "r1" not in shell.user_ns and not (project / "never.txt").exists()  # nothing ran


async def test_an_explicit_policy_beats_the_environment(project, monkeypatch):
    from IPython.core.interactiveshell import InteractiveShell

    monkeypatch.setenv("NBTOOLSCHED_APPROVAL", "allow")
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "nbtoolsched")
    try:
        ip.run_cell("%%toolcall --policy ask --name r1\n- Write: {file_path: asked.txt, content: hi}\n")
        run = ip.user_ns["r1"]
        await wait_for(lambda: run.panel.pending(), what="--policy ask to ask a person despite the environment")
        run.abort()
        await asyncio.wait_for(_await(run), 10)
        assert not (project / "asked.txt").exists()
    finally:
        ip.run_line_magic("unload_ext", "nbtoolsched")


async def test_rerunning_the_same_name_stops_the_run_still_waiting(shell, project):
    shell.run_cell("%%toolcall --name r1\n- touch: {name: first.txt}\n")
    first = shell.user_ns["r1"]
    await wait_for(lambda: first.panel.pending(), what="the first run to wait for approval")
    shell.run_cell("%%toolcall --name r1\n- touch: {name: second.txt}\n")
    second = shell.user_ns["r1"]
    await asyncio.wait_for(_await(first), 10)  # no orphan left waiting forever
    assert first.outcomes[0].status == "cancelled" and "replaced by a new run" in first.panel.record_html()
    assert "a new run of the same cell" in first.panel.rows()[0].note
    assert "stopped the earlier run" in second.panel.notice
    assert list(session().broker.pending) == [second.handle.order[0]]
    second.abort()
    await asyncio.wait_for(_await(second), 10)


async def test_short_form_fills_the_one_required_field_and_counts_lines_from_the_cell(shell, project):
    shell.run_cell("%%toolcall --name r1\n- Bash: echo hi there\n- Read: README.md\n")
    results = await shell.user_ns["r1"]
    assert results[0].text.strip() == "hi there" and "line two" in results[1].text
    message = cell_error(shell.run_cell("%%toolcall\n- Read: README.md\n- Bash: echo a: b\n"))
    assert "line 3" in message and "single quotes" in message  # the magic line is line 1
    message = cell_error(shell.run_cell("%%toolcall\n- Edit: notes.md\n"))
    assert "Edit needs file_path, old_string, new_string" in message


async def test_escapes_in_double_quotes_and_dropped_comments_warn(shell, project, capsys):
    shell.run_cell('%%toolcall --name r1\n- Grep: {pattern: "\\bTODO\\b"}\n- Bash: echo kept # dropped\n')
    await shell.user_ns["r1"]
    out = capsys.readouterr().out
    assert "line 2: a backslash in double quotes is an escape" in out
    assert "line 3: ' #' starts a YAML comment" in out


def test_toolcall_help_shows_the_cell_magic_with_two_percent_signs(shell):
    from nbtoolsched.notebook._magics import ToolMagics

    usage = ToolMagics.toolcall.__doc__
    assert "%%toolcall [" in usage and "--wait" in usage


async def test_results_of_await_run_read_well(shell, project):
    shell.run_cell("%%toolcall --name r1\n- Read: README.md\n- Read: missing.txt\n")
    results = await shell.user_ns["r1"]
    text = repr(results) if not hasattr(results, "text") else results.text()
    assert text.splitlines()[0].startswith(" 1. ok") and text.splitlines()[1].startswith(" 2. error")
    assert "tool_use_error" not in text and "<details>" in results._repr_html_()


async def test_settings_that_cannot_be_read_stop_the_extension_instead_of_dropping_deny_rules(project, capsys):
    from IPython.core.interactiveshell import InteractiveShell

    from nbtoolsched.notebook import get_session

    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").write_text('{"permissions": {"deny": ["Bash(rm:*)"]}, oops}')
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "nbtoolsched")
    try:
        out = capsys.readouterr().out
        assert get_session() is None  # no session without the deny rules
        assert "could not be read" in out and "did not start" in out and "settings.json" in out
    finally:
        ip.run_line_magic("unload_ext", "nbtoolsched")


@pytest.mark.kernel_overlay
async def test_speculate_says_where_it_stopped_and_offers_no_empty_accept(shell, project):
    shell.run_cell("from nbtoolsched.models import ScriptedModel, tool_use\n"
                   "m3 = ScriptedModel([[tool_use('Write', file_path='n.txt', content='x')], 'I wrote the notes.'])\n")
    view = shell.run_line_magic("speculate", '--model m3 "write notes"')  # default mode: the edit needs approval
    await wait_for(lambda: view.status == "ready", what="the speculation to stop")
    why = view.header.value
    assert "stopped before Write" in why and "%toolsched mode acceptEdits" in why
    assert view.accept_button.disabled and not view.reject_button.disabled  # nothing would change
    shell.run_line_magic("toolsched", "mode acceptEdits")
    again = shell.run_line_magic("speculate", '--model m3 "write notes"')  # the script plays from its start
    await wait_for(lambda: again.status == "ready", what="the second speculation")
    assert "created n.txt" in again.text() and not again.accept_button.disabled
    assert "I wrote the notes." in again.header.value  # the model's final text
    again.click("reject")
    await wait_for(lambda: again.status == "rejected", what="reject")
    await wait_for(lambda: again.record.final is not None, what="the final record")
    assert "rejected" in again.record.final["text/html"] and "running" not in again.record.final["text/plain"]


async def test_an_ask_while_a_cell_blocks_where_nobody_can_click_is_denied_not_left_hanging(shell, project):
    """The backstop behind --wait's check (and run_sync in a cell): a call that asks anyway."""
    live = session()
    live.blocked += 1  # as while a cell blocks (no kernel here: no click can come)
    try:
        shell.run_cell("%%toolcall --name r1\n- touch: {name: blocked.txt}\n")
        result = (await asyncio.wait_for(_await(shell.user_ns["r1"]), 10))[0]
    finally:
        live.blocked -= 1
    assert result.is_error and "no one can approve it" in result.text and not (project / "blocked.txt").exists()
