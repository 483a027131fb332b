"""One ACP session: an ``Agent`` on the user's settings, in the session's folder, for one client.

It is built the way the notebook builds its scheduler, with the project's own settings
files (``Permissions.from_settings(cwd)``: rules, hooks, the sandbox block, the mode) and
the built-in tools (``default_registry(cwd)``) plus the MCP servers the client named. The
approver is the client (``_permission``), the file tools' text goes through the client
when it offers its file system (``_files``), and everything the run does reaches the
client as session updates (``_updates``), in order (``_outbox``).

A prompt is one ``Agent.run``; ``session/cancel`` aborts its signal, the root of the run's
abort tree: running calls stop (a Bash command and all it started are killed), a call
waiting for permission stops waiting, every tool_use still gets its tool_result, and the
prompt answers ``cancelled``. The transcript is written as Claude Code writes it, to
``<sessions>/<id>/<id>.jsonl``, or to the file a loaded session came from.
"""

from __future__ import annotations

import json

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

from acp.exceptions import RequestError
from acp.schema import PromptResponse, SessionMode, SessionModeState, StopReason

from .._errors import ConfigurationError, TranscriptError
from .._tasks import TaskOwner
from .._tool._abort import USER_ABORT, AbortSignal
from .._tool._context import ToolContext
from ..agent._loop import Agent, AgentResult
from ..models._protocol import Model
from ..permissions._approvals import ApprovalRequest
from ..permissions._engine import Permissions
from ..permissions._errors import PermissionConfigError
from ..permissions._modes import MODE_TITLES, MODES
from ..scheduling._scheduler import Scheduler
from ..tools import default_registry
from ._content import PromptBlock, prompt_blocks
from ._files import ClientFiles
from ._mcp import McpServers, start_servers
from ._outbox import Outbox
from ._permission import ClientApprover
from ._preview import would_change
from ._replay import history_updates
from ._updates import PromptUpdates

if TYPE_CHECKING:
    from acp.interfaces import Client
    from acp.schema import ClientCapabilities

__all__ = ["SessionConfig", "AcpSession", "session_modes"]

log = logging.getLogger(__name__)
INVALID_PARAMS, INVALID_REQUEST, INTERNAL_ERROR, AUTH_REQUIRED = -32602, -32600, -32603, -32000


@dataclass(frozen=True)
class SessionConfig:
    """What every session of the server shares (the command line's options)."""

    make_model: Callable[[], Model]
    sessions_root: Path
    mode: str | None = None  # overrides the settings files' defaultMode
    max_turns: int | None = 100
    system: str | None = None  # ``{cwd}`` is replaced with the session's folder


class AcpSession:
    def __init__(self, session_id: str, cwd: str, client: Client, permissions: Permissions, files: ClientFiles,
                 tasks: TaskOwner, outbox: Outbox, mcp: McpServers) -> None:
        self.id = session_id
        self.cwd = cwd
        self.client = client
        self.permissions = permissions
        self.files = files
        self.tasks = tasks  # the session's background work (the update sender)
        self.outbox = outbox
        self.mcp = mcp
        self.agent: Agent  # set by ``open``
        self._abort: AbortSignal | None = None  # the running prompt's, None between prompts
        self._cancelled = False

    @classmethod
    async def open(cls, config: SessionConfig, client: Client, capabilities: ClientCapabilities, session_id: str,
                   cwd: str, mcp_servers: Sequence[Any], transcript: Path | None = None) -> "AcpSession":
        """A ready session; ``transcript``: the JSONL file whose conversation it continues.
        A ``RequestError`` says what stops it (unreadable settings, a transcript that cannot
        be continued, a model that cannot start)."""
        try:
            permissions = Permissions.from_settings(cwd, mode=config.mode)
        except (PermissionConfigError, ConfigurationError, OSError, ValueError) as err:
            raise RequestError(INTERNAL_ERROR, f"the permission settings of {cwd} could not be read, so the session "
                                               f"was not started (running without their deny rules would be unsafe): {err}") from None
        try:
            model = config.make_model()
        except Exception as err:  # noqa: BLE001 - a missing API key, most often
            raise RequestError(AUTH_REQUIRED, f"the model could not be started: {err}") from None
        fs = capabilities.fs
        files = ClientFiles(client, session_id, read=bool(fs and fs.read_text_file), write=bool(fs and fs.write_text_file))
        tasks = TaskOwner()
        outbox = Outbox(client, session_id, tasks)
        mcp = await start_servers(mcp_servers, cwd)
        session = cls(session_id, cwd, client, permissions, files, tasks, outbox, mcp)
        try:
            session.agent = session._agent(config, model, transcript)
        except BaseException:
            await session.aclose()
            raise
        return session

    def _agent(self, config: SessionConfig, model: Model, transcript: Path | None) -> Agent:
        registry = default_registry(self.cwd, include_mcp=self.mcp.manager)
        approver = ClientApprover(self.client, self.id, self.outbox, self.cwd, self._preview)
        context = ToolContext(self.cwd, session_id=self.id, session_dir=config.sessions_root / self.id,
                              permission_context=self.permissions, files=self.files)
        scheduler = Scheduler(registry, permissions=self.permissions, approver=approver, context=context)
        system = config.system.replace("{cwd}", self.cwd) if config.system else None
        if transcript is None:
            return Agent(model, scheduler, system=system, max_turns=config.max_turns)
        try:
            return Agent.from_transcript(transcript, model, scheduler, system=system, max_turns=config.max_turns)
        except TranscriptError as err:
            raise RequestError(INVALID_PARAMS, f"session {self.id} cannot be loaded: {err}", {"sessionId": self.id}) from None

    # -- the conversation -----------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self._abort is not None

    async def replay(self) -> None:
        """The conversation so far, to the client (``session/load``)."""
        for update in history_updates(self.agent.messages, self.cwd):
            self.outbox.put(update)
        await self.outbox.flush()

    async def prompt(self, prompt: Sequence[PromptBlock]) -> PromptResponse:
        if self._abort is not None:
            raise RequestError(INVALID_REQUEST, f"session {self.id} is still answering a prompt: wait for its answer, "
                                                "or send session/cancel first", {"sessionId": self.id})
        blocks = prompt_blocks(prompt)
        signal = self._abort = AbortSignal()
        self._cancelled = False
        updates = PromptUpdates(self.outbox, self.cwd, self.files)
        unsubscribe = self.agent.subscribe(updates)
        try:
            result = await self.agent.run(blocks, abort=signal)
        except Exception as err:  # a transcript or tool setup that broke: the client hears why
            log.exception("session %s: the run failed", self.id)
            updates.finish(self.agent.messages)
            await self.outbox.flush()
            raise RequestError(INTERNAL_ERROR, f"the run failed: {type(err).__name__}: {err}") from None
        finally:
            unsubscribe()
            self._abort = None
        updates.finish(result.messages)
        await self.outbox.flush()  # every update before the answer
        return PromptResponse(stop_reason=self._stop_reason(result, updates.model_stop))

    def cancel(self) -> None:
        """``session/cancel``: stop the running prompt (nothing to do between prompts)."""
        if self._abort is not None:
            self._cancelled = True
            self._abort.abort(USER_ABORT)

    def _stop_reason(self, result: AgentResult, model_stop: str | None) -> StopReason:
        if self._cancelled:
            return "cancelled"
        if result.stop_reason in ("max_turns", "max_messages"):
            return "max_turn_requests"
        if result.stop_reason == "model_error" and result.error is not None:
            error = result.error
            raise RequestError(INTERNAL_ERROR, f"the model failed ({error.kind}): {error.message}", {"kind": error.kind})
        if model_stop == "refusal":
            return "refusal"
        if model_stop == "max_tokens":
            return "max_tokens"
        return "end_turn"  # also a rejected permission, which stops the turn for the person to go on

    # -- modes ------------------------------------------------------------------------------
    def set_mode(self, mode: str) -> None:
        modes = allowed_modes(self.permissions)
        if mode not in modes:
            why = ("the settings disable it (permissions.disableBypassPermissionsMode)" if mode in MODES
                   else "it is not a mode")
            raise RequestError(INVALID_PARAMS, f"mode {mode!r} cannot be chosen: {why}; the modes are {', '.join(modes)}",
                               {"modeId": mode})
        self.permissions.mode = mode

    # -- pieces ------------------------------------------------------------------------------
    async def _preview(self, request: ApprovalRequest) -> list[Any]:
        return list(await would_change(request.tool_name, request.input, self.agent.context, self.agent.scheduler.registry))

    async def aclose(self) -> None:
        """Stop what the session runs (its prompt, its MCP servers, its update sender)."""
        self.cancel()
        await self.mcp.aclose()
        await self.tasks.aclose()


def allowed_modes(permissions: Permissions) -> list[str]:
    """The modes a person may pick: all but bypassPermissions when a settings file sets
    ``permissions.disableBypassPermissionsMode`` to ``"disable"``, as Claude Code honours it."""
    for path in permissions.settings_files:
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        block = data.get("permissions") if isinstance(data, dict) else None
        if isinstance(block, dict) and block.get("disableBypassPermissionsMode") == "disable":
            return [mode for mode in MODES if mode != "bypassPermissions"]
    return list(MODES)


def session_modes(permissions: Permissions) -> SessionModeState:
    """The permission modes, as the client's mode picker shows them."""
    return SessionModeState(current_mode_id=permissions.mode, available_modes=[
        SessionMode(id=mode, name=MODE_TITLES.get(mode, mode)) for mode in allowed_modes(permissions)])
