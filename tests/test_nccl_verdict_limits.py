"""nccl-report's limits and derived floors where a mutation run (tools/mutation.py, docs/mutation.md) found
them unpinned: across nodes the InfiniBand line rate is the first limit (the table's "limit" column), and a
derived floor names the ranks it was derived for, also when the log does not say how many ranks ran."""

from __future__ import annotations

from pathlib import Path

from hpcconf.catalog import Catalog
from hpcconf.knowledge.nccl_floors import load_floors
from hpcconf.nccl_report.verdict import Target, judge_runs, limits_for
from hpcconf.parsers.nccl_tests_log import parse_text

LOG = Path(__file__).parent / "fixtures" / "nccl_logs" / "crusoe-h100-2node-srun.log"
SKU = "h100-80gb-sxm-ib.8x"  # 8 GPUs with NVLink, 8 x 400 Gb/s NDR InfiniBand


def _verdict(text: str):
    (verdict,) = judge_runs("x.log", parse_text(text, "x.log", None).runs, Target(Catalog.load().get(SKU), 2),
                            load_floors())
    return verdict


def test_across_nodes_the_fabric_is_the_first_line_rate():
    labels = [limit.label for limit in limits_for(Catalog.load().get(SKU), None, 2, load_floors())]
    assert labels[0].startswith("InfiniBand 8 x 400") and labels[1].startswith("NVLink"), labels
    verdict = _verdict(LOG.read_text())
    line_rates = [limit.label for limit in verdict.limits[1:]]  # after the collective's own ceiling
    assert line_rates[0].startswith("InfiniBand") and line_rates[1].startswith("NVLink"), line_rates


def test_on_one_node_nvlink_is_the_only_line_rate():
    labels = [limit.label for limit in limits_for(Catalog.load().get(SKU), None, 1, load_floors())]
    assert len(labels) == 1 and labels[0].startswith("NVLink"), labels


def test_a_derived_floor_names_the_runs_ranks():
    verdict = _verdict(LOG.read_text())
    assert verdict.derived and verdict.run.ranks == 16 and verdict.floor.ranks == 16


def test_a_derived_floor_without_rank_lines_counts_one_rank_per_gpu():
    text = "\n".join(line for line in LOG.read_text().splitlines() if "Rank" not in line)
    verdict = _verdict(text)
    assert verdict.run.ranks is None
    assert verdict.derived and verdict.floor.ranks == 2 * 8  # nodes x GPUs per node


def test_tolerance_bounds_are_above_zero_and_at_most_one_and_a_half():
    """--tolerance is a ratio above 0 and at most 1.5 (its error message and --help): both ends pinned."""
    from typer.testing import CliRunner

    from hpcconf.cli import app

    log = str(Path(__file__).parent / "fixtures" / "nccl_logs" / "azhop-nc48v4-slurm-topo.log")
    runner = CliRunner()

    def run(ratio: str):
        return runner.invoke(app, ["nccl-report", log, "--sku", "NC48ads_A100_v4", "--nodes", "1", "--tolerance", ratio])

    for refused in ("0", "1.51", "-0.5"):
        result = run(refused)
        assert result.exit_code not in (0, 1) and "--tolerance must be a ratio above 0 and at most 1.5" in result.output
    for accepted in ("1.5", "0.01"):
        result = run(accepted)
        assert result.exit_code in (0, 1) and "--tolerance must" not in result.output, result.output


def _cut_at(size: int, busbw: str | None = None) -> str:
    """The 2-node log with its rows above ``size`` dropped, the row at ``size`` given ``busbw`` (both placements)."""
    kept = []
    for line in LOG.read_text().splitlines():
        words = line.split()
        if words and words[0].isdigit() and len(words) >= 13:
            if int(words[0]) > size:
                continue
            if int(words[0]) == size and busbw is not None:
                words[7] = words[11] = busbw
                line = " ".join(words)
        kept.append(line)
    return "\n".join(kept) + "\n"


def test_a_derived_floor_judges_a_largest_message_of_exactly_256_mib():
    """The derived floor is a plateau, judged from 256 MiB on up to 16 ranks (nccl_bounds.derived_min_bytes: 16 MiB
    per rank; docs/nccl-report.md)."""
    at = _verdict(_cut_at(256 << 20))
    assert at.derived and at.at_size == 256 << 20 and at.status != "inconclusive", at.message
    below = _verdict(_cut_at(128 << 20))
    assert below.derived and below.status == "inconclusive" and "rerun with -e 1G" in below.message


def test_busbw_exactly_at_a_derived_floor_passes():
    floor = _verdict(LOG.read_text()).floor.gbps  # 320 GB/s: 0.8 x 8 x 400 Gb/s
    at = _verdict(_cut_at(1 << 30, f"{floor:.2f}"))
    assert at.derived and at.measured == floor and at.status == "pass", at.message
    below = _verdict(_cut_at(1 << 30, f"{floor - 0.01:.2f}"))
    assert below.status == "below", below.message


def test_the_tables_limit_is_the_ceiling_for_the_runs_algorithm():
    """The summary's "limit" column, the JSON's limit_gbps and the plot's limit line are one value
    (Verdict.ceiling): the NVLSTree bound for a default run, the ring bound for the generated jobs' Ring pass
    (NCCL_ALGO=Ring: no in-switch reduction), and no limit where no ceiling is known (never a line rate)."""
    from hpcconf.nccl_report.plot import plot_series
    from hpcconf.nccl_report.render import summary_row, verdict_json

    text = LOG.read_text()
    default = _verdict(text)
    ring = _verdict("== all_reduce_perf (ring.all_reduce)\n" + text)
    assert ring.run.label == "ring.all_reduce"
    assert default.ceiling is not None and ring.ceiling is not None
    assert default.ceiling.gbps > 460.01 and "NVLSTree" in default.ceiling.label  # above Crusoe's NVLSTree run
    assert ring.ceiling.gbps == 400.0 and "ring" in ring.ceiling.label  # 8 x 400 Gb/s NDR
    limit_column = summary_row(ring)[-2]
    assert limit_column == "400.00" == f"{verdict_json(ring)['limit_gbps']:.2f}"
    _, levels = plot_series([ring])
    assert [level.gbps for level in levels if level.kind == "limit"] == [400.0]
    (run,) = parse_text(text, "x.log", None).runs
    run.collective = None  # a log that does not say which collective ran: line rates only, no ceiling
    (unknown,) = judge_runs("x.log", [run], Target(Catalog.load().get(SKU), 2), load_floors())
    assert unknown.limits and not any(limit.ceiling for limit in unknown.limits)
    assert unknown.ceiling is None and summary_row(unknown)[-2] == "-"
