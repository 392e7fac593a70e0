"""``nvidia-smi topo -m`` (the GPU/NIC connection matrix) and ``nvidia-smi nvlink -s`` (NVLink status).

``topo -m`` prints a tab-separated matrix: a header row of device names (GPU0.., NIC0..) followed by
"CPU Affinity", "NUMA Affinity" and, on newer drivers, "GPU NUMA ID"; one row per device whose cells
are the connection types (X, NV#, PIX, PXB, PHB, NODE, SYS); then a legend and, when NICs exist, a
"NIC Legend" naming each NIC (``NIC0: mlx5_0``). Some drivers underline the header with ANSI escape
codes and pad empty columns with extra tabs; both are tolerated.

``nvlink -s`` prints ``GPU n: <name> (UUID: ...)`` followed by ``Link k: 26.562 GB/s`` per link, or
``Link k: <inactive>``; a GPU without NVLink prints nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .node_common import RECOLLECT, malformed

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_DEVICE = re.compile(r"^(GPU|NIC|mlx5_\S+)\d*$")
_CONNECTION = re.compile(r"^(X|NV\d+|NVB|PIX|PXB|PHB|NODE|SYS|SOC|N/A)$")
_NIC_NAME = re.compile(r"^\s*(NIC\d+):\s*(\S+)\s*$")


@dataclass
class TopoMatrix:
    devices: list[str]  # column order: GPU0, GPU1, NIC0, ...
    links: dict[tuple[str, str], str]  # (row device, column device) -> X / NV18 / PIX / ...
    affinity: dict[str, dict[str, str]]  # device -> {"CPU Affinity": "0-47", "NUMA Affinity": "0", ...}
    lines: dict[str, int]  # device -> its row's line number
    nic_names: dict[str, str] = field(default_factory=dict)  # NIC0 -> mlx5_0

    @property
    def gpus(self) -> list[str]:
        return [d for d in self.devices if d.startswith("GPU")]

    @property
    def nics(self) -> list[str]:
        return [d for d in self.devices if not d.startswith("GPU")]

    def nvlinks(self, gpu: str) -> dict[str, int]:
        """The GPUs ``gpu`` reaches over NVLink, with the number of bonded links (NV18 -> 18)."""
        out = {}
        for other in self.gpus:
            kind = self.links.get((gpu, other), "")
            if kind.startswith("NV") and kind[2:].isdigit():
                out[other] = int(kind[2:])
        return out


def parse_topo_matrix(text: str, path: str) -> TopoMatrix:
    lines = [_ANSI.sub("", line).rstrip("\n") for line in text.splitlines()]
    header_at = next((i for i, line in enumerate(lines) if line.startswith("\t") and "GPU0" in line), None)
    if header_at is None:
        malformed(path, 1, "no header row naming GPU0 (is this `nvidia-smi topo -m` output?)", RECOLLECT)
    header = [cell.strip() for cell in lines[header_at].split("\t")[1:]]
    devices = [cell for cell in header if _DEVICE.match(cell)]
    extras = [cell for cell in header[len(devices):] if cell]
    matrix = TopoMatrix(devices=devices, links={}, affinity={}, lines={})
    for index in range(header_at + 1, len(lines)):
        line = lines[index]
        if not line.strip():
            break  # the legend follows an empty line
        cells = line.split("\t")
        name = cells[0].strip()
        if name not in devices:
            malformed(path, index + 1, f"row {name!r} is not one of the header's devices ({', '.join(devices)})", RECOLLECT)
        values = [cell.strip() for cell in cells[1:1 + len(devices)]]
        if len(values) != len(devices) or not all(_CONNECTION.match(value) for value in values):
            malformed(path, index + 1, f"row {name}: expected {len(devices)} connection types (X, NV#, PIX, PXB, PHB, "
                      f"NODE, SYS), got {values!r}", RECOLLECT)
        for column, value in zip(devices, values):
            matrix.links[(name, column)] = value
        rest = [cell.strip() for cell in cells[1 + len(devices):] if cell.strip()]
        matrix.affinity[name] = dict(zip(extras, rest))
        matrix.lines[name] = index + 1
    for line in lines:
        match = _NIC_NAME.match(line)
        if match:
            matrix.nic_names[match.group(1)] = match.group(2)
    missing = [d for d in devices if d not in matrix.lines]
    if missing:
        malformed(path, header_at + 1, f"the header names {', '.join(missing)} but no row follows for it", RECOLLECT)
    return matrix


# --------------------------------------------------------------------------- nvlink -s

_GPU_LINE = re.compile(r"^GPU (\d+):")
_LINK_LINE = re.compile(r"^\s*Link (\d+):\s*(.*?)\s*$")
_SPEED = re.compile(r"^(\d+(?:\.\d+)?) GB/s$")


@dataclass
class NvlinkStatus:
    """Per GPU index: link number -> GB/s (None: inactive), and the line each GPU starts on."""

    links: dict[int, dict[int, float | None]]
    lines: dict[int, int]

    def active(self, gpu: int) -> int:
        return sum(1 for speed in self.links.get(gpu, {}).values() if speed)


def parse_nvlink_status(text: str, path: str) -> NvlinkStatus:
    status = NvlinkStatus(links={}, lines={})
    current: int | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        gpu = _GPU_LINE.match(line)
        if gpu:
            current = int(gpu.group(1))
            status.links[current] = {}
            status.lines[current] = number
            continue
        link = _LINK_LINE.match(line)
        if link is None or current is None:
            malformed(path, number, f"expected 'GPU n: ...' or 'Link k: ...', got {line.strip()!r}", RECOLLECT)
        speed = _SPEED.match(link.group(2))
        status.links[current][int(link.group(1))] = float(speed.group(1)) if speed else None
    return status
