"""The rule registry: every check that reports a finding is a registered rule with one code.

It sits below ``spec`` and ``lint`` (it imports only :mod:`hpcconf.diagnostics`), so the spec's
cross-field checks and the linter's rules share one registry, one code space and one page format.

Three decorators register a function; its docstring is the rule page (a summary line, then
``## What it catches``, ``## Why is this bad?`` with public evidence, ``## Example``, ``## Fix``):

``@rule(code, name, severity, kinds=..., scope="document"|"set")``
    A file rule: ``check(doc, ctx)`` per document of a kind in ``kinds``, or
    ``check(doc_set, ctx)`` once per cluster of files (``scope="set"``). It never judges a spec
    (``kinds`` holding ``Kind.SPEC`` is refused): that is ``@spec_rule``'s.
``@spec_rule(code, name, severity, moment=Moment.REFUSE|Moment.JUDGE, file_rule=False)``
    The one way to judge an hpcconf spec; the moment is data:

    - ``Moment.REFUSE``, before resolving: ``check(loaded, catalog)`` runs in
      :func:`hpcconf.spec.checks.check_spec` after the spec validated field by field. Its errors stop
      ``hpcconf build`` (exit 2) and ``hpcconf lint`` reports them whatever suppressions say.
    - ``Moment.REFUSE_RESOLVED``, after resolving: ``check(loaded, cluster)`` reads the resolved cluster
      (a generated value the platform's consumer refuses, e.g. a CCWS parameter its release's types reject) and
      lives in a module of ``hpcconf/resolve/`` that :mod:`hpcconf.pipeline` loads. Like ``REFUSE``: its
      errors stop ``hpcconf build`` and are never suppressed.
    - ``Moment.JUDGE``, after resolving: ``check(compiled)`` reads the spec and the cluster it resolved
      to (:class:`hpcconf.lint.compiled_spec.CompiledSpec`); its findings are lint findings, selected,
      ignored and suppressed like any other.

    ``file_rule=True`` makes the function the spec side of the file rule registered under the same
    code (AzHOP settings exist in a spec and in config.yml): the rule page is the file rule's docstring,
    ``name`` and ``severity`` must match it, and both sides call one judgement.
``engine_rule(code, name, severity, doc)``
    A finding the loader or the lint engine reports itself (YAML syntax, unknown key, ...).

Rules only *yield* diagnostics; the runner fills in code, name and (for spec rules) severity,
so a spec rule yields ``at(loaded, ("pools", 0, "count"), "message", "hint")``.

Lifecycle: ``since`` is the release a rule appeared in. ``formerly`` lists codes that used to
cover what the rule reports (a code that was renamed or split): ``--ignore OLD``,
``# hpcconf: ignore[OLD]`` and ``hpcconf explain OLD`` keep working and say where OLD went.
"""

from __future__ import annotations

import enum
import inspect
import re
from dataclasses import dataclass, replace
from typing import Any, Callable, Iterable, TypeVar

from .artifacts import Kind
from .diagnostics import Severity

REQUIRED_SECTIONS = ("## What it catches", "## Why is this bad?", "## Example", "## Fix")
CODE_PATTERN = re.compile(r"^(HPC|SPEC|XA|K8S|VOL|HELM|NCCL|AZH|MPI|DKR|SLURM|SEC|NHC|CCWS)\d{3}$")
NAME_PATTERN = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
VERSION_PATTERN = re.compile(r"^\d+\.\d+\.\d+$")
DOCS_URL = "https://github.com/hpcconf/hpcconf/blob/main/docs/rules.md"
FIRST_RELEASE = "0.1.0"
SCOPES = ("document", "set", "spec", "engine")

Scope = str  # one of SCOPES


class Moment(enum.Enum):
    """When a spec rule judges a spec (see the module docstring)."""

    REFUSE = "refuse"  # before resolving: a finding refuses the spec (build exit 2), never suppressed
    REFUSE_RESOLVED = "refuse-resolved"  # after resolving: a value the consumer refuses; refuses the spec, never suppressed
    JUDGE = "judge"  # after resolving: judges the resolved cluster; a lint finding, suppressible


# Where a spec rule of each moment lives: the package whose loading runs it (a REFUSE rule in a lint module would
# register, and be listed, but run in neither build nor lint: the spec compiles before lint modules load).
_MOMENT_PACKAGES = {Moment.REFUSE: "hpcconf.spec.checks.", Moment.REFUSE_RESOLVED: "hpcconf.resolve.",
                    Moment.JUDGE: "hpcconf.lint.rules."}
# How many arguments a spec check of each moment takes: (loaded, catalog), (loaded, cluster), (compiled).
_MOMENT_ARGUMENTS = {Moment.REFUSE: 2, Moment.REFUSE_RESOLVED: 2, Moment.JUDGE: 1}


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    severity: Severity
    kinds: tuple[str, ...]
    scope: Scope
    check: Callable[..., Any] | None  # None for findings the loader or engine emits itself
    doc: str
    since: str = FIRST_RELEASE
    formerly: tuple[str, ...] = ()  # old codes that now point here (renamed or split)
    # A file rule whose judgement also applies to the spec (AzHOP settings exist in both): its spec side
    # (``@spec_rule(file_rule=True)``) maps the spec onto the same judgement, under the same code.
    spec_check: Callable[..., Any] | None = None
    moment: Moment | None = None  # when the spec side (``spec_runner``) runs; None: the rule judges no spec
    # Its errors are refusals at admission (the API server, a CRD's schema, a webhook) or a file that cannot be
    # read as objects at all: the object is never stored, so ``lint --defaulted`` prints the errors, not it.
    admission: bool = False

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

    @property
    def spec_runner(self) -> Callable[..., Any] | None:
        """What :func:`hpcconf.spec.checks.check_spec` calls for this rule, if anything."""
        return self.check if self.scope == "spec" else self.spec_check

    @property
    def refuses_spec(self) -> bool:
        """Its spec side refuses the spec (before or after resolving): an error stops the build, never suppressed."""
        return self.moment in (Moment.REFUSE, Moment.REFUSE_RESOLVED)

    @property
    def judges_resolved_spec(self) -> bool:
        """Its spec side runs in lint, on the spec and the cluster it resolved to."""
        return self.moment is Moment.JUDGE

    @property
    def applies_to(self) -> str:
        if self.scope == "spec":
            return "hpcconf spec"
        kinds = ", ".join(self.kinds) or ("the whole file set" if self.scope == "set" else "any file")
        return kinds + (", hpcconf spec" if self.spec_check else "")


REGISTRY: dict[str, Rule] = {}
# ``code`` in a docstring (reStructuredText) is `code` in Markdown; fences (```) are left alone.
_RST_LITERAL = re.compile(r"(?<!`)``(?!`)((?:[^`\n]|\n(?!\s*\n))+?)(?<!`)``(?!`)")


def _literal(match: re.Match[str]) -> str:
    inner = match.group(1)
    # A value whose spaces are the point (``slurm ``): quoted, as Markdown would drop them.
    return f'`"{inner}"`' if inner != inner.strip() else f"`{inner}`"


def plain_literals(text: str) -> str:
    """A rule page's text for readers (explain, SARIF, completion): ``x`` written as `x`, the Markdown a
    terminal reader expects and a SARIF viewer renders."""
    return _RST_LITERAL.sub(_literal, text)


def rule(*, code: str, name: str, severity: Severity, kinds: Iterable[str] = (),
         scope: Scope = "document", since: str = FIRST_RELEASE,
         formerly: Iterable[str] = (), admission: bool = False) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register the decorated function as file rule ``code``; its docstring is the rule page."""
    checked_kinds = tuple(kinds)
    if Kind.SPEC in checked_kinds or scope == "spec":
        raise ValueError(f"rule {code}: a spec is judged by @spec_rule(moment=...), not @rule(kinds=(Kind.SPEC,))")

    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        _register(Rule(code=code, name=name, severity=severity, kinds=checked_kinds, scope=scope, check=func,
                       doc=inspect.cleandoc(func.__doc__ or ""), since=since, formerly=tuple(formerly),
                       admission=admission))
        return func

    return decorate


SpecCheck = TypeVar("SpecCheck", bound=Callable[..., Iterable[Any]])


def spec_rule(*, code: str, name: str, severity: Severity = Severity.ERROR, moment: Moment = Moment.REFUSE,
              file_rule: bool = False, since: str = FIRST_RELEASE,
              formerly: Iterable[str] = ()) -> Callable[[SpecCheck], SpecCheck]:
    """Register a spec check at ``moment``: ``check(loaded, catalog)`` before resolving (``Moment.REFUSE``),
    ``check(loaded, cluster)`` after, refusing (``Moment.REFUSE_RESOLVED``), ``check(compiled)`` after, judging
    (``Moment.JUDGE``); each yields diagnostics.

    A ``Moment.REFUSE`` rule lives in any module of ``hpcconf/spec/checks/`` (importing the package runs
    it); a ``Moment.JUDGE`` rule in a module of ``hpcconf/lint/rules/``, as it reads the resolved cluster.
    With ``file_rule=True`` the check is the spec side of the file rule ``code`` (see the module docstring).
    """

    def decorate(func: SpecCheck) -> SpecCheck:
        wanted = _MOMENT_ARGUMENTS[moment]
        if len(inspect.signature(func).parameters) != wanted:
            raise ValueError(f"spec rule {code}: a {moment.value} check takes {wanted} argument(s)")
        module = getattr(func, "__module__", "") or ""
        if module.startswith("hpcconf.") and not module.startswith(_MOMENT_PACKAGES[moment]):
            raise ValueError(f"spec rule {code}: a {moment.value} check lives in a module of "
                             f"{_MOMENT_PACKAGES[moment].rstrip('.')} (the one that runs it), not {module}")
        if file_rule:
            _attach_spec_side(code, name, severity, func, moment)
        else:
            _register(Rule(code=code, name=name, severity=severity, kinds=(Kind.SPEC,) if moment is Moment.JUDGE else (),
                           scope="spec", check=func, doc=inspect.cleandoc(func.__doc__ or ""), since=since,
                           formerly=tuple(formerly), moment=moment))
        return func

    return decorate


def _attach_spec_side(code: str, name: str, severity: Severity, func: Callable[..., Any], moment: Moment) -> None:
    existing = REGISTRY.get(code)
    if existing is not None:
        _check_spec_side(existing, name, severity)
        REGISTRY[code] = replace(existing, spec_check=func, moment=moment)
    else:
        _PENDING_SPEC_SIDES[code] = (name, severity, func, moment)


# Spec sides registered before their file rule (``hpcconf build`` imports no lint module): attached when it is.
_PENDING_SPEC_SIDES: dict[str, tuple[str, Severity, Callable[..., Any], Moment]] = {}


def _check_spec_side(target: Rule, name: str, severity: Severity) -> None:
    if target.name != name or target.severity != severity or target.scope == "spec":
        raise ValueError(f"spec side of {target.code} {name} ({severity.value}) does not match rule "
                         f"{target.code} {target.name} ({target.severity.value})")


def engine_rule(*, code: str, name: str, severity: Severity, doc: str, since: str = FIRST_RELEASE,
                formerly: Iterable[str] = (), admission: bool = False) -> Rule:
    """Register a finding the loader or the lint engine emits itself (parse errors, suppression problems)."""
    new = Rule(code=code, name=name, severity=severity, kinds=(), scope="engine", check=None,
               doc=inspect.cleandoc(doc), since=since, formerly=tuple(formerly), admission=admission)
    _register(new)
    return new


def _register(new: Rule) -> None:
    if not CODE_PATTERN.match(new.code):
        raise ValueError(f"rule code {new.code!r} must be a family prefix and 3 digits")
    if not NAME_PATTERN.match(new.name):
        raise ValueError(f"rule name {new.name!r} must be kebab-case")
    if new.scope not in SCOPES:
        raise ValueError(f"rule {new.code}: scope must be one of {', '.join(SCOPES)}")
    if not VERSION_PATTERN.match(new.since):
        raise ValueError(f"rule {new.code}: since {new.since!r} must be a release such as 0.1.0")
    for old in new.formerly:
        if not CODE_PATTERN.match(old) or old == new.code:
            raise ValueError(f"rule {new.code}: formerly {old!r} must be another rule code")
    old_rule = REGISTRY.get(new.code)
    if old_rule is not None and (old_rule.name != new.name or _origin(old_rule) != _origin(new)):
        raise ValueError(f"rule code {new.code} registered twice ({old_rule.name}, {new.name})")
    for other in REGISTRY.values():
        if other.name == new.name and other.code != new.code:
            raise ValueError(f"rule name {new.name} used by {other.code} and {new.code}")
    pending = _PENDING_SPEC_SIDES.get(new.code)
    if pending is not None:
        _check_spec_side(new, pending[0], pending[1])
        new = replace(new, spec_check=pending[2], moment=pending[3])
    REGISTRY[new.code] = new


def _origin(r: Rule) -> str:
    return f"{r.check.__module__}.{r.check.__qualname__}" if r.check else "engine"


def spec_checks(moment: Moment = Moment.REFUSE) -> list[tuple[str, str, Severity, Callable[..., Any]]]:
    """(code, name, severity, check) of every spec check that refuses a spec at ``moment`` (``Moment.REFUSE``
    before resolving, ``Moment.REFUSE_RESOLVED`` after), by code.

    Spec sides whose file rule is not loaded (``hpcconf build`` imports no lint module) still run; the
    lint registry attaches them to their rule when it loads.
    """
    if moment is Moment.JUDGE:
        raise ValueError("Moment.JUDGE rules judge in lint; spec_checks lists the refusals")
    found = {r.code: (r.code, r.name, r.severity, r.spec_runner) for r in REGISTRY.values()
             if r.spec_runner is not None and r.moment is moment}
    for code, (name, severity, func, side_moment) in _PENDING_SPEC_SIDES.items():
        if side_moment is moment:
            found.setdefault(code, (code, name, severity, func))
    return [found[code] for code in sorted(found)]


def successors(old_code: str, rules: dict[str, Rule] | None = None) -> list[Rule]:
    """The rules that took over (part of) ``old_code``: renamed or split codes."""
    old = old_code.strip().upper()
    return [r for r in (rules or REGISTRY).values() if old in r.formerly]


def redirect_note(old_code: str, rules: dict[str, Rule] | None = None) -> str:
    """``HPC005 also names ... since 0.2.0`` for a code that was split or renamed, else ""."""
    moved = successors(old_code, rules)
    if not moved:
        return ""
    listed = ", ".join(f"{r.code} ({r.name})" for r in moved)
    exists = old_code.strip().upper() in (rules or REGISTRY)
    if exists:
        return f"note: part of what {old_code.upper()} reported has its own code now: {listed}; " \
               f"{old_code.upper()} selects and suppresses them too"
    return f"note: {old_code.upper()} was renamed: {listed}; {old_code.upper()} still selects and suppresses it"


def missing_sections(r: Rule) -> list[str]:
    """Required page sections the rule's docstring lacks (checked by a guard test)."""
    missing = [s for s in REQUIRED_SECTIONS if s not in r.doc]
    if not r.summary or r.summary.startswith("#"):
        missing.insert(0, "summary line")
    return missing
