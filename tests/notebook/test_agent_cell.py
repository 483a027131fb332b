"""``%%agent`` in an in-process IPython: a conversation across cells, streamed Markdown, the tool
panel, approvals, Stop and interrupts, headless policies, fallback, transcripts, speculation;
and the view itself, HTML-level: its title, Stop, plain-word states, snapshot, colours."""

from __future__ import annotations

import asyncio
import json
import re
import threading
from html.parser import HTMLParser

import pytest

from nbtoolsched._session_log import read_transcript
from nbtoolsched.agent._transcript import validate_transcript

from .conftest import cell_error, session, wait_for

SCRIPT = '''
from nbtoolsched.models import ScriptedModel, Turn, text, tool_use
model = ScriptedModel([
    Turn([text("I'll **read** the README and list the markdown files."),
          tool_use("Read", file_path="README.md"), tool_use("Glob", pattern="*.md"), tool_use("touch", {"name": "seen.txt"})],
         text_deltas=12, delay_per_delta=0.02),
    Turn([text("The README is a *demo*.")], text_deltas=4),
    Turn([text("Second answer.")]),
])
'''


@pytest.fixture(autouse=True)
def _sessions_in_tmp(tmp_path, monkeypatch):
    """Transcripts go under the session folder (by default in the system temp dir): keep them here."""
    import tempfile

    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))


async def finish(cell, timeout: float = 15):
    async def wait():
        return await cell

    return await asyncio.wait_for(wait(), timeout)


def agent_of(shell):
    from nbtoolsched.notebook._agent_cell import conversation_for

    return conversation_for(session()).agent


async def test_a_conversation_across_cells_streams_markdown_and_shows_each_turns_tools(shell, project):
    shell.run_cell(SCRIPT)
    result = shell.run_cell("%%agent --model model --name t --policy allow\nWhat is in this folder?")
    cell = shell.user_ns["t"]
    assert result.error_in_exec is None and result.result is cell
    assert not cell.done() and cell.text() == "%%agent t: waiting"  # the cell returned before anything ran
    answer = await finish(cell)
    assert answer.stop_reason == "end_turn" and answer.turns == 2 and answer.final_text == "The README is a *demo*."
    await wait_for(lambda: "<strong>read</strong>" in cell.view.body.children[0].value, what="the Markdown render")
    first = cell.view._segments[0]
    assert first.renders == sorted(first.renders) and first.renders[-1] == len(first.text)
    assert len(first.renders) >= 2  # shown while it streamed (12 deltas, 0.02 s apart), then complete
    panel = cell.view.panels[0]
    assert [(r.name, r.batch, r.state) for r in panel.rows()] == [("Read", 1, "completed"), ("Glob", 1, "completed"),
                                                                  ("touch", 1, "completed")]
    assert cell.view.texts == ["I'll **read** the README and list the markdown files.", "The README is a *demo*."]
    assert (project / "seen.txt").exists()

    shell.run_cell("%%agent --name t2\nAnd now?")  # same model, same conversation
    second = await finish(shell.user_ns["t2"])
    model = shell.user_ns["model"]
    assert second.final_text == "Second answer." and len(model.calls[2].messages) == 5
    history = shell.run_line_magic("agent", "history").text
    assert history.startswith("[1] user: What is in this folder?") and "[5] user: And now?" in history
    validate_transcript(second.messages)
    assert read_transcript(agent_of(shell).transcript.path).messages == second.messages


async def test_new_starts_a_fresh_conversation_with_its_own_transcript(shell, project):
    shell.run_cell("from nbtoolsched.models import ScriptedModel\nm = ScriptedModel(['one', 'two'])")
    shell.run_cell("%%agent --model m --name a\nfirst")
    await finish(shell.user_ns["a"])
    before = agent_of(shell)
    shell.run_cell("%%agent --new --name b\nsecond")
    await finish(shell.user_ns["b"])
    after = agent_of(shell)
    assert after is not before and after.context.session_id != before.context.session_id
    assert [m["role"] for m in after.messages] == ["user", "assistant"]
    assert after.transcript.path != before.transcript.path and before.transcript.path.exists()


async def test_an_approval_mid_turn_is_answered_by_a_click_and_the_turn_goes_on(shell, project):
    shell.run_cell("from nbtoolsched.models import ScriptedModel, tool_use\n"
                   "m = ScriptedModel([[tool_use('touch', {'name': 'ok.txt'})], 'made it'])")
    shell.run_cell("%%agent --model m --name t\nmake ok.txt")
    cell = shell.user_ns["t"]
    await wait_for(lambda: cell.view.panels and cell.view.panels[0]._asking, what="the approval row")
    row = next(iter(cell.view.panels[0]._asking.values()))
    threading.Thread(target=row.allow_button.click).start()  # a click from another thread, as on a subshell
    result = await finish(cell)
    assert result.final_text == "made it" and (project / "ok.txt").exists()


async def test_stop_ends_the_turn_with_every_call_answered_and_the_next_cell_continues(shell, project):
    shell.run_cell("from nbtoolsched.models import ScriptedModel, tool_use\n"
                   "m = ScriptedModel([[tool_use('Sleep', seconds=30), tool_use('Read', file_path='README.md')],"
                   " 'picking up again'])")
    shell.run_cell("%%agent --model m --name t --policy allow\nwait a while")
    cell = shell.user_ns["t"]
    await wait_for(lambda: cell.view.panels and cell.view.panels[0].rows()
                   and cell.view.panels[0].rows()[0].state == "executing", what="the sleep to start")
    threading.Thread(target=cell.view.stop_button.click).start()
    result = await finish(cell)
    assert result.stop_reason == "aborted_tools"
    validate_transcript(result.messages)
    file = agent_of(shell).transcript.path
    assert read_transcript(file).messages == result.messages
    said = cell.text()
    assert said.startswith("%%agent t: stopped while tools were running") and "aborted" not in said
    assert "Every tool call has its result" in said
    shell.run_cell("%%agent --name t2\ncarry on")
    more = await finish(shell.user_ns["t2"])
    assert more.final_text == "picking up again"
    validate_transcript(more.messages)
    assert read_transcript(file).messages == more.messages


async def test_a_kernel_interrupt_stops_the_running_cell_and_those_waiting_behind_it(shell, project):
    from IPython.core.interactiveshell import ExecutionResult

    shell.run_cell("from nbtoolsched.models import ScriptedModel, tool_use\n"
                   "m = ScriptedModel([[tool_use('Sleep', seconds=30)], 'unused', 'unused'])")
    shell.run_cell("%%agent --model m --name a --policy allow\nfirst")
    shell.run_cell("%%agent --name b\nsecond")  # waits for the first
    first, second = shell.user_ns["a"], shell.user_ns["b"]
    await wait_for(lambda: first.view.panels and first.view.panels[0].rows()
                   and first.view.panels[0].rows()[0].state == "executing", what="the sleep to start")
    assert second.view.status == "waiting"
    interrupted = ExecutionResult(None)
    interrupted.error_in_exec = KeyboardInterrupt()
    shell.events.trigger("post_run_cell", interrupted)
    assert (await finish(first)).stop_reason == "aborted_tools"
    assert await finish(second) is None and "nothing was sent to the model" in second.text()
    assert shell.user_ns["m"].turns_played == 1
    validate_transcript(agent_of(shell).messages)


async def test_cells_started_back_to_back_run_in_order(shell, project):
    shell.run_cell("from nbtoolsched.models import ScriptedModel, tool_use\n"
                   "m = ScriptedModel([[tool_use('Sleep', seconds=0.3)], 'first done', 'second done'])")
    shell.run_cell("%%agent --model m --name a --policy allow\none")
    shell.run_cell("%%agent --name b\ntwo")
    assert (await finish(shell.user_ns["b"])).final_text == "second done"
    texts = [m["content"][0].get("text") for m in agent_of(shell).messages if m["role"] == "user"]
    assert texts[0] == "one" and texts[-1] == "two"


async def test_headless_policies_and_an_explicit_option_wins(project, monkeypatch, tmp_path):
    from IPython.core.interactiveshell import InteractiveShell

    monkeypatch.setenv("NBTOOLSCHED_APPROVAL", "deny")
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "nbtoolsched")
    try:
        ip.run_cell("import nbtoolsched as nts\nfrom nbtoolsched.models import ScriptedModel, tool_use\n"
                    "m = ScriptedModel([[tool_use('Write', file_path='x.txt', content='x')], 'ok',"
                    " [tool_use('Write', file_path='y.txt', content='y')], 'ok',"
                    " [tool_use('Write', file_path='z.txt', content='z')], 'never'])")
        ip.run_cell("%%agent --model m --name a\nwrite x")
        denied = await finish(ip.user_ns["a"])
        assert denied.messages[2]["content"][0]["is_error"] and not (project / "x.txt").exists()
        ip.run_cell("%%agent --name b --policy allow\nwrite y")  # the cell's option wins over the environment
        await finish(ip.user_ns["b"])
        assert (project / "y.txt").read_text() == "y"
        ip.run_cell("%%agent --name c --policy defer\nwrite z")
        paused = await finish(ip.user_ns["c"])
        assert paused.stop_reason == "approval_deferred" and not (project / "z.txt").exists()
        await wait_for(lambda: "Paused: the approval policy deferred Write" in ip.user_ns["c"].text(), what="the notice")
        validate_transcript(paused.messages)
    finally:
        ip.run_line_magic("unload_ext", "nbtoolsched")


async def test_an_overloaded_model_falls_back_and_the_cell_says_so(shell, project):
    shell.run_cell('''
from nbtoolsched.models import ModelError, ScriptedModel
class Busy:
    name = "big-model"
    async def stream(self, messages, *, tools=None, system=None):
        raise ModelError("overloaded", "Overloaded", status=529)
        yield {}
busy = Busy()
backup = ScriptedModel(["answered by the backup"], name="small-model")
''')
    shell.run_cell("%%agent --model busy --fallback-model backup --name t\nhello")
    cell = shell.user_ns["t"]
    result = await finish(cell)
    assert result.final_text == "answered by the backup"
    await wait_for(lambda: "Switched to small-model: big-model could not answer (Overloaded)" in cell.text(),
                   what="the fallback notice")
    entries = [json.loads(line) for line in agent_of(shell).transcript.path.read_text().splitlines()]
    assert [e["type"] for e in entries] == ["user", "system", "assistant"]


async def test_save_clear_load_and_continue(shell, project, tmp_path):
    shell.run_cell("from nbtoolsched.models import ScriptedModel, tool_use\n"
                   "m = ScriptedModel([[tool_use('Read', file_path='README.md')], 'read it'])\n"
                   "m2 = ScriptedModel(['continued'])")
    shell.run_cell("%%agent --model m --name a\nread it")
    first = await finish(shell.user_ns["a"])
    saved = tmp_path / "saved.jsonl"
    assert "saved 4 messages" in shell.run_line_magic("agent", f"save {saved}").text
    assert "already exists" in cell_error(shell.run_cell(f"%agent save {saved}"))
    assert "conversation cleared" in shell.run_line_magic("agent", "clear").text
    assert shell.run_line_magic("agent", "history").text == "no messages yet"
    loaded = shell.run_line_magic("agent", f"load {saved} --model m2").text
    assert "loaded 4 messages" in loaded and "same file" in loaded
    shell.run_cell("%%agent --name b\ncontinue please")
    more = await finish(shell.user_ns["b"])
    assert more.messages[:4] == first.messages and more.final_text == "continued"
    back = read_transcript(saved)
    assert back.problems == [] and back.messages == more.messages
    assert back.session_id == agent_of(shell).context.session_id


@pytest.mark.parametrize(
    ("cell", "message"),
    [
        ("%%agent\nhello", "needs a model"),
        ("%%agent --model nothing_here\nhello", "no notebook variable 'nothing_here'"),
        ("%%agent --model nts\nhello", "not a model"),
        ("%%agent --model claude-sonnet-4-6\nhello", "ANTHROPIC_API_KEY is not set"),
        ("%%agent --model m --max-turns 0\nhello", "--max-turns must be 1 or more"),
        ("%%agent --model m --mode sideways\nhello", "invalid choice"),
        ("%%agent --model m\n   ", "the cell is empty"),
        ("%%agent --model m --name 2x\nhello", "not a valid Python variable name"),
        ("%agent frobnicate", "not a command I know"),
        ("%agent save", "not a command I know"),
        ("%agent save somewhere.jsonl", "no conversation to save"),
        ("%agent load missing.jsonl", "cannot read the transcript"),
    ],
)
async def test_bad_input_is_one_short_error(shell, project, monkeypatch, cell, message):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    shell.run_cell("from nbtoolsched.models import ScriptedModel\nm = ScriptedModel(['hi'])")
    result = shell.run_cell(cell)
    assert message in cell_error(result)
    assert type(result.error_in_exec or result.error_before_exec).__name__ == "UsageError"


def test_a_claude_model_id_uses_anthropic_when_the_key_is_set(monkeypatch):
    from nbtoolsched.notebook._agent_cell import resolve_model

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    model = resolve_model("claude-sonnet-4-6", {})
    assert type(model).__name__ == "AnthropicModel" and model.name == "claude-sonnet-4-6"


async def test_per_cell_mode_turn_limit_and_concurrency(shell, project):
    shell.run_cell("from nbtoolsched.models import ScriptedModel, tool_use\n"
                   "m = ScriptedModel([[tool_use('Write', file_path='w.txt', content='w')], 'refused',"
                   " [tool_use('Sleep', seconds=0.2), tool_use('Sleep', seconds=0.2)], 'never'])")
    shell.run_cell("%%agent --model m --mode plan --policy allow --name a\nwrite w")
    refused = await finish(shell.user_ns["a"])
    assert refused.messages[2]["content"][0]["is_error"] and not (project / "w.txt").exists()
    shell.run_cell("%%agent --max-turns 1 --max-concurrency 1 --name b\nsleep twice")
    cell = shell.user_ns["b"]
    limited = await finish(cell)
    assert limited.stop_reason == "max_turns" and limited.turns == 1
    spans = sorted(cell.handle.trace.states(), key=lambda s: s.started_at)
    assert spans[1].started_at >= spans[0].finished_at - 0.01  # one at a time
    assert "batch" in shell.run_line_magic("toolsched", "trace").text()  # the cell's timeline


@pytest.mark.kernel_overlay  # the speculation runs in the kernel overlay where it starts
async def test_speculate_runs_from_the_conversation_and_accepting_continues_it(shell, project):
    shell.run_cell("from nbtoolsched.models import ScriptedModel, tool_use\n"
                   "m = ScriptedModel([[tool_use('Read', file_path='README.md')], 'read it',"
                   " [tool_use('Edit', file_path='README.md', old_string='line two', new_string='line 2')], 'edited',"
                   " 'after the speculation'])")
    shell.run_cell("%%agent --model m --name a\nread the readme")
    await finish(shell.user_ns["a"])
    shell.run_line_magic("toolsched", "mode acceptEdits")
    view = shell.run_line_magic("speculate", '"fix line two"')
    await wait_for(lambda: view.status == "ready", what="the speculation to finish")
    seen = shell.user_ns["m"].calls[2].messages  # the speculation's first request: the conversation + the suggestion
    assert seen[0]["content"][0]["text"] == "read the readme" and seen[-1]["content"][0]["text"] == "fix line two"
    # the Edit needed no new Read: the agent's file state came along
    threading.Thread(target=view.accept_button.click).start()
    await wait_for(lambda: view.status == "accepted", what="accept to finish")
    assert (project / "README.md").read_text() == "# demo\nline 2\n"
    agent = agent_of(shell)
    assert [m["role"] for m in agent.messages] == ["user", "assistant"] * 4
    assert agent.messages[4]["content"][0]["text"] == "fix line two"
    assert agent.messages[5]["content"][0]["name"] == "Edit" and not agent.messages[6]["content"][0].get("is_error")
    assert agent.messages[-1]["content"][-1]["text"] == "edited"
    shell.run_cell("%%agent --name b\nthanks")
    more = await finish(shell.user_ns["b"])
    assert more.final_text == "after the speculation"
    validate_transcript(more.messages)
    assert read_transcript(agent.transcript.path).messages == more.messages


async def test_status_and_help(shell, project):
    assert "no conversation yet" in shell.run_line_magic("agent", "").text
    assert "--fallback-model" in shell.run_line_magic("agent", "help").text


async def test_hooks_from_the_settings_get_the_sessions_real_transcript_path(project):
    """A PreToolUse command hook reads transcript_path while the cell runs and finds its own call there."""
    from IPython.core.interactiveshell import InteractiveShell

    hook = ("python3 -c \"import json,sys; d=json.load(sys.stdin); t=open(d['transcript_path']).read(); "
            "open('hook.log','a').write(json.dumps([d['transcript_path'], d['tool_use_id'] in t])+'\\n')\"")
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").write_text(json.dumps(
        {"hooks": {"PreToolUse": [{"matcher": "Read", "hooks": [{"type": "command", "command": hook}]}]}}))
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "nbtoolsched")
    try:
        ip.run_cell("from nbtoolsched.models import ScriptedModel, tool_use\n"
                    "m = ScriptedModel([[tool_use('Read', file_path='README.md')], 'read'])")
        ip.run_cell("%%agent --model m --name t\nread the readme")
        result = await finish(ip.user_ns["t"])
        assert result.final_text == "read"
        path, found = json.loads((project / "hook.log").read_text())
        assert path == str(agent_of(ip).transcript.path) and found  # the file already held the call it was asked about
    finally:
        ip.run_line_magic("unload_ext", "nbtoolsched")


async def test_an_answer_dropped_mid_stream_is_struck_through_and_its_calls_stopped(shell, project):
    shell.run_cell("from nbtoolsched.models import ScriptedModel, Turn, text, tool_use\n"
                   "primary = ScriptedModel([Turn([text('Let me sleep on it.'), tool_use('Sleep', seconds=20),"
                   " text('never said')], error_event_after=10)], name='primary')\n"
                   "backup = ScriptedModel(['A fresh answer.'], name='backup')")
    shell.run_cell("%%agent --model primary --fallback-model backup --policy allow --name t\nthink")
    cell = shell.user_ns["t"]
    result = await finish(cell)
    assert result.final_text == "A fresh answer." and cell.view.texts == ["A fresh answer."]
    await wait_for(lambda: "[dropped] Let me sleep on it." in cell.text(), what="the dropped answer in the view")
    await wait_for(lambda: cell.view.panels, what="the dropped answer's panel")
    panel = cell.view.panels[0]
    assert panel.title == "turn 1: tool calls of the dropped answer"
    assert [(r.name, r.state) for r in panel.rows()] == [("Sleep", "cancelled")]
    await wait_for(lambda: cell.view.body.children and "line-through" in cell.view.body.children[0].value,
                   what="the dropped text struck through")


async def test_a_finished_cell_leaves_a_true_record_in_place_of_its_live_view(shell, project, monkeypatch):
    import IPython.display

    shown, updated = [], []
    monkeypatch.setattr(IPython.display, "display", lambda data, **kw: shown.append((data, kw)))
    monkeypatch.setattr(IPython.display, "update_display", lambda data, **kw: updated.append((data, kw)))
    shell.run_cell(SCRIPT)
    shell.run_cell("%%agent --model model --name t --policy allow\nWhat is in this folder?")
    cell = shell.user_ns["t"]
    widget_mime = "application/vnd.jupyter.widget-view+json"
    # the cell's value, shown by IPython through _ipython_display_: the snapshot, then the widget
    (first, first_options), (live, options) = shown
    assert widget_mime in live and options["display_id"] and widget_mime not in first
    assert "nts-agent-snapshot" in first["text/html"] and 'data-live="true"' in first["text/html"]
    await finish(cell)
    await wait_for(lambda: cell.view.record.final is not None and any(
        kw["display_id"] == first_options["display_id"] and "nts-agent-record" in data["text/html"] for data, kw in updated),
        what="the record")
    final = [data for data, kw in updated if kw["display_id"] == first_options["display_id"]][-1]
    assert set(final) == {"text/html", "text/plain"}  # no widget left that a saved notebook cannot show
    assert all(widget_mime not in data for data, kw in updated if kw["display_id"] == options["display_id"])
    assert final["text/plain"].startswith("%%agent t: finished") and "end_turn" not in final["text/plain"]
    html = final["text/html"]
    assert cell.view.snapshot_html() in html  # the record is the snapshot of the cell that is over
    assert "<strong>read</strong>" in html and "The README is a <em>demo</em>." in html  # the answer, as Markdown
    assert html.count('class="nts-record"') == 1 and 'data-state="completed"' in html  # the turn's calls
    from nbtoolsched.notebook import get_agent

    assert get_agent() is agent_of(shell) and get_agent().messages[-1]["role"] == "assistant"


# -- the view, HTML-level -------------------------------------------------------------------------------
class _Text(HTMLParser):
    """What a person reads in some HTML: its text, without tags, attributes or style blocks."""

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self._style = 0

    def handle_starttag(self, tag, attrs):
        self._style += tag == "style"

    def handle_endtag(self, tag):
        self._style -= tag == "style"

    def handle_data(self, data):
        if not self._style:
            self.parts.append(data)


def visible(markup: str) -> str:
    parser = _Text()
    parser.feed(markup)
    return re.sub(r"\s+", " ", "".join(parser.parts))


def html_of(widget) -> str:
    """Every HTML string a widget tree shows."""
    import ipywidgets as widgets

    own = widget.value if isinstance(widget, widgets.HTML) else ""
    return own + "".join(html_of(child) for child in getattr(widget, "children", ()))


_COLOR = re.compile(r"(?<![-\w])color:\s*([^;\"]+)")


def text_colours(markup: str) -> list[str]:
    """The values of every ``color:`` declaration (not border-color, background...)."""
    return [value.strip() for value in _COLOR.findall(markup)]


class _Pump:
    def __init__(self):
        self.marked = []

    def mark(self, view):
        self.marked.append(view)


def bare_view(title: str = "%%agent #1", broker=None):
    from nbtoolsched._tool._abort import AbortSignal
    from nbtoolsched.notebook._agent_view import AgentView

    stopped = []
    view = AgentView(title, pump=_Pump(), handoff=lambda fn, *args: fn(*args), broker=broker, abort=AbortSignal(),
                     on_stop=lambda: stopped.append(True))
    return view, stopped


def play_to_the_end(view, stop_reason: str, model_stop: str | None, text: str = "Half an **answer**") -> None:
    from nbtoolsched._events import AgentFinished, ModelFinished, TextDelta, TurnFinished, TurnStarted

    view.start("scripted")
    for event in (TurnStarted(turn=1), TextDelta(turn=1, index=0, text=text), ModelFinished(turn=1, stop_reason=model_stop),
                  TurnFinished(turn=1, stop=stop_reason), AgentFinished(stop_reason=stop_reason, turns=1)):
        view.on_event(event)
    view.render()


@pytest.mark.parametrize(
    ("stop_reason", "model_stop", "words"),
    [
        ("end_turn", "end_turn", "finished"),
        ("end_turn", "stop_sequence", "finished"),
        ("end_turn", "max_tokens", "stopped: the model hit its output limit"),
        ("end_turn", "refusal", "stopped: the model declined to answer"),
        ("max_turns", "tool_use", "stopped at the turn limit (--max-turns)"),
        ("aborted_tools", "tool_use", "stopped while tools were running"),
        ("aborted_streaming", None, "stopped while the model was answering"),
        ("approval_deferred", "tool_use", "paused: an approval was deferred"),
        ("hook_stopped", "tool_use", "stopped by a hook"),
        ("model_error", None, "stopped: the model request failed"),
        ("a_reason_from_the_future", None, "finished"),
    ],
)
def test_a_cell_that_is_over_says_how_in_plain_words_and_keeps_the_raw_reason_out_of_sight(stop_reason, model_stop, words):
    view, _ = bare_view()
    play_to_the_end(view, stop_reason, model_stop)
    html = view.snapshot_html()
    seen = visible(html)
    assert view.state_words() == words and view.text().splitlines()[0] == f"%%agent #1: {words}"
    assert seen.startswith(f"%%agent #1 · scripted · 1 turn · {words}")
    assert seen.count(words) == 1  # said once: in the header, no footer saying it again
    for raw in {stop_reason, model_stop} - {None}:
        assert raw not in seen and raw not in view.text()  # a person never reads "end_turn", "tool_use", ...
    assert f'data-stop-reason="{stop_reason}"' in html and f"stop reason: {stop_reason}" in html  # tooltip, tests
    if model_stop:
        assert f'data-model-stop="{model_stop}"' in html
    assert view.record.final is not None and html == view.record_html()  # over: the snapshot is the record


def test_the_stop_button_sits_in_the_header_row_and_looks_like_toolcalls():
    view, stopped = bare_view()
    button = view.stop_button
    assert view.header_row.children == (view.header, button)  # right of the title line, in its row
    assert view.children[1] is view.header_row
    assert view.header_row.layout.justify_content is None  # not pushed to the far right
    assert {"nts-agent-stop", "nts-btn-danger"} <= set(button._dom_classes)
    assert button.button_style == ""  # theme-coloured by the panel CSS, not white on light red
    assert (button.layout.height, button.layout.width) == ("24px", "auto")
    assert "nts-panel" in view._dom_classes and "button.nts-btn-danger" in view.style_html.value
    button.click()
    assert stopped == [True]
    play_to_the_end(view, "aborted_tools", "tool_use")
    assert button.disabled and button.layout.display == "none"  # nothing to stop any more


def test_the_views_own_html_uses_theme_colours_only():
    from nbtoolsched._events import StreamFailed

    view, _ = bare_view()
    view.start("scripted")
    view.on_event(StreamFailed(turn=1, error_kind="stream_error", message="cut", will_retry=True))
    play_to_the_end(view, "model_error", None)
    view.fail("RuntimeError: a bug")
    view.render()
    shown = [view.snapshot_html(), view.header.value, view.footer.value, html_of(view.body)]
    colours = [c for markup in shown for c in text_colours(markup)]
    assert colours and all(c.startswith("var(--jp-") for c in colours), colours
    assert not re.search(r"(?<![-\w])color:\s*(#000|#fff|black|white)", "".join(shown))


async def test_a_waiting_edit_in_a_named_cell(shell, project):
    """--name titles the view; the Edit's diff is relative to the session's cwd; the snapshot says what waits."""
    (project / "src").mkdir()
    target = project / "src" / "util.py"
    target.write_text("def answer():\n    return 1\n")
    path = str(target)
    shell.run_cell("from nbtoolsched.models import ScriptedModel, Turn, text, tool_use\n"
                   f"m = ScriptedModel([Turn([text('I will fix **util.py**.'), tool_use('Read', file_path={path!r}),"
                   f" tool_use('Edit', file_path={path!r}, old_string='    return 1', new_string='    return 42')]),"
                   " 'Fixed.'])")
    shell.run_cell("%%agent --model m --name fix\nfix the answer")
    cell = shell.user_ns["fix"]
    view = cell.view
    await wait_for(lambda: view.panels and view.panels[0]._asking, what="the Edit's approval prompt")
    panel = view.panels[0]
    key = next(iter(panel._asking))

    # 1. the diff's paths are relative to the cwd the tools use, not a//<absolute path>
    from nbtoolsched.notebook._preview import would_be_diff

    assert panel.cwd == agent_of(shell).context.cwd != "."
    diff, _note = would_be_diff("Edit", panel.approval_row(key).request.input, panel.cwd)  # what the prompt shows
    assert diff.startswith("--- a/src/util.py\n+++ b/src/util.py\n")
    assert "a//" not in html_of(panel.approval_row(key))

    # 2. the name given with --name is the title
    assert view.title == "%%agent fix" and "<b>%%agent fix</b>" in view.header.value
    assert cell.text().startswith("%%agent fix: waiting for approval")

    # 5. said once: the turn's panel has no Stop, style block or frame of its own inside the view
    assert "nts-agent-turn" in panel._dom_classes
    assert panel.nested and panel.stop_button.layout.display == "none"  # the view's Stop ends the same turn
    assert panel.style_html.layout.display == "none" and panel.layout.border == "none"
    assert view.style_html.value.count("nts-gone") >= 1 and view.style_html.layout.display != "none"

    # 6. the snapshot: the text so far, each call and its state, what waits for approval
    snap = view.snapshot_html()
    seen = visible(snap)
    assert "<strong>util.py</strong>" in snap and "I will fix util.py." in seen
    assert "%%agent fix" in seen and "waiting for approval" in seen
    assert 'data-state="completed"' in snap and 'data-state="awaiting_approval"' in snap
    assert 'data-live="true"' in snap and "nts-agent-record" not in snap
    assert all(c.startswith("var(--jp-") for c in text_colours(snap)), text_colours(snap)

    threading.Thread(target=panel.approval_row(key).allow_button.click).start()
    result = await finish(cell)
    assert result.final_text == "Fixed." and "return 42" in target.read_text()
    await wait_for(lambda: view.record.final is not None, what="the record")
    record = view.snapshot_html()
    assert record == view.record_html() and record in view.record.final["text/html"]
    assert 'data-live="false"' in record and "nts-agent-record" in record
    seen = visible(record)
    assert seen.startswith("%%agent fix · scripted · 2 turns · finished") and "end_turn" not in seen
    assert "nts-agent-done" not in record and view.footer.value == ""  # no footer repeating the header


async def test_a_cell_without_a_name_is_numbered(shell, project):
    shell.run_cell("from nbtoolsched.models import ScriptedModel\nm = ScriptedModel(['one', 'two'])")
    first = shell.run_cell("%%agent --model m\nhello").result
    await finish(first)
    assert first.view.title == "%%agent #1" and first.text() == "%%agent #1: finished\n  one"
