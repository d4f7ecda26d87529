#!/usr/bin/env python3
"""Where rt-app's threads start, over noise seeds (issue 22).

Runs one workload on one platform for seeds 0..N-1 with the noise model on and prints,
for the workload's first W threads (pids 1001..1000+W), the distribution of the CPUs
their forks chose (`sched_wakeup_new` target_cpu) and of the CPUs where each first
started a loop (the first `rtapp_loop` marker: the workload must write `"ftrace":
"loop"`), and how often the first thread landed on a CPU of the lowest capacity.

    python3 tools/start-placements.py PLATFORM WORKLOAD W [N] [--set k=v ...]

Example (issue 22's board): crates/hetsched/tests/data/qemu_2b2l.yaml, 25 seeds.
"""

import collections
import os
import re
import sys
import tempfile

from hsrun import capacities, command_line, noisy_trace, or_exit


def placements(platform, workload, nthreads, seed, sets):
    with tempfile.TemporaryDirectory() as d:
        trace = os.path.join(d, "t.txt")
        noisy_trace(platform, workload, seed, sets, trace)
        fork, loop = {}, {}
        with open(trace) as f:
            for line in f:
                if "sched_wakeup_new" in line:
                    m = re.search(r" pid=(\d+) .*target_cpu=(\d+)", line)
                    pid = int(m.group(1))
                    if 1000 < pid <= 1000 + nthreads:
                        fork.setdefault(pid, int(m.group(2)))
                elif "rtapp_loop" in line:
                    m = re.match(r"\s*.+-(\d+)\s+\[(\d+)\]", line)
                    loop.setdefault(int(m.group(1)), int(m.group(2)))
    pids = range(1001, 1001 + nthreads)
    return tuple(fork.get(p, -1) for p in pids), tuple(loop.get(p, -1) for p in pids)


def lowest_capacity_cpus(platform):
    caps = capacities(platform)
    low = min(caps.values()) if caps else None
    return {c for c, v in caps.items() if v == low}


def main():
    args, sets = command_line(sys.argv, __doc__, 3)
    platform, workload, nthreads = args[0], args[1], int(args[2])
    n = int(args[3]) if len(args) > 3 else 25
    runs = or_exit(lambda: [placements(platform, workload, nthreads, s, sets) for s in range(n)])
    low = lowest_capacity_cpus(platform)
    print(f"{workload} on {platform}, seeds 0-{n - 1}, noise on")
    print("fork CPUs (thread 1, 2, ...):")
    for k, v in collections.Counter(r[0] for r in runs).most_common():
        print(f"  {k}: {v}")
    print("first-loop CPUs:")
    for k, v in collections.Counter(r[1] for r in runs).most_common():
        print(f"  {k}: {v}")
    if low:
        on_low = sum(1 for r in runs if r[0][0] in low)
        print(f"first thread on a CPU of the lowest capacity {sorted(low)}: {on_low} of {n}")


if __name__ == "__main__":
    main()
