"""AKS cross-field checks: what the AKS artifacts need beyond each field's own validation."""

from __future__ import annotations

import ipaddress
from typing import TYPE_CHECKING, Any, Iterator

from ...catalog_errors import UnknownSku
from ...diagnostics import Diagnostic
from ...knowledge import charts
from ...knowledge.network import ipam_overlaps
from ...knowledge.volcano import WORKER_TASK, default_job_name, job_names
from ...rules_registry import spec_rule
from . import at

if TYPE_CHECKING:  # the pydantic models: registering these rules must not import them
    from ...catalog import Catalog, Sku
    from ..load import LoadedSpec
    from ..model import NodePool

MAX_POD_NAME = 63  # pod names are DNS labels; Volcano names pods <job>-<task>-<index>


def _test_pool(loaded: LoadedSpec, catalog: Catalog) -> tuple[NodePool, Sku] | tuple[None, None]:
    cluster = loaded.cluster
    for pool in cluster.pools:
        if cluster.nccl_test.pool in (None, pool.name):
            try:
                sku = catalog.get(pool.sku)
            except UnknownSku:
                return None, None
            if cluster.nccl_test.pool or sku.gpu.count > 0:
                return pool, sku
    return None, None


def _tested_pools(loaded: LoadedSpec, catalog: Catalog) -> list[Any]:
    """The pools the AKS target gives an NCCL test job: ``nccl_test.pool``, else every GPU pool."""
    cluster = loaded.cluster
    if cluster.nccl_test.pool:
        return [p for p in cluster.pools if p.name == cluster.nccl_test.pool]
    tested = []
    for pool in cluster.pools:
        try:
            if catalog.get(pool.sku).gpu.count > 0:
                tested.append(pool)
        except UnknownSku:
            continue
    return tested


def _library(sku: str, catalog: Catalog) -> str:
    """The collective library (nccl, rccl) of a SKU's GPUs; nccl for a SKU the catalog lacks (SPEC001 reports it)."""
    try:
        return catalog.get(sku).gpu.collective or "nccl"
    except UnknownSku:
        return "nccl"


def _uses_ib(loaded: LoadedSpec, catalog: Catalog) -> bool:
    _, sku = _test_pool(loaded, catalog)
    return bool(sku and sku.infiniband and loaded.cluster.network.infiniband.enabled)


def _on_aks(loaded: LoadedSpec) -> bool:
    return "aks" in loaded.cluster.platforms


def _needs_ncp_manifest(loaded: LoadedSpec, catalog: Catalog) -> bool:
    """network-operator releases that no longer render the NicClusterPolicy need hpcconf's manifest."""
    version = loaded.cluster.versions.network_operator
    return _on_aks(loaded) and not charts.network_operator_renders_ncp(version) and _uses_ib(loaded, catalog)


@spec_rule(code="SPEC002", name="network-operator-operands-unknown", since="0.2.0", formerly=("HPC005",))
def network_operator_operands_unknown(loaded: LoadedSpec, catalog: Catalog) -> Iterator[Diagnostic]:
    """The pinned network-operator needs a NicClusterPolicy manifest whose operand images hpcconf does not know.

    ## What it catches
    On AKS with InfiniBand: a ``versions.network_operator`` from 24.10 on (the chart no longer
    renders the NicClusterPolicy, so hpcconf writes it) but older than the first release whose
    operand image tags hpcconf knows (``network-operator-v<release>`` tags, from 25.7.0).
    Reported as HPC005 (invalid-value) before 0.2.0.

    ## Why is this bad?
    From network-operator 24.10 the chart dropped ``deployCR`` (Mellanox/network-operator
    ``deployment/network-operator/values.yaml`` at v24.10.0): the NicClusterPolicy is a separate
    manifest that names every operand image and tag. A guessed tag pulls an image that does not
    exist and the RDMA device plugin never starts.

    ## Example
    ```yaml
    versions:
      network_operator: 24.10.0
    ```

    ## Fix
    Pin ``network_operator: 24.7.0`` (the chart renders the policy) or a release from 25.7.0 on.
    """
    version = loaded.cluster.versions.network_operator
    if _needs_ncp_manifest(loaded, catalog) and charts.network_operator_operand_tag(version) is None:
        yield at(loaded, ("versions", "network_operator"),
                 f"network-operator {version} needs a NicClusterPolicy manifest, and hpcconf knows its operand images "
                 f"only from {charts.NCP_OPERAND_TAGS_SINCE} on (network-operator-v<release> tags)",
                 f"pin network_operator to 24.7.0 (chart-rendered policy) or to {charts.NCP_OPERAND_TAGS_SINCE} or newer")


@spec_rule(code="SPEC003", name="doca-driver-unknown", since="0.2.0", formerly=("HPC004",))
def doca_driver_unknown(loaded: LoadedSpec, catalog: Catalog) -> Iterator[Diagnostic]:
    """The NicClusterPolicy needs a doca-driver version hpcconf cannot pair with the pinned network-operator.

    ## What it catches
    On AKS with InfiniBand: a network-operator release hpcconf writes the NicClusterPolicy for,
    whose doca-driver pairing hpcconf does not know, and no ``versions.doca_ofed``.
    Reported as HPC004 (missing-field) before 0.2.0.

    ## Why is this bad?
    NVIDIA publishes one doca-driver version per network-operator release (the release notes'
    component table); another driver may not build against the node kernel or match the operator's
    expectations, and the MOFED pod crash-loops with every RDMA workload waiting on it.

    ## Example
    ```yaml
    versions:
      network_operator: 25.10.0    # a release without a known pairing
    ```

    ## Fix
    Set ``versions.doca_ofed`` to the doca-driver tag NVIDIA's release notes pair with it.
    """
    cluster = loaded.cluster
    version = cluster.versions.network_operator
    if not _needs_ncp_manifest(loaded, catalog) or charts.network_operator_operand_tag(version) is None:
        return  # SPEC002 reports a release without known operands
    if cluster.versions.doca_ofed or charts.doca_driver_default(version):
        return
    known = ", ".join(f"{r}: {t}" for r, t in charts.DOCA_DRIVER_BY_RELEASE.items())
    yield at(loaded, ("versions", "network_operator"),
             f"network-operator {version} needs the doca-driver version in the NicClusterPolicy; the spec sets none "
             "and hpcconf does not know NVIDIA's pairing for this release",
             f"set versions.doca_ofed to the doca-driver tag (NVIDIA's pairings: {known})")


@spec_rule(code="SPEC004", name="worker-pod-name-too-long", since="0.2.0", formerly=("HPC005",))
def worker_pod_name_too_long(loaded: LoadedSpec, catalog: Catalog) -> Iterator[Diagnostic]:
    """The NCCL job's last worker pod name would be longer than 63 characters.

    ## What it catches
    ``<job name>-mpiworker-<count - 1>`` longer than 63 characters, where the job name is
    ``aks.job_name`` or ``nccl-<collective>-job1`` (``rccl-...`` for AMD pools), followed by ``-<pool>`` when several GPU pools each
    get their own job. Reported as HPC005 (invalid-value) before 0.2.0.

    ## Why is this bad?
    Volcano names each pod ``<job>-<task>-<index>`` and a pod name is a DNS label (RFC 1123,
    at most 63 characters); the API server rejects the pod and the job never starts.

    ## Example
    ```yaml
    aks:
      job_name: nccl-allreduce-performance-test-for-the-new-ndv4-pool-2024
    ```

    ## Fix
    Shorten ``aks.job_name`` to the length the hint gives.
    """
    cluster = loaded.cluster
    if not _on_aks(loaded):
        return
    job_name = cluster.aks.job_name if cluster.aks else None
    collective = cluster.nccl_test.collective
    pools = [(p.name, _library(p.sku, catalog)) for p in _tested_pools(loaded, catalog)]
    names = job_names(job_name, collective, pools) if pools else {"": job_name or default_job_name(collective)}
    libraries = dict(pools)
    counts = {p.name: p.count for p in cluster.pools}
    pods = [(f"{job}-{WORKER_TASK}-{counts.get(pool, 1) - 1}", pool) for pool, job in names.items()]
    pod, pool = max(pods, key=lambda item: len(item[0]))
    if len(pod) > MAX_POD_NAME:
        base = job_name or default_job_name(collective, libraries.get(pool, "nccl"))
        path = ("aks", "job_name") if job_name else ("nccl_test", "collective")
        yield at(loaded, path, f"worker pod name '{pod}' is {len(pod)} characters; Volcano rejects pod names over {MAX_POD_NAME}",
                 f"shorten aks.job_name to at most {MAX_POD_NAME - len(pod) + len(base)} characters")


@spec_rule(code="SPEC005", name="ipam-range-too-small", since="0.2.0", formerly=("HPC005",))
def ipam_range_too_small(loaded: LoadedSpec, catalog: Catalog) -> Iterator[Diagnostic]:
    """``network.infiniband.ipam_range`` has fewer addresses than the test pool's InfiniBand NICs.

    ## What it catches
    On AKS with InfiniBand: an IPAM range smaller than nodes x IB NICs of the NCCL test pool.
    Reported as HPC005 (invalid-value) before 0.2.0.

    ## Why is this bad?
    The whereabouts IPAM of the secondary (IPoIB) network gives each RDMA interface one address
    from the range; when it runs out, pods stay in ``ContainerCreating`` with "could not allocate
    IP". Two ND96asr_v4 nodes need 16 addresses, a /29 has 8.

    ## Example
    ```yaml
    network:
      infiniband: {ipam_range: 192.168.0.0/29}
    ```

    ## Fix
    ```yaml
    network:
      infiniband: {ipam_range: 192.168.0.0/16}
    ```
    """
    pool, sku = _test_pool(loaded, catalog)
    if not _on_aks(loaded) or not _uses_ib(loaded, catalog) or pool is None or sku is None or sku.infiniband is None:
        return  # (_uses_ib already means a test pool whose SKU has InfiniBand)
    ib = loaded.cluster.network.infiniband
    size = ipaddress.ip_network(ib.ipam_range).num_addresses
    needed = pool.count * sku.infiniband.count
    if size < needed:
        yield at(loaded, ("network", "infiniband", "ipam_range"),
                 f"ipam_range {ib.ipam_range} has {size} addresses; {pool.count} nodes x {sku.infiniband.count} IB NICs need {needed}",
                 "use a larger range, e.g. 192.168.0.0/16")


@spec_rule(code="SPEC017", name="ipam-range-overlaps-cluster", since="0.2.0")
def ipam_range_overlaps_cluster(loaded: LoadedSpec, catalog: Catalog) -> Iterator[Diagnostic]:
    """``network.infiniband.ipam_range`` overlaps the AKS cluster's service or pod CIDR.

    ## What it catches
    On AKS with InfiniBand: an IPAM range for the secondary (RDMA) network that shares addresses
    with the cluster's service CIDR or pod CIDR: ``aks.service_cidr`` / ``aks.pod_cidr`` when the
    spec sets them, else AKS's defaults (``az aks create``: service CIDR 10.0.0.0/16, pod CIDR
    10.244.0.0/16 for kubenet and Azure CNI Overlay).

    ## Why is this bad?
    Each pod attached to the secondary network gets an address from the IPAM range and a route
    for that whole range through its RDMA interface. Where the range covers the service CIDR,
    that route captures traffic to every ClusterIP, kube-dns's (10.0.0.10 by default) included:
    name lookups and service calls from the pod time out, and the MPI launcher cannot resolve its
    workers. Where it covers the pod CIDR, traffic to other pods goes out of the wrong interface.
    Nothing fails at build or apply time.

    ## Example
    ```yaml
    network:
      infiniband: {ipam_range: 10.0.0.0/8}
    ```

    ## Fix
    Use a range outside both, e.g. ``192.168.0.0/16`` (the default), or set ``aks.service_cidr``
    / ``aks.pod_cidr`` to the ranges your cluster really uses.
    """
    if not _on_aks(loaded) or not _uses_ib(loaded, catalog):
        return
    ipam = loaded.cluster.network.infiniband.ipam_range
    aks = loaded.cluster.aks
    service, pod = (aks.service_cidr, aks.pod_cidr) if aks is not None else (None, None)
    for overlap in ipam_overlaps(ipam, service_cidr=service, pod_cidr=pod):
        hijacked = ("service traffic (kube-dns included)" if overlap.name == "service CIDR"
                    else "traffic to other pods")
        where = "aks.service_cidr" if overlap.name == "service CIDR" else "aks.pod_cidr"
        yield at(loaded, ("network", "infiniband", "ipam_range"),
                 f"ipam_range {ipam} overlaps the cluster's {overlap.name} {overlap.cidr} ({overlap.shared} is in "
                 f"both): the secondary network's route sends {hijacked} out of the RDMA interface",
                 f"use a range outside {overlap.cidr}, e.g. 192.168.0.0/16, or set {where} to the range the "
                 "cluster uses")
