"""The rule registry: one decorator turns a small function into a documented lint rule.

A rule is a function plus metadata::

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
:func:`load_rules`, so adding a file is all it takes to add a family.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from dataclasses import dataclass
from typing import Callable, Iterable

from ..diagnostics import Severity

REQUIRED_SECTIONS = ("## What it catches", "## Why is this bad?", "## Example", "## Fix")
CODE_PATTERN = re.compile(r"^(HPC|SPEC|XA|K8S|VOL|HELM|NCCL|AZH|MPI|DKR|SLURM)\d{3}$")
NAME_PATTERN = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
DOCS_URL = "https://github.com/hpcconf/hpcconf/blob/main/docs/rules.md"

Scope = str  # "document" | "set"


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    severity: Severity
    kinds: tuple[str, ...]
    scope: Scope
    check: Callable | None  # None for findings the engine itself emits (syntax, suppressions)
    doc: str

    @property
    def summary(self) -> str:
        return self.doc.strip().splitlines()[0].strip() if self.doc.strip() else ""

    @property
    def body(self) -> str:
        """The docstring without its summary line: the rule page's sections."""
        lines = self.doc.strip().splitlines()
        return "\n".join(lines[1:]).strip()

    def section(self, title: str) -> str:
        """The text of ``## title`` up to the next ``## ``, or ""."""
        match = re.search(rf"^## {re.escape(title)}\s*$(.*?)(?=^## |\Z)", self.body, re.M | re.S)
        return match.group(1).strip() if match else ""

    @property
    def help_uri(self) -> str:
        return f"{DOCS_URL}#{self.code.lower()}-{self.name}"


REGISTRY: dict[str, Rule] = {}


def rule(*, code: str, name: str, severity: Severity, kinds: Iterable[str] = (),
         scope: Scope = "document") -> Callable[[Callable], Callable]:
    """Register the decorated function as rule ``code``; its docstring is the rule page."""

    def decorate(func: Callable | None) -> Callable | None:
        doc = inspect.cleandoc(func.__doc__ or "") if func is not None else ""
        _register(Rule(code=code, name=name, severity=severity, kinds=tuple(kinds), scope=scope,
                       check=func, doc=doc))
        return func

    return decorate


def engine_rule(*, code: str, name: str, severity: Severity, doc: str) -> Rule:
    """Register a finding the engine emits itself (parse errors, suppression problems)."""
    new = Rule(code=code, name=name, severity=severity, kinds=(), scope="engine", check=None,
               doc=inspect.cleandoc(doc))
    _register(new)
    return new


def _register(new: Rule) -> None:
    if not CODE_PATTERN.match(new.code):
        raise ValueError(f"rule code {new.code!r} must be a family prefix and 3 digits")
    if not NAME_PATTERN.match(new.name):
        raise ValueError(f"rule name {new.name!r} must be kebab-case")
    if new.scope not in ("document", "set", "engine"):
        raise ValueError(f"rule {new.code}: scope must be 'document' or 'set'")
    old = REGISTRY.get(new.code)
    if old is not None and (old.name != new.name or _origin(old) != _origin(new)):
        raise ValueError(f"rule code {new.code} registered twice ({old.name}, {new.name})")
    for other in REGISTRY.values():
        if other.name == new.name and other.code != new.code:
            raise ValueError(f"rule name {new.name} used by {other.code} and {new.code}")
    REGISTRY[new.code] = new


def _origin(r: Rule) -> str:
    return f"{r.check.__module__}.{r.check.__qualname__}" if r.check else "engine"


_loaded = False


def load_rules() -> dict[str, Rule]:
    """Import every module of :mod:`hpcconf.lint.rules` (each registers its rules) once."""
    global _loaded
    if not _loaded:
        from . import engine_rules  # noqa: F401  (registers HPC rules)
        from . import rules as package

        for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
            importlib.import_module(f"{package.__name__}.{info.name}")
        _loaded = True
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


def missing_sections(r: Rule) -> list[str]:
    """Required page sections the rule's docstring lacks (checked by a guard test)."""
    missing = [s for s in REQUIRED_SECTIONS if s not in r.doc]
    if not r.summary or r.summary.startswith("#"):
        missing.insert(0, "summary line")
    return missing
