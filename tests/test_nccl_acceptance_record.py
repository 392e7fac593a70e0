"""Real-NCCL evidence for every NCCL file hpcconf generates.

docs/acceptance/nccl-h200-x2.json records a run of tools/nccl_acceptance/run.py on 2 x H200
(NCCL 2.28.9): each SKU's generated topology, graph and nccl.conf was loaded by real NCCL in
a 2-rank all_reduce. This test regenerates the files here and requires a recorded verdict
for each one (by SHA-256), so a generator change cannot ship without re-running the check.
Re-run:  python tools/nccl_acceptance/prepare.py .acceptance  then, on >= 2 GPUs,
         python3 tools/nccl_acceptance/run.py .acceptance docs/acceptance/nccl-h200-x2.json \
             docs/acceptance/nccl-h200-x2-raw.jsonl
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from hpcconf.catalog import Catalog
from hpcconf.parsers.nccl_conf import render_nccl_conf
from hpcconf.resolve.nccl import resolve_pool_nccl
from hpcconf.resolve.sku import resolve_sku
from hpcconf.targets.nccl_topology import render_graph_xml, render_topology_xml

RECORD = Path(__file__).resolve().parents[1] / "docs" / "acceptance" / "nccl-h200-x2.json"
# Files added while only a one-GPU machine was lent were recorded there (1 rank: acceptance, no busbw).
RECORD_X1 = RECORD.with_name("nccl-h200-x1.json")
TEST_GPUS = 2  # GPUs of the machine the record was made on


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _record() -> dict:
    return json.loads(RECORD.read_text())


def _generated(sku) -> dict[str, str]:
    nccl = resolve_pool_nccl(sku, infiniband=sku.infiniband is not None, overrides={}, nccl_version=_record()["nccl_version"])
    files = {"conf": render_nccl_conf(dict(nccl.node_conf))}
    if nccl.topo_file:
        files["topo"] = render_topology_xml(resolve_sku(sku))
    if nccl.graph_file:
        files["graph"] = render_graph_xml(resolve_sku(sku))
    return files


def _verdict(role: str, text: str) -> dict:
    extra = [dict(c, ranks=1) for c in json.loads(RECORD_X1.read_text())["cases"]] if RECORD_X1.exists() else []
    for case in [dict(c, ranks=2) for c in _record()["cases"]] + extra:
        if case["role"] == role and case["source_sha256"] == _sha(text):
            return case
    pytest.fail(f"no real-NCCL verdict recorded for this {role} file: re-run tools/nccl_acceptance (see module doc)")


CATALOG = Catalog.load()


@pytest.mark.parametrize("name", CATALOG.names())
def test_generated_nccl_files_were_accepted_by_real_nccl(name):
    sku = CATALOG.get(name)
    for role, text in _generated(sku).items():
        verdict = _verdict(role, text)
        uses_graph = role == "graph" or (role == "conf" and "NCCL_GRAPH_FILE=" in text)
        if uses_graph and sku.gpu.count > TEST_GPUS:
            # A graph names every GPU of its VM; on a smaller machine NCCL must refuse it (NCCL028's claim).
            assert not verdict["ok"] and "dev 2 not found" in verdict["error"]
        else:
            assert verdict["ok"], verdict.get("error")
            if verdict["ranks"] == 2:  # one rank moves nothing: a one-GPU record shows acceptance only
                assert verdict["busbw_GBps"] > 0.9 * _baseline(), "the file must not cost bandwidth on the test machine"
        if role in ("topo", "graph"):
            # The bytes NCCL said it loaded are this SKU's own file, not a sibling's of the same family.
            key = "NCCL_TOPO_FILE" if role == "topo" else "NCCL_GRAPH_FILE"
            assert verdict["loaded"][key]["sha256"] == _sha(text)


def test_nccl_algo_predictions_match_real_nccl():
    """Every collective, one node of 2 GPUs, NVLS off: what knowledge.nccl_algo predicts is what NCCL did."""
    cases = {c["name"]: c for c in _record()["algo_cases"]}
    assert {"generated-NVLSTree", "global-NVLSTree", "global-Tree", "unset"} <= set(cases)
    for case in cases.values():
        assert all(case["matches_expected"].values()), case["name"]
    assert all(c["ok"] for c in cases["generated-NVLSTree"]["collectives"].values())
    assert not cases["global-Tree"]["collectives"]["all_gather"]["ok"]


def test_raw_nccl_output_is_committed_beside_the_verdicts():
    raw = RECORD.with_name("nccl-h200-x2-raw.jsonl").read_text().splitlines()
    labels = {json.loads(line)["case"] for line in raw}
    assert len(labels) == len(raw) and "Standard_ND96isr_H100_v5:topo" in labels
    assert any("NCCL version 2.28.9" in out for out in json.loads(raw[1])["rank_output"])


def _baseline() -> float:
    return next(c["busbw_GBps"] for c in _record()["cases"] if c["sku"] == "baseline")


def test_the_harness_can_fail():
    controls = {c["sku"]: c for c in _record()["cases"] if c["sku"].startswith("control-")}
    assert "expected >, got '?'" in controls["control-prolog"]["error"]
    assert "expecting '<'" in controls["control-tabs"]["error"]
    assert _record()["nccl_version"] == "2.28.9"


def test_the_one_gpu_record_could_fail_too():
    """The one-GPU run (1 rank) kept its negative controls: NCCL refused both broken topologies there as well."""
    record = json.loads(RECORD_X1.read_text())
    assert record["ranks"] == 1 and record["gpu"] == "NVIDIA H200" and record["nccl_version"] == "2.28.9"
    controls = {c["sku"]: c for c in record["cases"] if c["sku"].startswith("control-")}
    assert set(controls) == {"control-prolog", "control-tabs"} and not any(c["ok"] for c in controls.values())
    assert len(RECORD_X1.with_name("nccl-h200-x1-raw.jsonl").read_text().splitlines()) == len(record["cases"])
