"""Which program reads an ``NCCL_*``-named variable that NCCL itself does not read.

NCCL ignores names it does not look up, but other programs share the prefix: PyTorch's ProcessGroupNCCL
(``NCCL_ASYNC_ERROR_HANDLING`` and the other fallback names of its ``TORCH_NCCL_*`` options), builds
(``NCCL_VERSION``, ``NCCL_HOME``, ``NCCL_ROOT`` read by CMake and Makefiles), nccl-tests. A name one of them
reads is not a dead setting. The table is ``hpcconf/data/env_consumers.tsv``, each row with its source.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

DATA_FILE = Path(__file__).resolve().parents[1] / "data" / "env_consumers.tsv"


@dataclass(frozen=True)
class EnvConsumer:
    name: str
    prefix: bool
    consumer: str  # "PyTorch", "build", "nccl-tests", ...
    what: str
    source: str


@lru_cache(maxsize=1)
def _rows() -> tuple[EnvConsumer, ...]:
    lines = [line for line in DATA_FILE.read_text(encoding="utf-8").splitlines() if not line.startswith("#")]
    return tuple(EnvConsumer(row["name"], row["match"] == "prefix", row["consumer"], row["what"], row["source"])
                 for row in csv.DictReader(lines, delimiter="\t"))


def consumer_of(name: str) -> EnvConsumer | None:
    """The non-NCCL program known to read ``name``, or None."""
    for row in _rows():
        if name == row.name or (row.prefix and name.startswith(row.name)):
            return row
    return None


def read_by_text(name: str, text: str, skip_lines: range = range(0)) -> bool:
    """Whether ``text`` (the file that sets ``name``) expands it itself: ``$NAME`` or ``${NAME...}``,
    outside ``skip_lines`` (1-based: the setting itself, whose value may name its own old value).

    A script or container command that uses its own variable (``cp lib.so $NCCL_INSTALL_DIR/``) is that
    variable's consumer, whatever NCCL reads.
    """
    return any(number not in skip_lines for number in _expansions(text).get(name, ()))


@lru_cache(maxsize=8)
def _expansions(text: str) -> dict[str, tuple[int, ...]]:
    """Every ``$NAME`` / ``${NAME`` of ``text`` with its lines, found in one pass (a file setting thousands
    of variables is read once, not once per variable)."""
    found: dict[str, list[int]] = {}
    for number, line in enumerate(text.splitlines(), 1):
        for match in _EXPANSION.finditer(line):
            found.setdefault(match.group(1), []).append(number)
    return {name: tuple(lines) for name, lines in found.items()}


_EXPANSION = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)")