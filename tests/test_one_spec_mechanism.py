"""A spec is judged one way: ``@spec_rule`` with the moment as data (issue #23, item 4).

Before resolving (``Moment.REFUSE``) a finding refuses the spec; after (``Moment.JUDGE``) it judges the
resolved cluster and can be suppressed. A second way (a file rule on ``Kind.SPEC``, an adapter decorator,
a module registering rules itself) fails here.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from hpcconf.artifacts import Kind
from hpcconf.diagnostics import Severity
from hpcconf.lint.context import LintContext
from hpcconf.lint.engine import lint_paths
from hpcconf.lint.rule_loading import load_rules
from hpcconf.rules_registry import REGISTRY, Moment, rule, spec_rule
from hpcconf.settings.config import LintConfig

ROOT = Path(__file__).resolve().parents[1] / "hpcconf"
REGISTERING = {"rule", "spec_rule", "engine_rule"}  # the registry's only public ways to add a rule


def test_every_spec_judgement_is_a_spec_rule_with_a_moment():
    rules = load_rules()
    judged = {code for code, r in rules.items() if r.spec_runner is not None}
    assert judged, "no spec rules loaded"
    for code in judged:
        assert isinstance(rules[code].moment, Moment), code
    for code, r in rules.items():
        assert (Kind.SPEC in r.kinds) == (r.scope == "spec" and r.moment is Moment.JUDGE), code
        assert r.moment is None or r.spec_runner is not None, code
    assert {r.moment for r in rules.values() if r.moment} == {Moment.REFUSE, Moment.REFUSE_RESOLVED, Moment.JUDGE}


def test_a_file_rule_on_specs_is_refused():
    with pytest.raises(ValueError, match="spec_rule"):
        rule(code="HPC998", name="test-spec-file-rule", severity=Severity.ERROR, kinds=(Kind.SPEC,))
    with pytest.raises(ValueError, match="spec_rule"):
        rule(code="HPC998", name="test-spec-file-rule", severity=Severity.ERROR, scope="spec")
    assert "HPC998" not in REGISTRY


@pytest.mark.parametrize("moment,check", [(Moment.REFUSE, lambda compiled: iter(())),
                                          (Moment.REFUSE_RESOLVED, lambda compiled: iter(())),
                                          (Moment.JUDGE, lambda loaded, catalog: iter(()))])
def test_a_check_whose_arguments_do_not_fit_its_moment_is_refused(moment, check):
    with pytest.raises(ValueError, match="argument"):
        spec_rule(code="SPEC998", name="test-wrong-arguments", moment=moment)(check)
    assert "SPEC998" not in REGISTRY


def _registry_functions_that_register() -> set[str]:
    tree = ast.parse((ROOT / "rules_registry.py").read_text(encoding="utf-8"))
    found = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            calls = {n.func.id for n in ast.walk(node) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
            writes = any(isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name) and n.value.id == "REGISTRY"
                         and isinstance(n.ctx, ast.Store) for n in ast.walk(node))
            if "_register" in calls or "_attach_spec_side" in calls or writes:
                found.add(node.name)
    return found


def test_the_registry_offers_one_decorator_per_kind_of_rule():
    public = {name for name in _registry_functions_that_register() if not name.startswith("_")}
    assert public == REGISTERING


def test_no_module_registers_rules_another_way():
    offenders = []
    for path in sorted(ROOT.rglob("*.py")):
        if path.name == "rules_registry.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.endswith("rules_registry"):
                offenders += [f"{path.relative_to(ROOT)} imports {a.name}" for a in node.names if a.name.startswith("_")]
            if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == "REGISTRY" \
                    and isinstance(node.ctx, ast.Store):
                offenders.append(f"{path.relative_to(ROOT)} writes REGISTRY")
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name) \
                    and node.func.value.id == "REGISTRY" and node.func.attr in ("update", "setdefault", "__setitem__"):
                offenders.append(f"{path.relative_to(ROOT)} adds to REGISTRY")
    assert offenders == []


SPEC = """\
apiVersion: hpcconf/v1
kind: Cluster
metadata: {name: judged, location: eastus}
platforms: [slurm]
network: {infiniband: {enabled: false}}
pools:
  - name: gpu
    sku: Standard_NC24rs_v3  # hpcconf: ignore[HPC200] kept for the test
    count: 2
"""


def test_a_judgement_after_resolving_is_suppressible(tmp_path):
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC.replace("  # hpcconf: ignore[HPC200] kept for the test", ""), encoding="utf-8")
    codes = [f.code for f in lint_paths([str(spec)], LintContext()).findings]
    assert "HPC200" in codes  # reported from the resolved cluster
    spec.write_text(SPEC, encoding="utf-8")
    assert "HPC200" not in [f.code for f in lint_paths([str(spec)], LintContext()).findings]
    ignored = LintContext(config=LintConfig(ignore=["HPC200"]))
    spec.write_text(SPEC.replace("  # hpcconf: ignore[HPC200] kept for the test", ""), encoding="utf-8")
    assert "HPC200" not in [f.code for f in lint_paths([str(spec)], ignored).findings]


def test_a_refusal_before_resolving_is_not_suppressible(tmp_path):
    spec = tmp_path / "spec.yaml"
    # Two pools with one name: HPC008, a check that refuses the spec before it resolves.
    spec.write_text("apiVersion: hpcconf/v1\nkind: Cluster\nmetadata: {name: refused, location: eastus}\n"
                    "platforms: [slurm]\npools:\n  - {name: gpu, sku: Standard_ND96isr_H100_v5, count: 2}\n"
                    "  - {name: gpu, sku: Standard_ND96isr_H100_v5, count: 2}  # hpcconf: ignore[HPC008] no\n",
                    encoding="utf-8")
    found = lint_paths([str(spec)], LintContext(config=LintConfig(ignore=["HPC008"]))).findings
    assert "HPC008" in [f.code for f in found]


@pytest.mark.parametrize("moment,module,check", [
    (Moment.REFUSE, "hpcconf.lint.rules.probe", lambda loaded, catalog: iter(())),
    (Moment.REFUSE_RESOLVED, "hpcconf.spec.checks.probe", lambda loaded, cluster: iter(())),
    (Moment.JUDGE, "hpcconf.spec.checks.probe", lambda compiled: iter(()))])
def test_a_spec_rule_outside_the_package_that_runs_its_moment_is_refused(moment, module, check):
    """r23b D5: a REFUSE rule in a lint module registered, was listed, and ran in neither build nor lint."""
    check.__module__ = module
    with pytest.raises(ValueError, match="lives in a module of"):
        spec_rule(code="SPEC997", name="test-misplaced", moment=moment)(check)
    assert "SPEC997" not in REGISTRY


def test_a_set_rule_that_judges_a_spec_document_is_refused():
    """r23b D5: a scope="set" rule saw the spec among its documents and reported at examples/ndmv4-aks.yaml:18."""
    from hpcconf.lint.rule_loading import load_rules

    @rule(code="XA998", name="test-set-rule-on-spec", severity=Severity.WARNING, scope="set")
    def judges_spec(doc_set, ctx):
        """Test rule."""
        for doc in doc_set.of_kind(Kind.SPEC):
            yield doc.at_line(18, "judged the spec")

    try:
        load_rules()
        spec = Path(__file__).resolve().parents[1] / "examples" / "ndmv4-aks.yaml"
        findings = lint_paths([str(spec)], LintContext()).findings
        assert not [f for f in findings if f.code == "XA998"]
        assert [f.line for f in findings if f.code == "HPC090" and "XA998" in f.message] == [18]
    finally:
        REGISTRY.pop("XA998", None)
