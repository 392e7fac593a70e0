"""Severity is a promise (issue 20 item 5): each rule page says which consumer behaviour backs its severity.

Error: the consumer refuses the file or the job cannot work. Warning: the user loses something measurable on
the platform the file targets. Info: everything else, naming the context. The rule families below state it in
a ``## Severity`` section of their page (docs/rules.md, ``hpcconf explain CODE``).
"""

from __future__ import annotations

import pytest

from hpcconf.lint.rule_loading import load_rules

FAMILIES = ("k8s", "mpi", "nccl_env", "dockerfile", "helm", "volcano", "cross")
RULES = {code: rule for code, rule in load_rules().items()
         if getattr(rule.check, "__module__", "").rsplit(".", 1)[-1] in FAMILIES}


def test_the_families_are_found():
    assert len(RULES) >= 55


@pytest.mark.parametrize("code", sorted(RULES))
def test_rule_page_states_what_backs_its_severity(code):
    doc = RULES[code].doc or ""
    assert "## Severity" in doc, f"{code}: no '## Severity' section"
    section = doc.split("## Severity", 1)[1].split("\n## ", 1)[0].strip()
    # the section opens with the severity it backs (the registered one, or the ones the rule yields)
    assert section.split(":", 1)[0].split()[0].lower() in ("error", "warning", "info"), (code, section[:60])
    assert RULES[code].severity.value in section.lower(), (code, RULES[code].severity.value, section[:80])
