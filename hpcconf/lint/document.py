"""What rules look at: one :class:`Document` per linted file (per YAML document in multi-document files).

A document carries its display name, kind, raw text and lines, and a parsed form for its
kind (``doc.yaml`` for YAML kinds, ``doc.nccl_xml(version)`` for NCCL topology/graph XML,
``doc.dockerfile`` for Dockerfiles). Environment settings of any kind (nccl.conf, env
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
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Iterator

from ..diagnostics import Diagnostic, Severity
from ..yamlpos import YamlDocument

if TYPE_CHECKING:
    from .parse.conf import ConfFile
    from .parse.dockerfile import DockerfileModel
    from ..parsers.nccl_xml import XmlElement, XmlDocument
    from .registry import Rule

# The rule whose check function is running; set by the engine so helpers can label findings.
current_rule: contextvars.ContextVar["Rule | None"] = contextvars.ContextVar("current_rule", default=None)


@dataclass
class Document:
    path: str  # display name: the file as given, or "SPEC -> artifact" for compiled artifacts
    kind: str
    text: str
    yaml: YamlDocument | None = None  # set for YAML kinds (one Document per YAML document)
    source_path: str = ""  # the file on disk ("" for in-memory artifacts)
    meta: dict[str, Any] = field(default_factory=dict)  # e.g. {"chart": "network-operator"}

    @cached_property
    def lines(self) -> list[str]:
        return self.text.splitlines()

    # -- parsed forms (lazy) -------------------------------------------------------------
    @cached_property
    def conf(self) -> "ConfFile":
        """KEY=VALUE lines with positions (nccl.conf as NCCL reads it, else simple shell lines).
        Prefer ``settings.env_settings``, which reads scripts with the full shell parser."""
        from .parse.conf import parse_conf

        return parse_conf(self.text, self.kind)

    def nccl_xml(self, nccl_version: str | None = None) -> "XmlDocument":
        """The file as NCCL ``nccl_version`` reads it (``hpcconf.parsers.nccl_xml``): ``.root`` is
        None and ``.fatal`` lists why when NCCL would reject it."""
        cache = self.__dict__.setdefault("_xml_cache", {})
        if nccl_version not in cache:
            from ..parsers.nccl_xml import parse_nccl_xml

            kind = "graph" if self.kind == "nccl-graph" else "topo"
            cache[nccl_version] = parse_nccl_xml(self.text, kind, nccl_version)
        return cache[nccl_version]

    @cached_property
    def dockerfile(self) -> "DockerfileModel":
        from .parse.dockerfile import parse_dockerfile

        return parse_dockerfile(self.text)

    @property
    def data(self) -> Any:
        """Plain-Python YAML data (None for non-YAML kinds)."""
        return self.yaml.data if self.yaml is not None else None

    # -- finding builders ------------------------------------------------------------------
    def at_line(self, line: int, message: str, *, hint: str = "", column: int | None = 1,
                end_column: int | None = None, end_line: int | None = None,
                severity: Severity | None = None) -> Diagnostic:
        """A finding at ``line`` (1-based); the whole line is underlined unless told otherwise."""
        if end_column is None and column is not None and 0 < line <= len(self.lines):
            end_column = max(len(self.lines[line - 1].rstrip()) + 1, column + 1)
        return self._diagnostic(message, hint, severity, line, column,
                                end_line if end_line is not None else line, end_column)

    def at_path(self, path: tuple, message: str, *, hint: str = "", prefer_value: bool = False,
                severity: Severity | None = None) -> Diagnostic:
        """A finding at a YAML path (keys and indexes); falls back to the nearest parent with a position."""
        if self.yaml is None:
            return self.at_line(1, message, hint=hint, severity=severity)
        span = self.yaml.position(tuple(path), prefer_value)
        return self._diagnostic(message, hint, severity, span.line, span.column, span.end_line, span.end_column)

    def at_element(self, element: "XmlElement", message: str, *, hint: str = "",
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
