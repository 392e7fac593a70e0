"""Malformed specs: each is refused with file:line:col, a code and a hint, exit code 2, nothing written."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from hpcconf.cli import app

INVALID = Path(__file__).parent / "specs" / "invalid"

# file -> (code, line, column, a phrase the message or hint must contain)
CASES = {
    "yaml-syntax.yaml": ("HPC001", 5, 12, "mapping values are not allowed"),
    "tab-indent.yaml": ("HPC001", 4, 1, "spaces only"),
    "duplicate-key.yaml": ("HPC002", 7, 1, 'duplicate key "platforms"'),
    "unknown-key.yaml": ("HPC003", 11, 5, "did you mean 'placement'?"),
    "unknown-top-key.yaml": ("HPC003", 11, 1, "did you mean 'nccl_env'?"),
    "missing-location.yaml": ("HPC004", 3, 1, "required field 'location'"),
    "aks-without-image.yaml": ("SPEC001", 6, 1, "needs a test_image"),
    "wrong-type-count.yaml": ("HPC005", 10, 12, "'two' must be a whole number"),
    "negative-count.yaml": ("HPC005", 10, 12, "-1 is out of range: it must be at least 1"),
    "bad-platform.yaml": ("HPC005", 6, 20, "did you mean 'aks'?"),
    "bad-cidr.yaml": ("HPC005", 13, 17, "write it like 192.168.0.0/16"),
    "non-nccl-env.yaml": ("HPC005", 12, 3, "put other variables in mpi_env"),
    "unpinned-base-image.yaml": ("HPC005", 14, 9, "is not pinned"),
    "bad-name.yaml": ("HPC005", 4, 9, "lower case letters"),
    "bad-pool-name.yaml": ("HPC005", 8, 11, "at most 12 characters"),
    "not-a-mapping.yaml": ("HPC005", 1, 1, "must be a YAML mapping"),
    "null-pools.yaml": ("HPC005", 5, 8, "is empty (null), but must be a list"),
    "bool-count.yaml": ("HPC005", 6, 50, "true must be a whole number"),
    "quoted-count.yaml": ("HPC005", 6, 50, "remove the quotes"),
    "no-platforms.yaml": ("HPC005", 4, 12, "needs at least 1 entry, has 0"),
    "bad-api-version.yaml": ("HPC007", 1, 13, "hpcconf/v1"),
    "bad-sku.yaml": ("HPC006", 9, 10, "did you mean Standard_ND96asr_v4"),
    "duplicate-pool.yaml": ("HPC008", 11, 11, "already used by pools[0]"),
    "unknown-test-pool.yaml": ("HPC009", 12, 9, "use one of: gpu"),
}


def test_every_invalid_spec_has_a_case():
    assert sorted(p.name for p in INVALID.glob("*.yaml")) == sorted(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_invalid_spec_is_refused_at_its_position(name, tmp_path, monkeypatch):
    code, line, column, phrase = CASES[name]
    monkeypatch.chdir(INVALID)
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["build", name, "--out", str(out)])
    text = result.output
    assert result.exit_code == 2, text
    assert f"{name}:{line}:{column}: error[{code}]" in text
    assert phrase in text
    assert "hint:" in text
    assert "Traceback" not in text
    assert not out.exists(), "a refused build must not write anything"


def test_caret_points_under_the_offending_value(monkeypatch):
    monkeypatch.chdir(INVALID)
    result = CliRunner().invoke(app, ["build", "negative-count.yaml", "--out", "unused"])
    lines = result.output.splitlines()
    source = next(i for i, text in enumerate(lines) if text.startswith(" 10 |"))
    assert lines[source] == " 10 |     count: -1"
    assert lines[source + 1] == "    |            ^^"


def test_missing_spec_file_is_a_clear_error(tmp_path):
    result = CliRunner().invoke(app, ["build", str(tmp_path / "nope.yaml"), "--out", str(tmp_path / "o")])
    assert result.exit_code == 2
    assert "spec file not found" in result.output
    assert not (tmp_path / "o").exists()


def test_one_bad_spec_among_several_writes_nothing(tmp_path, repo_root, monkeypatch):
    monkeypatch.chdir(repo_root)
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["build", "examples/ndmv4-aks.yaml", str(INVALID / "bad-sku.yaml"), "--out", str(out)])
    assert result.exit_code == 2
    assert not out.exists()


def test_yaml_alias_bomb_is_refused_quickly(tmp_path):
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 9)]  # 9**9 values
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text("\n".join(lines) + "\n")
    result = CliRunner().invoke(app, ["build", str(bomb), "--out", str(tmp_path / "o")])
    assert result.exit_code == 2
    assert "aliases expand this document to more than 200,000 values" in result.output
