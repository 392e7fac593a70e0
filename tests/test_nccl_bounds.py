"""Floors and limits for every SKU, node count and collective; --baseline on the recorded 2 x H200 logs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hpcconf.catalog import Catalog
from hpcconf.cli import app
from hpcconf.knowledge.nccl_bounds import MATRIX, floor, limit
from hpcconf.nccl_report import bounds_doc
from hpcconf.parsers.nccl_tests_log import parse_text

ROOT = Path(__file__).resolve().parents[1]
LOGS = ROOT.parent / "shared" / "upstream" / "nccl" / "h200x2-nccl-tests"
HEALTHY = ("all_gather.txt", "allreduce-default.txt", "alltoall.txt", "broadcast.txt", "reduce_scatter.txt",
           "sendrecv.txt")
runner = CliRunner()


def _logs() -> Path:
    if not LOGS.is_dir():
        pytest.skip(f"{LOGS} is absent (CI checks out ../shared: .ci/run refuses to run without it)")
    return LOGS


@pytest.mark.parametrize("name", sorted(Catalog.load().names()))
def test_every_floor_sits_at_or_below_its_limit(name: str) -> None:
    sku = Catalog.load().get(name)
    for nodes in bounds_doc.NODES:
        for collective in MATRIX:
            f, lim = floor(sku, collective, nodes, nodes * sku.gpu.count), limit(sku, collective, nodes)
            if f is not None:
                assert f.origin in ("published", "derived") and f.source
                assert lim is not None and f.gbps <= lim.gbps, (name, nodes, collective, f, lim)


def test_the_docs_table_is_generated_from_the_data() -> None:
    text = bounds_doc.DOC.read_text(encoding="utf-8")
    assert bounds_doc.rendered(text) == text, "run: python -m hpcconf.nccl_report.bounds_doc"


def test_nd_h100_v5_multi_node_gets_a_derived_floor_from_its_network() -> None:
    sku = Catalog.load().get("Standard_ND96isr_H100_v5")
    f = floor(sku, "all_reduce", 4, 32)
    assert f is not None and f.origin == "derived" and f.gbps == 320.0  # 0.8 x 8 x 400 Gb/s / 8
    assert floor(sku, "all_reduce", 4, 16) is None  # half the GPUs: another shape, no floor
    assert floor(sku, "all_reduce", 1, 8).origin == "published"  # Azure's 460 GB/s stays


def _multi_node_log(nodes: int, gpus: int, busbw: float) -> str:
    ranks = nodes * gpus
    lines = ["# nccl-tests version 2.16.4 nccl-headers=22809 nccl-library=22809",
             "# Collective test starting: all_reduce_perf",
             "# nThread 1 nGpus 1 minBytes 1073741824 maxBytes 8589934592 step: 2(factor) warmup iters: 5 iters: 20",
             "#", "# Using devices"]
    lines += [f"#  Rank {r:2d} Group  0 Pid  {100 + r} on node-{r // gpus} device  {r % gpus} [0x00] NVIDIA H100 80GB HBM3"
              for r in range(ranks)]
    lines += ["#", "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong",
              "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)"]
    for size in (1 << 30, 1 << 31, 1 << 32, 1 << 33):
        algbw = busbw * ranks / (2 * (ranks - 1))
        time_us = size / algbw / 1e3
        lines.append(f"{size:>12d} {size // 4:>13d}     float     sum      -1  {time_us:8.1f}  {algbw:6.2f}  {busbw:6.2f}"
                     f"       0  {time_us:8.1f}  {algbw:6.2f}  {busbw:6.2f}       0")
    lines += ["# Out of bounds values : 0 OK", f"# Avg bus bandwidth    : {busbw:g}", "#"]
    return "\n".join(lines) + "\n"


def test_a_4_node_nd_h100_v5_run_at_208_gbps_is_below_its_derived_floor(tmp_path: Path) -> None:
    log = tmp_path / "all_reduce.log"
    log.write_text(_multi_node_log(4, 8, 208.0))
    assert parse_text(log.read_text()).runs[0].nodes == 4
    result = runner.invoke(app, ["nccl-report", str(log), "--sku", "Standard_ND96isr_H100_v5"])
    assert result.exit_code == 1, result.output
    assert "below the derived floor: 208 GB/s at 8G, derived floor 320 GB/s" in result.output
    assert "320.00 (derived)" in result.output
    healthy = tmp_path / "healthy.log"
    healthy.write_text(_multi_node_log(4, 8, 370.0))
    result = runner.invoke(app, ["nccl-report", str(healthy), "--sku", "Standard_ND96isr_H100_v5", "--format", "json"])
    assert result.exit_code == 0, result.output
    verdict = json.loads(result.stdout)["verdicts"][0]
    assert verdict["status"] == "pass" and verdict["floor"]["origin"] == "derived"
    assert verdict["limits"][0]["gbps"] >= 370.0  # the NVLSTree limit bounds a healthy run


@pytest.mark.parametrize("name", HEALTHY)
def test_recorded_healthy_logs_never_exceed_their_limit(name: str) -> None:
    text = (_logs() / name).read_text()
    run = parse_text(text, name).runs[0]
    sku = Catalog.load().get("Standard_ND96isr_H200_v5")  # the same GPU, 2 of its 8 on NVLink
    lim = limit(sku, run.collective, 1, run.ranks)
    assert lim is not None and max(r.busbw for r in run.rows) <= lim.gbps, (name, lim)


def test_the_graph_file_run_is_below_its_baseline_and_healthy_runs_pass() -> None:
    logs = _logs()
    bad = runner.invoke(app, ["nccl-report", str(logs / "allreduce-graph2ch.txt"),
                              "--baseline", str(logs / "allreduce-default.txt")])
    assert bad.exit_code == 1, bad.output
    assert "below against" in bad.output and "28% of the baseline's busbw at >= 64 MiB" in bad.output
    for name in HEALTHY:
        good = runner.invoke(app, ["nccl-report", str(logs / name), "--baseline", str(logs / name)])
        assert good.exit_code == 0 and "pass against" in good.output, good.output


def test_a_json_report_is_a_baseline_too(tmp_path: Path) -> None:
    logs = _logs()
    recorded = runner.invoke(app, ["nccl-report", str(logs / "allreduce-default.txt"), "--format", "json"])
    (tmp_path / "good.json").write_text(recorded.stdout)
    result = runner.invoke(app, ["nccl-report", str(logs / "allreduce-graph2ch.txt"), "--format", "json",
                                 "--baseline", str(tmp_path / "good.json")])
    data = json.loads(result.stdout)
    assert result.exit_code == 1 and data["passed"] is False
    assert data["baseline"][0]["status"] == "below" and data["baseline"][0]["bands"][-1]["median_ratio"] < 0.3


def test_a_baseline_of_another_collective_or_a_bad_tolerance_is_refused() -> None:
    logs = _logs()
    other = runner.invoke(app, ["nccl-report", str(logs / "all_gather.txt"), "--baseline", str(logs / "allreduce-default.txt")])
    assert other.exit_code == 2 and "has no all_gather float run" in other.output
    bad = runner.invoke(app, ["nccl-report", str(logs / "all_gather.txt"), "--tolerance", "0"])
    assert bad.exit_code == 2 and "--tolerance must be" in bad.output


def test_the_plot_of_the_recorded_logs_reads_as_it_should(tmp_path: Path) -> None:
    from hpcconf.nccl_report.plot import plot_series, plot_title

    logs = _logs()
    result = runner.invoke(app, ["nccl-report", str(logs / "allreduce-default.txt"), str(logs / "allreduce-graph2ch.txt"),
                                 "--sku", "Standard_ND96isr_H200_v5", "--nodes", "1", "--format", "json"])
    assert result.exit_code == 0
    from hpcconf.knowledge.nccl_floors import load_floors
    from hpcconf.nccl_report.verdict import Target, judge_runs

    target = Target(Catalog.load().get("Standard_ND96isr_H200_v5"), 1)
    verdicts = [v for name in ("allreduce-default.txt", "allreduce-graph2ch.txt")
                for v in judge_runs(name, parse_text((logs / name).read_text(), name).runs, target, load_floors())]
    series, levels = plot_series(verdicts)
    assert [s.label for s in series] == ["allreduce-default.txt all_reduce float", "allreduce-graph2ch.txt all_reduce float"]
    assert series[0].busbw[-1] > 3.9 * series[1].busbw[-1]  # the graph file costs three quarters of busbw at 1 GiB
    limit_levels = [lv for lv in levels if lv.kind == "limit"]
    assert limit_levels and all(lv.gbps >= max(series[0].busbw) for lv in limit_levels)  # a limit bounds the data
    assert plot_title(verdicts).startswith("Standard_ND96isr_H200_v5 | 1 node(s) | all_reduce")
