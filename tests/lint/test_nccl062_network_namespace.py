"""NCCL062 judges only processes that see the node's interfaces: Slurm jobs and pods with hostNetwork.

A HyperPod EKS pod without hostNetwork has lo, eth0 and its EFA devices, never the host's
veth_def_agent (fresh-file review, issue 20: a false warning on aws-samples' FSDP HyperPodPyTorchJob)."""

from __future__ import annotations

import pytest

from hpcconf.lint.context import LintContext
from hpcconf.lint.engine import lint_paths

JOB = """apiVersion: sagemaker.amazonaws.com/v1
kind: HyperPodPyTorchJob
metadata:
  name: fsdp
spec:
  nprocPerNode: "8"
  replicaSpecs:
    - name: pods
      replicas: 2
      template:
        spec:
{host_network}          containers:
            - name: train
              image: 123456789012.dkr.ecr.us-west-2.amazonaws.com/fsdp:pytorch2.5.1
              env:
                - name: NCCL_SOCKET_IFNAME
                  value: "^lo"
"""


@pytest.mark.parametrize("host_network, expected", [("", 0), ("          hostNetwork: true\n", 1)])
def test_only_pods_in_the_node_namespace_are_judged(tmp_path, host_network, expected):
    path = tmp_path / "job.yaml"
    path.write_text(JOB.format(host_network=host_network))
    found = [f for f in lint_paths([str(path)], LintContext()).findings if f.code == "NCCL062"]
    assert len(found) == expected
