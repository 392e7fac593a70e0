"""Inline suppressions: ``# hpcconf: ignore[CODE, ...] reason``.

A suppression covers findings on its own line (a trailing comment) or, when the comment
stands alone, on the next line that is not a comment. That second form is the only one
nccl.conf allows, because NCCL treats a ``#`` after a value as part of the value. XML
files use ``<!-- hpcconf: ignore[CODE] reason -->``. Codes may be rule codes or names.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_PATTERN = re.compile(r"hpcconf:\s*ignore\[(?P<codes>[^\]]*)\](?P<reason>.*)$")
_COMMENT_ONLY = re.compile(r"^\s*(#|<!--)")


@dataclass
class Suppression:
    file: str
    line: int  # where the comment is
    column: int
    end_column: int
    codes: list[str]
    reason: str
    targets: tuple[int, ...]  # lines it covers
    used: set[str] = field(default_factory=set)


_ANY_SUPPRESSION = re.compile(r"hpcconf:\s*ignore\[")


def may_suppress(text: str) -> bool:
    """Whether ``text`` could hold a suppression (every one :func:`find_suppressions` finds matches this)."""
    return _ANY_SUPPRESSION.search(text) is not None


def find_suppressions(file: str, text: str) -> list[Suppression]:
    lines = text.splitlines()
    found = []
    for index, line in enumerate(lines):
        marker = line.find("hpcconf:")
        if marker < 0 or "#" not in line[:marker] and "<!--" not in line[:marker]:
            continue
        match = _PATTERN.search(line, marker)
        if not match:
            continue
        reason = match.group("reason").strip()
        reason = reason.removesuffix("-->").strip()
        codes = [c.strip() for c in match.group("codes").split(",") if c.strip()]
        number = index + 1
        targets: tuple[int, ...] = (number,)
        if _COMMENT_ONLY.match(line):
            following = next((j + 1 for j in range(index + 1, len(lines))
                              if lines[j].strip() and not _COMMENT_ONLY.match(lines[j])), None)
            if following is not None:
                targets = (number, following)
        comment_start = max(line.rfind("#", 0, marker), line.rfind("<!--", 0, marker))
        found.append(Suppression(file=file, line=number, column=comment_start + 1,
                                 end_column=len(line.rstrip()) + 1, codes=codes, reason=reason, targets=targets))
    return found
