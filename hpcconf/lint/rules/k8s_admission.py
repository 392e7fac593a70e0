"""Kubernetes API server validations no schema expresses (K8S030-K8S039), cited to
kubernetes/kubernetes ``pkg/apis/core/validation/validation.go``."""

from __future__ import annotations

import difflib
from decimal import Decimal
from typing import Iterator

from ...diagnostics import Diagnostic, Severity
from ...knowledge.k8s_openapi import SchemaProblem, has_schema, object_problems, pod_template_problems
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


# Fields of ObjectMeta, for the hint when one of them sits beside ``metadata`` instead of under it.
OBJECT_META_FIELDS = ("labels", "annotations", "name", "namespace", "generateName", "finalizers", "ownerReferences")


@rule(code="K8S030", name="k8s-schema-invalid", severity=Severity.ERROR, kinds=POD_KINDS)
def k8s_schema_invalid(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """A Kubernetes object, or a pod template inside a custom resource, that the API server's schema refuses.

    ## What it catches
    Built-in kinds (Pod, Deployment, DaemonSet, Job, Service, ConfigMap, RBAC, ...) validated whole, and
    the pod templates of Volcano Jobs, MPIJobs and other workloads, against Kubernetes' OpenAPI schema of
    the cluster's version (the spec's ``kubernetes_version``; the newest installed otherwise), from the
    kubernetes-validate package: unknown fields, wrong types, values off an enum. Missing required
    fields are not reported (patches and chart fragments are partial by design).

    ## Why is this bad?
    ``kubectl apply`` uses strict server-side field validation by default (kubectl 1.27 and later), so
    the API server refuses the object: "strict decoding error: unknown field
    \"spec.tasks[0].template.labels\"". With ``--validate=false`` the field is silently dropped
    instead: labels meant for the pods never reach them, so selectors and network attachments miss.

    ## Example
    ```yaml
    template:
      labels: {app: nccl}
      spec: {containers: [...]}
    ```

    ## Fix
    Put the field where the schema has it: ``template.metadata.labels``.
    """
    data = as_dict(doc.data)
    version = ctx.kubernetes()
    if data.get("apiVersion") and data.get("kind") and has_schema(str(data["apiVersion"]), str(data["kind"]), version):
        for problem in object_problems(data, version):
            yield _schema_finding(doc, (), problem, str(data["kind"]))
        return
    for pod in pods(doc):
        base = pod.spec_path[:-1]
        template: dict = {}
        node: object = data
        for key in base:
            node = node.get(key) if isinstance(node, dict) else (node[key] if isinstance(node, list) else None)
        template = as_dict(node)
        for problem in pod_template_problems(template, version):
            yield _schema_finding(doc, base, problem, "pod template")


def _schema_finding(doc: Document, base: tuple, problem: SchemaProblem, what: str) -> Diagnostic:
    path = base + problem.path
    if problem.unknown_field:
        message = (f"unknown field '{problem.unknown_field}' in {_dotted(path[:-1])} ({what}); the API server "
                   "refuses it under kubectl's strict field validation, or drops it with --validate=false")
        hint = _unknown_field_hint(problem)
    else:
        message = f"{_dotted(path)}: {problem.message} ({what}); the API server refuses it"
        hint = "see `kubectl explain` for the field's type"
    return doc.at_path(path, message, hint=hint)


def _dotted(path: tuple) -> str:
    text = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".")
    return text or "the object"


def _unknown_field_hint(problem: SchemaProblem) -> str:
    field = problem.unknown_field or ""
    if field in OBJECT_META_FIELDS and "metadata" in problem.allowed:
        return f"move '{field}' under metadata"
    close = difflib.get_close_matches(field, problem.allowed, n=1, cutoff=0.7)
    if close:
        return f"did you mean '{close[0]}'?"
    return "check the spelling and the level (`kubectl explain <kind>.<path>`)"
