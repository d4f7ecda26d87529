"""Sweeps: ``hetsched.sweep`` and ``hetsched.load`` (docs/sweeps.md).

The machinery is the Rust one (``hetsched sweep``): the experiment is planned into the
output directory (a manifest and one result file per point, named by the SHA-256 of the
point's inputs), each missing point runs and its result file is written atomically, and
the table is made from the files. The local backend runs all of it in Rust threads; the
Ray backend runs each missing point as a Ray task (``_core.sweep_run_point``) and writes
the returned text here, on the driver, so workers need no shared file system. Either
way the files are the same bytes.
"""

from __future__ import annotations

import json
import math
import os
import sys
import time
from collections.abc import Iterable, Mapping
from typing import Any, Literal, Union

import pandas as pd

from . import _core

StrPath = Union[str, "os.PathLike[str]"]

Experiment = Union[StrPath, Mapping[str, Any]]
"""An experiment file (TOML) or the same thing as a mapping (see :func:`sweep`)."""


def sweep(
    experiment: Experiment,
    out: StrPath,
    *,
    backend: Literal["local", "ray"] = "local",
    jobs: int | None = None,
    ray_address: str | None = None,
    progress: bool = True,
) -> pd.DataFrame:
    """Runs every point of an experiment that ``out`` has no result for, and returns
    :func:`load` ``(out)``.

    Args:
        experiment: an experiment file (TOML, as ``hetsched sweep`` reads) or a mapping
            with the same keys: ``{"platforms": [...], "workloads": [...], "seeds":
            [1, 2], "noise": True, "grid": {"balance.misfit": [True, False]}}`` (``set``
            and ``grid`` are mappings, ``zip`` a list of mappings; a ``range`` is a list).
        out: the output directory: ``points/<hash>.json`` per point, ``experiment.json``,
            ``table.csv`` and, when pyarrow is installed, ``table.parquet``.
        backend: ``"local"`` (threads in this process) or ``"ray"`` (one Ray task per
            point; ``pip install hetsched[ray]``).
        jobs: local threads (default: every core); with Ray and no ``ray_address``, the
            CPUs of the local Ray instance started for the sweep.
        ray_address: the Ray cluster to connect to (default: the one already initialised
            in this process, else a local one).
        progress: draw a progress bar with an ETA on stderr when it is a terminal.

    The results do not depend on ``backend`` or ``jobs``. A sweep that was interrupted
    (even by ``kill -9``) resumes: only the points without a result file run.

    Raises:
        OptionsError: a bad experiment; the message names the line and column.
    """
    arg, text = _experiment_arg(experiment)
    directory = os.fspath(out)
    if backend == "local":
        _core.sweep(arg, directory, jobs, text, progress)
    elif backend == "ray":
        _sweep_ray(arg, text, directory, jobs, ray_address, progress)
    else:
        raise ValueError(f"backend={backend!r}: expected 'local' or 'ray'")
    table = load(directory)
    _write_parquet(table, os.path.join(directory, "table.parquet"))
    return table


def load(out: StrPath, *, tasks: bool = False) -> pd.DataFrame:
    """The table of the sweep in ``out``.

    One row per point, in the experiment's order: ``index``, ``hash``, the swept
    parameters (``platform``, ``workload``, ``kernel`` when swept, each ``[grid]`` and
    ``[[zip]]`` key, ``seed``), the metrics of ``table.csv`` and ``error``. With
    ``tasks=True``, one row per point and task instead: the parameters, then the task's
    metrics as :attr:`Result.tasks` has them (background tasks of the noise model
    included; their comms start with ``bgnoise`` or ``kthread``).
    """
    directory = os.fspath(out)
    rows = [json.loads(line) for line in _core.sweep_table(directory).splitlines()]
    frame = pd.DataFrame(rows)
    if not tasks:
        return frame
    from . import _flatten

    with open(os.path.join(directory, "experiment.json"), encoding="utf-8") as f:
        columns: list[str] = json.load(f)["columns"]
    out_rows: list[dict[str, Any]] = []
    cache: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        h = row["hash"]
        if h not in cache:
            with open(os.path.join(directory, "points", f"{h}.json"), encoding="utf-8") as f:
                point = json.load(f)
            cache[h] = point.get("result", {}).get("tasks", [])
        head = {"index": row["index"], "hash": h, **{c: row[c] for c in columns}}
        out_rows.extend({**head, **_flatten(t)} for t in cache[h])
    return pd.DataFrame(out_rows)


def _experiment_arg(experiment: Experiment) -> tuple[str, bool]:
    """``(path or TOML text, is_text)``."""
    if isinstance(experiment, Mapping):
        return _to_toml(experiment), True
    return os.fspath(experiment), False


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if not math.isfinite(v):
            raise ValueError(f"{v!r}: TOML numbers are finite")
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, Mapping):
        inner = ", ".join(f"{json.dumps(str(k))} = {_toml_value(x)}" for k, x in v.items())
        return "{ " + inner + " }"
    if isinstance(v, (list, tuple, range)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    raise TypeError(f"{v!r}: expected a string, number, boolean, list or mapping")


def _table(name: str, entries: Mapping[str, Any]) -> str:
    return (
        "\n"
        + name
        + "\n"
        + "".join(f"{json.dumps(str(k))} = {_toml_value(v)}\n" for k, v in entries.items())
    )


def _to_toml(exp: Mapping[str, Any]) -> str:
    """The experiment file for a mapping of its keys."""
    head: list[str] = []
    tail: list[str] = []
    for key, value in exp.items():
        if key in ("set", "grid") and isinstance(value, Mapping):
            tail.append(_table(f"[{key}]", value))
        elif key == "zip" and isinstance(value, Iterable) and not isinstance(value, str):
            tail.extend(_table("[[zip]]", t) for t in value)
        else:
            head.append(f"{key} = {_toml_value(value)}\n")
    return "".join(head) + "".join(tail)


def _write_parquet(frame: pd.DataFrame, path: str) -> None:
    """Writes ``frame`` as Parquet when pyarrow is installed (atomically)."""
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        return
    tmp = f"{path}.{os.getpid()}.tmp"
    # parameter columns may mix types across experiments (a list-valued option)
    frame.astype({c: str for c in frame.columns if frame[c].dtype == object}).to_parquet(
        tmp, index=False
    )
    os.replace(tmp, path)


def _ray_run_point(spec: str) -> str:
    """A Ray task: one point's result file text (runs in a Ray worker)."""
    return _core.sweep_run_point(spec)


class _Progress:
    """``done/total points, ETA`` on stderr when it is a terminal."""

    def __init__(self, total: int, enabled: bool) -> None:
        self.total = total
        self.enabled = enabled and sys.stderr.isatty() and total > 0
        self.start = time.monotonic()

    def update(self, done: int) -> None:
        if not self.enabled:
            return
        elapsed = time.monotonic() - self.start
        eta = elapsed / done * (self.total - done) if done else 0.0
        sys.stderr.write(f"\r{done}/{self.total} points  {elapsed:.0f} s elapsed  ETA {eta:.0f} s")
        if done == self.total:
            sys.stderr.write("\n")
        sys.stderr.flush()


def _sweep_ray(
    arg: str,
    text: bool,
    out: str,
    jobs: int | None,
    address: str | None,
    progress: bool,
) -> None:
    plan = json.loads(_core.sweep_plan(arg, out, text))
    points = plan["points"]
    run_points_ray([points[i] for i in plan["missing"]], out, jobs, address, progress)
    _core.sweep_finish(out)


def run_points_ray(
    points: list[dict[str, Any]],
    out: str,
    jobs: int | None = None,
    address: str | None = None,
    progress: bool = True,
) -> None:
    """Runs sweep points (``PointSpec`` mappings) as Ray tasks and writes each result
    file under ``out`` on this driver: what ``hs.sweep(backend="ray")`` and the CLI's
    ``--ray ADDRESS`` (``python -m hetsched._sweep``) do with the points a plan left."""
    try:
        import ray
    except ImportError as e:
        raise ImportError("the Ray backend needs Ray: pip install 'hetsched[ray]'") from e
    started = False
    if points and not ray.is_initialized():
        if address is None:
            ray.init(num_cpus=jobs, include_dashboard=False, log_to_driver=False)
        else:
            ray.init(address=address, include_dashboard=False, log_to_driver=False)
        started = True
    try:
        task = ray.remote(num_cpus=1)(_ray_run_point)
        pending = {task.remote(json.dumps(p)): p["hash"] for p in points}
        bar = _Progress(len(points), progress)
        done = 0
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            for ref in ready:
                _core.sweep_write_point(out, pending.pop(ref), ray.get(ref))
                done += 1
                bar.update(done)
    finally:
        if started:
            ray.shutdown()


def _main(argv: list[str]) -> int:
    """``python -m hetsched._sweep POINTS.json DIR ADDRESS JOBS``: the CLI's ``--ray``.
    Runs the points listed in POINTS.json on the Ray cluster at ADDRESS (``local``: a new
    local instance of JOBS CPUs) into DIR; one line on stderr and status 2 on error."""
    if len(argv) != 4:
        print(
            "hetsched: error: usage: python -m hetsched._sweep POINTS.json DIR ADDRESS JOBS",
            file=sys.stderr,
        )
        return 2
    points_file, out, address, jobs = argv
    try:
        with open(points_file, encoding="utf-8") as f:
            points = json.load(f)
        local = address == "local"
        run_points_ray(points, out, int(jobs) if local else None, None if local else address, False)
    except Exception as e:  # noqa: BLE001 - one line for the CLI, whatever failed
        print(f"hetsched: error: --ray: {type(e).__name__}: {e}".splitlines()[0], file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
