"""The lint engine: files -> documents -> rules -> filtered, sorted findings.

1. Load: each path selected by :mod:`hpcconf.lint.walker` (directories listed as git sees them,
   hidden files, docs, templates, other languages' scripts passed over) becomes Documents of a
   recognised kind; YAML that does not parse becomes an HPC001/HPC002 finding. An hpcconf
   spec is compiled (``hpcconf.pipeline.compile_spec``) and its artifacts are linted as
   documents named ``SPEC -> ARTIFACT`` (e.g. ``cluster.yaml -> aks/volcano-job.yaml``), with
   the spec's own SKU, NCCL and chart versions as context. A spec that fails validation
   yields the loader's diagnostics as error findings (exit 1) that no --ignore, --select or
   suppression removes (build would refuse it), and its rules are skipped;
   a spec file that cannot be read is a usage error (exit 2).
2. Check: per-document rules run on documents of their kinds; set rules run once on all.
3. Filter: config severity overrides, ``select``/``ignore``, ``per-file-ignores`` and
   inline suppressions are applied; suppression problems are reported (HPC010-012).
4. Sort by file, line, column, code.
"""

from __future__ import annotations

import dataclasses
import re
import traceback
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, Callable, Sequence

from ..artifacts import Artifact, Kind
from ..diagnostics import Diagnostic, HpcconfError, Severity
from ..knowledge.nhc_checks import layout_root
from ..safe_io import UnsafeFile, unreadable_directory
from ..settings.config import LintConfig
from .compiled_spec import compiled_spec
from .context import CHART_VERSION_FIELDS, LintContext, UsageError
from .detect import detect_documents
from .document import DisplayPath, Document, DocumentSet, current_rule
from .engine_rules import (
    RULE_CRASHED,
    SUPPRESSION_WITHOUT_REASON,
    UNKNOWN_SUPPRESSION_CODE,
    UNRECOGNISED_FILE,
    UNUSED_SUPPRESSION,
)
from .pairing import assumption_note, components
from .path_context import context_for_path
from .rule_loading import Rule, load_rules, load_rules_for, successors
from .suppress import Suppression, find_suppressions, may_suppress

if TYPE_CHECKING:
    from ..catalog import Sku
    from ..pipeline import Build
    from .walker import Candidate

MANIFEST_NAME = ".hpcconf-manifest.json"  # as hpcconf.output_dir names it; a directory holding one is a cluster


@dataclass
class LintResult:
    findings: list[Diagnostic]
    files_checked: int
    documents: list[Document] = field(default_factory=list)
    sources: dict[str, str] = field(default_factory=dict)  # file -> text, for quoting source lines
    output_root: Path | None = None  # where committed artifacts lie (settings' `out`), for real locations
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (file, why) for every file passed over

    def counts(self) -> dict[str, int]:
        counts = {s.value: 0 for s in Severity}
        for finding in self.findings:
            counts[finding.severity.value] += 1
        return counts

    def failed(self, level: Severity) -> bool:
        return any(f.severity.rank >= level.rank for f in self.findings)


# -- selection ------------------------------------------------------------------------------
def selector_matches(selector: str, rule: Rule) -> bool:
    """A selector is ALL, a rule code, a code prefix (``NCCL``, ``NCCL0``), a rule name, or a code the rule
    was formerly reported as (a split or renamed code keeps selecting and suppressing its successors)."""
    s = selector.strip()
    return s.upper() == "ALL" or rule.code.startswith(s.upper()) or rule.name == s.lower() or s.upper() in rule.formerly


def validate_selectors(selectors: list[str], rules: dict[str, Rule], what: str) -> None:
    for selector in selectors:
        if not any(selector_matches(selector, r) for r in rules.values()):
            raise UsageError(f"{what}: {selector!r} matches no rule (`hpcconf rules` lists them)")


# Input that could not be checked at all is reported even under a narrow --select (never a silent pass).
ALWAYS_SELECTED = {"HPC001", "HPC002", "HPC090", "HPC092", "HPC093", "HPC094", "HPC095"}


def is_enabled(rule: Rule, config: LintConfig) -> bool:
    if config.select and rule.code not in ALWAYS_SELECTED \
            and not any(selector_matches(s, rule) for s in config.select):
        return False
    return not any(selector_matches(s, rule) for s in config.ignore)


# -- loading ----------------------------------------------------------------------------------
# Which files are read, and which are passed over and why: hpcconf.lint.walker (one selection for
# `lint PATHS`, the pre-commit hook's file names and build).
DEPLOYMENT_MARKERS = ("kustomization.yaml", "kustomization.yml", "Kustomization", "Chart.yaml")


def deployment_dir(file: Path, top: Path, memo: dict[tuple[Path, Path], str | None] | None = None) -> str:
    """The deployment a file belongs to: the nearest directory at or above it (up to ``top``, the walked
    directory or the working directory) that holds a kustomization or a Helm chart, else its own directory.
    An NHC custom test in scripts/ or customTests/ (or an Azure conf/ beside customTests/) starts one level up,
    so a conf and the tests NHC sources with it are one deployment (``nhc_checks.layout_root``).
    ``memo``: what this run found above each directory already walked, by (directory, top): the walk up
    costs a few file-system calls per level, and before it ran for every document of every file."""
    directory = file.parent
    nhc_root = layout_root(file) if file.suffix in (".nhc", ".conf") else None
    if nhc_root is not None and directory.resolve() != top.resolve():  # never above what was walked
        directory = nhc_root
    memo = {} if memo is None else memo
    walked: list[Path] = []
    found: str | None = None
    top_resolved: Path | None = None
    for candidate in [directory, *directory.parents]:
        if (candidate, top) in memo:
            found = memo[(candidate, top)]
            break
        walked.append(candidate)
        if any((candidate / marker).is_file() for marker in DEPLOYMENT_MARKERS):
            found = str(candidate)
            break
        if candidate == top:
            break
        top_resolved = top.resolve() if top_resolved is None else top_resolved
        if candidate.resolve() == top_resolved:
            break
    for candidate in walked:  # no marker below the one found, and none of them is the top
        memo[(candidate, top)] = found
    return found if found is not None else str(directory)


def _repository_root(directory: Path) -> Path | None:
    """The git work tree a directory lies in (the nearest one at or above it holding ``.git``), else None."""
    resolved = directory.resolve()
    for candidate in [resolved, *resolved.parents]:
        if (candidate / ".git").exists():
            return candidate
    return None


def named_directories_are_one_group(paths: list[str]) -> bool:
    """Whether the directories named on the command line are compared together: several directories (and only
    directories) are what the user says belongs together, unless they lie in different git repositories: two
    repositories are two deployments (linting ``repo-a repo-b`` never pairs one's job with the other's network)."""
    if sum(1 for given in paths if Path(given).is_dir()) < 2 or not all(Path(given).is_dir() for given in paths):
        return False
    return len({_repository_root(Path(given)) for given in paths}) == 1


SECRET_RULES = ("SEC001", "SEC002", "SEC003", "SEC004")


def _secrets_in_unparsed(display: str, text: str, ctx: LintContext) -> list[Diagnostic]:
    """The secrets of a YAML file that does not parse: it is committed all the same (crusoe's tls-secret.yaml holds
    a base64 private key beside its indentation error). The secrets rules read text only, never the parse."""
    rules = load_rules()
    text_only = Document(path=display, kind="yaml", text=text)  # no kind's rules run on it but these
    return [finding for code in SECRET_RULES for finding in _run(rules[code], (text_only, ctx), text_only)]


def _no_known_consumer(diagnostic: Diagnostic) -> Diagnostic:
    """A YAML error in a file no program hpcconf knows reads (no apiVersion/kind, chart or az-hop keys): whether
    it is refused depends on that program (a docker-compose file, a playbook, a CI config), so info."""
    if diagnostic.code not in ("HPC001", "HPC002"):
        return diagnostic
    return dataclasses.replace(diagnostic, severity=Severity.INFO, message=(
        f"{diagnostic.message} (hpcconf knows no program that reads this file: no apiVersion/kind, Helm chart or "
        "az-hop keys; whether it is refused depends on the one that does)"))


def _breaks_at_substitution(text: str, error: HpcconfError) -> bool:
    """Whether the line YAML stops at holds an envsubst ``${VAR}``."""
    lines = text.splitlines()
    return any(d.line is not None and 0 < d.line <= len(lines) and "${" in lines[d.line - 1]
               for d in error.diagnostics)


class NotText(UsageError):
    """A binary file: inside a directory walk it is simply not ours to lint."""


def _read(path: Path, display: str, tree: Path | None) -> str:
    """The file's text through the safe reader (hpcconf.safe_io): CRLF kept, which NCCL keeps too."""
    from ..safe_io import NotUtf8, read_text

    try:
        return read_text(path, "linted", display, tree)
    except NotUtf8 as exc:
        [diag] = exc.diagnostics
        raise NotText(f"{display}:{diag.line}:{diag.column}: not a UTF-8 text file ({diag.message.split(': ', 1)[1]})") \
            from None


def load_paths(paths: list[str], ctx: LintContext, forced_kind: str | None,
               findings: list[Diagnostic], sources: dict[str, str],
               skipped: list[tuple[str, str]] | None = None, chosen: Sequence[Candidate] | None = None,
               report_unchecked: bool = True) -> tuple[list[Document], int]:
    """The documents of every file selected (hpcconf.lint.walker); ``skipped`` gets (file, why) for every
    file passed over, walked or named alike. ``chosen``: read these candidates of ``paths`` instead of walking
    them (a worker of ``lint --jobs``), which also leaves the run-wide checks (unlisted directories, nothing
    checked) to the caller when ``report_unchecked`` is false."""
    from .detect import named_like_a_linted_kind, not_linted_reason, template_markup, unknown_reason, unparsed_yaml_consumer
    from .walker import EXCLUDED, candidates

    skipped = skipped if skipped is not None else []
    documents: list[Document] = []
    files = 0
    unknown_named: list[str] = []
    missing = lambda given: UsageError(f"no such file or directory: {given}")  # noqa: E731
    several_directories = named_directories_are_one_group(paths)
    unlisted: list[tuple[str, OSError]] = []
    deployments: dict[tuple[Path, Path], str | None] = {}  # deployment_dir's walks in this run
    listed = candidates(paths, ctx.config.excluded, skipped, missing, unlisted, kind_forced=forced_kind is not None) \
        if chosen is None else chosen
    for candidate in listed:
        file, display, explicit = candidate.path, candidate.display, candidate.explicit
        if not explicit and file.is_symlink() and not file.exists():
            # a tracked link into a submodule not checked out, or to a file made at deploy time: nothing to
            # read, and pre-commit never passes links, so the hook and `lint .` agree
            skipped.append((display, "a symbolic link to a file that does not exist here"))
            continue
        try:
            text = _read(file, display, None if explicit else candidate.top)
        except NotText:
            # binary files are not ours to lint, found in a walk or named (pre-commit passes a compiled
            # `.pp` SELinux module as text by its extension): skipped, never ending the batch; a named file
            # whose name says it is one we read (nccl.conf, a YAML) is refused at its byte
            if explicit and named_like_a_linted_kind(file.name):
                raise
            skipped.append((display, "not a UTF-8 text file"))
            continue
        except UnsafeFile as refused:  # a fifo, device, escaping link or oversized file: located, never read
            findings.extend(refused.diagnostics)
            files += 1
            continue
        except UsageError as error:
            # A file we cannot read was not checked, whether named or found in a walk: never let that
            # pass as clean, and keep it a located finding (SARIF/JSON stay valid for CI uploads).
            findings.append(_engine_finding(load_rules()["HPC000"], display, 1, str(error),
                                            "Fix its permissions, or exclude it in [tool.hpcconf] exclude."))
            files += 1
            continue
        reason = None if forced_kind else not_linted_reason(file.name, text)
        if reason:
            skipped.append((display, reason))
            continue
        try:
            docs = detect_documents(display, text, forced_kind=forced_kind, charts=ctx.charts,
                                    source_path=str(file))
        except HpcconfError as error:  # YAML that does not parse
            if not forced_kind and (template_markup(text) or "{{" in text or "{%" in text):
                skipped.append((display, "template markup ({{ }} or {% %}) that is not YAML until rendered"))
                continue
            if not forced_kind and _breaks_at_substitution(text, error):
                # `{ value: ${ISVC_PATH}/v1 }`: the `{` of `${` ends a flow mapping only before envsubst runs
                skipped.append((display, "an envsubst template (${...}) that is not YAML until substituted"))
                continue
            sources[display] = text
            known = forced_kind or unparsed_yaml_consumer(display, text, str(file), ctx.charts)
            findings.extend(error.diagnostics if known else [_no_known_consumer(d) for d in error.diagnostics])
            findings.extend(_secrets_in_unparsed(display, text, ctx))
            files += 1
            continue
        file_ctx = context_for_path(ctx, display, str(file))  # per-path-context tables of the settings
        if file_ctx is not ctx:
            for doc in docs:
                doc.context = file_ctx
        if docs:
            sources[display] = text  # only files hpcconf lints are read for suppressions
        for doc in docs:  # cross-file rules compare the files of one deployment, however they were given
            # (pre-commit names files: each goes to its deployment as a walk would put it); directories named
            # together on the command line are what the user says belongs together: one group
            doc.walk_group = "" if several_directories else deployment_dir(file, candidate.top, deployments)
        if not docs:
            skipped.append((display, unknown_reason(file.name, str(file))))
            if explicit:
                unknown_named.append(display)
            continue
        files += 1
        if forced_kind and explicit:
            findings.extend(_forced_kind_mismatch(display, text, forced_kind, ctx))
        for doc in docs:
            if doc.kind == "spec":
                documents.extend(_compile_spec(doc, file_ctx, findings, sources))
            documents.append(doc)
    for shown, list_error in unlisted:  # never a silent pass: what could not be listed was not checked
        if not ctx.config.excluded(shown):
            findings.append(unreadable_directory(shown, list_error))
    if files == 0 and report_unchecked:  # a run that checked nothing must not pass silently: say why each named file was passed over
        named = {given for given in paths if Path(given).is_file()}
        for display, why in skipped:
            if display not in named or why == EXCLUDED:
                continue
            unknown = display in unknown_named
            message = "cannot tell what kind of file this is, so nothing was checked" if unknown \
                else f"not linted ({why}), so nothing was checked"
            findings.append(_engine_finding(UNRECOGNISED_FILE, display, 1, message,
                                            "Pass --kind KIND (see `hpcconf lint --help`) or --chart NAME=VERSION."))
    return _without_committed_outputs(documents), files


def _without_committed_outputs(documents: list[Document]) -> list[Document]:
    """Drop the committed outputs (a directory with an hpcconf manifest) of a spec linted in the same run:
    the spec's compiled artifacts are the same files, so each setting is reported once, at the spec;
    ``hpcconf build --check`` is what tells a stale or hand-edited output."""
    specs = {Path(d.source_path).name for d in documents if d.kind == Kind.SPEC and d.source_path}
    if not specs:
        return documents
    kept = []
    for doc in documents:
        manifest = _manifest_of(doc)
        if manifest is not None and str(manifest.get("spec")) in specs:
            continue
        kept.append(doc)
    return kept


def _manifest_of(doc: Document) -> dict[str, Any] | None:
    if not doc.source_path or DisplayPath.parse(doc.path).compiled:
        return None
    for parent in Path(doc.source_path).resolve().parents:
        candidate = parent / MANIFEST_NAME
        if candidate.is_file():
            import json

            from ..safe_io import read_text

            try:
                data = json.loads(read_text(candidate, "manifest", tree=parent))
            except (HpcconfError, ValueError):
                return None
            return data if isinstance(data, dict) else None
    return None


def _forced_kind_mismatch(display: str, text: str, forced_kind: str, ctx: LintContext) -> list[Diagnostic]:
    """--kind on a file that plainly is something else checks nothing useful: say so."""
    try:
        natural = {d.kind for d in detect_documents(display, text, charts=ctx.charts)}
    except HpcconfError:
        return []
    if not natural or forced_kind in natural:
        return []
    # A warning, unlike a file merely passed over: the user's own --kind keeps the right rules from running.
    return [dataclasses.replace(_engine_finding(
        UNRECOGNISED_FILE, display, 1, f"--kind {forced_kind} was forced, but this file is a "
        f"{', '.join(sorted(natural))}: the {forced_kind} rules may find nothing to check",
        "Drop --kind to let hpcconf recognise the file, or pass the file you meant."), severity=Severity.WARNING)]


def _compile_spec(spec_doc: Document, ctx: LintContext, findings: list[Diagnostic],
                  sources: dict[str, str]) -> list[Document]:
    """Compile an hpcconf spec and return its artifacts as documents (``SPEC -> ARTIFACT``).

    A spec that fails validation yields its diagnostics as findings (exit 1), not a crash.
    """
    from ..pipeline import compile_spec  # imported here: the pipeline loads every target, which file-only lint never needs
    try:
        build = compile_spec(spec_doc.source_path or spec_doc.path, ctx.config.sku_dirs)
    except HpcconfError as error:
        spec_doc.compile_failed = True  # spec rules need the compiled cluster: skip them
        errors = [dataclasses.replace(d, severity=Severity.ERROR, file=_same_file(d.file, spec_doc))
                  for d in error.diagnostics]
        spec_doc.compile_errors = errors  # always reported: see lint_documents
        findings.extend(errors)
        return []
    return artifact_documents(spec_doc, build, ctx, findings, sources)


def artifact_documents(spec_doc: Document, build: Build, ctx: LintContext, findings: list[Diagnostic],
                       sources: dict[str, str]) -> list[Document]:
    """The artifacts ``build`` compiled from ``spec_doc``, as documents named ``SPEC -> ARTIFACT``
    with the spec's own SKU and versions as their context."""
    spec_ctx = context_for_build(ctx, build)
    spec_doc.context = spec_ctx
    documents = []
    for artifact in build.artifacts:
        display = str(DisplayPath(artifact.path, spec=spec_doc.path))
        if ctx.config.excluded(display):  # `exclude = ["aks/**"]` drops those artifacts, in lint and build alike
            continue
        sources[display] = artifact.content
        try:
            docs = detect_documents(display, artifact.content, forced_kind=artifact.kind, charts=spec_ctx.charts)
        except HpcconfError as error:
            findings.extend(error.diagnostics)
            continue
        artifact_ctx = dataclasses.replace(spec_ctx, sku=sku_for_artifact(build, artifact))
        for doc in docs:
            doc.context = artifact_ctx
            doc.artifact = artifact
        documents.extend(docs)
    return documents


def _same_file(file: str, doc: Document) -> str:
    """The spec's own name for diagnostics the pipeline reports against it (it may print it relative)."""
    try:
        if file and doc.source_path and Path(file).resolve() == Path(doc.source_path).resolve():
            return doc.path
    except OSError:
        pass
    return file


def context_for_build(ctx: LintContext, build: Build) -> LintContext:
    """The spec's own NCCL and chart versions replace the command line's (a spec gives all of them)."""
    spec_ctx = dataclasses.replace(ctx, spec=build.spec, cluster=build.cluster, pool_skus=build.pool_skus)
    versions = build.cluster.versions
    if versions.nccl:
        spec_ctx.nccl_version = versions.nccl
    spec_ctx.ucx_version, spec_ctx.openmpi_version = versions.ucx, versions.openmpi
    pinned = {chart: spec_ctx.pinned_version(chart) for chart in CHART_VERSION_FIELDS}
    spec_ctx.charts = {**ctx.charts, **{chart: version for chart, version in pinned.items() if version}}
    return spec_ctx


def sku_for_artifact(build: Build, artifact: Artifact) -> Sku | None:
    """The SKU an artifact is for: the pool named in its path (``nccl/<pool>/nccl.conf``), the pool
    whose topology or graph file it is (``nccl/nc96ads-a100-v4-topo.xml``), or the only GPU SKU."""
    pools, skus = build.cluster.pools, build.pool_skus
    parts = PurePosixPath(artifact.path).parts
    for pool in pools:
        if pool.name in parts[:-1]:
            return skus[pool.name]
    name = parts[-1] if parts else ""
    # Resolved pools name their topology/graph files, one name per SKU.
    by_file = {id(skus[p.name]): skus[p.name] for p in pools
               if name and p.nccl is not None and name in (p.nccl.topo_file, p.nccl.graph_file)}
    if len(by_file) == 1:
        return next(iter(by_file.values()))
    gpu_skus = {p.sku.name: skus[p.name] for p in pools if p.has_gpus}
    return next(iter(gpu_skus.values())) if len(gpu_skus) == 1 else None


# -- running rules ----------------------------------------------------------------------------
def _engine_finding(rule: Rule, file: str, line: int, message: str, hint: str = "",
                    column: int = 1, end_column: int | None = None) -> Diagnostic:
    return Diagnostic(code=rule.code, name=rule.name, severity=rule.severity, message=message, hint=hint,
                      file=file, line=line, column=column, end_line=line if end_column else None,
                      end_column=end_column)


def _run(rule: Rule, args: tuple[Any, ...], where: Document | None, check: Callable[..., Any] | None = None) -> list[Diagnostic]:
    """Run ``check`` (the rule's file check unless given) on ``args``; a crash becomes a finding."""
    check = check or rule.check
    if check is None:
        return []  # an engine finding: nothing to run
    token = current_rule.set(rule)
    try:
        produced = list(check(*args) or ())
    except Exception as exc:  # noqa: BLE001 - a crashing rule must become a finding, not a traceback
        frame = traceback.extract_tb(exc.__traceback__)[-1]
        file = where.path if where else ""
        return [_engine_finding(RULE_CRASHED, file, 1 if where else 0,
                                f"rule {rule.code} {rule.name} failed: {type(exc).__name__}: {exc} "
                                f"({Path(frame.filename).name}:{frame.lineno})",
                                f"Run again with --ignore {rule.code} to skip it, and report this.")]
    finally:
        current_rule.reset(token)
    return [_label(d, rule) for d in produced]


def _label(diagnostic: Diagnostic, rule: Rule) -> Diagnostic:
    if diagnostic.code:
        return diagnostic
    return dataclasses.replace(diagnostic, code=rule.code, name=rule.name)


def run_rules(documents: list[Document], ctx: LintContext, rules: dict[str, Rule]) -> list[Diagnostic]:
    findings: list[Diagnostic] = []
    active = [r for r in rules.values() if r.check is not None and is_enabled(r, ctx.config)]
    for doc in documents:
        doc_ctx = doc.context_or(ctx)
        if doc.compile_failed:
            continue  # its validation errors are the findings; rules would see no cluster
        for rule in active:
            if rule.scope == "document" and doc.kind in rule.kinds:
                findings.extend(_run(rule, (doc, doc_ctx), doc))
        if doc.kind == Kind.SPEC:
            findings.extend(_judge_spec(doc, doc_ctx, rules))
    set_rules = [rule for rule in active if rule.scope == "set"]
    for group in cluster_groups(documents):
        folder = _plain_folder(group)
        parts = components(group) if folder is not None else [group]
        found: list[Diagnostic] = []
        for part in parts:
            part_ctx = _shared_context(part, ctx)
            for rule in set_rules:
                found.extend(_set_rule_findings(rule, part, part_ctx))
        findings.extend(found)
        if folder is not None and len(parts) > 1:
            findings.extend(_folder_only_findings(group, folder, found, set_rules, ctx))
    return findings


def _judge_spec(doc: Document, ctx: LintContext, rules: dict[str, Rule]) -> list[Diagnostic]:
    """The ``Moment.JUDGE`` spec rules on a compiled spec (the refusals ran when it compiled)."""
    compiled = compiled_spec(doc, ctx)
    if compiled is None:
        return []
    return [finding for rule in rules.values() if rule.judges_resolved_spec and is_enabled(rule, ctx.config)
            for finding in _run(rule, (compiled,), doc, rule.spec_runner)]
def _set_rule_findings(rule: Rule, part: list[Document], ctx: LintContext) -> list[Diagnostic]:
    """A file-set rule's findings; one it reports on an hpcconf spec becomes HPC090 (a spec is judged by
    ``@spec_rule`` only, at the moment it names: one page, one severity for build and lint)."""
    specs = {doc.path for doc in part if doc.kind == Kind.SPEC}
    return [_engine_finding(RULE_CRASHED, d.file, d.line or 1, f"rule {rule.code} {rule.name} (a file-set rule) judged an "
                            "hpcconf spec; a spec is judged by @spec_rule only",
                            f"Run again with --ignore {rule.code} to skip it, and report this.")
            if d.file in specs and d.code == rule.code else d
            for d in _run(rule, (DocumentSet(part), ctx), None)]


def _plain_folder(group: list[Document]) -> str | None:
    """The directory a group of walked files shares when nothing but the folder makes them one deployment
    (no kustomization or chart, no NHC layout, no spec or hpcconf manifest, not directories the user named
    together); None for any other group, or a group of one file."""
    if len({doc.path for doc in group}) < 2:
        return None
    first = group[0]
    if not first.walk_group or first.deployment or first.cluster_root is not None:
        return None
    directory = Path(first.walk_group)
    if any((directory / marker).is_file() for marker in DEPLOYMENT_MARKERS):
        return None
    if any(doc.source_path and layout_root(Path(doc.source_path)) is not None for doc in group):
        return None  # NHC's own layout: the conf and the tests it sources
    return first.walk_group


def _folder_only_findings(group: list[Document], folder: str, found: list[Diagnostic], set_rules: list[Rule],
                          ctx: LintContext) -> list[Diagnostic]:
    """What comparing the whole folder finds beyond its evidenced parts: info naming the assumption."""
    seen = {(d.code, d.file, d.line) for d in found}
    group_ctx = _shared_context(group, ctx)
    extra: list[Diagnostic] = []
    for rule in set_rules:
        for finding in _run(rule, (DocumentSet(group), group_ctx), None):
            if (finding.code, finding.file, finding.line) in seen or finding.code == RULE_CRASHED.code:
                continue
            seen.add((finding.code, finding.file, finding.line))
            extra.append(dataclasses.replace(finding, severity=Severity.INFO,
                                             message=finding.message + assumption_note(folder)))
    return extra


def _shared_context(group: list[Document], ctx: LintContext) -> LintContext:
    """The context every document of a group shares (a deployment under one per-path-context table),
    else the run's; set rules that need a file's own context read ``doc.context_or(ctx)``."""
    contexts = {id(doc.context_or(ctx)): doc.context_or(ctx) for doc in group}
    return next(iter(contexts.values())) if len(contexts) == 1 else ctx


def cluster_groups(documents: list[Document]) -> list[list[Document]]:
    """Split documents into the clusters they belong to, for cross-file rules.

    A spec's artifacts are one cluster; so are the files under a directory holding an hpcconf
    manifest (``out/<cluster>/``). Files found by walking a directory belong to their deployment:
    the nearest kustomization or Helm chart directory above them, else their own directory (a
    multi-document file is inside it), when one directory is linted. Files and directories named
    together on the command line are compared together, as the user asked, unless the directories lie in
    different git repositories. Without this, linting a repository root would compare one deployment's job
    with another's HostDeviceNetwork. Inside a plain folder's group, ``run_rules`` compares only the files
    evidence ties together (:mod:`hpcconf.lint.pairing`).
    """
    groups: dict[str, list[Document]] = {}
    for doc in documents:
        groups.setdefault(_cluster_key(doc), []).append(doc)
    return [groups[key] for key in sorted(groups)]


def _cluster_key(doc: Document) -> str:
    """Also records ``doc.cluster_root`` (the manifest's directory), so rules need no file I/O."""
    if doc.deployment:
        return "spec:" + doc.deployment
    if doc.source_path:
        for parent in Path(doc.source_path).resolve().parents:
            if (parent / MANIFEST_NAME).is_file():
                doc.cluster_root = parent
                return f"out:{parent}"
    return f"dir:{doc.walk_group}" if doc.walk_group else ""


# -- filtering ------------------------------------------------------------------------------
def apply_config(findings: list[Diagnostic], config: LintConfig, rules: dict[str, Rule]) -> list[Diagnostic]:
    kept = []
    for finding in findings:
        rule = rules.get(finding.code)
        if rule is not None and not is_enabled(rule, config):
            continue
        ignored_here = config.ignored_for_file(finding.file)
        if rule is not None and any(selector_matches(s, rule) for s in ignored_here):
            continue
        if finding.code in config.severity:
            finding = dataclasses.replace(finding, severity=config.severity[finding.code])
        kept.append(finding)
    return kept


def apply_suppressions(findings: list[Diagnostic], sources: dict[str, str], rules: dict[str, Rule],
                       config: LintConfig, unsuppressable: Sequence[Diagnostic] = ()) -> list[Diagnostic]:
    """Drop suppressed findings; report suppression problems. ``unsuppressable`` findings stay
    reported, but a suppression naming one is not also called unused."""
    suppressions: dict[str, list[Suppression]] = {file: find_suppressions(file, text)
                                                 for file, text in sources.items()}
    for finding in unsuppressable:
        for s in suppressions.get(finding.file, ()):
            if finding.line in s.targets and _suppresses(s, finding, rules):
                s.used.add(finding.code)
    kept = []
    for finding in findings:
        matching = [s for s in suppressions.get(finding.file, ())
                    if finding.line in s.targets and _suppresses(s, finding, rules)]
        for suppression in matching:
            suppression.used.add(finding.code)
        if not matching:
            kept.append(finding)
    problems = []
    for file_suppressions in suppressions.values():
        for s in file_suppressions:
            problems.extend(_suppression_problems(s, rules, config))
    return kept + apply_config(problems, config, rules)


def _suppresses(suppression: Suppression, finding: Diagnostic, rules: dict[str, Rule]) -> bool:
    rule = rules.get(finding.code)
    return any(c.upper() == finding.code or (rule is not None and (c.lower() == rule.name or c.upper() in rule.formerly))
               for c in suppression.codes)


def _suppression_problems(s: Suppression, rules: dict[str, Rule], config: LintConfig) -> list[Diagnostic]:
    problems = []
    known = {c: next((r for r in rules.values() if c.upper() == r.code or c.lower() == r.name), None)
             for c in s.codes}
    for code, rule in known.items():
        moved = successors(code, rules)
        if moved and (rule is None or rule.code not in s.used):
            if any(r.code in s.used for r in moved):
                continue  # the old code suppressed one of the rules it was split into
            if rule is None:  # renamed away: not unknown, but it matched nothing either
                if any(is_enabled(r, config) for r in moved):
                    problems.append(_engine_finding(UNUSED_SUPPRESSION, s.file, s.line,
                                                    f"suppression of {code.upper()} (now {', '.join(r.code for r in moved)}) "
                                                    "matches no finding",
                                                    "Delete the comment, or move it to the line it is meant for.",
                                                    s.column, s.end_column))
                continue
        if rule is None:
            problems.append(_engine_finding(UNKNOWN_SUPPRESSION_CODE, s.file, s.line,
                                            f"suppression names unknown rule {code!r}",
                                            "Use a code or name from `hpcconf rules`.", s.column, s.end_column))
        elif rule.code not in s.used and is_enabled(rule, config):  # a disabled rule cannot use it
            problems.append(_engine_finding(UNUSED_SUPPRESSION, s.file, s.line,
                                            f"suppression of {rule.code} ({rule.name}) matches no finding",
                                            "Delete the comment, or move it to the line it is meant for.",
                                            s.column, s.end_column))
    if not s.reason:
        problems.append(_engine_finding(SUPPRESSION_WITHOUT_REASON, s.file, s.line,
                                        "suppression gives no reason",
                                        "Add why after the bracket: `# hpcconf: ignore[CODE] why it is fine here`.",
                                        s.column, s.end_column))
    return problems


def finalize(findings: list[Diagnostic]) -> list[Diagnostic]:
    unique = {(f.sort_key(), f.name, f.severity, f.hint, f.end_line, f.end_column): f for f in findings}
    return sorted(unique.values(), key=Diagnostic.sort_key)


# -- entry points ----------------------------------------------------------------------------
def lint_documents(documents: list[Document], ctx: LintContext, sources: dict[str, str] | None = None,
                   findings: list[Diagnostic] | None = None, files: int | None = None,
                   finish: bool = True) -> LintResult:
    """Run every enabled rule on ``documents`` and filter the result by config and suppressions.
    ``finish=False`` (a worker of ``lint --jobs``): findings neither secret-scrubbed nor sorted, which the
    caller does over every worker's findings (`finish_findings`), as one run would."""
    sources = dict(sources or {})
    for doc in documents:
        sources.setdefault(doc.path, doc.text)
    rules = rules_for(documents, ctx.config, sources)
    raw = list(findings or []) + run_rules(documents, ctx, rules)
    raw = attribute_to_spec(raw, documents, sources)
    # A spec that does not compile can never lint clean: `build` refuses it whatever --ignore,
    # --select, per-file-ignores or inline suppressions say, so lint reports its errors regardless.
    blocking = [d for doc in documents for d in doc.compile_errors]
    raw = [d for d in raw if d not in blocking]
    kept = apply_config(raw, ctx.config, rules)
    if not ctx.config.no_inline_ignores:
        kept = apply_suppressions(kept, sources, rules, ctx.config, unsuppressable=blocking)
    kept += blocking
    checked = files if files is not None else len({d.path for d in documents})
    return LintResult(findings=finish_findings(kept, sources) if finish else kept, files_checked=checked, documents=documents, sources=sources,
                      output_root=ctx.config.output_root)


def rules_for(documents: list[Document], config: LintConfig, sources: dict[str, str]) -> dict[str, Rule]:
    """Every rule where a code may be named or a spec is linted (settings, inline suppressions, spec
    checks); otherwise only the rule modules for the kinds present: the same findings, fewer imports."""
    named = config.select or config.ignore or config.per_file_ignores or config.severity or \
        (not config.no_inline_ignores and any(may_suppress(text) for text in sources.values()))
    kinds = {doc.kind for doc in documents}
    if named or Kind.SPEC in kinds or any(doc.artifact is not None or doc.deployment for doc in documents):
        return load_rules()
    return load_rules_for(kinds)


def finish_findings(kept: list[Diagnostic], sources: dict[str, str]) -> list[Diagnostic]:
    return finalize(_scrub_secrets(kept, sources))


def _scrub_secrets(findings: list[Diagnostic], sources: dict[str, str]) -> list[Diagnostic]:
    """No message or hint repeats a secret value a rule happened to quote (hpcconf.secret_scan)."""
    from ..secret_scan import scrub, secret_values

    values = set().union(*(secret_values(text) for text in sources.values())) if sources else set()
    if not values:
        return findings
    return [dataclasses.replace(f, message=scrub(f.message, values), hint=scrub(f.hint, values)) for f in findings]


_ASSIGNMENT = re.compile(r"(?:^|[\s'\"])(?:export\s+|-x\s+)?([A-Za-z_][A-Za-z0-9_]*)=")
SPEC_ENV_SECTIONS = ("nccl_env", "mpi_env")  # spec keys whose values reach artifacts verbatim


def attribute_to_spec(findings: list[Diagnostic], documents: list[Document],
                      sources: dict[str, str]) -> list[Diagnostic]:
    """Point a finding in a generated artifact at the spec line the offending setting came from.

    A user who writes ``nccl_env: {NCCL_GRAPH_FILE: ...}`` fixes (or suppresses) it in the spec,
    not in ``nccl/<pool>/nccl.conf``; the same setting in several artifacts becomes one finding.
    """
    origins: dict[str, tuple[Document, dict[str, list[tuple[tuple[Any, ...], str]]]]] = {}
    for doc in documents:
        if doc.kind == Kind.SPEC and doc.yaml is not None and isinstance(doc.yaml.data, dict):
            origins[doc.path] = (doc, _env_settings(doc.yaml.data))
    out: list[Diagnostic] = []
    seen: set[tuple[Any, ...]] = set()
    split: dict[str, list[str]] = {}
    for finding in findings:
        where = DisplayPath.parse(finding.file)
        spec_path, artifact = where.spec, where.file if where.compiled else ""
        moved = _moved_to_spec(finding, origins.get(spec_path), artifact, sources, split) if artifact else None
        if moved is None:
            out.append(finding)
            continue
        key = (moved.code, moved.file, moved.line, moved.column)
        if key not in seen:
            seen.add(key)
            out.append(moved)
    return out


def _env_settings(data: dict[str, Any]) -> dict[str, list[tuple[tuple[Any, ...], str]]]:
    """Where the spec sets each variable that reaches artifacts verbatim: the cluster's ``nccl_env`` /
    ``mpi_env`` and each pool's ``nccl_env`` (which overrides the cluster's in that pool's files), with
    the value written there."""
    places: list[tuple[tuple[Any, ...], Any]] = [((section,), data.get(section)) for section in SPEC_ENV_SECTIONS]
    pools = data.get("pools")
    for index, pool in enumerate(pools if isinstance(pools, list) else []):
        if isinstance(pool, dict):
            places.append((("pools", index, "nccl_env"), pool.get("nccl_env")))
    settings: dict[str, list[tuple[tuple[Any, ...], str]]] = {}
    for where, section in places:
        if isinstance(section, dict):
            for name, value in section.items():
                settings.setdefault(str(name), []).append(((*where, name), str(value)))
    return settings


def _setting_label(path: tuple[Any, ...]) -> str:
    return "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in path).lstrip(".")


def _pick_setting(candidates: list[tuple[tuple[Any, ...], str]], line: str, name: str, artifact: str,
                  data: dict[str, Any]) -> tuple[Any, ...] | None:
    """The one place that wrote ``name`` into this artifact line: the only one, or the one whose value
    the line holds, or the pool whose directory the artifact is in; None when that stays ambiguous."""
    if len(candidates) > 1:
        assigned = re.search(rf"(?:^|[\s'\"]){re.escape(name)}=['\"]?([^\s'\"\\]*)", line)
        by_value = [c for c in candidates if assigned and c[1] == assigned.group(1)]
        candidates = by_value or candidates
    if len(candidates) > 1:
        pools = data.get("pools") or []
        parts = set(artifact.split("/")[:-1])
        in_dir = [c for c in candidates if c[0][0] == "pools" and isinstance(pools[c[0][1]], dict)
                  and str(pools[c[0][1]].get("name")) in parts]
        candidates = in_dir or candidates
    return candidates[0][0] if len(candidates) == 1 else None


def _moved_to_spec(finding: Diagnostic, origin: tuple[Any, ...] | None, artifact: str,
                   sources: dict[str, str], split: dict[str, list[str]]) -> Diagnostic | None:
    if origin is None or not finding.line:
        return None
    spec_doc, settings = origin
    if finding.file not in split:  # split each source once, not once per finding (quadratic on long files)
        split[finding.file] = sources.get(finding.file, "").splitlines()
    lines = split[finding.file]
    if not 0 < finding.line <= len(lines):
        return None
    line = lines[finding.line - 1]
    names = [m.group(1) for m in _ASSIGNMENT.finditer(line) if m.group(1) in settings]
    if len(names) != 1:
        return None
    name = names[0]
    path = _pick_setting(settings[name], line, name, artifact, spec_doc.yaml.data)
    if path is None:
        return None
    span = spec_doc.yaml.position(path, prefer_value=True)
    return dataclasses.replace(finding, file=spec_doc.path, line=span.line, column=span.column,
                               end_line=span.end_line, end_column=span.end_column,
                               message=f"{finding.message} (set by {_setting_label(path)}; seen in {artifact}:{finding.line})")


def lint_paths(paths: list[str], ctx: LintContext, forced_kind: str | None = None) -> LintResult:
    """Lint files and directories; raises UsageError for missing or unreadable input. In parallel
    processes: hpcconf.lint.parallel.lint_paths_in_jobs, which falls back to this."""
    validate_config_selectors(ctx)
    findings: list[Diagnostic] = []
    sources: dict[str, str] = {}
    skipped: list[tuple[str, str]] = []
    documents, files = load_paths(paths, ctx, forced_kind, findings, sources, skipped)
    result = lint_documents(documents, ctx, sources, findings, files)
    result.skipped = skipped
    return result


def validate_config_selectors(ctx: LintContext) -> None:
    if ctx.config.select or ctx.config.ignore:
        rules = load_rules()
        validate_selectors(ctx.config.select, rules, "select")
        validate_selectors(ctx.config.ignore, rules, "ignore")


def lint_build(build: Build, ctx: LintContext) -> LintResult:
    """Lint a spec compiled already, as ``hpcconf lint SPEC`` does, without loading or compiling it
    again: ``hpcconf build`` checks what it is about to write."""
    rules = load_rules()
    validate_selectors(ctx.config.select, rules, "select")
    validate_selectors(ctx.config.ignore, rules, "ignore")
    loaded = build.spec
    if ctx.config.excluded(loaded.file):  # `hpcconf lint .` passes over an excluded spec: so does build's lint
        from .walker import EXCLUDED

        return LintResult(findings=[], files_checked=0, skipped=[(loaded.file, EXCLUDED)])
    # The text the build parsed: read again, the file could have changed under the build (and costs a read).
    text = loaded.text if loaded.text is not None else _read(loaded.path, loaded.file, None)
    spec_doc = Document(path=loaded.file, kind=Kind.SPEC, text=text, yaml=loaded.document,
                        source_path=str(loaded.path))
    findings: list[Diagnostic] = []
    sources = {spec_doc.path: text}
    spec_ctx = context_for_path(ctx, spec_doc.path, spec_doc.source_path)  # as `hpcconf lint SPEC` has it
    documents = artifact_documents(spec_doc, build, spec_ctx, findings, sources) + [spec_doc]
    return lint_documents(documents, ctx, sources, findings, 1)


def lint_text(text: str, name: str, ctx: LintContext | None = None, kind: str | None = None) -> LintResult:
    """Lint one in-memory file (tests, editors): ``lint_text("NCCL_ALGO = Ring\\n", "nccl.conf")``."""
    ctx = ctx or LintContext()
    findings: list[Diagnostic] = []
    try:
        documents = detect_documents(name, text, forced_kind=kind, charts=ctx.charts)
    except HpcconfError as error:
        findings.extend(error.diagnostics)
        documents = []
    own = context_for_path(ctx, name)  # an editor's buffer gets its path's per-path-context, as `lint FILE` does
    for doc in documents:
        doc.context = own if own is not ctx else None
    return lint_documents(documents, ctx, {name: text}, findings, 1)
