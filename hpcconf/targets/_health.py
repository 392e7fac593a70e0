"""Node health checks shared by the targets that set nodes up (Slurm, AzHOP) and the AKS DaemonSet.

``health/<pool>/nhc.conf`` is Azure's NHC conf for the pool's SKU (:mod:`hpcconf.knowledge.nhc`); the node
installer writes it with ``hpcconf-health-check`` (``templates/health/``), which runs Azure's
``run-health-checks.sh`` and drains a failing Slurm node. Paths are constants here so the installer, the
Slurm settings and the test job's pre-flight name the same files.
"""

from __future__ import annotations

from ..artifacts import Artifact, Kind
from ..knowledge.nhc import NhcPlan, load_nhc_data, nhc_plan, render_nhc_conf
from ..resolve import ResolvedCluster, ResolvedPool
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
    return cluster.spec.health_checks.enabled


def conf_path(pool: str) -> str:
    return f"health/{pool}/nhc.conf"


def plan(pool: ResolvedPool) -> NhcPlan:
    return nhc_plan(pool.sku)


def image(cluster: ResolvedCluster, pool: ResolvedPool) -> str:
    """The image the checks run in on an AKS node: the spec's, else Azure's for the pool's GPU vendor
    (run-health-checks.sh picks aznhc-rocm on AMD: check_gpu_count ... rocm and check_rccl_allreduce call
    rocm-smi and rccl-tests, which only that image has). Azure tags them :latest only."""
    return cluster.spec.health_checks.image or default_image(pool)


def default_image(pool: ResolvedPool) -> str:
    return plan(pool).image.split(":")[0] + ":latest"


def node_conf_text(cluster: ResolvedCluster, pool: ResolvedPool) -> str:
    """Azure's whole conf for the size (health/<pool>/nhc.conf; what Slurm and AzHOP nodes run)."""
    return render_nhc_conf(plan(pool), [generated_by(cluster.spec_file), f"Pool '{pool.name}' ({pool.sku.name})."])


def conf_text(cluster: ResolvedCluster, pool: ResolvedPool) -> str:
    """The conf the AKS DaemonSet's pod runs: the node conf without checks of interfaces AKS nodes lack."""
    return render_nhc_conf(plan(pool).in_kubernetes_pod(), [
        generated_by(cluster.spec_file), f"Pool '{pool.name}' ({pool.sku.name}), in the AKS health-check pod."])


def fast_conf_text(cluster: ResolvedCluster, pool: ResolvedPool) -> str:
    return render_nhc_conf(plan(pool).fast(), [
        generated_by(cluster.spec_file), f"Pool '{pool.name}' ({pool.sku.name}): the fast checks Slurm's "
        f"HealthCheckProgram runs (hpcconf-health-check slurm); {NODE_CONF} has every check."])


def conf_artifact(cluster: ResolvedCluster, pool: ResolvedPool) -> Artifact:
    return Artifact(conf_path(pool.name), node_conf_text(cluster, pool), Kind.NHC_CONF, "health")


def runner_text(cluster: ResolvedCluster) -> str:
    return render_template("health/hpcconf-health-check.sh.j2", header=generated_by(cluster.spec_file), conf=NODE_CONF,
                           fast_conf=NODE_FAST_CONF,
                           status=STATUS, log=LOG, nhc_dir=NHC_DIR, drain_reason=DRAIN_REASON)


def installer_text(cluster: ResolvedCluster, pool: ResolvedPool, usage: list[str]) -> str:
    data = load_nhc_data()
    return render_template(
        "health/install-health-checks.sh.j2", header=generated_by(cluster.spec_file), pool=pool.name, sku=pool.sku.name,
        nhc_repo=NHC_REPO, commit=data.commit, conf=NODE_CONF, conf_dir=NODE_CONF.rsplit("/", 1)[0], runner=RUNNER,
        runner_dir=RUNNER.rsplit("/", 1)[0], status_dir=STATUS.rsplit("/", 1)[0], slurm_runner=SLURM_RUNNER, usage=usage, nhc_dir=NHC_DIR,
        end=HEREDOC_END, conf_text=node_conf_text(cluster, pool), runner_text=runner_text(cluster),
        fast_conf=NODE_FAST_CONF, fast_conf_text=fast_conf_text(cluster, pool),
        image=default_image(pool), gpu_runtime=pool.accelerator.gpu_runtime_class, azure=pool.sku.provider == "azure",
        provider=pool.sku.provider)
