"""``ibstat``: one ``CA 'mlx5_0'`` block per HCA, with ``Port n:`` sub-blocks.

Read per CA: ``CA type`` (MT4129 ...); per port: ``State``, ``Rate`` (Gb/s per port, e.g. 400) and
``Link layer`` (InfiniBand or Ethernet: a RoCE/Ethernet function is not an InfiniBand HCA).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .node_common import RECOLLECT, Fact, malformed

_CA = re.compile(r"^CA '([^']+)'\s*$")
_PORT = re.compile(r"^\s+Port (\d+):\s*$")
_KEY = re.compile(r"^\s+([A-Za-z][A-Za-z ]*?):\s*(.*?)\s*$")


@dataclass
class IbPort:
    number: int
    line: int
    fields: dict[str, Fact[str]] = field(default_factory=dict)


@dataclass
class IbCa:
    name: str
    line: int
    fields: dict[str, Fact[str]] = field(default_factory=dict)
    ports: list[IbPort] = field(default_factory=list)


def parse_ibstat(text: str, path: str) -> list[IbCa]:
    name = path.rsplit("/", 1)[-1]
    cas: list[IbCa] = []
    port: IbPort | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        if (ca := _CA.match(line)) is not None:
            cas.append(IbCa(ca.group(1), number))
            port = None
        elif (found := _PORT.match(line)) is not None and cas:
            port = IbPort(int(found.group(1)), number)
            cas[-1].ports.append(port)
        elif (key := _KEY.match(line)) is not None and cas:
            fact = Fact(key.group(2), name, number, f"{cas[-1].name} {key.group(1)}")
            (port.fields if port is not None else cas[-1].fields)[key.group(1)] = fact
        else:
            malformed(path, number, f"expected \"CA '<name>'\", 'Port n:' or 'Key: value', got {line.strip()!r}", RECOLLECT)
    return cas
