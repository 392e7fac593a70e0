"""Updates the cluster refuses: ``kubectl apply`` of a changed object that must be deleted and recreated.

- Volcano Job: ``validateJobUpdate`` (volcano-sh/volcano ``pkg/webhooks/admission/jobs/validate/admit_job.go``,
  v1.15.1) lets only ``spec.minAvailable``, ``spec.tasks[*].replicas``, ``spec.tasks[*].minAvailable`` and
  ``spec.priorityClassName`` change, and no task be added or removed.
- batch/v1 Job: ``spec.template``, ``spec.selector``, ``spec.completionMode`` are immutable
  (kubernetes ``pkg/apis/batch/validation/validation.go`` ``ValidateJobSpecUpdate``; the template's
  scheduling directives may change only while the job is suspended, which a manifest does not show).
- Deployment, DaemonSet, StatefulSet: ``spec.selector`` is immutable (``pkg/apis/apps/validation``);
  a StatefulSet also refuses changes outside replicas, ordinals, template, updateStrategy,
  persistentVolumeClaimRetentionPolicy and minReadySeconds (``ValidateStatefulSetUpdate``).
- Service: ``spec.clusterIP``/``clusterIPs`` once set (``ValidateServiceUpdate``).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, Optional

VOLCANO_SOURCE = "https://github.com/volcano-sh/volcano/blob/v1.15.1/pkg/webhooks/admission/jobs/validate/admit_job.go"
K8S_SOURCE = "https://github.com/kubernetes/kubernetes/blob/v1.34.0/pkg/apis/{group}/validation/validation.go"
STATEFULSET_MUTABLE = ("replicas", "ordinals", "template", "updateStrategy", "persistentVolumeClaimRetentionPolicy",
                       "minReadySeconds")


@dataclass(frozen=True)
class Refusal:
    kind: str
    name: str
    reason: str  # the API server's or webhook's words
    source: str


def _spec(obj: Any) -> dict[str, Any]:
    spec = obj.get("spec") if isinstance(obj, dict) else None
    return spec if isinstance(spec, dict) else {}


def identity(obj: Any) -> Optional[tuple[str, str, str, str]]:
    """(apiVersion group, kind, namespace, name): what ``kubectl apply`` matches an object by."""
    if not isinstance(obj, dict) or not isinstance(obj.get("metadata"), dict):
        return None
    meta = obj["metadata"]
    if not obj.get("kind") or not meta.get("name"):
        return None
    group = str(obj.get("apiVersion", "")).rsplit("/", 1)[0] if "/" in str(obj.get("apiVersion", "")) else ""
    return group, str(obj["kind"]), str(meta.get("namespace") or "default"), str(meta["name"])


def _volcano_job(old: dict[str, Any], new: dict[str, Any]) -> Optional[str]:
    old_spec, new_spec = copy.deepcopy(_spec(old)), copy.deepcopy(_spec(new))
    old_tasks, new_tasks = old_spec.get("tasks") or [], new_spec.get("tasks") or []
    if not isinstance(old_tasks, list) or not isinstance(new_tasks, list):
        return None
    if len(old_tasks) != len(new_tasks):
        return "job updates may not add or remove tasks"
    for spec in (old_spec, new_spec):
        spec.pop("minAvailable", None)
        spec.pop("priorityClassName", None)
        for task in spec.get("tasks") or []:
            if isinstance(task, dict):
                task.pop("replicas", None)
                task.pop("minAvailable", None)
    if old_spec != new_spec:
        return ("job updates may not change fields other than `minAvailable`, `tasks[*].replicas under spec` and "
                "`PriorityClassName`")
    return None


def _batch_job(old: dict[str, Any], new: dict[str, Any]) -> Optional[str]:
    for field in ("template", "selector", "completionMode"):
        if _spec(old).get(field) != _spec(new).get(field) and _spec(old).get(field) is not None:
            return f"spec.{field}: Invalid value: field is immutable"
    return None


def _selector(old: dict[str, Any], new: dict[str, Any]) -> Optional[str]:
    if _spec(old).get("selector") is not None and _spec(old).get("selector") != _spec(new).get("selector"):
        return "spec.selector: Invalid value: field is immutable"
    return None


def _statefulset(old: dict[str, Any], new: dict[str, Any]) -> Optional[str]:
    rest_old = {k: v for k, v in _spec(old).items() if k not in STATEFULSET_MUTABLE}
    rest_new = {k: v for k, v in _spec(new).items() if k not in STATEFULSET_MUTABLE}
    if rest_old != rest_new:
        return ("spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', "
                "'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' "
                "are forbidden")
    return None


def _service(old: dict[str, Any], new: dict[str, Any]) -> Optional[str]:
    before = _spec(old).get("clusterIP")
    if before not in (None, "") and before != _spec(new).get("clusterIP"):
        return "spec.clusterIP: Invalid value: field is immutable"
    return None


CHECKS = {("batch.volcano.sh", "Job"): (_volcano_job, VOLCANO_SOURCE),
          ("batch", "Job"): (_batch_job, K8S_SOURCE.format(group="batch")),
          ("apps", "Deployment"): (_selector, K8S_SOURCE.format(group="apps")),
          ("apps", "DaemonSet"): (_selector, K8S_SOURCE.format(group="apps")),
          ("apps", "StatefulSet"): (_statefulset, K8S_SOURCE.format(group="apps")),
          ("", "Service"): (_service, K8S_SOURCE.format(group="core"))}


def refused_updates(old_objects: list[Any], new_objects: list[Any]) -> list[Refusal]:
    """The objects of ``new_objects`` that replace one of ``old_objects`` in a way the cluster refuses."""
    before = {identity(o): o for o in old_objects if identity(o) is not None}
    found = []
    for obj in new_objects:
        key = identity(obj)
        if key is None or key not in before:
            continue
        check = CHECKS.get((key[0], key[1]))
        if check is None:
            continue
        reason = check[0](before[key], obj)
        if reason is not None:
            found.append(Refusal(kind=key[1], name=key[3], reason=reason, source=check[1]))
    return found
