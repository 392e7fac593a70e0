"""Checks that tie the test image to the GPU vendor of the pool it runs on (AMD Instinct: ROCm/RCCL)."""

from __future__ import annotations

from typing import Iterator

from ...catalog import Catalog
from ...diagnostics import Diagnostic
from ...knowledge import rocm
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
    if image is None or pool is None or sku is None:
        return
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
