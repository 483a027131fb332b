"""``@tool``: a typed tool from a plain function, the way pydantic-ai does it.

The signature is read once, at decoration time, into a pydantic input model; a call
then costs one validation and one function call, never another look at the signature.
"""

from __future__ import annotations

import asyncio
import inspect
from typing import Any, Callable, Coroutine, Generic, ParamSpec, TypedDict, TypeVar, get_type_hints, overload

from typing_extensions import Unpack

from pydantic import BaseModel, ConfigDict, create_model

from ._base import InterruptBehavior, Tool, ToolOutput
from ._context import ToolContext

__all__ = ["tool", "FunctionTool", "ToolOptions"]


P = ParamSpec("P")
R = TypeVar("R")


class FunctionTool(Tool[BaseModel], Generic[P, R]):
    """A Tool wrapping a function; made by ``@tool``, rarely by hand.

    Generic over the function's parameters and result, so the decorated name still
    type-checks as that function when called directly.
    """

    def __init__(
        self,
        fn: Callable[P, R],
        *,
        name: str | None = None,
        description: str | None = None,
        read_only: bool = False,
        concurrency_safe: bool | None = None,
        destructive: bool = False,
        aliases: tuple[str, ...] = (),
        interrupt_behavior: InterruptBehavior = "block",
        max_result_size_chars: float = 100_000,
        should_defer: bool = False,
        search_hint: str = "",
        run_sync_in_thread: bool = True,
    ) -> None:
        self.fn = fn
        self.name = name or fn.__name__  # type: ignore[misc]
        self.description = description or inspect.cleandoc(fn.__doc__ or "")  # type: ignore[misc]
        self.aliases = tuple(aliases)  # type: ignore[misc]
        self.interrupt_behavior = interrupt_behavior  # type: ignore[misc]
        self.max_result_size_chars = max_result_size_chars  # type: ignore[misc]
        self.should_defer = should_defer  # type: ignore[misc]
        self.search_hint = search_hint  # type: ignore[misc]
        self._read_only = read_only
        # A read-only function is safe to run beside others unless told otherwise.
        self._safe = read_only if concurrency_safe is None else concurrency_safe
        self._destructive = destructive
        self._is_async = inspect.iscoroutinefunction(fn)
        self._run_in_thread = run_sync_in_thread
        self.input_model, self._ctx_param = _input_model_for(fn, self.name)  # type: ignore[misc]

    def is_concurrency_safe(self, input: BaseModel) -> bool:
        return self._safe

    def is_read_only(self, input: BaseModel) -> bool:
        return self._read_only

    def is_destructive(self, input: BaseModel) -> bool:
        return self._destructive

    def call(self, input: BaseModel, ctx: ToolContext) -> Coroutine[Any, Any, ToolOutput | Any]:
        """The call to await: an async function's own coroutine (no wrapper around it, one
        frame less per call), or a coroutine that runs a plain function."""
        kwargs = dict(input.__dict__)
        if self._ctx_param:
            kwargs[self._ctx_param] = ctx
        fn: Callable[..., Any] = self.fn  # called with the validated input, by keyword
        if self._is_async:
            return fn(**kwargs)
        return self._call_plain(fn, kwargs)

    async def _call_plain(self, fn: Callable[..., Any], kwargs: dict[str, Any]) -> Any:
        if self._run_in_thread:
            return await asyncio.to_thread(fn, **kwargs)
        return fn(**kwargs)

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        """The decorated function still works as a function."""
        return self.fn(*args, **kwargs)


class ToolOptions(TypedDict, total=False):
    """What ``@tool(...)`` accepts; each is the FunctionTool argument of the same name."""

    name: str | None
    description: str | None
    read_only: bool
    concurrency_safe: bool | None
    destructive: bool
    aliases: tuple[str, ...]
    interrupt_behavior: InterruptBehavior
    max_result_size_chars: float
    should_defer: bool
    search_hint: str
    run_sync_in_thread: bool


@overload
def tool(fn: Callable[P, R], /) -> FunctionTool[P, R]: ...


@overload
def tool(fn: None = None, /, **options: Unpack[ToolOptions]) -> Callable[[Callable[P, R]], FunctionTool[P, R]]: ...


def tool(
    fn: Callable[P, R] | None = None, /, **options: Unpack[ToolOptions]
) -> FunctionTool[P, R] | Callable[[Callable[P, R]], FunctionTool[P, R]]:
    """Make a Tool from a function: ``@tool`` or ``@tool(read_only=True)``.

    A parameter annotated ``ToolContext`` (or named ``ctx``) receives the call's context
    and is not part of the input the model sees. Sync functions run in a worker thread
    unless ``run_sync_in_thread=False``. A read-only function is concurrency-safe unless
    ``concurrency_safe=False`` says otherwise.
    """

    def wrap(f: Callable[P, R]) -> FunctionTool[P, R]:
        return FunctionTool(f, **options)

    return wrap(fn) if fn is not None else wrap


def _input_model_for(fn: Callable[..., Any], tool_name: str) -> tuple[type[BaseModel], str | None]:
    signature = inspect.signature(fn)
    try:
        hints = get_type_hints(fn)
    except Exception:  # unresolved forward references: fall back to raw annotations
        hints = {}
    fields: dict[str, Any] = {}
    ctx_param: str | None = None
    for param in signature.parameters.values():
        if param.kind is param.POSITIONAL_ONLY:  # ``call`` passes every input (and ctx) by name
            raise TypeError(f"@tool {tool_name}: the positional-only parameter {param.name!r} cannot be passed by name; "
                            "drop the '/' from the signature")
        annotation = hints.get(param.name, param.annotation)
        if annotation is ToolContext or (param.name == "ctx" and annotation in (inspect.Parameter.empty, Any)):
            ctx_param = param.name
            continue
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise TypeError(f"@tool {tool_name}: *args and **kwargs cannot become tool inputs")
        if annotation is inspect.Parameter.empty:
            annotation = Any
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[param.name] = (annotation, default)
    model_name = "".join(part.capitalize() for part in tool_name.replace("-", "_").split("_")) + "Input"
    model = create_model(model_name, __config__=ConfigDict(extra="forbid"), **fields)
    return model, ctx_param
