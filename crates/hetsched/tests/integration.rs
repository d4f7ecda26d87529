//! Integration tests: determinism, fairness, balancing, invariants on random workloads.

// Test helpers panic on unexpected failures by design.
#![allow(clippy::unwrap_used)]

use hetsched::hetsched_core::options::Options;
use hetsched::hetsched_core::trace::{Ctx, Interest, TraceEvent, TraceSink};
use hetsched::hetsched_core::{run, RunResult, RunSpec};
use hetsched::hetsched_trace::FtraceTextSink;
use proptest::prelude::*;

const NS: u64 = 1_000_000_000;
/// The tests here are about the work model, determinism and the engine's invariants at a fixed frequency: the performance governor keeps
/// every CPU at its highest OPP (the default, schedutil with EAS, is tested in eas.rs and
/// fidelity.rs).
const FIXED_FREQ: &str = "cpufreq.governor=performance";

fn spec(platform: &str, json: &str, sets: &[&str], secs: u64) -> RunSpec {
    RunSpec {
        platform: hetsched::load_platform(platform).unwrap(),
        workload: hetsched::hetsched_rtapp::parse_str(json, "test.json", &Default::default())
            .unwrap(),
        options: Options::default()
            .apply_sets(&[FIXED_FREQ])
            .and_then(|o| o.apply_sets(sets))
            .unwrap(),
        seed: 7,
        duration_ns: Some(secs * NS),
    }
}

fn run_traced(s: &RunSpec) -> (RunResult, Vec<u8>) {
    let mut sink = FtraceTextSink::new(Vec::new());
    let r = {
        let mut sinks: [&mut dyn TraceSink; 1] = [&mut sink];
        run(s, &mut sinks).unwrap()
    };
    (r, sink.into_inner().unwrap())
}

#[test]
fn same_spec_twice_gives_identical_bytes() {
    let w = hetsched::load_workload("demo", &Default::default()).unwrap();
    let s = RunSpec {
        platform: hetsched::load_platform("juno_r0").unwrap(),
        workload: w,
        options: Options::default(),
        seed: 42,
        duration_ns: Some(2 * NS),
    };
    let (r1, t1) = run_traced(&s);
    let (r2, t2) = run_traced(&s);
    assert!(t1.len() > 100_000, "trace too small: {}", t1.len());
    assert_eq!(t1, t2, "trace bytes differ");
    assert_eq!(hetsched::result_json(&r1), hetsched::result_json(&r2));
    // and with the CFS rules
    let mut s2 = s.clone();
    s2.options = Options::default()
        .apply_sets(&["fair.variant=cfs"])
        .unwrap();
    let (r3, t3) = run_traced(&s2);
    let (r4, t4) = run_traced(&s2);
    assert_eq!(t3, t4);
    assert_eq!(hetsched::result_json(&r3), hetsched::result_json(&r4));
    assert_ne!(r1.settings_hash, r3.settings_hash);
}

const TWO_HOGS: &str = r#"{"tasks": {
    "a": {"cpus": [4], "loop": -1, "phases": {"p": {"runtime": 100000}}},
    "b": {"cpus": [4], "loop": -1, "priority": PRIO, "phases": {"p": {"runtime": 100000}}}
}}"#;

fn share_of_a(variant: &str, nice_b: i32) -> f64 {
    let json = TWO_HOGS.replace("PRIO", &nice_b.to_string());
    let r = run(
        &spec("hikey960", &json, &[&format!("fair.variant={variant}")], 4),
        &mut [],
    )
    .unwrap();
    let a = r.tasks.iter().find(|t| t.comm == "a-0").unwrap().cpu_time_s;
    let b = r.tasks.iter().find(|t| t.comm == "b-1").unwrap().cpu_time_s;
    assert!((a + b - 4.0).abs() < 0.01, "CPU 4 fully used: {a} + {b}");
    a / (a + b)
}

#[test]
fn fair_class_shares_a_cpu_by_weight() {
    for v in ["eevdf", "cfs"] {
        let s = share_of_a(v, 0);
        assert!((s - 0.5).abs() < 0.01, "{v}: equal nice share {s}");
        // nice 0 vs nice 5: 1024 / (1024 + 335)
        let s = share_of_a(v, 5);
        assert!((s - 1024.0 / 1359.0).abs() < 0.02, "{v}: nice 5 share {s}");
    }
}

#[test]
fn periodic_balance_spreads_hogs_over_idle_cpus() {
    // Eight always-running tasks all woken on CPU 0's cluster end up one per CPU.
    let mut tasks = String::new();
    for i in 0..8 {
        if i > 0 {
            tasks.push(',');
        }
        tasks.push_str(&format!(r#""h{i}": {{"loop": -1, "run": 100000}}"#));
    }
    let json = format!(r#"{{"tasks": {{{tasks}}}}}"#);
    let r = run(&spec("hikey960", &json, &[], 3), &mut []).unwrap();
    for t in &r.tasks {
        assert!(t.cpu_time_s > 2.9, "{} got {}", t.comm, t.cpu_time_s);
    }
    for c in &r.cpus {
        assert!(c.busy_s > 2.9, "cpu {} busy {}", c.cpu, c.busy_s);
    }
}

#[test]
fn run_work_scales_with_capacity_and_frequency() {
    // run 10 ms calibrated on CPU4 (1024 @ 2362 MHz); on CPU0 (462 @ 1844 MHz) it
    // takes 10 * 1024/462 ms; at 999 MHz on CPU0 a further 1844/999. The thread's own
    // start work (`rtapp.thread_start_us`) would add to its CPU time: none here.
    let json = |cpu: usize| {
        format!(
            r#"{{"global": {{"calibration": "CPU4"}}, "tasks": {{"t": {{"cpus": [{cpu}], "loop": 10, "run": 10000, "sleep": 100000}}}}}}"#
        )
    };
    let cpu_time = |cpu: usize, sets: &[&str]| {
        let sets: Vec<&str> = sets
            .iter()
            .copied()
            .chain(["rtapp.thread_start_us=0"])
            .collect();
        let r = run(&spec("hikey960", &json(cpu), &sets, 5), &mut []).unwrap();
        r.tasks[0].cpu_time_s
    };
    assert!((cpu_time(4, &[]) - 0.1).abs() < 1e-6);
    let little = cpu_time(0, &[]);
    assert!((little - 0.1 * 1024.0 / 462.0).abs() < 1e-5, "{little}");
    let slow = cpu_time(
        0,
        &[
            "cpufreq.governor=userspace",
            "cpufreq.userspace_khz=[999000,2362000]",
        ],
    );
    assert!(
        (slow - 0.1 * 1024.0 / 462.0 * 1844.0 / 999.0).abs() < 1e-5,
        "{slow}"
    );
}

#[test]
fn work_speed_follows_work_dmips_mhz_and_the_kernel_keeps_the_capacity() {
    // docs/platforms/juno_r0-sysbench.yaml: the A53s' work at 844 DMIPS/MHz (work
    // capacity 652) while their capacity stays 446. run 10 ms calibrated on the A57 (CPU1).
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/platforms/juno_r0-sysbench.yaml"
    );
    let json = |cpu: usize| {
        format!(
            r#"{{"global": {{"calibration": "CPU1"}}, "tasks": {{"t": {{"cpus": [{cpu}], "loop": 10, "run": 10000, "sleep": 100000}}}}}}"#
        )
    };
    let cpu_time = |platform: &str, cpu: usize| {
        let sets = ["rtapp.thread_start_us=0"];
        let r = run(&spec(platform, &json(cpu), &sets, 5), &mut []).unwrap();
        r.tasks[0].cpu_time_s
    };
    assert!((cpu_time(file, 1) - 0.1).abs() < 1e-6);
    let preset = cpu_time("juno_r0", 0);
    assert!((preset - 0.1 * 1024.0 / 446.0).abs() < 1e-5, "{preset}");
    let faster = cpu_time(file, 0);
    assert!((faster - 0.1 * 1024.0 / 652.0).abs() < 1e-5, "{faster}");
    // The kernel's view is the preset's: the same capacities in the trace.
    let cap_lines = |platform: &str| {
        let (_, trace) = run_traced(&spec(platform, &json(0), &[], 1));
        String::from_utf8(trace)
            .unwrap()
            .lines()
            .filter(|l| l.contains("sched_cpu_capacity"))
            .map(|l| l.split_once(':').map_or("", |x| x.1).to_string())
            .take(6)
            .collect::<Vec<_>>()
    };
    let caps = cap_lines("juno_r0");
    assert_eq!(caps.len(), 6);
    assert!(
        caps[0].contains("cpu=0 capacity=446 capacity_orig=446"),
        "{caps:?}"
    );
    assert_eq!(caps, cap_lines(file));
}

/// Checks scheduling invariants on the event stream.
#[derive(Default)]
struct Invariants {
    last_ts: u64,
    curr: Vec<u32>,
    running_on: std::collections::HashMap<u32, u32>,
    switches: u64,
    /// (cpu, kHz) of every `cpu_frequency` event.
    freqs: Vec<(u32, u64)>,
    /// `overutilized=` values in order.
    ou: Vec<bool>,
}

impl TraceSink for Invariants {
    fn interest(&self) -> Interest {
        Interest::ALL
    }
    fn begin(&mut self, nr_cpus: usize, start_ns: u64) {
        self.curr = vec![0; nr_cpus];
        self.last_ts = start_ns;
    }
    fn record(&mut self, ctx: &Ctx<'_>, ev: &TraceEvent<'_>) {
        assert!(ctx.ts >= self.last_ts, "time went back");
        self.last_ts = ctx.ts;
        match *ev {
            TraceEvent::SchedSwitch { prev, next, .. } => {
                let cpu = ctx.cpu as usize;
                assert_eq!(
                    self.curr[cpu], prev.pid,
                    "prev is not what ran on cpu {cpu}"
                );
                if prev.pid != 0 {
                    self.running_on.remove(&prev.pid);
                }
                if next.pid != 0 {
                    assert!(
                        self.running_on.insert(next.pid, ctx.cpu).is_none(),
                        "pid {} runs on two CPUs",
                        next.pid
                    );
                }
                self.curr[cpu] = next.pid;
                self.switches += 1;
            }
            TraceEvent::SchedPeltSe { util, rbl_load, .. } => {
                assert!(
                    util <= 1024 && rbl_load <= 1024,
                    "util {util} runnable {rbl_load}"
                );
            }
            TraceEvent::SchedPeltCfs { util, .. } => {
                assert!(util <= 1024 * 64, "cfs util {util}");
            }
            TraceEvent::CpuFrequency { cpu_id, state } => self.freqs.push((cpu_id, state)),
            TraceEvent::SchedOverutilized { overutilized, .. } => self.ou.push(overutilized),
            _ => {}
        }
    }
}

fn random_workload(tasks: &[(u8, u16, u16, Option<u8>, i8)], rt: bool) -> String {
    let mut s = String::from(r#"{"tasks": {"#);
    for (i, &(kind, a, b, cpu, nice)) in tasks.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        let cpus = cpu.map_or(String::new(), |c| format!(r#""cpus": [{}], "#, c % 8));
        // kinds 6, 7 and 3 (with `rt`): SCHED_FIFO, a SCHED_DEADLINE periodic task and
        // SCHED_RR; kinds 4 and 5: SCHED_BATCH and SCHED_IDLE
        let policy = match kind % 8 {
            3 if rt => r#""policy": "SCHED_RR", "#.to_string(),
            4 => r#""policy": "SCHED_BATCH", "#.to_string(),
            5 => r#""policy": "SCHED_IDLE", "#.to_string(),
            6 if rt => r#""policy": "SCHED_FIFO", "#.to_string(),
            7 if rt => {
                r#""policy": "SCHED_DEADLINE", "dl-runtime": 600, "dl-period": 10000, "#.to_string()
            }
            _ => String::new(),
        };
        let body = match kind % 3 {
            0 => format!(
                r#""run": {}, "timer": {{"ref": "unique", "period": {}}}"#,
                a as u32 + 100,
                b as u32 * 4 + 1000
            ),
            1 => format!(r#""run": {}, "sleep": {}"#, a as u32 + 100, b as u32 + 100),
            _ => format!(
                r#""phases": {{"p": {{"runtime": {}, "sleep": {}}}}}"#,
                a as u32 * 2 + 100,
                b as u32 / 4 + 50
            ),
        };
        let prio = if policy.contains("FIFO") || policy.contains("RR") {
            (nice.unsigned_abs() % 98 + 1) as i8
        } else {
            nice % 20
        };
        let prio = if policy.contains("DEADLINE") {
            String::new()
        } else {
            format!(r#""priority": {prio}, "#)
        };
        let body = if policy.contains("DEADLINE") {
            r#""run": 300, "timer": {"ref": "unique", "period": 10000}"#.to_string()
        } else {
            body
        };
        s.push_str(&format!(
            r#""t{i}": {{{cpus}{policy}{prio}"loop": -1, {body}}}"#
        ));
    }
    s.push_str("}}");
    s
}

/// One random task: kind, two durations, an optional CPU, a nice or RT priority.
type RandomTask = (u8, u16, u16, Option<u8>, i8);

fn random_tasks() -> impl Strategy<Value = Vec<RandomTask>> {
    proptest::collection::vec(
        (
            any::<u8>(),
            any::<u16>(),
            any::<u16>(),
            proptest::option::of(any::<u8>()),
            any::<i8>(),
        ),
        1..20,
    )
}

fn random_platform() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec!["hikey960", "juno_r0", "hikey620", "rk3399"])
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, .. ProptestConfig::default() })]

    /// Random workloads under a random policy variant of [`hetsched::policy_variants`].
    #[test]
    fn invariants_hold_on_random_workloads(
        tasks in random_tasks(),
        cfs in any::<bool>(),
        platform in random_platform(),
        variant in prop::sample::select(hetsched::policy_variants()),
        rt in any::<bool>(),
    ) {
        check_invariants(&tasks, cfs, platform, &variant.1, rt)?;
    }
}

/// Every policy variant (each governor, each kernel profile, each policy choice), each
/// on two random workloads: the invariants of [`check_invariants`] hold under all.
#[test]
fn every_policy_variant_keeps_the_invariants() {
    use proptest::test_runner::{Config, TestRunner};
    for (label, sets) in hetsched::policy_variants() {
        let mut runner = TestRunner::new(Config {
            cases: 2,
            failure_persistence: None,
            ..Config::default()
        });
        runner
            .run(
                &(
                    random_tasks(),
                    any::<bool>(),
                    random_platform(),
                    any::<bool>(),
                ),
                |(tasks, cfs, platform, rt)| check_invariants(&tasks, cfs, platform, &sets, rt),
            )
            .unwrap_or_else(|e| panic!("{label}: {e}"));
    }
}

/// Runs the random workload `tasks` for 1 s under `variant` (and CFS when `cfs`) and
/// checks the engine's invariants on its events and results.
fn check_invariants(
    tasks: &[RandomTask],
    cfs: bool,
    platform: &str,
    variant: &[String],
    rt: bool,
) -> Result<(), TestCaseError> {
    let json = random_workload(tasks, rt);
    let mut sets: Vec<&str> = if cfs {
        vec!["fair.variant=cfs"]
    } else {
        vec![]
    };
    sets.extend(variant.iter().map(String::as_str));
    // HMP needs two capacity classes: the symmetric hikey620 becomes tc2 for it
    let platform = if platform == "hikey620" && sets.contains(&"hmp.enabled=true") {
        "tc2"
    } else {
        platform
    };
    let mut s = spec(platform, &json, &sets, 1);
    // the random cpus may exceed small platforms: map them in range
    let n = s.platform.nr_cpus();
    for t in &mut s.workload.tasks {
        if let Some(c) = &mut t.attrs.cpus {
            for x in c.iter_mut() {
                *x %= n;
            }
        }
        for p in &mut t.phases {
            if let Some(c) = &mut p.attrs.cpus {
                for x in c.iter_mut() {
                    *x %= n;
                }
            }
        }
    }
    let mut inv = Invariants::default();
    let r = {
        let mut sinks: [&mut dyn TraceSink; 1] = [&mut inv];
        run(&s, &mut sinks).map_err(|e| TestCaseError::fail(format!("{sets:?}: {e}")))?
    };
    prop_assert!(inv.switches > 0);
    for t in &r.tasks {
        prop_assert!(
            t.cpu_time_s <= 1.0 + 1e-9,
            "{} cpu {}",
            t.comm,
            t.cpu_time_s
        );
        prop_assert!(t.cpu_time_s + t.wait_time_s <= 1.0 + 1e-9);
        let sum: f64 = t.residency_s.iter().sum();
        prop_assert!((sum - t.cpu_time_s).abs() < 1e-9);
    }
    let busy: f64 = r.cpus.iter().map(|c| c.busy_s).sum();
    let cpu: f64 = r
        .tasks
        .iter()
        .chain(&r.kernel_threads)
        .chain(&r.main_thread)
        .map(|t| t.cpu_time_s)
        .sum();
    // work conserved: what the CPUs were busy with is what the tasks, the kernel
    // threads (sugov:N) and rt-app's main thread ran
    prop_assert!((busy - cpu).abs() < 1e-6, "busy {busy} vs tasks {cpu}");
    for c in &r.cpus {
        prop_assert!(c.busy_s <= 1.0 + 1e-9);
    }
    // Frequencies are OPPs of the CPU's domain; overutilized only reported under EAS,
    // its time within the run and one trigger per 0→1 transition at most.
    for &(cpu, khz) in &inv.freqs {
        let pd = s.platform.pd_of(cpu as usize);
        prop_assert!(
            pd.opps.iter().any(|o| o.freq_khz == khz),
            "cpu {cpu} at {khz} kHz"
        );
    }
    prop_assert!((0.0..=100.0 + 1e-9).contains(&r.overutilized.pct));
    if !r.settings.eas_enabled {
        prop_assert!(inv.ou.is_empty() && r.overutilized.triggers == 0);
    }
    let rises = inv.ou.windows(2).filter(|w| !w[0] && w[1]).count() as u64
        + u64::from(inv.ou.first() == Some(&true));
    prop_assert_eq!(r.overutilized.triggers, rises);
    // Every wake-up and fork of fair tasks went through select_task_rq_fair() once.
    if !json.contains("SCHED_") {
        // the dbs governors' kworkers are fair threads too
        let kworkers = r
            .kernel_threads
            .iter()
            .filter(|t| t.comm.starts_with("kworker/"));
        let wakeups: u64 = r.tasks.iter().chain(kworkers).map(|t| t.wakeups).sum();
        prop_assert_eq!(
            r.placements.values().sum::<u64>(),
            wakeups,
            "{:?}",
            r.placements
        );
    }
    Ok(())
}
