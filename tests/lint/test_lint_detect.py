"""Kind recognition by name and content (the contract of `hpcconf lint PATHS`)."""

from __future__ import annotations

import pytest

from hpcconf.artifacts import Kind
from hpcconf.diagnostics import HpcconfError
from hpcconf.lint.detect import detect_documents


def kinds(name: str, text: str, **kw) -> list[str]:
    return [d.kind for d in detect_documents(name, text, **kw)]


@pytest.mark.parametrize("name, text, expected", [
    ("job.yaml", "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: j}\n", [Kind.VOLCANO_JOB]),
    ("hdn.yaml", "apiVersion: mellanox.com/v1alpha1\nkind: HostDeviceNetwork\nmetadata: {name: h}\n",
     [Kind.HOST_DEVICE_NETWORK]),
    ("ncp.yaml", "apiVersion: mellanox.com/v1alpha1\nkind: NicClusterPolicy\nmetadata: {name: n}\n",
     [Kind.NIC_CLUSTER_POLICY]),
    ("sa.yaml", "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: s}\n", [Kind.K8S_MANIFEST]),
    ("batch-job.yaml", "apiVersion: batch/v1\nkind: Job\nmetadata: {name: s}\n", [Kind.K8S_MANIFEST]),
    ("cluster.yaml", "apiVersion: hpcconf/v1\nkind: Cluster\n", [Kind.SPEC]),
    ("config.yml", "location: westeurope\nresource_group: rg\nqueues: []\n", [Kind.AZHOP_CONFIG]),
    ("gpu-operator-values.yaml", "driver:\n  enabled: true\n", [Kind.HELM_GPU_OPERATOR]),
    ("network-operator.values.yaml", "nfd:\n  enabled: false\n", [Kind.HELM_NETWORK_OPERATOR]),
    ("nfd-values.yaml", "worker:\n  config: {}\n", [Kind.HELM_NFD]),
    ("topo.xml", '<system version="1">\n</system>\n', [Kind.NCCL_TOPOLOGY]),
    ("anything", '<?xml version="1.0"?>\n<system version="1">\n</system>\n', [Kind.NCCL_TOPOLOGY]),
    ("graph.xml", '<!-- c -->\n<graphs version="1">\n</graphs>\n', [Kind.NCCL_GRAPH]),
    ("nccl.conf", "NCCL_DEBUG=WARN\n", [Kind.NCCL_CONF]),
    (".nccl.conf", "NCCL_DEBUG = WARN\n", [Kind.NCCL_CONF]),
    ("ndv4.nccl.conf", "NCCL_DEBUG=WARN\n", [Kind.NCCL_CONF]),
    ("ndv4.conf", "NCCL_TOPO_FILE=/opt/x.xml\n", [Kind.NCCL_CONF]),
    ("job.env", "NCCL_DEBUG=WARN\n", [Kind.ENV_FILE]),
    ("settings", "# comment\nexport NCCL_DEBUG=WARN\nUCX_TLS=rc\n", [Kind.ENV_FILE]),
    ("run.sh", "#!/bin/bash\nexport NCCL_DEBUG=INFO\n", [Kind.SHELL_SCRIPT]),
    ("job", "#!/bin/bash\n#SBATCH -N 2\nsrun x\n", [Kind.SBATCH_SCRIPT]),
    ("Dockerfile", "FROM ubuntu:22.04\n", [Kind.DOCKERFILE]),
    ("Dockerfile.nccl", "FROM ubuntu:22.04\n", [Kind.DOCKERFILE]),
    ("nccl-tests.dockerfile", "FROM ubuntu:22.04\n", [Kind.DOCKERFILE]),
    ("notes.txt", "hello\n", []),
    ("values.yaml", "driver: {}\n", []),
])
def test_recognised_kinds(name, text, expected):
    assert kinds(name, text) == expected


def test_multi_document_yaml_gives_one_document_each():
    text = ("apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: a}\n---\n"
            "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: j}\n---\n")
    docs = detect_documents("all.yaml", text)
    assert [d.kind for d in docs] == [Kind.K8S_MANIFEST, Kind.VOLCANO_JOB]
    assert docs[1].yaml.position(("kind",)).line == 6  # positions are per file, not per document


def test_chart_option_names_unnamed_values_files():
    assert kinds("values.yaml", "driver: {}\n", charts={"gpu-operator": "26.7.0"}) == [Kind.HELM_GPU_OPERATOR]
    assert kinds("values.yaml", "driver: {}\n", charts={"gpu-operator": "1", "network-operator": "2"}) == []


def test_forced_kind_wins():
    assert kinds("whatever.txt", "NCCL_ALGO = Ring\n", forced_kind=Kind.NCCL_CONF) == [Kind.NCCL_CONF]
    assert kinds("values.yaml", "a: 1\n", forced_kind=Kind.HELM_NFD) == [Kind.HELM_NFD]


def test_bad_yaml_raises_positioned_syntax_error():
    with pytest.raises(HpcconfError) as error:
        detect_documents("job.yaml", "apiVersion: v1\nkind: [\n")
    finding = error.value.diagnostics[0]
    assert finding.code == "HPC001" and finding.line >= 2


def test_azhop_template_is_recognised(shared_dir):
    path = shared_dir / "upstream" / "azhop" / "az-hop" / "config.tpl.yml"
    assert kinds(path.name, path.read_text()) == [Kind.AZHOP_CONFIG]
    example = shared_dir / "upstream" / "azhop" / "az-hop" / "examples" / "minimum_public_ip.yml"
    assert kinds(example.name, example.read_text()) == [Kind.AZHOP_CONFIG]


def test_azure_topology_and_graph_files_are_recognised(shared_dir):
    topology = shared_dir / "upstream" / "nccl" / "azhpc-images" / "topology"
    for path in sorted(topology.glob("*-topo.xml")):
        assert kinds(path.name, path.read_text()) == [Kind.NCCL_TOPOLOGY], path.name
    assert kinds("ncv4-graph.xml", (topology / "ncv4-graph.xml").read_text()) == [Kind.NCCL_GRAPH]
