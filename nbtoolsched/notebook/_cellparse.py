"""Reading a ``%%toolcall`` cell body into tool_use blocks, with clear errors.

Accepted bodies: a JSON (or YAML) list of tool_use blocks, one block, a whole assistant
message, a content list (text blocks are skipped), or the short YAML form
``- Read: {file_path: README.md}``; a bare value fills the tool's one required field
(``- Bash: ls -la``). A string value that is exactly ``$name`` is replaced by ``name``
from the user's namespace; nothing is ever evaluated (``$$`` keeps a literal ``$``).
Line numbers in errors count from the top of the cell (``first_line`` is the body's
first line there: 2 under a ``%%toolcall`` line). Pure: no IPython here.
"""

from __future__ import annotations

from .._errors import CellError

import difflib
import json
import re
from typing import Any, Callable, Iterable, Iterator, Mapping

import yaml

__all__ = ["CellError", "IdMaker", "MAX_DEPTH", "MAX_VALUES", "ParsedCell", "parse_cell", "substitute_names"]

_NAME = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")
_BLOCK_KEYS = frozenset({"type", "id", "name", "input", "cache_control"})
_EXAMPLE = "for example, one call per line: - Read: {file_path: README.md}  or  - Bash: ls -la"
_QUOTE_HINT = ("if a value holds ': ', ' #', a comma or brackets, or starts with [ { * & ! | > % @, put it in "
               "single quotes, e.g. - Bash: 'echo a: b'")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_DOUBLE_QUOTED_ESCAPE = re.compile(r'"(?:[^"\\\n]|\\.)*\\[^"\\\n](?:[^"\\\n]|\\.)*"')


class ParsedCell(list[dict[str, Any]]):
    """The blocks, plus warnings about what the body probably did not mean."""

    def __init__(self, blocks: Iterable[dict[str, Any]], warnings: Iterable[str] = ()) -> None:
        super().__init__(blocks)
        self.warnings = list(warnings)
# Limits that keep a hostile or mistaken cell cheap: real tool inputs are a few levels deep.
MAX_DEPTH = 100  # containers inside containers
MAX_VALUES = 100_000  # values, counting each YAML alias and $name as everything it stands for
# Brackets outside quoted strings ('...' too: a flow-style YAML body also starts with "{").
_JSON_SPECIAL = re.compile(r"[\"'\[\]{}]")
_DOUBLE_QUOTED = re.compile(r'"[^"\\]*+(?:\\.[^"\\]*+)*+')  # up to (not including) the closing quote


class IdMaker:
    """Deterministic ids for calls written without one: toolu_nb_0001, toolu_nb_0002, ..."""

    def __init__(self, prefix: str = "toolu_nb_") -> None:
        self.prefix = prefix
        self.count = 0
        self.seen: set[str] = set()  # every id this session has used, given or made

    def __call__(self, taken: set[str]) -> str:
        while True:
            self.count += 1
            made = f"{self.prefix}{self.count:04d}"
            if made not in taken and made not in self.seen:
                self.seen.add(made)
                return made


def parse_cell(
    body: str,
    namespace: Mapping[str, Any],
    known_tool: Callable[[str], bool],
    tool_names: Iterable[str],
    make_id: IdMaker,
    *,
    required_fields: Callable[[str], list[str]] | None = None,
    first_line: int = 1,
) -> ParsedCell:
    """The cell's tool_use blocks as dicts, ids filled in; CellError for anything wrong.

    ``required_fields(name)`` lists a tool's required input fields, so a bare value in
    the short form can fill the one there is; ``first_line`` is the body's first line
    number in the cell (errors count from the cell's top)."""
    stripped = body.lstrip()
    offset = first_line - 1 + body[: len(body) - len(stripped)].count("\n")
    try:
        data, warnings = _load(body, namespace)
        raw_calls = _calls_from(data)
        # A misspelt tool first: `- Raed: README.md` is a typo of Read, not an input that is
        # no mapping (its bare value cannot fill a field of a tool nobody knows).
        _check_tools([{"name": n} for n in map(_written_name, raw_calls) if n is not None], known_tool, list(tool_names))
        blocks = [_block(i, item, required_fields) for i, item in enumerate(raw_calls, 1)]
        _fill_ids(blocks, make_id)
    except CellError as err:
        raise CellError(_shift_lines(str(err), offset)) from None
    return ParsedCell(blocks, [_shift_lines(w, offset) for w in warnings])


def _shift_lines(message: str, offset: int) -> str:
    """``line N`` in a message, counted from the cell's top instead of the body's."""
    if not offset:
        return message
    return re.sub(r"\bline (\d+)", lambda m: f"line {int(m.group(1)) + offset}", message)


# -- loading -----------------------------------------------------------------------------------
def _load(body: str, namespace: Mapping[str, Any]) -> tuple[Any, list[str]]:
    text = body.strip()
    warnings: list[str] = []
    if not text:
        raise CellError("the cell is empty: write the tool calls to run, " + _EXAMPLE)
    if _NAME.fullmatch(text):
        data: Any = text  # the whole body is one $name
    elif text[0] in "[{":
        _check_json_depth(text)
        try:
            data = json.loads(text)
        except json.JSONDecodeError as err:
            data = _yaml_or(text, f"the cell is not valid JSON: {err.msg} (line {err.lineno}, column {err.colno})")
            warnings = _yaml_warnings(text, data)
        except ValueError as err:  # e.g. an integer of more than 4,300 digits
            raise CellError(f"the cell has a value that cannot be read: {err}") from None
    else:
        data = _yaml_or(text, None)
        warnings = _yaml_warnings(text, data)
    return _Substitution(namespace, text).run(data), warnings


def _check_json_depth(text: str) -> None:
    """Refuse JSON nested deeper than MAX_DEPTH before parsing it (the parser recurses)."""
    depth = 0
    for at, char in _brackets(text):
        if char in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                line = text.count("\n", 0, at) + 1
                raise CellError(f"the cell is nested more than {MAX_DEPTH} levels deep (line {line}); tool inputs are never that deep")
        elif char in "]}":
            depth = max(0, depth - 1)


def _brackets(text: str) -> Iterator[tuple[int, str]]:
    """Brackets outside '...' and "..." strings (a quote left open is not a string), in
    time linear in ``text``.

    One regex over the whole text (a string, or else a bracket) tried every quote as a
    start and scanned on from each to the end of an unclosed string: minutes for a
    200 KB cell of escaped quotes. Here a scan that finds no closing quote also settles
    every quote it passed: each of those was escaped, and a string starting there would
    be read from the next character on exactly as this one was, so it fails where this
    one did. A single-quoted string that does not close means no later one closes.
    """
    pos, unclosed_until, single_quotes_close = 0, -1, True
    while (found := _JSON_SPECIAL.search(text, pos)) is not None:
        at, char = found.start(), found.group()
        pos = at + 1
        if char == '"':
            if at >= unclosed_until:
                end = _DOUBLE_QUOTED.match(text, at).end()  # type: ignore[union-attr]
                if text.startswith('"', end):
                    pos = end + 1
                else:
                    unclosed_until = end
        elif char == "'":
            end = text.find("'", at + 1) if single_quotes_close else -1
            if end >= 0:
                pos = end + 1
            else:
                single_quotes_close = False
        else:
            yield at, char


def _yaml_or(text: str, json_error: str | None) -> Any:
    try:
        return yaml.load(text, Loader=_CellLoader)  # noqa: S506 - a SafeLoader with limits
    except _TooMuch as err:
        mark = err.problem_mark
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        raise CellError(f"the cell {err.problem}{where}") from None
    except yaml.YAMLError as err:
        if json_error:
            raise CellError(json_error) from None
        mark = getattr(err, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        where = f" (line {line}, column {mark.column + 1})" if mark is not None else ""
        problem = getattr(err, "problem", None) or str(err).splitlines()[0]
        shown = ""
        if line is not None and 0 < line <= len(text.splitlines()):
            shown = f": {text.splitlines()[line - 1].strip()[:80]!r}"
        hint = _QUOTE_HINT
        closer = "}" if "or '}'" in problem else "]"
        opener = "{" if closer == "}" else "["
        if "<stream end>" in problem and problem.startswith("expected ',' or") and text.count(opener) > text.count(closer):
            # The bracket really is missing (not hidden by a ' #' comment): say only that.
            raise CellError(f"the cell cannot be read (line {line}): a {opener} is never closed; add the {closer}") from None
        if "escape" in problem:
            hint = "in double quotes a backslash starts an escape; put the value in single quotes to keep backslashes"
        raise CellError(f"the cell cannot be read{where}{shown} ({_plain(problem)}); {hint}. " + _EXAMPLE) from None
    except ValueError as err:  # e.g. an integer of more than 4,300 digits, or 2024-13-45
        raise CellError(f"the cell has a value that cannot be read: {err}") from None


def _plain(problem: str) -> str:
    """YAML's wording, said for people who do not know YAML."""
    replacements = {
        "mapping values are not allowed here": "a ': ' inside a value reads as a new key",
        "expected ',' or '}', but got": "a value inside { } ended early; it holds a character YAML reads as syntax, near",
        "expected ',' or ']', but got": "a value inside [ ] ended early; it holds a character YAML reads as syntax, near",
        "found character '\\t' that cannot start any token": "a tab is not allowed for indentation",
        "could not find expected ':'": "a line is not 'key: value'",
    }
    for yaml_words, ours in replacements.items():
        if problem.startswith(yaml_words):
            return ours + problem[len(yaml_words):]
    return problem


def _yaml_warnings(text: str, data: Any) -> list[str]:
    """What a YAML body probably did not mean: escapes in double quotes, dropped comments."""
    warnings = []
    lines = text.splitlines()
    if _has_control(data):
        for number, line in enumerate(lines, 1):
            if _DOUBLE_QUOTED_ESCAPE.search(line):
                warnings.append(f'line {number}: a backslash in double quotes is an escape ("\\b" is a backspace); '
                                "put the value in single quotes to keep the backslashes")
                break
    for number, line in enumerate(lines, 1):
        if _unquoted_comment(line):
            warnings.append(f"line {number}: ' #' starts a YAML comment, so the rest of the line was dropped; "
                            "quote the value to keep it")
    return warnings


def _has_control(value: Any) -> bool:
    if isinstance(value, str):
        return bool(_CONTROL.search(value))
    if isinstance(value, dict):
        return any(_has_control(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_control(v) for v in value)
    return False


def _unquoted_comment(line: str) -> bool:
    """A ' #' after a value on the line, outside quotes (a comment line alone is fine)."""
    if line.lstrip().startswith("#"):
        return False
    quote = None
    for i, char in enumerate(line):
        if quote:
            if char == quote:
                quote = None
        elif char in "'\"":
            quote = char
        elif char == "#" and i > 0 and line[i - 1] in " \t" and line[:i].strip() not in ("", "-"):
            return True
    return False


class _TooMuch(yaml.MarkedYAMLError):
    """A YAML document past the cell's limits (depth, or values once aliases expand)."""


class _CellLoader(yaml.SafeLoader):
    """SafeLoader that bounds nesting and alias expansion while composing.

    Each alias counts as every value it stands for, so an alias bomb (each line
    repeating the one before several times) stops after a few lines instead of growing
    exponentially; an alias to a value still being read (``&a [*a]``) is a cycle.
    """

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0
        self._values = 0
        self._sizes: dict[int, int] = {}  # id(node) -> values it stands for, once composed

    def compose_node(self, parent: Any, index: Any) -> Any:
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent):
            node = super().compose_node(parent, index)
            size = self._sizes.get(id(node))
            if size is None:
                raise _TooMuch(problem=f"has an alias *{event.anchor} inside the value it names (a cycle)", problem_mark=event.start_mark)  # type: ignore[arg-type]  # libyaml's Mark has the same fields
            self._count(size, event)
            return node
        nests = isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent))
        if nests:
            self._depth += 1
            if self._depth > MAX_DEPTH:
                raise _TooMuch(problem=f"is nested more than {MAX_DEPTH} levels deep", problem_mark=event.start_mark)
        before = self._values
        self._count(1, event)
        try:
            node = super().compose_node(parent, index)
        finally:
            self._depth -= nests
        self._sizes[id(node)] = self._values - before
        return node

    def _count(self, values: int, event: Any) -> None:
        self._values += values
        if self._values > MAX_VALUES:
            raise _TooMuch(
                problem=f"holds more than {MAX_VALUES:,} values once its aliases (*name) are expanded", problem_mark=event.start_mark
            )


def substitute_names(value: Any, namespace: Mapping[str, Any]) -> Any:
    """Replace every string that is exactly ``$name`` by the namespace's value; ``$$x`` -> ``$x``."""
    return _Substitution(namespace, "").run(value)


class _Limit(Exception):
    """A value past the cell's limits; the message completes "the cell ..." or "$name: its value ..."."""


class _Substitution:
    """One walk over the parsed cell: ``$names`` replaced, models made plain, limits kept.

    The result is a fresh tree of dicts and lists (a tool never holds the notebook's own
    objects), at most MAX_DEPTH deep and MAX_VALUES large, and without cycles: a variable
    whose value contains itself is refused instead of recursing forever.
    """

    def __init__(self, namespace: Mapping[str, Any], text: str) -> None:
        self.namespace = namespace
        self.text = text
        self.values = 0
        self.open: set[int] = set()  # ids of the containers on the current path

    def run(self, data: Any) -> Any:
        try:
            return self._walk(data, 0, True)
        except _Limit as err:
            raise CellError(f"the cell {err}") from None

    def _walk(self, value: Any, depth: int, from_cell: bool) -> Any:
        self.values += 1
        if self.values > MAX_VALUES:
            raise _Limit(f"holds more than {MAX_VALUES:,} values")
        if isinstance(value, str):
            if not from_cell:
                return value
            match = _NAME.fullmatch(value)
            if match:
                return self._named(match.group(1), depth)
            return value[1:] if value.startswith("$$") else value
        if not from_cell:
            value = _dumped(value)
        if not isinstance(value, (list, tuple, dict)):
            return value
        if depth >= MAX_DEPTH:
            raise _Limit(f"is nested more than {MAX_DEPTH} levels deep")
        if id(value) in self.open:
            raise _Limit("contains itself (a cyclic reference); a tool input must be plain data")
        self.open.add(id(value))
        try:
            if isinstance(value, dict):
                return {key: self._walk(item, depth + 1, from_cell) for key, item in value.items()}
            return [self._walk(item, depth + 1, from_cell) for item in value]
        finally:
            self.open.discard(id(value))

    def _named(self, name: str, depth: int) -> Any:
        value = _lookup(name, self.namespace)
        try:
            return self._walk(value, depth, False)
        except _Limit as err:
            raise CellError(f"${name}{self._line_of(name)}: its value {err}") from None

    def _line_of(self, name: str) -> str:
        found = re.search(rf"(?<!\$)\${name}(?![A-Za-z0-9_])", self.text)
        if found is None:
            return ""
        line = self.text.count("\n", 0, found.start()) + 1
        return f" (line {line})"


def _lookup(name: str, namespace: Mapping[str, Any]) -> Any:
    if name not in namespace:
        raise CellError(f"${name}: there is no variable {name!r} in the notebook (write $${name} for a literal ${name})")
    return namespace[name]


def _dumped(value: Any) -> Any:
    """A pydantic model (a block, a message) as its dict; anything else as is."""
    dump = getattr(value, "to_dict", None) or getattr(value, "model_dump", None)
    if callable(dump) and not isinstance(value, type):
        return dump()
    return value


# -- shapes --------------------------------------------------------------------------------------
def _calls_from(data: Any) -> list[Any]:
    if isinstance(data, dict):
        if "role" in data or "content" in data:
            return _from_message(data)
        data = [data] if _looks_like_block(data) or len(data) == 1 else _many_short(data)
    if not isinstance(data, list):
        raise CellError(f"expected a list of tool calls, got {_kind(data)}; " + _EXAMPLE)
    calls = [item for item in data if not _is_other_block(item)]
    if not calls:
        raise CellError("the cell has no tool_use blocks to run")
    return calls


def _from_message(message: dict[str, Any]) -> list[Any]:
    role = message.get("role", "assistant")
    if role != "assistant":
        raise CellError(f"a message to run must come from the assistant, this one has role {role!r}")
    content = message.get("content")
    if not isinstance(content, list):
        raise CellError(f"the message's content must be a list of blocks, got {_kind(content)}")
    return _calls_from(content)


def _many_short(data: dict[str, Any]) -> list[Any]:
    """``{Read: {...}, Grep: {...}}``: a mapping of several tools reads as several calls."""
    return [{name: value} for name, value in data.items()]


def _is_other_block(item: Any) -> bool:
    """Text, thinking and other non-tool blocks in a content list are skipped."""
    return isinstance(item, dict) and isinstance(item.get("type"), str) and item["type"] != "tool_use"


def _looks_like_block(item: dict[str, Any]) -> bool:
    return "name" in item and set(item) <= _BLOCK_KEYS


def _block(number: int, item: Any, required_fields: Callable[[str], list[str]] | None = None) -> dict[str, Any]:
    if not isinstance(item, dict):
        raise CellError(f"call {number}: expected a tool call (a mapping), got {_kind(item)}")
    if _looks_like_block(item):
        name, tool_input, block_id = item.get("name"), item.get("input", {}), item.get("id")
    elif len(item) == 1:
        name, tool_input = next(iter(item.items()))
        block_id = None
        tool_input = {} if tool_input is None else tool_input
        if not isinstance(tool_input, dict) and isinstance(name, str) and required_fields is not None:
            tool_input = _fill_required(number, name, tool_input, required_fields)
    else:
        keys = ", ".join(map(str, item))
        raise CellError(f"call {number}: a short-form call has one key, the tool's name (got {keys}); " + _EXAMPLE)
    if not isinstance(name, str) or not name.strip():
        raise CellError(f"call {number}: the tool name must be a non-empty string, got {_kind(name)}")
    if not isinstance(tool_input, dict):
        raise CellError(f"call {number} ({name}): the input must be a mapping of arguments, got {_kind(tool_input)}")
    if block_id is not None and (not isinstance(block_id, str) or not block_id.strip()):
        raise CellError(f"call {number} ({name}): the id must be a non-empty string, got {_kind(block_id)}")
    return {"type": "tool_use", "id": block_id, "name": name, "input": tool_input}


def _written_name(item: Any) -> str | None:
    """The tool name a call is written with, if it has a readable one (else _block says why)."""
    if not isinstance(item, dict):
        return None
    name = item.get("name") if _looks_like_block(item) else (next(iter(item)) if len(item) == 1 else None)
    return name if isinstance(name, str) and name.strip() else None


def _fill_required(number: int, name: str, value: Any, required_fields: Callable[[str], list[str]]) -> Any:
    """``- Bash: ls -la``: a bare value is the tool's one required field."""
    try:
        fields = required_fields(name)
    except Exception:  # noqa: BLE001 - an unknown tool is reported by _check_tools
        return value
    if len(fields) == 1:
        return {fields[0]: value}
    if fields:
        raise CellError(f"call {number} ({name}): a bare value fills a tool's one required field, but {name} needs "
                        f"{', '.join(fields)}; write - {name}: {{{fields[0]}: ..., {fields[1]}: ...}}")
    return value


def _check_tools(blocks: list[dict[str, Any]], known_tool: Callable[[str], bool], names: list[str]) -> None:
    for number, block in enumerate(blocks, 1):
        name = block["name"]
        if known_tool(name):
            continue
        close = difflib.get_close_matches(name, names, n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        listing = ", ".join(sorted(names)) or "none"
        raise CellError(f"call {number}: unknown tool {name!r}.{hint} Known tools: {listing}")


def _fill_ids(blocks: list[dict[str, Any]], make_id: IdMaker) -> None:
    seen: dict[str, int] = {}
    for number, block in enumerate(blocks, 1):
        block_id = block["id"]
        if block_id is None:
            continue
        if block_id in seen:
            raise CellError(f"duplicate tool_use id {block_id!r} (calls {seen[block_id]} and {number}): every call needs its own id")
        seen[block_id] = number
    taken = set(seen)
    make_id.seen.update(taken)
    for block in blocks:
        if block["id"] is None:
            block["id"] = new_id = make_id(taken)
            taken.add(new_id)


def _kind(value: Any) -> str:
    if value is None:
        return "nothing"
    if isinstance(value, str):
        shown = value if len(value) <= 30 else value[:27] + "..."
        return f"the text {shown!r}"
    return f"a {type(value).__name__}"
