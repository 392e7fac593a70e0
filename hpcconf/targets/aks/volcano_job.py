"""The Volcano job that runs nccl-tests through mpirun, plus the ServiceAccount/RoleBinding it uses.

The 2023 NDm_v4 AKS walkthrough's job with its mistakes fixed: one worker task (jingchaozhang.github.io (2023) repeated ``mpiworker``, which
Volcano's admission rejects as "duplicated task name"), and every number derived instead of
typed: ``minAvailable`` = launcher + workers (gang), ``-np`` = workers × GPUs per node,
``-npernode`` / ``ppr:N:node`` = GPUs per node, ``-hostfile`` = the file the svc plugin writes
for the worker task, one ``k8s.v1.cni.cncf.io/networks`` entry per IB NIC.
"""

from __future__ import annotations

import shlex
from typing import Any, Optional

from ...artifacts import Artifact, Kind
from ...resolve import ResolvedCluster
from ...resolve.aks import AksPoolJob, ResolvedAks
from ...resolve.nccl import IMAGE_WORKDIR
from ...resolve.test_passes import RUN_KILL_AFTER_S, TestPass, run_budget_s
from ..nccl_passes import FAILED_FUNCTION
from ..nccl_verdict import CHECK_LOG, check_log_floor_args
from ._yaml import block, path, yaml_file
from .health_checks import WAIT_TIMEOUT_S as HEALTH_WAIT_TIMEOUT_S
from .health_checks import wait_container

JOB_FILE = "volcano-job.yaml"
RBAC_FILE = "job-rbac.yaml"
SSH_PORT = 22
WORKERS_TIMEOUT_S = 600  # image pull and sshd start on the workers
AGENTPOOL_LABEL = "kubernetes.azure.com/agentpool"
MAX_RETRY = 1  # the launcher's first failure ends the job Failed; a rerun is a new `kubectl create`
SHM_SIZE = "8Gi"  # the 2023 NDm_v4 AKS walkthroughs (jingchaozhang.github.io, Azure HPC blog); NCCL's shared-memory transport needs more than the 64 MiB default


def wait_for_workers_command(cluster: ResolvedCluster, aks: ResolvedAks, job: AksPoolJob) -> list[str]:
    """The launcher's init container: ``kubectl wait`` alone, so the kubectl image needs no shell and no jq.

    minAvailable is every replica, so Volcano binds the worker pods with the launcher (one gang): they exist
    when this runs. The launcher restarts nothing (restartPolicy Never), so the wait outlasts the workers' own
    wait for their node's health checks; a worker still not Ready then fails the job.
    """
    selector = f"volcano.sh/job-name={job.job_name},volcano.sh/task-spec={aks.worker_task}"
    timeout = WORKERS_TIMEOUT_S + (HEALTH_WAIT_TIMEOUT_S if cluster.health_checks.enabled else 0)
    return ["kubectl", "wait", "pod", "-l", selector, "--for=condition=Ready", f"--timeout={timeout}s"]


def nccl_tests_args(cluster: ResolvedCluster) -> list[str]:
    t = cluster.nccl_test
    return ["-b", t.min_bytes, "-f", str(t.step_factor), "-g", "1", "-e", t.max_bytes,
            "-n", str(t.iterations), "-w", str(t.warmup_iterations), "-c", "1" if t.check else "0"]


def mpirun_command(cluster: ResolvedCluster, aks: ResolvedAks, job: AksPoolJob, binary: str, args: list[str],
                   log: str, ranks: int, env: tuple[tuple[str, str], ...] = (), label: str = "",
                   drop: tuple[str, ...] = (), append: bool = False) -> str:
    """One mpirun of an nccl-tests binary on the job's pool; ``env`` overrides the pool's variables of the same name,
    ``drop`` names pool variables this run goes without. A failing mpirun (pipefail: its status, not tee's) or
    one past its time budget (:func:`run_budget_s`) is recorded under ``label`` and the job goes on; ``append``: the log
    already holds the pass's header line."""
    overrides = dict(env)
    merged = [(key, overrides.pop(key, value)) for key, value in job.mpirun_env if key not in drop] + list(overrides.items())
    lines = [
        f"timeout -k {RUN_KILL_AFTER_S} {run_budget_s(args)} mpirun --allow-run-as-root",
        f"-np {ranks} -npernode {job.gpus_per_worker}",
        f"--bind-to numa --map-by ppr:{job.gpus_per_worker}:node",
        f"-hostfile {aks.hostfile}",
    ]
    lines += [f"-x {key}={shlex.quote(value)}" for key, value in merged]
    lines += [f"-mca {key} {shlex.quote(value)}" for key, value in aks.mpirun_mca]
    lines.append(" ".join([binary, *args]) + f" 2>&1 | tee {'-a ' if append else ''}\"{log}\" || failed \"{label}\" $?")
    return " \\\n  ".join(lines) + "\n"


def pass_script(cluster: ResolvedCluster, aks: ResolvedAks, job: AksPoolJob, test_pass: TestPass) -> str:
    """A ring or single-node pass: the single node is the hostfile's first, filled by ``ppr:N:node``."""
    ranks = job.gpus_per_worker if test_pass.single_node else job.np
    what = ("one node, all its GPUs (judged against the single-node floor)" if test_pass.single_node
            else "NCCL_ALGO=Ring over every node: every channel crosses every node boundary, one slow NIC shows")
    # The single-node floor is Azure's check's, which runs without the topology file on these sizes.
    drop = job.single_node_drops if test_pass.single_node else ()
    # The header goes into the pass's log too: nccl-report reads the pass (NCCL_ALGO=Ring: the ring limit) from it.
    return (f"echo \"== {test_pass.name}: {what}\" | tee \"/tmp/{test_pass.log}\"\n"
            + mpirun_command(cluster, aks, job, job.pool.collective.image_binary(test_pass.collective),
                             list(test_pass.args), f"/tmp/{test_pass.log}", ranks, test_pass.env, test_pass.name, drop,
                             append=True))


def mpirun_script(cluster: ResolvedCluster, aks: ResolvedAks, job: AksPoolJob) -> str:
    collective = cluster.nccl_test.collective
    binary = job.pool.collective.image_binary(collective).replace(f"{collective}_perf", "${test}_perf")
    return (
        "set -eo pipefail  # a setup step that fails stops the job; a failed test is recorded (failed) instead\n"
        "FAILED=()\n"
        f"{FAILED_FUNCTION}\n"
        f"MPI_HOST=$(tr \"\\n\" \",\" < {aks.hostfile})\n"
        "mkdir -p /var/run/sshd; /usr/sbin/sshd\n"
        "echo \"HOSTS: $MPI_HOST\"\n"
        f"for test in {' '.join(cluster.nccl_test.matrix())}; do\n"
        "echo \"== ${test}_perf\"  # names the test in kubectl logs for nccl-tests older than 2.17\n"
        + mpirun_command(cluster, aks, job, binary, nccl_tests_args(cluster), "/tmp/$test.log", job.np, label="${test}_perf")
        + "done\n"
        + "".join(pass_script(cluster, aks, job, p) for p in job.runs.passes)
        + verdict_script(cluster, aks, job)
    )


def verdict_script(cluster: ResolvedCluster, aks: ResolvedAks, job: AksPoolJob) -> str:
    """Every log checked in the image (``check_log``: results present, none wrong, busbw at or above the floor
    nccl-report judges that run with, published or derived), then ``hpcconf nccl-report`` where the image has hpcconf; the job exits 1 when any mpirun or
    check failed, else with the report's status. Every verdict is printed before the job fails."""
    sku = f"--sku {job.sku}"
    passes = job.runs.passes
    checks = [f"check_log /tmp/{run.collective}.log {run.collective}_perf{check_log_floor_args(run.floor)}"
              for run in job.runs.matrix]
    for p in passes:
        checks.append(f"check_log /tmp/{p.log} {p.name}{check_log_floor_args(p.floor)}")
    multi = [f"/tmp/{run.collective}.log" for run in job.runs.matrix] + [f"/tmp/{p.log}" for p in passes if not p.single_node]
    calls = [f"--nodes {job.worker_replicas} {' '.join(multi)}"] + [f"--nodes 1 /tmp/{p.log}" for p in passes if p.single_node]
    pod = f"{job.job_name}-{aks.launcher_task}-0"
    return (
        "echo \"== verdict\"\n"
        + CHECK_LOG
        + "".join(f"{check}\n" for check in checks)
        + "RC=0\n"
        f"judge() {{ local rc=0; hpcconf nccl-report {sku} \"$@\" || rc=$?; [ \"$rc\" -le \"$RC\" ] || RC=$rc; }}\n"
        "if command -v hpcconf >/dev/null; then\n"
        + "".join(f"  judge {call}\n" for call in calls)
        + "else\n"
        # no --nodes: the log's host lines give each pass its own shape (the single-node pass is not a 2-node slice)
        f"  echo \"hpcconf is not in this image; for the full report: kubectl logs -n {aks.namespace} {pod} > nccl.log && "
        f"hpcconf nccl-report {sku} nccl.log\"\n"
        "fi\n"
        "if [ \"${#FAILED[@]}\" -gt 0 ]; then\n"
        "  printf \"FAILED: %s\\n\" \"${FAILED[@]}\" >&2\n"
        "  exit 1\n"
        "fi\n"
        "exit \"$RC\"\n"
    )


def _container(name: str, image: str, script: str, resources: dict[str, Any], **extra: Any) -> dict[str, Any]:
    container = {
        "name": name,
        "image": image,
        "command": ["/bin/bash", "-c", block(script)],
        "securityContext": {"capabilities": {"add": ["IPC_LOCK"]}},  # RDMA pins memory (memlock)
        "ports": [{"containerPort": SSH_PORT, "name": "mpijob-port"}],
        "workingDir": IMAGE_WORKDIR,
        "resources": resources,
    }
    container.update(extra)
    return container


def launcher_task(cluster: ResolvedCluster, aks: ResolvedAks, job: AksPoolJob) -> dict[str, Any]:
    return {
        "replicas": 1,
        "name": aks.launcher_task,
        # Workers run sshd forever; the job is done when the launcher is: Completed when it exits 0, and when it
        # fails (restartPolicy Never, so the pod does) RestartJob under maxRetry 1 ends the job Failed at once
        # (Volcano pkg/controllers/job/state/restarting.go: RetryCount >= maxRetry -> Failed), keeping the
        # launcher pod and its logs (the last retry retains Failed pods).
        "policies": [{"event": "TaskCompleted", "action": "CompleteJob"}, {"event": "PodFailed", "action": "RestartJob"}],
        "template": {"spec": {
            "initContainers": [{"name": "wait-for-workers", "image": aks.kubectl_image,
                                "command": wait_for_workers_command(cluster, aks, job)}],
            "serviceAccountName": aks.service_account,
            "containers": [_container(aks.launcher_task, aks.image_ref, mpirun_script(cluster, aks, job),
                                      {"requests": {"cpu": 1}})],
            "restartPolicy": "Never",  # a failed test fails the pod, and the job (policies above)
        }},
    }


def worker_cpu_memory(vcpus: Optional[int], memory_gib: Optional[int]) -> dict[str, int | str]:
    """cpu/memory requests for the one worker a node runs, from the SKU's size: without them the pod is
    BestEffort (the first evicted under memory pressure, and a second pod could share its node's CPUs).

    Headroom is left for what runs beside it: the kubelet/system reservations AKS subtracts from
    allocatable (about 0.3 cores and, on older node images, ~2-5% of memory on these sizes) and the
    operator DaemonSets (driver, device plugins, NFD). A tenth of the vCPUs (at least 2) and a fifth of the
    memory cover both; the worker stays Burstable, free to use more when it is idle.
    """
    requests: dict[str, int | str] = {}
    if vcpus is not None:
        requests["cpu"] = vcpus - max(2, vcpus // 10)
    if memory_gib is not None:
        requests["memory"] = f"{memory_gib * 4 // 5}Gi"
    return requests


def worker_task(cluster: ResolvedCluster, aks: ResolvedAks, job: AksPoolJob) -> dict[str, Any]:
    units = {job.gpu_resource: job.gpus_per_worker}  # the pool's own device plugin: nvidia.com/gpu or amd.com/gpu
    if job.infiniband:
        units[aks.ib_resource] = job.ib_nics_per_worker
    sku = job.pool.sku
    template: dict[str, Any] = {}
    if job.infiniband:  # the pool's IB NICs, each a HostDeviceNetwork attachment
        template["metadata"] = {"annotations": {
            "k8s.v1.cni.cncf.io/networks": ",".join([aks.network_name] * job.ib_nics_per_worker)}}
    container = _container(aks.worker_task, aks.image_ref, "mkdir -p /var/run/sshd; /usr/sbin/sshd -D;\n",
                           {"requests": {**worker_cpu_memory(sku.vcpus, sku.memory_gib), **units}, "limits": dict(units)},
                           volumeMounts=[{"mountPath": "/dev/shm", "name": "shm"}])
    template["spec"] = {}
    if len(cluster.gpu_pools) > 1:  # several GPU pools: pin the workers to the pool the test is for
        template["spec"]["nodeSelector"] = {AGENTPOOL_LABEL: job.pool_name}
    if cluster.health_checks.enabled:  # health-checks.yaml: start only on a node that passed them
        template["spec"] |= {"serviceAccountName": aks.service_account, "initContainers": [wait_container(aks, job.pool_name)]}
    template["spec"] |= {
        "containers": [container],
        "restartPolicy": "OnFailure",
        "terminationGracePeriodSeconds": 0,
        "volumes": [{"name": "shm", "emptyDir": {"medium": "Memory", "sizeLimit": SHM_SIZE}}],
    }
    return {"replicas": job.worker_replicas, "name": aks.worker_task, "template": template}


def volcano_job(cluster: ResolvedCluster, aks: ResolvedAks, job: AksPoolJob) -> dict[str, Any]:
    return {
        "apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
        "metadata": {"name": job.job_name, "namespace": aks.namespace},
        "spec": {
            "minAvailable": job.min_available,
            "maxRetry": MAX_RETRY,
            "schedulerName": "volcano",
            "plugins": {"ssh": [], "svc": []},  # ssh: keys for mpirun; svc: hostfile + DNS names
            "tasks": [launcher_task(cluster, aks, job), worker_task(cluster, aks, job)],
        },
    }


def rbac(cluster: ResolvedCluster, aks: ResolvedAks) -> list[dict[str, Any]]:
    return [
        {"apiVersion": "v1", "kind": "ServiceAccount",
         "metadata": {"name": aks.service_account, "namespace": aks.namespace}},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
         "metadata": {"name": aks.role_binding, "namespace": aks.namespace},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
         "subjects": [{"kind": "ServiceAccount", "name": aks.service_account, "namespace": aks.namespace}]},
    ]


def _test(cluster: ResolvedCluster, job: AksPoolJob) -> str:  # NCCL, or RCCL on an AMD pool
    return f"{job.pool.collective.label} {cluster.nccl_test.collective}_perf"


def pool_job_file(pool_name: str) -> str:
    return f"volcano-job-{pool_name}.yaml"


def job_files(aks: ResolvedAks) -> list[str]:
    """The job files :func:`render` writes: ``volcano-job.yaml`` with the test pool's Job (the first), then a file per
    other tested pool, so no file grows with the number of pools (a linted file is held to 1 MiB: docs/security.md)
    and adding a pool adds a file."""
    return [JOB_FILE, *(pool_job_file(job.pool_name) for job in aks.jobs[1:])]


def _job_comments(cluster: ResolvedCluster, aks: ResolvedAks, job: AksPoolJob, name: str) -> list[str]:
    lines = [f"{_test(cluster, job)} on {job.worker_replicas} x {job.sku} ({job.np} ranks), Volcano {cluster.versions.volcano}."]
    if len(aks.jobs) > 1:
        lines.append(f"One Volcano Job per GPU pool, each pinned to its pool: {JOB_FILE} tests pool {aks.jobs[0].pool_name}, "
                     f"{pool_job_file('<pool>')} each other pool.")
    return lines + [f"Submit after {RBAC_FILE}: kubectl apply -f {name}; logs: kubectl logs -n {aks.namespace} -f "
                    f"{job.job_name}-{aks.launcher_task}-0"]


def render(cluster: ResolvedCluster, aks: ResolvedAks) -> list[Artifact]:
    artifacts = [Artifact(path(name), yaml_file(cluster, [volcano_job(cluster, aks, job)], *_job_comments(cluster, aks, job, name)),
                          Kind.VOLCANO_JOB, "aks")
                 for job, name in zip(aks.jobs, job_files(aks))]
    roles = yaml_file(cluster, rbac(cluster, aks),
                      f"Lets the launcher's wait-for-workers init container list and watch pods in {aks.namespace}.")
    return [*artifacts, Artifact(path(RBAC_FILE), roles, Kind.K8S_MANIFEST, "aks")]
