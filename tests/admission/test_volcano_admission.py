"""Volcano's own admission test cases (admit_job_test.go at v1.15.1), linted as a user would apply them.

Each case of ``volcano_admit_job_v1.15.1.yaml`` is written out as a manifest (with the Queue manifests
the upstream test registers) and linted: an expected rejection must be an error of the named rule
inside the YAML node upstream complains about; an allowed job must draw no error at all.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML
from typer.testing import CliRunner

from hpcconf.cli import app
from hpcconf.knowledge.volcano_webhook import mutate, validate_create
from hpcconf.yamlpos import load_document

CASES_FILE = Path(__file__).with_name("volcano_admit_job_v1.15.1.yaml")
CASES: list[dict] = YAML(typ="safe").load(CASES_FILE.read_text())["cases"]


def _path(text: str) -> tuple[Any, ...]:
    parts: list[Any] = []
    for key, index in re.findall(r"([^.\[\]]+)|\[(\d+)\]", text):
        parts.append(int(index) if index else key)
    return tuple(parts)


def _queues(case: dict) -> list[dict]:
    out = []
    for entry in case.get("queues", []):
        name, _, parent = entry.partition(":")
        spec: dict = {"weight": 1}
        if parent:
            spec["parent"] = parent
        out.append({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": name},
                    "spec": spec, "status": {"state": "Open"}})
    return out


def _lint(tmp_path: Path, case: dict) -> tuple[list[dict], str]:
    docs = [case["job"], *_queues(case)]
    text = "\n---\n".join(json.dumps(d, indent=2) for d in docs) + "\n"
    (tmp_path / "job.yaml").write_text(text)
    version = ["--chart", f"volcano={case['volcano']}"] if case.get("volcano") else []
    result = CliRunner().invoke(app, ["lint", "--format", "json", *version, str(tmp_path / "job.yaml")])
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)["findings"] if result.stdout.strip().startswith("{") else \
        json.loads(result.stdout), text


def _lines(text: str, at: str) -> range:
    doc = load_document(text.split("\n---\n")[0] + "\n", "job.yaml")
    path = _path(at)
    key, value = doc.key_spans.get(path), doc.value_spans.get(path)
    start = (key or value or doc.position(path)).line
    end = (value.end_line if value is not None else None) or start
    return range(start, end + 1)


@pytest.mark.parametrize("case", CASES, ids=[f"{i}-{c['name']}" for i, c in enumerate(CASES)])
def test_volcano_admission_case(case: dict, tmp_path: Path) -> None:
    findings, text = _lint(tmp_path, case)
    errors = [f for f in findings if f["severity"] == "error"]
    refused_first = case.get("api_server_refuses", {}).get("rule")
    if refused_first:
        assert any(f["code"] == refused_first for f in errors), case["api_server_refuses"]["why"]
        errors = [f for f in errors if f["code"] != refused_first]
    if case["verdict"] == "allowed":
        assert errors == [], f"{case['name']}: Volcano admits this job"
        return
    lines = _lines(text, case["at"])
    severity = "info" if case["verdict"] == "unknown-queue" else "error"
    hits = [f for f in findings if f["code"] == case["rule"] and f["severity"] == severity and f["line"] in lines]
    assert hits, (f"{case['name']}: Volcano says {case['says']!r}; expected {case['rule']} ({severity}) on lines "
                  f"{lines.start}-{lines.stop - 1}, got {[(f['code'], f['severity'], f['line']) for f in findings]}")


def test_the_transcription_holds_every_upstream_case() -> None:
    # admit_job_test.go at v1.15.1: 43 TestValidateJobCreate cases + 3 TestValidateHierarchyCreate cases.
    assert sum(c["upstream"] == "TestValidateJobCreate" for c in CASES) == 43
    assert sum(c["upstream"] == "TestValidateHierarchyCreate" for c in CASES) == 3
    assert {c["verdict"] for c in CASES} == {"allowed", "rejected", "unknown-queue"}
    assert [c["name"] for c in CASES if c.get("volcano")] == [
        "validate valid-job with pod level resources less than aggregate container resources, but PodLevelResources "
        "disabled"]


def test_mutation_names_tasks_and_fills_defaults_as_the_webhook_does() -> None:
    job = {"spec": {"tasks": [{"replicas": 2}, {"name": "w", "replicas": 3, "minAvailable": 1}],
                    "plugins": {"mpi": []}}}
    out = mutate(job)
    assert out["spec"]["queue"] == "default" and out["spec"]["maxRetry"] == 3
    assert [t["name"] for t in out["spec"]["tasks"]] == ["default0", "w"]
    assert out["spec"]["minAvailable"] == 3  # 2 (defaulted to replicas) + 1
    assert out["spec"]["plugins"] == {"mpi": [], "svc": [], "ssh": []}
    assert job["spec"]["tasks"][0] == {"replicas": 2}  # the input is not changed


def test_an_unnamed_mpi_master_is_refused_after_mutation_names_it_default0() -> None:
    job = {"spec": {"tasks": [{"replicas": 1}], "plugins": {"mpi": []}}}
    assert [r.check for r in validate_create(mutate(job))] == ["mpi-master"]
