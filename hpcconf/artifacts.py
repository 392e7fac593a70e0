"""What a target produces: a file path (relative to the cluster's output dir), its text and its kind.

Kinds are shared with the linter, which recognises hand-written files as the same kinds,
so one rule checks a generated file and a hand-written one alike.
"""

from __future__ import annotations

from dataclasses import dataclass


class Kind:
    SPEC = "spec"
    VOLCANO_JOB = "volcano-job"
    HOST_DEVICE_NETWORK = "hostdevicenetwork"
    NIC_CLUSTER_POLICY = "nicclusterpolicy"
    K8S_MANIFEST = "k8s-manifest"  # any other Kubernetes object (ServiceAccount, RoleBinding, ...)
    HELM_NETWORK_OPERATOR = "helm-values/network-operator"
    HELM_GPU_OPERATOR = "helm-values/gpu-operator"
    HELM_AMD_GPU_OPERATOR = "helm-values/amd-gpu-operator"  # ROCm/gpu-operator (AMD Instinct)
    HELM_NFD = "helm-values/node-feature-discovery"
    NCCL_TOPOLOGY = "nccl-topology"
    NCCL_GRAPH = "nccl-graph"
    NCCL_CONF = "nccl-conf"
    ENV_FILE = "env-file"  # KEY=VALUE / export KEY=VALUE
    DOCKERFILE = "dockerfile"
    AZHOP_CONFIG = "azhop-config"
    SHELL_SCRIPT = "shell-script"  # provisioning scripts, nccl-tests build script
    SBATCH_SCRIPT = "sbatch-script"
    TFVARS = "tfvars"
    NHC_CONF = "nhc-conf"  # LBNL/Azure node health check conf: <hostmask> || <check> <args>
    SLURM_CONF = "slurm-conf"  # slurm.conf lines (Key=Value) to include
    SKU_FILE = "sku-file"  # a user's SKU file shipped with a job that reads it on the nodes
    CCWS_PARAMETERS = "ccws-parameters"  # ARM parameters file of CycleCloud Workspace for Slurm's mainTemplate
    CYCLECLOUD_SLURM_PARAMETERS = "cyclecloud-slurm-parameters"  # a CycleCloud Slurm cluster's parameters (JSON)
    GRES_CONF = "gres-conf"  # Slurm gres.conf
    CGROUP_CONF = "cgroup-conf"  # Slurm cgroup.conf
    SLURM_TOPOLOGY = "slurm-topology"  # Slurm topology.conf (topology/tree SwitchName= or topology/block BlockName=)
    CYCLECLOUD_PROJECT = "cyclecloud-project"  # a CycleCloud project's project.ini (cluster-init)
    CYCLECLOUD_TEMPLATE = "cyclecloud-template"  # a CycleCloud cluster template ([cluster], [[nodearray]] sections)

    @classmethod
    def all(cls) -> list[str]:
        return sorted(v for k, v in vars(cls).items() if k.isupper() and isinstance(v, str))


@dataclass(frozen=True)
class Artifact:
    path: str  # POSIX path relative to the cluster's output directory, e.g. "aks/volcano-job.yaml"
    content: str
    kind: str
    target: str = ""  # the target module that produced it, e.g. "nccl", "aks"
