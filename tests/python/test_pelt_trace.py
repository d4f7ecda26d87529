"""PELT values in hetsched's trace against the kernel's arithmetic.

A periodic task pinned alone on one CPU, at a fixed frequency, on CPUs of different
capacity. From the ftrace text we take every `sched_pelt_se` record of the task and the
`sched_switch` events around them, and replay the same updates with
`tools/pelt_reference.py` (an independent Python implementation of kernel/sched/pelt.c):
util, load and runnable must match exactly, and the PELT clock must advance at
capacity x frequency / 1024^2 of wall time while the task runs.
"""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest

import hetsched as hs

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("pelt_reference", ROOT / "tools/pelt_reference.py")
assert _spec and _spec.loader
ref = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ref)

LINE = re.compile(
    r"^\s*(?P<comm>.+?)-(?P<pid>\d+)\s+\[(?P<cpu>\d+)\]\s+(?P<ts>[\d.]+):"
    r"\s+(?P<ev>\w+):\s+(?P<rest>.*)$"
)


def fields(rest: str) -> dict[str, str]:
    return dict(kv.split("=", 1) for kv in rest.split() if "=" in kv)


def workload(tmp_path: Path, cpu: int, run_us: int, period_us: int) -> Path:
    w = {
        "global": {"duration": 3, "calibration": "CPU4"},
        "tasks": {
            "p": {
                "cpus": [cpu],
                # 2.2 s asleep first: every PELT sum decays to exactly 0 (decay_load
                # returns 0 past 2016 periods), so the replay can start from zero.
                "delay": 2_200_000,
                "loop": -1,
                "run": run_us,
                "timer": {"ref": "unique", "period": period_us},
            }
        },
    }
    path = tmp_path / "w.json"
    path.write_text(json.dumps(w))
    return path


USERSPACE = "cpufreq.governor=userspace"
# A fixed frequency for the clock-scaling check (the default governor, schedutil, moves it)
PERFORMANCE = "cpufreq.governor=performance"
CASES = [
    # (cpu, option sets, capacity, freq_scale) on hikey960: A53 fmax 1844 MHz, A73 2362 MHz
    (0, [PERFORMANCE], 462, 1024),
    (0, [USERSPACE, "cpufreq.userspace_khz=[999000,2362000]"], 462, (999000 << 10) // 1844000),
    (4, [PERFORMANCE], 1024, 1024),
    (4, [USERSPACE, "cpufreq.userspace_khz=[1844000,1421000]"], 1024, (1421000 << 10) // 2362000),
]


@pytest.mark.parametrize("cpu,sets,cap,fscale", CASES)
def test_pelt_se_matches_kernel_arithmetic(tmp_path, cpu, sets, cap, fscale):
    trace = tmp_path / "trace.txt"
    hs.run("hikey960", str(workload(tmp_path, cpu, 3000, 10000)), set=sets, trace=str(trace))
    running = False
    se = None
    checked = 0
    last_tick = None
    for line in trace.read_text().splitlines():
        m = LINE.match(line)
        if not m:
            continue
        ev, f = m["ev"], fields(m["rest"])
        if ev == "sched_switch":
            if f["next_comm"] == "p-0":
                running = True
            elif f["prev_comm"] == "p-0":
                running = False
                last_tick = None
            continue
        if ev != "sched_pelt_se" or f["comm"] != "p-0":
            continue
        now = int(f["update_time"])
        if se is None:
            # after the long sleep: all sums are 0; period_contrib follows the
            # invariant period_contrib == (last_update_time >> 10) mod 1024
            if running or float(m["ts"]) < 3.2:
                continue
            se = ref.Avg()
            se.last_update_time = now
            se.period_contrib = (now >> 10) % 1024
            continue
        ref.update_se(se, now, running, running, running, 1024)
        assert (se.util_avg, se.load_avg, se.runnable_avg) == (
            int(f["util"]),
            int(f["load"]),
            int(f["rbl_load"]),
        ), line
        assert se.last_update_time == now, line
        checked += 1
        # PELT clock scaling between two ticks of a running task (4 ms of wall time)
        wall = round(float(m["ts"]) * 1e6) * 1000
        if running and last_tick is not None and wall - last_tick[0] == 4_000_000:
            expect = (((4_000_000 * cap) >> 10) * fscale) >> 10
            assert abs((now - last_tick[1]) - expect) < 1024, line
        last_tick = (wall, now) if running else None
    assert checked > 150, f"only {checked} PELT records replayed"
    # Invariance: util measures work, 0.3 of the reference CPU, on any CPU and OPP where
    # the task still fits (wall duty < 1); a saturated task converges to 1024.
    wall_duty = 0.3 * (1024 / cap) * (1024 / fscale)
    expected = 1024 if wall_duty >= 1 else 0.3 * 1024
    assert abs(se.util_avg - expected) < 60, (se.util_avg, expected)
