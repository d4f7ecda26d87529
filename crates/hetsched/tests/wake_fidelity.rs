//! Wake-up placement details of v6.11 checked from the trace: the load `wake_affine_weight()`
//! reads for the wakee, and a CPU running only SCHED_IDLE tasks as an idle one (v5.6+).

// Test helpers panic on unexpected failures by design.
#![allow(clippy::unwrap_used)]

mod common;
use common::{trace_to_end, wakeups};

/// `select_task_rq_fair()` (v6.11) does not sync the wakee before `wake_affine()`: with
/// feec not called (every CPU busy, so the root domain is overutilized),
/// `wake_affine_weight()` reads `task_h_load(p)` from before the sleep. On hikey960 `w`
/// builds a load of ~1000 on the big CPU 4 (sharing it with a hog), then sleeps ~100 ms;
/// hogs fill CPUs 1–7 and `wk` resumes `w` from the LITTLE CPU 0. With the load from
/// before the sleep prev's side is nearly empty (cpu_load(4) − 1000 ≈ 140) and CPU 4 wins;
/// the load decayed over the sleep (~115) would make the lightly loaded CPU 0 win. Nothing
/// is idle, so `select_idle_sibling()` keeps `wake_affine()`'s choice.
#[test]
fn wake_affine_weight_reads_the_wakee_load_from_before_the_sleep() {
    let hog = |cpu: usize| format!(r#""h{cpu}": {{"cpus": [{cpu}], "loop": 1, "run": 900000}}"#);
    let hogs: Vec<String> = (1..8).map(hog).collect();
    let json = format!(
        r#"{{"global": {{"duration": 1}}, "tasks": {{ {},
        "w": {{"phases": {{
            "a": {{"cpus": [4], "loop": 1, "run": 100000}},
            "b": {{"cpus": [0, 1, 2, 3, 4, 5, 6, 7], "loop": 1, "suspend": "w"}},
            "c": {{"loop": -1, "sleep": 1000000}}}}}},
        "wk": {{"cpus": [0], "phases": {{
            "a": {{"loop": 1, "sleep": 300000, "resume": "w"}},
            "b": {{"loop": -1, "sleep": 1000000}}}}}}}}}}"#,
        hogs.join(", ")
    );
    let w = wakeups(&trace_to_end("hikey960", &json, &[]), "w-7");
    let resumed: Vec<_> = w.into_iter().filter(|&(t, _)| t > 0.2).collect();
    assert_eq!(resumed.len(), 1, "{resumed:?}");
    let (at, cpu) = resumed[0];
    assert!((0.29..0.31).contains(&at), "{at}");
    assert_eq!(
        cpu, 4,
        "wake_affine_weight() keeps prev with the undecayed load"
    );
}

/// `select_idle_sibling()` takes a target running only SCHED_IDLE tasks as idle
/// (`available_idle_cpu(target) || sched_idle_cpu(target)`, v5.6+; v5.4–v5.5 too, there
/// and for prev); v4.20 has no `sched_idle_cpu()` and scans the LLC for an idle CPU. On
/// hikey620 `w` runs on CPU 0 beside a SCHED_IDLE hog pinned there, then may run anywhere
/// and sleeps 10 ms at a time: its timer wake-ups have prev = this = CPU 0 as target while
/// it sleeps there. With the rule (`kernel=v5.9`) it stays on CPU 0 and preempts the hog;
/// without (`kernel=v4.20`) its first wake-up goes to CPU 1, the first idle CPU of the
/// scan, and the later ones stay on that idle CPU. (The first ten are read: with the rule
/// an idle CPU's balance later pulls the running `w` off CPU 0 by active balance.)
#[test]
fn a_cpu_running_only_sched_idle_tasks_is_idle_to_the_wakeup_from_v5_6() {
    let json = r#"{"global": {"duration": 1}, "tasks": {
        "i": {"cpus": [0], "policy": "SCHED_IDLE", "loop": 1, "run": 900000},
        "w": {"phases": {
            "a": {"cpus": [0], "loop": 1, "run": 5000},
            "b": {"cpus": [0, 1, 2, 3, 4, 5, 6, 7], "loop": -1, "run": 1000, "sleep": 10000}}}}}"#;
    let targets = |kernel: &str| -> Vec<usize> {
        let lines = common::traced("hikey620", json, 200, &[kernel]).1;
        let w = wakeups(&lines, "w-1");
        assert!(w.len() >= 10, "{kernel}: {w:?}");
        w.into_iter().take(10).map(|(_, c)| c).collect()
    };
    assert_eq!(targets("kernel=v5.9"), [0; 10]);
    assert_eq!(targets("kernel=v4.20"), [1; 10]);
}
