"""The public surface: what users import, what they catch, and that it type-checks.

nbtoolsched exports what users write and catch; ``events``, ``tools``, ``models`` and
``speculation`` keep short namespaces; ``internals`` holds the teaching pieces; every
other module is private. Each public name is exported once, and its ``__module__`` is
the namespace that exports it. Public signatures say what they take (``Any`` only where
a short list below says why). Event kinds are their class names; ``stream()`` hands out
the very events listeners get. mypy (configured in pyproject.toml) passes on the
package, and a decorated function keeps its type.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import pickle
import re
import subprocess
import sys
import types
from collections import Counter
from pathlib import Path

import pytest

import nbtoolsched as nts
from nbtoolsched import events
from nbtoolsched.models import tool_use

ROOT = Path(__file__).resolve().parent.parent
PUBLIC_NAMESPACES = ["nbtoolsched", "nbtoolsched.events", "nbtoolsched.tools", "nbtoolsched.models",
                     "nbtoolsched.speculation", "nbtoolsched.internals", "nbtoolsched.notebook", "nbtoolsched.scale",
                     "nbtoolsched.sandbox"]


def _surface() -> types.ModuleType:
    """benchmarks/measure_surface.py: the same walk over the public surface as the closing numbers."""
    spec = importlib.util.spec_from_file_location("measure_surface", ROOT / "benchmarks" / "measure_surface.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks itself up there
    spec.loader.exec_module(module)
    return module


SURFACE = _surface()


def test_the_top_level_exports_what_users_write_and_catch() -> None:
    assert 55 <= len(nts.__all__) <= 65, len(nts.__all__)  # about 60, as planned: the events have their own namespace
    for name in nts.__all__:
        assert getattr(nts, name) is not None, name
    for name in ("CallPipeline", "PreparedCall", "HookRunner", "merge_capped", "TraceEvent", "ResultEvent", "CallState"):
        assert name not in nts.__all__
    assert set(SURFACE.NAMESPACES) == set(PUBLIC_NAMESPACES)


def test_every_public_name_says_where_users_import_it() -> None:
    """As httpx does: a traceback, ``help()`` and a repr name ``nbtoolsched.Scheduler``."""
    elsewhere = [f"{namespace}.{name} says {value.__module__}" for namespace, name, value in SURFACE.exports()
                 if isinstance(value, (type, types.FunctionType)) and value.__module__ != namespace]
    assert elsewhere == []
    assert nts.AnthropicModel.__module__ == "nbtoolsched"  # loaded lazily, published when it loads
    assert events.ResultEvent.__module__ == "nbtoolsched.events" and nts.tools.BashTool.__module__ == "nbtoolsched.tools"
    assert repr(nts.ConfigurationError) == "<class 'nbtoolsched.ConfigurationError'>"


def test_published_classes_still_pickle_where_users_find_them() -> None:
    """Pickle (and so the process pool and Ray of nbtoolsched.scale) finds a class by its ``__module__``."""
    for value in (nts.ToolUseBlock(id="t1", name="Read", input={"file_path": "a"}),
                  events.CallQueued("t1", "Read", 1, 0.5, True), nts.ApprovalAnswer.allow()):
        assert pickle.loads(pickle.dumps(value)) == value


def test_no_name_is_exported_twice() -> None:
    """One object, one namespace; and no name means two things in two namespaces."""
    objects: dict[int, list[str]] = {}
    names: Counter[str] = Counter()
    for namespace, name, value in SURFACE.exports():
        names[name] += 1
        if isinstance(value, (type, types.FunctionType)):
            objects.setdefault(id(value), []).append(f"{namespace}.{name}")
    assert [where for where in objects.values() if len(where) > 1] == []
    assert [name for name, count in names.items() if count > 1] == []
    for namespace in PUBLIC_NAMESPACES:
        exported = importlib.import_module(namespace).__all__
        assert len(exported) == len(set(exported)), namespace


def test_every_exported_class_is_defined_once_in_the_package() -> None:
    """A second class of the same name (there were two NotebookErrors) is a trap for whoever catches it."""
    defined: Counter[str] = Counter()
    for path in (ROOT / "nbtoolsched").rglob("*.py"):
        defined.update(n.name for n in ast.walk(ast.parse(path.read_text(encoding="utf-8"))) if isinstance(n, ast.ClassDef))
    exported = {name for _, name, value in SURFACE.exports() if isinstance(value, type)}
    assert {name: defined[name] for name in exported if defined[name] != 1} == {}
    assert defined["NotebookError"] == 1


# Where ``Any`` is the honest type of a public signature (the values of JSON objects,
# ``dict[str, Any]`` and ``Mapping[str, Any]``, are not counted: the API's and the
# settings' JSON is what it is). Every other parameter, field and return says its type.
ALLOWED_ANY = {
    # A tool's own data: each tool has its shape, and an override of map_result names it
    # (a parameter typed ``object`` here would make every such override an error).
    "nbtoolsched.Tool.map_result": "data: the tool's own output",
    "nbtoolsched.ToolOutput": "data: the tool's own output",
    "nbtoolsched.ToolContext.progress": "data: whatever the tool reports",
    "nbtoolsched.events.ProgressEvent": "data: whatever the tool reported",
    "nbtoolsched.events.CallState": "last_progress: whatever the tool reported last",
    # Pydantic models with extra="allow": fields the API adds that we do not know are kept.
    "nbtoolsched.Message": "**extra_data, and content blocks kept as given (dicts or models)",
    "nbtoolsched.TextBlock": "**data: the block's fields, unknown ones kept",
    "nbtoolsched.ToolUseBlock": "**extra_data",
    "nbtoolsched.ToolResultBlock": "**extra_data",
    "nbtoolsched.internals.ToolReferenceBlock": "**extra_data",
    # Options handed unchanged to another library.
    "nbtoolsched.AnthropicModel": "**request: the Anthropic SDK's messages.stream keywords",
    "nbtoolsched.OpenAIModel": "**request: the OpenAI SDK's chat.completions.create keywords",
    # Pydantic's own hook, generated for a private attribute (the URL as the config wrote it).
    "nbtoolsched.tools.McpHttpServerConfig.model_post_init": "context: pydantic's validation context",
    "nbtoolsched.tools.McpSseServerConfig.model_post_init": "context: pydantic's validation context",
    "nbtoolsched.scale.RayEngine": "**init_options: ray.init's keywords",
    # The constructor's keywords, the approver among them: typed with the approver
    # (permissions/ is being reorganized in the same issue).
    "nbtoolsched.Permissions.from_settings": "**options: Permissions' own keywords",
}


def test_public_signatures_say_what_they_take() -> None:
    found = {label: str(sig) for label, sig in SURFACE.signatures() if SURFACE.any_count(sig, json_objects=False)}
    unexplained = {label: sig for label, sig in found.items() if label not in ALLOWED_ANY}
    assert unexplained == {}, "Any in a public signature: give it a real type, or a reason in ALLOWED_ANY"
    assert sorted(set(ALLOWED_ANY) - set(found)) == [], "typed now: take it off ALLOWED_ANY"


def test_the_measure_counts_any_where_it_is() -> None:
    import inspect
    from typing import Any, Mapping

    def typed(a: int, b: Mapping[str, Any]) -> dict[str, Any]: ...
    def loose(a: Any, *rest: list[Any]) -> Any: ...

    assert SURFACE.any_count(inspect.signature(typed)) == 2 and SURFACE.any_count(inspect.signature(typed), json_objects=False) == 0
    assert SURFACE.any_count(inspect.signature(loose), json_objects=False) == 3


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def test_event_kinds_are_their_class_names_in_snake_case() -> None:
    classes = [getattr(events, n) for n in events.__all__ if isinstance(getattr(events, n), type) and hasattr(getattr(events, n), "kind")]
    assert len(classes) == 19
    assert {cls.__name__: cls.kind for cls in classes if cls.kind != _snake(cls.__name__)} == {}
    assert events.EVENT_TYPES == {cls.kind: cls for cls in classes}
    assert events.CallStarted.kind == "call_started" and events.ResultEvent.kind == "result_event"


@nts.tool()
async def remember(key: str, ctx: nts.ToolContext) -> nts.ToolOutput:
    """Leaves ``key`` in the context's options (a context modifier)."""
    return nts.ToolOutput("ok", context_modifier=lambda c: c.replace(options={**c.options, key: True}))


async def test_stream_and_listeners_get_the_very_same_events(tmp_path: Path) -> None:
    sched = nts.Scheduler(nts.ToolRegistry([remember]), cwd=tmp_path, session_dir=tmp_path / "s")
    heard: list[events.Event] = []
    sched.events.subscribe(heard.append)
    blocks = [tool_use("remember", key="a", id="a"), tool_use("remember", key="b", id="b")]
    streamed = [e async for e in sched.stream(blocks)]
    changes = [e for e in streamed if isinstance(e, events.ContextEvent)]
    assert len(changes) == 2  # each unsafe call is a batch of its own, and changed the context
    assert [e.batch for e in changes] == [1, 2] and all(e.time > 0 for e in changes)
    assert changes[-1].context is not None and changes[-1].context.options == {"a": True, "b": True}
    assert [id(e) for e in changes] == [id(e) for e in heard if isinstance(e, events.ContextEvent)]
    assert all(any(e is h for h in heard) for e in streamed)  # results too: one object, not a copy


def test_the_readme_names_every_top_level_name() -> None:
    """The top level is the documented surface: each name appears in the README, in
    backticks or in the error tree."""
    import re

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    tree = readme[readme.index("### Errors you can catch"):readme.index("## In Jupyter")]
    missing = [n for n in nts.__all__ if f"`{n}`" not in readme and not re.search(rf"\b{n}\b", tree)]
    assert not missing, f"top-level names the README never mentions: {missing}"


def test_every_error_users_catch_derives_from_one_exported_base() -> None:
    errors = [getattr(nts, n) for n in nts.__all__ if isinstance(getattr(nts, n), type) and issubclass(getattr(nts, n), Exception)]
    assert len(errors) >= 12
    assert all(issubclass(e, nts.NbtoolschedError) for e in errors if not issubclass(e, Warning)), errors
    assert issubclass(nts.PermissionConfigError, nts.ConfigurationError) and issubclass(nts.ConfigurationError, ValueError)
    assert issubclass(nts.InvalidTranscript, nts.TranscriptError) and issubclass(nts.SessionError, nts.NotebookError)


# Layers whose package states an interface for the layers above (not a namespace users
# import from): the shell's facts API, which tests/test_import_graph.py holds them to.
LAYER_INTERFACES = ["nbtoolsched.shell"]


def test_only_the_public_namespaces_declare_names() -> None:
    """Every module but the public namespaces (and the layer interfaces) is private
    (_name.py) or exports nothing."""
    declared: dict[str, int] = {}
    for path in (ROOT / "nbtoolsched").rglob("*.py"):
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        private = any(part.startswith("_") and part not in ("__init__", "__main__") for part in module.split("."))
        if private or module in LAYER_INTERFACES:
            continue
        tree = ast.parse(path.read_text())
        names = [n for n in tree.body if isinstance(n, ast.Assign) and any(getattr(t, "id", "") == "__all__" for t in n.targets)]
        if names:
            declared[module] = len(ast.literal_eval(names[0].value))
    assert set(declared) == set(PUBLIC_NAMESPACES), declared
    assert sum(declared.values()) < 200, declared


@pytest.mark.parametrize("module", PUBLIC_NAMESPACES)
def test_public_namespaces_import_and_export_real_names(module: str) -> None:
    mod = importlib.import_module(module)
    missing = [n for n in mod.__all__ if not hasattr(mod, n)]
    assert missing == []


@pytest.mark.heavy  # a fresh interpreter imports the package
def test_the_core_imports_without_jupyter_or_the_anthropic_sdk() -> None:
    code = ("import sys, nbtoolsched, nbtoolsched.tools, nbtoolsched.speculation, nbtoolsched.internals\n"
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'IPython', 'ipywidgets', 'ipykernel', 'anthropic', 'ray'}))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_the_package_ships_py_typed() -> None:
    assert (ROOT / "nbtoolsched" / "py.typed").exists()
    import tomllib

    shipped = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["nbtoolsched"]
    assert "py.typed" in shipped
    # the notebook's browser-side code (the prompt's keys) ships with the package too
    assert "notebook/*.js" in shipped and (ROOT / "nbtoolsched" / "notebook" / "_keys.js").exists()


@pytest.mark.heavy  # mypy over the whole package takes a minute
def test_mypy_passes_on_the_package() -> None:
    done = subprocess.run([sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.heavy  # mypy on a user's file
def test_a_decorated_function_and_a_typed_tool_keep_their_types(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import nbtoolsched as nts\n"
        "from pydantic import BaseModel\n"
        "@nts.tool(read_only=True)\n"
        "async def count(path: str, limit: int = 3) -> int: ...\n"
        "reveal_type(count)\n"
        "reveal_type(count('a', limit=2))\n"
        "count(path=1)\n"
        "class In(BaseModel):\n"
        "    command: str\n"
        "class Shell(nts.Tool[In]):\n"
        "    input_model = In\n"
        "    def is_read_only(self, input: In) -> bool:\n"
        "        return input.command.startswith('ls')\n"
        "    def is_concurrency_safe(self, input: int) -> bool:\n"
        "        return True\n"
    )
    done = subprocess.run([sys.executable, "-m", "mypy", "--no-incremental", str(sample)], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    out = done.stdout
    assert 'Revealed type is "nbtoolsched._tool._decorator.FunctionTool[[path: str, limit: int =], typing.Coroutine[Any, Any, int]]"' in out, out
    assert 'Revealed type is "typing.Coroutine[Any, Any, int]"' in out, out
    assert 'Argument "path" to "__call__" of "FunctionTool" has incompatible type "int"' in out, out
    assert 'Argument 1 of "is_concurrency_safe" is incompatible with supertype "nbtoolsched._tool._base.Tool"' in out, out
