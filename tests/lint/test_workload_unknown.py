"""What a file leaves unknown stays unknown (issue 20): a node count set by a variable, a range, or a task whose
replicas come from a template is neither one node nor several; an AMD word in a comment is a remark, not where
the job runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from hpcconf.lint.context import LintContext
from hpcconf.lint.detect import detect_documents
from hpcconf.lint.engine import lint_paths
from hpcconf.lint.workload import multi_node

VOLCANO = """apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {{name: nccl}}
spec:
  tasks:
    - name: mpimaster
      replicas: 1
      template: {{spec: {{containers: [{{name: m, image: x}}]}}}}
    - name: head
      replicas: {head}
      template: {{spec: {{containers: [{{name: h, image: x}}]}}}}
    - name: mpiworker
      replicas: {workers}
      template: {{spec: {{containers: [{{name: w, image: x}}]}}}}
"""


def _doc(name: str, text: str):
    [doc] = detect_documents(name, text)
    return doc


@pytest.mark.parametrize("head, workers, expected", [
    (1, "${WORKERS}", None),  # one known worker and a templated count: not "one node"
    (1, 2, True),
    (1, 0, False),
    (2, "${WORKERS}", True),  # two known already: several nodes whatever the template adds
])
def test_replicas_from_a_template_leave_the_node_count_unknown(head, workers, expected):
    assert multi_node(_doc("job.yaml", VOLCANO.format(head=head, workers=workers))) is expected


@pytest.mark.parametrize("nodes, expected", [("2", True), ("1", False), ("$NODES", None), ("1-4", None),
                                             ("2-4", True), ("${N:-1}", None)])
def test_sbatch_node_counts_that_a_variable_or_range_decides_are_unknown(nodes, expected):
    text = f"#!/bin/bash\n#SBATCH --nodes={nodes}\nsrun hostname\n"
    assert multi_node(_doc("job.sbatch", text)) is expected


def test_an_amd_word_in_a_comment_does_not_make_the_job_amd(tmp_path: Path, monkeypatch):
    # an NVIDIA job remarking on AMD: NVLS off still costs NVSwitch reduction on an NVLink-switch VM
    script = "#!/bin/bash\n# on MI300X nodes use the rccl-tests build instead\nexport NCCL_NVLS_ENABLE=0\n"
    (tmp_path / "run.sh").write_text(script)
    monkeypatch.chdir(tmp_path)
    found = [(f.line, f.severity.value) for f in lint_paths(["run.sh"], LintContext()).findings if f.code == "NCCL060"]
    assert found == [(3, "info")]
    (tmp_path / "run.sh").write_text(script.replace("# on MI300X", "export HSA_FORCE_FINE_GRAIN_PCIE=1  # on MI300X"))
    assert not [f for f in lint_paths(["run.sh"], LintContext()).findings if f.code == "NCCL060"]
