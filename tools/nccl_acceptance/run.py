#!/usr/bin/env python3
"""Real-NCCL acceptance of hpcconf's generated files (runs on a machine with >= 2 NVIDIA GPUs).

For each SKU's generated topology XML, graph XML and nccl.conf, start a fresh 2-rank
all_reduce (PyTorch + NCCL, one process per GPU) with NCCL_TOPO_FILE / NCCL_GRAPH_FILE /
NCCL_CONF_FILE pointing at the file, and record whether NCCL initialised and the busbw.
Negative controls (a topology with an XML prolog, one indented with tabs) must fail, which
shows the harness can tell. NVLink SHARP stays off (NCCL_NVLS_ENABLE=0) as the lender requires.
Then each NCCL_ALGO case of cases.json runs every collective (all_reduce, all_gather,
reduce_scatter, broadcast, alltoall, sendrecv) once.

NCCL runs with NCCL_DEBUG=INFO (INIT,ENV): the raw output of every case goes to RAW.jsonl, and the
topology/graph file NCCL says it loaded ("NCCL_TOPO_FILE set by environment to ...") is hashed
(``loaded_sha256``), so a verdict names the bytes NCCL read, not only the file meant.

Usage: python3 run.py DIR RESULTS.json RAW.jsonl
Environment: ACCEPT_RANKS (default 2: one rank per GPU; 1 on a one-GPU machine, where busbw is 0 and only
NCCL's acceptance of the files is shown), ACCEPT_ONLY (comma-separated SKU names: run only their files,
plus the baseline and the controls; the NCCL_ALGO cases need 2 ranks and run only with ACCEPT_RANKS=2).
"""

import hashlib
import json
import os
import re
import subprocess
import sys
import time

NBYTES = 1 << 28  # 256 MiB of float32: enough for a stable busbw, short enough for many cases
ITERS = 10


COLLECTIVES = ("all_reduce", "all_gather", "reduce_scatter", "broadcast", "alltoall", "sendrecv")
RANKS = int(os.environ.get("ACCEPT_RANKS", "2"))
ONLY = {n for n in os.environ.get("ACCEPT_ONLY", "").split(",") if n}
LOADED = re.compile(r"(NCCL_TOPO_FILE|NCCL_GRAPH_FILE) set by environment to (\S+)")


def run_collective(name, rank, world):
    """One call of ``name`` on 64 MiB; True when the result is right."""
    import torch
    import torch.distributed as dist

    n = (64 << 20) // 4
    x = torch.full((n,), float(rank + 1), device="cuda")
    if name == "all_reduce":
        dist.all_reduce(x)
        expect = torch.full_like(x, world * (world + 1) / 2)
    elif name == "all_gather":
        y = torch.empty(n * world, device="cuda")
        dist.all_gather_into_tensor(y, x)
        x, expect = y, torch.arange(1, world + 1, device="cuda", dtype=torch.float32).repeat_interleave(n)
    elif name == "reduce_scatter":
        y = torch.empty(n // world, device="cuda")
        dist.reduce_scatter_tensor(y, x)
        x, expect = y, torch.full_like(y, world * (world + 1) / 2)
    elif name == "broadcast":
        dist.broadcast(x, src=0)
        expect = torch.ones_like(x)
    elif name == "alltoall":
        y = torch.empty_like(x)
        dist.all_to_all_single(y, x)
        x, expect = y, torch.arange(1, world + 1, device="cuda", dtype=torch.float32).repeat_interleave(n // world)
    else:  # sendrecv: a ring of send/recv, as nccl-tests' sendrecv_perf
        y = torch.empty_like(x)
        ops = [dist.P2POp(dist.isend, x, (rank + 1) % world), dist.P2POp(dist.irecv, y, (rank - 1) % world)]
        for req in dist.batch_isend_irecv(ops):
            req.wait()
        x, expect = y, torch.full_like(y, float((rank - 1) % world + 1))
    torch.cuda.synchronize()
    return bool(torch.equal(x, expect))


def collectives_worker(rank, world, port, names):
    import torch
    import torch.distributed as dist

    torch.cuda.set_device(rank)
    out = {"rank": rank, "collectives": {}}
    try:
        dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world,
                                device_id=torch.device("cuda", rank))
        for name in names:
            try:
                out["collectives"][name] = {"ok": run_collective(name, rank, world)}
            except Exception as exc:  # noqa: BLE001 - the message is the result
                out["collectives"][name] = {"ok": False, "error": (type(exc).__name__ + ": " + str(exc))[:300]}
                break  # a failed NCCL call leaves the communicator unusable
        dist.destroy_process_group()
    except Exception as exc:  # noqa: BLE001
        out.update(error=(type(exc).__name__ + ": " + str(exc))[:400])
    out["ok"] = len(out["collectives"]) == len(names) and all(c["ok"] for c in out["collectives"].values())
    if rank == 0:
        print("RESULT " + json.dumps(out), flush=True)


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


RAW = []  # one record per case: its environment and both ranks' raw output


def _sha(path):
    try:
        return hashlib.sha256(open(path, "rb").read()).hexdigest()
    except OSError as exc:
        return "unreadable: " + str(exc)


def run_case(env_extra, port, label, collectives=None):
    env = dict(os.environ)
    for key in list(env):
        if key.startswith("NCCL_") and key != "NCCL_NVLS_ENABLE":
            del env[key]
    env.update(env_extra)
    env["NCCL_NVLS_ENABLE"] = "0"
    env["NCCL_DEBUG"] = "INFO"
    env["NCCL_DEBUG_SUBSYS"] = "INIT,ENV"
    args = ["--collectives", ",".join(collectives)] if collectives else ["--worker"]
    procs = [subprocess.Popen([sys.executable, __file__, *args, str(r), str(RANKS), str(port)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for r in range(RANKS)]
    outputs = []
    for p in procs:
        try:
            outputs.append(p.communicate(timeout=120)[0])
        except subprocess.TimeoutExpired:
            p.kill()
            outputs.append("TIMEOUT")
    RAW.append({"case": label, "env": {k: v for k, v in env.items() if k.startswith("NCCL_")}, "rank_output": outputs})
    loaded = {}
    for key, path in LOADED.findall(outputs[0]):
        loaded[key] = {"path": path, "sha256": _sha(path)}
    for line in outputs[0].splitlines():
        if line.startswith("RESULT "):
            return dict(json.loads(line[7:]), loaded=loaded)
    return {"ok": False, "error": "no result: " + outputs[0][-400:], "loaded": loaded}


def _machine():
    import torch

    smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,pci.bus_id", "--format=csv,noheader"],
                         capture_output=True, text=True)
    topo = subprocess.run(["nvidia-smi", "topo", "-m"], capture_output=True, text=True)
    return {"nccl_version": ".".join(map(str, torch.cuda.nccl.version())), "torch": torch.__version__,
            "gpu": torch.cuda.get_device_name(0), "gpus": smi.stdout.strip().splitlines(),
            "nvidia_smi_topo": topo.stdout, "kernel": os.uname().release,
            "preset_env": {k: v for k, v in os.environ.items() if k.startswith("NCCL_")}}


def main(directory, results_path, raw_path):
    spec = json.load(open(os.path.join(directory, "cases.json")))
    cases, algo_cases = spec["files"], spec["algo"]
    abs_dir = os.path.abspath(directory)
    results = dict(_machine(), cases=[], algo_cases=[])
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
        if ONLY and case["sku"] not in ONLY:
            continue
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
    for sku, role, env, source_sha in plan:  # every SKU's own files, each run (no sharing by content)
        files = [v for k, v in env.items() if k in ("NCCL_TOPO_FILE", "NCCL_GRAPH_FILE", "NCCL_CONF_FILE")]
        shas = {os.path.basename(f): _sha(f) for f in files}
        port += 1
        result = run_case(env, port, f"{sku}:{role}")
        # source_sha256: the file as hpcconf generated it (before the local path rewrite of a conf)
        result.update(sku=sku, role=role, source_sha256=source_sha, sha256=shas)
        print(json.dumps(result), flush=True)
        results["cases"].append(result)
    results["ranks"] = RANKS
    for case in (algo_cases if RANKS >= 2 else []):
        runs = {}
        for collective in COLLECTIVES:  # a fresh pair of processes each: a failed call poisons the communicator
            port += 1
            run = run_case(case["env"], port, f"algo:{case['name']}:{collective}", [collective])
            runs[collective] = {"ok": run["ok"], **({"error": run.get("error") or run.get("collectives", {}).get(collective, {}).get("error")} if not run["ok"] else {})}
        result = {"name": case["name"], "env": case["env"], "expected": case.get("expected"), "collectives": runs,
                  "matches_expected": {c: runs[c]["ok"] == case.get("expected", {}).get(c) for c in COLLECTIVES}}
        print(json.dumps(result), flush=True)
        results["algo_cases"].append(result)
    json.dump(results, open(results_path, "w"), indent=2, sort_keys=True)
    with open(raw_path, "w") as raw:
        for record in RAW:
            raw.write(json.dumps(record, sort_keys=True) + "\n")


if __name__ == "__main__":
    if sys.argv[1] == "--worker":
        worker(int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))
    elif sys.argv[1] == "--collectives":
        collectives_worker(int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), sys.argv[2].split(","))
    else:
        main(sys.argv[1], sys.argv[2], sys.argv[3])
