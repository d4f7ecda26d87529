//! schedutil details the second reading found different from the kernel, checked from the
//! trace: the runnable boost of the `v6.6` profile's `sugov_get_util()`, and a commit of
//! the frequency the policy already runs at.

// Test helpers panic on unexpected failures by design.
#![allow(clippy::unwrap_used)]

mod common;
use common::{field, t_us, trace_to_end, wakeups};

/// `(t µs, kHz)` of every `cpu_frequency` event of `cpu`.
fn freqs(lines: &[String], cpu: usize) -> Vec<(i64, u64)> {
    let id = cpu.to_string();
    lines
        .iter()
        .filter(|l| l.contains("cpu_frequency:") && field(l, "cpu_id") == id)
        .map(|l| (t_us(l), field(l, "state").parse().unwrap()))
        .collect()
}

/// v6.5–v6.7's `sugov_get_util()` reads `cpu_util_cfs_boost()` (runnable boosting,
/// 7d0583cf9ec7, v6.5): under `kernel=v6.6`, two CPU-bound tasks that start together on
/// juno's big CPU 1 (at its lowest OPP) wait for each other, so `runnable_avg` grows about
/// twice as fast as `util_avg` and schedutil reaches the top OPP sooner than with
/// `cpu_util_cfs()` (`cpufreq.schedutil_cfs_util=cfs`, the v6.4 form).
#[test]
fn v6_6_schedutil_reads_the_runnable_boost() {
    let json = r#"{"global": {"duration": 1}, "tasks": {
        "a": {"cpus": [1], "loop": 1, "run": 300000},
        "b": {"cpus": [1], "loop": 1, "run": 300000}}}"#;
    let to_max = |sets: &[&str]| {
        let f = freqs(&trace_to_end("juno_r0", json, sets), 1);
        f.iter()
            .find(|&&(_, khz)| khz == 1_100_000)
            .unwrap_or_else(|| panic!("{sets:?}: {f:?}"))
            .0
    };
    let base = ["kernel=v6.6", "cpufreq.start=min"];
    let boost = to_max(&base);
    let cfs = to_max(&[base[0], base[1], "cpufreq.schedutil_cfs_util=cfs"]);
    assert!(boost + 10_000 < cfs, "boost {boost} µs, cfs {cfs} µs");
}

/// A light task pinned to juno's big CPU 1, the policies started at their lowest OPP: the
/// big policy's first update is forced (`need_freq_update` after `sugov_limits()`) and
/// commits 450 MHz, the frequency it runs at.
const LIGHT_ON_BIG: &str = r#"{"global": {"duration": 1}, "tasks": {
    "a": {"cpus": [1], "loop": -1, "run": 1000, "sleep": 20000}}}"#;

/// `cpufreq_driver_fast_switch()` (v6.11) traces `cpu_frequency` for every CPU of the
/// policy even when the frequency does not change: the forced first commit of the big
/// policy (CPUs 1 and 2) shows as a second 450 MHz event after the one at the start.
#[test]
fn fast_switch_traces_a_same_frequency_commit() {
    let sets = ["cpufreq.start=min", "cpufreq.fast_switch=true"];
    let lines = trace_to_end("juno_r0", LIGHT_ON_BIG, &sets);
    let (f1, f2) = (freqs(&lines, 1), freqs(&lines, 2));
    assert_eq!(f1[0], (0, 450_000), "{f1:?}");
    let (t, khz) = f1[1];
    assert!(t > 0 && t < 1_000, "{f1:?}");
    assert_eq!(khz, 450_000, "{f1:?}");
    assert_eq!(f2[1], (t, 450_000), "{f2:?}");
}

/// On the slow path `__cpufreq_driver_target()` (v6.11) returns at once for
/// `policy->cur`: the `sugov:1` kthread woken for the forced first commit of the big
/// policy runs `sugov_work()` once (`cpufreq.kthread_cpu_us`, 10 µs) and sleeps until the
/// next request; it does not wait a transition latency (juno's 1 ms) to run again.
#[test]
fn slow_path_same_frequency_ends_at_the_driver() {
    let lines = trace_to_end("juno_r0", LIGHT_ON_BIG, &["cpufreq.start=min"]);
    let w = wakeups(&lines, "sugov:1");
    let t0 = w.first().unwrap().0;
    assert!(t0 < 0.001, "{w:?}");
    assert!(
        w.iter().all(|&(t, _)| t == t0 || t > t0 + 0.005),
        "woken again within 5 ms: {w:?}"
    );
    let runs: Vec<i64> = lines
        .iter()
        .filter(|l| l.contains("sched_switch:") && l.contains("sugov:1"))
        .take(2)
        .map(|l| t_us(l))
        .collect();
    assert_eq!(runs[1] - runs[0], 10, "{runs:?}");
    assert_eq!(freqs(&lines, 1).len(), 1, "only the start's event");
}

/// RT throttling (v6.11 defaults: 950 ms of RT per 1 s period, no RT group scheduling):
/// `sched_rt_rq_dequeue()` clears `rt_queued`, so `rt_rq_is_runnable()` is false and
/// `effective_cpu_util()` no longer forces the policy's top OPP for the throttled RT class;
/// RT (de)queues make no `cpufreq_update_util()` while throttled, the unthrottle
/// (`do_sched_rt_period_timer()` → `enqueue_top_rt_rq()`) makes one. A SCHED_FIFO hog on
/// juno's big CPU 1 beside a light fair task: during the throttled window (0.95–1 s) the
/// fair task's updates see the RT signal decay and lower the frequency; the unthrottle
/// brings the top OPP back. The fair task waited behind the hog, so its `runnable_avg`
/// would hold the top OPP too: `cpu_util_cfs()` (`cpufreq.schedutil_cfs_util=cfs`)
/// leaves the RT term alone to decide.
#[test]
fn throttled_rt_does_not_hold_the_top_opp() {
    let json = r#"{"global": {"duration": 2}, "tasks": {
        "rt": {"cpus": [1], "policy": "SCHED_FIFO", "priority": 10, "loop": 1, "runtime": 1500000},
        "f": {"cpus": [1], "loop": -1, "run": 500, "sleep": 5000}}}"#;
    let lines = trace_to_end("juno_r0", json, &["cpufreq.schedutil_cfs_util=cfs"]);
    let f = freqs(&lines, 1);
    let window: Vec<_> = f
        .iter()
        .filter(|&&(t, _)| (950_000..1_000_000).contains(&t))
        .collect();
    assert!(
        window.iter().any(|&&(_, khz)| khz < 1_100_000),
        "{window:?} in {f:?}"
    );
    let back = f.iter().find(|&&(t, _)| t >= 1_000_000).unwrap();
    assert_eq!(back.1, 1_100_000, "{f:?}");
    assert!(back.0 < 1_010_000, "{f:?}");
}

/// `(t µs, kHz)` of the frequency `cpu` runs at when each `sched_switch` to a thread
/// whose comm starts with `name` happens (the last `cpu_frequency` of `cpu` before it).
fn freq_at_runs(lines: &[String], cpu: usize, name: &str) -> Vec<(i64, u64)> {
    let id = cpu.to_string();
    let mut khz = 0;
    let mut out = Vec::new();
    for l in lines {
        if l.contains("cpu_frequency:") && field(l, "cpu_id") == id {
            khz = field(l, "state").parse().unwrap();
        } else if l.contains("sched_switch:") && field(l, "next_comm").starts_with(name) {
            out.push((t_us(l), khz));
        }
    }
    out
}

/// `cpu_bw_dl()` (kernel/sched/sched.h, v6.11) is a floor of schedutil's request
/// (`effective_cpu_util()`'s `min`, `sugov_effective_cpu_perf()`): a SCHED_DEADLINE task
/// of 3 ms every 10 ms on m1pro's P-core 2 (capacity 1024, 3036 MHz) has `dl_bw` =
/// `to_ratio(10 ms, 3 ms)` = 314572, so `running_bw × 1024 >> BW_SHIFT` = 307, which asks
/// for at least 3036 MHz × 307 / 1024 = 910 MHz, the 1056 MHz OPP. The task runs 300 µs a
/// period, its DL utilisation (`sched_pelt_dl`) stays far below 307, yet every run finds
/// the policy at 1056 MHz (`cpu_bw_dl()` was 0 here before: the lowest OPP, 600 MHz).
#[test]
fn deadline_bandwidth_is_a_frequency_floor() {
    let json = r#"{"global": {"duration": 1}, "tasks": {
        "d": {"cpus": [2], "policy": "SCHED_DEADLINE", "dl-runtime": 3000, "dl-period": 10000,
              "loop": -1, "run": 300, "timer": {"ref": "t", "period": 10000}}}}"#;
    let lines = trace_to_end("m1pro", json, &["cpufreq.start=min"]);
    let util_dl: Vec<u64> = lines
        .iter()
        .filter(|l| l.contains("sched_pelt_dl:") && field(l, "cpu") == "2")
        .map(|l| field(l, "util").parse().unwrap())
        .collect();
    assert!(!util_dl.is_empty());
    assert!(util_dl.iter().all(|&u| u < 100), "{util_dl:?}");
    let runs = freq_at_runs(&lines, 2, "d-");
    assert!(runs.len() > 90, "{runs:?}");
    assert!(runs.iter().all(|&(_, khz)| khz == 1_056_000), "{runs:?}");
}

/// The GRUB inactive timer (kernel/sched/deadline.c v6.11, `task_non_contending()` →
/// `inactive_task_timer()`): a deadline task that blocks keeps its bandwidth in
/// `running_bw` until its 0-lag time, `deadline − runtime × dl_period / dl_runtime`; only
/// then `sub_running_bw()` calls `cpufreq_update_util()` and the floor goes. On juno's
/// big CPU 1 (capacity 1024), a task of 50 ms every 100 ms (`cpu_bw_dl()` 512: 550 MHz →
/// the 625 MHz OPP) woken at `w` with a new period and running `r` ns blocks at `w + r`.
/// `update_curr_dl_se()` charges `r` scaled by the frequency (`arch_scale_freq_capacity()`
/// = 625 × 1024 / 1100 = 581) and the capacity: `c = r × 581 >> 10`, so its 0-lag time
/// is `w + 100 ms − (50 ms − c) × 2` = `w + 2c` (`w + 2r` with a wall-clock charge),
/// where the policy drops to 450 MHz — after the block, and more than the 2 ms rate limit
/// after the wake-up's raise.
#[test]
fn deadline_bandwidth_leaves_at_the_zero_lag_time() {
    let json = r#"{"global": {"duration": 1}, "tasks": {
        "d": {"cpus": [1], "policy": "SCHED_DEADLINE", "dl-runtime": 50000, "dl-period": 100000,
              "loop": -1, "run": 6000, "timer": {"ref": "t", "period": 100000}}}}"#;
    let lines = trace_to_end("juno_r0", json, &["cpufreq.fast_switch=true"]);
    let f = freqs(&lines, 1);
    let mut checked = 0;
    for w in wakeups(&lines, "d-0") {
        let w = (w.0 * 1e6).round() as i64;
        let switch = |prev: bool| {
            let key = if prev { "prev_comm" } else { "next_comm" };
            lines
                .iter()
                .filter(|l| l.contains("sched_switch:") && field(l, key) == "d-0")
                .map(|l| t_us(l))
                .find(|&t| t >= w)
                .unwrap()
        };
        let (start, block) = (switch(false), switch(true));
        let charged = ((block - start) * 1000 * 581) >> 10; // ns
        let zerolag = (w * 1000 + 2 * charged) / 1000; // µs, as the trace prints it
                                                       // 625 MHz from the wake-up to the 0-lag time, 450 MHz from it (to within the
                                                       // charge's rounding at each update)
        let at = |t: i64| f.iter().rev().find(|&&(ft, _)| ft <= t).unwrap().1;
        assert_eq!(at(w), 625_000, "wake-up at {w}: {f:?}");
        assert_eq!(
            at(zerolag - 2),
            625_000,
            "block at {block}, 0-lag {zerolag}: {f:?}"
        );
        assert!(zerolag > block + 500, "{w} {block} {zerolag}");
        assert!(
            f.iter()
                .any(|&(t, khz)| khz == 450_000 && (t - zerolag).abs() <= 1),
            "block at {block}, 0-lag {zerolag}: {f:?}"
        );
        checked += 1;
    }
    assert!(checked >= 9, "{checked}");
}

/// Two clusters of eight CPUs with one OPP each (the `large` benchmark's policies): once
/// a shared policy is at its one frequency, schedutil's aggregation computes `bw_min` only
/// for the CPUs whose `bw_min` inputs changed (the DL bandwidth, an RT task queued, the RT
/// class throttled, the rq's clamps). Debug builds recompute every CPU's kept `bw_min` at
/// each update and assert it is the same, so these runs check the marks of every writer:
/// periodic RT tasks, a deadline task, an RT hog that a short RT bandwidth throttles and
/// unthrottles, among periodic fair load; without clamps (an RT task queued raises
/// `bw_min` to the capacity) and with fair tasks that set `util_min` (the static key on:
/// the rq's clamps count, RT tasks' default `uclamp_min` 1024 among them).
#[test]
fn one_opp_policies_keep_the_bw_min_of_unchanged_cpus() {
    use hetsched::hetsched_core::options::Options;
    use hetsched::hetsched_core::platform::Platform;
    use hetsched::hetsched_core::{run, RunSpec};
    for clamps in [false, true] {
        let mut tasks = Vec::new();
        for i in 0..24 {
            let period = [4000, 10000, 16000][i % 3];
            let run = period * (10 + 15 * (i % 3)) / 100;
            let clamp = if clamps && i % 4 == 0 {
                r#", "util_min": 600"#
            } else {
                ""
            };
            tasks.push(format!(
                r#""f{i}": {{"loop": -1, "run": {run}, "timer": {{"ref": "f{i}", "period": {period}}}{clamp}}}"#
            ));
        }
        for i in 0..6 {
            tasks.push(format!(
                r#""r{i}": {{"policy": "SCHED_FIFO", "priority": {}, "loop": -1, "run": 700,
                    "timer": {{"ref": "r{i}", "period": {}}}}}"#,
                10 + i,
                3000 + 1000 * i
            ));
        }
        tasks.push(
            r#""hog": {"policy": "SCHED_FIFO", "priority": 5, "cpus": [11], "loop": -1,
                "run": 100000}"#
                .into(),
        );
        tasks.push(
            r#""d": {"policy": "SCHED_DEADLINE", "dl-runtime": 2000, "dl-period": 10000,
                "loop": -1, "run": 1500, "timer": {"ref": "d", "period": 10000}}"#
                .into(),
        );
        let json = format!(
            r#"{{"global": {{"duration": 1}}, "tasks": {{{}}}}}"#,
            tasks.join(",")
        );
        let spec = RunSpec {
            platform: Platform::synthetic_clusters("test-16", "2 clusters of 8", 2),
            workload: hetsched::hetsched_rtapp::parse_str(&json, "t.json", &Default::default())
                .unwrap(),
            options: Options::default()
                .apply_sets(&["sched.rt_runtime_us=20000", "sched.rt_period_us=40000"])
                .unwrap(),
            seed: 1,
            duration_ns: Some(300 * 1_000_000),
        };
        let r = run(&spec, &mut []).unwrap();
        assert!(
            r.engine.context_switches > 2_000,
            "{clamps}: {:?}",
            r.engine
        );
    }
}
