"""Which spec files a `build` acts on, and where their output goes.

Command-line SPEC arguments may be files, quoted globs (``'specs/*.yaml'``, expanded here
because pre-commit entries and CI steps pass them unexpanded) or directories. A directory
means every hpcconf spec below it: the ``*.yaml``/``*.yml`` files git tracks (or would
track: untracked but not ignored) whose ``apiVersion`` starts with ``hpcconf/``, minus the
config's ``exclude`` globs and the output root. Outside a git work tree the directory is
walked instead (hidden directories skipped).

The output root of a spec comes from ``--out``; else the ``out`` key of the settings file
(``[tool.hpcconf]`` / ``.hpcconf.toml``, relative to that file) that ``--config`` names or that is
nearest the spec (at or above its directory, the way git finds a repository); else ``out/`` next to the
spec. So ``hpcconf build path/to/spec.yaml`` writes to the same place from any working directory.
:func:`default_output_root` is the rule; ``hpcconf review`` applies it to committed trees.
"""

from __future__ import annotations

import glob
import os
import re
from pathlib import Path
from typing import Sequence

from .settings.config import LintConfig, Settings

DEFAULT_OUT = Path("out")
SPEC_SUFFIXES = (".yaml", ".yml")
# A spec names its format on a top-level line; any hpcconf/* version counts so that an
# unsupported one is reported (HPC007) rather than silently skipped.
_API_VERSION_LINE = re.compile(r"^apiVersion:\s*['\"]?hpcconf/", re.M)
_GLOB_MAGIC = re.compile(r"[*?[]")


def default_output_root(spec_dir: Path, settings_out: Path | None) -> Path:
    """The settings' ``out`` when set (already relative to its settings file), else ``out/`` beside the spec."""
    return settings_out if settings_out is not None else spec_dir / DEFAULT_OUT


def output_root(cli_out: Path | None, config: Settings) -> Path:
    """The output root of the directory arguments' discovery: ``--out``, else the settings' ``out``, else ./out."""
    if cli_out is not None:
        return cli_out
    return _shown(default_output_root(Path.cwd(), config.out))


def spec_output_root(spec: Path, cli_out: Path | None, config_file: Path | None = None) -> Path:
    """Where ``spec``'s ``<metadata.name>/`` goes (module docstring); raises ConfigError for a bad settings file."""
    from .settings.config import load_settings

    if cli_out is not None:
        return cli_out
    settings = load_settings(start=spec.resolve().parent, config_file=config_file)
    return _shown(default_output_root(spec.resolve().parent, settings.out))


def _shown(path: Path) -> Path:
    """Relative to the working directory when below it or nearby (what messages print), else absolute."""
    relative = Path(os.path.relpath(path.resolve(), Path.cwd()))
    return relative if not relative.as_posix().startswith("../../..") else path.resolve()


def is_spec_file(path: Path) -> bool:
    """A *.yaml file that says ``apiVersion: hpcconf/...``; also one the safe reader refuses unread (a fifo, a
    device, a link out of the tree, an oversized file), so that the loader reports it instead of a silent skip."""
    from .safe_io import UnsafeFile, read_bytes

    if path.suffix.lower() not in SPEC_SUFFIXES:
        return False
    try:
        head = read_bytes(path, "spec")[:65536].decode("utf-8", errors="replace")
    except UnsafeFile as refused:
        return refused.code != "HPC000"
    return bool(_API_VERSION_LINE.search(head))


def _git_files(directory: Path) -> list[Path] | None:
    """The files git lists below ``directory`` (hpcconf.lint.walker lists a linted directory the same way)."""
    from .git_files import git_files

    return git_files(directory)


def _walked_files(directory: Path) -> list[Path]:
    found: list[Path] = []
    for root, dirs, files in os.walk(directory):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        found.extend(Path(root) / f for f in sorted(files))
    return found


def _inside(path: Path, root: Path) -> bool:
    try:
        path.resolve().relative_to(root.resolve())
        return True
    except ValueError:
        return False


NO_SPEC_FOUND = "no hpcconf spec found (files with 'apiVersion: hpcconf/v1')"


def discover_specs(directory: Path, out_root: Path, lint: LintConfig | None = None) -> list[Path]:
    """Every hpcconf spec below ``directory`` (see the module docstring)."""
    files = _git_files(directory)
    if files is None:
        files = _walked_files(directory)
    specs = []
    for path in files:
        shown = Path(os.path.normpath(path))
        if not os.path.lexists(path) or path.is_dir() or _inside(path, out_root):
            continue
        if lint is not None and lint.excluded(shown.as_posix()):
            continue
        if is_spec_file(path):
            specs.append(shown)
    return specs


def expand_spec_args(args: Sequence[Path | str], out_root: Path, config: Settings) -> tuple[list[Path], list[str]]:
    """Files, globs and directories -> spec paths (deduplicated, in order); plus one message per argument that matched nothing."""
    specs: list[Path] = []
    problems: list[str] = []
    for arg in args:
        text = str(arg)
        path = Path(text)
        if path.is_dir():
            found = discover_specs(path, out_root, config.lint)
            if not found:
                problems.append(f"{text}: {NO_SPEC_FOUND}")
            specs.extend(found)
        elif not path.exists() and _GLOB_MAGIC.search(text):
            found = [Path(p) for p in sorted(glob.glob(text, recursive=True)) if not Path(p).is_dir()]
            if not found:
                problems.append(f"{text}: no file matches this pattern")
            specs.extend(found)
        else:
            specs.append(path)  # a missing file is reported by the loader, with its own message
    unique: dict[Path, Path] = {}
    for spec in specs:
        unique.setdefault(spec.resolve(), spec)
    return list(unique.values()), problems
