"""AMD Instinct facts the AMD targets and the RCCL rules share: what RCCL reads, and the pinned ROCm pieces.

RCCL is AMD's port of NCCL: it reads the ``NCCL_*`` variables (its ``NCCL_PARAM`` prefixes ``NCCL_``)
plus its own ``RCCL_*`` ones. The table ``hpcconf/data/rccl_env_vars.tsv`` lists every name RCCL
looks up (ROCm/rccl ``src/`` at tag rocm-6.2.2, RCCL 2.20.5) and whether the code that reads it is
compiled into RCCL's HIP build: NVLink SHARP (``NCCL_NVLS_*``) and CUDA memory-sync domains sit in
``#if CUDART_VERSION >= ...`` branches a HIP build drops.

RCCL reads its settings file from ``~/.rccl.conf`` and ``/etc/rccl.conf`` (ROCm/rccl
``src/misc/param.cc`` ``initEnv``, the same at rocm-6.2.2 and at 2fb12a93): never ``/etc/nccl.conf``.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Literal

DATA_FILE = Path(__file__).resolve().parents[1] / "data" / "rccl_env_vars.tsv"

RCCL_TAG = "rocm-6.2.2"
RCCL_VERSION = "2.20.5"  # makefiles/version.mk at RCCL_TAG
RCCL_CONF_FILES = ("~/.rccl.conf", "/etc/rccl.conf")
RCCL_PARAM_SOURCE = (f"ROCm/rccl src/misc/param.cc initEnv() at tag {RCCL_TAG} and at commit "
                     "2fb12a9358b711f8fa2370ac1b1cc2ff95f29058")

Build = Literal["hip", "cuda-only"]


@dataclass(frozen=True)
class RcclVar:
    name: str
    build: Build  # "cuda-only": RCCL's source names it only in code a HIP build does not compile
    source: str  # file:line at RCCL_TAG

    @property
    def read(self) -> bool:
        return self.build == "hip"


@lru_cache(maxsize=1)
def _table() -> dict[str, RcclVar]:
    lines = [line for line in DATA_FILE.read_text(encoding="utf-8").splitlines() if line and not line.startswith("#")]
    return {row["name"]: RcclVar(row["name"], row["build"], row["source"])  # type: ignore[arg-type]
            for row in csv.DictReader(lines, delimiter="\t")}


def lookup(name: str) -> RcclVar | None:
    return _table().get(name)


def reads(name: str) -> bool:
    """True when RCCL's HIP build looks ``name`` up (an ``NCCL_*``, ``RCCL_*``, ``HSA_*`` or other name)."""
    var = lookup(name)
    return var is not None and var.read


def cuda_only(name: str) -> RcclVar | None:
    """The row of a name RCCL's source knows but its HIP build never reads (NVIDIA-only code), else None."""
    var = lookup(name)
    return var if var is not None and not var.read else None


def all_vars() -> list[RcclVar]:
    return list(_table().values())


# --------------------------------------------------------------------------- the AMD GPU operator

# ROCm/gpu-operator: Helm repository and chart name (helm-charts-k8s/README.md), and the release pinned
# by default: tag v1.5.1 (commit 858cf255c7dd27cebf1cc5db400eee3aa06ecbbc, 2026-07-21), whose
# helm-charts-k8s/values.yaml the values below are written for.
# The build installs the chart the AMD profile names (data/accelerators.yaml operator_chart); these, for
# recognising AMD's chart in hand-written files, equal it (tests/test_accelerator_profile.py).
AMD_GPU_OPERATOR_REPO = "https://rocm.github.io/gpu-operator"
AMD_GPU_OPERATOR_CHART = "gpu-operator-charts"
AMD_GPU_OPERATOR_VERSION = "1.5.1"
# Top-level values keys of AMD's chart (helm-charts/values.yaml at v1.0.0 to v1.2.x, helm-charts-k8s/values.yaml
# from v1.3.0 to v1.5.1) that no NVIDIA gpu-operator release has: they tell AMD's values from NVIDIA's, whose chart
# is also named gpu-operator (AMD's own Chart.yaml said `name: gpu-operator` at f9ca606b, v1.0.0's first commit).
# Shared by both: node-feature-discovery, draDriver, global.
AMD_GPU_OPERATOR_ONLY_KEYS = frozenset({
    "kmm", "installdefaultNFDRule", "controllerManager", "kmmDevicePlugin", "kmmModuleLoader",
    "kubernetesClusterDomain", "managerConfig", "metricsService", "nodeLabeller", "metricsExporter", "testRunner",
    "upgradeCRD", "crds", "deviceConfig", "configManager", "utilsContainer", "remediation", "defaultDCMConfigMap"})
AMD_GPU_OPERATOR_KEYS_SOURCE = "ROCm/gpu-operator helm-charts{,-k8s}/values.yaml at tags v1.0.0 to v1.5.1"
AMD_GPU_OPERATOR_GITHUB = "github.com/rocm/gpu-operator"  # Chart.yaml home/sources of AMD's chart, lower-cased
# The operator's prerequisite (helm-charts-k8s/README.md, Prerequisites): cert-manager, the version its
# README installs.
CERT_MANAGER_REPO = "https://charts.jetstack.io"
CERT_MANAGER_VERSION = "1.15.1"

# --------------------------------------------------------------------------- the RCCL test image

# ROCm/ROCm-docker dev/Dockerfile-ubuntu-22.04 at 0ae7bc0 ("release-6.4.1"): Ubuntu 22.04 with the
# repo.radeon.com ROCm 6.4.1 apt repository registered and rocm-dev installed; rccl-dev comes from it.
# The AMD profile's default test-image base (data/accelerators.yaml test_image, with the rccl-tests pin).
ROCM_BASE_IMAGE = "rocm/dev-ubuntu-22.04:6.4.1"

# Base images that carry CUDA/NCCL, not ROCm/RCCL: an AMD pool's test image must not start from them.
NVIDIA_IMAGE_PREFIXES = ("nvcr.io/", "nvidia/")


def is_nvidia_image(reference: str) -> bool:
    return reference.startswith(NVIDIA_IMAGE_PREFIXES) or "/cuda:" in reference or reference.startswith("cuda:")


def is_rocm_image(reference: str) -> bool:
    return reference.startswith("rocm/") or "/rocm/" in reference
