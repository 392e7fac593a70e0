"""What rules look at: one :class:`Document` per linted file (per YAML document in multi-document files).

A document carries its display name, kind, raw text and lines, and a parsed form for its
kind (``doc.yaml`` for YAML kinds, ``doc.nccl_xml(version)`` for NCCL topology/graph XML,
``doc.dockerfile`` for Dockerfiles). A document compiled from a spec knows where it came
from (:class:`DisplayPath`, ``doc.artifact``, ``doc.context``). Environment settings of any kind (nccl.conf, env
files, scripts, container env and commands, Dockerfile ENV) come from
``hpcconf.lint.settings.env_settings(doc)``. Parsed forms are built lazily and cached.
YAML that does not parse never becomes a Document: the engine reports it (HPC001/HPC002).

Rules build findings with the ``at_*`` helpers, which fill in the current rule's code,
name and default severity, so a rule only says what and where::

    yield doc.at_path(("spec", "tasks", 0), "task has no name", hint="add `name:`")
    yield doc.at_line(3, "spaces around '='", column=10)
    yield doc.at_element(gpu, "self-pointing <nvlink>", attribute="target")
"""

from __future__ import annotations

import contextvars
import functools
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, Optional

from ..artifacts import Artifact
from ..diagnostics import Diagnostic, Severity
from ..display_path import DisplayPath
from ..yamlpos import YamlDocument, value_at

if TYPE_CHECKING:  # the parsers load with the first document of their kind: most runs have none
    from ..parsers.dockerfile import DockerfileModel
    from ..parsers.nccl_xml import XmlDocument, XmlElement
    from .context import LintContext
    from .rule_loading import Rule

# The rule whose check function is running; set by the engine so helpers can label findings.
current_rule: contextvars.ContextVar["Rule | None"] = contextvars.ContextVar("current_rule", default=None)


@lru_cache(maxsize=64)
def _split_lines(text: str) -> list[str]:
    """The lines of ``text``, one list shared by every document of a multi-document file (they all carry
    the whole file's text): a 200-pool build's health-check file has 400 documents, and a copy each
    made that build quadratic in memory. Callers only read the list."""
    return text.splitlines()


@dataclass
class Document:
    path: str  # display name: the file as given, or "SPEC -> artifact" for compiled artifacts (DisplayPath)
    kind: str
    text: str
    yaml: YamlDocument | None = None  # set for YAML kinds (one Document per YAML document)
    source_path: str = ""  # the file on disk ("" for in-memory artifacts)
    # Set by the engine for a spec's artifacts and for the spec itself:
    artifact: Artifact | None = None  # the compiled artifact this document is
    context: "LintContext | None" = None  # the spec's own SKU / versions, replacing the command line's
    compile_failed: bool = False  # a spec that did not compile: its rules are skipped
    compile_errors: list[Diagnostic] = field(default_factory=list)  # why: reported whatever --ignore says
    cluster_root: Path | None = None  # the output directory (holding a manifest) the file lies in
    walk_group: str = ""  # for a file found by walking a directory: the deployment directory it belongs to
    # Helm values of one chart inside a bigger file (an umbrella chart's values under the dependency's name):
    values_root: tuple[str, ...] = ()
    chart_version: str | None = None  # the chart version the file's own deployment declares (Chart.lock/yaml)
    chart_version_source: str = ""  # where it was read, e.g. "Chart.lock"; or why none could be read
    _xml_cache: dict[str | None, XmlDocument] = field(default_factory=dict, init=False, repr=False, compare=False)

    @property
    def origin(self) -> DisplayPath:
        return DisplayPath.parse(self.path)

    @property
    def deployment(self) -> str:
        """The spec a compiled artifact belongs to; "" for files given directly."""
        return self.origin.spec

    def context_or(self, ctx: "LintContext") -> "LintContext":
        """The document's own context (a compiled spec's), else the run's."""
        return self.context if self.context is not None else ctx

    @property
    def lines(self) -> list[str]:
        # not kept per document: a build's lint holds every artifact's documents at once (the cross-file rules),
        # and their line lists were ~10 MiB of a 200-pool build's; the last texts' lists stay in _split_lines
        return _split_lines(self.text)

    # -- parsed forms (lazy) -------------------------------------------------------------

    def nccl_xml(self, nccl_version: str | None = None) -> XmlDocument:
        """The file as NCCL ``nccl_version`` reads it (``hpcconf.parsers.nccl_xml``): ``.root`` is
        None and ``.fatal`` lists why when NCCL would reject it."""
        if nccl_version not in self._xml_cache:
            from ..parsers.nccl_xml import parse_nccl_xml

            self._xml_cache[nccl_version] = parse_nccl_xml(self.text, "graph" if self.kind == "nccl-graph" else "topo",
                                                           nccl_version)
        return self._xml_cache[nccl_version]

    @cached_property
    def dockerfile(self) -> DockerfileModel:
        from ..parsers.dockerfile import parse_dockerfile

        return parse_dockerfile(self.text)

    @property
    def data(self) -> Any:
        """Plain-Python YAML data (None for non-YAML kinds); the chart's own sub-tree for umbrella values."""
        data = self.yaml.data if self.yaml is not None else None
        for key in self.values_root:
            data = data.get(key) if isinstance(data, dict) else None
        return data

    # -- finding builders ------------------------------------------------------------------
    def at_line(self, line: int, message: str, *, hint: str = "", column: int | None = 1,
                end_column: int | None = None, end_line: int | None = None,
                severity: Severity | None = None) -> Diagnostic:
        """A finding at ``line`` (1-based); the whole line is underlined unless told otherwise."""
        if end_column is None and column is not None and 0 < line <= len(self.lines):
            end_column = max(len(self.lines[line - 1].rstrip()) + 1, column + 1)
        return self._diagnostic(message, hint, severity, line, column,
                                end_line if end_line is not None else line, end_column)

    def at_path(self, path: tuple[Any, ...], message: str, *, hint: str = "", prefer_value: bool = False,
                severity: Severity | None = None) -> Diagnostic:
        """A finding at a YAML path (keys and indexes); falls back to the nearest parent with a position."""
        if self.yaml is None:
            return self.at_line(1, message, hint=hint, severity=severity)
        span = self.yaml.position((*self.values_root, *path), prefer_value)
        return self._diagnostic(message, hint, severity, span.line, span.column, span.end_line, span.end_column)

    def at_element(self, element: XmlElement, message: str, *, hint: str = "",
                   attribute: str | None = None, severity: Severity | None = None) -> Diagnostic:
        """A finding at an XML element's start tag, or at one of its attributes."""
        attr = element.attr(attribute) if attribute else None
        if attr is not None:
            line, col = attr.line, attr.column
            end_col = attr.value_column + len(attr.value) + 1 if attr.value_line == attr.line else None
        else:
            line, col, end_col = element.line, element.column, element.column + len(element.name) + 1
        return self._diagnostic(message, hint, severity, line, col, line, end_col)

    def _diagnostic(self, message: str, hint: str, severity: Severity | None, line: int | None,
                    column: int | None, end_line: int | None, end_column: int | None) -> Diagnostic:
        rule = current_rule.get()
        return Diagnostic(
            code=rule.code if rule else "",
            name=rule.name if rule else "",
            severity=severity or (rule.severity if rule else Severity.ERROR),
            message=message, hint=hint, file=self.path,
            line=line, column=column, end_line=end_line, end_column=end_column,
        )


@dataclass
class DocumentSet:
    """Every document of one lint run, for rules that compare files (``scope="set"``)."""

    documents: list[Document]

    def __iter__(self) -> Iterator[Document]:
        return iter(self.documents)

    def __len__(self) -> int:
        return len(self.documents)

    def of_kind(self, *kinds: str) -> list[Document]:
        return [d for d in self.documents if d.kind in kinds]

    def by_file(self, path: str) -> list[Document]:
        return [d for d in self.documents if d.path == path]


# -- helpers rules of several families share ---------------------------------------------------

def find_line(doc: Document, start: int, needle: str) -> int:
    """First line at or after ``start`` that contains ``needle`` (``start`` itself when none does)."""
    for number in range(max(start, 1), len(doc.lines) + 1):
        if needle in doc.lines[number - 1]:
            return number
    return start


def _list_item_of(data: Any, path: tuple[Any, ...], needle: str) -> Optional[int]:
    """Index of the item starting the needle's words in a list of strings at ``path``; None otherwise."""
    node = value_at(data, path)
    if not isinstance(node, list) or any(needle in str(item) for item in node):
        return None
    words, items = needle.split(), [str(item) for item in node]
    for index in range(len(items) - len(words) + 1):
        if words and items[index:index + len(words)] == words:
            return index
    return None


def at_text(doc: Document, path: tuple[Any, ...], needle: str, message: str, *, hint: str = "",
            severity: Optional[Severity] = None) -> Diagnostic:
    """A finding on the source line holding ``needle`` inside the (block) value at ``path``."""
    if doc.yaml is None:
        return doc.at_line(1, message, hint=hint, severity=severity)
    item = _list_item_of(doc.data, path, needle)
    if item is not None:  # an exec-form list: the needle's words are items of their own
        span = doc.yaml.position(path + (item,), prefer_value=True)
        return doc.at_line(span.line, message, hint=hint, column=span.column, end_column=span.end_column
                           if span.end_line == span.line else None, severity=severity)
    start = doc.yaml.position(path, prefer_value=True).line
    line = find_line(doc, start, needle)
    text = doc.lines[line - 1] if 0 < line <= len(doc.lines) else ""
    column = text.find(needle) + 1 if needle in text else 1
    end = column + len(needle) if needle in text else None
    return doc.at_line(line, message, hint=hint, column=column, end_column=end, severity=severity)


SetCheck = Callable[[DocumentSet, "LintContext"], Iterator[Diagnostic]]


def per_deployment(check: SetCheck) -> SetCheck:
    """Run a set rule once per deployment, so linting two specs at once never compares one
    cluster's job with another cluster's network."""

    @functools.wraps(check)
    def run(docs: DocumentSet, ctx: "LintContext") -> Iterator[Diagnostic]:
        groups: dict[str, list[Document]] = {}
        for doc in docs:
            groups.setdefault(doc.deployment, []).append(doc)
        for members in groups.values():
            yield from check(DocumentSet(members), ctx)

    return run
