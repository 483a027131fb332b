"""The pure-Python engine must give exactly ripgrep's answers, mode by mode, flag by flag.

Compared through the tools' own output text (ordering and formatting are shared, so any
difference is a difference in what was found or filtered).
"""

from __future__ import annotations

import asyncio
import itertools
import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import nbtoolsched as nts
from nbtoolsched.tools.files._glob import GlobTool
from nbtoolsched.tools.files._grep import GrepTool
from nbtoolsched.tools.files._ripgrep import find_rg
from nbtoolsched.tools.files._types import FILE_TYPES

pytestmark = pytest.mark.skipif(find_rg() is None, reason="parity needs the rg binary")

FIXTURE = {
    ".gitignore": "*.log\n!keep.log\nbuild/\n/top_only.txt\ndocs/**/*.tmp\n[Tt]emp*\n# comment\n\\#hash.txt\n",
    "app.py": "import os\nimport sys\n\n\ndef main():\n    return os.getcwd()\n\nclass Foo:\n    pass\n",
    "top_only.txt": "foo at top\n",
    "#hash.txt": "foo hashed\n",
    "keep.log": "foo kept\n",
    "drop.log": "foo dropped\n",
    "Temp1.txt": "foo temp\n",
    "build/out.py": "foo built\n",
    "src/top_only.txt": "foo nested same name\n",
    "src/mod.py": "def foo():\n    x = 'FOO'\n    return x\n# foo end\n",
    "src/.ignore": "*.gen.py\n",
    "src/a.gen.py": "foo generated\n",
    "src/.rgignore": "!a.gen.py\n",
    "src/deep/more.ts": "const foo = 1;\nexport { foo };\n",
    "src/deep/.gitignore": "!*.log\n",
    "src/deep/trace.log": "foo reincluded\n",
    "docs/guide.md": "# Foo\n\nUse foo like this:\n\n    foo()\n\nEnd.\n",
    "docs/x/y.tmp": "foo tmp\n",
    "docs/x/y.md": "foo md\n",
    ".hidden/config.yaml": "foo: bar\n",
    ".env": "FOO=1\n",
    ".git/HEAD": "foo in git\n",
    "crlf.txt": "foo\r\nbar foo\r\n",
    "unicode.txt": "caf\u00e9 foo\n\u00fcber FOO\n",
    "noeol.txt": "last line foo",
    "binary.bin": "foo\0binary\n",
    "empty.txt": "",
    "long.txt": "foo " + "x" * 800 + "\n",
}


def build(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
    for index, rel in enumerate(sorted(files)):  # distinct mtimes: newest-first order is deterministic
        os.utime(root / rel, (1_000_000 + index, 1_000_000 + index))


async def both(root: Path, name: str, deny: tuple[str, ...] = (), **input) -> tuple[str, str]:
    """The tool's text with ripgrep and with the Python engine (``deny``: Read rules in force)."""
    texts = []
    for engine in ("rg", "python"):
        tool = GrepTool(engine=engine) if name == "Grep" else GlobTool(engine=engine)
        perms = nts.Permissions(deny=list(deny), cwd=root) if deny else None
        sched = nts.Scheduler(nts.ToolRegistry([tool]), permissions=perms, cwd=root)
        (result,) = await sched.run([{"type": "tool_use", "id": "t", "name": name, "input": input}])
        texts.append(("ERROR " if result.is_error else "") + result.text)
    return texts[0], texts[1]


@pytest.fixture(scope="module")
def fixture_root(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("parity")
    build(root, FIXTURE)
    return root


MODES = ["files_with_matches", "content", "count"]
FLAG_SETS = [{}, {"-i": True}, {"-n": False}, {"-A": 1}, {"-B": 2}, {"-C": 1, "-i": True}, {"multiline": True}, {"head_limit": 3}]
FILTERS = [{}, {"glob": "*.py"}, {"glob": "!*.py"}, {"glob": "*.{md,txt}"}, {"glob": "src/**"}, {"type": "py"},
           {"type": "ts"}, {"path": "src"}, {"path": "docs/guide.md"}, {"glob": "*.log"}]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("flags", FLAG_SETS, ids=lambda f: ",".join(f) or "plain")
async def test_engines_agree_on_every_mode_and_flag(fixture_root, mode, flags):
    for pattern in ["foo", "^def", r"foo\(\)$", "o+\\b"]:
        rg, py = await both(fixture_root, "Grep", pattern=pattern, output_mode=mode, **flags)
        assert py == rg, f"pattern {pattern!r}"


@pytest.mark.parametrize("extra", FILTERS, ids=lambda f: ",".join(f"{k}={v}" for k, v in f.items()) or "none")
async def test_engines_agree_on_filters(fixture_root, extra):
    for mode in MODES:
        rg, py = await both(fixture_root, "Grep", pattern="foo", output_mode=mode, **{"-i": True}, **extra)
        assert py == rg
    assert "build/out.py" not in rg and ".git/HEAD" not in rg


async def test_engines_agree_on_multiline_spans(fixture_root):
    for pattern in [r"import os\nimport", r"main\(\):.*getcwd", r"class Foo:\s+pass", r"^$\n^$"]:
        for mode in MODES:
            rg, py = await both(fixture_root, "Grep", pattern=pattern, multiline=True, output_mode=mode, **{"-A": 1})
            assert py == rg, f"pattern {pattern!r} mode {mode}"


async def test_engines_agree_on_glob_listing(fixture_root):
    for pattern in ["**", "*.py", "src/**/*.{ts,py}", "*.log", "**/top_only.txt", "src/top_only.txt", ".*", "docs/*"]:
        rg, py = await both(fixture_root, "Glob", pattern=pattern)
        assert py == rg, pattern
    listed = (await both(fixture_root, "Glob", pattern="**"))[0].splitlines()
    assert {"app.py", "keep.log", "src/a.gen.py", "src/deep/trace.log", ".env"} <= set(listed)
    assert not {"drop.log", "build/out.py", "top_only.txt", "Temp1.txt", "docs/x/y.tmp", "#hash.txt", ".git/HEAD"} & set(listed)


DENY_SETS = [("Read(.env)",), ("Read(src/**)", "Read(*.md)"), ("Read(./app.py)", "Grep(docs/**)", "Glob(**/*.log)")]


@pytest.mark.parametrize("deny", DENY_SETS, ids=lambda d: " ".join(d))
async def test_engines_agree_with_read_rules_in_force(fixture_root, deny):
    for mode in MODES:
        rg, py = await both(fixture_root, "Grep", deny, pattern="foo", output_mode=mode, **{"-i": True, "-C": 1})
        assert py == rg
    rg_list, py_list = await both(fixture_root, "Glob", deny, pattern="**")
    assert py_list == rg_list
    content = {"pattern": "foo", "output_mode": "content", "-i": True}
    grep_shown, grep_all = (await both(fixture_root, "Grep", deny, **content))[0], (await both(fixture_root, "Grep", **content))[0]
    glob_all = (await both(fixture_root, "Glob", pattern="**"))[0]
    assert set(grep_shown.splitlines()) < set(grep_all.splitlines())  # each rule set hides something that is there
    assert set(rg_list.splitlines()) < set(glob_all.splitlines())
    if deny == DENY_SETS[0]:
        assert ".env" in glob_all and ".env" not in rg_list and "FOO=1" in grep_all and "FOO=1" not in grep_shown


async def test_engines_refuse_the_same_bad_patterns(fixture_root):
    for pattern in ["(", "a(?=b)", "(a)\\1", "a\\nb", "[z-a]"]:
        rg, py = await both(fixture_root, "Grep", pattern=pattern)
        assert rg.startswith("ERROR") and py.startswith("ERROR"), pattern
        assert repr(pattern) in rg and repr(pattern) in py


def test_type_table_matches_ripgrep():
    import subprocess

    listed = subprocess.run([find_rg(), "--type-list"], capture_output=True, text=True, check=True).stdout
    rg_types = {name: tuple(g.strip() for g in globs.split(",")) for name, globs in
                (line.split(":", 1) for line in listed.splitlines())}
    for name, globs in FILE_TYPES.items():
        assert set(globs) == set(rg_types[name]), name


# -- random trees --------------------------------------------------------------------------
DIRS = ["", "a/", "a/b/", ".h/", "c/", "c/a/"]
NAMES = ["x.py", "y.txt", "z.md", ".dot", "w.log", "Q.PY"]
WORDS = ["foo", "bar", "Foo", "baz qux", "foofoo", "", "  foo", "end", "x.y", "FOO bar"]
IGNORE_LINES = ["*.log", "a/", "/c", "!w.log", "b/*.py", "**/z.md", "*.t?t", "[xy].py", ".h", "!a/", "c/**", "*.PY", "!x.py"]
PATTERNS = ["foo", "ba[rz]", "^foo", "end$", r"\bfoo\b", "o+", "fo.|qux", r"x\.y", "FOO", "^$", r"\s+foo"]
GLOBS = [None, "*.py", "!*.md", "*.{py,txt}", "a/**", "!a", "*"]

trees = st.dictionaries(
    st.tuples(st.sampled_from(DIRS), st.sampled_from(NAMES)).map("".join),
    st.lists(st.sampled_from(WORDS), max_size=6).map(lambda ws: "".join(w + "\n" for w in ws)),
    min_size=1, max_size=10,
)
ignores = st.dictionaries(st.sampled_from(["", "a/", "c/"]), st.lists(st.sampled_from(IGNORE_LINES), max_size=4), max_size=2)


DENY_RULES = ["Read(*.py)", "Read(a/**)", "Read(.dot)", "Read(./c/a)", "Grep(**/y.txt)", "Glob(.h)"]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tree=trees, ignore=ignores, pattern=st.sampled_from(PATTERNS), mode=st.sampled_from(MODES),
       glob=st.sampled_from(GLOBS), ignore_case=st.booleans(), context=st.integers(0, 2),
       deny=st.lists(st.sampled_from(DENY_RULES), max_size=2, unique=True).map(tuple))
def test_engines_agree_on_random_trees(tree, ignore, pattern, mode, glob, ignore_case, context, deny):
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "t"
        files = dict(tree)
        for folder, lines in ignore.items():
            files[folder + ".gitignore"] = "".join(line + "\n" for line in lines)
        build(root, files)
        args = {"pattern": pattern, "output_mode": mode, "-i": ignore_case, "-C": context}
        if glob:
            args["glob"] = glob
        rg, py = asyncio.run(both(root, "Grep", deny, **args))
        assert py == rg
        rg_list, py_list = asyncio.run(both(root, "Glob", deny, pattern=glob or "**"))
        assert py_list == rg_list


def test_fixture_covers_every_ignore_feature():
    """Guard against the fixture drifting into testing nothing."""
    lines = list(itertools.chain.from_iterable(t.splitlines() for n, t in FIXTURE.items() if "ignore" in n))
    assert any(line.startswith("!") for line in lines) and any(line.endswith("/") for line in lines)
    assert any(line.startswith("/") for line in lines) and any("**" in line for line in lines)
