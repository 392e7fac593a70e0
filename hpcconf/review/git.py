"""Read-only access to two states of a git repository: a commit, or the working tree.

Everything goes through ``git`` subprocesses that only read (``rev-parse``, ``merge-base``,
``ls-tree``, ``ls-files``, ``cat-file --batch``, ``diff --name-status``): a review never
checks anything out, stashes or touches the index. Paths travel NUL-separated (``-z``) and are
decoded as the file system does (``os.fsdecode``: a non-UTF-8 byte survives the round trip);
``cat-file --batch`` is asked for object ids, never ``rev:path`` lines, so a path with a newline,
tab, quote or leading dash cannot shift or alter the answers. Working-tree files are read through
the safe reader (hpcconf.safe_io).
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

# Where a review's base comes from when --base is not given: the merge-base of HEAD with the
# first of these that exists (the remote's default branch, then the usual local names).
DEFAULT_BRANCH_REFS = ("origin/HEAD", "origin/main", "origin/master", "main", "master")


class GitError(Exception):
    """Not a git repository, an unknown revision, or git itself failed; ``str()`` says which."""


def _git(repo: Path, *args: str, input_bytes: bytes | None = None) -> bytes:
    try:
        # GIT_OPTIONAL_LOCKS=0: git must not refresh (rewrite) the index while a review only reads
        done = subprocess.run(["git", "-C", str(repo), *args], input=input_bytes, capture_output=True, check=False,
                              env={**os.environ, "GIT_OPTIONAL_LOCKS": "0"})
    except OSError as exc:
        raise GitError(f"cannot run git: {exc.strerror}") from None
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GitError(f"git {' '.join(args[:2])}: {message[-1] if message else 'failed'}")
    return done.stdout


def repository_root(start: Path) -> Path:
    try:
        return Path(_git(start, "rev-parse", "--show-toplevel").decode().strip())
    except GitError:
        raise GitError(f"{start}: not inside a git repository (hpcconf review compares two git revisions; "
                       "run it in a clone, or use `hpcconf explain-diff SPEC --against OLD_SPEC`)") from None


def commit_of(repo: Path, revision: str) -> str:
    try:
        return _git(repo, "rev-parse", "--verify", "--quiet", f"{revision}^{{commit}}").decode().strip()
    except GitError:
        raise GitError(f"unknown revision {revision!r} (a commit, branch or tag: git rev-parse {revision})") from None


def default_base(repo: Path) -> tuple[str, str]:
    """(commit, how it was chosen): the merge-base of HEAD with the default branch; HEAD itself
    when HEAD is on that branch (the review then shows the uncommitted changes) or none exists."""
    head = commit_of(repo, "HEAD")
    for ref in DEFAULT_BRANCH_REFS:
        try:
            commit_of(repo, ref)
        except GitError:
            continue
        base = _git(repo, "merge-base", "HEAD", ref).decode().strip()
        if base and base != head:
            return base, f"merge-base of HEAD and {ref}"
        break
    return head, "HEAD"


@dataclass
class Tree:
    """One state of the repository: ``revision`` (a commit) or the working tree (None)."""

    repo: Path
    revision: Optional[str]
    label: str
    _cache: dict[str, Optional[bytes]] = field(default_factory=dict)
    _blobs: Optional[dict[str, str]] = None  # path -> blob id of the commit (ls-tree -z)

    def files(self) -> list[str]:
        if self.revision is None:
            raw = _git(self.repo, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
            names = {os.fsdecode(n) for n in raw.split(b"\0") if n}
            # not is_file(): a fifo or a link to a device is read (and refused, located), never skipped unseen
            return sorted(n for n in names if os.path.lexists(self.repo / n) and not (self.repo / n).is_dir())
        return sorted(self._blob_ids())

    def _blob_ids(self) -> dict[str, str]:
        """``mode SP type SP id TAB path NUL`` per entry of the commit: the blobs (no links, no submodules)."""
        if self._blobs is None:
            assert self.revision is not None
            raw = _git(self.repo, "ls-tree", "-r", "-z", "--full-tree", self.revision)
            blobs: dict[str, str] = {}
            for entry in raw.split(b"\0"):
                meta, tab, name = entry.partition(b"\t")
                fields = meta.split()
                if tab and len(fields) == 3 and fields[1] == b"blob" and fields[0] != b"120000":
                    blobs[os.fsdecode(name)] = fields[2].decode("ascii")
            self._blobs = blobs
        return self._blobs

    def read(self, path: str) -> Optional[bytes]:
        if path not in self._cache:
            self._cache[path] = self._read(path)
        return self._cache[path]

    def read_many(self, paths: list[str]) -> None:
        """Read several files of a commit in one ``git cat-file --batch`` (a tree has hundreds)."""
        wanted = [p for p in paths if p not in self._cache]
        if self.revision is None or not wanted:
            return
        blobs = self._blob_ids()
        for path in [p for p in wanted if p not in blobs]:
            self._cache[path] = None  # not in the commit (or a link, which a review never follows)
        wanted = [p for p in wanted if p in blobs]
        if not wanted:
            return
        request = "".join(f"{blobs[p]}\n" for p in wanted).encode("ascii")  # ids: no path reaches git's stdin
        out = _git(self.repo, "cat-file", "--batch", input_bytes=request)
        position = 0
        for path in wanted:
            end = out.index(b"\n", position)
            header = out[position:end].split()
            position = end + 1
            if len(header) < 3 or header[1] != b"blob":
                self._cache[path] = None
                continue
            size = int(header[2])
            self._cache[path] = out[position:position + size]
            position += size + 1

    def text(self, path: str) -> Optional[str]:
        data = self.read(path)
        return None if data is None else data.decode("utf-8", "replace")

    def _read(self, path: str) -> Optional[bytes]:
        if self.revision is None:
            from ..safe_io import read_bytes

            file = self.repo / path
            if not os.path.lexists(file) or file.is_dir():
                return None
            return read_bytes(file, "linted", path, tree=self.repo)  # a fifo or escaping link: refused, located
        self.read_many([path])
        return self._cache.get(path)


def renamed_files(repo: Path, base: str, head: Optional[str]) -> dict[str, str]:
    """{new path: old path} for the files git sees as renamed between ``base`` and ``head``
    (the working tree when None; untracked files are not considered by git diff)."""
    # Plumbing, not `git diff`: that one refreshes (rewrites) the index, and a review only reads.
    args = (["diff-tree", "-r", base, head] if head else ["diff-index", base]) + ["--name-status", "-z", "-M", "--"]
    fields = [os.fsdecode(f) for f in _git(repo, *args).split(b"\0")]
    renames: dict[str, str] = {}
    index = 0
    while index < len(fields) and fields[index]:
        status = fields[index]
        if status.startswith(("R", "C")):
            old, new = fields[index + 1], fields[index + 2]
            if status.startswith("R"):
                renames[new] = old
            index += 3
        else:
            index += 2
    return renames
