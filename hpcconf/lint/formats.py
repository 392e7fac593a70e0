"""Render a LintResult as text, JSON, SARIF 2.1.0 or GitHub workflow annotations.

Every format renders the same :class:`~hpcconf.diagnostics.Diagnostic` objects; output is
deterministic (sorted findings, sorted keys where order is free, no timestamps).
"""

from __future__ import annotations

import json
from typing import Any

from .. import __version__
from ..diagnostic_text import SourceCache, render_text
from ..diagnostics import Diagnostic
from .engine import LintResult
from .locations import real_location
from .rule_loading import Rule, load_rules, plain_literals

FORMATS = ("text", "json", "sarif", "github")
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note"}


def render(result: LintResult, fmt: str) -> str:
    return {"text": render_text_report, "json": render_json, "sarif": render_sarif,
            "github": render_github}[fmt](result)


def summary(result: LintResult) -> dict[str, Any]:
    return {**result.counts(), "files": result.files_checked, "findings": len(result.findings)}


def render_text_report(result: LintResult) -> str:
    sources = SourceCache(texts=dict(result.sources))
    blocks = [render_text(f, sources) for f in result.findings]
    counts = result.counts()
    tally = ", ".join(f"{counts[s]} {s}{'s' if counts[s] != 1 else ''}" for s in ("error", "warning", "info"))
    files = f"{result.files_checked} file{'s' if result.files_checked != 1 else ''} checked"
    tail = f"{files}: {tally}" if result.findings else f"{files}: no findings"
    return "\n\n".join(blocks + [tail]) + "\n"


def render_json(result: LintResult) -> str:
    payload = {"findings": [f.to_json() for f in result.findings], "summary": summary(result)}
    return json.dumps(payload, indent=2) + "\n"


# -- SARIF 2.1.0 -----------------------------------------------------------------------------
def _sarif_rule(rule: Rule) -> dict[str, Any]:
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": plain_literals(rule.summary)},
        "fullDescription": {"text": plain_literals(rule.body or rule.summary)},
        "help": {"text": plain_literals(rule.section("Fix") or rule.summary), "markdown": plain_literals(rule.doc)},
        "helpUri": rule.help_uri,
        "defaultConfiguration": {"level": _SARIF_LEVEL[rule.severity.value]},
    }


def _sarif_unregistered(code: str, result: LintResult) -> dict[str, Any]:
    """Spec-loader codes (HPC004 missing-field, ...) are findings without a rule page of their own."""
    name = next((f.name for f in result.findings if f.code == code and f.name), code.lower())
    return {"id": code, "name": name, "shortDescription": {"text": name},
            "fullDescription": {"text": f"{code} {name}: reported while loading the input (see the message)."},
            "helpUri": "https://github.com/hpcconf/hpcconf/blob/main/docs/rules.md"}


def _sarif_location(finding: Diagnostic, result: LintResult) -> dict[str, Any]:
    """A repository path, always: a compiled artifact's finding points at its committed copy under
    the output root, else at the spec line that produced it (hpcconf.lint.locations)."""
    where = real_location(finding, result) if finding.file else None
    artifact_location = {"uri": where.file if where else "<input>"}
    region: dict[str, Any] = {"startLine": max(where.line or 1, 1) if where else 1}
    if where and where.column:
        region["startColumn"] = where.column
    if where and where.end_line:
        region["endLine"] = where.end_line
    if where and where.end_column and (where.end_line or where.line):
        region["endColumn"] = where.end_column
    return {"physicalLocation": {"artifactLocation": artifact_location, "region": region}}


def render_sarif(result: LintResult) -> str:
    rules = load_rules()
    used = sorted({f.code for f in result.findings})  # rules with results, as ruff does: small logs
    index = {code: i for i, code in enumerate(used)}
    results = []
    for finding in result.findings:
        note = real_location(finding, result).note if finding.file else ""
        text = finding.message + note + (f" Hint: {finding.hint}" if finding.hint else "")
        results.append({
            "ruleId": finding.code,
            "ruleIndex": index[finding.code],
            "level": _SARIF_LEVEL[finding.severity.value],
            "message": {"text": text},
            "locations": [_sarif_location(finding, result)],
        })
    driver = {
        "name": "hpcconf",
        "version": __version__,
        "informationUri": "https://github.com/hpcconf/hpcconf",
        "rules": [_sarif_rule(rules[c]) if c in rules else _sarif_unregistered(c, result) for c in used],
    }
    log = {"$schema": SARIF_SCHEMA, "version": "2.1.0",
           "runs": [{"tool": {"driver": driver}, "results": results, "columnKind": "unicodeCodePoints"}]}
    return json.dumps(log, indent=2) + "\n"


def render_usage_error(message: str, fmt: str) -> str:
    """What stdout carries when lint could not run: a valid, empty report that says why.

    CI pipes ``--format sarif`` into a file and uploads it even on failure; an empty file would
    make the upload step fail too and hide the real message.
    """
    if fmt == "sarif":
        driver = {"name": "hpcconf", "version": __version__, "informationUri": "https://github.com/hpcconf/hpcconf",
                  "rules": []}
        invocation = {"executionSuccessful": False, "exitCode": 2,
                      "toolExecutionNotifications": [{"level": "error", "message": {"text": message}}]}
        log = {"$schema": SARIF_SCHEMA, "version": "2.1.0",
               "runs": [{"tool": {"driver": driver}, "invocations": [invocation], "results": []}]}
        return json.dumps(log, indent=2) + "\n"
    if fmt == "json":
        return json.dumps({"findings": [], "summary": {"error": 0, "warning": 0, "info": 0, "files": 0, "findings": 0},
                           "usage_error": message}, indent=2) + "\n"
    if fmt == "github":
        return f"::error title=hpcconf lint::{_escape_data(message)}\n"
    return ""


# -- GitHub Actions workflow commands --------------------------------------------------------
_GITHUB_LEVEL = {"error": "error", "warning": "warning", "info": "notice"}


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def render_github(result: LintResult) -> str:
    lines = []
    for f in result.findings:
        where = real_location(f, result)  # a path in the checkout, or GitHub pins the annotation nowhere
        props = [f"file={_escape_property(where.file)}"]
        if where.line:
            props.append(f"line={where.line}")
        if where.column:
            props.append(f"col={where.column}")
        if where.end_line:
            props.append(f"endLine={where.end_line}")
        if where.end_column:
            props.append(f"endColumn={where.end_column}")
        props.append(f"title={_escape_property(f'{f.code} {f.name}'.strip())}")
        message = f.message + where.note + (f"\n{f.hint}" if f.hint else "")
        lines.append(f"::{_GITHUB_LEVEL[f.severity.value]} {','.join(props)}::{_escape_data(message)}")
    return "".join(line + "\n" for line in lines)
