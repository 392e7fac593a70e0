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
checks (``hpcconf/spec/checks/``, ``@spec_rule``) are loaded too, so ``hpcconf rules``,
``explain`` and ``docs/rules.md`` cover every code.
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

__all__ = ["CODE_PATTERN", "DOCS_URL", "DOCUMENT_RULE_MODULE_KINDS", "NAME_PATTERN", "REGISTRY", "REQUIRED_SECTIONS",
           "Rule", "Scope", "engine_rule", "find_rule", "load_rules", "load_rules_for", "missing_sections", "plain_literals", "redirect_note",
           "rule", "spec_rule", "successors"]

_loaded = False


def load_rules() -> dict[str, Rule]:
    """Import every rule module (lint rules, engine findings, spec checks) once; the rules by code."""
    global _loaded
    if not _loaded:
        from ..spec.checks import load_spec_rules
        from . import engine_rules  # noqa: F401  (registers HPC rules)
        from . import rules as package

        load_spec_rules()
        for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
            importlib.import_module(f"{package.__name__}.{info.name}")
        _loaded = True
    return dict(sorted(REGISTRY.items()))


# Rule modules whose rules are all per-document, with the kinds they check: a lint run whose files are
# none of these kinds need not import them (the imports are most of a small run's time: the knowledge
# tables and parsers behind them). A module not listed here is always imported (modules with set rules,
# new modules), so leaving one out is only slower. tests/test_rule_loading.py holds each row to its rules.
_AZHOP = frozenset({"azhop-config"})
DOCUMENT_RULE_MODULE_KINDS: dict[str, frozenset[str]] = {
    "azhop_identity": _AZHOP, "azhop_images": _AZHOP, "azhop_network": _AZHOP, "azhop_queues": _AZHOP,
    "azhop_schema": _AZHOP, "azhop_storage": _AZHOP,
    "compat": frozenset({"azhop-config", "dockerfile", "helm-values/gpu-operator", "spec"}),
    "k8s": frozenset({"hostdevicenetwork", "k8s-manifest", "volcano-job"}),
    "k8s_admission": frozenset({"hostdevicenetwork", "k8s-manifest", "nicclusterpolicy", "volcano-job"}),
    "mpi": frozenset({"dockerfile", "env-file", "k8s-manifest", "sbatch-script", "shell-script", "volcano-job"}),
    "nccl_env": frozenset({"dockerfile", "env-file", "k8s-manifest", "nccl-conf", "sbatch-script", "shell-script",
                           "volcano-job"}),
    "nccl_xml": frozenset({"nccl-graph", "nccl-topology"}),
    "nhc": frozenset({"nhc-conf"}),
    "slurm": frozenset({"sbatch-script", "shell-script", "tfvars"}),
    "volcano": frozenset({"volcano-job"}),
}


def load_rules_for(kinds: set[str]) -> dict[str, Rule]:
    """The rules a lint run of documents of ``kinds`` can fire: every module not listed in
    :data:`DOCUMENT_RULE_MODULE_KINDS`, and the listed ones checking one of ``kinds``. The spec's
    cross-field checks are not among them (a spec is linted with :func:`load_rules`). Loaded modules
    stay loaded, so the result may hold more rules, never fewer."""
    from . import engine_rules  # noqa: F401  (registers HPC rules)
    from . import rules as package

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
