"""The breaks a second independent review of the admission rules found (issue #24, review 24b), one test each."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from hpcconf.cli import app

JOB_PATCH = ("apiVersion: batch/v1\nkind: Job\nmetadata: {name: train}\nspec:\n  template:\n    spec:\n"
             "      containers:\n        - name: worker\n          resources: {limits: {nvidia.com/gpu: 8}}\n")
DEPLOYMENT_PATCH = ("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: manager}\nspec:\n  template:\n    spec:\n"
                    "      containers:\n        - name: manager\n          args: [--config=/etc/config.yaml]\n")


def _codes(*paths: Path) -> list[tuple[str, str, str]]:
    result = CliRunner().invoke(app, ["lint", "--format", "json", *map(str, paths)])
    return [(Path(f["file"]).name, f["code"], f["severity"]) for f in json.loads(result.stdout)["findings"]]


def test_files_a_kustomization_beside_them_merges_as_patches_are_not_judged_for_missing_fields(tmp_path: Path) -> None:
    (tmp_path / "job-patch.yaml").write_text(JOB_PATCH)
    (tmp_path / "manager_config_patch.yaml").write_text(DEPLOYMENT_PATCH)
    (tmp_path / "legacy-patch.yaml").write_text(JOB_PATCH)
    (tmp_path / "job.yaml").write_text(JOB_PATCH)  # a resource, not a patch: the API server sees it alone
    (tmp_path / "kustomization.yaml").write_text(
        "resources: [job.yaml]\npatches:\n  - path: job-patch.yaml\n  - path: manager_config_patch.yaml\n"
        "  - patch: |-\n      - op: replace\n        path: /spec/completions\n        value: 32\n"
        "patchesStrategicMerge: [legacy-patch.yaml]\n")
    for found in (_codes(tmp_path), _codes(tmp_path / "job-patch.yaml", tmp_path / "job.yaml")):
        k8s040 = [f for f in found if f[1] == "K8S040"]
        assert k8s040 == [("job.yaml", "K8S040", "error")], found
    (tmp_path / "kustomization.yaml").write_text("resources: [job.yaml]\n")
    assert ("job-patch.yaml", "K8S040", "info") in _codes(tmp_path / "job-patch.yaml")  # no longer listed


def test_a_container_name_left_for_envsubst_or_helm_is_not_judged_as_in_metadata(tmp_path: Path) -> None:
    pod = ("apiVersion: v1\nkind: Pod\nmetadata: {name: '${APP_NAME}'}\nspec:\n  containers:\n"
           "    - {name: '${APP_NAME}', image: busybox:1.36}\n    - {name: '{{ .Values.sidecar }}', image: busybox:1.36}\n"
           "    - {name: 'worker-${RANK}', image: busybox:1.36}\n")
    (tmp_path / "pod.yaml").write_text(pod)
    assert [f for f in _codes(tmp_path / "pod.yaml") if f[2] == "error"] == []
    (tmp_path / "pod.yaml").write_text(pod.replace("worker-${RANK}", "Worker_1").replace("{{ .Values.sidecar }}",
                                                                                        "${APP_NAME}"))
    assert [f[1] for f in _codes(tmp_path / "pod.yaml") if f[2] == "error"] == ["K8S032", "K8S032"]


def test_a_kubernetes_version_newer_than_the_schemas_held_is_said_on_stderr(tmp_path: Path) -> None:
    from hpcconf.knowledge.k8s_openapi import schema_versions

    newest = schema_versions()[-1]
    (tmp_path / "pod.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
                                       "  containers: [{name: c, image: 'busybox:1.36'}]\n")
    result = CliRunner().invoke(app, ["lint", "--kubernetes-version", "1.99", str(tmp_path / "pod.yaml")])
    assert result.exit_code == 0
    assert f"Kubernetes 1.99 is newer than the newest schemas hpcconf holds ({newest})" in result.stderr
    result = CliRunner().invoke(app, ["lint", "--kubernetes-version", newest, str(tmp_path / "pod.yaml")])
    assert result.exit_code == 0 and "newer than" not in result.stderr


JOBSET = ("apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata: {name: d}\nspec:\n  replicatedJobs:\n"
          "    - name: initializer\n      template:\n        spec:\n          template:\n            spec:\n"
          "              restartPolicy: Never\n              containers: [{name: i, image: 'busybox:1.36'}]\n"
          "    - name: launcher\n      dependsOn: [{name: initializer, status: STATUS}]\n      template:\n"
          "        spec:\n          template:\n            spec:\n              restartPolicy: Never\n"
          "              containers: [{name: l, image: 'busybox:1.36'}]\n")


def test_an_object_every_crd_version_refuses_each_for_its_own_reason_is_info(tmp_path: Path) -> None:
    """Held-out corpus D (r20d): a NicClusterPolicy for network-operator 24.10 passes v24.10.0's CRD while v23.4.0
    and v26.4.1, the two held, each refuse one field; a release between those held can accept what each refuses."""
    (tmp_path / "js.yaml").write_text(JOBSET.replace("STATUS", "Done"))
    found = [f for f in _codes(tmp_path / "js.yaml") if f[1] == "K8S041"]
    assert found == [("js.yaml", "K8S041", "info")] * 2, found  # v0.12.0's enum and v0.5.2's unknown field
    # v0.12.0 accepts it and only v0.5.2 lacks dependsOn: which CRD is installed is cluster state, so info
    (tmp_path / "js.yaml").write_text(JOBSET.replace("STATUS", "Complete"))
    assert [f for f in _codes(tmp_path / "js.yaml") if f[1] == "K8S041"] == [("js.yaml", "K8S041", "info")]


def test_a_file_named_as_a_patch_with_no_kustomization_beside_it_gets_info_for_a_missing_field(tmp_path: Path) -> None:
    (tmp_path / "job-patch.yaml").write_text(JOB_PATCH)
    (tmp_path / "manager_config_patch.yaml").write_text(DEPLOYMENT_PATCH)
    (tmp_path / "job.yaml").write_text(JOB_PATCH)
    found = [f for f in _codes(tmp_path) if f[1] == "K8S040"]
    assert sorted(found) == [("job-patch.yaml", "K8S040", "info"), ("job.yaml", "K8S040", "error"),
                             ("manager_config_patch.yaml", "K8S040", "info")], found
