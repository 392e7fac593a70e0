"""The collective library a pool's GPUs run (NCCL, or RCCL on AMD Instinct), and the test image that builds its
tests, resolved once so the targets read fields instead of comparing library names.

RCCL reads the ``NCCL_*`` names but its settings file is ``/etc/rccl.conf`` (ROCm/rccl src/misc/param.cc), never
``/etc/nccl.conf``; ROCm/rccl-tests builds the same binary names as nccl-tests.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ..knowledge.accelerators import AcceleratorProfile
from ..spec.model import TestImage
from .nccl import IMAGE_WORKDIR

# The OCI platform a non-x86_64 pool's image is built for (x86_64 keeps the plain `docker build` of
# the machine that builds it, as before).
OCI_PLATFORMS = {"arm64": "linux/arm64"}


@dataclass(frozen=True)
class ResolvedTestImage:
    """``test_image``: where the NCCL test image is pushed, and the base it is built on."""

    registry: str
    name: str
    tag: str
    base: str  # pinned by tag or digest


def resolved_test_image(image: Optional[TestImage], accelerator: Optional[AcceleratorProfile]) -> Optional[ResolvedTestImage]:
    """The spec's test image; a base the spec leaves out is the test pool's profile's (data/accelerators.yaml)."""
    if image is None:
        return None
    fields = image.model_dump()
    recipe = accelerator.test_image if accelerator is not None else None
    if "base" not in image.model_fields_set and recipe is not None:
        fields["base"] = recipe.default_base
    return ResolvedTestImage(**fields)


@dataclass(frozen=True)
class PoolCollective:
    library: str  # the SKU's gpu.collective: nccl or rccl
    label: str  # how jobs name it: NCCL, RCCL
    image_tests_dir: str  # where the test image builds the tests
    node_tests_dir: str  # where nodes conventionally keep the built tests (the Slurm job's default)
    reads_nccl_conf: bool  # the library reads /etc/nccl.conf (RCCL reads /etc/rccl.conf)
    rocm_path: Optional[str]  # the ROCm runtime the tests load (None: CUDA)

    def image_binary(self, collective: str) -> str:
        """Where the test image builds the tests' binary for ``collective`` (the AKS job runs it)."""
        return f"{self.image_tests_dir}/build/{collective}_perf"


def pool_collective(accelerator: AcceleratorProfile) -> PoolCollective:
    """The collective library of the accelerator's profile; its tests project names both tests directories
    (nccl-tests and ROCm/rccl-tests build the same binary names)."""
    tests = accelerator.collective_tests
    return PoolCollective(library=accelerator.collective, label=accelerator.collective_library,
                          image_tests_dir=f"{IMAGE_WORKDIR}/{tests}", node_tests_dir=f"/opt/{tests}/build",
                          reads_nccl_conf=accelerator.reads_nccl_conf, rocm_path=accelerator.runtime_path)


@dataclass(frozen=True)
class TestImageBuild:
    """The test image's build context: which templates, the tests' source and pins, what it copies."""

    dockerfile_template: str
    build_script_template: str
    build_script: str  # its path in the build context
    tests_dir: str
    binary: str  # the matrix's collective binary (the build checks it)
    mpi_home: str
    tests_version: Optional[str]  # nccl-tests release (NVIDIA/nccl-tests tags)
    tests_repo: Optional[str]  # rccl-tests: repository and pinned commit
    tests_commit: Optional[str]
    rocm_path: Optional[str]
    copies_topology: bool  # the AKS job points NCCL_TOPO_FILE into the image: the topology file is copied in
    platform: Optional[str]  # docker build --platform for a non-x86_64 pool


def resolve_test_image(accelerator: AcceleratorProfile, collective: PoolCollective, test_collective: str,
                       versions: object, on_aks: bool, arch: str) -> TestImageBuild:
    """The build of the test pool's image by its profile's recipe: its library's tests, the matrix's
    ``test_collective`` binary checked, the tests pinned by the recipe's ``versions`` field or commit;
    ``on_aks``: an AKS job reads the topology from the image."""
    recipe = accelerator.test_image
    if recipe is None:  # SPEC062 refuses the spec first
        raise LookupError(f"the {accelerator.collective_library} profile names no test image recipe")
    # Only the AKS job points NCCL_TOPO_FILE into the image; without it (a Slurm cluster that builds the
    # image for its own use) a copied topology file is read by nothing (DKR005), so none is copied.
    return TestImageBuild(dockerfile_template=f"image/{recipe.recipe}.Dockerfile.j2",
                          build_script_template=f"image/{recipe.recipe}.sh.j2", build_script=f"image/{recipe.recipe}.sh",
                          tests_dir=collective.image_tests_dir, binary=collective.image_binary(test_collective),
                          mpi_home=recipe.mpi_home,
                          tests_version=getattr(versions, recipe.version_pin) if recipe.version_pin else None,
                          tests_repo=recipe.tests_repo, tests_commit=recipe.tests_commit, rocm_path=collective.rocm_path,
                          copies_topology=recipe.copies_topology and on_aks, platform=OCI_PLATFORMS.get(arch))
