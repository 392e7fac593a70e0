"""Volcano's webhook rules (VOL*) judge only objects whose types the CRD schema accepts: the API server refuses a
mistyped object at the schema (one K8S041 error), and a webhook rule would read a string as a list (r24c N2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hpcconf.cli import app

TASK = """  - name: {name}
    replicas: {replicas}
{extra}    template:
      spec:
        containers:
        - name: {name}
          image: volcanosh/example-mpi:0.0.3
          command: [/bin/sh, -c, "{command}"]
          ports: [{{containerPort: 22, name: mpijob-port}}]
        restartPolicy: OnFailure
"""
MASTER_COMMAND = "mpiexec --host $(cat /etc/volcano/mpiworker.host | tr '\\\\n' ,) -np 2 hello"


def _job(*, plugins: str = "  plugins:\n    ssh: []\n    svc: []\n", master_replicas: str = "1",
         master_extra: str = "    policies:\n    - event: TaskCompleted\n      action: CompleteJob\n", worker_extra: str = "") -> str:
    return ("apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n  name: mpi\nspec:\n"
            "  minAvailable: 3\n  schedulerName: volcano\n" + plugins + "  tasks:\n"
            + TASK.format(name="mpimaster", replicas=master_replicas, extra=master_extra, command=MASTER_COMMAND)
            + TASK.format(name="mpiworker", replicas="2", extra=worker_extra, command="/usr/sbin/sshd -D"))


def _codes(tmp_path: Path, text: str) -> list[str]:
    path = tmp_path / "job.yaml"
    path.write_text(text)
    result = CliRunner().invoke(app, ["lint", "--format", "json", "--kubernetes-version", "1.34", str(path)])
    return sorted(f["code"] for f in json.loads(result.stdout)["findings"] if f["severity"] != "info")


COMPLETE = "    - event: TaskCompleted\n      action: CompleteJob\n"
POLICY_STRING = "    policies:\n" + COMPLETE + "    - events: PodFailed\n      action: RestartJob\n"
POLICY_BAD_EVENT = "    policies:\n" + COMPLETE + "    - events: [PodFailled]\n      action: RestartJob\n"


@pytest.mark.parametrize("text", [
    _job(master_extra=POLICY_STRING),  # Volcano's user guide writes events as a string
    _job(worker_extra="    dependsOn: {name: mpimaster}\n"),
    _job(plugins="  plugins: [ssh, svc]\n"),
    _job(master_replicas="'2'"),
], ids=["events-string", "dependsOn-mapping", "plugins-list", "replicas-string"])
def test_a_mistyped_job_draws_only_the_schema_error(tmp_path, text):
    assert _codes(tmp_path, text) == ["K8S041"]


def test_a_well_typed_job_is_still_judged_by_the_webhook_rules(tmp_path):
    assert _codes(tmp_path, _job()) == []
    assert _codes(tmp_path, _job(master_extra=POLICY_BAD_EVENT)) == ["VOL009"]


def _findings(tmp_path: Path, text: str, *args: str) -> list[tuple[str, str]]:
    path = tmp_path / "manifest.yaml"
    path.write_text(text)
    result = CliRunner().invoke(app, ["lint", "--format", "json", "--kubernetes-version", "1.34", *args, str(path)])
    return sorted((f["code"], f["severity"]) for f in json.loads(result.stdout)["findings"])


# Volcano v1.15.1's CRD carries the sign checks its job webhook dropped (admit_job.go: "Basic validations like
# minAvailable >= 0 ... have been removed from webhook").
@pytest.mark.parametrize("text", [
    _job().replace("  minAvailable: 3\n", "  minAvailable: -1\n"),
    _job(worker_extra="    minAvailable: -1\n"),
], ids=["job-minAvailable", "task-minAvailable"])
def test_a_negative_count_is_refused_by_the_crd_minimum(tmp_path, text):
    assert ("K8S041", "error") in _findings(tmp_path, text, "--chart", "volcano=1.15.1")
    assert ("K8S041", "info") in _findings(tmp_path, text)  # release-1.7's CRD has no minimum: cluster state


QUEUE = "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: q}\nspec:\n  weight: WEIGHT\n"


@pytest.mark.parametrize("weight, words", [("-1", "should be greater than or equal to 1"),
                                           ("70000", "should be less than or equal to 65535")])
def test_queue_weight_range(tmp_path, weight, words):
    path = tmp_path / "q.yaml"
    path.write_text(QUEUE.replace("WEIGHT", weight))
    result = CliRunner().invoke(app, ["lint", "--format", "json", "--chart", "volcano=1.15.1", str(path)])
    found = json.loads(result.stdout)["findings"]
    assert [(f["code"], f["severity"]) for f in found] == [("K8S041", "error")]
    assert words in found[0]["message"]
