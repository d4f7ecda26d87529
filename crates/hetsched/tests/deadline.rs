//! The deadline class's placement against kernel/sched/deadline.c (v6.11): capacity
//! fitness at wake-up (`select_task_rq_dl()` → `find_later_rq()` → `cpudl_find()`), pull
//! when a CPU's deadline task leaves (`balance_dl()` → `pull_dl_task()`), and push of a
//! preempted deadline task (`set_next_task_dl()` → `push_dl_tasks()`); the CBS budget's
//! scaled charge (`update_curr_dl_se()` → `dl_scaled_delta_exec()` form).

// Test helpers panic on unexpected failures by design.
#![allow(clippy::unwrap_used)]

mod common;

use common::{field, t_us, traced};

const SETS: [&str; 2] = ["cpufreq.governor=performance", "trace.signals=false"];

/// (time µs, CPU) of each `sched_switch` to a thread whose comm starts with `name`.
fn runs_of(lines: &[String], name: &str) -> Vec<(i64, usize)> {
    lines
        .iter()
        .filter(|l| l.contains("sched_switch:") && field(l, "next_comm").starts_with(name))
        .map(|l| {
            let cpu = l.split('[').nth(1).unwrap()[..3].parse().unwrap();
            (t_us(l), cpu)
        })
        .collect()
}

/// On hikey960 (LITTLE capacity 462) a deadline task of density 0.7 (7 ms every 10 ms;
/// `dl_density >> 10` = 716) fits only the big CPUs: woken on a LITTLE CPU it goes to a
/// free big one (`dl_task_fits_capacity()` is false, `cpudl_find()` keeps the fitting free
/// CPUs), and stays there.
#[test]
fn a_deadline_task_that_does_not_fit_a_little_cpu_wakes_on_a_big_one() {
    let json = r#"{ "global": { "duration": 1, "calibration": "CPU0" },
      "tasks": { "d": { "phases": {
        "pin": { "cpus": [0], "loop": 1, "run": 1000 },
        "dl": { "cpus": [0, 1, 2, 3, 4, 5, 6, 7], "policy": "SCHED_DEADLINE",
                "dl-runtime": 7000, "dl-period": 10000, "loop": -1,
                "run": 3000, "timer": { "ref": "t", "period": 10000 } } } } } }"#;
    let (r, lines) = traced("hikey960", json, 200, &SETS);
    let cpus: Vec<usize> = lines
        .iter()
        .filter(|l| l.contains("sched_wakeup:") && field(l, "comm").starts_with("d-"))
        .map(|l| field(l, "target_cpu").parse().unwrap())
        .collect();
    assert!(cpus.len() > 15, "{cpus:?}");
    assert!(
        cpus.iter().all(|&c| c >= 4),
        "wake-ups on LITTLE CPUs: {cpus:?}"
    );
    assert!(r.migrations["wake_up"] >= 1, "{:?}", r.migrations);
}

/// hikey620 (one capacity). Every 10 ms: `a` (pinned to CPU 0, deadline 3 ms, runs 1 ms),
/// `c` (pinned to CPU 1, deadline 4 ms, runs 2 ms) and `b` (CPUs 0–1, deadline 10 ms, runs
/// 1 ms, started on CPU 1). `b` wakes behind a pinned task with an earlier deadline on
/// either CPU, so `select_task_rq_dl()` finds no later rq and it waits. When `a` sleeps,
/// CPU 0's `balance_dl()` pulls `b` from CPU 1 (`pull_dl_task()`); from then on `b` waits
/// only for `a`, 1 ms — never for `c`'s 2 ms, as it would without the pull.
#[test]
fn a_cpu_whose_deadline_task_sleeps_pulls_a_waiting_one() {
    let json = r#"{ "global": { "duration": 1, "calibration": "CPU0" },
      "tasks": {
        "a": { "cpus": [0], "policy": "SCHED_DEADLINE", "dl-runtime": 2500,
               "dl-deadline": 3000, "dl-period": 10000, "loop": -1,
               "run": 1000, "timer": { "ref": "ta", "period": 10000 } },
        "c": { "cpus": [1], "policy": "SCHED_DEADLINE", "dl-runtime": 3000,
               "dl-deadline": 4000, "dl-period": 10000, "loop": -1,
               "run": 2000, "timer": { "ref": "tc", "period": 10000 } },
        "b": { "phases": {
            "pin": { "cpus": [1], "loop": 1, "run": 100 },
            "dl": { "cpus": [0, 1], "policy": "SCHED_DEADLINE", "dl-runtime": 2000,
                    "dl-period": 10000, "loop": -1,
                    "run": 1000, "timer": { "ref": "tb", "period": 10000 } } } } } }"#;
    let (r, lines) = traced("hikey620", json, 300, &SETS);
    assert!(r.migrations["dl_pull"] >= 1, "{:?}", r.migrations);
    let pulls: Vec<&String> = lines
        .iter()
        .filter(|l| l.contains("sched_migrate_task:") && field(l, "comm").starts_with("b-"))
        .collect();
    assert!(!pulls.is_empty());
    // each of b's runs after the first 50 ms is on CPU 0, about 1 ms after a's
    let b = runs_of(&lines, "b-");
    let late: Vec<_> = b.iter().filter(|(t, _)| *t > 50_000).collect();
    assert!(late.len() > 20, "{b:?}");
    assert!(late.iter().all(|&&(_, cpu)| cpu == 0), "{late:?}");
}

/// A deadline task pinned to CPU 0 (`d`, deadline 2 ms) wakes 1 ms into each period of `b`
/// (CPUs 0–1, deadline 10 ms, runs 4 ms) and preempts it; when `d` is picked
/// (`set_next_task_dl()` → `deadline_queue_push_tasks()`) the preempted `b` is pushed to
/// CPU 1, where no deadline task runs (`cpudl.free_cpus`), instead of waiting.
#[test]
fn a_preempted_deadline_task_is_pushed_to_a_free_cpu() {
    let json = r#"{ "global": { "duration": 1, "calibration": "CPU0" },
      "tasks": {
        "b": { "phases": {
            "pin": { "cpus": [0], "loop": 1, "run": 100 },
            "dl": { "cpus": [0, 1], "policy": "SCHED_DEADLINE", "dl-runtime": 5000,
                    "dl-period": 10000, "loop": -1,
                    "run": 4000, "timer": { "ref": "tb", "period": 10000 } } } },
        "d": { "cpus": [0], "phases": {
            "offset": { "loop": 1, "sleep": 1000 },
            "dl": { "policy": "SCHED_DEADLINE", "dl-runtime": 1500, "dl-deadline": 2000,
                    "dl-period": 10000, "loop": -1,
                    "run": 1000, "timer": { "ref": "td", "period": 10000 } } } } } }"#;
    let (r, lines) = traced("hikey620", json, 300, &SETS);
    assert!(r.migrations["dl_push"] >= 1, "{:?}", r.migrations);
    let pushed = lines.iter().any(|l| {
        l.contains("sched_migrate_task:")
            && field(l, "comm").starts_with("b-")
            && field(l, "orig_cpu") == "0"
            && field(l, "dest_cpu") == "1"
    });
    assert!(pushed, "b was never pushed from CPU 0 to CPU 1");
}

/// A CPU with a deadline task is CPUPRI_HIGHER in `rd->cpupri` (`inc_dl_deadline()` →
/// `cpupri_set()`), so RT placement (`find_lowest_rq()`) does not choose it: a FIFO task
/// last run on CPU 4, where a deadline task now runs most of each period, wakes on another
/// big CPU (hikey960: RT's `uclamp_min` 1024 fits the bigs only), never behind the deadline
/// task.
#[test]
fn rt_placement_avoids_a_cpu_running_a_deadline_task() {
    let json = r#"{ "global": { "duration": 1, "calibration": "CPU0" },
      "tasks": {
        "d": { "cpus": [4], "policy": "SCHED_DEADLINE", "dl-runtime": 9000,
               "dl-period": 10000, "loop": -1,
               "run": 8000, "timer": { "ref": "td", "period": 10000 } },
        "r": { "phases": {
            "pin": { "cpus": [4], "loop": 1, "run": 100 },
            "rt": { "cpus": [0, 1, 2, 3, 4, 5, 6, 7], "policy": "SCHED_FIFO", "priority": 10,
                    "loop": -1, "run": 500, "timer": { "ref": "tr", "period": 7000 } } } } } }"#;
    let (_, lines) = traced("hikey960", json, 300, &SETS);
    // walk the trace: what runs on CPU 4 at each of r's wake-ups
    let mut on4 = String::new();
    let mut wakes = 0;
    for l in &lines {
        if l.contains("sched_switch:") && l.contains("[004]") {
            on4 = field(l, "next_comm").to_string();
        }
        if l.contains("sched_wakeup:") && field(l, "comm").starts_with("r-") {
            wakes += 1;
            let cpu: usize = field(l, "target_cpu").parse().unwrap();
            assert!(cpu >= 4, "an RT wake-up on a LITTLE CPU: {l}");
            assert!(
                !(cpu == 4 && on4.starts_with("d-")),
                "an RT wake-up onto CPU 4 while the deadline task runs there: {l}"
            );
        }
    }
    assert!(wakes > 30, "{wakes} wake-ups");
}

/// (switch-in µs, switch-out µs) of each run of the thread `comm`.
fn spans_of(lines: &[String], comm: &str) -> Vec<(i64, i64)> {
    let mut out = Vec::new();
    let mut since = None;
    for l in lines.iter().filter(|l| l.contains("sched_switch:")) {
        if field(l, "next_comm") == comm {
            since = Some(t_us(l));
        } else if field(l, "prev_comm") == comm {
            // the thread's first run, before it moved to its CPU, has no switch-in
            if let Some(a) = since.take() {
                out.push((a, t_us(l)));
            }
        }
    }
    out
}

/// `update_curr_dl_se()` (kernel/sched/deadline.c, v6.11; from v4.16) charges the CBS
/// budget `cap_scale(cap_scale(delta_exec, arch_scale_freq_capacity(cpu)),
/// arch_scale_cpu_capacity(cpu))`: a CPU-bound deadline task of 10 ms every 100 ms pinned
/// to hikey960's LITTLE CPU 0 (capacity 462, at its top OPP) spends its budget in 10 ms ×
/// 1024 / 462 = 22.2 ms of wall-clock time, seen at the next tick (HZ 250: 24 ms from the
/// period's start), and runs about 222 ms a second. On a big CPU (capacity 1024, at the top
/// OPP), and in the `v4.4` profile's wall-clock charge, it stops at 12 ms and runs about
/// 100 ms a second. (The first whole run starts 120 µs after a tick; a budget overrun
/// carries into the next period's, as `replenish_dl_entity()` adds `dl_runtime` to it.)
#[test]
fn a_deadline_budget_is_charged_scaled_by_capacity() {
    let json = |cpu: usize| {
        format!(
            r#"{{ "global": {{ "duration": 1, "calibration": "CPU0" }},
              "tasks": {{ "d": {{ "cpus": [{cpu}], "policy": "SCHED_DEADLINE",
                "dl-runtime": 10000, "dl-period": 100000, "loop": -1, "run": 100000 }} }} }}"#
        )
    };
    let spans = |cpu: usize, sets: &[&str]| {
        let (_, lines) = traced("hikey960", &json(cpu), 1000, sets);
        let s = spans_of(&lines, "d-0");
        let first = s[0].1 - s[0].0;
        let total: i64 = s.iter().map(|&(a, b)| b - a).sum();
        (first, total, s)
    };
    let (first, total, s) = spans(0, &SETS);
    assert_eq!(first, 23_880, "{s:?}");
    assert!((200_000..235_000).contains(&total), "{total} µs: {s:?}");
    let v4_4 = [SETS[0], SETS[1], "kernel=v4.4"];
    for (cpu, sets) in [(0, &v4_4[..]), (4, &SETS[..])] {
        let (first, total, s) = spans(cpu, sets);
        assert_eq!(first, 11_880, "CPU {cpu} {sets:?}: {s:?}");
        assert!((85_000..115_000).contains(&total), "{total} µs: {s:?}");
    }
}
