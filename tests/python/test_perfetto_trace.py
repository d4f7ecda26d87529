"""One run, two formats, the same table (a Perfetto-style diff test).

The same run is written once as ftrace text and once as a Perfetto protobuf trace
(``.pftrace``), in both Perfetto layouts: v59's (events Perfetto has no message for under
field numbers of their own, described by each bundle's ``generic_event_descriptors``) and
the legacy one (``GenericFtraceEvent``). The protobuf is decoded with Perfetto's own
classes (PyPI ``perfetto``, ``perfetto_trace_pb2``, offline; the dense events through the
descriptors the file carries, read as ``DescriptorProto`` and their messages built with
protobuf's ``message_factory``) and turned into the same table as the text: per CPU, in
order, (timestamp in µs, pid of the current task, event, fields). The two tables must be
equal row for row. The process tree must name every task the text renames, and the text
must start the way Perfetto's importer recognises ftrace text.

With ``HETSCHED_TRACE_PROCESSOR=/path/to/trace_processor_shell`` the two files are also
loaded into Perfetto's trace processor and its ``sched`` table compared; without it that
test is skipped (the ``perfetto`` package would download the binary, which cannot work
offline).
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter, defaultdict
from pathlib import Path

import pytest

import hetsched as hs

pb2 = pytest.importorskip(
    "perfetto.protos.perfetto.trace.perfetto_trace_pb2",
    reason="PyPI perfetto not installed (make python)",
)
# protobuf comes with perfetto.
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory  # noqa: E402
from google.protobuf.unknown_fields import UnknownFieldSet  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
LISA_WORKLOAD = ROOT / "tests/python/lisa/workload.json"

# Our text line: trace-cmd's `%16s-%-5d [%03d] %5lu.%06lu: name: fields`.
LINE = re.compile(
    r"^\s*(?P<comm>.+?)-(?P<pid>\d+)\s+\[(?P<cpu>\d+)\]\s+(?P<ts>\d+\.\d{6}):"
    r"\s+(?P<ev>\w+):\s+(?P<rest>.*)$"
)
# Perfetto's systrace tokenizer (src/trace_processor/importers/systrace/
# systrace_line_tokenizer.cc): the irq-flags column may be absent.
PERFETTO_SYSTRACE_LINE = re.compile(
    r"-(\d+)\s+\(?\s*(\d+|-+)?\)?\s?\[(\d+)\]\s*[a-zA-Z0-9.]{0,4}\s+(\d+\.\d+):\s+(\S+):"
)
# Events whose TP_printk is not `name=value` pairs: their fields, by name.
FREE_FORM = {
    "cpufreq_sched_request_opp": re.compile(
        r"^cpu (?P<cpu>\d+) cap change, cluster cap request (?P<capacity>\d+) => "
        r"OPP (?P<freq_new>\d+) \(cur (?P<requested_freq>\d+)\)$"
    ),
    "cpufreq_sched_throttled": re.compile(r"^throttled - (?P<rem>-?\d+) usec remaining$"),
    "cpufreq_interactive_boost": re.compile(r"^(?P<s>\S+)$"),
    "cpufreq_interactive_unboost": re.compile(r"^(?P<s>\S+)$"),
}

# The runs: the LISA test's rt-app workload (markers, PELT, util_est, schedutil), and
# the interactive governor with misfit on a big.LITTLE board (governor events, generic).
CASES = {
    "hikey960-rtapp": ("hikey960", str(LISA_WORKLOAD), "1s", {}),
    "juno-interactive": (
        "juno_r0",
        "gen:sysbench-cpu:threads=4,requests=500",
        "1s",
        {"cpufreq.governor": "interactive"},
    ),
    # HMP's events (sched_hmp_migrate, sched_task_runnable_ratio) and the schedfreq
    # series' (cpufreq_sched_*).
    "tc2-hmp": (
        "tc2",
        "demo",
        "1s",
        {"kernel": "v4.4", "hmp.enabled": "true", "cpufreq.governor": "interactive"},
    ),
    "rk3399-sched": ("rk3399", "gen:periodic:duty=40,tasks=6", "1s", {"cpufreq.governor": "sched"}),
}


def value(v: str) -> int | str:
    return int(v) if re.fullmatch(r"-?\d+", v) else v


def text_table(path: Path) -> dict[int, list[tuple]]:
    rows: dict[int, list[tuple]] = defaultdict(list)
    for raw in path.read_text().splitlines():
        if raw.startswith("#"):
            continue
        m = LINE.match(raw)
        assert m, f"not an event line: {raw!r}"
        ev, rest = m["ev"], m["rest"]
        secs, micros = m["ts"].split(".")
        us = int(secs) * 1_000_000 + int(micros)
        if ev == "print":
            ip, _, buf = rest.partition(": ")
            assert ip == "tracing_mark_write", raw
            fields = {"buf": buf + "\n"}
        elif ev in FREE_FORM:
            fm = FREE_FORM[ev].match(rest)
            assert fm, raw
            fields = {k: value(v) for k, v in fm.groupdict().items()}
        else:
            fields = {}
            for kv in rest.split():
                k, sep, v = kv.partition("=")
                assert sep, raw
                fields[k] = value(v)
        rows[int(m["cpu"])].append((us, int(m["pid"]), ev, fields))
    return dict(rows)


def decode(path: Path):
    trace = pb2.Trace()
    trace.ParseFromString(path.read_bytes())
    return trace


class DenseEvents:
    """The events a trace describes in its bundles' ``generic_event_descriptors``: each
    descriptor's ``DescriptorProto`` made a message class, by ``FtraceEvent`` field."""

    def __init__(self) -> None:
        self.pool = descriptor_pool.DescriptorPool()
        self.classes: dict[int, tuple[str, type]] = {}
        self.groups: dict[int, str] = {}
        self.seen: dict[int, bytes] = {}

    def add(self, d) -> None:
        if d.field_id in self.seen:
            # The same event, described again in a later bundle: the same description.
            assert self.seen[d.field_id] == d.SerializeToString()
            return
        self.seen[d.field_id] = d.SerializeToString()
        proto = descriptor_pb2.DescriptorProto.FromString(d.event_descriptor)
        f = descriptor_pb2.FileDescriptorProto(
            name=f"dense_{d.field_id}.proto", package=f"dense{d.field_id}", syntax="proto2"
        )
        f.message_type.add().CopyFrom(proto)
        self.pool.Add(f)
        desc = self.pool.FindMessageTypeByName(f"dense{d.field_id}.{proto.name}")
        self.classes[d.field_id] = (proto.name, message_factory.GetMessageClass(desc))
        self.groups[d.field_id] = d.group_name

    def decode(self, e) -> tuple[str, dict]:
        """The name and fields of the dense event in ``FtraceEvent`` ``e``."""
        unknown = [f for f in UnknownFieldSet(e)]
        assert len(unknown) == 1, unknown
        (u,) = unknown
        assert u.field_number >= 65536 and u.wire_type == 2
        name, cls = self.classes[u.field_number]
        msg = cls.FromString(u.data)
        # Every field is written, zero values too (traced_probes' ParseField()).
        assert [fd.number for fd, _ in msg.ListFields()] == [
            fd.number for fd in cls.DESCRIPTOR.fields
        ], name
        return name, {fd.name: v for fd, v in msg.ListFields()}


def proto_table(trace) -> dict[int, list[tuple]]:
    rows: dict[int, list[tuple]] = defaultdict(list)
    dense = DenseEvents()
    for packet in trace.packet:
        if not packet.HasField("ftrace_events"):
            continue
        bundle = packet.ftrace_events
        for d in bundle.generic_event_descriptors:
            dense.add(d)
        for e in bundle.event:
            kind = e.WhichOneof("event")
            if kind is None:
                name, fields = dense.decode(e)
                rows[bundle.cpu].append((e.timestamp // 1000, e.pid, name, fields))
                continue
            msg = getattr(e, kind)
            if kind == "generic":
                name = msg.event_name
                fields = {f.name: getattr(f, f.WhichOneof("value")) for f in msg.field}
            else:
                name = kind
                fields = {fd.name: v for fd, v in msg.ListFields()}
            rows[bundle.cpu].append((e.timestamp // 1000, e.pid, name, fields))
    return dict(rows)


# The two Perfetto layouts: v59's (the default) and the legacy GenericFtraceEvent one.
LAYOUTS = ("perfetto", "perfetto-legacy")


@pytest.fixture(scope="module", params=[(c, f) for c in sorted(CASES) for f in LAYOUTS])
def run_pair(request, tmp_path_factory):
    case, layout = request.param
    platform, workload, duration, sets = CASES[case]
    d = tmp_path_factory.mktemp(f"{case}-{layout}")
    txt, pf = d / "trace.txt", d / "trace.pftrace"
    hs.run(platform, workload, set=sets, seed=1, duration=duration, trace=txt)
    hs.run(platform, workload, set=sets, seed=1, duration=duration, trace=pf, trace_format=layout)
    return txt, pf


def test_same_table_in_both_formats(run_pair):
    txt, pf = run_pair
    text, proto = text_table(txt), proto_table(decode(pf))
    assert sorted(text) == sorted(proto)
    for cpu in text:
        assert len(text[cpu]) == len(proto[cpu]), f"CPU {cpu}"
        for i, (a, b) in enumerate(zip(text[cpu], proto[cpu])):
            assert a == b, f"CPU {cpu}, event {i}: text {a} != perfetto {b}"
    names = Counter(row[2] for rows in text.values() for row in rows)
    for needed in (
        "sched_switch",
        "sched_waking",
        "sched_wakeup",
        "sched_wakeup_new",
        "task_rename",
    ):
        assert names[needed] > 0, names
    assert sum(names.values()) > 1000, names


def test_typed_and_generic_events(run_pair):
    """Scheduler events are Perfetto's typed messages; the others generic, named: as
    ``GenericFtraceEvent`` in the legacy layout, under descriptors of their own in v59's,
    each bundle describing the events it holds and no others."""
    _, pf = run_pair
    legacy = "perfetto-legacy" in pf.parent.name
    kinds, generic = Counter(), Counter()
    dense = DenseEvents()
    for packet in decode(pf).packet:
        bundle = packet.ftrace_events
        described = {d.field_id for d in bundle.generic_event_descriptors}
        for d in bundle.generic_event_descriptors:
            dense.add(d)
        used = set()
        for e in bundle.event:
            kind = e.WhichOneof("event")
            if kind is None:
                assert not legacy
                name, _ = dense.decode(e)
                (u,) = list(UnknownFieldSet(e))
                used.add(u.field_number)
                kind = "generic"
                generic[name] += 1
            elif kind == "generic":
                assert legacy, "a GenericFtraceEvent in the dense layout"
                generic[e.generic.event_name] += 1
            kinds[kind] += 1
        assert used == described, (used, described)
    if not legacy:
        assert dense.groups and set(dense.groups.values()) <= {
            "sched",
            "cpufreq_interactive",
            "cpufreq_sched",
        }
    assert kinds["sched_switch"] and kinds["sched_waking"] and kinds["sched_wakeup"], kinds
    assert not set(generic) & {
        "sched_switch",
        "sched_waking",
        "sched_wakeup",
        "cpu_frequency",
        "print",
    }
    assert generic["sched_pelt_se"] and generic["sched_pelt_cfs"], generic


def test_process_tree_names_tasks_and_clock_snapshot(run_pair):
    txt, pf = run_pair
    trace = decode(pf)
    first = trace.packet[0]
    assert first.HasField("clock_snapshot")
    clocks = {c.clock_id: c.timestamp for c in first.clock_snapshot.clocks}
    assert set(clocks) == {pb2.BUILTIN_CLOCK_BOOTTIME, pb2.BUILTIN_CLOCK_MONOTONIC}
    assert len(set(clocks.values())) == 1
    threads: dict[int, tuple[int, str]] = {}
    processes: dict[int, list[str]] = {}
    for packet in trace.packet:
        assert packet.trusted_packet_sequence_id == 1
        if packet.HasField("process_tree"):
            for p in packet.process_tree.processes:
                processes[p.pid] = list(p.cmdline)
            for t in packet.process_tree.threads:
                threads[t.tid] = (t.tgid, t.name)
    renamed = [row for rows in text_table(txt).values() for row in rows if row[2] == "task_rename"]
    assert renamed
    for _, _, _, f in renamed:
        tgid, name = threads[f["pid"]]
        assert name == f["newcomm"]
        # rt-app's threads are threads of its main thread (pid 1000, comm rt-app).
        assert tgid == 1000 and processes[1000] == ["rt-app"]
    for tid, (tgid, _) in threads.items():
        assert tgid in processes, f"thread {tid} in unannounced process {tgid}"


def test_text_trace_is_what_perfettos_importer_takes(run_pair):
    txt, _ = run_pair
    data = txt.read_bytes()
    # GuessTraceType() (src/trace_processor/util/trace_type.cc): "# tracer" within the
    # first kGuessTraceMaxLookahead = 64 bytes means ftrace text ("systrace").
    assert b"# tracer" in data[:64]
    for raw in data.decode().splitlines():
        if raw.startswith("#"):
            continue  # skipped by Perfetto's systrace parser
        m = PERFETTO_SYSTRACE_LINE.search(raw)
        assert m, raw
        assert raw[: m.start()].strip() and int(m[3]) >= 0


def test_same_run_same_bytes(tmp_path):
    a, b = tmp_path / "a.pftrace", tmp_path / "b.pftrace"
    for path in (a, b):
        hs.run("rk3399", "gen:hackbench:groups=1,loops=20", seed=3, duration="300ms", trace=path)
    assert a.read_bytes() == b.read_bytes()
    assert a.read_bytes()[:1] == b"\x0a"  # Trace.packet


def test_trace_processor_sees_the_same_schedule(run_pair):
    binary = os.environ.get("HETSCHED_TRACE_PROCESSOR")
    if not binary:
        pytest.skip("HETSCHED_TRACE_PROCESSOR (a trace_processor_shell binary) not given")
    from perfetto.trace_processor import TraceProcessor, TraceProcessorConfig

    query = (
        "select s.cpu, s.ts / 1000 as us, t.tid, t.name from sched s "
        "join thread t using (utid) where t.tid != 0 order by s.cpu, s.ts"
    )
    tables = []
    for path in run_pair:
        tp = TraceProcessor(trace=str(path), config=TraceProcessorConfig(bin_path=binary))
        try:
            tables.append(json.dumps(tp.query(query).as_pandas_dataframe().values.tolist()))
        finally:
            tp.close()
    assert tables[0] == tables[1]


def test_wakings_share_their_nanosecond_with_a_switch(tmp_path):
    """Why the wakings and switches are not written in ``compact_sched``
    (docs/trace-format.md): trace processor puts a bundle's compact switches before its
    compact wakings at one timestamp and takes a compact waking's waker from the last
    switch, so a waking in the nanosecond of the switch that follows it would be credited
    to the task switched in. In the simulator, most wakings share their nanosecond with a
    switch on their CPU."""
    pf = tmp_path / "t.pftrace"
    hs.run("hikey960", "demo", seed=1, duration="2s", trace=pf)
    switches, wakings = defaultdict(set), []
    for packet in decode(pf).packet:
        cpu = packet.ftrace_events.cpu
        for e in packet.ftrace_events.event:
            kind = e.WhichOneof("event")
            if kind == "sched_switch":
                switches[cpu].add(e.timestamp)
            elif kind == "sched_waking":
                wakings.append((cpu, e.timestamp))
    shared = sum(ts in switches[cpu] for cpu, ts in wakings)
    print(f"{shared} of {len(wakings)} sched_waking share their nanosecond with a switch")
    assert len(wakings) > 100 and shared > len(wakings) // 2


def test_trace_processor_takes_the_dense_events(tmp_path):
    """Both layouts give trace processor the same ``ftrace_event`` rows and arguments
    (names and values; the dense layout's unsigned fields as unsigned), and no descriptor
    errors."""
    binary = os.environ.get("HETSCHED_TRACE_PROCESSOR")
    if not binary:
        pytest.skip("HETSCHED_TRACE_PROCESSOR (a trace_processor_shell binary) not given")
    from perfetto.trace_processor import TraceProcessor, TraceProcessorConfig

    rows = (
        "select e.ts, e.cpu, e.name, a.key, a.display_value from ftrace_event e "
        "join args a using (arg_set_id) order by e.ts, e.cpu, e.name, a.key"
    )
    errors = "select value from stats where name = 'ftrace_generic_descriptor_errors'"
    tables = []
    for layout in LAYOUTS:
        path = tmp_path / f"{layout}.pftrace"
        hs.run(
            "tc2",
            "demo",
            set={"kernel": "v4.4", "hmp.enabled": "true", "cpufreq.governor": "interactive"},
            seed=1,
            duration="1s",
            trace=path,
            trace_format=layout,
        )
        tp = TraceProcessor(trace=str(path), config=TraceProcessorConfig(bin_path=binary))
        try:
            tables.append(json.dumps(tp.query(rows).as_pandas_dataframe().values.tolist()))
            assert tp.query(errors).as_pandas_dataframe()["value"].sum() == 0
        finally:
            tp.close()
    assert tables[0] == tables[1]


def test_trace_format_overrides_the_extension(tmp_path):
    args = ("rk3399", "gen:hackbench:groups=1,loops=20")
    pf, forced = tmp_path / "a.pftrace", tmp_path / "b.txt"
    hs.run(*args, seed=3, duration="300ms", trace=pf)
    hs.run(*args, seed=3, duration="300ms", trace=forced, trace_format="perfetto")
    assert forced.read_bytes() == pf.read_bytes()
    text = tmp_path / "c.pftrace"
    hs.run(*args, seed=3, duration="300ms", trace=text, trace_format="text")
    assert text.read_bytes().startswith(b"# tracer: nop\n")
    with pytest.raises(hs.OptionsError, match="trace_format"):
        hs.run(*args, trace=text, trace_format="json")  # type: ignore[arg-type]
