"""Which files a lint run reads: one selection for every entry point.

``hpcconf lint PATHS`` (directories walked, files named), the pre-commit hook (which names every
text file of a commit) and ``hpcconf build`` (which lints what it compiles) select the same way, so
a file gives the same findings whichever way it arrives:

- a directory is listed the way git sees it (tracked, and untracked but not ignored: what a commit
  can hold), or walked when it is not in a git work tree;
- skipped, walked or named alike: files excluded by the settings' ``exclude``; hidden files and
  directories (``.git``, a gitignored ``.env``; ``.nccl.conf`` and Dockerfiles below ``.github/`` are read); documentation
  (Markdown, reStructuredText, text) and templates by name (Jinja ``.j2``, ``.tpl``, ``.gotmpl``...);
  a Helm chart's ``templates/`` directory (YAML only once helm renders it);
- then by content (:func:`hpcconf.lint.detect.not_linted_reason`): a ``#!`` line naming another
  language, Go-template markup, chart metadata (``Chart.yaml``, ``Chart.lock``), values of a chart
  hpcconf has no rules for.

Every skipped file is recorded with its reason (``hpcconf lint --verbose`` prints them). A named file
is reported as unrecognised (HPC091) only when the run checked nothing at all: a pre-commit batch that
holds a linted file never gets warnings for the others, exactly as ``hpcconf lint .`` does not.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

from ..git_files import git_files
from ..safe_io import link_problem
from .detect import is_dockerfile_name

# Documentation (it quotes configs and suppressions as prose) and templates (not the file until rendered).
NOT_LINTED_SUFFIXES = (".md", ".markdown", ".rst", ".adoc", ".txt", ".j2", ".jinja", ".jinja2", ".tpl", ".tmpl",
                       ".gotmpl", ".tftpl", ".mustache", ".hbs", ".erb")
# Not ".tpl.": az-hop ships its configuration as config.tpl.yml, plain YAML that users copy; a YAML file
# with template markup is passed over by its content (hpcconf.lint.detect.not_linted_reason).
_TEMPLATE_INFIXES = (".j2.", ".tmpl.", ".jinja.", ".jinja2.")
HIDDEN_BUT_LINTED = (".nccl.conf",)
EXCLUDED = "excluded by the settings' exclude"


@dataclass(frozen=True)
class Candidate:
    path: Path  # where to read it
    display: str  # how findings name it (as given, or as found below the given directory)
    explicit: bool  # named on the command line (or by pre-commit), not found in a walk
    top: Path  # where deployment scoping stops looking upwards (the walked directory, or the working directory)


# CycleCloud Slurm cluster templates are .txt files (cyclecloud-slurm's templates/slurm.txt): their content decides.
_CYCLECLOUD_SLURM_TEMPLATE = re.compile(r"^slurm[\w.-]*\.txt$")


def name_skip_reason(name: str) -> str | None:
    """Why a file with this name is never linted; None when its content decides."""
    lower = name.lower()
    if name.startswith(".") and lower not in HIDDEN_BUT_LINTED:
        return "a hidden file"
    if lower.endswith((".md", ".markdown", ".rst", ".adoc", ".txt")) and not _CYCLECLOUD_SLURM_TEMPLATE.match(lower):
        return "documentation"
    if (lower.endswith(NOT_LINTED_SUFFIXES) and not _CYCLECLOUD_SLURM_TEMPLATE.match(lower)) or any(infix in lower for infix in _TEMPLATE_INFIXES):
        return "a template (Jinja, Go or another engine): not the file until it is rendered"
    return None


def _chart_templates_dir(directory: Path) -> bool:
    return directory.name == "templates" and (directory.parent / "Chart.yaml").is_file()


def path_skip_reason(file: Path, top: Path) -> str | None:
    """Why ``file`` is never linted, judged by its path below ``top`` (the same for walked and named files)."""
    reason = name_skip_reason(file.name)
    if reason:
        return reason
    try:
        parts = file.resolve().parent.relative_to(top.resolve()).parts
    except (ValueError, OSError):
        parts = ()  # outside the working directory: only its own name and directory count
    hidden = [part for part in parts if part.startswith(".")]
    # CI builds images from Dockerfiles kept in .github/ (AMD Primus' .github/workflows/docker/Dockerfile.ainic
    # builds RCCL and the AINIC plugin): an image its users run, linted like any other Dockerfile
    if hidden and not (set(hidden) == {".github"} and is_dockerfile_name(file.name)):
        return "inside a hidden directory"
    for depth, directory in enumerate(file.parents):
        if depth > len(parts):
            break  # above the walked directory (or the working directory): not ours to judge
        if _chart_templates_dir(directory):
            return "a Helm chart's template (templates/ beside Chart.yaml): YAML only once helm renders it"
    return None


def _listed(directory: Path, unlisted: list[tuple[str, OSError]] | None = None) -> list[Path]:
    """What is below ``directory``. Links and special files stay in the list: the safe reader refuses them
    with a finding (HPC092/HPC093) instead of a silent pass; a linked directory whose target leaves the tree
    is listed too, and one that cannot be listed goes to ``unlisted``."""
    listed = git_files(directory)
    if listed is not None:  # a deleted but tracked file is not there to read; a tracked link is, unless it
        # leads to a directory inside the tree (whose files git lists themselves), as a plain walk skips it
        return [p for p in listed if (os.path.islink(p) and (link_problem(p, directory) or not p.is_dir()))
                or (not os.path.islink(p) and os.path.exists(p) and not p.is_dir())]
    found: list[Path] = []

    def failed(error: OSError) -> None:
        if unlisted is not None:
            unlisted.append((str(error.filename) if error.filename else str(directory), error))

    for root, dirs, files in os.walk(directory, onerror=failed):
        linked = [d for d in dirs if os.path.islink(os.path.join(root, d))]
        found.extend(Path(root) / d for d in sorted(linked) if link_problem(Path(root) / d, directory))
        # never descend into .git or another hidden directory; .github is listed as git lists it
        dirs[:] = sorted(d for d in dirs if (not d.startswith(".") or d == ".github") and d not in linked)
        found.extend(Path(root) / f for f in sorted(files))
    return found


def _working_directory_or_parent(file: Path) -> Path:
    cwd = Path.cwd()
    try:
        file.resolve().relative_to(cwd.resolve())
        return cwd
    except (ValueError, OSError):
        return file.parent


def candidates(paths: list[str], excluded: Callable[[str], bool], skipped: list[tuple[str, str]],
               missing: Callable[[str], Exception],
               unlisted: list[tuple[str, OSError]] | None = None, kind_forced: bool = False) -> Iterator[Candidate]:
    """The files to read, in order; every file passed over is appended to ``skipped`` with its reason, every
    directory that could not be listed to ``unlisted``. A file named with ``--kind`` (``kind_forced``) is read as
    that kind wherever it lies and whatever its name; only the settings' ``exclude`` still passes it over.

    ``missing(given)`` is the error raised for a path that does not exist."""
    for given in paths:
        path = Path(given)
        if path.is_dir() and link_problem(path) is not None:  # a directory argument that leaves the tree: refused
            listed = [(path, given, True, _working_directory_or_parent(path))]
        elif path.is_dir():
            listed = [(file, str(file), False, path) for file in _listed(path, unlisted)]
        elif path.exists() or path.is_symlink():
            listed = [(path, given, True, _working_directory_or_parent(path))]
        else:
            raise missing(given)
        for file, display, explicit, top in listed:
            if excluded(display):
                skipped.append((display, EXCLUDED))
                continue
            reason = None if (explicit and kind_forced) else path_skip_reason(file, top)
            if reason:
                skipped.append((display, reason))
                continue
            yield Candidate(file, display, explicit, top)
