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
from ..document import Document, DocumentSet


@dataclass(frozen=True)
class GresLine:
    number: int
    fields: dict[str, str]  # keys lowercased
    columns: dict[str, int]  # 1-based column of each key


_FIELD = re.compile(r"(\S+?)=(\S+)")


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """(first line number, text) of each logical line: comments cut, a trailing ``\\`` joins the next line
    (slurm.conf(5): "a line may be continued with a backslash")."""
    out: list[tuple[int, str]] = []
    pending: tuple[int, str] | None = None
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].rstrip()
        continued = line.endswith("\\")
        line = line[:-1] if continued else line
        pending = (pending[0], pending[1] + " " + line) if pending else (number, line)
        if not continued:
            out.append(pending)
            pending = None
    if pending:
        out.append(pending)
    return out


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




@rule(code="SLURM101", name="gres-gpus-not-the-size", severity=Severity.ERROR, kinds=(Kind.GRES_CONF,),
      since="0.4.0")
def gres_gpus_not_the_size(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """A ``gres.conf`` GPU line names device files the size does not have, or more (or fewer) GPUs than it has.

    ## What it catches
    ``Name=gpu`` lines of a ``gres.conf`` judged against the size given by ``--sku`` or the one catalog size the
    file names (else nothing is judged): ``File=`` devices of the other vendor (``/dev/nvidia*`` on an AMD size,
    ``/dev/dri/renderD*`` on an NVIDIA one), an NVIDIA device past the size's GPUs (``/dev/nvidia8`` on 8 GPUs),
    an AMD render node that is not one of the size's GPUs (azslurm's ``renderD128``, ``renderD136``, ...: one
    every 8 minors, so ``renderD[128-135]`` names one GPU and seven nodes that are not there), more GPUs for one
    ``NodeName`` than the size has, and (warning) fewer. A count that is too high because of
    a device the size does not have is one finding, at the device.

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
    own = slurm_gres.DEVICE_FILES[slurm_gres.device_scheme(sku)]
    others = [scheme for scheme in slurm_gres.DEVICE_FILES.values() if scheme is not own]
    valid = set(slurm_gres.expand_hostlist(own.files(expected, 0)) or ())
    totals: dict[str, tuple[int, GresLine]] = {}
    device_reported: set[str] = set()  # NodeNames whose wrong device is their root cause: no second finding
    for line in gres_lines(doc.text):
        if line.fields.get("name", "").lower() != "gpu":
            continue
        file_value = line.fields.get("file") or line.fields.get("files")
        expanded = slurm_gres.expand_hostlist(file_value) if file_value else []
        if expanded is None:
            continue
        files = expanded
        column = line.columns.get("file") or line.columns.get("files") or 1
        for path in files:
            mine = own.pattern.match(path)
            if any(scheme.pattern.match(path) for scheme in others):
                yield doc.at_line(line.number, f"{path} is not a GPU device of {sku.name} ({own.label} size, "
                                  f"{expected} GPUs): slurmd cannot stat it, or binds jobs to the wrong device",
                                  column=column, hint=f"File={slurm_gres.gpu_devices(sku)}")
                device_reported.add(line.fields.get("nodename", ""))
                break
            if mine and path not in valid:
                if own.indexed:
                    message = (f"{path} does not exist on {sku.name} ({expected} GPUs: {own.files(1, 0)} to "
                               f"{own.files(1, expected - 1)}): slurmd stops (can't stat gres.conf file)")
                else:
                    message = (f"{path} is not a GPU device node of {sku.name} ({expected} GPUs: {_device_list(valid)}, "
                               "as azslurm writes them): on GPUs that are not partitioned it does not exist and slurmd "
                               "stops (can't stat gres.conf file)")
                yield doc.at_line(line.number, message,
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


def _device_list(valid: set[str]) -> str:
    ordered = sorted(valid, key=lambda path: (len(path), path))
    shown = ordered if len(ordered) <= 3 else [*ordered[:2], "...", ordered[-1]]
    return ", ".join(shown)


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


@rule(code="SLURM103", name="gres-cores-cross-numa", severity=Severity.WARNING, kinds=(Kind.GRES_CONF,),
      since="0.4.0")
def gres_cores_cross_numa(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """A ``gres.conf`` GPU line binds its GPUs to cores of another NUMA node than theirs.

    ## What it catches
    ``Name=gpu`` lines with ``File=/dev/nvidiaN`` and ``Cores=``, judged against the size given by ``--sku`` or the
    one catalog size the file names, where the catalog has the size's GPU-to-NUMA map: ``Cores=`` that include the
    cores of a NUMA node holding none of the line's GPUs (``nvidia[0-3]`` with ``Cores=0-95`` on ND H100 v5, whose
    GPUs 0-3 are on NUMA node 0, cores 0-47), or that leave out every core of a NUMA node one of its GPUs is on.

    ## Why is this bad?
    ``Cores=`` tells Slurm which cores are close to the GPUs ("the specific cores which can use this resource",
    gres.conf(5) at slurm-25-11-5-1): with ``--gres-flags=enforce-binding`` a job gets only those cores, and
    without it Slurm still prefers them. Cores of another NUMA node put the job's tasks away from their GPU's
    memory controller and PCIe root, so host-to-device copies from their memory cross the inter-node link; leaving out a GPU's own node binds that
    GPU to remote cores only. The GPU-to-NUMA map is the catalog's (the size's NCCL topology file,
    Azure/azhpc-images ``topology/``), the one hpcconf's own ``gres.conf`` lines with ``Cores=`` are written from;
    it reads the core ids as the NUMA node's cpulist, which is Slurm's numbering when each core runs one thread.
    azslurm writes no ``Cores=`` (``azure-slurm/slurmcc/cli.py`` at 4.0.9): leaving it out is not wrong, only
    unbound.

    ## Example
    ```
    # Standard_ND96isr_H100_v5
    Nodename=ccw-gpu-[1-4] Name=gpu Count=4 File=/dev/nvidia[0-3] Cores=0-95
    Nodename=ccw-gpu-[1-4] Name=gpu Count=4 File=/dev/nvidia[4-7] Cores=0-95
    ```

    ## Fix
    ```
    Nodename=ccw-gpu-[1-4] Name=gpu Count=4 File=/dev/nvidia[0-3] Cores=0-47
    Nodename=ccw-gpu-[1-4] Name=gpu Count=4 File=/dev/nvidia[4-7] Cores=48-95
    ```
    """
    sku = ctx.sku_for_text(doc.text)
    if sku is None or sku.gpu is None:
        return
    scheme = slurm_gres.DEVICE_FILES[slurm_gres.device_scheme(sku)]
    if not scheme.indexed:
        return  # the GPU-to-NUMA map is by GPU index; render-node minors are not indices
    numa_of = slurm_gres.numa_of_gpu_minors(sku)
    if numa_of is None:
        return
    cpus_of = {node.id: set(node.cpu_set()) for node in sku.numa}
    for line in gres_lines(doc.text):
        cores_value = line.fields.get("cores")
        file_value = line.fields.get("file") or line.fields.get("files")
        if line.fields.get("name", "").lower() != "gpu" or not cores_value or not file_value:
            continue
        files = slurm_gres.expand_hostlist(file_value)
        cores = _cpulist_or_none(cores_value)
        if files is None or cores is None:
            continue
        minors = [int(m.group(1)) for m in map(scheme.pattern.match, files) if m]
        if len(minors) != len(files) or any(minor not in numa_of for minor in minors):
            continue  # SLURM101 reports devices the size does not have
        own = sorted({numa_of[minor] for minor in minors})
        touched = sorted(node for node, cpus in cpus_of.items() if cores & cpus)
        foreign = [node for node in touched if node not in own]
        unbound = [node for node in own if node not in touched]
        if not foreign and not unbound:
            continue
        devices = scheme.files(len(minors), minors[0]) if minors == list(
            range(minors[0], minors[0] + len(minors))) else file_value
        right = ",".join(sku.numa_node(node).cpus for node in own)
        plural = "s" if len(own) > 1 else ""
        if not set(own) & set(touched):
            problem = (f"Cores={cores_value} are on NUMA node{'s' if len(touched) > 1 else ''} {_join(touched)}, "
                       f"{devices} on NUMA node{plural} {_join(own)}")
            effect = "a job given these GPUs is bound to another NUMA node's cores"
        elif foreign:
            problem = (f"Cores={cores_value} includes cores of NUMA node{'s' if len(foreign) > 1 else ''} "
                       f"{_join(foreign)}, which hold{'' if len(foreign) > 1 else 's'} none of {devices}")
            effect = "Slurm may place a job given these GPUs on another NUMA node's cores"
        else:
            problem = (f"Cores={cores_value} has no core of NUMA node{'s' if len(unbound) > 1 else ''} "
                       f"{_join(unbound)}, where some of {devices} are")
            effect = "those GPUs are bound to another NUMA node's cores"
        yield doc.at_line(line.number, f"{sku.name}: {problem}: {effect}", column=line.columns["cores"],
                          hint=f"Cores={right}")


def _join(nodes: list[int]) -> str:
    return ", ".join(str(node) for node in nodes)


def _cpulist_or_none(value: str) -> set[int] | None:
    # Imported here: the catalog pulls in pydantic, which a lint of an unrelated file must not pay for.
    from ...catalog import parse_cpulist

    try:
        return set(parse_cpulist(value))
    except ValueError:
        return None


def _has_gpu(gres: str) -> bool:
    """Whether a slurm.conf ``Gres=`` value configures GPUs (``gpu:8``, ``gpu:h100:8``, ``shard:8,gpu:8``)."""
    return any(item.strip().lower().split(":", 1)[0] == "gpu" and not item.strip().lower().endswith(":0")
               for item in gres.split(","))


@rule(code="SLURM107", name="slurm-node-without-gpu-gres", severity=Severity.ERROR,
      kinds=(Kind.SLURM_CONF, Kind.GRES_CONF), scope="set")
def node_without_gpu_gres(docs: DocumentSet, ctx: LintContext) -> Iterator[Diagnostic]:
    """A slurm.conf ``NodeName`` line has no ``Gres=gpu...`` while the gres.conf beside it gives those nodes GPUs.

    ## What it catches
    - a NodeName line of slurm.conf without a gpu Gres (of its own or of a ``NodeName=DEFAULT`` line before
      it) for nodes that a ``Name=gpu`` line of the gres.conf of the same deployment names by NodeName
    - info, not error, when the gres.conf GPU lines name no NodeName and no node line has a gpu Gres: which
      nodes read that gres.conf is not in the files
    - not reported: a NodeName line whose Gres has gpu, and nodes no gres.conf line names

    ## Why is this bad?
    The two files are one configuration when the pairing says so (``hpcconf/lint/pairing.py``): slurmd reads
    gres.conf from the directory of slurm.conf, so a slurm.conf and a gres.conf of one folder (or
    X.slurm.conf and X.gres.conf) are one configuration.
    slurmctld schedules a node's generic resources from the node's ``Gres=`` in slurm.conf (slurm.conf(5),
    ``Gres``: "a comma-delimited list of generic resources specifications for a node"; SchedMD's GRES guide,
    slurm.schedmd.com/gres.html, "Configuration": GRES are defined by ``GresTypes`` and the node's ``Gres=``
    in slurm.conf, and gres.conf only describes them, "the file will always be located in the same directory
    as the slurm.conf file"). A node whose line has no ``Gres=gpu`` has no GPUs for the scheduler, whatever
    gres.conf and the hardware hold: a job asking ``--gres=gpu:8`` (or ``--gpus``) is refused at submission
    ("Requested node configuration is not available") or never starts on those nodes.

    ## Severity
    Error: GPU jobs cannot be scheduled on those nodes. Info when the gres.conf lines name no node (a
    gres.conf copied to every node applies to all of them, one kept on GPU nodes only to those).

    ## Example
    ```
    # slurm.conf
    NodeName=gpu-[001-004] CPUs=96 RealMemory=1800000 State=CLOUD
    PartitionName=gpu Nodes=gpu-[001-004] Default=YES
    # gres.conf
    NodeName=gpu-[001-004] Name=gpu File=/dev/nvidia[0-7]
    ```

    ## Fix
    Give the node line the GPUs gres.conf describes, and list the type: ``GresTypes=gpu`` and
    ``NodeName=gpu-[001-004] CPUs=96 RealMemory=1800000 Gres=gpu:8 State=CLOUD``.
    """
    confs = [doc for doc in docs if doc.kind == Kind.SLURM_CONF]
    gres_docs = [doc for doc in docs if doc.kind == Kind.GRES_CONF]
    if not confs or not gres_docs:
        return
    named: dict[str, tuple[Document, GresLine]] = {}  # node -> the gres.conf line giving it GPUs
    unnamed: list[tuple[Document, GresLine]] = []
    for gres_doc in gres_docs:
        for line in gres_lines(gres_doc.text):
            if line.fields.get("name", "").lower() != "gpu":
                continue
            nodes = line.fields.get("nodename")
            if not nodes:
                unnamed.append((gres_doc, line))
                continue
            for node in slurm_gres.expand_hostlist(nodes) or []:
                named.setdefault(node, (gres_doc, line))
    if not named and not unnamed:
        return
    any_gpu_node = any(_has_gpu(m.group(1)) for doc in confs for m in re.finditer(r"\bGres=(\S+)", doc.text, re.I))
    for doc in confs:
        default_gres = ""
        types = "" if re.search(r"^\s*GresTypes\s*=.*\bgpu\b", doc.text, re.I | re.M) else " and GresTypes=gpu"
        for number, text in _logical_lines(doc.text):
            fields = {m.group(1).lower(): m.group(2) for m in _FIELD.finditer(text)}
            if "nodename" not in fields or not re.match(r"^\s*NodeName\s*=", text, re.I):
                continue
            nodes_value = fields["nodename"]
            if nodes_value.upper() == "DEFAULT":
                default_gres = fields.get("gres", default_gres)
                continue
            if _has_gpu(fields.get("gres", default_gres)):
                continue
            column = text.lower().index("nodename") + 1
            hosts = slurm_gres.expand_hostlist(nodes_value) or []
            given = [node for node in hosts if node in named]
            if given:
                gres_doc, line = named[given[0]]
                shown = nodes_value if len(given) == len(hosts) else f"{len(given)} of {nodes_value}"
                yield doc.at_line(number, f"NodeName={shown} has no Gres=gpu, but {gres_doc.path}:{line.number} "
                                          f"gives {line.fields['nodename']} GPUs: slurmctld counts none on these "
                                          "nodes, so --gres=gpu jobs are refused or never start there",
                                  column=column, hint=f"add Gres=gpu:<GPUs per node> to this line (gres.conf line "
                                                      f"{line.number}){types}")
            elif unnamed and hosts and not any_gpu_node:  # some nodes with GPUs: the others are CPU nodes
                gres_doc, line = unnamed[0]
                yield doc.at_line(number, f"NodeName={nodes_value} has no Gres=gpu, while {gres_doc.path}:"
                                          f"{line.number} declares GPUs for every node that reads it: if these are "
                                          "GPU nodes, slurmctld counts none on them",
                                  column=column, severity=Severity.INFO,
                                  hint="add Gres=gpu:<GPUs per node> to the GPU nodes' lines")
