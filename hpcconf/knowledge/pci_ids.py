"""PCI ids node-feature-discovery labels by: the Mellanox virtual functions Azure's InfiniBand VMs expose.

Azure's AKS InfiniBand reference (Azure/aks-rdma-infiniband ``tests/setup-infra/network-operator-nfd.yaml``
at 700dabb4, 2026-07-16) labels ``feature.node.kubernetes.io/pci-15b3.present`` with a NodeFeatureRule that
matches ``pci.device`` ids ``101c`` and ``101e`` only, instead of labelling every Mellanox device: an
accelerated-networking Ethernet VF on a node without InfiniBand is also vendor 15b3 (ConnectX-4 Lx ``1016``,
ConnectX-5 ``1018``), and a whitelist of PCI class 02 labels that node too, so the NicClusterPolicy deploys
its DOCA driver and device plugins there. pci.ids names ``101c`` "MT28908 Family [ConnectX-6 Virtual
Function]" and ``101e`` "ConnectX Family mlx5Gen Virtual Function" (ConnectX-6 Dx and ConnectX-7 VFs).
NFD's ``pci.device`` feature holds every PCI device whatever the label whitelist (``source/pci/pci.go``:
``Discover`` keeps all of ``detectPci``; only ``GetLabels`` filters by ``deviceClassWhitelist``).
"""

from __future__ import annotations

from typing import Optional

from . import compat

MELLANOX_VENDOR = "15b3"
# PCI class 0207 (network controller, InfiniBand): what a ConnectX VF in InfiniBand mode reports; the same VF ids
# in Ethernet mode report 0200 (101e is the generic mlx5 Gen VF id, shared with ConnectX-6 Dx/7 Ethernet VFs).
# NFD's pci.device class is the sysfs class code's first four hex digits (node-feature-discovery v0.19.0
# source/pci/utils.go readSinglePciAttribute).
INFINIBAND_CLASS = "0207"
NFD_MELLANOX_LABEL = f"feature.node.kubernetes.io/pci-{MELLANOX_VENDOR}.present"
REFERENCE = "Azure/aks-rdma-infiniband tests/setup-infra/network-operator-nfd.yaml @700dabb4"
# HCA generation (skus/*.yaml infiniband.hca) -> the VF device ids its InfiniBand VFs have on Azure.
# ConnectX-5 is left out: its VF id (1018) is also accelerated networking's.
IB_VF_DEVICE_IDS: dict[str, tuple[str, ...]] = {"ConnectX-6": ("101c",), "ConnectX-7": ("101e",)}


def ib_vf_device_ids(hca: Optional[str]) -> Optional[tuple[str, ...]]:
    """The VF device ids of an HCA description ('ConnectX-7 VF' -> ('101e',)); None where no id tells it apart."""
    generation = compat.hca_generation(hca)
    return IB_VF_DEVICE_IDS.get(generation.generation) if generation is not None else None


def all_ib_vf_device_ids() -> tuple[str, ...]:
    return tuple(sorted({i for ids in IB_VF_DEVICE_IDS.values() for i in ids}))
