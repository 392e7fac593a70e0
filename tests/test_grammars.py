"""Grammar validators: probe verdicts, seed strings, and the parsers' corner cases."""

from __future__ import annotations

import json
import re

import pytest

from hpcconf.diagnostics import Severity
from hpcconf.knowledge.grammars import (
    check_env_value,
    check_ib_hca,
    check_nccl_algo,
    check_nccl_debug_subsys,
    check_nccl_proto,
    check_ompi_coll_ucc,
    check_ompi_mca,
    check_path_level,
    check_socket_ifname,
    check_ucc_tune,
    check_ucx_net_devices,
    check_ucx_tls,
    parse_if_list,
    parse_ucc_tune,
    strtok,
)


def _fatal(problems) -> bool:
    return any(p.fatal for p in problems)


# -- probe: NCCL 2.28.9 accepted / rejected these NCCL_ALGO / NCCL_PROTO values ------------------

def test_probe_algo_proto_cases(shared_dir):
    results = json.loads((shared_dir / "upstream/nccl/probe/results-config-cases.json").read_text())
    version = results["env"]["nccl"]
    cases = [c for c in results["cases"] if set(c["env"]) & {"NCCL_ALGO", "NCCL_PROTO"} and "NCCL_CONF_FILE" not in c["env"]]
    assert len(cases) == 4
    for case in cases:
        problems = [p for name, value in case["env"].items()
                    for p in check_env_value(name, value, nccl_version=version)]
        assert (not _fatal(problems)) == case["result"]["ok"], case["case"]
        for problem in problems:
            # our message is NCCL's own WARN line (first sentence)
            assert any(problem.message.split(" (")[0] in line for line in case["log"]), problem.message


def test_algo_version_rules():
    assert check_nccl_algo("CollNet", "2.12.12") == []
    old = check_nccl_algo("CollNet", "2.20.5")
    assert old and not _fatal(old)  # silently ignored before 2.24 ...
    new = check_nccl_algo("CollNet", "2.24.3")
    assert _fatal(new) and "CollNetDirect" in new[0].hint  # ... fatal since
    assert check_nccl_algo("NVLS", "2.17.1") == []
    assert check_nccl_algo("NVLSTree", "2.18.1") == []
    assert check_nccl_algo("PAT", "2.23.4") == [] and check_nccl_algo("PAT", "2.22.3")
    legacy = check_nccl_algo("allreduce:tree", "2.23.4")
    assert "2.24" in legacy[0].hint and not _fatal(legacy)


def test_algo_offsets_point_at_the_bad_token():
    value = "ring;allreduce:tree,Bogus"
    problem = check_nccl_algo(value, "2.28.9")[0]
    assert value[problem.offset:problem.offset + problem.length] == "Bogus"
    value = "tree;sendrecv:ring"
    problem = check_nccl_algo(value)[0]
    assert value[problem.offset:problem.offset + problem.length] == "sendrecv" and problem.fatal
    value = "^ring; allreduce:tree"
    problem = check_nccl_algo(value)[0]
    assert problem.fatal and value[problem.offset:problem.offset + problem.length] == " allreduce"


def test_algo_and_proto_accept_documented_forms():
    for value in ("ring,collnetdirect;allreduce:tree,collnetdirect;broadcast:ring", "^NVLS", "Tree", "ring;"):
        assert check_nccl_algo(value, "2.28.9") == [], value
    for value in ("LL,Simple;allreduce:^LL", "^LL128;allreduce:LL128", "simple", "LL128"):
        assert check_nccl_proto(value, "2.28.9") == [], value
    assert _fatal(check_nccl_proto("allreduce:LL128;LL,Simple", "2.28.9"))
    assert _fatal(check_nccl_proto("LL,Simple;allreduce:LL,Bogus", "2.28.9"))


# -- NCCL_IB_HCA / NCCL_SOCKET_IFNAME ------------------------------------------------------------

def test_seed_002_ib_hca():
    assert check_ib_hca("^mlx5_0:1") == []
    parsed = parse_if_list("^mlx5_0:1")
    assert parsed.exclude and not parsed.exact
    assert [(e.name, e.port) for e in parsed.entries] == [("mlx5_0", 1)]
    exact = parse_if_list("=mlx5_ib0:1,mlx5_ib1:1")
    assert exact.exact and [e.name for e in exact.entries] == ["mlx5_ib0", "mlx5_ib1"]


def test_ib_hca_traps():
    value = "=^mlx5_0"
    assert check_ib_hca(value)[0].offset == 0 and check_ib_hca(value)[0].severity == Severity.ERROR
    value = "mlx5_0,^mlx5_1"
    problem = check_ib_hca(value)[0]
    assert value[problem.offset:] == "^mlx5_1" and "whole list" in problem.hint
    value = "mlx5_0, mlx5_1"
    assert any("whitespace" in p.message for p in check_ib_hca(value))
    assert any("port 0" in p.message for p in check_ib_hca("mlx5_0:0"))
    assert any("accelerated-networking" in p.message for p in check_ib_hca("mlx5_an0,mlx5_ib0"))
    assert check_ib_hca("^=mlx5_an0") == []
    many = ",".join(f"mlx5_{i}" for i in range(40))
    assert any("first 32" in p.message for p in check_ib_hca(many))
    assert len(parse_if_list(many).entries) == 32
    rail = check_ib_hca("mlx5_0:1:0", "2.28.9")
    assert rail and rail[0].severity == Severity.INFO and check_ib_hca("mlx5_0:1:0", "2.29.7") == []


def test_socket_ifname():
    assert check_socket_ifname("eth0") == []
    assert check_socket_ifname("^docker,lo") == []
    assert check_socket_ifname("e")[0].message.startswith("NCCL ignores")
    assert any("whitespace" in p.message for p in check_socket_ifname("eth0, ib0"))


# -- path levels -------------------------------------------------------------------------------

@pytest.mark.parametrize("value, version, ok", [
    ("SYS", None, True), ("PXB", "2.6.4", True), ("NVB", "2.9.9", True), ("NVB", "2.8.4", False),
    ("C2C", "2.26.2", True), ("C2C", "2.25.1", False), ("P2C", "2.27.3", True), ("P2C", "2.26.2", False),
    ("PXN", "2.12.7", True), ("sys", None, False), ("bogus", None, False),
])
def test_path_levels(value, version, ok):
    # a warning, not an error: NCCL starts with its default level (the setting does nothing)
    problems = check_path_level(value, version)
    assert (not [p for p in problems if p.severity == Severity.WARNING]) == ok
    assert not [p for p in problems if p.severity == Severity.ERROR]


def test_legacy_numeric_levels():
    assert "SYS" in check_path_level("5")[0].message and check_path_level("5")[0].severity == Severity.INFO
    assert "PXB" in check_path_level("2")[0].message
    assert check_path_level("3x")[0].severity == Severity.WARNING  # strtol stops at 'x'


# -- UCX ---------------------------------------------------------------------------------------

def _seed_004_tls(shared_dir) -> list[str]:
    text = next((shared_dir / "seeds").glob("004_*.txt")).read_text()
    values = sorted(set(re.findall(r"UCX_TLS=(\S+)", text)))
    assert len(values) >= 3
    return values


def test_seed_004_ucx_tls_values(shared_dir):
    for value in _seed_004_tls(shared_dir):
        assert check_ucx_tls(value, "1.8.0") == [], value  # the seed's era (2020): all valid
        now = check_ucx_tls(value, "1.11.0")
        if "sockcm" in value.split(","):
            assert len(now) == 1 and value[now[0].offset:now[0].offset + now[0].length] == "sockcm"
            assert now[0].severity == Severity.WARNING
        else:
            assert now == []


def test_ucx_tls_rules():
    assert check_ucx_tls("rc,sm,self") == [] and check_ucx_tls("^ib") == [] and check_ucx_tls("\\rc_mlx5") == []
    only = check_ucx_tls("sockcm")
    assert any(p.severity == Severity.ERROR and "no usable transport" in p.message for p in only)
    assert "lower case" in check_ucx_tls("TCP,rc")[0].hint
    assert check_ucx_tls("all,rc")[0].message.startswith("'all' must stand alone")
    assert "connection manager" in check_ucx_tls("rc,rdmacm")[0].hint


def test_ucx_net_devices():
    assert check_ucx_net_devices("mlx5_0:1,mlx5_1:1") == [] and check_ucx_net_devices("eth0") == []
    problem = check_ucx_net_devices("eth0,mlx5_ib0")[0]
    assert problem.offset == 5 and "mlx5_ib0:1" in problem.hint
    assert check_ucx_net_devices("mlx5_0:x")[0].severity == Severity.ERROR


# -- UCC ---------------------------------------------------------------------------------------

def test_seed_001_ucc_tune(shared_dir):
    text = next((shared_dir / "seeds").glob("001_*.txt")).read_text()
    values = set(re.findall(r"UCC_TL_NCCL_TUNE=(\S+)", text))
    assert values == {"allreduce:cuda:inf"}
    tokens, problems = parse_ucc_tune("allreduce:cuda:inf")
    assert problems == []
    assert tokens[0].coll_types == ("allreduce",) and tokens[0].mem_types == ("cuda",)
    assert tokens[0].score == float("inf")


@pytest.mark.parametrize("value", [
    "allreduce:cuda:0-inf:inf", "allreduce,bcast:host,cuda:0-4k,1M-inf:[2-8,16]:100#barrier:0",
    "allreduce:cuda:@0", "ALLREDUCE:CUDA:INF", "alltoallv:cudamanaged:10", "inf", "reduce_scatter:4K-64Kb:5",
])
def test_ucc_tune_valid(value):
    assert not _fatal(check_ucc_tune(value)), value


@pytest.mark.parametrize("value, bad", [
    ("allreduce:cuda:allgather:inf", "allgather"),  # second collective list
    ("allreduce:cuda:host:inf", "host"),  # second memory type list
    ("allreduce:gpu:inf", "gpu"),
    ("allreduce:2-8:4k:inf", "4k"),
    ("allreduce:[8-2]:inf", "[8-2]"),
    ("allreduce:4k-1:inf#bcast:cuda:inf:5", "5"),
])
def test_ucc_tune_rejected_tokens(value, bad):
    problems = check_ucc_tune(value)
    fatal = [p for p in problems if p.fatal]
    assert fatal, value
    assert value[fatal[-1].offset:fatal[-1].offset + fatal[-1].length] == bad or bad in fatal[-1].message


def test_ucc_tune_token_without_score_or_alg_does_nothing():
    problems = check_ucc_tune("allreduce:cuda")
    assert problems and not problems[0].fatal and "neither" in problems[0].message


def test_ucc_empty_range_is_rejected():
    assert _fatal(check_ucc_tune("allreduce:4k-4k:inf"))


# -- Open MPI ----------------------------------------------------------------------------------

def test_seed_001_ompi_settings(shared_dir):
    text = next((shared_dir / "seeds").glob("001_*.txt")).read_text()
    env = dict(re.findall(r"^(OMPI_MCA_coll_ucc_\w+|UCC_TL_NCCL_TUNE)=(\S+)", text, re.M))
    assert env == {"OMPI_MCA_coll_ucc_enable": "1", "OMPI_MCA_coll_ucc_priority": "100",
                   "UCC_TL_NCCL_TUNE": "allreduce:cuda:inf"}
    for name, value in env.items():
        assert check_env_value(name, value) == []
    assert check_ompi_coll_ucc(env) == []
    without_priority = {k: v for k, v in env.items() if "priority" not in k}
    [(name, problem)] = check_ompi_coll_ucc(without_priority)
    assert name == "OMPI_MCA_coll_ucc_priority" and "coll/hcoll (90)" in problem.message
    [(name, problem)] = check_ompi_coll_ucc({"UCC_TL_NCCL_TUNE": "allreduce:cuda:inf"})
    assert name == "OMPI_MCA_coll_ucc_enable"


def test_ompi_hcoll_by_version_and_value_types():
    assert check_ompi_mca("OMPI_MCA_coll_hcoll_enable", "0", "5.0.6") == []
    assert "removed in 6.0" in check_ompi_mca("OMPI_MCA_coll_hcoll_enable", "0", "6.0.0")[0].message
    assert check_ompi_mca("OMPI_MCA_coll_ucc_enable", "maybe")[0].severity == Severity.ERROR
    assert check_ompi_mca("coll_ucc_priority", "high")[0].severity == Severity.ERROR
    # after hcoll is gone, UCC only has to beat coll/tuned (30)
    env = {"OMPI_MCA_coll_ucc_enable": "1", "OMPI_MCA_coll_ucc_priority": "50"}
    assert check_ompi_coll_ucc(env, "6.0.0") == [] and check_ompi_coll_ucc(env, "5.0.6")


# -- misc --------------------------------------------------------------------------------------

def test_strtok_matches_c():
    assert strtok(";;a;;b;", ";") == [("a", 2), ("b", 5)]
    assert strtok("", ",") == []


def test_dispatch_and_int_params():
    assert check_env_value("NCCL_IB_TIMEOUT", "20x")[0].offset == 2
    assert check_env_value("NCCL_IB_TIMEOUT", "abc")[0].severity == Severity.ERROR
    assert check_env_value("NCCL_IB_TIMEOUT", "0x14") == []
    assert check_env_value("NCCL_TOPO_FILE", "/x y") == []  # no grammar
    assert check_nccl_debug_subsys("^INIT,FOO")[0].offset == 6
    assert check_env_value("UCC_CL_BASIC_TUNE", "allreduce:cuda:bogus:inf")


# Observed 2026-11-30 with torch 2.11.0+cu130 (NCCL 2.28.9), 2 ranks on 2 H200s (hpcconf parser
# probe). None: init and all_reduce succeeded; otherwise NCCL's "Last error" text.
REAL_NCCL_2_28_9_ENV = {
    ("NCCL_ALGO", "Bogus"): 'Unrecognized element token "Bogus" when parsing "Bogus"',
    ("NCCL_ALGO", "ring;"): None,
    ("NCCL_ALGO", ";ring"): 'All entries except the first must have a prefix: ";ring"',
    ("NCCL_ALGO", "Tree, Ring"): 'Unrecognized element token " Ring" when parsing "Tree, Ring"',
    ("NCCL_ALGO", "allreduce:tree:ring"): None,
    ("NCCL_ALGO", "sendrecv:ring"): 'Unrecognized prefix token "sendrecv" when parsing "sendrecv:ring"',
    ("NCCL_ALGO", "^"): None,
    ("NCCL_ALGO", "RING,TREE"): None,
    ("NCCL_PROTO", "LL128,Simple"): None,
    ("NCCL_PROTO", "allreduce:LL128;LL,Simple"):
        'All entries except the first must have a prefix: "allreduce:LL128;LL,Simple"',
}


@pytest.mark.parametrize("name, value", list(REAL_NCCL_2_28_9_ENV))
def test_real_nccl_2_28_9_env_verdicts(name, value):
    expected = REAL_NCCL_2_28_9_ENV[(name, value)]
    fatal = [p for p in check_env_value(name, value, nccl_version="2.28.9") if p.fatal]
    assert (not fatal) == (expected is None)
    if expected is not None:
        assert fatal[0].message.startswith(expected)


def test_int_params_only_for_strtoll_reads():
    assert "reads it as 0" in check_env_value("NCCL_IB_DISABLE", "true")[0].message  # NCCL_PARAM: strtoll
    assert check_env_value("NCCL_PARAM_DUMP_ALL", "true") == []  # DEFINE_NCCL_PARAM registry (2.30+)
    assert check_path_level("") == []  # an empty level is as if unset
