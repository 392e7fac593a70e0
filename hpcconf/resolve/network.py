"""Address-range overlap checks live in :mod:`hpcconf.knowledge.network`: the spec rule SPEC017 needs
them, and the spec layer may not import ``resolve``. Re-exported here for existing imports."""

from ..knowledge.network import AKS_DEFAULT_POD_CIDR, AKS_DEFAULT_SERVICE_CIDR, CidrOverlap, ipam_overlaps

__all__ = ["AKS_DEFAULT_POD_CIDR", "AKS_DEFAULT_SERVICE_CIDR", "CidrOverlap", "ipam_overlaps"]
