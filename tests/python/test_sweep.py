"""hetsched.sweep and hetsched.load: local threads and a local Ray cluster, resume, frames."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import hetsched as hs

# 2 platforms x 2 values x 3 seeds = 12 points of a 0.3 s run
EXPERIMENT: dict[str, Any] = {
    "name": "py-sweep",
    "platforms": ["hikey960", "rk3399"],
    "workloads": ["gen:periodic:duty=30,tasks=2"],
    "seeds": [1, 2, 3],
    "noise": True,
    "duration": "300ms",
    "grid": {"balance.misfit": [True, False]},
}

TOML = """name = "py-sweep"
platforms = ["hikey960", "rk3399"]
workloads = ["gen:periodic:duty=30,tasks=2"]
seeds = [1, 2, 3]
noise = true
duration = "300ms"

[grid]
"balance.misfit" = [true, false]
"""


def files(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((out / "points").iterdir())}


@pytest.fixture(scope="module")
def local(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("local")
    hs.sweep(EXPERIMENT, out, jobs=2)
    return out


def test_one_row_per_point_with_the_parameters_as_columns(local: Path) -> None:
    df = hs.load(local)
    assert len(df) == 12
    assert list(df.columns[:7]) == [
        "index",
        "hash",
        "platform",
        "workload",
        "balance.misfit",
        "seed",
        "duration_s",
    ]
    assert df["index"].tolist() == list(range(12))
    assert df["hash"].is_unique
    assert df["balance.misfit"].dtype == bool
    assert set(df["platform"]) == {"hikey960", "rk3399"}
    assert df["seed"].tolist() == [1, 2, 3] * 4
    assert df["duration_s"].tolist() == pytest.approx([0.3] * 12)
    assert (df["cpu_s"] > 0).all()
    assert df["migrations"].dtype.kind == "i"
    assert df["error"].isna().all()
    # grouped by the swept parameters, as the summary does
    means = df.groupby(["platform", "balance.misfit"])["energy"].mean()
    assert len(means) == 4


def test_the_file_and_the_mapping_are_the_same_experiment(local: Path, tmp_path: Path) -> None:
    exp = tmp_path / "exp.toml"
    exp.write_text(TOML)
    out = tmp_path / "out"
    df = hs.sweep(exp, out, jobs=1)
    assert files(out) == files(local)
    assert (out / "table.csv").read_bytes() == (local / "table.csv").read_bytes()
    pd.testing.assert_frame_equal(df, hs.load(local))


def test_resume_runs_only_the_missing_points(local: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    hs.sweep(EXPERIMENT, out, jobs=2)
    before = files(out)
    gone = sorted(before)[:4]
    for name in gone:
        os.remove(out / "points" / name)
    (out / "points" / f".{gone[0]}.999.0.tmp").write_text("{")
    mtimes = {n: (out / "points" / n).stat().st_mtime_ns for n in before if n not in gone}
    hs.sweep(EXPERIMENT, out, jobs=2)
    assert files(out) == before
    # the others were not rewritten
    assert {n: (out / "points" / n).stat().st_mtime_ns for n in mtimes} == mtimes
    assert (out / "table.csv").read_bytes() == (local / "table.csv").read_bytes()


def test_tasks_frame(local: Path) -> None:
    tasks = hs.load(local, tasks=True)
    assert {"index", "platform", "balance.misfit", "seed", "comm", "cpu_time_s"} <= set(
        tasks.columns
    )
    workload = tasks[tasks["comm"].str.startswith("periodic")]
    assert len(workload) == 12 * 2
    assert workload.groupby("index").size().tolist() == [2] * 12


def test_parquet_beside_the_csv(local: Path) -> None:
    pytest.importorskip("pyarrow")
    df = pd.read_parquet(local / "table.parquet")
    assert len(df) == 12
    assert list(df.columns) == list(hs.load(local).columns)


def test_bad_experiments_name_line_and_column(tmp_path: Path) -> None:
    exp = tmp_path / "bad.toml"
    exp.write_text(TOML.replace('"balance.misfit"', '"balance.misfitt"'))
    with pytest.raises(hs.OptionsError, match=r"bad\.toml:9:1: grid: balance\.misfitt=true"):
        hs.sweep(exp, tmp_path / "out")
    with pytest.raises(hs.OptionsError, match=r"^<experiment>:\d+:\d+: unknown field `plaforms`"):
        hs.sweep({**EXPERIMENT, "plaforms": ["x"]}, tmp_path / "out")
    with pytest.raises(ValueError, match="backend="):
        hs.sweep(EXPERIMENT, tmp_path / "out", backend="dask")  # type: ignore[arg-type]
    hs.sweep(EXPERIMENT, tmp_path / "half", jobs=1)
    os.remove(next((tmp_path / "half" / "points").iterdir()))
    with pytest.raises(hs.OptionsError, match="missing: the sweep has not finished"):
        hs.load(tmp_path / "half")


@pytest.fixture(scope="session")
def ray_cluster() -> Iterator[None]:
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def test_ray_backend_gives_the_same_files(local: Path, tmp_path: Path, ray_cluster: None) -> None:
    out = tmp_path / "ray"
    df = hs.sweep(EXPERIMENT, out, backend="ray")
    assert files(out) == files(local)
    assert (out / "table.csv").read_bytes() == (local / "table.csv").read_bytes()
    pd.testing.assert_frame_equal(df, hs.load(local))
    # and it resumes like the local backend
    os.remove(out / "points" / sorted(files(out))[5])
    hs.sweep(EXPERIMENT, out, backend="ray")
    assert files(out) == files(local)


CLI = Path(__file__).resolve().parents[2] / "target" / "release" / "hetsched"


def test_cli_ray_backend_gives_the_same_files_and_reproduction(local: Path, tmp_path: Path) -> None:
    """``hetsched sweep --ray local`` and ``hetsched reproduce --dir D --ray local``: the
    CLI hands the missing points to this package's Ray runner (a new local instance)."""
    pytest.importorskip("ray")
    import subprocess
    import sys

    env = {**os.environ, "HETSCHED_PYTHON": sys.executable}
    exp = tmp_path / "exp.toml"
    exp.write_text(TOML, encoding="utf-8")
    out = tmp_path / "cli-ray"
    run = subprocess.run(
        [str(CLI), "sweep", str(exp), "-o", str(out), "--ray", "local", "--quiet"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    assert files(out) == files(local)
    assert (out / "table.csv").read_bytes() == (local / "table.csv").read_bytes()

    base = [str(CLI), "reproduce", "misfit", "--quick", "--runs", "2"]
    plain = tmp_path / "plain.json"
    subprocess.run([*base, "--json", str(plain)], capture_output=True, check=False)
    ray_json = tmp_path / "ray.json"
    run = subprocess.run(
        [*base, "--dir", str(tmp_path / "rep"), "--ray", "local", "--json", str(ray_json)],
        env=env,
        capture_output=True,
        text=True,
    )
    assert ray_json.read_bytes() == plain.read_bytes(), run.stderr
    assert len(list((tmp_path / "rep" / "points").iterdir())) == 8
    # without the package: one line naming what to install
    bad = {**os.environ, "HETSCHED_PYTHON": "/bin/false"}
    run = subprocess.run(
        [*base, "--dir", str(tmp_path / "rep2"), "--ray", "local"],
        env=bad,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 2
    assert run.stderr.count("\n") == 1 and run.stderr.startswith("hetsched: error: --ray: ")
    assert "pip install 'hetsched[ray]'" in run.stderr


def test_cli_sweep_on_the_ray_cluster(local: Path, tmp_path: Path, ray_cluster: None) -> None:
    """``hetsched sweep --ray ADDRESS`` runs the points on that cluster through this
    Python (``HETSCHED_PYTHON``): the same files as the local sweep, and the summary."""
    import subprocess
    import sys

    import ray

    if not CLI.is_file():
        pytest.skip(f"{CLI} not built (make build)")
    exp = tmp_path / "exp.toml"
    exp.write_text(TOML)
    out = tmp_path / "cli-ray"
    address = ray.get_runtime_context().gcs_address
    p = subprocess.run(
        [str(CLI), "sweep", str(exp), "-o", str(out), "--ray", address],
        env={**os.environ, "HETSCHED_PYTHON": sys.executable},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert p.returncode == 0, p.stderr
    assert files(out) == files(local)
    assert (out / "table.csv").read_bytes() == (local / "table.csv").read_bytes()
    assert "12 points (12 distinct), 12 run now" in p.stderr
    assert "balance.misfit" in p.stdout
