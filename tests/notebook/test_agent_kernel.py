"""Kernel-level: ``%%agent`` over several cells in a real kernel, jupyter_client as the frontend.

Per ipykernel line (6.x, 7.3, the newest): the assistant's text streams in order and is
shown while it streams; the tool calls of a turn are partitioned as the scheduler
decides; an approval asked mid-turn is answered by a real comm click (sent to a subshell
where the kernel has them, as JupyterLab does) and the turn goes on; a kernel interrupt
ends the next turn with every call answered and a valid transcript (in memory and on
disk), and the cell after it continues the same conversation.
"""

from __future__ import annotations

import json

import pytest

from .kernels import VARIANTS, click, create_subshell, execute, kernel_python, poll_json, running_kernel, supports_subshells

pytestmark = [pytest.mark.timeout(300), pytest.mark.kernel]

SETUP = '''%load_ext nbtoolsched
import json
from nbtoolsched.models import ScriptedModel, Turn, text, tool_use
from nbtoolsched._session_log import read_transcript
from nbtoolsched.agent._transcript import transcript_problems
WORDS = "Reading the README, listing the markdown files, then writing notes."
model = ScriptedModel([
    Turn([text(WORDS), tool_use("Read", file_path="README.md"), tool_use("Glob", pattern="*.md"),
          tool_use("Write", file_path="notes.txt", content="noted\\n"), tool_use("Read", file_path="notes.txt")],
         text_deltas=25, delay_per_delta=0.03),
    "Notes written.",
    [tool_use("Sleep", seconds=120)],
    "Picking up where we stopped.",
])
def check(cell):
    r = cell.result
    agent = get_session_agent()
    back = read_transcript(agent.transcript.path)
    return {"stop": r.stop_reason, "final": r.final_text, "problems": transcript_problems(r.messages),
            "file_matches": back.messages == r.messages, "file_problems": [str(p) for p in back.problems],
            "messages": len(r.messages)}
def get_session_agent():
    from nbtoolsched.notebook import get_session
    from nbtoolsched.notebook._agent_cell import conversation_for
    return conversation_for(get_session()).agent
'''
ROWS = "print(json.dumps({k: r.allow_button.model_id for p in t1.view.panels for k, r in p._asking.items()}))"
VIEW_NOW = ("v = t1.view\np = v.panels[0]\nsnap = v.snapshot_html()\n"
            "print(json.dumps({'cwd': p.cwd, 'tools_cwd': get_session_agent().context.cwd,"
            " 'stop_in_header': v.stop_button in v.header_row.children, 'stop_style': v.stop_button.button_style,"
            " 'stop_classes': list(v.stop_button._dom_classes), 'stop_height': v.stop_button.layout.height,"
            " 'turn_classes': [c for c in p._dom_classes if c.startswith('nts-agent')], 'head': t1.text().splitlines()[0],"
            " 'snapshot_waits': 'waiting for approval' in snap, 'snapshot_live': 'data-live=\"true\"' in snap}))")


@pytest.fixture(params=list(VARIANTS), scope="module")
def kernel(request, tmp_path_factory):
    python = kernel_python(request.param)
    work = tmp_path_factory.mktemp(request.param) / "work"
    work.mkdir()
    (work / "README.md").write_text("# demo\n")
    env = {"CLAUDE_CONFIG_DIR": str(work.parent / "claude"), "NBTOOLSCHED_APPROVAL": "", "TMPDIR": str(work.parent)}
    with running_kernel(python, work, env) as (manager, client):
        loaded = execute(client, SETUP)
        assert loaded["error"] is None and "nbtoolsched:" in loaded["stdout"], loaded
        yield request.param, manager, client, work


def _json(out: dict) -> object:
    assert out["error"] is None, out
    return json.loads(out["stdout"].strip().splitlines()[-1])


def test_a_session_over_cells_with_a_click_an_interrupt_and_a_continuation(kernel):
    variant, manager, client, work = kernel
    subshell = create_subshell(client) if supports_subshells(client) else None
    assert subshell is not None or variant == "ipykernel-6.29.5"

    # cell 1: streamed text, a partitioned turn, an approval answered by a click
    started = execute(client, "%%agent --model model --name t1\nTidy up the notes, please.")
    assert started["error"] is None and started["result"] == "%%agent t1: waiting", started  # titled by --name
    asking = poll_json(client, ROWS, lambda rows: len(rows) == 1, timeout=60)
    # while the Write waits: its diff is relative to the session's cwd, Stop sits in the header row
    # as %%toolcall's does, and the snapshot (a saved notebook's copy) says that it waits
    live = _json(execute(client, VIEW_NOW))
    assert live["cwd"] == live["tools_cwd"] != "." and live["stop_in_header"] and live["stop_style"] == ""
    assert {"nts-agent-stop", "nts-btn-danger"} <= set(live["stop_classes"]) and live["stop_height"] == "24px"
    assert live["turn_classes"] == ["nts-agent-turn"] and live["head"].startswith("%%agent t1: waiting for approval")
    assert live["snapshot_waits"] and live["snapshot_live"]
    click(client, next(iter(asking.values())), subshell)
    seen = _json(execute(client, "await t1\nv = t1.view\nprint(json.dumps({**check(t1), 'texts': v.texts,"
                                 " 'renders': v._segments[0].renders, 'head': v.text().splitlines()[0],"
                                 " 'raw_kept': 'data-stop-reason=\"end_turn\"' in v.snapshot_html(),"
                                 " 'rows': [[r.name, r.batch, r.state] for r in v.panels[0].rows()]}))", timeout=60))
    assert seen["stop"] == "end_turn" and seen["final"] == "Notes written."
    assert seen["head"] == "%%agent t1: finished" and seen["raw_kept"]  # plain words; the raw reason for tests only
    assert seen["texts"] == ["Reading the README, listing the markdown files, then writing notes.", "Notes written."]
    renders = seen["renders"]
    assert renders == sorted(renders) and renders[-1] == len(seen["texts"][0]) and len(renders) >= 2
    assert seen["rows"] == [["Read", 1, "completed"], ["Glob", 1, "completed"], ["Write", 2, "completed"],
                            ["Read", 3, "completed"]]
    assert seen["problems"] == [] and seen["file_matches"] and seen["file_problems"] == []
    assert (work / "notes.txt").read_text() == "noted\n"

    # cell 2: a long tool, then the kernel's stop button while the kernel is idle
    assert execute(client, "%%agent --name t2\nNow wait for a while.")["error"] is None
    poll_json(client, "print(json.dumps([r.state for p in t2.view.panels for r in p.rows()]))",
              lambda states: states == ["executing"], timeout=60)
    manager.interrupt_kernel()
    stopped = _json(execute(client, "await t2\nprint(json.dumps(check(t2)))", timeout=60))
    assert stopped["stop"] == "aborted_tools" and stopped["problems"] == []
    assert stopped["file_matches"] and stopped["file_problems"] == []

    # cell 3: the conversation goes on from the interrupted turn
    assert execute(client, "%%agent --name t3\nPlease go on.")["error"] is None
    resumed = _json(execute(client, "await t3\nlast = model.calls[-1].messages\nprint(json.dumps({**check(t3),"
                                    " 'sent': len(last), 'tail': [b['type'] for b in last[-1]['content']],"
                                    " 'said': last[-1]['content'][-1].get('text')}))", timeout=60))
    assert resumed["final"] == "Picking up where we stopped." and resumed["problems"] == [] and resumed["file_matches"]
    # the model saw the interrupted turn (its call answered, the interruption noted) and then the new message
    assert resumed["sent"] == stopped["messages"] and resumed["tail"] == ["tool_result", "text", "text"]
    assert resumed["said"] == "Please go on."
    assert execute(client, "print(1 + 1)")["stdout"].strip() == "2"  # the kernel is fine
