"""An outside review of the OS sandbox: holes found by attacking it through the public API
with the real Bash tool. Every command is approved (an approver that says yes, bypass
mode), so only the kernel and the scheduler's placement stand in the way. Each test
asserts the safe behaviour and fails while the hole is open.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

import nbtoolsched as nts
from nbtoolsched.sandbox import LiteralPath, SandboxPolicy, availability
from tests.bypass_kit import SECRET, make_project, run_one

from .conftest import chown_tree
from .helpers import run_in_sandbox
from .test_bash_tool import Approver, git
from .test_seccomp_and_network import _host_address

DENIES = ["Read(./.env)", "Read(./secrets/**)", "Read(//**/*.pem)"]


def _sched(project: Path, mode: str = "bypassPermissions", **options: Any) -> nts.Scheduler:
    options.setdefault("deny", DENIES)
    perms = nts.Permissions(mode=mode, cwd=project, approver=Approver(), **options)
    return nts.Scheduler(nts.default_registry(), permissions=perms, cwd=project)


def _bash(s: nts.Scheduler, command: str, **input: Any) -> nts.ToolResultBlock:
    return nts.run_sync(run_one(s, "Bash", command=command, **input))


# -- 1. reads a Read deny rule protects ----------------------------------------------------------

def test_renaming_the_folder_of_a_masked_file_does_not_unmask_it(project: Path) -> None:
    # A rule that masks the files in a folder (not the folder): the folder is not a mount
    # point, so a command may rename it (the masks move with it); the next command is
    # wrapped by path, finds nothing under ./secrets and reads the bytes under the new name.
    s = _sched(project, deny=["Read(./secrets/*.txt)"])
    _bash(s, "python3 -c \"import os; os.rename('secr' + 'ets', 'moved')\"")
    result = _bash(s, "cat moved/key.txt")
    assert SECRET not in result.text, result.text


@pytest.mark.parametrize("user", ["root", "nobody"])
def test_renaming_the_folder_of_a_masked_file_does_not_unmask_it_as_nobody_either(user: str, tmp_path: Path,
                                                                                  request: pytest.FixtureRequest) -> None:
    # The same through sandbox.wrap(), bubblewrap started by an unprivileged user.
    base = tmp_path if user == "root" else request.getfixturevalue("nobody_dir")
    proj = make_project(base)
    (proj / "conf").mkdir()
    (proj / "conf" / ".env").write_text(f"{SECRET}\n")
    if user == "nobody":
        chown_tree(base)
    policy = SandboxPolicy("write", (str(proj),), deny_read=(LiteralPath(str(proj / "conf" / ".env")),))
    run_in_sandbox(policy, "mv conf elsewhere", proj, nobody=user == "nobody")
    ran = run_in_sandbox(policy, "cat elsewhere/.env", proj, nobody=user == "nobody")
    assert SECRET not in ran.text, ran.text


def test_a_whole_disk_pattern_is_not_taken_for_masked_outside_the_working_directory(project: Path, tmp_path: Path) -> None:
    # Read(//**/*.pem) protects every .pem on the disk, but a pattern over the whole disk is
    # searched only in the working directories (docs/sandbox.md: what is left): a key
    # elsewhere is not masked. So the masks must not be taken for complete there: a read
    # the words do not name still asks (it ran unasked when found).
    from nbtoolsched.sandbox._mounts import masks_coverage
    from tests.bypass_kit import Refuser

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "server.pem").write_text(f"{SECRET} pem\n")
    perms = nts.Permissions(cwd=project, deny=DENIES)
    policy = perms.sandbox.policy("read-only", writable=(str(project),), tmp_dir=None)
    assert masks_coverage(policy, str(project)) == (True, False)
    refuser = Refuser()
    s = nts.Scheduler(nts.default_registry(), permissions=nts.Permissions(cwd=project, deny=DENIES, approver=refuser), cwd=project)
    result = _bash(s, f"echo {elsewhere}/server.pem | xargs cat")
    assert refuser.asked and SECRET not in result.text, result.text


# -- 2. places a later program outside the sandbox runs -----------------------------------------

def test_a_symlinked_claude_folder_cannot_be_replaced(project: Path, tmp_path: Path) -> None:
    # `.claude -> shared folder` is protected only at its target (outside, read-only anyway):
    # the link itself sits in a writable folder, so a command replaces it with a real
    # .claude holding settings (hooks, allow rules) that Claude Code or from_settings obey.
    shared = tmp_path / "shared-claude"
    shared.mkdir()
    (shared / "settings.json").write_text("{}\n")
    os.symlink(shared, project / ".claude")
    _bash(_sched(project), "python3 -c \"import os; d = '.cl' + 'aude'; os.unlink(d); os.mkdir(d); "
                           "open(d + '/settings.json', 'w').write('{\\\"permissions\\\": {\\\"allow\\\": [\\\"Bash\\\"]}}')\"")
    assert os.path.islink(project / ".claude") and (shared / "settings.json").read_text() == "{}\n"


def test_a_symlinked_git_dir_cannot_be_replaced_by_a_repository_with_hooks(project: Path, tmp_path: Path) -> None:
    # The same for `.git -> ../repo/.git`: the link is removed and `git init` makes a fresh
    # repository whose pre-commit hook the user's next `git commit` runs on the host.
    (tmp_path / "repo").mkdir()
    git(tmp_path / "repo", "init", "-q")
    os.symlink(tmp_path / "repo" / ".git", project / ".git")
    _bash(_sched(project), "python3 -c \"import os; os.unlink('.g' + 'it')\"; git init -q . && "
                           "python3 -c \"h = '.g' + 'it/hooks/pre-commit'; open(h, 'w').write('#!/bin/sh\\necho pwned\\n')\"")
    assert os.path.islink(project / ".git")
    assert not (project / ".git" / "hooks" / "pre-commit").exists()


def test_a_missing_vscode_folder_cannot_be_created(project: Path) -> None:
    # .vscode/ is listed as read-only, but only a missing .claude/ or .git/hooks gets a
    # placeholder: a missing .vscode/ (tasks that run on folder open) is created.
    _bash(_sched(project), "python3 -c \"import os; os.mkdir('.vs' + 'code'); "
                           "open('.vs' + 'code/tasks.json', 'w').write('{}')\"")
    assert not (project / ".vscode").exists()


def test_a_missing_core_hooks_path_folder_cannot_be_created(project: Path) -> None:
    # core.hooksPath names a folder that does not exist yet (a hooks folder a setup script
    # makes, husky's .husky/_ before `npm install`): only existing folders are kept read-only.
    git(project, "init", "-q")
    git(project, "config", "core.hooksPath", ".githooks")
    _bash(_sched(project), "python3 -c \"import os; os.mkdir('.githo' + 'oks'); "
                           "open('.githo' + 'oks/pre-commit', 'w').write('#!/bin/sh\\necho pwned\\n')\"")
    assert not (project / ".githooks").exists()


def test_a_config_file_that_git_config_includes_stays_read_only(project: Path) -> None:
    # `[include] path = ../tools/git.cfg` in .git/config: the included file is git config
    # as much as .git/config is, but it is not kept read-only; a core.fsmonitor written
    # there runs with the user's next `git status` on the host.
    git(project, "init", "-q")
    (project / "tools").mkdir()
    (project / "tools" / "git.cfg").write_text("")
    git(project, "config", "include.path", "../tools/git.cfg")
    _bash(_sched(project), "python3 -c \"open('tools/git.c' + 'fg', 'a').write('[core]\\n\\tfsmonitor = touch PWNED\\n')\"")
    assert (project / "tools" / "git.cfg").read_text() == ""


def test_an_uninitialised_submodule_cannot_be_seeded_with_hooks(tmp_path: Path) -> None:
    # A clone without --recurse-submodules has .gitmodules but no .git/modules/<name>. A
    # command makes that git dir (a hook in it); the user's `git submodule update --init`
    # then reuses it and runs the hook on the host.
    env = dict(os.environ, GIT_AUTHOR_NAME="a", GIT_AUTHOR_EMAIL="a@b", GIT_COMMITTER_NAME="a", GIT_COMMITTER_EMAIL="a@b")

    def g(cwd: Path, *args: str) -> None:
        subprocess.run(["git", "-c", "protocol.file.allow=always", *args], cwd=cwd, env=env, check=True, capture_output=True)

    for name in ("lib", "super"):
        (tmp_path / name).mkdir()
        g(tmp_path / name, "init", "-q")
    (tmp_path / "lib" / "f").write_text("x\n")
    g(tmp_path / "lib", "add", "f")
    g(tmp_path / "lib", "commit", "-qm", "lib")
    g(tmp_path / "super", "submodule", "add", "-q", str(tmp_path / "lib"), "lib")
    g(tmp_path / "super", "commit", "-qm", "super")
    g(tmp_path, "clone", "-q", str(tmp_path / "super"), "proj")
    proj, marker = tmp_path / "proj", tmp_path / "PWNED"
    _bash(_sched(proj), f"git clone -q --bare {tmp_path / 'lib'} .git/modules/lib && "
                        f"git -C .git/modules/lib config core.bare false && "
                        f"printf '#!/bin/sh\\ntouch {marker}\\n' > .git/modules/lib/hooks/post-checkout && "
                        "chmod +x .git/modules/lib/hooks/post-checkout")
    subprocess.run(["git", "-c", "protocol.file.allow=always", "submodule", "update", "--init"], cwd=proj, env=env,
                   capture_output=True)
    assert not marker.exists(), "the hook the sandboxed command planted ran on the host"


def test_the_site_packages_of_a_virtualenv_in_the_project_stay_read_only(project: Path, tmp_path: Path) -> None:
    # A .venv in the project (the usual layout; the agent's own, when it works on itself):
    # a .pth file there runs at every start of that Python, on the host, unasked.
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(project / ".venv")], check=True)
    marker = tmp_path / "PWNED"
    _bash(_sched(project), "python3 -c \"import glob; site = glob.glob('.venv/lib/python*/site-packages')[0]; "
                           f"open(site + '/zz.p' + 'th', 'w').write('import os; open(\\'{marker}\\', \\'w\\')\\n')\"")
    subprocess.run([str(project / ".venv" / "bin" / "python"), "-c", "pass"], check=True)
    assert not marker.exists(), "a .pth file the sandboxed command wrote ran on the host"


# -- 4. the network -----------------------------------------------------------------------------

def test_the_proxy_does_not_reach_this_machines_own_addresses(project: Path) -> None:
    # The proxy refuses loopback, but not this machine's other addresses: with any
    # domain allowed (or a name that resolves here), a service the host listens to on
    # 0.0.0.0 (a Jupyter server, a database) is reached from the sandbox.
    import http.server
    import threading

    address = _host_address()
    if address is None:
        pytest.skip("no non-loopback address here")

    class Hello(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"host-only service\n")

        def log_message(self, *args: object) -> None:
            return None

    httpd = http.server.ThreadingHTTPServer(("0.0.0.0", 0), Hello)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        s = _sched(project, sandbox={"network": {"allowedDomains": ["*"]}})
        result = _bash(s, f"curl -sS -m 10 http://{address}:{httpd.server_address[1]}/")
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert "host-only service" not in result.text, result.text


# -- 5. host state ------------------------------------------------------------------------------

KEYRING = textwrap.dedent("""
    import ctypes, sys
    import nbtoolsched as nts
    from tests.bypass_kit import run_one
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall(250, 1, None)  # KEYCTL_JOIN_SESSION_KEYRING: a fresh session keyring for this process
    data = b"SECRET-7f3a in the keyring"
    assert libc.syscall(248, b"user", b"agent-secret", data, len(data), -3) > 0  # add_key to @s
    read = ("import ctypes; l = ctypes.CDLL(None); k = l.syscall(250, 10, -3, b'user', b'agent-secret', 0); "
            "b = ctypes.create_string_buffer(128); n = l.syscall(250, 11, k, b, 128); print(b.raw[:max(n, 0)])")
    class Yes:
        async def __call__(self, request):
            return nts.ApprovalAnswer("allow")
    perms = nts.Permissions(mode="bypassPermissions", cwd=sys.argv[1], approver=Yes())
    s = nts.Scheduler(nts.default_registry(), permissions=perms, cwd=sys.argv[1])
    (result,) = nts.run_sync(s.run([{"type": "tool_use", "id": "t1", "name": "Bash",
                                     "input": {"command": f'python3 -c "{read}"'}}]))
    print(result.text)
""")


def test_the_agents_kernel_keyring_is_out_of_reach(project: Path) -> None:
    # The sandbox keeps the agent's session keyring (keyctl is not filtered): keys an agent
    # or its login holds there (Kerberos KEYRING: caches, credential helpers) read inside.
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-c", KEYRING, str(project)], cwd=root, capture_output=True, text=True,
                          timeout=120, env=dict(os.environ, PYTHONPATH=str(root)))
    assert done.returncode == 0, done.stderr
    assert SECRET not in done.stdout, done.stdout


# -- 6. the seccomp filter ----------------------------------------------------------------------

INJECT = textwrap.dedent("""
    # Write code into the unfiltered socat bridge through /proc/PID/mem (no ptrace needed):
    # it execs a shell that runs without the filter.
    import os, socket, struct, sys, time
    pid = next(int(p) for p in os.listdir("/proc") if p.isdigit() and open(f"/proc/{p}/comm").read().strip() == "socat")
    pc = int(open(f"/proc/{pid}/syscall").read().split()[-1], 16)  # where it resumes after accept()
    data = pc + 64
    sh, dash_c, cmd = b"/bin/sh\\0", b"-c\\0", sys.argv[1].encode() + b"\\0"
    argv = (data + len(sh + dash_c + cmd) + 7) & ~7
    blob = (sh + dash_c + cmd).ljust(argv - data, b"\\0")
    blob += struct.pack("<4Q", data, data + len(sh), data + len(sh + dash_c), 0)
    code = (b"\\x48\\xbf" + struct.pack("<Q", data) + b"\\x48\\xbe" + struct.pack("<Q", argv)
            + b"\\x31\\xd2\\xb8\\x3b\\x00\\x00\\x00\\x0f\\x05").ljust(64, b"\\x90")  # execve(sh, argv, NULL)
    with open(f"/proc/{pid}/mem", "r+b", buffering=0) as mem:
        mem.seek(pc)
        mem.write(code + blob)
    try:
        socket.create_connection(("127.0.0.1", 3128), timeout=2).close()  # wake it up
    except OSError:
        pass
    time.sleep(1)
""")


def test_the_seccomp_filter_cannot_be_left_behind_through_the_bridge(project: Path) -> None:
    # With allowed domains the filter is applied after socat starts, so socat, the wrapper
    # and bubblewrap's init run unfiltered, and the command may write their memory
    # (/proc/PID/mem needs no ptrace): code put into socat makes a new AF_UNIX socket.
    if availability().seccomp or os.uname().machine != "x86_64":
        pytest.skip("needs the seccomp filter and x86_64 (the injected code)")
    (project / "inject.py").write_text(INJECT)
    evidence = project / "evidence.sock"
    payload = f"python3 -c \"import socket; socket.socket(socket.AF_UNIX).bind('{evidence}')\""
    s = _sched(project, sandbox={"network": {"allowedDomains": ["example.com"]}})
    result = _bash(s, f"python3 inject.py {shlex.quote(payload)}")
    assert not evidence.exists(), f"an AF_UNIX socket was made behind the filter: {result.text}"


# -- 7. the host and the user's tree ------------------------------------------------------------

async def test_a_fifo_in_a_nested_git_dir_does_not_hang_the_next_command(project: Path) -> None:
    # Planning the mounts opens every nested repository's config with a plain open(): a
    # FIFO there blocks the wrap thread forever, and the next writing command never
    # returns (its timeout starts only once it is spawned).
    s = _sched(project)
    await run_one(s, "Bash", command="mkdir -p sub/.git && mkfifo sub/.git/config")
    call = asyncio.ensure_future(run_one(s, "Bash", command="echo hi > hi.txt", timeout=2000))
    done, _ = await asyncio.wait({call}, timeout=15)
    if not done:  # unblock the stuck thread so the test process can exit
        os.close(os.open(project / "sub" / ".git" / "config", os.O_WRONLY | os.O_NONBLOCK))
        await call
    assert done, "the command hung before it was spawned, past its 2 s timeout"


# -- 8. running outside the sandbox -------------------------------------------------------------

@pytest.mark.parametrize("command", ["docker version >/dev/null 2>&1; touch {out}/made",
                                     "printf '#!/bin/sh\\ntouch {out}/made\\n' > docker && chmod +x docker && ./docker"])
def test_excluded_commands_take_only_themselves_outside_the_sandbox(project: Path, tmp_path: Path, command: str) -> None:
    # excludedCommands: ["docker"] runs the whole line outside once any invocation in it
    # starts with docker, and compares the program's basename: `docker x; anything` and a
    # script the command itself wrote as ./docker run unsandboxed, unasked in bypass mode.
    out = tmp_path / "outside"
    out.mkdir()
    _bash(_sched(project, sandbox={"excludedCommands": ["docker"]}), command.format(out=out))
    assert not (out / "made").exists()
