"""Derived values of a CycleCloud Workspace for Slurm (CCWS) deployment: the mainTemplate parameters at the release
tag, validated against the release's own types, the subnet plan, the Slurm version the release ships, and the gpu
partition's node setup (NCCL files, health checks, gres.conf / cgroup.conf / slurm.conf lines).

Every decision is made here; ``hpcconf.targets.ccws`` writes the values as they are. A parameter that does not
validate against ``hpcconf/data/ccws/mainTemplate-<tag>.json`` (or a subnet plan that does not fit) is a
:class:`SpecProblem` at the spec key that produced it; the CCWS001-CCWS005 spec sides in :mod:`hpcconf.resolve.refusals`
refuse it before anything is written.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional

import jsonschema

from ..knowledge import aznhc, azure_zones, compat, slurm_gres
from ..knowledge import ccws as kb
from ..knowledge import ccws_network as network
from ..spec.ccws import (
    AdditionalAnfNew,
    AdditionalNfsExisting,
    AmlExisting,
    AmlNew,
    AnfNew,
    CcwsSettings,
    ExistingVnet,
    NewVnet,
    NfsExisting,
    NfsNew,
)

if TYPE_CHECKING:
    from ..catalog import Sku
    from .model import ResolvedCore
    from .pool import PoolSkus, ResolvedPool

TEMPLATE_FILE = "bicep/mainTemplate.bicep"  # what upstream deploys (util/deploy_sandbox_params.py at 2026.07.02)
REPOSITORY_URL = f"https://github.com/{kb.REPOSITORY}"
# Secure parameters never written to parameters.json: deploy.sh passes them from these environment variables.
SECURE_ENV = {"adminPassword": "CCWS_ADMIN_PASSWORD", "databaseAdminPassword": "CCWS_DATABASE_ADMIN_PASSWORD"}
# cyclecloud-slurm names nodes <ClusterName>-<nodearray>-<n> (templates/slurm.txt slurm.node_prefix at 4.0.9;
# its README's topology example: ccw-gpu-7).
NODE_NAME_SOURCE = "Azure/cyclecloud-slurm 4.0.9 templates/slurm.txt (slurm.node_prefix = ClusterName + '-')"
GPU_NODEARRAY = "gpu"
CLUSTER_INIT_PROJECT_VERSION = "1.0.0"


@dataclass(frozen=True)
class SpecProblem:
    """A generated parameter the release refuses, at the spec key it came from."""

    path: tuple[Any, ...]
    code: str
    name: str
    message: str
    hint: str


@dataclass(frozen=True)
class CcwsGpuPartition:
    pool: str
    sku: str
    max_nodes: int
    nodes: str  # Slurm hostlist of the partition's nodes
    placement_groups: int
    gres_conf: tuple[str, ...]  # what azslurm writes (knowledge.slurm_gres), one line per placement group
    cgroup_conf: tuple[str, ...]
    slurm_conf: tuple[slurm_gres.SlurmConfLine, ...]
    nccl_files: tuple[tuple[str, str], ...]  # (artifact path under the build, path on the node)
    nccl_conf_artifact: Optional[str]  # nccl/<pool>/nccl.conf (None: the pool's library reads no nccl.conf)
    nccl_conf_node_path: str
    gpu_count_override: Optional[int] = None  # autoscale.json slurm_gpus where cyclecloud-slurm counts wrong
    # An NVL72 size: the site_specific.conf lines to add after scaling, the VMs of one rack and the whole racks.
    after_scaling: tuple[slurm_gres.SlurmConfLine, ...] = ()
    rack_nodes: Optional[int] = None
    racks: int = 0
    after_scaling_source: str = ""
    topology_note: Optional[str] = None  # an InfiniBand size's tree/none choice, said why


@dataclass(frozen=True)
class ResolvedCcws:
    release: str
    commit: str
    repository_url: str
    template_file: str
    slurm_version: str
    cyclecloud_slurm: Optional[str]
    cluster_name: str
    deployment_name: str
    parameters: tuple[tuple[str, Any], ...]  # (name, value) in mainTemplate's order
    secure_parameters: tuple[tuple[str, str], ...]  # (parameter, environment variable) deploy.sh passes
    subnets: tuple[tuple[str, str], ...]  # (role, CIDR) network-new.bicep creates; () for an existing VNet
    address_space: Optional[str]  # the new VNet's (None: an existing VNet)
    gpu: CcwsGpuPartition
    cluster_init_project: str
    cluster_init_version: str
    cluster_init_url: Optional[str]
    problems: tuple[SpecProblem, ...] = ()
    ccws_health_checks: bool = False  # slurmSettings.healthCheckEnabled: CycleCloud's healthagent wires Slurm's
    resume_timeout_s: int = kb.RESUME_TIMEOUT_S  # slurm.conf ResumeTimeout cyclecloud-slurm writes
    boot_check_timeout_s: int = aznhc.CHECK_TIMEOUT_S  # run-health-checks.sh's per-check timeout at boot

    @property
    def parameters_dict(self) -> dict[str, Any]:
        return dict(self.parameters)


# -- parameter values ---------------------------------------------------------------------------------------

def _filer(filer: NfsNew | NfsExisting | AnfNew) -> dict[str, Any]:
    if isinstance(filer, NfsNew):
        return {"type": "nfs-new", "nfsCapacityInGb": filer.capacity_gb}
    if isinstance(filer, NfsExisting):
        value: dict[str, Any] = {"type": "nfs-existing", "ipAddress": filer.ip_address, "exportPath": filer.export_path}
        if filer.mount_options is not None:
            value["mountOptions"] = filer.mount_options
        return value
    return {"type": "anf-new", "anfServiceLevel": filer.service_level, "anfCapacityInTiB": filer.capacity_tib}


def amlfs_zone(filer: AmlNew, location: str) -> Optional[str]:
    """The zone of a new Azure Managed Lustre: the spec's, else the portal's default (createUiDefinition.json
    additionalFilesystem.availabilityZone at 2026.07.02, PR #288): "1" where the region has availability zones,
    none where it has none or where hpcconf does not know (CCWS008 tells the spec's lint, as information)."""
    if filer.availability_zone is not None:
        return None if filer.availability_zone == "none" else filer.availability_zone
    return "1" if azure_zones.has_zones(location) else None


def _additional(settings: CcwsSettings, location: str) -> dict[str, Any]:
    filer = settings.storage.additional
    if isinstance(filer, AdditionalAnfNew):
        return {"type": "anf-new", "anfServiceLevel": filer.service_level, "anfCapacityInTiB": filer.capacity_tib,
                "mountPath": filer.mount_path}
    if isinstance(filer, AdditionalNfsExisting):
        value: dict[str, Any] = {"type": "nfs-existing", "ipAddress": filer.ip_address, "mountPath": filer.mount_path,
                                 "exportPath": filer.export_path}
        if filer.mount_options is not None:
            value["mountOptions"] = filer.mount_options
        return value
    if isinstance(filer, AmlNew):
        value = {"type": "aml-new", "lustreTier": filer.tier, "lustreCapacityInTib": filer.capacity_tib,
                 "mountPath": filer.mount_path}
        zone = amlfs_zone(filer, location)
        if zone is not None:
            value["availabilityZone"] = [zone]
        return value
    if isinstance(filer, AmlExisting):
        value = {"type": "aml-existing", "ipAddress": filer.ip_address, "mountPath": filer.mount_path}
        if filer.mount_options is not None:
            value["mountOptions"] = filer.mount_options
        return value
    return {"type": "disabled"}


def _network(settings: CcwsSettings) -> dict[str, Any]:
    vnet = settings.network
    if isinstance(vnet, NewVnet):
        value: dict[str, Any] = {"type": "new", "addressSpace": vnet.address_space}
        if vnet.name is not None:
            value["name"] = vnet.name
        return {**value, "bastion": vnet.bastion, "createNatGateway": vnet.nat_gateway}
    existing: dict[str, Any] = {"type": "existing", "name": vnet.name, "id": vnet.id,
                                "cyclecloudSubnet": vnet.cyclecloud_subnet, "computeSubnet": vnet.compute_subnet}
    for key, subnet in (("netappSubnet", vnet.netapp_subnet), ("lustreSubnet", vnet.lustre_subnet)):
        if subnet is not None:
            existing[key] = subnet
    return existing


def _ood(settings: CcwsSettings) -> dict[str, Any]:
    ood = settings.ood
    if not ood.enabled:
        return {"type": "disabled"}
    value: dict[str, Any] = {"type": "enabled", "startCluster": settings.start_cluster, "sku": ood.sku,
                             "osImage": ood.image, "registerEntraIDApp": ood.register_entra_app}
    for key, item in (("fqdn", ood.fqdn), ("appId", ood.app_id), ("appTenantId", ood.app_tenant_id),
                      ("appManagedIdentityId", ood.app_managed_identity_id)):
        if item is not None:
            value[key] = item
    return value


def _database(settings: CcwsSettings) -> dict[str, Any]:
    db = settings.database
    if db.type == "disabled":
        return {"type": "disabled"}
    if db.type == "fqdn":
        return {"type": "fqdn", "databaseUser": db.user, "fqdn": db.fqdn}
    if db.type == "privateIp":
        return {"type": "privateIp", "databaseUser": db.user, "privateIp": db.private_ip}
    server_id = db.server_id or ""
    return {"type": "privateEndpoint", "databaseUser": db.user,
            "dbInfo": {"id": server_id, "location": db.server_location, "name": server_id.rsplit("/", 1)[-1]}}


def _monitoring(settings: CcwsSettings) -> dict[str, Any]:
    m = settings.monitoring
    if not m.enabled:
        return {"type": "disabled"}
    return {"type": "enabled", "monitorWorkspaceId": m.monitor_workspace_id, "ingestionEndpoint": m.ingestion_endpoint,
            "dcrId": m.dcr_id, "grafanaId": m.grafana_id}


def _entra(settings: CcwsSettings) -> dict[str, Any]:
    entra = settings.entra_id
    if not entra.enabled:
        return {"type": "disabled"}
    return {"type": "enabled", "tenantId": entra.tenant_id, "clientId": entra.client_id}


def _slurm_version(cluster: "ResolvedCore", rel: kb.Release) -> str:
    if cluster.versions.slurm:
        return cluster.versions.slurm  # SPEC090 refused one the release does not ship
    if rel.slurm_version_default:
        return rel.slurm_version_default
    if rel.slurm_versions:
        return rel.slurm_versions[-1]
    raise ValueError(f"CCWS {rel.tag}: no Slurm version known")  # every schema we hold records them


# The spec key each parameter comes from: where a parameter the release refuses is reported.
SPEC_PATHS: dict[str, tuple[Any, ...]] = {
    "location": ("metadata", "location"), "adminUsername": ("ccws", "admin_user"), "key": ("ccws", "ssh_public_key"),
    "ccVMName": ("ccws", "cyclecloud_vm_name"), "ccVMSize": ("ccws", "cyclecloud_vm_size"),
    "resourceGroup": ("metadata", "resource_group"), "entraIdInfo": ("ccws", "entra_id"),
    "schedFilesystem": ("ccws", "storage", "sched"), "sharedFilesystem": ("ccws", "storage", "shared"),
    "additionalFilesystem": ("ccws", "storage", "additional"), "network": ("ccws", "network"),
    "storagePrivateDnsZone": ("ccws", "storage", "private_dns_zone"), "clusterInitSpecs": ("ccws", "cluster_init_url"),
    "slurmSettings": ("ccws", "release"), "schedulerNode": ("ccws", "scheduler"), "loginNodes": ("ccws", "login"),
    "htc": ("ccws", "htc"), "hpc": ("ccws", "hpc"), "gpu": ("pools", 0), "tags": ("ccws", "tags"),
    "databaseConfig": ("ccws", "database"), "clusterName": ("ccws", "cluster_name"),
    "acceptMarketplaceTerms": ("ccws", "accept_marketplace_terms"), "ood": ("ccws", "ood"),
    "monitoring": ("ccws", "monitoring"), "projectVersion": ("ccws", "release"),
}
# Parameters written only when the spec asks for them (their "disabled"/empty value is the template's default):
# dropped for a release that does not declare them, refused when the spec set them.
OPTIONAL_FIELDS = {"entraIdInfo": "entra_id", "additionalFilesystem": "storage", "clusterInitSpecs": "cluster_init_url",
                   "databaseConfig": "database", "ood": "ood", "monitoring": "monitoring",
                   "acceptMarketplaceTerms": "accept_marketplace_terms"}


def parameter_values(cluster: "ResolvedCore", settings: CcwsSettings, pool: "ResolvedPool", rel: kb.Release,
                     slurm_version: str, cluster_name: str) -> dict[str, Any]:
    """Every parameter hpcconf writes, before the release's parameter list is applied (mainTemplate's order)."""
    values: dict[str, Any] = {
        "location": cluster.location,
        "adminUsername": settings.admin_user,
        "key": {"type": "entered", "value": settings.ssh_public_key},
        "ccVMName": settings.cyclecloud_vm_name,
        "ccVMSize": settings.cyclecloud_vm_size,
        "resourceGroup": cluster.resource_group,
        "entraIdInfo": _entra(settings),
        "schedFilesystem": _filer(settings.storage.sched),
        "sharedFilesystem": _filer(settings.storage.shared),
        "additionalFilesystem": _additional(settings, cluster.location),
        "network": _network(settings),
        "storagePrivateDnsZone": ({"type": "existing", "id": settings.storage.private_dns_zone_id}
                                  if settings.storage.private_dns_zone == "existing"
                                  else {"type": settings.storage.private_dns_zone}),
    }
    if settings.cluster_init_url is not None:
        values["clusterInitSpecs"] = [{"type": "gitHubReleaseURL", "gitHubReleaseURL": settings.cluster_init_url,
                                       "spec": "default", "target": [GPU_NODEARRAY]}]
    values.update({
        "slurmSettings": {"startCluster": settings.start_cluster, "version": slurm_version,
                          "healthCheckEnabled": settings.ccws_health_checks},
        "schedulerNode": {"sku": settings.scheduler.sku, "osImage": settings.scheduler.image},
        "loginNodes": {"sku": settings.login.sku, "osImage": settings.login.image,
                       "initialNodes": settings.login.initial_nodes, "maxNodes": settings.login.max_nodes},
        "htc": {"sku": settings.htc.sku, "osImage": settings.htc.image, "maxNodes": settings.htc.max_nodes},
        "hpc": {"sku": settings.hpc.sku, "osImage": settings.hpc.image, "maxNodes": settings.hpc.max_nodes},
        "gpu": {"sku": pool.sku.name, "osImage": pool.image or settings.gpu_image, "maxNodes": pool.count},
        # The spec's tags on every resource type the portal tags (resource_tags_t is keyed by type).
        "tags": {resource: dict(sorted(settings.tags.items())) for resource in kb.TAGGED_RESOURCES}
        if settings.tags else {},
        "databaseConfig": _database(settings),
        "clusterName": cluster_name,
        "acceptMarketplaceTerms": settings.accept_marketplace_terms,
        "ood": _ood(settings),
        "monitoring": _monitoring(settings),
        "projectVersion": rel.tag,  # CCWS's project at the tag (the release lint judges the file against)
    })
    return values


def _spec_set(settings: CcwsSettings, field: str) -> bool:
    if field == "storage":
        return "storage" in settings.model_fields_set and "additional" in settings.storage.model_fields_set
    return field in settings.model_fields_set


def release_parameters(values: dict[str, Any], settings: CcwsSettings, rel: kb.Release) -> dict[str, Any]:
    """``values`` in the release's parameter order; an optional parameter the release lacks is dropped unless the spec
    set it (then validation refuses it at the spec key)."""
    order = list(rel.parameters)
    kept = {name: value for name, value in values.items()
            if name in rel.parameters or (name in OPTIONAL_FIELDS and _spec_set(settings, OPTIONAL_FIELDS[name]))
            or name not in OPTIONAL_FIELDS}
    return dict(sorted(kept.items(), key=lambda item: order.index(item[0]) if item[0] in order else len(order)))


def _problem_code(error: jsonschema.ValidationError) -> tuple[str, str]:
    if not error.absolute_path and error.validator == "additionalProperties":
        return "CCWS001", "ccws-parameter-unknown"
    if not error.absolute_path and error.validator == "required":
        return "CCWS002", "ccws-parameter-missing"
    return "CCWS003", "ccws-parameter-type"


def schema_problems(values: dict[str, Any], rel: kb.Release) -> list[SpecProblem]:
    """Where ``values`` do not validate against the release's schema (secure parameters are passed by deploy.sh)."""
    required = [name for name in rel.required if name not in SECURE_ENV]
    validator = kb.validator({**rel.schema, "required": required})
    problems = []
    for error in sorted(validator.iter_errors(values), key=lambda e: (list(map(str, e.absolute_path)), e.message)):
        code, name = _problem_code(error)
        path = list(error.absolute_path)
        parameter = str(path[0]) if path else ""
        if not path and error.validator == "required":
            missing = error.message.split("'")[1] if error.message.count("'") >= 2 else ""
            problems.append(SpecProblem(path=("ccws", "release"), code=code, name=name,
                                        message=f"CCWS {rel.tag}'s mainTemplate requires parameter '{missing}', which "
                                                "hpcconf does not write for this release",
                                        hint=f"choose a release hpcconf writes every required parameter of (the newest: "
                                             f"{kb.newest().tag})"))
            continue
        if not path and error.validator == "additionalProperties":
            for unknown in sorted(set(values) - set(rel.parameters)):
                knowing = kb.releases_knowing({unknown})
                problems.append(SpecProblem(
                    path=SPEC_PATHS.get(unknown, ("ccws",)), code=code, name=name,
                    message=f"CCWS {rel.tag}'s mainTemplate has no parameter '{unknown}', which this setting writes"
                            + (f" (CCWS {', '.join(knowing[:3])} declare it)" if knowing else ""),
                    hint=f"leave the setting out, or choose a release that takes it (ccws.release; {rel.source} "
                         "bicep/mainTemplate.bicep)"))
            continue
        where = ".".join(str(p) for p in path) or "parameters"
        message = f"the generated parameter {where} does not validate against CCWS {rel.tag}: {error.message}"
        problems.append(SpecProblem(path=SPEC_PATHS.get(parameter, ("ccws",)), code=code, name=name, message=message,
                                    hint=f"change the setting, or choose a release that takes it (ccws.release; "
                                         f"{rel.source} bicep/types.bicep)"))
    return problems


def subnet_plan(settings: CcwsSettings, rel: kb.Release) -> tuple[tuple[tuple[str, str], ...], list[SpecProblem]]:
    vnet = settings.network
    if isinstance(vnet, ExistingVnet):
        return (), []
    filers = [settings.storage.sched.type, settings.storage.shared.type, settings.storage.additional.type]
    at = ("ccws", "network", "address_space")
    try:
        plan = network.subnet_plan(vnet.address_space, netapp="anf-new" in filers, lustre="aml-new" in filers,
                                   bastion=vnet.bastion, release=rel.tag)
    except IndexError:
        return (), [SpecProblem(at, "CCWS005", "ccws-subnet-plan", f"address_space {vnet.address_space}: "
                                "network-new.bicep's pow2_or_0 has no entry for a prefix this short",
                                f"use a prefix from /{min(network.PORTAL_PREFIXES)} to /{max(network.PORTAL_PREFIXES)}")]
    problems = [SpecProblem(at, "CCWS005", "ccws-subnet-plan", f"{problem} ({network.SOURCE} at {rel.tag})",
                            f"use a prefix from /{min(network.PORTAL_PREFIXES)} to /{max(network.PORTAL_PREFIXES)}")
                for problem in network.plan_problems(vnet.address_space, plan)]
    lustre = settings.storage.additional
    prefix = int(vnet.address_space.rsplit("/", 1)[1])
    if not problems and isinstance(lustre, AmlNew) and kb.tag_key(rel.tag) >= kb.tag_key(network.SCALED_LUSTRE_SINCE) \
            and prefix > (needed := network.amlfs_min_vnet_prefix(lustre.capacity_tib)):
        # From 2025.12.01 the lustre subnet is a quarter of the VNet (PR #307): the portal's floor for the capacity.
        problems.append(SpecProblem(at, "CCWS005", "ccws-subnet-plan", f"a new {lustre.capacity_tib} TiB Azure Managed "
                                    f"Lustre needs a /{needed} VNet or larger (its subnet is a quarter of it); "
                                    f"{vnet.address_space} gives {plan['lustre']}",
                                    f"use a /{needed} address space (createUiDefinition.json lustreInfoBoxNew at {rel.tag})"))
    return tuple(plan.items()), problems


# -- the gpu partition --------------------------------------------------------------------------------------

def gpu_partition(cluster: "ResolvedCore", pool: "ResolvedPool", sku: "Sku", cluster_name: str,
                  slurm_version: str, cyclecloud_slurm: Optional[str]) -> CcwsGpuPartition:
    groups = -(-pool.count // kb.PLACEMENT_GROUP_NODES)
    prefix = f"{cluster_name}-{GPU_NODEARRAY}-"
    gres: list[str] = []
    for index in range(groups):
        first, last = index * kb.PLACEMENT_GROUP_NODES + 1, min(pool.count, (index + 1) * kb.PLACEMENT_GROUP_NODES)
        nodes = f"{prefix}{first}" if first == last else f"{prefix}[{first}-{last}]"
        gres += slurm_gres.gres_conf_lines(sku, nodes)
    files: list[tuple[str, str]] = []
    if pool.nccl.topo_node_path:
        files.append((f"nccl/{pool.nccl.topo_file}", pool.nccl.topo_node_path))
    if pool.nccl.graph_node_path:
        files.append((f"nccl/{pool.nccl.graph_file}", pool.nccl.graph_node_path))
    fix = compat.cyclecloud_slurm_gpu_count_fix(sku.name, cyclecloud_slurm) if cyclecloud_slurm else None
    rack = slurm_gres.nodes_per_block(sku)
    rack = rack if rack is not None and rack > 1 else None
    return CcwsGpuPartition(
        pool=pool.name, sku=sku.name, max_nodes=pool.count,
        nodes=f"{prefix}1" if pool.count == 1 else f"{prefix}[1-{pool.count}]", placement_groups=groups,
        gres_conf=tuple(gres), cgroup_conf=tuple(slurm_gres.cgroup_conf_lines()),
        slurm_conf=tuple(slurm_gres.slurm_conf_lines(sku, slurm_version=slurm_version, cyclecloud=True)),
        after_scaling=tuple(slurm_gres.after_scaling_lines(GPU_NODEARRAY)) if rack else (),
        rack_nodes=rack, racks=pool.count // rack if rack else 0,
        after_scaling_source=slurm_gres.README_GB200 if rack else "",
        topology_note=slurm_gres.infiniband_topology_note(sku, groups),
        nccl_files=tuple(files),
        nccl_conf_artifact=f"nccl/{pool.name}/nccl.conf" if pool.collective.reads_nccl_conf else None,
        nccl_conf_node_path="/etc/nccl.conf", gpu_count_override=sku.gpu.count if fix is not None else None)


def resolve_ccws(cluster: "ResolvedCore", settings: Optional[CcwsSettings], skus: "PoolSkus") -> ResolvedCcws:
    if settings is None:  # the spec model requires the block with platform ccws
        raise ValueError("platform ccws without a ccws: block")
    rel = kb.release(settings.release)
    if rel is None:  # the spec model refuses a release without a schema
        raise ValueError(f"no schema for CCWS release {settings.release}")
    pool = cluster.gpu_pools[0]  # SPEC090: one GPU pool
    slurm_version = _slurm_version(cluster, rel)
    cluster_name = settings.cluster_name or cluster.name
    values = release_parameters(parameter_values(cluster, settings, pool, rel, slurm_version, cluster_name),
                                settings, rel)
    subnets, problems = subnet_plan(settings, rel)
    problems = schema_problems(values, rel) + problems
    return ResolvedCcws(
        release=rel.tag, commit=rel.commit, repository_url=REPOSITORY_URL, template_file=TEMPLATE_FILE,
        slurm_version=slurm_version, cyclecloud_slurm=rel.cyclecloud_slurm, cluster_name=cluster_name,
        deployment_name=f"{cluster.name}-ccws", parameters=tuple(values.items()),
        secure_parameters=tuple((name, env) for name, env in SECURE_ENV.items()
                                if name in rel.parameters and (name != "databaseAdminPassword"
                                                               or settings.database.type != "disabled")),
        subnets=subnets, address_space=settings.network.address_space if isinstance(settings.network, NewVnet) else None,
        gpu=gpu_partition(cluster, pool, skus[pool.name], cluster_name, slurm_version, rel.cyclecloud_slurm),
        cluster_init_project=f"hpcconf-{cluster.name}", cluster_init_version=CLUSTER_INIT_PROJECT_VERSION,
        cluster_init_url=settings.cluster_init_url, problems=tuple(problems),
        ccws_health_checks=settings.ccws_health_checks)
