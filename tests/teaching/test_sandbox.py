"""Chapter 14's checker (``teaching.sandbox``): a wrong setting is named, the right one passes.

The checker runs real commands through the real Bash tool under the real sandbox, so these
tests skip (saying why) where bubblewrap cannot start, except the stub's. The reference
setting is also checked against what the library masks (``Permissions.sandbox`` and
``sandbox.wrap``).
"""

from __future__ import annotations

import os
import random
from pathlib import Path
from typing import Any

import pytest

import nbtoolsched as nts
from nbtoolsched.sandbox import LiteralPath, SandboxSettings, availability, wrap
from teaching import sandbox
from teaching.sandbox import bwrap_lines, check_mask_env, reference_mask_env, word_check


def needs_sandbox() -> None:
    found = availability()
    if not found.ok:
        pytest.skip(f"the OS sandbox cannot start here: {found.reason}")


def unwritten(project: Path) -> Any:
    raise NotImplementedError


def test_unfilled_stub_is_not_written_yet() -> None:
    assert "not written yet" in str(check_mask_env(unwritten))  # wherever the sandbox starts or not


def test_right_answer_passes() -> None:
    needs_sandbox()
    verdict = check_mask_env(reference_mask_env)
    assert verdict.ok, str(verdict)
    assert str(verdict) == "✓ mask_env: all 30 cases held: nothing leaked, nothing broke."


@pytest.mark.parametrize("settings", [
    {"filesystem": {"denyRead": ["./**/.env"]}},
    {"filesystem": {"denyRead": ["//**/.env"]}},
    {"filesystem": {"denyRead": ["./.env", "./api/.env"]}},
])
def test_other_right_spellings_pass(settings: dict[str, Any]) -> None:
    needs_sandbox()
    verdict = check_mask_env(lambda project: settings)
    assert verdict.ok, str(verdict)


def test_a_sandbox_settings_object_passes_too() -> None:
    needs_sandbox()

    def literal(project: Path) -> SandboxSettings:
        return SandboxSettings(deny_read=tuple(LiteralPath(str(p)) for p in project.rglob(".env")))

    verdict = check_mask_env(literal)
    assert verdict.ok, str(verdict)


def test_only_the_top_env_leaks_the_one_in_api() -> None:
    needs_sandbox()
    verdict = check_mask_env(lambda project: {"filesystem": {"denyRead": ["./.env"]}}, projects=2)
    text = str(verdict)
    assert not verdict.ok
    assert "LEAKED" in text and "`cat api/.env` printed api/.env's secret" in text
    assert "none of your denyRead patterns ['./.env'] matches it" in text


def test_a_pattern_that_masks_too_much_breaks_env_example() -> None:
    needs_sandbox()
    verdict = check_mask_env(lambda project: {"filesystem": {"denyRead": [".env*"]}}, projects=2)
    text = str(verdict)
    assert not verdict.ok and "LEAKED" not in text
    assert "BROKE" in text and "`cat .env.example` should print 'TOKEN=changeme'" in text
    assert "your denyRead ['.env*'] matches .env.example" in text


def test_deny_write_hides_nothing() -> None:
    needs_sandbox()
    verdict = check_mask_env(lambda project: {"filesystem": {"denyWrite": ["./.env"]}}, projects=2)
    text = str(verdict)
    assert not verdict.ok
    assert "`echo 'cat .env' | bash` printed .env's secret" in text
    assert "denyWrite makes a file read-only, it does not hide it" in text


def test_an_absolute_path_with_one_slash_is_explained() -> None:
    """'/x' hangs off the settings file's root (here the working directory); '//x' is absolute."""
    needs_sandbox()
    verdict = check_mask_env(lambda project: {"filesystem": {"denyRead": [str(project / ".env")]}}, projects=1)
    text = str(verdict)
    assert not verdict.ok and "LEAKED" in text
    assert "a path starting with a single '/' is read relative to the settings file's root" in text
    assert "an absolute path starts with '//'" in text


def test_a_skipped_deny_write_glob_is_a_warning_not_a_refusal() -> None:
    needs_sandbox()
    verdict = check_mask_env(lambda project: {"filesystem": {"denyWrite": [".env"]}}, projects=1)
    text = str(verdict)
    assert not verdict.ok and "do not load as a sandbox block" not in text
    assert "your block loads only with a warning" in text and "this pattern is skipped (.env)" in text
    assert "denyWrite only makes a file read-only" in text
    assert "LEAKED" in text  # the check still ran the commands, with the skipped pattern left out


def test_enabled_false_lets_writing_commands_read_it() -> None:
    needs_sandbox()
    verdict = check_mask_env(lambda project: {"enabled": False, "filesystem": {"denyRead": [".env"]}}, projects=2)
    text = str(verdict)
    assert not verdict.ok and "enabled: false" in text
    assert "`cat .env` printed" not in text  # a read-only command stays in the read-only sandbox, masked


def test_a_block_that_does_not_load_is_named() -> None:
    needs_sandbox()
    verdict = check_mask_env(lambda project: {"enabled": "yes", "filesystem": {"denyRead": [".env"]}})
    assert not verdict.ok and "do not load as a sandbox block" in str(verdict) and "sandbox.enabled" in str(verdict)
    # a key in the wrong place is ignored with a warning (the block loads): said as such
    verdict = check_mask_env(lambda project: {"denyRead": [".env"]})
    text = str(verdict)
    assert not verdict.ok and "do not load as a sandbox block" not in text
    assert "your block loads only with a warning" in text and "sandbox.denyRead" in text
    verdict = check_mask_env(lambda project: [".env"])
    assert "returned list, not a dict or SandboxSettings" in str(verdict)


def test_the_check_says_when_the_sandbox_cannot_start(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NBTOOLSCHED_BWRAP", "/nonexistent/bwrap")
    verdict = check_mask_env(reference_mask_env)
    assert not verdict.ok and "the OS sandbox cannot start here" in str(verdict)
    assert "not written yet" in str(check_mask_env(unwritten))


def test_reference_masks_exactly_the_env_files_in_the_library() -> None:
    """The reference block, merged by Permissions and wrapped by sandbox.wrap, lays /dev/null
    over every .env of the project and over nothing else."""
    needs_sandbox()
    rng = random.Random(3)
    for number in range(1, 5):
        project = sandbox.random_project(rng, number)
        settings = nts.Permissions(cwd=project.root, sandbox=reference_mask_env(project.root)).sandbox
        policy = settings.policy("write", writable=(str(project.root),), tmp_dir=None)
        with wrap(policy, "true", str(project.root), dict(os.environ), availability()) as wrapped:
            lines = bwrap_lines(wrapped.argv, project.root)
        masked = sorted(line.split()[-1] for line in lines if line.strip().startswith("--ro-bind /dev/null"))
        assert masked == sorted(f"./{rel}" for rel in project.secrets), lines
        assert "  --bind . ." in lines and "  --ro-bind / /" in lines and "  --unshare-net" in lines


def test_word_check_sees_only_the_plain_spelling() -> None:
    assert word_check("cat .env") and word_check("head -n1 ./.env") and word_check("FOO=1 grep x .env")
    for spelling in ["echo 'cat .env' | bash", "P=cat; $P .env", "printf 'cat .%s\\n' env > s.sh; bash s.sh",
                     "python3 -c \"open('.env')\""]:
        assert not word_check(spelling), spelling


def test_mount_layers_shows_the_last_mount_over_each_path() -> None:
    lines = ["bwrap", "  --ro-bind / /", "  --bind . .", "  --ro-bind ./.claude ./.claude",
             "  --ro-bind /dev/null ./.env", "  --tmpfs ./secrets", "  --remount-ro ./secrets", "  --chdir ."]
    picture = sandbox.mount_layers(lines, ["/etc", ".", ".claude", ".env", "secrets"], "mounts")
    svg = picture._repr_mimebundle_()["image/svg+xml"]
    assert "mounts" in svg and "the command sees" in svg
    for label in ("read-only", "writable", "again", "/dev/null", "empty tmpfs,"):
        assert label in svg, label


def test_bwrap_lines_names_what_varies(tmp_path: Path) -> None:
    argv = ["/usr/bin/bwrap", "--ro-bind", "/", "/", "--bind", str(tmp_path), str(tmp_path),
            "--bind", str(tmp_path / "x"), str(tmp_path / "x"), "--seccomp", "7",
            "--", "/bin/bash", "-c", "script", "nbtoolsched-sandbox", "cat .env", "5"]
    assert bwrap_lines(argv, tmp_path) == [
        "bwrap", "  --ro-bind / /", "  --bind . .", "  --bind ./x ./x", "  --seccomp <descriptor of the filter>",
        "  -- /bin/bash -c <the wrapper script> nbtoolsched-sandbox 'cat .env' <report descriptor>"]
