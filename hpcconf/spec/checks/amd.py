"""Checks that tie the test image to the GPU vendor of the pool it runs on (AMD Instinct: ROCm/RCCL)."""

from __future__ import annotations

from typing import Iterator

from ...catalog import Catalog
from ...catalog_errors import UnknownSku
from ...diagnostics import Diagnostic
from ...knowledge import accelerators, rocm
from ...rules_registry import spec_rule
from ..load import LoadedSpec
from . import at
from .aks import _test_pool


@spec_rule(code="SPEC060", name="test-image-gpu-vendor-mismatch", since="0.3.0")
def test_image_gpu_vendor_mismatch(loaded: LoadedSpec, catalog: Catalog) -> Iterator[Diagnostic]:
    """The test image's base is built for the other GPU vendor than the test pool's (CUDA on AMD, ROCm on NVIDIA).

    ## What it catches
    ``test_image.base`` naming an NVIDIA image (``nvcr.io/...``, ``nvidia/...``, a ``cuda`` image) when
    the test pool's GPUs are AMD's, or a ROCm image (``rocm/...``) when they are NVIDIA's.

    ## Why is this bad?
    The image the test job runs carries the GPU runtime and the collective library: CUDA and NCCL in
    NVIDIA's images, HIP and RCCL in ROCm's. On the other vendor's GPUs it finds no device, and the
    build (nccl-tests against CUDA, rccl-tests against HIP) needs the compiler of the image's own
    vendor, so the image hpcconf generates would not even build.

    ## Example
    ```yaml
    pools:
      - {name: gpu, sku: Standard_ND96isr_MI300X_v5, count: 2}
    test_image: {registry: myacr.azurecr.io, tag: "1", base: "nvcr.io/nvidia/pytorch:24.05-py3"}
    ```

    ## Fix
    Use a ROCm base for AMD pools (``rocm/dev-ubuntu-22.04:6.4.1``, ROCm/ROCm-docker) and an NVIDIA
    base (``nvcr.io/nvidia/pytorch:<tag>-py3``) for NVIDIA pools.
    """
    image = loaded.cluster.test_image
    pool, sku = _test_pool(loaded, catalog)
    if image is None or pool is None or sku is None or "base" not in image.model_fields_set:
        return  # no base given: the build takes the test pool's profile's default (data/accelerators.yaml)
    vendor = sku.gpu.vendor
    if vendor == "amd" and rocm.is_nvidia_image(image.base):
        yield at(loaded, ("test_image", "base"),
                 f"{image.base} is an NVIDIA (CUDA/NCCL) image but pool '{pool.name}' runs {sku.gpu.model} GPUs "
                 f"({sku.name}), which need ROCm and RCCL",
                 f"use a ROCm base such as {rocm.ROCM_BASE_IMAGE}")
    elif vendor == "nvidia" and rocm.is_rocm_image(image.base):
        yield at(loaded, ("test_image", "base"),
                 f"{image.base} is a ROCm (HIP/RCCL) image but pool '{pool.name}' runs NVIDIA {sku.gpu.model} GPUs "
                 f"({sku.name}), which need CUDA and NCCL",
                 "use an NVIDIA base such as nvcr.io/nvidia/pytorch:<tag>-py3")


@spec_rule(code="SPEC062", name="test-image-recipe-unknown", since="0.3.0")
def test_image_recipe_unknown(loaded: LoadedSpec, catalog: Catalog) -> Iterator[Diagnostic]:
    """The spec asks for a test image, but the test pool's accelerator profile names no test image recipe.

    ## What it catches
    ``test_image`` set while the test pool's GPU vendor has a row in ``data/accelerators.yaml`` without a
    ``test_image`` entry (its recipe: Dockerfile and build-script templates, default base, MPI and the
    tests' pin).

    ## Why is this bad?
    The test image carries the vendor's GPU runtime, collective library and its tests, built with that
    vendor's compiler. Another vendor's recipe (NVIDIA's CUDA/nccl-tests image, AMD's ROCm/rccl-tests
    image) finds no device on these GPUs and would not even build against their runtime: hpcconf
    refuses rather than write an image for the wrong GPUs.

    ## Example
    ```yaml
    pools:
      - {name: gpu, sku: Standard_ACME8_v1, count: 2}   # gpu.vendor: acme, a profile without test_image
    test_image: {registry: myacr.azurecr.io, tag: "1"}
    ```

    ## Fix
    Add a ``test_image`` recipe to the vendor's row of ``data/accelerators.yaml`` (with its
    ``image/<recipe>.Dockerfile.j2`` and ``image/<recipe>.sh.j2`` templates), or drop ``test_image`` and
    use an image built for these GPUs.
    """
    image = loaded.cluster.test_image
    pool, sku = _test_pool(loaded, catalog)
    if image is None or pool is None or sku is None or sku.gpu.count == 0:
        return
    profile = accelerators.profiles().get(sku.gpu.vendor)
    if profile is not None and profile.test_image is None:
        yield at(loaded, ("test_image",),
                 f"the test pool '{pool.name}' runs {sku.gpu.model} GPUs ({sku.name}), and accelerator profile "
                 f"'{profile.vendor}' names no test image recipe",
                 "add a test_image recipe to its row of data/accelerators.yaml, or remove test_image", prefer_value=False)


@spec_rule(code="SPEC061", name="aks-gpu-operator-pools", since="0.3.0")
def aks_gpu_operator_pools(loaded: LoadedSpec, catalog: Catalog) -> Iterator[Diagnostic]:
    """An AKS cluster mixes NVIDIA and AMD GPU pools, or has more than one AMD GPU pool.

    ## What it catches
    On ``aks``: GPU pools of both vendors in one spec, or a second pool of AMD GPUs
    (``Standard_ND96isr_MI300X_v5``).

    ## Why is this bad?
    ``provision.sh`` installs one GPU operator, the one of the test pool's vendor: NVIDIA's gpu-operator
    or AMD's. Pools of the other vendor get no driver and no device plugin, so their readiness wait
    (``kubectl wait`` for ``amd.com/gpu`` / ``nvidia.com/gpu``) never ends. AMD's operator drives the
    nodes its DeviceConfig selects, and hpcconf selects the AMD pool by its ``agentpool`` label: a second
    AMD pool would get no amdgpu driver either.

    ## Example
    ```yaml
    platforms: [aks]
    pools:
      - {name: mi300x, sku: Standard_ND96isr_MI300X_v5, count: 2}
      - {name: h100, sku: Standard_ND96isr_H100_v5, count: 2}
    ```

    ## Fix
    One AKS spec per GPU vendor, with one AMD GPU pool; or platform ``slurm``, whose nodes bring their
    own drivers.
    """
    if "aks" not in loaded.cluster.platforms:
        return
    first_vendor: str | None = None
    amd_pools = 0
    for i, pool in enumerate(loaded.cluster.pools):
        try:
            sku = catalog.get(pool.sku)
        except UnknownSku:
            continue  # HPC006
        vendor = sku.gpu.vendor
        first_vendor = first_vendor or vendor
        amd_pools += vendor == "amd"
        if vendor != first_vendor:
            yield at(loaded, ("pools", i, "sku"),
                     f"pool '{pool.name}' has {vendor.upper()} GPUs beside {first_vendor.upper()} GPU pools: an AKS "
                     "cluster from hpcconf installs one GPU operator, so these nodes would get no driver",
                     "write one AKS spec per GPU vendor, or use platform slurm")
        elif vendor == "amd" and amd_pools > 1:
            yield at(loaded, ("pools", i, "sku"),
                     f"pool '{pool.name}' is a second AMD GPU pool: AMD's GPU operator drives the one pool its "
                     "DeviceConfig selects, so these nodes would get no amdgpu driver",
                     "keep one AMD GPU pool per AKS spec (scale its count), or use platform slurm")
