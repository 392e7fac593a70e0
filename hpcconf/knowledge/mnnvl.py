"""Multi-node NVLink (MNNVL: GB200/GB300 NVL72, one NVLink domain of 72 GPUs over 18 VMs of 4).

What a Slurm cluster needs so that NCCL reaches the other VMs' GPUs over NVLink, and the version
floors of each piece, read from the upstream sources named beside each fact:

- NCCL uses MNNVL only when every rank's GPU fabric has registered and the CUDA driver exports
  FABRIC memory handles, which needs cuMem (``checkMNNVL``: "MNNVL requires cuMem to be enabled",
  NVIDIA/nccl src/init.cc @ v2.21.5-1). ``NCCL_MNNVL_ENABLE``: 2 (default) uses it when the clique
  holds more than one rank, 1 fails init ("MNNVL is not supported on this system") when it cannot,
  0 turns it off. 2.20.x read the same switch as ``NCCL_MNNVL`` (src/init.cc @ v2.20.3-1); 2.19
  and older have no MNNVL at all.
- ``NCCL_NVLS_ENABLE`` (default 2, auto) gives NVLink SHARP across the domain only when the MNNVL
  clique holds more than 2 GPUs (src/transport/nvls.cc ``ncclNvlsInit`` @ v2.21.5-1).
- The GPUs' memory is shared across VMs by the IMEX service: ``nvidia-imex`` on each node, reading
  the IP addresses of the nodes of its domain from ``/etc/nvidia-imex/nodes_config.cfg`` (NVIDIA IMEX
  guide, "Deployment Models"), and an IMEX channel (``/dev/nvidia-caps-imex-channels/channelN``)
  for the job; the driver creates none by default (NVIDIA IMEX guide, "IMEX Channels").
- Slurm: ``TopologyPlugin=topology/block`` with one ``BlockName=... Nodes=...`` per NVLink domain
  and ``BlockSizes`` (topology.conf(5); the plugin exists since Slurm 23.11:
  SchedMD/slurm src/plugins/topology/block @ slurm-23-11-1-1); ``sbatch --segment=N`` keeps N nodes
  in one block (sbatch(1) @ slurm-24-05-1-1, "the segment size must be less than or equal to the
  planning base block size"); ``SwitchType=switch/nvidia_imex`` gives each job its own IMEX channel
  (slurm.conf(5) @ slurm-24-05-1-1, src/plugins/switch/nvidia_imex).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from .versions import Version, VersionLike

IMEX_NODES_CONFIG = "/etc/nvidia-imex/nodes_config.cfg"
IMEX_CHANNEL_DIR = "/dev/nvidia-caps-imex-channels"
IMEX_SERVICE = "nvidia-imex"


@dataclass(frozen=True)
class Floor:
    """The first release of a component that has a feature, and where that was read."""

    component: str
    feature: str
    version: str
    source: str

    def met_by(self, version: VersionLike) -> bool:
        return Version.parse(str(version)) >= Version.parse(self.version)


NCCL_MNNVL = Floor("NCCL", "multi-node NVLink (NCCL_MNNVL, renamed NCCL_MNNVL_ENABLE in 2.21.5)", "2.20.3",
                   "NVIDIA/nccl src/init.cc @ v2.20.3-1: NCCL_PARAM(MNNVL, \"MNNVL\", -2)")
NCCL_MNNVL_ENABLE = Floor("NCCL", "NCCL_MNNVL_ENABLE", "2.21.5",
                          "NVIDIA/nccl src/init.cc @ v2.21.5-1: NCCL_PARAM(MNNVLEnable, \"MNNVL_ENABLE\", 2)")
SLURM_BLOCK_TOPOLOGY = Floor("Slurm", "TopologyPlugin=topology/block", "23.11",
                             "SchedMD/slurm src/plugins/topology/block, new in slurm-23-11-1-1")
SLURM_SEGMENT = Floor("Slurm", "sbatch --segment and SwitchType=switch/nvidia_imex", "24.05",
                      "SchedMD/slurm doc/man/man1/sbatch.1 and src/plugins/switch/nvidia_imex, new in slurm-24-05-1-1")


def nccl_gap(version: Optional[str]) -> Optional[Floor]:
    """The floor a pinned NCCL misses for the generated MNNVL job (it exports NCCL_MNNVL_ENABLE=1)."""
    if version is None or Version.parse_or_none(version) is None:
        return None
    return None if NCCL_MNNVL_ENABLE.met_by(version) else NCCL_MNNVL_ENABLE


def slurm_gap(version: Optional[str]) -> Optional[Floor]:
    """The floor a pinned Slurm misses for block topology, ``--segment`` and per-job IMEX channels."""
    if version is None or Version.parse_or_none(version) is None:
        return None
    for floor in (SLURM_BLOCK_TOPOLOGY, SLURM_SEGMENT):
        if not floor.met_by(version):
            return floor
    return None


def domain_nodes(domain_gpus: int, gpus_per_node: int) -> int:
    """VMs in one NVLink domain (NVL72 with 4 GPUs per VM: 18)."""
    return domain_gpus // gpus_per_node


def segment_size(test_nodes: int, nodes_per_domain: int) -> Optional[int]:
    """``--segment`` for a job of ``test_nodes``: all of it inside one domain when it fits, else one
    segment per whole domain; None when neither divides (sbatch requires the node count to be a
    multiple of the segment size)."""
    if test_nodes <= nodes_per_domain:
        return test_nodes
    return nodes_per_domain if test_nodes % nodes_per_domain == 0 else None
