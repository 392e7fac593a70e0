"""CRD CEL rules at lint time (hpcconf/knowledge/crd_cel.py, K8S042): evaluated as the API server does on a
create, and never a finding where cel-python cannot tell."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hpcconf.cli import app
from hpcconf.knowledge import crd_schemas
from hpcconf.knowledge.crd_cel import defaulted, evaluate

ROOT = Path(__file__).resolve().parents[2]
JOBSET_MIRROR = Path("/work/.mirror/kubernetes-sigs+jobset/repo")


def _node(*rules: dict, **properties: dict) -> dict:
    return {"type": "object", "properties": properties or {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "x-kubernetes-validations": list(rules)}


def test_the_message_is_chosen_as_the_api_server_does():
    rule = {"rule": "self.a <= self.b", "message": "a above b", "messageExpression": "'a is ' + string(self.a)"}
    failed, _ = evaluate({"a": 2, "b": 1}, _node(rule))
    assert [f.detail for f in failed] == ["a is 2"]
    # a messageExpression that fails to evaluate falls back to message, and no message to "failed rule: <rule>"
    failed, _ = evaluate({"a": 2, "b": 1}, _node({**rule, "messageExpression": "self.nothing + 'x'"}))
    assert [f.detail for f in failed] == ["a above b"]
    failed, _ = evaluate({"a": 2, "b": 1}, _node({"rule": " self.a <= self.b "}))
    assert [f.api_server_text("spec") for f in failed] == ["spec: Invalid value: failed rule: self.a <= self.b"]
    assert evaluate({"a": 1, "b": 2}, _node(rule)) == ([], [])


def test_reason_and_field_path_place_the_error():
    rule = {"rule": "has(self.b)", "message": "b is required", "reason": "FieldValueRequired", "fieldPath": ".b"}
    failed, _ = evaluate({"a": 1}, _node(rule))
    assert [(f.path, f.api_server_text("spec.b")) for f in failed] == [(("b",), "spec.b: Required value: b is required")]
    scalar = {"type": "string", "x-kubernetes-validations": [{"rule": "self.startsWith('ib')", "message": "an IB name"}]}
    failed, _ = evaluate({"name": "eth0"}, {"type": "object", "properties": {"name": scalar}})
    assert [f.api_server_text("spec.name") for f in failed] == ['spec.name: Invalid value: "eth0": an IB name']


def test_rules_run_on_every_item_after_the_defaults():
    items = {"type": "object", "properties": {"a": {"type": "integer", "default": 5}, "b": {"type": "integer"}},
             "x-kubernetes-validations": [{"rule": "self.a <= self.b", "message": "a above b"}]}
    schema = {"type": "object", "properties": {"list": {"type": "array", "items": items}}}
    value = {"list": [{"b": 9}, {"b": 1}, {"a": 0, "b": 1}]}
    failed, _ = evaluate(defaulted(value, schema), schema)
    assert [f.path for f in failed] == [("list", 1)]  # the default a: 5 is above b: 1
    assert value == {"list": [{"b": 9}, {"b": 1}, {"a": 0, "b": 1}]}  # the caller's object is not changed


def test_what_cel_python_cannot_do_is_skipped_not_a_finding():
    rules = [{"rule": "self == oldSelf"},  # a transition rule: not run on a create, not even a debug line
             {"rule": "self.a == oldSelf.a", "optionalOldSelf": True},
             {"rule": "self.name.lowerAscii() == 'x'"},  # Kubernetes' strings library
             {"rule": "self.a >"},  # does not compile
             {"rule": "self.missing > 0"},  # fails to evaluate (no such key)
             {"rule": "self.a"}]  # not a boolean
    failed, skipped = evaluate({"a": 1, "name": "X"}, _node(*rules, a={"type": "integer"}, name={"type": "string"}))
    assert failed == []
    assert [s.rule for s in skipped] == [r["rule"] for r in rules[1:]]
    assert all(len(s.why) < 200 and "activation" not in s.why for s in skipped)


def _two_versions(monkeypatch, with_rule: dict, without_rule: dict) -> None:
    sources = {"example/op v1.0.0 crd.yaml": without_rule, "example/op v2.0.0 crd.yaml": with_rule}
    monkeypatch.setattr(crd_schemas, "crd_sources", lambda api_version, kind, installed=None: sources)


def test_a_rule_only_one_version_has_is_info_unless_the_others_refuse_too(monkeypatch):
    rule = {"rule": "self.a <= self.b", "message": "a above b"}
    with_rule = {"type": "object", "properties": {"spec": _node(rule, a={"type": "integer"}, b={"type": "integer"})}}
    without_rule = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "a": {"type": "integer"}, "b": {"type": "integer"}}}}}
    _two_versions(monkeypatch, with_rule, without_rule)
    judged, _ = crd_schemas.cel_rules_failed({"spec": {"a": 2, "b": 1}})
    assert [(j.failing, j.others, j.everywhere) for j in judged] == [
        (("example/op v2.0.0 crd.yaml",), ("example/op v1.0.0 crd.yaml",), False)]
    del without_rule["properties"]["spec"]["properties"]["b"]  # now v1.0.0 refuses the unknown field b
    judged, _ = crd_schemas.cel_rules_failed({"spec": {"a": 2, "b": 1}})
    assert [j.everywhere for j in judged] == [True]


def _lint(tmp_path: Path, text: str) -> list[tuple[str, str]]:
    path = tmp_path / "object.yaml"
    path.write_text(text)
    result = CliRunner().invoke(app, ["lint", "--format", "json", str(path)])
    return [(d["code"], d["severity"]) for d in json.loads(result.stdout)["findings"]]


def test_jobsets_upstream_examples_lint_clean_of_crd_errors(tmp_path):
    """Every JobSet example of kubernetes-sigs/jobset v0.12.0 (site/static/examples, config/samples): no K8S041 or
    K8S042 error (the newest CRD accepts them; the older one's disagreements are not findings)."""
    if not JOBSET_MIRROR.is_dir():
        pytest.skip("the jobset mirror is absent (fetch github:kubernetes-sigs/jobset)")
    git = ["git", f"--git-dir={JOBSET_MIRROR}"]
    names = subprocess.run([*git, "ls-tree", "-r", "--name-only", "v0.12.0", "site/static/examples", "config/samples"],
                           capture_output=True, text=True, check=True).stdout.split()
    judged = 0
    for name in names:
        if not name.endswith((".yaml", ".yml")):
            continue
        text = subprocess.run([*git, "show", f"v0.12.0:{name}"], capture_output=True, text=True, check=True).stdout
        if "kind: JobSet" not in text:
            continue
        judged += 1
        found = _lint(tmp_path, text)
        assert not [f for f in found if f[0] in ("K8S041", "K8S042", "K8S034") and f[1] == "error"], (name, found)
    assert judged >= 20


PROBE = """
import json, sys
sys.argv = ["hpcconf", "lint", sys.argv[1]]
from hpcconf.cli import main
try:
    main()
except SystemExit:
    pass
print(json.dumps("celpy" in sys.modules), file=sys.stderr)
"""


@pytest.mark.parametrize("fixture, imports_cel", [("tests/rules/K8S041/bad-nicclusterpolicy.yaml", False),
                                                  ("tests/rules/VOL001/bad.yaml", False),
                                                  ("tests/rules/K8S034/good-jobset-claims.yaml", True),
                                                  ("tests/rules/K8S041/bad-jobset.yaml", False),
                                                  ("tests/rules/K8S042/bad.yaml", True)])
def test_cel_python_is_imported_only_for_a_crd_with_create_time_rules(fixture, imports_cel, tmp_path):
    """NicClusterPolicy's rules are all transition rules and Volcano's Job CRD has none; a JobSet without
    startupPolicy is decided by the rule's guard: no import (cel-python's import and parser: about 0.2 s)."""
    target = tmp_path / "object.yaml"
    target.write_text((ROOT / fixture).read_text())
    result = subprocess.run([sys.executable, "-c", PROBE, str(target)], capture_output=True, text=True, cwd=tmp_path)
    assert json.loads(result.stderr.strip().splitlines()[-1]) is imports_cel, result.stderr[-2000:]


def test_without_cel_python_no_rule_runs_and_nothing_breaks(monkeypatch):
    import importlib.util

    from hpcconf.knowledge import crd_cel

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "celpy" else real(name, *a))
    crd_cel._program.cache_clear()
    try:
        failed, skipped = evaluate({"a": 2, "b": 1}, _node({"rule": "self.a <= self.b"}))
    finally:
        crd_cel._program.cache_clear()
    assert failed == [] and [s.why for s in skipped] == ["cel-python is not installed (pip install cel-python)"]


@pytest.mark.parametrize("rule, value, decided", [
    ("!(has(self.s) && self.s.o == 'InOrder' && self.r.exists(x, has(x.d)))", {"r": []}, True),
    ("!(has(self.s) && self.s.o == 'InOrder')", {"s": {"o": "InOrder"}}, False),  # s is there: cel-python decides
    ("!(has(self.s) && self.a || self.b)", {"b": False}, False),  # || binds looser: the guard decides nothing
    ("!(has(self.s) && self.a) && self.b", {"b": False}, False),  # the negated group is not the whole rule
    ("!(has(self.s) && self.a == ')') ", {}, True),  # a parenthesis inside a string
])
def test_a_negated_has_guard_is_decided_without_cel_python(rule, value, decided):
    from hpcconf.knowledge.crd_cel import _holds_by_its_guard

    assert _holds_by_its_guard(rule, value) is decided
    failed, skipped = evaluate(value, _node({"rule": rule}, s={"type": "object"}, r={"type": "array"}))
    if decided:
        assert failed == [] and skipped == []
