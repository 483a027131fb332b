"""The import graph: layers import only downward, the shell layer is reached only through
its facts API, and no permissions module grows past one job.

Read from the source (ast), so a lazy import inside a function counts as much as one at
the top; imports under ``if TYPE_CHECKING:`` are annotations only and do not count.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import nbtoolsched.shell as shell

PACKAGE = Path(__file__).resolve().parents[1] / "nbtoolsched"

# DESIGN.md's layers, each importing only those of a lower rank (equal ranks may not import
# each other either). Facades that gather the public names sit above every layer.
RANKS = {
    "_errors": 0, "_exports": 0, "_files": 0, "_hosts": 0, "_tasks": 0, "_sync": 1,
    "_messages": 1, "_session_log": 2, "_events": 2,
    "_tool": 3,
    "shell": 4,
    "sandbox": 5,
    "_registry": 6,
    "permissions": 7,
    "execution": 8,
    "scheduling": 9,
    "models": 9,
    "agent": 10,
    "speculation": 11,
    "tools": 12,
    "scale": 13,
    "acp": 14,
    "notebook": 15,
}
FACADES = {"__init__", "__main__", "internals", "events", "_demo"}
PERMISSIONS_MAX_LINES = 500


def _modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def _layer(path: Path) -> str:
    parts = path.relative_to(PACKAGE).parts
    return parts[0].removesuffix(".py")


def _runtime_imports(path: Path) -> list[tuple[int, tuple[str, ...], list[str]]]:
    """(line, the module imported as a path inside nbtoolsched, the names) of every import
    that runs (not those under ``if TYPE_CHECKING:``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typing_only: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for inner in node.body:
                typing_only.update(id(n) for n in ast.walk(inner))
    package = list(path.relative_to(PACKAGE).parts[:-1])
    found = []
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                target = tuple(base + (node.module.split(".") if node.module else []))
            elif node.module and node.module.startswith("nbtoolsched"):
                target = tuple(node.module.split(".")[1:])
            else:
                continue
            found.append((node.lineno, target, [a.name for a in node.names]))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("nbtoolsched."):
                    found.append((node.lineno, tuple(alias.name.split(".")[1:]), []))
    return found


def test_the_graph_is_read_from_every_module():
    assert len(_modules()) > 150
    assert any(target[:1] == ("shell",) for path in _modules() for _, target, _ in _runtime_imports(path)
               if _layer(path) == "permissions")


def test_nothing_outside_shell_imports_a_shell_helper_other_than_the_facts_api():
    api = set(shell.__all__)
    wrong = []
    for path in _modules():
        if _layer(path) == "shell":
            continue
        for line, target, names in _runtime_imports(path):
            if target[:1] != ("shell",):
                continue
            if len(target) > 1:
                wrong.append(f"{path.relative_to(PACKAGE)}:{line} imports shell.{'.'.join(target[1:])}")
            wrong.extend(f"{path.relative_to(PACKAGE)}:{line} imports shell.{n}, not in its facts API" for n in names if n not in api)
    assert not wrong, "\n".join(wrong)


def test_the_shell_api_names_exist_and_are_few():
    for name in shell.__all__:
        assert hasattr(shell, name), name
    assert len(shell.__all__) <= 32


@pytest.mark.parametrize("path", [p for p in _modules() if _layer(p) not in FACADES], ids=lambda p: str(p.relative_to(PACKAGE)))
def test_layers_import_only_downward(path):
    layer = _layer(path)
    assert layer in RANKS, f"{layer} has no place among the layers (add it to RANKS and DESIGN.md)"
    upward = []
    for line, target, _ in _runtime_imports(path):
        other = target[0] if target else layer
        if other == layer:
            continue
        assert other in RANKS or other in FACADES, f"{path.relative_to(PACKAGE)}:{line}: unknown module {other}"
        if other in FACADES or RANKS[other] >= RANKS[layer]:
            upward.append(f"line {line}: {layer} (rank {RANKS[layer]}) imports {'.'.join(target)}")
    assert not upward, "\n".join(upward)


def test_no_permissions_module_holds_more_than_one_job():
    long = {p.name: n for p in (PACKAGE / "permissions").glob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > PERMISSIONS_MAX_LINES}
    assert not long, long


def test_nothing_outside_shell_splits_a_command_into_words():
    """shlex's splitting and the tree-sitter parser are the shell layer's: a module elsewhere
    that splits text with them parses a command line itself. (A magic's own argument line
    in the notebook layer is not a command line; ``shlex.quote`` builds one, parses none.)"""
    magics = {Path("notebook/_agent_cell.py"), Path("notebook/_magics.py"), Path("notebook/_replay_magic.py")}
    found = []
    for path in _modules():
        rel = path.relative_to(PACKAGE)
        if _layer(path) == "shell":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                if any(n.startswith("tree_sitter") for n in names):
                    found.append(f"{rel}:{node.lineno} imports the parser")
            elif (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "shlex"
                  and node.attr in ("split", "shlex") and rel not in magics):
                found.append(f"{rel}:{node.lineno} splits with shlex")
    assert not found, found
