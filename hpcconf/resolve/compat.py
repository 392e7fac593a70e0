"""Defaults chosen from the compatibility knowledge base (hpcconf.knowledge.compat).

Kept apart from the other resolve modules so each default is one small function:

- ``versions.nccl`` follows ``test_image.base`` when the spec leaves it unset and the NGC tag is
  known (the AKS job runs the image's NCCL, so lint must judge ``NCCL_*`` against that one);
- ``versions.gpu_driver`` is pinned to the last branch that drives the pool's GPUs when the
  gpu-operator release's default driver no longer does (Volta/Pascal/Maxwell end with R580);
- AzHOP's infrastructure image defaults to AlmaLinux 8.7 instead of az-hop's CentOS 7.9 (end of life
  2024-06-30), CPU queues to Ubuntu 22.04 instead of 20.04 (2025-05-31); an explicit choice is kept and linted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable, Optional

from ..knowledge import compat
from ..knowledge.versions import version_key
from ..spec.azhop import AzhopSettings
from ..spec.model import Cluster

if TYPE_CHECKING:
    from .pool import PoolSkus, ResolvedPool

# az-hop config.tpl.yml: "For AlmaLinux 8.7 use almalinux:almalinux-x86_64:8_7-gen2:latest".
SUPPORTED_LINUX_BASE = "almalinux:almalinux-x86_64:8_7-gen2:latest"


@dataclass(frozen=True)
class ResolvedVersions:
    """Every pinned version the artifacts name: the spec's ``versions``, with the derived ones filled in."""

    network_operator: str
    gpu_operator: str
    amd_gpu_operator: str
    node_feature_discovery: str
    volcano: str
    nccl: str  # the spec's, else the NCCL of the test image's base (AKS)
    nccl_tests: str
    gpu_driver: Optional[str]  # the spec's, else the last branch that drives a legacy pool's GPUs; None: the chart's
    doca_ofed: Optional[str]
    az_cli: str
    kubectl: str
    slurm: Optional[str]
    cyclecloud_slurm: Optional[str]
    openmpi: Optional[str]
    ucx: Optional[str]


def derived_versions(spec: Cluster, pools: Iterable["ResolvedPool"], skus: "PoolSkus") -> ResolvedVersions:
    """``spec.versions`` with the values the knowledge base derives for fields the spec left unset."""
    updates: dict[str, str] = {}
    nccl = nccl_from_base_image(spec)
    if nccl is not None:
        updates["nccl"] = nccl
    driver = legacy_gpu_driver(spec, pools, skus)
    if driver is not None:
        updates["gpu_driver"] = driver
    return ResolvedVersions(**{**spec.versions.model_dump(), **updates})


def nccl_from_base_image(spec: Cluster) -> Optional[str]:
    """The NCCL the AKS test image ships, when ``versions.nccl`` is unset and the NGC tag is known."""
    if "aks" not in spec.platforms or spec.test_image is None or "nccl" in spec.versions.model_fields_set:
        return None
    release = compat.ngc_release(spec.test_image.base)
    return release.nccl if release is not None else None


def legacy_gpu_driver(spec: Cluster, pools: Iterable["ResolvedPool"], skus: "PoolSkus") -> Optional[str]:
    """The driver to pin in gpu-operator values when its default cannot drive a pool's GPUs."""
    if "aks" not in spec.platforms or spec.versions.gpu_driver:
        return None
    default = compat.gpu_operator_default_driver(spec.versions.gpu_operator)
    if default is None:
        return None
    pins = {pin.driver for pool in pools if pool.has_gpus
            and compat.driver_drives(skus[pool.name].gpu.sm, default) is False
            and (pin := compat.legacy_driver_pin(skus[pool.name].gpu.sm)) is not None}
    # Mixed legacy branches cannot share one driver; leave that to lint (HPC201) rather than pick one.
    return pins.pop() if len(pins) == 1 else None


# The Azure HPC Ubuntu 22.04 image hpcconf already defaults GPU queues to (azhop.images.gpu).
SUPPORTED_CPU_IMAGE = "microsoft-dsvm:ubuntu-hpc:2204:latest"


# Queue images: CycleCloud deploys their nodes one by one as jobs arrive, so a floating version mixes images in a queue.
QUEUE_IMAGE_FIELDS = ("gpu", "cpu")


def supported_azhop_images(settings: AzhopSettings) -> AzhopSettings:
    """Default images past end of life replaced, unless the spec chose them: az-hop's CentOS 7.9 infrastructure
    image by its AlmaLinux 8.7 option, the Ubuntu 20.04 CPU-queue image by the Ubuntu 22.04 HPC image; then the
    default queue images' ``:latest`` pinned to a published version (hpcconf/data/compat/azure_images.yaml)."""
    replacements = {"linux_base": SUPPORTED_LINUX_BASE, "cpu": SUPPORTED_CPU_IMAGE}
    updates = {field: image for field, image in replacements.items()
               if field not in settings.images.model_fields_set
               and compat.image_retirement(getattr(settings.images, field)) is not None}
    for field in QUEUE_IMAGE_FIELDS:
        if field not in settings.images.model_fields_set:
            pinned = pinned_queue_image(updates.get(field, getattr(settings.images, field)))
            if pinned is not None:
                updates[field] = pinned
    if not updates:
        return settings
    return settings.model_copy(update={"images": settings.images.model_copy(update=updates)})


def pinned_queue_image(image: str) -> Optional[str]:
    """``image`` with ``:latest`` replaced by the version the knowledge base pins for it; None when it has none."""
    if not compat.floating_marketplace_image(image):
        return None
    pin = compat.marketplace_pin(image)
    return f"{image.rsplit(':', 1)[0]}:{pin.version}" if pin is not None else None


# -- AKS node OS --------------------------------------------------------------------------------

OS_SKU_BY_UBUNTU = {"22.04": "Ubuntu2204", "24.04": "Ubuntu2404"}


def aks_kubernetes_version(pinned: Optional[str]) -> str:
    """The spec's version, else the newest Kubernetes minor the node-OS table names (its last row's start)."""
    if pinned:
        return pinned
    return max((row.kubernetes_from for row in compat.aks_default_ubuntu_table()), key=version_key)


def aks_os_sku(pinned: Optional[str], kubernetes_version: str, doca_tag: Optional[str]) -> str:
    """``--os-sku`` for every pool: the spec's, else the Ubuntu AKS gives at this Kubernetes version (AKS FAQ),
    unless the doca-driver tag (when hpcconf knows it) is published only for other Ubuntu releases; then the
    newest of those, so network-operator's driver image exists for the node OS."""
    if pinned:
        return pinned
    row = compat.aks_default_ubuntu(kubernetes_version)
    ubuntu = row.ubuntu if row is not None else "22.04"
    tag = compat.doca_driver_tag(doca_tag)
    if tag is not None and f"ubuntu{ubuntu}" not in tag.os:
        published = sorted((os.removeprefix("ubuntu") for os in tag.os if os.removeprefix("ubuntu") in OS_SKU_BY_UBUNTU),
                           key=version_key)
        ubuntu = published[-1] if published else ubuntu
    return OS_SKU_BY_UBUNTU[ubuntu]
