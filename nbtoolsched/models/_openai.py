"""OpenAIModel: the Model protocol over the official ``openai`` SDK's Chat Completions API.

Any server that speaks OpenAI's Chat Completions protocol works through ``base_url``:
OpenAI itself, vLLM, Ollama, LM Studio, llama.cpp's server, OpenRouter, a LiteLLM proxy.

The loop speaks Anthropic's shapes (``events.py``), so this adapter translates both ways:

* the conversation (``_openai_messages``): assistant ``tool_use`` blocks become
  ``tool_calls``; each ``tool_result`` becomes a ``tool`` role message right after them
  (images a tool returned follow in a user message: a ``tool`` message holds text only);
  the tool schemas become ``function`` tools;
* the stream (``ChunkTranslator``): each chunk's ``delta`` becomes content block events.
  Tool calls arrive as deltas keyed by ``index``; a call's arguments are complete when a
  later index starts or the choice finishes, and only then is its ``content_block_stop``
  sent, so the streaming executor starts each call the moment it is complete, while the
  model is still writing the next one. Arguments that are not a JSON object become the
  same validation result the model gets from Anthropic's stream (the assembler's
  ``input_error``).

Servers differ, and the translator takes each spelling seen in the wild: a call sent
whole in one chunk (Ollama), arguments spread over many chunks (OpenAI, vLLM), a call
with no ``index`` (each new ``id`` is a new call), ``finish_reason: "stop"`` after tool
calls (Ollama: read as ``tool_use``), a last chunk holding only ``usage`` with no
choices (``stream_options.include_usage``), reasoning text in ``reasoning_content``
(vLLM, DeepSeek) or ``reasoning`` (Ollama, OpenRouter), kept as a thinking block.

Failures are the ``ModelError``s ``AnthropicModel`` raises, so the agent's retry and
fallback path treats both alike: a status before the stream is its kind (429
``rate_limited``, 5xx ``api_error``, 401 ``authentication``...); an error inside the
stream, a dropped connection after the first chunk, or a stream that ends without a
``finish_reason`` is a retryable ``stream_error``.
"""

from __future__ import annotations

import json
import os
import uuid
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Iterable

import openai

from . import _stream_events as ev
from ._protocol import ModelError, client_options, kind_for_status

__all__ = ["OpenAIModel", "ChunkTranslator", "openai_messages", "openai_tools", "STOP_REASONS"]

# finish_reason -> the Anthropic stop reason the loop reads ("stop" after a tool call: tool_use)
STOP_REASONS = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "content_filter": "refusal",
}
_NO_KEY = "not-needed"  # what a local server gets when no key is given: most ignore it, the SDK needs one


class OpenAIModel:
    """Streams answers from any server speaking OpenAI's Chat Completions API.

    ``OpenAIModel("qwen2.5-coder:7b", base_url="http://localhost:11434/v1")`` talks to a
    local Ollama; without ``base_url`` it is api.openai.com with ``OPENAI_API_KEY``.
    ``request`` holds extra ``create()`` arguments (``temperature``, ``extra_body``...)."""

    def __init__(
        self,
        model: str,
        *,
        client: openai.AsyncOpenAI | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        max_tokens: int | None = None,
        parallel_tool_calls: bool | None = True,
        max_retries: int = 2,
        timeout: float | None = None,
        **request: Any,
    ) -> None:
        if not isinstance(model, str) or not model.strip():
            raise ValueError(f"OpenAIModel needs a model name, got {model!r}")
        if client is None:
            key = api_key or os.environ.get("OPENAI_API_KEY") or (_NO_KEY if base_url else None)
            if key is None:
                raise ValueError("OpenAIModel needs api_key= or OPENAI_API_KEY to reach api.openai.com "
                                 "(a local server: pass base_url=)")
            client = openai.AsyncOpenAI(**client_options(key, base_url, max_retries, timeout))
        self.client = client
        self.model = model
        self.max_tokens = max_tokens
        self.parallel_tool_calls = parallel_tool_calls  # None: not sent (for servers that refuse the field)
        self.request = request

    @property
    def name(self) -> str:
        return self.model

    def params(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, system: str | None) -> dict[str, Any]:
        """The ``chat.completions.create`` arguments for one answer (without ``stream``)."""
        params: dict[str, Any] = {"model": self.model, "messages": openai_messages(messages, system),
                                  "stream_options": {"include_usage": True}}
        if self.max_tokens is not None:
            params["max_tokens"] = self.max_tokens
        if tools:
            params["tools"] = openai_tools(tools)
            if self.parallel_tool_calls is not None:
                params["parallel_tool_calls"] = self.parallel_tool_calls
        return {**params, **self.request}

    async def stream(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None = None,
        system: str | None = None,
    ) -> AsyncIterator[dict[str, Any]]:
        translator = ChunkTranslator(taken=_tool_use_ids(messages))
        seen = 0
        try:
            stream = await self.client.chat.completions.create(stream=True, **self.params(messages, tools, system))
            async with stream:
                async for chunk in stream:
                    seen += 1
                    raw = chunk.to_dict(mode="json", warnings=False) if hasattr(chunk, "to_dict") else chunk
                    for event in translator.feed(raw):
                        yield event
            for event in translator.finish():
                yield event
        except openai.APIStatusError as err:
            raise _status_error(err, seen) from err
        except openai.APIConnectionError as err:  # APITimeoutError included
            if seen:
                raise ModelError("stream_error", f"the connection broke in the middle of the answer: {err}",
                                 events_before=seen) from err
            raise ModelError("connection", f"could not reach the model: {err}") from err
        except openai.APIError as err:  # an error object sent inside the stream
            raise ModelError("stream_error" if seen else "api_error", err.message or str(err),
                             error_type=_error_type(err.body), events_before=seen) from err
        except openai.OpenAIError as err:  # response validation, credentials...
            raise ModelError("unexpected", str(err) or type(err).__name__, events_before=seen) from err
        except json.JSONDecodeError as err:  # a data line that is not JSON
            raise ModelError("bad_stream", f"the server sent a chunk that is not JSON: {err}", events_before=seen) from err


# -- the conversation, in Chat Completions' shapes -----------------------------------------------------

def openai_tools(tools: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Anthropic tool schemas (name, description, input_schema) as Chat Completions function tools."""
    return [{"type": "function", "function": {
        "name": tool["name"],
        "description": tool.get("description") or "",
        "parameters": tool.get("input_schema") or {"type": "object", "properties": {}},
    }} for tool in tools]


def openai_messages(messages: Iterable[dict[str, Any]], system: str | None = None) -> list[dict[str, Any]]:
    """An Anthropic-shaped conversation as Chat Completions messages."""
    out: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    for message in messages:
        role, content = message["role"], message["content"]
        if isinstance(content, str):
            out.append({"role": role, "content": content})
        elif role == "assistant":
            out.append(_assistant(content))
        else:
            out.extend(_user(content))
    return out


def _assistant(blocks: list[dict[str, Any]]) -> dict[str, Any]:
    """Text blocks joined by blank lines; thinking left out (no Chat Completions server takes it back)."""
    text = "\n\n".join(b.get("text", "") for b in blocks if b.get("type") == "text" and b.get("text"))
    calls = [{"id": b["id"], "type": "function",
              "function": {"name": b["name"], "arguments": json.dumps(b.get("input") or {})}}
             for b in blocks if b.get("type") == "tool_use"]
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls:
        message["tool_calls"] = calls
    elif not text:
        message["content"] = ""
    return message


def _user(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Tool messages first (they must follow the assistant's tool_calls), then what the person said."""
    out: list[dict[str, Any]] = []
    parts: list[dict[str, Any]] = []
    for block in blocks:
        kind = block.get("type")
        if kind == "tool_result":
            text, images = _result_parts(block.get("content"))
            out.append({"role": "tool", "tool_call_id": block["tool_use_id"], "content": text})
            if images:
                parts += [{"type": "text", "text": f"(images returned by tool call {block['tool_use_id']})"}, *images]
        elif kind == "text":
            parts.append({"type": "text", "text": block.get("text", "")})
        else:
            parts.append(_other(block))
    if parts:
        only_text = all(p["type"] == "text" for p in parts)
        out.append({"role": "user", "content": "\n\n".join(p["text"] for p in parts) if only_text else parts})
    return out


def _result_parts(content: Any) -> tuple[str, list[dict[str, Any]]]:
    """A tool result's text, and its images as image_url parts."""
    if content is None:
        return "", []
    if isinstance(content, str):
        return content, []
    texts: list[str] = []
    images: list[dict[str, Any]] = []
    for item in content:
        kind = item.get("type") if isinstance(item, dict) else None
        if kind == "text":
            texts.append(item.get("text", ""))
        elif kind == "tool_reference":  # ToolSearch's result: the schema now travels in ``tools``
            texts.append(f"Tool loaded: {item.get('tool_name', '')}")
        elif isinstance(item, dict):
            part = _other(item)
            if part["type"] == "image_url":
                images.append(part)
            else:
                texts.append(part["text"])
    return "\n".join(texts), images


def _other(block: dict[str, Any]) -> dict[str, Any]:
    """An image as an image_url part; a text document as its text; anything else named in words,
    so the model knows something was there."""
    kind = block.get("type")
    source = _obj(block.get("source"))
    if kind == "image" and source.get("type") == "url":
        return {"type": "image_url", "image_url": {"url": source.get("url", "")}}
    if kind == "image" and source.get("type") == "base64" and source.get("data"):
        return {"type": "image_url", "image_url": {"url": f"data:{source.get('media_type', 'image/png')};base64,{source['data']}"}}
    if kind == "document" and source.get("type") == "text":
        title = f"{block['title']}\n\n" if isinstance(block.get("title"), str) else ""
        return {"type": "text", "text": title + str(source.get("data", ""))}
    if kind == "search_result":
        body = "\n".join(c.get("text", "") for c in block.get("content") or [] if isinstance(c, dict))
        return {"type": "text", "text": f"{block.get('title', '')} ({block.get('source', '')})\n{body}"}
    return {"type": "text", "text": f"[a {kind or 'content'} block that Chat Completions cannot carry was left out]"}


# -- the stream, in Anthropic's event shapes ------------------------------------------------------------

@dataclass
class _Call:
    block: int  # its content block index
    id: str  # the id the transcript gets
    id_given: str = ""  # the server's (empty, or one already taken, when it differs from ``id``)
    name: str = ""
    pending: list[str] = field(default_factory=list)  # arguments not yet sent as a delta
    started: bool = False


class ChunkTranslator:
    """Chat Completions chunks (as dicts) in, Anthropic stream events out.

    ``feed(chunk)`` returns the events one chunk makes; ``finish()`` the closing ones (or
    a ``stream_error`` when the choice never finished). Only choice 0 is read.

    A new call is a new ``index``, or (Ollama sends every parallel call as index 0, each
    with its own ``id``; a proxy may drop ``index``) a new ``id``. A call's block starts
    with its first argument bytes, so a name sent in pieces is whole. Ids are kept unless
    one is missing or already ``taken`` (by an earlier turn, or earlier in this answer: a
    server that numbers its calls from 0 each turn); then the call gets a fresh one, and
    its result goes back under that id, which is all a server needs."""

    def __init__(self, *, taken: Iterable[str] = ()) -> None:
        self.started = False
        self.finish_reason: str | None = None
        self.usage: dict[str, Any] = {}
        self._taken = set(taken)
        self._blocks = 0  # content block indexes handed out
        self._text: int | None = None  # the open text block
        self._thinking: int | None = None  # the open thinking block
        self._calls: list[_Call] = []
        self._by_index: dict[int, _Call] = {}  # the server's index -> its latest call
        self._open: _Call | None = None  # the call still receiving arguments
        self._chunks = 0

    def feed(self, chunk: object) -> list[dict[str, Any]]:
        self._chunks += 1
        if not isinstance(chunk, dict):
            raise ModelError("bad_stream", f"chunk {self._chunks} is not a JSON object: {type(chunk).__name__}")
        events: list[dict[str, Any]] = []
        if not self.started:
            self.started = True
            events.append(ev.message_start(str(chunk.get("id") or "chatcmpl"), str(chunk.get("model") or "")))
        if isinstance(chunk.get("usage"), dict):
            self.usage = _usage(chunk["usage"])
        listed = chunk.get("choices")
        choices: list[Any] = listed if isinstance(listed, list) else []
        choice = next((c for c in choices if isinstance(c, dict) and c.get("index") in (0, None)), None)
        if choice is None or self.finish_reason is not None:
            return events
        delta = _obj(choice.get("delta"))
        reasoning = delta.get("reasoning_content") or delta.get("reasoning")
        if isinstance(reasoning, str) and reasoning:
            events += self._thinking_delta(reasoning)
        for key in ("content", "refusal"):
            if isinstance(delta.get(key), str) and delta[key]:
                events += self._text_delta(delta[key])
        calls = delta.get("tool_calls")
        for call in calls if isinstance(calls, list) else []:
            if not isinstance(call, dict):
                raise ModelError("bad_stream", f"chunk {self._chunks}: a tool call delta is not an object: {call!r:.80}")
            events += self._call_delta(call)
        if choice.get("finish_reason"):
            events += self._close_all()
            self.finish_reason = str(choice["finish_reason"])
        return events

    def finish(self) -> list[dict[str, Any]]:
        if self.finish_reason is None:
            if self._chunks == 0:
                raise ModelError("bad_stream", "the server sent no stream chunks: check that base_url is the server's "
                                 "OpenAI-compatible endpoint (usually ending in /v1) and that it streams")
            raise ModelError("stream_error", "the stream ended before the model finished its answer (no finish_reason)")
        stop = STOP_REASONS.get(self.finish_reason, self.finish_reason)
        if stop == "end_turn" and self._calls:  # Ollama ends a tool-calling answer with "stop"
            stop = "tool_use"
        return [{**ev.message_delta(stop), "usage": self.usage}, ev.message_stop()]

    # -- blocks ------------------------------------------------------------------------------------
    def _new_block(self) -> int:
        self._blocks += 1
        return self._blocks - 1

    def _thinking_delta(self, piece: str) -> list[dict[str, Any]]:
        events = []
        if self._thinking is None:
            self._thinking = self._new_block()
            events.append(ev.block_start(self._thinking, {"type": "thinking", "thinking": "", "signature": ""}))
        events.append({"type": "content_block_delta", "index": self._thinking,
                       "delta": {"type": "thinking_delta", "thinking": piece}})
        return events

    def _text_delta(self, piece: str) -> list[dict[str, Any]]:
        events = self._close_thinking()
        if self._text is None:
            self._text = self._new_block()
            events.append(ev.block_start(self._text, {"type": "text"}))
        events.append(ev.text_delta(self._text, piece))
        return events

    def _call_delta(self, delta: dict[str, Any]) -> list[dict[str, Any]]:
        events: list[dict[str, Any]] = []
        function = delta.get("function") if delta.get("function") is not None else {}
        if not isinstance(function, dict):
            raise ModelError("bad_stream", f"chunk {self._chunks}: a tool call's function is not an object: {function!r:.80}")
        call = self._call_for(delta)
        if call is None:  # a new call: what came before it is complete
            events += self._close_thinking() + self._close_text() + self._close_call()
            call = self._new_call(delta.get("id"), delta.get("index"))
        if not call.started and isinstance(function.get("name"), str):
            call.name += function["name"]
        arguments = function.get("arguments")
        if arguments is not None and not isinstance(arguments, str):  # an object (a few servers), or worse
            arguments = json.dumps(arguments)  # the assembler says what is wrong with a non-object
        if arguments:
            call.pending.append(arguments)
        if call.pending and call.name:
            events += self._send_call(call)
        return events

    def _call_for(self, delta: dict[str, Any]) -> _Call | None:
        """The call this delta continues, or None when it starts one."""
        index, new_id = delta.get("index"), delta.get("id")
        if isinstance(index, int) and not isinstance(index, bool):
            call = self._by_index.get(index)
            if call is not None and new_id and call.id_given and new_id != call.id_given:
                return None  # the same index, another id: Ollama's next parallel call
            return call
        # no index: a new id is a new call; no id continues the open one
        if self._open is not None and (not new_id or new_id == self._open.id_given):
            return self._open
        return None

    def _new_call(self, given: object, index: object) -> _Call:
        given_id = str(given) if given else ""
        call_id = given_id if given_id and given_id not in self._taken else f"call_{uuid.uuid4().hex[:24]}"
        self._taken.add(call_id)
        call = _Call(self._new_block(), call_id, given_id)
        if isinstance(index, int) and not isinstance(index, bool):
            self._by_index[index] = call
        self._calls.append(call)
        self._open = call
        return call

    def _send_call(self, call: _Call) -> list[dict[str, Any]]:
        events = []
        if not call.started:
            call.started = True
            events.append(ev.block_start(call.block, {"type": "tool_use", "id": call.id, "name": call.name}))
        if call.pending:
            events.append(ev.input_json_delta(call.block, "".join(call.pending)))
            call.pending.clear()
        return events

    def _close_call(self) -> list[dict[str, Any]]:
        call, self._open = self._open, None
        if call is None:
            return []
        if not call.name:
            raise ModelError("bad_stream", f"tool call {len(self._calls)} came without a function name")
        return [*self._send_call(call), ev.block_stop(call.block)]

    def _close_text(self) -> list[dict[str, Any]]:
        if self._text is None:
            return []
        index, self._text = self._text, None
        return [ev.block_stop(index)]

    def _close_thinking(self) -> list[dict[str, Any]]:
        if self._thinking is None:
            return []
        index, self._thinking = self._thinking, None
        return [ev.block_stop(index)]

    def _close_all(self) -> list[dict[str, Any]]:
        return self._close_thinking() + self._close_text() + self._close_call()


def _obj(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _tool_use_ids(messages: Iterable[dict[str, Any]]) -> set[str]:
    return {b["id"] for m in messages if isinstance(m.get("content"), list)
            for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_use" and isinstance(b.get("id"), str)}


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _usage(usage: dict[str, Any]) -> dict[str, Any]:
    """Chat Completions usage in the Messages API's words (a field that is not a count is left out)."""
    out = {"input_tokens": _count(usage.get("prompt_tokens")), "output_tokens": _count(usage.get("completion_tokens"))}
    details = usage.get("prompt_tokens_details")
    cached = _count(details.get("cached_tokens")) if isinstance(details, dict) else 0
    if cached:
        out["cache_read_input_tokens"] = cached
    return out


def _status_error(err: openai.APIStatusError, seen: int) -> ModelError:
    message = _error_message(err.body) or err.message or str(err)
    if seen:
        return ModelError("stream_error", message, status=err.status_code, error_type=_error_type(err.body), events_before=seen)
    return ModelError(kind_for_status(err.status_code), message, status=err.status_code, error_type=_error_type(err.body))


def _error_type(body: Any) -> str | None:
    error = body.get("error", body) if isinstance(body, dict) else None
    value = error.get("type") if isinstance(error, dict) else None
    return value if isinstance(value, str) else None


def _error_message(body: Any) -> str | None:
    error = body.get("error", body) if isinstance(body, dict) else None
    value = error.get("message") if isinstance(error, dict) else None
    return value if isinstance(value, str) else None
