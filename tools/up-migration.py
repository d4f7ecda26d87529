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
import sys
import tempfile

from hsrun import capacities, command_line, noisy_trace, or_exit

LINE = re.compile(r"\s*.+-\d+\s+\[\d+\]\s+([\d.]+):")


def biggest_cpus(platform):
    caps = capacities(platform)
    top = max(caps.values())
    return {c for c, v in caps.items() if v == top}


def up_after_ms(platform, workload, seed, sets, big):
    with tempfile.TemporaryDirectory() as d:
        trace = os.path.join(d, "t.txt")
        noisy_trace(platform, workload, seed, sets, trace)
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
    args, sets = command_line(sys.argv, __doc__, 2)
    platform, workload = args[0], args[1]
    n = int(args[2]) if len(args) > 2 else 10

    def measure():
        big = biggest_cpus(platform)
        return [up_after_ms(platform, workload, s, sets, big) for s in range(n)]

    times = or_exit(measure)
    done = sorted(t for t in times if t is not None)
    print(f"{workload} on {platform}, seeds 0-{n - 1}, noise on")
    print("up-migration after the unpinned phase began (ms):", [round(t, 2) for t in done])
    print(f"not up-migrated: {times.count(None)} of {n}")


if __name__ == "__main__":
    main()
