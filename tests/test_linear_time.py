"""Property: every parser of user and node files runs in time linear in its input (issue 22).

A pattern that backtracks quadratically turns a 20,000-letter line into a minute of CPU in CI. Each
parser gets inputs of one shape at two sizes, 16x apart, and the ratio of the times must stay well
under the 256x a quadratic parser shows (``process_time``, best of two, so a busy machine adds noise
but not a trend). Shapes: the runs of one character or token that regexes over-match (letters,
digits, '=', quotes, spaces, '<', '#'), and random units drawn by hypothesis. The secret scanner
(hpcconf/secret_scan.py) is being replaced and is not covered here.
"""

from __future__ import annotations

import gc
import time
from typing import Callable

import pytest
from fuzz_profiles import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from hpcconf.parsers import (
    dockerfile,
    env_file,
    ibstat,
    lscpu,
    lspci,
    mpirun,
    nccl_conf,
    nccl_tests_log,
    nccl_xml,
    node_files,
    numactl,
    nvidia_smi,
    nvidia_topo,
)
from hpcconf.yamlpos import load_documents

PARSERS: dict[str, Callable[[str], object]] = {
    "dockerfile": dockerfile.parse_dockerfile,
    "env-file": env_file.parse_env_file,
    "nccl.conf": nccl_conf.parse_nccl_conf,
    "nccl-tests log": nccl_tests_log.parse_text,
    "nccl xml": nccl_xml.parse_nccl_xml,
    "mpirun": mpirun.find_mpirun,
    "nvidia-smi -q -x": lambda t: nvidia_smi.parse_query_xml(t, "q.xml"),
    "nvidia-smi csv": lambda t: nvidia_smi.parse_query_csv(t, "q.csv"),
    "topo -m": lambda t: nvidia_topo.parse_topo_matrix(t, "topo.txt"),
    "nvlink -s": lambda t: nvidia_topo.parse_nvlink_status(t, "nvlink.txt"),
    "lscpu": lambda t: lscpu.parse_lscpu_text(t, "lscpu.txt"),
    "lscpu -J": lambda t: lscpu.parse_lscpu_json(t, "lscpu.json"),
    "numactl -H": lambda t: numactl.parse_numactl(t, "numactl.txt"),
    "ibstat": lambda t: ibstat.parse_ibstat(t, "ibstat.txt"),
    "lspci": lambda t: lspci.parse_lspci_names(t, "lspci.txt"),
    "collect.log": lambda t: node_files.parse_collect_log(t, "collect.log"),
    "meta.txt": lambda t: node_files.parse_meta(t, "meta.txt"),
    "tsv": lambda t: node_files.parse_tsv(t, "x.tsv", ("a", "b", "c")),
    "numa-nodes": lambda t: node_files.parse_numa_nodes(t, "numa.tsv"),
    "meminfo": lambda t: node_files.parse_meminfo(t, "meminfo.txt"),
    "yaml": lambda t: load_documents(t, "f.yaml"),
}
# A line of the kind each parser expects, to prefix the runs (so the run reaches the interesting pattern).
PREFIXES = {"dockerfile": "FROM x\nENV A=", "env-file": "export NCCL_X=", "nccl.conf": "NCCL_DEBUG=",
            "nccl-tests log": "#  Rank  0 Group  0 Pid 1 on host device  0 [", "nccl xml": "<system version=\"",
            "mpirun": "mpirun -x A=", "lscpu": "Model name: ", "meminfo": "MemTotal: ", "meta.txt": "date=",
            "collect.log": "ok\tx\t", "yaml": "a: "}
# Non-ASCII units too: a quadratic copy of 4-byte characters shows at sizes where 1-byte ones hide it
# (shlex on an astral-plane run, found by the random units below).
UNITS = ["a", "1", "=", "\"", " ", "<", "#", "a=", "-x ", "\\", "\t", "1.", "${", "a\n", "0x", "é", "\U00105a49"]
SMALL, LARGE = 5_000, 80_000  # characters; 16x apart
RATIO = 48  # linear: ~16; quadratic: ~256


def _seconds(parser: Callable[[str], object], text: str) -> float:
    best = float("inf")
    gc_was_enabled = gc.isenabled()
    gc.disable()  # a collection landing in one run is noise, not a trend
    try:
        for _ in range(2):
            start = time.process_time()
            try:
                parser(text)
            except Exception:  # noqa: BLE001 - a refusal is an answer; only the time matters here
                pass
            best = min(best, time.process_time() - start)
    finally:
        if gc_was_enabled:
            gc.enable()
    return best


def _ratio(parser: Callable[[str], object], small_text: str, large_text: str) -> tuple[float, float]:
    return _seconds(parser, small_text), _seconds(parser, large_text)


def _check(name: str, unit: str) -> None:
    """Fails only when three measurements in a row show the trend: a quadratic parser shows it every time,
    a busy CI machine once (a single slow run of the small input made this flaky, CI 2026-12-01)."""
    parser = PARSERS[name]
    prefix = PREFIXES.get(name, "")
    small_text, large_text = prefix + unit * (SMALL // len(unit)), prefix + unit * (LARGE // len(unit))
    for _ in range(3):
        small, large = _ratio(parser, small_text, large_text)
        if large < 0.02 or large / max(small, 1e-4) < RATIO:
            return  # too fast to measure a trend, or linear
    raise AssertionError(f"{name} on {unit!r} runs: {small:.4f}s -> {large:.4f}s for 16x the input")


@pytest.mark.parametrize("name", sorted(PARSERS))
def test_every_parser_is_linear_on_runs_of_one_unit(name):
    for unit in UNITS:
        _check(name, unit)


@settings(max_examples=examples(5))
@given(name=st.sampled_from(sorted(PARSERS)), unit=st.text(min_size=1, max_size=6))
def test_every_parser_is_linear_on_random_units(name, unit):
    _check(name, unit)


def test_the_check_catches_a_quadratic_parser():
    """The measure itself can fail: a parser with a backtracking pattern is caught."""
    # a rescan from every 20th character: what a backtracking pattern does to a long run
    PARSERS["quadratic (test only)"] = lambda text: sum(text.count("a", i) for i in range(0, len(text), 20))
    try:
        with pytest.raises(AssertionError, match="runs"):
            _check("quadratic (test only)", "a")
    finally:
        del PARSERS["quadratic (test only)"]
