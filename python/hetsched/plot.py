"""Plots of runs and sweeps as matplotlib figures (``pip install hetsched[plot]``).

Each function takes a :class:`hetsched.Result` (those of the timeline need
``hs.run(..., timeline=True)``) or a sweep's table (:func:`hetsched.load`), builds its
figure from the pandas DataFrames the result exposes (``r.timeline_cpus``,
``r.timeline_tasks``, ``r.overutilized``, ``r.energy``, ``r.tasks``), and returns a
``matplotlib.figure.Figure`` (no pyplot state: safe in notebooks and headless). The
HTML report (:func:`hetsched.report`) draws the same plots in SVG from Rust.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from . import Result

__all__ = ["energy", "frequency", "overutilized", "residency", "sweep_metric", "timeline", "util"]


def _figure(height: float = 3.0) -> Figure:
    from matplotlib.figure import Figure

    return Figure(figsize=(10, height), layout="constrained")


def _colours(n: int) -> list[Any]:
    from matplotlib import colormaps

    cmap = colormaps["tab10"]
    return [cmap(i % 10) for i in range(n)]


def _runs(starts: pd.Series, w: float) -> list[tuple[float, float]]:
    """Bucket starts as (start, width) ranges, neighbouring buckets merged."""
    out: list[tuple[float, float]] = []
    for t in starts:
        if out and abs(out[-1][0] + out[-1][1] - t) < w * 1e-6:
            out[-1] = (out[-1][0], out[-1][1] + w)
        else:
            out.append((float(t), w))
    return out


def timeline(r: Result) -> Figure:
    """Per-CPU Gantt: per timeline bucket, the task that ran longest (alpha: the busy
    fraction), a grey strip for the frequency (darker is faster), hatching for deep idle."""
    df = r.timeline_cpus
    w = float(r._need_timeline()["bucket_s"])
    ncpu = int(df["cpu"].max()) + 1 if len(df) else 0
    fig = _figure(0.45 * ncpu + 1.2)
    ax = fig.add_subplot()
    pids = sorted(p for p in df["pid"].unique() if p != 0)
    col = dict(zip(pids, _colours(len(pids))))
    fmax = max(int(df["freq_khz"].max()), 1) if len(df) else 1
    for cpu, g in df.groupby("cpu"):
        y = ncpu - 1 - int(cpu)
        for pid, gp in g[g["pid"] != 0].groupby("pid"):
            for busy, gb in gp.groupby(gp["busy"].round(1)):
                ax.broken_barh(
                    _runs(gb["time_s"], w),
                    (y + 0.3, 0.65),
                    color=col[pid],
                    alpha=max(float(busy), 0.15),
                    linewidth=0,
                )
        for f, gf in g[g["freq_khz"] > 0].groupby("freq_khz"):
            ax.broken_barh(
                _runs(gf["time_s"], w),
                (y + 0.08, 0.17),
                color="0.3",
                alpha=0.1 + 0.8 * float(f) / fmax,
                linewidth=0,
            )
        deep = g[g["idle_deep"] >= 0.5]
        if len(deep):
            ax.broken_barh(
                _runs(deep["time_s"], w),
                (y + 0.3, 0.65),
                facecolor="none",
                hatch="//",
                edgecolor="0.7",
                linewidth=0,
            )
    comms = df.drop_duplicates("pid").set_index("pid")["comm"]
    from matplotlib.patches import Patch

    ax.legend(
        handles=[Patch(color=col[p], label=comms.get(p, str(p))) for p in pids],
        loc="upper left",
        bbox_to_anchor=(1, 1),
        fontsize=8,
    )
    ax.set_yticks([ncpu - 1 - c + 0.6 for c in range(ncpu)], [f"CPU{c}" for c in range(ncpu)])
    ax.set_xlabel("time, s")
    ax.set_title("Per-CPU timeline")
    return fig


def frequency(r: Result) -> Figure:
    """Frequency over time (mean per bucket) of each performance domain (its first CPU)."""
    df = r.timeline_cpus
    pd_of = {c["cpu"]: c["pd"] for c in r.raw["energy"]["cpus"]}
    fig = _figure()
    ax = fig.add_subplot()
    seen: set[int] = set()
    for cpu, g in df.groupby("cpu"):
        pdi = pd_of.get(int(cpu), int(cpu))
        if pdi in seen:
            continue
        seen.add(pdi)
        g = g[g["freq_khz"] > 0]
        ax.step(g["time_s"], g["freq_khz"] / 1000, where="post", label=f"pd{pdi} (CPU{cpu})")
    ax.set_xlabel("time, s")
    ax.set_ylabel("MHz")
    ax.set_title("Frequency per performance domain")
    ax.legend(fontsize=8)
    return fig


def util(
    r: Result, tasks: Sequence[str] | None = None, cpus: Sequence[int] | None = None
) -> Figure:
    """util_avg (solid) and util_est (dotted) of ``tasks`` (names; default: the six with
    the most CPU time), and the cfs_rq util_avg of ``cpus`` (default: all)."""
    tt = r.timeline_tasks
    if tasks is None:
        busiest = r.tasks.sort_values(["cpu_time_s", "pid"], ascending=[False, True])
        tasks = [c for c in busiest["comm"] if c in set(tt["comm"])][:6]
    fig = _figure(5.0)
    ax1, ax2 = fig.subplots(2, 1, sharex=True)
    for (name, g), c in zip(((n, tt[tt["comm"] == n]) for n in tasks), _colours(len(tasks))):
        ax1.step(g["time_s"], g["util"], where="post", color=c, label=name)
        ax1.step(g["time_s"], g["util_est"], where="post", color=c, linestyle=":")
    ax1.set_ylabel("task util")
    ax1.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1, 1))
    dc = r.timeline_cpus
    for cpu, g in dc.groupby("cpu"):
        if cpus is None or int(cpu) in cpus:
            ax2.step(g["time_s"], g["util"], where="post", label=f"CPU{cpu}")
    ax2.set_ylabel("cfs_rq util")
    ax2.set_xlabel("time, s")
    ax2.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1, 1))
    ax1.set_title("util_avg and util_est (max per bucket)")
    return fig


def residency(r: Result) -> Figure:
    """Heatmap of running time per task (rows) and CPU (columns), s."""
    t = r.tasks
    cols = [c for c in t.columns if c.startswith("residency_cpu")]
    m = t[cols].to_numpy(dtype=float)
    fig = _figure(0.3 * len(t) + 1.5)
    ax = fig.add_subplot()
    im = ax.imshow(m, aspect="auto", cmap="Reds")
    ax.set_xticks(range(len(cols)), [c.removeprefix("residency_").upper() for c in cols])
    ax.set_yticks(range(len(t)), list(t["comm"]))
    fig.colorbar(im, ax=ax, label="s")
    ax.set_title("Residency per task and CPU")
    return fig


def energy(r: Result) -> Figure:
    """Power per performance domain over time: each bucket's energy over its width."""
    e = r.energy
    b = float(r.raw["energy"]["bucket_s"]) or 1.0
    fig = _figure()
    ax = fig.add_subplot()
    for pdi, g in e.groupby("pd"):
        ax.step(g["time_s"], g["energy"] / b, where="post", label=f"pd{pdi}")
    ax.set_xlabel("time, s")
    ax.set_ylabel(f"power ({r.raw['energy']['units']}/s)")
    ax.set_title("Power per performance domain")
    ax.legend(fontsize=8)
    return fig


def overutilized(r: Result) -> Figure:
    """The fraction of each timeline bucket the root domain was overutilized."""
    o = r.overutilized
    fig = _figure(1.8)
    ax = fig.add_subplot()
    w = float(r._need_timeline()["bucket_s"])
    ax.bar(o["time_s"], o["fraction"], width=w, align="edge", color="#c62828")
    ax.set_ylim(0, 1.05)
    ax.set_xlabel("time, s")
    ax.set_title("Overutilized")
    return fig


def sweep_metric(df: pd.DataFrame, param: str, metric: str, by: str | None = None) -> Figure:
    """A sweep's ``metric`` against swept ``param``: every point as a dot (the seeds),
    the mean over seeds as a line, one series per value of ``by`` (another swept column)."""
    fig = _figure()
    ax = fig.add_subplot()
    xs = list(dict.fromkeys(df[param].astype(str)))
    pos = {x: i for i, x in enumerate(xs)}
    groups = [(None, df)] if by is None else list(df.groupby(by, sort=False))
    for k, ((name, g), c) in enumerate(zip(groups, _colours(len(groups)))):
        x = g[param].astype(str).map(pos) + (k - (len(groups) - 1) / 2) * 0.08
        ax.scatter(
            x, g[metric], color=c, alpha=0.6, s=14, label=None if name is None else f"{by}={name}"
        )
        mean = g.groupby(g[param].astype(str), sort=False)[metric].mean()
        ax.plot([pos[i] for i in mean.index], mean.to_numpy(), color=c)
    ax.set_xticks(range(len(xs)), xs)
    ax.set_xlabel(param)
    ax.set_ylabel(metric)
    ax.set_title(f"{metric} against {param} (dots: seeds; line: mean)")
    if by is not None:
        ax.legend(fontsize=8)
    return fig
