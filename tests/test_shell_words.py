"""The shell word splitter: shlex's answers where shlex follows the shell, bash's where it does not."""

from __future__ import annotations

import shlex

import pytest
from fuzz_profiles import examples
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from hpcconf.parsers.shell_words import split_words

# Characters where shlex (posix) and bash agree: no '#', '$' or '`' (shlex treats them differently inside
# words or double quotes), so on these the two splitters must give the same words, line continuations aside.
_AGREEING = st.text(alphabet=st.sampled_from(list("ab =-x\"'\\ \t\né")), max_size=40)


@settings(max_examples=examples(300))
@given(text=_AGREEING)
def test_same_words_as_shlex_where_shlex_follows_the_shell(text):
    assume("\\\n" not in text)  # a line continuation: bash joins, shlex keeps the newline
    try:
        expected = shlex.split(text)
    except ValueError:
        with pytest.raises(ValueError):
            split_words(text)
        return
    assert split_words(text) == expected


@pytest.mark.parametrize("text, words", [
    ("-x A=1 -x B='two words'", ["-x", "A=1", "-x", "B=two words"]),
    ('A="x\\$y"', ["A=x$y"]),           # bash: \$ inside double quotes is $
    ('A="x\\y"', ["A=x\\y"]),           # ... and any other backslash stays
    ("a#b c", ["a#b", "c"]),            # '#' inside a word is text
    ("''", [""]),                       # an empty quoted word is a word
    ("a\\\nb", ["ab"]),                 # a line continuation joins
])
def test_words_as_bash_gives_them(text, words):
    assert split_words(text) == words


def test_comment_starts_only_a_word():
    assert split_words("a b#c # d e\nf", comments=True) == ["a", "b#c", "f"]
    assert split_words("a # d", comments=False) == ["a", "#", "d"]


@pytest.mark.parametrize("text", ["'open", '"open', "end\\"])
def test_unclosed_quote_or_trailing_backslash_refused(text):
    with pytest.raises(ValueError):
        split_words(text)
