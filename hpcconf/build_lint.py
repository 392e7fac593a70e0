"""`hpcconf build` lints what it is about to write.

Each compiled spec is linted in-process exactly as ``hpcconf lint SPEC`` would lint it (same rules,
same settings from ``[tool.hpcconf]``, same suppressions), reusing the build's parsed spec and
rendered artifacts (:func:`hpcconf.lint.engine.lint_build`). An error finding means hpcconf would
write files its own linter rejects, so:

- a writing build prints the findings (as ``hpcconf lint`` prints them, located on the spec line or
  the artifact), writes nothing and exits 1; ``--force`` writes anyway and says so;
- ``--check`` reports them and fails (exit 1) as it does for a stale file; ``--diff`` reports them
  and still exits 0 (it only shows).

Warnings and infos never stop a build: a writing build prints one line with their counts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import typer

if TYPE_CHECKING:
    from .lint.engine import LintResult
    from .pipeline import Build
    from .settings.config import LintConfig


def lint_builds(builds: Sequence[Build], config: LintConfig) -> dict[str, LintResult] | None:
    """Lint each build (by cluster name); None after printing a usage error (a bad select/ignore code)."""
    from .lint.context import LintContext, UsageError, newest_nccl_version
    from .lint.engine import lint_build

    results = {}
    try:
        for build in builds:
            results[build.name] = lint_build(build, LintContext(config=config, nccl_version=newest_nccl_version()))
    except UsageError as error:
        typer.echo(f"hpcconf: error: {error}", err=True)
        return None
    return results


def _tally(result: LintResult) -> str:
    counts = result.counts()
    return ", ".join(f"{counts[s]} {s}{'s' if counts[s] != 1 else ''}" for s in ("error", "warning", "info"))


_OUTCOME = {
    "write": "nothing was written. Fix the spec, suppress a finding with a reason "
             "(`# hpcconf: ignore[CODE] reason`), or pass --force to write them anyway",
    "force": "writing them anyway (--force)",
    "check": "check failed",
    "diff": "a build would refuse to write them",
}


def report_lint(builds: Sequence[Build], results: dict[str, LintResult], *, action: str, quiet: bool) -> bool:
    """Print the findings of every build with a lint error (stderr), else one summary line per build.

    ``action`` is what the build does next: "write", "force" (write despite errors), "check" or
    "diff". Returns True when some build has a lint error and ``action`` is "write" or "check":
    the build then stops (exit 1) and writes nothing.
    """
    from .diagnostic_text import SourceCache, render_text
    from .diagnostics import Severity

    failed = [b for b in builds if results[b.name].failed(Severity.ERROR)]
    for build in builds:
        result = results[build.name]
        if build in failed:
            sources = SourceCache(texts=dict(result.sources))
            for finding in result.findings:
                typer.echo(render_text(finding, sources) + "\n", err=True)
            typer.echo(f"{build.spec.file}: lint: {_tally(result)}", err=True)
        elif not quiet and action in ("write", "force"):
            more = f" (`hpcconf lint {build.spec.file}` lists them)" if result.findings else ""
            typer.echo(f"{build.spec.file}: lint: {_tally(result)}{more}")
    if failed:
        specs = ", ".join(b.spec.file for b in failed)
        typer.echo(f"{'build refused' if action == 'write' else 'lint'}: {specs} compile"
                   f"{'s' if len(failed) == 1 else ''} to files with lint errors (see above); {_OUTCOME[action]}.",
                   err=True)
    return bool(failed) and action in ("write", "check")
