//! Golden tests for the ftrace text writer: a fixed event sequence covering every
//! `TraceEvent` and `RtappMarker` variant, compared byte for byte with
//! `tests/golden/*.txt`. Regenerate with `HETSCHED_BLESS=1 cargo test -p hetsched-trace`
//! and check the diff by eye against the trace-format spec.

use std::io::{self, Write};
use std::path::PathBuf;

use hetsched_core::trace::{Ctx, Interest, TraceEvent, TraceSink};
use hetsched_trace::FtraceTextSink;

mod common;
use common::{feed, S, US};

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
    let header: Vec<&str> = lines.by_ref().take(6).collect();
    assert_eq!(
        header,
        [
            "# tracer: nop",
            "#",
            "# cpus=8",
            "#",
            "#           TASK-PID     CPU#     TIMESTAMP  FUNCTION",
            "#              | |         |         |         |",
        ]
    );
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
    // Past the 256 KiB buffer several times: the bytes must be those of the lines in order.
    let mut sink = FtraceTextSink::new(Vec::new());
    sink.begin(1, 0);
    let mut expected = String::from(
        "# tracer: nop\n#\n# cpus=1\n#\n\
         #           TASK-PID     CPU#     TIMESTAMP  FUNCTION\n\
         #              | |         |         |         |\n",
    );
    for i in 0..60_000u64 {
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
    sink.end(90_000_000);
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

/// Perfetto's trace processor takes a file as ftrace text when `# tracer` occurs in its
/// first 64 bytes (`GuessTraceType()`, src/trace_processor/util/trace_type.cc,
/// `kGuessTraceMaxLookahead` = 64); its systrace parser skips every line that starts
/// with `#`, so the header holds nothing else.
#[test]
fn perfetto_sniffs_the_text_as_ftrace() {
    let text = render(None);
    assert!(text.as_bytes()[..64].windows(8).any(|w| w == b"# tracer"));
    assert!(text.starts_with(hetsched_trace::ftrace::HEADER));
    let header: Vec<&str> = text.lines().take_while(|l| !l.contains(" [")).collect();
    assert!(header.iter().all(|l| l.starts_with('#')), "{header:?}");
    // The same for a trace restricted to a few event groups.
    let some = render(Some(Interest {
        sched: true,
        ..Interest::default()
    }));
    assert!(some.as_bytes()[..64].windows(8).any(|w| w == b"# tracer"));
}

#[test]
fn lines_longer_than_the_room_left_are_written_whole() {
    // A line that does not fit the bytes past the pending output is written again into
    // a grown buffer: the sink's text is that of `format_event`, line after line.
    let mut sink = FtraceTextSink::new(Vec::new());
    sink.begin(2, 0);
    let mut expected = Vec::new();
    let mut header = FtraceTextSink::new(Vec::new());
    header.begin(2, 0);
    let mut expected_text = header.into_inner().expect("Vec writer");
    for i in 0..200usize {
        // Line 100 is longer than the whole buffer (256 KiB and its room).
        let comm = "c".repeat(if i == 100 { 1_500_000 } else { i * 97 % 9000 });
        let ctx = Ctx {
            ts: i as u64 * 1_000_000,
            cpu: (i % 2) as u32,
            comm: &comm,
            pid: i as u32,
        };
        let task = hetsched_core::trace::TaskRef {
            comm: &comm,
            pid: 1000 + i as u32,
            prio: 120,
        };
        let ev = TraceEvent::SchedWakeup {
            task,
            target_cpu: 1,
        };
        sink.record(&ctx, &ev);
        expected.clear();
        hetsched_trace::format_event(&mut expected, 2, &ctx, &ev);
        expected_text.extend_from_slice(&expected);
    }
    assert_eq!(sink.into_inner().expect("Vec writer"), expected_text);
}
