"""The catalog's lookup error, on its own so that code which only catches it (the spec's cross-field
checks, registered whenever the rule registry loads) does not import the pydantic SKU models."""

from __future__ import annotations

from typing import Sequence


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
