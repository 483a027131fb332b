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
    registry = nts.ToolRegistry(list(tools))
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
    panel = RunPanel(handle, pump=pump, handoff=handoff, broker=broker, title="test run")
    return handle, panel, broker, pump


async def test_waiting_calls_get_inline_buttons_and_clicks_from_threads_answer_them(project):
    handle, panel, broker, pump = await open_panel(project, calls("a", "b", "c"))
    await wait_for(lambda: len(panel._asking) == 3, what="three approval rows")
    assert [type(w).__name__ for w in panel.body.children] == ["ApprovalRow"] * 3
    assert panel.approve_all_button.description == "Approve all 3"
    assert panel.approve_all_button.layout.display == ""

    click_from_thread(panel.approval_row("t_a").allow_button)
    await wait_for(lambda: handle.states["t_a"].status == "completed", what="the allowed call to run")
    # the allowed call ran while the others still wait
    assert handle.states["t_b"].status == handle.states["t_c"].status == "awaiting_approval"
    await wait_for(lambda: "t_a" not in panel._asking, what="the answered row to lose its buttons")
    assert [type(w).__name__ for w in panel.body.children] == ["HTML", "ApprovalRow", "ApprovalRow"]
    assert 'data-id="t_a"' in panel.body.children[0].value

    row_c = panel.approval_row("t_c")
    row_c.feedback.value = "use the other file"
    click_from_thread(row_c.deny_feedback_button)
    click_from_thread(panel.approval_row("t_b").deny_button)
    results = await asyncio.wait_for(_await(handle), 10)
    assert [r.is_error for r in results] == [None, True, True]
    assert "use the other file" in results[2].text
    await pump.aclose()
    assert panel.header.value.count("finished") == 1


async def test_approve_all_allows_every_waiting_call(project):
    handle, panel, broker, pump = await open_panel(project, calls("a", "b"))
    await wait_for(lambda: len(panel._asking) == 2, what="two approval rows")
    click_from_thread(panel.approve_all_button)
    results = await asyncio.wait_for(_await(handle), 10)
    assert [r.text for r in results] == ["ran a", "ran b"]
    await pump.aclose()
    assert panel.approve_all_button.layout.display == "none"


async def test_deny_with_feedback_needs_words_first(project):
    handle, panel, broker, pump = await open_panel(project, calls("a"))
    await wait_for(lambda: "t_a" in panel._asking, what="the approval row")
    row = panel.approval_row("t_a")
    click_from_thread(row.deny_feedback_button)
    await wait_for(lambda: "type the feedback" in row.feedback.placeholder, what="the hint")
    assert "t_a" in broker.pending  # nothing was answered
    click_from_thread(row.allow_button)
    assert (await asyncio.wait_for(_await(handle), 10))[0].text == "ran a"
    await pump.aclose()


async def test_result_preview_on_demand_and_timeline(project):
    handle, panel, broker, pump = await open_panel(project, [{"type": "tool_use", "id": "c1", "name": "chatty", "input": {"n": 3}}])
    await asyncio.wait_for(_await(handle), 10)
    await pump.aclose()
    panel.render()
    assert [v for _, v in panel.result_picker.options] == ["", "c1"]
    panel.result_picker.value = "c1"  # what a person choosing in the dropdown does
    await wait_for(lambda: "done" in panel.preview.value, what="the result preview")
    panel.timeline_toggle.value = True
    panel.render()
    assert panel.timeline.value.startswith("<svg")


async def test_text_repr_is_deterministic_and_has_no_times(project):
    handle, panel, broker, pump = await open_panel(project, calls("a", "b"))
    first = repr(panel)
    assert first == "test run: 2 calls\n   1. ask_me [--] queued  name=a\n   2. ask_me [--] queued  name=b"
    handle.abort()
    await asyncio.wait_for(_await(handle), 10)
    await pump.aclose()
    assert "cancelled" in repr(panel) and " s" not in repr(panel)


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


async def _await(handle):
    return await handle

