"""Issue 27's mutation campaign over a copy of the tree (see tools/mutation.py):

    python tools/mutation_campaign.py ROOT OUT.jsonl after

hpcconf/lint/rules/: a fixed-seed sample (about 200 of the 1,321 mutation points, each module in
proportion) against tests/rules/ for that module's codes; hpcconf/nccl_report/verdict.py and
command.py's target/report functions (target_from_spec, report, run_nccl_report), whole, against the
nccl-report tests; the YAML limits
(yamlpos._refuse_oversized, _refuse_deep_nesting, _could_nest_deeply), whole, against
tests/test_input_limits.py. ONLY=<substring> limits it to matching targets; PRINT_JOBS=1 prints the jobs
(JSON lines) for tools/mutation_parallel.py instead of running them. ``before`` leaves out
test files the branch point did not have."""
import json
import math
import os
import subprocess
import sys

ROOT, OUT, PHASE = sys.argv[1], sys.argv[2], sys.argv[3]
PY = sys.executable
MUTATOR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "mutation.py")
codes = json.loads(subprocess.run([PY, "-c", """
import json
from hpcconf.lint.rule_loading import load_rules
out = {}
for code, r in load_rules().items():
    if r.check is not None:
        out.setdefault(r.check.__module__, []).append(code)
print(json.dumps(out))"""], cwd=ROOT, capture_output=True, text=True, check=True).stdout)
TOTAL = {'azhop_identity': 1, 'azhop_images': 1, 'azhop_network': 63, 'azhop_queues': 56, 'azhop_schema': 53, 'azhop_storage': 38,
         'compat': 149, 'cross': 165, 'dockerfile': 99, 'helm': 83, 'k8s': 57, 'mpi': 90, 'nccl_conf': 31, 'nccl_env': 122,
         'nccl_xml': 66, 'rccl': 18, 'secrets': 8, 'slurm': 5, 'volcano': 134}
jobs = []
for name, n in TOTAL.items():
    module = f"hpcconf.lint.rules.{name}"
    cs = codes.get(module, [])
    if not cs:
        continue
    sample = max(2, math.ceil(n * 200 / 1321))
    jobs.append((f"hpcconf/lint/rules/{name}.py", ["tests/rules/", "-k", " or ".join(cs)], sample))
# test_nccl_log_findings.py pins what nccl-tests' own errors do to the report and its exit status (command.py)
report_tests = ["tests/test_nccl_report.py"] + (["tests/test_nccl_verdict_boundaries.py", "tests/test_nccl_verdict_limits.py",
                                                "tests/test_nccl_log_findings.py"] if PHASE == "after" else [])
jobs.append(("hpcconf/nccl_report/verdict.py", report_tests, None))
# run_nccl_report is what nccl_report_command was before the options moved to hpcconf.commands.nccl_report
jobs.append(("hpcconf/nccl_report/command.py:target_from_spec,report,run_nccl_report", report_tests, None))
jobs.append(("hpcconf/yamlpos.py:_refuse_oversized,_refuse_deep_nesting,_could_nest_deeply", ["tests/test_input_limits.py"], None))
only = os.environ.get("ONLY")
for target, tests, sample in jobs:
    if only and only not in target:
        continue
    args = [PY, MUTATOR, ROOT, OUT, target, *tests, "--seed", "27"]
    if sample:
        args += ["--sample", str(sample)]
    if os.environ.get("PRINT_JOBS"):  # tools/mutation_parallel.py runs the jobs side by side, a tree copy each
        print(json.dumps({"target": target, "tests": tests, "sample": sample}))
        continue
    subprocess.run(args)
