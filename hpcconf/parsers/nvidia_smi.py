"""``nvidia-smi -q -x`` (the XML report) and ``nvidia-smi --query-gpu=... --format=csv``.

The XML report's ``<gpu>`` elements hold what a SKU needs: the product name and architecture, the
frame buffer size (``fb_memory_usage/total``, "143771 MiB"), the PCI bus id and ids
(``pci_device_id`` "233510DE" is device 0x2335 of vendor 0x10de), and the PCIe link generation and
width. The CSV query adds the CUDA compute capability (``compute_cap``, driver 510+), which the XML
report does not carry.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from typing import Any

from .node_common import RECOLLECT, Fact, malformed

_XML_BUSID = re.compile(r"^([0-9A-Fa-f]{4,8}):([0-9A-Fa-f]{2}):([0-9A-Fa-f]{2})\.([0-7])$")
_MIB = re.compile(r"^(\d+)\s*MiB$")
_PCI_ID = re.compile(r"^(?:0x)?([0-9A-Fa-f]{4})([0-9A-Fa-f]{4})$")  # DDDDVVVV: device, then vendor


def normal_busid(text: str) -> str | None:
    """``00000000:19:00.0`` (nvidia-smi, 8-digit domain) -> ``0000:19:00.0`` (sysfs, NCCL); None if not a bus id."""
    match = _XML_BUSID.match(text.strip())
    if match is None or int(match.group(1), 16) > 0xFFFF:
        return None
    domain, bus, dev, fn = match.groups()
    return f"{int(domain, 16):04x}:{bus.lower()}:{dev.lower()}.{fn}"


@dataclass(frozen=True)
class SmiGpu:
    """One ``<gpu>`` of the XML report."""

    busid: Fact[str]
    product_name: Fact[str]
    architecture: Fact[str] | None
    memory_mib: Fact[int]
    pci_vendor: Fact[str] | None  # "0x10de"
    pci_device: Fact[str] | None  # "0x2335"
    pci_subsystem_device: Fact[str] | None  # "0x18bf"
    max_link_gen: Fact[int] | None
    max_link_width: Fact[int] | None


@dataclass(frozen=True)
class SmiReport:
    driver_version: Fact[str] | None
    cuda_version: Fact[str] | None
    gpus: list[SmiGpu]


def parse_query_xml(text: str, path: str) -> SmiReport:
    """Parse ``nvidia-smi -q -x``; HPC330 at file:line when it is not that report."""
    from lxml import etree

    try:
        # no_network/resolve_entities off: the report names a DTD we neither have nor need.
        parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False)
        root = etree.fromstring(text.encode("utf-8"), parser)
    except etree.XMLSyntaxError as exc:
        malformed(path, exc.lineno, f"not well-formed XML: {exc.msg}", RECOLLECT)
    if root.tag != "nvidia_smi_log":
        malformed(path, root.sourceline, f"root element is <{root.tag}>, not <nvidia_smi_log> (nvidia-smi -q -x)", RECOLLECT)
    gpus = [_gpu(element, path) for element in root.findall("gpu")]
    attached = root.find("attached_gpus")
    if attached is not None and (attached.text or "").strip().isdigit() and int((attached.text or "").strip()) != len(gpus):
        malformed(path, attached.sourceline, f"attached_gpus says {attached.text.strip() if attached.text else ''} "
                  f"but the report has {len(gpus)} <gpu> elements (a truncated file?)", RECOLLECT)
    return SmiReport(driver_version=_text(root, "driver_version", path), cuda_version=_text(root, "cuda_version", path),
                     gpus=gpus)


def _text(parent: Any, tag: str, path: str) -> Fact[str] | None:
    element = parent.find(tag)
    if element is None:
        return None
    value = (element.text or "").strip()
    if not value or value == "N/A":
        return None
    return Fact(value, path.rsplit("/", 1)[-1], element.sourceline, tag)


def _gpu(element: Any, path: str) -> SmiGpu:
    name = path.rsplit("/", 1)[-1]
    busid_text = _text(element, "pci/pci_bus_id", path) or (
        Fact(element.get("id"), name, element.sourceline, "gpu id") if element.get("id") else None)
    if busid_text is None:
        malformed(path, element.sourceline, "a <gpu> without pci/pci_bus_id or an id attribute", RECOLLECT)
    busid = normal_busid(busid_text.value)
    if busid is None:
        malformed(path, busid_text.line, f"{busid_text.value!r} is not a PCI bus id (dddddddd:bb:dd.f)", RECOLLECT)
    product = _text(element, "product_name", path)
    if product is None:
        malformed(path, element.sourceline, f"GPU {busid} has no product_name", RECOLLECT)
    memory = _text(element, "fb_memory_usage/total", path)
    mib = _MIB.match(memory.value) if memory else None
    if memory is None or mib is None:
        malformed(path, memory.line if memory else element.sourceline,
                  f"GPU {busid}: fb_memory_usage/total is {memory.value if memory else 'missing'!r}, not 'N MiB'", RECOLLECT)
    vendor, device = _pci_id(_text(element, "pci/pci_device_id", path), path)
    _, subsystem = _pci_id(_text(element, "pci/pci_sub_system_id", path), path)
    return SmiGpu(
        busid=Fact(busid, busid_text.file, busid_text.line, busid_text.what), product_name=product,
        architecture=_text(element, "product_architecture", path),
        memory_mib=Fact(int(mib.group(1)), memory.file, memory.line, memory.what),
        pci_vendor=vendor, pci_device=device, pci_subsystem_device=subsystem,
        max_link_gen=_int(_text(element, "pci/pci_gpu_link_info/pcie_gen/max_link_gen", path), path),
        max_link_width=_int(_text(element, "pci/pci_gpu_link_info/link_widths/max_link_width", path), path))


def _pci_id(fact: Fact[str] | None, path: str) -> tuple[Fact[str] | None, Fact[str] | None]:
    """``233510DE`` -> (vendor 0x10de, device 0x2335)."""
    if fact is None:
        return None, None
    match = _PCI_ID.match(fact.value)
    if match is None:
        malformed(path, fact.line, f"{fact.what} {fact.value!r} is not 8 hex digits (device id, then vendor id)", RECOLLECT)
    device, vendor = match.group(1).lower(), match.group(2).lower()
    return (Fact(f"0x{vendor}", fact.file, fact.line, f"{fact.what} (vendor half)"),
            Fact(f"0x{device}", fact.file, fact.line, f"{fact.what} (device half)"))


def _int(fact: Fact[str] | None, path: str) -> Fact[int] | None:
    """``16x`` / ``5`` -> 16 / 5."""
    if fact is None:
        return None
    digits = fact.value.rstrip("xX").strip()
    if not digits.isdigit():
        malformed(path, fact.line, f"{fact.what} {fact.value!r} is not a number", RECOLLECT)
    return Fact(int(digits), fact.file, fact.line, fact.what)


# --------------------------------------------------------------------------- --query-gpu CSV

@dataclass(frozen=True)
class QueryRow:
    """One GPU's row of the CSV query, by column name as nvidia-smi prints it (``memory.total [MiB]``)."""

    line: int
    values: dict[str, str]

    def get(self, column: str) -> str | None:
        """The value of ``column`` (units in brackets ignored), None when absent or "[N/A]"."""
        for key, value in self.values.items():
            if key.split(" [", 1)[0] == column:
                return None if value in ("[N/A]", "N/A", "[Not Supported]", "") else value
        return None


def parse_query_csv(text: str, path: str) -> list[QueryRow]:
    """Parse ``nvidia-smi --query-gpu=... --format=csv`` (with its header line)."""
    lines = [line for line in text.splitlines()]
    if not lines or not lines[0].strip():
        malformed(path, 1, "empty: no header line", RECOLLECT)
    reader = csv.reader(io.StringIO(text), skipinitialspace=True)
    header = [column.strip() for column in next(reader)]
    if not header or header[0] != "index" and "pci.bus_id" not in header:
        malformed(path, 1, f"the header {', '.join(header)!r} is not a --query-gpu CSV header (index, pci.bus_id, ...)",
                  RECOLLECT)
    rows = []
    for number, fields in enumerate(reader, start=2):
        if not fields:
            continue
        if len(fields) != len(header):
            malformed(path, number, f"{len(fields)} values for {len(header)} columns", RECOLLECT)
        rows.append(QueryRow(number, dict(zip(header, (value.strip() for value in fields)))))
    return rows
