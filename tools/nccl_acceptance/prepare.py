#!/usr/bin/env python3
"""Write every NCCL file hpcconf generates (one per SKU) into a folder for the real-NCCL acceptance run.

Usage: python tools/nccl_acceptance/prepare.py DIR
Then, on a machine with >= 2 NVIDIA GPUs: python3 tools/nccl_acceptance/run.py DIR RESULTS.json RAW.jsonl

Each SKU's files keep their own names (nd96amsr-a100-v4-topo.xml, ...), so no SKU's verdict can come
from a sibling's file. The NCCL_ALGO cases run every collective on one node of 2 GPUs with NVLS off;
``expected`` is what :func:`hpcconf.knowledge.nccl_algo.algorithms_available` predicts.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

from hpcconf.catalog import Catalog
from hpcconf.knowledge.nccl_algo import algorithms_available, per_collective_algo
from hpcconf.parsers.nccl_conf import render_nccl_conf
from hpcconf.resolve.nccl import NODE_NCCL_DIR, resolve_pool_nccl
from hpcconf.resolve.sku import resolve_sku
from hpcconf.targets.nccl_topology import render_graph_xml, render_topology_xml

NCCL_VERSION = "2.28.9"  # the test machine's (torch's bundled NCCL)
COLLECTIVES = ("all_reduce", "all_gather", "reduce_scatter", "broadcast", "alltoall", "sendrecv")


def algo_cases() -> list[dict]:
    """NCCL_ALGO values: the generated per-collective ones, and the global ones they replace."""
    values = {"generated-NVLSTree": per_collective_algo("NVLSTree", NCCL_VERSION),
              "global-NVLSTree": "NVLSTree", "global-Tree": "Tree", "unset": None}
    out = []
    for name, value in values.items():
        expected = {c: bool(algorithms_available(c, value, nnodes=1, nvls=False, ranks_per_node=2,
                                                 version=NCCL_VERSION)) for c in COLLECTIVES}
        out.append({"name": name, "env": {"NCCL_ALGO": value} if value else {}, "expected": expected})
    return out


def main(directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    catalog = Catalog.load()
    cases = []
    for name in catalog.names():
        sku = catalog.get(name)
        nccl = resolve_pool_nccl(sku, infiniband=sku.infiniband is not None, overrides={}, nccl_version=NCCL_VERSION)
        files = {}
        if nccl.topo_file:
            files["topo"] = (nccl.topo_file, render_topology_xml(resolve_sku(sku)))
        if nccl.graph_file:
            files["graph"] = (nccl.graph_file, render_graph_xml(resolve_sku(sku)))
        files["conf"] = (f"{name}.nccl.conf", render_nccl_conf(dict(nccl.node_conf)))
        entry = {"sku": name, "gpus": sku.gpu.count, "node_dir": NODE_NCCL_DIR}
        for role, (file_name, text) in files.items():
            (directory / file_name).write_text(text)
            entry[role] = {"file": file_name, "sha256": hashlib.sha256(text.encode()).hexdigest()}
        cases.append(entry)
    spec = {"files": cases, "algo": algo_cases()}
    (directory / "cases.json").write_text(json.dumps(spec, indent=2, sort_keys=True) + "\n")
    print(f"{len(cases)} SKUs written to {directory}")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
