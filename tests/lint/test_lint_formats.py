"""Output formats: SARIF 2.1.0 structure (checked offline against a schema written from the spec's
required properties), GitHub annotations with their escaping, JSON."""

from __future__ import annotations

import json

import jsonschema

from hpcconf.diagnostics import Diagnostic, Severity
from hpcconf.lint.context import LintContext
from hpcconf.lint.engine import LintResult, lint_text
from hpcconf.lint.formats import render_github, render_json, render_sarif
from hpcconf.lint.rule_loading import load_rules

# The properties SARIF 2.1.0 (OASIS, §3.13 sarifLog, §3.14 run, §3.18-19 tool/toolComponent,
# §3.27 result, §3.28 location, §3.29 physicalLocation, §3.30 region, §3.49 reportingDescriptor)
# requires, plus the ones GitHub code scanning needs for a located result.
SARIF_MINIMAL_SCHEMA = {
    "type": "object",
    "required": ["version", "$schema", "runs"],
    "properties": {
        "version": {"const": "2.1.0"},
        "$schema": {"type": "string", "pattern": "sarif"},
        "runs": {"type": "array", "minItems": 1, "items": {
            "type": "object",
            "required": ["tool", "results"],
            "properties": {
                "tool": {"type": "object", "required": ["driver"], "properties": {"driver": {
                    "type": "object", "required": ["name", "rules"],
                    "properties": {
                        "name": {"type": "string", "minLength": 1},
                        "rules": {"type": "array", "items": {
                            "type": "object", "required": ["id", "helpUri", "fullDescription", "shortDescription"],
                            "properties": {
                                "id": {"type": "string"},
                                "helpUri": {"type": "string", "format": "uri"},
                                "fullDescription": {"type": "object", "required": ["text"]},
                                "shortDescription": {"type": "object", "required": ["text"]},
                                "defaultConfiguration": {"type": "object", "properties": {
                                    "level": {"enum": ["none", "note", "warning", "error"]}}},
                            }}},
                    }}}},
                "results": {"type": "array", "items": {
                    "type": "object",
                    "required": ["ruleId", "message", "locations"],
                    "properties": {
                        "ruleId": {"type": "string"},
                        "ruleIndex": {"type": "integer", "minimum": 0},
                        "level": {"enum": ["none", "note", "warning", "error"]},
                        "message": {"type": "object", "required": ["text"],
                                    "properties": {"text": {"type": "string", "minLength": 1}}},
                        "locations": {"type": "array", "minItems": 1, "items": {
                            "type": "object", "required": ["physicalLocation"],
                            "properties": {"physicalLocation": {
                                "type": "object", "required": ["artifactLocation", "region"],
                                "properties": {
                                    # A path in the checkout: no base id to resolve, never "SPEC -> ARTIFACT".
                                    "artifactLocation": {"type": "object", "required": ["uri"],
                                                         "not": {"required": ["uriBaseId"]},
                                                         "properties": {"uri": {"type": "string", "minLength": 1,
                                                                                "not": {"pattern": " -> "}}}},
                                    "region": {"type": "object", "required": ["startLine"], "properties": {
                                        "startLine": {"type": "integer", "minimum": 1},
                                        "startColumn": {"type": "integer", "minimum": 1},
                                        "endLine": {"type": "integer", "minimum": 1},
                                        "endColumn": {"type": "integer", "minimum": 1}}},
                                }}}}},
                    }}},
            }}},
    },
}

CONF = "NCCL_ALGO = Ring\nCUDA_DEVICE_ORDER=PCI_BUS_ID\nNCCL_PROTO=Simple # fast\n"


def _result() -> LintResult:
    return lint_text(CONF, "conf/nccl.conf", LintContext())


def test_sarif_is_valid_and_carries_rule_pages():
    log = json.loads(render_sarif(_result()))
    jsonschema.validate(log, SARIF_MINIMAL_SCHEMA, format_checker=jsonschema.FormatChecker())
    run = log["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == sorted({r["ruleId"] for r in run["results"]})
    assert set(r["id"] for r in rules) <= set(load_rules())
    nccl001 = next(r for r in rules if r["id"] == "NCCL001")
    assert "## Why is this bad?" in nccl001["fullDescription"]["text"]
    assert nccl001["helpUri"].endswith("#nccl001-nccl-conf-space-around-equals")
    for result in run["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
    first = run["results"][0]
    assert first["ruleId"] == "NCCL001" and first["level"] == "error"
    assert first["locations"][0]["physicalLocation"] == {
        "artifactLocation": {"uri": "conf/nccl.conf"},
        "region": {"startLine": 1, "startColumn": 1, "endLine": 1, "endColumn": 11}}
    assert {r["level"] for r in run["results"]} == {"error", "warning"}


def test_sarif_info_is_note_and_artifacts_of_specs_name_the_spec_when_nothing_else_is_known():
    finding = Diagnostic(code="DKR002", name="dockerfile-apt-lists-not-cleaned", severity=Severity.INFO,
                         message="m", file="cluster.yaml -> image/Dockerfile", line=3, column=1)
    log = json.loads(render_sarif(LintResult(findings=[finding], files_checked=1)))
    jsonschema.validate(log, SARIF_MINIMAL_SCHEMA)
    result = log["runs"][0]["results"][0]
    assert result["level"] == "note"
    assert result["locations"][0]["physicalLocation"]["artifactLocation"] == {"uri": "cluster.yaml"}
    assert "(generated as image/Dockerfile)" in result["message"]["text"]


def test_github_annotations():
    lines = render_github(_result()).splitlines()
    assert lines[0] == ("::error file=conf/nccl.conf,line=1,col=1,endLine=1,endColumn=11,"
                        "title=NCCL001 nccl-conf-space-around-equals::the key is 'NCCL_ALGO ' with trailing "
                        "whitespace; NCCL sets that name, not NCCL_ALGO, so the line has no effect%0A"
                        "write NCCL_ALGO=Ring with no spaces around '='")
    assert any(line.startswith("::warning file=conf/nccl.conf,line=2,") for line in lines)


def test_github_escapes_properties_and_data():
    finding = Diagnostic(code="NCCL002", name="x", message="100% sure\nreally", hint="a,b",
                         file="dir,with:odd%name/nccl.conf", line=1, column=2, severity=Severity.INFO)
    out = render_github(LintResult(findings=[finding], files_checked=1))
    assert out == ("::notice file=dir%2Cwith%3Aodd%25name/nccl.conf,line=1,col=2,title=NCCL002 x::"
                   "100%25 sure%0Areally%0Aa,b\n")


def test_json_never_uses_line_zero_for_located_findings():
    data = json.loads(render_json(_result()))
    assert all(f["line"] >= 1 and f["column"] >= 1 for f in data["findings"])


def test_usage_errors_still_print_a_valid_report_for_ci(tmp_path):
    """`hpcconf lint ... --format sarif > out.sarif` is uploaded even when lint fails: it must not be empty."""
    from typer.testing import CliRunner

    from hpcconf.cli import app

    result = CliRunner().invoke(app, ["lint", str(tmp_path / "missing.yaml"), "--format", "sarif"])
    assert result.exit_code == 2
    log = json.loads(result.stdout)
    jsonschema.validate(log, SARIF_MINIMAL_SCHEMA)
    [invocation] = log["runs"][0]["invocations"]
    assert invocation["executionSuccessful"] is False
    assert "no such file or directory" in invocation["toolExecutionNotifications"][0]["message"]["text"]
    as_json = CliRunner().invoke(app, ["lint", str(tmp_path / "missing.yaml"), "--format", "json"])
    assert "no such file or directory" in json.loads(as_json.stdout)["usage_error"]
