"""``hpcconf lint --jobs N``: the deployments of a tree linted in parallel processes, with the serial result.

The parent lists the files once (hpcconf.lint.walker) and splits them by the group cross-file rules compare
(the directory holding an hpcconf manifest, else the file's deployment: engine.cluster_groups), so a group
never spans two workers. Each worker reads, parses and lints its files (forked: the context is inherited, not
pickled) and returns its findings unsorted and unscrubbed; the parent scrubs secret values over every file's
text and sorts, as the serial run does. Where the split could change a finding, the parallel run gives up and
the caller lints serially: a file that may be the spec of a committed output linted in the same run (serially
the output is dropped for the spec), two workers compiling specs of one cluster name (serially one group),
or a run that checked no file (its "nothing was checked" findings need every file's reason).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..artifacts import Kind
from ..diagnostics import Diagnostic
from ..safe_io import unreadable_directory
from .context import LintContext, UsageError
from .document import Document
from .engine import (
    MANIFEST_NAME,
    LintResult,
    deployment_dir,
    finish_findings,
    lint_documents,
    lint_paths,
    load_paths,
    named_directories_are_one_group,
    validate_config_selectors,
)
from .walker import Candidate, candidates


def default_jobs() -> int:
    """The processors this process may run on (a container's or taskset's limit), else the machine's."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


@dataclass
class ChunkResult:
    findings: list[Diagnostic]
    files: int
    sources: dict[str, str]
    skipped: list[tuple[int, str, str]]  # (candidate index, file, why)
    documents: list[Document] = field(default_factory=list)  # specs and their compiled artifacts (locations)
    deployments: set[str] = field(default_factory=set)


# Set in the parent just before the workers fork; each worker reads its copy.
_SHARED: dict[str, Any] = {}


def _lint_chunk(indices: list[int], initial: list[Diagnostic]) -> ChunkResult:
    paths, ctx, forced_kind, listed = _SHARED["paths"], _SHARED["ctx"], _SHARED["forced_kind"], _SHARED["listed"]
    chosen = [listed[i] for i in indices]
    findings, sources, skipped = list(initial), {}, []  # type: tuple[list[Diagnostic], dict[str, str], list[tuple[str, str]]]
    documents, files = load_paths(paths, ctx, forced_kind, findings, sources, skipped, chosen=chosen,
                                  report_unchecked=False)
    result = lint_documents(documents, ctx, sources, findings, files, finish=False)
    index_of = {c.display: i for i, c in zip(indices, chosen)}
    return ChunkResult(
        findings=result.findings, files=files, sources=result.sources,
        skipped=[(index_of.get(display, indices[-1]), display, why) for display, why in skipped],
        documents=[d for d in documents if d.kind == Kind.SPEC or d.artifact is not None],
        deployments={d.deployment for d in documents if d.deployment})


class _Groups:
    """The cross-file group of each listed file, as engine.cluster_groups will key its documents."""

    def __init__(self, several_directories: bool):
        self.several_directories = several_directories
        self.manifest_dirs: dict[Path, Path | None] = {}
        self.deployments: dict[tuple[Path, Path], str | None] = {}  # deployment_dir's walks

    def manifest_root(self, directory: Path) -> Path | None:
        if directory not in self.manifest_dirs:
            parent = directory.parent
            self.manifest_dirs[directory] = directory if (directory / MANIFEST_NAME).is_file() else \
                (None if parent == directory else self.manifest_root(parent))
        return self.manifest_dirs[directory]

    def key(self, candidate: Candidate) -> str:
        root = self.manifest_root(candidate.path.resolve().parent)
        if root is not None:
            return f"out:{root}"
        return "dir:" + ("" if self.several_directories else deployment_dir(candidate.path, candidate.top,
                                                                                     self.deployments))

    def manifest_specs(self) -> set[str]:
        names = set()
        for root in {r for r in self.manifest_dirs.values() if r is not None}:
            try:
                data = json.loads((root / MANIFEST_NAME).read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            if isinstance(data, dict) and data.get("spec"):
                names.add(str(data["spec"]))
        return names


def _split(groups: dict[str, list[int]], listed: list[Candidate], jobs: int) -> list[list[int]]:
    """Whole groups to ``jobs`` chunks, largest first to the chunk with the fewest bytes (stat only)."""
    def size(i: int) -> int:
        try:
            return listed[i].path.stat().st_size + 512  # + a file's fixed cost
        except OSError:
            return 512
    weighted = sorted(((sum(size(i) for i in members), key) for key, members in groups.items()), reverse=True)
    chunks: list[tuple[int, list[int]]] = [(0, []) for _ in range(jobs)]
    for weight, key in weighted:
        load, members = min(chunks, key=lambda c: c[0])
        chunks.remove((load, members))
        chunks.append((load + weight, members + groups[key]))
    return [sorted(members) for _, members in chunks if members]


def lint_paths_in_jobs(paths: list[str], ctx: LintContext, forced_kind: str | None = None, jobs: int = 1) -> LintResult:
    """``engine.lint_paths`` with the deployments in ``jobs`` processes where that gives the serial result."""
    if jobs > 1:
        validate_config_selectors(ctx)
        parallel = lint_paths_parallel(paths, ctx, forced_kind, jobs)
        if parallel is not None:
            return parallel
    return lint_paths(paths, ctx, forced_kind)


def lint_paths_parallel(paths: list[str], ctx: LintContext, forced_kind: str | None, jobs: int) -> LintResult | None:
    """The serial run's result, from ``jobs`` processes; None where the serial run must be used instead."""
    skipped_walk: list[tuple[str, str]] = []
    unlisted: list[tuple[str, OSError]] = []
    listed: list[Candidate] = []
    walk_skips: list[tuple[int, str, str]] = []  # tagged with the index of the next file, to keep the serial order

    def missing(given: str) -> UsageError:
        return UsageError(f"no such file or directory: {given}")

    for candidate in candidates(paths, ctx.config.excluded, skipped_walk, missing, unlisted,
                                kind_forced=forced_kind is not None):
        walk_skips.extend((len(listed), display, why) for display, why in skipped_walk)
        skipped_walk.clear()
        listed.append(candidate)
    walk_skips.extend((len(listed), display, why) for display, why in skipped_walk)
    several_directories = named_directories_are_one_group(paths)
    grouping = _Groups(several_directories)
    groups: dict[str, list[int]] = {}
    for index, candidate in enumerate(listed):
        groups.setdefault(grouping.key(candidate), []).append(index)
    if len(groups) < 2:
        return None  # one group: nothing to run side by side, and no pool to start
    if grouping.manifest_specs() & {c.path.name for c in listed}:
        return None  # a spec and its committed output in one run: the serial run drops the output
    import multiprocessing  # only now: a one-file (one-group) lint imports no pool machinery
    from concurrent.futures import ProcessPoolExecutor

    if "fork" not in multiprocessing.get_all_start_methods():
        return None  # spawned workers would re-import and re-load everything: no gain
    chunks = _split(groups, listed, min(jobs, len(groups)))
    initial = [unreadable_directory(shown, error) for shown, error in unlisted if not ctx.config.excluded(shown)]
    from .rule_loading import load_rules

    load_rules()  # imported once here, not once per worker
    _SHARED.update(paths=paths, ctx=ctx, forced_kind=forced_kind, listed=listed)
    try:
        with ProcessPoolExecutor(max_workers=len(chunks), mp_context=multiprocessing.get_context("fork")) as pool:
            results = list(pool.map(_lint_chunk, chunks, [initial] + [[]] * (len(chunks) - 1)))
    finally:
        _SHARED.clear()
    deployments = [name for r in results for name in r.deployments]
    if len(deployments) != len(set(deployments)):
        return None  # specs of one cluster name in two workers: serially they are one group
    files = sum(r.files for r in results)
    if files == 0:
        return None
    sources: dict[str, str] = {}
    for r in results:
        sources.update(r.sources)
    skipped = sorted([(i, 0, n, d, w) for n, (i, d, w) in enumerate(walk_skips)] +
                     [(i, 1, n, d, w) for r in results for n, (i, d, w) in enumerate(r.skipped)])
    findings = finish_findings([f for r in results for f in r.findings], sources)
    return LintResult(findings=findings, files_checked=files, documents=[d for r in results for d in r.documents],
                      sources=sources, output_root=ctx.config.output_root,
                      skipped=[(display, why) for _, _, _, display, why in skipped])
