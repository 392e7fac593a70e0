"""HPC001/HPC002 follow the file's consumer (issue 20): kubectl, helm, az-hop and hpcconf build refuse YAML
that does not parse (error); YAML no program hpcconf knows reads is info, with the context named."""

from __future__ import annotations

from pathlib import Path

import pytest

from hpcconf.lint.context import LintContext
from hpcconf.lint.engine import lint_paths

BROKEN = "image: nginx:1.27\n   tag: x\n"  # a mapping value where none is allowed


@pytest.mark.parametrize("files, severity", [
    ({"deploy/job.yaml": "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: x\n   y: 1\n"}, "error"),
    ({"chart/values.yaml": BROKEN, "chart/Chart.yaml": "apiVersion: v2\nname: web\nversion: 1.0.0\n"}, "error"),
    ({"gpu-operator/values.yaml": BROKEN}, "error"),  # the chart named by its directory
    ({"config.yml": "location: westeurope\nresource_group: rg\nqueues:\n  - name: hpc\n   vm_size: x\n"}, "error"),
    ({"spec.yaml": "apiVersion: hpcconf/v1\nkind: Cluster\nmetadata:\n  name: x\n   y: 1\n"}, "error"),
    ({"docker-compose.yml": BROKEN}, "info"),
    ({"values.yaml": BROKEN}, "info"),  # values of no chart hpcconf can see
    ({"settings.yaml": "a: 1\na: 2\n"}, "info"),  # HPC002 alike
])
def test_a_yaml_error_is_an_error_only_where_its_consumer_refuses_the_file(tmp_path: Path, monkeypatch, files,
                                                                          severity):
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    monkeypatch.chdir(tmp_path)
    found = [f for f in lint_paths(["."], LintContext()).findings if f.code in ("HPC001", "HPC002")]
    assert [f.severity.value for f in found] == [severity], found
    if severity == "info":
        assert "hpcconf knows no program that reads this file" in found[0].message


def test_kind_given_says_the_consumer(tmp_path: Path, monkeypatch):
    (tmp_path / "compose.yml").write_text(BROKEN)
    monkeypatch.chdir(tmp_path)
    found = lint_paths(["compose.yml"], LintContext(), forced_kind="k8s-manifest").findings
    assert [(f.code, f.severity.value) for f in found] == [("HPC001", "error")]


def test_a_secret_in_yaml_that_does_not_parse_is_found_and_never_shown(tmp_path: Path, monkeypatch):
    """crusoe's tls-secret.yaml (review20z): `tls.crt:` at 4 spaces, `tls.key:` at 2, and a base64 private key."""
    import base64

    from typer.testing import CliRunner

    from hpcconf.cli import app

    body = "\n".join(("MIIEvQIBADANBgkqhkiG9w0BAQEFAASC" + str(i) * 32)[:64] for i in range(3))
    key = base64.b64encode(f"-----BEGIN PRIVATE KEY-----\n{body}\n-----END PRIVATE KEY-----\n".encode()).decode()
    (tmp_path / "tls-secret.yaml").write_text("apiVersion: v1\nkind: Secret\nmetadata: {name: tls}\ndata:\n"
                                             f"    tls.crt: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t\n  tls.key: {key}\n")
    monkeypatch.chdir(tmp_path)
    found = lint_paths(["tls-secret.yaml"], LintContext()).findings
    assert sorted((f.code, f.line, f.severity.value) for f in found) == [("HPC001", 6, "error"),
                                                                         ("SEC001", 6, "warning")]
    shown = CliRunner().invoke(app, ["lint", "tls-secret.yaml"])
    assert "SEC001" in shown.stdout and key not in shown.stdout and key[:40] not in shown.stdout
