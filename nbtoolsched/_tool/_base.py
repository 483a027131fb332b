"""The Tool base class: every default fails closed.

A tool that says nothing is not concurrency-safe, not read-only, runs alone, and
blocks (keeps running) when the user interrupts. Its own permission check passes the
question on to the rules.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict

from .._messages import BlockLike
from ._context import ContextModifier, ToolContext
from ._decision import PASSTHROUGH, Decision

__all__ = ["InputT", "overrides", "PermissionKind", "ReadOnlyTool", "Tool", "ToolOutput", "Validation", "EmptyInput", "InterruptBehavior", "DEFAULT_MAX_RESULT_SIZE_CHARS"]

InterruptBehavior = Literal["cancel", "block"]
PermissionKind = Literal["generic", "read", "edit", "shell", "web"]
DEFAULT_MAX_RESULT_SIZE_CHARS = 50_000


@dataclass(frozen=True, slots=True)
class Validation:
    """The tool's own check of an input that already parsed."""

    ok: bool
    message: str = ""
    error_code: int = 0
    OK: ClassVar["Validation"]  # the one passing answer

    @classmethod
    def fail(cls, message: str, error_code: int = 1) -> "Validation":
        return cls(False, message, error_code)


Validation.OK = Validation(True)


@dataclass(slots=True)
class ToolOutput:
    """What ``call`` returns: data, optionally pre-rendered content, a context change.

    ``is_error`` marks a failure the tool reports without raising (a command that exited
    non-zero); ``stdout``/``stderr``/``exit_code`` are kept for hooks and the trace.
    ``data`` has whatever shape the tool gives it (``map_result`` and hooks read it).
    """

    data: Any = None
    content: str | list[BlockLike] | None = None
    is_error: bool = False
    context_modifier: ContextModifier | None = None
    exit_code: int | None = None


class EmptyInput(BaseModel):
    model_config = ConfigDict(extra="forbid")


InputT = TypeVar("InputT", bound=BaseModel)


class Tool(Generic[InputT]):
    """Subclass and set ``name``, ``input_model``; override what your tool knows better.

    Generic over its input model: ``class Bash(Tool[BashInput])`` types ``input`` in
    every method below as ``BashInput`` (the pipeline passes the validated model).
    """

    name: ClassVar[str] = ""
    aliases: ClassVar[tuple[str, ...]] = ()
    description: ClassVar[str] = ""
    search_hint: ClassVar[str] = ""
    input_model: ClassVar[type[BaseModel]] = EmptyInput
    interrupt_behavior: ClassVar[InterruptBehavior] = "block"
    max_result_size_chars: ClassVar[float] = 100_000
    should_defer: ClassVar[bool] = False
    always_load: ClassVar[bool] = False
    is_mcp: ClassVar[bool] = False
    gate: ClassVar[str | None] = None  # a feature gate that must be on for the tool to exist
    # Only failures of tools that set this cancel their running siblings (shell tools:
    # commands form implicit chains; reads and fetches are independent).
    errors_cancel_siblings: ClassVar[bool] = False
    # Which permission checks govern a call, declared rather than guessed from the name:
    # "read" and "edit" tools obey Read(...) and Edit(...) path rules, "shell" tools the
    # command rules and the read-only analysis (their input's ``command``), "web" tools
    # WebFetch(domain:...) rules; "generic" tools only their own check and tool-wide rules.
    permission_kind: ClassVar[PermissionKind] = "generic"

    # -- facts about an input (defaults fail closed) ------------------------------------
    def is_enabled(self) -> bool:
        return True

    def is_concurrency_safe(self, input: InputT) -> bool:
        return False

    def is_read_only(self, input: InputT) -> bool:
        return False

    def is_read_only_in(self, input: InputT, cwd: str) -> bool:
        """Read-only when run in ``cwd``: what the permission checks and speculation ask.

        Override when the answer depends on where the call runs (Bash: git obeys the
        config of the repository it finds there); ``is_read_only`` then has to answer
        without knowing, and must fail closed.
        """
        return self.is_read_only(input)

    def is_destructive(self, input: InputT) -> bool:
        return False

    def requires_user_interaction(self) -> bool:
        return False

    def get_path(self, input: InputT) -> str | None:
        """The file a call touches, for path rules; None when it touches no file."""
        return None

    # -- the pipeline's hooks ------------------------------------------------------------
    async def validate_input(self, input: InputT, ctx: ToolContext) -> Validation:
        return Validation.OK

    async def check_permissions(self, input: InputT, ctx: ToolContext) -> Decision:
        return PASSTHROUGH

    def backfill_observable_input(self, observable: dict[str, Any], ctx: ToolContext) -> None:
        """Fill in, on a copy that hooks and permissions see, what they should observe
        (an absolute path, say). The call itself still gets the model's input."""
        return None

    async def call(self, input: InputT, ctx: ToolContext) -> ToolOutput | object:
        """Do the work: a ``ToolOutput``, or bare data (``map_result`` renders it)."""
        raise NotImplementedError(f"tool {self.name!r} does not implement call()")

    def map_result(self, data: Any) -> str | list[BlockLike]:
        """Turn ``call``'s data into tool_result content (``data``: this tool's own shape,
        which an override may name)."""
        return render_content(data)

    # -- what the model sees ---------------------------------------------------------------
    def prompt(self) -> str:
        return self.description or (type(self).__doc__ or "").strip()

    def input_schema(self) -> dict[str, Any]:
        return _schema_of(self.input_model)

    def to_api(self) -> dict[str, Any]:
        """The tool in the Anthropic ``tools`` format."""
        return {"name": self.name, "description": self.prompt(), "input_schema": self.input_schema()}

    def summary_line(self) -> str:
        """One line for a deferred tool: enough to decide whether to load it."""
        text = self.search_hint or next(iter(self.prompt().strip().splitlines()), "")
        return f"{self.name}: {text}" if text else self.name

    @property
    def persists_results(self) -> bool:
        return math.isfinite(self.max_result_size_chars)

    def __repr__(self) -> str:
        return f"<Tool {self.name}>"


def overrides(tool: Tool[Any], method: str) -> bool:
    """Whether ``tool`` (its class, or the instance itself) replaces ``Tool``'s default
    ``method``: the pipeline skips a default that can only say "fine" (one awaited
    coroutine less per call)."""
    key = (type(tool), method)
    found = _OVERRIDES.get(key)
    if found is None:
        found = _OVERRIDES[key] = getattr(type(tool), method) is not getattr(Tool, method)
    return found or method in getattr(tool, "__dict__", ())


_OVERRIDES: dict[tuple[type, str], bool] = {}


class ReadOnlyTool(Tool[InputT]):
    """A tool that never changes anything: read-only, and therefore safe beside others."""

    def is_read_only(self, input: InputT) -> bool:
        return True

    def is_concurrency_safe(self, input: InputT) -> bool:
        return True


_SCHEMAS: dict[type[BaseModel], dict[str, Any]] = {}


def _schema_of(model: type[BaseModel]) -> dict[str, Any]:
    schema = _SCHEMAS.get(model)
    if schema is None:
        schema = model.model_json_schema()
        schema.pop("title", None)
        _SCHEMAS[model] = schema
    return schema


def render_content(data: object) -> str:
    """Plain data as tool_result content: strings stay, the rest becomes JSON text."""
    if data is None:
        return ""
    if isinstance(data, str):
        return data
    if isinstance(data, BaseModel):
        return data.model_dump_json()
    try:
        return json.dumps(data, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(data)
