"""XA006: the `default` ServiceAccount exists in every namespace, and a placeholder name is not a name yet (r24c,
seen linting aws-do-eks and the GKE samples together)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hpcconf.cli import app

ACCOUNT = "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: puller, namespace: kube-system}\n"


def _pod(account: str, namespace: str = "kube-system") -> str:
    return ("apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: " + namespace + "}\nspec:\n"
            "  serviceAccountName: " + account + "\n  containers:\n  - {name: c, image: busybox:1.36}\n")


def _xa006(tmp_path: Path, pod: str) -> list[str]:
    (tmp_path / "manifests.yaml").write_text(ACCOUNT + "---\n" + pod)
    result = CliRunner().invoke(app, ["lint", "--format", "json", str(tmp_path / "manifests.yaml")])
    return [f["message"] for f in json.loads(result.stdout)["findings"] if f["code"] == "XA006"]


@pytest.mark.parametrize("account, namespace", [
    ("default", "kube-system"),
    ("'${KSA_NAME}'", "kube-system"),
    ("'{{ .Values.serviceAccount }}'", "kube-system"),
    ("puller", "'${NAMESPACE}'"),
])
def test_not_reported(tmp_path, account, namespace):
    assert _xa006(tmp_path, _pod(account, namespace)) == []


def test_a_missing_named_account_is_still_reported(tmp_path):
    found = _xa006(tmp_path, _pod("missing"))
    assert len(found) == 1 and "'missing' does not exist in namespace 'kube-system'" in found[0]
