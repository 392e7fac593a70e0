"""The programs a shell script (or a container's ``command``/``args``) runs: the words in command position.

A word inside a quoted string, an ``echo`` argument or a comment is text, not a command: ``echo 'run
nvidia-smi on the node'`` runs ``echo``. Command substitutions (``$(...)``, backticks, also inside double
quotes) and ``bash -c SCRIPT`` are read as scripts of their own; wrappers that run their arguments
(``sudo``, ``env``, ``exec``, ``timeout``, ``watch``, ...) give way to the program they run. Not a full shell
parser: enough to tell a program from text mentioning it.
"""

from __future__ import annotations

from typing import Any, Iterator

_OPERATORS = set(";&|(){}\n")
_KEYWORDS = {"if", "then", "else", "elif", "fi", "do", "done", "while", "until", "!", "time", "{", "}", "case", "esac"}
# Wrappers that run their remaining arguments as a command, with the options (taking one value) they accept.
_WRAPPERS: dict[str, set[str]] = {
    "sudo": {"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U"}, "env": {"-u", "-C", "-S"}, "exec": {"-a"},
    "nohup": set(), "nice": {"-n"}, "command": set(), "builtin": set(), "stdbuf": {"-i", "-o", "-e"},
    "timeout": {"-k", "-s", "--kill-after", "--signal"}, "watch": {"-n", "-d", "--interval"}, "xargs": {"-I", "-n", "-P"},
    "setsid": set(),
}
_SHELLS = {"sh", "bash", "dash", "zsh", "ash", "ksh"}


def _matching(script: str, start: int, opening: str, closing: str) -> int:
    """The index just after the ``closing`` that balances the ``opening`` before ``start`` (the end if none)."""
    depth, i = 1, start
    while i < len(script):
        char = script[i]
        if char == "\\":
            i += 2
            continue
        if char == "'" and opening == "(":
            end = script.find("'", i + 1)
            i = len(script) if end < 0 else end + 1
            continue
        if char == closing and (opening != closing or depth == 1):
            depth -= 1
            if depth == 0:
                return i + 1
        elif char == opening and opening != closing:
            depth += 1
        i += 1
    return len(script)


def _split(script: str) -> Iterator[list[str] | str]:
    """Simple commands as word lists, and nested scripts (command substitutions) as strings."""
    words: list[str] = []
    word: list[str] = []
    in_word = False
    i = 0

    def end_word() -> None:
        nonlocal in_word
        if in_word:
            words.append("".join(word))
        word.clear()
        in_word = False

    while i < len(script):
        char = script[i]
        if char == "\\":
            if script[i + 1:i + 2] != "\n":
                word.append(script[i + 1:i + 2])
                in_word = True
            i += 2
        elif char == "#" and not in_word:
            end = script.find("\n", i)
            i = len(script) if end < 0 else end
        elif char == "'":
            end = script.find("'", i + 1)
            end = len(script) if end < 0 else end
            word.append(script[i + 1:end])
            in_word = True
            i = end + 1
        elif char == '"':
            j = i + 1
            while j < len(script) and script[j] != '"':
                if script[j] == "\\":
                    j += 2
                    continue
                if script.startswith("$(", j):
                    end = _matching(script, j + 2, "(", ")")
                    yield script[j + 2:end - 1]
                    j = end
                    continue
                if script[j] == "`":
                    end = _matching(script, j + 1, "`", "`")
                    yield script[j + 1:end - 1]
                    j = end
                    continue
                j += 1
            word.append(script[i + 1:j])
            in_word = True
            i = j + 1
        elif script.startswith("$(", i) or char == "`":
            opening, closing, skip = ("(", ")", 2) if char == "$" else ("`", "`", 1)
            end = _matching(script, i + skip, opening, closing)
            yield script[i + skip:end - 1]
            word.append("$(...)")
            in_word = True
            i = end
        elif char in _OPERATORS:
            end_word()
            if words:
                yield words
            words = []
            i += 1
        elif char in " \t\r":
            end_word()
            i += 1
        else:
            word.append(char)
            in_word = True
            i += 1
    end_word()
    if words:
        yield words


def argv_commands(argv: list[str]) -> Iterator[str]:
    """The programs one simple command runs: its first word past assignments, keywords and wrappers (as a
    basename), and what a ``sh -c SCRIPT`` runs."""
    i = 0
    while i < len(argv):
        word = argv[i]
        name = word.rsplit("/", 1)[-1]
        if word in _KEYWORDS or ("=" in word and word.split("=", 1)[0].isidentifier()):
            i += 1
            continue
        if name in _WRAPPERS:
            i += 1
            while i < len(argv) and (argv[i].startswith("-") or "=" in argv[i] and name == "env"):
                i += 2 if argv[i] in _WRAPPERS[name] else 1
            if name == "timeout" and i < len(argv):
                i += 1  # the duration
            continue
        yield name
        if name in _SHELLS:
            for index, option in enumerate(argv[i + 1:], start=i + 1):
                if option.startswith("-") and "c" in option.lstrip("-") and not option.startswith("--"):
                    if index + 1 < len(argv):
                        yield from script_commands(argv[index + 1])
                    break
        return


def script_commands(script: str) -> Iterator[str]:
    """The programs ``script`` runs (see the module docstring), in order."""
    for part in _split(script):
        if isinstance(part, str):
            yield from script_commands(part)
        else:
            yield from argv_commands(part)


def container_commands(container: dict[str, Any]) -> list[str]:
    """The programs a container's ``command`` and ``args`` run. Without a ``command`` (the image's entrypoint,
    often a shell) each ``args`` entry is read as a script."""
    command = [str(w) for w in container.get("command") or [] if w is not None]
    args = [str(w) for w in container.get("args") or [] if w is not None]
    if command:
        return list(argv_commands(command + args))
    return [name for arg in args for name in script_commands(arg)]
