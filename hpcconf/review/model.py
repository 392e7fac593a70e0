"""A review of every spec and generated file between two states of a repository.

For each spec (matched by path, or through a git rename): the spec fields that changed, each
generated file that changes (the base commit's committed file against what the head spec
builds) with the fields that caused it (hpcconf.explain_diff), what applying it means
(hpcconf.knowledge.impact) and the migration notes of version boundaries it crosses. At the
head it also checks the committed outputs against the manifest and a fresh build: hand edits
(hash differs from the manifest, or a file no build wrote) and stale outputs (the spec changed
but the files were not rebuilt).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Sequence

from ..diagnostics import HpcconfError
from ..explain_diff import MISSING, ArtifactChange, Explanation, FieldChange, changed_lines, explain_specs, load_old_spec
from ..knowledge.impact import Impact, MigrationNote, impact_of, migration_notes
from ..output_dir import MANIFEST_NAME, check_relative_path
from ..pipeline import Build, compile_spec
from ..settings.config import Settings
from .git import Tree

SPEC_SUFFIXES = (".yaml", ".yml")
_API_VERSION_LINE = re.compile(rb"^apiVersion:\s*['\"]?hpcconf/", re.M)
NEW_CLUSTER = Impact(action="provision the new cluster from its outputs (aks/provision.sh, ./install.sh, terraform apply)",
                     effect="new resources only; nothing running changes", disruptive="none",
                     source="https://learn.microsoft.com/en-us/azure/aks/manage-node-pools")
HEADER_ONLY = Impact(action="none: a comment changed (the generated-by header names the renamed spec file)",
                     effect="nothing to apply; the file is the same to every tool that reads it", disruptive="none",
                     source="https://git-scm.com/docs/git-diff#Documentation/git-diff.txt---find-renamesltngt")
REMOVED_CLUSTER = Impact(action="manual step: hpcconf deletes no cloud resources; tear the cluster down by hand "
                                "(az aks delete, terraform destroy, az-hop's destroy) if that is the intent",
                         effect="the spec and its generated files leave the repository; the running cluster stays",
                         disruptive="none", source="https://learn.microsoft.com/en-us/cli/azure/aks#az-aks-delete")


@dataclass
class FileChange:
    path: str                               # repository-relative
    status: str                             # changed | added | removed
    causes: list[tuple[FieldChange, list[int]]] = field(default_factory=list)
    note: str = ""
    impacts: list[Impact] = field(default_factory=list)
    migrations: list[MigrationNote] = field(default_factory=list)
    diff: str = ""

    @property
    def disruptive(self) -> bool:
        return any(i.is_disruptive for i in self.impacts)


@dataclass
class OutputProblem:
    path: str
    state: str                              # edited | unowned | stale | missing | extra
    lines: list[int] = field(default_factory=list)
    impact: Optional[Impact] = None


@dataclass
class SpecReview:
    path: str
    status: str                             # changed | unchanged | added | removed | renamed
    old_path: str = ""
    cluster: str = ""
    out_dir: str = ""
    error: str = ""
    fields: list[FieldChange] = field(default_factory=list)
    migrations: list[MigrationNote] = field(default_factory=list)
    files: list[FileChange] = field(default_factory=list)
    problems: list[OutputProblem] = field(default_factory=list)
    cluster_impact: Optional[Impact] = None

    @property
    def interesting(self) -> bool:
        return self.status != "unchanged" or bool(self.files or self.problems or self.error)


@dataclass
class Review:
    base: str
    head: str
    specs: list[SpecReview]

    @property
    def needs_fixing(self) -> bool:
        """Hand edits, stale outputs or a spec that does not build: `review` exits 1."""
        return any(s.problems or s.error for s in self.specs)

    @property
    def has_changes(self) -> bool:
        """A spec or generated file differs between the two sides (`--detailed-exitcode`: 3 or 4)."""
        return any(s.status != "unchanged" or s.files for s in self.specs)

    @property
    def disruptive(self) -> bool:
        """Applying the change drains, deletes or replaces nodes or changes the InfiniBand network (exit 4)."""
        return any((s.cluster_impact is not None and s.cluster_impact.is_disruptive) or any(f.disruptive for f in s.files)
                   for s in self.specs)


# -- which files are specs, and where their outputs live ---------------------------------------------

def _is_spec(path: str, tree: Tree, settings: Settings) -> bool:
    if not path.lower().endswith(SPEC_SUFFIXES) or settings.lint.excluded(path):
        return False
    data = tree.read(path)
    return data is not None and bool(_API_VERSION_LINE.search(data[:65536]))


def specs_in(tree: Tree, settings: Settings, out_root_of: Any) -> dict[str, str]:
    paths = [p for p in tree.files() if p.lower().endswith(SPEC_SUFFIXES)]
    tree.read_many(paths)
    found = {}
    for path in paths:
        if _is_spec(path, tree, settings) and not _under(path, out_root_of(path)):
            found[path] = (tree.read(path) or b"").decode("utf-8", "replace")
    return found


def _under(path: str, directory: str) -> bool:
    return directory not in ("", ".") and (path + "/").startswith(directory.rstrip("/") + "/") and path != directory


def output_root_for(spec_path: str, settings: Settings, repo: Path) -> str:
    """The output root of a spec, repository-relative, by ``hpcconf build``'s rule
    (:func:`hpcconf.spec_discovery.default_output_root`): the repository settings' ``out``, else ``out/``
    next to the spec."""
    from ..spec_discovery import default_output_root

    settings_out = settings.out.resolve() if settings.out is not None else None
    root = default_output_root(repo.resolve() / Path(spec_path).parent, settings_out)
    return Path(os.path.relpath(root, repo.resolve())).as_posix()


def _outputs(tree: Tree, out_dir: str) -> dict[str, bytes]:
    prefix = out_dir.rstrip("/") + "/"
    names = [p for p in tree.files() if p.startswith(prefix)]
    tree.read_many(names)
    found = {}
    for name in names:
        data = tree.read(name)
        if data is not None:
            found[name[len(prefix):]] = data
    return found


# -- one spec ----------------------------------------------------------------------------------------

def _first_error(error: HpcconfError) -> str:
    first = error.diagnostics[0] if error.diagnostics else None
    if first is None:
        return "does not validate"
    where = f"{first.file}:{first.line}:{first.column}: " if first.file and first.line else ""
    return f"{where}{first.code} {first.message}"


def effective(change: FieldChange, side: str) -> Any:
    """The field's value on one side; an unset ``versions.X`` is the model's default (what was built)."""
    from ..spec.model import Versions

    value = change.old if side == "old" else change.new
    if value is MISSING and change.label.startswith("versions."):
        name = change.label.split(".", 1)[1]
        info = Versions.model_fields.get(name)
        return info.default if info is not None else value
    return value


def _file_change(artifact: ArtifactChange, out_dir: str, before: Optional[str], after: Optional[str]) -> FileChange:
    change = FileChange(path=f"{out_dir}/{artifact.path}", status=artifact.status, note=artifact.note)
    change.causes = [(c.change, c.lines) for c in artifact.causes]
    if artifact.header_only:
        change.impacts = [HEADER_ONLY]
    for cause in artifact.causes:
        found = impact_of(artifact.path, cause.change.label, effective(cause.change, "old"), effective(cause.change, "new"))
        if found is not None and found not in change.impacts:
            change.impacts.append(found)
        for note in migration_notes(cause.change.label, effective(cause.change, "old"), effective(cause.change, "new")):
            if note not in change.migrations:
                change.migrations.append(note)
    refused = _refused_update(artifact.path, before, after)
    if refused is not None:
        change.impacts.insert(0, refused)
    by_parameter = _ccws_parameter_impacts(artifact.path, before, after)
    if by_parameter:  # what each changed parameter does replaces the file's fallback row
        fallback = impact_of(artifact.path)
        change.impacts = by_parameter + [i for i in change.impacts if i != fallback and i not in by_parameter]
    if not change.impacts and not artifact.header_only:
        fallback = impact_of(artifact.path)
        if fallback is not None:
            change.impacts.append(fallback)
    from ..output_dir import git_patch

    change.diff = git_patch(change.path, before, after)
    return change


def _refused_update(path: str, before: Optional[str], after: Optional[str]) -> Optional[Impact]:
    """An update the API server or Volcano's webhook refuses in place: delete and recreate (hpcconf.knowledge.k8s_updates)."""
    if before is None or after is None or not path.endswith((".yaml", ".yml")):
        return None
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    from ..knowledge.k8s_updates import refused_updates

    try:
        old, new = (list(YAML(typ="safe").load_all(text)) for text in (before, after))
    except YAMLError:
        return None
    refusals = refused_updates(old, new)
    if not refusals:
        return None
    first = refusals[0]
    return Impact(action=f"kubectl delete -f {path}, then kubectl apply -f {path} (an in-place apply is refused)",
                  effect="; ".join(f"{r.kind} {r.name}: {r.reason}" for r in refusals),
                  disruptive="none", source=first.source)


def _ccws_parameter_impacts(path: str, before: Optional[str], after: Optional[str]) -> list[Impact]:
    """What a re-run does with each changed parameter of a CCWS parameters.json, one impact per class
    (hpcconf.knowledge.ccws_updates): the CycleCloud cluster is created once by install.sh, ARM updates only the
    Azure resources."""
    if before is None or after is None or not path.endswith("ccws/parameters.json"):
        return []
    from ..knowledge.ccws_updates import changed_parameters, update_classes

    try:
        old, new = (json.loads(text).get("parameters") or {} for text in (before, after))
    except (ValueError, AttributeError):
        return []
    if not isinstance(old, dict) or not isinstance(new, dict):
        return []
    impacts = []
    for update, names in update_classes(changed_parameters(old, new)):
        impacts.append(Impact(action=f"{', '.join(names)}: {update.action}", effect=update.effect,
                              disruptive=update.disruptive, source=update.source))
    return impacts


def _check_outputs(build: Build, out_dir: str, committed: dict[str, bytes]) -> list[OutputProblem]:
    """Hand edits (manifest hashes) and stale, missing or extra files at the head."""
    from ..output_dir import expected_files, sha256

    expected = expected_files(build)
    recorded = _manifest_files(committed.get(MANIFEST_NAME))
    problems = []
    for rel, data in sorted(committed.items()):
        if rel == MANIFEST_NAME or check_relative_path(rel):
            continue
        wanted = expected.get(rel)
        if rel not in recorded:
            state = "unowned" if wanted is not None or not recorded else "extra"
        elif sha256(data) != recorded[rel]:
            state = "edited"
        elif wanted is None:
            state = "extra"
        elif data != wanted.encode("utf-8"):
            state = "stale"
        else:
            continue
        lines = changed_lines(data.decode("utf-8", "replace"), wanted) if state in ("edited", "unowned") else []
        problems.append(OutputProblem(f"{out_dir}/{rel}", state, lines, impact_of(rel) if state != "extra" else None))
    for rel in sorted(set(expected) - set(committed) - {MANIFEST_NAME}):
        problems.append(OutputProblem(f"{out_dir}/{rel}", "missing"))
    return problems


def _manifest_files(data: Optional[bytes]) -> dict[str, str]:
    if data is None:
        return {}
    try:
        parsed = json.loads(data.decode("utf-8"))
        return {rel: entry["sha256"] for rel, entry in parsed["files"].items() if isinstance(entry, dict)}
    except (ValueError, KeyError, TypeError, AttributeError):
        return {}


@dataclass
class Sides:
    """What a spec review needs from the two trees."""

    base: Tree
    head: Tree
    repo: Path
    settings: Settings
    sku_dirs: Sequence[Path]


def review_spec(sides: Sides, new_path: Optional[str], old_path: Optional[str], new_text: Optional[str],
                old_text: Optional[str]) -> SpecReview:
    if new_path is None or new_text is None:
        return _removed_spec(sides, old_path or "", old_text or "")
    status = "added" if old_text is None else "renamed" if old_path != new_path else \
        "unchanged" if old_text == new_text else "changed"
    result = SpecReview(path=new_path, status=status, old_path=(old_path or "") if status == "renamed" else "")
    try:
        build = compile_spec(sides.repo / new_path, sides.sku_dirs, text=new_text, display_name=new_path)
    except HpcconfError as error:
        result.error = _first_error(error)
        return result
    result.cluster = build.name
    result.out_dir = f"{output_root_for(new_path, sides.settings, sides.repo)}/{build.name}"
    committed = _outputs(sides.head, result.out_dir)
    result.problems = _check_outputs(build, result.out_dir, committed)
    if old_text is None:
        result.cluster_impact = NEW_CLUSTER
        result.files = [FileChange(f"{result.out_dir}/{a.path}", "added", impacts=[NEW_CLUSTER]) for a in build.artifacts]
        return result
    _compare_with_base(sides, result, build, old_path or new_path, old_text)
    return result


def _compare_with_base(sides: Sides, result: SpecReview, build: Build, old_path: str, old_text: str) -> None:
    label = f"{sides.base.label}:{old_path}"
    try:
        old_data = load_old_spec(old_text, label)
    except HpcconfError as error:
        result.error = f"the base spec does not parse: {_first_error(error)}"
        return
    old_name = (old_data.get("metadata") or {}).get("name", build.name) if isinstance(old_data, dict) else build.name
    old_out = f"{output_root_for(old_path, sides.settings, sides.repo)}/{old_name}"
    base_files = {rel: data.decode("utf-8", "replace") for rel, data in _outputs(sides.base, old_out).items()
                  if rel != MANIFEST_NAME}
    new_files = {a.path: a.content for a in build.artifacts}
    against: dict[str, str | None] = {rel: base_files.get(rel) for rel in sorted(set(base_files) | set(new_files))}
    explanation: Explanation = explain_specs(build, old_data, label, sides.sku_dirs, against_files=against,
                                             old_spec_file=old_path if old_path != result.path else "")
    result.fields = explanation.changes
    for change in result.fields:
        for note in migration_notes(change.label, effective(change, "old"), effective(change, "new")):
            result.migrations.append(note)
    if result.status == "unchanged" and explanation.artifacts:
        result.status = "changed"  # the same spec builds other files: hpcconf, the catalog or the base outputs differ
    result.files = [_file_change(a, result.out_dir, against.get(a.path), new_files.get(a.path))
                    for a in explanation.artifacts]


def _removed_spec(sides: Sides, old_path: str, old_text: str) -> SpecReview:
    result = SpecReview(path=old_path, status="removed", cluster_impact=REMOVED_CLUSTER)
    try:
        data = load_old_spec(old_text, f"{sides.base.label}:{old_path}")
    except HpcconfError:
        return result
    name = (data.get("metadata") or {}).get("name") if isinstance(data, dict) else None
    if isinstance(name, str):
        result.cluster = name
        result.out_dir = f"{output_root_for(old_path, sides.settings, sides.repo)}/{name}"
        left = _outputs(sides.head, result.out_dir)
        result.problems = [OutputProblem(f"{result.out_dir}/{rel}", "extra") for rel in sorted(left)
                           if rel != MANIFEST_NAME]
    return result



def review_trees(sides: Sides) -> list[SpecReview]:
    """Every spec of either tree, paired by path or by a git rename (``renames``: {new: old})."""
    from .git import renamed_files

    def root(path: str) -> str:
        return output_root_for(path, sides.settings, sides.repo)

    base_specs, head_specs = specs_in(sides.base, sides.settings, root), specs_in(sides.head, sides.settings, root)
    renames = renamed_files(sides.repo, sides.base.revision or "HEAD", sides.head.revision) if sides.base.revision else {}
    reviews, paired = [], set()
    for path, text in head_specs.items():
        old_path = path if path in base_specs else renames.get(path)
        if old_path not in base_specs:
            old_path = None
        paired.add(old_path)
        reviews.append(review_spec(sides, path, old_path, text, base_specs.get(old_path) if old_path else None))
    for path, text in base_specs.items():
        if path not in paired:
            reviews.append(review_spec(sides, None, path, None, text))
    return sorted(reviews, key=lambda r: r.path)
