"""What nccl-tests says about its own run, as findings of ``hpcconf nccl-report`` (file:line, severity).

Each kind below names the nccl-tests source that prints it (NVIDIA/nccl-tests at v2.19.6, commit a0b82b22;
the same strings since v2.13). Severity is a promise: ``error`` when the run's result is invalid (nccl-tests
itself exits non-zero, or the numbers are wrong), ``warning`` where the numbers are valid but the measurement
asked for is missing, ``info`` where what it means depends on context the log does not show. An error finding makes ``nccl-report`` exit 1, as a run below its floor does.

- ``invalid-type`` (warning): ``invalid type bf16, defaulting to float .. ``: ``-d`` named no type nccl-tests
  knows (``ncclstringtotype``, src/common.h: it only prints this and goes on), so the whole run measured
  float, correctly, and exits 0: the float verdict stands, the bf16 measurement asked for is missing. Fix: a name from nccl-tests' list (``test_typenames``, src/common.cu: ``int8 uint8
  int32 uint32 int64 uint64 half float double``, ``bfloat16`` and ``f8e4m3 f8e5m2`` where built with them,
  or ``all``).
- ``invalid-op`` (warning): ``invalid op max2, defaulting to sum .. `` (``ncclstringtoop``, src/common.h):
  the run measured sum, correctly; the requested operation is missing. Fix: ``-o`` from ``test_opnames`` (``sum prod max min avg mulsum``) or ``all``.
- ``wrong`` (error): a non-zero ``#wrong`` column: that many elements came back different from what the
  collective must return (``CheckData``, src/common.cu): data corruption (a bad GPU, NVLink, NIC or
  driver). The bandwidth of such a run means nothing.
- ``out-of-bounds`` (error): ``# Out of bounds values : N FAILED`` (``writeResultFooter``, src/util.cu):
  N checks found wrong data; nccl-tests exits non-zero (``if (errors[0] || ...) return testNumResults``,
  src/common.cu).
- ``min-bw-failed`` (error): ``# Avg bus bandwidth : X FAILED``: the average is below 0.9 x the
  ``NCCL_TESTS_MIN_BW`` the run was given (src/util.cu, src/common.cu); nccl-tests exits non-zero.
- ``test-failure`` (error): ``host: Test NCCL failure common.cu:NNN '...'``, ``Test CUDA failure``, or
  `` .. host pid N: Test failure common.cu:NNN`` (NCCLCHECK / CUDACHECK / TESTCHECK, src/common.h): the
  test stopped on that error; no row after it was measured. Fix: the NCCL/CUDA error it names
  (``NCCL_DEBUG=INFO`` shows why).
- ``no-footer`` (info): a table with no ``# Avg bus bandwidth`` line after it. nccl-tests prints it when a
  run finishes (``writeResultFooter``), so the run was stopped (a time limit, a hang killed by
  ``timeout``, a crash), unless the log is an excerpt: the log does not say which.
- ``nccl-warn`` (info): an ``NCCL WARN`` line. Many are harmless (a missing optional plugin); whether this
  one cost anything depends on what it says and on the run's settings.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ..parsers.nccl_tests_log import NcclTestsLog

Severity = Literal["error", "warning", "info"]
SEVERITY: dict[str, Severity] = {
    "invalid-type": "warning", "invalid-op": "warning", "wrong": "error", "out-of-bounds": "error",
    "min-bw-failed": "error", "test-failure": "error", "no-footer": "info", "nccl-warn": "info",
}


@dataclass(frozen=True)
class Finding:
    path: str
    line: int
    kind: str
    message: str

    @property
    def severity(self) -> Severity:
        return SEVERITY[self.kind]

    def render(self) -> str:
        return f"{self.path}:{self.line}: {self.severity}: {self.message} [{self.kind}]"


def log_findings(log: NcclTestsLog) -> list[Finding]:
    """Every finding of one parsed log, in line order."""
    found: list[Finding] = []
    for marker in log.markers:
        if marker.kind in ("invalid-type", "invalid-op"):
            flag = "-d" if marker.kind == "invalid-type" else "-o"
            found.append(Finding(log.path, marker.line, marker.kind,
                                 f"nccl-tests did not know {flag} {marker.requested} and ran {marker.used} instead: "
                                 f"the run measured {marker.used} (valid), the {marker.requested} measurement "
                                 "asked for is missing"))
        elif marker.kind == "test-failure":
            found.append(Finding(log.path, marker.line, marker.kind,
                                 f"the test stopped on an error: {marker.text.strip()}"))
        elif marker.kind == "nccl-warn":
            found.append(Finding(log.path, marker.line, marker.kind, f"NCCL warned: {marker.text.strip()}"))
    for run in log.runs:
        wrong = [row for row in run.rows if row.wrong]
        if wrong:
            found.append(Finding(log.path, wrong[0].line, "wrong",
                                 f"{len(wrong)} message size(s) returned wrong data (#wrong > 0, "
                                 f"{sum(row.wrong for row in wrong)} element(s)): data corruption"))
        if run.out_of_bounds and run.out_of_bounds_line is not None:
            found.append(Finding(log.path, run.out_of_bounds_line, "out-of-bounds",
                                 f"nccl-tests counted {run.out_of_bounds} check(s) with wrong data and failed the run"))
        if run.avg_failed and run.avg_line is not None:
            found.append(Finding(log.path, run.avg_line, "min-bw-failed",
                                 f"nccl-tests' own check failed: average bus bandwidth {run.avg_busbw:g} GB/s is "
                                 "below 0.9 x NCCL_TESTS_MIN_BW"))
        if run.avg_line is None:
            last = run.rows[-1].line
            found.append(Finding(log.path, last, "no-footer",
                                 "the table ends without nccl-tests' '# Avg bus bandwidth' line: the run was "
                                 "stopped before it finished, or the log is an excerpt"))
    return sorted(found, key=lambda f: (f.line, f.kind))
