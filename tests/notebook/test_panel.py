"""The run panel driven directly: rows, inline approvals clicked from other threads, traffic."""

from __future__ import annotations

import asyncio
import threading
from collections import Counter

import nbtoolsched as nts
from nbtoolsched.notebook._panel import RunPanel
from nbtoolsched.notebook._pump import Handoff, UIPump
from nbtoolsched.permissions._approvals import ApprovalBroker
from nbtoolsched.permissions._engine import Permissions

from .conftest import wait_for


@nts.tool(concurrency_safe=True)
async def ask_me(name: str) -> str:
    """Not read-only: default mode asks before every call."""
    return "ran " + name


@nts.tool(read_only=True)
async def chatty(n: int, ctx: nts.ToolContext) -> str:
    """Reports progress n times, yielding in between."""
    for i in range(n):
        ctx.progress({"line": f"step {i}"})
        await asyncio.sleep(0)
    return "done"


def make_panel(project, tools=(ask_me, chatty), rate: float = 10.0):
    broker = ApprovalBroker("interactive")
    registry = nts.default_registry(project)
    for extra in tools:
        registry.register(extra)
    perms = Permissions(cwd=project, approver=broker)
    sched = nts.Scheduler(registry, permissions=perms, approver=broker, cwd=project)
    loop = asyncio.get_running_loop()
    pump = UIPump(loop, rate)
    return sched, broker, pump, Handoff(loop)


def calls(*names: str, tool: str = "ask_me"):
    return [{"type": "tool_use", "id": f"t_{n}", "name": tool, "input": {"name": n}} for n in names]


def click_from_thread(button) -> None:
    thread = threading.Thread(target=button.click, name="subshell-test")
    thread.start()
    thread.join()


async def open_panel(project, blocks, **kw):
    sched, broker, pump, handoff = make_panel(project, **kw)
    handle = sched.submit(blocks)
    panel = RunPanel(handle, pump=pump, handoff=handoff, broker=broker, title="test run", cwd=str(project))
    return handle, panel, broker, pump


async def test_waiting_calls_get_inline_buttons_and_clicks_from_threads_answer_them(project):
    handle, panel, broker, pump = await open_panel(project, calls("a", "b", "c"))
    await wait_for(lambda: len(panel._asking) == 3, what="three approval rows")
    # one prompt at a time, under the header, the first call's; the others wait their turn
    assert [type(w).__name__ for w in panel.prompt_box.children] == ["ApprovalRow"]
    assert panel.prompt_box.children[0] is panel.approval_row("t_a")
    assert "1 of 3 waiting" in panel.approval_row("t_a").waiting.value
    assert panel.keyboard.prompt == "1" and "nts-ask-1" in panel.approval_row("t_a")._dom_classes
    assert "nts-head" in panel.rows_view.value and panel.rows_view.value.count('class="nts-row"') == 3
    assert panel.approve_all_button.tooltip.startswith("Allow the 3 waiting calls")
    assert panel.approve_all_button.layout.display == "" and panel.deny_all_button.layout.display == ""

    click_from_thread(panel.approval_row("t_a").allow_button)
    await wait_for(lambda: handle.states["t_a"].status == "completed", what="the allowed call to run")
    # the allowed call ran while the others still wait
    assert handle.states["t_b"].status == handle.states["t_c"].status == "awaiting_approval"
    await wait_for(lambda: "t_a" not in panel._asking, what="the answered row to lose its buttons")
    # the next prompt takes the same place, and the keyboard follows it
    await wait_for(lambda: panel.prompt_box.children == (panel.approval_row("t_b"),), what="the next prompt")
    assert panel.keyboard.prompt == "2" and "1 of 2 waiting" in panel.approval_row("t_b").waiting.value
    assert 'data-id="t_a"' in panel.rows_view.value and 'data-state="completed"' in panel.rows_view.value

    row_c = panel.approval_row("t_c")
    row_c.feedback.value = "use the other file"
    click_from_thread(row_c.deny_feedback_button)
    click_from_thread(panel.approval_row("t_b").deny_button)
    results = await asyncio.wait_for(_await(handle), 10)
    assert [r.is_error for r in results] == [None, True, True]
    assert "use the other file" in results[2].text
    await pump.aclose()
    record = panel.record.final["text/html"]
    assert "finished" in record and "1 completed, 2 denied" in record
    assert "denied by you: “use the other file”" in record  # the feedback, in its row


async def test_approve_all_allows_every_waiting_call_and_every_later_one(project):
    """Serial calls ask one at a time: Approve all (one click) covers the ones not asked yet."""
    writes = [{"type": "tool_use", "id": f"w{i}", "name": "Write", "input": {"file_path": f"f{i}.txt", "content": f"{i}\n"}}
              for i in range(5)]
    handle, panel, broker, pump = await open_panel(project, writes)
    await wait_for(lambda: "w0" in panel._asking, what="the first Write to ask")
    assert list(panel.pending()) == ["w0"]  # one at a time: they run one after another
    click_from_thread(panel.approve_all_button)
    results = await asyncio.wait_for(_await(handle), 20)
    assert [r.is_error for r in results] == [None] * 5
    assert sorted(p.name for p in project.glob("f*.txt")) == [f"f{i}.txt" for i in range(5)]
    await pump.aclose()
    assert panel.finished and "5 completed" in panel.record.final["text/html"]


async def test_deny_all_denies_what_waits_and_the_rest_is_skipped_not_interrupted(project):
    handle, panel, broker, pump = await open_panel(project, calls("a", "b") + [
        {"type": "tool_use", "id": "w", "name": "Write", "input": {"file_path": "later.txt", "content": "x"}}])
    await wait_for(lambda: len(panel._asking) == 2, what="two approval rows")
    click_from_thread(panel.deny_all_button)
    await asyncio.wait_for(_await(handle), 10)
    await pump.aclose()
    rows = {r.tool_use_id: r for r in panel.rows()}
    # a plain Deny stops the run (as in Claude Code): the sibling still waiting and the later
    # call are skipped, and say so; nothing calls them "interrupted"
    assert rows["t_a"].state == "denied" and rows["t_a"].note == "denied by you; the run stopped here"
    for key in ("t_b", "w"):
        assert rows[key].state == "cancelled" and rows[key].label == "skipped"
        assert rows[key].note == "the run stopped when #1 was denied"
    assert not (project / "later.txt").exists()


async def test_deny_with_feedback_needs_words_first(project):
    handle, panel, broker, pump = await open_panel(project, calls("a"))
    await wait_for(lambda: "t_a" in panel._asking, what="the approval row")
    row = panel.approval_row("t_a")
    click_from_thread(row.deny_feedback_button)
    await wait_for(lambda: "type what the model should know" in row.feedback.placeholder, what="the hint")
    assert "t_a" in broker.pending  # nothing was answered
    click_from_thread(row.allow_button)
    assert (await asyncio.wait_for(_await(handle), 10))[0].text == "ran a"
    await pump.aclose()


async def test_result_preview_on_demand_timeline_and_collapse(project):
    blocks = [{"type": "tool_use", "id": "c1", "name": "chatty", "input": {"n": 3}}] + calls("a")
    handle, panel, broker, pump = await open_panel(project, blocks)
    await wait_for(lambda: "t_a" in panel._asking, what="the approval row")
    await wait_for(lambda: 'data-id="c1" data-state="completed"' in panel.rows_view.value, what="the finished call's row")
    assert "done" in panel.rows_view.value  # its result in one line, in the details column
    panel.keyboard._message(panel.keyboard, {"open": "c1"}, [])  # what a click on its row sends
    await wait_for(lambda: "done" in panel.preview.value and "nts-opened" in panel.preview.value, what="the result preview")
    panel.keyboard._message(panel.keyboard, {"open": "c1"}, [])  # a second click closes it
    await wait_for(lambda: panel.preview.value == "", what="the preview to close")
    panel.timeline_toggle.value = True
    await wait_for(lambda: "nts-legend" in panel.timeline.value, what="the timeline with its legend")
    click_from_thread(panel.approval_row("t_a").allow_button)
    await asyncio.wait_for(_await(handle), 10)
    await pump.aclose()
    # finished: one summary line (collapsed when all went well) that opens to rows, results, timeline
    assert [type(w).__name__ for w in panel.children] == ["HTML", "HTML"]
    final = panel.record.final["text/html"]
    assert final.count('<details class="nts-call">') == 2 and "<details open" not in final and "✓ test run" in final
    assert "nts-legend" in final and "ran a" in final and "done" in final


async def test_text_repr_is_deterministic_and_has_no_times(project):
    handle, panel, broker, pump = await open_panel(project, calls("a", "b"))
    first = repr(panel)
    assert first == "test run: 2 calls\n   1. ask_me [--] queued  name=a\n   2. ask_me [--] queued  name=b"
    handle.abort()
    await asyncio.wait_for(_await(handle), 10)
    await pump.aclose()
    assert "skipped" in repr(panel) and " s " not in repr(panel) and "-> not started: the run was stopped" in repr(panel)


async def test_progress_storm_costs_few_widget_messages(project, monkeypatch):
    sent: Counter[str] = Counter()
    import comm

    original = comm.DummyComm.publish_msg

    def counting(self, msg_type, data=None, metadata=None, buffers=None, **keys):
        if msg_type == "comm_msg":
            sent[self.comm_id] += 1
        return original(self, msg_type, data, metadata, buffers, **keys)

    monkeypatch.setattr(comm.DummyComm, "publish_msg", counting)
    blocks = [{"type": "tool_use", "id": f"c{i}", "name": "chatty", "input": {"n": 3000}} for i in range(10)]
    loop = asyncio.get_running_loop()
    started = loop.time()
    handle, panel, broker, pump = await open_panel(project, blocks)
    await asyncio.wait_for(_await(handle), 60)
    await pump.aclose()
    elapsed = max(loop.time() - started, 0.5)
    assert sum(s.progress_count for s in handle.states.values()) == 30000
    total = sum(sent.values())
    # 30,000 progress events; the panel sends about one update per tick plus a few
    assert total <= 15 * elapsed + 25, (total, elapsed)


async def test_closing_the_panel_stops_rendering(project):
    handle, panel, broker, pump = await open_panel(project, calls("a"))
    panel.close()
    handle.abort()
    await asyncio.wait_for(_await(handle), 10)
    pump.mark(panel)
    await pump.aclose()
    assert panel.comm is None


def _ids(panel):
    return [key for pair in panel.record.display_ids for key in pair]


async def _await(handle):
    return await handle



async def test_a_waiting_row_shows_the_whole_input_and_the_diff_it_would_make(project):
    (project / "src").mkdir()
    (project / "src" / "util.py").write_text("def f():\n    return 1\n")
    long_line = "x = '" + "y" * 300 + "'"
    blocks = [
        {"type": "tool_use", "id": "r0", "name": "Read", "input": {"file_path": "src/util.py"}},  # Edit needs a Read first
        {"type": "tool_use", "id": "e1", "name": "Edit", "input": {"file_path": "src/util.py", "old_string": "return 1",
                                                                   "new_string": "return 2  # changed"}},
        {"type": "tool_use", "id": "w1", "name": "Write", "input": {"file_path": "src/new.py", "content": f"a = 1\n{long_line}\nb = 2\n"}},
        {"type": "tool_use", "id": "b1", "name": "Bash", "input": {"command": "for f in *.txt; do\n  wc -l \"$f\"\ndone > counts.log"}},
    ]
    handle, panel, broker, pump = await open_panel(project, blocks)
    await wait_for(lambda: "e1" in panel._asking, what="the Edit to ask")
    edit = panel.approval_row("e1").detail.value
    import re

    shown = re.sub(r"<[^>]+>", "", edit)  # the diff's text, with its line numbers and marked words
    assert "return 1" in shown and "return 2  # changed" in shown and "replaces 1 occurrence" in edit
    assert 'class="nts-word-removed"' in edit and 'class="nts-ln"' in edit
    assert "nts-would-diff" in edit and shown.count("# changed") == 1  # the input once: as its diff
    click_from_thread(panel.approval_row("e1").allow_button)
    await wait_for(lambda: "w1" in panel._asking, what="the Write to ask")
    write = panel.approval_row("w1").detail.value
    written = re.sub(r"<[^>]+>", "", write)
    assert "y" * 300 in written and "b = 2" in written and written.count("a = 1") == 1  # all of it, once, not cut
    assert panel.approval_row("w1").rule_picker.labels[0] == "Edit(src/new.py)"  # the narrowest rule first
    click_from_thread(panel.approval_row("w1").allow_button)
    await wait_for(lambda: "b1" in panel._asking, what="the Bash loop to ask")
    bash = panel.approval_row("b1").detail.value
    assert "for f in *.txt; do\n  wc -l" in bash and bash.count("wc -l") == 1  # the command once, line breaks kept
    assert "Bash wants to run `for f in *.txt; do…`" in bash  # the reason names the command
    click_from_thread(panel.approval_row("b1").deny_button)
    await asyncio.wait_for(_await(handle), 20)
    await pump.aclose()
    assert (project / "src" / "util.py").read_text().endswith("return 2  # changed\n")


async def test_rows_say_why_a_call_failed_without_the_model_tags(project):
    blocks = [{"type": "tool_use", "id": "r1", "name": "Read", "input": {}},
              {"type": "tool_use", "id": "r2", "name": "Read", "input": {"file_path": "README.md", "bogus": 1}}]
    handle, panel, broker, pump = await open_panel(project, blocks)
    await asyncio.wait_for(_await(handle), 10)
    await pump.aclose()
    rows = panel.rows()
    assert all(r.state == "error" for r in rows)
    assert "file_path" in rows[0].note and "bogus" in rows[1].note
    final = panel.record.final["text/html"]
    assert "tool_use_error" not in final and "nts-why" in final and "<details open" in final


async def test_stop_interrupts_running_calls_and_skips_queued_ones(project):
    blocks = [{"type": "tool_use", "id": "s1", "name": "Bash", "input": {"command": "touch started && sleep 30"}},
              {"type": "tool_use", "id": "s2", "name": "Read", "input": {"file_path": "README.md"}}]
    sched, broker, pump, handoff = make_panel(project)
    sched.permissions.add_session_rule("Bash(sleep:*)")
    sched.permissions.add_session_rule("Bash(touch:*)")
    handle = sched.submit(blocks)
    panel = RunPanel(handle, pump=pump, handoff=handoff, broker=broker, title="stop", cwd=str(project))
    await wait_for(lambda: handle.states["s1"].status == "executing", what="sleep to start")
    await wait_for(lambda: "waits for #1" in panel.rows()[1].note, what="the queued row to say what it waits for")
    click_from_thread(panel.stop_button)
    await asyncio.wait_for(_await(handle), 20)
    await pump.aclose()
    first, second = panel.rows()
    assert (first.label, first.note) == ("interrupted", "interrupted by the Stop button")
    assert (second.label, second.note) == ("skipped", "not started: the run was stopped by the Stop button")


async def test_always_allow_saves_the_chosen_rule_and_releases_a_covered_sibling(project):
    blocks = calls("a", "b")
    handle, panel, broker, pump = await open_panel(project, blocks)
    await wait_for(lambda: len(panel._asking) == 2, what="two approval rows")
    row = panel.approval_row("t_a")
    assert row.rule_picker.labels == ["ask_me"]
    click_from_thread(row.always_button)  # saves ask_me for the session: t_b is covered too
    results = await asyncio.wait_for(_await(handle), 10)
    assert [r.text for r in results] == ["ran a", "ran b"]
    assert handle.states["t_b"].answer == "allow"
    await pump.aclose()
    # what was saved, and where, on the record's one line (a lowercase tool name is one Claude
    # Code's settings would drop: it stays in the session, and the line says so)
    summary = panel.record.final["text/html"].split("</summary>")[0]
    assert 'class="nts-saved"' in summary and "saved ask_me for this session only" in summary, summary
    assert not (project / ".claude" / "settings.local.json").exists()


async def test_always_allow_writes_the_rule_to_the_local_settings_and_says_so(project):
    @nts.tool(concurrency_safe=True)
    async def Stamp(name: str) -> str:
        """Not read-only: asks."""
        return "stamped " + name

    blocks = calls("a", tool="Stamp")
    handle, panel, broker, pump = await open_panel(project, blocks, tools=(Stamp,))
    await wait_for(lambda: "t_a" in panel._asking, what="the prompt")
    click_from_thread(panel.approval_row("t_a").always_button)
    await asyncio.wait_for(_await(handle), 10)
    await pump.aclose()
    import json

    assert json.loads((project / ".claude" / "settings.local.json").read_text())["permissions"]["allow"] == ["Stamp"]
    assert "saved Stamp to .claude/settings.local.json" in panel.record.final["text/html"].split("</summary>")[0]


async def test_a_saved_copy_opens_finished_results_too(project):
    handle, panel, broker, pump = await open_panel(project, [{"type": "tool_use", "id": "r", "name": "Read",
                                                               "input": {"file_path": "README.md"}}] + calls("a"))
    await wait_for(lambda: "t_a" in panel._asking, what="the prompt")
    snapshot = panel.snapshot_html()
    assert "waiting for approval when saved" in snapshot
    assert '<details class="nts-call"><summary class="nts-row" data-id="r" data-state="completed"' in snapshot
    handle.abort()
    await asyncio.wait_for(_await(handle), 10)
    await pump.aclose()


async def test_the_record_replaces_every_display_with_the_final_state(project, monkeypatch):
    import IPython.display

    shown, updated = [], []
    monkeypatch.setattr(IPython.display, "display", lambda data, **kw: shown.append((data, kw)))
    monkeypatch.setattr(IPython.display, "update_display", lambda data, **kw: updated.append((data, kw)))
    handle, panel, broker, pump = await open_panel(project, calls("a"))
    panel._ipython_display_()
    (snapshot, snapshot_options), (live, options) = shown
    assert "application/vnd.jupyter.widget-view+json" in live and "text/html" not in live and "text/plain" not in live
    assert options["display_id"] and options["raw"] and snapshot_options["display_id"] != options["display_id"]
    # what a saved notebook shows while the run goes on: its state then, not a widget it cannot draw
    assert "nts-snapshot" in snapshot["text/html"] and 'data-state="queued"' in snapshot["text/html"]
    await wait_for(lambda: "t_a" in panel._asking, what="the approval row")
    click_from_thread(panel.approval_row("t_a").allow_button)
    await asyncio.wait_for(_await(handle), 10)
    await pump.aclose()
    finals = [(data, kw) for data, kw in updated if "nts-snapshot" not in data["text/html"]]
    (final, final_options), (spent, spent_options) = finals
    assert final_options["display_id"] == snapshot_options["display_id"] and spent_options["display_id"] == options["display_id"]
    assert set(final) == {"text/html", "text/plain"} and "widget" not in str(spent)  # no widget left to fail to render
    assert 'data-state="completed"' in final["text/html"] and "completed" in final["text/plain"]
    snapshots = [data["text/html"] for data, _ in updated if "nts-snapshot" in data["text/html"]]
    assert all("awaiting approval" in html or "queued" in html for html in snapshots)


def test_a_panel_whose_kernel_died_says_so_through_css():
    from nbtoolsched.notebook._record import GONE_HTML, PANEL_CSS

    assert ".nts-panel.jupyter-widgets-disconnected .nts-gone" in PANEL_CSS
    assert "pointer-events: none" in PANEL_CSS and "kernel that ran this is gone" in GONE_HTML


async def test_a_record_finished_after_its_cell_is_sent_again_from_the_next_cell(project, monkeypatch, shell):
    """ipykernel 7 addresses a late update to the cell that started the run; headless
    runners drop it, so the next cell's end sends it again (from that cell's context)."""
    import IPython.display

    updated = []
    monkeypatch.setattr(IPython.display, "display", lambda data, **kw: None)
    monkeypatch.setattr(IPython.display, "update_display",
                        lambda data, **kw: updated.append(kw["display_id"]) if "nts-snapshot" not in data["text/html"] else None)
    handle, panel, broker, pump = await open_panel(project, calls("a"))
    panel._ipython_display_()
    shell.run_cell("0")  # the cell that showed the panel ends (post_run_cell); the run goes on
    await wait_for(lambda: "t_a" in panel._asking, what="the approval row")
    click_from_thread(panel.approval_row("t_a").allow_button)
    await asyncio.wait_for(_await(handle), 10)
    await pump.aclose()
    assert updated == _ids(panel)  # sent when the run ended
    shell.run_cell("1 + 1")  # the next cell ends: post_run_cell
    assert updated == _ids(panel) * 2
    shell.run_cell("2 + 2")  # once only
    assert updated == _ids(panel) * 2


async def test_a_record_finished_while_its_cell_runs_is_sent_once(project, monkeypatch, shell):
    """Its update already went to its own, running cell: the cell's end sends nothing more."""
    import IPython.display

    updated = []
    monkeypatch.setattr(IPython.display, "display", lambda data, **kw: None)
    monkeypatch.setattr(IPython.display, "update_display",
                        lambda data, **kw: updated.append(kw["display_id"]) if "nts-snapshot" not in data["text/html"] else None)
    handle, panel, broker, pump = await open_panel(project, calls("a"))
    panel._ipython_display_()
    await wait_for(lambda: "t_a" in panel._asking, what="the approval row")
    click_from_thread(panel.approval_row("t_a").allow_button)
    await asyncio.wait_for(_await(handle), 10)
    await pump.aclose()
    assert updated == _ids(panel)
    shell.run_cell("1 + 1")  # the cell that showed it (and saw it finish) ends
    assert updated == _ids(panel)
