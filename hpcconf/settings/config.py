"""hpcconf settings (lint and build) from ``.hpcconf.toml`` or ``[tool.hpcconf]`` in ``pyproject.toml``.

Keys (all optional; the same in both files, top level of ``.hpcconf.toml``)::

    select = ["NCCL", "DKR001"]          # codes, code prefixes or rule names; default: all
    ignore = ["DKR002"]
    exclude = ["vendor/**", "*.bak"]     # git-style globs (** spans directories), matched below any directory
    out = "generated"                    # build's output root, relative to this file (default: ./out)
    fail-level = "warning"               # error (default) | warning | info
    no-inline-ignores = false
    sku-dir = ["skus-local"]             # extra SKU directories, relative to this file (before --sku-dir)
    [per-file-ignores]                   # glob -> codes
    "legacy/*.conf" = ["NCCL003"]
    [severity]                           # code -> error | warning | info
    NCCL010 = "error"
    [per-path-context."clusters/nc48/**"]  # glob -> the SKU / NCCL / chart versions its files are for
    sku = "Standard_NC48ads_A100_v4"
    nccl-version = "2.21.5"
    charts = { gpu-operator = "v24.9.2" }

(``per-path-context``: :mod:`hpcconf.settings.path_context` says which value wins where several apply.)

The file is found by searching upward from the current directory (``.hpcconf.toml``
first, then a ``pyproject.toml`` that has ``[tool.hpcconf]``); ``--config FILE`` names
one explicitly. Command-line ``--select``/``--ignore`` replace the file's lists.

:func:`load_settings` is the only reader: ``build`` and ``lint`` both call it once per run, so a key
means the same to both, and an unknown key (``ignroe``) or a bad value is an error for both (exit
code 2, ``file:line:col``, "did you mean").
"""

from __future__ import annotations

import difflib
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

from ..diagnostics import HpcconfError, Severity
from ..safe_io import read_text
from .globs import glob_match

if TYPE_CHECKING:
    from .path_context import PathContext

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

LINT_KEYS = frozenset({"select", "ignore", "exclude", "fail-level", "no-inline-ignores", "per-file-ignores", "severity",
                       "per-path-context"})
# `out` is build's output root, `sku-dir` the extra SKU directories; both commands read the same table,
# so both know every key.
SETTINGS_KEYS = LINT_KEYS | {"out", "sku-dir"}


class ConfigError(ValueError):
    """The config file cannot be used (exit code 2)."""


@dataclass
class LintConfig:
    select: list[str] = field(default_factory=list)  # empty: everything
    ignore: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)
    severity: dict[str, Severity] = field(default_factory=dict)
    fail_level: Severity | None = None
    no_inline_ignores: bool = False
    source: str = ""  # the file it came from, for messages
    path_contexts: list[PathContext] = field(default_factory=list)  # per-path-context, in file order
    sku_dirs: list[Path] = field(default_factory=list)  # the settings' sku-dir, then --sku-dir
    output_root: Path | None = None  # build's output root (`out`): where committed artifacts lie

    def excluded(self, path: str) -> bool:
        return any(glob_match(path, pattern) for pattern in self.exclude)

    def ignored_for_file(self, path: str) -> list[str]:
        return [code for pattern, codes in self.per_file_ignores.items() if glob_match(path, pattern)
                for code in codes]


def find_config(start: Path) -> Path | None:
    """The nearest ``.hpcconf.toml``, or ``pyproject.toml`` with ``[tool.hpcconf]``, at or above ``start``.

    A ``pyproject.toml`` that is not valid TOML counts when its text mentions ``[tool.hpcconf``:
    skipping it would run with default settings (and another output root) without a word.
    """
    for directory in [start, *start.parents]:
        dedicated = directory / ".hpcconf.toml"
        if os.path.lexists(dedicated) and not dedicated.is_dir():  # a fifo or a link out is refused, not skipped
            return dedicated
        pyproject = directory / "pyproject.toml"
        if pyproject.is_file():
            try:
                text = read_text(pyproject, "settings")
            except HpcconfError:
                continue
            try:
                data = tomllib.loads(text)
            except tomllib.TOMLDecodeError:
                if _PYPROJECT_TABLE.search(text):
                    return pyproject
                continue
            if "hpcconf" in data.get("tool", {}):
                return pyproject
    return None


@dataclass
class Settings:
    """Everything ``[tool.hpcconf]`` / ``.hpcconf.toml`` says, read by :func:`load_settings`."""

    lint: LintConfig = field(default_factory=LintConfig)
    out: Path | None = None  # the `out` key, resolved against the settings file's directory
    source: Path | None = None  # the file, None when there is none
    sku_dirs: list[Path] = field(default_factory=list)  # the `sku-dir` key, resolved likewise


def load_settings(start: Path | None = None, config_file: Path | None = None,
                  sku_dirs: Sequence[Path] = ()) -> Settings:
    """The one settings loader ``build`` and ``lint`` share.

    ``config_file`` (``--config``) names the file; otherwise the nearest one at or above ``start``
    (default: the current directory) is used, and none at all means the defaults. Raises
    :class:`ConfigError` (exit code 2) for an unreadable file, invalid TOML, an unknown key
    (with "did you mean") or a bad value; the message starts with ``file:line:col``.
    ``sku_dirs`` (``--sku-dir``) come after the file's ``sku-dir`` in ``lint.sku_dirs``; both are
    searched for the SKUs ``per-path-context`` names.
    """
    if config_file is not None:
        if not os.path.lexists(config_file) or config_file.is_dir():  # a fifo or a link out: refused by the reader
            raise ConfigError(f"config file not found: {config_file}")
        path: Path | None = config_file
    else:
        path = find_config((start or Path.cwd()).resolve())
    if path is None:
        return Settings(lint=LintConfig(sku_dirs=list(sku_dirs)))
    text, data = _read_table(path)
    where = _Locator(path, text, _TABLE_PATH if path.name == "pyproject.toml" else ())
    _reject_unknown_keys(data, where)
    own_dirs = _sku_dirs(data, where)
    lint = _lint_config(data, where, [*own_dirs, *sku_dirs])
    lint.output_root = _out_dir(data, where)
    return Settings(lint=lint, out=lint.output_root, source=path, sku_dirs=own_dirs)


def load_config(path: Path) -> LintConfig:
    """The lint part of the settings file ``path``."""
    return load_settings(config_file=path).lint


def config_from_mapping(data: dict[str, Any], source: str = "") -> LintConfig:
    """Lint settings from an already parsed mapping (no positions in messages)."""
    where = _Locator(Path(source or "config"), "", ())
    _reject_unknown_keys(data, where)
    return _lint_config(data, where)


_TABLE_PATH = ("tool", "hpcconf")
_PYPROJECT_TABLE = re.compile(r"^\s*\[\s*tool\s*\.\s*[\"']?hpcconf", re.M)
_TOML_POSITION = re.compile(r"\s*\(at line (\d+), column (\d+)\)\s*$")


def _read_table(path: Path) -> tuple[str, dict[str, Any]]:
    try:
        text = read_text(path, "settings")
    except HpcconfError as exc:  # through the safe reader: no fifo, device, escaping link or huge file
        [diag] = exc.diagnostics
        raise ConfigError(f"{diag.file}:{diag.line}:{diag.column}: error[{diag.code}] {diag.name}: cannot read the "
                          f"hpcconf settings: {diag.message}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        found = _TOML_POSITION.search(message)
        at = f"{path}:{found.group(1)}:{found.group(2)}" if found else str(path)
        raise ConfigError(f"{at}: invalid TOML: {_TOML_POSITION.sub('', message)}") from None
    if path.name == "pyproject.toml":
        table = data.get("tool", {}).get("hpcconf", {})
        if not isinstance(table, dict):
            raise ConfigError(f"{path}: [tool.hpcconf] must be a table")
        return text, table
    return text, data


def _reject_unknown_keys(data: dict[str, Any], where: "_Locator") -> None:
    for key in data:
        if key not in SETTINGS_KEYS:
            close = difflib.get_close_matches(str(key), sorted(SETTINGS_KEYS), n=1, cutoff=0.6)
            hint = f"did you mean '{close[0]}'?" if close else f"known keys: {', '.join(sorted(SETTINGS_KEYS))}"
            raise ConfigError(f"{where.at(key)}: unknown key '{key}' in {where.table_name()}; {hint}")


def _lint_config(data: dict[str, Any], where: "_Locator", sku_dirs: Sequence[Path] = ()) -> LintConfig:
    def checked(key: str, parse: Callable[..., Any], *sub: str) -> Any:
        try:
            return parse()
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"{where.at(key, *sub)}: {exc}") from None

    per_file = checked("per-file-ignores", lambda: _table(data.get("per-file-ignores", {}), "per-file-ignores"))
    severity = checked("severity", lambda: _table(data.get("severity", {}), "severity"))
    return LintConfig(
        select=checked("select", lambda: _codes(data.get("select", []), "select")),
        ignore=checked("ignore", lambda: _codes(data.get("ignore", []), "ignore")),
        exclude=checked("exclude", lambda: _strings(data.get("exclude", []), "exclude")),
        per_file_ignores={str(k): checked("per-file-ignores", lambda v=v, k=k: _codes(v, f"per-file-ignores.{k}"), str(k))
                          for k, v in per_file.items()},
        severity={str(k).upper(): checked("severity", lambda v=v, k=k: _severity(v, f"severity.{k}"), str(k))
                  for k, v in severity.items()},
        fail_level=checked("fail-level", lambda: _severity(data["fail-level"], "fail-level"))
        if "fail-level" in data else None,
        no_inline_ignores=checked("no-inline-ignores", lambda: _bool(data.get("no-inline-ignores", False),
                                                                     "no-inline-ignores")),
        source=str(where.path),
        path_contexts=_path_contexts(data, where, sku_dirs),
        sku_dirs=list(sku_dirs),
    )


def _path_contexts(data: dict[str, Any], where: "_Locator", sku_dirs: Sequence[Path]) -> list[PathContext]:
    if "per-path-context" not in data:
        return []
    from .path_context import parse_path_contexts  # the catalog and chart tables: only when used

    base = where.path.parent if where.text else None  # None: a parsed mapping has no file to anchor to
    try:
        return parse_path_contexts(data["per-path-context"], where.at, base, sku_dirs)
    except ValueError as exc:  # already located (file:line:col) by parse_path_contexts
        raise ConfigError(str(exc)) from None


def _sku_dirs(data: dict[str, Any], where: "_Locator") -> list[Path]:
    """``sku-dir``: directories relative to the settings file; each must exist (HPC101's wording)."""
    if "sku-dir" not in data:
        return []
    try:
        names = _strings(data["sku-dir"], "sku-dir")
    except ValueError as exc:
        raise ConfigError(f"{where.at('sku-dir')}: {exc}") from None
    from ..catalog_errors import sku_dir_problem

    directories = [where.path.parent / name for name in names]
    for directory in directories:
        problem = sku_dir_problem(directory)
        if problem is not None:
            raise ConfigError(f"{where.at('sku-dir')}: {problem.message} (sku-dir is relative to {where.path.name})")
    return directories


def _out_dir(data: dict[str, Any], where: "_Locator") -> Path | None:
    out = data.get("out")
    if out is None:
        return None
    if not (isinstance(out, str) and out.strip()):
        raise ConfigError(f"{where.at('out')}: 'out' must be a directory path (text), got {out!r}")
    return where.path.parent / out


def _table(value: object, key: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ValueError(f"'{key}' must be a table")
    return value


def _bool(value: object, key: str) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"'{key}' must be true or false (got {value!r})")
    return value


class _Locator:
    """Finds where a key of the hpcconf table is written, for ``file:line:col`` in messages.

    tomllib keeps no positions, so the text is scanned: ``[table]`` headers and ``key =`` lines
    (bare or quoted keys). A key it cannot place (a dotted key, an inline table) is reported at
    the line of its table header, or at the file alone.
    """

    def __init__(self, path: Path, text: str, table: tuple[str, ...]) -> None:
        self.path, self.table, self.text = path, table, text
        self.lines = text.splitlines()

    def table_name(self) -> str:
        return f"[{'.'.join(self.table)}]" if self.table else self.path.name

    def at(self, key: str, *sub: str) -> str:
        """``file:line:col`` of ``key`` (``sub``: a key inside its table, and so on), else of the
        nearest enclosing key that can be placed, else the file alone."""
        keys = (key, *sub)
        for depth in range(len(keys), 0, -1):
            found = self._find((*self.table, *keys[:depth - 1]), keys[depth - 1])
            if found:
                found = self._inline(found, keys[depth:])
                return f"{self.path}:{found[0]}:{found[1]}"
        return str(self.path)

    def _inline(self, found: tuple[int, int], inner: tuple[str, ...]) -> tuple[int, int]:
        """Within ``key = { sku = "..." }``: the column of the inner key, when it is on that line."""
        line = self.lines[found[0] - 1]
        column = found[1] - 1
        for key in inner:
            match = re.compile(rf"[{{,]\s*(?:\"{re.escape(key)}\"|'{re.escape(key)}'|{re.escape(key)})\s*=").search(
                line, column)
            if match is None:
                break
            column = match.end() - len(match.group(0).lstrip("{, \t"))
        return found[0], column + 1

    def _find(self, table: tuple[str, ...], key: str) -> tuple[int, int] | None:
        current: tuple[str, ...] = ()
        header_line = None
        for number, line in enumerate(self.lines, start=1):
            header = _HEADER.match(line)
            if header:
                current = tuple(part.strip("\"'") for part in _HEADER_PART.findall(header.group(1)))
                if current == (*table, key):
                    return number, line.index("[") + 1
                if current == table:
                    header_line = number
                continue
            assignment = _ASSIGNMENT.match(line)
            if current == table and assignment and assignment.group("key").strip("\"'") == key:
                return number, assignment.start("key") + 1
        return (header_line, 1) if header_line else None


_HEADER = re.compile(r"^\s*\[(?!\[)\s*([^\]]+?)\s*\]\s*(?:#.*)?$")
_HEADER_PART = re.compile(r"\"[^\"]*\"|'[^']*'|[^.\s\"']+")  # a dotted header's keys; quoted ones keep their dots
_ASSIGNMENT = re.compile(r"^\s*(?P<key>\"[^\"]*\"|'[^']*'|[A-Za-z0-9_.*/-]+)\s*=")


def _strings(value: object, key: str) -> list[str]:
    if isinstance(value, str):
        return [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"'{key}' must be a list of strings")
    return list(value)


def _codes(value: object, key: str) -> list[str]:
    return [c.strip() for c in _strings(value, key) if c.strip()]


def _severity(value: object, key: str) -> Severity:
    try:
        return Severity(str(value).lower())
    except ValueError:
        raise ValueError(f"'{key}' must be one of error, warning, info (got {value!r})") from None
