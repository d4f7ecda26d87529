//! Helpers the trace-reading integration tests share: run a JSON workload into the ftrace
//! text and read its lines.

// Test helpers panic on unexpected failures by design; not every test file uses each one.
#![allow(clippy::unwrap_used, dead_code)]

use hetsched::hetsched_core::options::Options;
use hetsched::hetsched_core::trace::TraceSink;
use hetsched::hetsched_core::{run, RunResult, RunSpec};
use hetsched::hetsched_trace::FtraceTextSink;

/// One millisecond in ns.
pub(crate) const MS: u64 = 1_000_000;

/// Runs `json` on `platform` for `ms` with `sets` (seed 1) and returns the result and the
/// trace's lines.
pub(crate) fn traced(
    platform: &str,
    json: &str,
    ms: u64,
    sets: &[&str],
) -> (RunResult, Vec<String>) {
    run_traced(platform, json, Some(ms * MS), sets)
}

/// Runs `json` on `platform` to the workload's end with `sets` (seed 1) and returns the
/// trace's lines.
pub(crate) fn trace_to_end(platform: &str, json: &str, sets: &[&str]) -> Vec<String> {
    run_traced(platform, json, None, sets).1
}

fn run_traced(
    platform: &str,
    json: &str,
    duration_ns: Option<u64>,
    sets: &[&str],
) -> (RunResult, Vec<String>) {
    let s = RunSpec {
        platform: hetsched::load_platform(platform).unwrap(),
        workload: hetsched::hetsched_rtapp::parse_str(json, "t.json", &Default::default()).unwrap(),
        options: Options::default().apply_sets(sets).unwrap(),
        seed: 1,
        duration_ns,
    };
    let mut sink = FtraceTextSink::new(Vec::new());
    let r = {
        let mut sinks: [&mut dyn TraceSink; 1] = [&mut sink];
        run(&s, &mut sinks).unwrap()
    };
    let text = String::from_utf8(sink.into_inner().unwrap()).unwrap();
    (r, text.lines().map(str::to_string).collect())
}

/// Seconds after the start (traces begin at 1.000000).
pub(crate) fn t_s(line: &str) -> f64 {
    let ts = line.split(']').nth(1).unwrap().trim();
    ts.split(':').next().unwrap().parse::<f64>().unwrap() - 1.0
}

/// `(t, target_cpu)` of each `sched_wakeup` of `comm`, t in seconds after the start.
pub(crate) fn wakeups(lines: &[String], comm: &str) -> Vec<(f64, usize)> {
    wakeups_matching(lines, &format!(" comm={comm} "))
}

/// [`wakeups`] of every thread whose comm starts with `prefix`.
pub(crate) fn wakeups_of_prefix(lines: &[String], prefix: &str) -> Vec<(f64, usize)> {
    wakeups_matching(lines, &format!(" comm={prefix}"))
}

fn wakeups_matching(lines: &[String], pat: &str) -> Vec<(f64, usize)> {
    lines
        .iter()
        .filter(|l| l.contains("sched_wakeup:") && l.contains(pat))
        .map(|l| (t_s(l), field(l, "target_cpu").parse().unwrap()))
        .collect()
}

/// Timestamp in µs after the 1 s start.
pub(crate) fn t_us(line: &str) -> i64 {
    let ts = line.split(']').nth(1).unwrap().trim();
    let ts = ts.split(':').next().unwrap();
    let (s, us) = ts.split_once('.').unwrap();
    (s.parse::<i64>().unwrap() - 1) * 1_000_000 + us.parse::<i64>().unwrap()
}

/// `key=` field of a trace line.
pub(crate) fn field<'a>(line: &'a str, key: &str) -> &'a str {
    let at = line.find(&format!(" {key}=")).unwrap() + key.len() + 2;
    line[at..].split(' ').next().unwrap()
}
