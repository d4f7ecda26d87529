"""hetsched: a deterministic simulator of Linux scheduling on heterogeneous CPUs.

A thin, typed layer over the native module ``hetsched._core``::

    import hetsched as hs

    r = hs.run("hikey960", "demo", set={"fair.variant": "cfs"}, duration="1s")
    r.tasks      # one row per task
    r.cpus       # one row per CPU
    r.to_json()  # the bytes ``hetsched run --json`` prints

    w = hs.generate("sysbench-cpu", threads=4, requests=1000)
    hs.run("hikey960", w)   # or hs.run("hikey960", "gen:sysbench-cpu:threads=4,requests=1000")
    w.json                  # the rt-app JSON

    df = hs.sweep("exp.toml", "out/")   # every point of an experiment; resumes
    hs.load("out/")                     # the same table, one row per point

    r = hs.run("hikey960", "demo", duration="1s", keep_trace=True)
    r.trace.df_tasks_states()           # LISA-shaped frames of the run's events
    hs.read_trace("trace.txt")          # the same frames from a text trace hetsched wrote

    r = hs.run("hikey960", "demo", duration="2s", timeline=True)
    hs.plot.timeline(r)                 # matplotlib figures (hs.plot.*)
    hs.report(r, "out/", out="report.html")   # the HTML report `hetsched report` writes

Errors are :class:`HetschedError` subclasses (also :class:`ValueError`) whose message
names the file, line and column of bad input.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from functools import cached_property
from typing import Any, Literal, Union

import pandas as pd

from . import _core, plot
from ._core import HetschedError, OptionsError, PlatformError, RunError, WorkloadError
from ._sweep import load, sweep
from ._trace import TaskState, Trace

__version__: str = _core.version()

__all__ = [
    "Generated",
    "HetschedError",
    "OptionsError",
    "PlatformError",
    "Result",
    "RunError",
    "TaskState",
    "Trace",
    "WorkloadError",
    "__version__",
    "describe_platform",
    "generate",
    "generators",
    "load",
    "platforms",
    "plot",
    "read_trace",
    "report",
    "run",
    "sweep",
    "validate",
    "workloads",
]

StrPath = Union[str, "os.PathLike[str]"]
"""A file path or, where the argument allows it, a preset name."""

Sets = Union[Mapping[str, Any], Sequence[str], None]
"""Option assignments: ``{"fair.variant": "cfs"}`` or ``["fair.variant=cfs"]``."""


class Generated:
    """A workload made by a built-in generator (see :func:`generate`).

    ``spec`` is the ``gen:NAME:k=v,...`` string that :func:`run` and :func:`validate`
    accept (a ``Generated`` can be passed to them directly); ``json`` is the workload as
    rt-app JSON, byte for byte what ``hetsched gen`` writes.
    """

    def __init__(self, spec: str, json_text: str) -> None:
        self.spec = spec
        self.json = json_text

    def write(self, path: StrPath) -> None:
        """Writes the rt-app JSON to ``path``."""
        with open(os.fspath(path), "w", encoding="utf-8") as f:
            f.write(self.json)

    def __str__(self) -> str:
        return self.spec

    def __repr__(self) -> str:
        return f"<hetsched.Generated {self.spec!r}>"


Workload = Union[StrPath, Generated]
"""An rt-app JSON file, a shipped workload name, a ``gen:`` spec, or a :class:`Generated`."""


class Result:
    """The result of one run.

    ``raw`` is the parsed result JSON; the other attributes are views of it.
    """

    def __init__(self, text: str, trace: Trace | None = None) -> None:
        self._text = text
        self.raw: dict[str, Any] = json.loads(text)
        self.trace = trace
        """The run's events as DataFrames (:class:`Trace`) when run with
        ``keep_trace=True``, else ``None``."""

    @cached_property
    def tasks(self) -> pd.DataFrame:
        """One row per task; per-CPU residency as columns ``residency_cpu0``, ``...``."""
        return _frame(self.raw["tasks"])

    @cached_property
    def cpus(self) -> pd.DataFrame:
        """One row per CPU: busy and idle time, time per OPP and per idle state."""
        return _frame(self.raw["cpus"])

    @property
    def migrations(self) -> dict[str, int]:
        """Migrations by reason (``wake_up``, ``misfit``, ``periodic``, ...)."""
        return dict(self.raw["migrations"])

    @property
    def settings(self) -> dict[str, Any]:
        """The complete settings the run used: options and derived values."""
        return dict(self.raw["settings"])

    @property
    def settings_hash(self) -> str:
        """Hash of :attr:`settings`: equal hashes, equal settings."""
        return str(self.raw["settings_hash"])

    @property
    def seed(self) -> int:
        """The seed of the run's random number generator."""
        return int(self.raw["seed"])

    @property
    def duration_s(self) -> float:
        """Simulated duration in seconds."""
        return float(self.raw["duration_s"])

    @property
    def timeline(self) -> dict[str, Any] | None:
        """The run's downsampled timeline (``run(..., timeline=True)``), or ``None``."""
        t = self.raw.get("timeline")
        return None if t is None else dict(t)

    @cached_property
    def timeline_cpus(self) -> pd.DataFrame:
        """One row per CPU and timeline bucket: ``time_s`` (bucket start), ``cpu``, ``pid``
        and ``comm`` of the task that ran longest in it (0 and ``""``: none), ``busy``
        (fraction), ``freq_khz`` (time-weighted mean), ``freq_max_khz``, ``idle_deep``
        (fraction in an idle state deeper than WFI), ``util`` (highest cfs_rq util_avg).
        """
        t = self._need_timeline()
        w = float(t["bucket_s"])
        comms = {int(k): v for k, v in t["comms"].items()}
        rows = []
        for c in t["cpus"]:
            for i, pid in enumerate(c["task"]):
                rows.append(
                    {
                        "time_s": i * w,
                        "cpu": c["cpu"],
                        "pid": pid,
                        "comm": comms.get(pid, ""),
                        "busy": c["busy"][i],
                        "freq_khz": c["freq_khz"][i],
                        "freq_max_khz": c["freq_max_khz"][i],
                        "idle_deep": c["idle_deep"][i],
                        "util": c["util"][i],
                    }
                )
        return pd.DataFrame(rows)

    @cached_property
    def timeline_tasks(self) -> pd.DataFrame:
        """One row per task and timeline bucket: ``time_s``, ``pid``, ``comm``, ``util``
        and ``util_est`` (the highest in the bucket)."""
        t = self._need_timeline()
        w = float(t["bucket_s"])
        rows = [
            {"time_s": i * w, "pid": k["pid"], "comm": k["comm"], "util": u, "util_est": e}
            for k in t["tasks"]
            for i, (u, e) in enumerate(zip(k["util"], k["util_est"]))
        ]
        return pd.DataFrame(rows, columns=["time_s", "pid", "comm", "util", "util_est"])

    @cached_property
    def overutilized(self) -> pd.DataFrame:
        """One row per timeline bucket: ``time_s`` and ``fraction`` overutilized."""
        t = self._need_timeline()
        w = float(t["bucket_s"])
        return pd.DataFrame(
            {
                "time_s": [i * w for i in range(len(t["overutilized"]))],
                "fraction": t["overutilized"],
            }
        )

    @cached_property
    def energy(self) -> pd.DataFrame:
        """Energy over time: one row per bucket and performance domain (``time_s``,
        ``pd``, ``energy``), from the result's ``energy.series``."""
        e = self.raw["energy"]
        rows = [
            {"time_s": p["t_s"], "pd": pd_i, "energy": v}
            for p in e["series"]
            for pd_i, v in enumerate(p["pd"])
        ]
        return pd.DataFrame(rows, columns=["time_s", "pd", "energy"])

    def _need_timeline(self) -> dict[str, Any]:
        t = self.raw.get("timeline")
        if t is None:
            raise ValueError("this result has no timeline: run with hs.run(..., timeline=True)")
        return dict(t)

    def to_json(self) -> str:
        """The result JSON, byte for byte what ``hetsched run --json`` writes (with
        ``--timeline`` when the run kept one)."""
        return self._text

    def __repr__(self) -> str:
        r = self.raw
        return (
            f"<hetsched.Result platform={r.get('platform')!r} workload={r.get('workload')!r} "
            f"seed={r.get('seed')} duration_s={r.get('duration_s')} "
            f"tasks={len(r.get('tasks', []))} cpus={len(r.get('cpus', []))}>"
        )


def run(
    platform: StrPath,
    workload: Workload,
    *,
    set: Sets = None,
    seed: int = 0,
    duration: str | None = None,
    trace: StrPath | None = None,
    trace_format: Literal["text", "perfetto", "perfetto-legacy"] | None = None,
    timeline: bool = False,
    keep_trace: bool = False,
) -> Result:
    """Runs ``workload`` on ``platform`` and returns its :class:`Result`.

    Args:
        platform: a preset name (see :func:`platforms`) or a platform YAML file.
        workload: an rt-app JSON file, a shipped workload name (see :func:`workloads`), a
            generator spec ``"gen:NAME:k=v,..."`` or a :class:`Generated`.
        set: options, as ``{"fair.variant": "cfs"}`` (non-string values are JSON-encoded)
            or as ``["fair.variant=cfs"]``. Keys: ``hetsched schema options``.
        seed: seed of the run's random number generator.
        duration: simulated duration such as ``"10s"`` or ``"500ms"``; default: the
            workload's ``global.duration``.
        trace: write the trace to this file: ftrace text (``trace-cmd report -R`` lines
            under ftrace's ``# tracer: nop`` header), or a Perfetto protobuf trace when the
            name ends in ``.pftrace`` or ``.perfetto-trace``.
        trace_format: ``"text"`` or ``"perfetto"`` whatever the trace file's name;
            ``"perfetto-legacy"`` writes the events Perfetto has no message for as
            ``GenericFtraceEvent`` (traced_probes before v53), for trace processors older
            than v52 (docs/trace-format.md).
        timeline: keep a downsampled timeline (per-CPU tasks, frequency, idle, PELT,
            overutilized; at most 1024 buckets, docs/report.md) for :mod:`hetsched.plot`
            and :func:`report`, as ``hetsched run --timeline`` does.
        keep_trace: keep the run's events in memory, as columns (no text round trip),
            for :attr:`Result.trace`: a :class:`Trace` with LISA-shaped DataFrames (task
            states, frequency, idle, PELT and util_est, migrations, overutilized). Costs
            memory in proportion to the events (about 80 bytes each).

    Raises:
        PlatformError, WorkloadError, OptionsError, RunError: bad input; the message names
            the file, line and column.
    """
    args = (
        os.fspath(platform),
        _workload_arg(workload),
        _set_args(set),
        seed,
        duration,
        None if trace is None else os.fspath(trace),
    )
    if keep_trace:
        text, tables = _core.run_columns(*args, trace_format=trace_format, timeline=timeline)
        return Result(text, Trace(tables))
    text = _core.run(*args, trace_format=trace_format, timeline=timeline)
    return Result(text)


def read_trace(path: StrPath) -> Trace:
    """The :class:`Trace` of an ftrace text trace hetsched wrote (``hetsched run --trace``,
    ``hs.run(..., trace=...)``): the same frames as ``hs.run(..., keep_trace=True)`` gives
    for that run.

    Raises:
        RunError: the file cannot be read, or a line is not what hetsched writes (the
            message names the file and the line).
    """
    return Trace(_core.read_trace(os.fspath(path)))


def report(
    *inputs: Result | StrPath,
    out: StrPath | None = None,
    title: str | None = None,
) -> str:
    """The HTML report of ``inputs`` (the same Rust code and bytes as ``hetsched report``).

    Each input is a section, in order: a :class:`Result` (with its timeline when run with
    ``timeline=True``), a result JSON file, a reproduction's JSON report
    (``hetsched reproduce NAME --json``) or a sweep's output directory. The report is
    one self-contained HTML file (inline SVG, no network request). Returns the HTML and
    writes it to ``out`` when given.

    Raises:
        RunError: an input is not one of those (the message names it).
    """
    items: list[tuple[str, str | None]] = []
    for i, x in enumerate(inputs):
        if isinstance(x, Result):
            name = f"{x.raw.get('workload')} on {x.raw.get('platform')}"
            items.append((name if len(inputs) == 1 else f"{name} #{i + 1}", x.to_json()))
        else:
            items.append((os.fspath(x), None))
    html = _core.report(items, title)
    if out is not None:
        with open(os.fspath(out), "w", encoding="utf-8") as f:
            f.write(html)
    return html


def platforms() -> list[str]:
    """Names of the platform presets."""
    return _core.platforms()


def workloads() -> list[str]:
    """Names of the workloads shipped with hetsched."""
    return _core.workloads()


def describe_platform(name: StrPath) -> str:
    """CPUs, capacities, OPPs, idle states and sources of a preset or YAML file."""
    return _core.platform_describe(os.fspath(name))


def validate(path: Workload) -> str:
    """Reads an rt-app workload (or a generator spec) and returns what was understood,
    as text: tasks, phases, events per kind, work and time totals, policy, affinity and
    the reader's warnings.

    Raises:
        WorkloadError: the file cannot be read (the message names the file, line and
            column), or a generator's parameters are not valid.
    """
    return _core.validate(_workload_arg(path))


def generate(name: str, **params: Any) -> Generated:
    """Runs built-in generator ``name`` (see :func:`generators`) with parameters.

    Values may be strings (``period="16ms"``), numbers, booleans, or lists for CPU lists
    and per-thread pins (``pin=[1, 2, None]``, ``None`` = not pinned)::

        hs.generate("hackbench", groups=4, loops=100)
        hs.generate("periodic", duty=5, period="16ms", duration="10s", cpus=[0, 1])

    Raises:
        WorkloadError: unknown generator or parameter, or a value out of range; the
            message names the parameter and what was expected.
    """
    spec, text = _core.generate(name, [f"{k}={_param_value(v)}" for k, v in params.items()])
    return Generated(spec, text)


def generators() -> str:
    """The built-in generators and their parameters, with defaults (``hetsched gen --list``)."""
    return _core.generator_list()


def _param_value(v: Any) -> str:
    """A generator parameter as the ``k=v`` syntax writes it."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (list, tuple)):
        return "[" + ",".join("-" if x is None else str(x) for x in v) + "]"
    return str(v)


def _workload_arg(workload: Workload) -> str:
    if isinstance(workload, Generated):
        return workload.spec
    return os.fspath(workload)


def _set_args(sets: Sets) -> list[str] | None:
    """``key=value`` strings from a mapping or a sequence of assignments."""
    if sets is None:
        return None
    if isinstance(sets, Mapping):
        return [f"{k}={v if isinstance(v, str) else json.dumps(v)}" for k, v in sets.items()]
    if isinstance(sets, str):
        raise TypeError(f"set={sets!r}: expected a dict or a list of 'key=value' strings")
    return [str(s) for s in sets]


def _frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """A DataFrame with one row per record, nested values spread over columns.

    Lists become numbered columns (``residency_s`` becomes ``residency_cpu0``, ...);
    mappings with fixed names become ``parent_child`` columns; mappings keyed by numbers
    (time per OPP or per idle state, whose keys differ from CPU to CPU) stay dicts.
    """
    return pd.DataFrame([_flatten(row) for row in rows])


def _flatten(row: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in row.items():
        name = f"{prefix}{key}"
        if isinstance(value, list):
            stem = "residency_cpu" if name == "residency_s" else f"{name}_"
            out.update({f"{stem}{i}": v for i, v in enumerate(value)})
        elif isinstance(value, Mapping) and not any(str(k).isdigit() for k in value):
            out.update(_flatten(value, f"{name}_"))
        else:
            out[name] = value
    return out
