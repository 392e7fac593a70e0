"""Azure NHC conf rules (NHC): ``<hostmask> || <check> <args>`` lines that call a check function Azure's
health checks or LBNL NHC do not define, with arguments it does not take, or with variables nothing sets.

The functions, their argument counts and the variables come from :mod:`hpcconf.knowledge.nhc_checks`
(Azure/azurehpc-health-checks customTests at tag v0.4.5, LBNL NHC 1.4.3). NHC ``eval``s each line's check
after the ``||`` (LBNL NHC ``scripts/common.nhc`` ``nhc_load_conf``), so a check line is a bash command.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator
from dataclasses import dataclass

from ...artifacts import Kind
from ...diagnostics import Diagnostic, Severity
from ...knowledge import nhc_checks
from ...parsers.nhc_script import DefinedCheck, defined_functions
from ...parsers.shell_words import split_words
from ...rules_registry import Moment, rule, spec_rule
from ..compiled_spec import CompiledSpec
from ..context import LintContext
from ..document import Document, DocumentSet

_ASSIGNMENT = re.compile(r"^(?:export\s+)?([A-Za-z_]\w*)=")
_VARIABLE = re.compile(r"\$(?:\{([A-Za-z_]\w*)[^}]*\}|([A-Za-z_]\w*))")
# ${NAME-x} ${NAME:-x} ${NAME=x} ${NAME:=x} ${NAME+x} ${NAME:+x} ${NAME?x}: the line says what an unset NAME
# does; [ -n "$NAME" ] / [ -z ... ] / [ -v NAME ] test it: either way the line is written for NAME unset.
_GUARDED = re.compile(r"\$\{([A-Za-z_]\w*):?[-=+?]")
_TESTED = re.compile(r"(?:\[\[?|\btest)\s+(?:!\s+)?-[nzv]\s+\"?\$?\{?([A-Za-z_]\w*)")
_NUMBER = re.compile(r"^[+-]?(?:\d+\.?\d*|\.\d+)$")


@dataclass(frozen=True)
class CheckLine:
    line: int
    column: int  # 1-based column of the check name
    name: str
    args: tuple[str, ...]
    arg_columns: tuple[int, ...]


def check_lines(doc: Document) -> Iterator[CheckLine]:
    """The check calls of an NHC conf: comments, blank lines and variable assignments left out."""
    for number, raw in enumerate(doc.lines, 1):
        if raw.lstrip().startswith("#") or "||" not in raw:
            continue
        offset = raw.index("||") + 2
        command = raw[offset:]
        stripped = command.lstrip()
        if not stripped or _ASSIGNMENT.match(stripped) or stripped.startswith("export "):
            continue
        start = offset + (len(command) - len(stripped))
        words = _words(stripped)
        if not words:
            continue
        columns, position = [], 0
        for word in words:
            found = stripped.find(word, position)
            columns.append(start + (found if found >= 0 else position) + 1)
            position = (found if found >= 0 else position) + len(word)
        yield CheckLine(number, columns[0], words[0], tuple(words[1:]), tuple(columns[1:]))


def _words(command: str) -> list[str]:
    """The words bash would pass (quotes removed), up to a comment; plain splitting when quotes do not close."""
    try:
        return split_words(command, comments=True)
    except ValueError:
        return command.split("#", 1)[0].split()


def _assigned(doc: Document) -> set[str]:
    names = set()
    for raw in doc.lines:
        if "||" in raw and not raw.lstrip().startswith("#"):
            match = _ASSIGNMENT.match(raw.split("||", 1)[1].strip())
            if match:
                names.add(match.group(1))
    return names


@rule(code="NHC001", name="nhc-unknown-check", severity=Severity.ERROR, kinds=(Kind.NHC_CONF, Kind.SHELL_SCRIPT),
      scope="set", since="0.3.0")
def nhc_unknown_check(docs: DocumentSet, ctx: LintContext) -> Iterator[Diagnostic]:
    """A conf line calls a check function that neither Azure's health checks, LBNL NHC nor the
    deployment's own custom tests define.

    ## What it catches
    A ``<hostmask> || <check> ...`` line whose ``<check>`` is not one of the ``check_*`` functions of
    Azure/azurehpc-health-checks ``customTests/*.nhc`` at any release tag (v0.1.0 to v0.4.5: a conf states no
    release, and ``check_cuda_bw`` was renamed ``check_gpu_bw``) or of LBNL NHC 1.4.3 ``scripts/*.nhc``
    (``hpcconf/data/nhc_checks.yaml``, ``hpcconf/data/nhc_azure_releases.yaml``), nor defined by a ``*.nhc`` file of the conf's deployment linted with
    it (a custom test the deployment installs into ``/etc/nhc/scripts``: in its ``scripts/``, in ``customTests/``
    beside Azure's ``conf/``, or beside the conf when a file of that folder names it, such as an install script;
    a fork of the check that merely shares the conf's folder is not what NHC sources for it): a typo (``check_gpu_counts``), a check from another
    tool, a function of a newer release.

    ## Severity
    Error when the name is one edit away from a known check (a typo: the line fails on every node).
    Otherwise info: NHC sources every ``scripts/*.nhc`` on the node, so a custom test that is not among
    the linted files may define it; lint the deployment's ``*.nhc`` files with the conf to settle it.

    ## Why is this bad?
    NHC ``eval``s the line (``nhc_load_conf`` in LBNL NHC ``scripts/common.nhc``); bash answers "command not
    found" with status 127, NHC counts it as a failed check and marks the node offline (Slurm drains it, the
    AKS pod taints it). Every node fails, whatever its health.

    ## Example
    ```text
     * || check_gpu_counts 8
    ```

    ## Fix
    Use the function's name as Azure's conf for the size does (``check_gpu_count 8``), or install the
    custom test that defines it (and lint it with the conf).
    """
    table = nhc_checks.load_table()
    custom = custom_checks(docs)
    for doc in docs.of_kind(Kind.NHC_CONF):
        for check in check_lines(doc):
            if not check.name.startswith("check_") or check.name in table.checks or check.name in custom \
                    or nhc_checks.in_some_azure_release(check.name):
                continue
            near = difflib.get_close_matches(check.name, list(table.checks), n=1, cutoff=0.9)
            where = (f"Azure's health checks ({table.azure[0]} @ {table.azure[1]}), LBNL NHC {table.lbnl[1]} "
                     "or a *.nhc file of its deployment")
            if near:
                yield doc.at_line(check.line, f"{check.name} is not a check function of {where}: NHC fails the line, "
                                  "so every node fails", hint=f"did you mean {near[0]}?",
                                  column=check.column, end_column=check.column + len(check.name))
            else:
                yield doc.at_line(check.line, f"{check.name} is not a check function of {where}: unless a custom "
                                  "test installed on the node defines it, NHC fails the line on every node",
                                  hint="lint the custom test's *.nhc file with this conf, or use a check "
                                  "the installed customTests define", severity=Severity.INFO,
                                  column=check.column, end_column=check.column + len(check.name))


def custom_checks(docs: DocumentSet) -> dict[str, DefinedCheck]:
    """The check functions the run's ``*.nhc`` files define (NHC sources them all, so one replaces a built-in
    of the same name)."""
    found: dict[str, DefinedCheck] = {}
    for doc in sorted(docs.of_kind(Kind.SHELL_SCRIPT), key=lambda d: d.path):
        if doc.path.lower().endswith(".nhc"):
            found.update({name: check for name, check in defined_functions(doc.text).items()
                          if name.startswith("check_")})
    return found


@rule(code="NHC002", name="nhc-argument-count", severity=Severity.ERROR, kinds=(Kind.NHC_CONF, Kind.SHELL_SCRIPT),
      scope="set", since="0.3.0")
def nhc_argument_count(docs: DocumentSet, ctx: LintContext) -> Iterator[Diagnostic]:
    """A check gets fewer arguments than it needs (error), or more than it reads (warning).

    ## What it catches
    A call of a known check function with fewer positional arguments than the function requires, or
    more than it reads (functions that parse options take any number): counts read from each function at
    Azure/azurehpc-health-checks v0.4.5 and LBNL NHC 1.4.3 (``hpcconf/data/nhc_checks.yaml``). Azure's checks
    changed their arguments between releases (``check_hw_topology`` read the topology file as ``$1`` up to
    v0.2.6 and none from v0.2.7; ``check_nccl_allreduce`` read 2 before 4; ``check_ib_bw_gdr`` read the SKU as
    ``$2`` in v0.2.x), and a conf does not say which release its nodes run: it runs on a release that defines
    every Azure check it calls, and a count one of those releases takes is accepted (too few only below the
    fewest any of them needs, too many only beyond the most any of them reads; every tag's ``customTests/*.nhc``, ``hpcconf/data/nhc_azure_releases.yaml``, written by
    ``tools/gen_nhc_releases.py``). A ``*.nhc``
    file of the conf's deployment that defines the check replaces the built-in, as on the node: then only
    arguments beyond the highest ``$N`` its body reads are a finding (warning). The deployment is the conf's
    directory with the custom tests NHC sources beside it: ``scripts/`` (LBNL NHC's ``INCDIR`` defaults to
    ``$CONFDIR/scripts``, mej/nhc ``nhc`` @ 1.4.3) or, for Azure's ``conf/``, ``customTests/`` (copied into
    ``/etc/nhc/scripts`` by ``dockerfile/azure-nvrt-nhc.dockerfile`` @ v0.4.5); a ``*.nhc`` of another
    deployment linted in the same run defines nothing for it.
    Azure's counts decide only for a conf written for Azure's health checks (it names ``$AZ_NHC_ROOT`` or
    an ``azurehpc`` path, or calls a check only Azure's ``customTests/azure_*.nhc`` define); elsewhere a
    count that does not fit one of Azure's checks is info, since the node's own copy of that test decides
    (``check_nvsmi_healthmon $NHC_GPUS`` in a site conf whose own ``csc_nvidia_smi.nhc`` reads ``$1``).

    ## Why is this bad?
    Too few: the function compares with an empty value, e.g. ``check_gpu_count`` without the count, or
    ``check_nccl_allreduce 460 1`` without the message size (``all_reduce_perf -b -f 2``), and the check
    fails on every node. Too many: the extra words are ignored, so what they were meant to check is not
    checked (``check_ib_bw_gdr 380 nd96amsr_v4 mlx5_ib0``: no release reads a third argument, so every HCA is
    still tested against 380).

    ## Example
    ```text
     * || check_nccl_allreduce 460.0 1
    ```

    ## Fix
    Give the arguments Azure's conf for the size gives (``check_nccl_allreduce 460.0 1 16G``).
    """
    custom = custom_checks(docs)
    for doc in docs.of_kind(Kind.NHC_CONF):
        lines = list(check_lines(doc))
        azure = _written_for_azure(doc, lines, custom)
        releases = nhc_checks.releases_for({check.name for check in lines if check.name not in custom})
        for check in lines:
            if check.name in custom:
                yield from _custom_argument_count(doc, check, custom[check.name])
                continue
            function = nhc_checks.lookup(check.name)
            if function is not None:
                yield from _argument_count(doc, check, function, releases, other_tool=function.file.startswith(
                    "customTests/") and not azure)


def _written_for_azure(doc: Document, lines: list[CheckLine], custom: dict[str, DefinedCheck]) -> bool:
    """Whether the conf runs Azure's customTests: it names Azure's root or paths, or calls a check only Azure's
    own customTests define (and no custom test of its deployment redefines)."""
    if nhc_checks.names_azure(doc.text):
        return True
    return any(check.name not in custom and (function := nhc_checks.lookup(check.name)) is not None
               and nhc_checks.is_azure_check(function) for check in lines)


def _argument_count(doc: Document, check: CheckLine, function: nhc_checks.CheckFunction,
                    releases: frozenset[str] | None = None, other_tool: bool = False) -> Iterator[Diagnostic]:
    """``other_tool``: the check is one of Azure's customTests but the conf is not written for Azure's health
    checks, so the node's own definition of the name (not linted here) decides: info."""
    count = len(check.args)
    accepted = nhc_checks.argument_range(function, releases)
    low, high, source = accepted.min_args, accepted.max_args, accepted.source
    wanted = (f"{low}" if high == low else f"{low} to {high}" if high is not None else f"at least {low}")
    too_many = high is not None and count > high
    if count >= low and not too_many:
        return
    if other_tool:
        column = check.arg_columns[high] if too_many and high is not None else check.column
        yield doc.at_line(check.line, f"{check.name} takes {wanted} argument(s) in Azure's health checks, got {count}: "
                          "this conf names neither Azure's paths nor a check only Azure defines, so the definition "
                          f"installed on its nodes decides ({source})",
                          hint="lint the *.nhc file that defines it with this conf", column=column,
                          severity=Severity.INFO)
    elif count < low:
        yield doc.at_line(check.line, f"{check.name} takes {wanted} argument(s), got {count}: it compares with an "
                          f"empty value and fails on every node ({source})",
                          hint="add the missing arguments", column=check.column,
                          end_column=check.column + len(check.name))
    elif high is not None:
        extra = check.arg_columns[high]
        yield doc.at_line(check.line, f"{check.name} reads {wanted} argument(s), got {count}: "
                          f"'{' '.join(check.args[high:])}' is ignored ({source})",
                          hint="drop the extra arguments, or check what they name another way",
                          column=extra, severity=Severity.WARNING)


def _custom_argument_count(doc: Document, check: CheckLine, function: DefinedCheck) -> Iterator[Diagnostic]:
    """A custom test's own definition replaces the built-in: only what it reads at most is known from its
    body (how many it needs is not syntax), so only extra arguments are a finding."""
    count = len(check.args)
    if function.max_args is not None and count > function.max_args:
        yield doc.at_line(check.line, f"{check.name} reads at most {function.max_args} argument(s) in the linted "
                          f"custom test (line {function.line}), got {count}: "
                          f"'{' '.join(check.args[function.max_args:])}' is ignored",
                          hint="drop the extra arguments, or check what they name another way",
                          column=check.arg_columns[function.max_args], severity=Severity.WARNING)


@rule(code="NHC003", name="nhc-argument-not-a-number", severity=Severity.ERROR, kinds=(Kind.NHC_CONF,), since="0.3.0")
def nhc_argument_not_a_number(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """A threshold a check compares as a number is not one (``380Gb``, ``eight``).

    ## What it catches
    An argument at a position the function compares numerically (GPU count, bandwidth floors, repeats,
    Xid time window, the IB rate of ``check_hw_ib``) that is not a plain number. Arguments naming a
    variable are left alone.

    ## Why is this bad?
    The functions compare with ``bc``, ``[ -lt ]`` or ``(( ))`` (e.g. ``azure_ib_write_bw_gdr.nhc``:
    ``echo "$ib_bw < $EXP_IB_BW" | bc``): a unit suffix or a word is a syntax error there, and the check
    fails, or passes without comparing, on every node.

    ## Example
    ```text
     * || check_ib_bw_gdr 380Gb
    ```

    ## Fix
    Write the number alone, in the unit the check uses (Gb/s per HCA for ``check_ib_bw_gdr``).
    """
    for check in check_lines(doc):
        function = nhc_checks.lookup(check.name)
        if function is None:
            continue
        for index in function.numeric:
            if index >= len(check.args):
                continue
            value = check.args[index]
            if "$" in value or _NUMBER.match(value):
                continue
            column = check.arg_columns[index]
            yield doc.at_line(check.line, f"argument {index + 1} of {check.name} is compared as a number, but is "
                              f"'{value}' ({function.source})", hint="write the number alone",
                              column=column, end_column=column + len(value))


@rule(code="NHC004", name="nhc-unset-variable", severity=Severity.WARNING, kinds=(Kind.NHC_CONF,), since="0.3.0")
def nhc_unset_variable(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """A check argument names a variable that nothing sets before the conf runs.

    ## What it catches
    ``$NAME`` or ``${NAME}`` in a check's arguments where NAME is neither set by LBNL NHC 1.4.3 itself
    (``HOSTNAME``, ``NHC_*``...) nor by Azure's runner (``AZ_NHC_ROOT``: ``run-health-checks.sh`` and
    ``dockerfile/aznhc-entrypoint.sh`` at v0.4.5), nor assigned on an earlier line of the conf. A
    guarded or defaulted expansion (``${NAME:-2}``, ``${NAME+x}``, ``${NAME=x}``) and a name the line
    tests (``if [ -n "$NAME" ]; then ...``) are never a finding: the line is written for NAME unset.
    Forms: a variable only the site config can set (info), one in a conf for Azure's runner (warning),
    and a typo that differs only in case from a variable NHC sets itself (``$HOSTNAME_s``, warning).

    ## Severity
    LBNL NHC sources its site config ``/etc/sysconfig/nhc`` (``/etc/default/nhc`` on Debian/Ubuntu)
    before it reads the conf, and takes ``NAME=value`` words on its command line (mej/nhc ``nhc`` @ 1.4.3,
    ``nhcmain_load_sysconfig``, ``nhcmain_parse_cmdline``), so a site template's ``$NHC_CORES`` may well
    be set there: info, naming that context. Warning where nothing can set it: the conf names
    ``$AZ_NHC_ROOT`` (it is written for Azure's runner container, whose Ubuntu image has no
    ``/etc/default/nhc`` and whose entrypoint passes only ``CONFFILE``, ``LOGFILE`` and ``TIMEOUT``:
    ``dockerfile/azure-nvrt-nhc.dockerfile``, ``aznhc-entrypoint.sh`` @ v0.4.5), or NAME differs only in
    case from a variable NHC sets itself (``$HOSTNAME_s``): bash names are case-sensitive, a typo.

    ## Why is this bad?
    NHC ``eval``s the line, so the variable expands to nothing: ``$NHC_ROOT/topofiles/ndv5-topo.xml``
    becomes ``/topofiles/ndv5-topo.xml``, a file no node has. The check then runs with a wrong path or
    a missing argument.

    ## Example
    ```text
     * || check_nccl_allreduce 460.0 1 16G $NHC_ROOT/topofiles/ndv5-topo.xml
     * || check_nccl_allreduce_ib_loopback 40.0 1 16G $AZ_NHC_ROOT/topofiles/ndv5-topo.xml
    ```

    ## Fix
    Use ``$AZ_NHC_ROOT`` (where Azure's runner mounts its files), or assign the variable on a line above
    (`` * || export NAME=value``); on a host install, set it in ``/etc/sysconfig/nhc``.
    """
    table = nhc_checks.load_table()
    known = table.variables | _assigned(doc)
    azure_runner = nhc_checks.runs_in_azure_runner(doc.text)
    for check in check_lines(doc):
        command = doc.lines[check.line - 1]
        guarded = {m.group(1) for m in _GUARDED.finditer(command)} | {m.group(1) for m in _TESTED.finditer(command)}
        for arg, column in zip(check.args, check.arg_columns):
            for match in _VARIABLE.finditer(arg):
                name = match.group(1) or match.group(2)
                if name in known or name in guarded:
                    continue
                at = column + match.start()
                expands = f"'{arg}' expands to '{_VARIABLE.sub('', arg)}' when {check.name} runs"
                near = [known_name for known_name in sorted(table.variables) if known_name.lower() == name.lower()]
                if near:
                    yield doc.at_line(check.line, f"${name} is not a variable NHC sets (${near[0]} is): {expands}",
                                      hint=f"did you mean ${near[0]}?", column=at, end_column=at + len(match.group(0)))
                elif azure_runner:
                    yield doc.at_line(check.line, f"${name} is set neither by NHC nor by Azure's runner, which has no "
                                      f"site config: {expands}",
                                      hint="use $AZ_NHC_ROOT for Azure's files, or set the variable on a line above",
                                      column=at, end_column=at + len(match.group(0)))
                else:
                    yield doc.at_line(check.line, f"${name} is set neither by NHC nor by the conf: unless the site "
                                      f"config {nhc_checks.SITE_CONFIG} or nhc's command line sets it, {expands}",
                                      hint=f"set it in {nhc_checks.SITE_CONFIG.split(' ')[0]} on every node, or on a "
                                      "line above (' * || export NAME=value')", severity=Severity.INFO,
                                      column=at, end_column=at + len(match.group(0)))


@rule(code="NHC005", name="nhc-hw-topology-unknown-size", severity=Severity.ERROR, kinds=(Kind.NHC_CONF,), since="0.3.0")
def nhc_hw_topology_unknown_size(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """``check_hw_topology`` in a conf for a size it has no topology file for (needs the SKU).

    ## What it catches
    With ``--sku``: a ``check_hw_topology`` line when the size is none of ND A100 v4 (``nd96*_v4``),
    NC A100 v4 (``nc*a100_v4``) and ND H100/H200 v5 (``nd96isr*_v5``), e.g. GB200, MI300X, NC H100 v5 or a
    Crusoe instance type.

    ## Why is this bad?
    The function picks its expected topology from the VM size and otherwise dies "SKU ... is not supported
    for this test" (``customTests/azure_hw_topology_check.nhc`` at v0.4.5): the node fails its health
    checks. Azure's own GB200 conf has the line commented out.

    ## Example
    ```text
    # hpcconf lint --sku Standard_ND128isr_NDR_GB200_v6 nhc.conf
     * || check_hw_topology
    ```

    ## Fix
    Delete the line for that size.
    """
    sku = ctx.sku
    if sku is None:
        return
    if sku.provider == "azure" and nhc_checks.hw_topology_knows(sku.name):
        return
    for check in check_lines(doc):
        if check.name == "check_hw_topology":
            where = "Crusoe's instance types" if sku.provider == "crusoe" else sku.name
            yield doc.at_line(check.line, f"check_hw_topology has no topology file for {where}: it fails the node "
                              "(\"SKU ... is not supported for this test\", azure_hw_topology_check.nhc @ v0.4.5)",
                              hint="delete the line for this size", column=check.column,
                              end_column=check.column + len(check.name))


@spec_rule(code="NHC006", name="nhc-arch-skipped", severity=Severity.INFO, moment=Moment.JUDGE, since="0.4.0")
def nhc_arch_skipped(compiled: CompiledSpec) -> Iterator[Diagnostic]:
    """A GPU pool's host CPU is one the pinned Azure health-check image is not built for, so its nodes get no
    health checks.

    ## What it catches
    A pool whose SKU has ``cpu.arch: arm64`` (GB200 and GB300: ``Standard_ND128isr_NDR_GB200_v6``,
    ``Standard_ND128isr_GB300_v6``) in a spec with ``health_checks.enabled: true`` (the default), on a platform
    that compiles arm64 pools (``slurm``; ``ccws`` with a custom image).

    ## Why is this bad?
    hpcconf's node installer clones Azure/azurehpc-health-checks at one commit (data/nhc.yaml) and pulls the
    image built from it. At that commit ``dockerfile/azure-nvrt-nhc.dockerfile`` installs
    ``MLNX_OFED_LINUX-...-ubuntu22.04-x86_64`` and ``aocc-compiler-..._amd64.deb``, and
    ``run-health-checks.sh`` runs that one image with no choice of architecture; the arm64 (Grace) image came
    later (PR #164 "Add aarch64/Grace NVIDIA image support"). On a Grace node the pull fails or runs an image the
    pinned scripts were not written for, and on CCWS the cluster-init runs under ``set -e``: the node would never
    get slurmd. So hpcconf writes no health checks for such a pool (no installer, no HealthCheckProgram, no
    pre-flight), and says so here. Info: the cluster works; what is lost is the boot and periodic checks.

    ## Example
    ```yaml
    platforms: [slurm]
    pools:
      - {name: gpu, sku: Standard_ND128isr_NDR_GB200_v6, count: 18}
    ```

    ## Fix
    Run your own checks on these nodes (NVIDIA DCGM diagnostics, or azurehpc-health-checks built for arm64 from a
    commit that contains PR #164), or set ``health_checks.enabled: false`` to silence this.
    """
    if not compiled.spec.health_checks.enabled:
        return
    for i, pool in enumerate(compiled.spec.pools):
        sku = compiled.pool_skus.get(pool.name)
        reason = _unsupported_arch_reason(sku.cpu.arch) if sku is not None and sku.gpu.count > 0 else None
        if reason is not None:
            yield compiled.at(("pools", i, "sku"), f"pool '{pool.name}': no node health checks are written: {reason}",
                              hint="Run your own checks on these nodes (DCGM diagnostics, or azurehpc-health-checks "
                              "built for arm64 from a commit with PR #164), or set health_checks.enabled: false.")


def _unsupported_arch_reason(arch: str) -> str | None:
    """knowledge.nhc's answer, imported on the first spec it judges (its health-plan tables are no file lint's)."""
    from ...knowledge.nhc import unsupported_arch_reason

    return unsupported_arch_reason(arch)
