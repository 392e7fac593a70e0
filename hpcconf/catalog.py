"""The GPU VM SKU catalog: one strict model per SKU, loaded from ``skus/<name>.yaml``.

Every fact a generator needs about a VM size (GPUs, NVLink, InfiniBand HCAs, guest NUMA layout,
Azure image NCCL defaults, the PCI topology NCCL should be told about, reference bandwidths)
lives here, with the sources it came from. Users can add or override SKUs with their own
directory of YAML files (``Catalog.load(extra_dirs=...)``).
"""

from __future__ import annotations

import datetime as _dt
import difflib
import re
from pathlib import Path
from typing import Annotated, Any, Iterator, Literal, Sequence

from pydantic import BaseModel, ConfigDict, Field, ValidationError, WithJsonSchema, field_validator, model_validator

from .catalog_errors import UnknownSku as UnknownSku  # defined apart so its catchers need no pydantic
from .catalog_errors import sku_dir_problem as sku_dir_problem  # likewise: `lint` checks --sku-dir first
from .catalog_index import default_sku_dir as default_sku_dir  # the index of package SKU files, without the models
from .catalog_index import package_entries
from .catalog_index import sku_files as _sku_files
from .diagnostics import Diagnostic, HpcconfError
from .knowledge.accelerators import profiles as accelerator_profiles
from .yamlpos import YamlDocument, fast_load, load_document

# NCCL maps <pci link_speed> to a per-lane rate by prefix match (NVIDIA/nccl src/graph/xml.h kvDictPciGen,
# src/graph/xml.cc); any other value, "" included, silently falls back to 6 Gb/s per lane.
# Value: per-lane rate in units of 100 Mb/s, as NCCL stores it (PCI bandwidth = width * rate / 80 GB/s).
NCCL_PCI_LINK_SPEEDS: dict[str, int] = {
    "2.5 GT/s": 15, "5 GT/s": 30, "8 GT/s": 60, "16 GT/s": 120, "32 GT/s": 240,
    "2.5 GT/s PCIe": 15, "5.0 GT/s PCIe": 30, "8.0 GT/s PCIe": 60, "16.0 GT/s PCIe": 120,
    "32.0 GT/s PCIe": 240, "64.0 GT/s PCIe": 480,
}
NCCL_PCI_FALLBACK_RATE = 60  # what "" (or any unknown string) becomes

_BUSID = r"^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$"  # NCCL prints bus ids in lower case
_HEXCLASS = r"^0x[0-9a-f]{6}$"
_HEX4 = r"^0x[0-9a-f]{4}$"


class _Strict(BaseModel):
    # allow_inf_nan=False: `.nan` or `.inf` as a bandwidth would judge every run and print invalid JSON
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


# --------------------------------------------------------------------------- hardware facts

# The collective library a profile's GPUs run (data/accelerators.yaml collective_library, lower-cased): the schema
# lists the table's; the validator below holds each GPU to its vendor's.
Collective = Annotated[str, WithJsonSchema({"enum": list(dict.fromkeys(p.collective for p in accelerator_profiles().values())),
                                            "type": "string"})]
CpuArch = Literal["x86_64", "arm64"]


class Gpu(_Strict):
    # a row of data/accelerators.yaml (checked below; the schema lists the rows for editors)
    vendor: str = Field(default="nvidia", json_schema_extra={"enum": list(accelerator_profiles())})
    model: str
    count: int = Field(ge=1)  # GPUs per VM / node
    memory_gb: int = Field(ge=1)  # per GPU
    # CUDA compute capability x10 (70 V100, 80 A100, 90 H100/H200, 100 B200/GB200); NVIDIA only.
    sm: int | None = Field(default=None, ge=30)
    collective: Collective | None = None  # derived from vendor when omitted: its profile's library
    pci_device: str | None = Field(default=None, pattern=_HEX4)  # e.g. "0x20b5" (A100 PCIe 80GB)
    pci_vendor: str | None = Field(default=None, pattern=_HEX4)  # derived from vendor when omitted
    pci_subsystem_device: str | None = Field(default=None, pattern=_HEX4)

    @model_validator(mode="before")
    @classmethod
    def _vendor_defaults(cls, data: Any) -> Any:
        if isinstance(data, dict):
            vendor = data.get("vendor", "nvidia")
            profile = accelerator_profiles().get(vendor) if isinstance(vendor, str) else None
            if profile:  # the collective library its GPUs run and the PCI vendor id they report
                data = {**data}
                data.setdefault("collective", profile.collective)
                data.setdefault("pci_vendor", profile.pci_vendor)
        return data

    @field_validator("vendor")
    @classmethod
    def _known_vendor(cls, vendor: str) -> str:
        known = accelerator_profiles()
        if vendor not in known:
            raise ValueError(f"unknown GPU vendor {vendor!r}: one of {', '.join(sorted(known))} (data/accelerators.yaml)")
        return vendor

    @property
    def pci_vendor_id(self) -> str:
        """The GPU's PCI vendor id: the file's, else its vendor's (the validator makes them agree)."""
        return self.pci_vendor or accelerator_profiles()[self.vendor].pci_vendor

    @model_validator(mode="after")
    def _consistent(self) -> "Gpu":
        profile = accelerator_profiles()[self.vendor]
        if self.collective != profile.collective:
            raise ValueError(f"collective {self.collective!r} does not run on {self.vendor} GPUs "
                             f"(use {profile.collective!r})")
        if self.pci_vendor != profile.pci_vendor:
            raise ValueError(f"pci_vendor {self.pci_vendor} is not {self.vendor}'s ({profile.pci_vendor})")
        if profile.cuda_compute_capability and self.sm is None:
            raise ValueError("an NVIDIA GPU needs sm (CUDA compute capability x10, e.g. 90 for H100)")
        if not profile.cuda_compute_capability and self.sm is not None:
            raise ValueError("sm is a CUDA compute capability: only NVIDIA GPUs have one")
        return self


class Cpu(_Strict):
    """The host CPU the guest sees: its architecture decides which binaries and images can run."""
    arch: CpuArch = "x86_64"
    vendor: str | None = None  # "Intel", "AMD", "NVIDIA" (Grace)
    model: str | None = None  # "Xeon Platinum 8480C", "EPYC 7V13", "Grace"
    sockets: int | None = Field(default=None, ge=1)


class Lifecycle(_Strict):
    """Whether the size can still be deployed: the provider's announcement, with its date."""
    status: Literal["available", "retiring", "retired"] = "available"
    date: _dt.date | None = None  # the retirement date (announced for retiring, past for retired)
    replacement: str | None = None  # what the provider recommends instead
    source: str | None = None  # the announcement (a URL)

    @model_validator(mode="after")
    def _consistent(self) -> "Lifecycle":
        if self.status == "available" and self.date is not None:
            raise ValueError("an available size has no retirement date; use status: retiring")
        if self.status != "available" and (self.date is None or not self.source):
            raise ValueError(f"status {self.status} needs the date and the source that announced it")
        return self

    def effective_status(self, today: _dt.date | None = None) -> str:
        """retiring becomes retired once its date has passed."""
        if self.status == "retiring" and self.date is not None and self.date <= (today or _dt.date.today()):
            return "retired"
        return self.status


class NvLink(_Strict):
    present: bool
    nvswitch: bool = False
    # NVLink SHARP (NVSwitch gen 3+): enables NCCL's NVLS / NVLSTree algorithms. None: the SKU's file does not
    # state it (unknown, not absent: the bandwidth ceiling assumes it, hpcconf.knowledge.nccl_bounds.nvls_possible;
    # NCCL014 says the fact is missing instead of reporting a failure).
    nvls: bool | None = None
    # GPUs in one NVLink domain: the VM's GPUs on an HGX board (8), the whole rack on NVL72 (72,
    # spanning 18 VMs of 4 GPUs). None: the VM's GPUs (present) or none (not present).
    domain_gpus: int | None = Field(default=None, ge=2)
    description: str

    @model_validator(mode="after")
    def _consistent(self) -> "NvLink":
        if self.nvswitch and not self.present:
            raise ValueError("nvswitch: true needs present: true")
        if self.domain_gpus is not None and not self.present:
            raise ValueError("domain_gpus needs present: true")
        if self.nvls and not self.nvswitch:
            raise ValueError("nvls: true needs nvswitch: true (NVLS runs on NVSwitch)")
        return self


class Infiniband(_Strict):
    count: int = Field(ge=1)
    rate: Literal["FDR", "EDR", "HDR", "NDR", "XDR"]
    gbps: int = Field(ge=1)  # per port
    hca: str  # "ConnectX-6 VF"
    pci_vendor: str = Field(default="15b3", pattern=r"^[0-9a-f]{4}$")
    pci_device: str | None = Field(default=None, pattern=r"^[0-9a-f]{4}$")  # "101c" CX-6 VF, "101e" mlx5Gen VF
    devices: list[str] = []  # names NCCL_IB_HCA / ibv_devices see, e.g. mlx5_ib0..7
    exclude_hcas: list[str] = []  # Mellanox devices that are NOT the IB fabric (Ethernet VF)


class NumaNode(_Strict):
    id: int = Field(ge=0)
    cpus: str  # Linux cpulist, guest view, e.g. "0-23"

    @field_validator("cpus")
    @classmethod
    def _cpulist(cls, value: str) -> str:
        parse_cpulist(value)
        return value

    def cpu_set(self) -> list[int]:
        return parse_cpulist(self.cpus)

    def cpu_mask(self) -> int:
        """The node's CPUs as a bit mask (bit n = CPU n), e.g. for Slurm --cpu-bind=mask_cpu."""
        return sum(1 << cpu for cpu in self.cpu_set())


# --------------------------------------------------------------------------- NCCL facts

class NcclDefaults(_Strict):
    conf: dict[str, str] = {}  # /etc/nccl.conf entries other than NCCL_TOPO_FILE / NCCL_GRAPH_FILE
    topo_family: str | None = None  # azhpc-images family dir ("ndv4"); None: no topo file wanted
    graph: bool = False  # ship NCCL_GRAPH_FILE too (only NC96ads_A100_v4)
    image_dir: str | None = None  # where the provider image installs topo.xml/graph.xml
    algo: str | None = None  # NCCL_ALGO the provider recommends (mirrors conf["NCCL_ALGO"])
    vendor_topo_file: str | None = None  # a topo file only the provider's image has (Crusoe)

    @model_validator(mode="after")
    def _consistent(self) -> "NcclDefaults":
        for key in ("NCCL_TOPO_FILE", "NCCL_GRAPH_FILE"):
            if key in self.conf:
                raise ValueError(f"{key} is derived (topo_family/image_dir/vendor_topo_file); remove it from conf")
        if self.conf.get("NCCL_ALGO") != self.algo:
            raise ValueError("algo must equal conf['NCCL_ALGO'] (both absent, or the same value)")
        if self.graph and not self.topo_family:
            raise ValueError("graph: true needs a topo_family (a graph file is only valid with its topology)")
        if self.topo_family and not self.image_dir:
            raise ValueError("topo_family needs image_dir (where the image installs topo.xml)")
        return self

    def image_conf(self) -> dict[str, str]:
        """The /etc/nccl.conf the provider image writes: conf plus the topo/graph file paths."""
        out = dict(self.conf)
        if self.topo_family and self.image_dir:
            out["NCCL_TOPO_FILE"] = f"{self.image_dir}/topo.xml"
            if self.graph:
                out["NCCL_GRAPH_FILE"] = f"{self.image_dir}/graph.xml"
        elif self.vendor_topo_file:
            out["NCCL_TOPO_FILE"] = self.vendor_topo_file
        return out


class TopoCpu(_Strict):
    """<cpu> attributes NCCL requires (arch; vendor on x86; familyid/modelid pick Intel tuning)."""
    arch: Literal["x86_64", "arm64", "ppc64"] = "x86_64"
    vendor: Literal["GenuineIntel", "AuthenticAMD"]
    familyid: int
    modelid: int


class TopoNet(_Strict):
    """A socket NIC declared as <nic><net .../></nic> directly under a <cpu> (ncv4 shape)."""
    name: str
    dev: int = 0
    speed: int  # Mb/s
    port: int = 0
    latency: float = 0.0
    guid: str = "0x0"
    maxconn: int = 65536
    gdr: int = 0


class TopoNuma(_Strict):
    """What hangs off one NUMA node in the guest: GPUs and IB HCAs by PCI bus id, in file order."""
    numaid: int = Field(ge=0)
    gpus: list[str] = []
    hcas: list[str] = []  # index i pairs with gpus[i] under a switch
    nets: list[TopoNet] = []

    @field_validator("gpus", "hcas")
    @classmethod
    def _busids(cls, values: list[str]) -> list[str]:
        import re
        for value in values:
            if not re.match(_BUSID, value):
                raise ValueError(f"{value!r} is not a lower-case PCI bus id dddd:bb:dd.f")
        return values


class GraphFacts(_Strict):
    """Per-channel speeds (GB/s) for a generated NCCL_GRAPH_FILE; channels are computed."""
    speed_intra: float
    speed_inter: float
    latency_inter: float = 0.0
    type_inter: Literal["LOC", "NVL", "NVB", "PIX", "PXB", "P2C", "PXN", "PHB", "SYS"] = "PIX"


class Topology(_Strict):
    """The guest PCI topology NCCL_TOPO_FILE describes, in a form one generator lays out.

    Shapes: ``switch: per_numa`` (ndv4: one virtual bridge ffff:ff:0N.0 per NUMA node holding its
    GPUs and HCAs interleaved), ``per_gpu`` (ndv5: one bridge per GPU+HCA pair, with
    ``switch_ids`` adding vendor/device/subsystem "0x0000"), ``none`` (ndv2: flat <pci> under
    <cpu>; with ``gpu_elements`` the ncv4 shape: <gpu dev sm rank gdr> children and PCI ids).
    Bridge bus ids are numbered 01, 02, ... in file order.
    """
    cpu: TopoCpu
    link_speed: str
    link_width: int = Field(ge=1)
    switch: Literal["none", "per_numa", "per_gpu"] = "none"
    switch_ids: bool = False
    gpu_elements: bool = False
    gpu_class: str = Field(default="0x030200", pattern=_HEXCLASS)  # 3D controller
    hca_class: str = Field(default="0x020700", pattern=_HEXCLASS)  # InfiniBand controller
    switch_class: str = Field(default="0x060400", pattern=_HEXCLASS)  # PCI bridge
    numa: list[TopoNuma]
    # NVLink bridges between GPU pairs (bus ids). Used to order graph channels; NOT emitted as
    # <nvlink> children: any <nvlink> child turns off NCCL's NVML NVLink discovery (nccl.md §1.3).
    nvlink_pairs: list[tuple[str, str]] = []
    graph: GraphFacts | None = None

    @field_validator("link_speed")
    @classmethod
    def _known_speed(cls, value: str) -> str:
        if value not in NCCL_PCI_LINK_SPEEDS:
            raise ValueError(f"link_speed {value!r} is not one NCCL recognises (it would silently become "
                             f"6 Gb/s per lane); use one of: {', '.join(NCCL_PCI_LINK_SPEEDS)}")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> "Topology":
        ids = [node.numaid for node in self.numa]
        if len(set(ids)) != len(ids):
            raise ValueError("numa: numaid values must be unique")
        if self.switch != "none":
            for node in self.numa:
                if len(node.hcas) != len(node.gpus):
                    raise ValueError(f"numa {node.numaid}: switch layouts pair each GPU with one HCA "
                                     f"({len(node.gpus)} GPUs, {len(node.hcas)} HCAs)")
        gpus = self.gpu_busids()
        if len(set(gpus)) != len(gpus):
            raise ValueError("a GPU bus id appears twice")
        for pair in self.nvlink_pairs:
            for busid in pair:
                if busid not in gpus:
                    raise ValueError(f"nvlink_pairs: {busid} is not one of the topology's GPUs")
        return self

    def gpu_busids(self) -> list[str]:
        return [busid for node in self.numa for busid in node.gpus]

    def cuda_order(self) -> list[str]:
        """GPU bus ids in device-index order (NVML / CUDA_DEVICE_ORDER=PCI_BUS_ID: sorted bus id)."""
        return sorted(self.gpu_busids())


class BusBw(_Strict):
    nodes: int = Field(ge=1)
    gbps: float = Field(gt=0)  # NCCL all_reduce busbw, GB/s
    message_size: str  # "8G"
    nccl_version: str | None = None
    algo: str | None = None
    kind: Literal["measured", "nhc_min", "expected"]
    source: str
    note: str | None = None


# --------------------------------------------------------------------------- the SKU

# A SKU name becomes a file name (NAME.yaml in a --sku-dir, `sku import -o DIR`): letters, digits, '_', '.', '-',
# starting with a letter or digit, no '..'; every name of the package catalog, Azure's and Crusoe's, fits.
SKU_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")


def sku_name_problem(name: object) -> str | None:
    """Why ``name`` is not a SKU name (the grammar above), or None."""
    if not isinstance(name, str):
        return f"a SKU name is a string, not {type(name).__name__} {name!r:.40}"
    if not SKU_NAME.fullmatch(name) or ".." in name:
        return (f"{name!r:.120} is not a SKU name: letters, digits, '_', '.' and '-' only, starting with a letter "
                "or digit, at most 100 characters, no '..'")
    return None


class Sku(_Strict):
    name: str
    # "other": a node hpcconf has no provider knowledge for (on-prem, another cloud), e.g. from `sku import`.
    provider: Literal["azure", "crusoe", "other"]
    family: str
    vcpus: int | None = Field(default=None, ge=1)
    memory_gib: int | None = Field(default=None, ge=1)
    cpu: Cpu = Cpu()
    gpu: Gpu
    nvlink: NvLink
    infiniband: Infiniband | None = None
    ethernet_interface: str = "eth0"
    # The front-end network (Gb/s, the size's "expected network bandwidth"): what NCCL's socket transport gets
    # across nodes where there is no InfiniBand. None: unknown.
    ethernet_gbps: int | None = Field(default=None, ge=1)
    numa: list[NumaNode] = []  # guest NUMA nodes; empty when unknown
    nccl: NcclDefaults = NcclDefaults()
    topology: Topology | None = None  # None: let NCCL auto-detect (no topo file)
    busbw: list[BusBw] = []
    # None in a package file: the lifecycle comes from hpcconf's retirement table (filled in on load).
    lifecycle: Lifecycle | None = None
    sources: dict[str, str]  # source key -> citation
    cites: dict[str, list[str]] = {}  # top-level field -> source keys backing it
    notes: list[str] = []

    @field_validator("name")
    @classmethod
    def _name_grammar(cls, name: str) -> str:
        problem = sku_name_problem(name)
        if problem is not None:
            raise ValueError(problem)
        return name

    @model_validator(mode="after")
    def _consistent(self) -> "Sku":
        self._check_numa()
        self._check_topology()
        self._check_sources()
        self._check_hardware()
        return self

    def _check_hardware(self) -> None:
        domain = self.nvlink.domain_gpus
        if domain is not None and domain % self.gpu.count:
            raise ValueError(f"nvlink.domain_gpus {domain} is not a multiple of gpu.count {self.gpu.count} "
                             f"(a domain holds whole VMs)")
        if self.topology is not None and self.topology.cpu.arch != self.cpu.arch:
            raise ValueError(f"topology.cpu.arch {self.topology.cpu.arch} contradicts cpu.arch {self.cpu.arch}")
        if not accelerator_profiles()[self.gpu.vendor].sku_nvidia_sections \
                and (self.nvlink.present or self.topology is not None or self.nccl != NcclDefaults()):
            raise ValueError(f"nvlink, topology and nccl describe NVIDIA GPUs; a {self.gpu.vendor} SKU leaves them "
                             f"at present: false / null / {{}}")

    def _check_numa(self) -> None:
        seen: set[int] = set()
        ids = [node.id for node in self.numa]
        if len(set(ids)) != len(ids):
            raise ValueError("numa: ids must be unique")
        for node in self.numa:
            cpus = set(node.cpu_set())
            if cpus & seen:
                raise ValueError(f"numa {node.id}: cpus overlap another NUMA node")
            seen |= cpus
            if self.vcpus is not None and max(cpus) >= self.vcpus:
                raise ValueError(f"numa {node.id}: cpu {max(cpus)} is beyond vcpus={self.vcpus}")
        if self.numa and self.vcpus is not None and len(seen) != self.vcpus:
            raise ValueError(f"numa cpus cover {len(seen)} CPUs, vcpus is {self.vcpus}")

    def _check_topology(self) -> None:
        topo = self.topology
        if topo is None:
            if self.nccl.graph:
                raise ValueError("nccl.graph: true needs a topology to generate the graph from")
            return
        if self.vcpus is None:
            raise ValueError("topology needs vcpus (affinity masks are vcpus bits wide)")
        numa_ids = {node.id for node in self.numa}
        for node in topo.numa:
            if node.numaid not in numa_ids:
                raise ValueError(f"topology numaid {node.numaid} is not one of numa[].id")
        if len(topo.gpu_busids()) != self.gpu.count:
            raise ValueError(f"topology lists {len(topo.gpu_busids())} GPUs, gpu.count is {self.gpu.count}")
        hcas = [h for node in topo.numa for h in node.hcas]
        expected = self.infiniband.count if self.infiniband else 0
        if len(hcas) != expected:
            raise ValueError(f"topology lists {len(hcas)} HCAs, infiniband.count is {expected}")
        if self.nccl.graph and topo.graph is None:
            raise ValueError("nccl.graph: true needs topology.graph speeds")
        if topo.gpu_elements and self.gpu.pci_device is None:
            raise ValueError("topology.gpu_elements needs gpu.pci_device")

    def _check_sources(self) -> None:
        for bw in self.busbw:
            if bw.source not in self.sources:
                raise ValueError(f"busbw source {bw.source!r} is not a key of sources")
        for fact, keys in self.cites.items():
            if fact not in type(self).model_fields:
                raise ValueError(f"cites: {fact!r} is not a SKU field")
            for key in keys:
                if key not in self.sources:
                    raise ValueError(f"cites.{fact}: {key!r} is not a key of sources")

    # -- derived values used by several generators

    @property
    def nvlink_domain_gpus(self) -> int:
        """GPUs one NVLink domain holds: 1 without NVLink, the VM's GPUs unless the domain is larger."""
        if not self.nvlink.present:
            return 1
        return self.nvlink.domain_gpus or self.gpu.count

    @property
    def nvlink_spans_nodes(self) -> bool:
        """The NVLink domain is larger than one VM (GB200/GB300 NVL72: 72 GPUs over 18 VMs)."""
        return self.nvlink_domain_gpus > self.gpu.count

    def lifecycle_status(self, today: _dt.date | None = None) -> str:
        return self.lifecycle.effective_status(today) if self.lifecycle else "available"

    @property
    def short_name(self) -> str:
        """``NC48ads_A100_v4`` for ``Standard_NC48ads_A100_v4``; other names unchanged."""
        return self.name[len("Standard_"):] if self.name.startswith("Standard_") else self.name

    def numa_node(self, numa_id: int) -> NumaNode:
        for node in self.numa:
            if node.id == numa_id:
                return node
        raise KeyError(numa_id)

    def affinity_mask(self, numa_id: int) -> str:
        """NCCL/Linux cpumask for one NUMA node: 32-bit hex groups, most significant first."""
        if self.vcpus is None:
            raise ValueError(f"{self.name}: vcpus unknown, cannot size a cpumask")
        return cpumask_groups(self.numa_node(numa_id).cpu_set(), self.vcpus)


# --------------------------------------------------------------------------- cpu lists / masks

def parse_cpulist(text: str) -> list[int]:
    """Linux cpulist ("0-23,48-71") -> sorted CPU numbers; ValueError when malformed."""
    cpus: set[int] = set()
    for part in text.split(","):
        part = part.strip()
        if not part:
            raise ValueError(f"empty element in cpulist {text!r}")
        lo, sep, hi = part.partition("-")
        if not lo.isdigit() or (sep and not hi.isdigit()):
            raise ValueError(f"{part!r} in cpulist {text!r} is not N or N-M")
        first, last = int(lo), int(hi) if sep else int(lo)
        if last < first:
            raise ValueError(f"range {part!r} in cpulist {text!r} runs backwards")
        cpus.update(range(first, last + 1))
    return sorted(cpus)


def cpumask_groups(cpus: Sequence[int], width: int) -> str:
    """The kernel's cpumask format (as NCCL's affinity attribute): comma-separated 32-bit hex
    groups, most significant first, enough groups for ``width`` CPUs."""
    mask = 0
    for cpu in cpus:
        mask |= 1 << cpu
    groups = max(1, -(-width // 32))
    return ",".join(f"{(mask >> (32 * i)) & 0xFFFFFFFF:08x}" for i in reversed(range(groups)))


# --------------------------------------------------------------------------- loading

def _lookup_keys(name: str) -> list[str]:
    low = name.strip().lower()
    keys = [low]
    if low.startswith("standard_"):
        keys.append(low[len("standard_"):])
    return keys


def _validation_diagnostics(doc: YamlDocument, exc: ValidationError) -> list[Diagnostic]:
    diags = []
    for err in exc.errors():
        loc = tuple(part for part in err["loc"] if not (isinstance(part, str) and part.startswith("function-")))
        where = ".".join(str(p) for p in loc) or "(top level)"
        message = err["msg"].removeprefix("Value error, ")
        hint = "Fix the value, or remove the key if it is not a SKU field." if err["type"] == "extra_forbidden" \
            else "See hpcconf/catalog.py for the SKU fields and their meaning."
        diags.append(doc.diagnostic(
            Diagnostic(code="HPC100", name="sku-invalid", message=f"SKU {where}: {message}", hint=hint),
            loc, prefer_value=err["type"] != "extra_forbidden"))
    return diags


_PARSED: dict[tuple[str, int, int], Sku] = {}  # (path, mtime_ns, size) -> Sku; SKUs are frozen


def load_sku_file(path: Path) -> Sku:
    """Parse and validate one SKU file; HpcconfError (with file:line:col) when it is wrong."""
    stat = path.stat()
    key = (str(path.resolve()), stat.st_mtime_ns, stat.st_size)
    if key not in _PARSED:
        _PARSED[key] = _parse_sku_file(path)
    return _PARSED[key]


def _parse_sku_file(path: Path) -> Sku:
    from .safe_io import read_text

    text = read_text(path, "sku", tree=path.parent)  # no fifo, device, link out of the SKU directory
    fast = _fast_parse(text, path)
    if fast is not None:
        return fast
    doc = load_document(text, str(path))
    if not isinstance(doc.data, dict):
        raise HpcconfError([Diagnostic(code="HPC100", name="sku-invalid",
                                       message="a SKU file must be a YAML mapping",
                                       hint="Start from one of the files in the package skus/ directory.")
                            .at(str(path), doc.start_line, 1)])
    try:
        sku = Sku.model_validate(doc.data)
    except ValidationError as exc:
        raise HpcconfError(_validation_diagnostics(doc, exc)) from None
    stem = path.stem
    if stem not in (sku.name, f"{sku.provider}-{sku.name}"):
        raise HpcconfError([doc.diagnostic(Diagnostic(
            code="HPC100", name="sku-invalid",
            message=f"file name {path.name!r} does not match SKU name {sku.name!r}",
            hint=f"Rename the file to {sku.name}.yaml (or {sku.provider}-{sku.name}.yaml)."),
            ("name",), prefer_value=True)])
    return sku


def _fast_parse(text: str, path: Path) -> Sku | None:
    """The common case, a valid file, without the (slow, pure-Python) position-tracking loader.

    Every build loads the whole catalog, so this keeps pre-commit fast; any problem falls back
    to the positional path, which reports it at file:line:col.
    """
    try:
        data = fast_load(text)
        sku = Sku.model_validate(data)
    except Exception:  # noqa: BLE001 - any problem is reported precisely by the slow path
        return None
    return sku if path.stem in (sku.name, f"{sku.provider}-{sku.name}") else None


def _with_lifecycle(sku: Sku) -> Sku:
    """The SKU with its lifecycle from hpcconf's retirement table when its file gives none.

    The table (``hpcconf/data/compat/retirements.yaml``) is the one source for the Azure sizes it
    lists; package SKU files leave ``lifecycle`` out (tests/test_catalog.py holds them to it).
    """
    if sku.lifecycle is not None or sku.provider != "azure":
        return sku
    from .knowledge.compat import sku_retirement

    retired = sku_retirement(sku.name)
    if retired is None:
        return sku.model_copy(update={"lifecycle": Lifecycle()})
    status = "retired" if retired.passed(None) else "retiring"
    return sku.model_copy(update={"lifecycle": Lifecycle(status=status, date=retired.date,
                                                         replacement=retired.replacement, source=retired.source)})


def _name_and_provider(path: Path) -> tuple[str, str]:
    sku = load_sku_file(path)
    return sku.name, sku.provider


def _package_entries() -> dict[str, tuple[str, Path]]:
    """The package SKU files by name (``catalog_index.package_entries``), a file its lines do not name parsed."""
    return package_entries(_name_and_provider)


class Catalog:
    """All known SKUs by canonical name; lookups accept short names and any case.

    Package SKUs are parsed on first lookup (``Catalog.load``); SKUs given as objects or from an extra
    directory are parsed up front, so a bad user file is reported whichever SKUs a command reads."""

    def __init__(self, skus: dict[str, Sku], files: dict[str, Path] | None = None,
                 lazy: dict[str, tuple[str, Path]] | None = None):
        providers = {name: provider for name, (provider, _) in (lazy or {}).items()}
        providers.update((name, sku.provider) for name, sku in skus.items())
        self._lazy = {name: path for name, (_, path) in (lazy or {}).items() if name not in skus}
        self._loaded = dict(skus)
        self._names = sorted(providers)
        self.files = {**self._lazy, **dict(files or {})}
        self._index: dict[str, str] = {}
        for name in self._names:
            provider = providers[name]
            for key in _lookup_keys(name) + [f"{provider}-{name}".lower(), f"{provider}/{name}".lower()]:
                self._index.setdefault(key, name)
            if name in self.files:
                self._index.setdefault(self.files[name].stem.lower(), name)

    @classmethod
    def load(cls, extra_dirs: Sequence[Path] = ()) -> "Catalog":
        """Package SKUs first, then each directory in ``extra_dirs`` adds or replaces by name."""
        skus: dict[str, Sku] = {}
        files: dict[str, Path] = {}
        diags: list[Diagnostic] = []
        for directory in map(Path, extra_dirs):
            problem = sku_dir_problem(directory)
            if problem is not None:
                diags.append(problem)
                continue
            for path in _sku_files(directory):
                try:
                    sku = load_sku_file(path)
                except HpcconfError as exc:
                    diags.extend(exc.diagnostics)
                    continue
                skus[sku.name] = _with_lifecycle(sku)
                files[sku.name] = path
        if diags:
            raise HpcconfError(diags)
        return cls(skus, files, lazy=_package_entries())

    def _sku(self, name: str) -> Sku:
        """The SKU of canonical ``name``, parsed (and its lifecycle added) on first use."""
        if name not in self._loaded:
            self._loaded[name] = _with_lifecycle(load_sku_file(self._lazy[name]))
        return self._loaded[name]

    def names(self) -> list[str]:
        return list(self._names)

    def user_file(self, name: str) -> Path | None:
        """The file a SKU came from when it is not hpcconf's own (a --sku-dir / sku_dirs file, which may
        replace a package entry of the same name); None for a package SKU."""
        path = self.files.get(self.get(name).name)
        if path is None or path.resolve().parent == default_sku_dir().resolve():
            return None
        return path

    def __iter__(self) -> Iterator[Sku]:
        return iter([self._sku(name) for name in self._names])

    def __len__(self) -> int:
        return len(self._names)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self._resolve(name) is not None

    def _resolve(self, name: str) -> str | None:
        for key in _lookup_keys(name):
            if key in self._index:
                return self._index[key]
        return None

    def get(self, name: str) -> Sku:
        resolved = self._resolve(name)
        if resolved is None:
            raise UnknownSku(name, self.suggest(name))
        return self._sku(resolved)

    def suggest(self, name: str, limit: int = 3) -> list[str]:
        """Close canonical names for a misspelt ``name`` (difflib on the lower-cased short forms)."""
        query = _lookup_keys(name)[-1]
        by_key: dict[str, str] = {}
        for canonical in self._names:
            by_key.setdefault(_lookup_keys(canonical)[-1], canonical)
        matches = difflib.get_close_matches(query, list(by_key), n=limit, cutoff=0.6)
        return [by_key[m] for m in matches]


# --------------------------------------------------------------------------- the public format

SKU_SCHEMA_ID = "https://hpcconf.dev/schemas/hpcconf-sku.schema.json"


def sku_schema_text() -> str:
    """The JSON Schema of a SKU file, as committed in schemas/hpcconf-sku.schema.json (docs/skus.md)."""
    import json

    schema = {"$schema": "http://json-schema.org/draft-07/schema#", "$id": SKU_SCHEMA_ID,
              **Sku.model_json_schema(mode="validation")}
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


if __name__ == "__main__":  # python -m hpcconf.catalog > schemas/hpcconf-sku.schema.json
    print(sku_schema_text(), end="")
