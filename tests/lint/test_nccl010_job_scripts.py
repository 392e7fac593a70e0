"""NCCL010 leaves an NCCL_-named variable that the container's own script reads (issue 20: Crusoe's
ib-health-probe-cmk sets NCCL_THRESHOLD for `bash /probe/probe.sh`, its busbw floor), and keeps a typo that
reaches NCCL: the same env beside a script that does not read it, or a container that runs no such script."""

from __future__ import annotations

from pathlib import Path

from hpcconf.lint.context import LintContext
from hpcconf.lint.engine import lint_paths

JOB = """\
apiVersion: batch/v1
kind: Job
metadata: {name: ib-probe}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: probe
          image: example.io/probe:1
          command: ["bash", "/probe/COMMAND"]
          env:
            - name: NCCL_THRESHOLD
              value: "350"
            - name: NCCL_IB_HCAS
              value: mlx5_0
"""
PROBE = """#!/bin/bash
NCCL_THRESHOLD=${NCCL_THRESHOLD:-350}
busbw=$(all_reduce_perf -b 8G -e 8G | awk '/Avg bus bandwidth/ {print $NF}')
awk -v b="$busbw" -v t="$NCCL_THRESHOLD" 'BEGIN{exit !(b>=t)}'
"""


def _nccl010(tmp_path: Path, monkeypatch, command: str, script: str) -> dict[int, str]:
    (tmp_path / "probe").mkdir()
    (tmp_path / "probe" / "job.yaml").write_text(JOB.replace("COMMAND", command))
    (tmp_path / "probe" / "probe.sh").write_text(script)
    monkeypatch.chdir(tmp_path)
    found = lint_paths(["."], LintContext()).findings
    return {f.line: f.severity.value for f in found if f.code == "NCCL010"}


def test_a_variable_the_containers_script_reads_is_the_scripts_own(tmp_path, monkeypatch):
    assert _nccl010(tmp_path, monkeypatch, "probe.sh", PROBE) == {15: "warning"}  # NCCL_IB_HCAS still found


def test_the_same_name_beside_a_script_that_does_not_read_it_is_found(tmp_path, monkeypatch):
    assert _nccl010(tmp_path, monkeypatch, "probe.sh", "#!/bin/bash\nall_reduce_perf -b 8G -e 8G\n") == \
        {13: "warning", 15: "warning"}


def test_a_script_the_container_does_not_run_is_not_its_consumer(tmp_path, monkeypatch):
    assert _nccl010(tmp_path, monkeypatch, "other.sh", PROBE) == {13: "warning", 15: "warning"}
