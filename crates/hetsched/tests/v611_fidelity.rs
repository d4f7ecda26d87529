//! Details of v6.11 checked from the trace: the SIS_UTIL bound on the LLC's idle scan, the
//! order in which `find_energy_efficient_cpu()` walks the perf domains, the initial
//! utilization of a task forked outside the fair class, and schedutil's first update.

// Test helpers panic on unexpected failures by design.
#![allow(clippy::unwrap_used)]

mod common;
use common::{field, t_s, trace_to_end, wakeups};

/// SIS_UTIL (v6.11 `update_idle_cpu_scan()` → `select_idle_cpu()`): on the symmetric
/// hikey620, three pinned hogs fill CPUs 4–6 of the LLC {4..7}, so the LLC's periodic
/// balance writes `nr_idle_scan = 0` (sum_util/4 ≈ 767 > 85 % of 1024 / 117 %). A task
/// whose previous CPU is 6 (busy) wakes there: the scan is skipped and it stays on CPU 6
/// although CPU 7 is idle. With `fair.sis_util=false` the scan finds CPU 7.
#[test]
fn sis_util_skips_the_idle_scan_of_a_busy_llc() {
    let json = r#"{"global": {"duration": 1}, "tasks": {
        "h4": {"cpus": [4], "loop": 1, "run": 800000},
        "h5": {"cpus": [5], "loop": 1, "run": 800000},
        "h6": {"cpus": [6], "loop": 1, "run": 800000},
        "w": {"phases": {
            "a": {"cpus": [6], "loop": 1, "run": 1000},
            "b": {"cpus": [4, 5, 6, 7], "loop": 1, "sleep": 400000, "run": 1000},
            "c": {"loop": -1, "sleep": 1000000}}}}}"#;
    let late = |sets: &[&str]| {
        let w = wakeups(&trace_to_end("hikey620", json, sets), "w-3");
        let late: Vec<_> = w.into_iter().filter(|&(t, _)| t > 0.3).collect();
        assert_eq!(late.len(), 1, "{sets:?}: {late:?}");
        late[0]
    };
    let (t_on, cpu_on) = late(&[]);
    assert!((0.39..0.45).contains(&t_on), "{t_on}");
    assert_eq!(cpu_on, 6, "SIS_UTIL: the busy LLC is not scanned");
    let (_, cpu_off) = late(&["fair.sis_util=false"]);
    assert_eq!(cpu_off, 7, "without SIS_UTIL the scan finds the idle CPU 7");
}

/// `post_init_entity_util_avg()` (v6.11) gives an initial `util_avg` only to fair tasks: an
/// RT task forked on an idle CPU starts at 0, not at half the CPU's capacity, which shows
/// once a phase switches it to SCHED_OTHER (its entity is attached at the switch). A
/// thread is a copy of its creator (`sched_fork()`): rt-app's main thread is SCHED_OTHER,
/// so the RT child here is forked by the SCHED_FIFO thread `p` (a `fork` event); with
/// `rtapp.main_thread=false` the thread is created with its own policy.
#[test]
fn rt_task_gets_no_initial_util_at_fork() {
    let json = r#"{"global": {"duration": 1, "calibration": "CPU1"}, "tasks": {
        "p": {"cpus": [1], "policy": "SCHED_FIFO", "priority": 20, "loop": 1, "fork": "r"},
        "r": {"instance": 0, "cpus": [1], "policy": "SCHED_FIFO", "priority": 10, "phases": {
            "a": {"loop": 1, "run": 5000},
            "b": {"policy": "SCHED_OTHER", "loop": 1, "run": 20000},
            "c": {"loop": -1, "sleep": 100000}}}}}"#;
    let lines = trace_to_end("juno_r0", json, &[]);
    let utils: Vec<(f64, u64)> = lines
        .iter()
        .filter(|l| l.contains("sched_pelt_se:") && l.contains(" comm=r-1-0000 "))
        .map(|l| (t_s(l), field(l, "util").parse().unwrap()))
        .collect();
    let &(t0, u0) = utils.first().unwrap();
    // The first fair update is at the switch, a few ms in (5 ms of CPU 1's work).
    assert!(t0 > 0.004 && t0 < 0.008, "{utils:?}");
    // Attached with util 0: at most what ~3 ms of running adds (~70), far below 512.
    assert!(u0 < 100, "initial util {u0} at {t0}: {utils:?}");
    // The same thread created by rt-app's SCHED_OTHER main thread gets half a CPU at once.
    let json = r#"{"global": {"duration": 1, "calibration": "CPU1"}, "tasks": {
        "r": {"cpus": [1], "policy": "SCHED_FIFO", "priority": 10, "loop": 1, "run": 5000}}}"#;
    let lines = trace_to_end("juno_r0", json, &[]);
    let first = lines
        .iter()
        .find(|l| l.contains("sched_pelt_se:") && l.contains(" pid=1001 "))
        .unwrap();
    assert!(
        field(first, "util").parse::<u64>().unwrap() >= 223,
        "{first}"
    );
}

/// `find_energy_efficient_cpu()` walks `rd->pd`, which `build_perf_domains()` (v6.11)
/// builds by pushing each new domain at the head: on m1pro (E {0,1}, P0 {2,3,4}, P1
/// {5,6,7}, the P domains identical) the list is P1, P0, E. A task that leaves the E
/// cluster with `util_min = 1024` fits only the P CPUs; both P domains cost the same, and
/// the first one walked keeps the tie (`cur_delta >= best_delta`): CPU 5, not CPU 2. The
/// thread is created at once from an idle CPU 0 (`rtapp.main_thread=false`): forked by
/// rt-app's main thread it would first run on a P0 CPU, whose averages then differ from
/// P1's and break the tie.
#[test]
fn feec_energy_tie_goes_to_the_head_of_the_rd_pd_list() {
    let json = r#"{"global": {"duration": 1}, "tasks": {
        "t": {"cpus": [0, 1], "phases": {
            "a": {"loop": 5, "run": 1000, "sleep": 9000},
            "b": {"cpus": [0, 1, 2, 3, 4, 5, 6, 7], "util_min": 1024, "loop": 5,
                  "run": 1000, "sleep": 9000},
            "c": {"loop": -1, "sleep": 100000}}}}}"#;
    let sets = ["cpufreq.governor=schedutil", "rtapp.main_thread=false"];
    let lines = trace_to_end("m1pro", json, &sets);
    let w = wakeups(&lines, "t-0");
    // Five wake-ups pinned to the E cluster, then the first one of phase b.
    assert!(w[..5].iter().all(|&(_, c)| c < 2), "{w:?}");
    assert_eq!(w[5].1, 5, "{w:?}");
}

/// `cpufreq_start_governor()` calls `sugov_limits()` after `sugov_start()` (v6.11), so a
/// policy's first schedutil update is forced (`need_freq_update`) even when it sees no
/// utilization: on juno, two hogs on CPU 0 make the busy tick kick the nohz stats update,
/// whose blocked-load decay on the idle big CPUs calls `cpufreq_update_util()`; the big
/// policy then leaves its boot frequency (1100 MHz) for its lowest OPP (450 MHz).
#[test]
fn idle_policy_leaves_its_boot_frequency_at_its_first_update() {
    let json = r#"{"global": {"duration": 1}, "tasks": {
        "h": {"instance": 2, "cpus": [0], "loop": 1, "run": 100000}}}"#;
    let lines = trace_to_end("juno_r0", json, &["cpufreq.governor=schedutil"]);
    let big: Vec<(f64, u64)> = lines
        .iter()
        .filter(|l| l.contains("cpu_frequency:") && l.contains(" cpu_id=1"))
        .map(|l| (t_s(l), field(l, "state").parse().unwrap()))
        .collect();
    assert_eq!(big[0], (0.0, 1_100_000), "{big:?}");
    let first = big.get(1).copied();
    assert!(
        first.is_some_and(|(t, f)| t < 0.05 && f == 450_000),
        "{big:?}"
    );
}

/// `task_fork_fair()` (kernel/sched/fair.c, v6.11), from `sched_cgroup_fork()` in
/// `copy_process()`: `update_curr()` of the parent's queue, so a parent past its deadline
/// gets a new one and its CPU is rescheduled at the fork when others wait there. `p` and
/// `q` share CPU 5; `p` runs first and, 3 ms in (its slice, `base_slice` 0.75 ms × 4 on
/// eight CPUs, is then used up), forks a child that goes to an idle CPU. `q` runs from
/// the fork on, not from the next tick.
#[test]
fn a_fork_updates_the_parents_slice() {
    let json = r#"{ "global": { "duration": 1, "calibration": "CPU4" },
      "tasks": {
        "p": { "loop": 1, "phases": {
                 "a": { "cpus": [5], "run": 500 },
                 "b": { "cpus": [5, 6, 7], "run": 3000, "fork": "k", "run1": 3000 } } },
        "q": { "cpus": [5], "delay": 1000, "loop": 1, "run": 3000 },
        "k": { "instance": 0, "loop": 1, "run": 1000 } } }"#;
    let lines = trace_to_end(
        "hikey960",
        json,
        &["cpufreq.governor=performance", "trace.signals=false"],
    );
    let fork = lines
        .iter()
        .find(|l| l.contains("sched_wakeup_new:") && l.contains(" comm=p-0 "))
        .expect("p did not fork");
    assert_ne!(field(fork, "target_cpu"), "005", "{fork}");
    let q_in = lines
        .iter()
        .find(|l| {
            l.contains("sched_switch:")
                && l.contains("prev_comm=p-0")
                && l.contains("next_comm=q-1")
        })
        .expect("q never ran after p");
    assert!(
        t_s(q_in) - t_s(fork) < 20e-6,
        "fork: {fork}\nq runs: {q_in}"
    );
}
