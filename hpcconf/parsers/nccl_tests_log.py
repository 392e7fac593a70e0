"""Parse NVIDIA nccl-tests output (``all_reduce_perf``, ``alltoall_perf``, ...) as it lands in job logs.

Real logs are messy: Slurm output files, ``kubectl logs`` (optionally ``--prefix`` / ``--timestamps``),
``mpirun --tag-output`` (``[1,0]<stdout>:``), ``srun --label`` (``0: ``), NCCL INFO/WARN lines between
the table rows, several tests or data types (``-d all``) in one file, ``N/A`` in the ``#wrong`` column
(``-c 0``, and the in-place column of some collectives). This module turns such a file into
:class:`TestRun` objects, each a list of :class:`Row` (one message size and data type), and keeps the line
number of every row so a verdict can point at it.

Which collective a table measures is not printed in the table itself: it comes from nccl-tests'
``# Collective test starting: all_reduce_perf`` line (nccl-tests 2.14+), else from the last
``<collective>_perf`` named above the table (the srun/mpirun command line, a script echo), else from the
caller's hint (file name, ``--collective``); ``None`` when nothing names it.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Iterable, Optional

from .nccl_collectives import COLLECTIVES as COLLECTIVES  # re-exported: it lived here first

# Prefixes that launchers put in front of every line; stripped repeatedly (kubectl --timestamps, then
# --prefix, then mpirun's tag, ...). Each is anchored at the line start and needs its own punctuation, so
# a data row ("8  2  float ...") never matches one.
_PREFIXES = (
    re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d)\s"),  # kubectl logs --timestamps
    re.compile(r"^\[pod/[^\]\s]+(?:/[^\]\s]+)?\]\s?"),                          # kubectl logs --prefix
    re.compile(r"^\[\d+,\d+\]<std(?:out|err)>:\s?"),                            # mpirun --tag-output
    re.compile(r"^\d+:\s"),                                                     # srun --label
    re.compile(r"^[A-Za-z0-9][\w.-]*-(?:mpimaster|mpiworker|master|worker|launcher)-\d+\s*[|:]\s"),  # pod name prefix
)
_COLLECTIVE_NAME = re.compile(r"\b(" + "|".join(COLLECTIVES) + r")_perf(?:_mpi)?\b")
_STARTING = re.compile(r"^#\s*Collective test starting:\s*(\S+)")
_RANK_LINE = re.compile(r"^#\s+Rank\s+(\d{1,18})(?!\d)\s+Group\s+\d+\s+Pid\s+\d+\s+on\s+(\S+)\s+device\s+(\d{1,18})(?!\d)\s+\[([^\]]*)\]\s*(.*)$")
_NTHREAD = re.compile(r"^#\s*nThread\s+(\d{1,18})(?!\d)\s+nGpus\s+(\d{1,18})(?!\d)")
_HEADER = re.compile(r"^#\s+size\s+count\s+type\b")
_AVG = re.compile(r"^#\s*Avg bus bandwidth\s*:\s*([0-9.eE+-]+)(?:\s+(FAILED|OK))?")
_OOB = re.compile(r"^#\s*Out of bounds values\s*:\s*(\d{1,18})(?!\d)")
# nccl-tests' own messages (NVIDIA/nccl-tests src/common.h @v2.19.6): an unknown -d/-o name replaced by the
# default, and the CUDACHECK/NCCLCHECK/TESTCHECK lines printed when the test stops on an error.
_INVALID_CHOICE = re.compile(r"\binvalid (type|op) (\S+), defaulting to (\S+)")
_TEST_FAILURE = re.compile(r"\bTest [A-Z]+ failure\b|\bpid \d+: Test failure \S+:\d+")
_NCCL_VERSION = re.compile(r"NCCL version (\d+\.\d+\.\d+)")
_NCCL_LIBRARY = re.compile(r"nccl-library=(\d{1,18})(?!\d)")
_TESTS_VERSION = re.compile(r"nccl-tests version (\S+)")
# "host:pid:tid [dev] NCCL INFO comm 0x... rank 3 nranks 16 cudaDev 3 ..." (Init COMPLETE lines)
_INFO_NRANKS = re.compile(r"^(\S+?):\d+:\d+ \[\d+\] NCCL INFO comm \S+ rank \d+ nranks (\d{1,18})(?!\d)\b")
_NCCL_MESSAGE = re.compile(r"NCCL (INFO|WARN)\b")
_NUMBER = re.compile(r"^-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?$")
_TYPE = re.compile(r"^[a-z][a-z0-9_]*$")

TYPE_BYTES = {"int8": 1, "uint8": 1, "char": 1, "fp8_e4m3": 1, "fp8_e5m2": 1, "f8e4m3": 1, "f8e5m2": 1,
              "half": 2, "float16": 2, "bfloat16": 2, "int32": 4, "uint32": 4, "int": 4, "float": 4,
              "float32": 4, "int64": 8, "uint64": 8, "double": 8, "float64": 8}


@dataclass(frozen=True)
class Measure:
    """One half of a row: the out-of-place or the in-place measurement."""

    time_us: float
    algbw: float  # GB/s
    busbw: float  # GB/s
    wrong: Optional[int]  # None where nccl-tests printed N/A (not checked)


@dataclass(frozen=True)
class Row:
    size: int  # bytes
    count: int
    dtype: str
    redop: str
    root: int
    out_of_place: Optional[Measure]
    in_place: Optional[Measure]
    line: int  # 1-based line in the log

    @property
    def busbw(self) -> float:
        """The mean of the two busbw columns, as nccl-tests' ``# Avg bus bandwidth`` averages them."""
        values = [m.busbw for m in (self.out_of_place, self.in_place) if m is not None]
        return sum(values) / len(values)

    @property
    def wrong(self) -> int:
        return sum(m.wrong or 0 for m in (self.out_of_place, self.in_place) if m is not None)


@dataclass
class TestRun:
    """One nccl-tests table (one program run, or one table of an excerpt)."""

    collective: Optional[str]
    line: int  # where the table (or its run header) starts
    rows: list[Row] = field(default_factory=list)
    hosts: list[str] = field(default_factory=list)  # distinct hosts of the "# Rank" lines, in order
    ranks: Optional[int] = None
    gpus: list[str] = field(default_factory=list)  # "# Rank" lines' device names
    nccl_version: Optional[str] = None
    tests_version: Optional[str] = None
    avg_busbw: Optional[float] = None  # nccl-tests' own "# Avg bus bandwidth"
    out_of_bounds: Optional[int] = None
    warnings: list[tuple[int, str]] = field(default_factory=list)  # NCCL WARN lines (line, text)
    avg_line: Optional[int] = None  # the "# Avg bus bandwidth" line
    avg_failed: bool = False  # nccl-tests' NCCL_TESTS_MIN_BW check printed FAILED
    out_of_bounds_line: Optional[int] = None
    label: Optional[str] = None  # the generated job's pass (hpcconf.nccl_report.baseline.pass_label), if it names one

    @property
    def nodes(self) -> Optional[int]:
        return len(self.hosts) or None

    def dtypes(self) -> list[str]:
        return list(dict.fromkeys(row.dtype for row in self.rows))

    def series(self, dtype: str) -> list[Row]:
        return [row for row in self.rows if row.dtype == dtype]


@dataclass(frozen=True)
class Marker:
    """A line in which nccl-tests reports on itself: ``invalid-type`` / ``invalid-op`` (an unknown ``-d`` /
    ``-o`` name, replaced: ``requested`` and ``used``), ``test-failure`` (the test stopped on an error),
    ``nccl-warn`` (an NCCL WARN line)."""

    line: int
    kind: str
    text: str
    requested: Optional[str] = None
    used: Optional[str] = None


@dataclass
class NcclTestsLog:
    path: str
    runs: list[TestRun]
    markers: list[Marker] = field(default_factory=list)  # in log order, whichever run they belong to


def strip_prefixes(line: str) -> str:
    """Remove launcher prefixes (kubectl timestamps/pod names, mpirun tags, srun labels)."""
    changed = True
    while changed:
        changed = False
        for prefix in _PREFIXES:
            stripped = prefix.sub("", line, count=1)
            if stripped != line:
                line, changed = stripped, True
    return line


def _finite(text: str) -> Optional[float]:
    """The number, or None when it overflows a double (``1e999``): nccl-tests never prints one, and an
    infinite bandwidth would judge a run and end up as invalid JSON (``Infinity``)."""
    try:
        value = float(text)
    except ValueError:  # '1.2.3' matches the loose pattern of the average line
        return None
    return value if math.isfinite(value) else None


def _measure(fields: list[str]) -> Optional[Measure]:
    """time algbw busbw #wrong; ``None`` when the group is incomplete (a truncated line) or not finite."""
    if len(fields) < 3 or not all(_NUMBER.match(f) for f in fields[:3]):
        return None
    numbers = [_finite(f) for f in fields[:3]]
    wrong: Optional[int] = None
    if len(fields) > 3 and fields[3] != "N/A":
        if not _NUMBER.match(fields[3]) or _finite(fields[3]) is None:
            return None
        wrong = int(float(fields[3]))  # nccl-tests < 2.0 printed the error as 0e+00
    if numbers[0] is None or numbers[1] is None or numbers[2] is None:
        return None
    return Measure(numbers[0], numbers[1], numbers[2], wrong)


def parse_row(text: str, line: int) -> Optional[Row]:
    """A data row, or ``None`` when ``text`` is anything else (INFO lines, prose, headers)."""
    fields = text.split()
    if len(fields) < 8 or not (fields[0].isdigit() and fields[1].isdigit()) or not _TYPE.match(fields[2]) \
            or max(len(fields[0]), len(fields[1]), len(fields[4])) > 20:  # a byte count fits 64 bits; int() of 4,300+ digits raises
        return None
    if not _TYPE.match(fields[3]) or not re.match(r"^-?\d+$", fields[4]):
        return None
    out_of_place = _measure(fields[5:9])
    if out_of_place is None:
        return None
    in_place = _measure(fields[9:13])
    return Row(int(fields[0]), int(fields[1]), fields[2], fields[3], int(fields[4]), out_of_place, in_place, line)


def infer_collective(run: TestRun) -> Optional[str]:
    """all_reduce or reduce_scatter from the counts, when nothing in the log names the test.

    Both print a reduction op and root -1; all_reduce's count is size/typesize, reduce_scatter's is that
    divided by the rank count. Other collectives print ``none`` and are not guessed.
    """
    if not run.rows:
        return None
    row = run.rows[-1]
    width = TYPE_BYTES.get(row.dtype)
    if width is None or row.redop == "none" or row.root != -1:
        return None
    if row.count * width == row.size:
        return "all_reduce"
    if run.ranks and row.count * width * run.ranks == row.size:
        return "reduce_scatter"
    return None


class _Parser:
    def __init__(self, path: str, collective_hint: Optional[str]):
        self.path = path
        self.hint = collective_hint
        self.runs: list[TestRun] = []
        self.current: Optional[TestRun] = None
        self.named: Optional[str] = None  # last <collective>_perf seen outside a table
        self.label: Optional[str] = None  # last pass header of a generated job seen outside a table
        self.pending = TestRun(None, 0)  # facts seen before the first table row (rank lines, versions)
        self.markers: list[Marker] = []

    def _open(self, line: int) -> TestRun:
        if self.current is None or self.current.rows:
            run = self.pending
            run.line = run.line or line  # a run header's line, else the table's first line
            self.current = run
            self.runs.append(run)
            self.pending = TestRun(None, 0)
        return self.current

    def _facts_target(self) -> TestRun:
        """Rank and version lines belong to the table that follows, unless one is being filled."""
        if self.current is not None and not self.current.rows:
            return self.current
        return self.pending

    def feed(self, number: int, raw: str) -> None:
        text = strip_prefixes(raw.rstrip("\n")).strip()
        if not text:
            return
        row = parse_row(text, number)
        if row is not None:
            run = self.current if self.current is not None else self._open(number)
            if run.collective is None:
                run.collective = self.named
            if run.label is None:
                run.label = self.label
            run.rows.append(row)
            return
        self._meta(number, text)

    def _meta(self, number: int, text: str) -> None:
        if (m := _STARTING.match(text)) or _NTHREAD.match(text):
            self._close()
            target = self.pending
            target.line = target.line or number
            if m:
                name = _COLLECTIVE_NAME.search(m.group(1))
                target.collective = name.group(1) if name else None
                self.named = target.collective
            return
        if _HEADER.match(text):
            if self.current is not None and self.current.rows:
                self._close()
            self._open(number)
            if self.current is not None and self.current.collective is None:
                self.current.collective = self.named
            return
        if (m := _AVG.match(text)) and self.current is not None:
            self.current.avg_busbw = _finite(m.group(1))
            self.current.avg_line, self.current.avg_failed = number, m.group(2) == "FAILED"
            return
        if (m := _OOB.match(text)) and self.current is not None:
            self.current.out_of_bounds = int(m.group(1))
            self.current.out_of_bounds_line = number
            return
        if m := _INVALID_CHOICE.search(text):
            self.markers.append(Marker(number, f"invalid-{m.group(1)}", text, m.group(2), m.group(3)))
        elif _TEST_FAILURE.search(text):
            self.markers.append(Marker(number, "test-failure", text))
        self._facts(number, text)

    def _facts(self, number: int, text: str) -> None:
        target = self._facts_target()
        if (label := pass_label(text)) is not None:
            self.label = label
        if m := _RANK_LINE.match(text):
            _add_host(target, m.group(2))
            target.gpus.append(m.group(5).strip())
            target.ranks = max(target.ranks or 0, int(m.group(1)) + 1)
            return
        if m := _INFO_NRANKS.match(text):
            # Only the rank count: an excerpt shows some ranks' INFO lines, so their hosts are not all hosts.
            run = self.current or target
            run.ranks = run.ranks or int(m.group(2))
            return
        if m := _TESTS_VERSION.search(text):
            target.tests_version = m.group(1)
        if m := _NCCL_LIBRARY.search(text):
            code = int(m.group(1))  # 22809 -> 2.28.9
            target.nccl_version = target.nccl_version or f"{code // 10000}.{code // 100 % 100}.{code % 100}"
        if m := _NCCL_VERSION.search(text):
            target.nccl_version = target.nccl_version or m.group(1)
        if (m := _NCCL_MESSAGE.search(text)) and m.group(1) == "WARN":
            (self.current or target).warnings.append((number, text))
            self.markers.append(Marker(number, "nccl-warn", text))
        if not text.startswith("#") and not _NCCL_MESSAGE.search(text) and (m := _COLLECTIVE_NAME.search(text)):
            self.named = m.group(1)

    def _close(self) -> None:
        self.current = None

    def finish(self) -> NcclTestsLog:
        for run in self.runs:
            if run.collective is None:
                run.collective = self.hint or infer_collective(run)
        return NcclTestsLog(self.path, [run for run in self.runs if run.rows], self.markers)


# The pass headers hpcconf's generated jobs echo before each run: Slurm ``== all_reduce_perf`` (the matrix) and
# ``== all_reduce_perf (ring.all_reduce)``; AKS ``== ring.all_reduce: NCCL_ALGO=Ring ...`` (hpcconf.targets).
_PASS_MATRIX = re.compile(r"^==\s+\w+_perf(?:\s+\(([\w.-]+)\))?\s*$")
_PASS_NAMED = re.compile(r"^==\s+([\w-]+\.\w+):\s+(?!exit status|timed out)")


def pass_label(text: str) -> Optional[str]:
    """``ring.all_reduce`` for a generated job's pass header, ``matrix`` for its collective matrix, else None."""
    if m := _PASS_MATRIX.match(text):
        return m.group(1) or "matrix"
    if m := _PASS_NAMED.match(text):
        return m.group(1)
    return None


def _add_host(run: TestRun, host: str) -> None:
    if host not in run.hosts:
        run.hosts.append(host)


def parse_lines(lines: Iterable[str], path: str = "<log>", collective_hint: Optional[str] = None) -> NcclTestsLog:
    parser = _Parser(path, collective_hint)
    for number, raw in enumerate(lines, start=1):
        parser.feed(number, raw)
    return parser.finish()


def collective_from_name(name: str) -> Optional[str]:
    """``all_gather`` for ``nccl-all_gather_perf-gpu.1234.out``; longest match wins (alltoallv, not alltoall)."""
    found = [c for c in COLLECTIVES if c in name.replace("-", "_")]
    return max(found, key=len) if found else None


def parse_text(text: str, path: str = "<log>", collective_hint: Optional[str] = None) -> NcclTestsLog:
    return parse_lines(text.splitlines(), path, collective_hint)
