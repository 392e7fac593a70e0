"""The ``hpcconf`` console script: ``hpcconf --version`` answers before the command line is built.

Building the typer app (typer, click, every command's options) is most of `hpcconf --version`'s time; the
version needs none of it. Every other command line goes to hpcconf.cli.main, which also answers
``--version`` the same way when called directly. Only here, in the command line's own process, is
detect-secrets' network stack deferred (hpcconf.offline_imports): a library user's process is left as it is.
"""

from __future__ import annotations

import sys

VERSION_ARGS = (["--version"], ["-V"], ["version"])


def main() -> None:
    if sys.argv[1:] in VERSION_ARGS:
        from . import __version__

        sys.stdout.write(f"hpcconf {__version__}\n")
        return
    from .offline_imports import defer_network_stack

    defer_network_stack()  # before anything imports detect-secrets
    from .cli import main as cli_main

    cli_main()


if __name__ == "__main__":
    main()
