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

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from . import mnnvl
from .accelerators import profile

if TYPE_CHECKING:
    from ..catalog import Sku

SOURCE = "Azure/cyclecloud-slurm 4.0.9 azure-slurm/slurmcc/cli.py (_generate_gres_conf, _generate_gpu_devices)"
TEMPLATES_SOURCE = "Azure/cyclecloud-slurm 4.0.9 azure-slurm-install/templates/{cgroup,slurm}.conf.template"
AMD_RENDER_FIRST = 128  # /dev/dri/renderD128: the first DRM render node
AMD_RENDER_STRIDE = 8  # azslurm: 128 + 8 * index


def expand_hostlist(value: str) -> list[str] | None:
    """``/dev/nvidia[0-3,5]``, ``/dev/nvidia0,/dev/nvidia1`` or ``ccw-gpu-[1-18]`` -> each name (Slurm's hostlist
    form, one bracket per element); None for an expression this reader cannot expand (no judgement is better than
    a wrong count)."""
    parts, depth, start = [], 0, 0
    for i, c in enumerate(value):
        depth += (c == "[") - (c == "]")
        if c == "," and depth == 0:
            parts.append(value[start:i])
            start = i + 1
    parts.append(value[start:])
    files = []
    for part in parts:
        if "[" not in part and "]" not in part:
            files.append(part)
            continue
        match = re.fullmatch(r"([^\[\]]*)\[([0-9,\-]+)\]([^\[\]]*)", part)
        if match is None:
            return None
        for item in match.group(2).split(","):
            lo, _, hi = item.partition("-")
            if not lo.isdigit() or (hi and not hi.isdigit()) or int(hi or lo) < int(lo):
                return None
            width = len(lo) if lo.startswith("0") and len(lo) > 1 else 1  # node[01-16]: node01 ... node16
            files += [f"{match.group(1)}{n:0{width}d}{match.group(3)}" for n in range(int(lo), int(hi or lo) + 1)]
    return files


def _bracket_hostlist(lo: int, hi: int) -> str:
    return f"[{lo}-{hi}]" if hi > lo else str(lo)


def nvidia_devices(count: int, first: int = 0) -> str:
    """``/dev/nvidia0`` or ``/dev/nvidia[0-7]``: azslurm's ``_generate_nvidia_devices`` (first=0)."""
    return f"/dev/nvidia{_bracket_hostlist(first, first + count - 1)}"


def amd_devices(count: int, first: int = 0) -> str:
    """``/dev/dri/renderD128`` or ``/dev/dri/renderD[128,136,...]``: azslurm's ``_generate_amd_devices`` (first=0)."""
    minors = amd_render_minors(first + count)[first:]
    if count == 1 and first == 0:
        return f"/dev/dri/renderD{minors[0]}"
    return "/dev/dri/renderD[" + ",".join(str(m) for m in minors) + "]"


def gpu_devices(sku: Sku, count: int | None = None, first: int = 0) -> str:
    """The device files of a size's GPUs (count: all of them)."""
    gpu = sku.gpu
    if gpu is None:
        raise ValueError(f"{sku.name} has no GPU")
    n = gpu.count if count is None else count
    return DEVICE_FILES[device_scheme(sku)].files(n, first)


@dataclass(frozen=True)
class DeviceFiles:
    """One way GPUs appear under /dev: how gres.conf names them, and a pattern that recognises one."""

    files: Callable[[int, int], str]  # (count, first index) -> the File= value
    pattern: re.Pattern[str]  # one device file of the scheme
    label: str  # how a message names GPUs of this scheme
    indexed: bool  # the number in a file's name is the GPU's index (0 to count - 1)


# The schemes accelerator profiles name (data/accelerators.yaml slurm_gres_files).
DEVICE_FILES = {
    "nvidia": DeviceFiles(nvidia_devices, re.compile(r"^/dev/nvidia(\d+)$"), "an NVIDIA", indexed=True),
    "dri-render": DeviceFiles(amd_devices, re.compile(r"^/dev/dri/renderD(\d+)$"), "an AMD", indexed=False),
}


def device_scheme(sku: Sku) -> str:
    """The scheme of the size's GPUs' device files: its accelerator profile's."""
    return profile(sku.gpu.vendor).slurm_gres_files


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


def amd_render_minors(count: int) -> list[int]:
    """The DRM render-node minors of an AMD size's GPUs as azslurm writes them: 128, 136, ... (one per GPU)."""
    return [AMD_RENDER_FIRST + AMD_RENDER_STRIDE * index for index in range(count)]


def numa_of_gpu_minors(sku: Sku) -> dict[int, int] | None:
    """Each NVIDIA device minor's NUMA node (minors in PCI bus order, the driver's numbering); None without a
    topology and NUMA map."""
    if sku.topology is None or not sku.numa:
        return None
    known = {node.id for node in sku.numa}
    owner = {bus: node.numaid for node in sku.topology.numa for bus in node.gpus}
    if not owner or not set(owner.values()) <= known:
        return None
    return {minor: owner[bus] for minor, bus in enumerate(sorted(owner))}


def gres_conf_lines(sku: Sku, nodes: str | None, *, cores: bool = False) -> list[str]:
    """The ``gres.conf`` line(s) for ``nodes`` (a Slurm hostlist) of one size; [] for a size without GPUs.
    ``nodes=None``: no ``NodeName=`` (a gres.conf installed on each node of the size: a line without it applies to
    the node reading the file, gres.conf(5)).

    ``cores``: one line per NUMA node with ``Cores=`` (binding each GPU to its NUMA node's cores) where the catalog
    has the map; else, and by default, azslurm's single line.
    """
    if sku.gpu is None:
        return []
    groups = gpus_by_numa(sku) if cores else None
    who = f"Nodename={nodes} " if nodes is not None else ""
    if groups and sum(g.count for g in groups) == sku.gpu.count:
        return [f"{who}Name=gpu Count={g.count} File={gpu_devices(sku, g.count, g.first_minor)} "
                f"Cores={g.cores}" for g in groups]
    return [f"{who}Name=gpu Count={sku.gpu.count} File={gpu_devices(sku)}"]


CGROUP_CONF_LINES = ("ConstrainCores=yes", "ConstrainRamSpace=yes", "ConstrainDevices=yes")


def cgroup_conf_lines() -> list[str]:
    """``cgroup.conf``: ``ConstrainDevices=yes`` confines a job to the GPUs it was given (cyclecloud-slurm's template)."""
    return list(CGROUP_CONF_LINES)


@dataclass(frozen=True)
class SlurmConfLine:
    line: str
    why: str
    # only once topology.conf holds the blocks: without it slurmctld exits at start (Slurm block_record.c)
    needs_topology_conf: bool = False


def slurm_conf_lines(sku: Sku, *, slurm_version: str | None = None, pmix: bool = False,
                     cyclecloud: bool = False) -> list[SlurmConfLine]:
    """The ``slurm.conf`` lines a partition of GPU nodes of ``sku`` needs.

    ``pmix``: Slurm was built with PMIx (``MpiDefault=pmix``; else ``none``, as cyclecloud-slurm writes, and jobs ask
    ``srun --mpi=pmix``). An NVL72 size (NVLink domain across VMs) adds the block topology and IMEX switch lines;
    raises ValueError when ``slurm_version`` is older than they need. ``cyclecloud``: the lines for a
    cyclecloud-slurm cluster, whose template keeps ``SwitchType=switch/none`` and starts IMEX from its own prolog
    (README "GB200/GB300 IMEX Support"), and whose block topology goes in after scaling
    (:func:`after_scaling_lines`), so neither is among them.
    """
    lines = [
        SlurmConfLine("GresTypes=gpu", "declares the gpu GRES that gres.conf and Nodename ... Gres=gpu:N use"),
        SlurmConfLine("SelectType=select/cons_tres", "--gpus, --gpus-per-node and --gpus-per-task need cons_tres"),
        SlurmConfLine("ProctrackType=proctrack/cgroup", "tracks job processes in cgroups (needed by task/cgroup)"),
        SlurmConfLine("TaskPlugin=task/affinity,task/cgroup", "binds tasks to cores and, with cgroup.conf "
                      "ConstrainDevices=yes, to their GPUs"),
        SlurmConfLine(f"MpiDefault={'pmix' if pmix else 'none'}",
                      "PMIx for srun-launched MPI" if pmix else CYCLECLOUD_MPI_WHY if cyclecloud else
                      "Slurm built without PMIx: jobs pass --mpi=pmix where the build has it"),
        SlurmConfLine("PrologFlags=alloc", "runs the prolog at allocation (cyclecloud-slurm's IMEX prolog needs it)"),
    ]
    if sku.nvlink is not None and sku.nvlink.domain_gpus and sku.gpu is not None \
            and sku.nvlink.domain_gpus > sku.gpu.count:
        if slurm_version is not None and (gap := mnnvl.slurm_gap(slurm_version)) is not None:
            raise ValueError(f"Slurm {slurm_version} has no {gap.feature} (from {gap.version}: {gap.source})")
        if cyclecloud:
            return lines
        lines += [
            SlurmConfLine("SwitchType=switch/nvidia_imex", "a per-job IMEX channel for memory shared over the NVLink "
                          "domain"),
            SlurmConfLine("TopologyPlugin=topology/block", "one block per NVLink domain (topology.conf BlockName=, "
                          "BlockSizes=): --segment keeps a job inside a rack; only once topology.conf exists",
                          needs_topology_conf=True),
            SlurmConfLine("TopologyParam=BlockAsNodeRank", "orders nodes by block (cyclecloud-slurm README, GB200/GB300)",
                          needs_topology_conf=True),
        ]
    return lines


CYCLECLOUD_MPI_WHY = ("cyclecloud-slurm's template: its Slurm packages are built with PMIx (README: 25.11.5 with PMIx "
                      "4.2.9), so jobs pass srun --mpi=pmix")
README_GB200 = "Azure/cyclecloud-slurm 4.0.9 README.md, \"Scaling with scale_m1 (GB200/GB300)\""


def after_scaling_lines(partition: str) -> list[SlurmConfLine]:
    """The ``site_specific.conf`` lines cyclecloud-slurm's README asks for an NVL72 partition ("Required slurm.conf
    settings"), to add on the scheduler once its nodes are scaled and ``topology.conf`` is in place: before that
    ``TopologyPlugin=topology/block`` stops slurmctld from starting."""
    return [
        SlurmConfLine(f"SuspendExcParts={partition}", "Slurm must not suspend the racks' nodes (first, before scaling)"),
        SlurmConfLine("TopologyParam=BlockAsNodeRank", "orders nodes by block"),
        SlurmConfLine("TopologyPlugin=topology/block", "one block per NVL72 rack (topology.conf from azslurm topology "
                      "-n --block --block_size 18): only once that file is in place"),
    ]


def infiniband_topology_note(sku: Sku, placement_groups: int) -> str | None:
    """Why a CycleCloud gpu partition of an InfiniBand size that is not NVL72 gets no ``TopologyPlugin`` line, or
    which one to add; None for a size without InfiniBand or with an NVLink domain across VMs (block topology)."""
    if not sku.infiniband or (nodes_per_block(sku) or 1) > 1:
        return None
    if placement_groups <= 1:
        return ("No TopologyPlugin: the partition is one placement group, whose VMs all share one InfiniBand fabric, "
                "so every job stays on it (cyclecloud-slurm's template leaves topology/tree commented out; the "
                "switches inside the fabric are known only to a SHARP fabric manager: azslurm topology -f).")
    return (f"The partition spans {placement_groups} placement groups, each its own InfiniBand fabric: after "
            "scaling, `azslurm topology -v -t -o /etc/slurm/topology.conf` (one SwitchName per placement group) and "
            "TopologyPlugin=topology/tree in /etc/slurm/site_specific.conf, with jobs asking --switches=1 "
            "(cyclecloud-slurm 4.0.9 README \"Topology\" and slurm.conf.template); autoscaling does not update it.")


def nodes_per_block(sku: Sku) -> int | None:
    """VMs in one NVLink domain (``BlockSizes`` base; NVL72 with 4 GPUs per VM: 18); None without one."""
    if sku.nvlink is None or not sku.nvlink.domain_gpus or sku.gpu is None:
        return None
    return mnnvl.domain_nodes(sku.nvlink.domain_gpus, sku.gpu.count)
