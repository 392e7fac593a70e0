"""The text form of diagnostics: ``file:line:col: severity[CODE] message``, the quoted source line with a
caret, then the hint. Apart from :mod:`hpcconf.diagnostics` because quoting a line reads the file through
the safe reader, whose refusals are diagnostics themselves.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from .diagnostics import Diagnostic, HpcconfError
from .safe_io import read_bytes


@dataclass
class SourceCache:
    """Reads source files once, so the renderer can quote the offending line."""

    texts: dict[str, str] = field(default_factory=dict)
    _redacted: dict[str, list[str]] = field(default_factory=dict, repr=False)

    def line(self, file: str, line: int) -> str | None:
        """Line ``line`` of ``file``, with any secret in it replaced by ``****`` (never quoted back)."""
        if file not in self._redacted:
            if file not in self.texts:
                try:  # through the safe reader: a link to /proc/self/environ is never quoted
                    self.texts[file] = read_bytes(Path(file), "log").decode("utf-8", errors="replace")
                except HpcconfError:
                    self.texts[file] = ""
            from .secret_scan import redact  # detect-secrets loads with the first quoted line

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
