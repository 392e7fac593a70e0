"""Names hpcconf gives the Volcano job it generates, which the spec checks and the resolver share."""

from __future__ import annotations

# The MPI worker task of the generated Volcano job: pods are <job>-mpiworker-<index>.
WORKER_TASK = "mpiworker"


def default_job_name(collective: str) -> str:
    return f"nccl-{collective.replace('_', '')}-job1"


def job_names(base: str, pools: list[str]) -> dict[str, str]:
    """The NCCL test job of each tested GPU pool: ``base`` when one pool is tested, else ``<base>-<pool>``
    (one Volcano Job per pool; names distinct, since a Job name is unique in its namespace)."""
    if len(pools) == 1:
        return {pools[0]: base}
    return {pool: f"{base}-{pool}" for pool in pools}
