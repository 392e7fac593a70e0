"""Causes of false alarms and misses found on real repositories (see tests/test_wild.py), one case each."""

from __future__ import annotations

from pathlib import Path

import pytest

from hpcconf.lint.context import LintContext, lookup_sku
from hpcconf.lint.engine import lint_text

REPO = Path(__file__).resolve().parents[2]


def codes(text: str, name: str, sku: str | None = None) -> list[tuple[int, str]]:
    ctx = LintContext(sku=lookup_sku(sku)) if sku else LintContext()
    return [(f.line, f.code) for f in lint_text(text, name, ctx).findings]


def test_plugin_variables_are_real_variables():
    text = "NCCL_SHARP_DISABLE=1\nNCCL_IBEXT_DISABLE=1\nNCCL_UCX_TLS=rc\nNCCL_SHARP_DISABLED=1\n"
    assert codes(text, "job.env") == [(4, "NCCL010")]  # the typo is still reported


def test_ucx_tls_tcp_is_fine_where_mpi_only_bootstraps_nccl_tests():
    script = "#!/bin/bash\nmpirun -np 8 -x UCX_TLS=tcp /opt/nccl-tests/build/all_reduce_perf -b 8\n"
    assert "MPI002" not in {c for _, c in codes(script, "t.sh", "Standard_ND96asr_v4")}
    app = "#!/bin/bash\nmpirun -np 8 -x UCX_TLS=tcp ./my_mpi_app\n"
    assert (2, "MPI002") in codes(app, "t.sh", "Standard_ND96asr_v4")


def test_value_ends_at_the_quote_that_closes_the_shell_string():
    script = '#!/bin/bash\nopts+=" -mca coll_hcoll_enable 0 -x NCCL_IB_PCI_RELAXED_ORDERING=1"\n'
    assert codes(script, "t.sh") == []


@pytest.mark.parametrize("value, column", [("^ens,eth,docker", 14), ("^m1x5_0", 14), ("MLX5_0", 13)])
def test_ib_hca_entries_that_name_no_rdma_device(value, column):
    findings = lint_text(f"NCCL_IB_HCA={value}\n", "job.env").findings
    assert [(f.code, f.column) for f in findings][:1] == [("NCCL012", column)]


@pytest.mark.parametrize("value", ["^mlx5_0", "mlx5", "=mlx5_ib0:1", "ibp", "^mlx5_an0", "rocep1s0f0"])
def test_ib_hca_device_names_pass(value):
    assert codes(f"NCCL_IB_HCA={value}\n", "job.env") == []


MPIJOB = """\
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata: {name: t}
spec:
  mpiReplicaSpecs:
    Launcher:
      template:
        spec:
          containers:
          - name: l
            image: x:1
            command:
            - mpirun
            - -x
            - NCCL_IB_HCA=^m1x5_0
            - -x
            - "NCCL_DEBUG=WARN"
            - /opt/nccl-tests/build/all_reduce_perf
"""


def test_mpirun_arguments_written_as_a_yaml_list_are_read():
    findings = lint_text(MPIJOB, "mpijob.yaml").findings
    assert [(f.line, f.code, f.column) for f in findings] == [(15, "NCCL012", 28)]  # at m1x5_0, after the ^


def test_apt_lists_judged_once_per_final_image():
    dockerfile = ("FROM ubuntu:22.04 AS build\nRUN apt-get update && apt-get install -y gcc\n"
                  "FROM nvcr.io/nvidia/pytorch:23.03-py3\nRUN apt-get update && apt-get install -y kmod\n"
                  "RUN apt-get update && apt-get install -y hwloc\nRUN apt-get install -y pciutils\n"
                  "COPY --from=build /o /o\n")
    assert [c for c in codes(dockerfile, "Dockerfile") if c[1].startswith("DKR00")] == [(4, "DKR002")]


def test_apt_update_alone_in_a_builder_stage_is_not_the_image():
    dockerfile = "FROM ubuntu:22.04 AS build\nRUN apt-get update\nFROM ubuntu:22.04\nCOPY --from=build /a /a\n"
    assert [c for c in codes(dockerfile, "Dockerfile") if c[1] == "DKR003"] == []


VOLCANO = """\
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: t}
spec:
  minAvailable: 1
  plugins: {ssh: [], svc: []}
  tasks:
    - name: master
      replicas: 1
      dependsOn: {name: [worker]}
      template:
        spec:
          containers:
            - {name: m, image: x:1, command: [sh, -c, "mpirun -np 2 -hostfile /etc/volcano/worker.host hostname"]}
    - name: worker
      replicas: 2
      template:
        spec:
          containers:
            - {name: w, image: x:1, command: [sh, -c, "sleep infinity"]}
"""


def test_launcher_that_depends_on_its_workers_is_no_partial_gang():
    assert "VOL003" not in {c for _, c in codes(VOLCANO, "job.yaml")}
    assert (5, "VOL003") in codes(VOLCANO.replace("      dependsOn: {name: [worker]}\n", ""), "job.yaml")


def test_sbatch_script_must_start_with_a_shebang():
    header = "# Copyright (c) 2023\n\n#!/bin/bash\n#SBATCH --nodes=2\nsrun hostname\n"
    findings = lint_text(header, "job.sh").findings
    assert [(f.line, f.code) for f in findings] == [(1, "SLURM001")]
    assert "line 3" in findings[0].message
    assert codes("#!/bin/bash\n#SBATCH --nodes=2\nsrun hostname\n", "job.sh") == []


def test_rdma_shared_device_plugin_resources_are_provided(tmp_path):
    from hpcconf.lint.engine import lint_paths

    (tmp_path / "ncp.yaml").write_text(
        "apiVersion: mellanox.com/v1alpha1\nkind: NicClusterPolicy\nmetadata: {name: nic-cluster-policy}\n"
        "spec:\n  rdmaSharedDevicePlugin:\n    config: |\n      {\"configList\": [{\"resourceName\": "
        "\"rdma_shared_device_a\", \"selectors\": {\"vendors\": [\"15b3\"]}}]}\n"
        "  sriovDevicePlugin:\n    config: |\n      {\"resourceList\": [{\"resourceName\": \"hostdev\", "
        "\"selectors\": {\"vendors\": [\"15b3\"], \"devices\": [\"101c\"]}}]}\n")
    (tmp_path / "pod.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    image: x:1\n"
        "    securityContext: {capabilities: {add: [IPC_LOCK]}}\n"
        "    resources:\n      limits: {rdma/rdma_shared_device_a: 1, rdma/other: 1}\n")
    found = [(Path(f.file).name, f.code, f.message.split(" ")[0]) for f in lint_paths([str(tmp_path)], LintContext()).findings
             if f.code == "XA001"]
    assert found == [("pod.yaml", "XA001", "rdma/other")]


def test_a_section_still_in_values_yaml_is_not_absent():
    from hpcconf.knowledge import charts

    # gpu-operator 26.7.0 dropped operator.defaultRuntime, the only tracked key under `operator`, not `operator`.
    assert charts.key_status("gpu-operator", "26.7.0", "operator") != "absent"
    assert charts.key_status("network-operator", "26.4.1", "secondaryNetwork") == "absent"
