"""NHC conf rules read the deployment's own custom tests (``*.nhc`` linted with the conf), as NHC sources them.

A conf calling ``check_raid`` from a custom test beside it, or Azure's ``check_nccl_allreduce`` redefined
there with two arguments, is what the node runs: no finding. Found on a public CycleCloud deployment that
ships its own ``*.nhc`` files (issue 20, fresh-file review: 4 false errors).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hpcconf.knowledge import nhc_checks
from hpcconf.lint.context import LintContext
from hpcconf.lint.engine import lint_paths
from hpcconf.parsers.nhc_script import defined_functions

WILD_NHC = Path(__file__).resolve().parents[2].parent / "shared/upstream/wild/files/azurehpc-aks-nccl-allreduce.nhc"

RAID = """#!/bin/bash
# usage: check_raid MOUNT SIZE   ($3 in a comment reads nothing)
function check_raid()
{
    MOUNT_PATH=$1
    ARRAY_SIZE=$2
    DEVICE=$(echo ${MOUNT} | awk '{print $3}')
}
"""
ALLREDUCE = """#!/bin/bash
function check_nccl_allreduce() {
   EXP_NCCL_ALLREDUCE_BW=$1
   REPEATS=${2:-1}
}
"""
CONF = """ * || check_raid /mnt/nvme 8
 * || check_nccl_allreduce 460.0 10
"""


def _findings(tmp_path: Path, files: dict[str, str], *named: str) -> list[tuple[str, int, str]]:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    paths = [tmp_path / n for n in named] or [tmp_path]
    result = lint_paths([str(p) for p in paths], LintContext())
    return [(f.code, f.line, f.severity.value) for f in result.findings if f.code.startswith("NHC")]


def test_custom_tests_beside_the_conf_define_and_redefine_checks(tmp_path):
    # CycleCloud's cluster-init project: files/ holds the conf and the tests its scripts/ install together
    # (ccslurm4ai cc_slurm_nhc specs/default/cluster-init/files)
    files = tmp_path / "specs" / "default" / "cluster-init" / "files"
    files.mkdir(parents=True)
    tree = {"nd96.conf": CONF, "azure_raid_health.nhc": RAID, "azure_nccl_allreduce.nhc": ALLREDUCE}
    assert _findings(files, tree) == []
    assert _findings(tmp_path / "specs", {}) == []


def test_a_fork_that_only_shares_the_folder_defines_nothing_for_the_conf(tmp_path):
    # a folder of confs and tests copied from different sites: nothing says NHC sources this fork for this conf
    tree = {"nd96.conf": " * || check_nccl_allreduce 460.0 10 16G\n", "azure_nccl_allreduce.nhc": ALLREDUCE}
    assert _findings(tmp_path, tree) == [("NHC002", 1, "info")]


def test_without_the_custom_tests_the_conf_is_judged_by_the_builtins(tmp_path):
    found = _findings(tmp_path, {"nd96.conf": CONF, "azure_raid_health.nhc": RAID}, "nd96.conf")
    # check_raid: not shown, maybe installed on the node: info; Azure's check_nccl_allreduce needs 3 from v0.2.2,
    # but v0.1.0 to v0.2.1 read 1 to 2 and nothing else the conf calls rules those releases out: no claim
    assert found == [("NHC001", 1, "info")]
    newer = _findings(tmp_path, {"nd96.conf": CONF + " * || check_gpu_count 8\n"}, "nd96.conf")
    assert newer == [("NHC001", 1, "info"), ("NHC002", 2, "error")]  # check_gpu_count: v0.2.5 on


def test_a_typo_of_a_known_check_stays_an_error(tmp_path):
    assert _findings(tmp_path, {"a.conf": " * || check_gpu_counts 8\n"}) == [("NHC001", 1, "error")]


def test_extra_arguments_to_a_custom_test_are_a_warning(tmp_path):
    files = {"a.conf": " * || check_nccl_allreduce 460.0 10 16G\n", "azure_nccl_allreduce.nhc": ALLREDUCE}
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "azure_nccl_allreduce.nhc").write_text(files.pop("azure_nccl_allreduce.nhc"))
    assert _findings(tmp_path, files) == [("NHC002", 1, "warning")]


def test_signature_read_from_the_body():
    raid = defined_functions(RAID)["check_raid"]
    assert (raid.line, raid.max_args) == (3, 2)  # awk's $3 and the comment's $3 are not arguments
    assert defined_functions(ALLREDUCE)["check_nccl_allreduce"].max_args == 2
    assert defined_functions("check_x() {\n  for a in \"$@\"; do :; done\n}\n")["check_x"].max_args is None
    assert defined_functions("function check_y {\n  getopts a: o\n}\n")["check_y"].max_args is None


@pytest.mark.skipif(not WILD_NHC.is_file(), reason="needs ../shared")
def test_signature_agrees_with_the_transcribed_table_on_azures_custom_test():
    """The body-read maximum equals data/nhc_checks.yaml's, transcribed by hand from the same function
    (checked against all 21 Azure customTests at v0.4.5 when this parser was written)."""
    parsed = defined_functions(WILD_NHC.read_text())["check_nccl_allreduce"]
    assert parsed.max_args == nhc_checks.lookup("check_nccl_allreduce").max_args == 4


def test_custom_tests_in_scripts_or_customtests_join_the_conf_but_never_above_the_walk(tmp_path):
    """LBNL NHC sources $CONFDIR/scripts/*.nhc; Azure's repository keeps conf/ beside customTests/."""
    from hpcconf.lint.engine import deployment_dir

    (tmp_path / "site" / "scripts").mkdir(parents=True)
    (tmp_path / "azure" / "conf").mkdir(parents=True)
    (tmp_path / "azure" / "customTests").mkdir()
    site_test, azure_conf = tmp_path / "site/scripts/raid.nhc", tmp_path / "azure/conf/nd96.conf"
    assert deployment_dir(site_test, tmp_path) == str(tmp_path / "site")
    assert deployment_dir(tmp_path / "azure/customTests/x.nhc", tmp_path) == str(tmp_path / "azure")
    assert deployment_dir(azure_conf, tmp_path) == str(tmp_path / "azure")
    assert deployment_dir(site_test, tmp_path / "site" / "scripts") == str(tmp_path / "site" / "scripts")
    (tmp_path / "other" / "conf").mkdir(parents=True)  # a conf/ without customTests/ beside it stays where it is
    assert deployment_dir(tmp_path / "other/conf/slurm.conf", tmp_path) == str(tmp_path / "other" / "conf")
