"""AzHOP artifacts: ``azhop/config.yml`` and the cluster-init scripts that put NCCL files on GPU nodes.

The cluster-init files mirror az-hop's ``common`` CycleCloud project
(``playbooks/roles/cyclecloud_cluster/projects/common/cluster-init/``), which runs on every node:
copy ``azhop/cluster-init/`` over it before ``install.sh``. ``scripts/zz-hpcconf-nccl.sh`` runs last
(after az-hop's ``zz-custom.sh``), asks jetpack which nodearray (queue) the node belongs to and runs
``files/hpcconf/<queue>/install-nccl-files.sh``, which writes the nccl target's files to the paths
its ``nccl.conf`` names (``/opt/hpcconf/nccl/...``) and that ``nccl.conf`` to ``/etc/nccl.conf``, plus
the ``hpcconf-nccl-conf.service`` unit that puts it back after Azure's ``sku-customizations.service``
rewrites it at every boot (``templates/nccl/boot-unit.sh.j2`` says why a unit, not ``NCCL_CONF_FILE``).
"""

from __future__ import annotations

from typing import Any

from ..artifacts import Artifact, Kind
from ..resolve import ResolvedCluster
from ..resolve.azhop import AzhopQueue, NcclInstall, ResolvedAzhop
from ..templating import generated_by, render_template
from . import _health
from ._common import nccl_boot_unit, nccl_conf, platform_target, topology_artifacts

CLUSTER_INIT = "azhop/cluster-init"
DISPATCHER = f"{CLUSTER_INIT}/scripts/zz-hpcconf-nccl.sh"
HEREDOC_END = "HPCCONF_EOF"
# OnDemand apps in az-hop's template; enabled as the template enables them.
APPLICATIONS = (("bc_codeserver", True), ("bc_jupyter", True), ("bc_amlsdk", False), ("bc_rstudio", False),
                ("bc_ansys_workbench", False), ("bc_vmd", False), ("bc_paraview", False), ("bc_vizer", False))


def installer_path(queue: str) -> str:
    return f"{CLUSTER_INIT}/files/hpcconf/{queue}/install-nccl-files.sh"


# -- config.yml ------------------------------------------------------------------------------------

def _queue(q: AzhopQueue, queue_manager: str) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": q.name}
    if q.type:
        entry["type"] = q.type
    entry["vm_size"] = q.vm_size
    if q.initial_count is not None:
        entry["initial_count"] = q.initial_count
    if q.max_count is not None:
        entry["max_count"] = q.max_count
    if q.max_core_count is not None:
        entry["max_core_count"] = q.max_core_count
    entry["image"] = q.image
    entry["EnableAcceleratedNetworking"] = q.accelerated_networking
    entry["spot"] = q.spot
    if q.colocate is not None and queue_manager == "slurm":
        entry["ColocateNodes"] = q.colocate
    if q.idle_timeout is not None:
        entry["idle_timeout"] = q.idle_timeout
    if q.max_scale_set_size is not None:
        entry["MaxScaleSetSize"] = q.max_scale_set_size
    return entry


def _queue_comment(q: AzhopQueue, first: bool, cluster: ResolvedCluster) -> str:
    parts = [q.note]
    if first and cluster.azhop and cluster.azhop.queue_manager == "slurm":
        parts.append("first queue = Slurm default partition")
    if q.pool and q.colocate and cluster.pool(q.pool).infiniband:
        parts.append("ColocateNodes: one placement group / scale set, so InfiniBand connects the nodes")
    if q.max_scale_set_size is not None:
        parts.append(f"MaxScaleSetSize {q.max_scale_set_size}: above 100 VMs needs an Azure quota raise (support ticket)")
    return "; ".join(p for p in parts if p)


def config_context(cluster: ResolvedCluster, az: ResolvedAzhop) -> dict[str, Any]:
    s = az.settings
    users = [{"name": u.name, "uid": u.uid, "groups": [az.gids[g] for g in u.groups], "shell": u.shell} for u in s.users]
    return {
        "header": [generated_by(cluster.spec_file), f"az-hop config.yml for cluster '{cluster.name}'; validate with "
                   "az-hop's ./validate_config.sh (config.schema.json, draft-06) or `hpcconf lint`."],
        "cluster": cluster, "az": az, "s": s,
        "home": az.home,
        "subnets": az.subnets,
        "users": users,
        "queues": [(_queue(q, s.queue_manager), _queue_comment(q, i == 0, cluster)) for i, q in enumerate(az.queues)],
        "applications": APPLICATIONS,
        "access_key": s.access,
        "lustre": s.storage.lustre,
        "amlfs_note": az.amlfs_note,
    }


def config_yml(cluster: ResolvedCluster, az: ResolvedAzhop) -> Artifact:
    return Artifact("azhop/config.yml", render_template("azhop/config.yml.j2", **config_context(cluster, az)),
                    Kind.AZHOP_CONFIG, "azhop")


# -- cluster-init: NCCL files on the nodes ---------------------------------------------------------------

def _heredoc_body(path: str, content: str) -> str:
    if HEREDOC_END in content.splitlines():
        raise RuntimeError(f"{path} contains the heredoc delimiter {HEREDOC_END}")
    return content if content.endswith("\n") else content + "\n"


def installer(cluster: ResolvedCluster, install: NcclInstall, produced: dict[str, Artifact]) -> Artifact:
    pool = cluster.pool(install.queue)
    files = [{"source": src, "target": dst, "content": _heredoc_body(src, produced[src].content)} for src, dst in install.files]
    conf = produced[install.conf_artifact]
    text = render_template(
        "azhop/install-nccl-files.sh.j2", header=generated_by(cluster.spec_file), queue=install.queue,
        sku=pool.sku.name, files=files, conf={"source": install.conf_artifact, "target": install.conf_node_path,
                                               "directory": install.conf_node_path.rsplit("/", 1)[0],
                                               "content": _heredoc_body(install.conf_artifact, conf.content)},
        directories=sorted({dst.rsplit("/", 1)[0] for _, dst in install.files}), end=HEREDOC_END,
        image_conf=pool.sku.image_nccl_conf, boot=nccl_boot_unit(HEREDOC_END))
    return Artifact(installer_path(install.queue), text, Kind.SHELL_SCRIPT, "azhop")


def dispatcher(cluster: ResolvedCluster, installs: tuple[NcclInstall, ...]) -> Artifact:
    text = render_template("azhop/zz-hpcconf-nccl.sh.j2", header=generated_by(cluster.spec_file),
                           queues=[i.queue for i in installs])
    return Artifact(DISPATCHER, text, Kind.SHELL_SCRIPT, "azhop")


def node_setup(cluster: ResolvedCluster, az: ResolvedAzhop) -> list[Artifact]:
    if not az.nccl_installs:
        return []
    # The same files the nccl target writes (rendered by its functions), so the two cannot drift.
    produced: dict[str, Artifact] = {}
    for pool in cluster.gpu_pools:
        for artifact in topology_artifacts(pool, "nccl", "nccl") + [nccl_conf(pool, cluster)]:
            produced[artifact.path] = artifact
    return [installer(cluster, i, produced) for i in az.nccl_installs] + [dispatcher(cluster, az.nccl_installs)]


# -- cluster-init: node health checks ------------------------------------------------------------------

HEALTH_DISPATCHER = f"{CLUSTER_INIT}/scripts/zz-hpcconf-nhc.sh"


def health_installer_path(queue: str) -> str:
    return f"{CLUSTER_INIT}/files/hpcconf/{queue}/install-health-checks.sh"


def health_setup(cluster: ResolvedCluster, az: ResolvedAzhop) -> list[Artifact]:
    """Per GPU queue, an installer of its health checks; a cluster-init script that installs and runs them
    (after zz-hpcconf-nccl.sh), so a node that fails them fails its cluster-init and never joins the queue."""
    queues = [q for q in az.queues if q.pool is not None and cluster.pool(q.pool).has_gpus]
    if not _health.enabled(cluster) or not queues:
        return []
    dispatcher_name = HEALTH_DISPATCHER.rsplit("/", 1)[1]
    artifacts = [Artifact(health_installer_path(q.name), _health.installer_text(
                     cluster, cluster.pool(q.pool or ""), [f"Run by {dispatcher_name} (cluster-init) on the nodes of queue '{q.name}'."]),
                          Kind.SHELL_SCRIPT, "azhop") for q in queues]
    text = render_template("azhop/zz-hpcconf-nhc.sh.j2", header=generated_by(cluster.spec_file),
                           queues=[q.name for q in queues], runner=_health.RUNNER, log=_health.LOG)
    return artifacts + [Artifact(HEALTH_DISPATCHER, text, Kind.SHELL_SCRIPT, "azhop")]


GPU_COUNT_SCRIPT = "azhop/scheduler/slurm-gpu-count.sh"


def gpu_count_override(cluster: ResolvedCluster, az: ResolvedAzhop) -> list[Artifact]:
    """For the GPU sizes cyclecloud-slurm may count wrong: the documented autoscale.json ``slurm_gpus`` override
    (resolved in hpcconf.resolve.azhop), as a script for the scheduler that also checks it took."""
    override = az.gpu_count_override
    if override is None:
        return []
    text = render_template("azhop/slurm-gpu-count.sh.j2", header=generated_by(cluster.spec_file), sizes=list(override.sizes),
                           version=az.slurm.cyclecloud_slurm, fixed_in=override.fixed_in, azhop_newest=override.azhop_newest)
    return [Artifact(GPU_COUNT_SCRIPT, text, Kind.SHELL_SCRIPT, "azhop")]


def render(cluster: ResolvedCluster, az: ResolvedAzhop) -> list[Artifact]:
    return [config_yml(cluster, az), *node_setup(cluster, az), *health_setup(cluster, az),
            *gpu_count_override(cluster, az)]


TARGETS = [platform_target("azhop", frozenset({"azhop"}), lambda cluster: cluster.azhop, render)]
