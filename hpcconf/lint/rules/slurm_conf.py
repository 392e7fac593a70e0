"""``slurm.conf`` fragment rules (SLURM106): the NVL72 lines (block topology, per-job IMEX channels) judged against
the Slurm they run on, where the file's context gives it (a spec's pinned Slurm, a CCWS release's), else said as
information with the floors (:mod:`hpcconf.knowledge.mnnvl`)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from ...artifacts import Kind
from ...diagnostics import Diagnostic, Severity
from ...knowledge import mnnvl
from ...knowledge.versions import Version
from ...rules_registry import rule
from ..context import LintContext
from ..document import Document

_LINE = re.compile(r"^\s*(TopologyPlugin|SwitchType)\s*=\s*(\S+)", re.I | re.M)
_NEEDS = {"topology/block": mnnvl.SLURM_BLOCK_TOPOLOGY, "switch/nvidia_imex": mnnvl.SLURM_SEGMENT}


def slurm_version(ctx: LintContext) -> str | None:
    """The Slurm the file runs on where its context says: a CCWS release's, else the spec's ``versions.slurm``."""
    cluster = ctx.cluster
    if cluster is None:
        return None
    ccws = getattr(cluster, "ccws", None)
    if ccws is not None and ccws.slurm_version:
        return str(ccws.slurm_version)
    return str(cluster.versions.slurm) if cluster.versions.slurm else None


@rule(code="SLURM106", name="nvl72-lines-need-slurm", severity=Severity.ERROR, kinds=(Kind.SLURM_CONF,),
      since="0.4.0")
def nvl72_lines_need_slurm(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """A ``slurm.conf`` fragment turns on block topology or per-job IMEX channels on a Slurm that lacks them.

    ## What it catches
    ``TopologyPlugin=topology/block`` and ``SwitchType=switch/nvidia_imex`` in a ``slurm.conf`` (or
    ``site_specific.conf``) fragment, judged against the Slurm the file's context pins (a spec's ``versions.slurm``,
    a CCWS release's Slurm): error below the plugin's first release (topology/block 23.11, switch/nvidia_imex 24.05),
    warning for topology/block on 23.11 (no ``--segment``, from 24.05). A file linted on its own, whose Slurm it does
    not show: information naming both floors and that topology/block needs a ``topology.conf`` with blocks before
    slurmctld starts.

    ## Why is this bad?
    slurmctld loads the plugins slurm.conf names and stops when one is not built: the block plugin is new in
    slurm-23-11-1-1 (``src/plugins/topology/block``), ``switch/nvidia_imex`` and ``sbatch --segment`` (keeping a job's
    nodes inside one NVLink domain, "the segment size must be less than or equal to the planning base block size")
    in slurm-24-05-1-1. az-hop is frozen at Slurm 23.02.5, which has neither. topology/block without a
    ``topology.conf`` that holds blocks stops slurmctld (``fatal("Blocks do not contain any nodes and the BlockSizes
    are not set")``, ``block_record.c`` at slurm-25-11-5-1; cyclecloud-slurm's README: add it only after scaling).

    ## Example
    ```
    # spec versions.slurm: 23.02.5
    TopologyPlugin=topology/block
    ```

    ## Fix
    Run Slurm 24.05 or newer (CCWS ships 25.11.5), or leave the NVL72 lines out until it does.
    """
    version = slurm_version(ctx)
    parsed = Version.parse_or_none(version) if version else None
    for match in _LINE.finditer(doc.text):
        value = match.group(2).lower()
        floor = _NEEDS.get(value)
        if floor is None:
            continue
        line = doc.text.count("\n", 0, match.start()) + 1
        column = match.start(1) - doc.text.rfind("\n", 0, match.start(1))
        setting = f"{match.group(1)}={match.group(2)}"
        if parsed is None:
            context = ("; it needs a topology.conf with blocks before slurmctld starts" if value == "topology/block"
                       else "")
            yield doc.at_line(line, f"{setting} needs Slurm {floor.version} or newer ({floor.source})"
                              f"{', and --segment needs ' + mnnvl.SLURM_SEGMENT.version if value == 'topology/block' else ''}"
                              f"{context}: the Slurm this file runs on is not shown", column=column,
                              severity=Severity.INFO, hint=f"check `slurmctld -V` on the controller: "
                              f"{mnnvl.SLURM_SEGMENT.version} or newer has both")
        elif not floor.met_by(version or ""):
            yield doc.at_line(line, f"{setting} on Slurm {version}: the plugin is new in {floor.version} "
                              f"({floor.source}); slurmctld cannot load it and does not start", column=column,
                              hint=f"Slurm {mnnvl.SLURM_SEGMENT.version} or newer, or leave the line out")
        elif value == "topology/block" and not mnnvl.SLURM_SEGMENT.met_by(version or ""):
            yield doc.at_line(line, f"{setting} on Slurm {version}: no sbatch --segment before "
                              f"{mnnvl.SLURM_SEGMENT.version}, so a job cannot ask to stay inside one NVLink domain",
                              column=column, severity=Severity.WARNING,
                              hint=f"Slurm {mnnvl.SLURM_SEGMENT.version} or newer")
