"""The nccl-tests verdict a node or image gives without hpcconf (bash and awk only), shared by the jobs that
run nccl-tests: the AKS launcher and the Slurm batch script judge their logs with the same ``check_log``.

It judges as ``hpcconf nccl-report`` does, with the floor resolved for the run (hpcconf.resolve.nccl_verdict:
published, else derived from the SKU's links): a log with no nccl-tests table, a row with #wrong > 0, or a
line in which nccl-tests reports an error on its run (hpcconf.nccl_report.findings: a FAILED footer, a Test
NCCL/CUDA failure) fails; a replaced -d/-o (nccl-tests measured float/sum instead, and exits 0) is a warning
on stderr, and the run is judged;
busbw is the mean of out-of-place and in-place (what nccl-tests' "Avg bus bandwidth" is for one size),
rounded to 0.01 GB/s. A published floor (``at BYTES``) is read at its message size: below it fails; a log
that stops short is read at its largest smaller size, which can only pass (busbw grows with size), else it
is inconclusive. A derived floor (``from BYTES``) is read at the largest size, inconclusive below BYTES; a
reference-only one (``ref BYTES``: derived beyond the shapes its factor was measured on) is read the same way,
and a run under it is reported ("below reference") without failing the job.
Only float rows are judged, the type the floors are set with. A failure appends to the bash array
``FAILED``. A row is read as hpcconf.parsers.nccl_tests_log.parse_row reads it: size count type redop root,
then time algbw busbw [#wrong] out of place, and in place where its time algbw busbw are there (so a line cut
mid-row is read as nccl-report reads it); #wrong is nccl-tests' %g count (1.23457e+06 is wrong) or N/A.
"""

from __future__ import annotations

import shlex
from typing import Optional

from ..resolve.nccl_verdict import VerdictFloor

CHECK_LOG = r"""check_log() {  # <log> <label> [<floor GB/s> <at|from|ref> <message bytes> <floor source>]
  awk -v label="$2" -v floor="${3:-}" -v mode="${4:-}" -v at="${5:-}" -v source="${6:-}" '
    /Test [A-Z]+ failure|pid [0-9]+: Test failure |^# *(Out of bounds values|Avg bus bandwidth) *:.* FAILED/ {
      if (!said++) first = $0
    }
    /invalid (type|op) [^ ]+, defaulting to / { if (!replaced++) swapped = $0 }
    function number(f) { return f ~ /^-?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?$/ }
    function wrongs(f) { return f != "" && f != "N/A" && int(f + 0) > 0 }
    $1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+$/ && length($1) <= 20 && length($2) <= 20 && length($5) <= 20 \
        && $3 ~ /^[a-z][a-z0-9_]*$/ && $4 ~ /^[a-z][a-z0-9_]*$/ && $5 ~ /^-?[0-9]+$/ \
        && number($6) && number($7) && number($8) && (NF < 9 || $9 == "N/A" || number($9)) {
      rows++
      inplace = number($10) && number($11) && number($12) && (NF < 13 || $13 == "N/A" || number($13))
      if (wrongs($9) || (inplace && wrongs($13))) wrong++
      if ($3 != "float") next
      bw = sprintf("%.2f", inplace ? ($8 + $12) / 2 : $8) + 0
      if ($1 + 0 == at + 0) { exact = 1; atbw = bw }
      if ($1 + 0 < at + 0 && $1 + 0 > below + 0) { below = $1; belowbw = bw }
      if (!floats || $1 + 0 > largest + 0) { largest = $1; largestbw = bw }
      floats++
    }
    END {
      if (replaced) printf "%s: warning: %s: nccl-tests measured its default instead; that measurement is missing\n", label, swapped > "/dev/stderr"
      if (!rows) { printf "%s: FAIL: no nccl-tests results in the log\n", label; exit 1 }
      if (wrong) { printf "%s: FAIL: %d row(s) with wrong results (#wrong > 0)\n", label, wrong; exit 1 }
      if (said) { printf "%s: FAIL: nccl-tests reported %d error(s), first: %s\n", label, said, first; exit 1 }
      if (floor == "") { printf "%s: ok: %d rows, no wrong results (no floor)\n", label, rows; exit 0 }
      if (!floats) { printf "%s: ok: no float rows: not judged\n", label; exit 0 }
      if (mode == "from" || mode == "ref") {
        if (largest + 0 < at + 0) { printf "%s: inconclusive: largest message %s bytes, the derived floor is read from %s bytes\n", label, largest, at; exit 0 }
        size = largest; bw = largestbw
      } else if (exact) { size = at; bw = atbw
      } else if (below != "") {
        if (belowbw + 0 >= floor + 0) { printf "%s: pass: busbw %.2f GB/s >= %s GB/s at %s bytes, below the floor size %s (%s)\n", label, belowbw, floor, below, at, source; exit 0 }
        printf "%s: inconclusive: busbw %.2f GB/s at %s bytes; the %s GB/s floor is set at %s bytes\n", label, belowbw, below, floor, at; exit 0
      } else { printf "%s: inconclusive: every message is larger than the floor size (%s bytes)\n", label, at; exit 0 }
      if (bw < floor + 0 && mode == "ref") { printf "%s: below reference: busbw %.2f GB/s at %s bytes, reference floor %s GB/s, not a failure (%s)\n", label, bw, size, floor, source; exit 0 }
      if (bw < floor + 0) { printf "%s: FAIL: busbw %.2f GB/s at %s bytes, floor %s GB/s (%s)\n", label, bw, size, floor, source; exit 1 }
      printf "%s: pass: busbw %.2f GB/s >= %s GB/s at %s bytes (%s)\n", label, bw, floor, size, source
    }' "$1" || FAILED+=("$2: see the verdict above")
}
"""


def check_log_floor_args(floor: Optional[VerdictFloor]) -> str:
    """``check_log``'s floor arguments (GB/s, at|from, message bytes, source) for a run's resolved floor; empty
    when it has none."""
    if floor is None:
        return ""
    mode = "at" if floor.origin == "published" else ("from" if floor.decisive else "ref")
    return f" {floor.gbps:g} {mode} {floor.message_bytes} {shlex.quote(floor.source)}"
