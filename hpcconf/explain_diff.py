"""Which spec field caused each changed artifact (``hpcconf explain-diff``, ``build --diff --explain``).

Method (no guessing from text): take the earlier spec (``git show HEAD:SPEC`` or
``--against OLD_SPEC``) and the current one, list the fields that differ (leaves of the
YAML tree; list items matched by index, or by ``name`` when a list grew or shrank), then
rebuild the current spec once per changed field with only that field set back to its old
value. An artifact that comes out different from the current build depends on that field,
and the lines that differ are the lines that field changed. An artifact no single field
explains changed through a combination of fields (or through hpcconf itself: a new
version, catalog or template), and the report says so instead of inventing a cause.
"""

from __future__ import annotations

import copy
import difflib
import json
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from .diagnostics import HpcconfError
from .pipeline import Build, load_catalog
from .yamlpos import load_document

MAX_FIELD_REBUILDS = 40  # beyond this many changed leaves, explain per top-level section instead


class _Missing:
    def __repr__(self) -> str:
        return "(unset)"


MISSING: Any = _Missing()


@dataclass
class FieldChange:
    """One spec field whose value differs between the old and the new spec."""

    label: str                              # pools[0].count, nccl_env.NCCL_DEBUG, pools[name=cpu]
    old: Any
    new: Any
    revert: Callable[[Any], None]           # sets this field back to ``old`` in a copy of the new data
    summary: str = ""                       # replaces "old -> new" for whole list items added or removed

    def describe(self) -> str:
        return self.summary or f"{self.label}: {_show(self.old)} -> {_show(self.new)}"


@dataclass
class Cause:
    change: FieldChange
    lines: list[int]                        # lines of the new artifact this field changed


@dataclass
class ArtifactChange:
    path: str
    status: str                             # changed | added | removed
    causes: list[Cause] = field(default_factory=list)
    note: str = ""                          # why no field (or not only a field) explains it
    header_only: bool = False               # the spec file was renamed: only the header naming it changed


@dataclass
class Explanation:
    new_label: str
    old_label: str
    changes: list[FieldChange]
    artifacts: list[ArtifactChange]
    not_isolated: list[FieldChange] = field(default_factory=list)  # reverting alone gives an invalid spec
    old_build_error: str = ""
    artifacts_checked: bool = True

    def render(self, out_dir: str = "") -> str:
        prefix = f"{out_dir.rstrip('/')}/" if out_dir else ""
        lines = [f"explain: {self.new_label} compared with {self.old_label}"]
        if self.old_build_error:
            lines.append(f"  (the earlier spec does not build: {self.old_build_error})")
        if self.changes:
            lines.append("spec changes:")
            lines.extend(f"  {c.describe()}" for c in self.changes)
        else:
            lines.append("spec changes: none")
        for change in self.not_isolated:
            lines.append(f"  note: {change.label} cannot be reverted alone (the spec would not validate); "
                         "its effect is counted with the fields it changed together with")
        for artifact in self.artifacts:
            lines.append(f"{prefix}{artifact.path} ({artifact.status})")
            for cause in artifact.causes:
                lines.append(f"  <- {cause.change.label}{_lines_note(cause.lines, artifact.status)}")
            if artifact.note:
                lines.append(f"  {artifact.note}")
        if not self.artifacts:
            lines.append("no artifact changes")
        isolated = [c for c in self.changes if c not in self.not_isolated]
        idle = [c.label for c in isolated if not any(cause.change is c for a in self.artifacts for cause in a.causes)]
        if idle and self.artifacts_checked:
            lines.append("changed fields no listed file depends on: " + ", ".join(idle))
        return "\n".join(lines) + "\n"


# -- comparing spec trees ----------------------------------------------------------------------

def _show(value: Any) -> str:
    if value is MISSING:
        return "(unset)"
    text = json.dumps(value, sort_keys=True, default=str) if isinstance(value, (dict, list)) else str(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _item_summary(item: dict[str, Any]) -> str:
    """A pool as a reviewer names it: 2 x Standard_ND96isr_H100_v5."""
    if "sku" in item and "count" in item:
        return f"{item['count']} x {item['sku']}"
    return _show({k: v for k, v in item.items() if k != "name"})


def _label(parent: str, step: Any) -> str:
    if isinstance(step, int):
        return f"{parent}[{step}]"
    return f"{parent}.{step}" if parent else str(step)


def _named(items: list[Any]) -> bool:
    names = [i.get("name") for i in items if isinstance(i, dict)]
    return len(names) == len(items) and all(isinstance(n, str) for n in names) and len(set(names)) == len(names)


def spec_changes(old: Any, new: Any) -> list[FieldChange]:
    """Every leaf field that differs between two spec trees (plain dicts/lists), in the new spec's order."""
    changes: list[FieldChange] = []
    _walk_leaves(old, new, "", [], changes)
    return changes


def _walk_leaves(old: Any, new: Any, label: str, path: list[Any], out: list[FieldChange]) -> None:
    """Path-based walk (simpler than locators): reverts address nodes by their path in the new data."""
    if old == new:
        return
    if isinstance(old, dict) and isinstance(new, dict):
        keys = list(new) + [k for k in old if k not in new]
        for key in keys:
            a, b = old.get(key, MISSING), new.get(key, MISSING)
            if a is MISSING or b is MISSING:
                out.append(FieldChange(_label(label, key), a, b, _set_path([*path, key], a)))
            else:
                _walk_leaves(a, b, _label(label, key), [*path, key], out)
        return
    if isinstance(old, list) and isinstance(new, list):
        if len(old) == len(new):
            for i, (a, b) in enumerate(zip(old, new)):
                _walk_leaves(a, b, _label(label, i), [*path, i], out)
            return
        if _named(old) and _named(new):
            old_by_name = {i["name"]: i for i in old}
            new_names = [i["name"] for i in new]
            for index, item in enumerate(new):
                name = item["name"]
                if name in old_by_name:
                    _walk_leaves(old_by_name[name], item, f"{label}[{index}]", [*path, ("name", name)], out)
                else:
                    item_label = f"{label}[{index}] ({name!r} added)"
                    out.append(FieldChange(item_label, MISSING, item, _remove_named_at(path, name),
                                           summary=f"{item_label}: {_item_summary(item)}"))
            for index, item in enumerate(old):
                if item["name"] not in new_names:
                    item_label = f"{label}[{index}] ({item['name']!r} removed)"
                    out.append(FieldChange(item_label, item, MISSING, _insert_named_at(path, index, item),
                                           summary=f"{item_label}: was {_item_summary(item)}"))
            return
    out.append(FieldChange(label or "(whole spec)", old, new, _set_path(path, old)))


def _step(node: Any, step: Any) -> Any:
    if isinstance(step, tuple):  # ("name", value): the list item with that name
        return next(i for i in node if isinstance(i, dict) and i.get("name") == step[1])
    return node[step]


def _parent(data: Any, path: list[Any]) -> Any:
    node = data
    for step in path[:-1]:
        node = _step(node, step)
    return node


def _set_path(path: list[Any], old: Any) -> Callable[[Any], None]:
    def revert(data: Any) -> None:
        if not path:
            raise ValueError("cannot revert the whole spec")
        parent, last = _parent(data, path), path[-1]
        if isinstance(last, tuple):
            last = parent.index(_step(parent, last))
        if old is MISSING:
            parent.pop(last, None) if isinstance(parent, dict) else parent.pop(last)
        else:
            parent[last] = copy.deepcopy(old)
    return revert


def _remove_named_at(path: list[Any], name: str) -> Callable[[Any], None]:
    def revert(data: Any) -> None:
        items = _parent(data, [*path, None])
        items[:] = [i for i in items if not (isinstance(i, dict) and i.get("name") == name)]
    return revert


def _insert_named_at(path: list[Any], index: int, item: Any) -> Callable[[Any], None]:
    def revert(data: Any) -> None:
        items = _parent(data, [*path, None])
        items.insert(min(index, len(items)), copy.deepcopy(item))
    return revert


def _top_level_changes(old: dict[str, Any], new: dict[str, Any]) -> list[FieldChange]:
    keys = list(new) + [k for k in old if k not in new]
    return [FieldChange(k, old.get(k, MISSING), new.get(k, MISSING), _set_path([k], old.get(k, MISSING)))
            for k in keys if old.get(k, MISSING) != new.get(k, MISSING)]


# -- building variants in memory ----------------------------------------------------------------

def _dump(data: Any) -> str:
    return json.dumps(data, indent=1)  # JSON is YAML: positions stay meaningful for error messages


def compile_data(data: Any, like: Build, sku_dirs: Sequence[Path] = (), label: str = "",
                 spec_file: str = "") -> dict[str, str]:
    """Build a spec given as plain data, as if it were ``like``'s file (same directory for
    sku_dirs, same file name in headers, or ``spec_file``'s: an earlier spec under its own name, since
    every generated header names the spec file). Returns {artifact path: content}."""
    from pydantic import ValidationError

    from .resolve import resolve
    from .spec.checks import check_spec
    from .spec.load import LoadedSpec, _diagnostics
    from .spec.model import Cluster
    from .targets import render_all

    document = load_document(_dump(data), label or like.spec.file)
    try:
        cluster = Cluster.model_validate(document.data)
    except ValidationError as exc:
        raise HpcconfError(_diagnostics(exc, document)) from None
    loaded = LoadedSpec(cluster=cluster, document=document, path=like.spec.path)
    catalog = load_catalog(loaded, sku_dirs)
    problems = check_spec(loaded, catalog)
    if problems:
        raise HpcconfError(problems)
    resolved = resolve(cluster, catalog, spec_file=spec_file or like.cluster.spec_file)
    return {a.path: a.content for a in render_all(resolved)}


def _first_error(error: HpcconfError) -> str:
    first = error.diagnostics[0] if error.diagnostics else None
    return f"{first.code} {first.message}" if first else "invalid"


def changed_lines(new: str | None, other: str | None) -> list[int]:
    """Line numbers in ``new`` that differ from ``other`` (a deleted line: the line now in its place)."""
    new_lines, other_lines = (new or "").splitlines(), (other or "").splitlines()
    lines: set[int] = set()
    for tag, _i1, _i2, j1, j2 in difflib.SequenceMatcher(None, other_lines, new_lines, autojunk=False).get_opcodes():
        if tag in ("replace", "insert"):
            lines.update(range(j1 + 1, j2 + 1))
        elif tag == "delete":
            lines.add(min(j1 + 1, max(len(new_lines), 1)))
    return sorted(lines)


def _lines_note(lines: list[int], status: str) -> str:
    if status != "changed" or not lines:
        return ""
    shown = ", ".join(map(str, lines[:12])) + (" ..." if len(lines) > 12 else "")
    return f" (line{'s' if len(lines) > 1 else ''} {shown})"


# -- the explanation ----------------------------------------------------------------------------

def explain_specs(new_build: Build, old_data: Any, old_label: str, sku_dirs: Sequence[Path] = (),
                  against_files: dict[str, str | None] | None = None, old_spec_file: str = "") -> Explanation:
    """Explain how ``new_build``'s artifacts differ from the old spec's build (or from
    ``against_files``: {path: content on disk, None when absent}, e.g. a build --diff).

    ``old_spec_file``: the earlier spec's path when it was renamed; it is built under that name, and a
    file that differs only by the header naming the spec is reported as such (``header_only``)."""
    new_data = new_build.spec.document.data
    new_files = {a.path: a.content for a in new_build.artifacts}
    changes = spec_changes(old_data, new_data)
    if len(changes) > MAX_FIELD_REBUILDS and isinstance(old_data, dict) and isinstance(new_data, dict):
        changes = _top_level_changes(old_data, new_data)
    old_name = Path(old_spec_file).name if old_spec_file else ""
    renamed = bool(old_name) and old_name != new_build.cluster.spec_file
    old_error = ""
    try:
        old_files: dict[str, str] | None = compile_data(old_data, new_build, sku_dirs, old_label, spec_file=old_name)
    except HpcconfError as error:
        old_files, old_error = None, _first_error(error)
    under_old_name = compile_data(new_data, new_build, sku_dirs, spec_file=old_name) if renamed else {}
    if against_files is None:
        if old_files is None:
            against_files = {}
        else:
            against_files = {p: old_files.get(p) for p in sorted(set(old_files) | set(new_files))}
    differing = sorted(p for p, content in against_files.items() if content != new_files.get(p))
    reverted: dict[int, dict[str, str]] = {}
    not_isolated: list[FieldChange] = []
    for index, change in enumerate(changes):
        data = copy.deepcopy(new_data)
        try:
            change.revert(data)
            reverted[index] = compile_data(data, new_build, sku_dirs)
        except (HpcconfError, ValueError, KeyError, StopIteration, IndexError):
            not_isolated.append(change)
    artifacts = []
    for path in differing:
        on_disk = against_files.get(path)
        status = "added" if on_disk is None else ("removed" if path not in new_files else "changed")
        artifact = ArtifactChange(path, status)
        for index, change in enumerate(changes):
            variant = reverted.get(index)
            if variant is not None and variant.get(path) != new_files.get(path):
                artifact.causes.append(Cause(change, changed_lines(new_files.get(path), variant.get(path))))
        if status != "changed":
            # A file that appears or disappears: name the fields that make it exist or not,
            # not every field that also shapes its content.
            toggles = [c for c in artifact.causes
                       if (path in reverted[changes.index(c.change)]) != (path in new_files)]
            artifact.causes = toggles or artifact.causes
        if renamed and on_disk is not None and path in new_files and under_old_name.get(path) == on_disk:
            # Nothing but the spec's file name changed this file: every header names the spec file.
            artifact.causes, artifact.header_only = [], True
            artifact.note = (f"the spec was renamed ({old_name} -> {new_build.cluster.spec_file}): only the "
                             "generated-by header lines naming it changed")
        else:
            artifact.note = _note(artifact, changes, not_isolated, old_files, on_disk, path)
        artifacts.append(artifact)
    return Explanation(new_label=new_build.spec.file, old_label=old_label, changes=changes, artifacts=artifacts,
                       not_isolated=not_isolated, old_build_error=old_error)


def _note(artifact: ArtifactChange, changes: list[FieldChange], not_isolated: list[FieldChange],
          old_files: dict[str, str] | None, on_disk: str | None, path: str) -> str:
    if old_files is not None and old_files.get(path) != on_disk:
        return ("the file on disk is not what the earlier spec builds either: edited by hand, or written "
                "from another revision of the spec or another hpcconf version")
    if artifact.causes:
        return ""
    if not changes:
        return "no spec field changed: the difference comes from hpcconf itself (version, SKU catalog, templates)"
    if not_isolated:
        return "changed by fields that only validate together: " + ", ".join(c.label for c in not_isolated)
    return "changed only by the combination of: " + ", ".join(c.label for c in changes)


# -- earlier versions of a spec -----------------------------------------------------------------

def spec_at_revision(spec_path: Path, revision: str = "HEAD") -> tuple[str, str] | None:
    """(text, label) of the spec as committed at ``revision``; None outside git or when not committed."""
    directory = spec_path.resolve().parent
    try:
        top = subprocess.run(["git", "-C", str(directory), "rev-parse", "--show-toplevel"],
                             capture_output=True, text=True, check=False)
        if top.returncode != 0:
            return None
        rel = spec_path.resolve().relative_to(Path(top.stdout.strip()).resolve()).as_posix()
        shown = subprocess.run(["git", "-C", top.stdout.strip(), "show", f"{revision}:{rel}"],
                               capture_output=True, check=False)
    except (OSError, ValueError):
        return None
    if shown.returncode != 0:
        return None
    return shown.stdout.decode("utf-8", "replace"), f"{revision}:{rel}"


def load_old_spec(text: str, label: str) -> Any:
    return load_document(text, label).data


def explain_changes(build: Build, out_dir: Path, names: Sequence[str], sku_dirs: Sequence[Path] = ()) -> str:
    """For ``build --diff/--check --explain``: why the files on disk differ from this build.

    The earlier spec is the one committed at git HEAD (what the files on disk were most
    likely built from); each difference (``names``: the artifacts under ``out_dir`` that differ) is
    attributed to the spec fields that changed since.
    """
    if not names:
        return ""
    earlier = spec_at_revision(build.spec.path)
    if earlier is None:
        return (f"explain: no earlier version of {build.spec.file} to compare with (it is not committed in git); "
                f"run `hpcconf explain-diff {build.spec.file} --against OLD_SPEC`\n")
    text, label = earlier
    try:
        old_data = load_old_spec(text, label)
    except HpcconfError as error:
        return f"explain: {label} does not parse ({_first_error(error)})\n"
    on_disk: dict[str, str | None] = {}
    for name in names:
        try:
            on_disk[name] = (out_dir / name).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            on_disk[name] = None
    explanation = explain_specs(build, old_data, label, sku_dirs, against_files=on_disk)
    return explanation.render(out_dir.as_posix())
