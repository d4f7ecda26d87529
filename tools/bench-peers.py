#!/usr/bin/env python3
"""`make bench-peers`: hetsched beside SimSo on the `periodic` benchmark's 32-task set.

Creates .venv-peers (once) with SimSo from PyPI (simso==0.8.5, the last release, with
SimPy 2.3.1), takes the task set from `hetsched-bench workload periodic` (the rt-app JSON of
the `periodic` benchmark: 32 tasks, each a `run` and a relative `timer`), runs it

- in SimSo under its global EDF (`simso.schedulers.EDF`, the closest to a Linux scheduler
  that SimSo ships) on 8 processors with hikey960's capacities as speeds (462/1024 for the
  four Cortex-A53, 1 for the four Cortex-A73); a job's WCET is the task's `run` (µs at the
  biggest CPU's top frequency), its deadline the period;
- in hetsched (`hetsched run --platform hikey960 --workload periodic.json`, the defaults:
  EEVDF, schedutil, EAS, PELT, the load balancer; no trace),

each for the same simulated time (SECONDS, default 10), and prints the speed of each in
simulated seconds per wall second and per CPU second of its process (xRT), and the ratio of
the CPU times (the stable one on a shared machine). Times are the best of RUNS (default 3)
runs, each in its own process, start-up included.

Usage: python3 tools/bench-peers.py [SECONDS] [RUNS]
"""

import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".venv-peers"
SIMSO = "simso==0.8.5"
HETSCHED = ROOT / "target" / "release" / "hetsched"
BENCH = ROOT / "target" / "release" / "hetsched-bench"
# hikey960: CPUs 0-3 Cortex-A53 (capacity 462), CPUs 4-7 Cortex-A73 (1024); checked
# against `hetsched platforms show hikey960` below.
SPEEDS = [462 / 1024] * 4 + [1.0] * 4


def venv_python() -> Path:
    py = VENV / "bin" / "python"
    if not py.exists():
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    if subprocess.run([py, "-c", "import simso"], capture_output=True).returncode != 0:
        subprocess.run([py, "-m", "pip", "install", "--quiet", SIMSO], check=True)
    return py


def tasks_of(rtapp: dict) -> list:
    """(name, period_us, run_us) of every task of the benchmark's rt-app JSON."""
    out = []
    for name, t in rtapp["tasks"].items():
        (phase,) = t["phases"].values()
        out.append((name, phase["timer"]["period"], phase["run"]))
    return out


def simso_worker(tasks_path: str, seconds: float) -> None:
    """Runs in .venv-peers: one SimSo run; prints its job count on stderr."""
    from simso.configuration import Configuration
    from simso.core import Model

    tasks = json.loads(Path(tasks_path).read_text())
    c = Configuration()
    c.duration = int(seconds * 1000 * c.cycles_per_ms)
    for i, (name, period_us, run_us) in enumerate(tasks):
        c.add_task(
            name=name,
            identifier=i + 1,
            period=period_us / 1000,
            activation_date=0,
            wcet=run_us / 1000,
            deadline=period_us / 1000,
            abort_on_miss=False,
        )
    for i, s in enumerate(SPEEDS):
        c.add_processor(name=f"CPU{i}", identifier=i + 1, speed=s)
    c.scheduler_info.clas = "simso.schedulers.EDF"
    c.check_all()
    model = Model(c)
    model.run_model()  # simso.schedulers.EDF prints each preemption: stdout is /dev/null
    jobs = sum(len(t.jobs) for t in model.results.tasks)
    print(json.dumps({"jobs": jobs}), file=sys.stderr)


def timed(cmd: list) -> tuple:
    """Runs `cmd`; returns (wall s, CPU s of the child: user + system) and its stderr."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    r = subprocess.run(
        cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return wall, cpu, r.stderr


def best_of(cmd: list, runs: int) -> tuple:
    """Best wall and best CPU time of `runs` runs, and the last run's stderr."""
    walls, cpus = [], []
    for _ in range(runs):
        wall, cpu, err = timed(cmd)
        walls.append(wall)
        cpus.append(cpu)
    return min(walls), min(cpus), err


def main() -> None:
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 10.0
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    subprocess.run(
        [
            "cargo",
            "build",
            "--release",
            "--locked",
            "-q",
            "-p",
            "hetsched-cli",
            "-p",
            "hetsched-bench",
        ],
        cwd=ROOT,
        check=True,
    )
    show = subprocess.run(
        [HETSCHED, "platforms", "show", "hikey960"], capture_output=True, text=True, check=True
    ).stdout
    caps = [
        int(row.split()[5])
        for row in show.splitlines()
        if row.strip()[:1].isdigit() and "cortex" in row
    ]
    assert [c / 1024 for c in caps] == SPEEDS, caps
    py = venv_python()
    simso_version = subprocess.run(
        [py, "-c", "import importlib.metadata as m; print(m.version('simso'))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    with tempfile.TemporaryDirectory() as tmp:
        wl = Path(tmp) / "periodic.json"
        wl.write_text(
            subprocess.run(
                [BENCH, "workload", "periodic"], capture_output=True, text=True, check=True
            ).stdout
        )
        tasks = tasks_of(json.loads(wl.read_text()))
        assert len(tasks) == 32, len(tasks)
        tpath = Path(tmp) / "tasks.json"
        tpath.write_text(json.dumps(tasks))
        simso = [py, __file__, "--simso-worker", str(tpath), str(seconds)]
        simso_wall, simso_cpu, err = best_of(simso, runs)
        jobs = json.loads(err.strip().splitlines()[-1])["jobs"]
        hs_cmd = [
            HETSCHED,
            "run",
            "--platform",
            "hikey960",
            "--workload",
            str(wl),
            "--duration",
            f"{seconds}s",
            "--seed",
            "1",
            "--json",
            str(Path(tmp) / "r.json"),
        ]
        hs_wall, hs_cpu, _ = best_of(hs_cmd, runs)
        r = json.loads((Path(tmp) / "r.json").read_text())
    print(
        f"32-task `periodic` set on hikey960 (8 CPUs), {seconds:g} simulated s, best of {runs} runs"
    )
    print("(xRT: simulated s per wall s, and per CPU s of the process: user + system)")
    print()
    print("| simulator | model | wall s | xRT (wall) | CPU s | xRT (CPU) | ratio (CPU) |")
    print("|---|---|---|---|---|---|---|")
    for name, model, wall, cpu in [
        (
            f"SimSo {simso_version}",
            "global EDF (simso.schedulers.EDF), 8 processors at speeds 0.45 ×4 and 1 ×4, "
            f"no overheads; {jobs} jobs",
            simso_wall,
            simso_cpu,
        ),
        (
            f"hetsched {r['hetsched_version']}",
            "`hetsched run` defaults (EEVDF, PELT, load balancer, schedutil, EAS); "
            f"{r['engine']['events']} events, {r['engine']['context_switches']} context switches",
            hs_wall,
            hs_cpu,
        ),
    ]:
        ratio = simso_cpu / cpu
        print(
            f"| {name} | {model} | {wall:.3f} | {seconds / wall:.1f} | {cpu:.3f} "
            f"| {seconds / cpu:.1f} | {ratio:.0f}× |"
        )


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--simso-worker":
        simso_worker(sys.argv[2], float(sys.argv[3]))
    else:
        main()
