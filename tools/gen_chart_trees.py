"""Write hpcconf/data/chart_trees.yaml: every values key of each chart, with the versions that have it.

    python tools/gen_chart_trees.py \\
        gpu-operator=/path/to/NVIDIA/gpu-operator.git \\
        network-operator=/path/to/Mellanox/network-operator.git \\
        node-feature-discovery=/path/to/kubernetes-sigs/node-feature-discovery.git \\
        > hpcconf/data/chart_trees.yaml

Each argument names a git directory (a clone or a bare mirror) of the chart's upstream repository. For every
release tag from the oldest version hpcconf tracks (``hpcconf/data/chart_keys.yaml``) on, plus the pre-release
tags that table lists and the default branch's head (``main``, used only when the chart version is unknown), the
script reads the chart at that tag with ``git show`` and records:

- every key path of ``values.yaml`` (mappings are descended; a list is a leaf: its items are objects the chart
  ranges over or passes through ``toYaml``, so their fields are not the chart's keys);
- every ``.Values.<path>`` the chart's templates read, so keys the templates default without listing them in
  ``values.yaml`` are known too;
- the chart's vendored sub-charts (``charts/<dependency>/``, under the dependency's name or alias), read the
  same way; a dependency that is not vendored is an open section;
- open sections, whose sub-keys are free-form: a mapping that is ``{}`` or null by default, one the templates
  render with ``toYaml`` (directly or as ``toYaml .`` inside ``with``), one whose keys are label-like (contain
  ``/`` or ``.``), ``global`` (Helm passes it to every sub-chart), and mappings named as in ``OPEN_NAMES`` (Kubernetes
  objects passed through to a pod spec or metadata).

Output per chart: the refs read (tag and commit), then each key path with its version ranges ``SINCE..UNTIL``
(UNTIL is the first read version without the key; an empty UNTIL means still present at the newest ref read).
tests/test_chart_trees.py checks the committed file against the charts' values.yaml files.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from hpcconf.knowledge.versions import version_key  # noqa: E402

CHART_DIRS = {"gpu-operator": "deployments/gpu-operator", "network-operator": "deployment/network-operator",
              "node-feature-discovery": "deployment/helm/node-feature-discovery"}
REPOS = {"gpu-operator": "NVIDIA/gpu-operator", "network-operator": "Mellanox/network-operator",
         "node-feature-discovery": "kubernetes-sigs/node-feature-discovery"}
# Kubernetes objects charts pass through to a pod spec or object metadata: any sub-key is the API's, not the chart's.
OPEN_NAMES = frozenset({
    "nodeSelector", "tolerations", "affinity", "annotations", "labels", "podAnnotations", "podLabels",
    "env", "extraEnv", "resources", "podSecurityContext", "securityContext", "containerSecurityContext",
    "extraArgs", "args", "livenessProbe", "readinessProbe", "startupProbe", "extraVolumes", "extraVolumeMounts",
    "volumes", "volumeMounts", "topologySpreadConstraints", "updateStrategy", "strategy", "imagePullSecrets",
})
MAIN = "main"
_TAG = re.compile(r"^v?(\d+\.\d+\.\d+)$")
_VALUES_REF = re.compile(r"\.Values((?:\.[A-Za-z_][A-Za-z0-9_]*)+)")
_TOYAML_REF = re.compile(r"toYaml\s+\(?\s*\$?\.Values((?:\.[A-Za-z_][A-Za-z0-9_]*)+)")
_WITH_BLOCK = re.compile(r"\{\{-?\s*with\s+\$?\.Values((?:\.[A-Za-z_][A-Za-z0-9_]*)+)\s*-?\}\}(.*?)\{\{-?\s*end",
                         re.S)
_TOYAML_DOT = re.compile(r"toYaml\s+\.\s*[|)}]")


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "--git-dir", str(repo), *args], check=True, capture_output=True,
                          text=True).stdout


def refs_to_read(repo: Path, tracked: list[str]) -> list[tuple[str, str]]:
    """(version, tag) for each release tag from the oldest tracked version on, plus tracked pre-releases."""
    oldest = min((version_key(v) for v in tracked))
    wanted = {}
    for tag in git(repo, "tag", "--list").split():
        match = _TAG.match(tag)
        if match and version_key(match.group(1)) >= oldest:
            wanted[match.group(1)] = tag
    for version in tracked:
        if version not in wanted:
            tag = "v" + version
            git(repo, "rev-parse", "--verify", tag + "^{commit}")
            wanted[version] = tag
    return sorted(wanted.items(), key=lambda vt: (version_key(vt[0]), "-" not in vt[0], vt[0]))


def _load(text: str) -> Any:
    return YAML(typ="safe").load(text) if text.strip() else {}


def _is_label_map(value: dict) -> bool:
    return any("/" in str(k) or "." in str(k) for k in value)


def walk_values(values: Any, prefix: tuple[str, ...], keys: set, opened: set) -> None:
    if not isinstance(values, dict):
        return
    for key, value in values.items():
        path = (*prefix, str(key))
        keys.add(path)
        if value is None or value == {} or (isinstance(value, dict) and (str(key) in OPEN_NAMES or _is_label_map(value))):
            opened.add(path)
        elif isinstance(value, dict):
            walk_values(value, path, keys, opened)


def template_refs(repo: Path, ref: str, chart_dir: str) -> tuple[set, set]:
    """Paths the chart's own templates read, and those they render whole with toYaml."""
    files = [f for f in git(repo, "ls-tree", "-r", "--name-only", ref, f"{chart_dir}/templates").split()
             if f.endswith((".yaml", ".yml", ".tpl", ".txt"))]
    read, whole = set(), set()
    for name in files:
        text = git(repo, "show", f"{ref}:{name}")
        read |= {tuple(m.group(1)[1:].split(".")) for m in _VALUES_REF.finditer(text)}
        whole |= {tuple(m.group(1)[1:].split(".")) for m in _TOYAML_REF.finditer(text)}
        whole |= {tuple(m.group(1)[1:].split(".")) for m in _WITH_BLOCK.finditer(text) if _TOYAML_DOT.search(m.group(2))}
    return read, whole


def read_chart(repo: Path, ref: str, chart_dir: str, prefix: tuple[str, ...] = ()) -> tuple[set, set]:
    """All key paths and open paths of the chart at ``ref`` (with its vendored sub-charts), under ``prefix``."""
    keys: set = set()
    opened: set = set()
    walk_values(_load(git(repo, "show", f"{ref}:{chart_dir}/values.yaml")), prefix, keys, opened)
    read, whole = template_refs(repo, ref, chart_dir)
    keys |= {(*prefix, *p) for p in read}
    opened |= {(*prefix, *p) for p in whole}
    opened.add((*prefix, "global"))
    keys.add((*prefix, "global"))
    chart_yaml = _load(git(repo, "show", f"{ref}:{chart_dir}/Chart.yaml")) or {}
    vendored = set(git(repo, "ls-tree", "--name-only", ref, f"{chart_dir}/charts/").split())
    for dep in chart_yaml.get("dependencies") or []:
        name = str(dep["name"])
        under = (*prefix, str(dep.get("alias") or name))
        keys.add(under)
        if f"{chart_dir}/charts/{name}" in vendored:
            sub_keys, sub_open = read_chart(repo, ref, f"{chart_dir}/charts/{name}", under)
            keys |= sub_keys
            opened |= sub_open
        else:
            opened.add(under)
    return keys, _outermost(opened)


def _outermost(opened: set) -> set:
    return {p for p in opened if not any(p[:n] in opened for n in range(1, len(p)))}


def ranges(present: list[bool], versions: list[str]) -> str:
    parts, start = [], None
    for version, here in zip([*versions, None], [*present, False]):
        if here and start is None:
            start = version
        elif not here and start is not None:
            parts.append(f"{start}..{version or ''}")
            start = None
    return ", ".join(parts)


def visible(path: tuple, opened: set) -> bool:
    """Paths below an open section are not listed: anything goes there."""
    return not any(path[:n] in opened for n in range(1, len(path)))


def _quote(text: str) -> str:
    return text if re.fullmatch(r"[A-Za-z0-9_.\-]+", text) and not text[0].isdigit() else '"' + text.replace('"', '\\"') + '"'


def render_chart(chart: str, repo: Path, tracked: list[str]) -> Iterator[str]:
    refs = refs_to_read(repo, tracked)
    head = git(repo, "rev-parse", "HEAD").strip()
    reads = []
    for version, tag in refs:
        commit = git(repo, "rev-parse", tag + "^{commit}").strip()
        reads.append((version, tag, commit, *read_chart(repo, tag, CHART_DIRS[chart])))
    reads.append((MAIN, "HEAD", head, *read_chart(repo, "HEAD", CHART_DIRS[chart])))
    versions = [r[0] for r in reads]
    every_key = set().union(*(r[3] for r in reads))
    every_open = set().union(*(r[4] for r in reads))
    yield f"{chart}:"
    yield f"  repo: {REPOS[chart]}"
    yield f"  path: {CHART_DIRS[chart]}/values.yaml"
    yield "  read:  # version: tag commit (main: the default branch's head, for charts of unknown version only)"
    for version, tag, commit, *_ in reads:
        yield f"    {_quote(version)}: {tag} {commit}"
    yield "  open:  # sections whose sub-keys are free-form, with the versions where they are"
    for path in sorted(every_open):
        span = ranges([path in r[4] and visible(path, r[4]) for r in reads], versions)
        if span:
            yield f"    {_quote('.'.join(path))}: {span}"
    yield "  keys:"
    for path in sorted(every_key):
        span = ranges([path in r[3] and visible(path, r[4]) for r in reads], versions)
        if span:
            yield f"    {_quote('.'.join(path))}: {span}"


def main(argv: list[str]) -> str:
    tracked = YAML(typ="safe").load((Path(__file__).resolve().parents[1] / "hpcconf/data/chart_keys.yaml").read_text())
    lines = ["# Generated by tools/gen_chart_trees.py from each chart's values.yaml, templates and vendored",
             "# sub-charts at every release tag read (sources below). Do not edit: run the script.",
             "# A key exists in version V when one of its ranges SINCE..UNTIL has SINCE <= V < UNTIL (no UNTIL:",
             "# still there at the newest ref read). Lists are leaves; sub-keys of an `open` section are free-form."]
    for arg in argv:
        chart, _, repo = arg.partition("=")
        lines.extend(render_chart(chart, Path(repo), [str(v) for v in tracked[chart]["versions"]]))
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.stdout.write(main(sys.argv[1:]))
