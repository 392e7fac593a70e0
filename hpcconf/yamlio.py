"""Deterministic YAML output: block style, keys in the order given, no aliases.

ruamel.yaml's round-trip emitter writes it, in pure Python, node by node: ~60% of a 200-pool build went to the
per-pool documents' dumps. Documents of plain data (dicts with string keys, lists, strings, ``|`` blocks, ints,
bools) are written here directly, in the same layout and with ruamel's own decisions of when a string stays
plain (its emitter's scalar analysis and its resolver, memoised per string); anything else, or a string that
would need double quotes, is dumped by ruamel as before. tests/test_yamlio.py holds both equal on every document
the examples build and on awkward strings.
"""

from __future__ import annotations

from functools import lru_cache
from io import StringIO
from typing import Any, Callable, Optional

from ruamel.yaml import YAML
from ruamel.yaml.scalarstring import LiteralScalarString

MAPPING_INDENT = 2
SEQUENCE_OFFSET = 2  # the dash's column past its parent's; the item's content is two columns further in
WIDTH = 4096
_LONGEST_FAST_SCALAR = 1024  # ruamel folds a plain or quoted scalar past WIDTH: longer ones go to it
_LINE_BREAKS = "\r\x85\u2028\u2029"  # line breaks other than \n: ruamel's literal writer treats them apart


def _yaml() -> YAML:
    yaml = YAML(typ="rt")
    yaml.default_flow_style = False
    yaml.indent(mapping=MAPPING_INDENT, sequence=SEQUENCE_OFFSET + 2, offset=SEQUENCE_OFFSET)
    yaml.width = WIDTH
    yaml.representer.ignore_aliases = lambda *args: True
    return yaml


def ruamel_dump(data: Any) -> str:
    """``data`` as ruamel.yaml's round-trip dumper writes it with hpcconf's settings."""
    stream = StringIO()
    _yaml().dump(data, stream)
    return stream.getvalue()


def dump_yaml(data: Any) -> str:
    fast = fast_dump(data)
    return fast if fast is not None else ruamel_dump(data)


class _NotPlainData(Exception):
    """A value this writer leaves to ruamel."""


def fast_dump(data: Any) -> Optional[str]:
    """``data`` written as :func:`ruamel_dump` writes it, or None where this writer leaves it to ruamel."""
    if type(data) is not dict or not data:
        return None
    lines: list[str] = []
    try:
        _mapping(data, 0, lines, None)
    except _NotPlainData:
        return None
    lines.append("")
    return "\n".join(lines)


@lru_cache(maxsize=1)
def _analysis() -> tuple[Callable[[str], Any], Callable[[str], str]]:
    """ruamel's scalar analysis (its emitter's) and its resolver, as the dumper above has them."""
    from ruamel.yaml.nodes import ScalarNode

    yaml = _yaml()
    yaml.dump({"": ""}, StringIO())  # builds the emitter and resolver with the settings above
    resolver = yaml.resolver
    return yaml.emitter.analyze_scalar, lambda value: resolver.resolve(ScalarNode, value, (True, False))


@lru_cache(maxsize=8192)
def _string(value: str, key: bool) -> str:
    """A plain string as ruamel writes it: plain where its analysis allows that and the plain text reads back as a
    string, else single-quoted; a string ruamel would double-quote raises :class:`_NotPlainData`."""
    if len(value) > _LONGEST_FAST_SCALAR:
        raise _NotPlainData
    analyze, resolve = _analysis()
    analysis = analyze(value)
    reads_as_string = resolve(value) == "tag:yaml.org,2002:str"
    if reads_as_string and analysis.allow_block_plain and not (key and (analysis.empty or analysis.multiline)):
        return value
    if "'" in value or "\n" in value or not analysis.allow_single_quoted or (key and analysis.multiline):
        raise _NotPlainData
    return f"'{value}'"


def _scalar(value: Any, key: bool = False) -> str:
    kind = type(value)
    if kind is str:
        return _string(value, key)
    if key:
        raise _NotPlainData
    if kind is bool:
        return "true" if value else "false"
    if kind is int:
        return str(value)
    raise _NotPlainData  # None, floats, ruamel's own scalar types: ruamel's


def _literal(text: str, column: int, head: str, lines: list[str]) -> None:
    """A ``|`` block ending in exactly one newline, its lines at ``column``."""
    if not text.endswith("\n") or text.endswith("\n\n") or text[0] in " \n" or any(c in text for c in _LINE_BREAKS):
        raise _NotPlainData
    lines.append(head + "|")
    pad = " " * column
    lines.extend(pad + line if line else "" for line in text[:-1].split("\n"))


def _mapping(data: dict[Any, Any], column: int, lines: list[str], lead: Optional[str]) -> None:
    """``data``'s keys at ``column``; ``lead`` starts the first line instead (a sequence item's ``- ``)."""
    pad = " " * column
    for index, (key, value) in enumerate(data.items()):
        head = f"{lead if index == 0 and lead is not None else pad}{_scalar(key, key=True)}:"
        _value(value, column, head, lines)


def _value(value: Any, column: int, head: str, lines: list[str]) -> None:
    kind = type(value)
    if kind is dict:
        if not value:
            lines.append(head + " {}")
        else:
            lines.append(head)
            _mapping(value, column + MAPPING_INDENT, lines, None)
    elif kind is list:
        if not value:
            lines.append(head + " []")
        else:
            lines.append(head)
            _sequence(value, column + SEQUENCE_OFFSET, lines)
    elif kind is LiteralScalarString:
        _literal(str(value), column + MAPPING_INDENT, head + " ", lines)
    else:
        lines.append(f"{head} {_scalar(value)}")


def _sequence(items: list[Any], column: int, lines: list[str]) -> None:
    """``items`` with their dashes at ``column``, their content two columns further in."""
    lead = " " * column + "- "
    for item in items:
        kind = type(item)
        if kind is dict and item:
            _mapping(item, column + 2, lines, lead)
        elif kind is LiteralScalarString:
            _literal(str(item), column + 2, lead, lines)
        elif kind in (dict, list):
            raise _NotPlainData  # an empty mapping or a list in a list: rare, ruamel's
        else:
            lines.append(lead + _scalar(item))
