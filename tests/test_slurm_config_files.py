"""The plain-Slurm target writes each GPU partition's gres.conf, cgroup.conf and slurm.conf lines (issue #26 item 4:
"for plain Slurm and CCWS alike"), from the knowledge CCWS's reference files use; CCWS keeps its own."""

from __future__ import annotations

from pathlib import Path

from hpcconf.catalog import Catalog
from hpcconf.knowledge import slurm_gres
from hpcconf.pipeline import compile_spec

ROOT = Path(__file__).resolve().parents[1]


def _files(example: str) -> dict[str, str]:
    return {a.path: a.content for a in compile_spec(ROOT / "examples" / example).artifacts}


def _body(text: str) -> list[str]:
    return [line for line in text.splitlines() if line and not line.startswith("#")]


def test_each_slurm_partition_gets_its_gres_cgroup_and_slurm_conf_lines():
    files = _files("nd40rs-v2-ucx.yaml")
    sku = Catalog.load().get("Standard_ND40rs_v2")
    assert _body(files["slurm/ndv2/gres.conf"]) == slurm_gres.gres_conf_lines(sku, None, cores=True)
    assert _body(files["slurm/ndv2/gres.conf"]) == ["Name=gpu Count=4 File=/dev/nvidia[0-3] Cores=0-19",
                                                     "Name=gpu Count=4 File=/dev/nvidia[4-7] Cores=20-39"]
    assert "ConstrainDevices=yes" in _body(files["slurm/ndv2/cgroup.conf"])
    partition = _body(files["slurm/ndv2/gpu-partition.conf"])
    assert "GresTypes=gpu" in partition and "SelectType=select/cons_tres" in partition


def test_amd_and_nvl72_partitions_get_their_own_device_files_and_block_topology():
    amd = _files("ndmi300x-aks-slurm.yaml")
    assert _body(amd["slurm/gpu/gres.conf"]) == ["Name=gpu Count=8 File=/dev/dri/renderD[128,136,144,152,160,168,176,184]"]
    text = _files("gb200-nvl72-slurm.yaml")["slurm/gpu/gpu-partition.conf"]
    gb200 = _body(text)
    # r26c B1: live before topology.conf exists, TopologyPlugin=topology/block stops slurmctld at start
    assert "SwitchType=switch/nvidia_imex" in gb200 and not any(line.startswith("Topology") for line in gb200)
    assert "# TopologyPlugin=topology/block\n" in text and "# TopologyParam=BlockAsNodeRank\n" in text
    # r26c D1: the node line's Gres= is named (else slurmctld counts no GPUs)
    assert "Gres=gpu:4" in text


def test_ccws_keeps_its_own_reference_files_and_gets_no_plain_slurm_copies():
    files = _files("ccws-ndv5.yaml")
    assert "ccws/slurm/gres.conf" in files
    assert not any(path.startswith("slurm/") and path.endswith(("gres.conf", "cgroup.conf", "gpu-partition.conf"))
                   for path in files), sorted(files)
