"""The rule scaffold writes a module stub with every required page section and a fixture dir."""

from __future__ import annotations

import ast

import pytest

from hpcconf.lint import new_rule
from hpcconf.lint.rule_loading import REQUIRED_SECTIONS


def test_scaffold_writes_rule_and_fixtures(tmp_path, monkeypatch):
    (tmp_path / "hpcconf" / "lint" / "rules").mkdir(parents=True)
    monkeypatch.setattr(new_rule, "REPO", tmp_path)
    written = new_rule.scaffold("DKR901", "dockerfile-example-pattern", "dockerfile", "warning", "dockerfile_extra")
    module = tmp_path / "hpcconf" / "lint" / "rules" / "dockerfile_extra.py"
    source = module.read_text()
    ast.parse(source)
    assert '@rule(code="DKR901", name="dockerfile-example-pattern", severity=Severity.WARNING, ' \
           'kinds=(Kind.DOCKERFILE,))' in source
    assert all(section in source for section in REQUIRED_SECTIONS)
    names = sorted(p.name for p in (tmp_path / "tests" / "rules" / "DKR901").iterdir())
    assert names == ["bad.Dockerfile", "expect.yaml", "good.Dockerfile"]
    expect = (tmp_path / "tests" / "rules" / "DKR901" / "expect.yaml").read_text()
    assert "{line: 1, severity: warning}" in expect and '{form: "The exact pattern", line: 1}' in expect
    assert "The exact pattern" in source  # the catches stub quotes the page stub
    assert module in written


def test_a_spec_rule_scaffold_is_a_spec_rule_judging_the_resolved_cluster(tmp_path, monkeypatch):
    (tmp_path / "hpcconf" / "lint" / "rules").mkdir(parents=True)
    monkeypatch.setattr(new_rule, "REPO", tmp_path)
    new_rule.scaffold("HPC299", "spec-example-pattern", "spec", "warning", "spec_extra")
    source = (tmp_path / "hpcconf" / "lint" / "rules" / "spec_extra.py").read_text()
    ast.parse(source)
    assert '@spec_rule(code="HPC299", name="spec-example-pattern", severity=Severity.WARNING, moment=Moment.JUDGE)' in source
    assert "def spec_example_pattern(compiled: CompiledSpec)" in source and "kinds=(Kind.SPEC" not in source


@pytest.mark.parametrize("args, message", [
    (("FOO1", "x-y", "dockerfile"), "family prefix"),
    (("DKR902", "Bad_Name", "dockerfile"), "kebab-case"),
    (("NCCL001", "whatever-name", "nccl-conf"), "exists already"),
    (("DKR903", "ok-name", "no-such-kind"), "--kind must be one of"),
])
def test_scaffold_refuses_bad_input(tmp_path, monkeypatch, args, message):
    monkeypatch.setattr(new_rule, "REPO", tmp_path)
    with pytest.raises(SystemExit, match=message):
        new_rule.scaffold(*args, "warning", "x")
