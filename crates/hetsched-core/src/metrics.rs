//! Metrics computed in one pass over the event stream: a [`TraceSink`] like any other.
//!
//! Per task: CPU time, wait time (runnable but not running), wake-up latency percentiles
//! (wake-up to first switch-in), completion time, migrations, residency per CPU. Per CPU:
//! busy and idle time, time per OPP, time per idle state. Everything is accumulated in
//! integer nanoseconds; floats appear only in the [`RunResult`] written at the end.
//!
//! With [`MetricsSink::with_energy`] the same events also feed an [`EnergyMeter`]: each
//! CPU's time busy at each frequency and in each idle state (from `cpu_frequency`,
//! `cpu_idle` and the idle↔busy `sched_switch`es).
//!
//! [`RunResult`]: crate::sim::RunResult

use crate::energy::accounting::EnergyMeter;
use crate::time::{Nanos, NSEC_PER_SEC, NSEC_PER_USEC};
use crate::trace::{Ctx, Interest, TraceEvent, TraceSink};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// rt-app's main thread's pid; the workload's threads follow it, and lower pids are
/// kernel threads (`migration/N`, `sugov:N`).
pub const FIRST_USER_PID: u32 = 1000;

/// Wake-up latency summary in µs.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct LatencyStats {
    /// Number of wake-ups measured.
    pub count: u64,
    /// Mean.
    pub mean: f64,
    /// Median (nearest rank).
    pub p50: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 99th percentile.
    pub p99: f64,
    /// Maximum.
    pub max: f64,
}

impl LatencyStats {
    /// Summarises latencies given in ns (sorted in place).
    pub fn from_ns(v: &mut [Nanos]) -> LatencyStats {
        if v.is_empty() {
            return LatencyStats::default();
        }
        v.sort_unstable();
        let rank = |p: u64| -> f64 {
            let n = v.len() as u64;
            let idx = (p * n).div_ceil(100).clamp(1, n) - 1;
            v[idx as usize] as f64 / NSEC_PER_USEC as f64
        };
        let sum: u128 = v.iter().map(|&x| u128::from(x)).sum();
        LatencyStats {
            count: v.len() as u64,
            mean: (sum as f64 / v.len() as f64) / NSEC_PER_USEC as f64,
            p50: rank(50),
            p90: rank(90),
            p99: rank(99),
            max: *v.last().unwrap_or(&0) as f64 / NSEC_PER_USEC as f64,
        }
    }
}

/// Metrics of one task (thread).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TaskMetrics {
    /// pid.
    pub pid: u32,
    /// comm.
    pub comm: String,
    /// Time running, s.
    pub cpu_time_s: f64,
    /// Time runnable but not running, s.
    pub wait_time_s: f64,
    /// Number of wake-ups (including the first).
    pub wakeups: u64,
    /// Wake-up latency (wake-up to running), µs.
    pub wakeup_latency_us: LatencyStats,
    /// First wake-up, s from the start of the run.
    pub start_s: f64,
    /// Exit minus first wake-up, s; `null` when the task had not finished at the end.
    pub completion_s: Option<f64>,
    /// Number of migrations.
    pub migrations: u64,
    /// Running time per CPU, s.
    pub residency_s: Vec<f64>,
}

/// Metrics of one CPU.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CpuMetrics {
    /// CPU number.
    pub cpu: u32,
    /// Time running a task, s.
    pub busy_s: f64,
    /// Time idle, s.
    pub idle_s: f64,
    /// Time at each frequency (kHz → s), busy or idle.
    pub freq_residency_s: BTreeMap<u64, f64>,
    /// Time in each idle state (index → s); index 0 is WFI.
    pub idle_state_residency_s: BTreeMap<u32, f64>,
}

#[derive(Debug, Default)]
struct TaskAcc {
    pid: u32,
    comm: String,
    cpu_time: Nanos,
    wait: Nanos,
    wakeups: u64,
    latencies: Vec<Nanos>,
    start: Option<Nanos>,
    exit: Option<Nanos>,
    migrations: u64,
    residency: Vec<Nanos>,
    running_since: Option<(Nanos, usize)>,
    runnable_since: Option<Nanos>,
    woken_at: Option<Nanos>,
}

#[derive(Debug, Default, Clone)]
struct CpuAcc {
    busy: Nanos,
    busy_since: Option<Nanos>,
    freq: u64,
    freq_since: Nanos,
    freq_res: BTreeMap<u64, Nanos>,
    idle_state: Option<u32>,
    idle_since: Nanos,
    /// Time per idle state index.
    idle_res: Vec<Nanos>,
    /// Energy accounting: start of the current busy or idle interval, and whether busy.
    e_since: Nanos,
    e_busy: bool,
}

/// The metrics sink.
#[derive(Debug, Default)]
pub struct MetricsSink {
    start: Nanos,
    end: Nanos,
    nr_cpus: usize,
    tasks: Vec<TaskAcc>,
    /// pid → index + 1 in `tasks` (0 = unknown): pids are small and dense.
    by_pid: Vec<u32>,
    cpus: Vec<CpuAcc>,
    energy: Option<EnergyMeter>,
}

impl MetricsSink {
    /// A new sink.
    pub fn new() -> MetricsSink {
        MetricsSink::default()
    }

    /// A sink that also meters energy.
    pub fn with_energy(meter: EnergyMeter) -> MetricsSink {
        MetricsSink {
            energy: Some(meter),
            ..MetricsSink::default()
        }
    }

    /// The energy meter, when the sink has one.
    pub fn energy(&self) -> Option<&EnergyMeter> {
        self.energy.as_ref()
    }

    /// Charges `cpu`'s current interval (busy at its frequency, or idle in its idle state)
    /// up to `now` to the energy meter.
    fn energy_flush(&mut self, cpu: usize, now: Nanos) {
        let Some(m) = self.energy.as_mut() else {
            return;
        };
        let c = &mut self.cpus[cpu];
        if c.e_busy {
            m.busy(cpu, c.freq, c.e_since, now);
        } else {
            m.idle(cpu, c.idle_state.unwrap_or(0) as usize, c.e_since, now);
        }
        c.e_since = now;
    }

    fn task(&mut self, pid: u32, comm: &str) -> &mut TaskAcc {
        let p = pid as usize;
        if p >= self.by_pid.len() {
            self.by_pid.resize(p + 1, 0);
        }
        if self.by_pid[p] == 0 {
            self.tasks.push(TaskAcc {
                pid,
                comm: comm.to_string(),
                residency: vec![0; self.nr_cpus],
                ..TaskAcc::default()
            });
            self.by_pid[p] = self.tasks.len() as u32;
        }
        let idx = self.by_pid[p] as usize - 1;
        &mut self.tasks[idx]
    }

    /// Per-task and per-CPU results, in pid and CPU order; the tasks are the workload's
    /// threads (see [`MetricsSink::kernel_threads`] and [`MetricsSink::main_thread`]).
    pub fn results(&self) -> (Vec<TaskMetrics>, Vec<CpuMetrics>) {
        let (tasks, cpus) = self.all_results();
        let tasks = tasks
            .into_iter()
            .filter(|t| t.pid > FIRST_USER_PID)
            .collect();
        (tasks, cpus)
    }

    /// rt-app's main thread's results (pid [`FIRST_USER_PID`]), when it ran. Its CPU time
    /// is in the CPUs' busy time.
    pub fn main_thread(&self) -> Option<TaskMetrics> {
        let tasks = self.all_results().0;
        tasks.into_iter().find(|t| t.pid == FIRST_USER_PID)
    }

    /// The kernel threads' results (pid below [`FIRST_USER_PID`]: `sugov:N`), in pid
    /// order. Their CPU time is in the CPUs' busy time.
    pub fn kernel_threads(&self) -> Vec<TaskMetrics> {
        let tasks = self.all_results().0;
        tasks
            .into_iter()
            .filter(|t| t.pid < FIRST_USER_PID)
            .collect()
    }

    fn all_results(&self) -> (Vec<TaskMetrics>, Vec<CpuMetrics>) {
        let s = |ns: Nanos| ns as f64 / NSEC_PER_SEC as f64;
        let mut tasks: Vec<TaskMetrics> = self
            .tasks
            .iter()
            .map(|t| {
                let mut lat = t.latencies.clone();
                TaskMetrics {
                    pid: t.pid,
                    comm: t.comm.clone(),
                    cpu_time_s: s(t.cpu_time),
                    wait_time_s: s(t.wait),
                    wakeups: t.wakeups,
                    wakeup_latency_us: LatencyStats::from_ns(&mut lat),
                    start_s: s(t.start.unwrap_or(self.start) - self.start),
                    completion_s: match (t.start, t.exit) {
                        (Some(a), Some(b)) => Some(s(b - a)),
                        _ => None,
                    },
                    migrations: t.migrations,
                    residency_s: t.residency.iter().map(|&x| s(x)).collect(),
                }
            })
            .collect();
        tasks.sort_by_key(|t| t.pid);
        let total = self.end - self.start;
        let cpus = self
            .cpus
            .iter()
            .enumerate()
            .map(|(i, c)| CpuMetrics {
                cpu: i as u32,
                busy_s: s(c.busy),
                idle_s: s(total.saturating_sub(c.busy)),
                freq_residency_s: c.freq_res.iter().map(|(&k, &v)| (k, s(v))).collect(),
                idle_state_residency_s: c
                    .idle_res
                    .iter()
                    .enumerate()
                    .filter(|(_, &v)| v > 0)
                    .map(|(k, &v)| (k as u32, s(v)))
                    .collect(),
            })
            .collect();
        (tasks, cpus)
    }
}

impl TraceSink for MetricsSink {
    fn interest(&self) -> Interest {
        Interest {
            sched: true,
            power: true,
            ..Interest::default()
        }
    }

    fn begin(&mut self, nr_cpus: usize, start_ns: Nanos) {
        self.nr_cpus = nr_cpus;
        self.start = start_ns;
        self.end = start_ns;
        self.cpus = vec![
            CpuAcc {
                freq_since: start_ns,
                idle_since: start_ns,
                e_since: start_ns,
                ..CpuAcc::default()
            };
            nr_cpus
        ];
    }

    fn record(&mut self, ctx: &Ctx<'_>, ev: &TraceEvent<'_>) {
        let now = ctx.ts;
        match *ev {
            TraceEvent::SchedWakeup { task, .. } | TraceEvent::SchedWakeupNew { task, .. } => {
                let is_new = matches!(ev, TraceEvent::SchedWakeupNew { .. });
                let t = self.task(task.pid, task.comm);
                if is_new || t.start.is_none() {
                    t.start.get_or_insert(now);
                }
                t.wakeups += 1;
                t.woken_at = Some(now);
                t.runnable_since = Some(now);
            }
            TraceEvent::SchedSwitch {
                prev,
                prev_state,
                next,
            } => {
                let cpu = ctx.cpu as usize;
                if (prev.pid == 0) != (next.pid == 0) {
                    self.energy_flush(cpu, now);
                    self.cpus[cpu].e_busy = next.pid != 0;
                }
                if prev.pid != 0 {
                    let t = self.task(prev.pid, prev.comm);
                    if let Some((since, c)) = t.running_since.take() {
                        t.cpu_time += now - since;
                        t.residency[c] += now - since;
                    }
                    if prev_state == 0 {
                        t.runnable_since = Some(now);
                    }
                    if let Some(b) = self.cpus[cpu].busy_since.take() {
                        self.cpus[cpu].busy += now - b;
                    }
                }
                if next.pid != 0 {
                    let t = self.task(next.pid, next.comm);
                    t.running_since = Some((now, cpu));
                    if let Some(r) = t.runnable_since.take() {
                        t.wait += now - r;
                    }
                    if let Some(w) = t.woken_at.take() {
                        t.latencies.push(now - w);
                    }
                    self.cpus[cpu].busy_since = Some(now);
                }
            }
            TraceEvent::SchedMigrateTask { task, .. } => {
                self.task(task.pid, task.comm).migrations += 1;
            }
            TraceEvent::SchedProcessExit { task } => {
                self.task(task.pid, task.comm).exit = Some(now);
            }
            TraceEvent::TaskRename { pid, newcomm, .. } => {
                self.task(pid, newcomm).comm = newcomm.to_string();
            }
            TraceEvent::CpuFrequency { cpu_id, state } => {
                self.energy_flush(cpu_id as usize, now);
                let c = &mut self.cpus[cpu_id as usize];
                if c.freq != 0 {
                    *c.freq_res.entry(c.freq).or_default() += now - c.freq_since;
                }
                c.freq = state;
                c.freq_since = now;
            }
            TraceEvent::CpuIdle { cpu_id, state } => {
                self.energy_flush(cpu_id as usize, now);
                let c = &mut self.cpus[cpu_id as usize];
                if let Some(s) = c.idle_state.take() {
                    let s = s as usize;
                    if s >= c.idle_res.len() {
                        c.idle_res.resize(s + 1, 0);
                    }
                    c.idle_res[s] += now - c.idle_since;
                }
                if state >= 0 {
                    c.idle_state = Some(state as u32);
                    c.idle_since = now;
                }
            }
            _ => {}
        }
    }

    fn end(&mut self, end_ns: Nanos) {
        self.end = end_ns;
        for t in &mut self.tasks {
            if let Some((since, c)) = t.running_since.take() {
                t.cpu_time += end_ns - since;
                t.residency[c] += end_ns - since;
            }
            if let Some(r) = t.runnable_since.take() {
                t.wait += end_ns - r;
            }
        }
        for cpu in 0..self.cpus.len() {
            self.energy_flush(cpu, end_ns);
        }
        for c in &mut self.cpus {
            if let Some(b) = c.busy_since.take() {
                c.busy += end_ns - b;
            }
            if c.freq != 0 {
                *c.freq_res.entry(c.freq).or_default() += end_ns - c.freq_since;
            }
            if let Some(s) = c.idle_state.take() {
                let s = s as usize;
                if s >= c.idle_res.len() {
                    c.idle_res.resize(s + 1, 0);
                }
                c.idle_res[s] += end_ns - c.idle_since;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_nearest_rank() {
        let mut v: Vec<Nanos> = (1..=100).map(|x| x * 1000).collect();
        let s = LatencyStats::from_ns(&mut v);
        assert_eq!(s.p50, 50.0);
        assert_eq!(s.p90, 90.0);
        assert_eq!(s.p99, 99.0);
        assert_eq!(s.max, 100.0);
        assert_eq!(s.count, 100);
        assert_eq!(LatencyStats::from_ns(&mut []).count, 0);
    }
}
