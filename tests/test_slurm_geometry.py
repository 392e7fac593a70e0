"""Task geometry and CPU pin masks of the generated sbatch scripts against seed 000's NCv4 Slurm jobs.

Seed 000 ran all_reduce_perf under AzHOP Slurm on NC96ads_A100_v4 (partition nc96v4) and
NC48ads_A100_v4 (nc48v4) with hand-written PIN_MASK values; hpcconf derives them from the SKU's
guest NUMA layout. The oracle is the seed text itself.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from hpcconf.catalog import Catalog
from hpcconf.pipeline import compile_spec
from hpcconf.resolve.slurm import cpus_per_task, gpu_numa_nodes, pin_masks

SEED_PARTITIONS = {"nc96v4": "Standard_NC96ads_A100_v4", "nc48v4": "Standard_NC48ads_A100_v4"}


def seed_jobs(shared: Path) -> dict[str, dict]:
    """partition -> {sbatch options, PIN_MASK, srun options, test args} from seed 000's SLURM scripts."""
    text = next((shared / "seeds").glob("000_*.txt")).read_text(encoding="utf-8")
    jobs = {}
    for block in re.findall(r"#!/bin/bash\n(#SBATCH.*?\$\{BASE_DIR\}/nccl-tests/build/\$NCCL_TESTS_EXE[^\n]*)", text, re.S):
        options = dict(re.findall(r"^#SBATCH (-[-\w]+)[ =](\S+)", block, re.M))
        srun = block[block.index("srun "):].replace("\\\n", " ")
        jobs[options["-p"]] = {
            "sbatch": options,
            "pin_mask": re.search(r"PIN_MASK='([^']+)'", block).group(1),
            "srun": srun,
            "exports": dict(re.findall(r"^export (\w+)=(\S+)", block, re.M)),
        }
    return jobs


def generated_jobs(tmp_path: Path) -> dict[str, dict]:
    pools = "\n".join(f"  - {{name: {name}, sku: {sku}, count: 2}}" for name, sku in SEED_PARTITIONS.items())
    spec = tmp_path / "ncv4.yaml"
    spec.write_text(f"""apiVersion: hpcconf/v1
kind: Cluster
metadata: {{name: ncv4, location: southcentralus}}
platforms: [slurm]
pools:
{pools}
nccl_test: {{min_bytes: "8", max_bytes: 8G, step_factor: 2}}
slurm: {{modules: [mpi/openmpi]}}
""", encoding="utf-8")
    build = compile_spec(spec)
    jobs = {}
    for artifact in build.artifacts:
        if artifact.kind != "sbatch-script":
            continue
        text = artifact.content
        options = dict(re.findall(r"^#SBATCH (-[-\w]+)[ =](\S+)", text, re.M))
        # the srun that starts the tests (others run one task per node: PMIx probe, health, NCCL files)
        srun = text[text.index("srun --mpi=pmix --cpu-bind"):].replace("\\\n", " ").split("\n", 1)[0]  # after its timeout
        jobs[options["-p"]] = {
            "sbatch": options,
            "pin_mask": re.search(r"PIN_MASK='([^']+)'", text).group(1),
            "srun": srun,
            "exports": {k: shlex.split(v)[0] for k, v in re.findall(r"^export (\w+)=(.*)$", text, re.M)},
            "text": text,
        }
    return jobs


def _options(command: str) -> dict[str, str]:
    """srun/all_reduce_perf options as {flag: value}; '-b8' and '-b 8' alike."""
    words = shlex.split(command.replace("$PIN_MASK", "PINMASK"))
    out, i = {}, 0
    while i < len(words):
        word = words[i]
        if word.startswith("--") and "=" in word:
            key, value = word.split("=", 1)
            out[key] = value
        elif re.fullmatch(r"-[a-zA-Z]\S+", word):
            out[word[:2]] = word[2:]
        elif re.fullmatch(r"-[a-zA-Z]", word) and i + 1 < len(words):
            out[word] = words[i + 1]
            i += 1
        i += 1
    return out


@pytest.fixture
def both(shared_dir, tmp_path):
    return seed_jobs(shared_dir), generated_jobs(tmp_path)


def test_seed_has_both_ncv4_jobs(shared_dir):
    assert set(seed_jobs(shared_dir)) == set(SEED_PARTITIONS)


@pytest.mark.parametrize("partition", sorted(SEED_PARTITIONS))
def test_pin_mask_equals_seed(both, partition):
    seed, ours = both
    assert ours[partition]["pin_mask"] == seed[partition]["pin_mask"]


@pytest.mark.parametrize("partition", sorted(SEED_PARTITIONS))
def test_task_geometry_equals_seed(both, partition):
    seed, ours = both
    for option in ("--ntasks-per-node", "--cpus-per-task", "--gpus-per-node", "--mem", "-p"):
        assert ours[partition]["sbatch"][option] == seed[partition]["sbatch"][option], option
    seed_srun, our_srun = _options(seed[partition]["srun"]), _options(ours[partition]["srun"])
    for option in ("--mpi", "--cpu-bind", "--gpus-per-node", "--ntasks-per-node"):
        assert our_srun[option] == seed_srun[option], option


@pytest.mark.parametrize("partition", sorted(SEED_PARTITIONS))
def test_nccl_tests_call_equals_seed(both, partition):
    seed, ours = both
    seed_args, our_args = _options(seed[partition]["srun"]), _options(ours[partition]["srun"])
    for flag in ("-b", "-e", "-f", "-g", "-c"):
        assert our_args[flag] == seed_args[flag], flag
    # all_reduce first in the job's collective matrix, each run as ${test}_perf
    assert "TESTS=(all_reduce " in ours[partition]["text"] and "${test}_perf" in ours[partition]["srun"]


@pytest.mark.parametrize("partition", sorted(SEED_PARTITIONS))
def test_nccl_environment_matches_seed(both, partition):
    """No InfiniBand on NC A100 v4: NCCL_IB_DISABLE=1 and NCCL_DEBUG=INFO, as seed 000 exported."""
    seed, ours = both
    for key, value in seed[partition]["exports"].items():
        assert ours[partition]["exports"][key] == value, key
    assert "module load mpi/openmpi" in ours[partition]["text"]


def test_no_job_gets_a_graph_file(both):
    """The graph file cut NC48 all_reduce 4x in seed 000 (57 vs 225 GB/s); on NC96 it gained nothing
    (28.1 vs 28.2 GB/s) and kills any job given fewer than 4 GPUs, so no job exports it."""
    _, ours = both
    assert "NCCL_GRAPH_FILE" not in ours["nc48v4"]["exports"]
    assert "NCCL_GRAPH_FILE" not in ours["nc96v4"]["exports"]


def test_masks_follow_topology_numa_not_rank_order():
    """ND A100 v4: GPUs 0001/0002 sit on NUMA 1 (azhpc ndv4-topo.xml), so local ranks 0-1 get NUMA 1's cores."""
    sku = Catalog.load(()).get("Standard_ND96asr_v4")
    numa = gpu_numa_nodes(sku)
    masks, _ = pin_masks(sku)
    assert numa[:4] == [1, 1, 0, 0]
    cpus_numa1 = sorted(sku.numa_node(1).cpu_set())
    half = len(cpus_numa1) // 2
    assert int(masks[0], 16) == sum(1 << c for c in cpus_numa1[:half])
    assert int(masks[1], 16) == sum(1 << c for c in cpus_numa1[half:])
    assert cpus_per_task(sku) == 12 and all(bin(int(m, 16)).count("1") == 12 for m in masks)


def test_masks_never_overlap_and_stay_on_one_numa_node():
    catalog = Catalog.load(())
    for name in ("Standard_ND40rs_v2", "Standard_ND96isr_H100_v5", "Standard_NC96ads_A100_v4", "Standard_NC24ads_A100_v4"):
        sku = catalog.get(name)
        masks, numa = pin_masks(sku)
        assert len(masks) == sku.gpu.count
        bits = [int(m, 16) for m in masks]
        for i, a in enumerate(bits):
            assert not any(a & b for b in bits[i + 1:]), name
            node = set(sku.numa_node(numa[i]).cpu_set())
            assert {c for c in range(sku.vcpus) if a >> c & 1} <= node, name


def test_unknown_numa_layout_gives_no_masks():
    """A SKU without a known guest NUMA layout gets no binding rather than a guessed one."""
    sku = Catalog.load(()).get("Standard_NC48ads_A100_v4").model_copy(update={"numa": []})
    assert pin_masks(sku) == ((), ())


def test_uneven_gpu_split_gives_no_masks():
    sku = Catalog.load(()).get("Standard_NC96ads_A100_v4")
    three_nodes = sku.model_copy(update={"topology": None, "numa": sku.numa[:3]})
    assert pin_masks(three_nodes) == ((), ())
