"""The in-job verdict (the bash/awk ``check_log`` embedded in the generated Volcano job and sbatch) and
``hpcconf nccl-report`` judge the same log the same way: the same floor (published, else derived from the
SKU's links), read at the same size, with the same outcome. Run on real nccl-tests logs (the 2 x H200
recording in ../shared/upstream/nccl/h200x2-nccl-tests/, the public excerpts in tests/fixtures/nccl_logs/)
and on degraded copies of them: busbw scaled down, a #wrong count, a run cut short."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from hpcconf.catalog import Catalog
from hpcconf.knowledge.nccl_floors import load_floors
from hpcconf.nccl_report.findings import log_findings
from hpcconf.nccl_report.verdict import Target, judge_runs
from hpcconf.parsers.nccl_tests_log import collective_from_name, parse_text
from hpcconf.resolve.nccl_verdict import verdict_floor
from hpcconf.targets.nccl_verdict import CHECK_LOG, check_log_floor_args

REPO = Path(__file__).resolve().parents[1]
H200X2 = REPO.parent / "shared" / "upstream" / "nccl" / "h200x2-nccl-tests"
FIXTURES = REPO / "tests" / "fixtures" / "nccl_logs"

pytestmark = pytest.mark.skipif(shutil.which("bash") is None or shutil.which("awk") is None, reason="needs bash and awk")

# (log, SKU it is judged as, nodes, ranks). The 2 x H200 recording is a 2-GPU slice of no catalog SKU: it is
# judged as the 2-GPU SKUs (one published all_reduce floor at 16G, derived floors for the rest) and as a
# slice of ND H200 v5 (no floor); the excerpts as the machines they were recorded on.
H200X2_LOGS = sorted(H200X2.glob("*.txt")) if H200X2.is_dir() else []
CASES = [(log, sku, 1, 2) for log in H200X2_LOGS for sku in ("NC80adis_H100_v5", "NC48ads_A100_v4", "ND96isr_H200_v5")] + [
    (FIXTURES / "azhop-nc48v4-slurm-topo.log", "NC48ads_A100_v4", 1, 2),
    (FIXTURES / "azhop-nc48v4-slurm-graph.log", "NC48ads_A100_v4", 1, 2),
    (FIXTURES / "azhop-nc96v4-slurm-topo.log", "NC96ads_A100_v4", 1, 4),
    (FIXTURES / "aks-ndmv4-2node-mpirun.log", "ND96amsr_A100_v4", 2, 16),
    (FIXTURES / "crusoe-h100-2node-srun.log", "h100-80gb-sxm-ib.8x", 2, 16),
]
_ROW = re.compile(r"^(\s*\d+\s+\d+\s+float\s+\S+\s+-?\d+)(.*)$")


def _scaled(text: str, factor: float) -> str:
    """Every float row's algbw and busbw (columns 7, 8, 11, 12) times ``factor``."""
    def row(line: str) -> str:
        if not _ROW.match(line):
            return line
        fields = line.split()
        for i in (6, 7, 10, 11):
            if i < len(fields) and re.fullmatch(r"\d+(\.\d+)?", fields[i]):
                fields[i] = f"{float(fields[i]) * factor:.2f}"
        return " ".join(fields)
    return "\n".join(row(line) for line in text.splitlines()) + "\n"


def _wrong(text: str) -> str:
    """The largest row's out-of-place #wrong set to 3 (corrupted data)."""
    lines = text.splitlines()
    last = max(i for i, line in enumerate(lines) if _ROW.match(line))
    fields = lines[last].split()
    fields[8] = "3"
    lines[last] = " ".join(fields)
    return "\n".join(lines) + "\n"


def _wrong_e_notation(text: str) -> str:
    """The largest row's out-of-place #wrong as nccl-tests prints a count of a million and more (%g)."""
    lines = text.splitlines()
    last = max(i for i, line in enumerate(lines) if _ROW.match(line))
    fields = lines[last].split()
    fields[8] = "1.23457e+06"
    lines[last] = " ".join(fields)
    return "\n".join(lines) + "\n"


def _cut_mid_row(text: str) -> str:
    """The log ends inside its largest row, in the in-place busbw (a job killed while it printed): 12 fields,
    the last a truncated busbw, which a reader counting from the end takes for #wrong."""
    lines = text.splitlines()
    last = max(i for i, line in enumerate(lines) if _ROW.match(line))
    fields = lines[last].split()[:12]
    fields[11] = fields[11].split(".")[0]
    return "\n".join([*lines[:last], " ".join(fields)])


def _cut(text: str, keep_bytes: int) -> str:
    """The run stopped after its rows up to ``keep_bytes`` (a smaller -e, or a run killed mid-table)."""
    return "\n".join(line for line in text.splitlines()
                     if not _ROW.match(line) or int(line.split()[0]) <= keep_bytes) + "\n"


VARIANTS = {
    "as recorded": lambda t: t,
    "busbw x0.98": lambda t: _scaled(t, 0.98),
    "busbw x0.7": lambda t: _scaled(t, 0.7),
    "busbw x0.5": lambda t: _scaled(t, 0.5),
    "busbw x0.25": lambda t: _scaled(t, 0.25),
    "wrong data": _wrong,
    "wrong data, e-notation #wrong": _wrong_e_notation,
    "cut mid-row": _cut_mid_row,
    "stops at 128M": lambda t: _cut(t, 128 << 20),
    "stops at 512M, x0.6": lambda t: _scaled(_cut(t, 512 << 20), 0.6),
    "unknown -d": lambda t: "invalid type bf16, defaulting to float .. \n" + t,
    "NCCL failure": lambda t: _cut(t, 512 << 20) + "vm: Test NCCL failure common.cu:1136 'unhandled cuda error / '\n",
    "CUDA failure": lambda t: _cut(t, 1 << 20) + " .. vm pid 1333: Test failure common.cu:1012\n",
}


def _collective(log: Path) -> str:
    """What the log runs, as nccl-report reads it (the job knows it: it ran the binary)."""
    name = "all_reduce" if "allreduce" in log.name else collective_from_name(log.name)
    (run,) = parse_text(log.read_text(encoding="utf-8"), str(log), name).runs
    assert run.collective is not None
    return run.collective


def _job_verdict(path: Path, sku, collective: str, nodes: int, ranks: int) -> str:
    """What the job's check_log prints and whether it failed the job."""
    script = (CHECK_LOG + "FAILED=()\n"
              f"check_log {path} {collective}_perf{check_log_floor_args(verdict_floor(sku, collective, nodes, ranks))}\n"
              "[ \"${#FAILED[@]}\" -eq 0 ] || echo JOB-FAILED\n")
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=30, check=True)
    return done.stdout


def _job_status(output: str) -> str:
    word = output.split(": ", 2)[1].split(":")[0]
    return {"pass": "pass", "FAIL": "fail", "inconclusive": "inconclusive", "ok": "not judged",
            "below reference": "reference"}[word]


def _report_status(path: Path, sku, nodes: int) -> str:
    """nccl-report's outcome: an error finding (nccl-tests' own error markers) fails as a failed verdict does."""
    text = path.read_text(encoding="utf-8")
    parsed = parse_text(text, str(path), _collective(path))
    (verdict,) = judge_runs(str(path), parsed.runs, Target(sku, nodes), load_floors())
    if any(f.severity == "error" for f in log_findings(parsed)):
        return "fail"
    return {"pass": "pass", "below": "fail", "wrong": "fail", "inconclusive": "inconclusive",
            "no floor": "not judged", "below reference": "reference"}[verdict.status]


@pytest.mark.parametrize("variant", sorted(VARIANTS))
@pytest.mark.parametrize("log,sku_name,nodes,ranks", CASES, ids=lambda v: v.name if isinstance(v, Path) else str(v))
def test_the_job_and_nccl_report_agree(log, sku_name, nodes, ranks, variant, tmp_path):
    sku = Catalog.load().get(sku_name)
    copy = tmp_path / log.name
    copy.write_text(VARIANTS[variant](log.read_text(encoding="utf-8")), encoding="utf-8")
    collective = _collective(log)
    output = _job_verdict(copy, sku, collective, nodes, ranks)
    job = _job_status(output)
    assert job == _report_status(copy, sku, nodes), output
    assert ("JOB-FAILED" in output) == (job == "fail"), output


def test_the_cases_reach_every_outcome_and_both_kinds_of_floor():
    """The agreement above is not vacuous: published and derived floors, and every outcome, occur."""
    assert H200X2_LOGS, "the 2 x H200 recording is missing"
    outcomes, kinds = set(), set()
    for log, sku_name, nodes, ranks in CASES:
        sku = Catalog.load().get(sku_name)
        collective = _collective(log)
        args = check_log_floor_args(verdict_floor(sku, collective, nodes, ranks))
        kinds.add(args.split()[1] if args else "none")
        for variant in ("as recorded", "busbw x0.25", "stops at 128M"):
            outcomes.add((variant, _report_status_text(log, VARIANTS[variant], sku, nodes)))
    assert kinds == {"at", "from", "ref", "none"}
    assert {status for _, status in outcomes} == {"pass", "fail", "inconclusive", "not judged", "reference"}


def _report_status_text(log: Path, variant, sku, nodes: int) -> str:
    text = variant(log.read_text(encoding="utf-8"))
    runs = parse_text(text, str(log), _collective(log)).runs
    (verdict,) = judge_runs(str(log), runs, Target(sku, nodes), load_floors())
    return {"pass": "pass", "below": "fail", "wrong": "fail", "inconclusive": "inconclusive",
            "no floor": "not judged", "below reference": "reference"}[verdict.status]


@pytest.mark.skipif(not H200X2_LOGS, reason="needs ../shared/upstream/nccl")
def test_a_factor_measured_on_nvswitch_does_not_fail_an_nvlink_bridge_pair(tmp_path):
    """Review r25b B4: the 0.5 factor was measured on 2 of the 8 NVSwitch H200 of one host; NC80adis_H100_v5 is an
    NVLink-bridge pair, another fabric. Its derived floor (150 GB/s) is reference only there: a run at a quarter of
    the recording is reported "below reference" and the job does not fail."""
    sku = Catalog.load().get("NC80adis_H100_v5")
    args = check_log_floor_args(verdict_floor(sku, "all_gather", 1, 2))
    assert args.startswith(" 150 ref 268435456 'reference only (derived, not measured on this shape): "), args
    log = tmp_path / "all_gather.txt"
    log.write_text(_scaled((H200X2 / "all_gather.txt").read_text(encoding="utf-8"), 0.25), encoding="utf-8")
    output = _job_verdict(log, sku, "all_gather", 1, 2)
    assert output.startswith("all_gather_perf: below reference: busbw 69.48 GB/s at 1073741824 bytes, reference floor 150"), output
    assert "JOB-FAILED" not in output
    assert _report_status(log, sku, 1) == "reference"


def test_the_sbatch_names_the_floor_its_single_node_pass_is_judged_with():
    """A derived single-node floor is named in the job's comment, not "none sourced"; a published one as before."""
    from hpcconf.resolve.test_passes import single_node_floor_note

    derived = single_node_floor_note(Catalog.load().get("h100-80gb-sxm-ib.8x"))
    assert derived is not None and derived.startswith("315 GB/s busbw at the largest size, from 256M (derived: ")
    published = single_node_floor_note(Catalog.load().get("ND96asr_v4"))
    assert published == "228 GB/s busbw at 8G (Azure/azurehpc-health-checks conf/nd96asr_v4.conf @0e0a1ac2)"


@pytest.mark.skipif(not H200X2_LOGS, reason="the 2 x H200 recording is missing")
def test_a_replaced_type_warns_in_the_job_and_the_run_is_still_judged(tmp_path):
    """nccl-tests ran float for an unknown -d and exits 0: the job warns (stderr) and judges the float rows."""
    log = tmp_path / "all_reduce.log"
    log.write_text("invalid type bf16, defaulting to float .. \n" + (H200X2 / "allreduce-default.txt").read_text())
    script = CHECK_LOG + f"FAILED=()\ncheck_log {log} all_reduce_perf 100 from 268435456 test-floor\n" \
        "[ \"${#FAILED[@]}\" -eq 0 ] || echo JOB-FAILED\n"
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=30, check=True)
    assert done.stdout.startswith("all_reduce_perf: pass: busbw 328.50 GB/s"), done.stdout
    assert "JOB-FAILED" not in done.stdout
    assert "all_reduce_perf: warning: invalid type bf16, defaulting to float" in done.stderr


@pytest.mark.parametrize("nodes,busbw,outcome", [(2, 208.0, "fail"), (4, 208.0, "fail"), (16, 208.0, "fail"),
                                                 (32, 208.0, "reference"), (4, 370.0, "pass")])
def test_a_reference_only_floor_reports_but_never_fails_the_job(tmp_path, nodes, busbw, outcome):
    """all_reduce across nodes of ND H100 v5: the 0.8 factor was measured on 2-node runs and carries over, lowered
    to 0.6, up to 16 nodes (published 3- to 8-node runs: nccl_floors.yaml), so the derived floor fails the job at 2 to
    16 nodes and is reference only at 32, in the job as in nccl-report."""
    from test_nccl_bounds import _multi_node_log  # tests/ is on sys.path (rootdir, no package)

    sku = Catalog.load().get("ND96isr_H100_v5")
    log = tmp_path / "all_reduce.log"
    log.write_text(_multi_node_log(nodes, 8, busbw), encoding="utf-8")
    args = check_log_floor_args(verdict_floor(sku, "all_reduce", nodes, nodes * 8))
    assert args.split()[1] == ("from" if nodes <= 16 else "ref"), args
    output = _job_verdict(log, sku, "all_reduce", nodes, nodes * 8)
    assert _job_status(output) == _report_status(log, sku, nodes) == outcome, output
    assert ("JOB-FAILED" in output) == (outcome == "fail"), output
    if outcome == "reference":
        assert "below reference: busbw 208.00 GB/s at 8589934592 bytes, reference floor 320 GB/s, not a failure" in output


def _ring_log(nodes: int, gpus: int, top: int, scale: float = 1.0) -> str:
    """A 16-node ring all_reduce as NCCL's own model predicts it on ND H100 v5 (NVIDIA/nccl src/graph/tuning.cc
    @v2.30.7-1: 1.19 ms of ring latency on 16 x 8 ranks, a 368 GB/s plateau), from 64 MiB to ``top`` bytes."""
    ranks = nodes * gpus
    lines = ["# nccl-tests version 2.19.6 nccl-headers=23007 nccl-library=23007",
             "# Collective test starting: all_reduce_perf", "#", "# Using devices"]
    lines += [f"#  Rank {r:3d} Group  0 Pid  {100 + r} on node-{r // gpus} device  {r % gpus} [0x00] NVIDIA H100 80GB HBM3"
              for r in range(ranks)]
    lines += ["#", "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong"]
    size = 64 << 20
    while size <= top:
        moved = size * 2 * (ranks - 1) / ranks
        time_s = 1.19e-3 + moved / 368e9
        busbw = moved / time_s / 1e9 * scale
        algbw = size / time_s / 1e9 * scale
        lines.append(f"{size:>12d} {size // 4:>13d}     float     sum      -1  {time_s * 1e6:8.1f}  {algbw:6.2f}  {busbw:6.2f}"
                     f"       0  {time_s * 1e6:8.1f}  {algbw:6.2f}  {busbw:6.2f}       0")
        size *= 2
    lines += ["# Out of bounds values : 0 OK", "# Avg bus bandwidth    : 300", "#"]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("top,scale,outcome", [(256 << 20, 1.0, "inconclusive"), (1 << 30, 1.0, "inconclusive"),
                                               (8 << 30, 1.0, "pass"), (8 << 30, 0.5, "fail")])
def test_the_size_a_derived_floor_decides_from_grows_with_the_rank_count(tmp_path, top, scale, outcome):
    """Review r25b B1: a healthy 16 x 8 GPU ring run is still latency-bound at 256 MiB (~202 GB/s under the decisive
    240): judged there it failed. The derived floor decides from 16 MiB per rank (2 GiB on 128 ranks), below it the
    run is inconclusive, in nccl-report and in the job alike; to 8 GiB it passes (~359) or fails as before."""
    sku = Catalog.load().get("ND96isr_H100_v5")
    log = tmp_path / "ring.all_reduce.log"
    log.write_text(_ring_log(16, 8, top, scale), encoding="utf-8")
    args = check_log_floor_args(verdict_floor(sku, "all_reduce", 16, 128))
    assert args.startswith(" 240 from 2147483648 "), args
    output = _job_verdict(log, sku, "all_reduce", 16, 128)
    assert _job_status(output) == _report_status(log, sku, 16) == outcome, output
    assert ("JOB-FAILED" in output) == (outcome == "fail"), output


@pytest.mark.parametrize("top,busbw,outcome,mode", [(8 << 30, 200.0, "fail", "from"), (8 << 30, 280.0, "pass", "from"),
                                                    (16 << 30, 280.0, "fail", "at"), (16 << 30, 320.0, "pass", "at")])
def test_a_multi_node_run_short_of_the_published_size_is_judged_against_the_derived_floor(tmp_path, top, busbw,
                                                                                           outcome, mode):
    """Azure's 8-node ND H100 v5 line (300 GB/s) is set at 16G; the generated jobs stop at 8G, where the published
    floor could only say "inconclusive" and a broken run would pass the job. Short of 16G the derived floor (240)
    decides, in the job and in nccl-report; to 16G the published one."""
    from test_nccl_bounds import _rack_log  # tests/ is on sys.path (rootdir, no package)

    sku = Catalog.load().get("ND96isr_H100_v5")
    log = tmp_path / "all_reduce.log"
    log.write_text(_rack_log(8, 8, "H100 80GB HBM3", busbw, top=top), encoding="utf-8")
    args = check_log_floor_args(verdict_floor(sku, "all_reduce", 8, 64, max_bytes=top))
    assert args.split()[:2] == (["240", "from"] if mode == "from" else ["300", "at"]), args
    output = _job_verdict_args(log, args)
    assert _job_status(output) == _report_status(log, sku, 8) == outcome, output
    assert ("JOB-FAILED" in output) == (outcome == "fail"), output


def _job_verdict_args(path: Path, args: str) -> str:
    script = (CHECK_LOG + "FAILED=()\n" f"check_log {path} all_reduce_perf{args}\n"
              "[ \"${#FAILED[@]}\" -eq 0 ] || echo JOB-FAILED\n")
    return subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=30, check=True).stdout


def _aks_launcher_lines() -> list[str]:
    from hpcconf.output_dir import expected_files
    from hpcconf.pipeline import compile_spec

    job = expected_files(compile_spec(REPO / "examples" / "ndmv4-aks.yaml"))["aks/volcano-job.yaml"]
    text = job.decode() if isinstance(job, bytes) else job
    return [line.strip() for line in text.splitlines()]


def test_the_aks_ring_pass_log_carries_its_header_so_the_report_takes_the_ring_limit(tmp_path):
    """r25c C7: the header went to stdout only, so the in-job report judged /tmp/ring.all_reduce.log as an
    unpinned run (2 x ND A100 v4: the 2-node Tree limit 375 instead of the ring's 200)."""
    from typer.testing import CliRunner

    from hpcconf.cli import app

    lines = _aks_launcher_lines()
    header = next(line for line in lines if line.startswith('echo "== ring.all_reduce:'))
    mpirun = next(line for line in lines if "all_reduce_perf -b 64M" in line)
    assert 'tee -a "/tmp/ring.all_reduce.log"' in mpirun  # the run appends under the header
    subprocess.run(["bash", "-c", header.replace("/tmp/", f"{tmp_path}/")], check=True, capture_output=True)
    log = tmp_path / "ring.all_reduce.log"
    with log.open("a", encoding="utf-8") as out:
        out.write(_ring_log(2, 8, 8 << 30, 0.5))
    result = CliRunner().invoke(app, ["nccl-report", "--sku", "Standard_ND96amsr_A100_v4", "--nodes", "2",
                                      "--format", "json", str(log)])
    import json

    verdict = json.loads(result.output)["verdicts"][0]
    assert (verdict["label"], verdict["limit_gbps"]) == ("ring.all_reduce", 200.0), verdict


def test_the_aks_follow_up_command_judges_the_single_node_pass_as_one_node(tmp_path):
    """r25c C4: ``--nodes 2`` over the whole kubectl log made the single-node pass a slice ("no floor"); the
    printed command must let each pass keep its own shape, so a node below Azure's 228 GB/s fails."""
    from typer.testing import CliRunner

    from hpcconf.cli import app

    printed = next(line for line in _aks_launcher_lines() if line.startswith('echo "hpcconf is not in this image'))
    args = printed.split("hpcconf nccl-report ", 1)[1].rstrip('"').split()
    assert args[-1] == "nccl.log"
    log = tmp_path / "nccl.log"
    log.write_text("== all_reduce_perf\n" + _ring_log(2, 8, 8 << 30, 0.5)
                   + "== single-node.all_reduce: one node, all its GPUs\n" + _ring_log(1, 8, 16 << 30, 0.4),
                   encoding="utf-8")
    result = CliRunner().invoke(app, ["nccl-report", *args[:-1], str(log)])
    assert result.exit_code == 1 and "228" in result.output, result.output
