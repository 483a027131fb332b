"""``%%agent``: a whole agent session in a notebook, one user message per cell.

The cell body is the user's message; the conversation goes on across cells (one
``Agent`` per conversation, kept by the kernel's session) until ``--new``, ``%agent
clear`` or ``%agent load PATH``. Like ``%%toolcall``, a cell never blocks on a person: it
starts the turn as a task on the kernel's loop, shows the live view and returns;
``await`` the cell (``--name VAR``) for the ``AgentResult``. Cells run in the order they
were started: a cell started while another runs waits for it (Claude Code queues a
message typed while a turn runs the same way).

The session's scheduler does the work, with the session's permissions, hooks and
approval broker, so approvals appear inline exactly as in ``%%toolcall``; ``--mode``,
``--max-concurrency`` and ``--policy`` apply to one cell. Headless kernels answer by
``NBTOOLSCHED_APPROVAL`` (allow, deny, defer); ``--policy`` or ``%toolsched policy``
wins over it. Each conversation writes Claude Code's JSONL transcript as it runs
(``<session_dir>/<session_id>.jsonl``; hooks get it as ``transcript_path``).

A kernel interrupt or the Stop button aborts the running cell (and any waiting behind
it): every tool_use still gets its result, the transcript in memory and on disk stays
valid, and the next cell continues from there.
"""

from __future__ import annotations

import asyncio
import keyword
import logging
import os
import re
import shutil
import uuid
import weakref
from pathlib import Path
from typing import Any, Generator

from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring

from .._errors import NbtoolschedError, SessionError, TranscriptError
from .._events import RunEvents, TextDelta
from ..agent._loop import Agent, AgentResult, model_name
from ..models._protocol import ModelError
from ..permissions._approvals import ApprovalBroker
from ..permissions._modes import MODES
from ..scheduling._handle import RunHandle
from ..scheduling._scheduler import Scheduler
from .._tool._abort import USER_ABORT, AbortSignal
from ._agent_view import AgentView
from ._run import NotebookRun
from ._session import POLICIES, NotebookSession, _broker_policy

__all__ = ["AgentCell", "AgentConversation", "agent_command", "conversation_for", "resolve_model", "run_agent_cell"]

log = logging.getLogger(__name__)
DEFAULT_MAX_TURNS = 100
_MODEL_ID = re.compile(r"^claude-[A-Za-z0-9][\w.:@-]*$")
_HELP = """%%agent [options]          the cell is your message; the conversation goes on across cells
  --model MODEL              a model variable (a ScriptedModel), or a Claude model id such as
                             claude-sonnet-4-6 (needs ANTHROPIC_API_KEY); kept for later cells
  --fallback-model MODEL     where the session goes when the model is overloaded or keeps failing
  --new                      start a new conversation (and a new transcript file)
  --mode MODE                permission mode for this cell's tool calls
  --max-turns N              stop after N model turns (default 100)
  --max-concurrency N        concurrency cap for this cell's tool calls
  --policy ask|allow|deny|defer   who answers approvals (ask = the panel's buttons)
  --name VAR                 bind the cell to VAR: result = await VAR
%agent                       the conversation: model, messages, transcript file
%agent history               the conversation so far, as text
%agent save PATH             copy the transcript (Claude Code's JSONL) to PATH
%agent load PATH             continue the conversation in a JSONL transcript (ours or Claude Code's)
%agent clear                 forget the conversation (the next cell starts a new one)
%agent stop                  stop the running cell (and any waiting behind it)"""


@magic_arguments()
@argument("--model", metavar="MODEL")
@argument("--fallback-model", metavar="MODEL")
@argument("--new", action="store_true")
@argument("--mode", choices=MODES)
@argument("--max-turns", type=int, metavar="N")
@argument("--max-concurrency", type=int, metavar="N")
@argument("--policy", choices=POLICIES)
@argument("--name", metavar="VAR")
def agent(line: str) -> None:
    """The options of ``%%agent`` (parsed with IPython's magic_arguments)."""


class _NoModel:
    """Stands in until a cell names a model: any request says how to give one."""

    name = "no model"

    async def stream(self, messages: list[dict[str, Any]], *, tools: Any = None, system: Any = None) -> Any:
        raise ModelError("unexpected", "this conversation has no model: run %%agent --model VAR")
        yield {}  # an async generator, like every model


class AgentCell:
    """One ``%%agent`` cell: its message, its live view; ``await cell`` gives the AgentResult."""

    def __init__(self, number: int, prompt: str, view: AgentView, signal: AbortSignal, handle: RunHandle) -> None:
        self.number = number
        self.prompt = prompt
        self.view = view
        self.signal = signal
        self.handle = handle  # what the session's interrupt and %toolsched trace see
        self.result: AgentResult | None = None
        self.task: asyncio.Task[AgentResult | None] | None = None

    def __await__(self) -> Generator[Any, None, AgentResult | None]:
        assert self.task is not None
        return asyncio.shield(self.task).__await__()  # an interrupted await leaves the session to the interrupt

    def done(self) -> bool:
        return self.task is not None and self.task.done()

    def stop(self, reason: str = USER_ABORT) -> None:
        """End the turn now: running tools stop, queued ones never start, every call gets a result."""
        self.signal.abort(reason)

    @property
    def final_text(self) -> str:
        return self.result.final_text if self.result is not None else ""

    def text(self) -> str:
        return self.view.text()

    def __repr__(self) -> str:
        return self.text()

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(self.text())

    def _ipython_display_(self) -> None:
        """The live view, shown where it can be replaced by a true record when the cell is over."""
        self.view.record.show()


class AgentConversation:
    """The notebook's agent session: one Agent whose conversation goes on across cells."""

    def __init__(self, session: NotebookSession) -> None:
        self.session = session
        self.agent: Agent | None = None
        self.model: Any = None
        self.fallback: Any = None
        self.cells: list[AgentCell] = []
        self.conversations = 0

    # -- state --------------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return any(not cell.done() for cell in self.cells)

    @property
    def messages(self) -> list[dict[str, Any]]:
        return self.agent.messages if self.agent is not None else []

    def _require_idle(self, what: str) -> None:
        if self.running:
            raise SessionError(f"cannot {what} while an %%agent cell is running; wait for it or run %agent stop")

    def _new_agent(self) -> Agent:
        """A fresh conversation with its own session id, so its own transcript file."""
        self.conversations += 1
        context = self.session.context.replace(session_id=uuid.uuid4().hex[:12], transcript_path=None, messages=[])
        return Agent(_NoModel(), self.session.scheduler, context=context)

    # -- a cell ---------------------------------------------------------------------------------
    def start(
        self,
        prompt: str,
        *,
        model: Any = None,
        fallback: Any = None,
        new: bool = False,
        mode: str | None = None,
        max_turns: int | None = None,
        max_concurrency: int | None = None,
        policy: str | None = None,
        name: str | None = None,
    ) -> AgentCell:
        """Queue one cell's message and return the cell at once (the turn runs as a task).
        ``name`` (the cell's --name) titles its view, as ``%%toolcall --name`` titles its panel."""
        session = self.session
        if session.closed:
            raise SessionError("this nbtoolsched session was unloaded; run %load_ext nbtoolsched again")
        for label, value in (("--max-turns", max_turns), ("--max-concurrency", max_concurrency)):
            if value is not None and value < 1:
                raise SessionError(f"{label} must be 1 or more, got {value}")
        if new or self.agent is None:
            self.agent = self._new_agent()
        if model is not None:
            self.model = model
        if fallback is not None:
            self.fallback = fallback
        if self.model is None:
            raise SessionError("%%agent needs a model: --model VAR (a ScriptedModel in the notebook), "
                               "--model claude-sonnet-4-6 (with ANTHROPIC_API_KEY set), or %toolsched model VAR")
        if not prompt and not self.running and not (self.messages and self.messages[-1]["role"] == "user"):
            raise SessionError("the cell is empty: write your message to the agent below %%agent")
        broker = session.broker
        if policy is not None and (_broker_policy(policy) != "interactive" or broker.policy != "interactive"):
            broker = ApprovalBroker(_broker_policy(policy))  # the cell's explicit choice wins over the environment
        agent, previous = self.agent, self._last_task()
        number = len(self.cells) + 1
        signal = AbortSignal()
        handle = RunHandle([], signal, RunEvents())
        title = f"%%agent {name}" if name else f"%%agent #{number}"
        cell_ref: list[AgentCell] = []
        # the tools run in the agent's context, so the view shows their paths relative to its cwd
        view = AgentView(title, pump=session.pump, handoff=session.handoff, broker=broker, abort=signal,
                         on_stop=lambda: cell_ref[0].stop(), cwd=agent.context.cwd)
        cell = AgentCell(number, prompt, view, signal, handle)
        cell_ref.append(cell)
        options: dict[str, Any] = {"approver": broker}
        if mode is not None:
            options["mode"] = mode
        options["max_concurrency"] = max_concurrency if max_concurrency is not None else session.max_concurrency
        settings = (self.model, self.fallback, max_turns or DEFAULT_MAX_TURNS)
        cell.task = session.tasks.start(self._drive(cell, agent, previous, settings, options), name=f"nbtoolsched-agent-cell-{number}")
        cell.task.add_done_callback(lambda task: self._finished(cell, task))
        self.cells.append(cell)
        session.runs.append(NotebookRun(handle, view, [], title))  # interrupts, unload and %toolsched trace see it
        session.pump.mark(view)
        return cell

    def _last_task(self) -> asyncio.Task[Any] | None:
        for cell in reversed(self.cells):
            if cell.task is not None and not cell.task.done():
                return cell.task
        return None

    async def _drive(self, cell: AgentCell, agent: Agent, previous: asyncio.Task[Any] | None,
                     settings: tuple[Any, Any, int], options: dict[str, Any]) -> AgentResult | None:
        if previous is not None:
            await asyncio.wait([previous])  # in the order the cells were started
        if cell.signal.aborted:
            cell.view.not_started()
            return None
        agent.model, agent.fallback_model, agent.max_turns = settings
        cell.view.start(model_name(agent.model))
        forward = cell.handle.events.emit

        def listen(event: Any) -> None:
            cell.view.on_event(event)
            if not isinstance(event, TextDelta):  # the cell's trace keeps what a timeline shows
                forward(event)

        unsubscribe = agent.subscribe(listen)
        try:
            cell.result = await agent.run(cell.prompt or None, abort=cell.signal, **options)
        finally:
            unsubscribe()
        return cell.result

    def _finished(self, cell: AgentCell, task: asyncio.Task[Any]) -> None:
        if task.cancelled():
            cell.view.fail("the cell's task was cancelled")
        elif task.exception() is not None:
            err = task.exception()
            cell.view.fail(f"{type(err).__name__}: {err}")
            if not isinstance(err, NbtoolschedError):
                log.error("an %%agent cell failed", exc_info=err)
        cell.handle.finish([], self.agent.context if self.agent is not None else None, None)
        self.session.pump.mark(cell.view)

    def stop(self) -> int:
        """Stop the running cell and every cell waiting behind it; how many were stopped."""
        live = [cell for cell in self.cells if not cell.done()]
        for cell in live:
            cell.stop()
        return len(live)

    # -- the conversation ---------------------------------------------------------------------------
    def clear(self) -> str:
        self._require_idle("clear the conversation")
        had = len(self.messages)
        self.agent = None
        return f"conversation cleared ({had} messages); the next %%agent cell starts a new one"

    def load(self, path: str, model: Any = None) -> str:
        """Continue the conversation in a JSONL transcript; new entries go to the same file."""
        self._require_idle("load a transcript")
        if model is not None:
            self.model = model
        try:
            agent = Agent.from_transcript(path, _NoModel(), self.session.scheduler, context=self.session.context)
        except TranscriptError as err:
            raise SessionError(str(err)) from None
        self.agent = agent
        self.conversations += 1
        ending = "it ends with your message: run an %%agent cell (it may be empty) to get the answer" \
            if agent.messages[-1]["role"] == "user" else "the next %%agent cell continues it"
        return (f"loaded {len(agent.messages)} messages of session {agent.context.session_id} from {path}; "
                f"new entries are written to the same file; {ending}")

    def save(self, path: str) -> str:
        """Copy the transcript file (every entry, branches included) to ``path``."""
        agent = self.agent
        if agent is None or not agent.messages:
            raise SessionError("there is no conversation to save yet: run an %%agent cell first")
        self._require_idle("save the conversation")
        target = Path(path).expanduser()
        if target.exists():
            raise SessionError(f"{path} already exists; choose another path (or delete it first)")
        if agent.transcript is not None and agent.transcript.path.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(agent.transcript.path, target)
        else:
            from .._session_log import TranscriptWriter

            TranscriptWriter(target, agent.context.session_id, agent.context.cwd).append_messages(agent.messages)
        return f"saved {len(agent.messages)} messages to {path}"

    def describe(self) -> str:
        agent = self.agent
        if agent is None:
            return "no conversation yet: the next %%agent cell starts one"
        transcript = agent.transcript.path if agent.transcript is not None else "(not written)"
        lines = [
            f"session {agent.context.session_id}: {len(agent.messages)} messages, "
            f"{'running' if self.running else 'idle'}",
            f"model: {model_name(self.model) if self.model is not None else '(none: use --model)'}",
            f"fallback model: {model_name(self.fallback) if self.fallback is not None else '(none)'}",
            f"transcript: {transcript}",
        ]
        return "\n".join(lines)

    def history(self) -> str:
        if not self.messages:
            return "no messages yet"
        return "\n".join(_message_lines(number, message) for number, message in enumerate(self.messages, 1))

    # -- speculation from the conversation -------------------------------------------------------
    def speculation_base(self) -> tuple[list[dict[str, Any]], Scheduler]:
        """The conversation and a scheduler whose context is the agent's (files read, cwd...)."""
        agent = self.agent
        assert agent is not None
        self._require_idle("speculate from the conversation")
        if agent.messages and agent.messages[-1]["role"] == "user":
            raise SessionError("the conversation ends with a message the agent has not answered yet: "
                               "run an %%agent cell first, then speculate on the next step")
        session = self.session
        scheduler = Scheduler(session.registry, permissions=session.permissions, approver=session.broker,
                              max_concurrency=session.max_concurrency, context=agent.context)
        return list(agent.messages), scheduler

    def accept_speculation(self, suggestion: str, messages: list[dict[str, Any]]) -> None:
        """An accepted speculation joins the conversation: the suggestion as the user's
        message, then what the speculated turns said and did."""
        if self.agent is None:
            raise SessionError("the conversation was cleared; the accepted files were written, the messages were not kept")
        self.agent.add_messages([{"role": "user", "content": [{"type": "text", "text": suggestion}]}, *messages])


_CONVERSATIONS: "weakref.WeakKeyDictionary[NotebookSession, AgentConversation]" = weakref.WeakKeyDictionary()


def conversation_for(session: NotebookSession, *, create: bool = True) -> AgentConversation | None:
    """The kernel session's agent conversation (made on first use)."""
    found = _CONVERSATIONS.get(session)
    if found is None and create:
        found = _CONVERSATIONS[session] = AgentConversation(session)
    return found


def resolve_model(spec: str, namespace: dict[str, Any], what: str = "--model") -> Any:
    """A notebook variable holding a model, or a Claude model id served by AnthropicModel."""
    if spec.isidentifier() and spec in namespace:
        value = namespace[spec]
        if not callable(getattr(value, "stream", None)):
            raise SessionError(f"{what} {spec}: the variable holds a {type(value).__name__}, not a model "
                               "(a model has a stream(messages, tools=..., system=...) method, e.g. a ScriptedModel)")
        return value
    if _MODEL_ID.match(spec):
        if not os.environ.get("ANTHROPIC_API_KEY"):
            raise SessionError(f"{what} {spec}: ANTHROPIC_API_KEY is not set, so a Claude model cannot be used; "
                               "set it, or pass a ScriptedModel variable")
        from ..models._anthropic import AnthropicModel

        return AnthropicModel(spec)
    raise SessionError(f"{what} {spec}: there is no notebook variable {spec!r}, and it is not a Claude model id "
                       "(claude-...)")


def run_agent_cell(session: NotebookSession, line: str, cell: str, namespace: dict[str, Any]) -> AgentCell:
    """``%%agent``: parse the options, start the cell, bind ``--name``. SessionError for bad input."""
    args = parse_argstring(agent, line)
    if args.name is not None and (not args.name.isidentifier() or keyword.iskeyword(args.name)):
        raise SessionError(f"--name {args.name!r}: not a valid Python variable name")
    conversation = conversation_for(session)
    assert conversation is not None
    model = resolve_model(args.model, namespace) if args.model else None
    if model is None and conversation.model is None and session.model is not None:
        model = session.model  # %toolsched model VAR
    fallback = resolve_model(args.fallback_model, namespace, "--fallback-model") if args.fallback_model else None
    started = conversation.start(cell.strip(), model=model, fallback=fallback, new=args.new, mode=args.mode,
                                 max_turns=args.max_turns, max_concurrency=args.max_concurrency, policy=args.policy,
                                 name=args.name)
    if args.name:
        namespace[args.name] = started
    return started


def agent_command(session: NotebookSession, line: str, namespace: dict[str, Any]) -> str:
    """``%agent [history | save PATH | load PATH [--model MODEL] | clear | stop | help]``."""
    import shlex

    try:
        words = shlex.split(line)
    except ValueError as err:
        raise SessionError(f"%agent: {err}") from None
    conversation = conversation_for(session)
    assert conversation is not None
    command, rest = (words[0], words[1:]) if words else ("", [])
    if command in ("", "status") and not rest:
        return conversation.describe()
    if command == "help" and not rest:
        return _HELP
    if command == "history" and not rest:
        return conversation.history()
    if command == "clear" and not rest:
        return conversation.clear()
    if command == "stop" and not rest:
        stopped = conversation.stop()
        return f"stopped {stopped} cell{'s' if stopped != 1 else ''}"
    if command == "save" and len(rest) == 1:
        return conversation.save(rest[0])
    if command == "load" and len(rest) in (1, 3) and (len(rest) == 1 or rest[1] == "--model"):
        model = resolve_model(rest[2], namespace) if len(rest) == 3 else None
        return conversation.load(rest[0], model)
    raise SessionError(f"%agent {line.strip()}: not a command I know; try %agent help")


def _message_lines(number: int, message: dict[str, Any]) -> str:
    content = message["content"]
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
    lines = []
    for block in blocks:
        kind = block.get("type")
        if kind == "text":
            lines.append(block.get("text", ""))
        elif kind == "tool_use":
            lines.append(f"-> {block.get('name')} {_short(block.get('input'))}  [{block.get('id')}]")
        elif kind == "tool_result":
            flag = "error " if block.get("is_error") else ""
            lines.append(f"<- {flag}[{block.get('tool_use_id')}] {_short(_result_text(block))}")
        else:
            lines.append(f"({kind} block)")
    head = f"[{number}] {message['role']}: "
    body = "\n".join(lines).splitlines() or [""]
    return head + body[0] + "".join(f"\n{' ' * len(head)}{line}" for line in body[1:])


def _result_text(block: dict[str, Any]) -> str:
    content = block.get("content", "")
    if isinstance(content, list):
        return " ".join(p.get("text", "") for p in content if isinstance(p, dict))
    return str(content)


def _short(value: Any, limit: int = 100) -> str:
    from ._render import short_input

    return short_input(value, limit)
