"""Linting a repository root behaves like linting each deployment in it (our own small files)."""

from __future__ import annotations

from pathlib import Path

from hpcconf.lint.context import LintContext
from hpcconf.lint.engine import lint_paths

JOB = """\
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: nccl}
spec:
  minAvailable: 3
  plugins: {ssh: [], svc: []}
  tasks:
    - name: mpimaster
      replicas: 1
      policies: [{event: TaskCompleted, action: CompleteJob}]
      template:
        spec:
          containers:
            - name: m
              image: example.io/nccl:1
              command: [sh, -c, "mpirun -np 16 -npernode 8 -hostfile /etc/volcano/mpiworker.host all_reduce_perf"]
    - name: mpiworker
      replicas: 2
      template:
        spec:
          containers:
            - name: w
              image: example.io/nccl:1
              securityContext: {capabilities: {add: [IPC_LOCK]}}
              resources: {limits: {nvidia.com/gpu: 8, nvidia.com/RESOURCE: 8}}
              volumeMounts: [{mountPath: /dev/shm, name: shm}]
          volumes: [{name: shm, emptyDir: {medium: Memory}}]
"""
NCP = """\
apiVersion: mellanox.com/v1alpha1
kind: NicClusterPolicy
metadata: {name: nic-cluster-policy}
spec:
  sriovDevicePlugin:
    image: sriov-network-device-plugin
    repository: ghcr.io/k8snetworkplumbingwg
    version: v3.7.0
    config: |
      {"resourceList": [{"resourceName": "RESOURCE", "selectors": {"vendors": ["15b3"], "devices": ["101c"]}}]}
"""


def _tree(root: Path) -> None:
    def write(rel: str, text: str) -> None:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")

    # Two deployments side by side, each consistent in itself, with different resource names.
    write("clusters/east/job.yaml", JOB.replace("RESOURCE", "mlnxnics"))
    write("clusters/east/policy.yaml", NCP.replace("RESOURCE", "mlnxnics"))
    write("clusters/west/job.yaml", JOB.replace("RESOURCE", "infiniband"))
    write("clusters/west/policy.yaml", NCP.replace("RESOURCE", "infiniband"))
    # A kustomization: its base and overlay directories are one deployment.
    write("kustomize/kustomization.yaml", "resources: [base/policy.yaml, jobs/job.yaml]\n")
    write("kustomize/base/policy.yaml", NCP.replace("RESOURCE", "hca"))
    write("kustomize/jobs/job.yaml", JOB.replace("RESOURCE", "hca"))
    # A Helm chart: templates are not YAML until rendered; values.yaml alone is no kind we check.
    write("charts/nccl/Chart.yaml", "apiVersion: v2\nname: nccl\nversion: 0.1.0\n")
    write("charts/nccl/values.yaml", "image: example.io/nccl:1\nresource: mlnxnics\n")
    write("charts/nccl/templates/job.yaml", JOB.replace("RESOURCE", "{{ .Values.resource }}"))
    # Docs and templates: prose quoting settings and suppressions, a Jinja Dockerfile.
    write("docs/README.md", "Set `NCCL_ALGO=NVLSTree` # hpcconf: ignore[NCCL999]\n```\nNCCL_IB_HCA==^mlx5\n```\n")
    write("docker/Dockerfile.j2", "FROM {{ base }}\nRUN apt-get update\n")
    write("docker/dockerfile.py", "print('not a Dockerfile')\n")
    write("misc/other.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {a: b}\n")


def test_repository_root_gives_only_per_deployment_findings(tmp_path):
    _tree(tmp_path)
    result = lint_paths([str(tmp_path)], LintContext())
    assert [(Path(f.file).relative_to(tmp_path).as_posix(), f.code) for f in result.findings] == []


def test_a_real_mismatch_inside_one_deployment_is_still_found(tmp_path):
    _tree(tmp_path)
    (tmp_path / "clusters/west/policy.yaml").write_text(NCP.replace("RESOURCE", "mlnxnics"), encoding="utf-8")
    result = lint_paths([str(tmp_path)], LintContext())
    assert [(Path(f.file).relative_to(tmp_path).as_posix(), f.code) for f in result.findings] == \
        [("clusters/west/job.yaml", "XA001")]
