"""``nccl.conf`` read the way NCCL reads it, and written so NCCL cannot misread it.

NCCL (``src/misc/param.cc`` ``setEnvFile``) reads ``$NCCL_CONF_FILE`` or ``~/.nccl.conf``, then
``/etc/nccl.conf``, line by line with ``getline``:

* a line whose first byte is ``#`` is skipped; a line without ``=`` is skipped;
* only the trailing ``\\n`` is removed: a ``\\r`` of a CRLF file stays in the value (seen on real
  NCCL 2.28.9: ``NCCL_ALGO=Ring\\r`` failed init), and long lines are not split (a 4100-byte line
  was read whole; only NCCL derivatives that read with ``fgets(4096)`` split them);
* the key is everything before the first ``=`` (spaces included), the value everything after it
  (spaces and ``# ...`` included); each is cut at 1023 bytes;
* no quoting, escaping, ``export`` or ``$VAR`` expansion; any key is ``setenv(key, value, 0)``.

So ``NCCL_ALGO = Ring`` sets a variable named ``"NCCL_ALGO "`` (ignored) and
``NCCL_ALGO=Ring # note`` sets NCCL_ALGO to ``"Ring # note"`` (fatal since 2.24). The parser
returns what NCCL would set, with positions, and lists such traps as :class:`ConfProblem`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Mapping, Sequence

MAX_FIELD_BYTES = 1023  # envVar/envValue buffers are 1024 bytes
LONG_LINE_BYTES = 4095  # NVIDIA NCCL reads whole lines (getline); fgets(4096)-based forks split longer ones
_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class ConfEntry:
    """One ``setenv`` NCCL performs. Columns are 1-based; end columns are exclusive."""

    key: str
    value: str
    line: int
    key_column: int
    key_end_column: int
    value_column: int
    value_end_column: int
    raw: str  # the line as read, without its newline


@dataclass(frozen=True)
class ConfProblem:
    kind: str  # spaces-around-eq, leading-space, export, quoted, inline-comment, trailing-space, crlf,
    #            not-nccl-key, invalid-key, empty-key, truncated, long-line, no-equals, duplicate
    message: str
    hint: str
    line: int
    column: int
    end_column: int | None = None
    misread: bool = True  # True: NCCL reads something other than what the author meant


@dataclass
class ConfFile:
    entries: list[ConfEntry] = field(default_factory=list)
    problems: list[ConfProblem] = field(default_factory=list)
    comment_lines: list[int] = field(default_factory=list)
    skipped_lines: list[int] = field(default_factory=list)  # non-comment lines without '='

    def effective(self) -> dict[str, str]:
        """What this one file sets: the first line for a key wins (``setenv(..., 0)``)."""
        values: dict[str, str] = {}
        for entry in self.entries:
            values.setdefault(entry.key, entry.value)
        return values

    def entry(self, key: str) -> ConfEntry | None:
        return next((e for e in self.entries if e.key == key), None)


def _utf8_len(text: str) -> int:
    return len(text.encode("utf-8"))


def _cut_bytes(text: str, limit: int) -> str:
    return text.encode("utf-8")[:limit].decode("utf-8", errors="ignore")


def parse_nccl_conf(text: str, allow_non_nccl: bool = False) -> ConfFile:
    """Parse nccl.conf ``text`` exactly as NCCL's ``setEnvFile`` does, listing the traps in it."""
    result = ConfFile()
    raw_lines = text.split("\n")
    if raw_lines and raw_lines[-1] == "":
        raw_lines.pop()  # text ending in a newline has no extra empty line
    for number, raw in enumerate(raw_lines, start=1):
        if raw.startswith("#"):
            result.comment_lines.append(number)
            continue
        if "=" not in raw:
            if raw.strip():
                result.skipped_lines.append(number)
                result.problems.append(ConfProblem(
                    "no-equals", f"line {number} has no '=' and is ignored by NCCL",
                    "write KEY=VALUE, or start the line with '#' to make it a comment", number, 1,
                    len(raw) + 1))
            continue
        eq = raw.index("=")
        key, value = raw[:eq], raw[eq + 1:]
        entry = ConfEntry(key=_cut_bytes(key, MAX_FIELD_BYTES), value=_cut_bytes(value, MAX_FIELD_BYTES),
                          line=number, key_column=1, key_end_column=eq + 1, value_column=eq + 2,
                          value_end_column=len(raw) + 1, raw=raw)
        result.entries.append(entry)
        result.problems.extend(_line_problems(entry, allow_non_nccl))
    result.problems.extend(_duplicate_problems(result.entries))
    return result


def _line_problems(entry: ConfEntry, allow_non_nccl: bool) -> list[ConfProblem]:
    raw, key, value, line = entry.raw, entry.raw[:entry.key_end_column - 1], entry.raw[entry.value_column - 1:], entry.line
    problems: list[ConfProblem] = []
    stripped_key = key.strip()

    def add(kind: str, message: str, hint: str, column: int, end: int | None = None, misread: bool = True) -> None:
        problems.append(ConfProblem(kind, message, hint, line, column, end, misread))

    if _utf8_len(raw) > LONG_LINE_BYTES:
        add("long-line", f"line is {_utf8_len(raw)} bytes; NCCL builds that read lines with a 4096-byte "
            "buffer split it into several lines", "keep nccl.conf lines under 4096 bytes", 1)
    if key.startswith(("export ", "export\t")):
        add("export", f"'export' is part of the key here: NCCL sets a variable named {key!r}",
            f"write {stripped_key[len('export'):].strip()}=... without 'export'", 1, entry.key_end_column)
    elif key != key.rstrip() and key.strip():
        add("spaces-around-eq", f"the key is {key!r} with trailing whitespace; NCCL sets that name, "
            f"not {stripped_key}, so the line has no effect",
            f"write {stripped_key}={value.strip()} with no spaces around '='", 1, entry.key_end_column)
    elif key != key.lstrip() and key.strip():
        add("leading-space", f"the key {key!r} starts with whitespace; NCCL sets that name, not {stripped_key}",
            "start the line with the variable name", 1, entry.key_end_column)
    if not key:
        add("empty-key", "line starts with '=': NCCL cannot set a variable with an empty name",
            "write KEY=VALUE", 1, 2)
    elif _utf8_len(key) > MAX_FIELD_BYTES:
        add("truncated", f"the key is longer than {MAX_FIELD_BYTES} bytes and is cut", "shorten it", 1)
    core_key = stripped_key[len("export"):].strip() if key.startswith("export") else stripped_key
    if key and not _NAME_RE.match(core_key):
        add("invalid-key", f"{core_key!r} is not a valid environment variable name",
            "use letters, digits and '_' only", 1, entry.key_end_column)
    elif key and not core_key.startswith("NCCL_") and not allow_non_nccl:
        add("not-nccl-key", f"{core_key} is set only when NCCL initialises, too late for CUDA, MPI or UCX, "
            "which read their variables earlier", f"set {core_key} in the job environment instead", 1,
            entry.key_end_column, misread=False)
    if value.endswith("\r"):
        add("crlf", "the line ends in CR (a Windows line ending); NCCL keeps the '\\r' in the value",
            "save the file with LF line endings", entry.value_end_column - 1, entry.value_end_column)
        value = value[:-1]
    if value != value.lstrip() and value.strip():
        add("spaces-around-eq", f"the value {value!r} starts with whitespace, which NCCL keeps",
            f"write {core_key}={value.strip()}", entry.value_column, entry.value_end_column)
    hash_at = value.find("#")
    if hash_at >= 0 and hash_at > 0 and value[hash_at - 1] in " \t":
        add("inline-comment", f"'#' does not start a comment here: NCCL sets {core_key} to {value!r}",
            "put comments on their own line starting with '#'", entry.value_column + hash_at,
            entry.value_end_column)
    elif value != value.rstrip():
        add("trailing-space", f"the value {value!r} ends with whitespace, which NCCL keeps",
            "remove the trailing whitespace", entry.value_column + len(value.rstrip()), entry.value_end_column)
    body = value.strip()
    if len(body) >= 2 and body[0] == body[-1] and body[0] in "\"'":
        add("quoted", f"quotes are part of the value: NCCL sets {core_key} to {body!r}",
            f"write {core_key}={body[1:-1]} without quotes", entry.value_column, entry.value_end_column)
    if _utf8_len(value) > MAX_FIELD_BYTES:
        add("truncated", f"the value is longer than {MAX_FIELD_BYTES} bytes; NCCL keeps the first {MAX_FIELD_BYTES}",
            "shorten it", entry.value_column)
    return problems


def _duplicate_problems(entries: Sequence[ConfEntry]) -> list[ConfProblem]:
    seen: dict[str, ConfEntry] = {}
    problems = []
    for entry in entries:
        first = seen.setdefault(entry.key, entry)
        if first is not entry and first.value != entry.value:
            problems.append(ConfProblem(
                "duplicate", f"{entry.key} is set again; NCCL keeps the first value {first.value!r} "
                f"from line {first.line}", "keep one line per variable", entry.line, 1, entry.key_end_column))
    return problems


def render_nccl_conf(entries: Mapping[str, str], header_comment_lines: Sequence[str] = (),
                     allow_non_nccl: bool = False) -> str:
    """``KEY=VALUE`` lines (in the given order) that NCCL reads exactly as written.

    Raises ValueError for anything NCCL would misread: a key that is not a plain ``NCCL_*`` name
    (unless ``allow_non_nccl``), whitespace at either end of a value, ``#`` in a value, a
    newline or CR, or over-long fields. Header lines become full-line ``# ...`` comments.
    """
    out: list[str] = []
    for comment in header_comment_lines:
        if "\n" in comment or "\r" in comment:
            raise ValueError(f"header comment {comment!r} contains a line break")
        out.append(("# " + comment).rstrip() if comment else "#")
    for key, value in entries.items():
        _check_renderable(key, value, allow_non_nccl)
        out.append(f"{key}={value}")
    return "".join(line + "\n" for line in out)


def _check_renderable(key: str, value: str, allow_non_nccl: bool) -> None:
    if not isinstance(value, str):
        raise ValueError(f"{key}: value must be a string, got {type(value).__name__}")
    if not _NAME_RE.match(key):
        raise ValueError(f"{key!r} is not a plain environment variable name (spaces or symbols would become "
                         "part of the name NCCL sets)")
    if not key.startswith("NCCL_") and not allow_non_nccl:
        raise ValueError(f"{key} is not an NCCL_ variable: nccl.conf applies it only at NCCL init, "
                         "too late for CUDA/MPI/UCX")
    for bad, why in (("\n", "a newline"), ("\r", "a carriage return"), ("\0", "a NUL byte")):
        if bad in value:
            raise ValueError(f"{key}: value contains {why}, which nccl.conf cannot hold")
    if "#" in value:
        raise ValueError(f"{key}: value {value!r} contains '#'; NCCL would keep it in the value, and "
                         "readers take it for a comment")
    if value != value.strip():
        raise ValueError(f"{key}: value {value!r} has leading or trailing whitespace, which NCCL keeps")
    if _utf8_len(key) > MAX_FIELD_BYTES or _utf8_len(value) > MAX_FIELD_BYTES:
        raise ValueError(f"{key}: key or value longer than {MAX_FIELD_BYTES} bytes would be truncated by NCCL")


CONF_FILE_SINCE = "2.23"  # NCCL_CONF_FILE is read from 2.23.4; older releases read only ~/.nccl.conf


def effective_nccl_settings(environment: Mapping[str, str], user_conf: ConfFile | None = None,
                            system_conf: ConfFile | None = None) -> dict[str, tuple[str, str]]:
    """What NCCL ends up with: ``{name: (value, source)}``; source is "environment", "user" (the
    ``NCCL_CONF_FILE`` or ``~/.nccl.conf`` file) or "system" (``/etc/nccl.conf``).

    NCCL applies the user file, then /etc/nccl.conf, each line with ``setenv(key, value, 0)``: a
    variable already set (by the job, or by the earlier file) keeps its value.
    """
    result = {name: (value, "environment") for name, value in environment.items()}
    for source, conf in (("user", user_conf), ("system", system_conf)):
        if conf is None:
            continue
        for name, value in conf.effective().items():
            result.setdefault(name, (value, source))
    return result
