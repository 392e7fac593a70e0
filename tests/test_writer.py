"""Writing an output directory (hpcconf.output_dir): atomic files, a manifest with hashes, stale generated files removed, nothing partial."""

from __future__ import annotations

import json

import pytest

from hpcconf.artifacts import Artifact, Kind
from hpcconf.output_dir import MANIFEST_NAME, manifest_text, sha256, write_artifacts


def _artifacts(conf="NCCL_DEBUG=WARN\n"):
    return [Artifact("nccl/gpu/nccl.conf", conf, Kind.NCCL_CONF, "nccl"),
            Artifact("image/nccl-tests.sh", "#!/bin/bash\necho hi\n", Kind.SHELL_SCRIPT, "test-image")]


def test_writes_files_and_manifest(tmp_path):
    arts = _artifacts()
    report = write_artifacts(tmp_path, arts, manifest_text(arts, "demo.yaml", "hpcconf test"))
    assert sorted(report.written) == ["image/nccl-tests.sh", "nccl/gpu/nccl.conf"]
    manifest = json.loads((tmp_path / MANIFEST_NAME).read_text())
    assert manifest["spec"] == "demo.yaml"
    assert manifest["files"]["nccl/gpu/nccl.conf"]["sha256"] == sha256("NCCL_DEBUG=WARN\n")
    assert (tmp_path / "image/nccl-tests.sh").stat().st_mode & 0o111, "scripts are executable"
    assert not (tmp_path / "nccl/gpu/nccl.conf").stat().st_mode & 0o111


def test_unchanged_files_are_not_rewritten(tmp_path):
    arts = _artifacts()
    write_artifacts(tmp_path, arts, manifest_text(arts, "demo.yaml", "t"))
    before = (tmp_path / "nccl/gpu/nccl.conf").stat().st_mtime_ns
    report = write_artifacts(tmp_path, arts, manifest_text(arts, "demo.yaml", "t"))
    assert report.written == [] and len(report.unchanged) == 2
    assert (tmp_path / "nccl/gpu/nccl.conf").stat().st_mtime_ns == before


def test_files_a_previous_build_made_are_removed_when_no_longer_generated(tmp_path):
    arts = _artifacts()
    write_artifacts(tmp_path, arts, manifest_text(arts, "demo.yaml", "t"))
    (tmp_path / "notes.txt").write_text("mine")  # not ours: must survive
    report = write_artifacts(tmp_path, arts[:1], manifest_text(arts[:1], "demo.yaml", "t"))
    assert report.removed == ["image/nccl-tests.sh"]
    assert (tmp_path / "notes.txt").read_text() == "mine"


def test_manifest_is_deterministic():
    arts = _artifacts()
    assert manifest_text(arts, "d.yaml", "t") == manifest_text(list(reversed(arts)), "d.yaml", "t")


def test_a_failed_swap_leaves_no_staging_directory(tmp_path, monkeypatch):
    import hpcconf.output_dir as output_dir

    def boom(staging, out_dir):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(output_dir, "_swap_in", boom)
    arts = _artifacts()
    with pytest.raises(OSError):
        write_artifacts(tmp_path / "demo", arts, manifest_text(arts, "d.yaml", "t"))
    assert list(tmp_path.iterdir()) == []


def test_a_write_that_fails_half_way_changes_nothing(tmp_path, monkeypatch):
    """A failure while staging the second file leaves neither the first file nor new directories behind."""
    import hpcconf.output_dir as output_dir

    real_write = output_dir._write_file
    calls = []

    def flaky(staging, rel, content, out_dir):
        calls.append(rel)
        if len(calls) == 2:
            raise OSError(28, "No space left on device", str(out_dir / rel))
        return real_write(staging, rel, content, out_dir)

    monkeypatch.setattr(output_dir, "_write_file", flaky)
    out = tmp_path / "out" / "demo"
    arts = _artifacts()
    with pytest.raises(OSError):
        write_artifacts(out, arts, manifest_text(arts, "d.yaml", "t"))
    assert not (tmp_path / "out").exists(), [p for p in tmp_path.rglob("*")]


def test_a_failure_half_way_keeps_the_previous_output(tmp_path, monkeypatch):
    import hpcconf.output_dir as output_dir

    arts = _artifacts()
    out = tmp_path / "demo"
    write_artifacts(out, arts[:1], manifest_text(arts[:1], "d.yaml", "t"))
    before = {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*") if p.is_file()}

    def boom(staging, out_dir):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(output_dir, "_swap_in", boom)
    with pytest.raises(OSError):
        write_artifacts(out, arts, manifest_text(arts, "d.yaml", "t"))
    assert {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["demo"]
