//! Fork details checked from the trace: what a forked thread inherits from its parent
//! (`copy_process()`, v6.11).

// Test helpers panic on unexpected failures by design.
#![allow(clippy::unwrap_used)]

mod common;
use common::{field, t_s, trace_to_end};

/// `(t, target_cpu)` of each `sched_wakeup` of the thread whose comm starts with `prefix`.
fn wakeups_of(lines: &[String], prefix: &str) -> Vec<(f64, usize)> {
    let pat = format!(" comm={prefix}");
    lines
        .iter()
        .filter(|l| l.contains("sched_wakeup:") && l.contains(&pat))
        .map(|l| (t_s(l), field(l, "target_cpu").parse().unwrap()))
        .collect()
}

/// `dup_task_struct()` copies the whole task and neither `copy_process()` nor
/// `sched_fork()` (v6.11) resets `wakee_flips`, `wakee_flip_decay_ts` or `last_wakee`: a
/// forked thread starts with its parent's. On hikey620 (LLC size 4) `p` resumes four
/// sleepers (4 flips), then forks `c`; `c` runs on CPU 1 and suspends. `w` on CPU 0
/// resumes sixteen other sleepers (17 flips with `c`), then `c`: with the inherited 4
/// flips `wake_wide()` holds (4 ≥ 4, 17 ≥ 4 × 4), so no `wake_affine()` and `c` stays on
/// its busy prev CPU 1. With 0 flips `wake_affine_weight()` takes the lightly loaded
/// CPU 0 (CPU 1 carries two hogs). Every CPU is busy, so nothing idle is found. The
/// sleepers may run on CPU 6 or 7: `select_task_rq()` (core.c) calls the class's
/// `select_task_rq()`, and with it `record_wakee()`, only for a task allowed on more than
/// one CPU, so waking tasks pinned to one CPU counts no flips.
#[test]
fn a_forked_thread_inherits_its_parents_wakee_flips() {
    let mut tasks: Vec<String> = (2..8)
        .map(|c| format!(r#""h{c}": {{"cpus": [{c}], "loop": 1, "run": 900000}}"#))
        .collect();
    for h in ["h1a", "h1b"] {
        tasks.push(format!(
            r#""{h}": {{"cpus": [1], "loop": 1, "run": 900000}}"#
        ));
    }
    let sleeper = |n: &str| {
        format!(
            r#""{n}": {{"cpus": [6, 7], "phases": {{"a": {{"loop": 1, "suspend": "{n}"}},
            "b": {{"loop": -1, "sleep": 1000000}}}}}}"#
        )
    };
    let resumes = |prefix: &str, n: usize| -> String {
        (1..=n)
            .map(|i| format!(r#""resume{i}": "{prefix}{i}""#))
            .collect::<Vec<_>>()
            .join(", ")
    };
    tasks.extend((1..=4).map(|i| sleeper(&format!("s{i}"))));
    tasks.extend((1..=16).map(|i| sleeper(&format!("t{i}"))));
    tasks.push(format!(
        r#""p": {{"cpus": [2], "phases": {{"a": {{"loop": 1, "sleep": 10000, {}, "fork": "c"}},
        "b": {{"loop": -1, "sleep": 1000000}}}}}}"#,
        resumes("s", 4)
    ));
    tasks.push(
        r#""c": {"instance": 0, "phases": {"a": {"cpus": [1], "loop": 1, "run": 20000},
        "b": {"cpus": [0, 1, 2, 3, 4, 5, 6, 7], "loop": 1, "suspend": "c"},
        "z": {"loop": -1, "sleep": 1000000}}}"#
            .to_string(),
    );
    tasks.push(format!(
        r#""w": {{"cpus": [0], "phases": {{"a": {{"loop": 1, "sleep": 200000, {},
        "resume99": "c"}}, "b": {{"loop": -1, "sleep": 1000000}}}}}}"#,
        resumes("t", 16)
    ));
    let json = format!(
        r#"{{"global": {{"duration": 1}}, "tasks": {{ {} }}}}"#,
        tasks.join(", ")
    );
    let lines = trace_to_end("hikey620", &json, &[]);
    let w = wakeups_of(&lines, "c-");
    assert_eq!(w.len(), 1, "{w:?}");
    let (at, cpu) = w[0];
    assert!((0.19..0.21).contains(&at), "{at}");
    assert_eq!(cpu, 1, "wake_wide() with the inherited flips keeps prev");
}
