"""What az-hop accepts in ``config.yml``, and what it needs but never checks.

Two parts:

* :data:`CONFIG` -- the key layout, types, enums, patterns and limits az-hop's
  ``config.schema.json`` (draft-06, az-hop 826f7906) enforces, written as a compact table of
  our own (:class:`Obj`, :class:`Str`, ...). :func:`validate_config` walks it and reports each
  problem with its path, so the linter can point at the line. ``tests/test_azhop_knowledge.py``
  proves it accepts and rejects the same documents as the upstream schema.
* Facts the schema misses: queue-manager values, supported
  Slurm / cyclecloud-slurm pairs, runtime defaults, AMLFS steps and subnet sizes, queue-name and
  hostname limits, reserved IPs per subnet, GPU images known to carry (or lack) an NVIDIA driver.
"""

from __future__ import annotations

import ipaddress
import math
import re
from dataclasses import dataclass, field
from typing import Any, Iterator, Mapping, Optional, Sequence, Union

from .azhop_facts import ADMINS_GID, ALL_USERS_GID, LOCAL_ADMINS_GID
from .versions import version_key

# --------------------------------------------------------------------------------------------
# The schema, as a table of our own
# --------------------------------------------------------------------------------------------

NAME_15 = r"^([0-9a-z\-]+)$"  # infra VM names: lower case, digits, '-'; 15 chars (NetBIOS)
THRESHOLD = r"^(10|20|30|40|50|60|70|80|90|100)$"  # monitoring thresholds are strings in steps of 10


@dataclass(frozen=True)
class Str:
    enum: tuple[str, ...] = ()
    pattern: Optional[str] = None
    max_length: Optional[int] = None


@dataclass(frozen=True)
class Int:
    minimum: Optional[int] = None
    maximum: Optional[int] = None


@dataclass(frozen=True)
class Num:
    """A JSON number (YAML int or float, not a boolean)."""


@dataclass(frozen=True)
class Bool:
    pass


@dataclass(frozen=True)
class Arr:
    items: Optional["Node"] = None


@dataclass(frozen=True)
class Obj:
    props: Mapping[str, "Node"] = field(default_factory=dict)
    required: tuple[str, ...] = ()
    open: bool = False  # True: keys beyond ``props`` are allowed (tags, mounts, applications)


@dataclass(frozen=True)
class AnyOf:
    options: tuple["Node", ...]


Node = Union[Str, Int, Num, Bool, Arr, Obj, AnyOf]

STR, INT, BOOL = Str(), Int(), Bool()


def _vm(name_required: bool = False, **extra: "Node") -> Obj:
    """An infra VM block: ``vm_size`` (required unless told) and a NetBIOS-safe ``name``."""
    return Obj({"vm_size": STR, "name": Str(pattern=NAME_15, max_length=15), **extra},
               required=() if name_required else ("vm_size",))


SUBNET = Obj({"name": STR, "address_prefixes": STR, "create": BOOL})
SUBNET_ROLES = ("frontend", "admin", "netapp", "ad", "compute", "bastion", "lustre", "gateway", "outbounddns", "database")
# The schema's ASG names (D1: the code now uses asg-mysql-client, which this list rejects).
ASG_NAMES = ("asg-ssh", "asg-rdp", "asg-jumpbox", "asg-ad", "asg-ad-client", "asg-lustre-client", "asg-sched",
             "asg-cyclecloud", "asg-cyclecloud-client", "asg-nfs-client", "asg-telegraf", "asg-grafana",
             "asg-ondemand", "asg-deployer", "asg-mariadb-client")
OIDC_KEYS = ("OIDCProviderMetadataURL", "OIDCClientID", "OIDCRemoteUserClaim", "OIDCScope", "OIDCPassIDTokenAs",
             "OIDCPassRefreshToken", "OIDCPassClaimsAs")
OOD_APPS = ("bc_codeserver", "bc_jupyter", "bc_rstudio", "bc_ansys_workbench", "bc_vmd", "bc_paraview", "bc_vizer")
SLURM_VERSIONS = ("20.11.9", "22.05.3", "22.05.9", "23.02.5")
CYCLECLOUD_SLURM_VERSIONS = ("2.7.0", "2.7.1", "2.7.2", "3.0.4")
AMLFS_SKUS = ("AMLFS-Durable-Premium-40", "AMLFS-Durable-Premium-125", "AMLFS-Durable-Premium-250",
              "AMLFS-Durable-Premium-500")
ANF_SERVICE_LEVELS = ("Standard", "Premium", "Ultra")
HOME_TYPES = ("anf", "azurefiles", "existing")
QUEUE_TYPES = ("remoteviz", "compute", "login")
SPECIAL_QUEUE_NAMES = ("largeviz3d", "viz")  # names the OnDemand remote-viz forms know
QUEUE_NAME_PATTERN = r"^([0-9a-z\-]+)$"
QUEUE_NAME_SCHEMA_MAX = 9  # what the schema enforces; its own text (and PR #1195) says 8

QUEUE = Obj({
    "name": AnyOf((Str(pattern=QUEUE_NAME_PATTERN, max_length=QUEUE_NAME_SCHEMA_MAX), Str(enum=SPECIAL_QUEUE_NAMES))),
    "vm_size": STR, "max_core_count": INT, "max_count": INT, "initial_count": INT, "image": STR, "plan": STR,
    "EnableAcceleratedNetworking": BOOL, "spot": BOOL, "ColocateNodes": BOOL, "idle_timeout": INT,
    "MaxScaleSetSize": INT, "EphemeralOSDisk": BOOL, "max_hours": INT, "min_hours": INT,
    "type": Str(enum=QUEUE_TYPES), "description": STR, "shareable": BOOL, "location": STR, "subnet": STR,
    "healthchecks": BOOL,
}, required=("image", "name", "vm_size"))

CONFIG = Obj({
    "project_name": STR, "location": STR, "resource_group": STR, "optout_telemetry": BOOL, "use_existing_rg": BOOL,
    "tags": Obj(open=True),
    "anf": Obj({"create": BOOL, "homefs_size_tb": Int(4, 100), "homefs_service_level": Str(enum=ANF_SERVICE_LEVELS),
                "dual_protocol": BOOL, "alert_threshold": Int(1, 100)},
               required=("create", "homefs_service_level", "homefs_size_tb")),
    "azurefiles": Obj({"create": BOOL, "size_gb": INT}, required=("create", "size_gb")),
    "mounts": Obj({"home": Obj({"type": Str(enum=HOME_TYPES), "mountpoint": STR, "server": STR, "export": STR,
                               "options": STR}, required=("export", "mountpoint", "server"))},
                  required=("home",), open=True),
    "admin_user": STR, "key_vault_readers": STR,
    "network": Obj({
        "create_nsg": BOOL,
        "vnet": Obj({"name": STR, "id": STR, "address_space": STR,
                     "subnets": Obj({role: SUBNET for role in SUBNET_ROLES}, required=("admin", "compute", "frontend")),
                     "tags": Obj(open=True)}, required=("subnets",)),
        "peering": Arr(Obj({"vnet_name": STR, "vnet_resource_group": STR, "vnet_allow_gateway": BOOL},
                           required=("vnet_name", "vnet_resource_group"))),
        "asg": Obj({"resource_group": STR, "names": Obj({n: STR for n in ASG_NAMES})},
                   required=("resource_group", "names")),
    }, required=("vnet",)),
    "locked_down_network": Obj({"enforce": BOOL, "public_ip": BOOL, "grant_access_from": Arr(STR)},
                               required=("public_ip",)),
    "azure_key_vault": Obj({"name": STR}), "azure_storage_account": Obj({"name": STR}),
    "linux_base_image": STR, "linux_base_plan": STR, "windows_base_image": STR,
    "jumpbox": _vm(ssh_port=INT), "deployer": _vm(ssh_port=INT),
    "ad": Obj({"vm_size": STR, "name": Str(pattern=NAME_15, max_length=15), "ha_name": Str(pattern=NAME_15, max_length=15),
               "hybrid_benefit": BOOL, "high_availability": BOOL}),
    "ondemand": _vm(generate_certificate=BOOL, fqdn=STR, whitelist_path=STR, file_upload_max=INT,
                    file_upload_allowed_extensions=Arr()),
    "grafana": _vm(), "scheduler": _vm(),
    "cyclecloud": _vm(version=STR, image=STR, plan=STR, ssh_port=INT, use_as_deployer=BOOL, web_server_path=STR,
                      distribution_method=STR),
    "lustre": Obj({"create": BOOL, "sku": Str(enum=AMLFS_SKUS), "capacity": INT,
                   "hsm": Obj({"storage_account": STR, "storage_container": STR},
                              required=("storage_account", "storage_container"))}, required=("create",)),
    "users": Arr(Obj({"name": Str(max_length=20), "shell": STR, "home": STR, "uid": INT, "groups": Arr(INT)},
                     required=("name", "uid"))),
    "usergroups": Arr(Obj({"name": STR, "gid": INT, "description": STR}, required=("gid", "name"))),
    "domain": Obj({"name": STR, "domain_join_ou": STR, "use_existing_dc": BOOL,
                   "domain_join_user": Obj({"username": STR, "password_key_vault_name": STR,
                                            "password_key_vault_resource_group_name": STR,
                                            "password_key_vault_secret_name": STR}),
                   "existing_dc_details": Obj({"domain_controller_names": Arr(), "domain_controller_ip_addresses": Arr(),
                                               "private_dns_servers": Arr()})}),
    "cvmfs_eessi": Obj({"enabled": BOOL}, required=("enabled",)),
    "queue_manager": STR,  # G1: any string passes the schema
    "slurm": Obj({"accounting_enabled": BOOL, "cluster_name": STR, "slurm_version": Str(enum=SLURM_VERSIONS),
                  "cyclecloud_slurm_version": Str(enum=CYCLECLOUD_SLURM_VERSIONS)}, required=("accounting_enabled",)),
    "enroot": Obj({"enroot_version": STR}),
    "database": Obj({"name": STR, "user": STR, "fqdn": STR, "ip": STR}),
    "authentication": Obj({"user_auth": Str(enum=("local", "ad")), "httpd_auth": Str(enum=("basic", "oidc")),
                           "user_map_match": STR, "user_map_cmd": STR,
                           "ood_auth_openidc": Obj({k: STR for k in OIDC_KEYS}, required=OIDC_KEYS, open=True)},
                          required=("httpd_auth",)),
    "images": Arr(Obj({"name": STR, "publisher": Str(enum=("azhop", "azhpc")), "offer": STR, "sku": STR,
                       "hyper_v": Str(enum=("V2", "V1")), "os_type": Str(enum=("Linux", "Windows")), "version": Num()},
                      required=("hyper_v", "name", "offer", "os_type", "publisher", "sku", "version"))),
    "bastion": Obj({"create": BOOL}, required=("create",)),
    "vpn_gateway": Obj({"create": BOOL}, required=("create",)),
    "image_gallery": Obj({"create": BOOL, "name": STR}, required=("create",)),
    "autoscale": Obj({"idle_timeout": INT}, required=("idle_timeout",)),
    "queues": Arr(QUEUE),
    "applications": Obj({app: Obj({"enabled": BOOL}, required=("enabled",)) for app in OOD_APPS}, open=True),
    "dns": Obj({"forwarders": Arr(Obj({"name": STR, "ips": STR}, required=("name", "ips")))}, required=("forwarders",)),
    "log_analytics": Obj({"create": BOOL, "resource_group": STR, "name": STR, "subscription_id": STR}, required=("create",)),
    "compute_vm_identity": Obj({"create": BOOL, "name": Str(pattern=r"^[a-zA-Z0-9-]+$", max_length=24),
                                "resource_group": STR}, required=("create",)),
    "monitoring": Obj({"install_agent": BOOL, "azure_monitor_agent": BOOL, "telegraf": BOOL, "grafana": BOOL,
                       "idle_threshold": Str(pattern=THRESHOLD), "iowait_threshold": Str(pattern=THRESHOLD),
                       "mem_threshold": Str(pattern=THRESHOLD)}),
    "alerting": Obj({"enabled": BOOL, "admin_email": STR, "local_volume_threshold": Int(1, 100)}, required=("enabled",)),
    "nat_gateway": Obj({"create": BOOL, "name": STR}, required=("create",)),
    "private_dns": Obj({"create": BOOL, "name": STR, "registration_enabled": BOOL}, required=("create", "name")),
}, required=("admin_user", "cyclecloud", "location", "mounts", "network", "queue_manager", "queues",
             "resource_group", "scheduler", "usergroups", "users"))


@dataclass(frozen=True)
class SchemaProblem:
    path: tuple[Any, ...]  # where: the offending value, or the object missing / carrying a key
    message: str
    kind: str  # type, enum, pattern, max_length, minimum, maximum, required, unknown_key, any_of
    key: Optional[str] = None  # the missing or unknown key, for required / unknown_key


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _is_int(value: Any) -> bool:
    # JSON Schema draft-06 counts 2.0 as an integer; booleans are never numbers.
    return not isinstance(value, bool) and (isinstance(value, int) or (isinstance(value, float) and value.is_integer()))


def validate_config(data: Any, node: Node = CONFIG, path: tuple[Any, ...] = ()) -> list[SchemaProblem]:
    """Every place ``data`` breaks az-hop's schema, in document order."""
    return list(_walk(data, node, path))


def _walk(value: Any, node: Node, path: tuple[Any, ...]) -> Iterator[SchemaProblem]:
    if isinstance(node, AnyOf):
        if not any(not validate_config(value, option, path) for option in node.options):
            yield from _any_of_problem(value, node, path)
        return
    if isinstance(node, Obj):
        yield from _walk_object(value, node, path)
    elif isinstance(node, Arr):
        if not isinstance(value, list):
            yield SchemaProblem(path, f"expected a list, got {_type_name(value)}", "type")
        elif node.items is not None:
            for i, item in enumerate(value):
                yield from _walk(item, node.items, path + (i,))
    elif isinstance(node, Str):
        yield from _walk_string(value, node, path)
    elif isinstance(node, Int):
        if not _is_int(value):
            yield SchemaProblem(path, f"expected an integer, got {_type_name(value)} {value!r}", "type")
        elif node.minimum is not None and value < node.minimum:
            yield SchemaProblem(path, f"{value} is below the minimum {node.minimum}", "minimum")
        elif node.maximum is not None and value > node.maximum:
            yield SchemaProblem(path, f"{value} is above the maximum {node.maximum}", "maximum")
    elif isinstance(node, Num):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            yield SchemaProblem(path, f"expected a number, got {_type_name(value)} {value!r}", "type")
    elif isinstance(node, Bool):
        if not isinstance(value, bool):
            yield SchemaProblem(path, f"expected true or false, got {_type_name(value)} {value!r}", "type")


def _any_of_problem(value: Any, node: AnyOf, path: tuple[Any, ...]) -> Iterator[SchemaProblem]:
    enums = [v for option in node.options if isinstance(option, Str) for v in option.enum]
    first = validate_config(value, node.options[0], path)
    detail = first[0].message if first else "no alternative matches"
    extra = f" (or one of: {', '.join(enums)})" if enums else ""
    yield SchemaProblem(path, f"{detail}{extra}", "any_of")


def _walk_object(value: Any, node: Obj, path: tuple[Any, ...]) -> Iterator[SchemaProblem]:
    if not isinstance(value, dict):
        yield SchemaProblem(path, f"expected a mapping, got {_type_name(value)}", "type")
        return
    for key in node.required:
        if key not in value:
            yield SchemaProblem(path, f"required key '{key}' is missing", "required", key)
    for key, child in value.items():
        if key in node.props:
            yield from _walk(child, node.props[key], path + (key,))
        elif not node.open:
            yield SchemaProblem(path + (key,), f"unknown key '{key}'", "unknown_key", str(key))


def _walk_string(value: Any, node: Str, path: tuple[Any, ...]) -> Iterator[SchemaProblem]:
    if not isinstance(value, str):
        yield SchemaProblem(path, f"expected a string, got {_type_name(value)} {value!r}", "type")
        if node.enum:  # JSON Schema's enum applies to every type, so a non-string also misses the list
            yield SchemaProblem(path, f"{value!r} is not one of: {', '.join(node.enum)}", "enum")
        return
    if node.enum and value not in node.enum:
        yield SchemaProblem(path, f"'{value}' is not one of: {', '.join(node.enum)}", "enum")
    if node.max_length is not None and len(value) > node.max_length:
        yield SchemaProblem(path, f"'{value}' is {len(value)} characters, longer than {node.max_length}", "max_length")
    if node.pattern is not None and not re.search(node.pattern, value):
        yield SchemaProblem(path, f"'{value}' does not match {node.pattern}", "pattern")


def allowed_keys(path: Sequence[Any]) -> list[str]:
    """The keys the schema knows at ``path`` (for did-you-mean hints)."""
    node: Node = CONFIG
    for step in path:
        if isinstance(node, Obj) and isinstance(step, str) and step in node.props:
            node = node.props[step]
        elif isinstance(node, Arr) and isinstance(step, int) and node.items is not None:
            node = node.items
        else:
            return []
    return list(node.props) if isinstance(node, Obj) else []


# Keys older az-hop releases accepted and the schema now rejects (tests/configs/config_full.yml,
# jingchaozhang.github.io's config.yml): the reason goes into the lint hint.
LEGACY_KEYS: dict[str, str] = {
    "lustre_base_image": "IaaS Lustre was replaced by AMLFS (PR #1715); use lustre: {create, sku, capacity}",
    "lustre_base_plan": "IaaS Lustre was replaced by AMLFS (PR #1715); use lustre: {create, sku, capacity}",
    "rbh_sku": "IaaS Lustre was replaced by AMLFS (PR #1715)",
    "mds_sku": "IaaS Lustre was replaced by AMLFS (PR #1715)",
    "oss_sku": "IaaS Lustre was replaced by AMLFS (PR #1715)",
    "oss_count": "IaaS Lustre was replaced by AMLFS (PR #1715)",
    "hsm_max": "IaaS Lustre was replaced by AMLFS (PR #1715)",
    "hsm_sku": "IaaS Lustre was replaced by AMLFS (PR #1715)",
    "hsm_max_requests": "IaaS Lustre was replaced by AMLFS (PR #1715)",
    "mdt_device": "IaaS Lustre was replaced by AMLFS (PR #1715)",
    "ost_device": "IaaS Lustre was replaced by AMLFS (PR #1715)",
    "guacamole": "Guacamole was removed; Windows remote viz is gone from az-hop",
    "enable_remote_winviz": "Windows remote viz was removed; remote-viz queues are queues with type: remoteviz",
    "remoteviz": "remote-viz queues moved into queues: with type: remoteviz",
    "winviz": "Windows remote viz was removed",
}
# ASG names the template and the code use but the schema rejects.
ASG_NAME_DRIFT: dict[str, str] = {
    "asg-pbs": "the schema calls the scheduler ASG asg-sched",
    "asg-pbs-client": "the schema has no asg-pbs-client",
    "asg-lustre": "IaaS Lustre was removed; the schema keeps only asg-lustre-client",
    "asg-mysql-client": "the code uses asg-mysql-client since PR #1869 but the schema still only accepts asg-mariadb-client: "
                        "omit network.asg to let az-hop create its ASGs",
}
DEPRECATED_KEYS: dict[tuple[Any, ...], str] = {
    ("monitoring", "install_agent"): "the schema marks it deprecated; use monitoring.azure_monitor_agent "
                                     "(#1604: it failed validation inside cloud-init)",
}

# --------------------------------------------------------------------------------------------
# What the schema misses
# --------------------------------------------------------------------------------------------

QUEUE_MANAGERS = ("openpbs", "slurm")  # G1; az-hop's code defaults to openpbs
DEFAULT_QUEUE_MANAGER = "openpbs"

# G4: which Slurm releases each cyclecloud-slurm project supports (schema descriptions, PR #1752).
SLURM_PAIRS: dict[str, tuple[str, ...]] = {
    "2.7.0": ("20.11.9", "22.05.3"),
    "2.7.1": ("20.11.9", "22.05.3"),
    "2.7.2": ("20.11.9", "22.05.3"),
    "3.0.4": ("22.05.9", "23.02.5"),
}
# D2: what the playbooks install when a key is absent (not the schema's `default` annotations).
RUNTIME_SLURM_VERSION = "20.11.9"
RUNTIME_CYCLECLOUD_SLURM_VERSION = "2.7.2"
SCHEMA_DEFAULT_SLURM_VERSION = "22.05.9"
SCHEMA_DEFAULT_CYCLECLOUD_SLURM_VERSION = "3.0.4"
# hpcconf's default: the newest supported pair.
DEFAULT_SLURM_VERSION = "23.02.5"
DEFAULT_CYCLECLOUD_SLURM_VERSION = "3.0.4"
# cyclecloud-slurm 3.0.x needs CycleCloud 8.4.2-3186 or newer (PR #1752 breaking-change notes).
MIN_CYCLECLOUD_FOR_CC_SLURM_3 = (8, 4, 2)


def cyclecloud_slurm_for(slurm_version: str) -> Optional[str]:
    """The newest cyclecloud-slurm project that supports ``slurm_version``."""
    matches = [cc for cc, slurms in SLURM_PAIRS.items() if slurm_version in slurms]
    return max(matches, key=version_key) if matches else None


def slurm_for(cyclecloud_slurm_version: str) -> Optional[str]:
    """The newest Slurm release ``cyclecloud_slurm_version`` supports."""
    slurms = SLURM_PAIRS.get(cyclecloud_slurm_version)
    return max(slurms, key=version_key) if slurms else None


# Queue names become nodearray names and hostnames <queue>-pg<N>-<index> (ColocateNodes) or
# <queue>-<index>; AD domain join / NetBIOS cut hostnames at 15 characters (#1191).
QUEUE_NAME_MAX = 8
HOSTNAME_MAX = 15


def longest_hostname(queue: str, max_nodes: int, colocated: bool) -> str:
    """The longest node hostname CycleCloud gives this queue (``gpu-pg0-12``)."""
    index = str(max(max_nodes, 1))
    return f"{queue}-pg0-{index}" if colocated else f"{queue}-{index}"


# Azure keeps 5 addresses of every subnet (network, gateway, 2 DNS, broadcast): docs/deploy/index.md.
AZURE_RESERVED_IPS = 5
BASTION_MIN_PREFIX = 26  # AzureBastionSubnet must be /26 or larger
GATEWAY_MIN_PREFIX = 27  # GatewaySubnet: /27 or larger recommended

# Subnets az-hop lays out in config.tpl.yml, in its order, with its sizes (prefix lengths).
INFRA_SUBNETS: tuple[tuple[str, int], ...] = (
    ("frontend", 29), ("ad", 29), ("admin", 28), ("netapp", 28), ("outbounddns", 28),
    ("bastion", 26), ("lustre", 26), ("gateway", 27), ("database", 28),
)
FIXED_SUBNET_NAMES = {"bastion": "AzureBastionSubnet", "gateway": "GatewaySubnet"}


def usable_ips(cidr: str) -> int:
    return max(ipaddress.ip_network(cidr, strict=False).num_addresses - AZURE_RESERVED_IPS, 0)


# AMLFS: capacity step (TiB) per tier (bicep/amlfs.bicep, config.tpl.yml) and the minimum subnet for a
# capacity (jingchaozhang.github.io (2023) "Determining network size", learn.microsoft.com amlfs-prerequisites).
AMLFS_STEP_TIB: dict[str, int] = {
    "AMLFS-Durable-Premium-40": 48, "AMLFS-Durable-Premium-125": 16,
    "AMLFS-Durable-Premium-250": 8, "AMLFS-Durable-Premium-500": 4,
}
AMLFS_SUBNET_TABLE: tuple[tuple[int, int], ...] = ((16, 27), (40, 26), (92, 25), (196, 24), (400, 23))


def amlfs_min_prefix(capacity_tib: int) -> Optional[int]:
    """The largest prefix length (smallest subnet) that holds an AMLFS of this size; None past the table."""
    for upto, prefix in AMLFS_SUBNET_TABLE:
        if capacity_tib <= upto:
            return prefix
    return None


def amlfs_capacity_problem(sku: str, capacity: int) -> Optional[str]:
    step = AMLFS_STEP_TIB.get(sku)
    if step is None:
        return None
    if capacity < step or capacity % step:
        low = max(step, capacity // step * step)
        options = f"{low}" if low > capacity else f"{low} or {low + step}"
        return f"AMLFS {sku} grows in steps of {step} TiB; {capacity} TiB is not a whole number of steps (use {options})"
    return None


# Home directory placeholders az-hop fills from the ANF / Azure Files it creates (bicep/azhop.bicep).
HOME_PLACEHOLDERS = {"server": "{{anf_home_ip}}", "export": "{{anf_home_path}}", "options": "{{anf_home_opts}}"}
BUILTIN_GIDS = {ALL_USERS_GID: "all users", ADMINS_GID: "az-hop admins", LOCAL_ADMINS_GID: "local admins (sudo on nodes)"}
CUSTOM_GID_MIN = 6000


def nfs41_options(options: str) -> bool:
    """Azure Files NFS only speaks NFS 4.1 (#1200)."""
    opts = {o.strip() for o in options.split(",")}
    return "vers=4.1" in opts or "nfsvers=4.1" in opts or ({"vers=4", "minorversion=1"} <= opts) \
        or ({"nfsvers=4", "minorversion=1"} <= opts)


# --------------------------------------------------------------------------------------------
# Images
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ImageRef:
    text: str
    resource_id: bool
    parts: tuple[str, ...]  # publisher, offer, sku, version for marketplace URNs

    @property
    def publisher(self) -> str:
        return self.parts[0].lower() if len(self.parts) == 4 else ""

    @property
    def offer(self) -> str:
        return self.parts[1].lower() if len(self.parts) == 4 else ""


def parse_image(text: str) -> tuple[Optional[ImageRef], Optional[str]]:
    """(image, problem): an image is a resource ID (contains '/') or ``publisher:offer:sku:version``.

    az-hop's Bicep splits the URN on ':' and reads four parts; its Jinja template splits plans into three.
    """
    value = text.strip()
    if "/" in value:
        if not value.lower().startswith("/subscriptions/"):
            return None, "an image ID must start with /subscriptions/ (a managed image or gallery image version)"
        return ImageRef(value, True, ()), None
    parts = tuple(value.split(":"))
    if len(parts) != 4 or not all(parts):
        return None, f"'{value}' has {len(parts)} ':'-separated parts; write publisher:offer:sku:version"
    return ImageRef(value, False, parts), None


def plan_problem(text: str) -> Optional[str]:
    parts = text.split(":")
    if len(parts) != 3 or not all(p.strip() for p in parts):
        return f"plan '{text}' has {len(parts)} ':'-separated parts; write publisher:product:name"
    return None


# Marketplace offers (publisher, offer) whose images carry the NVIDIA datacenter driver, and offers
# known to have none. Anything else (custom images, other offers) cannot be judged from its name.
GPU_DRIVER_OFFERS: dict[tuple[str, str], str] = {
    ("microsoft-dsvm", "ubuntu-hpc"): "Azure HPC image (azhpc-images): NVIDIA driver, CUDA, NCCL, MOFED; jingchaozhang.github.io (2023) ran NCv4/NDv4 on it",
    ("almalinux", "almalinux-hpc"): "AlmaLinux HPC image (azhpc-images): NVIDIA driver, CUDA, NCCL, MOFED",
    ("openlogic", "centos-hpc"): "CentOS HPC image (azhpc-images, 7.9+): NVIDIA driver and MOFED",
    ("azhpc", "azhop-compute"): "az-hop compute image, built from the HPC rdma-gpgpu image (config.tpl.yml gpu queue)",
    ("nvidia", "ngc_azure_vmi"): "NVIDIA GPU-optimized VMI",
}
NO_DRIVER_OFFERS: dict[tuple[str, str], str] = {
    ("openlogic", "centos"): "plain CentOS: no NVIDIA driver, no MOFED",
    ("almalinux", "almalinux-x86_64"): "plain AlmaLinux: no NVIDIA driver",
    ("almalinux", "almalinux"): "plain AlmaLinux: no NVIDIA driver",
    ("canonical", "0001-com-ubuntu-server-focal"): "plain Ubuntu 20.04: no NVIDIA driver",
    ("canonical", "0001-com-ubuntu-server-jammy"): "plain Ubuntu 22.04: no NVIDIA driver",
    ("canonical", "ubuntu-24_04-lts"): "plain Ubuntu 24.04: no NVIDIA driver",
    ("redhat", "rhel"): "plain RHEL: no NVIDIA driver",
    ("microsoftwindowsserver", "windowsserver"): "Windows Server cannot run the Linux NCCL stack",
    ("microsoftwindowsdesktop", "windows-10"): "Windows cannot run the Linux NCCL stack",
}


def gpu_driver_verdict(image: str) -> tuple[Optional[bool], str]:
    """(True, why) known to carry an NVIDIA driver, (False, why) known not to, (None, why) unknown."""
    ref, _ = parse_image(image)
    if ref is None:
        return None, "not a valid image reference"
    if ref.resource_id:
        return None, "a custom image: hpcconf cannot see whether it has the NVIDIA driver"
    key = (ref.publisher, ref.offer)
    if key in GPU_DRIVER_OFFERS:
        return True, GPU_DRIVER_OFFERS[key]
    if key in NO_DRIVER_OFFERS:
        return False, NO_DRIVER_OFFERS[key]
    return None, f"offer {ref.parts[0]}:{ref.parts[1]} is not in hpcconf's image table"


# Azure size names: Standard_<family letters><vCPUs><features>[_<accelerator>][_v<N>].
_SIZE = re.compile(r"^Standard_([A-Z]+)(\d+)(?:-(\d+))?([a-z]*)(?:_([A-Za-z0-9]+))?(?:_v(\d+))?$")


@dataclass(frozen=True)
class VmSize:
    family: str  # "ND", "NC", "F", "HB"
    vcpus: int
    features: str  # "asr", "ads", "rs", "s"

    @property
    def gpu(self) -> bool:
        return self.family in ("NC", "ND", "NV", "NG", "NCC")

    @property
    def rdma(self) -> bool:
        """'r' in the features: the size has an InfiniBand (RDMA) back end."""
        return "r" in self.features


def parse_vm_size(name: str) -> Optional[VmSize]:
    match = _SIZE.match(name.strip())
    if not match:
        return None
    family, cpus, constrained, features = match.group(1), int(match.group(2)), match.group(3), match.group(4)
    return VmSize(family=family, vcpus=int(constrained) if constrained else cpus, features=features)


# Sizes with A100 / H100 / H200 GPUs whose names do not say so.
_AMPERE_OR_NEWER_UNNAMED = frozenset({"Standard_ND96asr_v4"})


def ampere_or_newer(vm_size: str) -> bool:
    """A100, H100 or H200 GPUs (cyclecloud-slurm 2.7.x trouble, az-hop #1919)."""
    return any(g in vm_size for g in ("A100", "H100", "H200")) or vm_size in _AMPERE_OR_NEWER_UNNAMED


def queue_max_nodes(queue: Mapping[str, Any]) -> Optional[int]:
    """Nodes a queue can grow to: max_count, or max_core_count / vCPUs, the lower of the two."""
    limits = []
    if _is_int(queue.get("max_count")):
        limits.append(int(queue["max_count"]))
    size = parse_vm_size(str(queue.get("vm_size", "")))
    if _is_int(queue.get("max_core_count")) and size is not None:
        limits.append(math.floor(int(queue["max_core_count"]) / size.vcpus))
    return min(limits) if limits else None
