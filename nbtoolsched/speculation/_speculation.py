"""``speculate``: run a suggested next prompt ahead of the user, in an overlay.

The forked loop gets its own scheduler: the session's tools, hooks and concurrency
cap, but the ``SpeculationGate`` as its permission step, its own abort signal (a child
of the session's), and a file-state cache layered over the session's. Nothing it does
reaches the real tree until ``accept``; ``reject`` deletes the overlay.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any, Collection, Iterable, Literal, Required, Sequence, TypedDict, Unpack

from .._messages import MessageLike
from .._registry import ToolRegistry
from .._tasks import TaskOwner
from ..scheduling._scheduler import Scheduler
from .._tool._context import ToolContext
from ._boundary import SPECULATION_BOUNDARY, Boundary, BoundaryKind
from ._filestate import LayeredFileState
from ._gate import SpeculationGate
from ._loop import LoopRequest, RunLoop
from ..sandbox._overlay import OverlayUnavailable
from ..sandbox._probe import switch
from ..sandbox._settings import SandboxSettings
from ._boundary import Budget
from ._kernel import KernelView
from ._overlay import FileChange, Overlay, is_inside
from ._transcript import as_message_dicts, clean_with_sources, cut_to_continuable
from ._texts import not_accepted

__all__ = ["Speculation", "AcceptResult", "speculate", "start_speculation", "MAX_SPECULATION_TURNS", "MAX_SPECULATION_MESSAGES"]

MAX_SPECULATION_TURNS = 20
MAX_SPECULATION_MESSAGES = 100
STOPPED_FROM_OUTSIDE = "speculation_stopped"

State = Literal["running", "finished", "accepted", "rejected"]


@dataclass(slots=True)
class AcceptResult:
    messages: list[dict[str, Any]]  # cleaned, to append after the user's message (the suggestion)
    changes: list[FileChange]  # what was copied into the real tree
    boundary: Boundary
    time_saved: float  # seconds of work already done when the user accepted
    query_required: bool  # the messages end with a user message: run a normal turn to continue
    tool_use_count: int
    rejected: list[FileChange] = field(default_factory=list)  # changes left out by accept(paths=...), not applied


class Speculation:
    """One speculative run: live while the loop runs, then accepted or rejected once."""

    def __init__(self, suggestion: str, overlay: Overlay, main: Scheduler, *, max_turns: int, max_messages: int, grace: float,
                 budget: Budget | None = None, kernel: bool = True) -> None:
        self.suggestion = suggestion
        self.overlay: Overlay | KernelView = overlay
        # Which overlay it runs in: "kernel" (overlayfs; Bash runs too) or "paths" (Claude
        # Code's path rewriting; a command that is not read-only is a boundary), and why.
        self.overlay_kind = "paths"
        self.overlay_note = "not started yet"
        self._want_kernel = kernel
        self.max_turns = max_turns
        self.max_messages = max_messages
        self.grace = grace
        self.state: State = "running"
        self.transcript: list[dict[str, Any]] = []
        self._emitted_at: list[float] = []  # when each transcript message arrived
        self.turns = 0
        self.tool_use_count = 0
        self.started_at = time.monotonic()
        self.finished_at: float | None = None
        self.abort = main.context.abort.child()  # the session stopping stops it too
        self._main = main
        self._stop: Boundary | None = None
        self._final: Boundary | None = None
        self.budget = budget or Budget()
        self.gate = SpeculationGate(overlay, self.abort, inner=main.permissions, on_boundary=self._record, budget=self.budget)
        self.file_state = LayeredFileState(main.context.file_state)
        self.scheduler: Scheduler
        self._tasks = TaskOwner()  # its forked loop's task: it lives no longer than the speculation
        self._task: asyncio.Future[None] | None = None

    # -- running ---------------------------------------------------------------------------
    async def _choose_overlay(self) -> None:
        """A kernel overlay where the sandbox and overlayfs can start (so commands that write,
        the tests say, can run too); else the path-rewriting one, saying why."""
        if not self._want_kernel:
            self.overlay_note = "the kernel overlay was not asked for (kernel=False)"
            return
        settings = getattr(self._main.permissions, "sandbox", None)
        settings = settings if isinstance(settings, SandboxSettings) else SandboxSettings()
        if switch() == "off":
            self.overlay_note = "NBTOOLSCHED_SANDBOX=off: no sandbox for commands, so no kernel overlay"
            return
        found = await settings.probe()
        if not found.ok:
            self.overlay_note = f"the OS sandbox cannot start here ({found.reason}), so no kernel overlay"
            return
        paths = self.overlay
        assert isinstance(paths, Overlay)
        try:
            view = await asyncio.to_thread(KernelView, paths.cwd, workdir=paths.workdir)
        except (OverlayUnavailable, OSError) as err:
            self.overlay_note = f"overlayfs could not be mounted ({err}), so Claude Code's path-rewriting overlay is used"
            return
        self.overlay = self.gate.overlay = view
        self.scheduler.context.overlay = view.mount
        self.overlay_kind = "kernel"
        self.overlay_note = "a kernel overlay (overlayfs): every tool, shell commands that write included, works on one copy-on-write view"

    async def _drive(self, run_loop: RunLoop, prompt: list[dict[str, Any]]) -> None:
        try:
            await self._choose_overlay()
        except BaseException:
            self.finished_at = time.monotonic()
            self._final = Boundary("error", detail="the overlay could not be set up")
            self.state = "finished"
            raise
        self.budget.started = time.monotonic()
        request = LoopRequest(prompt, self.scheduler, self.abort, self.max_turns, self._emit)
        error: BaseException | None = None
        try:
            async with TaskOwner() as tasks:  # leaving it, the loop and the abort watch have ended
                loop_task = tasks.start(run_loop(request))
                watcher = tasks.start(self.abort.wait())
                try:
                    await asyncio.wait({loop_task, watcher}, return_when=asyncio.FIRST_COMPLETED, timeout=self.budget.seconds)
                    if not loop_task.done() and not self.abort.aborted:  # the time budget ran out mid-call
                        self._record(Boundary("budget", detail=f"its time budget of {self.budget.seconds:g} s ran out"))
                    if not loop_task.done():  # aborted: give the loop a moment to answer its calls
                        await asyncio.wait({loop_task}, timeout=self.grace)
                    if not loop_task.done():
                        loop_task.cancel()
                        await asyncio.wait({loop_task})
                    if not loop_task.cancelled():
                        error = loop_task.exception()
                except asyncio.CancelledError:
                    self.abort.abort(STOPPED_FROM_OUTSIDE)
                    raise  # leaving the block cancels the loop and waits for it
        finally:
            self.finished_at = time.monotonic()
            self._final = self._conclude(error)
            if self.state == "running":
                self.state = "finished"

    def _emit(self, message: Any) -> None:
        if self.state not in ("running",) or self._final is not None:
            return  # a late message from a loop that was already stopped
        item = as_message_dicts([message])[0]
        self.transcript.append(item)
        self._emitted_at.append(time.monotonic())
        if item["role"] == "assistant":
            self.turns += 1
        elif isinstance(item["content"], list):
            self.tool_use_count += sum(1 for b in item["content"] if b.get("type") == "tool_result" and not b.get("is_error"))
        if len(self.transcript) >= self.max_messages:
            self._record(Boundary("max_messages", detail=_plural(len(self.transcript), "message")))

    def _record(self, boundary: Boundary) -> None:
        if self._stop is None:
            self._stop = boundary
        self.abort.abort(SPECULATION_BOUNDARY)

    def _conclude(self, error: BaseException | None) -> Boundary:
        if self._stop is not None:
            return self._stop
        if error is not None:
            return Boundary("error", detail=(str(error) or type(error).__name__)[:200])
        if self.abort.aborted:
            return Boundary("aborted", detail=self.abort.reason or "")
        last = self.transcript[-1] if self.transcript else None
        if last is not None and last["role"] == "assistant" and not _has_tool_use(last):
            return Boundary("complete")
        kind: BoundaryKind = "max_turns" if self.turns >= self.max_turns else "incomplete"
        return Boundary(kind, detail=_plural(self.turns, "turn"))

    # -- looking at it -----------------------------------------------------------------------
    @property
    def done(self) -> bool:
        return self._task is not None and self._task.done()

    @property
    def boundary(self) -> Boundary | None:
        """Where it stopped; None while it is still running."""
        return self._final

    @property
    def time_spent(self) -> float:
        return (self.finished_at or time.monotonic()) - self.started_at

    async def wait(self) -> "Speculation":
        """Until the forked loop has stopped (cancelling this wait does not stop it)."""
        assert self._task is not None
        await asyncio.shield(self._task)
        return self

    def changes(self) -> list[FileChange]:
        self._require_open("list the changes of")
        return self.overlay.changes()

    def stop(self) -> None:
        """Stop the run now (the user started typing); accept or reject it afterwards."""
        if self._stop is None and self._final is None:
            self._stop = Boundary("aborted", detail="stopped from outside")
        self.abort.abort(STOPPED_FROM_OUTSIDE)

    # -- deciding ------------------------------------------------------------------------------
    async def accept(self, *, allow_protected: bool = False, paths: Iterable[str] | None = None) -> AcceptResult:
        """Stop if running, copy the overlay back (all or nothing), return the clean messages.

        ``paths`` (paths relative to cwd, as ``changes()`` names them) keeps only those
        changes: the others are rejected, not applied, and not checked (a file the user
        rejected may have changed on disk meanwhile). With the kernel overlay, a chosen
        file also brings the folders above it that the real tree lacks. The messages then
        end with a note telling the model which changes were left out, and
        ``AcceptResult.rejected`` lists them. A path that is not a change is a ``ValueError``.

        With a kernel overlay, a change in a place programs run from (``.vscode/``, a new
        ``.mcp.json``...) is refused unless ``allow_protected=True`` (read ``changes()`` first).

        Raises ``OverlayConflict`` naming every chosen file that changed on disk meanwhile
        (its bytes, mode or kind); nothing is written then (a commit that fails at the last
        instant is undone; ``applied`` names any file the undo could not restore), and
        the speculation stays open (reject it, or retry, with fewer paths say).
        """
        self._require_open("accept")
        if paths is not None:
            if isinstance(paths, str):
                raise TypeError("paths must be a list of paths, not one string")
            paths = list(paths)
        accepted_at = time.monotonic()
        if not self.done:
            self.stop()
        await self.wait()
        boundary = self._final
        assert boundary is not None
        kept = clean_with_sources(self.transcript, self.overlay.to_real)
        if not boundary.complete:
            kept = cut_to_continuable(kept)
        everything = self.overlay.changes()
        if isinstance(self.overlay, KernelView):
            changes = self.overlay.apply(allow_protected=allow_protected, max_bytes=self.budget.upper_bytes, paths=paths)
        else:
            changes = self.overlay.apply(paths)
        applied = {c.path for c in changes}
        rejected = [c for c in everything if c.path not in applied]
        self._merge_file_state(changes, {c.path for c in rejected})
        self.overlay.discard()
        self.state = "accepted"
        saved = self._time_saved(kept, boundary, accepted_at)
        messages = [m for m, _ in kept]
        if rejected:  # the model must not go on believing those files hold what it wrote
            messages = _with_note(messages, not_accepted([c.path for c in rejected]))
        required = not boundary.complete or bool(rejected)  # the messages end with a user message
        return AcceptResult(messages, changes, boundary, saved, required, self.tool_use_count, rejected)

    def _time_saved(self, kept: list[tuple[dict[str, Any], int]], boundary: Boundary, accepted_at: float) -> float:
        """Work the user will not wait for: up to the last message that was kept.

        (Claude Code counts up to the accept or the boundary, which also counts work that
        was then thrown away, such as a turn cut off mid-stream.)
        """
        if not kept:
            return 0.0
        until = boundary.completed_at if boundary.complete else self._emitted_at[kept[-1][1]]
        return max(0.0, min(accepted_at, until) - self.started_at)

    async def reject(self) -> None:
        """Stop if running and delete the overlay; the real tree is left exactly as it was."""
        if self.state == "rejected":
            return
        self._require_open("reject")
        if not self.done:
            self.stop()
        await self.wait()
        self.overlay.discard()
        self.state = "rejected"

    def _require_open(self, what: str) -> None:
        if self.state in ("accepted", "rejected"):
            raise RuntimeError(f"cannot {what} a speculation that was already {self.state}")

    def _merge_file_state(self, changes: list[FileChange], rejected: Collection[str] = ()) -> None:
        """What the run read stays known to the session: Edit after accept needs no re-Read.
        A file whose change was rejected is not: the run knew a version that was never applied."""
        main, overlay = self._main.context.file_state, self.overlay
        changed = {c.path for c in changes}
        for state in self.file_state.own_states():
            if self.file_state.changed_since_read(state.path):
                continue
            if is_inside(state.path, overlay.tree):
                rel = os.path.relpath(state.path, overlay.tree)
                real = overlay.real_path(rel)
            elif is_inside(state.path, overlay.cwd) and os.path.relpath(state.path, overlay.cwd) not in changed:
                rel, real = os.path.relpath(state.path, overlay.cwd), state.path
            else:
                continue
            if rel in rejected:
                continue
            if os.path.isfile(real):
                main.record(real, partial=state.partial)

    def __repr__(self) -> str:
        where = self._final.describe() if self._final else "running"
        return f"<Speculation {self.suggestion[:40]!r} {self.state} ({where}), {_plural(self.turns, 'turn')}>"


def _with_note(messages: list[dict[str, Any]], note: str) -> list[dict[str, Any]]:
    """``messages`` ending with ``note`` as user text: joined to a last user message (after
    its tool results), else as a new user message, so roles keep alternating."""
    block = {"type": "text", "text": note}
    if messages and messages[-1]["role"] == "user":
        last = messages[-1]
        content = last["content"] if isinstance(last["content"], list) else [{"type": "text", "text": last["content"]}]
        return messages[:-1] + [{**last, "content": [*content, block]}]
    return messages + [{"role": "user", "content": [block]}]


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _has_tool_use(message: dict[str, Any]) -> bool:
    content = message["content"]
    return isinstance(content, list) and any(b.get("type") == "tool_use" for b in content)


def _fork_scheduler(spec: Speculation, main: Scheduler, messages: list[dict[str, Any]]) -> Scheduler:
    """The session's tools, hooks and cap, with the speculation's gate, abort and caches."""
    source = main.registry
    registry = ToolRegistry(gates=dict(source.gates), simple=source.simple, simple_tools=source.simple_tools)
    for tool in source.full_pool:
        registry.register(spec.gate.view(tool))
    session_dir = os.path.realpath(main.context.session_dir)
    if is_inside(session_dir, spec.overlay.cwd):  # large results must not land in cwd either
        session_dir = os.path.join(spec.overlay.workdir, "session")
    base = main.context
    context = ToolContext(
        spec.overlay.cwd,
        abort=spec.abort,
        file_state=spec.file_state,
        permission_context=base.permission_context,
        session_dir=session_dir,
        session_id=base.session_id,
        transcript_path=os.path.join(spec.overlay.workdir, "transcript.jsonl"),  # never the session's own file
        registry=registry,
        messages=messages,
        options=dict(base.options),
    )
    return Scheduler(registry, permissions=spec.gate, hooks=main.hooks, max_concurrency=main.max_concurrency, context=context)


def _default_root(main: Scheduler) -> str:
    session = os.path.realpath(main.context.session_dir)
    if is_inside(session, main.context.cwd):
        return tempfile.gettempdir()
    return os.path.join(session, "speculation")


class SpeculationOptions(TypedDict, total=False):
    """The keywords of ``start_speculation`` a ``SpeculationPipeline`` passes on to each run."""

    overlay_root: str | os.PathLike[str] | None
    allow_edits: bool
    max_turns: int
    max_messages: int
    grace: float
    kernel: bool
    max_seconds: float | None
    max_overlay_bytes: int | None


class SpeculateOptions(SpeculationOptions, total=False):
    """What ``speculate`` takes after the suggestion and the loop: ``start_speculation``'s keywords."""

    scheduler: Required[Scheduler]
    messages: Sequence[MessageLike]


def start_speculation(
    suggestion: str,
    run_loop: RunLoop,
    *,
    scheduler: Scheduler,
    messages: Sequence[MessageLike] = (),
    overlay_root: str | os.PathLike[str] | None = None,
    allow_edits: bool = True,
    max_turns: int = MAX_SPECULATION_TURNS,
    max_messages: int = MAX_SPECULATION_MESSAGES,
    grace: float = 5.0,
    kernel: bool = True,
    max_seconds: float | None = None,
    max_overlay_bytes: int | None = None,
) -> Speculation:
    """Start speculating on ``suggestion`` now (as a task) and return the live run.

    ``scheduler`` is the session's: its registry, permissions, hooks, cap, cwd and file
    state are what the forked run starts from. ``messages`` is the conversation so far.
    """
    if not isinstance(suggestion, str) or not suggestion.strip():
        raise ValueError("suggestion must be a non-empty string")
    if not callable(run_loop):
        raise TypeError(f"run_loop must be an async callable taking a LoopRequest, got {type(run_loop).__name__}")
    if max_turns < 1 or max_messages < 1:
        raise ValueError(f"max_turns and max_messages must be at least 1 (got {max_turns}, {max_messages})")
    prompt = as_message_dicts(messages) + [{"role": "user", "content": [{"type": "text", "text": suggestion}]}]
    overlay = Overlay(scheduler.context.cwd, overlay_root if overlay_root is not None else _default_root(scheduler))
    budget = Budget()
    if max_seconds is not None:
        budget.seconds = max_seconds
    if max_overlay_bytes is not None:
        budget.upper_bytes = max_overlay_bytes
    spec = Speculation(suggestion, overlay, scheduler, max_turns=max_turns, max_messages=max_messages, grace=grace,
                       budget=budget, kernel=kernel)
    spec.gate.allow_edits = allow_edits
    spec.scheduler = _fork_scheduler(spec, scheduler, prompt)
    spec._task = spec._tasks.start(spec._drive(run_loop, prompt), name="nbtoolsched-speculation")
    return spec


async def speculate(suggestion: str, run_loop: RunLoop, **options: Unpack[SpeculateOptions]) -> Speculation:
    """Run a speculation to its end (complete, or a boundary) and return it, undecided.

    Cancelling this call stops the speculation and waits for its loop to end: it never
    goes on behind a caller that is gone."""
    spec = start_speculation(suggestion, run_loop, **options)
    try:
        return await spec.wait()
    except asyncio.CancelledError:
        spec.stop()
        await spec._tasks.aclose()
        raise
