"""brace_words must make every word bash's brace expansion makes (more is allowed)."""

from __future__ import annotations

import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nbtoolsched.shell._braces import MAX_BRACE_WORDS, brace_words


def bash_words(word: str) -> list[str]:
    out = subprocess.run(["bash", "-c", f"printf '%s\\n' {word}"], capture_output=True, text=True, check=True).stdout
    return out.splitlines()


@pytest.mark.parametrize("word", [
    ".en{v,}", "{.env,x}", "a{b,c{d,e}}f", ".en{a..z}", "{1..3}x", "x{a}y", "{a,b}{c,d}", "{{a,b}}", "a{,}",
    "{1..10..3}", "{01..3}", "{3..-2}", "{a..e..2}", "s{ecret,x}s/k{e,}y.txt", "{,}", "}{a,b}{",
    "x{},}", "z{a.},b}", "{1..x}", "3,{1...{,,a}}", "{-05..3..2}",
])
def test_every_word_bash_makes_is_listed(word):
    assert set(bash_words(word)) <= set(brace_words(word) or ()), word


def test_too_many_words_is_none_not_a_partial_list():
    assert brace_words("{a..z}{a..z}") is None  # 676 words
    assert brace_words("{1..100000000}") is None  # and no time or memory spent making them
    assert len(brace_words("{1..9}{1..9}") or ()) <= MAX_BRACE_WORDS


@settings(deadline=None, max_examples=150)
@given(st.text(alphabet="{},.ab01-", min_size=1, max_size=14))
def test_random_words_agree_with_bash(word):
    ours = brace_words(word)
    if ours is not None:
        assert set(bash_words(word)) <= set(ours), word
