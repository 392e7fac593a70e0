"""CycleCloud Workspace for Slurm (CCWS) artifacts, transcribed from :mod:`hpcconf.resolve.ccws`.

Paths: ``ccws/parameters.json`` (the ARM deployment parameters of the release's ``bicep/mainTemplate.bicep``,
validated against its types when resolved), ``ccws/deploy.sh`` (``az deployment sub create`` of the template at the
tag with ``@parameters.json``), ``ccws/cluster-init/`` (a CycleCloud project for the gpu partition: NCCL files and
Azure's node health checks) and ``ccws/slurm/`` (the ``gres.conf``, ``cgroup.conf`` and ``slurm.conf`` lines of the
gpu partition, as cyclecloud-slurm writes them, to compare with the scheduler's; ``health-check.conf``, the periodic
health check for the scheduler's ``site_specific.conf``, which CCWS does not wire itself).
"""

from __future__ import annotations

import json
from typing import Any

from ..artifacts import Artifact, Kind
from ..resolve import ResolvedCluster
from ..resolve.ccws import NODE_NAME_SOURCE, ResolvedCcws
from ..templating import generated_by, render_template
from . import _health
from ._common import nccl_boot_unit, nccl_conf, platform_target, topology_artifacts

TARGET = "ccws"
PARAMETERS_SCHEMA = "https://schema.management.azure.com/schemas/2019-04-01/deploymentParameters.json#"
PROJECT_DIR = "ccws/cluster-init"
SPEC_DIR = f"{PROJECT_DIR}/specs/default/cluster-init"
HEREDOC_END = "HPCCONF_EOF"
NCCL_SCRIPT = "10-hpcconf-nccl.sh"
HEALTH_SCRIPT = "20-hpcconf-health-checks.sh"
HEALTH_INSTALLER = "install-health-checks.sh"
NVL72_SCRIPT = "nvl72-topology.sh"
HEALTH_CONF = "ccws/slurm/health-check.conf"  # lines for the scheduler's site_specific.conf


def parameters_file(cluster: ResolvedCluster, ccws: ResolvedCcws) -> Artifact:
    # JSON has no comments: deploy.sh names the generator and the template (repository, tag, commit).
    document: dict[str, Any] = {
        "$schema": PARAMETERS_SCHEMA,
        "contentVersion": "1.0.0.0",
        "parameters": {name: {"value": value} for name, value in ccws.parameters},
    }
    return Artifact("ccws/parameters.json", json.dumps(document, indent=2) + "\n", Kind.CCWS_PARAMETERS, TARGET)


def deploy_script(cluster: ResolvedCluster, ccws: ResolvedCcws) -> Artifact:
    text = render_template(
        "ccws/deploy.sh.j2", header=generated_by(cluster.spec_file), release=ccws.release, commit=ccws.commit,
        repository=f"{ccws.repository_url}.git", template_file=ccws.template_file, location=cluster.location,
        cluster_name=ccws.cluster_name, deployment_name=ccws.deployment_name, az_cli=cluster.versions.az_cli,
        secure=list(ccws.secure_parameters), cluster_init_url=ccws.cluster_init_url,
        project=ccws.cluster_init_project, project_version=ccws.cluster_init_version, subnets=list(ccws.subnets),
        address_space=ccws.address_space, project_dir=PROJECT_DIR.split("/", 1)[1],
        health_conf=HEALTH_CONF.split("/", 1)[1] if _health.enabled(cluster) and cluster.pool(ccws.gpu.pool).health
        is not None else None)
    return Artifact("ccws/deploy.sh", text, Kind.SHELL_SCRIPT, TARGET)


def _heredoc_body(path: str, content: str) -> str:
    if HEREDOC_END in content.splitlines():
        raise RuntimeError(f"{path} contains the heredoc delimiter {HEREDOC_END}")
    return content if content.endswith("\n") else content + "\n"


def cluster_init(cluster: ResolvedCluster, ccws: ResolvedCcws) -> list[Artifact]:
    gpu = ccws.gpu
    pool = cluster.pool(gpu.pool)
    header = generated_by(cluster.spec_file)
    artifacts = [Artifact(f"{PROJECT_DIR}/project.ini", render_template(
        "ccws/project.ini.j2", header=header, project=ccws.cluster_init_project, version=ccws.cluster_init_version,
        cluster=ccws.cluster_name, nodearray="gpu", sku=gpu.sku), Kind.CYCLECLOUD_PROJECT, TARGET)]
    if gpu.nccl_conf_artifact is not None:
        produced = {a.path: a for a in topology_artifacts(pool, "nccl", "nccl") + [nccl_conf(pool, cluster)]}
        conf = produced[gpu.nccl_conf_artifact]
        files = [{"source": src, "target": dst, "content": _heredoc_body(src, produced[src].content)}
                 for src, dst in gpu.nccl_files]
        text = render_template(
            "ccws/install-nccl-files.sh.j2", header=header, project=ccws.cluster_init_project, nodearray="gpu",
            sku=gpu.sku, files=files, directories=sorted({dst.rsplit("/", 1)[0] for _, dst in gpu.nccl_files}),
            conf={"source": gpu.nccl_conf_artifact, "target": gpu.nccl_conf_node_path,
                  "directory": gpu.nccl_conf_node_path.rsplit("/", 1)[0],
                  "content": _heredoc_body(gpu.nccl_conf_artifact, conf.content)},
            end=HEREDOC_END, image_conf=pool.sku.image_nccl_conf, boot=nccl_boot_unit(HEREDOC_END))
        artifacts.append(Artifact(f"{SPEC_DIR}/scripts/{NCCL_SCRIPT}", text, Kind.SHELL_SCRIPT, TARGET))
    if _health.enabled(cluster) and pool.health is not None:
        usage = [f"Run by scripts/{HEALTH_SCRIPT} (cluster-init) on the nodes of CCWS's gpu partition."]
        artifacts.append(Artifact(f"{SPEC_DIR}/files/{HEALTH_INSTALLER}", _health.installer_text(cluster, pool, usage),
                                  Kind.SHELL_SCRIPT, TARGET))
        text = render_template("ccws/run-health-checks.sh.j2", header=header, project=ccws.cluster_init_project,
                               nodearray="gpu", installer=HEALTH_INSTALLER, runner=_health.RUNNER, log=_health.LOG,
                               check_timeout=ccws.boot_check_timeout_s, resume_timeout=ccws.resume_timeout_s)
        artifacts.append(Artifact(f"{SPEC_DIR}/scripts/{HEALTH_SCRIPT}", text, Kind.SHELL_SCRIPT, TARGET))
    return artifacts


def slurm_reference(cluster: ResolvedCluster, ccws: ResolvedCcws) -> list[Artifact]:
    gpu = ccws.gpu
    header = generated_by(cluster.spec_file)
    groups = f"{gpu.placement_groups} placement group{'s' if gpu.placement_groups != 1 else ''}"
    gres_intro = [f"gres.conf of CCWS's gpu partition ({gpu.max_nodes} x {gpu.sku}, {groups}): what cyclecloud-slurm "
                  f"{ccws.cyclecloud_slurm}'s azslurm writes to /etc/slurm/gres.conf; compare after `azslurm scale`.",
                  f"Node names: {NODE_NAME_SOURCE}."]
    if gpu.gpu_count_override is not None:
        gres_intro.append(f"cyclecloud-slurm {ccws.cyclecloud_slurm} may count this size's GPUs wrong: set "
                          f"slurm_gpus {gpu.gpu_count_override} in /opt/azurehpc/slurm/autoscale.json if it differs.")
    out = [
        ("ccws/slurm/gres.conf", Kind.GRES_CONF, gres_intro, [(line, "") for line in gpu.gres_conf]),
        ("ccws/slurm/cgroup.conf", Kind.CGROUP_CONF,
         [f"cgroup.conf of the cluster, as cyclecloud-slurm {ccws.cyclecloud_slurm} writes it: ConstrainDevices=yes "
          "confines a job to the GPUs it was given."], [(line, "") for line in gpu.cgroup_conf]),
        ("ccws/slurm/gpu-partition.conf", Kind.SLURM_CONF,
         [f"slurm.conf lines the gpu partition needs (Slurm {ccws.slurm_version}); cyclecloud-slurm writes these "
          "itself: compare with the scheduler's /etc/slurm/slurm.conf.", *([gpu.topology_note] if gpu.topology_note
                                                                          else [])],
         [(item.line, item.why) for item in gpu.slurm_conf]),
    ]
    if gpu.after_scaling:
        out.append(("ccws/slurm/site_specific.conf", Kind.SLURM_CONF,
                    [f"NVL72 racks ({gpu.sku}): lines for /etc/slurm/site_specific.conf on the scheduler, added by "
                     f"slurm/{NVL72_SCRIPT} after scaling ({gpu.after_scaling_source}). Never in the template's "
                     "additional_slurm_config: TopologyPlugin=topology/block without a populated topology.conf "
                     "stops slurmctld from starting, so the topology lines below stay commented here: the script "
                     "adds them once topology.conf holds the racks' blocks."],
                    # the first line (SuspendExcParts) is safe before scaling; the topology lines are not
                    [(item.line if index == 0 else f"# {item.line}", item.why)
                     for index, item in enumerate(gpu.after_scaling)]))
    artifacts = [Artifact(path, render_template("ccws/slurm-reference.conf.j2", header=header, intro=intro,
                                                lines=[{"line": line, "why": why} for line, why in lines]), kind,
                          TARGET)
                 for path, kind, intro, lines in out]
    if gpu.after_scaling and gpu.rack_nodes:
        text = render_template(
            "ccws/nvl72-topology.sh.j2", header=header, sku=gpu.sku, nodes=gpu.max_nodes, rack_nodes=gpu.rack_nodes,
            racks=gpu.racks, partition="gpu", cluster=ccws.cluster_name, source=gpu.after_scaling_source,
            suspend=gpu.after_scaling[0].line, topology=[item.line for item in gpu.after_scaling[1:]])
        artifacts.append(Artifact(f"ccws/slurm/{NVL72_SCRIPT}", text, Kind.SHELL_SCRIPT, TARGET))
    if _health.enabled(cluster) and cluster.pool(gpu.pool).health is not None:
        artifacts.append(Artifact(HEALTH_CONF, render_template(
            "ccws/health-check.conf.j2", header=header, cyclecloud_slurm=ccws.cyclecloud_slurm,
            ccws_health_checks=ccws.ccws_health_checks, program=_health.SLURM_RUNNER,
            interval=cluster.health_checks.interval_s, fast_conf=_health.NODE_FAST_CONF, reason=_health.DRAIN_REASON,
            nodearray="gpu", runner=_health.RUNNER), Kind.SLURM_CONF, TARGET))
    return artifacts


def render(cluster: ResolvedCluster, ccws: ResolvedCcws) -> list[Artifact]:
    return [parameters_file(cluster, ccws), deploy_script(cluster, ccws), *cluster_init(cluster, ccws),
            *slurm_reference(cluster, ccws)]


TARGETS = [platform_target("ccws", frozenset({"ccws"}), lambda cluster: cluster.ccws, render)]
