"""Lay the facts of one collected node out as a SKU file (``hpcconf sku import``).

Every value written carries an end-of-line comment naming the collected file, line and field it
came from; ``sources:`` names each file used and ``cites:`` which fields each backs. A fact the files
do not establish is left out (its field keeps the SKU default) and ``notes:`` says why. Facts a SKU
cannot do without (the GPUs, the NVLink status) stop the import with HPC331 instead; two files that
disagree about the same fact stop it with HPC332.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from ruamel.yaml.comments import CommentedMap, CommentedSeq

from ..catalog import NCCL_PCI_LINK_SPEEDS, Sku
from ..diagnostics import Diagnostic, HpcconfError
from ..parsers.node_common import Fact
from ..parsers.nvidia_smi import SmiGpu, SmiReport
from .collection import PARSERS, Collection

# CUDA compute capability x10 of the architectures where one number covers every GPU of that name
# (NVIDIA's CUDA GPUs list, developer.nvidia.com/cuda-gpus). Ampere (80/86/87), Ada (89) and
# Blackwell (100/103/120) are ambiguous by name: without compute_cap the import stops instead.
SM_OF_ARCHITECTURE = {"Volta": 70, "Hopper": 90}
# Mellanox/NVIDIA HCA PCI device ids (pci.ids, https://pci-ids.ucw.cz/read/PC/15b3).
HCA_OF_DEVICE = {"1003": "ConnectX-3", "1004": "ConnectX-3 VF", "1013": "ConnectX-4", "1015": "ConnectX-4 Lx",
                 "1017": "ConnectX-5", "1018": "ConnectX-5 VF", "1019": "ConnectX-5 Ex", "101b": "ConnectX-6",
                 "101c": "ConnectX-6 VF", "101d": "ConnectX-6 Dx", "101e": "ConnectX Family mlx5Gen VF",
                 "1021": "ConnectX-7", "1023": "ConnectX-8"}
IB_RATES = {"FDR", "EDR", "HDR", "NDR", "XDR"}
_IB_RATE = re.compile(r"^(\d+) Gb/sec \((\d+)X ([A-Z]+)\)")  # /sys/class/infiniband/*/ports/*/rate
_PCIE_GEN_SPEED = {1: "2.5 GT/s PCIe", 2: "5.0 GT/s PCIe", 3: "8.0 GT/s PCIe", 4: "16.0 GT/s PCIe",
                   5: "32.0 GT/s PCIe", 6: "64.0 GT/s PCIe"}
_CPU_VENDOR = {"GenuineIntel": "Intel", "AuthenticAMD": "AMD", "ARM": "Arm"}
_ARCH = {"x86_64": "x86_64", "aarch64": "arm64", "arm64": "arm64"}


def missing(directory: Path, message: str, hint: str) -> HpcconfError:
    return HpcconfError([Diagnostic(code="HPC331", name="node-facts-missing", message=message, hint=hint)
                         .at(str(directory), None, None)])


def disagree(a: Fact[Any], b: Fact[Any], directory: Path, fact: str) -> HpcconfError:
    return HpcconfError([Diagnostic(
        code="HPC332", name="node-facts-disagree",
        message=f"{fact}: {a.origin} says {a.value!r}, {b.origin} says {b.value!r}",
        hint="The files come from different nodes or runs; collect them again in one run on one node.")
        .at(str(directory / a.file), a.line, 1 if a.line else None)])


@dataclass
class Draft:
    """The SKU being written: values with their origin comments, cites and notes."""

    data: CommentedMap = field(default_factory=CommentedMap)
    cites: dict[str, list[str]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def cite(self, top: str, *keys: str) -> None:
        bucket = self.cites.setdefault(top, [])
        bucket.extend(k for k in keys if k not in bucket)


def put(mapping: CommentedMap, key: str, value: Any, *facts: Fact[Any] | str | None) -> None:
    """``mapping[key] = value`` with an end-of-line comment naming where it came from."""
    mapping[key] = value
    origins = [f if isinstance(f, str) else f.origin for f in facts if f]
    if origins:
        mapping.yaml_add_eol_comment("from " + "; ".join(origins), key)


# --------------------------------------------------------------------------- entry point

def import_sku(directory: Path, *, name: str | None, provider: str | None, family: str | None) -> tuple[str, Sku]:
    """The SKU file text for the node collected in ``directory``, and the SKU it validates to."""
    col = Collection.open(directory)
    draft = Draft()
    imds = _imds(col)
    from_node = name is None
    name = name if name is not None else (imds.get("vmSize") if imds else None)
    if name is None or name == "":
        raise missing(directory, "the SKU needs a name and the collection does not say which size this is "
                      "(no Azure instance metadata)", "Pass --name NAME, or -o NAME.yaml.")
    _check_name(name, col, from_node)
    provider = provider or ("azure" if imds else "other")
    gpus = _gpus(col, directory)
    draft.data["name"] = name
    draft.data["provider"] = provider
    model = _model(gpus.gpus[0])
    draft.data["family"] = family or f"imported: {len(gpus.gpus)} x {model}"
    _cpu_block(col, draft)
    _memory(col, draft)
    _gpu_block(col, draft, gpus, directory)
    _nvlink_block(col, draft, gpus, directory)
    hcas = _infiniband_block(col, draft)
    _ethernet(col, draft)
    _numa_block(col, draft)
    _topology_block(col, draft, gpus, hcas)
    _provenance(col, draft, imds)
    return _finish(draft, directory)


def _check_name(name: Any, col: Collection, from_node: bool) -> None:
    """The name becomes a file name: it must be a SKU name (catalog grammar) before anything is written."""
    from ..catalog import sku_name_problem

    problem = sku_name_problem(name)
    if problem is None:
        return
    if not from_node:
        raise HpcconfError([Diagnostic(code="HPC096", name="unsafe-name", message=f"--name: {problem}",
                                       hint="Pass a name such as Standard_ND96isr_H100_v5 or lab-h100-8x.")])
    imds = col.directory / "azure-imds.json"
    text = col.imds_text or ""
    line = next((i for i, row in enumerate(text.splitlines(), 1) if '"vmSize"' in row), None)
    raise HpcconfError([Diagnostic(
        code="HPC096", name="unsafe-name", message=f"compute.vmSize in the node's instance metadata: {problem}",
        hint="The instance metadata was altered or is not Azure's; pass --name NAME to name the SKU yourself.")
        .at(str(imds), line, 1 if line else None)])


def _printable(text: str) -> str:
    """A name for a YAML comment: control characters (a newline would start a new YAML line) as '?'."""
    return "".join(c if c.isprintable() else "?" for c in text)


def _finish(draft: Draft, directory: Path) -> tuple[str, Sku]:
    from ..yamlio import dump_yaml

    sku = Sku.model_validate(json.loads(json.dumps(draft.data)))
    header = (f"# {sku.name}: imported by `hpcconf sku import` from the node facts in {_printable(directory.name)}/.\n"
              "# Each value's comment names the collected file:line and field it came from; facts the files do\n"
              "# not establish are left out (see notes). Check it, then use it with --sku-dir.\n")
    return header + dump_yaml(draft.data), sku


# --------------------------------------------------------------------------- GPUs

def _gpus(col: Collection, directory: Path) -> SmiReport:
    report: SmiReport | None = col.get("nvidia-smi-q.xml")
    if report is None or not report.gpus:
        raise missing(directory, f"no NVIDIA GPU facts: nvidia-smi-q.xml is {col.status('nvidia-smi-q.xml')}"
                      + ("" if report is None else " but lists no GPU"),
                      "Collect on a node whose NVIDIA driver works (nvidia-smi -q -x must succeed); AMD GPUs "
                      "(rocm-smi) are recorded but not imported yet.")
    models = {_model(gpu) for gpu in report.gpus}
    if len(models) > 1:
        raise HpcconfError([Diagnostic(
            code="HPC331", name="node-facts-missing",
            message=f"the node has GPUs of several models ({', '.join(sorted(models))}); a SKU describes one model",
            hint="Import a node whose GPUs are all the same model.").at(col.path("nvidia-smi-q.xml"), None, None)])
    _check_against_pci(col, report, directory)
    return report


def _model(gpu: SmiGpu) -> str:
    return gpu.product_name.value.removeprefix("NVIDIA ").strip()


def _check_against_pci(col: Collection, report: SmiReport, directory: Path) -> None:
    """The GPUs sysfs lists must be the ones nvidia-smi reports (a GPU the driver lost is a broken node)."""
    rows = col.get("pci-devices.tsv")
    if rows is None:
        return
    sysfs = {row["bdf"].value: row for row in rows
             if row.get("vendor") and row["vendor"].value == "0x10de" and row["class"].value.startswith("0x03")}
    smi = {gpu.busid.value: gpu for gpu in report.gpus}
    for busid, row in sysfs.items():
        if busid not in smi:
            raise disagree(row["bdf"], Fact(sorted(smi), "nvidia-smi-q.xml", None, "GPU bus ids"), directory,
                           f"GPU {busid} is on the PCI bus but nvidia-smi does not report it")
        gpu = smi[busid]
        if gpu.pci_device and row.get("device") and gpu.pci_device.value != row["device"].value:
            raise disagree(gpu.pci_device, row["device"], directory, f"GPU {busid} PCI device id")


def _gpu_block(col: Collection, draft: Draft, report: SmiReport, directory: Path) -> None:
    first = report.gpus[0]
    key = col.use("nvidia-smi-q.xml")
    gpu = CommentedMap()
    put(gpu, "vendor", "nvidia", first.pci_vendor)
    put(gpu, "model", _model(first), first.product_name)
    put(gpu, "count", len(report.gpus), Fact(len(report.gpus), "nvidia-smi-q.xml", None, "<gpu> elements"))
    smallest = min(report.gpus, key=lambda g: g.memory_mib.value)
    put(gpu, "memory_gb", math.ceil(smallest.memory_mib.value / 1024),
        f"{smallest.memory_mib.origin} {smallest.memory_mib.value} MiB, rounded up to GiB as vendors quote GB")
    sm = _sm(col, report, directory)
    if sm is not None:
        put(gpu, "sm", sm[0], sm[1])
    else:
        raise missing(directory, f"the CUDA compute capability of the {_model(first)} is not in the collection "
                      "(nvidia-smi-query.csv has no compute_cap, nccl-topo.xml is absent) and its architecture "
                      f"({first.architecture.value if first.architecture else 'unknown'}) does not fix it",
                      "Collect with a driver of release 510 or later, or with HPCCONF_NCCL_DUMP=1.")
    for attr in ("pci_device", "pci_subsystem_device"):
        values = {getattr(g, attr).value for g in report.gpus if getattr(g, attr)}
        if len(values) == 1:
            put(gpu, attr, values.pop(), getattr(first, attr))
    draft.data["gpu"] = gpu
    draft.cite("gpu", key)
    if "compute_cap" in sm[1]:
        draft.cite("gpu", col.use("nvidia-smi-query.csv"))
    elif "nccl-topo.xml" in sm[1]:
        draft.cite("gpu", col.use("nccl-topo.xml"))


def _sm(col: Collection, report: SmiReport, directory: Path) -> tuple[int, str] | None:
    rows = col.get("nvidia-smi-query.csv")
    caps = [(row.get("compute_cap"), row.line) for row in rows or [] if row.get("compute_cap")]
    if caps:
        values = {cap for cap, _ in caps}
        if len(values) > 1:
            raise missing(directory, f"GPUs report different compute capabilities {sorted(values)}", "Import one model.")
        cap, line = caps[0]
        major, _, minor = (cap or "").partition(".")
        if major.isdigit() and minor.isdigit():
            return int(major) * 10 + int(minor), f"nvidia-smi-query.csv:{line} compute_cap {cap}"
    dump = _nccl_topo_sm(col)
    if dump is not None:
        return dump
    arch = report.gpus[0].architecture
    if arch is not None and arch.value in SM_OF_ARCHITECTURE:
        return SM_OF_ARCHITECTURE[arch.value], f"{arch.origin} {arch.value} (one compute capability per architecture)"
    return None


def _nccl_topo_sm(col: Collection) -> tuple[int, str] | None:
    """``<gpu sm="90">`` in NCCL's own topology dump."""
    text = col.text("nccl-topo.xml")
    if text is None:
        return None
    for number, line in enumerate(text.splitlines(), start=1):
        match = re.search(r"<gpu\b[^>]*\bsm=\"(\d+)\"", line)
        if match:
            col.used.add("nccl-topo.xml")
            return int(match.group(1)), f"nccl-topo.xml:{number} gpu sm"
    return None


# --------------------------------------------------------------------------- NVLink

def _nvlink_block(col: Collection, draft: Draft, report: SmiReport, directory: Path) -> None:
    status = col.get("nvidia-smi-nvlink.txt")
    matrix = col.get("nvidia-smi-topo.txt")
    if status is None and matrix is None:
        raise missing(directory, "neither nvidia-smi nvlink -s nor nvidia-smi topo -m was collected: NVLink is unknown",
                      "Collect again with a working nvidia-smi.")
    nvlink = CommentedMap()
    active = {gpu: status.active(gpu) for gpu in status.links} if status is not None else {}
    peers = {gpu: matrix.nvlinks(gpu) for gpu in matrix.gpus} if matrix is not None else {}
    present = any(active.values()) or any(peers.values())
    origin = ("nvidia-smi-nvlink.txt " + (f"{sum(active.values())} active links" if status and status.links else "lists no NVLink")
              if status is not None else "nvidia-smi-topo.txt NV# cells")
    put(nvlink, "present", present, origin)
    if present:
        switched, why = _nvswitch(col, active, peers)
        put(nvlink, "nvswitch", switched, why)
        if not switched:
            draft.notes.append("nvlink.nvswitch: not established by the collection (" + why + "); left false")
        draft.notes.append("nvlink.nvls: NVLink SHARP support cannot be read from these files; left unstated "
                           "(unknown; NCCL still detects and uses it when the fabric has it)")
        links = sorted({n for per in peers.values() for n in per.values()})
        nvlink["description"] = (f"NVLink, {max(active.values()) if active else '?'} active links per GPU"
                                 + (f" (nvidia-smi topo -m: NV{'/NV'.join(map(str, links))})" if links else ""))
    else:
        nvlink["description"] = "none (nvidia-smi reports no active NVLink)"
    for name in ("nvidia-smi-nvlink.txt", "nvidia-smi-topo.txt"):
        if col.get(name) is not None:
            draft.cite("nvlink", col.use(name))
    draft.data["nvlink"] = nvlink


def _nvswitch(col: Collection, active: dict[int, int], peers: dict[str, dict[str, int]]) -> tuple[bool, str]:
    """NVSwitch is established when sysfs shows NVIDIA bridges (class 0x0680: NVSwitch on HGX bare metal),
    or when a GPU's NV# cells add up to more links than it has (a switch fans them out)."""
    for row in col.get("pci-devices.tsv") or []:
        if row.get("vendor") and row["vendor"].value == "0x10de" and row["class"].value.startswith("0x0680"):
            col.use("pci-devices.tsv")
            return True, f"{row['bdf'].origin} {row['bdf'].value}: an NVIDIA bridge (NVSwitch)"
    for gpu, per in peers.items():
        index = int(gpu.removeprefix("GPU"))
        if index in active and sum(per.values()) > active[index] > 0:
            return True, (f"nvidia-smi-topo.txt {gpu} has NV links to {len(per)} GPUs adding up to "
                          f"{sum(per.values())}, more than its {active[index]} active links")
    return False, "no NVIDIA bridge in sysfs and the NV# counts fit direct links"


# --------------------------------------------------------------------------- CPU, memory, NUMA

def _lscpu(col: Collection) -> tuple[dict[str, Fact[str]] | None, str | None]:
    for name in ("lscpu.txt", "lscpu.json"):
        fields = col.get(name)
        if fields is not None:
            return fields, name
    return None, None


def _cpu_block(col: Collection, draft: Draft) -> None:
    fields, name = _lscpu(col)
    if fields is None or name is None:
        draft.notes.append("vcpus, cpu: lscpu was not collected")
        return
    key = col.use(name)
    if "CPU(s)" in fields and fields["CPU(s)"].value.isdigit():
        put(draft.data, "vcpus", int(fields["CPU(s)"].value), fields["CPU(s)"])
        draft.cite("vcpus", key)
    cpu = CommentedMap()
    arch = _ARCH.get(fields["Architecture"].value)
    if arch is None:
        draft.notes.append(f"cpu.arch: {fields['Architecture'].value!r} is not x86_64 or aarch64; left out")
    else:
        put(cpu, "arch", arch, fields["Architecture"])
    vendor = fields.get("Vendor ID")
    if vendor is not None:
        put(cpu, "vendor", _CPU_VENDOR.get(vendor.value, vendor.value), vendor)
    if fields.get("Model name"):
        put(cpu, "model", fields["Model name"].value, fields["Model name"])
    sockets = fields.get("Socket(s)")
    if sockets is not None and sockets.value.isdigit():
        put(cpu, "sockets", int(sockets.value), sockets)
    draft.data["cpu"] = cpu
    draft.cite("cpu", key)


def _memory(col: Collection, draft: Draft) -> None:
    info = col.get("meminfo.txt")
    total = info.get("MemTotal") if info else None
    if total is None:
        draft.notes.append("memory_gib: /proc/meminfo was not collected")
        return
    gib = total.value / (1024 * 1024)
    put(draft.data, "memory_gib", max(1, round(gib)), f"{total.origin} {total.value} kB = {gib:.1f} GiB, rounded")
    draft.cite("memory_gib", col.use("meminfo.txt"))
    draft.notes.append("memory_gib is what the guest kernel sees (MemTotal), a little below the size's advertised memory")


def _numa_nodes(col: Collection) -> tuple[dict[int, Fact[str]], str] | None:
    nodes = col.get("numa-nodes.tsv")
    if nodes:
        return nodes, "numa-nodes.tsv"
    numactl = col.get("numactl-H.txt")
    if numactl:
        return {node: Fact(_cpulist(fact.value), fact.file, fact.line, fact.what) for node, fact in numactl.items()}, "numactl-H.txt"
    return None


def _numa_block(col: Collection, draft: Draft) -> None:
    found = _numa_nodes(col)
    if found is None:
        draft.notes.append("numa: neither /sys/devices/system/node nor numactl -H was collected")
        return
    nodes, name = found
    seq = CommentedSeq()
    for node, fact in sorted(nodes.items()):
        if not fact.value:
            draft.notes.append(f"numa: node {node} has no CPUs (a memory-only node, e.g. GPU memory); left out")
            continue
        entry = CommentedMap()
        entry.fa.set_flow_style()
        entry["id"] = node
        entry["cpus"] = fact.value
        seq.append(entry)
        seq.yaml_add_eol_comment(f"from {fact.origin}", len(seq) - 1)
    draft.data["numa"] = seq
    draft.cite("numa", col.use(name))


def _cpulist(cpus: list[int]) -> str:
    """[0, 1, 2, 5] -> "0-2,5"."""
    ranges: list[list[int]] = []
    for cpu in cpus:
        if ranges and cpu == ranges[-1][1] + 1:
            ranges[-1][1] = cpu
        else:
            ranges.append([cpu, cpu])
    return ",".join(f"{a}-{b}" if a != b else str(a) for a, b in ranges)


# --------------------------------------------------------------------------- InfiniBand, Ethernet

@dataclass(frozen=True)
class Hca:
    device: Fact[str]
    bdf: Fact[str] | None
    rate: str
    gbps: int
    rate_fact: Fact[str]


def _infiniband_block(col: Collection, draft: Draft) -> list[Hca]:
    ports = col.get("infiniband.tsv")
    if ports is None:
        draft.notes.append("infiniband: /sys/class/infiniband was not collected; left out")
        return []
    hcas, ethernet = [], []
    for row in ports:
        if row.get("link_layer") and row["link_layer"].value != "InfiniBand":
            ethernet.append(row["device"].value)
            continue
        match = _IB_RATE.match(row["rate"].value) if row.get("rate") else None
        if match is None or match.group(3) not in IB_RATES:
            draft.notes.append(f"infiniband: {row['device'].value} port rate {row['rate'].value if row.get('rate') else '?'!r} "
                               "is not one hpcconf knows (FDR..XDR); that port is left out")
            continue
        hcas.append(Hca(row["device"], row.get("bdf"), match.group(3), int(match.group(1)), row["rate"]))
    key = col.use("infiniband.tsv")
    if not hcas:
        put(draft.data, "infiniband", None, "infiniband.tsv lists no InfiniBand port")
        draft.cite("infiniband", key)
        return []
    rates = {(h.rate, h.gbps) for h in hcas}
    if len(rates) > 1:
        draft.notes.append(f"infiniband: ports run at different rates {sorted(rates)}; the slowest is written")
    slowest = min(hcas, key=lambda h: h.gbps)
    ib = CommentedMap()
    put(ib, "count", len(hcas), f"infiniband.tsv: {len(hcas)} InfiniBand ports")
    put(ib, "rate", slowest.rate, slowest.rate_fact)
    put(ib, "gbps", slowest.gbps, slowest.rate_fact)
    hca_name, device_id, origin = _hca_name(col, hcas)
    put(ib, "hca", hca_name, origin)
    if device_id:
        put(ib, "pci_device", device_id, origin)
    ib["devices"] = sorted(h.device.value for h in hcas)
    if ethernet:
        put(ib, "exclude_hcas", sorted(set(ethernet)), "infiniband.tsv link_layer Ethernet")
    draft.data["infiniband"] = ib
    draft.cite("infiniband", key)
    return hcas


def _hca_name(col: Collection, hcas: list[Hca]) -> tuple[str, str | None, str]:
    """The HCA model: lspci's bracketed name, else the PCI device id's name in pci.ids."""
    rows = {row["bdf"].value: row for row in col.get("pci-devices.tsv") or []}
    names = col.get("lspci.txt") or {}
    for hca in hcas:
        bdf = hca.bdf.value if hca.bdf else None
        row = rows.get(bdf or "")
        device = row["device"].value.removeprefix("0x") if row and row.get("device") else None
        if bdf in names and names[bdf].value.bracketed:
            col.use("lspci.txt")
            return names[bdf].value.bracketed, device, names[bdf].origin
        if device in HCA_OF_DEVICE and row is not None:
            col.use("pci-devices.tsv")
            return HCA_OF_DEVICE[device], device, f"{row['device'].origin} 15b3:{device} (pci.ids)"
    return "unknown (not in the collection)", None, "neither lspci nor a known PCI device id names it"


def _ethernet(col: Collection, draft: Draft) -> None:
    rows = col.get("net.tsv")
    if rows is None:
        return
    for row in rows:
        iface = row["iface"].value
        if row.get("bdf") and row.get("operstate") and row["operstate"].value == "up" and not iface.startswith("ib"):
            put(draft.data, "ethernet_interface", iface, f"{row['iface'].origin} {iface} (up, on {row['bdf'].value})")
            draft.cite("ethernet_interface", col.use("net.tsv"))
            return
    draft.notes.append("ethernet_interface: no interface that is up and backed by a device; left at the default")


# --------------------------------------------------------------------------- topology (bus ids, NUMA)

def _topology_block(col: Collection, draft: Draft, report: SmiReport, hcas: list[Hca]) -> None:
    """GPU and HCA bus ids by NUMA node, when the files establish the layout (flat: no PCIe switch
    shared by a GPU and a NIC). No topo_family is set, so no NCCL_TOPO_FILE is written from it: on a
    node it owns NCCL reads the real topology; the bus ids serve CPU binding (Slurm) and checks."""
    fields, lscpu_name = _lscpu(col)
    why = _topology_blocker(col, fields, report)
    if why is not None:
        draft.notes.append(f"topology: {why}; left out (NCCL auto-detects)")
        return
    assert fields is not None and lscpu_name is not None
    rows = {row["bdf"].value: row for row in col.get("pci-devices.tsv") or []}
    numa_ids = sorted(n for n, fact in (_numa_nodes(col) or ({}, ""))[0].items() if fact.value)
    placement: dict[int, tuple[list[str], list[str]]] = {}
    for busid, kind in [(g.busid.value, "gpus") for g in report.gpus] + [(h.bdf.value, "hcas") for h in hcas if h.bdf]:
        node = _numa_of(rows.get(busid), numa_ids)
        if node is None:
            draft.notes.append(f"topology: the NUMA node of {busid} is not established; left out (NCCL auto-detects)")
            return
        placement.setdefault(node, ([], []))[0 if kind == "gpus" else 1].append(busid)
        if not _numa_known(rows.get(busid)):
            draft.notes.append(f"topology: sysfs gives {busid} no NUMA node (-1); placed on node {node}, the only one")
    if len([h for h in hcas if h.bdf]) != len(hcas):
        draft.notes.append("topology: an HCA's PCI address is unknown; left out (NCCL auto-detects)")
        return
    gpu_rows = [rows[g.busid.value] for g in report.gpus]
    speed, width = _link(gpu_rows, report)
    topo = CommentedMap()
    cpu = CommentedMap()
    cpu.fa.set_flow_style()
    cpu["arch"] = "x86_64"
    cpu["vendor"] = fields["Vendor ID"].value
    cpu["familyid"] = int(fields["CPU family"].value)
    cpu["modelid"] = int(fields["Model"].value)
    put(topo, "cpu", cpu, fields["Vendor ID"], fields["CPU family"], fields["Model"])
    put(topo, "link_speed", speed[0], speed[1])
    put(topo, "link_width", width[0], width[1])
    seq = CommentedSeq()
    for node, (gpus, node_hcas) in sorted(placement.items()):
        entry = CommentedMap()
        entry.fa.set_flow_style()
        entry["numaid"] = node
        entry["gpus"] = sorted(gpus)
        if node_hcas:
            entry["hcas"] = sorted(node_hcas)
        seq.append(entry)
        seq.yaml_add_eol_comment("from pci-devices.tsv bdf, numa_node", len(seq) - 1)
    topo["numa"] = seq
    draft.data["topology"] = topo
    draft.cite("topology", col.use("pci-devices.tsv"), col.use(lscpu_name), col.use("nvidia-smi-q.xml"))


def _topology_blocker(col: Collection, fields: dict[str, Fact[str]] | None, report: SmiReport) -> str | None:
    if fields is None or not all(k in fields for k in ("Vendor ID", "CPU family", "Model")):
        return "lscpu (vendor, family, model) was not collected"
    if fields["Vendor ID"].value not in ("GenuineIntel", "AuthenticAMD") or _ARCH.get(fields["Architecture"].value) != "x86_64":
        return f"the CPU ({fields['Architecture'].value}, {fields['Vendor ID'].value}) is not an x86_64 one the topology model describes"
    if not fields["CPU family"].value.isdigit() or not fields["Model"].value.isdigit():
        return "lscpu's CPU family / Model are not numbers"
    rows = {row["bdf"].value for row in col.get("pci-devices.tsv") or []}
    if not all(g.busid.value in rows for g in report.gpus):
        return "pci-devices.tsv (sysfs NUMA node and link of each GPU) was not collected"
    matrix = col.get("nvidia-smi-topo.txt")
    if matrix is None:
        return "nvidia-smi topo -m was not collected, so PCIe switches shared by GPUs and NICs are unknown"
    shared = sorted({f"{g}-{n}" for g in matrix.gpus for n in matrix.nics if matrix.links.get((g, n)) in ("PIX", "PXB")})
    if shared:
        return (f"GPUs and NICs share PCIe switches ({', '.join(shared[:4])}{'...' if len(shared) > 4 else ''} "
                "PIX/PXB in nvidia-smi topo -m), a layout the flat topology would misstate")
    return None


def _numa_known(row: dict[str, Fact[str]] | None) -> bool:
    return bool(row and row.get("numa_node") and row["numa_node"].value.isdigit())


def _numa_of(row: dict[str, Fact[str]] | None, numa_ids: list[int]) -> int | None:
    value = row["numa_node"].value if row and row.get("numa_node") else None
    if value is not None and value.isdigit() and int(value) in numa_ids:
        return int(value)
    if len(numa_ids) == 1:  # -1 (the platform gives no NUMA info) on a single-node guest: that node
        return numa_ids[0]
    return None


def _link(rows: Iterable[dict[str, Fact[str]]], report: SmiReport) -> tuple[tuple[str, str], tuple[int, str]]:
    rows = list(rows)
    speeds = {r["max_link_speed"].value for r in rows if r.get("max_link_speed")}
    widths = {r["max_link_width"].value for r in rows if r.get("max_link_width")}
    if len(speeds) == 1 and speeds <= set(NCCL_PCI_LINK_SPEEDS) and len(widths) == 1 and widths <= {"1", "2", "4", "8", "16", "32"}:
        return (speeds.pop(), rows[0]["max_link_speed"].origin), (int(widths.pop()), rows[0]["max_link_width"].origin)
    gpu = report.gpus[0]
    gen = gpu.max_link_gen.value if gpu.max_link_gen else 0
    return ((_PCIE_GEN_SPEED.get(gen, "16.0 GT/s PCIe"), gpu.max_link_gen.origin if gpu.max_link_gen else "assumed"),
            (gpu.max_link_width.value if gpu.max_link_width else 16, gpu.max_link_width.origin if gpu.max_link_width else "assumed"))


# --------------------------------------------------------------------------- sources

def _imds(col: Collection) -> dict[str, Any] | None:
    if not col.status("azure-imds.json").startswith("ok"):
        return None
    text = col.text("azure-imds.json")
    if text is None:
        return None
    col.imds_text = text
    try:  # NaN/Infinity are not JSON; a 4,300-digit number raises ValueError: both mean "not IMDS"
        data = json.loads(text, parse_constant=_not_json)
    except ValueError:
        return None
    return data if isinstance(data, dict) and "vmSize" in data else None


def _not_json(constant: str) -> None:
    raise ValueError(f"{constant} is not JSON")


def _provenance(col: Collection, draft: Draft, imds: dict[str, Any] | None) -> None:
    meta = col.get("meta.txt") or {}
    when = meta["date"].value if "date" in meta else "an unrecorded date"
    report = col.get("nvidia-smi-q.xml")
    driver = f", NVIDIA driver {report.driver_version.value}" if report and report.driver_version else ""
    sources = CommentedMap()
    for name in sorted(col.used):
        what = PARSERS[name][1] if name in PARSERS else "NCCL's topology dump (NCCL_TOPO_DUMP_FILE)"
        sources[col.use(name)] = f"{what}: {name}, collected {when}{driver}"
    if imds and isinstance(imds.get("vmSize"), str):
        sources["azure_imds"] = f"Azure instance metadata compute.vmSize {imds['vmSize']} (azure-imds.json), {when}"
        draft.cite("name", "azure_imds")
    draft.data["sources"] = sources
    draft.data["cites"] = {k: v for k, v in draft.cites.items()}
    if draft.notes:
        draft.data["notes"] = draft.notes
