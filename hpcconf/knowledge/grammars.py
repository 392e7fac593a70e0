"""Validators for the string-valued NCCL / UCX / UCC / Open MPI settings.

Each validator re-implements the consumer's own parser (named in its docstring) and returns
:class:`ValueProblem` s that point into the value (0-based ``offset``, ``length``), so the lint
engine can turn them into positioned diagnostics. ``fatal`` means the consumer rejects the
setting (init error); otherwise the consumer accepts it but reads something the author probably
did not mean (a token ignored, a device that never matches, a silent default).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Mapping

from ..diagnostics import Severity
from .c_numbers import c_strtol
from .nccl_env import NcclVersion, VersionLike, lookup, newest_version
from .openmpi import UCX_SOCKCM_REMOVED, has_coll_hcoll
from .versions import Version


@dataclass(frozen=True)
class ValueProblem:
    offset: int  # 0-based character offset in the value
    length: int
    message: str
    hint: str = ""
    fatal: bool = False  # the consumer rejects the value (initialisation fails)
    severity: Severity = Severity.WARNING


def _err(offset: int, length: int, message: str, hint: str = "", fatal: bool = False) -> ValueProblem:
    return ValueProblem(offset, max(length, 1), message, hint, fatal, Severity.ERROR)


def _warn(offset: int, length: int, message: str, hint: str = "") -> ValueProblem:
    return ValueProblem(offset, max(length, 1), message, hint, False, Severity.WARNING)


def _info(offset: int, length: int, message: str, hint: str = "") -> ValueProblem:
    return ValueProblem(offset, max(length, 1), message, hint, False, Severity.INFO)


def _nccl(version: VersionLike | None) -> NcclVersion:
    return newest_version() if version is None else NcclVersion.parse(version)


def strtok(text: str, delimiters: str, base: int = 0) -> list[tuple[str, int]]:
    """C ``strtok``: non-empty pieces between any of ``delimiters``, with their offsets."""
    pieces, start = [], None
    for index, ch in enumerate(text + delimiters[0]):
        if ch in delimiters:
            if start is not None:
                pieces.append((text[start:index], base + start))
                start = None
        elif start is None:
            start = index
    return pieces


# ---------------------------------------------------------------------------------------------
# NCCL_ALGO / NCCL_PROTO  (src/graph/tuning.cc parseList; src/enqueue.cc before 2.24)

NCCL_FUNCTIONS = ("Broadcast", "Reduce", "AllGather", "ReduceScatter", "AllReduce")
# token -> (first release that knows it, first release that no longer knows it or None)
NCCL_ALGORITHMS: dict[str, tuple[str, str | None]] = {
    "Tree": ("2.4", None), "Ring": ("2.4", None), "CollNet": ("2.6", "2.14"),
    "CollNetDirect": ("2.14", None), "CollNetChain": ("2.14", None), "NVLS": ("2.17", None),
    "NVLSTree": ("2.18", None), "PAT": ("2.23", None),
}
NCCL_PROTOCOLS: dict[str, tuple[str, str | None]] = {"LL": ("2.4", None), "LL128": ("2.5", None),
                                                      "Simple": ("2.4", None)}
PER_FUNCTION_SYNTAX_SINCE = "2.24"  # also: unknown tokens fatal (ncclInvalidUsage) since 2.24


def _valid_tokens(table: Mapping[str, tuple[str, str | None]], version: NcclVersion) -> list[str]:
    return [name for name, (since, until) in table.items()
            if version.at_least(since) and (until is None or version.key < NcclVersion.parse(until).key)]


def _token_hint(token: str, table: Mapping[str, tuple[str, str | None]], valid: list[str]) -> str:
    for name, (since, until) in table.items():
        if name.lower() == token.strip().lower():
            if token != token.strip():
                return f"remove the spaces around {name!r}"
            span = f"from NCCL {since}" + (f" until {until} (exclusive)" if until else "")
            extra = "; use CollNetDirect or CollNetChain" if name == "CollNet" else ""
            return f"{name} is valid {span}{extra}"
    if "#" in token:
        return "there are no comments inside values; remove the '# ...' part"
    return "valid here: " + ", ".join(valid)


def check_nccl_list(value: str, kind: str, version: VersionLike | None = None) -> list[ValueProblem]:
    """NCCL_ALGO (``kind="algo"``) or NCCL_PROTO (``kind="proto"``) as NCCL ``version`` parses it."""
    ver = _nccl(version)
    table = NCCL_ALGORITHMS if kind == "algo" else NCCL_PROTOCOLS
    valid = _valid_tokens(table, ver)
    if ver.key >= NcclVersion.parse(PER_FUNCTION_SYNTAX_SINCE).key:
        return _parse_list_224(value, table, valid)
    return _parse_list_legacy(value, kind, table, valid, ver)


def check_nccl_algo(value: str, version: VersionLike | None = None) -> list[ValueProblem]:
    return check_nccl_list(value, "algo", version)


def check_nccl_proto(value: str, version: VersionLike | None = None) -> list[ValueProblem]:
    return check_nccl_list(value, "proto", version)


def _parse_list_224(value: str, table: Mapping[str, tuple[str, str | None]], valid: list[str]) -> list[ValueProblem]:
    """tuning.cc parseList: ``[^]list[;func:[^]list]...``; the first bad token aborts init."""
    problems: list[ValueProblem] = []
    lowered = {v.lower(): v for v in valid}
    for entry, entry_at in strtok(value, ";"):
        parts = strtok(entry, ":", entry_at)
        if len(parts) == 1:
            if entry_at != 0:  # NCCL: fullToken != fullStr
                return problems + [_err(entry_at, len(entry), f'All entries except the first must have a prefix: "{value}" '
                                        f"({entry!r} has no 'function:')",
                                        "write e.g. allreduce:tree,ring; only the first entry may omit it", True)]
            prefix, (elems, elems_at) = None, parts[0]
        else:
            prefix, (elems, elems_at) = parts[0], parts[1]
            if len(parts) > 2:
                rest_at = parts[2][1]
                problems.append(_warn(rest_at, entry_at + len(entry) - rest_at,
                                      "NCCL ignores everything after the second ':' of an entry",
                                      "separate entries with ';'"))
        if prefix is not None and prefix[0].lower() not in {f.lower() for f in NCCL_FUNCTIONS}:
            return problems + [_err(prefix[1], len(prefix[0]), f'Unrecognized prefix token "{prefix[0]}" when parsing "{value}"',
                                    "functions: " + ", ".join(NCCL_FUNCTIONS), True)]
        if elems.startswith("^"):
            elems, elems_at = elems[1:], elems_at + 1
        for token, at in strtok(elems, ",", elems_at):
            if token.lower() not in lowered:
                return problems + [_err(at, len(token), f'Unrecognized element token "{token}" when parsing "{value}"',
                                        _token_hint(token, table, valid), True)]
    return problems


def _parse_list_legacy(value: str, kind: str, table: Mapping[str, tuple[str, str | None]], valid: list[str],
                       ver: NcclVersion) -> list[ValueProblem]:
    """Before 2.24: ``[^]a,b,...``; unknown tokens are silently ignored."""
    problems: list[ValueProblem] = []
    negate = value.startswith("^")
    body, base = (value[1:], 1) if negate else (value, 0)
    lowered = {v.lower() for v in valid}
    known = 0
    for token, at in strtok(body, ",", base):
        if token.lower() in lowered:
            known += 1
            continue
        hint = _token_hint(token, table, valid)
        if ":" in token or ";" in token:
            hint = f"per-function lists (func:list;...) need NCCL {PER_FUNCTION_SYNTAX_SINCE}+"
        problems.append(_err(at, len(token), f"NCCL {ver} ignores the unknown token {token!r}", hint))
    if value and not negate and known == 0:
        what = "algorithm" if kind == "algo" else "protocol"
        problems.append(_err(0, len(value), f"NCCL {ver} recognises no {what} in {value!r}, which leaves none enabled",
                             "name at least one of: " + ", ".join(valid)))
    return problems


# ---------------------------------------------------------------------------------------------
# NCCL_IB_HCA / NCCL_SOCKET_IFNAME  (utils.cc parseStringList + net_ib/init.cc, socket.cc)

MAX_IB_DEVS = 32
MAX_IFS = 16
IB_RAIL_PLANE_SINCE = "2.29.7"


@dataclass(frozen=True)
class IfEntry:
    name: str
    port: int | None  # None: every port (no ':port')
    offset: int
    extra: tuple[str, ...] = ()  # fields after the port (rail, plane from 2.29.7)


@dataclass(frozen=True)
class IfList:
    exclude: bool  # leading '^'
    exact: bool  # '=' after the optional '^'
    entries: tuple[IfEntry, ...] = field(default_factory=tuple)


def _atoi(text: str) -> int:
    match = re.match(r"\s*([+-]?\d+)", text)
    return int(match.group(1)) if match else 0


def parse_if_list(value: str, max_entries: int = MAX_IB_DEVS) -> IfList:
    """``[^][=]name[:port[:...]][,...]`` as NCCL reads it (prefixes apply to the whole list)."""
    at = 0
    exclude = value.startswith("^")
    at += exclude
    exact = value[at:at + 1] == "="
    at += exact
    entries = []
    for item, item_at in strtok(value[at:], ",", at):
        name, _, rest = item.partition(":")
        if not name:
            continue  # ':1' with no name: NCCL skips it
        fields = rest.split(":") if rest else []
        port = _atoi(fields[0]) if fields else None
        entries.append(IfEntry(name, port, item_at, tuple(fields[1:])))
        if len(entries) == max_entries:
            break
    return IfList(exclude, exact, tuple(entries))


def _if_list_problems(value: str, what: str, max_entries: int) -> list[ValueProblem]:
    problems: list[ValueProblem] = []
    if value.startswith("=^"):
        problems.append(_err(0, 2, f"'=^' makes '^' part of the first {what} name, so it matches nothing",
                             "write ^= (exclude, then exact match)"))
    head = len(value) - len(value.lstrip("^="))
    items = strtok(value[head:], ",", head)
    if len(items) > max_entries:
        extra_at = items[max_entries][1]
        problems.append(_warn(extra_at, len(value) - extra_at,
                              f"NCCL reads only the first {max_entries} entries; the rest are ignored",
                              f"list at most {max_entries} {what}s"))
    for item, at in items:
        name = item.split(":", 1)[0]
        if name[:1] in "^=" and at != 0:
            problems.append(_err(at, 1, f"{name[0]!r} inside the list is part of the name {name!r}, which matches "
                                 f"no {what}", "'^' and '=' apply to the whole list and go once at its start"))
        if name != name.strip() or re.search(r"\s", name):  # a space, tab or newline: one name to NCCL
            problems.append(_err(at, len(item), f"{what} name {name!r} contains whitespace and matches nothing",
                                 "remove the spaces: entries are separated by ',' only"))
    return problems


def check_ib_hca(value: str, version: VersionLike | None = None) -> list[ValueProblem]:
    """NCCL_IB_HCA: ``[^][=]name[:port[:rail[:plane]]][,...]`` (net_ib/init.cc)."""
    ver = _nccl(version)
    problems = _if_list_problems(value, "HCA", MAX_IB_DEVS)
    parsed = parse_if_list(value, MAX_IB_DEVS)
    for entry in parsed.entries:
        item = value[entry.offset:].split(",", 1)[0]
        port_text = item.split(":")[1] if ":" in item else None
        if port_text is not None and not re.fullmatch(r"\d+", port_text):
            problems.append(_err(entry.offset + len(entry.name) + 1, len(port_text),
                                 f"port {port_text!r} of {entry.name} reads as {entry.port}",
                                 "ports are numbers starting at 1, e.g. mlx5_0:1"))
        elif entry.port == 0:
            problems.append(_err(entry.offset + len(entry.name) + 1, 1, "port 0 matches no IB port",
                                 "IB ports start at 1"))
        if entry.extra and not ver.at_least(IB_RAIL_PLANE_SINCE):
            problems.append(_info(entry.offset, len(item), f"NCCL {ver} ignores the fields after the port in {item!r}",
                                  f"rail/plane fields are read from NCCL {IB_RAIL_PLANE_SINCE}"))
        if entry.name.startswith("mlx5_an") and not parsed.exclude:
            problems.append(_warn(entry.offset, len(entry.name), f"{entry.name} is the Azure accelerated-networking "
                                  "(Ethernet) VF, not an InfiniBand HCA", "exclude it with ^=mlx5_an0 or list only "
                                  "the IB HCAs"))
    return problems


def check_socket_ifname(value: str) -> list[ValueProblem]:
    """NCCL_SOCKET_IFNAME: ``[^][=]prefix[,...]`` (misc/socket.cc); one character or less is ignored."""
    if len(value) <= 1:
        return [_warn(0, len(value), f"NCCL ignores NCCL_SOCKET_IFNAME={value!r} (one character or less) and picks "
                      "an interface itself (ib* first)", "name the interface, e.g. eth0")]
    problems = _if_list_problems(value, "interface", MAX_IFS)
    for entry in parse_if_list(value, MAX_IFS).entries:
        if entry.port is not None:
            problems.append(_info(entry.offset + len(entry.name), 1, "NCCL ignores ':...' after an interface name",
                                  "list interface names only"))
    return problems


# ---------------------------------------------------------------------------------------------
# NCCL_P2P_LEVEL / NCCL_NET_GDR_LEVEL  (graph/paths.cc ncclGetLevel)

PATH_LEVELS: dict[str, str] = {"LOC": "2.6.4", "NVL": "2.6.4", "NVB": "2.9.9", "C2C": "2.26", "PIX": "2.6.4",
                               "PXB": "2.6.4", "P2C": "2.27", "PXN": "2.12.7", "PHB": "2.6.4", "SYS": "2.6.4"}
LEGACY_LEVELS = ("LOC", "PIX", "PXB", "PHB", "SYS", "SYS")  # levelsOldToNew, index = old number (max 5)


def check_path_level(value: str, version: VersionLike | None = None, name: str = "NCCL_P2P_LEVEL") -> list[ValueProblem]:
    """A path level: a name (exact, upper case) or a legacy number 0-5; anything else is ignored (a warning:
    NCCL starts, with its default level)."""
    ver = _nccl(version)
    valid = [level for level, since in PATH_LEVELS.items() if ver.at_least(since)]
    if value in valid or value == "":  # empty: as if unset
        return []
    if value[:1].isdigit():
        number = c_strtol(value)
        level = LEGACY_LEVELS[min(number, len(LEGACY_LEVELS) - 1)]
        if not re.fullmatch(r"\d+", value):
            return [_warn(0, len(value), f"{name}={value!r} reads as the legacy number {number} ({level})",
                          f"write {name}={level}")]
        return [_info(0, len(value), f"legacy numeric {name}={value} means {level}", f"write {name}={level}")]
    if value.upper() in valid:
        return [_warn(0, len(value), f"{name}={value!r} is not recognised (names are case-sensitive); NCCL silently "
                     "keeps its default", f"write {name}={value.upper()}")]
    if value in PATH_LEVELS:
        return [_warn(0, len(value), f"NCCL {ver} does not know level {value} and silently keeps its default",
                     f"{value} is read from NCCL {PATH_LEVELS[value]}; valid here: " + ", ".join(valid))]
    return [_warn(0, len(value), f"{name}={value!r} is not a level; NCCL silently keeps its default",
                 "valid: " + ", ".join(valid) + " (or legacy 0-5)")]


# ---------------------------------------------------------------------------------------------
# NCCL_DEBUG / NCCL_DEBUG_SUBSYS (debug.cc) and integer NCCL_PARAMs (misc/param.cc)

NCCL_DEBUG_LEVELS = ("VERSION", "WARN", "INFO", "ABORT", "TRACE")
NCCL_DEBUG_SUBSYSTEMS = ("INIT", "COLL", "P2P", "SHM", "NET", "GRAPH", "TUNING", "ENV", "ALLOC", "ALLOC_HOST",
                         "CALL", "PROXY", "NVLS", "BOOTSTRAP", "REG", "PROFILE", "RAS", "DESTROY", "ALL")


def check_nccl_debug(value: str) -> list[ValueProblem]:
    if value.upper() in NCCL_DEBUG_LEVELS or value == "":
        return []
    return [_warn(0, len(value), f"NCCL_DEBUG={value!r} is not a level; NCCL logs nothing",
                  "use one of " + ", ".join(NCCL_DEBUG_LEVELS))]


def check_nccl_debug_subsys(value: str) -> list[ValueProblem]:
    body, base = (value[1:], 1) if value.startswith("^") else (value, 0)
    return [_warn(at, len(token), f"unknown NCCL_DEBUG_SUBSYS entry {token!r} is ignored",
                  "subsystems: " + ", ".join(NCCL_DEBUG_SUBSYSTEMS))
            for token, at in strtok(body, ",", base) if token.upper() not in NCCL_DEBUG_SUBSYSTEMS]


def check_nccl_int_param(name: str, value: str) -> list[ValueProblem]:
    """Integer NCCL_PARAMs use ``strtoll(value, 0)``: junk after the number is silently dropped."""
    if value == "":
        return []
    match = re.match(r"\s*[+-]?(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9]\d*)", value)
    if not match:
        return [_err(0, len(value), f"{name}={value!r} is not a number; NCCL reads it as 0",
                     "write a decimal (or 0x hex) integer")]
    if match.end() != len(value):
        return [_warn(match.end(), len(value) - match.end(),
                      f"{name}={value!r} reads as {c_strtol(value[:match.end()])}; NCCL ignores the rest",
                      "write the number only")]
    return []


# ---------------------------------------------------------------------------------------------
# UCX_TLS / UCX_NET_DEVICES  (ucp/core/ucp_context.c, ucs/config/parser.c)

UCX_ALIASES = {
    "all": (), "sm": ("posix", "sysv", "xpmem", "knem", "cma"), "shm": ("posix", "sysv", "xpmem", "knem", "cma"),
    "mm": ("posix", "sysv", "xpmem"), "ib": ("rc_verbs", "rc_mlx5", "ud_verbs", "ud_mlx5", "dc_mlx5"),
    "rc": ("rc_mlx5", "rc_verbs"), "rc_v": ("rc_verbs",), "rc_x": ("rc_mlx5",), "ud": ("ud_mlx5", "ud_verbs"),
    "ud_v": ("ud_verbs",), "ud_x": ("ud_mlx5",), "dc": ("dc_mlx5",), "dc_x": ("dc_mlx5",),
    "cuda": ("cuda_copy", "cuda_ipc", "gdr_copy"), "rocm": ("rocm_copy", "rocm_ipc", "rocm_gdr"),
    "ze": ("ze_copy",), "gaudi": ("gaudi_gdr",), "gga": ("gga_mlx5",), "ugni": ("ugni_rdma", "ugni_udt", "ugni_smsg"),
}
UCX_TRANSPORTS = ("self", "tcp", "posix", "sysv", "xpmem", "knem", "cma", "rc_verbs", "rc_mlx5", "ud_verbs",
                  "ud_mlx5", "dc_mlx5", "srd", "gga_mlx5", "rc_gda", "cuda_copy", "cuda_ipc", "gdr_copy",
                  "rocm_copy", "rocm_ipc", "rocm_gdr", "ze_copy", "gaudi_gdr", "ugni_rdma", "ugni_udt", "ugni_smsg")
UCX_REMOVED = {"sockcm": (UCX_SOCKCM_REMOVED, "sockcm was removed in UCX 1.11; connection managers are chosen by "
                                  "UCX_SOCKADDR_TLS_PRIORITY (rdmacm,tcp)")}


def check_ucx_tls(value: str, ucx_version: str | None = None) -> list[ValueProblem]:
    """UCX_TLS allow-list: ``[^]name[,name...]``; aliases expand, ``\\name`` disables aliasing."""
    problems: list[ValueProblem] = []
    negate = value.startswith("^")
    body, base = (value[1:], 1) if negate else (value, 0)
    tokens = strtok(body, ",", base)
    usable = 0
    for token, at in tokens:
        name = token[1:] if token.startswith("\\") else token
        if name in UCX_ALIASES or name in UCX_TRANSPORTS:
            usable += 1
            if name == "all" and len(tokens) > 1:
                problems.append(_warn(at, len(token), "'all' must stand alone in UCX_TLS", "use UCX_TLS=all or a list"))
            continue
        if name in UCX_REMOVED:
            since, why = UCX_REMOVED[name]
            if ucx_version is not None and not Version.parse(ucx_version).at_least(since):
                usable += 1
                continue
            problems.append(_warn(at, len(token), f"UCX_TLS entry {name!r}: {why}", f"remove {name}"))
            continue
        lowered = name.lower().strip()
        hint = (f"transport names are lower case: {lowered}" if lowered in UCX_ALIASES or lowered in UCX_TRANSPORTS
                else "aliases: " + ", ".join(UCX_ALIASES) + "; transports: " + ", ".join(UCX_TRANSPORTS[:12]) + ", ...")
        if name == "rdmacm":
            hint = "rdmacm is a connection manager (UCX_SOCKADDR_TLS_PRIORITY), not a UCX_TLS transport"
        problems.append(_warn(at, len(token), f"UCX_TLS entry {token!r} names no UCX transport or alias; UCX "
                              "skips it (a warning only with UCX_WARN_INVALID_CONFIG=y)", hint))
    if tokens and usable == 0 and not negate:
        problems.append(_err(0, len(value), f"UCX_TLS={value!r} leaves no usable transport; UCX fails to initialise",
                             "list at least one transport, e.g. rc,sm,self or tcp,sm,self"))
    return problems


# RDMA device names (UCX_NET_DEVICES, NCCL_IB_HCA): Mellanox mlx4/mlx5, Broadcom, Intel, HiSilicon, QLogic, EFA, soft-RoCE.
IB_DEVICE_RE = re.compile(r"^(mlx\d+_\d+|mlx5_\w+|bnxt_re\d+|irdma\w*|hns_\w+|qedr\d+|efa\d*|rxe\w*)$")


def check_ucx_net_devices(value: str) -> list[ValueProblem]:
    """UCX_NET_DEVICES: ``[^]dev[,dev...]``; IB devices are named ``mlx5_0:1`` (device:port)."""
    problems: list[ValueProblem] = []
    body, base = (value[1:], 1) if value.startswith("^") else (value, 0)
    tokens = strtok(body, ",", base)
    for token, at in tokens:
        if token != token.strip():
            problems.append(_err(at, len(token), f"device {token!r} contains whitespace and matches nothing",
                                 "separate devices with ',' only"))
            continue
        if token == "all":
            if len(tokens) > 1:
                problems.append(_warn(at, 3, "'all' must stand alone in UCX_NET_DEVICES", "use all or a list"))
            continue
        name, _, port = token.partition(":")
        if port and not port.isdigit():
            problems.append(_err(at + len(name) + 1, len(port), f"port {port!r} of {name} is not a number",
                                 "write device:port, e.g. mlx5_0:1"))
        elif not port and IB_DEVICE_RE.match(name):
            problems.append(_warn(at, len(token), f"UCX names RDMA devices with their port ({name}:1); {name!r} "
                                  "matches no device", f"write {name}:1"))
    return problems


# ---------------------------------------------------------------------------------------------
# UCC_<CL|TL>_<NAME>_TUNE  (ucc_base_iface.c, coll_score/ucc_coll_score.c)

UCC_COLL_TYPES = ("allgather", "allgatherv", "allreduce", "alltoall", "alltoallv", "barrier", "bcast", "fanin",
                  "fanout", "gather", "gatherv", "reduce", "reduce_scatter", "reduce_scatterv", "scatter", "scatterv")
UCC_MEM_TYPES = ("host", "cuda", "cuda_managed", "rocm", "rocm_managed")
_UCC_MEM_ALIASES = {"cudamanaged": "cuda_managed", "rocmmanaged": "rocm_managed"}
_UNITS = {"B": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40, "P": 1 << 50, "E": 1 << 60}
UCC_INF = float("inf")


@dataclass(frozen=True)
class UccTuneToken:
    text: str
    offset: int
    coll_types: tuple[str, ...] = ()  # empty: all
    mem_types: tuple[str, ...] = ()  # empty: all
    msg_ranges: tuple[tuple[float, float], ...] = ()  # empty: 0-inf
    team_sizes: tuple[tuple[float, float], ...] = ()  # empty: any
    score: float | None = None  # inf = UCC_SCORE_MAX
    alg: str | None = None


def ucs_memunits(text: str) -> float | None:
    """``ucs_str_to_memunits``: inf, auto, or a number with an optional K/M/G... (+B) suffix."""
    if text.lower() == "inf":
        return UCC_INF
    if text.lower() == "auto":
        return -1
    match = re.match(r"\s*([+-]?\d+)(.?)(.?)", text)
    if not match:
        return None
    number, unit, second = match.groups()
    if not unit:
        return int(number)
    scale = _UNITS.get(unit.upper())
    if not scale or (second and second.lower() != "b"):
        return None
    return int(number) * scale


def _ucc_ranges(text: str) -> tuple[tuple[float, float], ...] | None:
    ranges = []
    for piece, _ in strtok(text, ","):
        ends = [e for e, _ in strtok(piece, "-")]
        if len(ends) != 2:
            return None
        start, end = ucs_memunits(ends[0]), ucs_memunits(ends[1])
        if start is None or end is None:
            return None
        ranges.append((start, end))
    return tuple(ranges)


def _ucc_team_sizes(text: str) -> tuple[tuple[float, float], ...] | None:
    if not (text.startswith("[") and text.endswith("]")):
        return None
    sizes: list[tuple[float, float]] = []
    for piece, _ in strtok(text[1:-1], ","):
        ends = [e for e, _ in strtok(piece, "-")]
        if len(ends) == 1 and ends[0].isdigit():
            sizes.append((int(ends[0]), int(ends[0])))
        elif len(ends) == 2 and ends[0].isdigit() and (ends[1].isdigit() or ends[1].lower() == "inf"):
            low, high = int(ends[0]), UCC_INF if ends[1].lower() == "inf" else int(ends[1])
            if high < low:
                return None
            sizes.append((low, high))
        else:
            return None
    return tuple(sizes) if sizes else None


def _ucc_list(text: str, names: tuple[str, ...], aliases: Mapping[str, str] | None = None) -> tuple[str, ...] | None:
    found = []
    for piece, _ in strtok(text, ","):
        name = piece.lower()
        name = (aliases or {}).get(name, name)
        if name not in names:
            return None
        found.append(name)
    return tuple(found) or None


def parse_ucc_tune(value: str) -> tuple[list[UccTuneToken], list[ValueProblem]]:
    """Parse ``token#token...``; each token is ``:``-separated qualifiers, each kind at most once."""
    tokens: list[UccTuneToken] = []
    problems: list[ValueProblem] = []
    for text, at in strtok(value, "#"):
        fields: dict[str, object] = {}
        for qualifier, q_at in strtok(text, ":", at):
            parsers: list[tuple[str, Callable[[str], object]]] = [
                ("coll_types", lambda q: _ucc_list(q, UCC_COLL_TYPES)),
                ("mem_types", lambda q: _ucc_list(q, UCC_MEM_TYPES, _UCC_MEM_ALIASES)),
                ("score", lambda q: UCC_INF if q.lower() == "inf" else int(q) if q.isdigit() else None),
                ("msg_ranges", _ucc_ranges), ("team_sizes", _ucc_team_sizes),
                ("alg", lambda q: q[1:] if q.startswith("@") else None)]
            for key, parse in parsers:
                if key in fields:
                    continue
                parsed = parse(qualifier)
                if parsed is not None:
                    fields[key] = parsed
                    break
            else:
                problems.append(_err(q_at, len(qualifier), f"UCC: failed to parse token {qualifier!r} in {text!r}",
                                     _ucc_hint(qualifier, fields), fatal=True))
                break
        else:
            token = UccTuneToken(text, at, **fields)  # type: ignore[arg-type]
            tokens.append(token)
            problems.extend(_ucc_token_problems(token))
    return tokens, problems


def _ucc_hint(qualifier: str, fields: Mapping[str, object]) -> str:
    lowered = qualifier.lower()
    if lowered in UCC_COLL_TYPES or lowered in UCC_MEM_TYPES or lowered == "inf" or qualifier.isdigit():
        return "each qualifier kind (collective list, memory types, score, ...) may appear once per token"
    if re.fullmatch(r"\d+(-\d+)*(,\d+(-\d+)*)*", qualifier):
        return "team sizes need brackets, e.g. [2-8]"
    return ("qualifiers: collectives (" + ",".join(UCC_COLL_TYPES[:5]) + ",...), memory types (" +
            ",".join(UCC_MEM_TYPES) + "), message ranges (0-4k,1M-inf), team sizes ([2-8]), score (int or inf), "
            "@algorithm")


def _ucc_token_problems(token: UccTuneToken) -> list[ValueProblem]:
    problems = []
    if token.score is None and token.alg is None:
        problems.append(_warn(token.offset, len(token.text), f"UCC token {token.text!r} has neither a score nor an "
                              "@algorithm and changes nothing", "add a score (e.g. inf) or @alg"))
    for start, end in token.msg_ranges:
        if start >= end:
            problems.append(_err(token.offset, len(token.text), f"message range {start:g}-{end:g} is empty "
                                 "(start must be below end); UCC rejects it", "write start-end with start < end",
                                 fatal=True))
    if token.score == 0:
        problems.append(_info(token.offset, len(token.text), "score 0 disables the matching collectives for this "
                              "component", "use a positive score to select it"))
    return problems


def check_ucc_tune(value: str) -> list[ValueProblem]:
    return parse_ucc_tune(value)[1]


# ---------------------------------------------------------------------------------------------
# Open MPI MCA variables for coll/ucc and coll/hcoll

HCOLL_PRIORITY = 90
TUNED_PRIORITY = 30
_MCA_TRUE = ("1", "true", "yes", "enabled", "t", "y")
_MCA_FALSE = ("0", "false", "no", "disabled", "f", "n")


def mca_name(name: str) -> str:
    """``OMPI_MCA_coll_ucc_enable`` -> ``coll_ucc_enable``."""
    return name[len("OMPI_MCA_"):] if name.startswith("OMPI_MCA_") else name


def mca_bool(value: str) -> bool | None:
    lowered = value.strip().lower()
    if lowered in _MCA_TRUE or re.fullmatch(r"[1-9]\d*", lowered):
        return True
    if lowered in _MCA_FALSE:
        return False
    return None


def check_ompi_mca(name: str, value: str, ompi_version: str | None = None) -> list[ValueProblem]:
    """One MCA variable (``OMPI_MCA_x`` or ``x``) of coll/ucc or coll/hcoll."""
    var = mca_name(name)
    version = Version.parse_or_none(ompi_version)
    if var.startswith("coll_hcoll") and version is not None and not has_coll_hcoll(version):
        return [_warn(0, len(value), f"Open MPI {ompi_version} has no coll/hcoll (removed in 6.0); {var} is unknown "
                      "and only warned about", "drop the coll_hcoll settings; use coll/ucc")]
    if var.endswith("_enable"):
        if mca_bool(value) is None:
            return [_err(0, len(value), f"{var}={value!r} is not a boolean",
                         "use 1 or 0 (true/false, yes/no, enabled/disabled)")]
    elif var.endswith("_priority"):
        if not re.fullmatch(r"\s*-?\d+\s*", value):
            return [_err(0, len(value), f"{var}={value!r} is not an integer", "use e.g. 100")]
    return []


def check_ompi_coll_ucc(env: Mapping[str, str], ompi_version: str | None = None) -> list[tuple[str, ValueProblem]]:
    """Settings that together decide whether Open MPI uses UCC collectives: (variable, problem)."""
    get = {mca_name(k): v for k, v in env.items() if k.startswith("OMPI_MCA_") or k.startswith("coll_")}
    wants_ucc = any(k.startswith("UCC_") for k in env) or "coll_ucc_enable" in get or "coll_ucc_priority" in get
    out: list[tuple[str, ValueProblem]] = []
    enable = mca_bool(get.get("coll_ucc_enable", ""))
    if wants_ucc and enable is None and "coll_ucc_enable" not in get:
        out.append(("OMPI_MCA_coll_ucc_enable", _warn(0, 1, "UCC settings are present but coll_ucc_enable is unset; "
                    "recent Open MPI defaults it to 0 (UCC collectives off)", "set OMPI_MCA_coll_ucc_enable=1")))
    if enable:
        raw = get.get("coll_ucc_priority")
        priority = int(raw) if raw is not None and re.fullmatch(r"\s*-?\d+\s*", raw) else None
        effective = 10 if priority is None else priority
        version = Version.parse_or_none(ompi_version)
        hcoll_present = version is None or has_coll_hcoll(version)
        hcoll_on = mca_bool(get.get("coll_hcoll_enable", "1")) is not False
        rival, rival_priority = (("coll/hcoll", HCOLL_PRIORITY) if hcoll_present and hcoll_on
                                 else ("coll/tuned", TUNED_PRIORITY))
        if effective <= rival_priority:
            where = "unset (default 10 in recent Open MPI)" if priority is None else f"{priority}"
            out.append(("OMPI_MCA_coll_ucc_priority", _warn(0, len(raw or "x"), f"coll_ucc_priority is {where}, not above "
                        f"{rival} ({rival_priority}), which then wins the collectives",
                        f"set OMPI_MCA_coll_ucc_priority={max(100, rival_priority + 10)}")))
    return out


# ---------------------------------------------------------------------------------------------
# One entry point for the lint engine

def check_env_value(name: str, value: str, *, nccl_version: VersionLike | None = None,
                    ucx_version: str | None = None, ompi_version: str | None = None) -> list[ValueProblem]:
    """Problems of ``name=value`` per the grammar of ``name``; [] for names without one."""
    if name == "NCCL_ALGO":
        return check_nccl_algo(value, nccl_version)
    if name == "NCCL_PROTO":
        return check_nccl_proto(value, nccl_version)
    if name == "NCCL_IB_HCA":
        return check_ib_hca(value, nccl_version)
    if name in ("NCCL_SOCKET_IFNAME", "NCCL_OOB_NET_IFNAME"):
        return check_socket_ifname(value)
    if name in ("NCCL_P2P_LEVEL", "NCCL_NET_GDR_LEVEL"):
        return check_path_level(value, nccl_version, name)
    if name == "NCCL_DEBUG":
        return check_nccl_debug(value)
    if name == "NCCL_DEBUG_SUBSYS":
        return check_nccl_debug_subsys(value)
    if name == "UCX_TLS":
        return check_ucx_tls(value, ucx_version)
    if name == "UCX_NET_DEVICES":
        return check_ucx_net_devices(value)
    if re.fullmatch(r"UCC_(CL|TL)_[A-Z0-9]+_TUNE", name):
        return check_ucc_tune(value)
    if name.startswith("OMPI_MCA_coll_"):
        return check_ompi_mca(name, value, ompi_version)
    info = lookup(name)
    # NCCL_PARAM values go through strtoll; the newer DEFINE_NCCL_PARAM registry has typed parsers.
    if info is not None and info.read_via == "NCCL_PARAM" and _is_int_default(info.default):
        return check_nccl_int_param(name, value)
    return []


def _is_int_default(default: str) -> bool:
    return bool(re.match(r"^-?\d+\b", default.strip())) or default.startswith("INT_MIN")
