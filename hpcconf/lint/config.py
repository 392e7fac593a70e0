"""Lint configuration from ``.hpcconf.toml`` or ``[tool.hpcconf]`` in ``pyproject.toml``.

Keys (all optional; the same in both files, top level of ``.hpcconf.toml``)::

    select = ["NCCL", "DKR001"]          # codes, code prefixes or rule names; default: all
    ignore = ["DKR002"]
    exclude = ["vendor/**", "*.bak"]     # globs, matched against paths as given and their names
    fail-level = "warning"               # error (default) | warning | info
    no-inline-ignores = false
    [per-file-ignores]                   # glob -> codes
    "legacy/*.conf" = ["NCCL003"]
    [severity]                           # code -> error | warning | info
    NCCL010 = "error"

The file is found by searching upward from the current directory (``.hpcconf.toml``
first, then a ``pyproject.toml`` that has ``[tool.hpcconf]``); ``--config FILE`` names
one explicitly. Command-line ``--select``/``--ignore`` replace the file's lists.
"""

from __future__ import annotations

import fnmatch
import sys
from dataclasses import dataclass, field
from pathlib import Path

from ..diagnostics import Severity
from .document import DisplayPath

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

KNOWN_KEYS = {"select", "ignore", "exclude", "fail-level", "no-inline-ignores", "per-file-ignores", "severity"}


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
    """The nearest ``.hpcconf.toml``, or ``pyproject.toml`` with ``[tool.hpcconf]``, at or above ``start``."""
    for directory in [start, *start.parents]:
        dedicated = directory / ".hpcconf.toml"
        if dedicated.is_file():
            return dedicated
        pyproject = directory / "pyproject.toml"
        if pyproject.is_file():
            try:
                data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
            except (OSError, tomllib.TOMLDecodeError):
                continue
            if "hpcconf" in data.get("tool", {}):
                return pyproject
    return None


def load_config(path: Path) -> LintConfig:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"cannot read config {path}: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    if path.name == "pyproject.toml":
        data = data.get("tool", {}).get("hpcconf", {})
    return config_from_mapping(data, str(path))


def config_from_mapping(data: dict, source: str = "") -> LintConfig:
    # Other hpcconf settings may share [tool.hpcconf]; only the lint keys are read here.
    try:
        config = LintConfig(
            select=_codes(data.get("select", []), "select"),
            ignore=_codes(data.get("ignore", []), "ignore"),
            exclude=_strings(data.get("exclude", []), "exclude"),
            per_file_ignores={str(k): _codes(v, f"per-file-ignores.{k}")
                              for k, v in dict(data.get("per-file-ignores", {})).items()},
            severity={str(k).upper(): _severity(v, f"severity.{k}") for k, v in dict(data.get("severity", {})).items()},
            fail_level=_severity(data["fail-level"], "fail-level") if "fail-level" in data else None,
            no_inline_ignores=bool(data.get("no-inline-ignores", False)),
            source=source,
        )
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{source or 'config'}: {exc}") from None
    return config


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
