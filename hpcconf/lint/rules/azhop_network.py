"""AzHOP ``config.yml`` network: subnet layout (AZH005), compute subnet size (AZH006), sections a feature needs (AZH007)."""

from __future__ import annotations

import ipaddress
from typing import Any, Iterator

from ...diagnostics import Diagnostic, Severity
from ...knowledge import azhop as kb
from ...rules_registry import rule
from ..azhop_config import KINDS, config_data, dig, ipv4_network, is_true, queues_of, subnets_of
from ..context import LintContext
from ..document import Document

# -- AZH005 / AZH006 ------------------------------------------------------------------------------------

@rule(code="AZH005", name="azhop-subnet-layout", severity=Severity.ERROR, kinds=KINDS)
def subnet_layout(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """A subnet range is not a CIDR, lies outside the VNet address space, overlaps another, or is too small.

    ## What it catches
    In a VNet az-hop creates (no ``vnet.id``): ``address_space`` and ``address_prefixes`` that are
    not IPv4 CIDR ranges (or have host bits set), subnets outside ``address_space``, overlapping
    subnets, a bastion subnet smaller than /26 and (warning) a gateway subnet smaller than /27.

    ## Why is this bad?
    The schema types all of these as plain strings (G2). Azure refuses the VNet at deploy time,
    after the deployer has started: overlapping or out-of-space prefixes fail the subnet
    creation, and AzureBastionSubnet must be /26 or larger (docs/deploy/index.md, template comment
    "CIDR minimal range must be /26").

    ## Example
    ```yaml
    network:
      vnet:
        address_space: "10.0.0.0/23"
        subnets:
          frontend: {address_prefixes: "10.0.0.0/29"}
          admin: {address_prefixes: "10.0.0.0/28"}     # overlaps frontend
          compute: {address_prefixes: "10.0.2.0/24"}   # outside the /23
    ```

    ## Fix
    ```yaml
          admin: {address_prefixes: "10.0.0.16/28"}
          compute: {address_prefixes: "10.0.1.0/24"}
    ```
    """
    data = config_data(doc)
    vnet = dig(data, "network", "vnet", default={})
    if not isinstance(vnet, dict) or vnet.get("id"):
        return  # an existing VNet: only subnet names are used
    space = ipv4_network(vnet.get("address_space"))
    if "address_space" in vnet and space is None:
        yield doc.at_path(("network", "vnet", "address_space"), f"address_space '{vnet.get('address_space')}' is not an IPv4 CIDR range",
                          hint="write it like 10.0.0.0/23 (no host bits)", prefer_value=True)
    nets: list[tuple[str, ipaddress.IPv4Network]] = []
    for role, subnet in subnets_of(data).items():
        prefix = subnet.get("address_prefixes") if isinstance(subnet, dict) else None
        if prefix is None:
            continue
        path = ("network", "vnet", "subnets", role, "address_prefixes")
        net = ipv4_network(prefix)
        if net is None:
            yield doc.at_path(path, f"subnet {role}: '{prefix}' is not an IPv4 CIDR range", hint="write it like 10.0.1.0/24 (no host bits)", prefer_value=True)
            continue
        if space is not None and not net.subnet_of(space):
            yield doc.at_path(path, f"subnet {role} {net} is outside the VNet address space {space}", hint=f"pick a range inside {space}", prefer_value=True)
        for other_role, other in nets:
            if net.overlaps(other):
                yield doc.at_path(path, f"subnet {role} {net} overlaps subnet {other_role} {other}", hint="give each subnet its own range", prefer_value=True)
        if role == "bastion" and net.prefixlen > kb.BASTION_MIN_PREFIX:
            yield doc.at_path(path, f"bastion subnet {net} is smaller than /26; AzureBastionSubnet must be /26 or larger", hint="use a /26", prefer_value=True)
        if role == "gateway" and net.prefixlen > kb.GATEWAY_MIN_PREFIX:
            yield doc.at_path(path, f"gateway subnet {net} is smaller than the /27 Azure recommends", hint="use a /27 or /26",
                              prefer_value=True, severity=Severity.WARNING)
        nets.append((role, net))


@rule(code="AZH006", name="azhop-compute-subnet-size", severity=Severity.WARNING, kinds=KINDS)
def compute_subnet_size(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """The compute subnet has fewer addresses than the queues can start nodes.

    ## What it catches
    A compute subnet whose usable addresses (size minus the 5 Azure keeps) are fewer than one queue's
    largest node count (``max_count``, or ``max_core_count`` / vCPUs of the size, the lower of the
    two), and (info: whether they run at once depends on the workload) fewer than all queues' together. Queues placed in another region's subnet
    (``subnet:``) are not counted.

    ## Why is this bad?
    Every node of every queue takes an address in the compute subnet. When the subnet is full,
    CycleCloud cannot start more nodes and jobs stay pending with allocation errors. az-hop's
    deployment guide sizes subnets with "Azure will reserve 5 IP addresses" (docs/deploy/index.md).

    ## Severity
    Warning: the configuration deploys and every job up to the subnet's size runs; what is lost is the
    queue's reach beyond it (those nodes never start). Not an error: nothing refuses the file.

    ## Example
    ```yaml
          compute: {address_prefixes: "10.0.1.0/26"}   # 59 usable addresses
    queues:
      - {name: hpc, vm_size: Standard_HB120rs_v3, max_count: 100, image: azhpc:azhop-compute:centos-7_9:latest}
    ```

    ## Fix
    Enlarge the subnet (and the address space), or lower ``max_count``:
    ```yaml
          compute: {address_prefixes: "10.0.1.0/24"}   # 251 usable addresses
    ```
    """
    data = config_data(doc)
    if dig(data, "network", "vnet", "id"):
        return
    compute = ipv4_network(dig(subnets_of(data), "compute", "address_prefixes"))
    if compute is None:
        return
    total = 0
    for _, queue in queues_of(data):
        if queue.get("subnet") or queue.get("location"):
            continue
        total += kb.queue_max_nodes(queue) or 0
    usable = kb.usable_ips(str(compute))
    path = ("network", "vnet", "subnets", "compute", "address_prefixes")
    for _i, queue in queues_of(data):
        nodes = kb.queue_max_nodes(queue) or 0
        if nodes > usable and not (queue.get("subnet") or queue.get("location")):
            yield doc.at_path(path, f"compute subnet {compute} has {usable} usable addresses but queue '{queue.get('name')}' "
                                    f"alone can start {nodes} nodes",
                              hint="use a larger compute subnet (a /24 holds 251 nodes) or lower the queue's limits", prefer_value=True)
            return
    if total > usable:
        yield doc.at_path(path, f"compute subnet {compute} has {usable} usable addresses but the queues together can start {total} nodes",
                          hint="a larger compute subnet (a /24 holds 251 nodes) lets every queue reach its limit at once",
                          prefer_value=True, severity=Severity.INFO)


# -- AZH007 --------------------------------------------------------------------------------------------

def _conditions(data: dict[str, Any]) -> Iterator[tuple[tuple[Any, ...], str, tuple[Any, ...], str]]:
    """(trigger path, why, needed path, what) for each section a setting makes mandatory."""
    subnets = ("network", "vnet", "subnets")
    if is_true(dig(data, "anf", "create")):
        yield ("anf", "create"), "anf.create", subnets + ("netapp",), "a netapp subnet (the ANF volume is delegated to it)"
    if is_true(dig(data, "lustre", "create")):
        # lustre.sku and .capacity have defaults (AMLFS-Durable-Premium-250, 8 TiB) since AMLFS came in
        # (az-hop bicep/azhop.bicep, PR #1715): only the subnet is dereferenced unguarded
        yield ("lustre", "create"), "lustre.create", subnets + ("lustre",), "a lustre subnet"
    if data.get("queue_manager") == "slurm" and is_true(dig(data, "slurm", "accounting_enabled")) and not dig(data, "database", "fqdn"):
        yield ("slurm", "accounting_enabled"), "Slurm accounting in a new database", subnets + ("database",), "a database subnet"
    auth = dig(data, "authentication", "user_auth", default="ad")
    if auth == "ad" and not is_true(dig(data, "domain", "use_existing_dc")):
        trigger = ("authentication", "user_auth") if dig(data, "authentication", "user_auth") else ("authentication",)
        yield trigger, "user_auth: ad (the default) with a new domain controller", subnets + ("ad",), "an ad subnet"
        yield trigger, "user_auth: ad (the default) with a new domain controller", ("ad", "vm_size"), "ad.vm_size"
    if dig(data, "monitoring", "grafana", default=True) is not False:
        yield (("monitoring", "grafana") if dig(data, "monitoring", "grafana") is not None else ("monitoring",)), \
            "monitoring.grafana (on by default)", ("grafana", "vm_size"), "grafana.vm_size"
    if is_true(dig(data, "bastion", "create")):
        yield ("bastion", "create"), "bastion.create", subnets + ("bastion",), "a bastion subnet (/26)"
    if is_true(dig(data, "vpn_gateway", "create")):
        yield ("vpn_gateway", "create"), "vpn_gateway.create", subnets + ("gateway",), "a gateway subnet"
    if dig(data, "authentication", "httpd_auth") == "oidc":
        yield ("authentication", "httpd_auth"), "httpd_auth: oidc", ("authentication", "ood_auth_openidc"), "authentication.ood_auth_openidc"
    if is_true(dig(data, "domain", "use_existing_dc")):
        yield ("domain", "use_existing_dc"), "domain.use_existing_dc", ("domain", "domain_join_user"), "domain.domain_join_user"
        yield ("domain", "use_existing_dc"), "domain.use_existing_dc", ("domain", "existing_dc_details"), "domain.existing_dc_details"


@rule(code="AZH007", name="azhop-conditional-sections", severity=Severity.ERROR, kinds=KINDS)
def conditional_sections(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """A feature is switched on but the subnet or VM section it needs is missing.

    ## What it catches
    ``anf.create`` without a netapp subnet; ``lustre.create`` without a lustre subnet (its
    sku and capacity have defaults); Slurm accounting (no existing ``database.fqdn``) without a database subnet;
    ``user_auth: ad`` (the default) with a new domain controller but no ad subnet or ``ad.vm_size``;
    Grafana (on by default) without ``grafana.vm_size``; bastion / VPN gateway without their subnet;
    ``httpd_auth: oidc`` without ``ood_auth_openidc``; ``use_existing_dc`` without the join user and
    DC details; ``anf.dual_protocol`` without AD.

    ## Why is this bad?
    The schema has no conditional requirements (G3), but ``bicep/azhop.bicep`` dereferences these
    keys unguarded, so the deployment fails in Bicep with a template error about a missing
    property. az-hop #1906: the database subnet was even demanded for a PBS deployment.

    ## Example
    ```yaml
    anf:
      create: true
      homefs_size_tb: 4
      homefs_service_level: Standard
    network:
      vnet:
        subnets:        # no netapp subnet
          frontend: {address_prefixes: "10.0.0.0/29"}
    ```

    ## Fix
    ```yaml
          netapp: {address_prefixes: "10.0.0.32/28"}
    ```
    """
    data = config_data(doc)
    for trigger, why, needed, what in _conditions(data):
        if dig(data, *needed) is None:
            yield doc.at_path(trigger, f"{why} needs {what}, which is missing",
                              hint=f"add {'.'.join(needed)} (Bicep reads it without a fallback)", prefer_value=True)
    if is_true(dig(data, "anf", "dual_protocol")) and dig(data, "authentication", "user_auth", default="ad") != "ad":
        yield doc.at_path(("anf", "dual_protocol"), "anf.dual_protocol (SMB) needs Active Directory, but user_auth is local",
                          hint="set dual_protocol: false or user_auth: ad", prefer_value=True)
