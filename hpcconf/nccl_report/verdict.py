"""Judge nccl-tests runs against a SKU's sourced bus-bandwidth floor.

A floor applies to one SKU, collective, node count and rank count, at one message size (the size the
health check runs). The measured value is the row at that size: the mean of its out-of-place and
in-place busbw, as nccl-tests' ``# Avg bus bandwidth`` (what the health check reads) would be for a run
of that single size. A log that stops below the floor's size is judged only when it already passes at
its largest size (busbw grows with the message size); otherwise the verdict is "inconclusive", never a
guessed failure. Only ``float`` rows are judged, the type the thresholds were set with. A derived floor
beyond the shapes its efficiency was measured on is reference only: a run under it is "below reference",
reported, never failed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Optional

from ..catalog import Sku
from ..knowledge.nccl_bounds import derived_min_bytes, no_bound_detail
from ..knowledge.nccl_floors import Floor, FloorTable
from ..parsers.nccl_tests_log import Row, TestRun

Status = Literal["pass", "below", "below reference", "wrong", "inconclusive", "no floor"]
FAILING: frozenset[str] = frozenset({"below", "wrong"})
JUDGED_TYPE = "float"


@dataclass(frozen=True)
class Target:
    """What the run should have been: the SKU and node count (``None`` where the log decides)."""

    sku: Optional[Sku] = None
    nodes: Optional[int] = None


@dataclass(frozen=True)
class Limit:
    """The collective's physical ceiling (``ceiling``: a busbw bound), or a line rate it comes from, shown
    beside it (NVLink per GPU, InfiniBand per node: not a busbw bound, NVLS exceeds NVLink's)."""

    label: str
    gbps: float
    source: str
    ceiling: bool = False


@dataclass
class Verdict:
    log: str
    run: TestRun
    dtype: str
    status: Status
    message: str
    nodes: Optional[int]
    measured: Optional[float] = None  # busbw at ``at_size`` (GB/s)
    at_size: Optional[int] = None
    floor: Optional[Floor] = None
    reference: Optional[Floor] = None
    limits: list[Limit] = field(default_factory=list)
    sku: Optional[str] = None  # the SKU judged against (--sku, --spec)
    derived: bool = False  # the floor is derived from the SKU's links, not published (hpcconf.knowledge.nccl_bounds)
    decisive: bool = True  # False: a derived floor beyond the shapes it was measured on, reported, never failing

    @property
    def floor_kind(self) -> str:
        """The floor's provenance as every format shows it: published, derived, or derived (reference only)."""
        if not self.derived:
            return "published"
        return "derived" if self.decisive else "derived, reference only"

    @property
    def rows(self) -> list[Row]:
        return self.run.series(self.dtype)

    @property
    def gap_gbps(self) -> Optional[float]:
        if self.floor is None or self.measured is None:
            return None
        return round(self.floor.gbps - self.measured, 2)

    @property
    def gap_percent(self) -> Optional[float]:
        gap = self.gap_gbps
        return None if gap is None or self.floor is None else round(100.0 * gap / self.floor.gbps, 1)

    @property
    def ceiling(self) -> Optional[Limit]:
        """The busbw bound for the run's collective and algorithm (None where no link bounds it), the one
        limit the table, the JSON and the plot call "limit"; the others are line rates."""
        return next((limit for limit in self.limits if limit.ceiling), None)

    @property
    def failed(self) -> bool:
        return self.status in FAILING


def line_rates(sku: Sku, nodes: int, table: FloorTable) -> list[Limit]:
    """NVLink per GPU and direction on one node; InfiniBand per node beyond one."""
    limits: list[Limit] = []
    rate = table.nvlink_rate(sku.gpu.model) if sku.nvlink.present else None
    if rate is not None:
        limits.append(Limit("NVLink per GPU, one direction", rate.gbps / 2, rate.source))
    if nodes > 1 and sku.infiniband is not None:  # across nodes the fabric is the narrower link: first
        ib = sku.infiniband
        limits.insert(0, Limit(f"InfiniBand {ib.count} x {ib.gbps} Gb/s {ib.rate} per node", ib.count * ib.gbps / 8,
                            f"SKU catalog: {sku.name} infiniband"))
    return limits




def run_algorithm(run: TestRun) -> Optional[str]:
    """The NCCL algorithm the run was pinned to, where the log says it: the generated jobs' Ring pass."""
    return "Ring" if run.label is not None and run.label.startswith("ring.") else None


def limits_for(sku: Sku, collective: Optional[str], nodes: int, table: FloorTable,
               ranks: Optional[int] = None, algorithm: Optional[str] = None) -> list[Limit]:
    """The collective's physical ceiling for its algorithm first (NVLS/NVLSTree where the SKU has NVLink
    SHARP and the run is not pinned to Ring), then the line rates it comes from."""
    from ..knowledge.nccl_bounds import limit

    ceiling = limit(sku, collective, nodes, ranks, algorithm) if collective else None
    lines = line_rates(sku, nodes, table)
    if ceiling is None:
        return lines
    return [Limit(f"{ceiling.label} ({ceiling.origin})", ceiling.gbps, ceiling.source, ceiling=True)] + lines


def _derived_floor(sku: Sku, collective: str, nodes: int, ranks: Optional[int], rows: list[Row],
                   table: FloorTable, algorithm: Optional[str] = None) -> Optional[tuple[Floor, bool]]:
    """The derived floor for the run and whether it is decisive on the run's shape and algorithm."""
    from ..knowledge.nccl_bounds import floor

    if not rows:
        return None
    largest = max(rows, key=lambda r: r.size)
    bound = floor(sku, collective, nodes, ranks, table, algorithm, largest.size)
    if bound is None or bound.origin != "derived":
        return None
    ranks = ranks or nodes * sku.gpu.count
    return Floor(sku=sku.name, collective=collective, nodes=nodes, ranks=ranks,
                 message_size=human_size(max(largest.size, derived_min_bytes(ranks))), gbps=bound.gbps,
                 source=f"derived: {bound.label}; {bound.source}"), bound.decisive


def _row_at(rows: list[Row], size: int) -> Optional[Row]:
    return next((row for row in rows if row.size == size), None)


def judge(log: str, run: TestRun, dtype: str, target: Target, table: FloorTable) -> Verdict:
    rows = run.series(dtype)
    nodes = target.nodes or run.nodes
    verdict = Verdict(log, run, dtype, "no floor", "", nodes, sku=target.sku.name if target.sku else None)
    wrong = [row for row in rows if row.wrong]
    if wrong:
        verdict.status = "wrong"
        verdict.message = (f"{len(wrong)} message size(s) with wrong results (#wrong > 0, first at line "
                           f"{wrong[0].line}): the collective returned bad data")
        return verdict
    if target.sku is None:
        verdict.message = "no floor: no SKU given (--sku or --spec)"
        return verdict
    if nodes is None:
        verdict.message = "no floor: the log does not say how many nodes ran; pass --nodes"
        return verdict
    verdict.limits = limits_for(target.sku, run.collective, nodes, table, run.ranks, run_algorithm(run))
    if run.collective is None:
        verdict.message = "no floor: the log does not name the collective; pass --collective"
        return verdict
    floor = table.floor(target.sku.name, run.collective, nodes, run.ranks)
    if floor is not None and nodes > 1 and rows and max(r.size for r in rows) < floor.message_bytes:
        floor = None  # a multi-node log short of the published size: the derived floor (nccl_bounds.floor)
    verdict.reference = table.reference(target.sku.name, run.collective, nodes, run.ranks,
                                        floor.message_bytes if floor else None)
    if floor is None:
        derived = _derived_floor(target.sku, run.collective, nodes, run.ranks, rows, table, run_algorithm(run))
        if derived is not None:
            floor, verdict.decisive = derived
        verdict.derived = floor is not None
    if floor is None:
        verdict.message = (f"no floor: no published threshold for {run.collective} on {nodes} x {target.sku.name}"
                           + (f" with {run.ranks} ranks" if run.ranks else "")
                           + f" and none derived ({_why_not_derived(target.sku, nodes, run.ranks, run.collective)})")
        return verdict
    if dtype != JUDGED_TYPE:
        verdict.message = f"no floor: the {floor.gbps:g} GB/s threshold is set with float, this series is {dtype}"
        return verdict
    verdict.floor = floor
    return _compare(verdict, rows, floor)


def _compare(verdict: Verdict, rows: list[Row], floor: Floor) -> Verdict:
    if verdict.derived:
        return _compare_derived(verdict, rows, floor)
    row = _row_at(rows, floor.message_bytes)
    exact = row is not None
    if row is None:
        smaller = [r for r in rows if r.size < floor.message_bytes]
        if not smaller:
            verdict.status = "inconclusive"
            verdict.message = f"inconclusive: every message is larger than the floor's {floor.message_size}"
            return verdict
        row = max(smaller, key=lambda r: r.size)
    verdict.measured, verdict.at_size = round(row.busbw, 2), row.size
    if verdict.measured >= floor.gbps:
        verdict.status = "pass"
        verdict.message = f"pass: {verdict.measured:g} >= {floor.gbps:g} GB/s at {human_size(row.size)}" + (
            "" if exact else f" (the floor is set at {floor.message_size}; busbw only grows with size)")
    elif exact:
        verdict.status = "below"
        verdict.message = (f"below floor: {verdict.measured:g} GB/s at {floor.message_size}, floor {floor.gbps:g} GB/s "
                           f"(-{verdict.gap_gbps:g} GB/s, -{verdict.gap_percent:g}%)")
    else:
        verdict.status = "inconclusive"
        verdict.message = (f"inconclusive: {verdict.measured:g} GB/s at {human_size(row.size)}, the largest size "
                           f"in the log; the {floor.gbps:g} GB/s floor is set at {floor.message_size}: "
                           f"rerun with -e {floor.message_size}")
    return verdict


def _compare_derived(verdict: Verdict, rows: list[Row], floor: Floor) -> Verdict:
    row = max(rows, key=lambda r: r.size)
    verdict.measured, verdict.at_size = round(row.busbw, 2), row.size
    least = derived_min_bytes(floor.ranks)
    if row.size < least:
        verdict.status = "inconclusive"
        verdict.message = (f"inconclusive: the largest message is {human_size(row.size)}; the derived floor "
                           f"({floor.gbps:g} GB/s) is a bandwidth plateau, reached from {human_size(least)} "
                           f"(16 MiB per rank) on {floor.ranks} ranks: rerun with -e {human_size(max(least, 1 << 30))}")
    elif verdict.measured >= floor.gbps:
        verdict.status = "pass"
        kind = "derived floor" if verdict.decisive else "derived floor, reference only"
        verdict.message = f"pass ({kind}): {verdict.measured:g} >= {floor.gbps:g} GB/s at {human_size(row.size)}"
    elif not verdict.decisive:
        verdict.status = "below reference"
        verdict.message = (f"below the reference floor (derived, reference only: not measured on this shape, "
                           f"so not a failure): {verdict.measured:g} GB/s at {human_size(row.size)}, reference "
                           f"{floor.gbps:g} GB/s (-{verdict.gap_gbps:g} GB/s, -{verdict.gap_percent:g}%)")
    else:
        verdict.status = "below"
        verdict.message = (f"below the derived floor: {verdict.measured:g} GB/s at {human_size(row.size)}, derived "
                           f"floor {floor.gbps:g} GB/s (-{verdict.gap_gbps:g} GB/s, -{verdict.gap_percent:g}%)")
    return verdict


def judge_runs(log: str, runs: list[TestRun], target: Target, table: FloorTable) -> list[Verdict]:
    return [judge(log, run, dtype, target, table) for run in runs for dtype in run.dtypes()]


def human_size(size: int) -> str:
    for unit, factor in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if size >= factor and size % factor == 0:
            return f"{size // factor}{unit}"
    return f"{size}B"


def _why_not_derived(sku: Sku, nodes: int, ranks: Optional[int], collective: Optional[str] = None) -> str:
    """Why no derived floor applies: a slice of the nodes (the factors hold for every GPU of every node), else the
    SKU's own reason (one GPU, no InfiniBand, GPUs not all linked)."""
    if ranks is not None and ranks != nodes * sku.gpu.count:
        return f"a part of the node(s): {ranks} of {nodes * sku.gpu.count} GPUs; derived floors hold for full nodes"
    return no_bound_detail(sku, nodes, collective)
