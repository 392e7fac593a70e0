"""Kubernetes API server validations no schema expresses (K8S030-K8S039), cited to
kubernetes/kubernetes ``pkg/apis/core/validation/validation.go``."""

from __future__ import annotations

from decimal import Decimal
from typing import Iterator

from ...diagnostics import Diagnostic, Severity
from ...knowledge.k8s_quantity import parse_quantity
from ...parsers.k8s import POD_KINDS, as_dict, pods
from ..context import LintContext
from ..document import Document
from ..registry import rule


def _amounts(resources: object, key: str) -> dict[str, Decimal]:
    out = {}
    for name, value in as_dict(as_dict(resources).get(key)).items():
        amount = parse_quantity(value)
        if amount is not None:
            out[str(name)] = amount
    return out


@rule(code="K8S031", name="pod-level-resources-invalid", severity=Severity.ERROR, kinds=POD_KINDS)
def pod_level_resources_invalid(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """Pod-level ``resources`` the API server refuses.

    ## What it catches
    In a pod spec's own ``resources`` (the PodLevelResources feature, on by default from Kubernetes
    1.34): a request above the pod's limit for the same resource, or a pod-level request below the
    sum of its containers' requests.

    ## Why is this bad?
    The API server refuses the pod, and so does Volcano's webhook for a job's template (it runs the same
    ``ValidatePodTemplate``): "spec.resources.requests: Invalid value: "6": must be less than or equal
    to cpu limit of 4", "must be greater than or equal to aggregate container requests of 4"
    (``validatePodResourceConsistency`` in ``pkg/apis/core/validation/validation.go``, v1.34; Volcano
    ``admit_job_test.go`` v1.15.1 has both cases).

    ## Example
    ```yaml
    spec:
      resources: {requests: {cpu: "2"}}
      containers:
        - {name: a, resources: {requests: {cpu: "2"}}}
        - {name: b, resources: {requests: {cpu: "2"}}}
    ```

    ## Fix
    Make the pod-level request at least the containers' sum (``cpu: "4"``) and at most its limit.
    """
    for pod in pods(doc):
        resources = pod.spec.get("resources")
        if not isinstance(resources, dict):
            continue
        requests, limits = _amounts(resources, "requests"), _amounts(resources, "limits")
        base = pod.spec_path + ("resources",)
        for name, request in sorted(requests.items()):
            limit = limits.get(name)
            if limit is not None and request > limit:
                yield doc.at_path(base + ("requests", name), f"pod-level {name} request {_text(resources, 'requests', name)} "
                                  f"is above the pod's {name} limit {_text(resources, 'limits', name)}; the API "
                                  "server refuses the pod", hint="lower the request or raise the limit")
                continue
            total = sum((_amounts(as_dict(c).get("resources"), "requests").get(name, Decimal(0))
                         for c in pod.spec.get("containers") or []), Decimal(0))
            if request < total:
                yield doc.at_path(base + ("requests", name), f"pod-level {name} request "
                                  f"{_text(resources, 'requests', name)} is below its containers' total request "
                                  f"({_number(total)}); the API server refuses the pod",
                                  hint=f"request at least {_number(total)} at the pod level, or drop it")


def _text(resources: dict, key: str, name: str) -> str:
    return str(as_dict(resources.get(key)).get(name))


def _number(amount: Decimal) -> str:
    return format(amount.normalize(), "f")
