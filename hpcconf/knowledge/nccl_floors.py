"""Bus-bandwidth floors and references per SKU, collective and node count (``hpcconf/data/nccl_floors.yaml``).

A floor is a published pass threshold (Azure's node health checks); a reference is a published
measurement of a healthy system. Lookups return ``None`` where no source gives a number: the report
then says "no floor" rather than inventing one.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Optional

from .. import data_tables

DATA_FILE = Path(__file__).resolve().parents[1] / "data" / "nccl_floors.yaml"


def size_bytes(size: str) -> int:
    """``16G`` -> bytes (nccl-tests' K/M/G are powers of 1024)."""
    factor = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(size[-1].upper(), 1)
    return int(size.rstrip("KMGkmg")) * factor


@dataclass(frozen=True)
class Floor:
    sku: str
    collective: str
    nodes: int
    ranks: int  # ranks of the run the threshold was set for (one per GPU of each node)
    message_size: str
    gbps: float
    source: str
    commit: Optional[str] = None

    @property
    def message_bytes(self) -> int:
        return size_bytes(self.message_size)

    def citation(self) -> str:
        return f"{self.source} @{self.commit[:8]}" if self.commit else self.source


@dataclass(frozen=True)
class LinkRate:
    gpu: str
    gbps: float  # both directions together
    source: str


@dataclass(frozen=True)
class FloorTable:
    floors: tuple[Floor, ...]
    references: tuple[Floor, ...]
    nvlink: tuple[LinkRate, ...]
    pcie: tuple[LinkRate, ...] = ()

    def floor(self, sku: str, collective: str, nodes: int, ranks: Optional[int]) -> Optional[Floor]:
        return _match(self.floors, sku, collective, nodes, ranks)

    def reference(self, sku: str, collective: str, nodes: int, ranks: Optional[int],
                  message_bytes: Optional[int] = None) -> Optional[Floor]:
        rows = [r for r in self.references if message_bytes is None or r.message_bytes == message_bytes]
        return _match(tuple(rows), sku, collective, nodes, ranks) or (
            _match(self.references, sku, collective, nodes, ranks) if message_bytes is not None else None)

    def nvlink_rate(self, gpu_model: str) -> Optional[LinkRate]:
        return next((rate for rate in self.nvlink if rate.gpu == gpu_model), None)

    def pcie_rate(self, gpu_model: str) -> Optional[LinkRate]:
        return next((rate for rate in self.pcie if rate.gpu == gpu_model), None)


def _match(rows: tuple[Floor, ...], sku: str, collective: str, nodes: int, ranks: Optional[int]) -> Optional[Floor]:
    """The row for exactly this SKU, collective and node count; a run on fewer GPUs than the row was
    set for (``ranks``) is a different test and gets none."""
    for row in rows:
        if (row.sku, row.collective, row.nodes) == (sku, collective, nodes) and (ranks is None or ranks == row.ranks):
            return row
    return None


def _floor(row: dict[str, Any]) -> Floor:
    return Floor(sku=row["sku"], collective=row["collective"], nodes=int(row["nodes"]), ranks=int(row["ranks"]),
                 message_size=str(row["message_size"]), gbps=float(row["gbps"]), source=row["source"],
                 commit=row.get("commit"))


@lru_cache(maxsize=None)
def load_floors(path: Path = DATA_FILE) -> FloorTable:
    data = data_tables.load(path)
    return FloorTable(
        floors=tuple(_floor(row) for row in data["floors"]),
        references=tuple(_floor(row) for row in data.get("references", [])),
        nvlink=tuple(LinkRate(row["gpu"], float(row["gbps"]), row["source"]) for row in data.get("nvlink_gbps", [])),
        pcie=tuple(LinkRate(row["gpu"], float(row["gbps"]), row["source"]) for row in data.get("pcie_gbps", [])),
    )
