#!/usr/bin/env python3
"""The CPU time (user + system) of commands run side by side, best of N.

    python3 tools/cpu-time.py --runs 7 \\
        "target/bench-lto/hetsched-bench periodic" \\
        "target/pgo/use/bench-lto/hetsched-bench periodic"

Runs the commands in turn, N rounds, each in its own process with its output discarded,
and prints each command's smallest CPU time. CPU time moves less than wall time with the
other jobs of a shared machine (it still rises when they contend for caches and memory),
and alternating the commands exposes each to the same load.
"""

import argparse
import resource
import shlex
import subprocess


def cpu_of(cmd: list[str]) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5, help="rounds (default 5)")
    ap.add_argument("commands", nargs="+", help="each a whole command line")
    args = ap.parse_args()
    cmds = [shlex.split(c) for c in args.commands]
    best = [float("inf")] * len(cmds)
    for _ in range(args.runs):
        for i, cmd in enumerate(cmds):
            best[i] = min(best[i], cpu_of(cmd))
    first = best[0]
    for c, t in zip(args.commands, best):
        print(f"{t:.3f} s  ({(t / first - 1) * 100:+.0f} %)  {c}")


if __name__ == "__main__":
    main()
