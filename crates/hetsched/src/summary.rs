//! The human-readable summary `hetsched run` prints.

use hetsched_core::RunResult;
use std::fmt::Write;

/// Renders a run's summary: per task, per CPU, migrations.
pub fn render(r: &RunResult) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "hetsched {} — platform {}, workload {}, {:.3} s simulated, seed {}, settings {}",
        r.hetsched_version, r.platform, r.workload, r.duration_s, r.seed, r.settings_hash
    );
    let _ = writeln!(s);
    let _ = writeln!(
        s,
        "{:<16} {:>6} {:>9} {:>9} {:>7} {:>9} {:>9} {:>9} {:>6}  residency (s per CPU)",
        "task", "pid", "cpu_s", "wait_s", "wakeups", "lat_p50", "lat_p99", "done_s", "migr",
    );
    for t in &r.tasks {
        let res: Vec<String> = t
            .residency_s
            .iter()
            .enumerate()
            .filter(|(_, &v)| v > 0.0)
            .map(|(c, v)| format!("{c}:{v:.3}"))
            .collect();
        let done = t
            .completion_s
            .map_or_else(|| "-".to_string(), |c| format!("{c:.3}"));
        let _ = writeln!(
            s,
            "{:<16} {:>6} {:>9.3} {:>9.3} {:>7} {:>7.0}us {:>7.0}us {:>9} {:>6}  {}",
            t.comm,
            t.pid,
            t.cpu_time_s,
            t.wait_time_s,
            t.wakeups,
            t.wakeup_latency_us.p50,
            t.wakeup_latency_us.p99,
            done,
            t.migrations,
            res.join(" ")
        );
    }
    let _ = writeln!(s);
    let _ = writeln!(
        s,
        "{:<4} {:>8} {:>8}  time per OPP (MHz: s)",
        "cpu", "busy_s", "util%"
    );
    for c in &r.cpus {
        let total = c.busy_s + c.idle_s;
        let opp: Vec<String> = c
            .freq_residency_s
            .iter()
            .map(|(k, v)| format!("{}: {v:.3}", k / 1000))
            .collect();
        let _ = writeln!(
            s,
            "{:<4} {:>8.3} {:>7.1}%  {}",
            c.cpu,
            c.busy_s,
            if total > 0.0 {
                100.0 * c.busy_s / total
            } else {
                0.0
            },
            opp.join(", ")
        );
    }
    let _ = writeln!(s);
    let m: Vec<String> = r
        .migrations
        .iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    let _ = writeln!(s, "migrations: {}", m.join(", "));
    let _ = writeln!(
        s,
        "engine: {} events, {} context switches",
        r.engine.events, r.engine.context_switches
    );
    s
}
