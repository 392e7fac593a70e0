"""Names hpcconf gives the Volcano job it generates, which the spec checks and the resolver share."""

from __future__ import annotations

# The MPI worker task of the generated Volcano job: pods are <job>-mpiworker-<index>.
WORKER_TASK = "mpiworker"


def default_job_name(collective: str, library: str = "nccl") -> str:
    """``nccl-allreduce-job1``, or ``rccl-...`` for a pool whose GPUs run RCCL (AMD)."""
    return f"{library}-{collective.replace('_', '')}-job1"


def job_names(job_name: str | None, collective: str, pools: list[tuple[str, str]]) -> dict[str, str]:
    """The NCCL test job of each tested GPU pool, given as (pool name, collective library).

    The base is ``job_name`` (``aks.job_name``), else :func:`default_job_name` for the pool's library;
    it is the name itself when one pool is tested, else ``<base>-<pool>`` (one Volcano Job per pool;
    names distinct, since a Job name is unique in its namespace).
    """
    bases = {pool: job_name or default_job_name(collective, library) for pool, library in pools}
    if len(bases) == 1:
        return bases
    return {pool: f"{base}-{pool}" for pool, base in bases.items()}
