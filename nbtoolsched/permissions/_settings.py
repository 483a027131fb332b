"""Claude Code's settings.json files: where they live, which wins, what they hold.

Files, lowest precedence first: user (``~/.claude/settings.json``, or
``$CLAUDE_CONFIG_DIR``, or ``user_dir``), project (``<cwd>/.claude/settings.json``),
project-local (``<cwd>/.claude/settings.local.json``). Rule lists, additional
directories and hooks from every file add up (a deny anywhere is a deny: precedence
comes from behavior, not from the file); a scalar like ``defaultMode`` is taken from
the most specific file that sets it. Every problem names its file.

As in Claude Code, loading checks the shape of the file, not the world: a hook whose
program is not installed, an event this scheduler never fires, a rule Claude Code
would drop, all load, each as a warning (``LoadedSettings.warnings``, issued once as a
``SettingsWarning``). What breaks the schema (a rule list that is not a list, a
``defaultMode`` that is no mode, a hook without a command) still refuses the file:
Claude Code would skip the whole file, its deny rules included, which fails open.

One file is also written: "always allow" with ``destination="localSettings"`` adds its
rules to the project-local file (``save_local_rules``), as Claude Code's "Yes, and don't
ask again" does, and never overwrites a file it cannot read as settings.
"""

from __future__ import annotations

import functools
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from .._files import atomic_write
from ._approvals import saved_rules_text
from ._errors import PermissionConfigError
from ._hooks import Hooks
from ._modes import Mode, check_mode
from ._problems import LoadProblem, issue_warnings
from ..sandbox._settings import SandboxSettings
from ..shell import lexical_paths
from ._rules import PermissionRule, rules_from_settings
from ._sandbox import read_sandbox_block

__all__ = ["SettingsFile", "LoadedSettings", "LocalSave", "settings_files", "local_settings_file", "save_local_rules",
           "load_settings", "apply_settings", "read_settings_json", "default_user_dir"]

_BEHAVIORS = ("allow", "deny", "ask")


@dataclass(frozen=True)
class SettingsFile:
    source: str  # userSettings | projectSettings | localSettings
    path: Path
    root: Path  # what a leading "/" in a path rule from this file is relative to


@dataclass
class LoadedSettings:
    rules: list[PermissionRule] = field(default_factory=list)
    default_mode: Mode | None = None
    default_mode_source: str | None = None
    additional_dirs: list[str] = field(default_factory=list)
    hooks: Hooks = field(default_factory=Hooks)
    sandbox: SandboxSettings = field(default_factory=SandboxSettings)  # the merged ``sandbox`` blocks
    files: list[Path] = field(default_factory=list)  # the files that existed and were read
    warnings: list[LoadProblem] = field(default_factory=list)  # what loads with a caveat, in file order


def default_user_dir() -> Path:
    configured = os.environ.get("CLAUDE_CONFIG_DIR")
    return Path(configured).expanduser() if configured else Path.home() / ".claude"


def settings_files(cwd: str | os.PathLike[str], user_dir: str | os.PathLike[str] | None = None) -> list[SettingsFile]:
    """The three files in precedence order, lowest first (they need not exist)."""
    project = Path(cwd).resolve()
    user = Path(user_dir).expanduser() if user_dir is not None else default_user_dir()
    return [
        SettingsFile("userSettings", user / "settings.json", user.parent),
        SettingsFile("projectSettings", project / ".claude" / "settings.json", project),
        local_settings_file(project),
    ]


def local_settings_file(cwd: str | os.PathLike[str]) -> SettingsFile:
    """The project-local file (``<project>/.claude/settings.local.json``), where Claude Code's
    "Yes, and don't ask again" keeps its rules."""
    project = Path(cwd).resolve()
    return SettingsFile("localSettings", project / ".claude" / "settings.local.json", project)


@dataclass(frozen=True)
class LocalSave:
    """What saving allow rules into the project-local file did."""

    rules: tuple[str, ...]  # the rules asked to be saved
    shown: str  # the file, as the project names it (.claude/settings.local.json)
    added: tuple[str, ...] = ()  # written now
    already: tuple[str, ...] = ()  # the file held them before
    error: str | None = None  # why nothing was written (the file was left as it was)

    @property
    def text(self) -> str:
        """For the person: ``saved Bash(x) to .claude/settings.local.json``, or why not."""
        return saved_rules_text(self.rules, "localSettings", error=self.error, already=self.already)


def save_local_rules(cwd: str | os.PathLike[str], rules: Iterable[str]) -> LocalSave:
    """Add allow rules to the project's .claude/settings.local.json, as Claude Code's
    "don't ask again" does: merged into what the file holds (every other key and rule
    kept, a rule already there not written twice), ``.claude/`` made when missing, written
    atomically (a temporary file in the same folder, then ``os.replace``). A file that is
    not valid JSON, holds no object, or whose ``permissions.allow`` is not a list is left
    untouched, and so is a link (where it leads is not the project's file): ``error`` says
    why."""
    spec = local_settings_file(cwd)
    path, wanted = spec.path, tuple(dict.fromkeys(rules))
    shown = path.relative_to(spec.root).as_posix()
    failed = functools.partial(LocalSave, wanted, shown)
    data: dict[str, Any] = {}
    if path.is_symlink():
        return failed(error="it is a symbolic link, so it was left as it is")
    if path.exists():
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as err:
            return failed(error=f"its JSON is invalid at line {err.lineno}")
        except (OSError, UnicodeDecodeError) as err:
            return failed(error=f"it cannot be read: {err}")
        if not isinstance(raw, dict):
            return failed(error="it does not hold a JSON object")
        data = raw
    perms = data.setdefault("permissions", {})
    if not isinstance(perms, dict):
        return failed(error="its permissions is not an object")
    allow = perms.setdefault("allow", [])
    if not isinstance(allow, list):
        return failed(error="its permissions.allow is not a list")
    already = tuple(r for r in wanted if r in allow)
    added = tuple(r for r in wanted if r not in allow)
    if not added:
        return LocalSave(wanted, shown, (), already)
    allow.extend(added)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(str(path), (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))
    except OSError as err:
        return failed(error=f"it cannot be written: {err.strerror or err}")
    return LocalSave(wanted, shown, added, already)


def load_settings(
    cwd: str | os.PathLike[str],
    user_dir: str | os.PathLike[str] | None = None,
    *,
    check_hooks: bool = True,
    strict_hooks: bool = False,
    warn: bool = True,
) -> LoadedSettings:
    """Read the settings files for ``cwd``.

    ``check_hooks`` looks for each command hook's program (a warning when missing);
    ``strict_hooks`` makes every hook problem block its call at run time (and refuses
    hook settings that could never act); ``warn=False`` only collects the warnings."""
    found = [(spec, read_settings_json(spec.path)) for spec in settings_files(cwd, user_dir) if spec.path.is_file()]
    return apply_settings(found, cwd, check_hooks=check_hooks, strict_hooks=strict_hooks, warn=warn)


def apply_settings(
    files: Iterable[tuple[SettingsFile, dict[str, Any]]],
    cwd: str | os.PathLike[str],
    *,
    check_hooks: bool = True,
    strict_hooks: bool = False,
    warn: bool = True,
) -> LoadedSettings:
    """Settings already read, lowest precedence first, for a project at ``cwd``.

    A transcript replay reads the files once and ships their contents to every worker
    (a cluster node need not have them); each session applies them to its own cwd."""
    project = lexical_paths.realpath(os.fspath(cwd))  # resolved, but as written in a replay
    loaded = LoadedSettings(hooks=Hooks(project_dir=project, strict=strict_hooks))
    blocks: list[tuple[SettingsFile, Any]] = []
    for spec, data in files:
        _apply(loaded, spec, data, check_hooks)
        loaded.files.append(spec.path)
        if "sandbox" in data:
            blocks.append((spec, data["sandbox"]))
    home = os.path.expanduser("~")
    for spec, block in blocks:  # after every file: the working directories are all known
        loaded.sandbox = loaded.sandbox.merged(read_sandbox_block(
            block, origin=str(spec.path), root=str(spec.root), cwd=project, home=home,
            working_dirs=[project, *loaded.additional_dirs], problems=loaded.warnings))
    if warn:
        issue_warnings(loaded.warnings)
    return loaded


def read_settings_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise PermissionConfigError(f"not valid JSON ({err.msg} at line {err.lineno} column {err.colno})", source=str(path)) from None
    except (OSError, UnicodeDecodeError) as err:
        raise PermissionConfigError(f"cannot be read ({err})", source=str(path)) from None
    if not isinstance(data, dict):
        raise PermissionConfigError("a settings file must hold a JSON object", source=str(path))
    return data


def _apply(loaded: LoadedSettings, spec: SettingsFile, data: dict[str, Any], check_hooks: bool) -> None:
    where = str(spec.path)
    perms = data.get("permissions", {})
    if not isinstance(perms, dict):
        raise PermissionConfigError("'permissions' must be an object", source=where)
    for behavior in _BEHAVIORS:
        loaded.rules.extend(
            rules_from_settings(perms.get(behavior), behavior, source=spec.source, root=str(spec.root), origin=where,  # type: ignore[arg-type]
                                problems=loaded.warnings)
        )
    if "defaultMode" in perms:
        loaded.default_mode = check_mode(perms["defaultMode"], source=where)
        loaded.default_mode_source = where
    dirs = perms.get("additionalDirectories", [])
    if not isinstance(dirs, list) or not all(isinstance(d, str) for d in dirs):
        raise PermissionConfigError("'additionalDirectories' must be a list of paths", source=where)
    for folder in dirs:
        resolved = os.path.normpath(os.path.join(spec.root, os.path.expanduser(folder)))
        if resolved not in loaded.additional_dirs:
            loaded.additional_dirs.append(resolved)
    if "hooks" in data:
        loaded.warnings.extend(loaded.hooks.extend_from_config(data["hooks"], source=where, check=check_hooks))
