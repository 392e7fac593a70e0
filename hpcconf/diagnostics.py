"""One diagnostic type and one text renderer, shared by the spec loader and the linter.

A diagnostic says what is wrong (``message``), how to fix it (``hint``) and where
(``file``/``line``/``column``, 1-based, with an optional end). Loader errors and lint
findings are the same type so that every message a user sees has one shape.
"""

from __future__ import annotations

import enum
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Iterable


class Severity(str, enum.Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        return {"error": 3, "warning": 2, "info": 1}[self.value]


@dataclass(frozen=True)
class Diagnostic:
    code: str
    message: str
    hint: str = ""
    severity: Severity = Severity.ERROR
    name: str = ""
    file: str = ""
    line: int | None = None
    column: int | None = None
    end_line: int | None = None
    end_column: int | None = None

    def at(self, file: str, line: int | None, column: int | None,
           end_line: int | None = None, end_column: int | None = None) -> "Diagnostic":
        return replace(self, file=file, line=line, column=column,
                       end_line=end_line, end_column=end_column)

    def sort_key(self) -> tuple[Any, ...]:
        return (self.file, self.line or 0, self.column or 0, self.code, self.message)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["severity"] = self.severity.value
        return {k: data[k] for k in ("code", "name", "severity", "message", "hint", "file",
                                      "line", "column", "end_line", "end_column")}


class HpcconfError(Exception):
    """Raised when input cannot be used; carries the diagnostics that explain why."""

    def __init__(self, diagnostics: Iterable[Diagnostic]):
        self.diagnostics = sorted(diagnostics, key=Diagnostic.sort_key)
        super().__init__("; ".join(d.message for d in self.diagnostics))


@dataclass
class SourceCache:
    """Reads source files once, so the renderer can quote the offending line."""

    texts: dict[str, str] = field(default_factory=dict)
    _redacted: dict[str, list[str]] = field(default_factory=dict, repr=False)

    def line(self, file: str, line: int) -> str | None:
        """Line ``line`` of ``file``, with any secret in it replaced by ``****`` (never quoted back)."""
        if file not in self._redacted:
            if file not in self.texts:
                from .safe_io import read_bytes

                try:  # through the safe reader: a link to /proc/self/environ is never quoted
                    self.texts[file] = read_bytes(Path(file), "log").decode("utf-8", errors="replace")
                except HpcconfError:
                    self.texts[file] = ""
            from .secret_scan import redact

            self._redacted[file] = redact(self.texts[file]).splitlines()
        lines = self._redacted[file]
        return lines[line - 1] if 0 < line <= len(lines) else None


def render_text(diagnostic: Diagnostic, sources: SourceCache | None = None) -> str:
    """``file:line:col: severity[CODE] message``, the source line with a caret, then the hint."""
    sources = sources or SourceCache()
    where = diagnostic.file or "<input>"
    if diagnostic.line:
        where += f":{diagnostic.line}"
        if diagnostic.column:
            where += f":{diagnostic.column}"
    label = f"{diagnostic.severity.value}[{diagnostic.code}]"
    if diagnostic.name:
        label += f" {diagnostic.name}"
    out = [f"{where}: {label}: {diagnostic.message}"]
    source_line = sources.line(diagnostic.file, diagnostic.line) if diagnostic.file and diagnostic.line else None
    if source_line is not None:
        gutter = str(diagnostic.line)
        out.append(f" {gutter} | {source_line.rstrip()}")
        col = max(diagnostic.column or 1, 1)
        width = 1
        if diagnostic.end_line == diagnostic.line and diagnostic.end_column and diagnostic.end_column > col:
            width = diagnostic.end_column - col
        out.append(f" {' ' * len(gutter)} | {' ' * (col - 1)}{'^' * width}")
    if diagnostic.hint:
        out.append(f"  = hint: {diagnostic.hint}")
    return "\n".join(out)


def render_all(diagnostics: Iterable[Diagnostic], sources: SourceCache | None = None) -> str:
    sources = sources or SourceCache()
    return "\n\n".join(render_text(d, sources) for d in sorted(diagnostics, key=Diagnostic.sort_key))
