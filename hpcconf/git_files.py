"""The files git lists below a directory: how ``lint`` walks a directory and ``build`` discovers specs alike."""

from __future__ import annotations

import subprocess
from pathlib import Path


def git_files(directory: Path) -> list[Path] | None:
    """Tracked and untracked-but-not-ignored files below ``directory``; None outside a git work tree."""
    try:
        done = subprocess.run(["git", "-C", str(directory), "ls-files", "-z", "--cached", "--others",
                               "--exclude-standard", "--", "."], capture_output=True, check=False)
    except OSError:
        return None
    if done.returncode != 0:
        return None
    names = sorted({n for n in done.stdout.decode("utf-8", "replace").split("\0") if n})
    return [directory / n for n in names]
