"""GB200/GB300 NVL72 (Grace arm64 hosts, 4 GPUs per VM, one NVLink domain of 72 GPUs over 18 VMs).

Platform slurm compiles them: no x86-only artifact, a job that keeps its nodes in one NVLink domain
and forces MNNVL, and a setup script that sets each node's IMEX peers and writes a topology/block
topology.conf (run here against stand-in srun/nvidia-smi/ip/systemctl commands). AKS and AzHOP
refuse them with the reason.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from hpcconf.catalog import Catalog
from hpcconf.init_spec import _refusal, init_context, render_init_spec
from hpcconf.knowledge import mnnvl
from hpcconf.knowledge.nccl_floors import load_floors
from hpcconf.pipeline import compile_spec
from hpcconf.resolve.slurm import CrusoePartition
from hpcconf.targets.slurm import _hcl_partition

CATALOG = Catalog.load()
NVL72 = [sku.name for sku in CATALOG if sku.nvlink_spans_nodes]
# What only runs on x86: architecture names, x86 image names, x86 topology declarations.
X86_ONLY = re.compile(r"x86_64|x86-64|amd64|\bi[3-6]86\b|almalinux-x86|AuthenticAMD|GenuineIntel")


def _build(sku_name: str, nodes: int, test_image: bool = False):
    context = init_context(CATALOG.get(sku_name), nodes, ["slurm"], "nvl", None, None, "spec.yaml", "test")
    text = render_init_spec(context)
    if test_image:
        text += 'test_image: {registry: myacr.azurecr.io, tag: "25.10", base: "nvcr.io/nvidia/pytorch:24.05-py3"}\n'
    return compile_spec("spec.yaml", text=text, display_name="spec.yaml")


def _artifact(build, suffix: str) -> str:
    return next(a.content for a in build.artifacts if a.path.endswith(suffix))


def test_the_catalog_has_nvl72_sizes():
    assert {"Standard_ND128isr_NDR_GB200_v6", "Standard_ND128isr_GB300_v6", "gb200-186gb-nvl-ib.4x"} <= set(NVL72)


def test_crusoe_gb200_asks_the_module_for_imex_and_writes_no_setup_script():
    """crusoecloud/slurm sets IMEX up (imex_support = true, its GB200 example); block topology stays its README's step."""
    build = _build("gb200-186gb-nvl-ib.4x", 18)
    tfvars = _artifact(build, "slurm/terraform.tfvars")
    assert 'type            = "gb200-186gb-nvl-ib.4x"' in tfvars and "imex_support    = true" in tfvars
    assert not any(a.path.endswith("nvlink-domains.sh") for a in build.artifacts)
    sbatch = _artifact(build, "all_reduce_perf.sbatch")
    assert "#SBATCH --segment=18\n" in sbatch and "export NCCL_MNNVL_ENABLE=1\n" in sbatch
    assert "#SBATCH --gpus-per-node=4\n" in sbatch


@pytest.mark.parametrize("sku_name", NVL72)
def test_slurm_output_has_no_x86_only_artifact(sku_name):
    build = _build(sku_name, 18, test_image=True)
    paths = {a.path for a in build.artifacts}
    assert {"slurm/gpu/all_reduce_perf.sbatch", "image/Dockerfile"} <= paths
    # Crusoe's Slurm module sets IMEX up itself (imex_support); hpcconf's setup script is for plain Slurm.
    assert ("slurm/gpu/nvlink-domains.sh" in paths) == (CATALOG.get(sku_name).provider != "crusoe")
    for artifact in build.artifacts:
        assert not X86_ONLY.search(artifact.content), (artifact.path, X86_ONLY.search(artifact.content))
    dockerfile = _artifact(build, "image/Dockerfile")
    froms = [line for line in dockerfile.splitlines() if line.startswith("FROM")]
    assert froms == ["FROM --platform=linux/arm64 nvcr.io/nvidia/pytorch:24.05-py3"]
    assert "docker buildx build --platform linux/arm64" in dockerfile


@pytest.mark.parametrize("nodes, segment", [(18, 18), (2, 2), (36, 18), (20, None)])
def test_job_keeps_its_nodes_in_one_nvlink_domain_and_forces_mnnvl(nodes, segment):
    sbatch = _artifact(_build("Standard_ND128isr_NDR_GB200_v6", nodes), "all_reduce_perf.sbatch")
    if segment is None:
        assert "--segment" not in sbatch.replace("no --segment", "")
        assert "no whole number of 18-VM NVLink domains" in sbatch
    else:
        assert f"#SBATCH --segment={segment}\n" in sbatch
    assert "export NCCL_MNNVL_ENABLE=1\n" in sbatch
    assert "systemctl is-active --quiet nvidia-imex" in sbatch and "/dev/nvidia-caps-imex-channels/channel*" in sbatch
    assert "NCCL_CUMEM_ENABLE=0" not in sbatch


def test_other_sizes_get_no_mnnvl_setting():
    build = _build("Standard_ND96isr_H200_v5", 2)
    sbatch = _artifact(build, "all_reduce_perf.sbatch")
    assert "MNNVL" not in sbatch and "--segment" not in sbatch and "imex" not in sbatch
    assert not any(a.path.endswith("nvlink-domains.sh") for a in build.artifacts)


def test_a_spec_setting_of_mnnvl_wins():
    context = init_context(CATALOG.get("Standard_ND128isr_GB300_v6"), 2, ["slurm"], "nvl", None, None, "s.yaml", "t")
    text = render_init_spec(context) + "nccl_env: {NCCL_MNNVL_ENABLE: \"2\"}\n"
    build = compile_spec("s.yaml", text=text, display_name="s.yaml")
    sbatch = _artifact(build, "all_reduce_perf.sbatch")
    assert "export NCCL_MNNVL_ENABLE=2\n" in sbatch and "NCCL_MNNVL_ENABLE=1" not in sbatch


@pytest.mark.parametrize("sku_name", NVL72)
@pytest.mark.parametrize("platform, reason", [("aks", "ComputeDomain"), ("azhop", "cyclecloud-slurm")])
def test_aks_and_azhop_refuse_with_the_reason(sku_name, platform, reason):
    sku = CATALOG.get(sku_name)
    refusal = _refusal(sku, [platform])
    # A Crusoe instance type is refused first for what it is (SPEC080): neither platform creates Crusoe VMs.
    reason = "is a Crusoe instance type" if sku.provider == "crusoe" else reason
    assert refusal is not None and reason in refusal and "platform slurm" in refusal


@pytest.mark.parametrize("sku_name", NVL72)
def test_slurm_accepts_them(sku_name):
    assert _refusal(CATALOG.get(sku_name), ["slurm"]) is None


def test_crusoe_partitions_of_an_nvl72_size_ask_the_module_for_imex():
    partition = CrusoePartition(name="gpu", pool="gpu", count=18, instance_type="gb200", ib_partition_id=None,
                                image="img", default=True, imex_support=True)
    assert _hcl_partition(partition)["imex_support"] == "true"
    assert _hcl_partition(CrusoePartition(**{**partition.__dict__, "imex_support": False}))["imex_support"] == "false"


def test_segment_sizes_and_version_floors():
    assert mnnvl.domain_nodes(72, 4) == 18
    assert [mnnvl.segment_size(n, 18) for n in (1, 18, 36, 40)] == [1, 18, 18, None]
    assert mnnvl.nccl_gap("2.20.5") is mnnvl.NCCL_MNNVL_ENABLE and mnnvl.nccl_gap("2.21.5") is None
    assert mnnvl.slurm_gap("23.02.7") is mnnvl.SLURM_BLOCK_TOPOLOGY
    assert mnnvl.slurm_gap("23.11.4") is mnnvl.SLURM_SEGMENT and mnnvl.slurm_gap("24.05") is None
    assert mnnvl.slurm_gap(None) is None and mnnvl.nccl_gap(None) is None


def test_gb200_has_the_health_check_floor_and_gb300_only_the_full_rack_one():
    """No single-node GB300 health-check conf is published; Azure's NCCL baseline sets the full-rack line."""
    floors = load_floors().floors
    rows = {f.sku: f for f in floors if f.nodes == 1}
    gb200 = rows["Standard_ND128isr_NDR_GB200_v6"]
    assert (gb200.gbps, gb200.ranks, gb200.nodes, gb200.message_size) == (432.0, 4, 1, "16G")
    assert "Standard_ND128isr_GB300_v6" not in rows
    gb300 = [(f.nodes, f.ranks, f.gbps) for f in floors if f.sku == "Standard_ND128isr_GB300_v6"]
    assert gb300 == [(18, 72, 600.0)]


# ----------------------------------------------------------------------------- the setup script, run

FAKE_SRUN = r"""#!/bin/bash
# srun stand-in: runs the command once per node (-w list, else $FAKE_NODES), as that node, with /etc under $FAKE_ROOT/<node>.
hosts=""
while [ $# -gt 0 ]; do
  case "$1" in -w) hosts="$2"; shift 2;; -p|-N) shift 2;; --*) shift;; *) break;; esac
done
[ -n "$hosts" ] || hosts="$FAKE_NODES"
for host in ${hosts//,/ }; do
  args=("$@"); last="${args[-1]}"; unset 'args[-1]'
  FAKE_HOST=$host "${args[@]}" "${last//\/etc\//$FAKE_ROOT/$host/etc/}"
done
"""
FAKE_NVIDIA_SMI = r"""#!/bin/bash
case " ${FAKE_DOMAIN_A:-n1 n2 n3} " in *" $FAKE_HOST "*) uuid=aaaa-1111; clique=32766;; *) uuid=bbbb-2222; clique=32766;; esac
printf '    Fabric\n        State                             : Completed\n        Status                            : Success\n'
printf '        CliqueId                          : %s\n        ClusterUUID                       : %s\n' "$clique" "$uuid"
"""
FAKE_IP = r"""#!/bin/bash
echo "2: eth0    inet 10.0.0.${FAKE_HOST#n}/24 brd 10.0.0.255 scope global eth0"
"""
FAKE_HOSTNAME = '#!/bin/bash\necho "$FAKE_HOST"\n'
FAKE_SYSTEMCTL = '#!/bin/bash\necho "$FAKE_HOST $*" >> "$FAKE_ROOT/systemctl.log"\n'


def _run_setup(tmp_path, nodes: int, domain_a: str):
    script = _artifact(_build("Standard_ND128isr_NDR_GB200_v6", nodes), "nvlink-domains.sh")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, body in {"srun": FAKE_SRUN, "nvidia-smi": FAKE_NVIDIA_SMI, "ip": FAKE_IP,
                       "hostname": FAKE_HOSTNAME, "systemctl": FAKE_SYSTEMCTL}.items():
        (bin_dir / name).write_text(body)
        (bin_dir / name).chmod(0o755)
    (tmp_path / "nvlink-domains.sh").write_text(script)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "FAKE_ROOT": str(tmp_path),
           "FAKE_NODES": ",".join(f"n{i}" for i in range(1, nodes + 1)), "FAKE_DOMAIN_A": domain_a,
           "TOPOLOGY_CONF": str(tmp_path / "topology.conf")}
    return subprocess.run(["bash", str(tmp_path / "nvlink-domains.sh")], env=env, capture_output=True, text=True,
                          cwd=tmp_path, timeout=60)


@pytest.mark.skipif(shutil.which("bash") is None or shutil.which("awk") is None, reason="needs bash and awk")
def test_setup_script_writes_the_block_topology_as_azslurm_does(tmp_path):
    """A whole rack of 18 and 2 VMs of another: azslurm's form (azure-slurm/slurmcc/topology.py
    write_block_topology at 4.0.9, README `--block_size 18`): largest block first, the short one commented out."""
    run = _run_setup(tmp_path, 20, " ".join(f"n{i}" for i in range(1, 19)))
    assert run.returncode == 0, run.stderr
    topology = (tmp_path / "topology.conf").read_text().splitlines()
    rack = ",".join(f"n{i}" for i in range(1, 19))
    assert topology[1:] == [
        "# Total number of blocks = 2",
        "# Number of Nodes in Block 1: 18", "# ClusterUUID and CliqueID: aaaa-1111 32766",
        f"BlockName=gpu-nvl1 Nodes={rack}",
        "# Number of Nodes in Block 2: 2", "# ClusterUUID and CliqueID: bbbb-2222 32766",
        "# Warning: Block 2 has less than 18 nodes, commenting out", "#BlockName=gpu-nvl2 Nodes=n19,n20",
        "BlockSizes=18"]
    assert "wrote " in run.stdout and "(1 of 2 NVLink domains as blocks)" in run.stdout


@pytest.mark.skipif(shutil.which("bash") is None or shutil.which("awk") is None, reason="needs bash and awk")
def test_setup_script_writes_imex_peers_per_domain_and_no_topology_without_a_whole_block(tmp_path):
    run = _run_setup(tmp_path, 5, "n1 n2 n3")
    # Blocks of 3 and 2 are both below the base block of 5 (the pool): topology/block with no block would stop
    # slurmctld, so no topology.conf is written, and the script says why.
    assert run.returncode != 0 and "no NVLink domain has 5 nodes up" in run.stderr
    assert not (tmp_path / "topology.conf").exists()
    peers = {host: (tmp_path / host / "etc/nvidia-imex/nodes_config.cfg").read_text().split() for host in
             ("n1", "n2", "n3", "n4", "n5")}
    assert peers["n1"] == peers["n2"] == peers["n3"] == ["10.0.0.1", "10.0.0.2", "10.0.0.3"]
    assert peers["n4"] == peers["n5"] == ["10.0.0.4", "10.0.0.5"]
    assert sorted((tmp_path / "systemctl.log").read_text().splitlines()) == [
        f"n{i} restart nvidia-imex" for i in range(1, 6)]


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_setup_script_stops_when_a_gpu_has_not_joined_the_fabric(tmp_path):
    script = _artifact(_build("Standard_ND128isr_NDR_GB200_v6", 2), "nvlink-domains.sh")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, body in {"srun": FAKE_SRUN, "nvidia-smi": "#!/bin/bash\necho '    Fabric'\n", "ip": FAKE_IP,
                       "hostname": FAKE_HOSTNAME, "systemctl": FAKE_SYSTEMCTL}.items():
        (bin_dir / name).write_text(body)
        (bin_dir / name).chmod(0o755)
    (tmp_path / "s.sh").write_text(script)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "FAKE_ROOT": str(tmp_path),
           "FAKE_NODES": "n1,n2", "TOPOLOGY_CONF": str(tmp_path / "topology.conf")}
    run = subprocess.run(["bash", str(tmp_path / "s.sh")], env=env, capture_output=True, text=True, cwd=tmp_path,
                         timeout=60)
    assert run.returncode != 0 and "no NVLink fabric ClusterUUID" in run.stderr
    assert not Path(tmp_path / "topology.conf").exists()


def test_cumem_off_on_an_nvl72_size_is_a_warning_and_with_forced_mnnvl_an_error(tmp_path):
    from hpcconf.lint.context import LintContext, lookup_sku
    from hpcconf.lint.engine import lint_paths

    conf = tmp_path / "nccl.conf"
    conf.write_text("NCCL_CUMEM_ENABLE=0\n")
    for sku, expected in (("ND128isr_NDR_GB200_v6", ["warning"]), ("ND96isr_H200_v5", [])):
        ctx = LintContext()
        ctx.sku = lookup_sku(sku)
        found = [f.severity.value for f in lint_paths([str(conf)], ctx).findings if f.code == "NCCL050"]
        assert found == expected, sku
    conf.write_text("NCCL_MNNVL_ENABLE=1\nNCCL_CUMEM_ENABLE=0\n")
    assert [f.severity.value for f in lint_paths([str(conf)], LintContext()).findings
            if f.code == "NCCL050"] == ["error"]


def test_an_arm64_pool_on_slurm_gets_no_x86_health_check_image():
    """review26b N1: azurehpc-health-checks at the pinned commit builds its image for x86_64 only: the GB200 pool
    gets no installer that would pull it, no HealthCheckProgram and no pre-flight reading its status."""
    build = _build("Standard_ND128isr_NDR_GB200_v6", 18)
    paths = [a.path for a in build.artifacts]
    assert not [p for p in paths if "health" in p], paths
    assert not any("aznhc" in a.content for a in build.artifacts)
    assert "nhc.status" not in _artifact(build, ".sbatch")

