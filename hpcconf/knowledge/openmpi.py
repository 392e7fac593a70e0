"""Open MPI and UCX release facts the resolver, the spec checks and the MPI rules share.

Each threshold is a version string (compare with :mod:`hpcconf.knowledge.versions`) with the
upstream change that set it.
"""

from __future__ import annotations

from .versions import Version, VersionLike

# coll/ucc ships with Open MPI 5.0 (open-mpi/ompi PR #8969) and in v4.1.x from 4.1.4 (PR #10171).
OPENMPI_UCC_SINCE = "4.1.4"
# coll/hcoll was removed in Open MPI v6.0.x (open-mpi/ompi PR #13480).
OPENMPI_HCOLL_REMOVED = "6.0"
# UCX removed the sockcm transport in 1.11 (openucx/ucx v1.11.0 release notes).
UCX_SOCKCM_REMOVED = "1.11"

# UCX transports (and aliases) that run over InfiniBand/RoCE verbs (UCX ``src/uct/ib``).
IB_TRANSPORTS = frozenset({"ib", "rc", "rc_v", "rc_x", "rc_verbs", "rc_mlx5", "ud", "ud_v", "ud_x", "ud_verbs",
                           "ud_mlx5", "dc", "dc_x", "dc_mlx5", "rc_gda"})
NETWORK_TRANSPORTS = IB_TRANSPORTS | {"tcp", "srd"}


def has_coll_ucc(openmpi: VersionLike) -> bool:
    """Whether Open MPI ``openmpi`` has the coll/ucc component."""
    return Version.parse(openmpi).at_least(OPENMPI_UCC_SINCE)


def has_coll_hcoll(openmpi: VersionLike) -> bool:
    """Whether Open MPI ``openmpi`` still has the coll/hcoll component."""
    return not Version.parse(openmpi).at_least(OPENMPI_HCOLL_REMOVED)
