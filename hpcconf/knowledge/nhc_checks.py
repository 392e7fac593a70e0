"""The check functions an Azure NHC conf may call, with their argument counts and the variables set before a
conf's lines run (``data/nhc_checks.yaml``: Azure/azurehpc-health-checks customTests at tag v0.4.5 and LBNL
NHC 1.4.3's scripts). The NHC rules and the generated confs' tests read this one table."""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Optional

from .. import data_tables

DATA_FILE = Path(__file__).resolve().parents[1] / "data" / "nhc_checks.yaml"


@dataclass(frozen=True)
class CheckFunction:
    name: str
    min_args: int
    max_args: Optional[int]  # None: getopts options, any number
    numeric: tuple[int, ...]  # 0-based positions compared as numbers
    file: str  # where it is defined (customTests/... in Azure's repository, scripts/... in LBNL NHC)

    @property
    def source(self) -> str:
        table = load_table()
        repo, tag = (table.azure if self.file.startswith("customTests/") else table.lbnl)
        return f"{repo} {self.file} @ {tag}"


@dataclass(frozen=True)
class CheckTable:
    checks: dict[str, CheckFunction]
    variables: frozenset[str]
    topology_sizes: tuple[str, ...]
    azure: tuple[str, str]  # repo, tag
    lbnl: tuple[str, str]


@lru_cache(maxsize=1)
def load_table(path: Path = DATA_FILE) -> CheckTable:
    data = data_tables.load(path)
    checks = {name: CheckFunction(name, int(row["args"][0]), None if row["args"][1] is None else int(row["args"][1]),
                                  tuple(int(i) for i in row["numeric"]), str(row["file"]))
              for name, row in data["checks"].items()}
    upstream = data["upstream"]
    return CheckTable(checks=checks, variables=frozenset(data["variables"]),
                      topology_sizes=tuple(data["topology_sizes"]),
                      azure=(upstream["azure"]["repo"], upstream["azure"]["tag"]),
                      lbnl=(upstream["lbnl"]["repo"], upstream["lbnl"]["tag"]))


def lookup(name: str) -> Optional[CheckFunction]:
    return load_table().checks.get(name)


def hw_topology_knows(size: str) -> bool:
    """Whether check_hw_topology has a topology file for this VM size."""
    lower = size.lower()
    return any(fnmatch.fnmatchcase(lower, pattern) for pattern in load_table().topology_sizes)


# Where NHC reads its site config before the conf: LBNL NHC 1.4.3 ``nhc`` nhcmain_load_sysconfig sources
# $SYSCONFIGDIR/$NAME (/etc/sysconfig/nhc, /etc/default/nhc on Debian and Ubuntu) before nhcmain_finalize_env,
# and VAR=value words on nhc's command line are set too (nhcmain_parse_cmdline), so any variable may come from
# there. Azure's runner container has neither: its image is Ubuntu and installs NHC with `make install`
# (only an empty /etc/nhc/sysconfig directory), and aznhc-entrypoint.sh passes only CONFFILE, LOGFILE and
# TIMEOUT (Azure/azurehpc-health-checks dockerfile/azure-nvrt-nhc.dockerfile, aznhc-entrypoint.sh @ v0.4.5).
SITE_CONFIG = "/etc/sysconfig/nhc (/etc/default/nhc on Debian/Ubuntu)"
# $AZ_NHC_ROOT is the runner's own variable (the entrypoint sets it, the image's ENV names /azure-nhc):
# a conf naming it is written for Azure's container.
AZURE_RUNNER_MARKERS = ("AZ_NHC_ROOT", "/azure-nhc/")


# Paths of Azure's host install (/opt/azurehpc/test/azurehpc-health-checks) and container (/azure-nhc).
AZURE_CONF_MARKERS = (*AZURE_RUNNER_MARKERS, "azurehpc")


def names_azure(text: str) -> bool:
    """Whether a conf's text names Azure's health checks' root or paths."""
    return any(marker in text for marker in AZURE_CONF_MARKERS)


def is_azure_check(function: CheckFunction) -> bool:
    """A check Azure's own customTests define (customTests/azure_*.nhc), not LBNL's built-ins and not a
    third-party test Azure vendors under its first name (csc_nvidia_smi.nhc)."""
    return function.file.startswith("customTests/azure_")


def runs_in_azure_runner(text: str) -> bool:
    """Whether a conf is written for Azure's runner container (no site config there)."""
    return any(marker in text for marker in AZURE_RUNNER_MARKERS)


# Where a repository keeps NHC's custom tests beside its confs, so that both belong to one deployment:
# LBNL NHC sources $INCDIR/*.nhc with INCDIR defaulting to $CONFDIR/scripts beside $CONFDIR/nhc.conf
# (mej/nhc ``nhc`` @ 1.4.3, nhcmain_finalize_env), and Azure's repository keeps conf/<size>.conf beside
# customTests/*.nhc, which its image and runner copy into /etc/nhc/scripts (dockerfile/azure-nvrt-nhc.dockerfile
# `COPY customTests/*.nhc /etc/nhc/scripts/`, aznhc-entrypoint.sh @ v0.4.5).
CUSTOM_TEST_DIRS = ("scripts", "customTests")
# A CycleCloud cluster-init project stages specs/<spec>/cluster-init/files/ on the node for its scripts/ to install
# (CycleCloud projects: files/ is $CYCLECLOUD_SPEC_PATH/files): a conf and the tests in files/ are one deployment.
CLUSTER_INIT_DIR = "cluster-init"
AZURE_CONF_DIR = "conf"


def layout_root(file: Path) -> Path | None:
    """The directory an NHC file's deployment starts from when the repository lays NHC out as installed:
    a custom test in scripts/ or customTests/, or a conf in Azure's conf/ beside customTests/, belong with
    the directory above; None for any other file."""
    directory = file.parent
    if file.suffix == ".nhc" and directory.name in CUSTOM_TEST_DIRS:
        return directory.parent
    if directory.name == "files" and directory.parent.name == CLUSTER_INIT_DIR:
        return directory.parent
    if file.suffix == ".conf" and directory.name == AZURE_CONF_DIR and (directory.parent / "customTests").is_dir():
        return directory.parent
    return None


# Azure's checks change their arguments between releases (check_hw_topology read the topology file as $1 up to
# v0.2.6 and none from v0.2.7; check_nccl_allreduce read 2 before 4): ``data/nhc_azure_releases.yaml``, read
# from customTests/*.nhc at every release tag (tools/gen_nhc_releases.py). A conf states no release, so a call
# some release takes is accepted (issue 20: confs of v0.2.x judged by v0.4.5's signatures were false alarms).
RELEASES_FILE = Path(__file__).resolve().parents[1] / "data" / "nhc_azure_releases.yaml"


@dataclass(frozen=True)
class ArgumentRange:
    min_args: int
    max_args: Optional[int]  # None: any number
    source: str  # where the counts come from, for the message


@lru_cache(maxsize=1)
def _releases(path: Path = RELEASES_FILE) -> tuple[tuple[str, ...], dict[str, dict[str, tuple[int, Optional[int]]]]]:
    data = data_tables.load(path)
    tags = tuple(data["releases"])
    checks = {name: {tag: (int(row["args"][0]), None if row["args"][1] is None else int(row["args"][1]))
                     for tag, row in by_tag.items()}
              for name, by_tag in data["checks"].items()}
    return tags, checks


def in_some_azure_release(name: str) -> bool:
    """Whether some release of Azure's health checks defines ``name`` (a check renamed since, like
    check_cuda_bw before check_gpu_bw)."""
    return name in _releases()[1]


def releases_for(names: set[str]) -> frozenset[str]:
    """The releases a conf can run on: those that define every Azure check it calls (a release missing one
    fails that line on every node, NHC001); every release when none does or nothing narrows."""
    tags, checks = _releases()
    candidates = set(tags)
    for name in names:
        if name in checks:
            candidates &= set(checks[name])
    return frozenset(candidates or tags)


def argument_range(function: CheckFunction, releases: frozenset[str] | None = None) -> ArgumentRange:
    """The arguments a call of ``function`` may have: for LBNL's checks, 1.4.3's; for Azure's, what any of
    ``releases`` (default: every release) takes (fewest: the transcribed v0.4.5 need, or less where a release's
    body reads fewer positions; most: the most any of them reads)."""
    if not function.file.startswith("customTests/"):
        return ArgumentRange(function.min_args, function.max_args, function.source)
    tags, checks = _releases()
    chosen = set(tags) if releases is None else set(releases)
    by_tag = {tag: counts for tag, counts in checks.get(function.name, {}).items() if tag in chosen}
    if not by_tag:
        return ArgumentRange(function.min_args, function.max_args, function.source)
    fewest = min([function.min_args, *(low for low, _ in by_tag.values())])
    highs = [function.max_args, *(high for _, high in by_tag.values())]
    most = None if any(high is None for high in highs) else max(high for high in highs if high is not None)
    held = [tag for tag in tags if tag in by_tag]
    repo = load_table().azure[0]
    span = held[0] if len(held) == 1 else f"{held[0]} to {held[-1]}"
    return ArgumentRange(fewest, most, f"{repo} {function.file} in releases {span}, those defining every Azure "
                         "check this conf calls")
