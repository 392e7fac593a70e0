"""The MPI rules on the seeds' own settings: seed 004's UCX_TLS lists (UCX-Py on ND40rs_v2) and
seed 001's MPI -> UCC -> NCCL environment (JUWELS Booster, Open MPI 4.1.4).

The settings are read out of the seed texts, so the test lints exactly what the authors ran.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hpcconf.lint.context import LintContext, lookup_sku
from hpcconf.lint.engine import lint_text


def _seed(shared: Path, number: str) -> str:
    return next((shared / "seeds").glob(f"{number}_*.txt")).read_text(encoding="utf-8")


def seed004_commands(shared: Path) -> list[dict[str, str]]:
    """The UCX_* assignments of each benchmark command line in seed 004, in order."""
    commands = []
    for line in _seed(shared, "004").splitlines():
        if "UCX_TLS=" in line and ("python" in line or "ucx_perftest" in line):
            commands.append(dict(re.findall(r"(UCX_\w+)=(\S+)", line)))
    return commands


def _lint_env(env: dict[str, str], sku: str | None = None, ucx: str | None = None) -> list:
    ctx = LintContext()
    if sku:
        ctx.sku = lookup_sku(sku)
    if ucx:
        ctx.ucx_version = ucx  # what a spec's versions.ucx supplies
    text = "".join(f"export {k}={v}\n" for k, v in env.items())
    return [f for f in lint_text(text, "ucx.env", ctx).findings if f.code.startswith("MPI")]


def _codes(findings: list) -> list[str]:
    return sorted(f.code for f in findings)


def test_seed_004_lists(shared_dir):
    tls = [c["UCX_TLS"] for c in seed004_commands(shared_dir)]
    assert "tcp,cuda_copy,sockcm" in tls and "tcp,cuda_copy,sockcm,rc" in tls and "tcp,cuda_copy,sockcm,cuda_ipc" in tls
    assert all(c.get("UCX_SOCKADDR_TLS_PRIORITY") == "sockcm" for c in seed004_commands(shared_dir))


# What each of seed 004's transport lists deserves on ND40rs_v2 (one EDR HCA, NVLink V100s) with a
# current UCX: sockcm is gone (MPI001, MPI007); no rc means MPI over TCP (0.4 vs 2.1 GB/s); no
# cuda_ipc means GPU-to-GPU copies through the host (2.1 vs 17-26 GB/s). Both measured in seed 004.
DESERVED = {
    "tcp,cuda_copy,sockcm": ["MPI001", "MPI002", "MPI002", "MPI007"],
    "tcp,cuda_copy,sockcm,rc": ["MPI001", "MPI002", "MPI007"],
    "tcp,cuda_copy,sockcm,cuda_ipc": ["MPI001", "MPI002", "MPI007"],
}


@pytest.mark.parametrize("tls", sorted(DESERVED))
def test_seed_004_findings_on_current_ucx(shared_dir, tls):
    command = next(c for c in seed004_commands(shared_dir) if c["UCX_TLS"] == tls)
    findings = _lint_env(command, sku="ND40rs_v2")
    assert _codes(findings) == DESERVED[tls], [f.message for f in findings]
    assert all(f.severity.value == "warning" for f in findings)


def test_seed_004_messages_say_what_is_missing(shared_dir):
    command = next(c for c in seed004_commands(shared_dir) if c["UCX_TLS"] == "tcp,cuda_copy,sockcm")
    messages = " ".join(f.message for f in _lint_env(command, sku="ND40rs_v2"))
    assert "sockcm" in messages and "InfiniBand" in messages and "cuda_ipc" in messages


def test_seed_004_on_its_own_ucx_keeps_only_the_sku_findings(shared_dir):
    """In 2020 (UCX 1.8) sockcm existed: only the transport choices remain worth a warning."""
    for command in seed004_commands(shared_dir):
        findings = _lint_env(command, sku="ND40rs_v2", ucx="1.8.0")
        assert {f.code for f in findings} <= {"MPI002"}, [f.message for f in findings]


def test_rc_on_a_sku_without_infiniband():
    findings = _lint_env({"UCX_TLS": "rc,sm,self,cuda_copy,cuda_ipc", "UCX_NET_DEVICES": "mlx5_0:1"},
                         sku="NC48ads_A100_v4")
    assert _codes(findings) == ["MPI002", "MPI003"]
    assert "no transport is left between nodes" in findings[0].message
    assert "has no InfiniBand" in findings[1].message


def seed001_exports(shared: Path) -> str:
    """The `export` lines of seed 001's JUWELS Booster job script."""
    return "".join(line.strip() + "\n" for line in _seed(shared, "001").splitlines()
                   if line.strip().startswith("export "))


def test_seed_001_environment_deserves_nothing(shared_dir):
    script = "#!/usr/bin/env bash\n" + seed001_exports(shared_dir)
    assert "OMPI_MCA_coll_ucc_enable=1" in script and "UCC_TL_NCCL_TUNE=allreduce:cuda:inf" in script
    for openmpi in (None, "4.1.4", "5.0.5"):
        ctx = LintContext()
        if openmpi:
            ctx.openmpi_version = openmpi
        findings = [f for f in lint_text(script, "job.sh", ctx).findings if f.code.startswith("MPI")]
        assert findings == [], (openmpi, [f.message for f in findings])


def test_seed_001_without_enable_or_priority_is_flagged(shared_dir):
    """Seed 001: 'two (if UCC heuristics select the desired TL) or three environment variables';
    leaving out the enable or the priority leaves Open MPI on its own collectives."""
    exports = seed001_exports(shared_dir)
    no_enable = "".join(l + "\n" for l in exports.splitlines() if "coll_ucc_enable" not in l)
    low_priority = exports.replace("coll_ucc_priority=100", "coll_ucc_priority=10")
    for text, needle in ((no_enable, "coll_ucc_enable is unset"), (low_priority, "not above")):
        findings = [f for f in lint_text(text, "job.env", LintContext()).findings if f.code == "MPI006"]
        assert len(findings) == 1 and needle in findings[0].message


def test_seed_001_on_open_mpi_without_coll_ucc(shared_dir):
    ctx = LintContext()
    ctx.openmpi_version = "4.1.2"
    findings = [f for f in lint_text(seed001_exports(shared_dir), "job.env", ctx).findings if f.code == "MPI006"]
    assert len(findings) == 1 and "no coll/ucc" in findings[0].message


def test_hcoll_settings_on_open_mpi_6():
    ctx = LintContext()
    ctx.openmpi_version = "6.0.0"
    findings = lint_text("export OMPI_MCA_coll_hcoll_enable=0\n", "job.env", ctx).findings
    assert [f.code for f in findings] == ["MPI005"] and "removed in 6.0" in findings[0].message
