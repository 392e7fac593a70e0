"""AzHOP ``config.yml`` rules: az-hop's own schema, then what it misses (research/azhop.md §2-3).

``validate_config.sh`` checks the file against ``config.schema.json`` and nothing else; Bicep and
Ansible then dereference keys the schema never required and split strings it never parsed.
AZH001 is the schema (our own encoding of it, :mod:`hpcconf.knowledge.azhop`); AZH002-AZH015 are
the gaps, each with the az-hop issue or code path that shows the failure.
"""

from __future__ import annotations

import difflib
import ipaddress
from typing import Any, Iterator, Optional

from ...artifacts import Kind
from ...diagnostics import Diagnostic, Severity
from ...knowledge import azhop as kb
from ..context import LintContext
from ..document import Document
from ..registry import rule

KINDS = (Kind.AZHOP_CONFIG,)


# -- reading the config defensively (AZH001 reports shape problems; the others skip them) ---------------

def _data(doc: Document) -> dict:
    return doc.data if isinstance(doc.data, dict) else {}


def _get(data: Any, *path: Any, default: Any = None) -> Any:
    node = data
    for step in path:
        if isinstance(node, dict) and step in node:
            node = node[step]
        elif isinstance(node, list) and isinstance(step, int) and 0 <= step < len(node):
            node = node[step]
        else:
            return default
    return node


def _queues(data: dict) -> list[tuple[int, dict]]:
    queues = data.get("queues")
    return [(i, q) for i, q in enumerate(queues) if isinstance(q, dict)] if isinstance(queues, list) else []


def _queue_manager(data: dict) -> str:
    value = data.get("queue_manager")
    return value if isinstance(value, str) else kb.DEFAULT_QUEUE_MANAGER


def _subnets(data: dict) -> dict:
    subnets = _get(data, "network", "vnet", "subnets")
    return subnets if isinstance(subnets, dict) else {}


def _network(text: Any) -> Optional[ipaddress.IPv4Network]:
    if not isinstance(text, str):
        return None
    try:
        return ipaddress.IPv4Network(text.strip(), strict=True)
    except ValueError:
        return None


def _true(value: Any) -> bool:
    return value is True


# -- AZH001 --------------------------------------------------------------------------------------------

@rule(code="AZH001", name="azhop-schema", severity=Severity.ERROR, kinds=KINDS)
def schema(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """config.yml breaks az-hop's ``config.schema.json``: an unknown key, a wrong type, a value off its list.

    ## What it catches
    Everything az-hop's ``validate_config.sh`` rejects: keys the schema does not know (almost every
    object is closed), missing required keys, wrong types (``version: "7.9"`` where a number is
    expected), values outside an enum (``slurm_version``, ``homefs_service_level``, AMLFS ``sku``),
    names breaking a pattern or length (infra VM names, queue names) and numbers out of range
    (ANF 4-100 TB). Legacy keys of older az-hop releases get a hint saying what replaced them.

    ## Why is this bad?
    ``build.sh`` runs ``validate_config.sh`` before every deploy and stops on the first schema error;
    without it (``--no-validate``) the typo reaches Bicep or Ansible. az-hop #1604: the deprecated
    ``monitoring.install_agent`` failed validation inside cloud-init ("Additional properties are not
    allowed"); #994: config typos kept breaking deployments until the schema landed. The rule uses
    hpcconf's own encoding of the schema (az-hop 826f7906), tested to agree with the upstream file.

    ## Example
    ```yaml
    guacamole:            # removed from az-hop
      vm_size: Standard_B2ms
    slurm:
      accounting_enabled: false
      slurm_version: 22.05   # not a version az-hop installs
    ```

    ## Fix
    Delete or rename the key as the hint says; use a value from the listed ones:
    ```yaml
    slurm:
      accounting_enabled: false
      slurm_version: "23.02.5"
      cyclecloud_slurm_version: "3.0.4"
    ```
    """
    problems = kb.validate_config(doc.data)
    mistyped = {p.path for p in problems if p.kind == "type"}
    for problem in problems:
        if problem.kind == "enum" and problem.path in mistyped:
            continue  # one finding per value: the type error already says it
        hint = _schema_hint(problem)
        if problem.kind == "required":
            yield doc.at_path(problem.path, problem.message, hint=hint)
        else:
            yield doc.at_path(problem.path, problem.message, hint=hint, prefer_value=problem.kind != "unknown_key")


def _schema_hint(problem: kb.SchemaProblem) -> str:
    if problem.kind == "unknown_key":
        key = problem.key or ""
        if key in kb.LEGACY_KEYS:
            return f"'{key}' is a legacy key: {kb.LEGACY_KEYS[key]}"
        if problem.path[:-1] == ("network", "asg", "names") and key in kb.ASG_NAME_DRIFT:
            return kb.ASG_NAME_DRIFT[key]
        allowed = kb.allowed_keys(problem.path[:-1])
        close = difflib.get_close_matches(key, allowed, n=1, cutoff=0.6)
        return f"did you mean '{close[0]}'?" if close else ("remove it; allowed here: " + ", ".join(allowed) if allowed else "remove it")
    if problem.kind == "required":
        return f"add '{problem.key}:' here"
    if problem.kind == "type":
        return "check the value's type: quote strings, leave numbers and booleans bare"
    return "use a value az-hop's schema accepts"


# -- AZH002 --------------------------------------------------------------------------------------------

@rule(code="AZH002", name="azhop-queue-name", severity=Severity.ERROR, kinds=KINDS)
def queue_name(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """A queue name is longer than 8 characters, used twice, or makes node hostnames longer than 15.

    ## What it catches
    Queue names of 9 characters (the schema's ``maxLength`` is 9 although its own description says
    "max. 8"), names used by two queues, and queues whose longest node hostname
    (``<name>-pg0-<max nodes>`` with ``ColocateNodes``, ``<name>-<max nodes>`` without) exceeds 15
    characters.

    ## Why is this bad?
    The queue name is the CycleCloud nodearray, the Slurm partition and the hostname prefix. Domain
    join and NetBIOS cut hostnames at 15 characters: az-hop #1191 (``hc44-low-mpi``) got truncated,
    colliding hostnames and a failed AD realm join; PR #1195 added the "max. 8" note. Two queues with
    one name collapse into one nodearray.

    ## Example
    ```yaml
    queues:
      - name: nc96adsv4
        vm_size: Standard_NC96ads_A100_v4
        max_count: 8
        image: microsoft-dsvm:ubuntu-hpc:2204:latest
    ```

    ## Fix
    At most 8 characters, short enough for ``<name>-pg0-<n>``:
    ```yaml
    queues:
      - name: nc96v4
    ```
    """
    data = _data(doc)
    colocate_possible = _queue_manager(data) == "slurm"
    seen: dict[str, int] = {}
    for i, queue in _queues(data):
        name = queue.get("name")
        if not isinstance(name, str):
            continue
        path = ("queues", i, "name")
        if len(name) > kb.QUEUE_NAME_MAX and name not in kb.SPECIAL_QUEUE_NAMES:
            yield doc.at_path(path, f"queue name '{name}' is {len(name)} characters; az-hop allows {kb.QUEUE_NAME_MAX} "
                                    "(the schema's limit of 9 is off by one)",
                              hint="shorten it: hostnames <name>-pg0-<n> are cut at 15 characters (az-hop #1191)", prefer_value=True)
        else:
            nodes = kb.queue_max_nodes(queue)
            if nodes is not None:
                host = kb.longest_hostname(name, nodes, colocate_possible and queue.get("ColocateNodes") is True)
                if len(host) > kb.HOSTNAME_MAX:
                    yield doc.at_path(path, f"node hostname '{host}' is {len(host)} characters; Windows/AD hostnames stop at 15",
                                      hint="shorten the queue name or lower its max_count", prefer_value=True)
        if name in seen:
            yield doc.at_path(path, f"queue name '{name}' is already used by queues[{seen[name]}]",
                              hint="give each queue its own name: it is the nodearray and the partition", prefer_value=True)
        seen.setdefault(name, i)


# -- AZH003 --------------------------------------------------------------------------------------------

@rule(code="AZH003", name="azhop-queue-manager", severity=Severity.ERROR, kinds=KINDS)
def queue_manager(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """``queue_manager`` is neither ``slurm`` nor ``openpbs``.

    ## What it catches
    Any other value: ``Slurm``, ``pbs``, ``pbspro``, ``slurm `` ...

    ## Why is this bad?
    The schema types ``queue_manager`` as a plain string (research/azhop.md G1), so a typo passes
    validation. The playbooks and Bicep compare it with ``slurm`` / ``openpbs`` and fall back to
    OpenPBS (``bicep/azhop.bicep`` default ``openpbs``): a misspelt ``slurm`` silently deploys PBS.

    ## Example
    ```yaml
    queue_manager: Slurm
    ```

    ## Fix
    ```yaml
    queue_manager: slurm
    ```
    """
    value = _data(doc).get("queue_manager")
    if isinstance(value, str) and value not in kb.QUEUE_MANAGERS:
        close = difflib.get_close_matches(value.strip().lower(), kb.QUEUE_MANAGERS, n=1, cutoff=0.5)
        hint = f"did you mean '{close[0]}'?" if close else "use slurm or openpbs"
        yield doc.at_path(("queue_manager",), f"queue_manager '{value}' is not slurm or openpbs; az-hop would deploy OpenPBS",
                          hint=hint, prefer_value=True)


# -- AZH004 --------------------------------------------------------------------------------------------

@rule(code="AZH004", name="azhop-slurm-versions", severity=Severity.ERROR, kinds=KINDS)
def slurm_versions(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """``slurm_version`` and ``cyclecloud_slurm_version`` are not a supported pair, or one is left to a default.

    ## What it catches
    With ``queue_manager: slurm``: a cyclecloud-slurm project paired with a Slurm release it does not
    support (2.7.x: 20.11.9 / 22.05.3; 3.0.4: 22.05.9 / 23.02.5), including pairs completed by the
    runtime default; a missing version (warning); cyclecloud-slurm 3.x with a pinned CycleCloud older
    than 8.4.2.

    ## Why is this bad?
    The schema checks each version against its list, never the pair (G4). Its ``default`` annotations
    (22.05.9 / 3.0.4) are not what the playbooks install when a key is absent (20.11.9 / 2.7.2,
    research D2): ``slurm_version: 22.05.9`` alone installs cyclecloud-slurm 2.7.2, which cannot run
    it. PR #1752 documents the pairs and the CycleCloud 8.4.2 requirement of 3.0.x; PR #950: Slurm
    failed to create nodes when the version was left unset.

    ## Example
    ```yaml
    slurm:
      accounting_enabled: false
      slurm_version: 22.05.9
    ```

    ## Fix
    Always write both, as a supported pair:
    ```yaml
    slurm:
      accounting_enabled: false
      slurm_version: 22.05.9
      cyclecloud_slurm_version: 3.0.4
    ```
    """
    data = _data(doc)
    if data.get("queue_manager") != "slurm":
        return
    slurm = data.get("slurm") if isinstance(data.get("slurm"), dict) else {}
    given_slurm, given_cc = slurm.get("slurm_version"), slurm.get("cyclecloud_slurm_version")
    sv = given_slurm if isinstance(given_slurm, str) else kb.RUNTIME_SLURM_VERSION
    cc = given_cc if isinstance(given_cc, str) else kb.RUNTIME_CYCLECLOUD_SLURM_VERSION
    if sv not in kb.SLURM_VERSIONS or cc not in kb.SLURM_PAIRS:
        return  # AZH001 reports values off the schema's lists
    path = ("slurm",) if "slurm" in data else ("queue_manager",)
    if sv not in kb.SLURM_PAIRS[cc]:
        which = "cyclecloud_slurm_version" if given_cc is not None else ("slurm_version" if given_slurm is not None else None)
        defaulted = "" if given_cc is not None and given_slurm is not None else \
            f" (the missing key defaults to {kb.RUNTIME_SLURM_VERSION if given_slurm is None else kb.RUNTIME_CYCLECLOUD_SLURM_VERSION} at runtime)"
        yield doc.at_path(path + ((which,) if which else ()), f"cyclecloud-slurm {cc} cannot install Slurm {sv}{defaulted}",
                          hint=f"pair Slurm {sv} with cyclecloud_slurm_version {kb.cyclecloud_slurm_for(sv)}", prefer_value=True)
    elif given_slurm is None or given_cc is None:
        missing = "slurm_version" if given_slurm is None else "cyclecloud_slurm_version"
        yield doc.at_path(path, f"{missing} is not set: the playbooks install {sv} / cyclecloud-slurm {cc}, "
                                f"not the schema's default {kb.SCHEMA_DEFAULT_SLURM_VERSION} / {kb.SCHEMA_DEFAULT_CYCLECLOUD_SLURM_VERSION}",
                          hint=f"write both: slurm_version: {sv} and cyclecloud_slurm_version: {cc}", severity=Severity.WARNING)
    pinned = _get(data, "cyclecloud", "version")
    if isinstance(pinned, str) and kb.version_key(cc)[:1] >= (3,) and kb.version_key(pinned)[:3] < kb.MIN_CYCLECLOUD_FOR_CC_SLURM_3:
        yield doc.at_path(("cyclecloud", "version"), f"cyclecloud-slurm {cc} needs CycleCloud 8.4.2 or newer, not {pinned}",
                          hint="raise cyclecloud.version (or remove it for the newest) or use cyclecloud-slurm 2.7.x", prefer_value=True)


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
    data = _data(doc)
    vnet = _get(data, "network", "vnet", default={})
    if not isinstance(vnet, dict) or vnet.get("id"):
        return  # an existing VNet: only subnet names are used
    space = _network(vnet.get("address_space"))
    if "address_space" in vnet and space is None:
        yield doc.at_path(("network", "vnet", "address_space"), f"address_space '{vnet.get('address_space')}' is not an IPv4 CIDR range",
                          hint="write it like 10.0.0.0/23 (no host bits)", prefer_value=True)
    nets: list[tuple[str, ipaddress.IPv4Network]] = []
    for role, subnet in _subnets(data).items():
        prefix = subnet.get("address_prefixes") if isinstance(subnet, dict) else None
        if prefix is None:
            continue
        path = ("network", "vnet", "subnets", role, "address_prefixes")
        net = _network(prefix)
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


@rule(code="AZH006", name="azhop-compute-subnet-size", severity=Severity.ERROR, kinds=KINDS)
def compute_subnet_size(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """The compute subnet has fewer addresses than the queues can start nodes.

    ## What it catches
    A compute subnet whose usable addresses (size minus the 5 Azure keeps) are fewer than one queue's
    largest node count (``max_count``, or ``max_core_count`` / vCPUs of the size, the lower of the
    two), and (warning) fewer than all queues' together. Queues placed in another region's subnet
    (``subnet:``) are not counted.

    ## Why is this bad?
    Every node of every queue takes an address in the compute subnet. When the subnet is full,
    CycleCloud cannot start more nodes and jobs stay pending with allocation errors. az-hop's
    deployment guide sizes subnets with "Azure will reserve 5 IP addresses" (docs/deploy/index.md).

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
    data = _data(doc)
    if _get(data, "network", "vnet", "id"):
        return
    compute = _network(_get(_subnets(data), "compute", "address_prefixes"))
    if compute is None:
        return
    total = 0
    for _, queue in _queues(data):
        if queue.get("subnet") or queue.get("location"):
            continue
        total += kb.queue_max_nodes(queue) or 0
    usable = kb.usable_ips(str(compute))
    path = ("network", "vnet", "subnets", "compute", "address_prefixes")
    for _i, queue in _queues(data):
        nodes = kb.queue_max_nodes(queue) or 0
        if nodes > usable and not (queue.get("subnet") or queue.get("location")):
            yield doc.at_path(path, f"compute subnet {compute} has {usable} usable addresses but queue '{queue.get('name')}' "
                                    f"alone can start {nodes} nodes",
                              hint="use a larger compute subnet (a /24 holds 251 nodes) or lower the queue's limits", prefer_value=True)
            return
    if total > usable:
        yield doc.at_path(path, f"compute subnet {compute} has {usable} usable addresses but the queues together can start {total} nodes",
                          hint="a larger compute subnet (a /24 holds 251 nodes) lets every queue reach its limit at once",
                          prefer_value=True, severity=Severity.WARNING)


# -- AZH007 --------------------------------------------------------------------------------------------

def _conditions(data: dict) -> Iterator[tuple[tuple, str, tuple, str]]:
    """(trigger path, why, needed path, what) for each section a setting makes mandatory."""
    subnets = ("network", "vnet", "subnets")
    if _true(_get(data, "anf", "create")):
        yield ("anf", "create"), "anf.create", subnets + ("netapp",), "a netapp subnet (the ANF volume is delegated to it)"
    if _true(_get(data, "lustre", "create")):
        yield ("lustre", "create"), "lustre.create", subnets + ("lustre",), "a lustre subnet"
        yield ("lustre", "create"), "lustre.create", ("lustre", "sku"), "lustre.sku"
        yield ("lustre", "create"), "lustre.create", ("lustre", "capacity"), "lustre.capacity"
    if data.get("queue_manager") == "slurm" and _true(_get(data, "slurm", "accounting_enabled")) and not _get(data, "database", "fqdn"):
        yield ("slurm", "accounting_enabled"), "Slurm accounting in a new database", subnets + ("database",), "a database subnet"
    auth = _get(data, "authentication", "user_auth", default="ad")
    if auth == "ad" and not _true(_get(data, "domain", "use_existing_dc")):
        trigger = ("authentication", "user_auth") if _get(data, "authentication", "user_auth") else ("authentication",)
        yield trigger, "user_auth: ad (the default) with a new domain controller", subnets + ("ad",), "an ad subnet"
        yield trigger, "user_auth: ad (the default) with a new domain controller", ("ad", "vm_size"), "ad.vm_size"
    if _get(data, "monitoring", "grafana", default=True) is not False:
        yield (("monitoring", "grafana") if _get(data, "monitoring", "grafana") is not None else ("monitoring",)), \
            "monitoring.grafana (on by default)", ("grafana", "vm_size"), "grafana.vm_size"
    if _true(_get(data, "bastion", "create")):
        yield ("bastion", "create"), "bastion.create", subnets + ("bastion",), "a bastion subnet (/26)"
    if _true(_get(data, "vpn_gateway", "create")):
        yield ("vpn_gateway", "create"), "vpn_gateway.create", subnets + ("gateway",), "a gateway subnet"
    if _get(data, "authentication", "httpd_auth") == "oidc":
        yield ("authentication", "httpd_auth"), "httpd_auth: oidc", ("authentication", "ood_auth_openidc"), "authentication.ood_auth_openidc"
    if _true(_get(data, "domain", "use_existing_dc")):
        yield ("domain", "use_existing_dc"), "domain.use_existing_dc", ("domain", "domain_join_user"), "domain.domain_join_user"
        yield ("domain", "use_existing_dc"), "domain.use_existing_dc", ("domain", "existing_dc_details"), "domain.existing_dc_details"


@rule(code="AZH007", name="azhop-conditional-sections", severity=Severity.ERROR, kinds=KINDS)
def conditional_sections(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """A feature is switched on but the subnet or VM section it needs is missing.

    ## What it catches
    ``anf.create`` without a netapp subnet; ``lustre.create`` without a lustre subnet, sku or
    capacity; Slurm accounting (no existing ``database.fqdn``) without a database subnet;
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
    data = _data(doc)
    for trigger, why, needed, what in _conditions(data):
        if _get(data, *needed) is None:
            yield doc.at_path(trigger, f"{why} needs {what}, which is missing",
                              hint=f"add {'.'.join(needed)} (Bicep reads it without a fallback)", prefer_value=True)
    if _true(_get(data, "anf", "dual_protocol")) and _get(data, "authentication", "user_auth", default="ad") != "ad":
        yield doc.at_path(("anf", "dual_protocol"), "anf.dual_protocol (SMB) needs Active Directory, but user_auth is local",
                          hint="set dual_protocol: false or user_auth: ad", prefer_value=True)


# -- AZH008 --------------------------------------------------------------------------------------------

@rule(code="AZH008", name="azhop-home-mount", severity=Severity.ERROR, kinds=KINDS)
def home_mount(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """``mounts.home`` does not match the storage the config creates.

    ## What it catches
    ``type: anf`` without ``anf.create: true``; ``type: azurefiles`` without ``azurefiles.create:
    true``; an empty ``server`` or ``export``; ``existing`` (the default type) with az-hop's
    ``{{anf_home_*}}`` placeholders; an Azure Files home whose options do not ask for NFS 4.1;
    (warning) both ``anf.create`` and ``azurefiles.create``.

    ## Why is this bad?
    ``bicep/azhop.bicep`` fills ``anf_home_ip`` / ``anf_home_path`` / ``anf_home_opts`` from the
    ANF or Azure Files module chosen by the home type; with no such storage there is nothing to
    mount and every node fails its NFS mount at boot. az-hop #1200: an Azure Files home mounted with
    the wrong options timed out (``mount.nfs: Connection timed out``); Azure Files NFS is 4.1 only.
    Seed 000's published config.yml has ``server: ''``.

    ## Example
    ```yaml
    azurefiles: {create: true, size_gb: 1024}
    mounts:
      home:
        type: azurefiles
        mountpoint: /anfhome
        server: ''
        export: ''
    ```

    ## Fix
    ```yaml
        server: '{{anf_home_ip}}'
        export: '{{anf_home_path}}'
        options: 'vers=4,minorversion=1,sec=sys'
    ```
    """
    data = _data(doc)
    home = _get(data, "mounts", "home")
    if not isinstance(home, dict):
        return
    kind = home.get("type", "existing")
    base = ("mounts", "home")
    type_path = base + (("type",) if "type" in home else ())
    if kind == "anf" and not _true(_get(data, "anf", "create")):
        yield doc.at_path(type_path, "home type 'anf' but no ANF volume is created (anf.create is not true)",
                          hint="add anf: {create: true, homefs_size_tb: 4, homefs_service_level: Standard}", prefer_value=True)
    if kind == "azurefiles" and not _true(_get(data, "azurefiles", "create")):
        yield doc.at_path(type_path, "home type 'azurefiles' but no Azure Files share is created (azurefiles.create is not true)",
                          hint="add azurefiles: {create: true, size_gb: 1024}", prefer_value=True)
    for key in ("server", "export"):
        value = home.get(key)
        if isinstance(value, str) and not value.strip():
            fill = kb.HOME_PLACEHOLDERS[key] if kind in ("anf", "azurefiles") else f"your NFS {key}"
            yield doc.at_path(base + (key,), f"mounts.home.{key} is empty: nodes would mount nothing",
                              hint=f"use '{fill}'", prefer_value=True)
        elif isinstance(value, str) and kind == "existing" and "{{anf_home" in value:
            yield doc.at_path(base + (key,), f"home type is 'existing' (the default) but {key} is az-hop's placeholder {value}",
                              hint="set type: anf or azurefiles to let az-hop create the share, or give the real NFS server/export",
                              prefer_value=True)
    options = home.get("options")
    if kind == "azurefiles" and isinstance(options, str) and "{{" not in options and not kb.nfs41_options(options):
        yield doc.at_path(base + ("options",), f"Azure Files NFS speaks only NFS 4.1; options '{options}' do not ask for it",
                          hint="use vers=4,minorversion=1,sec=sys or '{{anf_home_opts}}'", prefer_value=True)
    if _true(_get(data, "anf", "create")) and _true(_get(data, "azurefiles", "create")):
        yield doc.at_path(("azurefiles", "create"), "both anf.create and azurefiles.create are true; home uses one of them",
                          hint="create only the storage mounts.home uses", prefer_value=True, severity=Severity.WARNING)


# -- AZH009 --------------------------------------------------------------------------------------------

@rule(code="AZH009", name="azhop-amlfs-size", severity=Severity.ERROR, kinds=KINDS)
def amlfs_size(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """The AMLFS capacity is not a whole number of its tier's steps, or the lustre subnet is too small for it.

    ## What it catches
    ``lustre.capacity`` that is below or not a multiple of the tier's step (48 TiB for
    AMLFS-Durable-Premium-40, 16 for -125, 8 for -250, 4 for -500), and a lustre subnet smaller than
    the AMLFS minimum for that capacity (4-16 TiB /27, 20-40 /26, 44-92 /25, 96-196 /24, 200-400 /23).

    ## Why is this bad?
    Azure rejects other capacities when Bicep creates the file system (``bicep/amlfs.bicep``,
    PR #1900), and an AMLFS needs one address per server: seed 000's "Determining network size"
    table gives the minimum subnet per capacity. az-hop's template /26 lustre subnet caps AMLFS at
    40 TiB.

    ## Example
    ```yaml
    lustre:
      create: true
      sku: AMLFS-Durable-Premium-250
      capacity: 12
    ```

    ## Fix
    ```yaml
      capacity: 16
    ```
    """
    data = _data(doc)
    lustre = data.get("lustre")
    if not isinstance(lustre, dict) or not _true(lustre.get("create")):
        return
    sku, capacity = lustre.get("sku"), lustre.get("capacity")
    if not isinstance(sku, str) or not isinstance(capacity, int) or isinstance(capacity, bool):
        return
    problem = kb.amlfs_capacity_problem(sku, capacity)
    if problem:
        yield doc.at_path(("lustre", "capacity"), problem, hint="use a whole number of steps", prefer_value=True)
    net = _network(_get(_subnets(data), "lustre", "address_prefixes"))
    need = kb.amlfs_min_prefix(capacity)
    if net is not None and (need is None or net.prefixlen > need):
        want = f"/{need} or larger" if need else "more than a /23"
        yield doc.at_path(("network", "vnet", "subnets", "lustre", "address_prefixes"),
                          f"lustre subnet {net} is too small for {capacity} TiB of AMLFS (needs {want})",
                          hint="size it from the AMLFS table: 4-16 TiB /27, 20-40 /26, 44-92 /25, 96-196 /24, 200-400 /23",
                          prefer_value=True)


# -- AZH010 --------------------------------------------------------------------------------------------

def _image_fields(data: dict) -> Iterator[tuple[tuple, Any]]:
    for key in ("linux_base_image", "windows_base_image"):
        if key in data:
            yield (key,), data[key]
    if isinstance(data.get("cyclecloud"), dict) and "image" in data["cyclecloud"]:
        yield ("cyclecloud", "image"), data["cyclecloud"]["image"]
    for i, queue in _queues(data):
        if "image" in queue:
            yield ("queues", i, "image"), queue["image"]


def _plan_fields(data: dict) -> Iterator[tuple[tuple, Any]]:
    if "linux_base_plan" in data:
        yield ("linux_base_plan",), data["linux_base_plan"]
    if isinstance(data.get("cyclecloud"), dict) and "plan" in data["cyclecloud"]:
        yield ("cyclecloud", "plan"), data["cyclecloud"]["plan"]
    for i, queue in _queues(data):
        if "plan" in queue:
            yield ("queues", i, "plan"), queue["plan"]


@rule(code="AZH010", name="azhop-image-reference", severity=Severity.ERROR, kinds=KINDS)
def image_reference(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """An image is neither ``publisher:offer:sku:version`` nor a resource ID, or a plan is not ``publisher:product:name``.

    ## What it catches
    Image strings without exactly four non-empty ``:``-separated parts (and no ``/``), IDs that do
    not start with ``/subscriptions/``, and plans without exactly three parts.

    ## Why is this bad?
    The schema types images and plans as plain strings (G5). Bicep splits marketplace images with
    ``split(image, ':')`` and reads parts 0-3; the CycleCloud template splits plans with
    ``plan.split(':')`` into Publisher/Product/Name. A three-part URN fails the deployment with an
    index error; a four-part plan produces a wrong plan and an unaccepted-terms error.

    ## Example
    ```yaml
    linux_base_image: OpenLogic:CentOS:7_9-gen2
    ```

    ## Fix
    ```yaml
    linux_base_image: OpenLogic:CentOS:7_9-gen2:latest
    ```
    """
    data = _data(doc)
    for path, value in _image_fields(data):
        if isinstance(value, str):
            _, problem = kb.parse_image(value)
            if problem:
                yield doc.at_path(path, f"image: {problem}", hint="publisher:offer:sku:version, or /subscriptions/.../images/...", prefer_value=True)
    for path, value in _plan_fields(data):
        if isinstance(value, str):
            problem = kb.plan_problem(value)
            if problem:
                yield doc.at_path(path, problem, hint="the plan's publisher:product:name (accept its terms first)", prefer_value=True)


# -- AZH011 --------------------------------------------------------------------------------------------

def _effective_cc_slurm(data: dict) -> str:
    value = _get(data, "slurm", "cyclecloud_slurm_version")
    return value if isinstance(value, str) else kb.RUNTIME_CYCLECLOUD_SLURM_VERSION


@rule(code="AZH011", name="azhop-gpu-queue", severity=Severity.ERROR, kinds=KINDS)
def gpu_queue(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """A GPU queue cannot run multi-node NCCL jobs as configured: no driver in the image, or no colocation for InfiniBand.

    ## What it catches
    For compute queues on N-series sizes: an image known to have no NVIDIA driver (plain
    CentOS/Ubuntu/AlmaLinux, Windows); an InfiniBand size (``r`` in the size name) that can grow
    beyond one node under Slurm without ``ColocateNodes: true``; (warning) a colocated queue larger
    than one scale set (``MaxScaleSetSize``, default 100); (info) an image hpcconf cannot judge, and
    A100/H100 queues on cyclecloud-slurm 2.7.x.

    ## Why is this bad?
    The schema has no VM-size semantics (G8). Without a driver ``nvidia-smi`` and NCCL fail on the
    node (azhpc-images #398 shows even a GPU image without the right driver). InfiniBand only links
    VMs of one scale set / placement group; az-hop's Slurm template defaults ``slurm.hpc`` (what
    ColocateNodes sets) to false although the schema text says "Defaults to true", so multi-node
    jobs land on unconnected VMs and NCCL falls back to TCP. az-hop #1016: a colocated scale set
    holds a bounded number of nodes. #1919: NC A100 v4 nodes terminate before configuring on
    cyclecloud-slurm 2.7.2.

    ## Example
    ```yaml
    queues:
      - name: ndv4
        vm_size: Standard_ND96asr_v4
        max_count: 4
        image: OpenLogic:CentOS:7_9-gen2:latest
    ```

    ## Fix
    ```yaml
      - name: ndv4
        vm_size: Standard_ND96asr_v4
        max_count: 4
        image: microsoft-dsvm:ubuntu-hpc:2204:latest
        ColocateNodes: true
    ```
    """
    data = _data(doc)
    slurm = _queue_manager(data) == "slurm"
    old_cc = kb.version_key(_effective_cc_slurm(data))[:1] < (3,)
    for i, queue in _queues(data):
        size = kb.parse_vm_size(str(queue.get("vm_size", "")))
        if size is None or not size.gpu or queue.get("type") == "remoteviz":
            continue
        path = ("queues", i)
        image = queue.get("image")
        if isinstance(image, str):
            has_driver, why = kb.gpu_driver_verdict(image)
            if has_driver is False:
                yield doc.at_path(path + ("image",), f"GPU queue image '{image}' has no NVIDIA driver ({why})",
                                  hint="use an HPC image, e.g. microsoft-dsvm:ubuntu-hpc:2204:latest", prefer_value=True)
            elif has_driver is None:
                yield doc.at_path(path + ("image",), f"cannot tell whether GPU queue image '{image}' has an NVIDIA driver: {why}",
                                  hint="make sure the image has the NVIDIA datacenter driver (and MOFED for InfiniBand)",
                                  prefer_value=True, severity=Severity.INFO)
        nodes = kb.queue_max_nodes(queue) or 0
        if slurm and size.rdma and nodes > 1 and queue.get("ColocateNodes") is not True:
            yield doc.at_path(path + (("ColocateNodes",) if "ColocateNodes" in queue else ("name",)),
                              f"InfiniBand queue '{queue.get('name')}' can run {nodes}-node jobs but ColocateNodes is not true "
                              "(az-hop's Slurm template defaults it to false)",
                              hint="set ColocateNodes: true so the nodes share one placement group and the InfiniBand fabric",
                              prefer_value=True)
        scale_set = queue.get("MaxScaleSetSize", 100)
        if slurm and queue.get("ColocateNodes") is True and isinstance(scale_set, int) and nodes > scale_set:
            yield doc.at_path(path + ("max_count",) if "max_count" in queue else path,
                              f"queue '{queue.get('name')}' can grow to {nodes} nodes but one scale set holds {scale_set}; "
                              "a job cannot span scale sets over InfiniBand", hint="keep multi-node jobs within MaxScaleSetSize",
                              prefer_value=True, severity=Severity.WARNING)
        if slurm and old_cc and kb.ampere_or_newer(str(queue.get("vm_size"))):
            yield doc.at_path(path + ("vm_size",), f"cyclecloud-slurm {_effective_cc_slurm(data)} with {queue.get('vm_size')}: "
                                                   "az-hop #1919 reports A100 nodes terminating before configuring on 2.7.2",
                              hint="prefer slurm_version 23.02.5 with cyclecloud_slurm_version 3.0.4 for A100/H100 queues",
                              prefer_value=True, severity=Severity.INFO)


# -- AZH012 --------------------------------------------------------------------------------------------

@rule(code="AZH012", name="azhop-queue-limits", severity=Severity.WARNING, kinds=KINDS)
def queue_limits(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """A queue's limits or scheduler-specific keys do not do what they say.

    ## What it catches
    Queues with neither ``max_count`` nor ``max_core_count``; negative limits (error); an
    ``idle_timeout`` not below ``autoscale.idle_timeout``; ``type: login`` with OpenPBS, or without
    ``initial_count`` (error); ``ColocateNodes: true`` under OpenPBS; ``location`` without ``subnet`` or a
    ``subnet`` not in the ``<resource_group>/<vnet>/<subnet>`` form (error); (info) a
    ``MaxScaleSetSize`` above 100.

    ## Why is this bad?
    az-hop's CycleCloud templates read these keys with no checks (research/azhop.md §1): a queue
    without limits grows to CycleCloud's defaults; ``idle_timeout`` must be lower than the
    cluster-wide value (template comment); the OpenPBS template ignores ``ColocateNodes`` and turns
    ``login`` queues into execute nodes; multi-region queues use ``subnet`` only with ``location``.
    Scale sets above 100 VMs need a support ticket (schema description).

    ## Example
    ```yaml
    autoscale: {idle_timeout: 1800}
    queues:
      - {name: htc, vm_size: Standard_F2s_v2, image: "azhpc:azhop-compute:centos-7_9:latest", idle_timeout: 3600}
    ```

    ## Fix
    ```yaml
      - {name: htc, vm_size: Standard_F2s_v2, max_count: 64, image: "azhpc:azhop-compute:centos-7_9:latest", idle_timeout: 300}
    ```
    """
    data = _data(doc)
    manager = _queue_manager(data)
    cluster_idle = _get(data, "autoscale", "idle_timeout", default=1800)
    for i, queue in _queues(data):
        path = ("queues", i)
        name = queue.get("name")
        if "max_count" not in queue and "max_core_count" not in queue:
            yield doc.at_path(path + ("name",), f"queue '{name}' sets neither max_count nor max_core_count",
                              hint="add max_count (nodes; 0 disables the queue)", prefer_value=True)
        for key in ("max_count", "max_core_count", "initial_count"):
            value = queue.get(key)
            if isinstance(value, int) and not isinstance(value, bool) and value < 0:
                yield doc.at_path(path + (key,), f"{key} {value} is negative", hint="use 0 or more", prefer_value=True, severity=Severity.ERROR)
        idle = queue.get("idle_timeout")
        if isinstance(idle, int) and isinstance(cluster_idle, int) and idle >= cluster_idle:
            yield doc.at_path(path + ("idle_timeout",), f"idle_timeout {idle} is not below autoscale.idle_timeout {cluster_idle}",
                              hint="a queue's idle_timeout must be lower than the cluster-wide one", prefer_value=True)
        if queue.get("type") == "login":
            if manager != "slurm":
                yield doc.at_path(path + ("type",), "login queues work only with Slurm; the OpenPBS template makes them execute nodes",
                                  hint="remove the login queue or use queue_manager: slurm", prefer_value=True)
            if "initial_count" not in queue:
                yield doc.at_path(path + ("type",), "a login queue needs initial_count (az-hop has no default)",
                                  hint="add initial_count: 1", prefer_value=True, severity=Severity.ERROR)
        if manager == "openpbs" and queue.get("ColocateNodes") is True:
            yield doc.at_path(path + ("ColocateNodes",), "ColocateNodes: true has no effect with OpenPBS (Slurm only)",
                              hint="remove it, or use Slurm for InfiniBand placement", prefer_value=True)
        if queue.get("location") and not queue.get("subnet"):
            yield doc.at_path(path + ("location",), "a queue in another location needs subnet: <resource_group>/<vnet>/<subnet>",
                              hint="add the remote subnet", prefer_value=True, severity=Severity.ERROR)
        subnet = queue.get("subnet")
        if isinstance(subnet, str) and (subnet.count("/") != 2 or not all(subnet.split("/"))):
            yield doc.at_path(path + ("subnet",), f"subnet '{subnet}' is not <resource_group>/<vnet>/<subnet>",
                              hint="write the remote subnet as rg/vnet/subnet", prefer_value=True, severity=Severity.ERROR)
        scale_set = queue.get("MaxScaleSetSize")
        if isinstance(scale_set, int) and scale_set > 100:
            yield doc.at_path(path + ("MaxScaleSetSize",), f"MaxScaleSetSize {scale_set} is above Azure's default limit of 100",
                              hint="this needs a quota raise through a support ticket", prefer_value=True, severity=Severity.INFO)


# -- AZH013 --------------------------------------------------------------------------------------------

@rule(code="AZH013", name="azhop-users-groups", severity=Severity.ERROR, kinds=KINDS)
def users_groups(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """Users or groups collide, or a user joins a group that is not defined.

    ## What it catches
    Two users with one ``uid`` or one name, two groups with one ``gid``, ``groups`` entries naming a
    gid no ``usergroups`` entry defines, and (warning) a missing built-in gid 5000/5001/5002.

    ## Why is this bad?
    The schema only checks types (research/azhop.md G6). Colliding uids give two users each other's files on the
    shared home; an undefined gid is created nowhere, so the user silently lacks the role. az-hop
    maps its roles by gid (template: "These group names could be changed but not the gids"): 5000
    all users, 5001 admins, 5002 local admins with sudo on the nodes.

    ## Example
    ```yaml
    users:
      - {name: alice, uid: 10001, groups: [6000]}
      - {name: bob, uid: 10001}
    usergroups:
      - {name: azhop-users, gid: 5000}
    ```

    ## Fix
    ```yaml
    users:
      - {name: alice, uid: 10001, groups: [6000]}
      - {name: bob, uid: 10002}
    usergroups:
      - {name: azhop-users, gid: 5000}
      - {name: azhop-admins, gid: 5001}
      - {name: azhop-localadmins, gid: 5002}
      - {name: project1, gid: 6000}
    ```
    """
    data = _data(doc)
    groups = data.get("usergroups") if isinstance(data.get("usergroups"), list) else []
    gids: dict[int, int] = {}
    for i, group in enumerate(groups):
        gid = group.get("gid") if isinstance(group, dict) else None
        if isinstance(gid, int):
            if gid in gids:
                yield doc.at_path(("usergroups", i, "gid"), f"gid {gid} is already used by usergroups[{gids[gid]}]",
                                  hint="give each group its own gid", prefer_value=True)
            gids.setdefault(gid, i)
    if "usergroups" in data:
        missing = [g for g in kb.BUILTIN_GIDS if g not in gids]
        if missing:
            yield doc.at_path(("usergroups",), f"built-in gid(s) {', '.join(map(str, missing))} missing: "
                              + "; ".join(f"{g} = {kb.BUILTIN_GIDS[g]}" for g in missing),
                              hint="keep az-hop's gids 5000, 5001 and 5002 (names may change)", severity=Severity.WARNING)
    users = data.get("users") if isinstance(data.get("users"), list) else []
    uids: dict[int, int] = {}
    names: dict[str, int] = {}
    for i, user in enumerate(users):
        if not isinstance(user, dict):
            continue
        uid, name = user.get("uid"), user.get("name")
        if isinstance(uid, int):
            if uid in uids:
                yield doc.at_path(("users", i, "uid"), f"uid {uid} is already used by users[{uids[uid]}]", hint="give each user its own uid", prefer_value=True)
            uids.setdefault(uid, i)
        if isinstance(name, str):
            if name in names:
                yield doc.at_path(("users", i, "name"), f"user '{name}' is already defined by users[{names[name]}]", hint="list each user once", prefer_value=True)
            names.setdefault(name, i)
        member = user.get("groups")
        for j, gid in enumerate(member if isinstance(member, list) else []):
            if isinstance(gid, int) and gids and gid not in gids:
                yield doc.at_path(("users", i, "groups", j), f"user '{name}' joins gid {gid}, which no usergroups entry defines",
                                  hint=f"define it in usergroups or use one of: {', '.join(map(str, sorted(gids)))}", prefer_value=True)


# -- AZH014 / AZH015 ----------------------------------------------------------------------------------------

@rule(code="AZH014", name="azhop-deprecated-key", severity=Severity.WARNING, kinds=KINDS)
def deprecated_key(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """config.yml uses a key az-hop's schema still accepts but marks deprecated.

    ## What it catches
    ``monitoring.install_agent``.

    ## Why is this bad?
    The schema flags it ``"deprecated": true``; the code no longer reads it, so the setting does
    nothing (monitoring is ``monitoring.azure_monitor_agent`` now). az-hop #1604: configs carrying
    it failed validation inside cloud-init on the deployer.

    ## Example
    ```yaml
    monitoring:
      install_agent: false
    ```

    ## Fix
    ```yaml
    monitoring:
      azure_monitor_agent: false
    ```
    """
    data = _data(doc)
    for path, why in kb.DEPRECATED_KEYS.items():
        parent = _get(data, *path[:-1])
        if isinstance(parent, dict) and path[-1] in parent:
            yield doc.at_path(path, f"{'.'.join(path)} is deprecated", hint=why)


@rule(code="AZH015", name="azhop-image-version-float", severity=Severity.WARNING, kinds=KINDS)
def image_version_float(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """An ``images[].version`` such as ``8.10`` is read as the number 8.1.

    ## What it catches
    Image definition versions written as a decimal whose minor part ends in 0 (``8.10``, ``20.10``).

    ## Why is this bad?
    The schema types ``version`` as a number and the template says "Pattern is major.minor where minor
    is mandatory" (az-hop's config.tpl.yml). YAML reads ``8.10`` as the float 8.1, so the image definition gets version 8.1 and
    no longer matches the packer file's 8.10.

    ## Example
    ```yaml
    images:
      - {name: azhop-compute-almalinux-8_10, publisher: azhop, offer: almalinux, sku: 8_10-hpc-gen2, hyper_v: V2, os_type: Linux, version: 8.10}
    ```

    ## Fix
    Use a minor version that survives as a number, or name the minor version without a trailing zero
    in both the packer file and here (e.g. ``version: 8.1`` for both).
    """
    data = _data(doc)
    images = data.get("images") if isinstance(data.get("images"), list) else []
    for i, image in enumerate(images):
        if not isinstance(image, dict) or not isinstance(image.get("version"), float) or doc.yaml is None:
            continue
        span = doc.yaml.value_spans.get(("images", i, "version"))
        if span is None or not (0 < span.line <= len(doc.lines)):
            continue
        token = doc.lines[span.line - 1][span.column - 1:].split("#")[0].strip().rstrip(",}").strip()
        if "." in token and token.split(".")[-1].endswith("0") and token.replace(".", "").isdigit():
            yield doc.at_path(("images", i, "version"), f"version {token} is read as the number {image['version']}",
                              hint="pick a version whose minor part has no trailing zero, the same in the packer file", prefer_value=True)
