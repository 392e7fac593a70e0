"""How Azure runs its health-check container (Azure/azurehpc-health-checks ``run-health-checks.sh`` at
``COMMIT``), so a Kubernetes pod that runs the same image can give it the same inputs, and lint can tell
when a hand-written one does not.

``run-health-checks.sh`` runs ``docker run --net=host --privileged --shm-size=8g`` with the conf at
``/azure-nhc/conf/aznhc.conf`` and the host's kernel log (``/var/log/syslog``, else ``/var/log/messages``)
at ``/azure-nhc/syslog``, then ``/azure-nhc/aznhc-entrypoint.sh``. ``customTests/azure_gpu_xid.nhc`` and
``azure_ib_link_flapping.nhc`` read that log and skip (a log line, not a failure) when it is missing; without a
conf the entrypoint runs the image's default conf for the VM size (``default/conf/<size>.conf``): every
NVIDIA GPU size's conf runs ``check_gpu_xid``, the AMD sizes' (``nd96asr_mi200_v4``, ``nd96isr_mi300x_v5``)
run ``check_ib_link_flapping`` and no XID check (``conf/`` at ``COMMIT``).
"""

from __future__ import annotations

REPO = "Azure/azurehpc-health-checks"
COMMIT = "0e0a1ac26a64b32ac4dd7632a529638505d3314a"
ROOT = "/azure-nhc"
ENTRYPOINT = f"{ROOT}/aznhc-entrypoint.sh"
CONF_DIR = f"{ROOT}/conf"  # the entrypoint reads CONF_DIR/aznhc.conf
CONF_FILE = "aznhc.conf"
SYSLOG = f"{ROOT}/syslog"
KERNEL_LOGS = ("/var/log/syslog", "/var/log/messages")  # run-health-checks.sh takes the first that exists
HOST_LOG_DIR = "/var/log"
SHM_SIZE = "8Gi"  # --shm-size=8g: docker's g is GiB
# The checks that read SYSLOG (customTests/azure_gpu_xid.nhc, azure_ib_link_flapping.nhc).
SYSLOG_CHECKS = ("check_gpu_xid", "check_ib_link_flapping")
# The checks that run NCCL/RCCL on the node's GPUs inside the container.
COLLECTIVE_CHECKS = ("check_nccl_allreduce", "check_rccl_allreduce", "check_nccl_allreduce_ib_loopback")
IMAGE_PREFIX = "mcr.microsoft.com/aznhc/aznhc-"
# The log-reading check every default conf of an image's GPU sizes runs (conf/*.conf at COMMIT): aznhc-nv's NVIDIA
# sizes all run check_gpu_xid; aznhc-rocm's AMD sizes run check_ib_link_flapping only.
DEFAULT_CONF_SYSLOG_CHECK = {"nv": "check_gpu_xid", "rocm": "check_ib_link_flapping"}


def default_conf_syslog_check(image: str) -> str:
    """What the image's default conf reads the kernel log for ("check_gpu_xid or check_ib_link_flapping" when the
    image is not one of Azure's two)."""
    flavour = image[len(IMAGE_PREFIX):].split("@")[0].split(":")[0] if image.startswith(IMAGE_PREFIX) else ""
    return DEFAULT_CONF_SYSLOG_CHECK.get(flavour, " or ".join(SYSLOG_CHECKS))
# The only tag Azure documents for either image (dockerfile/README.MD: `docker pull
# mcr.microsoft.com/aznhc/aznhc-nv:latest`; pull-image-mcr.sh pulls the bare name): no version or dated tag
# is published, so a reproducible run pins the image by digest (spec: health_checks.image).
PUBLISHED_TAGS = ("latest",)
# run-health-checks.sh's per-check timeout when not given -t (TIMEOUT=500 at COMMIT; its README: "For the default
# tests provided we recommend setting the time out to 500 seconds").
CHECK_TIMEOUT_S = 500


# Azure's single-node NCCL check runs with NCCL_TOPO_FILE empty since 67ca7512 (2025-06-26, PR #143 "Bug Fix for
# H100 / H200 check_nccl_allreduce test failure", issue #142: spurious H200 failures with the topology file);
# their floors (conf/nd96isr_h100_v5.conf, nd96isr_h200_v5.conf) hold without it. The images still set the file
# for multi-node runs (azhpc-images customizations/ndv5.sh), as does Azure's AKS NCCL chart.
SINGLE_NODE_WITHOUT_TOPO_FILE = ("Standard_ND96isr_H100_v5", "Standard_ND96isr_H200_v5")


def runs_azure_nhc(image: str, command: str) -> bool:
    """A container that runs Azure's checks: one of its images, or its entrypoint."""
    return image.startswith(IMAGE_PREFIX) or "aznhc-entrypoint.sh" in command
