"""Every finding code has exactly one implementation and one page.

A code may run on config files and on the spec only when both sides call one judgement of
:mod:`hpcconf.knowledge.azhop_view`; a check of what only the spec decides is a spec rule of its
own, whose ``formerly`` names the old AZH code (explain, selectors and the page lead to it).
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

from hpcconf.knowledge import azhop_view
from hpcconf.lint.context import LintContext
from hpcconf.lint.engine import lint_paths, selector_matches
from hpcconf.lint.rule_loading import load_rules, redirect_note, successors

REPO = Path(__file__).resolve().parents[1]

# config.yml rules whose spec side fills a typed view and calls the same judgement.
SHARED_VIEW = {"AZH002": "judge_queue_names", "AZH010": "judge_image_refs", "AZH012": "judge_queue_limits",
               "AZH013": "judge_identities"}
# Two-sided rules of another family: both sides ask the knowledge base the same question.
SHARED_FACT = {"HPC206": "cyclecloud_slurm_gpu_count_fix"}
# File rules whose spec side (Moment.REFUSE_RESOLVED, hpcconf.resolve.refusals) refuses what resolve.ccws found in
# the parameters it generates (the release's mainTemplate types, knowledge.ccws_network's subnet plan).
RESOLVED_REFUSALS = {"CCWS001", "CCWS002", "CCWS003", "CCWS005"}
# spec rules split off a config.yml rule in 0.2.0: the AZH code lives on for config.yml only.
SPLIT_OFF = {"SPEC040": "AZH004", "SPEC041": "AZH005", "SPEC042": "AZH006", "SPEC043": "AZH007",
             "SPEC044": "AZH008", "SPEC045": "AZH009", "SPEC046": "AZH011"}


def _judgements(func) -> set[str]:
    return {name for name in re.findall(r"\b(judge_\w+)\(", inspect.getsource(func)) if hasattr(azhop_view, name)}


def test_two_sided_codes_are_exactly_those_sharing_a_view():
    rules = load_rules()
    two_sided = {code for code, r in rules.items() if r.scope != "spec" and r.check is not None and r.spec_check is not None}
    assert two_sided == set(SHARED_VIEW) | set(SHARED_FACT) | set(RESOLVED_REFUSALS) | {"CCWS008"}


@pytest.mark.parametrize("code", sorted(RESOLVED_REFUSALS))
def test_resolved_refusals_report_the_judgement_resolve_made(code):
    from hpcconf.resolve import ccws as resolve_ccws
    from hpcconf.rules_registry import Moment

    r = load_rules()[code]
    assert r.moment is Moment.REFUSE_RESOLVED and r.spec_check.__module__ == "hpcconf.resolve.refusals"
    assert r.check is not None and r.check.__module__ == "hpcconf.lint.rules.ccws"  # the page is the file rule's
    assert code in inspect.getsource(resolve_ccws)  # resolve.ccws is what finds it


def test_ccws008s_sides_call_one_judgement():
    r = load_rules()["CCWS008"]
    assert "_amlfs_zone_judgement" in _calls(r.check) and "_amlfs_zone_judgement" in _calls(r.spec_check)


def _calls(func, depth: int = 1) -> set[str]:
    """The names ``func`` calls, and those its module's helpers it calls call (``depth`` levels)."""
    names = set(re.findall(r"\b(\w+)\(", inspect.getsource(func)))
    module = inspect.getmodule(func)
    helpers = [getattr(module, n) for n in names if n.startswith("_") and inspect.isfunction(getattr(module, n, None))]
    return names.union(*(_calls(h, depth - 1) for h in helpers)) if depth else names


@pytest.mark.parametrize("code", sorted(SHARED_FACT))
def test_both_sides_ask_one_fact(code):
    r = load_rules()[code]
    assert SHARED_FACT[code] in _calls(r.check) and SHARED_FACT[code] in _calls(r.spec_check)


@pytest.mark.parametrize("code", sorted(SHARED_VIEW))
def test_both_sides_call_one_judgement(code):
    r = load_rules()[code]
    assert _judgements(r.check) == _judgements(r.spec_check) == {SHARED_VIEW[code]}


@pytest.mark.parametrize("new, old", sorted(SPLIT_OFF.items()))
def test_split_off_spec_rule_keeps_the_old_code_working(new, old):
    rules = load_rules()
    spec, config = rules[new], rules[old]
    assert spec.scope == "spec" and spec.formerly == (old,) and spec.since == "0.2.0"
    assert config.spec_check is None and config.spec_runner is None  # one implementation per code
    assert selector_matches(old, spec) and not selector_matches(new, config)
    assert [r.code for r in successors(old, rules)] == [new]
    assert new in redirect_note(old, rules) and "selects and suppresses" in redirect_note(old, rules)
    assert (REPO / "tests" / "rules" / new / "expect.yaml").is_file()


def _spec040(text: str, tmp_path: Path) -> list[str]:
    spec = tmp_path / "spec.yaml"
    spec.write_text(text, encoding="utf-8")
    return [f.code for f in lint_paths([str(spec)], LintContext()).findings if f.code == "SPEC040"]


def test_split_off_finding_keeps_its_message_under_the_new_code(tmp_path):
    # Spec findings are always-selected errors (they stop the build), before the split and after it.
    bad = (REPO / "tests" / "rules" / "SPEC040" / "bad.yaml").read_text(encoding="utf-8")
    assert _spec040(bad, tmp_path) == ["SPEC040"]
