"""The client side of the ACP tests: the SDK's own connection, to the real agent process.

``running_agent`` starts ``python -m nbtoolsched acp --script ...`` in a subprocess with
``acp.spawn_agent_process``, in a project folder, with a private Claude config folder;
``Client`` is what the agent talks to: it records every update and request in arrival
order, answers permission requests as the test says, and serves ``fs/*`` from the disk
or from "unsaved buffers" the test gives it. Tests wait on what the client has seen
(``wait_until``), never on time.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, AsyncIterator, Awaitable, Callable

from tests.processes import live
from acp import spawn_agent_process
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    DeniedOutcome,
    FileSystemCapabilities,
    InitializeResponse,
    PermissionOption,
    ReadTextFileResponse,
    RequestPermissionResponse,
    ToolCallProgress,
    ToolCallStart,
    ToolCallUpdate,
    WriteTextFileResponse,
)

ROOT = Path(__file__).resolve().parents[2]
FINAL = ("completed", "failed")
PATIENCE = 20  # seconds before a wait on the agent fails the test (it takes well under one)

Answer = Callable[[ToolCallUpdate, list[PermissionOption]], Awaitable[RequestPermissionResponse]]


def choose(option_id: str) -> Answer:
    async def answer(tool_call: ToolCallUpdate, options: list[PermissionOption]) -> RequestPermissionResponse:
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=option_id))

    return answer


def cancelled_after(event: asyncio.Event | None = None) -> Answer:
    """Answer ``cancelled`` (what a client answers every pending request once it cancels),
    after ``event`` is set when given; never answering at all is ``hold_forever``."""
    async def answer(tool_call: ToolCallUpdate, options: list[PermissionOption]) -> RequestPermissionResponse:
        if event is not None:
            await event.wait()
        return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))

    return answer


async def hold_forever(tool_call: ToolCallUpdate, options: list[PermissionOption]) -> RequestPermissionResponse:
    await asyncio.Event().wait()
    raise AssertionError("unreachable")


@dataclass
class Call:
    """One tool call as the client knows it, from the updates in order."""

    id: str
    title: str = ""
    kind: str | None = None
    raw_input: Any = None
    locations: list[Any] = field(default_factory=list)
    statuses: list[str] = field(default_factory=list)
    content: list[Any] = field(default_factory=list)
    contents: list[list[Any]] = field(default_factory=list)  # every content the call was shown with

    @property
    def status(self) -> str | None:
        return self.statuses[-1] if self.statuses else None

    def texts(self) -> str:
        return "\n".join(getattr(getattr(c, "content", None), "text", "") or "" for c in self.content)

    def diffs(self) -> list[Any]:
        return [c for c in self.content if getattr(c, "type", None) == "diff"]


class Client:
    """The ACP client the agent sees (its methods are the ones the SDK routes to)."""

    def __init__(self, answer: Answer = choose("allow_once"), *, buffers: dict[str, str] | None = None,
                 hold_reads: int = 0) -> None:
        self.answer = answer
        self.buffers = dict(buffers or {})  # path -> text the "editor" holds, unsaved
        self.hold_reads = hold_reads  # the first N reads are answered only once all N have arrived
        self.log: list[tuple[str, Any]] = []  # ("update", update) / ("permission", request) / ("read", path)...
        self.permission_requests: list[tuple[ToolCallUpdate, list[PermissionOption]]] = []
        self.reads: list[str] = []
        self.writes: list[tuple[str, str]] = []
        self._changed = asyncio.Condition()
        self._reads_arrived = asyncio.Event()

    # -- what the agent calls ---------------------------------------------------------------
    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        await self._record("update", update)

    async def request_permission(self, session_id: str, tool_call: ToolCallUpdate, options: list[PermissionOption],
                                 **kwargs: Any) -> RequestPermissionResponse:
        self.permission_requests.append((tool_call, options))
        await self._record("permission", tool_call)
        return await self.answer(tool_call, options)

    async def read_text_file(self, session_id: str, path: str, line: int | None = None, limit: int | None = None,
                             **kwargs: Any) -> ReadTextFileResponse:
        self.reads.append(path)
        await self._record("read", path)
        if len(self.reads) <= self.hold_reads:
            if len(self.reads) == self.hold_reads:
                self._reads_arrived.set()
            await asyncio.wait_for(self._reads_arrived.wait(), 10)  # sequential reads never get here
        text = self.buffers[path] if path in self.buffers else Path(path).read_text(encoding="utf-8")
        if line is not None or limit is not None:
            lines = text.splitlines(keepends=True)
            start = (line or 1) - 1
            text = "".join(lines[start: start + limit if limit is not None else None])
        return ReadTextFileResponse(content=text)

    async def write_text_file(self, session_id: str, path: str, content: str, **kwargs: Any) -> WriteTextFileResponse:
        self.writes.append((path, content))
        self.buffers.pop(path, None)
        Path(path).write_text(content, encoding="utf-8")  # the editor saves what it was given
        await self._record("write", path)
        return WriteTextFileResponse()

    # -- what the test reads ----------------------------------------------------------------
    async def _record(self, kind: str, item: Any) -> None:
        async with self._changed:
            self.log.append((kind, item))
            self._changed.notify_all()

    async def wait_until(self, condition: Callable[[], bool], what: str, timeout: float = PATIENCE) -> None:
        async def waiting() -> None:
            async with self._changed:
                await self._changed.wait_for(condition)

        try:
            await asyncio.wait_for(waiting(), timeout)
        except asyncio.TimeoutError:
            raise AssertionError(f"the client never saw {what}; it saw:\n{self.describe()}") from None

    def updates(self) -> list[Any]:
        return [item for kind, item in self.log if kind == "update"]

    def calls(self) -> dict[str, Call]:
        """Every tool call, folded from the updates as a client folds them."""
        calls: dict[str, Call] = {}
        for update in self.updates():
            if not isinstance(update, (ToolCallStart, ToolCallProgress)):
                continue
            call = calls.setdefault(update.tool_call_id, Call(update.tool_call_id))
            if update.title:
                call.title = update.title
            if update.kind:
                call.kind = update.kind
            if update.raw_input is not None:
                call.raw_input = update.raw_input
            if update.locations:
                call.locations = list(update.locations)
            if update.status:
                call.statuses.append(update.status)
            if update.content is not None:
                call.content = list(update.content)
                call.contents.append(call.content)
        return calls

    def call_named(self, title_start: str) -> Call:
        found = [call for call in self.calls().values() if call.title.startswith(title_start)]
        assert len(found) == 1, f"calls titled {title_start!r}: {found}"
        return found[0]

    def text_of(self, title_start: str) -> str:
        """The latest content text of the call titled so ("" while there is none)."""
        found = [call for call in self.calls().values() if call.title.startswith(title_start)]
        return found[0].texts() if found else ""

    def message_text(self, kind: str = "agent_message_chunk") -> str:
        return "".join(getattr(u.content, "text", "") for u in self.updates() if getattr(u, "session_update", None) == kind)

    def describe(self) -> str:
        return "\n".join(f"  {kind}: {_short(item)}" for kind, item in self.log[-40:])


def _short(item: Any) -> str:
    if hasattr(item, "model_dump"):
        text = json.dumps(item.model_dump(mode="json", exclude_none=True), default=str)
    else:
        text = str(item)
    return text if len(text) < 300 else text[:300] + "..."


@dataclass
class Running:
    conn: Any  # the SDK's ClientSideConnection
    process: asyncio.subprocess.Process
    client: Client
    wire: list[Any]  # every JSON-RPC message in and out, in the order it crossed the pipe
    init: InitializeResponse | None = None
    stderr: Path | None = None

    async def new_session(self, cwd: Path, **kwargs: Any) -> str:
        return (await self.conn.new_session(cwd=str(cwd), mcp_servers=kwargs.pop("mcp_servers", []), **kwargs)).session_id

    async def prompt(self, session_id: str, *blocks: Any) -> Any:
        """``session/prompt``, returning once the client has also handled every update sent before the answer."""
        response = await asyncio.wait_for(self.conn.prompt(session_id=session_id, prompt=list(blocks)), PATIENCE)
        await self.settled()
        return response

    async def settled(self) -> None:
        """Until the client handled every update that came over the wire so far (the SDK
        resolves an answer at once, and hands notifications to tasks of their own)."""
        sent = len(self.incoming("session/update"))
        await self.client.wait_until(lambda: len(self.client.updates()) >= sent, f"{sent} updates handled")

    def incoming(self, method: str) -> list[int]:
        """Where on the wire the agent's messages of ``method`` are."""
        return [i for i, (direction, message) in enumerate(self.wire)
                if direction == "incoming" and message.get("method") == method]

    def order(self) -> list[tuple[str, str]]:
        """(toolCallId, status) of every status the agent sent, in the order it sent them."""
        updates = [self.wire[i][1]["params"]["update"] for i in self.incoming("session/update")]
        return [(u["toolCallId"], u["status"]) for u in updates if "toolCallId" in u and u.get("status")]

    def answer_to(self, method: str) -> int:
        """Where on the wire the agent answered the (one) request of ``method``."""
        [request] = [m["id"] for d, m in self.wire if d == "outgoing" and m.get("method") == method]
        [where] = [i for i, (d, m) in enumerate(self.wire) if d == "incoming" and m.get("id") == request and "method" not in m]
        return where

    async def close_stdin_and_wait(self, timeout: float = PATIENCE) -> int:
        """What a client that quits does: close the agent's stdin; the agent must exit by itself."""
        assert self.process.stdin is not None
        self.process.stdin.write_eof()
        return await asyncio.wait_for(self.process.wait(), timeout)


def capabilities(fs: bool) -> ClientCapabilities:
    return ClientCapabilities(fs=FileSystemCapabilities(read_text_file=fs, write_text_file=fs), terminal=False)


@asynccontextmanager
async def running_agent(client: Client, project: Path, work: Path, script: list[Any], *, fs: bool = False,
                        args: tuple[str, ...] = ()) -> AsyncIterator[Running]:
    """The agent process, initialized; ``work`` holds its sessions, the script, its stderr
    and the user's (empty) Claude config folder."""
    script_file = work / "script.json"
    script_file.write_text(json.dumps({"name": "test-script", "turns": script}), encoding="utf-8")
    (work / "claude-user").mkdir(exist_ok=True)
    env = {"CLAUDE_CONFIG_DIR": str(work / "claude-user"), "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}
    stderr_path = work / "agent-stderr.txt"
    wire: list[Any] = []
    with open(stderr_path, "w", encoding="utf-8") as stderr:
        async with spawn_agent_process(
            lambda _agent: client, sys.executable, "-m", "nbtoolsched", "acp", "--script", str(script_file),
            "--session-dir", str(work / "sessions"), *args, env=env, cwd=project, transport_kwargs={"stderr": stderr},
            observers=[lambda event: wire.append((event.direction.value, event.message))],
        ) as (conn, process):
            running = Running(conn, process, client, wire, stderr=stderr_path)
            running.init = await asyncio.wait_for(conn.initialize(protocol_version=1, client_capabilities=capabilities(fs)), 30)
            yield running


def tool_use(name: str, **input: Any) -> dict[str, Any]:
    return {"type": "tool_use", "name": name, "input": input}


def transcript_of(work: Path, session_id: str) -> Path:
    return work / "sessions" / session_id / f"{session_id}.jsonl"


def running(program: str, argument: str) -> list[int]:
    """Live processes of ``program`` with ``argument`` among their arguments."""
    return live(lambda argv: os.path.basename(argv[0]) == program.encode() and argument.encode() in argv[1:])


def following(project: Path, tag: str) -> tuple[str, str]:
    """A command that runs until it is stopped and says "started" itself once it runs:
    ``tail -f`` of a file holding that word (read-only, so it runs unasked in the sandbox).
    Returns the command and the file name to find its process by."""
    name = f"ready-{tag}.txt"
    (project / name).write_text("started\n", encoding="utf-8")
    return f"tail -n 1 -f {name}", name


def same_pid_namespace(pid: int) -> bool:
    return os.readlink(f"/proc/{pid}/ns/pid") == os.readlink("/proc/self/ns/pid")
