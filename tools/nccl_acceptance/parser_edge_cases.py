#!/usr/bin/env python3
"""Edge cases of NCCL's file/env parsers, run against the real NCCL in torch (1 GPU, 1 rank).
The verdicts are stored in tests/test_parse_nccl_xml.py and tests/test_parse_nccl_conf.py.
Usage: python3 parser_edge_cases.py OUTDIR"""
import concurrent.futures as cf
import json
import os
import subprocess
import sys


def worker(port, rank=0, world=1):
    import torch
    import torch.distributed as dist
    torch.cuda.set_device(rank)
    out = {"rank": rank}
    try:
        dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world,
                                device_id=torch.device("cuda", rank))
        x = torch.ones(1 << 20, device="cuda")
        dist.all_reduce(x); torch.cuda.synchronize()
        out["ok"] = True
        dist.destroy_process_group()
    except Exception as e:
        out.update(ok=False, error=(type(e).__name__ + ": " + str(e))[-400:])
    if rank == 0:
        print("RESULT " + json.dumps(out), flush=True)

WORLD = 1
CASES = [
 # name, kind, content (file) or env dict
 ("t_control_ok", "topo", '<system version="1">\n</system>\n'),
 ("t_v2", "topo", '<system version="2">\n</system>\n'),
 ("t_single_quote", "topo", "<system version='1'>\n</system>\n"),
 ("t_double_space", "topo", '<system  version="1">\n</system>\n'),
 ("t_space_before_gt", "topo", '<system version="1" >\n</system>\n'),
 ("t_newline_in_tag", "topo", '<system\n version="1">\n</system>\n'),
 ("t_comment_eq_first_word", "topo", '<system version="1">\n<!--a=b -->\n</system>\n'),
 ("t_comment_normal", "topo", '<system version="1">\n<!-- a=b -->\n</system>\n'),
 ("t_close_tag_space", "topo", '<system version="1">\n</system >\n'),
 ("t_text", "topo", '<system version="1">text</system>\n'),
 ("t_unknown_subtree_mismatch", "topo", '<system version="1">\n<foo><bar></baz></qux>\n</system>\n'),
 ("t_version_octal", "topo", '<system version="01">\n</system>\n'),
 ("t_version_hex", "topo", '<system version="0x1">\n</system>\n'),
 ("t_version_junk", "topo", '<system version="1abc">\n</system>\n'),
 ("t_doctype", "topo", '<!DOCTYPE system>\n<system version="1">\n</system>\n'),
 ("t_prolog_noattr", "topo", '<?xml?>\n<system version="1">\n</system>\n'),
 ("t_unquoted", "topo", '<system version=1>\n</system>\n'),
 ("t_17_attrs_version_first", "topo", '<system version="1" ' + " ".join('a%d="%d"' % (i, i) for i in range(17)) + '>\n</system>\n'),
 ("t_version_17th", "topo", '<system ' + " ".join('a%d="%d"' % (i, i) for i in range(16)) + ' version="1">\n</system>\n'),
 ("t_crlf", "topo", '<system version="1">\r\n</system>\r\n'),
 ("t_tab_in_tag", "topo", '<system\tversion="1">\n</system>\n'),
 ("t_value_253", "topo", '<system version="1" name="' + "x" * 253 + '">\n</system>\n'),
 ("t_value_254", "topo", '<system version="1" name="' + "x" * 254 + '">\n</system>\n'),
 ("t_entity", "topo", '<system version="1" name="a&amp;b">\n</system>\n'),
 ("t_stray_close_top", "topo", '</foo>\n<system version="1">\n</system>\n'),
 ("c_crlf", "conf", "NCCL_ALGO=Ring\r\n"),
 ("c_longline_comment", "conf", "#" + "x" * 4094 + "NCCL_ALGO=Bogus\n"),
 ("c_leading_space", "conf", " NCCL_ALGO=Bogus\n"),
 ("c_export", "conf", "export NCCL_ALGO=Bogus\n"),
 ("c_quoted", "conf", 'NCCL_ALGO="Ring"\n'),
 ("c_trailing_space", "conf", "NCCL_ALGO=Ring \n"),
 ("c_indented_comment", "conf", " # NCCL_ALGO=Bogus\n"),
 ("c_bom", "conf", "\ufeffNCCL_ALGO=Bogus\n"),
 ("a_bogus", "env", {"NCCL_ALGO": "Bogus"}),
 ("a_trailing_semicolon", "env", {"NCCL_ALGO": "ring;"}),
 ("a_leading_semicolon", "env", {"NCCL_ALGO": ";ring"}),
 ("a_space_after_comma", "env", {"NCCL_ALGO": "Tree, Ring"}),
 ("a_extra_colon", "env", {"NCCL_ALGO": "allreduce:tree:ring"}),
 ("a_bad_prefix", "env", {"NCCL_ALGO": "sendrecv:ring"}),
 ("a_caret_only", "env", {"NCCL_ALGO": "^"}),
 ("a_upper", "env", {"NCCL_ALGO": "RING,TREE"}),
 ("p_ll128", "env", {"NCCL_PROTO": "LL128,Simple"}),
 ("p_prefix_first", "env", {"NCCL_PROTO": "allreduce:LL128;LL,Simple"}),
]

def run_case(case, outdir, port):
    name, kind, content = case
    env = {k: v for k, v in os.environ.items() if not k.startswith("NCCL_")}
    env.update({"NCCL_NVLS_ENABLE": "0", "NCCL_DEBUG": "INFO", "NCCL_DEBUG_SUBSYS": "INIT,ENV,GRAPH,TUNING"})
    if kind in ("topo", "conf"):
        path = os.path.join(outdir, "inputs", name + (".xml" if kind == "topo" else ".conf"))
        with open(path, "w", newline="") as f:
            f.write(content)
        env["NCCL_TOPO_FILE" if kind == "topo" else "NCCL_CONF_FILE"] = path
    else:
        env.update(content)
    world = WORLD
    procs = [subprocess.Popen([sys.executable, __file__, "--worker", str(port), str(r), str(world)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for r in range(world)]
    outs = [pr.communicate(timeout=240)[0] for pr in procs]
    class P: pass
    p = P(); p.stdout = outs[0]; p.stderr = "\n".join(outs[1:]); p.returncode = [pr.returncode for pr in procs]
    res = None
    for line in p.stdout.splitlines():
        if line.startswith("RESULT "):
            res = json.loads(line[7:])
    log = [l for l in (p.stdout + p.stderr).splitlines() if ("WARN" in l or "Ignoring" in l or "set by environment" in l or "XML" in l or "version" in l.lower()) and "ProcessGroupNCCL" not in l][:12]
    return {"case": name, "kind": kind, "input": content, "rc": p.returncode, "result": res, "log": log}

def main():
    if sys.argv[1] == "--worker":
        return worker(int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))
    global WORLD
    outdir = sys.argv[1]
    WORLD = int(os.environ.get("PROBE_WORLD", "1"))
    only = os.environ.get("PROBE_ONLY")
    cases = [c for c in CASES if not only or c[1] in only.split(",")]
    os.makedirs(os.path.join(outdir, "inputs"), exist_ok=True)
    import torch
    info = {"torch": torch.__version__, "nccl": ".".join(map(str, torch.cuda.nccl.version())),
            "gpu": torch.cuda.get_device_name(0)}
    info["world"] = WORLD
    with cf.ThreadPoolExecutor(2 if WORLD > 1 else 4) as ex:
        futs = [ex.submit(run_case, c, outdir, 29700 + i) for i, c in enumerate(cases)]
        results = [f.result() for f in futs]
    for r in results:
        print(r["case"], r["result"])
    with open(os.path.join(outdir, "results-kb.json"), "w") as f:
        json.dump({"env": info, "cases": results}, f, indent=1)

if __name__ == "__main__":
    main()
