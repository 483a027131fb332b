"""Bash: run a shell command in its own process group, streaming its output.

Read-only (and so concurrency-safe and auto-allowed) is decided by the shell layer's
tree-sitter analysis, failing closed. The command runs under ``bash -c`` in a new
session, marked so that its descendants can be found even after they leave the group
(``bash_processes``). When the call ends, by exit, timeout, abort or cancel, everything
it started is stopped and the result says what was still running, and what could not
be stopped. Claude Code leaves ``cmd &`` jobs of a foreground call running (orphaned,
see anthropics/claude-code#93794); we stop them, since nothing here could manage them
later. Output is kept bounded and throttled (``bash_output``).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import stat
import tempfile
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, AsyncIterator, Callable, Iterator, Sequence, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from ..sandbox import Availability, KernelOverlay, Placement, SandboxPolicy, SandboxSettings, Wrapped, wrap
from ..sandbox._failures import sandbox_failure
from ..sandbox._settings import FIX_HINT
from ..shell import MAX_INDEX_BYTES, analyze, find_repository, is_benign_exit, line_facts
from .._tasks import TaskOwner, finish_despite_cancel
from .._tool._abort import INTERRUPT, AbortError
from .._tool._decision import Decision, DecisionReason
from .._tool._base import Tool, ToolOutput, Validation
from .._tool._context import ToolContext
from ._bash_output import ProgressThrottle, StreamCapture
from ._bash_processes import MARKER_VAR, new_marker, stop_processes, stopped_note, survivors_note

__all__ = ["BashTool", "BashInput", "BashResult", "DEFAULT_TIMEOUT_MS", "MAX_TIMEOUT_MS"]

DEFAULT_TIMEOUT_MS = 120_000
MAX_TIMEOUT_MS = 600_000
TERM_GRACE_S = 0.3  # SIGTERM, then SIGKILL: the whole kill stays well under a second
PIPE_GRACE_S = 2.0  # after the command exits, how long stray writers may keep its pipes open
CHUNK = 65_536
SHELL = "/bin/bash"
T = TypeVar("T")

_PROMPT = """Runs a bash command and returns its output (stdout, then stderr) and exit status.

- The command runs in the session's working directory with no stdin; output lines stream as progress.
- Default timeout 2 minutes (`timeout` in milliseconds, at most 600000); on timeout the command and
  everything it started are killed.
- Commands run in an OS sandbox where one can start (bubblewrap): the whole file system is read-only except the
  working directories and $TMPDIR (and nothing is writable for commands judged read-only); `.git/hooks`,
  `.git/config`, `.claude/`, `.vscode/` and shell startup files stay read-only; files the permission rules
  protect read as "Permission denied"; there is no network unless the settings allow domains (through
  HTTP_PROXY). A failure such as "Read-only file system" or a failed connection is the sandbox: if the command
  really needs it, retry with `dangerouslyDisableSandbox: true`, which always asks the user first.
- Background processes (`cmd &`, nohup, setsid) are stopped when the command finishes.
- Very large output is cut to its head and tail; the whole of it is saved to a file whose path is given.
- Prefer the dedicated tools for files: Read, Edit, Write, Glob, Grep.
- Read-only commands (ls, cat, git status, grep...) run in parallel with other read-only calls and
  need no approval; anything else runs alone and may need permission.
- Quote paths that contain spaces. Chain dependent commands with `&&`.
- `run_in_background` is not supported."""


class BashInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    command: str = Field(description="The bash command to run")
    timeout: int | None = Field(
        default=None, ge=1, le=MAX_TIMEOUT_MS, description=f"Timeout in milliseconds (default {DEFAULT_TIMEOUT_MS}, max {MAX_TIMEOUT_MS})"
    )
    description: str | None = Field(default=None, description="A short description of what the command does (5-10 words)")
    run_in_background: bool | None = Field(default=None, description="Not supported; leave unset")
    dangerouslyDisableSandbox: bool | None = Field(
        default=None,
        description="Run outside the OS sandbox. Only after a command failed because of the sandbox; always asks the user.",
    )


@dataclass(slots=True)
class BashResult:
    """What a command did: kept as the call's data for hooks and the trace."""

    command: str
    stdout: str = ""
    stderr: str = ""
    exit_code: int | None = None
    timed_out: bool = False
    notes: list[str] = field(default_factory=list)  # shown after the output
    lead_notes: list[str] = field(default_factory=list)  # shown before it (the output was cut)
    survivors: int = 0  # processes it started that could not be stopped
    sandbox: str | None = None  # the sandbox it ran in ("read-only", "write"), None outside one


# -- the read-only analysis (shell/_readonly.py, which caches its verdicts) ------------------


def analyze_read_only(command: str, cwd: str | None = None) -> tuple[bool, str]:
    """(read_only, reason) for ``command`` run in ``cwd``; any failure means not read-only.

    git obeys the config of the repository it finds from its directory, and that config
    can run programs (core.fsmonitor, diff textconv, filters...), so a git command is
    read-only only once that repository is checked: without ``cwd``, it is not.
    """
    try:
        verdict = analyze(command)
        if not (verdict.read_only and verdict.uses_git):
            return verdict.read_only, verdict.reason
        if cwd is None:
            return False, "git obeys its repository's config, and where the command runs is not known here"
        verdict = analyze(command, cwd)
        return verdict.read_only, verdict.reason
    except Exception as err:
        return False, f"the read-only analysis failed: {err}"


def concurrency_safe(command: str) -> bool:
    """Read-only as far as the command alone goes: for partitioning, which has no cwd.

    It allows nothing by itself: every call still passes the permission step, which
    checks the repository (a git command there that is not read-only needs approval).
    """
    try:
        return analyze(command).read_only
    except Exception:
        return False


def benign_exit(command: str, exit_code: int) -> bool:
    try:
        return is_benign_exit(command, exit_code)
    except Exception:  # never let a parser failure turn a finished command into a crash
        return False


# -- the tool ------------------------------------------------------------------------------


class BashTool(Tool[BashInput]):
    name = "Bash"
    description = _PROMPT
    search_hint = "run shell commands, git, tests, build scripts"
    input_model = BashInput
    max_result_size_chars = 30_000
    errors_cancel_siblings = True
    permission_kind = "shell"

    def is_read_only(self, input: BashInput) -> bool:
        return analyze_read_only(input.command)[0]  # no cwd: git commands are not

    def is_read_only_in(self, input: BashInput, cwd: str) -> bool:
        return analyze_read_only(input.command, cwd)[0]

    def is_concurrency_safe(self, input: BashInput) -> bool:
        return concurrency_safe(input.command)

    async def validate_input(self, input: BashInput, ctx: ToolContext) -> Validation:
        if input.run_in_background:
            return Validation.fail(
                "run_in_background is not supported here: run the command in the foreground "
                f"(with a timeout of up to {MAX_TIMEOUT_MS} ms) or split the work into shorter commands."
            )
        if not input.command.strip():
            return Validation.fail("command is empty: pass the bash command to run.")
        if "\x00" in input.command:
            return Validation.fail("command contains a NUL byte, which no shell can run.")
        return Validation.OK

    async def check_permissions(self, input: BashInput, ctx: ToolContext) -> Decision:
        read_only, _ = analyze_read_only(input.command, ctx.cwd)
        if read_only:
            return Decision.allow(reason=DecisionReason("tool", "read-only command"))
        return Decision.passthrough()

    async def call(self, input: BashInput, ctx: ToolContext) -> ToolOutput:
        timeout_s = (input.timeout or DEFAULT_TIMEOUT_MS) / 1000
        read_only = self.is_read_only_in(input, ctx.cwd)
        settings = sandbox_settings(ctx)
        available = await settings.probe()  # the first call in a process starts bubblewrap once, in a thread
        if ctx.overlay is not None:  # a speculation's kernel overlay: always the writing sandbox, in it
            place = Placement("write" if not read_only else "read-only", "a speculation's kernel overlay")
            if not available.ok:
                return ToolOutput(None, content=f"Not run: the speculation's sandbox cannot start ({available.reason}).", is_error=True)
        else:
            place = settings.placement(read_only=read_only, excluded=settings.excludes(line_facts(input.command, ctx.cwd), working_dirs(ctx)),
                                       disable_requested=bool(input.dangerouslyDisableSandbox))
        if place.error:
            return ToolOutput(None, content=place.error, is_error=True)
        if place.note and not place.sandboxed:
            settings.warn_if_unavailable()
        policy = sandbox_policy(settings, place, ctx)
        async with _off_the_loop(private_git_index(input.command, ctx.cwd, read_only and ctx.overlay is None)) as index:
            env = command_env(read_only=read_only or ctx.overlay is not None, git_index=index)
            result = await run_command(
                input.command, cwd=ctx.cwd, env=env, timeout=timeout_s, abort=ctx.abort, progress=ctx.progress,
                save_dir=ctx.session_dir / "tool-results", sandbox=(policy, available) if policy is not None else None,
                overlay=ctx.overlay,
            )
        if place.note:
            result.notes.append(place.note)
        return to_output(result, benign=result.exit_code is not None and benign_exit(input.command, result.exit_code))


def sandbox_settings(ctx: ToolContext) -> SandboxSettings:
    """The sandbox settings of the call's permission context (Permissions.sandbox), or the defaults."""
    found = getattr(ctx.permission_context, "sandbox", None)
    return found if isinstance(found, SandboxSettings) else SandboxSettings()


def working_dirs(ctx: ToolContext) -> tuple[str, ...]:
    """The call's working directories: its permission context's, cwd first."""
    dirs = getattr(ctx.permission_context, "working_dirs", None)
    found = tuple(dirs) if isinstance(dirs, (list, tuple)) and all(isinstance(d, str) for d in dirs) else (ctx.cwd,)
    return found if ctx.cwd in found else (ctx.cwd, *found)


def sandbox_policy(settings: SandboxSettings, place: Placement, ctx: ToolContext) -> SandboxPolicy | None:
    """The policy of a call placed in a sandbox: the working directories writable (a
    writing sandbox), the session's own temp folder as TMPDIR. In a speculation's overlay:
    only the overlaid folder and the overlay's temp folder, and never the network."""
    if place.sandbox is None:
        return None
    if ctx.overlay is not None:
        made = SandboxSettings(deny_read=settings.deny_read, allow_read=settings.allow_read, deny_write=settings.deny_write,
                               env_deny=settings.env_deny, pass_env=settings.pass_env, seccomp=settings.seccomp)
        return made.policy(place.sandbox, writable=(ctx.cwd,), tmp_dir=ctx.overlay.tmp_dir)
    return settings.policy(place.sandbox, writable=working_dirs(ctx), tmp_dir=str(ctx.session_dir / "tmp"),
                           quarantine_dir=str(ctx.session_dir / "sandbox-quarantine"))


# Configuration a read-only git command runs with, above every config file: a split
# index writes $GIT_DIR/sharedindex.* whatever GIT_INDEX_FILE says (the user's own
# config may turn it on; the repository's is refused by the read-only check).
_READ_ONLY_GIT_CONFIG = (("core.splitIndex", "false"),)


def command_env(*, read_only: bool, git_index: str | None = None) -> dict[str, str]:
    """The caller's environment, made non-interactive; read-only git takes no optional locks,
    writes no shared index and, given ``git_index`` (see private_git_index), reads and
    refreshes only that copy."""
    env = dict(os.environ)
    env.update(GIT_TERMINAL_PROMPT="0", GIT_PAGER="cat", PAGER="cat")
    # A cd goes where the permission check computed it, from the working directory: an
    # inherited CDPATH would send `cd src` elsewhere.
    env.pop("CDPATH", None)
    if read_only:
        env["GIT_OPTIONAL_LOCKS"] = "0"  # two parallel `git status` must not fight over index.lock
        try:
            count = int(env.get("GIT_CONFIG_COUNT", "0"))
        except ValueError:
            count = 0
        for key, value in _READ_ONLY_GIT_CONFIG:  # appended: later entries win
            env[f"GIT_CONFIG_KEY_{count}"], env[f"GIT_CONFIG_VALUE_{count}"] = key, value
            count += 1
        env["GIT_CONFIG_COUNT"] = str(count)
        if git_index is not None:
            env["GIT_INDEX_FILE"] = git_index
    return env


class GitIndexError(OSError):
    """The index of a read-only git command's repository cannot be copied safely."""


@contextlib.contextmanager
def private_git_index(command: str, cwd: str, read_only: bool) -> Iterator[str | None]:
    """A throw-away copy of the repository's index for a read-only git command, or None.

    ``git diff`` and ``git describe --dirty`` rewrite a stale index (new stat data) even
    with GIT_OPTIONAL_LOCKS=0, so a read-only command, or a speculation's rejected run,
    would change .git/index. Given a copy (mtime kept: git's racy-entry check reads it)
    they refresh that instead; it is removed afterwards. The copy follows no link and
    stops at MAX_INDEX_BYTES (GitIndexError): the read-only check refuses such an index
    already, so this only meets one swapped in since. Blocking: call it off the loop.
    """
    index = _index_of(command, cwd) if read_only else None
    if index is None:
        yield None
        return
    scratch = tempfile.mkdtemp(prefix="nbtoolsched-index-")
    try:
        copy = os.path.join(scratch, "index")
        _copy_index(index, copy)  # no index yet: the missing copy is an empty index too
        yield copy
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _copy_index(source: str, target: str) -> bool:
    """Copy a regular file of at most MAX_INDEX_BYTES, never through a link; False if missing."""
    try:
        fd = os.open(source, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise GitIndexError(f"the git index {source} cannot be opened for a private copy: {exc.strerror}") from None
    with os.fdopen(fd, "rb") as src:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise GitIndexError(f"the git index {source} is not a regular file")
        with open(target, "wb") as dst:
            copied = 0
            while chunk := src.read(CHUNK * 16):
                copied += len(chunk)
                if copied > MAX_INDEX_BYTES:
                    raise GitIndexError(f"the git index {source} is larger than {MAX_INDEX_BYTES} bytes")
                dst.write(chunk)
        os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
    return True


@contextlib.asynccontextmanager
async def _off_the_loop(manager: contextlib.AbstractContextManager[T], *, quick_exit: bool = False) -> AsyncIterator[T]:
    """Enter and leave a blocking context manager in a worker thread (``quick_exit``:
    leave it on the loop, for an exit that is a few bounded system calls)."""
    async def leave(_: T) -> None:  # cancelled while it was entered: leave it at once, nothing stays behind
        if quick_exit:
            manager.__exit__(None, None, None)
        else:
            await asyncio.to_thread(manager.__exit__, None, None, None)

    value = await finish_despite_cancel(asyncio.to_thread(manager.__enter__), leave)
    try:
        yield value
    except BaseException as exc:
        if not (manager.__exit__(type(exc), exc, exc.__traceback__) if quick_exit
                else await asyncio.to_thread(manager.__exit__, type(exc), exc, exc.__traceback__)):
            raise
    else:
        if quick_exit:
            manager.__exit__(None, None, None)
        else:
            await asyncio.to_thread(manager.__exit__, None, None, None)


def _index_of(command: str, cwd: str) -> str | None:
    """The index file git would use for ``command`` in ``cwd`` (None: no git, no work tree)."""
    try:
        if not analyze(command).uses_git:
            return None
        repo = find_repository(cwd)
    except Exception:
        return None
    return repo.index if repo is not None and repo.work_tree is not None else None


# -- running a command --------------------------------------------------------------------


async def run_command(
    command: str,
    *,
    cwd: str,
    env: dict[str, str] | None = None,
    timeout: float,
    abort: Any = None,
    progress: Callable[[Any], None] | None = None,
    ignore: tuple[str, ...] = (INTERRUPT,),
    save_dir: Path | None = None,
    sandbox: tuple[SandboxPolicy, Availability] | None = None,
    overlay: KernelOverlay | None = None,
) -> BashResult:
    """Run ``command`` to completion, timeout or abort; everything it started is gone on return.

    Raises ``AbortError`` when ``abort`` fires (for a reason not in ``ignore``: a new
    user message does not stop a command) and ``CancelledError`` when cancelled, in
    both cases after stopping every process it started. A stream that outgrows what is
    kept in memory is written in full to a file in ``save_dir``. With ``sandbox`` (a policy
    and the availability that says it can start) it runs inside bubblewrap (sandbox/).
    """
    if not os.path.isdir(cwd):
        raise FileNotFoundError(f"the working directory {cwd} does not exist")
    marker = new_marker()
    env = {**(env if env is not None else os.environ), MARKER_VAR: marker}  # every descendant inherits it
    if sandbox is None:
        return await _run(command, [SHELL, "-c", command], cwd, env, (), marker, timeout, abort, progress, ignore, save_dir)
    policy, available = sandbox
    async with contextlib.AsyncExitStack() as stack:
        if overlay is not None:  # a speculation's: mounted for this command only
            await stack.enter_async_context(overlay.held())
        # Wrapping walks folders (in a thread); unwrapping reads a pipe and removes a few
        # placeholders (on the loop: two thread hops cost more than it does).
        wrapped = await stack.enter_async_context(_off_the_loop(wrap(policy, command, cwd, env, available, overlay), quick_exit=True))
        result = await _run(command, wrapped.argv, cwd, wrapped.env, wrapped.pass_fds, marker, timeout, abort, progress,
                            ignore, save_dir, started=wrapped.started)
    result.sandbox = policy.kind
    result.notes.extend(_sandbox_notes(wrapped))
    return result


def _sandbox_notes(wrapped: Wrapped) -> list[str]:
    notes = list(wrapped.notes)
    if wrapped.leftovers:
        count = len(wrapped.leftovers)
        what = "process the command started was" if count == 1 else "processes the command started were"
        shown = ", ".join(left.label() for left in wrapped.leftovers[:5]) + (f" and {count - 5} more" if count > 5 else "")
        notes.append(f"{count} {what} still running when it finished and stopped with its sandbox: {shown}")
    if wrapped.plan.incomplete:
        notes.append("the sandbox could not mask every protected path: " + "; ".join(wrapped.plan.incomplete[:3]))
    return notes


async def _run(
    command: str,
    argv: list[str],
    cwd: str,
    env: dict[str, str],
    pass_fds: tuple[int, ...],
    marker: str,
    timeout: float,
    abort: Any,
    progress: Callable[[Any], None] | None,
    ignore: tuple[str, ...],
    save_dir: Path | None,
    started: Callable[[], None] | None = None,
) -> BashResult:
    proc = await _spawn(argv, cwd, env, marker, pass_fds)
    if started is not None:
        started()
    result = BashResult(command)
    throttle = ProgressThrottle(progress) if progress is not None else None
    stem = f"bash-{uuid.uuid4().hex[:12]}"
    out, err = (StreamCapture(name, throttle, save_dir and save_dir / f"{stem}-{name}.txt") for name in ("stdout", "stderr"))
    aborted = asyncio.Event()
    remove = abort.on_abort(lambda reason: reason in ignore or _set(aborted)) if abort is not None else _noop
    try:
        async with TaskOwner() as reading:  # leaving it, every reader has ended (one given up on is cancelled)
            readers = [reading.start(out.pump(proc.stdout, CHUNK)), reading.start(err.pump(proc.stderr, CHUNK))]
            try:
                outcome = await _wait(proc, aborted, timeout)
                held = outcome == "exited" and not await _finish_readers(readers, PIPE_GRACE_S)
                stopped = await stop_processes(proc, marker, TERM_GRACE_S)
                if held or outcome != "exited":
                    await _give_up_reading(proc, readers)
                if held:
                    result.notes.append("background processes kept the output open after the command exited; their later output is not included")
                # On a timeout or an abort, stopping everything is what was asked: only failures are news.
                notes = [stopped_note(stopped, "when the command finished") if outcome == "exited" else None, survivors_note(stopped)]
                result.notes.extend(note for note in notes if note)
                result.survivors = len(stopped.survivors)
                if outcome == "aborted":
                    raise AbortError(abort.reason if abort is not None else "aborted")
                if outcome == "timeout":
                    result.timed_out = True
            except BaseException:
                await _cleanup(proc, readers, marker)
                raise
    finally:
        remove()
        if throttle is not None:
            throttle.flush()
        out.close()
        err.close()
    result.stdout, result.stderr = out.text(), err.text()
    result.lead_notes = [n for n in (out.notice(), err.notice()) if n]
    result.exit_code = proc.returncode
    return result


async def _wait(proc: asyncio.subprocess.Process, aborted: asyncio.Event, timeout: float) -> str:
    """Which came first: the command's exit, the abort, or the timeout."""
    async with TaskOwner() as racing:  # the loser is cancelled, and has ended, when the block is left
        exited = racing.start(_until_exit(proc))
        stopped = racing.start(aborted.wait())
        done, _ = await asyncio.wait({exited, stopped}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    if exited in done:
        return "exited"
    return "aborted" if stopped in done else "timeout"


async def _until_exit(proc: asyncio.subprocess.Process, poll: float = 0.02) -> int:
    """The leader's exit, not waiting for its pipes (``proc.wait`` also waits for EOF,
    which a background child that escaped the group could hold off forever).

    Where there are pidfds, the loop is woken the moment the process exits (a 20 ms poll
    added 10 ms to every command on average); the child watcher's reaping follows at once."""
    fd = _pidfd(proc)
    if fd is not None:
        loop = asyncio.get_running_loop()
        exited: asyncio.Future[None] = loop.create_future()

        def readable() -> None:
            if not exited.done():
                exited.set_result(None)

        loop.add_reader(fd, readable)
        try:
            await exited
        finally:
            loop.remove_reader(fd)
            os.close(fd)
        poll = 0.001
    while proc.returncode is None:
        await asyncio.sleep(poll)
    return proc.returncode


def _pidfd(proc: asyncio.subprocess.Process) -> int | None:
    """A pidfd for the running leader (None: no pidfds here, or it is already reaped)."""
    if proc.returncode is not None or not hasattr(os, "pidfd_open"):
        return None
    try:
        fd = os.pidfd_open(proc.pid)
    except OSError:
        return None
    if proc.returncode is not None:  # reaped meanwhile: the pid may be another process's now
        os.close(fd)
        return None
    return fd


async def _finish_readers(readers: Sequence[asyncio.Future[None]], grace: float) -> bool:
    _, pending = await asyncio.wait(readers, timeout=grace)
    return not pending


async def _give_up_reading(proc: asyncio.subprocess.Process, readers: Sequence[asyncio.Future[None]]) -> None:
    """Everything was signalled: read what is still buffered, then close the pipes."""
    if not await _finish_readers(readers, 1.0):
        _stop_reading(proc, readers)


async def _spawn(argv: list[str], cwd: str, env: dict[str, str], marker: str, pass_fds: tuple[int, ...] = ()) -> asyncio.subprocess.Process:
    """Start the shell in its own process group; a cancel during the start still stops everything.

    Cancelling ``create_subprocess_exec`` itself would kill only the shell and then wait
    for its pipes, which a background child (``sleep 120 &``) can hold for minutes. So the
    start is shielded, and a cancel that arrives meanwhile stops the lot after it.
    """
    spawn = asyncio.create_subprocess_exec(
        *argv, cwd=cwd, env=env, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, start_new_session=True, pass_fds=pass_fds,
    )
    return await finish_despite_cancel(spawn, lambda proc: _cleanup(proc, [], marker))


async def _cleanup(proc: asyncio.subprocess.Process, readers: Sequence[asyncio.Future[None]], marker: str) -> None:
    """On cancellation or an error: stop everything, stop reading; it completes even if cancelled (it is bounded)."""
    async def go() -> None:
        await stop_processes(proc, marker, TERM_GRACE_S)
        _stop_reading(proc, readers)
        await asyncio.gather(*readers, return_exceptions=True)

    await finish_despite_cancel(go())


def _stop_reading(proc: asyncio.subprocess.Process, readers: Sequence[asyncio.Future[None]]) -> None:
    """Give up on pipes held open by a process we could not stop: stop reading, close them."""
    for reader in readers:
        reader.cancel()
    transport = getattr(proc, "_transport", None)
    if transport is not None:
        transport.close()


# -- the result the model reads ----------------------------------------------------------


def to_output(result: BashResult, *, benign: bool = False) -> ToolOutput:
    lead = [f"({note})" for note in result.lead_notes]
    body = _join(*lead, result.stdout, result.stderr)
    notes = [f"({note})" for note in result.notes]
    code = result.exit_code
    if result.timed_out:
        killed = "with everything it started" if not result.survivors else "but not everything it started could be stopped"
        text = _join(f"Command timed out and was killed ({killed}).", body, *notes)
        return ToolOutput(result, content=text, is_error=True, exit_code=code)
    if code == 0:
        return ToolOutput(result, content=_join(body, *notes), exit_code=0)
    if code is not None and code < 0:
        text = _join(f"Command was killed by signal {_signal_name(-code)}.", *lead, result.stderr, result.stdout, *notes)
        return ToolOutput(result, content=text, is_error=True, exit_code=code)
    if benign:
        text = _join(body, f"(exit code {code}: for this command that is an ordinary answer, not a failure)", *notes)
        return ToolOutput(result, content=text, exit_code=code)
    hint = sandbox_hint(result)
    text = _join(f"Exit code {code}", *lead, result.stderr, result.stdout, *notes, *([f"({hint})"] if hint else []))
    return ToolOutput(result, content=text, is_error=True, exit_code=code)


def sandbox_hint(result: BashResult) -> str | None:
    """Why a sandboxed command that failed may have failed because of the sandbox, and what to do."""
    if result.sandbox is None:
        return None
    found = sandbox_failure(result.stdout, result.stderr)
    if found == "write":
        where = ("nothing is writable for a command judged read-only" if result.sandbox == "read-only"
                 else "only the working directories and $TMPDIR are writable, and tools' config folders never are")
        return f"the OS sandbox made the write fail: {where}; if the command must write there, {FIX_HINT}"
    if found == "network":
        return (f"the OS sandbox has no network (or only the domains the settings allow, through HTTP_PROXY); "
                f"if the command needs the network, {FIX_HINT}")
    return None


def _join(*parts: str) -> str:
    return "\n".join(p.rstrip("\n") for p in parts if p and p.strip())


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)


def _set(event: asyncio.Event) -> bool:
    event.set()
    return True


def _noop() -> None:
    return None
