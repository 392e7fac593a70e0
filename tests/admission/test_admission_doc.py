"""docs/admission.md is the closing table of issue #24: every upstream check with its rule, and what is not
reproduced. These tests keep it true to the registry and to the oracle files it cites."""

from __future__ import annotations

import re
from pathlib import Path

from ruamel.yaml import YAML

from hpcconf.lint.rule_loading import load_rules
from hpcconf.rules_registry import REGISTRY

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "admission.md").read_text(encoding="utf-8")
ORACLES = ("volcano_admit_job_v1.15.1.yaml", "volcano_webhooks_v1.15.1.yaml", "k8s_validation_cases_v1.33.yaml")


def test_every_admission_rule_has_a_row_and_every_code_named_is_a_rule() -> None:
    load_rules()
    # (HPC0xx admission rules are the file-level refusals: unreadable, unparseable, special files)
    admission = {code for code, rule in REGISTRY.items() if rule.admission and not code.startswith("HPC")}
    named = set(re.findall(r"\b(?:K8S|VOL)\d{3}\b", DOC))
    assert admission - named == set(), "admission rules docs/admission.md does not list"
    assert named - set(REGISTRY) == set(), "codes docs/admission.md names that are no rule"


def test_the_oracle_files_the_page_cites_exist_and_their_rules_are_on_it() -> None:
    for name in ORACLES:
        assert name in DOC, name
        data = YAML(typ="safe").load((ROOT / "tests" / "admission" / name).read_text(encoding="utf-8"))
        rules = {str(case["rule"]) for group in (data.values() if isinstance(data, dict) else [data])
                 if isinstance(group, list) for case in group if isinstance(case, dict) and case.get("rule")}
        assert rules <= set(re.findall(r"\b(?:K8S|VOL)\d{3}\b", DOC)), (name, rules)


def test_the_webhook_cases_counted_on_the_page_are_those_held() -> None:
    cases = YAML(typ="safe").load((ROOT / "tests" / "admission" / "volcano_webhooks_v1.15.1.yaml").read_text())
    for group, test in (("queue", "TestAdmitHierarchicalQueues` that the\nqueue alone decides"),
                        ("podgroup", "TestValidatePodGroup"), ("hypernode", "TestValidateHyperNode")):
        assert f"({len(cases[group])})" in DOC.replace("\n", " ").split(test.split("`")[0])[1][:120], group
