"""Where bash evaluates text as code although no command substitution is written.

Arithmetic evaluates a variable's value as an expression, and an array subscript in
that value runs any command substitution it holds. With ``_`` (the last word of the
previous command) holding ``a[$(rm -rf x)]``, each of ``$((_))``, ``$[_]``, ``${b[_]}``,
``${x:_}``, ``${!_}`` and ``[[ _ -eq 1 ]]`` runs ``rm``; ``${_@P}`` expands a value as a
prompt, substitutions included. Builtins that take a variable name (``printf -v``,
``read``, ``test -v``, ``wait -p``, ``unset``) evaluate a subscript in it, and ``let``
evaluates its arguments. So such an expansion, or such a command, counts as running
code: no allow rule may match it and it is not read-only.

Everything here is decided from the text, failing closed: an expansion form this module
does not recognise counts as code.
"""

from __future__ import annotations

import re
from typing import Sequence

__all__ = ["arithmetic_evaluates", "command_evaluates", "expansion_evaluates"]

# Arithmetic with numbers and operators only: no name, no "$", no subscript.
_LITERAL_ARITHMETIC = re.compile(r"[0-9\s+\-*/%()<>=!&|^~?:,]*")
# The parameter of ${...}: an optional "#" (length), then a name, digits or a special.
_PARAMETER = re.compile(r"#?(?:[A-Za-z_][A-Za-z0-9_]*|[0-9]+|[@*#?$!_-])")
# ${x:offset} and ${x:offset:length}: both are arithmetic; literal numbers only.
_LITERAL_SUBSTRING = re.compile(r"[0-9\s+\-()]*(?::[0-9\s+\-()]*)?")
# ${x@op} transformations that expand nothing further (P expands like a prompt).
_PLAIN_TRANSFORMS = frozenset("QEUuLAKak")
_INTEGER = re.compile(r"[+-]?[0-9]+")
_ARITHMETIC_TEST_OPS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge"})
_NAME_TESTS = frozenset({"-v", "-R"})


def arithmetic_evaluates(text: str) -> bool:
    """``$((...))`` or ``$[...]``: True unless it holds only numbers and operators."""
    inner = text[3:-2] if text.startswith("$((") else text[2:-1]
    return _LITERAL_ARITHMETIC.fullmatch(inner) is None


def expansion_evaluates(text: str) -> bool:
    """``${...}``: True for indirection, a computed subscript or substring, or ``@P``.

    Expansions nested in the operand (``${x:-$((y))}``) are separate nodes: the caller
    checks each of them too.
    """
    inner = text[2:-1] if text.startswith("${") and text.endswith("}") else ""
    if not inner or inner.startswith("!"):
        return True  # ${!x}: x's value names the variable, subscript included
    match = _PARAMETER.match(inner)
    if match is None:
        return True
    rest = inner[match.end():]
    if rest.startswith("["):
        close = rest.find("]")
        if close == -1:
            return True
        subscript = rest[1:close]
        if subscript not in ("@", "*") and not subscript.isdigit():
            return True  # an indexed array's subscript is arithmetic
        rest = rest[close + 1:]
    if rest.startswith("@"):
        return not (len(rest) == 2 and rest[1] in _PLAIN_TRANSFORMS)
    if rest.startswith(":") and (len(rest) == 1 or rest[1] not in "-=+?"):
        return _LITERAL_SUBSTRING.fullmatch(rest[1:]) is None
    return False


def command_evaluates(argv: Sequence[str | None]) -> str | None:
    """Why running ``argv`` makes bash evaluate an argument as code (None: it does not).

    ``argv`` is what runs after wrappers are peeled; None stands for a word the shell
    computes (which may be any option or name, or several words). Only builtins that
    evaluate variable names or arithmetic are judged here.
    """
    if not argv or argv[0] is None:
        return None
    name, args = argv[0], argv[1:]
    if name == "let":
        return "let evaluates its arguments as arithmetic"
    if name == "compgen":
        return "compgen expands its word list (-W) and runs commands (-C, -F)"
    if name in ("mapfile", "readarray") and any(a is None or a.startswith("-C") for a in args):
        return f"{name} -C runs a callback"
    if name in _NAME_TAKERS and any(_may_be_subscripted(a) for a in args):
        return f"{name} takes variable names, and bash evaluates a subscript in one"
    if name == "printf" and args and (args[0] is None or args[0].startswith("-v")):
        target = args[0][2:] if args[0] and len(args[0]) > 2 else (args[1] if len(args) > 1 else "")
        if args[0] is None or _may_be_subscripted(target):
            return "printf -v assigns to a variable, and bash evaluates a subscript in its name"
    if name in ("test", "[", "[["):
        return _test_evaluates(name, args)
    return None


# Builtins whose operands include variable names (read NAME, unset NAME, wait -p NAME...).
_NAME_TAKERS = frozenset({"read", "unset", "mapfile", "readarray", "getopts", "wait"})


def _may_be_subscripted(word: str | None) -> bool:
    return word is None or "[" in word


def _test_evaluates(name: str, args: Sequence[str | None]) -> str | None:
    if name != "[[" and None in args:
        return f"{name} with a computed word, which may be -v and a subscripted name"
    for i, word in enumerate(args):
        if word in _NAME_TESTS and i + 1 < len(args) and _may_be_subscripted(args[i + 1]):
            return f"{name} {word} evaluates a subscript in the variable name"
        if name == "[[" and word in _ARITHMETIC_TEST_OPS:
            for operand in (args[i - 1] if i else None, args[i + 1] if i + 1 < len(args) else None):
                if operand is None or not _INTEGER.fullmatch(operand):
                    return f"[[ ... {word} ... ]] evaluates its operands as arithmetic"
    return None
