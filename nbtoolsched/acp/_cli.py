"""``python -m nbtoolsched acp``: the options, the model they pick, and the server started on stdio."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
import tempfile
from pathlib import Path
from typing import Callable

from .._sync import run_sync
from ..models._protocol import Model
from ..permissions._modes import MODES
from ._script import ScriptError, load_script
from ._session import SessionConfig

__all__ = ["main", "parser"]

DEFAULT_SYSTEM = (
    "You are a coding agent working in the user's project at {cwd}, started from their editor. "
    "Look at the code with the tools before changing it, keep each change small, and say what you did."
)


def parser() -> argparse.ArgumentParser:
    made = argparse.ArgumentParser(
        prog="python -m nbtoolsched acp",
        description="Run nbtoolsched's agent as an Agent Client Protocol agent on stdin/stdout, for an editor or "
                    "notebook host (Zed, Jupyter AI, marimo) to start. Each session uses the project's Claude Code "
                    "settings (.claude/settings.json and settings.local.json, and the user's): their rules, hooks, "
                    "sandbox block and default mode. Logs go to stderr.",
    )
    model = made.add_argument_group("the model")
    model.add_argument("--model", help="the model's name (default: AnthropicModel's default Claude model; "
                                       "with --openai-base-url, required)")
    model.add_argument("--script", metavar="FILE.json", type=Path,
                       help="answer from a scripted model written as JSON (tests and demos; see nbtoolsched/acp/_script.py)")
    model.add_argument("--openai-base-url", metavar="URL",
                       help="use an OpenAI-compatible server at URL (e.g. http://localhost:11434/v1 for Ollama; "
                            "the key from OPENAI_API_KEY)")
    session = made.add_argument_group("sessions")
    session.add_argument("--cwd", metavar="DIR", help="the folder a session's relative cwd is taken against "
                                                      "(default: the current one)")
    session.add_argument("--session-dir", metavar="DIR", type=Path,
                         help="where sessions keep their transcripts (<DIR>/<id>/<id>.jsonl) and session/load finds "
                              "them (also Claude Code's <DIR>/<id>.jsonl); default: "
                              f"{Path(tempfile.gettempdir()) / 'nbtoolsched-sessions'}")
    session.add_argument("--permission-mode", choices=MODES, help="the mode sessions start in, instead of the "
                                                                  "settings' defaultMode")
    session.add_argument("--max-turns", type=int, default=100, metavar="N", help="model answers per prompt (default 100)")
    session.add_argument("--system", metavar="TEXT", help="the system prompt ({cwd} becomes the session's folder)")
    session.add_argument("--system-file", metavar="FILE", type=Path, help="read the system prompt from FILE")
    return made


def main(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="nbtoolsched acp: %(levelname)s %(message)s")
    try:
        make_model = _model_factory(args)
        system = args.system_file.read_text(encoding="utf-8") if args.system_file else args.system or DEFAULT_SYSTEM
    except (ScriptError, OSError, ValueError) as err:
        print(f"nbtoolsched acp: {err}", file=sys.stderr)
        return 2
    if args.max_turns < 1:
        print("nbtoolsched acp: --max-turns must be 1 or more", file=sys.stderr)
        return 2
    root = args.session_dir or Path(tempfile.gettempdir()) / "nbtoolsched-sessions"
    config = SessionConfig(make_model, root.expanduser().resolve(), args.permission_mode, args.max_turns, system)
    from ._server import NbtoolschedAgent
    from ._stdio import serve

    base = os.path.abspath(args.cwd) if args.cwd else os.getcwd()
    try:
        run_sync(serve(NbtoolschedAgent(config, base_cwd=base)))
    except (KeyboardInterrupt, asyncio.CancelledError):  # SIGINT, or SIGTERM's cancel: a clean stop either way
        pass
    return 0


def _model_factory(args: argparse.Namespace) -> Callable[[], Model]:
    """How each session gets its model: a script's, an OpenAI-compatible server's, or Anthropic's."""
    if args.script is not None:
        if args.openai_base_url:
            raise ValueError("--script and --openai-base-url pick different models: give one")
        return load_script(args.script)
    name: str | None = args.model
    if args.openai_base_url:
        if not name:
            raise ValueError("--openai-base-url needs --model (the server's name for the model)")
        base_url: str = args.openai_base_url

        def openai() -> Model:
            from ..models._openai import OpenAIModel

            return OpenAIModel(name, base_url=base_url)

        return openai

    def anthropic() -> Model:
        from ..models._anthropic import AnthropicModel

        if not (os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("ANTHROPIC_AUTH_TOKEN")):
            # Said at session/new (AUTH_REQUIRED), not at the first prompt as an SDK traceback.
            raise ValueError("no ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN) is set for the default Claude model; "
                             "set one, or start the agent with --openai-base-url URL --model NAME, or --script FILE")
        return AnthropicModel(name) if name else AnthropicModel()

    return anthropic
