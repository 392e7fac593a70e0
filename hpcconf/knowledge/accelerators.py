"""Accelerator profiles: what the build needs to run one vendor's GPUs, read from ``data/accelerators.yaml``.

``resolve`` gives every pool the profile of its SKU's GPU vendor; targets read its fields (which operator,
which device resource, whether pods need a GPU runtime class) instead of comparing vendor strings, so a new
vendor is a row in the table plus its templates.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Optional

from .. import data_tables

DATA_FILE = Path(__file__).resolve().parents[1] / "data" / "accelerators.yaml"


class GpuOperator(enum.Enum):
    """The Kubernetes operator that installs a vendor's driver and device plugin (each has its own values file)."""

    NVIDIA = "nvidia-gpu-operator"
    AMD = "amd-gpu-operator"


class NhcFloor(enum.Enum):
    """Where the single-node all_reduce floor of Azure's health check comes from."""

    NCCL_FLOORS = "nccl_floors"  # hpcconf's floors table (data/nccl_floors.yaml), with the topology file
    NHC_CONF = "nhc_conf"  # the value Azure's own conf gives the size (data/nhc.yaml)


@dataclass(frozen=True)
class NhcProfile:
    """How Azure's node health checks (azurehpc-health-checks) test this vendor's GPUs."""

    gpu_count_args: tuple[str, ...]  # after the count: ``check_gpu_count 8 rocm``
    smi_checks: bool  # the ECC and NVLink checks (they read nvidia-smi) apply
    allreduce_check: str  # the single-node collective check's name
    allreduce_floor: NhcFloor


@dataclass(frozen=True)
class OperatorChart:
    """The Helm chart that installs a profile's operator."""

    chart: str
    repository: str
    version_prefix: str  # how the repository spells a version: "v" + 25.3.0
    version_pin: str  # the spec's ``versions`` field that pins it
    needs_cert_manager: bool = False  # the chart's prerequisite (its README installs cert-manager first)
    release: str = ""  # the Helm release provision.sh installs it as; its values file is <release>-values.yaml
    driver_docs: str = ""  # where the operator documents building the driver (its registry secret, the reboot)
    values_source: str = ""  # where the values keys hpcconf writes were read


@dataclass(frozen=True)
class TestImageRecipe:
    """How the test image of a profile's pool is built: its templates, default base and the tests it builds."""

    __test__ = False  # not a pytest class
    recipe: str  # templates image/<recipe>.Dockerfile.j2 and image/<recipe>.sh.j2; the script is image/<recipe>.sh
    default_base: str  # the base when the spec's test_image gives none
    mpi_home: str  # the MPI the tests build against, inside the base
    version_pin: Optional[str] = None  # the spec's versions field that pins the tests' release
    tests_repo: Optional[str] = None  # or a repository and commit (a tests project without release tags)
    tests_commit: Optional[str] = None
    copies_topology: bool = False  # hpcconf's topology files describe these GPUs: an AKS job's image carries one


@dataclass(frozen=True)
class AcceleratorProfile:
    vendor: str  # the SKU catalog's gpu.vendor this row describes
    collective_library: str  # its name as comments and job names print it: NCCL, RCCL
    pci_vendor: str  # the PCI vendor id its GPUs report (0x10de)
    cuda_compute_capability: bool  # its SKU files give gpu.sm
    operator: GpuOperator
    operator_label: str  # how comments name the operator
    device_resource: str  # the device plugin's resource: nvidia.com/gpu, amd.com/gpu
    visible_devices_env: Optional[str]  # set to "all" in privileged health-check pods; None: devices are visible
    gpu_runtime_class: bool  # pods need the operator's RuntimeClass to reach the GPUs
    device_order_env: bool  # CUDA_DEVICE_ORDER=PCI_BUS_ID applies
    nfd_workers_on_every_node: bool  # AKS does not label this vendor's nodes as accelerators
    nfd_extra_pci_classes: tuple[str, ...]  # PCI classes beyond the default whitelist that label the GPUs
    driver_built_by_operator: bool  # the operator builds the driver on the node (KMM) and pushes an image
    collective_tests: str  # the collective's tests project (nccl-tests, rccl-tests): its directory name
    reads_nccl_conf: bool  # the collective library reads /etc/nccl.conf (RCCL reads /etc/rccl.conf)
    runtime_path: Optional[str]  # the GPU runtime the tests load (ROCM_PATH); None: nothing to export
    azure_image_env: tuple[tuple[str, str], ...]  # what Azure's own tests of its image pass to every rank
    azure_image_layouts: tuple[tuple[str, str], ...] = ()  # (host arch, knowledge.images layout) of Azure's images
    operator_chart: Optional[OperatorChart] = None  # None only for a profile no AKS build uses
    driver_image: Optional[str] = None  # where the operator pushes the driver it builds (under the test image's registry)
    driver_name: Optional[str] = None  # the kernel driver the operator builds (amdgpu)
    nhc: Optional[NhcProfile] = None  # None: Azure's health checks do not know the vendor
    gpu_mesh: Optional[str] = None  # the fabric that links every GPU of a node to every other (xgmi); None: nvlink says
    sku_nvidia_sections: bool = False  # SKU files may give nvlink, topology and nccl sections for its GPUs
    slurm_gres_files: str = "nvidia"  # the device-file scheme of gres.conf File= (knowledge.slurm_gres.DEVICE_FILES)
    test_image: Optional[TestImageRecipe] = None  # None: hpcconf cannot build its test image (SPEC062 refuses one)

    @property
    def collective(self) -> str:
        """The SKU catalog's gpu.collective: ``nccl`` or ``rccl``."""
        return self.collective_library.lower()


def _profile(vendor: str, row: dict[str, Any]) -> AcceleratorProfile:
    return AcceleratorProfile(
        vendor=vendor, collective_library=str(row["collective_library"]),
        pci_vendor=str(row["pci_vendor"]), cuda_compute_capability=bool(row["cuda_compute_capability"]),
        operator=GpuOperator(row["operator"]), operator_label=str(row["operator_label"]),
        device_resource=str(row["device_resource"]), visible_devices_env=row.get("visible_devices_env"),
        gpu_runtime_class=bool(row["gpu_runtime_class"]), device_order_env=bool(row["device_order_env"]),
        nfd_workers_on_every_node=bool(row["nfd_workers_on_every_node"]),
        nfd_extra_pci_classes=tuple(str(c) for c in row["nfd_extra_pci_classes"]),
        driver_built_by_operator=bool(row["driver_built_by_operator"]),
        collective_tests=str(row["collective_tests"]), reads_nccl_conf=bool(row["reads_nccl_conf"]),
        runtime_path=row.get("runtime_path"),
        azure_image_env=tuple((str(key), str(value)) for key, value in row["azure_image_env"]),
        azure_image_layouts=tuple((str(arch), str(name)) for arch, name in row.get("azure_image_layouts", {}).items()),
        operator_chart=OperatorChart(**row["operator_chart"]) if row.get("operator_chart") else None,
        driver_image=row.get("driver_image"), driver_name=row.get("driver_name"),
        nhc=_nhc(row["nhc"]) if row.get("nhc") else None, gpu_mesh=row.get("gpu_mesh"),
        sku_nvidia_sections=bool(row.get("sku_nvidia_sections", False)),
        slurm_gres_files=str(row.get("slurm_gres_files", "nvidia")),
        test_image=TestImageRecipe(**row["test_image"]) if row.get("test_image") else None,
    )


def _nhc(row: dict[str, Any]) -> NhcProfile:
    return NhcProfile(gpu_count_args=tuple(str(a) for a in row["gpu_count_args"]), smi_checks=bool(row["smi_checks"]),
                      allreduce_check=str(row["allreduce_check"]), allreduce_floor=NhcFloor(row["allreduce_floor"]))


@lru_cache(maxsize=1)
def profiles() -> dict[str, AcceleratorProfile]:
    """Every profile in the table, by vendor."""
    data = data_tables.load(DATA_FILE)
    return {vendor: _profile(vendor, row) for vendor, row in data.items()}


def profile(vendor: str) -> AcceleratorProfile:
    return profiles()[vendor]
