"""The public surface: what users import, what they catch, and that it type-checks.

nbtoolsched exports what users write and catch; ``tools``, ``models`` and
``speculation`` keep short namespaces; ``internals`` holds the teaching pieces; every
other module is private. mypy (configured in pyproject.toml) passes on the package, and
a decorated function keeps its type.
"""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import nbtoolsched as nts

ROOT = Path(__file__).resolve().parent.parent
PUBLIC_NAMESPACES = ["nbtoolsched", "nbtoolsched.tools", "nbtoolsched.models", "nbtoolsched.speculation",
                     "nbtoolsched.internals", "nbtoolsched.notebook", "nbtoolsched.scale", "nbtoolsched.sandbox"]


def test_the_top_level_exports_what_users_write_and_catch() -> None:
    assert 60 <= len(nts.__all__) <= 90, len(nts.__all__)
    for name in nts.__all__:
        assert getattr(nts, name) is not None, name
    for name in ("CallPipeline", "PreparedCall", "HookRunner", "merge_capped", "TraceEvent"):
        assert name not in nts.__all__


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


def test_only_the_public_namespaces_declare_names() -> None:
    """Every module but the public namespaces is private (_name.py) or exports nothing."""
    declared: dict[str, int] = {}
    for path in (ROOT / "nbtoolsched").rglob("*.py"):
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        private = any(part.startswith("_") and part not in ("__init__", "__main__") for part in module.split("."))
        if private:
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


def test_the_core_imports_without_jupyter_or_the_anthropic_sdk() -> None:
    code = ("import sys, nbtoolsched, nbtoolsched.tools, nbtoolsched.speculation, nbtoolsched.internals\n"
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'IPython', 'ipywidgets', 'ipykernel', 'anthropic', 'ray'}))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_the_package_ships_py_typed() -> None:
    assert (ROOT / "nbtoolsched" / "py.typed").exists()
    assert 'nbtoolsched = ["py.typed"]' in (ROOT / "pyproject.toml").read_text()


def test_mypy_passes_on_the_package() -> None:
    done = subprocess.run([sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr


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
