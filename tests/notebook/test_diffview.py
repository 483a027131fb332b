"""The %speculate diff view: numbered, word-marked, folded diffs; per-file Accept and Reject
against a real overlay; records that say what really happened; a snapshot at any time.

Diffs are the overlay's own (``unified_diff``) or those of a real speculation; the view
runs on a real UI pump and hand-over, and its clicks go through its real buttons.
"""

from __future__ import annotations

import asyncio
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

import nbtoolsched as nts
from nbtoolsched._tasks import TaskOwner
from nbtoolsched.notebook._diffrender import file_diff_html, parse_diff
from nbtoolsched.notebook._diffview import DiffView, file_summary_html
from nbtoolsched.notebook._render import plural
from nbtoolsched.notebook._pump import Handoff, UIPump
from nbtoolsched.notebook._speculate import ContinuingSpeculation
from nbtoolsched.speculation import FileChange, ScriptedTurn, start_speculation
from nbtoolsched.speculation._overlay import unified_diff
from tests.speculation.conftest import loop, make_registry, text, use

from .conftest import wait_for


# -- reading the HTML back --------------------------------------------------------------------------------
class _Rows(HTMLParser):
    """Each diff line as (old number, new number, sign, text), the folds' summaries, and
    whether each line sits inside a closed fold."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[dict[str, Any]] = []
        self.folds: list[str] = []
        self._stack: list[tuple[str, set[str]]] = []
        self._cell: str | None = None
        self._row: dict[str, Any] | None = None
        self._in_summary = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        classes = set((dict(attrs).get("class") or "").split())
        self._stack.append((tag, classes))
        if "nts-line" in classes and "nts-line-marker" not in classes:
            folded = any("nts-fold" in c for t, c in self._stack[:-1] if t == "details")
            self._row = {"cells": [], "sign": "", "text": "", "kind": next(c for c in classes if c.startswith("nts-line-")),
                         "folded": folded}
            self.rows.append(self._row)
        if self._row is not None and ("nts-ln" in classes or "nts-sign" in classes or "nts-code" in classes):
            self._cell = "ln" if "nts-ln" in classes else "sign" if "nts-sign" in classes else "code"
            if self._cell == "ln":
                self._row["cells"].append("")
        if tag == "summary" and any("nts-fold" in c for t, c in self._stack[:-1] if t == "details"):
            self._in_summary = True
            self.folds.append("")

    def handle_endtag(self, tag: str) -> None:
        while self._stack:
            name, classes = self._stack.pop()
            if self._cell and ({"nts-ln", "nts-sign", "nts-code"} & classes):
                self._cell = None
            if "nts-line" in classes:
                self._row = None
            if name == "summary":
                self._in_summary = False
            if name == tag:
                break

    def handle_data(self, data: str) -> None:
        if self._in_summary:
            self.folds[-1] += data
        if self._row is None or self._cell is None:
            return
        if self._cell == "ln":
            self._row["cells"][-1] += data
        elif self._cell == "sign":
            self._row["sign"] += data
        else:
            self._row["text"] += data


def rows_of(markup: str) -> _Rows:
    parser = _Rows()
    parser.feed(markup)
    return parser


def shown(parser: _Rows) -> list[tuple[str, str, str, str]]:
    """(old, new, sign, text) of the lines not hidden in a fold."""
    return [(r["cells"][0], r["cells"][1], r["sign"].strip(), r["text"]) for r in parser.rows if not r["folded"]]


def text_of(markup: str) -> str:
    """The visible words of an HTML fragment, spaces collapsed."""
    return " ".join(re.sub(r"<[^>]+>", " ", markup).replace("&gt;", ">").replace("&lt;", "<").split())


OLD = "".join(f"line {n}\n" for n in range(1, 31))


def modified(old: str, new: str, rel: str = "src/util.py") -> str:
    diff, binary = unified_diff(rel, old.encode(), new.encode())
    assert not binary
    return diff


# -- the diff -------------------------------------------------------------------------------------------------
def test_old_and_new_line_numbers_and_the_stretches_between_hunks_fold():
    new = OLD.replace("line 5\n", "line five\nline 5b\n").replace("line 25\n", "line twenty-five\n")
    diff = modified(OLD, new)
    parser = rows_of(file_diff_html(diff, OLD.splitlines()))
    lines = shown(parser)
    assert ("5", "", "-", "line 5") in lines and ("", "5", "+", "line five") and ("", "6", "+", "line 5b") in lines
    assert ("4", "4", "", "line 4") in lines and ("8", "9", "", "line 8") in lines  # context: both numbers, shifted after
    assert ("25", "", "-", "line 25") in lines and ("", "26", "+", "line twenty-five") in lines
    # lines 9..21 (new 10..22) lie between the hunks: folded, there to open without a kernel
    folded = [(r["cells"][0], r["cells"][1], r["text"]) for r in parser.rows if r["folded"]]
    assert folded[0] == ("9", "10", "line 9") and ("21", "22", "line 21") in folded
    assert "⋯ 13 unchanged lines (old 9–21, new 10–22)" in parser.folds
    # the last two lines follow the last hunk's context: shown, not folded (too few to fold)
    assert lines[-1] == ("30", "31", "", "line 30")
    # line 1, before the first hunk's context, is shown as it is: one line is not worth a fold
    assert lines[0] == ("1", "1", "", "line 1") and len(parser.folds) == 1


def test_without_the_old_file_the_stretches_are_counted_not_invented():
    new = OLD.replace("line 5\n", "line five\n").replace("line 25\n", "line 25!\n")
    diff = modified(OLD, new)
    markup = file_diff_html(diff)
    assert "⋯ 13 unchanged lines (9–21) not shown" in text_of(markup)
    assert "line 9" not in markup and "line 15" not in markup
    # a file that no longer matches the diff is not used either
    assert file_diff_html(diff, ("something else\n" * 30).splitlines()) == markup


def test_changed_words_are_marked_inside_the_paired_lines():
    old = "def add(a, b):\n    return a - b\n"
    new = "def add(a, b):\n    return a + b\n"
    markup = file_diff_html(modified(old, new, "calc.py"))
    removed = re.findall(r'<span class="nts-word-removed"[^>]*>([^<]*)</span>', markup)
    added = re.findall(r'<span class="nts-word-added"[^>]*>([^<]*)</span>', markup)
    assert removed == ["-"] and added == ["+"]  # only the changed word, not the line
    lines = shown(rows_of(markup))
    assert ("2", "", "-", "    return a - b") in lines and ("", "2", "+", "    return a + b") in lines
    # lines with nothing in common get no word marks (the line tint says it all)
    other = file_diff_html(modified("alpha beta gamma\n", "1234 %%%% zz\n", "x.txt"))
    assert "nts-word-" not in other


def test_a_long_unchanged_run_inside_a_hunk_folds_its_middle():
    before = "".join(f"keep {n}\n" for n in range(1, 21))
    after = before.replace("keep 1\n", "first\n").replace("keep 20\n", "last\n")
    import difflib

    diff = "".join(difflib.unified_diff(before.splitlines(True), after.splitlines(True), "a/k", "b/k", n=20))
    parser = rows_of(file_diff_html(diff))
    assert "⋯ 12 unchanged lines (5–16)" in parser.folds
    visible = [r[3] for r in shown(parser)]
    assert visible == ["keep 1", "first", "keep 2", "keep 3", "keep 4", "keep 17", "keep 18", "keep 19", "keep 20", "last"]


def test_created_files_no_newline_markers_and_notes():
    diff, _ = unified_diff("n.txt", None, b"one\ntwo")
    parsed = parse_diff(diff)
    assert (parsed.added, parsed.removed) == (2, 0)
    markup = file_diff_html(diff)
    assert shown(rows_of(markup)) == [("", "1", "+", "one"), ("", "2", "+", "two")]
    assert "\\ No newline at end of file" in text_of(markup)
    assert "folder deleted" in text_of(file_diff_html("folder deleted\n"))
    assert file_diff_html("") == ""


def test_the_summary_line_and_plurals():
    new = OLD.replace("line 5\n", "line five\nline 5b\nline 5c\n")
    change = FileChange("src/util.py", "modified", modified(OLD, new))
    assert text_of(file_summary_html(change)) == "M src/util.py +3 −1"
    created = FileChange("TODO.md", "created", unified_diff("TODO.md", None, b"- one\n")[0])
    assert text_of(file_summary_html(created)) == "A TODO.md +1 −0"
    assert text_of(file_summary_html(created, "rejected")) == "A TODO.md +1 −0 rejected · not applied"
    assert [plural(n, "file") for n in (0, 1, 2)] == ["0 files", "1 file", "2 files"]


# -- the view on a real speculation ---------------------------------------------------------------------------
@pytest.fixture
def space(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    monkeypatch.setenv("NBTOOLSCHED_SANDBOX", "off")  # the path-rewriting overlay: quick, and the same accept rules
    project, session = tmp_path / "project", tmp_path / "session"
    (project / "src").mkdir(parents=True)
    (project / "src" / "app.py").write_text("def main():\n    return 1\n")
    session.mkdir()
    return {"project": project.resolve(), "session": session.resolve()}


@pytest.fixture
async def ui():
    loop = asyncio.get_running_loop()
    tasks = TaskOwner()
    pump = UIPump(loop, tasks=tasks)
    yield {"pump": pump, "handoff": Handoff(loop), "tasks": tasks}
    pump.close()
    await tasks.aclose()


SAID = "**Done.** I changed `main` and wrote the list.\n\n<script>alert(1)</script>"


def two_changes(said: str = SAID, delay: float = 0.0) -> Any:
    return loop(
        [use("Read", file_path="src/app.py")],
        [use("Edit", file_path="src/app.py", old_string="return 1", new_string="return 2"),
         use("Write", file_path="TODO.md", content="- ship it\n")],
        ScriptedTurn([text(said)], delay=delay),
    )


async def ready_view(space: dict[str, Path], ui: dict[str, Any], run: Any = None) -> DiffView:
    sched = nts.Scheduler(make_registry(), cwd=space["project"], session_dir=space["session"])
    spec = start_speculation("fix main and list what is left", run or two_changes(), scheduler=sched)
    view = DiffView(spec, pump=ui["pump"], handoff=ui["handoff"], tasks=ui["tasks"], mode="acceptEdits")
    await spec.wait()
    ui["pump"].mark(view)
    await wait_for(lambda: view.status == "ready" and view._changes is not None, what="the view to show the changes")
    return view


def file_div(markup: str, path: str) -> str:
    """The record's ``.nts-file`` of ``path``."""
    found = re.search(rf'<div class="nts-file" data-path="{re.escape(path)}".*?</details></div>', markup, re.S)
    assert found, f"no .nts-file for {path}"
    return found.group(0)


GREEN = "var(--jp-success-color1"


async def test_per_file_reject_then_accept_applies_only_the_accepted_file(space, ui):
    view = await ready_view(space, ui)
    project = space["project"]
    assert [c.path for c in view._changes] == ["TODO.md", "src/app.py"]
    header = view.header.value
    assert "2 files" in header and "waiting for Accept or Reject" in header
    view.click_file("TODO.md", "reject")
    await wait_for(lambda: view._decisions.get("TODO.md") == "reject", what="the file's decision")
    await wait_for(lambda: view.accept_button.description == "Accept 1 file", what="the Accept button to say what it applies")
    assert view.status == "ready" and not (project / "TODO.md").exists()  # nothing decided yet: one file left
    assert 'data-outcome="reject"' in view._rows["TODO.md"].html.value
    view.click_file("src/app.py", "accept")  # the last file decided: the speculation is decided
    await wait_for(lambda: view.record.final is not None, what="the final record")
    assert view.status == "accepted"
    assert (project / "src" / "app.py").read_text() == "def main():\n    return 2\n"
    assert not (project / "TODO.md").exists()
    final = view.record.final
    assert "1 file written, 1 rejected (not written)" in final["text/html"]
    todo = file_div(final["text/html"], "TODO.md")
    assert 'data-outcome="rejected"' in todo and "rejected · not applied" in todo and "line-through" in todo
    assert GREEN not in todo  # never shown in green, as if created
    assert " open" not in todo.split(">", 2)[1]  # a rejected file's diff is folded
    app = file_div(final["text/html"], "src/app.py")
    assert 'data-outcome="applied"' in app and ">applied<" in app
    assert "rejected TODO.md: not created" in final["text/plain"] and "created TODO.md" not in final["text/plain"]
    assert "modified src/app.py [applied]" in final["text/plain"]


async def test_a_rejected_speculation_records_that_nothing_was_applied(space, ui):
    view = await ready_view(space, ui)
    view.click("reject")
    await wait_for(lambda: view.record.final is not None, what="the final record")
    final = view.record.final
    assert view.status == "rejected" and not (space["project"] / "TODO.md").exists()
    assert '<span class="nts-spec-status" data-status="rejected">rejected</span>' in final["text/html"]
    assert "nothing was written" in final["text/html"]
    for path in ("TODO.md", "src/app.py"):
        shown_file = file_div(final["text/html"], path)
        assert 'data-outcome="rejected"' in shown_file and GREEN not in shown_file and "line-through" in shown_file
    assert ">applied<" not in final["text/html"] and "written," not in final["text/html"]
    assert "created TODO.md" not in final["text/plain"] and "rejected TODO.md: not created" in final["text/plain"]
    assert "running" not in final["text/plain"]


async def test_accept_with_one_file_rejected_keeps_the_rest_and_tells_the_conversation(space, ui):
    view = await ready_view(space, ui)
    kept: list[Any] = []

    class Conversation:
        def accept_speculation(self, suggestion: str, messages: list[dict[str, Any]]) -> None:
            kept.append((suggestion, messages))

    view.speculation = ContinuingSpeculation(view.speculation, Conversation())
    view.click_file("src/app.py", "reject")
    await wait_for(lambda: view.accept_button.description == "Accept 1 file", what="the Accept button")
    view.click("accept")
    await wait_for(lambda: view.record.final is not None, what="the final record")
    assert (space["project"] / "TODO.md").read_text() == "- ship it\n"
    assert (space["project"] / "src" / "app.py").read_text() == "def main():\n    return 1\n"
    [(suggestion, messages)] = kept
    assert suggestion == "fix main and list what is left"
    note = messages[-1]["content"][-1]["text"]
    assert messages[-1]["role"] == "user" and "src/app.py" in note and "not applied" in note


async def test_a_file_changed_on_disk_is_marked_and_rejecting_it_lets_the_others_through(space, ui):
    view = await ready_view(space, ui)
    project = space["project"]
    (project / "src" / "app.py").write_text("someone else's work\n")
    view.click("accept")
    await wait_for(lambda: view.status == "ready" and view._conflicts, what="accept to be refused")
    assert not (project / "TODO.md").exists()
    await wait_for(lambda: "1 file changed on disk meanwhile" in view.header.value, what="the header to say why")
    row = view._rows["src/app.py"].html.value
    assert "changed on disk" in row and "it changed on disk after the speculation copied it" in row
    assert "changed on disk" not in view._rows["TODO.md"].html.value
    view.click_file("src/app.py", "reject")
    view.click_file("TODO.md", "accept")
    await wait_for(lambda: view.record.final is not None, what="the final record")
    assert view.status == "accepted" and (project / "TODO.md").read_text() == "- ship it\n"
    assert (project / "src" / "app.py").read_text() == "someone else's work\n"


async def test_the_snapshot_shows_the_current_state_and_the_record_hears_of_each_change(space, ui):
    sched = nts.Scheduler(make_registry(), cwd=space["project"], session_dir=space["session"])
    spec = start_speculation("slow one", two_changes(delay=30), scheduler=sched)
    view = DiffView(spec, pump=ui["pump"], handoff=ui["handoff"], tasks=ui["tasks"], mode="acceptEdits")
    told: list[str] = []  # the snapshots the view asked its record to send at once
    refresh = view.record.refresh

    def spy(force: bool = False) -> None:
        if force:
            told.append(view.record.snapshot())
        refresh(force)

    view.record.refresh = spy  # type: ignore[method-assign]
    ui["pump"].mark(view)  # as start_view does: a running view re-renders on the pump's clock
    await wait_for(lambda: len(spec.transcript) >= 4, what="the edits")
    running = view.snapshot_html()
    assert 'class="nts-record nts-snapshot nts-diff-snapshot"' in running and ">running when saved<" in running
    assert "running…" not in running and "when the notebook was saved" in running
    spec.stop()
    await spec.wait()
    await wait_for(lambda: view.status == "ready" and view._rows, what="the view to be ready")
    await wait_for(lambda: told and "waiting for Accept or Reject" in told[-1], what="the record to hear of it")
    waiting = view.snapshot_html()
    assert ">waiting for Accept or Reject when saved<" in waiting and "nts-diff-record" not in waiting
    assert "stopped from outside" in waiting  # where it stopped, not "running"
    assert "return 2" in text_of(waiting) and waiting.count('<div class="nts-file"') == 2  # the diff, without a kernel
    assert "button" not in waiting  # static: nothing to click
    count = len(told)
    view.click_file("TODO.md", "reject")
    await wait_for(lambda: len(told) > count, what="the record to hear of the decision")
    assert 'data-outcome="reject"' in told[-1] and "of 2 files: 1 rejected, 1 to decide" in told[-1]
    view.click("reject")
    await wait_for(lambda: view.record.final is not None, what="the final record")
    final = view.record.final["text/html"]
    assert view.snapshot_html() in final and 'class="nts-record nts-diff-record"' in final


async def test_the_models_words_are_markdown_with_raw_html_escaped(space, ui):
    view = await ready_view(space, ui)
    header = view.header.value
    assert "<strong>Done.</strong>" in header and "<code>main</code>" in header
    assert "<script>" not in header and "&lt;script&gt;" in header
    assert 'class="nts-spec-text"' in header


async def test_every_colour_comes_from_the_theme_or_is_a_translucent_tint(space, ui):
    view = await ready_view(space, ui)
    view.click_file("TODO.md", "reject")
    await wait_for(lambda: 'data-outcome="reject"' in view._rows["TODO.md"].html.value, what="the decision")
    markup = view.header.value + view.commands.value + view.files.value + view.snapshot_html()
    colours = re.findall(r'(?<![-\w])color:\s*([^;"]+)', markup)
    assert colours and all(c.startswith("var(--jp-") for c in colours), sorted(set(colours))
    backgrounds = re.findall(r'(?<![-\w])background:\s*([^;"]+)', markup)
    assert all(b.startswith(("var(--jp-", "rgba(", "transparent")) for b in backgrounds), sorted(set(backgrounds))
    assert not re.search(r"#(?:000|fff)(?:fff|000)?\b|(?<![-\w])(?:black|white)(?![-\w])", re.sub(r"var\([^)]*\)", "", markup))


async def test_no_change_means_no_accept_and_no_plural_slip(space, ui):
    view = await ready_view(space, ui, loop([use("Read", file_path="src/app.py")], [text("Nothing to do.")]))
    assert view._changes == [] and view.accept_button.disabled and not view.reject_button.disabled
    assert "0 files" in view.header.value and "no files would change" in view.files.value
