"""The Slurm configuration a GPU node array needs: ``gres.conf``, ``cgroup.conf`` and the ``slurm.conf`` lines, as pure
functions of a size's catalog facts.

``gres.conf`` is what cyclecloud-slurm's ``azslurm`` writes for a partition (``_generate_gres_conf`` and
``_generate_gpu_devices`` in ``azure-slurm/slurmcc/cli.py`` at 4.0.9, the cyclecloud-slurm release offering the Slurm
25.11.5 of CCWS 2026.07.02; the functions are the same from 4.0.0 to 4.0.9): one line per placement group,
``Nodename=<nodes> Name=gpu Count=<n> File=<devices>``, where the devices are ``/dev/nvidia0`` for one NVIDIA GPU,
``/dev/nvidia[0-<n-1>]`` for more, and for AMD (a size whose GPU family says AMD, else whose name holds ``mi300``)
``/dev/dri/renderD128`` for one, ``/dev/dri/renderD[128,136,...]`` (128 + 8 x index, commas, no spaces) for more.
azslurm writes no ``Cores=``; :func:`gres_conf_lines` adds it only when asked and the catalog has the size's
GPU-to-NUMA map (topology), one line per NUMA node, device minors in PCI bus order (the order the driver numbers
``/dev/nvidiaN`` and Slurm's NVML autodetection lists GPUs).

The GPU count is the catalog's. azslurm takes the count CycleCloud reports, which some subscriptions get wrong (0 for
ND H100 v5; cyclecloud-slurm README "Incorrect number of GPUs", the ``slurm_gpus`` override): the catalog's count is
what azslurm writes when the report is right, and what the override must say when it is not.

``cgroup.conf`` and the ``slurm.conf`` lines are cyclecloud-slurm's templates at 4.0.9
(``azure-slurm-install/templates/cgroup.conf.template``, ``slurm.conf.template``) and, for an NVL72 rack, the block
topology its README asks for ("GB200/GB300": ``TopologyPlugin=topology/block``, ``TopologyParam=BlockAsNodeRank``,
``azslurm topology -b -s 18``) with ``SwitchType=switch/nvidia_imex`` (per-job IMEX channels); the Slurm floors are
:mod:`hpcconf.knowledge.mnnvl`'s.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from . import mnnvl

if TYPE_CHECKING:
    from ..catalog import Sku

SOURCE = "Azure/cyclecloud-slurm 4.0.9 azure-slurm/slurmcc/cli.py (_generate_gres_conf, _generate_gpu_devices)"
TEMPLATES_SOURCE = "Azure/cyclecloud-slurm 4.0.9 azure-slurm-install/templates/{cgroup,slurm}.conf.template"
AMD_RENDER_FIRST = 128  # /dev/dri/renderD128: the first DRM render node
AMD_RENDER_STRIDE = 8  # azslurm: 128 + 8 * index


def _bracket_hostlist(lo: int, hi: int) -> str:
    return f"[{lo}-{hi}]" if hi > lo else str(lo)


def nvidia_devices(count: int, first: int = 0) -> str:
    """``/dev/nvidia0`` or ``/dev/nvidia[0-7]``: azslurm's ``_generate_nvidia_devices`` (first=0)."""
    return f"/dev/nvidia{_bracket_hostlist(first, first + count - 1)}"


def amd_devices(count: int, first: int = 0) -> str:
    """``/dev/dri/renderD128`` or ``/dev/dri/renderD[128,136,...]``: azslurm's ``_generate_amd_devices`` (first=0)."""
    minors = [AMD_RENDER_FIRST + AMD_RENDER_STRIDE * index for index in range(first, first + count)]
    if count == 1 and first == 0:
        return f"/dev/dri/renderD{minors[0]}"
    return "/dev/dri/renderD[" + ",".join(str(m) for m in minors) + "]"


def gpu_devices(sku: Sku, count: int | None = None, first: int = 0) -> str:
    """The device files of a size's GPUs (count: all of them)."""
    gpu = sku.gpu
    if gpu is None:
        raise ValueError(f"{sku.name} has no GPU")
    n = gpu.count if count is None else count
    return amd_devices(n, first) if gpu.vendor == "amd" else nvidia_devices(n, first)


@dataclass(frozen=True)
class NumaGpus:
    numa: int
    first_minor: int
    count: int
    cores: str  # the NUMA node's CPUs (Linux cpulist): Slurm core ids when a core runs one thread


def gpus_by_numa(sku: Sku) -> list[NumaGpus] | None:
    """Each NUMA node's GPUs (contiguous device minors in bus order) and CPUs; None without a topology and NUMA map
    or when a NUMA node's GPUs are not contiguous in bus order."""
    if sku.topology is None or not sku.numa:
        return None
    cpus = {node.id: node.cpus for node in sku.numa}
    buses = sorted(bus for node in sku.topology.numa for bus in node.gpus)
    out = []
    for node in sku.topology.numa:
        if not node.gpus or node.numaid not in cpus:
            continue
        minors = sorted(buses.index(bus) for bus in node.gpus)
        if minors != list(range(minors[0], minors[0] + len(minors))):
            return None
        out.append(NumaGpus(node.numaid, minors[0], len(minors), cpus[node.numaid]))
    return sorted(out, key=lambda g: g.first_minor) or None


def gres_conf_lines(sku: Sku, nodes: str, *, cores: bool = False) -> list[str]:
    """The ``gres.conf`` line(s) for ``nodes`` (a Slurm hostlist) of one size; [] for a size without GPUs.

    ``cores``: one line per NUMA node with ``Cores=`` (binding each GPU to its NUMA node's cores) where the catalog
    has the map; else, and by default, azslurm's single line.
    """
    if sku.gpu is None:
        return []
    groups = gpus_by_numa(sku) if cores else None
    if groups and sum(g.count for g in groups) == sku.gpu.count:
        return [f"Nodename={nodes} Name=gpu Count={g.count} File={gpu_devices(sku, g.count, g.first_minor)} "
                f"Cores={g.cores}" for g in groups]
    return [f"Nodename={nodes} Name=gpu Count={sku.gpu.count} File={gpu_devices(sku)}"]


CGROUP_CONF_LINES = ("ConstrainCores=yes", "ConstrainRamSpace=yes", "ConstrainDevices=yes")


def cgroup_conf_lines() -> list[str]:
    """``cgroup.conf``: ``ConstrainDevices=yes`` confines a job to the GPUs it was given (cyclecloud-slurm's template)."""
    return list(CGROUP_CONF_LINES)


@dataclass(frozen=True)
class SlurmConfLine:
    line: str
    why: str


def slurm_conf_lines(sku: Sku, *, slurm_version: str | None = None, pmix: bool = False) -> list[SlurmConfLine]:
    """The ``slurm.conf`` lines a partition of GPU nodes of ``sku`` needs.

    ``pmix``: Slurm was built with PMIx (``MpiDefault=pmix``; else ``none``, as cyclecloud-slurm writes, and jobs ask
    ``srun --mpi=pmix``). An NVL72 size (NVLink domain across VMs) adds the block topology and IMEX switch lines;
    raises ValueError when ``slurm_version`` is older than they need.
    """
    lines = [
        SlurmConfLine("GresTypes=gpu", "declares the gpu GRES that gres.conf and Nodename ... Gres=gpu:N use"),
        SlurmConfLine("SelectType=select/cons_tres", "--gpus, --gpus-per-node and --gpus-per-task need cons_tres"),
        SlurmConfLine("ProctrackType=proctrack/cgroup", "tracks job processes in cgroups (needed by task/cgroup)"),
        SlurmConfLine("TaskPlugin=task/affinity,task/cgroup", "binds tasks to cores and, with cgroup.conf "
                      "ConstrainDevices=yes, to their GPUs"),
        SlurmConfLine(f"MpiDefault={'pmix' if pmix else 'none'}",
                      "PMIx for srun-launched MPI" if pmix else "no default MPI plugin, as cyclecloud-slurm writes it: "
                      "jobs choose one, srun --mpi=pmix where Slurm is built with PMIx (cyclecloud-slurm 4.0.9's "
                      "25.11.5 is, with PMIx 4.2.9: its README)"),
        SlurmConfLine("PrologFlags=alloc", "runs the prolog at allocation (cyclecloud-slurm's IMEX prolog needs it)"),
    ]
    if sku.nvlink is not None and sku.nvlink.domain_gpus and sku.gpu is not None \
            and sku.nvlink.domain_gpus > sku.gpu.count:
        if slurm_version is not None and (gap := mnnvl.slurm_gap(slurm_version)) is not None:
            raise ValueError(f"Slurm {slurm_version} has no {gap.feature} (from {gap.version}: {gap.source})")
        lines += [
            SlurmConfLine("SwitchType=switch/nvidia_imex", "a per-job IMEX channel for memory shared over the NVLink "
                          "domain"),
            SlurmConfLine("TopologyPlugin=topology/block", "one block per NVLink domain (topology.conf BlockName=, "
                          "BlockSizes=): --segment keeps a job inside a rack; only once topology.conf exists"),
            SlurmConfLine("TopologyParam=BlockAsNodeRank", "orders nodes by block (cyclecloud-slurm README, GB200/GB300)"),
        ]
    return lines


def nodes_per_block(sku: Sku) -> int | None:
    """VMs in one NVLink domain (``BlockSizes`` base; NVL72 with 4 GPUs per VM: 18); None without one."""
    if sku.nvlink is None or not sku.nvlink.domain_gpus or sku.gpu is None:
        return None
    return mnnvl.domain_nodes(sku.nvlink.domain_gpus, sku.gpu.count)
