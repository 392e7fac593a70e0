"""The floor each nccl-tests run of a generated job is judged against, resolved once as plain data, so the
job's own bash/awk verdict (hpcconf.targets.nccl_verdict) judges with exactly what ``hpcconf nccl-report``
uses: the published floor for the run where one exists, else the one derived from the SKU's links
(hpcconf.knowledge.nccl_bounds), read the same way (a published one at its message size, a derived one at
the largest message, which must reach ``derived_min_bytes(ranks)``: 16 MiB per rank, 256 MiB at least). A derived floor beyond the shapes its factor was
measured on is ``decisive=False``: the job reports a run under it and does not fail.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Optional

from ..catalog import Sku
from ..knowledge.nccl_bounds import derived_min_bytes, floor
from ..knowledge.nccl_floors import size_bytes


@dataclass(frozen=True)
class VerdictFloor:
    """busbw (GB/s) a float run must reach, where the log is read, and the floor's provenance."""

    gbps: float
    origin: Literal["published", "derived"]
    message_bytes: int  # published: the size the floor is set at; derived: the least the largest size must be
    source: str
    decisive: bool = True  # False: a reference-only derived floor (hpcconf.knowledge.nccl_bounds.Bound.decisive)


def verdict_floor(sku: Sku, collective: str, nodes: int, ranks: int, algorithm: Optional[str] = None,
                  max_bytes: Optional[int] = None) -> Optional[VerdictFloor]:
    """``max_bytes``: the run's -e (across nodes, short of a published floor's size: the derived floor)."""
    bound = floor(sku, collective, nodes, ranks, algorithm=algorithm, max_bytes=max_bytes)
    if bound is None:
        return None
    if bound.origin == "published" and bound.message_size is not None:
        return VerdictFloor(bound.gbps, "published", size_bytes(bound.message_size), bound.source)
    # The job prints the floor and its links; the efficiency's evidence stays in data/nccl_floors.yaml
    # (`derivation`), which nccl-report cites in full.
    kind = "derived" if bound.decisive else "reference only (derived, not measured on this shape)"
    return VerdictFloor(bound.gbps, "derived", derived_min_bytes(ranks),
                        f"{kind}: {bound.label}; efficiency: hpcconf data/nccl_floors.yaml derivation",
                        bound.decisive)
