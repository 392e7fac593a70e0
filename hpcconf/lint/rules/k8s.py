"""Kubernetes pod rules (K8S): extended resources, RDMA capabilities, /dev/shm, HostDeviceNetwork IPAM.

The pod model they read (:mod:`hpcconf.parsers.k8s`) is shared with the Volcano, Helm and
cross-file rules; each container comes with its YAML path, so a finding points at the exact key.
"""

from __future__ import annotations

import json
import re
from typing import Any, Iterator

from ...artifacts import Kind
from ...diagnostics import Diagnostic, Severity
from ...knowledge import aznhc
from ...parsers.k8s import (
    NETWORKS_ANNOTATION,
    POD_KINDS,
    as_dict,
    command_text,
    env_values,
    gpu_count,
    has_ipc_lock,
    is_extended,
    network_entries,
    pods,
    rdma_resources,
    resources,
    shell_references,
)
from ...parsers.mpirun import find_mpirun
from ...rules_registry import rule
from ..context import LintContext
from ..document import Document

# --------------------------------------------------------------------------- rules

@rule(code="K8S001", name="extended-resource-without-limit", severity=Severity.ERROR, admission=True, kinds=POD_KINDS)
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

    ## Severity
    Error: the API server rejects the pod ("Limit must be set for non overcommitable resources",
    Kubernetes `pkg/apis/core/validation/validation.go`).

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
    """A container uses RDMA devices but cannot lock memory (no ``IPC_LOCK``), on a platform where that fails.

    ## What it catches
    A container that requests an RDMA resource (``nvidia.com/<not gpu>``, ``rdma/*``) or sits in a
    pod with a ``k8s.v1.cni.cncf.io/networks`` annotation, whose ``securityContext`` neither adds
    ``IPC_LOCK`` nor is privileged. The severity follows the provider profile
    (``hpcconf/data/providers.yaml``; ``--provider`` or the file's label keys, resource names and
    registries): a warning where unprivileged pods get a small memlock limit (Azure), nothing where
    the nodes give containers unlimited locked memory (CoreWeave), info where the provider is unknown.

    ## Why is this bad?
    RDMA registers (pins) memory. Without ``CAP_IPC_LOCK`` the container keeps the runtime's
    default memlock limit (64 KiB under the containerd defaults; Azure AKS InfiniBand docs), so
    ibverbs memory registration fails and NCCL/UCX fall back to TCP or abort. The published 2023 NDm
    A100 v4 AKS walkthroughs add ``IPC_LOCK`` to every container for this reason. The limit is the
    node's: CoreWeave's nodes raise it (none of the 16 ``rdma/ib`` jobs in coreweave/nccl-tests adds
    ``IPC_LOCK``, and the README's published results come from them), so the finding is a promise only
    where the profile says the limit is small.

    ## Severity
    Warning where the provider profile says unprivileged pods get a small memlock limit (ibverbs
    registration fails; Azure AKS InfiniBand guide); info where the provider is unknown; nothing where
    the nodes raise the limit (CoreWeave).

    ## Example
    ```yaml
    nodeSelector: {kubernetes.azure.com/agentpool: ndv5}
    containers:
    - resources:
        limits: {nvidia.com/gpu: 8, rdma/ib: 1}
      # no securityContext
    ```

    ## Fix
    ```yaml
    securityContext:
      capabilities:
        add: ["IPC_LOCK"]
    ```
    or, when the nodes raise the limit themselves, say so: ``--provider coreweave``.
    """
    provider = ctx.provider_for(doc.text)
    if provider is not None and provider.pod_memlock == "unlimited":
        return
    for pod in pods(doc):
        networks = network_entries(pod.annotations.get(NETWORKS_ANNOTATION))
        for path, container in pod.containers():
            rdma = rdma_resources(container)
            if not rdma and not networks:
                continue
            if has_ipc_lock(container, pod.spec):
                continue
            why = f"requests {', '.join(sorted(rdma))}" if rdma else f"attaches to {NETWORKS_ANNOTATION} networks"
            name = container.get("name", "?")
            if provider is not None and provider.pod_memlock == "limited":
                yield doc.at_path(path + ("name",), f"container '{name}' {why} but has no IPC_LOCK capability; RDMA "
                                                    f"memory registration fails on {provider.title} (memlock 64 KiB)",
                                  hint="add securityContext.capabilities.add: [\"IPC_LOCK\"]")
                continue
            context = f"on {provider.title}, " if provider is not None else ""
            yield doc.at_path(path + ("name",), f"container '{name}' {why} but has no IPC_LOCK capability: RDMA "
                                                f"memory registration works only if the node gives containers a "
                                                f"large memlock limit ({context}not known to hpcconf)",
                              hint="add IPC_LOCK, or set the provider (--provider) to decide",
                              severity=Severity.INFO)


# What a container's command shows of NCCL across its GPUs (a launcher that sets up torch.distributed or
# DeepSpeed, a framework that shards over NCCL, nccl-tests/rccl-tests). A bare mpirun, mpiexec or srun is no
# evidence: it launches anything (NVIDIA's nvbandwidth MPIJob runs CUDA copies over IMEX, no NCCL).
_COLLECTIVE_COMMAND = re.compile(r"torchrun|torch\.distributed|deepspeed|accelerate\s+launch|"
                                 r"horovodrun|_perf\b|nccl|rccl|--nproc[-_]per[-_]node|--tensor[-_]parallel[-_]size|"
                                 r"--tp[-_]size|megatron|nemo|lightning|\btrain\w*\.py", re.IGNORECASE)
_NCCL_ENV_PREFIXES = ("NCCL_", "TORCH_NCCL_", "RCCL_")
# Kinds whose pods are ranks of one distributed job: a PyTorchJob is torch.distributed by construction (the
# training-operator sets MASTER_ADDR/WORLD_SIZE; NCCL is torch's GPU backend); the others launch whatever their
# command says, so NCCL must show somewhere in the job (the launcher often holds the command, the workers sshd).
_NCCL_BY_CONSTRUCTION = {"PyTorchJob"}
_DISTRIBUTED_KINDS = {"MPIJob", "PyTorchJob", "JobSet", "LeaderWorkerSet"}


def shm_volumes(pod_spec: dict[str, Any]) -> set[str]:
    """Volumes that give /dev/shm real room: ``emptyDir: {medium: Memory}`` (a tmpfs sized by the pod's
    memory) and a ``hostPath`` of the host's own ``/dev/shm`` (the node's tmpfs, half its RAM by default)."""
    names = set()
    for volume in pod_spec.get("volumes") or []:
        if not isinstance(volume, dict):
            continue
        if as_dict(volume.get("emptyDir")).get("medium") == "Memory" \
                or str(as_dict(volume.get("hostPath")).get("path", "")).rstrip("/") == "/dev/shm":
            names.add(str(volume.get("name")))
    return names


def _shows_nccl(container: dict[str, Any]) -> bool:
    names = [str(e.get("name", "")) for e in container.get("env") or [] if isinstance(e, dict)]
    return any(n.startswith(_NCCL_ENV_PREFIXES) for n in names) or \
        _COLLECTIVE_COMMAND.search(command_text(container)) is not None


def runs_collective(doc: Document, container: dict[str, Any]) -> bool:
    """Whether the file shows this container running NCCL across its GPUs: in its own env or command, or, in a
    distributed job (MPIJob, JobSet, LeaderWorkerSet, Volcano job), in any of the job's containers."""
    if _shows_nccl(container):
        return True
    kind = str(doc.data.get("kind")) if isinstance(doc.data, dict) else ""
    if kind in _NCCL_BY_CONSTRUCTION:
        return True
    if kind in _DISTRIBUTED_KINDS or doc.kind == Kind.VOLCANO_JOB:
        return any(_shows_nccl(other) for pod in pods(doc) for _path, other in pod.containers(init=True))
    return False


@rule(code="K8S003", name="gpu-pod-without-shm", severity=Severity.WARNING, kinds=POD_KINDS)
def gpu_pod_without_shm(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """A multi-GPU container that runs a collective has the container runtime's tiny default ``/dev/shm``.

    ## What it catches
    A container that requests two or more ``nvidia.com/gpu`` with nothing memory-backed mounted at
    ``/dev/shm``: no ``emptyDir`` with ``medium: Memory``, no ``hostPath`` of the host's ``/dev/shm``,
    and the pod not using ``hostIPC``. A warning when the file shows NCCL: a PyTorchJob (torch.distributed by
    construction), ``NCCL_*`` in the container's env, or a launcher such as ``torchrun``, ``deepspeed`` or an
    nccl-tests binary in its command; in an MPIJob, JobSet, LeaderWorkerSet or Volcano job, in any container of
    the job (the launcher's ``mpirun ... all_reduce_perf`` for workers that run sshd). Info when it does not:
    a container running one process per GPU (gpu-burn) never uses ``/dev/shm``, and an ``mpirun`` of a
    program that is not NCCL (NVIDIA's nvbandwidth MPIJob: CUDA copies over IMEX) needs no NCCL segments.

    ## Why is this bad?
    Containers get a 64 MiB ``/dev/shm`` (the container runtime's default). NCCL's shared-memory
    transport and its proxy buffers between ranks on one node live there; NCCL fails with "Error
    while creating shared memory segment" or falls back to slower paths (NCCL troubleshooting docs:
    raise the shm size in containers). The severity is that promise: it holds only where NCCL runs.

    ## Severity
    Warning where the file shows a collective: NCCL's shared-memory segments do not fit the runtime's 64
    MiB /dev/shm ("Error while creating shared memory segment", NCCL troubleshooting docs); info where
    nothing shows NCCL runs.

    ## Example
    ```yaml
    command: ["torchrun", "--nproc-per-node=8", "train.py"]
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
        memory_volumes = shm_volumes(pod.spec)
        for path, container in pod.containers():
            count = gpu_count(container)
            if count is None or count < 2:
                continue
            mounts = [m for m in container.get("volumeMounts") or [] if isinstance(m, dict)]
            if any(str(m.get("mountPath", "")).rstrip("/") == "/dev/shm" and str(m.get("name")) in memory_volumes
                   for m in mounts):
                continue
            name = container.get("name", "?")
            if runs_collective(doc, container):
                yield doc.at_path(path + ("name",), f"container '{name}' uses {count} GPUs with the default 64 MiB "
                                                    "/dev/shm; NCCL's shared-memory transport needs more",
                                  hint="mount an emptyDir {medium: Memory, sizeLimit: 8Gi} at /dev/shm")
            else:
                kind = str(as_dict(doc.data).get("kind", ""))
                shown = (f"the {kind} shows no NCCL (no NCCL_* variable, nccl-tests binary or torch.distributed "
                         "launch)" if kind in _DISTRIBUTED_KINDS or doc.kind == Kind.VOLCANO_JOB
                         else "nothing in the file shows a collective across them")
                yield doc.at_path(path + ("name",), f"container '{name}' uses {count} GPUs with the default 64 MiB "
                                                    f"/dev/shm; {shown}: "
                                                    "if it runs NCCL, its shared-memory transport needs more",
                                  hint="mount an emptyDir {medium: Memory, sizeLimit: 8Gi} at /dev/shm",
                                  severity=Severity.INFO)


# Not an admission rule: the API server stores the object (ipam is a plain string in the CRD); its pods fail later.
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

    ## Severity
    Error: the network-operator splices `ipam` into the NetworkAttachmentDefinition verbatim and CNI ADD
    fails (Mellanox/network-operator `pkg/state/state_hostdevice_network.go`): the pod never starts.

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
    spec = as_dict(as_dict(doc.data).get("spec"))
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


# --------------------------------------------------------------------------- K8S005

_COMMAND_KEYS = {"command", "args"}


def _walk_scalars(node: object, path: tuple[Any, ...]) -> Iterator[tuple[tuple[Any, ...], str]]:
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _walk_scalars(value, path + (key,))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _walk_scalars(value, path + (index,))
    elif isinstance(node, str):
        yield path, node


def _rendered_before_apply(doc: Document, env_paths: set[tuple[Any, ...]]) -> bool:
    """The file is a template (envsubst, Helm): ``$VAR`` outside env values and commands, or ``{{``."""
    if "{{" in doc.text or "envsubst" in doc.text:
        return True
    for path, value in _walk_scalars(doc.data, ()):
        if path in env_paths or _COMMAND_KEYS & {p for p in path if isinstance(p, str)}:
            continue  # a shell in the container may expand its command line
        if shell_references(value):
            return True
    return False


# A value that is itself a program for a later shell (``sh -c "$CMD"``, ``eval``): several command lines,
# a control operator or keyword, or the script's own positional parameters. That shell expands its
# ``$VAR`` when it runs the value, so the literal text is what the consumer needs.
_SCRIPT_SHAPE = re.compile(
    r"\S[^\n]*\n\s*[^\s#]"                      # a second command line
    r"|&&|\|\||;\s|\s\|\s"                          # control operators
    r"|(?:^|[;&|\n]\s*)(?:while|for|if|until|case|do|done|then|fi|esac|exit|set|export)\b"
    r"|\$\{?[0-9@#?]"                                # positional and special parameters
)


def _is_script(value: str) -> bool:
    """The env value reads as a shell program, not as data (a path, a flag list)."""
    return bool(_SCRIPT_SHAPE.search(value.strip()))


@rule(code="K8S005", name="env-value-shell-expansion", severity=Severity.WARNING, kinds=POD_KINDS)
def env_value_shell_expansion(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """A container ``env`` value uses shell ``$VAR``/``${VAR}`` syntax, which Kubernetes does not expand.

    ## What it catches
    ``env: [{name: X, value: "...$VAR..."}]`` in a pod template, in a file that is not itself a
    template (no ``$VAR`` elsewhere in it, no ``{{ }}``, no mention of envsubst). A value that is itself a
    shell program (several command lines, ``&&``/``;``/``|``, ``while``/``if``/``exit``, ``$1``/``$@``) is not
    judged: its consumer runs it through a shell (``sh -c "$CMD"``, ``eval``; the JobSet in-place-restart
    agent runs ``WORKER_COMMAND`` with ``exec.Command(shell, "-c", command)``, kubernetes-sigs/jobset
    ``cmd/in-place-restart-agent/main.go``), and that shell expands its ``$VAR`` when it runs.

    ## Why is this bad?
    Kubernetes expands only ``$(VAR)`` in ``env[].value``, and only for variables defined earlier in
    the same container ("Define dependent environment variables", kubernetes.io); ``$VAR`` and
    ``${VAR}`` reach the process as literal text. ``PATH=/opt/bin:$PATH`` leaves the container with
    no usable ``PATH``; ``NCCL_TOPO_FILE=$TOPO_DIR/topo.xml`` names a file that does not exist, which
    NCCL ignores with an INFO line only. A shell in ``command`` does not re-expand a value it only passes
    on (``$LD_LIBRARY_PATH`` in ``bash -c "..."`` is the literal text).

    ## Severity
    Warning: Kubernetes expands only `$(VAR)` (kubernetes.io, "Define dependent environment variables");
    the literal text reaches the process and the setting does not say what it means.

    ## Example
    ```yaml
    env:
      - name: LD_LIBRARY_PATH
        value: /usr/local/nccl/lib:$LD_LIBRARY_PATH
    ```

    ## Fix
    Write ``$(VAR)`` for a variable defined earlier in the same ``env`` list, the literal value, or
    set the variable in the container's shell command (``export X=...$VAR``).
    """
    for pod in pods(doc):
        found = [(path, name, value, shell_references(value)) for path, name, value in env_values(pod)]
        found = [item for item in found if item[3] and not _is_script(item[2])]
        if not found:
            continue
        if _rendered_before_apply(doc, {path for path, *_ in env_values(pod)}):
            return
        for path, name, value, names in found:
            yield doc.at_path(path, f"{name}={value}: Kubernetes does not expand ${names[0]} in an env value; "
                                    "the container gets the literal text",
                              hint=f"use $({names[0]}) for a variable defined earlier in this env list, or set "
                                   f"{name} in the container's shell command", prefer_value=True)


# --------------------------------------------------------------------------- K8S008

# nccl-tests / rccl-tests binaries: a container that runs one measures what its image's NCCL (RCCL) does.
_COLLECTIVE_TESTS = re.compile(r"(?<![\w-])(?:all_reduce|all_gather|alltoall|broadcast|reduce|reduce_scatter|sendrecv|"
                               r"scatter|gather|hypercube)_perf\b|\$\{?\w+\}?_perf\b")


def floating_tag(image: str) -> str | None:
    """'latest' or 'no tag' for an image that names neither a version tag nor a digest; None otherwise."""
    name, _, digest = image.partition("@")
    if digest or not name or "$" in name or "{{" in name:
        return None
    last = name.rsplit("/", 1)[-1]
    tag = last.rsplit(":", 1)[1] if ":" in last else ""
    return "no tag" if not tag else "latest" if tag == "latest" else None


@rule(code="K8S008", name="floating-image-in-test-pod", severity=Severity.WARNING, kinds=POD_KINDS, since="0.3.0")
def floating_image_in_test_pod(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """A pod that measures or judges the cluster runs an image by ``:latest`` (or no tag).

    ## What it catches
    A container whose ``image`` has no tag or the tag ``latest`` and no digest, when the container runs
    nccl-tests/rccl-tests (``all_reduce_perf`` and the other ``*_perf`` binaries; warning) or Azure's health
    checks (``mcr.microsoft.com/aznhc/aznhc-*``, ``aznhc-entrypoint.sh``; info). In a job (Volcano tasks,
    MPIJob replicas) whose launcher's ``mpirun`` runs such a test, the containers of the other tasks run its
    ranks and are judged the same way (warning). Other containers (an init container running
    ``kubectl wait``) do not change the result and are not reported.

    ## Why is this bad?
    The NCCL a test measures is the image's: with ``latest`` every push can bring another NCCL, so busbw
    numbers stop being comparable and version-specific settings break without a change in your files
    (``NCCL_ALGO`` tokens are fatal from 2.24), as with a ``FROM ...:latest`` (DKR001). Each node pulls
    ``latest`` when its pod starts, so nodes of one pool can run different builds. Azure documents only
    ``latest`` for its health-check images (azurehpc-health-checks ``dockerfile/README.MD``), whose checks
    change between builds (PR #143 changed ``check_nccl_allreduce``): info, since only a digest pins them.

    ## Severity
    Warning for nccl-tests images: the kubelet pulls ``latest`` when each pod starts, so runs measure
    different NCCL builds and their numbers stop being comparable (a measurable loss of the test's
    purpose). Info for Azure's health-check images: Azure publishes no other tag, so no pin is on offer.

    ## Example
    ```yaml
    containers:
      - name: mpimaster
        image: myacr.azurecr.io/nccl-tests:latest
        command: ["/bin/bash", "-c", "mpirun ... /workspace/nccl-tests/build/all_reduce_perf -b 8 -e 8G"]
    ```

    ## Fix
    Push and run a versioned tag (``nccl-tests:25.10``) or pin the digest
    (``mcr.microsoft.com/aznhc/aznhc-nv@sha256:...``; ``hpcconf`` specs: ``health_checks.image``).
    """
    job_pods = list(pods(doc))
    # In a job whose launcher mpiruns the test, the other tasks' containers run its ranks (mpirun starts them over
    # ssh there), so their image decides the NCCL measured.
    launchers = {pod.task_index for pod in job_pods for _, c in pod.containers() if pod.task is not None
                 and find_mpirun(command_text(c)) and _COLLECTIVE_TESTS.search(command_text(c))}
    for pod in job_pods:
        main = {path for path, _ in pod.containers()}
        for path, container in pod.containers(init=True):
            image = str(container.get("image") or "")
            floating = floating_tag(image)
            if floating is None:
                continue
            command = command_text(container)
            if _COLLECTIVE_TESTS.search(command):
                yield doc.at_path(path + ("image",), f"image {image} ({floating}) runs the NCCL/RCCL test: each push "
                                  "changes the NCCL it measures, and each node pulls whatever the tag points at",
                                  hint="run a versioned tag or a digest of the test image", prefer_value=True)
            elif launchers and pod.task is not None and pod.task_index not in launchers and path in main \
                    and not aznhc.runs_azure_nhc(image, command):
                yield doc.at_path(path + ("image",), f"image {image} ({floating}) runs the ranks of the job's NCCL/RCCL "
                                  "test (its launcher's mpirun starts them in this container): each push changes the "
                                  "NCCL it measures, and each node pulls whatever the tag points at",
                                  hint="run a versioned tag or a digest of the test image, the launcher's",
                                  prefer_value=True)
            elif aznhc.runs_azure_nhc(image, command):
                yield doc.at_path(path + ("image",), f"image {image} ({floating}) runs Azure's health checks: Azure "
                                  "publishes only latest, so nodes checked at different times may run different checks",
                                  hint="pin the digest (image@sha256:...); in an hpcconf spec, health_checks.image",
                                  prefer_value=True, severity=Severity.INFO)


# --------------------------------------------------------------------------- K8S020

_EFA_RESOURCE = "vpc.amazonaws.com/efa"


def _fabric_settings(container: dict[str, Any], text: str) -> str:
    """The fabric the container configures NCCL for ("infiniband", "efa" or ""), from its env and command."""
    env = {str(e.get("name")): str(e.get("value", "")) for e in container.get("env") or [] if isinstance(e, dict)}
    joined = text + "\n" + "\n".join(f"{k}={v}" for k, v in env.items())
    if re.search(r"FI_PROVIDER=[\"']?efa\b|NCCL_NET=[\"']?(?:AWS Libfabric|ofi)\b", joined, re.IGNORECASE):
        return "efa"
    if re.search(r"NCCL_NET=[\"']?IB\b|NCCL_IB_HCA=[\"']?(?:=)?(?:mlx5|ibp|ibs)", joined):
        return "infiniband"
    return ""


def _gets_devices_otherwise(pod_spec: dict[str, Any], container: dict[str, Any], annotations: dict[str, Any]) -> bool:
    """Whether the pod can see RDMA/EFA devices without a device-plugin resource: privileged, a hostPath of
    /dev, a DRA resource claim, or a network attachment (Multus, GKE multi-network)."""
    security = container.get("securityContext")
    if isinstance(security, dict) and security.get("privileged") is True:
        return True
    if pod_spec.get("resourceClaims") or as_dict(container.get("resources")).get("claims"):
        return True
    if any(str(as_dict(v.get("hostPath")).get("path", "")).startswith("/dev")
           for v in pod_spec.get("volumes") or [] if isinstance(v, dict)):
        return True
    return any(key == NETWORKS_ANNOTATION or key.startswith("networking.gke.io") for key in annotations)


@rule(code="K8S020", name="fabric-without-device-resource", severity=Severity.WARNING, kinds=POD_KINDS,
      since="0.3.0")
def fabric_without_device_resource(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """A container configures NCCL for InfiniBand or EFA but is given no such device.

    ## What it catches
    In a job of several pods (MPIJob, PyTorchJob, JobSet, Volcano job with more than one worker), a
    GPU container whose env or command sets NCCL up for a fabric (``NCCL_IB_HCA=mlx5_...``,
    ``NCCL_NET=IB``; ``FI_PROVIDER=efa``, ``NCCL_NET=AWS Libfabric``) while it requests no device of
    that fabric (``rdma/*``, ``nvidia.com/<not gpu>``; ``vpc.amazonaws.com/efa``) and has no other way
    to the devices (not privileged, no ``hostPath`` of ``/dev``, no DRA resource claim, no network
    attachment annotation).

    ## Why is this bad?
    Kubernetes gives an unprivileged container only the devices a device plugin allocates to it
    (kubelet device manager; the RDMA shared device plugin and the EFA device plugin hand out
    ``/dev/infiniband/*``). Without them ``ibv_get_device_list`` finds nothing: NCCL's IB transport
    and aws-ofi-nccl's EFA provider do not initialise, and NCCL falls back to TCP sockets (or fails,
    when ``NCCL_NET`` forces the fabric). The job runs at a fraction of the fabric's bandwidth:
    aws/sagemaker-hyperpod-cli#306 reports exactly this, a PyTorchJob with ``FI_PROVIDER=efa`` generated
    without ``vpc.amazonaws.com/efa``, "as a consequence the job falls back to TCP".

    ## Severity
    Warning: without the device plugin's devices NCCL's IB transport / aws-ofi-nccl do not initialise
    and NCCL uses TCP sockets (kubelet device manager); the job runs at a fraction of the fabric's
    bandwidth.

    ## Example
    ```yaml
    env: [{name: FI_PROVIDER, value: efa}]
    resources:
      limits: {nvidia.com/gpu: 8}    # no vpc.amazonaws.com/efa
    ```

    ## Fix
    Request the fabric's resource (``vpc.amazonaws.com/efa: 32`` on p5.48xlarge; ``rdma/ib: 1`` or the
    SR-IOV resource of the cluster's network operator) next to the GPUs.
    """
    from ..workload import multi_node

    if multi_node(doc) is not True:
        return  # one pod: NCCL needs no network between nodes
    for pod in pods(doc):
        for path, container in pod.containers():
            if not gpu_count(container):
                continue
            fabric = _fabric_settings(container, command_text(container))
            if not fabric or _gets_devices_otherwise(pod.spec, container, pod.annotations):
                continue
            names = set(resources(container, "limits")) | set(resources(container, "requests"))
            if fabric == "efa" and _EFA_RESOURCE in names or fabric == "infiniband" and rdma_resources(container):
                continue
            wanted = _EFA_RESOURCE if fabric == "efa" else "an RDMA resource (rdma/*, nvidia.com/<sriov resource>)"
            label = "EFA" if fabric == "efa" else "InfiniBand"
            yield doc.at_path(path + ("name",), f"container '{container.get('name', '?')}' configures NCCL for {label} "
                                                f"but requests no {label} device: NCCL falls back to TCP sockets",
                              hint=f"request {wanted} in resources.limits")
