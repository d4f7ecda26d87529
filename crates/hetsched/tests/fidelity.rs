//! Kernel behaviours found missing by reading hetsched against Linux v6.11 (issue 14), each
//! checked from the trace of a small workload whose kernel behaviour is known.

// Test helpers panic on unexpected failures by design.
#![allow(clippy::unwrap_used)]

mod common;

use common::{field, t_us, traced, MS};
use hetsched::hetsched_core::options::Options;
use hetsched::hetsched_core::{run, RunSpec};

/// EEVDF's `update_deadline()` reschedules from every `update_curr()`, not only the tick's
/// (kernel/sched/fair.c, v6.11): a task that has used up its slice is switched out at the
/// next enqueue on its CPU. Two hogs share CPU 0 with a SCHED_IDLE task that wakes every
/// 5 ms and never preempts by itself (`check_preempt_wakeup_fair()`); the tick is 10 ms
/// and the slice 3 ms, so every wake-up finds the running hog past its slice.
#[test]
fn an_expired_slice_is_rescheduled_at_the_next_enqueue() {
    let json = r#"{ "global": { "duration": 1, "calibration": "CPU0" },
      "tasks": {
        "a": { "cpus": [0], "loop": -1, "run": 100000 },
        "b": { "cpus": [0], "loop": -1, "run": 100000 },
        "c": { "cpus": [0], "policy": "SCHED_IDLE", "loop": -1, "sleep": 5000, "run": 50 } } }"#;
    let sets = [
        "sched.hz=100",
        "fair.tunable_scaling=none",
        "fair.base_slice_ns=3000000",
        "trace.signals=false",
    ];
    let (_, lines) = traced("hikey960", json, 500, &sets);
    let mut since: Option<(String, i64)> = None; // the running hog and since when
    let (mut expired, mut switched) = (0, 0);
    for (i, l) in lines.iter().enumerate() {
        if l.contains("sched_switch:") {
            let next = field(l, "next_comm");
            since = ["a-0", "b-1"]
                .contains(&next)
                .then(|| (next.to_string(), t_us(l)));
        } else if l.contains("sched_wakeup:") && field(l, "comm") == "c-2" {
            let Some((hog, from)) = since.clone() else {
                continue;
            };
            if t_us(l) - from <= 3000 {
                continue;
            }
            expired += 1;
            let out = lines[i + 1..]
                .iter()
                .take_while(|m| t_us(m) == t_us(l))
                .any(|m| m.contains("sched_switch:") && field(m, "prev_comm") == hog);
            if out {
                switched += 1;
            }
        }
    }
    assert!(
        expired >= 5,
        "only {expired} wake-ups found a hog past its slice"
    );
    assert_eq!(
        switched, expired,
        "the hog past its slice was switched out at {switched} of {expired} wake-ups"
    );
}

/// The CFS option (v6.5): a task woken onto another CPU has its vruntime made relative to
/// its old queue's `min_vruntime` (`migrate_task_rq_fair()`) and absolute on the new one
/// (`enqueue_entity()` with ENQUEUE_MIGRATED) before `place_entity()`. `w` shares CPU 0 with
/// three hogs for a second (its queue's `min_vruntime` far ahead of CPU 1's); `k` starts on
/// CPU 1 1.5 s in and wakes `w`, which `wake_affine()` moves to CPU 1. Without the
/// renormalisation `w` keeps CPU 0's vruntime and starves for a quarter of a second.
#[test]
fn cfs_renormalises_the_vruntime_of_a_task_woken_onto_another_cpu() {
    let json = r#"{ "global": { "duration": 3, "calibration": "CPU0" },
      "tasks": {
        "h": { "instance": 3, "cpus": [0], "loop": -1, "run": 100000 },
        "w": { "phases": {
            "p1": { "cpus": [0], "run": 250000 },
            "p2": { "cpus": [0, 1], "suspend": "go", "loop": -1, "run": 100000 } } },
        "k": { "cpus": [1], "delay": 1500000, "phases": {
            "p1": { "resume": "go" },
            "p2": { "loop": -1, "run": 100000 } } } } }"#;
    let sets = [
        "fair.variant=cfs",
        "cpufreq.governor=performance",
        "trace.signals=false",
    ];
    let (_, lines) = traced("hikey620", json, 3000, &sets);
    let mig = lines
        .iter()
        .position(|l| {
            l.contains("sched_migrate_task:")
                && field(l, "comm") == "w-3"
                && field(l, "dest_cpu") == "1"
        })
        .expect("w is woken onto CPU 1");
    let ran = lines[mig..]
        .iter()
        .find(|l| l.contains("sched_switch:") && field(l, "next_comm") == "w-3")
        .expect("w runs on CPU 1");
    let wait_us = t_us(ran) - t_us(&lines[mig]);
    // sched_latency (6 ms × 4 on 8 CPUs) bounds the wait of a task placed by place_entity()
    assert!(wait_us <= 24_000, "w waited {wait_us} µs on CPU 1");
}

/// `migrate_se_pelt_lag()` (v6.11): a task woken off an idle CPU, whose clock stopped when
/// it went idle, has its blocked averages decayed to the estimated wake-up time before it
/// is attached to its new CPU. A task runs 200 ms on hikey960's LITTLE CPU 0, sleeps 32 ms,
/// and no longer fits CPU 0 at the wake-up, so it moves to a big CPU: it must arrive there
/// with its util decayed by at least the 32 ms it slept (a half), not as it went to sleep.
#[test]
fn a_task_woken_off_an_idle_cpu_arrives_with_decayed_util() {
    let json = r#"{ "global": { "duration": 1, "calibration": "CPU0" },
      "tasks": { "t": { "phases": {
        "p1": { "cpus": [0], "run": 200000 },
        "p2": { "cpus": [0, 1, 2, 3, 4, 5, 6, 7], "sleep": 32000, "run": 1000 } } } } }"#;
    let (_, lines) = traced("hikey960", json, 400, &["cpufreq.governor=performance"]);
    let util = |l: &str| field(l, "util").parse::<u64>().unwrap();
    // its sleep after the 200 ms run (not its wait at rt-app's start barrier)
    let sleep = lines
        .iter()
        .position(|l| {
            l.contains("sched_switch:") && field(l, "prev_comm") == "t-0" && t_us(l) > 100_000
        })
        .unwrap();
    let before = lines[..sleep]
        .iter()
        .rev()
        .find(|l| l.contains("sched_pelt_se:") && field(l, "comm") == "t-0")
        .map(|l| util(l))
        .unwrap();
    let mig = sleep
        + lines[sleep..]
            .iter()
            .position(|l| l.contains("sched_migrate_task:") && field(l, "comm") == "t-0")
            .expect("t moves to a big CPU at its wake-up");
    let after = lines[mig..]
        .iter()
        .find(|l| l.contains("sched_pelt_se:") && field(l, "comm") == "t-0")
        .map(|l| util(l))
        .unwrap();
    assert!(before > 500, "util {before} when it slept");
    assert!(
        after * 100 <= before * 55,
        "util {before} when it slept, {after} when attached to its new CPU 32 ms later"
    );
    // Before v6.0 (pelt.migrate_pelt_lag=false) it arrives as it went to sleep.
    let (_, lines) = traced(
        "hikey960",
        json,
        400,
        &[
            "cpufreq.governor=performance",
            "pelt.migrate_pelt_lag=false",
        ],
    );
    let mig = lines
        .iter()
        .position(|l| {
            l.contains("sched_migrate_task:") && field(l, "comm") == "t-0" && t_us(l) > 100_000
        })
        .unwrap();
    let old = lines[mig..]
        .iter()
        .find(|l| l.contains("sched_pelt_se:") && field(l, "comm") == "t-0")
        .map(|l| util(l))
        .unwrap();
    assert_eq!(old, before, "without migrate_se_pelt_lag()");
}

/// `add_nr_running()` (kernel/sched/sched.h, v6.11) sets `rd->overloaded` for a second
/// runnable task of any class, so an RT wake-up that preempts a fair task opens the
/// newidle balance (`sched_balance_newidle()` is gated by `rd->overloaded`) of the next CPU
/// to go idle. On hikey620 every CPU but 0 and 1 runs a pinned hog; `f`, allowed on CPUs
/// 0 and 1, has run alone on CPU 0 for 300 ms when the FIFO task `r` preempts it there;
/// the next time `g` blocks on CPU 1, CPU 1's newidle balance must pull `f` at once.
#[test]
fn an_rt_wakeup_beside_fair_load_lets_newidle_pull_the_preempted_task() {
    let mut tasks = vec![
        r#""f": { "cpus": [0, 1], "loop": -1, "run": 100000 }"#.to_string(),
        r#""g": { "cpus": [1], "loop": -1, "run": 3000, "sleep": 7000 }"#.to_string(),
        // the 300 ms wait is a first phase, not a `delay`: rt-app sets a thread's policy
        // after its delay and its affinity at its first phase, so r sleeps as a FIFO task
        // pinned to CPU 0 and wakes there
        r#""r": { "cpus": [0], "policy": "SCHED_FIFO", "priority": 10, "phases": {
                  "wait": { "sleep": 300000 },
                  "go": { "loop": -1, "run": 20000, "sleep": 30000 } } }"#
            .to_string(),
    ];
    for c in 2..8 {
        tasks.push(format!(
            r#""b{c}": {{ "cpus": [{c}], "loop": -1, "run": 100000 }}"#
        ));
    }
    let json = format!(
        r#"{{ "global": {{ "duration": 1, "calibration": "CPU0" }}, "tasks": {{ {} }} }}"#,
        tasks.join(",\n")
    );
    let sets = ["cpufreq.governor=performance", "trace.signals=false"];
    let (_, lines) = traced("hikey620", &json, 400, &sets);
    let preempt = lines
        .iter()
        .position(|l| {
            l.contains("sched_switch:")
                && field(l, "prev_comm") == "f-0"
                && field(l, "next_comm") == "r-2"
        })
        .expect("r preempts f on CPU 0");
    let g_blocks = lines[preempt..]
        .iter()
        .find(|l| {
            l.contains("sched_switch:")
                && field(l, "prev_comm") == "g-1"
                && field(l, "prev_state") == "1"
        })
        .map(|l| t_us(l))
        .expect("g blocks on CPU 1");
    let pulled = lines[preempt..]
        .iter()
        .find(|l| {
            l.contains("sched_migrate_task:")
                && field(l, "comm") == "f-0"
                && field(l, "dest_cpu") == "1"
        })
        .map(|l| t_us(l))
        .expect("f is pulled to CPU 1");
    assert_eq!(
        pulled,
        g_blocks,
        "f was pulled {} µs after g blocked on CPU 1",
        pulled - g_blocks
    );
}

/// `enqueue_task_fair()` (v6.11) checks the overutilized status only at a wake-up
/// (`task_new = !(flags & ENQUEUE_WAKEUP)`): a task moved by `sched_setaffinity()` (the
/// stopper, ENQUEUE_MIGRATED without ENQUEUE_WAKEUP) onto a CPU it does not fit sets
/// `rd->overutilized` at that CPU's next tick, not at the move. With the
/// `ignore_lone_task` gate its big CPU is not overutilized before the move.
#[test]
fn overutilized_is_checked_at_wakeups_not_at_a_migration() {
    let json = r#"{ "global": { "duration": 1, "calibration": "CPU0" },
      "tasks": { "t": { "phases": {
        "p1": { "cpus": [4], "run": 400000 },
        "p2": { "cpus": [0], "run": 30000 } } } } }"#;
    // No load balancing: the stopper that moves the task (and a `sugov:N` kthread) count
    // in `add_nr_running()` and overload the root domain, and CPU 4's newidle balance at
    // the move would then set the flag from its statistics, as the kernel does; this test
    // is about the enqueue's own check.
    let sets = [
        "cpufreq.governor=schedutil",
        "balance.enabled=false",
        "eas.overutilized_gate=ignore_lone_task",
        "trace.signals=false",
    ];
    let (_, lines) = traced("hikey960", json, 400, &sets);
    let moved = lines
        .iter()
        .find(|l| {
            l.contains("sched_migrate_task:")
                && field(l, "comm") == "t-0"
                && field(l, "dest_cpu") == "0"
        })
        .map(|l| t_us(l))
        .expect("t moves to CPU 0");
    let ou: Vec<i64> = lines
        .iter()
        .filter(|l| l.contains("sched_overutilized:") && field(l, "overutilized") == "1")
        .map(|l| t_us(l))
        .collect();
    assert!(
        ou.iter().all(|&t| t >= moved),
        "overutilized before the move: {ou:?}"
    );
    let first = *ou.first().expect("CPU 0 becomes overutilized");
    // the tick is on a 4 ms grid from the start (HZ=250, sched_skew_tick=0)
    assert!(first > moved, "overutilized set at the move ({moved} µs)");
    assert_eq!(
        first % 4000,
        0,
        "overutilized set off the tick, at {first} µs"
    );
}

/// The RT and DL PELT signals are updated where v6.11 updates them: their class's tick
/// (`task_tick_rt()`/`task_tick_dl()`), their put/set hooks and the blocked-average update
/// (`update_other_load_avgs()`, run by `sched_balance_softirq()`, newidle and nohz idle
/// balance), not at every tick of a fair task. A FIFO task runs 50 ms on CPU 1 and exits;
/// a fair task then runs there alone for 400 ms: `avg_rt` must decay at the periodic
/// balances only (`sched_pelt_rt` at most every few balance intervals, never per tick).
#[test]
fn the_rt_signal_decays_at_blocked_average_updates_not_at_fair_ticks() {
    let json = r#"{ "global": { "duration": 1, "calibration": "CPU0" },
      "tasks": {
        "r": { "cpus": [1], "policy": "SCHED_FIFO", "priority": 10, "loop": 1, "run": 50000 },
        "f": { "cpus": [1], "delay": 60000, "loop": 1, "run": 400000 } } }"#;
    let (_, lines) = traced("hikey620", json, 500, &["cpufreq.governor=performance"]);
    let rt: Vec<(i64, u64)> = lines
        .iter()
        .filter(|l| l.contains("sched_pelt_rt:") && field(l, "cpu") == "1")
        .map(|l| (t_us(l), field(l, "util").parse().unwrap()))
        .filter(|&(t, _)| t >= 60_000)
        .collect();
    // 100 ticks of the fair task; the busy CPU balances every 64 ms or so
    assert!(
        (2..=20).contains(&rt.len()),
        "{} sched_pelt_rt updates on CPU 1 while only a fair task ran: {rt:?}",
        rt.len()
    );
    assert!(
        rt.windows(2).all(|w| w[1].1 <= w[0].1),
        "avg_rt only decays: {rt:?}"
    );
}

/// A phase's `priority` is `set_user_nice()` (kernel/sched/syscalls.c, v6.11): the task is
/// dequeued (DEQUEUE_SAVE), reweighted (`reweight_entity()`, its lag scaled to the new
/// weight), requeued (ENQUEUE_RESTORE), and its `prio` (what `sched_switch` prints) is
/// `120 + nice`. Two hogs share CPU 0; `a` turns to nice 10 after 30 ms of work: it then
/// gets 110 / (1024 + 110) of the CPU.
#[test]
fn a_nice_change_reweights_the_task_and_shows_in_its_prio() {
    let json = r#"{ "global": { "duration": 1, "calibration": "CPU0" },
      "tasks": {
        "a": { "cpus": [0], "phases": {
            "p1": { "run": 30000 },
            "p2": { "priority": 10, "loop": -1, "run": 10000 } } },
        "b": { "cpus": [0], "loop": -1, "run": 10000 } } }"#;
    let (r, lines) = traced("hikey620", json, 1000, &["trace.signals=false"]);
    let prios: Vec<&str> = lines
        .iter()
        .filter(|l| l.contains("sched_switch:") && field(l, "prev_comm") == "a-0")
        .map(|l| field(l, "prev_prio"))
        .collect();
    assert_eq!(prios.first(), Some(&"120"), "{prios:?}");
    assert_eq!(prios.last(), Some(&"130"), "{prios:?}");
    let a = r.tasks.iter().find(|t| t.comm == "a-0").unwrap();
    // ~60 ms at an equal share for the 30 ms of p1, then 110/1134 of the remaining ~940 ms
    let expect = 0.030 + 0.940 * 110.0 / 1134.0;
    assert!(
        (a.cpu_time_s - expect).abs() < 0.015,
        "a ran {:.3} s, expected about {expect:.3} s",
        a.cpu_time_s
    );
}

/// `sched_setscheduler(SCHED_IDLE)` with an unchanged nice still changes the weight
/// (`__sched_setscheduler()` → `set_load_weight()`, `WEIGHT_IDLEPRIO` = 3): `a` turning
/// SCHED_IDLE beside a nice-0 hog gets a few thousandths of the CPU, not half.
#[test]
fn a_switch_to_sched_idle_takes_the_idle_weight() {
    let json = r#"{ "global": { "duration": 1, "calibration": "CPU0" },
      "tasks": {
        "a": { "cpus": [0], "phases": {
            "p1": { "run": 30000 },
            "p2": { "policy": "SCHED_IDLE", "loop": -1, "run": 10000 } } },
        "b": { "cpus": [0], "loop": -1, "run": 10000 } } }"#;
    let (r, _) = traced("hikey620", json, 1000, &["trace.signals=false"]);
    let a = r.tasks.iter().find(|t| t.comm == "a-0").unwrap();
    assert!(a.cpu_time_s < 0.045, "a ran {:.3} s", a.cpu_time_s);
}

/// The CFS of v5.16–v6.5 floors a SCHED_IDLE entity's slice among non-idle ones at
/// `sysctl_sched_idle_min_granularity` (0.75 ms, unscaled; `sched_slice()`), not at
/// `sysctl_sched_min_granularity` (0.75 ms × 4 = 3 ms on hikey620's 8 CPUs). A SCHED_IDLE
/// hog beside a nice-0 hog on CPU 0 under `kernel=v6.6` with `fair.variant=cfs` (v6.5's
/// rules) and a 1 ms tick: each time it is picked it runs one tick (1 ms > 0.75 ms) with
/// `fair.idle_min_granularity`, three without (v5.15 and earlier: `check_preempt_tick()`
/// waits out the 3 ms minimum granularity, then finds its vruntime far past `n`'s). The
/// stints from 10 ms on are read (at the start `i` is switched out as soon as `n` comes).
#[test]
fn a_sched_idle_task_runs_its_idle_min_granularity_under_v6_5_cfs() {
    let json = r#"{ "global": { "duration": 1, "calibration": "CPU0" },
      "tasks": {
        "n": { "cpus": [0], "loop": -1, "run": 100000 },
        "i": { "cpus": [0], "policy": "SCHED_IDLE", "loop": -1, "run": 100000 } } }"#;
    let stints = |rule: &str| -> Vec<i64> {
        let sets = [
            "kernel=v6.6",
            "fair.variant=cfs",
            rule,
            "sched.hz=1000",
            "cpufreq.fast_switch=true",
            "trace.signals=false",
        ];
        let (_, lines) = traced("hikey620", json, 2000, &sets);
        let mut start = None;
        let mut out = Vec::new();
        for l in lines.iter().filter(|l| l.contains("sched_switch:")) {
            if field(l, "next_comm") == "i-1" && t_us(l) >= 10_000 {
                start = Some(t_us(l));
            } else if field(l, "prev_comm") == "i-1" {
                out.extend(start.take().map(|s| t_us(l) - s));
            }
        }
        out
    };
    let with = stints("fair.idle_min_granularity=true");
    assert!(
        with.len() >= 3 && with.iter().all(|&d| d == 1_000),
        "{with:?}"
    );
    let without = stints("fair.idle_min_granularity=false");
    assert!(
        without.len() >= 2 && without.iter().all(|&d| d == 3_000),
        "{without:?}"
    );
}

/// v6.11's `wake_up_new_task()` enqueues without ENQUEUE_INITIAL, so a new task's first
/// request is a full slice (`place_entity()` halves it only with the flag, which v6.12
/// passes: `kernel=v6.12` or `fair.enqueue_initial`). Two hogs forked onto CPU 0 at the
/// start, a 3 ms slice and a 1 ms tick: the first runs 3 ms (v6.11), 2 ms (v6.12: its
/// deadline 1.5 ms out, seen at the next tick).
#[test]
fn a_new_task_gets_a_full_first_slice_in_v6_11() {
    let json = r#"{ "global": { "duration": 1, "calibration": "CPU0" },
      "tasks": {
        "h": { "cpus": [0], "loop": -1, "run": 100000 },
        "n": { "cpus": [0], "loop": -1, "run": 100000 } } }"#;
    let first_switch = |kernel: &str| {
        // fast switch: no `sugov:N` kthread preempting the hogs at the start; both forked
        // at once onto CPU 0 (`rtapp.main_thread=false`: rt-app's own start forks them
        // one after another and they sleep at its start barrier before running)
        let sets = [
            kernel,
            "rtapp.main_thread=false",
            "cpufreq.fast_switch=true",
            "sched.hz=1000",
            "fair.tunable_scaling=none",
            "fair.base_slice_ns=3000000",
            "trace.signals=false",
        ];
        let (_, lines) = traced("hikey620", json, 20, &sets);
        lines
            .iter()
            .filter(|l| l.contains("sched_switch:") && field(l, "prev_comm") == "h-0")
            .map(|l| t_us(l))
            .next()
            .unwrap()
    };
    assert_eq!(first_switch("kernel=v6.11"), 3000);
    assert_eq!(first_switch("kernel=v6.12"), 2000);
}

/// v6.11 ignores `sched_attr.sched_runtime` for SCHED_OTHER (`se->slice =
/// sysctl_sched_base_slice`); custom slices are v6.12 (`kernel=v6.12` or
/// `fair.custom_slice`). Two hogs share CPU 0 at HZ=1000 with a 3 ms base slice; one asks
/// for a 50 ms slice (`dl-runtime`, set by rt-app's `set_thread_param()` when the thread
/// starts): under v6.11 the run is the same as without it, under v6.12 that hog keeps the
/// CPU for its whole request (RUN_TO_PARITY) and the two alternate far less often.
#[test]
fn a_fair_dl_runtime_is_a_custom_slice_only_from_v6_12() {
    let json = |attr: &str| {
        format!(
            r#"{{ "global": {{ "duration": 1, "calibration": "CPU0" }},
              "tasks": {{
                "h": {{ "cpus": [0], "loop": -1, "run": 100000 }},
                "c": {{ "cpus": [0], {attr} "loop": -1, "run": 100000 }} }} }}"#
        )
    };
    let run = |attr: &str, kernel: &str| {
        let sets = [
            kernel,
            "sched.hz=1000",
            "fair.tunable_scaling=none",
            "fair.base_slice_ns=3000000",
            "trace.signals=false",
        ];
        let (r, _) = traced("hikey620", &json(attr), 500, &sets);
        serde_json::to_string(&(&r.tasks, r.engine.context_switches)).unwrap()
    };
    let custom = r#""dl-runtime": 50000,"#;
    assert_eq!(run(custom, "kernel=v6.11"), run("", "kernel=v6.11"));
    assert_ne!(run(custom, "kernel=v6.12"), run("", "kernel=v6.12"));
}

/// Idle CPUs' blocked load decays through the NOHZ stats kick (v6.11 `nohz_balancer_kick()`
/// → NOHZ_STATS_KICK every `LOAD_AVG_PERIOD`, `_nohz_idle_balance()` →
/// `update_nohz_stats()`), so a shared policy comes down after its busy CPU goes idle.
/// On hikey960 `a` runs 150 ms on CPU 0 and sleeps; CPU 4 stays busy (its tick kicks).
/// The LITTLE cluster's frequency must reach its lowest OPP within 100 ms of the sleep
/// (it stayed at the top one while nothing updated CPU 0's blocked load).
#[test]
fn a_shared_policy_comes_down_after_its_busy_cpu_goes_idle() {
    let json = r#"{ "global": { "duration": 1, "calibration": "CPU0" },
      "tasks": {
        "a": { "cpus": [0], "loop": -1, "run": 150000, "sleep": 10000000 },
        "h": { "cpus": [4], "loop": -1, "run": 100000 } } }"#;
    let (_, lines) = traced("hikey960", json, 600, &["trace.signals=false"]);
    // its sleep after the 150 ms run (not its wait at rt-app's start barrier)
    let slept = lines
        .iter()
        .find(|l| {
            l.contains("sched_switch:")
                && field(l, "prev_comm") == "a-0"
                && field(l, "prev_state") == "1"
                && t_us(l) > 100_000
        })
        .map(|l| t_us(l))
        .unwrap();
    let freqs: Vec<(i64, u64)> = lines
        .iter()
        .filter(|l| l.contains("cpu_frequency:") && l.ends_with("cpu_id=0"))
        .map(|l| (t_us(l), field(l, "state").parse().unwrap()))
        .collect();
    let before = freqs.iter().rev().find(|&&(t, _)| t <= slept).unwrap().1;
    assert_eq!(before, 1_844_000, "{freqs:?}");
    let lowest = freqs
        .iter()
        .find(|&&(t, f)| t > slept && f == 533_000)
        .map(|&(t, _)| t)
        .unwrap_or_else(|| panic!("never at 533 MHz after {slept} µs: {freqs:?}"));
    assert!(
        lowest - slept <= 100_000,
        "{} µs after the sleep",
        lowest - slept
    );
}

/// `_nohz_idle_balance()` (v6.11) walks the idle CPUs from the one after the idle load
/// balancer (`find_new_ilb()`: the first idle CPU) and balances the ilb itself last, "to
/// let a chance for other idle cpu to pull load". On hikey620 CPU 1 is busy, so the ilb is
/// CPU 2; two tasks on CPU 0 that may also run on CPUs 2 and 3: CPU 3 pulls first.
#[test]
fn nohz_idle_balance_starts_after_the_idle_load_balancer() {
    let json = r#"{ "global": { "duration": 1, "calibration": "CPU0" },
      "tasks": {
        "b": { "cpus": [1], "loop": -1, "run": 100000 },
        "t": { "instance": 2, "phases": {
            "p1": { "cpus": [0], "run": 30000 },
            "p2": { "cpus": [0, 2, 3], "loop": -1, "run": 100000 } } } } }"#;
    let (_, lines) = traced("hikey620", json, 200, &["trace.signals=false"]);
    let pull = lines
        .iter()
        .find(|l| {
            l.contains("sched_migrate_task:")
                && field(l, "orig_cpu") == "0"
                && field(l, "dest_cpu") != "0"
        })
        .expect("a nohz idle balance pulls one task off CPU 0");
    assert_eq!(field(pull, "dest_cpu"), "3", "{pull}");
}

/// `capacity_of()` is `rq->cpu_capacity`, which `update_cpu_capacity()` caches at balance
/// time (kernel/sched/fair.c, v6.11): `scale_rt_capacity()`, the original capacity less the
/// RT and DL pressure, traced by `sched_cpu_capacity_tp` there and nowhere else. An RT task
/// keeps CPU 1 three-quarters busy; the CPU's capacity falls as its RT signal grows, one
/// balance pass at a time, while CPUs without RT work keep their original capacity.
#[test]
fn capacity_of_is_cached_at_balance_time_with_rt_pressure() {
    let json = r#"{ "global": { "duration": 1, "calibration": "CPU0" },
      "tasks": {
        "rt": { "policy": "SCHED_FIFO", "priority": 10, "cpus": [1], "loop": -1,
                "run": 3000, "sleep": 1000 },
        "f": { "instance": 2, "cpus": [0, 1], "loop": -1, "run": 5000, "sleep": 5000 } } }"#;
    let (_, lines) = traced("hikey960", json, 1000, &["cpufreq.governor=performance"]);
    let caps: Vec<(i64, u32, u64, u64)> = lines
        .iter()
        .filter(|l| l.contains("sched_cpu_capacity:"))
        .map(|l| {
            let n = |k| field(l, k).parse::<u64>().unwrap();
            (t_us(l), n("cpu") as u32, n("capacity"), n("capacity_orig"))
        })
        .collect();
    let on = |cpu: u32| caps.iter().filter(move |c| c.1 == cpu);
    // at the start every CPU has its original capacity; then CPU 1's follows its RT load
    assert!(caps.iter().filter(|c| c.0 == 0).all(|c| c.2 == c.3));
    let last = on(1).next_back().unwrap();
    assert!(
        last.2 * 10 < last.3 * 7,
        "CPU 1 ends with capacity {} of {}: the RT pressure is not in capacity_of()",
        last.2,
        last.3
    );
    assert!(
        on(1).count() > 10,
        "CPU 1's capacity was updated {} times in 1 s",
        on(1).count()
    );
    // the updates happen at balance passes, not at every tick (HZ=250 here: 250 ticks)
    assert!(on(1).count() < 250);
    for cpu in [0, 2, 3, 4] {
        assert!(
            on(cpu).all(|c| c.2 == c.3),
            "CPU {cpu} has no RT work but lost capacity"
        );
    }
}

/// `__schedule()` picking the running task again (`sched.repick`): v6.11's
/// `__pick_next_task()` puts an RT `prev` back (`put_prev_task_rt()`, which updates the RT
/// signal) and sets it again; v6.12's `put_prev_set_next_task()` returns at once for the
/// same task. A SCHED_FIFO task alone on big CPU 4 yields after every millisecond of work
/// (`sched_yield()` requeues it and reschedules; nobody else is there): with v6.11 its CPU's
/// `sched_pelt_rt` is updated at nearly every yield (whenever a 1024 µs PELT period
/// ended), with v6.12 only at the tick (HZ=250).
#[test]
fn a_repicked_rt_task_is_put_back_and_set_again_in_v6_11() {
    let json = r#"{ "global": { "duration": 1, "calibration": "CPU0" },
      "tasks": {
        "y": { "policy": "SCHED_FIFO", "priority": 10, "cpus": [4], "loop": -1,
               "run": 1000, "yield": 0 } } }"#;
    let count = |sets: &[&str]| {
        let (_, lines) = traced("hikey960", json, 1000, sets);
        lines
            .iter()
            .filter(|l| l.contains("sched_pelt_rt:") && field(l, "cpu") == "4")
            .count()
    };
    let v611 = count(&["cpufreq.governor=performance"]);
    let v612 = count(&["cpufreq.governor=performance", "kernel=v6.12"]);
    assert!(
        v611 > 700,
        "{v611} RT signal updates in 1 s of 1 ms yields (v6.11)"
    );
    assert!(
        v612 < 300,
        "{v612} RT signal updates in 1 s (v6.12: the tick's only)"
    );
}

/// schedutil's slow path runs in the policy's `sugov:N` kthread (kernel/sched/
/// cpufreq_schedutil.c, v6.11): a SCHED_DEADLINE thread (prio -1) bound to the policy's
/// CPUs, woken through the governor's irq_work on the CPU whose update asked for a new
/// frequency; it preempts the fair task there, asks the driver and sleeps, and the
/// frequency applies one transition latency later, when the driver's completion wakes it
/// again. hikey960's cpufreq-dt has no fast switch; m1pro's apple-soc has, and no kthread.
#[test]
fn the_slow_path_runs_in_the_sugov_kthread() {
    let json = r#"{ "global": { "duration": 1, "calibration": "CPU0" },
      "tasks": { "p": { "instance": 4, "loop": -1, "run": 6000, "timer": { "ref": "unique", "period": 16000 } } } }"#;
    let p = hetsched::load_platform("hikey960").unwrap();
    let (r, lines) = traced("hikey960", json, 1000, &["trace.signals=false"]);
    let names: Vec<&str> = r.kernel_threads.iter().map(|t| t.comm.as_str()).collect();
    assert_eq!(names, ["sugov:0", "sugov:4"]);
    assert!(r.tasks.iter().all(|t| !t.comm.starts_with("sugov")));
    for (pd, name) in [(0usize, "sugov:0"), (1, "sugov:4")] {
        let cpus = &p.perf_domains[pd].cpus;
        let latency = (p.perf_domains[pd].transition_latency_ns / 1000) as i64;
        let mut asked = Vec::new(); // when the kthread went to sleep after asking
        let mut changes = 0;
        for l in &lines {
            if l.contains("sched_switch:") && field(l, "next_comm") == name {
                assert_eq!(field(l, "next_prio"), "-1");
                let cpu: usize = l.split('[').nth(1).unwrap()[..3].parse().unwrap();
                assert!(cpus.contains(&cpu), "{name} ran on CPU {cpu}");
            }
            if l.contains("sched_switch:") && field(l, "prev_comm") == name {
                asked.push(t_us(l));
            }
            if l.contains("cpu_frequency:") && field(l, "cpu_id") == cpus[0].to_string() {
                let t = t_us(l);
                if t > 0 {
                    changes += 1;
                    assert!(
                        asked.contains(&(t - latency)),
                        "{name}: a frequency applied at {t} µs, {latency} µs after no request"
                    );
                }
            }
        }
        assert!(changes >= 2, "{name}: {changes} frequency changes");
    }
    let (r, lines) = traced("m1pro", json, 300, &["trace.signals=false"]);
    assert!(r.kernel_threads.is_empty());
    assert!(!lines.iter().any(|l| l.contains("sugov")));
}

/// A running task is moved by its CPU's stopper, `migration/N`, a stop-class thread
/// (kernel/stop_machine.c, kernel/sched/stop_task.c, v6.11): misfit active balance
/// (`stop_one_cpu_nowait(active_load_balance_cpu_stop)`) and a `sched_setaffinity()` that
/// excludes the running task's CPU (`migration_cpu_stop()`). The source CPU switches from
/// the task to `migration/N` (prio 0), which emits `sched_migrate_task` and sleeps. `big`
/// starts on a LITTLE CPU of hikey960 and grows misfit; `hop` moves itself from CPU 1 to
/// CPUs 2–3 at its second phase.
#[test]
fn running_tasks_are_moved_by_the_stopper_thread() {
    let json = r#"{ "global": { "duration": 1, "calibration": "CPU4" },
      "tasks": {
        "big": { "cpus": [0, 4, 5, 6, 7], "delay": 0, "loop": -1, "run": 100000 },
        "pin": { "instance": 4, "cpus": [4, 5, 6, 7], "run": 30000, "sleep": 10000 },
        "hop": { "phases": {
            "p1": { "cpus": [1], "run": 20000 },
            "p2": { "cpus": [2, 3], "run": 20000 } } } } }"#;
    let (r, lines) = traced("hikey960", json, 1000, &["cpufreq.governor=performance"]);
    // a stopper moves a task off its own CPU; a migration to its CPU in its context is the
    // newidle balance of the `__schedule()` that switches it out (its CPU goes idle)
    let moved_by_stopper: Vec<&String> = lines
        .iter()
        .filter(|l| {
            l.contains("sched_migrate_task:")
                && l.trim_start().starts_with("migration/")
                && !l.trim_start().starts_with(&format!(
                    "migration/{}-",
                    field(l, "dest_cpu").parse::<usize>().unwrap()
                ))
        })
        .collect();
    assert!(
        r.migrations["affinity"] >= 1 && r.migrations["misfit"] >= 1,
        "{:?}",
        r.migrations
    );
    assert_eq!(
        moved_by_stopper.len() as u64,
        r.migrations["affinity"] + r.migrations["misfit"] + r.migrations["active"],
        "every active and affinity move comes from a stopper"
    );
    for m in moved_by_stopper {
        let (t, task) = (t_us(m), field(m, "comm"));
        let cpu = field(m, "orig_cpu").trim_start_matches('0').to_string();
        let stopper = format!("migration/{}", if cpu.is_empty() { "0" } else { &cpu });
        assert!(m.trim_start().starts_with(&format!("{stopper}-")), "{m}");
        let switched = lines.iter().any(|l| {
            l.contains("sched_switch:")
                && t_us(l) == t
                && field(l, "prev_comm") == task
                && field(l, "next_comm") == stopper
                && field(l, "next_prio") == "0"
        });
        assert!(
            switched,
            "{task} was not switched out for {stopper} at {t} µs"
        );
    }
}

/// `select_task_rq_rt()` with `find_lowest_rq()` over cpupri and the capacity fitness of
/// asymmetric systems (kernel/sched/rt.c, v6.11): an RT task's default `uclamp_min` is 1024
/// (`sysctl_sched_util_clamp_min_rt_default`), so on hikey960 it fits only the big CPUs and
/// is placed there at fork and wake-up; two FIFO tasks of equal priority that would share
/// a CPU are spread over the bigs (`curr_prio <= p->prio` sends the second elsewhere).
#[test]
fn rt_tasks_are_placed_on_the_biggest_cpus() {
    let json = r#"{ "global": { "duration": 1, "calibration": "CPU4" },
      "tasks": { "r": { "instance": 2, "policy": "SCHED_FIFO", "priority": 10, "loop": -1,
                        "run": 3000, "timer": { "ref": "unique", "period": 10000 } } } }"#;
    let (r, lines) = traced("hikey960", json, 1000, &["cpufreq.governor=performance"]);
    // rt-app's main thread (on CPU 4, the calibration CPU) forks the threads as SCHED_OTHER
    // onto the LITTLE CPUs; each becomes FIFO there, running, after the start barrier
    // (`switched_to_rt()` leaves a running task in place), so its first activation runs on
    // a LITTLE: 3 ms of CPU 4's work at capacity 462, 6.6 ms. Every later one is on a big.
    let first = 0.003 * 1024.0 / 462.0 + 0.0001;
    for t in &r.tasks {
        let on_big: f64 = t.residency_s[4..].iter().sum();
        assert!(
            on_big > t.cpu_time_s - first,
            "{} ran {:.3} of {:.3} s on the bigs",
            t.comm,
            on_big,
            t.cpu_time_s
        );
    }
    // never two RT tasks on one CPU at the same time: each wake-up finds a free big
    let waits: f64 = r.tasks.iter().map(|t| t.wait_time_s).sum();
    assert!(waits < 0.001, "the RT tasks waited {waits:.4} s in all");
    assert!(lines.iter().any(|l| l.contains("sched_wakeup_new:")));
    // with `sysctl_sched_util_clamp_min_rt_default` = 0 every CPU fits: the tasks stay on
    // the LITTLE CPUs the fork put them on (find_lowest_rq() is not asked to move them)
    let sets = [
        "cpufreq.governor=performance",
        "rt.util_clamp_min_rt_default=0",
    ];
    let (r, _) = traced("hikey960", json, 1000, &sets);
    for t in &r.tasks {
        let on_little: f64 = t.residency_s[..4].iter().sum();
        assert!(
            on_little > 0.9 * t.cpu_time_s,
            "{}: {:?}",
            t.comm,
            t.residency_s
        );
    }
}

/// RT push (kernel/sched/rt.c, v6.11): when a higher-priority RT task preempts a lower one
/// that may run elsewhere, `set_next_task_rt()` queues `push_rt_tasks()`, which moves the
/// preempted task to a CPU running lower-priority work. `l` (FIFO 10, CPUs 4–5) and `h`
/// (FIFO 50, pinned to CPU 4, then 10 ms of work every 20 ms) are both forked onto CPU 4;
/// `h` runs first and `l` is pushed to CPU 5 at once, where it never waits, instead of
/// waiting on CPU 4 for 10 ms every 20 ms (RT tasks are not load balanced otherwise).
#[test]
fn a_preempted_rt_task_is_pushed_to_a_free_cpu() {
    let json = r#"{ "global": { "duration": 1, "calibration": "CPU4" },
      "tasks": {
        "l": { "policy": "SCHED_FIFO", "priority": 10, "cpus": [4, 5], "loop": -1,
               "run": 50000 },
        "h": { "policy": "SCHED_FIFO", "priority": 50, "cpus": [4], "delay": 5000, "loop": -1,
               "run": 10000, "timer": { "ref": "unique", "period": 20000 } } } }"#;
    let (r, lines) = traced("hikey960", json, 500, &["cpufreq.governor=performance"]);
    let l = r.tasks.iter().find(|t| t.comm == "l-0").unwrap();
    assert!(r.migrations["rt_push"] >= 1, "{:?}", r.migrations);
    assert!(l.wait_time_s < 0.001, "l waited {:.4} s", l.wait_time_s);
    let pushed = lines.iter().any(|m| {
        m.contains("sched_migrate_task:")
            && field(m, "pid") == l.pid.to_string()
            && field(m, "orig_cpu") == "4"
            && field(m, "dest_cpu") == "5"
    });
    assert!(pushed, "l was not pushed from CPU 4 to CPU 5");
}

/// RT throttling (kernel/sched/rt.c, v6.11: `sched_rt_runtime_us` 950 000 of every
/// `sched_rt_period_us` 1 000 000 by default, RT_RUNTIME_SHARE off): a FIFO hog and a fair
/// hog share CPU 2 for 3 s; the RT class is throttled once it has run 0.95 s of a period,
/// so the fair task runs the rest, about 50 ms a second (the excess is seen at the next
/// tick, 4 ms at HZ=250). `sched.rt_runtime_us=-1` leaves it nothing.
#[test]
fn rt_throttling_leaves_fair_tasks_their_five_percent() {
    let json = r#"{ "global": { "duration": 3, "calibration": "CPU0" },
      "tasks": {
        "rt": { "policy": "SCHED_FIFO", "priority": 10, "cpus": [2], "loop": -1, "run": 100000 },
        "f": { "cpus": [2], "loop": -1, "run": 100000 } } }"#;
    let fair = |sets: &[&str]| {
        let (r, _) = traced("hikey960", json, 3000, sets);
        // the second thread (it keeps rt-app's name if it never runs)
        r.tasks.iter().find(|t| t.pid == 1002).unwrap().cpu_time_s
    };
    let throttled = fair(&["cpufreq.governor=performance", "trace.signals=false"]);
    assert!(
        (0.12..0.16).contains(&throttled),
        "the fair task ran {throttled:.3} s of 3 s beside an RT hog"
    );
    let unlimited = fair(&[
        "cpufreq.governor=performance",
        "trace.signals=false",
        "sched.rt_runtime_us=-1",
    ]);
    assert!(
        unlimited < 0.005,
        "without the limit it ran {unlimited:.3} s"
    );
}

/// Deadline run time counts against the RT bandwidth (kernel/sched/deadline.c, v6.11
/// `update_curr_dl_se()`: `if (sched_rt_bandwidth_account(rt_rq)) rt_rq->rt_time +=
/// delta_exec;`, "we share the rt bandwidth"). On hikey960's big CPU 4 at its top OPP, a
/// deadline task of 30 ms every 100 ms that always has work, a FIFO hog and a fair hog
/// share the CPU for 3 s: the deadline task runs about 0.9 s, and the RT class is throttled
/// once RT and deadline time together pass 0.95 s of a period, so the hog gets about
/// 0.65 s a second and the fair task about 0.05 s — where with the RT time alone counted
/// the hog took the 0.7 s a second the deadline task left and the fair task nothing.
#[test]
fn deadline_time_counts_against_the_rt_bandwidth() {
    let json = r#"{ "global": { "duration": 3, "calibration": "CPU0" },
      "tasks": {
        "d": { "policy": "SCHED_DEADLINE", "dl-runtime": 30000, "dl-period": 100000,
               "cpus": [4], "loop": -1, "run": 100000 },
        "rt": { "policy": "SCHED_FIFO", "priority": 10, "cpus": [4], "loop": -1, "run": 100000 },
        "f": { "cpus": [4], "loop": -1, "run": 100000 } } }"#;
    let (r, _) = traced(
        "hikey960",
        json,
        3000,
        &["cpufreq.governor=performance", "trace.signals=false"],
    );
    let cpu_time = |comm: &str| {
        r.tasks
            .iter()
            .find(|t| t.comm.starts_with(comm))
            .unwrap_or_else(|| panic!("{comm}: {:?}", r.tasks))
            .cpu_time_s
    };
    let (d, rt, f) = (cpu_time("d-"), cpu_time("rt-"), cpu_time("f-"));
    assert!((0.88..0.95).contains(&d), "deadline {d:.3} s");
    assert!(
        (1.85..2.0).contains(&rt),
        "RT hog {rt:.3} s (deadline {d:.3} s)"
    );
    assert!((0.1..0.2).contains(&f), "fair {f:.3} s (RT {rt:.3} s)");
}

/// The RT period timer reschedules a CPU with queued RT tasks whatever runs on it
/// (kernel/sched/rt.c, v6.11, no RT group scheduling: `do_sched_rt_period_timer()` "enqueues"
/// an unthrottled RT class, and one with no `rt_time` but RT tasks queued, through
/// `sched_rt_rq_enqueue()`, which ends with `resched_curr()`). A FIFO hog and a fair hog
/// share CPU 2 with a 1 ms RT period, 0.5 ms of runtime and a 4 ms tick (HZ=250): the hog's
/// run time is accounted only at its ticks, so at the first period timer after it starts
/// `rt_time` is still 0; the timer's reschedule makes `put_prev_task_rt()` account the
/// millisecond it ran, past the runtime, and the class is throttled then, one period after
/// the hog started, not at the next tick.
#[test]
fn the_rt_period_timer_reschedules_a_cpu_with_queued_rt_tasks() {
    let json = r#"{ "global": { "duration": 1, "calibration": "CPU0" },
      "tasks": {
        "rt": { "policy": "SCHED_FIFO", "priority": 10, "cpus": [2], "loop": -1, "run": 100000 },
        "f": { "cpus": [2], "loop": -1, "run": 100000 } } }"#;
    let (_, lines) = traced(
        "hikey960",
        json,
        20,
        &[
            "cpufreq.governor=performance",
            "trace.signals=false",
            "sched.rt_period_us=1000",
            "sched.rt_runtime_us=500",
        ],
    );
    // the first switch on CPU 2 to and from rt-0 as a FIFO task (prio 89; it starts fair)
    let switch = |side: &str| {
        lines
            .iter()
            .find(|l| {
                l.contains("[002]")
                    && l.contains("sched_switch:")
                    && field(l, &format!("{side}_comm")) == "rt-0"
                    && field(l, &format!("{side}_prio")) == "89"
            })
            .map(|l| t_us(l))
            .unwrap()
    };
    let (starts, throttled) = (switch("next"), switch("prev"));
    assert_ne!(starts % 4000, 0, "the hog starts between two ticks");
    assert_eq!(throttled - starts, 1000, "started at {starts} µs");
}

/// RT_RUNTIME_SHARE (kernel/sched/rt.c `balance_runtime()` → `do_balance_runtime()`,
/// on by default until v5.10): the same FIFO hog on CPU 2, out of runtime, borrows a
/// 1/8 part of each idle neighbour's spare runtime until it has the whole period, and
/// keeps it — after the first period's borrowing it is never throttled and the fair task
/// beside it starves, as on the v4.4-era kernels (`kernel=v4.4` sets it). Without the
/// neighbours' spare runtime (every CPU with its own hog) nothing can be borrowed.
#[test]
fn rt_runtime_share_lets_an_rt_hog_borrow_its_neighbours_runtime() {
    let json = r#"{ "global": { "duration": 3, "calibration": "CPU0" },
      "tasks": {
        "rt": { "policy": "SCHED_FIFO", "priority": 10, "cpus": [2], "loop": -1, "run": 100000 },
        "f": { "cpus": [2], "loop": -1, "run": 100000 } } }"#;
    let fair = |sets: &[&str]| {
        let (r, _) = traced("hikey960", json, 3000, sets);
        r.tasks.iter().find(|t| t.pid == 1002).unwrap().cpu_time_s
    };
    let base = ["cpufreq.governor=performance", "trace.signals=false"];
    let shared = fair(&[base[0], base[1], "sched.rt_runtime_share=true"]);
    assert!(
        shared < 0.005,
        "the fair task ran {shared:.3} s of 3 s beside a borrowing RT hog"
    );
    let v44 = fair(&[base[0], base[1], "kernel=v4.4"]);
    assert!(v44 < 0.005, "kernel=v4.4: the fair task ran {v44:.3} s");
    // every CPU busy with RT work: nobody has spare runtime to lend
    let all = r#"{ "global": { "duration": 3, "calibration": "CPU0" },
      "tasks": {
        "rt": { "policy": "SCHED_FIFO", "priority": 10, "instance": 8, "loop": -1, "run": 100000 },
        "f": { "cpus": [2], "loop": -1, "run": 100000 } } }"#;
    let (r, _) = traced(
        "hikey960",
        all,
        3000,
        &[base[0], base[1], "sched.rt_runtime_share=true"],
    );
    let f = r.tasks.iter().find(|t| t.pid == 1009).unwrap().cpu_time_s;
    assert!(
        (0.12..0.16).contains(&f),
        "with every CPU's runtime in use the fair task ran {f:.3} s"
    );
}

/// `__sched_setscheduler()` (kernel/sched/syscalls.c, v6.11) resets the clamps a task has
/// not set itself at every policy change (`__setscheduler_uclamp()` → `uclamp_reset()`):
/// a fair task switched to SCHED_FIFO by its phase takes RT's default `uclamp_min` of 1024,
/// so `select_task_rq_rt()`'s capacity fitness (`rt_task_fits_capacity()`) sends its
/// wake-ups to hikey960's big CPUs, whatever LITTLE CPU it ran on while fair.
#[test]
fn a_switch_to_fifo_takes_the_rt_default_uclamp_min() {
    let json = r#"{ "global": { "duration": 1, "calibration": "CPU0" },
      "tasks": {
        "s": { "phases": {
            "fair": { "cpus": [1], "loop": 5, "run": 1000, "sleep": 5000 },
            "fifo": { "policy": "SCHED_FIFO", "priority": 10, "loop": -1,
                      "run": 1000, "sleep": 9000 } } } } }"#;
    let (_, lines) = traced(
        "hikey960",
        json,
        300,
        &["cpufreq.governor=performance", "trace.signals=false"],
    );
    let cpus: Vec<usize> = lines
        .iter()
        .filter(|l| l.contains("sched_wakeup:") && field(l, "comm") == "s-0")
        .map(|l| field(l, "target_cpu").parse().unwrap())
        .collect();
    assert!(cpus.len() > 20, "{cpus:?}");
    // the 5 fair iterations sleep on CPU 1; every FIFO wake-up after them is on a big CPU
    assert!(cpus[..4].iter().all(|&c| c == 1), "{cpus:?}");
    assert!(cpus[6..].iter().all(|&c| c >= 4), "{cpus:?}");
}

/// A phase switching a task to SCHED_DEADLINE (`__sched_setscheduler()` →
/// `__setscheduler_dl_params()`, `setup_new_dl_entity()` at the ENQUEUE_RESTORE, v6.11):
/// from then on the task runs as a deadline task (`prio` -1) and the CBS gives it its
/// runtime per period, 1 ms of every 10 ms, where as a fair task alone it had the CPU.
#[test]
fn a_switch_to_deadline_runs_the_task_in_the_deadline_class() {
    let json = r#"{ "global": { "duration": 1, "calibration": "CPU0" },
      "tasks": {
        "d": { "cpus": [4], "phases": {
            "fair": { "loop": 1, "run": 20000 },
            "dl": { "policy": "SCHED_DEADLINE", "dl-runtime": 1000, "dl-period": 10000,
                    "loop": -1, "run": 100000 } } } } }"#;
    let (r, lines) = traced(
        "hikey960",
        json,
        520,
        &["cpufreq.governor=performance", "trace.signals=false"],
    );
    let prios: Vec<&str> = lines
        .iter()
        .filter(|l| l.contains("sched_switch:") && field(l, "next_pid") == "1001")
        .map(|l| field(l, "next_prio"))
        .collect();
    assert_eq!(prios.first(), Some(&"120"), "{prios:?}");
    assert!(prios.contains(&"-1"), "{prios:?}");
    // 9 ms fair (20 ms of CPU0's work on a big CPU), then its budget of 1 ms in every
    // 10 ms, overrun until the tick (HRTICK off), for the remaining 0.51 s
    let cpu = r.tasks[0].cpu_time_s;
    assert!((0.05..0.12).contains(&cpu), "CPU time {cpu} s");
}

/// `__sched_setscheduler()` returns at once when the policy and its parameters do not
/// change (v6.11): a phase that names the task's own policy changes nothing, where a
/// policy change dequeues and requeues the running task (its PELT averages updated and
/// traced). `a` shares CPU 0 with a hog and starts a phase every 200 µs of its work
/// naming SCHED_OTHER, its policy: its `sched_pelt_se` lines come from the tick and its
/// switches only (about 250 in 1 s), not from each phase start (thousands).
#[test]
fn an_unchanged_policy_changes_nothing() {
    let json = r#"{ "global": { "duration": 1, "calibration": "CPU0" },
      "tasks": {
        "a": { "cpus": [0], "loop": -1, "phases": {
            "p1": { "policy": "SCHED_OTHER", "run": 200 },
            "p2": { "policy": "SCHED_OTHER", "run": 200 } } },
        "b": { "cpus": [0], "loop": -1, "run": 100000 } } }"#;
    let (_, lines) = traced("hikey960", json, 1000, &["cpufreq.governor=performance"]);
    let updates = lines
        .iter()
        .filter(|l| l.contains("sched_pelt_se:") && field(l, "comm") == "a-0")
        .count();
    assert!(
        updates < 400,
        "{updates} PELT updates of a in 1 s: its phase starts reschedule it"
    );
}

/// SCHED_DEADLINE admission (kernel/sched/deadline.c, v6.11: `__checkparam_dl()`,
/// `sched_dl_overflow()`): rt-app's `sched_setattr()` fails with EINVAL for runtime >
/// period and with EBUSY once the root domain's bandwidth (95 % of its capacity, hikey960's
/// 4 × 1024 + 4 × 462 → 5.51 CPUs) is taken, and rt-app exits; a set that fits runs.
#[test]
fn deadline_admission_refuses_what_the_kernel_refuses() {
    let run_err = |json: &str| {
        let s = RunSpec {
            platform: hetsched::load_platform("hikey960").unwrap(),
            workload: hetsched::hetsched_rtapp::parse_str(json, "t.json", &Default::default())
                .unwrap(),
            options: Options::default(),
            seed: 1,
            duration_ns: Some(200 * MS),
        };
        run(&s, &mut []).err().map(|e| e.to_string())
    };
    let dl = |n: u32, rt: u32| {
        format!(
            r#"{{ "global": {{ "duration": 1 }}, "tasks": {{ "d": {{ "instance": {n},
            "policy": "SCHED_DEADLINE", "dl-runtime": {rt}, "dl-period": 10000, "loop": -1,
            "run": 1000, "timer": {{ "ref": "unique", "period": 10000 }} }} }} }}"#
        )
    };
    // 6 × 0.9 = 5.4 CPUs fit, a 7th does not
    assert_eq!(run_err(&dl(6, 9000)), None);
    let e = run_err(&dl(7, 9000)).unwrap();
    assert!(e.contains("EBUSY") && e.contains("rt-app exits"), "{e}");
    let e = run_err(&dl(1, 20000)).unwrap();
    assert!(e.contains("EINVAL"), "{e}");
}

/// A SCHED_DEADLINE task woken while throttled waits for its replenishment timer out of
/// the tree (kernel/sched/deadline.c, v6.11 `enqueue_dl_entity()`: `if (dl_se->dl_throttled
/// && start_dl_timer(dl_se)) return;`). A 100 µs budget every 10 ms for work that takes
/// ~1 ms at the LITTLE CPU's lowest OPP throttles it in every period: the budget is charged
/// scaled by the frequency (533 / 1844 MHz: 295) and the capacity (462), so it lasts
/// 100 µs × 1024 / 295 × 1024 / 462 = 769 µs of wall-clock time (`update_curr_dl_se()`,
/// v6.11). Before, the wake-up queued it and the replenishment queued it again, so it ran
/// on after it had blocked and was later found running on two CPUs.
#[test]
fn a_throttled_deadline_task_is_queued_once_by_its_replenishment() {
    let json = r#"{ "global": { "duration": 1, "calibration": "CPU0" },
      "tasks": { "d": { "cpus": [0, 1], "policy": "SCHED_DEADLINE", "dl-runtime": 100,
        "dl-period": 10000, "loop": -1, "run": 300,
        "timer": { "ref": "unique", "period": 10000 } } } }"#;
    let (r, lines) = traced("hikey960", json, 300, &["cpufreq.governor=powersave"]);
    let d = r.tasks.iter().find(|t| t.comm.starts_with("d-")).unwrap();
    let pid = format!("pid={}", d.pid);
    let mut running = false;
    let mut ins = 0;
    for l in &lines {
        if l.contains("sched_switch:") && l.contains(&format!("next_{pid}")) {
            assert!(!running, "switched in twice: {l}");
            running = true;
            ins += 1;
        } else if l.contains("sched_switch:") && l.contains(&format!("prev_{pid}")) {
            running = false;
        } else if l.contains("sched_wakeup:") && l.contains(&pid) {
            assert!(!running, "woken while running: {l}");
        }
    }
    // each ~1 ms run is split by the throttle over two periods: about 15 loops in 300 ms,
    // and no more than the budget, 769 µs a period in wall-clock time, plus the overrun the
    // tick lets through (HRTICK off: the exhausted budget is seen at the next tick, 4 ms at
    // most)
    assert!(ins >= 12, "{ins}");
    assert!(d.cpu_time_s <= 30.0 * 0.000_769 + 0.004, "{}", d.cpu_time_s);
}
