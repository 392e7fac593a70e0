"""Hardware a target cannot compile for: GPU vendor, host CPU architecture, NVLink domains larger
than a VM. Every target is written for NVIDIA GPUs in x86_64 VMs whose NVLink ends at the VM; a
pool outside that is refused with the reason rather than compiled into artifacts that cannot run.

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

# What each platform's artifacts assume about the GPU vendor (NVIDIA) ...
_NVIDIA_ONLY = {
    "aks": "hpcconf's AKS artifacts install NVIDIA's gpu-operator, request nvidia.com/gpu and build the NCCL test "
           "image from nvcr.io",
    "azhop": "hpcconf's AzHOP queues install NCCL topology files and run NVIDIA nccl-tests",
    "slurm": "hpcconf's Slurm job runs NVIDIA nccl-tests with NCCL_* settings and NCCL topology files",
}
_NVIDIA_FIX = ("an AMD pool needs AMD's GPU operator (amd.com/gpu), ROCm images and rccl-tests with RCCL_*/NCCL_* "
               "settings for RCCL, which hpcconf does not generate yet: write those by hand, or use an NVIDIA SKU")

# ... and about the host CPU architecture (x86_64).
_X86_ONLY = {
    "aks": "hpcconf's test-image Dockerfile builds nccl-tests for the machine that runs `docker build` (no "
           "--platform linux/arm64), so an image built on x86_64 fails with 'exec format error' on arm64 nodes",
    "azhop": "az-hop's node images are x86_64 (its default linux_base_image is almalinux-x86_64) and hpcconf's "
             "NCCL topology files declare arch x86_64",
    "slurm": "hpcconf's NCCL topology files declare arch x86_64 and the node images it names are x86_64 images",
}
_X86_FIX = ("build the test image with `docker buildx build --platform linux/arm64` and use the provider's arm64 "
            "(Grace) node image by hand, or use an x86_64 SKU")

_MNNVL = ("hpcconf treats each VM's GPUs as one NVLink domain: reaching the other VMs' GPUs over NVLink needs "
          "IMEX (Slurm: IMEX channels, Kubernetes: the NVIDIA DRA driver's ComputeDomain), which hpcconf does "
          "not set up, so the NCCL test would measure InfiniBand instead of the rack's NVLink")
_MNNVL_FIX = "set up IMEX / ComputeDomains by hand for multi-node NVLink, or use a SKU whose NVLink ends at the VM"

Refusal = tuple[str, str]  # (what cannot work and why, what to do)


def vendor_refusal(sku: Sku, platform: str) -> Refusal | None:
    if sku.gpu.vendor == "nvidia":
        return None
    return (f"{sku.name} has {sku.gpu.vendor.upper()} GPUs ({sku.gpu.model}, collectives through "
            f"{(sku.gpu.collective or '').upper()}) but {_NVIDIA_ONLY[platform]}", _NVIDIA_FIX)


def arch_refusal(sku: Sku, platform: str) -> Refusal | None:
    if sku.cpu.arch == "x86_64":
        return None
    cpu = f" ({sku.cpu.model})" if sku.cpu.model else ""
    return f"{sku.name}'s host CPU is {sku.cpu.arch}{cpu} but {_X86_ONLY[platform]}", _X86_FIX


def nvlink_domain_refusal(sku: Sku, platform: str) -> Refusal | None:
    if not sku.nvlink_spans_nodes:
        return None
    return (f"{sku.name}'s NVLink domain holds {sku.nvlink_domain_gpus} GPUs across "
            f"{sku.nvlink_domain_gpus // sku.gpu.count} VMs of {sku.gpu.count}, but {_MNNVL}", _MNNVL_FIX)


def lifecycle_refusal(sku: Sku, platform: str) -> Refusal | None:
    """A size its SKU file marks retired (package sizes get theirs from the retirement table, HPC200)."""
    life = sku.lifecycle
    if life is None or sku.lifecycle_status() != "retired":
        return None
    fix = f"use {life.replacement}" if life.replacement else "choose a size the provider still offers"
    return f"{sku.name} was retired on {life.date} ({life.source})", fix


REFUSALS: tuple[Callable[[Sku, str], Refusal | None], ...] = (
    vendor_refusal, arch_refusal, nvlink_domain_refusal, lifecycle_refusal)


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
    """A pool's GPUs are not NVIDIA's (AMD Instinct MI300X), and every target compiles NVIDIA artifacts.

    ## What it catches
    A pool whose SKU has ``gpu.vendor: amd`` (for example ``Standard_ND96isr_MI300X_v5``), on any platform.

    ## Why is this bad?
    AKS artifacts would install NVIDIA's gpu-operator, request ``nvidia.com/gpu`` and run an image from
    nvcr.io; AzHOP and Slurm artifacts would install NCCL topology files and run NVIDIA nccl-tests.
    None of it runs on AMD GPUs, which use ROCm, AMD's GPU operator (``amd.com/gpu``) and RCCL. The
    build would succeed and the cluster would fail.

    ## Example
    ```yaml
    pools:
      - {name: gpu, sku: Standard_ND96isr_MI300X_v5, count: 2}
    ```

    ## Fix
    Use an NVIDIA SKU, or write the ROCm artifacts (AMD GPU operator, rccl-tests) by hand; hpcconf
    does not generate them yet.
    """
    yield from _pool_findings(loaded, catalog, vendor_refusal)


@spec_rule(code="SPEC031", name="cpu-arch-unsupported", since="0.3.0")
def cpu_arch_unsupported(loaded: LoadedSpec, catalog: Catalog) -> Iterator[Diagnostic]:
    """A pool's host CPU is arm64 (NVIDIA Grace), and the targets compile x86_64 artifacts.

    ## What it catches
    A pool whose SKU has ``cpu.arch: arm64`` (GB200 and GB300 VMs: ``Standard_ND128isr_NDR_GB200_v6``,
    ``Standard_ND128isr_GB300_v6``), on any platform.

    ## Why is this bad?
    The AKS test-image Dockerfile builds nccl-tests for whatever machine runs ``docker build``; built
    on x86_64, the image fails with ``exec format error`` on an arm64 node. AzHOP's node images are
    x86_64, and the NCCL topology files hpcconf writes declare ``arch="x86_64"``.

    ## Example
    ```yaml
    pools:
      - {name: gpu, sku: Standard_ND128isr_NDR_GB200_v6, count: 18}
    ```

    ## Fix
    Use an x86_64 SKU, or build the image with ``docker buildx build --platform linux/arm64`` and pick
    the provider's arm64 node image by hand.
    """
    yield from _pool_findings(loaded, catalog, arch_refusal)


@spec_rule(code="SPEC032", name="nvlink-domain-spans-nodes", since="0.3.0")
def nvlink_domain_spans_nodes(loaded: LoadedSpec, catalog: Catalog) -> Iterator[Diagnostic]:
    """A pool's NVLink domain is larger than one VM (GB200/GB300 NVL72), which no target sets up.

    ## What it catches
    A pool whose SKU has ``nvlink.domain_gpus`` larger than ``gpu.count``: an NVL72 rack is one
    NVLink domain of 72 GPUs over 18 VMs of 4.

    ## Why is this bad?
    hpcconf's NCCL settings, topology files and tests treat the VM's GPUs as the whole NVLink domain.
    NCCL reaches another VM's GPUs over NVLink only with IMEX (Slurm: IMEX channels; Kubernetes: the
    NVIDIA DRA driver's ComputeDomain); without it the traffic goes over InfiniBand and the test
    measures the wrong fabric.

    ## Example
    ```yaml
    pools:
      - {name: gpu, sku: Standard_ND128isr_GB300_v6, count: 18}
    ```

    ## Fix
    Set up IMEX / ComputeDomains by hand for multi-node NVLink, or use a SKU whose NVLink ends at the VM.
    """
    yield from _pool_findings(loaded, catalog, nvlink_domain_refusal)
