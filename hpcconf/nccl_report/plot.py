"""``--plot``: busbw against message size (log axis), one line per log/collective/type, floor, limit and line rates.

matplotlib is an optional extra (``pip install 'hpcconf[plot]'``); without it :func:`plot` raises
:class:`PlotUnavailable` with that hint. :func:`plot_series` returns exactly what is drawn, so tests
check the plot's data, not its pixels.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from ..knowledge.nccl_bounds import derived_min_bytes
from .verdict import Verdict, human_size

if TYPE_CHECKING:
    from .baseline import BaselineVerdict

TITLE_WIDTH = 90  # characters on one title line at the figure's width; longer titles wrap, never run off the edge


def plot_title(verdicts: list[Verdict], compared: Sequence["BaselineVerdict"] = ()) -> str:
    """SKU, nodes, collectives and the verdicts (the floor's, and the baseline's where one was given), wrapped
    at ``TITLE_WIDTH``."""
    skus = sorted({v.sku for v in verdicts if v.sku})
    nodes = sorted({v.nodes for v in verdicts if v.nodes})
    collectives = sorted({v.run.collective or "?" for v in verdicts})
    statuses = sorted({v.status for v in verdicts})
    parts = [", ".join(skus) or "no SKU", f"{'/'.join(map(str, nodes)) or '?'} node(s)", ", ".join(collectives),
             "verdict: " + ", ".join(statuses)]
    if compared:
        parts.append("baseline: " + ", ".join(sorted({b.status for b in compared})))
    lines: list[str] = []
    for part in parts:
        if lines and len(lines[-1]) + 3 + len(part) <= TITLE_WIDTH:
            lines[-1] += " | " + part
        else:
            lines.append(part)
    return "\n".join(lines)


class PlotUnavailable(RuntimeError):
    pass


@dataclass(frozen=True)
class Series:
    label: str
    sizes: tuple[int, ...]
    busbw: tuple[float, ...]  # mean of out-of-place and in-place, per size
    baseline: bool = False  # the --baseline run a log was compared with


@dataclass(frozen=True)
class Level:
    label: str
    gbps: float
    kind: str  # "floor", "reference floor" (derived, not decisive on the run's shape), "limit" (the physical
    # ceiling) or "line rate" (a link it comes from, not a busbw bound)
    from_bytes: int = 0  # a floor is drawn from the least size it is judged at (0: every size)


# (linestyle, colour) per level kind: the ceiling and the line rates never look alike
STYLES = {"floor": ("--", "tab:red"), "reference floor": ("-.", "tab:orange"), "limit": ("-", "black"),
          "line rate": (":", "tab:gray")}


def plot_series(verdicts: list[Verdict], compared: Sequence["BaselineVerdict"] = ()) -> tuple[list[Series], list[Level]]:
    series = [Series(f"{Path(v.log).name} {v.run.collective or '?'} {v.dtype}", tuple(r.size for r in v.rows),
                     tuple(round(r.busbw, 2) for r in v.rows)) for v in verdicts]
    for b in compared:
        label = f"baseline {Path(b.baseline).name} {b.collective or '?'} {b.dtype}"
        if b.reference and all(s.label != label for s in series):
            sizes = tuple(sorted(b.reference))
            series.append(Series(label, sizes, tuple(round(b.reference[size], 2) for size in sizes), baseline=True))
    # one line per floor, naming every size it is judged at: a published floor at its row's size, a derived one
    # from derived_min_bytes (the plateau) on; below that the floor decides nothing, so no line is drawn there
    # and the sizes runs were read at (an inconclusive run was read nowhere)
    floors: dict[tuple[str, float, str], tuple[set[int], set[int]]] = {}
    for v in verdicts:
        if v.floor is not None:
            kind = "floor" if v.decisive else "reference floor"
            derived = v.floor_kind.startswith("derived")  # "derived" or "derived, reference only"
            judged = derived_min_bytes(v.floor.ranks) if derived else v.floor.message_bytes
            starts, read = floors.setdefault((kind, v.floor.gbps, v.floor_kind), (set(), set()))
            starts.add(judged)
            if v.status != "inconclusive" and v.at_size:
                read.add(v.at_size)
    levels: dict[tuple[str, float], Level] = {}
    for (kind, gbps, origin), (starts, read) in floors.items():
        derived = origin.startswith("derived")
        where = (f"from {', '.join(human_size(size) for size in sorted(starts))}" if derived
                 else f"at {', '.join(human_size(size) for size in sorted(starts))}")
        if derived and read:
            where += f", read at {', '.join(human_size(size) for size in sorted(read))}"
        levels[(kind, gbps)] = Level(f"floor {gbps:g} GB/s ({origin}, {where})", gbps, kind, min(starts))
    for v in verdicts:
        for limit in v.limits:
            if limit.ceiling:
                level = Level(f"{limit.label} {limit.gbps:g} GB/s", limit.gbps, "limit")
            else:
                level = Level(f"line rate: {limit.label} {limit.gbps:g} GB/s (not a busbw bound)", limit.gbps, "line rate")
            known = levels.get((level.kind, level.gbps))
            if known is not None:
                if level.label in known.label.split(" = "):
                    continue  # named already (a third log with the same bound keeps the merged name)
                # two bounds of one value (a Ring run's 450 and an NVLS one's): one line, both names
                level = Level(f"{known.label} = {level.label}", level.gbps, level.kind)
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


# several ceilings (a Ring-pinned run beside an NVLSTree one) each get their own colour
LIMIT_COLOURS = ("black", "tab:purple", "tab:brown", "tab:olive")


def plot(verdicts: list[Verdict], path: Path,
         compared: Sequence["BaselineVerdict"] = ()) -> tuple[list[Series], list[Level]]:
    check_plot(path)
    import matplotlib  # type: ignore[import-not-found,unused-ignore]

    matplotlib.use("Agg")  # files only; never a display
    import matplotlib.pyplot as plt  # type: ignore[import-not-found,unused-ignore]
    import matplotlib.ticker  # type: ignore[import-not-found,unused-ignore]

    series, levels = plot_series(verdicts, compared)
    matplotlib.rcParams["svg.hashsalt"] = "hpcconf"  # stable element ids: the same logs give the same SVG
    fig, ax = plt.subplots(figsize=(12, 5))
    for s in series:
        if s.baseline:
            ax.plot(s.sizes, s.busbw, linestyle="--", color="tab:gray", marker="x", label=s.label,
                    gid=f"baseline:{s.label}")
        else:
            ax.plot(s.sizes, s.busbw, marker=".", label=s.label, gid=f"series:{s.label}")
    limits = 0
    for level in levels:
        linestyle, colour = STYLES[level.kind]
        if level.kind == "limit":
            colour, limits = LIMIT_COLOURS[limits % len(LIMIT_COLOURS)], limits + 1
        gid = f"{level.kind.replace(' ', '-')}:{level.gbps:g}"
        if level.from_bytes:  # a floor: from the size it is judged at to the right edge
            right = max([level.from_bytes, *(size for s in series for size in s.sizes)])
            ax.hlines(level.gbps, level.from_bytes, right, linestyle=linestyle, colors=colour, linewidth=1,
                      label=level.label, gid=gid)
            # where judging starts: visible also when the log ends at that size (a line of no length)
            ax.plot([level.from_bytes], [level.gbps], marker="|", markersize=12, color=colour, label="_nolegend_")
        else:
            ax.axhline(level.gbps, linestyle=linestyle, color=colour, linewidth=1, label=level.label, gid=gid)
    ax.set_xscale("log", base=2)
    sizes = [size for s in series for size in s.sizes]
    if sizes:
        ax.set_xlim(min(sizes), max(sizes))  # ticks from the first size measured, not a padding below it
    ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda x, _: human_size(int(x)) if x >= 1 else ""))
    ax.set_xlabel("message size")
    ax.set_title(plot_title(verdicts, compared), fontsize="medium")
    ax.set_ylabel("bus bandwidth (GB/s)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)  # beside the
    # axes: inside, the legend covered the limit and floor lines it names
    fig.tight_layout()
    metadata = {"Date": None} if path.suffix.lower() == ".svg" else {}
    fig.savefig(path, metadata=metadata)
    plt.close(fig)
    return series, levels
