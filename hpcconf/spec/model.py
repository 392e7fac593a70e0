"""The hpcconf spec: one YAML document describing a GPU cluster (``apiVersion: hpcconf/v1``).

Field names are the user's interface: snake_case, named for what they are in the
consumer's vocabulary (SKU, pool, resource name, IPAM range). Everything is strict:
unknown keys are errors. Defaults that depend on the hardware (GPUs per node, NCCL
settings, topology files) are not here; they come from the SKU catalog at resolve time,
so a minimal spec stays short.
"""

from __future__ import annotations

from typing import Annotated, Iterable, Literal, Optional

from pydantic import AfterValidator, ConfigDict, Field, field_validator, model_validator

from .aks import AksSettings
from .azhop import AzhopSettings
from .base import StrictModel
from .ccws import CcwsSettings
from .fields import check_env_name, check_image_reference, check_nccl_conf_value
from .slurm import SlurmSettings

API_VERSION = "hpcconf/v1"

NAME_PATTERN = r"^[a-z][a-z0-9-]{0,38}[a-z0-9]$"
VERSION_PATTERN = r"^v?\d+(\.\d+){0,3}([-.+][0-9A-Za-z.-]+)?$"
SIZE_PATTERN = r"^\d+[KMG]?$"
DOCA_OFED_PATTERN = r"^(doca\d+\.\d+\.\d+-)?\d+\.\d+-[0-9][0-9.]*(-\d+)?$|^v?\d+(\.\d+){0,3}([-.+][0-9A-Za-z.-]+)?$"
ENV_NAME_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]*$"


class Metadata(StrictModel):
    name: str = Field(pattern=NAME_PATTERN, description="Cluster name: lower case letters, digits and '-', 2-40 characters. Names the output directory and Azure resources.")
    location: str = Field(pattern=r"^[a-z][a-z0-9-]*[a-z0-9]$", description="Region: an Azure region such as southcentralus, or a provider's location such as us-east1-a.")
    resource_group: Optional[str] = Field(default=None, pattern=r"^[-\w._()]{1,90}$", description="Azure resource group (default: <name>-rg).")
    description: str = Field(default="", description="Free text, copied into generated headers.")


class Placement(StrictModel):
    colocate: Optional[bool] = Field(default=None, description="Keep the pool's nodes together (one placement group / scale set: AzHOP ColocateNodes). Needed for multi-node InfiniBand jobs, which only connect VMs of one placement group. Default: true when the SKU has InfiniBand, false otherwise (a placement group only caps the scale set).")

    def colocated(self, sku_has_infiniband: bool) -> bool:
        """The effective choice: the spec's, else colocated exactly when the SKU has InfiniBand."""
        return sku_has_infiniband if self.colocate is None else self.colocate


def _nccl_key(key: str) -> str:
    if not key.startswith("NCCL_") or not check_env_name(key):
        raise ValueError(f"'{key}' is not an NCCL variable; nccl_env takes NCCL_* keys only, put other variables in mpi_env")
    return key


def _env_key(key: str) -> str:
    if not check_env_name(key):
        raise ValueError(f"'{key}' is not a valid environment variable name; use letters, digits and '_'")
    return key


NcclKey = Annotated[str, AfterValidator(_nccl_key)]
NcclValue = Annotated[str, AfterValidator(check_nccl_conf_value)]
EnvKey = Annotated[str, AfterValidator(_env_key)]


class NodePool(StrictModel):
    name: str = Field(pattern=r"^[a-z][a-z0-9]{0,11}$", description="Pool / queue name: lower case letters and digits, at most 12 characters (AKS pool names and AzHOP hostnames are short).")
    sku: str = Field(description="VM size from the SKU catalog, e.g. Standard_ND96amsr_A100_v4 (see `hpcconf skus`).")
    count: int = Field(ge=1, le=1000, description="Number of nodes (AKS node count; AzHOP/Slurm max nodes).")
    image: Optional[str] = Field(default=None, description="OS image (AzHOP: publisher:offer:sku:version or image id). Default from the platform.")
    placement: Placement = Field(default_factory=Placement)
    os_disk_gb: int = Field(default=128, ge=30, le=4096, description="OS disk size in GB.")
    nccl_env: dict[NcclKey, NcclValue] = Field(
        default_factory=dict,
        description="NCCL_* settings for this pool only (its nccl.conf, Slurm job env and AKS test job); "
                    "a key set here overrides the same key in the cluster-level nccl_env.")


class InfinibandNetwork(StrictModel):
    enabled: bool = Field(default=True, description="Use InfiniBand where the SKU has it.")
    resource_name: str = Field(default="infiniband", pattern=r"^[a-z][a-z0-9_-]{0,62}$", description="Device-plugin resource name: pods request nvidia.com/<resource_name>. Must be the same everywhere (network-operator, HostDeviceNetwork, job).")
    ipam_range: str = Field(default="192.168.0.0/16", description="IPAM range (CIDR) for the secondary InfiniBand network.")
    ipoib: bool = Field(default=False, description="Deploy IPoIB (IP over InfiniBand) on the secondary network.")
    network_name: str = Field(default="hostdev-net", pattern=r"^[a-z][a-z0-9-]{0,62}$", description="Name of the HostDeviceNetwork (the Multus network pods attach to).")

    @field_validator("ipam_range")
    @classmethod
    def _cidr(cls, value: str) -> str:
        import ipaddress

        try:
            ipaddress.ip_network(value, strict=True)
        except ValueError as exc:
            raise ValueError(f"not a valid CIDR range ({exc}); write it like 192.168.0.0/16") from None
        return value


class Network(StrictModel):
    infiniband: InfinibandNetwork = Field(default_factory=InfinibandNetwork)


class Versions(StrictModel):
    """Pinned versions of everything the artifacts depend on. Defaults are current releases."""

    network_operator: str = Field(default="26.4.1", pattern=VERSION_PATTERN, description="NVIDIA network-operator Helm chart version.")
    gpu_operator: str = Field(default="26.7.0", pattern=VERSION_PATTERN, description="NVIDIA gpu-operator Helm chart version.")
    amd_gpu_operator: str = Field(default="1.5.1", pattern=VERSION_PATTERN, description="AMD GPU operator Helm chart version (ROCm/gpu-operator, chart gpu-operator-charts) for AMD Instinct pools on AKS.")
    node_feature_discovery: str = Field(default="0.19.0", pattern=VERSION_PATTERN, description="node-feature-discovery Helm chart version.")
    volcano: str = Field(default="1.15.1", pattern=VERSION_PATTERN, description="Volcano release.")
    nccl: str = Field(default="2.28.9", pattern=VERSION_PATTERN, description="NCCL version the test image and nodes run.")
    nccl_tests: str = Field(default="2.16.4", pattern=VERSION_PATTERN, description="nccl-tests release built into the test image.")
    gpu_driver: Optional[str] = Field(default=None, pattern=VERSION_PATTERN, description="NVIDIA driver version installed by gpu-operator (None: the chart's default).")
    doca_ofed: Optional[str] = Field(default=None, pattern=DOCA_OFED_PATTERN, description="MOFED / DOCA driver network-operator deploys on the nodes: a MOFED version for charts <= 24.7 (ofedDriver.version, e.g. 5.9-0.5.6.0) or the doca-driver image tag for the NicClusterPolicy from 24.10 on (e.g. doca3.4.1-26.04-1.1.0.0-1, without the -<os>-<arch> suffix the operator appends). Default: the chart's, or the tag NVIDIA pairs with the release (known for 24.10.0, 25.7.0, 26.1.0, 26.4.1).")
    az_cli: str = Field(default="2.75.0", pattern=VERSION_PATTERN, description="az CLI version the provisioning script is written for (the GPU-driver opt-out flag changed in 2.72.2).")
    kubectl: str = Field(default="1.30.0", pattern=VERSION_PATTERN, description="kubectl image tag for the job's wait-for-workers init container.")
    slurm: Optional[str] = Field(default=None, pattern=VERSION_PATTERN, description="Slurm version (AzHOP/Slurm platforms).")
    cyclecloud_slurm: Optional[str] = Field(default=None, pattern=VERSION_PATTERN, description="cyclecloud-slurm project version (AzHOP).")
    openmpi: Optional[str] = Field(default=None, pattern=VERSION_PATTERN, description="Open MPI version (decides coll_hcoll / coll_ucc settings).")
    ucx: Optional[str] = Field(default=None, pattern=VERSION_PATTERN, description="UCX version (decides valid UCX_TLS tokens).")


class TestImage(StrictModel):
    registry: str = Field(description="Container registry host, e.g. myacr.azurecr.io.", pattern=r"^[a-z0-9][a-z0-9.-]*(:\d+)?(/[a-z0-9._-]+)*$")
    name: str = Field(default="nccl-tests", pattern=r"^[a-z0-9][a-z0-9._/-]*$")
    tag: str = Field(pattern=r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$", description="Image tag. Pin it: 'latest' makes runs unrepeatable.")
    base: str = Field(default="nvcr.io/nvidia/pytorch:24.05-py3", description="Base image with CUDA, NCCL and MPI, pinned by tag or digest.")

    @field_validator("base")
    @classmethod
    def _pinned(cls, value: str) -> str:
        check_image_reference(value)
        last = value.rsplit("/", 1)[-1]
        if "@sha256:" not in value and (":" not in last or last.endswith(":latest")):
            raise ValueError(f"base image '{value}' is not pinned ('latest' or no tag changes under you); add a tag such as ':24.05-py3' or a @sha256 digest")
        return value


Collective = Literal["all_reduce", "all_gather", "reduce_scatter", "alltoall", "broadcast", "reduce", "sendrecv"]
# The generated test's default matrix: what all_reduce alone hides (AllGather/ReduceScatter algorithms, P2P).
DEFAULT_COLLECTIVES: tuple[Collective, ...] = ("all_reduce", "all_gather", "reduce_scatter", "alltoall", "sendrecv")


class NcclTest(StrictModel):
    pool: Optional[str] = Field(default=None, description="Pool to run on (default: the first GPU pool).")
    collective: Literal["all_reduce", "all_gather", "reduce_scatter", "alltoall", "broadcast", "reduce", "sendrecv"] = Field(default="all_reduce", description="nccl-tests binary: <collective>_perf.")
    min_bytes: str = Field(default="8", pattern=SIZE_PATTERN, description="-b: smallest message size (8, 1M, 1G).")
    max_bytes: str = Field(default="8G", pattern=SIZE_PATTERN, description="-e: largest message size.")
    step_factor: int = Field(default=2, ge=2, description="-f: multiply the size by this each step.")
    iterations: int = Field(default=20, ge=1, description="-n: timed iterations per size.")
    warmup_iterations: int = Field(default=5, ge=0, description="-w: warm-up iterations per size.")
    check: bool = Field(default=True, description="-c 1: check results.")
    collectives: list[Collective] = Field(
        default_factory=lambda: list(DEFAULT_COLLECTIVES),
        description="The matrix the generated test job runs, `collective` first; each log is judged by "
                    "`hpcconf nccl-report` at the end of the job.")
    ring_pass: bool = Field(
        default=True,
        description="Also run all_reduce with NCCL_ALGO=Ring over every node from 64M up (a ring crosses "
                    "every node boundary on every channel, so one slow NIC shows); judged by `hpcconf nccl-report`. "
                    "Multi-node tests only.")
    single_node: bool = Field(
        default=True,
        description="Also run all_reduce on one node with all its GPUs, up to the size of the SKU's single-node "
                    "health-check floor, judged against that floor (no floor sourced: reported, not failed). "
                    "Multi-node tests only.")

    def matrix(self) -> list[str]:
        return collective_matrix(self.collective, self.collectives)

    @model_validator(mode="after")
    def _size_range(self) -> "NcclTest":
        # nccl-tests refuses -b above -e ("invalid sizes") before running anything.
        if message_bytes(self.min_bytes) > message_bytes(self.max_bytes):
            raise ValueError(f"min_bytes {self.min_bytes} is larger than max_bytes {self.max_bytes}; "
                             "nccl-tests refuses the run (swap them)")
        return self


def collective_matrix(collective: str, collectives: "Iterable[str]") -> list[str]:
    """``collective`` first, then the other ``collectives`` in their order, each once."""
    return list(dict.fromkeys([collective, *collectives]))


def message_bytes(size: str) -> int:
    """nccl-tests' parsesize: a number with an optional K, M or G suffix (powers of 1024)."""
    factor = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(size[-1], 1)
    return int(size.rstrip("KMG")) * factor




class HealthChecks(StrictModel):
    enabled: bool = Field(
        default=True,
        description="Generate the Azure HPC node health checks (azurehpc-health-checks) per GPU pool from the SKU "
                    "catalog (health/<pool>/nhc.conf) and run them before the NCCL test: Slurm HealthCheckProgram, "
                    "AzHOP cluster-init, an AKS DaemonSet that taints failing nodes.")
    image: Optional[str] = Field(
        default=None,
        description="The health-check image: the AKS DaemonSet runs it on every GPU pool, and the node installers "
                    "(Slurm, AzHOP, CCWS cluster-init) pull it and give it the name run-health-checks.sh runs. "
                    "Default: Azure's image for the "
                    "pool's GPU vendor, mcr.microsoft.com/aznhc/aznhc-nv:latest (NVIDIA) or "
                    "mcr.microsoft.com/aznhc/aznhc-rocm:latest (AMD: its checks call rocm-smi and rccl-tests); Azure "
                    "publishes them under :latest only, so pin a digest (the installer logs the one it ran) for "
                    "repeatable runs.")
    interval_s: int = Field(default=3600, ge=60, description="Slurm HealthCheckInterval: seconds between runs on idle nodes.")

    @field_validator("image")
    @classmethod
    def _reference(cls, value: Optional[str]) -> Optional[str]:
        if value is not None:
            check_image_reference(value)
        return value


class Cluster(StrictModel):
    """An hpcconf cluster spec."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False, title="hpcconf cluster spec")

    apiVersion: Literal["hpcconf/v1"] = Field(description="Spec format version. Only hpcconf/v1 exists.")
    kind: Literal["Cluster"]
    metadata: Metadata
    platforms: list[Literal["aks", "azhop", "slurm", "ccws"]] = Field(min_length=1, description="Which artifact sets to generate; several at once is fine.")
    pools: list[NodePool] = Field(min_length=1, description="Node pools (AKS) / queues (AzHOP, Slurm partitions).")
    network: Network = Field(default_factory=Network)
    versions: Versions = Field(default_factory=Versions)
    test_image: Optional[TestImage] = Field(default=None, description="The NCCL test image (required for aks).")
    nccl_test: NcclTest = Field(default_factory=NcclTest)
    health_checks: HealthChecks = Field(default_factory=HealthChecks)
    nccl_env: dict[NcclKey, NcclValue] = Field(default_factory=dict, description="Extra or overriding NCCL_* settings for every GPU pool (written to nccl.conf / the job env); a pool's own nccl_env overrides a key set here.")
    mpi_env: dict[EnvKey, str] = Field(default_factory=dict, description="MPI/UCX/UCC environment (e.g. UCX_TLS, OMPI_MCA_coll_ucc_enable); written to an env file and the job.")
    sku_dirs: list[str] = Field(default_factory=list, description="Extra SKU catalog directories, relative to the spec file; they add or override SKUs.")
    aks: Optional[AksSettings] = None
    azhop: Optional[AzhopSettings] = None
    slurm: Optional[SlurmSettings] = None
    ccws: Optional[CcwsSettings] = Field(default=None, description="CycleCloud Workspace for Slurm (platform ccws): the parameters of its mainTemplate at a release tag.")

    @field_validator("platforms")
    @classmethod
    def _unique_platforms(cls, value: list[str]) -> list[str]:
        if len(set(value)) != len(value):
            raise ValueError("a platform is listed twice; list each platform once")
        return value

    @model_validator(mode="after")
    def _ccws_block(self) -> "Cluster":
        if "ccws" in self.platforms and self.ccws is None:
            raise ValueError("platform ccws needs a ccws: block (at least ccws.ssh_public_key, the admin's public key)")
        return self

