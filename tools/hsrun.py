"""What the issue-22 measurement tools share: the hetsched binary, their command line,
the platform's CPU capacities and a run with the noise model on, traced.

`tools/start-placements.py` and `tools/up-migration.py` import it (Python puts a script's
own folder first on its path).
"""

import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
HS = os.environ.get("HETSCHED", os.path.join(HERE, "..", "target", "release", "hetsched"))


def command_line(argv, doc, positional):
    """The positional arguments and the `--set k=v` assignments of `argv`; exits with the
    tool's usage (`doc`) when fewer than `positional` arguments are given, and with a
    one-line error when the hetsched binary is missing."""
    sets = [argv[i + 1] for i, a in enumerate(argv) if a == "--set" and i + 1 < len(argv)]
    args = [a for a in argv[1:] if a != "--set" and a not in sets]
    if len(args) < positional:
        sys.exit(doc)
    if not os.access(HS, os.X_OK):
        name = os.path.basename(argv[0]).removesuffix(".py")
        sys.exit(f"{name}: {HS} not found (cargo build --release -p hetsched-cli)")
    return args, sets


def capacities(platform):
    """CPU → capacity, from `hetsched platforms show PLATFORM`'s CPU table."""
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
    return caps


def noisy_trace(platform, workload, seed, sets, trace):
    """Runs `workload` on `platform` with the noise model on and `seed`, writing the
    ftrace text to `trace`."""
    cmd = [HS, "run", "-q", "--platform", platform, "--workload", workload]
    cmd += ["--seed", str(seed), "--noise", "--trace", trace]
    for s in sets:
        cmd += ["--set", s]
    subprocess.run(cmd, check=True)


def or_exit(measure):
    """`measure()`, or hetsched's exit status when a run failed (hetsched has printed
    its one-line error)."""
    try:
        return measure()
    except subprocess.CalledProcessError as e:
        sys.exit(e.returncode)
