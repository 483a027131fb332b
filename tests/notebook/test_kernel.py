"""Kernel-level: a real kernel per ipykernel line, jupyter_client as the frontend sending real clicks.

Covers ipykernel 6.x (comms on the main shell only), 7.3 (comms sent to a subshell run
on the subshell's thread) and the newest (7.4+: routed back to the main shell), with
and without a subshell where the kernel has them; kernel interrupts; bad input.
"""

from __future__ import annotations

import json
import queue
import time

import pytest

from tests.processes import sleeping

from .conftest import TOUCH_TOOL
from .kernels import (
    VARIANTS,
    click,
    collect,
    create_subshell,
    execute,
    kernel_python,
    poll_json,
    running_kernel,
    supports_subshells,
)

pytestmark = [pytest.mark.timeout(300), pytest.mark.kernel]

ROWS = ("import json\n"
        "print(json.dumps({k: [r.allow_button.model_id, r.deny_button.model_id] for k, r in run.panel._asking.items()}))")


@pytest.fixture(params=list(VARIANTS), scope="module")
def kernel(request, tmp_path_factory):
    python = kernel_python(request.param)
    work = tmp_path_factory.mktemp(request.param) / "work"
    work.mkdir()
    env = {"CLAUDE_CONFIG_DIR": str(work.parent / "claude"), "NBTOOLSCHED_APPROVAL": ""}
    with running_kernel(python, work, env) as (manager, client):
        loaded = execute(client, "%load_ext nbtoolsched\n" + TOUCH_TOOL)
        assert loaded["error"] is None and "nbtoolsched:" in loaded["stdout"], loaded
        yield request.param, manager, client, work


def _run_approval_batch(client, work, tag: str, subshell_id: str | None) -> dict:
    cell = f"%%toolcall --name run\n- touch: {{name: {tag}-a.txt}}\n- touch: {{name: {tag}-b.txt}}\n"
    started = execute(client, cell)
    assert started["error"] is None and "2 calls" in started["result"], started
    rows = poll_json(client, ROWS, lambda v: len(v) == 2)
    (allow_a, _), (_, deny_b) = rows.values()
    click(client, allow_a, subshell_id)
    click(client, deny_b, subshell_id)
    done = execute(client, "res = await run\nprint(json.dumps([[r.is_error, r.text] for r in res]))", timeout=60)
    assert done["error"] is None, done
    results = json.loads(done["stdout"].strip().splitlines()[-1])
    threads = json.loads(execute(client, "from nbtoolsched.notebook import get_session\n"
                                         "print(json.dumps(get_session().handoff.caller_threads))")["stdout"])
    return {"results": results, "threads": threads}


def test_clicks_on_the_main_shell_answer_approvals(kernel):
    variant, _manager, client, work = kernel
    seen = _run_approval_batch(client, work, "main", None)
    (a_error, a_text), (b_error, b_text) = seen["results"]
    assert not a_error and a_text == "made main-a.txt"
    assert b_error and "rejected" in b_text
    assert (work / "main-a.txt").exists() and not (work / "main-b.txt").exists()
    assert seen["threads"][-2:] == ["MainThread", "MainThread"]


def _wait_with_a_click(client, work, tag: str, subshell_id: str | None, timeout: float = 60) -> dict:
    """Run a --wait cell that asks, and click Allow (as a frontend would) while the cell blocks."""
    cell = f"%%toolcall --wait --name w_{tag.replace('-', '_')}\n- touch: {{name: {tag}.txt}}\n"
    msg_id = client.execute(cell)
    out = {"stderr": "", "stdout": "", "clicked": False, "error": None}
    allow = None
    deadline = time.monotonic() + timeout
    while True:
        assert time.monotonic() < deadline, f"the --wait cell did not finish within {timeout} s: {out}"
        try:
            msg = client.get_iopub_msg(timeout=2)
        except queue.Empty:
            continue
        kind, content = msg["msg_type"], msg["content"]
        if kind == "comm_open" and not out["clicked"]:
            state = content.get("data", {}).get("state", {})
            if state.get("_model_name") == "ButtonModel" and str(state.get("description")).startswith("Allow ("):
                allow = content["comm_id"]
            elif allow is not None and state.get("_model_name") == "VBoxModel":  # the row is complete: a person sees it
                click(client, allow, subshell_id)
                out["clicked"] = True
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        if kind == "stream":
            out[content["name"]] += content["text"]
        elif kind == "error":
            out["error"] = content
        elif kind == "status" and content["execution_state"] == "idle":
            return out


def test_wait_refuses_where_clicks_come_on_the_main_shell(kernel):
    """Measured: a click sent to the main shell waits behind a blocked cell on every ipykernel
    (7.4's concurrent comm dispatch does not help a cell that blocks in a nested loop), so
    --wait refuses at once instead of hanging."""
    variant, _manager, client, work = kernel
    seen = _wait_with_a_click(client, work, "wait-main", None)
    assert "--wait cannot wait for your click here" in seen["stderr"], seen
    assert "--policy allow" in seen["stderr"] and not (work / "wait-main.txt").exists()


def test_clicks_sent_to_a_subshell_answer_approvals(kernel):
    variant, _manager, client, work = kernel
    if not supports_subshells(client):
        assert variant == "ipykernel-6.29.5", f"{variant} should support kernel subshells"
        return  # 6.x has no subshells: the main-shell test above is its whole story
    sub = create_subshell(client)
    seen = _run_approval_batch(client, work, "sub", sub)
    (a_error, _), (b_error, _) = seen["results"]
    assert not a_error and b_error
    assert (work / "sub-a.txt").exists() and not (work / "sub-b.txt").exists()
    if variant == "ipykernel-7.3":
        # 7.3 runs the click on the subshell's own thread: only the hand-over makes it work
        assert all(name != "MainThread" for name in seen["threads"][-2:]), seen["threads"]


def test_wait_with_a_click_sent_to_a_subshell(kernel):
    """Measured: where comms arrive on a subshell (7.x), a click reaches the blocked cell."""
    variant, _manager, client, work = kernel
    if not supports_subshells(client):
        seen = _wait_with_a_click(client, work, "wait-sub", None)
        assert "--wait cannot wait for your click here" in seen["stderr"] and "6.29" in seen["stderr"], seen
        return
    sub = create_subshell(client)
    seen = _wait_with_a_click(client, work, "wait-sub", sub)
    assert seen["clicked"] and seen["error"] is None and "UsageError" not in seen["stderr"], seen
    assert (work / "wait-sub.txt").exists()
    done = execute(client, "print(w_wait_sub.done(), w_wait_sub.summary())")
    assert done["stdout"].strip() == "True 1 calls: 1 completed", done


def test_wait_with_a_policy_needs_no_click_anywhere(kernel):
    variant, _manager, client, work = kernel
    out = execute(client, "%%toolcall --wait --policy allow --name w_pol\n- touch: {name: by-policy.txt}\n", timeout=60)
    assert out["error"] is None and (work / "by-policy.txt").exists(), out
    assert execute(client, "print(w_pol.done())")["stdout"].strip() == "True"


def test_an_interrupted_await_is_one_short_line(kernel):
    variant, manager, client, work = kernel
    assert execute(client, "%%toolcall --name r_int\n- touch: {name: never-int.txt}\n")["error"] is None
    poll_json(client, "import json; print(json.dumps(bool(r_int.panel.pending())))", bool)
    msg_id = client.execute("print('awaiting', flush=True)\nawait r_int")
    deadline = time.monotonic() + 30
    while True:  # interrupt only once the cell is really awaiting (a fixed sleep races a busy machine)
        assert time.monotonic() < deadline, "the await cell never started"
        try:
            msg = client.get_iopub_msg(timeout=2)
        except queue.Empty:
            continue
        if msg["parent_header"].get("msg_id") == msg_id and msg["msg_type"] == "stream" and "awaiting" in msg["content"]["text"]:
            break
    time.sleep(0.2)
    manager.interrupt_kernel()
    out = collect(client, msg_id, 30, "await r_int (interrupted)")
    text = out["stderr"] + json.dumps(out["error"] or {})
    assert "Interrupted: toolcall r_int was stopped" in text and "CancelledError" not in text, out
    done = execute(client, "print(r_int.done(), r_int.outcomes[0].status)", timeout=30)
    assert done["stdout"].strip() == "True cancelled", done


def test_kernel_interrupt_aborts_the_run_and_kills_its_processes(kernel):
    variant, manager, client, work = kernel
    tag = "120.4242"  # found by its argument: inside the OS sandbox, $! is a pid of its own namespace
    cell = f'%%toolcall --name r2 --policy allow\n- Bash: {{command: "echo started; sleep {tag} & wait"}}\n'
    assert execute(client, cell)["error"] is None
    # a progress line proves the tool is past spawning (see the report: a cancel during
    # asyncio's subprocess start-up can leave a background child holding the pipes)
    poll_json(client, "import json; print(json.dumps(r2.states[r2.handle.order[0]].progress_count))", lambda n: n >= 1)
    deadline = time.monotonic() + 30
    while not sleeping(tag):
        assert time.monotonic() < deadline, "the command never started"
        time.sleep(0.1)
    manager.interrupt_kernel()  # the kernel is idle: only the extension's handler sees this
    done = execute(client, "await r2\nprint(r2.outcomes[0].status)", timeout=60)
    assert done["stdout"].strip() == "cancelled", done
    deadline = time.monotonic() + 15
    while sleeping(tag):
        assert time.monotonic() < deadline, f"sleep {tag} outlived the interrupt"
        time.sleep(0.1)
    assert execute(client, "print(1 + 1)")["stdout"].strip() == "2"  # the kernel is fine


def test_bad_input_is_a_short_error_in_the_cell(kernel):
    _variant, _manager, client, _work = kernel
    out = execute(client, "%%toolcall\n- Nope: {}\n")
    assert out["status"] == "error"
    # IPython shows a UsageError as one short line on stderr: no traceback wall
    assert out["stderr"].strip().startswith("UsageError: call 1: unknown tool 'Nope'")
    assert len(out["stderr"].strip().splitlines()) == 1 and out["error"] is None
    assert execute(client, "print('alive')")["stdout"].strip() == "alive"


def test_interrupting_a_wait_cell_stops_the_run_and_says_so_in_one_line(kernel):
    variant, manager, client, work = kernel
    msg_id = client.execute("%%toolcall --wait --policy allow --name w_int\n- Bash: {command: 'touch w-int.started && sleep 60'}\n")
    deadline = time.monotonic() + 30
    while not (work / "w-int.started").exists():
        assert time.monotonic() < deadline, "the command never started"
        time.sleep(0.1)
    manager.interrupt_kernel()
    out = collect(client, msg_id, 30, "the interrupted --wait cell")
    assert "interrupted: toolcall w_int was stopped" in out["stderr"] and out["error"] is None, out
    assert execute(client, "print(w_int.outcomes[0].status)")["stdout"].strip() == "cancelled"


@pytest.fixture(scope="module")
def current_kernel(tmp_path_factory):
    """A kernel on this environment's ipykernel (7.x: the parent header is a context variable)."""
    work = tmp_path_factory.mktemp("records") / "work"
    work.mkdir()
    env = {"CLAUDE_CONFIG_DIR": str(work.parent / "claude"), "NBTOOLSCHED_APPROVAL": ""}
    with running_kernel(kernel_python("ipykernel-current"), work, env) as (_manager, client):
        loaded = execute(client, "%load_ext nbtoolsched\n" + TOUCH_TOOL)
        assert loaded["error"] is None, loaded
        yield client


def _snapshot_only(got: list, key: str) -> bool:
    """True when every update of ``key`` sent a live snapshot, none the finished record."""
    updates = [m for m in got if m["msg_type"] == "update_display_data" and m["content"]["transient"]["display_id"] == key]
    return all("nts-snapshot" in m["content"]["data"].get("text/html", "") for m in updates)


def _iopub_of(client, code: str, timeout: float = 60) -> list[dict]:
    """Every iopub message addressed to the cell ``code`` until it went idle."""
    msg_id = client.execute(code)
    got: list[dict] = []
    deadline = time.monotonic() + timeout
    while True:
        assert time.monotonic() < deadline, f"the cell did not finish within {timeout} s:\n{code}"
        try:
            msg = client.get_iopub_msg(timeout=5)
        except queue.Empty:
            continue
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        got.append(msg)
        if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            return got


def test_a_record_finished_by_a_task_of_an_earlier_cell_reaches_its_own_cell(current_kernel):
    """The UI pump that finishes records is a task made in the cell of the first run, and
    ipykernel 7 addresses what it sends to that cell: a record shown and finished within
    one later cell must still be sent again from that cell, or a headless runner (nbclient,
    nbconvert, papermill) saves its live state."""
    client = current_kernel
    assert execute(client, "%%toolcall --name rec_first --policy allow\n- touch: {name: first.txt}\n")["error"] is None
    assert execute(client, "await rec_first")["error"] is None  # the pump task now belongs to that cell
    cell = ("import asyncio\nfrom IPython.display import display\nfrom nbtoolsched.notebook import get_session\n"
            "rec_b = get_session().submit([{'type': 'tool_use', 'id': 'b', 'name': 'touch', 'input': {'name': 'b.txt'}}],"
            " policy='allow')\n"
            "display(rec_b)\nawait rec_b\n"
            "for _ in range(200):\n    if rec_b.panel.record.final is not None:\n        break\n    await asyncio.sleep(0.05)\n"
            "print('finished', rec_b.panel.record.final is not None)\n")
    got = _iopub_of(client, cell)
    assert any(m["msg_type"] == "stream" and "finished True" in m["content"]["text"] for m in got), got
    shown = [m["content"]["transient"]["display_id"] for m in got if m["msg_type"] == "display_data"]
    final = [m["content"]["transient"]["display_id"] for m in got
             if m["msg_type"] == "update_display_data" and 'class="nts-record' in m["content"]["data"].get("text/html", "")]
    # two outputs: the snapshot (which becomes the record) and the widget's (emptied at the end)
    final = [key for key in final if not _snapshot_only(got, key)]
    assert len(shown) == 2 and shown[0] in final, (shown, final)


def test_a_later_cells_saved_copy_is_updated_in_that_cell(current_kernel):
    """JupyterLab applies an update_display_data only in the cell it is addressed to; the UI
    pump's task belongs to the cell that made it, so a later cell's snapshot updates must be
    addressed to that later cell, or a notebook saved while it waits keeps its first state."""
    client = current_kernel
    assert execute(client, "%%toolcall --name addr_first --policy allow\n- touch: {name: addr1.txt}\n")["error"] is None
    assert execute(client, "await addr_first")["error"] is None  # the pump now belongs to that cell
    code = ("import asyncio\nfrom nbtoolsched.notebook import get_session\n"
            "later = get_session().submit([{'type': 'tool_use', 'id': 'w', 'name': 'touch', 'input': {'name': 'addr2.txt'}}],"
            " policy='ask')\n"
            "display(later)\n"
            "for _ in range(100):\n    if later.panel.pending():\n        break\n    await asyncio.sleep(0.05)\n"
            "await asyncio.sleep(1.5)\n")  # the pump renders; the snapshot of the waiting state goes out
    got = _iopub_of(client, code)
    snapshots = [m["content"]["data"]["text/html"] for m in got if m["msg_type"] == "update_display_data"
                 and "nts-snapshot" in m["content"]["data"].get("text/html", "")]
    assert any("waiting for approval when saved" in html for html in snapshots), snapshots
    execute(client, "later.panel.stop()")
