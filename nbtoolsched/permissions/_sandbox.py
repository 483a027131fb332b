"""Claude Code's ``sandbox`` block read from a settings file, and what the rules feed the sandbox.

As Claude Code's docs describe it: ``Edit(...)`` allow rules add writable paths,
``Edit(...)`` deny rules read-only ones, ``Read(...)`` deny rules masked ones, and
``WebFetch(domain:...)`` allow and deny rules the proxy's domain lists; paths from the
``sandbox.filesystem`` settings and from the rules are merged. Path prefixes follow the
rules': ``//x`` absolute, ``~/x`` the home folder, ``/x`` relative to the settings file's
folder, ``./x`` or a bare name relative to the working directory. On Linux, as in Claude
Code, write lists take literal paths (a trailing ``/**`` is dropped; other globs are
skipped with a warning); read lists take globs, expanded when a command is wrapped.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from typing import Any, Iterable

from ..sandbox._policy import NetworkPolicy, PathSet
from ..sandbox._settings import SandboxSettings
from ._errors import PermissionConfigError
from ..shell import is_inside
from ._path_patterns import compile_path_pattern, pattern_may_match_within
from ._problems import LoadProblem, SettingsWarning
from ._rules import PermissionRule

__all__ = ["RulePaths", "read_sandbox_block", "settings_from_python", "with_rules"]

_GLOB = set("*?[")
_BOOLEANS = {
    "enabled": "enabled", "autoAllowBashIfSandboxed": "auto_allow", "allowUnsandboxedCommands": "allow_unsandboxed",
    "failIfUnavailable": "fail_if_unavailable",
}
_KNOWN = {*_BOOLEANS, "excludedCommands", "filesystem", "network", "credentials", "bwrapPath", "seccomp",
          "passEnv", "socatPath", "ripgrep", "enabledPlatforms", "ignoreViolations", "allowNestedUserNamespaces",
          "enableWeakerNestedSandbox", "enableWeakerNetworkIsolation", "allowAppleEvents", "mandatoryDenySearchDepth"}
_IGNORED = {  # keys Claude Code knows that change nothing here, and why
    "enableWeakerNestedSandbox": "the sandbox here always mounts its own /proc; a weaker one is not offered",
    "enableWeakerNetworkIsolation": "the network here is a private namespace with a proxy; it is not weakened",
    "allowAppleEvents": "macOS only", "ignoreViolations": "violations are not reported on Linux",
    "ripgrep": "patterns are expanded in Python", "socatPath": "socat is found on PATH",
    "enabledPlatforms": "the sandbox runs wherever bubblewrap starts", "allowNestedUserNamespaces": "not needed here",
    "mandatoryDenySearchDepth": "protected places are looked for 3 folders deep",
}


@dataclass(frozen=True, slots=True)
class RulePaths:
    """A path pattern of a rule or of the sandbox settings, as a PathSet the sandbox expands."""

    pattern: str
    settings_root: str
    cwd: str
    home: str
    working_dirs: tuple[str, ...]
    origin: str = ""

    @property
    def text(self) -> str:
        return f"{self.pattern} ({self.origin})" if self.origin else self.pattern

    @property
    def literal(self) -> str | None:
        if _GLOB & set(self.pattern) or _floats(self.pattern):
            return None
        root = compile_path_pattern(self.pattern, self.settings_root, self.cwd, self.home).root
        return os.path.normpath(os.path.join(root, _anchored_part(self.pattern)))

    @property
    def partial(self) -> bool:
        """A pattern over the whole disk (``//**/.env``) is searched only where commands
        work (search_roots): it may match files elsewhere that no mask covers."""
        return _fixed_prefix(compile_path_pattern(self.pattern, self.settings_root, self.cwd, self.home).root,
                             self.pattern) == "/"

    def search_roots(self) -> list[str]:
        if self.partial:
            return [d for d in self.working_dirs if self.may_match_within(d)]
        root = compile_path_pattern(self.pattern, self.settings_root, self.cwd, self.home).root
        return [_fixed_prefix(root, self.pattern)]

    def matches(self, path: str) -> bool:
        return compile_path_pattern(self.pattern, self.settings_root, self.cwd, self.home).matches(path)

    def may_match_within(self, folder: str) -> bool:
        return pattern_may_match_within(self.pattern, self.settings_root, self.cwd, self.home, folder)


def _floats(pattern: str) -> bool:
    """A bare name with no slash inside matches at any depth (gitignore)."""
    return not (pattern.startswith(("/", "~", "./")) or pattern == ".") and "/" not in pattern.rstrip("/")


def _anchored_part(pattern: str) -> str:
    if pattern.startswith("//"):
        return pattern[2:]
    if pattern == "~" or pattern.startswith("~/"):
        return pattern[2:]
    if pattern.startswith("/"):
        return pattern[1:]
    if pattern.startswith("./"):
        return pattern[2:]
    return "" if pattern == "." else pattern


def _fixed_prefix(root: str, pattern: str) -> str:
    """The folder a pattern's matches all lie under: its root joined with the leading
    segments that hold no wildcard."""
    rel = _anchored_part(pattern)
    if _floats(pattern):
        return root  # anywhere under the root
    parts: list[str] = []
    for part in rel.split("/")[:-1]:
        if _GLOB & set(part):
            break
        parts.append(part)
    return os.path.normpath(os.path.join(root, *parts)) if parts else os.path.normpath(root)


def read_sandbox_block(data: Any, *, origin: str, root: str, cwd: str, home: str, working_dirs: Iterable[str],
                       problems: list[LoadProblem]) -> SandboxSettings:
    """One settings file's ``sandbox`` object; a shape Claude Code would refuse refuses the file."""
    if not isinstance(data, dict):
        raise PermissionConfigError("'sandbox' must be an object", source=origin)
    dirs = tuple(working_dirs)
    values: dict[str, Any] = {"sources": (origin,)}
    for key, field_name in _BOOLEANS.items():
        if key in data:
            if not isinstance(data[key], bool):
                raise PermissionConfigError(f"'sandbox.{key}' must be true or false", source=origin, item=repr(data[key]))
            values[field_name] = data[key]
    for key in data:
        if key not in _KNOWN:
            problems.append(LoadProblem(SettingsWarning, "unknown_sandbox_key", "a sandbox setting this scheduler does not know; ignored",
                                        origin, f"sandbox.{key}"))
        elif key in _IGNORED:
            problems.append(LoadProblem(SettingsWarning, "sandbox_key_ignored", f"ignored here: {_IGNORED[key]}", origin, f"sandbox.{key}"))
    values["excluded_commands"] = tuple(_strings(data, "excludedCommands", origin))
    if "bwrapPath" in data:
        if not isinstance(data["bwrapPath"], str):
            raise PermissionConfigError("'sandbox.bwrapPath' must be a path", source=origin)
        values["bwrap_path"] = os.path.normpath(os.path.join(root, os.path.expanduser(data["bwrapPath"])))
    if "seccomp" in data:
        if not isinstance(data["seccomp"], bool):
            raise PermissionConfigError("'sandbox.seccomp' must be true or false", source=origin)
        values["seccomp"] = data["seccomp"]
    values["pass_env"] = frozenset(_strings(data, "passEnv", origin))
    fs = _object(data, "filesystem", origin)

    def paths(key: str) -> tuple[PathSet, ...]:
        return tuple(RulePaths(p, root, cwd, home, dirs, f"sandbox.filesystem.{key} in {origin}")
                     for p in _strings(fs, key, origin, prefix="filesystem."))

    values["deny_read"] = paths("denyRead")
    values["allow_read"] = paths("allowRead")
    values["allow_write"] = _write_paths(paths("allowWrite"), problems, origin)
    values["deny_write"] = _write_paths(paths("denyWrite"), problems, origin)
    for key in fs:
        if key not in ("allowWrite", "denyWrite", "denyRead", "allowRead"):
            problems.append(LoadProblem(SettingsWarning, "unknown_sandbox_key", "not a filesystem list this scheduler reads; ignored",
                                        origin, f"sandbox.filesystem.{key}"))
    net = _object(data, "network", origin)
    for key in ("httpProxyPort", "socksProxyPort"):
        if key in net:
            problems.append(LoadProblem(SettingsWarning, "sandbox_key_ignored",
                                        "a proxy of your own is not used: the sandbox starts its own filtering proxy", origin,
                                        f"sandbox.network.{key}"))
    for key in ("allowAllUnixSockets", "allowLocalBinding"):
        if key in net and not isinstance(net[key], bool):
            raise PermissionConfigError(f"'sandbox.network.{key}' must be true or false", source=origin)
    values["network"] = NetworkPolicy(
        tuple(_strings(net, "allowedDomains", origin, prefix="network.")),
        tuple(_strings(net, "deniedDomains", origin, prefix="network.")),
        tuple(_strings(net, "allowUnixSockets", origin, prefix="network.")),
        bool(net.get("allowAllUnixSockets", False)),
        bool(net.get("allowLocalBinding", False)),
    )
    creds = _object(data, "credentials", origin)
    files, env_deny = [], []
    for entry in _entries(creds, "files", origin):
        path, mode = entry.get("path"), entry.get("mode")
        if not isinstance(path, str) or not path:
            raise PermissionConfigError("a sandbox.credentials.files entry needs a path", source=origin, item=repr(entry))
        if mode == "mask":
            problems.append(LoadProblem(SettingsWarning, "sandbox_credential_mask",
                                        "mode 'mask' needs a TLS-terminating proxy, which this sandbox has not: the file is denied instead",
                                        origin, path))
        elif mode != "deny":
            raise PermissionConfigError("a sandbox.credentials.files mode must be 'deny' (or 'mask')", source=origin, item=repr(entry))
        files.append(RulePaths(path, root, cwd, home, dirs, f"sandbox.credentials.files in {origin}"))
    for entry in _entries(creds, "envVars", origin):
        name, mode = entry.get("name"), entry.get("mode")
        if not isinstance(name, str) or not name:
            raise PermissionConfigError("a sandbox.credentials.envVars entry needs a name", source=origin, item=repr(entry))
        if mode not in ("deny", "mask"):
            raise PermissionConfigError("a sandbox.credentials.envVars mode must be 'deny' (or 'mask')", source=origin, item=repr(entry))
        if mode == "mask":
            problems.append(LoadProblem(SettingsWarning, "sandbox_credential_mask",
                                        "mode 'mask' needs a TLS-terminating proxy, which this sandbox has not: the variable is removed instead",
                                        origin, name))
        env_deny.append(name)
    values["deny_read"] = values["deny_read"] + tuple(files)
    base = SandboxSettings()
    values["env_deny"] = base.env_deny | frozenset(env_deny)
    made = replace(base, **values)
    try:
        made.check()
    except Exception as err:
        raise PermissionConfigError(str(err), source=origin) from None
    return made


def settings_from_python(data: SandboxSettings | dict[str, Any] | None, *, cwd: str, home: str,
                         working_dirs: Iterable[str]) -> SandboxSettings:
    """The ``sandbox=`` argument of Permissions: settings, or a dict in the settings-file shape."""
    if data is None:
        return SandboxSettings()
    if isinstance(data, SandboxSettings):
        return data
    problems: list[LoadProblem] = []
    made = read_sandbox_block(data, origin="python", root=cwd, cwd=cwd, home=home, working_dirs=working_dirs, problems=problems)
    if problems:
        raise PermissionConfigError("; ".join(p.message + f" ({p.item})" for p in problems), source="python")
    return made


def with_rules(settings: SandboxSettings, rules: Iterable[PermissionRule], *, cwd: str, home: str,
               working_dirs: Iterable[str]) -> SandboxSettings:
    """The settings plus what the permission rules feed the sandbox (see the module doc)."""
    dirs = tuple(working_dirs)
    deny_read: list[PathSet] = []
    allow_write: list[PathSet] = []
    deny_write: list[PathSet] = []
    allowed: list[str] = []
    denied: list[str] = []
    for rule in rules:
        content = rule.value.content
        if content is None:
            continue
        tool = rule.value.tool
        origin = f"the rule {rule.text} ({rule.origin or rule.source})"
        if tool == "Read" and rule.behavior == "deny":
            deny_read.append(RulePaths(content, rule.root or cwd, cwd, home, dirs, origin))
        elif tool == "Edit" and rule.behavior in ("allow", "deny"):
            paths = RulePaths(_literal_write(content), rule.root or cwd, cwd, home, dirs, origin)
            if paths.literal is not None:
                (allow_write if rule.behavior == "allow" else deny_write).append(paths)
        elif tool == "WebFetch" and content.startswith("domain:") and rule.behavior in ("allow", "deny"):
            (allowed if rule.behavior == "allow" else denied).append(content[7:])
    if not (deny_read or allow_write or deny_write or allowed or denied):
        return settings
    net = settings.network
    return replace(
        settings,
        deny_read=settings.deny_read + tuple(deny_read),
        allow_write=settings.allow_write + tuple(p for p in allow_write if not any(is_inside(p.literal or "", d) for d in dirs)),
        deny_write=settings.deny_write + tuple(deny_write),
        network=replace(net, allowed_domains=net.allowed_domains + tuple(allowed), denied_domains=net.denied_domains + tuple(denied)),
    )


def _literal_write(pattern: str) -> str:
    while pattern.endswith("/**"):
        pattern = pattern[:-3]
    return pattern.rstrip("/") or pattern


def _write_paths(items: tuple[PathSet, ...], problems: list[LoadProblem], origin: str) -> tuple[PathSet, ...]:
    kept: list[PathSet] = []
    for item in items:
        assert isinstance(item, RulePaths)
        literal = replace(item, pattern=_literal_write(item.pattern))
        if literal.literal is None:
            problems.append(LoadProblem(SettingsWarning, "sandbox_glob_skipped",
                                        "write lists take literal paths on Linux (as in Claude Code); this pattern is skipped",
                                        origin, item.pattern))
            continue
        kept.append(literal)
    return tuple(kept)


def _object(data: dict[str, Any], key: str, origin: str) -> dict[str, Any]:
    value = data.get(key, {})
    if not isinstance(value, dict):
        raise PermissionConfigError(f"'sandbox.{key}' must be an object", source=origin)
    return value


def _strings(data: dict[str, Any], key: str, origin: str, prefix: str = "") -> list[str]:
    value = data.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise PermissionConfigError(f"'sandbox.{prefix}{key}' must be a list of strings", source=origin)
    return list(value)


def _entries(data: dict[str, Any], key: str, origin: str) -> list[dict[str, Any]]:
    value = data.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise PermissionConfigError(f"'sandbox.credentials.{key}' must be a list of objects", source=origin)
    return list(value)
