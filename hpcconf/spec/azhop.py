"""Spec section `azhop:`: what the AzHOP ``config.yml`` needs beyond the pools.

Every field is optional: ``azhop: {}`` gives a working deployment with az-hop's own defaults
(config.tpl.yml) -- a /23 VNet carved into az-hop's subnets, an Azure Files home, Slurm with the
newest supported version pair, the template's users, groups and infra VM sizes. GPU pools become
queues; ``extra_queues`` adds the queues that are not GPU pools (CPU, remote viz), in az-hop's terms.
"""

from __future__ import annotations

import ipaddress
from typing import Literal, Optional

from pydantic import Field, field_validator, model_validator

from ..knowledge.azhop_facts import BUILTIN_GROUPS
from .base import StrictModel

# az-hop's infra VM names and queue names end up in NetBIOS hostnames (15 characters).
_QUEUE_NAME = r"^[a-z][a-z0-9-]{0,7}$"
_GROUP_NAME = r"^[A-Za-z][A-Za-z0-9 ._-]{0,63}$"
_USER_NAME = r"^[a-z_][a-z0-9._-]{0,19}$"
_VM_SIZE = r"^Standard_[A-Za-z0-9_-]+$"


def _cidr(value: Optional[str]) -> Optional[str]:
    if value is None:
        return value
    try:
        ipaddress.IPv4Network(value, strict=True)
    except ValueError as exc:
        raise ValueError(f"'{value}' is not an IPv4 CIDR range ({exc}); write it like 10.0.0.0/24") from None
    return value


class Subnets(StrictModel):
    """Explicit subnet ranges. Give none to let hpcconf carve them; give any and you give the whole layout."""

    frontend: Optional[str] = Field(default=None, description="OnDemand portal and deployer/jumpbox (az-hop default /29).")
    admin: Optional[str] = Field(default=None, description="Scheduler, CycleCloud, Grafana (/28).")
    compute: Optional[str] = Field(default=None, description="Every queue's nodes: needs (size - 5) addresses >= the sum of the queues' max nodes.")
    ad: Optional[str] = Field(default=None, description="Active Directory VM (/29); needed when authentication.user_auth is ad.")
    netapp: Optional[str] = Field(default=None, description="Delegated subnet for Azure NetApp Files (/28); needed for an ANF home.")
    lustre: Optional[str] = Field(default=None, description="AMLFS subnet; its size bounds the file system (/27 up to 16 TiB ... /23 up to 400 TiB).")
    database: Optional[str] = Field(default=None, description="Managed MySQL for Slurm accounting (/28); needed when slurm_accounting is on.")
    bastion: Optional[str] = Field(default=None, description="AzureBastionSubnet, /26 or larger; needed when network.bastion is on.")
    gateway: Optional[str] = Field(default=None, description="GatewaySubnet, /27 or larger; needed when network.vpn_gateway is on.")

    @field_validator("*")
    @classmethod
    def _cidrs(cls, value: Optional[str]) -> Optional[str]:
        return _cidr(value)

    def given(self) -> dict[str, str]:
        return {role: cidr for role, cidr in self.model_dump().items() if cidr is not None}


class Network(StrictModel):
    vnet_name: str = Field(default="hpcvnet", pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$", description="Name of the VNet az-hop creates.")
    address_space: str = Field(default="10.0.0.0/23", description="VNet address space (IPv4 CIDR). A /23 holds az-hop's subnets and a /24 compute subnet (251 nodes).")
    subnets: Optional[Subnets] = Field(default=None, description="Explicit subnet ranges; omit to carve them from address_space (compute takes the upper half).")
    bastion: bool = Field(default=False, description="Create an Azure Bastion (needs a /26 bastion subnet).")
    vpn_gateway: bool = Field(default=False, description="Create a VPN gateway (needs a gateway subnet).")
    public_ip: bool = Field(default=True, description="Public IPs for the deployer/jumpbox and OnDemand (locked_down_network.public_ip).")
    nat_gateway: bool = Field(default=True, description="Create a NAT gateway for the subnets' outbound internet access (az-hop's config.tpl.yml default; without it az-hop creates none, and new VNets get no default outbound access: learn.microsoft.com default-outbound-access).")

    @field_validator("address_space")
    @classmethod
    def _space(cls, value: str) -> str:
        _cidr(value)
        return value


class Home(StrictModel):
    """The users' home directory, shared by every node."""

    type: Literal["azurefiles", "anf", "existing"] = Field(default="azurefiles", description="azurefiles: NFS Azure Files (cheapest: ~$12.5/day backbone at 1 TiB in 2023, jingchaozhang.github.io 'Azhop backbone cost analyses'); anf: Azure NetApp Files (4 TiB minimum); existing: an NFS export you already have.")
    mountpoint: str = Field(default="/anfhome", pattern=r"^/[A-Za-z0-9._/-]*$", description="Where home is mounted on every node (az-hop's default /anfhome, whatever the storage).")
    size_gib: int = Field(default=1024, ge=100, le=102400, description="azurefiles: share size in GiB (1024 is az-hop's config.tpl.yml default).")
    size_tib: int = Field(default=4, ge=4, le=100, description="anf: volume size in TiB (az-hop's range 4-100).")
    service_level: Literal["Standard", "Premium", "Ultra"] = Field(default="Standard", description="anf: service level.")
    server: Optional[str] = Field(default=None, description="existing: NFS server name or IP.")
    export: Optional[str] = Field(default=None, description="existing: NFS export path.")
    options: Optional[str] = Field(default=None, description="Mount options; default: az-hop's own for anf/azurefiles, rw,hard,vers=3,tcp,_netdev for existing.")


class Lustre(StrictModel):
    """An Azure Managed Lustre file system (AMLFS) mounted on every node; deployed by az-hop's Bicep path."""

    sku: Literal["AMLFS-Durable-Premium-40", "AMLFS-Durable-Premium-125", "AMLFS-Durable-Premium-250", "AMLFS-Durable-Premium-500"] = Field(
        default="AMLFS-Durable-Premium-250", description="AMLFS tier: MB/s per TiB. Capacity grows in steps of 48/16/8/4 TiB for -40/-125/-250/-500.")
    capacity_tib: int = Field(default=8, ge=4, description="Size in TiB: a multiple of the tier's step. Sets the lustre subnet size (learn.microsoft.com amlfs-prerequisites: one address per server).")
    hsm_storage_account: Optional[str] = Field(default=None, description="Existing storage account for HSM archive (default: az-hop's own).")
    hsm_storage_container: Optional[str] = Field(default=None, description="Container in hsm_storage_account.")


class Storage(StrictModel):
    home: Home = Field(default_factory=Home, description="The shared home directory (default: 1 TiB NFS Azure Files on /anfhome).")
    lustre: Optional[Lustre] = Field(default=None, description="Add an AMLFS file system (omit for none).")


class User(StrictModel):
    name: str = Field(pattern=_USER_NAME, description="Login name, under 20 characters.")
    uid: int = Field(ge=1000, le=2147483647, description="Unique numeric user id.")
    groups: list[str] = Field(default_factory=list, description="Names of groups (from `groups`) the user joins besides the all-users group.")
    shell: Optional[str] = Field(default=None, description="Login shell (az-hop default /bin/bash).")


class Group(StrictModel):
    name: str = Field(pattern=_GROUP_NAME, description="Group name. gids 5000/5001/5002 are az-hop's built-in all-users/admins/local-admins groups.")
    gid: int = Field(ge=1000, le=2147483647, description="Unique group id; az-hop maps its roles by gid (5000, 5001, 5002), custom groups use 6000 and up.")
    description: Optional[str] = Field(default=None, description="Free text shown by az-hop.")


def _default_groups() -> list[Group]:
    return [Group(name=name, gid=gid, description=description) for name, gid, description in BUILTIN_GROUPS]


def _default_users() -> list[User]:
    return [User(name="clusteradmin", uid=10001, groups=["azhop-admins", "azhop-localadmins"]), User(name="hpcuser", uid=10002)]


class VmSizes(StrictModel):
    """Sizes of az-hop's own VMs (config.tpl.yml defaults)."""

    scheduler: str = Field(default="Standard_B2ms", pattern=_VM_SIZE, description="The Slurm/PBS controller VM.")
    ondemand: str = Field(default="Standard_D4s_v5", pattern=_VM_SIZE, description="The Open OnDemand portal VM.")
    cyclecloud: str = Field(default="Standard_B2ms", pattern=_VM_SIZE, description="The CycleCloud VM that starts and stops the queues' nodes.")
    ad: str = Field(default="Standard_B2ms", pattern=_VM_SIZE, description="Only used when authentication.user_auth is ad.")
    grafana: str = Field(default="Standard_B2ms", pattern=_VM_SIZE, description="Only used when monitoring is on.")
    deployer: str = Field(default="Standard_B2ms", pattern=_VM_SIZE, description="The deployer (Bicep) or jumpbox VM.")


class Images(StrictModel):
    gpu: str = Field(default="microsoft-dsvm:ubuntu-hpc:2204:latest", description="Default image of GPU queues: must carry the NVIDIA driver (an HPC image). A pool's own `image` wins. Left unset, `:latest` is pinned to a published version hpcconf knows (22.04.2024102301), so every node of a queue boots the same image.")
    cpu: str = Field(default="azhpc:azhop-compute:ubuntu-2004:latest", description="Default image of extra_queues. Left unset, hpcconf uses the Ubuntu 22.04 HPC image at a pinned version (Ubuntu 20.04 is past end of life).")
    linux_base: str = Field(default="OpenLogic:CentOS:7_9-gen2:latest", description="Image of az-hop's Linux infra VMs (linux_base_image).")
    windows_base: str = Field(default="MicrosoftWindowsServer:WindowsServer:2019-Datacenter-smalldisk:latest", description="Image of the AD VM (windows_base_image).")


class ExtraQueue(StrictModel):
    """A queue that is not a GPU pool (CPU partitions, remote viz), written as az-hop writes it."""

    name: str = Field(pattern=_QUEUE_NAME, description="Queue / partition name: lower case, digits, '-', at most 8 characters (hostnames are cut at 15).")
    vm_size: str = Field(pattern=_VM_SIZE, description="Azure VM size, e.g. Standard_F2s_v2.")
    max_count: Optional[int] = Field(default=None, ge=0, le=10000, description="Most nodes (0 disables the queue).")
    max_core_count: Optional[int] = Field(default=None, ge=0, description="Most cores; with max_count the lower limit wins.")
    image: Optional[str] = Field(default=None, description="publisher:offer:sku:version or image ID (default: azhop.images.cpu).")
    colocate: bool = Field(default=False, description="ColocateNodes: one placement group (only for tightly coupled MPI).")
    spot: bool = Field(default=False, description="Use spot VMs.")
    accelerated_networking: bool = Field(default=False, description="EnableAcceleratedNetworking (the size must support it).")
    type: Literal["compute", "remoteviz", "login"] = Field(default="compute", description="login nodes are Slurm-only and start with initial_count nodes.")
    initial_count: Optional[int] = Field(default=None, ge=0, description="Nodes started at deploy (type login).")
    idle_timeout: Optional[int] = Field(default=None, ge=60, description="Seconds idle before a node stops; below autoscale_idle_timeout.")

    @model_validator(mode="after")
    def _limit(self) -> "ExtraQueue":
        if self.max_count is None and self.max_core_count is None:
            raise ValueError("give max_count (nodes) or max_core_count (cores)")
        return self


class AzhopSettings(StrictModel):
    project_name: Optional[str] = Field(default=None, pattern=r"^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$", description="az-hop project_name (default: metadata.name).")
    admin_user: str = Field(default="hpcadmin", pattern=r"^[a-z_][a-z0-9_-]{0,31}$", description="Admin account on every VM.")
    queue_manager: Literal["slurm", "openpbs"] = Field(default="slurm", description="Scheduler az-hop installs. ColocateNodes (IB placement) works with slurm only.")
    slurm_accounting: bool = Field(default=False, description="Slurm accounting in a managed MySQL (adds a database subnet; ~$3/day in 2023, jingchaozhang.github.io 'Azhop backbone cost analyses').")
    slurm_cluster_name: Optional[str] = Field(default=None, pattern=r"^[a-z][a-z0-9_]{0,39}$", description="Slurm accounting cluster name (az-hop default 'slurm'); never change it on a running cluster.")
    database_fqdn: Optional[str] = Field(default=None, description="Existing MySQL server for accounting (no database subnet then).")
    user_auth: Literal["ad", "local"] = Field(default="ad", description="ad: az-hop deploys an Active Directory VM (ad subnet); local: local users on every node.")
    access: Literal["deployer", "jumpbox"] = Field(default="deployer", description="deployer: a VM that runs az-hop's install (Bicep path, needed for AMLFS); jumpbox: you deploy from your machine through it.")
    network: Network = Field(default_factory=Network, description="The VNet az-hop creates and its subnets.")
    storage: Storage = Field(default_factory=Storage, description="Home directory and optional AMLFS.")
    users: list[User] = Field(default_factory=_default_users, description="Cluster users (az-hop template's clusteradmin and hpcuser by default).")
    groups: list[Group] = Field(default_factory=_default_groups, description="User groups; keep gids 5000-5002 (az-hop maps roles by gid).")
    vm_sizes: VmSizes = Field(default_factory=VmSizes, description="Sizes of az-hop's infrastructure VMs.")
    images: Images = Field(default_factory=Images, description="Default images of queues and infrastructure VMs.")
    extra_queues: list[ExtraQueue] = Field(default_factory=list, description="Queues besides the GPU pools (CPU, remote viz).")
    default_queue: Optional[str] = Field(default=None, description="Queue listed first, i.e. Slurm's default partition (default: the first pool).")
    autoscale_idle_timeout: int = Field(default=1800, ge=60, description="Seconds a node may idle before CycleCloud stops it (autoscale.idle_timeout).")
    monitoring: bool = Field(default=True, description="Deploy Grafana and Telegraf (needs the grafana VM).")
    tags: dict[str, str] = Field(default_factory=dict, description="Tags on the resource group.")
