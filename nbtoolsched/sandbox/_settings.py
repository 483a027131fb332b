"""Claude Code's ``sandbox`` settings, resolved, and where one command runs because of them.

``SandboxSettings`` holds the block as the three settings files merge it (booleans from
the most specific file, lists added up) together with what the permission rules add
(built by ``permissions/_sandbox.py``). ``placement()`` says, for one command, whether
it runs in the read-only sandbox, the writing sandbox, or outside, and what the result
must say about it; ``policy()`` builds the policy for the sandbox it runs in.

Our defaults differ from Claude Code's, whose sandbox is opt-in: where bubblewrap can
start, every Bash command runs in it unless the settings say ``enabled: false`` (or
``NBTOOLSCHED_SANDBOX=off``); a command the analysis judged read-only runs in the
read-only sandbox even then (unless the variable says off). Prompts stay as without a
sandbox unless ``autoAllowBashIfSandboxed`` is set, or the settings enable the sandbox
explicitly, where Claude Code's default for it (true) applies.
"""

from __future__ import annotations

import asyncio
import os
import shutil
from dataclasses import dataclass, field, replace
from typing import Literal

from .._errors import ConfigurationError
from ._policy import MODEL_SECRETS, NetworkPolicy, PathSet, SandboxKind, SandboxPolicy
from ..shell import LineFacts, lexical_paths
from ._probe import Availability, availability, known_availability, switch, warn_once

__all__ = ["SandboxSettings", "Placement", "FIX_HINT"]

FIX_HINT = "retry with dangerouslyDisableSandbox: true, which asks the user"
DISABLED_ON_REQUEST = "dangerouslyDisableSandbox asks to run it outside the sandbox"


@dataclass(frozen=True, slots=True)
class Placement:
    """Where one command runs, and what its result must say about it."""

    sandbox: SandboxKind | None  # None: outside any sandbox
    why: str = ""  # why it runs where it does (for explain() and %toolsched)
    note: str | None = None  # said on the result (running unsandboxed because it cannot start...)
    error: str | None = None  # the command must not run at all (failIfUnavailable)

    @property
    def sandboxed(self) -> bool:
        return self.sandbox is not None

    @property
    def unsandboxed_on_request(self) -> bool:
        """Outside the sandbox because the input asked (dangerouslyDisableSandbox): always asked about."""
        return self.sandbox is None and self.why == DISABLED_ON_REQUEST


@dataclass(frozen=True)
class SandboxSettings:
    """Claude Code's ``sandbox`` block (merged) plus what the rules feed it."""

    enabled: bool | None = None  # None: the settings do not say (ours: on where it can start)
    auto_allow: bool | None = None  # autoAllowBashIfSandboxed; None: Claude Code's default when enabled
    excluded_commands: tuple[str, ...] = ()
    allow_unsandboxed: bool = True  # allowUnsandboxedCommands: may dangerouslyDisableSandbox be honoured?
    fail_if_unavailable: bool = False
    allow_write: tuple[PathSet, ...] = ()
    deny_write: tuple[PathSet, ...] = ()
    deny_read: tuple[PathSet, ...] = ()
    allow_read: tuple[PathSet, ...] = ()
    network: NetworkPolicy = field(default_factory=NetworkPolicy)
    env_deny: frozenset[str] = MODEL_SECRETS
    pass_env: frozenset[str] = frozenset()
    seccomp: bool = True
    bwrap_path: str | None = None
    sources: tuple[str, ...] = ()  # the files the block came from

    def excludes(self, line: LineFacts, writable: tuple[str, ...] = ()) -> bool:
        """Does ``excludedCommands`` take this line outside the sandbox? Only when every
        program it runs is one an entry names (an argv prefix: ``docker``, ``docker
        compose``; a trailing ``:*`` or `` *`` is the same), by a bare name that PATH finds
        outside ``writable`` (``./docker``, or a docker the line could have written, is not
        docker): one excluded program must not take the rest of the line out with it."""
        if not self.excluded_commands:
            return False
        prefixes = [p for p in (_prefix_words(entry) for entry in self.excluded_commands) if p]
        try:
            runs = line.runs
        except Exception:  # noqa: BLE001 - cannot tell: not excluded (it stays sandboxed)
            return False
        if runs.problems or not runs.invocations:
            return False
        for invocation in runs.invocations:
            words = invocation.words
            if not words or words[0] is None or "/" in words[0] or any(w is None for w in words):
                return False
            if not any(tuple(words[: len(p)]) == p for p in prefixes):
                return False
            if lexical_paths.active:  # a replay: PATH is the session machine's, so the name is as written
                continue
            found = shutil.which(words[0])
            if found is None or any(_inside(os.path.realpath(found), os.path.realpath(w)) for w in writable):
                return False
        return True

    @property
    def auto_allows(self) -> bool:
        """Does a sandboxed command run without a prompt (explicit ask and deny rules aside)?"""
        return self.auto_allow if self.auto_allow is not None else self.enabled is True

    def available(self) -> Availability:
        """Whether the sandbox can start (blocking the first time: the probe runs bubblewrap)."""
        if self.bwrap_path:
            os.environ.setdefault("NBTOOLSCHED_BWRAP", self.bwrap_path)
        return availability()

    async def probe(self) -> Availability:
        """``available()`` without blocking the event loop (the probe runs in a thread, once)."""
        if self.bwrap_path:
            os.environ.setdefault("NBTOOLSCHED_BWRAP", self.bwrap_path)
        known = known_availability()
        return known if known is not None else await asyncio.to_thread(availability)

    def placement(self, *, read_only: bool, excluded: bool, disable_requested: bool) -> Placement:
        """Where a command runs (see the module doc). ``read_only``: the analysis judged it
        read-only; ``excluded``: it matches ``excludedCommands``; ``disable_requested``: its
        input says ``dangerouslyDisableSandbox`` (honoured only when allowed, and asked for).
        Judging paths as written (``lexical_paths``, a replay), this machine is not where the
        command ran: NBTOOLSCHED_SANDBOX is not read, and the sandbox is taken to start."""
        mode = "on" if lexical_paths.active else switch()
        if mode == "off":
            return Placement(None, "NBTOOLSCHED_SANDBOX=off")
        wanted: Literal["read-only", "write"] | None
        if disable_requested and self.allow_unsandboxed:
            return Placement(None, DISABLED_ON_REQUEST)
        if excluded:
            return Placement(None, "sandbox.excludedCommands names it")
        if read_only:
            wanted = "read-only"
        elif self.enabled is False:
            return Placement(None, "sandbox.enabled is false")
        else:
            wanted = "write"
        found = Availability(True) if lexical_paths.active else self.available()
        ignored = ("dangerouslyDisableSandbox was ignored: sandbox.allowUnsandboxedCommands is false"
                   if disable_requested and not self.allow_unsandboxed else None)
        if found.ok:
            return Placement(wanted, f"the {wanted} sandbox", note=ignored)
        problem = f"the OS sandbox cannot start here: {found.reason}" + (f" (fix: {found.fix})" if found.fix else "")
        if mode == "required" or self.fail_if_unavailable:
            setting = "NBTOOLSCHED_SANDBOX=required" if mode == "required" else "sandbox.failIfUnavailable"
            return Placement(None, problem, error=f"Not run: {problem}; {setting} forbids running it without one.")
        return Placement(None, problem, note=f"ran WITHOUT the OS sandbox: {problem}")

    def warn_if_unavailable(self) -> None:
        """Say once per process (a SandboxWarning) that Bash commands will run unsandboxed here."""
        if switch() == "off":
            return
        found = self.available()
        if not found.ok:
            warn_once(f"nbtoolsched: Bash commands run WITHOUT the OS sandbox: {found.reason}"
                      + (f" (fix: {found.fix})" if found.fix else ""))

    def describe(self) -> str:
        """One line for ``%toolsched``: whether commands run sandboxed here, and how."""
        mode = switch()
        if mode == "off":
            return "sandbox: off (NBTOOLSCHED_SANDBOX=off): Bash commands run without the OS sandbox"
        found = self.available()
        if not found.ok:
            then = "Bash commands are refused" if mode == "required" or self.fail_if_unavailable else "Bash commands run WITHOUT it"
            return f"sandbox: UNAVAILABLE, {then}: {found.reason}" + (f" (fix: {found.fix})" if found.fix else "")
        writing = "writing commands outside it (sandbox.enabled is false)" if self.enabled is False else "writing commands in it"
        net = (f"network through a proxy to {', '.join(self.network.allowed_domains)}" if self.network.needs_proxy
               else "no network")
        prompts = "sandboxed commands run without a prompt" if self.auto_allows else "prompts as without a sandbox"
        return f"sandbox: on ({found.describe()}); read-only commands in it, {writing}; {net}; {prompts}"

    def policy(self, kind: SandboxKind, *, writable: tuple[str, ...], tmp_dir: str | None,
               quarantine_dir: str | None = None) -> SandboxPolicy:
        """The policy of one command in the ``kind`` sandbox; ``writable`` are the working
        directories (the settings' allowWrite paths are added)."""
        folders = list(writable)
        for item in self.allow_write:
            literal = item.literal
            if literal is not None and literal not in folders:
                folders.append(literal)
        network = self.network if self.network.needs_proxy else None
        made = SandboxPolicy(
            "write", tuple(folders), self.deny_write, self.deny_read, self.allow_read, network,
            self.env_deny, self.pass_env, tmp_dir, self.seccomp, quarantine_dir,
        )
        return made if kind == "write" else made.read_only()

    def merged(self, other: "SandboxSettings") -> "SandboxSettings":
        """``other`` over ``self``: its booleans where it says them, lists added up."""
        net = NetworkPolicy(
            self.network.allowed_domains + other.network.allowed_domains,
            self.network.denied_domains + other.network.denied_domains,
            self.network.allow_unix_sockets + other.network.allow_unix_sockets,
            self.network.allow_all_unix_sockets or other.network.allow_all_unix_sockets,
            self.network.allow_local_binding or other.network.allow_local_binding,
        )
        return replace(
            self,
            enabled=other.enabled if other.enabled is not None else self.enabled,
            auto_allow=other.auto_allow if other.auto_allow is not None else self.auto_allow,
            excluded_commands=self.excluded_commands + other.excluded_commands,
            allow_unsandboxed=self.allow_unsandboxed and other.allow_unsandboxed,
            fail_if_unavailable=self.fail_if_unavailable or other.fail_if_unavailable,
            allow_write=self.allow_write + other.allow_write,
            deny_write=self.deny_write + other.deny_write,
            deny_read=self.deny_read + other.deny_read,
            allow_read=self.allow_read + other.allow_read,
            network=net,
            env_deny=self.env_deny | other.env_deny,
            pass_env=self.pass_env | other.pass_env,
            seccomp=self.seccomp and other.seccomp,
            bwrap_path=other.bwrap_path or self.bwrap_path,
            sources=self.sources + other.sources,
        )

    def check(self) -> None:
        """Refuse what can never work, naming the setting."""
        for domain in (*self.network.allowed_domains, *self.network.denied_domains):
            if not domain or any(c.isspace() for c in domain) or "/" in domain:
                raise ConfigurationError(f"sandbox.network: {domain!r} is not a domain pattern (example.com or *.example.com)")


def _prefix_words(entry: str) -> tuple[str, ...]:
    text = entry.strip()
    for tail in (":*", " *", "*"):
        if text.endswith(tail):
            text = text[: -len(tail)].strip()
            break
    return tuple(text.split())


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")
