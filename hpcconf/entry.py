"""The ``hpcconf`` console script: ``hpcconf --version`` answers before the command line is built.

Building the typer app (typer, click, every command's options) is most of `hpcconf --version`'s time; the
version needs none of it. Every other command line goes to hpcconf.cli.main, which also answers
``--version`` the same way when called directly. Only here, in the command line's own process, is
detect-secrets' network stack deferred (hpcconf.offline_imports): a library user's process is left as it is.

``hpcconf lint [PATH...]`` with no option (what the pre-commit hook runs, on every commit) skips typer too: the
typer app's import and construction cost about as much as the lint of one small file. Any option, ``-`` or ``--``,
``-h`` included, and a shell-completion request go through the typer app as before.
"""

from __future__ import annotations

import os
import sys
from typing import Optional

VERSION_ARGS = (["--version"], ["-V"], ["version"])


def plain_lint_paths(argv: list[str]) -> Optional[list[str]]:
    """The paths of ``lint PATH...`` when no argument is an option; None for every other command line."""
    if not argv or argv[0] != "lint" or any(arg.startswith("-") for arg in argv[1:]):
        return None
    if any(name.startswith("_") and name.endswith("_COMPLETE") for name in os.environ):  # click's completion protocol
        return None
    return argv[1:]


def main() -> None:
    if sys.argv[1:] in VERSION_ARGS:
        from . import __version__

        sys.stdout.write(f"hpcconf {__version__}\n")
        return
    from .offline_imports import defer_network_stack

    defer_network_stack()  # before anything imports detect-secrets
    paths = plain_lint_paths(sys.argv[1:])
    if paths is not None:
        from .command_guard import run_guarded
        from .lint.command import run_plain_lint

        run_guarded(lambda: run_plain_lint(paths))
        return
    from .cli import main as cli_main

    cli_main()


if __name__ == "__main__":
    main()
