"""Reads KEY=VALUE settings from nccl.conf files, env files and shell/sbatch scripts.

nccl.conf is read the way NCCL's ``param.cc`` reads it: a line is skipped only when it
*starts* with ``#`` or has no ``=``; the key is everything before the first ``=``
(spaces included) and the value everything after it (spaces and ``# ...`` included).
No quoting, no ``export``, no expansion. Env files and scripts are read the way a POSIX
shell reads simple assignments: optional ``export``, quotes removed, ``#`` after blanks
starts a comment.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

_SHELL_ASSIGNMENT = re.compile(r"^(?P<indent>\s*)(?P<export>export\s+)?(?P<key>[A-Za-z_][A-Za-z0-9_]*)=(?P<value>.*)$")


@dataclass(frozen=True)
class ConfEntry:
    line: int  # 1-based
    key: str  # the key exactly as the consumer sees it (for nccl.conf: with any spaces)
    value: str  # the value as the consumer sees it (nccl.conf: raw; shell: unquoted)
    raw: str  # the whole line
    key_column: int  # 1-based column of the key's first character
    value_column: int  # 1-based column of the value's first character
    exported: bool = False  # 'export KEY=VALUE'

    @property
    def name(self) -> str:
        """The key without surrounding spaces (what the author meant)."""
        return self.key.strip()

    @property
    def end_column(self) -> int:
        return len(self.raw.rstrip("\r\n")) + 1


@dataclass
class ConfFile:
    entries: list[ConfEntry] = field(default_factory=list)

    def get(self, name: str) -> ConfEntry | None:
        """The entry that takes effect for ``name``. nccl.conf: the first (setenv does not
        overwrite); shell: the last assignment."""
        matches = [e for e in self.entries if e.name == name]
        return matches[0] if matches else None

    def names(self) -> list[str]:
        return [e.name for e in self.entries]


def parse_conf(text: str, kind: str) -> ConfFile:
    if kind == "nccl-conf":
        return parse_nccl_conf(text)
    return parse_shell_assignments(text)


def parse_nccl_conf(text: str) -> ConfFile:
    entries = []
    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw[:-1] if raw.endswith("\r") else raw  # NCCL strips one trailing \r
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, value = line.partition("=")
        entries.append(ConfEntry(line=number, key=key, value=value, raw=line,
                                 key_column=1, value_column=len(key) + 2))
    return ConfFile(entries)


def parse_shell_assignments(text: str) -> ConfFile:
    """``KEY=VALUE`` and ``export KEY=VALUE`` lines (also inside scripts); others are skipped."""
    entries = []
    for number, raw in enumerate(text.splitlines(), start=1):
        match = _SHELL_ASSIGNMENT.match(raw)
        if not match:
            continue
        value = _shell_value(match.group("value"))
        if value is None:
            continue
        entries.append(ConfEntry(line=number, key=match.group("key"), value=value, raw=raw,
                                 key_column=match.start("key") + 1, value_column=match.start("value") + 1,
                                 exported=bool(match.group("export"))))
    return ConfFile(entries)


def _shell_value(text: str) -> str | None:
    """The value of a shell assignment, or None when its quoting does not parse."""
    if not text.strip():
        return ""
    try:
        words = shlex.split(text, comments=True, posix=True)
    except ValueError:
        return None
    # 'K=v cmd args' sets K for that command only; it still reaches NCCL there.
    return words[0] if words else ""
