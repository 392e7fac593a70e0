"""Kubernetes env values as Kubernetes reads them: volumes supply files, `$VAR` stays literal."""

from __future__ import annotations

from pathlib import Path

import pytest

from hpcconf.lint.context import LintContext
from hpcconf.lint.engine import lint_paths, lint_text
from hpcconf.parsers.k8s import Mount, mount_holding, shell_references

JOB = """\
apiVersion: v1
kind: Pod
metadata:
  name: nccl
spec:
  volumes:
    - name: topo
      hostPath: {{path: /etc/crusoe/nccl_topo, type: Directory}}
  containers:
    - name: test
      image: example.azurecr.io/nccl-tests:23.03
      env:
        - name: NCCL_TOPO_FILE
          value: {value}
      volumeMounts:
        - {{name: topo, mountPath: /opt/nccl_topo}}
"""


@pytest.mark.parametrize("value, expected", [("/opt/nccl_topo/h200.xml", []), ("/workspace/h200.xml", ["XA003"])])
def test_topology_file_on_a_host_path_volume_is_present(tmp_path: Path, monkeypatch, value, expected):
    (tmp_path / "Dockerfile").write_text("FROM nvcr.io/nvidia/pytorch:24.07-py3\nCOPY h200.xml /opt/h200.xml\n")
    (tmp_path / "pod.yaml").write_text(JOB.format(value=value))
    monkeypatch.chdir(tmp_path)
    found = [f.code for f in lint_paths(["."], LintContext()).findings if f.code.startswith("XA")]
    assert found == expected


def test_mount_holding_picks_the_deepest_mount():
    mounts = [Mount("/opt", "emptyDir"), Mount("/opt/nccl_topo", "hostPath")]
    assert mount_holding("/opt/nccl_topo/a.xml", mounts) == mounts[1]
    assert mount_holding("/opt/nccl_topology.xml", mounts) == mounts[0]
    assert mount_holding("/workspace/a.xml", mounts) is None


def test_shell_references_exclude_kubernetes_syntax():
    assert shell_references("${A}/lib:$B:$(C):$$D") == ["A", "B"]
    assert shell_references("$(NCCL_HOME)/topo.xml") == []


def test_dollar_var_in_an_env_value_is_literal():
    text = JOB.format(value="$TOPO_DIR/h200.xml")
    assert [(f.line, f.code) for f in lint_text(text, "pod.yaml", LintContext()).findings] == [(14, "K8S005")]
    assert lint_text(text.replace("image: example", "image: ${REGISTRY}/example"), "pod.yaml",
                     LintContext()).findings == []  # an envsubst template: rendered before apply


MPIJOB = """\
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata:
  name: nccl-tests
spec:
  slotsPerWorker: 8
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template:
        spec:
          containers:
            - name: launcher
              image: example.azurecr.io/nccl-tests:23.03
    Worker:
      replicas: 2
      template:
        spec:
          containers:
            - name: worker
              image: example.azurecr.io/nccl-tests:23.03
              resources:
                requests:
                  nvidia.com/gpu: 8
"""


def test_mpijob_pod_templates_go_through_the_pod_model():
    findings = lint_text(MPIJOB, "mpijob.yaml", LintContext()).findings
    assert (24, "K8S001") in [(f.line, f.code) for f in findings]  # request without limit, in the Worker


NETWORKS = """\
apiVersion: mellanox.com/v1alpha1
kind: NicClusterPolicy
metadata:
  name: nic-cluster-policy
spec:
  sriovDevicePlugin:
    image: sriov-network-device-plugin
    config: '{"resourceList": [{"resourcePrefix": "nvidia.com", "resourceName": "hostdev"}]}'
---
apiVersion: sriovnetwork.openshift.io/v1
kind: SriovNetworkNodePolicy
metadata: {name: ib-sriov, namespace: nvidia-network-operator}
spec: {resourceName: mlnxnics, numVfs: 8, nicSelector: {vendor: "15b3"}}
---
apiVersion: sriovnetwork.openshift.io/v1
kind: SriovIBNetwork
metadata: {name: sriov-ib, namespace: nvidia-network-operator}
spec: {resourceName: {resource}, networkNamespace: {nad_namespace}}
---
apiVersion: mellanox.com/v1alpha1
kind: MacvlanNetwork
metadata: {name: macvlan}
spec: {master: ens1f0, mode: bridge}
---
apiVersion: v1
kind: Pod
metadata:
  name: test
  namespace: jobs
  annotations: {k8s.v1.cni.cncf.io/networks: "sriov-ib,macvlan"}
spec:
  containers:
    - name: test
      image: example.azurecr.io/nccl-tests:23.03
      resources: {limits: {nvidia.com/mlnxnics: 1}}
"""


@pytest.mark.parametrize("resource, nad_namespace, expected", [
    ("mlnxnics", "jobs", [(30, "XA005")]),  # the MacvlanNetwork's NAD defaults to 'default'
    ("mlnxnic", "default", [(18, "XA001"), (30, "XA002"), (30, "XA005")]),
])
def test_network_crs_of_both_operators(tmp_path: Path, monkeypatch, resource, nad_namespace, expected):
    (tmp_path / "net.yaml").write_text(NETWORKS.replace("{resource}", resource)
                                       .replace("{nad_namespace}", nad_namespace))
    monkeypatch.chdir(tmp_path)
    found = [(f.line, f.code) for f in lint_paths(["."], LintContext()).findings if f.code.startswith("XA")]
    assert sorted(found) == sorted(expected)
