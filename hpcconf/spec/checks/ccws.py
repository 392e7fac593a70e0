"""Cross-field checks of platform ``ccws`` (CycleCloud Workspace for Slurm): what its mainTemplate can take.

mainTemplate has one ``gpu`` partition (``param gpu hpc_t``: one VM size, one ``maxNodes``), so a spec for CCWS
has one GPU pool; the ``htc`` and ``hpc`` partitions are ``ccws.htc`` / ``ccws.hpc``. The Slurm version is the
one the release ships (:mod:`hpcconf.knowledge.ccws`), never mainTemplate.bicep's stale default.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from ...diagnostics import Diagnostic
from ...knowledge import ccws as kb
from ...rules_registry import spec_rule
from . import at

if TYPE_CHECKING:
    from ...catalog import Catalog
    from ..load import LoadedSpec


@spec_rule(code="SPEC090", name="ccws-cluster-unsupported", since="0.4.0")
def ccws_cluster_unsupported(loaded: LoadedSpec, catalog: Catalog) -> Iterator[Diagnostic]:
    """A spec for platform ``ccws`` asks for what CCWS's mainTemplate cannot deploy: more than one pool, or a Slurm
    version the release does not ship.

    ## What it catches
    With ``ccws`` in ``platforms``: more than one pool (every catalog size has GPUs, so the first is the gpu
    partition), and ``versions.slurm`` set to a version the CCWS release (``ccws.release``, default the newest hpcconf holds) does not offer.

    ## Why is this bad?
    ``bicep/mainTemplate.bicep`` has exactly one GPU partition, ``param gpu hpc_t`` (one ``sku``, one
    ``maxNodes``; Azure/cyclecloud-slurm-workspace ``bicep/types.bicep`` at 2026.07.02): a second GPU pool would
    reach no parameter and no node. The CPU partitions are ``htc`` and ``hpc``, described in ``ccws.htc`` and
    ``ccws.hpc``. The Slurm version goes to ``slurmSettings.version``; the release installs only what its portal
    offers (``createUiDefinition.json`` ``slurmVersion``: 25.11.5 at 2026.07.02), while mainTemplate's own default
    (23.11.7-1) is stale (issue #346 of the repository; lint CCWS004).

    ## Example
    ```yaml
    platforms: [ccws]
    pools:
      - {name: gpu, sku: Standard_ND96isr_H100_v5, count: 4}
      - {name: gpu2, sku: Standard_NC24ads_A100_v4, count: 2}
    versions: {slurm: 23.11.7-1}
    ```

    ## Fix
    Keep one GPU pool (deploy a second workspace for another size), move CPU work to ``ccws.htc``/``ccws.hpc``,
    and leave ``versions.slurm`` out (the release's version) or set one the release ships.
    """
    cluster = loaded.cluster
    if "ccws" not in cluster.platforms:
        return
    for i, pool in enumerate(cluster.pools[1:], start=1):
        yield at(loaded, ("pools", i), f"pool '{pool.name}': CCWS's mainTemplate has one GPU partition (gpu), "
                 f"already pool '{cluster.pools[0].name}'", "keep one GPU pool for platform ccws; describe CPU "
                 "partitions in ccws.htc / ccws.hpc", prefer_value=False)
    settings = cluster.ccws
    rel = kb.release(settings.release if settings else None)
    version = cluster.versions.slurm
    if rel is not None and version is not None and (problem := kb.slurm_version_problem(version, rel)) is not None:
        yield at(loaded, ("versions", "slurm"), problem, f"leave versions.slurm out (CCWS {rel.tag} installs "
                 f"{' or '.join(rel.slurm_versions)}) or set one of those")
