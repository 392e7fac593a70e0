"""The NCCL test image's build context: Dockerfile, nccl-tests build script, topology files.

The Dockerfile copies the topology file (never the graph: nothing in the job would point at it) to the path the AKS job's NCCL_TOPO_FILE
names (no AKS job, no copy), from the same resolved value, so the two cannot drift apart (jingchaozhang.github.io (2023) copied
ndv4-topo.xml into /workspace and pointed the job at /workspace/ndv4-topo.xml by hand).
"""

from __future__ import annotations

from ..artifacts import Artifact, Kind
from ..resolve import ResolvedCluster
from ..resolve.nccl import IMAGE_WORKDIR
from ..templating import generated_by, render_template
from ._common import topology_artifacts


def render(cluster: ResolvedCluster) -> list[Artifact]:
    pool, build = cluster.test_pool, cluster.test_image_build
    if cluster.test_image is None or pool is None or build is None:
        return []
    topo_files = topology_artifacts(pool, "image", "test-image", with_graph=False) if build.copies_topology else []
    copies = [(a.path.rsplit("/", 1)[-1], f"{IMAGE_WORKDIR}/{a.path.rsplit('/', 1)[-1]}") for a in topo_files]
    header = generated_by(cluster.spec_file)
    dockerfile = render_template(
        build.dockerfile_template, header=header, base=cluster.test_image.base, workdir=IMAGE_WORKDIR,
        platform=build.platform, copies=copies, image_ref=cluster.test_image_ref, pool=pool.name, sku=pool.sku.name)
    build_script = render_template(
        build.build_script_template, header=header, version=build.tests_version, repo=build.tests_repo,
        commit=build.tests_commit, directory=build.tests_dir, mpi_home=build.mpi_home, rocm_path=build.rocm_path,
        binary=build.binary)
    return [
        Artifact("image/Dockerfile", dockerfile, Kind.DOCKERFILE, "test-image"),
        Artifact(build.build_script, build_script, Kind.SHELL_SCRIPT, "test-image"),
        *topo_files,
    ]
