"""NCCL029 (an NCCL_ALGO that strands a collective everywhere) and its split with NCCL014 (only on this SKU)."""

from __future__ import annotations

import pytest

from hpcconf.lint.context import LintContext, lookup_sku
from hpcconf.lint.engine import lint_text


def codes(text: str, **ctx) -> list[str]:
    return [f.code for f in lint_text(text, "nccl.conf", LintContext(**ctx)).findings]


@pytest.mark.parametrize("value, stranded", [
    # measured on 2 x H200, NCCL 2.28.9: these collectives failed with "no algorithm/protocol available"
    ("NVLSTree", "Broadcast, Reduce, AllGather, ReduceScatter with no algorithm; and AllReduce with none on a single node"),
    ("Tree", "Broadcast, Reduce, AllGather, ReduceScatter with no algorithm"),
    ("NVLS", "Broadcast, Reduce with no algorithm"),
    ("allreduce:NVLSTree", "AllReduce with none on a single node"),
])
def test_stranding_values_are_errors_naming_the_collectives(value, stranded):
    findings = lint_text(f"NCCL_ALGO={value}\n", "nccl.conf", LintContext(nccl_version="2.28.9")).findings
    assert [f.code for f in findings] == ["NCCL029"]
    assert f"leaves {stranded}: every such call fails" in findings[0].message


@pytest.mark.parametrize("value", ["Ring", "Tree,Ring", "^NVLS", "^NVLSTree,Tree", "allreduce:NVLSTree,Ring",
                                   "ring;allreduce:tree,ring", "allreduce:NVLS", "${ALGO}"])
def test_values_that_leave_every_collective_an_algorithm_pass(value):
    assert "NCCL029" not in codes(f"NCCL_ALGO={value}\n")


def test_a_value_nccl_rejects_is_nccl011s_alone():
    assert codes("NCCL_ALGO=CollNet\n") == ["NCCL011"]


def test_before_2_24_the_global_form_is_judged_and_the_hint_says_so():
    findings = lint_text("NCCL_ALGO=Tree\n", "nccl.conf", LintContext(nccl_version="2.21.5")).findings
    assert [f.code for f in findings] == ["NCCL029"] and "before 2.24" in findings[0].hint


def test_one_finding_per_line_split_with_nccl014():
    a100 = lookup_sku("ND96asr_v4")
    assert codes("NCCL_ALGO=NVLSTree\n", sku=a100) == ["NCCL029"]  # fails everywhere: not repeated as NCCL014
    assert codes("NCCL_ALGO=allreduce:NVLS\n", sku=a100) == ["NCCL014"]  # fails only without NVLink SHARP
    assert codes("NCCL_ALGO=allreduce:NVLS\n", sku=lookup_sku("ND96isr_H100_v5")) == []


def test_every_setting_kind_is_checked():
    script = lint_text("#!/bin/bash\nexport NCCL_ALGO=Tree\n", "run.sh").findings
    env = lint_text("NCCL_ALGO=Tree\n", "job.env").findings
    assert [f.code for f in script] == ["NCCL029"] and [f.code for f in env] == ["NCCL029"]
