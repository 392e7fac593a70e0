"""``hpcconf lint``: rules over cluster artifacts, hand-written or generated.

Writing a rule: see ``hpcconf/lint/registry.py`` and ``tests/rules/README.md``.
"""

from ..artifacts import Kind
from ..diagnostics import Diagnostic, Severity
from .context import LintContext
from .document import Document, DocumentSet
from .registry import REGISTRY, Rule, load_rules, rule

__all__ = ["Diagnostic", "Document", "DocumentSet", "Kind", "LintContext", "REGISTRY", "Rule", "Severity",
           "load_rules", "rule"]
