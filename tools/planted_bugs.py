"""Issue 27's planted bugs: plant each in the product (or a test), run the test that must catch it, restore the
file with git checkout. Run from a clean work tree: python tools/planted_bugs.py [NUMBER ...]"""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PY = sys.executable
BUGS = [
 ("1 nccl.conf comment after TAB", "hpcconf/parsers/nccl_conf.py", 'value[hash_at - 1] in " \\t"', 'value[hash_at - 1] in " "',
  ["tests/rules/test_rule_fixtures.py", "-k", "NCCL002"]),
 ("2 2-GPU pod without /dev/shm", "hpcconf/lint/rules/k8s.py", "if count is None or count < 2:", "if count is None or count < 3:",
  ["tests/rules/test_rule_fixtures.py", "-k", "K8S003"]),
 ("3 whereabouts ipRanges rejected", "hpcconf/lint/rules/k8s.py", 'not (config.get("range") or config.get("ipRanges"))', 'not config.get("range")',
  ["tests/rules/test_rule_fixtures.py", "-k", "K8S004"]),
 ("4 poolType cidrpool ignored", "hpcconf/lint/rules/cross.py", 'pool_kind = str(network.ipam.get("poolType") or "ippool").lower()', 'pool_kind = "ippool"',
  ["tests/rules/test_rule_fixtures.py", "-k", "XA008"]),
 ("5 blank lines above #! accepted", "hpcconf/lint/rules/slurm.py", 'if doc.text.startswith("#!"):\n        return', 'if doc.text.lstrip().startswith("#!"):\n        return',
  ["tests/rules/test_rule_fixtures.py", "-k", "SLURM001"]),
 ("6 FROM host:5000/img read as tagged", "hpcconf/lint/rules/dockerfile.py", 'tag = name.rsplit(":", 1)[1] if ":" in name.rsplit("/", 1)[-1] else ""', 'tag = name.rsplit(":", 1)[1] if ":" in name else ""',
  ["tests/rules/test_rule_fixtures.py", "-k", "DKR001"]),
 ("7 passwords shorter than 9 missed", "hpcconf/secret_scan.py", "_REFERENCE_KEY.search(key) or len(value) < 6:", "_REFERENCE_KEY.search(key) or len(value) < 9:",
  ["tests/rules/test_rule_fixtures.py", "-k", "SEC002"]),
 ("8 XML suppression without reason", "hpcconf/lint/suppress.py", 'reason = reason.removesuffix("-->").strip()', 'reason = reason.strip()',
  ["tests/rules/test_rule_fixtures.py", "-k", "HPC010"]),
 ("9 busbw exactly at the floor fails", "hpcconf/nccl_report/verdict.py", "if verdict.measured >= floor.gbps:\n        verdict.status = \"pass\"\n        verdict.message = f\"pass: ", "if verdict.measured > floor.gbps:\n        verdict.status = \"pass\"\n        verdict.message = f\"pass: ",
  ["tests/test_nccl_verdict_boundaries.py"]),
 ("10 no row at the floor's size: a larger size judged", "hpcconf/nccl_report/verdict.py", "smaller = [r for r in rows if r.size < floor.message_bytes]", "smaller = [r for r in rows if r.size != floor.message_bytes]",
  ["tests/test_nccl_verdict_boundaries.py"]),
 ("11 --spec drops SKU and node count", "hpcconf/nccl_report/command.py", "return Target(build.pool_skus[pool.name], counts.pop() if len(counts) == 1 else None if counts else pool.count)", "return Target()",
  ["tests/test_nccl_verdict_boundaries.py", "tests/test_nccl_report.py", "-k", "spec"]),
 ("12 YAML over 1 MiB of multi-byte characters parsed", "hpcconf/yamlpos.py", "if len(text) * 4 > MAX_YAML_BYTES and", "if len(text) > MAX_YAML_BYTES and",
  ["tests/test_input_limits.py"]),
 ("13 depth limit 64 -> 128", "hpcconf/yamlpos.py", "MAX_YAML_DEPTH = 64", "MAX_YAML_DEPTH = 128",
  ["tests/test_input_limits.py"]),
 ("14 K8S003 demoted warning -> info (snapshots regenerated)", "hpcconf/lint/rules/k8s.py", 'name="gpu-pod-without-shm", severity=Severity.WARNING', 'name="gpu-pod-without-shm", severity=Severity.INFO',
  ["tests/rules/test_rule_fixtures.py", "-k", "K8S003"]),
 ("15 assert not math.isnan(0.0) back", "tests/test_property_artifacts.py", '    assert not crashes and not errors, (crashes, errors)\n', '    assert not crashes and not errors, (crashes, errors)\n    assert not __import__("math").isnan(0.0)\n',
  ["tests/test_test_quality.py", "-k", "cannot_fail"]),
 ("16 precedence slip back in the --spec test", "tests/test_nccl_report.py", '    assert result.exit_code == 0, result.output\n    assert "pass (derived floor)"', '    assert result.exit_code in (0, 1) and "Standard_" in result.output or "no floor" in result.output\n    assert "pass (derived floor)"',
  ["tests/test_test_quality.py", "-k", "cannot_fail"]),
]
only = set(sys.argv[1:])
for name, path, old, new, test in BUGS:
    if only and name.split()[0] not in only:
        continue
    full = os.path.join(ROOT, path)
    text = open(full).read()
    assert text.count(old) == 1, (name, text.count(old))
    open(full, "w").write(text.replace(old, new))
    try:
        if name.startswith("14"):  # the blind regeneration the issue describes, then the suite
            subprocess.run([PY, "-m", "pytest", "tests/rules/test_rule_snapshots.py", "-k", "K8S003", "--update-snapshots", "-q"], cwd=ROOT, capture_output=True)
        r = subprocess.run([PY, "-m", "pytest", "-q", "-p", "no:cacheprovider", *test], cwd=ROOT, capture_output=True, text=True)
        lines = r.stdout.strip().splitlines()
        failed = [l for l in lines if l.startswith("FAILED")]
        print(f"## {name}\n   planted in {path}; pytest {' '.join(test)} -> exit {r.returncode}; {lines[-1] if lines else ''}")
        for l in failed[:4]:
            print("   " + l[:170])
    finally:
        subprocess.run(["git", "checkout", "--", path] + (["tests/rules/K8S003/expect.snap"] if name.startswith("14") else []), cwd=ROOT, check=True)
