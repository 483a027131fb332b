"""Content blocks in the Anthropic Messages shape.

Blocks come in as dicts (straight from a model's answer) or as models, and go out as
dicts that round-trip exactly: a field that was not given is not invented on the way
out, and fields we do not know (``cache_control``, ``citations``...) are kept.
"""

from __future__ import annotations

from typing import Any, Literal, Sequence, Union

from pydantic import BaseModel, ConfigDict, Field, ValidationError

__all__ = [
    "Block",
    "BlockLike",
    "Content",
    "ContentBlock",
    "ImageBlock",
    "Message",
    "MessageLike",
    "TextBlock",
    "ThinkingBlock",
    "ToolReferenceBlock",
    "ToolResultBlock",
    "ToolUseBlock",
    "ToolUseLike",
    "block_to_dict",
    "parse_block",
    "parse_blocks",
]


class Block(BaseModel):
    """Base of every content block: extra keys are kept so nothing is lost."""

    model_config = ConfigDict(extra="allow")

    type: str

    def to_dict(self) -> dict[str, Any]:
        """The block as the API spells it: only the fields that were set."""
        out = self.model_dump(mode="json", exclude_unset=True, by_alias=True)
        out["type"] = self.type
        return out


class TextBlock(Block):
    type: Literal["text"] = "text"
    text: str

    def __init__(self, text: str | None = None, /, **data: Any) -> None:
        if text is not None:
            data["text"] = text
        super().__init__(**data)


class ToolUseBlock(Block):
    type: Literal["tool_use"] = "tool_use"
    id: str
    name: str
    input: dict[str, Any] = Field(default_factory=dict)


class ToolReferenceBlock(Block):
    """Points at a deferred tool; a ToolSearch result made of these loads their schemas."""

    type: Literal["tool_reference"] = "tool_reference"
    tool_name: str


class ImageBlock(Block):
    type: Literal["image"] = "image"
    source: dict[str, Any]


class ThinkingBlock(Block):
    type: Literal["thinking", "redacted_thinking"] = "thinking"


ContentBlock = Union[TextBlock, ImageBlock, ToolReferenceBlock, "ToolResultBlock", ToolUseBlock, ThinkingBlock]


class ToolResultBlock(Block):
    type: Literal["tool_result"] = "tool_result"
    tool_use_id: str
    content: str | list[TextBlock | ImageBlock | ToolReferenceBlock | Block] = ""
    is_error: bool | None = None

    @classmethod
    def make(cls, tool_use_id: str, content: str | list[BlockLike], is_error: bool = False) -> "ToolResultBlock":
        """Build a result fast (the hot path): no validation of values we made ourselves
        (blocks given as dicts stay dicts; ``to_dict`` and ``text`` read both).

        Equivalent to ``model_construct`` with every field given, at a third of the cost.
        """
        block = cls.__new__(cls)
        _set = object.__setattr__
        _set(block, "__dict__", {"type": "tool_result", "tool_use_id": tool_use_id, "content": content,
                                 "is_error": True if is_error else None})
        _set(block, "__pydantic_fields_set__", _FIELDS_ERROR if is_error else _FIELDS_OK)
        _set(block, "__pydantic_extra__", {})
        _set(block, "__pydantic_private__", None)
        return block

    @property
    def text(self) -> str:
        """The result as plain text, whatever shape its content has."""
        if isinstance(self.content, str):
            return self.content
        return "".join(getattr(b, "text", "") or "" for b in self.content)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "tool_result", "tool_use_id": self.tool_use_id}
        content = self.content
        if isinstance(content, list):
            out["content"] = [block_to_dict(b) for b in content]
        elif "content" in self.model_fields_set or content != "":
            out["content"] = content
        if self.is_error is not None:
            out["is_error"] = self.is_error
        for key, value in (self.__pydantic_extra__ or {}).items():
            out[key] = value
        return out


_FIELDS_OK = frozenset({"tool_use_id", "content"})
_FIELDS_ERROR = frozenset({"tool_use_id", "content", "is_error"})


class Message(BaseModel):
    """One conversation turn: a role and its content (a string or blocks)."""

    model_config = ConfigDict(extra="allow")

    role: Literal["user", "assistant"]
    content: str | list[Any]

    def blocks(self) -> list[Block]:
        if isinstance(self.content, str):
            return [TextBlock(self.content)]
        return parse_blocks(self.content)

    def to_dict(self) -> dict[str, Any]:
        content = self.content if isinstance(self.content, str) else [block_to_dict(b) for b in self.content]
        return {"role": self.role, "content": content}


# What the API's JSON (a dict) and our models both spell: a block or message may come either way.
BlockLike = Union[Block, dict[str, Any]]
ToolUseLike = Union[ToolUseBlock, dict[str, Any]]
MessageLike = Union[Message, dict[str, Any]]
Content = Union[str, Sequence[BlockLike]]  # a message's or a tool_result's content


_KNOWN: dict[str, type[Block]] = {
    "text": TextBlock,
    "tool_use": ToolUseBlock,
    "tool_result": ToolResultBlock,
    "tool_reference": ToolReferenceBlock,
    "image": ImageBlock,
    "thinking": ThinkingBlock,
    "redacted_thinking": ThinkingBlock,
}


def parse_block(data: object) -> Block:
    """A dict (or a block) as the right block model; unknown types stay generic ``Block``.

    Anything may come in (straight from a model or a file); ``ValueError`` names what is
    wrong when the data is not a block at all.
    """
    if isinstance(data, Block):
        return data
    if not isinstance(data, dict):
        raise ValueError(f"a content block must be an object, got {type(data).__name__}")
    kind = data.get("type")
    if not isinstance(kind, str):
        raise ValueError("a content block needs a string 'type'")
    model = _KNOWN.get(kind, Block)
    try:
        return model.model_validate(data)
    except ValidationError as err:
        raise ValueError(f"invalid {kind} block: {_first_error(err)}") from None


def parse_blocks(items: object) -> list[Block]:
    if not isinstance(items, list):
        raise ValueError(f"content must be a list of blocks, got {type(items).__name__}")
    return [parse_block(item) for item in items]


def block_to_dict(block: Any) -> Any:
    return block.to_dict() if isinstance(block, Block) else block


def _first_error(err: ValidationError) -> str:
    first = err.errors()[0]
    where = ".".join(str(p) for p in first["loc"]) or "block"
    return f"{where}: {first['msg']}"
