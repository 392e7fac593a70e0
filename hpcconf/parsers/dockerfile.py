"""Dockerfile instructions with their line numbers (continuations joined, comments dropped, heredocs read).

Kept instead of dockerfile-parse: measured on 2.0.1, it reads the body of a BuildKit heredoc (``RUN <<EOT``,
Docker's default builder since 23.0) as instructions of its own (``APT-GET``, ``EOT``), and it has no column;
the rules need both (tests/test_parse_dockerfile_heredoc.py).
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field

from .shell_words import split_words

_INSTRUCTION = re.compile(r"^\s*([A-Za-z]+)(?:\s+(.*))?$", re.S)
# BuildKit heredocs (dockerfile frontend 1.4+): RUN/COPY/ADD <<[-]WORD, quoted or not, several on one line.
_HEREDOC = re.compile(r"<<(-?)([\"']?)([A-Za-z_][A-Za-z0-9_]*)\2")
HEREDOC_KEYWORDS = ("RUN", "COPY", "ADD")
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::?[-+][^}]*)?\}|\$([A-Za-z_][A-Za-z0-9_]*)")


@dataclass(frozen=True)
class Instruction:
    keyword: str  # upper case: FROM, RUN, COPY, ...
    arguments: str  # continuation lines joined with a space, comments inside removed
    line: int  # 1-based first line
    end_line: int
    column: int  # 1-based column of the keyword
    # The physical lines joined into it, (1-based number, text without the escape character): a continuation
    # skips comment lines and empty lines as BuildKit's parser does (moby/buildkit frontend/dockerfile/parser/
    # parser.go: isComment, isEmptyContinuationLine), so the next instruction after a stray ``\`` is taken in.
    parts: tuple[tuple[int, str], ...] = ()
    empty_continuation: bool = False  # an empty line was skipped inside the continuation (BuildKit warns)


@dataclass
class DockerfileModel:
    instructions: list[Instruction] = field(default_factory=list)

    def of(self, *keywords: str) -> list[Instruction]:
        return [i for i in self.instructions if i.keyword in keywords]

    def arg_defaults(self) -> dict[str, str]:
        """Defaults of ARGs declared before the first FROM (the ones FROM may use)."""
        defaults: dict[str, str] = {}
        for instruction in self.instructions:
            if instruction.keyword == "FROM":
                break
            if instruction.keyword == "ARG" and "=" in instruction.arguments:
                name, _, value = instruction.arguments.partition("=")
                defaults[name.strip()] = value.strip().strip('"').strip("'")
        return defaults

    def env(self) -> dict[str, tuple[str, Instruction]]:
        """ENV settings (last one wins), with the instruction that sets each."""
        settings: dict[str, tuple[str, Instruction]] = {}
        for instruction in self.of("ENV"):
            for name, value in parse_env_arguments(instruction.arguments):
                settings[name] = (value, instruction)
        return settings


def expand(text: str, variables: dict[str, str]) -> str:
    return _VARIABLE.sub(lambda m: variables.get(m.group(1) or m.group(2), m.group(0)), text)


def parse_env_arguments(arguments: str) -> list[tuple[str, str]]:
    """``ENV A=1 B="two"`` or the legacy ``ENV A 1``."""
    try:
        words = split_words(arguments)
    except ValueError:
        words = arguments.split()
    if words and "=" not in words[0]:
        return [(words[0], " ".join(words[1:]))]
    pairs = [w.split("=", 1) for w in words if "=" in w]
    return [(name, value) for name, value in pairs]


def parse_dockerfile(text: str) -> DockerfileModel:
    model = DockerfileModel()
    lines = text.splitlines()
    escape = "\\"
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            directive = re.match(r"^#\s*escape\s*=\s*(\S)", stripped)
            if directive and not model.instructions:
                escape = directive.group(1)
            i += 1
            continue
        start = i
        parts: list[tuple[int, str]] = []
        empty = False
        while True:
            current = lines[i]
            if i != start and (current.strip().startswith("#") or not current.strip()):
                # comment lines and empty lines inside a continuation are dropped (BuildKit continues past both)
                empty = empty or not current.strip()
                if i + 1 >= len(lines):
                    break
                i += 1
                continue
            if current.rstrip().endswith(escape) and i + 1 < len(lines):
                parts.append((i + 1, current.rstrip()[:-1]))
                i += 1
                continue
            parts.append((i + 1, current))
            break
        joined = " ".join(p.strip() for _, p in parts)
        match = _INSTRUCTION.match(joined)
        if match:
            column = len(line) - len(line.lstrip()) + 1
            keyword, arguments = match.group(1).upper(), (match.group(2) or "").strip()
            if keyword in HEREDOC_KEYWORDS:
                bodies, i = _heredocs(lines, i, arguments)
                arguments = "\n".join([arguments, *bodies]) if bodies else arguments
            model.instructions.append(Instruction(keyword, arguments, start + 1, i + 1, column, tuple(parts),
                                                  empty))
        i += 1
    return model


def _heredocs(lines: list[str], last: int, arguments: str) -> tuple[list[str], int]:
    """The bodies of the heredocs ``arguments`` opens, in order, and the index of the last line they take:
    each runs to a line that is its delimiter (after leading tabs for ``<<-``)."""
    bodies: list[str] = []
    for strip_tabs, _quote, word in _HEREDOC.findall(arguments):
        body: list[str] = []
        while last + 1 < len(lines):
            last += 1
            current = lines[last].lstrip("\t") if strip_tabs else lines[last]
            if current.rstrip("\r") == word:
                break
            body.append(current)
        bodies.append("\n".join(body))
    return bodies, last


def workdir_copies(model: DockerfileModel) -> list[tuple[Instruction, str]]:
    """Each COPY/ADD with the WORKDIR in effect ("" when the base image decides)."""
    current = ""
    out = []
    for instruction in model.instructions:
        if instruction.keyword == "FROM":
            current = ""
        elif instruction.keyword == "WORKDIR":
            target = instruction.arguments.strip().strip('"')
            current = target if target.startswith("/") else posixpath.join(current or "/", target)
        elif instruction.keyword in ("COPY", "ADD"):
            out.append((instruction, current))
    return out


def copied_files(instruction: Instruction, workdir: str) -> list[tuple[str, str | None]]:
    """(source, absolute destination or None when it depends on the base image's WORKDIR)."""
    try:
        words = [w for w in split_words(instruction.arguments) if not w.startswith("--")]
    except ValueError:
        return []
    if len(words) < 2:
        return []
    *sources, dest = words
    out = []
    for source in sources:
        base = posixpath.basename(source.rstrip("/"))
        target: str | None
        if dest.startswith("/"):
            target = posixpath.join(dest, base) if dest.endswith("/") or len(sources) > 1 else dest
        elif workdir:
            target = posixpath.normpath(posixpath.join(workdir, dest, base) if dest.endswith(("/", ".")) or
                                        len(sources) > 1 else posixpath.join(workdir, dest))
        else:
            target = None
        out.append((source, target))
    return out
