"""AzHOP lint on real configs: seed 000's published config.yml and az-hop's own template and examples."""

from __future__ import annotations

from pathlib import Path

import pytest

from hpcconf.diagnostics import Severity
from hpcconf.lint.context import LintContext
from hpcconf.lint.engine import lint_paths, lint_text
from hpcconf.lint.rule_loading import load_rules, missing_sections

REPO = Path(__file__).resolve().parents[1]
SEED = REPO / "tests" / "fixtures" / "seeds" / "azhop-seed000-config.yml"


def _findings(path: Path) -> list[tuple[str, int, str]]:
    result = lint_paths([str(path)], LintContext())
    return [(f.code, f.line, f.severity.value) for f in result.findings]


def test_seed_000_config_gets_the_findings_it_deserves():
    assert _findings(SEED) == [
        ("AZH014", 15, "warning"),   # monitoring.install_agent: deprecated, no effect (#1604)
        ("AZH008", 33, "error"),     # server: '' -- the blog lost '{{anf_home_ip}}'; nodes mount nothing
        ("AZH008", 34, "error"),     # export: '' -- likewise '{{anf_home_path}}'
        ("AZH100", 66, "warning"),   # linux_base_image CentOS 7.9: end of life 2024-06-30
        ("AZH001", 77, "error"),     # guacamole: removed from az-hop, rejected by the schema
        ("AZH004", 99, "warning"),   # slurm_version without cyclecloud_slurm_version: runtime 2.7.2, not 3.0.4
        ("AZH100", 118, "warning"),  # queue image ubuntu-2004: Ubuntu 20.04 end of life 2025-05-31
        ("AZH101", 118, "warning"),  # ... at :latest: nodes created on different days boot different images
        ("AZH001", 121, "error"),    # enable_remote_winviz: removed
        ("AZH001", 122, "error"),    # remoteviz: remote-viz queues moved into queues
    ]


def test_legacy_keys_get_a_hint_naming_the_replacement():
    result = lint_paths([str(SEED)], LintContext())
    hints = {f.line: f.hint for f in result.findings if f.code == "AZH001"}
    assert "queues: with type: remoteviz" in hints[122]


def test_upstream_template_has_no_errors(shared_dir):
    template = shared_dir / "upstream/azhop/az-hop/config.tpl.yml"
    found = _findings(template)
    assert not [f for f in found if f[2] == "error"]
    # Its login queue under OpenPBS: the OpenPBS CycleCloud template makes it an execute nodearray.
    assert ("AZH012", 574, "warning") in found


def test_upstream_ui_test_config_fails_as_the_schema_says(shared_dir):
    found = _findings(shared_dir / "upstream/azhop/az-hop/tests/configs/config_full.yml")
    schema_lines = sorted(line for code, line, _ in found if code == "AZH001")
    assert len(schema_lines) == 12  # 3 ASG names, 2 lustre_base_* keys, 7 IaaS-Lustre keys
    result = lint_paths([str(shared_dir / "upstream/azhop/az-hop/tests/configs/config_full.yml")], LintContext())
    hints = [f.hint for f in result.findings if f.code == "AZH001"]
    assert sum("asg-sched" in h for h in hints) == 1 and sum("PR #1715" in h for h in hints) == 9
    # The schema misses what Bicep needs for the AMLFS it asks for: a lustre subnet (sku and capacity have
    # defaults in bicep/azhop.bicep since PR #1715; whole-repository review, issue 20).
    assert [code for code, line, _ in found if line == 200] == ["AZH007"]


def test_hand_written_config_with_a_typo_is_caught_with_position():
    text = (REPO / "tests/rules/AZH003/good.yaml").read_text().replace("  idle_timeout: 1800", "  idle_timout: 1800")
    line = text.splitlines().index("  idle_timout: 1800") + 1
    result = lint_text(text, "config.yml")
    found = [(f.code, f.line, f.column) for f in result.findings]
    assert ("AZH001", line, 3) in found  # the unknown key
    assert ("AZH001", line - 1, 1) in found  # autoscale now lacks its required idle_timeout
    typo = next(f for f in result.findings if f.code == "AZH001" and f.line == line)
    assert "did you mean 'idle_timeout'?" in typo.hint


def test_every_azhop_rule_is_documented():
    rules = {code: r for code, r in load_rules().items() if code.startswith("AZH0")}  # AZH1xx: lint/rules/compat.py
    assert len(rules) == 15
    for code, r in rules.items():
        assert not missing_sections(r), (code, missing_sections(r))
        why = r.section("Why is this bad?").lower()
        assert any(evidence in why for evidence in ("az-hop #", "pr #", "bicep", "playbooks/", "config.schema.json", "docs/deploy", "config.tpl.yml")), code


@pytest.mark.parametrize("code", ["AZH011"])
def test_severity_steps(code):
    """Rules that grade their findings: errors for what breaks, lower levels for what may."""
    result = lint_paths([str(REPO / "tests/rules" / code / "bad.yaml")], LintContext())
    levels = {f.severity for f in result.findings if f.code == code}
    assert Severity.ERROR in levels


def test_a_subnet_smaller_than_a_queue_is_a_warning_not_an_error():
    """The config deploys and every job up to the subnet's size runs (whole-repository review, issue 20)."""
    result = lint_paths([str(REPO / "tests/rules/AZH006/bad.yaml")], LintContext())
    assert {f.severity for f in result.findings if f.code == "AZH006"} == {Severity.WARNING}


def test_no_rule_crashes_on_malformed_configs(shared_dir):
    """Every key deleted or retyped in az-hop's template: the AZH rules report, they never crash."""
    import importlib.util

    from hpcconf.lint.document import Document
    from hpcconf.lint.engine import run_rules
    from hpcconf.lint.rule_loading import find_rule
    from hpcconf.yamlpos import YamlDocument

    helpers = importlib.util.spec_from_file_location("azhop_schema_helpers", Path(__file__).with_name("test_azhop_knowledge.py"))
    module = importlib.util.module_from_spec(helpers)
    helpers.loader.exec_module(module)
    _load, mutations = module._load, module.mutations

    crashed = find_rule("rule-crashed").code
    rules = {code: r for code, r in load_rules().items() if code.startswith("AZH")}
    template = _load(shared_dir / "upstream/azhop/az-hop/config.tpl.yml")
    count = 0
    for what, mutated in mutations(template):
        doc = Document(path="config.yml", kind="azhop-config", text="", yaml=YamlDocument("config.yml", mutated, None))
        findings = run_rules([doc], LintContext(), rules)
        crashes = [f.message for f in findings if f.code == crashed]
        assert not crashes, f"{what}: {crashes}"
        count += 1
    assert count > 500


def test_cyclecloud_slurm_3_needs_cyclecloud_8_4_2():
    text = (REPO / "tests/rules/AZH004/good.yaml").read_text()
    pinned = text.replace("cyclecloud: {vm_size: Standard_B2ms}", "cyclecloud: {vm_size: Standard_B2ms, version: 8.3.0-3062}")
    found = [f for f in lint_text(pinned, "config.yml").findings if f.code == "AZH004"]
    assert [f.message for f in found] == ["cyclecloud-slurm 3.0.4 needs CycleCloud 8.4.2 or newer, not 8.3.0-3062"]
    newer = text.replace("cyclecloud: {vm_size: Standard_B2ms}", "cyclecloud: {vm_size: Standard_B2ms, version: 8.6.0-3223}")
    assert not [f for f in lint_text(newer, "config.yml").findings if f.code == "AZH004"]


def test_missing_version_that_breaks_the_pair_is_an_error():
    text = (REPO / "tests/rules/AZH004/good.yaml").read_text()
    # slurm_version 22.05.9 alone: the playbooks install cyclecloud-slurm 2.7.2, which cannot run it.
    alone = text.replace('  slurm_version: "23.02.5"\n  cyclecloud_slurm_version: "3.0.4"\n', '  slurm_version: "22.05.9"\n')
    found = [f for f in lint_text(alone, "config.yml").findings if f.code == "AZH004"]
    assert len(found) == 1 and found[0].severity == Severity.ERROR and "defaults to 2.7.2 at runtime" in found[0].message
