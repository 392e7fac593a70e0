"""Which NCCL algorithms a collective can run under a given ``NCCL_ALGO``, and a safe per-collective value.

NCCL_ALGO restricts the algorithms NCCL's tuner may pick; when the restriction leaves a collective
with no algorithm that can run, every call of that collective fails ("no algorithm/protocol
available"). Facts, from NVIDIA/nccl src/graph/tuning.cc at v2.28.9-1 (``ncclTopoTuneModel`` and
``ncclTopoInitTunerConstants``' enable matrix):

- Broadcast and Reduce run Ring only; AllGather and ReduceScatter run Ring, PAT, NVLS or
  CollNetDirect; AllReduce runs everything but PAT.
- NVLSTree is disabled on a single node (``comm->nNodes == 1``); NVLS (and NVLSTree) need NVLink
  SHARP (NVSwitch gen 3); NVLS across nodes and both CollNet algorithms need CollNet (SHARP in the
  InfiniBand fabric); PAT needs one GPU per node (``ncclPatEnable``: nNodes == nRanks).
- From 2.24.3 ``NCCL_ALGO`` is ``[^]list[;function:[^]list]...``: a ``function:`` entry replaces
  that function's list (``^`` negates it); the first entry may omit the prefix and then applies to
  every function. Before 2.24 only the global ``[^]list`` form exists (unknown tokens ignored).
- Point-to-point operations (send/recv, and nccl-tests' alltoall and sendrecv) are not tuned by
  NCCL_ALGO: they are reported as ``{"P2P"}``.
"""

from __future__ import annotations

from .grammars import NCCL_ALGORITHMS, NCCL_FUNCTIONS, PER_FUNCTION_SYNTAX_SINCE, strtok
from .nccl_env import NcclVersion, VersionLike, newest_version

# Algorithms each tuned function can run (tuning.cc's `continue`s in the model loop).
FUNCTION_ALGORITHMS: dict[str, frozenset[str]] = {
    "Broadcast": frozenset({"Ring"}),
    "Reduce": frozenset({"Ring"}),
    "AllGather": frozenset({"Ring", "PAT", "NVLS", "CollNetDirect"}),
    "ReduceScatter": frozenset({"Ring", "PAT", "NVLS", "CollNetDirect"}),
    "AllReduce": frozenset({"Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree"}),
}
# nccl-tests binary names (without _perf) and NCCL's function names, lower case -> NCCL function.
_FUNCTION_OF = {name.lower(): name for name in NCCL_FUNCTIONS} | {
    "all_reduce": "AllReduce", "all_gather": "AllGather", "reduce_scatter": "ReduceScatter",
}
P2P_OPERATIONS = frozenset({"sendrecv", "alltoall", "send", "recv", "gather", "scatter", "hypercube"})
FALLBACK_ALGORITHM = "Ring"  # runs every tuned function on any node count and fabric


def nccl_function(collective: str) -> str | None:
    """NCCL's function name for a collective (``all_gather`` or ``AllGather``), None for point-to-point."""
    key = collective.lower()
    if key in P2P_OPERATIONS:
        return None
    if key not in _FUNCTION_OF:
        raise ValueError(f"unknown collective {collective!r}; known: "
                         + ", ".join(sorted(set(_FUNCTION_OF) | P2P_OPERATIONS)))
    return _FUNCTION_OF[key]


def _version(version: VersionLike | None) -> NcclVersion:
    return newest_version() if version is None else NcclVersion.parse(version)


def _known_algorithms(version: NcclVersion) -> dict[str, str]:
    """Lower-case token -> canonical name, for the algorithms this NCCL knows."""
    return {name.lower(): name for name, (since, until) in NCCL_ALGORITHMS.items()
            if version.at_least(since) and (until is None or version.key < NcclVersion.parse(until).key)}


def _apply(elements: str, known: dict[str, str], strict: bool) -> frozenset[str]:
    """One ``[^]a,b`` list -> the set it enables (NCCL: listed set, or everything but the listed)."""
    negate = elements.startswith("^")
    names = set()
    for token, _ in strtok(elements[1:] if negate else elements, ","):
        name = known.get(token.lower())
        if name is None:
            if strict:
                raise ValueError(f"NCCL rejects algorithm token {token!r} (ncclInvalidUsage)")
            continue  # before 2.24: ignored
        names.add(name)
    return frozenset(known.values()) - names if negate else frozenset(names)


def enabled_algorithms(algo_setting: str | None, version: VersionLike | None = None) -> dict[str, frozenset[str]]:
    """Per NCCL function, the algorithms ``NCCL_ALGO=algo_setting`` leaves enabled (None: unset, all).

    Raises ValueError where NCCL itself rejects the value at init (2.24+: an unknown token or
    function, or a prefix-less entry after the first).
    """
    ver = _version(version)
    known = _known_algorithms(ver)
    table = {function: frozenset(known.values()) for function in NCCL_FUNCTIONS}
    if not algo_setting:
        return table
    if not ver.at_least(PER_FUNCTION_SYNTAX_SINCE):
        enabled = _apply(algo_setting, known, strict=False)
        return {function: enabled for function in table}
    for index, (entry, _) in enumerate(strtok(algo_setting, ";")):
        parts = [piece for piece, _ in strtok(entry, ":")]
        if len(parts) == 1:
            if index:
                raise ValueError(f"NCCL rejects {algo_setting!r}: every entry but the first needs a 'function:' prefix")
            targets, elements = list(NCCL_FUNCTIONS), parts[0]
        else:
            function = _FUNCTION_OF.get(parts[0].lower())
            if function is None or function not in NCCL_FUNCTIONS:
                raise ValueError(f"NCCL rejects the function prefix {parts[0]!r} in {algo_setting!r}")
            targets, elements = [function], parts[1]
        enabled = _apply(elements, known, strict=True)
        for function in targets:
            table[function] = enabled
    return table


def runnable_algorithms(function: str, nnodes: int, nvls: bool, *, ranks_per_node: int = 8,
                        collnet: bool = False) -> frozenset[str]:
    """The algorithms NCCL can run for ``function`` on this machine shape, NCCL_ALGO aside."""
    algorithms = set(FUNCTION_ALGORITHMS[function])
    if nnodes <= 1 or not nvls:
        algorithms.discard("NVLSTree")  # off on one node; needs NVLink SHARP
    if not nvls or (nnodes > 1 and not collnet):
        algorithms.discard("NVLS")
    if not collnet:
        algorithms -= {"CollNetDirect", "CollNetChain"}
    if ranks_per_node != 1 or nnodes <= 1:
        algorithms.discard("PAT")
    return frozenset(algorithms)


def algorithms_available(collective: str, algo_setting: str | None, nnodes: int, nvls: bool, *,
                         ranks_per_node: int = 8, collnet: bool = False,
                         version: VersionLike | None = None) -> frozenset[str]:
    """Algorithms ``collective`` may run under ``NCCL_ALGO=algo_setting`` on ``nnodes`` nodes.

    ``nvls``: the nodes have NVLink SHARP (NVSwitch gen 3) and NCCL_NVLS_ENABLE is not 0.
    An empty set means every call of that collective fails. Point-to-point operations
    (sendrecv, alltoall) are not governed by NCCL_ALGO and give ``{"P2P"}``.
    """
    function = nccl_function(collective)
    if function is None:
        return frozenset({"P2P"})
    enabled = enabled_algorithms(algo_setting, version)[function]
    return enabled & runnable_algorithms(function, nnodes, nvls, ranks_per_node=ranks_per_node, collnet=collnet)


def stranded_functions(algo_setting: str | None, nnodes: int, nvls: bool, *, ranks_per_node: int = 8,
                       collnet: bool = False, version: VersionLike | None = None) -> list[str]:
    """The NCCL functions left with no algorithm (each of their calls fails), in NCCL's order."""
    return [function for function in NCCL_FUNCTIONS
            if not algorithms_available(function, algo_setting, nnodes, nvls, ranks_per_node=ranks_per_node,
                                        collnet=collnet, version=version)]


def per_collective_algo(preferred: str, version: VersionLike | None = None) -> str | None:
    """An NCCL_ALGO that asks for ``preferred`` only where it can run, with Ring beside it.

    Each function that can run ``preferred`` gets ``function:preferred,Ring`` (Ring: so that one
    node, or a fabric without NVLS, still has an algorithm); the others keep NCCL's default. None
    where this NCCL has no per-function syntax (before 2.24): a global value would strand every
    function that cannot run ``preferred``, so it is better left unset.
    """
    ver = _version(version)
    if not ver.at_least(PER_FUNCTION_SYNTAX_SINCE):
        return None
    known = _known_algorithms(ver)
    name = known.get(preferred.lower())
    if name is None:
        raise ValueError(f"NCCL {ver} has no algorithm {preferred!r}")
    entries = [f"{function.lower()}:{name}" + ("" if name == FALLBACK_ALGORITHM else f",{FALLBACK_ALGORITHM}")
               for function in NCCL_FUNCTIONS if name in FUNCTION_ALGORITHMS[function]]
    return ";".join(entries)
