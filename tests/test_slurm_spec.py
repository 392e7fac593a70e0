"""The `slurm:` spec section refuses what would break or be silently ignored, at the right line."""

from __future__ import annotations

from pathlib import Path

import pytest

from hpcconf.diagnostics import HpcconfError
from hpcconf.pipeline import compile_spec

KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIIjPRr0iVR4mgzJy0ehnM5hWX4O86hM1bVTgdi5g3nkZ user1@crusoe.ai"
CRUSOE_POOL = "pools: [{name: h100, sku: h100-80gb-sxm-ib.8x, count: 2}]\n"
CRUSOE_BLOCK = """slurm:
  crusoe:
    project_id: 5f0e8a52-3c1d-4b7e-9a26-8d4c2e1f7b90
    location: us-east1-a
    vpc_subnet_id: 80cf6356-da22-42c8-8925-d5fb1e3e55ad
    ib_partition_ids: {h100: 7a1d3c52-9e84-4b6f-a2d0-5c8e1f3b9a64}
"""


def _spec(tmp_path: Path, body: str) -> Path:
    spec = tmp_path / "s.yaml"
    spec.write_text("apiVersion: hpcconf/v1\nkind: Cluster\nmetadata: {name: demo, location: eastus}\n"
                    "platforms: [slurm]\n" + body, encoding="utf-8")
    return spec


def _errors(spec: Path) -> list:
    with pytest.raises(HpcconfError) as info:
        compile_spec(spec)
    return info.value.diagnostics


def _line_of(spec: Path, needle: str) -> int:
    return next(i for i, line in enumerate(spec.read_text().splitlines(), 1) if needle in line)


def test_private_key_is_refused(tmp_path):
    spec = _spec(tmp_path, CRUSOE_POOL + CRUSOE_BLOCK + "    users:\n      - name: user1\n        uid: 1001\n"
                 "        ssh_public_key: '-----BEGIN OPENSSH PRIVATE KEY----- b3BlbnNzaC1rZXktdjEAAAAA'\n")
    [error] = _errors(spec)
    assert "private key" in error.message and error.line == _line_of(spec, "ssh_public_key:")


def test_private_key_path_is_refused(tmp_path):
    spec = _spec(tmp_path, CRUSOE_POOL + CRUSOE_BLOCK + "    ssh_public_key_path: ~/.ssh/id_ed25519\n")
    [error] = _errors(spec)
    assert ".pub" in error.message and error.line == _line_of(spec, "ssh_public_key_path")


def test_crusoe_pool_needs_crusoe_block(tmp_path):
    spec = _spec(tmp_path, CRUSOE_POOL)
    [error] = _errors(spec)
    assert error.code == "SPEC007" and "slurm.crusoe" in error.message and error.line == _line_of(spec, "pools:")


def test_crusoe_block_without_crusoe_pool(tmp_path):
    spec = _spec(tmp_path, "pools: [{name: ndv2, sku: Standard_ND40rs_v2, count: 2}]\n" + CRUSOE_BLOCK)
    [error] = _errors(spec)
    assert error.code == "SPEC006" and error.line == _line_of(spec, "crusoe:")


def _crusoe(version: str, ib: str) -> str:
    """The Crusoe block for module ``version`` with ``ib`` as its InfiniBand line ("" for none)."""
    lines = [line for line in CRUSOE_BLOCK.splitlines() if "ib_partition_ids" not in line]
    return "\n".join(lines + [f"    module_version: {version}"] + ([f"    {ib}"] if ib else [])) + "\n"


NETWORK = "ib_network_id: 2c6b9e41-7d3a-4f58-b1e0-9a7c5d3e2f16"
PARTITION = "ib_partition_ids: {h100: 7a1d3c52-9e84-4b6f-a2d0-5c8e1f3b9a64}"


@pytest.mark.parametrize("version, ib, code, needle", [
    ("b115d0c", "", "SPEC009", "ib_network_id"),
    ("9f57d5e", "", "SPEC016", "ib_partition_ids"),
    ("v3.0.0", "", "SPEC016", "ib_partition_ids"),
    ("v3.0.0", NETWORK, "SPEC016", "ib_partition_ids"),  # v3 only names the network in a comment
])
def test_ib_instance_needs_what_its_module_version_reads(tmp_path, version, ib, code, needle):
    [error] = _errors(_spec(tmp_path, CRUSOE_POOL + _crusoe(version, ib)))
    assert error.code == code and needle in error.message and "TCP" in error.message


@pytest.mark.parametrize("version, ib", [("b115d0c", NETWORK), ("9f57d5e", PARTITION), ("v3.0.0", PARTITION)])
def test_ib_instance_with_what_its_module_version_reads_compiles(tmp_path, version, ib):
    assert compile_spec(_spec(tmp_path, CRUSOE_POOL + _crusoe(version, ib))).artifacts


TWO_POOLS = "pools: [{name: h100, sku: h100-80gb-sxm-ib.8x, count: 2}, {name: h2, sku: h100-80gb-sxm-ib.8x, count: 1}]\n"


@pytest.mark.parametrize("version", ["9f57d5e", "b115d0c"])
def test_second_crusoe_pool_is_refused_before_v3(tmp_path, version):
    ib = NETWORK if version == "b115d0c" else PARTITION
    errors = _errors(_spec(tmp_path, TWO_POOLS + _crusoe(version, ib)))
    assert [e.code for e in errors] == ["SPEC008"] and version in errors[0].message


def test_v3_takes_one_partition_per_pool(tmp_path):
    ids = "ib_partition_ids: {h100: 7a1d3c52-9e84-4b6f-a2d0-5c8e1f3b9a64, h2: 3e9f1b27-64ac-4d05-8b1e-2f7a9c0d5e83}"
    build = compile_spec(_spec(tmp_path, TWO_POOLS + _crusoe("v3.0.0", ids)))
    tfvars = next(a.content for a in build.artifacts if a.path.endswith("terraform.tfvars"))
    assert 'name            = "h2"' in tfvars and "3e9f1b27-64ac-4d05-8b1e-2f7a9c0d5e83" in tfvars


def test_duplicate_uid(tmp_path):
    users = "".join(f"      - {{name: {n}, uid: 1001, ssh_public_key: '{KEY}'}}\n" for n in ("a1", "b2"))
    spec = _spec(tmp_path, CRUSOE_POOL + CRUSOE_BLOCK + "    users:\n" + users)
    [error] = _errors(spec)
    assert "uid 1001" in error.message and error.line == _line_of(spec, "b2")


def test_test_nodes_beyond_pool(tmp_path):
    spec = _spec(tmp_path, "pools: [{name: ndv2, sku: Standard_ND40rs_v2, count: 2}]\nslurm:\n  test_nodes: {ndv2: 3}\n")
    [error] = _errors(spec)
    assert "2 node(s)" in error.message and error.line == _line_of(spec, "test_nodes")


def test_partition_for_unknown_pool(tmp_path):
    spec = _spec(tmp_path, "pools: [{name: ndv2, sku: Standard_ND40rs_v2, count: 2}]\nslurm:\n  partitions: {gpu: ndv2}\n")
    [error] = _errors(spec)
    assert error.code == "HPC009" and "ndv2" in error.hint


def test_ucc_path_needs_open_mpi_with_coll_ucc(tmp_path):
    spec = _spec(tmp_path, "pools: [{name: ndv2, sku: Standard_ND40rs_v2, count: 2}]\n"
                           "versions: {openmpi: 4.1.2}\nslurm: {collectives: ucc-nccl}\n")
    [error] = _errors(spec)
    assert "coll/ucc" in error.message and error.line == _line_of(spec, "openmpi")


def test_unparsable_ucc_tune_in_mpi_env(tmp_path):
    spec = _spec(tmp_path, "pools: [{name: ndv2, sku: Standard_ND40rs_v2, count: 2}]\n"
                           "mpi_env: {UCC_TL_NCCL_TUNE: 'all_reduce:cuda:inf'}\n")
    [error] = _errors(spec)
    assert "failed to parse" in error.message and error.line == _line_of(spec, "UCC_TL_NCCL_TUNE")


def test_valid_crusoe_spec_compiles(tmp_path):
    build = compile_spec(_spec(tmp_path, CRUSOE_POOL + CRUSOE_BLOCK + "  partitions: {h100: gpu}\n"))
    paths = {a.path for a in build.artifacts}
    assert {"slurm/terraform.tfvars", "slurm/h100/all_reduce_perf.sbatch"} <= paths
    assert build.cluster.slurm.partition("h100").partition == "gpu"


def test_azure_slurm_spec_gets_sbatch_but_no_tfvars(tmp_path):
    spec = tmp_path / "a.yaml"
    spec.write_text("apiVersion: hpcconf/v1\nkind: Cluster\nmetadata: {name: demo, location: eastus}\n"
                    "platforms: [slurm]\npools: [{name: nc96v4, sku: Standard_NC96ads_A100_v4, count: 1}]\n")
    paths = {a.path for a in compile_spec(spec).artifacts}
    assert "slurm/nc96v4/all_reduce_perf.sbatch" in paths and "slurm/terraform.tfvars" not in paths


def test_sku_algo_must_exist_in_the_spec_nccl(tmp_path):
    """Crusoe's NVLSTree (seed 002) came with NCCL 2.18; an older NCCL would ignore or reject it."""
    spec = _spec(tmp_path, CRUSOE_POOL + "versions: {nccl: 2.17.1}\n" + CRUSOE_BLOCK)
    [error] = _errors(spec)
    assert "NVLSTree" in error.message and error.line == _line_of(spec, "versions:")
    fixed = _spec(tmp_path, CRUSOE_POOL + "versions: {nccl: 2.17.1}\nnccl_env: {NCCL_ALGO: Ring}\n" + CRUSOE_BLOCK)
    script = {a.path: a.content for a in compile_spec(fixed).artifacts}["slurm/h100/all_reduce_perf.sbatch"]
    assert "export NCCL_ALGO=Ring" in script
