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
        translator = ChunkTranslator()
        seen = 0
        try:
            stream = await self.client.chat.completions.create(stream=True, **self.params(messages, tools, system))
            async with stream:
                async for chunk in stream:
                    seen += 1
                    for event in translator.feed(chunk.to_dict(mode="json")):
                        yield event
            for event in translator.finish():
                yield event
        except openai.APIStatusError as err:
            raise _status_error(err, seen) from err
        except openai.APIConnectionError as err:  # APITimeoutError included
            kind = "stream_error" if seen else "connection"
            raise ModelError(kind, f"could not reach the model: {err}", events_before=seen) from err
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
    text = "".join(b.get("text", "") for b in blocks if b.get("type") == "text")
    calls = [{"id": b["id"], "type": "function",
              "function": {"name": b["name"], "arguments": json.dumps(b.get("input") or {}, ensure_ascii=False)}}
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
        elif kind == "image":
            parts.append(_image(block))
        elif kind == "text":
            parts.append({"type": "text", "text": block.get("text", "")})
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
        kind = item.get("type")
        if kind == "text":
            texts.append(item.get("text", ""))
        elif kind == "image":
            images.append(_image(item))
        elif kind == "tool_reference":  # ToolSearch's result: the schema now travels in ``tools``
            texts.append(f"Tool loaded: {item.get('tool_name', '')}")
    return "\n".join(texts), images


def _image(block: dict[str, Any]) -> dict[str, Any]:
    source = block.get("source") or {}
    if source.get("type") == "url":
        url = source.get("url", "")
    else:
        url = f"data:{source.get('media_type', 'image/png')};base64,{source.get('data', '')}"
    return {"type": "image_url", "image_url": {"url": url}}


# -- the stream, in Anthropic's event shapes ------------------------------------------------------------

@dataclass
class _Call:
    block: int  # its content block index
    id: str | None = None
    name: str = ""
    pending: list[str] = field(default_factory=list)  # arguments that came before the name
    started: bool = False


class ChunkTranslator:
    """Chat Completions chunks (as dicts) in, Anthropic stream events out.

    ``feed(chunk)`` returns the events one chunk makes; ``finish()`` the closing ones (or
    a ``stream_error`` when the choice never finished). Only choice 0 is read."""

    def __init__(self) -> None:
        self.started = False
        self.finish_reason: str | None = None
        self.usage: dict[str, Any] = {}
        self._blocks = 0  # content block indexes handed out
        self._text: int | None = None  # the open text block
        self._thinking: int | None = None  # the open thinking block
        self._calls: dict[int, _Call] = {}  # the server's tool call index -> the call
        self._open: int | None = None  # the server index of the call still receiving arguments
        self._had_calls = False

    def feed(self, chunk: dict[str, Any]) -> list[dict[str, Any]]:
        events: list[dict[str, Any]] = []
        if not self.started:
            self.started = True
            events.append(ev.message_start(str(chunk.get("id") or "chatcmpl"), str(chunk.get("model") or "")))
        if isinstance(chunk.get("usage"), dict):
            self.usage = _usage(chunk["usage"])
        choices = chunk.get("choices") or []
        choice = next((c for c in choices if isinstance(c, dict) and c.get("index", 0) == 0), None)
        if choice is None or self.finish_reason is not None:
            return events
        delta = choice.get("delta") or {}
        reasoning = delta.get("reasoning_content") or delta.get("reasoning")
        if isinstance(reasoning, str) and reasoning:
            events += self._thinking_delta(reasoning)
        for key in ("content", "refusal"):
            if isinstance(delta.get(key), str) and delta[key]:
                events += self._text_delta(delta[key])
        for call in delta.get("tool_calls") or []:
            if isinstance(call, dict):
                events += self._call_delta(call)
        if choice.get("finish_reason"):
            events += self._close_all()
            self.finish_reason = str(choice["finish_reason"])
        return events

    def finish(self) -> list[dict[str, Any]]:
        if self.finish_reason is None:
            raise ModelError("stream_error", "the stream ended before the model finished its answer (no finish_reason)")
        stop = STOP_REASONS.get(self.finish_reason, self.finish_reason)
        if stop == "end_turn" and self._had_calls:  # Ollama ends a tool-calling answer with "stop"
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
        key = self._call_key(delta)
        call = self._calls.get(key)
        if call is None:  # a new call: what came before it is complete
            events += self._close_thinking() + self._close_text() + self._close_call()
            call = self._calls[key] = _Call(self._new_block())
            self._open = key
            self._had_calls = True
        function = delta.get("function") or {}
        if not call.started:
            call.id = call.id or (str(delta["id"]) if delta.get("id") else None)
            if isinstance(function.get("name"), str):
                call.name += function["name"]
        arguments = function.get("arguments")
        if isinstance(arguments, dict):  # a few servers send the object itself
            arguments = json.dumps(arguments, ensure_ascii=False)
        if isinstance(arguments, str) and arguments:
            call.pending.append(arguments)
        if call.name and (not call.started or call.pending):
            events += self._start_call(call)
        return events

    def _call_key(self, delta: dict[str, Any]) -> int:
        index = delta.get("index")
        if isinstance(index, int) and not isinstance(index, bool):
            return index
        # No index: a new id is a new call, no id continues the open one.
        last = self._calls.get(self._open) if self._open is not None else None
        if last is not None and (not delta.get("id") or delta.get("id") == last.id):
            return self._open  # type: ignore[return-value]
        return max(self._calls, default=-1) + 1

    def _start_call(self, call: _Call) -> list[dict[str, Any]]:
        events = []
        if not call.started:
            call.started = True
            call.id = call.id or f"call_{call.block:02d}"
            events.append(ev.block_start(call.block, {"type": "tool_use", "id": call.id, "name": call.name}))
        if call.pending:
            events.append(ev.input_json_delta(call.block, "".join(call.pending)))
            call.pending.clear()
        return events

    def _close_call(self) -> list[dict[str, Any]]:
        if self._open is None:
            return []
        call = self._calls[self._open]
        self._open = None
        if not call.name:
            raise ModelError("bad_stream", f"tool call {call.block} came without a function name")
        return [*self._start_call(call), ev.block_stop(call.block)]

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


def _usage(usage: dict[str, Any]) -> dict[str, Any]:
    """Chat Completions usage in the Messages API's words."""
    out = {"input_tokens": int(usage.get("prompt_tokens") or 0), "output_tokens": int(usage.get("completion_tokens") or 0)}
    cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens")
    if cached:
        out["cache_read_input_tokens"] = int(cached)
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
