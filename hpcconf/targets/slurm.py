"""Slurm artifacts: an sbatch NCCL test per GPU pool (AzHOP queues, plain Slurm and CCWS's gpu partition), the MPI/UCX/UCC
environment file, and Crusoe's ``terraform.tfvars``.

Paths: ``slurm/<pool>/<collective>_perf.sbatch``, ``slurm/<pool>/mpi.env`` (only when the spec asks
for an MPI path other than plain NCCL, or sets ``mpi_env``), ``slurm/<pool>/install-nccl-files.sh``
(``platform: slurm`` pools whose nccl.conf names hpcconf's topology files; AzHOP installs them with
its cluster-init), ``slurm/<pool>/nvlink-domains.sh`` (``platform: slurm`` pools whose NVLink domain spans
VMs: IMEX peers and the topology/block ``topology.conf``) and ``slurm/terraform.tfvars`` (only for ``platform: slurm`` on Crusoe). Every value comes from :mod:`hpcconf.resolve.slurm`.
"""

from __future__ import annotations

import json
from typing import Optional

from ..artifacts import Artifact, Kind
from ..resolve import ResolvedCluster
from ..resolve.nccl import NODE_NCCL_DIR
from ..resolve.slurm import CrusoePartition, ResolvedSlurm, SlurmPartition
from ..resolve.test_passes import RUN_KILL_AFTER_S, TIMED_OUT_STATUS, TestRuns, run_budget_s
from ..templating import generated_by, render_template
from . import _health
from ._common import nccl_boot_unit, platform_target
from .nccl_passes import FAILED_FUNCTION
from .nccl_verdict import CHECK_LOG, check_log_floor_args

TARGET = "slurm"

# Why each generated MPI setting is there; a line of comment above it in the env file.
ENV_REASONS = {
    "UCX_TLS": "UCX transports for this SKU: rc on InfiniBand (tcp without), shared memory, CUDA copy/IPC (no sockcm: removed in UCX 1.11)",
    "UCX_NET_DEVICES": "The NICs UCX may use (RDMA devices are named device:port)",
    "OMPI_MCA_coll_ucc_enable": "Open MPI's coll/ucc is off by default (open-mpi/ompi#9009)",
    "OMPI_MCA_coll_ucc_priority": "Above coll/hcoll (90) and coll/tuned (30), so UCC is picked (open-mpi/ompi#9885)",
    "UCC_TL_NCCL_TUNE": "UCC sends these collectives on CUDA buffers to NCCL (token: collectives:memory type:score)",
    "OMPI_MCA_coll_hcoll_enable": "hcoll off, as in Azure's MPI/NCCL tests (coll/hcoll no longer exists in Open MPI 6)",
}


def hcl_string(value: object) -> str:
    """An HCL quoted string: JSON escapes, plus ``$${``/``%%{`` so Terraform does not template it."""
    return json.dumps(str(value)).replace("${", "$${").replace("%{", "%%{")


def nccl_tests_args(cluster: ResolvedCluster) -> str:
    test = cluster.nccl_test
    return (f"-b {test.min_bytes} -e {test.max_bytes} -f {test.step_factor} -g 1 "
            f"-n {test.iterations} -w {test.warmup_iterations} -c {1 if test.check else 0}")


def run_timeout(args: str) -> str:
    """The ``timeout`` in front of one nccl-tests run with these arguments (its budget: nccl_passes.run_budget_s)."""
    return f"timeout -k {RUN_KILL_AFTER_S} {run_budget_s(args.split())}"


def env_file_path(job: SlurmPartition) -> str:
    return f"{job.directory}/mpi.env"


def sbatch_script(cluster: ResolvedCluster, slurm: ResolvedSlurm, job: SlurmPartition) -> Artifact:
    binary = f"{cluster.nccl_test.collective}_perf"
    script_name = f"{binary}.sbatch"
    job_name = f"{job.library}-{cluster.nccl_test.collective}-{job.pool}"
    runs = _runs(job)
    text = render_template(
        "slurm/nccl-test.sbatch.j2", header=generated_by(cluster.spec_file), job=job, binary=binary,
        nccl_tests_dir=job.tests_dir, matrix=cluster.nccl_test.matrix(), test_args=nccl_tests_args(cluster),
        job_name=job_name, library=job.library.upper(), check_log=CHECK_LOG, checks=log_checks(cluster, job, job_name),
        rocm_path=job.rocm_path, script_name=script_name,
        time_limit=slurm.time_limit, modules_source=job.image_source if job.image_source and not
        slurm.modules_from_spec else None, mpirun_exports=mpirun_exports(job), env_file=env_file_path(job),
        expected=job.expected_busbw, image_env=list(job.image_env),
        rccl_env_source=slurm.rccl_env_source,
        passes=runs.passes, run_timeout=run_timeout, timed_out_status=TIMED_OUT_STATUS, failed_function=FAILED_FUNCTION,
        single_node_floor=runs.single_node_floor_note,
        health_status=_health.STATUS if cluster.pool(job.pool).health is not None else None,
        sku_args=report_sku_args(job), sku_args_echoed=report_sku_args(job).replace('"', '\\"'))
    return Artifact(f"{job.directory}/{script_name}", text, Kind.SBATCH_SCRIPT, TARGET)


def _runs(job: SlurmPartition) -> TestRuns:
    if job.runs is None:  # resolve_partition sets it for every partition
        raise RuntimeError(f"slurm partition {job.pool}: no resolved test runs")
    return job.runs


def log_checks(cluster: ResolvedCluster, job: SlurmPartition, job_name: str) -> list[str]:
    """``check_log`` of every log the job writes, against the floor nccl-report judges that run with (nccl_verdict)."""
    log = f"{job_name}.${{SLURM_JOB_ID:-0}}"
    runs = _runs(job)
    checks = [f"check_log \"{log}.{run.collective}.log\" {run.collective}_perf{check_log_floor_args(run.floor)}"
              for run in runs.matrix]
    for p in runs.passes:
        checks.append(f"check_log \"{log}.{p.log}\" {p.name}{check_log_floor_args(p.floor)}")
    return checks


def mpirun_exports(job: SlurmPartition) -> list[str]:
    """What an mpirun-launched job passes to its ranks with -x: every variable the job exports."""
    keys = [key for key, _ in job.nccl_env] + [key for key, _ in job.mpi_env]
    if job.nvlink:
        keys += [key for key, _ in job.nvlink.job_env]
    keys += ["LD_LIBRARY_PATH", "PATH"]
    return list(dict.fromkeys(keys))


def report_sku_args(job: SlurmPartition) -> str:
    """``hpcconf nccl-report``'s SKU options on the node: a user's SKU file travels in sku/ beside the job."""
    if job.sku_file:
        return f'--sku {job.sku} --sku-dir "${{SLURM_SUBMIT_DIR:-.}}/sku"'
    return f"--sku {job.sku}"


def env_file(cluster: ResolvedCluster, slurm: ResolvedSlurm, job: SlurmPartition) -> Artifact:
    user_keys = {key for key, _ in cluster.mpi_env}
    entries = [(key, value, "" if key in user_keys else ENV_REASONS.get(key, "")) for key, value in job.mpi_env]
    text = render_template("slurm/mpi.env.j2", header=generated_by(cluster.spec_file), pool=job.pool,
                           sku=job.sku, collectives=slurm.collectives, file_name="mpi.env", entries=entries)
    return Artifact(env_file_path(job), text, Kind.ENV_FILE, TARGET)


def nccl_installer(cluster: ResolvedCluster, job: SlurmPartition) -> Optional[Artifact]:
    """A node-setup script for plain Slurm: copies the nccl target's files to where nccl.conf points."""
    ours = [path for path in job.required_files if path.startswith(f"{NODE_NCCL_DIR}/")]
    graph = cluster.pool(job.pool).nccl.graph_node_path
    if ours and graph:
        ours.append(graph)  # not named in nccl.conf: there for a job that gets every GPU to opt in
    if "slurm" not in cluster.platforms or not ours:
        return None  # vendor files (Crusoe) come with the image
    script = f"{job.directory}/install-nccl-files.sh"
    files = [(f"nccl/{path.rsplit('/', 1)[1]}", path) for path in ours]
    text = render_template(
        "slurm/install-nccl-files.sh.j2", header=generated_by(cluster.spec_file), pool=job.pool, sku=job.sku,
        partition=job.partition, nodes=cluster.pool(job.pool).count, script=script,
        directories=sorted({target.rsplit("/", 1)[0] for _, target in files}), files=files,
        conf=f"nccl/{job.pool}/nccl.conf", boot=nccl_boot_unit("HPCCONF_EOF"))
    return Artifact(script, text, Kind.SHELL_SCRIPT, TARGET)


def nvlink_domains_script(cluster: ResolvedCluster, job: SlurmPartition) -> Optional[Artifact]:
    """For a pool whose NVLink domain spans VMs (GB200/GB300 NVL72) on plain Slurm: the controller-side
    script that sets each node's IMEX peers and writes the topology/block topology.conf (see the template)."""
    domain = job.nvlink
    if domain is None or not domain.setup_script or "slurm" not in cluster.platforms:
        return None
    pool = cluster.pool(job.pool)
    script = f"{job.directory}/nvlink-domains.sh"
    text = render_template(
        "slurm/nvlink-domains.sh.j2", header=generated_by(cluster.spec_file), pool=job.pool, sku=job.sku,
        partition=job.partition, nodes=pool.count, gpus=pool.gpus_per_node, domain_gpus=domain.domain_gpus,
        nodes_per_domain=domain.nodes_per_domain, interface=pool.sku.ethernet_interface,
        nodes_config=domain.imex_nodes_config, nodes_config_dir=domain.imex_nodes_config.rsplit("/", 1)[0],
        service=domain.imex_service, block_prefix=f"{job.pool}-nvl", block_size=domain.block_size)
    return Artifact(script, text, Kind.SHELL_SCRIPT, TARGET)


def health_installer(cluster: ResolvedCluster, job: SlurmPartition) -> Optional[Artifact]:
    """A node-setup script for plain Slurm: the pool's health checks and the runner Slurm calls."""
    if "slurm" not in cluster.platforms or cluster.pool(job.pool).health is None:
        return None  # AzHOP installs them with its cluster-init; a pool without checks (NHC006) gets none
    script = f"{job.directory}/install-health-checks.sh"
    usage = ["Run it once per node as root, e.g.:",
             f"  srun -p {job.partition} -N {cluster.pool(job.pool).count} --ntasks-per-node=1 sudo bash {script}",
             f"then add slurm/{HEALTH_CONF} to slurm.conf (or Include it) and run scontrol reconfigure."]
    text = _health.installer_text(cluster, cluster.pool(job.pool), usage)
    return Artifact(script, text, Kind.SHELL_SCRIPT, TARGET)


HEALTH_CONF = "health-check.conf"


def health_conf(cluster: ResolvedCluster) -> list[Artifact]:
    """slurm.conf lines that make slurmd run the health checks on idle nodes."""
    checked = [p.name for p in cluster.gpu_pools if p.health is not None]
    if "slurm" not in cluster.platforms or not _health.enabled(cluster) or not checked:
        return []
    text = render_template("slurm/health-check.conf.j2", header=generated_by(cluster.spec_file),
                           program=_health.SLURM_RUNNER, interval=cluster.health_checks.interval_s,
                           runner=_health.RUNNER, reason=_health.DRAIN_REASON, fast_conf=_health.NODE_FAST_CONF,
                           pools=checked)
    return [Artifact(f"slurm/{HEALTH_CONF}", text, Kind.SLURM_CONF, TARGET)]


def sku_file(cluster: ResolvedCluster, job: SlurmPartition) -> Optional[Artifact]:
    """The user's SKU file, beside the job: its `hpcconf nccl-report --sku` runs on a node that has only
    hpcconf's own catalog (an imported SKU, or a --sku-dir file replacing a catalog entry)."""
    pool = cluster.pool(job.pool)
    if pool.sku_file is None or job.sku_dir is None:
        return None
    name, text = pool.sku_file
    return Artifact(f"{job.sku_dir}/{name}", text, Kind.SKU_FILE, TARGET)


def slurm_config(cluster: ResolvedCluster, job: SlurmPartition) -> list[Artifact]:
    """The partition's gres.conf (for each of its nodes), cgroup.conf and slurm.conf lines, to compare with the
    cluster's /etc/slurm (CCWS writes its own reference files, from what azslurm writes)."""
    header = generated_by(cluster.spec_file)
    files = [
        (f"{job.directory}/gres.conf", Kind.GRES_CONF,
         [f"gres.conf for each node of partition {job.partition} ({job.sku}): its GPUs, each bound to its NUMA node's "
          "cores where the catalog has the map; install it as /etc/slurm/gres.conf on those nodes (a line without "
          "NodeName= applies to the node reading the file, gres.conf(5))."],
         [(line, "") for line in job.gres_conf]),
        (f"{job.directory}/cgroup.conf", Kind.CGROUP_CONF,
         ["cgroup.conf: ConstrainDevices=yes confines a job to the GPUs it was given."],
         [(line, "") for line in job.cgroup_conf]),
        (f"{job.directory}/gpu-partition.conf", Kind.SLURM_CONF,
         [f"slurm.conf lines partition {job.partition} needs; compare with the controller's /etc/slurm/slurm.conf.",
          f"Each node's NodeName= line needs Gres=gpu:{job.gpus_per_node} (without it slurmctld counts no GPUs and "
          "jobs asking --gpus-per-node are refused).",
          *(["The topology lines stay commented until topology.conf holds the blocks (nvlink-domains.sh writes it): "
             "without it slurmctld exits at start."] if any(i.needs_topology_conf for i in job.slurm_conf) else [])],
         [(f"# {item.line}" if item.needs_topology_conf else item.line, item.why) for item in job.slurm_conf]),
    ]
    return [Artifact(path, render_template("ccws/slurm-reference.conf.j2", header=header, intro=intro,
                                           lines=[{"line": line, "why": why} for line, why in lines]), kind, TARGET)
            for path, kind, intro, lines in files if lines]


def render_jobs(cluster: ResolvedCluster, slurm: ResolvedSlurm) -> list[Artifact]:
    artifacts = health_conf(cluster)
    for job in slurm.partitions:
        artifacts.append(sbatch_script(cluster, slurm, job))
        if "slurm" in cluster.platforms:
            artifacts += slurm_config(cluster, job)
        shipped = sku_file(cluster, job)
        if shipped is not None:
            artifacts.append(shipped)
        if job.mpi_env:
            artifacts.append(env_file(cluster, slurm, job))
        for extra in (nccl_installer(cluster, job), nvlink_domains_script(cluster, job), health_installer(cluster, job)):
            if extra is not None:
                artifacts.append(extra)
    return artifacts


def _hcl_partition(partition: CrusoePartition) -> dict[str, str]:
    """One ``partitions`` element: every attribute of the module's object type (none is optional)."""
    extra = {"Default": "YES" if partition.default else "NO", "MaxTime": "INFINITE", "State": "UP"}
    return {
        "name": hcl_string(partition.name), "count": str(partition.count), "type": hcl_string(partition.instance_type),
        # IMEX is for GB200 NVL72 (crusoecloud/slurm README): on for a size whose NVLink domain spans VMs.
        "imex_support": "true" if partition.imex_support else "false",
        "ib_partition_id": hcl_string(partition.ib_partition_id) if partition.ib_partition_id else "null",
        "image": hcl_string(partition.image) if partition.image else "null",
        "custom_image": hcl_string(partition.custom_image) if partition.custom_image else "null",
        "reservation_id": "null",
        "extra_args": "{ " + ", ".join(f"{hcl_string(k)} = {hcl_string(v)}" for k, v in extra.items()) + " }",
    }


def render_tfvars(cluster: ResolvedCluster, slurm: ResolvedSlurm) -> list[Artifact]:
    if slurm.crusoe is None or not slurm.crusoe_partitions:
        return []
    crusoe = slurm.crusoe
    users = [{"name": hcl_string(u.name), "uid": u.uid, "ssh_pubkey": hcl_string(u.ssh_public_key)}
             for u in crusoe.users]
    first = slurm.crusoe_partitions[0]
    text = render_template(
        "slurm/terraform.tfvars.j2", header=generated_by(cluster.spec_file), version=crusoe.module_version,
        location=hcl_string(crusoe.location), project_id=hcl_string(crusoe.project_id),
        ssh_public_key_path=hcl_string(crusoe.ssh_public_key_path), vpc_subnet_id=hcl_string(crusoe.vpc_subnet_id),
        partitions=[_hcl_partition(p) for p in slurm.crusoe_partitions],
        node_type=hcl_string(first.instance_type), node_count=first.count,
        ib_partition_id=hcl_string(first.ib_partition_id) if first.ib_partition_id else None,
        ib_network_id=hcl_string(crusoe.ib_network_id) if crusoe.ib_network_id else None,
        ib_network_comment=crusoe.ib_network_id, users=users)
    return [Artifact("slurm/terraform.tfvars", text, Kind.TFVARS, TARGET)]


TARGETS = [
    platform_target("slurm-jobs", frozenset({"azhop", "slurm", "ccws"}), lambda cluster: cluster.slurm, render_jobs),
    platform_target("slurm-tfvars", frozenset({"slurm"}), lambda cluster: cluster.slurm, render_tfvars),
]
