"""AzHOP ``config.yml`` queues: names (AZH002), the Slurm version pair (AZH004), GPU queues (AZH011), limits (AZH012).

The judgements of AZH002 and AZH012 live in :mod:`hpcconf.knowledge.azhop_view` and also run on
specs (:mod:`hpcconf.spec.checks.azhop`); this module maps config.yml onto them.
"""

from __future__ import annotations

import re
from typing import Any, Iterator

from ...diagnostics import Diagnostic, Severity
from ...knowledge import azhop as kb
from ...knowledge.azhop_view import judge_queue_limits, judge_queue_names
from ...knowledge.versions import version_key
from ...rules_registry import rule
from ..azhop_config import KINDS, as_dict, config_data, dig, queue_manager_of, queues_of, queues_view, report
from ..context import LintContext
from ..document import Document

# -- AZH002 --------------------------------------------------------------------------------------------

@rule(code="AZH002", name="azhop-queue-name", severity=Severity.ERROR, kinds=KINDS)
def queue_name(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """A queue name is longer than 8 characters, used twice, or makes node hostnames longer than 15.

    ## What it catches
    Queue names of 9 characters (the schema's ``maxLength`` is 9 although its own description says
    "max. 8"), names used by two queues, and queues whose longest node hostname
    (``<name>-pg0-<max nodes>`` with ``ColocateNodes``, ``<name>-<max nodes>`` without) exceeds 15
    characters.

    ## Why is this bad?
    The queue name is the CycleCloud nodearray, the Slurm partition and the hostname prefix. Domain
    join and NetBIOS cut hostnames at 15 characters: az-hop #1191 (``hc44-low-mpi``) got truncated,
    colliding hostnames and a failed AD realm join; PR #1195 added the "max. 8" note. Two queues with
    one name collapse into one nodearray.

    ## Example
    ```yaml
    queues:
      - name: nc96adsv4
        vm_size: Standard_NC96ads_A100_v4
        max_count: 8
        image: microsoft-dsvm:ubuntu-hpc:2204:latest
    ```

    ## Fix
    At most 8 characters, short enough for ``<name>-pg0-<n>``:
    ```yaml
    queues:
      - name: nc96v4
    ```
    """
    yield from report(doc, judge_queue_names(queues_view(config_data(doc))))


# -- AZH004 --------------------------------------------------------------------------------------------

@rule(code="AZH004", name="azhop-slurm-versions", severity=Severity.ERROR, kinds=KINDS)
def slurm_versions(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """``slurm_version`` and ``cyclecloud_slurm_version`` are not a supported pair, or one is left to a default.

    ## What it catches
    With ``queue_manager: slurm``: a cyclecloud-slurm project paired with a Slurm release it does not
    support (2.7.x: 20.11.9 / 22.05.3; 3.0.4: 22.05.9 / 23.02.5), including pairs completed by the
    runtime default; a missing version (warning); cyclecloud-slurm 3.x with a pinned CycleCloud older
    than 8.4.2.

    ## Why is this bad?
    The schema checks each version against its list, never the pair (G4). Its ``default`` annotations
    (22.05.9 / 3.0.4) are not what the playbooks install when a key is absent (20.11.9 / 2.7.2:
    ``playbooks/cccluster.yml`` and ``roles/cyclecloud_cluster/vars/main.yml`` at 826f7906): ``slurm_version: 22.05.9`` alone installs cyclecloud-slurm 2.7.2, which cannot run
    it. PR #1752 documents the pairs and the CycleCloud 8.4.2 requirement of 3.0.x; PR #950: Slurm
    failed to create nodes when the version was left unset.

    ## Example
    ```yaml
    slurm:
      accounting_enabled: false
      slurm_version: 22.05.9
    ```

    ## Fix
    Always write both, as a supported pair:
    ```yaml
    slurm:
      accounting_enabled: false
      slurm_version: 22.05.9
      cyclecloud_slurm_version: 3.0.4
    ```
    """
    data = config_data(doc)
    if data.get("queue_manager") != "slurm":
        return
    slurm = as_dict(data.get("slurm"))
    given_slurm, given_cc = slurm.get("slurm_version"), slurm.get("cyclecloud_slurm_version")
    sv = given_slurm if isinstance(given_slurm, str) else kb.RUNTIME_SLURM_VERSION
    cc = given_cc if isinstance(given_cc, str) else kb.RUNTIME_CYCLECLOUD_SLURM_VERSION
    if sv not in kb.SLURM_VERSIONS or cc not in kb.SLURM_PAIRS:
        return  # AZH001 reports values off the schema's lists
    path = ("slurm",) if "slurm" in data else ("queue_manager",)
    if sv not in kb.SLURM_PAIRS[cc]:
        which = "cyclecloud_slurm_version" if given_cc is not None else ("slurm_version" if given_slurm is not None else None)
        defaulted = "" if given_cc is not None and given_slurm is not None else \
            f" (the missing key defaults to {kb.RUNTIME_SLURM_VERSION if given_slurm is None else kb.RUNTIME_CYCLECLOUD_SLURM_VERSION} at runtime)"
        yield doc.at_path(path + ((which,) if which else ()), f"cyclecloud-slurm {cc} cannot install Slurm {sv}{defaulted}",
                          hint=f"pair Slurm {sv} with cyclecloud_slurm_version {kb.cyclecloud_slurm_for(sv)}", prefer_value=True)
    elif given_slurm is None or given_cc is None:
        missing = "slurm_version" if given_slurm is None else "cyclecloud_slurm_version"
        yield doc.at_path(path, f"{missing} is not set: the playbooks install {sv} / cyclecloud-slurm {cc}, "
                                f"not the schema's default {kb.SCHEMA_DEFAULT_SLURM_VERSION} / {kb.SCHEMA_DEFAULT_CYCLECLOUD_SLURM_VERSION}",
                          hint=f"write both: slurm_version: {sv} and cyclecloud_slurm_version: {cc}", severity=Severity.WARNING)
    pinned = dig(data, "cyclecloud", "version")
    if isinstance(pinned, str) and version_key(cc)[:1] >= (3,) and version_key(pinned)[:3] < kb.MIN_CYCLECLOUD_FOR_CC_SLURM_3:
        yield doc.at_path(("cyclecloud", "version"), f"cyclecloud-slurm {cc} needs CycleCloud 8.4.2 or newer, not {pinned}",
                          hint="raise cyclecloud.version (or remove it for the newest) or use cyclecloud-slurm 2.7.x", prefer_value=True)


# -- AZH011 --------------------------------------------------------------------------------------------

def _effective_cc_slurm(data: dict[str, Any]) -> str:
    value = dig(data, "slurm", "cyclecloud_slurm_version")
    return value if isinstance(value, str) else kb.RUNTIME_CYCLECLOUD_SLURM_VERSION


# Azure sizes whose GPUs are AMD (NVv4: Radeon Instinct MI25; NGads V620: Radeon Pro V620; ND MI300X v5):
# the NVIDIA-driver question does not apply (learn.microsoft.com/azure/virtual-machines/nvv4-series etc.).
_AMD_GPU_SIZE = re.compile(r"(?i)^Standard_NV\d+as_v4$|_V620|MI\d{3}X?")


@rule(code="AZH011", name="azhop-gpu-queue", severity=Severity.ERROR, kinds=KINDS)
def gpu_queue(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """A GPU queue cannot run multi-node NCCL jobs as configured: no driver in the image, or no colocation for InfiniBand.

    ## What it catches
    For compute queues on N-series sizes with NVIDIA GPUs (not the AMD NVv4, NGads V620 and MI300X
    sizes): an image known to have no NVIDIA driver (plain
    CentOS/Ubuntu/AlmaLinux, Windows); an InfiniBand size (``r`` in the size name) that can grow
    beyond one node under Slurm without ``ColocateNodes: true``; (warning) a colocated queue larger
    than one scale set (``MaxScaleSetSize``, default 100); (info) an image hpcconf cannot judge, and
    A100/H100 queues on cyclecloud-slurm 2.7.x.

    ## Why is this bad?
    The schema has no VM-size semantics (G8). Without a driver ``nvidia-smi`` and NCCL fail on the
    node (azhpc-images #398 shows even a GPU image without the right driver). InfiniBand only links
    VMs of one scale set / placement group; az-hop's Slurm template defaults ``slurm.hpc`` (what
    ColocateNodes sets) to false although the schema text says "Defaults to true", so multi-node
    jobs land on unconnected VMs and NCCL falls back to TCP. az-hop #1016: a colocated scale set
    holds a bounded number of nodes. #1919: NC A100 v4 nodes terminate before configuring on
    cyclecloud-slurm 2.7.2.

    ## Example
    ```yaml
    queues:
      - name: ndv4
        vm_size: Standard_ND96asr_v4
        max_count: 4
        image: OpenLogic:CentOS:7_9-gen2:latest
    ```

    ## Fix
    ```yaml
      - name: ndv4
        vm_size: Standard_ND96asr_v4
        max_count: 4
        image: microsoft-dsvm:ubuntu-hpc:2204:latest
        ColocateNodes: true
    ```
    """
    data = config_data(doc)
    slurm = queue_manager_of(data) == "slurm"
    old_cc = version_key(_effective_cc_slurm(data))[:1] < (3,)
    for i, queue in queues_of(data):
        size = kb.parse_vm_size(str(queue.get("vm_size", "")))
        if size is None or not size.gpu or queue.get("type") == "remoteviz":
            continue
        path = ("queues", i)
        image = queue.get("image")
        if isinstance(image, str) and not _AMD_GPU_SIZE.search(str(queue.get("vm_size", ""))):
            has_driver, why = kb.gpu_driver_verdict(image)
            if has_driver is False:
                yield doc.at_path(path + ("image",), f"GPU queue image '{image}' has no NVIDIA driver ({why})",
                                  hint="use an HPC image, e.g. microsoft-dsvm:ubuntu-hpc:2204:latest", prefer_value=True)
            elif has_driver is None:
                yield doc.at_path(path + ("image",), f"cannot tell whether GPU queue image '{image}' has an NVIDIA driver: {why}",
                                  hint="make sure the image has the NVIDIA datacenter driver (and MOFED for InfiniBand)",
                                  prefer_value=True, severity=Severity.INFO)
        nodes = kb.queue_max_nodes(queue) or 0
        if slurm and size.rdma and nodes > 1 and queue.get("ColocateNodes") is not True:
            yield doc.at_path(path + (("ColocateNodes",) if "ColocateNodes" in queue else ("name",)),
                              f"InfiniBand queue '{queue.get('name')}' can run {nodes}-node jobs but ColocateNodes is not true "
                              "(az-hop's Slurm template defaults it to false)",
                              hint="set ColocateNodes: true so the nodes share one placement group and the InfiniBand fabric",
                              prefer_value=True)
        scale_set = queue.get("MaxScaleSetSize", 100)
        if slurm and queue.get("ColocateNodes") is True and isinstance(scale_set, int) and nodes > scale_set:
            yield doc.at_path(path + ("max_count",) if "max_count" in queue else path,
                              f"queue '{queue.get('name')}' can grow to {nodes} nodes but one scale set holds {scale_set}; "
                              "a job cannot span scale sets over InfiniBand", hint="keep multi-node jobs within MaxScaleSetSize",
                              prefer_value=True, severity=Severity.WARNING)
        if slurm and old_cc and kb.ampere_or_newer(str(queue.get("vm_size"))):
            yield doc.at_path(path + ("vm_size",), f"cyclecloud-slurm {_effective_cc_slurm(data)} with {queue.get('vm_size')}: "
                                                   "az-hop #1919 reports A100 nodes terminating before configuring on 2.7.2",
                              hint="prefer slurm_version 23.02.5 with cyclecloud_slurm_version 3.0.4 for A100/H100 queues",
                              prefer_value=True, severity=Severity.INFO)


# -- AZH012 --------------------------------------------------------------------------------------------

@rule(code="AZH012", name="azhop-queue-limits", severity=Severity.WARNING, kinds=KINDS)
def queue_limits(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """A queue's limits or scheduler-specific keys do not do what they say.

    ## What it catches
    Queues with neither ``max_count`` nor ``max_core_count``; negative limits (error); an
    ``idle_timeout`` not below ``autoscale.idle_timeout``; ``type: login`` with OpenPBS, or without
    ``initial_count`` (error); ``ColocateNodes: true`` under OpenPBS; ``location`` without ``subnet`` or a
    ``subnet`` not in the ``<resource_group>/<vnet>/<subnet>`` form (error); (info) a
    ``MaxScaleSetSize`` above 100.

    ## Why is this bad?
    az-hop's CycleCloud templates read these keys with no checks (``playbooks/roles/cyclecloud_cluster/templates/``): a queue
    without limits grows to CycleCloud's defaults; ``idle_timeout`` must be lower than the
    cluster-wide value (template comment); the OpenPBS template ignores ``ColocateNodes`` and turns
    ``login`` queues into execute nodes; multi-region queues use ``subnet`` only with ``location``.
    Scale sets above 100 VMs need a support ticket (schema description).

    ## Example
    ```yaml
    autoscale: {idle_timeout: 1800}
    queues:
      - {name: htc, vm_size: Standard_F2s_v2, image: "azhpc:azhop-compute:centos-7_9:latest", idle_timeout: 3600}
    ```

    ## Fix
    ```yaml
      - {name: htc, vm_size: Standard_F2s_v2, max_count: 64, image: "azhpc:azhop-compute:centos-7_9:latest", idle_timeout: 300}
    ```
    """
    yield from report(doc, judge_queue_limits(queues_view(config_data(doc))))
