"""Cross-artifact rules (XA): names and paths that several files must agree on.

The device-plugin resource name runs through the network-operator values or NicClusterPolicy,
the HostDeviceNetwork and the job's requests; the HostDeviceNetwork's namespace must be the
job's; the topology file the job names must be the one the image copies; the AKS node pool must
opt out of the AKS GPU driver the way the az CLI version spells it. These rules compare the
files of one lint run (a directory, several files, or a compiled spec) and stay silent when the
other side is not among them.
"""

from __future__ import annotations

import posixpath
import re
from typing import Any, Iterator, Optional

from ...artifacts import Kind
from ...diagnostics import Diagnostic, Severity
from ...knowledge import charts
from ...parsers.dockerfile import copied_files, workdir_copies
from ...parsers.k8s import (
    NETWORKS_ANNOTATION,
    PodRef,
    as_dict,
    command_text,
    ipam_pool_names,
    mount_holding,
    network_cr,
    network_entries,
    pods,
    rdma_resources,
    rdma_shared_resources,
    sriov_policy_resources,
    sriov_resources,
    volume_mounts,
)
from ...parsers.shell_words import split_words
from ...rules_registry import rule
from ..context import LintContext
from ..document import Document, DocumentSet, per_deployment
from ..settings import env_settings

HDN_PREFIX = "nvidia.com/"


def _namespace(doc: Document) -> str:
    return str(as_dict(as_dict(doc.data).get("metadata")).get("namespace") or "default")


def _hdn_resource(doc: Document) -> str:
    name = str(as_dict(doc.data.get("spec")).get("resourceName") or "")
    return name if name.startswith(HDN_PREFIX) or not name else HDN_PREFIX + name  # the operator adds the prefix


# --------------------------------------------------------------------------- XA001

@rule(code="XA001", name="ib-resource-name-mismatch", severity=Severity.ERROR,
      kinds=(Kind.VOLCANO_JOB, Kind.HOST_DEVICE_NETWORK, Kind.HELM_NETWORK_OPERATOR, Kind.NIC_CLUSTER_POLICY),
      scope="set")
@per_deployment
def ib_resource_name_mismatch(docs: DocumentSet, ctx: LintContext) -> Iterator[Diagnostic]:
    """The IB device-plugin resource is named differently in the operator, the network and the job.

    ## What it catches
    Among the files linted together: a HostDeviceNetwork ``resourceName``, an SriovNetwork or
    SriovIBNetwork ``resourceName`` (sriov-network-operator) or a pod's
    ``nvidia.com/<name>`` / ``rdma/<name>`` request that no sriov device-plugin resource
    (network-operator ``sriovDevicePlugin.resources[].name`` up to 24.7, NicClusterPolicy
    ``resourceList[]`` from 24.10) nor RDMA shared device-plugin resource (``rdma/<name>`` from
    ``rdmaSharedDevicePlugin.resources[]`` or the NicClusterPolicy's ``configList[]``) provides;
    and a HostDeviceNetwork backed by a prefix other than ``nvidia.com`` (which it always assumes).

    ## Why is this bad?
    The published NDm A100 v4 AKS walkthroughs (jingchaozhang.github.io and the Azure HPC
    blog, 2023) name the resource ``mlnxnics`` and ``infiniband``; mixing their files gives a
    node that advertises ``nvidia.com/infiniband`` and a job that requests ``nvidia.com/mlnxnics``:
    the pods stay Pending forever ("Insufficient nvidia.com/mlnxnics") and the HostDeviceNetwork's
    NAD points at a resource nobody allocates.

    ## Severity
    Error: the pods request a resource no node advertises and stay Pending forever ("Insufficient ...",
    kube-scheduler).

    ## Example
    ```yaml
    # network-operator values            # job worker
    sriovDevicePlugin:                    resources:
      resources: [{name: infiniband}]       limits: {nvidia.com/mlnxnics: 8}
    ```

    ## Fix
    Use one name everywhere (hpcconf takes it from ``network.infiniband.resource_name``).
    """
    provided: dict[str, Document] = {}
    for doc in docs.of_kind(Kind.HELM_NETWORK_OPERATOR, Kind.NIC_CLUSTER_POLICY):
        for _path, prefix, name, _selectors in sriov_resources(doc):
            provided[f"{prefix}/{name}"] = doc
        for _path, prefix, name in rdma_shared_resources(doc):
            provided[f"{prefix}/{name}"] = doc
    if not provided:
        return
    names = ", ".join(sorted(provided))
    # The sriov-network-operator's policies add resources under its own resourcePrefix (nvidia.com in the
    # network-operator's chart, openshift.io upstream): a pod or network naming one is matched by name alone.
    policy_names = {name for doc in docs for name in sriov_policy_resources(doc.data)}
    provided_names = {p.split("/", 1)[1] for p in provided} | policy_names
    for doc in docs.of_kind(Kind.K8S_MANIFEST):
        network = network_cr(doc.data)
        if network is None or network.kind not in ("SriovNetwork", "SriovIBNetwork") or not network.resource_name:
            continue
        if network.resource_name not in provided_names:
            yield doc.at_path(("spec", "resourceName"), f"resourceName {network.resource_name} is not provided: "
                                                        f"the device plugins provide {names}",
                              hint="use the resourceName of the SriovNetworkNodePolicy (or device plugin) that "
                                   "creates the VFs")
    for doc in docs.of_kind(Kind.HOST_DEVICE_NETWORK):
        wanted = _hdn_resource(doc)
        if wanted and wanted not in provided:
            other = [p for p in provided if p.split("/", 1)[1] == wanted.split("/", 1)[1]]
            why = (f"the HostDeviceNetwork assumes the nvidia.com/ prefix, but the plugin registers {other[0]}"
                   if other else f"the device plugin provides {names}")
            yield doc.at_path(("spec", "resourceName"), f"resourceName {wanted.removeprefix(HDN_PREFIX)} "
                                                        f"({wanted}) is not provided: {why}",
                              hint="use the sriov device plugin's resource name (prefix nvidia.com)")
    for doc in docs.of_kind(Kind.VOLCANO_JOB, Kind.K8S_MANIFEST):
        for pod in pods(doc):
            for path, container in pod.containers():
                for name in rdma_resources(container):
                    if name not in provided and name.split("/", 1)[1] not in policy_names:
                        which = "limits" if name in as_dict(as_dict(container.get("resources")).get("limits")) else "requests"
                        yield doc.at_path(path + ("resources", which, name),
                                          f"{name} is requested, but the device plugin provides {names}; the pod "
                                          "stays Pending", hint="request the resource the network-operator defines")


# --------------------------------------------------------------------------- XA002

@rule(code="XA002", name="network-annotation-count", severity=Severity.WARNING,
      kinds=(Kind.VOLCANO_JOB, Kind.K8S_MANIFEST), scope="set")
@per_deployment
def network_annotation_count(docs: DocumentSet, ctx: LintContext) -> Iterator[Diagnostic]:
    """The pod's ``k8s.v1.cni.cncf.io/networks`` entries do not match its IB devices.

    ## What it catches
    A pod that lists N HostDeviceNetwork attachments in ``k8s.v1.cni.cncf.io/networks`` but requests a
    different number of that network's device-plugin units (so also for SriovNetwork and SriovIBNetwork
    attachments, whose ``resourceName`` has no prefix); and, when HostDeviceNetworks are
    linted too, entries naming a network that none of them defines.

    ## Why is this bad?
    Each attachment of a host-device network moves one allocated VF into the pod. Fewer entries than
    requested units leave allocated IB VFs outside the pod (NCCL sees fewer HCAs and busbw drops);
    more entries than units fail CNI ADD for lack of a device. Jingchaozhang.github.io's NDm A100 v4 AKS walkthrough (2023)
    attaches ``hostdev-net`` eight times for ``nvidia.com/mlnxnics: 8``.

    The count holds for exclusive devices only (SR-IOV VFs, host-device NICs: one per attachment).
    A resource of the shared RDMA device plugin (``rdma/*``, its default prefix, or a resource of an
    ``rdmaSharedDevicePlugin`` linted with the pod) is not counted: one unit gives the pod every RDMA
    device of the resource, whatever number of macvlan/ipoib attachments it has
    (Mellanox/k8s-rdma-shared-dev-plugin README: "rdmaHcaMax ... number of pods that can share").

    ## Severity
    Warning: exclusive devices (SR-IOV VFs) left outside the pod cost HCAs and busbw; extra attachments
    fail CNI ADD. Shared RDMA resources are not counted.

    ## Example
    ```yaml
    annotations:
      k8s.v1.cni.cncf.io/networks: hostdev-net,hostdev-net
    # limits: {nvidia.com/mlnxnics: 8}
    ```

    ## Fix
    One entry per requested unit: eight ``hostdev-net`` entries for 8 units.
    """
    networks = _networks(docs)
    for doc in docs.of_kind(Kind.VOLCANO_JOB, Kind.K8S_MANIFEST):
        for pod in pods(doc):
            entries = network_entries(pod.annotations.get(NETWORKS_ANNOTATION))
            if not entries:
                continue
            where = pod.metadata_path + ("annotations", NETWORKS_ANNOTATION)
            units: dict[str, int] = {}
            for _, container in pod.containers():
                for name, count in rdma_resources(container).items():
                    units[name] = units.get(name, 0) + count
            if networks:
                yield from _attachments_against_networks(doc, where, entries, units, networks)
            elif len(units) == 1:
                (resource, count), = units.items()
                if _shared_rdma(resource, docs):
                    continue  # one unit of a shared RDMA resource serves every attachment of the pod
                if count != len(entries):
                    yield doc.at_path(where, f"{len(entries)} network attachment(s), but the pod requests {count} "
                                             f"{resource}", hint="one entry per requested unit")


def _shared_rdma(resource: str, docs: DocumentSet) -> bool:
    """Whether ``resource`` is served by the shared RDMA device plugin (one unit per pod, any attachments)."""
    if resource.startswith("rdma/"):
        return True
    shared = {f"{prefix}/{name}" for doc in docs for _, prefix, name in rdma_shared_resources(doc)}
    return resource in shared


def _networks(docs: DocumentSet) -> dict[str, tuple[str, str]]:
    """name -> (kind, device resource or "") of the networks and NADs linted together."""
    found: dict[str, tuple[str, str]] = {}
    for doc in docs:
        network = network_cr(doc.data)
        if network is not None and network.name:
            resource = _hdn_resource(doc) if network.kind == "HostDeviceNetwork" else network.resource_name
            found[network.name] = (network.kind, resource)
        elif isinstance(doc.data, dict) and doc.data.get("kind") == "NetworkAttachmentDefinition":
            found[str(as_dict(doc.data.get("metadata")).get("name") or "")] = ("NetworkAttachmentDefinition", "")
    return found


def _attachments_against_networks(doc: Document, where: tuple[Any, ...], entries: list[tuple[str, str]],
                                  units: dict[str, int], networks: dict[str, tuple[str, str]]) -> Iterator[Diagnostic]:
    # Unknown names are judged only beside HostDeviceNetworks (as before): a macvlan or sriov example linted
    # next to a pod says nothing about the networks its cluster defines elsewhere.
    has_hdn = any(kind == "HostDeviceNetwork" for kind, _ in networks.values())
    for missing in sorted({n for _, n in entries if n not in networks} if has_hdn else set()):
        yield doc.at_path(where, f"network '{missing}' is not a network of this set "
                                 f"(known: {', '.join(sorted(networks))})", hint="use the network's name")
    by_resource: dict[str, int] = {}
    for _, name in entries:
        resource = networks.get(name, ("", ""))[1]
        if resource:  # macvlan/ipoib networks and plain NADs move no device-plugin unit into the pod
            by_resource[resource] = by_resource.get(resource, 0) + 1
    for resource, count in sorted(by_resource.items()):
        # a sriov-network-operator resourceName carries no prefix: match it with any prefix
        requested = units.get(resource) if "/" in resource else \
            next((n for r, n in units.items() if r.split("/", 1)[1] == resource), None)
        if (requested or 0) != count:
            yield doc.at_path(where, f"{count} attachment(s) of {resource} networks, but the pod requests "
                                     f"{requested or 0} {resource}", hint="one entry per requested unit")


# --------------------------------------------------------------------------- XA003

def _image_files(docs: DocumentSet) -> list[tuple[Document, set[str], set[str]]]:
    """Per Dockerfile: absolute paths it copies to, and basenames copied to a WORKDIR it cannot know."""
    out = []
    for doc in docs.of_kind(Kind.DOCKERFILE):
        known, unknown = set(), set()
        for instruction, workdir in workdir_copies(doc.dockerfile):
            for source, target in copied_files(instruction, workdir):
                if target:
                    known.add(posixpath.normpath(target))
                else:
                    unknown.add(posixpath.basename(source.rstrip("/")))
        out.append((doc, known, unknown))
    return out


@rule(code="XA003", name="topo-file-not-in-image", severity=Severity.WARNING,
      kinds=(Kind.VOLCANO_JOB, Kind.K8S_MANIFEST, Kind.DOCKERFILE), scope="set")
@per_deployment
def topo_file_not_in_image(docs: DocumentSet, ctx: LintContext) -> Iterator[Diagnostic]:
    """The job's ``NCCL_TOPO_FILE`` names a file the image does not contain.

    ## What it catches
    ``NCCL_TOPO_FILE`` (or ``NCCL_GRAPH_FILE``) set in a Kubernetes job (``mpirun -x`` or container
    ``env``), linted with the image's Dockerfile, where no ``COPY``/``ADD`` puts a file at that path
    and no volume of the job (``hostPath``, ``configMap``, PVC...) is mounted over it.

    ## Why is this bad?
    NCCL treats a missing topology file as "detect the topology yourself" and logs it at INFO only,
    so the run works, slower (NVIDIA/nccl ``src/graph/topo.cc``). On NDv4 the virtual topology is
    what the file corrects: on NC A100 v4 the wrong topology cost up to 4× busbw (57.5 vs 225 GB/s,
    jingchaozhang.github.io, 2023). The published NDm A100 v4 AKS walkthroughs ``COPY ndv4-topo.xml .`` and point the job at ``/workspace/ndv4-topo.xml``, which
    holds only while the base image's WORKDIR is ``/workspace``.

    ## Severity
    Warning: NCCL treats a missing topology file as "detect it yourself" (INFO only,
    `src/graph/topo.cc`); the job runs without the file's correction (up to 4x busbw on NC A100 v4).

    ## Example
    ```text
    Dockerfile:  COPY ndv4-topo.xml /opt/nccl/ndv4-topo.xml
    job:         -x NCCL_TOPO_FILE=/workspace/ndv4-topo.xml
    ```

    ## Fix
    Point ``NCCL_TOPO_FILE`` at the path the Dockerfile copies to (or copy the file there).
    """
    images = _image_files(docs)
    if not images:
        return
    for doc in docs.of_kind(Kind.VOLCANO_JOB, Kind.K8S_MANIFEST):
        mounts = volume_mounts(doc)
        for setting in env_settings(doc, "NCCL_"):
            if setting.name not in ("NCCL_TOPO_FILE", "NCCL_GRAPH_FILE") or setting.dynamic or not setting.value:
                continue
            path = posixpath.normpath(setting.value)
            if any(path in known for _, known, _ in images):
                continue
            if mount_holding(path, mounts) is not None:
                continue  # a hostPath/configMap/PVC volume supplies it: not the image's business
            if any(posixpath.basename(path) in unknown for _, _, unknown in images):
                continue  # copied to the base image's WORKDIR: cannot tell from here
            copied = sorted(p for _, known, _ in images for p in known if p.endswith(".xml"))
            hint = f"the image copies: {', '.join(copied)}" if copied else "COPY the file into the image"
            yield doc.at_line(setting.line, f"{setting.name}={setting.value} is not a file the Dockerfile puts in the "
                                            "image; NCCL silently falls back to its own topology detection",
                              column=setting.column, end_column=setting.end_column, hint=hint)


# --------------------------------------------------------------------------- XA004

_NODEPOOL = re.compile(r"\baz\s+aks\s+(nodepool\s+add|create)\b")
_GPU_SIZE = re.compile(r"(?i)^Standard_N[CDV]")


def _az_commands(doc: Document) -> Iterator[tuple[int, str]]:
    """(first line, joined command) of each az aks create / nodepool add."""
    lines = doc.lines
    i = 0
    while i < len(lines):
        if _NODEPOOL.search(lines[i]) and not lines[i].lstrip().startswith("#"):
            start, parts = i, [lines[i].rstrip()]
            while parts[-1].endswith("\\") and i + 1 < len(lines):
                i += 1
                parts[-1] = parts[-1][:-1]
                parts.append(lines[i].rstrip())
            yield start + 1, " ".join(parts)
        i += 1


def _shell_vars(doc: Document) -> dict[str, str]:
    found = {}
    for line in doc.lines:
        match = re.match(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=(.*)$", line)
        if match:
            try:
                words = split_words(match.group(2), comments=True)
            except ValueError:
                words = [match.group(2)]
            found[match.group(1)] = words[0] if words else ""
    return found


def _az_version(ctx: LintContext) -> Optional[str]:
    return ctx.cluster.versions.az_cli if ctx.cluster is not None and ctx.cluster.versions.az_cli else None


@rule(code="XA004", name="aks-gpu-driver-opt-out", severity=Severity.WARNING, kinds=(Kind.SHELL_SCRIPT,))
def aks_gpu_driver_opt_out(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """The AKS GPU-driver opt-out is misspelt, or spelt for another az CLI version.

    ## What it catches
    In ``az aks nodepool add`` / ``az aks create`` of a GPU VM size: the tag
    ``SkipGPUDriverInstallation`` (not a name AKS reads); ``--gpu-driver`` with an az CLI older
    than 2.72.2 (when the spec pins one); and the retired ``SkipGPUDriverInstall=true`` tag (a warning:
    AKS stopped reading it on 2025-07-14, whatever the az CLI).

    ## Why is this bad?
    Without a working opt-out AKS installs its own NVIDIA driver on the GPU nodes, and the
    gpu-operator "cannot override the driver installed on the host": ``driver.version`` is silently
    ignored and ``driver.rdma`` never loads (NVIDIA/gpu-operator#525). Jingchaozhang.github.io's NDm A100 v4 AKS walkthrough (2023) uses the tag
    ``SkipGPUDriverInstallation=true``, which its author marked "need to verify"; the documented tag
    was ``SkipGPUDriverInstall=true`` (Azure HPC blog's NDm_v4 AKS guide (2023), gpu-operator AKS docs), retired on 2025-07-14 for
    ``--gpu-driver none`` (az CLI ≥ 2.72.2; Azure/AKS#4925). The az CLI version
    comes from the spec, or from an ``AZ_CLI_VERSION=`` line in the script (hpcconf writes one).

    ## Severity
    Warning: AKS keeps its own driver and the gpu-operator's driver settings are silently ignored
    (NVIDIA/gpu-operator#525): the job runs, without the driver version and GPUDirect RDMA asked for.

    ## Example
    ```bash
    az aks nodepool add ... --node-vm-size Standard_ND96amsr_A100_v4 --tags SkipGPUDriverInstallation=true
    ```

    ## Fix
    ``--gpu-driver none`` with az CLI ≥ 2.72.2; ``--tags SkipGPUDriverInstall=true`` before it.
    """
    variables = _shell_vars(doc)
    az = _az_version(ctx) or variables.get("AZ_CLI_VERSION")  # the spec's pin, or what the script declares
    for line, command in _az_commands(doc):
        size = re.search(r"--node-vm-size[= ]+(\S+)", command)
        value = size.group(1).strip("'\"") if size else ""
        if value.startswith("$"):
            value = variables.get(value.strip("${}").split(":", 1)[0], value)
        gpu = bool(_GPU_SIZE.match(value))
        text_line = lambda needle, line=line: next((n for n in range(line, len(doc.lines) + 1)
                                                     if needle in doc.lines[n - 1]), line)
        if "SkipGPUDriverInstallation" in command:
            n = text_line("SkipGPUDriverInstallation")
            col = doc.lines[n - 1].find("SkipGPUDriverInstallation") + 1
            yield doc.at_line(n, "tag SkipGPUDriverInstallation is not read by AKS; the AKS GPU driver gets installed "
                                 "and gpu-operator cannot replace it",
                              column=col, end_column=col + len("SkipGPUDriverInstallation"),
                              hint="use --gpu-driver none (az CLI >= 2.72.2) or --tags SkipGPUDriverInstall=true before it")
            continue
        if not gpu and value:
            continue
        if "--gpu-driver" in command and az and not charts.az_cli_has_gpu_driver_flag(az):
            n = text_line("--gpu-driver")
            yield doc.at_line(n, f"--gpu-driver needs az CLI >= {charts.AZ_GPU_DRIVER_FLAG_SINCE}; this spec pins {az}",
                              hint="use --tags SkipGPUDriverInstall=true with this az CLI, or pin a newer az_cli")
        elif "SkipGPUDriverInstall=true" in command and doc.artifact is None:
            # Retired whatever the az CLI; in hpcconf's own script the spec's HPC208 reports it once.
            n = text_line("SkipGPUDriverInstall")
            yield doc.at_line(n, "the SkipGPUDriverInstall tag was retired on 2025-07-14; current AKS installs its driver "
                                 "anyway", severity=Severity.WARNING,
                              hint="use --gpu-driver none (az CLI >= 2.72.2)")


# --------------------------------------------------------------------------- XA005

@rule(code="XA005", name="hostdevicenetwork-namespace-mismatch", severity=Severity.ERROR,
      kinds=(Kind.VOLCANO_JOB, Kind.K8S_MANIFEST, Kind.HOST_DEVICE_NETWORK), scope="set")
@per_deployment
def hostdevicenetwork_namespace_mismatch(docs: DocumentSet, ctx: LintContext) -> Iterator[Diagnostic]:
    """A pod attaches a network (HostDeviceNetwork, MacvlanNetwork, SriovIBNetwork...) whose NAD lives in
    another namespace.

    ## What it catches
    A ``k8s.v1.cni.cncf.io/networks`` entry written without a namespace, naming a network CR linted
    with it whose NetworkAttachmentDefinition is rendered in another namespace than the pod's: the
    network-operator's HostDeviceNetwork, MacvlanNetwork and IPoIBNetwork put it in
    ``spec.networkNamespace`` (``default`` when unset); the sriov-network-operator's SriovNetwork and
    SriovIBNetwork in ``spec.networkNamespace``, else their own namespace.

    ## Why is this bad?
    Multus resolves bare names in the pod's own namespace, so the pod fails to start with "cannot
    find a network-attachment-definition" (Multus). Jingchaozhang.github.io's NDm A100 v4 AKS
    walkthrough (2023) uses ``default`` for both.

    ## Severity
    Error: Multus resolves the bare name in the pod's namespace and the pod fails to start ("cannot find
    a network-attachment-definition").

    ## Example
    ```yaml
    # HostDeviceNetwork: spec.networkNamespace: default
    # job: metadata.namespace: nccl-test, annotation hostdev-net,...
    ```

    ## Fix
    Set ``spec.networkNamespace`` to the job's namespace (or write ``<namespace>/<name>`` in the annotation).
    """
    networks = {}
    for doc in docs:
        network = network_cr(doc.data)
        if network is not None and network.name:
            networks[network.name] = network
    if not networks:
        return
    for doc in docs.of_kind(Kind.VOLCANO_JOB, Kind.K8S_MANIFEST):
        namespace = _namespace(doc)
        for pod in pods(doc):
            for entry_ns, name in network_entries(pod.annotations.get(NETWORKS_ANNOTATION)):
                network = networks.get(name)
                if network is None:
                    continue
                target = entry_ns or namespace
                if target != network.nad_namespace:
                    yield doc.at_path(pod.metadata_path + ("annotations", NETWORKS_ANNOTATION),
                                      f"network '{name}' is looked up in namespace '{target}', but {network.kind} "
                                      f"'{name}' creates its NAD in '{network.nad_namespace}'",
                                      hint=f"set the {network.kind}'s networkNamespace to {target}")
                    break


# --------------------------------------------------------------------------- XA008

_POOL_KINDS = {"ippool": "IPPool", "cidrpool": "CIDRPool"}  # nv-ipam's poolType -> the CR kind


@rule(code="XA008", name="ipam-pool-undefined", severity=Severity.ERROR, kinds=(Kind.K8S_MANIFEST,), scope="set")
@per_deployment
def ipam_pool_undefined(docs: DocumentSet, ctx: LintContext) -> Iterator[Diagnostic]:
    """A network's nv-ipam ``poolName`` names no IPPool/CIDRPool among the files linted with it.

    ## What it catches
    ``spec.ipam`` of a HostDeviceNetwork, MacvlanNetwork, IPoIBNetwork or SriovIBNetwork with
    ``"type": "nv-ipam"`` whose ``poolName`` (one name, or ``IPv4,IPv6``) is not the name of an
    ``IPPool`` (or, with ``"poolType": "cidrpool"``, a ``CIDRPool``) in the same deployment. Only
    when at least one pool of that kind is linted with it: a pool defined elsewhere is not judged.

    ## Why is this bad?
    The nv-ipam CNI plugin finds no pool of that name and fails the pod's network setup; the pod
    stays in ContainerCreating ("failed to allocate IP", Mellanox/nvidia-k8s-ipam).

    ## Severity
    Error: nv-ipam finds no pool of that name and the pod stays in ContainerCreating
    (Mellanox/nvidia-k8s-ipam).

    ## Example
    ```yaml
    kind: IPPool
    metadata: {name: pool1, namespace: nvidia-network-operator}
    ---
    kind: MacvlanNetwork
    spec:
      ipam: '{"type": "nv-ipam", "poolName": "pool-1"}'
    ```

    ## Fix
    Use the IPPool's ``metadata.name``.
    """
    pools: dict[str, set[str]] = {"ippool": set(), "cidrpool": set()}
    for doc in docs.of_kind(Kind.K8S_MANIFEST):
        data = as_dict(doc.data)
        kind = {v: k for k, v in _POOL_KINDS.items()}.get(str(data.get("kind", "")))
        if kind and str(data.get("apiVersion", "")).startswith("nv-ipam.nvidia.com/"):
            pools[kind].add(str(as_dict(data.get("metadata")).get("name") or ""))
    for doc in docs:
        network = network_cr(doc.data)
        if network is None:
            continue
        pool_kind = str(network.ipam.get("poolType") or "ippool").lower()
        known = pools.get(pool_kind)
        if not known:
            continue
        for name in ipam_pool_names(network.ipam):
            if name not in known:
                yield doc.at_path(("spec", "ipam"), f"{network.kind} '{network.name}' asks nv-ipam for pool "
                                                    f"'{name}', but the {_POOL_KINDS[pool_kind]}s here are "
                                                    f"{', '.join(sorted(known))}; its pods get no address",
                                  hint="use the pool's metadata.name", prefer_value=True)


# --------------------------------------------------------------------------- XA006

# kube-controller-manager's ServiceAccount controller creates it in every namespace (kubernetes.io/docs/concepts/
# security/service-accounts/#default-service-accounts).
DEFAULT_SERVICE_ACCOUNT = "default"


@rule(code="XA006", name="job-service-account-missing", severity=Severity.ERROR,
      kinds=(Kind.VOLCANO_JOB, Kind.K8S_MANIFEST), scope="set")
@per_deployment
def job_service_account_missing(docs: DocumentSet, ctx: LintContext) -> Iterator[Diagnostic]:
    """A job pod uses a ServiceAccount that the manifests beside it do not create or bind.

    ## What it catches
    A pod's ``serviceAccountName`` (or the deprecated ``serviceAccount``) when ServiceAccount objects
    of the job's namespace are linted too and none has that name; and (warning) when RoleBindings are
    linted too and none binds that account in that namespace while the pod calls kubectl (a launcher's
    ``kubectl get/wait pod``). Accounts of other names linted only in
    other namespaces say nothing about the job's (a chart or another tool may create it there). The
    ``default`` account exists in every namespace (the ServiceAccount controller creates it), and a
    ``${VAR}`` or ``{{ }}`` placeholder is a name only once rendered: neither is reported missing.

    ## Why is this bad?
    Pods referencing a missing ServiceAccount are never created (the admission controller rejects
    them), and without the binding the launcher's ``kubectl get/wait pod`` init container is
    forbidden and waits forever. Jingchaozhang.github.io's NDm A100 v4 AKS walkthrough (2023) creates ``mpi-worker-view`` and binds it to ``view`` in
    ``default`` for exactly this init container.

    ## Severity
    Error: pods referencing a missing ServiceAccount are never created (the ServiceAccount admission
    controller).

    ## Example
    ```yaml
    # job in namespace nccl-test: serviceAccountName: mpi-worker-view
    # ServiceAccount mpi-worker-view in namespace default
    ```

    ## Fix
    Create (and bind) the account in the job's namespace.
    """
    manifests = [d for d in docs.of_kind(Kind.K8S_MANIFEST) if isinstance(d.data, dict)]
    accounts = {(str(as_dict(d.data.get("metadata")).get("name")), _namespace(d))
                for d in manifests if d.data.get("kind") == "ServiceAccount"}
    bindings = [d for d in manifests if d.data.get("kind") in ("RoleBinding", "ClusterRoleBinding")]
    if not accounts and not bindings:
        return
    from ...knowledge.k8s_validation import holds_placeholder  # with the first account: not a lint of config files

    for doc in docs.of_kind(Kind.VOLCANO_JOB, Kind.K8S_MANIFEST):
        namespace = _namespace(doc)
        for pod in pods(doc):
            key = "serviceAccountName" if "serviceAccountName" in pod.spec else "serviceAccount"
            account = pod.spec.get(key)
            # A ${VAR} or {{ }} placeholder names an account only once rendered: nothing to judge.
            if not account or holds_placeholder(account) or holds_placeholder(namespace):
                continue
            path = pod.spec_path + (key,)
            # judged where this namespace's accounts are linted, or the account is linted in another namespace;
            # `default` exists in every namespace (the ServiceAccount controller creates it)
            known = any(ns == namespace for _, ns in accounts) or any(name == str(account) for name, _ in accounts)
            if known and str(account) != DEFAULT_SERVICE_ACCOUNT and (str(account), namespace) not in accounts:
                yield doc.at_path(path, f"ServiceAccount '{account}' does not exist in namespace '{namespace}' among "
                                        f"the linted manifests", hint=f"create it in {namespace}")
            elif bindings and _runs_kubectl(pod) and not any(_binds(b, str(account), namespace) for b in bindings):
                yield doc.at_path(path, f"no RoleBinding gives ServiceAccount '{account}' ({namespace}) any role; the "
                                        "launcher's kubectl calls are forbidden", severity=Severity.WARNING,
                                  hint=f"bind it, e.g. to ClusterRole view, in namespace {namespace}")


def _runs_kubectl(pod: PodRef) -> bool:
    """Whether a container of the pod (init containers too) calls the API with kubectl, as MPI launchers do."""
    return any("kubectl" in command_text(container) for _, container in pod.containers(init=True))


def _binds(binding: Document, account: str, namespace: str) -> bool:
    data = binding.data
    if data.get("kind") == "RoleBinding" and _namespace(binding) != namespace:
        return False
    for subject in data.get("subjects") or []:
        if isinstance(subject, dict) and subject.get("kind") == "ServiceAccount" and \
                str(subject.get("name")) == account and str(subject.get("namespace") or _namespace(binding)) == namespace:
            return True
    return False


# --------------------------------------------------------------------------- XA007

def _gpu_pools_without_opt_out(doc: Document) -> Iterator[tuple[int, str]]:
    variables = _shell_vars(doc)
    for line, command in _az_commands(doc):
        size = re.search(r"--node-vm-size[= ]+(\S+)", command)
        value = size.group(1).strip("'\"") if size else ""
        if value.startswith("$"):
            value = variables.get(value.strip("${}").split(":", 1)[0], value)
        if not _GPU_SIZE.match(value):
            continue
        if "--gpu-driver" in command or "SkipGPUDriverInstall" in command or "--skip-gpu-driver-install" in command:
            continue
        yield line, value


@rule(code="XA007", name="aks-driver-and-operator-driver", severity=Severity.WARNING,
      kinds=(Kind.SHELL_SCRIPT, Kind.HELM_GPU_OPERATOR), scope="set")
@per_deployment
def aks_driver_and_operator_driver(docs: DocumentSet, ctx: LintContext) -> Iterator[Diagnostic]:
    """A GPU node pool keeps the AKS-managed driver while gpu-operator is told to install its own.

    ## What it catches
    An ``az aks nodepool add`` / ``az aks create`` of a GPU VM size (named, or a shell variable the script
    sets) with no GPU-driver opt-out (``--gpu-driver none``, ``--skip-gpu-driver-install`` or the ``SkipGPUDriverInstall`` tag), linted
    together with gpu-operator values whose ``driver.enabled`` is true (the chart's default).

    ## Why is this bad?
    AKS installs its NVIDIA driver on the host; the gpu-operator's driver container "cannot override
    the driver installed on the host filesystem", so ``driver.version`` and ``driver.rdma`` (GPUDirect
    RDMA via nvidia-peermem) are silently ignored (NVIDIA/gpu-operator#525). The
    job then runs on whatever driver AKS chose, without GPUDirect RDMA. Azure also warns that removing
    the operator from such a pool breaks containerd's config.

    ## Severity
    Warning: the operator's driver cannot override the host's (NVIDIA/gpu-operator#525); the job runs on
    AKS's driver without GPUDirect RDMA.

    ## Example
    ```bash
    az aks nodepool add ... --node-vm-size Standard_ND96amsr_A100_v4   # gpu-operator values: driver.enabled: true
    ```

    ## Fix
    Opt the pool out of the AKS driver (``--gpu-driver none``, az CLI ≥ 2.72.2), or keep the AKS
    driver and set ``driver.enabled: false`` and ``toolkit.enabled: false`` in the gpu-operator values.
    """
    operator = [d for d in docs.of_kind(Kind.HELM_GPU_OPERATOR)
                if as_dict(as_dict(d.data).get("driver")).get("enabled", True) is not False]
    if not operator:
        return
    for doc in docs.of_kind(Kind.SHELL_SCRIPT):
        for line, size in _gpu_pools_without_opt_out(doc):
            yield doc.at_line(line, f"GPU pool ({size}) keeps the AKS-managed NVIDIA driver, but the gpu-operator values "
                                    "install their own (driver.enabled); the operator cannot replace a host driver",
                              hint="add --gpu-driver none (az CLI >= 2.72.2), or set driver.enabled: false in the gpu-operator values")
