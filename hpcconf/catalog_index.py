"""The package SKU files indexed by their top-level ``name:`` / ``provider:`` lines, without the pydantic SKU
models: which SKU names exist is asked by every lint of a file that may name one (``LintContext.sku_for_text``),
and importing the models (``hpcconf.catalog``, ~0.2 s with pydantic) is paid only when a file names one."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Callable

from .resources import resource_dir


def default_sku_dir() -> Path:
    return resource_dir("skus")


def sku_files(directory: Path) -> list[Path]:
    # not is_dir: a fifo or an escaping link named *.yaml is refused by the safe reader, not skipped unseen
    return sorted(p for p in directory.iterdir() if p.suffix in (".yaml", ".yml") and not p.is_dir())


_TOP_KEY = r"^{}:[ \t]*['\"]?([^'\"\s#]+)['\"]?[ \t]*(?:#.*)?$"
_NAME_LINE = re.compile(_TOP_KEY.format("name"), re.M)
_PROVIDER_LINE = re.compile(_TOP_KEY.format("provider"), re.M)


def package_entries(parse: Callable[[Path], tuple[str, str]]) -> dict[str, tuple[str, Path]]:
    """Canonical name -> (provider, file) of every package SKU, from each file's top-level ``name:`` and
    ``provider:`` lines: a build parses and validates only the SKUs its spec names. A package file whose
    lines are not that simple is parsed now by ``parse`` (its (name, provider); the catalog's models),
    tests/test_catalog.py holds the index equal to a full load."""
    entries: dict[str, tuple[str, Path]] = {}
    for path in sku_files(default_sku_dir()):
        text = path.read_text(encoding="utf-8")
        name, provider = _NAME_LINE.search(text), _PROVIDER_LINE.search(text)
        if name is None or provider is None or path.stem not in (name[1], f"{provider[1]}-{name[1]}"):
            parsed_name, parsed_provider = parse(path)
            entries[parsed_name] = (parsed_provider, path)
        else:
            entries[name[1]] = (provider[1], path)
    return entries
