"""Re-score hpcconf lint on a local copy of the real-world corpus (tests/corpus/manifest.yaml).

The corpus files are third-party and live outside the repository (default /work/corpus/files, or
--corpus DIR / $HPCCONF_CORPUS). Each manifest entry names repository, path, commit and sha256; the local
copy is at <corpus>/<file>. Each file is linted alone, copied under its own base name into an empty
directory (no config above it), like tests/test_wild.py does.

The corpus is split in two halves by repository (sha256 of "owner/name", first byte even: half 1), so a
repository lands wholly in one half. tests/corpus/verdicts.yaml holds the judged findings of half 1.

  python tools/corpus_score.py --half 1            # score half 1 against the verdicts, by rule
  python tools/corpus_score.py --half 2 --raw OUT  # only write the raw findings (for a reviewer)

Exit status: 0 when every finding of the scored half is judged and none judged false came back and every
true one stayed; 1 otherwise; 2 when the corpus copy is missing or a file's sha256 differs.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import json
import os
import shutil
import sys
import tempfile
from collections import Counter
from pathlib import Path

from ruamel.yaml import YAML

ROOT = Path(__file__).resolve().parents[1]
MANIFEST = ROOT / "tests" / "corpus" / "manifest.yaml"
VERDICTS = ROOT / "tests" / "corpus" / "verdicts.yaml"
DEFAULT_CORPUS = Path(os.environ.get("HPCCONF_CORPUS", "/work/corpus/files"))


def half_of(repo: str) -> int:
    """1 or 2, from the repository name alone, so a repository never straddles the halves."""
    return 1 if hashlib.sha256(repo.encode()).digest()[0] % 2 == 0 else 2


def load_yaml(path: Path) -> dict:
    return YAML(typ="safe").load(path.read_text()) or {}


def entries(half: int | None) -> list[dict]:
    rows = load_yaml(MANIFEST)["files"]
    return [row for row in rows if half is None or half_of(row["repo"]) == half]


def check_copy(corpus: Path, rows: list[dict]) -> list[str]:
    problems = []
    for row in rows:
        local = corpus / row["file"]
        if not local.is_file():
            problems.append(f"{row['file']}: missing from {corpus}")
        elif hashlib.sha256(local.read_bytes()).hexdigest() != row["sha256"]:
            problems.append(f"{row['file']}: sha256 differs from the manifest")
    return problems


def lint_one(local: Path, args: list[str]) -> list[dict]:
    """Findings of `hpcconf lint NAME --format json` with the file alone in an empty directory."""
    from hpcconf.cli import app

    def main(argv: list[str]) -> int:
        try:
            app(args=argv, prog_name="hpcconf", standalone_mode=True)
        except SystemExit as exit_:
            return int(exit_.code or 0)
        return 0

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "work"
        work.mkdir()
        shutil.copyfile(local, work / local.name)
        report = Path(tmp) / "report.json"
        cwd = os.getcwd()
        os.chdir(work)
        try:
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                code = main(["lint", local.name, "--format", "json", "-o", str(report), *args])
        finally:
            os.chdir(cwd)
        if code not in (0, 1) or not report.is_file():
            return [{"code": "CRASH", "line": 0, "severity": "error", "message": f"exit {code}"}]
        return json.loads(report.read_text())["findings"]


def lint_all(corpus: Path, rows: list[dict]) -> dict[str, list[dict]]:
    return {row["file"]: lint_one(corpus / row["file"], row.get("args") or []) for row in rows}


def raw_lines(found: dict[str, list[dict]]) -> list[str]:
    lines = []
    for file in sorted(found):
        for f in sorted(found[file], key=lambda f: (f["line"], f["code"])):
            lines.append(f"{file}:{f['line']}: {f['severity']} {f['code']} {f['message']}")
    return lines


def by_severity(found: dict[str, list[dict]]) -> Counter:
    return Counter((f["code"], f["severity"]) for items in found.values() for f in items)


def score(found: dict[str, list[dict]], verdicts: dict) -> tuple[dict, list[str]]:
    """Counts by rule and severity (true / false / false-now-info / unjudged / lost) and the problems: a false
    warning or error that came back, an unjudged finding, a true finding gone."""
    judged = {v["file"]: v for v in verdicts.get("files") or []}
    tally: dict[str, Counter] = {"true": Counter(), "false": Counter(), "false, now info": Counter(),
                                 "unjudged": Counter(), "lost": Counter()}
    problems = []
    for file, items in sorted(found.items()):
        verdict = judged.get(file, {})
        true = {(t["code"], t["line"]) for t in verdict.get("true") or []}
        false = {(t["code"], t["line"]) for t in verdict.get("false") or []}
        keys = {(f["code"], f["line"]) for f in items}
        for f in items:
            key = (f["code"], f["line"])
            bucket = "true" if key in true else "false" if key in false else "unjudged"
            if bucket == "false" and f["severity"] == "info":
                bucket = "false, now info"  # judged false as a warning/error; as info it promises nothing
            tally[bucket][f"{f['code']}/{f['severity']}"] += 1
            if bucket == "false":
                problems.append(f"{file}: false alarm {key} came back")
            elif bucket == "unjudged":
                problems.append(f"{file}: unjudged finding {key} {f['severity']}: {f['message']}")
        for key in sorted(true - keys):
            tally["lost"][key[0]] += 1
            problems.append(f"{file}: true finding {key} is gone")
    return tally, problems


def summary(tally: dict[str, Counter]) -> str:
    out = []
    for bucket, counter in tally.items():
        body = ", ".join(f"{k} {n}" for k, n in sorted(counter.items())) or "none"
        out.append(f"{bucket}: {body} ({sum(counter.values())})")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--half", type=int, choices=(1, 2))
    parser.add_argument("--raw", type=Path, help="write the raw findings here (one line each) and stop")
    args = parser.parse_args(argv)
    rows = entries(args.half)
    problems = check_copy(args.corpus, rows)
    if problems:
        print("\n".join(problems), file=sys.stderr)
        return 2
    found = lint_all(args.corpus, rows)
    counts = by_severity(found)
    print(f"{len(rows)} files, {len({r['repo'] for r in rows})} repositories; findings by rule/severity: "
          + (", ".join(f"{c}/{s} {n}" for (c, s), n in sorted(counts.items())) or "none"))
    if args.raw:
        args.raw.write_text("\n".join(raw_lines(found)) + "\n")
        return 0
    tally, problems = score(found, load_yaml(VERDICTS) if VERDICTS.is_file() else {})
    print(summary(tally))
    if problems:
        print("\n".join(problems))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
