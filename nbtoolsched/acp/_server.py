"""The ACP agent: the requests a client sends, each answered or refused with a JSON-RPC error.

``initialize`` says what this agent does (sessions can be loaded; prompts take text,
images and embedded context; MCP servers over stdio, and over HTTP and SSE when the
installed MCP support has them). ``session/new`` and ``session/load`` make an
``AcpSession``; ``session/prompt``, ``session/cancel`` and ``session/set_mode`` go to the
session named. Whatever is wrong with a request (an unknown session, a prompt while one
runs, a folder that does not exist, a transcript that cannot be continued) is an error
that names it; nothing a client sends stops the server.

A loaded session's transcript is found by its id in the sessions folder, where new
sessions write theirs: ``<sessions>/<id>/<id>.jsonl``, or Claude Code's own layout,
``<sessions>/<id>.jsonl`` (so ``--session-dir ~/.claude/projects/<project>`` loads
Claude Code's sessions of that project, and goes on writing them).
"""

from __future__ import annotations

import logging
import os
import re
import uuid
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from acp.exceptions import RequestError
from acp.meta import PROTOCOL_VERSION
from acp.schema import (
    AgentCapabilities,
    ClientCapabilities,
    Implementation,
    InitializeResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PromptResponse,
    SetSessionModeResponse,
)

from ._content import PROMPT_CAPABILITIES, PromptBlock
from ._mcp import mcp_capabilities
from ._session import INVALID_PARAMS, INVALID_REQUEST, AcpSession, SessionConfig, session_modes

if TYPE_CHECKING:
    from acp.interfaces import Client

__all__ = ["NbtoolschedAgent"]

log = logging.getLogger(__name__)
RESOURCE_NOT_FOUND = -32002
_SESSION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


class NbtoolschedAgent:
    """The ``acp.Agent`` the server runs: one per connection, holding its sessions."""

    def __init__(self, config: SessionConfig, *, base_cwd: str | None = None) -> None:
        self.config = config
        self.base_cwd = base_cwd or os.getcwd()
        self.client: Client | None = None
        self.capabilities = ClientCapabilities()
        self.sessions: dict[str, AcpSession] = {}

    def on_connect(self, conn: Client) -> None:
        self.client = conn

    async def initialize(self, protocol_version: int, client_capabilities: ClientCapabilities | None = None,
                         client_info: Any = None, **kwargs: Any) -> InitializeResponse:
        self.capabilities = client_capabilities or ClientCapabilities()
        return InitializeResponse(
            protocol_version=PROTOCOL_VERSION,  # the client's, when it is ours; else the one we speak
            agent_capabilities=AgentCapabilities(load_session=True, prompt_capabilities=PROMPT_CAPABILITIES,
                                                 mcp_capabilities=mcp_capabilities()),
            auth_methods=[],
            agent_info=Implementation(name="nbtoolsched", title="nbtoolsched", version=_version()),
        )

    async def new_session(self, cwd: str, mcp_servers: list[Any] | None = None, **kwargs: Any) -> NewSessionResponse:
        folder = self._folder(cwd)
        session_id = str(uuid.uuid4())
        session = await AcpSession.open(self.config, self._client(), self.capabilities, session_id, folder, mcp_servers or [])
        self.sessions[session_id] = session
        return NewSessionResponse(session_id=session_id, modes=session_modes(session.permissions),
                                  field_meta=_left_out(session))

    async def load_session(self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None,
                           **kwargs: Any) -> LoadSessionResponse:
        folder = self._folder(cwd)
        transcript = self._transcript(session_id)
        earlier = self.sessions.get(session_id)
        if earlier is not None:
            if earlier.running:
                raise RequestError(INVALID_REQUEST, f"session {session_id} is answering a prompt; it cannot be loaded "
                                                    "again until that ends", {"sessionId": session_id})
            del self.sessions[session_id]
            await earlier.aclose()
        session = await AcpSession.open(self.config, self._client(), self.capabilities, session_id, folder,
                                        mcp_servers or [], transcript=transcript)
        self.sessions[session_id] = session
        await session.replay()
        return LoadSessionResponse(modes=session_modes(session.permissions), field_meta=_left_out(session))

    async def prompt(self, prompt: list[PromptBlock], session_id: str, **kwargs: Any) -> PromptResponse:
        return await self._session(session_id).prompt(prompt)

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        session = self.sessions.get(session_id)
        if session is None:  # a notification has no answer: say it where someone may read it
            log.warning("session/cancel for unknown session %r ignored", session_id)
            return
        session.cancel()

    async def set_session_mode(self, mode_id: str, session_id: str, **kwargs: Any) -> SetSessionModeResponse:
        self._session(session_id).set_mode(mode_id)
        return SetSessionModeResponse()

    async def aclose(self) -> None:
        """The client is gone: every session stops, and its servers with it."""
        sessions, self.sessions = list(self.sessions.values()), {}
        for session in sessions:
            await session.aclose()

    # -- checks -----------------------------------------------------------------------------
    def _client(self) -> Client:
        if self.client is None:
            raise RequestError(INVALID_REQUEST, "the connection is not set up yet")
        return self.client

    def _session(self, session_id: str) -> AcpSession:
        session = self.sessions.get(session_id)
        if session is None:
            raise RequestError(INVALID_PARAMS, f"unknown session {session_id!r}: start one with session/new, or load "
                                               "an earlier one with session/load", {"sessionId": session_id})
        return session

    def _folder(self, cwd: str) -> str:
        folder = os.path.realpath(os.path.join(self.base_cwd, os.path.expanduser(cwd)))
        if not os.path.isdir(folder):
            raise RequestError(INVALID_PARAMS, f"cwd {cwd!r} is not a folder that exists", {"cwd": cwd})
        return folder

    def _transcript(self, session_id: str) -> Path:
        if not _SESSION_ID.fullmatch(session_id) or ".." in session_id:
            raise RequestError(INVALID_PARAMS, f"{session_id!r} is not a session id (letters, digits, '.', '_' and '-')",
                               {"sessionId": session_id})
        root = self.config.sessions_root
        candidates = [root / session_id / f"{session_id}.jsonl", root / f"{session_id}.jsonl"]
        for path in candidates:
            if path.is_file():
                return path
        raise RequestError(RESOURCE_NOT_FOUND, f"unknown session {session_id!r}: no transcript at "
                                               f"{' or '.join(str(p) for p in candidates)}",
                           {"sessionId": session_id})


def _left_out(session: AcpSession) -> dict[str, Any] | None:
    """What the session started without (MCP servers it could not use), for a client that looks."""
    return {"nbtoolsched": {"mcpServersLeftOut": session.mcp.left_out}} if session.mcp.left_out else None


def _version() -> str:
    try:
        return metadata.version("nbtoolsched")
    except metadata.PackageNotFoundError:
        return "0.0.0"
