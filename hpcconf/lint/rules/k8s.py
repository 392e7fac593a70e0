"""Kubernetes pod rules (K8S) and the pod/mpirun helpers the Volcano, Helm and cross-file rules share.

Pods are found in Volcano jobs (``spec.tasks[].template``) and in ordinary workloads (Pod,
Deployment, StatefulSet, DaemonSet, Job, CronJob, PodTemplate). Rules get each container with
its YAML path, so a finding points at the exact key.
"""

from __future__ import annotations

import functools
import json
import re
import shlex
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Optional

from ...artifacts import Kind
from ...diagnostics import Diagnostic, Severity
from ..context import LintContext
from ..document import Document
from ..registry import rule

POD_KINDS = (Kind.VOLCANO_JOB, Kind.K8S_MANIFEST)
NETWORKS_ANNOTATION = "k8s.v1.cni.cncf.io/networks"
GPU_RESOURCE = "nvidia.com/gpu"
# Resources Kubernetes itself accounts (may be overcommitted); everything else with a domain is extended.
NATIVE_RESOURCES = {"cpu", "memory", "ephemeral-storage", "storage"}
_TEMPLATE_PATHS = {
    "Pod": ("spec",), "PodTemplate": ("template", "spec"),
    "Deployment": ("spec", "template", "spec"), "StatefulSet": ("spec", "template", "spec"),
    "DaemonSet": ("spec", "template", "spec"), "ReplicaSet": ("spec", "template", "spec"),
    "Job": ("spec", "template", "spec"), "CronJob": ("spec", "jobTemplate", "spec", "template", "spec"),
}


# --------------------------------------------------------------------------- pods and containers

@dataclass
class PodRef:
    spec_path: tuple  # path of the pod spec
    spec: dict
    metadata_path: tuple
    metadata: dict
    task: Optional[dict] = None  # the Volcano task, when the pod is one
    task_index: Optional[int] = None

    @property
    def annotations(self) -> dict:
        value = self.metadata.get("annotations") if isinstance(self.metadata, dict) else None
        return value if isinstance(value, dict) else {}

    def containers(self, init: bool = False) -> Iterator[tuple[tuple, dict]]:
        keys = ("initContainers", "containers") if init else ("containers",)
        for key in keys:
            for index, container in enumerate(self.spec.get(key) or []):
                if isinstance(container, dict):
                    yield self.spec_path + (key, index), container


def _dict(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def pods(doc: Document) -> Iterator[PodRef]:
    """Every pod template in a Volcano job or Kubernetes workload document."""
    data = doc.data
    if not isinstance(data, dict):
        return
    if doc.kind == Kind.VOLCANO_JOB:
        for index, task in enumerate(_dict(data.get("spec")).get("tasks") or []):
            if not isinstance(task, dict):
                continue
            template = _dict(task.get("template"))
            base = ("spec", "tasks", index, "template")
            yield PodRef(base + ("spec",), _dict(template.get("spec")), base + ("metadata",),
                         _dict(template.get("metadata")), task, index)
        return
    path = _TEMPLATE_PATHS.get(str(data.get("kind", "")))
    if path is None:
        return
    node: Any = data
    for key in path:
        node = _dict(node).get(key)
    meta_path = path[:-1] + ("metadata",) if path != ("spec",) else ("metadata",)
    meta: Any = data
    for key in meta_path:
        meta = _dict(meta).get(key)
    yield PodRef(path, _dict(node), meta_path, _dict(meta))


def resources(container: dict, which: str) -> dict:
    return _dict(_dict(container.get("resources")).get(which))


def is_extended(name: str) -> bool:
    if name in NATIVE_RESOURCES or name.startswith("hugepages-"):
        return False
    domain = name.split("/", 1)[0] if "/" in name else ""
    return bool(domain) and not domain.endswith("kubernetes.io")


def quantity(value: Any) -> Optional[int]:
    """Integer count of an extended resource ('8', 8); None when not a plain integer."""
    try:
        return int(str(value).strip())
    except (TypeError, ValueError):
        return None


def rdma_resources(container: dict) -> dict[str, int]:
    """Requested (or limited) RDMA device units: nvidia.com/<not gpu> and rdma/<name>."""
    found: dict[str, int] = {}
    for which in ("limits", "requests"):
        for name, value in resources(container, which).items():
            name = str(name)
            if (name.startswith("nvidia.com/") and not name.startswith(GPU_RESOURCE)) or name.startswith("rdma/"):
                count = quantity(value)
                if count is not None:
                    found.setdefault(name, count)
    return found


def gpu_count(container: dict) -> Optional[int]:
    for which in ("limits", "requests"):
        value = resources(container, which).get(GPU_RESOURCE)
        if value is not None:
            return quantity(value)
    return None


def network_entries(annotation: Any) -> list[tuple[str, str]]:
    """``k8s.v1.cni.cncf.io/networks`` as (namespace or "", name); comma list or JSON list."""
    if annotation is None:
        return []
    text = str(annotation).strip()
    entries: list[tuple[str, str]] = []
    if text.startswith("["):
        try:
            for item in json.loads(text):
                if isinstance(item, dict) and item.get("name"):
                    entries.append((str(item.get("namespace", "")), str(item["name"])))
        except ValueError:
            return []
        return entries
    for part in text.split(","):
        part = part.strip().split("@", 1)[0]  # name@interface
        if not part:
            continue
        namespace, _, name = part.rpartition("/")
        entries.append((namespace, name))
    return entries


def command_text(container: dict) -> str:
    parts = [*(container.get("command") or []), *(container.get("args") or [])]
    return "\n".join(str(p) for p in parts if p is not None)


def has_ipc_lock(container: dict, pod_spec: dict) -> bool:
    security = _dict(container.get("securityContext"))
    if security.get("privileged") is True:
        return True
    added = _dict(security.get("capabilities")).get("add") or []
    return any(str(c).upper() in ("IPC_LOCK", "CAP_IPC_LOCK", "ALL") for c in added)


def find_line(doc: Document, start: int, needle: str) -> int:
    """First line at or after ``start`` that contains ``needle`` (``start`` itself when none does)."""
    for number in range(max(start, 1), len(doc.lines) + 1):
        if needle in doc.lines[number - 1]:
            return number
    return start


def at_text(doc: Document, path: tuple, needle: str, message: str, *, hint: str = "",
            severity: Optional[Severity] = None) -> Diagnostic:
    """A finding on the source line holding ``needle`` inside the (block) value at ``path``."""
    if doc.yaml is None:
        return doc.at_line(1, message, hint=hint, severity=severity)
    start = doc.yaml.position(path, prefer_value=True).line
    line = find_line(doc, start, needle)
    text = doc.lines[line - 1] if 0 < line <= len(doc.lines) else ""
    column = text.find(needle) + 1 if needle in text else 1
    end = column + len(needle) if needle in text else None
    return doc.at_line(line, message, hint=hint, column=column, end_column=end, severity=severity)


# --------------------------------------------------------------------------- set rules

SPEC_ARTIFACT = " -> "  # how the engine names a compiled spec's artifacts ("SPEC -> aks/job.yaml")


def deployment_of(doc: Document) -> str:
    """Which deployment a document belongs to: its spec for compiled artifacts, "" for files given directly."""
    return doc.path.split(SPEC_ARTIFACT, 1)[0] if SPEC_ARTIFACT in doc.path else ""


def per_deployment(check: Callable) -> Callable:
    """Run a set rule once per deployment, so linting two specs at once never compares one
    cluster's job with another cluster's network."""
    from ..document import DocumentSet

    @functools.wraps(check)
    def run(docs: "DocumentSet", ctx: LintContext) -> Iterator[Diagnostic]:
        groups: dict[str, list[Document]] = {}
        for doc in docs:
            groups.setdefault(deployment_of(doc), []).append(doc)
        for members in groups.values():
            yield from check(DocumentSet(members), ctx)

    return run


# --------------------------------------------------------------------------- mpirun

MPIRUN = re.compile(r"(?:^|[\s;&|(`])(mpirun|mpiexec|orterun|prterun)(?=\s|$)")
_NP = ("-np", "--np", "-n", "-c")
_NPERNODE = ("-npernode", "--npernode", "-N", "--N")
_HOSTFILE = ("-hostfile", "--hostfile", "-machinefile", "--machinefile", "--default-hostfile")
# Open MPI options that take one / two values (others are flags); the first other word is the program.
_ONE_VALUE = {"--bind-to", "-bind-to", "--rank-by", "-rank-by", "-H", "--host", "-host", "-wdir", "--wdir",
              "-wd", "--prefix", "-output-filename", "--output-filename", "--display", "-tune", "--tune",
              "-am", "--am", "-gmca-file", "--app", "-app", "--report-bindings-file", "--timeout", "-timeout",
              "--personality", "--runtime-options", "--pmixmca", "--prtemca", "-s", "--preload-files"}
_TWO_VALUES = {"-mca", "--mca", "-gmca", "--gmca", "--pmixmca", "--prtemca"}


@dataclass
class Mpirun:
    text: str  # the invocation, continuation lines joined
    np: Optional[str] = None
    npernode: Optional[str] = None
    ppr: Optional[str] = None  # N of --map-by ppr:N:node
    hostfile: Optional[str] = None
    exports: dict[str, str] = field(default_factory=dict)
    tokens: dict[str, str] = field(default_factory=dict)  # option -> the text to point at


def find_mpirun(script: str) -> Optional[Mpirun]:
    joined = re.sub(r"\\\r?\n", " ", script)
    for line in joined.splitlines():
        match = MPIRUN.search(line)
        if match:
            return _parse_mpirun(line[match.start(1):])
    return None


def _parse_mpirun(text: str) -> Mpirun:
    try:
        words = shlex.split(text, posix=True)
    except ValueError:
        words = text.split()
    call = Mpirun(text=text)
    i = 1
    while i < len(words):
        word = words[i]
        if word in ("|", "||", "&&", ";", ">", ">>"):
            break
        value = words[i + 1] if i + 1 < len(words) else None
        option, _, inline = word.partition("=") if word.startswith("--") else (word, "", "")
        if inline:
            value, step = inline, 1
        else:
            step = 2
        if option in _NP and value is not None:
            call.np, call.tokens["np"] = value, f"{word} {value}" if not inline else word
        elif option in _NPERNODE and value is not None:
            call.npernode, call.tokens["npernode"] = value, f"{word} {value}" if not inline else word
        elif option in ("--map-by", "-map-by") and value is not None:
            ppr = re.match(r"^ppr:(\d+|\$\w+|\$\{\w+\}):node", value, re.I)
            if ppr:
                call.ppr, call.tokens["ppr"] = ppr.group(1), value
        elif option in _HOSTFILE and value is not None:
            call.hostfile, call.tokens["hostfile"] = value, value
        elif option == "-x" and value is not None:
            name, _, setting = value.partition("=")
            call.exports[name] = setting
        elif option in _TWO_VALUES:
            step = 3
        elif option in _ONE_VALUE and not inline:
            step = 2
        elif not word.startswith("-"):
            break  # the program: its own options (e.g. nccl-tests' -c) are not mpirun's
        else:
            step = 1
        i += step
    return call


def mpirun_calls(doc: Document) -> Iterator[tuple[PodRef, tuple, dict, Mpirun]]:
    for pod in pods(doc):
        for path, container in pod.containers():
            call = find_mpirun(command_text(container))
            if call is not None:
                yield pod, path, container, call


# --------------------------------------------------------------------------- rules

@rule(code="K8S001", name="extended-resource-without-limit", severity=Severity.ERROR, kinds=POD_KINDS)
def extended_resource_without_limit(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """An extended resource (GPU, IB VF) is requested without an equal limit.

    ## What it catches
    A container whose ``resources.requests`` names an extended resource such as ``nvidia.com/gpu``,
    ``nvidia.com/<ib resource>`` or ``rdma/ib`` with no ``limits`` entry, or with a limit that
    differs from the request.

    ## Why is this bad?
    Extended resources cannot be overcommitted: Kubernetes' pod validation rejects the pod with
    "Limit must be set for non overcommitable resources" / "must be equal to ... limit"
    (k8s ``pkg/apis/core/validation/validation.go``). In a Volcano job the
    job is accepted but its pods are never created, so the gang never starts.

    ## Example
    ```yaml
    resources:
      requests:
        nvidia.com/gpu: 8
        nvidia.com/mlnxnics: 8
    ```

    ## Fix
    Put the same quantities under ``limits`` (a limit alone is enough: the request defaults to it),
    as the published 2023 NDm A100 v4 AKS walkthroughs (jingchaozhang.github.io, Azure HPC blog) do.
    """
    for pod in pods(doc):
        for path, container in pod.containers(init=True):
            requests, limits = resources(container, "requests"), resources(container, "limits")
            for name, value in requests.items():
                if not is_extended(str(name)):
                    continue
                if name not in limits:
                    yield doc.at_path(path + ("resources", "requests", name),
                                      f"{name} is requested without a limit; Kubernetes rejects the pod",
                                      hint=f"add `{name}: {value}` under resources.limits")
                elif str(limits[name]) != str(value):
                    yield doc.at_path(path + ("resources", "limits", name),
                                      f"{name}: limit {limits[name]} differs from request {value}; extended "
                                      "resources need request == limit",
                                      hint="use one quantity for both (or drop the request)")


@rule(code="K8S002", name="rdma-without-ipc-lock", severity=Severity.WARNING, kinds=POD_KINDS)
def rdma_without_ipc_lock(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """A container uses RDMA devices but cannot lock memory (no ``IPC_LOCK``).

    ## What it catches
    A container that requests an RDMA resource (``nvidia.com/<not gpu>``, ``rdma/*``) or sits in a
    pod with a ``k8s.v1.cni.cncf.io/networks`` annotation, whose ``securityContext`` neither adds
    ``IPC_LOCK`` nor is privileged.

    ## Why is this bad?
    RDMA registers (pins) memory. Without ``CAP_IPC_LOCK`` the container's memlock limit is the
    64 KiB default (Azure AKS InfiniBand docs), so ibverbs memory registration
    fails and NCCL/UCX fall back to TCP or abort. The published 2023 NDm A100 v4 AKS walkthroughs add ``IPC_LOCK`` to every
    container for this reason.

    ## Example
    ```yaml
    resources:
      limits: {nvidia.com/gpu: 8, nvidia.com/infiniband: 8}
    # no securityContext
    ```

    ## Fix
    ```yaml
    securityContext:
      capabilities:
        add: ["IPC_LOCK"]
    ```
    """
    for pod in pods(doc):
        networks = network_entries(pod.annotations.get(NETWORKS_ANNOTATION))
        for path, container in pod.containers():
            rdma = rdma_resources(container)
            if not rdma and not networks:
                continue
            if has_ipc_lock(container, pod.spec):
                continue
            why = f"requests {', '.join(sorted(rdma))}" if rdma else f"attaches to {NETWORKS_ANNOTATION} networks"
            yield doc.at_path(path + ("name",), f"container '{container.get('name', '?')}' {why} but has no "
                                                "IPC_LOCK capability; RDMA memory registration fails (memlock 64 KiB)",
                              hint="add securityContext.capabilities.add: [\"IPC_LOCK\"]")


@rule(code="K8S003", name="gpu-pod-without-shm", severity=Severity.WARNING, kinds=POD_KINDS)
def gpu_pod_without_shm(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """A multi-GPU container has the container runtime's tiny default ``/dev/shm``.

    ## What it catches
    A container that requests two or more ``nvidia.com/gpu`` with no memory-backed ``emptyDir``
    mounted at ``/dev/shm`` (and the pod not using ``hostIPC``).

    ## Why is this bad?
    Containers get a 64 MiB ``/dev/shm``. NCCL's shared-memory transport and the CUDA IPC buffers
    between ranks on one node live there; NCCL fails with "Error while creating shared memory
    segment" or falls back to slower paths (NCCL troubleshooting docs: raise the shm size in
    containers). The published 2023 NDm A100 v4 AKS walkthroughs mount an 8 GiB ``medium: Memory`` emptyDir on the workers.

    ## Example
    ```yaml
    resources:
      limits: {nvidia.com/gpu: 8}
    # no /dev/shm volume
    ```

    ## Fix
    ```yaml
    volumeMounts: [{mountPath: /dev/shm, name: shm}]
    # pod spec:
    volumes: [{name: shm, emptyDir: {medium: Memory, sizeLimit: 8Gi}}]
    ```
    """
    for pod in pods(doc):
        if pod.spec.get("hostIPC") is True:
            continue
        memory_volumes = {str(v.get("name")) for v in pod.spec.get("volumes") or []
                          if isinstance(v, dict) and _dict(v.get("emptyDir")).get("medium") == "Memory"}
        for path, container in pod.containers():
            count = gpu_count(container)
            if count is None or count < 2:
                continue
            mounts = [m for m in container.get("volumeMounts") or [] if isinstance(m, dict)]
            if any(str(m.get("mountPath", "")).rstrip("/") == "/dev/shm" and str(m.get("name")) in memory_volumes
                   for m in mounts):
                continue
            yield doc.at_path(path + ("name",), f"container '{container.get('name', '?')}' uses {count} GPUs with the "
                                                "default 64 MiB /dev/shm; NCCL's shared-memory transport needs more",
                              hint="mount an emptyDir {medium: Memory, sizeLimit: 8Gi} at /dev/shm")


@rule(code="K8S004", name="hostdevicenetwork-ipam-invalid", severity=Severity.ERROR,
      kinds=(Kind.HOST_DEVICE_NETWORK,))
def hostdevicenetwork_ipam_invalid(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """A HostDeviceNetwork's ``spec.ipam`` is not a usable IPAM JSON object.

    ## What it catches
    ``spec.ipam`` that is not valid JSON, is not a JSON object, has no ``type``, or lacks what its
    type needs (whereabouts: ``range``; nv-ipam: ``poolName``/``poolNames``).

    ## Why is this bad?
    ``ipam`` is a plain string in the CRD, so the API server accepts anything. The network-operator
    splices it verbatim into the NetworkAttachmentDefinition it renders (``"ipam": <spec.ipam>``,
    Mellanox/network-operator ``pkg/state/state_hostdevice_network.go``), and the pods then fail at
    CNI ADD with a JSON or IPAM error, long after the manifest was "applied".

    ## Example
    ```yaml
    spec:
      ipam: |
        { "type": "whereabouts", "range": "192.168.0.0/16", }
    ```

    ## Fix
    Write strict JSON (no trailing commas, double quotes) with the IPAM's required keys, e.g.
    ``{"type": "whereabouts", "range": "192.168.0.0/16"}`` or ``{"type": "nv-ipam", "poolName": "pool"}``.
    """
    spec = _dict(_dict(doc.data).get("spec"))
    if "ipam" not in spec:
        return
    path = ("spec", "ipam")
    text = spec.get("ipam")
    if not isinstance(text, str):
        yield doc.at_path(path, "spec.ipam must be a JSON string, not a YAML structure",
                          hint="write it as a block string: `ipam: |` followed by the JSON")
        return
    if not text.strip():
        return  # empty: the operator (v26) writes {} (no IPAM); nothing to parse
    try:
        config = json.loads(text)
    except ValueError as exc:
        yield doc.at_path(path, f"spec.ipam is not valid JSON ({exc}); the rendered NAD breaks at CNI ADD",
                          hint="fix the JSON: double quotes, no trailing commas, no comments")
        return
    if not isinstance(config, dict) or not config.get("type"):
        yield doc.at_path(path, "spec.ipam has no \"type\"; CNI cannot choose an IPAM plugin",
                          hint="add \"type\": \"whereabouts\" or \"nv-ipam\"")
        return
    kind = config["type"]
    if kind == "whereabouts" and not (config.get("range") or config.get("ipRanges")):
        yield doc.at_path(path, "whereabouts IPAM without \"range\"", hint="add \"range\": \"<CIDR>\"")
    if kind == "nv-ipam" and not (config.get("poolName") or config.get("poolNames")):
        yield doc.at_path(path, "nv-ipam IPAM without \"poolName\"", hint="name the IPPool: \"poolName\": \"<pool>\"")
