"""The packaged NCCL variable table against our research table, and version lookups."""

from __future__ import annotations

import csv
import json
import re

import pytest

from hpcconf.knowledge.nccl_env import (
    DATA_FILE,
    NcclVersion,
    all_vars,
    explain,
    is_read_by,
    known_versions,
    lookup,
    names_read_by,
    newest_version,
    suggest,
)


def _upstream_rows(shared_dir) -> dict[str, dict]:
    lines = (shared_dir / "upstream/nccl/nccl-env-vars.tsv").read_text().splitlines()
    return {row["name"]: row for row in csv.DictReader(lines[1:], delimiter="\t")}


def test_every_variable_matches_the_research_table(shared_dir):
    upstream = _upstream_rows(shared_dir)
    ours = {info.name: info for info in all_vars()}
    assert set(ours) == set(upstream)
    for name, row in upstream.items():
        info = ours[name]
        assert str(info.first) == row["first_version"], name
        last = row["last_version"]
        if last.startswith("current"):
            assert info.last is None and info.status == "current", name
        else:
            assert str(info.last) == last and info.status == "removed", name


def test_newest_version_is_the_table_head(shared_dir):
    header = (shared_dir / "upstream/nccl/nccl-env-vars.tsv").read_text().splitlines()[0]
    assert f"v{newest_version()}-1" in header
    assert len(names_read_by(newest_version())) == 245  # research §4: 2.30.7 reads 245 names
    assert len(all_vars()) == 268
    assert known_versions()[0] == NcclVersion.parse("2.3.5")


def test_replacements_are_read_once_the_old_name_is_gone():
    replaced = [info for info in all_vars() if info.replacement]
    assert len(replaced) >= 12
    for info in replaced:
        assert info.status == "removed", info.name
        target = lookup(info.replacement)
        assert target is not None, info.replacement
        assert is_read_by(info.replacement, newest_version()), info.replacement
        assert not is_read_by(info.name, newest_version())


def test_data_file_ships_inside_the_package():
    assert DATA_FILE.parent.name == "data" and DATA_FILE.parent.parent.name == "hpcconf"
    assert DATA_FILE.read_text().count("\n") > 268


@pytest.mark.parametrize("text, expected", [
    ("2.18.5", (2, 18, 5)), ("v2.18.5-1", (2, 18, 5)), ("2.28.9+cuda13.0", (2, 28, 9)), ("2.18", (2, 18, 0)),
])
def test_version_parse(text, expected):
    assert NcclVersion.parse(text).key == expected


def test_version_compare():
    assert NcclVersion.parse("2.9.9") < NcclVersion.parse("2.18.1") < NcclVersion.parse("v2.30.7-1")
    assert NcclVersion.parse("2.18.5") == NcclVersion.parse("v2.18.5-1")
    assert NcclVersion.parse("2.18").at_least("2.18.5") and not NcclVersion.parse("2.18.1").at_least("2.18.5")
    with pytest.raises(ValueError):
        NcclVersion.parse("latest")


def test_is_read_by():
    assert not is_read_by("NCCL_CONF_FILE", "2.22.3") and is_read_by("NCCL_CONF_FILE", "2.23.4")
    assert is_read_by("NCCL_GRAPH", "2.5.7") and not is_read_by("NCCL_GRAPH", "2.6.4")
    assert is_read_by("NCCL_CUMEM_ENABLE", "2.18") and not is_read_by("NCCL_CUMEM_ENABLE", "2.17.1")
    assert is_read_by("NCCL_ALGO", "2.99.0")  # newer releases keep current names
    assert not is_read_by("NCCL_BOGUS")
    assert "2.23.4" in explain("NCCL_CONF_FILE", "2.22.3")


def test_suggest_typos_and_renames():
    assert suggest("NCCL_IB_HCAA", "2.28.9")[0] == "NCCL_IB_HCA"
    assert suggest("NCCL_IB_HCA", "2.28.9") == []
    assert suggest("NCCL_GRAPH", "2.28.9")[0] == "NCCL_GRAPH_FILE"
    assert suggest("NCCL_MNNVL", "2.21.5")[0] == "NCCL_MNNVL_ENABLE"
    assert suggest("NCCL_MNNVL_ENABLE", "2.20.5")[0] == "NCCL_MNNVL"  # too new: the old name
    assert suggest("NCCL_WORK_FIFO_DEPTH")[0] == "NCCL_WORK_FIFO_BYTES"
    assert suggest("NCCL_NCCL_ALLOC_P2P_NET_LL_BUFFERS", "2.18.1")[0] == "NCCL_ALLOC_P2P_NET_LL_BUFFERS"
    assert suggest("NCCL_IB_GDR_LEVEL", "2.18.1")[0] == "NCCL_NET_GDR_LEVEL"
    assert suggest("nccl_algo")[0] == "NCCL_ALGO"
    assert suggest("IB_HCA")[0] == "NCCL_IB_HCA"


def test_every_nccl_name_in_our_evidence_is_read(shared_dir):
    """The names the probe, Azure's confs and the Crusoe seed set are all read by current NCCL."""
    probe = json.loads((shared_dir / "upstream/nccl/probe/results-config-cases.json").read_text())
    names = {k for case in probe["cases"] for k in case["env"]}
    for path in (shared_dir / "upstream/nccl/azhpc-images/nccl-conf").glob("*.conf"):
        names |= {line.split("=", 1)[0] for line in path.read_text().splitlines() if line.startswith("NCCL_")}
    seed = next((shared_dir / "seeds").glob("002_*.txt")).read_text()
    names |= set(re.findall(r"^(NCCL_[A-Z0-9_]+)=", seed, re.M))
    assert {"NCCL_IB_MERGE_VFS", "NCCL_NSOCKS_PERTHREAD", "NCCL_TOPO_FILE", "NCCL_CONF_FILE"} <= names
    for name in names:
        assert is_read_by(name, probe["env"]["nccl"]), name
