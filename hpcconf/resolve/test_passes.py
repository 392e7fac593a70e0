"""The runs every generated NCCL test makes, with the floor each is judged against, resolved once for the
Slurm/AzHOP sbatch and the AKS Volcano job so the platforms cannot drift apart.

After the collective matrix, two passes:

- ``ring``: all_reduce with ``NCCL_ALGO=Ring`` over every node, large messages only. A ring crosses each
  node boundary on every channel, and NCCL spreads channels over all the node's NICs, so one slow or dead
  HCA slows the whole ring down; Tree/NVLS/CollNet algorithms can route around it at these sizes.
- ``single-node``: all_reduce on one node with all its GPUs, up to the size Azure's health check runs
  (``check_nccl_allreduce``), judged against that single-node floor. It catches per-node faults (NVLink,
  a GPU) that a multi-node run averages away, and settings that only break without the network.

Both run only when the test has more than one node: on one node the matrix already is the single-node run.
Each run's floor (:func:`hpcconf.resolve.nccl_verdict.verdict_floor`) is looked up here, so the job's
``check_log`` lines only transcribe it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

from ..catalog import Sku
from ..knowledge.nccl_floors import load_floors, size_bytes
from ..spec.model import NcclTest, collective_matrix, message_bytes
from .nccl_verdict import VerdictFloor, verdict_floor

# Each nccl-tests run of a job (the AKS launcher's mpirun, the sbatch's srun or mpirun) runs under `timeout`, so a
# hung collective (a bad GPU or NVLink, IB retries) fails that test instead of holding the GPUs for ever. Its
# budget is what the run's message sizes and iterations take at a bus bandwidth far below any working ND fabric,
# plus the start: a slow run still ends with its numbers, a hung one is killed (SIGTERM, then SIGKILL after
# RUN_KILL_AFTER_S) and recorded as exit status 124.
RUN_START_S = 300  # ssh start of every rank, NCCL init and topology search on the whole gang
RUN_SLOW_BUSBW_BPS = 2 * 10**9  # 2 GB/s: NCCL's socket transport over the front-end NIC, the slowest it falls back to
RUN_KILL_AFTER_S = 60
TIMED_OUT_STATUS = 124  # coreutils timeout's status for a command it stopped


@dataclass(frozen=True)
class ResolvedNcclTest:
    """``nccl_test``: the pool it runs on, the collective and its matrix, the message sizes, the extra passes."""

    pool: Optional[str]  # None: every GPU pool (AKS), the first GPU pool (the test pool)
    collective: str
    min_bytes: str
    max_bytes: str
    step_factor: int
    iterations: int
    warmup_iterations: int
    check: bool
    collectives: tuple[str, ...]
    ring_pass: bool
    single_node: bool

    def matrix(self) -> list[str]:
        return collective_matrix(self.collective, self.collectives)


def resolved_nccl_test(test: NcclTest) -> ResolvedNcclTest:
    return ResolvedNcclTest(**{**test.model_dump(), "collectives": tuple(test.collectives)})


def run_budget_s(args: list[str] | tuple[str, ...]) -> int:
    """The wall-clock limit of one nccl-tests run with these arguments (-b/-e/-f/-n/-w), in whole minutes.

    Every size from -b to -e (times -f) runs -w + -n iterations, out of place and in place; busbw is at most
    twice the message over the wire (all_reduce's 2(n-1)/n), so the run moves at most 4 x size x iterations
    bytes, taken at RUN_SLOW_BUSBW_BPS, plus RUN_START_S."""
    options = dict(zip(args[::2], args[1::2]))
    size, largest = message_bytes(options.get("-b", "8")), message_bytes(options.get("-e", "8"))
    factor, iterations = int(options.get("-f", "2")), int(options.get("-n", "20")) + int(options.get("-w", "5"))
    moved = 0
    while size <= largest:
        moved += 4 * size * iterations
        size = max(size * factor, size + 1)
    seconds = RUN_START_S + math.ceil(moved / RUN_SLOW_BUSBW_BPS)
    return 60 * math.ceil(seconds / 60)


RING_MIN_BYTES = "64M"  # below this a ring is latency-bound; the NIC bandwidth shows only at large sizes
PASS_COLLECTIVE = "all_reduce"


@dataclass(frozen=True)
class TestPass:
    """One extra nccl-tests run: its log name, binary, arguments, environment and how it is judged."""

    name: str  # log stem, e.g. "ring.all_reduce"
    collective: str
    args: tuple[str, ...]
    env: tuple[tuple[str, str], ...]
    single_node: bool  # one node, all its GPUs (judged with --nodes 1)
    floor: Optional[VerdictFloor] = None  # what check_log judges the run's log against

    @property
    def log(self) -> str:
        return f"{self.name}.log"


@dataclass(frozen=True)
class MatrixRun:
    """One collective of the test's matrix on the whole job, and its floor."""

    collective: str
    floor: Optional[VerdictFloor]


@dataclass(frozen=True)
class TestRuns:
    """Every nccl-tests run of one pool's job: the matrix, then the passes; each with its floor looked up."""

    matrix: tuple[MatrixRun, ...]
    passes: tuple[TestPass, ...]
    single_node_floor_note: Optional[str]  # the single-node floor, for a comment in the job


def base_args(test: ResolvedNcclTest, min_bytes: str, max_bytes: str) -> tuple[str, ...]:
    return ("-b", min_bytes, "-e", max_bytes, "-f", str(test.step_factor), "-g", "1",
            "-n", str(test.iterations), "-w", str(test.warmup_iterations), "-c", "1" if test.check else "0")


def single_node_max_bytes(test: ResolvedNcclTest, sku: Sku) -> str:
    """Up to the single-node floor's message size where one is sourced (the verdict reads that row),
    else the test's own ``max_bytes``."""
    floor = load_floors().floor(sku.name, PASS_COLLECTIVE, 1, sku.gpu.count)
    if floor is not None and floor.message_bytes > size_bytes(test.max_bytes):
        return floor.message_size
    return test.max_bytes


def human_size(size: int) -> str:
    """nccl-tests' own size notation (16G, 256M), as the floors are written."""
    for unit, shift in (("G", 30), ("M", 20), ("K", 10)):
        if size >= 1 << shift and size % (1 << shift) == 0:
            return f"{size >> shift}{unit}"
    return str(size)


def ring_min_bytes(test: ResolvedNcclTest) -> str:
    return RING_MIN_BYTES if size_bytes(RING_MIN_BYTES) <= size_bytes(test.max_bytes) else test.min_bytes


def extra_passes(test: ResolvedNcclTest, sku: Sku, nodes: int, per_node: int) -> list[TestPass]:
    """The ring and single-node passes the spec asks for (``nccl_test.ring_pass`` / ``single_node``), each with
    the floor of its run (one node and its ``per_node`` ranks, or every node)."""
    if nodes < 2:
        return []
    passes = []
    if test.ring_pass:
        passes.append(TestPass(f"ring.{PASS_COLLECTIVE}", PASS_COLLECTIVE,
                               base_args(test, ring_min_bytes(test), test.max_bytes), (("NCCL_ALGO", "Ring"),), False,
                               verdict_floor(sku, PASS_COLLECTIVE, nodes, nodes * per_node, algorithm="Ring",
                                             max_bytes=size_bytes(test.max_bytes))))
    if test.single_node:
        passes.append(TestPass(f"single-node.{PASS_COLLECTIVE}", PASS_COLLECTIVE,
                               base_args(test, test.min_bytes, single_node_max_bytes(test, sku)), (), True,
                               verdict_floor(sku, PASS_COLLECTIVE, 1, per_node)))
    return passes


def single_node_floor_note(sku: Sku) -> Optional[str]:
    """The floor the single-node pass is judged against (the one check_log and nccl-report use), for a
    comment in the job."""
    floor = verdict_floor(sku, PASS_COLLECTIVE, 1, sku.gpu.count)
    if floor is None:
        return None
    if floor.origin == "derived":
        return f"{floor.gbps:g} GB/s busbw at the largest size, from {floor.message_bytes >> 20}M ({floor.source})"
    return f"{floor.gbps:g} GB/s busbw at {human_size(floor.message_bytes)} ({floor.source})"


def job_runs(test: ResolvedNcclTest, sku: Sku, nodes: int, ranks_per_node: int) -> TestRuns:
    """The runs of a job on ``nodes`` nodes of ``sku`` with ``ranks_per_node`` ranks each."""
    ranks = nodes * ranks_per_node
    return TestRuns(matrix=tuple(MatrixRun(c, verdict_floor(sku, c, nodes, ranks, max_bytes=size_bytes(test.max_bytes)))
                                 for c in test.matrix()),
                    passes=tuple(extra_passes(test, sku, nodes, ranks_per_node)),
                    single_node_floor_note=single_node_floor_note(sku))
