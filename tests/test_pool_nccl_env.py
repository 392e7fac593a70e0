"""``nccl_env`` per pool: a pool's key overrides the cluster's in every per-pool artifact (nccl.conf, the
Slurm/AzHOP sbatch), and leaves the other pools with the cluster-level value."""

from __future__ import annotations

from pathlib import Path

import pytest

from hpcconf.diagnostics import HpcconfError
from hpcconf.pipeline import compile_spec

REPO = Path(__file__).resolve().parents[1]
AZHOP = REPO / "examples" / "azhop-ncv4.yaml"


def _compile(tmp_path: Path, old: str, new: str) -> dict[str, str]:
    text = AZHOP.read_text(encoding="utf-8")
    assert old in text
    spec = tmp_path / AZHOP.name
    spec.write_text(text.replace(old, new), encoding="utf-8")
    return {a.path: a.content for a in compile_spec(spec).artifacts}


def test_pool_key_overrides_the_cluster_key_in_that_pool_only(tmp_path):
    files = _compile(tmp_path, "  - name: nc48v4\n",
                     "  - name: nc48v4\n    nccl_env: {NCCL_MIN_NCHANNELS: '16'}\n")
    assert "NCCL_MIN_NCHANNELS" not in files["nccl/ndv4/nccl.conf"]
    assert "NCCL_MIN_NCHANNELS=16" in files["nccl/nc48v4/nccl.conf"]
    assert "NCCL_MIN_NCHANNELS=16" in files["slurm/nc48v4/all_reduce_perf.sbatch"]
    assert "NCCL_MIN_NCHANNELS" not in files["slurm/nc96v4/all_reduce_perf.sbatch"]


def test_pool_level_wins_over_cluster_level(tmp_path):
    files = _compile(tmp_path, "nccl_test:\n",
                     "nccl_env: {NCCL_MIN_NCHANNELS: '8'}\nnccl_test:\n")
    assert "NCCL_MIN_NCHANNELS=8" in files["nccl/ndv4/nccl.conf"]
    text = AZHOP.read_text(encoding="utf-8").replace("nccl_test:\n", "nccl_env: {NCCL_MIN_NCHANNELS: '8'}\nnccl_test:\n")
    text = text.replace("  - name: nc48v4\n", "  - name: nc48v4\n    nccl_env: {NCCL_MIN_NCHANNELS: '16'}\n")
    spec = tmp_path / "both.yaml"
    spec.write_text(text, encoding="utf-8")
    files = {a.path: a.content for a in compile_spec(spec).artifacts}
    assert "NCCL_MIN_NCHANNELS=16" in files["nccl/nc48v4/nccl.conf"] and "=8" not in files["nccl/nc48v4/nccl.conf"]
    assert "NCCL_MIN_NCHANNELS=8" in files["nccl/ndv4/nccl.conf"]


def test_pool_nccl_env_takes_nccl_keys_only(tmp_path):
    with pytest.raises(HpcconfError, match=r"pools\[1\]\.nccl_env\.UCX_TLS: 'UCX_TLS' is not an NCCL variable"):
        _compile(tmp_path, "  - name: nc48v4\n", "  - name: nc48v4\n    nccl_env: {UCX_TLS: tcp}\n")
