"""An outside review of the kernel overlay: each test is one hole found, asserting the safe
behaviour (so each fails until the hole is fixed).

The attacker writes the model's tool calls (a speculation runs what the model suggests);
the user's settings and the user's own edits of the real tree meanwhile are theirs."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path
from typing import Any

import pytest

import nbtoolsched as nts
from nbtoolsched.speculation import speculate
from tests.sandbox.conftest import require_sandbox

from .conftest import loop, make_registry, text, use

pytestmark = pytest.mark.kernel_overlay


@pytest.fixture(autouse=True)
def _kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NBTOOLSCHED_SANDBOX", raising=False)
    require_sandbox()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    proj = tmp_path / "proj"
    (proj / "src").mkdir(parents=True)
    (proj / "src" / "keep.txt").write_text("keep\n")
    (proj / "d").mkdir()
    (proj / "d" / "inner.txt").write_text("inner\n")
    (proj / "config").mkdir()
    (proj / "config" / "prod.yaml").write_text("safe\n")
    (proj / "secret.env").write_text("API_KEY=hunter2\n")
    (proj / "a.txt").write_text("a\n")
    return proj.resolve()


def scheduler(project: Path, tmp_path: Path, *, deny: tuple[str, ...] = ()) -> nts.Scheduler:
    perms = nts.Permissions(mode="bypassPermissions", cwd=project, deny=deny)
    return nts.Scheduler(make_registry(), permissions=perms, cwd=project, session_dir=tmp_path / "session")


async def run(project: Path, tmp_path: Path, *calls: dict[str, Any], deny: tuple[str, ...] = (), **options: Any) -> Any:
    """One speculation: each call its own turn, then "done"; it must run in the kernel overlay."""
    turns = [[call] for call in calls] + [[text("done")]]
    spec = await speculate("go on", loop(*turns), scheduler=scheduler(project, tmp_path, deny=deny), **options)
    assert spec.overlay_kind == "kernel", spec.overlay_note
    return spec


def results(spec: Any) -> list[dict[str, Any]]:
    return [b for m in spec.transcript if m["role"] == "user" for b in m["content"] if b.get("type") == "tool_result"]


async def settle(spec: Any) -> None:
    """Reject what is still open (a test that failed half way must not leave its overlay)."""
    if spec.state not in ("accepted", "rejected"):
        await spec.reject()


# -- accept: special modes ---------------------------------------------------------------------

async def test_accept_does_not_carry_a_setuid_bit_into_the_real_tree(project: Path, tmp_path: Path) -> None:
    # The sandboxed command owns the files it makes, so it may chmod 6755 them; changes()
    # lists a plain "created" file, and accept (here as root) made a setuid-root program.
    spec = await run(project, tmp_path, use("Bash", command="echo x > tool && chmod 6755 tool"))
    try:
        await spec.accept()
        mode = os.lstat(project / "tool").st_mode
        assert not mode & (stat.S_ISUID | stat.S_ISGID), f"accept applied mode {stat.S_IMODE(mode):04o}"
    finally:
        await settle(spec)


# -- accept: the user's edits meanwhile ---------------------------------------------------------

async def test_replacing_a_folder_refuses_when_the_user_edited_a_file_in_it(project: Path, tmp_path: Path) -> None:
    # The folder becomes a symlink (or a file) in the overlay: only `d` itself was checked,
    # so the user's edit of d/inner.txt during the run was deleted by accept, silently.
    spec = await run(project, tmp_path, use("Bash", command="rm -rf d && ln -s a.txt d"))
    (project / "d" / "inner.txt").write_text("the user's work\n")
    try:
        with pytest.raises(nts.OverlayConflict) as caught:
            await spec.accept()
        assert "d/inner.txt" in str(caught.value)
        assert (project / "d" / "inner.txt").read_text() == "the user's work\n"
    finally:
        await settle(spec)


async def test_deleting_a_folder_refuses_when_the_user_added_a_file_in_it(project: Path, tmp_path: Path) -> None:
    # Only the paths recorded at the start are checked under a deleted folder: a file the
    # user (or a second speculation's accept) added there meanwhile was deleted silently.
    spec = await run(project, tmp_path, use("Bash", command="rm -rf d"))
    (project / "d" / "new_work.txt").write_text("the user's new file\n")
    try:
        with pytest.raises(nts.OverlayConflict):
            await spec.accept()
        assert (project / "d" / "new_work.txt").read_text() == "the user's new file\n"
    finally:
        await settle(spec)


# -- one view for every tool ----------------------------------------------------------------------

async def test_a_user_overlay_xattr_does_not_make_a_folder_opaque(project: Path, tmp_path: Path) -> None:
    # Mounted as root, overlayfs reads trusted.overlay.opaque only; Python also trusts
    # user.overlay.opaque, which a sandboxed command may set. The command still sees
    # src/keep.txt, Read says it does not exist, and accept deletes it ("folder replaced").
    setter = f"{sys.executable} -c \"import os; os.setxattr('src', 'user.overlay.opaque', b'y')\" && cat src/keep.txt"
    spec = await run(project, tmp_path, use("Bash", command=setter), use("Read", file_path="src/keep.txt"))
    try:
        ran = results(spec)
        assert "keep" in str(ran[0]["content"]), ran  # the command's view
        assert not ran[1].get("is_error") and "keep" in str(ran[1]["content"]), ran  # Read's view: the same
        await spec.accept()
        assert (project / "src" / "keep.txt").read_text() == "keep\n"
    finally:
        await settle(spec)


async def test_a_change_past_the_diff_limit_is_listed_and_applied(project: Path, tmp_path: Path) -> None:
    # Old and new bytes are compared after both are cut to 2 MB: an append to a 3 MB file
    # looked unchanged, so changes() did not list it and accept did not apply it.
    (project / "big.bin").write_bytes(b"\0" * 3_000_000)
    spec = await run(project, tmp_path, use("Bash", command="echo TAIL >> big.bin"))
    try:
        assert "big.bin" in {c.path for c in spec.changes()}
        await spec.accept()
        assert (project / "big.bin").stat().st_size == 3_000_005
    finally:
        await settle(spec)


async def test_file_tool_errors_show_the_real_path_not_the_upper_folder(project: Path, tmp_path: Path) -> None:
    # Results are rewritten to real paths, but a validation error is not: the model is
    # shown the overlay's upper folder (and the layout of the session's own folders).
    spec = await run(project, tmp_path, use("Read", file_path="missing.txt"))
    try:
        shown = str(results(spec)[0]["content"])
        assert spec.overlay.tree not in shown, shown
    finally:
        await settle(spec)


# -- accept: all or nothing ---------------------------------------------------------------------

async def test_a_failing_accept_leaves_the_real_tree_as_it_was(project: Path, tmp_path: Path) -> None:
    # A valid 242-byte name: accept's temp name (".NAME.nbtoolsched-accept-PID") is too long,
    # so applying it fails after a.txt was already written; the error says the files
    # "changed on disk" and lists the unapplied one as applied, and reject cannot undo.
    long_name = "z" * 242
    spec = await run(project, tmp_path, use("Bash", command=f"echo CHANGED > a.txt && touch {long_name}"))
    try:
        try:
            await spec.accept()
            applied = True
        except nts.OverlayConflict:
            applied = False
        if applied:
            assert (project / "a.txt").read_text() == "CHANGED\n" and (project / long_name).exists()
        else:
            assert (project / "a.txt").read_text() == "a\n"  # nothing written
    finally:
        await settle(spec)


# -- the session's deny rules -------------------------------------------------------------------

async def test_an_edit_deny_rule_holds_for_commands_in_the_overlay(project: Path, tmp_path: Path) -> None:
    # Outside a speculation the sandbox keeps Edit-denied files read-only (the rule's
    # deny_write); the overlay's policy drops deny_write, so a program writes the file and
    # accept copies it into the real tree.
    writer = f"{sys.executable} -c \"open('config/prod.yaml', 'w').write('pwned')\""
    spec = await run(project, tmp_path, use("Bash", command=writer), deny=("Edit(config/prod.yaml)",))
    try:
        assert "config/prod.yaml" not in {c.path for c in spec.changes()}
        if spec.changes():
            await spec.accept()
        assert (project / "config" / "prod.yaml").read_text() == "safe\n"
    finally:
        await settle(spec)


async def test_an_edit_deny_rule_holds_through_a_link_the_speculation_made(project: Path, tmp_path: Path) -> None:
    # The session's gate judges the path as given against the real tree, where the link
    # `c` does not exist: Write c/prod.yaml was allowed, landed on config/prod.yaml, and
    # accept applied it.
    spec = await run(project, tmp_path, use("Bash", command="ln -s config c"), use("Read", file_path="c/prod.yaml"),
                     use("Write", file_path="c/prod.yaml", content="pwned\n"), deny=("Edit(config/prod.yaml)",))
    try:
        assert "config/prod.yaml" not in {c.path for c in spec.changes()}, spec.boundary
    finally:
        await settle(spec)


async def test_a_read_deny_rule_holds_through_a_link_the_speculation_made(project: Path, tmp_path: Path) -> None:
    # Same gap for reads: `s.txt -> secret.env` exists only in the overlay, the gate let
    # Read s.txt through, and the model was shown the denied file.
    spec = await run(project, tmp_path, use("Bash", command="ln -s secret.env s.txt"), use("Read", file_path="s.txt"),
                     deny=("Read(secret.env)",))
    try:
        assert "hunter2" not in repr(spec.transcript)
    finally:
        await settle(spec)


# -- the size budget ------------------------------------------------------------------------------

async def test_the_temp_folder_counts_toward_the_size_budget(project: Path, tmp_path: Path) -> None:
    # $TMPDIR is the overlay's own folder on the host disk, writable, and not counted.
    spec = await run(project, tmp_path, use("Bash", command='head -c 3000000 /dev/zero > "$TMPDIR/big"'),
                     use("Bash", command="echo next"), max_overlay_bytes=1_000_000)
    try:
        assert spec.boundary is not None and spec.boundary.kind == "budget", spec.boundary
    finally:
        await settle(spec)


async def test_the_size_budget_holds_for_the_last_command(project: Path, tmp_path: Path) -> None:
    # The size is checked only before the next call: a last command past the budget ends
    # "complete", and accept then writes it all (a sparse file in full: `truncate -s 1T`
    # costs the upper folder nothing and accept a terabyte).
    spec = await run(project, tmp_path, use("Bash", command="truncate -s 200M sparse.bin"), max_overlay_bytes=1_000_000)
    try:
        assert spec.boundary is not None and spec.boundary.kind == "budget", spec.boundary
    finally:
        await settle(spec)
