"""Field grammars for spec strings that reach a shell line, a Dockerfile instruction or a YAML key.

Each check matches the whole value (``re.fullmatch``; a ``$`` anchor would accept a trailing
newline) against the grammar of the consumer, so what a template lays out is already a value of
the right shape; templates still quote it for their language. Messages follow the validators'
"what is wrong; how to fix it" convention (spec.load turns them into located diagnostics).
"""

from __future__ import annotations

import re

# Environment-modules names as `module avail` lists them: mpi/openmpi, gcc/12.2.0, hpcx-v2.18, cuda/12.4@x.
MODULE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+@/-]{0,199}")
# An absolute POSIX path spelled with characters that need no quoting in any shell.
SHELL_SAFE_PATH = re.compile(r"/[A-Za-z0-9_.+@/-]{0,1023}")
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,254}")

# Container image references, after github.com/distribution/reference (regexp.go):
# [domain[:port]/]path[:tag][@digest]. Only ASCII; `\w` would take any Unicode letter.
_ALNUM = r"[a-z0-9]+"
_SEPARATOR = r"(?:[._]|__|-+)"
_PATH_COMPONENT = rf"{_ALNUM}(?:{_SEPARATOR}{_ALNUM})*"
_DOMAIN_COMPONENT = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_DOMAIN = rf"(?:{_DOMAIN_COMPONENT}(?:\.{_DOMAIN_COMPONENT})*|\[[0-9a-fA-F:]+\])(?::[0-9]+)?"
_NAME = rf"(?:{_DOMAIN}/)?{_PATH_COMPONENT}(?:/{_PATH_COMPONENT})*"
_TAG = r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}"
_DIGEST = r"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}"
IMAGE_REFERENCE = re.compile(rf"(?P<name>{_NAME})(?::(?P<tag>{_TAG}))?(?:@(?P<digest>{_DIGEST}))?")
MAX_IMAGE_NAME = 255  # distribution/reference NameTotalLengthMax


def check_module_name(value: str) -> str:
    if not MODULE_NAME.fullmatch(value):
        raise ValueError(f"{value!r} is not an environment-module name; use the name `module avail` shows, "
                         "e.g. mpi/openmpi or gcc/12.2.0 (letters, digits and _ . + @ / -)")
    return value


def check_shell_safe_path(value: str) -> str:
    if not SHELL_SAFE_PATH.fullmatch(value):
        raise ValueError(f"{value!r} is not an absolute path of plain characters; write it like "
                         "/opt/nccl-tests/build (letters, digits and _ . + @ / -; no spaces, quotes, $ or `)")
    return value


def check_env_name(value: str) -> bool:
    return ENV_NAME.fullmatch(value) is not None


def check_image_reference(value: str) -> str:
    """A `registry/repo:tag@digest` reference (Dockerfile FROM takes nothing else)."""
    match = IMAGE_REFERENCE.fullmatch(value)
    if not match:
        raise ValueError(f"{value!r} is not a container image reference; write it as registry/repository:tag or "
                         "registry/repository@sha256:<digest>, e.g. nvcr.io/nvidia/pytorch:24.05-py3 "
                         "(lower-case repository, no spaces)")
    if len(match.group("name")) > MAX_IMAGE_NAME:
        raise ValueError(f"the image name is {len(match.group('name'))} characters long; "
                         f"registries accept at most {MAX_IMAGE_NAME}")
    return value


def check_nccl_conf_value(value: str) -> str:
    """A value nccl.conf can hold (it is written there as KEY=VALUE, one per line, and read back by NCCL)."""
    from ..parsers.nccl_conf import MAX_FIELD_BYTES

    if "#" in value:
        raise ValueError(f"{value!r} contains '#': NCCL would keep it in the value, and readers of nccl.conf take "
                         "it for a comment; remove it")
    if value != value.strip():
        raise ValueError(f"{value!r} has leading or trailing whitespace, which NCCL keeps in the value; remove it")
    if len(value.encode("utf-8")) > MAX_FIELD_BYTES:
        raise ValueError(f"the value is {len(value.encode('utf-8'))} bytes long; NCCL reads at most "
                         f"{MAX_FIELD_BYTES} bytes of a nccl.conf value and cuts the rest; shorten it")
    return value

