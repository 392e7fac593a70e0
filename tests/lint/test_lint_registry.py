"""Registry guards: every rule is documented the same way and can be found by code or name."""

from __future__ import annotations

import pytest

from hpcconf.artifacts import Kind
from hpcconf.diagnostics import Severity
from hpcconf.lint.rule_loading import REQUIRED_SECTIONS, find_rule, load_rules, missing_sections, rule

RULES = load_rules()


@pytest.mark.parametrize("code", sorted(RULES))
def test_rule_page_has_every_section(code):
    r = RULES[code]
    assert not missing_sections(r), f"{code} docstring lacks {missing_sections(r)}"
    for title in ("What it catches", "Why is this bad?", "Example", "Fix"):
        assert r.section(title), f"{code}: section '## {title}' is empty"


@pytest.mark.parametrize("code", sorted(RULES))
def test_rule_kinds_are_known(code):
    r = RULES[code]
    assert set(r.kinds) <= set(Kind.all()), f"{code} names unknown kinds {set(r.kinds) - set(Kind.all())}"
    if r.scope == "document":
        assert r.kinds, f"{code} is a per-document rule without kinds: it would never run"


def test_find_rule_by_code_and_name():
    assert find_rule("nccl001").code == "NCCL001"
    assert find_rule("nccl-conf-space-around-equals").code == "NCCL001"
    assert find_rule("NOPE999") is None


def test_registering_a_bad_code_or_a_duplicate_fails():
    with pytest.raises(ValueError, match="family prefix"):
        rule(code="FOO001", name="foo", severity=Severity.INFO, kinds=(Kind.NCCL_CONF,))(lambda d, c: iter(()))
    with pytest.raises(ValueError, match="kebab"):
        rule(code="NCCL999", name="Not_Kebab", severity=Severity.INFO, kinds=(Kind.NCCL_CONF,))(lambda d, c: iter(()))
    with pytest.raises(ValueError, match="registered twice|used by"):
        rule(code="NCCL001", name="something-else", severity=Severity.INFO, kinds=(Kind.NCCL_CONF,))(
            lambda d, c: iter(()))


def test_required_sections_are_the_documented_ones():
    assert REQUIRED_SECTIONS == ("## What it catches", "## Why is this bad?", "## Example", "## Fix")
