"""What ``hpcconf lint``, ``rules`` and ``explain`` do; their typer faces are :mod:`hpcconf.commands.lint`,
:mod:`hpcconf.commands.rules` and :mod:`hpcconf.commands.explain`.

Exit codes of ``lint``: 0 no finding at or above ``--fail-level``; 1 some; 2 usage error or
unreadable input (a one-line message on stderr, never a traceback).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, List, Optional

from ..artifacts import Kind
from ..diagnostic_text import render_all
from ..diagnostics import HpcconfError, Severity
from ..exit_codes import EXIT_FINDINGS, EXIT_INVALID, EXIT_OK
from ..sku_dirs import checked_sku_dirs
from ..term import COLOR_CHOICES, echo

if TYPE_CHECKING:
    from ..settings.config import LintConfig
    from .context import LintContext
    from .engine import LintResult

# The engine, parsers and rules are imported when a command runs, not when the CLI starts:
# `hpcconf --version` and `--help` must not pay for ruamel/lxml/pydantic.


def _emit(report: str, output: Path | None) -> None:
    """The report goes to ``-o FILE`` when given (``-``: stdout), else to stdout."""
    if output is not None and str(output) != "-":
        output.write_text(report, encoding="utf-8")
    else:
        echo(report, nl=False)


def _fail_usage(message: str, fmt: str = "text", output: Path | None = None) -> None:
    from .formats import render_usage_error

    report = render_usage_error(message, fmt)
    if report:  # SARIF/JSON consumers still get a file that says what went wrong
        _emit(report, output)
    echo(f"hpcconf: error: {message}", err=True)
    raise SystemExit(EXIT_INVALID)


def _fail_located(error: HpcconfError, fmt: str, output: Path | None) -> None:
    """Located input errors (a bad SKU directory or SKU file): printed as ``init`` prints them."""
    from .formats import render_usage_error

    located = "; ".join(":".join(str(part) for part in (d.file, d.line, d.column) if part) + f": {d.code} {d.message}"
                        for d in error.diagnostics)
    report = render_usage_error(located, fmt)
    if report:
        _emit(report, output)
    echo(render_all(error.diagnostics), err=True)
    raise SystemExit(EXIT_INVALID)


def _split_codes(values: list[str] | None) -> list[str]:
    return [c.strip() for v in values or [] for c in v.split(",") if c.strip()]


def build_config(config_file: Path | None, select: list[str], ignore: list[str],
                 no_inline_ignores: bool, sku_dirs: list[Path] | None = None) -> "LintConfig":
    from ..settings.config import load_settings

    config = load_settings(config_file=config_file, sku_dirs=sku_dirs or ()).lint
    if select:
        config.select = select
    if ignore:
        config.ignore = ignore
    config.no_inline_ignores = config.no_inline_ignores or no_inline_ignores
    return config


def _note_redirects(config: LintConfig) -> None:
    """``--ignore HPC005`` keeps working after HPC005 was split: say which codes it now covers."""
    if not (config.select or config.ignore):
        return  # nothing to redirect; and a lint run need not import every rule module
    from .rule_loading import load_rules, redirect_note

    rules = load_rules()
    for selector in dict.fromkeys([*config.select, *config.ignore]):
        note = redirect_note(selector, rules)
        if note:
            echo(f"hpcconf: {note}", err=True)


def _warn_unknown_versions(charts: dict[str, str], nccl_version: str | None, where: str = "",
                           kubernetes_version: str | None = None) -> None:
    """A version outside hpcconf's tables is judged by the nearest one it knows: say so, once, on stderr."""
    from ..knowledge import charts as chart_table
    from ..knowledge.nccl_env import NcclVersion, known_versions
    from ..knowledge.versions import version_key

    for name, version in sorted(charts.items()):
        known = chart_table.known_versions(name)
        if not known:
            continue
        low, high = known[0], known[-1]
        outside = version_key(version) < version_key(low) or \
            version_key(version) > version_key(high)
        if outside:
            echo(f"hpcconf: warning: {where}{name} {version} is outside the chart versions hpcconf knows "
                       f"({low} to {high}); its keys are judged as in the nearest known version", err=True)
    if nccl_version:
        versions = known_versions()
        wanted = NcclVersion.parse(nccl_version)
        if wanted.key > versions[-1].key or wanted.key < versions[0].key:
            echo(f"hpcconf: warning: {where}NCCL {nccl_version} is outside the releases hpcconf knows "
                       f"({versions[0]} to {versions[-1]}); variables are judged as in the nearest known release",
                       err=True)
    if kubernetes_version:
        from ..knowledge.k8s_openapi import schema_version

        held = schema_version(kubernetes_version)  # below the oldest was refused already (--kubernetes-version)
        if version_key(kubernetes_version)[:2] > version_key(held)[:2]:
            echo(f"hpcconf: warning: {where}Kubernetes {kubernetes_version} is newer than the newest schemas "
                       f"hpcconf holds ({held}): manifests are judged as for {held}", err=True)


# run_lint's arguments when `hpcconf lint` is given no option: what typer passes (tests/test_startup_imports.py holds
# them equal to a run through the typer app).
PLAIN_LINT_DEFAULTS: dict[str, object] = {
    "spec": None, "sku": None, "nccl_version": None, "chart": None, "kubernetes_version": None, "defaulted": False,
    "kind": None, "fmt": "text", "output": None, "fail_level": None, "select": None, "ignore": None,
    "no_inline_ignores": False, "config_file": None, "verbose": False, "provider": None, "color": "auto", "jobs": None}


def run_plain_lint(paths: list[str]) -> None:
    """``hpcconf lint [PATH...]`` with no option, the pre-commit hook's command line: run_lint as typer would call it."""
    run_lint(paths=list(paths) or None, sku_dir=[], **PLAIN_LINT_DEFAULTS)  # type: ignore[arg-type]


def run_lint(*, paths: List[str], spec: Optional[str], sku: Optional[str], nccl_version: Optional[str],
             chart: Optional[List[str]], kubernetes_version: Optional[str], defaulted: bool, kind: Optional[str],
             fmt: str, output: Optional[Path], fail_level: Optional[str], select: Optional[List[str]],
             ignore: Optional[List[str]], no_inline_ignores: bool, config_file: Optional[Path], sku_dir: List[Path],
             verbose: bool, provider: Optional[str], color: str, jobs: Optional[int]) -> None:
    """`hpcconf lint` (the options: :func:`hpcconf.commands.lint.lint_command`); exits 0, 1 or 2."""
    from ..settings.values import checked_kubernetes_version
    from ..term import echo_report, working
    from .context import (
        LintContext,
        UsageError,
        lookup_sku,
        newest_nccl_version,
        parse_chart_option,
        parse_version,
    )
    from .formats import FORMATS, render

    try:
        if fmt not in FORMATS:
            raise UsageError(f"--format must be one of {', '.join(FORMATS)}")
        if color not in COLOR_CHOICES:
            raise UsageError(f"--color must be one of {', '.join(COLOR_CHOICES)}")
        if kind is not None and kind not in Kind.all():
            raise UsageError(f"--kind must be one of {', '.join(Kind.all())}")
        checked_sku_dirs(sku_dir)
        config = build_config(config_file, _split_codes(select), _split_codes(ignore), no_inline_ignores, sku_dir)
        _note_redirects(config)
        level = Severity(fail_level.lower()) if fail_level else (config.fail_level or Severity.ERROR)
        ctx = LintContext(config=config, nccl_version=newest_nccl_version())
        if nccl_version:
            parse_version(nccl_version)
            ctx.nccl_version = nccl_version.lstrip("v")
        ctx.charts = dict(parse_chart_option(c) for c in chart or [])
        if kubernetes_version:
            ctx.kubernetes_version = checked_kubernetes_version(kubernetes_version, "--kubernetes-version")
        _warn_unknown_versions(ctx.charts, nccl_version, kubernetes_version=ctx.kubernetes_version)
        for table in config.path_contexts:
            _warn_unknown_versions(table.charts, table.nccl_version, f"{table.where}: ", table.kubernetes_version)
        if sku:
            ctx.sku = lookup_sku(sku, config.sku_dirs)
        if provider:
            from ..knowledge import providers

            if providers.lookup(provider) is None:
                raise UsageError(f"--provider must be one of {', '.join(providers.names())}")
            ctx.provider = provider.strip().lower()
        ctx.given = frozenset(name for name, value in (("sku", sku), ("nccl_version", nccl_version),
                                                       ("kubernetes_version", kubernetes_version),
                                                       ("provider", provider)) if value)
        targets = list(paths or [])
        if spec:
            targets.insert(0, spec)
        if jobs is not None and jobs < 1:
            raise UsageError(f"--jobs must be 1 or more, not {jobs}")
        if jobs is None:
            from .parallel import default_jobs

            jobs = default_jobs()
        if defaulted and (len(targets) != 1 or not Path(targets[0]).is_file()):
            raise UsageError("--defaulted takes one manifest file")
        with working(f"hpcconf lint {' '.join(targets or ['.'])}"):
            from .parallel import lint_paths_in_jobs

            result = lint_paths_in_jobs(targets or ["."], ctx, forced_kind=kind, jobs=1 if defaulted else jobs)
    except HpcconfError as error:  # a bad --sku-dir / sku-dir, or a SKU file in one: located, as init says it
        _fail_located(error, fmt if fmt in FORMATS else "text", output)
        return
    except ValueError as error:  # UsageError, ConfigError, bad --fail-level
        message = str(error)
        if "is not a valid Severity" in message:
            message = "--fail-level must be one of error, warning, info"
        _fail_usage(message, fmt if fmt in FORMATS else "text", output)
        return
    if verbose or os.environ.get("HPCCONF_DEBUG"):
        for file, why in result.skipped:
            echo(f"hpcconf: debug: skipped {file}: {why}", err=True)
    if defaulted:
        _print_defaulted(targets[0], result, ctx, output)
        return
    if fmt == "text" and (output is None or str(output) == "-"):
        echo_report(render(result, fmt), sys.stdout, color)
    else:
        _emit(render(result, fmt), output)
    if result.files_checked == 0:  # a CI job that checks nothing must not look green by accident
        echo(f"hpcconf: warning: nothing was linted: no file in {', '.join(targets or ['.'])} is a kind "
                   "hpcconf checks (see --kind)", err=True)
    raise SystemExit(EXIT_FINDINGS if result.failed(level) else EXIT_OK)


def _print_defaulted(target: str, result: "LintResult", ctx: "LintContext", output: Optional[Path]) -> None:
    """``--defaulted``: the file's objects with defaults applied, or, as the API server would, the
    errors instead of any object (exit 1)."""
    import dataclasses

    from ..knowledge.k8s_defaults import defaulted, knows
    from ..rules_registry import REGISTRY
    from ..yamlio import dump_yaml
    from ..yamlpos import load_documents
    from .formats import render

    errors = [f for f in result.findings if f.severity == Severity.ERROR and f.code in REGISTRY
              and REGISTRY[f.code].admission]
    if errors:  # only what the API server or a webhook refuses stops the object (not, say, a secret finding)
        echo(render(dataclasses.replace(result, findings=errors), "text"), err=True, nl=False)
        echo("hpcconf: the API server would refuse this file: nothing to default", err=True)
        raise SystemExit(EXIT_FINDINGS)
    version = ctx.cluster.versions.volcano if ctx.cluster is not None else None
    objects = []
    for document in load_documents(Path(target).read_text(encoding="utf-8"), target):
        data = document.data
        if isinstance(data, dict) and knows(data):
            objects.append(defaulted(data, volcano_version=version, installed=ctx.charts))
        elif data is not None:
            kind = data.get("kind", "?") if isinstance(data, dict) else type(data).__name__
            echo(f"hpcconf: note: {target}: no defaults known for {kind}; printed as written", err=True)
            objects.append(data)
    _emit("---\n".join(dump_yaml(o) for o in objects), output)


def run_rules(*, fmt: str) -> None:
    """`hpcconf rules`: every rule, one line each (text) or as JSON."""
    from .rule_loading import load_rules, plain_literals

    rules = load_rules()
    if fmt == "json":
        import json

        echo(json.dumps([{"code": r.code, "name": r.name, "severity": r.severity.value,
                                "kinds": list(r.kinds), "summary": plain_literals(r.summary),
                                "since": r.since, "formerly": list(r.formerly), "spec": r.refuses_spec} for r in rules.values()], indent=2))
        return
    if fmt != "text":
        _fail_usage("--format must be text or json")
    width = max(len(r.name) for r in rules.values())
    for r in rules.values():
        echo(f"{r.code:<8} {r.name:<{width}}  {r.severity.value:<7}  {plain_literals(r.summary)}")


def run_explain(*, code: str) -> None:
    """`hpcconf explain CODE`: the rule's page, or where a renamed code went."""
    from .rule_loading import find_rule, load_rules, plain_literals, redirect_note, successors

    found = find_rule(code)
    moved = successors(code, load_rules())
    if found is None and not moved:
        _fail_usage(f"no rule {code!r} (`hpcconf rules` lists them)")
        return
    if moved:
        echo(redirect_note(code, load_rules()) + "\n")
    if found is None:  # a code that was renamed: show where it went
        for rule in moved:
            echo(f"{rule.code} {rule.name}: {plain_literals(rule.summary)}")
        return
    echo(f"{found.code} {found.name} ({found.severity.value}; applies to {found.applies_to}; since {found.since})\n")
    echo(plain_literals(found.doc))
