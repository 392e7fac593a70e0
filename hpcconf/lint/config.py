"""hpcconf settings (lint and build) from ``.hpcconf.toml`` or ``[tool.hpcconf]`` in ``pyproject.toml``.

Keys (all optional; the same in both files, top level of ``.hpcconf.toml``)::

    select = ["NCCL", "DKR001"]          # codes, code prefixes or rule names; default: all
    ignore = ["DKR002"]
    exclude = ["vendor/**", "*.bak"]     # globs, matched against paths as given and their names
    out = "generated"                    # build's output root, relative to this file (default: ./out)
    fail-level = "warning"               # error (default) | warning | info
    no-inline-ignores = false
    [per-file-ignores]                   # glob -> codes
    "legacy/*.conf" = ["NCCL003"]
    [severity]                           # code -> error | warning | info
    NCCL010 = "error"

The file is found by searching upward from the current directory (``.hpcconf.toml``
first, then a ``pyproject.toml`` that has ``[tool.hpcconf]``); ``--config FILE`` names
one explicitly. Command-line ``--select``/``--ignore`` replace the file's lists.

:func:`load_settings` is the only reader: ``build`` and ``lint`` both call it once per run, so a key
means the same to both, and an unknown key (``ignroe``) or a bad value is an error for both (exit
code 2, ``file:line:col``, "did you mean").
"""

from __future__ import annotations

import difflib
import fnmatch
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

from ..diagnostics import Severity
from .document import DisplayPath

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

LINT_KEYS = frozenset({"select", "ignore", "exclude", "fail-level", "no-inline-ignores", "per-file-ignores", "severity"})
# `out` is build's output root; both commands read the same table, so both know every key.
SETTINGS_KEYS = LINT_KEYS | {"out"}


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

    def excluded(self, path: str) -> bool:
        return any(_glob_match(path, pattern) for pattern in self.exclude)

    def ignored_for_file(self, path: str) -> list[str]:
        return [code for pattern, codes in self.per_file_ignores.items() if _glob_match(path, pattern)
                for code in codes]


def _glob_match(path: str, pattern: str) -> bool:
    """Match a path as given, its file name, or any trailing part of it; ``dir/**`` = all below dir.
    A compiled artifact ("spec.yaml -> aks/job.yaml") matches through either side of the arrow."""
    where = DisplayPath.parse(path)
    for part in (where.spec, where.file) if where.compiled else (path,):
        posix = part.replace("\\", "/")
        name = posix.rsplit("/", 1)[-1]
        if pattern.endswith("/**"):
            base = pattern[:-3].strip("/")
            if posix.startswith(base + "/") or f"/{base}/" in f"/{posix}":
                return True
        if fnmatch.fnmatch(posix, pattern) or fnmatch.fnmatch(name, pattern) \
                or fnmatch.fnmatch(posix, "*/" + pattern):
            return True
    return False


def find_config(start: Path) -> Path | None:
    """The nearest ``.hpcconf.toml``, or ``pyproject.toml`` with ``[tool.hpcconf]``, at or above ``start``.

    A ``pyproject.toml`` that is not valid TOML counts when its text mentions ``[tool.hpcconf``:
    skipping it would run with default settings (and another output root) without a word.
    """
    for directory in [start, *start.parents]:
        dedicated = directory / ".hpcconf.toml"
        if dedicated.is_file():
            return dedicated
        pyproject = directory / "pyproject.toml"
        if pyproject.is_file():
            try:
                text = pyproject.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
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


def load_settings(start: Path | None = None, config_file: Path | None = None) -> Settings:
    """The one settings loader ``build`` and ``lint`` share.

    ``config_file`` (``--config``) names the file; otherwise the nearest one at or above ``start``
    (default: the current directory) is used, and none at all means the defaults. Raises
    :class:`ConfigError` (exit code 2) for an unreadable file, invalid TOML, an unknown key
    (with "did you mean") or a bad value; the message starts with ``file:line:col``.
    """
    if config_file is not None:
        if not config_file.is_file():
            raise ConfigError(f"config file not found: {config_file}")
        path: Path | None = config_file
    else:
        path = find_config((start or Path.cwd()).resolve())
    if path is None:
        return Settings()
    text, data = _read_table(path)
    where = _Locator(path, text, _TABLE_PATH if path.name == "pyproject.toml" else ())
    _reject_unknown_keys(data, where)
    return Settings(lint=_lint_config(data, where), out=_out_dir(data, where), source=path)


def load_config(path: Path) -> LintConfig:
    """The lint part of the settings file ``path``."""
    return load_settings(config_file=path).lint


def config_from_mapping(data: dict, source: str = "") -> LintConfig:
    """Lint settings from an already parsed mapping (no positions in messages)."""
    where = _Locator(Path(source or "config"), "", ())
    _reject_unknown_keys(data, where)
    return _lint_config(data, where)


_TABLE_PATH = ("tool", "hpcconf")
_PYPROJECT_TABLE = re.compile(r"^\s*\[\s*tool\s*\.\s*[\"']?hpcconf", re.M)
_TOML_POSITION = re.compile(r"\s*\(at line (\d+), column (\d+)\)\s*$")


def _read_table(path: Path) -> tuple[str, dict]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the hpcconf settings: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: cannot read the hpcconf settings: not UTF-8 text") from None
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


def _reject_unknown_keys(data: dict, where: "_Locator") -> None:
    for key in data:
        if key not in SETTINGS_KEYS:
            close = difflib.get_close_matches(str(key), sorted(SETTINGS_KEYS), n=1, cutoff=0.6)
            hint = f"did you mean '{close[0]}'?" if close else f"known keys: {', '.join(sorted(SETTINGS_KEYS))}"
            raise ConfigError(f"{where.at(key)}: unknown key '{key}' in {where.table_name()}; {hint}")


def _lint_config(data: dict, where: "_Locator") -> LintConfig:
    def checked(key: str, parse, *sub: str):
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
    )


def _out_dir(data: dict, where: "_Locator") -> Path | None:
    out = data.get("out")
    if out is None:
        return None
    if not (isinstance(out, str) and out.strip()):
        raise ConfigError(f"{where.at('out')}: 'out' must be a directory path (text), got {out!r}")
    return where.path.parent / out


def _table(value: object, key: str) -> dict:
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
        self.path, self.table = path, table
        self.lines = text.splitlines()

    def table_name(self) -> str:
        return f"[{'.'.join(self.table)}]" if self.table else self.path.name

    def at(self, key: str, *sub: str) -> str:
        found = self._find(self.table, key) if not sub else (
            self._find((*self.table, key), sub[0]) or self._find(self.table, key))
        return f"{self.path}:{found[0]}:{found[1]}" if found else str(self.path)

    def _find(self, table: tuple[str, ...], key: str) -> tuple[int, int] | None:
        current: tuple[str, ...] = ()
        header_line = None
        for number, line in enumerate(self.lines, start=1):
            header = _HEADER.match(line)
            if header:
                current = tuple(part.strip().strip("\"'") for part in header.group(1).split("."))
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
