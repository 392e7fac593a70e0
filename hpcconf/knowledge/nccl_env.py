"""Which NCCL releases read which ``NCCL_*`` environment variables.

The facts come from ``hpcconf/data/nccl_env_vars.tsv`` (a scan of
NVIDIA/nccl ``src/`` at every v2.x release tag). A variable is *read* by a release when that
release's source looks it up (``NCCL_PARAM``, ``getenv``/``ncclGetEnv`` literal, ``ncclGetLevel``).
NCCL silently ignores names it does not read, so a typo or a removed name is a setting that
does nothing; :func:`suggest` turns that into an actionable hint.
"""

from __future__ import annotations

import csv
import difflib
import re
from dataclasses import dataclass
from functools import lru_cache, total_ordering
from pathlib import Path
from typing import Union

from .versions import Version

DATA_FILE = Path(__file__).resolve().parents[1] / "data" / "nccl_env_vars.tsv"

_NCCL_SUFFIX = re.compile(r"^(?:-(\d+))?(?:[+~].*)?$")  # a git tag's "-1" build, or local "+cuda12" tags


@total_ordering
@dataclass(frozen=True)
class NcclVersion:
    """An NCCL release number. ``"2.18"`` (no patch) stands for the whole 2.18 series."""

    major: int
    minor: int
    patch: int | None = None
    build: int | None = None  # the "-1" of a git tag like v2.18.5-1; ignored in comparisons

    @classmethod
    def parse(cls, text: "str | NcclVersion") -> "NcclVersion":
        if isinstance(text, NcclVersion):
            return text
        return _parse_nccl(text if type(text) is str else str(text))


    @property
    def key(self) -> tuple[int, int, int]:
        return (self.major, self.minor, self.patch or 0)

    @property
    def series_end(self) -> tuple[int, int, int]:
        """The highest version this stands for: itself, or the end of its series when no patch."""
        return (self.major, self.minor, self.patch if self.patch is not None else 10**9)

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, NcclVersion):
            return NotImplemented
        return self.key < other.key

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, NcclVersion):
            return NotImplemented
        return self.key == other.key and (self.patch is None) == (other.patch is None)

    def __hash__(self) -> int:
        return hash((self.key, self.patch is None))

    def at_least(self, other: "VersionLike") -> bool:
        """True when this release (any release of the series, if no patch) is ``other`` or newer."""
        return self.series_end >= NcclVersion.parse(other).key

    def __str__(self) -> str:
        text = f"{self.major}.{self.minor}"
        return text if self.patch is None else f"{text}.{self.patch}"


@lru_cache(maxsize=1024)
def _parse_nccl(text: str) -> NcclVersion:
    """Memoised (NcclVersion is frozen): a lint of a big build parses the same few versions ~70,000 times."""
    try:
        version = Version.parse(text)
    except ValueError:
        version = None
    suffix = _NCCL_SUFFIX.match(version.suffix) if version is not None else None
    if version is None or suffix is None or len(version.parts) not in (2, 3):
        raise ValueError(f"not an NCCL version: {text!r} (expected e.g. 2.18.5 or v2.18.5-1)")
    major, minor, *patch = version.parts
    return NcclVersion(major, minor, patch[0] if patch else None, int(suffix.group(1)) if suffix.group(1) else None)


VersionLike = Union[str, NcclVersion]


@dataclass(frozen=True)
class DeprecatedDefault:
    """A name NCCL stopped reading before the oldest release the table scans, whose purpose became the default."""

    name: str
    deprecated_in: str
    default_now: str  # what NCCL does without it, which is what setting it asked for


# NVIDIA/nccl docs/userguide/source/env.rst: NCCL_CHECKS_DISABLE "(since 2.0.5, deprecated in 2.2.12)" disabled the
# argument checks "to improve performance in production"; from 2.2.12 the costly pointer checks are off by default
# (NCCL_CHECK_POINTERS "The default is 0 ... Setting to 1 restores the original behavior of NCCL prior to 2.2.12").
# No release from 2.3.5 reads it (no NCCL_PARAM(ChecksDisable) in src/ at any tag), nor RCCL (rocm-6.2.2).
DEPRECATED_DEFAULTS = {
    "NCCL_CHECKS_DISABLE": DeprecatedDefault(
        "NCCL_CHECKS_DISABLE", "2.2.12",
        "the pointer checks it turned off are off by default since then (NCCL_CHECK_POINTERS=0)"),
}


def deprecated_default(name: str) -> DeprecatedDefault | None:
    """The deprecation of a name whose intent NCCL now follows without it; None for any other name."""
    return DEPRECATED_DEFAULTS.get(name)


@dataclass(frozen=True)
class VarInfo:
    name: str
    first: NcclVersion  # first release tag that reads it
    last: NcclVersion | None  # last release tag that reads it; None = still read by the newest
    status: str  # "current" or "removed"
    default: str
    replacement: str  # what to use once this name is gone ("" when none)
    read_via: str
    notes: str

    def read_by(self, version: NcclVersion) -> bool:
        if version.series_end < self.first.key:
            return False
        return self.last is None or version.key <= self.last.key


@lru_cache(maxsize=1)
def _table() -> dict[str, VarInfo]:
    lines = [line for line in DATA_FILE.read_text(encoding="utf-8").splitlines() if not line.startswith("#")]
    table: dict[str, VarInfo] = {}
    for row in csv.DictReader(lines, delimiter="\t"):
        table[row["name"]] = VarInfo(
            name=row["name"],
            first=NcclVersion.parse(row["first_version"]),
            last=NcclVersion.parse(row["last_version"]) if row["last_version"] else None,
            status=row["status"],
            default=row["default"],
            replacement=row["replacement"],
            read_via=row["read_via"],
            notes=row["notes"],
        )
    return table


def all_vars() -> list[VarInfo]:
    """Every variable any NCCL release reads, by name."""
    return [info for _, info in sorted(_table().items())]


def known_versions() -> list[NcclVersion]:
    """The releases the table names (first/last readers and default changes), oldest first."""
    return list(_known_versions())


@lru_cache(maxsize=1)  # asked once per variable a file sets: recomputing it made lint slow on long env lists
def _known_versions() -> tuple[NcclVersion, ...]:
    found: set[tuple[int, int, int]] = set()
    for info in _table().values():
        found.add(info.first.key)
        if info.last is not None:
            found.add(info.last.key)
        for match in re.finditer(r"\b(\d+\.\d+\.\d+):", info.notes):
            found.add(NcclVersion.parse(match.group(1)).key)
    return tuple(NcclVersion(*key) for key in sorted(found))


def newest_version() -> NcclVersion:
    return known_versions()[-1]


def _version(version: VersionLike | None) -> NcclVersion:
    return newest_version() if version is None else NcclVersion.parse(version)


def lookup(name: str) -> VarInfo | None:
    return _table().get(name)


def is_read_by(name: str, version: VersionLike | None = None) -> bool:
    """Whether NCCL ``version`` (default: the newest known) reads ``name``.

    A version without patch ("2.18") counts as reading a name any 2.18.x release reads.
    Releases newer than the table keep reading the names the newest one reads.
    """
    info = lookup(name)
    if info is None:
        return False
    ver = _version(version)
    if info.last is None:
        return ver.series_end >= info.first.key
    return info.read_by(ver)


def names_read_by(version: VersionLike | None = None) -> list[str]:
    return list(_names_read_by(version))


@lru_cache(maxsize=64)  # asked once per unknown variable (for "did you mean"): linear, not quadratic, in their number
def _names_read_by(version: VersionLike | None) -> tuple[str, ...]:
    return tuple(name for name in sorted(_table()) if is_read_by(name, version))


def _renamed_to(name: str) -> list[str]:
    """Names that ``name`` replaced (the reverse of the replacement column)."""
    return [info.name for info in all_vars() if info.replacement == name]


def suggest(name: str, version: VersionLike | None = None) -> list[str]:
    """Names to use instead of ``name`` for NCCL ``version``; empty when ``name`` is read as is.

    Order: the documented replacement of a removed/renamed name, the older name a too-new one
    replaced, then close spellings among the names that version reads.
    """
    if is_read_by(name, version):
        return []
    ver = _version(version)
    found: list[str] = []
    info = lookup(name)
    if info is not None and info.replacement and is_read_by(info.replacement, ver):
        found.append(info.replacement)
    if info is not None and ver.key < info.first.key:
        found += [old for old in _renamed_to(name) if is_read_by(old, ver)]
    candidates = names_read_by(ver)
    upper = name.upper()
    if upper != name and upper in candidates:
        found.append(upper)  # environment names are case-sensitive
    if not upper.startswith("NCCL_") and "NCCL_" + upper in candidates:
        found.append("NCCL_" + upper)
    found += difflib.get_close_matches(upper, candidates, n=3, cutoff=0.8)
    unique: list[str] = []
    for candidate in found:
        if candidate not in unique and candidate != name:
            unique.append(candidate)
    return unique


def explain(name: str, version: VersionLike | None = None) -> str:
    """One sentence on why ``name`` is not read by ``version`` (for diagnostics)."""
    ver = _version(version)
    info = lookup(name)
    if info is None:
        return f"{name} is not read by any NCCL release (2.3.5 to {newest_version()})"
    if is_read_by(name, ver):
        return f"{name} is read by NCCL {ver}"
    if ver.series_end < info.first.key:
        return f"{name} is read only from NCCL {info.first}; NCCL {ver} ignores it"
    return f"{name} was last read by NCCL {info.last}; NCCL {ver} ignores it"
