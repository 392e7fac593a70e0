"""Names hpcconf gives the Volcano job it generates, which the spec checks and the resolver share."""

from __future__ import annotations

# The MPI worker task of the generated Volcano job: pods are <job>-mpiworker-<index>.
WORKER_TASK = "mpiworker"
