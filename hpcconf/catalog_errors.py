"""The catalog's lookup error and its --sku-dir check, on their own so that code which only catches the
one (the spec's cross-field checks, registered whenever the rule registry loads) or runs the other (every
command that takes --sku-dir, ``lint`` of plain files included) does not import the pydantic SKU models."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from .diagnostics import Diagnostic


class UnknownSku(KeyError):
    def __init__(self, name: str, suggestions: Sequence[str] = ()):
        super().__init__(name)
        self.name = name
        self.suggestions = list(suggestions)

    def __str__(self) -> str:
        text = f"unknown SKU {self.name!r}"
        if self.suggestions:
            text += f"; did you mean {', '.join(self.suggestions)}?"
        return text


def sku_dir_problem(path: Path) -> Diagnostic | None:
    """HPC101 when ``path`` is not a directory (the one wording every command uses), else None."""
    if Path(path).is_dir():
        return None
    state = "is a file, not a directory" if Path(path).exists() else "does not exist"
    return Diagnostic(code="HPC101", name="sku-dir-missing", message=f"SKU directory {path} {state}",
                      hint="Pass an existing directory of <sku>.yaml files (docs/skus.md).").at(str(path), None, None)
