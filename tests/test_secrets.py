"""Secrets are flagged without false alarms, never echoed in any output, and never copied into out/."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hpcconf.cli import app
from hpcconf.secret_scan import redact, scan_text

REPO = Path(__file__).resolve().parents[1]
SECRET = "hunter2-Sup3rS3cret"
SPEC = """apiVersion: hpcconf/v1
kind: Cluster
metadata: {name: demo, location: southcentralus}
platforms: [slurm]
pools:
  - {name: gpu, sku: Standard_ND96amsr_A100_v4, count: 2}
mpi_env: {DB_PASSWORD: "%s"}
""" % SECRET


@pytest.mark.parametrize("line, kind", [
    (f"password: {SECRET}", "password"), (f'"clientSecret": "{SECRET}"', "password"),
    (f"export ARM_CLIENT_SECRET={SECRET}", "password"), (f"mysql --password {SECRET}", "password"),
    ("token: ghp_" + "a1B2" * 9, "token"), ("key=AKIAIOSFODNN7EXAMPLE", "token"),
    (f"url: postgres://admin:{SECRET}@db:5432/x", "connection-string"),
    ("AccountKey=" + "QUJD" * 11 + "==;", "connection-string")])
def test_secrets_are_found(line, kind):
    assert [s.kind for s in scan_text(line)] == [kind]
    assert SECRET not in redact(line) and "****" in redact(line)


@pytest.mark.parametrize("line", [
    "password: <password>", "password: ${DB_PASSWORD}", "password: changeme", "password: '********'",
    "password_file: /run/secrets/db", "secretName: nccl-secret", "ufmSecret: ufm-secret", "tokens: 5",
    "max_tokens: 4096", '"password": "Admin Password"', "adminPassword: \"[parameters('adminPassword')]\"",
    "ssh_public_key: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGZha2VmYWtl user@host", "# token: collectives:memory type",
    "url: https://user:${PASS}@host/", "client_secret: {{ .Values.secret }}", "NCCL_IB_HCA=mlx5_0:1",
    "api_key: @Microsoft.KeyVault(SecretUri=https://kv.vault.azure.net/secrets/x)"])
def test_placeholders_references_and_public_keys_are_not_secrets(line):
    assert scan_text(line) == []


def test_no_false_alarm_on_any_generated_or_example_file():
    files = [p for root in ("out", "examples", "skus", "templates") for p in (REPO / root).rglob("*") if p.is_file()]
    flagged = {str(p): scan_text(p.read_text()) for p in files if scan_text(p.read_text())}
    assert flagged == {}


def test_a_spec_with_a_secret_is_refused_located_and_nothing_is_written(tmp_path):
    spec = tmp_path / "demo.yaml"
    spec.write_text(SPEC)
    result = CliRunner().invoke(app, ["build", str(spec), "-o", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert "demo.yaml:7:25: error[SEC002]" in result.output and SECRET not in result.output  # the value, inside its quotes
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github"])
def test_lint_never_echoes_a_secret(tmp_path, fmt):
    spec = tmp_path / "demo.yaml"
    spec.write_text(SPEC)
    env = tmp_path / "job.env"
    env.write_text(f"export NCCL_DEBUG={SECRET}\nexport DB_PASSWORD={SECRET}\n")  # NCCL017 quotes its value
    result = CliRunner().invoke(app, ["lint", str(spec), str(env), "--format", fmt])
    assert result.exit_code == 1, result.output
    assert "SEC002" in result.output and SECRET not in result.output
    if fmt in ("json", "sarif"):
        json.loads(result.stdout)
