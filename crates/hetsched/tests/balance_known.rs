//! The fair load balancer's timing as v6.11 has it, checked from the trace: when a CPU
//! running only SCHED_IDLE tasks balances, and when one that is left with them does (both
//! v5.6+: not in the `v4.20` profile). A CPU's periodic pass shows as its
//! `sched_cpu_capacity` line (`update_cpu_capacity()` of the local group at the base
//! domain), traced on the CPU itself.

// Test helpers panic on unexpected failures by design.
#![allow(clippy::unwrap_used)]

mod common;
use common::{field, t_us, traced};

/// The times (µs) of CPU 0's own balance passes: its `sched_cpu_capacity` lines for
/// `cpu=0`, traced on CPU 0.
fn cpu0_passes(lines: &[String]) -> Vec<i64> {
    lines
        .iter()
        .filter(|l| l.contains("[000]") && l.contains("sched_cpu_capacity:"))
        .filter(|l| field(l, "cpu") == "0")
        .map(|l| t_us(l))
        .collect()
}

/// On hikey620 a normal task `n` shares CPU 0 with a SCHED_IDLE hog and sleeps every
/// 200 ms, under `sets`: the times (µs) of `n`'s sleeps (at least three) and of CPU 0's
/// own balance passes.
fn sleeps_and_passes_beside_an_idle_hog(sets: &[&str]) -> (Vec<i64>, Vec<i64>) {
    let json = r#"{"global": {"duration": 1}, "tasks": {
        "i": {"cpus": [0], "policy": "SCHED_IDLE", "loop": 1, "run": 900000},
        "n": {"cpus": [0], "loop": 4, "run": 30000, "sleep": 170000}}}"#;
    let (_, lines) = traced("hikey620", json, 800, sets);
    let sleeps: Vec<i64> = lines
        .iter()
        .filter(|l| l.contains("sched_switch:") && field(l, "prev_comm") == "n-1")
        .filter(|l| field(l, "prev_state") != "0")
        .map(|l| t_us(l))
        .collect();
    assert!(sleeps.len() >= 3, "{sleeps:?}");
    (sleeps, cpu0_passes(&lines))
}

/// `sched_balance_domains()` (v6.11): `busy = idle != CPU_IDLE && !sched_idle_cpu(cpu)`.
/// On hikey620 a SCHED_IDLE hog alone on CPU 0 leaves the CPU "idle" for the balancer:
/// its MC domain is balanced every `balance_interval` (4 ms doubled to the 8 ms
/// `max_interval`: 2 jiffies at HZ=250), not every 16 × 8 ms − 1 jiffy (124 ms).
#[test]
fn a_cpu_running_only_sched_idle_tasks_balances_at_the_idle_interval() {
    let json = r#"{"global": {"duration": 1}, "tasks": {
        "i": {"cpus": [0], "policy": "SCHED_IDLE", "loop": 1, "run": 500000}}}"#;
    let (_, lines) = traced("hikey620", json, 400, &[]);
    let passes: Vec<i64> = cpu0_passes(&lines)
        .into_iter()
        .filter(|&t| (100_000..400_000).contains(&t))
        .collect();
    // 300 ms at one pass per 8 ms: 37; at one per 124 ms: 2 or 3.
    assert!(passes.len() >= 30, "{passes:?}");
}

/// v4.20's `rebalance_domains()` has no `sched_idle_cpu()`: its interval is busy whenever
/// `idle != CPU_IDLE` (`get_sd_balance_interval(sd, idle != CPU_IDLE)`), so the CPU of
/// the SCHED_IDLE hog above balances its MC domain at the busy interval, 32 × 8 ms − 1
/// jiffy (v4.20's `busy_factor`: 252 ms), not every 8 ms (`sched.sched_idle_cpu` off in
/// the `v4.20` profile).
#[test]
fn before_v5_6_a_cpu_running_only_sched_idle_tasks_balances_at_the_busy_interval() {
    let json = r#"{"global": {"duration": 1}, "tasks": {
        "i": {"cpus": [0], "policy": "SCHED_IDLE", "loop": 1, "run": 500000}}}"#;
    let (_, lines) = traced("hikey620", json, 400, &["kernel=v4.20"]);
    let passes: Vec<i64> = cpu0_passes(&lines)
        .into_iter()
        .filter(|&t| (100_000..400_000).contains(&t))
        .collect();
    // 300 ms at one pass per 252 ms: 1 or 2.
    assert!(passes.len() <= 2, "{passes:?}");
}

/// `dequeue_task_fair()` (v6.11): a dequeue that leaves the rq with SCHED_IDLE tasks only
/// sets `rq->next_balance = jiffies` ("balance early to pull high priority tasks"). On
/// hikey620 a normal task `n` shares CPU 0 with a SCHED_IDLE hog and sleeps every 200 ms;
/// while `n` ran, CPU 0's periodic balance was paced by the busy interval (124 ms at MC),
/// but the tick after each of `n`'s sleeps balances at once.
#[test]
fn a_dequeue_leaving_only_sched_idle_tasks_balances_at_the_next_tick() {
    let (sleeps, passes) = sleeps_and_passes_beside_an_idle_hog(&[]);
    for s in sleeps {
        let next = passes.iter().find(|&&t| t >= s).copied();
        // the next tick: within one jiffy (4 ms at HZ=250)
        assert!(
            next.is_some_and(|t| t - s <= 4_000),
            "sleep at {s}: {next:?}"
        );
    }
}

/// Two clusters, each with two LITTLE (446) and two big (1024) CPUs: each MC domain
/// spans both capacities (`SD_ASYM_CPUCAPACITY` below the top domain).
const DYN_2X2B2L: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/dyn_2x2b2l.yaml");

/// `sched_balance_newidle()` (v6.11) balances each domain with `sched_balance_rq()`, which
/// starts the stopper of an active balance at once (`stop_one_cpu_nowait()`), before the
/// next domain is tried. CPU-bound `m` is pinned to LITTLE CPU 0 for 200 ms, then allowed
/// everywhere, and misfits; big CPU 2 runs `b`, pinned, 6.5 ms in every 8 ms, so that it
/// is idle between ticks; the other bigs run hogs, and two hogs share CPU 5 so that the
/// root domain is overloaded. When `b` sleeps, CPU 2's newidle pass finds `m` at MC and
/// asks for a misfit active balance, then tries the package domain, which finds nothing
/// to move: `migration/0` pushes `m` to CPU 2 in that instant. Before, the package pass's
/// outcome replaced MC's request, and `m` waited for CPU 2's busy periodic balance.
#[test]
fn a_lower_domains_newidle_active_balance_survives_the_next_domain() {
    let json = r#"{"global": {"duration": 1}, "tasks": {
        "m": {"phases": {"pin": {"cpus": [0], "run": 200000},
                         "free": {"cpus": [0,1,2,3,4,5,6,7], "run": 600000}}},
        "b": {"cpus": [2], "delay": 3140, "loop": -1, "run": 6500,
              "timer": {"ref": "tb", "period": 8000}},
        "h3": {"cpus": [3], "loop": 1, "run": 900000},
        "h6": {"cpus": [6], "loop": 1, "run": 900000},
        "h7": {"cpus": [7], "loop": 1, "run": 900000},
        "x1": {"cpus": [5], "loop": 1, "run": 900000},
        "x2": {"cpus": [5], "loop": 1, "run": 900000}}}"#;
    let (_, lines) = traced(DYN_2X2B2L, json, 400, &["cpufreq.governor=performance"]);
    let up = lines
        .iter()
        .filter(|l| l.contains("sched_migrate_task:") && field(l, "comm") == "m-0")
        .find(|l| t_us(l) > 200_000 && field(l, "dest_cpu") == "2")
        .expect("m reaches big CPU 2");
    assert!(up.contains("migration/0-"), "{up}");
    let t = t_us(up);
    let b_sleeps_then = lines.iter().any(|l| {
        l.contains("[002]")
            && l.contains("sched_switch:")
            && field(l, "prev_comm") == "b-1"
            && field(l, "prev_state") != "0"
            && t_us(l) == t
    });
    assert!(b_sleeps_then, "m moved at {t} µs, not when b slept");
}

/// v4.20's `dequeue_task_fair()` has no `was_sched_idle` rule: after each of `n`'s sleeps
/// above CPU 0 keeps the busy interval it set while `n` ran, and no pass follows within a
/// jiffy (`sched.sched_idle_cpu` off in the `v4.20` profile).
#[test]
fn before_v5_6_a_dequeue_leaving_only_sched_idle_tasks_does_not_bring_the_balance_forward() {
    let (sleeps, passes) = sleeps_and_passes_beside_an_idle_hog(&["kernel=v4.20"]);
    for s in sleeps {
        let next = passes.iter().find(|&&t| t >= s).copied();
        assert!(next.is_none_or(|t| t - s > 4_000), "sleep at {s}: {next:?}");
    }
}
