//! A run's timeline for the report's plots, kept in bounded memory: a trace sink that
//! folds the events into at most [`MAX_BUCKETS`] equal time buckets.
//!
//! Downsampling: buckets start 1 ms wide; when the run outgrows [`MAX_BUCKETS`] of them,
//! neighbouring pairs are merged and the width doubles (repeatedly), so a run of any
//! length ends with between `MAX_BUCKETS / 2` and `MAX_BUCKETS` buckets per series and
//! nothing is dropped: each bucket holds, per CPU, the running time of every task in it
//! (the Gantt draws the task that ran longest, its opacity the busy fraction), the
//! time-weighted mean and the maximum frequency, the time in idle states deeper than
//! WFI, the highest `util_avg` of the CPU's cfs_rq (a bucket without a PELT event holds
//! the last value, as a trace's step function does); per task (the first
//! [`MAX_TASKS`] workload tasks seen) the highest `util_avg` and `util_est`; and the
//! time the root domain was overutilized.

use hetsched_core::time::Nanos;
use hetsched_core::trace::{Ctx, Interest, TraceEvent, TraceSink};
use serde::Serialize;
use std::collections::BTreeMap;

/// The most buckets a series has.
pub const MAX_BUCKETS: usize = 1024;
/// The most tasks whose PELT signals are kept (the first seen running, by pid order of
/// their first switch-in; kernel threads and rt-app's main thread are not counted).
pub const MAX_TASKS: usize = 64;
const FIRST_BUCKET_NS: Nanos = 1_000_000;

#[derive(Debug, Clone, Default)]
struct CpuBucket {
    run: Vec<(u32, Nanos)>,
    freq_khz_ns: u128,
    freq_ns: Nanos,
    freq_max: u64,
    idle_deep_ns: Nanos,
    /// The highest cfs_rq util_avg traced in the bucket; `None`: no event in it.
    util_max: Option<u64>,
}

#[derive(Debug, Clone, Copy, Default)]
struct TaskBucket {
    /// `None`: no event in the bucket (the series holds its last value there).
    util: Option<u64>,
    util_est: Option<u64>,
}

fn max_opt(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.max(y)),
        (x, None) => x,
        (None, y) => y,
    }
}

/// A signal per bucket: the value traced in it, or the last one before (0 before any).
fn hold(v: impl Iterator<Item = Option<u64>>) -> Vec<u64> {
    let mut last = 0;
    v.map(|x| {
        if let Some(x) = x {
            last = x;
        }
        last
    })
    .collect()
}

#[derive(Debug, Default)]
struct CpuState {
    running: Option<(u32, Nanos)>,
    freq: Option<(u64, Nanos)>,
    idle: Option<(i32, Nanos)>,
    buckets: Vec<CpuBucket>,
}

/// The sink. Add it to a run's sinks, then call [`TimelineSink::finish`].
#[derive(Debug, Default)]
pub struct TimelineSink {
    t0: Nanos,
    width: Nanos,
    end: Nanos,
    cpus: Vec<CpuState>,
    tasks: BTreeMap<u32, Vec<TaskBucket>>,
    comms: BTreeMap<u32, String>,
    ou_since: Option<Nanos>,
    ou: Vec<Nanos>,
}

/// One CPU's series.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct CpuSeries {
    /// CPU.
    pub cpu: usize,
    /// Per bucket: the pid that ran longest (0: none ran).
    pub task: Vec<u32>,
    /// Per bucket: the fraction of it the CPU ran a task.
    pub busy: Vec<f64>,
    /// Per bucket: the time-weighted mean frequency, kHz (0: none known yet).
    pub freq_khz: Vec<u64>,
    /// Per bucket: the highest frequency, kHz.
    pub freq_max_khz: Vec<u64>,
    /// Per bucket: the fraction of it in an idle state deeper than WFI.
    pub idle_deep: Vec<f64>,
    /// Per bucket: the highest `util_avg` of the CPU's root cfs_rq traced in it; a
    /// bucket with no such event holds the value before it (the trace's step function).
    pub util: Vec<u64>,
}

/// One task's PELT series.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct TaskSeries {
    /// pid.
    pub pid: u32,
    /// Its last name.
    pub comm: String,
    /// Per bucket: the highest `util_avg` traced in it (else the value before it).
    pub util: Vec<u64>,
    /// Per bucket: the highest `util_est` (`_task_util_est`), held likewise.
    pub util_est: Vec<u64>,
}

/// The timeline of a run (`"timeline"` in `hetsched run --timeline --json` results).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Timeline {
    /// Bucket width, s.
    pub bucket_s: f64,
    /// Number of buckets.
    pub buckets: usize,
    /// pid → name, of every task that ran.
    pub comms: BTreeMap<u32, String>,
    /// Per CPU.
    pub cpus: Vec<CpuSeries>,
    /// Per task (at most [`MAX_TASKS`]).
    pub tasks: Vec<TaskSeries>,
    /// Per bucket: the fraction of it the root domain was overutilized.
    pub overutilized: Vec<f64>,
}

impl TimelineSink {
    /// A new sink.
    pub fn new() -> Self {
        TimelineSink {
            width: FIRST_BUCKET_NS,
            ..Default::default()
        }
    }

    fn index(&mut self, t: Nanos) -> usize {
        let mut i = (t.saturating_sub(self.t0) / self.width) as usize;
        while i >= MAX_BUCKETS {
            self.compact();
            i = (t.saturating_sub(self.t0) / self.width) as usize;
        }
        i
    }

    fn compact(&mut self) {
        self.width *= 2;
        for c in &mut self.cpus {
            c.buckets = c
                .buckets
                .chunks(2)
                .map(|p| {
                    let mut b = p[0].clone();
                    if let Some(o) = p.get(1) {
                        for &(pid, ns) in &o.run {
                            add_run(&mut b.run, pid, ns);
                        }
                        b.freq_khz_ns += o.freq_khz_ns;
                        b.freq_ns += o.freq_ns;
                        b.freq_max = b.freq_max.max(o.freq_max);
                        b.idle_deep_ns += o.idle_deep_ns;
                        b.util_max = max_opt(b.util_max, o.util_max);
                    }
                    b
                })
                .collect();
        }
        for v in self.tasks.values_mut() {
            *v = v
                .chunks(2)
                .map(|p| {
                    let o = p.get(1).copied().unwrap_or_default();
                    TaskBucket {
                        util: max_opt(p[0].util, o.util),
                        util_est: max_opt(p[0].util_est, o.util_est),
                    }
                })
                .collect();
        }
        self.ou = self.ou.chunks(2).map(|p| p.iter().sum()).collect();
    }

    /// Spreads `[a, b)` over the buckets: calls `f(bucket, ns)` for each.
    fn spread(&mut self, a: Nanos, b: Nanos, mut f: impl FnMut(&mut Self, usize, Nanos)) {
        if b <= a {
            return;
        }
        let last = self.index(b - 1);
        let first = (a.saturating_sub(self.t0) / self.width) as usize;
        for i in first..=last {
            let lo = self.t0 + i as Nanos * self.width;
            let hi = lo + self.width;
            let ns = b.min(hi) - a.max(lo);
            f(self, i, ns);
        }
    }

    fn cpu_bucket(&mut self, cpu: usize, i: usize) -> &mut CpuBucket {
        let v = &mut self.cpus[cpu].buckets;
        if v.len() <= i {
            v.resize(i + 1, CpuBucket::default());
        }
        &mut v[i]
    }

    fn close_running(&mut self, cpu: usize, t: Nanos) {
        if let Some((pid, since)) = self.cpus[cpu].running.take() {
            self.spread(since, t, |s, i, ns| {
                add_run(&mut s.cpu_bucket(cpu, i).run, pid, ns)
            });
        }
    }

    fn close_freq(&mut self, cpu: usize, t: Nanos) {
        if let Some((khz, since)) = self.cpus[cpu].freq {
            self.spread(since, t, |s, i, ns| {
                let b = s.cpu_bucket(cpu, i);
                b.freq_khz_ns += khz as u128 * ns as u128;
                b.freq_ns += ns;
                b.freq_max = b.freq_max.max(khz);
            });
        }
    }

    fn close_idle(&mut self, cpu: usize, t: Nanos) {
        if let Some((state, since)) = self.cpus[cpu].idle.take() {
            if state >= 1 {
                self.spread(since, t, |s, i, ns| s.cpu_bucket(cpu, i).idle_deep_ns += ns);
            }
        }
    }

    fn close_ou(&mut self, t: Nanos) {
        if let Some(since) = self.ou_since.take() {
            self.spread(since, t, |s, i, ns| {
                if s.ou.len() <= i {
                    s.ou.resize(i + 1, 0);
                }
                s.ou[i] += ns;
            });
        }
    }

    fn task_bucket(&mut self, pid: u32, t: Nanos) -> Option<&mut TaskBucket> {
        let i = self.index(t);
        let v = self.tasks.get_mut(&pid)?;
        if v.len() <= i {
            v.resize(i + 1, TaskBucket::default());
        }
        Some(&mut v[i])
    }

    /// Ends the series at `end_ns` (the sink's `end` does it too) and returns them.
    pub fn finish(mut self) -> Timeline {
        let end = self.end.max(self.t0);
        for cpu in 0..self.cpus.len() {
            self.close_running(cpu, end);
            self.close_freq(cpu, end);
            self.close_idle(cpu, end);
        }
        self.close_ou(end);
        let n = if end > self.t0 {
            self.index(end - 1) + 1
        } else {
            0
        };
        let w = self.width as f64;
        let cpus = self
            .cpus
            .iter()
            .enumerate()
            .map(|(cpu, c)| {
                let b = |i: usize| c.buckets.get(i).cloned().unwrap_or_default();
                let all: Vec<CpuBucket> = (0..n).map(b).collect();
                CpuSeries {
                    cpu,
                    task: all
                        .iter()
                        .map(|b| {
                            // the longest; ties to the lower pid
                            b.run
                                .iter()
                                .max_by(|x, y| x.1.cmp(&y.1).then(y.0.cmp(&x.0)))
                                .map_or(0, |r| r.0)
                        })
                        .collect(),
                    busy: all
                        .iter()
                        .map(|b| b.run.iter().map(|r| r.1).sum::<Nanos>() as f64 / w)
                        .collect(),
                    freq_khz: all
                        .iter()
                        .map(|b| {
                            if b.freq_ns == 0 {
                                0
                            } else {
                                (b.freq_khz_ns / b.freq_ns as u128) as u64
                            }
                        })
                        .collect(),
                    freq_max_khz: all.iter().map(|b| b.freq_max).collect(),
                    idle_deep: all.iter().map(|b| b.idle_deep_ns as f64 / w).collect(),
                    util: hold(all.iter().map(|b| b.util_max)),
                }
            })
            .collect();
        let tasks = self
            .tasks
            .iter()
            .map(|(&pid, v)| {
                let b = |i: usize| v.get(i).copied().unwrap_or_default();
                TaskSeries {
                    pid,
                    comm: self.comms.get(&pid).cloned().unwrap_or_default(),
                    util: hold((0..n).map(|i| b(i).util)),
                    util_est: hold((0..n).map(|i| b(i).util_est)),
                }
            })
            .collect();
        let overutilized = (0..n)
            .map(|i| self.ou.get(i).copied().unwrap_or(0) as f64 / w)
            .collect();
        Timeline {
            bucket_s: w / 1e9,
            buckets: n,
            comms: self.comms,
            cpus,
            tasks,
            overutilized,
        }
    }
}

fn add_run(v: &mut Vec<(u32, Nanos)>, pid: u32, ns: Nanos) {
    match v.iter_mut().find(|r| r.0 == pid) {
        Some(r) => r.1 += ns,
        None => v.push((pid, ns)),
    }
}

/// Workload tasks are rt-app's threads (pids from 1001); the report follows those.
fn is_workload_pid(pid: u32) -> bool {
    pid > 1000
}

impl TraceSink for TimelineSink {
    fn interest(&self) -> Interest {
        Interest {
            sched: true,
            power: true,
            signals: true,
            markers: false,
            overutilized: true,
        }
    }

    fn begin(&mut self, nr_cpus: usize, start_ns: Nanos) {
        self.t0 = start_ns;
        self.end = start_ns;
        self.width = FIRST_BUCKET_NS;
        self.cpus = (0..nr_cpus).map(|_| CpuState::default()).collect();
    }

    fn record(&mut self, ctx: &Ctx<'_>, ev: &TraceEvent<'_>) {
        let t = ctx.ts.max(self.t0);
        self.end = self.end.max(t);
        let cpu = ctx.cpu as usize;
        if cpu >= self.cpus.len() {
            return;
        }
        match ev {
            TraceEvent::SchedSwitch { next, .. } => {
                self.close_running(cpu, t);
                if next.pid != 0 {
                    self.comms.insert(next.pid, next.comm.to_string());
                    self.cpus[cpu].running = Some((next.pid, t));
                    if is_workload_pid(next.pid)
                        && !self.tasks.contains_key(&next.pid)
                        && self.tasks.len() < MAX_TASKS
                    {
                        self.tasks.insert(next.pid, Vec::new());
                    }
                }
            }
            TraceEvent::TaskRename { pid, newcomm, .. } if self.comms.contains_key(pid) => {
                self.comms.insert(*pid, newcomm.to_string());
            }
            TraceEvent::CpuFrequency { cpu_id, state } => {
                let c = *cpu_id as usize;
                if c < self.cpus.len() {
                    self.close_freq(c, t);
                    self.cpus[c].freq = Some((*state, t));
                }
            }
            TraceEvent::CpuIdle { cpu_id, state } => {
                let c = *cpu_id as usize;
                if c < self.cpus.len() {
                    self.close_idle(c, t);
                    if *state >= 0 {
                        self.cpus[c].idle = Some((*state, t));
                    }
                }
            }
            TraceEvent::SchedOverutilized { overutilized, .. } => {
                if *overutilized {
                    self.ou_since.get_or_insert(t);
                } else {
                    self.close_ou(t);
                }
            }
            TraceEvent::SchedPeltCfs { cpu: c, util, .. } => {
                let c = *c as usize;
                if c < self.cpus.len() {
                    let i = self.index(t);
                    let b = self.cpu_bucket(c, i);
                    b.util_max = max_opt(b.util_max, Some(*util));
                }
            }
            TraceEvent::SchedPeltSe { task, util, .. } => {
                if let Some(b) = self.task_bucket(task.pid, t) {
                    b.util = max_opt(b.util, Some(*util));
                }
            }
            TraceEvent::SchedUtilEstSe { task, enqueued, .. } => {
                if let Some(b) = self.task_bucket(task.pid, t) {
                    b.util_est = max_opt(b.util_est, Some(*enqueued));
                }
            }
            _ => {}
        }
    }

    fn end(&mut self, end_ns: Nanos) {
        self.end = self.end.max(end_ns);
    }
}
