"""``lspci -D -nn [-vvv]``: the device name on each device's first line.

``0000:17:00.0 Infiniband controller [0207]: Mellanox Technologies MT2910 Family [ConnectX-7] [15b3:1021]``
gives the bus id, the class, the vendor's name for the device and its ids. The indented ``-vvv``
detail lines are skipped (their link status needs root, so the collection reads sysfs instead).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .node_common import Fact

_FIRST = re.compile(r"^([0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]) (.+?) \[([0-9a-f]{4})\]: (.+?) \[([0-9a-f]{4}):([0-9a-f]{4})\]")


@dataclass(frozen=True)
class PciName:
    class_name: str  # "Infiniband controller"
    name: str  # "Mellanox Technologies MT2910 Family [ConnectX-7]"

    @property
    def bracketed(self) -> str | None:
        """The marketing name pci.ids puts in brackets ("ConnectX-7"), if any."""
        found = re.findall(r"\[([^\]]+)\]", self.name)
        return found[-1] if found else None


def parse_lspci_names(text: str, path: str) -> dict[str, Fact[PciName]]:
    """Bus id -> the device's name line; lines that are not a device's first line are skipped."""
    name = path.rsplit("/", 1)[-1]
    out: dict[str, Fact[PciName]] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        match = _FIRST.match(line)
        if match:
            out[match.group(1)] = Fact(PciName(match.group(2), match.group(4)), name, number, "device name")
    return out
