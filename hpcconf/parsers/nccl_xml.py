"""NCCL's topology / graph XML parser, re-implemented with positions.

NCCL does not use an XML library: ``src/graph/xml.cc`` reads the file one byte at a time. This
module follows that code step by step, so that a file we accept is a file NCCL accepts, and a file
NCCL rejects is reported with the place and the reason. What it does, in short:

* Between elements only space, ``\\n`` and ``\\r`` are skipped; anything else (a tab, text) is fatal
  ("expecting '<'"). Names end at space, ``>``, ``/``, ``\\n``, ``\\r``.
* Attributes are ``name="value"`` separated by *single spaces on one line*: a newline or tab after a
  value is fatal; two spaces make an attribute with an empty name that takes one of the 16 slots;
  attributes after the 16th are dropped. Values need ``"`` (``'`` only from NCCL 2.27); there are no
  entities (``&amp;`` stays as written). Names and values hold at most 253 characters.
* ``<!-- -->`` comments work; ``<?xml ...?>`` and ``<!DOCTYPE>`` do not.
* Unknown elements are skipped with their whole subtree (closing tags inside are not even
  checked); unknown attributes are ignored. ``<system>``/``<graphs>`` need ``version="1"``.
* At most 640 children per element and 256 (topology) / 4096 (graph) known elements.

Fatal problems stop the parse (as in NCCL); the tree built so far is kept. Silent misreads are
collected as non-fatal :class:`XmlProblem` s.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Literal

from ..diagnostics import Diagnostic, Severity
from ..knowledge.c_numbers import c_strtol
from ..knowledge.nccl_env import NcclVersion, VersionLike, newest_version

MAX_STR_LEN = 255  # buffer size; with the terminator stored, names/values hold 253 characters
MAX_ATTR_COUNT = 16
MAX_SUBS = 640
MAX_NODES = {"topo": 256, "graph": 4096}  # NCCL_TOPO_XML_MAX_NODES / NCCL_GRAPH_XML_MAX_NODES
SINGLE_QUOTES_SINCE = "2.27"

XmlKind = Literal["topo", "graph"]

# Element -> child elements NCCL's loader knows, with the first release that knows the child.
_TOPO_CHILDREN: dict[str | None, dict[str, str]] = {
    None: {"system": "2.0"},
    "system": {"cpu": "2.0"},
    "cpu": {"pci": "2.0", "nic": "2.0"},
    "pci": {"pci": "2.0", "gpu": "2.0", "nic": "2.0", "pcilink": "2.22"},
    "gpu": {"nvlink": "2.0", "c2c": "2.19"},
    "nic": {"net": "2.0"},
    "nvlink": {}, "c2c": {}, "pcilink": {}, "net": {},
}
_GRAPH_CHILDREN: dict[str | None, dict[str, str]] = {
    None: {"graphs": "2.0"},
    "graphs": {"graph": "2.0"},
    "graph": {"channel": "2.0"},
    "channel": {"net": "2.0", "gpu": "2.0"},
    "gpu": {}, "net": {},
}

# Attributes NCCL reads per element (anything else is ignored without a word).
_KEEP = ("keep",)
TOPO_ATTRIBUTES: dict[str, tuple[str, ...]] = {
    "system": ("version", "name"),
    "cpu": ("numaid", "affinity", "arch", "vendor", "familyid", "modelid", "host_hash") + _KEEP,
    "pci": ("busid", "class", "vendor", "device", "subsystem_vendor", "subsystem_device",
            "link_speed", "link_width") + _KEEP,
    "gpu": ("dev", "sm", "gdr", "rank", "mlopart") + _KEEP,
    "nvlink": ("target", "count", "tclass"),
    "c2c": ("count", "bw"),
    "pcilink": ("target",),
    "nic": _KEEP,
    "net": ("name", "dev", "speed", "port", "latency", "guid", "maxconn", "gdr", "coll", "net", "gin",
            "rma", "rail", "plane") + _KEEP,
}
GRAPH_ATTRIBUTES: dict[str, tuple[str, ...]] = {
    "graphs": ("version", "name"),
    "graph": ("id", "pattern", "crossnic", "nchannels", "speedintra", "speedinter", "latencyinter",
              "typeintra", "typeinter", "samechannels"),
    "channel": (),
    "gpu": ("dev", "rank"),
    "net": ("dev",),
}

# topo.cc kvDictPciGen: prefix match; anything else silently becomes 6 Gb/s per lane.
PCI_LINK_SPEEDS = ("2.5 GT/s", "5 GT/s", "8 GT/s", "16 GT/s", "32 GT/s", "5.0 GT/s PCIe", "8.0 GT/s PCIe",
                   "16.0 GT/s PCIe", "32.0 GT/s PCIe", "64.0 GT/s PCIe")


@dataclass
class XmlAttribute:
    name: str
    value: str
    line: int  # where the name starts (1-based)
    column: int
    value_line: int  # first character inside the quotes
    value_column: int
    quote: str = '"'
    dropped: bool = False  # beyond the 16th attribute: NCCL drops it


@dataclass
class XmlElement:
    name: str
    line: int  # the '<'
    column: int
    attributes: list[XmlAttribute] = field(default_factory=list)
    children: list["XmlElement"] = field(default_factory=list)
    self_closing: bool = False
    ignored: bool = False  # NCCL skips this element (unknown here) and everything inside it
    parent: "XmlElement | None" = field(default=None, repr=False, compare=False)

    def attr(self, name: str) -> XmlAttribute | None:
        """The attribute NCCL's ``xmlGetAttr`` finds: the first of that name among the kept ones."""
        return next((a for a in self.attributes if a.name == name and not a.dropped), None)

    def get(self, name: str, default: str | None = None) -> str | None:
        found = self.attr(name)
        return found.value if found is not None else default

    def iter(self, name: str | None = None, include_ignored: bool = False) -> Iterator["XmlElement"]:
        """This element and its descendants (depth first), optionally only those called ``name``."""
        if self.ignored and not include_ignored:
            return
        if name is None or self.name == name:
            yield self
        for child in self.children:
            yield from child.iter(name, include_ignored)


@dataclass(frozen=True)
class XmlProblem:
    kind: str  # prolog, doctype, tab, newline-in-tag, quote, unclosed, mismatch, text, syntax, too-long,
    #            bad-version, too-many-nodes, too-many-children, comment, too-many-attributes,
    #            empty-attribute, entity, unknown-element, unknown-attribute, link-speed, link-width
    message: str
    hint: str
    line: int
    column: int
    fatal: bool  # True: NCCL fails to load the file (init error); False: NCCL reads something else


@dataclass
class XmlDocument:
    kind: XmlKind
    roots: list[XmlElement]
    problems: list[XmlProblem]
    version: NcclVersion

    @property
    def fatal(self) -> list[XmlProblem]:
        return [p for p in self.problems if p.fatal]

    @property
    def ok(self) -> bool:
        """True when NCCL would load the file without an error."""
        return not self.fatal

    @property
    def root(self) -> XmlElement | None:
        """The first ``<system>`` (topology) or ``<graphs>`` (graph) element NCCL loads; None when
        the file has none or NCCL rejects it (``fatal``). ``roots`` keeps what was read anyway."""
        if self.fatal:
            return None
        want = "system" if self.kind == "topo" else "graphs"
        return next((r for r in self.roots if r.name == want and not r.ignored), None)

    def iter(self, name: str | None = None, include_ignored: bool = False) -> Iterator[XmlElement]:
        for root in self.roots:
            yield from root.iter(name, include_ignored)

    def diagnostics(self, file: str = "", code: str = "NCCL-XML") -> list[Diagnostic]:
        """Problems as diagnostics; the lint engine re-codes them by ``kind``."""
        return [xml_problem_diagnostic(p, file, code) for p in self.problems]


def xml_problem_diagnostic(problem: XmlProblem, file: str = "", code: str = "NCCL-XML") -> Diagnostic:
    severity = Severity.ERROR if problem.fatal else Severity.WARNING
    return Diagnostic(code=code, name=problem.kind, message=problem.message, hint=problem.hint,
                      severity=severity, file=file, line=problem.line, column=problem.column)


def _show(text: str) -> str:
    """NCCL prints the offending characters raw; we escape the invisible ones."""
    return text.replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")


class _Fatal(Exception):
    def __init__(self, kind: str, message: str, hint: str, pos: int):
        super().__init__(message)
        self.kind, self.message, self.hint, self.pos = kind, message, hint, pos


_NONE, _OPEN, _CLOSE, _SINGLE = 0, 1, 2, 3
_NAME_END = " >/\n\r"


@dataclass
class _Node:
    type: int
    name: str = ""
    pos: int = 0
    attrs: list[tuple[str, str, int, int, str]] = field(default_factory=list)  # key, value, kpos, vpos, quote


_RCCL_TOPOLOGY = re.compile(r"<gpu\b[^>]*\sgcn=")
RCCL_UNJUDGED = ("unknown-element", "unknown-attribute")


class _Parser:
    def __init__(self, text: str, kind: XmlKind, version: NcclVersion):
        self.text = text
        self.kind = kind
        self.version = version
        self.pos = 0
        self.count = 0
        self.max_nodes = MAX_NODES[kind]
        self.children = _TOPO_CHILDREN if kind == "topo" else _GRAPH_CHILDREN
        self.attributes = TOPO_ATTRIBUTES if kind == "topo" else GRAPH_ATTRIBUTES
        self.quotes = "\"'" if version.at_least(SINGLE_QUOTES_SINCE) else '"'
        self.problems: list[XmlProblem] = []
        self.roots: list[XmlElement] = []
        self._line_starts = [0] + [i + 1 for i, ch in enumerate(text) if ch == "\n"]
        self.context: list[str] = []  # names of the elements being read, for classifying errors
        # RCCL writes its topology as version 2 and refuses anything else (ROCm/rccl src/graph/xml.h
        # NCCL_TOPO_XML_VERSION 2 since 7e3d8a31, 2020; xml.cc "XML Topology has wrong version"); NCCL wants 1.
        # Its files carry the GPU's gcn architecture, an attribute only RCCL writes.
        self.topo_version, self.reader = (2, "RCCL") if kind == "topo" and _RCCL_TOPOLOGY.search(text) else (1, "NCCL")

    # -- positions --------------------------------------------------------------------------
    def where(self, pos: int) -> tuple[int, int]:
        index = bisect.bisect_right(self._line_starts, pos) - 1
        return index + 1, pos - self._line_starts[index] + 1

    def note(self, kind: str, message: str, hint: str, pos: int, fatal: bool = False) -> None:
        if self.reader == "RCCL" and kind in RCCL_UNJUDGED:
            return  # the element and attribute tables are NCCL's; RCCL reads more (<xgmi>, gcn=, arch=)
        line, column = self.where(pos)
        self.problems.append(XmlProblem(kind, message, hint, line, column, fatal))

    # -- byte-level reading, as xml.cc --------------------------------------------------------
    def getc(self) -> str:
        if self.pos >= len(self.text):
            raise _Fatal("unclosed", "XML Parse : Unexpected EOF",
                         "the file ends inside a tag; close every tag and quote", self.pos)
        ch = self.text[self.pos]
        self.pos += 1
        return ch

    def get_value(self) -> tuple[str, int, str, str]:
        start = self.pos
        quote = self.getc()
        if quote not in self.quotes:
            hint = ("use double quotes; single quotes work only from NCCL 2.27" if quote == "'"
                    else 'quote every attribute value with "..."')
            raise _Fatal("quote", "XML Parse : Expected (double) quote.", hint, start)
        value_pos = self.pos
        chars = []
        while True:
            ch = self.getc()
            chars.append(ch)
            if len(chars) == MAX_STR_LEN:
                raise _Fatal("too-long", f"Error : value {_show(''.join(chars[:-1]))} too long (max {MAX_STR_LEN})",
                             "attribute values hold at most 253 characters", value_pos)
            if ch == quote:
                break
        value = "".join(chars[:-1])
        return value, value_pos, quote, self.getc()

    def get_token(self, with_value: bool) -> tuple[str, str | None, int, str, str]:
        """(name, value or None, value position, quote, the character that ended it)."""
        start = self.pos
        chars: list[str] = []
        while True:
            ch = self.getc()
            if ch == "=":
                name = "".join(chars)
                if not with_value:
                    raise _Fatal("syntax", f"XML Parse : Unexpected value with name {_show(name)}",
                                 "an '=' is only allowed inside a start tag, after an attribute name", self.pos - 1)
                value, vpos, quote, last = self.get_value()
                return name, value, vpos, quote, last
            chars.append(ch)
            if len(chars) == MAX_STR_LEN:
                raise _Fatal("too-long", f"Error : name {_show(''.join(chars[:-1]))} too long (max {MAX_STR_LEN})",
                             "element and attribute names hold at most 253 characters", start)
            if ch in _NAME_END:
                return "".join(chars[:-1]), None, -1, "", ch

    def skip_comment(self, start: str, nxt: str, pos: int) -> None:
        end = "..."
        for ch in start + nxt:
            end = end[1:] + ch
        while end != "-->":
            if self.pos >= len(self.text):
                raise _Fatal("comment", "XML Parse error : unterminated comment", "close the comment with -->", pos)
            end = end[1:] + self.text[self.pos]
            self.pos += 1

    def get_node(self) -> _Node:
        ch = " "
        while ch in " \n\r":
            if self.pos >= len(self.text):
                return _Node(_NONE)
            ch = self.text[self.pos]
            self.pos += 1
        start = self.pos - 1
        if ch != "<":
            raise self._expecting_lt(ch, start)
        name, _, _, _, last = self.get_token(with_value=False)
        if name.startswith("!--"):
            self.skip_comment(name[3:], last, start)
            return self.get_node()
        if name == "" and last == "/":
            name, _, _, _, last = self.get_token(with_value=False)
            if last != ">":
                raise _Fatal("syntax", f"XML Parse error : unexpected trailing {_show(last)} in closing tag {name}",
                             f"write </{name}> with nothing between the name and '>'", self.pos - 1)
            return _Node(_CLOSE, name, start)
        node = _Node(_OPEN, name, start)
        self.context.append(name)
        while last == " ":
            key_pos = self.pos
            key, value, vpos, quote, last = self.get_token(with_value=True)
            node.attrs.append((key, value if value is not None else "", key_pos, vpos, quote))
        if last == "/":
            node.type = _SINGLE
            _, _, _, _, last = self.get_token(with_value=False)
        if last != ">":
            raise self._expected_gt(last, self.pos - 1)
        self.context.pop()
        return node

    def _expecting_lt(self, ch: str, pos: int) -> _Fatal:
        if ch == "\t":
            return _Fatal("tab", "XML Parse error : expecting '<', got '\\t'",
                          "indent with spaces: NCCL's parser does not skip tabs", pos)
        return _Fatal("text", f"XML Parse error : expecting '<', got '{_show(ch)}'",
                      "NCCL's XML holds only elements and comments; remove text between tags", pos)

    def _expected_gt(self, ch: str, pos: int) -> _Fatal:
        name = self.context[-1] if self.context else ""
        message = f"XML Parse : expected >, got '{_show(ch)}'"
        if name.startswith("?"):
            return _Fatal("prolog", message, "remove the <?xml ...?> declaration: NCCL's parser rejects it", pos)
        if name.startswith("!"):
            return _Fatal("doctype", message, "remove the <!DOCTYPE> line: NCCL's parser rejects it", pos)
        if ch == "\t":
            return _Fatal("tab", message, "separate attributes with single spaces, not tabs", pos)
        if ch in "\n\r":
            return _Fatal("newline-in-tag", message,
                          "write each start tag on one line: NCCL does not allow line breaks between attributes", pos)
        return _Fatal("syntax", message, "separate attributes with single spaces and end the tag with > or />", pos)

    # -- structure, as xmlLoadSub ----------------------------------------------------------
    def known_children(self, head: XmlElement | None) -> dict[str, str] | None:
        if head is not None and head.ignored:
            return None
        table = self.children.get(head.name if head is not None else None, {})
        return {name: since for name, since in table.items() if self.version.at_least(since)}

    def load_sub(self, head: XmlElement | None, head_type: int) -> None:
        if head is not None and head_type == _SINGLE:
            return
        handlers = self.known_children(head)
        while True:
            if self.count == self.max_nodes:
                raise _Fatal("too-many-nodes", f"Error : XML parser is limited to {self.max_nodes} nodes",
                             "describe fewer elements (NCCL counts every known element)", self.pos)
            node = self.get_node()
            if node.type == _NONE:
                if head is not None:
                    raise self._unterminated(head)
                return
            if head is not None and node.type == _CLOSE:
                # Inside a skipped element NCCL compares the closing tag with itself (same slot).
                if not head.ignored and node.name != head.name:
                    raise _Fatal("mismatch", f"XML Mismatch : {head.name} / {node.name}",
                                 f"close <{head.name}> (line {head.line}) with </{head.name}>", node.pos)
                return
            element = self.element(node, head)
            if handlers and node.name in handlers:
                if head is not None and len([c for c in head.children if not c.ignored]) == MAX_SUBS:
                    raise _Fatal("too-many-children", f"Error : XML parser is limited to {MAX_SUBS} subnodes",
                                 f"<{head.name}> may hold at most {MAX_SUBS} elements", node.pos)
                self.count += 1
                self.handle(element, node)
            else:
                element.ignored = True
                if handlers is not None:
                    where = f"<{head.name}>" if head is not None else "the top level"
                    self.note("unknown-element", f"Ignoring element {node.name}: NCCL does not know <{node.name}> "
                              f"in {where} and skips it with everything inside",
                              self._unknown_element_hint(node.name, head), node.pos)
                self.load_sub(element, node.type)

    def _unknown_element_hint(self, name: str, head: XmlElement | None) -> str:
        table = self.children.get(head.name if head is not None else None, {})
        if name in table:
            return f"<{name}> is read only from NCCL {table[name]}"
        allowed = ", ".join(f"<{n}>" for n in table) or "no child elements"
        return f"allowed here: {allowed}" + (" (an XML prolog/DOCTYPE is not supported)" if name[:1] in "?!" else "")

    def _unterminated(self, head: XmlElement) -> _Fatal:
        kind = "prolog" if head.name.startswith("?") else "doctype" if head.name.startswith("!") else "unclosed"
        hint = {"prolog": "remove the <?xml ...?> declaration", "doctype": "remove the <!DOCTYPE> line"}.get(
            kind, f"close <{head.name}> (line {head.line}) with </{head.name}>")
        line, column = head.line, head.column
        return _Fatal(kind, f"XML Parse : unterminated {head.name}", hint,
                      self._line_starts[line - 1] + column - 1)

    def element(self, node: _Node, head: XmlElement | None) -> XmlElement:
        line, column = self.where(node.pos)
        element = XmlElement(node.name, line, column, self_closing=node.type == _SINGLE,
                             ignored=head is not None and head.ignored, parent=head)
        for index, (key, value, kpos, vpos, quote) in enumerate(node.attrs):
            kline, kcol = self.where(kpos)
            vline, vcol = self.where(vpos) if vpos >= 0 else (kline, kcol)
            element.attributes.append(XmlAttribute(key, value, kline, kcol, vline, vcol, quote or '"',
                                                   dropped=index >= MAX_ATTR_COUNT))
        if head is not None:
            head.children.append(element)
        else:
            self.roots.append(element)
        return element

    def handle(self, element: XmlElement, node: _Node) -> None:
        self.attribute_problems(element)
        if element.name in ("system", "graphs") and element.parent is None:
            self.check_version(element, node.pos)
        self.load_sub(element, node.type)

    def check_version(self, element: XmlElement, pos: int) -> None:
        what = "Topology" if element.name == "system" else "Graph"
        attr = element.attr("version")
        if attr is None:
            raise _Fatal("bad-version", f"Attribute version of node {element.name} not found",
                         f'write <{element.name} version="{self.topo_version if element.name == "system" else 1}">', pos)
        wanted = self.topo_version if element.name == "system" else 1
        number = c_strtol(attr.value)
        if number != wanted:
            reader = f" ({self.reader}'s topology file)" if self.reader == "RCCL" else ""
            raise _Fatal("bad-version", f"XML {what} has wrong version {number}, {wanted} needed{reader}",
                         f'write <{element.name} version="{wanted}">',
                         self._line_starts[attr.value_line - 1] + attr.value_column - 1)

    def attribute_problems(self, element: XmlElement) -> None:
        known = self.attributes.get(element.name, ())
        for attr in element.attributes:
            pos = self._line_starts[attr.line - 1] + attr.column - 1
            if attr.dropped:
                self.note("too-many-attributes", f"<{element.name}> has more than {MAX_ATTR_COUNT} attributes; "
                          f"NCCL drops {attr.name or 'this one'}={attr.value!r}",
                          f"keep at most {MAX_ATTR_COUNT} attributes per element", pos)
            elif attr.name == "":
                self.note("empty-attribute", f"double space or space before '>' in <{element.name}> makes an "
                          "attribute with an empty name that uses one of the 16 slots",
                          "separate attributes with exactly one space", pos)
            elif attr.name not in known:
                self.note("unknown-attribute", f"NCCL ignores attribute {attr.name!r} of <{element.name}>",
                          "known attributes: " + (", ".join(known) or "none"), pos)
            if attr.quote == "'":
                self.note("quote", f"attribute {attr.name} uses single quotes, which NCCL before 2.27 rejects",
                          'use double quotes', pos)
            if "&" in attr.value and ";" in attr.value.split("&", 1)[1]:
                self.note("entity", f"NCCL does not decode entities: {attr.name} is {attr.value!r} as written",
                          "write the character itself; NCCL's parser has no escapes", pos)
            if self.kind == "topo":
                self.pci_link_problems(element, attr, pos)

    def pci_link_problems(self, element: XmlElement, attr: XmlAttribute, pos: int) -> None:
        if element.name != "pci" or attr.dropped:
            return
        if attr.name == "link_speed" and not attr.value.startswith(PCI_LINK_SPEEDS):
            self.note("link-speed", f"link_speed {attr.value!r} is not one NCCL knows; it silently assumes "
                      "6 Gb/s per lane", 'write e.g. "16.0 GT/s PCIe" or "32.0 GT/s PCIe"', pos)
        if attr.name == "link_width" and c_strtol(attr.value) == 0:
            self.note("link-width", f"link_width {attr.value!r} reads as 0, which NCCL replaces with 16 lanes",
                      'write the real lane count, e.g. link_width="16"', pos)

    def run(self) -> None:
        try:
            self.load_sub(None, _NONE)
        except _Fatal as error:
            self.note(error.kind, error.message, error.hint, error.pos, fatal=True)


def parse_nccl_xml(text: str, kind: XmlKind = "topo", nccl_version: VersionLike | None = None) -> XmlDocument:
    """Parse ``text`` as NCCL ``nccl_version`` (default: the newest known) would read an
    ``NCCL_TOPO_FILE`` (``kind="topo"``) or ``NCCL_GRAPH_FILE`` (``kind="graph"``)."""
    version = newest_version() if nccl_version is None else NcclVersion.parse(nccl_version)
    parser = _Parser(text, kind, version)
    parser.run()
    return XmlDocument(kind, parser.roots, parser.problems, version)


def read_nccl_xml_file(path: "str | Path", kind: XmlKind = "topo",
                       nccl_version: VersionLike | None = None) -> XmlDocument:
    """Read a file as NCCL does: a missing topology file is only logged (NCCL detects the topology
    itself), a missing graph file fails initialisation."""
    from ..diagnostics import HpcconfError
    from ..safe_io import read_bytes

    try:  # the safe reader: a fifo, a link into /proc or /dev, or a huge file is refused, not read
        text = read_bytes(Path(path), "linted").decode("utf-8", errors="replace")
    except HpcconfError as refused:  # NCCL's own words for a missing file; the reader's for a refused one
        import errno
        import os

        missing = not os.path.lexists(path)
        error = OSError(errno.ENOENT if missing else errno.EACCES,
                        os.strerror(errno.ENOENT) if missing else refused.diagnostics[0].message)
        version = newest_version() if nccl_version is None else NcclVersion.parse(nccl_version)
        what = "topology" if kind == "topo" else "graph"
        fatal = kind == "graph"
        consequence = "NCCL fails to initialise" if fatal else "NCCL logs it at INFO and detects the topology itself"
        problem = XmlProblem("missing-file", f"Could not open XML {what} file {path} : {error.strerror}; {consequence}",
                             f"install the file at {path} on every node or unset the variable", 1, 1, fatal)
        return XmlDocument(kind, [], [problem], version)
    return parse_nccl_xml(text, kind, nccl_version)


def parse_topology(text: str, nccl_version: VersionLike | None = None) -> XmlDocument:
    return parse_nccl_xml(text, "topo", nccl_version)


def parse_graph(text: str, nccl_version: VersionLike | None = None) -> XmlDocument:
    return parse_nccl_xml(text, "graph", nccl_version)


# -- checks on the parsed tree (topo.cc / search.cc read these attributes) -----------------------

_INTEL_LIKE = ("GenuineIntel", "CentaurHauls", "  Shanghai  ")


@dataclass(frozen=True)
class MissingAttribute:
    element: XmlElement
    attribute: str
    fatal: bool  # NCCL fails ("Attribute X of node Y not found"); False: the element is dropped or filled in
    message: str

    @property
    def problem(self) -> XmlProblem:
        return XmlProblem("missing-attribute", self.message, f'add {self.attribute}="..." to <{self.element.name}>',
                          self.element.line, self.element.column, self.fatal)


def _named_net_only(element: XmlElement) -> bool:
    """True when NCCL keeps ``element`` without filling it from sysfs.

    ``ncclTopoFillNet`` (``xml.cc``) first looks for a ``<net name=...>`` already in the file and, when
    the name is the local device's, keeps that node as written: its ``<pci>``/``<cpu>`` ancestors never
    go through ``ncclTopoGetXmlFromSys``. Every other ``<pci>`` either is a real device (a GPU, a NIC or
    a bridge above one: ``ncclTopoGetXmlFromSys`` fills class, vendor, device, link_speed and link_width
    from sysfs/NVML, and ``ncclTopoGetXmlFromCpu`` the CPU's affinity, arch, vendor, familyid, modelid)
    or is removed by ``ncclTopoTrimXml`` (no kept GPU or NIC below it, NCCL 2.8+).
    """
    if any(True for _ in element.iter("gpu")):
        return False
    return any(net.get("name") for net in element.iter("net"))


def _cpu_filled(cpu: XmlElement) -> bool:
    """NCCL reaches this ``<cpu>`` from a device it fills (so ``ncclTopoGetXmlFromCpu`` fills it too)."""
    return any(not _named_net_only(pci) for pci in cpu.children if pci.name == "pci" and not pci.ignored)


_SYSFS = "NCCL fills it from sysfs only for real devices, and this branch is kept by its <net name> as written"


def _required_cpu(element: XmlElement) -> list[tuple[str, bool, str]]:
    if not element.children:
        return []  # ncclTopoTrimXml removes a <cpu> with nothing under it
    need = [("numaid", True, "NCCL fails to build the topology")]
    if _cpu_filled(element):
        return need
    consequence = "NCCL fails to build the topology: nothing under this <cpu> is filled from sysfs"
    need.append(("arch", True, consequence))
    if element.get("arch") == "x86_64":
        need.append(("vendor", True, consequence))
        if element.get("vendor") in _INTEL_LIKE:
            need += [("familyid", True, "NCCL needs it to pick Intel/Zhaoxin tuning"),
                     ("modelid", True, "NCCL needs it to pick Intel/Zhaoxin tuning")]
    return need


def _required_pci(element: XmlElement) -> list[tuple[str, bool, str]]:
    if _named_net_only(element):
        return [(a, True, f"NCCL fails to build the topology ({_SYSFS})")
                for a in ("busid", "class", "link_width", "link_speed")]
    if element.children:
        # A bridge without busid above a real device: ncclTopoGetXmlFromSys cannot follow it.
        return [("busid", True, "NCCL cannot match it to a device (it matches <pci> by busid)")]
    return []


def _required(element: XmlElement, kind: XmlKind) -> list[tuple[str, bool, str]]:
    """(attribute, fatal when missing, consequence) that NCCL needs on ``element`` and cannot fill itself."""
    name = element.name
    if kind == "graph":
        if name == "graph":
            return [(a, True, "NCCL fails to import the graph") for a in
                    ("id", "pattern", "crossnic", "nchannels", "speedintra", "speedinter", "typeintra",
                     "typeinter", "samechannels")]
        if name in ("gpu", "net") and element.parent is not None and element.parent.name == "channel":
            if name == "gpu" and element.get("rank") is not None:
                return []
            return [("dev", True, "NCCL fails to import the channel")]
        return []
    if name == "cpu":
        return _required_cpu(element)
    if name == "pci":
        return _required_pci(element)
    if name == "gpu":
        return [("dev", False, "NCCL fills it from NVML for local GPUs"), ("sm", False, "NCCL fills it from NVML"),
                ("gdr", False, "NCCL sets it for local GPUs"),
                ("rank", False, "a <gpu> without rank is silently dropped unless it is a local GPU")]
    if name == "nvlink":
        need = [("count", True, "NCCL fails to add the link"), ("tclass", True, "NCCL fails to add the link")]
        tclass = element.get("tclass") or ""
        if tclass.startswith("0x03"):
            need.append(("target", True, "a GPU-class NVLink needs the peer's busid"))
        return need
    if name == "c2c":
        return [("count", True, "NCCL fails to add the C2C link"), ("bw", True, "NCCL fails to add the C2C link")]
    if name == "pcilink":
        return [("target", True, "NCCL fails to add the PCI link")]
    if name == "net":
        return [("dev", False, "a <net> without dev is silently not added")]
    return []


def required_attribute_problems(tree: XmlDocument) -> list[MissingAttribute]:
    """Attributes NCCL needs that the parsed file lacks, per element (NVIDIA/nccl src/graph/xml.cc)."""
    missing: list[MissingAttribute] = []
    for element in tree.iter():
        for attribute, fatal, consequence in _required(element, tree.kind):
            if element.attr(attribute) is None:
                missing.append(MissingAttribute(
                    element, attribute, fatal,
                    f"<{element.name}> at line {element.line} has no {attribute}: {consequence}"))
    return missing


def gpu_busid(gpu: XmlElement) -> str | None:
    """The bus id of a ``<gpu>``: its parent ``<pci busid>``."""
    parent = gpu.parent
    return parent.get("busid") if parent is not None and parent.name == "pci" else None


def self_nvlink_targets(tree: XmlDocument) -> list[XmlElement]:
    """``<nvlink>`` elements aimed at their own GPU (the Azure ncv4 pattern since 2024-02).

    Any ``<nvlink>`` child switches off NVML NVLink discovery for that GPU; one that points at
    itself leaves NCCL with no GPU-to-GPU NVLink at all (measured: 24 instead of 326 GB/s all_reduce busbw).
    """
    found = []
    for gpu in tree.iter("gpu"):
        own = (gpu_busid(gpu) or "").lower()
        for link in gpu.children:
            if link.name == "nvlink" and not link.ignored and own and (link.get("target") or "").lower() == own:
                found.append(link)
    return found


def gpus_with_nvlink_children(tree: XmlDocument) -> list[XmlElement]:
    """``<gpu>`` elements whose NVLinks come from the file instead of NVML."""
    return [gpu for gpu in tree.iter("gpu") if any(c.name == "nvlink" and not c.ignored for c in gpu.children)]


def graph_gpu_devs(tree: XmlDocument) -> list[tuple[XmlElement, int]]:
    """``<gpu dev>`` values of a graph file as NCCL ``version`` reads them (hex from 2.21)."""
    hex_devs = tree.version.at_least("2.21")
    out = []
    for gpu in tree.iter("gpu"):
        dev = gpu.get("dev")
        if dev is None:
            continue
        try:
            out.append((gpu, int(dev, 16) if hex_devs else c_strtol(dev)))
        except ValueError:
            out.append((gpu, 0))
    return out
