"""The collection's own files and the kernel files it copies.

* ``collect.log`` -- one ``status<TAB>file<TAB>command`` line per item (ok, missing, failed rc=N,
  unreachable, skipped); a later line for the same file wins (a retried query).
* ``meta.txt`` -- ``key=value`` lines (date, kernel, nproc, os, product_name, ...).
* ``*.tsv`` -- a header line of column names, then one tab-separated row per device
  (``pci-devices.tsv``, ``infiniband.tsv``, ``net.tsv``); ``numa-nodes.tsv`` has no header
  (``id<TAB>cpulist``). ``-`` means the kernel file was absent.
* ``meminfo.txt`` -- ``/proc/meminfo`` (``MemTotal:  131981020 kB``).
"""

from __future__ import annotations

import re

from .node_common import RECOLLECT, Fact, malformed

_MEMINFO = re.compile(r"^(\w[\w()]*):\s+(\d+)(?: kB)?\s*$")


def parse_collect_log(text: str, path: str) -> dict[str, Fact[str]]:
    name = path.rsplit("/", 1)[-1]
    out: dict[str, Fact[str]] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        cells = line.split("\t")
        if len(cells) != 3 or not cells[0]:
            malformed(path, number, f"expected 'status<TAB>file<TAB>command', got {line!r}", RECOLLECT)
        out[cells[1]] = Fact(cells[0], name, number, cells[2])
    return out


def parse_meta(text: str, path: str) -> dict[str, Fact[str]]:
    name = path.rsplit("/", 1)[-1]
    out: dict[str, Fact[str]] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        key, sep, value = line.partition("=")
        if not sep or not key.strip():
            malformed(path, number, f"expected 'key=value', got {line!r}", RECOLLECT)
        out[key.strip()] = Fact(value.strip(), name, number, key.strip())
    return out


def parse_tsv(text: str, path: str, columns: tuple[str, ...]) -> list[dict[str, Fact[str]]]:
    """Rows of a collected TSV whose header must contain ``columns``; ``-`` values are dropped."""
    name = path.rsplit("/", 1)[-1]
    lines = text.splitlines()
    if not lines:
        return []
    header = lines[0].split("\t")
    absent = [column for column in columns if column not in header]
    if absent:
        malformed(path, 1, f"the header lacks {', '.join(absent)} (columns: {', '.join(header)})", RECOLLECT)
    rows = []
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        cells = line.split("\t")
        if len(cells) != len(header):
            malformed(path, number, f"{len(cells)} values for {len(header)} columns", RECOLLECT)
        rows.append({column: Fact(value, name, number, column) for column, value in zip(header, cells)
                     if value not in ("-", "")})
    return rows


def parse_numa_nodes(text: str, path: str) -> dict[int, Fact[str]]:
    """``numa-nodes.tsv``: node id -> its cpulist ("" for a node without CPUs)."""
    name = path.rsplit("/", 1)[-1]
    out: dict[int, Fact[str]] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        node, _, cpus = line.partition("\t")
        if not node.isdigit():
            malformed(path, number, f"expected 'id<TAB>cpulist', got {line!r}", RECOLLECT)
        out[int(node)] = Fact("" if cpus.strip() == "-" else cpus.strip(), name, number, f"node{node}/cpulist")
    return out


def parse_meminfo(text: str, path: str) -> dict[str, Fact[int]]:
    """``/proc/meminfo``: field -> value (kB for the sized fields)."""
    name = path.rsplit("/", 1)[-1]
    out: dict[str, Fact[int]] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        match = _MEMINFO.match(line)
        if match is None:
            if line.strip():
                malformed(path, number, f"expected 'Field:  N kB', got {line.strip()!r} (is this /proc/meminfo?)", RECOLLECT)
            continue
        out[match.group(1)] = Fact(int(match.group(2)), name, number, match.group(1))
    return out
