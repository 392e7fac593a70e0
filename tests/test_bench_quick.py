"""bench/run.py --quick runs end to end and prints its table (no timing is asserted: CI machines vary)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
AZHOP_SCHEMA = REPO.parent / "shared" / "upstream" / "azhop" / "az-hop" / "config.schema.json"


@pytest.mark.skipif(importlib.util.find_spec("check_jsonschema") is None,
                    reason="check-jsonschema is not installed (pip install -e '.[test]' or '.[bench]')")
def test_quick_benchmark_prints_every_scenario(tmp_path):
    schema = AZHOP_SCHEMA
    if not schema.is_file():  # az-hop's schema is not ours to ship; any schema exercises the script the same way
        schema = tmp_path / "schema.json"
        schema.write_text('{"type": "object"}\n')
    report = tmp_path / "bench.json"
    result = subprocess.run([sys.executable, str(REPO / "bench" / "run.py"), "--quick", "--schema", str(schema),
                             "--json", str(report)], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "--quick: the current interpreter's hpcconf" in out
    for row in ("lint AzHOP config.yml vs check-jsonschema", "build ndmv4-aks-current.yaml vs check-jsonschema",
                "-file tree vs one file", "build 5 pools/500 nodes, a job per pool, vs 1 pool", "peak memory: hpcconf"):
        assert row in out, out
    assert report.is_file()


def test_a_missing_schema_is_an_error_not_a_skipped_row(tmp_path):
    result = subprocess.run([sys.executable, str(REPO / "bench" / "run.py"), "--quick", "--schema",
                             str(tmp_path / "absent.json")], capture_output=True, text=True, timeout=60)
    assert result.returncode != 0 and "config.schema.json not found" in result.stderr
