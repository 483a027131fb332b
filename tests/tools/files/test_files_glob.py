"""Glob through the real Scheduler, with each engine: order, ignores, caps, errors."""

from __future__ import annotations

import os


def touch(path, mtime: int, text: str = "") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    os.utime(path, (mtime, mtime))


async def test_newest_first(engine_files):
    root = engine_files.root
    touch(root / "old.py", 1_000_000)
    touch(root / "src/new.py", 3_000_000)
    touch(root / "mid.py", 2_000_000)
    touch(root / "notes.md", 4_000_000)
    text = await engine_files.ok("Glob", pattern="*.py")
    assert text.splitlines() == ["src/new.py", "mid.py", "old.py"]


async def test_gitignore_hidden_files_and_git_dir(engine_files):
    root = engine_files.root
    (root / ".gitignore").write_text("build/\n*.log\n!keep.log\n")
    for rel in ["a.txt", "build/b.txt", "x.log", "keep.log", ".env", ".git/config", "sub/.hidden/c.txt"]:
        touch(root / rel, 1_000_000)
    listed = set((await engine_files.ok("Glob", pattern="**")).splitlines())
    assert listed == {"a.txt", "keep.log", ".env", ".gitignore", "sub/.hidden/c.txt"}


async def test_caps_at_one_hundred_with_a_note(engine_files):
    for i in range(130):
        touch(engine_files.root / f"f{i:03}.txt", 1_000_000 + i)
    lines = (await engine_files.ok("Glob", pattern="*.txt")).splitlines()
    assert lines[0] == "f129.txt" and len([ln for ln in lines if ln.endswith(".txt")]) == 100
    assert "100 most recently modified of 130" in lines[-1]


async def test_path_argument_absolute_patterns_and_braces(engine_files):
    root = engine_files.root
    for rel in ["src/a.ts", "src/b.tsx", "src/c.js", "lib/d.ts"]:
        touch(root / rel, 1_000_000)
    assert set((await engine_files.ok("Glob", pattern="*.{ts,tsx}", path="src")).splitlines()) == {"src/a.ts", "src/b.tsx"}
    assert (await engine_files.ok("Glob", pattern=str(root / "lib" / "*.ts"))).splitlines() == ["lib/d.ts"]
    assert (await engine_files.ok("Glob", pattern="nothing*")) == "No files found."


async def test_bad_paths_and_patterns(engine_files):
    touch(engine_files.root / "f.txt", 1_000_000)
    assert "does not exist" in await engine_files.error("Glob", pattern="*", path="missing")
    assert "must be a directory" in await engine_files.error("Glob", pattern="*", path="f.txt")
    assert "Invalid glob" in await engine_files.error("Glob", pattern="src/[abc")
