"""Split shell commands into simple commands with tree-sitter-bash.

Regexes cannot tell quoting, comments, heredocs and nesting apart; a real parser can.
Where tree-sitter's tree and bash disagree (arguments after a redirection, ``[ a > b ]``,
a line continuation inside a word) this module follows bash, or reports an error.
Everything here is static: nothing is expanded or run.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Collection, Mapping, Sequence

import tree_sitter_bash
from tree_sitter import Language, Node, Parser

from ._allowlists import (
    SAFE_ENV_VALUE, SAFE_ENV_VARS, TIMEOUT_DURATION, WRAPPER_OPTIONS,
)
from ._evaluation import arithmetic_evaluates, command_evaluates, expansion_evaluates
from ._heredoc import (
    HeredocBody, HeredocError, HeredocOp, body_expansions, read_body, read_delimiter, scan_line,
)
from ._model import (
    Assignment, Construct, ParsedCommand, Redirect, ShellParseError, SimpleCommand, Word,
)

__all__ = [
    "Assignment", "Construct", "ParsedCommand", "Redirect", "ShellParseError",
    "SimpleCommand", "Word", "parse_command", "split_command", "strip_env_prefix",
    "strip_wrappers", "subcommand_strings", "wrapper_prefix_len",
]

_LANGUAGE = Language(tree_sitter_bash.language())
_local = threading.local()


def _parser() -> Parser:
    """One parser per thread: tree-sitter parsers are not thread-safe."""
    parser = getattr(_local, "parser", None)
    if parser is None:
        parser = _local.parser = Parser(_LANGUAGE)
    return parser


# ------------------------------------------------------------------- constants
_REDIRECTS = frozenset({"file_redirect", "heredoc_redirect", "herestring_redirect"})
_SEQUENCES = frozenset({
    "program", "list", "pipeline", "do_group", "elif_clause", "else_clause", "case_item",
})
_CONTROL = {
    "if_statement": "if", "while_statement": "while", "for_statement": "for",
    "c_style_for_statement": "for", "case_statement": "case",
}
_STATEMENTS = frozenset({
    "command", "list", "pipeline", "redirected_statement", "subshell",
    "compound_statement", "negated_command", "test_command", "function_definition",
    "if_statement", "while_statement", "for_statement", "c_style_for_statement",
    "case_statement", "declaration_command", "unset_command", "variable_assignment",
    "variable_assignments", "do_group", "elif_clause", "else_clause", "case_item",
})
_EXPRESSIONS = frozenset({
    "binary_expression", "unary_expression", "parenthesized_expression",
    "ternary_expression", "postfix_expression",
})
_LITERALS = frozenset({"regex", "test_operator"})
_SPLITTABLE = frozenset({"subshell", "group", "negation", "background"})

# What may sit between sibling nodes: blanks, newlines and line continuations.
_GAP = re.compile(r"(?:[ \t\n]|\\\n)*")
_GAP_NO_NEWLINE = re.compile(r"(?:[ \t]|\\\n)*")
_BLANKS = frozenset(" \t\n")
_GLOB = re.compile(r"[*?\[]")
# A word with nothing bash would expand or unquote: its value is its text.
_PLAIN_WORD = re.compile(r"[\w./:@%+,^-][\w./:@%+,^=#-]*", re.ASCII)
# Conservative: any unquoted "{", then "," or "..", then "}" (bash also expands a{},}).
_BRACE = re.compile(r"\{.*?(?:,|\.\.).*?\}", re.DOTALL)
_DQ_ESCAPE = re.compile(r"\\([$`\"\\\n])")
_ANSI_ESCAPE = re.compile(
    r"\\(?:([abeEfnrtv\\'\"?])|([0-7]{1,3})|x([0-9A-Fa-f]{1,2})|u([0-9A-Fa-f]{1,4})"
    r"|U([0-9A-Fa-f]{1,8})|c(.))",
    re.DOTALL,
)
_ANSI_SIMPLE = {
    "a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r",
    "t": "\t", "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?",
}
_MAX_ERRORS = 3
# Longer commands are not analysed (an error, so: not read-only, not split for rules):
# the analysis runs on the event loop, and must stay well under a second.
MAX_COMMAND_CHARS = 65_536
MAX_SIMPLE_COMMANDS = 1_000  # and at most this many simple commands (or heredocs),
MAX_REDIRECTS = 1_000  # redirections,
MAX_WORDS = 10_000  # and words
_NON_ASCII = re.compile(r"[^\x00-\x7f]")


class _TooLarge(Exception):
    """The command holds more than the analysis takes on; the message says what."""


def _short(text: str, limit: int = 48) -> str:
    text = text.replace("\n", "\\n")
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _ansi_c(body: str) -> str | None:
    """Decode the inside of $'...' like bash; None if it would hold a NUL byte."""
    def one(m: re.Match[str]) -> str:
        simple, octal, hex2, u4, u8, ctrl = m.groups()
        if simple is not None:
            return _ANSI_SIMPLE[simple]
        if ctrl is not None:
            return chr(ord(ctrl.upper()) ^ 0x40) if ctrl != "?" else "\x7f"
        code = int(octal, 8) if octal else int(hex2 or u4 or u8, 16)
        return chr(code) if code < 0x110000 else "\ufffd"

    value = _ANSI_ESCAPE.sub(one, body)
    return None if "\0" in value else value


# ---------------------------------------------------------------------- source
class _Source:
    """The command as tree-sitter sees it, and its text as written.

    tree-sitter-bash gets an ASCII copy: every other character becomes "x". To bash
    any non-ASCII character is a plain word character, as "x" is (and "x" is in no
    keyword), so the tree keeps its shape, while tree-sitter-bash's scanner crashes
    the process on some code points (e.g. "{" then U+10F18A). Offsets in the copy
    are character offsets in the original, and every value is read from the original.
    """

    __slots__ = ("text", "data")

    def __init__(self, text: str) -> None:
        self.text = text
        ascii_text = text if text.isascii() else _NON_ASCII.sub("x", text)
        self.data = ascii_text.encode("ascii")

    def span(self, start: int, end: int) -> str:
        return self.text[start:end]

    def of(self, node: Node) -> str:
        return self.text[node.start_byte:node.end_byte]


# --------------------------------------------------------------------- builder
@dataclass(slots=True)
class _Draft:
    start: int
    end: int
    words: list[Word] = field(default_factory=list)
    assignments: list[Assignment] = field(default_factory=list)
    redirects: list[Redirect] = field(default_factory=list)


class _Builder:
    """Walks one tree once, collecting simple commands, constructs and errors."""

    def __init__(self, src: _Source, heredocs: dict[int, Word]) -> None:
        self.src = src
        self.heredocs = heredocs  # bodies as bash reads them, by operator offset
        self.drafts: list[_Draft] = []
        self.constructs: list[Construct] = []
        self.errors: list[str] = []
        self.counts = {"words": 0, "redirections": 0}

    def new_draft(self, start: int, end: int) -> _Draft:
        if len(self.drafts) >= MAX_SIMPLE_COMMANDS:
            raise _TooLarge(f"more than {MAX_SIMPLE_COMMANDS} simple commands: not analysed")
        draft = _Draft(start, end)
        self.drafts.append(draft)
        return draft

    def count(self, what: str, limit: int) -> None:
        self.counts[what] += 1
        if self.counts[what] > limit:
            raise _TooLarge(f"more than {limit} {what}: not analysed")

    # ---- coverage
    def children(self, node: Node, *, newlines: bool = False) -> list[Node]:
        """The children of ``node``, checking that nothing between them was skipped.

        tree-sitter-bash silently drops some text (a backslash-space before a word) and
        reads some newlines as blanks; bash does neither, so non-blank text between
        nodes, or a newline inside one command, is a parse error.
        """
        kids = node.children
        data = self.src.data
        prev = node.start_byte
        for child in kids:
            start = child.start_byte
            if start > prev and not (start == prev + 1 and data[prev:start] == b" "):
                self.gap(prev, start, newlines)
            end = child.end_byte
            if end > prev:
                prev = end
        end = node.end_byte
        if end > prev:
            self.gap(prev, end, newlines)
        return kids

    def gap(self, start: int, end: int, newlines: bool) -> None:
        text = self.src.span(start, end)
        if text != " " and not (_GAP if newlines else _GAP_NO_NEWLINE).fullmatch(text):
            self.errors.append(f"text the parser skipped or misread: {_short(text)!r}")

    def touching(self, child: Node, prev_end: int) -> None:
        """Two word nodes with nothing between them are one word to bash."""
        if (child.start_byte == prev_end and child.is_named
                and child.type not in _REDIRECTS and not child.type.startswith("heredoc")):
            self.errors.append(f"words run together at {_short(self.src.of(child))!r}")

    # ---- statements
    def statement(self, node: Node) -> None:
        kind = node.type
        if kind == "command":
            self.command(node)
        elif kind in _SEQUENCES:
            self.sequence(node)
        elif kind == "redirected_statement":
            self.redirected(node)
        elif kind == "test_command":
            self.test(node)
        elif kind in ("subshell", "compound_statement", "negated_command"):
            self.grouping(node)
        elif kind in _CONTROL:
            self.control(node)
        elif kind == "function_definition":
            self.construct("function", node)
            self.nested_statements(node)
        elif kind in ("declaration_command", "unset_command"):
            self.construct("declaration" if kind[0] == "d" else "unset", node)
            self.substitutions_in(node)
        elif kind in ("variable_assignment", "variable_assignments"):
            self.construct("assignment", node)
            self.substitutions_in(node)
        elif kind not in ("comment", "ERROR"):
            self.construct("unsupported", node)
            self.substitutions_in(node)

    def substitutions_in(self, node: Node) -> None:
        """The commands of every command substitution in ``node`` (``x=$(rm y)``, a for
        loop's word list, a case pattern...) are commands like the others."""
        stack = [node]
        while stack:
            current = stack.pop()
            if current.type in _SUBSTITUTIONS:
                self.nested_statements(current)
            else:
                stack.extend(current.children)

    def construct(self, kind: str, node: Node) -> None:
        self.constructs.append(Construct(kind, _short(self.src.of(node))))

    def sequence(self, node: Node) -> None:
        for child in self.children(node, newlines=True):
            if child.is_named:
                if child.type in _STATEMENTS or node.type != "case_item":
                    self.statement(child)
                else:
                    self.substitutions_in(child)  # a case pattern
            elif child.type == "&":
                self.constructs.append(Construct("background", "&"))
            elif child.type == ";;" and node.type != "case_item":
                self.errors.append("';;' outside a case statement")

    def nested_statements(self, node: Node) -> None:
        children = self.children(node, newlines=True)
        for child in children:
            if child.type in _STATEMENTS:
                self.statement(child)
        if node.type in _SUBSTITUTIONS and any(child.type in _REDIRECTS for child in children):
            self.redirected(node)  # $(< file): bash reads the file; a command without words

    def grouping(self, node: Node) -> None:
        first = node.children[0].type if node.child_count else ""
        if first == "((":
            self.construct("arithmetic", node)
            self.substitutions_in(node)
            return
        kind = {"subshell": "subshell", "negated_command": "negation"}.get(node.type, "group")
        self.constructs.append(Construct(kind, _short(self.src.of(node))))
        if kind == "negation" and node.child_count > 1 and (
            node.children[1].start_byte == node.children[0].end_byte
        ):
            # "!x" is one word (a command named "!x") to bash, not "! x".
            self.errors.append(f"words run together at {_short(self.src.of(node))!r}")
        self.sequence(node)

    def control(self, node: Node) -> None:
        kind = _CONTROL[node.type]
        if node.child_count and node.children[0].type in ("until", "select"):
            kind = node.children[0].type
        self.construct(kind, node)
        self.nested_statements(node)
        for child in node.children:  # a for loop's words, a case's subject...
            if child.type not in _STATEMENTS:
                self.substitutions_in(child)

    # ---- simple commands
    def command(self, node: Node) -> None:
        draft = self.new_draft(node.start_byte, node.end_byte)
        deferred: list[Node] = []
        prev_end = -1
        for child in self.children(node):
            kind = child.type
            self.touching(child, prev_end)
            prev_end = child.end_byte if child.is_named and kind not in _REDIRECTS else -1
            if kind == "command_name":
                inner = child.named_child(0)
                draft.words.append(self.word(inner if inner is not None else child))
            elif kind == "variable_assignment":
                draft.assignments.append(self.assignment(child))
            elif kind in _REDIRECTS:
                found, extra, more = self.redirect(child)
                draft.redirects.extend(found)
                draft.words.extend(extra)
                deferred.extend(more)
            elif child.is_named:
                if kind != "comment":
                    draft.words.append(self.word(child))
            else:
                draft.words.append(self.unsupported_word(child))
        for statement in deferred:
            self.statement(statement)

    def test(self, node: Node) -> None:
        """[ ... ] and [[ ... ]] become commands named "[" and "[[" (bash builtins)."""
        draft = self.new_draft(node.start_byte, node.end_byte)
        single = bool(node.child_count) and node.children[0].type == "["
        tokens: list[tuple[Word, bool]] = []
        self.flatten_test(node, tokens, pattern=not single)
        pending_op: Word | None = None
        for word, is_operator in tokens:
            if pending_op is not None:
                # In "[ a > b ]" bash sees a redirection to the file b, not a comparison.
                draft.redirects.append(Redirect(
                    pending_op.value, None, word, f"{pending_op.text} {word.text}",
                    pending_op.start, word.end,
                ))
                pending_op = None
            elif single and is_operator and word.value in ("<", ">", ">>"):
                pending_op = word
            elif is_operator and word.value.startswith("<<"):
                # "[ x <<EOF ]" is a heredoc to bash; tree-sitter reads a test operator
                # and then parses the heredoc's body as commands.
                self.errors.append(f"a heredoc inside a test: {_short(self.src.of(node))!r}")
            else:
                draft.words.append(word)
        if pending_op is not None:
            self.errors.append(f"redirection without a target in {_short(self.src.of(node))}")

    def flatten_test(
        self, node: Node, out: list[tuple[Word, bool]], *, pattern: bool,
    ) -> None:
        for child in self.children(node):
            if child.type in _EXPRESSIONS:
                self.flatten_test(child, out, pattern=pattern)
            elif child.is_named:
                out.append((self.word(child, pattern=pattern), False))
            else:
                text = self.src.of(child)
                out.append((Word(text, text, (), *self.chars(child)), True))

    def redirected(self, node: Node) -> None:
        bodies: list[Node] = []
        redirects: list[Node] = []
        for child in self.children(node):
            if child.type in _REDIRECTS:
                redirects.append(child)
            elif child.is_named and child.type != "comment":
                bodies.append(child)
        mark = len(self.drafts)
        for body in bodies:
            self.statement(body)
        targets, single = self.redirect_targets(bodies[-1] if bodies else None, mark)
        if not targets:
            targets = [self.new_draft(node.start_byte, node.end_byte)]
            single = True
        deferred: list[Node] = []
        for child in redirects:
            found, extra, more = self.redirect(child)
            deferred.extend(more)
            for draft in targets:
                draft.redirects.extend(found)
            if single:
                targets[0].words.extend(extra)
                targets[0].end = max(targets[0].end, child.end_byte)
            elif extra:
                self.errors.append(
                    f"words after a redirection of a compound command: {_short(self.src.of(child))}"
                )
        for statement in deferred:
            self.statement(statement)

    def redirect_targets(self, body: Node | None, mark: int) -> tuple[list[_Draft], bool]:
        """Bash binds a trailing redirection to the last command of a list or pipeline."""
        tail = body
        while tail is not None and tail.type in ("list", "pipeline", "negated_command",
                                                  "redirected_statement"):
            kids = [c for c in tail.children
                    if c.is_named and c.type != "comment" and c.type not in _REDIRECTS]
            tail = kids[-1] if kids else None
        new = self.drafts[mark:]
        if tail is None:
            return [], True
        if tail.type in ("command", "test_command"):
            return [d for d in new if d.start == tail.start_byte][:1], True
        return [d for d in new if tail.start_byte <= d.start < tail.end_byte], False

    # ---- redirections
    def redirect(self, node: Node) -> tuple[list[Redirect], list[Word], list[Node]]:
        """The redirection(s), words bash gives the command, and statements that follow.

        A heredoc node can hold further redirections and the rest of its pipeline.
        """
        self.count("redirections", MAX_REDIRECTS)
        fd: int | None = None
        op = ""
        target: Word | None = None
        nested: list[Redirect] = []
        extra: list[Word] = []
        follow: list[Node] = []
        text = self.src.of(node)
        heredoc = node.type == "heredoc_redirect"
        tree_body: Word | None = None
        op_start = -1
        prev_end = -1
        for child in self.children(node, newlines=heredoc):
            kind = child.type
            self.touching(child, prev_end)
            prev_end = child.end_byte if child.is_named and not kind.startswith("heredoc") else -1
            if kind == "file_descriptor":
                digits = self.src.of(child)
                fd = int(digits) if digits.isdigit() else None
            elif kind == "heredoc_start":
                text = f"{op}{self.src.of(child)}"
            elif kind == "heredoc_body":
                tree_body = self.word(child)
            elif kind in _REDIRECTS:
                inner, more_words, more_follow = self.redirect(child)
                nested.extend(inner)
                extra.extend(more_words)
                follow.extend(more_follow)
            elif kind in _STATEMENTS:
                follow.append(child)
            elif kind in ("heredoc_end", "comment"):
                continue
            elif not child.is_named:
                if not op:
                    op, op_start = kind, child.start_byte
            elif target is None and node.type != "heredoc_redirect":
                target = self.word(child)
            else:
                extra.append(self.word(child))
        if heredoc:
            target = self.heredoc_target(op_start, tree_body)
        elif op in ("<<", "<<-"):
            self.errors.append(f"a heredoc the parser did not read as one: {_short(text)!r}")
        start, end = self.chars(node)
        main = Redirect(op, fd, target, _short(text, 60), start, end)
        return [main, *nested], extra, follow

    # ---- words
    def chars(self, node: Node) -> tuple[int, int]:
        return node.start_byte, node.end_byte

    def unsupported_word(self, node: Node) -> Word:
        text = self.src.of(node)
        return Word(text, text, (f"unsupported syntax {_short(text)}",), *self.chars(node))

    def assignment(self, node: Node) -> Assignment:
        name = ""
        value: Word | None = None
        for child in node.children:
            if child.type == "variable_name":
                name = self.src.of(child)
            elif child.is_named:
                value = self.word(child)
        return Assignment(name, value, self.src.of(node), *self.chars(node))

    def word(self, node: Node, *, pattern: bool = False) -> Word:
        self.count("words", MAX_WORDS)
        text = self.src.of(node)
        kind = node.type
        if (kind == "word" or kind == "number") and _PLAIN_WORD.fullmatch(text):
            return Word(text, text, (), *self.chars(node))
        if kind == "heredoc_body":
            return self.heredoc_body(node, text)
        parts: list[str] = []
        marks: list[str] = []
        issues: list[str] = []
        runs = self.collect(node, parts, marks, issues)
        value = "".join(parts)
        unquoted = "".join(marks)
        if not _BLANKS.isdisjoint(unquoted):
            self.errors.append(f"unquoted blank inside the word {_short(text)!r}")
        _unquoted_issues(unquoted, value, text, issues, pattern)
        return Word(text, value, tuple(issues), *self.chars(node), runs_code=runs)

    def heredoc_target(self, op_start: int, tree_body: Word | None) -> Word | None:
        """The body read from the text (see _heredoc.py), plus anything the tree saw in it."""
        mine = self.heredocs.get(op_start)
        if mine is None:
            self.errors.append("a heredoc whose body could not be read")
            return tree_body
        if tree_body is not None and tree_body.issues:
            issues = tuple(dict.fromkeys(mine.issues + tree_body.issues))
            return Word(mine.text, mine.value, issues, mine.start, mine.end,
                        runs_code=mine.runs_code or tree_body.runs_code)
        return mine

    def heredoc_body(self, node: Node, text: str) -> Word:
        """tree-sitter's body: only its expansion children are used (see heredoc_target)."""
        issues: list[str] = []
        runs = False
        for child in node.children:
            if child.is_named and child.type != "heredoc_content":
                runs = self.collect(child, [], [], issues) or runs
        return Word(text, text, tuple(issues), *self.chars(node), runs_code=runs)

    def collect(self, node: Node, parts: list[str], marks: list[str], issues: list[str]) -> bool:
        """Append the value of ``node``; marks keep unquoted characters, mask quoted ones."""
        kind = node.type
        if kind in ("word", "number") or not node.is_named:
            _unquoted(self.src.of(node), parts, marks)
            return False
        if kind == "raw_string":
            inner = self.src.of(node)[1:-1]
            if "'" in inner:
                self.errors.append(f"bash ends {_short(inner)!r} elsewhere")
            _quoted(inner, parts, marks)
            return False
        if kind in ("string", "concatenation"):
            return self.collect_parts(node, parts, marks, issues)
        if kind in _LITERALS:
            _quoted(self.src.of(node), parts, marks)
            return False
        if kind == "ansi_c_string":
            text = self.src.of(node)
            if _ansi_c_end(text) != len(text) - 1:
                self.errors.append(f"bash ends {_short(text)!r} elsewhere")
            decoded = _ansi_c(text[2:-1])
            if decoded is None:
                issues.append(f"ANSI-C string with a NUL byte {_short(text)}")
                decoded = text
            _quoted(decoded, parts, marks)
            return False
        text = self.src.of(node)
        _quoted(text, parts, marks)
        issues.append(_dynamic_reason(kind, text))
        return self.runs_code(node)

    def runs_code(self, node: Node) -> bool:
        """Does this expansion run code? Commands inside substitutions become commands too.

        True for command and process substitutions anywhere inside, and for expansions
        bash evaluates as code (_evaluation.py: ``$((x))``, ``${a[x]}``, ``${!x}``, ``${x@P}``...).
        """
        runs = False
        stack = [node]
        while stack:
            current = stack.pop()
            kind = current.type
            if kind in _SUBSTITUTIONS:
                runs = True
                self.nested_statements(current)  # their own words run the same checks
                continue
            if kind == "arithmetic_expansion":
                runs = runs or arithmetic_evaluates(self.src.of(current))
            elif kind == "expansion":
                runs = runs or expansion_evaluates(self.src.of(current))
            stack.extend(current.children)
        return runs

    def collect_parts(
        self, node: Node, parts: list[str], marks: list[str], issues: list[str],
    ) -> bool:
        if node.type == "string":
            return self.collect_string(node, parts, marks, issues)
        runs = False
        for child in self.children(node):
            runs = self.collect(child, parts, marks, issues) or runs
        return runs

    def collect_string(
        self, node: Node, parts: list[str], marks: list[str], issues: list[str],
    ) -> bool:
        """"..." : text between the child nodes is content too (tree-sitter skips some)."""
        runs = False
        prev = node.start_byte + 1
        for child in node.children:
            if child.type == '"':
                continue
            if child.start_byte > prev:
                _quoted(_dq(self.src.span(prev, child.start_byte)), parts, marks)
            prev = max(prev, child.end_byte)
            if child.type == "string_content" or not child.is_named:
                _quoted(_dq(self.src.of(child)), parts, marks)
            else:
                runs = self.collect(child, parts, marks, issues) or runs
        close = node.end_byte - 1
        if close > prev:
            _quoted(_dq(self.src.span(prev, close)), parts, marks)
        return runs


def _ansi_c_end(text: str) -> int:
    """Index of the quote that closes $'...' for bash (backslash escapes the quote)."""
    i = 2
    while i < len(text):
        if text[i] == "\\":
            i += 2
        elif text[i] == "'":
            return i
        else:
            i += 1
    return -1


def _dynamic_reason(kind: str, text: str) -> str:
    short = _short(text)
    if kind == "command_substitution":
        return f"{'backtick ' if text.startswith('`') else ''}command substitution {short}"
    return {
        "simple_expansion": f"parameter expansion {short}",
        "expansion": f"parameter expansion {short}",
        "process_substitution": f"process substitution {short}",
        "arithmetic_expansion": f"arithmetic expansion {short}",
        "brace_expression": f"brace expansion {short}",
        "extglob_pattern": f"extended glob {short}",
    }.get(kind, f"unsupported syntax {short}")


def _dq_unescape(m: re.Match[str]) -> str:
    char = m.group(1)
    return "" if char == "\n" else char


def _dq(text: str) -> str:
    """Double-quoted content: backslash escapes only $ ` " \\ and newline."""
    return _DQ_ESCAPE.sub(_dq_unescape, text) if "\\" in text else text


def _quoted(text: str, parts: list[str], marks: list[str]) -> None:
    parts.append(text)
    marks.append("\0" * len(text))


def _unquoted(text: str, parts: list[str], marks: list[str]) -> None:
    """An unquoted word: a backslash quotes the next character."""
    if "\\" not in text:
        parts.append(text)
        marks.append(text)
        return
    i, n = 0, len(text)
    while i < n:
        char = text[i]
        if char == "\\" and i + 1 < n:
            nxt = text[i + 1]
            if nxt != "\n":
                parts.append(nxt)
                marks.append("\0")
            i += 2
        else:
            parts.append(char)
            marks.append(char)
            i += 1


def _unquoted_issues(
    marks: str, value: str, text: str, issues: list[str], pattern: bool,
) -> None:
    """Expansions bash applies to unquoted characters (``marks`` masks quoted ones)."""
    if not marks.strip("\0"):
        return
    short = _short(text)
    if not pattern and _GLOB.search(marks):
        issues.append(f"unquoted glob {short}")
    if not pattern and _BRACE.search(marks):
        issues.append(f"brace expansion {short}")
    if "$" in marks or "`" in marks:
        issues.append(f"unquoted {'$' if '$' in marks else '`'} in {short}")
    if marks[0] == "~" and value != "~" and not value.startswith("~/"):
        issues.append(f"tilde expansion {short}")
    if marks[0] == "=" and value not in ("=", "=="):
        issues.append(f"leading = (zsh expands =cmd) in {short}")
    if "!" in marks and value not in ("!", "!="):
        issues.append(f"! (history expansion) in {short}")


# -------------------------------------------------------------------- heredocs
_SUBSTITUTIONS = frozenset({"command_substitution", "process_substitution"})


def _read_heredocs(root: Node, text: str) -> tuple[dict[int, Word], list[str]]:
    """Every heredoc body as bash reads it, keyed by operator offset, or an error.

    Groups the heredocs of one line (their bodies follow that line in order) and checks
    that tree-sitter put every operator, delimiter word and delimiter line exactly where
    bash does; its body node may only start later, past blanks it skipped.
    """
    found, literal = _heredoc_nodes(root)
    if len(found) > MAX_SIMPLE_COMMANDS:
        return {}, [f"more than {MAX_SIMPLE_COMMANDS} heredocs: not analysed"]
    nodes = sorted(found, key=lambda node: node.start_byte)
    words: dict[int, Word] = {}
    read_until = -1
    i = 0
    try:
        _every_operator_is_known(text, literal)
        while i < len(nodes):
            parts = _heredoc_parts(nodes[i])
            if parts[0].start_byte < read_until:
                raise HeredocError("a heredoc inside another heredoc's body")
            first = read_delimiter(text, parts[0].start_byte)
            line_end, more = scan_line(text, first.word_end, nested=_nested(nodes[i]))
            if i + 1 + len(more) > len(nodes):
                raise HeredocError("more heredocs on a line than the parser found")
            pos = line_end + 1
            for k, op in enumerate((first, *more)):
                body = read_body(text, pos, op)
                _compare_heredoc(text, op, body, _heredoc_parts(nodes[i + k]))
                issue, runs = (None, False) if op.quoted else body_expansions(body.value)
                words[op.start] = Word(
                    text[body.start:body.end], body.value, (issue,) if issue else (),
                    body.start, body.end, runs_code=runs,
                )
                pos = body.next
            read_until = pos
            i += 1 + len(more)
    except HeredocError as exc:
        return words, [f"heredoc: {exc}"]
    return words, []


# Nodes whose text may hold "<<" that is no heredoc operator (quoted, a comment, a
# body, arithmetic), and the operator tokens themselves.
_LITERAL_HOLDERS = frozenset({
    "string", "raw_string", "ansi_c_string", "translated_string", "comment",
    "heredoc_body", "heredoc_start", "arithmetic_expansion", "<<", "<<-", "<<<",
})


def _heredoc_nodes(root: Node) -> tuple[list[Node], list[tuple[int, int]]]:
    """The heredoc_redirect nodes, and the spans that explain any other "<<"."""
    found: list[Node] = []
    literal: list[tuple[int, int]] = []
    cursor = root.walk()  # a cursor walk is linear; Node.children on a long list is not
    while True:
        node = cursor.node
        assert node is not None
        kind = node.type
        if kind in _LITERAL_HOLDERS:
            literal.append((node.start_byte, node.end_byte))
        elif kind == "heredoc_redirect":
            found.append(node)
        if cursor.goto_first_child():  # heredocs nest in strings and substitutions too
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return found, literal


def _every_operator_is_known(text: str, literal: list[tuple[int, int]]) -> None:
    """Each unescaped "<<" is an operator node or inside a literal one.

    A "<<" tree-sitter took for something else (say ``[ x <<EOF ]``, a test operator
    to it, a heredoc to bash) would leave the body to be parsed as commands.
    """
    spans = sorted(literal)  # one pass over the spans, in step with the "<<"s (linear)
    k = 0
    covered_to = -1  # end of the union of the spans that start at or before pos
    pos = text.find("<<")
    while pos != -1:
        while k < len(spans) and spans[k][0] <= pos:
            covered_to = max(covered_to, spans[k][1])
            k += 1
        if pos >= covered_to and not _backslashes_before(text, pos) % 2:
            raise HeredocError(f"'<<' the parser did not read as an operator at offset {pos}")
        pos = text.find("<<", pos + 1)


def _heredoc_parts(node: Node) -> tuple[Node, Node | None, Node | None, Node | None]:
    """The operator, delimiter word, body and delimiter line nodes of one heredoc."""
    op = start = body = end = None
    for child in node.children:
        kind = child.type
        if kind in ("<<", "<<-") and op is None:
            op = child
        elif kind == "heredoc_start" and start is None:
            start = child
        elif kind == "heredoc_body" and body is None:
            body = child
        elif kind == "heredoc_end" and end is None:
            end = child
    if op is None:
        raise HeredocError("a heredoc without its operator")
    return op, start, body, end


def _nested(node: Node) -> bool:
    """Inside a substitution (True); inside a heredoc body is refused."""
    parent = node.parent
    nested = False
    while parent is not None:
        if parent.type == "heredoc_body":
            raise HeredocError("a heredoc inside another heredoc's body")
        nested = nested or parent.type in _SUBSTITUTIONS
        parent = parent.parent
    return nested


def _compare_heredoc(
    text: str, op: HeredocOp, body: HeredocBody,
    parts: tuple[Node, Node | None, Node | None, Node | None],
) -> None:
    op_node, start, body_node, end = parts
    where = _short(text[op.start:op.word_end])
    if op_node.start_byte != op.start or op_node.type != op.op:
        raise HeredocError(f"bash reads the operator {where!r} elsewhere")
    if start is None or (start.start_byte, start.end_byte) != (op.word_start, op.word_end):
        raise HeredocError(f"bash reads the delimiter of {where!r} differently")
    if end is None or end.is_missing or (end.start_byte, end.end_byte) != (
        body.delimiter_start, body.delimiter_end,
    ):
        raise HeredocError(f"bash ends the body of {where!r} elsewhere")
    if body_node is not None and not (
        body.start <= body_node.start_byte <= body_node.end_byte <= end.start_byte
        and not text[body.start:body_node.start_byte].strip(" \t\n")
    ):
        raise HeredocError(f"bash starts the body of {where!r} elsewhere")


# ----------------------------------------------------------------------- parse
def _syntax_errors(root: Node, src: _Source) -> list[str]:
    errors: list[str] = []
    stack = [root]
    while stack and len(errors) < _MAX_ERRORS:
        node = stack.pop()
        if node.is_missing:
            row, col = node.start_point
            errors.append(f"missing {node.type!r} at line {row + 1}, column {col + 1}")
        elif node.is_error:
            row, col = node.start_point
            errors.append(
                f"syntax error at line {row + 1}, column {col + 1} near {_short(src.of(node))!r}"
            )
        elif node.has_error:
            stack.extend(reversed(node.children))
    return errors or ["syntax error"]


def _status_node(root: Node) -> Node | None:
    """The node whose exit status the whole command returns, if that is clear."""
    node: Node | None = root
    while node is not None:
        kind = node.type
        if kind in ("command", "test_command"):
            return node
        if kind == "redirected_statement":
            node = _redirected_tail(node)
        elif kind in ("program", "list", "pipeline", "subshell") or (
            kind == "compound_statement" and node.child(0).type == "{"
        ):
            node = _last_statement(node)
        else:
            return None
    return None


def _last_statement(node: Node) -> Node | None:
    """The last named, non-comment child, unless the node ends in "&" (background)."""
    count = node.child_count
    if count and node.child(count - 1).type == "&":
        return None
    for i in range(node.named_child_count - 1, -1, -1):
        child = node.named_child(i)
        if child is not None and child.type != "comment":
            return child
    return None


def _redirected_tail(node: Node) -> Node | None:
    """A heredoc may swallow the rest of its pipeline; that part then runs last."""
    body: Node | None = None
    for child in node.children:
        if child.type == "heredoc_redirect":
            statements = [c for c in child.children if c.type in _STATEMENTS]
            if statements:
                return statements[-1]
        elif child.is_named and child.type not in _REDIRECTS and body is None:
            body = child
    return body


def _glued_continuation(command: str) -> bool:
    """A backslash-newline not preceded by an unescaped blank joins two words in bash."""
    start = command.find("\\\n")
    while start != -1:
        slashes = _backslashes_before(command, start + 1)  # those before the newline
        if slashes % 2:  # a real continuation, not an escaped backslash
            before = start - slashes + 1  # index of the first of those backslashes
            if before > 0 and (
                command[before - 1] not in " \t\n"
                or _backslashes_before(command, before - 1) % 2
            ):
                return True
        start = command.find("\\\n", start + 1)
    return False


def _backslashes_before(text: str, index: int) -> int:
    count = 0
    while index - count - 1 >= 0 and text[index - count - 1] == "\\":
        count += 1
    return count


def _pre_errors(command: str) -> list[str]:
    """Places where bash and tree-sitter are known to read a command differently."""
    errors: list[str] = []
    if "\\\n" in command and _glued_continuation(command):
        errors.append("line continuation inside a word (bash joins what tree-sitter splits)")
    stripped = command.rstrip(" \t\n")
    if stripped.endswith("\\") and (len(stripped) - len(stripped.rstrip("\\"))) % 2:
        errors.append("trailing backslash")
    return errors


def _parse(command: str) -> ParsedCommand:
    if len(command) > MAX_COMMAND_CHARS:
        error = f"the command is {len(command)} characters long (more than {MAX_COMMAND_CHARS}): not analysed"
        return ParsedCommand(command, (), (error,), (), None)
    src = _Source(command)
    # A trailing newline keeps tree-sitter-bash from a slow ambiguous path on pipes.
    tree = _parser().parse(src.data + b"\n")
    root = tree.root_node
    builder = _Builder(src, {})
    try:
        if "<<" in command:
            builder.heredocs, heredoc_errors = _read_heredocs(root, command)
            builder.errors.extend(heredoc_errors)
        builder.gap(0, root.start_byte, True)
        builder.gap(root.end_byte, len(src.data), True)
        builder.statement(root)
    except _TooLarge as exc:
        builder.errors.append(str(exc))
    except Exception as exc:  # a tree shape we did not foresee: report, never guess
        builder.errors.append(f"internal parser error: {type(exc).__name__}: {exc}")
    errors = _pre_errors(command) + builder.errors
    if root.has_error:
        errors.extend(_syntax_errors(root, src))
    drafts = sorted(builder.drafts, key=lambda d: d.start)
    commands = tuple(_finish(d, src) for d in drafts)
    status = _status_node(root)
    index = None
    if status is not None:
        starts = [d.start for d in drafts]
        if status.start_byte in starts:
            index = starts.index(status.start_byte)
    return ParsedCommand(command, commands, tuple(errors), tuple(builder.constructs), index)


def _finish(draft: _Draft, src: _Source) -> SimpleCommand:
    return SimpleCommand(
        tuple(draft.words), tuple(draft.assignments), tuple(draft.redirects),
        src.span(draft.start, draft.end), draft.start, draft.end,
    )


@lru_cache(maxsize=2048)
def parse_command(command: str) -> ParsedCommand:
    """Parse ``command`` (cached: results are immutable). Errors are in ``.errors``."""
    return _parse(command)


def split_command(command: str) -> list[SimpleCommand]:
    """The simple commands of ``command`` in source order; ShellParseError if it fails."""
    parsed = parse_command(command)
    if parsed.errors:
        raise ShellParseError(command, parsed.errors)
    return list(parsed.commands)


def subcommand_strings(command: str) -> list[str] | None:
    """Each simple command as text, for permission-rule matching.

    None when splitting would hide something: a parse error, control flow or a function
    (which commands run depends on more than the text), a command substitution or an
    expansion bash evaluates as code (its code would hide inside a word of an otherwise
    matching command), or a builtin that evaluates an argument as code (_evaluation.py).
    """
    parsed = parse_command(command)
    if parsed.errors:
        return None
    if any(c.kind not in _SPLITTABLE for c in parsed.constructs):
        return None
    if any(cmd.runs_code or _evaluates_arguments(cmd) for cmd in parsed.commands):
        return None
    return [cmd.display for cmd in parsed.commands]


def _evaluates_arguments(cmd: SimpleCommand) -> bool:
    """A builtin that evaluates an argument as code (``printf -v 'a[$(x)]'``, ``let``...),
    also behind the wrappers allow rules look through."""
    words = tuple(word.value if word.is_static else None for word in cmd.words)
    skip = wrapper_prefix_len([w or "" for w in words]) or 0
    return bool(command_evaluates(words) or command_evaluates(words[skip:]))


def _single(command: str) -> SimpleCommand | None:
    parsed = parse_command(command)
    if parsed.errors or parsed.constructs or len(parsed.commands) != 1:
        return None
    return parsed.commands[0]


def strip_env_prefix(command: str, *, safe_only: bool = False) -> str:
    """Drop leading ``VAR=value`` assignments from one simple command.

    With ``safe_only`` only the harmless variables of SAFE_ENV_VARS with plain values
    are dropped (for allow rules); otherwise all of them (for deny and ask rules).
    Anything that is not a single simple command comes back unchanged.
    """
    cmd = _single(command)
    if cmd is None or not cmd.assignments or not cmd.words:
        return command
    keep = len(cmd.assignments)
    for i, assignment in enumerate(cmd.assignments):
        raw = assignment.text.partition("=")[2]
        if safe_only and not (assignment.name in SAFE_ENV_VARS and SAFE_ENV_VALUE.fullmatch(raw)):
            keep = i
            break
    start = cmd.assignments[keep].start if keep < len(cmd.assignments) else cmd.words[0].start
    return command[start:].strip()


def wrapper_prefix_len(
    argv: Sequence[str], wrappers: Collection[str] = WRAPPER_OPTIONS.keys(),
) -> int | None:
    """How many leading words are wrappers and their options (None: cannot tell)."""
    i = 0
    while i < len(argv) and argv[i] in wrappers:
        after = _skip_wrapper(argv, i, WRAPPER_OPTIONS[argv[i]])
        if after is None:
            return None
        i = after
    return i


_NICE_SHORTHAND = re.compile(r"-\d+")


def _skip_wrapper(argv: Sequence[str], i: int, options: Mapping[str, bool]) -> int | None:
    name = argv[i]
    j = i + 1
    while j < len(argv) and argv[j].startswith("-") and argv[j] != "-":
        word = argv[j]
        j += 1
        if word == "--":
            break
        if name == "nice" and _NICE_SHORTHAND.fullmatch(word):
            continue
        flag, eq, _ = word.partition("=")
        if flag in options:
            if options[flag] and not eq:
                if j >= len(argv):
                    return None
                j += 1
            continue
        if not word.startswith("--") and options.get(word[:2]):
            continue  # attached value: -n10, -oL, -k5
        return None
    if name == "timeout":
        if j >= len(argv) or not TIMEOUT_DURATION.fullmatch(argv[j]):
            return None
        j += 1
    return j


def strip_wrappers(command: str) -> str:
    """Drop leading timeout/time/nice/stdbuf/nohup (with their options) from a command."""
    cmd = _single(command)
    if cmd is None or cmd.assignments or cmd.is_dynamic:
        return command
    skip = wrapper_prefix_len(cmd.argv)
    if not skip or skip >= len(cmd.words):
        return command
    return command[cmd.words[skip].start:].strip()
