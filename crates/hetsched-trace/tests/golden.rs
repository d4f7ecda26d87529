//! Golden tests for the ftrace text writer: a fixed event sequence covering every
//! [`TraceEvent`] and [`RtappMarker`] variant, compared byte for byte with
//! `tests/golden/*.txt`. Regenerate with `HETSCHED_BLESS=1 cargo test -p hetsched-trace`
//! and check the diff by eye against the trace-format spec.

use std::io::{self, Write};
use std::path::PathBuf;

use hetsched_core::trace::{Ctx, Interest, RtappMarker, TaskRef, TraceEvent, TraceSink};
use hetsched_trace::FtraceTextSink;

const S: u64 = 1_000_000_000;
const US: u64 = 1_000;

const SMALL: TaskRef<'static> = TaskRef {
    comm: "small-0",
    pid: 1000,
    prio: 120,
};
const BIG: TaskRef<'static> = TaskRef {
    comm: "big-1",
    pid: 1001,
    prio: 120,
};
/// 15 characters, the longest comm the kernel keeps.
const LONG: TaskRef<'static> = TaskRef {
    comm: "a_long_comm_15c",
    pid: 123_456,
    prio: 89,
};

fn idle(cpu: u32) -> TaskRef<'static> {
    const NAMES: [&str; 8] = [
        "swapper/0",
        "swapper/1",
        "swapper/2",
        "swapper/3",
        "swapper/4",
        "swapper/5",
        "swapper/6",
        "swapper/7",
    ];
    TaskRef {
        comm: NAMES[cpu as usize],
        pid: 0,
        prio: 120,
    }
}

fn ctx(ts: u64, cpu: u32, t: Option<TaskRef<'static>>) -> Ctx<'static> {
    match t {
        Some(t) => Ctx {
            ts,
            cpu,
            comm: t.comm,
            pid: t.pid,
        },
        None => Ctx {
            ts,
            cpu,
            comm: "<idle>",
            pid: 0,
        },
    }
}

/// Feeds the fixed sequence to `sink`: every variant at least once, with the edge cases
/// (cpu_idle −1, negative slack, prev_state 0/1/16, 6-digit pid, comm of 15 chars,
/// timestamps past 99999 s; the >32-CPU span is unit-tested in `fmt`).
fn feed(sink: &mut dyn TraceSink) {
    let t0 = 100 * S;
    sink.begin(8, t0);
    let ev = |sink: &mut dyn TraceSink, c: Ctx<'_>, e: TraceEvent<'_>| sink.record(&c, &e);

    ev(
        sink,
        ctx(t0, 0, None),
        TraceEvent::TaskRename {
            pid: 1000,
            oldcomm: "rt-app",
            newcomm: "small-0",
        },
    );
    ev(
        sink,
        ctx(t0, 0, None),
        TraceEvent::TaskRename {
            pid: 1001,
            oldcomm: "rt-app",
            newcomm: "big-1",
        },
    );
    ev(
        sink,
        ctx(t0, 0, None),
        TraceEvent::SchedWakeupNew {
            task: SMALL,
            target_cpu: 0,
        },
    );
    ev(
        sink,
        ctx(t0, 4, None),
        TraceEvent::SchedWakeupNew {
            task: BIG,
            target_cpu: 4,
        },
    );
    ev(
        sink,
        ctx(t0 + US, 0, None),
        TraceEvent::CpuIdle {
            cpu_id: 0,
            state: -1,
        },
    );
    ev(
        sink,
        ctx(t0 + 2 * US, 0, None),
        TraceEvent::SchedSwitch {
            prev: idle(0),
            prev_state: 0,
            next: SMALL,
        },
    );
    ev(
        sink,
        ctx(t0 + 3 * US, 0, Some(SMALL)),
        TraceEvent::Print(RtappMarker::Main {
            event: "start",
            data: 0,
        }),
    );
    ev(
        sink,
        ctx(t0 + 3 * US, 0, Some(SMALL)),
        TraceEvent::Print(RtappMarker::Main {
            event: "clock_ref",
            data: 100_000_003,
        }),
    );
    ev(
        sink,
        ctx(t0 + 4 * US, 0, Some(SMALL)),
        TraceEvent::Print(RtappMarker::Task { event: "start" }),
    );
    ev(
        sink,
        ctx(t0 + 5 * US, 0, Some(SMALL)),
        TraceEvent::Print(RtappMarker::Loop {
            event: "start",
            thread_loop: 0,
            phase: 0,
            phase_loop: 0,
        }),
    );
    ev(
        sink,
        ctx(t0 + 5 * US, 0, Some(SMALL)),
        TraceEvent::Print(RtappMarker::Event {
            id: 0,
            type_id: 4,
            desc: "run",
        }),
    );
    ev(
        sink,
        ctx(t0 + 6 * US, 0, Some(SMALL)),
        TraceEvent::SchedPeltSe {
            cpu: 0,
            task: SMALL,
            load: 512,
            rbl_load: 510,
            util: 87,
            update_time: 100_000_006_144,
        },
    );
    ev(
        sink,
        ctx(t0 + 6 * US, 0, Some(SMALL)),
        TraceEvent::SchedPeltCfs {
            cpu: 0,
            load: 520,
            rbl_load: 515,
            util: 90,
            update_time: 100_000_006_144,
        },
    );
    ev(
        sink,
        ctx(t0 + 6 * US, 0, Some(SMALL)),
        TraceEvent::SchedUtilEstSe {
            cpu: 0,
            task: SMALL,
            enqueued: 80,
            ewma: 75,
            util: 87,
        },
    );
    ev(
        sink,
        ctx(t0 + 6 * US, 0, Some(SMALL)),
        TraceEvent::SchedUtilEstCfs {
            cpu: 0,
            enqueued: 80,
            ewma: 80,
            util: 90,
        },
    );
    ev(
        sink,
        ctx(t0 + 6 * US, 0, Some(SMALL)),
        TraceEvent::SchedCpuCapacity {
            cpu: 0,
            capacity: 455,
            capacity_orig: 462,
            capacity_curr: 231,
        },
    );
    ev(
        sink,
        ctx(t0 + 7 * US, 0, Some(SMALL)),
        TraceEvent::CpuFrequency {
            cpu_id: 0,
            state: 1_844_000,
        },
    );
    // Sleeps on CPU0: prev_state 1 (S).
    ev(
        sink,
        ctx(t0 + 8 * US, 0, Some(SMALL)),
        TraceEvent::SchedSwitch {
            prev: SMALL,
            prev_state: 1,
            next: idle(0),
        },
    );
    ev(
        sink,
        ctx(t0 + 10 * US, 4, None),
        TraceEvent::SchedSwitch {
            prev: idle(4),
            prev_state: 0,
            next: BIG,
        },
    );
    ev(
        sink,
        ctx(t0 + 12 * US, 4, Some(BIG)),
        TraceEvent::SchedOverutilized {
            overutilized: true,
            span: &[0xff],
        },
    );
    ev(
        sink,
        ctx(t0 + 14 * US, 4, Some(BIG)),
        TraceEvent::SchedMigrateTask {
            task: SMALL,
            orig_cpu: 0,
            dest_cpu: 4,
        },
    );
    ev(
        sink,
        ctx(t0 + 15 * US, 4, Some(BIG)),
        TraceEvent::SchedWakeup {
            task: SMALL,
            target_cpu: 4,
        },
    );
    // Preempted: prev_state 0 (R), which LISA counts as preempted.
    ev(
        sink,
        ctx(t0 + 16 * US, 4, Some(BIG)),
        TraceEvent::SchedSwitch {
            prev: BIG,
            prev_state: 0,
            next: SMALL,
        },
    );
    ev(
        sink,
        ctx(t0 + 20 * US, 4, Some(SMALL)),
        TraceEvent::Print(RtappMarker::Stats {
            period: 16_000,
            run: 3_000,
            wu_lat: 15,
            slack: -5_000,
            c_period: 16_000,
            c_run: 3_000,
        }),
    );
    ev(
        sink,
        ctx(t0 + 20 * US, 4, Some(SMALL)),
        TraceEvent::Print(RtappMarker::Loop {
            event: "end",
            thread_loop: 0,
            phase: 0,
            phase_loop: 0,
        }),
    );
    // Sleeps again, on CPU4.
    ev(
        sink,
        ctx(t0 + 21 * US, 4, Some(SMALL)),
        TraceEvent::SchedSwitch {
            prev: SMALL,
            prev_state: 1,
            next: BIG,
        },
    );
    ev(
        sink,
        ctx(t0 + 22 * US, 0, None),
        TraceEvent::CpuIdle {
            cpu_id: 0,
            state: 0,
        },
    );
    ev(
        sink,
        ctx(t0 + 30 * US, 4, Some(BIG)),
        TraceEvent::Print(RtappMarker::Task { event: "end" }),
    );
    // Dies: prev_state 16 (X).
    ev(
        sink,
        ctx(t0 + 31 * US, 4, Some(BIG)),
        TraceEvent::SchedProcessExit { task: BIG },
    );
    ev(
        sink,
        ctx(t0 + 31 * US, 4, Some(BIG)),
        TraceEvent::SchedSwitch {
            prev: BIG,
            prev_state: 16,
            next: idle(4),
        },
    );
    ev(
        sink,
        ctx(t0 + 40 * US, 4, None),
        TraceEvent::SchedOverutilized {
            overutilized: false,
            span: &[0x0f],
        },
    );
    // Wide columns: 6-digit pid, 15-char comm, RT prio, time past 99999 s.
    let late = 123_456 * S + 789_123_999;
    ev(
        sink,
        ctx(late, 7, None),
        TraceEvent::SchedWakeup {
            task: LONG,
            target_cpu: 7,
        },
    );
    ev(
        sink,
        ctx(late, 7, None),
        TraceEvent::SchedSwitch {
            prev: idle(7),
            prev_state: 0,
            next: LONG,
        },
    );
    ev(
        sink,
        ctx(late + US, 7, Some(LONG)),
        TraceEvent::Print(RtappMarker::Main {
            event: "end",
            data: -1,
        }),
    );
    sink.end(late + 2 * US);
}

fn golden_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name)
}

fn check_golden(name: &str, actual: &str) {
    let path = golden_path(name);
    if std::env::var_os("HETSCHED_BLESS").is_some() {
        std::fs::write(&path, actual).expect("write golden");
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (run with HETSCHED_BLESS=1)", path.display()));
    if expected != actual {
        for (i, (e, a)) in expected.lines().zip(actual.lines()).enumerate() {
            assert_eq!(e, a, "{}:{} differs", path.display(), i + 1);
        }
        assert_eq!(
            expected.lines().count(),
            actual.lines().count(),
            "{}: line count differs",
            path.display()
        );
        panic!("{}: differs (line endings?)", path.display());
    }
}

fn render(interest: Option<Interest>) -> String {
    let mut sink = FtraceTextSink::new(Vec::new());
    if let Some(i) = interest {
        sink = sink.with_interest(i);
    }
    feed(&mut sink);
    String::from_utf8(sink.into_inner().expect("Vec writer")).expect("ASCII output")
}

#[test]
fn every_event_matches_golden() {
    check_golden("all_events.txt", &render(None));
}

#[test]
fn interest_sched_power_matches_golden() {
    let interest = Interest {
        sched: true,
        power: true,
        ..Interest::default()
    };
    let text = render(Some(interest));
    check_golden("sched_power.txt", &text);
    // Exactly the lines of the full trace that belong to those groups.
    let all = render(None);
    let kept: Vec<&str> = all
        .lines()
        .filter(|l| {
            ![
                " print: ",
                " sched_pelt_",
                " sched_util_est_",
                " sched_cpu_capacity: ",
                " sched_overutilized: ",
            ]
            .iter()
            .any(|e| l.contains(e))
        })
        .collect();
    assert_eq!(text.lines().collect::<Vec<_>>(), kept);
}

#[test]
fn same_events_give_identical_bytes() {
    assert_eq!(render(None), render(None));
}

/// Hand-written check of LISA 3.1.0's header regex,
/// `^.*:?\s+COMM-PID\s+\[CPU\]\s+TS:\s+EVENT:` with `TS = \d+\.\d+`, and of its
/// `name=value` fields (no space inside a value, none before `=`).
#[test]
fn every_line_fits_lisa_header_regex() {
    let text = render(None);
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("version = 6"));
    assert_eq!(lines.next(), Some("cpus=8"));
    for line in lines {
        let (head, rest) = line.split_once(" [").expect(line);
        let (comm, pid) = head.trim_start().rsplit_once('-').expect(line);
        assert!(!comm.is_empty() && !comm.contains(' '), "{line}");
        assert!(pid.trim_end().bytes().all(|b| b.is_ascii_digit()), "{line}");
        let (cpu, rest) = rest.split_once(']').expect(line);
        assert!(
            cpu.len() == 3 && cpu.bytes().all(|b| b.is_ascii_digit()),
            "{line}"
        );
        let rest = rest.trim_start();
        let (ts, rest) = rest.split_once(": ").expect(line);
        let (s, us) = ts.split_once('.').expect(line);
        assert!(s.bytes().all(|b| b.is_ascii_digit()), "{line}");
        assert!(
            us.len() == 6 && us.bytes().all(|b| b.is_ascii_digit()),
            "{line}"
        );
        let (event, fields) = rest.split_once(':').expect(line);
        assert!(
            event
                .bytes()
                .all(|b| b == b'_' || b.is_ascii_alphanumeric()),
            "{line}"
        );
        let fields = fields.trim_start();
        let fields = if event == "print" {
            let (ip, buf) = fields.split_once(": ").expect(line);
            assert_eq!(ip, "tracing_mark_write", "{line}");
            let (marker, f) = buf.split_once(": ").expect(line);
            assert!(marker.starts_with("rtapp_"), "{line}");
            f
        } else {
            fields
        };
        for kv in fields.split(' ') {
            let (k, v) = kv.split_once('=').expect(line);
            assert!(!k.is_empty() && !v.is_empty(), "{line}");
        }
    }
}

/// A writer that fails after `left` bytes.
struct Failing {
    left: usize,
}

impl Write for Failing {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.left == 0 {
            return Err(io::Error::other("disk full"));
        }
        let n = buf.len().min(self.left);
        self.left -= n;
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[test]
fn io_errors_are_kept_not_lost() {
    let mut sink = FtraceTextSink::new(Failing { left: 100 });
    feed(&mut sink);
    // `end` flushed and met the error; it is kept for the caller.
    let e = sink.take_error().expect("error kept");
    assert_eq!(e.to_string(), "disk full");
    assert!(sink.take_error().is_none());

    let mut sink = FtraceTextSink::new(Failing { left: 100 });
    feed(&mut sink);
    assert!(sink.flush().is_err());

    let mut sink = FtraceTextSink::new(Failing { left: 100 });
    feed(&mut sink);
    assert!(sink.into_inner().is_err());
}

#[test]
fn large_output_is_written_in_order() {
    // Past the 64 KiB buffer several times: the bytes must be those of the lines in order.
    let mut sink = FtraceTextSink::new(Vec::new());
    sink.begin(1, 0);
    let mut expected = String::from("version = 6\ncpus=1\n");
    for i in 0..20_000u64 {
        let c = Ctx {
            ts: i * 1_500,
            cpu: 0,
            comm: "<idle>",
            pid: 0,
        };
        sink.record(
            &c,
            &TraceEvent::CpuFrequency {
                cpu_id: 0,
                state: i,
            },
        );
        expected.push_str(&format!(
            "          <idle>-0     [000] {:>5}.{:06}: cpu_frequency:        state={i} cpu_id=0\n",
            c.ts / S,
            (c.ts % S) / US
        ));
    }
    sink.end(30_000_000);
    assert!(sink.take_error().is_none());
    assert_eq!(
        String::from_utf8(sink.into_inner().expect("Vec writer")).expect("ASCII output"),
        expected
    );
}

#[test]
fn create_writes_a_file() {
    let path = std::env::temp_dir().join(format!("hetsched-trace-{}.txt", std::process::id()));
    let mut sink = FtraceTextSink::create(&path).expect("create temp file");
    feed(&mut sink);
    sink.flush().expect("flush");
    drop(sink);
    let text = std::fs::read_to_string(&path).expect("read temp file");
    std::fs::remove_file(&path).expect("remove temp file");
    assert_eq!(text, render(None));
}
