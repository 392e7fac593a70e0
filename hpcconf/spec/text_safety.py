"""Characters no spec string may hold, whatever field it is in.

Every string in a spec ends up in some consumer's grammar: a shell line of the sbatch or the
provisioning script, a Dockerfile instruction, a YAML manifest, ``nccl.conf`` (one ``KEY=VALUE``
per line), a comment of a generated header. A line break in any of them starts a new command,
instruction or key, so control characters (tab excepted), the Unicode line and paragraph
separators (U+0085, U+2028, U+2029: YAML and many editors break lines there) and the
bidirectional overrides that make text read differently from what it is ("Trojan Source") are
refused at load, pointing at the string. Field validators then check each field's own grammar.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator
from typing import Any

from ..diagnostics import Diagnostic
from ..yamlpos import YamlDocument

_BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c")


def forbidden_char(text: str) -> str | None:
    """The first character of ``text`` that no generated file may receive, or None."""
    for ch in text:
        if ch == "\t":
            continue
        if unicodedata.category(ch) in ("Cc", "Zl", "Zp") or ch in _BIDI_CONTROLS:
            return ch
    return None


def describe_char(ch: str) -> str:
    names = {"\n": "a line break (\\n)", "\r": "a carriage return (\\r)", "\x00": "a NUL byte",
             "\x85": "a NEXT LINE (U+0085)", "\u2028": "a LINE SEPARATOR (U+2028)", "\u2029": "a PARAGRAPH SEPARATOR (U+2029)"}
    if ch in names:
        return names[ch]
    name = unicodedata.name(ch, "control character")
    return f"U+{ord(ch):04X} ({name})"


def shown(text: str) -> str:
    """``text`` with every character :func:`forbidden_char` refuses written as an escape (for messages)."""
    return "".join(ch if forbidden_char(ch) is None else ch.encode("unicode_escape").decode("ascii") for ch in text)


def _strings(node: Any, path: tuple[Any, ...]) -> Iterator[tuple[tuple[Any, ...], str, bool]]:
    """(path, text, is_key) for every string key and value under ``node``."""
    if isinstance(node, dict):
        for key, value in node.items():
            if isinstance(key, str):
                yield path + (key,), key, True
            yield from _strings(value, path + (key,))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _strings(value, path + (index,))
    elif isinstance(node, str):
        yield path, node, False


def unsafe_strings(document: YamlDocument) -> list[Diagnostic]:
    """HPC005 at every key or value holding a character :func:`forbidden_char` refuses."""
    found = []
    for path, text, is_key in _strings(document.data, ()):
        ch = forbidden_char(text)
        if ch is None:
            continue
        what = "key" if is_key else "value"
        where = ".".join(shown(str(p)) for p in path) or "(top level)"
        hint = ("write it on one line (a YAML block scalar `|` or `>` keeps a final line break: use `|-` or `>-`)"
                if ch in "\n\r" else "remove it: every generated file reads one setting per line")
        found.append(document.diagnostic(Diagnostic(
            code="HPC005", name="invalid-value",
            message=f"{where}: the {what} holds {describe_char(ch)}, which no generated file can carry safely",
            hint=hint), path, prefer_value=not is_key))
    return found
