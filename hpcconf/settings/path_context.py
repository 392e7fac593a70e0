"""Per-path lint context: ``[tool.hpcconf.per-path-context."GLOB"]`` (``[per-path-context."GLOB"]`` in
``.hpcconf.toml``) gives the files matching GLOB their SKU, NCCL version and chart versions, the way
``per-file-ignores`` gives them ignored codes::

    [tool.hpcconf.per-path-context."clusters/nc48/**"]
    sku = "Standard_NC48ads_A100_v4"
    nccl-version = "2.21.5"
    charts = { gpu-operator = "v24.9.2" }

    [tool.hpcconf.per-path-context."clusters/ndh100/**"]
    sku = "Standard_ND96isr_H100_v5"

One repository with NC48 and ND H100 files, or values for two versions of a chart, then lints
correctly in one run. What a file is judged by, key by key (``sku``, ``nccl-version``, each chart):

1. the command line (``--sku``, ``--nccl-version``, ``--chart NAME=VERSION``): what you typed for
   this run wins;
2. the most specific matching glob (more literal path segments, then more literal characters;
   of two equally specific globs, the one written later);
3. a broader matching glob (``clusters/**`` gives charts to every cluster, ``clusters/nc48/**``
   only the SKU);
4. what the file itself says (a values file's ``# gpu-operator chart v24.9.2 values`` header,
   ``Chart.yaml``);
5. the default: no SKU (SKU rules stay silent), the newest NCCL and chart versions hpcconf knows.

A spec's compiled artifacts are judged by the spec: each pool's SKU and the versions it pins (they
are what the artifacts were generated for, and what ``hpcconf build`` lints them against); settings
and flags fill only what the spec leaves unpinned. Per-path charts say which version a values file
is judged against; they do not make a file a values file (its name, its chart directory or
``--kind`` do), so a glob over a whole cluster directory never turns unrelated YAML into Helm values.

Globs match as ``per-file-ignores`` and ``exclude`` do (the path as given, its name, a trailing
part, ``dir/**``), and also against the path relative to the settings file, so running from a
subdirectory finds the same tables. An unknown SKU, a chart hpcconf does not know, a value that is
not a version or an unknown key is an error at its line in the settings file (exit code 2).
"""

from __future__ import annotations

import difflib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

from .globs import glob_match
from .values import CHART_ALIASES, KNOWN_CHARTS, checked_kubernetes_version

if TYPE_CHECKING:
    from ..catalog import Catalog, Sku

PATH_CONTEXT_KEY = "per-path-context"
PATH_CONTEXT_FIELDS = ("sku", "nccl-version", "kubernetes-version", "charts", "provider")
_WILDCARDS = frozenset("*?[")


@dataclass(frozen=True)
class PathContext:
    """One ``per-path-context`` table: the context it gives the files its glob matches."""

    glob: str
    order: int  # its place in the settings file: of two equally specific globs the later wins
    sku: Sku | None = None
    nccl_version: str | None = None
    kubernetes_version: str | None = None
    charts: dict[str, str] = field(default_factory=dict)
    provider: str | None = None  # a hpcconf/data/providers.yaml profile name
    base: Path | None = None  # the settings file's directory: globs also match paths relative to it
    where: str = ""  # file:line:col of its table, for messages

    @property
    def specificity(self) -> tuple[int, int, int]:
        """Sort key, broadest first: literal path segments, literal characters, then file order."""
        segments = [part for part in self.glob.strip("/").split("/") if part]
        literal = [part for part in segments if not _WILDCARDS & set(part)]
        characters = sum(1 for char in self.glob if char not in _WILDCARDS and char != "/")
        return len(literal), characters, self.order

    def matches(self, display: str, source_path: str = "") -> bool:
        if glob_match(display, self.glob):
            return True
        relative = _relative_to(source_path, self.base)
        return relative is not None and glob_match(relative, self.glob)


def _relative_to(source_path: str, base: Path | None) -> str | None:
    if not source_path or base is None:
        return None
    try:
        relative = os.path.relpath(Path(source_path).resolve(), base.resolve())
    except ValueError:  # another drive on Windows
        return None
    return None if relative.startswith("..") else Path(relative).as_posix()


def matching(contexts: Sequence[PathContext], display: str, source_path: str = "") -> list[PathContext]:
    """The tables whose glob matches the file, broadest first (later ones override earlier ones)."""
    return sorted((c for c in contexts if c.matches(display, source_path)), key=lambda c: c.specificity)


# -- reading the settings tables --------------------------------------------------------------------

Locate = Callable[..., str]  # (key, sub-key, ...) -> "file:line:col" of that key in the settings file


def parse_path_contexts(value: object, at: Locate, base: Path | None,
                        sku_dirs: Sequence[Path] = ()) -> list[PathContext]:
    """The ``per-path-context`` table; ValueError prefixed with ``file:line:col`` for any bad entry."""
    if not isinstance(value, dict):
        raise ValueError(f"{at(PATH_CONTEXT_KEY)}: '{PATH_CONTEXT_KEY}' must be a table of globs, e.g. "
                         f'[{PATH_CONTEXT_KEY}."clusters/nc48/**"]')
    catalog: list[Catalog] = []  # loaded once, and only when a table names a SKU
    contexts = []
    for order, (glob, entry) in enumerate(value.items()):
        contexts.append(_parse_entry(str(glob), entry, order, at, base, lambda: _catalog(catalog, sku_dirs)))
    return contexts


def _parse_entry(glob: str, entry: object, order: int, at: Locate, base: Path | None,
                 catalog: Callable[[], Catalog]) -> PathContext:
    name = f"{PATH_CONTEXT_KEY}.\"{glob}\""
    if not glob.strip():
        raise ValueError(f"{at(PATH_CONTEXT_KEY, glob)}: {name}: the glob is empty")
    if not isinstance(entry, dict):
        raise ValueError(f"{at(PATH_CONTEXT_KEY, glob)}: {name} must be a table with "
                         f"{', '.join(PATH_CONTEXT_FIELDS)}")
    for key in entry:
        if key not in PATH_CONTEXT_FIELDS:
            close = difflib.get_close_matches(str(key), PATH_CONTEXT_FIELDS, n=1, cutoff=0.6)
            hint = f"did you mean '{close[0]}'?" if close else f"known keys: {', '.join(PATH_CONTEXT_FIELDS)}"
            raise ValueError(f"{at(PATH_CONTEXT_KEY, glob, str(key))}: unknown key '{key}' in {name}; {hint}")
    if not entry:
        raise ValueError(f"{at(PATH_CONTEXT_KEY, glob)}: {name} sets nothing; give "
                         f"{', '.join(PATH_CONTEXT_FIELDS)}")
    return PathContext(glob=glob, order=order, base=base, where=at(PATH_CONTEXT_KEY, glob),
                       sku=_sku(entry, glob, at, catalog), nccl_version=_nccl_version(entry, glob, at),
                       kubernetes_version=_kubernetes_version(entry, glob, at), charts=_charts(entry, glob, at),
                       provider=_provider(entry, glob, at))


def _catalog(cache: list[Catalog], sku_dirs: Sequence[Path]) -> Catalog:
    if not cache:
        from ..catalog import Catalog
        from ..diagnostic_text import render_all
        from ..diagnostics import HpcconfError

        try:
            cache.append(Catalog.load(extra_dirs=sku_dirs))
        except HpcconfError as error:
            raise ValueError(render_all(error.diagnostics)) from None
    return cache[0]


def _sku(entry: dict[str, Any], glob: str, at: Locate, catalog: Callable[[], Catalog]) -> Sku | None:
    if "sku" not in entry:
        return None
    from ..catalog import UnknownSku

    value = entry["sku"]
    where = at(PATH_CONTEXT_KEY, glob, "sku")
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{where}: 'sku' must be a VM size such as \"Standard_NC48ads_A100_v4\" (got {value!r})")
    try:
        return catalog().get(value)
    except UnknownSku as exc:
        raise ValueError(f"{where}: {exc} (`hpcconf skus` lists the known sizes; add your own with "
                         "the `sku-dir` setting or --sku-dir)") from None


def _nccl_version(entry: dict[str, Any], glob: str, at: Locate) -> str | None:
    if "nccl-version" not in entry:
        return None
    return _version(entry["nccl-version"], at(PATH_CONTEXT_KEY, glob, "nccl-version"), "nccl-version")


def _kubernetes_version(entry: dict[str, Any], glob: str, at: Locate) -> str | None:
    if "kubernetes-version" not in entry:
        return None
    where = at(PATH_CONTEXT_KEY, glob, "kubernetes-version")
    if not isinstance(entry["kubernetes-version"], str):
        raise ValueError(f"{where}: 'kubernetes-version' must be a string such as \"1.33\"")
    return checked_kubernetes_version(entry["kubernetes-version"], where)


def _provider(entry: dict[str, Any], glob: str, at: Locate) -> str | None:
    from ..knowledge import providers

    if "provider" not in entry:
        return None
    value = entry["provider"]
    if not isinstance(value, str) or providers.lookup(value) is None:
        raise ValueError(f"{at(PATH_CONTEXT_KEY, glob, 'provider')}: 'provider' must be one of "
                         f"{', '.join(providers.names())} (got {value!r})")
    return value.strip().lower()


def _charts(entry: dict[str, Any], glob: str, at: Locate) -> dict[str, str]:
    value = entry.get("charts", {})
    if not isinstance(value, dict):
        raise ValueError(f"{at(PATH_CONTEXT_KEY, glob, 'charts')}: 'charts' must be a table of chart = "
                         "version, e.g. charts = { gpu-operator = \"v24.9.2\" }")
    charts = {}
    for raw_name, version in value.items():
        where = at(PATH_CONTEXT_KEY, glob, "charts", str(raw_name))
        name = CHART_ALIASES.get(str(raw_name).strip().lower(), str(raw_name).strip().lower())
        if name not in KNOWN_CHARTS:
            close = difflib.get_close_matches(name, KNOWN_CHARTS, n=1, cutoff=0.6)
            hint = f"did you mean '{close[0]}'?" if close else f"known: {', '.join(KNOWN_CHARTS)}"
            raise ValueError(f"{where}: unknown chart '{raw_name}' in charts; {hint}")
        charts[name] = _version(version, where, f"charts.{raw_name}")
    return charts


# Stricter than Version.parse (which reads the version a text starts with): a settings value is all version.
_VERSION = re.compile(r"v?\d+\.\d+(?:\.\d+)?(?:[-+][0-9A-Za-z.-]+)?")


def _version(value: object, where: str, key: str) -> str:
    text = value.strip() if isinstance(value, str) else ""
    if not _VERSION.fullmatch(text):
        raise ValueError(f"{where}: '{key}' must be a version such as \"2.21.5\" or \"v24.9.2\" "
                         f"(got {value!r})")
    return text.lstrip("v")
