"""Rules follow what the file says about its consumer and platform (issue 20 items 3-5), one class each.

Each case comes from a real file (tests/corpus/, ../shared/upstream/wild/) reduced to the lines that decide.
"""

from __future__ import annotations

from hpcconf.lint.context import LintContext
from hpcconf.lint.engine import lint_text


def found(text: str, name: str, ctx: LintContext | None = None) -> list[tuple[int, str, str]]:
    return [(f.line, f.code, f.severity.value) for f in lint_text(text, name, ctx or LintContext()).findings]


def codes(text: str, name: str, ctx: LintContext | None = None) -> set[str]:
    return {code for _, code, _ in found(text, name, ctx)}


# -- a variable table that knows which consumer reads a name ------------------------------------------

def test_pytorch_and_build_names_are_not_dead_nccl_settings():
    script = ("#!/bin/bash\nexport NCCL_ASYNC_ERROR_HANDLING=1\nexport NCCL_BLOCKING_WAIT=1\n"
              "export NCCL_HOME=/opt/nccl\nexport NCCL_IB_HCAS=mlx5_0\n")
    assert [(line, code) for line, code, _ in found(script, "run.sh") if code == "NCCL010"] == [(5, "NCCL010")]


def test_dockerfile_nccl_version_is_a_build_pin():
    dockerfile = "FROM ubuntu:22.04\nENV NCCL_VERSION=2.21.5-1\nENV NCCL_ROOT=/usr/local/nccl\n"
    assert "NCCL010" not in codes(dockerfile, "Dockerfile")


def test_a_name_the_file_itself_expands_has_a_reader():
    # GoogleCloudPlatform/container-engine-accelerators fast-socket-installer.yaml: the command copies the
    # plugin to $NCCL_INSTALL_DIR.
    pod = ("apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec:\n  containers:\n  - name: c\n    image: busybox\n"
           "    command: [sh, -c, 'cp /usr/lib/libnccl-net.so $NCCL_INSTALL_DIR/']\n"
           "    env:\n    - name: NCCL_INSTALL_DIR\n      value: /usr/local/nvidia/lib64\n")
    assert "NCCL010" not in codes(pod, "installer.yaml")
    # its own value naming itself is no reader
    assert "NCCL010" in codes('#!/bin/bash\nexport NCCL_FOO_DIR="${NCCL_FOO_DIR}:/x"\n', "run.sh")


# -- volume mounts before judging /dev/shm ----------------------------------------------------------

_GPU_POD = ("apiVersion: v1\nkind: Pod\nmetadata: {{name: x}}\nspec:\n  containers:\n  - name: main\n"
            "    image: img\n    command: [{command}]\n    resources:\n      limits: {{nvidia.com/gpu: 8}}\n"
            "{mounts}{volumes}")


def test_host_dev_shm_mount_is_the_hosts_tmpfs():
    # aws-samples/awsome-distributed-training nccl-tests.yaml (wild): hostPath /dev/shm at /dev/shm
    pod = _GPU_POD.format(command="torchrun, train.py",
                          mounts="    volumeMounts: [{name: shm, mountPath: /dev/shm}]\n",
                          volumes="  volumes: [{name: shm, hostPath: {path: /dev/shm}}]\n")
    assert "K8S003" not in codes(pod, "pod.yaml")


def test_dev_shm_warning_only_where_a_collective_runs():
    with_nccl = _GPU_POD.format(command="torchrun, --nproc-per-node=8, train.py", mounts="", volumes="")
    assert (6, "K8S003", "warning") in found(with_nccl, "pod.yaml")
    # kubernetes-sigs/kueue sample-hami.yaml: gpu_burn on two vGPU slices, no collective
    burn = _GPU_POD.format(command="/bin/sh, -lc, /app/gpu_burn 300", mounts="", volumes="")
    assert (6, "K8S003", "info") in found(burn, "pod.yaml")



_MPIJOB = ("apiVersion: kubeflow.org/v2beta1\nkind: MPIJob\nmetadata: {{name: t}}\nspec:\n  mpiReplicaSpecs:\n"
           "    Launcher:\n      template:\n        spec:\n          containers:\n"
           "          - {{name: l, image: i, command: [mpirun, -np, '4', {program}]}}\n"
           "    Worker:\n      template:\n        spec:\n          containers:\n"
           "          - name: w\n            image: i\n            command: [/usr/sbin/sshd, -De]\n"
           "            resources: {{limits: {{nvidia.com/gpu: 2}}}}\n")


def test_dev_shm_in_an_mpijob_needs_nccl_somewhere_in_the_job():
    # review r20c: NVIDIA's nvbandwidth MPIJob runs CUDA copies over IMEX; "MPIJob" alone is no NCCL
    assert (15, "K8S003", "info") in found(_MPIJOB.format(program="nvbandwidth"), "job.yaml")
    # the launcher's nccl-tests binary shows NCCL for the sshd workers
    assert (15, "K8S003", "warning") in found(_MPIJOB.format(program="/opt/nccl-tests/all_reduce_perf"), "job.yaml")


# -- device plugin semantics --------------------------------------------------------------------------

def test_shared_rdma_unit_serves_every_attachment():
    # coreweave/nccl-tests gb300 RoCE MPIJob (wild): 16 macvlan attachments, rdma/ib: 1
    nets = ",".join(f"cw-multus/net{i}" for i in range(4))
    pod = ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\n  annotations:\n"
           f"    k8s.v1.cni.cncf.io/networks: {nets}\nspec:\n  containers:\n  - name: c\n    image: i\n"
           "    securityContext: {capabilities: {add: [IPC_LOCK]}}\n"
           "    resources:\n      limits: {rdma/ib: 1}\n")
    assert "XA002" not in codes(pod, "pod.yaml")
    exclusive = pod.replace("rdma/ib: 1", "nvidia.com/mlnxnics: 1")
    assert "XA002" in codes(exclusive, "pod.yaml")


# -- provider profiles ---------------------------------------------------------------------------------

_RDMA_POD = ("apiVersion: v1\nkind: Pod\nmetadata: {{name: x}}\nspec:\n  nodeSelector: {{{selector}}}\n"
             "  containers:\n  - name: nccl\n    image: img\n    resources:\n      limits: {{rdma/ib: 1}}\n")


def test_memlock_finding_follows_the_provider():
    coreweave = _RDMA_POD.format(selector="node.coreweave.cloud/type: gd-8xh100ib-i128")
    assert "K8S002" not in codes(coreweave, "job.yaml")
    azure = _RDMA_POD.format(selector="kubernetes.azure.com/agentpool: ndv5")
    assert (7, "K8S002", "warning") in found(azure, "job.yaml")
    unknown = _RDMA_POD.format(selector="pool: gpu")
    assert (7, "K8S002", "info") in found(unknown, "job.yaml")
    assert (7, "K8S002", "warning") in found(unknown, "job.yaml", LintContext(provider="azure"))
    assert "K8S002" not in codes(azure, "job.yaml", LintContext(provider="coreweave"))


def test_extended_support_lines_are_not_end_of_life():
    import datetime

    from hpcconf.knowledge import compat

    today = datetime.date(2026, 12, 1)
    pro = compat.image_retirement("canonical:0001-com-ubuntu-pro-focal:pro-20_04-lts-gen2:20.04.202502181")
    assert pro is not None and not pro.passed(today)  # Ubuntu Pro 20.04: ESM to April 2030
    plain = compat.image_retirement("canonical:0001-com-ubuntu-server-focal:20_04-lts-gen2:latest")
    assert plain is not None and plain.passed(today)  # standard support ended 2025-05-31


# -- intent the file states -----------------------------------------------------------------------------

def test_ib_hca_in_a_variant_without_infiniband():
    # coreweave/nccl-tests nccl-test-distributed-a100-64-noib-mpijob.yaml (wild)
    script = "#!/bin/bash\nmpirun -np 2 -x NCCL_IB_HCA=eth0 -x NCCL_IB_DISABLE=1 ./all_reduce_perf\n"
    assert "NCCL012" not in codes(script, "run.sh")
    assert "NCCL012" in codes(script.replace(" -x NCCL_IB_DISABLE=1", ""), "run.sh")
    assert "NCCL012" not in codes(script.replace(" -x NCCL_IB_DISABLE=1", ""), "run-noib.sh")


# -- Dockerfile: the lists an update fetches are used or dropped in the same RUN -----------------------

def test_update_used_by_an_installer_or_cleaned_in_the_same_run():
    efa = ("FROM ubuntu:22.04\nRUN apt-get update && cd /tmp && curl -O https://x/efa.tgz && tar xf efa.tgz && "
           "cd aws-efa-installer && ./efa_installer.sh -y\nRUN apt-get install -y curl\n")
    assert "DKR003" not in codes(efa, "Dockerfile")
    cleaned = "FROM ubuntu:22.04\nRUN apt-get update && dpkg -i x.deb && rm -rf /var/lib/apt/lists/*\n"
    assert "DKR003" not in codes(cleaned, "Dockerfile")
    alone = "FROM ubuntu:22.04\nRUN apt-get update\nRUN apt-get install -y curl\n"
    assert "DKR003" in codes(alone, "Dockerfile")


# -- recall (issue 20 item 8) ------------------------------------------------------------------------

def test_hca_exclusion_naming_the_wrong_device_for_the_vm():
    from hpcconf.lint.context import lookup_sku

    h200 = LintContext(sku=lookup_sku("ND96isr_H200_v5"))  # its non-IB VF is mlx5_an0 (skus/ data)
    assert (1, "NCCL012", "warning") in found("NCCL_IB_HCA=^mlx5_0\n", "job.env", h200)
    assert "NCCL012" not in codes("NCCL_IB_HCA=^mlx5_an0\n", "job.env", h200)


def test_pytorchjob_and_jobset_pods_are_read():
    pytorchjob = ("apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {name: t}\nspec:\n  pytorchReplicaSpecs:\n"
                  "    Worker:\n      replicas: 2\n      template:\n        spec:\n          containers:\n"
                  "          - name: w\n            image: i\n            resources: {limits: {nvidia.com/gpu: 8}}\n")
    assert (11, "K8S003", "warning") in found(pytorchjob, "job.yaml")
    jobset = ("apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata: {name: t}\nspec:\n  replicatedJobs:\n"
              "  - name: workers\n    replicas: 2\n    template:\n      spec:\n        template:\n          spec:\n"
              "            containers:\n            - name: w\n              image: i\n"
              "              env: [{name: FI_PROVIDER, value: efa}]\n"
              "              resources: {limits: {nvidia.com/gpu: 8}}\n")
    assert (13, "K8S020", "warning") in found(jobset, "job.yaml")


def test_nccl_tests_single_node_network_check_keeps_p2p_off():
    # nebius/nebius-solution-library soperator/test/quickcheck/nccl_single_node.sh: "forced to use Infiniband
    # instead of NVLink" with P2P and SHM disabled together
    from hpcconf.lint.context import lookup_sku

    h100 = LintContext(sku=lookup_sku("ND96isr_H100_v5"))
    script = "#!/bin/bash\nexport NCCL_P2P_DISABLE=1\nexport NCCL_SHM_DISABLE=1\nall_reduce_perf -g 8\n"
    assert "NCCL060" not in codes(script, "run.sh", h100)
    assert (2, "NCCL060", "warning") in found(script.replace("export NCCL_SHM_DISABLE=1\n", ""), "run.sh", h100)


def test_per_job_algo_in_a_job_that_runs_only_that_collective():
    only_allreduce = "#!/bin/bash\nmpirun -np 16 -x NCCL_ALGO=Tree /opt/nccl-tests/build/all_reduce_perf -b 8 -e 8G\n"
    assert "NCCL029" not in codes(only_allreduce, "run.sh")
    allgather = only_allreduce.replace("all_reduce_perf", "all_gather_perf")
    assert (2, "NCCL029", "error") in found(allgather, "run.sh")
    training = "#!/bin/bash\nexport NCCL_ALGO=Tree\ntorchrun train.py\n"
    assert (2, "NCCL029", "error") in found(training, "run.sh")
    assert (1, "NCCL029", "error") in found("NCCL_ALGO=Tree\n", "nccl.conf")  # every program reads it


def test_google_network_plugin_variables_have_a_reader():
    # GoogleCloudPlatform/container-engine-accelerators gpudirect-tcpxo/README.md, google/nccl-fastsocket
    env = ("NCCL_FASTRAK_CTRL_DEV=eth0\nNCCL_GPUDIRECTTCPX_SOCKET_IFNAME=eth1\nNCCL_DYNAMIC_CHUNK_SIZE=524288\n"
           "NCCL_TUNER_CONFIG_PATH=/usr/local/tcpxo/lib64/a3plus_tuner_config.textproto\nNCCL_FASTRAKK_IFNAME=eth1\n")
    assert [(line, code) for line, code, _ in found(env, "job.env") if code == "NCCL010"] == [(5, "NCCL010")]


def test_rccl_only_names_where_the_file_shows_amd_gpus():
    name = "NCCL_NCHANNELS_PER_PEER"  # RCCL's, not NCCL's (ROCm/rccl src/include/param ...)
    amd = f"#!/bin/bash\nexport {name}=32\nexport HIP_VISIBLE_DEVICES=0,1\nmpirun -np 2 ./rccl-tests/build/all_reduce_perf\n"
    assert "NCCL010" not in codes(amd, "run.sh")
    unknown = f"#!/bin/bash\nexport {name}=32\nmpirun -np 2 ./all_reduce_perf\n"
    assert (2, "NCCL010", "info") in found(unknown, "run.sh")


def test_provider_from_per_path_settings(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from hpcconf.cli import app

    (tmp_path / ".hpcconf.toml").write_text('[per-path-context."cw/**"]\nprovider = "coreweave"\n')
    (tmp_path / "cw").mkdir()
    (tmp_path / "cw" / "job.yaml").write_text(_RDMA_POD.format(selector="pool: gpu"))
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["lint", "cw/job.yaml", "--format", "json", "--fail-level", "info"])
    assert "K8S002" not in result.stdout, result.stdout
    result = CliRunner().invoke(app, ["lint", "cw/job.yaml", "--provider", "azure", "--format", "json"])
    assert '"K8S002"' in result.stdout and '"warning"' in result.stdout


def test_mig_slices_are_gpus_not_rdma_devices():
    # NVIDIA/deepops workloads/examples/k8s/gpu-usage/mig-mixed-with-selector.yml
    pod = ("apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec:\n  containers:\n  - name: gpu-pod\n    image: i\n"
           "    resources:\n      limits: {nvidia.com/mig-1g.5gb: 1}\n")
    assert "K8S002" not in codes(pod, "pod.yaml")


def test_service_account_judged_only_where_the_namespace_is_managed(tmp_path):
    # NVIDIA/deepops workloads/services/k8s: dcgm-exporter (namespace monitoring) uses the service account of
    # the kube-prometheus-stack release; the only ServiceAccount linted beside it lives in kube-system.
    from hpcconf.lint.engine import lint_paths

    (tmp_path / "sa.yaml").write_text("apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: admin, namespace: kube-system}\n")
    ds = ("apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: dcgm, namespace: monitoring}\nspec:\n  template:\n"
          "    spec:\n      serviceAccountName: prom-node-exporter\n      containers: [{name: c, image: i}]\n")
    (tmp_path / "ds.yaml").write_text(ds)
    assert "XA006" not in {f.code for f in lint_paths([str(tmp_path)], LintContext()).findings}
    (tmp_path / "sa2.yaml").write_text("apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: other, namespace: monitoring}\n")
    assert "XA006" in {f.code for f in lint_paths([str(tmp_path)], LintContext()).findings}


def test_binding_judged_only_for_pods_that_call_the_api(tmp_path):
    from hpcconf.lint.engine import lint_paths

    (tmp_path / "rb.yaml").write_text("apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {name: b, "
                                      "namespace: monitoring}\nroleRef: {kind: ClusterRole, name: view, apiGroup: "
                                      "rbac.authorization.k8s.io}\nsubjects: [{kind: ServiceAccount, name: x}]\n")
    ds = ("apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: dcgm, namespace: monitoring}\nspec:\n  template:\n"
          "    spec:\n      serviceAccountName: exporter\n      containers: [{name: c, image: i{command}}]\n")
    (tmp_path / "ds.yaml").write_text(ds.replace("{command}", ""))
    assert "XA006" not in {f.code for f in lint_paths([str(tmp_path)], LintContext()).findings}
    (tmp_path / "ds.yaml").write_text(ds.replace("{command}", ", command: [kubectl, wait, pod]"))
    assert "XA006" in {f.code for f in lint_paths([str(tmp_path)], LintContext()).findings}


def test_a_name_no_consumer_reads_is_info_a_near_miss_a_warning():
    # nebius/nebius-solution-library soperator/test/mlperf-gpt3 config_common.sh: NCCL_CFG_PATH is read by the
    # sibling NeMo config (`oc.env:NCCL_CFG_PATH`), a file hpcconf was not given
    script = "#!/bin/bash\nexport NCCL_CFG_PATH=/workspace/x.yaml\nexport NCCL_IB_HCAS=mlx5_0\n"
    got = [(line, severity) for line, code, severity in found(script, "start.sh") if code == "NCCL010"]
    assert got == [(2, "info"), (3, "warning")]
    assert (1, "NCCL010", "warning") in found("NCCL_TREE_THRESHOLD=0\n", "job.env")  # once read, now removed


def test_sriov_vendor_only_selector_by_provider():
    values = ("sriovDevicePlugin:\n  deploy: true\n  resources:\n    - name: infiniband\n      vendors: [\"15b3\"]\n")
    assert (4, "HELM005", "info") in found(values, "network-operator.yaml")
    assert (4, "HELM005", "warning") in found(values, "network-operator.yaml", LintContext(provider="azure"))
