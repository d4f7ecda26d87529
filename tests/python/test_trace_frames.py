"""The trace as DataFrames: ``hs.run(..., keep_trace=True)`` (the events kept in memory
as columns) and ``hs.read_trace(path)`` (the text trace of the same run) give equal
frames; the frames agree with the run's result; two runs give identical frames.

LISA 3.1.0's own frames of the same traces are compared in
tests/python/lisa/test_lisa_frames.py."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import hetsched as hs

A = hs.TaskState.ACTIVE


def rt_workload(path: Path) -> Path:
    """FIFO tasks (RT push), deadline tasks (DL push) and fair tasks on hikey960."""
    tasks: dict[str, object] = {}
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
    return path


CASES = {
    "eas-misfit": ("hikey960", "gen:periodic:duty=60,tasks=10", {}),
    "hmp": ("tc2", "demo", {"hmp.enabled": True}),
    "rt-dl": ("hikey960", "RT", {}),
    "sugov-juno": ("juno_r0", "demo", {"cpufreq.governor": "schedutil"}),
}

FRAMES = {
    "tasks_states": lambda t: t.df_tasks_states(),
    "cpus_frequency": lambda t: t.df_cpus_frequency(),
    "cpus_idle": lambda t: t.df_cpus_idle(),
    "migrations": lambda t: t.df_migrations(),
    "overutilized": lambda t: t.df_overutilized(),
    "tasks_tasks": lambda t: t.df_tasks(),
    **{
        f"tasks_{s}": (lambda t, s=s: t.df_tasks_signal(s))
        for s in ("util", "load", "enqueued", "ewma")
    },
    **{
        f"cpus_{s}": (lambda t, s=s: t.df_cpus_signal(s))
        for s in ("util", "load", "enqueued", "capacity", "rt", "dl")
    },
}


class Case:
    """One run of a case, with its text trace, and how to run it again."""

    def __init__(self, name: str, d: Path) -> None:
        platform, workload, sets = CASES[name]
        if workload == "RT":
            workload = str(rt_workload(d / "rt.json"))
        self.args = (platform, workload)
        self.kwargs = {"set": sets, "duration": "1s", "seed": 3}
        self.path = d / "trace.txt"
        self.result = hs.run(*self.args, **self.kwargs, trace=self.path, keep_trace=True)
        assert self.result.trace is not None
        self.trace: hs.Trace = self.result.trace


@pytest.fixture(scope="module", params=list(CASES))
def case(request, tmp_path_factory) -> Case:
    return Case(request.param, tmp_path_factory.mktemp(request.param))


def test_memory_and_text_give_equal_frames(case: Case) -> None:
    mem, text = case.trace, hs.read_trace(case.path)
    assert (mem.nr_cpus, mem.end) == (text.nr_cpus, text.end)
    for name, frame in FRAMES.items():
        pd.testing.assert_frame_equal(frame(mem), frame(text), check_exact=True, obj=name)
    for event in mem.events:
        pd.testing.assert_frame_equal(mem.df_event(event), text.df_event(event), obj=event)


def test_the_same_run_gives_identical_frames(case: Case) -> None:
    again = hs.run(*case.args, **case.kwargs, keep_trace=True)
    assert again.trace is not None
    assert again.to_json() == case.result.to_json()
    for name, frame in FRAMES.items():
        pd.testing.assert_frame_equal(
            frame(case.trace), frame(again.trace), check_exact=True, obj=name
        )


def test_migration_reasons_add_up_to_the_results(case: Case) -> None:
    """The trace's reason classes against the engine's own counts."""
    got = Counter(case.trace.df_migrations()["reason"])
    want = {k: v for k, v in case.result.migrations.items() if v}
    assert sum(got.values()) == sum(want.values()) > 0
    exact = ["wake_up", "rt_push", "rt_pull", "dl_push", "dl_pull", "hmp_idle_pull", "hmp_offload"]
    for reason in exact:
        assert got.get(reason, 0) == want.get(reason, 0), reason
    fair = ["periodic", "newidle", "nohz_idle", "active", "misfit", "affinity"]
    assert got["balance"] + got["active"] == sum(want.get(k, 0) for k in fair)
    if case.args[1].endswith("rt.json"):
        assert got["rt_push"] > 0 and got["dl_push"] > 0
    if "hmp.enabled" in case.kwargs["set"]:  # type: ignore[operator]
        assert got["hmp_offload"] > 0 and got["hmp_idle_pull"] > 0
    if "periodic" in case.args[1]:
        assert got["active"] == want["misfit"] > 0


def test_task_states_account_for_the_cpu_time(case: Case) -> None:
    """Running intervals (``A``) per task add up to the result's CPU time, to the µs the
    text trace keeps per switch (a task running at the end runs to the trace's end)."""
    df = case.trace.df_tasks_states()
    delta = df["delta"].to_numpy()
    delta = np.where(np.isnan(delta), case.trace.end - df.index.to_numpy(), delta)
    running = (df["curr_state"] == A).to_numpy()
    ran = pd.Series(delta[running]).groupby(df["pid"].to_numpy()[running]).sum()
    switches = df[df["curr_state"] == A].groupby("pid").size()
    tasks = case.result.tasks.set_index("pid")
    for pid, row in tasks.iterrows():
        if pid not in ran.index:
            assert row["cpu_time_s"] < 1e-6
            continue
        assert abs(ran[pid] - row["cpu_time_s"]) <= 1e-6 * (switches[pid] + 1), (pid, row["comm"])
    # every interval starts where the task's previous one ended
    for _, g in df.groupby("pid"):
        t = g.index.to_numpy()
        np.testing.assert_allclose(t[:-1] + g["delta"].to_numpy()[:-1], t[1:], atol=1e-12)
        assert g["next_state"].iloc[-1] == hs.TaskState.UNKNOWN
        assert np.isnan(g["delta"].iloc[-1])
        assert (g["curr_state"].iloc[1:].to_numpy() == g["next_state"].iloc[:-1].to_numpy()).all()


def test_running_tasks_are_on_the_cpu_that_switched_them_in(case: Case) -> None:
    df = case.trace.df_tasks_states()
    sw = case.trace.df_event("sched_switch")
    into = df[df["curr_state"] == A]
    assert len(into) == len(sw)
    assert (into["cpu"].to_numpy() == sw["__cpu"].to_numpy()).all()
    assert (into["pid"].to_numpy() == sw["next_pid"].to_numpy()).all()


def test_overutilized_intervals_match_the_result(case: Case) -> None:
    ou = case.trace.df_overutilized()
    want = case.result.raw["overutilized"]["time_s"]
    got = float(ou.loc[ou["overutilized"] == 1, "len"].sum())
    # the result counts in ns, the trace's changes are at the µs
    assert abs(got - want) <= 1e-6 * (len(ou) + 1), (got, want)
    if len(ou):
        assert (ou["overutilized"].diff().iloc[1:] != 0).all(), "one row per change"


def test_frequency_and_idle(case: Case) -> None:
    f = case.trace.df_cpus_frequency()
    assert set(f["cpu"]) == set(range(case.trace.nr_cpus))
    assert (f["frequency"] > 0).all()
    idle = case.trace.df_cpus_idle()
    assert set(idle["state"]) >= {-1, 0}


def test_signals(case: Case) -> None:
    util = case.trace.df_tasks_signal("util")
    assert list(util.columns) == ["comm", "cpu", "pid", "update_time", "util"]
    assert util["util"].between(0, 1024).all()
    ewma = case.trace.df_task_signal(int(util["pid"].iloc[-1]), "ewma")
    assert len(ewma) and (ewma["pid"] == util["pid"].iloc[-1]).all()
    cap = case.trace.df_cpus_signal("capacity")
    assert (cap["capacity_curr"] <= cap["capacity_orig"]).all()
    with pytest.raises(ValueError, match="expected"):
        case.trace.df_tasks_signal("runnable")


def test_one_task_by_name(case: Case) -> None:
    names = case.trace.df_tasks()
    comm = names.loc[names["pid"] >= 1001, "comm"].iloc[0]
    pid = int(names.loc[names["comm"] == comm, "pid"].iloc[0])
    df = case.trace.df_task_states(comm, stringify=True)
    assert list(df.columns) == [
        "target_cpu",
        "cpu",
        "curr_state",
        "next_state",
        "delta",
        "curr_state_str",
        "next_state_str",
    ]
    assert set(df["curr_state_str"]) <= set("AWRSDX")
    pd.testing.assert_frame_equal(df.iloc[:, :5], case.trace.df_task_states(pid))
    with pytest.raises(ValueError, match="no task named"):
        case.trace.df_task_states("no-such-task")


def test_read_trace_names_a_bad_line(tmp_path: Path) -> None:
    p = tmp_path / "bad.txt"
    p.write_text(
        "# tracer: nop\n#\n"
        "          <idle>-0     [000]     1.000000: cpu_frequency:        state=x cpu_id=0\n"
    )
    with pytest.raises(hs.RunError, match=r"bad.txt: line 3: cpu_frequency: state=x"):
        hs.read_trace(p)
    with pytest.raises(hs.RunError, match="No such file"):
        hs.read_trace(tmp_path / "missing.txt")


def test_no_trace_unless_asked() -> None:
    assert hs.run("hikey960", "demo", duration="100ms").trace is None


def test_energy_over_time_matches_the_runs_own(case: Case) -> None:
    """The trace's energy, replayed on the platform's Energy Model, against the engine's
    accounting of the same run: the same total to the µs truncation of the trace's
    times, and the same series bucket by bucket; the text trace gives the same frame."""
    r, platform = case.result, case.args[0]
    e = r.raw["energy"]
    sets = case.kwargs["set"]
    df = case.trace.df_energy(platform, sets, bucket=e["bucket_s"])
    pd.testing.assert_frame_equal(
        df, hs.read_trace(case.path).df_energy(platform, sets, e["bucket_s"])
    )
    assert list(df.columns) == [f"pd{i}" for i in range(len(e["pds"]))] + ["total"]
    # the trace's times are truncated to the µs: the run with RT tasks switching every
    # few hundred µs is off by 1.3e-4 (2.4e-4 J of 1.86 J), the others by < 1e-5
    assert df["total"].sum() == pytest.approx(e["total"], rel=5e-4)
    series = np.array([p["pd"] for p in e["series"]])
    n = min(len(series), len(df))
    assert n >= len(series) - 1 and n > 0
    np.testing.assert_allclose(df.iloc[:n, :-1].to_numpy(), series[:n], rtol=1e-3, atol=1e-6)
    with pytest.raises(ValueError, match="CPUs"):
        case.trace.df_energy("hikey620" if case.trace.nr_cpus != 8 else "juno_r0")


def test_keep_trace_with_a_timeline_and_a_perfetto_file(tmp_path: Path) -> None:
    """The columns beside the timeline and a trace file: each as without the others."""
    both = hs.run(
        "hikey960",
        "demo",
        duration="300ms",
        timeline=True,
        keep_trace=True,
        trace=tmp_path / "t.pftrace",
    )
    alone = hs.run("hikey960", "demo", duration="300ms", keep_trace=True)
    assert both.trace is not None and alone.trace is not None
    assert both.timeline == hs.run("hikey960", "demo", duration="300ms", timeline=True).timeline
    pd.testing.assert_frame_equal(both.trace.df_tasks_states(), alone.trace.df_tasks_states())
    assert (tmp_path / "t.pftrace").stat().st_size > 0
