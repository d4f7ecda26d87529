"""Stubs of the native module ``hetsched._core`` (crates/hetsched-py)."""

from typing import Literal, TypedDict

__all__ = [
    "HetschedError",
    "PlatformError",
    "WorkloadError",
    "OptionsError",
    "RunError",
    "version",
    "run",
    "run_columns",
    "read_trace",
    "energy_model",
    "report",
    "platforms",
    "platform_summaries",
    "platform_describe",
    "validate",
    "workloads",
    "generate",
    "generators",
    "generator_list",
    "options_schema",
    "platform_schema",
    "sweep",
    "sweep_plan",
    "sweep_run_point",
    "sweep_write_point",
    "sweep_finish",
    "sweep_table",
    "experiment_schema",
]

class HetschedError(Exception):
    """Base class of the errors hetsched raises."""

class PlatformError(HetschedError, ValueError):
    """A platform preset or YAML file could not be loaded."""

class WorkloadError(HetschedError, ValueError):
    """An rt-app workload file could not be read, or a generator's parameters are not valid."""

class OptionsError(HetschedError, ValueError):
    """A `set=` option, duration or argument is not valid."""

class RunError(HetschedError, ValueError):
    """The run could not start, or its trace could not be written."""

def version() -> str: ...
def run(
    platform: str,
    workload: str,
    set: list[str] | None = None,
    seed: int = 0,
    duration: str | None = None,
    trace: str | None = None,
    duplicate_keys: Literal["ordered", "jsonc"] = "ordered",
    trace_format: Literal["text", "perfetto", "perfetto-legacy"] | None = None,
    timeline: bool = False,
) -> str: ...

class _Columns(TypedDict):
    """A run's event tables: per event, ``(column, is_string, int64 bytes)``."""

    nr_cpus: int
    end_ns: int
    strings: list[str]
    tables: dict[str, list[tuple[str, bool, bytes]]]

def run_columns(
    platform: str,
    workload: str,
    set: list[str] | None = None,
    seed: int = 0,
    duration: str | None = None,
    trace: str | None = None,
    duplicate_keys: Literal["ordered", "jsonc"] = "ordered",
    trace_format: Literal["text", "perfetto", "perfetto-legacy"] | None = None,
    timeline: bool = False,
) -> tuple[str, _Columns]: ...
def read_trace(path: str) -> _Columns: ...
def energy_model(platform: str, set: list[str] | None = None) -> str: ...
def report(items: list[tuple[str, str | None]], title: str | None = None) -> str: ...
def platforms() -> list[str]: ...
def platform_summaries() -> list[str]: ...
def platform_describe(name: str) -> str: ...
def validate(workload: str, duplicate_keys: Literal["ordered", "jsonc"] = "ordered") -> str: ...
def workloads() -> list[str]: ...
def generate(name: str, params: list[str]) -> tuple[str, str]: ...
def generators() -> list[str]: ...
def generator_list() -> str: ...
def options_schema() -> str: ...
def platform_schema() -> str: ...
def sweep(
    experiment: str,
    out: str,
    jobs: int | None = None,
    text: bool = False,
    progress: bool = True,
) -> tuple[int, str]: ...
def sweep_plan(experiment: str, out: str, text: bool = False) -> str: ...
def sweep_run_point(spec: str) -> str: ...
def sweep_write_point(out: str, hash: str, text: str) -> None: ...
def sweep_finish(out: str) -> str: ...
def sweep_table(out: str) -> str: ...
def experiment_schema() -> str: ...
