"""Compatibility facts between the parts a cluster is assembled from, each with its public source.

The tables live in ``hpcconf/data/compat/*.yaml`` (one row per fact, a ``source:`` per row);
this module loads them into frozen dataclasses and answers the questions resolve and lint ask:

- which driver branch still drives a GPU architecture (Maxwell, Pascal and Volta end with R580),
  and which driver to pin for it;
- which RDMA stack still supports an HCA generation (ConnectX-3: none since MLNX_OFED 5.1);
- which node OS a doca-driver tag is published for, and which Ubuntu AKS gives for a version;
- which CUDA / NCCL / HPC-X an NGC PyTorch tag ships;
- which cyclecloud-slurm release counts a VM size's GPUs right;
- which VM sizes are retired and which OS images are past end of life, with the date.

A question the tables cannot answer returns None: callers stay silent rather than guess.
"""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Optional

from .. import data_tables
from .versions import at_least, version_key

DATA_DIR = Path(__file__).resolve().parents[1] / "data" / "compat"


def version_at_least(version: str, threshold: str) -> bool:
    return at_least(version, threshold)


def driver_branch(driver_version: str) -> int:
    """'580.126.20' -> 580 (the branch is the driver's major number)."""
    return version_key(driver_version)[0]


@lru_cache(maxsize=None)
def _load(name: str) -> Any:
    return data_tables.load(DATA_DIR / f"{name}.yaml")


# -- GPU architecture <-> driver branch ----------------------------------------------------------

@dataclass(frozen=True)
class GpuArchitecture:
    name: str
    sm: tuple[int, ...]
    last_branch: Optional[int]  # None: current branches still drive it
    source: str


@dataclass(frozen=True)
class LegacyPin:
    branch: int
    driver: str
    source: str


@lru_cache(maxsize=1)
def gpu_architectures() -> tuple[GpuArchitecture, ...]:
    return tuple(GpuArchitecture(name=r["name"], sm=tuple(r["sm"]), last_branch=r["last_branch"], source=r["source"])
                 for r in _load("gpu_architectures")["architectures"])


def gpu_architecture(sm: Optional[int]) -> Optional[GpuArchitecture]:
    return next((a for a in gpu_architectures() if sm in a.sm), None)


@lru_cache(maxsize=1)
def legacy_pins() -> tuple[LegacyPin, ...]:
    return tuple(LegacyPin(branch=int(r["branch"]), driver=str(r["driver"]), source=r["source"])
                 for r in _load("gpu_architectures")["legacy_pins"])


def driver_drives(sm: Optional[int], driver_version: str) -> Optional[bool]:
    """Whether driver ``driver_version`` supports compute capability ``sm`` (None: unknown architecture)."""
    arch = gpu_architecture(sm)
    if arch is None:
        return None
    return arch.last_branch is None or driver_branch(driver_version) <= arch.last_branch


def legacy_driver_pin(sm: Optional[int]) -> Optional[LegacyPin]:
    """The driver to pin for an architecture whose support ended with a branch; None when current."""
    arch = gpu_architecture(sm)
    if arch is None or arch.last_branch is None:
        return None
    return next((p for p in legacy_pins() if p.branch == arch.last_branch), None)


def gpu_operator_default_driver(chart_version: str) -> Optional[str]:
    """The driver a gpu-operator release installs by default (its values.yaml ``driver.version``)."""
    from . import charts

    value = charts.chart_default("gpu-operator", chart_version, "driver.version")
    return str(value) if value is not None else None


# -- HCA generation <-> RDMA stack --------------------------------------------------------------

@dataclass(frozen=True)
class HcaGeneration:
    generation: str
    kernel_driver: str
    last_mlnx_ofed: Optional[str]
    unsupported_since: Optional[str]  # first MLNX_OFED release without it
    doca: bool  # DOCA-OFED (network-operator >= 24.7, current Azure HPC images) supports it
    source: str

    @property
    def has_current_rdma_stack(self) -> bool:
        return self.unsupported_since is None and self.doca


@lru_cache(maxsize=1)
def hca_generations() -> tuple[HcaGeneration, ...]:
    rows = _load("nics")["hcas"]
    return tuple(HcaGeneration(generation=r["generation"], kernel_driver=r["kernel_driver"],
                               last_mlnx_ofed=r["last_mlnx_ofed"], unsupported_since=r["unsupported_since"],
                               doca=bool(r["doca"]), source=r["source"]) for r in rows)


def hca_generation(hca: Optional[str]) -> Optional[HcaGeneration]:
    """The generation an HCA description names ('ConnectX-3 VF (mlx4)' -> ConnectX-3)."""
    if not hca:
        return None
    for row in sorted(hca_generations(), key=lambda r: -len(r.generation)):
        if re.search(rf"\b{re.escape(row.generation)}(?![0-9])", hca, re.I):
            return row
    return None


# -- node OS: AKS default Ubuntu, doca-driver tags ----------------------------------------------

@dataclass(frozen=True)
class AksUbuntu:
    kubernetes_from: str
    kubernetes_until: Optional[str]
    ubuntu: str
    os_sku: str
    source: str


@dataclass(frozen=True)
class DocaDriverTag:
    tag: str
    os: tuple[str, ...]
    source: str


@lru_cache(maxsize=1)
def aks_default_ubuntu_table() -> tuple[AksUbuntu, ...]:
    return tuple(AksUbuntu(kubernetes_from=str(r["kubernetes_from"]),
                           kubernetes_until=str(r["kubernetes_until"]) if r["kubernetes_until"] else None,
                           ubuntu=str(r["ubuntu"]), os_sku=r["os_sku"], source=r["source"])
                 for r in _load("node_os")["aks_default_ubuntu"])


def aks_default_ubuntu(kubernetes_version: str) -> Optional[AksUbuntu]:
    """The Ubuntu release ``--os-sku Ubuntu`` gives on AKS at this Kubernetes version (None: not in the table)."""
    for row in aks_default_ubuntu_table():
        if version_at_least(kubernetes_version, row.kubernetes_from) and \
                (row.kubernetes_until is None or not version_at_least(kubernetes_version, row.kubernetes_until)):
            return row
    return None


@lru_cache(maxsize=1)
def doca_driver_tags() -> tuple[DocaDriverTag, ...]:
    return tuple(DocaDriverTag(tag=str(r["tag"]), os=tuple(r["os"]), source=r["source"])
                 for r in _load("node_os")["doca_driver_os"])


def doca_driver_tag(tag: Optional[str]) -> Optional[DocaDriverTag]:
    return next((t for t in doca_driver_tags() if t.tag == tag), None) if tag else None


@dataclass(frozen=True)
class OsSupportSince:
    os: str  # "ubuntu24.04"
    since: str  # first gpu-operator release that supports it
    source: str


@dataclass(frozen=True)
class DriverImageOs:
    os: str
    branch: int
    first: str  # the first driver version of the branch with an image for the OS
    source: str


# The first driver image tags for Ubuntu 24.04 were pushed on this day (NVIDIA/gpu-driver-container#38).
FIRST_UBUNTU2404_DRIVER_IMAGES = _dt.date(2025, 2, 3)


@lru_cache(maxsize=1)
def gpu_operator_os_table() -> tuple[OsSupportSince, ...]:
    return tuple(OsSupportSince(os=str(r["os"]), since=str(r["since"]), source=r["source"])
                 for r in _load("node_os")["gpu_operator_os"])


def gpu_operator_os_support(node_os: str) -> Optional[OsSupportSince]:
    """The first gpu-operator release that supports ``node_os`` ('ubuntu24.04'); None when not in the table."""
    return next((r for r in gpu_operator_os_table() if r.os == node_os), None)


@lru_cache(maxsize=1)
def driver_image_os_table() -> tuple[DriverImageOs, ...]:
    return tuple(DriverImageOs(os=str(r["os"]), branch=int(r["branch"]), first=str(r["first"]), source=r["source"])
                 for r in _load("node_os")["driver_image_os"])


def driver_image_missing(driver_version: str, node_os: str) -> Optional[DriverImageOs]:
    """The table row proving ``nvcr.io/nvidia/driver:<driver_version>-<node_os>`` does not exist (the branch's
    first image for that OS is newer); None when it exists or the table cannot tell."""
    branch = driver_branch(driver_version)
    row = next((r for r in driver_image_os_table() if r.os == node_os and r.branch == branch), None)
    return row if row is not None and not version_at_least(driver_version, row.first) else None


def driver_branch_predates_os_images(driver_version: str, node_os: str) -> bool:
    """Whether the driver's branch is older than every branch with a known image for ``node_os``
    (no such image was published by the first push; whether one came later is unknown)."""
    branches = [r.branch for r in driver_image_os_table() if r.os == node_os]
    return bool(branches) and driver_branch(driver_version) < min(branches)


@dataclass(frozen=True)
class AksKubernetesSupport:
    minor: str  # "1.31"
    end_of_life: _dt.date
    lts_end_of_life: Optional[_dt.date]
    source: str

    def creatable(self, today: Optional[_dt.date] = None) -> str:
        """``"yes"``, ``"lts"`` (only on the Premium tier with long-term support) or ``"no"``, on ``today``."""
        today = today or _dt.date.today()
        if today <= self.end_of_life:
            return "yes"
        if self.lts_end_of_life is not None and today <= self.lts_end_of_life:
            return "lts"
        return "no"


def _month_end(value: Any) -> _dt.date:
    """A calendar date; ``YYYY-MM`` means the month's last day (the AKS calendar's convention)."""
    if isinstance(value, _dt.date):
        return value
    text = str(value)
    if re.fullmatch(r"\d{4}-\d{2}", text):
        year, month = int(text[:4]), int(text[5:])
        first_of_next = _dt.date(year + month // 12, month % 12 + 1, 1)
        return first_of_next - _dt.timedelta(days=1)
    return _dt.date.fromisoformat(text)


@lru_cache(maxsize=1)
def aks_kubernetes_support_table() -> tuple[AksKubernetesSupport, ...]:
    return tuple(AksKubernetesSupport(
        minor=str(r["minor"]), end_of_life=_month_end(r["end_of_life"]),
        lts_end_of_life=_month_end(r["lts_end_of_life"]) if r["lts_end_of_life"] else None, source=r["source"])
        for r in _load("node_os")["aks_kubernetes_support"])


def aks_kubernetes_support(kubernetes_version: str) -> Optional[AksKubernetesSupport]:
    """The AKS support row of a Kubernetes version (``1.31`` or ``1.31.2``); None when the table has none."""
    minor = ".".join(str(kubernetes_version).split(".")[:2])
    return next((r for r in aks_kubernetes_support_table() if r.minor == minor), None)


def aks_kubernetes_older_than_calendar(kubernetes_version: str) -> Optional[AksKubernetesSupport]:
    """The table's oldest row when ``kubernetes_version`` is an older minor than every row: AKS retires minors in
    order, so that version ended before the oldest row did. None otherwise."""
    table = aks_kubernetes_support_table()
    oldest = min(table, key=lambda r: version_key(r.minor))
    if version_key(".".join(str(kubernetes_version).split(".")[:2])) < version_key(oldest.minor):
        return oldest
    return None


# -- NGC PyTorch containers -------------------------------------------------------------------

NGC_PYTORCH = re.compile(r"^(?:nvcr\.io/)?nvidia/pytorch:(\d{2}\.\d{2})-py3$")


@dataclass(frozen=True)
class NgcRelease:
    tag: str  # "24.05"
    cuda: str
    nccl: str
    hpcx: Optional[str]
    ubuntu: str
    source: str


@lru_cache(maxsize=1)
def ngc_pytorch_releases() -> tuple[NgcRelease, ...]:
    return tuple(NgcRelease(tag=str(r["tag"]), cuda=str(r["cuda"]), nccl=str(r["nccl"]),
                            hpcx=str(r["hpcx"]) if r["hpcx"] else None, ubuntu=str(r["ubuntu"]), source=r["source"])
                 for r in _load("ngc_pytorch")["releases"])


def ngc_pytorch_tag(image: str) -> Optional[str]:
    """'nvcr.io/nvidia/pytorch:24.05-py3' -> '24.05'; None for any other image (or a digest)."""
    match = NGC_PYTORCH.match(image.strip())
    return match.group(1) if match else None


def ngc_release(image: str) -> Optional[NgcRelease]:
    """What an NGC PyTorch image ships, when the table has its tag."""
    tag = ngc_pytorch_tag(image)
    return next((r for r in ngc_pytorch_releases() if r.tag == tag), None) if tag else None


# -- cyclecloud-slurm <-> GPU SKU ---------------------------------------------------------------

@dataclass(frozen=True)
class GpuCountFix:
    skus: tuple[str, ...]
    fixed_in: str
    source: str


@lru_cache(maxsize=1)
def cyclecloud_slurm_gpu_count_fixes() -> tuple[GpuCountFix, ...]:
    return tuple(GpuCountFix(skus=tuple(r["skus"]), fixed_in=str(r["fixed_in"]), source=r["source"])
                 for r in _load("cyclecloud_slurm")["gpu_count"])


def cyclecloud_slurm_gpu_count_fixed_for(sku_name: str) -> Optional[GpuCountFix]:
    """The GPU-count fix that concerns ``sku_name`` whatever the version (None: the size is not concerned)."""
    return next((fix for fix in cyclecloud_slurm_gpu_count_fixes() if sku_name in fix.skus), None)


def cyclecloud_slurm_gpu_count_fix(sku_name: str, version: str) -> Optional[GpuCountFix]:
    """The fix ``version`` lacks for ``sku_name`` (None when it has it or none is needed)."""
    for fix in cyclecloud_slurm_gpu_count_fixes():
        if sku_name in fix.skus and not version_at_least(version, fix.fixed_in):
            return fix
    return None


# -- retired SKUs and images --------------------------------------------------------------------

@dataclass(frozen=True)
class Retirement:
    name: str  # the family or OS
    date: _dt.date
    replacement: str
    source: str

    def passed(self, today: Optional[_dt.date] = None) -> bool:
        return (today or _dt.date.today()) >= self.date


@dataclass(frozen=True)
class _ImageRetirement:
    pattern: re.Pattern[str]
    retirement: Retirement


@lru_cache(maxsize=1)
def _sku_retirements() -> dict[str, Retirement]:
    table: dict[str, Retirement] = {}
    for row in _load("retirements")["skus"]:
        retirement = Retirement(name=row["family"], date=_as_date(row["retired"]), replacement=row["replacement"],
                                source=row["source"])
        table.update({name: retirement for name in row["names"]})
    return table


@lru_cache(maxsize=1)
def _image_retirements() -> tuple[_ImageRetirement, ...]:
    return tuple(_ImageRetirement(re.compile(r["match"]), Retirement(
        name=r["name"], date=_as_date(r["end_of_life"]), replacement=r["replacement"], source=r["source"]))
        for r in _load("retirements")["images"])


def _as_date(value: Any) -> _dt.date:
    return value if isinstance(value, _dt.date) else _dt.date.fromisoformat(str(value))


def sku_retirement(sku_name: str) -> Optional[Retirement]:
    return _sku_retirements().get(sku_name)


def image_retirement(image: Optional[str]) -> Optional[Retirement]:
    """The end of life an image reference (URN, image id or CycleCloud name) falls under."""
    if not image:
        return None
    return next((r.retirement for r in _image_retirements() if r.pattern.search(image)), None)


# -- Azure Marketplace image versions ----------------------------------------------------------

@dataclass(frozen=True)
class MarketplacePin:
    image: str  # publisher:offer:sku
    version: str
    published: _dt.date
    source: str

    @property
    def urn(self) -> str:
        return f"{self.image}:{self.version}"


@lru_cache(maxsize=1)
def marketplace_pins() -> tuple[MarketplacePin, ...]:
    return tuple(MarketplacePin(image=str(r["image"]), version=str(r["version"]), published=_as_date(r["published"]),
                                source=r["source"]) for r in _load("azure_images")["marketplace_pins"])


def floating_marketplace_image(image: str) -> bool:
    """A ``publisher:offer:sku:latest`` URN (a resource ID or a pinned version is not floating)."""
    parts = image.strip().split(":")
    return "/" not in image and len(parts) == 4 and all(parts) and parts[3].lower() == "latest"


def marketplace_pin(image: str) -> Optional[MarketplacePin]:
    """The published version hpcconf pins for a marketplace URN's publisher:offer:sku (case-insensitive)."""
    parts = image.strip().split(":")
    if "/" in image or len(parts) != 4:
        return None
    key = ":".join(parts[:3]).lower()
    return next((p for p in marketplace_pins() if p.image.lower() == key), None)


# -- SKU x platform: pairs that cannot work -----------------------------------------------------

def unsupported_reason(sku: Any, platform: str, *, infiniband: bool = True,
                       today: Optional[_dt.date] = None) -> Optional[str]:
    """Why ``sku`` cannot work on ``platform`` (a sentence), or None. ``sku`` is a catalog Sku."""
    retired = sku_retirement(sku.name) if sku.provider == "azure" else None
    if retired is not None and retired.passed(today):
        return f"{sku.name} ({retired.name}) was retired on {retired.date.isoformat()}; use {retired.replacement}"
    hca = hca_generation(sku.infiniband.hca) if infiniband and sku.infiniband else None
    if hca is not None and not hca.has_current_rdma_stack:
        return (f"{sku.name}'s {hca.generation} HCA has no RDMA stack: MLNX_OFED dropped it in {hca.unsupported_since} "
                f"(last: {hca.last_mlnx_ofed} LTS) and DOCA never supported it")
    return None
