"""K8S030's schemas: the right kind of the right group, at the right Kubernetes version."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hpcconf.cli import app
from hpcconf.knowledge.k8s_openapi import SchemaVersionError, has_schema, removed_api, schema_version, schema_versions


@pytest.mark.parametrize(("api_version", "kind"), [
    ("scheduling.volcano.sh/v1beta1", "PodGroup"),   # not scheduling.k8s.io's PodGroup
    ("batch.volcano.sh/v1alpha1", "Job"),            # not batch/v1's Job
    ("apps.example.com/v1", "Deployment"),           # a CRD named like a built-in kind
    ("networking.x-k8s.io/v1", "NetworkPolicy"),
])
def test_a_custom_resource_never_takes_a_built_in_schema_of_a_like_named_group(api_version: str, kind: str) -> None:
    assert not has_schema(api_version, kind)


@pytest.mark.parametrize(("api_version", "kind"), [("v1", "Pod"), ("apps/v1", "DaemonSet"), ("batch/v1", "Job"),
                                                   ("rbac.authorization.k8s.io/v1", "RoleBinding")])
def test_built_in_kinds_have_schemas(api_version: str, kind: str) -> None:
    assert has_schema(api_version, kind)


def test_versions_are_served_by_the_newest_schema_not_newer() -> None:
    versions = schema_versions()
    assert versions[0] == "1.25" and versions == tuple(sorted(versions, key=lambda v: tuple(map(int, v.split(".")))))
    assert schema_version("1.30.4") == "1.30" and schema_version(None) == versions[-1]
    assert schema_version("9.99") == versions[-1]
    with pytest.raises(SchemaVersionError, match="cover 1.25 to"):
        schema_version("1.24")


def test_removed_api_versions_follow_the_cluster_version() -> None:
    assert removed_api("batch/v1beta1", "CronJob", "1.24") is None
    assert removed_api("batch/v1beta1", "CronJob", "1.25").use == "batch/v1"
    assert removed_api("apps/v1", "Deployment") is None


def test_a_podgroup_is_judged_by_volcanos_podgroup_webhook_not_a_kubernetes_schema(tmp_path: Path) -> None:
    (tmp_path / "pg.yaml").write_text(
        "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: gpu}\nspec: {weight: 1}\n"
        "status: {state: Closed}\n---\n"
        "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {name: pg}\nspec:\n  minMember: 2\n"
        "  queue: gpu\n  networkTopology: {mode: hard, highestTierAllowed: 1, highestTierName: volcano.sh/hypernode}\n")
    result = CliRunner().invoke(app, ["lint", "--format", "json", str(tmp_path / "pg.yaml")])
    payload = json.loads(result.stdout)
    findings = payload["findings"] if isinstance(payload, dict) else payload
    # (info: Volcano v1.7.0's PodGroup CRD lacks networkTopology; which CRD is installed is cluster state)
    findings = [f for f in findings if f["severity"] != "info"]
    # A Queue's state is status, which kubectl apply never sets: the manifest cannot say the queue is Closed
    assert sorted((f["code"], f["line"]) for f in findings) == [("VOL026", 13)]
    assert all("refuses the PodGroup" in f["message"] for f in findings)


def test_a_built_in_kind_under_a_group_that_does_not_serve_it_is_refused(tmp_path: Path) -> None:
    (tmp_path / "cm.yaml").write_text("apiVersion: apps/v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {a: b}\n")
    result = CliRunner().invoke(app, ["lint", "--format", "json", str(tmp_path / "cm.yaml")])
    payload = json.loads(result.stdout)
    findings = payload["findings"] if isinstance(payload, dict) else payload
    assert [(f["code"], f["severity"], f["line"]) for f in findings] == [("K8S039", "error", 1)]
    assert "ConfigMap is served by v1" in findings[0]["message"]


@pytest.mark.parametrize(("api_version", "kind"), [("v1", "../../../etc/passwd"), ("../x/v1", "Pod"), ("v1", "a" * 300),
                                                   ("apps/v1", "Deploy ment"), ("v1\n", "Pod")])
def test_names_from_the_file_never_become_paths(api_version: str, kind: str) -> None:
    from hpcconf.knowledge.k8s_openapi import object_problems, served_api_versions

    assert not has_schema(api_version, kind)
    assert list(object_problems({"apiVersion": api_version, "kind": kind})) == []
    assert served_api_versions(kind) == [] or kind == "Pod"
