//! A task's class or priority changing under it, as the kernel's class hooks handle it
//! (v6.11 `check_class_changed()`: `switched_from`/`switched_to`/`prio_changed`), read from
//! the trace: the RT pushes and pulls those hooks queue, and the fair averages of a task
//! that leaves the fair class for a while (a PI boost); and the util_est events a fair
//! dequeue fires.

// Tests panic on unexpected failures by design.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::{field, t_us, traced};

/// The first `sched_migrate_task` of `comm` from `from` to `to`.
fn migration<'a>(lines: &'a [String], comm: &str, from: &str, to: &str) -> Option<&'a String> {
    lines.iter().find(|m| {
        m.contains("sched_migrate_task:")
            && field(m, "comm") == comm
            && field(m, "orig_cpu") == from
            && field(m, "dest_cpu") == to
    })
}

/// `r3` (FIFO 30, CPUs 4–5 after its first phase) waits on CPU 5 behind `r2` (FIFO 40,
/// pinned to CPU 5) while `r1` (FIFO 50, pinned to CPU 4) runs 10 ms; then `r1` changes its
/// policy in its second phase.
const PULL: &str = r#"{ "global": { "duration": 1, "calibration": "CPU4" },
  "tasks": {
    "r1": { "policy": "SCHED_FIFO", "priority": 50, "cpus": [4], "phases": {
              "p1": { "run": 10000 },
              "p2": { POLICY, "loop": -1, "run": 30000 } } },
    "r3": { "policy": "SCHED_FIFO", "priority": 30, "phases": {
              "p1": { "cpus": [5], "run": 500 },
              "p2": { "cpus": [4, 5], "loop": -1, "run": 100000 } } },
    "r2": { "policy": "SCHED_FIFO", "priority": 40, "cpus": [5], "loop": -1,
            "sleep": 1000, "run": 20000 } } }"#;

/// Runs [`PULL`] with `r1`'s second phase `policy` and returns when `r3` moved from CPU 5
/// to CPU 4 (µs), if it did before `r2` slept.
fn pulled_at(policy: &str) -> Option<i64> {
    let json = PULL.replace("POLICY", policy);
    let sets = ["cpufreq.governor=performance", "rtapp.main_thread=false"];
    let (_, lines) = traced("hikey960", &json, 20, &sets);
    migration(&lines, "r3-1", "5", "4").map(|l| t_us(l))
}

/// `prio_changed_rt()` (kernel/sched/rt.c, v6.11): a running RT task whose priority falls
/// queues `pull_rt_task()`; `r1` drops to FIFO 5 at 10 ms, so `r3` (FIFO 30), waiting on
/// CPU 5, comes to CPU 4 at once (pushed there by CPU 5, RT_PUSH_IPI), not when `r2`
/// sleeps at 21 ms.
#[test]
fn a_running_rt_task_whose_priority_falls_pulls_a_higher_one() {
    let at = pulled_at(r#""priority": 5"#).expect("r3 was not pulled to CPU 4");
    assert!((10_000..10_100).contains(&at), "r3 moved at {at} µs");
}

/// `switched_from_rt()` (v6.11): the last RT task of an rq leaving the class queues
/// `pull_rt_task()`; `r1` becomes SCHED_OTHER at 10 ms and `r3` comes to CPU 4 at once.
#[test]
fn the_last_rt_task_leaving_the_class_pulls_a_waiting_one() {
    let at = pulled_at(r#""policy": "SCHED_OTHER""#).expect("r3 was not pulled to CPU 4");
    assert!((10_000..10_100).contains(&at), "r3 moved at {at} µs");
}

/// `switched_to_rt()` (v6.11): a queued task boosted into the RT class on an overloaded
/// rq asks for a push. The fair `l` (CPUs 4–5) holds the PI mutex `m` on CPU 4 when `h`
/// (FIFO 50, pinned to CPU 4) preempts it at 2 ms; at 3 ms `w` (FIFO 10, on CPU 6) blocks
/// on `m` and boosts `l` into the RT class behind `h`, so `l` is pushed to CPU 5, where
/// only the fair `f` runs, and finishes its critical section there instead of waiting
/// 10 ms for `h`. (Without RT_PUSH_IPI, so that the pull of `w`'s CPU as `w` blocks, which
/// cannot take `l`, does not ask CPU 4 to push.)
#[test]
fn a_task_boosted_behind_a_higher_rt_task_is_pushed() {
    let json = r#"{ "global": { "duration": 1, "calibration": "CPU4", "pi_enabled": true },
      "tasks": {
        "l": { "phases": {
                 "p1": { "cpus": [4], "run": 100 },
                 "p2": { "cpus": [4, 5], "lock": "m", "run": 8000, "unlock": "m",
                         "sleep": 100000 } } },
        "f": { "cpus": [5], "loop": -1, "run": 100000 },
        "h": { "policy": "SCHED_FIFO", "priority": 50, "cpus": [4],
               "sleep": 2000, "run": 10000, "loop": 1 },
        "w": { "policy": "SCHED_FIFO", "priority": 10, "cpus": [6],
               "sleep": 3000, "lock": "m", "run": 100, "unlock": "m", "loop": 1 } } }"#;
    let sets = [
        "cpufreq.governor=performance",
        "rtapp.main_thread=false",
        "rt.push_ipi=false",
    ];
    let (r, lines) = traced("hikey960", json, 30, &sets);
    let pushed = migration(&lines, "l-0", "4", "5").expect("l was not pushed to CPU 5");
    assert!(
        (3_000..3_100).contains(&t_us(pushed)),
        "l pushed at {} µs",
        t_us(pushed)
    );
    assert!(r.migrations["rt_push"] >= 1, "{:?}", r.migrations);
}

/// `switched_from_fair()` / `switched_to_fair()` (v6.11): a fair task boosted into the RT
/// class leaves its cfs_rq (`detach_task_cfs_rq()`) and comes back with its averages aged
/// over the time away as if it had slept (`attach_task_cfs_rq()`, ATTACH_AGE_LOAD): its
/// util is no longer tracked by the fair class while it runs as RT. `l` runs 200 ms alone
/// on CPU 4, then 48 ms of a PI-mutex section boosted by `w`: it comes back with about a
/// third of its util, not the util it had when boosted.
#[test]
fn a_boosted_fair_task_comes_back_with_its_util_aged_as_sleep() {
    let json = r#"{ "global": { "duration": 1, "calibration": "CPU4", "pi_enabled": true },
      "tasks": {
        "l": { "cpus": [4], "phases": {
                 "p1": { "run": 200000 },
                 "p2": { "lock": "m", "run": 50000, "unlock": "m", "sleep": 100000 } } },
        "w": { "policy": "SCHED_FIFO", "priority": 10, "cpus": [6],
               "sleep": 202000, "lock": "m", "run": 100, "unlock": "m", "loop": 1 } } }"#;
    let sets = ["cpufreq.governor=performance", "rtapp.main_thread=false"];
    let (_, lines) = traced("hikey960", json, 300, &sets);
    let util = |l: &str| field(l, "util").parse::<u64>().unwrap();
    let pelt = |l: &&String| l.contains("sched_pelt_se:") && field(l, "comm") == "l-0";
    // w blocks on m at 202 ms (its switch out), and is woken by l's unlock
    let blocked = lines
        .iter()
        .position(|l| {
            l.contains("sched_switch:") && field(l, "prev_comm") == "w-1" && t_us(l) > 100_000
        })
        .unwrap();
    let woken = blocked
        + lines[blocked..]
            .iter()
            .position(|l| l.contains("sched_wakeup:") && field(l, "comm") == "w-1")
            .unwrap();
    let boosted_for = t_us(&lines[woken]) - t_us(&lines[blocked]);
    assert!(boosted_for > 40_000, "boosted for {boosted_for} µs");
    let before = lines[..blocked]
        .iter()
        .rev()
        .find(pelt)
        .map(|l| util(l))
        .unwrap();
    let after = lines[woken..].iter().find(pelt).map(|l| util(l)).unwrap();
    assert!(before > 900, "util {before} when boosted");
    assert!(
        after * 100 <= before * 45,
        "util {before} when boosted, {after} after {boosted_for} µs as RT"
    );
}

/// `util_est_update()` (kernel/sched/fair.c, v6.11) returns at once unless the task sleeps
/// (DEQUEUE_SLEEP), and fires `sched_util_est_se` only at its `done:`; `util_est_dequeue()`
/// fires `sched_util_est_cfs`. Three hogs on CPUs 4–5 are moved by the balancer (dequeues
/// that are not sleeps, nor class changes) and a periodic task sleeps: every
/// `sched_util_est_se` is a sleeping task's, whose switch out as it sleeps follows.
#[test]
fn util_est_se_fires_only_for_a_task_going_to_sleep() {
    let json = r#"{ "global": { "duration": 1, "calibration": "CPU4" },
      "tasks": {
        "hog": { "instance": 3, "cpus": [4, 5], "loop": -1, "run": 100000 },
        "p": { "cpus": [4, 5], "loop": -1, "run": 3000, "timer": { "ref": "p", "period": 16000 } } } }"#;
    let (r, lines) = traced("hikey960", json, 400, &["cpufreq.governor=performance"]);
    assert!(r.migrations.values().sum::<u64>() > 0, "{:?}", r.migrations);
    let mut seen = 0;
    for (i, l) in lines.iter().enumerate() {
        if !l.contains("sched_util_est_se:") {
            continue;
        }
        seen += 1;
        let cpu = &l[l.find('[').unwrap()..=l.find(']').unwrap()];
        let comm = field(l, "comm");
        let out = lines[i..]
            .iter()
            .find(|s| s.contains("sched_switch:") && s.contains(cpu))
            .unwrap_or_else(|| panic!("no switch after {l}"));
        assert_eq!(field(out, "prev_comm"), comm, "{l}\n{out}");
        assert_ne!(field(out, "prev_state"), "0", "{l}\n{out}");
    }
    assert!(seen > 10, "{seen} sched_util_est_se events");
}

/// `sched_pi_setprio` (include/trace/events/sched.h, `rt_mutex_setprio()`): a PI boost and
/// its end are traced with the old and new priority, on the CPU of the futex operation —
/// `w`'s (CPU 6) as it blocks, `l`'s (CPU 4) as it unlocks.
#[test]
fn pi_boost_and_deboost_are_traced() {
    let json = r#"{ "global": { "duration": 1, "calibration": "CPU4", "pi_enabled": true },
      "tasks": {
        "l": { "cpus": [4], "phases": {
                 "p1": { "run": 2000 },
                 "p2": { "lock": "m", "run": 10000, "unlock": "m", "sleep": 100000 } } },
        "w": { "policy": "SCHED_FIFO", "priority": 10, "cpus": [6],
               "sleep": 5000, "lock": "m", "run": 100, "unlock": "m", "loop": 1 } } }"#;
    let sets = ["cpufreq.governor=performance", "rtapp.main_thread=false"];
    let (_, lines) = traced("hikey960", json, 30, &sets);
    let pi: Vec<&String> = lines
        .iter()
        .filter(|l| l.contains("sched_pi_setprio:"))
        .collect();
    assert_eq!(pi.len(), 2, "{pi:#?}");
    assert!(
        pi[0].contains("[006]") && pi[0].contains("comm=l-0"),
        "{}",
        pi[0]
    );
    assert_eq!(
        (field(pi[0], "oldprio"), field(pi[0], "newprio")),
        ("120", "89")
    );
    assert!(pi[1].contains("[004]"), "{}", pi[1]);
    assert_eq!(
        (field(pi[1], "oldprio"), field(pi[1], "newprio")),
        ("89", "120")
    );
    assert!(t_us(pi[0]) >= 5_000 && t_us(pi[1]) > t_us(pi[0]));
}

/// `__sched_setscheduler()` (kernel/sched/syscalls.c, v6.11) drops DEQUEUE_MOVE when the
/// effective priority stays, and the RT class's `move_entity()` then leaves the task in
/// its place in its priority's list. `a` (FIFO 10) runs on CPU 4 with `b` (FIFO 10) queued
/// behind it from the start when, at 3 ms, `a` switches to SCHED_RR at the same priority;
/// at 6 ms `c` (FIFO 50, after its 6 ms delay) preempts it for 1 ms. `a`, still at the
/// head of the list, runs again after `c`; had the change moved it to the tail, `b` would.
#[test]
fn an_rt_policy_change_at_the_same_priority_keeps_the_task_first() {
    let json = r#"{ "global": { "duration": 1, "calibration": "CPU4" },
      "tasks": {
        "a": { "policy": "SCHED_FIFO", "priority": 10, "cpus": [4], "phases": {
                 "p1": { "run": 3000 },
                 "p2": { "policy": "SCHED_RR", "priority": 10, "run": 10000,
                         "sleep": 100000 } } },
        "b": { "policy": "SCHED_FIFO", "priority": 10, "cpus": [4], "run": 5000,
               "sleep": 100000 },
        "c": { "policy": "SCHED_FIFO", "priority": 50, "cpus": [4], "delay": 6000,
               "run": 1000, "sleep": 100000 } } }"#;
    let sets = ["cpufreq.governor=performance", "rtapp.main_thread=false"];
    let (_, lines) = traced("hikey960", json, 12, &sets);
    let from_c = lines
        .iter()
        .find(|l| l.contains("sched_switch:") && field(l, "prev_comm") == "c-2" && t_us(l) > 6_000)
        .expect("c did not run at 6 ms");
    assert_eq!(field(from_c, "next_comm"), "a-0", "{from_c}");
}
