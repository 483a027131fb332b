"""Chapter 14's helpers and checker: the OS sandbox, run for real.

* ``bash_in(project, ...)``: a function that runs one command through the real built-in
  Bash tool (a real ``Scheduler`` with real ``Permissions``), so under bubblewrap wherever
  it can start; it remembers whether the permission layer asked.
* ``bwrap_lines(argv, project)``: a bubblewrap argument list one option per line, with the
  paths that differ between machines written the same everywhere (the project is ``.``).
* ``check_mask_env`` (the exercise): the learner's ``sandbox`` setting is loaded as
  Claude Code's settings block, then real commands run under it in seeded scratch
  projects; the verdict says in plain words what leaked (a secret printed) or what broke
  (a file that should stay readable, a write that should work).

``reference_mask_env`` is the setting the checker compares with; the tests check that it
is what the library masks (``Permissions.sandbox``, ``sandbox.wrap``).
"""

from __future__ import annotations

import os
import random
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import nbtoolsched as nts
from nbtoolsched.models import tool_use
from nbtoolsched.sandbox import SandboxSettings, availability

from . import Picture, layers_diagram, scratch_project
from .checks import Verdict, run_check

__all__ = [
    "AllowAndRecord", "bash_in", "bwrap_lines", "mount_layers", "word_check", "first_line",
    "check_mask_env", "reference_mask_env", "random_project", "LEAK_COMMANDS", "KEEP_COMMANDS", "settings_summary",
]

SEED = 14


# -- running the real Bash tool --------------------------------------------------------------
class AllowAndRecord:
    """An approver that says yes to everything and remembers what it was asked (so a cell
    can show when the parse asks, while the kernel decides what the command can do)."""

    def __init__(self) -> None:
        self.asked: list[nts.ApprovalRequest] = []

    async def __call__(self, request: nts.ApprovalRequest) -> nts.ApprovalAnswer:
        self.asked.append(request)
        return nts.ApprovalAnswer("allow")


@dataclass
class Ran:
    """One Bash call: its result text, whether it failed, whether a person was asked."""

    command: str
    text: str
    is_error: bool
    asked: bool

    def lines(self) -> list[str]:
        return self.text.splitlines()


@dataclass
class BashRunner:
    scheduler: nts.Scheduler
    approver: AllowAndRecord
    project: Path
    calls: int = 0
    runs: list[Ran] = field(default_factory=list)

    async def __call__(self, command: str, **extra: Any) -> Ran:
        self.calls += 1
        before = len(self.approver.asked)
        (result,) = await self.scheduler.run([tool_use("Bash", id=f"toolu_sbx{self.calls}", command=command, **extra)])
        text = result.text.replace(str(self.project), ".")
        ran = Ran(command, text, result.is_error, len(self.approver.asked) > before)
        self.runs.append(ran)
        return ran

    async def read(self, path: str) -> Ran:
        """The built-in Read tool (in-process: the sandbox does not cover it)."""
        self.calls += 1
        before = len(self.approver.asked)
        (result,) = await self.scheduler.run([tool_use("Read", id=f"toolu_sbx{self.calls}", file_path=path)])
        return Ran(f"Read {path}", result.text.replace(str(self.project), "."), result.is_error,
                   len(self.approver.asked) > before)


def bash_in(project: str | os.PathLike[str], sandbox: SandboxSettings | dict[str, Any] | None = None, *,
            mode: str = "default", deny: tuple[str, ...] = (), allow: tuple[str, ...] = ()) -> BashRunner:
    """``await run(command)`` runs ``command`` through the real Bash tool in ``project``,
    with ``sandbox`` as the settings' ``sandbox`` block; every approval is given (and
    recorded), so what stops a command is the kernel, not a person."""
    project = Path(project)
    approver = AllowAndRecord()
    perms = nts.Permissions(mode=mode, cwd=project, approver=approver, sandbox=sandbox, deny=deny, allow=allow)
    sched = nts.Scheduler(nts.default_registry(), permissions=perms, cwd=project, session_dir=scratch_project())
    return BashRunner(sched, approver, project)


def first_line(ran: Ran) -> str:
    """The first line of what a command printed, without the ``Exit code N`` header."""
    lines = [line for line in ran.lines() if line.strip() and not line.startswith("Exit code")]
    return lines[0] if lines else "(nothing)"


# -- a bubblewrap argument list, printed the same on every machine ---------------------------------
_ARITY = {"--ro-bind": 2, "--bind": 2, "--dev-bind": 2, "--ro-bind-try": 2, "--bind-try": 2, "--setenv": 2,
          "--symlink": 2, "--file": 2, "--chmod": 2, "--dev": 1, "--proc": 1, "--tmpfs": 1, "--remount-ro": 1,
          "--chdir": 1, "--cap-drop": 1, "--cap-add": 1, "--seccomp": 1, "--dir": 1, "--perms": 1, "--unsetenv": 1}


def _plain(word: str, names: dict[str, str]) -> str:
    for path, name in names.items():
        if word == path:
            return name
        if word.startswith(path + "/"):
            return name + word[len(path):]
    word = re.sub(r"\S*/nbtoolsched-sandbox-tmp-[\w-]+", "<private tmp>", word)
    word = re.sub(r"\S*/nbtoolsched-proxy-[\w-]+/proxy\.sock", "<proxy socket>", word)
    return word.replace(sys.executable, "python")


def bwrap_lines(argv: list[str], project: str | os.PathLike[str], names: dict[str, str] | None = None) -> list[str]:
    """``argv`` (from ``sandbox.wrap``) one bubblewrap option per line; the project folder
    is ``.``, other folders as ``names`` says (path -> label), bubblewrap ``bwrap``, temp
    folders and descriptors by what they are, the wrapper script left out."""
    labels = {str(path): label for path, label in (names or {}).items()}
    labels[str(project)] = "."
    start = next(i for i, w in enumerate(argv) if os.path.basename(w) == "bwrap")
    words = argv[start + 1:]
    lines = ["bwrap"]
    i = 0
    while i < len(words) and words[i] != "--":
        option = words[i]
        n = _ARITY.get(option, 0)
        args = [_plain(w, labels) for w in words[i + 1:i + 1 + n]]
        if option == "--seccomp":
            args = ["<descriptor of the filter>"]
        lines.append("  " + " ".join([option, *args]))
        i += 1 + n
    rest = words[i + 1:]  # SHELL -c SCRIPT NAME COMMAND REPORT_FD
    if len(rest) >= 5:
        lines.append(f"  -- {rest[0]} -c <the wrapper script> {rest[3]} {rest[4]!r} <report descriptor>")
    return lines


def _covers(mount: str, path: str) -> bool:
    if mount == "/":
        return True
    if mount == ".":
        return not path.startswith("/")
    return path == mount or path.startswith(mount.rstrip("/") + "/")


def mount_layers(lines: list[str], columns: list[str], title: str = "") -> Picture:
    """The mount namespace ``bwrap_lines`` describes, as layers: for each path in
    ``columns`` (relative to the project, or absolute), what each group of mounts makes of
    it, and what the command sees in the end (the last mount over it wins)."""
    groups = ["--ro-bind / /", "--bind (writable)", "--ro-bind (protected)", "masks"]
    layers: dict[str, dict[str, str]] = {g: {} for g in groups}
    seen: dict[str, tuple[str, str]] = {}
    for line in lines:
        words = line.split()
        if not words or not words[0].startswith("--"):
            continue
        option, args = words[0], words[1:]
        if option == "--ro-bind" and args[:1] == ["/"]:
            group, label, target = groups[0], "read-only", "/"
        elif option == "--bind" and args:
            group, label, target = groups[1], "writable", args[-1]
        elif option == "--ro-bind" and args[:1] == ["/dev/null"]:
            group, label, target = groups[3], "/dev/null\n(unreadable)", args[-1]
        elif option == "--ro-bind" and args:
            group, label, target = groups[2], "read-only\nagain", args[-1]
        elif option == "--tmpfs" and args:
            group, label, target = groups[3], "empty tmpfs", args[-1]
        elif option == "--remount-ro" and args:
            group, label, target = groups[3], "empty tmpfs,\nread-only", args[-1]
        else:
            continue
        target = target[2:] if target.startswith("./") else target
        for path in columns:
            if _covers(target, path):
                layers[group][path] = label
                seen[path] = (label, group)
    return layers_diagram(columns, [(g, layers[g]) for g in groups if layers[g]], dict(seen), title,
                          merged_name="the command sees")


# -- chapter 14, section 1: a check that reads the command's words --------------------------------
READERS = {"cat", "head", "tail", "less", "more", "grep", "sed", "awk", "cut", "sort", "tac", "nl", "od", "xxd", "strings"}


def word_check(command: str, secret: str = ".env") -> bool:
    """A check by words, as a rule engine might write one: does any simple command of the
    line start with a program that reads files and name ``secret`` among its words?"""
    import shlex

    for part in re.split(r"[;&|]+", command):
        try:
            words = shlex.split(part)
        except ValueError:
            return True  # cannot tell: say it reads
        while words and re.match(r"^\w+=", words[0]):
            words = words[1:]
        if words and os.path.basename(words[0]) in READERS and any(w == secret or w.endswith("/" + secret) for w in words[1:]):
            return True
    return False


# -- chapter 14's exercise: a setting that masks every .env --------------------------------------
LEAK_COMMANDS = (
    "cat .env",
    "echo 'cat .env' | bash",
    "P=cat; $P .env",
    "printf 'cat .%s\\n' env > show.sh; bash show.sh",
    "python3 -c \"print(open('.env').read())\"",
    "grep -r TOKEN .",
    "cat api/.env",
)
KEEP_COMMANDS = (
    ("cat .env.example", "TOKEN=changeme"),
    ("cat app.py", "print('hello')"),
    ("echo built > out.txt && cat out.txt", "built"),
)


@dataclass
class Project:
    number: int
    root: Path
    secrets: dict[str, str]  # relative path of each .env -> its secret

    def describe(self) -> str:
        return f"project {self.number} (.env files: {', '.join(sorted(self.secrets))})"


def random_project(rng: random.Random, number: int) -> Project:
    """A scratch project with a secret ``.env`` at its top, sometimes another one in
    ``api/``, and files that must stay readable (``.env.example``, ``app.py``)."""
    files = {".env.example": "TOKEN=changeme\n", "app.py": "print('hello')\n", "README.md": "# demo\n"}
    secrets = {".env": f"s3cr3t-{rng.randrange(16**6):06x}"}
    if number % 2 == 0 or rng.random() < 0.3:
        secrets["api/.env"] = f"api-{rng.randrange(16**6):06x}"
    for rel, secret in secrets.items():
        files[rel] = f"TOKEN={secret}\n"
    return Project(number, scratch_project(files), secrets)


def reference_mask_env(project: Path) -> dict[str, Any]:
    """Mask every ``.env`` in the project: a bare name (no slash) matches at any depth, as in
    .gitignore, and read lists take globs (expanded when each command is wrapped)."""
    return {"filesystem": {"denyRead": [".env"]}}


def _load(fn: Callable[[Path], Any], project: Project) -> tuple[Any, SandboxSettings | None, str | None]:
    settings = fn(project.root)
    if not isinstance(settings, (dict, SandboxSettings)):
        kind = type(settings).__name__
        return None, None, f"{project.describe()}: your function returned {kind}, not a dict or SandboxSettings"
    try:
        merged = nts.Permissions(cwd=project.root, sandbox=settings).sandbox
    except Exception as err:  # noqa: BLE001 - the learner's settings: say why they do not load
        warned = _load_with_warnings(settings, project) if isinstance(settings, dict) else None
        if warned is None:
            return None, None, f"{project.describe()}: your settings do not load as a sandbox block: {err}"
        made, warnings = warned  # it loads, with what a settings file would warn about left out
        merged = nts.Permissions(cwd=project.root, sandbox=made).sandbox
        fs = settings.get("filesystem") if isinstance(settings, dict) else None
        note = (" (and denyWrite only makes a file read-only, it does not hide it: masking is filesystem.denyRead)"
                if isinstance(fs, dict) and fs.get("denyWrite") else "")
        return made, merged, (f"{project.describe()}: your block loads only with a warning (as a settings file "
                              f"Claude Code would load it and skip what the warning names; given from Python, "
                              f"nbtoolsched refuses it): {'; '.join(warnings)}; the check ran it without that "
                              f"part{note}")
    return settings, merged, None


def _load_with_warnings(settings: dict[str, Any], project: Project) -> tuple[SandboxSettings, list[str]] | None:
    """The block as a settings file would load it, and its warnings; None when it does not load
    even so (a shape Claude Code refuses) or has nothing to warn about."""
    from nbtoolsched.permissions._problems import LoadProblem
    from nbtoolsched.permissions._sandbox import read_sandbox_block
    base = nts.Permissions(cwd=project.root)
    problems: list[LoadProblem] = []
    try:
        made = read_sandbox_block(settings, origin="python", root=base.cwd, cwd=base.cwd, home=base.home,
                                  working_dirs=base.working_dirs, problems=problems)
    except Exception:  # noqa: BLE001 - refused outright: the caller says it does not load
        return None
    if not problems:
        return None
    return made, [f"{p.message} ({p.item})" if p.item else p.message for p in problems]


def _why_leaked(merged: SandboxSettings, path: Path) -> str:
    """Why a file leaked, read off the merged settings."""
    if merged.enabled is False:
        return "your block says enabled: false, which runs writing commands outside the sandbox"
    patterns = [getattr(p, "pattern", p.text) for p in merged.deny_read]
    if not patterns:
        written = " (denyWrite makes a file read-only, it does not hide it)" if merged.deny_write else ""
        return "your block masks nothing: filesystem.denyRead is empty" + written
    if not any(p.matches(str(path)) for p in merged.deny_read):
        rooted = [p for p in merged.deny_read
                  if getattr(p, "pattern", "").startswith("/") and not getattr(p, "pattern", "").startswith("//")]
        if rooted:  # '/x' is not absolute in Claude Code's settings: it hangs off the settings file's root
            first = rooted[0]
            pattern, root = str(getattr(first, "pattern", "")), str(getattr(first, "settings_root", ""))
            return (f"none of your denyRead patterns {patterns} matches it: in Claude Code's sandbox settings a path "
                    f"starting with a single '/' is read relative to the settings file's root (the project folder "
                    f"for project and local settings; for a block given from Python, as here, the working "
                    f"directory), so {pattern!r} stands for {os.path.join(root, pattern[1:])!r}; an absolute path "
                    f"starts with '//' ({'/' + pattern!r}), or write the bare name '.env'")
        return f"none of your denyRead patterns {patterns} matches it"
    return "it was not masked"


def _secret_line(text: str, secret: str) -> str:
    return next((line for line in text.splitlines() if secret in line), "")


def check_mask_env(fn: Callable[[Path], Any], projects: int = 3) -> Verdict:
    """Run ``fn(project)`` (a ``sandbox`` block, dict or SandboxSettings) against real
    commands in ``projects`` seeded scratch projects, through the real Bash tool."""
    try:  # an unwritten stub is said so everywhere, before anything needs the sandbox
        fn(scratch_project({".env": "TOKEN=x\n"}))
    except NotImplementedError:
        return Verdict("mask_env", cases=1, unwritten=True)
    except Exception:  # noqa: BLE001 - the real cases below name it
        pass
    found = availability()
    if not found.ok:
        verdict = Verdict("mask_env", agree="held: nothing leaked, nothing broke")
        verdict.cases = 1
        verdict.problems.append(f"the OS sandbox cannot start here ({found.reason}), so no setting can mask anything: "
                                f"{found.fix or 'run the notebook on Linux with bubblewrap'}")
        return verdict
    rng = random.Random(SEED)
    made = [random_project(rng, n + 1) for n in range(projects)]
    cases = [(p, c, None) for p in made for c in LEAK_COMMANDS] + [(p, c, want) for p in made for c, want in KEEP_COMMANDS]
    cases.sort(key=lambda case: case[0].number)
    loaded: dict[int, tuple[Any, SandboxSettings | None, str | None]] = {}

    def problems(case: tuple[Project, str, str | None]) -> list[str]:
        project, command, want = case
        if project.number not in loaded:
            loaded[project.number] = _load(fn, project)
        settings, merged, error = loaded[project.number]
        if merged is None:
            return [error or "no settings"] if command == LEAK_COMMANDS[0] else []
        warned = [error] if error is not None and command == LEAK_COMMANDS[0] else []  # loads with a warning
        if command == "cat api/.env" and "api/.env" not in project.secrets:
            return warned
        ran = nts.run_sync(bash_in(project.root, settings)(command), reenter=False)
        leaked = [rel for rel, secret in project.secrets.items() if secret in ran.text]
        if want is None:
            if not leaked:
                return warned
            rel = leaked[0]
            return warned + [f"LEAKED in {project.describe()}: `{command}` printed {' and '.join(leaked)}'s secret "
                             f"({_secret_line(ran.text, project.secrets[rel])!r}): "
                             f"{_why_leaked(merged, project.root / rel)}; it should fail to read it"]
        out = project.root / "out.txt"
        if want in ran.text and not ran.is_error and ("out.txt" not in command or out.exists()):
            return []
        target = command.split()[1]
        over = [getattr(p, "pattern", p.text) for p in merged.deny_read if p.matches(str(project.root / target))]
        why = (f"your denyRead {over} matches {target}" if over
               else "your setting takes away more than the .env files")
        return [f"BROKE in {project.describe()}: `{command}` should print {want!r} but gave {first_line(ran)!r}: {why}"]

    return run_check("mask_env", cases, problems, agree="held: nothing leaked, nothing broke")


def settings_summary(settings: SandboxSettings) -> str:
    """One line: what the merged settings mask, protect and allow (patterns as written)."""
    masked = [getattr(p, "pattern", p.text) for p in settings.deny_read]
    protect = [getattr(p, "pattern", p.text) for p in settings.deny_write]
    return (f"masked: {masked} | read-only: {protect} | allowed domains: {list(settings.network.allowed_domains)} | "
            f"enabled: {settings.enabled} | auto-allow: {settings.auto_allows}")

