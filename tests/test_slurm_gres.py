"""gres.conf, cgroup.conf and slurm.conf lines for GPU node arrays: every catalog size's gres.conf equals what
cyclecloud-slurm's azslurm writes (a port of its code at 4.0.9, below), and the NVL72 lines need Slurm 24.05."""

from __future__ import annotations

import subprocess
from math import ceil
from pathlib import Path

import pytest

from hpcconf.catalog import Catalog
from hpcconf.knowledge import slurm_gres

CATALOG = Catalog.load()
GPU_SKUS = sorted(name for name in CATALOG.names() if CATALOG.get(name).gpu is not None)
MIRROR = Path("/work/.mirror/Azure+cyclecloud-slurm/repo")


# -- a port of Azure/cyclecloud-slurm 4.0.9 azure-slurm/slurmcc/cli.py, kept as close to the source as Python allows --

def _azslurm_nvidia_devices(gpu_count: int) -> str:
    if gpu_count == 1:
        return "/dev/nvidia0"
    return "/dev/nvidia[0-{}]".format(gpu_count - 1)


def _azslurm_amd_devices(gpu_count: int) -> str:
    if gpu_count == 1:
        return "/dev/dri/renderD128"
    amd_gpu_list = ",".join([f"{128+8*index}" for index in range(0, gpu_count)])
    return "/dev/dri/renderD[{}]".format(amd_gpu_list)


def _azslurm_gpu_devices(machine_type: str, gpu_family: str | None, gpu_count: int, gpu_device_config: str = "") -> str:
    if gpu_device_config:
        return gpu_device_config
    if gpu_family is not None:
        has_amd_gpu = "amd" in gpu_family.lower()
    else:  # AttributeError in azslurm: CycleCloud gives no gpu_family, the machine type decides
        has_amd_gpu = "mi300" in machine_type.lower()
    return _azslurm_amd_devices(gpu_count) if has_amd_gpu else _azslurm_nvidia_devices(gpu_count)


def _azslurm_gres_conf(machine_type: str, gpu_count: int, nodes: list[str], max_vm_count: int,
                       max_scaleset_size: int) -> list[str]:
    lines = []
    for pg_index in range(int(ceil(float(max_vm_count) / max_scaleset_size))):
        subset = nodes[pg_index * max_scaleset_size:min(max_vm_count, (pg_index + 1) * max_scaleset_size)]
        if subset and gpu_count:
            lines.append("Nodename={} Name=gpu Count={} File={}".format(
                ",".join(subset), gpu_count, _azslurm_gpu_devices(machine_type, None, gpu_count)))
    return lines


def test_the_port_is_of_the_tagged_source():
    if not MIRROR.is_dir():
        pytest.skip("no mirror of Azure/cyclecloud-slurm")
    source = subprocess.run(["git", "--git-dir", str(MIRROR), "show", "4.0.9:azure-slurm/slurmcc/cli.py"],
                            capture_output=True, text=True, check=True).stdout
    for line in ('return "/dev/nvidia[0-{}]".format(gpu_count - 1)',
                 'amd_gpu_list = ",".join([f"{128+8*index}" for index in range(0, gpu_count)])',
                 'has_amd_gpu = "mi300" in partition.machine_type.lower()',
                 '"Nodename={} Name=gpu Count={} File={}".format('):
        assert line in source, line


@pytest.mark.parametrize("name", GPU_SKUS)
def test_gres_conf_is_what_azslurm_writes(name):
    sku = CATALOG.get(name)
    assert sku.gpu is not None
    nodes = "ccw-gpu-[1-4]"
    expected = _azslurm_gres_conf(sku.name, sku.gpu.count, [nodes], 1, 1)
    assert slurm_gres.gres_conf_lines(sku, nodes) == expected


def test_amd_devices_follow_azslurm():
    sku = CATALOG.get("Standard_ND96isr_MI300X_v5")
    assert slurm_gres.gres_conf_lines(sku, "n1") == [
        "Nodename=n1 Name=gpu Count=8 File=/dev/dri/renderD[128,136,144,152,160,168,176,184]"]


def test_cores_follow_the_numa_map_in_bus_order():
    sku = CATALOG.get("Standard_ND96isr_H100_v5")
    assert slurm_gres.gres_conf_lines(sku, "n[1-2]", cores=True) == [
        "Nodename=n[1-2] Name=gpu Count=4 File=/dev/nvidia[0-3] Cores=0-47",
        "Nodename=n[1-2] Name=gpu Count=4 File=/dev/nvidia[4-7] Cores=48-95"]
    one = CATALOG.get("Standard_NC24ads_A100_v4")  # no topology: azslurm's line
    assert slurm_gres.gres_conf_lines(one, "n1", cores=True) == ["Nodename=n1 Name=gpu Count=1 File=/dev/nvidia0"]


def test_cgroup_constrains_devices():
    assert "ConstrainDevices=yes" in slurm_gres.cgroup_conf_lines()


def test_slurm_conf_lines_for_nvl72_need_slurm_24_05():
    gb200 = CATALOG.get("Standard_ND128isr_NDR_GB200_v6")
    lines = [entry.line for entry in slurm_gres.slurm_conf_lines(gb200, slurm_version="25.11.5")]
    assert {"GresTypes=gpu", "SwitchType=switch/nvidia_imex", "TopologyPlugin=topology/block"} <= set(lines)
    assert slurm_gres.nodes_per_block(gb200) == 18
    with pytest.raises(ValueError, match="24.05"):
        slurm_gres.slurm_conf_lines(gb200, slurm_version="23.11.10")
    h100 = [entry.line for entry in slurm_gres.slurm_conf_lines(CATALOG.get("Standard_ND96isr_H100_v5"))]
    assert "TopologyPlugin=topology/block" not in h100 and "MpiDefault=none" in h100


SLURM_MIRROR = Path("/work/.mirror/SchedMD+slurm/repo")


@pytest.mark.parametrize("path,absent_at,present_at", [
    ("src/plugins/topology/block", "slurm-23-02-8-1", "slurm-23-11-1-1"),
    ("src/plugins/switch/nvidia_imex", "slurm-23-11-11-1", "slurm-24-05-1-1"),
])
def test_the_slurm_floors_are_the_tags(path, absent_at, present_at):
    """The floors slurm_conf_lines relies on (knowledge.mnnvl) are where SchedMD/slurm's tags say."""
    if not SLURM_MIRROR.is_dir():
        pytest.skip("no mirror of SchedMD/slurm (fetch github:SchedMD/slurm)")

    def has(tag: str) -> bool:
        out = subprocess.run(["git", "--git-dir", str(SLURM_MIRROR), "ls-tree", "--name-only", f"{tag}:{path.rsplit('/', 1)[0]}"],
                             capture_output=True, text=True, check=True).stdout.split()
        return path.rsplit("/", 1)[1] in out

    assert not has(absent_at) and has(present_at)
