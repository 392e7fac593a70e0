"""Address ranges that must not overlap: the InfiniBand IPAM range against the AKS cluster's own.

A secondary-network IPAM range (whereabouts, on the HostDeviceNetwork) that overlaps the cluster's
service or pod CIDR gives pods addresses the cluster routes elsewhere: the kube-dns ClusterIP can
collide with an IB interface address, and nothing fails at build or apply time.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

# `az aks create` defaults: --service-cidr 10.0.0.0/16 (learn.microsoft.com/azure/aks/configure-kubenet);
# --pod-cidr 10.244.0.0/16 for kubenet and Azure CNI Overlay (learn.microsoft.com/azure/aks/azure-cni-overlay).
AKS_DEFAULT_SERVICE_CIDR = "10.0.0.0/16"
AKS_DEFAULT_POD_CIDR = "10.244.0.0/16"


@dataclass(frozen=True)
class CidrOverlap:
    name: str  # which cluster range: "service CIDR" or "pod CIDR"
    cidr: str
    shared: str  # the smaller of the two ranges, which lies wholly inside the other

    def message(self, ipam_range: str) -> str:
        return (f"IPAM range {ipam_range} overlaps the AKS {self.name} {self.cidr} ({self.shared} is in both): "
                "pods would get IB addresses the cluster routes elsewhere")


def ipam_overlaps(ipam_range: str, service_cidr: str | None = None,
                  pod_cidr: str | None = None) -> list[CidrOverlap]:
    """The AKS ranges ``ipam_range`` overlaps (defaults where a range is not given), in that order.

    Raises ValueError for a range that is not a CIDR. Two CIDR blocks overlap only when one
    contains the other, so ``shared`` is the smaller block.
    """
    ipam = ipaddress.ip_network(ipam_range, strict=False)
    out = []
    for name, cidr in (("service CIDR", service_cidr or AKS_DEFAULT_SERVICE_CIDR),
                       ("pod CIDR", pod_cidr or AKS_DEFAULT_POD_CIDR)):
        other = ipaddress.ip_network(cidr, strict=False)
        if ipam.version == other.version and ipam.overlaps(other):
            shared = ipam if ipam.prefixlen >= other.prefixlen else other
            out.append(CidrOverlap(name=name, cidr=str(other), shared=str(shared)))
    return out
