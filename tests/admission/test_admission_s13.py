"""Issue #24, session 13: CRD versions that disagree, kustomize patches listed from a parent directory, a spec's
Kubernetes version newer than the schemas held."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from hpcconf.cli import app

JOB_PATCH = ("apiVersion: batch/v1\nkind: Job\nmetadata: {name: train}\nspec:\n  template:\n    spec:\n"
             "      containers:\n        - name: worker\n          resources: {limits: {nvidia.com/gpu: 8}}\n")
NIC_CLUSTER_POLICY = ("apiVersion: mellanox.com/v1alpha1\nkind: NicClusterPolicy\nmetadata: {name: nic-cluster-policy}\n"
                      "spec:\n  ofedDriver: {image: doca-driver, repository: nvcr.io/nvidia/mellanox, version: '25.04'}\n"
                      "  nvIpam: {image: nvidia-k8s-ipam, repository: ghcr.io/mellanox, version: v0.3.7}\n")


def _findings(*args: str) -> list[dict]:
    result = CliRunner().invoke(app, ["lint", "--format", "json", *args])
    return list(json.loads(result.stdout)["findings"])


def _codes(*args: str) -> list[tuple[str, str, str]]:
    return [(Path(f["file"]).name, f["code"], f["severity"]) for f in _findings(*args)]


def test_a_field_only_some_crd_versions_refuse_is_info_naming_the_versions(tmp_path: Path) -> None:
    (tmp_path / "ncp.yaml").write_text(NIC_CLUSTER_POLICY)
    found = [f for f in _findings(str(tmp_path / "ncp.yaml")) if f["code"] == "K8S041"]
    assert [(f["severity"], f["line"]) for f in found] == [("info", 6)], found
    assert "CRD Mellanox/network-operator v23.4.0)" in found[0]["message"]
    assert "Mellanox/network-operator v26.4.1 accepts the object" in found[0]["message"]


def test_a_release_named_on_the_command_line_or_in_the_spec_picks_the_crd_installed(tmp_path: Path) -> None:
    (tmp_path / "ncp.yaml").write_text(NIC_CLUSTER_POLICY)
    assert [c for c in _codes("--chart", "network-operator=26.4.1", str(tmp_path / "ncp.yaml"))
            if c[1] == "K8S041"] == []
    assert [c for c in _codes("--chart", "network-operator=23.4.0", str(tmp_path / "ncp.yaml"))
            if c[1] == "K8S041"] == [("ncp.yaml", "K8S041", "error")]
    # a release between the CRDs held names no CRD: both are judged, as without a version
    assert [c for c in _codes("--chart", "network-operator=24.7.0", str(tmp_path / "ncp.yaml"))
            if c[1] == "K8S041"] == [("ncp.yaml", "K8S041", "info")]


def test_a_patch_listed_by_a_kustomization_in_a_parent_directory_is_partial(tmp_path: Path) -> None:
    overlay = tmp_path / "overlays" / "gpu"
    (overlay / "patches").mkdir(parents=True)
    (overlay / "patches" / "job.yaml").write_text(JOB_PATCH)
    (overlay / "kustomization.yaml").write_text("resources: [../../base]\npatches:\n  - path: patches/job.yaml\n")
    assert [c for c in _codes(str(overlay)) if c[1] == "K8S040"] == []
    assert [c for c in _codes(str(overlay / "patches" / "job.yaml")) if c[1] == "K8S040"] == []
    # not listed there: the API server sees it alone and refuses it
    (overlay / "kustomization.yaml").write_text("resources: [patches/job.yaml]\n")
    assert [c for c in _codes(str(overlay)) if c[1] == "K8S040"] == [("job.yaml", "K8S040", "error")]


def test_the_walk_for_a_kustomization_stops_at_the_repository_root(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "job.yaml").write_text(JOB_PATCH)
    (tmp_path / "kustomization.yaml").write_text("patches:\n  - path: repo/job.yaml\n")  # outside the repository
    assert [c for c in _codes(str(repo / "job.yaml")) if c[1] == "K8S040"] == [("job.yaml", "K8S040", "error")]


def test_a_spec_kubernetes_version_at_the_newest_schema_is_not_flagged(tmp_path: Path) -> None:
    from hpcconf.knowledge.k8s_openapi import schema_versions

    newest = schema_versions()[-1]
    spec = ("apiVersion: hpcconf/v1\nkind: Cluster\nmetadata: {name: demo, location: eastus}\nplatforms: [aks]\n"
            f"aks:\n  kubernetes_version: \"{newest}\"\npools:\n  - {{name: gpu, sku: Standard_ND96amsr_A100_v4, count: 2}}\n"
            "test_image: {registry: demo.azurecr.io, tag: \"1\"}\n")
    (tmp_path / "spec.yaml").write_text(spec)
    assert [f for f in _findings(str(tmp_path / "spec.yaml")) if f["code"] == "HPC204"] == []
    major, minor = newest.split(".")
    (tmp_path / "spec.yaml").write_text(spec.replace(f'"{newest}"', f'"{major}.{int(minor) + 1}"'))
    found = [f for f in _findings(str(tmp_path / "spec.yaml")) if f["code"] == "HPC204"]
    assert [(f["severity"], f["line"]) for f in found] == [("warning", 6)], found
    assert f"newest schemas hpcconf holds ({newest})" in found[0]["message"]


def test_defaulted_prints_an_object_the_api_server_stores_even_when_its_operator_will_fail_it(tmp_path: Path) -> None:
    # K8S004: ipam is a plain string in the HostDeviceNetwork CRD; the API server stores it, the pods fail at CNI ADD
    (tmp_path / "hdn.yaml").write_text("apiVersion: mellanox.com/v1alpha1\nkind: HostDeviceNetwork\nmetadata: {name: h}\n"
                                       "spec:\n  resourceName: hostdev\n  ipam: '{\"type\": \"whereabouts\",}'\n")
    assert ("hdn.yaml", "K8S004", "error") in _codes(str(tmp_path / "hdn.yaml"))
    result = CliRunner().invoke(app, ["lint", "--defaulted", str(tmp_path / "hdn.yaml")])
    assert result.exit_code == 0 and "kind: HostDeviceNetwork" in result.stdout
