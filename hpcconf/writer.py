"""Write a build's artifacts into one cluster directory: all or nothing, never through a link.

Everything is rendered and validated before this runs; here we only compare and write.

How a directory is replaced: a sibling staging directory ``OUT/.<name>.hpcconf-new-*`` gets a
hard-linked copy of the current tree, the changed files, the deletions and the new manifest;
then one ``renameat2(RENAME_EXCHANGE)`` swaps it with ``OUT/<name>`` and the old tree is
removed. A build killed at any point leaves either the previous directory or the new one,
never a mix. Where the file system cannot exchange (no renameat2), two renames are used and
the next build puts the previous directory back if it was killed between them.

Concurrent builds into one output root are serialised with an ``flock`` on the root directory.
The manifest (``.hpcconf-manifest.json``) lists every file with its SHA-256 (of the bytes) and
the spec it came from; it is read back as untrusted input (:mod:`hpcconf.manifest`).
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import errno
import hashlib
import json
import os
import shutil
import signal
import stat
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from .artifacts import Artifact
from .manifest import (
    MANIFEST_NAME,
    OutputRefused,
    inside,
    load_manifest,
    refuse_symlinks,
)

__all__ = [
    "GENERATOR",
    "MANIFEST_NAME",
    "STAGING_MARK",
    "OutputRefused",
    "WriteReport",
    "manifest_text",
    "output_lock",
    "read_bytes",
    "read_manifest",
    "refuse_symlinks",
    "sha256",
    "write_artifacts",
]

GENERATOR = "hpcconf"  # no version: an upgrade must not make every committed manifest stale
STAGING_MARK = ".hpcconf-"  # OUT/.<name>.hpcconf-new-*, OUT/.<name>.hpcconf-old: never cluster directories
CRASH_HOOK = "HPCCONF_TEST_CRASH_AT"  # tests only: SIGKILL this process at the named step


def sha256(content: str | bytes) -> str:
    return hashlib.sha256(content.encode("utf-8") if isinstance(content, str) else content).hexdigest()


def manifest_text(artifacts: Iterable[Artifact], spec_file: str, generator: str) -> str:
    files = {a.path: {"sha256": sha256(a.content), "kind": a.kind, "target": a.target}
             for a in sorted(artifacts, key=lambda a: a.path)}
    data = {"generator": generator, "spec": spec_file, "files": files}
    return json.dumps(data, indent=2, sort_keys=True) + "\n"


def read_manifest(out_dir: Path) -> dict | None:
    """The validated manifest, or None; raises :class:`OutputRefused` when it cannot be trusted."""
    return load_manifest(out_dir)


MAX_OUTPUT_FILE_BYTES = 64 * 1024 * 1024  # a file under OUT/<name>/ hpcconf reads back to compare


def read_bytes(out_dir: Path, rel: str) -> bytes | None:
    """The bytes of ``out_dir/rel`` without following a link; None when there is no such file."""
    path = inside(out_dir, rel)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # replaced by a link since refuse_symlinks looked
            refuse_symlinks(out_dir, rel)
        if exc.errno == errno.ENOTDIR:
            return None
        raise
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise OutputRefused(f"{path.as_posix()}: is not a regular file (a directory, FIFO or device); "
                                "move it away and rebuild")
        if info.st_size > MAX_OUTPUT_FILE_BYTES:  # no generated file comes near it: refused unread
            raise OutputRefused(f"{path.as_posix()}: larger than {MAX_OUTPUT_FILE_BYTES // (1024 * 1024)} MiB, "
                                "not a file hpcconf generated; move it away and rebuild")
        return handle.read(MAX_OUTPUT_FILE_BYTES + 1)


@dataclass
class WriteReport:
    written: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)


@contextlib.contextmanager
def output_lock(out_root: Path) -> Iterator[None]:
    """Hold an exclusive ``flock`` on the output root while a build compares and writes.

    The lock is on the directory itself, so no lock file is left in the tree; a second build
    into the same root waits for the first instead of interleaving with it.
    """
    import fcntl

    out_root.mkdir(parents=True, exist_ok=True)
    fd = os.open(out_root, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def _crash_point(step: str) -> None:
    if os.environ.get(CRASH_HOOK) == step:
        os.kill(os.getpid(), signal.SIGKILL)


def _old_dir(out_dir: Path) -> Path:
    return out_dir.with_name(f".{out_dir.name}{STAGING_MARK}old")


def recover(out_dir: Path) -> None:
    """Finish or undo what a build killed mid-swap left behind (called under the lock)."""
    old = _old_dir(out_dir)
    if old.is_dir() and not old.is_symlink():
        if not os.path.lexists(out_dir):
            os.rename(old, out_dir)  # killed between the two renames: the previous output comes back
        else:
            shutil.rmtree(old)
    for leftover in out_dir.parent.glob(f".{out_dir.name}{STAGING_MARK}new-*"):
        if leftover.is_dir() and not leftover.is_symlink():
            shutil.rmtree(leftover)


def _copy_tree(source: Path, staging: Path) -> None:
    """Hard-link every file of ``source`` into ``staging`` (copy where links are not allowed)."""
    for directory, dirnames, filenames in os.walk(source, followlinks=False):
        rel_dir = Path(directory).relative_to(source)
        for name in dirnames + filenames:
            path = Path(directory) / name
            info = os.lstat(path)
            if stat.S_ISLNK(info.st_mode):
                refuse_symlinks(source, (rel_dir / name).as_posix())
            target = staging / rel_dir / name
            if stat.S_ISDIR(info.st_mode):
                target.mkdir()
                os.chmod(target, stat.S_IMODE(info.st_mode))
            elif stat.S_ISREG(info.st_mode):
                try:
                    os.link(path, target, follow_symlinks=False)
                except OSError:
                    shutil.copy2(path, target, follow_symlinks=False)
            else:
                raise OutputRefused(f"{path.as_posix()}: is not a regular file or directory; move it away and rebuild")


def _write_file(staging: Path, rel: str, content: str, out_dir: Path) -> None:
    target = staging / rel
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.unlink(missing_ok=True)  # a hard link to the previous version: never write through it
        mode = 0o755 if content.startswith("#!") else 0o644
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), mode)
        with os.fdopen(fd, "wb") as handle:
            handle.write(content.encode("utf-8"))
        os.chmod(target, mode)  # whatever the umask: the modes are part of the output
    except OSError as exc:  # name the file the user asked for, not our staging copy
        raise OSError(exc.errno, exc.strerror, str(out_dir / rel)) from None


def _default_dir_mode() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return 0o777 & ~mask


def _rename_exchange(a: Path, b: Path) -> bool:
    """Atomically swap two directories (Linux renameat2 RENAME_EXCHANGE); False where unsupported."""
    libc_name = ctypes.util.find_library("c")
    if not libc_name:
        return False
    libc = ctypes.CDLL(libc_name, use_errno=True)
    renameat2 = getattr(libc, "renameat2", None)
    if renameat2 is None:
        return False
    at_fdcwd, rename_exchange = -100, 2
    if renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOTSUP):
        return False
    raise OSError(code, os.strerror(code), str(b))


def _swap_in(staging: Path, out_dir: Path) -> None:
    if not os.path.lexists(out_dir):
        os.rename(staging, out_dir)
        return
    if _rename_exchange(staging, out_dir):
        _crash_point("exchanged")
        shutil.rmtree(staging)  # now the previous tree
        return
    old = _old_dir(out_dir)
    os.rename(out_dir, old)
    _crash_point("moved-old")
    os.rename(staging, out_dir)
    _crash_point("moved-new")
    shutil.rmtree(old)


def write_artifacts(out_dir: Path, artifacts: list[Artifact], manifest: str) -> WriteReport:
    """Write changed files, remove files a previous build generated that are gone now, update the manifest.

    The caller holds :func:`output_lock` on ``out_dir.parent``. All or nothing (see the module's
    docstring); a link anywhere at or under ``out_dir`` stops the build before anything is written.
    """
    recover(out_dir)
    refuse_symlinks(out_dir)
    previous = read_manifest(out_dir) or {}
    report = WriteReport()
    changed: list[Artifact] = []
    for artifact in sorted(artifacts, key=lambda a: a.path):
        if read_bytes(out_dir, artifact.path) == artifact.content.encode("utf-8"):
            report.unchanged.append(artifact.path)
        else:
            changed.append(artifact)
            report.written.append(artifact.path)
    new_paths = {a.path for a in artifacts}
    for stale in sorted(set(previous.get("files", {})) - new_paths):
        path = inside(out_dir, stale)
        if path.is_file():
            report.removed.append(stale)
    manifest_changed = read_bytes(out_dir, MANIFEST_NAME) != manifest.encode("utf-8")
    if not (changed or report.removed or manifest_changed):
        return report
    _replace_directory(out_dir, changed, report.removed, manifest)
    return report


def _replace_directory(out_dir: Path, changed: list[Artifact], removed: list[str], manifest: str) -> None:
    made = [d for d in [out_dir.parent, *out_dir.parent.parents] if not d.exists()]
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}{STAGING_MARK}new-", dir=out_dir.parent))
    try:
        _fill_and_swap(staging, out_dir, changed, removed, manifest)
    except BaseException:
        if staging.is_dir():
            shutil.rmtree(staging, ignore_errors=True)
        for directory in made:  # the directories this build created, innermost first
            with contextlib.suppress(OSError):
                directory.rmdir()
        raise


def _fill_and_swap(staging: Path, out_dir: Path, changed: list[Artifact], removed: list[str], manifest: str) -> None:
    exists = out_dir.is_dir()
    os.chmod(staging, stat.S_IMODE(os.stat(out_dir).st_mode) if exists else _default_dir_mode())
    if exists:
        _copy_tree(out_dir, staging)
    _crash_point("copied")
    for artifact in changed:
        _write_file(staging, artifact.path, artifact.content, out_dir)
    for rel in removed:
        (staging / rel).unlink(missing_ok=True)
    _write_file(staging, MANIFEST_NAME, manifest, out_dir)
    _crash_point("staged")
    _swap_in(staging, out_dir)
    _crash_point("done")
