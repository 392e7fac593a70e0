"""One collected directory: its files, read on demand through the matching parser.

A file the collection log marks missing/failed, or that is absent or empty, reads as None: the
importer then leaves the facts it would have given out (and says so) rather than guessing.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ..diagnostics import Diagnostic, HpcconfError
from ..parsers import ibstat, lscpu, lspci, node_files, numactl, nvidia_smi, nvidia_topo
from ..parsers.node_common import Fact

# file name -> (parser, what it is): the files collect.sh writes.
PARSERS: dict[str, tuple[Callable[[str, str], Any], str]] = {
    "nvidia-smi-q.xml": (nvidia_smi.parse_query_xml, "nvidia-smi -q -x"),
    "nvidia-smi-query.csv": (nvidia_smi.parse_query_csv, "nvidia-smi --query-gpu=... --format=csv"),
    "nvidia-smi-topo.txt": (nvidia_topo.parse_topo_matrix, "nvidia-smi topo -m"),
    "nvidia-smi-nvlink.txt": (nvidia_topo.parse_nvlink_status, "nvidia-smi nvlink -s"),
    "lscpu.txt": (lscpu.parse_lscpu_text, "lscpu"),
    "lscpu.json": (lscpu.parse_lscpu_json, "lscpu -J"),
    "numactl-H.txt": (numactl.parse_numactl, "numactl -H"),
    "numa-nodes.tsv": (node_files.parse_numa_nodes, "/sys/devices/system/node/node*/cpulist"),
    "meminfo.txt": (node_files.parse_meminfo, "/proc/meminfo"),
    "meta.txt": (node_files.parse_meta, "uname, nproc, /etc/os-release, DMI product name"),
    "ibstat.txt": (ibstat.parse_ibstat, "ibstat"),
    "lspci.txt": (lspci.parse_lspci_names, "lspci -D -nn -vvv"),
    "pci-devices.tsv": (lambda text, path: node_files.parse_tsv(text, path, ("bdf", "class", "vendor", "device")),
                        "/sys/bus/pci/devices/* (GPU, network, bridge classes)"),
    "infiniband.tsv": (lambda text, path: node_files.parse_tsv(text, path, ("device", "port", "rate", "link_layer")),
                       "/sys/class/infiniband/*/ports/*"),
    "net.tsv": (lambda text, path: node_files.parse_tsv(text, path, ("iface", "operstate", "bdf")), "/sys/class/net/*"),
}


KNOWN_FILES = (*PARSERS, "collect.log", "azure-imds.json", "nccl-topo.xml")


@dataclass
class Collection:
    directory: Path
    log: dict[str, Fact[str]] = field(default_factory=dict)
    _cache: dict[str, Any] = field(default_factory=dict)
    used: set[str] = field(default_factory=set)  # files a fact was read from (for sources:)

    imds_text: str | None = None

    @classmethod
    def open(cls, directory: Path) -> "Collection":
        from ..safe_io import check_file, read_text

        if not directory.is_dir():
            raise HpcconfError([Diagnostic(
                code="HPC331", name="node-facts-missing",
                message=f"{directory} is not a directory of collected node facts",
                hint="Run `hpcconf sku collect-script > collect.sh; bash collect.sh DIR` on the node, copy DIR here.")
                .at(str(directory), None, None)])
        for name in KNOWN_FILES:  # refused before any is read: a fifo, a device, a link out of the directory
            if os.path.lexists(directory / name):
                check_file(directory / name, tree=directory)
        log_path = directory / "collect.log"
        log = node_files.parse_collect_log(read_text(log_path, "node", tree=directory), str(log_path)) \
            if log_path.is_file() else {}
        return cls(directory, log)

    def text(self, name: str) -> str | None:
        """The file's text through the safe reader (a stray byte kept as U+FFFD), None when absent."""
        from ..safe_io import read_bytes

        file = self.directory / name
        if not file.is_file():
            return None
        return read_bytes(file, "node", tree=self.directory).decode("utf-8", errors="replace")

    def path(self, name: str) -> str:
        return str(self.directory / name)

    def status(self, name: str) -> str:
        """ok / missing / failed rc=N / unreachable / skipped / absent (not in the log, no file)."""
        if name in self.log:
            return self.log[name].value
        return "ok" if (self.directory / name).is_file() else "absent"

    def get(self, name: str) -> Any:
        """The parsed file, or None when it was not collected (or is empty)."""
        if name not in self._cache:
            self._cache[name] = self._read(name)
        return self._cache[name]

    def _read(self, name: str) -> Any:
        file = self.directory / name
        if not file.is_file() or not self.status(name).startswith("ok"):
            return None
        text = self.text(name) or ""
        if not text.strip() and name != "nvidia-smi-nvlink.txt":  # an empty nvlink -s means: no NVLink
            return None
        parser, _ = PARSERS[name]
        return parser(text, str(file))

    def use(self, name: str) -> str:
        """Mark ``name`` as a source of the SKU and return its sources: key."""
        self.used.add(name)
        return source_key(name)


def source_key(name: str) -> str:
    """``nvidia-smi-q.xml`` -> ``nvidia_smi_q``."""
    stem = name.rsplit(".", 1)[0]
    return "".join(c if c.isalnum() else "_" for c in stem).strip("_")
