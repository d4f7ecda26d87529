#!/usr/bin/env python3
"""Time to up-migrate from a pinned start, over noise seeds (issue 22).

Runs a workload whose task `hog` first runs pinned (its phase 0) and is then allowed
everywhere (phase 1), for seeds 0..N-1 with the noise model on, and prints how long after
its phase 1 began (`rtapp_loop: event=start ... phase=1`) it first migrated to a CPU of
the highest capacity (`sched_migrate_task` of `hog`).

    python3 tools/up-migration.py PLATFORM WORKLOAD [N] [--set k=v ...]

Example: crates/hetsched/tests/data/qemu_2b2l.yaml
crates/hetsched/tests/data/issue22-pinned-start.json 10 --set cpufreq.governor=performance
"""

import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
HS = os.environ.get("HETSCHED", os.path.join(HERE, "..", "target", "release", "hetsched"))
LINE = re.compile(r"\s*.+-\d+\s+\[\d+\]\s+([\d.]+):")


def biggest_cpus(platform):
    out = subprocess.run(
        [HS, "platforms", "show", platform], check=True, capture_output=True, text=True
    ).stdout
    caps, table = {}, False
    for line in out.splitlines():
        cols = line.split()
        if cols[:1] == ["CPU"] and "capacity" in cols:
            table = True
            continue
        if table:
            if not cols or not cols[0].isdigit():
                break
            caps[int(cols[0])] = int(cols[-2])
    top = max(caps.values())
    return {c for c, v in caps.items() if v == top}


def up_after_ms(platform, workload, seed, sets, big):
    with tempfile.TemporaryDirectory() as d:
        trace = os.path.join(d, "t.txt")
        cmd = [HS, "run", "-q", "--platform", platform, "--workload", workload]
        cmd += ["--seed", str(seed), "--noise", "--trace", trace]
        for s in sets:
            cmd += ["--set", s]
        subprocess.run(cmd, check=True)
        free = None
        with open(trace) as f:
            for line in f:
                m = LINE.match(line)
                if not m:
                    continue
                ts = float(m.group(1))
                if free is None and "rtapp_loop: event=start" in line and "phase=1" in line:
                    free = ts
                elif free is not None and "sched_migrate_task" in line and "comm=hog-" in line:
                    if int(re.search(r"dest_cpu=(\d+)", line).group(1)) in big:
                        return (ts - free) * 1000
    return None


def main():
    sets = [sys.argv[i + 1] for i, a in enumerate(sys.argv) if a == "--set"]
    args = [a for a in sys.argv[1:] if a != "--set" and a not in sets]
    if len(args) < 2:
        sys.exit(__doc__)
    platform, workload = args[0], args[1]
    n = int(args[2]) if len(args) > 2 else 10
    if not os.access(HS, os.X_OK):
        sys.exit(f"up-migration: {HS} not found (cargo build --release -p hetsched-cli)")
    try:
        big = biggest_cpus(platform)
        times = [up_after_ms(platform, workload, s, sets, big) for s in range(n)]
    except subprocess.CalledProcessError as e:
        sys.exit(e.returncode)  # hetsched has printed its one-line error
    done = sorted(t for t in times if t is not None)
    print(f"{workload} on {platform}, seeds 0-{n - 1}, noise on")
    print("up-migration after the unpinned phase began (ms):", [round(t, 2) for t in done])
    print(f"not up-migrated: {times.count(None)} of {n}")


if __name__ == "__main__":
    main()
