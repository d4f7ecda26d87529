//! schedutil details the second reading found different from the kernel, checked from the
//! trace: the runnable boost of the `v6.6` profile's `sugov_get_util()`.

// Test helpers panic on unexpected failures by design.
#![allow(clippy::unwrap_used)]

mod common;
use common::{field, t_us, trace_to_end};

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
