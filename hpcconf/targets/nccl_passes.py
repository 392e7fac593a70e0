"""The shell side of the runs every generated NCCL test makes (hpcconf.resolve.test_passes decides them, with
their floors and time budgets): the function both jobs, the Slurm/AzHOP sbatch and the AKS Volcano launcher,
record a failed or timed-out run with, so the platforms cannot drift apart.
"""

from __future__ import annotations

from ..resolve.test_passes import TIMED_OUT_STATUS

# The shell function both generated jobs (AKS launcher, Slurm sbatch) record a failed or timed-out test with.
FAILED_FUNCTION = (f"failed() {{ local why=\"exit status $2\"; [ \"$2\" = {TIMED_OUT_STATUS} ] && why=\"timed out "
                   "(exit status $2): a hung collective, stopped by timeout\"; echo \"== $1: $why\" >&2; "
                   "FAILED+=(\"$1: $why\"); }")
