"""Shell completion of option values: SKU names, rule codes, formats, platforms.

typer's completion (``hpcconf --install-completion``) asks a parameter's ``autocompletion`` callback
for the values that start with what was typed. Each function here makes such a callback; the
values come from where the command itself reads them (the SKU catalog with the settings'
``sku-dir``, the rule registry, the command's own format table), imported only when the shell asks,
so the CLI's start-up pays nothing for them. Options that take a comma list (``--select``,
``--platform``) complete the item after the last comma and keep what precedes it.
"""

from __future__ import annotations

import importlib
from typing import Any, Callable, Iterable

Completer = Callable[[str], list[Any]]


def _matching(values: Iterable[str | tuple[str, str]], incomplete: str, comma_list: bool) -> list[Any]:
    head, _, last = incomplete.rpartition(",") if comma_list else ("", "", incomplete)
    prefix = f"{head}," if head else ""
    taken = set(head.split(",")) if head else set()
    out = []
    for value in values:
        name, help_text = value if isinstance(value, tuple) else (value, None)
        if name.startswith(last) and name not in taken:  # typer keeps only what starts with the typed text
            out.append((prefix + name, help_text) if help_text else prefix + name)
    return out


def choices(*values: str, comma_list: bool = False) -> Completer:
    """A fixed set of values (``text``, ``json``)."""
    return lambda incomplete: _matching(values, incomplete, comma_list)


def choices_of(module: str, attribute: str, comma_list: bool = False) -> Completer:
    """The values of ``module.attribute``, imported when the shell asks (a module the CLI loads lazily)."""
    return lambda incomplete: _matching(getattr(importlib.import_module(module), attribute), incomplete, comma_list)


def sku_names(incomplete: str) -> list[Any]:
    """The catalog's SKU names, with the settings' ``sku-dir`` entries, also without ``Standard_``
    (``ND96`` completes to ``ND96isr_H100_v5``: the options accept either form)."""
    from .catalog import Catalog
    from .diagnostics import HpcconfError
    from .sku_dirs import with_settings_dirs

    try:
        catalog = Catalog.load(extra_dirs=with_settings_dirs([]))
    except (HpcconfError, OSError, ValueError):  # a broken settings file: complete from the package catalog
        catalog = Catalog.load()
    out = []
    for name in catalog.names():
        sku = catalog.get(name)
        about = f"{sku.gpu.count} x {sku.gpu.model}"
        short = name[len("Standard_"):] if name.startswith("Standard_") else None
        out += [(form, about) for form in (name, short) if form and form.startswith(incomplete)]
    return out


def _rules() -> list[tuple[str, str]]:
    from .lint.rule_loading import load_rules, plain_literals

    return [(r.code, plain_literals(r.summary)) for r in load_rules().values()]


def rule_codes(incomplete: str) -> list[Any]:
    """Rule codes with their summaries, for the comma lists of ``--select``/``--ignore``."""
    return _matching(_rules(), incomplete, comma_list=True)


def rule_code(incomplete: str) -> list[Any]:
    """One rule code (``explain CODE``)."""
    return _matching(_rules(), incomplete, comma_list=False)
