"""Slurm jobs on each provider's image (issue 21 items 2, 3, 4, 8, 12, 13): the paths, MPI, launcher and
settings the image needs, read from :mod:`hpcconf.knowledge.images`; and that lint finds the same
mistakes in a hand-written job."""

from __future__ import annotations

import re

import pytest

from hpcconf.catalog import Catalog
from hpcconf.init_spec import init_context, render_init_spec
from hpcconf.knowledge import images
from hpcconf.lint.context import LintContext, lookup_sku
from hpcconf.lint.engine import lint_paths
from hpcconf.pipeline import compile_spec

CATALOG = Catalog.load()


def _build(sku: str, platform: str = "slurm", extra: str = "", edit=None) -> dict[str, str]:
    context = init_context(CATALOG.get(sku), 2, [platform], "testcluster", None, None, "spec.yaml", "test")
    text = render_init_spec(context) + extra
    if edit is not None:
        text = edit(text)
    return {a.path: a.content for a in compile_spec("spec.yaml", text=text, display_name="spec.yaml").artifacts}


def _sbatch(artifacts: dict[str, str]) -> str:
    return next(text for path, text in artifacts.items() if path.endswith(".sbatch"))


def _code(script: str) -> str:
    return "\n".join(line for line in script.splitlines() if not line.lstrip().startswith("#"))


def _exports(script: str) -> dict[str, str]:
    return {key: value.strip("'") for key, value in re.findall(r"^export (\w+)=(\S+)$", script, re.M)}


@pytest.mark.parametrize("sku, platform", [("Standard_ND96isr_H100_v5", "slurm"), ("Standard_ND96isr_H100_v5", "azhop"),
                                           ("Standard_ND128isr_NDR_GB200_v6", "slurm"),
                                           ("Standard_ND96isr_MI300X_v5", "slurm")])
def test_azure_jobs_load_the_mpi_the_tests_were_built_against(sku, platform):
    # azhpc-images install_nccl.sh / install_rccl.sh: built against HPC-X (mpi/hpcx), no rpath.
    script = _sbatch(_build(sku, platform))
    code = _code(script)
    # srun --mpi=pmix starts the ranks: the same HPC-X rebuilt with the node's PMIx (install_mpis.sh).
    assert re.search(r"^module load mpi/hpcx-pmix$", code, re.M) and "mpi/openmpi" not in code
    assert code.index("module load mpi/hpcx") < code.index("_perf")


def test_mi300x_job_uses_the_image_paths():
    script = _sbatch(_build("Standard_ND96isr_MI300X_v5"))
    code = _code(script)
    assert "/opt/rccl-tests/${test}_perf" in code and "/opt/rccl-tests/build" not in code
    assert 'LD_LIBRARY_PATH="/opt/rccl/lib:' in code


def test_mi300x_job_exports_what_azures_rccl_check_passes():
    script = _sbatch(_build("Standard_ND96isr_MI300X_v5"))
    env = _exports(script)
    # HSA_NO_SCRATCH_RECLAIM is in azure_rccl_allreduce.nhc from 0e0a1ac2 (beb050b) on, not at v0.4.5
    comment = next(line for line in script.splitlines() if "azure_rccl_allreduce.nhc" in line)
    assert "@ 0e0a1ac2" in comment and "HSA_NO_SCRATCH_RECLAIM" in comment and "@ v0.4.5" not in comment
    assert env["HSA_NO_SCRATCH_RECLAIM"] == "1" and env["NCCL_IB_PCI_RELAXED_ORDERING"] == "1"
    assert env["NCCL_SOCKET_IFNAME"] == "eth0"
    assert "NCCL_IB_HCA" not in env  # Azure's check selects none (decided, see knowledge/images.py)


@pytest.mark.parametrize("sku", ["Standard_ND96isr_H200_v5", "Standard_ND96isr_H100_v5"])
def test_nd_v5_job_bootstraps_on_eth0_and_leaves_the_accelerated_networking_vf_out(sku):
    # H100: run-health-checks.sh @0e0a1ac2 lists nd96isr_h100_v5 in AN100 and checks mlx5_an0 where it exists.
    env = _exports(_sbatch(_build(sku)))
    assert env["NCCL_SOCKET_IFNAME"] == "eth0" and env["NCCL_IB_HCA"] == "^=mlx5_an0"


def test_a_spec_nccl_ib_hca_wins_over_the_image_default():
    env = _exports(_sbatch(_build("Standard_ND96isr_H200_v5", extra="nccl_env: {NCCL_IB_HCA: mlx5_ib}\n")))
    assert env["NCCL_IB_HCA"] == "mlx5_ib"


@pytest.mark.parametrize("sku, hca", [("crusoe-h200-141gb-sxm-ib.8x", "^mlx5_0:1"),
                                      ("crusoe-b200-180gb-sxm-ib.8x", "=mlx5_5:1,mlx5_6:1,mlx5_7:1,mlx5_8:1,mlx5_9:1,"
                                                                      "mlx5_10:1,mlx5_11:1,mlx5_12:1")])
def test_crusoe_jobs_keep_nccl_off_mlx5_0(sku, hca):
    artifacts = _build(sku)
    assert _exports(_sbatch(artifacts))["NCCL_IB_HCA"] == hca
    assert f"NCCL_IB_HCA={hca}" in artifacts["nccl/gpu/nccl.conf"]


def test_crusoe_gb200_job_starts_its_ranks_without_pmix():
    # crusoecloud/slurm README v3.0.0: "PMIx is currently not supported on GB200".
    artifacts = _build("crusoe-gb200-186gb-nvl-ib.4x")
    script = _sbatch(artifacts)
    code = _code(script)
    assert "--mpi=pmix" not in code and "srun --mpi=list" not in code
    assert 'MPIRUN="${MPIRUN:-/opt/hpcx/ompi/bin/mpirun}"' in code
    launches = re.findall(r'"\$MPIRUN" --prefix "\$MPI_PREFIX" (.*)\\\n\s+-x (.*)\\\n\s+(\S+_perf)', code)
    assert len(launches) == 3  # the matrix, the ring pass, the single-node pass
    for options, exports, _binary in launches:
        assert "--map-by ppr:4:node" in options
        assert {"NCCL_MNNVL_ENABLE", "NCCL_DEBUG", "LD_LIBRARY_PATH"} <= set(exports.replace("-x", " ").split())
    assert any('-H "$FIRST_NODE:4" -np 4' in options for options, _, _ in launches)


def test_crusoe_gb200_job_checks_the_block_topology_its_segment_needs():
    # --segment is read only by topology/block; the module ships it commented out.
    code = _code(_sbatch(_build("crusoe-gb200-186gb-nvl-ib.4x", edit=lambda t: t.replace("count: 2 ", "count: 18"))))
    assert "#SBATCH --segment=18" in _sbatch(_build("crusoe-gb200-186gb-nvl-ib.4x",
                                                    edit=lambda t: t.replace("count: 2 ", "count: 18")))
    assert "scontrol show config | grep -Eq '^TopologyPlugin +=.*topology/block'" in code


def test_crusoe_gb200_tfvars_name_the_custom_image():
    tfvars = _build("crusoe-gb200-186gb-nvl-ib.4x")["slurm/terraform.tfvars"]
    assert re.search(r'^\s*image\s+= null$', tfvars, re.M)
    assert re.search(r'^\s*custom_image\s+= "gb200-slurm-custom:replace-me"$', tfvars, re.M)
    h200 = _build("crusoe-h200-141gb-sxm-ib.8x")["slurm/terraform.tfvars"]
    assert re.search(r'^\s*image\s+= "ubuntu24.04-nvidia-slurm"$', h200, re.M) and "custom_image    = null" in h200


def test_crusoe_b200_without_an_image_is_an_error_on_the_tfvars(tmp_path):
    artifacts = _build("crusoe-b200-180gb-sxm-ib.8x", edit=lambda t: re.sub(r"\n    image: .*", "", t))
    path = tmp_path / "terraform.tfvars"
    path.write_text(artifacts["slurm/terraform.tfvars"], encoding="utf-8")
    codes = {(f.code, f.severity.value) for f in lint_paths([str(path)], LintContext()).findings}
    assert ("SLURM005", "error") in codes


def test_no_one_element_for_loops():
    # ShellCheck SC2043: `for x in word; do` runs once. One test and one required file here.
    script = _sbatch(_build("Standard_ND96isr_H100_v5", extra="", edit=lambda t: t.replace(
        "  max_bytes: 8G ", "  collectives: [all_reduce]\n  max_bytes: 8G ")))
    assert "TESTS=(all_reduce)" in script
    assert not re.search(r'^\s*for \w+ in (?!"\$\{\w+\[@\]\}")[^\s;]+; do', script, re.M)


@pytest.mark.parametrize("sku", ["Standard_ND96isr_H100_v5", "Standard_ND96isr_MI300X_v5",
                                 "crusoe-gb200-186gb-nvl-ib.4x", "crusoe-h200-141gb-sxm-ib.8x"])
def test_generated_jobs_pass_the_image_rules(sku, tmp_path):
    path = tmp_path / "job.sbatch"
    path.write_text(_sbatch(_build(sku)), encoding="utf-8")
    codes = {f.code for f in lint_paths([str(path)], LintContext(sku=lookup_sku(sku))).findings}
    assert not codes & {"SLURM002", "SLURM003", "SLURM004"}, codes


def test_every_azure_layout_names_its_source_at_a_tag():
    for layout in (*images.AZURE_LAYOUTS, images.CRUSOE_SLURM, images.CRUSOE_GB200):
        assert "@" in layout.source and layout.tests_dir.startswith("/opt/")


def test_slurm_cluster_building_the_test_image_copies_no_topology_file_nothing_reads(tmp_path):
    # DKR005 on our own Dockerfile: only the AKS job points NCCL_TOPO_FILE into the image.
    image = 'test_image: {registry: myacr.azurecr.io, name: nccl-tests, tag: "1", base: "nvcr.io/nvidia/pytorch:24.05-py3"}\n'
    artifacts = _build("Standard_ND96isr_H100_v5", extra=image)
    assert "topo.xml" not in artifacts["image/Dockerfile"] and not any(p.startswith("image/") and p.endswith(".xml")
                                                                       for p in artifacts)
    (tmp_path / "Dockerfile").write_text(artifacts["image/Dockerfile"], encoding="utf-8")
    assert not [f for f in lint_paths([str(tmp_path / "Dockerfile")], LintContext()).findings if f.code == "DKR005"]
    assert "topo.xml" in _build("Standard_ND96isr_H100_v5", "aks", extra="")["image/Dockerfile"]


@pytest.mark.parametrize("sku", ["Standard_ND96isr_H100_v5", "Standard_ND96isr_H200_v5"])
def test_azhop_build_writes_the_gpu_count_override_and_warns_no_more_than_info(sku, tmp_path):
    artifacts = _build(sku, "azhop")
    script = artifacts["azhop/scheduler/slurm-gpu-count.sh"]
    assert f'"node.vm_size": "{sku}"}}, "name": "slurm_gpus", "value": 8' in script
    spec = tmp_path / "spec.yaml"
    spec.write_text(render_init_spec(init_context(CATALOG.get(sku), 2, ["azhop"], "testcluster", None, None,
                                                  "spec.yaml", "test")), encoding="utf-8")
    findings = [f for f in lint_paths([str(spec)], LintContext()).findings if f.code == "HPC206"]
    assert findings and all(f.severity.value == "info" for f in findings)
    assert "azhop/scheduler/slurm-gpu-count.sh" not in _build("Standard_ND96amsr_A100_v4", "azhop")


def _run_gpu_count_script(tmp_path, installed: str, gres: str):
    """The script with stand-ins: azslurm as cyclecloud-slurm ``installed`` parses its arguments (3.0.4's
    scale takes none: cli.py scale_parser), sinfo reports ``gres`` for the partition."""
    import json
    import subprocess

    script = _build("Standard_ND96isr_H100_v5", "azhop")["azhop/scheduler/slurm-gpu-count.sh"]
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    calls = tmp_path / "calls"
    stand_ins = {
        "python": f"#!/bin/bash\necho {installed}\n",
        "azslurm": f"#!/bin/bash\necho \"azslurm $*\" >> {calls}\n"
                   "[ \"$*\" = scale ] || { echo 'azslurm: error: unrecognized arguments' >&2; exit 2; }\n",
        "scontrol": "#!/bin/bash\nexit 0\n",
        "sinfo": f"#!/bin/bash\necho \"sinfo $*\" >> {calls}\nprintf '%s\\n' {gres!r}\n",
    }
    for name, text in stand_ins.items():
        (bin_dir / name).write_text(text, encoding="utf-8")
        (bin_dir / name).chmod(0o755)
    autoscale = tmp_path / "autoscale.json"
    if not autoscale.exists():
        autoscale.write_text(json.dumps({"default_resources": [{"select": {}, "name": "slurm_gpus",
                                                                "value": "node.gpu_count"}]}), encoding="utf-8")
    (tmp_path / "s.sh").write_text(script, encoding="utf-8")
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "AUTOSCALE": str(autoscale), "AZSLURM_PYTHON": str(bin_dir / "python")}
    result = subprocess.run(["bash", str(tmp_path / "s.sh")], env=env, capture_output=True, text=True)
    return result, json.loads(autoscale.read_text(encoding="utf-8")), calls.read_text() if calls.exists() else ""


@pytest.mark.skipif(__import__("shutil").which("jq") is None, reason="jq not installed")
def test_gpu_count_script_writes_the_override_first_restarts_and_checks_what_slurm_sees(tmp_path):
    result, config, calls = _run_gpu_count_script(tmp_path, "3.0.6", "gpu:8")
    assert result.returncode == 0, result.stderr
    assert config["default_resources"][0] == {"select": {"node.vm_size": "Standard_ND96isr_H100_v5"},
                                              "name": "slurm_gpus", "value": 8}
    assert config["default_resources"][1]["select"] == {} and len(config["default_resources"]) == 2
    # plain `azslurm scale`: it restarts slurmctld (--no-restart would leave the old gres.conf loaded)
    assert "azslurm scale\n" in calls and "sinfo -h -p gpu -o %G" in calls
    assert "Slurm sees 8 GPUs" in result.stdout
    result, config, calls = _run_gpu_count_script(tmp_path, "3.0.6", "(null)")  # again: idempotent
    assert result.returncode == 1 and "Gres is '(null)'" in result.stderr
    assert len(config["default_resources"]) == 2


@pytest.mark.skipif(__import__("shutil").which("jq") is None, reason="jq not installed")
def test_gpu_count_script_changes_nothing_where_cyclecloud_slurm_ignores_the_override(tmp_path):
    # 3.0.4 (az-hop's newest): no slurm_gpus (f0c08b4 is first in 3.0.6), and `scale --no-restart` is a usage error
    result, config, calls = _run_gpu_count_script(tmp_path, "3.0.4", "gpu:8")
    assert result.returncode == 1 and "3.0.4 ignores slurm_gpus" in result.stderr and "Upgrade" in result.stderr
    assert calls == "" and len(config["default_resources"]) == 1


def test_hpc206_judges_a_hand_written_azhop_config(tmp_path):
    config = tmp_path / "config.yml"
    config.write_text("""location: southcentralus
resource_group: rg
queue_manager: slurm
slurm:
  cyclecloud_slurm_version: 3.0.4
queues:
  - name: ndv5
    vm_size: Standard_ND96isr_H200_v5
    max_count: 2
""", encoding="utf-8")
    findings = [f for f in lint_paths([str(config)], LintContext(), forced_kind="azhop-config").findings
                if f.code == "HPC206"]
    assert [(f.line, f.severity.value) for f in findings] == [(5, "info")]
    config.write_text(config.read_text(encoding="utf-8").replace("3.0.4", "3.0.6"), encoding="utf-8")
    assert not [f for f in lint_paths([str(config)], LintContext(), forced_kind="azhop-config").findings
                if f.code == "HPC206"]


def test_sources_name_the_public_page_not_a_seed_label():
    # Issue 21 item 13: `seed_blog` in SKU files and in the sbatch's "Expected:" comment.
    for name in CATALOG.names():
        assert not [key for key in CATALOG.get(name).sources if "seed" in key.lower()], name
    script = _sbatch(_build("Standard_NC48ads_A100_v4", edit=lambda t: t.replace("count: 2 ", "count: 1 ")))
    expected = next(line for line in script.splitlines() if line.startswith("# Expected:"))
    assert "jingchaozhang.github.io" in expected and "seed" not in script.lower()


@pytest.mark.skipif(__import__("shutil").which("shellcheck") is None, reason="shellcheck not installed")
@pytest.mark.parametrize("sku", ["Standard_ND96isr_H100_v5", "crusoe-gb200-186gb-nvl-ib.4x", "Standard_ND96isr_MI300X_v5"])
def test_generated_jobs_have_no_shellcheck_warning(sku, tmp_path):
    import subprocess

    one = _build(sku, edit=lambda t: t.replace("  max_bytes: 8G ", "  collectives: [all_reduce]\n  max_bytes: 8G "))
    for name, text in {"one.sbatch": _sbatch(one), "all.sbatch": _sbatch(_build(sku))}.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
        result = subprocess.run(["shellcheck", "-S", "warning", str(tmp_path / name)], capture_output=True, text=True)
        assert result.returncode == 0, result.stdout


def test_mpi_openmpi_for_azures_tests_is_information(tmp_path):
    # AzHOP's sbatch loaded mpi/openmpi against nccl-tests built with HPC-X (issue 21 item 4).
    path = tmp_path / "job.sbatch"
    path.write_text("#!/bin/bash\n#SBATCH --nodes=2\nsource /etc/profile.d/modules.sh\nmodule load mpi/openmpi\n"
                    "srun --mpi=pmix /opt/nccl-tests/build/all_reduce_perf -b 8 -e 8G\n", encoding="utf-8")
    findings = [(f.code, f.line, f.severity.value) for f in
                lint_paths([str(path)], LintContext(sku=lookup_sku("Standard_ND96isr_H100_v5"))).findings]
    assert ("SLURM002", 4, "info") in findings
    assert not [f for f in lint_paths([str(path)], LintContext()).findings if f.code == "SLURM002"]


@pytest.mark.skipif(not __import__("os").environ.get("HPCCONF_AZHPC_IMAGES_GIT"),
                    reason="set HPCCONF_AZHPC_IMAGES_GIT to a git dir of Azure/azhpc-images to check the facts at their tags")
def test_image_layouts_hold_at_their_tags():
    import os
    import subprocess

    git = os.environ["HPCCONF_AZHPC_IMAGES_GIT"]

    def show(tag: str, path: str) -> str:
        return subprocess.run(["git", "--git-dir", git, "show", f"{tag}:{path}"], capture_output=True, text=True,
                              check=True).stdout

    for tag in ("ubuntu-hpc-mi300x-2404-2026072801", "ubuntu-hpc-mi300x-2204-2026072301"):
        rccl = show(tag, "components/install_rccl.sh")
        assert "DEST_TEST_DIR=/opt/rccl-tests" in rccl and "cp ./*_perf $DEST_TEST_DIR/" in rccl
        assert "-DCMAKE_INSTALL_PREFIX=/opt/rccl" in rccl and "hpcx_load" in rccl
        assert "mpi/hpcx-pmix" in show(tag, "components/install_mpis.sh")
    for tag in ("ubuntu-hpc-2026072901", "ubuntu-hpc-gb200-2404-20260528", "azure-linux-hpc-gb300-2026060101"):
        nccl = show(tag, "components/install_nccl.sh")
        assert "module load mpi/hpcx" in nccl and "MPI_HOME=${HPCX_MPI_DIR}" in nccl and "mv nccl-tests /opt/." in nccl
        assert "mpi/hpcx-pmix" in show(tag, "components/install_mpis.sh")
    for tag in ("ubuntu-hpc-20241023", "ubuntu-hpc-v100-2204-20250825"):
        assert "MPI_HOME=${HPCX_MPI_DIR}" in show(tag, "ubuntu/common/install_nccl.sh")


# -- D1: the job's verdict without hpcconf on the node ----------------------------------------------------

FAKE_LAUNCHER = """#!/bin/bash
# srun/mpirun stand-in: `srun --mpi=list` names pmix, a `bash -c` step reports one node, a test prints an
# nccl-tests table ($STUB_BUSBW GB/s at every size, $STUB_WRONG wrong).
case "$*" in *--mpi=list*) echo "MPI plugin types are... pmix"; exit 0 ;; *"bash -c"*) echo "node1 none"; exit 0 ;; esac
echo "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong"
if [ "${STUB_TABLE:-1}" = 1 ]; then
  for size in 8 1048576 8589934592 17179869184; do
    printf "%14s %14s     float     sum      -1    62639  274.27  %7s  %5s    62601  274.44  %7s  %5s\\n" \\
      "$size" "$((size / 4))" "$STUB_BUSBW" "$STUB_WRONG" "$STUB_BUSBW" "$STUB_WRONG"
  done
fi
"""


# srun stand-in that runs a `bash -c` step for real, on "node 1" and then on "node 2", which lacks the file
# named by $STUB_NODE2_LACKS (moved away for that step); anything else goes to the nccl-tests stand-in.
STEP_SRUN = """#!/bin/bash
case "$*" in *"bash -c"*) ;; *) exec "$(dirname "$0")/mpirun" "$@" ;; esac
while [ "$1" != bash ]; do shift; done
"$@" || exit $?
[ -n "${STUB_NODE2_LACKS:-}" ] || exit 0
mv "$STUB_NODE2_LACKS" "$STUB_NODE2_LACKS.away"; rc=0; "$@" || rc=$?; mv "$STUB_NODE2_LACKS.away" "$STUB_NODE2_LACKS"
exit $rc
"""


def _run_sbatch(tmp_path, sku: str, srun: str = FAKE_LAUNCHER, **stub: str):
    """The generated job body on a node without hpcconf: srun/mpirun stand-ins, the module system and the
    node's NCCL files moved into ``tmp_path``."""
    import subprocess

    script = _sbatch(_build(sku))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, text in (("srun", srun), ("mpirun", FAKE_LAUNCHER)):
        (bin_dir / name).write_text(text, encoding="utf-8")
        (bin_dir / name).chmod(0o755)
    (bin_dir / "scontrol").write_text("#!/bin/bash\n[ \"$2\" = config ] && echo 'TopologyPlugin          = topology/block'\n"
                                      "[ \"$2\" = hostnames ] && echo node1\nexit 0\n", encoding="utf-8")
    (bin_dir / "scontrol").chmod(0o755)
    (tmp_path / "modules.sh").write_text("module() { :; }\n", encoding="utf-8")
    files = tmp_path / "files"
    files.mkdir()
    body = script.replace("source /etc/profile.d/modules.sh", f"source {tmp_path / 'modules.sh'}")
    for required in " ".join(re.findall(r"^REQUIRED_FILES=\((.*)\)$", body, re.M)).split():
        body = body.replace(required, str(files / required.rsplit("/", 1)[1]))
        (files / required.rsplit("/", 1)[1]).write_text("", encoding="utf-8")
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "MPIRUN": str(bin_dir / "mpirun"), "STUB_BUSBW": "500.00",
           "STUB_WRONG": "0", "SLURM_NNODES": "2", "SLURM_JOB_NODELIST": "node[1-2]", **stub}
    assert "command -v hpcconf" in body
    return subprocess.run(["bash", "-c", body], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60)


@pytest.mark.skipif(__import__("shutil").which("awk") is None, reason="needs awk")
@pytest.mark.parametrize("sku, floor", [("Standard_ND96isr_H100_v5", "460"), ("Standard_ND96isr_H200_v5", None)])
def test_sbatch_without_hpcconf_passes_a_healthy_run(tmp_path, sku, floor):
    result = _run_sbatch(tmp_path, sku)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "hpcconf is not installed" in result.stdout and "FAILED" not in result.stderr
    if floor:
        assert f"single-node.all_reduce: pass: busbw 500.00 GB/s >= {floor} GB/s" in result.stdout


@pytest.mark.skipif(__import__("shutil").which("awk") is None, reason="needs awk")
@pytest.mark.parametrize("stub, message", [
    ({"STUB_WRONG": "3"}, "all_reduce_perf: FAIL: 4 row(s) with wrong results"),
    ({"STUB_BUSBW": "150.00"}, "single-node.all_reduce: FAIL: busbw 150.00 GB/s at 17179869184 bytes, floor 460 GB/s"),
    ({"STUB_TABLE": "0"}, "all_gather_perf: FAIL: no nccl-tests results in the log"),
], ids=["wrong-results", "below-floor", "no-table"])
def test_sbatch_without_hpcconf_fails_bad_results(tmp_path, stub, message):
    result = _run_sbatch(tmp_path, "Standard_ND96isr_H100_v5", **stub)
    assert result.returncode == 1, result.stdout + result.stderr
    assert message in result.stdout and "FAILED: " in result.stderr


@pytest.mark.skipif(__import__("shutil").which("awk") is None, reason="needs awk")
def test_mpirun_job_without_hpcconf_fails_bad_results(tmp_path):
    # Crusoe GB200: ranks started by the image's mpirun inside the allocation, the same verdict.
    result = _run_sbatch(tmp_path, "crusoe-gb200-186gb-nvl-ib.4x", STUB_WRONG="1")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "all_reduce_perf: FAIL: 4 row(s) with wrong results" in result.stdout


def test_image_sources_name_the_path_each_tag_has():
    # azhpc-images moved ubuntu/common/ to components/ after ubuntu-hpc-20241023 (and the V100 tag).
    source = images.AZURE_NVIDIA.source
    assert "ubuntu/common/install_nccl.sh @ ubuntu-hpc-20241023" in source
    assert "components/install_nccl.sh @ ubuntu-hpc-2026072901" in source


def test_crusoe_health_installer_names_what_crusoe_nodes_need():
    installer = _build("crusoe-h100-80gb-sxm-ib.8x")["slurm/gpu/install-health-checks.sh"]
    header = "\n".join(line for line in installer.splitlines()[:20] if line.startswith("#"))
    assert "Azure HPC images have both" not in header and "reused off Azure" in header
    azure = _build("Standard_ND96isr_H100_v5")["slurm/gpu/install-health-checks.sh"]
    assert "the Azure HPC images have both" in azure


def test_required_files_are_checked_on_every_node(tmp_path):
    """D6: node 2 without the topology file stops the job (NCCL would run there without it, silently)."""
    files = tmp_path / "files"
    result = _run_sbatch(tmp_path, "Standard_ND96isr_H100_v5", srun=STEP_SRUN,
                         STUB_NODE2_LACKS=str(files / "nd96isr-h100-v5-topo.xml"))
    assert result.returncode == 1, result.stdout + result.stderr
    assert "nd96isr-h100-v5-topo.xml is missing" in result.stderr and "all_reduce_perf" not in result.stdout
    (tmp_path / "again").mkdir()
    result = _run_sbatch(tmp_path / "again", "Standard_ND96isr_H100_v5", srun=STEP_SRUN)
    assert result.returncode == 0, result.stdout + result.stderr
