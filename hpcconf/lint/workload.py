"""What a file says about the workload it runs: how many nodes, and whether it means to run without InfiniBand.

Shared by the rule modules (which stay independent of each other): a rule's severity often depends on
these facts, and two rules must read them alike.
"""

from __future__ import annotations

import posixpath
import re

from .document import Document
from .settings import env_settings


def multi_node(doc: Document) -> bool | None:
    """Whether the file runs one job over several nodes: True, False, or None (it does not say)."""
    nodes = re.search(r"^#SBATCH\s+(?:-N\s*|--nodes[= ]\s*)(\S+)", doc.text, re.MULTILINE)
    if nodes:
        # "2", "1-4" (a range: more than one only when its minimum is), "$NODES" (unknown)
        counts = [int(part) for part in nodes.group(1).split(":", 1)[0].split("-") if part.isdigit()]
        if not counts or len(counts) != len(nodes.group(1).split(":", 1)[0].split("-")):
            return None
        return True if counts[0] > 1 else (False if max(counts) == 1 else None)
    if doc.yaml is None or not isinstance(doc.data, dict):
        return None
    from ..artifacts import Kind
    from ..knowledge.k8s_validation import MPIJOB_UNSET_WORKER_REPLICAS
    from ..knowledge.volcano_webhook import UNSET_TASK_REPLICAS
    from ..parsers.k8s import pods, quantity

    # a Volcano task, or an MPIJob Worker, without replicas has no pod (their controllers' defaults)
    unset = UNSET_TASK_REPLICAS if doc.kind == Kind.VOLCANO_JOB else \
        MPIJOB_UNSET_WORKER_REPLICAS if doc.data.get("kind") == "MPIJob" else 1
    replicas = [quantity(pod.task.get("replicas", unset)) for pod in pods(doc)
                if pod.task is not None and str(pod.task.get("name", "")).lower() not in ("launcher", "mpimaster")]
    known = [r for r in replicas if r is not None]
    if known and sum(known) > 1:
        return True  # however many the unknown tasks add
    if not known or len(known) < len(replicas):
        return None  # a count set by a variable (`replicas: ${WORKERS}`) may be anything
    return False


_NO_IB_NAME = re.compile(r"(?:^|[^a-z])(?:no[-_]?ib|noib|tcp|socket|ethernet)(?:[^a-z]|$)", re.IGNORECASE)


def no_ib_intent(doc: Document) -> str:
    """Why the file says it runs without InfiniBand ("" when it does not): NCCL_IB_DISABLE=1, NCCL_NET=Socket,
    a name that says so (``...-noib-...``), or pods that are handed no RDMA device (no RDMA resource, no
    network attachment, not privileged, no /dev/infiniband mount) while they request GPUs."""
    settings = {s.name: s.value.strip() for s in env_settings(doc, "NCCL_") if s.name == s.name.strip()}
    if settings.get("NCCL_IB_DISABLE") == "1":
        return "NCCL_IB_DISABLE=1"
    if settings.get("NCCL_NET", "").lower() == "socket":
        return "NCCL_NET=Socket"
    if _NO_IB_NAME.search(posixpath.basename(doc.path)):
        return f"the file name {posixpath.basename(doc.path)!r}"
    if doc.yaml is None:
        return ""
    from ..parsers.k8s import NETWORKS_ANNOTATION, gpu_count, pods, rdma_resources

    pod_list = list(pods(doc))
    if not pod_list:
        return ""
    gpu_pods = 0
    for pod in pod_list:
        if pod.annotations.get(NETWORKS_ANNOTATION) or "/dev/infiniband" in str(pod.spec.get("volumes")):
            return ""
        for _, container in pod.containers():
            security = container.get("securityContext")
            privileged = isinstance(security, dict) and security.get("privileged") is True
            if rdma_resources(container) or privileged:
                return ""
            gpu_pods += bool(gpu_count(container))
    # only GPU pods say where the work runs: a launcher alone (or a fragment) says nothing about the fabric
    return "its GPU pods are given no RDMA device" if gpu_pods else ""
