"""CycleCloud Workspace for Slurm (CCWS) rules: the ARM parameters file of ``bicep/mainTemplate.bicep`` judged against
the release's own types (:mod:`hpcconf.knowledge.ccws`, schemas derived from the tag), its Slurm version, its subnet
plan (:mod:`hpcconf.knowledge.ccws_network`), and a CycleCloud Slurm cluster's parameters."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import jsonschema

from ...artifacts import Kind
from ...diagnostics import Diagnostic, Severity
from ...knowledge import azhop, azure_zones, ccws
from ...knowledge import ccws_network as network
from ...rules_registry import Moment, rule, spec_rule
from ..compiled_spec import CompiledSpec
from ..context import LintContext
from ..document import Document

KINDS = (Kind.CCWS_PARAMETERS,)


def _parameters(doc: Document) -> dict[str, Any]:
    data = doc.data
    params = data.get("parameters") if isinstance(data, dict) else None
    return params if isinstance(params, dict) else {}


def _values(doc: Document) -> dict[str, Any]:
    """Each parameter's ``value`` (parameters given by Key Vault ``reference`` have none here)."""
    return {name: entry["value"] for name, entry in _parameters(doc).items()
            if isinstance(entry, dict) and "value" in entry}


def _release(doc: Document) -> tuple[ccws.Release, str]:
    return ccws.release_for(_parameters(doc))


def _value_path(name: str, *rest: Any) -> tuple[Any, ...]:
    return ("parameters", name, "value", *rest)


# -- CCWS001 / CCWS002 ---------------------------------------------------------------------------------------

@rule(code="CCWS001", name="ccws-parameter-unknown", severity=Severity.ERROR, kinds=KINDS, since="0.4.0")
def parameter_unknown(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """The parameters file names a parameter the release's ``mainTemplate.bicep`` does not declare.

    ## What it catches
    A key of ``parameters`` that is not a ``param`` of ``bicep/mainTemplate.bicep`` at the release the file is
    judged against: its ``projectVersion`` when it names a release hpcconf holds; else the newest release that
    declares every parameter the file gives (preferring one that requires none it lacks and ships its Slurm
    version), so a file written for an older release is judged as that release; when no release declares them
    all, the newest (2026.07.02). The hint names the releases that do declare it (a file written for another
    release).

    ## Why is this bad?
    Azure Resource Manager refuses the whole deployment before it starts: "The template parameters 'x' in the
    parameters file are not valid; they are not present in the original template and can therefore not be provided
    at deployment time" (InvalidTemplate). Parameters come and go between CCWS releases: ``d64d``, ``d16d``,
    ``m64`` and ``hubMI`` exist at 2025.06.03 and are gone at 2026.07.02, ``adminSshPublicKey`` became ``key``
    (Azure/cyclecloud-slurm-workspace ``bicep/mainTemplate.bicep`` at each tag; hpcconf/data/ccws/).

    ## Example
    ```json
    {"$schema": "https://schema.management.azure.com/schemas/2019-04-01/deploymentParameters.json#",
     "parameters": {"adminSshPublicKey": {"value": "ssh-rsa AAAA..."}, ...}}
    ```

    ## Fix
    Use the parameter names of the release you deploy (``key: {"type": "entered", "value": "ssh-rsa ..."}`` at
    2026.07.02), or deploy the release the file was written for.
    """
    rel, how = _release(doc)
    params = _parameters(doc)
    for name in params:
        if name in rel.parameters:
            continue
        known = ccws.releases_knowing({name})
        hint = (f"{name} is a parameter of CCWS {', '.join(known[:3])}; deploy that release's template or rename it"
                if known else f"remove it, or check the spelling against {rel.source} bicep/mainTemplate.bicep")
        yield doc.at_path(("parameters", name), f"{how} has no parameter '{name}': Azure refuses the deployment",
                          hint=hint)


@rule(code="CCWS002", name="ccws-parameter-missing", severity=Severity.ERROR, kinds=KINDS, since="0.4.0")
def parameter_missing(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """A parameter the release's ``mainTemplate.bicep`` requires (no default) is not in the parameters file.

    ## What it catches
    A ``param`` of ``bicep/mainTemplate.bicep`` without a default that the file does not give, for the release it
    is judged against (see CCWS001). A ``@secure()`` parameter (``adminPassword``) is information only: it is
    usually passed at deployment, from a second private parameters file or as a Key Vault reference.

    ## Why is this bad?
    Azure Resource Manager refuses the deployment: "The value for the template parameter 'x' is not provided".
    ``az deployment sub create`` prompts for it on a terminal and fails in CI.

    ## Example
    ```json
    {"parameters": {"location": {"value": "eastus"}, "network": {"value": {"type": "new", "addressSpace": "10.0.0.0/24"}}}}
    ```

    ## Fix
    Add every parameter the release requires (at 2026.07.02: ``location``, ``adminUsername``, ``adminPassword``,
    ``key``, ``ccVMName``, ``ccVMSize``, ``resourceGroup``, ``schedFilesystem``, ``sharedFilesystem``, ``network``,
    ``storagePrivateDnsZone``, ``schedulerNode``, ``loginNodes``, ``htc``, ``hpc``, ``gpu``, ``tags``).
    """
    if not isinstance(doc.data, dict) or "parameters" not in doc.data:
        return
    rel, how = _release(doc)
    params = _parameters(doc)
    for name in rel.required:
        if name in params:
            continue
        secure = bool(rel.parameters[name].get("x-secure"))
        message = f"{how} requires parameter '{name}', which the file does not give"
        if secure:
            yield doc.at_path(("parameters",), message + " (a secure parameter: pass it at deployment)",
                              hint=f"az deployment sub create ... --parameters @FILE @SECRETS, where SECRETS is a "
                              f"mode-0600 parameters file with {name} (on the command line `ps` shows it), or give a "
                              "Key Vault reference", severity=Severity.INFO)
        else:
            yield doc.at_path(("parameters",), message + ": Azure refuses the deployment",
                              hint=f"add \"{name}\": {{\"value\": ...}} (its type: {rel.source} bicep/types.bicep)")


# -- CCWS003 -------------------------------------------------------------------------------------------------

def _type_hint(error: jsonschema.ValidationError) -> str:
    if error.validator == "required":
        return "add it: the variant chosen by \"type\" needs it (bicep/types.bicep)"
    if error.validator == "enum":
        source = f" ({error.schema['x-source']})" if isinstance(error.schema, dict) and "x-source" in error.schema else ""
        return f"use one of {', '.join(repr(v) for v in error.validator_value)}{source}"
    if error.validator == "type":
        return f"give a value of type {error.validator_value}"
    if error.validator == "multipleOf" and isinstance(error.schema, dict) and "x-source" in error.schema:
        return f"use a multiple of {error.validator_value} TiB: this tier's capacity step ({error.schema['x-source']})"
    if error.validator == ccws.REFUSED_KEYWORD:
        return "use a gitHubReleaseURL entry (publish the project as a GitHub release) at this release"
    return "see the type in bicep/types.bicep at the release"


@rule(code="CCWS003", name="ccws-parameter-type", severity=Severity.ERROR, kinds=KINDS, since="0.4.0")
def parameter_type(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """A parameter's value does not have the type the release's ``bicep/types.bicep`` declares.

    ## What it catches
    A value that is not of the parameter's type at the release (see CCWS001): a missing property of the chosen
    variant of a discriminated union (``sharedFilesystem`` of ``type: anf-new`` without ``anfCapacityInTiB``), a
    ``type`` no variant has, a string where an int or bool is declared, a value outside ``@minValue``/``@maxValue``
    or ``@allowed``; and a parameter entry that is not ``{"value": ...}`` or a Key Vault ``{"reference": ...}``. Keys
    the type does not declare are not judged: ARM passes them through.

    Values the types let through but the release's modules refuse are judged too (tools/gen_ccws_schema.py carries
    them into the schema from the tag): a ``lustreTier`` outside ``amlfs.bicep``'s ``@allowed`` list, a
    ``lustreCapacityInTib`` that is not a multiple of its tier's step (``amlfs.bicep`` ``capacity``: 48 TiB for
    AMLFS-Durable-Premium-40, 16 for -125, 8 for -250, 4 for -500), an ``anfServiceLevel`` the release's portal
    does not offer (Standard, Premium, Ultra, Flexible at 2026.07.02; ``anf.bicep`` passes it unchecked to the
    capacity pool), and a ``PreStaged`` ``clusterInitSpecs`` entry, which ``create_cc_param.py`` cannot read.

    ## Why is this bad?
    The template is compiled with user-defined types (``types.bicep``), which Azure Resource Manager checks before
    it deploys anything: "The provided value for the template parameter 'x' is not valid". A variant's missing key
    that ARM let through would fail later inside ``ccw.bicep`` (``filer.anfCapacityInTiB``).
    A module's ``@allowed`` fails the nested deployment after the VNet and storage are created; Azure Managed Lustre
    refuses a capacity off its SKU's step. ``bicep/files-to-load/create_cc_param.py`` (line 173 at 2026.07.02) reads
    ``record["gitHubReleaseURL"]`` of every clusterInitSpecs entry: a ``PreStaged`` one raises KeyError on the
    CycleCloud VM, ``install.sh`` never reaches ``cyclecloud create_cluster`` and no Slurm cluster is created.

    ## Example
    ```json
    "sharedFilesystem": {"value": {"type": "anf-new", "anfServiceLevel": "Premium"}}
    ```

    ## Fix
    ```json
    "sharedFilesystem": {"value": {"type": "anf-new", "anfServiceLevel": "Premium", "anfCapacityInTiB": 2}}
    ```
    """
    rel, how = _release(doc)
    for name, entry in _parameters(doc).items():
        if not (isinstance(entry, dict) and ("value" in entry or "reference" in entry)):
            yield doc.at_path(("parameters", name), f"parameter '{name}' is not {{\"value\": ...}} (or a Key Vault "
                              "\"reference\"): Azure refuses the parameters file", hint=f"write \"{name}\": {{\"value\": ...}}",
                              prefer_value=True)
    values = {name: value for name, value in _values(doc).items() if name in rel.parameters}
    validator = ccws.validator({**rel.schema, "additionalProperties": True, "required": []})
    for error in sorted(validator.iter_errors(values), key=lambda e: [str(p) for p in e.absolute_path]):
        path = list(error.absolute_path)
        if not path:
            continue
        where = ".".join(str(p) for p in path)
        yield doc.at_path(_value_path(*path), f"{where}: {error.message} ({how})", hint=_type_hint(error),
                          prefer_value=error.validator != "required")


# -- CCWS004 -------------------------------------------------------------------------------------------------

@rule(code="CCWS004", name="ccws-slurm-version", severity=Severity.ERROR, kinds=KINDS, since="0.4.0")
def slurm_version(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """The cluster's Slurm version is not one the CCWS release ships, or is left to ``mainTemplate.bicep``'s stale default.

    ## What it catches
    ``slurmSettings.version`` that is not among the versions the release's portal offers (its
    ``createUiDefinition.json`` ``slurmVersion`` drop-down: 25.11.5 at 2026.07.02), and a file without
    ``slurmSettings``, which deploys the template's default ``23.11.7-1``.

    ## Why is this bad?
    The version goes to the cluster's ``configuration_slurm_version`` (``bicep/files-to-load/create_cc_param.py``
    copies ``slurmSettings.version``); cyclecloud-slurm installs
    ``slurm*=<version>*`` from packages.microsoft.com on every node (``azure-slurm-install``). The release is built
    and tested with its portal's versions, and the cyclecloud-slurm project it runs offers only those (4.0.9 offers
    25.11.5 only, ``project.ini``); another version installs only where the repository still publishes it for the
    node's OS, and lacks what the release configures for its own (``--segment``, ``switch/nvidia_imex`` need 24.05).
    ``mainTemplate.bicep`` has kept ``version: '23.11.7-1'`` as its default since 2024.08.30 while the portal moved
    on (Azure/cyclecloud-slurm-workspace issue #346).

    ## Severity
    Error for a version the release does not offer: a user who set one got "a scheduler vm with no slurm installed",
    and the maintainers answered that "the versions supported are limited to the ones provided in the UI" because of
    the strict mapping between CycleCloud, the autoscaler and Slurm (Azure/cyclecloud-slurm-workspace issue #141).
    Warning for a file without ``slurmSettings``: the stale default deploys with a warning in CycleCloud (issue #346),
    on a Slurm older than the release was tested with.

    ## Example
    ```json
    "slurmSettings": {"value": {"startCluster": true, "version": "23.11.7-1", "healthCheckEnabled": false}}
    ```

    ## Fix
    ```json
    "slurmSettings": {"value": {"startCluster": true, "version": "25.11.5", "healthCheckEnabled": false}}
    ```
    """
    rel, how = _release(doc)
    if not rel.slurm_versions or not isinstance(doc.data, dict) or "parameters" not in doc.data:
        return
    hint = f"set slurmSettings.version to {' or '.join(rel.slurm_versions)} ({rel.source} createUiDefinition.json)"
    values = _values(doc)
    if "slurmSettings" not in _parameters(doc) and "slurmSettings" in rel.parameters:
        default = rel.bicep_slurm_version_default
        if default and default not in rel.slurm_versions:
            yield doc.at_path(("parameters",), f"no slurmSettings: {how} deploys mainTemplate.bicep's default Slurm "
                              f"{default}, which the release does not ship (issue #346)", hint=hint,
                              severity=Severity.WARNING)
        return
    settings = values.get("slurmSettings")
    version = settings.get("version") if isinstance(settings, dict) else None
    if isinstance(version, str) and (problem := ccws.slurm_version_problem(version, rel)) is not None:
        yield doc.at_path(_value_path("slurmSettings", "version"), problem, hint=hint, prefer_value=True)


# -- CCWS005 -------------------------------------------------------------------------------------------------

def _filer_types(values: dict[str, Any]) -> list[str]:
    return [str(values[name].get("type")) for name in ("schedFilesystem", "sharedFilesystem", "additionalFilesystem")
            if isinstance(values.get(name), dict)]


@rule(code="CCWS005", name="ccws-subnet-plan", severity=Severity.ERROR, kinds=KINDS, since="0.4.0")
def subnet_plan(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """The subnets CCWS carves out of a new VNet's ``addressSpace`` do not fit, or are too small for what they hold.

    ## What it catches
    For ``network.type: new``, the subnets ``bicep/network-new.bicep`` computes from ``addressSpace`` (cyclecloud,
    compute, and netapp, lustre, bastion where the file asks for them): an address that is not ``a.b.c.d/n``, host
    bits in the address, a prefix shorter than /16 (``pow2_or_0`` indexes past its table), subnets outside the
    address space, overlapping or no IPv4 range at all (a prefix longer than /24); a new Azure Managed Lustre in a
    VNet smaller than the portal allows for its capacity; (warning) a compute subnet with fewer addresses than
    one partition's ``maxNodes``, and (information: whether they run at once depends on the workload) fewer than
    all partitions' together.

    ## Why is this bad?
    network-new.bicep adds fixed offsets to the address's octets as written, without carrying (``subnet_octets``,
    ``subnet_ranges``; upstream's tests in ``bicep-test/network-new-test.bicep``): 10.0.1.0/23 puts the compute
    subnet at 10.0.2.0/24, outside the VNet, and a /25 puts it on top of the cyclecloud subnet; Azure refuses the
    VNet. The portal offers /20 to /24 only, and for a new AMLFS /23 up to 256 TiB, /22 up to 512 TiB, else /21
    (``createUiDefinition.json`` ``cidrPrefix``, ``lustreInfoBoxNew``), since the lustre subnet is a quarter of
    the VNet (from 2025.12.01, PR #307). Every node takes an address of the compute subnet, less the 5 Azure keeps:
    nodes past it never start.

    ## Example
    ```json
    "network": {"value": {"type": "new", "addressSpace": "10.0.1.0/23"}}
    ```

    ## Fix
    ```json
    "network": {"value": {"type": "new", "addressSpace": "10.0.0.0/23"}}
    ```
    """
    rel, how = _release(doc)
    values = _values(doc)
    vnet = values.get("network")
    if not isinstance(vnet, dict) or vnet.get("type") != "new" or not isinstance(vnet.get("addressSpace"), str):
        return
    address = vnet["addressSpace"]
    at = _value_path("network", "addressSpace")
    filers = _filer_types(values)
    raw_additional = values.get("additionalFilesystem")
    additional: dict[str, Any] = raw_additional if isinstance(raw_additional, dict) else {}
    try:
        plan = network.subnet_plan(address, netapp="anf-new" in filers, lustre="aml-new" in filers,
                                   bastion=vnet.get("bastion") is True, release=rel.tag)
    except network.AddressSpaceError as exc:
        yield doc.at_path(at, f"{exc}: network-new.bicep cannot split it", hint="write it like 10.0.0.0/22",
                          prefer_value=True)
        return
    except IndexError:
        yield doc.at_path(at, f"addressSpace {address}: network-new.bicep's pow2_or_0 has no entry for a prefix this "
                          "short, and the deployment fails", hint="use a prefix from /16 to /24 (the portal offers "
                          f"/{min(network.PORTAL_PREFIXES)} to /{max(network.PORTAL_PREFIXES)})", prefer_value=True)
        return
    problems = network.plan_problems(address, plan)
    for problem in problems:
        yield doc.at_path(at, f"{problem} ({network.SOURCE} at {rel.tag}): Azure refuses the VNet",
                          hint="use an address without host bits and a prefix from "
                          f"/{min(network.PORTAL_PREFIXES)} to /{max(network.PORTAL_PREFIXES)}", prefer_value=True)
    if problems:
        return
    prefix = int(address.rsplit("/", 1)[1])
    capacity = additional.get("lustreCapacityInTib")
    if "aml-new" in filers and isinstance(capacity, int) and not isinstance(capacity, bool) \
            and ccws.tag_key(rel.tag) >= ccws.tag_key(network.SCALED_LUSTRE_SINCE) \
            and prefix > (needed := network.amlfs_min_vnet_prefix(capacity)):
        yield doc.at_path(at, f"a new {capacity} TiB Azure Managed Lustre needs a /{needed} VNet or larger (its subnet "
                          f"is a quarter of it); {address} gives {plan['lustre']}",
                          hint=f"use a /{needed} address space (createUiDefinition.json lustreInfoBoxNew at {rel.tag})",
                          prefer_value=True)
    usable = azhop.usable_ips(plan["compute"])
    counts = {}
    for partition in ("htc", "hpc", "gpu"):
        array = values.get(partition)
        nodes = array.get("maxNodes") if isinstance(array, dict) else None
        if isinstance(nodes, int) and not isinstance(nodes, bool):
            counts[partition] = nodes
    hint = "enlarge addressSpace (the compute subnet is its upper half) or lower maxNodes"
    over = {partition: nodes for partition, nodes in counts.items() if nodes > usable}
    for partition, nodes in over.items():
        yield doc.at_path(_value_path(partition, "maxNodes"), f"{partition}.maxNodes is {nodes}, but the compute "
                          f"subnet {plan['compute']} of {address} has {usable} usable addresses: nodes past them "
                          "never start", hint=hint, prefer_value=True, severity=Severity.WARNING)
    if not over and sum(counts.values()) > usable:
        yield doc.at_path(at, f"htc, hpc and gpu together may start {sum(counts.values())} nodes, but the compute subnet "
                          f"{plan['compute']} has {usable} usable addresses: whether they run at once depends on the "
                          "workload", hint=hint, prefer_value=True, severity=Severity.INFO)


# -- CCWS006 -------------------------------------------------------------------------------------------------

_BLOCK_TOPOLOGY = re.compile(r"^[ \t]*TopologyPlugin[ \t]*=[ \t]*topology/block\b", re.I | re.M)


@rule(code="CCWS006", name="ccws-block-topology-at-creation", severity=Severity.ERROR,
      kinds=(Kind.CYCLECLOUD_SLURM_PARAMETERS,), since="0.4.0")
def block_topology_at_creation(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """``TopologyPlugin=topology/block`` in the cluster's ``additional_slurm_config``: slurmctld does not start.

    ## What it catches
    A CycleCloud Slurm cluster's parameters (JSON with the template's names: ``configuration_slurm_version``,
    ``additional_slurm_config``, ``GPUMachineType``, ...) whose ``additional_slurm_config`` (the template's
    "Slurm Configuration") holds a ``TopologyPlugin=topology/block`` line.

    ## Why is this bad?
    cyclecloud-slurm's README (Azure/cyclecloud-slurm 4.0.9, "Scaling with scale_m1 (GB200/GB300)"):
    "``TopologyPlugin=topology/block`` requires a populated ``topology.conf`` to exist before ``slurmctld`` starts;
    applying it at cluster creation, before any nodes are scaled and the topology is generated, prevents
    ``slurmctld`` from starting."

    ## Example
    ```json
    {"configuration_slurm_version": "25.11.5", "GPUMachineType": "Standard_ND128isr_NDR_GB200_v6",
     "MaxGPUExecuteNodeCount": 18, "additional_slurm_config": "TopologyPlugin=topology/block\\nTopologyParam=BlockAsNodeRank"}
    ```

    ## Fix
    Leave it out of ``additional_slurm_config``. After the nodes are scaled, write the topology
    (``azslurm topology -n --block --block_size 18 -p gpu > /sched/<cluster>/topology.conf``), add
    ``TopologyParam=BlockAsNodeRank`` and ``TopologyPlugin=topology/block`` to ``/etc/slurm/site_specific.conf``
    and run ``scontrol reconfigure``.
    """
    data = doc.data
    config = data.get("additional_slurm_config") if isinstance(data, dict) else None
    if isinstance(config, str) and _BLOCK_TOPOLOGY.search(config):
        yield doc.at_path(("additional_slurm_config",), "TopologyPlugin=topology/block in additional_slurm_config: "
                          "slurmctld does not start before topology.conf exists (cyclecloud-slurm README)",
                          hint="add it to /etc/slurm/site_specific.conf after scaling and generating topology.conf, "
                          "then scontrol reconfigure", prefer_value=True)


# -- CCWS007 -------------------------------------------------------------------------------------------------

@rule(code="CCWS007", name="ccws-array-spans-placement-groups", severity=Severity.WARNING, kinds=KINDS,
      since="0.4.0")
def array_spans_placement_groups(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """An InfiniBand ``hpc`` or ``gpu`` array is larger than one placement group: no job spans them over InfiniBand.

    ## What it catches
    ``hpc.maxNodes`` or ``gpu.maxNodes`` above 100 for a catalog size with InfiniBand (``Standard_ND96isr_H100_v5``,
    ``Standard_ND128isr_NDR_GB200_v6``, ...). Sizes the catalog does not hold are not judged.

    ## Why is this bad?
    CCWS deploys the cluster with ``HPCMaxScalesetSize`` 100 (``bicep/files-to-load/initial_params.json`` at
    2026.07.02; no mainTemplate parameter sets it), which cyclecloud-slurm's template applies as
    ``Azure.MaxScalesetSize`` to the hpc and gpu arrays (``templates/slurm.txt`` at 4.0.9): an array of N nodes is
    ceil(N / 100) scale sets, one placement group each, and azslurm writes them as separate groups
    (``_generate_gres_conf``: ``num_placement_groups = ceil(max_vm_count / max_scaleset_size)``); a scale set with
    a single placement group holds at most 100 VMs (Azure Compute API, ``singlePlacementGroup``). InfiniBand only
    connects VMs of one scale set / placement group (Microsoft Learn, "HPC VM sizes", InfiniBand), so a job
    larger than 100 nodes cannot run over InfiniBand (NCCL and MPI fall back to TCP), and without a topology
    plugin (the template leaves ``TopologyPlugin`` unset) Slurm may place a smaller job across two groups.

    ## Example
    ```json
    "gpu": {"value": {"sku": "Standard_ND96isr_H100_v5", "osImage": "...", "maxNodes": 128}}
    ```

    ## Fix
    Keep ``maxNodes`` at 100 or below, or raise ``HPCMaxScalesetSize`` in the cluster's CycleCloud parameters after
    deployment and run ``azslurm topology`` so Slurm keeps jobs inside one group.
    """
    from ...catalog import Catalog

    catalog = Catalog.load()
    values = _values(doc)
    for partition in ("hpc", "gpu"):
        array = values.get(partition)
        if not isinstance(array, dict):
            continue
        nodes, size = array.get("maxNodes"), array.get("sku")
        if not isinstance(nodes, int) or isinstance(nodes, bool) or nodes <= ccws.PLACEMENT_GROUP_NODES \
                or not isinstance(size, str) or size not in catalog:
            continue
        sku = catalog.get(size)
        if sku.infiniband is None:
            continue
        groups = -(-nodes // ccws.PLACEMENT_GROUP_NODES)
        yield doc.at_path(_value_path(partition, "maxNodes"), f"{partition}.maxNodes is {nodes}: {groups} placement "
                          f"groups of at most {ccws.PLACEMENT_GROUP_NODES} {sku.name} nodes, which InfiniBand does not "
                          "connect: no job larger than one group runs over InfiniBand",
                          hint=f"keep maxNodes at {ccws.PLACEMENT_GROUP_NODES} or below (a placement group holds at most "
                          f"{ccws.PLACEMENT_GROUP_NODES} VMs), or keep every job within {ccws.PLACEMENT_GROUP_NODES} "
                          f"nodes ({ccws.PLACEMENT_GROUP_SOURCE})", prefer_value=True)


# -- CCWS008 -------------------------------------------------------------------------------------------------

@rule(code="CCWS008", name="ccws-amlfs-zone", severity=Severity.WARNING, kinds=KINDS, since="0.4.0")
def amlfs_zone(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """A new Azure Managed Lustre (``additionalFilesystem`` ``aml-new``) without an availability zone in a region
    that has zones.

    ## What it catches
    ``additionalFilesystem`` of ``type: aml-new`` with no ``availabilityZone`` (or an empty one) where the file's
    ``location`` is a region with availability zones (``hpcconf/data/azure_zones.yaml``, from Microsoft Learn's
    regions list). A region hpcconf does not know is information only, naming the command that tells.

    ## Why is this bad?
    ``ccw.bicep`` passes ``additionalFilesystem.?availabilityZone ?? []`` to ``amlfs.bicep``'s ``zones:``
    (``bicep/ccw.bicep`` line 237 at 2026.07.02), so no zone reaches the file system. CCWS's portal gives a new
    AMLFS the zone ``["1"]`` whenever the region has ``availabilityZoneMappings``
    (``uidefinitions/createUiDefinition.json`` line 2794 at 2026.07.02), a default added by
    Azure/cyclecloud-slurm-workspace PR #288, "Fix availability zone defaults for AMLFS filesystem ... when the
    region supports availability zones". A hand-written file without it is the deployment that fix was for; hpcconf
    holds no ARM error text for it, hence a warning.

    ## Example
    ```json
    "location": {"value": "eastus"},
    "additionalFilesystem": {"value": {"type": "aml-new", "lustreTier": "AMLFS-Durable-Premium-500",
                                       "lustreCapacityInTib": 16, "mountPath": "/data"}}
    ```

    ## Fix
    Add ``"availabilityZone": ["1"]`` (or the zone your compute uses), as the portal does; ``hpcconf build`` writes
    it from ``ccws.storage.additional.availability_zone`` (default: zone 1 where the region has zones).
    """
    for message, hint, severity in _amlfs_zone_judgement(_values(doc)):
        yield doc.at_path(_value_path("additionalFilesystem"), message, hint=hint, severity=severity)


@spec_rule(code="CCWS008", name="ccws-amlfs-zone", severity=Severity.WARNING, moment=Moment.JUDGE, file_rule=True)
def amlfs_zone_in_spec(compiled: CompiledSpec) -> Iterator[Diagnostic]:
    # The parameters the build writes: hpcconf gives zone 1 where the region has zones, so only a region it
    # does not know the zones of is left (information: the build does not refuse context it cannot see).
    if compiled.cluster.ccws is None:
        return
    for message, hint, severity in _amlfs_zone_judgement(compiled.cluster.ccws.parameters_dict):
        yield compiled.at(("ccws", "storage", "additional"), message, hint=hint, severity=severity)


def _amlfs_zone_judgement(values: dict[str, Any]) -> Iterator[tuple[str, str, Severity | None]]:
    """(message, hint, severity; None: the rule's) for the mainTemplate parameters ``values``."""
    filer, location = values.get("additionalFilesystem"), values.get("location")
    if not isinstance(filer, dict) or filer.get("type") != "aml-new" or filer.get("availabilityZone") \
            or not isinstance(location, str):
        return
    zonal = azure_zones.has_zones(location)
    if zonal is False:
        return
    hint = 'add "availabilityZone": ["1"] (the CCWS portal\'s default where the region has zones, PR #288)'
    if zonal is None:
        yield (f"a new Azure Managed Lustre without an availability zone in {location}, a region hpcconf does not "
               "know the zones of: where it has zones, the CCWS portal would give the file system zone 1",
               f"check `{azure_zones.check_command(location)}`; if it lists zones, {hint}", Severity.INFO)
        return
    yield (f"a new Azure Managed Lustre without an availability zone in {location}, a region with availability "
           "zones: ccw.bicep passes zones [] where the CCWS portal passes [\"1\"]", f"{hint}; {azure_zones.source()}", None)


# -- CCWS009 -------------------------------------------------------------------------------------------------

@spec_rule(code="CCWS009", name="ccws-cluster-init-not-delivered", severity=Severity.INFO, moment=Moment.JUDGE,
           since="0.4.0")
def cluster_init_not_delivered(compiled: CompiledSpec) -> Iterator[Diagnostic]:
    """A spec for platform ``ccws`` without ``ccws.cluster_init_url``: the gpu nodes get hpcconf's node setup only
    once you publish or upload the cluster-init project yourself.

    ## What it catches
    ``platforms: [ccws]`` with no ``ccws.cluster_init_url``. Information: whether you upload the project to
    CycleCloud by hand is context the spec does not show.

    ## Why is this bad?
    Without ``clusterInitSpecs`` in parameters.json CCWS's CycleCloud VM fetches no project
    (``bicep/files-to-load/create_cc_param.py`` at 2026.07.02 downloads only the entries it is given), so until the
    project reaches CycleCloud the gpu nodes run with the image's own nccl.conf and topology file, and without the
    health checks hpcconf generated for the size. ``cyclecloud project fetch`` of a GitHub release reads the
    release's whole repository: ``project.ini`` must be at the root of the repository you publish (a
    ``cluster-init/`` folder inside another repository does not work).

    ## Example
    ```yaml
    platforms: [ccws]
    ccws:
      ssh_public_key: ssh-ed25519 AAAA... admin@example
    ```

    ## Fix
    Publish ``ccws/cluster-init/`` as the root of a GitHub repository, make a release, and set
    ``ccws.cluster_init_url: https://github.com/<owner>/<repo>/releases/tag/<tag>`` before the first deployment;
    or upload it from the CycleCloud VM as ``ccws/deploy.sh`` describes.
    """
    spec = compiled.spec
    settings = spec.ccws
    if "ccws" not in spec.platforms or settings is None or settings.cluster_init_url is not None:
        return
    yield compiled.at(("ccws",), "ccws.cluster_init_url is not set: the gpu nodes run without hpcconf's NCCL files "
                      "and health checks until you publish or upload ccws/cluster-init to CycleCloud",
                      hint="publish ccws/cluster-init as the ROOT of a GitHub repository (project.ini at its top), make "
                      "a release and set ccws.cluster_init_url to its URL; or upload it as ccws/deploy.sh says")
