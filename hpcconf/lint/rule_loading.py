"""The lint-facing view of the rule registry (:mod:`hpcconf.rules_registry`).

A lint rule is a function plus metadata::

    @rule(code="NCCL001", name="nccl-conf-space-around-equals", severity=Severity.ERROR,
          kinds=(Kind.NCCL_CONF,))
    def check(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
        '''Summary line.

        ## What it catches
        ...
        ## Why is this bad?
        ...
        ## Example
        ...
        ## Fix
        ...
        '''

Per-document rules (``scope="document"``, the default) are called once per document whose
kind is in ``kinds``. Set rules (``scope="set"``) are called once with the whole
:class:`~hpcconf.lint.document.DocumentSet`, for checks across files. Rules only *yield*
diagnostics; the engine fills in code, name and default severity, so a rule may yield
``doc.at_line(3, "message", hint="...")`` without repeating its own metadata.

Rule modules live in ``hpcconf/lint/rules/``; every module there is imported by
:func:`load_rules`, so adding a file is all it takes to add a family. The spec's cross-field
checks that refuse a spec (``hpcconf/spec/checks/``, ``@spec_rule``) are loaded too, so ``hpcconf rules``,
``explain`` and ``docs/rules.md`` cover every code. A spec rule that judges the resolved cluster
(``@spec_rule(moment=Moment.JUDGE)``) lives in a rule module and reads a
:class:`~hpcconf.lint.compiled_spec.CompiledSpec`.
"""

from __future__ import annotations

import importlib
import pkgutil

from ..rules_registry import (
    CODE_PATTERN,
    DOCS_URL,
    NAME_PATTERN,
    REGISTRY,
    REQUIRED_SECTIONS,
    Moment,
    Rule,
    Scope,
    engine_rule,
    missing_sections,
    plain_literals,
    redirect_note,
    rule,
    spec_rule,
    successors,
)

__all__ = ["CODE_PATTERN", "DOCS_URL", "Moment", "NAME_PATTERN", "REGISTRY", "REQUIRED_SECTIONS",
           "Rule", "Scope", "engine_rule", "find_rule", "load_rules", "load_rules_for", "missing_sections", "plain_literals", "redirect_note",
           "rule", "spec_rule", "successors"]

_loaded = False


def load_rules() -> dict[str, Rule]:
    """Import every rule module (lint rules, engine findings, spec checks) once; the rules by code."""
    global _loaded
    if not _loaded:
        from ..resolve.refusals import load_resolved_refusals
        from ..spec.checks import load_spec_rules
        from . import engine_rules  # noqa: F401  (registers HPC rules)
        from . import rules as package

        load_spec_rules()
        load_resolved_refusals()
        for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
            importlib.import_module(f"{package.__name__}.{info.name}")
        _loaded = True
    return dict(sorted(REGISTRY.items()))


def load_rules_for(kinds: set[str]) -> dict[str, Rule]:
    """The rules a lint run of documents of ``kinds`` can fire: every module not listed in
    :data:`hpcconf.lint.rule_index.DOCUMENT_RULE_MODULE_KINDS`, and the listed ones checking one of ``kinds``. The spec's
    cross-field checks are not among them (a spec is linted with :func:`load_rules`). Loaded modules
    stay loaded, so the result may hold more rules, never fewer."""
    from . import engine_rules  # noqa: F401  (registers HPC rules)
    from . import rules as package
    from .rule_index import DOCUMENT_RULE_MODULE_KINDS  # generated (python -m hpcconf.lint.docs), which needs no index

    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        checks = DOCUMENT_RULE_MODULE_KINDS.get(info.name)
        if checks is None or checks & kinds:
            importlib.import_module(f"{package.__name__}.{info.name}")
    return dict(sorted(REGISTRY.items()))


def find_rule(code_or_name: str) -> Rule | None:
    """Look a rule up by code (any case) or kebab name."""
    rules = load_rules()
    key = code_or_name.strip()
    if key.upper() in rules:
        return rules[key.upper()]
    for r in rules.values():
        if r.name == key.lower():
            return r
    return None
