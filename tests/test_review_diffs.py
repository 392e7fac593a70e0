"""Review-friendly output: a one-field spec change gives a minimal artifact diff.

Generated files are reviewed as diffs, so changing one spec field must change only the
lines that carry that value (or values computed from it), line for line, with nothing
reordered or reformatted around them. Each case below changes one field of a spec that
targets every platform and checks every changed line of every artifact: the new line must
be the old line with only the expected tokens replaced.
"""

from __future__ import annotations

import difflib
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hpcconf.cli import app
from hpcconf.pipeline import compile_spec

runner = CliRunner()
TOKEN = re.compile(r"[A-Za-z0-9_.-]+|[^A-Za-z0-9_.-]+")


@pytest.fixture(scope="module")
def base_spec(tmp_path_factory) -> str:
    """An A100 cluster on AKS, AzHOP and Slurm at once, as `hpcconf init` writes it."""
    path = tmp_path_factory.mktemp("review") / "base.yaml"
    result = runner.invoke(app, ["init", "--sku", "Standard_ND96amsr_A100_v4", "--nodes", "4",
                                 "--platform", "aks,azhop,slurm", "--name", "review", "-o", str(path)])
    assert result.exit_code == 0, result.output
    return path.read_text()


def build_files(text: str, directory: Path) -> dict[str, str]:
    spec = directory / "cluster.yaml"  # same file name for both builds: headers name it
    spec.write_text(text)
    return {a.path: a.content for a in compile_spec(spec).artifacts}


def changed(old: dict[str, str], new: dict[str, str]) -> dict[str, list[tuple[str, list[str], list[str]]]]:
    """{path: [(opcode tag, old lines, new lines), ...]} for every artifact that differs."""
    result = {}
    for path in sorted(set(old) | set(new)):
        a, b = old.get(path, "").splitlines(), new.get(path, "").splitlines()
        if a == b:
            continue
        ops = difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
        result[path] = [(tag, a[i1:i2], b[j1:j2]) for tag, i1, i2, j1, j2 in ops if tag != "equal"]
    return result


def substitute(line: str, tokens: dict[str, str]) -> str:
    return "".join(tokens.get(t, t) for t in TOKEN.findall(line))


def one_field_change(base: str, tmp_path: Path, old: str, new: str, tokens: dict[str, str] | None = None) -> dict:
    assert base.count(old) == 1, f"{old!r} must occur once in the spec"
    before, after = tmp_path / "before", tmp_path / "after"
    before.mkdir(), after.mkdir()
    old_files = build_files(base, before)
    # A file whose name carries the value (a topology file named for its SKU) is compared under its new name.
    old_files = {substitute(path, tokens or {}): text for path, text in old_files.items()}
    return changed(old_files, build_files(base.replace(old, new), after))


CASES = {
    # field: (spec text before, after, token substitutions every changed line must be explained by, files that must change)
    "node count": ("count: 4 ", "count: 5 ",
                   # nodes, ranks (8 GPUs per node) and Volcano's minAvailable (workers + launcher)
                   {"4": "5", "32": "40", "5": "6",
                    # alltoall's derived floor: the share of traffic that crosses the network grows with the nodes
                    "16.1": "15.2", "32.2917": "30.4688",
                    # a derived floor decides from 16 MiB per rank (32 -> 40 ranks)
                    "536870912": "671088640"},
                   {"aks/provision.sh", "aks/volcano-job.yaml", "azhop/config.yml", "slurm/gpu/all_reduce_perf.sbatch"}),
    "SKU": ("sku: Standard_ND96amsr_A100_v4", "sku: Standard_ND96asr_v4",   # same NDv4 topology, 40 GB A100
            # the workers' memory request follows the size's memory (1900 GiB vs 900 GiB)
            {"Standard_ND96amsr_A100_v4": "Standard_ND96asr_v4", "nd96amsr-a100-v4-topo.xml": "nd96asr-v4-topo.xml",
             "1520Gi": "720Gi", "nd96amsr_a100_v4.conf": "nd96asr_v4.conf", "16G": "8G",  # Azure NHC conf per size: 40 GB GPUs test 8G
             "17179869184": "8589934592",  # the same size in bytes, in the AKS launcher's verdict
             "2040": "1200",  # the single-node pass's time budget follows its largest size (16G -> 8G)
             "1857830712kB": "928858388kB", "238": "235"},  # and its memory and P2P floor (check_hw_physmem, check_gpu_bw)
            {"aks/provision.sh", "aks/volcano-job.yaml", "azhop/config.yml", "nccl/gpu/nccl.conf",
             "slurm/gpu/all_reduce_perf.sbatch"}),
    "chart version": ("gpu_operator: 26.7.0", "gpu_operator: 25.3.0",
                      {"26.7.0": "25.3.0", "v26.7.0": "v25.3.0"},
                      {"aks/gpu-operator-values.yaml", "aks/provision.sh"}),
    "resource name": ("resource_name: infiniband", "resource_name: mlnxnics",
                      {"infiniband": "mlnxnics"},
                      {"aks/hostdevicenetwork.yaml", "aks/volcano-job.yaml"}),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_one_field_change_touches_only_the_lines_that_carry_it(base_spec, tmp_path, case):
    old, new, tokens, must_change = CASES[case]
    diffs = one_field_change(base_spec, tmp_path, old, new, tokens)
    assert must_change <= set(diffs), f"{case}: expected changes in {sorted(must_change - set(diffs))}"
    for path, blocks in diffs.items():
        for tag, old_lines, new_lines in blocks:
            # line for line: nothing inserted, deleted or moved around the change
            assert tag == "replace" and len(old_lines) == len(new_lines), (
                f"{case}: {path} has a {tag} block, not a one-for-one line change:\n"
                + "\n".join(f"- {line}" for line in old_lines) + "\n" + "\n".join(f"+ {line}" for line in new_lines))
            for before, after in zip(old_lines, new_lines):
                assert substitute(before, tokens) == after, (
                    f"{case}: {path}: the change is not just the field's value:\n- {before}\n+ {after}")
    total = sum(len(o) for blocks in diffs.values() for _, o, _ in blocks)
    # An NHC conf (and each file embedding it) carries a size in up to six lines: header, memory, PCIe
    # floor, the all_reduce and IB-loopback message sizes, the conf's name.
    assert total <= 6 * len(diffs), f"{case}: {total} lines changed in {len(diffs)} files"


def test_adding_an_nccl_setting_only_inserts_lines(base_spec, tmp_path):
    diffs = one_field_change(base_spec, tmp_path, "nccl_test:", "nccl_env:\n  NCCL_IB_TIMEOUT: \"22\"\nnccl_test:")
    assert "nccl/gpu/nccl.conf" in diffs
    for path, blocks in diffs.items():
        for tag, old_lines, new_lines in blocks:
            assert tag == "insert" and len(new_lines) == 1, f"{path}: {tag} {old_lines} -> {new_lines}"
            assert "NCCL_IB_TIMEOUT" in new_lines[0] and "22" in new_lines[0]


def test_reordering_or_recommenting_the_spec_changes_no_artifact(base_spec, tmp_path):
    """Artifacts depend on values, not on how the spec is laid out."""
    lines = base_spec.splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.startswith("versions:"))
    end = next(i for i in range(start + 1, len(lines)) if not lines[i].startswith(" "))
    moved = lines[start:end]
    rest = lines[:start] + lines[end:]
    at = next(i for i, line in enumerate(rest) if line.startswith("metadata:"))
    reordered = "".join(rest[:at] + moved + rest[at:])
    recommented = re.sub(r"  # .*$", "  # edited comment", reordered, flags=re.M)
    assert recommented != base_spec
    (tmp_path / "a").mkdir(), (tmp_path / "b").mkdir()
    assert build_files(base_spec, tmp_path / "a") == build_files(recommented, tmp_path / "b")
