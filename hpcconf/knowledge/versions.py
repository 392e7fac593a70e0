"""Release numbers: the one parser and the one comparison every table and rule uses.

``Version.parse`` reads the leading dotted number of ``v2.24.3-1``, ``23.10.0-rc.5``,
``525.60.13`` or ``2.18`` and keeps what follows it as ``suffix``. Comparisons are explicit
about the parts a version does not write:

* ``key()`` / ``<``, ``==``: missing parts are 0, so ``2.24 == 2.24.0 < 2.24.3``;
* ``series_end()`` / ``covers_at_least``: a version without patch stands for its whole series
  ("NCCL 2.18" includes 2.18.6), which is how a user's ``--nccl-version 2.18`` is meant.

Suffixes (pre-release tags, git build numbers) never take part in comparisons.

Why not ``packaging.version``: it implements PEP 440, and the numbers here are git tags, chart
versions and container tags, which are not. It reads NCCL's tag ``v2.18.5-1`` (build 1 of 2.18.5)
as the post-release 2.18.5.post1, newer than 2.18.5; ``23.10.0-rc.5`` as older than 23.10.0, where
the tables judge a chart by its release number; it rejects ``24.05-py3`` and
``12.4.1-devel-ubuntu22.04`` outright; and it has no series (``2.18`` standing for 2.18.x).
tests/test_versions.py keeps that claim checked.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache, total_ordering
from typing import Union

_LEADING = re.compile(r"^\s*v?(\d+(?:\.\d+)*)(.*?)\s*$", re.S)
_SERIES_END = 10**9  # larger than any real patch number


@total_ordering
@dataclass(frozen=True)
class Version:
    parts: tuple[int, ...]  # as written: (2, 24) for "2.24"
    suffix: str = field(default="", compare=False)  # "-rc.5", "-1", "+cuda12.4": not compared

    @classmethod
    def parse(cls, text: "VersionLike") -> "Version":
        """The version ``text`` starts with; ValueError when it does not start with a number."""
        if isinstance(text, Version):
            return text
        return _parse(text if type(text) is str else str(text))

    @classmethod
    def parse_or_none(cls, text: "VersionLike | None") -> "Version | None":
        """``parse``, or None for no text or text that is not a version."""
        if text is None or text == "":
            return None
        try:
            return cls.parse(text)
        except ValueError:
            return None

    def key(self, length: int = 3) -> tuple[int, ...]:
        """The parts padded with 0 (or cut) to ``length``: 2.24 -> (2, 24, 0)."""
        return (self.parts + (0,) * length)[:length] if len(self.parts) < length else self.parts

    def series_end(self, length: int = 3) -> tuple[int, ...]:
        """The newest release this stands for: itself, or the end of its series when parts are missing."""
        return (self.parts + (_SERIES_END,) * length)[:length] if len(self.parts) < length else self.parts

    def at_least(self, other: "VersionLike") -> bool:
        """This exact release (missing parts 0) is ``other`` or newer."""
        return self >= Version.parse(other)

    def covers_at_least(self, other: "VersionLike") -> bool:
        """Some release this stands for (any of the series, when parts are missing) is ``other`` or newer."""
        theirs = Version.parse(other)
        length = max(len(self.parts), len(theirs.parts), 3)
        return self.series_end(length) >= theirs.key(length)

    def _common(self, other: "Version") -> int:
        return max(len(self.parts), len(other.parts))

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, Version):
            return NotImplemented
        length = self._common(other)
        return self.key(length) < other.key(length)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Version):
            return NotImplemented
        length = self._common(other)
        return self.key(length) == other.key(length)

    def __hash__(self) -> int:
        parts = list(self.parts)
        while len(parts) > 1 and parts[-1] == 0:
            parts.pop()  # 2.24 and 2.24.0 are equal, so they hash alike
        return hash(tuple(parts))

    def __str__(self) -> str:
        return ".".join(str(p) for p in self.parts)


VersionLike = Union[str, Version]


def version_key(text: VersionLike, length: int = 3) -> tuple[int, ...]:
    """Sort key of a version string (missing parts 0); ValueError when it is not one."""
    return Version.parse(text).key(length)


def at_least(version: VersionLike, threshold: VersionLike) -> bool:
    """``version >= threshold`` with missing parts 0 (``"24.10" >= "24.10.0"``)."""
    return Version.parse(version).at_least(threshold)


@lru_cache(maxsize=4096)
def _parse(text: str) -> Version:
    """Memoised: a lint of a big build parses the same few version strings ~100,000 times (Version is frozen;
    nothing subclasses it)."""
    match = _LEADING.match(text)
    if not match:
        raise ValueError(f"not a version number: {text!r} (expected X.Y.Z)")
    return Version(tuple(int(p) for p in match.group(1).split(".")), match.group(2))
