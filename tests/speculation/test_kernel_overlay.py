"""Speculation in the kernel overlay: commands that write (a real pytest run, sed -i, rm, mv,
chmod, a symlink) run ahead of the user, every tool sees the same copy-on-write tree, and
the real tree is untouched until accept, byte- and metadata-identical after reject."""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

import nbtoolsched as nts
from nbtoolsched.sandbox import SandboxPolicy, availability, wrap
from nbtoolsched.sandbox._overlay import KernelOverlay, upper_entries
from nbtoolsched.speculation import speculate
from tests.sandbox.conftest import NOBODY, as_nobody, require_root_tools, require_sandbox

from .conftest import loop, make_registry, text, use

pytestmark = pytest.mark.kernel_overlay


@pytest.fixture(autouse=True)
def _kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NBTOOLSCHED_SANDBOX", raising=False)
    require_sandbox()


def manifest(root: Path) -> dict[str, tuple[Any, ...]]:
    """Every entry: kind, mode, size, mtime and the bytes' digest (or the link's target)."""
    found: dict[str, tuple[Any, ...]] = {}
    for folder, dirs, files in os.walk(root):
        for name in sorted(dirs + files):
            path = os.path.join(folder, name)
            info = os.lstat(path)
            body: Any = os.readlink(path) if stat.S_ISLNK(info.st_mode) else (
                hashlib.sha256(Path(path).read_bytes()).hexdigest() if stat.S_ISREG(info.st_mode) else None)
            found[os.path.relpath(path, root)] = (stat.S_IFMT(info.st_mode), stat.S_IMODE(info.st_mode), info.st_size,
                                                  info.st_mtime_ns, body)
    return found


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A small Python project with a failing test, files to delete, rename and replace, a link."""
    proj = tmp_path / "proj"
    (proj / "src").mkdir(parents=True)
    (proj / "src" / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (proj / "test_calc.py").write_text("import sys\nsys.path.insert(0, 'src')\nfrom calc import add\n\n"
                                       "def test_add():\n    assert add(2, 3) == 5\n")
    (proj / "config.ini").write_text("mode = alpha\n")
    (proj / "old.txt").write_text("old\n")
    (proj / "rename_me.txt").write_text("renamed\n")
    for name in ("dir_to_remove", "dir_to_rename", "dir_replaced"):
        (proj / name).mkdir()
        (proj / name / "inner.txt").write_text(f"{name}\n")
    os.symlink("old.txt", proj / "latest")
    subprocess.run(["git", "init", "-q", str(proj)], check=True)
    return proj.resolve()


def scheduler(project: Path, tmp_path: Path, mode: str = "acceptEdits", **options: Any) -> nts.Scheduler:
    perms = nts.Permissions(mode=mode, cwd=project, **options)
    return nts.Scheduler(make_registry(), permissions=perms, cwd=project, session_dir=tmp_path / "session")


def results(spec: Any) -> list[dict[str, Any]]:
    return [b for m in spec.transcript if m["role"] == "user" for b in m["content"] if b.get("type") == "tool_result"]


# (env -u: a PYTHONDONTWRITEBYTECODE in the environment would keep the caches this test looks for)
PYTEST = f"env -u PYTHONDONTWRITEBYTECODE {sys.executable} -m pytest -q -p no:cacheprovider -p no:randomly test_calc.py"


async def test_fix_then_run_the_tests_runs_ahead_and_accept_applies_it(project: Path, tmp_path: Path) -> None:
    before = manifest(project)
    spec = await speculate("fix add and run the tests", loop(
        [use("Read", file_path="src/calc.py")],
        [use("Edit", file_path="src/calc.py", old_string="a - b", new_string="a + b")],
        [use("Bash", command=PYTEST)],
        [text("Fixed: the test passes.")],
    ), scheduler=scheduler(project, tmp_path))
    assert spec.overlay_kind == "kernel", spec.overlay_note
    assert spec.boundary is not None and spec.boundary.complete, spec.boundary
    assert manifest(project) == before  # nothing real changed yet
    ran = results(spec)
    assert not any(r.get("is_error") for r in ran), ran
    assert "1 passed" in str(ran[2]["content"])  # the test saw the edit: one view for every tool
    changes = {c.path: c.kind for c in spec.changes()}
    assert changes["src/calc.py"] == "modified"
    assert any("__pycache__" in path for path in changes), changes  # the test run's caches, shown too
    accepted = await spec.accept()
    assert "a + b" in (project / "src" / "calc.py").read_text()
    assert (project / "src" / "__pycache__").is_dir()  # applied like any change (documented)
    assert "1 passed" in str(accepted.messages)  # the model is handed what the tests printed
    assert not os.path.exists(spec.overlay.workdir)


SHAPES = ("sed -i 's/alpha/beta/' config.ini && rm old.txt && rm -rf dir_to_remove && "
          "rm -rf dir_replaced && mkdir dir_replaced && echo b > dir_replaced/b.txt && mv rename_me.txt renamed.txt && "
          "mv dir_to_rename dir_renamed && chmod +x test_calc.py && echo new > brand_new.txt && ln -sf renamed.txt latest && "
          "find . -path ./.git -prune -o -print | LC_ALL=C sort")


async def test_deletions_renames_modes_and_links_are_listed_and_applied(project: Path, tmp_path: Path) -> None:
    before = manifest(project)
    spec = await speculate("reshape", loop([use("Bash", command=SHAPES)], [text("done")]),
                           scheduler=scheduler(project, tmp_path, "bypassPermissions"))
    assert spec.overlay_kind == "kernel" and spec.boundary.complete, (spec.overlay_note, spec.boundary)
    assert manifest(project) == before
    seen_inside = str(results(spec)[0]["content"]).splitlines()
    kinds = {c.path: c.kind for c in spec.changes()}
    assert kinds["old.txt"] == "deleted" and kinds["dir_to_remove"] == "deleted" and kinds["rename_me.txt"] == "deleted"
    assert kinds["renamed.txt"] == "created" and kinds["brand_new.txt"] == "created" and kinds["config.ini"] == "modified"
    assert kinds["dir_replaced"] == "replaced" and kinds["test_calc.py"] == "mode_changed" and kinds["latest"] == "symlink"
    await spec.accept()
    listed = subprocess.run("find . -path ./.git -prune -o -print | LC_ALL=C sort", shell=True, cwd=project,
                            capture_output=True, text=True).stdout.splitlines()
    assert listed == seen_inside  # the real tree is now what the commands saw
    assert (project / "config.ini").read_text() == "mode = beta\n"
    assert os.readlink(project / "latest") == "renamed.txt"
    assert os.access(project / "test_calc.py", os.X_OK)
    assert not (project / "dir_replaced" / "inner.txt").exists() and (project / "dir_replaced" / "b.txt").exists()


async def test_reject_leaves_the_tree_byte_and_metadata_identical(project: Path, tmp_path: Path) -> None:
    before = manifest(project)
    spec = await speculate("reshape", loop(
        [use("Edit", file_path="src/calc.py", old_string="a - b", new_string="a + b")],
        [use("Bash", command=f"{SHAPES} && {PYTEST}")],
        [use("Write", file_path="notes.md", content="notes\n")],
        [text("done")],
    ), scheduler=scheduler(project, tmp_path, "bypassPermissions"))
    assert spec.overlay_kind == "kernel" and spec.boundary.complete, (spec.overlay_note, spec.boundary)
    await spec.reject()
    assert manifest(project) == before
    assert not os.path.exists(spec.overlay.workdir)


async def test_a_concurrent_edit_of_the_real_tree_makes_accept_refuse(project: Path, tmp_path: Path) -> None:
    spec = await speculate("edit", loop(
        [use("Bash", command="sed -i 's/alpha/beta/' config.ini")],
        [text("done")],
    ), scheduler=scheduler(project, tmp_path, "bypassPermissions"))
    (project / "config.ini").write_text("mode = edited by the user\n")
    with pytest.raises(nts.OverlayConflict) as caught:
        await spec.accept()
    assert [c.path for c in caught.value.conflicts] == ["config.ini"]
    assert (project / "config.ini").read_text() == "mode = edited by the user\n"
    await spec.reject()


@pytest.mark.parametrize("command, kind", [
    ("curl -sS https://example.com", "network"),
    ("pip install requests", "network"),
    ("echo x > ../outside.txt", "outside_cwd"),
    ("echo x > .git/hooks/pre-commit", "outside_cwd"),
])
async def test_what_needs_a_person_is_a_boundary(project: Path, tmp_path: Path, command: str, kind: str) -> None:
    before = manifest(project)
    spec = await speculate("go", loop([use("Bash", command=command)], [text("done")]),
                           scheduler=scheduler(project, tmp_path, "bypassPermissions"))
    assert spec.boundary is not None and spec.boundary.kind == kind, (spec.boundary, results(spec))
    assert not (tmp_path / "outside.txt").exists() and not (project / ".git" / "hooks" / "pre-commit").exists()
    await spec.reject()
    assert manifest(project) == before


async def test_a_retry_outside_the_sandbox_is_a_boundary(project: Path, tmp_path: Path) -> None:
    spec = await speculate("go", loop([use("Bash", command="touch made.txt", dangerouslyDisableSandbox=True)], [text("done")]),
                           scheduler=scheduler(project, tmp_path, "bypassPermissions"))
    assert spec.boundary is not None and spec.boundary.kind == "bash", spec.boundary
    assert not (project / "made.txt").exists()
    await spec.reject()


async def test_the_size_budget_stops_the_run(project: Path, tmp_path: Path) -> None:
    spec = await speculate("go", loop(
        [use("Bash", command="head -c 3000000 /dev/zero > big.bin")],
        [use("Bash", command="echo next")],
        [text("done")],
    ), scheduler=scheduler(project, tmp_path, "bypassPermissions"), max_overlay_bytes=1_000_000)
    assert spec.boundary is not None and spec.boundary.kind == "budget", spec.boundary
    await spec.reject()


async def test_a_change_to_a_place_programs_run_from_needs_a_second_yes(project: Path, tmp_path: Path) -> None:
    spec = await speculate("go", loop([use("Bash", command="mkdir -p .github && echo x > .github/ok.txt && echo '{}' > .mcp.json")],
                                      [text("done")]), scheduler=scheduler(project, tmp_path, "bypassPermissions"))
    paths = {c.path for c in spec.changes()}
    assert ".mcp.json" not in paths  # the sandbox took it away after the command
    assert ".github/ok.txt" in paths
    await spec.accept()
    assert not (project / ".mcp.json").exists() and (project / ".github" / "ok.txt").exists()


async def test_where_overlayfs_is_refused_the_path_rewriting_overlay_says_so(tmp_path: Path) -> None:
    proj = tmp_path / "a:b"  # overlayfs options cannot hold a colon
    proj.mkdir()
    (proj / "f.txt").write_text("f\n")
    spec = await speculate("go", loop([use("Bash", command="echo x > g.txt")], [text("done")]),
                           scheduler=scheduler(proj.resolve(), tmp_path, "bypassPermissions"))
    assert spec.overlay_kind == "paths" and "overlayfs" in spec.overlay_note, spec.overlay_note
    assert spec.boundary is not None and spec.boundary.kind == "bash"  # Claude Code's boundary, as before
    await spec.reject()
    assert sorted(os.listdir(proj)) == ["f.txt"]


def test_an_unprivileged_overlay_holds_the_changes_in_its_upper_folder(tmp_path: Path) -> None:
    """As nobody: overlayfs with userxattr in a user namespace, bubblewrap inside it."""
    require_root_tools()
    nobody_dir = Path(tempfile.mkdtemp(prefix="nbtoolsched-nobody-"))
    nobody_dir.chmod(0o755)
    proj, work = nobody_dir / "proj", nobody_dir / "work"
    (proj / "d").mkdir(parents=True)
    (proj / "a.txt").write_text("a\n")
    (proj / "d" / "b.txt").write_text("b\n")
    for folder in ("upper", "work", "tmp"):  # the unprivileged helper makes nothing of its own here
        (work / "overlay" / folder).mkdir(parents=True)
    subprocess.run(["chown", "-R", f"{NOBODY}:{NOBODY}", str(nobody_dir)], check=True)
    before = manifest(proj)
    overlay = KernelOverlay.check(str(proj), str(work / "overlay"), run_as=tuple(as_nobody([])[:-1]))
    overlay.mount()
    try:
        policy = SandboxPolicy("write", (str(proj),), tmp_dir=overlay.tmp_dir)
        with wrap(policy, "rm a.txt; rm -rf d && mkdir d && echo c > d/c.txt; echo n > new.txt; id -u; ls",
                  str(proj), dict(os.environ), availability(), overlay) as wrapped:
            done = subprocess.run(wrapped.argv, env=wrapped.env, pass_fds=wrapped.pass_fds, capture_output=True, text=True)
            wrapped.started()
    finally:
        overlay.unmount()
    assert done.stdout.split()[1:] == ["d", "new.txt"], done
    assert manifest(proj) == before
    entries = {e.rel: e.kind for e in upper_entries(overlay.upper, root=False)}
    assert entries == {"a.txt": "whiteout", "d": "opaque_dir", "d/c.txt": "file", "new.txt": "file"}, entries
    overlay.discard()
    shutil.rmtree(nobody_dir, ignore_errors=True)


async def test_git_status_in_the_overlay_leaves_the_index_alone(project: Path, tmp_path: Path) -> None:
    subprocess.run(["git", "-C", str(project), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(project), "-c", "user.name=a", "-c", "user.email=a@b", "commit", "-qm", "x"], check=True)
    (project / "config.ini").write_text("mode = touched\n")  # a stale index entry: a refresh would rewrite it
    os.utime(project / "config.ini", ns=(1, 1))
    spec = await speculate("look", loop([use("Bash", command="git status --short && git diff --stat")], [text("done")]),
                           scheduler=scheduler(project, tmp_path, "bypassPermissions"))
    assert spec.overlay_kind == "kernel" and "config.ini" in str(results(spec)[0]["content"])
    assert not any(c.path.startswith(".git") for c in spec.changes()), [c.path for c in spec.changes()]
    await spec.reject()
