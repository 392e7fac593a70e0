"""Resolve: derived values computed once from spec + SKU (what every target then agrees on)."""

from __future__ import annotations

from pathlib import Path

from hpcconf.pipeline import compile_spec

REPO = Path(__file__).resolve().parents[1]


def _write(tmp_path, body: str) -> Path:
    spec = tmp_path / "s.yaml"
    spec.write_text("apiVersion: hpcconf/v1\nkind: Cluster\nmetadata: {name: demo, location: eastus}\n" + body)
    return spec


def test_ndmv4_example_geometry():
    cluster = compile_spec(REPO / "examples" / "ndmv4-aks.yaml").cluster
    pool = cluster.test_pool
    assert pool.sku.name == "Standard_ND96amsr_A100_v4"
    assert (pool.count, pool.gpus_per_node, pool.ranks, pool.ib_nics_per_node) == (2, 8, 16, 8)
    assert cluster.ib_resource == "nvidia.com/mlnxnics"
    assert cluster.test_image_ref == "jzacr2.azurecr.io/pytorch_nccl_tests_2303:23.03"
    assert pool.nccl.topo_image_path == "/workspace/nd96amsr-a100-v4-topo.xml"
    assert dict(pool.nccl.image_env)["NCCL_TOPO_FILE"] == "/workspace/nd96amsr-a100-v4-topo.xml"


def test_sku_short_name_and_case_resolve(tmp_path):
    spec = _write(tmp_path, "platforms: [azhop]\npools: [{name: gpu, sku: nd96amsr_a100_V4, count: 1}]\n")
    assert compile_spec(spec).cluster.pools[0].sku.name == "Standard_ND96amsr_A100_v4"


def test_no_infiniband_sku_disables_ib_in_nccl_settings(tmp_path):
    spec = _write(tmp_path, "platforms: [azhop]\npools: [{name: nc48, sku: Standard_NC48ads_A100_v4, count: 1}]\n")
    pool = compile_spec(spec).cluster.pools[0]
    assert pool.infiniband is False and pool.ib_nics_per_node == 0
    assert pool.nccl.setting("NCCL_IB_DISABLE") == "1"
    assert pool.nccl.graph_file is None and pool.nccl.setting("NCCL_GRAPH_FILE") is None


def test_spec_nccl_env_overrides_sku_defaults(tmp_path):
    spec = _write(tmp_path, "platforms: [azhop]\npools: [{name: gpu, sku: Standard_ND96asr_v4, count: 2}]\n"
                            "nccl_env: {NCCL_IGNORE_CPU_AFFINITY: '0', NCCL_DEBUG: INFO}\n")
    pool = compile_spec(spec).cluster.pools[0]
    assert pool.nccl.setting("NCCL_IGNORE_CPU_AFFINITY") == "0"
    assert pool.nccl.setting("NCCL_DEBUG") == "INFO"
    assert pool.nccl.setting("NCCL_IB_PCI_RELAXED_ORDERING") == "1"  # the SKU default stays


def test_user_sku_dir_adds_a_sku(tmp_path):
    skus = tmp_path / "myskus"
    skus.mkdir()
    source = (REPO / "skus" / "Standard_ND96asr_v4.yaml").read_text()
    (skus / "Standard_ND96asr_v4_custom.yaml").write_text(
        source.replace("name: Standard_ND96asr_v4", "name: Standard_ND96asr_v4_custom", 1))
    spec = _write(tmp_path, "platforms: [azhop]\nsku_dirs: [myskus]\n"
                            "pools: [{name: gpu, sku: Standard_ND96asr_v4_custom, count: 2}]\n")
    assert compile_spec(spec).cluster.pools[0].sku.name == "Standard_ND96asr_v4_custom"
