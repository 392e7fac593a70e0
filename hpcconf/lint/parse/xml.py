"""NCCL's topology/graph XML reader, re-enacted with positions.

NCCL does not use an XML library: ``src/graph/xml.cc`` reads the file char by char. It
accepts less than XML (no ``<?xml?>`` prolog, no tabs, one space between attributes,
attributes on one line, double quotes only before 2.27) and more (any unknown element
or attribute is skipped). To say exactly what NCCL will reject, this module follows the
same steps and reports the first fatal problem with the line and column where NCCL stops.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator

MAX_STR_LEN = 255  # xml.h: names and values are char[MAX_STR_LEN+1]
MAX_ATTR_COUNT = 16


@dataclass
class XmlElement:
    tag: str
    line: int
    column: int  # of the '<'
    attributes: dict[str, str] = field(default_factory=dict)
    attribute_spans: dict[str, tuple[int, int, int]] = field(default_factory=dict)  # name -> (line, col, end_col)
    attribute_count: int = 0  # as written, including empty names from double spaces
    children: list["XmlElement"] = field(default_factory=list)
    parent: "XmlElement | None" = field(default=None, repr=False)

    def iter(self, tag: str | None = None) -> Iterator["XmlElement"]:
        """This element and all below it, in document order (optionally only ``tag``)."""
        if tag is None or self.tag == tag:
            yield self
        for child in self.children:
            yield from child.iter(tag)

    def get(self, name: str, default: str | None = None) -> str | None:
        return self.attributes.get(name, default)

    def ancestor(self, tag: str) -> "XmlElement | None":
        node = self.parent
        while node is not None and node.tag != tag:
            node = node.parent
        return node


@dataclass(frozen=True)
class XmlProblem:
    message: str
    line: int
    column: int


@dataclass
class XmlParse:
    root: XmlElement | None  # None when NCCL would fail to read the file
    error: XmlProblem | None = None
    top_level: list[XmlElement] = field(default_factory=list)


class _Fatal(Exception):
    def __init__(self, message: str, line: int, column: int):
        super().__init__(message)
        self.problem = XmlProblem(message, line, column)


class _Reader:
    def __init__(self, text: str, single_quotes: bool):
        self.text = text
        self.pos = 0
        self.line = 1
        self.column = 1
        self.single_quotes = single_quotes

    def where(self) -> tuple[int, int]:
        return self.line, self.column

    def getc(self) -> str | None:
        if self.pos >= len(self.text):
            return None
        c = self.text[self.pos]
        self.pos += 1
        if c == "\n":
            self.line, self.column = self.line + 1, 1
        else:
            self.column += 1
        return c

    def need(self) -> str:
        line, col = self.where()
        c = self.getc()
        if c is None:
            raise _Fatal("unexpected end of file", line, col)
        return c

    def token(self, allow_value: bool) -> tuple[str, str | None, str, tuple[int, int]]:
        """xmlGetToken: a name up to space, '>', '/', newline; '=' starts a quoted value."""
        start = self.where()
        name = ""
        while True:
            c = self.need()
            if c == "=":
                if not allow_value:
                    raise _Fatal(f"unexpected value after name {name!r} (is a tab or '=' in a tag name?)",
                                 *start)
                value, last = self.value()
                return name, value, last, start
            if c in " >/\n\r":
                return name, None, c, start
            name += c
            if len(name) >= MAX_STR_LEN:
                raise _Fatal(f"name {name[:20]}... too long (max {MAX_STR_LEN})", *start)

    def value(self) -> tuple[str, str]:
        line, col = self.where()
        quote = self.need()
        if quote != '"' and not (quote == "'" and self.single_quotes):
            what = "double quote" if not self.single_quotes else "quote"
            raise _Fatal(f"expected {what} to start an attribute value, got {quote!r}", line, col)
        value = ""
        while True:
            c = self.need()
            if c == quote:
                break
            value += c
        if len(value) > MAX_STR_LEN:
            raise _Fatal(f"attribute value longer than {MAX_STR_LEN} characters", line, col)
        return value, self.need()


def parse_nccl_xml(text: str, file: str = "", single_quotes: bool = False) -> XmlParse:
    """Read ``text`` as NCCL does; ``single_quotes`` is True for NCCL >= 2.27."""
    reader = _Reader(text, single_quotes)
    top: list[XmlElement] = []
    try:
        _load_children(reader, None, top)
    except _Fatal as fatal:
        return XmlParse(root=None, error=fatal.problem, top_level=top)
    roots = [e for e in top if e.tag in ("system", "graphs")]
    return XmlParse(root=roots[0] if roots else None, top_level=top)


def _load_children(reader: _Reader, parent: XmlElement | None, out: list[XmlElement]) -> None:
    """xmlLoadSub: read nodes until the parent's closing tag (or EOF at top level)."""
    while True:
        node = _next_node(reader)
        if node is None:
            if parent is not None:
                raise _Fatal(f"<{parent.tag}> is never closed", parent.line, parent.column)
            return
        kind, element = node
        if kind == "close":
            if parent is None or element.tag != parent.tag:
                expected = f"</{parent.tag}>" if parent else "no closing tag"
                raise _Fatal(f"closing tag </{element.tag}> does not match: expected {expected}",
                             element.line, element.column)
            return
        element.parent = parent
        out.append(element)
        if kind == "open":
            _load_children(reader, element, element.children)


def _next_node(reader: _Reader) -> tuple[str, XmlElement] | None:
    """xmlGetNode: skip spaces/newlines, then one tag. Returns None at end of file."""
    while True:
        line, col = reader.where()
        c = reader.getc()
        if c is None:
            return None
        if c in " \n\r":
            continue
        if c != "<":
            shown = "a tab" if c == "\t" else repr(c)
            raise _Fatal(f"expecting '<', got {shown} (NCCL allows only spaces and newlines between tags)",
                         line, col)
        name, _, last, _ = reader.token(allow_value=False)
        if name.startswith("!--"):
            _skip_comment(reader, name[3:] + last, line, col)
            continue
        element = XmlElement(tag=name, line=line, column=col)
        if name == "" and last == "/":
            closing, _, last, _ = reader.token(allow_value=False)
            if last != ">":
                raise _Fatal(f"unexpected {last!r} in closing tag </{closing}>", *reader.where())
            element.tag = closing
            return "close", element
        while last == " ":
            key, value, last, (kl, kc) = reader.token(allow_value=True)
            element.attribute_count += 1
            if element.attribute_count > MAX_ATTR_COUNT:
                continue  # NCCL drops attributes beyond 16 (INFO only)
            if value is not None:
                element.attributes.setdefault(key, value)
                element.attribute_spans.setdefault(key, (kl, kc, kc + len(key) + len(value) + 3))
        kind = "open"
        if last == "/":
            kind = "single"
            _, _, last, _ = reader.token(allow_value=False)
        if last != ">":
            shown = {"\n": "a line break", "\r": "a carriage return", "\t": "a tab"}.get(last, repr(last))
            raise _Fatal(f"expecting '>' in <{name}>, got {shown}"
                         + (" (NCCL needs all attributes on one line)" if last in "\n\r" else ""),
                         *reader.where())
        return kind, element


def _skip_comment(reader: _Reader, seen: str, line: int, col: int) -> None:
    window = ("..." + seen)[-3:]
    while window != "-->":
        c = reader.getc()
        if c is None:
            raise _Fatal("unterminated comment", line, col)
        window = (window + c)[-3:]
