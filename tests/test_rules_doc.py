"""docs/rules.md is generated from the rule registry and must not go stale."""

from hpcconf.lint.docs import DOC_PATH, render_rules_doc
from hpcconf.lint.registry import load_rules


def test_rules_doc_is_up_to_date():
    assert DOC_PATH.read_text(encoding="utf-8") == render_rules_doc(), \
        "docs/rules.md is stale: run `python -m hpcconf.lint.docs`"


def test_every_rule_has_a_section_in_the_doc():
    text = DOC_PATH.read_text(encoding="utf-8")
    for rule in load_rules().values():
        assert f"### {rule.code} {rule.name}" in text
