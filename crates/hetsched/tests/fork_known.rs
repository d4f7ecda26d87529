//! Fork details checked from the trace: what a forked thread inherits from its parent
//! (`copy_process()`, v6.11), and where the CFS rules place it (`task_fork_fair()`,
//! v3.10–v6.5).

// Test helpers panic on unexpected failures by design.
#![allow(clippy::unwrap_used)]

mod common;
use common::{field, t_s, trace_to_end, wakeups_of_prefix};

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
    let w = wakeups_of_prefix(&lines, "c-");
    assert_eq!(w.len(), 1, "{w:?}");
    let (at, cpu) = w[0];
    assert!((0.19..0.21).contains(&at), "{at}");
    assert_eq!(cpu, 1, "wake_wide() with the inherited flips keeps prev");
}

/// v3.10–v6.5 `task_fork_fair()` places a CFS child on its parent's queue at fork:
/// `se->vruntime = curr->vruntime`, then `place_entity(cfs_rq, se, 1)` takes the larger of
/// that and `min_vruntime` + START_DEBIT's `sched_vslice()`; the enqueue only adds back
/// `min_vruntime`. On hikey620 (factor 4: latency 24 ms, wakeup granularity 4 ms, HZ 250)
/// `p` and `q` share CPU 0 under `kernel=v5.10`; `p` runs first and forks `c` 15 ms into
/// its slice. At `p`'s vruntime `c` cannot preempt it, `p`
/// keeps CPU 0 to its tick at 16 ms, `q` runs its slice to 32 ms, then `c` (the leftmost).
/// Placed at `min_vruntime` + 8 ms (a third of the latency: three tasks), `c` would be
/// more than the granularity behind `p`: `p` preempted at the fork, `q` then `c` at 24 ms.
#[test]
fn a_cfs_child_is_placed_at_fork_from_its_parents_vruntime() {
    let json = r#"{"global": {"duration": 1}, "tasks": {
        "q": {"cpus": [0], "loop": 1, "run": 900000},
        "p": {"cpus": [0], "phases": {"a": {"loop": 1, "run": 15000, "fork": "c"},
            "b": {"loop": 1, "run": 900000}}},
        "c": {"instance": 0, "phases": {"a": {"cpus": [0], "loop": 1, "run": 5000},
            "z": {"loop": -1, "sleep": 1000000}}}}}"#;
    let sets = [
        "kernel=v5.10",
        "cpufreq.governor=performance",
        "rtapp.main_cpu=7",
    ];
    let lines = trace_to_end("hikey620", json, &sets);
    // the fork: p's sched_wakeup_new of c
    let fork = lines
        .iter()
        .find(|l| l.trim_start().starts_with("p-1-") && l.contains("sched_wakeup_new:"))
        .unwrap();
    let (t_fork, child) = (t_s(fork), field(fork, "pid"));
    let parent = fork
        .trim_start()
        .split(' ')
        .next()
        .unwrap()
        .rsplit('-')
        .next()
        .unwrap();
    let after = |pat: String| {
        lines
            .iter()
            .filter(|l| l.contains("sched_switch:") && t_s(l) >= t_fork)
            .find(|l| l.contains(&pat))
            .map(|l| t_s(l))
            .unwrap()
    };
    let parent_out = after(format!(" prev_pid={parent} "));
    let child_in = after(format!(" next_pid={child} "));
    assert!((0.0150..0.0155).contains(&t_fork), "{t_fork}");
    assert!(
        (0.0159..0.0161).contains(&parent_out),
        "p keeps CPU 0 to its tick: {parent_out}"
    );
    assert!(
        (0.0319..0.0321).contains(&child_in),
        "c after q's slice: {child_in}"
    );
}
