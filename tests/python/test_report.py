"""hs.report (the Rust report through _core), the timeline frames, and hs.plot's figures."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

import hetsched as hs

ROOT = Path(__file__).resolve().parents[2]
CLI = ROOT / "target" / "release" / "hetsched"


@pytest.fixture(scope="module")
def run() -> hs.Result:
    return hs.run("hikey960", "demo", duration="1s", seed=1, timeline=True)


def test_timeline_frames(run: hs.Result) -> None:
    t = run.timeline
    assert t is not None and 512 <= t["buckets"] <= 1024
    cpus = run.timeline_cpus
    assert set(cpus.columns) >= {"time_s", "cpu", "pid", "comm", "busy", "freq_khz", "util"}
    assert len(cpus) == t["buckets"] * len(run.cpus)
    # nothing dropped by the downsampling: the busy time is the result's
    busy = cpus.groupby("cpu")["busy"].sum() * t["bucket_s"]
    assert busy.to_numpy() == pytest.approx(run.cpus["busy_s"].to_numpy(), rel=1e-6, abs=1e-9)
    tasks = run.timeline_tasks
    assert set(tasks["comm"]) >= set(run.tasks["comm"])
    assert tasks["util"].max() > 0
    assert len(run.energy) > 0 and len(run.overutilized) == t["buckets"]
    plain = hs.run("hikey960", "demo", duration="1s", seed=1)
    assert plain.timeline is None
    with pytest.raises(ValueError, match="timeline=True"):
        _ = plain.timeline_cpus


def test_report_is_the_cli_report(run: hs.Result, tmp_path: Path) -> None:
    html = hs.report(run, out=tmp_path / "r.html")
    assert (tmp_path / "r.html").read_text(encoding="utf-8") == html
    assert html == hs.report(run)  # deterministic
    assert html.count('<svg class="plot"') == 7
    assert "http://" not in html and "https://" not in html and "src=" not in html
    result = tmp_path / "result.json"
    result.write_text(run.to_json(), encoding="utf-8")
    from_file = hs.report(result)
    if not CLI.exists():
        pytest.skip(f"{CLI} is not built (make build)")
    cli_out = tmp_path / "cli.html"
    subprocess.run([str(CLI), "report", str(result), "-o", str(cli_out)], check=True)
    assert cli_out.read_text(encoding="utf-8") == from_file
    # `hetsched run --report` names the section as hs.report(Result) does
    cli_run = tmp_path / "run.html"
    subprocess.run(
        [str(CLI), "run", "hikey960", "demo", "--duration", "1s", "--seed", "1", "-q"]
        + ["--report", str(cli_run)],
        check=True,
    )
    assert cli_run.read_text(encoding="utf-8") == html


def test_report_errors_name_the_input(tmp_path: Path) -> None:
    bad = tmp_path / "x.json"
    bad.write_text('{"a": 1}', encoding="utf-8")
    with pytest.raises(hs.RunError, match="x.json: not a run's result"):
        hs.report(bad)
    with pytest.raises(hs.RunError, match="nothing to report"):
        hs.report()


def test_plots_return_figures(run: hs.Result, tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    for name in ["timeline", "frequency", "util", "residency", "energy", "overutilized"]:
        fig = getattr(hs.plot, name)(run)
        ax = fig.axes[0]
        assert ax.has_data(), name
        fig.savefig(tmp_path / f"{name}.svg")
        assert os.path.getsize(tmp_path / f"{name}.svg") > 1000


def test_sweep_plot_and_report(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    exp = {
        "platforms": ["hikey960"],
        "workloads": ["demo"],
        "seeds": [1, 2],
        "duration": "300ms",
        "grid": {"balance.misfit": [True, False]},
    }
    df = hs.sweep(exp, tmp_path / "s", jobs=2, progress=False)
    fig = hs.plot.sweep_metric(df, "balance.misfit", "energy")
    assert fig.axes[0].has_data()
    html = hs.report(tmp_path / "s")
    assert "energy against balance.misfit" in html
