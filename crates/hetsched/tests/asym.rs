//! Asymmetric capacity in the fair class, checked from the trace: misfit up-migration,
//! fork and wake-up placement, balancing between symmetric clusters, and a snapshot of
//! each balancer/placement variant.
//!
//! Snapshots live in `tests/snapshots/`; after an intended behaviour change, rewrite them
//! with `HETSCHED_BLESS=1 cargo test -p hetsched --test asym` and review the diff.

// Test helpers panic on unexpected failures by design.
#![allow(clippy::unwrap_used)]

use hetsched::hetsched_core::options::Options;
use hetsched::hetsched_core::trace::TraceSink;
use hetsched::hetsched_core::{run, RunResult, RunSpec};
use hetsched::hetsched_trace::FtraceTextSink;
use std::collections::BTreeMap;
use std::fmt::Write as _;

const US: f64 = 1e-6;
/// The tests here are about capacity-aware placement and balancing without EAS at a fixed frequency: the performance governor keeps
/// every CPU at its highest OPP (the default, schedutil with EAS, is tested in eas.rs and
/// fidelity.rs).
const FIXED_FREQ: &str = "cpufreq.governor=performance";

fn spec(platform: &str, json: &str, sets: &[&str]) -> RunSpec {
    let options = Options::default()
        .apply_sets(&[FIXED_FREQ])
        .and_then(|o| o.apply_sets(sets))
        .unwrap();
    RunSpec {
        platform: hetsched::load_platform(platform).unwrap(),
        workload: hetsched::hetsched_rtapp::parse_str(json, "t.json", &Default::default()).unwrap(),
        options,
        seed: 1,
        duration_ns: None,
    }
}

struct Trace {
    lines: Vec<String>,
}

impl Trace {
    /// Seconds after the start (traces begin at 1.000000).
    fn t(line: &str) -> f64 {
        let ts = line.split(']').nth(1).unwrap().trim();
        ts.split(':').next().unwrap().parse::<f64>().unwrap() - 1.0
    }

    fn field<'a>(line: &'a str, key: &str) -> &'a str {
        let at = line.find(&format!(" {key}=")).unwrap() + key.len() + 2;
        line[at..].split_whitespace().next().unwrap()
    }

    /// `(t, orig_cpu, dest_cpu)` of each migration of `comm`.
    fn migrations(&self, comm: &str) -> Vec<(f64, usize, usize)> {
        let pat = format!("sched_migrate_task:   comm={comm} ");
        self.lines
            .iter()
            .filter(|l| l.contains(&pat))
            .map(|l| {
                (
                    Self::t(l),
                    Self::field(l, "orig_cpu").parse().unwrap(),
                    Self::field(l, "dest_cpu").parse().unwrap(),
                )
            })
            .collect()
    }

    /// `target_cpu` of each `sched_wakeup_new`, in order.
    fn wakeup_new_cpus(&self) -> Vec<usize> {
        self.lines
            .iter()
            .filter(|l| l.contains("sched_wakeup_new:"))
            .map(|l| Self::field(l, "target_cpu").parse().unwrap())
            .collect()
    }

    /// Time each comm ran on each CPU within `[a, b)` s, from `sched_switch`.
    fn residency(&self, a: f64, b: f64) -> BTreeMap<String, BTreeMap<usize, f64>> {
        let mut on: BTreeMap<usize, (String, f64)> = BTreeMap::new();
        let mut res: BTreeMap<String, BTreeMap<usize, f64>> = BTreeMap::new();
        let mut add = |comm: &str, cpu: usize, from: f64, to: f64| {
            let d = to.min(b) - from.max(a);
            if d > 0.0 {
                *res.entry(comm.to_string())
                    .or_default()
                    .entry(cpu)
                    .or_default() += d;
            }
        };
        for l in self.lines.iter().filter(|l| l.contains("sched_switch:")) {
            let cpu: usize = l.split('[').nth(1).unwrap()[..3].parse().unwrap();
            let t = Self::t(l);
            if let Some((comm, since)) = on.remove(&cpu) {
                add(&comm, cpu, since, t);
            }
            let next = Self::field(l, "next_comm");
            if Self::field(l, "next_pid") != "0" {
                on.insert(cpu, (next.to_string(), t));
            }
        }
        for (cpu, (comm, since)) in on {
            add(&comm, cpu, since, b);
        }
        res
    }
}

fn traced(s: &RunSpec) -> (RunResult, Trace) {
    let mut sink = FtraceTextSink::new(Vec::new());
    let r = {
        let mut sinks: [&mut dyn TraceSink; 1] = [&mut sink];
        run(s, &mut sinks).unwrap()
    };
    let text = String::from_utf8(sink.into_inner().unwrap()).unwrap();
    let lines = text.lines().map(str::to_string).collect();
    (r, Trace { lines })
}

/// A task that runs 10 % of a 10 ms period for 1 s on the LITTLEs, then 1.5 s of work (as timed on the
/// calibration CPU, a LITTLE) in one go; the big CPUs are kept busy by pinned hogs until `bigs_free_s`.
fn grow_workload(littles: &[usize], bigs: &[usize], bigs_free_s: f64) -> String {
    let mut hogs = String::new();
    for (i, b) in bigs.iter().enumerate() {
        let _ = write!(
            hogs,
            r#", "hog{i}": {{"cpus": [{b}], "loop": 1, "phases": {{"p": {{"runtime": {}}}}}}}"#,
            (bigs_free_s * 1e6) as u64
        );
    }
    format!(
        r#"{{"global": {{"duration": 4}}, "tasks": {{
          "grow": {{"phases": {{
            "small": {{"cpus": {littles:?}, "loop": 100, "run": 1000,
                       "timer": {{"ref": "t", "period": 10000}}}},
            "big": {{"loop": 1, "run": 1500000}},
            "rest": {{"loop": -1, "sleep": 1000000}}}}}}{hogs}}}}}"#
    )
}

/// A task that grows from small to big on a LITTLE CPU is running on a big CPU within a
/// few balance intervals once one is idle, and does not bounce back; without misfit
/// handling (`balance.misfit=false`, the "tip" of the series) it stays on the LITTLE.
#[test]
fn misfit_task_moves_up_once_a_big_cpu_is_idle_and_stays() {
    let platforms = [
        ("hikey960", vec![0, 1, 2, 3], vec![4, 5, 6, 7]),
        ("juno_r0", vec![0, 3, 4, 5], vec![1, 2]),
    ];
    for (platform, littles, bigs) in platforms {
        let is_big = |c: usize| bigs.contains(&c);
        // The small phase keeps it on the LITTLEs; the big phase, allowed everywhere,
        // starts at 1.0 s; the bigs are free at 1.5 s.
        let json = grow_workload(&littles, &bigs, 1.5);
        let (r, tr) = traced(&spec(platform, &json, &[]));
        let grow = r.tasks.iter().find(|t| t.comm == "grow-0").unwrap();
        let moves = tr.migrations("grow-0");
        let up = moves
            .iter()
            .find(|&&(t, from, to)| t >= 1.0 && !is_big(from) && is_big(to))
            .unwrap_or_else(|| panic!("{platform}: never moved up: {moves:?}"));
        // Balance intervals at the top level are 2×–8 ms for idle CPUs: a few of them.
        assert!(
            up.0 >= 1.5 && up.0 < 1.5 + 0.060,
            "{platform}: moved up at {:.3} s, expected within 60 ms of 1.5 s ({moves:?})",
            up.0
        );
        // It finishes its big phase on big CPUs: no move back down before completion.
        let big_done = up.0 + 0.4;
        assert!(
            !moves
                .iter()
                .any(|&(t, from, to)| t > up.0 && t < big_done && is_big(from) && !is_big(to)),
            "{platform}: bounced back: {moves:?}"
        );
        // `run` is time on the calibration CPU (CPU 0, a LITTLE): 1.5 s there, 0.5 s of
        // it done on the LITTLE, leaves about 0.45 s on a big.
        let win = tr.residency(up.0, up.0 + 0.4);
        let on_big: f64 = win["grow-0"]
            .iter()
            .filter(|(c, _)| is_big(**c))
            .map(|(_, s)| s)
            .sum();
        assert!(on_big > 0.399, "{platform}: {on_big} s on bigs of 0.4 s");
        assert!(
            r.migrations["misfit"] + r.migrations["active"] + r.migrations["nohz_idle"] >= 1,
            "{platform}: {:?}",
            r.migrations
        );
        assert!(grow.cpu_time_s > 0.5, "{platform}: {}", grow.cpu_time_s);

        // Without misfit handling the LITTLE keeps it: one running task is no imbalance.
        let (_, tr) = traced(&spec(platform, &json, &["balance.misfit=false"]));
        let win = tr.residency(1.6, 2.5);
        let little: f64 = win["grow-0"]
            .iter()
            .filter(|(c, _)| !is_big(**c))
            .map(|(_, s)| s)
            .sum();
        assert!(
            little > 0.89,
            "{platform} tip: {little} s on LITTLEs of 0.9 s"
        );
    }
}

/// Fork placement (`sched_balance_find_dst_cpu()`) gives each of as many always-running
/// tasks as CPUs a CPU of its own, on asymmetric and symmetric platforms, when they are
/// forked in the same instant from an idle CPU 0 and stay runnable
/// (`rtapp.main_thread=false`; rt-app's own start, where each thread sleeps at the start
/// barrier before the next fork, is tests/startup.rs).
#[test]
fn fork_placement_spreads_new_tasks_over_idle_cpus() {
    for platform in ["hikey960", "juno_r0", "hikey620", "rk3399"] {
        let n = hetsched::load_platform(platform).unwrap().nr_cpus();
        let json =
            format!(r#"{{"tasks": {{"hog": {{"instance": {n}, "loop": -1, "runtime": 10000}}}}}}"#);
        let mut s = spec(platform, &json, &["rtapp.main_thread=false"]);
        s.duration_ns = Some(50_000_000);
        let (r, tr) = traced(&s);
        let mut cpus = tr.wakeup_new_cpus();
        assert_eq!(cpus.len(), n);
        cpus.sort_unstable();
        cpus.dedup();
        assert_eq!(cpus.len(), n, "{platform}: {:?}", tr.wakeup_new_cpus());
        assert_eq!(r.placements.get("slow_path"), Some(&(n as u64)));
        assert_eq!(r.migrations["wake_up"], 0);
    }
}

/// Capacity-aware wake-up: a task of 80 % of a big CPU runs on the big CPUs once its
/// utilization is known, small tasks wake on idle CPUs at once; both for the v5.7+
/// `select_idle_capacity()` and the v4.12–v5.6 `wake_cap()` behaviour. Under `wake_cap`
/// the fast path looks for an idle CPU in the waker's LLC only: rt-app's main thread runs
/// on CPU 0 (the calibration CPU), so every fork lands in the big cluster and the five
/// tasks stay on the four bigs, where two of them meet every 80 ms (their periods' least
/// common multiple) and one waits for the other's run; those waits are left out.
#[test]
fn wake_up_placement_fits_tasks_to_capacity() {
    let json = r#"{"global": {"duration": 2}, "tasks": {
        "big": {"loop": -1, "run": 8000, "timer": {"ref": "tb", "period": 10000}},
        "small": {"instance": 4, "loop": -1, "run": 1000,
                  "timer": {"ref": "unique", "period": 16000}}}}"#;
    for (platform, bigs) in [("hikey960", 4..8), ("juno_r0", 1..3)] {
        for variant in ["v6_11", "wake_cap"] {
            let set = format!("fair.wakeup={variant}");
            let (r, tr) = traced(&spec(platform, json, &[&set]));
            let win = tr.residency(0.5, 2.0);
            let big = &win["big-0"];
            let total: f64 = big.values().sum();
            let on_big: f64 = big
                .iter()
                .filter(|(c, _)| bigs.contains(*c))
                .map(|(_, s)| s)
                .sum();
            assert!(
                on_big >= 0.99 * total,
                "{platform} {variant}: {on_big} of {total} s on bigs ({big:?})"
            );
            for t in &r.tasks {
                let lat = match variant {
                    "v6_11" => t.wakeup_latency_us.p99,
                    _ => t.wakeup_latency_us.p50,
                };
                assert!(
                    lat < 50.0,
                    "{platform} {variant}: {} p99 {} µs, p50 {} µs",
                    t.comm,
                    t.wakeup_latency_us.p99,
                    t.wakeup_latency_us.p50
                );
            }
            let fast = r.placements.get("target_idle").copied().unwrap_or(0);
            assert!(fast > 500, "{platform} {variant}: {:?}", r.placements);
        }
    }
}

/// Six hogs crowded on CPUs 0–1 by a first phase's affinity are spread over both
/// clusters of the symmetric hikey620 once they may run anywhere, under both balancer
/// versions: one task per CPU, three per cluster.
#[test]
fn balancing_spreads_hogs_over_symmetric_clusters() {
    let json = r#"{"global": {"duration": 3}, "tasks": {"hog": {"instance": 6, "phases": {
        "crowd": {"cpus": [0, 1], "loop": 1, "runtime": 200000},
        "free": {"loop": -1, "runtime": 100000}}}}}"#;
    for version in ["v5.9", "v5.10"] {
        let set = format!("balance.version={version}");
        let (_, tr) = traced(&spec("hikey620", json, &[&set]));
        let win = tr.residency(2.5, 3.0);
        let mut home = Vec::new();
        for (comm, cpus) in &win {
            let (&cpu, &s) = cpus
                .iter()
                .max_by(|a, b| a.1.partial_cmp(b.1).unwrap())
                .unwrap();
            assert!(s > 0.5 - US * 10.0, "{version}: {comm} {cpus:?}");
            home.push(cpu);
        }
        assert_eq!(home.len(), 6, "{version}: {win:?}");
        let mut distinct = home.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), 6, "{version}: {home:?}");
        let cluster0 = home.iter().filter(|&&c| c < 4).count();
        assert_eq!(cluster0, 3, "{version}: {home:?}");
    }
}

/// One line per figure the variants change: migrations and placements by reason, and per
/// task its CPU time, completion and migrations (µs).
fn summary(r: &RunResult) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "  migrations {:?}", r.migrations);
    let _ = writeln!(s, "  placements {:?}", r.placements);
    for t in &r.tasks {
        let done = t
            .completion_s
            .map_or("-".to_string(), |c| format!("{:.0}", c / US));
        let _ = writeln!(
            s,
            "  {} cpu_us={:.0} done_us={done} migr={}",
            t.comm,
            t.cpu_time_s / US,
            t.migrations
        );
    }
    s
}

/// Each balancer/placement variant on a mixed workload (a growing task, pinned hogs,
/// periodic tasks): the figures are kept in a snapshot so that any change of behaviour
/// shows in review; misfit handling must make a difference.
#[test]
fn variants_snapshot() {
    // A task growing on the LITTLEs while the first big CPU is busy, periodic tasks
    // around it, and two spinners that finish.
    let json = |littles: &str, big: usize| {
        format!(
            r#"{{"global": {{"duration": 2}}, "tasks": {{
            "grow": {{"phases": {{
                "small": {{"cpus": {littles}, "loop": 50, "run": 1000,
                           "timer": {{"ref": "t", "period": 10000}}}},
                "big": {{"loop": 1, "run": 600000}}}}}},
            "hog": {{"cpus": [{big}], "loop": 1, "phases": {{"p": {{"runtime": 700000}}}}}},
            "per": {{"instance": 3, "loop": -1, "run": 3000,
                     "timer": {{"ref": "unique", "period": 12000}}}},
            "spin": {{"instance": 2, "loop": 1, "run": 400000}}}}}}"#
        )
    };
    let variants: [(&str, &[&str]); 5] = [
        ("default", &[]),
        ("tip", &["balance.misfit=false"]),
        ("v5.9", &["balance.version=v5.9"]),
        ("wake_cap", &["fair.wakeup=wake_cap"]),
        ("cfs", &["fair.variant=cfs"]),
    ];
    let mut out = String::new();
    for (platform, littles, big) in [
        ("juno_r0", "[0, 3, 4, 5]", 1),
        ("hikey960", "[0, 1, 2, 3]", 4),
    ] {
        let mut by_variant = BTreeMap::new();
        for (name, sets) in variants {
            let r = run(&spec(platform, &json(littles, big), sets), &mut []).unwrap();
            let s = summary(&r);
            let _ = write!(out, "{platform} {name}\n{s}");
            by_variant.insert(name, s);
        }
        // Misfit handling changes what happens to the growing task.
        assert_ne!(by_variant["default"], by_variant["tip"], "{platform}");
    }
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/snapshots/lb_variants.txt"
    );
    if std::env::var_os("HETSCHED_BLESS").is_some() {
        std::fs::create_dir_all(std::path::Path::new(path).parent().unwrap()).unwrap();
        std::fs::write(path, &out).unwrap();
    }
    let want = std::fs::read_to_string(path)
        .unwrap_or_else(|_| panic!("{path} missing: run with HETSCHED_BLESS=1"));
    if want != out {
        let diff: Vec<String> = want
            .lines()
            .zip(out.lines())
            .filter(|(a, b)| a != b)
            .take(8)
            .map(|(a, b)| format!("- {a}\n+ {b}"))
            .collect();
        panic!(
            "behaviour changed (HETSCHED_BLESS=1 to accept):\n{}",
            diff.join("\n")
        );
    }
}
