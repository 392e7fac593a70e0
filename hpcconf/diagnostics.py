"""One diagnostic type, shared by the spec loader and the linter (its text form: :mod:`hpcconf.diagnostic_text`).

A diagnostic says what is wrong (``message``), how to fix it (``hint``) and where
(``file``/``line``/``column``, 1-based, with an optional end). Loader errors and lint
findings are the same type so that every message a user sees has one shape.
"""

from __future__ import annotations

import enum
from dataclasses import asdict, dataclass, replace
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
