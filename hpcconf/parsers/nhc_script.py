"""The check functions an NHC script (``*.nhc``) defines, and the positional arguments each reads.

NHC sources every ``scripts/*.nhc`` before it runs the conf (LBNL NHC ``nhc`` ``nhc_load_scripts``), so a
deployment's own custom tests define checks, or redefine Azure's under the same name with another
signature (a later definition replaces an earlier one). A function's arguments are read from its body:
the highest ``$N`` / ``${N}`` / ``${N:-default}`` is the most it reads (``$@``, ``$*``, ``$#``, ``shift``
or ``getopts``: any number). How many it *needs* is not syntax (``GPU_TYPE="$2"`` is optional, tested
with ``-z`` later), so only an argument with a default is known to be optional; ``min_args`` counts the
positions read without one, an upper bound on what the function needs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

_DEFINITION = re.compile(r"^[ \t]*(?:function[ \t]+([A-Za-z_][\w-]*)[ \t]*(?:\([ \t]*\))?|([A-Za-z_][\w-]*)[ \t]*\([ \t]*\))"
                         r"[ \t]*(?:\{|$)", re.M)
_PLAIN = re.compile(r"\$(\d)|\$\{(\d+)\}")
_DEFAULTED = re.compile(r"\$\{(\d+):?[-=+?]")
_SINGLE_QUOTED = re.compile(r"'[^']*'")
_ANY_NUMBER = re.compile(r"\$[@*]|\$\{[@*]|\$#|\bshift\b|\bgetopts\b")


@dataclass(frozen=True)
class DefinedCheck:
    name: str
    line: int  # 1-based line of the definition
    min_args: int
    max_args: Optional[int]  # None: any number


def defined_functions(text: str) -> dict[str, DefinedCheck]:
    """Every function the script defines, by name; the last definition of a name wins, as in bash."""
    matches = list(_DEFINITION.finditer(text))
    found: dict[str, DefinedCheck] = {}
    for index, match in enumerate(matches):
        end = matches[index + 1].start() if index + 1 < len(matches) else len(text)
        body = _code(text[match.end():end])
        name = match.group(1) or match.group(2)
        plain = [int(m.group(1) or m.group(2)) for m in _PLAIN.finditer(body)]
        defaulted = [int(m.group(1)) for m in _DEFAULTED.finditer(body)]
        highest = max(plain + defaulted, default=0)
        found[name] = DefinedCheck(name=name, line=text.count("\n", 0, match.start()) + 1,
                                   min_args=max(plain, default=0),
                                   max_args=None if _ANY_NUMBER.search(body) else highest)
    return found


def _code(body: str) -> str:
    """The body without comment lines and single-quoted text: a ``# usage: $1`` comment or an awk program's
    ``'{print $2}'`` reads no argument of the function."""
    lines = "\n".join(line for line in body.splitlines() if not line.lstrip().startswith("#"))
    return _SINGLE_QUOTED.sub("''", lines)
