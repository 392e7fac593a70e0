"""NCCL environment-variable rules: names and values NCCL ignores, rejects or misuses.

They apply wherever an ``NCCL_*`` setting is written: nccl.conf, env files, ``export`` /
``mpirun -x`` in scripts and container commands, container ``env:`` and Dockerfile ``ENV``
(see :mod:`hpcconf.lint.settings`). Version-dependent facts come from
``hpcconf.knowledge.nccl_env`` (the release table) and NCCL's own parsers (``src/graph/tuning.cc``, ``src/misc/socket.cc``).
"""

from __future__ import annotations

import posixpath
import re
from typing import TYPE_CHECKING, Iterator

from ...artifacts import Kind
from ...diagnostics import Diagnostic, Severity
from ...parsers.k8s import pod_specs_anywhere
from ...rules_registry import rule
from ..context import LintContext
from ..document import Document, DocumentSet, per_deployment
from ..settings import SETTING_KINDS, Setting, env_settings
from ..workload import multi_node, no_ib_intent

if TYPE_CHECKING:
    from ...catalog import Infiniband
    from ...knowledge.grammars import IfList

GRAMMAR_RULES = {"NCCL_ALGO": "NCCL011", "NCCL_PROTO": "NCCL011", "NCCL_IB_HCA": "NCCL012",
                 "NCCL_P2P_LEVEL": "NCCL013", "NCCL_NET_GDR_LEVEL": "NCCL013"}


def _setting_finding(doc: Document, setting: Setting, message: str, hint: str,
                     severity: Severity | None = None, whole: bool = False) -> Diagnostic:
    """A finding at the setting's value, or (``whole``) from its name to the end of its value."""
    if whole:
        return doc.at_line(setting.line, message, hint=hint, column=setting.column, end_line=setting.value_at,
                           end_column=setting.end_column, severity=severity)
    return doc.at_line(setting.value_at, message, hint=hint, column=setting.value_column,
                       end_column=setting.end_column, severity=severity)


def _nccl_settings(doc: Document) -> list[Setting]:
    return [s for s in env_settings(doc, "NCCL_") if s.name == s.name.strip()]


# What shows a file runs on AMD GPUs, where RCCL (not NCCL) reads the NCCL_* names: in what it runs (a resource,
# a ROCm path, HIP/HSA variables), or in its path (MLPerf's config_MI325X_1x8x1_8b.sh). Comments are remarks, not
# what runs ("# on AMD use RCCL_..." in an NVIDIA job), so only a copyright line counts among them: it says
# who wrote the file (AMD's MLPerf configs), not where else it might run.
_AMD_SIGNAL = re.compile(r"amd\.com/gpu|\brocm|\brccl|MI[23]\d\dX?(?![A-Za-z0-9])|HIP_VISIBLE_DEVICES|HSA_",
                         re.IGNORECASE)
_AMD_COPYRIGHT = re.compile(r"^\s*(?:#|//)\s*copyright\b.*advanced micro devices", re.IGNORECASE | re.MULTILINE)
_COMMENT = re.compile(r"(?:^|(?<=\s))#.*$", re.MULTILINE)


def shows_amd_gpus(doc: Document) -> bool:
    if _AMD_SIGNAL.search(doc.path) or _AMD_COPYRIGHT.search(doc.text):
        return True
    return bool(_AMD_SIGNAL.search(_COMMENT.sub("", doc.text)))


@rule(code="NCCL010", name="nccl-env-unknown-variable", severity=Severity.WARNING, kinds=SETTING_KINDS, scope="set")
@per_deployment
def unknown_variable(docs: DocumentSet, ctx: LintContext) -> Iterator[Diagnostic]:
    """An ``NCCL_*`` variable that the target NCCL version does not read (typo, removed or renamed).

    ## What it catches
    Any ``NCCL_*`` name set in nccl.conf, an env file, a script, a container or a Dockerfile that
    the NCCL release given by ``--nccl-version`` (default: the newest known) never looks up, with
    the replacement or the closest known name.

    ## Why is this bad?
    NCCL ignores unknown variables without a message. A typo (``NCCL_IB_HCAS``), a name removed
    years ago (``NCCL_IB_CUDA_SUPPORT`` was last read by 2.3.7, ``NCCL_GRAPH`` by 2.5.7) or one
    newer than the installed NCCL (``NCCL_CONF_FILE`` before 2.23) is a setting that does
    nothing, and the job runs with defaults. The table behind this rule lists the 268 names
    read across NCCL 2.3.5 to 2.30.7 (NVIDIA/nccl ``src/`` at every v2.x tag).

    A name only RCCL reads is left alone where the file shows AMD GPUs (``amd.com/gpu``, a ROCm image,
    rccl-tests) or ``--sku`` is an AMD size, and is info where nothing says which GPUs run it.
    Names NCCL does not read but another consumer does are left alone (``hpcconf/data/env_consumers.tsv``,
    each with its source): PyTorch's ``NCCL_ASYNC_ERROR_HANDLING``, ``NCCL_BLOCKING_WAIT``,
    ``NCCL_DESYNC_DEBUG``, ``NCCL_ENABLE_TIMING`` (ProcessGroupNCCL.hpp reads them as fallbacks of its
    ``TORCH_NCCL_*`` options), build inputs such as ``NCCL_VERSION``, ``NCCL_HOME``, ``NCCL_ROOT``
    (PyTorch's FindNCCL.cmake, the nccl-tests Makefile), ``NCCL_TESTS_*`` (nccl-tests),
    ``NCCL_TOPO_FAMILY`` (Azure's sku-customizations service); a name the file's own script expands
    (``cp libnccl-net.so $NCCL_INSTALL_DIR/``), or that a script of the same deployment which the container
    runs expands (Crusoe's ib-probe-job.yaml sets ``NCCL_THRESHOLD`` for ``bash /probe/probe.sh``, whose
    ``NCCL_THRESHOLD=${NCCL_THRESHOLD:-350}`` is its own busbw floor); and the variables of NCCL's network plugins: ``NCCL_SHARP_DISABLE``, ``NCCL_IBEXT_DISABLE``, ``NCCL_UCX_TLS`` and the others read by
    Mellanox's nccl-rdma-sharp-plugins (HPC-X's ``libnccl-net.so``; ``src/sharp_plugin.c``,
    ``src/ib_plugin.c``), ``NCCL_GIN_PROXY_NTHREADS`` of aws-ofi-nccl, Google's fastsocket plugin
    (``NCCL_DYNAMIC_CHUNK_SIZE``... in google/nccl-fastsocket ``net_fastsocket.cc``) and Google's
    GPUDirect-TCPX/TCPXO plugins (``NCCL_GPUDIRECTTCPX_*``, ``NCCL_FASTRAK_*``, their tuner's
    ``NCCL_TUNER_CONFIG_PATH``; GoogleCloudPlatform/container-engine-accelerators ``gpudirect-tcpx*``).

    ## Severity
    Warning for a name NCCL once read (removed or renamed) or a near-miss of one it reads: NCCL ignores
    names it does not read without a message (NVIDIA/nccl `src/misc/param.cc`), so the setting meant for
    NCCL does nothing. Info for a name no NCCL release and no known consumer ever read (it may be a
    variable of the user's own scripts), for RCCL-only names where the file does not say which GPUs
    run it, and for a name NCCL's documentation marks deprecated whose purpose became the default:
    ``NCCL_CHECKS_DISABLE`` ("since 2.0.5, deprecated in 2.2.12", NVIDIA/nccl ``docs/userguide/source/env.rst``)
    turned off argument checks for latency, and from 2.2.12 the pointer checks are off unless
    ``NCCL_CHECK_POINTERS=1``: the line does nothing, and nothing is lost. Info too for a removed name whose
    replacement the same file sets (``NCCL_IB_CUDA_SUPPORT=1`` beside ``NCCL_NET_GDR_LEVEL``).

    ## Example
    ```text
    NCCL_IB_HCAS=mlx5_ib0
    NCCL_GRAPH=/opt/microsoft/ncv4/graph.xml
    ```

    ## Fix
    Use the suggested name (``NCCL_IB_HCA``, ``NCCL_GRAPH_FILE``), or delete the line when the
    setting is obsolete for your NCCL version.
    """
    scripts = docs.of_kind(Kind.SHELL_SCRIPT, Kind.SBATCH_SCRIPT)
    for doc in docs:
        if doc.kind in SETTING_KINDS and not doc.compile_failed:
            yield from _unknown_variables(doc, doc.context_or(ctx), _scripts_run_by(doc, scripts))


def _scripts_run_by(doc: Document, scripts: list[Document]) -> list[Document]:
    """The deployment's scripts that a container or job of ``doc`` runs by name (``bash /probe/probe.sh``):
    a variable set for the container that such a script expands is that script's input."""
    if doc.kind not in (Kind.K8S_MANIFEST, Kind.VOLCANO_JOB):
        return []
    return [script for script in scripts if script is not doc and re.search(
        rf"(?<![\w.-]){re.escape(script.origin.name)}(?![\w.-])", doc.text)]


def _unknown_variables(doc: Document, ctx: LintContext, run_scripts: list[Document]) -> Iterator[Diagnostic]:
    from ...knowledge import nccl_env, rocm
    from ...knowledge.env_consumers import consumer_of, read_by_text
    from ...knowledge.nccl_plugins import read_by_plugin

    settings = list(_nccl_settings(doc))
    names_set = {setting.name for setting in settings}
    for setting in settings:
        own_lines = range(setting.line, setting.value_at + 1)
        if nccl_env.is_read_by(setting.name, ctx.nccl_version) or consumer_of(setting.name) is not None \
                or read_by_plugin(setting.name) is not None or read_by_text(setting.name, doc.text, own_lines) \
                or any(read_by_text(setting.name, script.text) for script in run_scripts):
            continue
        if rocm.reads(setting.name) and ctx.collective != "nccl":
            if ctx.collective == "rccl" or shows_amd_gpus(doc):
                continue  # an RCCL-only NCCL_* name (NCCL_NCHANNELS_PER_PEER) on AMD GPUs
            if nccl_env.lookup(setting.name) is None:
                yield doc.at_line(setting.line, f"{setting.name} is read only by RCCL (AMD GPUs), by no NCCL release: "
                                                "on NVIDIA GPUs the setting does nothing; the file does not say which",
                                  hint="set --sku to decide", column=setting.column,
                                  end_column=setting.column + len(setting.name), severity=Severity.INFO)
                continue
        deprecated = nccl_env.deprecated_default(setting.name)
        if deprecated is not None and nccl_env.lookup(setting.name) is None:
            yield doc.at_line(setting.line, f"{setting.name} was deprecated in NCCL {deprecated.deprecated_in} and no "
                                            f"release since reads it; {deprecated.default_now}, so the line does "
                                            "nothing and nothing is lost",
                              hint="delete it", column=setting.column, end_column=setting.column + len(setting.name),
                              severity=Severity.INFO)
            continue
        suggestions = nccl_env.suggest(setting.name, ctx.nccl_version)
        if not suggestions and nccl_env.lookup(setting.name) is None:
            # no NCCL release ever read it and it is no near-miss of a name one reads: a variable of the user's
            # own scripts (read by a file hpcconf was not given) or of a consumer hpcconf does not know
            yield doc.at_line(setting.line, f"{setting.name} is read by no NCCL release (2.3.5 to "
                                            f"{nccl_env.newest_version()}) and by no other consumer hpcconf knows: "
                                            "unless a program of yours reads it, it does nothing",
                              hint="delete it, or check the name against the NCCL documentation for your version",
                              column=setting.column, end_column=setting.column + len(setting.name),
                              severity=Severity.INFO)
            continue
        if suggestions and nccl_env.lookup(setting.name) is not None and suggestions[0] in names_set:
            # a name NCCL read once, whose replacement the file sets too: the old line is dead, nothing is lost
            yield doc.at_line(setting.line, f"{nccl_env.explain(setting.name, ctx.nccl_version)}; its replacement "
                                            f"{suggestions[0]} is set too, so the line does nothing and nothing is "
                                            "lost", hint="delete it", column=setting.column,
                              end_column=setting.column + len(setting.name), severity=Severity.INFO)
            continue
        hint = f"did you mean {' or '.join(suggestions)}?" if suggestions else \
            "delete it, or check the name against the NCCL documentation for your version"
        yield doc.at_line(setting.line, f"{nccl_env.explain(setting.name, ctx.nccl_version)}: the setting "
                                        f"does nothing", hint=hint, column=setting.column,
                          end_column=setting.column + len(setting.name))


def _value_findings(doc: Document, ctx: LintContext, names: tuple[str, ...] | None) -> Iterator[Diagnostic]:
    """Findings from ``hpcconf.knowledge.grammars`` (a port of each consumer's own value parser) for
    the settings named ``names`` (None: every NCCL name without a rule of its own)."""
    from ...knowledge.grammars import check_env_value

    for setting in _nccl_settings(doc):
        wanted = setting.name in names if names is not None else setting.name not in GRAMMAR_RULES
        if not wanted or setting.dynamic:
            continue
        if setting.source == "nccl.conf" and re.search(r"\s#", setting.value):
            continue  # NCCL002 reports the inline comment, the cause of this value's trouble
        for problem in check_env_value(setting.name, setting.value, nccl_version=ctx.nccl_version):
            column = setting.value_column + problem.offset
            severity = Severity.ERROR if problem.fatal else problem.severity
            message = problem.message
            if setting.name not in message:
                message = f"{setting.name}: {message}"
            if problem.fatal:
                message += ": NCCL fails to initialise"
            yield doc.at_line(setting.value_at, message, hint=problem.hint, column=column,
                              end_column=column + problem.length, severity=severity)


@rule(code="NCCL011", name="nccl-algo-proto-invalid", severity=Severity.ERROR, kinds=SETTING_KINDS)
def algo_proto_invalid(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """``NCCL_ALGO`` or ``NCCL_PROTO`` names an algorithm/protocol the NCCL version does not know.

    ## What it catches
    Unknown tokens (``Rings``, ``CollNet`` on 2.14+), tokens newer than the target NCCL
    (``PAT`` before 2.23), and on 2.24+ the per-collective syntax errors: an unknown collective
    before ``:``, or an entry after ``;`` without a ``collective:`` prefix.

    ## Why is this bad?
    Since NCCL 2.24 ``tuning.cc`` rejects such values with ``ncclInvalidUsage``: every
    communicator init fails. NCCL 2.28.9 (measured on 2 x H200) failed with
    ``NCCL_ALGO=CollNet`` and ``NCCL_ALGO=allreduce:ring;tree``. Before 2.24 the bad token was
    silently ignored, so the setting did nothing (reported as a warning for those versions).

    ## Severity
    Error from NCCL 2.24: `tuning.cc` rejects the value with ncclInvalidUsage and every communicator
    init fails (measured, NCCL 2.28.9); warning before 2.24, where the token is ignored.

    ## Example
    ```text
    NCCL_ALGO=CollNet
    NCCL_PROTO=LL,Simple;LL128
    ```

    ## Fix
    Use names from Tree, Ring, CollNetDirect, CollNetChain, NVLS, NVLSTree, PAT (algorithms) and
    LL, LL128, Simple (protocols); prefix later entries with a collective:
    ``NCCL_ALGO=ring;allreduce:tree,ring``.
    """
    yield from _value_findings(doc, ctx, ("NCCL_ALGO", "NCCL_PROTO"))


@rule(code="NCCL012", name="nccl-ib-hca-invalid", severity=Severity.ERROR, kinds=SETTING_KINDS)
def ib_hca_invalid(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """``NCCL_IB_HCA`` does not parse, or (with ``--sku``) selects no InfiniBand HCA of the VM.

    ## What it catches
    ``=^`` in the wrong order (``^`` must come first), malformed ``name:port`` entries, more than
    32 entries, ``:rail:plane`` before NCCL 2.29.7; with ``--sku``: names matching none of the
    SKU's IB devices, and including the SKU's non-IB Mellanox VF (``mlx5_an0``) as a fabric HCA; an
    exclusion (``^...``) naming a device the SKU does not have instead of its non-IB VF (warning: the
    VF stays in NCCL's rail list).
    Without ``--sku``: entries that can name no RDMA device anywhere: network interface names
    (``^ens,eth,docker``, which belong in ``NCCL_SOCKET_IFNAME``) and look-alike typos of HCA
    names (``^m1x5_0`` with a digit one, ``MLX5_0`` in capitals). In a script: a value built by a command
    substitution that prints one device per line (a loop that echoes each name, ``ls /sys/class/infiniband``,
    ``ibv_devices``, ``ibdev2netdev``) with nothing joining the lines by commas.

    ## Why is this bad?
    NCCL matches these names as prefixes and silently drops what matches nothing; when no HCA is
    left it falls back to TCP sockets over Ethernet (tens of GB/s lost per node), or fails with
    "no IB device found". Azure's H200 NHC config excludes ``mlx5_an0`` (the accelerated-networking
    VF) because NCCL would otherwise try it as an IB rail (Azure/azurehpc-health-checks
    ``conf/nd96isr_h200_v5.conf``). An exclusion that matches nothing (``NCCL_IB_HCA=^m1x5_0``,
    found in a published GB200 MPIJob) leaves the device it meant to drop in use, without a message.
    NCCL splits the list on ``,`` only (``parseStringList``, NVIDIA/nccl ``src/misc/utils.cc`` at v2.26.6-1), so
    two names on two lines (``mlx5_0`` newline ``mlx5_1``) are one prefix that matches no device (``matchIf`` compares ``strlen(ref)`` bytes).
    Names differ from the driver's by rdma-core's renaming rules: on a non-zero PCI domain the name carries a
    capital ``P`` (``roceP2p1s0f1``, ``kernel-boot/rdma_rename.c`` ``sprintf(buf, "P%u", p.domain)``), which
    is a real device, not a typo of ``rocep2p1s0f1``.

    ## Severity
    Error when the value does not parse (NCCL refuses the list); warning when names match no RDMA device
    or the exclusion misses the VM's non-IB device: NCCL drops them silently and falls back or keeps the
    wrong rail.

    ## Example
    ```text
    NCCL_IB_HCA==^mlx5_an0
    NCCL_IB_HCA=mlx5_0:1:2
    ```

    ## Fix
    ``^`` before ``=``: ``NCCL_IB_HCA=^=mlx5_an0``; or list the fabric HCAs exactly:
    ``NCCL_IB_HCA==mlx5_ib0:1,mlx5_ib1:1``.
    """
    yield from _value_findings(doc, ctx, ("NCCL_IB_HCA",))
    yield from _hca_name_findings(doc)
    yield from _hca_list_by_lines(doc)
    ib = getattr(ctx.sku, "infiniband", None) if ctx.sku is not None else None
    if ctx.sku is None:
        return
    from ...knowledge.grammars import check_ib_hca, parse_if_list

    for setting in _nccl_settings(doc):
        if setting.name != "NCCL_IB_HCA" or setting.dynamic or not setting.value:
            continue
        if any(p.severity == Severity.ERROR for p in check_ib_hca(setting.value, ctx.nccl_version)):
            continue  # the value does not parse: the grammar finding above says why
        parsed = parse_if_list(setting.value)
        if parsed.exclude and ib is not None and parsed.entries:
            yield from _wrong_exclusion(doc, setting, parsed, ib, ctx.sku_name)
        if parsed.exclude or not parsed.entries:
            continue
        devices = list(getattr(ib, "devices", []) or []) if ib is not None else []
        if ib is None:
            yield _setting_finding(doc, setting, f"{ctx.sku_name} has no InfiniBand, but NCCL_IB_HCA selects "
                                                 f"{', '.join(e.name for e in parsed.entries)}",
                                   hint="remove NCCL_IB_HCA (NCCL_IB_DISABLE=1 makes the choice explicit)",
                                   severity=Severity.WARNING)
            continue
        if not devices:
            continue
        unknown = [e.name for e in parsed.entries if not e.name.startswith("mlx5_an")
                   and not any((d == e.name) if parsed.exact else d.startswith(e.name) for d in devices)]
        if unknown:
            yield _setting_finding(doc, setting, f"NCCL_IB_HCA names {', '.join(unknown)}, which matches no IB "
                                                 f"device of {ctx.sku_name} ({', '.join(devices)})",
                                   hint=f"use ={','.join(d + ':1' for d in devices)}")


def _wrong_exclusion(doc: Document, setting: Setting, parsed: IfList, ib: Infiniband, sku_name: str) -> Iterator[Diagnostic]:
    """An exclusion list (``^...``) that names none of the devices the VM has to exclude, while the SKU knows
    which one that is: the device stays in NCCL's rail list."""
    skip = list(getattr(ib, "exclude_hcas", []) or [])
    known = skip + list(getattr(ib, "devices", []) or [])
    if not skip:
        return
    def matches(entry: str, device: str) -> bool:
        return device == entry if parsed.exact else device.startswith(entry)
    if any(matches(e.name, d) for e in parsed.entries for d in skip):
        return
    wrong = [e.name for e in parsed.entries if not any(matches(e.name, d) for d in known)]
    if wrong:
        yield _setting_finding(doc, setting, f"NCCL_IB_HCA excludes {', '.join(wrong)}, which is no device of "
                                             f"{sku_name}; the device to keep out of NCCL's rails there is "
                                             f"{', '.join(skip)}, and it stays in",
                               hint=f"use ^{','.join(skip)}", severity=Severity.WARNING)


# How RDMA devices are named (ibv_devices): by the kernel driver (mlx5_0, bnxt_re0, irdma0, efa_0...) or
# renamed by rdma-core's udev rules (ibp/ibs/ibo for InfiniBand, rocep/roces/roceo for RoCE, iwp/iws/iwo for
# iWARP; rdma-core kernel-boot/rdma_rename.c); by PCI path on a non-zero PCI domain the name carries a capital
# ``P<domain>`` first (rdma_rename.c by_pci: ``sprintf(buf, "P%u", p.domain)``, e.g. roceP2p1s0f1).
HCA_FAMILIES = ("mlx5_", "mlx4_", "ibp", "ibs", "ibo", "ibP", "rocep", "roces", "roceo", "roceP", "iwp", "iws", "iwo",
                "iwP", "bnxt_re",
                "irdma", "i40iw", "qedr", "hfi1_", "qib", "rxe", "siw", "erdma_", "efa_", "hns_", "cxgb4_",
                "ocrdma", "vmw_pvrdma", "mana_", "ionic_", "usnic_")
# Network interface (netdev) names: what NCCL_SOCKET_IFNAME takes, never an RDMA device's name.
_NETDEV = re.compile(r"(?:eth|ens|enp|eno|enx|enP|em\d|docker|bond|virbr|veth|cni|flannel|cali|tun|tap|wlan|"
                     r"lo$|ib\d+$)")
_CONFUSABLE = {"1": "l", "l": "1", "0": "o", "o": "0"}


def _hca_family(name: str) -> bool:
    return any(name.startswith(f) or f.startswith(name) for f in HCA_FAMILIES)


def _hca_typo(name: str) -> str | None:
    """The HCA name ``name`` was probably meant to be: a digit for a look-alike letter (``m1x5_0``), or capitals
    (NCCL compares names case-sensitively)."""
    if name.lower() != name and _hca_family(name.lower()) and not _hca_family(name):
        return name.lower()
    for at, char in enumerate(name):
        swapped = name[:at] + _CONFUSABLE.get(char, char) + name[at + 1:]
        if swapped != name and any(swapped.startswith(f) for f in HCA_FAMILIES):
            return swapped
    return None


# A command substitution whose output is one device per line: a loop that echoes each name, or a listing of the
# RDMA devices (ls prints one name per line into a pipe; ibv_devices, ibdev2netdev and ibstat -l print lines).
_PER_LINE_OUTPUT = re.compile(r"\b(?:for|while)\b[^\n]*?\bdo\b.*?\b(?:echo|printf)\b.*?\bdone\b|"
                              r"\bls\b[^|)]*(?:/sys/class/infiniband|/dev/infiniband)|\bibv_devices\b|"
                              r"\bibdev2netdev\b|\bibstat\s+-l\b", re.S)
# What joins the lines (or keeps one): a comma anywhere (paste -sd, tr '\n' ',', printf "%s,"), or a filter that
# keeps a single line.
_JOINED = re.compile(r",|\bpaste\b|\btr\b|\bxargs\b|\bsed\b|\bORS\b|\b(?:head|tail)\s+-(?:n\s*)?1\b")


def _command_substitution(doc: Document, setting: Setting) -> str | None:
    """The text of the ``$(...)`` (or backquoted) command an assignment's value starts with, across lines; None
    when the value is no command substitution."""
    start_line = setting.value_at
    text = "\n".join(doc.lines[start_line - 1:])
    offset = setting.value_column - 1
    rest = text[offset:]
    if rest.startswith('"'):
        rest = rest[1:]
    if rest.startswith("`"):
        end = rest.find("`", 1)
        return rest[1:end] if end > 0 else None
    if not rest.startswith("$("):
        return None
    depth = 0
    for index, char in enumerate(rest):
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return rest[2:index]
    return None


# Interfaces one per line: a loop that echoes each, ls of /sys/class/net, or `ip -o|-br link|addr` output (one
# interface a line, whatever awk keeps of it).
_PER_LINE_INTERFACES = re.compile(r"\b(?:for|while)\b[^\n]*?\bdo\b.*?\b(?:echo|printf)\b.*?\bdone\b|"
                                  r"\bls\b[^|)]*/sys/class/net|\bip\s+(?:-\d\s+)?-(?:o|br|brief)\b[^|)]*\b(?:link|addr|a)\b",
                                  re.S)


def _list_by_lines(doc: Document, name: str, per_line: re.Pattern[str]) -> Iterator[Setting]:
    """``NAME=$(...)`` in a script whose command prints one name per line, with nothing joining the lines by
    commas: NCCL splits its lists on ',' only (``parseStringList``)."""
    if doc.kind not in (Kind.SHELL_SCRIPT, Kind.SBATCH_SCRIPT):
        return
    for setting in _nccl_settings(doc):
        if setting.name != name:
            continue
        command = _command_substitution(doc, setting)
        if command is None or not per_line.search(command) or _JOINED.search(command):
            continue
        yield setting


def _socket_ifname_by_lines(doc: Document) -> Iterator[Diagnostic]:
    """``NCCL_SOCKET_IFNAME=$(ls /sys/class/net | ...)``: two interfaces on two lines are one prefix."""
    for setting in _list_by_lines(doc, "NCCL_SOCKET_IFNAME", _PER_LINE_INTERFACES):
        yield doc.at_line(setting.value_at, "NCCL_SOCKET_IFNAME is built by a command that prints one interface per "
                                            "line; NCCL splits the list on ',' only, so with two or more interfaces "
                                            "the value is one name that matches none, and NCCL, which must find a "
                                            "named interface or fail, stops at bootstrap (\"no socket interface "
                                            "found\")", hint="join the names with commas: `... | paste -sd, -`",
                          column=setting.value_column, end_column=setting.value_column + 2,
                          severity=Severity.WARNING)


def _hca_list_by_lines(doc: Document) -> Iterator[Diagnostic]:
    """``NCCL_IB_HCA=$(...)`` whose command prints one device per line: NCCL splits the list on ',' only."""
    for setting in _list_by_lines(doc, "NCCL_IB_HCA", _PER_LINE_OUTPUT):
        yield doc.at_line(setting.value_at, "NCCL_IB_HCA is built by a command that prints one device per line; "
                                            "NCCL splits the list on ',' only, so with two or more HCAs the value "
                                            "is one name that matches no device and NCCL falls back to sockets",
                          hint="join the names with commas: `... | paste -sd, -`", column=setting.value_column,
                          end_column=setting.value_column + 2, severity=Severity.WARNING)


def _hca_name_findings(doc: Document) -> Iterator[Diagnostic]:
    """Entries that cannot name an RDMA device on any machine: netdev names, and typos of HCA names.
    Where the file says it runs without InfiniBand, selecting no HCA is the intent: no finding."""
    from ...knowledge.grammars import parse_if_list

    if no_ib_intent(doc):
        return
    for setting in _nccl_settings(doc):
        if setting.name != "NCCL_IB_HCA" or setting.dynamic or not setting.value:
            continue
        parsed = parse_if_list(setting.value)
        effect = "so nothing is excluded" if parsed.exclude else "so it selects no HCA"
        for entry in parsed.entries:
            if _hca_family(entry.name):
                continue
            column = setting.value_column + entry.offset
            if _NETDEV.match(entry.name):
                message = (f"NCCL_IB_HCA entry {entry.name!r} is a network interface name; NCCL_IB_HCA matches "
                           f"RDMA device names (mlx5_0, ibp12s0...), {effect}")
                hint = "name RDMA devices (`ibv_devices` lists them); interfaces go in NCCL_SOCKET_IFNAME"
            elif (meant := _hca_typo(entry.name)) is not None:
                message = f"NCCL_IB_HCA entry {entry.name!r} matches no RDMA device name, {effect}"
                hint = f"did you mean {meant!r}?"
            else:
                continue
            yield doc.at_line(setting.value_at, message, hint=hint, column=column,
                              end_column=column + len(entry.name), severity=Severity.WARNING)


@rule(code="NCCL013", name="nccl-path-level-invalid", severity=Severity.WARNING, kinds=SETTING_KINDS)
def path_level_invalid(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """``NCCL_P2P_LEVEL`` or ``NCCL_NET_GDR_LEVEL`` is not a path type the NCCL version knows.

    ## What it catches
    Values other than LOC, NVL, NVB, PIX, PXB, PXN, PHB, SYS, C2C (2.26+), P2C (2.27+) or the
    legacy numbers 0-5; lower-case names; names newer than ``--nccl-version``.

    ## Why is this bad?
    ``paths.cc`` compares the string with the known names; anything else ends up as an unknown
    level and the setting that was meant to enable (or forbid) P2P or GPUDirect RDMA does not
    take effect, e.g. the ``NCCL_P2P_LEVEL=SYS`` workaround that brought an NVLink pair from
    24.3 to 105.5 GB/s (NCCL 2.28.9 on 2 x H200).

    ## Severity
    Warning: `paths.cc` takes an unknown name as an unknown level; NCCL starts and the P2P or GPUDirect
    setting meant does not take effect (24.3 vs 105.5 GB/s on an H200 NVLink pair, NCCL 2.28.9).

    ## Example
    ```text
    NCCL_P2P_LEVEL=NVLINK
    ```

    ## Fix
    Use one of the path names (``NCCL_P2P_LEVEL=NVL``).
    """
    yield from _value_findings(doc, ctx, ("NCCL_P2P_LEVEL", "NCCL_NET_GDR_LEVEL"))


@rule(code="NCCL014", name="nccl-algo-nvls-unsupported", severity=Severity.ERROR, kinds=SETTING_KINDS)
def algo_nvls_unsupported(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """``NCCL_ALGO`` pins NVLS/NVLSTree on a SKU without NVLink SHARP (needs ``--sku``).

    ## What it catches
    ``NCCL_ALGO`` listing only NVLS or NVLSTree for a collective on a VM size whose NVLink has no
    NVSwitch with SHARP (A100 and V100 sizes, the NC PCIe sizes). A value that fails on every
    machine, NVLink SHARP or not (a global ``NCCL_ALGO=NVLSTree``), is NCCL029's and not repeated here.
    On an NVSwitch size whose catalog entry does not state ``nvlink.nvls`` (a SKU file written
    without that fact) the answer is unknown, not "absent": an info naming the missing fact.

    ## Why is this bad?
    NVLS needs third-generation NVSwitch (H100/H200 HGX, ``search.cc``). Where it is missing, NCCL
    has no algorithm left for that collective and fails, or (older releases) ignores the choice.
    Measured: the nccl.conf of Crusoe's Slurm NCCL guide loaded by NCCL 2.28.9 on 2 x H200 with NVLS unavailable
    failed every all_reduce with ``no algorithm/protocol available for function AllReduce ...
    NCCL_ALGO was set to NVLSTree`` (docs/acceptance/nccl-h200-x2.json). Crusoe's 8xH100
    ``NCCL_ALGO=NVLSTree`` is right there and breaks every job on ND A100 v4.

    ## Severity
    Error: with NVLS the only algorithm left, calls fail with "no algorithm/protocol available" on VMs
    without NVLink SHARP (`src/graph/tuning.cc`). Info where the SKU has NVSwitch but its catalog entry
    does not say whether it has NVLink SHARP: whether the calls fail depends on that fact.

    ## Example
    ```text
    # with --sku ND96asr_v4
    NCCL_ALGO=allreduce:NVLS
    ```

    ## Fix
    Remove ``NCCL_ALGO`` (the tuner picks per message size), or allow Ring/Tree as well.
    """
    nvlink = getattr(ctx.sku, "nvlink", None)
    if ctx.sku is None or nvlink is None or getattr(nvlink, "nvls", False):
        return
    # NVSwitch and nvls unstated: NVLS may be there (H100/H200/B200 HGX, GB200 have it; A100's NVSwitch has not)
    unknown = getattr(nvlink, "nvswitch", False) and getattr(nvlink, "nvls", False) is None
    for setting in _nccl_settings(doc):
        if setting.name != "NCCL_ALGO" or setting.dynamic or setting.value.startswith("^"):
            continue
        if any(stranded_everywhere(setting.value, ctx.nccl_version)):
            continue  # NCCL029 reports it: it fails on every machine, NVLink SHARP or not
        for entry in setting.value.split(";"):
            tokens = {t.strip().lower() for t in entry.split(":")[-1].split(",") if t.strip()}
            if tokens and tokens <= {"nvls", "nvlstree"} and unknown:
                yield _setting_finding(doc, setting, f"NCCL_ALGO={setting.value} allows only NVLS algorithms; the "
                                                     f"catalog does not state whether {ctx.sku_name} has NVLink SHARP "
                                                     f"(nvlink.nvls): without it every call of that collective fails",
                                       hint=f"state nvlink.nvls in {ctx.sku_name}'s SKU file (with its source), "
                                            "or allow Ring/Tree as well", severity=Severity.INFO)
                break
            if tokens and tokens <= {"nvls", "nvlstree"}:
                yield _setting_finding(doc, setting, f"NCCL_ALGO={setting.value} allows only NVLS algorithms, "
                                                     f"but {ctx.sku_name} has no NVLink SHARP (NVSwitch gen 3)",
                                       hint="remove NCCL_ALGO or add Ring/Tree")
                break


def stranded_everywhere(value: str, nccl_version: str) -> tuple[list[str], list[str]]:
    """(functions stranded on every multi-node machine, further ones stranded on every single node)
    under ``NCCL_ALGO=value``: the machine is taken as capable as any (NVLink SHARP, CollNet, one
    or eight GPUs per node), so what is left stranded fails wherever the file is used.
    A value NCCL rejects outright is NCCL011's, and strands nothing here."""
    from ...knowledge.nccl_algo import stranded_functions  # its tables load with the first NCCL_ALGO

    try:
        one_rank_per_node = stranded_functions(value, 2, True, collnet=True, ranks_per_node=1, version=nccl_version)
        multi = [f for f in stranded_functions(value, 2, True, collnet=True, version=nccl_version)
                 if f in one_rank_per_node]
        single = stranded_functions(value, 1, True, collnet=True, version=nccl_version)
    except ValueError:
        return [], []
    return multi, [f for f in single if f not in multi]


# nccl-tests binaries and the NCCL function each one calls (NVIDIA/nccl-tests src/*.cu); the point-to-point
# tests (alltoall, sendrecv, gather, scatter, hypercube) call ncclSend/ncclRecv, which NCCL_ALGO does not touch.
_NCCL_TESTS_FUNCTIONS = {"all_reduce": "AllReduce", "all_gather": "AllGather", "reduce_scatter": "ReduceScatter",
                         "broadcast": "Broadcast", "reduce": "Reduce", "alltoall": "", "sendrecv": "", "gather": "",
                         "scatter": "", "hypercube": ""}
_NCCL_TESTS_BINARY = re.compile(r"\b(" + "|".join(sorted(_NCCL_TESTS_FUNCTIONS, key=len, reverse=True)) + r")_perf\b")
_OTHER_PROGRAM = re.compile(r"\bpython\d?\b|\.py\b|torchrun|deepspeed|accelerate\s+launch|\bnemo\b|megatron", re.I)


def functions_run(doc: Document) -> set[str] | None:
    """The NCCL functions a script or job runs when all it runs is nccl-tests; None when it runs anything
    else, or is a file (nccl.conf, env file, image ENV) whose settings reach every program."""
    if doc.kind in (Kind.NCCL_CONF, Kind.ENV_FILE, Kind.DOCKERFILE) or doc.artifact is not None:
        return None  # a compiled artifact carries the spec's cluster-wide nccl_env: every workload gets it
    binaries = _NCCL_TESTS_BINARY.findall(doc.text)
    if not binaries or _OTHER_PROGRAM.search(doc.text):
        return None
    return {_NCCL_TESTS_FUNCTIONS[b] for b in binaries} - {""}


@rule(code="NCCL029", name="nccl-algo-strands-collective", severity=Severity.ERROR, kinds=SETTING_KINDS,
      since="0.2.0")
def algo_strands_collective(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """``NCCL_ALGO`` leaves a collective, or a single-node run, with no algorithm it can run.

    ## What it catches
    An ``NCCL_ALGO`` value after which some NCCL function (AllReduce, AllGather, ReduceScatter,
    Broadcast, Reduce) has no algorithm left that it can run, on any machine: a global value
    without Ring (Broadcast and Reduce run Ring only; AllGather and ReduceScatter run Ring, PAT,
    NVLS or CollNetDirect, never Tree or NVLSTree), or a value whose only algorithm for a function
    is NVLSTree, which NCCL turns off on a single node. The judgement assumes the most capable
    machine (NVLink SHARP, CollNet), so a finding here fails everywhere; a value that fails only
    on VM sizes without NVLink SHARP is NCCL014's. A script or job that runs only nccl-tests states
    which functions it calls: ``NCCL_ALGO=Tree`` beside ``all_reduce_perf`` alone strands nothing it
    runs, so only the functions of the binaries it starts are judged there.

    ## Why is this bad?
    ``NCCL_ALGO`` restricts the algorithms NCCL's tuner may pick (``src/graph/tuning.cc``); a
    function with none left fails every call with ``no algorithm/protocol available for function
    ... NCCL_ALGO was set to ...``. Measured on 2 x H200 with NCCL 2.28.9: a global
    ``NCCL_ALGO=NVLSTree`` failed all_gather, reduce_scatter and broadcast, and all_reduce on one
    node; a global ``NCCL_ALGO=Tree`` failed all_gather, reduce_scatter and broadcast. Training
    jobs call all of them (FSDP all_gather/reduce_scatter, parameter broadcast at start-up).

    ## Severity
    Error: every call of a function left with no algorithm fails ("no algorithm/protocol available",
    `src/graph/tuning.cc`; measured on 2 x H200, NCCL 2.28.9).

    ## Example
    ```text
    NCCL_ALGO=NVLSTree
    ```

    ## Fix
    Remove ``NCCL_ALGO`` (the tuner picks per message size), or, from NCCL 2.24, restrict only
    the collective you mean and keep Ring beside it: ``NCCL_ALGO=allreduce:NVLSTree,Ring``.
    Before 2.24 a global value must include Ring.
    """
    for setting in _nccl_settings(doc):
        if setting.name != "NCCL_ALGO" or setting.dynamic:
            continue
        multi, single = stranded_everywhere(setting.value, ctx.nccl_version)
        run = functions_run(doc)
        if run is not None:  # the file runs only nccl-tests: only the functions it runs can fail
            multi, single = [f for f in multi if f in run], [f for f in single if f in run]
        if not (multi or single):
            continue
        parts = []
        if multi:
            parts.append(f"{', '.join(multi)} with no algorithm")
        if single:
            parts.append(f"{', '.join(single)} with none on a single node")
        plain = not any(c in setting.value for c in ":;^")  # one global list
        if not multi:
            example = f"{setting.value},Ring" if ";" not in setting.value else "allreduce:NVLSTree,Ring"
            fix = f"keep Ring beside it (NCCL_ALGO={example}): NVLSTree is off on a single node"
        elif ctx.nccl_at_least("2.24"):
            example = f"allreduce:{setting.value},Ring" if plain else "allreduce:NVLSTree,Ring"
            fix = f"remove NCCL_ALGO, or restrict only the collective you mean, with Ring: NCCL_ALGO={example}"
        else:
            fix = "remove NCCL_ALGO, or keep Ring in it (NCCL before 2.24 has no per-collective NCCL_ALGO)"
        yield _setting_finding(doc, setting, f"NCCL_ALGO={setting.value} leaves {'; and '.join(parts)}: "
                                             f"every such call fails (NCCL {ctx.nccl_version})", hint=fix)


@rule(code="NCCL017", name="nccl-env-value-invalid", severity=Severity.WARNING, kinds=SETTING_KINDS)
def env_value_invalid(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """An ``NCCL_*`` value NCCL reads differently from how it looks (interfaces, debug, integers).

    ## What it catches
    Values of NCCL variables without a rule of their own, checked with the consumer's grammar
    (``hpcconf.knowledge.grammars``): ``NCCL_SOCKET_IFNAME`` of one character (ignored) or with
    bad list syntax (whitespace or a newline inside a name: entries are split on ``,`` only), in a script a
    ``NCCL_SOCKET_IFNAME=$(...)`` whose command prints one interface per line (``ls /sys/class/net``,
    ``ip -br link | awk ...``, a loop that echoes each) with nothing joining them by commas,
    ``NCCL_DEBUG`` levels and ``NCCL_DEBUG_SUBSYS`` names that do not exist, and
    integer parameters with junk after the number (``NCCL_IB_TIMEOUT=22s``) or no number at all.

    ## Why is this bad?
    NCCL reads integers with ``strtoll`` and keeps whatever prefix parses (``param.cc``): ``"4x"``
    is 4 and ``"yes"`` is 0, without a message. An unknown debug level logs nothing, so the run
    you meant to diagnose is silent. ``NCCL_SOCKET_IFNAME=e`` is ignored, and NCCL picks ``ib*``
    for bootstrap on Azure IB SKUs instead of ``eth0`` (NVIDIA/nccl ``src/misc/socket.cc``). A named
    interface list is "find or fail" (``ncclFindInterfaces``): ``eth0`` newline ``eth1`` is one prefix that
    matches no interface, and bootstrap stops with "Bootstrap : no socket interface found"
    (``src/bootstrap.cc`` at v2.26.6-1).

    ## Severity
    Warning: NCCL reads the value differently from how it looks (its own parsers in
    `src/misc/socket.cc`, `src/misc/param.cc`); the setting does not do what it says.

    ## Example
    ```text
    NCCL_IB_TIMEOUT=22s
    NCCL_DEBUG=VERBOSE
    NCCL_SOCKET_IFNAME=e
    ```

    ## Fix
    Plain integers, ``NCCL_DEBUG`` one of VERSION, WARN, INFO, ABORT, TRACE, and full interface
    names (``NCCL_SOCKET_IFNAME=eth0``).
    """
    yield from _value_findings(doc, ctx, None)
    yield from _socket_ifname_by_lines(doc)


_FAMILY_IN_PATH = re.compile(r"(?<![a-z0-9])(n[cd]v\d)(?![0-9])", re.I)


@rule(code="NCCL015", name="nccl-graph-file-on-sku", severity=Severity.ERROR, kinds=SETTING_KINDS)
def graph_file_on_sku(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """``NCCL_GRAPH_FILE`` is set for a VM size that must not use a graph file (needs ``--sku``).

    ## What it catches
    A non-empty ``NCCL_GRAPH_FILE`` on any SKU other than the one the catalog ships a graph
    for (only NC96ads_A100_v4, from Azure's ``ncv4`` family), e.g. the ``/etc/nccl.conf`` that
    Azure's image wrote on NC48ads_A100_v4 before 2024-05.

    ## Why is this bad?
    A graph file replaces NCCL's search (``search.cc`` returns early when the graph has
    channels), fixing channel counts and speeds written for another machine. jingchaozhang.github.io
    ("Azure NCCL Test on NCv4", 2023) measured all_reduce at 57.5 GB/s on NC48ads_A100_v4 with ``NCCL_GRAPH_FILE=/opt/microsoft/ncv4/graph.xml``
    and 225 GB/s without it (4x); NCCL 2.28.9 on an H200 NVLink pair reproduced it: 82.6 vs 326 GB/s. The
    ncv4 graph names 4 GPUs, so on 2-GPU sizes NCCL may also fail ("dev 2 not found"). Azure
    removed it from the smaller sizes in e899015a (2024-05-22).

    ## Severity
    Error: the graph replaces NCCL's search (`src/graph/search.cc`); on sizes with fewer GPUs than it
    names NCCL fails ("dev 2 not found"), and where it loads it fixes another machine's channels (57.5
    vs 225 GB/s on NC48ads_A100_v4).

    ## Example
    ```text
    # hpcconf lint --sku NC48ads_A100_v4 /etc/nccl.conf
    NCCL_TOPO_FILE=/opt/microsoft/ncv4/topo.xml
    NCCL_GRAPH_FILE=/opt/microsoft/ncv4/graph.xml
    ```

    ## Fix
    Delete the ``NCCL_GRAPH_FILE`` line (and, on NC24/NC48ads, ``NCCL_TOPO_FILE`` too).
    """
    if ctx.sku is None:
        return
    nccl = getattr(ctx.sku, "nccl", None)
    if getattr(nccl, "graph", False):
        return
    for setting in _nccl_settings(doc):
        if setting.name != "NCCL_GRAPH_FILE" or not setting.value.strip():
            continue
        measured = _busbw_note(ctx)
        yield _setting_finding(doc, setting, f"{ctx.sku_name} must not use a graph file: it replaces NCCL's "
                                             f"search with channels written for another machine{measured}",
                               hint="delete this NCCL_GRAPH_FILE setting", whole=True)


def _busbw_note(ctx: LintContext) -> str:
    for entry in getattr(ctx.sku, "busbw", []) or []:
        if entry.kind == "measured" and entry.note and "graph" in entry.note:
            return f" ({ctx.sku_name}: {entry.gbps:g} GB/s all_reduce without it; {entry.note})"
    return ""


@rule(code="NCCL016", name="nccl-topo-file-on-sku", severity=Severity.WARNING, kinds=SETTING_KINDS)
def topo_file_on_sku(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """``NCCL_TOPO_FILE`` points at a file for another VM family, or is set where none is wanted (needs ``--sku``).

    ## What it catches
    With ``--sku``: a topology path naming an Azure family directory or file (``ndv4``, ``ncv4``...)
    other than the SKU's, any topology file on sizes that should run without one (NC24/NC48ads,
    NC H100 v5, GB200), and Azure paths on non-Azure VMs (Crusoe ships its own file). A path under a
    ``hostPath`` mount is judged as the node's path it reads (``/opt/nccl_topo`` mounting the node's
    ``/etc/crusoe/nccl_topo`` is Crusoe's own file).

    ## Why is this bad?
    NCCL trusts the file over its own detection. Azure's ncv4 file hides the NVLink bridge of
    NC48ads (24.3 vs 326 GB/s measured with NCCL 2.28.9 on an H200 pair), an ndv4 file on an ND H100 v5 describes other bus
    ids and NUMA nodes, and Crusoe's hypervisor remaps PCI addresses so only Crusoe's file fits
    (Azure/azhpc-images ``topology/``).

    ## Severity
    Warning: NCCL trusts the topology file over its own detection; a file of another family hides links
    (24.3 vs 326 GB/s measured on NC48ads with NCCL 2.28.9).

    ## Example
    ```text
    # hpcconf lint --sku ND96isr_H100_v5 nccl.conf
    NCCL_TOPO_FILE=/opt/microsoft/ndv4/topo.xml
    ```

    ## Fix
    Point at the SKU's own file (``/opt/microsoft/ndv5/topo.xml`` for ND H100/H200 v5), or delete
    the line on sizes that need none.
    """
    if ctx.sku is None:
        return
    nccl = getattr(ctx.sku, "nccl", None)
    family = getattr(nccl, "topo_family", None)
    vendor_file = getattr(nccl, "vendor_topo_file", None)
    host_mounts = host_path_mounts(doc)
    for setting in _nccl_settings(doc):
        path = setting.value.strip()
        if setting.name != "NCCL_TOPO_FILE" or not path or setting.dynamic:
            continue
        path = on_host(path, host_mounts)  # the file NCCL reads is the node's file a hostPath mounts there
        named = _FAMILY_IN_PATH.search(path)
        if vendor_file and path != vendor_file:
            message = f"{ctx.sku_name} needs its provider's topology file {vendor_file}, not {path}"
            hint = f"set NCCL_TOPO_FILE={vendor_file}"
        elif family is None and not vendor_file:
            message = f"{ctx.sku_name} needs no topology file; {path} can only hide links NCCL detects itself"
            hint = "delete this NCCL_TOPO_FILE setting"
        elif named and family and named.group(1).lower() != family.lower():
            message = f"{path} is a {named.group(1).lower()} topology file; {ctx.sku_name} is {family}"
            image_dir = getattr(nccl, "image_dir", None)
            hint = f"use {image_dir}/topo.xml" if image_dir else f"use the {family} topology file"
        else:
            continue
        yield _setting_finding(doc, setting, message, hint=hint, whole=True)


def host_path_mounts(doc: Document) -> list[tuple[str, str]]:
    """(mount path in the container, path on the node) of every hostPath volume mount of the document's pods."""
    if doc.yaml is None:
        return []
    from ...parsers.k8s import as_dict, pods

    found = []
    for pod in pods(doc):
        host = {str(v.get("name")): str(as_dict(v.get("hostPath")).get("path", "")).rstrip("/")
                for v in pod.spec.get("volumes") or [] if isinstance(v, dict) and as_dict(v.get("hostPath")).get("path")}
        for _, container in pod.containers(init=True):
            for mount in container.get("volumeMounts") or []:
                if isinstance(mount, dict) and str(mount.get("name")) in host and mount.get("mountPath"):
                    sub = str(mount.get("subPath") or "").strip("/")
                    node = host[str(mount["name"])] + (f"/{sub}" if sub else "")
                    found.append((str(mount["mountPath"]).rstrip("/") or "/", node))
    return found


def on_host(path: str, mounts: list[tuple[str, str]]) -> str:
    """``path`` as the node names it, when a hostPath mount holds it (the deepest mount wins); else ``path``."""
    holding = [(m, h) for m, h in mounts if path == m or path.startswith(m.rstrip("/") + "/")]
    if not holding:
        return path
    mount, host = max(holding, key=lambda pair: len(pair[0]))
    return host + path[len(mount):]


def _setting_value(settings: list[Setting], name: str) -> Setting | None:
    """The last literal setting of ``name`` (the one NCCL reads), or None."""
    found = [s for s in settings if s.name == name and not s.dynamic]
    return found[-1] if found else None


@rule(code="NCCL050", name="nccl-mnnvl-without-cumem", severity=Severity.ERROR, kinds=SETTING_KINDS, since="0.3.0")
def mnnvl_without_cumem(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """``NCCL_CUMEM_ENABLE=0`` where multi-node NVLink is wanted: MNNVL needs cuMem.

    ## What it catches
    ``NCCL_CUMEM_ENABLE=0`` in a file that also sets ``NCCL_MNNVL_ENABLE=1``, or (a warning) in any
    file linted with ``--sku`` for a size whose NVLink domain spans VMs (GB200/GB300 NVL72).

    ## Why is this bad?
    NCCL uses NVLink across VMs only through cuMem FABRIC handles: ``checkMNNVL`` returns "no MNNVL"
    at once when cuMem is off (NVIDIA/nccl ``src/init.cc`` @ v2.21.5-1, "MNNVL requires cuMem to be
    enabled"). With ``NCCL_MNNVL_ENABLE=1`` every multi-node job then fails at init with "MNNVL is
    not supported on this system"; without it, an NVL72 rack's jobs silently run over InfiniBand.
    cuMem is on by default (-2, auto) since NCCL 2.19; 0 is a leftover of older workarounds.

    ## Severity
    Error: `checkMNNVL` needs cuMem (NVIDIA/nccl `src/init.cc`): with NCCL_MNNVL_ENABLE=1 every multi-
    node job fails at init; without it an NVL72 rack's jobs run over InfiniBand instead of NVLink.

    ## Example
    ```text
    NCCL_MNNVL_ENABLE=1
    NCCL_CUMEM_ENABLE=0
    ```

    ## Fix
    Remove ``NCCL_CUMEM_ENABLE`` (or set it to 1).
    """
    settings = _nccl_settings(doc)
    cumem = _setting_value(settings, "NCCL_CUMEM_ENABLE")
    if cumem is None or cumem.value.strip() != "0":
        return
    mnnvl = _setting_value(settings, "NCCL_MNNVL_ENABLE")
    if mnnvl is not None and mnnvl.value.strip() == "1":
        yield _setting_finding(doc, cumem, f"NCCL_CUMEM_ENABLE=0 turns cuMem off, and NCCL_MNNVL_ENABLE=1 (line "
                                           f"{mnnvl.line}) then fails every multi-node init: MNNVL needs cuMem",
                               hint="remove NCCL_CUMEM_ENABLE (cuMem is on by default since NCCL 2.19)")
    elif ctx.sku is not None and getattr(ctx.sku, "nvlink_spans_nodes", False):
        yield _setting_finding(doc, cumem, f"NCCL_CUMEM_ENABLE=0 turns cuMem off, so NCCL cannot use "
                                           f"{ctx.sku_name}'s NVLink across VMs (MNNVL needs cuMem): jobs run "
                                           f"over InfiniBand", hint="remove NCCL_CUMEM_ENABLE",
                               severity=Severity.WARNING)


# --------------------------------------------------------------------------- NCCL060

@rule(code="NCCL060", name="nccl-setting-discards-hardware", severity=Severity.WARNING, kinds=SETTING_KINDS,
      since="0.3.0")
def setting_discards_hardware(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """A setting turns off a transport or algorithm the VM's hardware offers: NVLink P2P, NVLS, MNNVL, InfiniBand.

    ## What it catches
    ``NCCL_P2P_DISABLE=1`` on a VM with NVLink, ``NCCL_NVLS_ENABLE=0`` on one with NVLink SHARP
    (NVSwitch gen 3: H100/H200/B200 HGX, GB200), ``NCCL_MNNVL_ENABLE=0`` where the NVLink domain spans
    VMs (GB200/GB300 NVL72), ``NCCL_IB_DISABLE=1`` in a multi-node job on a VM with InfiniBand. The VM
    is ``--sku`` (or the path's settings), or the one catalog size the file names; a warning then. With
    no VM known it is info: the loss depends on hardware the file does not name; where the file shows AMD GPUs
    (``amd.com/gpu``, ROCm, rccl, an MI300X/MI325X name in what it runs or in its path, AMD's copyright line;
    other comments are remarks, not where it runs) the NVLink, NVLS and MNNVL checks are left out, as there
    is no NVLink to lose. A node count the file leaves to a variable, a range or a templated ``replicas`` is
    unknown, never "one node". Intent the file
    states is respected: P2P disabled together with ``NCCL_SHM_DISABLE=1`` sends all traffic through
    the NIC on purpose (a single-node network test, as Azure's NDv4 health check runs it), and
    ``NCCL_IB_DISABLE=1`` in a single-node job or a variant written without InfiniBand loses nothing.

    ## Why is this bad?
    Each of these tells NCCL not to use a path the hardware has: without P2P, GPU-to-GPU traffic inside
    the VM goes through host memory (SHM transport) instead of NVLink; without NVLS, AllReduce loses
    the NVSwitch's in-network reduction (NCCL's tuner picks NVLS/NVLSTree for large messages on
    NVSwitch gen 3); without MNNVL, GPUs of one NVL72 rack talk over the NIC instead of NVLink; without
    IB, nodes talk over TCP sockets. NCCL honours each variable as documented (NVIDIA NCCL
    environment-variables page; ``src/transport/p2p.cc``, ``src/transport/nvls.cc``, ``src/init.cc``
    MNNVL, ``src/transport/net_ib.cc``), so the job runs, slower: measurable as busbw.

    ## Severity
    Warning on a VM that has the hardware (NCCL honours the switch and uses the slower path; busbw
    drops); info where no VM size is known.

    ## Example
    ```text
    # hpcconf lint --sku ND96isr_H100_v5 job.env
    NCCL_P2P_DISABLE=1
    NCCL_NVLS_ENABLE=0
    ```

    ## Fix
    Delete the line (a debugging leftover), or keep it with an inline ``# hpcconf: ignore[NCCL060]``
    stating why (e.g. NVLS disabled to save its memory).
    """
    sku = ctx.sku_for_text(doc.text)
    settings = {s.name: s for s in _nccl_settings(doc) if not s.dynamic}
    checks = (
        ("NCCL_P2P_DISABLE", "1", "nvlink", "GPU-to-GPU traffic inside the VM goes through host memory instead of NVLink"),
        ("NCCL_NVLS_ENABLE", "0", "nvls", "AllReduce loses NVSwitch in-network reduction (NVLS)"),
        ("NCCL_MNNVL_ENABLE", "0", "mnnvl", "GPUs of one NVLink domain across VMs talk over the network instead of NVLink"),
        ("NCCL_IB_DISABLE", "1", "ib", "nodes talk over TCP sockets instead of InfiniBand"),
    )
    for name, value, hardware, loss in checks:
        setting = settings.get(name)
        if setting is None or setting.value.strip() != value:
            continue
        if hardware == "nvlink" and (settings.get("NCCL_SHM_DISABLE") is not None
                                     and settings["NCCL_SHM_DISABLE"].value.strip() == "1"):
            continue  # P2P and SHM both off: every byte goes through the NIC, a network test on purpose
        if hardware == "ib" and (multi_node(doc) is False or no_ib_intent(doc) not in ("", "NCCL_IB_DISABLE=1")):
            continue  # one node needs no fabric; a variant written for a cluster without IB means it
        if sku is None and hardware != "ib" and (ctx.collective == "rccl" or shows_amd_gpus(doc)):
            continue  # AMD GPUs (MI300X/MI325X): no NVLink, NVLS or MNNVL to lose; RCCL reads the names
        if sku is None:
            what = {"nvlink": "NVLink", "nvls": "NVLink SHARP (NVSwitch gen 3)", "mnnvl": "multi-node NVLink",
                    "ib": "InfiniBand"}[hardware]
            yield _setting_finding(doc, setting, f"{name}={value}: on a VM with {what}, {loss}; the file names no VM "
                                                 "size, so hpcconf cannot tell", hint="set --sku to decide",
                                   severity=Severity.INFO, whole=True)
            continue
        has = {"nvlink": sku.nvlink.present, "nvls": sku.nvlink.nvls, "mnnvl": sku.nvlink_spans_nodes,
               "ib": sku.infiniband is not None and multi_node(doc) is True}[hardware]
        if has:
            yield _setting_finding(doc, setting, f"{name}={value} on {sku.name}: {loss}",
                                   hint="delete it, or suppress it with the reason", whole=True)


# --------------------------------------------------------------------------- NCCL061

_PLUGIN_VARS = ("NCCL_NET_PLUGIN", "NCCL_TUNER_PLUGIN", "NCCL_PROFILER_PLUGIN", "NCCL_ENV_PLUGIN")
# Base images that ship no NCCL plugin: an OS image, or NVIDIA's CUDA images (CUDA and NCCL only).
_PLAIN_BASE = re.compile(r"^(?:docker\.io/)?(?:library/)?(?:ubuntu|debian|rockylinux|almalinux|centos|fedora|"
                         r"amazonlinux|alpine)(?::|@|$)|^(?:docker\.io/|nvcr\.io/)?nvidia/cuda(?::|@|$)", re.IGNORECASE)
# An install prefix (autotools, CMake, make): the build puts the library in a directory below it (PREFIX/lib).
_INSTALL_PREFIX = re.compile(r"(?:--prefix[= ]|CMAKE_INSTALL_PREFIX=|\bPREFIX=)['\"]?(/[^\s'\";&|]*)")


def _final_base(doc: Document) -> str:
    """The image the built image starts from, through named stages; "" when a stage or ARG decides."""
    froms = [i for i in doc.dockerfile.instructions if i.keyword == "FROM"]
    names: dict[str, str] = {}
    for instruction in froms:
        words = [w for w in instruction.arguments.split() if not w.startswith("--")]
        if len(words) >= 3 and words[1].lower() == "as":
            names[words[2].lower()] = words[0]
    if not froms:
        return ""
    words = [w for w in froms[-1].arguments.split() if not w.startswith("--")]
    base, seen = (words[0] if words else ""), set()
    while base.lower() in names and base.lower() not in seen:
        seen.add(base.lower())
        base = names[base.lower()]
    return "" if "$" in base else base


@rule(code="NCCL061", name="nccl-plugin-path-not-in-image", severity=Severity.WARNING, kinds=(Kind.DOCKERFILE,),
      since="0.3.0")
def plugin_path_not_in_image(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """A Dockerfile points NCCL at a plugin library the image never gets.

    ## What it catches
    ``ENV NCCL_NET_PLUGIN``, ``NCCL_TUNER_PLUGIN``, ``NCCL_PROFILER_PLUGIN`` or ``NCCL_ENV_PLUGIN`` set to
    an absolute path, in an image built from a base that ships no NCCL plugin (an OS image, NVIDIA's
    ``nvidia/cuda`` images; also through named build stages, ``FROM base AS runtime``), where no ``COPY``, ``ADD`` or ``RUN`` of the Dockerfile names the file or
    its directory, and no build installs under a prefix above it (``./configure --prefix=/opt/aws-ofi-nccl``
    puts the plugin in ``/opt/aws-ofi-nccl/lib``; also ``CMAKE_INSTALL_PREFIX=``, ``PREFIX=``). Images built
    on other bases (NGC PyTorch ships HPC-X's plugin) are not judged.

    ## Why is this bad?
    NCCL ``dlopen``s the path it is given; a missing file is logged ("NET/Plugin: Could not find" /
    "TUNER/Plugin: Failed to find", NVIDIA/nccl ``src/plugin/net.cc``, ``src/plugin/tuner.cc``) and NCCL
    carries on without it: no aws-ofi-nccl means no EFA (TCP sockets instead), no tuner means NCCL's
    default choices. The job runs, slower than the image was built to run.

    ## Severity
    Warning: NCCL logs the missing plugin and carries on without it (`src/plugin/net.cc`,
    `src/plugin/tuner.cc`): no EFA / no tuning, the job runs slower.

    ## Example
    ```dockerfile
    FROM nvidia/cuda:12.4.1-devel-ubuntu22.04
    ENV NCCL_TUNER_PLUGIN=/opt/nccl-tuner/libnccl-tuner.so
    ```

    ## Fix
    Build or copy the plugin to that path in the Dockerfile, or point the variable where the image has it.
    """
    base = _final_base(doc)
    if not _PLAIN_BASE.search(base):
        return
    others = " ".join(i.arguments for i in doc.dockerfile.instructions if i.keyword in ("RUN", "COPY", "ADD"))
    for setting in _nccl_settings(doc):
        path = setting.value.strip()
        if setting.name not in _PLUGIN_VARS or setting.dynamic or not path.startswith("/"):
            continue
        directory, name = posixpath.split(path)
        if name in others or (directory and directory != "/" and directory in others):
            continue
        if any(path.startswith(prefix.rstrip("/") + "/") for prefix in _INSTALL_PREFIX.findall(others)
               if prefix.rstrip("/")):
            continue
        yield _setting_finding(doc, setting, f"{setting.name}={path}: nothing in this Dockerfile puts that file in "
                                             f"the image, and its base {base} ships no NCCL plugin: NCCL runs without it",
                               hint="build or COPY the plugin there, or fix the path")


# --------------------------------------------------------------------------- NCCL062

def _own_network_namespace(doc: Document) -> bool:
    """Pods without ``hostNetwork`` see only their own interfaces (lo, eth0, attached networks), never the
    node's: a node interface to exclude is not there (HyperPod on EKS, against HyperPod Slurm's host jobs)."""
    if doc.yaml is None:
        return False
    specs = pod_specs_anywhere(doc.yaml.data)
    return bool(specs) and not any(spec.get("hostNetwork") is True for spec in specs)


@rule(code="NCCL062", name="nccl-socket-ifname-platform-interface", severity=Severity.WARNING, kinds=SETTING_KINDS,
      since="0.3.0")
def socket_ifname_platform_interface(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """``NCCL_SOCKET_IFNAME`` excludes interfaces, but not the one the platform's nodes have and NCCL must not use.

    ## What it catches
    An exclusion list (``NCCL_SOCKET_IFNAME=^lo,docker0``) on a platform whose provider profile
    (``hpcconf/data/providers.yaml``: ``--provider``, per-path settings, or the file's signals) names
    interfaces to keep out of NCCL's socket transport, that leaves one of them in: SageMaker HyperPod's
    ``veth_def_agent``. Kubernetes pods without ``hostNetwork: true`` are left alone: their network
    namespace holds only their own interfaces, not the node's.

    ## Why is this bad?
    With an exclusion list NCCL may use every other interface for its bootstrap and socket transport
    (NCCL environment-variables page, ``NCCL_SOCKET_IFNAME``). HyperPod nodes carry ``veth_def_agent``
    besides the EFA and ENA interfaces; aws/sagemaker-hyperpod-recipes changed its generated
    ``^lo,docker0`` to ``^lo,docker0,veth_def_agent`` for P5 HyperPod Slurm clusters (commit abc28a9, #182,
    "fix fetch efa info fail when using p5 hyperpod slurm"). A warning: the platform's own fix says the
    job goes wrong without it; no measurement says how.

    ## Severity
    Warning: the platform's own fix (aws/sagemaker-hyperpod-recipes abc28a9, #182) says the job goes
    wrong without the exclusion; no measurement says how.

    ## Example
    ```bash
    #SBATCH --job-name=sagemaker-llama-8b
    export NCCL_SOCKET_IFNAME=^lo,docker0
    ```

    ## Fix
    ``NCCL_SOCKET_IFNAME=^lo,docker0,veth_def_agent``.
    """
    from ...knowledge.grammars import parse_if_list

    provider = ctx.provider_for(doc.text)
    if provider is None or not provider.socket_exclude or _own_network_namespace(doc):
        return
    for setting in _nccl_settings(doc):
        if setting.name != "NCCL_SOCKET_IFNAME" or setting.dynamic or not setting.value.strip():
            continue
        parsed = parse_if_list(setting.value.strip())
        if not parsed.exclude:
            continue
        left = [name for name in provider.socket_exclude
                if not any((name == e.name) if parsed.exact else name.startswith(e.name) for e in parsed.entries)]
        if left:
            yield _setting_finding(doc, setting, f"NCCL_SOCKET_IFNAME={setting.value.strip()} leaves {', '.join(left)} "
                                                 f"to NCCL on {provider.title}, an interface its nodes have that NCCL "
                                                 "must not use", hint=f"add {','.join(left)} to the exclusion list "
                                                                      f"({provider.socket_exclude_source})")
