"""nbtoolsched as a Jupyter AI persona: ``@nbtoolsched`` in a chat talks to ``python -m nbtoolsched acp``.

Jupyter AI v3 hosts agents that speak the Agent Client Protocol as chat personas
(jupyter-ai-acp-client); it finds this one through the ``jupyter_ai.personas`` entry point
in pyproject.toml. The persona starts nbtoolsched's own ACP agent with the Python that runs
the Jupyter server (so the same install, no PATH lookup), in the server's root folder; each
chat gets a session whose folder is the chat file's, with that project's Claude Code
settings (rules, hooks, default mode). Tool calls, the permission prompts (Allow once,
Always allow, Reject) and the file diffs are drawn by Jupyter AI's own chat UI.

The model comes from the server's environment, read when the persona is loaded (a change
needs a server restart, as for every Jupyter AI persona):

- ``NBTOOLSCHED_ACP_MODEL``: the model's name (``--model``); without it, Anthropic's default
  Claude model, with ``ANTHROPIC_API_KEY``.
- ``NBTOOLSCHED_ACP_OPENAI_BASE_URL``: an OpenAI-compatible server (``--openai-base-url``;
  Ollama, vLLM, LM Studio), which needs ``NBTOOLSCHED_ACP_MODEL`` too.
- ``NBTOOLSCHED_ACP_SCRIPT``: a scripted model file (``--script``), for tests and demos.
- ``NBTOOLSCHED_ACP_PERMISSION_MODE`` and ``NBTOOLSCHED_ACP_SESSION_DIR``: the agent's
  ``--permission-mode`` and ``--session-dir``.

A setting the agent could not start with (a script that does not load, a base URL without a
model, an unknown mode) keeps the persona out of the chat with ``PersonaRequirementsUnmet``,
whose message the server logs; a model that cannot start in a session (most often a missing
API key) is explained in the chat when a message arrives.
"""

from __future__ import annotations

import asyncio
import getpass
import hashlib
import os
import sys
import tempfile
from asyncio.subprocess import Process
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from acp.exceptions import RequestError
from jupyter_ai_acp_client.base_acp_persona import BaseAcpPersona  # type: ignore[import-untyped]
from jupyter_ai_persona_manager import PersonaDefaults, PersonaRequirementsUnmet  # type: ignore[import-untyped]

from ..acp._script import ScriptError, load_script
from ..permissions._modes import MODES

__all__ = ["NbtoolschedPersona", "agent_options"]

NAME = "nbtoolsched"  # also the chat's mention: @nbtoolsched
AUTH_REQUIRED = -32000  # the agent's RequestError code for "the model could not be started"
# How the model SDKs say a key is missing or refused (anthropic: "Could not resolve authentication
# method", AuthenticationError; openai: "api_key client option must be set", 401 invalid_api_key).
CREDENTIAL_WORDS = ("authentication", "api_key", "api key", "auth_token", "credentials", "unauthorized")
HOW_TO_PICK = (
    "Pick a model in the environment of the Jupyter server, then restart it:\n\n"
    "- `ANTHROPIC_API_KEY` for Claude (and `NBTOOLSCHED_ACP_MODEL` for another Claude model than the default);\n"
    "- `NBTOOLSCHED_ACP_OPENAI_BASE_URL` and `NBTOOLSCHED_ACP_MODEL` for an OpenAI-compatible server "
    "(Ollama, vLLM, LM Studio; the key, if any, in `OPENAI_API_KEY`);\n"
    "- `NBTOOLSCHED_ACP_SCRIPT` for a scripted model (a JSON file of answers, for demos and tests)."
)
# Two tiles side by side over one wide tile: a parallel batch, then a call that runs alone.
AVATAR_SVG = """<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64">
<rect width="64" height="64" rx="12" fill="#1f5f8b"/>
<rect x="12" y="12" width="17" height="17" rx="3" fill="#ffffff"/>
<rect x="35" y="12" width="17" height="17" rx="3" fill="#ffffff"/>
<rect x="12" y="35" width="40" height="17" rx="3" fill="#f2b233"/>
</svg>
"""


def agent_options(environ: Mapping[str, str]) -> list[str]:
    """The options of ``python -m nbtoolsched acp`` the environment asks for.

    Raises ``PersonaRequirementsUnmet`` naming the variable when the agent would refuse
    them: checked here, where Jupyter AI shows it, rather than by an agent that exits."""
    script = environ.get("NBTOOLSCHED_ACP_SCRIPT", "").strip()
    model = environ.get("NBTOOLSCHED_ACP_MODEL", "").strip()
    base_url = environ.get("NBTOOLSCHED_ACP_OPENAI_BASE_URL", "").strip()
    mode = environ.get("NBTOOLSCHED_ACP_PERMISSION_MODE", "").strip()
    session_dir = environ.get("NBTOOLSCHED_ACP_SESSION_DIR", "").strip()
    options: list[str] = []
    if script:
        if base_url:
            raise PersonaRequirementsUnmet("nbtoolsched: NBTOOLSCHED_ACP_SCRIPT and NBTOOLSCHED_ACP_OPENAI_BASE_URL "
                                           "pick different models; set one of them")
        path = Path(script).expanduser().resolve()
        try:
            load_script(path)  # the whole file is checked now, as the agent would at its start
        except ScriptError as err:
            raise PersonaRequirementsUnmet(f"nbtoolsched: NBTOOLSCHED_ACP_SCRIPT: {err}") from None
        options += ["--script", str(path)]
    if base_url:
        if not model:
            raise PersonaRequirementsUnmet("nbtoolsched: NBTOOLSCHED_ACP_OPENAI_BASE_URL needs NBTOOLSCHED_ACP_MODEL "
                                           "(the server's name for the model)")
        options += ["--openai-base-url", base_url]
    if model and not script:
        options += ["--model", model]
    if mode:
        if mode not in MODES:
            raise PersonaRequirementsUnmet(f"nbtoolsched: NBTOOLSCHED_ACP_PERMISSION_MODE is {mode!r}; "
                                           f"the modes are {', '.join(MODES)}")
        options += ["--permission-mode", mode]
    if session_dir:
        options += ["--session-dir", str(Path(session_dir).expanduser().resolve())]
    return options


def _avatar() -> str:
    """The avatar as a file (Jupyter AI serves a path): written once per user and version
    into the temp folder, since the package ships no image files. "" if it cannot be."""
    digest = hashlib.sha256(AVATAR_SVG.encode()).hexdigest()[:12]
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = "user"
    path = Path(tempfile.gettempdir()) / f"nbtoolsched-avatar-{user}-{digest}.svg"
    if not path.exists():
        try:
            partial = path.with_suffix(f".{os.getpid()}.tmp")
            partial.write_text(AVATAR_SVG, encoding="utf-8")
            os.replace(partial, path)
        except OSError:
            return ""
    return str(path)


OPTIONS = agent_options(os.environ)  # at load: a setting the agent would refuse keeps the persona out


class NbtoolschedPersona(BaseAcpPersona):
    """``@nbtoolsched``: nbtoolsched's agent over ACP, one process for the server, a session per chat."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, executable=[sys.executable, "-m", "nbtoolsched", "acp", *OPTIONS], **kwargs)

    @property
    def defaults(self) -> PersonaDefaults:
        return PersonaDefaults(
            name=NAME,
            description="nbtoolsched's agent: parallel tool calls where safe, Claude Code's permission rules, "
                        "approvals in the chat.",
            avatar_path=_avatar(),
            system_prompt="unused",  # the agent has its own (--system)
        )

    async def _init_agent_subprocess(self, env: dict[str, str] | None = None) -> Process:
        """As the base class starts it, with the server's root folder as the agent's working
        folder (and ``--cwd``, what a relative session folder is taken against)."""
        await self._before_subprocess_future
        root = os.path.abspath(self.parent.root_dir)
        self.log.info("Starting nbtoolsched's ACP agent in %s.", root)
        return await asyncio.create_subprocess_exec(
            *self._executable, "--cwd", root, cwd=root, env=env,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=sys.stderr,
            limit=50 * 1024 * 1024, start_new_session=True,
        )

    async def handle_uncaught_exception(self, exc: Exception) -> None:
        """A model that cannot start or sign in (no API key, most often) says how to pick one;
        other errors as Jupyter AI shows them."""
        if _is_model_setup_error(exc):
            self.send_message(f"nbtoolsched could not use its model: {exc}\n\n{HOW_TO_PICK}")
            return
        await super().handle_uncaught_exception(exc)


def _is_model_setup_error(exc: Exception) -> bool:
    """The agent's "authentication required", or a model error that names missing or refused
    credentials (the agent reports a model's failure at the first prompt with the SDK's words)."""
    if not isinstance(exc, RequestError):
        return False
    words = str(exc).lower()
    return exc.code == AUTH_REQUIRED or any(word in words for word in CREDENTIAL_WORDS)
