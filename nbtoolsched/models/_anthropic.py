"""AnthropicModel: the Model protocol over the official ``anthropic`` SDK.

It calls the streaming Messages API (``messages.create(..., stream=True)``) and yields
each raw event as a dict in the API's own shapes, so the loop sees exactly what the
server sent. SDK exceptions become ``ModelError``s with a kind the loop can act on:
an HTTP 529 before the first byte is ``overloaded``; an ``error`` event or a dropped
connection after the answer started is ``stream_error``.
"""

from __future__ import annotations

from typing import Any, AsyncIterator

import anthropic

from ._protocol import ModelError, client_options, kind_for_status

__all__ = ["AnthropicModel", "DEFAULT_MODEL"]

DEFAULT_MODEL = "claude-sonnet-4-6"


class AnthropicModel:
    """Streams answers from the Anthropic API (or anything speaking its protocol)."""

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        *,
        client: anthropic.AsyncAnthropic | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        max_tokens: int = 8192,
        max_retries: int = 2,
        timeout: float | None = None,
        **request: Any,
    ) -> None:
        if client is None:
            client = anthropic.AsyncAnthropic(**client_options(api_key, base_url, max_retries, timeout))
        self.client = client
        self.model = model
        self.max_tokens = max_tokens
        self.request = request  # extra create() arguments: temperature, thinking, metadata...

    @property
    def name(self) -> str:
        """The model id, as agents and notebook cells show it."""
        return self.model

    async def stream(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None = None,
        system: str | None = None,
    ) -> AsyncIterator[dict[str, Any]]:
        params: dict[str, Any] = {"model": self.model, "max_tokens": self.max_tokens, "messages": _signed_only(messages),
                                  **self.request}
        if tools:
            params["tools"] = tools
        if system:
            params["system"] = system
        seen = 0
        try:
            stream = await self.client.messages.create(stream=True, **params)
            async with stream:
                async for event in stream:
                    seen += 1
                    yield event.to_dict(mode="json")
        except anthropic.APIStatusError as err:
            raise _status_error(err, seen) from err
        except anthropic.APIConnectionError as err:
            kind = "stream_error" if seen else "connection"
            raise ModelError(kind, f"could not reach the model: {err}", events_before=seen) from err
        except anthropic.AnthropicError as err:  # response validation, credentials...
            raise ModelError("unexpected", str(err) or type(err).__name__, events_before=seen) from err


def _status_error(err: anthropic.APIStatusError, seen: int) -> ModelError:
    error_type = getattr(err, "type", None) or _body_type(err.body)
    message = getattr(err, "api_message", None) or _body_message(err.body) or str(err)
    if seen or err.status_code < 400:  # an ``error`` event inside a 200 stream
        return ModelError("stream_error", message, status=err.status_code, error_type=error_type, events_before=seen)
    return ModelError(kind_for_status(err.status_code), message, status=err.status_code, error_type=error_type)


def _body_type(body: Any) -> str | None:
    error = body.get("error") if isinstance(body, dict) else None
    return error.get("type") if isinstance(error, dict) else None


def _body_message(body: Any) -> str | None:
    error = body.get("error") if isinstance(body, dict) else None
    return error.get("message") if isinstance(error, dict) else None


def _signed_only(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The conversation without thinking blocks that carry no signature: another model's
    reasoning (``OpenAIModel`` keeps vLLM's and Ollama's as thinking blocks), which the API
    would refuse after a fallback or a resume. Messages without one are passed as they are."""
    def unsigned(block: Any) -> bool:
        return isinstance(block, dict) and block.get("type") == "thinking" and not block.get("signature")

    if not any(m.get("role") == "assistant" and isinstance(m.get("content"), list) and any(map(unsigned, m["content"]))
               for m in messages):
        return messages
    def kept(blocks: list[Any]) -> list[Any]:  # an answer that was only reasoning keeps a word in its place
        return [b for b in blocks if not unsigned(b)] or [{"type": "text", "text": "(reasoning only)"}]

    return [{**m, "content": kept(m["content"])} if m.get("role") == "assistant" and isinstance(m.get("content"), list)
            else m for m in messages]
