"""The pod model of Kubernetes workloads and Volcano jobs, read from plain YAML data.

Pods are found in Volcano jobs (``spec.tasks[].template``), Kubeflow MPIJobs
(``spec.mpiReplicaSpecs.<role>.template``), JobSets, LeaderWorkerSets, KubeRay's RayCluster/RayJob/RayService
and in ordinary workloads (Pod,
Deployment, StatefulSet, DaemonSet, Job, CronJob, PodTemplate). Each container comes with its
YAML path, so a finding can point at the exact key. Also the network-operator's SR-IOV device
plugin resources (Helm values or a NicClusterPolicy), which cross-file checks match pods against.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Iterator, Optional, Protocol

from ..artifacts import Kind
from .mpirun import Mpirun, find_mpirun

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


class YamlSource(Protocol):
    """What the readers here need of a document: its kind and its plain YAML data."""

    @property
    def kind(self) -> str: ...

    @property
    def data(self) -> Any: ...


# --------------------------------------------------------------------------- pods and containers

@dataclass
class PodRef:
    spec_path: tuple[Any, ...]  # path of the pod spec
    spec: dict[str, Any]
    metadata_path: tuple[Any, ...]
    metadata: dict[str, Any]
    task: Optional[dict[str, Any]] = None  # the Volcano task, when the pod is one
    task_index: Optional[int] = None

    @property
    def annotations(self) -> dict[str, Any]:
        value = self.metadata.get("annotations") if isinstance(self.metadata, dict) else None
        return value if isinstance(value, dict) else {}

    def containers(self, init: bool = False) -> Iterator[tuple[tuple[Any, ...], dict[str, Any]]]:
        keys = ("initContainers", "containers") if init else ("containers",)
        for key in keys:
            for index, container in enumerate(self.spec.get(key) or []):
                if isinstance(container, dict):
                    yield self.spec_path + (key, index), container


def as_dict(value: Any) -> dict[str, Any]:
    """``value`` when it is a mapping, else an empty one (YAML may hold anything anywhere)."""
    return value if isinstance(value, dict) else {}


def pods(doc: YamlSource) -> Iterator[PodRef]:
    """Every pod template in a Volcano job or Kubernetes workload document."""
    data = doc.data
    if not isinstance(data, dict):
        return
    if doc.kind == Kind.VOLCANO_JOB:
        for index, task in enumerate(as_dict(data.get("spec")).get("tasks") or []):
            if not isinstance(task, dict):
                continue
            template = as_dict(task.get("template"))
            base = ("spec", "tasks", index, "template")
            yield PodRef(base + ("spec",), as_dict(template.get("spec")), base + ("metadata",),
                         as_dict(template.get("metadata")), task, index)
        return
    if str(data.get("kind")) in _REPLICA_SPECS:  # str: YAML may put a list or a mapping there
        yield from _replica_pods(data, _REPLICA_SPECS[str(data.get("kind"))])
        return
    if data.get("kind") == "JobSet":
        yield from _jobset_pods(data)
        return
    if str(data.get("kind")) in _TEMPLATES_OF_CRDS:
        yield from _crd_template_pods(data, _TEMPLATES_OF_CRDS[str(data.get("kind"))])
        return
    path = _TEMPLATE_PATHS.get(str(data.get("kind", "")))
    if path is None:
        return
    node: Any = data
    for key in path:
        node = as_dict(node).get(key)
    meta_path = path[:-1] + ("metadata",) if path != ("spec",) else ("metadata",)
    meta: Any = data
    for key in meta_path:
        meta = as_dict(meta).get(key)
    yield PodRef(path, as_dict(node), meta_path, as_dict(meta))


# Kubeflow jobs whose pods are ``spec.<key>.<role>.template``: MPIJob (kubeflow.org/v2beta1, also v1),
# PyTorchJob (kubeflow.org/v1 training-operator: Master/Worker).
_REPLICA_SPECS = {"MPIJob": "mpiReplicaSpecs", "PyTorchJob": "pytorchReplicaSpecs"}


def _replica_pods(data: dict[str, Any], key: str) -> Iterator[PodRef]:
    """``spec.<key>.<role>.template`` of a Kubeflow job. The replica spec stands where a Volcano task does
    (``replicas`` and the pod template)."""
    specs = as_dict(as_dict(data.get("spec")).get(key))
    for index, (role, replica) in enumerate(specs.items()):
        if not isinstance(replica, dict):
            continue
        template = as_dict(replica.get("template"))
        base = ("spec", key, role, "template")
        yield PodRef(base + ("spec",), as_dict(template.get("spec")), base + ("metadata",),
                     as_dict(template.get("metadata")), {"name": str(role), **replica}, index)


# Custom resources whose pod templates (PodTemplateSpec) sit at fixed paths; "*" is each item of a list, whose
# `name` or `groupName` names the task. LeaderWorkerSet (leaderworkerset.x-k8s.io/v1, kubernetes-sigs/lws
# config/crd/bases/leaderworkerset.x-k8s.io_leaderworkersets.yaml): spec.leaderWorkerTemplate.leaderTemplate and
# .workerTemplate. KubeRay (ray.io/v1, ray-project/kuberay ray-operator/config/crd/bases at v1.7.0): a RayCluster's
# spec.headGroupSpec.template and spec.workerGroupSpecs[].template, the same under a RayJob's spec.rayClusterSpec
# and a RayService's spec.rayClusterConfig.
_RAY_CLUSTER = (("headGroupSpec", "template"), ("workerGroupSpecs", "*", "template"))
_TEMPLATES_OF_CRDS: dict[str, tuple[tuple[str, ...], ...]] = {
    "LeaderWorkerSet": (("spec", "leaderWorkerTemplate", "leaderTemplate"),
                        ("spec", "leaderWorkerTemplate", "workerTemplate")),
    "RayCluster": tuple(("spec",) + p for p in _RAY_CLUSTER),
    "RayJob": tuple(("spec", "rayClusterSpec") + p for p in _RAY_CLUSTER),
    "RayService": tuple(("spec", "rayClusterConfig") + p for p in _RAY_CLUSTER),
}


def crd_pod_template_paths(kind: str) -> tuple[str, ...]:
    """Where a custom resource of ``kind`` holds the pod templates hpcconf validates ("" for none), dotted."""
    return tuple(".".join(path) for path in _TEMPLATES_OF_CRDS.get(kind, ()))


def _crd_template_pods(data: dict[str, Any], template_paths: tuple[tuple[str, ...], ...]) -> Iterator[PodRef]:
    index = 0
    for template_path in template_paths:
        for path, template, owner in _walk(data, template_path, ()):
            if not isinstance(template, dict):
                continue
            name = str(owner.get("groupName") or owner.get("name") or path[-2]) if owner else str(path[-1])
            task = {"name": name, "replicas": owner.get("replicas")} if owner else {"name": name}
            yield PodRef(path + ("spec",), as_dict(template.get("spec")), path + ("metadata",),
                         as_dict(template.get("metadata")), task, index)
            index += 1


def _walk(node: Any, rest: tuple[str, ...], at: tuple[Any, ...], owner: Optional[dict[str, Any]] = None
          ) -> Iterator[tuple[tuple[Any, ...], Any, Optional[dict[str, Any]]]]:
    """The nodes at a path with ``*`` for each list item, with the path taken and the innermost list item."""
    if not rest:
        yield at, node, owner
        return
    key, tail = rest[0], rest[1:]
    if key == "*":
        for number, item in enumerate(node if isinstance(node, list) else []):
            if isinstance(item, dict):
                yield from _walk(item, tail, at + (number,), item)
    elif isinstance(node, dict) and key in node:
        yield from _walk(node[key], tail, at + (key,), owner)


def _jobset_pods(data: dict[str, Any]) -> Iterator[PodRef]:
    """JobSet (jobset.x-k8s.io/v1alpha2): ``spec.replicatedJobs[].template.spec.template``; the pods of one
    replicated job number ``replicas`` x the Job's ``parallelism`` (default 1), its task's ``replicas``."""
    for index, replicated in enumerate(as_dict(data.get("spec")).get("replicatedJobs") or []):
        if not isinstance(replicated, dict):
            continue
        job_spec = as_dict(as_dict(replicated.get("template")).get("spec"))
        template = as_dict(job_spec.get("template"))
        base = ("spec", "replicatedJobs", index, "template", "spec", "template")
        replicas, parallelism = replicated.get("replicas", 1), job_spec.get("parallelism", 1)
        count = replicas * parallelism if isinstance(replicas, int) and isinstance(parallelism, int) else None
        task = {"name": str(replicated.get("name", "")), "replicas": count}
        yield PodRef(base + ("spec",), as_dict(template.get("spec")), base + ("metadata",),
                     as_dict(template.get("metadata")), task, index)


def pod_specs_anywhere(data: Any) -> list[dict[str, Any]]:
    """Every mapping with a ``containers`` list, wherever it sits: the pod specs of any workload kind,
    operators' custom ones included (HyperPodPyTorchJob, RayJob...), which :func:`pods` does not know."""
    found: list[dict[str, Any]] = []
    stack = [data]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if isinstance(node.get("containers"), list):
                found.append(node)
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return found


def resources(container: dict[str, Any], which: str) -> dict[str, Any]:
    return as_dict(as_dict(container.get("resources")).get(which))


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


# nvidia.com/ resources that are GPUs or slices of them, not network devices: MIG instances (k8s-device-plugin's
# mixed strategy, nvidia.com/mig-1g.5gb), time-sliced/shared GPUs (nvidia.com/gpu.shared), vGPU, and HAMi's
# vGPU accounting (nvidia.com/gpucores, nvidia.com/gpumem, nvidia.com/gpumem-percentage).
_GPU_LIKE = re.compile(r"^nvidia\.com/(?:gpu|mig-|vgpu|gpucores|gpumem)")


def rdma_resources(container: dict[str, Any]) -> dict[str, int]:
    """Requested (or limited) RDMA device units: nvidia.com/<not a GPU or GPU slice> and rdma/<name>."""
    found: dict[str, int] = {}
    for which in ("limits", "requests"):
        for name, value in resources(container, which).items():
            name = str(name)
            if (name.startswith("nvidia.com/") and not _GPU_LIKE.match(name)) or name.startswith("rdma/"):
                count = quantity(value)
                if count is not None:
                    found.setdefault(name, count)
    return found


def gpu_count(container: dict[str, Any]) -> Optional[int]:
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


_SHELLS = {"sh", "bash", "dash", "zsh", "ksh", "ash"}


def command_text(container: dict[str, Any]) -> str:
    """The container's command line: a shell's script items one per line, an exec-form argv as one line.

    An exec-form list (``command: ["mpirun", "-np", "16", ...]``) is one program's argv, so its items
    are words of one line (quoted where needed); a shell's ``-c`` script keeps its own lines.
    """
    parts = [str(p) for p in [*(container.get("command") or []), *(container.get("args") or [])] if p is not None]
    if parts and parts[0].rsplit("/", 1)[-1] not in _SHELLS and not any("\n" in p for p in parts):
        return " ".join(_quoted(p) for p in parts)
    return "\n".join(parts)


def _quoted(word: str) -> str:
    if word and re.fullmatch(r"[\w@%+=:,./$-]+", word):
        return word
    return "'" + word.replace("'", "'\"'\"'") + "'"


def has_ipc_lock(container: dict[str, Any], pod_spec: dict[str, Any]) -> bool:
    security = as_dict(container.get("securityContext"))
    if security.get("privileged") is True:
        return True
    added = as_dict(security.get("capabilities")).get("add") or []
    return any(str(c).upper() in ("IPC_LOCK", "CAP_IPC_LOCK", "ALL") for c in added)


def mpirun_calls(doc: YamlSource) -> Iterator[tuple[PodRef, tuple[Any, ...], dict[str, Any], Mpirun]]:
    for pod in pods(doc):
        for path, container in pod.containers():
            call = find_mpirun(command_text(container))
            if call is not None:
                yield pod, path, container, call


def get(data: Any, dotted: str, default: Any = None) -> Any:
    """``data["a"]["b"]`` for ``"a.b"``; ``default`` when a step is missing or not a mapping."""
    node = data
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return default
        node = node[part]
    return node


def sriov_resources(doc: YamlSource) -> list[tuple[tuple[Any, ...], str, str, dict[str, Any]]]:
    """(path, prefix, name, selectors) of sriov device-plugin resources in values or a NicClusterPolicy."""
    found: list[tuple[tuple[Any, ...], str, str, dict[str, Any]]] = []
    if doc.kind == Kind.HELM_NETWORK_OPERATOR:
        for index, item in enumerate(get(doc.data, "sriovDevicePlugin.resources") or []):
            if isinstance(item, dict) and item.get("name"):
                found.append((("sriovDevicePlugin", "resources", index), "nvidia.com", str(item["name"]), item))
    elif doc.kind == Kind.NIC_CLUSTER_POLICY:
        config = get(doc.data, "spec.sriovDevicePlugin.config")
        try:
            parsed = json.loads(config) if isinstance(config, str) else {}
        except ValueError:
            parsed = {}
        for item in as_dict(parsed).get("resourceList") or []:
            if isinstance(item, dict) and item.get("resourceName"):
                found.append((("spec", "sriovDevicePlugin", "config"), str(item.get("resourcePrefix", "nvidia.com")),
                              str(item["resourceName"]), as_dict(item.get("selectors"))))
    return found


def rdma_shared_resources(doc: YamlSource) -> list[tuple[tuple[Any, ...], str, str]]:
    """(path, prefix, name) of the k8s-rdma-shared-dev-plugin's resources in network-operator values
    (``rdmaSharedDevicePlugin.resources[].name``) or a NicClusterPolicy (``configList[].resourceName``).
    The plugin registers them as ``rdma/<name>`` unless an entry sets ``resourcePrefix``
    (Mellanox/k8s-rdma-shared-dev-plugin README, "resourcePrefix ... default rdma")."""
    found: list[tuple[tuple[Any, ...], str, str]] = []
    if doc.kind == Kind.HELM_NETWORK_OPERATOR:
        for index, item in enumerate(get(doc.data, "rdmaSharedDevicePlugin.resources") or []):
            if isinstance(item, dict) and item.get("name"):
                found.append((("rdmaSharedDevicePlugin", "resources", index), str(item.get("resourcePrefix") or "rdma"),
                              str(item["name"])))
    elif doc.kind == Kind.NIC_CLUSTER_POLICY:
        config = get(doc.data, "spec.rdmaSharedDevicePlugin.config")
        try:
            parsed = json.loads(config) if isinstance(config, str) else {}
        except ValueError:
            parsed = {}
        for item in as_dict(parsed).get("configList") or []:
            if isinstance(item, dict) and item.get("resourceName"):
                found.append((("spec", "rdmaSharedDevicePlugin", "config"), str(item.get("resourcePrefix") or "rdma"),
                              str(item["resourceName"])))
    return found


# --------------------------------------------------------------------------- volumes and env values

@dataclass(frozen=True)
class Mount:
    mount_path: str
    source: str  # the volume's type key: hostPath, configMap, persistentVolumeClaim, emptyDir...; "" unknown


def _volume_sources(pod: PodRef) -> dict[str, str]:
    sources = {}
    for volume in pod.spec.get("volumes") or []:
        if isinstance(volume, dict) and volume.get("name"):
            sources[str(volume["name"])] = next((str(k) for k in volume if k != "name"), "")
    return sources


def volume_mounts(doc: YamlSource) -> list[Mount]:
    """Every ``volumeMounts[].mountPath`` of every container (init containers too) in the document."""
    found = []
    for pod in pods(doc):
        sources = _volume_sources(pod)
        for _, container in pod.containers(init=True):
            for mount in container.get("volumeMounts") or []:
                if isinstance(mount, dict) and mount.get("mountPath"):
                    found.append(Mount(str(mount["mountPath"]).rstrip("/") or "/",
                                       sources.get(str(mount.get("name", "")), "")))
    return found


def mount_holding(path: str, mounts: list[Mount]) -> Mount | None:
    """The mount under which ``path`` lies (the deepest), or None: the file then comes from the image."""
    holding = [m for m in mounts if path == m.mount_path or path.startswith(m.mount_path.rstrip("/") + "/")]
    return max(holding, key=lambda m: len(m.mount_path), default=None)


# `$(VAR)` is Kubernetes' own expansion (and `$$` its escape); `$VAR` and `${VAR}` are shell syntax.
_SHELL_REFERENCE = re.compile(r"(?<!\$)\$(?:\{(?P<braced>[A-Za-z_][A-Za-z0-9_]*)[^}]*\}|(?P<bare>[A-Za-z_][A-Za-z0-9_]*))")


def shell_references(value: str) -> list[str]:
    """Names referenced as ``$NAME`` or ``${NAME}`` in ``value`` (``$$`` escapes and ``$(NAME)`` excluded)."""
    text = value.replace("$$", "")
    return [m.group("braced") or m.group("bare") for m in _SHELL_REFERENCE.finditer(text)]


def env_values(pod: PodRef) -> Iterator[tuple[tuple[Any, ...], str, str]]:
    """(YAML path of the value, name, value) of every literal ``env[].value`` of the pod's containers."""
    for path, container in pod.containers(init=True):
        for index, item in enumerate(container.get("env") or []):
            if isinstance(item, dict) and "name" in item and isinstance(item.get("value"), str):
                yield path + ("env", index, "value"), str(item["name"]), item["value"]


# --------------------------------------------------------------------------- network CRs (NADs)

# Kinds that render a NetworkAttachmentDefinition, by the operator that renders it. The Mellanox
# network-operator's are cluster-scoped and put the NAD in spec.networkNamespace ("default" when unset,
# Mellanox/network-operator api/v1alpha1); the sriov-network-operator's are namespaced and default the
# NAD to their own namespace (k8snetworkplumbingwg/sriov-network-operator api/v1).
NAD_KINDS = {"HostDeviceNetwork": "mellanox", "MacvlanNetwork": "mellanox", "IPoIBNetwork": "mellanox",
             "SriovNetwork": "sriov", "SriovIBNetwork": "sriov", "OVSNetwork": "sriov"}


@dataclass(frozen=True)
class NetworkCr:
    kind: str
    name: str
    nad_namespace: str
    resource_name: str  # "" when the network carries no device-plugin resource (macvlan, ipoib)
    ipam: dict[str, Any]  # spec.ipam parsed from its JSON string; {} when absent or not JSON


def network_cr(data: Any) -> NetworkCr | None:
    """The NAD-rendering network a document defines (HostDeviceNetwork, MacvlanNetwork, SriovIBNetwork...)."""
    if not isinstance(data, dict) or str(data.get("kind", "")) not in NAD_KINDS:
        return None
    kind = str(data["kind"])
    metadata, spec = as_dict(data.get("metadata")), as_dict(data.get("spec"))
    own_namespace = str(metadata.get("namespace") or "default")
    default_ns = "default" if NAD_KINDS[kind] == "mellanox" else own_namespace
    try:
        ipam = json.loads(spec["ipam"]) if isinstance(spec.get("ipam"), str) and spec["ipam"].strip() else {}
    except ValueError:
        ipam = {}
    return NetworkCr(kind, str(metadata.get("name") or ""), str(spec.get("networkNamespace") or default_ns),
                     str(spec.get("resourceName") or ""), as_dict(ipam))


def ipam_pool_names(ipam: dict[str, Any]) -> list[str]:
    """nv-ipam pools an IPAM config asks for: ``poolName`` is one name or a comma list (IPv4,IPv6)."""
    if ipam.get("type") != "nv-ipam" or not isinstance(ipam.get("poolName"), str):
        return []
    return [name.strip() for name in ipam["poolName"].split(",") if name.strip()]


def sriov_policy_resources(data: Any) -> list[str]:
    """``spec.resourceName`` of a SriovNetworkNodePolicy (the sriov-network-operator's device plugin resource)."""
    if not isinstance(data, dict) or data.get("kind") != "SriovNetworkNodePolicy":
        return []
    name = as_dict(data.get("spec")).get("resourceName")
    return [str(name)] if name else []
