"""Engine behaviour: crashing rules, set rules, spec compilation, positions, ordering."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hpcconf.artifacts import Kind
from hpcconf.cli import app as hpcconf_app
from hpcconf.diagnostics import Severity
from hpcconf.lint.context import LintContext
from hpcconf.lint.engine import lint_paths, lint_text
from hpcconf.lint.rule_loading import REGISTRY, rule

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def temporary_rule():
    added: list[str] = []

    def add(code: str, **kw):
        def decorate(func):
            rule(code=code, name=f"test-only-{code.lower()}", **kw)(func)
            added.append(code)
            return func
        return decorate

    yield add
    for code in added:
        REGISTRY.pop(code, None)


def test_a_crashing_rule_becomes_a_finding(temporary_rule):
    @temporary_rule("NCCL990", severity=Severity.INFO, kinds=(Kind.NCCL_CONF,))
    def crash(doc, ctx):
        """x"""
        raise KeyError("boom")
        yield  # pragma: no cover

    result = lint_text("NCCL_DEBUG=WARN\n", "nccl.conf")
    assert [(f.code, f.line) for f in result.findings] == [("HPC090", 1)]
    assert "rule NCCL990 test-only-nccl990 failed: KeyError: 'boom'" in result.findings[0].message


def test_set_rules_see_every_document(temporary_rule, tmp_path):
    seen = []

    @temporary_rule("XA990", severity=Severity.INFO, kinds=(), scope="set")
    def across(docs, ctx):
        """x"""
        seen.extend(sorted((Path(d.path).name, d.kind) for d in docs))
        for doc in docs.of_kind(Kind.NCCL_CONF):
            yield doc.at_line(1, f"{len(docs)} documents")

    (tmp_path / "nccl.conf").write_text("NCCL_DEBUG=WARN\n")
    (tmp_path / "Dockerfile").write_text("FROM ubuntu:22.04\nCOPY nccl.conf /etc/nccl.conf\n")  # one image: they pair
    result = lint_paths([str(tmp_path)], LintContext())
    assert seen == [("Dockerfile", Kind.DOCKERFILE), ("nccl.conf", Kind.NCCL_CONF)]
    assert [(f.code, f.name, f.severity, f.message) for f in result.findings] == [
        ("XA990", "test-only-xa990", Severity.INFO, "2 documents")]


def test_yaml_syntax_error_is_a_finding_not_a_crash(tmp_path):
    (tmp_path / "job.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata:\n  name: [x\n")
    result = lint_paths([str(tmp_path / "job.yaml")], LintContext())
    assert [f.code for f in result.findings] == ["HPC001"]
    assert result.findings[0].line >= 4 and result.files_checked == 1


def test_findings_are_sorted_and_never_at_line_zero():
    text = "NCCL_PROTO=Simple # x\nNCCL_ALGO = Ring\nCUDA_DEVICE_ORDER=PCI_BUS_ID\n"
    findings = lint_text(text, "nccl.conf").findings
    assert findings == sorted(findings, key=lambda f: (f.file, f.line, f.column, f.code, f.message))
    assert all(f.line >= 1 and f.column >= 1 for f in findings)


def test_finding_for_missing_yaml_key_points_at_nearest_parent():
    from hpcconf.lint.document import Document
    from hpcconf.yamlpos import load_documents

    text = "spec:\n  tasks:\n    - name: a\n"
    doc = Document(path="j.yaml", kind=Kind.VOLCANO_JOB, text=text, yaml=load_documents(text, "j.yaml")[0])
    finding = doc.at_path(("spec", "tasks", 0, "template", "spec"), "no template")
    assert (finding.line, finding.column) == (3, 7)


def lint_cli(*args: str):
    return CliRunner().invoke(hpcconf_app, ["lint", *args])


def test_spec_is_compiled_and_its_artifacts_linted(tmp_path):
    spec = tmp_path / "cluster.yaml"
    shutil.copy(REPO / "examples" / "ndmv4-aks.yaml", spec)
    result = lint_cli("--spec", str(spec), "--format", "json")
    assert result.exit_code in (0, 1), result.stderr
    data = json.loads(result.stdout)
    files = {f["file"] for f in data["findings"]}
    assert all(f == str(spec) or f.startswith(f"{spec} -> ") for f in files), files
    assert data["summary"]["files"] == 1


def test_spec_that_fails_validation_reports_its_errors_with_exit_1(tmp_path):
    spec = tmp_path / "cluster.yaml"
    spec.write_text("apiVersion: hpcconf/v1\nkind: Cluster\nmetadata: {name: ok-name}\nbogus: 1\n")
    result = lint_cli(str(spec), "--format", "json")
    assert result.exit_code == 1
    findings = json.loads(result.stdout)["findings"]
    assert findings and all(f["severity"] == "error" and f["file"] == str(spec) for f in findings)
    assert any(f["line"] == 4 for f in findings)  # the unknown key, at its line


def test_spec_artifacts_get_their_pool_sku_and_the_spec_versions():
    from hpcconf.lint.engine import context_for_build, sku_for_artifact
    from hpcconf.pipeline import compile_spec

    build = compile_spec(REPO / "examples" / "azhop-ncv4.yaml")
    by_path = {a.path: a for a in build.artifacts}
    sku = lambda path: sku_for_artifact(build, by_path[path]).name  # noqa: E731
    assert sku("nccl/nc48v4/nccl.conf") == "Standard_NC48ads_A100_v4"
    assert sku("nccl/nc96ads-a100-v4-graph.xml") == "Standard_NC96ads_A100_v4"
    assert sku("nccl/nd96asr-v4-topo.xml") == "Standard_ND96asr_v4"
    assert sku_for_artifact(build, by_path["azhop/config.yml"]) is None  # three GPU SKUs: no guess
    ctx = context_for_build(LintContext(nccl_version="2.30.7", charts={"volcano": "1.7.0"}), build)
    assert ctx.nccl_version == build.cluster.versions.nccl
    assert ctx.charts["gpu-operator"] == build.cluster.versions.gpu_operator


def test_generated_artifacts_of_the_examples_pass_the_nccl_and_docker_rules():
    for example in sorted((REPO / "examples").glob("*.yaml")):
        result = lint_cli(str(example), "--format", "json", "--select", "NCCL,DKR")
        assert result.exit_code == 0, (example.name, result.stdout)
        assert json.loads(result.stdout)["findings"] == [], example.name
