"""Which base images decide a GPU image's collective stack (NCCL/RCCL, CUDA/ROCm, MPI), for DKR001.

An unpinned base costs something measurable only where the base brings or decides that stack: NVIDIA's
and AMD's images (``nvcr.io/``, ``nvidia/``, ``rocm/``), the framework images built on them
(``pytorch/pytorch``, ...), and an OS image whose packages the Dockerfile then installs the stack from
(``ubuntu:latest`` moves from 22.04 to 24.04, and with it apt's libnccl/openmpi). A distroless or static
final stage carries none of it. A single-word name that is not a Docker Hub official image
(``pplx-garden-dev:latest``) is usually built locally one step earlier: there is no registry tag to pin.
"""

from __future__ import annotations

import re
from enum import Enum

# Docker Hub official images (docker-library/official-images, library/) a GPU or HPC image is built FROM.
OFFICIAL_OS_AND_LANGUAGE_IMAGES = frozenset({
    "ubuntu", "debian", "centos", "rockylinux", "almalinux", "fedora", "amazonlinux", "alpine", "oraclelinux",
    "photon", "busybox", "python", "golang", "rust", "node", "openjdk", "eclipse-temurin", "gcc", "buildpack-deps",
})
# Repositories that ship the stack themselves (a substring of the repository path, lower case).
STACK_REPOSITORIES = ("nvcr.io/", "nvidia/", "rocm/", "/rocm", "pytorch", "tensorflow", "cuda", "nccl", "deepspeed",
                      "nemo", "megatron", "jax", "huggingface", "mosaicml", "hpcx", "openmpi", "dkr.ecr.",
                      "deep-learning", "azureml", "aznhc", "mcr.microsoft.com/")
NO_STACK_REPOSITORIES = ("distroless", "/static", "scratch")
# Words in a Dockerfile that install or use the stack on top of an OS image.
STACK_WORDS = re.compile(r"nccl|rccl|cuda|rocm|openmpi|\bmpi|hpcx|\bucx|\befa\b|libfabric|torch", re.I)


class BaseImageRole(Enum):
    DECIDES_STACK = "decides-stack"  # pinning it pins NCCL/CUDA/MPI
    NO_STACK = "no-stack"  # the image carries no collective stack: pinning is hygiene
    LOCAL_OR_UNKNOWN = "local-or-unknown"  # a name no registry serves as is: probably built locally


def base_image_role(image: str, dockerfile_text: str) -> BaseImageRole:
    repository = image.partition("@")[0]
    last = repository.rsplit("/", 1)[-1]
    if ":" in last:
        repository = repository[: len(repository) - len(last)] + last.split(":", 1)[0]
    lower = repository.lower()
    if any(word in lower for word in NO_STACK_REPOSITORIES):
        return BaseImageRole.NO_STACK
    if any(word in lower for word in STACK_REPOSITORIES):
        return BaseImageRole.DECIDES_STACK
    if "/" not in lower and lower not in OFFICIAL_OS_AND_LANGUAGE_IMAGES:
        return BaseImageRole.LOCAL_OR_UNKNOWN
    return BaseImageRole.DECIDES_STACK if STACK_WORDS.search(dockerfile_text) else BaseImageRole.NO_STACK


# ENV names that common base images set themselves, so that a ``$NAME`` in a stage built FROM one of them is
# not empty even without an ``ARG NAME`` there (DKR007 says info, naming the base, instead of warning):
# NVIDIA's CUDA images (gitlab.com/nvidia/container-images/cuda, dist/<version>/<os>/{base,runtime,devel}/
# Dockerfile: ``ENV CUDA_VERSION``, ``NCCL_VERSION``, ``NV_LIBNCCL_PACKAGE_VERSION``, ``NVIDIA_VISIBLE_DEVICES``,
# ``NVARCH``), the NGC framework images built on them (``PYTORCH_VERSION``, ``CUDNN_VERSION``, ``HPCX_VERSION``, ``MOFED_VERSION``,
# ``OPENMPI_VERSION``, ``TRT_VERSION``, ``DALI_VERSION``), ROCm's images (``ROCM_VERSION``) and the Docker Hub
# ``python`` image (``PYTHON_VERSION``). PATH and HOME are set by every image's runtime or config.
BASE_IMAGE_ENV = re.compile(
    r"^(?:NV_\w+|NVIDIA_\w+|NVARCH|"
    r"(?:CUDA|CUDA_DRIVER|NCCL|CUDNN|PYTORCH|TENSORFLOW|TRT|TENSORRT|HPCX|OPENMPI|UCX|ROCM|DALI|PYTHON|CUBLAS|MOFED)"
    r"_VERSION)$")
ALWAYS_SET_ENV = frozenset({"PATH", "HOME", "HOSTNAME", "TERM", "LANG"})


def base_may_set(name: str) -> bool:
    """Whether a common base image sets ENV ``name`` itself (see BASE_IMAGE_ENV)."""
    return name in ALWAYS_SET_ENV or bool(BASE_IMAGE_ENV.match(name))
