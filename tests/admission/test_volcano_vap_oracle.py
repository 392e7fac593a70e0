"""Volcano's own CEL admission policy as an oracle for hpcconf's Volcano rules.

Volcano v1.14+ ships the job checks that left its webhook as a ValidatingAdmissionPolicy
(``installer/helm/chart/volcano/policy/jobs-validating.yaml``, read here from ``../shared/upstream``).
Its CEL expressions are evaluated with cel-python on every job hpcconf is tested with (Volcano's own
admission cases, hpcconf's rule fixtures, the real files of ``wild/``), after the mutating webhook's
defaults, as the API server orders admission: whenever the policy denies a job, hpcconf must report
an error on it; and every job hpcconf calls good must pass the policy.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError
from typer.testing import CliRunner

from hpcconf.cli import app
from hpcconf.knowledge.volcano_webhook import mutate

celpy = pytest.importorskip("celpy", reason="cel-python is a test dependency ('.[test]')")
from celpy import celtypes  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
POLICY = ROOT.parent / "shared" / "upstream" / "k8s" / "volcano" / "jobs-validating-policy-v1.15.1.yaml"
CASES = YAML(typ="safe").load((Path(__file__).with_name("volcano_admit_job_v1.15.1.yaml")).read_text())["cases"]
# Kubernetes' own CEL libraries that cel-python does not have: these expressions are not evaluated
# (hpcconf's VOL008 checks the same names with the regexes of k8s.io/apimachinery's validation).
NOT_EVALUATED = ("format.dns1123Label()", "format.qualifiedName()")


def _sum(items: Any) -> Any:
    total = celtypes.IntType(0)
    for item in items:
        total = total + item
    return total


def _policy() -> tuple[list[tuple[str, Any]], list[tuple[str, Any]], list[str]]:
    if not POLICY.exists():
        pytest.skip(f"{POLICY} is absent (CI checks out ../shared: .ci/run refuses to run without it)")
    env = celpy.Environment()
    documents = list(YAML(typ="safe").load_all(POLICY.read_text()))
    spec = documents[0]["spec"]
    variables = [(v["name"], env.program(env.compile(v["expression"]), functions={"sum": _sum}))
                 for v in spec["variables"]]
    checks, skipped = [], []
    for validation in spec["validations"]:
        if any(lib in validation["expression"] for lib in NOT_EVALUATED):
            skipped.append(validation["message"])
            continue
        program = env.program(env.compile(validation["expression"]), functions={"sum": _sum})
        checks.append((validation["message"], program))
    return variables, checks, skipped


def denials(job: dict) -> list[str]:
    """The messages of the policy's validations that deny ``job`` on CREATE."""
    variables, checks, _ = _policy()
    activation: dict[str, Any] = {"object": celpy.json_to_cel(mutate(job)),
                                  "request": celpy.json_to_cel({"operation": "CREATE"}),
                                  "oldObject": celpy.json_to_cel(None)}
    values: dict[str, Any] = {}
    for name, program in variables:
        values[name] = program.evaluate({**activation, "variables": celpy.json_to_cel({})} | {
            "variables": celtypes.MapType({celtypes.StringType(k): v for k, v in values.items()})})
    activation["variables"] = celtypes.MapType({celtypes.StringType(k): v for k, v in values.items()})
    out = []
    for message, program in checks:
        result = program.evaluate(activation)
        if isinstance(result, Exception) or not bool(result):  # an evaluation error denies too (failurePolicy: Fail)
            out.append(message)
    return out


def _errors(tmp_path: Path, text: str) -> list[str]:
    (tmp_path / "job.yaml").write_text(text)
    result = CliRunner().invoke(app, ["lint", "--format", "json", str(tmp_path / "job.yaml")])
    payload = json.loads(result.stdout)
    findings = payload["findings"] if isinstance(payload, dict) else payload
    return [f["code"] for f in findings if f["severity"] == "error"]


def _jobs_in(path: Path) -> list[dict]:
    try:
        documents = list(YAML(typ="safe").load_all(path.read_text()))
    except YAMLError:  # fixtures of syntax rules are broken on purpose
        return []
    return [d for d in documents
            if isinstance(d, dict) and d.get("apiVersion") == "batch.volcano.sh/v1alpha1" and d.get("kind") == "Job"]


def test_only_the_kubernetes_format_library_is_left_unevaluated() -> None:
    _, checks, skipped = _policy()
    assert skipped == ["a lowercase RFC 1123 label must consist of lower case alphanumeric characters",
                       "job name must be a valid qualified name"]
    assert len(checks) >= 20


@pytest.mark.parametrize("case", CASES, ids=[f"{i}-{c['name']}" for i, c in enumerate(CASES)])
def test_every_job_the_policy_denies_draws_an_error(case: dict, tmp_path: Path) -> None:
    denied = denials(case["job"])
    if denied:
        assert _errors(tmp_path, json.dumps(case["job"], indent=2)), f"the policy denies it: {denied}"


FIXTURES = sorted((ROOT / "tests" / "rules").glob("*/*.yaml"))
VOLCANO_FIXTURES = [p for p in FIXTURES if p.name in ("bad.yaml", "good.yaml") and _jobs_in(p)]


@pytest.mark.parametrize("fixture", VOLCANO_FIXTURES, ids=[f"{p.parent.name}/{p.name}" for p in VOLCANO_FIXTURES])
def test_rule_fixtures_agree_with_the_policy(fixture: Path, tmp_path: Path) -> None:
    denied = [m for job in _jobs_in(fixture) for m in denials(job)]
    if fixture.name == "good.yaml":
        assert not denied, f"{fixture}: hpcconf calls this job good, Volcano's policy denies it: {denied}"
    elif denied:
        assert _errors(tmp_path, fixture.read_text()), f"{fixture}: the policy denies it: {denied}"


def test_the_policy_denies_the_cases_upstream_rejects_so_the_oracle_is_not_silent() -> None:
    """The agreement tests above pass vacuously if cel-python denied nothing: the policy must deny the upstream
    cases whose refusal it carries (15 of them at v1.15.1), and no case upstream admits."""
    denied = [c["name"] for c in CASES if denials(c["job"])]
    assert len(denied) >= 15, denied
    assert not [c["name"] for c in CASES if c["verdict"] == "allowed" and denials(c["job"])]
