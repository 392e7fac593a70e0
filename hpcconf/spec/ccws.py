"""Spec section `ccws:`: CycleCloud Workspace for Slurm (Azure/cyclecloud-slurm-workspace), the parameters of
``bicep/mainTemplate.bicep`` at a release tag, in the user's words.

Each field feeds one parameter of the release's ``types.bicep`` (named in its description); the defaults are the
portal's (``uidefinitions/createUiDefinition.json`` at 2026.07.02). The GPU pool is the ``gpu`` partition; the
``htc`` and ``hpc`` partitions, which every release requires, are described here. Secrets never live in the spec:
``deploy.sh`` passes ``adminPassword`` (and ``databaseAdminPassword``) from the environment.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Annotated, Literal, Optional, Union

from pydantic import Discriminator, Field, Tag, field_validator, model_validator

from ..knowledge import ccws as kb
from .base import StrictModel
from .slurm import check_public_key

# The portal's image choices (createUiDefinition.json ImageName at 2026.07.02); any other value is a custom image
# (an image id or publisher:offer:sku:version), as the portal's "Custom image" passes it.
PORTAL_IMAGES = ("cycle.image.ubuntu24", "cycle.image.ubuntu22", "almalinux8", "almalinux9")
DEFAULT_IMAGE = "cycle.image.ubuntu24"
AZURE_RESOURCE_ID = r"^/subscriptions/[^/]+/resourceGroups/[^/]+/providers/.+$"
IMAGE_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:/-]*$"


def _release(value: Optional[str]) -> Optional[str]:
    if value is not None and kb.release(value) is None:
        held = ", ".join(kb.releases())
        raise ValueError(f"hpcconf holds no schema for CCWS release '{value}' (it holds {held})")
    return value


class NewVnet(StrictModel):
    type: Literal["new"] = "new"
    address_space: str = Field(default="10.0.0.0/22", description="network.addressSpace: the new VNet; CCWS carves its subnets out of it as bicep/network-new.bicep does (the portal offers /20 to /24).")
    name: Optional[str] = Field(default=None, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$", description="network.name (None: CCWS's ccw-vnet).")
    bastion: bool = Field(default=False, description="network.bastion: create an Azure Bastion (and its subnet).")
    nat_gateway: bool = Field(default=True, description="network.createNatGateway: outbound access for the nodes (the portal's default).")

    @field_validator("address_space")
    @classmethod
    def _cidr(cls, value: str) -> str:
        try:
            ipaddress.IPv4Network(value, strict=True)
        except ValueError as exc:
            raise ValueError(f"not an IPv4 network without host bits ({exc}); write it like 10.0.0.0/22") from None
        return value


class ExistingVnet(StrictModel):
    type: Literal["existing"]
    id: str = Field(pattern=AZURE_RESOURCE_ID, description="network.id: the VNet's resource id (/subscriptions/.../providers/Microsoft.Network/virtualNetworks/NAME).")
    cyclecloud_subnet: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$", description="network.cyclecloudSubnet: subnet name of the CycleCloud VM, scheduler and login nodes.")
    compute_subnet: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$", description="network.computeSubnet: subnet name of the partitions' nodes.")
    netapp_subnet: Optional[str] = Field(default=None, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$", description="network.netappSubnet: a subnet delegated to Azure NetApp Files (needed by an anf-new filer).")
    lustre_subnet: Optional[str] = Field(default=None, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$", description="network.lustreSubnet: the subnet of a new Azure Managed Lustre.")

    @field_validator("id")
    @classmethod
    def _vnet_id(cls, value: str) -> str:
        if not re.search(r"/providers/Microsoft\.Network/virtualNetworks/[^/]+$", value, re.I):
            raise ValueError("not a VNet resource id; write /subscriptions/<id>/resourceGroups/<rg>/providers/"
                             "Microsoft.Network/virtualNetworks/<name>")
        return value

    @property
    def name(self) -> str:
        return self.id.rsplit("/", 1)[1]


def _vnet_type(value: object) -> str:
    """``type`` picks the variant; a VNet without one is a new VNet (the portal's default)."""
    found = value.get("type", "new") if isinstance(value, dict) else getattr(value, "type", "new")
    return str(found)


Vnet = Annotated[Union[Annotated[NewVnet, Tag("new")], Annotated[ExistingVnet, Tag("existing")]],
                 Discriminator(_vnet_type)]
AnfServiceLevel = Literal["Standard", "Premium", "Ultra", "Flexible"]


class NfsNew(StrictModel):
    type: Literal["nfs-new"] = "nfs-new"
    capacity_gb: int = Field(ge=1, description="nfsCapacityInGb: the builtin NFS disk on the scheduler.")


class NfsExisting(StrictModel):
    type: Literal["nfs-existing"]
    ip_address: str = Field(description="ipAddress: the NFS server.")
    export_path: str = Field(pattern=r"^/\S*$", description="exportPath.")
    mount_options: Optional[str] = Field(default=None, pattern=r"^[A-Za-z0-9_=,.:-]+$", description="mountOptions.")


class AnfNew(StrictModel):
    type: Literal["anf-new"]
    service_level: AnfServiceLevel = Field(default="Premium", description="anfServiceLevel.")
    capacity_tib: int = Field(ge=1, description="anfCapacityInTiB (ANF volumes are sized in TiB; 4 is the portal's default).")


Filer = Annotated[Union[NfsNew, NfsExisting, AnfNew], Field(discriminator="type")]


class AdditionalDisabled(StrictModel):
    type: Literal["disabled"] = "disabled"


class AdditionalAnfNew(AnfNew):
    mount_path: str = Field(default="/data", pattern=r"^/\S*$", description="mountPath.")


class AdditionalNfsExisting(NfsExisting):
    mount_path: str = Field(default="/data", pattern=r"^/\S*$", description="mountPath.")


class AmlNew(StrictModel):
    type: Literal["aml-new"]
    tier: Literal["AMLFS-Durable-Premium-40", "AMLFS-Durable-Premium-125", "AMLFS-Durable-Premium-250",
                  "AMLFS-Durable-Premium-500"] = Field(default="AMLFS-Durable-Premium-500", description="lustreTier.")
    capacity_tib: int = Field(ge=4, description="lustreCapacityInTib (the portal's smallest: 4).")
    mount_path: str = Field(default="/data", pattern=r"^/\S*$", description="mountPath.")
    availability_zone: Optional[Literal["1", "2", "3", "none"]] = Field(default=None, description="availabilityZone of the new Azure Managed Lustre: '1', '2' or '3', or 'none' for a region without zones. None: as the portal, zone 1 where the region has availability zones (hpcconf/data/azure_zones.yaml), none where it has none; a region hpcconf does not know is refused until you set it.")


class AmlExisting(StrictModel):
    type: Literal["aml-existing"]
    ip_address: str = Field(description="ipAddress: the Lustre MGS.")
    mount_path: str = Field(default="/data", pattern=r"^/\S*$", description="mountPath.")
    mount_options: Optional[str] = Field(default=None, pattern=r"^[A-Za-z0-9_=,.:-]+$", description="mountOptions.")


Additional = Annotated[Union[AdditionalDisabled, AdditionalAnfNew, AdditionalNfsExisting, AmlNew, AmlExisting],
                       Field(discriminator="type")]


def _sched_default() -> NfsNew:
    return NfsNew(capacity_gb=30)  # the portal's builtin NFS for /sched


def _shared_default() -> NfsNew:
    return NfsNew(capacity_gb=1024)  # the portal's builtin NFS for /shared


class Storage(StrictModel):
    sched: Filer = Field(default_factory=_sched_default, description="schedFilesystem: /sched (Slurm's configuration).")
    shared: Filer = Field(default_factory=_shared_default, description="sharedFilesystem: /shared (home directories).")
    additional: Additional = Field(default_factory=AdditionalDisabled, description="additionalFilesystem: a data filer (ANF, NFS or Azure Managed Lustre).")
    private_dns_zone: Literal["new", "existing", "none"] = Field(default="new", description="storagePrivateDnsZone.type: the blob private DNS zone.")
    private_dns_zone_id: Optional[str] = Field(default=None, pattern=AZURE_RESOURCE_ID, description="storagePrivateDnsZone.id (for 'existing').")

    @model_validator(mode="after")
    def _zone(self) -> "Storage":
        if (self.private_dns_zone == "existing") != (self.private_dns_zone_id is not None):
            raise ValueError("private_dns_zone_id is set exactly when private_dns_zone is 'existing' "
                             "(storagePrivateDnsZone_existing_t requires its id)")
        return self


class Node(StrictModel):
    sku: str = Field(description="VM size.")
    image: str = Field(default=DEFAULT_IMAGE, pattern=IMAGE_PATTERN, description=f"osImage: one of {', '.join(PORTAL_IMAGES)} or a custom image.")


class LoginNodes(Node):
    sku: str = Field(default="Standard_F4s_v2", description="VM size of the login nodes (the portal's default).")
    initial_nodes: int = Field(default=1, ge=0, description="loginNodes.initialNodes.")
    max_nodes: int = Field(default=1, ge=0, description="loginNodes.maxNodes.")


class Scheduler(Node):
    sku: str = Field(default="Standard_D4as_v5", description="VM size of the scheduler (the portal's default).")


class CpuPartition(Node):
    max_nodes: int = Field(ge=0, le=10000, description="maxNodes.")


def _htc_default() -> CpuPartition:
    return CpuPartition(sku="Standard_F2s_v2", max_nodes=100)  # the portal's htc partition (createUiDefinition.json)


def _hpc_default() -> CpuPartition:
    return CpuPartition(sku="Standard_HB120rs_v3", max_nodes=16)  # the portal's hpc partition (its first recommended size)


class OpenOnDemand(StrictModel):
    enabled: bool = Field(default=False, description="ood.type enabled: an Open OnDemand portal VM.")
    sku: str = Field(default="Standard_D4ads_v5", description="ood.sku.")
    image: str = Field(default=DEFAULT_IMAGE, pattern=IMAGE_PATTERN, description="ood.osImage.")
    fqdn: Optional[str] = Field(default=None, description="ood.fqdn (None: its private IP).")
    register_entra_app: bool = Field(default=False, description="ood.registerEntraIDApp: register a new Entra ID application (else the app_* ids).")
    app_id: Optional[str] = Field(default=None, description="ood.appId of an existing Entra ID application.")
    app_tenant_id: Optional[str] = Field(default=None, description="ood.appTenantId.")
    app_managed_identity_id: Optional[str] = Field(default=None, pattern=AZURE_RESOURCE_ID, description="ood.appManagedIdentityId.")

    @model_validator(mode="after")
    def _app(self) -> "OpenOnDemand":
        # ccw.bicep creates the managed identity when appManagedIdentityId is absent (createOODMI), not the app
        if self.enabled and not self.register_entra_app and not (self.app_id and self.app_tenant_id):
            raise ValueError("Open OnDemand signs users in with Entra ID: give app_id and app_tenant_id of an existing "
                             "Entra ID application (app_managed_identity_id is optional: CCWS creates one)")
        return self


class EntraId(StrictModel):
    enabled: bool = Field(default=False, description="entraIdInfo.type enabled: Entra ID sign-in on the cluster.")
    tenant_id: Optional[str] = Field(default=None, description="entraIdInfo.tenantId.")
    client_id: Optional[str] = Field(default=None, description="entraIdInfo.clientId.")

    @model_validator(mode="after")
    def _ids(self) -> "EntraId":
        if self.enabled and not (self.tenant_id and self.client_id):
            raise ValueError("entra_id.enabled needs tenant_id and client_id (entra_enabled_t requires them)")
        return self


class Database(StrictModel):
    """Slurm accounting in an Azure Database for MySQL (databaseConfig)."""

    type: Literal["disabled", "fqdn", "privateIp", "privateEndpoint"] = Field(default="disabled", description="databaseConfig.type.")
    user: str = Field(default="hpcdbadmin", pattern=r"^[A-Za-z][A-Za-z0-9_]{0,31}$", description="databaseConfig.databaseUser (the portal's default).")
    fqdn: Optional[str] = Field(default=None, description="databaseConfig.fqdn (type fqdn).")
    private_ip: Optional[str] = Field(default=None, description="databaseConfig.privateIp (type privateIp).")
    server_id: Optional[str] = Field(default=None, pattern=AZURE_RESOURCE_ID, description="dbInfo.id of the MySQL flexible server (type privateEndpoint).")
    server_location: Optional[str] = Field(default=None, description="dbInfo.location (type privateEndpoint).")

    @model_validator(mode="after")
    def _variant(self) -> "Database":
        needed = {"fqdn": ("fqdn",), "privateIp": ("private_ip",), "privateEndpoint": ("server_id", "server_location")}
        missing = [name for name in needed.get(self.type, ()) if getattr(self, name) is None]
        if missing:
            raise ValueError(f"database type {self.type} needs {', '.join(missing)} (types.bicep db_{self.type}_t)")
        return self


class Monitoring(StrictModel):
    enabled: bool = Field(default=False, description="monitoring.type enabled: Azure Monitor (Prometheus and Grafana).")
    monitor_workspace_id: Optional[str] = Field(default=None, pattern=AZURE_RESOURCE_ID, description="monitoring.monitorWorkspaceId.")
    ingestion_endpoint: Optional[str] = Field(default=None, description="monitoring.ingestionEndpoint.")
    dcr_id: Optional[str] = Field(default=None, pattern=AZURE_RESOURCE_ID, description="monitoring.dcrId.")
    grafana_id: Optional[str] = Field(default=None, pattern=AZURE_RESOURCE_ID, description="monitoring.grafanaId.")

    @model_validator(mode="after")
    def _ids(self) -> "Monitoring":
        missing = [n for n in ("monitor_workspace_id", "ingestion_endpoint", "dcr_id", "grafana_id") if getattr(self, n) is None]
        if self.enabled and missing:
            raise ValueError(f"monitoring.enabled needs {', '.join(missing)} (monitoring_enabled_t requires them)")
        return self


class CcwsSettings(StrictModel):
    release: Optional[str] = Field(default=None, description="The CCWS release tag whose mainTemplate the parameters are for (None: the newest hpcconf holds a schema for).")
    admin_user: str = Field(default="hpcadmin", pattern=r"^[a-z_][a-z0-9_-]{0,31}$", description="adminUsername (the portal's default).")
    ssh_public_key: str = Field(description="key: the admin's OpenSSH public key line. Private keys are refused.")
    cyclecloud_vm_name: str = Field(default="ccw-cyclecloud-vm", pattern=r"^[A-Za-z0-9][A-Za-z0-9-]{0,63}$", description="ccVMName.")
    cyclecloud_vm_size: str = Field(default="Standard_D4as_v5", description="ccVMSize.")
    cluster_name: Optional[str] = Field(default=None, pattern=r"^[a-zA-Z0-9@_-]{3,}$", description="clusterName (None: metadata.name).")
    network: Vnet = Field(default_factory=NewVnet)
    storage: Storage = Field(default_factory=Storage)
    scheduler: Scheduler = Field(default_factory=Scheduler)
    login: LoginNodes = Field(default_factory=LoginNodes)
    htc: CpuPartition = Field(default_factory=_htc_default, description="The htc partition (every release requires it).")
    hpc: CpuPartition = Field(default_factory=_hpc_default, description="The hpc partition (every release requires it).")
    gpu_image: str = Field(default=DEFAULT_IMAGE, pattern=IMAGE_PATTERN, description="gpu.osImage when the GPU pool sets no image.")
    ood: OpenOnDemand = Field(default_factory=OpenOnDemand)
    entra_id: EntraId = Field(default_factory=EntraId)
    database: Database = Field(default_factory=Database)
    monitoring: Monitoring = Field(default_factory=Monitoring)
    start_cluster: bool = Field(default=True, description="slurmSettings.startCluster.")
    ccws_health_checks: bool = Field(default=False, description="slurmSettings.healthCheckEnabled: CycleCloud's own node health checks (hpcconf's health_checks are installed by the cluster-init project either way).")
    accept_marketplace_terms: bool = Field(default=False, description="acceptMarketplaceTerms: accept the images' marketplace terms in the deployment.")
    cluster_init_url: Optional[str] = Field(default=None, pattern=r"^https://github\.com/[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+/releases/(tag/)?[A-Za-z0-9_.+-]+$", description="clusterInitSpecs: the GitHub release URL where you published ccws/cluster-init (cyclecloud project fetch reads it); None: upload it yourself (deploy.sh says how).")
    tags: dict[str, str] = Field(default_factory=dict, description="tags: Azure resource tags, put on every resource type the portal tags (mainTemplate's tags are keyed by resource type, createUiDefinition.json TagsByResource).")

    @field_validator("release")
    @classmethod
    def _known_release(cls, value: Optional[str]) -> Optional[str]:
        return _release(value)

    @model_validator(mode="after")
    def _ood_app(self) -> "CcwsSettings":
        if self.ood.enabled and self.ood.register_entra_app and not kb.registers_ood_app(self.release):
            chosen = kb.release(self.release)
            raise ValueError(
                f"CCWS {chosen.tag if chosen is not None else self.release} does not register an Entra ID "
                f"application for Open OnDemand (its ccw.bicep turned registration off from {kb.OOD_APP_REGISTRATION_OFF_FROM}): "
                "ood.register_entra_app would leave the portal with an empty client id; register an application yourself "
                "and give ood.app_id and ood.app_tenant_id")
        return self

    @field_validator("ssh_public_key")
    @classmethod
    def _public(cls, value: str) -> str:
        return check_public_key(value)
