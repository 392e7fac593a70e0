"""``--plot``: busbw against message size (log axis), one line per log/collective/type, floor, limit and line rates.

matplotlib is an optional extra (``pip install 'hpcconf[plot]'``); without it :func:`plot` raises
:class:`PlotUnavailable` with that hint. :func:`plot_series` returns exactly what is drawn, so tests
check the plot's data, not its pixels.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .verdict import Verdict, human_size


def plot_title(verdicts: list[Verdict]) -> str:
    """SKU, nodes, collectives and the verdicts, short enough for one line."""
    skus = sorted({v.sku for v in verdicts if v.sku})
    nodes = sorted({v.nodes for v in verdicts if v.nodes})
    collectives = sorted({v.run.collective or "?" for v in verdicts})
    statuses = sorted({v.status for v in verdicts})
    parts = [", ".join(skus) or "no SKU", f"{'/'.join(map(str, nodes)) or '?'} node(s)", ", ".join(collectives),
             "verdict: " + ", ".join(statuses)]
    return " | ".join(parts)


class PlotUnavailable(RuntimeError):
    pass


@dataclass(frozen=True)
class Series:
    label: str
    sizes: tuple[int, ...]
    busbw: tuple[float, ...]  # mean of out-of-place and in-place, per size


@dataclass(frozen=True)
class Level:
    label: str
    gbps: float
    kind: str  # "floor", "reference floor" (derived, not decisive on the run's shape), "limit" (the physical
    # ceiling) or "line rate" (a link it comes from, not a busbw bound)


# (linestyle, colour) per level kind: the ceiling and the line rates never look alike
STYLES = {"floor": ("--", "tab:red"), "reference floor": ("-.", "tab:orange"), "limit": ("-", "black"),
          "line rate": (":", "tab:gray")}


def plot_series(verdicts: list[Verdict]) -> tuple[list[Series], list[Level]]:
    series = [Series(f"{Path(v.log).name} {v.run.collective or '?'} {v.dtype}", tuple(r.size for r in v.rows),
                     tuple(round(r.busbw, 2) for r in v.rows)) for v in verdicts]
    levels: dict[tuple[str, float], Level] = {}
    for v in verdicts:
        if v.floor is not None:
            origin = v.floor_kind
            level = Level(f"floor {v.floor.gbps:g} GB/s ({origin}, {v.floor.message_size})", v.floor.gbps,
                          "floor" if v.decisive else "reference floor")
            levels[(level.kind, level.gbps)] = level
        for limit in v.limits:
            if limit.ceiling:
                level = Level(f"{limit.label} {limit.gbps:g} GB/s", limit.gbps, "limit")
            else:
                level = Level(f"line rate: {limit.label} {limit.gbps:g} GB/s (not a busbw bound)", limit.gbps, "line rate")
            levels[(level.kind, level.gbps)] = level
    return series, list(levels.values())


def check_plot(path: Path) -> None:
    """PlotUnavailable unless ``path`` can be drawn: matplotlib importable, a .png or .svg name. The command
    calls it before it prints anything, so a missing extra is not reported after a full report."""
    try:
        import matplotlib  # type: ignore[import-not-found,unused-ignore]  # noqa: F401
    except ImportError as exc:
        raise PlotUnavailable("--plot needs matplotlib: pip install 'hpcconf[plot]'") from exc
    if path.suffix.lower() not in (".png", ".svg"):
        raise PlotUnavailable(f"--plot writes .png or .svg files, not {path.suffix or 'a file without suffix'}")


def plot(verdicts: list[Verdict], path: Path) -> tuple[list[Series], list[Level]]:
    check_plot(path)
    import matplotlib  # type: ignore[import-not-found,unused-ignore]

    matplotlib.use("Agg")  # files only; never a display
    import matplotlib.pyplot as plt  # type: ignore[import-not-found,unused-ignore]
    import matplotlib.ticker  # type: ignore[import-not-found,unused-ignore]

    series, levels = plot_series(verdicts)
    matplotlib.rcParams["svg.hashsalt"] = "hpcconf"  # stable element ids: the same logs give the same SVG
    fig, ax = plt.subplots(figsize=(9, 5))
    for s in series:
        ax.plot(s.sizes, s.busbw, marker=".", label=s.label, gid=f"series:{s.label}")
    for level in levels:
        linestyle, colour = STYLES[level.kind]
        ax.axhline(level.gbps, linestyle=linestyle, color=colour, linewidth=1, label=level.label,
                   gid=f"{level.kind.replace(' ', '-')}:{level.gbps:g}")
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda x, _: human_size(int(x)) if x >= 1 else ""))
    ax.set_xlabel("message size")
    ax.set_title(plot_title(verdicts), fontsize="medium")
    ax.set_ylabel("bus bandwidth (GB/s)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="small")
    fig.tight_layout()
    metadata = {"Date": None} if path.suffix.lower() == ".svg" else {}
    fig.savefig(path, metadata=metadata)
    plt.close(fig)
    return series, levels
