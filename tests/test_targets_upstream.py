"""Defects found running hpcconf's output against today's upstream (issue "Artifacts that work on
today's upstream"): each test failed before its fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from hpcconf.parsers.nccl_conf import parse_nccl_conf
from hpcconf.pipeline import compile_spec

HEAD = "apiVersion: hpcconf/v1\nkind: Cluster\nmetadata: {name: demo, location: eastus}\n"


def _build(tmp_path: Path, body: str) -> dict[str, str]:
    spec = tmp_path / "s.yaml"
    spec.write_text(HEAD + body, encoding="utf-8")
    return {a.path: a.content for a in compile_spec(spec).artifacts}


def _conf(text: str) -> dict[str, str]:
    return {e.key: e.value for e in parse_nccl_conf(text).entries}


@pytest.mark.parametrize("first, second", [("Standard_ND96asr_v4", "Standard_ND96amsr_A100_v4"),
                                           ("Standard_ND96isr_H100_v5", "Standard_ND96isr_H200_v5")])
def test_two_skus_of_one_topology_family_build(tmp_path, first, second):
    """Both used to write nccl/<family>-topo.xml with different content: exit 70."""
    artifacts = _build(tmp_path, f"platforms: [slurm]\npools:\n  - {{name: a, sku: {first}, count: 2}}\n"
                                 f"  - {{name: b, sku: {second}, count: 2}}\n")
    topo_a = _conf(artifacts["nccl/a/nccl.conf"])["NCCL_TOPO_FILE"]
    topo_b = _conf(artifacts["nccl/b/nccl.conf"])["NCCL_TOPO_FILE"]
    assert topo_a != topo_b
    for path in (topo_a, topo_b):
        assert f"nccl/{Path(path).name}" in artifacts


def test_nc96_graph_is_never_cluster_wide(tmp_path):
    """A 4-GPU graph in /etc/nccl.conf kills every job given fewer GPUs ("dev N not found")."""
    artifacts = _build(tmp_path, "platforms: [slurm]\npools: [{name: nc, sku: Standard_NC96ads_A100_v4, count: 1}]\n")
    conf = artifacts["nccl/nc/nccl.conf"]
    assert "NCCL_GRAPH_FILE" not in _conf(conf)
    assert "NCCL_GRAPH_FILE" not in artifacts["slurm/nc/all_reduce_perf.sbatch"]
    graph = "/opt/hpcconf/nccl/nc96ads-a100-v4-graph.xml"
    assert f"# Graph file: opt in per job that gets all 4 GPUs (export NCCL_GRAPH_FILE={graph})" in conf
    assert graph in artifacts["slurm/nc/install-nccl-files.sh"]  # installed, for the opt-in


def test_aks_image_ships_no_graph_nothing_points_at(tmp_path):
    artifacts = _build(tmp_path, "platforms: [aks]\npools: [{name: nc, sku: Standard_NC96ads_A100_v4, count: 1}]\n"
                                 "test_image: {registry: myacr.azurecr.io, tag: '25.10', base: 'nvcr.io/nvidia/pytorch:25.10-py3'}\n")
    assert not any(path.endswith("-graph.xml") for path in artifacts)
    assert "graph" not in artifacts["image/Dockerfile"]
    assert "NCCL_GRAPH_FILE" not in artifacts["aks/volcano-job.yaml"]
