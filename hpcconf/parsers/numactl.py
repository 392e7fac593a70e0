"""``numactl -H`` (``--hardware``): the NUMA nodes and their CPUs.

``node 0 cpus: 0 1 2 ...`` lines; a node without CPUs (``node 2 cpus:``, e.g. a GPU's memory exposed
as a NUMA node on Grace Hopper) has an empty list. Sizes and distances are not needed.
"""

from __future__ import annotations

import re

from .node_common import RECOLLECT, Fact, malformed

_CPUS = re.compile(r"^node (\d+) cpus:\s*(.*?)\s*$")


def parse_numactl(text: str, path: str) -> dict[int, Fact[list[int]]]:
    name = path.rsplit("/", 1)[-1]
    nodes: dict[int, Fact[list[int]]] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        match = _CPUS.match(line.strip())
        if match is None:
            continue
        cells = match.group(2).split()
        if not all(cell.isdigit() for cell in cells):
            malformed(path, number, f"node {match.group(1)}: CPUs {match.group(2)!r} are not numbers", RECOLLECT)
        nodes[int(match.group(1))] = Fact(sorted(int(cell) for cell in cells), name, number, f"node {match.group(1)} cpus")
    if not nodes and text.strip():
        malformed(path, 1, "no 'node N cpus:' line (is this `numactl -H` output?)", RECOLLECT)
    return nodes
