"""`hpcconf lint / rules / explain` through Typer's test runner."""

from __future__ import annotations

import json

import pytest
import typer
from typer.testing import CliRunner

from hpcconf.cli import app as hpcconf_app

runner = CliRunner()


@pytest.fixture
def app() -> typer.Typer:
    return hpcconf_app


def run(app, *args, cwd=None):
    return runner.invoke(app, list(args))


@pytest.fixture
def bad_conf(tmp_path):
    path = tmp_path / "nccl.conf"
    path.write_text("NCCL_ALGO = Ring\nCUDA_DEVICE_ORDER=PCI_BUS_ID\n")
    return path


def test_exit_1_on_error_and_text_points_at_line(app, bad_conf):
    result = run(app, "lint", str(bad_conf))
    assert result.exit_code == 1
    assert f"{bad_conf}:1:1: error[NCCL001] nccl-conf-space-around-equals:" in result.stdout
    assert " 1 | NCCL_ALGO = Ring" in result.stdout
    assert "1 file checked: 2 errors, 1 warning, 0 infos" in result.stdout


def test_exit_0_when_below_fail_level(app, tmp_path):
    path = tmp_path / "nccl.conf"
    path.write_text("CUDA_DEVICE_ORDER=PCI_BUS_ID\n")  # a warning only
    assert run(app, "lint", str(path)).exit_code == 0
    assert run(app, "lint", str(path), "--fail-level", "warning").exit_code == 1


def test_clean_file_exits_0(app, tmp_path):
    path = tmp_path / "nccl.conf"
    path.write_text("NCCL_DEBUG=WARN\n")
    result = run(app, "lint", str(path))
    assert result.exit_code == 0
    assert "1 file checked: no findings" in result.stdout


def test_json_format(app, bad_conf):
    result = run(app, "lint", str(bad_conf), "--format", "json")
    data = json.loads(result.stdout)
    first = data["findings"][0]
    assert list(first) == ["code", "name", "severity", "message", "hint", "file", "line", "column",
                           "end_line", "end_column"]
    assert (first["code"], first["line"], first["column"]) == ("NCCL001", 1, 1)
    assert data["summary"] == {"error": 2, "warning": 1, "info": 0, "files": 1, "findings": 3}


def test_select_and_ignore(app, bad_conf):
    only = json.loads(run(app, "lint", str(bad_conf), "--format", "json", "--select", "NCCL004").stdout)
    assert {f["code"] for f in only["findings"]} == {"NCCL004"}
    rest = json.loads(run(app, "lint", str(bad_conf), "--format", "json", "--ignore", "NCCL001,NCCL004").stdout)
    assert rest["findings"] == []
    by_name = json.loads(run(app, "lint", str(bad_conf), "--format", "json",
                             "--ignore", "nccl-conf-space-around-equals").stdout)
    assert {f["code"] for f in by_name["findings"]} == {"NCCL004"}


@pytest.mark.parametrize("args, message", [
    (("lint", "does-not-exist.conf"), "no such file or directory"),
    (("lint", "--format", "xml", "."), "--format must be one of"),
    (("lint", "--kind", "bogus", "."), "--kind must be one of"),
    (("lint", "--sku", "Standard_XX1", "."), "unknown SKU"),
    (("lint", "--nccl-version", "two", "."), "not a version number"),
    (("lint", "--chart", "gpu-operator", "."), "NAME=VERSION"),
    (("lint", "--chart", "foo=1.0", "."), "unknown chart"),
    (("lint", "--select", "ZZZ", "."), "matches no rule"),
    (("lint", "--fail-level", "fatal", "."), "--fail-level must be one of"),
    (("lint", "--config", "missing.toml", "."), "config file not found"),
])
def test_usage_errors_exit_2_with_one_line_on_stderr(app, args, message, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = run(app, *args)
    assert result.exit_code == 2, result.stdout
    assert message in result.stderr
    assert "Traceback" not in result.stderr + result.stdout


def test_binary_file_is_a_usage_error(app, tmp_path):
    path = tmp_path / "nccl.conf"
    path.write_bytes(b"\xff\xfe\x00NCCL")
    result = run(app, "lint", str(path))
    assert result.exit_code == 2 and "not a UTF-8 text file" in result.stderr


def test_directory_walk_skips_hidden_and_unrecognised(app, tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "nccl.conf").write_text("NCCL_ALGO = Ring\n")
    (tmp_path / "notes.txt").write_text("hello\n")
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "nccl.conf").write_text("NCCL_ALGO = Ring\n")
    (tmp_path / "Dockerfile").write_text("FROM ubuntu:22.04\n")
    data = json.loads(run(app, "lint", str(tmp_path), "--format", "json").stdout)
    assert data["summary"]["files"] == 2
    assert {f["file"] for f in data["findings"]} == {str(tmp_path / "conf" / "nccl.conf")}


def test_explicit_unrecognised_file_is_reported(app, tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("hello\n")
    data = json.loads(run(app, "lint", str(path), "--format", "json").stdout)
    assert [f["code"] for f in data["findings"]] == ["HPC091"]


def test_kind_forces_the_reader(app, tmp_path):
    path = tmp_path / "settings"
    path.write_text("NCCL_ALGO = Ring\n")
    data = json.loads(run(app, "lint", str(path), "--kind", "nccl-conf", "--format", "json").stdout)
    assert [f["code"] for f in data["findings"]] == ["NCCL001", "NCCL001"]


def test_nccl_version_changes_the_verdict(app, tmp_path):
    path = tmp_path / "job.env"
    path.write_text("NCCL_ALGO=Ring,Bogus\n")
    new = json.loads(run(app, "lint", str(path), "--format", "json").stdout)["findings"]
    old = json.loads(run(app, "lint", str(path), "--format", "json", "--nccl-version", "2.18.5").stdout)["findings"]
    assert [f["code"] for f in new] == ["NCCL011"]
    assert "NCCL fails to initialise" in new[0]["message"]  # fatal since 2.24
    assert [f["code"] for f in old] == ["NCCL011"]
    assert "2.18.5 ignores the unknown token 'Bogus'" in old[0]["message"]
    assert "fails to initialise" not in old[0]["message"]


def test_sku_accepts_short_lower_case_names(app, tmp_path):
    path = tmp_path / "nccl.conf"
    path.write_text("NCCL_GRAPH_FILE=/opt/microsoft/ncv4/graph.xml\n")
    for sku in ("Standard_NC48ads_A100_v4", "nc48ads_a100_v4", "NC48ads_A100_v4"):
        result = run(app, "lint", str(path), "--sku", sku, "--format", "json")
        assert [f["code"] for f in json.loads(result.stdout)["findings"]] == ["NCCL015"], sku


def test_rules_lists_every_rule(app):
    from hpcconf.lint.rule_loading import load_rules

    result = run(app, "rules")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert len(lines) == len(load_rules())
    assert any(line.startswith("NCCL001") and "nccl-conf-space-around-equals" in line and "error" in line
               for line in lines)
    data = json.loads(run(app, "rules", "--format", "json").stdout)
    assert {"code", "name", "severity", "kinds", "summary"} <= set(data[0])


@pytest.mark.parametrize("key", ["NCCL015", "nccl015", "nccl-graph-file-on-sku"])
def test_explain_prints_the_page(app, key):
    result = run(app, "explain", key)
    assert result.exit_code == 0
    assert result.stdout.startswith("NCCL015 nccl-graph-file-on-sku (error;")
    assert "## Why is this bad?" in result.stdout and "57.5" in result.stdout


def test_explain_unknown_rule_is_usage_error(app):
    result = run(app, "explain", "XYZ")
    assert result.exit_code == 2 and "no rule 'XYZ'" in result.stderr


def test_syntax_errors_survive_a_narrow_select(app, tmp_path):
    path = tmp_path / "job.yaml"
    path.write_text("apiVersion: v1\nkind: [\n")
    result = run(app, "lint", str(path), "--select", "NCCL", "--format", "json")
    assert result.exit_code == 1
    assert [f["code"] for f in json.loads(result.stdout)["findings"]] == ["HPC001"]


def test_templates_are_never_yaml_errors_walked_or_named(app, tmp_path):
    (tmp_path / "chart" / "templates").mkdir(parents=True)
    template = tmp_path / "chart" / "templates" / "job.yaml"
    template.write_text("apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\n{{- if .Values.x }}\nspec: {}\n{{- end }}\n"
                        "metadata: {name: [}\n")
    assert json.loads(run(app, "lint", str(tmp_path), "--format", "json").stdout)["findings"] == []
    # Named (as pre-commit names it) beside a file that is linted: passed over, as the walk passes it over.
    (tmp_path / "nccl.conf").write_text("NCCL_DEBUG=WARN\n")
    named = json.loads(run(app, "lint", str(template), str(tmp_path / "nccl.conf"), "--format", "json").stdout)
    assert named["findings"] == [] and named["summary"]["files"] == 1
    # Named alone, the run checks nothing: that is said, with the reason, never as a YAML syntax error.
    alone = json.loads(run(app, "lint", str(template), "--format", "json").stdout)["findings"]
    assert [f["code"] for f in alone] == ["HPC091"] and "Helm template" in alone[0]["message"]
