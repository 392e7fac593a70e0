"""``--baseline``: a run against a recorded good run of the same machine and shape.

The check people run after a driver, NCCL or image update: busbw per message size against the baseline's,
as a ratio, summarised per size band. Only the large-message band (>= 64 MiB, where busbw measures the
links rather than latency) decides: below ``tolerance`` of the baseline there, the run fails. The default
tolerance, 0.9, is nccl-tests' own: ``-G``/check_avg_bw marks a run FAILED below 0.9 of the expected average
bus bandwidth (NVIDIA/nccl-tests src/common.cu, v2.9.0 and later).
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from ..parsers.nccl_tests_log import Row, TestRun

DEFAULT_TOLERANCE = 0.9
BANDS = (("small (< 1 MiB)", 0, 1 << 20), ("medium (1-64 MiB)", 1 << 20, 64 << 20), ("large (>= 64 MiB)", 64 << 20, 1 << 62))
JUDGED_BAND = "large (>= 64 MiB)"


@dataclass(frozen=True)
class Band:
    name: str
    sizes: int
    median_ratio: Optional[float]  # run busbw / baseline busbw, the median over the band's sizes
    lowest_ratio: Optional[float]


@dataclass
class BaselineVerdict:
    log: str
    collective: Optional[str]
    dtype: str
    baseline: str
    status: str  # pass | below | no overlap
    message: str
    bands: list[Band] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return self.status == "below"


class BaselineError(ValueError):
    """The baseline cannot be compared with the run (another collective, no common sizes)."""


def series_from_json(text: str, source: str) -> dict[tuple[Optional[str], str], dict[int, float]]:
    """busbw by size from ``nccl-report --format json`` output (its rows' mean of the two columns)."""
    data = json.loads(text)
    out: dict[tuple[Optional[str], str], dict[int, float]] = {}
    for verdict in data.get("verdicts", []):
        sizes: dict[int, float] = {}
        for row in verdict.get("rows", []):
            values = [m["busbw"] for m in (row.get("out_of_place"), row.get("in_place")) if m]
            if values:
                sizes[int(row["bytes"])] = sum(values) / len(values)
        out[(verdict.get("collective"), verdict.get("dtype", "float"))] = sizes
    if not out:
        raise BaselineError(f"{source}: no verdicts with rows in this JSON (write it with nccl-report --format json)")
    return out


def series_from_runs(runs: list[TestRun]) -> dict[tuple[Optional[str], str], dict[int, float]]:
    out: dict[tuple[Optional[str], str], dict[int, float]] = {}
    for run in runs:
        for dtype in run.dtypes():
            rows: list[Row] = run.series(dtype)
            out[(run.collective, dtype)] = {row.size: row.busbw for row in rows}
    return out


def compare(log: str, run: TestRun, dtype: str, baseline_name: str,
            baseline: dict[tuple[Optional[str], str], dict[int, float]], tolerance: float) -> BaselineVerdict:
    key = (run.collective, dtype)
    reference = baseline.get(key)
    if reference is None:
        known = ", ".join(f"{c or '?'} {d}" for c, d in sorted(baseline, key=str))
        raise BaselineError(f"{baseline_name} has no {run.collective or '?'} {dtype} run to compare {log} with "
                            f"(it has: {known})")
    ratios = {row.size: row.busbw / reference[row.size] for row in run.series(dtype)
              if row.size in reference and reference[row.size] > 0}
    verdict = BaselineVerdict(log, run.collective, dtype, baseline_name, "no overlap", "")
    if not ratios:
        verdict.message = f"no message size in common with {baseline_name}: nothing to compare"
        return verdict
    for name, low, high in BANDS:
        band = [ratio for size, ratio in ratios.items() if low <= size < high]
        verdict.bands.append(Band(name, len(band), round(statistics.median(band), 3) if band else None,
                                  round(min(band), 3) if band else None))
    judged = next(b for b in verdict.bands if b.name == JUDGED_BAND)
    if judged.median_ratio is None:
        verdict.message = (f"no message of 64 MiB or more in common with {baseline_name}: the bandwidth band "
                           "cannot be compared (rerun with -e 1G)")
        return verdict
    verdict.status = "pass" if judged.median_ratio >= tolerance else "below"
    verdict.message = (f"{verdict.status} against {baseline_name}: {judged.median_ratio:.0%} of the baseline's busbw "
                       f"at >= 64 MiB (median of {judged.sizes} sizes, lowest {judged.lowest_ratio:.0%}; "
                       f"tolerance {tolerance:.0%})")
    return verdict


def load_baseline(path: Path, text: str) -> dict[tuple[Optional[str], str], dict[int, float]]:
    from ..parsers.nccl_tests_log import collective_from_name, parse_text

    if text.lstrip().startswith("{"):
        return series_from_json(text, str(path))
    parsed = parse_text(text, str(path), collective_from_name(path.name))
    if not parsed.runs:
        raise BaselineError(f"{path}: no nccl-tests result table (and not nccl-report JSON)")
    return series_from_runs(parsed.runs)
