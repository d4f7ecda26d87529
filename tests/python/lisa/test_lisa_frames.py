"""hetsched's trace frames (``hs.read_trace``, equal to ``hs.run(..., keep_trace=True)``'s:
tests/python/test_trace_frames.py) against LISA 3.1.0's own frames of the same trace.

For each case, the CLI writes an ftrace text trace; LISA's ``Trace`` reads it with its
text parser; the hetsched package reads it in its own environment (``.venv``, or
``$HETSCHED_PYTHON``: LISA's pins do not fit it) and writes its frames as Parquet
(hetsched_frames.py); the frames are compared row by row: task states, CPU frequency and
idle, PELT and util_est signals of tasks and CPUs, capacities, overutilized intervals.

Run it with the venv made by ``tools/lisa-venv.sh`` (``make lisa-test``).
"""

from __future__ import annotations

import json
import os
import subprocess
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

lisa_trace = pytest.importorskip(
    "lisa.trace", reason="LISA 3.1.0 not installed (tools/lisa-venv.sh)"
)
PlatformInfo = pytest.importorskip("lisa.platforms.platinfo").PlatformInfo

REPO = Path(__file__).resolve().parents[3]
HERE = Path(__file__).resolve().parent
CLI = Path(os.environ.get("HETSCHED_CLI", REPO / "target" / "release" / "hetsched"))
PYTHON = Path(os.environ.get("HETSCHED_PYTHON", REPO / ".venv" / "bin" / "python"))

# (name, platform, workload, duration, sets): EAS with migrations and overutilized
# phases, a generated periodic mix on another platform with schedutil, the balancer
# without EAS, HMP, RT and deadline tasks, hackbench's many short-lived tasks.
CASES = [
    ("hikey960-workload", "hikey960", str(HERE / "workload.json"), "2s", []),
    (
        "juno-periodic-sugov",
        "juno_r0",
        "gen:periodic:duty=30,tasks=6",
        "1s",
        ["cpufreq.governor=schedutil"],
    ),
    ("rk3399-demo-noeas", "rk3399", "demo", "1s", ["eas.mode=off"]),
    ("tc2-hmp", "tc2", "demo", "1s", ["hmp.enabled=true"]),
    ("hikey960-rt-dl", "hikey960", "RT", "1s", []),
    ("m1pro-hackbench", "m1pro", "gen:hackbench:groups=1,loops=20", "1s", []),
]


def rt_workload(path: Path) -> str:
    """FIFO, deadline and fair tasks: RT and DL pushes, priorities below 100."""
    tasks: dict = {}
    for i in range(6):
        tasks[f"fifo{i}"] = {
            "policy": "SCHED_FIFO",
            "priority": 10 + i,
            "loop": -1,
            "run": 3000 + 500 * i,
            "timer": {"ref": f"t{i}", "period": 8000},
        }
    for i in range(3):
        tasks[f"dl{i}"] = {
            "policy": "SCHED_DEADLINE",
            "dl-runtime": 2000,
            "dl-period": 10000,
            "dl-deadline": 10000,
            "loop": -1,
            "run": 1500,
            "timer": {"ref": f"d{i}", "period": 10000},
        }
    tasks["cfs"] = {"instance": 6, "loop": -1, "run": 5000, "timer": {"ref": "c", "period": 9000}}
    path.write_text(json.dumps({"global": {"duration": 1}, "tasks": tasks}))
    return str(path)


@pytest.fixture(scope="module", params=CASES, ids=[c[0] for c in CASES])
def case(request, tmp_path_factory):
    name, platform, workload, duration, sets = request.param
    if not CLI.is_file():
        pytest.skip(f"{CLI} not built (make build)")
    if not PYTHON.is_file():
        pytest.skip(f"{PYTHON}: no Python environment with the hetsched package (make python)")
    d = tmp_path_factory.mktemp(name)
    if workload == "RT":
        workload = rt_workload(d / "rt.json")
    trace = d / "trace.txt"
    cmd = [str(CLI), "run", "--platform", platform, "--workload", workload, "--duration", duration]
    for s in sets:
        cmd += ["--set", s]
    subprocess.run([*cmd, "--trace", str(trace)], check=True, cwd=REPO, timeout=600)
    frames = d / "frames"
    subprocess.run(
        [str(PYTHON), str(HERE / "hetsched_frames.py"), str(trace), str(frames)],
        check=True,
        cwd=REPO,
        timeout=600,
    )
    nr_cpus = next(
        int(line.split("=")[1])
        for line in trace.read_text().splitlines()
        if line.startswith("# cpus=")
    )
    lisa = lisa_trace.Trace(
        str(trace),
        PlatformInfo({"cpus-count": nr_cpus}, src="hetsched-test"),
        parser=lisa_trace.TxtTraceParser.from_txt_file,
    )
    return lisa, frames


def ours(frames: Path, name: str) -> pd.DataFrame:
    return pd.read_parquet(frames / f"{name}.parquet")


def same(lisa: pd.DataFrame, mine: pd.DataFrame, columns: list[str], what: str) -> None:
    """Equal rows, in order: every column, strings as strings, and the Time index to the
    nanosecond (LISA's ``df_event`` nudges equal timestamps apart by a few float steps;
    ours keep them)."""
    assert len(mine) > 0, f"{what}: no rows in the trace"
    assert len(lisa) == len(mine), f"{what}: LISA {len(lisa)} rows, hetsched {len(mine)}"
    np.testing.assert_allclose(
        lisa.index.to_numpy(float), mine.index.to_numpy(float), rtol=0, atol=1e-9, err_msg=what
    )
    for c in columns:
        a, b = lisa[c].to_numpy(), mine[c].to_numpy()
        if a.dtype.kind in "OUS" or str(lisa[c].dtype) == "category":
            a, b = a.astype(str), b.astype(str)
        else:
            a, b = a.astype(np.int64), b.astype(np.int64)
        bad = np.flatnonzero(a != b)
        assert not len(bad), (
            f"{what}: column {c} differs at row {bad[0]}: "
            f"LISA {a[bad[0]]!r}, hetsched {b[bad[0]]!r}"
        )


def test_cpus_frequency(case):
    lisa, frames = case
    same(
        lisa.ana.frequency.df_cpus_frequency(),
        ours(frames, "cpus_frequency"),
        ["cpu", "frequency"],
        "frequency",
    )


def test_cpus_idle(case):
    lisa, frames = case
    same(lisa.ana.idle.df_cpus_idle(), ours(frames, "cpus_idle"), ["cpu", "state"], "idle")


@pytest.mark.parametrize("signal", ["util", "load", "enqueued", "ewma"])
def test_tasks_signal(case, signal):
    lisa, frames = case
    mine = ours(frames, f"tasks_signal_{signal}")
    theirs = lisa.ana.load_tracking.df_tasks_signal(signal)
    assert list(theirs.columns) == list(mine.columns)
    same(theirs, mine, list(mine.columns), f"tasks {signal}")


@pytest.mark.parametrize("signal", ["util", "load", "enqueued", "capacity"])
def test_cpus_signal(case, signal):
    lisa, frames = case
    mine = ours(frames, f"cpus_signal_{signal}")
    theirs = lisa.ana.load_tracking.df_cpus_signal(signal)
    assert list(theirs.columns) == list(mine.columns)
    same(theirs, mine, list(mine.columns), f"cpus {signal}")


def test_overutilized(case):
    lisa, frames = case
    mine = ours(frames, "overutilized")
    if not len(mine):
        # no sched_overutilized in the trace (EAS off): LISA has no frame
        with pytest.raises(lisa_trace.MissingTraceEventError):
            lisa.ana.status.df_overutilized()
        return
    theirs = lisa.ana.status.df_overutilized()
    same(theirs, mine, ["overutilized"], "overutilized")
    np.testing.assert_allclose(
        theirs["len"].to_numpy(float), mine["len"].to_numpy(float), atol=1e-9
    )


def test_tasks_states(case):
    """LISA nudges equal timestamps apart by the smallest float step and orders the rows
    of one instant as its sort leaves them; ours keep the instant and the emission order.
    So rows are compared per task and instant: the same states, CPUs, target CPUs and
    names, and the same time until the task's next instant.

    At the frame's last instant, LISA 3.1.0 keeps only one row: ``df_window()`` ends the
    window at the first row of the last timestamp (``_get_loc(..., method="ffill")`` on a
    duplicated index). There its rows must be a part of ours, and the task whose row it
    dropped has a shorter last interval in LISA's frame."""
    lisa, frames = case
    mine = ours(frames, "tasks_states")
    theirs = lisa.ana.tasks.df_tasks_states()
    assert list(theirs.columns) == list(mine.columns)

    def per_instant(df: pd.DataFrame) -> pd.DataFrame:
        df = df.reset_index()
        df["t_us"] = np.round(df["Time"].to_numpy(float) * 1e6).astype(np.int64)
        df["comm"] = df["comm"].astype(str)
        df["delta"] = df["delta"].fillna(-1.0)
        g = df.groupby(["pid", "t_us"], sort=True)

        def span(s: pd.Series) -> int:
            return round(float(s[s >= 0].sum()) * 1e6) if (s >= 0).any() else -1

        def tup(s: pd.Series) -> tuple:
            return tuple(sorted(str(x) for x in s))

        return pd.DataFrame(
            {
                "states": g["curr_state"].agg(tup),
                "cpus": g["cpu"].agg(tup),
                "targets": g["target_cpu"].agg(tup),
                "comms": g["comm"].agg(tup),
                "span_us": g["delta"].agg(span),
            }
        )

    a, b = per_instant(theirs), per_instant(mine)
    last = b.index.get_level_values("t_us").max()
    at_last_a = a[a.index.get_level_values("t_us") == last]
    at_last_b = b[b.index.get_level_values("t_us") == last]
    assert set(at_last_a.index) <= set(at_last_b.index) and len(at_last_a) >= 1
    cut = {}  # pid -> rows LISA dropped at the last instant
    for key, row in at_last_b.iterrows():
        kept = list(at_last_a.loc[key, "states"]) if key in at_last_a.index else []
        assert Counter(kept) <= Counter(row["states"]), f"last instant {key}: {kept}"
        if len(kept) < len(row["states"]):
            cut[key[0]] = len(row["states"]) - len(kept)
    assert len(theirs) == len(mine) - sum(cut.values()) > 0
    a, b = a.drop(index=at_last_a.index), b.drop(index=at_last_b.index)
    assert a.index.equals(b.index)
    # a task whose row LISA dropped has no next instant there: its last span is shorter
    for pid in cut:
        if pid in b.index.get_level_values("pid"):
            prev = (pid, b.loc[pid].index.max())
            assert a.loc[prev, "span_us"] <= b.loc[prev, "span_us"]
            a.loc[prev, "span_us"] = b.loc[prev, "span_us"]
    for c in a.columns:
        bad = a.index[(a[c] != b[c]).to_numpy()]
        assert not len(bad), (
            f"task states: {c} differs at (pid, µs) {bad[0]}: "
            f"LISA {a.loc[bad[0], c]}, hetsched {b.loc[bad[0], c]}"
        )
    assert (mine["curr_state"] == 0x2000).sum() > 10, "tasks ran"
