"""Slurm ``gres.conf`` and ``cgroup.conf`` rules (SLURM1xx): GPU lines judged against the size the file is for
(``--sku`` or the one catalog size it names; :mod:`hpcconf.knowledge.slurm_gres` writes what azslurm would)."""

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
class GresLine:
    number: int
    fields: dict[str, str]  # keys lowercased
    columns: dict[str, int]  # 1-based column of each key


_FIELD = re.compile(r"(\S+?)=(\S+)")


def gres_lines(text: str) -> list[GresLine]:
    """``Key=Value`` lines of a gres.conf (comments and blank lines left out)."""
    out = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0]
        fields, columns = {}, {}
        for match in _FIELD.finditer(line):
            key = match.group(1).lower()
            fields[key] = match.group(2)
            columns[key] = match.start() + 1
        if fields:
            out.append(GresLine(number, fields, columns))
    return out


def expand_files(value: str) -> list[str] | None:
    """``/dev/nvidia[0-3,5]`` or ``/dev/nvidia0,/dev/nvidia1`` -> each device file (Slurm's hostlist form); None for
    an expression this reader cannot expand (no judgement is better than a wrong count)."""
    parts, depth, start = [], 0, 0
    for i, c in enumerate(value):
        depth += (c == "[") - (c == "]")
        if c == "," and depth == 0:
            parts.append(value[start:i])
            start = i + 1
    parts.append(value[start:])
    files = []
    for part in parts:
        if "[" not in part and "]" not in part:
            files.append(part)
            continue
        match = re.fullmatch(r"([^\[\]]*)\[([0-9,\-]+)\]([^\[\]]*)", part)
        if match is None:
            return None
        for item in match.group(2).split(","):
            lo, _, hi = item.partition("-")
            if not lo.isdigit() or (hi and not hi.isdigit()) or int(hi or lo) < int(lo):
                return None
            files += [f"{match.group(1)}{n}{match.group(3)}" for n in range(int(lo), int(hi or lo) + 1)]
    return files


_NVIDIA = re.compile(r"^/dev/nvidia(\d+)$")
_AMD = re.compile(r"^/dev/dri/renderD(\d+)$")


@rule(code="SLURM101", name="gres-gpus-not-the-size", severity=Severity.ERROR, kinds=(Kind.GRES_CONF,),
      since="0.4.0")
def gres_gpus_not_the_size(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """A ``gres.conf`` GPU line names device files the size does not have, or more (or fewer) GPUs than it has.

    ## What it catches
    ``Name=gpu`` lines of a ``gres.conf`` judged against the size given by ``--sku`` or the one catalog size the
    file names (else nothing is judged): ``File=`` devices of the other vendor (``/dev/nvidia*`` on an AMD size,
    ``/dev/dri/renderD*`` on an NVIDIA one), an NVIDIA device past the size's GPUs (``/dev/nvidia8`` on 8 GPUs),
    more GPUs for one ``NodeName`` than the size has, and (warning) fewer. A count that is too high because of a
    device the size does not have is one finding, at the device.

    ## Why is this bad?
    slurmd stats every ``File=`` device and stops when one is missing: ``fatal("can't stat gres.conf file %s")``
    (SchedMD/slurm ``src/interfaces/gres.c`` at slurm-25-11-5-1); the count of a line is its number of files. A
    node whose ``Gres=gpu:N`` in slurm.conf is more than gres.conf gives is set down with "gpu count reported lower
    than configured" (same file). Fewer GPUs than the size has leaves the rest unscheduled. cyclecloud-slurm's
    azslurm writes ``Count=<gpus> File=/dev/nvidia[0-<gpus-1>]`` (AMD: ``/dev/dri/renderD[128,136,...]``) from the
    count CycleCloud reports (``azure-slurm/slurmcc/cli.py`` at 4.0.9), which is wrong for some subscriptions
    (README "Incorrect number of GPUs").

    ## Example
    ```
    # Standard_ND96isr_H100_v5
    Nodename=ccw-gpu-[1-4] Name=gpu Count=8 File=/dev/nvidia[1-8]
    ```

    ## Fix
    ```
    Nodename=ccw-gpu-[1-4] Name=gpu Count=8 File=/dev/nvidia[0-7]
    ```
    """
    sku = ctx.sku_for_text(doc.text)
    if sku is None or sku.gpu is None:
        return
    expected = sku.gpu.count
    amd = sku.gpu.vendor == "amd"
    totals: dict[str, tuple[int, GresLine]] = {}
    device_reported: set[str] = set()  # NodeNames with a device finding: their excess count is the same defect
    for line in gres_lines(doc.text):
        if line.fields.get("name", "").lower() != "gpu":
            continue
        file_value = line.fields.get("file") or line.fields.get("files")
        expanded = expand_files(file_value) if file_value else []
        if expanded is None:
            continue
        files = expanded
        column = line.columns.get("file") or line.columns.get("files") or 1
        for path in files:
            nvidia, render = _NVIDIA.match(path), _AMD.match(path)
            if (nvidia and amd) or (render and not amd):
                other = "an AMD" if amd else "an NVIDIA"
                yield doc.at_line(line.number, f"{path} is not a GPU device of {sku.name} ({other} size, "
                                  f"{expected} GPUs): slurmd cannot stat it, or binds jobs to the wrong device",
                                  column=column, hint=f"File={slurm_gres.gpu_devices(sku)}")
                device_reported.add(line.fields.get("nodename", ""))
                break
            if nvidia and int(nvidia.group(1)) >= expected:
                yield doc.at_line(line.number, f"{path} does not exist on {sku.name} ({expected} GPUs: /dev/nvidia0 "
                                  f"to /dev/nvidia{expected - 1}): slurmd stops (can't stat gres.conf file)",
                                  column=column, hint=f"File={slurm_gres.gpu_devices(sku)}")
                device_reported.add(line.fields.get("nodename", ""))
                break
        count = len(files) if files else _count(line.fields.get("count"))
        if count is None:
            continue
        nodes = line.fields.get("nodename", "")
        before = totals.get(nodes, (0, line))[0]
        totals[nodes] = (before + count, totals.get(nodes, (0, line))[1])
    for nodes, (total, first) in totals.items():
        where = f"NodeName={nodes}" if nodes else "every node"
        gpus = f"{total} GPU{'' if total == 1 else 's'}"
        if total > expected and nodes not in device_reported:
            yield doc.at_line(first.number, f"{where} declares {gpus}; {sku.name} has {expected}: the node "
                              "is set down (gpu count reported lower than configured)",
                              hint=f"Count={expected} File={slurm_gres.gpu_devices(sku)}")
        elif total < expected:
            yield doc.at_line(first.number, f"{where} declares {gpus}; {sku.name} has {expected}: Slurm "
                              f"schedules only {total}", hint=f"Count={expected} File={slurm_gres.gpu_devices(sku)}",
                              severity=Severity.WARNING)


def _count(value: str | None) -> int | None:
    if value is None or not value.isdigit():
        return None  # absent (AutoDetect finds them) or a K/M/G suffix: not a GPU count we judge
    return int(value)


_CONSTRAIN_DEVICES = re.compile(r"^\s*ConstrainDevices\s*=\s*(\S+)", re.I | re.M)


@rule(code="SLURM102", name="cgroup-devices-unconstrained", severity=Severity.INFO, kinds=(Kind.CGROUP_CONF,),
      since="0.4.0")
def cgroup_devices_unconstrained(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """``cgroup.conf`` does not set ``ConstrainDevices=yes``: a job can open every GPU of a node it shares.

    ## What it catches
    A ``cgroup.conf`` without ``ConstrainDevices=yes`` (absent, or set to ``no``). Information: it matters only
    where jobs share a node (on whole-node GPU jobs nothing is lost), which the file does not show.

    ## Why is this bad?
    Without it Slurm sets ``CUDA_VISIBLE_DEVICES`` but does not fence the other GPUs' device files: a process that
    ignores the variable (or resets it) uses GPUs another job was given (cgroup.conf(5) at slurm-25-11-5-1:
    "If configured to "yes" then constrain the job's allowed devices based on GRES allocated resources ... The
    default value is "no""). cyclecloud-slurm
    writes ``ConstrainDevices=yes`` (``azure-slurm-install/templates/cgroup.conf.template`` at 4.0.9).

    ## Example
    ```
    ConstrainCores=yes
    ConstrainRamSpace=yes
    ```

    ## Fix
    ```
    ConstrainCores=yes
    ConstrainRamSpace=yes
    ConstrainDevices=yes
    ```
    """
    found = list(_CONSTRAIN_DEVICES.finditer(doc.text))
    if found and found[-1].group(1).lower() == "yes":
        return
    line = doc.text.count("\n", 0, found[-1].start()) + 1 if found else 1
    yield doc.at_line(line, "ConstrainDevices is not yes: jobs that share a node can open each other's GPUs",
                      hint="add ConstrainDevices=yes (cyclecloud-slurm's cgroup.conf has it)")
