//! Wake-up placement details of v6.11 checked from the trace: the load `wake_affine_weight()`
//! reads for the wakee.

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
