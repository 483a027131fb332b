"""``%replay`` in a notebook: the progress line is output a saved notebook keeps, and the
report is what the page shows.

A tqdm widget left "Error displaying widget: model not found" in a notebook reopened
without a kernel, and nbconvert saved "0%| 0/305" for a finished run. The progress line
is plain HTML with a text/plain twin, shown with a display id and updated in place (at
most about four times a second, and always at the end): the last published state is the
final one. Captured here with IPython's own display publisher in a real InteractiveShell.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from IPython.core.displaypub import CapturingDisplayPublisher
from IPython.core.interactiveshell import InteractiveShell

from nbtoolsched.scale import Policy, replay
from nbtoolsched.scale import _engines

TRANSCRIPTS = Path(__file__).resolve().parent.parent / "fixtures" / "transcripts"
FILES = [TRANSCRIPTS / "hand_parallel.jsonl", TRANSCRIPTS / "fasthooks_main.jsonl", TRANSCRIPTS / "hand_broken.jsonl"]
WIDGET = "application/vnd.jupyter.widget-view+json"


@pytest.fixture
def published(monkeypatch, tmp_path):
    """What ``display`` and ``update_display`` publish, in a shell taken for a notebook's kernel."""
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude-config"))
    monkeypatch.delenv("NBTOOLSCHED_APPROVAL", raising=False)
    ip = InteractiveShell.instance()
    capture = CapturingDisplayPublisher()
    monkeypatch.setattr(ip, "display_pub", capture)
    monkeypatch.setattr(_engines, "_in_notebook", lambda: True)
    return capture.outputs


def progress_outputs(outputs: list[dict]) -> list[dict]:
    return [o for o in outputs if "nbtoolsched-progress" in str((o.get("transient") or {}).get("display_id"))]


def test_a_finished_replay_leaves_its_final_state_as_plain_output(published):
    report = replay(FILES, Policy(name="current"), workers=1, progress=True)
    shown = progress_outputs(published)
    assert shown, "no progress line was displayed"
    first, last = shown[0], shown[-1]
    assert not first["update"] and last["update"]
    assert {o["transient"]["display_id"] for o in shown} == {first["transient"]["display_id"]}  # one line, updated in place
    for output in shown:
        assert set(output["data"]) == {"text/html", "text/plain"}, "plain HTML and text: no widget to lose"
        assert WIDGET not in output["data"]
    assert "0/3 sessions" in first["data"]["text/plain"]
    assert re.fullmatch(r"replay current: 3/3 sessions · \d+\.\d s", last["data"]["text/plain"])
    html = last["data"]["text/html"]
    assert re.search(r"3/3 sessions · \d+\.\d s", html) and "width:100.0%" in html and "stopped" not in html
    assert "var(--jp-content-font-color1" in html and "var(--jp-brand-color1" in html  # the theme's colours
    assert report.totals().sessions == 3


def test_updates_are_at_most_four_a_second_and_the_last_one_always_comes(published, monkeypatch):
    bar = _engines._Progress(100, True, "replay")
    for _ in range(100):
        bar.update(1)
    bar.close()
    shown = progress_outputs(published)
    # 100 updates within a fraction of a second: the first line, perhaps one update, the final one.
    assert 2 <= len(shown) <= 3 and "100/100 sessions" in shown[-1]["data"]["text/plain"]
    published.clear()
    monkeypatch.setattr(_engines._Progress, "INTERVAL", 3600.0)
    bar = _engines._Progress(5, True, "replay")
    for _ in range(5):
        bar.update(1)
    bar.close()
    assert [o["update"] for o in progress_outputs(published)] == [False, True]


def test_a_run_that_ends_short_says_it_stopped(published):
    bar = _engines._Progress(5, True, "replay")
    bar.update(2)
    bar.close()
    last = progress_outputs(published)[-1]["data"]
    assert "2/5 sessions" in last["text/plain"] and last["text/plain"].endswith("· stopped")
    assert "width:40.0%" in last["text/html"]


def test_a_terminal_gets_a_text_bar_and_no_display(monkeypatch, capsys):
    monkeypatch.setattr(_engines, "_in_notebook", lambda: False)
    bar = _engines._Progress(2, True, "replay")
    assert type(bar.bar).__module__ == "tqdm.std" and bar.display_id is None
    bar.update(2)
    bar.close()
    assert "2/2" in capsys.readouterr().err


def test_a_shell_without_a_kernel_is_not_a_notebook():
    InteractiveShell.instance()
    assert _engines._in_notebook() is False


@pytest.mark.heavy  # loads the extension in IPython
async def test_the_magic_shows_the_progress_line_then_the_report(published, tmp_path, monkeypatch):
    """Async: the notebook session the extension makes lives on a running loop."""
    monkeypatch.chdir(tmp_path)
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "nbtoolsched")
    try:
        result = ip.run_cell(f"%replay {FILES[0]} {FILES[1]} --name rep")
        assert result.error_in_exec is None
        shown = progress_outputs(published)
        assert "2/2 sessions" in shown[-1]["data"]["text/html"]
        page = ip.user_ns["rep"]._repr_html_()
        assert "2 sessions, 19 calls" in page and page.index("2 sessions") < page.index("<table")
    finally:
        ip.run_line_magic("unload_ext", "nbtoolsched")
