"""The resolved model of each example, as reviewable text (tests/resolved/<example>.yaml; issue #23 item 2).

A decision that changes (a pin, a floor, a health check, an NCCL setting, a topology element) shows here in one
file, beside the artifacts in out/ that transcribe it. After an intended change:

    pytest tests/test_resolved_snapshots.py --update-snapshots    # or HPCCONF_UPDATE_SNAPSHOTS=1

rewrites the files and fails once, so the rewrite is reviewed (``git diff tests/resolved``) before it is kept.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

import pytest

from hpcconf.pipeline import compile_spec
from hpcconf.resolve.snapshot import resolved_snapshot

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((REPO / "examples").glob("*.yaml"))
SNAPSHOTS = REPO / "tests" / "resolved"


def _updating(config: pytest.Config) -> bool:
    return bool(config.getoption("--update-snapshots")) or os.environ.get("HPCCONF_UPDATE_SNAPSHOTS") == "1"


def _snapshot(example: Path) -> str:
    return resolved_snapshot(compile_spec(example.relative_to(REPO)).cluster)


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_resolved_model_matches_its_snapshot(example, request, monkeypatch):
    monkeypatch.chdir(REPO)
    rendered = _snapshot(example)
    path = SNAPSHOTS / f"{example.stem}.yaml"
    if _updating(request.config):
        if not path.exists() or path.read_text(encoding="utf-8") != rendered:
            path.write_text(rendered, encoding="utf-8")
            pytest.fail(f"rewrote tests/resolved/{path.name}; review `git diff tests/resolved` and rerun without "
                        "--update-snapshots", pytrace=False)
        return
    assert path.exists(), f"no tests/resolved/{path.name}: run pytest {Path(__file__).name} --update-snapshots"
    recorded = path.read_text(encoding="utf-8")
    if recorded != rendered:
        diff = "".join(difflib.unified_diff(recorded.splitlines(keepends=True), rendered.splitlines(keepends=True),
                                            f"tests/resolved/{path.name}", "resolved now"))
        pytest.fail(f"the resolved model of {example.name} changed (if intended: --update-snapshots):\n{diff[:6000]}",
                    pytrace=False)


def test_every_snapshot_has_its_example():
    assert sorted(p.stem for p in SNAPSHOTS.glob("*.yaml")) == sorted(e.stem for e in EXAMPLES)


def test_the_snapshot_does_not_depend_on_the_working_directory(tmp_path, monkeypatch):
    """No paths, object ids or set order: the same text from another directory and a second resolve."""
    monkeypatch.chdir(REPO)
    example = next(e for e in EXAMPLES if e.stem == "azhop-ncv4")
    first = _snapshot(example)
    monkeypatch.chdir(tmp_path)
    again = resolved_snapshot(compile_spec(example).cluster)
    assert first == again
    assert str(REPO) not in first and " at 0x" not in first


def test_the_snapshot_holds_the_decisions_targets_read():
    """The snapshot is not vacuous: the resolved facts the artifacts transcribe are in it."""
    text = (SNAPSHOTS / "ndmi300x-aks-slurm.yaml").read_text(encoding="utf-8")
    for decision in ("amd_gpu_operator:", "cert_manager:", "ib_vf_rule:", "runs:", "floor:", "health:",
                     "test_image_build:", "rocm_path: /opt/rocm", "image_tests_dir: /workspace/rccl-tests"):
        assert decision in text, decision
    assert "topology:\n" in (SNAPSHOTS / "ndmv4-aks.yaml").read_text(encoding="utf-8")
