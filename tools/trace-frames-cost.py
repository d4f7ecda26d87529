"""What ``keep_trace=True`` and ``hs.read_trace`` cost (python/README.md, "The trace as
data"): bytes per kept event, the run's time with and without the tables, the task-state
and migration frames, and reading the run's text trace back.

    .venv/bin/python tools/trace-frames-cost.py
"""

from __future__ import annotations

import os
import tempfile
import time

import hetsched as hs

PLATFORM, WORKLOAD, DURATION = "hikey960", "gen:hackbench:groups=2,loops=50", "5s"


def timed(f):  # type: ignore[no-untyped-def]
    t = time.perf_counter()
    r = f()
    return r, time.perf_counter() - t


def main() -> None:
    _, plain = timed(lambda: hs.run(PLATFORM, WORKLOAD, duration=DURATION))
    r, kept = timed(lambda: hs.run(PLATFORM, WORKLOAD, duration=DURATION, keep_trace=True))
    tables = r.trace._raw["tables"]
    nbytes = sum(len(col[2]) for cols in tables.values() for col in cols)
    events = sum(len(cols[0][2]) // 8 for cols in tables.values() if cols)
    _, frames = timed(lambda: (r.trace.df_tasks_states(), r.trace.df_migrations()))
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "t.txt")
        hs.run(PLATFORM, WORKLOAD, duration=DURATION, trace=path)
        size = os.path.getsize(path)
        _, read = timed(lambda: hs.read_trace(path))
    print(f"{WORKLOAD} on {PLATFORM}, {DURATION}: {events} kept events")
    print(f"tables: {nbytes} bytes, {nbytes / events:.0f} bytes per event")
    print(f"run: {plain:.3f} s without keep_trace, {kept:.3f} s with")
    print(f"df_tasks_states() + df_migrations(): {frames:.3f} s")
    print(f"hs.read_trace of the {size / 1e6:.1f} MB text trace: {read:.3f} s")


if __name__ == "__main__":
    main()
