"""The seeds' own files (re-indented excerpts in tests/fixtures/seeds) get the findings they deserve,
and Azure's shipped NCCL files (../shared upstream copies) are judged as the research found them."""

from __future__ import annotations

from pathlib import Path

import pytest

from hpcconf.lint.context import LintContext, lookup_sku
from hpcconf.lint.engine import lint_paths

SEEDS = Path(__file__).resolve().parents[1] / "fixtures" / "seeds"


def lint(*names: str, sku: str | None = None, nccl: str | None = None, base: Path = SEEDS) -> list[tuple]:
    ctx = LintContext()
    if sku:
        ctx.sku = lookup_sku(sku)
    if nccl:
        ctx.nccl_version = nccl
    result = lint_paths([str(base / n) for n in names], ctx)
    return [(Path(f.file).name, f.line, f.code) for f in result.findings]


def test_seed000_nc48_etc_nccl_conf_with_the_graph_file():
    # Seed 000: on NC48ads the ncv4 graph cut all_reduce from 225 to 57 GB/s; the topo file hides the NVLink.
    assert lint("000-nc48-etc-nccl.conf", sku="NC48ads_A100_v4") == [
        ("000-nc48-etc-nccl.conf", 1, "NCCL016"), ("000-nc48-etc-nccl.conf", 2, "NCCL015")]


def test_seed000_conf_is_right_on_nc96_where_azure_ships_both_files():
    assert lint("000-nc48-etc-nccl.conf", sku="NC96ads_A100_v4") == []


def test_seed000_conf_without_sku_has_nothing_to_compare_against():
    assert lint("000-nc48-etc-nccl.conf") == []


def test_seed000_test_script_is_clean():
    # NCCL_TESTS_EXE is a plain shell variable (not exported): not an NCCL setting.
    assert lint("000-nc48-nccl-test.sh", sku="NC48ads_A100_v4") == []


def test_seed002_crusoe_conf_strands_collectives_even_on_its_sku():
    # A global NCCL_ALGO=NVLSTree runs all_reduce across nodes (the guide's benchmark) but leaves
    # Broadcast, Reduce, AllGather and ReduceScatter with no algorithm, and AllReduce on one node:
    # measured on 2 x H200 with NCCL 2.28.9, each of those failed ("no algorithm/protocol available").
    assert lint("002-crusoe-etc-nccl.conf", sku="crusoe-h100-80gb-sxm-ib.8x") == [
        ("002-crusoe-etc-nccl.conf", 7, "NCCL029")]


def test_seed002_crusoe_conf_on_an_a100_sku():
    # The same file on ND A100 v4: it fails everywhere (NCCL029, not repeated as NCCL014); the topo file is Crusoe's.
    found = lint("002-crusoe-etc-nccl.conf", sku="ND96asr_v4")
    assert ("002-crusoe-etc-nccl.conf", 7, "NCCL029") in found
    assert ("002-crusoe-etc-nccl.conf", 7, "NCCL014") not in found
    assert ("002-crusoe-etc-nccl.conf", 3, "NCCL016") not in found  # no Azure family in the path to compare


@pytest.mark.parametrize("name", ["000-ndmv4.Dockerfile", "003-ndmv4.Dockerfile"])
def test_seed_dockerfiles(name):
    # The install layers hold no package lists (the `apt update` layer does: DKR003's one finding).
    assert lint(name) == [(name, 3, "DKR003"), (name, 3, "DKR004"), (name, 10, "DKR005")]


def test_seed000_dockerfile_with_its_job_names_the_workdir_assumption():
    ctx = LintContext()
    result = lint_paths([str(SEEDS / "000-ndmv4.Dockerfile"), str(SEEDS / "000-volcano-mpimaster.yaml")], ctx)
    dkr005 = [f for f in result.findings if f.code == "DKR005"]
    assert len(dkr005) == 1
    assert "000-volcano-mpimaster.yaml:33 sets NCCL_TOPO_FILE=/workspace/ndv4-topo.xml" in dkr005[0].message


def test_seed000_volcano_job_settings_are_read_from_mpirun_lines(tmp_path):
    text = (SEEDS / "000-volcano-mpimaster.yaml").read_text().replace("NCCL_DEBUG=info", "NCCL_DEBUG_LEVEL=info")
    (tmp_path / "job.yaml").write_text(text)
    found = lint("job.yaml", base=tmp_path)
    assert ("job.yaml", 31, "NCCL010") in found


def test_seed000_ndv4_topo_has_the_old_azure_bugs():
    # All four NUMA nodes share one mask (fixed by Azure in 4a4565a0) ...
    # NUMA 0's own mask (line 2) is judged too: the file's bus ids and CPU name its SKU (ND A100 v4's layout).
    assert [line for _, line, code in lint("000-ndv4-topo.xml") if code == "NCCL026"] == [2, 10, 18, 26]
    # ... and GPUs 0001/0002 sit under NUMA 0 (fixed in c3e42913, "numa domains swapped").
    with_sku = lint("000-ndv4-topo.xml", sku="ND96amsr_A100_v4")
    assert [line for _, line, code in with_sku if code == "NCCL027"] == [4, 6, 12, 14, 20, 22, 28, 30]
    # Inferred from the file, the same findings as with --sku.
    assert lint("000-ndv4-topo.xml") == with_sku


# -- Azure's shipped files (read-only oracles) ----------------------------------------------------
@pytest.fixture
def azure(shared_dir) -> Path:
    return shared_dir / "upstream" / "nccl" / "azhpc-images"


@pytest.mark.parametrize("file, sku", [("ndv4-topo.xml", "ND96asr_v4"), ("ndv4-topo.xml", "ND96amsr_A100_v4"),
                                       ("ndv5-topo.xml", "ND96isr_H100_v5"), ("ndv5-topo.xml", "ND96isr_H200_v5"),
                                       ("ndv2-topo.xml", "ND40rs_v2"), ("ncv4-graph.xml", "NC96ads_A100_v4")])
def test_current_azure_files_are_clean_on_their_sku(azure, file, sku):
    assert lint(file, sku=sku, base=azure / "topology") == []


def test_current_ncv4_topo_hides_nvlink_and_misstates_pcie(azure):
    found = lint("ncv4-topo.xml", sku="NC96ads_A100_v4", base=azure / "topology")
    assert [line for _, line, code in found if code == "NCCL025"] == [5, 15, 22, 29]
    assert sum(code == "NCCL023" for _, _, code in found) == 8  # link_speed "" and link_width "0" on 4 GPUs
    assert {code for _, _, code in found} == {"NCCL023", "NCCL025"}


def test_ncv4_graph_on_nc48_names_missing_gpus(azure):
    found = lint("ncv4-graph.xml", sku="NC48ads_A100_v4", base=azure / "topology")
    assert [code for _, _, code in found] == ["NCCL028", "NCCL028"]  # dev 2 and dev 3


def test_ncv4_topo_on_nc48_is_not_wanted(azure):
    found = lint("ncv4-topo.xml", sku="NC48ads_A100_v4", base=azure / "topology")
    assert ("ncv4-topo.xml", 1, "NCCL027") in found


def test_pre_2024_ncv4_topo_with_nvlink_pairs_has_no_self_links(azure):
    found = lint("ncv4-topo.pre-4be0efb7.nvlink-pairs.xml", base=azure / "topology-history")
    assert "NCCL025" not in {code for _, _, code in found}


@pytest.mark.parametrize("file, sku, lines", [
    # Line 2, NUMA 0's mask, against the SKU the file's layout names (inferred: no --sku).
    ("ndv2-topo.pre-4a4565a0.bad-affinity.xml", None, [2, 9]),
    ("ndv4-topo.pre-4a4565a0.bad-affinity.xml", None, [2, 10, 18, 26]),
    ("ndv4-topo.pre-c3e42913.numa-swapped.xml", None, [2, 10, 18, 26]),
    ("ndv5-topo.pre-992d7759.affinity-swapped.xml", "ND96isr_H100_v5", [2, 20]),
])
def test_fixed_azure_affinity_bugs_are_caught(azure, file, sku, lines):
    found = lint(file, sku=sku, base=azure / "topology-history")
    assert [line for _, line, code in found if code == "NCCL026"] == lines


def test_azure_nccl_confs_on_their_skus(azure):
    conf = azure / "nccl-conf"
    assert lint("ndv4.nccl.conf", sku="ND96asr_v4", base=conf) == []
    assert lint("ndv5.nccl.conf", sku="ND96isr_H200_v5", base=conf) == []
    assert lint("ncv4.nccl.conf", sku="NC96ads_A100_v4", base=conf) == []
    legacy = lint("legacy-pre-2022-08.ubuntu-install_nccl.nccl.conf", sku="ND96asr_v4", base=conf)
    assert [(line, code) for _, line, code in legacy] == [(2, "NCCL004")]  # CUDA_DEVICE_ORDER, applied too late
