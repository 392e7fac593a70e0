"""The build pipeline, readable top to bottom:

load spec → validate (schema, then cross-field/catalog checks) → resolve against the SKU
catalog → render every target → (the caller lints and writes).

Any problem raises :class:`HpcconfError` before anything is written.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from .artifacts import Artifact
from .catalog import Catalog
from .diagnostics import Diagnostic, HpcconfError, Severity
from .resolve import PoolSkus, ResolvedCluster, pool_skus, resolve
from .resolve.refusals import load_resolved_refusals
from .rules_registry import Moment, spec_checks
from .sku_dirs import checked_sku_dirs
from .spec.checks import check_spec
from .spec.load import LoadedSpec, load_spec
from .targets import render_all


@dataclass(frozen=True)
class Build:
    spec: LoadedSpec
    cluster: ResolvedCluster
    artifacts: list[Artifact]
    # Each pool's catalog entry, by pool name: what the spec lint rules and nccl-report judge a pool by (the
    # resolved model carries only the facts targets read, ResolvedPool.sku).
    pool_skus: PoolSkus = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.cluster.name


def display_path(path: Path) -> str:
    """The spec path as users wrote it, relative to the working directory when possible (stable in headers)."""
    try:
        return Path(os.path.relpath(path.resolve(), Path.cwd())).as_posix()
    except ValueError:  # another drive on Windows
        return path.as_posix()


def load_catalog(loaded: LoadedSpec, sku_dirs: Sequence[Path] = ()) -> Catalog:
    checked_sku_dirs(sku_dirs)  # --sku-dir / the settings' sku-dir: the same HPC101 every command gives
    spec_dirs = []
    for i, directory in enumerate(loaded.cluster.sku_dirs):
        path = (loaded.path.parent / directory).resolve()
        if not path.is_dir():
            raise HpcconfError([loaded.document.diagnostic(Diagnostic(
                code="HPC101", name="sku-dir-missing", message=f"sku_dirs[{i}]: directory '{directory}' does not exist (resolved to {path})",
                hint="Paths in sku_dirs are relative to the spec file."), ("sku_dirs", i), prefer_value=True)])
        spec_dirs.append(path)
    return Catalog.load(extra_dirs=[*spec_dirs, *map(Path, sku_dirs)])


def resolved_refusals(loaded: LoadedSpec, cluster: ResolvedCluster) -> list[Diagnostic]:
    """The errors of the registered ``Moment.REFUSE_RESOLVED`` rules: what a platform's consumer would refuse in
    the resolved values, at the spec key it came from (labelled with the rule's code, as check_spec does)."""
    load_resolved_refusals()
    found: list[Diagnostic] = []
    for code, name, _severity, check in spec_checks(Moment.REFUSE_RESOLVED):
        for diagnostic in check(loaded, cluster) or ():
            if not diagnostic.code:
                diagnostic = dataclasses.replace(diagnostic, code=code, name=name)
            if diagnostic.severity is Severity.ERROR:
                found.append(diagnostic)
    return found


def compile_spec(spec_path: Path | str, sku_dirs: Sequence[Path] = (), *, text: str | None = None,
                 display_name: str | None = None) -> Build:
    """Everything except writing: returns the artifacts in memory.

    ``text`` / ``display_name`` compile another version of the spec at ``spec_path`` (explain-diff).
    """
    path = Path(spec_path)
    loaded = load_spec(path, display_name=display_name or display_path(path), text=text)
    catalog = load_catalog(loaded, sku_dirs)
    problems = check_spec(loaded, catalog)
    if problems:
        raise HpcconfError(problems)
    # Headers name the spec by file name only, so output bytes do not depend on the working directory.
    cluster = resolve(loaded.cluster, catalog, spec_file=path.name)
    refused = resolved_refusals(loaded, cluster)
    if refused:
        raise HpcconfError(refused)
    return Build(spec=loaded, cluster=cluster, artifacts=render_all(cluster), pool_skus=pool_skus(loaded.cluster, catalog))
