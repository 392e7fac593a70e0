"""Cross-field checks of a spec: what relates fields (references, SKU facts, versions, sizes).

Pydantic checks each field on its own; the checks here need several fields or the SKU catalog,
and each points at the exact key to change. Every check is a registered rule
(:mod:`hpcconf.rules_registry`) with its own code and page, so ``hpcconf explain CODE`` describes
what the user hit. Adding one is writing a function in any module of this package::

    @spec_rule(code="SPEC016", name="some-conflict", since="0.2.0")
    def some_conflict(loaded: LoadedSpec, catalog: Catalog) -> Iterator[Diagnostic]:
        '''Summary line, then the four page sections.'''
        if ...:
            yield at(loaded, ("versions", "nccl"), "what is wrong", "how to fix it")

and a fixture directory ``tests/rules/SPEC016/`` (bad.yaml, good.yaml, expect.yaml). The moment is
``Moment.REFUSE`` (the default): the rule runs in ``hpcconf build`` (any finding refuses the spec, exit 2)
and ``hpcconf lint SPEC`` (an always-selected error). A check that needs the resolved cluster is
``@spec_rule(moment=Moment.JUDGE)`` in a lint rule module instead (:mod:`hpcconf.rules_registry`).
``hpcconf rules`` / ``explain`` / ``docs/rules.md`` list both kinds. A check that splits an existing code names it in ``formerly=("HPC005",)`` so suppressions of the old code keep working.
"""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
from typing import TYPE_CHECKING, Any

from ...diagnostics import Diagnostic, Severity
from ...rules_registry import spec_checks

if TYPE_CHECKING:  # the pydantic models: `hpcconf lint` of a config file registers these rules, runs none
    from ...catalog import Catalog
    from ..load import LoadedSpec

_loaded = False


def load_spec_rules() -> None:
    """Import every module of this package once; each registers its rules."""
    global _loaded
    if not _loaded:
        for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
            importlib.import_module(f"{__name__}.{info.name}")
        _loaded = True


def at(loaded: LoadedSpec, path: tuple[Any, ...], message: str, hint: str = "", prefer_value: bool = True,
       severity: Severity = Severity.ERROR) -> Diagnostic:
    """A finding at the spec key ``path``; the runner fills in the rule's code and name."""
    return loaded.document.diagnostic(Diagnostic(code="", message=message, hint=hint, severity=severity),
                                      path, prefer_value=prefer_value)


def check_spec(loaded: LoadedSpec, catalog: Catalog) -> list[Diagnostic]:
    """Every spec rule's errors, labelled with its code; ``hpcconf build`` refuses the spec on any.

    Only errors are returned: a spec either compiles or it does not, and a warning here would stop
    ``build`` as surely as an error.
    """
    load_spec_rules()
    found: list[Diagnostic] = []
    for code, name, _severity, check in spec_checks():
        for diagnostic in check(loaded, catalog) or ():
            if not diagnostic.code:
                diagnostic = dataclasses.replace(diagnostic, code=code, name=name)
            if diagnostic.severity is Severity.ERROR:
                found.append(diagnostic)
    return found
