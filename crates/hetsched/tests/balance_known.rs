//! The fair load balancer's timing as v6.11 has it, checked from the trace: when a CPU
//! running only SCHED_IDLE tasks balances. A CPU's periodic pass shows as its
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
