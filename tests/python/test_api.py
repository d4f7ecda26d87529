"""The Python API: hetsched.run and friends over the native module hetsched._core."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import hetsched as hs

PRESETS = ["juno_r0", "hikey960", "tc2", "rk3399", "exynos5800", "m1pro", "orion_o6", "hikey620"]
HIKEY960_CPUS = 8


@pytest.fixture(scope="module")
def demo() -> hs.Result:
    return hs.run("hikey960", "demo", duration="1s")


def test_platforms_lists_the_presets() -> None:
    assert sorted(hs.platforms()) == sorted(PRESETS)


def test_describe_platform_names_the_cpus() -> None:
    text = hs.describe_platform("hikey960")
    assert "hikey960" in text
    assert "cpu" in text.lower()


def test_validate_a_shipped_workload() -> None:
    assert "demo" in hs.validate("demo")


def test_result_metadata(demo: hs.Result) -> None:
    assert demo.raw["platform"] == "hikey960"
    assert demo.raw["workload"] == "demo"
    assert demo.seed == 0
    assert demo.duration_s == pytest.approx(1.0)
    assert isinstance(demo.settings, dict)
    assert set(demo.migrations) >= {"wake_up", "misfit", "periodic"}
    assert all(isinstance(v, int) for v in demo.migrations.values())
    assert "hikey960" in repr(demo)


def test_tasks_frame(demo: hs.Result) -> None:
    tasks = demo.tasks
    assert isinstance(tasks, pd.DataFrame)
    assert len(tasks) == len(demo.raw["tasks"]) > 0
    residency = [f"residency_cpu{i}" for i in range(HIKEY960_CPUS)]
    for col in ["pid", "comm", "cpu_time_s", "wait_time_s", "wakeups", *residency]:
        assert col in tasks.columns
    assert "residency_s" not in tasks.columns
    assert "wakeup_latency_us_p99" in tasks.columns
    assert tasks["pid"].is_unique
    # the per-CPU columns add up to the task's CPU time
    assert tasks[residency].sum(axis=1).to_numpy() == pytest.approx(
        tasks["cpu_time_s"].to_numpy(), abs=1e-6
    )


def test_cpu_time_within_duration(demo: hs.Result) -> None:
    assert (demo.tasks["cpu_time_s"] >= 0).all()
    assert (demo.tasks["cpu_time_s"] <= demo.duration_s + 1e-9).all()


def test_cpus_frame(demo: hs.Result) -> None:
    cpus = demo.cpus
    assert isinstance(cpus, pd.DataFrame)
    assert cpus.shape[0] == HIKEY960_CPUS
    assert list(cpus["cpu"]) == list(range(HIKEY960_CPUS))
    for col in ["busy_s", "idle_s"]:
        assert col in cpus.columns
    assert (cpus["busy_s"] + cpus["idle_s"]).to_numpy() == pytest.approx(
        [demo.duration_s] * HIKEY960_CPUS, abs=1e-6
    )


def test_runs_are_deterministic() -> None:
    a = hs.run("hikey960", "demo", duration="1s", seed=7)
    b = hs.run("hikey960", "demo", duration="1s", seed=7)
    assert a.to_json() == b.to_json()
    assert json.loads(a.to_json()) == a.raw


def test_set_dict_changes_settings() -> None:
    eevdf = hs.run("hikey960", "demo", duration="100ms")
    cfs = hs.run("hikey960", "demo", duration="100ms", set={"fair.variant": "cfs"})
    assert cfs.settings_hash != eevdf.settings_hash
    assert cfs.settings["options"]["fair"]["variant"] == "cfs"


def test_set_list_equals_set_dict() -> None:
    as_list = hs.run(
        "hikey960", "demo", duration="100ms", set=["fair.variant=cfs", "sched.hz=1000"]
    )
    as_dict = hs.run(
        "hikey960", "demo", duration="100ms", set={"fair.variant": "cfs", "sched.hz": 1000}
    )
    assert as_list.to_json() == as_dict.to_json()


def test_trace_file_is_written(tmp_path: Path) -> None:
    trace = tmp_path / "trace.txt"
    hs.run("hikey960", "demo", duration="100ms", trace=trace)
    assert trace.stat().st_size > 0


def test_malformed_workload_names_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{\n  "tasks": {\n    "t": { "run": "fast" }\n  }\n}\n')
    with pytest.raises(hs.WorkloadError, match=r"bad\.json:3:\d+") as info:
        hs.validate(bad)
    assert isinstance(info.value, hs.HetschedError)
    assert isinstance(info.value, ValueError)
    with pytest.raises(hs.WorkloadError, match=r"bad\.json:3:\d+"):
        hs.run("hikey960", bad, duration="1s")


def test_truncated_json_names_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "truncated.json"
    bad.write_text('{\n  "tasks": {\n    "t": { "run": 1000\n')
    with pytest.raises(hs.WorkloadError, match=r"truncated\.json:\d+:\d+"):
        hs.validate(bad)


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"platform": "no_such_board"}, hs.PlatformError),
        ({"set": {"fair.variant": "round_robin"}}, hs.OptionsError),
        ({"set": ["fair.variant"]}, hs.OptionsError),
        ({"duration": "1h"}, hs.OptionsError),
    ],
)
def test_bad_input_raises_the_right_error(kwargs: dict[str, Any], error: type[Exception]) -> None:
    args = {"platform": "hikey960", "workload": "demo", **kwargs}
    with pytest.raises(error) as info:
        hs.run(**args)
    assert isinstance(info.value, hs.HetschedError)
    assert isinstance(info.value, ValueError)
    assert "\n" not in str(info.value)


def test_set_rejects_a_bare_string() -> None:
    with pytest.raises(TypeError):
        hs.run("hikey960", "demo", set="fair.variant=cfs")


def test_exception_hierarchy() -> None:
    for cls in (hs.PlatformError, hs.WorkloadError, hs.OptionsError, hs.RunError):
        assert issubclass(cls, hs.HetschedError)
        assert issubclass(cls, ValueError)
        assert cls.__module__ == "hetsched"
    assert not issubclass(hs.HetschedError, ValueError)


def test_generate_returns_json_and_a_runnable_workload(tmp_path: Path) -> None:
    w = hs.generate("sysbench-cpu", requests=100, cpus=[4])
    assert w.spec == "gen:sysbench-cpu:requests=100,cpus=[4]"
    conf = json.loads(w.json)
    assert conf["tasks"]["sysbench"]["phases"]["requests"]["loop"] == 100
    # 100 requests x 1200 us of work on an A73 (capacity 1024) at fmax: 0.12 s, after the
    # thread's 10 us of start work (rtapp.thread_start_us) on the LITTLE CPU rt-app's main
    # thread (on CPU 4) forks it onto, capacity 462.
    r = hs.run("hikey960", w, set={"cpufreq.governor": "performance"})
    start_work = 10e-6 * 1024 / 462
    assert r.tasks["completion_s"].iloc[0] == pytest.approx(0.12 + start_work, abs=1e-9)
    assert r.raw["main_thread"]["comm"] == "rt-app"
    path = tmp_path / "sb.json"
    w.write(path)
    assert "instances 1, loop 1" in hs.validate(path)


def test_generate_hackbench_validates_without_running() -> None:
    text = hs.validate(hs.generate("hackbench", groups=2, loops=10))
    assert "tasks: 80 (80 threads at start)" in text
    assert "sem_wait" in text


def test_generator_errors_name_the_parameter() -> None:
    with pytest.raises(hs.WorkloadError, match=r"gen:hackbench: groups=0: expected"):
        hs.generate("hackbench", groups=0)
    with pytest.raises(hs.WorkloadError, match=r"unknown parameter `grups`"):
        hs.generate("hackbench", grups=2)
    assert "periodic:" in hs.generators()
