"""MPI / UCX / UCC rules: the environment that decides how Open MPI moves GPU data.

They read ``UCX_*``, ``UCC_*`` and ``OMPI_MCA_*`` settings wherever they are set (env files,
``export`` lines in sbatch and shell scripts, container env, Dockerfile ``ENV``; see
:mod:`hpcconf.lint.settings`). The value grammars are :mod:`hpcconf.knowledge.grammars`
(UCX ``ucp_context.c``, UCC ``ucc_coll_score.c``, Open MPI MCA parameters). SKU facts come from ``--sku`` or, for a compiled spec, from the pool the
artifact belongs to; UCX and Open MPI versions from the spec's ``versions`` (newest when unknown).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Iterator, Optional

from ...artifacts import Kind
from ...diagnostics import Diagnostic, Severity
from ...knowledge import grammars
from ...knowledge.openmpi import IB_TRANSPORTS, NETWORK_TRANSPORTS, UCX_SOCKCM_REMOVED, has_coll_ucc
from ...knowledge.versions import Version
from ...rules_registry import rule
from ..context import LintContext
from ..document import Document
from ..settings import SETTING_KINDS, Setting, env_settings

if TYPE_CHECKING:
    from ...catalog import Sku

MPI_KINDS = tuple(k for k in SETTING_KINDS if k != Kind.NCCL_CONF)  # nccl.conf: NCCL reads only NCCL_*


# --------------------------------------------------------------------------- context helpers

def ucx_version(ctx: LintContext) -> Optional[str]:
    """The spec's UCX version; None (newest) when unknown."""
    return ctx.ucx_version


def openmpi_version(ctx: LintContext) -> Optional[str]:
    """The spec's Open MPI version; None (newest) when unknown."""
    return ctx.openmpi_version


def sku_for(doc: Document, ctx: LintContext) -> Optional[Sku]:
    """The SKU the document's settings run on: its pool's, for a compiled spec; else ``--sku``."""
    cluster = ctx.cluster
    artifact = doc.artifact
    if cluster is not None and artifact is not None:
        parts = artifact.path.split("/")
        pools = {p.name: p for p in cluster.pools}
        for part in parts[:-1]:
            if part in pools:
                return ctx.pool_skus[part]
        gpu_pools = [p for p in pools.values() if p.gpus_per_node]
        if len(gpu_pools) == 1:
            return ctx.pool_skus[gpu_pools[0].name]
    return ctx.sku


def _has_ib(sku: Sku, ctx: LintContext) -> bool:
    if sku.infiniband is None:
        return False
    return ctx.cluster.ib_network.enabled if ctx.cluster is not None else True


def _mpi_settings(doc: Document, prefixes: tuple[str, ...]) -> list[Setting]:
    # Scripts are read with the shell parser, so mixed-case MCA exports (OMPI_MCA_coll_ucc_enable) are here too.
    return [s for s in env_settings(doc) if s.name.startswith(prefixes) and not s.dynamic]


def _at(doc: Document, setting: Setting, problem: grammars.ValueProblem, message: str = "",
        severity: Optional[Severity] = None) -> Diagnostic:
    start = setting.value_column + problem.offset
    return doc.at_line(setting.line, message or problem.message, hint=problem.hint, column=start,
                       end_column=start + problem.length, severity=severity or problem.severity)


def _tokens(value: str) -> list[str]:
    body = value[1:] if value.startswith("^") else value
    return [t.strip().lstrip("\\") for t in body.split(",") if t.strip()]


# --------------------------------------------------------------------------- UCX

@rule(code="MPI001", name="ucx-tls-invalid", severity=Severity.WARNING, kinds=MPI_KINDS)
def ucx_tls_invalid(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """``UCX_TLS`` names a transport UCX does not have (``sockcm``, a typo), or leaves none.

    ## What it catches
    Every entry of ``UCX_TLS`` that is neither a UCX transport (``rc_mlx5``, ``tcp``,
    ``cuda_ipc``, ...) nor an alias (``rc``, ``sm``, ``cuda``, ...): misspellings, connection
    managers listed as transports (``rdmacm``) and ``sockcm``, removed in UCX 1.11. Also ``all``
    combined with other entries, and a list with no usable entry at all (an error).

    ## Why is this bad?
    UCX skips unknown entries and warns only under ``UCX_WARN_INVALID_CONFIG=y``, so the job
    runs without the transport its author asked for. ``sockcm`` was deleted in UCX 1.11
    (openucx/ucx bfdd70e8) yet still appears in copied recipes: the Azure UCX-Py test notebook
    (rapidsai/ucx-py#311) sets ``UCX_TLS=tcp,cuda_copy,sockcm,rc`` for ND40rs_v2. A list where nothing is usable makes
    UCX fail to initialise.

    ## Severity
    Warning: UCX drops unknown transports silently (`ucp_context.c`, warns only with
    UCX_WARN_INVALID_CONFIG=y); the job runs without the transport asked for.

    ## Example
    ```text
    export UCX_TLS=tcp,cuda_copy,sockcm,rc
    ```

    ## Fix
    Drop ``sockcm`` and fix typos: ``export UCX_TLS=rc,sm,self,cuda_copy,cuda_ipc`` on an
    InfiniBand SKU, ``tcp,sm,self,cuda_copy,cuda_ipc`` without InfiniBand.
    """
    version = ucx_version(ctx)
    for setting in _mpi_settings(doc, ("UCX_TLS",)):
        if setting.name != "UCX_TLS":
            continue
        for problem in grammars.check_ucx_tls(setting.value, version):
            yield _at(doc, setting, problem)


# nccl-tests' binaries (all_reduce_perf, sendrecv_perf, ...; *_perf_mpi in its MPI build) and its directory.
_NCCL_TESTS = re.compile(r"(?<![\w-])(?:all_reduce|all_gather|alltoall|broadcast|reduce|reduce_scatter|sendrecv|"
                         r"scatter|gather|hypercube)_perf(?:_mpi)?\b|\bnccl[-_]tests\b")


def runs_nccl_tests(doc: Document) -> bool:
    """Whether the document starts nccl-tests: there MPI only launches the ranks and exchanges NCCL's
    unique id (nccl-tests ``common.cu`` ``MPI_Bcast``); every byte measured goes through NCCL's own
    transports, so UCX's transport list does not touch the data path."""
    return _starts_nccl_tests(doc.text)


@lru_cache(maxsize=8)
def _starts_nccl_tests(text: str) -> bool:
    # Once per text: every document of a multi-document file carries the whole file's text.
    return bool(_NCCL_TESTS.search(text))


@rule(code="MPI002", name="ucx-tls-sku-mismatch", severity=Severity.WARNING, kinds=MPI_KINDS)
def ucx_tls_sku_mismatch(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """``UCX_TLS`` does not fit the SKU's network or GPUs (no rc on InfiniBand, rc without it, no cuda_ipc).

    ## What it catches
    An allow-list ``UCX_TLS`` (not ``^...``, not ``all``) that on an InfiniBand SKU has no
    ``rc``/``ud``/``dc`` transport; that on a SKU without InfiniBand lists only IB transports
    (no ``tcp``); or that lists ``cuda_copy`` but neither ``cuda_ipc`` nor ``cuda`` on a node
    with more than one GPU (or an unknown SKU).

    ## Why is this bad?
    The Azure UCX-Py test notebook (rapidsai/ucx-py#311) measured UCX-Py on ND40rs_v2 (one EDR HCA, NVLink V100s): ``tcp,cuda_copy`` moved
    0.4 GB/s, adding ``rc`` 2.1 GB/s (2.7 GB/s between nodes), adding ``cuda_ipc`` 17 GB/s over
    one NVLink and 26 GB/s over two. Without an IB transport MPI traffic crosses the Ethernet;
    without ``cuda_ipc`` GPU-to-GPU messages inside a node are staged through host memory.
    On a SKU without InfiniBand, ``rc`` finds no device and leaves nodes with no way to talk.

    A file that runs nccl-tests (``all_reduce_perf`` and the other ``*_perf`` binaries) is not told
    to add ``rc``: there MPI only starts the ranks and broadcasts NCCL's unique id, and NCCL moves
    the data over InfiniBand itself, so ``UCX_TLS=tcp`` is a common, harmless bootstrap setting
    (Azure's ND A100 v4 health checks use it).

    ## Severity
    Warning: MPI traffic crosses the Ethernet or host memory instead of IB / NVLink (measured on
    ND40rs_v2 in rapidsai/ucx-py#311: 0.4 vs 26 GB/s).

    ## Example
    ```text
    # --sku ND40rs_v2
    export UCX_TLS=tcp,cuda_copy
    ```

    ## Fix
    ``export UCX_TLS=rc,sm,self,cuda_copy,cuda_ipc`` on InfiniBand SKUs;
    ``export UCX_TLS=tcp,sm,self,cuda_copy,cuda_ipc`` on the others (e.g. NC A100 v4).
    """
    sku = sku_for(doc, ctx)
    bootstrap_only = runs_nccl_tests(doc)
    for setting in _mpi_settings(doc, ("UCX_TLS",)):
        if setting.name != "UCX_TLS" or setting.value.startswith("^") or not setting.value.strip():
            continue
        names = set(_tokens(setting.value))
        if "all" in names:
            continue
        if sku is not None and sku.infiniband is not None and _has_ib(sku, ctx) and not names & IB_TRANSPORTS \
                and not bootstrap_only:
            yield doc.at_line(setting.line, f"UCX_TLS={setting.value} has no InfiniBand transport although "
                              f"{sku.name} has {sku.infiniband.count} {sku.infiniband.rate} HCA(s): MPI traffic "
                              "between nodes goes over TCP", hint="add rc (e.g. rc,sm,self,cuda_copy,cuda_ipc)",
                              column=setting.value_column, end_column=setting.end_column)
        if sku is not None and not _has_ib(sku, ctx) and names & IB_TRANSPORTS:
            no_network = not names & (NETWORK_TRANSPORTS - IB_TRANSPORTS)
            yield doc.at_line(setting.line, f"UCX_TLS lists InfiniBand transports ({', '.join(sorted(names & IB_TRANSPORTS))}) "
                              f"but {sku.name} has no InfiniBand" + ("; no transport is left between nodes"
                                                                      if no_network else "; they find no device"),
                              hint="use tcp instead (tcp,sm,self,cuda_copy,cuda_ipc)",
                              column=setting.value_column, end_column=setting.end_column)
        multi_gpu = sku is None or sku.gpu.count > 1
        if multi_gpu and "cuda_copy" in names and not names & {"cuda_ipc", "cuda"} and not bootstrap_only:
            where = f"{sku.name}'s {sku.gpu.count} GPUs" if sku is not None else "GPUs of one node"
            yield doc.at_line(setting.line, f"UCX_TLS has cuda_copy but not cuda_ipc: messages between {where} "
                              "are staged through host memory instead of NVLink/PCIe peer copies",
                              hint="add cuda_ipc", column=setting.value_column, end_column=setting.end_column)


@rule(code="MPI003", name="ucx-net-devices-invalid", severity=Severity.WARNING, kinds=MPI_KINDS)
def ucx_net_devices_invalid(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """``UCX_NET_DEVICES`` names a device UCX cannot match, or the wrong NIC for the SKU.

    ## What it catches
    RDMA devices without their port (``mlx5_0`` instead of ``mlx5_0:1``), non-numeric ports,
    whitespace, ``all`` mixed with names; with a SKU, RDMA devices on a SKU without InfiniBand
    and HCAs the SKU reserves for Ethernet (Crusoe's ``mlx5_0``, excluded from NCCL with
    ``NCCL_IB_HCA=^mlx5_0:1`` in Crusoe's Slurm NCCL guide).

    ## Why is this bad?
    UCX names RDMA resources ``device:port``; an entry that matches nothing is dropped with at
    most a warning, and if nothing is left UCX has no network device (jobs across nodes fail or
    fall back to what remains). Pinning UCX to an Ethernet HCA sends MPI traffic over the
    front-end network instead of InfiniBand.

    ## Severity
    Warning: UCX drops device names that match nothing; traffic falls back to what remains (UCX
    `ucp_context.c`).

    ## Example
    ```text
    export UCX_NET_DEVICES=mlx5_0
    ```

    ## Fix
    Write ``device:port`` (``mlx5_ib0:1`` on Azure HPC images, ``mlx5_0:1`` on a stock image), or
    ``eth0`` with ``UCX_TLS=tcp`` on SKUs without InfiniBand.
    """
    sku = sku_for(doc, ctx)
    for setting in _mpi_settings(doc, ("UCX_NET_DEVICES",)):
        if setting.name != "UCX_NET_DEVICES":
            continue
        for problem in grammars.check_ucx_net_devices(setting.value):
            yield _at(doc, setting, problem)
        if sku is None or setting.value.startswith("^"):
            continue
        excluded = set(sku.infiniband.exclude_hcas) if sku.infiniband is not None else set()
        offset = 0
        for token in setting.value.split(","):
            name = token.strip().partition(":")[0]
            column = setting.value_column + offset
            offset += len(token) + 1
            if not name or name == "all":
                continue
            rdma = grammars.IB_DEVICE_RE.match(name) is not None
            if rdma and not _has_ib(sku, ctx):
                yield doc.at_line(setting.line, f"{name} is an RDMA device but {sku.name} has no InfiniBand",
                                  hint=f"use {sku.ethernet_interface} (with UCX_TLS=tcp,...)", column=column,
                                  end_column=column + len(token))
            elif name in excluded:
                yield doc.at_line(setting.line, f"{name} is {sku.name}'s Ethernet HCA, not an InfiniBand port",
                                  hint="list the InfiniBand HCAs instead, or leave UCX_NET_DEVICES unset",
                                  column=column, end_column=column + len(token))


@rule(code="MPI007", name="ucx-sockaddr-sockcm", severity=Severity.WARNING, kinds=MPI_KINDS)
def ucx_sockaddr_sockcm(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """``UCX_SOCKADDR_TLS_PRIORITY`` asks for ``sockcm``, which UCX 1.11 removed.

    ## What it catches
    A ``UCX_SOCKADDR_TLS_PRIORITY`` list containing ``sockcm`` when the UCX version is 1.11 or
    newer (or unknown, which means the newest).

    ## Why is this bad?
    ``sockcm`` was removed in UCX 1.11 (openucx/ucx bfdd70e8; it lingers only in this
    variable's old default ``rdmacm,tcp,sockcm``). The Azure UCX-Py test notebook (rapidsai/ucx-py#311) sets
    ``UCX_SOCKADDR_TLS_PRIORITY=sockcm``: on a current UCX that names no connection manager, so
    client/server (listener) connections such as UCX-Py's find none to use.

    ## Severity
    Warning: sockcm was removed in UCX 1.11 (openucx/ucx bfdd70e8); client/server connections have no
    connection manager listed.

    ## Example
    ```text
    export UCX_SOCKADDR_TLS_PRIORITY=sockcm
    ```

    ## Fix
    Leave the variable unset (the default tries ``rdmacm`` then ``tcp``), or list those.
    """
    version = Version.parse_or_none(ucx_version(ctx))
    if version is not None and not version.at_least(UCX_SOCKCM_REMOVED):
        return
    for setting in _mpi_settings(doc, ("UCX_SOCKADDR_TLS_PRIORITY",)):
        if setting.name != "UCX_SOCKADDR_TLS_PRIORITY":
            continue
        names = [t.strip() for t in setting.value.split(",")]
        if "sockcm" not in names:
            continue
        offset = setting.value.find("sockcm")
        left = [n for n in names if n and n != "sockcm"]
        column = setting.value_column + offset
        yield doc.at_line(setting.line, "sockcm was removed in UCX 1.11" + (
            f"; only {','.join(left)} remain" if left else "; no connection manager is left for listener connections"),
            hint="remove sockcm (leave the variable unset for the default rdmacm,tcp)",
            column=column, end_column=column + len("sockcm"))


# --------------------------------------------------------------------------- UCC

@rule(code="MPI004", name="ucc-tune-invalid", severity=Severity.ERROR, kinds=MPI_KINDS)
def ucc_tune_invalid(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """A ``UCC_<CL|TL>_<NAME>_TUNE`` string that UCC cannot parse, or a token that does nothing.

    ## What it catches
    Tokens of ``UCC_TL_NCCL_TUNE`` and the other ``*_TUNE`` variables that break the grammar of
    ``ucc_coll_score.c``: ``#``-separated tokens of ``:``-separated qualifiers (collective list,
    memory types, message ranges ``0-4k``, team sizes ``[2-8]``, score or ``inf``,
    ``@algorithm``), each kind at most once. Also tokens with neither a score nor an algorithm
    (warning) and empty message ranges.

    ## Why is this bad?
    UCC logs ``failed to parse token`` and returns ``UCC_ERR_INVALID_PARAM``: the team layer
    fails to initialise, and MPI falls back to its own collectives or aborts (openucx/ucc
    ``ucc_coll_score.c``). JSC's X-Dev blog ("MPI as API", 2023) routes MPI allreduce to NCCL with ``UCC_TL_NCCL_TUNE=allreduce:cuda:inf``;
    a slip such as ``allreduce:cuda:inf:inf`` or ``all_reduce:cuda:inf`` breaks it.

    ## Severity
    Error: UCC returns UCC_ERR_INVALID_PARAM on a malformed tune string (openucx/ucc
    `ucc_coll_score.c`); the team layer fails to initialise.

    ## Example
    ```text
    export UCC_TL_NCCL_TUNE=all_reduce:cuda:inf
    ```

    ## Fix
    Use UCC's names and one qualifier of each kind per token:
    ``export UCC_TL_NCCL_TUNE=allreduce:cuda:inf``.
    """
    for setting in _mpi_settings(doc, ("UCC_",)):
        if re.fullmatch(r"UCC_(CL|TL)_[A-Z0-9]+_TUNE", setting.name):
            for problem in grammars.check_ucc_tune(setting.value):
                yield _at(doc, setting, problem)


# --------------------------------------------------------------------------- Open MPI

@rule(code="MPI005", name="ompi-coll-mca-invalid", severity=Severity.WARNING, kinds=MPI_KINDS)
def ompi_coll_mca_invalid(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """An ``OMPI_MCA_coll_*`` value Open MPI cannot read, or ``coll_hcoll`` on Open MPI 6.

    ## What it catches
    ``*_enable`` values that are not MCA booleans, ``*_priority`` values that are not integers,
    and any ``OMPI_MCA_coll_hcoll_*`` when the Open MPI version is 6.0 or newer.

    ## Why is this bad?
    Open MPI rejects a malformed MCA value at startup. ``coll/hcoll`` was removed in Open MPI
    6.0 (open-mpi/ompi PR #13480): its variables are then unknown and only produce a warning,
    so a recipe that relies on ``coll_hcoll_enable=0`` to steer collectives does nothing.
    Azure's NCCL tests pass ``coll_hcoll_enable 0`` for the Open MPI 4.x/5.x of their images
    (Azure/azhpc-images tests).

    ## Severity
    Warning: a removed component's variables are only warned about by Open MPI (open-mpi/ompi PR
    #13480); the collective choice the recipe relies on does not happen.

    ## Example
    ```text
    export OMPI_MCA_coll_ucc_enable=on
    export OMPI_MCA_coll_ucc_priority=high
    ```

    ## Fix
    Use ``1``/``0`` and integers; drop ``coll_hcoll`` settings for Open MPI 6 and later.
    """
    version = openmpi_version(ctx)
    for setting in _mpi_settings(doc, ("OMPI_MCA_coll_",)):
        for problem in grammars.check_ompi_mca(setting.name, setting.value, version):
            yield _at(doc, setting, problem)


@rule(code="MPI006", name="ompi-ucc-not-selected", severity=Severity.WARNING, kinds=MPI_KINDS)
def ompi_ucc_not_selected(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """UCC settings are present but Open MPI will not use coll/ucc.

    ## What it catches
    ``UCC_*`` or ``OMPI_MCA_coll_ucc_*`` settings where ``OMPI_MCA_coll_ucc_enable`` is unset,
    where ``coll_ucc_priority`` is unset or not above the competing component (``coll/hcoll``
    at 90 while it exists and is enabled, else ``coll/tuned`` at 30), or where the Open MPI
    version predates coll/ucc (before 4.1.4).

    ## Why is this bad?
    Open MPI ships coll/ucc disabled with priority 10 (open-mpi/ompi PR #9009). A job that sets
    ``UCC_TL_NCCL_TUNE`` alone therefore never reaches UCC; with the default priority, basic and
    libnbc win and initialisation can fail (open-mpi/ompi#9885). JSC's X-Dev blog ("MPI as API", 2023) sets both
    ``OMPI_MCA_coll_ucc_enable=1`` and ``OMPI_MCA_coll_ucc_priority=100``, and measured UCC+NCCL
    allreduce 65x faster than plain Open MPI. coll/ucc exists in Open MPI 5.0 and, on the 4.1
    series, from 4.1.4 (PR #10171; the X-Dev blog used 4.1.4).

    ## Severity
    Warning: Open MPI ships coll/ucc disabled (open-mpi/ompi PR #9009); the UCC tuning never applies.

    ## Example
    ```text
    export UCC_TL_NCCL_TUNE=allreduce:cuda:inf
    export OMPI_MCA_coll_ucc_priority=50
    ```

    ## Fix
    ``export OMPI_MCA_coll_ucc_enable=1`` and ``export OMPI_MCA_coll_ucc_priority=100``, on
    Open MPI 4.1.4 or newer.
    """
    settings = _mpi_settings(doc, ("UCC_", "OMPI_MCA_"))
    if not any(s.name.startswith(("UCC_", "OMPI_MCA_coll_ucc_")) for s in settings):
        return
    env = {s.name: s.value for s in settings}
    where = {s.name: s for s in settings}
    first_ucc = next(s for s in settings if s.name.startswith(("UCC_", "OMPI_MCA_coll_ucc_")))
    version = openmpi_version(ctx)
    parsed = Version.parse_or_none(version)
    if parsed is not None and not has_coll_ucc(parsed):
        yield doc.at_line(first_ucc.line, f"Open MPI {version} has no coll/ucc (added in 4.1.4 and 5.0): "
                          "the UCC settings are ignored", hint="use Open MPI 4.1.4 or newer",
                          column=first_ucc.column, end_column=first_ucc.end_column)
        return
    for name, problem in grammars.check_ompi_coll_ucc(env, version):
        setting = where.get(name)
        if setting is not None:
            yield _at(doc, setting, problem)
        else:
            yield doc.at_line(first_ucc.line, problem.message, hint=problem.hint, column=first_ucc.column,
                              end_column=first_ucc.end_column, severity=problem.severity)


# --------------------------------------------------------------------------- rank counts

# nccl-tests: each rank drives -t threads x -g GPUs (src/common.cu: nThreads, nGpus; default 1 and 1).
_NCCL_TESTS = re.compile(r"\b\w+_perf(?:_mpi)?\b(?P<args>[^|;&\n]*)")
_NCCL_TESTS_OPTION = {"-g": "gpus", "--ngpus": "gpus", "-t": "threads", "--nthreads": "threads"}


def nccl_tests_gpus_per_rank(text: str) -> Optional[int]:
    """GPUs each rank of an nccl-tests binary in ``text`` drives (``-t`` x ``-g``); None when none runs."""
    match = _NCCL_TESTS.search(text)
    if match is None:
        return None
    found = {"gpus": 1, "threads": 1}
    words = match.group("args").split()
    for word, value in zip(words, words[1:] + [""]):
        key, _, inline = word.partition("=")
        if key in _NCCL_TESTS_OPTION and (inline or value).isdigit():
            found[_NCCL_TESTS_OPTION[key]] = int(inline or value)
    return found["gpus"] * found["threads"]


def _gpus(container: dict[str, Any]) -> int:
    from ...parsers.k8s import quantity, resources

    limits = resources(container, "limits") or resources(container, "requests")
    return sum(quantity(limits.get(name)) or 0 for name in ("nvidia.com/gpu", "amd.com/gpu"))


@rule(code="MPI008", name="mpijob-rank-count", severity=Severity.ERROR, kinds=(Kind.K8S_MANIFEST,), since="0.3.0")
def mpijob_rank_count(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """An MPIJob's ``mpirun -np`` asks for more ranks than its hostfile has slots, or nccl-tests ranks do not
    match the workers' GPUs.

    ## What it catches
    In a Kubeflow MPIJob (Open MPI, the default ``mpiImplementation``): ``-np`` larger than Worker
    ``replicas`` x ``slotsPerWorker`` (default 1) without ``--oversubscribe`` (error), a Worker without
    ``replicas`` counting none, as mpi-operator defaults it; for an
    nccl-tests binary, ranks x GPUs per rank (``-t`` x ``-g``) different from Worker ``replicas`` x
    the GPUs each worker requests: more is an error (two ranks on one GPU), fewer a warning (GPUs idle).
    The launcher is found by name or by path (``/opt/amazon/openmpi/bin/mpirun``, ``$MPI_HOME/bin/mpirun``),
    in a shell script or an exec-form list (``command: ["mpirun", "-np", "16", ...]``).

    ## Why is this bad?
    The MPI Operator writes one hostfile line per worker with ``slots=<slotsPerWorker>``
    (kubeflow/mpi-operator ``pkg/controller/mpi_job_controller.go``, newConfigMap). Open MPI refuses
    to start more ranks than slots: "There are not enough slots available in the system to satisfy
    the N slots that were requested" (Open MPI ``prte`` / ``orte`` rmaps), so the launcher fails.
    nccl-tests gives each rank ``-g`` GPUs starting at ``localRank x -g`` (NVIDIA/nccl-tests
    ``src/common.cu``): more ranks than GPUs select devices that do not exist or the same GPU twice,
    and NCCL refuses two ranks on one device ("Duplicate GPU detected", NVIDIA/nccl ``src/init.cc``);
    fewer leave GPUs and their NICs out of the measurement, so busbw is not the cluster's.

    ## Severity
    Error when -np exceeds the hostfile's slots (Open MPI refuses: "There are not enough slots
    available", open-mpi/ompi#3133) or nccl-tests ranks exceed the GPUs (NCCL: "Duplicate GPU detected",
    `src/init.cc`); warning when GPUs are left out of the run.

    ## Example
    ```yaml
    slotsPerWorker: 8
    mpiReplicaSpecs:
      Launcher: ... mpirun -np 32 /opt/nccl_tests/build/all_reduce_perf -g 1
      Worker: {replicas: 2, template: ... nvidia.com/gpu: 8}
    ```

    ## Fix
    ``-np`` = replicas x slotsPerWorker (16 here), with ``slotsPerWorker`` = GPUs per worker.
    """
    from ...parsers.k8s import as_dict, mpirun_calls, pods, quantity
    from ..document import at_text

    data = doc.data
    if not isinstance(data, dict) or data.get("kind") != "MPIJob":
        return
    spec = as_dict(data.get("spec"))
    if str(spec.get("mpiImplementation", "OpenMPI")) != "OpenMPI":
        return  # Intel MPI and MPICH (hydra) place ranks beyond the hostfile's slots
    slots = quantity(spec.get("slotsPerWorker", 1))
    workers = [pod for pod in pods(doc) if pod.task and pod.task.get("name") == "Worker"]
    if slots is None or len(workers) != 1:
        return
    from ...knowledge.k8s_validation import MPIJOB_UNSET_WORKER_REPLICAS

    replicas = quantity(workers[0].task.get("replicas", MPIJOB_UNSET_WORKER_REPLICAS)) if workers[0].task else None
    gpus = max((_gpus(c) for _, c in workers[0].containers()), default=0)
    if replicas is None:
        return
    for pod, path, container, call in mpirun_calls(doc):
        if pod.task is None or pod.task.get("name") != "Launcher":
            continue
        key = "args" if "mpirun" in " ".join(str(a) for a in container.get("args") or []) else "command"
        np = quantity(call.np)
        oversubscribe = "oversubscribe" in call.text
        if np is not None and np > replicas * slots and not oversubscribe:
            yield at_text(doc, path + (key,), call.tokens["np"],
                          f"mpirun -np {np}, but the hostfile has {replicas} workers x {slots} slots = "
                          f"{replicas * slots}: Open MPI refuses to start (not enough slots)",
                          hint=f"use -np {replicas * slots}, or set slotsPerWorker to the ranks each worker runs" if replicas
                          else "give the Worker its replicas: mpi-operator sets an unset count to 0")
            continue
        per_rank = nccl_tests_gpus_per_rank(call.text)
        ranks = np if np is not None else replicas * slots
        if per_rank is None or not gpus or ranks * per_rank == replicas * gpus:
            continue
        needle = call.tokens.get("np") or "mpirun"
        used = f"{ranks} ranks x {per_rank} GPU(s) = {ranks * per_rank}"
        if ranks * per_rank > replicas * gpus:
            yield at_text(doc, path + (key,), needle,
                          f"{used}, but the workers have {replicas} x {gpus} = {replicas * gpus} GPUs: ranks share or "
                          "miss GPUs and NCCL refuses (Duplicate GPU detected)",
                          hint=f"run {replicas * gpus // per_rank} ranks")
        else:
            yield at_text(doc, path + (key,), needle,
                          f"{used}, but the workers have {replicas} x {gpus} = {replicas * gpus} GPUs: "
                          f"{replicas * gpus - ranks * per_rank} GPUs take no part",
                          hint=f"run {replicas * gpus // per_rank} ranks", severity=Severity.WARNING)


_SBATCH_OPTION = re.compile(r"^#SBATCH\s+(?P<option>--?[\w-]+)(?:[= ]\s*(?P<value>\S+))?", re.MULTILINE)


def _sbatch_options(text: str) -> dict[str, str]:
    """``#SBATCH`` options before the first command (sbatch stops reading them there), long names; every option
    of a line (``#SBATCH --nodes=2 --gpus-per-node=8``), up to a ``#`` that starts a comment."""
    aliases = {"-N": "--nodes", "-n": "--ntasks", "-G": "--gpus"}
    found: dict[str, str] = {}
    for line in text.splitlines():
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            break
        if not _SBATCH_OPTION.match(stripped):
            continue
        words = stripped.split()[1:]
        index = 0
        while index < len(words):
            word = words[index]
            if word.startswith("#"):
                break
            if word.startswith("--") and "=" in word:
                option, value = word.split("=", 1)
            elif word in aliases or (word.startswith("--") and index + 1 < len(words)
                                     and not words[index + 1].startswith("-")):
                option, value = word, words[index + 1] if index + 1 < len(words) else ""
                index += 1
            elif word[:2] in aliases and len(word) > 2:
                option, value = word[:2], word[2:]
            else:
                index += 1
                continue
            if value:
                found.setdefault(aliases.get(option, option), value)
            index += 1
    return found


def _logical_lines(lines: list[str]) -> Iterator[tuple[int, str]]:
    """(first line number, text) of each command, backslash-continued lines joined."""
    start, parts = 0, list[str]()
    for number, line in enumerate(lines, 1):
        if not parts:
            start = number
        if line.rstrip().endswith("\\"):
            parts.append(line.rstrip()[:-1])
            continue
        parts.append(line)
        yield start, " ".join(parts)
        parts = []
    if parts:
        yield start, " ".join(parts)


def _gres_gpus(value: str) -> Optional[int]:
    match = re.fullmatch(r"gpu(?::[\w.-]+)?:(\d+)", value.split(",")[0])
    return int(match.group(1)) if match else None


@rule(code="MPI009", name="srun-tasks-exceed-gpus", severity=Severity.ERROR, kinds=(Kind.SBATCH_SCRIPT,),
      since="0.3.0")
def srun_tasks_exceed_gpus(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """An sbatch script starts more nccl-tests ranks per node than the node has GPUs for them.

    ## What it catches
    ``#SBATCH --ntasks-per-node=T`` with ``--gpus-per-node=G`` (or ``--gres=gpu:G``) and an
    nccl-tests binary driving ``-t`` x ``-g`` GPUs per rank, where T x GPUs-per-rank differs from G:
    more is an error, fewer a warning. Scripts that start one launcher per node (``torchrun``) are
    not judged: their ranks are not Slurm tasks.

    ## Why is this bad?
    nccl-tests gives rank ``localRank`` the GPUs from ``localRank x -g`` (NVIDIA/nccl-tests
    ``src/common.cu``); Slurm's tasks on a node all see the node's G allocated GPUs. More tasks than
    GPUs select a device that does not exist ("invalid device ordinal", NVIDIA/nccl-tests#2) or the same
    GPU twice, which NCCL refuses ("Duplicate GPU detected", NVIDIA/nccl ``src/init.cc``; since 2.5 "not
    allowed and it will not work", NVIDIA/nccl#418): the job cannot run. Fewer
    leave GPUs and their NICs out, so the busbw measured is not the nodes'.

    ## Severity
    Error when tasks x GPUs per rank exceed the node's GPUs (invalid device ordinal / NCCL "Duplicate
    GPU detected"); warning when GPUs are left out.

    ## Example
    ```bash
    #SBATCH --nodes=2 --ntasks-per-node=16 --gpus-per-node=8
    srun /opt/nccl-tests/build/all_reduce_perf -b 8 -e 8G -g 1
    ```

    ## Fix
    ``--ntasks-per-node=8`` (one rank per GPU with ``-g 1``).
    """
    options = _sbatch_options(doc.text)
    tasks = options.get("--ntasks-per-node", "")
    gpus = options.get("--gpus-per-node", "") or str(_gres_gpus(options.get("--gres", "")) or "")
    if not tasks.isdigit() or not gpus.split(":")[-1].isdigit():
        return
    per_node, node_gpus = int(tasks), int(gpus.split(":")[-1])
    for number, line in _logical_lines(doc.lines):
        if line.lstrip().startswith("#") or not re.search(r"\bsrun\b|\bmpirun\b", line):
            continue
        per_rank = nccl_tests_gpus_per_rank(line)
        if per_rank is None or "--ntasks-per-node" in line or re.search(r"\s-n\s|--ntasks", line):
            continue  # no nccl-tests here, or the step sets its own task layout
        used = per_node * per_rank
        if used == node_gpus:
            continue
        if used > node_gpus:
            yield doc.at_line(number, f"{per_node} tasks per node x {per_rank} GPU(s) each = {used}, but each node "
                                      f"has {node_gpus} GPUs: ranks share or miss GPUs and NCCL refuses "
                                      "(Duplicate GPU detected)", hint=f"--ntasks-per-node={node_gpus // per_rank}")
        else:
            yield doc.at_line(number, f"{per_node} tasks per node x {per_rank} GPU(s) each = {used}, but each node "
                                      f"has {node_gpus} GPUs: {node_gpus - used} take no part",
                              hint=f"--ntasks-per-node={node_gpus // per_rank}", severity=Severity.WARNING)
        return


# srun at command position: a line's start (after assignments, `time`, `exec`), or after ; && || | ( $(
_SRUN_STEP = re.compile(r"(?:^\s*(?:[A-Za-z_]\w*=\S*\s+)*|[;&|(]\s*)(?:(?:time|exec)\s+)?srun\s+(?P<rest>.*)")
_STEP_END = re.compile(r"\s(?:;|&&|\|\||\|)\s")


def srun_min_nodes(arguments: str) -> Optional[int]:
    """The node count an srun step asks for (``-N M``, ``-NM``, ``--nodes=M``, the minimum of ``M-MAX``);
    None when it names none, or a variable decides."""
    from ...parsers.shell_words import split_words

    try:
        words = split_words(_STEP_END.split(arguments, maxsplit=1)[0])
    except ValueError:
        return None
    for index, word in enumerate(words):
        if not word.startswith("-"):
            return None  # the program: what follows is its own arguments
        value = None
        if word in ("-N", "--nodes") and index + 1 < len(words):
            value = words[index + 1]
        elif word.startswith("--nodes="):
            value = word.split("=", 1)[1]
        elif word.startswith("-N") and len(word) > 2:
            value = word[2:]
        if value is not None:
            minimum = value.split("-", 1)[0].split(":", 1)[0]
            return int(minimum) if minimum.isdigit() else None
    return None


@rule(code="MPI010", name="srun-nodes-exceed-allocation", severity=Severity.ERROR, kinds=(Kind.SBATCH_SCRIPT,),
      since="0.3.0")
def srun_nodes_exceed_allocation(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """A job step asks ``srun`` for more nodes than the batch job's ``#SBATCH --nodes`` allocates.

    ## What it catches
    ``#SBATCH --nodes=K`` (``-N K``) and, in the script, ``srun -N M`` / ``--nodes=M`` (the minimum of
    ``M-MAX``) with M greater than K. Steps that run in another job (``--jobid``), node counts from
    variables, and a node range in ``#SBATCH`` are not judged.

    ## Why is this bad?
    A step runs inside its job's allocation. srun compares the step's minimum node count with the
    allocation's and gives up before launching anything: ``error("Only allocated %d nodes asked for
    %d")`` and no step (SchedMD/slurm ``src/srun/libsrun/srun_job.c``, ``job_create_structure``). The
    nccl-tests or training step never starts, after the job waited in the queue for its nodes.

    ## Severity
    Error: srun refuses the step (the code above), unless ``sbatch -N`` on the command line overrides the
    script's ``#SBATCH --nodes`` at submission, which the file cannot show.

    ## Example
    ```bash
    #SBATCH --nodes=2
    srun -N 4 --ntasks-per-node=8 all_reduce_perf -b 8 -e 8G -g 1
    ```

    ## Fix
    Ask for the nodes in ``#SBATCH --nodes`` (4), or run the step on the job's own nodes
    (``srun -N "$SLURM_JOB_NUM_NODES"``, or no ``-N`` at all).
    """
    allocated = _sbatch_options(doc.text).get("--nodes", "")
    if not allocated.isdigit():
        return
    for number, line in _logical_lines(doc.lines):
        if line.lstrip().startswith("#") or "srun" not in line:
            continue
        match = _SRUN_STEP.search(line)
        if match is None or "--jobid" in match.group("rest"):
            continue
        asked = srun_min_nodes(match.group("rest"))
        if asked is not None and asked > int(allocated):
            yield doc.at_line(number, f"srun asks for {asked} nodes, but the job allocates {allocated} "
                                      f"(#SBATCH --nodes): srun refuses the step (\"Only allocated {allocated} "
                                      f"nodes asked for {asked}\")",
                              hint=f"#SBATCH --nodes={asked}, or srun -N \"$SLURM_JOB_NUM_NODES\"")


def _srun_step_options(arguments: str) -> Optional[dict[str, str]]:
    """The options of an srun step up to its program, long names (``-n 16``, ``-n16``, ``--ntasks=16``,
    ``-N 2``); None when the words do not split."""
    from ...parsers.shell_words import split_words

    try:
        words = split_words(_STEP_END.split(arguments, maxsplit=1)[0])
    except ValueError:
        return None
    short = {"-n": "--ntasks", "-N": "--nodes", "-G": "--gpus"}
    found: dict[str, str] = {}
    index = 0
    while index < len(words) and words[index].startswith("-"):
        word = words[index]
        if word.startswith("--"):
            name, sep, value = word.partition("=")
            if not sep and index + 1 < len(words) and not words[index + 1].startswith("-") \
                    and name in ("--ntasks", "--nodes", "--gpus-per-task", "--ntasks-per-node", "--gpus"):
                index += 1
                value = words[index]
            found.setdefault(name, value)
        elif word[:2] in short:
            if len(word) > 2:
                found.setdefault(short[word[:2]], word[2:])
            elif index + 1 < len(words):
                index += 1
                found.setdefault(short[word], words[index])
        index += 1
    return found


@rule(code="MPI011", name="srun-step-gpus-exceed-allocation", severity=Severity.ERROR, kinds=(Kind.SBATCH_SCRIPT,),
      since="0.3.0")
def srun_step_gpus_exceed_allocation(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """A job step asks for more GPUs (tasks x ``--gpus-per-task``) than the batch job holds.

    ## What it catches
    ``#SBATCH --nodes=K`` with ``--gpus-per-node=G`` (or ``--gres=gpu:G``), and an ``srun`` step with
    ``-n N`` (``--ntasks=N``) or ``--ntasks-per-node=T``, whose ``--gpus-per-task=g`` (on the step, or in
    ``#SBATCH``) asks for more GPUs than the job's nodes hold: N x g > K x G, or T x g > G (with the
    step's own ``-N M``, M nodes instead of K). Every number must be in the file: a count from a variable,
    a step in another job (``--jobid``), a heterogeneous job (``#SBATCH hetjob``) or a step without
    ``--gpus-per-task`` is not judged: how many tasks Slurm fits then depends on the partition's CPUs, which
    the script does not show.

    ## Why is this bad?
    A step runs inside its job's allocation. Slurm counts how many of the step's tasks the job's nodes can
    hold with each task's GPUs; when they can never hold them all, srun gives up before launching anything
    ("Step cannot ever run in the allocation", ESLURM_INVALID_GRES or "Requested node configuration is not
    available": SchedMD/slurm ``src/stepmgr/stepmgr.c`` ``_pick_step_nodes`` at slurm-24-11-7-1). The
    nccl-tests or training step never starts, after the job waited in the queue for its nodes.

    ## Severity
    Error: srun refuses the step (the code above), unless ``sbatch`` options on the command line change
    the allocation at submission, which the file cannot show.

    ## Example
    ```bash
    #SBATCH --nodes=2
    #SBATCH --gpus-per-node=8
    srun -n 32 --gpus-per-task=1 all_reduce_perf -b 8 -e 8G -g 1
    ```

    ## Fix
    Ask for the tasks the nodes hold (``srun -n 16``, or ``--ntasks-per-node=8``), or more nodes in
    ``#SBATCH --nodes``.
    """
    if re.search(r"^#SBATCH\s+(?:hetjob|packjob)\b", doc.text, re.MULTILINE):
        return  # a heterogeneous job: each component has its own nodes and GPUs
    job = _sbatch_options(doc.text)
    nodes = job.get("--nodes", "")
    node_gpus = job.get("--gpus-per-node", "").split(":")[-1] or str(_gres_gpus(job.get("--gres", "")) or "")
    if not nodes.isdigit() or not node_gpus.isdigit():
        return
    for number, line in _logical_lines(doc.lines):
        if line.lstrip().startswith("#") or "srun" not in line:
            continue
        match = _SRUN_STEP.search(line)
        if match is None or "--jobid" in match.group("rest"):
            continue
        step = _srun_step_options(match.group("rest"))
        if step is None:
            continue
        per_task = step.get("--gpus-per-task", job.get("--gpus-per-task", "")).split(":")[-1]
        step_nodes = step.get("--nodes", nodes).split("-", 1)[0]
        if not per_task.isdigit() or not step_nodes.isdigit():
            continue
        held_nodes = min(int(nodes), int(step_nodes))
        held = held_nodes * int(node_gpus)
        tasks, per_node = step.get("--ntasks", ""), step.get("--ntasks-per-node", "")
        if per_node.isdigit() and int(per_node) * int(per_task) > int(node_gpus):
            yield doc.at_line(number, f"srun starts {per_node} tasks per node with {per_task} GPU(s) each "
                                      f"({int(per_node) * int(per_task)} GPUs), but each node of the job holds "
                                      f"{node_gpus}: the step can never run in the allocation and srun refuses it",
                              hint=f"--ntasks-per-node={int(node_gpus) // int(per_task)}")
        elif tasks.isdigit() and int(tasks) * int(per_task) > held:
            yield doc.at_line(number, f"srun starts {tasks} tasks with {per_task} GPU(s) each "
                                      f"({int(tasks) * int(per_task)} GPUs), but the job's {held_nodes} node(s) hold "
                                      f"{held_nodes} x {node_gpus} = {held}: the step can never run in the "
                                      "allocation and srun refuses it",
                              hint=f"srun -n {held // int(per_task)}, or more nodes in #SBATCH --nodes")
