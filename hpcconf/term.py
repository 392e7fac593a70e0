"""Colour and progress on a terminal, with rich; plain bytes everywhere else.

Colour follows the conventions users set once for every tool: ``--color always|never`` wins, then
``NO_COLOR`` (https://no-color.org: any non-empty value turns colour off), then ``FORCE_COLOR``
(https://force-color.org: any non-empty value turns it on), else colour only when the stream is a
terminal and ``TERM`` is not ``dumb``. Coloured output is the plain report with styles added: the
same characters, so a log keeps its meaning with or without colour.

Progress (a spinner with the elapsed time, on stderr) appears only when stderr is a terminal and
the work is still running after :data:`PROGRESS_DELAY` seconds: a quick lint prints nothing extra,
a pipe or a CI log never gets control sequences. rich is imported only when one of them is shown.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from contextlib import contextmanager
from typing import IO, Any, Iterator

COLOR_CHOICES = ("auto", "always", "never")
PROGRESS_DELAY = 0.5  # seconds; below this a spinner would only flicker
# Styles of the text report's parts (hpcconf.diagnostic_text.render_text); regexes over the plain text.
_STYLES = (
    (r"(?m)^\S[^\n]*?:\d+(:\d+)?(?=: (error|warning|info)\[)", "bold"),
    (r"\berror\[[A-Z]+\d+\]", "bold red"),
    (r"\bwarning\[[A-Z]+\d+\]", "bold yellow"),
    (r"\binfo\[[A-Z]+\d+\]", "bold cyan"),
    (r"(?m)(?<=[ |])\^+$", "bold red"),
    (r"(?m)^\s+= hint:", "green"),
    (r"(?m)(?<=: )[1-9]\d* errors?\b", "bold red"),
    (r"(?m)(?<=, )[1-9]\d* warnings?\b", "bold yellow"),
)


def _env_set(name: str) -> bool:
    return bool(os.environ.get(name, ""))


def colour_enabled(stream: IO[str], choice: str = "auto") -> bool:
    if choice == "always":
        return True
    if choice == "never" or _env_set("NO_COLOR"):
        return False
    if _env_set("FORCE_COLOR"):
        return True
    return _is_terminal(stream)


def _is_terminal(stream: IO[str]) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and os.environ.get("TERM") != "dumb"


def echo(message: str = "", err: bool = False, nl: bool = True) -> None:
    """One message on stdout (stderr with ``err``), flushed: what ``typer.echo`` does for a plain string, without
    importing typer, so a lint need not load the command-line framework to print."""
    stream = sys.stderr if err else sys.stdout
    stream.write(message + ("\n" if nl else ""))
    stream.flush()


def echo_report(report: str, stream: IO[str] | None = None, choice: str = "auto") -> None:
    """Write a text report, coloured when :func:`colour_enabled` says so."""
    stream = stream or sys.stdout
    if not colour_enabled(stream, choice):
        stream.write(report)
        stream.flush()
        return
    from rich.console import Console
    from rich.text import Text

    text = Text(report)
    for pattern, style in _STYLES:
        text.highlight_regex(pattern, style)
    # soft_wrap: rich must not re-wrap lines (a long message stays one line); no markup, emoji or highlighting of
    # its own: the report's characters are printed as they are.
    console = Console(file=stream, force_terminal=True, no_color=False, soft_wrap=True, highlight=False,
                      emoji=False, markup=False, color_system="standard")
    console.print(text, end="")
    stream.flush()


@contextmanager
def working(message: str, stream: IO[str] | None = None) -> Iterator[None]:
    """A transient spinner naming ``message`` while the block runs longer than :data:`PROGRESS_DELAY`."""
    stream = stream or sys.stderr
    if not _is_terminal(stream):
        yield
        return
    shown: list[Any] = []
    lock = threading.Lock()
    started = time.monotonic()

    def start() -> None:
        from rich.console import Console
        from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

        with lock:
            if stopped.is_set():
                return
            console = Console(file=stream, no_color=not colour_enabled(stream))
            # stdout is not redirected: the report may go to a pipe while the spinner is on the terminal.
            progress = Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(), console=console,
                                transient=True, redirect_stdout=False, redirect_stderr=True, get_time=time.monotonic)
            task = progress.add_task(message, total=None)
            progress.tasks[task].start_time = started  # the elapsed time of the work, not of the spinner
            progress.start()
            shown.append(progress)

    stopped = threading.Event()
    timer = threading.Timer(PROGRESS_DELAY, start)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        with lock:
            stopped.set()
            timer.cancel()
            for progress in shown:
                progress.stop()


def echo_findings(report: str) -> None:
    """Findings a command prints when it refuses (build, init, a spec that does not load): on stderr,
    coloured as lint's report is when stderr is a terminal (NO_COLOR / FORCE_COLOR honoured)."""
    echo_report(report if report.endswith("\n") else report + "\n", sys.stderr)
