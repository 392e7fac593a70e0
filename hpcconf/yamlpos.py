"""YAML loading that remembers where every key and value came from.

ruamel.yaml's round-trip loader keeps line/column marks on every mapping and sequence.
We walk the loaded tree once and record, for each path (a tuple of keys and indexes),
the position of the key (for mappings) or the item (for sequences). Consumers convert
the tree to plain Python for validation and ask :class:`YamlDocument.position` for the
place to point at, falling back to the nearest parent that has one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from io import StringIO
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.constructor import DuplicateKeyError
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.events import (
    DocumentEndEvent,
    DocumentStartEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    StreamEndEvent,
    StreamStartEvent,
)
from ruamel.yaml.nodes import ScalarNode

from .diagnostics import Diagnostic, HpcconfError

Path_ = tuple[Any, ...]  # a path into the document: keys (str) and indexes (int)


@dataclass(frozen=True, slots=True)  # slots: a 200-pool build's lint holds ~140,000 of them
class Span:
    line: int  # 1-based
    column: int  # 1-based
    end_line: int | None = None
    end_column: int | None = None


@dataclass
class YamlDocument:
    file: str
    data: Any  # plain Python: dict / list / scalars
    raw: Any  # the ruamel tree, for comments and round-trip edits
    key_spans: dict[Path_, Span] = field(default_factory=dict)
    value_spans: dict[Path_, Span] = field(default_factory=dict)
    start_line: int = 1  # first line of this document in a multi-document file

    def position(self, path: Path_, prefer_value: bool = False) -> Span:
        """The span of ``path``; if it has none (a missing key), its nearest parent's."""
        path = tuple(path)
        while True:
            if prefer_value and path in self.value_spans:
                return self.value_spans[path]
            if path in self.key_spans:
                return self.key_spans[path]
            if path in self.value_spans:
                return self.value_spans[path]
            if not path:
                return Span(self.start_line, 1)
            path = path[:-1]

    def diagnostic(self, diag: Diagnostic, path: Path_, prefer_value: bool = False) -> Diagnostic:
        span = self.position(path, prefer_value)
        return diag.at(self.file, span.line, span.column, span.end_line, span.end_column)


def _scalar_end(line: int, col: int, value: Any) -> tuple[int, int]:
    text = str(value) if not isinstance(value, bool) else ("true" if value else "false")
    return line, col + max(len(text), 1)


def _index(node: Any, path: Path_, keys: dict[Path_, Span], values: dict[Path_, Span]) -> None:
    if isinstance(node, CommentedMap):
        for key in node:
            try:
                kl, kc = node.lc.key(key)
                keys[path + (key,)] = Span(kl + 1, kc + 1, kl + 1, kc + 1 + len(str(key)))
                vl, vc = node.lc.value(key)
                child = node[key]
                if not isinstance(child, (CommentedMap, CommentedSeq)):
                    el, ec = _scalar_end(vl + 1, vc + 1, child)
                    values[path + (key,)] = Span(vl + 1, vc + 1, el, ec)
                else:
                    values[path + (key,)] = Span(vl + 1, vc + 1)
            except (KeyError, TypeError, AttributeError):
                pass
            _index(node[key], path + (key,), keys, values)
    elif isinstance(node, CommentedSeq):
        for i, item in enumerate(node):
            try:
                il, ic = node.lc.item(i)
                if not isinstance(item, (CommentedMap, CommentedSeq)):
                    el, ec = _scalar_end(il + 1, ic + 1, item)
                    keys[path + (i,)] = Span(il + 1, ic + 1, el, ec)
                else:
                    keys[path + (i,)] = Span(il + 1, ic + 1)
            except (KeyError, TypeError, AttributeError):
                pass
            _index(item, path + (i,), keys, values)


def value_at(data: Any, path: Path_, default: Any = None) -> Any:
    """The node at ``path`` (mapping keys and list indexes) in plain YAML data, else ``default``."""
    node = data
    for step in path:
        if isinstance(node, dict) and step in node:
            node = node[step]
        elif isinstance(node, list) and isinstance(step, int) and 0 <= step < len(node):
            node = node[step]
        else:
            return default
    return node


def to_plain(node: Any) -> Any:
    if isinstance(node, dict):
        return {str(k) if not isinstance(k, (int, float, bool)) else k: to_plain(v) for k, v in node.items()}
    if isinstance(node, list):
        return [to_plain(v) for v in node]
    if isinstance(node, str):
        return str(node)
    if isinstance(node, bool):
        return bool(node)
    if isinstance(node, int):
        return int(node)
    if isinstance(node, float):
        return float(node)
    return node


MAX_EXPANDED_NODES = 200_000  # far above any real spec or manifest; stops "billion laughs" alias bombs


def _expanded_size(node: Any, memo: dict[int, int]) -> int:
    """How many values the document has once aliases are expanded (shared nodes counted each time)."""
    if not isinstance(node, (dict, list)):
        return 1
    key = id(node)
    if key not in memo:
        memo[key] = 0  # a self-referencing alias counts once instead of recursing forever
        children = node.values() if isinstance(node, dict) else node
        memo[key] = 1 + sum(_expanded_size(child, memo) for child in children)
        if memo[key] > MAX_EXPANDED_NODES:
            memo[key] = MAX_EXPANDED_NODES + 1
    return memo[key]


def _yaml() -> YAML:
    yaml = YAML(typ="rt")
    yaml.allow_duplicate_keys = False
    return yaml


def _syntax_error(file: str, exc: YAMLError) -> HpcconfError:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    if isinstance(exc, DuplicateKeyError):
        diag = Diagnostic(code="HPC002", name="duplicate-key",
                          message=problem.strip(),
                          hint="YAML keeps only one value per key: delete one of the two, or merge them.")
    else:
        diag = Diagnostic(code="HPC001", name="yaml-syntax", message=f"YAML syntax error: {problem}",
                          hint="Check indentation (spaces only), colons after keys and matching quotes/brackets.")
    line = mark.line + 1 if mark else 1
    col = mark.column + 1 if mark else 1
    return HpcconfError([diag.at(file, line, col)])


MAX_YAML_BYTES = 1024 * 1024  # 1 MiB of YAML (specs, manifests, values files): parsing takes ~1,000x that in memory
MAX_YAML_DEPTH = 64  # nested mappings/sequences; real files nest under 20, deeper ones overflow the stack


def _refuse_oversized(text: str, file: str) -> None:
    # The limit is in bytes of the file (UTF-8), not characters: a character is at most 4 bytes, so
    # only a text of more than a quarter of the limit in characters needs its bytes counted.
    if len(text) * 4 > MAX_YAML_BYTES and len(text.encode("utf-8", "surrogatepass")) > MAX_YAML_BYTES:
        raise HpcconfError([Diagnostic(
            code="HPC001", name="yaml-syntax", message=f"file larger than {MAX_YAML_BYTES // 1024} KiB; refused unparsed",
            hint="hpcconf reads cluster specs and configuration files of a few KiB; split or trim this one "
                 "(see docs/security.md, limits).").at(file, 1, 1)])


def _could_nest_deeply(text: str) -> bool:
    """Cheap test that skips the depth scan for ordinary files: nesting needs brackets or indentation."""
    if text.count("[") + text.count("{") > MAX_YAML_DEPTH:
        return True
    return any(len(line) - len(line.lstrip(" -?:")) > MAX_YAML_DEPTH for line in text.splitlines())


def _prescan_events(text: str) -> Any:
    """YAML events from the C parser when there is one (fast), else from the pure one."""
    try:
        return YAML(typ="safe", pure=False).parse(StringIO(text))
    except Exception:  # noqa: BLE001 - no C extension: the pure parser, only where nesting is plausible
        return _yaml().parse(StringIO(text)) if _could_nest_deeply(text) else iter(())


def _refuse_deep_nesting(text: str, file: str) -> None:
    """Refuse, at the place it happens, nesting deeper than :data:`MAX_YAML_DEPTH` or more than
    :data:`MAX_EXPANDED_NODES` values, before the (slow, recursive) round-trip parse."""
    from ruamel.yaml.events import AliasEvent, CollectionEndEvent, CollectionStartEvent, ScalarEvent

    depth = values = 0
    try:
        for event in _prescan_events(text):
            if isinstance(event, CollectionStartEvent):
                depth += 1
                values += 1
                if depth > MAX_YAML_DEPTH:
                    raise _limit_error(file, event, f"nested more than {MAX_YAML_DEPTH} levels deep",
                                       "No spec or configuration file nests this deep; flatten it.")
            elif isinstance(event, CollectionEndEvent):
                depth -= 1
            elif isinstance(event, (ScalarEvent, AliasEvent)):
                values += 1
            if values > MAX_EXPANDED_NODES:
                raise _limit_error(file, event, f"more than {MAX_EXPANDED_NODES:,} values",
                                   "hpcconf reads cluster specs and configuration files; this is not one.")
    except HpcconfError:
        raise
    except Exception:  # noqa: BLE001 - a syntax error: the round-trip parser reports it with its own words
        return


def _limit_error(file: str, event: Any, message: str, hint: str) -> HpcconfError:
    mark = getattr(event, "start_mark", None)
    line, column = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
    return HpcconfError([Diagnostic(code="HPC001", name="yaml-syntax", message=message, hint=hint).at(file, line, column)])


# -- the fast reader -----------------------------------------------------------------------------
# The round-trip loader scans in pure Python (it keeps comments, which nothing here reads): ~75 ms for a
# 160-line config.yml, most of a lint run. Plain YAML (no anchors, aliases, tags, merge keys, timestamps,
# complex or duplicate keys, directives) means the same read either way, so it is read from the C parser's
# events instead, with the same values, key/value spans and limits; anything else, and every error, goes
# to the round-trip loader, so errors keep their words and places. tests/test_yaml_fast.py holds the two
# readers equal over every YAML file of the repository.

_PLAIN_SCALARS = frozenset(f"tag:yaml.org,2002:{t}" for t in ("str", "int", "float", "bool", "null"))
_STR = "tag:yaml.org,2002:str"
_UNSEEN = object()


class _NotPlain(Exception):
    """The text needs the round-trip loader (or is not YAML): read it the thorough way."""


class _FastReader:
    def __init__(self, text: str, file: str):
        yaml = YAML(typ="safe", pure=False)
        self.events = iter(yaml.parse(StringIO(text)))
        self.resolver, self.constructor, self.scalar_node = yaml.resolver, yaml.constructor, ScalarNode
        self.file = file
        self.depth = self.values = 0
        self.keys: dict[Path_, Span] = {}
        self.spans: dict[Path_, Span] = {}
        self.scalars: dict[tuple[str, Any], Any] = {}  # (text, implicit) -> value: immutable, so shared

    def documents(self) -> list[YamlDocument]:
        docs: list[YamlDocument] = []
        event = self._next()
        if not isinstance(event, StreamStartEvent):
            raise _NotPlain
        while True:
            event = self._next()
            if isinstance(event, StreamEndEvent):
                return docs
            if not isinstance(event, DocumentStartEvent) or getattr(event, "version", None) or getattr(event, "tags", None):
                raise _NotPlain  # %YAML / %TAG directives change how scalars resolve
            self.keys, self.spans = {}, {}
            first = self._next()
            data = self._node(first, ())
            start = first.start_mark.line + 1 if isinstance(data, (dict, list)) else 1
            if not isinstance(self._next(), DocumentEndEvent):
                raise _NotPlain
            docs.append(YamlDocument(file=self.file, data=data, raw=None, key_spans=self.keys,
                                     value_spans=self.spans, start_line=start))

    def _next(self) -> Any:
        try:
            return next(self.events)
        except Exception as exc:  # a syntax error (or no C parser): the round-trip loader words it
            raise _NotPlain from exc

    def _count(self, event: Any, collection: bool) -> None:
        """The limits of :func:`_refuse_deep_nesting`, checked at the same events."""
        self.values += 1
        if collection:
            self.depth += 1
            if self.depth > MAX_YAML_DEPTH:
                raise _limit_error(self.file, event, f"nested more than {MAX_YAML_DEPTH} levels deep",
                                   "No spec or configuration file nests this deep; flatten it.")
        if self.values > MAX_EXPANDED_NODES:
            raise _limit_error(self.file, event, f"more than {MAX_EXPANDED_NODES:,} values",
                               "hpcconf reads cluster specs and configuration files; this is not one.")

    def _node(self, event: Any, path: Path_) -> Any:
        if getattr(event, "anchor", None) is not None or getattr(event, "tag", None) is not None:
            raise _NotPlain  # anchors, aliases and tags: the round-trip loader's own types
        if isinstance(event, ScalarEvent):
            self._count(event, False)
            return self._scalar(event)
        if isinstance(event, MappingStartEvent):
            self._count(event, True)
            return self._mapping(path)
        if isinstance(event, SequenceStartEvent):
            self._count(event, True)
            return self._sequence(path)
        raise _NotPlain  # an alias

    def _scalar(self, event: Any) -> Any:
        """The value of a scalar; values repeat (``true``, ``1``), so each text is resolved once per file."""
        known = self.scalars.get((event.value, event.implicit), _UNSEEN)
        if known is _UNSEEN:
            known = self.scalars[(event.value, event.implicit)] = self._resolve(event)
        return known

    def _resolve(self, event: Any) -> Any:
        tag = self.resolver.resolve(self.scalar_node, event.value, event.implicit)
        name = str(tag)  # a ruamel Tag (or str in older releases)
        if name not in _PLAIN_SCALARS:
            raise _NotPlain  # timestamps, merge keys, ...
        if name == _STR:
            return event.value
        try:
            return self.constructor.construct_object(self.scalar_node(tag, event.value, style=event.style), deep=True)
        except Exception:  # noqa: BLE001 - a value its type cannot hold (4,300+ digits): the round-trip loader locates it
            raise _NotPlain from None

    def _mapping(self, path: Path_) -> dict[Any, Any]:  # YAML keys: str, int, bool, None...
        mapping: dict[Any, Any] = {}
        while True:
            event = self._next()
            if isinstance(event, MappingEndEvent):
                self.depth -= 1
                return {_plain_key(k): v for k, v in mapping.items()}
            if not isinstance(event, ScalarEvent) or event.anchor is not None or event.tag is not None or _empty(event):
                raise _NotPlain  # a complex, anchored, tagged or empty key
            self._count(event, False)
            key = self._scalar(event)
            if key in mapping:
                raise _NotPlain  # the round-trip loader reports the duplicate key
            value_event = self._next()
            kl, kc = event.start_mark.line, event.start_mark.column
            child = path + (key,)  # one tuple for both spans (a 200-pool build's lint holds ~40,000)
            self.keys[child] = Span(kl + 1, kc + 1, kl + 1, kc + 1 + len(str(key)))
            mapping[key] = self._child(value_event, child, self.spans)

    def _sequence(self, path: Path_) -> list[Any]:
        items: list[Any] = []
        while True:
            event = self._next()
            if isinstance(event, SequenceEndEvent):
                self.depth -= 1
                return items
            items.append(self._child(event, path + (len(items),), self.keys))

    def _child(self, event: Any, path: Path_, spans: dict[Path_, Span]) -> Any:
        """A value and its span (recorded before its children's, in the round-trip reader's order)."""
        mark = event.start_mark
        if isinstance(event, ScalarEvent):
            if _empty(event):  # the round-trip parser places it after the colon or at the next token, by comments
                raise _NotPlain
            value = self._node(event, path)
            line, column = mark.line + 1, mark.column + 1
            spans[path] = Span(line, column, *_scalar_end(line, column, value))
            return value
        spans[path] = Span(mark.line + 1, mark.column + 1)
        return self._node(event, path)


def _empty(event: Any) -> bool:
    """A value left out (``key:``), not a quoted empty string."""
    return event.value == "" and not event.style


def _plain_key(key: Any) -> Any:
    """:func:`to_plain`'s key rule: str unless int, float or bool."""
    return key if isinstance(key, (int, float, bool, str)) else str(key)


def _fast_documents(text: str, file: str) -> list[YamlDocument] | None:
    """The documents of plain YAML read through the C parser, or None where the round-trip loader must."""
    if "\t" in text:
        return None  # libyaml takes tabs where the round-trip scanner refuses some: let that one judge
    try:
        return _FastReader(text, file).documents()
    except _NotPlain:
        return None


def load_documents(text: str, file: str) -> list[YamlDocument]:
    """Parse every YAML document in ``text``; raise :class:`HpcconfError` on bad YAML, an oversized
    file (:data:`MAX_YAML_BYTES`) or deep nesting (:data:`MAX_YAML_DEPTH`), each at file:line:col."""
    _refuse_oversized(text, file)
    fast = _fast_documents(text, file)
    if fast is not None:
        return fast
    return _round_trip_documents(text, file)


def _round_trip_documents(text: str, file: str) -> list[YamlDocument]:
    _refuse_deep_nesting(text, file)
    try:
        raws = list(_yaml().load_all(StringIO(text)))
    except (MarkedYAMLError, YAMLError) as exc:
        raise _syntax_error(file, exc) from None
    except (ValueError, TypeError, KeyError, IndexError, OverflowError, AttributeError) as exc:
        raise _unconstructable(text, file, exc) from None
    docs = []
    for raw in raws:
        if _expanded_size(raw, {}) > MAX_EXPANDED_NODES:
            raise HpcconfError([Diagnostic(
                code="HPC001", name="yaml-syntax",
                message=f"YAML aliases expand this document to more than {MAX_EXPANDED_NODES:,} values",
                hint="Write the values out, or use fewer nested aliases (*name): this looks like an alias bomb.",
            ).at(file, 1, 1)])
        keys: dict[Path_, Span] = {}
        values: dict[Path_, Span] = {}
        _index(raw, (), keys, values)
        start = 1
        if isinstance(raw, (CommentedMap, CommentedSeq)) and getattr(raw, "lc", None) is not None:
            start = (raw.lc.line or 0) + 1
        docs.append(YamlDocument(file=file, data=to_plain(raw), raw=raw, key_spans=keys,
                                 value_spans=values, start_line=start))
    return docs


def _unconstructable(text: str, file: str, exc: Exception) -> HpcconfError:
    """HPC001 at the scalar whose tag its text cannot satisfy (``!!int x``, ``!!bool maybe``, an int of 4,300+
    digits): ruamel's constructor raises without a position, so each scalar is constructed alone to find it."""
    yaml = _yaml()
    mark, tag, reason = None, "", f"{type(exc).__name__}: {exc}"
    stack = list(yaml.compose_all(StringIO(text)))
    constructor = _yaml().constructor
    while stack:
        node = stack.pop()
        if isinstance(node, ScalarNode):
            try:
                constructor.construct_object(node, deep=True)
            except Exception as error:  # noqa: BLE001 - whatever the constructor raises is this value's fault
                if mark is None or (node.start_mark.line, node.start_mark.column) < (mark.line, mark.column):
                    mark, tag, reason = node.start_mark, str(node.tag), str(error) or type(error).__name__
        elif isinstance(node.value, list):
            for item in node.value:
                stack.extend(item if isinstance(item, tuple) else (item,))
    if "Exceeds the limit" in reason:  # Python's own wording names a setting of the interpreter
        reason = "an integer of more than 4,300 digits"
    shown_tag = tag.replace("tag:yaml.org,2002:", "!!")
    message = f"YAML value cannot be read as {shown_tag or 'its type'}: {reason[:200]}"
    diag = Diagnostic(code="HPC001", name="yaml-syntax", message=message,
                      hint="Remove the explicit tag (!!int, !!bool, ...) or write a value of that type; "
                           "integers are limited to 4,300 digits.")
    return HpcconfError([diag.at(file, mark.line + 1 if mark else 1, mark.column + 1 if mark else 1)])


def load_document(text: str, file: str) -> YamlDocument:
    docs = load_documents(text, file)
    if not docs:
        return YamlDocument(file=file, data=None, raw=None)
    if len(docs) > 1:
        raise HpcconfError([Diagnostic(
            code="HPC001", name="yaml-syntax",
            message=f"expected one YAML document, found {len(docs)}",
            hint="A spec is a single document: remove the extra '---' separators.",
        ).at(file, docs[1].start_line, 1)])
    return docs[0]


def fast_load(text: str) -> Any:
    """Plain data through the C loader (no positions); for files that are almost always valid."""
    yaml = YAML(typ="safe", pure=False)
    yaml.allow_duplicate_keys = False
    return yaml.load(text)
