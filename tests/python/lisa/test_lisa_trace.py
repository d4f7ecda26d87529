"""Load a hetsched ftrace text trace with LISA 3.1.0; check what LISA derives from it.

The trace comes from ``$HETSCHED_TRACE`` when set, otherwise from a real run::

    target/release/hetsched run --platform hikey960 --workload workload.json \\
        --duration 2s --trace TMP/trace.txt

For development without the CLI, the sink's own example writes a synthetic trace::

    cargo run -p hetsched-trace --example synthetic_trace -- /tmp/synth.txt
    HETSCHED_TRACE=/tmp/synth.txt .venv-lisa/bin/python -m pytest tests/python/lisa

The test parses the text itself too (independently of LISA) and compares LISA's
dataframes with what the file says, so it checks structure, not scheduling results.

Run it with the venv made by ``tools/lisa-venv.sh`` (LISA 3.1.0, numpy<2, pandas 2.0.3).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import pytest

lisa_trace = pytest.importorskip(
    "lisa.trace", reason="LISA 3.1.0 not installed (tools/lisa-venv.sh)"
)
PlatformInfo = pytest.importorskip("lisa.platforms.platinfo").PlatformInfo

REPO = Path(__file__).resolve().parents[3]
HERE = Path(__file__).resolve().parent
WORKLOAD = HERE / "workload.json"
CLI = REPO / "target" / "release" / "hetsched"

# LISA 3.1.0's header regex (TxtEventParser._get_header_regex), any EVENT.
LISA_HEADER = re.compile(
    r"^.*:?\s+(?P<comm>.+)-(?P<pid>\d+)\s+\[(?P<cpu>\d+)\]\s+(?P<ts>\d+\.\d+):\s+(?P<event>\w+):"
)
# Our own, stricter reading: trace-cmd's `%16s-%-5d [%03d] %5lu.%06lu: name: `.
LINE = re.compile(
    r"^ *(?P<comm>\S+)-(?P<pid>\d+) +\[(?P<cpu>\d{3})\] +(?P<ts>\d+\.\d{6}): "
    r"(?P<event>\w+): +(?P<body>.*)$"
)
PRINT_BODY = re.compile(r"^tracing_mark_write: (?P<marker>rtapp_\w+): (?P<fields>.*)$")
# prev_state → LISA's TaskState character (include/linux/sched.h values).
STATE_CHAR = {0: "R", 1: "S", 2: "D", 16: "X", 32: "Z", 64: "P", 128: "I"}
META_EVENTS = ["rtapp_main", "rtapp_task", "rtapp_loop", "rtapp_event", "rtapp_stats"]


@dataclass
class Line:
    """One event line as the test reads it."""

    ts: float
    cpu: int
    comm: str
    pid: int
    event: str
    fields: dict[str, str] = field(default_factory=dict)


@dataclass
class Parsed:
    """The whole trace file, read without LISA."""

    header: list[str]
    lines: list[Line]

    def of(self, event: str) -> list[Line]:
        return [line for line in self.lines if line.event == event]


def parse_fields(text: str) -> dict[str, str]:
    fields = {}
    for kv in text.split():
        key, sep, value = kv.partition("=")
        assert sep and key and value, f"not a name=value field: {kv!r} in {text!r}"
        fields[key] = value
    return fields


def parse_text(path: Path) -> Parsed:
    header, lines = [], []
    with path.open() as f:
        for raw in f:
            raw = raw.rstrip("\n")
            m = LINE.match(raw)
            if m is None:
                assert not lines, f"non-event line after the first event: {raw!r}"
                header.append(raw)
                continue
            event, body = m["event"], m["body"]
            if event == "print":
                pm = PRINT_BODY.match(body)
                assert pm, f"print line not in rt-app's trace_marker form: {raw!r}"
                event, body = pm["marker"], pm["fields"]
            lines.append(
                Line(
                    float(m["ts"]),
                    int(m["cpu"]),
                    m["comm"],
                    int(m["pid"]),
                    event,
                    parse_fields(body),
                )
            )
    return Parsed(header, lines)


def workload_task_names() -> list[str]:
    return list(json.loads(WORKLOAD.read_text())["tasks"])


@pytest.fixture(scope="module")
def trace_path(tmp_path_factory) -> Path:
    env = os.environ.get("HETSCHED_TRACE")
    if env:
        path = Path(env)
        assert path.is_file(), f"HETSCHED_TRACE={env} does not exist"
        return path
    if not CLI.is_file():
        pytest.skip(f"{CLI} not built and HETSCHED_TRACE not set (see this module's docstring)")
    path = tmp_path_factory.mktemp("hetsched") / "trace.txt"
    cmd = [
        str(CLI),
        "run",
        "--platform",
        "hikey960",
        "--workload",
        str(WORKLOAD),
        "--duration",
        "2s",
    ]
    subprocess.run([*cmd, "--trace", str(path)], check=True, cwd=REPO, timeout=600)
    return path


@pytest.fixture(scope="module")
def parsed(trace_path) -> Parsed:
    return parse_text(trace_path)


@pytest.fixture(scope="module")
def nr_cpus(parsed) -> int:
    for line in parsed.header:
        if line.startswith("# cpus="):
            return int(line[len("# cpus=") :])
    return 1 + max(
        max(line.cpu for line in parsed.lines),
        *(int(x.fields.get("cpu_id", 0)) for x in parsed.lines),
    )


@pytest.fixture(scope="module")
def trace(trace_path, nr_cpus):
    # A minimal platform description built in code (LISA's own tests load a YAML one);
    # nothing checked here needs capacities or frequencies.
    plat_info = PlatformInfo({"cpus-count": nr_cpus}, src="hetsched-test")
    return lisa_trace.Trace(
        str(trace_path), plat_info, parser=lisa_trace.TxtTraceParser.from_txt_file
    )


@pytest.fixture(scope="module")
def renamed(parsed) -> dict[str, int]:
    """comm → pid of every task the trace names with task_rename."""
    return {x.fields["newcomm"]: int(x.fields["pid"]) for x in parsed.of("task_rename")}


def test_header_and_every_line_fit_lisas_regex(trace_path, parsed):
    # ftrace's own header (Perfetto's importer looks for "# tracer" in the first 64
    # bytes); every header line is a comment.
    assert parsed.header[:3] == ["# tracer: nop", "#", f"# cpus={parsed.header[2][7:]}"]
    assert all(line.startswith("#") for line in parsed.header), parsed.header
    assert parsed.lines, "no events"
    text = trace_path.read_text().splitlines()[len(parsed.header) :]
    for raw, line in zip(text, parsed.lines, strict=True):
        m = LISA_HEADER.match(raw)
        assert m, raw
        assert (m["comm"].strip(), int(m["pid"]), int(m["cpu"])) == (
            line.comm,
            line.pid,
            line.cpu,
        )
        # No irq-flags column ("d..2.") between "]" and the timestamp.
        assert re.search(r"\] +\d+\.\d{6}: ", raw), raw
    times = [line.ts for line in parsed.lines]
    assert times == sorted(times), "timestamps go back"


def test_lisa_sees_the_same_events(trace, parsed):
    in_text = {line.event for line in parsed.lines} - set(META_EVENTS)
    if any(line.event in META_EVENTS for line in parsed.lines):
        in_text.add("print")
    assert in_text <= set(trace.available_events)
    for needed in ("sched_switch", "sched_wakeup", "task_rename"):
        assert needed in in_text, f"{needed} missing: LISA's EAS tests need it"


def test_task_names(trace, parsed, renamed):
    assert renamed, "no task_rename: LISA cannot select tasks by name"
    for comm, pid in renamed.items():
        assert trace.get_task_name_pids(comm) == [pid]
        assert comm in trace.get_task_pid_names(pid)
    if "HETSCHED_TRACE" not in os.environ:
        # A real run of workload.json: each rt-app task shows up as `name` or `name-N`.
        for name in workload_task_names():
            assert any(re.fullmatch(rf"{re.escape(name)}(-\d+)?", c) for c in renamed), (
                name,
                list(renamed),
            )


def expected_states(parsed: Parsed, comm: str, pid: int) -> list[tuple[float, str]]:
    """(time, state) rows LISA's df_task_states should give for the task, from the text.

    W at each wakeup, A when switched in, and the prev_state character when switched out
    (R = preempted, S = sleeping, X = dead); only rows that name the task by `comm`, as
    LISA filters on (pid, comm).
    """
    rows = []
    for line in parsed.lines:
        f = line.fields
        if line.event in ("sched_wakeup", "sched_wakeup_new") and (
            int(f["pid"]),
            f["comm"],
        ) == (pid, comm):
            rows.append((line.ts, "W"))
        elif line.event == "sched_switch":
            if (int(f["prev_pid"]), f["prev_comm"]) == (pid, comm):
                rows.append((line.ts, STATE_CHAR.get(int(f["prev_state"]), f["prev_state"])))
            if (int(f["next_pid"]), f["next_comm"]) == (pid, comm):
                rows.append((line.ts, "A"))
    return rows


def test_task_states_match_the_trace(trace, parsed, renamed):
    saw = Counter()
    for comm, pid in renamed.items():
        expected = expected_states(parsed, comm, pid)
        assert expected, f"{comm} never runs"
        df = trace.ana.tasks.df_task_states(comm, stringify=True)
        got = list(zip(df.index, df["curr_state_str"], strict=True))
        assert [s for _, s in got] == [s for _, s in expected], comm
        assert [t for t, _ in got] == pytest.approx([t for t, _ in expected], abs=1e-9), comm
        saw.update(s for _, s in got)
        # Preempted (prev_state=0) shows as R, and only that.
        n_preempt = sum(
            1
            for x in parsed.of("sched_switch")
            if (int(x.fields["prev_pid"]), x.fields["prev_comm"]) == (pid, comm)
            and x.fields["prev_state"] == "0"
        )
        assert (df["curr_state_str"] == "R").sum() == n_preempt
    assert saw["S"] > 0, "no task ever sleeps"
    assert saw["A"] > 0 and saw["W"] > 0


def test_preemption_shows_as_runnable(trace, parsed, renamed):
    preempted = [
        x
        for x in parsed.of("sched_switch")
        if x.fields["prev_state"] == "0"
        and int(x.fields["prev_pid"]) != 0
        and x.fields["prev_comm"] in renamed
    ]
    if not preempted:
        pytest.skip("no task is preempted in this trace")
    x = preempted[0]
    df = trace.ana.tasks.df_task_states(x.fields["prev_comm"], stringify=True)
    row = df[df.index.to_series().sub(x.ts).abs() < 1e-9]
    assert list(row["curr_state_str"]) == ["R"]
    assert list(row["next_state_str"]) == ["A"]


def assert_same(lisa_value, text_value: str, what: str):
    if re.fullmatch(r"-?\d+", text_value):
        assert int(lisa_value) == int(text_value), what
    elif re.fullmatch(r"0x[0-9a-f]+", text_value) and not isinstance(lisa_value, str):
        # LISA 3.1.0 turns sched_overutilized's `span=0xff` into the integer 255.
        assert int(lisa_value) == int(text_value, 16), what
    else:
        assert str(lisa_value) == text_value, what


@pytest.mark.parametrize(
    "event",
    [
        "sched_switch",
        "sched_waking",
        "sched_wakeup",
        "sched_wakeup_new",
        "sched_migrate_task",
        "sched_process_exit",
        "task_rename",
        "cpu_frequency",
        "cpu_idle",
        "sched_pelt_se",
        "sched_pelt_cfs",
        "sched_util_est_se",
        "sched_util_est_cfs",
        "sched_cpu_capacity",
        "sched_overutilized",
    ],
)
def test_event_values_read_back(trace, parsed, event):
    """Every field of every line reads back in LISA's dataframe as written."""
    lines = parsed.of(event)
    if not lines:
        pytest.skip(f"no {event} in this trace")
    df = trace.df_event(event)
    assert len(df) == len(lines)
    assert list(df.index) == pytest.approx([x.ts for x in lines], abs=1e-9)
    for name in lines[0].fields:
        if name == "oom_score_adj":  # not declared by LISA; consumed by its catch-all
            continue
        assert name in df.columns, (event, name)
        for lisa_value, x in zip(df[name], lines, strict=True):
            assert_same(lisa_value, x.fields[name], f"{event}.{name} at {x.ts}")
    assert list(df["__cpu"]) == [x.cpu for x in lines]
    assert list(df["__pid"]) == [x.pid for x in lines]


def test_pelt_se_util_reads_back(trace, parsed):
    lines = parsed.of("sched_pelt_se")
    if not lines:
        pytest.skip("no sched_pelt_se in this trace")
    df = trace.df_event("sched_pelt_se")
    assert list(df["util"]) == [int(x.fields["util"]) for x in lines]
    assert set(df["path"]) == {"(null)"}
    assert (df["util"] <= 1024).all()
    # Per task, as the load-tracking tests select it.
    for pid in {int(x.fields["pid"]) for x in lines}:
        want = [int(x.fields["util"]) for x in lines if int(x.fields["pid"]) == pid]
        assert list(df[df["pid"] == pid]["util"]) == want


def test_cpu_frequency_and_idle_load(trace, parsed, nr_cpus):
    freq = parsed.of("cpu_frequency")
    idle = parsed.of("cpu_idle")
    if not freq and not idle:
        pytest.skip("no power events in this trace")
    if freq:
        df = trace.df_event("cpu_frequency")
        last = {}
        for x in freq:
            last[int(x.fields["cpu_id"])] = int(x.fields["state"])
        for cpu, khz in last.items():
            assert df[df["cpu_id"] == cpu]["state"].iloc[-1] == khz
    if idle:
        df = trace.df_event("cpu_idle")
        exits = sum(1 for x in idle if x.fields["state"] == "4294967295")
        assert (df["state"] == 4294967295).sum() == exits
        # LISA's idle analysis reads 4294967295 as -1 (exit).
        cpu = int(idle[0].fields["cpu_id"])
        per_cpu = trace.ana.idle.df_cpu_idle(cpu)
        want = [
            -1 if x.fields["state"] == "4294967295" else int(x.fields["state"])
            for x in idle
            if int(x.fields["cpu_id"]) == cpu
        ]
        assert list(per_cpu["state"]) == want


@pytest.mark.parametrize("marker", META_EVENTS)
def test_rtapp_meta_events(trace, parsed, marker):
    lines = parsed.of(marker)
    if not lines:
        if marker in ("rtapp_loop", "rtapp_stats"):
            pytest.fail(f"{marker} missing: LISA's EAS tests need userspace@{marker}")
        pytest.skip(f"no {marker} in this trace")
    df = trace.df_event(f"userspace@{marker}")
    assert len(df) == len(lines)
    assert list(df.index) == pytest.approx([x.ts for x in lines], abs=1e-9)
    assert list(df["__pid"]) == [x.pid for x in lines]
    for name in lines[0].fields:
        assert name in df.columns, (marker, name)
        for lisa_value, x in zip(df[name], lines, strict=True):
            assert_same(lisa_value, x.fields[name], f"{marker}.{name} at {x.ts}")


def test_rtapp_loops_pair_up(parsed):
    """Each rtapp_loop start has its end, per task, in order.

    LISA's rt-app analysis pairs them to compute phases and activations.
    """
    open_loops = defaultdict(list)
    for x in parsed.of("rtapp_loop"):
        key = (
            x.pid,
            x.fields["thread_loop"],
            x.fields["phase"],
            x.fields["phase_loop"],
        )
        if x.fields["event"] == "start":
            assert not open_loops[x.pid], f"loop started twice without an end: {key}"
            open_loops[x.pid].append(key)
        else:
            assert open_loops[x.pid] == [key], f"end without its start: {key}"
            open_loops[x.pid].clear()
