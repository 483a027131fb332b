"""Decide whether a jq invocation reads only the files it names.

jq's filter language can load files by itself: ``import "path" as $x;`` reads
``path.json`` (and ``import``/``include`` read ``.jq`` modules), where the path is a
JSON string, so ``\\u`` escapes hide it from any scan of the words; ``-f``, ``-L``,
``--rawfile`` and ``--slurpfile`` load files too, also as a short option inside a
bundle (``-nf``). Such an invocation is neither read-only nor one whose reads can be
told from its words.
"""

from __future__ import annotations

import re
from typing import Sequence

from ._allowlists import JQ_ENV_WORDS, JQ_FILE_OPTIONS, JQ_FILE_WORDS
from ._flags import long_option_matches

__all__ = ["jq_loads_files", "jq_problem"]

_IDENTIFIERS = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SHORT_FILE_OPTIONS = frozenset(o[1] for o in JQ_FILE_OPTIONS if len(o) == 2)
_LONG_FILE_OPTIONS = tuple(o for o in JQ_FILE_OPTIONS if o.startswith("--"))


def jq_loads_files(argv: Sequence[str]) -> str | None:
    """Why jq may read a file its words do not name (None: it reads only named inputs)."""
    for word in argv[1:]:
        if word.startswith("--"):
            if long_option_matches(word, *_LONG_FILE_OPTIONS):
                return f"jq {word.partition('=')[0]} loads code or data from files"
        elif word.startswith("-") and len(word) > 1 and _SHORT_FILE_OPTIONS & set(word[1:]):
            return f"jq {word} loads code or data from files"
        found = JQ_FILE_WORDS.intersection(_IDENTIFIERS.findall(word))
        if found:
            return f"jq filter uses {min(found)} (loads a module or data file)"
    return None


def jq_problem(argv: Sequence[str]) -> str | None:
    """Why ``jq ...`` is not read-only, or None."""
    loads = jq_loads_files(argv)
    if loads:
        return loads
    for word in argv[1:]:
        for blocked in JQ_ENV_WORDS:
            if blocked in word:
                return f"jq filter uses {blocked} (exposes the environment or file names)"
    return None
