"""The classes an independent review of the admission rules found (docs/admission.md), one test each."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hpcconf.cli import app
from hpcconf.knowledge.volcano_webhook import validate_create


def _findings(tmp_path: Path, text: str, *args: str) -> list[tuple[str, str, int]]:
    (tmp_path / "m.yaml").write_text(text)
    result = CliRunner().invoke(app, ["lint", "--format", "json", *args, str(tmp_path / "m.yaml")])
    return [(f["code"], f["severity"], f["line"]) for f in json.loads(result.stdout)["findings"]]


def _job(env_name: str = "NCCL_DEBUG", extra: str = "") -> str:
    return ("apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: nccl}\nspec:\n" + extra +
            "  tasks:\n    - name: worker\n      replicas: 1\n      template:\n        spec:\n          containers:\n"
            f"            - name: w\n              image: busybox:1.36\n              env: [{{name: '{env_name}', value: x}}]\n")


@pytest.mark.parametrize("name", ["system:nvidia-device-plugin", "gpu-operator:view", "Upper.Case"])
def test_rbac_names_are_path_segments_not_dns_names(tmp_path: Path, name: str) -> None:
    text = f"apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {{name: '{name}'}}\nrules: []\n"
    assert [f for f in _findings(tmp_path, text) if f[1] == "error"] == []
    bad = text.replace(name, "a/b")
    assert ("K8S037", "error", 3) in _findings(tmp_path, bad)


def test_volcano_templates_get_the_strict_env_name_rule_whatever_the_cluster(tmp_path: Path) -> None:
    assert ("K8S035", "error", 13) in _findings(tmp_path, _job("1GPU"), "--kubernetes-version", "1.34")
    pod = ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n    - name: w\n"
           "      image: busybox:1.36\n      env: [{name: '1GPU', value: x}]\n")
    assert [f for f in _findings(tmp_path, pod, "--kubernetes-version", "1.34") if f[0] == "K8S035"] == []
    assert ("K8S035", "error", 8) in _findings(tmp_path, pod, "--kubernetes-version", "1.31")


def test_volcano_pod_level_resources_follow_volcanos_own_gate(tmp_path: Path) -> None:
    job = _job().replace("        spec:\n          containers:", "        spec:\n          resources: {requests: {cpu: '1'}}\n"
                         "          containers:").replace("env: [", "resources: {requests: {cpu: '2'}}\n              env: [")
    assert ("K8S031", "error", 10) in _findings(tmp_path, job, "--kubernetes-version", "1.33")


@pytest.mark.parametrize("args", [["--master", "launcher"], ["-master=launcher"], ["--master=launcher"]])
def test_every_go_flag_form_names_the_mpi_master(args: list[str]) -> None:
    job = {"spec": {"plugins": {"mpi": args}, "tasks": [{"name": "launcher", "replicas": 1}]}}
    assert [r.check for r in validate_create(job)] == []


def test_a_dependency_listed_twice_is_refused_as_the_webhook_does() -> None:
    job = {"spec": {"tasks": [{"name": "a", "replicas": 1},
                              {"name": "b", "replicas": 1, "dependsOn": {"name": ["a", "a"]}}]}}
    assert [r.check for r in validate_create(job)] == ["dependencies"]


def test_policy_vocabulary_follows_the_volcano_version(tmp_path: Path) -> None:
    pending = _job(extra="  policies: [{event: PodPending, action: RestartPod}]\n")
    assert [f for f in _findings(tmp_path, pending, "--chart", "volcano=1.11.0") if f[0] == "VOL009"] == []
    assert ("VOL009", "error", 5) in _findings(tmp_path, pending, "--chart", "volcano=1.10.0")
    no_action = _job(extra="  policies: [{event: PodFailed}]\n")
    assert ("VOL009", "error", 5) in _findings(tmp_path, no_action)


def test_defaulted_is_refused_only_by_admission_errors(tmp_path: Path) -> None:
    text = ("apiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData: {password: hunter2hunter2}\n---\n"
            "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {ports: [{port: 80}]}\n")
    (tmp_path / "m.yaml").write_text(text)
    result = CliRunner().invoke(app, ["lint", "--defaulted", str(tmp_path / "m.yaml")])
    assert result.exit_code == 0 and "targetPort: 80" in result.stdout


def test_a_job_without_a_job_restart_policy_and_a_selector_that_misses(tmp_path: Path) -> None:
    job = ("apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n  template:\n    spec:\n"
           "      containers: [{name: c, image: busybox:1.36}]\n")
    assert ("K8S040", "error", 6) in _findings(tmp_path, job)


def test_values_left_for_envsubst_or_the_reader_are_not_refusals(tmp_path: Path) -> None:
    """Whole public repositories apply such files through envsubst or a README step: placeholders are info."""
    job = ("apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: '<user_namespace>'}\nspec:\n  containers:\n"
           "    - name: c\n      image: busybox:1.36\n      resources: {limits: {nvidia.com/gpu: $GPU_PER_NODE}}\n")
    found = _findings(tmp_path, job)
    assert [f for f in found if f[1] == "error"] == [] and ("K8S036", "info", 8) in found


def test_a_strategic_merge_patch_directive_is_no_unknown_field(tmp_path: Path) -> None:
    patch = ("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n    spec:\n"
             "      containers:\n        - name: sidecar\n          $patch: delete\n")
    assert [f for f in _findings(tmp_path, patch) if f[0] == "K8S030"] == []


def test_a_tracked_link_to_a_directory_inside_the_tree_is_skipped_as_a_walk_skips_it(tmp_path: Path) -> None:
    import os
    import subprocess

    (tmp_path / "skills" / "slurm").mkdir(parents=True)
    (tmp_path / "skills" / "slurm" / "nccl.conf").write_text("NCCL_DEBUG=WARN\n")
    (tmp_path / ".copilot").mkdir()
    os.symlink("../skills/slurm", tmp_path / ".copilot" / "slurm")
    os.symlink("skills/slurm", tmp_path / "linked")
    for args in (["init", "-q"], ["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "t"]):
        subprocess.run(["git", *args], cwd=tmp_path, check=True)
    result = CliRunner().invoke(app, ["lint", "--format", "json", str(tmp_path)])
    codes = [f["code"] for f in json.loads(result.stdout)["findings"]]
    assert "HPC092" not in codes and "HPC093" not in codes, codes
