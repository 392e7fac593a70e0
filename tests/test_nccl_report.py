"""hpcconf nccl-report: nccl-tests log parser, sourced floors, verdicts, renderers, plot data, job templates."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hpcconf.catalog import Catalog
from hpcconf.cli import app
from hpcconf.knowledge.nccl_floors import load_floors, size_bytes
from hpcconf.nccl_report.plot import PlotUnavailable, plot, plot_series
from hpcconf.nccl_report.verdict import Target, judge_runs
from hpcconf.parsers.nccl_tests_log import collective_from_name, parse_text, strip_prefixes

FIXTURES = Path(__file__).parent / "fixtures" / "nccl_logs"
NHC_TSV = Path(__file__).resolve().parents[1] / ".." / "shared" / "upstream" / "skus" / "azurehpc-nhc-thresholds.tsv"
runner = CliRunner()


def parsed(name: str, hint: str | None = None):
    return parse_text((FIXTURES / name).read_text(), name, hint)


def verdicts(name: str, sku: str | None, nodes: int | None = None):
    log = parsed(name, collective_from_name(name))
    target = Target(Catalog.load().get(sku) if sku else None, nodes)
    return judge_runs(name, log.runs, target, load_floors())


# ----------------------------------------------------------------------------- floors data

def _nhc_rows() -> dict[str, dict[str, str]]:
    lines = [line for line in NHC_TSV.read_text().splitlines() if not line.startswith("#")]
    return {row["sku_conf"]: row for row in csv.DictReader(lines, delimiter="\t")}


@pytest.mark.skipif(not NHC_TSV.exists(), reason="../shared/upstream/skus not present")
def test_every_nhc_nccl_threshold_is_a_floor_row_with_the_same_numbers():
    nhc = _nhc_rows()
    oracle_commit = NHC_TSV.read_text().splitlines()[0]
    # Rows read at another commit (the GB200 conf came later) have no row in the oracle file. RCCL's check
    # (check_rccl_allreduce, MI300X) is a floor too: rccl-tests print nccl-tests' table.
    floors = {f.source.rsplit("/", 1)[1].removesuffix(".conf"): f for f in load_floors().floors
              if f.commit and f.commit in oracle_commit}
    expected = {conf for conf, row in nhc.items() if row["nccl_allreduce_min_busbw_GBps"]}
    assert set(floors) == expected
    for conf, floor in floors.items():
        row = nhc[conf]
        assert floor.gbps == float(row["nccl_allreduce_min_busbw_GBps"].split()[0]), conf
        assert floor.message_size == row["nccl_msg_size"], conf
        assert floor.ranks == int(row["gpu_count"]) and floor.nodes == 1, conf
        assert floor.commit and NHC_TSV.read_text().splitlines()[0].find(floor.commit) > 0
        assert floor.sku.lower().removeprefix("standard_") == conf


def test_floor_skus_exist_and_catalog_thresholds_agree():
    catalog = Catalog.load()
    for floor in load_floors().floors:
        sku = catalog.get(floor.sku)
        assert sku.name == floor.sku and sku.gpu.count * floor.nodes == floor.ranks  # every GPU of every node
        nhc = [bw for bw in sku.busbw if bw.kind == "nhc_min" and bw.nodes == floor.nodes]
        assert all(bw.gbps == floor.gbps and size_bytes(bw.message_size) == floor.message_bytes for bw in nhc), floor


def test_every_nvlink_sku_has_a_line_rate():
    table = load_floors()
    for sku in Catalog.load():
        if sku.nvlink.present:
            assert table.nvlink_rate(sku.gpu.model) is not None, sku.name


# ----------------------------------------------------------------------------- parser on public logs

def test_kubectl_log_with_interleaved_nccl_info_lines():
    log = parsed("aks-ndmv4-2node-kubectl.log")
    (run,) = log.runs
    assert run.collective == "all_reduce"  # no name in the excerpt: inferred from count * 4 == size, redop sum
    assert run.ranks == 16 and run.hosts == []  # INFO lines give the rank count, never the node count
    assert len(run.rows) == 31 and run.rows[0].size == 8 and run.rows[-1].size == 8 << 30
    assert run.rows[-1].out_of_place.busbw == 189.20 and run.rows[-1].in_place.busbw == 189.28
    assert run.avg_busbw == 57.347 and run.out_of_bounds == 0


def test_slurm_excerpt_names_the_test_from_the_srun_line():
    (run,) = parsed("azhop-nc96v4-slurm-graph.log").runs
    assert run.collective == "all_reduce" and run.ranks == 4
    assert [r.busbw for r in run.rows][-1] == pytest.approx((28.05 + 28.01) / 2)


def test_collective_inferred_from_counts_when_nothing_names_it():
    (run,) = parsed("azhop-nc48v4-slurm-topo.log").runs
    assert run.collective == "all_reduce"  # count * 4 == size with redop sum


def test_rank_lines_give_hosts_and_gpus():
    (run,) = parsed("crusoe-h100-2node-srun.log").runs
    assert run.collective == "all_reduce" and run.ranks == 16 and run.nodes == 2
    assert run.hosts == ["slurm-compute-node-0", "slurm-compute-node-1"]
    assert set(run.gpus) == {"NVIDIA H100 80GB HBM3"}
    assert run.rows[-1].size == 2 << 30 and run.rows[-1].busbw == pytest.approx(460.28)


def test_rows_without_header_after_mpirun_line():
    (run,) = parsed("aks-ndmv4-2node-mpirun.log").runs
    assert run.collective == "all_reduce" and len(run.rows) == 31 and run.line == 2


@pytest.mark.parametrize("prefix", [
    lambda i: f"[1,{i % 16}]<stdout>:",                                       # mpirun --tag-output
    lambda i: "[pod/nccl-allreduce-job1-mpimaster-0/mpimaster] ",             # kubectl logs --prefix
    lambda i: "2024-05-01T10:00:00.123456789Z [pod/job-mpimaster-0/mpimaster] ",  # ... --timestamps
    lambda i: "0: ",                                                          # srun --label
])
def test_launcher_prefixes_are_stripped(prefix):
    text = (FIXTURES / "crusoe-h100-2node-srun.log").read_text()
    prefixed = "\n".join(prefix(i) + line for i, line in enumerate(text.splitlines()))
    plain, tagged = parse_text(text).runs[0], parse_text(prefixed).runs[0]
    assert [(r.size, r.out_of_place, r.in_place) for r in tagged.rows] == [
        (r.size, r.out_of_place, r.in_place) for r in plain.rows]
    assert tagged.hosts == plain.hosts and tagged.collective == "all_reduce"


def test_data_row_is_not_mistaken_for_a_prefix():
    assert strip_prefixes("8 2 float sum -1 1.0 0.00 0.00 0") == "8 2 float sum -1 1.0 0.00 0.00 0"


# nccl-tests 2.19 layout (util.cu's format strings): several tests and data types in one log, N/A in #wrong.
MULTI = """\
# Collective test starting: alltoall_perf
# nThread 1 nGpus 2 minBytes 1048576 maxBytes 4194304 step: 2(factor) warmup iters: 1 iters: 5 agg iters: 1 validation: 0 graph: 0
#
# Using devices
#  Rank  0 Group  0 Pid   1234 on     gpu-01 device  0 [0000:19:00] NVIDIA H200
#  Rank  1 Group  0 Pid   1234 on     gpu-01 device  1 [0000:3b:00] NVIDIA H200
#
#                                                              out-of-place                       in-place
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
gpu-01:1234:1240 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM
     1048576        131072     float    none      -1    10.00  104.86   52.43    N/A    10.00  104.86   52.43    N/A
     2097152        262144     float    none      -1    15.00  139.81   69.91    N/A    15.00  139.81   69.91    N/A
gpu-01:1234:1240 [1] NCCL WARN NET/Socket : message truncated
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 61.17
# Collective test concluded: alltoall_perf
# Collective test starting: all_reduce_perf
# nThread 1 nGpus 2 minBytes 1048576 maxBytes 2097152 step: 2(factor) warmup iters: 1 iters: 5 agg iters: 1 validation: 1 graph: 0
#  Rank  0 Group  0 Pid   1240 on     gpu-01 device  0 [0000:19:00] NVIDIA H200
#  Rank  1 Group  0 Pid   1240 on     gpu-01 device  1 [0000:3b:00] NVIDIA H200
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
     1048576        262144     float     sum      -1    20.00   52.43   52.43      0    20.00   52.43   52.43      0
     1048576        524288      half     sum      -1    21.00   49.93   49.93      0    21.00   49.93   49.93      3
"""


def test_several_tests_types_na_and_wrong_columns():
    log = parse_text(MULTI)
    alltoall, allreduce = log.runs
    assert alltoall.collective == "alltoall" and allreduce.collective == "all_reduce"
    assert alltoall.rows[0].out_of_place.wrong is None and alltoall.rows[0].wrong == 0
    assert alltoall.ranks == 2 and alltoall.nodes == 1 and alltoall.warnings[0][0] == 14
    assert allreduce.dtypes() == ["float", "half"] and allreduce.series("half")[0].wrong == 3
    result = judge_runs("m.log", log.runs, Target(), load_floors())
    assert [(v.run.collective, v.dtype, v.status) for v in result] == [
        ("alltoall", "float", "no floor"), ("all_reduce", "float", "no floor"), ("all_reduce", "half", "wrong")]


# ----------------------------------------------------------------------------- verdicts

def test_pass_below_size_of_floor_is_a_pass_and_slow_graph_run_is_inconclusive():
    (good,) = verdicts("azhop-nc48v4-slurm-topo.log", "NC48ads_A100_v4", 1)
    (slow,) = verdicts("azhop-nc48v4-slurm-graph.log", "NC48ads_A100_v4", 1)
    assert good.status == "pass" and good.measured == 225.06 and good.floor.gbps == 193.0
    assert slow.status == "inconclusive" and "rerun with -e 16G" in slow.message and not slow.failed


def test_below_floor_at_the_floors_size_gives_gap():
    text = (FIXTURES / "azhop-nc48v4-slurm-graph.log").read_text()
    # the same slow run, carried on to the floor's 16G (the 8G row's bandwidth, twice the bytes and time)
    text = text.replace("# Avg bus bandwidth", "17179869184 4294967296 float sum -1 298572 57.54 57.54 0 "
                                              "295968 58.05 58.05 0\n# Avg bus bandwidth")
    (v,) = judge_runs("x.log", parse_text(text).runs, Target(Catalog.load().get("NC48ads_A100_v4"), 1), load_floors())
    assert v.status == "below" and v.failed and v.measured == pytest.approx(57.8, abs=0.01)
    assert v.gap_gbps == pytest.approx(135.2, abs=0.01) and v.gap_percent == 70.1
    assert "below floor" in v.message and "-70.1%" in v.message


def test_a_derived_floor_where_none_is_published():
    (v,) = verdicts("crusoe-h100-2node-srun.log", "h100-80gb-sxm-ib.8x")
    # no published threshold for 2 nodes: 0.8 x the node's 8 x 400 Gb/s, labelled derived (nccl_floors.yaml)
    assert v.status == "pass" and v.derived and v.floor is not None and v.floor.gbps == 320.0 and v.nodes == 2
    assert "pass (derived floor)" in v.message
    assert v.reference is not None and v.reference.gbps == 460.01  # the published run itself
    labels = [limit.label for limit in v.limits]
    assert labels[0].startswith("limit with NVLSTree") and any(label.startswith("InfiniBand 8 x 400") for label in labels)
    assert v.limits[0].gbps >= v.reference.gbps  # the limit bounds the published healthy run


def test_fewer_gpus_than_the_floor_was_set_for_get_no_floor():
    (run,) = parse_text(MULTI).runs[1:]
    target = Target(Catalog.load().get("ND96isr_H200_v5"), 1)
    assert judge_runs("m", [run], target, load_floors())[0].status == "no floor"  # 2 ranks, floor is for 8


# ----------------------------------------------------------------------------- CLI

def test_cli_exit_codes_and_formats(tmp_path):
    good = str(FIXTURES / "azhop-nc48v4-slurm-topo.log")
    result = runner.invoke(app, ["nccl-report", good, "--sku", "NC48ads_A100_v4", "--nodes", "1"])
    assert result.exit_code == 0 and "pass" in result.output and "nc48ads_a100_v4.conf @0e0a1ac2" in result.output
    below = tmp_path / "below.log"
    below.write_text((FIXTURES / "azhop-nc48v4-slurm-graph.log").read_text()
                     + "17179869184 4294967296 float sum -1 298572 57.54 57.54 0 295968 58.05 58.05 0\n")
    result = runner.invoke(app, ["nccl-report", str(below), "--sku", "NC48ads_A100_v4", "--nodes", "1",
                                 "--format", "json"])
    assert result.exit_code == 1
    data = json.loads(result.output)
    assert data["passed"] is False and data["verdicts"][0]["status"] == "below"
    assert data["verdicts"][0]["floor"]["gbps"] == 193.0 and len(data["verdicts"][0]["rows"]) == 32
    result = runner.invoke(app, ["nccl-report", good, "--sku", "NC48ads_A100_v4", "--nodes", "1", "--format", "markdown"])
    assert result.exit_code == 0 and result.output.startswith("| log | collective |")
    empty = tmp_path / "empty.log"
    empty.write_text("nothing here\n")
    assert runner.invoke(app, ["nccl-report", str(empty)]).exit_code == 2
    assert runner.invoke(app, ["nccl-report", good, "--format", "xml"]).exit_code == 2
    assert runner.invoke(app, ["nccl-report", good, "--sku", "NoSuchSku"]).exit_code == 2


def test_cli_spec_gives_sku_and_nodes():
    # The spec's test pool is 2 x ND96amsr_A100_v4: no published floor for 2 nodes, a derived one (0.8 x 200 GB/s),
    # and the 2-node reference run shown.
    spec = Path(__file__).resolve().parents[1] / "examples" / "ndmv4-aks-current.yaml"
    result = runner.invoke(app, ["nccl-report", str(FIXTURES / "aks-ndmv4-2node-mpirun.log"), "--spec", str(spec)])
    assert result.exit_code == 0, result.output
    assert "pass (derived floor)" in result.output and "160.00 (derived)" in result.output
    assert "reference 189.2 GB/s at 8G (Standard_ND96amsr_A100_v4, 2 node(s))" in result.output


# ----------------------------------------------------------------------------- plot

def test_plot_series_are_the_logs_numbers():
    result = verdicts("azhop-nc48v4-slurm-topo.log", "NC48ads_A100_v4", 1) + verdicts(
        "azhop-nc48v4-slurm-graph.log", "NC48ads_A100_v4", 1)
    series, levels = plot_series(result)
    assert len(series) == 2 and series[0].sizes[-1] == 8 << 30 and series[0].busbw[-1] == 225.06
    assert series[1].busbw[-1] == 57.8
    assert {(level.kind, level.gbps) for level in levels} == {("floor", 193.0), ("limit", 300.0), ("line rate", 300.0)}
    # the legend says where the floor comes from: the NHC threshold is published
    (floor,) = [level for level in levels if level.kind == "floor"]
    assert floor.label.startswith("floor 193 GB/s (published, ")


def test_plot_writes_svg_or_says_what_is_missing(tmp_path):
    result = verdicts("azhop-nc48v4-slurm-topo.log", "NC48ads_A100_v4", 1)
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        with pytest.raises(PlotUnavailable, match=r"pip install 'hpcconf\[plot\]'"):
            plot(result, tmp_path / "p.svg")
        return
    plot(result, tmp_path / "p.svg")
    svg = (tmp_path / "p.svg").read_text()
    assert "series:azhop-nc48v4-slurm-topo.log all_reduce float" in svg and "floor:193" in svg


def test_plot_without_matplotlib_fails_before_printing_the_report(tmp_path, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib raises ImportError
    result = runner.invoke(app, ["nccl-report", str(FIXTURES / "azhop-nc48v4-slurm-topo.log"),
                                      "--sku", "NC48ads_A100_v4", "--plot", str(tmp_path / "p.svg")])
    assert result.exit_code == 2, result.output
    assert "pip install 'hpcconf[plot]'" in result.output
    assert "all_reduce" not in result.output and "Sources" not in result.output  # no report before the error
    assert not (tmp_path / "p.svg").exists()


# ----------------------------------------------------------------------------- generated jobs

def test_generated_jobs_run_the_matrix_and_end_with_the_verdict():
    from hpcconf.pipeline import compile_spec

    examples = Path(__file__).resolve().parents[1] / "examples"
    sbatch = next(a for a in compile_spec(examples / "azhop-ncv4.yaml").artifacts if a.path.endswith(".sbatch"))
    assert "TESTS=(all_reduce all_gather reduce_scatter alltoall sendrecv)" in sbatch.content
    assert 'for test in "${TESTS[@]}"; do' in sbatch.content
    lines = sbatch.content.rstrip().splitlines()
    assert lines[-1] == 'exit "$RC"'  # the worst verdict is the job's exit status
    assert 'judge() { local rc=0; hpcconf nccl-report --sku Standard_' in sbatch.content
    assert any(line.startswith("  judge --nodes ") and line.endswith('"${LOGS[@]}"') for line in lines)
    job = next(a for a in compile_spec(examples / "ndmv4-aks-current.yaml").artifacts if a.path.endswith("volcano-job.yaml"))
    assert "${test}_perf" in job.content and "hpcconf nccl-report --sku Standard_ND96amsr_A100_v4" in job.content
    assert "judge --nodes 2 /tmp/all_reduce.log" in job.content


def test_matrix_puts_the_named_collective_first_once():
    from hpcconf.spec.model import NcclTest

    assert NcclTest(collective="alltoall").matrix() == ["alltoall", "all_reduce", "all_gather", "reduce_scatter", "sendrecv"]
    assert NcclTest(collectives=["sendrecv"]).matrix() == ["all_reduce", "sendrecv"]
