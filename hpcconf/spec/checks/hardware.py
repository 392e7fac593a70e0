"""Hardware a target cannot compile for: GPU vendor, host CPU architecture, NVLink domains larger
than a VM. The AKS and AzHOP targets are written for x86_64 VMs whose NVLink ends at the VM; the Slurm
target also compiles arm64 (Grace) pools and NVL72 racks (IMEX, block topology, MNNVL settings:
:mod:`hpcconf.knowledge.mnnvl`). NVIDIA GPUs work on every platform, AMD Instinct GPUs on AKS and Slurm
(:mod:`hpcconf.knowledge.rocm`). A pool outside what a platform handles is refused with the reason rather
than compiled into artifacts that cannot run.

``hardware_refusal(sku, platform)`` is the one place the reasons live: these rules report it at
the pool's ``sku`` key, and ``hpcconf init`` refuses the same SKU/platform pairs with it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Iterator

from ...catalog_errors import UnknownSku
from ...diagnostics import Diagnostic
from ...rules_registry import spec_rule
from . import at

if TYPE_CHECKING:  # the pydantic models: registering these rules must not import them
    from ...catalog import Catalog, Sku
    from ..load import LoadedSpec

# The platforms whose artifacts hpcconf writes for NVIDIA GPUs only (AKS and Slurm have AMD targets:
# AMD's GPU operator, amd.com/gpu, a ROCm image with rccl-tests, RCCL settings) ...
_NVIDIA_ONLY = {
    "azhop": "az-hop's queue images (azhpc:azhop-compute, the ubuntu-hpc/almalinux-hpc images its config.tpl.yml "
             "documents) carry NVIDIA's driver and NCCL, not ROCm and RCCL, and no Azure HPC image with ROCm can be "
             "named for the queue, so the queue's nodes would boot without a driver for their GPUs",
    "ccws": "hpcconf's CCWS target writes the gpu partition for the portal's node images (cycle.image.ubuntu24 and the "
            "others of createUiDefinition.json), which carry NVIDIA's driver and NCCL, and its cluster-init installs "
            "nccl.conf, not RCCL's settings",
}
_NVIDIA_FIX = ("use platform slurm (a Slurm cluster on a ROCm node image) or aks (AMD's GPU operator) for an AMD pool, "
               "or an NVIDIA SKU on {platform}")
_PLATFORM_NAMES = {"azhop": "AzHOP", "ccws": "CCWS"}

# ... and about the host CPU architecture: platforms absent here handle arm64 (Slurm: the job runs the
# nodes' own nccl-tests build, the NCCL files carry no CPU architecture, the test image is built for
# linux/arm64).
_X86_ONLY = {
    "aks": "hpcconf's AKS target is checked against amd64 images only (its tables do not say whether the kubectl "
           "image and the doca-driver tag it pins are published for arm64), and an arm64 GPU size today is a "
           "GB200/GB300 one, whose NVLink domain the AKS target does not set up (SPEC032)",
    "azhop": "az-hop's node images are x86_64 builds (config.tpl.yml: azhpc:azhop-compute:centos-7_9, or "
             "almalinux-x86_64 8.7); az-hop offers no arm64 image",
    "ccws": "hpcconf's CCWS target is written for x86_64 sizes: an arm64 GPU size today is a GB200/GB300 one, whose "
            "NVL72 rack cyclecloud-slurm 4.0.9 sets up only after scaling (azslurm topology -b into "
            "site_specific.conf, its README \"GB200/GB300\"), a step hpcconf does not generate for CCWS yet",
}
_X86_FIX = "use platform slurm for this size (hpcconf compiles arm64 pools there), or an x86_64 SKU"

# ... and about the NVLink domain: Slurm sets up IMEX and block topology; the others do not.
_MNNVL = {
    "aks": "hpcconf's AKS artifacts request nvidia.com/gpu from gpu-operator's device plugin and install neither "
           "NVIDIA's DRA driver for GPUs (k8s-dra-driver-gpu, for Kubernetes 1.32 or newer with Dynamic Resource "
           "Allocation) nor a ComputeDomain for the job, which is what gives pods on several VMs an IMEX channel; "
           "without one NCCL cannot map the other VMs' GPU memory and the test would measure InfiniBand instead "
           "of the rack's NVLink",
    "azhop": "az-hop's Slurm (cyclecloud-slurm) sets up neither IMEX nor Slurm block topology, so jobs land across "
             "NVLink domains and NCCL cannot reach the other VMs' GPUs over NVLink",
}
_MNNVL_FIX = ("use platform slurm, whose artifacts set up IMEX and a topology/block topology.conf for the NVL72 rack, "
              "or install NVIDIA's DRA driver for GPUs and run the job in a ComputeDomain by hand")

# ... and about whose size it is: AKS and AzHOP create Azure VMs, so the pool's SKU name goes to Azure
# as a VM size. Platform slurm handles every provider (Crusoe: Terraform; other: nodes the user runs).
_AZURE_ONLY = {
    "aks": "hpcconf's AKS artifacts create the node pool with `az aks nodepool add --node-vm-size <sku>`, which "
           "only accepts an Azure VM size",
    "azhop": "az-hop creates its compute nodes as Azure VMs (config.yml queues name an Azure VM size)",
    "ccws": "CCWS creates the gpu partition's nodes as Azure VMs (mainTemplate's gpu.sku is an Azure VM size)",
}
_PROVIDER_FIX = {
    "crusoe": "use platform slurm for a Crusoe instance type (hpcconf writes its Crusoe Terraform variables), "
              "or an Azure size",
    "other": "use platform slurm for nodes you run yourself (on-prem or another cloud), or an Azure size; a SKU "
             "written by `hpcconf sku import` on an Azure VM says provider: azure",
}

Refusal = tuple[str, str]  # (what cannot work and why, what to do)


def vendor_refusal(sku: Sku, platform: str) -> Refusal | None:
    if sku.gpu.vendor == "nvidia" or platform not in _NVIDIA_ONLY:
        return None
    return (f"{sku.name} has {sku.gpu.vendor.upper()} GPUs ({sku.gpu.model}, collectives through "
            f"{(sku.gpu.collective or '').upper()}) but {_NVIDIA_ONLY[platform]}",
            _NVIDIA_FIX.format(platform=_PLATFORM_NAMES.get(platform, platform)))


def arch_refusal(sku: Sku, platform: str) -> Refusal | None:
    if sku.cpu.arch == "x86_64" or platform not in _X86_ONLY:
        return None
    cpu = f" ({sku.cpu.model})" if sku.cpu.model else ""
    return f"{sku.name}'s host CPU is {sku.cpu.arch}{cpu} but {_X86_ONLY[platform]}", _X86_FIX


def nvlink_domain_refusal(sku: Sku, platform: str) -> Refusal | None:
    if not sku.nvlink_spans_nodes or platform not in _MNNVL:
        return None
    return (f"{sku.name}'s NVLink domain holds {sku.nvlink_domain_gpus} GPUs across "
            f"{sku.nvlink_domain_gpus // sku.gpu.count} VMs of {sku.gpu.count}, but {_MNNVL[platform]}", _MNNVL_FIX)


def provider_refusal(sku: Sku, platform: str) -> Refusal | None:
    if sku.provider == "azure" or platform not in _AZURE_ONLY:
        return None
    whose = "a Crusoe instance type" if sku.provider == "crusoe" else "not an Azure size (provider: other)"
    return f"{sku.name} is {whose}, but {_AZURE_ONLY[platform]}", _PROVIDER_FIX[sku.provider]


def lifecycle_refusal(sku: Sku, platform: str) -> Refusal | None:
    """A size its SKU file marks retired (package sizes get theirs from the retirement table, HPC200)."""
    life = sku.lifecycle
    if life is None or sku.lifecycle_status() != "retired":
        return None
    fix = f"use {life.replacement}" if life.replacement else "choose a size the provider still offers"
    return f"{sku.name} was retired on {life.date} ({life.source})", fix


# The order is which reason `init` gives first: a size the platform cannot even create comes first; for
# a GB200 pool on AKS the missing ComputeDomain is the one to act on, not the image architecture.
REFUSALS: tuple[Callable[[Sku, str], Refusal | None], ...] = (
    provider_refusal, vendor_refusal, nvlink_domain_refusal, arch_refusal, lifecycle_refusal)


def hardware_refusal(sku: Sku, platform: str) -> str | None:
    """Why no target can compile ``sku`` for ``platform`` and what to do (the first reason), or None."""
    found = next((r for check in REFUSALS if (r := check(sku, platform)) is not None), None)
    return f"{found[0]}; {found[1]}" if found else None


def _pool_findings(loaded: LoadedSpec, catalog: Catalog,
                   check: Callable[[Sku, str], Refusal | None]) -> Iterator[Diagnostic]:
    for i, pool in enumerate(loaded.cluster.pools):
        try:
            sku = catalog.get(pool.sku)
        except UnknownSku:
            continue  # HPC006
        for platform in loaded.cluster.platforms:
            found = check(sku, platform)
            if found is not None:
                yield at(loaded, ("pools", i, "sku"), f"pool '{pool.name}' on {platform}: {found[0]}",
                         found[1][:1].upper() + found[1][1:] + ".")
                break  # one finding per pool: the fix is the same on every platform


@spec_rule(code="SPEC030", name="gpu-vendor-unsupported", since="0.3.0")
def gpu_vendor_unsupported(loaded: LoadedSpec, catalog: Catalog) -> Iterator[Diagnostic]:
    """A pool's GPUs are AMD's (AMD Instinct MI300X) on AzHOP, whose queues can only run NVIDIA GPUs.

    ## What it catches
    A pool whose SKU has ``gpu.vendor: amd`` (for example ``Standard_ND96isr_MI300X_v5``) in a spec
    with platform ``azhop`` or ``ccws`` (whose gpu partition boots the portal's NVIDIA images and gets an
    ``nccl.conf``). On ``aks`` and ``slurm`` hpcconf compiles AMD artifacts (AMD's GPU
    operator and ``amd.com/gpu``, a ROCm test image with rccl-tests, RCCL settings) and says nothing.

    ## Why is this bad?
    An AzHOP queue boots the image its ``image`` key names: az-hop's own compute image and the
    Azure HPC marketplace images its config template documents (ubuntu-hpc, almalinux-hpc) carry
    NVIDIA's driver, CUDA and NCCL, none of ROCm or RCCL, and no Azure HPC image with ROCm can be
    named for the queue. The queue would start MI300X nodes with no driver for their GPUs; the
    build would succeed and every job would fail.

    ## Example
    ```yaml
    platforms: [azhop]
    pools:
      - {name: gpu, sku: Standard_ND96isr_MI300X_v5, count: 2}
    ```

    ## Fix
    Use platform ``slurm`` (a Slurm cluster on a ROCm node image) or ``aks`` for the AMD pool, or an
    NVIDIA SKU on AzHOP.
    """
    yield from _pool_findings(loaded, catalog, vendor_refusal)


@spec_rule(code="SPEC031", name="cpu-arch-unsupported", since="0.3.0")
def cpu_arch_unsupported(loaded: LoadedSpec, catalog: Catalog) -> Iterator[Diagnostic]:
    """A pool's host CPU is arm64 (NVIDIA Grace) on a platform whose artifacts are x86_64-only (AKS, AzHOP).

    ## What it catches
    A pool whose SKU has ``cpu.arch: arm64`` (GB200 and GB300 VMs: ``Standard_ND128isr_NDR_GB200_v6``,
    ``Standard_ND128isr_GB300_v6``) in a spec with ``platforms: [aks]``, ``[azhop]`` or ``[ccws]`` (hpcconf's
    CCWS target does not yet write the after-scaling NVL72 steps cyclecloud-slurm's README asks for). Platform
    ``slurm`` compiles arm64 pools: its job runs the nodes' own nccl-tests build, its NCCL files name
    no CPU architecture, and a test image is built ``FROM --platform=linux/arm64``.

    ## Why is this bad?
    az-hop's node images are x86_64 builds (its ``config.tpl.yml`` offers
    ``azhpc:azhop-compute:centos-7_9`` and ``almalinux-x86_64``), so an arm64 VM cannot boot them.
    hpcconf's AKS target has only been checked against amd64 images, and the arm64 GPU sizes are
    GB200/GB300 ones, whose multi-VM NVLink domain it does not set up (SPEC032).

    ## Example
    ```yaml
    platforms: [azhop]
    pools:
      - {name: gpu, sku: Standard_ND128isr_NDR_GB200_v6, count: 18}
    ```

    ## Fix
    Use ``platforms: [slurm]`` for a Grace size, or an x86_64 SKU.
    """
    yield from _pool_findings(loaded, catalog, arch_refusal)


@spec_rule(code="SPEC032", name="nvlink-domain-spans-nodes", since="0.3.0")
def nvlink_domain_spans_nodes(loaded: LoadedSpec, catalog: Catalog) -> Iterator[Diagnostic]:
    """A pool's NVLink domain is larger than one VM (GB200/GB300 NVL72) on a platform that does not set it up.

    ## What it catches
    A pool whose SKU has ``nvlink.domain_gpus`` larger than ``gpu.count`` (an NVL72 rack is one
    NVLink domain of 72 GPUs over 18 VMs of 4) in a spec with ``platforms: [aks]`` or ``[azhop]``.
    Platform ``slurm`` sets the domain up: an IMEX ``nodes_config.cfg`` per rack, a ``topology/block``
    ``topology.conf`` with one block per rack, and a job that asks for ``--segment`` and
    ``NCCL_MNNVL_ENABLE=1``.

    ## Why is this bad?
    NCCL reaches another VM's GPUs over NVLink only through IMEX: every rank's GPU must have joined
    the fabric and the job needs an IMEX channel (NVIDIA/nccl ``src/init.cc`` ``checkMNNVL`` @ v2.21.5-1).
    On Kubernetes that channel comes from a ComputeDomain of NVIDIA's DRA driver for GPUs
    (k8s-dra-driver-gpu, Kubernetes 1.32 or newer with DRA), which hpcconf's AKS target does not
    install; az-hop's Slurm sets up neither IMEX nor block topology. The traffic would go over
    InfiniBand and the test would measure the wrong fabric.

    ## Example
    ```yaml
    platforms: [aks]
    pools:
      - {name: gpu, sku: Standard_ND128isr_GB300_v6, count: 18}
    ```

    ## Fix
    Use ``platforms: [slurm]``, or install the DRA driver and run the job in a ComputeDomain by hand.
    """
    yield from _pool_findings(loaded, catalog, nvlink_domain_refusal)


@spec_rule(code="SPEC080", name="sku-provider-unsupported", since="0.3.0")
def sku_provider_unsupported(loaded: LoadedSpec, catalog: Catalog) -> Iterator[Diagnostic]:
    """A pool's SKU is not an Azure VM size (a Crusoe instance type, or ``provider: other``) on AKS or AzHOP.

    ## What it catches
    A pool whose SKU file says ``provider: crusoe`` (``h200-141gb-sxm-ib.8x``) or ``provider: other``
    (a node written by ``hpcconf sku import`` that did not answer Azure's instance metadata service)
    in a spec with ``platforms: [aks]``, ``[azhop]`` or ``[ccws]``. Platform ``slurm`` takes every provider.

    ## Why is this bad?
    Both platforms create Azure VMs: the AKS ``provision.sh`` passes the pool's SKU name to
    ``az aks nodepool add --node-vm-size``, and az-hop's queues name an Azure VM size. A Crusoe or
    on-prem name is not one, so the build would succeed and provisioning would fail (or, worse, a
    name that happens to match an Azure size would create different hardware from the one described).

    ## Example
    ```yaml
    platforms: [aks]
    pools:
      - {name: gpu, sku: h200-141gb-sxm-ib.8x, count: 2}
    ```

    ## Fix
    Use ``platforms: [slurm]`` for Crusoe instance types and your own nodes, or an Azure size on AKS
    and AzHOP. A SKU imported on an Azure VM records ``provider: azure`` (``hpcconf sku import
    --provider azure`` when the node could not reach the metadata service).
    """
    yield from _pool_findings(loaded, catalog, provider_refusal)
