"""Volcano's own Queue, PodGroup and HyperNode webhook test cases at v1.15.1 (``volcano_webhooks_v1.15.1.yaml``,
our transcription) as an oracle: each case the webhook refuses on a create is refused by hpcconf's transcription
and is an error of its rule when the object is linted; each case it allows draws no error at all."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML
from typer.testing import CliRunner

from hpcconf.cli import app
from hpcconf.knowledge.volcano_webhook import (
    QueueFacts,
    queue_over_ancestor,
    validate_hypernode,
    validate_podgroup,
    validate_queue,
)

CASES = YAML(typ="safe").load((Path(__file__).parent / "volcano_webhooks_v1.15.1.yaml").read_text())
API = {"queue": ("scheduling.volcano.sh/v1beta1", "Queue"), "podgroup": ("scheduling.volcano.sh/v1beta1", "PodGroup"),
       "hypernode": ("topology.volcano.sh/v1alpha1", "HyperNode")}
ALL = [(group, case) for group in API for case in CASES[group]]


def _refused(group: str, case: dict[str, Any]) -> bool:
    obj = case["object"]
    if group == "queue":
        return bool(validate_queue(obj, "1.15.1"))
    if group == "hypernode":
        return bool(validate_hypernode(obj))
    states = case.get("queues") or {}
    return bool(validate_podgroup(obj, queues=QueueFacts({name: "root" for name in states}, states)))


@pytest.mark.parametrize("group,case", ALL, ids=[f"{g}:{c['case']}" for g, c in ALL])
def test_the_webhook_transcription_refuses_what_upstream_refuses(group: str, case: dict[str, Any]) -> None:
    assert _refused(group, case) == (not case["allowed"])


@pytest.mark.parametrize("group,case", ALL, ids=[f"{g}:{c['case']}" for g, c in ALL])
def test_linting_the_case_gives_an_error_of_its_rule_or_none(group: str, case: dict[str, Any], tmp_path: Path) -> None:
    if group == "podgroup" and case.get("queues"):
        pytest.skip("a Queue's state is status, which no manifest shows: judged above with the lister's states")
    api_version, kind = API[group]
    manifest = {"apiVersion": api_version, "kind": kind, **case["object"]}
    (tmp_path / "object.yaml").write_text(json.dumps(manifest))
    result = CliRunner().invoke(app, ["lint", "--format", "json", "--chart", "volcano=1.15.1",
                                      str(tmp_path / "object.yaml")])
    errors = [f["code"] for f in json.loads(result.stdout)["findings"] if f["severity"] == "error"]
    if case["allowed"]:
        assert errors == [], case["case"]
    else:
        assert case["rule"] in errors, (case["case"], errors)


ANCESTORS = CASES["queue_ancestors"]


@pytest.mark.parametrize("case", ANCESTORS["cases"], ids=[c["case"] for c in ANCESTORS["cases"]])
def test_a_child_queue_is_judged_against_its_ancestors_as_upstream_does(case: dict[str, Any], tmp_path: Path) -> None:
    lister = {q["metadata"]["name"]: q for q in ANCESTORS["queues"]}
    assert bool(queue_over_ancestor(case["object"], lister)) == (not case["allowed"])
    queues = [{"apiVersion": API["queue"][0], "kind": "Queue", **q} for q in [*ANCESTORS["queues"], case["object"]]]
    (tmp_path / "queues.yaml").write_text("\n---\n".join(json.dumps(q) for q in queues))
    result = CliRunner().invoke(app, ["lint", "--format", "json", str(tmp_path / "queues.yaml")])
    errors = [f["code"] for f in json.loads(result.stdout)["findings"] if f["severity"] == "error"]
    assert errors == ([] if case["allowed"] else [case["rule"]]), (case["case"], errors)


def test_every_case_not_reproduced_says_why() -> None:
    assert all(entry["why"].strip() for entry in CASES["not_reproduced"])
