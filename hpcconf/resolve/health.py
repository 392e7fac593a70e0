"""The node health checks, resolved once: Azure's NHC plan of each GPU pool's SKU (the checks and thresholds of
:mod:`hpcconf.knowledge.nhc`), the image the AKS pod runs them in, and how Azure's container is driven
(:mod:`hpcconf.knowledge.aznhc`), so the Slurm, AzHOP and AKS artifacts transcribe one plan.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ..catalog import Sku
from ..knowledge import aznhc
from ..knowledge.nhc import NhcPlan, load_nhc_data, nhc_plan, unsupported_arch_reason
from ..spec.model import HealthChecks


@dataclass(frozen=True)
class PoolHealth:
    """One GPU pool's checks: the plan (its conf), the image Azure's run-health-checks.sh picks for it, and the
    image the AKS DaemonSet runs."""

    plan: NhcPlan
    default_image: str  # Azure's image for the GPU vendor, tagged :latest (the only tag Azure publishes)
    pod_image: str  # health_checks.image, else default_image: what the AKS pod and the node installers run
    # The provider's node images ship docker with the NVIDIA container runtime, which run-health-checks.sh
    # needs: the Azure HPC images do; other providers' are not known to (the installer says so).
    node_image_has_gpu_runtime: bool = False


@dataclass(frozen=True)
class AznhcContainer:
    """The inputs Azure's run-health-checks.sh gives its container, which the AKS pod gives it too."""

    entrypoint: str
    conf_dir: str  # the entrypoint reads <conf_dir>/aznhc.conf
    syslog: str  # where the XID and link-flap checks read the node's kernel log
    kernel_logs: tuple[str, ...]  # the node's kernel logs, the first that exists
    host_log_dir: str
    shm_size: str


@dataclass(frozen=True)
class ResolvedHealthChecks:
    enabled: bool
    interval_s: int  # Slurm HealthCheckInterval
    commit: str  # the azurehpc-health-checks commit the installers clone
    container: AznhcContainer


def resolve_health_checks(settings: HealthChecks) -> ResolvedHealthChecks:
    return ResolvedHealthChecks(
        enabled=settings.enabled, interval_s=settings.interval_s, commit=load_nhc_data().commit,
        container=AznhcContainer(entrypoint=aznhc.ENTRYPOINT, conf_dir=aznhc.CONF_DIR, syslog=aznhc.SYSLOG,
                                 kernel_logs=tuple(aznhc.KERNEL_LOGS), host_log_dir=aznhc.HOST_LOG_DIR,
                                 shm_size=aznhc.SHM_SIZE))


def pool_health(sku: Sku, settings: HealthChecks) -> Optional[PoolHealth]:
    """The checks of a pool on ``sku``; None when the spec turns them off, or for a pool without GPUs (Azure's
    checks are GPU checks), or a host CPU the pinned commit's image is not built for: a node would pull an image
    it cannot run and fail its boot (NHC006 says so at build)."""
    if not settings.enabled or sku.gpu.count <= 0 or unsupported_arch_reason(sku.cpu.arch) is not None:
        return None
    plan = nhc_plan(sku)
    # run-health-checks.sh picks aznhc-rocm on AMD: check_gpu_count ... rocm and check_rccl_allreduce call
    # rocm-smi and rccl-tests, which only that image has. Azure tags them :latest only.
    default = plan.image.split(":")[0] + ":latest"
    return PoolHealth(plan=plan, default_image=default, pod_image=settings.image or default,
                      node_image_has_gpu_runtime=sku.provider == "azure")
