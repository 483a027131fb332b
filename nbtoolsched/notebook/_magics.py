"""The magics: ``%%toolcall``, ``%%agent``, ``%tools``, ``%toolsched``, ``%speculate``, ``%replay``.

Each magic parses, hands the work to the session, and returns something to display.
Bad input raises IPython's ``UsageError``: one short red line in the cell output, no
traceback, and nothing else in the kernel is touched.
"""

from __future__ import annotations

import html
import keyword
import shlex
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, line_cell_magic, line_magic, magics_class, no_var_expand
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring

from ..permissions._modes import MODES
from ..permissions._rules import Behavior
from ._cellparse import CellError
from ._interrupt import is_interrupt
from ._record import announce_finished_records
from ._session import POLICIES, NotebookSession, SessionError, tool_rows

__all__ = ["ToolMagics", "TextView"]

_TOOLSCHED_HELP = """%toolsched                      show mode, rules, concurrency, pending approvals
%toolsched mode [MODE]          show or set the permission mode ({modes})
%toolsched allow|deny|ask RULE  add a session rule, e.g. %toolsched allow Bash(git log:*)
%toolsched concurrency N        set the concurrency cap
%toolsched policy POLICY        approval policy: ask, allow, deny, defer
%toolsched pending              list calls waiting for approval
%toolsched trace                the last run's timeline
%toolsched register VAR [...]   add (or replace) a tool defined in a cell
%toolsched model VAR            the model %speculate uses
%toolsched abort                stop every running run"""


class TextView:
    """Plain text that also shows as preformatted HTML."""

    def __init__(self, text: str) -> None:
        self.text = text

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return {"text/plain": self.text, "text/html": f"<pre style='font-size:12px'>{html.escape(self.text)}</pre>"}

    def __repr__(self) -> str:
        return self.text


@magics_class
class ToolMagics(Magics):
    def __init__(self, shell: Any, session: NotebookSession) -> None:
        super().__init__(shell)
        self.session = session

    @property
    def namespace(self) -> dict[str, Any]:
        """The notebook's variables (a registered magic always has its shell)."""
        assert self.shell is not None
        namespace: dict[str, Any] = self.shell.user_ns
        return namespace

    # -- %%toolcall ---------------------------------------------------------------------------------
    @no_var_expand
    @magic_arguments(name="%toolcall")  # the help then says %%toolcall (IPython adds one %)
    @argument("--name", metavar="VAR", help="bind the run to this variable (then: results = await VAR)")
    @argument("--wait", action="store_true",
              help="block until every call has its result, so Run All goes on in order (needs a --policy, "
                   "or a kernel where clicks reach a busy cell)")
    @argument("--stream", action="store_true", help="feed the calls one by one, as if a model were streaming them")
    @argument("--delay", type=float, default=None, metavar="S", help="with --stream: seconds between calls (default 0.25)")
    @argument("--mode", choices=MODES, help="permission mode for this run")
    @argument("--max-concurrency", type=int, metavar="N", help="concurrency cap for this run")
    @argument("--policy", choices=POLICIES, help="who answers approvals for this run (ask = the panel's buttons)")
    @cell_magic
    def toolcall(self, line: str, cell: str) -> Any:
        """Run the tool calls in the cell body; returns at once with a live panel.

        The body: a JSON/YAML list of tool_use blocks, an assistant message, a content
        list, or the short form ``- Read: {file_path: README.md}`` (``- Bash: ls -la``
        for a tool's one required field). A value written exactly as ``$name`` is the
        notebook variable ``name`` (never evaluated). With --wait the cell blocks until
        the run ends, and shows the final state."""
        args = parse_argstring(self.toolcall, line)
        if args.name is not None and (not args.name.isidentifier() or keyword.iskeyword(args.name)):
            raise UsageError(f"--name {args.name!r}: not a valid Python variable name")
        if args.delay is not None and not args.stream:
            raise UsageError("--delay only applies with --stream")
        try:
            blocks = self.session.parse(cell, self.namespace, first_line=2)
            if args.wait:
                self._check_wait(blocks, args.mode, args.policy)
            run = self.session.submit(
                blocks, stream=args.stream, delay=0.25 if args.delay is None else args.delay, mode=args.mode,
                max_concurrency=args.max_concurrency, policy=args.policy,
                label=f"toolcall {args.name}" if args.name else None,
                origin=f"name:{args.name}" if args.name else _cell_id(self.shell),
            )
        except (CellError, SessionError, TypeError, ValueError) as err:
            raise UsageError(str(err)) from None
        for note in getattr(blocks, "warnings", ()):
            print(f"nbtoolsched: {note}")
        if args.name:
            self.namespace[args.name] = run
        if not args.wait:
            return run
        from IPython.display import display

        display(run)
        try:
            self.session.wait(run)
        except KeyboardInterrupt:
            raise UsageError(f"interrupted: {run.label} was stopped; every call has its result ({run.summary()})") from None
        return None

    def _check_wait(self, blocks: list[dict[str, Any]], mode: str | None, policy: str | None) -> None:
        """--wait with calls that ask a person, where no click can reach the blocked cell: refuse now."""
        if self.session.effective_policy(policy) != "ask":
            return
        asking = self.session.would_ask(blocks, mode)
        if not asking:
            return
        reach = self.session.reach()
        if not reach:
            raise UsageError(
                f"--wait cannot wait for your click here: {reach.why}. {', '.join(dict.fromkeys(asking))} would ask for "
                "approval, so the cell would hang. Add --policy allow (or deny, defer) to answer without a person, "
                "or drop --wait and answer in the panel (then `await run` in a later cell)."
            )

    # -- %%agent / %agent (see _agent_cell) -----------------------------------------------------------------
    @no_var_expand
    @line_cell_magic
    def agent(self, line: str, cell: str | None = None) -> Any:
        """``%%agent [--model M] [--new] ...``: the cell is your message to the agent; the
        conversation goes on across cells. ``%agent help`` lists the options and commands."""
        from ._agent_cell import agent_command, run_agent_cell

        try:
            if cell is None:
                return TextView(agent_command(self.session, line, self.namespace))
            return run_agent_cell(self.session, line, cell, self.namespace)
        except (SessionError, TypeError, ValueError) as err:
            raise UsageError(str(err)) from None

    # -- %tools -------------------------------------------------------------------------------------------
    @line_magic
    def tools(self, line: str = "") -> TextView:
        """List the session's tools: aliases, read-only, concurrency-safe, deferred."""
        rows = tool_rows(self.session.registry)
        head = ("tool", "aliases", "read-only", "parallel", "deferred")
        table = [head] + [(r["name"] + (" (mcp)" if r["mcp"] else ""), r["aliases"] or "-", r["read_only"],
                           r["concurrency_safe"], "yes" if r["deferred"] else "no") for r in rows]
        widths = [max(len(row[i]) for row in table) for i in range(len(head))]
        lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in table]
        return TextView("\n".join(lines))

    # -- %toolsched ----------------------------------------------------------------------------------------
    @no_var_expand
    @line_magic
    def toolsched(self, line: str = "") -> Any:
        """Show or change the session: mode, rules, concurrency, policy, pending, trace..."""
        command, _, rest = line.strip().partition(" ")
        rest = rest.strip()
        try:
            return self._toolsched(command, rest)
        except SessionError as err:
            raise UsageError(str(err)) from None

    def _toolsched(self, command: str, rest: str) -> Any:
        session = self.session
        if command in ("", "show"):
            return TextView(session.describe())
        if command == "help":
            return TextView(_TOOLSCHED_HELP.format(modes=", ".join(MODES)))
        if command == "mode":
            if rest:
                session.set_mode(rest)
            return TextView(f"mode: {session.permissions.mode}")
        behavior = _BEHAVIORS.get(command)
        if behavior is not None:
            if not rest:
                raise UsageError(f"%toolsched {command} needs a rule, e.g. %toolsched {command} Bash(git log:*)")
            return TextView(f"{command} rule added: {session.add_rule(behavior, rest)}")
        if command == "concurrency":
            session.set_concurrency(_int(rest, "%toolsched concurrency"))
            return TextView(f"max concurrency: {session.max_concurrency}")
        if command == "policy":
            session.set_policy(rest)
            return TextView(f"approval policy: {rest}")
        if command == "pending":
            return TextView(session.pending_text())
        if command == "trace":
            return session.timeline()
        if command == "register":
            return TextView(self._register(rest.split()))
        if command == "model":
            session.model = self._lookup(rest, "%toolsched model")
            return TextView(f"model: {type(session.model).__name__}")
        if command == "abort":
            live = session.live_runs()
            session.interrupt()
            return TextView(f"aborted {len(live)} run{'s' if len(live) != 1 else ''}")
        raise UsageError(f"unknown %toolsched command {command!r}; try %toolsched help")

    def _register(self, names: list[str]) -> str:
        if not names:
            raise UsageError("%toolsched register needs the name of a variable holding a tool")
        done = []
        for name in names:
            value = self._lookup(name, "%toolsched register")
            try:
                done.append(self.session.register(value).name)
            except (TypeError, ValueError) as err:
                raise UsageError(f"{name}: {err}") from None
        return "registered: " + ", ".join(done)

    def _lookup(self, name: str, what: str) -> Any:
        if not name.isidentifier():
            raise UsageError(f"{what} needs a variable name, got {name!r}")
        if name not in self.namespace:
            raise UsageError(f"{what}: there is no variable {name!r} in the notebook")
        return self.namespace[name]

    # -- %speculate ------------------------------------------------------------------------------------------
    @no_var_expand
    @line_magic
    def speculate(self, line: str = "") -> Any:
        """Run a suggested next prompt in an overlay with the session's model; shows the diff."""
        try:
            words = shlex.split(line)
        except ValueError as err:
            raise UsageError(f"%speculate: {err}") from None
        from ._agent_cell import conversation_for

        conversation = conversation_for(self.session, create=False)  # an %%agent session speculates from its conversation
        if conversation is not None and conversation.agent is None:
            conversation = None
        model = conversation.model if conversation is not None else self.session.model
        if len(words) >= 2 and words[0] == "--model":
            model = self._lookup(words[1], "%speculate --model")
            words = words[2:]
        suggestion = " ".join(words).strip()
        if not suggestion:
            raise UsageError('%speculate needs a suggestion, e.g. %speculate "add a docstring to util.py"')
        if model is None:
            raise UsageError("%speculate needs a model: %toolsched model VAR (or %speculate --model VAR ...)")
        from ._speculate import start_view

        try:
            return start_view(self.session, suggestion, model, conversation)
        except (TypeError, ValueError) as err:
            raise UsageError(str(err)) from None

    # -- %replay ---------------------------------------------------------------------------------------------
    @line_magic
    def replay(self, line: str = "") -> Any:
        """%replay PATH... --settings FILE [--proposed FILE]: a permission-policy simulation report
        ({var} and $var name notebook variables, as in any line magic)."""
        from ._replay_magic import replay_line

        return replay_line(line, self.namespace)

    # -- hooks ---------------------------------------------------------------------------------------------
    def post_run_cell(self, result: Any) -> None:
        """After each cell: an interrupted cell aborts the runs; new @nts.tool functions join;
        records of runs that ended meanwhile are sent again from this cell (see ``_record``)."""
        if is_interrupt(getattr(result, "error_in_exec", None)):
            self.session.interrupt()
        self.session.pump.flush()  # a run that ended during this cell is shown ended, from this cell
        announce_finished_records()
        try:
            self.session.register_from_namespace(self.namespace)
        except Exception as err:  # noqa: BLE001 - never break the user's cell
            self.session.notices.append(f"could not register tools from the notebook: {err}")


_BEHAVIORS: dict[str, Behavior] = {"allow": "allow", "deny": "deny", "ask": "ask"}


def _cell_id(shell: Any) -> str | None:
    """The running cell's id as JupyterLab sends it (execute_request metadata), if any."""
    kernel = getattr(shell, "kernel", None)
    try:
        parent = kernel.get_parent() if kernel is not None else getattr(shell, "parent_header", {})
    except Exception:  # noqa: BLE001 - an old kernel without get_parent
        parent = getattr(shell, "parent_header", {})
    cell = ((parent or {}).get("metadata") or {}).get("cellId")
    return f"cell:{cell}" if isinstance(cell, str) and cell else None


def _int(text: str, what: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise UsageError(f"{what} needs a whole number, got {text!r}") from None
