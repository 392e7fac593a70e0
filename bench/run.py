#!/usr/bin/env python3
"""Side-by-side benchmark of the installed ``hpcconf`` against the tool users run today.

It times whole processes, as pre-commit and CI run them: each command is run once to warm the
file cache (and to check that it works), then ``--runs`` times, alternating with the command it is
compared to; the table shows medians, their ratio, and every run's peak memory (the child's
``ru_maxrss`` from ``os.wait4``). The scenarios and targets are those of docs/performance.md:

  lint one AzHOP config.yml        vs  check-jsonschema --schemafile <az-hop's config.schema.json>   <= 0.5x
  build examples/ndmv4-aks-current.yaml vs the same check-jsonschema run                             <= 1.0x
  lint a tree of 1,000+ artifacts  vs  lint the one config.yml                                         <= 10x
  build a 200-pool, 20,000-node spec (a job per pool) vs build the one-pool example                     <= 3x
  every run                        peak memory                                                         < 100 MiB

What is measured (printed above the table):
  default         a temporary venv with ``pip install '.[bench]'`` (not editable: bytecode compiled,
                  as users get it), removed afterwards
  --venv DIR      the hpcconf and check-jsonschema installed in an existing venv
  --quick         CI's smoke run: the current interpreter's hpcconf (possibly an editable install),
                  one run of each command on smaller inputs; it proves the script works, not a number

The peer, check-jsonschema, comes from the ``bench`` extra; a missing peer or schema is an error,
never a skipped row. az-hop's schema is not part of hpcconf: pass it with --schema (default:
../shared/upstream/azhop/az-hop/config.schema.json next to the repository, or $HPCCONF_AZHOP_SCHEMA).

Usage:  python bench/run.py [--quick] [--venv DIR] [--runs N] [--schema FILE] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

REPO = Path(__file__).resolve().parents[1]
DEFAULT_SCHEMA = REPO.parent / "shared" / "upstream" / "azhop" / "az-hop" / "config.schema.json"
CONFIG = REPO / "out" / "azhop-ncv4" / "azhop" / "config.yml"  # an AzHOP config.yml hpcconf generated
# The current-versions twin of the blog example: `build` refuses examples/ndmv4-aks.yaml (a retired AKS
# version, lint error HPC207) unless --force, and a benchmark must time a build that succeeds.
ONE_POOL = REPO / "examples" / "ndmv4-aks-current.yaml"
MEMORY_LIMIT_MIB = 100.0

Argv = Callable[[int], list[str]]  # run index -> command line (builds write to a fresh directory per run)


class BenchError(SystemExit):
    """A setup problem: printed as one line, exit status 2."""

    def __init__(self, message: str):
        super().__init__(f"bench: error: {message}")


@dataclass
class Run:
    wall: float
    cpu: float
    peak_mib: float


@dataclass
class Side:
    label: str
    argv: Argv
    ok: Sequence[int] = (0, 1)  # exit statuses that still did the work (lint exits 1 on findings)
    runs: list[Run] = field(default_factory=list)

    @property
    def wall(self) -> float:
        return statistics.median(r.wall for r in self.runs)

    @property
    def cpu(self) -> float:
        return statistics.median(r.cpu for r in self.runs)

    @property
    def peak_mib(self) -> float:
        return max(r.peak_mib for r in self.runs)


@dataclass
class Scenario:
    name: str
    ours: Side
    peer: Side | None
    target: float | None  # the ratio ours / peer must not exceed

    @property
    def ratio(self) -> float | None:
        return self.ours.wall / self.peer.wall if self.peer else None

    @property
    def cpu_ratio(self) -> float | None:
        return self.ours.cpu / self.peer.cpu if self.peer else None

    @property
    def met(self) -> bool | None:
        return None if self.target is None or self.ratio is None else self.ratio <= self.target


# -- running ------------------------------------------------------------------------------------

def run_once(argv: list[str], cwd: Path, ok: Sequence[int] = (0,)) -> Run:
    """One whole process: wall time, CPU time and peak RSS of exactly this child (``os.wait4``)."""
    with tempfile.TemporaryFile() as stderr:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=stderr)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode not in ok:
            stderr.seek(0)
            tail = stderr.read().decode(errors="replace").strip().splitlines()[-5:]
            raise BenchError(f"`{' '.join(argv)}` exited {proc.returncode}:\n  " + "\n  ".join(tail))
    return Run(wall=wall, cpu=usage.ru_utime + usage.ru_stime, peak_mib=usage.ru_maxrss / 1024)  # KiB on Linux


def measure(scenario: Scenario, runs: int, warmup: bool, cwd: Path) -> None:
    sides = [s for s in (scenario.ours, scenario.peer) if s is not None]
    if warmup:
        for side in sides:
            run_once(side.argv(-1), cwd, side.ok)
    for i in range(runs):  # alternating, so a slower spell of a shared machine hits both sides
        for side in sides if i % 2 == 0 else reversed(sides):
            side.runs.append(run_once(side.argv(i), cwd, side.ok))


# -- the installation measured ------------------------------------------------------------------

@dataclass
class Install:
    hpcconf: list[str]
    check_jsonschema: list[str]
    description: str


def _scripts(python: Path) -> Path:
    return python.parent


def require_peer(bin_dir: Path) -> list[str]:
    exe = bin_dir / ("check-jsonschema.exe" if os.name == "nt" else "check-jsonschema")
    if not exe.exists():
        raise BenchError(f"check-jsonschema is not installed in {bin_dir.parent}: pip install 'hpcconf[bench]' "
                         "(the peer this benchmark compares against)")
    return [str(exe)]


def install_venv(root: Path) -> Install:
    venv = root / "venv"
    print(f"bench: creating {venv} and installing {REPO} (not editable) with the bench extra ...", flush=True)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    result = subprocess.run([str(python), "-m", "pip", "install", "--quiet", f"{REPO}[bench]"],
                            capture_output=True, text=True)
    if result.returncode != 0:
        raise BenchError(f"pip install '{REPO}[bench]' failed:\n{result.stderr.strip()[-2000:]}")
    return from_venv(venv, f"non-editable `pip install '.[bench]'` into a fresh venv ({venv})")


def from_venv(venv: Path, description: str = "") -> Install:
    python = venv / "bin" / "python"
    if not python.exists():
        raise BenchError(f"{venv} is not a venv (no bin/python)")
    where = subprocess.run([str(python), "-I", "-c", "import hpcconf, os; print(os.path.dirname(hpcconf.__file__))"],
                           capture_output=True, text=True)
    if where.returncode != 0:
        raise BenchError(f"hpcconf is not installed in {venv}")
    location = Path(where.stdout.strip())
    editable = REPO in location.parents or location == REPO / "hpcconf"
    kind = "EDITABLE install (source tree; not what users run)" if editable else "installed package"
    return Install(hpcconf=[str(_scripts(python) / "hpcconf")], check_jsonschema=require_peer(_scripts(python)),
                   description=description or f"{kind} in {venv} ({location})")


def current_interpreter() -> Install:
    bin_dir = Path(sys.executable).parent
    script = bin_dir / "hpcconf"
    command = [str(script)] if script.exists() else [sys.executable, "-m", "hpcconf.cli"]
    return Install(hpcconf=command, check_jsonschema=require_peer(bin_dir),
                   description=f"--quick: the current interpreter's hpcconf ({sys.executable}); "
                               "no venv was created and the numbers are not the installed package's")


# -- inputs --------------------------------------------------------------------------------------

def artifact_tree(root: Path, copies: int) -> tuple[Path, int]:
    """``copies`` copies of the committed out/ tree (every artifact kind hpcconf generates)."""
    tree = root / "tree"
    for i in range(copies):
        shutil.copytree(REPO / "out", tree / f"copy{i:02d}")
    return tree, sum(1 for p in tree.rglob("*") if p.is_file())


def many_pools_spec(root: Path, pools: int, nodes_per_pool: int) -> Path:
    """The one-pool example with its pool repeated ``pools`` times (``pN``, ``nodes_per_pool`` nodes each)."""
    text = ONE_POOL.read_text(encoding="utf-8")
    block = re.search(r"^pools:\n((?:  .*\n)+)", text, re.M)
    sku = re.search(r"^\s+sku: (\S+)", block.group(1) if block else "", re.M)
    if block is None or sku is None:
        raise BenchError(f"{ONE_POOL}: no `pools:` block with a sku to repeat")
    listed = "".join(f"  - name: p{i:03d}\n    sku: {sku.group(1)}\n    count: {nodes_per_pool}\n" for i in range(pools))
    spec = root / "many-pools.yaml"
    # A test job and health checks for every pool (the default): each pool's in files of its own (docs/performance.md).
    spec.write_text(text[:block.start()] + "pools:\n" + listed + text[block.end():], encoding="utf-8")
    return spec


def find_schema(option: str | None) -> Path:
    path = Path(option or os.environ.get("HPCCONF_AZHOP_SCHEMA") or DEFAULT_SCHEMA)
    if not path.is_file():
        raise BenchError(f"az-hop's config.schema.json not found at {path}: pass --schema FILE (az-hop's "
                         "config.schema.json, https://github.com/Azure/az-hop) or set HPCCONF_AZHOP_SCHEMA")
    return path


# -- the report -----------------------------------------------------------------------------------

def version_of(argv: list[str]) -> str:
    result = subprocess.run([*argv, "--version"], capture_output=True, text=True)
    return (result.stdout or result.stderr).strip().splitlines()[0] if result.returncode == 0 else "?"


def header(install: Install, runs: int, warmup: bool) -> list[str]:
    load = f"; load average {os.getloadavg()[0]:.2f}" if hasattr(os, "getloadavg") else ""
    return [
        f"measured: {install.description}",
        f"{version_of(install.hpcconf)}; check-jsonschema {version_of(install.check_jsonschema).split()[-1]}; "
        f"Python {platform.python_version()}; {platform.system()} {platform.machine()}; {_cpus()}{load}",
        f"median of {runs} whole-process run(s){' after a warm-up' if warmup else ''}, alternating the two commands",
    ]


def _cpus() -> str:
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return f"{usable} usable CPUs (of {os.cpu_count()})" if usable != os.cpu_count() else f"{usable} CPUs"


def table(scenarios: list[Scenario]) -> list[str]:
    rows = [("scenario", "hpcconf s", "peer s", "ratio", "cpu ratio", "target", "met", "hpcconf MiB", "peer MiB")]
    for s in scenarios:
        rows.append((
            s.name, f"{s.ours.wall:.3f}", f"{s.peer.wall:.3f}" if s.peer else "-",
            f"{s.ratio:.2f}x" if s.ratio is not None else "-", f"{s.cpu_ratio:.2f}x" if s.cpu_ratio is not None else "-",
            f"<={s.target:g}x" if s.target is not None else "-",
            {True: "yes", False: "NO", None: "-"}[s.met],
            f"{s.ours.peak_mib:.1f}", f"{s.peer.peak_mib:.1f}" if s.peer else "-"))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))) for r in rows]
    return [lines[0], "-" * len(lines[0]), *lines[1:]]


def memory_line(scenarios: list[Scenario]) -> str:
    peak = max(side.peak_mib for s in scenarios for side in (s.ours, s.peer) if side is not None)
    ours = max(s.ours.peak_mib for s in scenarios)
    verdict = "met" if ours < MEMORY_LIMIT_MIB else "NOT met"
    return f"peak memory: hpcconf {ours:.1f} MiB at most over every run (target < {MEMORY_LIMIT_MIB:g} MiB: {verdict}); " \
           f"largest of all commands {peak:.1f} MiB"


def as_json(scenarios: list[Scenario], lines: list[str]) -> dict:
    return {"header": lines, "scenarios": [{
        "name": s.name, "target": s.target, "ratio": s.ratio, "cpu_ratio": s.cpu_ratio, "met": s.met,
        "sides": {side.label: {"argv": side.argv(0), "wall": [r.wall for r in side.runs], "cpu": [r.cpu for r in side.runs],
                               "peak_mib": [r.peak_mib for r in side.runs]}
                  for side in (s.ours, s.peer) if side is not None}} for s in scenarios]}


# -- main ----------------------------------------------------------------------------------------

def scenarios_for(install: Install, schema: Path, work: Path, quick: bool) -> list[Scenario]:
    hpc, cjs = install.hpcconf, install.check_jsonschema
    tree, files = artifact_tree(work, copies=1 if quick else 21)
    pools, nodes = (5, 100) if quick else (200, 100)
    big = many_pools_spec(work, pools, nodes)

    def build(spec: Path, tag: str) -> Argv:
        # No --force: a build that lints an error writes nothing and exits non-zero, which fails the benchmark
        # (builds must exit 0); each run writes to a directory of its own.
        return lambda i: [*hpc, "build", str(spec), "-o", str(work / "built" / f"{tag}{i}"), "-q"]

    check = Side("check-jsonschema", lambda i: [*cjs, "--schemafile", str(schema), str(CONFIG)])
    lint_one = Side("hpcconf lint config.yml", lambda i: [*hpc, "lint", str(CONFIG)])
    return [
        Scenario("lint AzHOP config.yml vs check-jsonschema", lint_one, check, 0.5),
        Scenario(f"build {ONE_POOL.name} vs check-jsonschema", Side("hpcconf build", build(ONE_POOL, "one"), ok=(0,)),
                 Side("check-jsonschema", check.argv), 1.0),
        Scenario(f"lint {files:,}-file tree vs one file", Side("hpcconf lint tree", lambda i: [*hpc, "lint", str(tree)]),
                 Side("hpcconf lint config.yml", lint_one.argv), 10.0),
        Scenario(f"build {pools} pools/{pools * nodes:,} nodes, a job per pool, vs 1 pool",
                 Side("hpcconf build many", build(big, "many"), ok=(0,)),
                 Side("hpcconf build one", build(ONE_POOL, "one-again"), ok=(0,)), 3.0),
        Scenario("hpcconf --version (start-up, no target)", Side("hpcconf --version", lambda i: [*hpc, "--version"]),
                 None, None),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="CI smoke run: current interpreter, one run, small inputs")
    parser.add_argument("--venv", type=Path, help="measure the hpcconf installed in this venv instead of a fresh one")
    parser.add_argument("--runs", type=int, default=None, help="timed runs per command (default 7; --quick: 1)")
    parser.add_argument("--schema", help="az-hop's config.schema.json (default: $HPCCONF_AZHOP_SCHEMA or ../shared/...)")
    parser.add_argument("--json", type=Path, help="also write every run's numbers to this file")
    args = parser.parse_args(argv)
    schema = find_schema(args.schema)
    runs = args.runs or (1 if args.quick else 7)
    with tempfile.TemporaryDirectory(prefix="hpcconf-bench-") as tmp:
        work = Path(tmp)
        if args.venv:
            install = from_venv(args.venv.resolve())
        elif args.quick:
            install = current_interpreter()
        else:
            install = install_venv(work)
        scenarios = scenarios_for(install, schema, work, args.quick)
        for scenario in scenarios:
            measure(scenario, runs, warmup=not args.quick, cwd=work)
            shutil.rmtree(work / "built", ignore_errors=True)
        lines = [line for line in header(install, runs, not args.quick) if line]
        report = [*lines, "", *table(scenarios), "", memory_line(scenarios)]
    print("\n".join(report))
    if args.json:
        args.json.write_text(json.dumps(as_json(scenarios, lines), indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
