"""nccl-report's verdict at its boundaries: busbw at, just below and just above the floor; a log
without the floor's size; ``--spec`` giving the SKU and the node count its generated job runs on.

The floor judged here is NC48ads_A100_v4's all_reduce on one node, 2 ranks: 193 GB/s at 16G
(``hpcconf/data/nccl_floors.yaml``, from azurehpc-health-checks' ``nc48ads_a100_v4.conf``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hpcconf.catalog import Catalog
from hpcconf.cli import app
from hpcconf.knowledge.nccl_floors import load_floors
from hpcconf.nccl_report.command import target_from_spec
from hpcconf.nccl_report.verdict import Target, judge_runs
from hpcconf.parsers.nccl_tests_log import parse_text

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures" / "nccl_logs"
SKU = "NC48ads_A100_v4"
FLOOR_GBPS, FLOOR_BYTES = 193.0, 16 << 30
runner = CliRunner()

HEADER = """# nccl-tests all_reduce_perf on 1 x NC48ads_A100_v4
#  Rank  0 Group  0 Pid  74927 on nc48v4-pg0-1 device  0 [0x00] NVIDIA A100 80GB PCIe
#  Rank  1 Group  0 Pid  74928 on nc48v4-pg0-1 device  1 [0x00] NVIDIA A100 80GB PCIe
# out-of-place in-place
# size count type redop root time algbw busbw #wrong time algbw busbw #wrong
# (B) (elements) (us) (GB/s) (GB/s) (us) (GB/s) (GB/s)
"""


def _log(rows: list[tuple[int, float, float]]) -> str:
    """An all_reduce log of the given (bytes, out-of-place busbw, in-place busbw) rows."""
    body = "".join(f"{size} {size // 4} float sum -1 1000.0 {oop:.2f} {oop:.2f} 0 1000.0 {ip:.2f} {ip:.2f} 0\n"
                   for size, oop, ip in rows)
    return HEADER + body + "# Out of bounds values : 0 OK\n# Avg bus bandwidth : 1.0\n"


def _ramp(last: int, busbw: float) -> list[tuple[int, float, float]]:
    """Sizes 1G .. ``last`` doubling, the last one at ``busbw`` and smaller ones below it."""
    sizes, size = [], 1 << 30
    while size <= last:
        sizes.append(size)
        size *= 2
    return [(s, busbw - 10.0 * (len(sizes) - 1 - i), busbw - 10.0 * (len(sizes) - 1 - i)) for i, s in enumerate(sizes)]


def _verdict(text: str, nodes: int | None = 1):
    (verdict,) = judge_runs("x.log", parse_text(text, "x.log", "all_reduce").runs,
                            Target(Catalog.load().get(SKU), nodes), load_floors())
    return verdict


def test_the_floor_judged_here_is_the_published_one():
    floor = load_floors().floor("Standard_" + SKU, "all_reduce", 1, 2)
    assert floor is not None and (floor.gbps, floor.message_bytes) == (FLOOR_GBPS, FLOOR_BYTES)


@pytest.mark.parametrize("oop,ip,status", [
    (193.00, 193.00, "pass"),      # exactly at the floor passes (the health check's ">=")
    (192.98, 193.02, "pass"),      # the mean of the two columns is what is judged
    (193.01, 193.01, "pass"),      # just above
    (192.99, 192.99, "below"),     # just below
    (193.00, 192.98, "below"),     # mean 192.99
    # the mean (192.995) is judged at the 0.01 GB/s nccl-tests prints, as the job's awk check (sprintf "%.2f")
    # judges it: 193.00 passes; judged unrounded it would fail (the mutation review's non-equivalent survivor)
    (192.99, 193.00, "pass"),
])
def test_busbw_at_and_around_the_floor(oop, ip, status):
    v = _verdict(_log(_ramp(FLOOR_BYTES, 150.0)[:-1] + [(FLOOR_BYTES, oop, ip)]))
    assert (v.status, v.at_size, v.measured) == (status, FLOOR_BYTES, round((oop + ip) / 2, 2)), v.message
    assert v.failed is (status == "below")
    if status == "below":
        assert v.gap_gbps == round(FLOOR_GBPS - v.measured, 2) and f"floor {FLOOR_GBPS:g} GB/s" in v.message
    else:
        assert v.message.startswith(f"pass: {v.measured:g} >= 193 GB/s at 16G") and "(the floor is set" not in v.message


@pytest.mark.parametrize("busbw,exit_code", [(193.0, 0), (192.99, 1)])
def test_exit_status_at_the_floor(tmp_path, busbw, exit_code):
    log = tmp_path / "nc48.log"
    log.write_text(_log(_ramp(FLOOR_BYTES, busbw)))
    result = runner.invoke(app, ["nccl-report", str(log), "--sku", SKU, "--nodes", "1", "--format", "json"])
    assert result.exit_code == exit_code, result.output
    assert json.loads(result.output)["passed"] is (exit_code == 0)


def test_a_log_stopping_below_the_floors_size_passes_only_when_already_above_the_floor():
    passing = _verdict(_log(_ramp(8 << 30, 200.0)))
    assert (passing.status, passing.at_size, passing.measured) == ("pass", 8 << 30, 200.0)
    assert "(the floor is set at 16G; busbw only grows with size)" in passing.message
    slow = _verdict(_log(_ramp(8 << 30, 192.99)))
    assert (slow.status, slow.at_size, slow.failed) == ("inconclusive", 8 << 30, False)
    assert "rerun with -e 16G" in slow.message


def test_without_a_row_at_the_floors_size_a_larger_size_is_never_judged():
    # 8G slow, 16G missing, 32G fast: the 32G row says nothing about 16G, the largest smaller row decides.
    rows = [(8 << 30, 150.0, 150.0), (32 << 30, 250.0, 250.0)]
    v = _verdict(_log(rows))
    assert (v.status, v.at_size, v.measured) == ("inconclusive", 8 << 30, 150.0), v.message
    only_larger = _verdict(_log([(32 << 30, 250.0, 250.0)]))
    assert only_larger.status == "inconclusive" and only_larger.measured is None
    assert only_larger.message == "inconclusive: every message is larger than the floor's 16G"


def test_another_node_count_has_no_floor():
    v = _verdict(_log(_ramp(FLOOR_BYTES, 250.0)), nodes=2)
    assert v.status == "no floor" and v.nodes == 2 and "on 2 x Standard_NC48ads_A100_v4" in v.message


def test_spec_gives_the_sku_and_the_node_count_of_its_aks_job():
    spec = REPO / "examples" / "ndmv4-aks-current.yaml"
    target = target_from_spec(spec, [])
    assert (target.sku.name, target.nodes) == ("Standard_ND96amsr_A100_v4", 2)
    log = str(FIXTURES / "aks-ndmv4-2node-mpirun.log")
    by_spec = runner.invoke(app, ["nccl-report", log, "--spec", str(spec), "--format", "json"])
    by_hand = runner.invoke(app, ["nccl-report", log, "--sku", "ND96amsr_A100_v4", "--nodes", "2", "--format", "json"])
    assert by_spec.exit_code == by_hand.exit_code == 0, by_spec.output
    assert by_spec.output == by_hand.output
    (verdict,) = json.loads(by_spec.output)["verdicts"]
    # no published 2-node floor: judged against the derived one, found by the spec's SKU and node count
    assert verdict["nodes"] == 2 and verdict["floor"]["origin"] == "derived" and verdict["floor"]["gbps"] == 160.0
    assert verdict["reference"]["gbps"] == 189.2  # the published 2-node NDm A100 v4 run: found by SKU and nodes


def test_spec_gives_the_node_count_the_slurm_job_runs_on():
    # azhop-ncv4.yaml tests its nc96v4 queue (2 nodes, no InfiniBand): the sbatch runs one node (--nodes 1).
    spec = REPO / "examples" / "azhop-ncv4.yaml"
    target = target_from_spec(spec, [])
    assert (target.sku.name, target.nodes) == ("Standard_NC96ads_A100_v4", 1)
    result = runner.invoke(app, ["nccl-report", str(FIXTURES / "azhop-nc96v4-slurm-topo.log"), "--spec", str(spec)])
    assert result.exit_code == 0 and "pass: 28.19 >= 25 GB/s at 8G" in result.output, result.output


# ----------------------------------------------------------------------------- what is not judged, and why

def test_no_sku_no_nodes_another_type_are_each_named():
    text = _log(_ramp(FLOOR_BYTES, 250.0))
    (no_sku,) = judge_runs("x.log", parse_text(text, "x.log", "all_reduce").runs, Target(), load_floors())
    assert (no_sku.status, no_sku.message) == ("no floor", "no floor: no SKU given (--sku or --spec)")
    hostless = "\n".join(line for line in text.splitlines() if "Rank" not in line) + "\n"
    (no_nodes,) = judge_runs("x.log", parse_text(hostless, "x.log", "all_reduce").runs,
                             Target(Catalog.load().get(SKU), None), load_floors())
    assert no_nodes.status == "no floor" and no_nodes.message.endswith("pass --nodes") and no_nodes.limits == []
    half = text.replace(" float sum ", " half sum ")
    (v,) = judge_runs("x.log", parse_text(half, "x.log", "all_reduce").runs, Target(Catalog.load().get(SKU), 1),
                      load_floors())
    assert (v.status, v.floor, v.measured) == ("no floor", None, None)
    assert v.message == "no floor: the 193 GB/s threshold is set with float, this series is half"


def test_a_verdict_without_a_measurement_renders_without_gap(tmp_path):
    log = tmp_path / "big.log"
    log.write_text(_log([(32 << 30, 250.0, 250.0)]))
    result = runner.invoke(app, ["nccl-report", str(log), "--sku", SKU, "--nodes", "1", "--format", "json"])
    (verdict,) = json.loads(result.output)["verdicts"]
    assert result.exit_code == 0 and verdict["status"] == "inconclusive"
    assert verdict["floor"]["gbps"] == FLOOR_GBPS and verdict["gap_gbps"] is None and verdict["gap_percent"] is None


def test_line_rates_beside_the_floor():
    h100 = Catalog.load().get("ND96isr_H100_v5")
    text = _log(_ramp(FLOOR_BYTES, 470.0)).replace("NC48ads_A100_v4", "ND96isr_H100_v5")
    (one,) = judge_runs("x.log", parse_text(text, "x.log", "all_reduce").runs, Target(h100, 1), load_floors())
    # one node: the collective's ceiling first (NVLS reduces in the switch), then the NVLink line rate; no fabric
    assert [limit.label for limit in one.limits] == ["limit with NVLS (reduction in the NVSwitch) (derived)",
                                                     "NVLink per GPU, one direction"]
    assert one.limits[1].gbps == 450.0  # H100 SXM NVLink 900 GB/s, half per direction
    (two,) = judge_runs("x.log", parse_text(text, "x.log", "all_reduce").runs, Target(h100, 2), load_floors())
    assert ("InfiniBand 8 x 400 Gb/s NDR per node", 400.0) in [(limit.label, limit.gbps) for limit in two.limits]


@pytest.mark.parametrize("size,shown", [(16 << 30, "16G"), (1 << 30, "1G"), (3 << 20, "3M"), (1 << 10, "1K"),
                                        (1023, "1023B"), (1536, "1536B"), ((1 << 30) + (1 << 20), "1025M"), (0, "0B")])
def test_sizes_are_shown_as_nccl_tests_writes_them(size, shown):
    from hpcconf.nccl_report.verdict import human_size

    assert human_size(size) == shown


def test_collective_option_names_an_unnamed_log(tmp_path):
    log = tmp_path / "run.log"  # neither the text nor the file name says which collective ran
    # (root 0: the counts fit reduce and broadcast alike, so they do not tell either)
    log.write_text(_log(_ramp(FLOOR_BYTES, 250.0)).replace("all_reduce_perf", "perf").replace(" sum -1 ", " sum 0 "))
    alone = runner.invoke(app, ["nccl-report", str(log), "--sku", SKU, "--nodes", "1"])
    assert alone.exit_code == 0 and "no floor: the log does not name the collective; pass --collective" in alone.output
    result = runner.invoke(app, ["nccl-report", str(log), "--sku", SKU, "--nodes", "1", "--collective", "all_reduce",
                                 "--format", "json"])
    assert result.exit_code == 0, result.output
    (verdict,) = json.loads(result.output)["verdicts"]
    assert (verdict["collective"], verdict["status"]) == ("all_reduce", "pass")
