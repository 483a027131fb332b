"""The notebook session: one scheduler, one approval broker, one UI pump per kernel.

``%load_ext nbtoolsched`` makes one. It owns the registry (built-ins plus tools defined
in cells), the permissions read from the settings files, the broker that holds the
approvals the panels show, and the runs it started. It starts runs and renders them;
the scheduling itself is the scheduler's.
"""

from __future__ import annotations

from .._errors import SessionError

import asyncio
import logging
import os
from typing import Any, Mapping

from ..permissions._approvals import ApprovalAnswer, ApprovalBroker, BrokerEvent, Policy, policy_from_env
from ..permissions._errors import PermissionConfigError
from ..permissions._rules import Behavior
from ..permissions._engine import Permissions
from ..permissions._modes import MODES
from .._registry import ToolRegistry
from .._tasks import TaskOwner
from ..scheduling._scheduler import DEFAULT, Scheduler
from ..scheduling._engine import max_tool_use_concurrency
from .._tool._abort import USER_ABORT
from .._tool._base import Tool
from .._sync import add_blocking_hook, make_reentrant
from ._blocking import Reach, blocking, clicks_reach_blocked_cell
from ._cellparse import IdMaker, ParsedCell, parse_cell
from ._interrupt import InterruptGuard
from ._panel import RunPanel
from ._pump import Handoff, UIPump
from ._run import NotebookRun, TimelineView

__all__ = ["NotebookSession", "POLICIES", "SessionError", "tool_rows"]

log = logging.getLogger(__name__)
POLICIES = ("ask", "allow", "deny", "defer")


def _broker_policy(policy: str) -> Policy:
    if policy == "ask":
        return "interactive"
    if policy in ("interactive", "allow", "deny", "defer"):
        return policy  # type: ignore[return-value]  # one of Policy's values, checked just above
    raise SessionError(f"unknown approval policy {policy!r}; use one of {', '.join(POLICIES)}")


class NotebookSession:
    def __init__(
        self,
        shell: Any = None,
        *,
        cwd: str | os.PathLike[str] | None = None,
        registry: ToolRegistry | None = None,
        permissions: Permissions | None = None,
        policy: str | None = None,
        loop: asyncio.AbstractEventLoop | None = None,
        rate: float = 10.0,
    ) -> None:
        self.shell = shell
        self.loop = loop or _current_loop()
        self.cwd = os.path.abspath(os.fspath(cwd or os.getcwd()))
        self.notices: list[str] = []
        self.broker = ApprovalBroker(_broker_policy(policy) if policy else policy_from_env("interactive"))
        self.blocked = 0  # > 0 while a cell blocks on a run (--wait, run_sync)
        # The kernel's lifetime: every background task the notebook layer starts (the UI
        # pump, %%agent turns, waits on speculations, Accept/Reject) is this owner's, and
        # unloading cancels what is left. Runs of %%toolcall are the scheduler's (submit).
        self.tasks = TaskOwner(self.loop)
        self.permissions = permissions if permissions is not None else self._load_permissions()
        if registry is None:
            from ..tools import default_registry

            registry = default_registry(self.cwd)
        self.registry = registry
        # The broker answers every run's approvals (the scheduler's approver comes before
        # the permissions'); the permissions keep the hooks of the settings files.
        self.scheduler = Scheduler(self.registry, permissions=self.permissions, approver=self.broker, cwd=self.cwd)
        self.context = self.scheduler.context  # where the next run starts; each run hands back its own
        self.max_concurrency = self.scheduler.max_concurrency
        self.pump = UIPump(self.loop, rate, tasks=self.tasks)
        self.handoff = Handoff(self.loop)
        self.make_id = IdMaker()
        self.runs: list[NotebookRun] = []
        self.diff_views: list[Any] = []
        self.model: Any = None
        self._from_namespace: dict[str, Tool] = {}  # tools this session took from cells, by name
        self.guard = InterruptGuard(self.loop, self.interrupt, getattr(shell, "kernel", None))
        self.kernel = getattr(shell, "kernel", None)
        self._brokers: list[ApprovalBroker] = []
        self._watch(self.broker)
        self._unhook = add_blocking_hook(lambda: blocking(self))
        self.closed = False

    def _load_permissions(self) -> Permissions:
        """The rules of the settings files; a file that cannot be read stops the session.

        Falling back to no rules would fail open: deny rules the person wrote would be
        gone without a word. So the error is raised (the extension does not load and the
        cell says why) until the file is fixed."""
        try:
            return Permissions.from_settings(self.cwd)
        except (PermissionConfigError, OSError, ValueError) as err:
            raise SessionError(
                f"the permission settings could not be read, so nbtoolsched did not start (running without "
                f"their deny rules would be unsafe): {err}. Fix the file, then run %load_ext nbtoolsched again."
            ) from None

    # -- approvals nobody can click ---------------------------------------------------------------
    def _watch(self, broker: ApprovalBroker) -> None:
        """While a cell blocks where clicks cannot arrive, a new ask is denied, not left hanging."""
        self._brokers.append(broker)
        broker.subscribe(lambda event: self._on_ask(broker, event))

    def _on_ask(self, broker: ApprovalBroker, event: BrokerEvent) -> None:
        if event.kind != "added" or not self.blocked:
            return
        reach = self.reach()
        if not reach and event.request.tool_use_id in broker.pending:
            # answered as a headless policy would: nobody can click while this cell blocks
            broker.answer(event.request.tool_use_id, ApprovalAnswer("deny", f"nobody could click: {reach.why}", by_policy=True))

    def reach(self) -> Reach:
        return clicks_reach_blocked_cell(self.kernel)

    def would_ask(self, blocks: list[dict[str, Any]], mode: str | None) -> list[str]:
        """The calls that would wait for a person, judged before anything runs (no approver asked)."""
        asking = []
        saved = self.permissions.mode
        try:
            if mode is not None:
                self.permissions.mode = mode
            for block in blocks:
                tool = self.registry.get(block["name"])
                if tool is None:
                    continue
                try:
                    verdict = self.permissions.explain(tool, dict(block.get("input") or {}), cwd=self.cwd)
                except Exception:  # noqa: BLE001 - cannot tell: assume it asks
                    asking.append(block["name"])
                    continue
                if verdict.behavior == "ask" and self.permissions.mode not in ("dontAsk",):
                    asking.append(block["name"])
        finally:
            self.permissions.mode = saved
        return asking

    # -- runs ---------------------------------------------------------------------------------------
    def parse(self, body: str, namespace: Mapping[str, Any] | None = None, *, first_line: int = 1) -> ParsedCell:
        """The cell body as tool_use blocks (CellError when it cannot be)."""
        ns = namespace if namespace is not None else getattr(self.shell, "user_ns", {})
        names = [t.name for t in self.registry.full_pool]
        return parse_cell(body, ns, lambda name: self.registry.get(name) is not None, names, self.make_id,
                          required_fields=self.required_fields, first_line=first_line)

    def required_fields(self, name: str) -> list[str]:
        """A tool's required input fields, in schema order (what ``- Bash: ls`` fills)."""
        tool = self.registry.get(name)
        model = getattr(tool, "input_model", None)
        fields = getattr(model, "model_fields", {}) if model is not None else {}
        return [key for key, info in fields.items() if info.is_required()]

    def submit(
        self,
        blocks: list[dict[str, Any]],
        *,
        stream: bool = False,
        delay: float = 0.25,
        mode: str | None = None,
        max_concurrency: int | None = None,
        policy: str | None = None,
        label: str | None = None,
        origin: str | None = None,
    ) -> NotebookRun:
        """Start the run as a task on the kernel loop and return it with its live panel.

        The session passes its settings (and this cell's overrides) to the scheduler for
        this run only, and keeps the context the run ends with for the next cell. A run
        still going from the same ``origin`` (the cell, or the --name) is stopped first, so
        a re-run never leaves an orphan waiting for approval forever.
        """
        self._check_open()
        if delay < 0:
            raise SessionError(f"--delay must be zero or more seconds, got {delay}")
        if mode is not None and mode not in MODES:
            raise SessionError(f"unknown permission mode {mode!r}; use one of {', '.join(MODES)}")
        if max_concurrency is not None and max_concurrency < 1:
            raise SessionError(f"--max-concurrency must be 1 or more, got {max_concurrency}")
        broker = self.broker
        if policy is not None and _broker_policy(policy) != broker.policy:
            # an explicit option beats NBTOOLSCHED_APPROVAL (--policy ask asks even under allow)
            broker = ApprovalBroker(_broker_policy(policy))
            self._watch(broker)
        replaced = self._replace_earlier(origin)
        handle = self.scheduler.submit(
            blocks,
            mode=mode if mode is not None else DEFAULT,
            max_concurrency=max_concurrency if max_concurrency is not None else self.max_concurrency,
            approver=broker,
            context=self.context,
            stream_delay=delay if stream else None,
            cancel_on_shell_error=stream,  # streamed, it behaves as a streaming executor does
        )
        for number, batch in enumerate(self.scheduler.partition(blocks), 1):
            for call in batch.calls:  # known before anything runs, so queued rows show it
                state = handle.states.get(call.tool_use_id)
                if state is not None and not state.batch:
                    state.batch = number
        label = label or f"toolcall #{len(self.runs) + 1}"
        panel = RunPanel(handle, pump=self.pump, handoff=self.handoff, broker=broker, title=label, cwd=self.cwd,
                         max_concurrency=max_concurrency if max_concurrency is not None else self.max_concurrency)
        if replaced:
            panel.notice = f"stopped the earlier run still going ({', '.join(replaced)})"
        run = NotebookRun(handle, panel, blocks, label, on_interrupt=self.interrupt)
        run.origin = origin
        self.runs.append(run)
        assert handle.task is not None
        handle.task.add_done_callback(lambda task: self._finished(run, task))
        return run

    def _replace_earlier(self, origin: str | None) -> list[str]:
        if origin is None:
            return []
        stopped = []
        for earlier in self.live_runs():
            if getattr(earlier, "origin", None) == origin:
                earlier.panel.notice = "replaced by a new run of the same cell"
                earlier.panel.stop("a new run of the same cell")
                stopped.append(earlier.label)
        return stopped

    def wait(self, run: NotebookRun) -> None:
        """Block the cell until the run ends (``--wait``), keeping the kernel's loop turning."""
        task = run.handle.task
        assert task is not None
        make_reentrant(self.loop)
        with blocking(self):
            try:
                self.loop.run_until_complete(task)
            except KeyboardInterrupt:
                run.panel.stop("a kernel interrupt")
                self.loop.run_until_complete(task)  # every call gets its result first
                raise
            finally:
                self.pump.mark(run.panel)
                run.panel.render()  # the final record, inside this cell's output

    def _finished(self, run: NotebookRun, task: asyncio.Future[Any]) -> None:
        if task.cancelled():
            run.panel.failure = "the run was cancelled"
        elif task.exception() is not None:
            err = task.exception()
            run.panel.failure = f"{type(err).__name__}: {err}"
            log.error("a toolcall run failed", exc_info=err)
        if run.handle.context is not None:  # the next cell goes on from where this run left the context
            self.context = run.handle.context.for_call("", self.context.abort)
        self.pump.mark(run.panel)

    @property
    def last_run(self) -> NotebookRun | None:
        return self.runs[-1] if self.runs else None

    def live_runs(self) -> list[NotebookRun]:
        return [r for r in self.runs if not r.done()]

    def interrupt(self) -> None:
        """A kernel interrupt: every running run and speculation stops; every call gets a result."""
        for run in self.live_runs():
            run.abort(USER_ABORT, by="a kernel interrupt")
        for view in self.diff_views:
            if not view.speculation.done:
                view.speculation.stop()

    # -- settings -----------------------------------------------------------------------------------
    def set_mode(self, mode: str) -> None:
        if mode not in MODES:
            raise SessionError(f"unknown permission mode {mode!r}; use one of {', '.join(MODES)}")
        self.permissions.mode = mode

    def add_rule(self, behavior: Behavior, rule: str) -> str:
        try:
            return self.permissions.add_session_rule(rule, behavior).text
        except PermissionConfigError as err:
            raise SessionError(str(err)) from None

    def set_concurrency(self, value: int) -> None:
        if value < 1:
            raise SessionError(f"the concurrency cap must be 1 or more, got {value}")
        self.max_concurrency = max_tool_use_concurrency(value)

    def set_policy(self, policy: str) -> None:
        self.broker.policy = _broker_policy(policy)

    def effective_policy(self, policy: str | None) -> str:
        """Who answers a run's approvals: its --policy, else the session's (ask = a person)."""
        chosen = _broker_policy(policy) if policy is not None else self.broker.policy
        return "ask" if chosen == "interactive" else chosen

    # -- tools from cells ------------------------------------------------------------------------------
    def register(self, item: Any, *, replace: bool = True) -> Tool:
        tool = self.registry.register(item, replace=replace)
        self._from_namespace[tool.name] = tool
        return tool

    def register_from_namespace(self, namespace: Mapping[str, Any]) -> list[str]:
        """Tools defined in cells (``@nts.tool`` objects) join the registry; returns new names.

        A redefinition replaces the tool the session took earlier; a name that belongs to
        a built-in is left alone (with a notice), so a cell cannot silently swap Read."""
        added = []
        for var, value in list(namespace.items()):
            if var.startswith("_") or not isinstance(value, Tool):
                continue
            current = self.registry.get(value.name)
            if current is value:
                continue
            if current is not None and self._from_namespace.get(value.name) is not current:
                note = f"{var}: a tool named {value.name!r} already exists; use %toolsched register {var} to replace it"
                if note not in self.notices:
                    self.notices.append(note)
                continue
            self.register(value)
            added.append(value.name)
        return added

    # -- showing ------------------------------------------------------------------------------------------
    def timeline(self) -> TimelineView:
        run = self.last_run
        trace = run.handle.trace if run is not None else self.scheduler.last_trace
        return TimelineView(trace, run.label if run is not None else "")

    def pending_text(self) -> str:
        pending = self.broker.snapshot()
        if not pending:
            return "no approvals pending"
        lines = [f"{len(pending)} pending approval{'s' if len(pending) != 1 else ''}:"]
        lines += [f"  {p['tool_use_id']}  {p['tool_name']}: {p['reason']}" for p in pending]
        return "\n".join(lines)

    def describe(self) -> str:
        perms = self.permissions
        rules = {b: [r.text for r in perms.rules.of(b)] for b in ("allow", "deny", "ask")}
        lines = [
            f"mode: {perms.mode}",
            f"approval policy: {'ask' if self.broker.policy == 'interactive' else self.broker.policy}",
            f"max concurrency: {self.max_concurrency}",
            f"cwd: {self.cwd}",
        ]
        lines += [f"{b} rules: {', '.join(v) if v else '(none)'}" for b, v in rules.items()]
        lines.append(perms.sandbox.describe())
        lines.append(f"runs: {len(self.runs)} ({len(self.live_runs())} running)")
        lines.append(self.pending_text())
        lines += [f"note: {n}" for n in self.notices]
        return "\n".join(lines)

    # -- lifecycle ------------------------------------------------------------------------------------------
    def _check_open(self) -> None:
        if self.closed:
            raise SessionError("this nbtoolsched session was unloaded; run %load_ext nbtoolsched again")

    def close(self) -> None:
        """Unload: abort runs (their calls still get results), close widgets, stop the pump,
        and cancel the background tasks that are left."""
        if self.closed:
            return
        self.interrupt()
        self._unhook()
        self.guard.uninstall()
        self.pump.close()
        for run in self.runs:
            run.panel.close()
        for view in self.diff_views:
            view.close()
        self.tasks.cancel()
        self.closed = True


def _current_loop() -> asyncio.AbstractEventLoop:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        raise SessionError(
            "nbtoolsched needs the kernel's running event loop: load it in a Jupyter kernel "
            "(a plain terminal IPython has no loop running between cells)"
        ) from None


def tool_rows(registry: ToolRegistry) -> list[dict[str, Any]]:
    """What ``%tools`` lists: name, aliases, read-only / concurrency-safe (for an empty input), deferral."""
    rows = []
    for tool in registry.full_pool:
        probe = _probe_input(tool)
        rows.append({
            "name": tool.name,
            "aliases": ", ".join(tool.aliases),
            "read_only": _flag(tool.is_read_only, probe),
            "concurrency_safe": _flag(tool.is_concurrency_safe, probe),
            "deferred": registry.is_deferred(tool),
            "active": registry.is_active(tool),
            "mcp": bool(tool.is_mcp),
        })
    return rows


def _probe_input(tool: Tool) -> Any:
    model = getattr(tool, "input_model", None)
    try:
        return model.model_construct() if model is not None else None
    except Exception:  # noqa: BLE001
        return None


def _flag(check: Any, probe: Any) -> str:
    """yes / no, or "depends" when the answer needs a real input (Bash, MCP hints aside)."""
    try:
        return "yes" if check(probe) else "no"
    except Exception:  # noqa: BLE001 - decided per input, e.g. from the parsed command
        return "depends"
