"""What one sandboxed command may do: the policy the bubblewrap invocation is built from.

A policy names folders, paths and domains; it holds no tool or rule logic. The
permission layer builds it from the settings and the rules (``Permissions.sandbox_policy``);
this package turns it into mounts, a network bridge and an environment.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

__all__ = ["PathSet", "LiteralPath", "NetworkPolicy", "SandboxPolicy", "SandboxKind", "MODEL_SECRETS"]

SandboxKind = Literal["read-only", "write"]

# The environment variables that hold a model provider's key. The agent process holds
# them to talk to the model; a command it runs has no need of them, so they are removed
# unless the policy passes them on (``SandboxPolicy.pass_env``).
MODEL_SECRETS = frozenset({
    "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN", "OPENAI_API_KEY", "AZURE_OPENAI_API_KEY",
    "GEMINI_API_KEY", "GOOGLE_API_KEY", "OPENROUTER_API_KEY", "MISTRAL_API_KEY", "GROQ_API_KEY", "TOGETHER_API_KEY",
    "DEEPSEEK_API_KEY", "XAI_API_KEY", "FIREWORKS_API_KEY", "COHERE_API_KEY",
})


@runtime_checkable
class PathSet(Protocol):
    """Paths a rule names: a literal path, or a pattern searched for when the command is wrapped."""

    @property
    def text(self) -> str:
        """What the settings or the rule said, for messages."""
        ...

    @property
    def literal(self) -> str | None:
        """The one absolute path it names, when it has no wildcard."""
        ...

    def search_roots(self) -> list[str]:
        """Folders under which every match lies (searched when the command is wrapped)."""
        ...

    def matches(self, path: str) -> bool: ...

    def may_match_within(self, folder: str) -> bool:
        """Could anything under ``folder`` match? (prunes the search)"""
        ...


@dataclass(frozen=True, slots=True)
class LiteralPath:
    """One absolute path."""

    path: str

    @property
    def text(self) -> str:
        return self.path

    @property
    def literal(self) -> str | None:
        return os.path.normpath(self.path)

    def search_roots(self) -> list[str]:
        return [os.path.dirname(os.path.normpath(self.path))]

    def matches(self, path: str) -> bool:
        return os.path.normpath(path) == os.path.normpath(self.path)

    def may_match_within(self, folder: str) -> bool:
        folder = os.path.normpath(folder)
        return os.path.normpath(self.path) == folder or os.path.normpath(self.path).startswith(folder.rstrip("/") + "/")


@dataclass(frozen=True, slots=True)
class NetworkPolicy:
    """Network through a proxy on the host (Claude Code's ``sandbox.network``).

    Nothing else leaves the sandbox: it has its own network namespace with only a
    loopback interface, and the proxy decides per domain. Deny wins over allow; a
    domain on neither list is refused. ``"*.example.com"`` matches the subdomains of
    example.com, not example.com itself."""

    allowed_domains: tuple[str, ...] = ()
    denied_domains: tuple[str, ...] = ()
    allow_unix_sockets: tuple[str, ...] = ()  # Unix sockets a command may connect to (seccomp off for them)
    allow_all_unix_sockets: bool = False
    allow_local_binding: bool = False  # listening on the sandbox's own loopback is always possible

    @property
    def needs_proxy(self) -> bool:
        return bool(self.allowed_domains)


@dataclass(frozen=True, slots=True)
class SandboxPolicy:
    """Everything one command's sandbox is built from.

    ``kind="read-only"``: nothing is writable but a private temp dir that vanishes with
    the command, and there is no network, whatever the rest says. ``kind="write"``: the
    ``writable`` folders and ``tmp_dir`` are writable, except every ``deny_write`` path
    and the places programs run from (``shell._config_places``), which stay read-only.
    Either way ``deny_read`` paths are masked (except what ``allow_read`` gives back),
    the process tree lives in its own PID namespace, and the variables in ``env_deny``
    (minus ``pass_env``) are removed from the environment.
    """

    kind: SandboxKind = "write"
    writable: tuple[str, ...] = ()
    deny_write: tuple[PathSet, ...] = ()
    deny_read: tuple[PathSet, ...] = ()
    allow_read: tuple[PathSet, ...] = ()
    network: NetworkPolicy | None = None  # None: no network at all
    env_deny: frozenset[str] = MODEL_SECRETS
    pass_env: frozenset[str] = frozenset()
    tmp_dir: str | None = None  # a writable sandbox's TMPDIR on the host (kept between its commands)
    seccomp: bool = True  # when the bindings are present: ptrace, io_uring, keyrings, new AF_UNIX sockets
    quarantine_dir: str | None = None  # where what a command made in a protected place is moved (else deleted)

    def read_only(self) -> "SandboxPolicy":
        """The same masks and environment, nothing writable, no network."""
        return SandboxPolicy("read-only", (), self.deny_write, self.deny_read, self.allow_read, None, self.env_deny,
                             self.pass_env, None, self.seccomp, self.quarantine_dir)

    def environment(self, base: dict[str, str]) -> dict[str, str]:
        """``base`` without the variables this policy keeps from the command."""
        drop = self.env_deny - self.pass_env
        return {k: v for k, v in base.items() if k not in drop}
