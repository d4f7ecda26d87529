//! The RT class against kernel/sched/rt.c and core.c (v6.11), from the trace: the pull
//! when a CPU runs out of RT work, and what a second reading of the class found (pulls
//! after a deadline task or the stopper, the
//! equal-priority wake-up preemption, the balance callbacks of a re-pick, SCHED_RR's
//! requeue and slice).

// Test helpers panic on unexpected failures by design.
#![allow(clippy::unwrap_used)]

mod common;

use common::{field, t_us, traced};

/// The first `sched_migrate_task` of `comm` from `orig` to `dest`.
fn first_move<'a>(lines: &'a [String], comm: &str, orig: &str, dest: &str) -> Option<&'a String> {
    lines.iter().find(|m| {
        m.contains("sched_migrate_task:")
            && field(m, "comm") == comm
            && field(m, "orig_cpu") == orig
            && field(m, "dest_cpu") == dest
    })
}

/// `b` (FIFO 10, CPUs 4–5 after its first phase) waits on CPU 5 behind `a` (FIFO 50,
/// pinned to CPU 5) while `c` (the JSON task given) runs 10 ms pinned to CPU 4; when `c`
/// sleeps, `b` moves to CPU 4 at once (pushed by CPU 5 with RT_PUSH_IPI, `rt.push_ipi`,
/// pulled by CPU 4 without) instead of waiting for `a` to sleep at 21 ms. Every thread is
/// created on its CPU at 0 (`rtapp.main_thread=false`), so that the times are exact.
fn b_moves_to_cpu_4_when_c_sleeps(c: &str) {
    let json = format!(
        r#"{{ "global": {{ "duration": 1, "calibration": "CPU4" }},
      "tasks": {{
        "c": {c},
        "b": {{ "policy": "SCHED_FIFO", "priority": 10, "phases": {{
                 "p1": {{ "cpus": [5], "run": 500 }},
                 "p2": {{ "cpus": [4, 5], "loop": -1, "run": 100000 }} }} }},
        "a": {{ "policy": "SCHED_FIFO", "priority": 50, "cpus": [5], "loop": -1,
               "sleep": 1000, "run": 20000 }} }} }}"#
    );
    for (ipi, reason, on) in [("true", "rt_push", "005"), ("false", "rt_pull", "004")] {
        let sets = [
            "cpufreq.governor=performance",
            "rtapp.main_thread=false",
            &format!("rt.push_ipi={ipi}"),
        ];
        let (r, lines) = traced("hikey960", &json, 30, &sets);
        let c_sleeps = lines
            .iter()
            .find(|l| l.contains("sched_switch:") && field(l, "prev_comm") == "c-0")
            .map(|l| t_us(l))
            .unwrap();
        assert_eq!(c_sleeps, 10_000);
        let moved = first_move(&lines, "b-1", "5", "4")
            .unwrap_or_else(|| panic!("rt_push_ipi={ipi}: b never moved to CPU 4"));
        assert_eq!(t_us(moved), c_sleeps, "rt_push_ipi={ipi}");
        assert!(
            moved.contains(&format!("[{on}]")),
            "rt_push_ipi={ipi}: {moved}"
        );
        assert!(
            r.migrations[reason] >= 1,
            "rt_push_ipi={ipi}: {:?}",
            r.migrations
        );
    }
}

/// RT pull (kernel/sched/rt.c, v6.11): a CPU whose RT task leaves, and that now has only
/// lower-priority work, pulls (`balance_rt()` → `pull_rt_task()`; with RT_PUSH_IPI the
/// overloaded CPU is asked to push instead). Here `c` is FIFO 30.
#[test]
fn an_rt_task_is_pulled_when_a_cpu_runs_out_of_rt_work() {
    b_moves_to_cpu_4_when_c_sleeps(
        r#"{ "policy": "SCHED_FIFO", "priority": 30, "cpus": [4], "run": 10000, "sleep": 100000 }"#,
    );
}

/// `put_prev_task_balance()` (core.c, v6.11) walks the classes from prev's down, so a
/// CPU whose deadline task leaves runs `balance_rt()`, and `need_pull_rt_task()` (the RT
/// rq's best prio 99 > the deadline prev's −1) makes it pull. Here `c` is a deadline task
/// (CPUPRI_HIGHER, so `find_lowest_rq()` skips CPU 4 while it runs).
#[test]
fn a_cpu_whose_deadline_task_sleeps_pulls_rt_work() {
    b_moves_to_cpu_4_when_c_sleeps(
        r#"{ "policy": "SCHED_DEADLINE", "dl-runtime": 12000, "dl-period": 100000,
               "cpus": [4], "run": 10000, "sleep": 100000 }"#,
    );
}

/// The same walk for the stopper: `migration/4` moves `c` (FIFO 30), which left CPU 4
/// by changing its affinity at 10 ms (`migration_cpu_stop()`); when the stopper sleeps,
/// `balance_stop()` and `balance_dl()` find nothing queued and `balance_rt()` pulls
/// (prio 99 > the stopper's 0): `b`, waiting on CPU 5 behind `a`, moves to CPU 4 then.
#[test]
fn a_cpu_whose_stopper_sleeps_pulls_rt_work() {
    let json = r#"{ "global": { "duration": 1, "calibration": "CPU4" },
      "tasks": {
        "c": { "policy": "SCHED_FIFO", "priority": 30, "phases": {
                 "p1": { "cpus": [4], "run": 10000 },
                 "p2": { "cpus": [6], "loop": -1, "run": 100000 } } },
        "b": { "policy": "SCHED_FIFO", "priority": 10, "phases": {
                 "p1": { "cpus": [5], "run": 500 },
                 "p2": { "cpus": [4, 5], "loop": -1, "run": 100000 } } },
        "a": { "policy": "SCHED_FIFO", "priority": 50, "cpus": [5], "loop": -1,
               "sleep": 1000, "run": 20000 } } }"#;
    let sets = ["cpufreq.governor=performance", "rtapp.main_thread=false"];
    let (_, lines) = traced("hikey960", json, 30, &sets);
    let stop = lines
        .iter()
        .find(|l| l.contains("sched_switch:") && field(l, "prev_comm") == "migration/4")
        .unwrap_or_else(|| panic!("migration/4 never ran"));
    let c_moved = first_move(&lines, "c-0", "4", "6").unwrap();
    assert_eq!(t_us(c_moved), 10_000);
    let moved =
        first_move(&lines, "b-1", "5", "4").unwrap_or_else(|| panic!("b never moved to CPU 4"));
    assert_eq!(t_us(moved), t_us(stop), "{moved}");
}

/// `wakeup_preempt_rt()` → `check_preempt_equal_prio()` (rt.c, v6.11): `p` (FIFO 20,
/// pinned to CPU 4) wakes at 2 ms on CPU 4, where `a` (FIFO 20, CPUs 4–5) runs, while
/// CPU 5 runs only the fair hog `f`. `a` could move (cpupri finds CPU 5) and `p` cannot,
/// so `p` goes to the head of its list and preempts at once; `set_next_task_rt()`'s push
/// moves `a` to CPU 5. Without it `p` would wait for `a`, which never sleeps.
#[test]
fn a_pinned_rt_task_preempts_a_movable_one_of_its_priority() {
    let json = r#"{ "global": { "duration": 1, "calibration": "CPU4" },
      "tasks": {
        "p": { "policy": "SCHED_FIFO", "priority": 20, "cpus": [4], "phases": {
                 "d": { "loop": 1, "sleep": 2000 },
                 "l": { "loop": -1, "run": 1000, "timer": { "ref": "tp", "period": 10000 } } } },
        "a": { "policy": "SCHED_FIFO", "priority": 20, "phases": {
                 "p1": { "cpus": [4], "run": 500 },
                 "p2": { "cpus": [4, 5], "loop": -1, "run": 100000 } } },
        "f": { "cpus": [5], "loop": -1, "run": 100000 } } }"#;
    let sets = ["cpufreq.governor=performance", "rtapp.main_thread=false"];
    let (r, lines) = traced("hikey960", json, 30, &sets);
    let woke = lines
        .iter()
        .find(|l| l.contains("sched_wakeup:") && field(l, "comm") == "p-0")
        .unwrap();
    assert_eq!(t_us(woke), 2_000, "{woke}");
    assert!(woke.contains("target_cpu=004"), "{woke}");
    let ran = lines
        .iter()
        .find(|l| l.contains("sched_switch:") && field(l, "next_comm") == "p-0" && t_us(l) >= 2_000)
        .unwrap();
    assert_eq!(t_us(ran), 2_000, "{ran}");
    assert_eq!(field(ran, "prev_comm"), "a-1", "{ran}");
    let pushed =
        first_move(&lines, "a-1", "4", "5").unwrap_or_else(|| panic!("a never left CPU 4"));
    assert_eq!(t_us(pushed), 2_000, "{pushed}");
    assert!(r.migrations["rt_push"] >= 1, "{:?}", r.migrations);
}

/// `l` (FIFO 10) leaves CPU 6 at 2 ms by narrowing its affinity to CPUs 4–5, and
/// `migration_cpu_stop()` puts it on CPU 4 (`cpumask_any_and_distribute()`), queued behind
/// `h` (the JSON task given, pinned to CPU 4), with no push (a migration is not a wake-up)
/// and, without RT_PUSH_IPI, no pull by CPU 6 (`l` may not run there). Runs `ms` and
/// checks `l`'s move to CPU 4.
fn l_behind_h_on_cpu_4(h: &str, ms: u64) -> (hetsched::hetsched_core::RunResult, Vec<String>) {
    let json = format!(
        r#"{{ "global": {{ "duration": 1, "calibration": "CPU4" }},
      "tasks": {{
        "h": {h},
        "l": {{ "policy": "SCHED_FIFO", "priority": 10, "phases": {{
                 "p1": {{ "cpus": [6], "run": 2000 }},
                 "p2": {{ "cpus": [4, 5], "loop": -1, "run": 100000 }} }} }} }} }}"#
    );
    let sets = [
        "cpufreq.governor=performance",
        "rtapp.main_thread=false",
        "rt.push_ipi=false",
    ];
    let (r, lines) = traced("hikey960", &json, ms, &sets);
    let to4 =
        first_move(&lines, "l-1", "6", "4").unwrap_or_else(|| panic!("l never went to CPU 4"));
    assert_eq!(t_us(to4), 2_000, "{to4}");
    (r, lines)
}

/// `__schedule()`'s `prev == next` branch runs the balance callbacks (core.c, v6.11), so
/// the push `set_next_task_rt()` queues for a re-picked RT task runs. `l` (FIFO 10) leaves
/// CPU 6 at 2 ms by narrowing its affinity to CPUs 4–5; `migration_cpu_stop()` puts it
/// on CPU 4 (`cpumask_any_and_distribute()`), queued behind `h` (FIFO 50, pinned to CPU 4),
/// with no push (a migration is not a wake-up) and, without RT_PUSH_IPI, no pull by CPU 6
/// (`l` may not run there). `h` yields every 1 ms with no peer of its priority and is
/// picked again: the re-pick's push moves `l` to the idle CPU 5 at `h`'s next yield.
#[test]
fn a_re_picked_rt_task_pushes() {
    let (r, lines) = l_behind_h_on_cpu_4(
        r#"{ "policy": "SCHED_FIFO", "priority": 50, "cpus": [4], "loop": -1,
               "run": 1000, "yield": "" }"#,
        30,
    );
    let to5 = first_move(&lines, "l-1", "4", "5").unwrap_or_else(|| panic!("l never left CPU 4"));
    assert!((2_000..=3_000).contains(&t_us(to5)), "{to5}");
    assert!(r.migrations["rt_push"] >= 1, "{:?}", r.migrations);
}

/// `task_tick_rt()` (rt.c, v6.11) requeues a SCHED_RR task whose slice ran out, and
/// reschedules, only when another task shares its priority
/// (`rt_se->run_list.prev != rt_se->run_list.next`). `h` (SCHED_RR 50, pinned to CPU 4)
/// runs without a break; `l` (FIFO 10) comes to CPU 4 at 2 ms as in
/// [`a_re_picked_rt_task_pushes`] (no push, no pull without RT_PUSH_IPI). A queued task of
/// another priority does not make `h`'s slice ends reschedule, so no re-pick pushes `l`:
/// it waits on CPU 4 and never reaches the idle CPU 5.
#[test]
fn an_rr_slice_end_with_no_peer_of_its_priority_does_not_reschedule() {
    let (r, lines) = l_behind_h_on_cpu_4(
        r#"{ "policy": "SCHED_RR", "priority": 50, "cpus": [4], "loop": -1,
               "run": 100000 }"#,
        350,
    );
    assert!(
        first_move(&lines, "l-1", "4", "5").is_none(),
        "l was pushed"
    );
    let l = r.tasks.iter().find(|t| t.comm == "l-1").unwrap();
    assert!(l.cpu_time_s < 0.003, "l ran {:.4} s", l.cpu_time_s);
}

/// The SCHED_RR slice is `RR_TIMESLICE` = `100 * HZ / 1000` jiffies (include/linux/sched/rt.h,
/// v6.11), counted down at each tick: at HZ 300 that is 30 ticks, 99.99 ms, not the 31
/// ticks (103.3 ms) that 100 ms in ns takes when a tick is 3 333 333 ns. Two SCHED_RR tasks
/// of one priority pinned to CPU 4 take turns every 30 ticks.
#[test]
fn the_rr_slice_is_counted_in_jiffies() {
    let json = r#"{ "global": { "duration": 1, "calibration": "CPU4" },
      "tasks": {
        "r1": { "policy": "SCHED_RR", "priority": 20, "cpus": [4], "loop": -1, "run": 100000 },
        "r2": { "policy": "SCHED_RR", "priority": 20, "cpus": [4], "loop": -1, "run": 100000 } } }"#;
    for (hz, tick_ns) in [(300u64, 3_333_333u64), (250, 4_000_000), (100, 10_000_000)] {
        let hz_set = format!("sched.hz={hz}");
        let sets = [
            "cpufreq.governor=performance",
            "rtapp.main_thread=false",
            &hz_set,
        ];
        let (_, lines) = traced("hikey960", json, 700, &sets);
        let turns: Vec<i64> = lines
            .iter()
            .filter(|l| {
                l.contains("sched_switch:")
                    && field(l, "prev_comm").starts_with('r')
                    && field(l, "next_comm").starts_with('r')
            })
            .map(|l| t_us(l))
            .collect();
        assert!(turns.len() >= 5, "HZ {hz}: {turns:?}");
        let slice_us = ((100 * hz / 1000) * tick_ns / 1000) as i64;
        for w in turns.windows(2) {
            assert!((w[1] - w[0] - slice_us).abs() <= 1, "HZ {hz}: {turns:?}");
        }
    }
}

/// `do_start_rt_bandwidth()` (rt.c, v6.11) restarts an idle RT period timer with
/// `hrtimer_forward_now(timer, 0)`, which leaves an expiry still ahead alone: the timer
/// keeps its old phase. `x` (FIFO) runs 1 ms at 0, starting the timer (at once, then every
/// second); at 1 s its 1 ms is paid back and, nothing RT being left, the timer stops with
/// its expiry at 2 s. The hog `h` (FIFO, CPU 4) starts at 1.5 s: the timer restarts for
/// 2 s, where `rt_time` (0.5 s) is paid back, so `h` is throttled 950 ms later, at
/// 2.95 s (the tick that sees it), until 3 s — not at 2.45 s, as a timer fired anew at
/// 1.5 s would have it.
#[test]
fn a_restarted_rt_period_timer_keeps_its_phase() {
    let json = r#"{ "global": { "duration": 4, "calibration": "CPU4" },
      "tasks": {
        "x": { "policy": "SCHED_FIFO", "priority": 10, "cpus": [5], "loop": 1, "run": 1000 },
        "h": { "policy": "SCHED_FIFO", "priority": 10, "cpus": [4], "delay": 1500000,
               "loop": 1, "run": 2000000 } } }"#;
    let sets = ["cpufreq.governor=performance", "rtapp.main_thread=false"];
    let (_, lines) = traced("hikey960", json, 3200, &sets);
    let throttled: Vec<i64> = lines
        .iter()
        .filter(|l| {
            l.contains("sched_switch:")
                && field(l, "prev_comm") == "h-1"
                && field(l, "prev_state") == "0"
        })
        .map(|l| t_us(l))
        .collect();
    assert!(!throttled.is_empty(), "h was never throttled");
    let first = throttled[0];
    assert!((2_950_000..2_955_000).contains(&first), "{throttled:?}");
    let back = lines
        .iter()
        .find(|l| l.contains("sched_switch:") && field(l, "next_comm") == "h-1" && t_us(l) > first)
        .map(|l| t_us(l))
        .unwrap();
    assert_eq!(back, 3_000_000);
}
