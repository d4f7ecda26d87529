//! The fair load balancer of v6.11 checked from the trace: the order in which one pass
//! attaches the tasks it detached, and the nohz idle balance kick; and the engine's kept
//! group statistics checked against a recomputation (debug builds).

// Test helpers panic on unexpected failures by design.
#![allow(clippy::unwrap_used)]

mod common;
use common::{field, trace_to_end};

/// The timestamp field as printed (traces begin at 1.000000).
fn ts(line: &str) -> &str {
    line.split(']')
        .nth(1)
        .unwrap()
        .trim()
        .split(':')
        .next()
        .unwrap()
}

/// `detach_tasks()` `list_add()`s each task at the head of `env->tasks` and
/// `attach_tasks()` takes them from the head (v6.11): a pass that pulls two tasks enqueues
/// the second detached first. On hikey620 five tasks start on CPU 0 and are then allowed
/// everywhere; an idle CPU pulls two of them at once (`migrate_task`, imbalance 5 >> 1).
/// The destination's `cfs_tasks` then has the first detached at its head, so the next CPU
/// pulling from it in the same nohz pass takes the second one (from the tail) and the
/// destination runs the first.
#[test]
fn a_pass_attaches_its_tasks_in_reverse_detach_order() {
    let json = r#"{"global": {"duration": 1}, "tasks": {
        "t": {"instance": 5, "phases": {
            "a": {"cpus": [0], "loop": 1, "run": 2000},
            "b": {"cpus": [0, 1, 2, 3, 4, 5, 6, 7], "loop": 1, "run": 50000},
            "c": {"loop": -1, "sleep": 100000}}}}}"#;
    let lines = trace_to_end("hikey620", json, &[]);
    let migrations: Vec<(usize, &String)> = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l.contains("sched_migrate_task:"))
        .collect();
    // The first pass that pulls two tasks: two migrations from one source to one
    // destination at one instant, traced on the (idle) destination.
    let (i, x, y, dst) = migrations
        .windows(2)
        .find_map(|w| {
            let ((i, a), (_, b)) = (w[0], w[1]);
            let dst = field(a, "dest_cpu");
            let pulled = a.contains(&format!("[{:0>3}]", dst));
            let same = ts(a) == ts(b)
                && field(a, "orig_cpu") == field(b, "orig_cpu")
                && dst == field(b, "dest_cpu");
            (pulled && same).then(|| (i, field(a, "comm"), field(b, "comm"), dst))
        })
        .expect("a pass moving two tasks");
    let at = ts(&lines[i]);
    let on_dst = |l: &&String| ts(l) == at && l.contains(&format!("[{:0>3}]", dst));
    let first_enqueued = lines[i..]
        .iter()
        .filter(on_dst)
        .find(|l| l.contains("sched_pelt_se:"))
        .map(|l| field(l, "comm"))
        .unwrap();
    assert_eq!(first_enqueued, y, "{x} detached first, {y} attached first");
    let next = lines[i..]
        .iter()
        .filter(on_dst)
        .find(|l| l.contains("sched_switch:"))
        .map(|l| field(l, "next_comm"))
        .unwrap();
    assert_eq!(
        next, x,
        "CPU {dst} keeps the first detached, at its list's head"
    );
}

/// `kick_ilb()` (v6.11) ORs a kick's flags into those pending on the idle load balancer,
/// so a busy CPU's NOHZ_BALANCE_KICK joins the stats-only kick a lower-numbered CPU sent in
/// the same tick. On hikey960 a hog pinned to CPU 0 (one task, no misfit) sends only
/// NOHZ_STATS_KICK when the idle CPUs' blocked load is due; two tasks on CPU 4 then ask for
/// a balance. The first tick with both runs the idle CPUs' balance together with their
/// blocked-load update (`sched_cpu_capacity` from each balancing idle CPU).
#[test]
fn a_balance_kick_joins_a_stats_kick_of_the_same_tick() {
    let json = r#"{"global": {"duration": 1}, "tasks": {
        "h": {"cpus": [0], "loop": -1, "run": 100000},
        "p": {"instance": 2, "phases": {
            "a": {"cpus": [4], "loop": 1, "sleep": 32000, "run": 1000},
            "b": {"cpus": [4, 5, 6, 7], "loop": 1, "run": 100000},
            "c": {"loop": -1, "sleep": 100000}}}}}"#;
    let lines = trace_to_end("hikey960", json, &[]);
    // Both p tasks are on CPU 4 from their wake-up there after the sleep.
    let start = lines
        .iter()
        .position(|l| {
            l.contains("sched_wakeup:") && l.contains(" comm=p-1 ") && l.contains("target_cpu=004")
        })
        .unwrap();
    // The first stats pass after that: an idle CPU's blocked averages, traced by it.
    let stats = lines[start..]
        .iter()
        .find(|l| l.contains("<idle>-0") && l.contains("sched_pelt_cfs:") && field(l, "cpu") != "4")
        .unwrap();
    let at = ts(stats);
    let balanced: Vec<&str> = lines
        .iter()
        .filter(|l| l.contains("<idle>-0") && l.contains("sched_cpu_capacity:") && ts(l) == at)
        .map(|l| field(l, "cpu"))
        .collect();
    assert!(
        !balanced.is_empty(),
        "at {at} the idle CPUs update their blocked load but do not balance"
    );
}

/// Four clusters of eight CPUs (a 32-CPU machine like the `large` benchmark's): the
/// package domain's groups are whole clusters, whose statistics the engine keeps while
/// none of their CPUs changes (sim/balance/env.rs, `LbScratch`). Debug builds recompute every
/// kept group and assert it equals the kept sums, so this run checks them over periodic
/// load that the balancer spreads from cluster to cluster.
#[test]
fn kept_cluster_statistics_equal_a_recomputation() {
    use hetsched::hetsched_core::options::Options;
    use hetsched::hetsched_core::platform::Platform;
    use hetsched::hetsched_core::{run, RunSpec};
    let platform = Platform::synthetic_clusters("test-32", "4 clusters of 8", 4);
    let mut tasks = String::new();
    for i in 0..48 {
        let period = [4000, 10000, 16000, 40000][i % 4];
        let run = period * (10 + 15 * (i % 3)) / 100;
        if i > 0 {
            tasks.push(',');
        }
        tasks.push_str(&format!(
            r#""t{i}": {{"loop": -1, "run": {run}, "timer": {{"ref": "t{i}", "period": {period}}}}}"#
        ));
    }
    let json = format!(r#"{{"global": {{"duration": 1}}, "tasks": {{{tasks}}}}}"#);
    let spec = RunSpec {
        platform,
        workload: hetsched::hetsched_rtapp::parse_str(&json, "t.json", &Default::default())
            .unwrap(),
        options: Options::default(),
        seed: 1,
        duration_ns: Some(400 * common::MS),
    };
    let r = run(&spec, &mut []).unwrap();
    assert!(r.engine.events > 0);
}
