"""`.ci/run` refuses to run the suite without ../shared: ~200 tests would skip and CI would pass anyway."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_ci_run_fails_when_the_shared_oracles_are_absent(tmp_path):
    checkout = tmp_path / "repo"
    (checkout / ".ci").mkdir(parents=True)
    shutil.copy(REPO / ".ci" / "run", checkout / ".ci" / "run")
    result = subprocess.run(["bash", str(checkout / ".ci" / "run")], capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert "../shared/upstream is missing" in result.stderr
    assert not (checkout / ".venv").exists()  # stopped before installing anything
