"""Run tools/mutation_campaign.py's jobs side by side, each in its own copy of the tree (mutation.py rewrites
product files in place), after checking that the job's tests pass unmutated (else every mutant would read
as killed). One JSON-lines file per job under OUTDIR, plus baseline.jsonl::

    PRINT_JOBS=1 python tools/mutation_campaign.py . /dev/null after > jobs.jsonl
    python tools/mutation_parallel.py ROOT jobs.jsonl OUTDIR [WORKERS]
"""
from __future__ import annotations

import concurrent.futures
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def run_job(root: str, index: int, job: dict, outdir: str) -> dict:
    tree = os.path.join(outdir + ".trees", str(index))
    shutil.copytree(root, tree, symlinks=True, ignore=shutil.ignore_patterns(".git", ".venv", ".whl*", "__pycache__"))
    base = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *job["tests"]],
                          cwd=tree, capture_output=True, text=True)
    result = {"target": job["target"], "baseline_rc": base.returncode}
    if base.returncode == 0:
        args = [sys.executable, os.path.join(HERE, "mutation.py"), tree, os.path.join(outdir, f"job{index:02d}.jsonl"),
                job["target"], *job["tests"], "--seed", "27"]
        if job.get("sample"):
            args += ["--sample", str(job["sample"])]
        subprocess.run(args)
    else:
        result["baseline_tail"] = base.stdout[-1500:]
    return result


def main() -> None:
    root, jobs_file, outdir = sys.argv[1:4]
    workers = int(sys.argv[4]) if len(sys.argv) > 4 else os.cpu_count() or 2
    jobs = [json.loads(line) for line in open(jobs_file) if line.strip()]
    os.makedirs(outdir, exist_ok=True)
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        results = list(pool.map(lambda ij: run_job(root, ij[0], ij[1], outdir), enumerate(jobs)))
    with open(os.path.join(outdir, "baseline.jsonl"), "w") as log:
        for r in results:
            log.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    main()
