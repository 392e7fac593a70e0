"""One rule system: spec checks are registered rules, split codes keep working, a broken spec never lints clean."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hpcconf import rules_registry
from hpcconf.cli import app
from hpcconf.diagnostics import Severity
from hpcconf.lint.rule_loading import REGISTRY, load_rules, rule, spec_rule, successors

RULES = load_rules()
HERE = Path(__file__).resolve().parent
BAD_SPEC = HERE.parent / "rules" / "SPEC012" / "bad.yaml"  # valid fields, one cross-field error
BAD_FIELD = HERE.parent / "rules" / "HPC005" / "bad.yaml"  # a field out of range (loader, HPC005)


@pytest.fixture(autouse=True)
def _outside_the_repository(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the repository's [tool.hpcconf] excludes tests/**


def _run(*args: str):
    return CliRunner().invoke(app, list(args))


@pytest.mark.parametrize("code", sorted(RULES))
def test_every_rule_records_the_release_it_appeared_in(code):
    assert rules_registry.VERSION_PATTERN.match(RULES[code].since)


def test_split_codes_record_where_they_came_from():
    split_from_hpc005 = {r.code for r in successors("HPC005", RULES)}
    split_from_hpc004 = {r.code for r in successors("HPC004", RULES)}
    assert len(split_from_hpc005) == 11 and len(split_from_hpc004) == 4
    assert all(RULES[c].since == "0.2.0" and RULES[c].scope == "spec" for c in split_from_hpc005 | split_from_hpc004)


def test_every_spec_check_is_a_registered_rule_with_one_code():
    from hpcconf.rules_registry import spec_checks

    codes = [code for code, *_ in spec_checks()]
    assert len(codes) == len(set(codes))
    assert all(code in RULES for code in codes)
    # AzHOP settings are judged once per code, on config.yml and on the spec
    assert {c for c in codes if c.startswith("AZH")} == {c for c, r in RULES.items() if r.spec_check is not None
                                                         and r.moment is rules_registry.Moment.REFUSE}


def test_a_spec_that_does_not_compile_never_lints_clean():
    for args in (["--ignore", "HPC005"], ["--ignore", "SPEC012"], ["--select", "NCCL"], ["--ignore", "ALL"]):
        result = _run("lint", str(BAD_SPEC), *args)
        assert result.exit_code == 1, (args, result.output)
        assert "error[SPEC012] slurm-test-nodes-range" in result.output
    result = _run("lint", str(BAD_FIELD), "--ignore", "HPC005")
    assert result.exit_code == 1 and "error[HPC005]" in result.output


def test_an_inline_suppression_cannot_hide_a_spec_error_and_is_not_called_unused(tmp_path):
    text = BAD_SPEC.read_text(encoding="utf-8").replace(
        "  test_nodes: {gpu: 4}", "  # hpcconf: ignore[HPC005] the old code of this check\n  test_nodes: {gpu: 4}")
    spec = tmp_path / "spec.yaml"
    spec.write_text(text, encoding="utf-8")
    result = _run("lint", str(spec), "--format", "json")
    codes = [f["code"] for f in json.loads(result.stdout)["findings"]]
    assert result.exit_code == 1 and codes == ["SPEC012"], codes


def test_ignoring_a_split_code_says_where_it_went():
    result = _run("lint", str(BAD_SPEC), "--ignore", "HPC005")
    assert "HPC005 selects and suppresses them too" in result.stderr and "SPEC012 (slurm-test-nodes-range)" in result.stderr


def test_explain_an_old_code_lists_the_new_ones():
    result = _run("explain", "HPC005")
    assert result.exit_code == 0
    assert "SPEC010 (sku-nccl-algo-unknown)" in result.output and "## What it catches" in result.output
    assert "since 0.2.0" in _run("explain", "SPEC001").output


def test_rules_json_lists_lifecycle_fields():
    entries = {e["code"]: e for e in json.loads(_run("rules", "--format", "json").stdout)}
    assert entries["SPEC006"]["formerly"] == ["HPC005"] and entries["SPEC006"]["since"] == "0.2.0"
    assert entries["AZH013"]["spec"] is True and entries["NCCL001"]["since"] == "0.1.0"


def test_a_renamed_code_keeps_selecting_and_suppressing(tmp_path):
    """A lint rule renamed from NCCL998 to NCCL997: --ignore NCCL998 and ignore[NCCL998] still apply to it."""
    from hpcconf.artifacts import Kind
    from hpcconf.lint.context import LintContext
    from hpcconf.lint.engine import lint_text
    from hpcconf.settings.config import LintConfig

    @rule(code="NCCL997", name="test-renamed-rule", severity=Severity.WARNING, kinds=(Kind.NCCL_CONF,),
          since="0.2.0", formerly=("NCCL998",))
    def renamed(doc, ctx):
        """Test rule."""
        yield doc.at_line(1, "renamed rule fired")

    try:
        rules = load_rules()
        rules["NCCL997"] = REGISTRY["NCCL997"]
        assert successors("NCCL998", rules)[0].code == "NCCL997"
        ignored = lint_text("NCCL_DEBUG=WARN\n", "nccl.conf", LintContext(config=LintConfig(ignore=["NCCL998"])))
        assert "NCCL997" not in {f.code for f in ignored.findings}
        suppressed = lint_text("NCCL_DEBUG=WARN  # hpcconf: ignore[NCCL998] renamed\n", "nccl.conf")
        codes = {f.code for f in suppressed.findings}
        assert "NCCL997" not in codes and "HPC012" not in codes and "HPC011" not in codes
    finally:
        REGISTRY.pop("NCCL997", None)


def test_registry_refuses_bad_lifecycle_metadata():
    with pytest.raises(ValueError, match="since"):
        spec_rule(code="SPEC999", name="test-bad-since", since="soon")(lambda loaded, catalog: iter(()))
    with pytest.raises(ValueError, match="formerly"):
        spec_rule(code="SPEC999", name="test-bad-formerly", formerly=("SPEC999",))(lambda loaded, catalog: iter(()))
    with pytest.raises(ValueError, match="does not match"):
        rules_registry.spec_rule(code="AZH013", name="azhop-users-groups", severity=Severity.WARNING, file_rule=True)(
            lambda loaded, catalog: iter(()))
    assert "SPEC999" not in REGISTRY
