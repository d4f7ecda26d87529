"""Writes the frames of ``hs.read_trace(TRACE)`` as Parquet files into OUT, one per frame
(``NAME.parquet``), for test_lisa_frames.py: run with the Python environment that has the
hetsched package (``.venv``), not LISA's, whose pins (numpy<2, pandas 2.0.3) it does not
share::

    .venv/bin/python tests/python/lisa/hetsched_frames.py TRACE OUT
"""

from __future__ import annotations

import sys
from pathlib import Path

import hetsched as hs

FRAMES = {
    "tasks_states": lambda t: t.df_tasks_states(),
    "cpus_frequency": lambda t: t.df_cpus_frequency(),
    "cpus_idle": lambda t: t.df_cpus_idle(),
    "overutilized": lambda t: t.df_overutilized(),
    **{
        f"tasks_signal_{s}": (lambda t, s=s: t.df_tasks_signal(s))
        for s in ("util", "load", "enqueued", "ewma")
    },
    **{
        f"cpus_signal_{s}": (lambda t, s=s: t.df_cpus_signal(s))
        for s in ("util", "load", "enqueued", "capacity")
    },
}


def main() -> None:
    trace, out = Path(sys.argv[1]), Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    t = hs.read_trace(trace)
    for name, frame in FRAMES.items():
        frame(t).to_parquet(out / f"{name}.parquet")


if __name__ == "__main__":
    main()
