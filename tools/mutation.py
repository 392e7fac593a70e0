"""A small AST mutator (issue 27): one mutant at a time, written in place, a narrow pytest run, the file restored.

Run it on a copy of the tree, never on a work tree you edit (it rewrites product files while it runs)::

    git archive HEAD | tar -x -C /tmp/mut/tree && ln -s "$PWD/../shared" /tmp/mut/shared
    python tools/mutation.py /tmp/mut/tree OUT.jsonl MODULE[:FUNC,FUNC] TESTS... [--sample N --seed S]

Operators: comparison swaps (< <=, > >=, == !=, in / not in, is / is not), and <-> or, ``not`` removed,
an int constant + 1, a ``yield`` dropped, a returned value replaced by None. Each mutant is one JSON line:
module, mutant (line, operator, before -> after), killed/survived (a timeout counts as killed).
``ONLY_MUTANTS=file`` (JSON lines of [module, mutant]) reruns just those, e.g. a previous run's survivors.
tools/mutation_campaign.py runs the issue's campaign (rule modules sampled, nccl-report and the limits whole).
"""
from __future__ import annotations

import ast
import json
import os
import random
import subprocess
import sys
import time

SWAP = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq, ast.NotEq: ast.Eq,
        ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot, ast.IsNot: ast.Is}


def points(tree: ast.AST, funcs: set[str] | None):
    """(kind, node index in walk order, detail) for each mutation point, inside ``funcs`` if given."""
    scopes = []
    if funcs:
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in funcs:
                scopes.append(node)
    else:
        scopes = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    seen = set()
    out = []
    index = {id(n): i for i, n in enumerate(ast.walk(tree))}
    for scope in scopes:
        for node in ast.walk(scope):
            if id(node) in seen:
                continue
            seen.add(id(node))
            i = index[id(node)]
            if isinstance(node, ast.Compare):
                for k, op in enumerate(node.ops):
                    if type(op) in SWAP:
                        out.append(("compare", i, k))
            elif isinstance(node, ast.BoolOp):
                out.append(("boolop", i, 0))
            elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
                out.append(("not", i, 0))
            elif isinstance(node, ast.Constant) and type(node.value) is int and not isinstance(node.value, bool):
                out.append(("int", i, 0))
            elif isinstance(node, ast.Expr) and isinstance(node.value, (ast.Yield, ast.YieldFrom)):
                out.append(("drop-yield", i, 0))
            elif isinstance(node, ast.Return) and node.value is not None:
                out.append(("return-none", i, 0))
    return out


def mutate(source: str, point) -> tuple[str, str]:
    tree = ast.parse(source)
    kind, target, k = point
    node = list(ast.walk(tree))[target]
    line = getattr(node, "lineno", 0)
    before = ast.unparse(node)[:120]
    if kind == "compare":
        node.ops[k] = SWAP[type(node.ops[k])]()
    elif kind == "boolop":
        node.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
    elif kind == "not":
        replacement = node.operand
        for parent in ast.walk(tree):
            for field, value in ast.iter_fields(parent):
                if value is node:
                    setattr(parent, field, replacement)
                elif isinstance(value, list):
                    for j, item in enumerate(value):
                        if item is node:
                            value[j] = replacement
    elif kind == "int":
        node.value = node.value + 1
    elif kind == "drop-yield":
        node.value = ast.Constant(None)
    elif kind == "return-none":
        node.value = ast.Constant(None)
    after = ast.unparse(node)[:120] if kind != "not" else "(not removed)"
    return ast.unparse(tree), f"L{line} {kind}: {before} -> {after}"


def main() -> None:
    args = sys.argv[1:]
    sample = seed = None
    if "--sample" in args:
        i = args.index("--sample"); sample = int(args[i + 1]); del args[i:i + 2]
    if "--seed" in args:
        i = args.index("--seed"); seed = int(args[i + 1]); del args[i:i + 2]
    root, out, target, *tests = args
    module, _, funcs = target.partition(":")
    path = os.path.join(root, module)
    original = open(path, encoding="utf-8").read()
    pts = points(ast.parse(original), set(funcs.split(",")) if funcs else None)
    if sample is not None and len(pts) > sample:
        pts = random.Random(seed).sample(pts, sample)
    wanted = None
    if os.environ.get("ONLY_MUTANTS"):
        wanted = {tuple(json.loads(line)) for line in open(os.environ["ONLY_MUTANTS"])}
    with open(out, "a") as log:
        for point in pts:
            mutated, what = mutate(original, point)
            if mutated == ast.unparse(ast.parse(original)):
                continue
            if wanted is not None and (module, what) not in wanted:
                continue
            open(path, "w", encoding="utf-8").write(mutated)
            start = time.time()
            try:
                r = subprocess.run([sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *tests],
                                   cwd=root, capture_output=True, text=True, timeout=120)
                status = "killed" if r.returncode != 0 else "survived"
            except subprocess.TimeoutExpired:
                status = "killed"  # a hang is caught by the timeout
            finally:
                open(path, "w", encoding="utf-8").write(original)
            log.write(json.dumps({"module": module, "mutant": what, "status": status,
                                  "seconds": round(time.time() - start, 1)}) + "\n")
            log.flush()


if __name__ == "__main__":
    main()
