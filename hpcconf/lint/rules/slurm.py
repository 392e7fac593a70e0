"""Slurm batch script rules (SLURM): what ``sbatch`` itself refuses before a job exists, and what the nodes' image
and the provider's Slurm (:mod:`hpcconf.knowledge.images`) make fail at the first step."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from ...artifacts import Kind
from ...diagnostics import Diagnostic, Severity
from ...knowledge import images
from ...rules_registry import rule
from ..context import LintContext
from ..document import Document

if TYPE_CHECKING:
    from ...catalog import Sku

_SHEBANG_LATER = re.compile(r"^#!", re.MULTILINE)


@rule(code="SLURM001", name="sbatch-no-shebang", severity=Severity.ERROR, kinds=(Kind.SBATCH_SCRIPT,))
def sbatch_no_shebang(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """A batch script with ``#SBATCH`` directives does not start with ``#!``.

    ## What it catches
    A script holding ``#SBATCH`` lines whose first two bytes are not ``#!``: a licence header or a
    blank line above the shebang, a byte-order mark, or no interpreter line at all.

    ## Why is this bad?
    ``sbatch`` reads the first two bytes and refuses anything else ("This does not look like a batch
    script. The first line must start with #! followed by the path to an interpreter.";
    ``has_shebang()`` in Slurm's ``src/sbatch/sbatch.c``): no job is submitted. NVIDIA NeMo's Azure
    NCCL script (``csp_tools/azure/nccl.sh``) broke this way when a commit put the Apache licence
    header above ``#!/bin/bash``.

    ## Example
    ```bash
    # Copyright (c) 2023, ...
    #!/bin/bash
    #SBATCH --nodes=2
    ```

    ## Fix
    Put the interpreter line first (``#!/bin/bash``), and the licence header below it.
    """
    if doc.text.startswith("#!"):
        return
    later = _SHEBANG_LATER.search(doc.text)
    if doc.text.startswith("\ufeff#!"):
        message, hint = "the script starts with a byte-order mark, so its first bytes are not '#!'", \
            "save it as UTF-8 without BOM"
    elif later is not None:
        line = doc.text.count("\n", 0, later.start()) + 1
        message = f"the interpreter line is line {line}, not the first: sbatch refuses the script"
        hint = "move the #! line to the top, above the header"
    else:
        message, hint = "the script has no '#!' interpreter line: sbatch refuses it", "add #!/bin/bash as line 1"
    yield doc.at_line(1, message, hint=hint)


# --------------------------------------------------------------------------- image layout (knowledge/images.py)

_TEST_BINARY = re.compile(r"(?P<dir>/opt/(?:nccl|rccl)-tests(?:/build)?)/(?:\$\{?\w+\}?|\w+)_perf\b")
# A command that puts an MPI on the ranks' library path, at the start of a line or after ; && || | ( or a
# then/do/else: `. hpcx-init.sh; hpcx_load`, `source modules.sh && module load mpi/hpcx-pmix && srun ...`.
_COMMAND_START = r"(?:^|[;&|(])\s*(?:(?:then|do|else)\s+)?"
_MPI_SETUP = re.compile(_COMMAND_START + r"(?:module\s+(?:load|add)\s+\S*(?:mpi|hpcx)|(?:source|\.)\s+\S*hpcx-init|"
                        r"hpcx_load\b|(?:export\s+)?LD_LIBRARY_PATH=\S*(?:mpi|hpcx|ompi))", re.I)
# Open MPI's mpirun --prefix <dir> sets PATH and LD_LIBRARY_PATH for the ranks it starts (mpirun(1), --prefix).
_MPIRUN_PREFIX = re.compile(r"\bmpirun\b[^;|&]*\s--prefix[= ]\S+", re.I)  # also "$MPIRUN" --prefix ...
_HPCX_MODULE = re.compile(_COMMAND_START + r"module\s+(?:load|add)\s+(?P<module>mpi/hpcx)(?![\w/.-])")
_CONTAINER = re.compile(r"--container-image|\b(?:enroot|singularity|apptainer|docker|podman)\b")
_SRUN = re.compile(r"(?:^|[\s;&|(])srun\s")
_PMIX = re.compile(r"--mpi[= ]pmix\S*")


def _code_lines(doc: Document) -> Iterator[tuple[int, str]]:
    """(line number, text) of each line that is not a comment (``#SBATCH`` lines are comments to bash too)."""
    for number, line in enumerate(doc.lines, 1):
        if line.strip() and not line.lstrip().startswith("#"):
            yield number, line


def _launches(doc: Document) -> Iterator[tuple[int, str, re.Match[str]]]:
    """Lines that start a nccl-tests/rccl-tests binary from /opt/*-tests, with a continuation folded in."""
    lines = list(_code_lines(doc))
    for index, (number, line) in enumerate(lines):
        match = _TEST_BINARY.search(line)
        if match is None:
            continue
        command = line
        back = index - 1  # the srun/mpirun the binary belongs to may sit on lines ending in "\"
        while back >= 0 and lines[back][1].rstrip().endswith("\\") and lines[back][0] == lines[back + 1][0] - 1:
            command = lines[back][1] + command
            back -= 1
        yield number, command, match


@rule(code="SLURM002", name="tests-mpi-not-loaded", severity=Severity.ERROR, kinds=(Kind.SBATCH_SCRIPT,),
      since="0.3.0")
def tests_mpi_not_loaded(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """A job starts Azure's ``/opt/nccl-tests`` (or ``/opt/rccl-tests``) binaries without loading the MPI they were built against.

    ## What it catches
    A batch script that runs ``/opt/nccl-tests/build/<test>_perf`` or ``/opt/rccl-tests/<test>_perf`` and
    never loads an MPI (no ``module load mpi/...``/``hpcx``, no ``source``/``.`` of ``hpcx-init.sh``, no
    ``hpcx_load``, no ``LD_LIBRARY_PATH`` naming an MPI, as a command of its own or after ``;``, ``&&``,
    ``||``, ``|``, ``then``/``do``), and starts it with neither a container nor ``mpirun --prefix <dir>``
    (which sets the ranks' library path). An error with an Azure ``--sku``; information without one (it
    depends on the nodes running Azure's HPC image), naming the size when the file names one Azure size;
    silent for other providers, by ``--sku``, by the one size the file names, or by the provider's
    signals (Crusoe's image puts its MPI on the default path). Information too: ``module load
    mpi/openmpi`` instead of HPC-X with a SKU (Azure's standalone Open MPI, another build than the
    tests'), and ``module load mpi/hpcx`` with ``srun --mpi=pmix`` (NVIDIA's prebuilt HPC-X, where
    srun's PMIx needs Azure's rebuild ``mpi/hpcx-pmix``).

    ## Why is this bad?
    Azure's HPC images build nccl-tests with ``module load mpi/hpcx`` and ``make MPI=1
    MPI_HOME=${HPCX_MPI_DIR}``, without an rpath (Azure/azhpc-images ``components/install_nccl.sh`` at
    ``ubuntu-hpc-2026072901``, ``ubuntu-hpc-gb200-2404-20260528``; ``install_rccl.sh`` at
    ``ubuntu-hpc-mi300x-2404-2026072801`` builds rccl-tests after ``hpcx_load``). HPC-X is not on the
    default library path, so every rank stops with ``error while loading shared libraries:
    libmpi.so.40`` before NCCL starts. Azure's own image tests load ``mpi/hpcx`` first
    (``tests/test-definitions.sh``). ``components/install_mpis.sh`` (same tag): "mpi/hpcx points to
    NVIDIA's original pre-built binary while mpi/hpcx-pmix points to our local rebuild (with PMIx
    added)"; whether the prebuilt one initialises under srun's PMIx depends on the versions, hence info.

    ## Example
    ```bash
    #!/bin/bash
    #SBATCH --nodes=2
    srun --mpi=pmix /opt/nccl-tests/build/all_reduce_perf -b 8 -e 8G
    ```

    ## Fix
    ``source /etc/profile.d/modules.sh`` and ``module load mpi/hpcx-pmix`` before ``srun --mpi=pmix`` (the same
    HPC-X rebuilt with the node's PMIx, ``components/install_mpis.sh``), or ``mpi/hpcx`` before ``mpirun``.
    """
    sku, given = _job_sku(doc, ctx)
    if not _maybe_azure(doc, ctx, sku):
        return
    setups = [(number, line) for number, line in _code_lines(doc) if _MPI_SETUP.search(line)]
    if setups:
        yield from _other_mpi_loaded(doc, setups, sku is not None)
        return
    for number, command, match in _launches(doc):
        if _CONTAINER.search(command):
            continue  # the binary is the container's, with the container's MPI
        if _MPIRUN_PREFIX.search(command):
            continue  # mpirun --prefix sets the ranks' library path itself
        if sku is None:
            context = "if the nodes run Azure's HPC image"
        elif given:
            context = f"on {sku.name}'s Azure HPC image"
        else:
            context = f"if the nodes run {sku.name}'s Azure HPC image (the size this file names)"
        launcher = ("`module load mpi/hpcx-pmix` (HPC-X rebuilt with PMIx, what srun --mpi=pmix needs)"
                    if _PMIX.search(command) else "`module load mpi/hpcx`")
        yield doc.at_line(
            number, f"{match.group(0)} runs with no MPI loaded: {context} it was built against HPC-X without an "
            "rpath, so each rank fails to load libmpi.so.40",
            hint=f"add `source /etc/profile.d/modules.sh` and {launcher} before the first launch",
            column=match.start() + 1, end_column=match.end() + 1,
            severity=None if given else Severity.INFO)
        return  # one finding per script: one module line fixes every launch


def _job_sku(doc: Document, ctx: LintContext) -> tuple["Sku | None", bool]:
    """The SKU a job is judged by and whether the user gave it (--sku, settings): else the one size the
    file names (hpcconf's jobs name theirs in the header), which shows the platform but not the image."""
    if ctx.sku is not None:
        return ctx.sku, True
    return ctx.sku_for_text(doc.text), False


def _maybe_azure(doc: Document, ctx: LintContext, sku: "Sku | None") -> bool:
    """False when the job is known to run elsewhere: a non-Azure SKU, or another provider's signals."""
    if sku is not None:
        return sku.provider == "azure"
    provider = ctx.provider_for(doc.text)
    return provider is None or provider.name == "azure"


_OPENMPI_MODULE = re.compile(r"module\s+(?:load|add)\s+(mpi/openmpi\S*)")


def _other_mpi_loaded(doc: Document, setups: list[tuple[int, str]], sized: bool) -> Iterator[Diagnostic]:
    """Information: another MPI than the one the launch needs: Azure's standalone Open MPI (mpi/openmpi) for
    tests built against HPC-X, or NVIDIA's prebuilt HPC-X (mpi/hpcx) for ranks srun starts with PMIx."""
    launches = list(_launches(doc))
    if not launches:
        return
    if not any("hpcx" in line.lower() for _, line in setups):
        for number, line in setups if sized else ():
            match = _OPENMPI_MODULE.search(line)
            if match:
                yield doc.at_line(
                    number, f"{match.group(1)} is Azure's standalone Open MPI, not the HPC-X the image built "
                    "/opt/nccl-tests against: the ranks load another build's libmpi.so.40",
                    hint="load mpi/hpcx-pmix (srun --mpi=pmix) or mpi/hpcx (mpirun) instead",
                    column=match.start(1) + 1, end_column=match.end(1) + 1, severity=Severity.INFO)
        return
    if any("hpcx-pmix" in line.lower() or "hpcx_load" in line.lower() or "hpcx-init" in line.lower()
           for _, line in setups):
        return
    if not any(_SRUN.search(command) and _PMIX.search(command) for _, command, _match in launches):
        return
    for number, line in setups:
        match = _HPCX_MODULE.search(line)
        if match:
            yield doc.at_line(
                number, "mpi/hpcx is NVIDIA's prebuilt HPC-X; srun --mpi=pmix starts the ranks through the node's "
                "PMIx, which Azure's HPC image adds only to its rebuild, mpi/hpcx-pmix (azhpc-images "
                "components/install_mpis.sh): whether MPI_Init connects depends on the PMIx versions",
                hint="load mpi/hpcx-pmix for srun --mpi=pmix (keep mpi/hpcx for mpirun)",
                column=match.start("module") + 1, end_column=match.end("module") + 1, severity=Severity.INFO)
            return


@rule(code="SLURM003", name="rccl-tests-build-dir", severity=Severity.ERROR, kinds=(Kind.SBATCH_SCRIPT, Kind.SHELL_SCRIPT),
      since="0.3.0")
def rccl_tests_build_dir(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """A job runs ``/opt/rccl-tests/build/<test>_perf``, which Azure's MI300X images do not have.

    ## What it catches
    ``/opt/rccl-tests/build/`` in a shell or batch script. An error with ``--sku
    Standard_ND96isr_MI300X_v5`` (or another Azure AMD size); information without a SKU (it depends on
    the nodes running Azure's MI300X image); silent for other SKUs.

    ## Why is this bad?
    Azure's MI300X HPC images copy the rccl-tests binaries straight into ``/opt/rccl-tests/`` ("Place
    perf binaries directly under /opt/rccl-tests"; Azure/azhpc-images ``components/install_rccl.sh`` at
    tags ``ubuntu-hpc-mi300x-2404-2026072801`` and ``ubuntu-hpc-mi300x-2204-2026072301``), so a path
    under ``build/`` fails on every rank with "No such file or directory". The same images build a
    newer RCCL into ``/opt/rccl/lib``, which Azure's checks put first on ``LD_LIBRARY_PATH``.

    ## Example
    ```bash
    srun --mpi=pmix /opt/rccl-tests/build/all_reduce_perf -b 8 -e 8G
    ```

    ## Fix
    ``/opt/rccl-tests/all_reduce_perf``, with ``LD_LIBRARY_PATH=/opt/rccl/lib:$LD_LIBRARY_PATH``.
    """
    sku = ctx.sku
    missing, without = next(iter(images.AZURE_MISSING_DIRS.items()))
    if sku is not None and images.layout(sku) is not without:  # the size runs another image, or none hpcconf knows
        return
    for number, line in _code_lines(doc):
        column = line.find(missing + "/")
        if column < 0:
            continue
        context = f"{sku.name}'s Azure image" if sku is not None else "Azure's MI300X image (if the nodes run it)"
        yield doc.at_line(
            number, f"{missing}/ does not exist on {context}: its rccl-tests binaries are in "
            f"{images.AZURE_MI300X.tests_dir}/ ({images.AZURE_MI300X.source})",
            hint=f"use {images.AZURE_MI300X.tests_dir}/<test>_perf", column=column + 1,
            end_column=column + len(missing) + 2, severity=None if sku is not None else Severity.INFO)


@rule(code="SLURM004", name="srun-pmix-on-crusoe-gb200", severity=Severity.ERROR, kinds=(Kind.SBATCH_SCRIPT,),
      since="0.3.0")
def srun_pmix_on_crusoe_gb200(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """``srun --mpi=pmix`` in a job for Crusoe GB200, where Crusoe's Slurm has no PMIx.

    ## What it catches
    With ``--sku gb200-186gb-nvl-ib.4x`` (a Crusoe size whose NVLink domain spans VMs): a ``srun`` with
    ``--mpi=pmix`` in a batch script (an error). Information without ``--sku`` when the file names that
    size (hpcconf's jobs do, in their header), or carries Crusoe's signals and forces NVLink across nodes
    (``NCCL_MNNVL_ENABLE=1``, ``#SBATCH --segment``): on Crusoe only GB200 spans nodes.

    ## Why is this bad?
    crusoecloud/slurm's README (v3.0.0, "MPI"): "PMIx is currently not supported on GB200". The step
    fails before any rank starts, so the job never tests anything.

    ## Example
    ```bash
    # hpcconf lint --sku gb200-186gb-nvl-ib.4x job.sbatch
    srun --mpi=pmix /opt/nccl-tests/build/all_reduce_perf -b 8 -e 8G
    ```

    ## Fix
    Start the ranks with the image's Open MPI ``mpirun`` (built ``--with-slurm`` by crusoecloud/solutions-library
    ``slurm-custom-image``, ``/opt/hpcx/ompi/bin/mpirun``) inside the allocation, as ``hpcconf build`` does.
    """
    sku, given = _job_sku(doc, ctx)
    if sku is None:
        # No size: a job for Crusoe (its signals) that forces NVLink across nodes can only be for a Crusoe size
        # whose NVLink domain spans VMs, i.e. GB200.
        if not _crusoe_multinode_nvlink(doc, ctx):
            return
        severity: Severity | None = Severity.INFO
        mpirun, context = images.CRUSOE_GB200.mpirun, "if these Crusoe nodes are GB200"
    else:
        layout = images.layout(sku)
        if layout is None or layout.launcher != "mpirun":
            return
        mpirun, context = layout.mpirun, f"on {sku.name}" + ("" if given else " (the size this file names)")
        severity = None if given else Severity.INFO
    for number, line in _code_lines(doc):
        if not _SRUN.search(line):
            continue
        match = _PMIX.search(line)
        if match:
            yield doc.at_line(
                number, f"{match.group(0)} {context}: \"PMIx is currently not supported on GB200\" "
                "(crusoecloud/slurm README at v3.0.0), so the step fails before any rank starts",
                hint=f"start the ranks with {mpirun} -np <ranks> --map-by ppr:<gpus>:node inside the allocation",
                column=match.start() + 1, end_column=match.end() + 1, severity=severity)


_MULTINODE_NVLINK = re.compile(r"\bNCCL_MNNVL_ENABLE\s*=\s*['\"]?[12]\b|^#SBATCH\s+--segment[= ]\d", re.M)


def _crusoe_multinode_nvlink(doc: Document, ctx: LintContext) -> bool:
    provider = ctx.provider_for(doc.text)
    return provider is not None and provider.name == "crusoe" and _MULTINODE_NVLINK.search(doc.text) is not None


_HCL_TYPE = re.compile(r"""\btype\s*=\s*"(?P<type>[^"]+)\"""")
_HCL_CUSTOM_IMAGE = re.compile(r"""\bcustom_image\s*=\s*"[^"]+\"""")


def _enclosing_block(text: str, offset: int) -> tuple[int, int]:
    """The span of the innermost ``{ ... }`` around ``offset`` (the whole text when there is none)."""
    depth, start = 0, 0
    for index in range(offset, -1, -1):
        char = text[index]
        if char == "}":
            depth += 1
        elif char == "{":
            if depth == 0:
                start = index
                break
            depth -= 1
    depth, end = 0, len(text)
    for index in range(offset, len(text)):
        char = text[index]
        if char == "{":
            depth += 1
        elif char == "}":
            if depth == 0:
                end = index
                break
            depth -= 1
    return start, end


@rule(code="SLURM005", name="crusoe-custom-image-missing", severity=Severity.ERROR, kinds=(Kind.TFVARS,), since="0.3.0")
def crusoe_custom_image_missing(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """A Crusoe GB200 or B200 partition in ``terraform.tfvars`` without a ``custom_image``.

    ## What it catches
    An element of crusoecloud/slurm's ``partitions`` list whose ``type`` is ``gb200-186gb-nvl-ib.4x``,
    ``gb200-186gb-nvl.4x`` or ``b200-180gb-sxm-ib.8x`` and whose ``custom_image`` is ``null`` or absent.

    ## Why is this bad?
    crusoecloud/slurm README (v3.0.0): "For GB200 and B200, you must create a custom image based on the
    latest official GB200 or B200 Crusoe Cloud image ... and populate the 'custom_image' property";
    its ``examples/example-gb200-and-cpu-partitions.tfvars`` sets ``custom_image`` and leaves ``image``
    null. The default ``ubuntu24.04-nvidia-slurm`` image is not built for these nodes.

    ## Example
    ```hcl
    partitions = [{ name = "gb200", count = 18, type = "gb200-186gb-nvl-ib.4x",
                    image = "ubuntu24.04-nvidia-slurm", custom_image = null, ... }]
    ```

    ## Fix
    Build the image with crusoecloud/solutions-library ``slurm-custom-image`` and name it in
    ``custom_image`` (hpcconf: the pool's ``image``).
    """
    text = doc.text
    for match in _HCL_TYPE.finditer(text):
        if not images.crusoe_needs_custom_image(match.group("type")):
            continue
        line_start = text.rfind("\n", 0, match.start()) + 1
        if text[line_start:match.start()].lstrip().startswith("#"):
            continue
        start, end = _enclosing_block(text, match.start())
        if _HCL_CUSTOM_IMAGE.search(text, start, end):
            continue
        line = text.count("\n", 0, match.start()) + 1
        yield doc.at_line(
            line, f"partition of type {match.group('type')} has no custom_image: {images.CRUSOE_CUSTOM_IMAGE_SOURCE}",
            hint="set custom_image to the image you built with crusoecloud/solutions-library slurm-custom-image "
                 "(hpcconf: the pool's image)",
            column=match.start() - line_start + 1, end_column=match.end() - line_start + 1)
