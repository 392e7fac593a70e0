"""Which package SKU a file names (LintContext.sku_for_text): one pass over the text, one catalog per process.

The answer must be the one a whole-word search per SKU name gives (``(?<![\\w.-])NAME(?![\\w.-])``), on every
file hpcconf generates and on the boundaries that decide it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hpcconf.catalog import Catalog
from hpcconf.lint import context
from hpcconf.lint.context import LintContext, skus_named_in

REPO = Path(__file__).resolve().parents[2]


def _per_name_search(text: str) -> set[str]:
    return {name for name in Catalog.load().names()
            if re.search(r"(?<![\w.-])" + re.escape(name) + r"(?![\w.-])", text)}


def _texts() -> list[Path]:
    return sorted(p for root in ("out", "examples", "tests/fixtures") for p in (REPO / root).rglob("*")
                  if p.is_file() and p.stat().st_size < 1_000_000)


def test_every_generated_and_fixture_file_names_the_skus_a_search_per_name_finds():
    checked = named = 0
    for path in _texts():
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        found = skus_named_in(text)
        assert found == _per_name_search(text), path
        checked += 1
        named += bool(found)
    assert checked > 100 and named > 20  # the corpus holds files that name SKUs, and many that do not


@pytest.mark.parametrize("text, names", [
    ("vm_size: Standard_ND96asr_v4\n", {"Standard_ND96asr_v4"}),
    ("vm_size: 'Standard_ND96asr_v4'", {"Standard_ND96asr_v4"}),
    ("Standard_ND96asr_v4,Standard_NC24ads_A100_v4", {"Standard_ND96asr_v4", "Standard_NC24ads_A100_v4"}),
    ("x/Standard_ND96asr_v4/y", {"Standard_ND96asr_v4"}),
    ("Standard_ND96asr_v4x Standard_ND96asr_v4.y -Standard_ND96asr_v4 a.Standard_ND96asr_v4", set()),
    ("éStandard_ND96asr_v4 Standard_ND96asr_v4é", set()),  # a Unicode word character is part of the word
    ("standard_nd96asr_v4", set()),  # canonical spelling only, as before
    ("", set()),
])
def test_whole_word_boundaries(text, names):
    assert skus_named_in(text) == names == _per_name_search(text)


def test_a_name_with_other_characters_is_searched_for_on_its_own(monkeypatch):
    from hpcconf import catalog_index

    # The names come from the SKU files' top-level lines (catalog_index), not from the SKU models.
    monkeypatch.setattr(catalog_index, "package_entries",
                        lambda parse: {"Standard_ND96asr_v4": ("azure", None), "gpu box/8": ("azure", None)})
    context._sku_names.cache_clear()
    context._skus_named_in.cache_clear()
    try:
        assert skus_named_in("a gpu box/8 and Standard_ND96asr_v4") == {"gpu box/8", "Standard_ND96asr_v4"}
        assert skus_named_in("a gpu box/80") == set()
    finally:
        context._sku_names.cache_clear()
        context._skus_named_in.cache_clear()


def test_the_package_catalog_is_loaded_once_for_many_files(monkeypatch):
    calls = []
    real = Catalog.load.__func__

    def counting(cls, extra_dirs=()):
        calls.append(extra_dirs)
        return real(cls, extra_dirs)

    monkeypatch.setattr(Catalog, "load", classmethod(counting))
    context._package_catalog.cache_clear()
    context._sku_names.cache_clear()
    context._skus_named_in.cache_clear()
    try:
        ctx = LintContext()
        texts = ["NCCL_IB_HCA=mlx5\n# Standard_ND96asr_v4\n", "# Standard_NC24ads_A100_v4\n", "# none\n"] * 5
        found = [ctx.sku_for_text(text) for text in texts]
        assert [s.name if s else None for s in found[:3]] == ["Standard_ND96asr_v4", "Standard_NC24ads_A100_v4", None]
        assert len(calls) == 1, f"Catalog.load() ran {len(calls)} times for {len(texts)} files"
    finally:
        context._package_catalog.cache_clear()
        context._sku_names.cache_clear()
        context._skus_named_in.cache_clear()
