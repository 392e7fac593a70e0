"""A custom resource's pod template that is not a mapping: the CRD types it as an object and the API server
refuses it (K8S041); K8S030 judges only a mapping's fields (r24c N3)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hpcconf.cli import app

VOLCANO = """apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {{name: j}}
spec:
  minAvailable: 1
  schedulerName: volcano
  tasks:
  - name: worker
    replicas: 1
    template: {template}
"""
MPIJOB = """apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata: {{name: m}}
spec:
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template:
        spec:
          containers: [{{name: launcher, image: busybox:1.36}}]
    Worker:
      replicas: 1
      template: {template}
"""


@pytest.mark.parametrize("manifest, where", [(VOLCANO, "spec.tasks[0].template"),
                                             (MPIJOB, "spec.mpiReplicaSpecs.Worker.template")], ids=["volcano", "mpijob"])
@pytest.mark.parametrize("template", ["x", "[1]"])
def test_a_template_that_is_not_a_mapping_is_refused(tmp_path: Path, manifest, where, template):
    path = tmp_path / "job.yaml"
    text = manifest.format(template=template)
    path.write_text(text)
    result = CliRunner().invoke(app, ["lint", "--format", "json", "--kubernetes-version", "1.34", str(path)])
    errors = [f for f in json.loads(result.stdout)["findings"] if f["severity"] == "error"]
    line = next(n for n, row in enumerate(text.splitlines(), 1) if row.strip() == f"template: {template}")
    assert [(f["code"], f["line"]) for f in errors] == [("K8S041", line)]
    assert errors[0]["message"].startswith(f"{where}: ") and "is not of type 'object'" in errors[0]["message"]
