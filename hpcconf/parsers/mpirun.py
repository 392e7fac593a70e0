"""``mpirun`` command lines (Open MPI's launcher and its aliases) as the options they set.

Only what the rules compare is read: process counts (``-np``, ``-npernode``, ``--map-by
ppr:N:node``), the hostfile and ``-x NAME=VALUE`` exports. Words are split with POSIX shell
quoting (``shell_words``), continuation lines joined first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional

from hpcconf.parsers.shell_words import split_words

# The launcher by name or by path (/opt/openmpi/bin/mpirun, $MPI_HOME/bin/mpirun, "${OMPI}/bin/mpiexec").
MPIRUN = re.compile(r"(?:^|[\s;&|(`])[\"']?((?:[^\s;&|()`'\"]*/)?(?:mpirun|mpiexec|orterun|prterun))[\"']?(?=\s|$)")
_NP = ("-np", "--np", "-n", "-c")
_NPERNODE = ("-npernode", "--npernode", "-N", "--N")
_HOSTFILE = ("-hostfile", "--hostfile", "-machinefile", "--machinefile", "--default-hostfile")
# Open MPI options that take one / two values (others are flags); the first other word is the program.
_ONE_VALUE = {"--bind-to", "-bind-to", "--rank-by", "-rank-by", "-H", "--host", "-host", "-wdir", "--wdir",
              "-wd", "--prefix", "-output-filename", "--output-filename", "--display", "-tune", "--tune",
              "-am", "--am", "-gmca-file", "--app", "-app", "--report-bindings-file", "--timeout", "-timeout",
              "--personality", "--runtime-options", "--pmixmca", "--prtemca", "-s", "--preload-files"}
_TWO_VALUES = {"-mca", "--mca", "-gmca", "--gmca", "--pmixmca", "--prtemca"}


@dataclass
class Mpirun:
    text: str  # the invocation, continuation lines joined
    np: Optional[str] = None
    npernode: Optional[str] = None
    ppr: Optional[str] = None  # N of --map-by ppr:N:node
    hostfile: Optional[str] = None
    exports: dict[str, str] = field(default_factory=dict)
    tokens: dict[str, str] = field(default_factory=dict)  # option -> the text to point at


def find_mpirun(script: str) -> Optional[Mpirun]:
    """The first ``mpirun`` (``mpiexec``, ``orterun``, ``prterun``) invocation in ``script``."""
    joined = re.sub(r"\\\r?\n", " ", script)
    for line in joined.splitlines():
        match = MPIRUN.search(line)
        if match:
            return _parse_mpirun(line[match.start(1):])
    return None


def _parse_mpirun(text: str) -> Mpirun:
    try:
        words = split_words(text)
    except ValueError:
        words = text.split()
    call = Mpirun(text=text)
    i = 1
    while i < len(words):
        word = words[i]
        if word in ("|", "||", "&&", ";", ">", ">>"):
            break
        value = words[i + 1] if i + 1 < len(words) else None
        option, _, inline = word.partition("=") if word.startswith("--") else (word, "", "")
        if inline:
            value, step = inline, 1
        else:
            step = 2
        if option in _NP and value is not None:
            call.np, call.tokens["np"] = value, f"{word} {value}" if not inline else word
        elif option in _NPERNODE and value is not None:
            call.npernode, call.tokens["npernode"] = value, f"{word} {value}" if not inline else word
        elif option in ("--map-by", "-map-by") and value is not None:
            ppr = re.match(r"^ppr:(\d+|\$\w+|\$\{\w+\}):node", value, re.I)
            if ppr:
                call.ppr, call.tokens["ppr"] = ppr.group(1), value
        elif option in _HOSTFILE and value is not None:
            call.hostfile, call.tokens["hostfile"] = value, value
        elif option == "-x" and value is not None:
            name, _, setting = value.partition("=")
            call.exports[name] = setting
        elif option in _TWO_VALUES:
            step = 3
        elif option in _ONE_VALUE and not inline:
            step = 2
        elif not word.startswith("-"):
            break  # the program: its own options (e.g. nccl-tests' -c) are not mpirun's
        else:
            step = 1
        i += step
    return call
