"""The NCCL test image's build context: Dockerfile, nccl-tests build script, topology files.

The Dockerfile copies the topology file (never the graph: nothing in the job would point at it) to the path the AKS job's NCCL_TOPO_FILE
names (no AKS job, no copy), from the same resolved value, so the two cannot drift apart (jingchaozhang.github.io (2023) copied
ndv4-topo.xml into /workspace and pointed the job at /workspace/ndv4-topo.xml by hand).
"""

from __future__ import annotations

from ..artifacts import Artifact, Kind
from ..knowledge import rocm
from ..resolve import ResolvedCluster
from ..resolve.nccl import IMAGE_WORKDIR
from ..templating import generated_by, render_template
from ._common import NCCL_TESTS_DIR, RCCL_TESTS_DIR, nccl_tests_binary, topology_artifacts

MPI_HOME = "/usr/local/mpi"  # Open MPI in NVIDIA's PyTorch images (the 2023 NDm_v4 AKS walkthroughs (jingchaozhang.github.io, Azure HPC blog) build with it)


# The OCI platform a non-x86_64 pool's image is built for (x86_64 keeps the plain `docker build` of
# the machine that builds it, as before).
OCI_PLATFORMS = {"arm64": "linux/arm64"}


def render(cluster: ResolvedCluster) -> list[Artifact]:
    pool = cluster.test_pool
    if cluster.test_image is None or pool is None:
        return []
    if pool.collective_library == "rccl":
        return render_rccl(cluster)
    # Only the AKS job points NCCL_TOPO_FILE into the image; without it (a Slurm cluster that builds the
    # image for its own use) a copied topology file is read by nothing (DKR005), so none is copied.
    topo_files = topology_artifacts(pool, "image", "test-image", with_graph=False) if "aks" in cluster.platforms else []
    copies = [(a.path.rsplit("/", 1)[-1], f"{IMAGE_WORKDIR}/{a.path.rsplit('/', 1)[-1]}") for a in topo_files]
    header = generated_by(cluster.spec_file)
    dockerfile = render_template(
        "image/Dockerfile.j2", header=header, base=cluster.test_image.base, workdir=IMAGE_WORKDIR,
        platform=OCI_PLATFORMS.get(pool.sku.cpu.arch),
        copies=copies, image_ref=cluster.test_image_ref, pool=pool.name, sku=pool.sku.name)
    build_script = render_template(
        "image/nccl-tests.sh.j2", header=header, version=cluster.versions.nccl_tests, directory=NCCL_TESTS_DIR,
        mpi_home=MPI_HOME, binary=nccl_tests_binary(cluster.nccl_test.collective))
    return [
        Artifact("image/Dockerfile", dockerfile, Kind.DOCKERFILE, "test-image"),
        Artifact("image/nccl-tests.sh", build_script, Kind.SHELL_SCRIPT, "test-image"),
        *topo_files,
    ]


def render_rccl(cluster: ResolvedCluster) -> list[Artifact]:
    """An AMD pool's image: ROCm base, RCCL and Open MPI from apt, rccl-tests built at a pinned commit.

    No topology file: Azure ships none for ND MI300X v5, and hpcconf's topology files describe NVIDIA GPUs.
    """
    pool = cluster.test_pool
    assert pool is not None and cluster.test_image is not None
    header = generated_by(cluster.spec_file)
    dockerfile = render_template(
        "image/Dockerfile.rocm.j2", header=header, base=cluster.test_image.base, workdir=IMAGE_WORKDIR,
        image_ref=cluster.test_image_ref, pool=pool.name, sku=pool.sku.name)
    build_script = render_template(
        "image/rccl-tests.sh.j2", header=header, repo=rocm.RCCL_TESTS_REPO, commit=rocm.RCCL_TESTS_COMMIT,
        directory=RCCL_TESTS_DIR, mpi_home=rocm.UBUNTU_OPENMPI_HOME, rocm_path=rocm.ROCM_PATH,
        binary=nccl_tests_binary(cluster.nccl_test.collective, "rccl"))
    return [
        Artifact("image/Dockerfile", dockerfile, Kind.DOCKERFILE, "test-image"),
        Artifact("image/rccl-tests.sh", build_script, Kind.SHELL_SCRIPT, "test-image"),
    ]
