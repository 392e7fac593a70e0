"""Updates the cluster refuses in place (hpcconf.knowledge.k8s_updates), and review saying so."""

from __future__ import annotations

import copy

import pytest

from hpcconf.knowledge.k8s_updates import refused_updates
from hpcconf.review.model import _refused_update

JOB = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": "nccl"},
       "spec": {"minAvailable": 3, "tasks": [{"name": "launcher", "replicas": 1, "template": {"spec": {}}},
                                             {"name": "worker", "replicas": 2, "template": {"spec": {"x": 1}}}]}}


def _changed(obj: dict, edit) -> dict:
    new = copy.deepcopy(obj)
    edit(new)
    return new


@pytest.mark.parametrize("edit", [
    lambda j: j["spec"].update(minAvailable=5),
    lambda j: j["spec"]["tasks"][1].update(replicas=4),
    lambda j: j["spec"].update(priorityClassName="high"),
])
def test_volcano_allows_scaling_and_priority(edit) -> None:
    assert refused_updates([JOB], [_changed(JOB, edit)]) == []


@pytest.mark.parametrize(("edit", "words"), [
    (lambda j: j["spec"]["tasks"][1]["template"]["spec"].update(x=2), "may not change fields other than"),
    (lambda j: j["spec"]["tasks"].append({"name": "extra", "replicas": 1}), "may not add or remove tasks"),
    (lambda j: j["spec"].update(queue="gpu"), "may not change fields other than"),
])
def test_volcano_refuses_other_changes(edit, words: str) -> None:
    (refusal,) = refused_updates([JOB], [_changed(JOB, edit)])
    assert words in refusal.reason and refusal.kind == "Job" and "admit_job.go" in refusal.source


def test_immutable_fields_of_built_in_kinds() -> None:
    ds = {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "nhc"},
          "spec": {"selector": {"matchLabels": {"app": "nhc"}}, "template": {}}}
    assert refused_updates([ds], [_changed(ds, lambda d: d["spec"].update(template={"x": 1}))]) == []
    (refusal,) = refused_updates([ds], [_changed(ds, lambda d: d["spec"].update(selector={"matchLabels": {}}))])
    assert refusal.reason == "spec.selector: Invalid value: field is immutable"
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"}, "spec": {"template": {"a": 1}}}
    (refusal,) = refused_updates([job], [_changed(job, lambda d: d["spec"].update(template={"a": 2}))])
    assert "spec.template" in refusal.reason
    svc = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}, "spec": {"clusterIP": "None"}}
    assert refused_updates([svc], [_changed(svc, lambda d: d["spec"].update(clusterIP="10.0.0.1"))])
    other = _changed(JOB, lambda j: j["metadata"].update(name="other"))
    assert refused_updates([JOB], [_changed(other, lambda j: j["spec"].update(queue="gpu"))]) == []  # a new object


def test_review_says_delete_and_recreate_with_the_rule() -> None:
    from hpcconf.yamlio import dump_yaml

    before = dump_yaml(JOB)
    after = dump_yaml(_changed(JOB, lambda j: j["spec"]["tasks"][1]["template"]["spec"].update(x=3)))
    impact = _refused_update("aks/volcano-job.yaml", before, after)
    assert impact is not None
    assert impact.action.startswith("kubectl delete -f aks/volcano-job.yaml, then kubectl apply")
    assert "Job nccl: job updates may not change fields other than" in impact.effect
    assert _refused_update("aks/volcano-job.yaml", before, dump_yaml(_changed(
        JOB, lambda j: j["spec"]["tasks"][1].update(replicas=8)))) is None
    assert _refused_update("aks/provision.sh", before, after) is None
