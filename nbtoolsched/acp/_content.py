"""A prompt's ACP content blocks as the model's content blocks (the Anthropic shape).

What ``initialize`` promises (``PROMPT_CAPABILITIES``) is what is converted: text and
resource links (every agent must take them), images, and embedded resources (a file's
text the client attaches). A resource link is named, not fetched: the model can Read a
local file itself. Audio is refused with an error naming it.
"""

from __future__ import annotations

from typing import Any, Sequence
from urllib.parse import unquote, urlsplit

from acp.exceptions import RequestError
from acp.schema import (
    AudioContentBlock,
    BlobResourceContents,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    PromptCapabilities,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
)

from .._messages import BlockLike

__all__ = ["PROMPT_CAPABILITIES", "prompt_blocks"]

PROMPT_CAPABILITIES = PromptCapabilities(image=True, audio=False, embedded_context=True)

PromptBlock = TextContentBlock | ImageContentBlock | AudioContentBlock | ResourceContentBlock | EmbeddedResourceContentBlock


def prompt_blocks(prompt: Sequence[PromptBlock]) -> list[BlockLike]:
    """The user message's blocks; a ``RequestError`` (invalid params) names what cannot be taken."""
    blocks: list[BlockLike] = [block for item in prompt for block in _converted(item)]
    if not blocks:
        raise RequestError(-32602, "Invalid params: the prompt holds no content (give at least one text block)")
    return blocks


def _converted(item: PromptBlock) -> list[dict[str, Any]]:
    if isinstance(item, TextContentBlock):
        return [_text(item.text)] if item.text else []
    if isinstance(item, ImageContentBlock):
        return [_image(item.mime_type, item.data)]
    if isinstance(item, ResourceContentBlock):
        return [_text(_mention(item.uri, item.name))]
    if isinstance(item, EmbeddedResourceContentBlock):
        resource = item.resource
        if isinstance(resource, TextResourceContents):
            return [_text(f'<context ref="{resource.uri}">\n{resource.text}\n</context>')]
        if isinstance(resource, BlobResourceContents) and (resource.mime_type or "").startswith("image/"):
            return [_image(resource.mime_type or "image/png", resource.blob)]
        return [_text(f"{_mention(resource.uri, resource.uri)} (a binary resource{_of(resource)}; not included)")]
    if isinstance(item, AudioContentBlock):
        raise RequestError(-32602, "Invalid params: audio prompts are not supported (promptCapabilities.audio is false)")
    raise RequestError(-32602, f"Invalid params: a prompt block of type {getattr(item, 'type', '?')!r} is not supported")


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _image(media_type: str, data: str) -> dict[str, Any]:
    return {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}}


def _mention(uri: str, name: str) -> str:
    """A local file as ``@/path`` (what the model Reads), anything else as a Markdown link."""
    parts = urlsplit(uri)
    if parts.scheme == "file":
        return f"@{unquote(parts.path)}"
    return f"[{name}]({uri})"


def _of(resource: BlobResourceContents) -> str:
    return f" of type {resource.mime_type}" if resource.mime_type else ""
