"""The docs name today's modules.

* The README's Layout table lists every package and every top-level module of
  ``nbtoolsched/``, and every entry in it exists.
* Every module path or dotted module name that README.md and docs/*.md mention exists.
* Every module that a docstring under ``nbtoolsched/`` mentions exists, resolved from the
  package the docstring lives in.

What counts as a mention (anything else is left alone, so ``self._lock``, ``.git/hooks``,
``example.com`` or ``proxy.py``, a library, are never flagged):

* a path: ``nbtoolsched/x/y.py`` or ``nbtoolsched/x/`` (from the repository root);
  ``benchmarks/x.py`` and other ``.py`` files under the repository's own folders; or a
  path relative to a package (``shell/_parse.py``, ``files/_grep.py``,
  ``sandbox/_mounts.linked_file``) when one of its parts is private (``_x``) or it ends in
  ``.py``, resolved from the package and each package above it;
* a file name alone: ``_x.py``, looked for in the package, its subpackages and the
  packages above it (in the docs: anywhere in the package); and ``x.py`` where only a
  ``_x.py`` exists (the module went private and the text did not follow);
* a dotted name: ``nbtoolsched.x._y``, ``shell._config_places`` (a package name, then a
  private part) or a relative ``.._tool._decision``. Its parts are walked as packages
  and modules; what follows a module is an attribute and is not checked, and a name a
  package's ``__init__`` defines (``nbtoolsched.tool``, the decorator) is an attribute
  too.

``_name.py`` is the naming convention's placeholder, not a module.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PLACEHOLDERS = frozenset({"_name.py"})
REPO_DIRS = frozenset({"benchmarks", "tests", ".ci", "notebooks", "docs"})

_PATH = re.compile(r"(?<![\w./~$-])(?:[\w.-]+/)+[\w.-]*")
_FILE = re.compile(r"(?<![\w./~$-])[A-Za-z_]\w*\.py\b")
_DOTTED = re.compile(r"(?<![\w./~$-])\.*[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")


@dataclass
class Package:
    """The package tree mentions are resolved against (``root`` is the folder of ``__init__.py``)."""

    root: Path
    _names: dict[Path, frozenset[str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.packages = sorted(p.parent for p in self.root.rglob("__init__.py") if "__pycache__" not in p.parts)
        self.package_names = frozenset(p.name for p in self.packages if p != self.root)
        self.modules = sorted(p for p in self.root.rglob("*.py") if "__pycache__" not in p.parts)
        self.module_names = frozenset(p.name for p in self.modules)

    @property
    def repo(self) -> Path:
        return self.root.parent

    def above(self, package: Path) -> list[Path]:
        """``package`` and every package above it, up to the root."""
        chain = [package]
        while chain[-1] != self.root and self.root in chain[-1].parents:
            chain.append(chain[-1].parent)
        return chain

    def below(self, package: Path) -> list[Path]:
        return [p for p in self.packages if p == package or package in p.parents]

    def defined(self, init: Path) -> frozenset[str]:
        """The names a package's ``__init__.py`` defines, imports or lists in ``__all__``."""
        if init not in self._names:
            names: set[str] = set()
            if init.is_file():
                for node in ast.parse(init.read_text(encoding="utf-8")).body:
                    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                        names.add(node.name)
                    elif isinstance(node, (ast.Import, ast.ImportFrom)):
                        names.update((a.asname or a.name).split(".")[0] for a in node.names)
                    elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                        names.update(t.id for t in targets if isinstance(t, ast.Name))
                        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets) and node.value is not None:
                            try:
                                names.update(ast.literal_eval(node.value))
                            except ValueError:
                                pass
            self._names[init] = frozenset(names)
        return self._names[init]

    def walk(self, base: Path, parts: list[str]) -> bool:
        """Do ``parts`` name packages, then a module or a name the last package defines?"""
        here = base
        for part in parts:
            if (here / part / "__init__.py").is_file():
                here = here / part
            elif (here / f"{part}.py").is_file():
                return True  # the rest are the module's attributes
            else:
                return part in self.defined(here / "__init__.py")
        return True


def _exists(target: Path, folder: bool) -> bool:
    if folder:
        return target.is_dir()
    return target.exists() or (not target.suffix and target.with_suffix(".py").is_file())


def check_path(pkg: Package, text: str, bases: list[Path]) -> str | None:
    """Why the path ``text`` names nothing, or None (it exists, or is not a module path)."""
    text = text.rstrip(".-")
    folder = text.endswith("/")
    parts = [p for p in text.split("/") if p]
    if not parts:
        return None
    if not folder and parts[-1].startswith("_") and not parts[-1].endswith(".py") and "." in parts[-1]:
        parts[-1] = parts[-1].split(".")[0]  # sandbox/_mounts.linked_file: the module, then an attribute
    head, last = parts[0], parts[-1]
    private = any(p.startswith("_") and p not in ("__init__.py", "__main__.py") for p in parts) or last.endswith(".py")
    if head == pkg.root.name:
        candidates = [pkg.repo]
    elif head in REPO_DIRS:
        if not last.endswith(".py"):
            return None
        candidates = [pkg.repo]
    elif private and (head in pkg.package_names or (last.startswith("_") and last.endswith(".py"))):
        candidates = bases  # package-relative; an unknown head is a package that was renamed
    else:
        return None
    if any(_exists(base.joinpath(*parts), folder) for base in candidates):
        return None
    return "no such module or package"


def check_file(pkg: Package, name: str, folders: list[Path]) -> str | None:
    """Why the bare file name ``name`` names no module in ``folders``, or None."""
    if name in PLACEHOLDERS:
        return None
    if name.startswith("_"):
        if any((f / name).is_file() for f in folders):
            return None
        where = sorted(str(p.relative_to(pkg.repo)) for p in pkg.modules if p.name == name)
        return f"not in this package (it is {', '.join(where)})" if where else "no such module"
    private = f"_{name}"
    if private in pkg.module_names and not any((f / name).is_file() for f in folders):
        where = sorted(str(p.relative_to(pkg.repo)) for p in pkg.modules if p.name == private)
        return f"no such module; a private one of that name is {', '.join(where)}"
    return None  # not one of ours (proxy.py, setup.py, ...)


def check_dotted(pkg: Package, text: str, package: Path | None, bases: list[Path]) -> str | None:
    """Why the dotted name ``text`` names no module, or None (it does, or is not a module name)."""
    dots = len(text) - len(text.lstrip("."))
    parts = text[dots:].split(".")
    if parts[-1] == "py":
        return None  # a file name: check_file's
    if parts[0] == pkg.root.name and not dots:
        starts, parts = [pkg.root], parts[1:]
    elif dots:
        if package is None or not any(p.startswith("_") for p in parts):
            return None
        start = package
        for _ in range(dots - 1):
            start = start.parent
        starts = [start]
    elif parts[0] in pkg.package_names and any(p.startswith("_") for p in parts[1:]):
        starts = [b for b in bases if (b / parts[0] / "__init__.py").is_file()]
        if not starts:
            return None
    else:
        return None
    if any(pkg.walk(start, parts) for start in starts):
        return None
    return "no such module, nor a name its package defines"


def stale_mentions(pkg: Package, text: str, package: Path | None) -> list[tuple[int, str, str]]:
    """(offset, mention, why) for every mention in ``text`` that names nothing.

    ``package``: the package the text belongs to (a docstring's), or None for the docs,
    where names resolve from the root and from every package."""
    if package is None:
        bases = folders = pkg.packages
    else:
        bases = pkg.above(package)
        folders = list(dict.fromkeys(pkg.below(package) + bases))
    found: list[tuple[int, str, str]] = []
    for match in _PATH.finditer(text):
        why = check_path(pkg, match.group(0), bases)
        if why:
            found.append((match.start(), match.group(0).rstrip(".-"), why))
    for match in _FILE.finditer(text):
        why = check_file(pkg, match.group(0), folders)
        if why:
            found.append((match.start(), match.group(0), why))
    for match in _DOTTED.finditer(text):
        why = check_dotted(pkg, match.group(0), package, bases)
        if why:
            found.append((match.start(), match.group(0), why))
    return sorted(found)


def docstrings(path: Path) -> list[tuple[int, str]]:
    """(first line, text) of the module's, every class's and every function's docstring."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            text = ast.get_docstring(node, clean=False)
            if text is not None:
                found.append((node.body[0].lineno, text))
    return found


def layout_entries(readme: str, pkg: Package) -> list[Path]:
    """The paths in the first column of the README's Layout table: ``nbtoolsched/...``
    from the repository root; any other (``_events.py``, ``files/``) relative to the
    folder of the cell's first path."""
    section = re.search(r"^## Layout\n(.*?)(?=^## |\Z)", readme, re.M | re.S)
    assert section is not None, "README.md has no '## Layout' section"
    rows = [line for line in section.group(1).splitlines() if line.startswith("|")][2:]
    assert rows, "the Layout section has no table"
    entries = []
    for row in rows:
        base: Path | None = None
        for item in re.findall(r"`([^`]+)`", row.split("|")[1]):
            if item.startswith(f"{pkg.root.name}/"):
                path = pkg.repo / item
                base = path if item.endswith("/") else path.parent
            else:
                assert base is not None, f"{item!r} comes before any {pkg.root.name}/ path in its row: {row}"
                path = base / item
            entries.append(path)
    return entries


def missing_from_layout(pkg: Package, entries: list[Path]) -> list[str]:
    listed = set(entries)
    wanted = [p for p in pkg.packages if p != pkg.root] + sorted(pkg.root.glob("*.py"))
    return [f"{p.relative_to(pkg.repo)}{'/' if p.is_dir() else ''}" for p in wanted if p not in listed]


def _report(found: list[str]) -> str:
    return "\n".join(["stale module mentions:", *found])


PKG = Package(ROOT / "nbtoolsched")
README = ROOT / "README.md"
DOCS = [README, *sorted((ROOT / "docs").glob("*.md"))]


def test_the_layout_table_lists_every_package_and_top_level_module() -> None:
    entries = layout_entries(README.read_text(encoding="utf-8"), PKG)
    assert not (missing := missing_from_layout(PKG, entries)), f"not in the README's Layout table: {missing}"
    assert not (absent := [str(e.relative_to(ROOT)) for e in entries if not e.exists()]), (
        f"in the README's Layout table, but not in the package: {absent}")


@pytest.mark.parametrize("doc", DOCS, ids=[str(d.relative_to(ROOT)) for d in DOCS])
def test_every_module_the_docs_mention_exists(doc: Path) -> None:
    text = doc.read_text(encoding="utf-8")
    found = [f"{doc.relative_to(ROOT)}:{text.count(chr(10), 0, at) + 1}: `{name}`: {why}"
             for at, name, why in stale_mentions(PKG, text, None)]
    assert not found, _report(found)


def test_every_module_the_docstrings_mention_exists() -> None:
    found = sorted(
        (str(path.relative_to(ROOT)), line + text.count("\n", 0, at), name, why)
        for path in PKG.modules
        for line, text in docstrings(path)
        for at, name, why in stale_mentions(PKG, text, path.parent)
    )
    assert not found, _report([f"{path}:{line}: `{name}`: {why}" for path, line, name, why in found])


# The checks themselves, on a package made for the purpose: they must flag a stale name
# and leave every other word alone.

@pytest.fixture()
def fake(tmp_path: Path) -> Package:
    files = ["pkg/__init__.py", "pkg/_registry.py", "pkg/_events.py", "pkg/internals.py",
             "pkg/shell/__init__.py", "pkg/shell/_parse.py", "pkg/sandbox/__init__.py", "pkg/sandbox/_mounts.py",
             "pkg/tools/__init__.py", "pkg/tools/_bash.py", "pkg/tools/files/__init__.py", "pkg/tools/files/_grep.py",
             "benchmarks/bench_core.py"]
    for name in files:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    (tmp_path / "pkg/__init__.py").write_text("from .internals import x as tool\n__all__ = ['Scheduler']\n")
    return Package(tmp_path / "pkg")


def _names(found: list[tuple[int, str, str]]) -> list[str]:
    return [name for _, name, _ in found]


def test_the_checks_flag_stale_names(fake: Package) -> None:
    text = ("see shell/_gone.py, `pkg/nothere/`, pkg/shell/_old.py, benchmarks/bench_gone.py, tool/_base.py, "
            "_vanished.py, registry.py, pkg.shell._gone, shell._moved.f, pkg.nothing, .._nope._x, sandbox/_gone.f")
    found = _names(stale_mentions(fake, text, fake.root / "tools"))
    assert found == ["shell/_gone.py", "pkg/nothere/", "pkg/shell/_old.py", "benchmarks/bench_gone.py", "tool/_base.py",
                     "_vanished.py", "registry.py", "pkg.shell._gone", "shell._moved.f", "pkg.nothing", ".._nope._x",
                     "sandbox/_gone.f"]


def test_the_checks_resolve_from_the_package_and_leave_other_words_alone(fake: Package) -> None:
    text = ("shell/_parse.py, files/_grep.py, _grep.py, _bash.py, _registry.py, sandbox/_mounts.linked_file, "
            "`pkg/shell/`, pkg/tools/files, benchmarks/bench_core.py, pkg.shell._parse.f, pkg.tool, pkg.Scheduler, "
            "shell._parse, .._registry, self._lock, ctx._x.y, .git/hooks, ~/.config/git, .claude/settings.json, "
            "example.com, proxy.py, _name.py, files/folders, https://github.com/a/_b.py, sandbox-quarantine/, "
            "pkg-sessions/x, nts.Permissions, .mcp.json, e.g. this.")
    assert stale_mentions(fake, text, fake.root / "tools") == []
    # A bare name resolves from the docstring's own package, not from another one's.
    assert _names(stale_mentions(fake, "_parse.py", fake.root / "tools")) == ["_parse.py"]
    assert stale_mentions(fake, "_parse.py", fake.root / "shell") == []
    # The docs have no package: a bare name may live in any of them.
    assert stale_mentions(fake, "_parse.py and _grep.py", None) == []


def test_the_layout_check_finds_a_missing_package_and_a_bare_name_resolves_from_its_row(fake: Package) -> None:
    readme = ("# x\n\n## Layout\n\n| folder | job |\n|---|---|\n| `pkg/_registry.py`, `_events.py` | a |\n"
              "| `pkg/shell/` | b |\n| `pkg/tools/`, `files/` | c |\n\n## Next\n")
    entries = layout_entries(readme, fake)
    assert fake.root / "_events.py" in entries and fake.root / "tools" / "files" in entries
    assert missing_from_layout(fake, entries) == ["pkg/sandbox/", "pkg/__init__.py", "pkg/internals.py"]
