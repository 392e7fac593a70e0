"""Environment settings (``NAME=VALUE``) found in any document kind, with positions.

NCCL/UCX/MPI variables reach a job through many files: nccl.conf, env files, ``export``
lines in batch scripts, ``env:`` lists and ``mpirun -x NAME=VALUE`` in Kubernetes
containers, ``ENV`` in Dockerfiles. :func:`env_settings` collects them uniformly so one rule
checks ``NCCL_ALGO`` wherever it is set. Families other than NCCL (MPI/UCX rules) use it too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterator

from ..artifacts import Kind
from .document import Document

SETTING_KINDS = (Kind.NCCL_CONF, Kind.ENV_FILE, Kind.SHELL_SCRIPT, Kind.SBATCH_SCRIPT, Kind.VOLCANO_JOB,
                 Kind.K8S_MANIFEST, Kind.DOCKERFILE)
# An unquoted value ends at a quote too: in `opts+=" -x NCCL_X=1"` the quote closes the shell string.
_VALUE = r"(?P<value>\"[^\"]*\"|'[^']*'|[^\s;\\\"']*)"
# In container command strings only exported settings reach NCCL: `export NAME=VALUE`, `mpirun -x
# NAME=VALUE` (a plain `NAME=VALUE` there is a shell variable, e.g. jingchaozhang.github.io's NCCL_TESTS_EXE).
_INLINE = re.compile(r"(?:(?:^|(?<=\s))-x\s+|(?:^|(?<=[\s;]))export\s+)(?P<name>[A-Z][A-Z0-9_]*)=" + _VALUE)
_DOCKER_ENV = re.compile(r"(?:^\s*ENV\s+|(?<=\s))(?P<name>[A-Za-z_][A-Za-z0-9_]*)=" + _VALUE)
_MPIRUN_X = re.compile(r"(?:^|(?<=\s))-x\s+(?P<name>[A-Za-z_][A-Za-z0-9_]*)=" + _VALUE)


@dataclass(frozen=True)
class Setting:
    name: str
    value: str
    line: int
    column: int  # of the name
    value_column: int
    end_column: int
    source: str  # "nccl.conf", "env-file", "script", "mpirun -x", "container env", "command", "Dockerfile ENV"
    value_line: int = 0  # where the value is, when not on the name's line (YAML `env:` entries)

    @property
    def value_at(self) -> int:
        """The line of the value (findings about the value point here)."""
        return self.value_line or self.line

    @property
    def dynamic(self) -> bool:
        """The value comes from a shell/Kubernetes expansion: its literal text says nothing."""
        return "$" in self.value or "{{" in self.value


def env_settings(doc: Document, prefix: str = "") -> list[Setting]:
    """Every setting in ``doc`` whose name starts with ``prefix`` (cached per document)."""
    cache = doc.__dict__.setdefault("_settings", None)
    if cache is None:
        cache = doc.__dict__["_settings"] = list(_collect(doc))
    return [s for s in cache if s.name.startswith(prefix)]


def _collect(doc: Document) -> Iterator[Setting]:
    if doc.kind == Kind.NCCL_CONF:
        from ..parsers.nccl_conf import parse_nccl_conf

        for entry in parse_nccl_conf(doc.text).entries:
            # NCCL sees the raw key; a padded key is another name, reported by NCCL001. A trailing CR
            # is NCCL007's finding alone: value rules judge the value the author meant.
            value = entry.value[:-1] if entry.value.endswith("\r") else entry.value
            yield Setting(entry.key, value, entry.line, entry.key_column, entry.value_column,
                          entry.value_end_column, "nccl.conf")
    elif doc.kind in (Kind.ENV_FILE, Kind.SHELL_SCRIPT, Kind.SBATCH_SCRIPT):
        yield from _shell_settings(doc)
    elif doc.kind == Kind.DOCKERFILE:
        yield from _dockerfile_settings(doc)
    elif doc.yaml is not None:
        yield from _yaml_settings(doc)


def _shell_settings(doc: Document) -> Iterator[Setting]:
    """Assignments as a POSIX shell reads them (``hpcconf.parsers.env_file``), plus ``mpirun -x``.

    In an env file every assignment is a setting; in a script only exported ones and
    ``NAME=VALUE command`` prefixes reach the programs it starts.
    """
    from ..parsers.env_file import parse_env_file

    script = doc.kind != Kind.ENV_FILE
    for item in parse_env_file(doc.text).assignments:
        if script and not (item.exported or item.command_prefix):
            continue
        opens_quote = item.raw_value[:1] in ("'", '"')
        yield Setting(item.key, item.value, item.line, item.key_column, item.value_column + opens_quote,
                      item.value_end_column, "script" if script else "env-file",
                      value_line=item.value_line if item.value_line != item.line else 0)
    if script:
        for number, line in enumerate(doc.lines, start=1):
            if line.lstrip().startswith("#"):
                continue
            for match in _MPIRUN_X.finditer(line):
                value, value_column = _unquote(match.group("value"), match.start("value") + 1)
                yield Setting(match.group("name"), value, number, match.start("name") + 1, value_column,
                              match.end("value") + 1, "mpirun -x")


def _dockerfile_settings(doc: Document) -> Iterator[Setting]:
    """``ENV NAME=VALUE [NAME=VALUE ...]``, continuation lines included."""
    for instruction in doc.dockerfile.of("ENV"):
        for number in range(instruction.line, instruction.end_line + 1):
            line = doc.lines[number - 1]
            if line.lstrip().startswith("#"):
                continue
            for match in _DOCKER_ENV.finditer(line):
                value, value_column = _unquote(match.group("value"), match.start("value") + 1)
                yield Setting(match.group("name"), value, number, match.start("name") + 1, value_column,
                              match.end("value") + 1, "Dockerfile ENV")


def _unquote(raw: str, column: int) -> tuple[str, int]:
    """The value without surrounding quotes, and the column of its first character."""
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "\"'":
        return raw[1:-1], column + 1
    return raw, column


def _yaml_settings(doc: Document) -> Iterator[Setting]:
    """``env: [{name, value}]`` entries anywhere in the document, and NAME=VALUE inside command strings."""
    assert doc.yaml is not None
    seen_lines: set[tuple[int, str]] = set()
    for path, node in _walk(doc.data, ()):
        if isinstance(node, list) and path and path[-1] == "env":
            for index, item in enumerate(node):
                if isinstance(item, dict) and "name" in item and "value" in item:
                    span = doc.yaml.position(path + (index, "value"), prefer_value=True)
                    name_span = doc.yaml.position(path + (index, "name"), prefer_value=True)
                    value = str(item["value"])
                    yield Setting(str(item["name"]), value, name_span.line, name_span.column, span.column,
                                  span.column + len(value), "container env", value_line=span.line)
        elif isinstance(node, list):
            yield from _argv_settings(doc, path, node)
        elif isinstance(node, str) and "=" in node and path and path[-1] != "value":
            start = doc.yaml.position(path).line
            for text_line in node.splitlines():
                anchor = _locate_line(doc, start, text_line, seen_lines)
                if anchor is not None:
                    start = anchor[0] + 1  # the scalar's next line is below this one: never rescan from the top
                for match in _INLINE.finditer(text_line):
                    line_number: int | None
                    if anchor is not None:  # one search per line: per match it was quadratic in the line's length
                        line_number, column = anchor[0], anchor[1] + match.start(0)
                    else:
                        line_number, column = _locate(doc, start, match.group(0), seen_lines)
                    if line_number is None:
                        continue
                    name_col = column + match.start("name") - match.start(0)
                    raw_start = name_col + len(match.group("name")) + 1
                    value, value_column = _unquote(match.group("value"), raw_start)
                    yield Setting(match.group("name"), value, line_number, name_col, value_column,
                                  raw_start + len(match.group("value")), "command")


_ARGV_ASSIGNMENT = re.compile(r"(?P<name>[A-Za-z_][A-Za-z0-9_]*)=(?P<value>.*)", re.S)


def _argv_settings(doc: Document, path: tuple[Any, ...], argv: list[Any]) -> Iterator[Setting]:
    """``mpirun`` arguments written as a YAML list (``- -x`` then ``- NAME=VALUE``), as Kubeflow MPIJobs do:
    each item is one argv word, so the value is the whole item, quotes and all."""
    assert doc.yaml is not None
    for index in range(1, len(argv)):
        item = argv[index]
        if argv[index - 1] != "-x" or not isinstance(item, str):
            continue
        match = _ARGV_ASSIGNMENT.fullmatch(item)
        if match is None:
            continue
        span = doc.yaml.position(path + (index,), prefer_value=True)
        quoted = doc.lines[span.line - 1][span.column - 1:span.column] in ("'", '"') if span.line else False
        name_col = span.column + quoted
        value_col = name_col + len(match.group("name")) + 1
        yield Setting(match.group("name"), match.group("value"), span.line, name_col, value_col,
                      value_col + len(match.group("value")), "mpirun -x")


def _locate_line(doc: Document, start: int, text_line: str, seen: set[tuple[int, str]]) -> tuple[int, int] | None:
    """The source line (at or after ``start``) holding the whole ``text_line`` verbatim, once per text."""
    if len(text_line.strip()) < 8:  # too short to be told apart from other lines: match per setting
        return None
    number, column = _locate(doc, start, text_line, seen)
    return (number, column) if number is not None else None


def _locate(doc: Document, start: int, snippet: str, seen: set[tuple[int, str]]) -> tuple[int | None, int]:
    """The source line (at or after ``start``) holding ``snippet``; each line is used once per snippet."""
    for number in range(max(start, 1), len(doc.lines) + 1):
        column = doc.lines[number - 1].find(snippet)
        if column >= 0 and (number, snippet) not in seen:
            seen.add((number, snippet))
            return number, column + 1
    return None, 0


def _walk(node: Any, path: tuple[Any, ...]) -> Iterator[tuple[tuple[Any, ...], Any]]:
    yield path, node
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _walk(value, path + (key,))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _walk(value, path + (index,))
