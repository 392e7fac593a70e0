"""The nccl-tests verdict a node or image gives without hpcconf (bash and awk only), shared by the jobs that
run nccl-tests: the AKS launcher and the Slurm batch script judge their logs with the same ``check_log``.

A log with no nccl-tests table, a row with #wrong > 0, or a float row at a sourced floor's message size whose
busbw (the mean of out-of-place and in-place, what nccl-tests' "Avg bus bandwidth" is for one size and what
`hpcconf nccl-report` compares) is below the floor fails: ``check_log`` appends to the bash array ``FAILED``.
Rows are the lines whose first field is the size; their last eight fields are time algbw busbw #wrong, out of
place then in place.
"""

from __future__ import annotations

import shlex

from ..knowledge.nccl_floors import load_floors

CHECK_LOG = r"""check_log() {  # <log> <label> [<floor GB/s> <floor message bytes> <floor source>]
  awk -v label="$2" -v floor="${3:-}" -v at="${4:-}" -v source="${5:-}" '
    $1 ~ /^[0-9]+$/ && NF >= 11 {
      rows++
      if (($(NF-4) ~ /^[0-9]+$/ && $(NF-4) + 0 > 0) || ($NF ~ /^[0-9]+$/ && $NF + 0 > 0)) wrong++
      if (at != "" && $1 == at && $3 == "float") { busbw = ($(NF-5) + $(NF-1)) / 2; found = 1 }
    }
    END {
      if (!rows) { printf "%s: FAIL: no nccl-tests results in the log\n", label; exit 1 }
      if (wrong) { printf "%s: FAIL: %d row(s) with wrong results (#wrong > 0)\n", label, wrong; exit 1 }
      if (floor == "") { printf "%s: ok: %d rows, no wrong results (no published floor)\n", label, rows; exit 0 }
      if (!found) { printf "%s: ok: no float row at the floor size (%s bytes): not judged\n", label, at; exit 0 }
      if (busbw < floor) { printf "%s: FAIL: busbw %.2f GB/s at %s bytes, floor %s GB/s (%s)\n", label, busbw, at, floor, source; exit 1 }
      printf "%s: pass: busbw %.2f GB/s >= %s GB/s at %s bytes (%s)\n", label, busbw, floor, at, source
    }' "$1" || FAILED+=("$2: see the verdict above")
}
"""


def check_log_floor_args(sku: str, collective: str, nodes: int, ranks: int) -> str:
    """``check_log``'s floor arguments (GB/s, message bytes, source) for the run; empty when none is sourced."""
    floor = load_floors().floor(sku, collective, nodes, ranks)
    return "" if floor is None else f" {floor.gbps:g} {floor.message_bytes} {shlex.quote(floor.citation())}"
