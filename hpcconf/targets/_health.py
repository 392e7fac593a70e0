"""Node health checks shared by the targets that set nodes up (Slurm, AzHOP) and the AKS DaemonSet.

``health/<pool>/nhc.conf`` is Azure's NHC conf for the pool's SKU (:mod:`hpcconf.knowledge.nhc`); the node
installer writes it with ``hpcconf-health-check`` (``templates/health/``), which runs Azure's
``run-health-checks.sh`` and drains a failing Slurm node. Paths are constants here so the installer, the
Slurm settings and the test job's pre-flight name the same files.
"""

from __future__ import annotations

from ..artifacts import Artifact, Kind
from ..resolve import ResolvedCluster, ResolvedPool
from ..resolve.health import PoolHealth
from ..templating import generated_by, render_template

NHC_REPO = "https://github.com/Azure/azurehpc-health-checks"
NHC_DIR = "/opt/azurehpc-health-checks"
NODE_CONF = "/etc/hpcconf/nhc.conf"
NODE_FAST_CONF = "/etc/hpcconf/nhc-fast.conf"  # the checks Slurm's HealthCheckProgram runs (no bandwidth test)
RUNNER = "/usr/local/sbin/hpcconf-health-check"
SLURM_RUNNER = "/usr/local/sbin/hpcconf-health-check-slurm"
STATUS = "/var/lib/hpcconf/nhc.status"
LOG = "/var/log/hpcconf-nhc.log"
DRAIN_REASON = "hpcconf-nhc"
HEREDOC_END = "HPCCONF_NHC_EOF"


def enabled(cluster: ResolvedCluster) -> bool:
    return cluster.health_checks.enabled


def conf_path(pool: str) -> str:
    return f"health/{pool}/nhc.conf"


def health(pool: ResolvedPool) -> PoolHealth:
    """The pool's resolved checks (hpcconf.resolve.health); only GPU pools of a spec that enables them have one."""
    if pool.health is None:
        raise RuntimeError(f"pool {pool.name}: no resolved health checks (a GPU pool with health_checks enabled has them)")
    return pool.health


def node_conf_text(cluster: ResolvedCluster, pool: ResolvedPool) -> str:
    """Azure's whole conf for the size (health/<pool>/nhc.conf; what Slurm and AzHOP nodes run)."""
    return health(pool).plan.render([generated_by(cluster.spec_file), f"Pool '{pool.name}' ({pool.sku.name})."])


def conf_text(cluster: ResolvedCluster, pool: ResolvedPool) -> str:
    """The conf the AKS DaemonSet's pod runs: the node conf without checks of interfaces AKS nodes lack."""
    return health(pool).plan.in_kubernetes_pod().render([
        generated_by(cluster.spec_file), f"Pool '{pool.name}' ({pool.sku.name}), in the AKS health-check pod."])


def fast_conf_text(cluster: ResolvedCluster, pool: ResolvedPool) -> str:
    return health(pool).plan.fast().render([
        generated_by(cluster.spec_file), f"Pool '{pool.name}' ({pool.sku.name}): the fast checks Slurm's "
        f"HealthCheckProgram runs (hpcconf-health-check slurm); {NODE_CONF} has every check."])


def conf_artifact(cluster: ResolvedCluster, pool: ResolvedPool) -> Artifact:
    return Artifact(conf_path(pool.name), node_conf_text(cluster, pool), Kind.NHC_CONF, "health")


def runner_text(cluster: ResolvedCluster) -> str:
    return render_template("health/hpcconf-health-check.sh.j2", header=generated_by(cluster.spec_file), conf=NODE_CONF,
                           fast_conf=NODE_FAST_CONF,
                           status=STATUS, log=LOG, nhc_dir=NHC_DIR, drain_reason=DRAIN_REASON)


def installer_text(cluster: ResolvedCluster, pool: ResolvedPool, usage: list[str]) -> str:
    return render_template(
        "health/install-health-checks.sh.j2", header=generated_by(cluster.spec_file), pool=pool.name, sku=pool.sku.name,
        nhc_repo=NHC_REPO, commit=cluster.health_checks.commit, conf=NODE_CONF, conf_dir=NODE_CONF.rsplit("/", 1)[0], runner=RUNNER,
        runner_dir=RUNNER.rsplit("/", 1)[0], status_dir=STATUS.rsplit("/", 1)[0], slurm_runner=SLURM_RUNNER, usage=usage, nhc_dir=NHC_DIR,
        end=HEREDOC_END, conf_text=node_conf_text(cluster, pool), runner_text=runner_text(cluster),
        fast_conf=NODE_FAST_CONF, fast_conf_text=fast_conf_text(cluster, pool),
        image=health(pool).pod_image, run_image=health(pool).default_image, profile=pool.accelerator, azure=health(pool).node_image_has_gpu_runtime,
        provider=pool.sku.provider)
