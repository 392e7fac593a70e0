"""``--baseline``: a run against a recorded good run of the same machine and shape.

The check people run after a driver, NCCL or image update: busbw per message size against the baseline's,
as a ratio, summarised per size band. Every message size of 64 MiB or more (where busbw measures the links
rather than latency) is judged on its own: one below ``tolerance`` of the baseline's busbw at that size fails
the run, so a drop at the largest sizes is not averaged away by the sizes below it. The default tolerance, 0.9,
is nccl-tests' own: with ``NCCL_TESTS_MIN_BW`` set, a run whose average busbw is below 0.9 of it prints ``Avg
bus bandwidth ... FAILED`` and exits nonzero; that check is on the all-size average (NVIDIA/nccl-tests
src/common.cu, util.cu at v2.19.6), this one is per size.

Each run is compared with the baseline run of the same shape: collective, data type, ranks, nodes and, where
the log is a generated job's, the pass (``matrix``, ``ring.all_reduce``, ...). A shape the baseline does not
hold, or holds more than once, is refused: a silent choice would judge against the wrong run.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from ..parsers.nccl_tests_log import Row, TestRun

DEFAULT_TOLERANCE = 0.9
JUDGED_FROM = 64 << 20
BANDS = (("small (< 1 MiB)", 0, 1 << 20), ("medium (1-64 MiB)", 1 << 20, JUDGED_FROM),
         ("large (>= 64 MiB)", JUDGED_FROM, 1 << 62))


@dataclass(frozen=True)
class Band:
    name: str
    sizes: int
    median_ratio: Optional[float]  # run busbw / baseline busbw, the median over the band's sizes
    lowest_ratio: Optional[float]


@dataclass(frozen=True)
class Shape:
    """What makes two runs comparable; None where the log does not say."""

    collective: Optional[str]
    dtype: str
    ranks: Optional[int]
    nodes: Optional[int]
    label: Optional[str]

    def describe(self) -> str:
        parts = [self.collective or "?", self.dtype]
        parts.append(f"{self.ranks} ranks" if self.ranks else "ranks unknown")
        parts.append(f"{self.nodes} node(s)" if self.nodes else "nodes unknown")
        if self.label:
            parts.append(f"pass {self.label}")
        return " ".join(parts)


@dataclass(frozen=True)
class BaselineRun:
    shape: Shape
    where: str  # file:line of the run in the baseline
    busbw: dict[int, float]  # by message size


@dataclass
class BaselineVerdict:
    log: str
    collective: Optional[str]
    dtype: str
    baseline: str
    status: str  # pass | below | no overlap
    message: str
    bands: list[Band] = field(default_factory=list)
    lowest_size: Optional[int] = None  # the judged size with the lowest ratio
    reference: dict[int, float] = field(default_factory=dict)  # the baseline run's busbw by size (the plot draws it)

    @property
    def failed(self) -> bool:
        return self.status == "below"


class BaselineError(ValueError):
    """The baseline cannot be compared with the run (another shape, an ambiguous choice, no common sizes)."""


def _known(value: Optional[int]) -> Optional[int]:
    return value if isinstance(value, int) and value > 0 else None


def series_from_json(text: str, source: str) -> list[BaselineRun]:
    """busbw by size from ``nccl-report --format json`` output (its rows' mean of the two columns)."""
    data = json.loads(text)
    out: list[BaselineRun] = []
    for verdict in data.get("verdicts", []):
        sizes: dict[int, float] = {}
        for row in verdict.get("rows", []):
            values = [m["busbw"] for m in (row.get("out_of_place"), row.get("in_place")) if m]
            if values:
                sizes[int(row["bytes"])] = sum(values) / len(values)
        if sizes:
            shape = Shape(verdict.get("collective"), verdict.get("dtype", "float"), _known(verdict.get("ranks")),
                          _known(verdict.get("nodes")), verdict.get("label"))
            out.append(BaselineRun(shape, f"{verdict.get('log', source)}:{verdict.get('line', '?')}", sizes))
    if not out:
        raise BaselineError(f"{source}: no verdicts with rows in this JSON (write it with nccl-report --format json)")
    return out


def series_from_runs(runs: list[TestRun], source: str) -> list[BaselineRun]:
    out: list[BaselineRun] = []
    for run in runs:
        for dtype in run.dtypes():
            rows: list[Row] = run.series(dtype)
            shape = Shape(run.collective, dtype, _known(run.ranks), run.nodes, run.label)
            out.append(BaselineRun(shape, f"{source}:{run.line}", {row.size: row.busbw for row in rows}))
    return out


def _fits(value: object, wanted: object) -> bool:
    """Unknown on either side does not exclude a run; a known difference does."""
    return value is None or wanted is None or value == wanted


def choose(log: str, shape: Shape, baseline_name: str, baseline: list[BaselineRun]) -> BaselineRun:
    """The one baseline run of ``shape``; BaselineError when there is none or more than one."""
    kind = [b for b in baseline if b.shape.collective == shape.collective and b.shape.dtype == shape.dtype]
    if not kind:
        known = ", ".join(sorted({f"{b.shape.collective or '?'} {b.shape.dtype}" for b in baseline}))
        raise BaselineError(f"{baseline_name} has no {shape.collective or '?'} {shape.dtype} run to compare {log} with "
                            f"(it has: {known})")
    fitting = [b for b in kind if _fits(b.shape.ranks, shape.ranks) and _fits(b.shape.nodes, shape.nodes)
               and _fits(b.shape.label, shape.label)]
    if not fitting:
        held = "; ".join(f"{b.where}: {b.shape.describe()}" for b in kind)
        raise BaselineError(f"{log} ({shape.describe()}): {baseline_name} has no run of the same shape "
                            f"(it has {held}); record a baseline with the same ranks and nodes")
    if len(fitting) > 1:
        held = "; ".join(f"{b.where}: {b.shape.describe()}" for b in fitting)
        raise BaselineError(f"{log} ({shape.describe()}): {baseline_name} holds {len(fitting)} runs it could be "
                            f"compared with ({held}); keep one run of each shape in the baseline file")
    return fitting[0]


def compare(log: str, run: TestRun, dtype: str, nodes: Optional[int], baseline_name: str,
            baseline: list[BaselineRun], tolerance: float) -> BaselineVerdict:
    shape = Shape(run.collective, dtype, _known(run.ranks), nodes or run.nodes, run.label)
    reference = choose(log, shape, baseline_name, baseline).busbw
    ratios = {row.size: row.busbw / reference[row.size] for row in run.series(dtype)
              if row.size in reference and reference[row.size] > 0}
    verdict = BaselineVerdict(log, run.collective, dtype, baseline_name, "no overlap", "", reference=dict(reference))
    if not ratios:
        verdict.message = f"no message size in common with {baseline_name}: nothing to compare"
        return verdict
    for name, low, high in BANDS:
        band = [ratio for size, ratio in ratios.items() if low <= size < high]
        verdict.bands.append(Band(name, len(band), round(statistics.median(band), 3) if band else None,
                                  round(min(band), 3) if band else None))
    judged = {size: ratio for size, ratio in ratios.items() if size >= JUDGED_FROM}
    if not judged:
        verdict.message = (f"no message of 64 MiB or more in common with {baseline_name}: the bandwidth band "
                           "cannot be compared (rerun with -e 1G)")
        return verdict
    # each size on its own: the lowest ratio decides (the smallest such size where several tie)
    lowest = min(sorted(judged), key=lambda size: judged[size])
    below = sorted(size for size, ratio in judged.items() if ratio < tolerance)
    verdict.lowest_size = lowest
    verdict.status = "below" if below else "pass"
    where = f"at {human_size(lowest)} ({judged[lowest]:.0%} of the baseline's busbw there)"
    if below:
        verdict.message = (f"below against {baseline_name} {where}; {len(below)} of {len(judged)} sizes >= 64 MiB "
                           f"below tolerance {tolerance:.0%}: {', '.join(human_size(s) for s in below)}")
    else:
        verdict.message = (f"pass against {baseline_name}: every one of {len(judged)} sizes >= 64 MiB at or above "
                           f"tolerance {tolerance:.0%}; lowest {where}")
    return verdict


def human_size(size: int) -> str:
    """nccl-tests' size notation (1G, 256M), as users pass -b/-e."""
    for unit, shift in (("G", 30), ("M", 20), ("K", 10)):
        if size >= 1 << shift and size % (1 << shift) == 0:
            return f"{size >> shift}{unit}"
    return f"{size} bytes"


def load_baseline(path: Path, text: str) -> list[BaselineRun]:
    from ..parsers.nccl_tests_log import collective_from_name, parse_text

    if text.lstrip().startswith("{"):
        return series_from_json(text, str(path))
    parsed = parse_text(text, str(path), collective_from_name(path.name))
    if not parsed.runs:
        raise BaselineError(f"{path}: no nccl-tests result table (and not nccl-report JSON)")
    return series_from_runs(parsed.runs, str(path))
