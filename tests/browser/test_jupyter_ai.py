"""Jupyter AI in headless Chromium: ``@nbtoolsched`` in a chat is answered by ``python -m nbtoolsched acp``.

A real JupyterLab with jupyter-ai, whose persona manager finds nbtoolsched through the
``jupyter_ai.personas`` entry point, on a temp project: a file to edit, notes to read, and a
``.claude/settings.json`` whose default mode is acceptEdits but whose ask rule names the file,
so the Edit asks only because the project's rules say so. The model is scripted (the persona
passes NBTOOLSCHED_ACP_SCRIPT on as ``--script``): a sentence, two Reads in one batch, an Edit,
a last Markdown sentence. A person mentions the persona in the chat input and sends the
prompt; the test sees the sentence arrive in pieces, the two Reads done, the Edit waiting with
its diff and Jupyter AI's Allow once / Always allow / Reject buttons while the file is still as
it was, clicks Allow once, and sees the file change on disk, the Edit done and the reply end.
It waits on the page, never on time. NBTOOLSCHED_SCREENSHOT_DIR=docs saves the pictures
docs/jupyter-ai.md shows. Same server setup and skips as test_jupyterlab.py; without jupyter-ai
installed it skips (fails under NBTOOLSCHED_BROWSER_TESTS=required).
"""

from __future__ import annotations

import json
import os
import re
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from .test_jupyterlab import REQUIRED, WAIT, _free_port, browser_available, lab_page  # noqa: F401  (autouse fixture)

pytestmark = [pytest.mark.timeout(240)]

APP = "def answer():\n    return 1\n"
FIRST = "I'll read the code and the notes first."
SCRIPT = {"name": "chat-demo", "turns": [
    {"blocks": [FIRST,
                {"type": "tool_use", "name": "Read", "input": {"file_path": "src/app.py"}},
                {"type": "tool_use", "name": "Read", "input": {"file_path": "NOTES.md"}}],
     "text_deltas": 8, "delay_per_delta": 0.1},  # the sentence in eight pieces, a tenth of a second apart
    {"blocks": ["The notes want 2, so:",
                {"type": "tool_use", "name": "Edit",
                 "input": {"file_path": "src/app.py", "old_string": "return 1", "new_string": "return 2"}}]},
    {"blocks": ["Done: `answer()` now returns **2**."], "text_deltas": 4, "delay_per_delta": 0.05},
]}
SETTINGS = {"permissions": {"defaultMode": "acceptEdits", "ask": ["Edit(/src/app.py)"]}}
# Every distinct state of the chat's rendered messages, recorded as the page changes, so
# the test can tell afterwards that the first sentence was seen growing.
RECORD_JS = """() => { window.__ntsSeen = []; let last = null;
  const snap = () => { const texts = Array.from(document.querySelectorAll(
      '.jp-chat-messages-container .jp-chat-rendered-message')).map(e => e.textContent.trim());
    const key = JSON.stringify(texts); if (key !== last) { last = key; window.__ntsSeen.push(texts); } };
  new MutationObserver(snap).observe(document.querySelector('.jp-chat-messages-container'),
                                     {subtree: true, childList: true, characterData: true}); }"""


@pytest.fixture(scope="module", autouse=True)
def jupyter_ai_available(browser_available):  # noqa: F811 - after the browser check
    try:
        import jupyter_ai_acp_client  # noqa: F401
    except ImportError as err:
        if REQUIRED:
            pytest.fail(f"the Jupyter AI test must run here (NBTOOLSCHED_BROWSER_TESTS=required) but cannot: {err}")
        pytest.skip(f"Jupyter AI test skipped: jupyter-ai is not installed ({err}); pip install -e '.[dev]'")
    found = [ep.value for ep in entry_points(group="jupyter_ai.personas") if ep.name == "nbtoolsched"]
    assert found == ["nbtoolsched.notebook._persona:NbtoolschedPersona"], (
        f"the persona's entry point is {found}: reinstall the package (pip install -e . --no-deps)")


def _project(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text(APP)
    (root / "NOTES.md").write_text("answer() should return 2.\n")
    (root / ".claude").mkdir()
    (root / ".claude" / "settings.json").write_text(json.dumps(SETTINGS))
    (root / "chat.chat").write_text("{}")  # an empty Jupyter chat
    return root


def test_nbtoolsched_answers_in_a_jupyter_ai_chat_and_asks_before_its_edit(tmp_path, monkeypatch):
    from playwright.sync_api import expect

    expect.set_options(timeout=WAIT)
    root = _project(tmp_path)
    script = tmp_path / "script.json"
    script.write_text(json.dumps(SCRIPT))
    for name in ("NBTOOLSCHED_ACP_MODEL", "NBTOOLSCHED_ACP_OPENAI_BASE_URL", "NBTOOLSCHED_ACP_PERMISSION_MODE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NBTOOLSCHED_ACP_SCRIPT", str(script))  # read by the server's persona: the lab inherits it
    monkeypatch.setenv("NBTOOLSCHED_ACP_SESSION_DIR", str(tmp_path / "sessions"))
    mcp = f"--MCPExtensionApp.mcp_port={_free_port()}"  # Jupyter's own MCP server, which the chat hands the agent
    with lab_page(tmp_path, root, "perCommTarget", viewport=(1200, 900), server_args=[mcp]) as (page, url):
        _drive(page, expect, url, root, _Shots())
    transcripts = list((tmp_path / "sessions").rglob("*.jsonl"))
    assert len(transcripts) == 1, transcripts  # one chat, one nbtoolsched session, written as Claude Code writes them
    results = [block for line in transcripts[0].read_text().splitlines() for block in _tool_results(json.loads(line))]
    assert len(results) == 3 and not any(block.get("is_error") for block in results), results


def test_without_a_model_the_chat_says_how_to_pick_one(tmp_path, monkeypatch):
    from playwright.sync_api import expect

    expect.set_options(timeout=WAIT)
    root = _project(tmp_path)
    for name in ("NBTOOLSCHED_ACP_SCRIPT", "NBTOOLSCHED_ACP_MODEL", "NBTOOLSCHED_ACP_OPENAI_BASE_URL",
                 "NBTOOLSCHED_ACP_PERMISSION_MODE", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NBTOOLSCHED_ACP_SESSION_DIR", str(tmp_path / "sessions"))
    mcp = f"--MCPExtensionApp.mcp_port={_free_port()}"
    with lab_page(tmp_path, root, "perCommTarget", viewport=(1200, 900), server_args=[mcp]) as (page, url):
        page.goto(f"{url}/lab/tree/chat.chat")
        chat = page.locator(".jp-lab-chat-main-panel")
        expect(chat.locator(".jp-chat-input-toolbar .jp-jai-personaControls-persona")).to_have_text("nbtoolsched")
        chat.locator(".jp-chat-input-container textarea[role=combobox]").click()
        page.keyboard.type("@nbtoolsched hello")
        page.keyboard.press("Enter")
        # The agent starts (Claude is the default model) and refuses the session: no key (ACP's
        # "authentication required"). The persona says so, and the ways to pick a model, not a traceback.
        reply = chat.locator(".jp-chat-messages-container .jp-chat-rendered-message").nth(1)
        expect(reply).to_contain_text("nbtoolsched could not use its model")
        expect(reply).to_contain_text("no ANTHROPIC_API_KEY")
        for variable in ("ANTHROPIC_API_KEY", "NBTOOLSCHED_ACP_MODEL", "NBTOOLSCHED_ACP_OPENAI_BASE_URL", "NBTOOLSCHED_ACP_SCRIPT"):
            expect(reply.locator("code", has_text=variable).first).to_be_visible()
        expect(chat.locator(".jp-jai-error-details")).to_have_count(0)
        expect(chat.locator(".jp-chat-input-toolbar button.jp-jai-stopButton")).to_be_disabled()
    assert (root / "src" / "app.py").read_text() == APP


class _Shots:
    """The docs' pictures, when NBTOOLSCHED_SCREENSHOT_DIR names a folder."""

    def __init__(self) -> None:
        self.folder = os.environ.get("NBTOOLSCHED_SCREENSHOT_DIR")

    def take(self, locator, name: str) -> None:
        if self.folder:
            locator.screenshot(path=str(Path(self.folder) / name), animations="disabled")


def _drive(page, expect, url: str, root: Path, shots: _Shots) -> None:
    page.goto(f"{url}/lab/tree/chat.chat")
    chat = page.locator(".jp-lab-chat-main-panel")
    toolbar = chat.locator(".jp-chat-input-toolbar")
    # The persona is offered, with its avatar, and its session is up: the mode picker shows the
    # project's defaultMode, which only nbtoolsched's session (reading .claude/settings.json) knows.
    expect(toolbar.locator(".jp-jai-personaControls-persona")).to_have_text("nbtoolsched")
    expect(toolbar.locator('button[title="Mode"]:visible')).to_have_text("Accept edits")
    avatar = toolbar.locator("img.jp-jai-personaControls-avatar")
    expect(avatar).to_have_attribute("src", "/api/ai/avatars/jupyter-ai-personas%3A%3Anbtoolsched%3A%3ANbtoolschedPersona")
    page.wait_for_function("(img) => img.complete && img.naturalWidth > 0", arg=avatar.element_handle())

    page.evaluate(RECORD_JS)
    box = chat.locator(".jp-chat-input-container textarea[role=combobox]")
    box.click()
    # Jupyter AI 3.2 sends a message to the persona its picker names (shown above); the mention
    # says so in the text, as a person writes it.
    page.keyboard.type("@nbtoolsched make answer() follow the notes")
    page.keyboard.press("Enter")

    messages = chat.locator(".jp-chat-messages-container")
    expect(messages.locator(".jp-chat-rendered-message").first).to_contain_text("@nbtoolsched make answer() follow the notes")
    reads = messages.locator(".jp-jupyter-ai-acp-client-tool-calls").first.locator(".jp-jupyter-ai-acp-client-tool-call")
    expect(reads.locator("summary")).to_have_text(["✓ Read src/app.py", "✓ Read NOTES.md"])  # one batch, both done
    expect(reads.and_(page.locator(".jp-jupyter-ai-acp-client-tool-call-completed"))).to_have_count(2)

    # The Edit waits for a person: its diff, Jupyter AI's buttons for nbtoolsched's three options.
    edit = messages.locator(".jp-jupyter-ai-acp-client-tool-call", has_text="Edit src/app.py")
    expect(edit.locator(".jp-jupyter-ai-acp-client-diff-removed")).to_have_text("-     return 1")
    expect(edit.locator(".jp-jupyter-ai-acp-client-diff-added")).to_have_text("+     return 2")
    buttons = edit.locator(".jp-jupyter-ai-acp-client-permission-btn")
    expect(buttons).to_have_text(["Allow once", "Always allow", "Reject"])
    assert (root / "src" / "app.py").read_text() == APP  # nothing written before the answer
    shots.take(chat, "jupyter-ai-approval.png")
    edit.locator(".jp-jupyter-ai-acp-client-permission-btn-allow-once").click()

    expect(edit.locator(".jp-jupyter-ai-acp-client-permission-btn")).to_have_count(0)
    expect(edit).to_have_class(re.compile(r"\bjp-jupyter-ai-acp-client-tool-call-completed\b"))
    expect(edit.locator("summary")).to_have_text("✓ Edit src/app.py — Allow once")  # the answer, on its line
    final = messages.locator(".jp-chat-rendered-message").last
    expect(final).to_have_text("Done: answer() now returns 2.")
    expect(final.locator("code")).to_have_text("answer()")  # Markdown, rendered by the chat
    expect(final.locator("strong")).to_have_text("2")
    expect(toolbar.locator("button.jp-jai-stopButton")).to_be_disabled()  # the reply is over
    expect(chat.locator(".jp-chat-writers")).not_to_contain_text("typing")
    assert (root / "src" / "app.py").read_text() == "def answer():\n    return 2\n"
    assert not (root / ".claude" / "settings.local.json").exists()  # allowed once: no rule saved
    shots.take(chat, "jupyter-ai-done.png")

    seen = page.evaluate("() => window.__ntsSeen")
    growing = {texts[1] for texts in seen if len(texts) > 1 and texts[1] != FIRST and FIRST.startswith(texts[1]) and texts[1]}
    assert len(growing) >= 2, f"the first sentence was not seen arriving in pieces: {seen[:12]}"


def _tool_results(entry: dict) -> list[dict]:
    content = (entry.get("message") or {}).get("content")
    return [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"] if isinstance(content, list) else []
