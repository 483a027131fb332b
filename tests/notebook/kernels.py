"""Real kernels for the kernel-level tests: one per ipykernel line whose comm handling differs.

ipykernel 6.x dispatches comms on the main shell only; 7.0-7.3 run comms sent to a
subshell on that subshell's thread; 7.4+ routes them back to the shell that last
published on the comm. The older ones live in throwaway venvs under ``.venvs/`` (git
ignored, built once and reused). Each sees this test run's own environment (the project
and ipywidgets) after its own packages, through a ``.pth`` file that adds this
environment's site folders. ``--system-site-packages`` would not do: when the suite runs
from a venv, as it does on any PEP 668 system, that inherits the *base* interpreter's
packages, which do not hold the project. A venv that cannot be built fails the test with
the reason; it never skips.
"""

from __future__ import annotations

import fcntl
import json
import os
import queue
import site
import subprocess
import sys
import sysconfig
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import pytest

ROOT = Path(__file__).resolve().parents[2]
VENVS = ROOT / ".venvs"
# variant -> (pip requirement or None for this interpreter, expected version prefix)
VARIANTS: dict[str, tuple[str | None, str]] = {
    "ipykernel-6.29.5": ("ipykernel==6.29.5", "6.29.5"),
    "ipykernel-7.3": ("ipykernel==7.3.*", "7.3."),
    "ipykernel-current": (None, ""),
}


def kernel_python(variant: str) -> str:
    requirement, prefix = VARIANTS[variant]
    if requirement is None:
        return sys.executable
    venv = VENVS / variant
    python = venv / "bin" / "python"
    ready = venv / ".nbtoolsched-ready"
    VENVS.mkdir(exist_ok=True)
    with open(VENVS / f".{variant}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two test processes never build the same venv at once
        if not (ready.exists() and python.exists()):
            _build(venv, python, requirement)
        else:
            _link_this_environment(python)  # the suite may run from another environment than last time
        version = _run([str(python), "-c", "import ipykernel; print(ipykernel.__version__)"], f"checking {variant}").strip()
        if not version.startswith(prefix):
            pytest.fail(f"{venv} has ipykernel {version}, expected {prefix}*; delete the folder to rebuild it")
        ready.write_text(version)
    return str(python)


def _build(venv: Path, python: Path, requirement: str) -> None:
    _run([sys.executable, "-m", "venv", "--clear", str(venv)], f"creating {venv}")
    _link_this_environment(python)
    _run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", requirement], f"pip install {requirement} into {venv}", timeout=600)


def _link_this_environment(python: Path) -> None:
    """Let the venv import what this environment has, after its own packages.

    ``site.addsitedir`` (not a bare path line) so that this environment's own ``.pth``
    files run too: an editable install of the project is one.
    """
    ours = [sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"], *site.getsitepackages()]
    theirs = _run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], "locating the venv's site-packages").strip()
    lines = [f"import site; site.addsitedir({folder!r})" for folder in dict.fromkeys(ours)]
    (Path(theirs) / "_nbtoolsched_parent_env.pth").write_text("\n".join(lines) + "\n")


def _run(cmd: list[str], what: str, timeout: float = 120) -> str:
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as err:
        pytest.fail(f"could not build the kernel test venv ({what}): {err}")
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-5:]
        pytest.fail(f"could not build the kernel test venv ({what}), exit {done.returncode}:\n" + "\n".join(tail))
    return done.stdout


@contextmanager
def running_kernel(python: str, cwd: Path, env: dict[str, str] | None = None) -> Iterator[tuple[Any, Any]]:
    """A kernel on ``python`` in ``cwd``, with a blocking client; shut down afterwards."""
    from jupyter_client import KernelManager
    from jupyter_client.kernelspec import KernelSpecManager

    spec_dir = cwd.parent / "kernelspec" / "nbt-test"
    spec_dir.mkdir(parents=True, exist_ok=True)
    (spec_dir / "kernel.json").write_text(json.dumps({
        "argv": [python, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "nbtoolsched test", "language": "python", "interrupt_mode": "signal",
    }))
    manager = KernelManager(kernel_name="nbt-test", kernel_spec_manager=KernelSpecManager(kernel_dirs=[str(spec_dir.parent)]))
    kernel_env = {**os.environ, **(env or {})}
    manager.start_kernel(cwd=str(cwd), env=kernel_env)
    client = manager.client()
    client.start_channels()
    try:
        client.wait_for_ready(timeout=90)
        yield manager, client
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


def execute(client: Any, code: str, timeout: float = 60) -> dict[str, Any]:
    """Run a cell; its stdout, stderr, result text, error and reply status."""
    return collect(client, client.execute(code), timeout, code)


def collect(client: Any, msg_id: str, timeout: float = 60, code: str = "") -> dict[str, Any]:
    """What the cell ``msg_id`` printed until it went idle: stdout, stderr, result text,
    error and reply status."""
    out: dict[str, Any] = {"stdout": "", "stderr": "", "result": "", "error": None, "status": None}
    deadline = time.monotonic() + timeout
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise AssertionError(f"the cell did not finish within {timeout} s:\n{code}\n(so far: {out})")
        try:
            msg = client.get_iopub_msg(timeout=min(remaining, 5))
        except queue.Empty:
            continue
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        kind, content = msg["msg_type"], msg["content"]
        if kind == "stream":
            out[content["name"]] += content["text"]
        elif kind in ("execute_result", "display_data"):  # a run shows itself with a display id
            out["result"] += content["data"].get("text/plain", "")
        elif kind == "error":
            out["error"] = content
        elif kind == "status" and content["execution_state"] == "idle":
            break
    reply = client.get_shell_msg(timeout=timeout)
    while reply["parent_header"].get("msg_id") != msg_id:
        reply = client.get_shell_msg(timeout=timeout)
    out["status"] = reply["content"]["status"]
    return out


def poll_json(client: Any, code: str, ready: Any, timeout: float = 30) -> Any:
    """Run ``code`` (which prints JSON) until ``ready(value)``; the value."""
    deadline = time.monotonic() + timeout
    while True:
        out = execute(client, code)
        assert out["error"] is None, out
        value = json.loads(out["stdout"].strip().splitlines()[-1])
        if ready(value):
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting; last value {value!r}")
        time.sleep(0.2)


def create_subshell(client: Any) -> str:
    msg = client.session.msg("create_subshell_request", {})
    client.control_channel.send(msg)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        reply = client.control_channel.get_msg(timeout=20)
        if reply["parent_header"].get("msg_id") == msg["header"]["msg_id"]:
            return reply["content"]["subshell_id"]
    raise AssertionError("no reply to create_subshell_request")


def click(client: Any, model_id: str, subshell_id: str | None = None) -> None:
    """Exactly what a frontend sends when a Button is clicked."""
    msg = client.session.msg("comm_msg", {"comm_id": model_id, "data": {"method": "custom", "content": {"event": "click"}}})
    if subshell_id is not None:
        msg["header"]["subshell_id"] = subshell_id
    client.shell_channel.send(msg)


def supports_subshells(client: Any) -> bool:
    msg_id = client.kernel_info()
    reply = client.get_shell_msg(timeout=20)
    while reply["parent_header"].get("msg_id") != msg_id:
        reply = client.get_shell_msg(timeout=20)
    return "kernel subshells" in reply["content"].get("supported_features", [])


def process_gone(pid: int) -> bool:
    """Dead or a zombie waiting to be reaped."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return True
    return "\nState:\tZ" in status
