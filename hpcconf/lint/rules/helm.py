"""Helm values rules (HELM): values the chart version ignores, and operators that do not fit together.

Chart versions: :mod:`hpcconf.lint.chart_version` (the deployment's Chart.lock/Chart.yaml, the spec, ``--chart``
or settings, a header comment; else unknown, HELM006). Key existence per version: :mod:`hpcconf.knowledge.charts`.
"""

from __future__ import annotations

from typing import Any, Iterator, Optional

from ...artifacts import Kind
from ...diagnostics import Diagnostic, Severity
from ...knowledge import charts
from ...parsers.k8s import as_dict as _dict
from ...parsers.k8s import get, sriov_resources
from ...rules_registry import rule
from ..chart_version import chart_version, resolve_chart_version
from ..context import LintContext
from ..document import Document, DocumentSet, per_deployment

HELM_KINDS = {Kind.HELM_NETWORK_OPERATOR: "network-operator", Kind.HELM_GPU_OPERATOR: "gpu-operator",
              Kind.HELM_NFD: "node-feature-discovery"}
MELLANOX, NVIDIA = "15b3", "10de"
NETWORK_CLASSES = ("02", "0207", "0200")


def _path(dotted: str) -> tuple[Any, ...]:
    return tuple(dotted.split("."))


# --------------------------------------------------------------------------- HELM001

@rule(code="HELM001", name="values-key-not-in-chart", severity=Severity.WARNING,
      kinds=tuple(HELM_KINDS))
def values_key_not_in_chart(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """A values key the chart version does not have (a typo, or a key of another version); helm ignores it.

    ## What it catches
    Keys of network-operator, gpu-operator or node-feature-discovery values (a values file named after the
    chart, ``values.yaml`` in a chart-named directory, or an umbrella chart's values under the dependency's
    name; its ``enabled``, the parent's dependency ``condition``, is Helm's) that the chart's ``values.yaml``
    and templates do not have at the chart version: the one the
    deployment's ``Chart.lock``/``Chart.yaml`` pins, else the spec's pin, ``--chart`` or a per-path setting,
    else the version a header comment names. hpcconf read every release's chart (``hpcconf/data/chart_trees.yaml``:
    each key path with the versions that have it). Free-form sections (``nodeSelector``, ``tolerations``,
    ``env``, ``resources``, anything ``{}`` by default or rendered with ``toYaml``) take any sub-key. When
    no version is known, only keys in no version read at all are reported (HELM006 says the version is
    unknown). Values of AMD's GPU operator (ROCm/gpu-operator, whose chart is also called gpu-operator; told by
    its own top-level keys ``kmm``, ``deviceConfig``, ``controllerManager``...) are not NVIDIA's and are not
    judged: hpcconf holds no key tree of AMD's chart.

    ## Why is this bad?
    None of these charts ships a values schema that rejects unknown keys, so ``helm upgrade -i``
    succeeds and the setting does nothing: ``driver.rdma.useHostMOFED: true`` (the key is ``useHostMofed``)
    leaves gpu-operator waiting for a MOFED driver that never comes, and ``sriovDevicePlugin.resoures``
    leaves the default resource list in place. network-operator 24.10 removed the NicClusterPolicy keys
    (``deployCR``, ``ofedDriver.*``, ``rdmaSharedDevicePlugin.*``, ``sriovDevicePlugin.*``,
    ``secondaryNetwork.*``; commit 8fc96f20): the 2023 NDm A100 v4 AKS walkthroughs' flags on a current
    chart deploy no OFED driver, no device plugin and no secondary network, and the job's IB resource never
    appears (Mellanox/network-operator ``deployment/network-operator/values.yaml`` per tag).

    ## Severity
    Warning: helm accepts unknown keys (none of these charts ships a values schema that rejects them),
    so the install succeeds and the setting does nothing; what is lost depends on the key.

    ## Example
    ```yaml
    # network-operator 26.4.1
    deployCR: true
    ofedDriver:
      deploy: true
    ```

    ## Fix
    Correct the key's spelling (the hint names the chart's key when one is close), pin the chart version
    the values were written for (``Chart.lock``, ``--version``), or move the settings where the chart
    version expects them: for network-operator ≥ 24.10, a ``NicClusterPolicy`` manifest (``hpcconf build``
    emits one).
    """
    chart = HELM_KINDS[doc.kind]
    tree = charts.chart_tree(chart)
    if tree is None or not isinstance(doc.data, dict):
        return
    resolved = resolve_chart_version(ctx, chart, doc)
    version = resolved.version if resolved.version and tree.covers(resolved.version) else None
    which = f"{chart} {version}" if version else f"any {chart} version hpcconf read ({_read_span(tree)})"
    reported: set[tuple[str, ...]] = set()
    for _dotted, path in charts.flatten_values(doc.data):
        top = _outermost_absent(chart, version, tuple(str(p) for p in path))
        if top is None or top in reported:
            continue
        if doc.values_root and top == ("enabled",):
            continue  # a subchart's `enabled`: the parent's dependency condition, read by Helm, not the chart
        reported.add(top)
        yield doc.at_path(top, f"'{'.'.join(top)}' does not exist in {which}; helm ignores it silently"
                               f"{_elsewhere(chart, top, version)}", hint=_hint(chart, version, top))


def _outermost_absent(chart: str, version: Optional[str], path: tuple[str, ...]) -> Optional[tuple[str, ...]]:
    """The shortest prefix of ``path`` the chart lacks (report `secondaryNetwork` once, not each of its keys)."""
    for end in range(1, len(path) + 1):
        if charts.values_key_status(chart, version, path[:end]) == "absent":
            return path[:end]
    return None


def _read_span(tree: charts.ChartTree) -> str:
    releases = tree.releases
    return f"{releases[0]} to {releases[-1]}" + (" and the main branch" if charts.UNRELEASED in tree.reads else "")


def _elsewhere(chart: str, path: tuple[str, ...], version: Optional[str]) -> str:
    """Where the key does exist, when it is a key of other versions rather than a typo."""
    spans = charts.key_versions(chart, path)
    info = charts.key_info(chart, ".".join(path))
    note = f" ({info.note})" if info is not None and info.note else ""
    if version is None or not spans:
        return note
    return f"; the chart has it from {', from '.join(map(str, spans))}" + note


def _hint(chart: str, version: Optional[str], path: tuple[str, ...]) -> str:
    if chart == "network-operator" and version and not charts.network_operator_renders_ncp(version) and \
            path[0] in ("deployCR", "ofedDriver", "rdmaSharedDevicePlugin", "sriovDevicePlugin", "secondaryNetwork",
                        "nvIpam", "ibKubernetes") and charts.key_versions(chart, path[:1]):
        return "from 24.10 the chart no longer renders the NicClusterPolicy: apply a NicClusterPolicy manifest instead"
    close = charts.similar_key(chart, version, path)
    if close is not None:
        return f"did you mean '{'.'.join((*path[:-1], close))}'?"
    if charts.key_versions(chart, path):
        return "pin the chart version these values were written for, or drop the key"
    return "drop the key, or check its spelling against the chart's values.yaml"


# --------------------------------------------------------------------------- HELM006

@rule(code="HELM006", name="chart-version-unknown", severity=Severity.INFO, kinds=tuple(HELM_KINDS))
def chart_version_unknown(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """The chart version of a values file is not known, so its keys are judged against every version.

    ## What it catches
    network-operator, gpu-operator or node-feature-discovery values for which nothing names the chart
    version: no ``Chart.lock`` or exact ``Chart.yaml`` version beside the file, no spec pin, no ``--chart``
    or per-path setting, no header comment; or a version outside the releases hpcconf read.

    ## Why is this bad?
    Keys come and go between chart versions (network-operator 24.10 dropped every NicClusterPolicy key;
    gpu-operator 25.3 dropped ``operator.defaultRuntime``), so whether a key does anything depends on the
    version installed. Without one, HELM001 reports only keys that no version has, and a key that only
    older or newer charts read passes unseen. An unpinned ``helm upgrade -i`` installs whatever is newest
    on the day.

    ## Severity
    Info: the keys can only be judged against the union of the versions hpcconf read; nothing is claimed
    about this file.

    ## Example
    ```yaml
    # gpu-operator-values.yaml, installed with `helm upgrade -i gpu-operator nvidia/gpu-operator -f ...`
    driver:
      enabled: false
    ```

    ## Fix
    Pin the chart: a ``Chart.lock`` (umbrella chart), ``helm install --version`` with
    ``hpcconf lint --chart gpu-operator=26.7.0``, or a per-path ``charts`` setting.
    """
    chart = HELM_KINDS[doc.kind]
    tree = charts.chart_tree(chart)
    if tree is None:
        return
    resolved = resolve_chart_version(ctx, chart, doc)
    where = f"{chart} values" + (f" under '{'.'.join(doc.values_root)}'" if doc.values_root else "")
    if resolved.version is None:
        why = f" ({resolved.source})" if resolved.source else ""
        message = (f"chart version unknown for these {where}{why}: keys are judged against every version "
                   f"hpcconf read ({_read_span(tree)})")
    elif not tree.covers(resolved.version):
        message = (f"{chart} {resolved.version} (from {resolved.source}) is outside the releases hpcconf read "
                   f"({_read_span(tree)}): keys are judged against every version read")
    else:
        return
    hint = f"pin the chart: Chart.lock, or --chart {chart}={tree.releases[-1]} (the version you install)"
    yield doc.at_path((), message, hint=hint) if doc.values_root else doc.at_line(1, message, hint=hint)


# --------------------------------------------------------------------------- HELM002

def _mofed_sources(docs: DocumentSet, ctx: LintContext) -> Optional[bool]:
    """True/False when the set shows whether the network-operator deploys MOFED; None when it cannot tell."""
    answer: Optional[bool] = None
    for doc in docs.of_kind(Kind.NIC_CLUSTER_POLICY):
        if _dict(_dict(doc.data).get("spec")).get("ofedDriver"):
            return True
        answer = False
    for doc in docs.of_kind(Kind.HELM_NETWORK_OPERATOR):
        version, _ = chart_version(doc.context_or(ctx), "network-operator", doc)
        if version and charts.network_operator_renders_ncp(version):
            if get(doc.data, "ofedDriver.deploy") is True and get(doc.data, "deployCR") is True:
                return True
            answer = False if answer is None else answer
    return answer


@rule(code="HELM002", name="gpudirect-rdma-without-mofed", severity=Severity.ERROR,
      kinds=(Kind.HELM_GPU_OPERATOR,), scope="set")
@per_deployment
def gpudirect_rdma_without_mofed(docs: DocumentSet, ctx: LintContext) -> Iterator[Diagnostic]:
    """gpu-operator loads nvidia-peermem (``driver.rdma.enabled``) but nothing provides MOFED.

    ## What it catches
    gpu-operator values with ``driver.rdma.enabled: true`` and no ``driver.rdma.useHostMofed: true``,
    linted together with network-operator values / a NicClusterPolicy that deploy no OFED/DOCA
    driver (``ofedDriver.deploy`` with ``deployCR`` up to 24.7, ``spec.ofedDriver`` from 24.10).

    ## Why is this bad?
    nvidia-peermem links against the MOFED kernel modules; the driver pod waits for the
    network-operator's OFED driver and never becomes ready without it (gpu-operator values note).
    The published 2023 NDm A100 v4 AKS walkthroughs pair ``driver.rdma.enabled=true`` with ``ofedDriver.deploy=true``.

    ## Severity
    Error: the gpu-operator driver pod waits for the MOFED driver and never becomes ready (gpu-operator
    values note on `driver.rdma`), so no GPU job can start on the node.

    ## Example
    ```yaml
    # gpu-operator values          # network-operator 23.4.0 values
    driver:                         deployCR: true
      rdma:                         ofedDriver:
        enabled: true                 deploy: false
    ```

    ## Fix
    Deploy the OFED/DOCA driver with the network-operator, set ``driver.rdma.useHostMofed: true``
    when MOFED is installed on the host, or turn ``driver.rdma.enabled`` off.
    """
    mofed = _mofed_sources(docs, ctx)
    if mofed is not False:
        return
    for doc in docs.of_kind(Kind.HELM_GPU_OPERATOR):
        if get(doc.data, "driver.rdma.enabled") is True and get(doc.data, "driver.rdma.useHostMofed") is not True:
            yield doc.at_path(("driver", "rdma", "enabled"),
                              "driver.rdma.enabled needs MOFED, but the network-operator files deploy no OFED driver "
                              "and driver.rdma.useHostMofed is not set",
                              hint="deploy ofedDriver with the network-operator, or set driver.rdma.useHostMofed: true")


# --------------------------------------------------------------------------- HELM003

def _labelled_by_rule(docs: DocumentSet, label: str) -> bool:
    """A NodeFeatureRule among the linted files sets ``label``."""
    for doc in docs.of_kind(Kind.K8S_MANIFEST):
        data = _dict(doc.data)
        if data.get("kind") != "NodeFeatureRule":
            continue
        for item in _dict(data.get("spec")).get("rules") or []:
            if label in _dict(_dict(item).get("labels")):
                return True
    return False


@rule(code="HELM003", name="nfd-labels-not-selected", severity=Severity.WARNING, kinds=(Kind.HELM_NFD, Kind.K8S_MANIFEST),
      scope="set")
@per_deployment
def nfd_labels_not_selected(docs: DocumentSet, ctx: LintContext) -> Iterator[Diagnostic]:
    """Standalone NFD does not produce the PCI labels the operators select nodes by.

    ## What it catches
    node-feature-discovery values whose ``worker.config.sources.pci`` would not label GPU nodes
    ``feature.node.kubernetes.io/pci-15b3.present`` (network-operator) and ``pci-10de.present``:
    ``deviceLabelFields`` other than ``[vendor]``, or a ``deviceClassWhitelist`` without a network
    class (``02``/``0207``) or a display class (``03``/``0302``). No config at all means nfd-worker's
    defaults (classes ``03 0b40 12``, fields ``class vendor``). NFD values inside AMD's GPU operator chart
    (``gpu-operator-charts``, whose own NodeFeatureRule labels the AMD nodes) are left alone.

    ## Why is this bad?
    The network-operator's operands (OFED driver, device plugin) select
    ``pci-15b3.present=true``; with NFD's defaults the IB HCA (class 0207) is not labelled at all,
    and with ``[class, vendor]`` the label is ``pci-0207_15b3.present``. The operator then deploys
    nothing and reports no error (node-feature-discovery ``source/pci/pci.go``). The 2023 NDm A100 v4
    AKS walkthroughs set
    ``deviceClassWhitelist [02,03,0200,0207]`` and ``deviceLabelFields [vendor]`` for this reason.
    A NodeFeatureRule linted with the values that sets ``pci-15b3.present`` (Azure's AKS InfiniBand reference
    labels the InfiniBand VF device ids that way, HELM007) stands in for the network class. (The
    network-operator's own NodeFeatureRule, ``nfd.deployNodeFeatureRules``, can add the label too; then this
    warning can be ignored.)

    ## Severity
    Warning: the operator deploys nothing on the nodes it cannot select and reports no error (node-
    feature-discovery `source/pci/pci.go` label format); the RDMA stack is missing.

    ## Example
    ```yaml
    worker:
      config:
        sources:
          pci:
            deviceLabelFields: [class, vendor]
    ```

    ## Fix
    ```yaml
    worker:
      config:
        sources:
          pci:
            deviceClassWhitelist: ["02", "03", "0200", "0207"]
            deviceLabelFields: [vendor]
    ```
    """
    by_rule = _labelled_by_rule(docs, f"feature.node.kubernetes.io/pci-{MELLANOX}.present")
    for doc in docs.of_kind(Kind.HELM_NFD):
        if any(d.kind == Kind.HELM_AMD_GPU_OPERATOR for d in docs.by_file(doc.path)):
            continue  # NFD as AMD's operator's subchart: that chart labels its nodes with its own rules
        yield from _nfd_labels(doc, by_rule)


def _nfd_labels(doc: Document, mellanox_by_rule: bool) -> Iterator[Diagnostic]:
    pci = get(doc.data, "worker.config.sources.pci")
    if pci is None:
        anchor = ("worker", "config") if get(doc.data, "worker.config") is not None else ("worker",) \
            if get(doc.data, "worker") is not None else ()
        yield doc.at_path(anchor, "no worker.config.sources.pci: nfd-worker's defaults (classes 03/0b40/12, fields "
                                  "class+vendor) never produce pci-15b3.present, so network-operator operands select no node",
                          hint="set deviceClassWhitelist [\"02\",\"03\",\"0200\",\"0207\"] and deviceLabelFields [vendor]")
        return
    pci = _dict(pci)
    fields = pci.get("deviceLabelFields", ["class", "vendor"])
    if list(fields or []) != ["vendor"]:
        yield doc.at_path(("worker", "config", "sources", "pci", "deviceLabelFields") if "deviceLabelFields" in pci
                          else ("worker", "config", "sources", "pci"),
                          f"deviceLabelFields {list(fields or [])} labels pci-<...>_<vendor>.present, not "
                          f"pci-{MELLANOX}.present / pci-{NVIDIA}.present that the operators select",
                          hint="deviceLabelFields: [vendor]")
    classes = [str(c) for c in pci.get("deviceClassWhitelist", ["03", "0b40", "12"]) or []]
    missing = []
    if not mellanox_by_rule and not any(c in NETWORK_CLASSES for c in classes):
        missing.append("a network class (02 or 0207) for the Mellanox HCAs")
    if not any(c in ("03", "0302", "0300") for c in classes):
        missing.append("a display class (03 or 0302) for the GPUs")
    if missing:
        yield doc.at_path(("worker", "config", "sources", "pci", "deviceClassWhitelist") if "deviceClassWhitelist" in pci
                          else ("worker", "config", "sources", "pci"),
                          f"deviceClassWhitelist {classes} lacks {' and '.join(missing)}",
                          hint="deviceClassWhitelist: [\"02\", \"03\", \"0200\", \"0207\"]")


# --------------------------------------------------------------------------- HELM007

ETHERNET_CLASSES = ("02", "0200")  # "02" is every network class: Ethernet 0200 as well as InfiniBand 0207


@rule(code="HELM007", name="nfd-labels-ethernet-vfs", severity=Severity.INFO, kinds=(Kind.HELM_NFD,), since="0.3.0")
def nfd_labels_ethernet_vfs(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """NFD labels every node with a Mellanox Ethernet VF ``pci-15b3.present``, not only the InfiniBand nodes.

    ## What it catches
    node-feature-discovery values whose workers run on every node (no ``worker.nodeSelector`` or
    ``worker.affinity``) and label PCI vendors (``deviceLabelFields: [vendor]``) of class ``02`` or ``0200``
    (Ethernet) devices. Info: whether a node without InfiniBand has a Mellanox VF (Azure accelerated
    networking on ConnectX-4 Lx or ConnectX-5 hosts) is not in the file.

    ## Why is this bad?
    An accelerated-networking VF is vendor 15b3 and class 0200, so such a node (an AKS system node, a GPU node
    without InfiniBand) gets ``feature.node.kubernetes.io/pci-15b3.present=true``, the label the
    network-operator's NicClusterPolicy selects: its DOCA driver container replaces the node's mlx5 driver
    under its only network interface, and the SR-IOV device plugin runs there. Azure's AKS InfiniBand
    reference (Azure/aks-rdma-infiniband ``tests/setup-infra/network-operator-nfd.yaml``) labels instead the
    InfiniBand VF device ids ``101c`` (ConnectX-6 VF) and ``101e`` (ConnectX-6 Dx/7 VF) with a NodeFeatureRule.

    ## Severity
    Info: the cost (DOCA drivers and the device plugin on a node without InfiniBand) depends on whether that
    node has a Mellanox Ethernet VF, which the values file does not show.

    ## Example
    ```yaml
    worker:
      config:
        sources:
          pci:
            deviceClassWhitelist: ["02", "03", "12"]
            deviceLabelFields: [vendor]
    ```

    ## Fix
    Drop ``02``/``0200`` from the whitelist and label the InfiniBand nodes with a NodeFeatureRule matching
    ``pci.device`` vendor ``15b3`` and device ``101c``/``101e`` (``hpcconf build`` writes
    ``nfd-network-rule.yaml``), or whitelist ``0207`` (InfiniBand) only; or run the workers on the
    InfiniBand pools alone (``worker.nodeSelector``).
    """
    worker = _dict(get(doc.data, "worker"))
    if worker.get("nodeSelector") or worker.get("affinity"):
        return
    pci = _dict(get(doc.data, "worker.config.sources.pci"))
    if list(pci.get("deviceLabelFields") or []) != ["vendor"]:
        return
    classes = [str(c) for c in pci.get("deviceClassWhitelist") or []]
    ethernet = [c for c in classes if c in ETHERNET_CLASSES]
    if not ethernet:
        return
    yield doc.at_path(("worker", "config", "sources", "pci", "deviceClassWhitelist"),
                      f"NFD workers on every node label class {'/'.join(ethernet)} vendors: a node whose only Mellanox "
                      f"device is an accelerated-networking Ethernet VF also gets pci-{MELLANOX}.present, and the "
                      "NicClusterPolicy's DOCA driver and device plugins deploy there (if such nodes exist)",
                      hint="label InfiniBand VFs by device id (15b3:101c/101e) with a NodeFeatureRule, or whitelist 0207 "
                           "instead of 02/0200, or set worker.nodeSelector to the InfiniBand pools")


# --------------------------------------------------------------------------- HELM004

@rule(code="HELM004", name="duplicate-nfd", severity=Severity.ERROR,
      kinds=(Kind.HELM_NFD, Kind.HELM_GPU_OPERATOR, Kind.HELM_NETWORK_OPERATOR, Kind.HELM_AMD_GPU_OPERATOR),
      scope="set")
@per_deployment
def duplicate_nfd(docs: DocumentSet, ctx: LintContext) -> Iterator[Diagnostic]:
    """Node-feature-discovery is deployed twice (standalone and by an operator, or by both operators).

    ## What it catches
    With standalone node-feature-discovery values in the set: gpu-operator or network-operator
    values that leave ``nfd.enabled`` at its default ``true``, or AMD GPU operator values that leave
    ``node-feature-discovery.enabled`` at its default (the chart's NFD dependency has that condition and
    ``enabled: true`` in ROCm/gpu-operator ``helm-charts-k8s/values.yaml`` @ v1.5.1; unset, Helm keeps a
    conditioned dependency, ``helm-charts/Chart.yaml`` @ v1.0.0). Without standalone NFD: two operators
    deploying their own (NVIDIA's or AMD's GPU operator beside the network operator).

    ## Why is this bad?
    Two nfd-masters and two worker DaemonSets label the same nodes with different configurations;
    the PCI labels flap and whichever config wins decides whether the operators' node selectors
    match. Both operators default ``nfd.enabled: true``; the 2023 NDm A100 v4 AKS walkthroughs and Azure's AKS guide set it
    ``false`` when NFD is installed separately ("Network Operator already deploys NFD", Azure/aks-rdma-infiniband).

    ## Severity
    Error: two NFD masters label the same nodes with different configurations; the labels flap and the
    operators' selectors match or not at random (node-feature-discovery deployment docs: one instance
    per cluster).

    ## Example
    ```yaml
    # gpu-operator values, next to nfd-values.yaml
    driver:
      enabled: true
    ```

    ## Fix
    ``nfd: {enabled: false}`` in every operator's values when NFD has its own release.
    """
    operators = docs.of_kind(*_NFD_SWITCH)
    # NFD values inside an operator's own values (its node-feature-discovery subchart) configure that operator's
    # NFD, not a second one
    standalone = [d for d in docs.of_kind(Kind.HELM_NFD)
                  if not any(op.path == d.path and d.values_root == (*op.values_root, "node-feature-discovery")
                             for op in operators)]
    enabled = [d for d in operators if get(d.data, f"{_NFD_SWITCH[d.kind]}.enabled", True) is not False]
    if standalone:
        for doc in enabled:
            chart, key = _NFD_CHARTS[doc.kind], _NFD_SWITCH[doc.kind]
            yield doc.at_path((key, "enabled") if get(doc.data, f"{key}.enabled") is not None else
                              (key,) if get(doc.data, key) is not None else (),
                              f"{chart} deploys its own node-feature-discovery ({key}.enabled defaults to true) "
                              "while NFD is installed on its own", hint=f"set {key}.enabled: false")
    elif len({d.kind for d in enabled}) >= 2:
        for doc in enabled:
            if doc.kind != Kind.HELM_NETWORK_OPERATOR:
                chart, key = _NFD_CHARTS[doc.kind], _NFD_SWITCH[doc.kind]
                others = sorted({_NFD_CHARTS[d.kind] for d in enabled if d.kind != doc.kind})
                yield doc.at_path((key, "enabled") if get(doc.data, f"{key}.enabled") is not None else (),
                                  f"{chart} and {' and '.join(others)} both deploy node-feature-discovery",
                                  hint=f"keep one: set {key}.enabled: false in the {chart} values")


# The values key that switches each operator's own NFD: gpu-operator's and network-operator's ``nfd``, the AMD GPU
# operator's ``node-feature-discovery`` dependency condition (ROCm/gpu-operator helm-charts-k8s/Chart.yaml).
_NFD_SWITCH = {Kind.HELM_GPU_OPERATOR: "nfd", Kind.HELM_NETWORK_OPERATOR: "nfd",
               Kind.HELM_AMD_GPU_OPERATOR: "node-feature-discovery"}
_NFD_CHARTS = {**HELM_KINDS, Kind.HELM_AMD_GPU_OPERATOR: "amd-gpu-operator"}


# --------------------------------------------------------------------------- HELM005

@rule(code="HELM005", name="sriov-selector-too-broad", severity=Severity.WARNING,
      kinds=(Kind.HELM_NETWORK_OPERATOR, Kind.NIC_CLUSTER_POLICY))
def sriov_selector_too_broad(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """The SR-IOV device plugin selects every Mellanox function, Ethernet VF included.

    ## What it catches
    An sriov device-plugin resource (``sriovDevicePlugin.resources[]`` or the NicClusterPolicy's
    ``resourceList[]``) whose selectors name only ``vendors``, with no ``linkTypes``, ``devices``,
    ``pfNames``, ``pciAddresses`` or ``rootDevices``; a warning where the provider profile
    (``--provider``, per-path settings, or the file's signals) has a Mellanox Ethernet function on the
    nodes, info where the provider is not known.

    ## Why is this bad?
    On Azure the accelerated-networking Ethernet VF is a Mellanox (15b3) device too. A vendor-only
    selector puts it into the IB resource, so a pod can be handed the Ethernet VF instead of an IB
    VF (and the node loses its primary network). jingchaozhang.github.io's walkthrough (2023) selects
    ``linkTypes: [infiniband]``, the Azure HPC blog's (2023) ``devices: [101c]``, Azure's reference
    (Azure/aks-rdma-infiniband) ``vendors + linkTypes``.

    ## Severity
    Warning where the provider profile says the nodes carry a Mellanox Ethernet function beside the
    fabric's (Azure's accelerated-networking VF, Crusoe's mlx5_0): the SR-IOV device plugin puts it into
    the IB resource (sriov-network-device-plugin selectors), so a pod can be handed a device that is not
    on the fabric. Info where the provider is not known.

    ## Example
    ```yaml
    sriovDevicePlugin:
      resources:
        - name: infiniband
          vendors: ["15b3"]
    ```

    ## Fix
    Add ``linkTypes: ["infiniband"]`` (or the IB VF device id, e.g. ``devices: ["101c"]``).
    """
    narrowing = ("linkTypes", "devices", "pfNames", "pciAddresses", "rootDevices", "deviceIDs", "ifNames")
    provider = ctx.provider_for(doc.text)
    for path, _prefix, name, selectors in sriov_resources(doc):
        if any(selectors.get(k) for k in narrowing):
            continue
        vendors = ",".join(map(str, selectors.get("vendors") or []))
        what = f"every {vendors} function" if vendors else "every SR-IOV function"
        if provider is not None and provider.mellanox_ethernet:
            yield doc.at_path(path, f"resource '{name}' selects {what}, including the nodes' Mellanox Ethernet "
                                    f"function (on {provider.title})", hint="add linkTypes: [\"infiniband\"]")
        else:
            where = f"on {provider.title}" if provider is not None else "where the nodes have one (Azure, Crusoe)"
            yield doc.at_path(path, f"resource '{name}' selects {what}: it takes in a Mellanox Ethernet function "
                                    f"{where}; hpcconf does not know whether these nodes have one",
                              hint="add linkTypes: [\"infiniband\"], or set the provider (--provider) to decide",
                              severity=Severity.INFO)
