"""Kubernetes API server validations no schema expresses (K8S030-K8S039), cited to
kubernetes/kubernetes ``pkg/apis/core/validation/validation.go``."""

from __future__ import annotations

import difflib
import os
import re
import sys
from pathlib import Path
from typing import Any, Callable, Iterator

from ruamel.yaml import YAML

from ...artifacts import Kind
from ...diagnostics import Diagnostic, Severity
from ...knowledge.crd_schemas import (
    CrdProblem,
    cel_rules_failed,
    crd_sources,
    problems_by_version,
    refused_by_every_version,
)
from ...knowledge.k8s_openapi import (
    BUILT_IN_GROUPS,
    CRDS_WITH_POD_TEMPLATE_SCHEMA,
    SchemaProblem,
    group_of,
    has_schema,
    object_problems,
    pod_template_problems,
    removed_api,
    served_api_versions,
)
from ...knowledge.k8s_validation import (
    APPS_WORKLOADS,
    container_name_problems,
    containers,
    controller_volumes,
    env_name_problems,
    is_placeholder,
    metadata_problems,
    pod_level_problems,
    pod_policy_problems,
    port_problems,
    resource_value_problems,
    volume_problems,
    workload_problems,
)
from ...parsers.k8s import POD_KINDS, PodRef, as_dict, pods
from ...rules_registry import rule
from ..context import LintContext
from ..document import Document

# Volcano's webhook runs the Kubernetes validation it was built with, under its own feature gates:
# v1.14 vendors Kubernetes 1.34 and v1.15 1.35, where PodLevelResources is beta and on (go.mod at each tag).
VOLCANO_POD_LEVEL_FROM = (1, 14)


def _volcano_pod_level_gate(doc: Document, ctx: LintContext) -> bool | None:
    if doc.kind != Kind.VOLCANO_JOB:
        return None
    from ...knowledge.charts import newest_version
    from ...knowledge.versions import version_key

    version = (ctx.cluster.versions.volcano if ctx.cluster is not None else None) or ctx.charts.get("volcano") \
        or newest_version("volcano")
    return version is None or version_key(version)[:2] >= VOLCANO_POD_LEVEL_FROM


def _refused_by(doc: Document) -> str:
    """Who refuses a bad pod template in this document, and when."""
    data = as_dict(doc.data)
    if doc.kind == Kind.VOLCANO_JOB:
        return "Volcano's webhook refuses the job (it validates each task's pod template as the API server does)"
    if str(data.get("apiVersion", "")).count("/") and has_schema(str(data.get("apiVersion")), str(data.get("kind"))):
        return "the API server refuses it"
    if data.get("kind") in ("Pod", "PodTemplate"):
        return "the API server refuses it"
    return "the API server refuses the pods when the controller creates them, so the job never starts"


def _pod_findings(doc: Document, ctx: LintContext, check: Callable[..., Iterator[tuple[tuple[Any, ...], str]]],
                  hint: str, with_version: bool = False) -> Iterator[Diagnostic]:
    for pod in pods(doc):
        problems = check(pod.spec, ctx.kubernetes()) if with_version else check(pod.spec)
        for path, message in problems:
            full = pod.spec_path + path
            yield doc.at_path(full, f"{_dotted(full)}: {message}; {_refused_by(doc)}", hint=hint)


@rule(code="K8S031", name="pod-level-resources-invalid", severity=Severity.ERROR, admission=True, kinds=POD_KINDS)
def pod_level_resources_invalid(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """Pod-level ``resources`` the API server refuses.

    ## What it catches
    In a pod spec's own ``resources`` (PodLevelResources: beta and on by default from Kubernetes 1.34;
    before that the API server drops the field; for a Volcano Job, the gate of the Kubernetes Volcano is
    built with: on from Volcano v1.14): a request above the pod's limit, a request below what
    its containers ask for together (cpu, memory, hugepages), or a container limit above the pod's.

    ## Why is this bad?
    The API server refuses the pod, and Volcano's webhook a job's template (it runs the same
    ``ValidatePodTemplate``): "must be less than or equal to cpu limit of 4", "must be greater than or
    equal to aggregate container requests of 4", "must be less than or equal to pod limits of 1"
    (``validatePodResourceConsistency`` in kubernetes ``pkg/apis/core/validation/validation.go``, with the 1.34
    fix kubernetes#130131 that skips resources pods cannot set; Volcano ``admit_job_test.go`` v1.15.1 has two cases).

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
    gate = _volcano_pod_level_gate(doc, ctx)
    yield from _pod_findings(doc, ctx, lambda spec, version: pod_level_problems(spec, version, gate),
                             "keep pod-level requests between the containers' sum and the pod's limit", with_version=True)


@rule(code="K8S032", name="container-name-invalid", severity=Severity.ERROR, admission=True, kinds=POD_KINDS)
def container_name_invalid(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """A container with no name, a name that is not a DNS-1123 label, or a name another container has.

    ## What it catches
    ``containers``, ``initContainers`` and ``ephemeralContainers`` names: required, lower-case letters,
    digits and ``-`` (at most 63), unique across the three lists (``validateContainers``,
    ``validateInitContainers`` in kubernetes ``pkg/apis/core/validation/validation.go``). A name a tool fills
    before applying (``${APP_NAME}``, ``{{ .Values.name }}``) is passed over, as in ``metadata``.

    ## Why is this bad?
    The API server refuses the pod: ``spec.containers[0].name: Invalid value: "Nccl_Test": a lowercase
    RFC 1123 label must consist of ...``, or ``Duplicate value: "worker"``.

    ## Example
    ```yaml
    containers:
      - {name: Nccl_Test, image: nccl-tests:2.16}
    ```

    ## Fix
    ``name: nccl-test``, and a different name for each container.
    """
    yield from _pod_findings(doc, ctx, container_name_problems, "lower-case letters, digits and '-'; one name per "
                                                                "container")


@rule(code="K8S033", name="container-port-invalid", severity=Severity.ERROR, admission=True, kinds=POD_KINDS)
def container_port_invalid(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """A container port the API server refuses.

    ## What it catches
    Port names that are not IANA service names (at most 15 characters, ``a-z0-9-``, a letter, no
    ``--``, no leading or trailing ``-``), a name used twice in one container, port numbers outside
    1-65535, a protocol other than TCP/UDP/SCTP, two containers on one host port, and with
    ``hostNetwork`` a ``hostPort`` other than the ``containerPort`` (``validateContainerPorts``,
    ``AccumulateUniqueHostPorts``, ``validatePodHostNetworkDeps``).

    ## Why is this bad?
    The API server refuses the pod: ``ports[0].name: Invalid value: "ssh_port": must contain only
    alpha-numeric characters (a-z, 0-9), and hyphens (-)``.

    ## Example
    ```yaml
    ports:
      - {name: ssh_port, containerPort: 2222}
    ```

    ## Fix
    ``name: ssh``.
    """
    yield from _pod_findings(doc, ctx, port_problems, "port names: a-z, 0-9 and '-', at most 15 characters")


def _controller_volumes(doc: Document, pod: PodRef) -> tuple[str, ...]:
    """The volumes a controller adds to a pod before it creates it: claim templates (:func:`_claim_templates`), and
    mpi-operator's for an MPIJob's launcher and workers (``knowledge.k8s_validation.MPIJOB_CONTROLLER_VOLUMES``)."""
    data = as_dict(doc.data)
    role = str(pod.task.get("name", "")) if pod.task is not None else ""
    return _claim_templates(doc) + controller_volumes(str(data.get("apiVersion", "")), str(data.get("kind", "")), role)


def _claim_templates(doc: Document) -> tuple[str, ...]:
    """The volumes a controller adds to each pod from claim templates: a StatefulSet's ``volumeClaimTemplates``;
    a JobSet's ``volumeClaimPolicies[].templates`` (jobset v0.11+: ``addVolumes`` in
    ``pkg/controllers/volume_claim_policy.go`` adds a PVC volume named after the template to each Job that mounts it)."""
    data = as_dict(doc.data)
    spec = as_dict(data.get("spec"))
    if data.get("kind") == "StatefulSet":
        templates = spec.get("volumeClaimTemplates")
    elif data.get("kind") == "JobSet":
        templates = [t for policy in spec.get("volumeClaimPolicies") or [] if isinstance(policy, dict)
                     for t in as_dict(policy).get("templates") or []]
    else:
        return ()
    return tuple(str(as_dict(t.get("metadata")).get("name")) for t in templates or [] if isinstance(t, dict))


@rule(code="K8S034", name="volume-mount-unresolved", severity=Severity.ERROR, admission=True, kinds=POD_KINDS)
def volume_mount_unresolved(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """A volume mount that names no volume of the pod, or volumes and mounts the API server refuses.

    ## What it catches
    ``volumeMounts[].name`` that no ``volumes[].name`` has, a ``mountPath`` used twice in one container,
    a ``subPath`` that is absolute or contains ``..``, ``subPath`` with ``subPathExpr``, volume names
    that are missing, not DNS-1123 labels or repeated, and a volume with no source (``must specify a volume
    type``) (``ValidateVolumes``, ``ValidateVolumeMounts``).
    A StatefulSet's ``volumeClaimTemplates`` and a JobSet's ``volumeClaimPolicies[].templates`` count as
    volumes (their controllers add them to each pod), and so do the volumes mpi-operator adds to an MPIJob's
    pods: ``ssh-auth`` to the launcher and workers and ``mpi-job-config`` to the launcher (kubeflow.org/v2beta1:
    ``setupSSHOnPod`` and ``newLauncherPodTemplate`` in ``pkg/controller/mpi_job_controller.go``, v0.4.0 to
    v0.8.0); ``mpi-job-config`` to both and ``mpi-job-kubectl`` to the launcher (kubeflow.org/v1, v0.3.0).

    ## Why is this bad?
    The API server refuses the pod: ``volumeMounts[0].name: Not found: "dshm"``. Jobs assembled from
    two examples often mount ``/dev/shm`` under one name and define the volume under another.

    ## Example
    ```yaml
    volumeMounts: [{name: shm, mountPath: /dev/shm}]
    volumes: [{name: dshm, emptyDir: {medium: Memory}}]
    ```

    ## Fix
    Use one name for the volume and its mounts.
    """
    for pod in pods(doc):
        for path, message in volume_problems(pod.spec, _controller_volumes(doc, pod)):
            full = pod.spec_path + path
            yield doc.at_path(full, f"{_dotted(full)}: {message}; {_refused_by(doc)}",
                              hint="name each mount after a volume of the pod (or a StatefulSet's volumeClaimTemplates)")


@rule(code="K8S035", name="env-var-name-invalid", severity=Severity.ERROR, admission=True, kinds=POD_KINDS)
def env_var_name_invalid(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """An environment variable name the API server of the cluster's version refuses.

    ## What it catches
    ``env[].name`` empty; before Kubernetes 1.32, a name outside ``[-._a-zA-Z][-._a-zA-Z0-9]*`` (a
    leading digit, a space); from 1.32 (RelaxedEnvironmentVariableValidation on by default, GA in 1.34),
    only names with ``=`` or non-printable characters (``ValidateEnv``). Volcano Job templates always get
    the strict rule: its webhook sets no relaxed option (``validateTaskTemplate``, admit_job.go v1.15.1).

    ## Why is this bad?
    The API server refuses the pod: ``env[0].name: Invalid value: "1GPU": a valid environment variable
    name must consist of alphabetic characters, digits, '_', '-', or '.', and must not start with a digit``.

    ## Example
    ```yaml
    env: [{name: "NCCL_DEBUG=INFO"}]
    ```

    ## Fix
    ``{name: NCCL_DEBUG, value: INFO}``.
    """
    relaxed = doc.kind != Kind.VOLCANO_JOB  # Volcano's webhook validates templates with the strict rule
    yield from _pod_findings(doc, ctx, lambda spec, version: env_name_problems(spec, version, relaxed),
                             "write the name alone and the value in value:", with_version=True)


@rule(code="K8S036", name="resource-quantity-invalid", severity=Severity.ERROR, admission=True, kinds=POD_KINDS)
def resource_quantity_invalid(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """A resource request or limit that is no Kubernetes quantity, negative, a fraction of a countable device, or a
    request its limit does not cover.

    ## What it catches
    Values of ``requests``/``limits`` that do not parse as quantities (``8 Gi``, ``1Gb``), negative
    values, fractions of extended resources (``nvidia.com/gpu: 0.5``, ``rdma/ib: 500m``) and hugepages
    that are not whole pages (``ValidateResourceQuantityValue``, ``validateResourceQuantityHugePageValue``;
    the quantity grammar of k8s.io/apimachinery ``pkg/api/resource/quantity.go``). A container request above
    its limit (``cpu: 6`` against a limit of 5), hugepages requested at another size than their limit or
    without one, and hugepages with neither cpu nor memory (``validateResourceRequirements``; extended
    resources' request-equals-limit is K8S001's).

    ## Why is this bad?
    The API server refuses the pod: "quantities must match the regular expression ..." (before
    validation, HTTP 400), ``limits[nvidia.com/gpu]: Invalid value: "500m": must be an integer``,
    ``resources.requests: Invalid value: "6": must be less than or equal to cpu limit of 5`` or
    ``resources: Forbidden: HugePages require cpu or memory`` (kubernetes ``validation_test.go``
    ``TestValidateContainers``, ``TestHugePagesIsolation``). Device plugins hand out whole devices only.

    ## Example
    ```yaml
    resources:
      limits: {nvidia.com/gpu: 0.5, memory: 8 Gi}
    ```

    ## Fix
    ``nvidia.com/gpu: 1``, ``memory: 8Gi`` (GPU sharing is configured in the device plugin, not by fractions).
    A placeholder (``<number_of_gpus>``, ``${GPUS}``) is reported as info: the file says it is a template.
    """
    yield from _pod_findings(doc, ctx, resource_value_problems, "whole devices, and quantities such as 8Gi or 500m")
    for pod in pods(doc):
        for key, index, container in containers(pod.spec):
            for kind in ("requests", "limits"):
                for name, value in as_dict(as_dict(container.get("resources")).get(kind)).items():
                    if is_placeholder(value):
                        path = pod.spec_path + (key, index, "resources", kind, name)
                        yield doc.at_path(path, f"{_dotted(path)}: '{value}' is a placeholder, not a quantity: "
                                                "the file is a template to fill in (applied as written, the API "
                                                "server refuses it)", severity=Severity.INFO,
                                          hint="fill it in before applying, or render the template first")


@rule(code="K8S037", name="metadata-invalid", severity=Severity.ERROR, admission=True, kinds=POD_KINDS)
def metadata_invalid(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """An object name, namespace, label or annotation the API server refuses.

    ## What it catches
    Names of built-in objects by kind (DNS-1123 subdomain; a Namespace a DNS-1123 label; a Service a
    DNS-1035 label), namespaces, label keys (qualified names: optional DNS prefix and ``/``, then at
    most 63 characters) and values (at most 63, alphanumeric at both ends), annotation keys, and
    annotations above 256 KiB together; on the object and on every pod template
    (``ValidateObjectMetaAccessor``, ``ValidateLabels``, ``ValidateAnnotations`` in k8s.io/apimachinery).

    ## Why is this bad?
    The API server refuses the object: ``metadata.labels: Invalid value: "nccl test": a valid label must
    be an empty string or consist of alphanumeric characters ...``. A Service named ``1-nccl`` is refused
    (DNS-1035: it must start with a letter).

    ## Example
    ```yaml
    metadata:
      labels: {app: nccl test}
    ```

    ## Fix
    ``app: nccl-test``.
    """
    data = as_dict(doc.data)
    kind = str(data.get("kind", ""))
    built_in = bool(data.get("apiVersion")) and has_schema(str(data.get("apiVersion")), kind, ctx.kubernetes())
    for path, message in metadata_problems(data.get("metadata"), kind if built_in else None):
        yield doc.at_path(path, f"{_dotted(path)}: {message}; the API server refuses it", hint=_label_hint(path))
    for pod in pods(doc):
        if pod.metadata_path == ("metadata",):
            continue  # a Pod's own metadata: checked above
        for path, message in metadata_problems(pod.metadata, None, pod.metadata_path):
            yield doc.at_path(path, f"{_dotted(path)}: {message}; {_refused_by(doc)}", hint=_label_hint(path))


def _label_hint(path: tuple[Any, ...]) -> str:
    return "label values: letters, digits, '-', '_', '.', at most 63" if "labels" in path else \
        "lower-case letters, digits and '-'"


# Fields of ObjectMeta, for the hint when one of them sits beside ``metadata`` instead of under it.
OBJECT_META_FIELDS = ("labels", "annotations", "name", "namespace", "generateName", "finalizers", "ownerReferences")


@rule(code="K8S030", name="k8s-schema-invalid", severity=Severity.ERROR, admission=True, kinds=POD_KINDS)
def k8s_schema_invalid(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """A Kubernetes object, or a pod template inside a custom resource, that the API server's schema refuses.

    ## What it catches
    Built-in kinds (Pod, Deployment, DaemonSet, Job, Service, ConfigMap, RBAC, ...) validated whole, and
    the pod templates of Volcano Jobs, MPIJobs, JobSets, LeaderWorkerSets (leader and worker templates),
    KubeRay's RayCluster, RayJob and RayService (head and worker groups) and other workloads, against
    Kubernetes' OpenAPI schema of
    the cluster's version (the spec's ``kubernetes_version``; the newest installed otherwise), from the
    kubernetes-validate package: unknown fields and wrong types (the packaged schema carries no enums for core
    fields), and a pod spec's
    ``restartPolicy`` or ``dnsPolicy`` off the enums Kubernetes declares in Go that the packaged schema omits
    (``validateRestartPolicy``, ``validateDNSPolicy``). Missing required fields are not reported (patches and
    chart fragments are partial by design).

    ## Why is this bad?
    ``kubectl apply`` uses strict server-side field validation by default (kubectl 1.27 and later), so
    the API server refuses the object (for a custom resource: when its CRD gives the pod template
    Kubernetes' schema, as Volcano's Job CRD, mpi-operator v0.8.0's MPIJob CRD and JobSet's CRD do; for other custom
    resources the unknown field is info, naming that context): "strict decoding error: unknown field
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
    yield from _pod_policy_findings(doc, data)
    if data.get("apiVersion") and data.get("kind") and has_schema(str(data["apiVersion"]), str(data["kind"]), version):
        for problem in object_problems(data, version):
            yield _schema_finding(doc, (), problem, str(data["kind"]))
        return
    for pod in pods(doc):
        base = pod.spec_path[:-1]
        template: dict[str, Any] = {}
        node: object = data
        for key in base:
            node = node.get(key) if isinstance(node, dict) else (node[key] if isinstance(node, list) else None)
        template = as_dict(node)
        known_crd = (str(data.get("apiVersion")), str(data.get("kind"))) in CRDS_WITH_POD_TEMPLATE_SCHEMA
        for problem in pod_template_problems(template, version):
            finding = _schema_finding(doc, base, problem, "pod template")
            if problem.unknown_field and not known_crd:
                finding = doc.at_path(base + problem.path,
                                      f"unknown field '{problem.unknown_field}' in {_dotted((base + problem.path)[:-1])} "
                                      f"(pod template of a {data.get('kind')}): depends on its CRD: refused by "
                                      "kubectl's strict field validation if the CRD gives the template Kubernetes' "
                                      "schema, else dropped when the pods are created; either way it never applies",
                                      severity=Severity.INFO, hint=_unknown_field_hint(problem))
            yield finding


def _pod_policy_findings(doc: Document, data: dict[str, Any]) -> Iterator[Diagnostic]:
    """restartPolicy and dnsPolicy off the enums Kubernetes declares and the packaged schema omits. A workload
    whose restartPolicy K8S040 judges for its kind (a Job's Never/OnFailure, apps/v1's Always) is left to it."""
    workload = (data.get("apiVersion") == "batch/v1" and data.get("kind") in ("Job", "CronJob")) or \
        (data.get("apiVersion") == "apps/v1" and data.get("kind") in APPS_WORKLOADS)
    for pod in pods(doc):
        for path, message in pod_policy_problems(pod.spec):
            if workload and path == ("restartPolicy",):
                continue
            full = pod.spec_path + path
            yield doc.at_path(full, f"{_dotted(full)}: {message}; {_refused_by(doc)}",
                              hint="one of the values the message lists")


def _schema_finding(doc: Document, base: tuple[Any, ...], problem: SchemaProblem, what: str) -> Diagnostic:
    path = base + problem.path
    if problem.unknown_field:
        message = (f"unknown field '{problem.unknown_field}' in {_dotted(path[:-1])} ({what}); the API server "
                   "refuses it under kubectl's strict field validation, or drops it with --validate=false")
        hint = _unknown_field_hint(problem)
    else:
        message = f"{_dotted(path)}: {problem.message} ({what}); the API server refuses it"
        hint = "see `kubectl explain` for the field's type"
    return doc.at_path(path, message, hint=hint)


def _dotted(path: tuple[Any, ...]) -> str:
    text = "".join(f"[{p}]" if isinstance(p, int) or any(c in str(p) for c in "./ ") else f".{p}"
                   for p in path).lstrip(".")
    return text or "the object"


def _unknown_field_hint(problem: SchemaProblem) -> str:
    field = problem.unknown_field or ""
    if field in OBJECT_META_FIELDS and "metadata" in problem.allowed:
        return f"move '{field}' under metadata"
    close = difflib.get_close_matches(field, problem.allowed, n=1, cutoff=0.7)
    if close:
        return f"did you mean '{close[0]}'?"
    return "check the spelling and the level (`kubectl explain <kind>.<path>`)"


@rule(code="K8S041", name="crd-schema-invalid", severity=Severity.ERROR, admission=True,
      kinds=(Kind.K8S_MANIFEST, Kind.VOLCANO_JOB, Kind.NIC_CLUSTER_POLICY, Kind.HOST_DEVICE_NETWORK))
def crd_schema_invalid(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """A custom resource that its own CRD's schema refuses (MPIJob, NicClusterPolicy, HostDeviceNetwork, IPPool,
    CIDRPool, Volcano Job, Queue, PodGroup, HyperNode, JobSet).

    ## What it catches
    The fields outside the pod templates (K8S030 judges those) of an mpi-operator ``kubeflow.org/v2beta1``
    MPIJob (CRDs at v0.4.0 and v0.8.0), a network-operator ``mellanox.com/v1alpha1`` NicClusterPolicy or
    HostDeviceNetwork (CRDs at v23.4.0 and v26.4.1), an nv-ipam ``nv-ipam.nvidia.com/v1alpha1`` IPPool
    and CIDRPool (nvidia-k8s-ipam v0.2.0, which network-operator v24.7.0 pins, and the copies network-operator
    v26.4.1 deploys), a Volcano ``batch.volcano.sh/v1alpha1`` Job (CRD at release-1.7 and v1.15.1),
    ``scheduling.volcano.sh/v1beta1`` Queue and PodGroup (v1.7.0 and v1.15.1) and
    ``topology.volcano.sh/v1alpha1`` HyperNode (v1.15.1), and a
    ``jobset.x-k8s.io/v1alpha2`` JobSet (kubernetes-sigs/jobset v0.5.2 and v0.12.0; the Job spec inside each
    replicated job too), against the CRD's structural schema (``data/crd_schemas.json``, generated by
    ``tools/gen_crd_schemas.py`` from the upstream CRDs at those tags): unknown fields, wrong types,
    values off an enum, missing required fields. The CRD version installed is cluster state, so a
    finding is an error only when every version hpcconf holds refuses the object for the same problem. Each
    refusing it for its own (``dependsOn`` that v0.5.2 lacks, with a status off v0.12.0's enum) is info: a release
    between those held can accept both. When some versions refuse
    it and others accept it (``nvIpam``, a NicClusterPolicy field network-operator v23.4.0's CRD lacks), it is
    info naming the versions that refuse and those that accept: which CRD is installed is cluster state.
    A release that ``--chart`` or the spec names (``--chart network-operator=26.4.1``, the spec's
    ``versions.network_operator``) and whose CRD hpcconf holds is the CRD installed: it alone is judged.

    ## Why is this bad?
    The API server refuses a wrong type, enum or missing required field. An unknown field is refused by
    ``kubectl apply``'s default ``--validate=strict`` (server-side field validation, KEP-2885, GA in
    Kubernetes 1.27: "strict decoding error: unknown field \"spec.cleanPodPolicy\""); with
    ``--validate=false`` or a client that does not ask for strict validation it is pruned silently and
    the setting has no effect (mpi-operator then keeps its default ``cleanPodPolicy: None``).

    ## Example
    ```yaml
    apiVersion: kubeflow.org/v2beta1
    kind: MPIJob
    spec:
      cleanPodPolicy: Running
    ```

    ## Fix
    Put the field where the CRD has it: ``spec.runPolicy.cleanPodPolicy``.
    """
    data = as_dict(doc.data)
    installed = _installed(ctx)
    found, sources = refused_by_every_version(data, installed)
    if not sources:
        return
    kind = str(data.get("kind"))
    tags: dict[str, list[str]] = {}
    for source in sources:
        repo, tag = source.split()[:2]
        tags.setdefault(repo, []).append(tag)
    judged = "; ".join(f"{repo} {', '.join(found_tags)}" for repo, found_tags in tags.items())
    schema = crd_sources(str(data.get("apiVersion")), kind, installed)[sources[-1]]
    for problem in found:
        where = _dotted(problem.path[:-1] if problem.unknown_field else problem.path)
        if problem.unknown_field:
            message = (f"unknown field '{problem.unknown_field}' in {where} ({kind}, CRD {judged}); refused by "
                       "kubectl apply's strict field validation (its default since 1.27), else dropped silently: "
                       "the setting has no effect")
            hint = _crd_field_hint(problem, schema)
        else:
            message = f"{where}: {problem.message} ({kind}, CRD {judged}); the API server refuses it"
            hint = f"see `kubectl explain {kind.lower()}.{where}` for the field"
        yield doc.at_path(problem.path, message, hint=hint)
    if not found:
        yield from _refused_by_each_version_differently(doc, data, kind, installed)


def _installed(ctx: LintContext) -> dict[str, str]:
    """The projects whose release the spec (or ``--chart``) names: their CRD is the one installed."""
    return {name: version for name, version in ctx.charts.items() if version}


def _refused_by_each_version_differently(doc: Document, data: dict[str, Any], kind: str,
                                         installed: dict[str, str]) -> Iterator[Diagnostic]:
    """The CRD versions held disagree. When every one refuses the object, each for a reason of its own (an enum one
    version has, a field another lacks), whichever is installed refuses it: each problem is an error naming the
    versions it holds for. When some accept it, which CRD is installed is cluster state: each problem is info naming
    the versions that refuse and those that accept."""
    # A required field a mutating webhook fills before validation (JobSet's names its failurePolicy rules) does
    # not count here: jobset v0.12.0's own examples leave it out.
    by_version = {source: [p for p in found if not p.check.startswith("required:")]
                  for source, found in problems_by_version(data, installed).items()}
    if len(by_version) < 2 or not any(by_version.values()):
        return
    everywhere = all(by_version.values())
    accepting = tuple(s for s, found in by_version.items() if not found)
    seen: set[tuple[tuple[Any, ...], str]] = set()
    for source, found in reversed(list(by_version.items())):  # the newest CRD's problems first
        for problem in found:
            if (problem.path, problem.check) in seen:
                continue
            seen.add((problem.path, problem.check))
            holding = tuple(s for s, other in by_version.items()
                            if any(q.path == problem.path and q.check == problem.check for q in other))
            others = tuple(s for s in by_version if s not in holding)
            where = _dotted(problem.path[:-1] if problem.unknown_field else problem.path)
            what = f"unknown field '{problem.unknown_field}' in {where}" if problem.unknown_field else \
                f"{where}: {problem.message}"
            refused = "refused by kubectl apply's strict field validation (its default since 1.27)" \
                if problem.unknown_field else "the API server refuses it"
            hint = _crd_field_hint(problem, crd_sources(str(data.get("apiVersion")), kind, installed)[source]) \
                if problem.unknown_field else f"see `kubectl explain {kind.lower()}.{where}` for the field"
            if everywhere:
                # each held CRD refuses for its own reason, but hpcconf holds only some releases: one between them
                # can have the field one lacks and not yet the change the other refuses (a NicClusterPolicy for
                # network-operator 24.10 passes v24.10.0's CRD while v23.4.0 and v26.4.1 each refuse one field)
                message = (f"{what} ({kind}, CRD {_tags(holding)}); {refused} where that CRD is installed; "
                           f"{_tags(others)} refuses the object for another reason, and releases between those "
                           "hpcconf holds may accept it: which CRD version is installed is cluster state")
                yield doc.at_path(problem.path, message, severity=Severity.INFO,
                                  hint=f"{hint}; or name the release (`--chart`, or the spec's versions)")
            else:
                message = (f"{what} ({kind}, CRD {_tags(holding)}); {refused} where that CRD is installed; "
                           f"{_tags(accepting)} accepts the object: which CRD version is installed is cluster state")
                yield doc.at_path(problem.path, message, severity=Severity.INFO,
                                  hint=f"check which CRD version the cluster has (`kubectl explain {kind.lower()}."
                                       f"{where}` shows its fields)")


@rule(code="K8S042", name="crd-validation-rule-failed", severity=Severity.ERROR, admission=True, since="0.3.0",
      kinds=(Kind.K8S_MANIFEST, Kind.VOLCANO_JOB, Kind.NIC_CLUSTER_POLICY, Kind.HOST_DEVICE_NETWORK))
def crd_validation_rule_failed(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """A custom resource that a CEL rule of its own CRD (``x-kubernetes-validations``) refuses on create.

    ## What it catches
    The CRDs hpcconf holds (``data/crd_schemas.json``, as for K8S041) carry CEL rules; they are evaluated
    with cel-python as the API server does on a create (k8s.io/apiextensions-apiserver
    ``pkg/apiserver/schema/cel/validation.go``): after the CRD's defaults, ``self`` bound to each node the
    rule sits on, transition rules (``oldSelf``) skipped. The rules that can fail on a create today:
    JobSet (kubernetes-sigs/jobset v0.12.0) ``spec``: ``StartupPolicy and DependsOn APIs are mutually
    exclusive``; ``volumeClaimPolicies[]``: ``namespace cannot be set for VolumeClaimPolicies templates``;
    nv-ipam IPPool and CIDRPool (network-operator v26.4.1) ``perNodeExclusions[]``: ``endIndex must be greater
    than or equal to startIndex``; Volcano HyperNode (v1.15.1) ``members[].selector``: ``Either ExactMatch or
    RegexMatch or LabelMatch must be specified``, ``Only one of ExactMatch, RegexMatch, or LabelMatch can be
    specified``. An error when every CRD version held refuses the object (this rule, or a
    schema problem of its own); info, naming the versions, when only some have the rule and the others
    accept the object: the CRD installed is cluster state.

    Approximate: cel-python lacks Kubernetes' CEL libraries (``lowerAscii``, ``quantity``, ``isURL``,
    ``format.*``, optional types): a rule using them, one it cannot compile, one that fails to evaluate
    (the API server refuses those too: "no such key ... evaluating rule") and one over a placeholder are
    not findings; ``HPCCONF_DEBUG=1`` prints a debug line for each.

    ## Why is this bad?
    The API server refuses the object: ``The JobSet "train" is invalid: spec: Invalid value: StartupPolicy
    and DependsOn APIs are mutually exclusive`` (the message is the rule's ``messageExpression`` or
    ``message``; servers before the ``OmitValueType`` change print ``Invalid value: "object"`` first).

    ## Example
    ```yaml
    apiVersion: jobset.x-k8s.io/v1alpha2
    kind: JobSet
    spec:
      startupPolicy: {startupPolicyOrder: InOrder}
      replicatedJobs:
        - name: worker
          dependsOn: [{name: launcher, status: Ready}]
    ```

    ## Fix
    Use one ordering mechanism: drop ``startupPolicy`` (``dependsOn`` orders the jobs), or drop ``dependsOn``.
    """
    data = as_dict(doc.data)
    judged, skipped = cel_rules_failed(data, _installed(ctx))
    if skipped and os.environ.get("HPCCONF_DEBUG"):
        for source, not_run in skipped:
            print(f"hpcconf: debug: {doc.path}: {_dotted(not_run.path)}: CEL rule `{not_run.rule}` of {source.split()[0]} "
                  f"{source.split()[1]} not evaluated: {not_run.why}", file=sys.stderr)
    kind = str(data.get("kind"))
    for judgement in judged:
        failure = judgement.failure
        text = failure.api_server_text(_dotted(failure.path))
        holding = _tags(judgement.failing)
        if judgement.everywhere:
            message = f"{text} ({kind}, CRD {holding}: rule `{failure.rule}`); the API server refuses it"
            yield doc.at_path(failure.path, message, hint="change the object so that the CRD's rule holds")
        else:
            message = (f"{text} ({kind}, CRD {holding}: rule `{failure.rule}`); {_tags(judgement.others)} accepts "
                       "it: refused where the CRD installed has this rule (cluster state)")
            yield doc.at_path(failure.path, message, severity=Severity.INFO,
                              hint="change the object so that the rule holds, or check which CRD version is installed")


def _tags(sources: tuple[Any, ...]) -> str:
    """``kubernetes-sigs/jobset v0.5.2, v0.12.0; Mellanox/network-operator v26.4.1``."""
    tags: dict[str, list[str]] = {}
    for source in sources:
        repo, tag = source.split()[:2]
        tags.setdefault(repo, []).append(tag)
    return "; ".join(f"{repo} {', '.join(found)}" for repo, found in tags.items())


def _crd_field_hint(problem: CrdProblem, schema: dict[str, Any]) -> str:
    """Where the CRD does have a field of that name (``spec.runPolicy.cleanPodPolicy``), else a close spelling."""
    def places(node: dict[str, Any], path: tuple[Any, ...]) -> Iterator[tuple[Any, ...]]:
        for key, child in sorted((node.get("properties") or {}).items()):
            if key == problem.unknown_field:
                yield path + (key,)
            yield from places(child, path + (key,))
        if isinstance(node.get("items"), dict):
            yield from places(node["items"], path + ("[]",))
    elsewhere = [p for p in places(schema, ()) if len(p) <= len(problem.path) + 2]
    if elsewhere:
        return "the CRD has it at " + " or ".join(".".join(p) for p in elsewhere[:3])
    close = difflib.get_close_matches(problem.unknown_field, problem.allowed, n=1, cutoff=0.7)
    return f"did you mean '{close[0]}'?" if close else "check the spelling and the level (`kubectl explain`)"


@rule(code="K8S039", name="api-version-removed", severity=Severity.ERROR, admission=True, kinds=(Kind.K8S_MANIFEST,))
def api_version_removed(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """A built-in kind under an ``apiVersion`` Kubernetes does not (or no longer) serve.

    ## What it catches
    ``apiVersion``/``kind`` pairs of Kubernetes' Deprecated API Migration Guide removed in or before
    the cluster's version (the newest when unknown): ``apps/v1beta1`` StatefulSet (removed in 1.16),
    ``batch/v1beta1`` CronJob and ``autoscaling/v2beta1`` HorizontalPodAutoscaler (1.25), ...
    (``data/k8s_removed_apis.yaml``, from https://kubernetes.io/docs/reference/using-api/deprecation-guide/);
    and a kind under a built-in group that never served it (``apps/v1`` ConfigMap: ConfigMap is ``v1``).

    ## Why is this bad?
    The API server refuses the object: ``no matches for kind "StatefulSet" in version "apps/v1beta1"``.
    Every Kubernetes release the major clouds still support (AKS, EKS, GKE: 1.30 and later) has removed
    all of these. Examples copied from older repositories carry them.

    ## Example
    ```yaml
    apiVersion: apps/v1beta1
    kind: StatefulSet
    ```

    ## Fix
    ``apiVersion: apps/v1`` (and add what the newer version requires, e.g. ``spec.selector``).
    """
    data = as_dict(doc.data)
    api_version, kind = str(data.get("apiVersion") or ""), str(data.get("kind") or "")
    found = removed_api(api_version, kind, ctx.kubernetes())
    if found is None and api_version and kind and group_of(api_version) in BUILT_IN_GROUPS \
            and not has_schema(api_version, kind, ctx.kubernetes()):
        served = served_api_versions(kind, ctx.kubernetes())
        hint = f"apiVersion: {served[-1]}" if served else f"check the kind: {group_of(api_version) or 'core'} has none named {kind}"
        yield doc.at_path(("apiVersion",), f"{api_version} does not serve kind {kind}: the API server refuses it (no "
                                           f"matches for kind \"{kind}\" in version \"{api_version}\")"
                                           + (f"; {kind} is served by {', '.join(served)}" if served else ""), hint=hint)
        return
    if found is not None:
        yield doc.at_path(("apiVersion",), f"{found.kind} {found.api_version} was removed in Kubernetes {found.removed}: "
                                           f"the API server refuses it (no matches for kind \"{found.kind}\" in version "
                                           f"\"{found.api_version}\")", hint=f"use {found.use}")


KUSTOMIZATION_FILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")


def _kustomize_patches(directory: str) -> frozenset[str]:
    """The files a kustomization in ``directory`` merges as patches (``patches[].path``,
    ``patchesStrategicMerge[]``, ``patchesJson6902[].path``), as resolved paths."""
    from ...safe_io import read_text

    found: set[str] = set()
    for name in KUSTOMIZATION_FILES:
        file = Path(directory) / name
        try:
            if not file.exists():
                continue
            # the one safe reader: regular files inside the tree only, size-limited (a link to /proc names no patch)
            data = YAML(typ="safe").load(read_text(file, "linted", tree=directory))
        except Exception:  # noqa: BLE001  (an unreadable kustomization names no patch; lint reports it itself)
            continue
        if not isinstance(data, dict):
            continue
        entries: list[Any] = []
        for key in ("patches", "patchesJson6902", "patchesStrategicMerge"):
            value = data.get(key)
            entries += value if isinstance(value, list) else []
        for entry in entries:
            path = entry.get("path") if isinstance(entry, dict) else entry
            if isinstance(path, str) and "\n" not in path:  # an inline patch (a YAML string) is not a file
                found.add(str((Path(directory) / path).resolve()))
    return frozenset(found)


PATCH_NAME = re.compile(r"(?:^|[-_.])patch(?:es)?(?:$|[-_.])", re.IGNORECASE)  # job-patch, manager_config_patch


def is_kustomize_patch(source_path: str) -> bool:
    """Whether a kustomization beside the file or in a directory above it merges it as a patch: a partial object
    by design, which the API server never sees alone (kustomize's ``patches`` field,
    https://kubectl.docs.kubernetes.io/references/kustomize/kustomization/patches/). Kustomize loads only files
    at or below the kustomization's own directory (its default load restrictor, ``LoadRestrictionsRootOnly``),
    so only those directories can list it; the walk stops at the repository's root (a ``.git`` entry)."""
    if not source_path:
        return False
    file = Path(source_path).resolve()
    for directory in file.parents:
        if str(file) in _kustomize_patches(str(directory)):
            return True
        if (directory / ".git").exists():
            return False
    return False


@rule(code="K8S040", name="workload-spec-invalid", severity=Severity.ERROR, admission=True, kinds=(Kind.K8S_MANIFEST,))
def workload_spec_invalid(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """A Job, CronJob, Deployment, DaemonSet, StatefulSet or ReplicaSet that the API server refuses as a whole.

    ## What it catches
    A batch/v1 Job or CronJob whose pod template has no ``restartPolicy`` or one other than ``Never`` /
    ``OnFailure`` (the pod default ``Always`` is not allowed there); an apps/v1 workload whose pod template
    sets a ``restartPolicy`` other than ``Always``, has no ``spec.selector``, or whose selector does not match
    the template's labels (``ValidateJobSpec`` in ``pkg/apis/batch/validation``;
    ``ValidatePodTemplateSpecForReplicaSet``, ``ValidateDaemonSetSpec`` and the StatefulSet equivalent in
    ``pkg/apis/apps/validation``, kubernetes 1.34). A file that a kustomization beside it or in a directory above
    it (up to the repository's root) merges as a patch (``patches``, ``patchesStrategicMerge``,
    ``patchesJson6902``) is partial by design: a missing field is not reported there; in a file named as a patch
    (``job-patch.yaml``) that no such kustomization lists, it is info.

    ## Why is this bad?
    The API server refuses the object: ``spec.template.spec.restartPolicy: Required value: valid values:
    "OnFailure", "Never"``, or "selector does not match template labels" on ``spec.template.metadata.labels``.
    A test pod copied into a Job keeps no restart policy and never gets created.

    ## Example
    ```yaml
    apiVersion: batch/v1
    kind: Job
    spec:
      template:
        spec:
          containers: [{name: nccl, image: nccl-tests:2.16}]
    ```

    ## Fix
    ``restartPolicy: Never`` in the Job's pod template; for apps/v1 kinds, a ``selector.matchLabels`` the
    template's ``metadata.labels`` carry.
    """
    data = as_dict(doc.data)
    patch: bool | None = None  # read the kustomization beside the file only when a field is missing
    for path, message in workload_problems(data):
        if message.startswith("Required value"):
            patch = is_kustomize_patch(doc.source_path) if patch is None else patch
            if patch:
                continue  # a patch is merged into the resource it targets, which holds the field
            if PATCH_NAME.search(Path(doc.source_path or doc.path).stem):
                # Named as a patch, but no kustomization at or above it says so (copied alone, or listed from elsewhere)
                yield doc.at_path(path, f"{_dotted(path)}: {message}; the API server refuses the {data.get('kind')} "
                                        "if it is applied alone, and nothing if a kustomization merges this file "
                                        "as a patch (its name says it is one; no kustomization at or above it lists it)",
                                  severity=Severity.INFO,
                                  hint="list it under a kustomization's patches:, or add the field if it is applied "
                                       "alone")
                continue
        yield doc.at_path(path, f"{_dotted(path)}: {message}; the API server refuses the {data.get('kind')}",
                          hint="a Job's pods: restartPolicy Never or OnFailure; apps/v1: a selector the template's "
                               "labels match")
