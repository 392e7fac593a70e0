"""What a re-run of a CCWS deployment does with each changed parameter of ``parameters.json``.

Read at Azure/cyclecloud-slurm-workspace 2026.07.02 and Azure/cyclecloud-slurm 4.0.9:

- The Slurm cluster is created once: ``bicep/vm.bicep`` passes ``install.sh`` to the CycleCloud VM as
  ``customData``, which runs at its first boot, reads the deployment's outputs (``az deployment group show ...
  --query properties.outputs``), writes the cluster's parameters (``files-to-load/create_cc_param.py``) and runs
  ``cyclecloud create_cluster``. Parameters that reach CycleCloud only through those outputs (the partitions, the
  scheduler and login nodes, the Slurm settings, cluster-init specs, the cluster name, Entra ID, the release's
  project version) change nothing on a running cluster when the deployment is run again: they are changed in
  CycleCloud (the cluster's Edit dialog, or ``cyclecloud export_parameters`` / ``import_cluster --force``), then
  ``azslurm scale`` on the scheduler (cyclecloud-slurm README, "Making Cluster Changes").
- Azure resources of the template (``bicep/ccw.bicep``: the virtual network, the filers, the private DNS zone,
  the database, Open OnDemand's NIC and identity, monitoring role assignments, tags) are updated by a re-run in
  incremental mode (what the template sets is applied, nothing is deleted); what install.sh configured the
  cluster with from them (mount points, database, OOD, monitoring) is not read again.
- The CycleCloud VM itself (``bicep/vm.bicep``): a new size resizes it (a restart; the cluster's nodes keep
  running); a new name, resource group or region is a second VM whose install.sh creates a second cluster, the
  old ones staying; its image and admin user are fixed when the VM is created.
"""

from __future__ import annotations

from dataclasses import dataclass

WORKSPACE = "https://github.com/Azure/cyclecloud-slurm-workspace/blob/2026.07.02"
INSTALL_SOURCE = f"{WORKSPACE}/bicep/install.sh"
TEMPLATE_SOURCE = f"{WORKSPACE}/bicep/ccw.bicep"
VM_SOURCE = f"{WORKSPACE}/bicep/vm.bicep"


@dataclass(frozen=True)
class UpdateClass:
    name: str
    action: str
    effect: str
    source: str
    disruptive: str = "none"  # a key of hpcconf.knowledge.impact.DISRUPTION_TEXT


CLUSTER = UpdateClass(
    "cluster",
    "change it in CycleCloud (the cluster's Edit dialog, or `cyclecloud export_parameters` then `cyclecloud "
    "import_cluster ... --force`), then `azslurm scale` as root on the scheduler; a re-run of deploy.sh changes "
    "only the deployment's outputs",
    "the running Slurm cluster stays as it was: install.sh created it once, at the CycleCloud VM's first boot, from "
    "the deployment's outputs",
    INSTALL_SOURCE)
AZURE = UpdateClass(
    "azure",
    "re-run deploy.sh (az deployment sub create, incremental mode)",
    "ARM updates these Azure resources in place and deletes nothing; a property Azure cannot change on a resource "
    "in use (a subnet's range with VMs in it, a filer's type) fails the deployment; the cluster keeps the mounts "
    "and settings install.sh gave it at creation",
    TEMPLATE_SOURCE)
# Azure refuses to change the range of a subnet that resources use ("InUseSubnetCannotBeUpdated"): a new
# address space moves every subnet the network-new.bicep plan carves, under the CycleCloud VM, nodes and filers.
SUBNET_SOURCE = "https://learn.microsoft.com/azure/virtual-network/virtual-network-manage-subnet#change-subnet-settings"
NETWORK = UpdateClass(
    "network",
    "not in place: a new address space or subnet plan moves the subnets the CycleCloud VM, nodes and filers sit in, "
    "and Azure refuses to change an in-use subnet's range (the re-run fails); deploy a new workspace instead, or "
    "keep the network as it is",
    "a re-run of deploy.sh fails on the subnets in use; nothing is moved",
    SUBNET_SOURCE, disruptive="network")
VM_RESIZE = UpdateClass(
    "cyclecloud-vm",
    "re-run deploy.sh: ARM resizes the CycleCloud VM",
    "the CycleCloud VM restarts (its web UI and autoscaling pause); the Slurm scheduler and nodes keep running",
    VM_SOURCE)
VM_NEW = UpdateClass(
    "new-deployment",
    "re-run deploy.sh only to create a second workspace: the old one is neither moved nor deleted",
    "a second CycleCloud VM whose install.sh creates a second Slurm cluster; the existing VM and cluster stay",
    VM_SOURCE)
VM_FIXED = UpdateClass(
    "cyclecloud-vm-fixed",
    "none through deploy.sh: the VM keeps the value it was created with (redeploy the workspace to change it)",
    "the CycleCloud VM's image and admin user are set when the VM is created (osProfile, imageReference)",
    VM_SOURCE)

# mainTemplate.bicep's parameters at the tag, by what a re-run does with them.
PARAMETER_CLASS: dict[str, UpdateClass] = {
    **{name: CLUSTER for name in ("slurmSettings", "schedulerNode", "loginNodes", "htc", "hpc", "gpu",
                                  "clusterInitSpecs", "clusterName", "entraIdInfo", "projectVersion", "branch",
                                  "insidersBuild", "manualInstall", "acceptMarketplaceTerms", "oodProjectVersion")},
    "network": NETWORK,
    **{name: AZURE for name in ("sharedFilesystem", "schedFilesystem", "additionalFilesystem",
                                "storagePrivateDnsZone", "tags", "databaseConfig", "monitoring", "ood")},
    "ccVMSize": VM_RESIZE,
    **{name: VM_NEW for name in ("ccVMName", "resourceGroup", "location")},
    **{name: VM_FIXED for name in ("cyclecloudBaseImage", "adminUsername", "key")},
}


def changed_parameters(before: dict[str, object], after: dict[str, object]) -> list[str]:
    """Top-level parameters (``parameters.<name>.value``) that differ, added or removed, in name order."""
    return sorted(name for name in set(before) | set(after) if before.get(name) != after.get(name))


def update_classes(changed: list[str]) -> list[tuple[UpdateClass, list[str]]]:
    """The update classes of the changed parameters, each with its parameters, in the table's order; a
    parameter the table does not know is left out."""
    grouped: dict[str, tuple[UpdateClass, list[str]]] = {}
    for name in changed:
        found = PARAMETER_CLASS.get(name)
        if found is not None:
            grouped.setdefault(found.name, (found, []))[1].append(name)
    order = [CLUSTER.name, NETWORK.name, AZURE.name, VM_RESIZE.name, VM_NEW.name, VM_FIXED.name]
    return sorted(grouped.values(), key=lambda item: order.index(item[0].name))
