"""The Azure HPC node health checks (Azure/azurehpc-health-checks, "Az NHC") a SKU should pass before
an NCCL test: GPU count and ECC, NVLink state, IB link state and rate per HCA, GPUDirect RDMA bandwidth
per HCA, the single-node NCCL all_reduce floor.

Facts come from the SKU catalog (GPUs, NVLink, HCA names and rate), ``data/nccl_floors.yaml`` (the
single-node floor) and ``data/nhc.yaml`` (what only Azure's confs give: the RDMA bandwidth floors, ECC
thresholds, extra ports). A check whose numbers no source gives is left out and named in ``unsourced``,
so the generated conf says what it does not check instead of inventing a threshold.

NHC conf lines are ``<hostmask> || <check> <args>``; ``*`` matches every host (LBNL NHC README).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

from .. import data_tables
from .accelerators import NhcFloor, NhcProfile, profile
from .nccl_floors import load_floors

if TYPE_CHECKING:  # the pydantic SKU models (~0.2 s): a lint of config files never builds a health plan
    from ..catalog import Sku

DATA_FILE = Path(__file__).resolve().parents[1] / "data" / "nhc.yaml"
NCCL_COLLECTIVE = "all_reduce"


# Checks that load the node for seconds to minutes (nvbandwidth, ib_write_bw, all_reduce_perf, STREAM):
# never where a job can run (Slurm's HealthCheckProgram runs the others only; see targets/_health.py).
BANDWIDTH_CHECKS = frozenset({"check_gpu_bw", "check_ib_bw_gdr", "check_ib_bw_non_gdr", "check_nccl_allreduce",
                              "check_nccl_allreduce_ib_loopback", "check_rccl_allreduce", "check_cpu_stream"})
SWAP_ARGS = ("0kB", "0kB", "3%")  # every Azure GPU conf at `commit`: no swap


@dataclass(frozen=True)
class Check:
    """One NHC check: the function a customTests/*.nhc (or LBNL NHC) defines, its arguments, and why."""

    name: str
    args: tuple[str, ...] = ()
    why: str = ""

    def line(self) -> str:
        return " ".join([" * ||", self.name, *self.args])

    @property
    def fast(self) -> bool:
        """Seconds, and nothing a running job would feel: fit for Slurm's HealthCheckProgram."""
        return self.name not in BANDWIDTH_CHECKS


@dataclass(frozen=True)
class NhcPlan:
    sku: str
    checks: tuple[Check, ...]
    unsourced: tuple[str, ...]  # what is not checked, and why
    upstream_conf: Optional[str]  # Azure's own conf for this SKU, if it ships one
    image: str  # the container run-health-checks.sh runs the checks in
    commit: str  # the upstream commit the thresholds were read from

    def in_kubernetes_pod(self) -> "NhcPlan":
        """For the AKS DaemonSet's pod: without the interface checks that only hold on Azure's HPC image.

        ``check_hw_eth`` of ib0..N, eth1 and docker0 names what the HPC image's udev rules and dockerd create;
        AKS nodes run containerd (no docker0) and name IPoIB interfaces their own way, so those checks would
        fail a healthy node. lo and eth0 stay."""
        kept = tuple(c for c in self.checks if c.name != "check_hw_eth" or c.args in (("lo",), ("eth0",)))
        dropped = sorted(" ".join(c.args) for c in self.checks if c not in kept)
        gaps = self.unsourced + ((f"interfaces {', '.join(dropped)}: named by Azure's HPC image, not by AKS nodes",)
                                 if dropped else ())
        return NhcPlan(sku=self.sku, checks=kept, unsourced=gaps, upstream_conf=self.upstream_conf,
                       image=self.image, commit=self.commit)

    def render(self, header: list[str]) -> str:
        """The conf file, under the ``header`` comment lines: what the targets write without importing this module."""
        return render_nhc_conf(self, header)

    def fast(self) -> "NhcPlan":
        """The checks Slurm's HealthCheckProgram may run (no bandwidth test); the rest are named as left out."""
        slow = sorted({c.name for c in self.checks if not c.fast})
        gaps = self.unsourced + ((f"bandwidth ({', '.join(slow)}): the full conf runs them where no job can run",)
                                 if slow else ())
        return NhcPlan(sku=self.sku, checks=tuple(c for c in self.checks if c.fast), unsourced=gaps,
                       upstream_conf=self.upstream_conf, image=self.image, commit=self.commit)


@dataclass(frozen=True)
class NhcData:
    commit: str
    images: dict[str, str]
    gpu_ecc: dict[str, tuple[str, ...]]
    skus: dict[str, dict[str, Any]] = field(default_factory=dict)
    cpu_architectures: tuple[str, ...] = ("x86_64",)  # the host CPUs the images built from `commit` run on


@lru_cache(maxsize=None)
def load_nhc_data(path: Path = DATA_FILE) -> NhcData:
    data = data_tables.load(path)
    upstream = data["upstream"]
    return NhcData(
        commit=upstream["commit"],
        images={str(vendor): str(image) for vendor, image in upstream["images"].items()},
        gpu_ecc={key: tuple(str(a) for a in row["args"]) for key, row in data["gpu_ecc"].items()},
        skus={row["sku"]: row for row in data["skus"]},
        cpu_architectures=tuple(str(arch) for arch in upstream["cpu_architectures"]),
    )


def unsupported_arch_reason(arch: str) -> str | None:
    """Why the pinned health checks cannot run on a host CPU of ``arch``, or None when they can."""
    data = load_nhc_data()
    if arch in data.cpu_architectures:
        return None
    return (f"Azure/azurehpc-health-checks at the pinned commit {data.commit[:12]} builds its image for "
            f"{', '.join(data.cpu_architectures)} only (dockerfile/azure-nvrt-nhc.dockerfile installs the x86_64 "
            f"MLNX_OFED and amd64 AOCC packages), not for {arch}; its arm64 image came later (PR #164)")


def _number(value: float) -> str:
    """Thresholds as NHC reads them: ``360``, ``180.0`` stays ``180``-equal; no float noise."""
    return f"{float(value):g}" if float(value) != int(float(value)) else str(int(float(value)))


def _nhc_profile(sku: Sku) -> NhcProfile:
    nhc = profile(sku.gpu.vendor).nhc
    if nhc is None:
        raise LookupError(f"data/accelerators.yaml gives {sku.gpu.vendor} no nhc section: Azure's health checks do not know it")
    return nhc


def gpu_checks(sku: Sku, row: dict[str, Any], data: NhcData) -> list[Check]:
    nhc = _nhc_profile(sku)
    count = Check("check_gpu_count", (str(sku.gpu.count), *nhc.gpu_count_args), f"{sku.gpu.count} x {sku.gpu.model} visible")
    if not nhc.smi_checks:
        return [count]  # ECC and NVLink checks read nvidia-smi
    ecc = data.gpu_ecc.get(sku.gpu.model, data.gpu_ecc["nvidia"])
    checks = [count, Check("check_gpu_ecc", ecc, "no uncorrectable ECC errors, remapped rows or SRAM errors over the thresholds")]
    if sku.nvlink.present or row.get("nvlink_status"):
        checks.append(Check("check_nvlink_status", (), "no inactive NVLink"))
    return checks


def ib_checks(sku: Sku, row: dict[str, Any]) -> tuple[list[Check], list[str]]:
    ib = sku.infiniband
    checks = [Check("check_hw_ib", (str(port["gbps"]), f"{port['device']}:{port.get('port', 1)}"),
                    "accelerated-networking port beside the IB HCAs")
              for port in row.get("extra_ib_ports", [])]
    if ib is None:
        return checks, []
    unsourced = []
    devices = ib.devices or row.get("ib_devices", [])  # Azure's conf names them where the catalog does not
    if devices:
        checks += [Check("check_hw_ib", (str(ib.gbps), f"{device}:1"), f"{ib.rate} link up at {ib.gbps} Gb/s")
                   for device in devices]
    else:
        unsourced.append(f"IB link state and rate per HCA: the catalog names no HCA devices for {sku.name}")
    if "ib_bw_gdr" in row:
        checks.append(Check("check_ib_bw_gdr", (_number(row["ib_bw_gdr"]),), "GPUDirect RDMA write bandwidth per HCA (Gb/s)"))
    elif "ib_bw_non_gdr" in row:
        bw = row["ib_bw_non_gdr"]
        checks.append(Check("check_ib_bw_non_gdr", (_number(bw["gbps"]),) + ((str(bw["size"]),) if "size" in bw else ()),
                            "RDMA write bandwidth per HCA from host memory (Gb/s)"))
    else:
        unsourced.append(f"RDMA bandwidth per HCA: no published floor for {sku.name}")
    return checks, unsourced


def collective_checks(sku: Sku, row: dict[str, Any]) -> tuple[list[Check], list[str]]:
    nhc, library = _nhc_profile(sku), profile(sku.gpu.vendor).collective_library
    if nhc.allreduce_floor is NhcFloor.NHC_CONF:
        conf = row.get(f"{sku.gpu.collective}_allreduce")
        if conf is None:
            return [], [f"single-node {library} all_reduce floor: none published for {sku.name}"]
        return [Check(nhc.allreduce_check, (_number(conf["gbps"]), "1", str(conf["size"])),
                      "single-node all_reduce busbw floor (GB/s)")], []
    if sku.gpu.count < 2:
        return [], []  # one GPU: no collective to measure
    floor = load_floors().floor(sku.name, NCCL_COLLECTIVE, 1, sku.gpu.count)
    if floor is None:
        return [], [f"single-node {library} all_reduce floor: none published for {sku.name}"]
    topo = (f"$AZ_NHC_ROOT/topofiles/{row['nccl_topo']}",) if "nccl_topo" in row else ()
    return [Check(nhc.allreduce_check, (_number(floor.gbps), "1", floor.message_size) + topo,
                  f"single-node all_reduce busbw floor (GB/s), {floor.citation()}")], []


def node_checks(row: dict[str, Any]) -> list[Check]:
    """CPU, memory, swap, interfaces, PCIe topology and NVMe, as Azure's conf for the size has them."""
    more = row.get("more", {})
    checks = []
    if "cpuinfo" in more:
        checks.append(Check("check_hw_cpuinfo", tuple(str(n) for n in more["cpuinfo"]), "CPU sockets, cores, threads"))
    if "physmem" in more:
        mem = more["physmem"]
        checks.append(Check("check_hw_physmem", (mem["size"], mem["size"], mem["tolerance"]), "physical memory"))
    if more:
        checks.append(Check("check_hw_swap", SWAP_ARGS, "no swap"))
    checks += [Check("check_hw_eth", (name,), "network interfaces present") for name in more.get("eth", [])]
    if more.get("hw_topology"):
        checks.append(Check("check_hw_topology", (), "GPU and HCA PCIe placement as Azure's topology file has it"))
    if "nvme" in more:
        checks.append(Check("check_nvme_count", (str(more["nvme"]),), "local NVMe disks"))
    return checks


def gpu_health_checks(sku: Sku, row: dict[str, Any]) -> list[Check]:
    """Xid errors in the kernel log, nvidia-smi's health monitor, clock throttling (NVIDIA only)."""
    more = row.get("more", {})
    checks = []
    if more.get("gpu_xid"):
        checks.append(Check("check_gpu_xid", (), "no GPU Xid errors in the kernel log"))
    if more.get("nvsmi_healthmon"):
        checks.append(Check("check_nvsmi_healthmon", (), "nvidia-smi reports no GPU health problem"))
    if more.get("clock_throttling"):
        checks.append(Check("check_gpu_clock_throttling", (), "no GPU clock throttling"))
    return checks


def link_and_bandwidth_checks(row: dict[str, Any]) -> tuple[list[Check], list[Check]]:
    more = row.get("more", {})
    link = [Check("check_ib_link_flapping", (), "no IB link flaps in the system log")] if more.get("ib_link_flapping") else []
    bandwidth = []
    if "gpu_bw" in more:
        bandwidth.append(Check("check_gpu_bw", tuple(_number(n) for n in more["gpu_bw"]),
                               "host-GPU (and GPU-GPU) copy bandwidth, GB/s"))
    loop = more.get("ib_loopback")
    if loop:
        topo = (f"$AZ_NHC_ROOT/topofiles/{row['nccl_topo']}",) if "nccl_topo" in row else ()
        bandwidth.append(Check("check_nccl_allreduce_ib_loopback", (f"{float(loop['gbps']):.1f}", "1", str(loop["size"])) + topo,
                               "single-node all_reduce over the HCAs (NVLink and P2P off), GB/s"))
    return link, bandwidth


def nhc_plan(sku: Sku) -> NhcPlan:
    data = load_nhc_data()
    row = data.skus.get(sku.name, {})
    ib, ib_unsourced = ib_checks(sku, row)
    nccl, nccl_unsourced = collective_checks(sku, row)
    link, bandwidth = link_and_bandwidth_checks(row)
    ib_bw = [c for c in ib if c.name in BANDWIDTH_CHECKS]
    ib_link = [c for c in ib if c.name not in BANDWIDTH_CHECKS]
    # Fast checks first (hardware, GPU, links), the bandwidth tests last, as Azure's confs group them.
    checks = node_checks(row) + gpu_checks(sku, row, data) + gpu_health_checks(sku, row) + ib_link + link \
        + bandwidth[:1] + ib_bw + nccl + bandwidth[1:]
    unsourced = ib_unsourced + nccl_unsourced + [str(gap) for gap in row.get("not_checked", [])]
    return NhcPlan(sku=sku.name, checks=tuple(checks), unsourced=tuple(unsourced), upstream_conf=row.get("conf"),
                   image=data.images[sku.gpu.vendor], commit=str(row.get("commit", data.commit)))


def render_nhc_conf(plan: NhcPlan, header: list[str]) -> str:
    """The conf file of ``plan`` under the ``header`` comment lines (also :meth:`NhcPlan.render`)."""
    source = (f"Azure/azurehpc-health-checks {plan.upstream_conf} @{plan.commit[:8]}" if plan.upstream_conf
              else f"the catalog; Azure/azurehpc-health-checks @{plan.commit[:8]} ships no conf for this size")
    lines = [f"# {line}" for line in header]
    lines += [f"# NHC checks for {plan.sku} (thresholds: {source}).",
              "# Lines are <hostmask> || <check> <args>; run: run-health-checks.sh -c <this file>.", "#"]
    why = None
    for check in plan.checks:
        if check.why != why:  # one comment above a run of checks with the same reason (the HCAs)
            lines.append(f"# {check.why}")
            why = check.why
        lines.append(check.line())
    for gap in plan.unsourced:
        lines.append(f"# Not checked: {gap}.")
    return "\n".join(lines) + "\n"


def parse_nhc_conf(text: str) -> list[tuple[str, tuple[str, ...]]]:
    """``(check, args)`` of each ``hostmask || check args`` line; comments and blank lines skipped."""
    checks = []
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if "||" not in line:
            continue
        words = line.split("||", 1)[1].split()
        if words:
            checks.append((words[0], tuple(words[1:])))
    return checks
