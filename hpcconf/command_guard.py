"""The last line of defence around a command: bad input, a closed pipe or a bug ends in one line and an exit code
(README "Exit codes"), never a traceback. Typer-free, so the console script's plain ``lint`` path shares it."""

from __future__ import annotations

import os
import sys
from typing import Callable

from .diagnostic_text import render_all
from .diagnostics import HpcconfError
from .exit_codes import EXIT_BROKEN_PIPE, EXIT_INTERNAL, EXIT_INVALID
from .term import echo


def run_guarded(command: Callable[[], object]) -> None:
    try:
        command()
    except HpcconfError as exc:  # never a traceback for bad input
        from .term import echo_findings

        echo_findings(render_all(exc.diagnostics))
        sys.exit(EXIT_INVALID)
    except BrokenPipeError:  # `hpcconf rules | head`: the reader left; end quietly as shell tools do
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        sys.exit(EXIT_BROKEN_PIPE)
    except (OSError, UnicodeError) as exc:  # the file system said no: the user's to fix, not a bug
        filename = getattr(exc, "filename", None)  # OSError has one, UnicodeError does not
        where = f" {filename}" if filename else ""
        reason = getattr(exc, "strerror", None) or str(exc)
        echo(f"hpcconf: error: cannot use{where}: {reason}. Check the path, its permissions and that it is "
             "a UTF-8 text file (or a writable directory for --out).", err=True)
        sys.exit(EXIT_INVALID)
    except RecursionError:
        echo("hpcconf: error: the input is nested too deeply to process; it is not a cluster spec or config "
             "hpcconf can read.", err=True)
        sys.exit(EXIT_INVALID)
    except Exception as exc:  # noqa: BLE001 - a bug must still not greet the user with a traceback
        if os.environ.get("HPCCONF_DEBUG"):
            raise
        echo(f"hpcconf: internal error: {type(exc).__name__}: {exc}. This is a bug in hpcconf; "
             "please report it with the command and input (HPCCONF_DEBUG=1 shows the traceback).", err=True)
        sys.exit(EXIT_INTERNAL)
