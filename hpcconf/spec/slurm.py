"""Spec section `slurm:`: the Slurm side of a cluster (plain Slurm, e.g. Crusoe via Terraform, and AzHOP queues).

Everything here is optional: a spec with ``platforms: [azhop]`` or ``[slurm]`` gets an sbatch
NCCL test per GPU pool from the pool and SKU alone. The ``crusoe`` block feeds the
``terraform.tfvars`` of Crusoe's Slurm Terraform module (crusoecloud/slurm); ``collectives`` picks the
MPI path the jobs use and so what goes into the MPI/UCX/UCC environment file.
"""

from __future__ import annotations

import re
from typing import Literal, Optional

from pydantic import Field, field_validator, model_validator

from .base import StrictModel
from .fields import check_module_name, check_shell_safe_path

UUID_PATTERN = r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$"
# OpenSSH public key line: type, base64 blob, optional comment (what `ssh-keygen` writes to *.pub).
_PUBLIC_KEY = re.compile(
    r"^(ssh-ed25519|ssh-rsa|ecdsa-sha2-nistp(256|384|521)|sk-ssh-ed25519@openssh\.com|sk-ecdsa-sha2-nistp256@openssh\.com)"
    r" [A-Za-z0-9+/]+={0,3}( [^\r\n]*)?$")
_PRIVATE_KEY_MARK = re.compile(r"PRIVATE KEY|^-----BEGIN|^PuTTY-User-Key-File", re.M)


def check_public_key(value: str) -> str:
    """Refuse private keys outright (they would end up in a file meant to be shared)."""
    text = value.strip()
    if _PRIVATE_KEY_MARK.search(text):
        raise ValueError("this is a private key; give the public key (the one-line contents of the .pub file) "
                         "and keep the private key off the cluster files")
    if not _PUBLIC_KEY.match(text):
        raise ValueError("not an OpenSSH public key line; expected e.g. 'ssh-ed25519 AAAAC3Nz... user@host' "
                         "(the contents of ~/.ssh/id_ed25519.pub)")
    return text


UccCollective = Literal["allgather", "allgatherv", "allreduce", "alltoall", "alltoallv", "barrier", "bcast", "reduce", "reduce_scatter", "reduce_scatterv"]


def _allreduce_only() -> list[UccCollective]:
    return ["allreduce"]


class SlurmUser(StrictModel):
    name: str = Field(pattern=r"^[a-z_][a-z0-9_-]{0,31}$", description="Linux user name (lower case, at most 32 characters).")
    uid: int = Field(ge=1000, le=2147483647, description="Numeric user id, the same on every node; 1000 and up (lower ids are system accounts).")
    ssh_public_key: str = Field(description="The user's OpenSSH public key line (contents of the .pub file). Private keys are refused.")

    @field_validator("ssh_public_key")
    @classmethod
    def _public(cls, value: str) -> str:
        return check_public_key(value)


# Versions of crusoecloud/slurm whose variables.tf differ (the repository has one tag, v3.0.0; the older
# layouts are named by the last commit that has them):
#   v3.0.0   (9cc693e, 2026-04-20 on): `partitions` list of {name, count, type, ib_partition_id, image, ...};
#            one Slurm partition per entry, named by it.
#   9f57d5e  (120d7a4, 2024-08-06, to 9f57d5e, 2025-10-11): slurm_compute_node_type/_count/_ib_partition_id;
#            every compute node in partition "batch".
#   b115d0c  (b067ccd, 2024-05-11, to b115d0c, 2024-06-16): slurm_compute_node_type/_count/_ib_network_id
#            (the module creates the IB partition); partition "batch".
CRUSOE_MODULE_VERSIONS = ("v3.0.0", "9f57d5e", "b115d0c")
CrusoeModuleVersion = Literal["v3.0.0", "9f57d5e", "b115d0c"]


class CrusoeSlurm(StrictModel):
    """Variables of Crusoe's Slurm Terraform module (github.com/crusoecloud/slurm), written to terraform.tfvars."""

    module_version: CrusoeModuleVersion = Field(default="v3.0.0", description="The crusoecloud/slurm version the tfvars are for (the git ref you check out): 'v3.0.0' (current: a `partitions` list, one Slurm partition per GPU pool), '9f57d5e' (2024-08 to 2025-10: one compute node type, IB partition id, partition 'batch') or 'b115d0c' (2024-05/06: one compute node type, IB network id, partition 'batch').")

    project_id: str = Field(pattern=UUID_PATTERN, description="Crusoe project id (UUID; `crusoe projects list`).")
    location: str = Field(pattern=r"^[a-z]+-[a-z]+[0-9]+-[a-z]$", description="Crusoe location, e.g. us-east1-a or us-southcentral1-a.")
    ssh_public_key_path: str = Field(default="~/.ssh/id_ed25519.pub", description="Path of the SSH public key (*.pub) Terraform authorizes on every node.")
    vpc_subnet_id: str = Field(pattern=UUID_PATTERN, description="VPC subnet id (UUID; `crusoe networking vpc-subnets list`).")
    ib_network_id: Optional[str] = Field(default=None, pattern=UUID_PATTERN, description="InfiniBand network id (`crusoe networking ib-networks list`). Module b115d0c creates the compute nodes' IB partition in it; later versions take a partition you create in it (ib_partition_ids), and the tfvars only name it in a comment.")
    ib_partition_ids: dict[str, str] = Field(default_factory=dict, description="IB partition id per pool name (`crusoe networking ib-partitions list`), for module versions v3.0.0 and 9f57d5e; required for *-ib instance types.")
    users: list[SlurmUser] = Field(default_factory=list, description="Additional Slurm users: name, uid and SSH public key.")

    @field_validator("ssh_public_key_path")
    @classmethod
    def _pub_path(cls, value: str) -> str:
        if not value.endswith(".pub"):
            raise ValueError(f"'{value}' is not a .pub file; point at the public key (e.g. ~/.ssh/id_ed25519.pub), never the private key")
        return value

    @field_validator("ib_partition_ids")
    @classmethod
    def _partition_ids(cls, value: dict[str, str]) -> dict[str, str]:
        for pool, partition_id in value.items():
            if not re.match(UUID_PATTERN, partition_id):
                raise ValueError(f"ib_partition_ids.{pool}: '{partition_id}' is not an IB partition id (a UUID)")
        return value

    @model_validator(mode="after")
    def _module_variables(self) -> "CrusoeSlurm":
        if self.module_version == "b115d0c" and self.ib_partition_ids:
            raise ValueError("module_version b115d0c creates the IB partition from ib_network_id and has no "
                             "partition id variable; remove ib_partition_ids or use a later module_version")
        return self


class SlurmSettings(StrictModel):
    partitions: dict[str, str] = Field(default_factory=dict, description="Slurm partition per pool name (default: the pool name; AzHOP queues are partitions of the same name; Crusoe module v3.0.0 makes a partition per pool, older versions one partition 'batch' that this cannot rename).")
    test_nodes: dict[str, int] = Field(default_factory=dict, description="Nodes per NCCL test job, per pool name (default: every node of an InfiniBand pool, 1 node without InfiniBand).")
    time_limit: str = Field(default="00:20:00", pattern=r"^(\d+-)?\d{1,2}:\d{2}:\d{2}$", description="Time limit of the test job (sbatch -t), [D-]HH:MM:SS.")
    nccl_tests_dir: str = Field(default="/opt/nccl-tests/build", pattern=r"^/\S+$", description="Directory holding the nccl-tests binaries on the nodes (all_reduce_perf, ...).")
    modules: Optional[list[str]] = Field(default=None, description="Environment modules to load before the ranks start (default: the MPI the node image built the tests against: mpi/hpcx on Azure's HPC images, none on Crusoe and your own nodes).")
    collectives: Literal["nccl", "ucx", "ucc-nccl"] = Field(default="nccl", description="MPI path of the jobs: 'nccl' (nccl-tests only, no MPI tuning), 'ucx' (Open MPI over UCX with transports chosen for the SKU), 'ucc-nccl' (Open MPI collectives through UCC's NCCL team layer, plus the UCX settings). Anything but 'nccl' writes an MPI/UCX/UCC environment file.")
    ucc_nccl_collectives: list[UccCollective] = Field(
        default_factory=_allreduce_only, min_length=1, description="ucc-nccl: MPI collectives UCC routes to NCCL for CUDA buffers (UCC_TL_NCCL_TUNE).")
    crusoe: Optional[CrusoeSlurm] = Field(default=None, description="Crusoe Slurm Terraform module variables (needed when the pools use Crusoe instance types).")

    @field_validator("modules")
    @classmethod
    def _module_names(cls, value: Optional[list[str]]) -> Optional[list[str]]:
        for name in value or []:
            check_module_name(name)
        return value

    @field_validator("nccl_tests_dir")
    @classmethod
    def _tests_dir(cls, value: str) -> str:
        return check_shell_safe_path(value)
