"""What the kernel enforces for one command, as root and as an unprivileged user: the real
bubblewrap around the real wrapper, with the mounts sandbox/_mounts.py plans."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Iterator

import pytest

from nbtoolsched.sandbox import SandboxPolicy
from nbtoolsched.sandbox._mounts import MAX_WALK, plan_mounts, release
from nbtoolsched.sandbox._policy import MODEL_SECRETS
from tests.bypass_kit import SECRET, make_project

from .conftest import NOBODY, chown_tree, require_root_tools
from .helpers import literal, manifest, run_in_sandbox, write_policy


@pytest.fixture(params=["root", "nobody"])
def user(request: pytest.FixtureRequest) -> str:
    if request.param == "nobody":
        require_root_tools()
    return str(request.param)


@pytest.fixture
def work(user: str, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Path]:
    """A project (secrets, a git repository) owned by the user the sandbox runs as."""
    if user == "root":
        proj = make_project(tmp_path)
        subprocess.run(["git", "init", "-q", str(proj)], check=True)
        yield proj
        return
    base = request.getfixturevalue("nobody_dir")
    proj = make_project(base)
    subprocess.run(["git", "init", "-q", str(proj)], check=True)
    chown_tree(base)
    yield proj


def _run(policy: SandboxPolicy, command: str, cwd: Path, user: str, **kw: object):
    return run_in_sandbox(policy, command, cwd, nobody=user == "nobody", **kw)  # type: ignore[arg-type]


def test_the_working_directory_is_writable_and_nothing_else(work: Path, user: str, tmp_path: Path) -> None:
    outside = work.parent / "outside"
    outside.mkdir()
    if user == "nobody":
        os.chown(outside, NOBODY, NOBODY)
    ran = _run(write_policy(work), "echo made > made.txt && echo x > ../outside/pwned; "
               "python3 -c \"open('../outside/py', 'w')\"; touch /etc/nbtoolsched-pwned; echo done", work, user)
    assert (work / "made.txt").read_text() == "made\n"
    assert list(outside.iterdir()) == [] and not Path("/etc/nbtoolsched-pwned").exists()
    assert ran.text.count("Read-only file system") >= 3, ran.text


def test_a_link_out_of_the_working_directory_does_not_lead_to_a_write(work: Path, user: str) -> None:
    outside = work.parent / "outside2"
    outside.mkdir()
    os.symlink(outside, work / "out")
    ran = _run(write_policy(work), "echo x > out/pwned", work, user)
    assert list(outside.iterdir()) == [] and "Read-only file system" in ran.text


@pytest.mark.parametrize("target", [".git/hooks/pre-commit", ".git/config", ".claude/settings.json", ".vscode/tasks.json",
                                    ".husky/pre-commit", ".gitmodules", ".mcp.json", ".bashrc", ".envrc",
                                    "sub/nested/.git/hooks/post-checkout"])
def test_the_places_programs_run_from_stay_read_only(work: Path, user: str, target: str) -> None:
    for folder in (".claude", ".vscode", ".husky"):
        (work / folder).mkdir(exist_ok=True)
    for name in (".gitmodules", ".mcp.json", ".bashrc", ".envrc"):
        (work / name).write_text("original\n")
    subprocess.run(["git", "init", "-q", str(work / "sub" / "nested")], check=True, capture_output=True)
    if user == "nobody":
        chown_tree(work)
    before = manifest(work)
    ran = _run(write_policy(work), f"mkdir -p $(dirname {target}); echo pwned > {target}; rm -rf {target}; "
               f"mv {Path(target).parts[0]} moved", work, user)
    assert manifest(work) == before, ran.text
    assert "Read-only file system" in ran.text or "Device or resource busy" in ran.text


def test_a_hooks_folder_named_by_core_hooks_path_stays_read_only(work: Path, user: str) -> None:
    (work / "githooks").mkdir()
    with open(work / ".git" / "config", "a") as config:
        config.write("[core]\n\thooksPath = githooks\n")
    if user == "nobody":
        chown_tree(work)
    ran = _run(write_policy(work), "echo pwned > githooks/pre-commit; mv githooks gone; mv .git g", work, user)
    assert list((work / "githooks").iterdir()) == [] and not (work / "gone").exists() and not (work / "g").exists(), ran.text


def test_a_missing_claude_folder_and_hooks_folder_cannot_be_created(work: Path, user: str) -> None:
    hooks = work / ".git" / "hooks"
    if hooks.exists():
        subprocess.run(["rm", "-rf", str(hooks)], check=True)
    ran = _run(write_policy(work), "mkdir -p .claude && echo '{}' > .claude/settings.json; "
               "mkdir -p .git/hooks; echo pwned > .git/hooks/pre-commit; ls -a .claude .git/hooks", work, user)
    assert not (work / ".claude").exists(), "the placeholder stayed behind"
    assert not hooks.exists(), "the placeholder stayed behind"
    assert "Read-only file system" in ran.text


def test_a_commondir_the_command_makes_is_removed_and_named(work: Path, user: str) -> None:
    ran = _run(write_policy(work), "echo /tmp/evil > .git/commondir", work, user)
    assert not (work / ".git" / "commondir").exists()
    assert any("commondir" in note for note in ran.wrapped.notes), ran.wrapped.notes


def test_masked_files_and_folders_read_as_nothing(work: Path, user: str) -> None:
    policy = write_policy(work, deny_read=literal(work / ".env", work / "secrets"))
    ran = _run(policy, "cat .env; ls -A secrets; cat secrets/key.txt; echo 'cat .env' | bash; "
               "python3 -c \"print(open('.env').read())\"; grep -r SECRET . ; echo over > .env; echo in > secrets/new", work, user)
    assert SECRET not in ran.text, ran.text
    assert (work / ".env").read_text() == f"TOKEN={SECRET}\n" and not (work / "secrets" / "new").exists()


def test_a_pattern_is_expanded_when_the_command_is_wrapped(work: Path, user: str) -> None:
    from nbtoolsched.permissions._sandbox import RulePaths

    (work / "deep" / "er").mkdir(parents=True)
    (work / "deep" / "er" / ".env").write_text(f"{SECRET}\n")
    floating = RulePaths(".env", str(work), str(work), "/nonexistent-home", (str(work),))
    ran = _run(write_policy(work, deny_read=(floating,)), "cat .env deep/er/.env; find . -name .env | xargs cat", work, user)
    assert SECRET not in ran.text and ran.wrapped.plan.masks_complete


def test_a_hard_link_to_a_masked_file_is_masked_too(work: Path, user: str) -> None:
    os.link(work / ".env", work / "victim" / "innocent.txt")
    ran = _run(write_policy(work, deny_read=literal(work / ".env")), "cat victim/innocent.txt", work, user)
    assert SECRET not in ran.text


def test_allow_read_gives_back_a_path_inside_a_masked_folder(work: Path, user: str) -> None:
    (work / "secrets" / "public.txt").write_text("public\n")
    policy = SandboxPolicy("write", (str(work),), deny_read=literal(work / "secrets"), allow_read=literal(work / "secrets" / "public.txt"))
    ran = _run(policy, "cat secrets/public.txt; cat secrets/key.txt", work, user)
    assert "public" in ran.out and SECRET not in ran.text


def test_the_read_only_sandbox_writes_nothing_but_its_own_temp_dir(work: Path, user: str) -> None:
    before = manifest(work)
    ran = _run(write_policy(work).read_only(), 'echo t > "$TMPDIR/t" && cat "$TMPDIR/t"; echo x > new.txt; '
               "git config user.name pwned; touch .git/index.lock; echo", work, user)
    assert ran.out.startswith("t\n")
    assert manifest(work) == before
    assert ran.wrapped.plan.scratch is None  # removed afterwards
    assert ran.text.count("Read-only file system") >= 2, ran.text


def test_what_a_command_leaves_running_dies_with_the_sandbox_and_is_named(work: Path, user: str) -> None:
    ran = _run(write_policy(work), "(setsid env -i sleep 3111 &); nohup sleep 3112 >/dev/null 2>&1 & sleep 0.3; echo started",
               work, user)
    assert "started" in ran.out
    names = sorted(left.name for left in ran.wrapped.leftovers)
    assert names == ["sleep", "sleep"], ran.wrapped.leftovers
    survivors = subprocess.run(["pgrep", "-f", "sleep 311[12]"], capture_output=True, text=True).stdout.split()
    assert survivors == []


def test_the_host_is_out_of_reach(work: Path, user: str) -> None:
    ran = _run(write_policy(work), f"kill -0 {os.getpid()} && echo killable; ls /proc | grep -c '^[0-9]'; "
               "cat /sys/class/net/*/address 2>/dev/null | wc -l; ls /sys/class/net", work, user)
    assert "killable" not in ran.out
    count = int(ran.out.split()[0])
    assert count <= 6, ran.out  # bubblewrap's init, the wrapper, the shell and its pipeline
    assert ran.out.split()[-1] == "lo"  # only loopback


def test_the_model_keys_do_not_reach_the_command_unless_passed_on(work: Path, user: str) -> None:
    env = dict(os.environ, ANTHROPIC_API_KEY="sk-ant-secret", OPENAI_API_KEY="sk-openai-secret", HARMLESS="ok")
    ran = _run(write_policy(work), "env; cat /proc/self/environ | tr '\\0' '\\n'", work, user, env=env)
    assert "sk-ant-secret" not in ran.text and "sk-openai-secret" not in ran.text and "HARMLESS=ok" in ran.out
    passing = SandboxPolicy("write", (str(work),), pass_env=frozenset({"OPENAI_API_KEY"}))
    ran = _run(passing, "echo $OPENAI_API_KEY $ANTHROPIC_API_KEY", work, user, env=env)
    assert ran.out.strip() == "sk-openai-secret"
    assert {"ANTHROPIC_API_KEY", "OPENAI_API_KEY"} <= MODEL_SECRETS


def test_a_search_that_outgrows_its_budget_says_so(tmp_path: Path) -> None:
    from nbtoolsched.permissions._sandbox import RulePaths

    for i in range(MAX_WALK // 50 + 2):
        folder = tmp_path / f"d{i}"
        folder.mkdir()
        for j in range(50):
            (folder / f"f{j}").touch()
    floating = RulePaths(".env", str(tmp_path), str(tmp_path), "/nonexistent-home", (str(tmp_path),))
    plan = plan_mounts(SandboxPolicy("write", (str(tmp_path),), deny_read=(floating,)), str(tmp_path))
    try:
        assert not plan.masks_complete and "stopped after" in plan.incomplete[0]
    finally:
        release(plan)
