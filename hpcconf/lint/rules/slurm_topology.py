"""Slurm ``topology.conf`` rules for topology/block (SLURM104): ``BlockSizes`` Slurm refuses, blocks smaller than
the base block, and blocks that do not match the NVLink domain of the size the file is for (``--sku`` or the one
catalog size it names; :mod:`hpcconf.knowledge.slurm_gres` says how many VMs one domain holds)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from ...artifacts import Kind
from ...diagnostics import Diagnostic, Severity
from ...knowledge import slurm_gres
from ...rules_registry import rule
from ..context import LintContext
from ..document import Document


@dataclass(frozen=True)
class Block:
    line: int
    name: str
    nodes: int | None  # None: a hostlist this reader cannot expand
    column: int


_BLOCK = re.compile(r"^\s*BlockName\s*=\s*(\S+)(?:\s+Nodes\s*=\s*(\S+))?", re.I)
_SIZES = re.compile(r"^\s*BlockSizes\s*=\s*(\S+)", re.I)


def block_sizes_problem(values: list[str]) -> str | None:
    """Why Slurm refuses a ``BlockSizes`` list (``block_record.c``: a positive base, then each size the base times
    a power of two, at most 2^15), None when it takes it."""
    base = 0
    for value in values:
        if not value.isdigit() or int(value) <= 0:
            return f"{value!r} is not a positive node count"
        size = int(value)
        base = base or size
        level = size // base
        if size % base or level & (level - 1) or level > 1 << 15:
            return f"{size} is not {base} times a power of two"
    return None


@rule(code="SLURM104", name="block-topology-sizes", severity=Severity.ERROR, kinds=(Kind.SLURM_TOPOLOGY,),
      since="0.4.0")
def block_topology_sizes(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """A block ``topology.conf`` whose ``BlockSizes`` Slurm refuses, or whose blocks fit neither them nor the rack.

    ## What it catches
    In a ``topology.conf`` with ``BlockName=`` lines: ``BlockSizes`` where a size is not the first (the base block)
    times a power of two (error); a block with fewer nodes than the base block (warning); and, judged against the
    size given by ``--sku`` or the one catalog size the file names when its NVLink domain spans VMs (GB200/GB300
    NVL72: 18 VMs), a base block larger than one domain, or a block holding more nodes than one domain (warning).

    ## Why is this bad?
    slurmctld stops on a ``BlockSizes`` value that is not the base times a power of two:
    ``fatal("Invalid BlockSizes value: %s")`` (SchedMD/slurm ``src/plugins/topology/block/block_record.c`` at
    slurm-25-11-5-1; topology.conf(5): "Each block must have at least the planning base block size count of nodes.
    Successive BlockSizes must be a power of two larger than the prior values"). A block smaller than the base
    breaks that rule: the plugin counts a block as a base block only when it has the base's node count
    (``topology_block.c``), and cyclecloud-slurm's ``azslurm topology`` comments such blocks out ("Block N has less than S nodes, commenting out", ``azure-slurm/slurmcc/topology.py``
    ``write_block_topology`` at 4.0.9). On an NVL72 size a block is one NVLink domain (azslurm groups nodes by the
    GPUs' ClusterUUID and CliqueId and its README asks ``--block_size 18``, "one rack per block"): a base block or a
    block larger than the 18 VMs of one domain puts jobs Slurm treats as one block on two racks, joined by
    InfiniBand instead of NVLink.

    ## Example
    ```
    # Standard_ND128isr_NDR_GB200_v6
    BlockName=rack1 Nodes=ccw-gpu-[1-18]
    BlockName=rack2 Nodes=ccw-gpu-[19-36]
    BlockSizes=18,54
    ```

    ## Fix
    ```
    BlockName=rack1 Nodes=ccw-gpu-[1-18]
    BlockName=rack2 Nodes=ccw-gpu-[19-36]
    BlockSizes=18,36
    ```
    """
    blocks: list[Block] = []
    sizes: tuple[int, list[str], int] | None = None
    for number, raw in enumerate(doc.text.splitlines(), 1):
        line = raw.split("#", 1)[0]
        named = _BLOCK.match(line)
        if named:
            nodes = slurm_gres.expand_hostlist(named.group(2)) if named.group(2) else None
            blocks.append(Block(number, named.group(1), len(nodes) if nodes is not None else None,
                                (named.start(2) if named.group(2) else named.start(1)) + 1))
        found = _SIZES.match(line)
        if found:
            sizes = (number, found.group(1).split(","), found.start(1) + 1)
    if not blocks:
        return  # topology/tree (SwitchName=) or an empty file: not a block topology
    base: int | None = None
    if sizes is not None:
        number, values, column = sizes
        problem = block_sizes_problem(values)
        if problem is not None:
            yield doc.at_line(number, f"BlockSizes={','.join(values)}: {problem}: slurmctld stops (Invalid "
                              "BlockSizes value)", column=column,
                              hint="each size after the first is the first times 2, 4, 8, ...")
            return
        base = int(values[0])
    else:
        counted = [b.nodes for b in blocks if b.nodes]
        base = counted[0] if counted else None  # Slurm takes the first block's node count as the base
    sku = ctx.sku_for_text(doc.text)
    domain = slurm_gres.nodes_per_block(sku) if sku is not None else None
    if domain is not None and domain > 1 and sku is not None and base is not None and base > domain \
            and sizes is not None:
        yield doc.at_line(sizes[0], f"the base block is {base} nodes, more than the {domain} VMs of one "
                          f"{sku.name} NVLink domain: a block Slurm places a job in spans racks", column=sizes[2],
                          hint=f"BlockSizes={domain}", severity=Severity.WARNING)
    for block in blocks:
        if block.nodes is None:
            continue
        if base is not None and block.nodes < base:
            yield doc.at_line(block.line, f"block {block.name} has {block.nodes} node"
                              f"{'' if block.nodes == 1 else 's'}, fewer than the base block of {base} "
                              "(topology.conf(5): each block has at least that many): Slurm's block placement never "
                              "counts it as a whole base block", column=block.column, severity=Severity.WARNING,
                              hint="comment the block out until its nodes are there (as azslurm topology does), "
                              "or lower BlockSizes")
        elif domain is not None and domain > 1 and sku is not None and block.nodes > domain:
            yield doc.at_line(block.line, f"block {block.name} has {block.nodes} nodes, more than the {domain} VMs "
                              f"of one {sku.name} NVLink domain: jobs placed in it cross racks over InfiniBand",
                              column=block.column, severity=Severity.WARNING,
                              hint="one BlockName per NVLink domain (azslurm topology -n groups nodes by the GPUs' "
                              "ClusterUUID and CliqueId)")
