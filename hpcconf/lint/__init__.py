"""``hpcconf lint``: rules over cluster artifacts, hand-written or generated.

Writing a rule: see ``hpcconf/lint/rule_loading.py`` and ``tests/rules/README.md``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..artifacts import Kind
    from ..diagnostics import Diagnostic, Severity
    from .context import LintContext
    from .document import Document, DocumentSet
    from .rule_loading import REGISTRY, Rule, load_rules, rule

__all__ = ["Diagnostic", "Document", "DocumentSet", "Kind", "LintContext", "REGISTRY", "Rule", "Severity",
           "load_rules", "rule"]

# Where each public name lives. They are imported on first use (PEP 562), so that importing any
# ``hpcconf.lint.*`` module (the CLI registers ``lint`` at start-up) does not load the YAML stack.
_HOMES = {"Kind": "..artifacts", "Diagnostic": "..diagnostics", "Severity": "..diagnostics",
          "LintContext": ".context", "Document": ".document", "DocumentSet": ".document",
          "REGISTRY": ".rule_loading", "Rule": ".rule_loading", "load_rules": ".rule_loading", "rule": ".rule_loading"}


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_HOMES[name], __name__), name)
