"""`hpcconf lint --jobs N`: deployments linted in parallel processes give the serial run's report.

The tree is the committed output of the examples (cross-file groups: one per manifest directory) plus the real
files of ../shared/upstream/wild (one directory: one group), so cross-file rules have groups to compare.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hpcconf.lint.context import LintContext
from hpcconf.lint.parallel import lint_paths_parallel
from hpcconf.lint.rule_loading import load_rules

REPO = Path(__file__).resolve().parents[1]
WILD = REPO.parent / "shared" / "upstream" / "wild" / "files"


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    if not WILD.is_dir():
        pytest.skip(f"{WILD} is not here")
    root = tmp_path_factory.mktemp("jobs")
    shutil.copytree(REPO / "out", root / "out")
    shutil.copytree(WILD, root / "wild")
    return root


def _lint(tree: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "hpcconf.cli", "lint", *args, "."], cwd=tree,
                          capture_output=True, text=True, timeout=300)


def test_jobs_2_reports_what_jobs_1_reports(tree):
    serial, parallel = _lint(tree, "--jobs", "1", "-v"), _lint(tree, "--jobs", "2", "-v")
    assert serial.returncode == parallel.returncode == 1, serial.stderr[-2000:]
    assert parallel.stdout == serial.stdout
    assert parallel.stderr == serial.stderr  # -v: the files passed over, in the serial order
    as_json = [json.loads(_lint(tree, "--jobs", jobs, "--format", "json").stdout) for jobs in ("1", "2")]
    assert as_json[0] == as_json[1]
    cross_file = {code for code, rule in load_rules().items() if rule.scope == "set"}
    found = {f.get("code") for f in as_json[0]["findings"]} if isinstance(as_json[0], dict) else \
        {f.get("code") for f in as_json[0]}
    assert found & cross_file, "the tree has no cross-file finding: it does not test that groups stay together"


def test_the_tree_is_linted_in_parallel(tree, monkeypatch):
    monkeypatch.chdir(tree)
    result = lint_paths_parallel(["."], LintContext(), None, 2)
    assert result is not None and result.files_checked > 100


def test_one_file_starts_no_pool(tree, monkeypatch):
    monkeypatch.chdir(tree)
    assert lint_paths_parallel(["wild/aioa-slurm-hopper.conf"], LintContext(), None, 2) is None


def test_jobs_must_be_positive(tree):
    done = _lint(tree, "--jobs", "0")
    assert done.returncode == 2 and "--jobs must be 1 or more" in done.stderr + done.stdout


def test_one_file_imports_no_pool_machinery(tree):
    # (multiprocessing itself is imported by detect-secrets; the process pool is ours)
    probe = ("import sys\nsys.argv = ['hpcconf', 'lint', '--jobs', '4', 'wild/aioa-slurm-hopper.conf']\n"
             "from hpcconf.cli import main\ntry:\n    main()\nexcept SystemExit:\n    pass\n"
             "print(sorted(m for m in ('concurrent.futures',) if m in sys.modules), file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", probe], cwd=tree, capture_output=True, text=True, timeout=120)
    assert done.stderr.strip().splitlines()[-1] == "[]", done.stderr[-2000:]
