//! Tests of the Perfetto protobuf writer on the golden tests' event sequence: the same
//! events give the same bytes; every CPU's events are those of the text trace, in the
//! same order, with the same timestamps; tasks are named by the process tree; I/O errors
//! are kept. The bytes are read back with a small protobuf reader written here (the
//! Python test `tests/python/test_perfetto_trace.py` decodes them with Perfetto's own
//! classes).

use std::collections::BTreeMap;
use std::io::{self, Write};

use hetsched_core::trace::{Ctx, TaskRef, TraceEvent, TraceSink};
use hetsched_trace::{FtraceTextSink, PerfettoConfig, PerfettoSink};

mod common;
use common::{feed, US};

/// One protobuf field: its number and value.
#[derive(Debug, Clone, Copy)]
enum Value<'a> {
    Varint(u64),
    Bytes(&'a [u8]),
}

fn varint(b: &[u8], at: &mut usize) -> u64 {
    let mut v = 0u64;
    let mut shift = 0;
    loop {
        let byte = b[*at];
        *at += 1;
        v |= u64::from(byte & 0x7f) << shift;
        if byte < 0x80 {
            return v;
        }
        shift += 7;
        assert!(shift < 70, "varint too long");
    }
}

/// The fields of one message, in order.
fn fields(b: &[u8]) -> Vec<(u32, Value<'_>)> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < b.len() {
        let key = varint(b, &mut at);
        let field = u32::try_from(key >> 3).expect("field number");
        match key & 7 {
            0 => out.push((field, Value::Varint(varint(b, &mut at)))),
            2 => {
                let len = usize::try_from(varint(b, &mut at)).expect("length");
                out.push((field, Value::Bytes(&b[at..at + len])));
                at += len;
            }
            wt => panic!("unexpected wire type {wt} for field {field}"),
        }
    }
    assert_eq!(at, b.len(), "message overruns its length");
    out
}

fn uint(fs: &[(u32, Value<'_>)], n: u32) -> Option<u64> {
    fs.iter().find_map(|&(f, v)| match v {
        Value::Varint(x) if f == n => Some(x),
        _ => None,
    })
}

fn bytes<'a>(fs: &[(u32, Value<'a>)], n: u32) -> Vec<&'a [u8]> {
    fs.iter()
        .filter_map(|&(f, v)| match v {
            Value::Bytes(x) if f == n => Some(x),
            _ => None,
        })
        .collect()
}

fn string(b: &[u8]) -> String {
    String::from_utf8(b.to_vec()).expect("UTF-8 string")
}

/// The event name of an `FtraceEvent` oneof field (Perfetto's numbers; 327 is generic).
fn typed_name(tag: u32) -> &'static str {
    match tag {
        3 => "print",
        4 => "sched_switch",
        11 => "cpu_frequency",
        13 => "cpu_idle",
        17 => "sched_wakeup",
        114 => "sched_wakeup_new",
        236 => "task_rename",
        238 => "sched_process_exit",
        353 => "sched_pi_setprio",
        491 => "sched_migrate_task",
        _ => panic!("unexpected FtraceEvent field {tag}"),
    }
}

/// What a `.pftrace` holds, read back.
#[derive(Debug, Default)]
struct Decoded {
    /// Per CPU, (timestamp in µs, pid, event name) in file order.
    events: BTreeMap<u64, Vec<(u64, u64, String)>>,
    /// pid → (tgid, last name) from the process tree packets.
    threads: BTreeMap<u64, (u64, String)>,
    /// Clock snapshots seen: (clock id, timestamp).
    clocks: Vec<(u64, u64)>,
}

fn decode(trace: &[u8]) -> Decoded {
    let mut d = Decoded::default();
    for (n, v) in fields(trace) {
        assert_eq!(n, 1, "Trace holds only packets");
        let Value::Bytes(packet) = v else {
            panic!("packet not length-delimited")
        };
        let p = fields(packet);
        assert_eq!(uint(&p, 10), Some(1), "trusted_packet_sequence_id");
        for bundle in bytes(&p, 1) {
            let b = fields(bundle);
            let cpu = uint(&b, 1).expect("bundle cpu");
            // generic_event_descriptors: field_id (1) and the event's DescriptorProto (2),
            // whose name is field 1.
            let mut described = BTreeMap::new();
            for g in bytes(&b, 11) {
                let g = fields(g);
                let desc = fields(bytes(&g, 2)[0]);
                described.insert(
                    uint(&g, 1).expect("field_id") as u32,
                    string(bytes(&desc, 1)[0]),
                );
            }
            let mut used = std::collections::BTreeSet::new();
            for event in bytes(&b, 2) {
                let e = fields(event);
                let ts = uint(&e, 1).expect("event timestamp");
                let pid = uint(&e, 2).expect("event pid");
                let (tag, body) = e
                    .iter()
                    .find_map(|&(f, v)| match v {
                        Value::Bytes(x) => Some((f, x)),
                        Value::Varint(_) => None,
                    })
                    .expect("event body");
                let name = if tag == 327 {
                    string(bytes(&fields(body), 1)[0])
                } else if tag >= 65536 {
                    used.insert(tag);
                    described
                        .get(&tag)
                        .expect("an event its bundle describes")
                        .clone()
                } else {
                    typed_name(tag).to_string()
                };
                d.events.entry(cpu).or_default().push((ts / US, pid, name));
            }
            // A bundle describes the dense events it holds, and no others.
            assert!(
                described.keys().copied().eq(used.iter().copied()),
                "{described:?} {used:?}"
            );
        }
        for tree in bytes(&p, 2) {
            for thread in bytes(&fields(tree), 2) {
                let t = fields(thread);
                let name = string(bytes(&t, 2)[0]);
                d.threads.insert(
                    uint(&t, 1).expect("tid"),
                    (uint(&t, 3).expect("tgid"), name),
                );
            }
        }
        for snapshot in bytes(&p, 6) {
            for clock in bytes(&fields(snapshot), 1) {
                let c = fields(clock);
                d.clocks
                    .push((uint(&c, 1).expect("id"), uint(&c, 2).expect("ts")));
            }
        }
    }
    d
}

fn render_perfetto() -> Vec<u8> {
    render_perfetto_with(PerfettoConfig::default())
}

fn render_perfetto_with(config: PerfettoConfig) -> Vec<u8> {
    let mut sink = PerfettoSink::with_config(Vec::new(), config);
    feed(&mut sink);
    sink.into_inner().expect("Vec writer")
}

fn render_text() -> String {
    let mut sink = FtraceTextSink::new(Vec::new());
    feed(&mut sink);
    String::from_utf8(sink.into_inner().expect("Vec writer")).expect("ASCII output")
}

#[test]
fn same_events_give_identical_bytes() {
    let a = render_perfetto();
    assert!(a.len() > 1000, "{} bytes", a.len());
    assert_eq!(a, render_perfetto());
}

#[test]
fn every_cpu_has_the_text_traces_events_in_order() {
    let text = render_text();
    let mut expected: BTreeMap<u64, Vec<(u64, u64, String)>> = BTreeMap::new();
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let (head, rest) = line.split_once(" [").expect(line);
        let pid: u64 = head
            .trim_end()
            .rsplit_once('-')
            .expect(line)
            .1
            .parse()
            .expect(line);
        let (cpu, rest) = rest.split_once(']').expect(line);
        let (ts, rest) = rest.trim_start().split_once(": ").expect(line);
        let (secs, micros) = ts.split_once('.').expect(line);
        let us = secs.parse::<u64>().expect(line) * 1_000_000 + micros.parse::<u64>().expect(line);
        let name = rest.split_once(':').expect(line).0.to_string();
        expected
            .entry(cpu.parse().expect(line))
            .or_default()
            .push((us, pid, name));
    }
    for config in [PerfettoConfig::default(), PerfettoConfig::LEGACY] {
        let d = decode(&render_perfetto_with(config));
        assert_eq!(d.events, expected, "{config:?}");
        assert!(d.events.values().map(Vec::len).sum::<usize>() >= 30);
    }
}

#[test]
fn clock_snapshot_and_process_tree() {
    let d = decode(&render_perfetto());
    // BOOTTIME (6) and MONOTONIC (3) at the start given to `begin` (100 s).
    assert_eq!(d.clocks, [(6, 100_000_000_000), (3, 100_000_000_000)]);
    // Every renamed task carries its new name; a task announced by sched_wakeup_new
    // belongs to the group of the task that created it.
    let text = render_text();
    let mut renamed = 0;
    for line in text.lines().filter(|l| l.contains(" task_rename: ")) {
        let pid: u64 = line
            .split(" pid=")
            .nth(1)
            .expect(line)
            .split(' ')
            .next()
            .expect(line)
            .parse()
            .expect(line);
        let newcomm = line
            .split(" newcomm=")
            .nth(1)
            .expect(line)
            .split(' ')
            .next()
            .expect(line);
        assert_eq!(
            d.threads.get(&pid).map(|t| t.1.as_str()),
            Some(newcomm),
            "{line}"
        );
        renamed += 1;
    }
    assert!(renamed > 0);
    for (pid, (tgid, _)) in &d.threads {
        assert!(
            *tgid == *pid || d.threads.contains_key(tgid),
            "{pid} in unknown group {tgid}"
        );
    }
}

/// A writer that fails once `left` bytes are written.
struct Failing {
    left: usize,
}

impl Write for Failing {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if buf.len() > self.left {
            return Err(io::Error::other("disk full"));
        }
        self.left -= buf.len();
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[test]
fn io_errors_are_kept_not_lost() {
    let mut sink = PerfettoSink::new(Failing { left: 100 });
    feed(&mut sink);
    assert_eq!(
        sink.take_error().expect("error kept").to_string(),
        "disk full"
    );
    assert!(sink.take_error().is_none());
    let mut sink = PerfettoSink::new(Failing { left: 100 });
    feed(&mut sink);
    assert!(sink.into_inner().is_err());
    // Without an error, `end` then `flush` report nothing.
    let mut sink = PerfettoSink::new(Vec::new());
    feed(&mut sink);
    sink.end(0);
    assert!(sink.flush().is_ok());
}

#[test]
fn an_event_of_128_bytes_or_more_keeps_its_lengths() {
    // Two 100-byte comms make a sched_switch body past one length byte: the writer's
    // in-place encoding takes its other path there; a short event follows it.
    let long_a = "a".repeat(100);
    let long_b = "b".repeat(100);
    let mut sink = PerfettoSink::new(Vec::new());
    sink.begin(1, 0);
    let ctx = |ts| Ctx {
        ts,
        cpu: 0,
        comm: "x",
        pid: 7,
    };
    let task = |comm| TaskRef {
        comm,
        pid: 7,
        prio: 120,
    };
    let long = TraceEvent::SchedSwitch {
        prev: task(&long_a),
        prev_state: 1,
        next: task(&long_b),
    };
    let short = TraceEvent::CpuIdle {
        cpu_id: 0,
        state: 0,
    };
    sink.record(&ctx(US), &long);
    sink.record(&ctx(2 * US), &short);
    sink.end(3 * US);
    let bytes = sink.into_inner().expect("Vec writer");
    let d = decode(&bytes);
    let names: Vec<&str> = d.events[&0].iter().map(|e| e.2.as_str()).collect();
    assert_eq!(names, ["sched_switch", "cpu_idle"]);
    // The body holds both comms whole.
    let text = String::from_utf8_lossy(&bytes);
    assert!(text.contains(&long_a) && text.contains(&long_b));
}
