"""``%replay``: a permission-policy simulation over transcripts, shown as a report.

    %replay ~/.claude/projects --settings .claude/settings.json
    %replay sessions/ --settings current.json --proposed proposed.json --name cmp

Without ``--proposed*`` options it shows one ``PolicyReport``; with any of them, a
``PolicyComparison`` of the current policy and the proposed one: a headline, the table
that matters, the rest folded, charts in the notebook's theme. While it runs, a progress
line (plain output, no widget) counts the sessions and stays as the run ended, so a saved
notebook shows "305/305 sessions · 12.3 s" without a kernel. The work is the scale layer's
(``nbtoolsched.scale``); this module only reads the line.
"""

from __future__ import annotations

import argparse
import keyword
import shlex
from typing import Any

from IPython.core.error import UsageError

from ..permissions._modes import MODES
from ..scale._policy import Policy
from ..scale._simulate import compare_policies, replay, transcript_files

__all__ = ["replay_line", "REPLAY_USAGE"]

REPLAY_USAGE = "%replay PATH... [--settings FILE]... [--mode MODE] [--allow/--deny/--ask RULE]... [--proposed FILE]... " \
               "[--proposed-mode MODE] [--proposed-allow/--proposed-deny/--proposed-ask RULE]... [--engine local|ray] " \
               "[--workers N] [--sidechains] [--checkout DIR] [--no-progress] [--name VAR]"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # argparse would exit the kernel
        raise UsageError(f"%replay: {message}\nusage: {REPLAY_USAGE}")


def _parser() -> _Parser:
    p = _Parser(prog="%replay", add_help=False)
    p.add_argument("paths", nargs="+")
    p.add_argument("--settings", action="append", default=[])
    p.add_argument("--mode", choices=MODES)
    for prefix in ("", "proposed-"):
        for behavior in ("allow", "deny", "ask"):
            p.add_argument(f"--{prefix}{behavior}", action="append", default=[])
    p.add_argument("--proposed", action="append", default=[])
    p.add_argument("--proposed-mode", choices=MODES)
    p.add_argument("--engine", choices=("local", "ray"), default="local")
    p.add_argument("--workers", type=int)
    p.add_argument("--sidechains", action="store_true")
    p.add_argument("--checkout")
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--name")
    return p


def replay_line(line: str, namespace: dict[str, Any]) -> Any:
    """Run ``%replay`` for one line; returns the report (or the comparison) to display."""
    try:
        args = _parser().parse_args(shlex.split(line))
    except ValueError as err:
        raise UsageError(f"%replay: {err}") from None
    if args.name is not None and (not args.name.isidentifier() or keyword.iskeyword(args.name)):
        raise UsageError(f"--name {args.name!r}: not a valid Python variable name")
    files = transcript_files(args.paths)
    if not files:
        raise UsageError(f"%replay: no transcript (*.jsonl) found in {' '.join(args.paths)}")
    try:
        current = _policy("current", args.settings, args.mode, args.allow, args.deny, args.ask)
        options: dict[str, Any] = dict(engine=args.engine, workers=args.workers, progress=not args.no_progress,
                                       include_sidechains=args.sidechains)
        if args.proposed or args.proposed_mode or args.proposed_allow or args.proposed_deny or args.proposed_ask:
            proposed = _policy("proposed", args.proposed or args.settings, args.proposed_mode or args.mode,
                               args.proposed_allow, args.proposed_deny, args.proposed_ask)
            result: Any = compare_policies(files, current, proposed, **options)
        else:
            result = replay(files, current, checkout=args.checkout, **options)
    except (ValueError, OSError) as err:  # a settings file or rule that cannot be used, a bad option
        raise UsageError(f"%replay: {err}") from None
    if args.name:
        namespace[args.name] = result
    return result


def _policy(name: str, settings: list[str], mode: str | None, allow: list[str], deny: list[str], ask: list[str]) -> Policy:
    if settings:
        return Policy.from_settings(*settings, name=name, mode=mode, allow=tuple(allow), deny=tuple(deny), ask=tuple(ask))
    return Policy(name=name, mode=mode, allow=tuple(allow), deny=tuple(deny), ask=tuple(ask))
