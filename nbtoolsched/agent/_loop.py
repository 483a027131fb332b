"""The query loop: model -> streamed blocks -> tools -> results -> next turn.

Per turn the model's answer is streamed; each tool_use block goes to the scheduler's
streaming executor the moment its ``content_block_stop`` arrives, finished results are
drained after every event, and the rest are collected once the stream ends. One user
message then answers every tool_use, in tool_use order. The loop goes on until a turn
calls no tool, or a limit, an abort, a stopping hook or a model failure ends it.

The conversation is also written, as it happens, to the session's transcript file in
Claude Code's JSONL format (``<session_dir>/<session_id>.jsonl``, see
``nbtoolsched._session_log``); hooks get its path as ``transcript_path``. Each block of
an answer is written the moment it finishes streaming, before its tool starts, so a
hook reading the file finds the tool_use it is asked about.

Whatever ends a run, the transcript stays valid: every tool_use is answered exactly
once. A stream that fails is retried (if ``stream_retries`` allows and the error is
retryable) with the partial answer dropped and a fresh executor; a final failure keeps
the finished blocks of the partial answer and answers its tool calls (a real result
for a call that finished, an error for the rest).

Model fallback, as Claude Code does it: with a ``fallback_model``, an overloaded model
(HTTP 529 or an ``overloaded_error``; an adapter such as ``AnthropicModel`` has already
retried it, as Claude Code retries three times) or a retryable failure that outlasts
``stream_retries`` switches the rest of the run to the fallback model. The partial
answer is discarded with its executor (running calls stop, queued ones never start), a
fresh executor takes the new answer, and in the transcript file every tool_use of the
abandoned answer is answered ("Model fallback triggered") on a side branch, followed by
a ``system`` entry naming the switch; a ``ModelFallback`` event says so. (Claude Code
keeps the abandoned answer and its results in the main chain of the file while the
fallback model never sees them; we keep the file's chain equal to what the model saw,
so a resumed session continues exactly that conversation.) The next run starts on the
primary model again, as each new prompt does in Claude Code.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
import uuid
import warnings
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Callable, Iterable, Literal, Sequence, TypedDict, Union, Unpack

from ..execution._pipeline import CallOutcome
from ..execution._prepare import discovered_tools
from ..execution._results import error_result
from .._messages import Block, BlockLike, MessageLike, TextBlock, ToolResultBlock, ToolUseBlock
from ..permissions._approvals import Approver
from .._registry import ToolRegistry
from .._tasks import TaskOwner
from .._events import (AgentFinished, AgentStarted, ModelBlock, ModelFallback, ModelFinished, StreamFailed, TextDelta,
                       TurnFinished, TurnStarted)
from .._events import Event, Listener, RunEvents
from ..scheduling._trace import Trace
from ..scheduling._scheduler import DEFAULT, Default, Scheduler
from ..scheduling._engine import StreamingToolExecutor, TrackedTool
from .._session_log import TranscriptWriter, transcript_file_for
from .._tool._abort import INTERRUPT, USER_ABORT, AbortSignal
from .._tool._context import ToolContext
from . import _texts as texts
from ..models._assembler import FinishedBlock, StreamAssembler
from ..models._protocol import Model, ModelError
from ._transcript import answer_dangling, as_dict

__all__ = ["Agent", "AgentResult", "StopReason", "model_name"]

StopReason = Literal[
    "end_turn", "max_turns", "max_messages", "aborted_streaming", "aborted_tools", "hook_stopped", "model_error",
    "approval_deferred",  # a headless ``defer`` policy held back an approval: the run pauses for a person
]

Prompt = Union[str, BlockLike, list[BlockLike]]  # text, a block, or a non-empty list of blocks


class AgentOptions(TypedDict, total=False):
    """The keyword options of ``Agent`` that ``Agent.from_transcript`` passes on."""

    system: str | None
    max_turns: int | None
    max_messages: int | None
    streaming: bool
    stream_retries: int
    on_event: Listener | None
    fallback_model: Model | None


@dataclass
class AgentResult:
    messages: list[dict[str, Any]]  # the whole transcript, as API-shaped dicts
    stop_reason: StopReason
    turns: int  # model calls that produced an answer (retries not counted)
    trace: Trace
    error: ModelError | None = None  # set when stop_reason == "model_error"
    abort_reason: str | None = None  # set when the run was aborted

    @property
    def final_text(self) -> str:
        """The text of the last assistant message ("" if there is none)."""
        for message in reversed(self.messages):
            if message["role"] == "assistant":
                content = message["content"]
                if isinstance(content, str):
                    return content
                return "".join(b.get("text", "") for b in content if b.get("type") == "text")
        return ""


@dataclass
class _Slot:
    """One tool_use block of the answer and how it gets its result."""

    block: ToolUseBlock
    tracked: TrackedTool | None = None
    result: ToolResultBlock | None = None
    outcome: CallOutcome | None = None


@dataclass
class _TurnState:
    number: int
    watch: AbortSignal  # aborting it stops the stream (the run's signal, or the executor's)
    executor: StreamingToolExecutor | None
    assembler: StreamAssembler = field(default_factory=StreamAssembler)
    slots: list[_Slot] = field(default_factory=list)
    aborted_streaming: bool = False
    log_id: str = field(default_factory=lambda: f"msg_{uuid.uuid4().hex[:24]}")  # the answer's id in the transcript file

    def drain(self) -> None:
        """Take what the executor has ready; outcomes are read from the slots later."""
        if self.executor is not None:
            for _ in self.executor.get_completed_results():
                pass


class Agent:
    """Drives a model and a scheduler through turns until the model stops calling tools."""

    def __init__(
        self,
        model: Model,
        scheduler: Scheduler | ToolRegistry | None = None,
        *,
        context: ToolContext | None = None,
        system: str | None = None,
        messages: Sequence[MessageLike] | None = None,
        max_turns: int | None = 100,
        max_messages: int | None = None,
        streaming: bool = True,
        stream_retries: int = 0,
        on_event: Listener | None = None,
        transcript: str | os.PathLike[str] | TranscriptWriter | bool | None = None,
        fallback_model: Model | None = None,
    ) -> None:
        """``transcript``: where the session's JSONL transcript is written. None (the
        default) means ``context.transcript_path`` or ``<session_dir>/<session_id>.jsonl``;
        a path or a ``TranscriptWriter`` picks another; False writes none. An existing
        file is continued; when it is empty, ``messages`` are written to it first.
        ``fallback_model``: where a run goes when ``model`` is overloaded or keeps failing."""
        for role, candidate in (("model", model), ("fallback_model", fallback_model)):
            if candidate is not None and not callable(getattr(candidate, "stream", None)):
                raise TypeError(f"{role} must have a stream(messages, tools=..., system=...) method, "
                                f"got {type(candidate).__name__}")
        for name, value in (("max_turns", max_turns), ("max_messages", max_messages)):
            if value is not None and (not isinstance(value, int) or value < 1):
                raise ValueError(f"{name} must be a positive integer or None, got {value!r}")
        if not isinstance(stream_retries, int) or stream_retries < 0:
            raise ValueError(f"stream_retries must be a non-negative integer, got {stream_retries!r}")
        self.model = model
        self.fallback_model = fallback_model
        self._active: Model = model  # the model this run streams from (the fallback after a switch)
        self._options: dict[str, Any] = {}  # this run's overrides for the scheduler (mode, cap, approver)
        self.scheduler = _as_scheduler(scheduler)
        self.system = system
        self.messages: list[dict[str, Any]] = [as_dict(m) for m in messages or []]
        # The conversation's tool context: each turn starts from it and leaves its modifiers
        # in it; the scheduler itself is configuration and is never changed by a turn.
        start = context if context is not None else self.scheduler.context
        self.context: ToolContext = start.replace(
            registry=start.registry if start.registry is not None else self.scheduler.registry, messages=self.messages
        )
        self.max_turns = max_turns
        self.max_messages = max_messages
        self.streaming = streaming
        self.stream_retries = stream_retries
        self._listeners: list[Listener] = [on_event] if on_event is not None else []
        self._signal: AbortSignal | None = None
        self.transcript = self._open_transcript(transcript)
        # What of ``messages`` is in the file: (message index, blocks of it written). A file
        # that already holds entries is taken to hold the messages given (a resumed session).
        resumed = self.transcript is not None and self.transcript.last_uuid is not None and self.messages
        self._log_at = (len(self.messages) - 1, _block_count(self.messages[-1])) if resumed else (0, 0)
        self._ahead: list[dict[str, Any]] = []  # answer blocks written before the answer joined ``messages``

    # -- events -----------------------------------------------------------------------------
    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Get every event of every run (the loop's and the scheduler's); returns an unsubscribe."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def _listeners_present(self) -> bool:
        return bool(self._listeners or self.scheduler.events.listeners)

    def _dispatch(self, event: Any) -> None:
        for listener in (*self.scheduler.events.listeners, *self._listeners):
            try:
                listener(event)
            except Exception:  # a broken viewer must never break a run
                pass

    async def events(self, prompt: Prompt | None = None, *, abort: AbortSignal | None = None) -> AsyncIterator[Event]:
        """Run and yield every event live; the last is ``AgentFinished`` (its ``result`` is the AgentResult)."""
        queue: asyncio.Queue[Event | None] = asyncio.Queue()
        unsubscribe = self.subscribe(queue.put_nowait)
        async with TaskOwner() as owner:  # the run never outlives this generator
            task = owner.start(self.run(prompt, abort=abort))
            task.add_done_callback(lambda _: queue.put_nowait(None))
            try:
                while (event := await queue.get()) is not None:
                    yield event
                task.result()
            finally:
                unsubscribe()
                if not task.done():  # the consumer stopped early: stop the run so every call is answered
                    self.abort()
                    await asyncio.wait([task])

    # -- running ------------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self._signal is not None

    @property
    def active_model(self) -> Model:
        """The model answering now: ``model``, or ``fallback_model`` after a switch in this run."""
        return self._active

    def abort(self, reason: str = USER_ABORT) -> None:
        """Stop the current run (``"interrupt"`` lets tools that block on interrupts finish)."""
        if self._signal is not None:
            self._signal.abort(reason)

    async def run(
        self,
        prompt: Prompt | None = None,
        *,
        abort: AbortSignal | None = None,
        mode: str | None | Default = DEFAULT,
        max_concurrency: int | None | Default = DEFAULT,
        approver: Approver | None | Default = DEFAULT,
    ) -> AgentResult:
        """Add ``prompt`` (text or blocks; None to answer the transcript as it is) and loop.

        ``mode``, ``max_concurrency`` and ``approver`` override the scheduler's own for the
        tool calls of this run only (as ``Scheduler.run`` takes them)."""
        if self._signal is not None:
            raise RuntimeError("this Agent is already running; wait for the run to finish or abort it")
        self._options = {k: v for k, v in (("mode", mode), ("max_concurrency", max_concurrency), ("approver", approver))
                         if v is not DEFAULT}
        self._active = self.model
        if prompt is not None:
            self._append("user", _prompt_blocks(prompt))
        if not self.messages or self.messages[-1]["role"] != "user":
            raise ValueError("nothing to answer: give a prompt, or messages that end with a user message")
        self._log_sync()
        signal = self._signal = abort.child() if abort is not None else AbortSignal()
        trace = Trace()
        stop_recording = self.subscribe(trace.record)
        self._dispatch(AgentStarted(time.monotonic(), prompt is not None, len(self.messages)))
        try:
            result = await self._loop(signal, trace)
        except asyncio.CancelledError:
            signal.abort(USER_ABORT)
            if self._ahead:  # an answer cut off mid-stream is kept, as the file already holds it
                self._append("assistant", self._ahead)
            answer_dangling(self.messages, texts.run_cancelled())
            self._log_sync()
            raise
        finally:
            self._signal = None
        self._dispatch(AgentFinished(time.monotonic(), result.stop_reason, result.turns, result))
        stop_recording()
        return result

    def add_messages(self, messages: Iterable[MessageLike]) -> None:
        """Append finished messages (an accepted speculation, say) to the conversation and
        its transcript file; the next run answers them. Content for the role of the last
        message joins it, so roles keep alternating."""
        if self._signal is not None:
            raise RuntimeError("cannot add messages while the Agent is running; wait for the run to finish")
        for message in messages:
            data = as_dict(message)
            content = data.get("content")
            blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])
            if data.get("role") not in ("user", "assistant"):
                raise ValueError(f"a message's role must be 'user' or 'assistant', got {data.get('role')!r}")
            self._append(data["role"], blocks)
        self._log_sync()

    @classmethod
    def from_transcript(
        cls,
        path: str | os.PathLike[str],
        model: Model,
        scheduler: Scheduler | ToolRegistry | None = None,
        *,
        context: ToolContext | None = None,
        **options: Unpack[AgentOptions],
    ) -> "Agent":
        """An Agent that continues the session in a JSONL transcript (ours or Claude Code's).

        It keeps the file's session id and goes on writing the same file; calls of a last
        answer that never got a result are answered with a placeholder first. Raises
        ``TranscriptError`` naming every problem when the file cannot be continued safely."""
        from ._resume import resume_transcript

        sched = _as_scheduler(scheduler)
        start = context if context is not None else sched.context
        resumed = resume_transcript(path, start.cwd)
        start = start.replace(session_id=resumed.session_id, transcript_path=resumed.writer.path)
        return cls(model, sched, context=start, messages=resumed.messages, transcript=resumed.writer, **options)

    async def _loop(self, signal: AbortSignal, trace: Trace) -> AgentResult:
        turns = 0
        while True:
            if self.max_messages is not None and len(self.messages) >= self.max_messages:
                return AgentResult(self.messages, "max_messages", turns, trace)
            turns += 1
            stop, error, abort_reason = await self._turn(turns, signal)
            if stop is None and self.max_turns is not None and turns >= self.max_turns:
                stop = "max_turns"
            self._dispatch(TurnFinished(time.monotonic(), turns, stop))
            if stop is not None:
                return AgentResult(self.messages, stop, turns, trace, error, abort_reason)

    # -- one turn ---------------------------------------------------------------------------------
    async def _turn(self, number: int, signal: AbortSignal) -> tuple[StopReason | None, ModelError | None, str | None]:
        self._dispatch(TurnStarted(time.monotonic(), number))
        discovered = discovered_tools(self.messages)
        tools = self.scheduler.registry.api_tools(discovered)
        system = "\n\n".join(p for p in (self.system, self.scheduler.registry.deferred_prompt(discovered)) if p) or None
        attempt = 0
        mark = self.transcript.last_uuid if self.transcript is not None else None
        while True:
            state = self._new_state(number, signal)
            async with state.executor if state.executor is not None else contextlib.nullcontext():
                error = await self._stream(state, tools, system)
                if error is not None and not state.aborted_streaming:
                    fall_back = self._should_fall_back(error, attempt, signal)
                    will_retry = fall_back or (attempt < self.stream_retries and error.retryable and not signal.aborted)
                    self._dispatch(StreamFailed(time.monotonic(), number, error.kind, error.message, will_retry))
                    if not will_retry:
                        self._answer_failed(state, error)
                        return "model_error", error, None
                    if state.executor is not None:
                        state.executor.discard()  # the partial answer is dropped; its calls never count
                    if fall_back:
                        mark = self._fall_back(state, error, mark)
                        attempt = 0
                        continue
                    attempt += 1
                    self._rewind(mark)  # ...and in the file it becomes an abandoned branch
                    continue
                self._dispatch(ModelFinished(time.monotonic(), number, state.assembler.stop_reason,
                                             len(state.assembler.finished), dict(state.assembler.usage)))
                self._append("assistant", state.assembler.blocks())
                self._log_sync()
                outcomes = await self._collect(state, signal)
            return self._finish_turn(state, outcomes)

    def _should_fall_back(self, error: ModelError, attempt: int, signal: AbortSignal) -> bool:
        """Overloaded (the adapter already retried), or still failing after our own retries."""
        if self.fallback_model is None or self._active is self.fallback_model or signal.aborted:
            return False
        return error.overloaded or (error.retryable and attempt >= self.stream_retries)

    def _fall_back(self, state: _TurnState, error: ModelError, mark: str | None) -> str | None:
        """Switch to the fallback model; the abandoned answer stays in the file, answered, off
        the main chain. Returns where the file's chain now ends (the switch notice)."""
        before, after = model_name(self._active), model_name(self.fallback_model)
        if self.transcript is not None and state.slots:
            text = texts.model_fallback_result(before, after)
            results = [error_result(slot.block.id, text) for slot in state.slots]
            labels = {slot.block.id: texts.MODEL_FALLBACK for slot in state.slots}
            self._write(lambda w: w.append_tool_results(results, labels))
        self._rewind(mark)
        reason = error.message if len(error.message) <= 200 else error.message[:199] + "\u2026"
        if self.transcript is not None:
            self._write(lambda w: w.append_system(texts.model_switched(before, after, reason), level="warning"))
        assert self.fallback_model is not None
        self._active = self.fallback_model
        self._dispatch(ModelFallback(time.monotonic(), state.number, before, after, reason))
        return self.transcript.last_uuid if self.transcript is not None else None

    def _new_state(self, number: int, signal: AbortSignal) -> _TurnState:
        if not self.streaming:
            return _TurnState(number, signal, None)
        executor = self.scheduler.streaming_executor(context=self.context, abort=signal, events=RunEvents([self._dispatch]),
                                                     **self._options)
        return _TurnState(number, executor.context.abort, executor)

    def _keep_context(self, final: ToolContext) -> None:
        """The turn's modifiers stay for the next turn; the run's own abort signal does not."""
        self.context = final.for_call("", self.context.abort)

    async def _stream(self, state: _TurnState, tools: list[dict[str, Any]], system: str | None) -> ModelError | None:
        """Play the model's answer into ``state``; an abort cancels it. Returns the failure, if any."""
        async with TaskOwner() as owner:  # leaving it, the stream's task has ended (its aclose ran)
            task = owner.start(self._consume(state, tools, system))
            stop_watching = state.watch.on_abort(lambda reason: task.cancel())  # the stream stops with the turn
            try:
                await task
            except asyncio.CancelledError:
                current = asyncio.current_task()
                if (current is not None and current.cancelling()) or not state.watch.aborted:
                    raise
                state.aborted_streaming = True
            except ModelError as err:
                return err
            except Exception as err:  # a model adapter or script with a bug
                return ModelError("unexpected", f"{type(err).__name__}: {err}", events_before=state.assembler.events_seen)
            finally:
                stop_watching()
        return None

    async def _consume(self, state: _TurnState, tools: list[dict[str, Any]], system: str | None) -> None:
        stream = self._active.stream(list(self.messages), tools=tools, system=system)
        if not hasattr(stream, "__anext__"):
            raise ModelError("unexpected", f"{type(self._active).__name__}.stream() must return an async iterator "
                                           f"of events, got {type(stream).__name__}")
        try:
            async for event in stream:
                if self._listeners_present() and _is_text_delta(event):
                    self._dispatch(TextDelta(time.monotonic(), state.number, event.get("index", 0), event["delta"].get("text", "")))
                finished = state.assembler.feed(event)
                if finished is not None:
                    self._on_block(state, finished)
                state.drain()
        finally:
            aclose = getattr(stream, "aclose", None)
            if aclose is not None:
                await aclose()

    def _on_block(self, state: _TurnState, finished: FinishedBlock) -> None:
        block = finished.block
        extra = {"tool_use_id": block.id, "tool_name": block.name} if isinstance(block, ToolUseBlock) else {}
        self._dispatch(ModelBlock(time.monotonic(), state.number, finished.index, block.type,
                                  extra.get("tool_use_id", ""), extra.get("tool_name", ""),
                                  block.input if isinstance(block, ToolUseBlock) else None))
        self._log_ahead(state, block)
        if not isinstance(block, ToolUseBlock):
            return
        slot = _Slot(block)
        state.slots.append(slot)
        if finished.input_error is not None:
            slot.result = error_result(block.id, texts.bad_input_json(block.name, finished.input_error))
        elif state.executor is not None and not state.watch.aborted:
            slot.tracked = state.executor.add_tool(block)

    async def _collect(self, state: _TurnState, signal: AbortSignal) -> list[CallOutcome]:
        """Wait for every started call; returns the outcomes in tool_use order."""
        if state.executor is not None:
            async for _ in state.executor.get_remaining_results():
                pass
            self._keep_context(state.executor.context)
            for slot in state.slots:
                if slot.tracked is not None:
                    slot.outcome = slot.tracked.outcome
        else:
            await self._run_batch(state, signal)
        return [slot.outcome for slot in state.slots if slot.outcome is not None]

    async def _run_batch(self, state: _TurnState, signal: AbortSignal) -> None:
        """Non-streaming mode: every call of the answer through ``run_tools`` at once."""
        todo = [slot for slot in state.slots if slot.result is None]
        if not todo or state.aborted_streaming:
            return
        result = await self.scheduler.run_outcomes([slot.block for slot in todo], context=self.context, abort=signal,
                                                   events=RunEvents([self._dispatch]), cancel_on_shell_error=True,
                                                   **self._options)
        for slot, outcome in zip(todo, result.outcomes):
            slot.outcome = outcome
        state.watch = result.context.abort  # a rejected prompt aborts the run's own signal
        self._keep_context(result.context)

    def _finish_turn(self, state: _TurnState, outcomes: list[CallOutcome]) -> tuple[StopReason | None, None, str | None]:
        aborted = state.aborted_streaming or state.watch.aborted
        reason = state.watch.reason if aborted else None
        content = self._results(state, reason)
        content += [a for outcome in outcomes for a in outcome.attachments]
        if aborted and reason != INTERRUPT:
            content.append(TextBlock(texts.INTERRUPT_NOTE if state.aborted_streaming else texts.INTERRUPT_NOTE_TOOLS))
        self._append("user", content)
        self._log_sync()
        if state.aborted_streaming:
            return "aborted_streaming", None, reason
        if aborted:
            return "aborted_tools", None, reason
        if any(outcome.prevent_continuation for outcome in outcomes):
            return "hook_stopped", None, None
        if any(outcome.status == "deferred" for outcome in outcomes):
            return "approval_deferred", None, None  # a person answers later; the model must not go on
        return (None if state.slots else "end_turn"), None, None

    @staticmethod
    def _results(state: _TurnState, reason: str | None) -> list[Block]:
        """One result per tool_use slot, in order; a call that never started says why."""
        results: list[Block] = []
        for slot in state.slots:
            if slot.result is None and slot.outcome is not None:
                slot.result = slot.outcome.result
            if slot.result is None:
                text = texts.not_started(reason) if reason else texts.MISSING_RESULT
                slot.result = error_result(slot.block.id, text)
            results.append(slot.result)
        return results

    def _answer_failed(self, state: _TurnState, error: ModelError) -> None:
        """A final stream failure: keep the finished blocks, answer each of their calls."""
        if state.executor is not None:
            state.executor.discard()
        blocks = state.assembler.blocks()
        if not blocks:
            return
        self._append("assistant", blocks)
        self._log_sync()
        if not state.slots:
            return
        results: list[Block] = []
        for slot in state.slots:
            outcome = slot.tracked.outcome if slot.tracked is not None else None
            if slot.result is None and outcome is not None and outcome.status != "cancelled":
                slot.result = outcome.result
            results.append(slot.result or error_result(slot.block.id, texts.stream_failed(str(error))))
        self._append("user", [*results, TextBlock(texts.stream_failed_note(str(error)))])
        self._log_sync()

    # -- transcript ---------------------------------------------------------------------------------
    def _open_transcript(self, spec: str | os.PathLike[str] | TranscriptWriter | bool | None) -> TranscriptWriter | None:
        if spec is False:
            return None
        ctx = self.context
        if isinstance(spec, TranscriptWriter):
            writer = spec
        elif spec is None or spec is True:
            path = ctx.transcript_path or transcript_file_for(ctx.session_dir, ctx.session_id)
            writer = TranscriptWriter(path, ctx.session_id, ctx.cwd)
        else:
            writer = TranscriptWriter(spec, ctx.session_id, ctx.cwd)
        self.context = ctx.replace(transcript_path=writer.path)  # what hooks get as transcript_path
        return writer

    def _log_ahead(self, state: _TurnState, block: Block) -> None:
        """Write one finished block of the answer now, before its tool can start."""
        if self.transcript is None:
            return
        data = block.to_dict()
        self._write(lambda w: w.append_assistant([data], message_id=state.assembler.message_id or state.log_id,
                                                 model=state.assembler.model))
        self._ahead.append(data)

    def _rewind(self, mark: str | None) -> None:
        if self.transcript is not None:
            self.transcript.rewind(mark)
        self._ahead = []

    def _log_sync(self) -> None:
        """Write what ``messages`` holds beyond what the file has (blocks written ahead are skipped)."""
        if self.transcript is None:
            return
        index, done = self._log_at
        while index < len(self.messages):
            message = self.messages[index]
            content = message["content"]
            blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content)
            new = blocks[done:]  # a message is only ever extended at its end (see _append)
            if message["role"] == "assistant" and self._ahead:
                new = new[len(self._ahead):]
                self._ahead = []
            if new:
                body = content if isinstance(content, str) else new  # a string prompt is written as one
                self._write(lambda w: w.append_message({"role": message["role"], "content": body}))
            if index == len(self.messages) - 1:
                self._log_at = (index, len(blocks))
                return
            index, done = index + 1, 0
        self._log_at = (index, done)

    def _write(self, action: Callable[[TranscriptWriter], Any]) -> None:
        assert self.transcript is not None
        try:
            action(self.transcript)
        except OSError as err:  # a full disk must not stop the agent; say so once and stop writing
            warnings.warn(f"the transcript {self.transcript.path} could not be written ({err}); writing stopped",
                          RuntimeWarning, stacklevel=2)
            self.transcript = None

    def _append(self, role: str, blocks: list[Any]) -> None:
        """Add a message; content for the same role as the last message joins it (keeps alternation)."""
        content = [b.to_dict() if isinstance(b, Block) else b for b in blocks]
        if not content:
            return
        if self.messages and self.messages[-1]["role"] == role:
            last = self.messages[-1]
            earlier = last["content"]
            earlier = [{"type": "text", "text": earlier}] if isinstance(earlier, str) else list(earlier)
            last["content"] = earlier + content
        else:
            self.messages.append({"role": role, "content": content})


def model_name(model: Any) -> str:
    """A model as people call it: an API model id, a scripted model's name, else its class."""
    for attribute in ("name", "model"):
        value = getattr(model, attribute, None)
        if isinstance(value, str) and value:
            return value
    return type(model).__name__


def _block_count(message: dict[str, Any]) -> int:
    content = message["content"]
    return 1 if isinstance(content, str) else len(content)


def _as_scheduler(value: Scheduler | ToolRegistry | None) -> Scheduler:
    if isinstance(value, Scheduler):
        return value
    if value is None or isinstance(value, ToolRegistry):
        return Scheduler(value)
    raise TypeError(f"scheduler must be a Scheduler or a ToolRegistry, got {type(value).__name__}")


def _prompt_blocks(prompt: object) -> list[BlockLike]:
    if isinstance(prompt, str):
        if not prompt:
            raise ValueError("the prompt is empty")
        return [TextBlock(prompt)]
    if isinstance(prompt, (Block, dict)):
        return [prompt]
    if isinstance(prompt, list) and prompt:
        return list(prompt)
    raise TypeError(f"prompt must be text, a block or a non-empty list of blocks, got {type(prompt).__name__}")


def _is_text_delta(event: Any) -> bool:
    if not isinstance(event, dict) or event.get("type") != "content_block_delta":
        return False
    delta = event.get("delta")
    return isinstance(delta, dict) and delta.get("type") == "text_delta"
