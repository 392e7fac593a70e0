"""Azure NHC confs generated from the catalog, checked against Azure's own confs.

Oracle: Azure/azurehpc-health-checks ``conf/<sku>.conf`` at commit UPSTREAM_COMMIT. The checks in our scope
(GPU count and ECC, NVLink, IB link per HCA, RDMA bandwidth per HCA, the single-node collective floor) were
read from those files and are encoded below; ``../shared/upstream/skus/azurehpc-nhc-thresholds.tsv`` (the
same commit) is a second, independent transcription that every in-scope check it carries is compared
with. UPSTREAM_CHECKS was compared with the files themselves (``git archive`` of the commit's ``conf/``).
"""

from __future__ import annotations

import csv
import re
from collections import Counter
from pathlib import Path

import pytest

from hpcconf.catalog import Catalog
from hpcconf.knowledge.nhc import load_nhc_data, nhc_plan, parse_nhc_conf, render_nhc_conf

UPSTREAM_COMMIT = "0e0a1ac26a64b32ac4dd7632a529638505d3314a"
SCOPE = {"check_gpu_count", "check_gpu_ecc", "check_nvlink_status", "check_hw_ib", "check_ib_bw_gdr",
         "check_ib_bw_non_gdr", "check_nccl_allreduce", "check_rccl_allreduce"}  # the checks read from the catalog
# The in-scope lines of each upstream conf at UPSTREAM_COMMIT.
_NDV4_IB = [f"check_hw_ib 200 mlx5_ib{i}:1" for i in range(8)]
_NDV5_IB = [f"check_hw_ib 400 mlx5_ib{i}:1" for i in range(8)]
UPSTREAM_CHECKS = {
    "Standard_ND40rs_v2": ["check_hw_ib 100 mlx5_ib0:1", "check_gpu_ecc", "check_gpu_count 8", "check_nvlink_status",
                           "check_nccl_allreduce 110.0 1 8G $AZ_NHC_ROOT/topofiles/ndv2-topo.xml", "check_ib_bw_non_gdr 78 65536"],
    "Standard_NC24rs_v3": ["check_gpu_ecc", "check_gpu_count 4"],
    "Standard_ND96asr_v4": _NDV4_IB + ["check_gpu_count 8", "check_gpu_ecc 20000000 10000", "check_nvlink_status",
                                       "check_nccl_allreduce 228.0 1 8G $AZ_NHC_ROOT/topofiles/ndv4-topo.xml", "check_ib_bw_gdr 180.0"],
    "Standard_ND96amsr_A100_v4": _NDV4_IB + ["check_gpu_count 8", "check_gpu_ecc 20000000 10000", "check_nvlink_status",
                                             "check_nccl_allreduce 228.0 1 16G $AZ_NHC_ROOT/topofiles/ndv4-topo.xml", "check_ib_bw_gdr 180.0"],
    "Standard_NC24ads_A100_v4": ["check_gpu_count 1", "check_gpu_ecc 20000000 10000"],
    "Standard_NC48ads_A100_v4": ["check_gpu_count 2", "check_gpu_ecc 20000000 10000", "check_nvlink_status", "check_nccl_allreduce 193.0 1 16G"],
    "Standard_NC96ads_A100_v4": ["check_gpu_count 4", "check_gpu_ecc 20000000 10000", "check_nvlink_status",
                                 "check_nccl_allreduce 25 1 8G $AZ_NHC_ROOT/topofiles/ncv4-topo.xml"],
    "Standard_ND96isr_H100_v5": _NDV5_IB + ["check_gpu_count 8", "check_gpu_ecc 20000000 10000", "check_nvlink_status",
                                            "check_nccl_allreduce 460.0 1 16G $AZ_NHC_ROOT/topofiles/ndv5-topo.xml", "check_ib_bw_gdr 380"],
    "Standard_ND96isr_H200_v5": ["check_hw_ib 100 mlx5_an0:1"] + _NDV5_IB + [
        "check_gpu_count 8", "check_gpu_ecc 20000000 10000", "check_nvlink_status",
        "check_nccl_allreduce 431.0 1 16G $AZ_NHC_ROOT/topofiles/ndv5-topo.xml", "check_ib_bw_gdr 360"],
    "Standard_NC40ads_H100_v5": ["check_gpu_count 1", "check_gpu_ecc 20000000 10000", "check_nvlink_status"],
    "Standard_NC80adis_H100_v5": ["check_gpu_count 2", "check_gpu_ecc 20000000 10000", "check_nvlink_status", "check_nccl_allreduce 208.0 1 16G"],
    "Standard_ND96isr_MI300X_v5": [*(f"check_hw_ib 400 mlx5_ib{i}:1" for i in range(8)), "check_gpu_count 8 rocm",
                                   "check_rccl_allreduce 314 1 16G", "check_ib_bw_non_gdr 390"],
}
# Azure's other checks at UPSTREAM_COMMIT (hardware, Xid, health monitor, throttling, link flaps, PCIe
# bandwidth, IB loopback): the generated conf has them too (issue 21 item 6).
MORE_CHECKS = {
    'Standard_ND40rs_v2': ['check_hw_cpuinfo 2 40 40', 'check_hw_physmem 693505424kB 693505424kB 3%', 'check_hw_swap 0kB 0kB 3%', 'check_hw_eth lo', 'check_hw_eth eth0', 'check_hw_eth ib0', 'check_gpu_xid', 'check_nvsmi_healthmon', 'check_gpu_clock_throttling', 'check_gpu_bw 9', 'check_ib_link_flapping'],
    'Standard_NC24rs_v3': ['check_hw_cpuinfo 2 24 24', 'check_hw_physmem 451308MB 451308MB 5%', 'check_hw_swap 0kB 0kB 3%', 'check_hw_eth eth0', 'check_hw_eth lo', 'check_gpu_xid', 'check_nvsmi_healthmon', 'check_gpu_clock_throttling', 'check_gpu_bw 10', 'check_ib_link_flapping'],
    'Standard_ND96asr_v4': ['check_hw_cpuinfo 2 96 96', 'check_hw_physmem 928858388kB 928858388kB 3%', 'check_hw_swap 0kB 0kB 3%', 'check_hw_eth ib7', 'check_hw_eth ib3', 'check_hw_eth docker0', 'check_hw_eth lo', 'check_hw_eth ib6', 'check_hw_eth ib5', 'check_hw_eth ib4', 'check_hw_eth ib0', 'check_hw_eth ib2', 'check_hw_eth eth0', 'check_hw_eth ib1', 'check_hw_topology', 'check_gpu_xid', 'check_nvsmi_healthmon', 'check_gpu_bw 21 235', 'check_gpu_clock_throttling', 'check_nccl_allreduce_ib_loopback 18.0 1 8G $AZ_NHC_ROOT/topofiles/ndv4-topo.xml', 'check_ib_link_flapping'],
    'Standard_ND96amsr_A100_v4': ['check_hw_cpuinfo 2 96 96', 'check_hw_physmem 1857830712kB 1857830712kB 3%', 'check_hw_swap 0kB 0kB 3%', 'check_hw_eth ib1', 'check_hw_eth lo', 'check_hw_eth ib4', 'check_hw_eth ib2', 'check_hw_eth ib7', 'check_hw_eth eth0', 'check_hw_eth ib5', 'check_hw_eth ib3', 'check_hw_eth ib6', 'check_hw_eth docker0', 'check_hw_eth ib0', 'check_hw_topology', 'check_gpu_xid', 'check_nvsmi_healthmon', 'check_gpu_bw 21 238', 'check_gpu_clock_throttling', 'check_nccl_allreduce_ib_loopback 18.0 1 16G $AZ_NHC_ROOT/topofiles/ndv4-topo.xml', 'check_ib_link_flapping'],
    'Standard_NC24ads_A100_v4': ['check_hw_cpuinfo 1 24 24', 'check_hw_physmem 221450MB 221450MB 10%', 'check_hw_swap 0kB 0kB 3%', 'check_hw_eth lo', 'check_hw_eth eth0', 'check_hw_eth docker0', 'check_hw_topology', 'check_gpu_xid', 'check_nvsmi_healthmon', 'check_gpu_bw 21 238', 'check_gpu_clock_throttling'],
    'Standard_NC48ads_A100_v4': ['check_hw_cpuinfo 1 48 48', 'check_hw_physmem 433GB 433GB 3%', 'check_hw_swap 0kB 0kB 3%', 'check_hw_eth lo', 'check_hw_eth eth0', 'check_hw_eth docker0', 'check_hw_topology', 'check_gpu_xid', 'check_nvsmi_healthmon', 'check_gpu_bw 21 238', 'check_gpu_clock_throttling'],
    'Standard_NC96ads_A100_v4': ['check_hw_cpuinfo 2 96 96', 'check_hw_physmem 908185720kB 908185720kB 3%', 'check_hw_swap 0kB 0kB 3%', 'check_hw_eth lo', 'check_hw_eth eth0', 'check_hw_eth docker0', 'check_hw_topology', 'check_gpu_xid', 'check_nvsmi_healthmon', 'check_gpu_bw 21 238', 'check_gpu_clock_throttling'],
    'Standard_ND96isr_H100_v5': ['check_hw_cpuinfo 2 96 96', 'check_hw_physmem 1915071MB 1915071MB 5%', 'check_hw_swap 0kB 0kB 3%', 'check_hw_eth lo', 'check_hw_eth eth0', 'check_hw_eth ib0', 'check_hw_eth ib1', 'check_hw_eth ib2', 'check_hw_eth ib3', 'check_hw_eth ib4', 'check_hw_eth ib5', 'check_hw_eth ib6', 'check_hw_eth ib7', 'check_hw_eth docker0', 'check_hw_topology', 'check_nvme_count 8', 'check_nvsmi_healthmon', 'check_gpu_xid', 'check_gpu_bw 48 335', 'check_gpu_clock_throttling', 'check_ib_link_flapping'],
    'Standard_ND96isr_H200_v5': ['check_hw_cpuinfo 2 96 96', 'check_hw_physmem 1909409116kB 1909409116kB 3%', 'check_hw_swap 0kB 0kB 3%', 'check_hw_eth lo', 'check_hw_eth eth0', 'check_hw_eth eth1', 'check_hw_eth ib0', 'check_hw_eth ib1', 'check_hw_eth ib2', 'check_hw_eth ib3', 'check_hw_eth ib4', 'check_hw_eth ib5', 'check_hw_eth ib6', 'check_hw_eth ib7', 'check_hw_eth docker0', 'check_hw_topology', 'check_nvme_count 8', 'check_nvsmi_healthmon', 'check_gpu_xid', 'check_gpu_bw 48 335', 'check_gpu_clock_throttling', 'check_ib_link_flapping'],
    'Standard_NC40ads_H100_v5': ['check_hw_cpuinfo 1 40 40', 'check_hw_physmem 329977992kB 329977992kB 3%', 'check_hw_swap 0kB 0kB 3%', 'check_hw_eth lo', 'check_hw_eth eth0', 'check_nvsmi_healthmon', 'check_gpu_xid', 'check_gpu_bw 48 335', 'check_gpu_clock_throttling'],
    'Standard_NC80adis_H100_v5': ['check_hw_cpuinfo 1 80 80', 'check_hw_physmem 660463936kB 660463936kB 3%', 'check_hw_swap 0kB 0kB 3%', 'check_hw_eth lo', 'check_hw_eth eth0', 'check_nvsmi_healthmon', 'check_gpu_xid', 'check_gpu_bw 48 335', 'check_gpu_clock_throttling'],
    'Standard_ND96isr_MI300X_v5': ['check_hw_cpuinfo 2 96 96', 'check_hw_physmem 1915059MB 1915059MB 7%', 'check_hw_swap 0kB 0kB 3%', 'check_hw_eth lo', 'check_hw_eth eth0', 'check_hw_eth ib0', 'check_hw_eth ib1', 'check_hw_eth ib2', 'check_hw_eth ib3', 'check_hw_eth ib4', 'check_hw_eth ib5', 'check_hw_eth ib6', 'check_hw_eth ib7', 'check_gpu_bw 48 44', 'check_ib_link_flapping'],
}
for _sku, _more in MORE_CHECKS.items():
    UPSTREAM_CHECKS[_sku] = UPSTREAM_CHECKS[_sku] + _more
# GB200: Azure's conf/nd128isr_ndr_gb200_v6.conf at 215c6445 (later than UPSTREAM_COMMIT; check_hw_physmem
# and check_hw_topology are commented out there).
UPSTREAM_CHECKS["Standard_ND128isr_NDR_GB200_v6"] = [
    'check_hw_cpuinfo 128 128 128',
    'check_hw_swap 0kB 0kB 3%',
    'check_hw_ib 400 mlx5_ib0:1',
    'check_hw_ib 400 mlx5_ib1:1',
    'check_hw_ib 400 mlx5_ib2:1',
    'check_hw_ib 400 mlx5_ib3:1',
    'check_hw_eth lo',
    'check_hw_eth eth0',
    'check_hw_eth eth1',
    'check_hw_eth ib0',
    'check_hw_eth ib1',
    'check_hw_eth ib2',
    'check_hw_eth ib3',
    'check_hw_eth docker0',
    'check_gpu_count 4',
    'check_nvsmi_healthmon',
    'check_gpu_xid',
    'check_gpu_bw 48 335',
    'check_gpu_ecc 20000000 10000',
    'check_gpu_clock_throttling',
    'check_nccl_allreduce 432.0 1 16G',
    'check_nccl_allreduce_ib_loopback 48.0 1 16G',
    'check_nvlink_status',
    'check_ib_bw_gdr 360',
    'check_ib_link_flapping',
]
# What ours checks beyond Azure's conf, and why: NC24rs_v3's FDR HCA is in the catalog; Azure's conf does
# not check its link.
ADDITIONS = {"Standard_NC24rs_v3": ["check_hw_ib 56 mlx4_0:1"]}


def _normal(check: str, args: tuple[str, ...]) -> tuple[str, tuple[str, ...]]:
    """Numbers compared as numbers (Azure writes 228.0 and 25 alike)."""
    def norm(arg: str) -> str:
        try:
            return repr(float(arg))
        except ValueError:
            return arg
    return check, tuple(norm(a) for a in args)


def _checks(lines: list[str]) -> Counter:
    return Counter(_normal(*parse_nhc_conf(" * || " + line)[0]) for line in lines)


def _ours(name: str) -> Counter:
    text = render_nhc_conf(nhc_plan(Catalog.load(()).get(name)), ["test"])
    return Counter(_normal(check, args) for check, args in parse_nhc_conf(text))


@pytest.mark.parametrize("sku", sorted(UPSTREAM_CHECKS))
def test_generated_conf_matches_azures(sku):
    assert _ours(sku) == _checks(UPSTREAM_CHECKS[sku] + ADDITIONS.get(sku, []))


def test_every_sku_with_an_azure_conf_is_compared():
    assert set(load_nhc_data().skus) == set(UPSTREAM_CHECKS)
    assert load_nhc_data().commit == UPSTREAM_COMMIT


def test_thresholds_agree_with_the_shared_transcription(shared_dir):
    rows = list(csv.DictReader((line for line in (shared_dir / "upstream/skus/azurehpc-nhc-thresholds.tsv")
                                .read_text(encoding="utf-8").splitlines() if not line.startswith("#")), delimiter="\t"))
    assert UPSTREAM_COMMIT in (shared_dir / "upstream/skus/azurehpc-nhc-thresholds.tsv").read_text(encoding="utf-8")
    by_conf = {row["sku_conf"]: _realigned(row) for row in rows}
    for sku, row in load_nhc_data().skus.items():
        if Path(row["conf"]).stem not in by_conf:
            continue  # GB200: a conf from a later commit than the shared transcription's
        tsv = by_conf[Path(row["conf"]).stem]
        ours = _ours(sku)
        assert ours[_normal("check_gpu_count", (tsv["gpu_count"],) + (("rocm",) if "MI300X" in sku else ()))] == 1, sku
        if tsv["ib_bw_gdr_min_Gbps"]:
            assert any(c == "check_ib_bw_gdr" and float(a[0]) == float(tsv["ib_bw_gdr_min_Gbps"]) for c, a in ours), sku
        if tsv["ib_rate_Gbps_per_port"]:
            rates = {float(a[0]) for c, a in ours if c == "check_hw_ib" and "mlx5_an0" not in a[1]}
            assert rates == {float(tsv["ib_rate_Gbps_per_port"])}, sku
        floor = (tsv["nccl_allreduce_min_busbw_GBps"].split() or [""])[0]
        if floor and "MI300X" not in sku:
            (args,) = [a for c, a in ours if c == "check_nccl_allreduce"]
            assert float(args[0]) == float(floor) and args[2] == tsv["nccl_msg_size"], sku


def _realigned(row: dict[str, str]) -> dict[str, str]:
    """The TSV's nd40rs_v2 row has one tab too many before its IB columns (rate 100 lands in ib_ports)."""
    if row["ib_bw_gdr_min_Gbps"].startswith("mlx"):
        row = {**row, "ib_rate_Gbps_per_port": row["ib_ports"], "ib_ports": row["ib_bw_gdr_min_Gbps"], "ib_bw_gdr_min_Gbps": ""}
    return row


def _transcribed_checks(row: dict[str, str]) -> Counter:
    """The shared TSV row's in-scope checks, in the conf's syntax (ECC and NVLink are not transcribed there)."""
    lines = [f"check_gpu_count {row['gpu_count']}" + (" rocm" if "rocm" in row["other"] else "")]
    ports, rate = row["ib_ports"], row["ib_rate_Gbps_per_port"]
    span = re.match(r"mlx5_ib(\d+)\.\.(\d+)", ports)
    if rate and span:  # mlx5_ib0..7, maybe "(+mlx5_an0 at 100)"
        lines += [f"check_hw_ib {rate} mlx5_ib{i}:1" for i in range(int(span[1]), int(span[2]) + 1)]
        lines += [f"check_hw_ib {other} {device}:1" for device, other in re.findall(r"\+(\w+) at (\d+)", ports)]
    elif rate:  # one HCA
        lines.append(f"check_hw_ib {rate} {ports}:1")
    floor = row["nccl_allreduce_min_busbw_GBps"].split()
    if floor:
        check = "check_rccl_allreduce" if "check_rccl_allreduce" in row["nccl_allreduce_min_busbw_GBps"] \
            else "check_nccl_allreduce"
        topo = row["nccl_topo_arg"]
        lines.append(f"{check} {floor[0]} 1 {row['nccl_msg_size']}"
                     + (f" $AZ_NHC_ROOT/topofiles/{topo}" if topo and topo != "(none)" else ""))
    if row["ib_bw_gdr_min_Gbps"]:
        lines.append(f"check_ib_bw_gdr {row['ib_bw_gdr_min_Gbps']}")
    non_gdr = re.fullmatch(r"([\d.]+)(?: \((\d+) B msgs\))?", row["ib_bw_non_gdr_min_Gbps"] or row["other"])
    if non_gdr:
        lines.append(" ".join(["check_ib_bw_non_gdr", *(g for g in non_gdr.groups() if g)]))
    return _checks(lines)


def _realigned_row(row: dict[str, str]) -> dict[str, str]:
    """Undo the TSV's two misaligned rows: nd40rs_v2 (one tab too many before its IB columns) and
    nc40ads_h100_v5 (its ``other`` one column early); rows ending early have empty columns."""
    row = {key: value or "" for key, value in row.items() if key is not None}
    if row["ib_bw_gdr_min_Gbps"].startswith("mlx"):  # nd40rs_v2: rate, HCA and non-GDR floor shifted right
        return {**row, "ib_rate_Gbps_per_port": row["ib_ports"], "ib_ports": row["ib_bw_gdr_min_Gbps"],
                "ib_bw_gdr_min_Gbps": "", "ib_bw_non_gdr_min_Gbps": "", "other": row["ib_bw_non_gdr_min_Gbps"]
                + row["other"]}
    if row["ib_bw_non_gdr_min_Gbps"].startswith("check_"):
        return {**row, "ib_bw_non_gdr_min_Gbps": "", "other": row["ib_bw_non_gdr_min_Gbps"]}
    return row


def test_the_recorded_checks_are_the_shared_transcriptions(shared_dir):
    """UPSTREAM_CHECKS (read from the confs at UPSTREAM_COMMIT, and compared with a checkout of that commit
    when it was recorded) against the second transcription in ../shared, every in-scope check the TSV
    carries: GPU count, IB link rate per HCA, RDMA bandwidth (GPUDirect or host memory, with its message
    size), the single-node NCCL/RCCL floor with its size and topology file. Runs wherever ../shared is,
    which CI provides."""
    tsv = shared_dir / "upstream/skus/azurehpc-nhc-thresholds.tsv"
    rows = csv.DictReader((line for line in tsv.read_text(encoding="utf-8").splitlines() if not line.startswith("#")),
                          delimiter="\t")
    by_conf = {row["sku_conf"]: _realigned_row(row) for row in rows}
    transcribed = {"check_gpu_count", "check_hw_ib", "check_ib_bw_gdr", "check_ib_bw_non_gdr", "check_nccl_allreduce",
                   "check_rccl_allreduce"}
    compared = 0
    for sku, row in load_nhc_data().skus.items():
        if row.get("commit", UPSTREAM_COMMIT) != UPSTREAM_COMMIT:
            continue  # GB200's conf is from a later commit, not in the TSV: compared with its own transcription
        recorded = Counter({c: n for c, n in _checks(UPSTREAM_CHECKS[sku]).items() if c[0] in transcribed})
        assert recorded == _transcribed_checks(by_conf[Path(row["conf"]).stem]), sku
        compared += 1
    assert compared == len(UPSTREAM_CHECKS) - 1 == 12  # all but GB200 (its own commit)


def test_a_size_azure_ships_no_conf_for_says_what_is_not_checked():
    # GB300: Azure publishes no conf and no floor for it (GB200's conf, and its 432 GB/s floor, came later).
    text = render_nhc_conf(nhc_plan(Catalog.load(()).get("Standard_ND128isr_GB300_v6")), ["test"])
    checks = dict(parse_nhc_conf(text))
    assert checks["check_gpu_count"] == ("4",) and "check_nvlink_status" in checks
    assert "check_hw_ib" not in checks and "check_nccl_allreduce" not in checks and "check_ib_bw_gdr" not in checks
    assert "# Not checked: IB link state and rate per HCA" in text
    assert "# Not checked: single-node NCCL all_reduce floor: none published" in text
    assert "ships no conf for this size" in text
    gb200 = dict(parse_nhc_conf(render_nhc_conf(nhc_plan(Catalog.load(()).get("Standard_ND128isr_NDR_GB200_v6")), ["t"])))
    assert gb200["check_nccl_allreduce"] == ("432", "1", "16G")


def test_single_gpu_sizes_have_no_collective_check():
    plan = nhc_plan(Catalog.load(()).get("Standard_NC24ads_A100_v4"))
    names = [c.name for c in plan.checks]
    assert "check_gpu_count" in names and "check_gpu_ecc" in names and not plan.unsourced
    assert not {"check_nccl_allreduce", "check_nvlink_status", "check_nccl_allreduce_ib_loopback"} & set(names)


def test_parse_skips_comments_and_blank_lines():
    assert parse_nhc_conf("# c\n\n * || check_gpu_count 8 # eight\n*||check_nvlink_status\n") == [
        ("check_gpu_count", ("8",)), ("check_nvlink_status", ())]


@pytest.mark.parametrize("sku", ["Standard_ND96isr_H100_v5", "Standard_ND96isr_MI300X_v5", "Standard_ND128isr_NDR_GB200_v6"])
def test_fast_plan_is_the_full_plan_without_its_bandwidth_tests(sku):
    plan = nhc_plan(Catalog.load(()).get(sku))
    fast = plan.fast()
    slow = {"check_gpu_bw", "check_ib_bw_gdr", "check_ib_bw_non_gdr", "check_nccl_allreduce",
            "check_nccl_allreduce_ib_loopback", "check_rccl_allreduce"}
    assert {c.name for c in plan.checks} & slow and not {c.name for c in fast.checks} & slow
    assert [c for c in plan.checks if c.name not in slow] == list(fast.checks)
    assert any("bandwidth" in gap for gap in fast.unsourced)


def test_gb200_conf_cites_one_source():
    text = render_nhc_conf(nhc_plan(Catalog.load(()).get("Standard_ND128isr_NDR_GB200_v6")), ["t"])
    assert set(re.findall(r"@([0-9a-f]{8})", text)) == {"215c6445"}


@pytest.mark.parametrize("sku", sorted(Catalog.load(()).names()))
def test_generated_confs_pass_the_nhc_rules(sku, tmp_path):
    from hpcconf.lint.context import LintContext, lookup_sku
    from hpcconf.lint.engine import lint_paths

    catalog_sku = Catalog.load(()).get(sku)
    path = tmp_path / "nhc.conf"
    plan = nhc_plan(catalog_sku)
    for variant in (plan, plan.fast(), plan.in_kubernetes_pod()):
        path.write_text(render_nhc_conf(variant, ["t"]), encoding="utf-8")
        findings = lint_paths([str(path)], LintContext(sku=lookup_sku(sku))).findings
        assert not [f for f in findings if f.code.startswith("NHC")], [(f.code, f.message) for f in findings]
    from hpcconf.lint.detect import detect_documents
    assert [d.kind for d in detect_documents("nhc.conf", path.read_text(encoding="utf-8"))] == ["nhc-conf"]
