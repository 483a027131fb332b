"""How ``Bash(...)`` rule contents match one shell (sub)command.

Three kinds, as in Claude Code: ``prefix:*`` (a word-boundary prefix, also behind a
bare ``xargs``), a wildcard (any unescaped ``*``), or an exact command. Matching runs on
a few candidate spellings of the command: deny and ask rules see it with every leading
``VAR=value`` and wrapper (``timeout``, ``nice``...) peeled off, so they cannot be dodged;
allow rules only see the harmless ones peeled off, so ``LD_PRELOAD=x git log`` is not
``git log``.

Also the two rule contents "always allow" builds for a command: the exact one
(``exact_shell_content``) and a prefix (``suggest_shell_rule``), never for a program that
would run anything it is given (``prefix_problem``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal, Sequence

from ..shell import program

__all__ = [
    "ShellPattern",
    "compile_shell_pattern",
    "exact_shell_content",
    "prefix_problem",
    "suggest_shell_rule",
]

Kind = Literal["prefix", "wildcard", "exact"]


# A star pattern: literal characters, and None for "*" (any text).
_Stars = tuple["str | None", ...]
_HOLE = None  # in a command's tokens: a word the shell computes (any text, or none)
_OPTIONAL_SPACE = ""  # in a command's tokens: a blank that an empty expansion removes
_MAX_STATES = 200_000  # a larger comparison counts as a possible match (fails closed)


@dataclass(frozen=True, slots=True)
class ShellPattern:
    kind: Kind
    text: str  # the prefix, the exact command, or the wildcard source
    regex: re.Pattern[str] | None = None
    stars: tuple[_Stars, ...] = ()  # the commands it matches, as star patterns

    def verdict(self, words: Sequence[str | None]) -> Literal["match", "maybe"] | None:
        """Does the rule match a command given as argv (None: a word the shell computes)?

        "match" when it matches whatever the computed words hold, "maybe" when it does
        for some values of them, None when it cannot.
        """
        if None not in words:
            return "match" if self.matches(" ".join(str(w) for w in words)) else None
        if self.kind == "prefix":
            fixed = " ".join(str(w) for w in words[: words.index(None)])
            if any(fixed == head or fixed.startswith(head + " ") for head in (self.text, "xargs " + self.text)):
                return "match"  # what follows the prefix does not matter
        tokens = _command_tokens(words)
        return "maybe" if any(_may_meet(stars, tokens) for stars in self.stars) else None

    def matches(self, candidate: str) -> bool:
        command = candidate.strip()
        if self.kind == "exact":
            return command == self.text
        if self.kind == "prefix":
            return any(
                command == head or command.startswith(head + " ")
                for head in (self.text, "xargs " + self.text)
            )
        assert self.regex is not None
        return self.regex.fullmatch(command) is not None


def compile_shell_pattern(content: str) -> ShellPattern:
    """Classify a rule's content; raises ValueError for an unusable one."""
    text = content.strip()
    if not text:
        raise ValueError("an empty command pattern")
    if text.endswith(":*"):
        prefix = text[:-2].rstrip()
        if not prefix:
            raise ValueError("a prefix rule needs a command before ':*'")
        if _has_unescaped_star(prefix):
            return ShellPattern("wildcard", text, _wildcard_regex(prefix + " *"), _wildcard_stars(prefix + " *"))
        heads = [tuple(prefix), tuple("xargs " + prefix)]
        return ShellPattern("prefix", prefix, stars=(*heads, *((*h, " ", None) for h in heads)))
    if _has_unescaped_star(text):
        return ShellPattern("wildcard", text, _wildcard_regex(text), _wildcard_stars(text))
    exact = text.replace("\\*", "*")
    return ShellPattern("exact", exact, stars=(tuple(exact),))


def _has_unescaped_star(text: str) -> bool:
    i = 0
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == "*":
            return True
        i += 1
    return False


def _wildcard_regex(pattern: str) -> re.Pattern[str]:
    # "git *" also covers a bare "git" (a single trailing " *" is "any arguments").
    if pattern.endswith(" *") and not pattern.endswith("\\ *") and not _has_unescaped_star(pattern[:-2]):
        return re.compile(_wildcard_body(pattern[:-2]) + r"(?: .*)?", re.DOTALL)
    return re.compile(_wildcard_body(pattern), re.DOTALL)


def _wildcard_stars(pattern: str) -> tuple[_Stars, ...]:
    """The wildcard as star patterns (two when a trailing " *" also matches the bare command)."""
    tokens: list[str | None] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern) and pattern[i + 1] in "*\\":
            tokens.append(pattern[i + 1])
            i += 2
            continue
        tokens.append(None if c == "*" else c)
        i += 1
    stars = tuple(tokens)
    if pattern.endswith(" *") and not pattern.endswith("\\ *") and not _has_unescaped_star(pattern[:-2]):
        return (stars, stars[:-2])
    return (stars,)


def _command_tokens(words: Sequence[str | None]) -> tuple[str | None, ...]:
    """The command as characters, computed words as holes. The blank after a hole (or
    before a last one) is optional: an unquoted expansion may vanish with its word."""
    tokens: list[str | None] = []
    last = len(words) - 1
    for i, word in enumerate(words):
        if i:
            vanishing = words[i - 1] is None or (word is None and i == last)
            tokens.append(_OPTIONAL_SPACE if vanishing else " ")
        if word is None:
            tokens.append(_HOLE)
        else:
            tokens.extend(word)
    return tuple(tokens)


def _may_meet(stars: _Stars, tokens: tuple[str | None, ...]) -> bool:
    """Is there a text both the star pattern and the command with holes can be?"""
    m, n = len(stars), len(tokens)
    if (m + 1) * (n + 1) > _MAX_STATES:
        return True
    seen = {(0, 0)}
    todo = [(0, 0)]
    while todo:
        i, j = todo.pop()
        if i == m and j == n:
            return True
        p = stars[i] if i < m else _OPTIONAL_SPACE  # past the end: no pattern token
        t = tokens[j] if j < n else _OPTIONAL_SPACE
        steps: list[tuple[int, int]] = []
        if i < m and p is None:  # the pattern's star: empty, or it covers a command token
            steps.append((i + 1, j))
            if j < n:
                steps.append((i, j + 1))
        if j < n and t is _HOLE:  # a hole: done, or it makes the pattern's next character
            steps.append((i, j + 1))
            if i < m and p is not None:
                steps.append((i + 1, j))
        elif j < n and t == _OPTIONAL_SPACE:
            steps.append((i, j + 1))
            if i < m and p == " ":
                steps.append((i + 1, j + 1))
        elif i < m and j < n and p is not None and p == t:
            steps.append((i + 1, j + 1))
        for step in steps:
            if step not in seen:
                seen.add(step)
                todo.append(step)
    return False


def _wildcard_body(pattern: str) -> str:
    parts: list[str] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern) and pattern[i + 1] in "*\\":
            parts.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        parts.append(".*" if c == "*" else re.escape(c))
        i += 1
    return "".join(parts)


def exact_shell_content(command: str) -> str | None:
    """The content of the rule that names exactly this one-line command (its stars
    escaped, so ``ls *.py`` stays an exact rule), or None when no exact rule can: a
    command of several lines, or one whose ``\\*`` an exact rule cannot spell."""
    text = command.strip()
    if not text or "\n" in text or "\r" in text:
        return None
    content = text.replace("*", "\\*")
    try:
        pattern = compile_shell_pattern(content)
    except ValueError:
        return None
    return content if pattern.kind == "exact" and pattern.text == text else None


# Programs that run the code they are given. The program table knows the runners and the
# shells (a row with ``runs``: env, xargs, sudo, timeout, find -exec, sh -c, eval, ssh...)
# and git's options that run code; it has no row for an interpreter, whose command line
# it does not read, so those are named here. A prefix rule for any of them allows anything.
_INTERPRETERS = frozenset({
    "python", "pythonw", "pypy", "ipython", "node", "nodejs", "deno", "bun", "bunx", "npx", "uvx", "pipx", "perl",
    "ruby", "irb", "php", "lua", "luajit", "tclsh", "wish", "expect", "Rscript", "R", "julia", "osascript", "pwsh",
    "powershell", "awk", "gawk", "mawk", "nawk", "sed", "ed", "ex", "vi", "vim", "nvim", "emacs", "gdb",
})
_VERSIONED = re.compile(r"(?:python|pypy|perl|ruby|php|lua|node)[0-9][0-9.]*")  # python3, python3.12, perl5...
# Subcommands that run whatever they are given (``uv run python -c ...``).
_RUNNER_SUBCOMMANDS = frozenset({
    "uv run", "uv tool", "poetry run", "pipenv run", "pdm run", "hatch run", "conda run", "npm exec", "pnpm exec",
    "pnpm dlx", "yarn exec", "yarn dlx", "bundle exec", "go run", "cargo run", "dotnet run",
})


def prefix_problem(prefix: str) -> str | None:
    """Why a prefix rule for these words must not be offered (None: it may be): its
    program runs other programs or code, as the program table says (a runner, a shell,
    ``git`` alone with its ``-c`` and ``--exec``), or it is an interpreter."""
    words = prefix.split(" ")
    row = program(words[0])
    if row.runs is not None:
        return f"{row.name} runs the command it is given"
    if row.name in _INTERPRETERS or _VERSIONED.fullmatch(row.name):
        return f"{row.name} runs the code it is given"
    if len(words) < 2 and (row.code_options or row.code_words or row.config_options):
        return f"{row.name} has options that run code"
    if " ".join([row.name, *words[1:2]]) in _RUNNER_SUBCOMMANDS:
        return f"{prefix} runs the command it is given"
    return None


def suggest_shell_rule(prefix: str | None, tool_name: str = "Bash") -> str | None:
    """A prefix rule a person might want to save (``Bash(git log:*)``), from the words the
    shell layer says such a rule would name (``PartFacts.rule_prefix``); None when there
    are none, or when such a rule would let a program run anything (``prefix_problem``)."""
    if prefix is None or prefix_problem(prefix) is not None:
        return None
    return f"{tool_name}({prefix}:*)"
