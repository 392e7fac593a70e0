"""Directories named together are compared together, unless they lie in different git repositories (held-out
review r20c, class B: a gpu-operator values file of one repository paired with another's network-operator values
gave HELM004 'both deploy node-feature-discovery')."""

from __future__ import annotations

from pathlib import Path

from hpcconf.lint.context import LintContext
from hpcconf.lint.engine import lint_paths

GPU = "driver:\n  enabled: false\n"
NETWORK = "deployCR: false\n"


def _deployments(root: Path, *, repositories: bool) -> list[str]:
    dirs = []
    for name, file, text in (("cluster-a", "gpu-operator-values.yaml", GPU),
                             ("cluster-b", "network-operator-values.yaml", NETWORK)):
        directory = root / name
        directory.mkdir()
        if repositories:
            (directory / ".git").mkdir()
        (directory / file).write_text(text)
        dirs.append(str(directory))
    return dirs


def _codes(paths: list[str]) -> list[str]:
    return [f.code for f in lint_paths(paths, LintContext()).findings]


def test_directories_of_two_repositories_are_not_paired(tmp_path):
    assert "HELM004" not in _codes(_deployments(tmp_path, repositories=True))


def test_directories_of_one_repository_named_together_are_paired(tmp_path):
    (tmp_path / ".git").mkdir()
    assert "HELM004" in _codes(_deployments(tmp_path, repositories=False))
