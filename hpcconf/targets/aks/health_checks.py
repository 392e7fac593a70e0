"""The pre-flight node health checks on AKS: per GPU pool, a DaemonSet that runs Azure's checks
(azurehpc-health-checks' image and entrypoint) with the pool's generated conf, and taints a failing node.

Each pod runs ``aznhc-entrypoint.sh`` once with the inputs Azure's ``run-health-checks.sh`` gives the container
(:mod:`hpcconf.knowledge.aznhc`: the conf at ``/azure-nhc/conf/aznhc.conf``, the node's kernel log at
``/azure-nhc/syslog``, an 8 GiB ``/dev/shm``, host network, privileged),
becomes Ready only on a pass, and on a failure adds the ``hpcconf.io/nhc-failed=true:NoSchedule`` taint to its
node through the API (the image has curl, not kubectl), so no new pod lands there; it then sleeps, keeping
the result visible (``kubectl get pods``). The NCCL test's workers wait for the pod on their node to be Ready.
The pod requests no GPU (it would hold the GPUs the test needs); on NVIDIA pools it names the GPU operator's
``nvidia`` RuntimeClass and sets NVIDIA_VISIBLE_DEVICES=all, as the operator does for its own DaemonSets: from
gpu-operator 25.10 CDI is on and runc stays containerd's default runtime, so without the RuntimeClass the
container would see no driver and every node would fail check_gpu_count (lint K8S006).

RBAC, least privilege: the checks' ServiceAccount may get and patch nodes (tainting its own node; Kubernetes
RBAC cannot narrow that to "its own"), nothing else; no token is mounted in the workers beyond the job's.
"""

from __future__ import annotations

from typing import Any, Sequence

from ...artifacts import Artifact, Kind
from ...resolve import ResolvedCluster, ResolvedPool
from ...resolve.aks import ResolvedAks
from ...resolve.health import AznhcContainer
from .. import _health
from ._yaml import block, path, yaml_file

FILE = "health-checks.yaml"
APP = "hpcconf-nhc"
APP_LABEL = "app.kubernetes.io/name"
POOL_LABEL = "hpcconf.io/pool"
TAINT_KEY = "hpcconf.io/nhc-failed"
SERVICE_ACCOUNT = "hpcconf-nhc"
AGENTPOOL_LABEL = "kubernetes.azure.com/agentpool"
PASSED = "/tmp/nhc-passed"
HOST_LOG_MOUNT = "/host/var/log"  # the node's /var/log, read-only; the script links its kernel log to the container's syslog
WAIT_TIMEOUT_S = 1800  # the checks take minutes (Azure: up to 5, 500 s per check at most)


def selector(pool: str) -> str:
    return f"{APP_LABEL}={APP},{POOL_LABEL}={pool}"


def taint_script(container: AznhcContainer) -> str:
    taint = f'{{"key":"{TAINT_KEY}","value":"true","effect":"NoSchedule"}}'
    return (
        "set -uo pipefail\n"
        "# The node's kernel log where the XID and link-flap checks read it (run-health-checks.sh: syslog, else messages).\n"
        f"for log in {' '.join(HOST_LOG_MOUNT + p.removeprefix(container.host_log_dir) for p in container.kernel_logs)}; do\n"
        f"  if [ -f \"$log\" ]; then ln -sf \"$log\" {container.syslog}; break; fi\n"
        "done\n"
        "rc=0\n"
        f"{container.entrypoint} || rc=$?\n"
        "if [ \"$rc\" -eq 0 ]; then\n"
        f"  touch {PASSED}; echo \"$NODE_NAME: health checks passed\"\n"
        "else\n"
        f"  echo \"$NODE_NAME: health checks FAILED (exit $rc): tainting it {TAINT_KEY}=true:NoSchedule\" >&2\n"
        "  sa=/var/run/secrets/kubernetes.io/serviceaccount\n"
        "  api=\"https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT/api/v1/nodes/$NODE_NAME\"\n"
        "  call() { curl -sS --fail --cacert \"$sa/ca.crt\" -H \"Authorization: Bearer $(cat \"$sa/token\")\" \"$@\" \"$api\"; }\n"
        f"  taint='{taint}'\n"
        "  node=$(call) || { echo \"cannot read node $NODE_NAME\" >&2; sleep infinity; }\n"
        "  # Append to the node's taints (a JSON patch on /spec/taints itself would replace the others).\n"
        f"  if grep -q '\"{TAINT_KEY}\"' <<<\"$node\"; then op=none\n"
        "  elif grep -q '\"taints\"' <<<\"$node\"; then op=\"[{\\\"op\\\":\\\"add\\\",\\\"path\\\":\\\"/spec/taints/-\\\",\\\"value\\\":$taint}]\"\n"
        "  else op=\"[{\\\"op\\\":\\\"add\\\",\\\"path\\\":\\\"/spec/taints\\\",\\\"value\\\":[$taint]}]\"; fi\n"
        "  [ \"$op\" = none ] || call -X PATCH -H 'Content-Type: application/json-patch+json' -d \"$op\" >/dev/null\n"
        "fi\n"
        "sleep infinity\n"
    )


def config_map(cluster: ResolvedCluster, aks: ResolvedAks, pool: ResolvedPool) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": f"{APP}-{pool.name}", "namespace": aks.namespace},
            "data": {"aznhc.conf": block(_health.conf_text(cluster, pool))}}


def daemon_set(cluster: ResolvedCluster, aks: ResolvedAks, pool: ResolvedPool) -> dict[str, Any]:
    labels = {APP_LABEL: APP, POOL_LABEL: pool.name}
    aznhc = cluster.health_checks.container
    container = {
        "name": "nhc",
        "image": _health.health(pool).pod_image,
        "command": ["/bin/bash", "-c", block(taint_script(aznhc))],
        "env": [{"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}]
        # NVIDIA's container runtime exposes the GPUs it names; a privileged pod on an AMD node sees
        # /dev/kfd and /dev/dri as they are.
        + ([{"name": pool.accelerator.visible_devices_env, "value": "all"}] if pool.accelerator.visible_devices_env else []),
        # The checks read GPU, NVLink and IB state and run ib_write_bw and NCCL on the host's devices.
        "securityContext": {"privileged": True},
        "readinessProbe": {"exec": {"command": ["test", "-f", PASSED]}, "periodSeconds": 10},
        "resources": {"requests": {"cpu": "1", "memory": "1Gi"}},
        "volumeMounts": [{"name": "conf", "mountPath": aznhc.conf_dir, "readOnly": True},
                         {"name": "host-log", "mountPath": HOST_LOG_MOUNT, "readOnly": True},
                         {"name": "shm", "mountPath": "/dev/shm"}],
    }
    return {
        "apiVersion": "apps/v1", "kind": "DaemonSet",
        "metadata": {"name": f"{APP}-{pool.name}", "namespace": aks.namespace, "labels": labels},
        "spec": {
            "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels}, "spec": {
                "serviceAccountName": SERVICE_ACCOUNT,
                "nodeSelector": {AGENTPOOL_LABEL: pool.name},
                "hostNetwork": True,  # as run-health-checks.sh runs the image (--net=host)
                "tolerations": [{"key": TAINT_KEY, "operator": "Exists", "effect": "NoSchedule"}],
                **({"runtimeClassName": aks.gpu_runtime_class_name} if pool.accelerator.gpu_runtime_class else {}),
                "containers": [container],
                "volumes": [{"name": "conf", "configMap": {"name": f"{APP}-{pool.name}"}},
                            {"name": "host-log", "hostPath": {"path": aznhc.host_log_dir, "type": "Directory"}},
                            # run-health-checks.sh: --shm-size=8g (the container default is 64 MiB)
                            {"name": "shm", "emptyDir": {"medium": "Memory", "sizeLimit": aznhc.shm_size}}],
            }},
        },
    }


def rbac(aks: ResolvedAks) -> list[dict[str, Any]]:
    return [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": SERVICE_ACCOUNT, "namespace": aks.namespace}},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": SERVICE_ACCOUNT},
         "rules": [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "patch"]}]},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": SERVICE_ACCOUNT},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": SERVICE_ACCOUNT},
         "subjects": [{"kind": "ServiceAccount", "name": SERVICE_ACCOUNT, "namespace": aks.namespace}]},
    ]


def wait_container(aks: ResolvedAks, pool_name: str) -> dict[str, Any]:
    """The worker's init container: the health-check pod of ``pool_name`` on its own node Ready (passed); a failed node's pod
    never is, so the worker waits, then fails and retries (restartPolicy OnFailure) until someone acts.
    ``kubectl wait`` takes a field selector since kubernetes/kubernetes#71746 (2018); ``$(NODE_NAME)`` is
    expanded by the kubelet from the container's env."""
    return {"name": "wait-for-health-checks", "image": aks.kubectl_image,
            "command": ["kubectl", "wait", "pod", "-n", aks.namespace, "-l", selector(pool_name),
                        "--field-selector", "spec.nodeName=$(NODE_NAME)", "--for=condition=Ready", f"--timeout={WAIT_TIMEOUT_S}s"],
            "env": [{"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}]}


def _image_note(pools: Sequence[ResolvedPool]) -> list[str]:
    """Azure publishes its check images by ``latest`` only (knowledge.aznhc): say how to pin one (lint K8S008)."""
    floating = sorted({image for pool in pools if (image := _health.health(pool).pod_image).endswith(":latest")})
    if not floating:
        return []
    return [f"{', '.join(floating)}: Azure publishes no versioned tag; pin a digest with health_checks.image "
            "(image@sha256:...) so every node runs the same checks."]


def pool_file(pool_name: str) -> str:
    return f"health-checks-{pool_name}.yaml"


def files(cluster: ResolvedCluster) -> list[str]:
    """The files :func:`render` writes, in the order to apply them: ``health-checks.yaml`` with the RBAC and the
    first GPU pool's checks, then a file per other GPU pool, so no file grows with the number of pools (every file
    hpcconf writes is linted, and a linted file is held to 1 MiB: docs/security.md) and adding a pool adds a file."""
    if not _health.enabled(cluster) or not cluster.gpu_pools:
        return []
    return [FILE, *(pool_file(pool.name) for pool in cluster.gpu_pools[1:])]


def _summary() -> str:
    return ("Azure HPC node health checks on every GPU node before the NCCL test; a failing node is tainted "
            f"{TAINT_KEY}=true:NoSchedule (remove with: kubectl taint node <node> {TAINT_KEY}-).")


def _apply_line(aks: ResolvedAks, name: str, after: str = "") -> str:
    return f"Apply {after}before the job: kubectl apply -f {name}; results: kubectl get pods -n {aks.namespace} -l {APP_LABEL}={APP}"


def _pool_docs(cluster: ResolvedCluster, aks: ResolvedAks, pool: ResolvedPool) -> list[dict[str, Any]]:
    return [config_map(cluster, aks, pool), daemon_set(cluster, aks, pool)]


def render(cluster: ResolvedCluster, aks: ResolvedAks) -> list[Artifact]:
    names = files(cluster)
    if not names:
        return []
    first, *others = cluster.gpu_pools
    pool_note = [f"Pool {first.name}'s checks; each other GPU pool's are in {pool_file('<pool>')}."] if others else []
    text = yaml_file(cluster, rbac(aks) + _pool_docs(cluster, aks, first), _summary(), *pool_note,
                     _apply_line(aks, FILE), *_image_note((first,)))
    artifacts = [Artifact(path(FILE), text, Kind.K8S_MANIFEST, "aks")]
    for pool, name in zip(others, names[1:]):
        text = yaml_file(cluster, _pool_docs(cluster, aks, pool), f"Pool {pool.name}: " + _summary(),
                         _apply_line(aks, name, f"after {FILE} (the checks' ServiceAccount) and "), *_image_note((pool,)))
        artifacts.append(Artifact(path(name), text, Kind.K8S_MANIFEST, "aks"))
    return artifacts
