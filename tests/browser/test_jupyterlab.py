"""JupyterLab in headless Chromium: approve and deny inside the panel, see results and a diff.

Runs a real JupyterLab (127.0.0.1, random port, no token, temp root) and Debian's
chromium through Playwright, once with comms over subshells (JupyterLab's default) and
once with them disabled. Without chromium it skips, saying how to enable it; with
NBTOOLSCHED_BROWSER_TESTS=required (as .ci/run sets) it fails instead.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

CHROMIUM = os.environ.get("NBTOOLSCHED_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
REQUIRED = os.environ.get("NBTOOLSCHED_BROWSER_TESTS", "").lower() == "required"
HOW = ("install Debian's chromium (apt-get install chromium) and the dev extras (pip install -e '.[dev]'); "
       "set NBTOOLSCHED_BROWSER_TESTS=required to make a missing browser a failure")
WAIT = 90_000  # ms: generous, for a busy 2-core machine

pytestmark = pytest.mark.timeout(400)


def _unavailable() -> str | None:
    if not Path(CHROMIUM).exists():
        return f"chromium not found at {CHROMIUM}"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError as err:
        return f"playwright is not installed ({err})"
    try:
        import jupyterlab  # noqa: F401
    except ImportError as err:
        return f"jupyterlab is not installed ({err})"
    return None


@pytest.fixture(scope="module", autouse=True)
def browser_available():
    problem = _unavailable()
    if problem is None:
        return
    if REQUIRED:
        pytest.fail(f"the browser test must run here (NBTOOLSCHED_BROWSER_TESTS=required) but cannot: {problem}")
    pytest.skip(f"browser test skipped: {problem}; to run it, {HOW}")


SETUP = '''%load_ext nbtoolsched
import nbtoolsched as nts
from nbtoolsched.models import ScriptedModel, tool_use

@nts.tool(concurrency_safe=True)
async def touch(name: str) -> str:
    """Create an empty file (not read-only, so every call asks)."""
    open(name, "w").close()
    return "made " + name

model = ScriptedModel([[tool_use("Write", file_path="notes.txt", content="hello from the overlay\\n")], "done"])'''
TOOLCALL = "%%toolcall --name run\n- touch: {name: allowed.txt}\n- touch: {name: denied.txt}"
SPECULATE = '%toolsched mode acceptEdits\n%speculate --model model "write the notes"'
SUBSHELLS = "print('subshells:', len(get_ipython().kernel.shell_channel_thread.manager.list_subshell()))"


def _notebook(path: Path) -> None:
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) for src in (SETUP, TOOLCALL, SPECULATE, SUBSHELLS)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, str(path))


def _settings(settings_dir: Path, comms: str) -> None:
    for plugin, values in {
        "@jupyterlab/apputils-extension/kernels-settings": {"commsOverSubshells": comms},
        "@jupyterlab/apputils-extension/notification": {"fetchNews": "false", "checkForUpdates": False},
    }.items():
        target = settings_dir / f"{plugin}.jupyterlab-settings"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(values))


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _start_lab(root: Path, comms: str) -> tuple[subprocess.Popen[bytes], str, Path]:
    home = root.parent / "lab-home"
    _settings(home / "settings", comms)
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if k != "NBTOOLSCHED_APPROVAL"}
    env.update(JUPYTERLAB_SETTINGS_DIR=str(home / "settings"), JUPYTERLAB_WORKSPACES_DIR=str(home / "workspaces"),
               JUPYTER_RUNTIME_DIR=str(home / "runtime"), CLAUDE_CONFIG_DIR=str(home / "claude"))
    log = home / "lab.log"
    cmd = [sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
           "--ServerApp.port_retries=0", "--IdentityProvider.token=", "--ServerApp.password=",
           "--ServerApp.disable_check_xsrf=True", f"--ServerApp.root_dir={root}", "--allow-root"]
    proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    _wait_for_server(proc, url, log)
    return proc, url, log


def _wait_for_server(proc: subprocess.Popen[bytes], url: str, log: Path) -> None:
    import httpx

    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"jupyter lab exited with {proc.returncode}:\n{log.read_text()[-3000:]}")
        try:
            if httpx.get(f"{url}/api/status", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.3)
    raise AssertionError(f"jupyter lab did not start within 120 s:\n{log.read_text()[-3000:]}")


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, 15)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            proc.wait(timeout=10)


@pytest.mark.parametrize("comms", ["perCommTarget", "disabled"])
def test_approve_deny_results_and_overlay_diff_in_jupyterlab(tmp_path, comms):
    from playwright.sync_api import expect, sync_playwright

    expect.set_options(timeout=WAIT)

    root = tmp_path / "root"
    root.mkdir()
    _notebook(root / "demo.ipynb")
    proc, url, log = _start_lab(root, comms)
    try:
        with sync_playwright() as pw:
            context = pw.chromium.launch_persistent_context(
                str(tmp_path / "chromium-profile"),  # a fresh --user-data-dir
                executable_path=CHROMIUM, headless=True, viewport={"width": 1400, "height": 1000},
                args=["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                      "--disable-background-networking", "--disable-component-update", "--disable-sync"],
            )
            page = context.pages[0] if context.pages else context.new_page()
            try:
                page.set_default_timeout(WAIT)
                _drive(page, expect, url, root, comms)
            except Exception:
                page.screenshot(path=str(tmp_path / "failure.png"))
                raise
            finally:
                context.close()
    except Exception as err:
        raise AssertionError(f"{err}\n--- jupyter lab log (tail) ---\n{log.read_text()[-2000:]}") from err
    finally:
        _stop(proc)


def _snapshot(locator, name: str) -> None:
    """Pictures for the docs: NBTOOLSCHED_SCREENSHOT_DIR=docs saves what a person sees here."""
    folder = os.environ.get("NBTOOLSCHED_SCREENSHOT_DIR")
    if folder:
        locator.screenshot(path=str(Path(folder) / name))


def _run_cell(page, cell) -> None:
    """Select the cell in command mode and run it (Shift+Enter), as a person would."""
    cell.locator(".jp-InputArea-editor").click()
    page.keyboard.press("Escape")
    page.keyboard.press("Shift+Enter")


def _drive(page, expect, url: str, root: Path, comms: str) -> None:
    page.goto(f"{url}/lab/tree/demo.ipynb")
    expect(page.locator("#jp-main-statusbar")).to_contain_text("Idle", timeout=120_000)
    cells = page.locator(".jp-NotebookPanel-notebook .jp-Cell")
    expect(cells).to_have_count(4)

    # 1: load the extension (a cell that returns)
    _run_cell(page, cells.nth(0))
    expect(cells.nth(0).locator(".jp-OutputArea")).to_contain_text("nbtoolsched:")

    # 2: a batch whose two calls both wait for approval: rows show up, then update
    _run_cell(page, cells.nth(1))
    panel = cells.nth(1).locator(".nts-panel")
    asking = panel.locator(".nts-approval")
    expect(asking).to_have_count(2)
    expect(asking.nth(0)).to_contain_text("awaiting approval")
    expect(panel.locator("button.nts-approve-all")).to_contain_text("Approve all 2")
    _snapshot(cells.nth(1), "approvals.png")

    asking.nth(0).locator("button.nts-allow").click()
    expect(panel.locator('.nts-row[data-id="toolu_nb_0001"][data-state="completed"]')).to_have_count(1)
    expect(asking).to_have_count(1)  # the other call still waits
    asking.nth(0).locator("button.nts-deny").click()
    expect(panel.locator('.nts-row[data-id="toolu_nb_0002"][data-state="denied"]')).to_have_count(1)
    expect(panel).to_contain_text("finished")
    _snapshot(cells.nth(1), "panel.png")

    picker = panel.locator("select")
    picker.select_option(label="1. touch (completed)")
    expect(panel.locator(".nts-result")).to_contain_text("made allowed.txt")
    picker.select_option(label="2. touch (denied)")
    expect(panel.locator(".nts-result")).to_contain_text("rejected")
    assert (root / "allowed.txt").exists() and not (root / "denied.txt").exists()

    # 3: a speculation: the overlay diff, then Accept writes it for real
    _run_cell(page, cells.nth(2))
    view = cells.nth(2).locator(".nts-diff-view")
    expect(view.locator(".nts-diff")).to_contain_text("hello from the overlay")
    expect(view).to_contain_text("created")
    _snapshot(cells.nth(2), "diff.png")
    assert not (root / "notes.txt").exists()
    view.locator("button.nts-accept").click()
    expect(view.locator(".nts-spec-status")).to_have_text("accepted")
    assert (root / "notes.txt").read_text() == "hello from the overlay\n"

    # 4: the setting really took effect: JupyterLab opened comm subshells only when asked to
    _run_cell(page, cells.nth(3))
    expect(cells.nth(3).locator(".jp-OutputArea")).to_contain_text("subshells:")
    count = int(cells.nth(3).locator(".jp-OutputArea").inner_text().split("subshells:")[1].split()[0])
    assert (count > 0) == (comms != "disabled"), (comms, count)
