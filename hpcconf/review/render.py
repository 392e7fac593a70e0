"""`hpcconf review` reports: text (terminal), Markdown (PR comment, GitHub job summary), JSON (bots).

All three carry the same facts: per spec its status and changed fields with their migration notes;
per changed generated file its status, the spec fields that caused it (with the lines they
changed), what applying it means and whether that is disruptive; hand edits and stale outputs.
The JSON shape (``"format": "hpcconf-review/1"``) is documented in docs/review.md.
"""

from __future__ import annotations

import html
import json
from typing import Any

from ..explain_diff import MISSING, FieldChange, _show
from ..knowledge.impact import DISRUPTION_TEXT, Impact, MigrationNote
from .model import FileChange, OutputProblem, Review, SpecReview

JSON_FORMAT = "hpcconf-review/1"
MAX_DIFF_LINES = 200  # per file in Markdown: a PR comment has a size limit (65536 characters)
PROBLEM_TEXT = {
    "edited": "edited by hand (its hash differs from the manifest); a build refuses to overwrite it",
    "unowned": "not written by hpcconf (not in the manifest); a build refuses to overwrite it",
    "stale": "stale: the spec changed but this file was not rebuilt",
    "missing": "missing: the spec builds it but it is not committed",
    "extra": "extra: no spec builds it any more",
}


def _lines(lines: list[int]) -> str:
    if not lines:
        return ""
    shown = ", ".join(map(str, lines[:12])) + (" ..." if len(lines) > 12 else "")
    return f"line{'s' if len(lines) > 1 else ''} {shown}"


def _disruption(impacts: list[Impact]) -> str:
    kinds = [DISRUPTION_TEXT[i.disruptive] for i in impacts if i.is_disruptive]
    return ", ".join(dict.fromkeys(kinds))


def summary_counts(review: Review) -> dict[str, int]:
    specs = [s for s in review.specs if s.interesting]
    files = [f for s in specs for f in s.files]
    problems = [p for s in specs for p in s.problems]
    return {
        "specs_changed": sum(1 for s in specs if s.status != "unchanged"),
        "files_changed": len(files),
        "disruptive": sum(1 for f in files if f.disruptive),
        "hand_edits": sum(1 for p in problems if p.state in ("edited", "unowned")),
        "stale": sum(1 for p in problems if p.state in ("stale", "missing", "extra")),
        "errors": sum(1 for s in specs if s.error),
    }


def _summary_line(review: Review) -> str:
    c = summary_counts(review)
    return (f"{c['specs_changed']} spec(s) changed, {c['files_changed']} generated file(s) changed, "
            f"{c['disruptive']} disruptive, {c['hand_edits']} hand edit(s), {c['stale']} stale output(s)"
            + (f", {c['errors']} spec(s) that do not build" if c["errors"] else ""))


def _spec_heading(spec: SpecReview) -> str:
    renamed = f" from {spec.old_path}" if spec.old_path else ""
    where = f" -> {spec.out_dir}/" if spec.out_dir else ""
    return f"{spec.path} ({spec.status}{renamed}){where}"


# -- text ------------------------------------------------------------------------------------------

def render_text(review: Review) -> str:
    out = [f"hpcconf review: {review.base} -> {review.head}"]
    for spec in (s for s in review.specs if s.interesting):
        out.append("")
        out.append(_spec_heading(spec))
        out.extend(_text_spec(spec))
    if not any(s.interesting for s in review.specs):
        out.append("no spec or generated file changed")
    out.append("")
    out.append("summary: " + _summary_line(review))
    return "\n".join(out) + "\n"


def _text_impact(impact: Impact, indent: str) -> list[str]:
    flag = f" [DISRUPTIVE: {DISRUPTION_TEXT[impact.disruptive]}]" if impact.is_disruptive else ""
    return [f"{indent}impact: {impact.action}{flag}", f"{indent}  {impact.effect} ({impact.source})"]


def _text_note(note: MigrationNote, indent: str) -> str:
    return f"{indent}migration ({note.title}): {note.text} ({note.source})"


def _text_spec(spec: SpecReview) -> list[str]:
    out = []
    if spec.error:
        out.append(f"  error: {spec.error}")
    if spec.cluster_impact:
        out.extend(_text_impact(spec.cluster_impact, "  "))
    if spec.fields:
        out.append("  spec changes:")
        out.extend(f"    {c.describe()}" for c in spec.fields)
    out.extend(_text_note(n, "  ") for n in spec.migrations)
    for change in spec.files if spec.status != "added" else []:
        out.append(f"  {change.path} ({change.status})")
        for field_change, lines in change.causes:
            at = f" ({_lines(lines)})" if lines and change.status == "changed" else ""
            out.append(f"    <- {field_change.label}{at}")
        if change.note:
            out.append(f"    {change.note}")
        for impact in change.impacts:
            out.extend(_text_impact(impact, "    "))
    if spec.status == "added":
        out.append(f"  {len(spec.files)} new file(s) under {spec.out_dir}/")
    for problem in spec.problems:
        at = f" ({_lines(problem.lines)})" if problem.lines else ""
        out.append(f"  {problem.path}: {PROBLEM_TEXT[problem.state]}{at}")
        if problem.impact and problem.state in ("edited", "unowned"):
            out.extend(_text_impact(problem.impact, "    "))
    return out


# -- Markdown --------------------------------------------------------------------------------------

def _cell(text: str) -> str:
    """Table cell text: Markdown's table syntax breaks on a pipe or a newline."""
    return html.escape(text, quote=False).replace("|", "\\|").replace("\n", " ")


def _code(text: str) -> str:
    text = text.replace("\n", " ")
    ticks = "``" if "`" in text else "`"
    pad = " " if ticks == "``" else ""
    return f"{ticks}{pad}{text}{pad}{ticks}".replace("|", "\\|")


def render_markdown(review: Review) -> str:
    out = [f"## hpcconf review: {_code(review.base)} → {_code(review.head)}", "", _summary_line(review), ""]
    interesting = [s for s in review.specs if s.interesting]
    if interesting:
        out += ["| spec | status | generated files changed | disruptive | hand edits / stale |",
                "|---|---|---|---|---|"]
        for spec in interesting:
            disruptive = sum(1 for f in spec.files if f.disruptive)
            out.append(f"| {_code(spec.path)} | {spec.status} | {len(spec.files)} | "
                       f"{'⚠️ ' + str(disruptive) if disruptive else '0'} | {len(spec.problems)} |")
    else:
        out.append("No spec or generated file changed.")
    for spec in interesting:
        out += ["", f"### {_code(spec.path)} ({spec.status})", ""]
        out += _md_spec(spec)
    return "\n".join(out).rstrip("\n") + "\n"


def _md_impacts(impacts: list[Impact]) -> list[str]:
    out = []
    for impact in impacts:
        flag = f" — ⚠️ **disruptive: {DISRUPTION_TEXT[impact.disruptive]}**" if impact.is_disruptive else ""
        out.append(f"- **Impact:** {html.escape(impact.action, quote=False)}{flag}. "
                   f"{html.escape(impact.effect, quote=False)} ([source]({impact.source}))")
    return out


def _md_notes(notes: list[MigrationNote]) -> list[str]:
    """One blockquote per note: consecutive ``>`` lines would merge into one paragraph."""
    out: list[str] = []
    for note in notes:
        out += [f"> **Migration ({html.escape(note.title, quote=False)}):** {html.escape(note.text, quote=False)} "
                f"([source]({note.source}))", ""]
    return out[:-1]


def _md_fields(fields: list[FieldChange]) -> list[str]:
    out = ["| spec field | before | after |", "|---|---|---|"]
    for change in fields:
        item = change.summary.split(": ", 1)[-1]  # a whole pool added or removed: "1 x SKU" / "was 2 x SKU"
        before = "(added)" if change.summary and change.new is not MISSING else _show(change.old)
        after = "(removed)" if change.summary and change.new is MISSING else _show(change.new)
        if change.summary:
            before, after = (before, item) if change.new is not MISSING else (item, after)
        out.append(f"| {_code(change.label)} | {_cell(before)} | {_cell(after)} |")
    return out


def _md_spec(spec: SpecReview) -> list[str]:
    out: list[str] = []
    if spec.old_path:
        out += [f"Renamed from {_code(spec.old_path)}.", ""]
    if spec.error:
        out += [f"❌ This spec does not build: {_cell(spec.error)}", ""]
    if spec.cluster_impact:
        out += _md_impacts([spec.cluster_impact]) + [""]
    if spec.fields:
        out += _md_fields(spec.fields) + [""]
    if spec.migrations:
        out += _md_notes(spec.migrations) + [""]
    for change in spec.files if spec.status != "added" else []:
        out += _md_file(change)
    if spec.status == "added":
        out += [f"{len(spec.files)} new generated file(s) under {_code(spec.out_dir + '/')}.", ""]
    if spec.problems:
        out += ["**Generated files that need attention:**", ""]
        out += [_md_problem(p) for p in spec.problems] + [""]
    return out


def _md_file(change: FileChange) -> list[str]:
    flag = f" — ⚠️ {_disruption(change.impacts)}" if change.disruptive else ""
    summary = f"<code>{html.escape(change.path)}</code> ({change.status}){html.escape(flag, quote=False)}"
    out = ["<details>", f"<summary>{summary}</summary>", ""]
    if change.causes:
        out += ["| lines | spec field |", "|---|---|"]
        for field_change, lines in change.causes:
            shown = _lines(lines) if change.status == "changed" else change.status
            out.append(f"| {_cell(shown or '-')} | {_code(field_change.label)} |")
        out.append("")
    if change.note:
        out += [html.escape(change.note, quote=False), ""]
    out += _md_impacts(change.impacts) + [""]
    if change.migrations:
        out += _md_notes(change.migrations) + [""]
    if change.diff:
        diff_lines = change.diff.splitlines()
        cut = len(diff_lines) > MAX_DIFF_LINES
        body = "\n".join(diff_lines[:MAX_DIFF_LINES]) + (f"\n... {len(diff_lines) - MAX_DIFF_LINES} more lines" if cut else "")
        fence = "````" if "```" in body else "```"
        out += [f"{fence}diff", body, fence, ""]
    out += ["</details>", ""]
    return out


def _md_problem(problem: OutputProblem) -> str:
    at = f" ({_lines(problem.lines)})" if problem.lines else ""
    text = f"- {_code(problem.path)}: {html.escape(PROBLEM_TEXT[problem.state], quote=False)}{at}"
    if problem.impact and problem.state in ("edited", "unowned"):
        text += f"; applying it means: {html.escape(problem.impact.action, quote=False)}"
    return text


# -- JSON ------------------------------------------------------------------------------------------

def _value(value: Any) -> Any:
    return None if value is MISSING else value


def _field_json(change: FieldChange) -> dict[str, Any]:
    return {"field": change.label, "old": _value(change.old), "new": _value(change.new)}


def _file_json(change: FileChange) -> dict[str, Any]:
    return {"path": change.path, "status": change.status,
            "causes": [{"field": f.label, "lines": lines} for f, lines in change.causes],
            "note": change.note, "disruptive": change.disruptive,
            "impacts": [i.to_json() for i in change.impacts],
            "migrations": [n.to_json() for n in change.migrations], "diff": change.diff}


def _spec_json(spec: SpecReview) -> dict[str, Any]:
    return {"path": spec.path, "status": spec.status, "old_path": spec.old_path or None, "cluster": spec.cluster or None,
            "out_dir": spec.out_dir or None, "error": spec.error or None,
            "cluster_impact": spec.cluster_impact.to_json() if spec.cluster_impact else None,
            "fields": [_field_json(c) for c in spec.fields],
            "migrations": [n.to_json() for n in spec.migrations],
            "files": [_file_json(f) for f in spec.files],
            "problems": [{"path": p.path, "state": p.state, "lines": p.lines,
                          "impact": p.impact.to_json() if p.impact else None} for p in spec.problems]}


def render_json(review: Review) -> str:
    data = {"format": JSON_FORMAT, "base": review.base, "head": review.head, "summary": summary_counts(review),
            "specs": [_spec_json(s) for s in review.specs if s.interesting]}
    return json.dumps(data, indent=2, default=str) + "\n"


RENDERERS = {"text": render_text, "markdown": render_markdown, "json": render_json}
