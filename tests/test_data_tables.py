"""The data tables' compiled form (JSON, in the wheel) reads exactly as their YAML; a stale one is never used.

hpcconf/data_tables.py says why the wheel carries it; hatch_build.py writes it with compile_tables().
"""

from __future__ import annotations

from pathlib import Path

import pytest
from ruamel.yaml import YAML

from hpcconf import data_tables

TABLES = data_tables.table_files()


def _typed(value):
    """The value with every scalar's type beside it: 1 == 1.0 == True must not pass for equal tables."""
    if isinstance(value, dict):
        return {key: _typed(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_typed(item) for item in value]
    return (type(value).__name__, value)


def test_every_table_is_found():
    names = {t.relative_to(data_tables.DATA_DIR).as_posix() for t in TABLES}
    assert {"chart_trees.yaml", "compat/retirements.yaml", "nhc_checks.yaml"} <= names


@pytest.mark.parametrize("table", TABLES, ids=lambda t: t.relative_to(data_tables.DATA_DIR).as_posix())
def test_the_compiled_table_reads_as_its_yaml(table, tmp_path, monkeypatch):
    text = table.read_text(encoding="utf-8")
    monkeypatch.setattr(data_tables, "COMPILED_DIR", tmp_path)
    data_tables.compile_tables(data_tables.DATA_DIR, tmp_path)
    found, data = data_tables.compiled(table)
    assert found, "the compiled table was not used"
    assert _typed(data) == _typed(YAML(typ="safe").load(text))
    assert _typed(data_tables.load(table)) == _typed(YAML(typ="safe").load(text))


def test_dates_come_back_as_dates(tmp_path, monkeypatch):
    monkeypatch.setattr(data_tables, "COMPILED_DIR", tmp_path)
    data_tables.compile_tables(data_tables.DATA_DIR, tmp_path)
    found, data = data_tables.compiled(data_tables.DATA_DIR / "compat" / "retirements.yaml")
    assert found and "datetime.date(" in repr(data), "retirements.yaml holds dates: they must survive JSON"


def test_a_table_edited_after_compiling_is_read_from_its_yaml(tmp_path, monkeypatch):
    """A wheel's compiled table is used only for exactly the YAML text it was made from."""
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    table = data_dir / "t.yaml"
    table.write_text("a: 1\n", encoding="utf-8")
    monkeypatch.setattr(data_tables, "DATA_DIR", data_dir)
    monkeypatch.setattr(data_tables, "COMPILED_DIR", tmp_path / "compiled")
    data_tables.compile_tables(data_dir, tmp_path / "compiled")
    assert data_tables.compiled(table) == (True, {"a": 1})
    table.write_text("a: 2\n", encoding="utf-8")
    assert data_tables.compiled(table) == (False, None)
    assert data_tables.load(table) == {"a": 2}


def test_a_file_outside_the_package_data_is_read_as_yaml(tmp_path):
    other = tmp_path / "nhc_checks.yaml"
    other.write_text("x: [1, 2]\n", encoding="utf-8")
    assert data_tables.compiled(other) == (False, None)
    assert data_tables.load(other) == {"x": [1, 2]}


@pytest.mark.parametrize("text, problem", [
    ("1: one\n", "is not a string"),
    ("t: 2025-05-31 10:00:00\n", "only dates"),
    ("m: {$date: x}\n", "marks a date"),
    ("n: .nan\n", "cannot be compiled"),
])
def test_what_json_cannot_hold_stops_the_package_build(text, problem):
    with pytest.raises(ValueError, match=problem):
        data_tables.compile_text(text, "t.yaml")


def test_the_package_build_compiles_the_tables_into_the_wheel():
    """pyproject runs hatch_build.py for wheels, and the hook writes every table where data_tables reads it."""
    root = Path(__file__).resolve().parents[1]
    pyproject = (root / "pyproject.toml").read_text(encoding="utf-8")
    assert '[tool.hatch.build.targets.wheel.hooks.custom]\n' in pyproject and 'path = "hatch_build.py"' in pyproject
    hook = (root / "hatch_build.py").read_text(encoding="utf-8")
    assert "compile_tables(root / \"hpcconf\" / \"data\"" in hook
    assert data_tables.COMPILED_DIR.relative_to(data_tables.PACKAGE_DIR.parent).as_posix() == data_tables.COMPILED_PREFIX
