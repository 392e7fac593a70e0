"""The Slurm artifacts of the two examples against seeds 002 (Crusoe) and 001/004 (UCX/UCC).

Oracles: seed 002's terraform.tfvars, /etc/nccl.conf and srun line; the UCX_TLS and UCC tune
grammars (hpcconf.knowledge.grammars, research nccl.md §7); and the linter, which must find
nothing above info in anything the examples generate.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from hpcconf.catalog import Catalog
from hpcconf.diagnostics import Severity
from hpcconf.knowledge.grammars import check_ucc_tune, check_ucx_net_devices, check_ucx_tls
from hpcconf.lint.context import LintContext
from hpcconf.lint.engine import lint_paths
from hpcconf.pipeline import compile_spec
from hpcconf.targets.slurm import hcl_string
from hpcconf.yamlio import dump_yaml

REPO = Path(__file__).resolve().parents[1]
CRUSOE = REPO / "examples" / "crusoe-h100-slurm.yaml"
NDV2 = REPO / "examples" / "nd40rs-v2-ucx.yaml"


def _artifacts(spec: Path, *extra) -> dict[str, str]:
    return {a.path: a.content for a in compile_spec(spec, *extra).artifacts}


def _seed002(shared: Path) -> str:
    return next((shared / "seeds").glob("002_*.txt")).read_text(encoding="utf-8")


def _hcl_assignments(text: str) -> dict[str, str]:
    """Top-level ``name = value`` of a tfvars file, comments dropped (seed 002 has trailing ones)."""
    out = {}
    for line in text.splitlines():
        match = re.match(r"^([a-z_]+) = (.*?)\s*(#.*)?$", line)
        if match:
            out[match.group(1)] = match.group(2)
            if match.group(1) == "slurm_users":
                break  # the user objects' fields follow, unindented in the seed
    return out


def _users(text: str) -> list[dict[str, str]]:
    return [dict(re.findall(r"(name|uid|ssh_pubkey)\s*=\s*(\"[^\"]*\"|\d+)", block))
            for block in re.findall(r"\{(.*?)\}", text[text.index("slurm_users"):], re.S)]


# --------------------------------------------------------------------------- Crusoe (seed 002)

def _crusoe_at(tmp_path: Path, version: str) -> dict[str, str]:
    """The Crusoe example for an older crusoecloud/slurm layout (no partition ids before 9f57d5e)."""
    text = CRUSOE.read_text(encoding="utf-8").replace("module_version: v3.0.0", f"module_version: {version}")
    if version == "b115d0c":
        text = re.sub(r"    ib_partition_ids:.*\n      h100: .*\n", "", text)
    spec = tmp_path / CRUSOE.name
    spec.write_text(text, encoding="utf-8")
    return _artifacts(spec)


def test_tfvars_has_seed_002_variables_with_values(shared_dir, tmp_path):
    """Seed 002 used the module's 2024-05 layout (b115d0c): its tfvars, reproduced at that version."""
    seed = _seed002(shared_dir)
    seed_vars = _hcl_assignments(seed[seed.index("# common configuration"):seed.index("2. After")])
    ours_text = _crusoe_at(tmp_path, "b115d0c")["slurm/terraform.tfvars"]
    ours = _hcl_assignments(ours_text)
    assert set(ours) == set(seed_vars)
    for name in ("location", "ssh_public_key_path", "vpc_subnet_id", "slurm_compute_node_type", "slurm_compute_node_count"):
        assert ours[name] == seed_vars[name], name
    for name in ("project_id", "slurm_compute_node_ib_network_id"):  # blank placeholders in the seed
        assert re.fullmatch(r'"[0-9a-f-]{36}"', ours[name]), name
    assert _users(ours_text) == _users(seed[seed.index("slurm_users"):seed.index("2. After")])


def test_tfvars_strings_are_quoted_for_hcl():
    assert hcl_string("a\"b") == '"a\\"b"'
    assert hcl_string("${var.x} %{ if }") == '"$${var.x} %%{ if }"'
    ours = _hcl_assignments(_artifacts(CRUSOE)["slurm/terraform.tfvars"])
    for name, value in ours.items():
        if name not in ("partitions", "slurm_users"):
            assert json.loads(value), name  # a JSON string is an HCL string once ${ is escaped


def test_crusoe_nccl_conf_reproduces_seed_002(shared_dir):
    seed = _seed002(shared_dir)
    block = seed[seed.index("/etc/nccl.conf file"):seed.index("5. Then")]
    seed_conf = dict(line.split("=", 1) for line in block.splitlines()[1:] if "=" in line and not line.startswith("#"))
    ours = dict(line.split("=", 1) for line in _artifacts(CRUSOE)["nccl/h100/nccl.conf"].splitlines()
                if "=" in line and not line.startswith("#"))
    assert seed_conf["NCCL_IB_HCA"] == "^mlx5_0:1" and seed_conf["NCCL_ALGO"] == "NVLSTree"
    # Seed 002's global NCCL_ALGO=NVLSTree strands single-node jobs and every collective but
    # AllReduce; ours asks for NVLSTree for AllReduce only, with Ring beside it.
    assert seed_conf.pop("NCCL_ALGO") == "NVLSTree" and ours["NCCL_ALGO"] == "allreduce:NVLSTree,Ring"
    for key, value in seed_conf.items():
        assert ours.get(key) == value, key


def test_crusoe_sbatch_runs_seed_002_srun(shared_dir):
    seed = _seed002(shared_dir)
    seed_srun = shlex.split(re.search(r"^srun .*$", seed, re.M).group(0))
    script = _artifacts(CRUSOE)["slurm/h100/all_reduce_perf.sbatch"]
    assert "#SBATCH --nodes=2" in script and "#SBATCH -p h100" in script  # module v3.0.0: a partition per pool
    assert "--mpi=pmix" in seed_srun and "--mpi=pmix" in script
    assert "--ntasks-per-node=8" in seed_srun and "#SBATCH --ntasks-per-node=8" in script
    assert "--gres=gpu:8" in seed_srun and "#SBATCH --gpus-per-node=8" in script
    binary_at = next(i for i, w in enumerate(seed_srun) if w.endswith("all_reduce_perf"))
    seed_args = seed_srun[binary_at:]
    # The job runs a collective matrix, all_reduce first: ${test}_perf with the same arguments each time.
    assert "TESTS=(all_reduce " in script and 'for test in "${TESTS[@]}"' in script
    our_call = re.search(r"^\s*(/\S+\$\{test\}_perf .*?) 2>&1 \| tee", script, re.M).group(1).split()
    assert our_call[0].replace("${test}", "all_reduce") == seed_args[0]
    seed_flags = dict(zip(seed_args[1::2], seed_args[2::2]))
    our_flags = dict(zip(our_call[1::2], our_call[2::2]))
    # Seed 002 prints `-e 1G` but its log ran to maxBytes 2147483648, where its 460 GB/s row is: we run to 2G.
    assert "maxBytes 2147483648" in seed and our_flags.pop("-e") == "2G" and seed_flags.pop("-e") == "1G"
    assert {k: our_flags[k] for k in seed_flags} == seed_flags
    for key, value in (("NCCL_IB_HCA", "'^mlx5_0:1'"), ("NCCL_ALGO", "allreduce:NVLSTree,Ring")):
        assert f"export {key}={value}" in script


def test_crusoe_cpus_per_task_follows_vcpus(tmp_path, shared_dir):
    """Seed 002 ran --cpus-per-task=22: 176 vCPUs / 8 GPUs, once the SKU's vCPU count is known."""
    sku = Catalog.load(()).get("h100-80gb-sxm-ib.8x")
    skus = tmp_path / "skus"
    skus.mkdir()
    (skus / "h100-80gb-sxm-ib.8x.yaml").write_text(dump_yaml(sku.model_copy(update={"vcpus": 176}).model_dump(mode="json")))
    script = _artifacts(CRUSOE, [skus])["slurm/h100/all_reduce_perf.sbatch"]
    seed_srun = re.search(r"^srun .*$", _seed002(shared_dir), re.M).group(0)
    assert "--cpus-per-task=22" in seed_srun
    assert "#SBATCH --cpus-per-task=22" in script and "--cpus-per-task=22" in script.split("srun", 1)[1]


def test_no_mpi_env_file_for_plain_nccl():
    assert not [p for p in _artifacts(CRUSOE) if p.endswith("mpi.env")]


# --------------------------------------------------------------------------- UCX / UCC (seeds 001, 004)

def _env(text: str) -> dict[str, str]:
    return {k: shlex.split(v)[0] for k, v in re.findall(r"^export (\w+)=(.*)$", text, re.M)}


def test_env_file_values_parse_by_the_grammars():
    env = _env(_artifacts(NDV2)["slurm/ndv2/mpi.env"])
    assert check_ucx_tls(env["UCX_TLS"], "1.13.1") == []
    assert check_ucx_net_devices(env["UCX_NET_DEVICES"]) == []
    assert check_ucc_tune(env["UCC_TL_NCCL_TUNE"]) == []
    assert "rc" in env["UCX_TLS"].split(",") and "sockcm" not in env["UCX_TLS"]
    assert "cuda_ipc" in env["UCX_TLS"].split(",")  # seed 004: 17-26 GB/s over NVLink with it, 2.1 without


def test_env_file_is_seed_001_ucc_path():
    env = _env(_artifacts(NDV2)["slurm/ndv2/mpi.env"])
    assert env["OMPI_MCA_coll_ucc_enable"] == "1"
    assert env["OMPI_MCA_coll_ucc_priority"] == "100"
    assert env["UCC_TL_NCCL_TUNE"] == "allreduce:cuda:inf"
    assert env["OMPI_MCA_coll_hcoll_enable"] == "0"  # Open MPI 4.1.4 still has coll/hcoll


def test_sbatch_exports_the_env_file_settings():
    artifacts = _artifacts(NDV2)
    assert _env(artifacts["slurm/ndv2/mpi.env"]).items() <= _env(artifacts["slurm/ndv2/all_reduce_perf.sbatch"]).items()


def _spec(tmp_path: Path, body: str) -> Path:
    spec = tmp_path / "s.yaml"
    spec.write_text("apiVersion: hpcconf/v1\nkind: Cluster\nmetadata: {name: demo, location: eastus}\n"
                    "platforms: [slurm]\n" + body, encoding="utf-8")
    return spec


def test_no_hcoll_setting_on_open_mpi_6(tmp_path):
    spec = _spec(tmp_path, "pools: [{name: ndv2, sku: Standard_ND40rs_v2, count: 2}]\n"
                           "versions: {openmpi: 6.0.0}\nslurm: {collectives: ucc-nccl}\n")
    env = _env(_artifacts(spec)["slurm/ndv2/mpi.env"])
    assert "OMPI_MCA_coll_hcoll_enable" not in env and env["OMPI_MCA_coll_ucc_enable"] == "1"


def test_ucx_without_infiniband_uses_tcp_on_eth0(tmp_path):
    spec = _spec(tmp_path, "pools: [{name: nc48, sku: Standard_NC48ads_A100_v4, count: 2}]\nslurm: {collectives: ucx}\n")
    env = _env(_artifacts(spec)["slurm/nc48/mpi.env"])
    assert env["UCX_TLS"].split(",")[0] == "tcp" and env["UCX_NET_DEVICES"] == "eth0"
    assert not {"rc", "ud", "dc"} & set(env["UCX_TLS"].split(","))
    assert "OMPI_MCA_coll_ucc_enable" not in env


def test_spec_mpi_env_has_the_last_word(tmp_path):
    spec = _spec(tmp_path, "pools: [{name: ndv2, sku: Standard_ND40rs_v2, count: 2}]\n"
                           "slurm: {collectives: ucx}\nmpi_env: {UCX_NET_DEVICES: 'mlx5_0:1', UCX_IB_PCI_RELAXED_ORDERING: 'on'}\n")
    env = _env(_artifacts(spec)["slurm/ndv2/mpi.env"])
    assert env["UCX_NET_DEVICES"] == "mlx5_0:1" and env["UCX_IB_PCI_RELAXED_ORDERING"] == "on"


def test_multiple_ucc_collectives_make_one_token(tmp_path):
    spec = _spec(tmp_path, "pools: [{name: ndv2, sku: Standard_ND40rs_v2, count: 1}]\n"
                           "slurm: {collectives: ucc-nccl, ucc_nccl_collectives: [allreduce, bcast, allgather]}\n")
    tune = _env(_artifacts(spec)["slurm/ndv2/mpi.env"])["UCC_TL_NCCL_TUNE"]
    assert tune == "allreduce,bcast,allgather:cuda:inf" and check_ucc_tune(tune) == []


# --------------------------------------------------------------------------- lint of everything generated

@pytest.mark.parametrize("spec", [CRUSOE, NDV2, REPO / "examples" / "azhop-ncv4.yaml"], ids=lambda p: p.stem)
def test_generated_artifacts_lint_clean(spec):
    result = lint_paths([str(spec)], LintContext())
    serious = [f for f in result.findings if f.severity.rank > Severity.INFO.rank]
    assert not serious, [(f.file, f.line, f.code, f.message) for f in serious]
    linted = {d.path.split(" -> ")[-1] for d in result.documents}
    assert any(p.endswith(".sbatch") for p in linted)


# --------------------------------------------------------------------------- AzHOP queues (seed 000)

def test_azhop_gpu_queues_each_get_an_sbatch_on_their_partition():
    from ruamel.yaml import YAML

    artifacts = _artifacts(REPO / "examples" / "azhop-ncv4.yaml")
    config = YAML(typ="safe").load(artifacts["azhop/config.yml"])
    queues = {q["name"]: q for q in config["queues"]}
    scripts = {p: t for p, t in artifacts.items() if p.endswith(".sbatch")}
    assert {p.split("/")[1] for p in scripts} == {"ndv4", "nc48v4", "nc96v4"}
    catalog = Catalog.load(())
    for _path, text in scripts.items():
        partition = re.search(r"^#SBATCH -p (\S+)$", text, re.M).group(1)
        assert partition in queues, partition  # an AzHOP queue is a Slurm partition of the same name
        sku = catalog.get(queues[partition]["vm_size"])
        assert f"#SBATCH --gpus-per-node={sku.gpu.count}" in text
        assert f"#SBATCH --ntasks-per-node={sku.gpu.count}" in text
        # Azure builds /opt/nccl-tests against HPC-X (azhpc-images install_nccl.sh): mpi/hpcx, not mpi/openmpi.
        assert "module load mpi/hpcx" in text and "mpi/openmpi" not in text


def _required_files(script: str) -> list[str]:
    match = re.search(r"^REQUIRED_FILES=\((.*)\)$", script, re.M)
    return shlex.split(match.group(1)) if match else []


@pytest.mark.parametrize("spec,installer", [
    (NDV2, "slurm/{pool}/install-nccl-files.sh"),
    (REPO / "examples" / "azhop-ncv4.yaml", "azhop/cluster-init/files/hpcconf/{pool}/install-nccl-files.sh"),
], ids=["slurm", "azhop"])
def test_files_the_job_checks_are_installed_on_the_nodes(spec, installer):
    """The job stops when a file its NCCL settings name is missing; the node setup must write each one."""
    artifacts = _artifacts(spec)
    checked = 0
    for path, text in artifacts.items():
        if not path.endswith(".sbatch"):
            continue
        pool = path.split("/")[1]
        setup = artifacts[installer.format(pool=pool)]
        for required in _required_files(text):
            assert required in setup, (pool, required)
            checked += 1
    assert checked


def test_slurm_installer_copies_existing_artifacts():
    artifacts = _artifacts(NDV2)
    setup = artifacts["slurm/ndv2/install-nccl-files.sh"]
    sources = re.findall(r'"\$out"/(\S+) ', setup)
    assert sources and all(source in artifacts for source in sources)
    assert "nccl/ndv2/nccl.conf" in sources


@pytest.mark.parametrize("spec", [CRUSOE, NDV2, REPO / "examples" / "azhop-ncv4.yaml"], ids=lambda p: p.stem)
def test_generated_scripts_are_valid_bash(spec, tmp_path):
    import shutil
    import subprocess

    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("bash is not installed")
    for path, text in _artifacts(spec).items():
        if path.startswith("slurm/") and path.endswith((".sbatch", ".sh", ".env")):
            file = tmp_path / path.replace("/", "_")
            file.write_text(text, encoding="utf-8")
            result = subprocess.run([bash, "-n", str(file)], capture_output=True, text=True)
            assert result.returncode == 0, (path, result.stderr)


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash to run the job's environment block")
def test_nc48_job_drops_a_stale_graph_file_from_the_environment(tmp_path):
    # NCCL opens NCCL_GRAPH_FILE whenever it is set, even empty, and fails init if it cannot
    # (NVIDIA/nccl src/graph/search.cc + xml.cc ncclTopoGetXmlGraphFromFile): it must be unset.
    build = compile_spec(REPO / "examples" / "azhop-ncv4.yaml")
    script = next(a for a in build.artifacts if a.path == "slurm/nc48v4/all_reduce_perf.sbatch").content
    env_block = script[:script.index("source /etc/profile.d/modules.sh")]
    probe = tmp_path / "env.sh"
    probe.write_text(env_block + 'echo "graph=${NCCL_GRAPH_FILE-unset}"\n', encoding="utf-8")
    out = subprocess.run(["bash", str(probe)], env={"NCCL_GRAPH_FILE": "/opt/microsoft/ncv4/graph.xml", "PATH": "/usr/bin:/bin"},
                         capture_output=True, text=True, check=True).stdout
    assert out.strip().endswith("graph=unset")
