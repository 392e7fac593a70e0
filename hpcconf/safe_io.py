"""The one way hpcconf reads a file it was given or found: regular files only, links kept in the tree, bounded.

Files arrive in pull requests (pre-commit, CI) and from nodes (``sku import``), so a file may be a
link to ``/proc/self/environ`` or ``/etc/passwd``, a fifo that never ends, a link to ``/dev/zero``,
or simply huge. Every command reads through :func:`read_text` / :func:`read_bytes`, which refuse,
before reading a byte, with a located :class:`~hpcconf.diagnostics.HpcconfError`:

* HPC092 a fifo, socket, character or block device (never opened for reading);
* HPC093 a link (or a linked directory on the way) whose target is outside the tree being read, or
  anywhere under ``/proc``, ``/sys`` or ``/dev``; what the target holds is never read or quoted;
* HPC094 a file larger than the limit of its kind (:data:`LIMITS`), checked with ``fstat`` on the
  opened descriptor and enforced again by a bounded read (a file that grows is still cut off);
* HPC000 a missing, unreadable or non-UTF-8 file (with the line and column of the first bad byte).

The tree a link must stay in is the one the caller names (the walked directory, the collection
directory, a --sku-dir); for a file named on the command line it is the working directory when the
file lies below it, else the file's own directory. docs/security.md lists the limits.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from .diagnostics import Diagnostic, HpcconfError

KIB, MIB = 1024, 1024 * 1024
# Bytes per input kind; each is far above any real file of the kind and keeps parsing within seconds.
LIMITS: dict[str, int] = {
    "spec": 1 * MIB,       # a spec is a few KiB; YAML parsing costs ~1,000x its text in memory
    "linted": 4 * MIB,     # a hand-written config, Dockerfile, values file or manifest
    "settings": 1 * MIB,   # .hpcconf.toml / pyproject.toml
    "sku": 1 * MIB,        # a SKU file of a --sku-dir
    "log": 16 * MIB,       # an nccl-tests log: a full sweep of every collective is ~1 MiB
    "node": 16 * MIB,      # a collected node file: nvidia-smi -q -x of 8 GPUs is ~0.3 MiB
    "manifest": 4 * MIB,   # an output directory's .hpcconf-manifest.json
}
FORBIDDEN_ROOTS = ("/proc", "/sys", "/dev")

SPECIAL_FILE, LINK_OUTSIDE, TOO_LARGE, UNREADABLE_DIRECTORY = "HPC092", "HPC093", "HPC094", "HPC095"
_NAMES = {"HPC000": "unreadable-file", SPECIAL_FILE: "special-file", LINK_OUTSIDE: "link-outside-tree",
          TOO_LARGE: "file-too-large", UNREADABLE_DIRECTORY: "unreadable-directory"}


class UnsafeFile(HpcconfError):
    """A file refused before it was read (HPC092-HPC094), or one that cannot be read (HPC000)."""

    def __init__(self, code: str, file: str, message: str, hint: str, line: int | None = 1, column: int | None = 1):
        self.code = code
        super().__init__([Diagnostic(code=code, name=_NAMES[code], message=message, hint=hint).at(file, line, column)])


class NotUtf8(UnsafeFile):
    """The file's bytes are not UTF-8 text (a binary file found in a walk is simply not lintable)."""


def file_kind(mode: int) -> str:
    for test, what in ((stat.S_ISFIFO, "a fifo (named pipe)"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISDIR, "a directory")):
        if test(mode):
            return what
    return "not a regular file"


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def default_tree(path: Path) -> str:
    """The tree a file named on the command line may link within (module docstring)."""
    absolute = os.path.abspath(path)
    cwd = os.getcwd()
    if _under(absolute, cwd):
        return os.path.realpath(cwd)
    return os.path.realpath(os.path.dirname(absolute))


def link_problem(path: Path, tree: Path | str | None = None) -> str | None:
    """Why ``path`` must not be followed (its resolved target leaves ``tree`` or enters /proc, /sys, /dev), or None."""
    target = os.path.realpath(path)
    for root in FORBIDDEN_ROOTS:
        if _under(target, root):
            return f"it resolves to {root}/..., which is never read"
    root = os.path.realpath(tree) if tree is not None else default_tree(path)
    if not _under(target, root):
        return f"it is a link that leads outside {root}"
    return None


def _refuse_link(path: Path, display: str, problem: str) -> UnsafeFile:
    return UnsafeFile(LINK_OUTSIDE, display, f"not read: {problem}",
                      "Replace the link with the file itself (git stores links, so a pull request can carry one), "
                      "or exclude it in [tool.hpcconf] exclude.")


def _refuse_special(display: str, what: str) -> UnsafeFile:
    return UnsafeFile(SPECIAL_FILE, display, f"not read: it is {what}, not a regular file",
                      "hpcconf reads regular files only; remove it or exclude it in [tool.hpcconf] exclude.")


def check_file(path: Path, display: str | None = None, tree: Path | str | None = None) -> os.stat_result:
    """The stat of ``path`` if it may be opened; else the UnsafeFile that says why not (nothing opened)."""
    display = display or str(path)
    problem = link_problem(path, tree)
    if problem is not None:
        raise _refuse_link(path, display, problem)
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise UnsafeFile("HPC000", display, f"no such file: {display}",
                         "Check the path (a link whose target is missing reads as missing).") from None
    except OSError as exc:
        raise UnsafeFile("HPC000", display, f"cannot read {display}: {exc.strerror or exc}",
                         "Check the file's permissions.") from None
    if not stat.S_ISREG(info.st_mode):
        raise _refuse_special(display, file_kind(info.st_mode))
    return info


def read_bytes(path: Path | str, kind: str, display: str | None = None, tree: Path | str | None = None) -> bytes:
    """The bytes of a regular file within its tree and under the limit of ``kind`` (module docstring)."""
    path = Path(path)
    display = display or str(path)
    limit = LIMITS[kind]
    check_file(path, display, tree)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        # The resolved name, not following a final link: a link swapped in after the check is refused by the kernel.
        fd = os.open(os.path.realpath(path), flags | getattr(os, "O_NOFOLLOW", 0))
    except OSError as exc:
        raise UnsafeFile("HPC000", display, f"cannot read {display}: {exc.strerror or exc}",
                         "Check the file's permissions.") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise _refuse_special(display, file_kind(info.st_mode))
        if info.st_size > limit:
            raise _too_large(display, kind, limit)
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, min(limit + 1 - size, MIB))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:  # it grew while being read
            raise _too_large(display, kind, limit)
        return b"".join(chunks)
    except OSError as exc:
        raise UnsafeFile("HPC000", display, f"cannot read {display}: {exc.strerror or exc}",
                         "Check the file's permissions.") from None
    finally:
        os.close(fd)


def _too_large(display: str, kind: str, limit: int) -> UnsafeFile:
    return UnsafeFile(TOO_LARGE, display, f"{_KIND_WORDS[kind]} larger than {limit // KIB:,} KiB; refused unread",
                      "No real file of this kind is that large; see docs/security.md (limits).")


_KIND_WORDS = {"spec": "spec", "linted": "file", "settings": "settings file", "sku": "SKU file",
               "log": "log", "node": "node file", "manifest": "manifest"}


def decode(raw: bytes, display: str, hint: str = "Save the file as UTF-8 text.") -> str:
    """``raw`` as UTF-8 text, or NotUtf8 (HPC000) at the line and column of the first byte that is not UTF-8."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        line_start = raw.rfind(b"\n", 0, exc.start) + 1
        column = len(raw[line_start:exc.start].decode("utf-8", errors="replace")) + 1
        raise NotUtf8("HPC000", display, f"not UTF-8: byte 0x{raw[exc.start]:02x} cannot be decoded",
                      hint, line, column) from None


def read_text(path: Path | str, kind: str, display: str | None = None, tree: Path | str | None = None,
              hint: str = "Save the file as UTF-8 text.") -> str:
    """:func:`read_bytes`, decoded as UTF-8 (an undecodable byte is located, HPC000)."""
    display = display or str(path)
    return decode(read_bytes(path, kind, display, tree), display, hint)


def unreadable_directory(display: str, error: OSError) -> Diagnostic:
    """HPC095: a directory a walk could not list (nothing below it was checked)."""
    return Diagnostic(code=UNREADABLE_DIRECTORY, name=_NAMES[UNREADABLE_DIRECTORY],
                      message=f"cannot list this directory ({error.strerror or error}): nothing below it was checked",
                      hint="Fix its permissions, or exclude it in [tool.hpcconf] exclude.").at(display, None, None)
