"""The generated sbatch runs every test and prints every verdict when one test fails: run under stub ``srun``
(one collective fails the way nccl-tests does, with a Test NCCL failure and a nonzero status), the later tests,
the Ring and single-node passes and every check_log verdict still run, and the job exits nonzero."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SBATCH = REPO / "out" / "crusoe-h100" / "slurm" / "h100" / "all_reduce_perf.sbatch"  # = its build (test_golden)
HEALTHY_LOG = REPO / "tests" / "fixtures" / "nccl_logs" / "crusoe-h100-2node-srun.log"

# srun --mpi=list names pmix; the one-task-per-node checks (required files, health) pass; an nccl-tests run
# prints a recorded healthy log, except all_gather, which stops as nccl-tests does on an NCCL error.
STUB_SRUN = f"""#!/bin/bash
case "$*" in
  *--mpi=list*) echo "MPI plugin types are... pmix"; exit 0 ;;
  *required-files*) exit 0 ;;
  *"bash -c"*|*" bash "*) echo "node1 ok"; exit 0 ;;
esac
for arg in "$@"; do case "$arg" in *_perf) binary="${{arg##*/}}" ;; esac; done
echo "$binary $NCCL_ALGO" >> "$SRUN_CALLS"
if [ "$binary" = all_gather_perf ]; then
  echo "node1: Test NCCL failure common.cu:1136 'unhandled system error'"
  exit 3
fi
cat {HEALTHY_LOG}; echo
"""


@pytest.mark.skipif(shutil.which("bash") is None or shutil.which("timeout") is None, reason="needs bash and timeout")
def test_a_failed_test_does_not_stop_the_job(tmp_path):
    stubs = tmp_path / "bin"
    stubs.mkdir()
    srun = stubs / "srun"
    srun.write_text(STUB_SRUN, encoding="utf-8")
    srun.chmod(srun.stat().st_mode | stat.S_IXUSR)
    calls = tmp_path / "calls"
    env = {"PATH": f"{stubs}:/usr/bin:/bin", "SRUN_CALLS": str(calls), "SLURM_JOB_ID": "7", "HOME": str(tmp_path)}
    done = subprocess.run(["bash", str(SBATCH)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    output = done.stdout + done.stderr
    assert done.returncode == 1, output
    runs = calls.read_text().splitlines()
    assert [run.split()[0] for run in runs] == ["all_reduce_perf", "all_gather_perf", "reduce_scatter_perf",
                                                "alltoall_perf", "sendrecv_perf", "all_reduce_perf",
                                                "all_reduce_perf"], output
    assert runs[5] == "all_reduce_perf Ring", output
    assert "== all_gather_perf: exit status 3" in done.stderr
    for label in ("all_reduce_perf", "all_gather_perf", "reduce_scatter_perf", "alltoall_perf", "sendrecv_perf",
                  "ring.all_reduce", "single-node.all_reduce"):
        assert f"\n{label}: " in "\n" + done.stdout, (label, output)
    assert "all_gather_perf: FAIL: " in done.stdout
    assert "FAILED: all_gather_perf: exit status 3" in done.stderr
    assert os.path.exists(tmp_path / "nccl-all_reduce-h100.7.single-node.all_reduce.log")
