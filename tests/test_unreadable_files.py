"""A file lint cannot read is an HPC000 finding at the file, never a crash, whoever runs the tests.

CI runs as root, which reads any file: the real permission denial is staged by dropping to
``nobody`` in the child process when possible, and simulated in-process (a real
PermissionError from the read itself, not a mocked engine function) everywhere.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hpcconf.cli import app

REPO = Path(__file__).resolve().parents[1]
JOB = REPO / "out" / "ndmv4-aks" / "aks" / "volcano-job.yaml"


@pytest.fixture
def denied(monkeypatch):
    real = os.open

    def opener(path, flags, *args, **kwargs):
        if os.path.basename(path) == "job.yaml":
            raise PermissionError(13, "Permission denied", str(path))
        return real(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", opener)


@pytest.mark.parametrize("fmt", ["text", "json", "sarif"])
def test_permission_denied_in_a_directory_is_an_hpc000_finding(tmp_path, denied, fmt):
    shutil.copy(JOB, tmp_path / "job.yaml")
    result = CliRunner().invoke(app, ["lint", str(tmp_path), "--format", fmt])
    assert result.exit_code == 1, result.output
    assert "HPC000" in result.stdout and "job.yaml" in result.stdout, result.output
    if fmt != "text":
        json.loads(result.stdout)


@pytest.mark.parametrize("fmt", ["text", "json", "sarif"])
def test_permission_denied_on_a_named_file_is_an_hpc000_finding(tmp_path, denied, fmt):
    """A file named on the command line that cannot be read was not checked: an error finding at that
    file (exit 1), in every format, never a crash and never a clean pass."""
    shutil.copy(JOB, tmp_path / "job.yaml")
    result = CliRunner().invoke(app, ["lint", str(tmp_path / "job.yaml"), "--format", fmt])
    assert result.exit_code == 1, result.output
    assert "HPC000" in result.stdout and "job.yaml" in result.stdout and "Permission denied" in result.stdout
    if fmt != "text":
        json.loads(result.stdout)


def _nobody_can_run_python() -> bool:
    if os.geteuid() != 0:
        return True
    try:
        check = subprocess.run([sys.executable, "-c", "import hpcconf"], preexec_fn=_drop_to_nobody,
                               capture_output=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return False
    return check.returncode == 0


def _drop_to_nobody() -> None:
    if os.geteuid() == 0:
        os.setgid(65534)
        os.setuid(65534)


@pytest.mark.skipif(not _nobody_can_run_python(), reason="as root here, and user nobody cannot run this interpreter "
                    "(it lives under a private home); the in-process test above covers the same path")
def test_a_real_permission_denial_as_an_unprivileged_user():
    work = Path(tempfile.mkdtemp())
    try:
        work.chmod(0o755)
        shutil.copy(JOB, work / "job.yaml")
        (work / "job.yaml").chmod(0)
        result = subprocess.run([sys.executable, "-m", "hpcconf.cli", "lint", str(work), "--format", "json"],
                                capture_output=True, text=True, preexec_fn=_drop_to_nobody, cwd=work, timeout=120)
        assert result.returncode == 1, result.stderr
        assert '"code": "HPC000"' in result.stdout
    finally:
        shutil.rmtree(work)
