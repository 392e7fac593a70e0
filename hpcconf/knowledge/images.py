"""Node image layout: where each VM image keeps the collective tests, the collective library, and the MPI
the test binaries were built against. A fact per image and version, each with the upstream file it was
read from; the Slurm/AzHOP jobs and the SLURM rules read the same rows.

Azure's HPC images (Azure/azhpc-images):

- NVIDIA x86_64 (``ubuntu-hpc-2026072901``, and ``ubuntu-hpc-20241023``, the tag of the date of AzHOP's
  pinned ``22.04.2024102301``), GB200 (``ubuntu-hpc-gb200-2404-20260528``) and GB300 (Azure Linux,
  ``azure-linux-hpc-gb300-2026060101``): ``install_nccl.sh``
  runs ``module load mpi/hpcx`` and ``make MPI=1 MPI_HOME=${HPCX_MPI_DIR}`` with no rpath, then moves
  nccl-tests to ``/opt/nccl-tests`` (binaries in ``build/``). A rank started without ``mpi/hpcx``
  loaded does not find ``libmpi.so.40``. ``components/install_mpis.sh`` (the same tags, and
  ``ubuntu-hpc-20241023``) also rebuilds that HPC-X against the node's PMIx as ``mpi/hpcx-pmix`` ("mpi/hpcx
  points to NVIDIA's original pre-built binary while mpi/hpcx-pmix points to our local rebuild (with PMIx
  added)"): the module a job whose ranks ``srun --mpi=pmix`` starts loads.
- MI300X (``ubuntu-hpc-mi300x-2404-2026072801``, ``ubuntu-hpc-mi300x-2204-2026072301``):
  ``components/install_rccl.sh`` builds RCCL into ``/opt/rccl`` (``CMAKE_INSTALL_PREFIX=/opt/rccl``)
  and copies the rccl-tests binaries straight into ``/opt/rccl-tests/`` (no ``build/``), built with
  ``USE_MPI=ON`` after ``hpcx_load``; Azure's own check (``tests/test-definitions.sh``
  ``verify_rccl_installation``) runs them after ``module load mpi/hpcx`` with
  ``LD_LIBRARY_PATH=/opt/rccl/lib``.

Crusoe (crusoecloud/slurm v3.0.0 README, "MPI"): ``ubuntu24.04-nvidia-slurm`` ships nccl-tests in
``/opt/nccl-tests/build`` and PMIx for ``srun --mpi=pmix``; "PMIx is currently not supported on GB200",
whose nodes run a custom image made with crusoecloud/solutions-library ``slurm-custom-image`` (its
``roles/ompi`` rebuilds HPC-X's Open MPI in ``/opt/hpcx/ompi`` ``--with-slurm``), so a GB200 job starts
its ranks with that ``mpirun`` inside the allocation instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Optional

from .accelerators import profile

if TYPE_CHECKING:
    from ..catalog import Sku

Launcher = Literal["srun-pmix", "mpirun"]
AZHPC_IMAGES = "Azure/azhpc-images"


@dataclass(frozen=True)
class ImageLayout:
    """Where one image keeps what an NCCL/RCCL test job needs."""

    image: str  # the image (and version) the facts were read from
    tests_dir: str  # nccl-tests / rccl-tests binaries (<dir>/<collective>_perf)
    mpi_module: Optional[str]  # environment module the tests were built against (None: MPI on the default path)
    library_dir: Optional[str] = None  # a collective library outside the default search path (Azure's RCCL)
    launcher: Launcher = "srun-pmix"
    mpirun: Optional[str] = None  # the mpirun a launcher "mpirun" job starts its ranks with
    source: str = ""
    # The same MPI rebuilt against the node's PMIx, for ranks srun starts with --mpi=pmix (Azure: mpi/hpcx-pmix,
    # "our local rebuild (with PMIx added)" of the same HPC-X; mpi/hpcx is NVIDIA's prebuilt binary).
    pmix_module: Optional[str] = None

    def job_module(self) -> Optional[str]:
        """The module a job loads: the PMIx build of the tests' MPI when srun starts the ranks."""
        return self.pmix_module if self.launcher == "srun-pmix" and self.pmix_module else self.mpi_module


AZURE_NVIDIA = ImageLayout(
    image="azhpc-images ubuntu-hpc-2026072901", tests_dir="/opt/nccl-tests/build", mpi_module="mpi/hpcx",
    pmix_module="mpi/hpcx-pmix",
    source=f"{AZHPC_IMAGES} components/install_nccl.sh @ ubuntu-hpc-2026072901 (ubuntu/common/install_nccl.sh @ "
           "ubuntu-hpc-20241023 and, V100, ubuntu-hpc-v100-2204-20250825)")
AZURE_GB200 = ImageLayout(
    image="azhpc-images ubuntu-hpc-gb200-2404-20260528", tests_dir="/opt/nccl-tests/build", mpi_module="mpi/hpcx",
    pmix_module="mpi/hpcx-pmix",
    source=f"{AZHPC_IMAGES} components/install_nccl.sh @ ubuntu-hpc-gb200-2404-20260528 (GB300: azure-linux-hpc-gb300-2026060101)")
AZURE_MI300X = ImageLayout(
    image="azhpc-images ubuntu-hpc-mi300x-2404-2026072801", tests_dir="/opt/rccl-tests", mpi_module="mpi/hpcx",
    pmix_module="mpi/hpcx-pmix",
    library_dir="/opt/rccl/lib",
    source=f"{AZHPC_IMAGES} components/install_rccl.sh @ ubuntu-hpc-mi300x-2404-2026072801 (and -2204-2026072301)")
CRUSOE_SLURM = ImageLayout(
    image="Crusoe ubuntu24.04-nvidia-slurm", tests_dir="/opt/nccl-tests/build", mpi_module=None,
    source="crusoecloud/slurm README.md @ v3.0.0, MPI")
CRUSOE_GB200 = ImageLayout(
    image="Crusoe GB200 custom image (solutions-library slurm-custom-image)", tests_dir="/opt/nccl-tests/build",
    mpi_module=None, launcher="mpirun", mpirun="/opt/hpcx/ompi/bin/mpirun",
    source="crusoecloud/solutions-library slurm-custom-image/roles/ompi/tasks/main.yaml @ 8becda6 (PR #88 merge; "
           "the rebuild --with-slurm --with-pmix=/opt/pmix is there since 02e97cc)")

# What Azure NHC's RCCL check sets on ND MI300X v5 (customTests/azure_rccl_allreduce.nhc): relaxed PCIe ordering
# for the HCAs and eth0 for the bootstrap, passed to every rank with -x (ENVIRON_VARS at v0.4.5 and 0e0a1ac2);
# HSA_NO_SCRATCH_RECLAIM=1 (the ROCm runtime keeps kernels' scratch memory instead of reclaiming it) only from
# 0e0a1ac2 on (commit beb050b), written into RCCL_ARGS after the binary, so there all_reduce_perf gets it as an
# argument, not the ranks as an environment variable: hpcconf exports it, the setting the check names. It selects
# no HCA (no NCCL_IB_HCA), nor does Azure's image test (verify_rccl_installation), so neither does hpcconf.
# The variables themselves are the AMD profile's azure_image_env (data/accelerators.yaml).
AZURE_RCCL_ENV_SOURCE = ("Azure/azurehpc-health-checks customTests/azure_rccl_allreduce.nhc @ 0e0a1ac2: ENVIRON_VARS "
                         "passes relaxed ordering and eth0 to every rank (also at v0.4.5); HSA_NO_SCRATCH_RECLAIM=1 "
                         "stands in its RCCL_ARGS, after the binary (commit beb050b), and is exported here")

AZURE_LAYOUTS = (AZURE_NVIDIA, AZURE_GB200, AZURE_MI300X)
# The names accelerator profiles give them (data/accelerators.yaml azure_image_layouts, per host architecture).
AZURE_LAYOUT_NAMES = {"azhpc-nvidia": AZURE_NVIDIA, "azhpc-gb200": AZURE_GB200, "azhpc-mi300x": AZURE_MI300X}


def layout(sku: "Sku") -> Optional[ImageLayout]:
    """The layout of the image a node of this size runs on its provider's Slurm (None: unknown, e.g. your own nodes,
    or an accelerator whose profile names no Azure image for the host architecture)."""
    if sku.provider == "azure":
        names = dict(profile(sku.gpu.vendor).azure_image_layouts)
        return AZURE_LAYOUT_NAMES[names[sku.cpu.arch]] if sku.cpu.arch in names else None
    if sku.provider == "crusoe":
        return CRUSOE_GB200 if sku.nvlink_spans_nodes else CRUSOE_SLURM
    return None


# Directories Azure's images do not have, with the one they do: a hand-written job naming the first
# fails with "No such file or directory" on every rank.
AZURE_MISSING_DIRS = {"/opt/rccl-tests/build": AZURE_MI300X}

# crusoecloud/slurm README.md at v3.0.0: "For GB200 and B200, you must create a custom image based on the
# latest official GB200 or B200 Crusoe Cloud image ... and populate the 'custom_image' property"; its
# examples/example-gb200-and-cpu-partitions.tfvars sets custom_image and leaves image null.
CRUSOE_CUSTOM_IMAGE_TYPES = frozenset({"gb200-186gb-nvl-ib.4x", "gb200-186gb-nvl.4x", "b200-180gb-sxm-ib.8x"})
CRUSOE_CUSTOM_IMAGE_SOURCE = "crusoecloud/slurm README.md @ v3.0.0 (GB200 and B200 need a custom image)"


def crusoe_needs_custom_image(instance_type: str) -> bool:
    return instance_type in CRUSOE_CUSTOM_IMAGE_TYPES
