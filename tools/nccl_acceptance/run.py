#!/usr/bin/env python3
"""Real-NCCL acceptance of hpcconf's generated files (runs on a machine with >= 2 NVIDIA GPUs).

For each SKU's generated topology XML, graph XML and nccl.conf, start a fresh 2-rank
all_reduce (PyTorch + NCCL, one process per GPU) with NCCL_TOPO_FILE / NCCL_GRAPH_FILE /
NCCL_CONF_FILE pointing at the file, and record whether NCCL initialised and the busbw.
Negative controls (a topology with an XML prolog, one indented with tabs) must fail, which
shows the harness can tell. NVLink SHARP stays off (NCCL_NVLS_ENABLE=0) as the lender requires.

Usage: python3 run.py DIR RESULTS.json
"""

import hashlib
import json
import os
import subprocess
import sys
import time

NBYTES = 1 << 28  # 256 MiB of float32: enough for a stable busbw, short enough for many cases
ITERS = 10


def worker(rank, world, port):
    import torch
    import torch.distributed as dist

    torch.cuda.set_device(rank)
    out = {"rank": rank}
    try:
        dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world,
                                device_id=torch.device("cuda", rank))
        x = torch.ones(NBYTES // 4, device="cuda")
        for _ in range(3):
            dist.all_reduce(x)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(ITERS):
            dist.all_reduce(x)
        torch.cuda.synchronize()
        dt = (time.perf_counter() - t0) / ITERS
        ok = bool(x[0].item() == world ** (3 + ITERS))
        algbw = NBYTES / dt / 1e9
        out.update(ok=ok, busbw_GBps=round(algbw * 2 * (world - 1) / world, 1))
        dist.destroy_process_group()
    except Exception as exc:  # noqa: BLE001 - the message is the result
        out.update(ok=False, error=(type(exc).__name__ + ": " + str(exc))[:400])
    if rank == 0:
        print("RESULT " + json.dumps(out), flush=True)


def _first_interface():
    names = sorted(n for n in os.listdir("/sys/class/net") if n != "lo")
    return names[0] if names else "lo"


def run_case(env_extra, port):
    env = dict(os.environ)
    for key in list(env):
        if key.startswith("NCCL_") and key != "NCCL_NVLS_ENABLE":
            del env[key]
    env.update(env_extra)
    env["NCCL_NVLS_ENABLE"] = "0"
    env["NCCL_DEBUG"] = "WARN"
    procs = [subprocess.Popen([sys.executable, __file__, "--worker", str(r), "2", str(port)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for r in range(2)]
    outputs = []
    for p in procs:
        try:
            outputs.append(p.communicate(timeout=180)[0])
        except subprocess.TimeoutExpired:
            p.kill()
            outputs.append("TIMEOUT")
    for line in outputs[0].splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    return {"ok": False, "error": "no result: " + outputs[0][-400:]}


def main(directory, results_path):
    cases = json.load(open(os.path.join(directory, "cases.json")))
    abs_dir = os.path.abspath(directory)
    results = {"nccl_version": None, "cases": []}
    import torch

    results["nccl_version"] = ".".join(map(str, torch.cuda.nccl.version()))
    results["gpu"] = torch.cuda.get_device_name(0)
    port = 29600
    controls = {
        "control-prolog": '<?xml version="1.0"?>\n<system version="1">\n</system>\n',
        "control-tabs": '<system version="1">\n\t<!-- tab -->\n</system>\n',
    }
    plan = [("baseline", "-", {}, None)]
    for name, text in controls.items():
        path = os.path.join(abs_dir, name + ".xml")
        open(path, "w").write(text)
        plan.append((name, "topo", {"NCCL_TOPO_FILE": path}, None))
    for case in cases:
        for role in ("topo", "graph", "conf"):
            if role not in case:
                continue
            path = os.path.join(abs_dir, case[role]["file"])
            if role == "conf":
                # the conf names the node path of the topology; point it at the copy here
                text = open(path).read().replace(case["node_dir"], abs_dir)
                # the test machine's interface names are not the VM's: keep NCCL's bootstrap working
                if not os.path.exists("/sys/class/net/eth0"):
                    text = text.replace("NCCL_SOCKET_IFNAME=eth0", "NCCL_SOCKET_IFNAME=" + _first_interface())
                path = path + ".local"
                open(path, "w").write(text)
                env = {"NCCL_CONF_FILE": path}
            elif role == "graph":
                env = {"NCCL_TOPO_FILE": os.path.join(abs_dir, case["topo"]["file"]), "NCCL_GRAPH_FILE": path}
            else:
                env = {"NCCL_TOPO_FILE": path}
            plan.append((case["sku"], role, env, case[role]["sha256"]))
    seen = {}  # identical files (H100/H200 share ndv5) run once
    for sku, role, env, source_sha in plan:
        files = [v for k, v in env.items() if k in ("NCCL_TOPO_FILE", "NCCL_GRAPH_FILE", "NCCL_CONF_FILE")]
        shas = {os.path.basename(f): hashlib.sha256(open(f, "rb").read()).hexdigest() for f in files}
        key = (role, tuple(sorted(shas.values())))
        if key not in seen:
            port += 1
            seen[key] = run_case(env, port)
        result = dict(seen[key])
        # source_sha256: the file as hpcconf generated it (before the local path rewrite of a conf)
        result.update(sku=sku, role=role, source_sha256=source_sha, sha256=shas)
        print(json.dumps(result), flush=True)
        results["cases"].append(result)
    json.dump(results, open(results_path, "w"), indent=2, sort_keys=True)


if __name__ == "__main__":
    if sys.argv[1] == "--worker":
        worker(int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))
    else:
        main(sys.argv[1], sys.argv[2])
