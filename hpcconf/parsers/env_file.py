"""Environment assignments in env files and shell scripts, with positions.

Reads ``KEY=VALUE`` and ``export KEY=VALUE`` lines the way a POSIX shell (``bash``/``sh``) would:
single quotes keep everything literally, double quotes keep everything but ``\\``-escapes of
``$ ` " \\`` and newline, a backslash outside quotes escapes the next character, ``#`` starts a
comment at the beginning of a word, and a backslash-newline joins lines. ``$VAR`` expansions are
not performed; assignments that contain one are flagged (``expands``), so callers know the value
is only known at run time. Lines that are not assignments (commands, ``if``, ...) are skipped in
script mode and reported in env-file mode (``strict=True``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class EnvAssignment:
    """One assignment. Lines/columns are 1-based; ``value_end_*`` point just past the raw value."""

    key: str
    value: str  # after quote removal, expansions left as written
    line: int
    key_column: int
    value_line: int
    value_column: int
    value_end_line: int
    value_end_column: int
    raw_value: str  # the value as written, quotes included
    exported: bool  # 'export KEY=...' (or 'declare -x'/'set -a' is not tracked)
    command_prefix: bool = False  # 'KEY=VALUE command ...': applies to that command only
    quoted: bool = False
    expands: bool = False  # contains an unquoted or double-quoted $ or `


@dataclass(frozen=True)
class EnvProblem:
    kind: str  # unterminated-quote, not-assignment, invalid-name, space-around-eq
    message: str
    hint: str
    line: int
    column: int


@dataclass
class EnvFile:
    assignments: list[EnvAssignment] = field(default_factory=list)
    problems: list[EnvProblem] = field(default_factory=list)
    exports: list[tuple[str, int]] = field(default_factory=list)  # 'export NAME' without '=' (name, line)

    def values(self) -> dict[str, str]:
        """Final value per key (later assignments win, as in a shell); command prefixes excluded."""
        out: dict[str, str] = {}
        for item in self.assignments:
            if not item.command_prefix:
                out[item.key] = item.value
        return out

    def last(self, key: str) -> EnvAssignment | None:
        found = [a for a in self.assignments if a.key == key and not a.command_prefix]
        return found[-1] if found else None


@dataclass
class _Word:
    text: str  # after quote removal
    raw: str
    start: int  # offsets in the whole text
    end: int
    quoted: bool = False
    expands: bool = False
    eq_at: int = -1  # index in ``text`` of the first unquoted '=' (-1: none)
    eq_raw: int = -1  # offset in the whole text of that '='


# Runs of characters the lexer copies as they are (the character-by-character loop is the slow part).
_NEWLINE = re.compile("\n")
_PLAIN_RUN = re.compile(r"[^ \t\n;'\"\\=$`]+")
_QUOTED_RUN = re.compile(r'[^"\\$`]+')
_BLANKS = re.compile(r"[ \t]+")


class _Lexer:
    def __init__(self, text: str):
        self.text = text
        self.pos = 0
        self.line_starts = [0] + [m.end() for m in _NEWLINE.finditer(text)]

    def where(self, pos: int) -> tuple[int, int]:
        import bisect
        index = bisect.bisect_right(self.line_starts, pos) - 1
        return index + 1, pos - self.line_starts[index] + 1

    def logical_line(self) -> tuple[list[_Word], int, str | None]:
        """Words up to an unquoted newline or ';'; returns (words, start offset, error)."""
        words: list[_Word] = []
        start = self.pos
        text = self.text
        while self.pos < len(text):
            ch = text[self.pos]
            if ch in " \t":
                blanks = _BLANKS.match(text, self.pos)
                self.pos = blanks.end() if blanks else self.pos + 1
            elif ch == "\\" and text[self.pos + 1:self.pos + 2] == "\n":
                self.pos += 2
            elif ch in "\n;":
                self.pos += 1
                break
            elif ch == "#":  # a comment: to the end of the line, the newline left to end the logical line
                end = text.find("\n", self.pos)
                self.pos = len(text) if end < 0 else end
            else:
                word, error = self.word()
                words.append(word)
                if error:
                    return words, start, error
        return words, start, None

    def word(self) -> tuple[_Word, str | None]:
        text, begin = self.text, self.pos
        out: list[str] = []
        quoted = expands = False
        eq_at = eq_raw = -1
        while self.pos < len(text) and text[self.pos] not in " \t\n;":
            ch = text[self.pos]
            if ch == "'":
                end = text.find("'", self.pos + 1)
                if end < 0:
                    return self._cut(begin), "unterminated single quote"
                out.append(text[self.pos + 1:end])
                quoted, self.pos = True, end + 1
            elif ch == '"':
                self.pos += 1
                quoted = True
                while True:
                    run = _QUOTED_RUN.match(text, self.pos)
                    if run:  # characters with no meaning inside double quotes, taken at once
                        out.append(run.group())
                        self.pos = run.end()
                    if self.pos >= len(text):
                        return self._cut(begin), "unterminated double quote"
                    ch = text[self.pos]
                    if ch == '"':
                        self.pos += 1
                        break
                    if ch == "\\" and text[self.pos + 1:self.pos + 2] in ('$', '`', '"', "\\", "\n"):
                        nxt = text[self.pos + 1]
                        out.append("" if nxt == "\n" else nxt)
                        self.pos += 2
                        continue
                    expands = expands or ch in "$`"
                    out.append(ch)
                    self.pos += 1
            elif ch == "\\":
                nxt = text[self.pos + 1:self.pos + 2]
                out.append("" if nxt == "\n" else nxt)
                self.pos += 2
            elif run := _PLAIN_RUN.match(text, self.pos):  # ordinary characters, taken at once
                out.append(run.group())
                self.pos = run.end()
            else:
                if ch == "=" and eq_at < 0:
                    eq_at, eq_raw = len("".join(out)), self.pos
                expands = expands or ch in "$`"
                out.append(ch)
                self.pos += 1
        return _Word("".join(out), text[begin:self.pos], begin, self.pos, quoted, expands, eq_at, eq_raw), None

    def _cut(self, begin: int) -> _Word:
        self.pos = len(self.text)
        return _Word(self.text[begin:], self.text[begin:], begin, len(self.text))


def parse_env_file(text: str, strict: bool = False, _depth: int = 0) -> EnvFile:
    """Assignments in ``text``. ``strict``: every non-comment line must be an assignment (env files).

    In scripts, the quoted script of ``bash -c '...'`` / ``sh -c "..."`` (also ``-lc``, ``-cx``...) is read as a
    script of its own, nested payloads too (``srun bash -c '... docker run ... bash -c "..."'``): its exports
    reach the programs that shell starts, at their own lines and columns."""
    lexer = _Lexer(text)
    result = EnvFile()
    while lexer.pos < len(text):
        words, start, error = lexer.logical_line()
        if error:
            line, column = lexer.where(words[-1].start if words else start)
            result.problems.append(EnvProblem("unterminated-quote", f"{error}: the rest of the file is part of "
                                              "this value", "close the quote", line, column))
        if words:
            _line_assignments(lexer, words, result, strict)
            if not strict and _depth < _MAX_PAYLOAD_DEPTH:
                for payload in _shell_payloads(words):
                    result.assignments.extend(_payload_assignments(text, payload, _depth))
    return result


_SHELLS = {"sh", "bash", "dash", "zsh", "ash", "ksh"}
_MAX_PAYLOAD_DEPTH = 4


def _shell_payloads(words: list[_Word]) -> list[_Word]:
    """The quoted script words that follow ``SHELL [-options] -c`` in one command line."""
    found = []
    for index, word in enumerate(words):
        if word.text.rsplit("/", 1)[-1] not in _SHELLS:
            continue
        for following in words[index + 1:]:
            if re.fullmatch(r"-[a-z]+", following.raw) and "c" in following.raw:
                position = words.index(following)
                if position + 1 < len(words) and words[position + 1].raw[:1] in ("'", '"'):
                    found.append(words[position + 1])
                break
            if not following.raw.startswith("-"):
                break
    return found


def _payload_assignments(text: str, payload: _Word, depth: int) -> list[EnvAssignment]:
    """The assignments of a quoted ``-c`` script, parsed in place (everything outside it blanked, newlines kept,
    so lines and columns stay the file's). In a double-quoted script the outer shell removes a level of
    backslashes first: an assignment whose value holds one is not read as written, so it is left out."""
    begin, end = payload.start + 1, payload.end - 1
    blanked = re.sub(r"[^\n]", " ", text[:begin]) + text[begin:end] + re.sub(r"[^\n]", " ", text[end:])
    double = payload.raw.startswith('"')
    return [a for a in parse_env_file(blanked, _depth=depth + 1).assignments
            if not (double and "\\" in a.raw_value)]


def _is_assignment(word: _Word) -> bool:
    return word.eq_at > 0 and _NAME_RE.fullmatch(word.text[:word.eq_at]) is not None and \
        not word.raw[:word.eq_at].count("'") and not word.raw[:word.eq_at].count('"')


def _line_assignments(lexer: _Lexer, words: list[_Word], result: EnvFile, strict: bool) -> None:
    exported = words[0].raw == "export"
    rest = words[1:] if exported else words
    if exported:
        for word in rest:
            if word.raw.startswith("-"):
                continue  # export -n / -p options
            if _is_assignment(word):
                result.assignments.append(_assignment(lexer, word, exported=True, prefix=False))
            elif _NAME_RE.fullmatch(word.text):
                result.exports.append((word.text, lexer.where(word.start)[0]))
            else:
                _bad_word(lexer, word, result, "export")
        return
    leading = []
    for word in rest:
        if not _is_assignment(word):
            break
        leading.append(word)
    command = rest[len(leading):]
    for word in leading:
        result.assignments.append(_assignment(lexer, word, exported=False, prefix=bool(command)))
    if command and (strict or not leading):
        first = command[0]
        if len(command) >= 2 and command[1].raw.startswith("=") and _NAME_RE.fullmatch(first.text):
            _space_problem(lexer, first, result)
        elif strict:
            line, column = lexer.where(first.start)
            result.problems.append(EnvProblem("not-assignment", f"{first.raw!r} is not a KEY=VALUE assignment",
                                              "env files hold only KEY=VALUE lines", line, column))


def _space_problem(lexer: _Lexer, word: _Word, result: EnvFile) -> None:
    line, column = lexer.where(word.start)
    result.problems.append(EnvProblem("space-around-eq", f"'{word.text} =' runs a command named {word.text}; "
                                      "a shell assignment has no spaces around '='",
                                      f"write {word.text}=VALUE", line, column))


def _bad_word(lexer: _Lexer, word: _Word, result: EnvFile, context: str) -> None:
    line, column = lexer.where(word.start)
    if word.raw.startswith("="):
        result.problems.append(EnvProblem("space-around-eq", "a shell assignment has no spaces around '='",
                                          "write KEY=VALUE", line, column))
        return
    result.problems.append(EnvProblem("invalid-name", f"{word.raw!r} after {context} is not NAME or NAME=VALUE",
                                      "variable names use letters, digits and '_'", line, column))


def _assignment(lexer: _Lexer, word: _Word, exported: bool, prefix: bool) -> EnvAssignment:
    key = word.text[:word.eq_at]
    line, key_column = lexer.where(word.start)
    value_start = word.eq_raw + 1
    value_line, value_column = lexer.where(value_start)
    end_line, end_column = lexer.where(word.end)
    return EnvAssignment(key=key, value=word.text[word.eq_at + 1:], line=line, key_column=key_column,
                         value_line=value_line, value_column=value_column, value_end_line=end_line,
                         value_end_column=end_column, raw_value=lexer.text[value_start:word.end],
                         exported=exported, command_prefix=prefix, quoted=word.quoted, expands=word.expands)
