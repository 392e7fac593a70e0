"""VOL007: a job that reads Volcano's hostfiles without running mpirun needs svc, not ssh.

Volcano's own TensorFlow example reads /etc/volcano/ps.host and worker.host (written by the svc plugin)
and has no ssh plugin: it works (fresh-file review, issue 20: a false error before)."""

from __future__ import annotations

from hpcconf.lint.context import LintContext
from hpcconf.lint.engine import lint_paths

JOB = """apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata:
  name: tf-ps
spec:
  minAvailable: 2
  schedulerName: volcano
  plugins:
{plugins}
  tasks:
    - replicas: 1
      name: ps
      template:
        spec:
          containers:
            - name: tf
              image: tensorflow/tensorflow:2.15.0
              command: ["sh", "-c", "PS_HOST=`cat /etc/volcano/ps.host`; {run}"]
          restartPolicy: OnFailure
"""


def _vol007(tmp_path, plugins: str, run: str = "python train.py") -> list[tuple[str, str]]:
    path = tmp_path / "job.yaml"
    path.write_text(JOB.format(plugins=plugins, run=run))
    return [(f.severity.value, f.message.split(";")[0]) for f in lint_paths([str(path)], LintContext()).findings
            if f.code == "VOL007"]


def test_hostfile_reader_with_svc_needs_no_ssh(tmp_path):
    assert _vol007(tmp_path, "    env: []\n    svc: []") == []


def test_hostfile_reader_without_svc_is_refused(tmp_path):
    assert _vol007(tmp_path, "    env: []") == [("error", "plugin 'svc' is missing")]


def test_mpirun_still_needs_ssh(tmp_path):
    assert _vol007(tmp_path, "    svc: []", run="mpirun -np 2 hostname") == [("error", "plugin 'ssh' is missing")]
