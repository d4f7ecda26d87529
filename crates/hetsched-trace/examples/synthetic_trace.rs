//! Writes a small but realistic synthetic trace with [`FtraceTextSink`], without the engine:
//! a HiKey960-like 8-CPU system (CPUs 0-3 LITTLE, 4-7 big), two rt-app-style periodic
//! tasks, wakeups, preemption, sleeps, PELT/util_est/capacity signals, frequency and idle
//! events and the rt-app `trace_marker` lines.
//!
//! * `small-0` (pid 1000) is pinned to CPU0: 4 ms every 14 ms.
//! * `big-1` (pid 1001) runs 3 ms every 10 ms on CPU4, but every 4th activation it wakes
//!   on CPU0 and preempts `small-0` if that one is running (`prev_state=0`).
//!
//! Usage: `cargo run -p hetsched-trace --example synthetic_trace -- OUT.txt [SECONDS]`.
//! The LISA check (`tests/python/lisa/`) accepts it with `HETSCHED_TRACE=OUT.txt`.

use std::process::ExitCode;

use hetsched_core::trace::{Ctx, RtappMarker, TaskRef, TraceEvent, TraceSink};
use hetsched_trace::FtraceTextSink;

const MS: u64 = 1_000_000;
const US: u64 = 1_000;
const NR_CPUS: usize = 8;
const IDLE_COMMS: [&str; NR_CPUS] = [
    "swapper/0",
    "swapper/1",
    "swapper/2",
    "swapper/3",
    "swapper/4",
    "swapper/5",
    "swapper/6",
    "swapper/7",
];
/// Capacity of each CPU (LITTLE, big).
const CAPACITY: [u64; NR_CPUS] = [462, 462, 462, 462, 1024, 1024, 1024, 1024];
/// Frequencies (kHz) of the LITTLE and big clusters, lowest to highest.
const FREQS: [[u64; 3]; 2] = [
    [533_000, 999_000, 1_844_000],
    [903_000, 1_421_000, 2_362_000],
];

/// A periodic rt-app-like task.
struct Task {
    comm: &'static str,
    pid: u32,
    period: u64,
    run: u64,
    /// Start of the current activation.
    activation: u64,
    /// Work left in the current activation.
    left: u64,
    /// Loop counter.
    loops: u64,
    /// CPU of the current activation.
    cpu: usize,
    /// Has it run since its last wakeup (the loop-start marker is written then)?
    started: bool,
    /// PELT util_avg, and the time it was last updated.
    util: f64,
    util_at: u64,
    /// Has the activation ended (task sleeping)?
    sleeping: bool,
}

impl Task {
    fn tref(&self) -> TaskRef<'static> {
        TaskRef {
            comm: self.comm,
            pid: self.pid,
            prio: 120,
        }
    }

    /// Decays (and accrues while running) util_avg up to `now`, with y^32 = 0.5 per
    /// 1024 µs period — float PELT, good enough for a synthetic trace.
    fn update_util(&mut self, now: u64, running: bool) {
        let periods = (now - self.util_at) as f64 / (1024.0 * US as f64);
        let decay = 0.5f64.powf(periods / 32.0);
        self.util = self.util * decay + if running { 1024.0 * (1.0 - decay) } else { 0.0 };
        self.util_at = now;
    }
}

/// Per-CPU state: who runs, who waits (preempted tasks, most recent first).
#[derive(Default, Clone)]
struct Cpu {
    curr: Option<usize>,
    /// When `curr` last started running.
    since: u64,
    waiting: Vec<usize>,
    freq_idx: usize,
}

struct Sim<'s> {
    sink: &'s mut dyn TraceSink,
    tasks: Vec<Task>,
    cpus: Vec<Cpu>,
}

impl Sim<'_> {
    fn ctx(&self, ts: u64, cpu: usize) -> Ctx<'static> {
        match self.cpus[cpu].curr {
            Some(t) => Ctx {
                ts,
                cpu: cpu as u32,
                comm: self.tasks[t].comm,
                pid: self.tasks[t].pid,
            },
            None => Ctx {
                ts,
                cpu: cpu as u32,
                comm: "<idle>",
                pid: 0,
            },
        }
    }

    fn emit(&mut self, ts: u64, cpu: usize, ev: TraceEvent<'_>) {
        let c = self.ctx(ts, cpu);
        self.sink.record(&c, &ev);
    }

    fn idle_ref(cpu: usize) -> TaskRef<'static> {
        TaskRef {
            comm: IDLE_COMMS[cpu],
            pid: 0,
            prio: 120,
        }
    }

    /// PELT lines for task `t` and the root cfs_rq of `cpu`, as update_load_avg() does.
    fn pelt(&mut self, ts: u64, cpu: usize, t: usize) {
        let task = self.tasks[t].tref();
        let util = self.tasks[t].util.round() as u64;
        let cfs_util = self
            .tasks
            .iter()
            .filter(|x| x.cpu == cpu)
            .map(|x| x.util.round() as u64)
            .sum::<u64>()
            .min(1024);
        let pelt_clock = ts;
        self.emit(
            ts,
            cpu,
            TraceEvent::SchedPeltSe {
                cpu: cpu as u32,
                task,
                load: util,
                rbl_load: util,
                util,
                update_time: pelt_clock,
            },
        );
        self.emit(
            ts,
            cpu,
            TraceEvent::SchedPeltCfs {
                cpu: cpu as u32,
                load: cfs_util,
                rbl_load: cfs_util,
                util: cfs_util,
                update_time: pelt_clock,
            },
        );
        self.emit(
            ts,
            cpu,
            TraceEvent::SchedUtilEstSe {
                cpu: cpu as u32,
                task,
                enqueued: util,
                ewma: util,
                util,
            },
        );
        self.emit(
            ts,
            cpu,
            TraceEvent::SchedUtilEstCfs {
                cpu: cpu as u32,
                enqueued: cfs_util,
                ewma: cfs_util,
                util: cfs_util,
            },
        );
        // schedutil-like: pick the lowest OPP covering util * 1.25.
        let cluster = cpu / 4;
        let need = cfs_util * 5 / 4;
        let idx = (0..3)
            .find(|&i| FREQS[cluster][i] * 1024 / FREQS[cluster][2] >= need)
            .unwrap_or(2);
        if idx != self.cpus[cpu].freq_idx {
            self.set_freq(ts, cpu, idx);
        }
    }

    fn set_freq(&mut self, ts: u64, cpu: usize, idx: usize) {
        let cluster = cpu / 4;
        for c in cluster * 4..cluster * 4 + 4 {
            self.cpus[c].freq_idx = idx;
            self.emit(
                ts,
                cpu,
                TraceEvent::CpuFrequency {
                    cpu_id: c as u32,
                    state: FREQS[cluster][idx],
                },
            );
        }
        let f = FREQS[cluster][idx];
        let orig = CAPACITY[cpu];
        for c in cluster * 4..cluster * 4 + 4 {
            self.emit(
                ts,
                cpu,
                TraceEvent::SchedCpuCapacity {
                    cpu: c as u32,
                    capacity: orig - orig / 64,
                    capacity_orig: orig,
                    capacity_curr: orig * f / FREQS[cluster][2],
                },
            );
        }
    }

    /// Switches `cpu` from its current task (leaving in `prev_state`) to `next`.
    fn switch(&mut self, ts: u64, cpu: usize, prev_state: u32, next: Option<usize>) {
        let prev_ref = match self.cpus[cpu].curr {
            Some(t) => self.tasks[t].tref(),
            None => Self::idle_ref(cpu),
        };
        let next_ref = match next {
            Some(t) => self.tasks[t].tref(),
            None => Self::idle_ref(cpu),
        };
        if self.cpus[cpu].curr.is_none() {
            self.emit(
                ts,
                cpu,
                TraceEvent::CpuIdle {
                    cpu_id: cpu as u32,
                    state: -1,
                },
            );
        }
        self.emit(
            ts,
            cpu,
            TraceEvent::SchedSwitch {
                prev: prev_ref,
                prev_state,
                next: next_ref,
            },
        );
        self.cpus[cpu].curr = next;
        self.cpus[cpu].since = ts;
        match next {
            None => self.emit(
                ts,
                cpu,
                TraceEvent::CpuIdle {
                    cpu_id: cpu as u32,
                    state: 0,
                },
            ),
            Some(t) => {
                self.tasks[t].update_util(ts, false);
                if !self.tasks[t].started {
                    self.tasks[t].started = true;
                    let loops = self.tasks[t].loops;
                    if loops == 0 {
                        self.emit(
                            ts,
                            cpu,
                            TraceEvent::Print(RtappMarker::Task { event: "start" }),
                        );
                    }
                    self.emit(
                        ts,
                        cpu,
                        TraceEvent::Print(RtappMarker::Loop {
                            event: "start",
                            thread_loop: loops,
                            phase: 0,
                            phase_loop: loops,
                        }),
                    );
                    self.emit(
                        ts,
                        cpu,
                        TraceEvent::Print(RtappMarker::Event {
                            id: 0,
                            type_id: 4,
                            desc: "run",
                        }),
                    );
                }
            }
        }
    }

    /// Accounts the work done by the task running on `cpu` until `ts`.
    fn account(&mut self, ts: u64, cpu: usize) {
        if let Some(t) = self.cpus[cpu].curr {
            let ran = ts - self.cpus[cpu].since;
            let task = &mut self.tasks[t];
            task.left = task.left.saturating_sub(ran);
            task.update_util(ts, true);
            self.cpus[cpu].since = ts;
        }
    }

    fn wakeup(&mut self, ts: u64, t: usize) {
        let task = &self.tasks[t];
        let dest = if task.pid == 1001 && task.loops % 4 == 3 {
            0
        } else if task.pid == 1001 {
            4
        } else {
            0
        };
        self.migrate(ts, t, dest);
        let task = &mut self.tasks[t];
        task.left = task.run;
        task.activation = ts;
        task.started = false;
        task.sleeping = false;
        task.update_util(ts, false);
        let cpu = task.cpu;
        let tref = task.tref();
        self.account(ts, cpu);
        self.emit(
            ts,
            cpu,
            TraceEvent::SchedWakeup {
                task: tref,
                target_cpu: cpu as u32,
            },
        );
        match self.cpus[cpu].curr {
            None => self.switch(ts, cpu, 0, Some(t)),
            // big-1 preempts small-0 (wakeup preemption).
            Some(curr) if self.tasks[curr].pid == 1000 && tref.pid == 1001 => {
                self.pelt(ts, cpu, curr);
                self.cpus[cpu].waiting.insert(0, curr);
                self.switch(ts, cpu, 0, Some(t));
            }
            Some(_) => self.cpus[cpu].waiting.push(t),
        }
    }

    /// Moves sleeping task `t` to `dest` (set_task_cpu() at wakeup), traced on `dest`.
    fn migrate(&mut self, ts: u64, t: usize, dest: usize) {
        let orig = self.tasks[t].cpu;
        if orig != dest {
            let task = self.tasks[t].tref();
            self.emit(
                ts,
                dest,
                TraceEvent::SchedMigrateTask {
                    task,
                    orig_cpu: orig as u32,
                    dest_cpu: dest as u32,
                },
            );
            self.tasks[t].cpu = dest;
        }
    }

    /// The task on `cpu` finished its activation at `ts`: stats, loop end, sleep.
    fn complete(&mut self, ts: u64, cpu: usize) {
        self.account(ts, cpu);
        let Some(t) = self.cpus[cpu].curr else {
            return;
        };
        let task = &self.tasks[t];
        let stats = RtappMarker::Stats {
            period: ((ts - task.activation) / US) as i64,
            run: (task.run / US) as i64,
            wu_lat: 0,
            slack: ((task.period - (ts - task.activation)) / US) as i64,
            c_period: (task.period / US) as i64,
            c_run: (task.run / US) as i64,
        };
        let lp = RtappMarker::Loop {
            event: "end",
            thread_loop: task.loops,
            phase: 0,
            phase_loop: task.loops,
        };
        self.emit(ts, cpu, TraceEvent::Print(lp));
        self.emit(ts, cpu, TraceEvent::Print(stats));
        self.pelt(ts, cpu, t);
        self.tasks[t].loops += 1;
        self.tasks[t].sleeping = true;
        let next = if self.cpus[cpu].waiting.is_empty() {
            None
        } else {
            Some(self.cpus[cpu].waiting.remove(0))
        };
        self.switch(ts, cpu, 1, next);
    }

    /// Time at which the task running on `cpu` completes.
    fn completion(&self, cpu: usize) -> Option<u64> {
        self.cpus[cpu]
            .curr
            .map(|t| self.cpus[cpu].since + self.tasks[t].left)
    }
}

fn run(path: &str, seconds: u64) -> std::io::Result<()> {
    let t0 = 100_000 * MS; // 100 s, like a real boot-relative clock.
    let t_end = t0 + seconds * 1_000 * MS;
    let mut sink = FtraceTextSink::create(path)?;
    sink.begin(NR_CPUS, t0);
    {
        let mut sim = Sim {
            sink: &mut sink,
            tasks: vec![
                Task {
                    comm: "small-0",
                    pid: 1000,
                    period: 14 * MS,
                    run: 4 * MS,
                    activation: 0,
                    left: 0,
                    loops: 0,
                    cpu: 0,
                    started: false,
                    util: 0.0,
                    util_at: t0,
                    sleeping: true,
                },
                Task {
                    comm: "big-1",
                    pid: 1001,
                    period: 10 * MS,
                    run: 3 * MS,
                    activation: 0,
                    left: 0,
                    loops: 0,
                    cpu: 4,
                    started: false,
                    util: 0.0,
                    util_at: t0,
                    sleeping: true,
                },
            ],
            cpus: vec![Cpu::default(); NR_CPUS],
        };
        for cpu in [0, 4] {
            sim.set_freq(t0, cpu, 0);
        }
        sim.emit(
            t0,
            0,
            TraceEvent::SchedOverutilized {
                overutilized: false,
                span: &[0xff],
            },
        );
        sim.emit(
            t0,
            0,
            TraceEvent::Print(RtappMarker::Main {
                event: "start",
                data: 0,
            }),
        );
        for t in 0..sim.tasks.len() {
            let (pid, comm, tref) = (sim.tasks[t].pid, sim.tasks[t].comm, sim.tasks[t].tref());
            sim.emit(
                t0,
                0,
                TraceEvent::SchedWakeupNew {
                    task: TaskRef {
                        comm: "rt-app",
                        ..tref
                    },
                    target_cpu: 0,
                },
            );
            sim.emit(
                t0,
                0,
                TraceEvent::TaskRename {
                    pid,
                    oldcomm: "rt-app",
                    newcomm: comm,
                },
            );
        }
        // First activations, 1 ms apart; then periodic.
        let mut next_wake: Vec<u64> = (0..sim.tasks.len() as u64)
            .map(|i| t0 + (i + 1) * MS)
            .collect();
        let mut last = t0;
        loop {
            let wake = next_wake
                .iter()
                .enumerate()
                .filter(|&(t, _)| sim.tasks[t].sleeping)
                .map(|(t, &w)| (w, t))
                .min();
            let done = (0..NR_CPUS)
                .filter_map(|c| sim.completion(c).map(|at| (at, c)))
                .min();
            let now = match (wake, done) {
                (Some((w, _)), Some((d, _))) => w.max(last).min(d),
                (Some((w, _)), None) => w.max(last),
                (None, Some((d, _))) => d,
                (None, None) => break,
            };
            last = now;
            if now >= t_end {
                break;
            }
            if let Some((_, cpu)) = done.filter(|&(d, _)| d == now) {
                sim.complete(now, cpu);
            } else if let Some((_, t)) = wake {
                // A late activation (it was still running) starts as soon as it sleeps.
                let period = sim.tasks[t].period;
                while next_wake[t] <= now {
                    next_wake[t] += period;
                }
                sim.wakeup(now, t);
            }
        }
        // End of run: each task wakes one last time, says goodbye and exits.
        let mut ts = t_end;
        while let Some(cpu) = (0..NR_CPUS).find(|&c| sim.cpus[c].curr.is_some()) {
            sim.complete(ts, cpu);
        }
        for t in 0..sim.tasks.len() {
            // Exit where it usually runs: small-0 on CPU0 (pinned), big-1 on CPU4.
            let cpu = 4 * t;
            sim.migrate(ts, t, cpu);
            let tref = sim.tasks[t].tref();
            sim.emit(
                ts,
                cpu,
                TraceEvent::SchedWakeup {
                    task: tref,
                    target_cpu: cpu as u32,
                },
            );
            sim.tasks[t].started = true;
            sim.switch(ts, cpu, 0, Some(t));
            ts += 10 * US;
            sim.emit(
                ts,
                cpu,
                TraceEvent::Print(RtappMarker::Task { event: "end" }),
            );
            sim.emit(ts, cpu, TraceEvent::SchedProcessExit { task: tref });
            sim.emit(
                ts,
                cpu,
                TraceEvent::SchedSwitch {
                    prev: tref,
                    prev_state: 16,
                    next: Sim::idle_ref(cpu),
                },
            );
            sim.cpus[cpu].curr = None;
            sim.emit(
                ts,
                cpu,
                TraceEvent::CpuIdle {
                    cpu_id: cpu as u32,
                    state: 0,
                },
            );
            ts += 10 * US;
        }
        sim.emit(
            ts,
            0,
            TraceEvent::Print(RtappMarker::Main {
                event: "end",
                data: 0,
            }),
        );
        sim.sink.end(ts);
    }
    sink.flush()
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next() else {
        eprintln!("usage: synthetic_trace OUT.txt [SECONDS]");
        return ExitCode::from(2);
    };
    let seconds = match args.next().map(|s| s.parse::<u64>()) {
        None => 2,
        Some(Ok(s)) => s,
        Some(Err(e)) => {
            eprintln!("synthetic_trace: bad SECONDS: {e}");
            return ExitCode::from(2);
        }
    };
    match run(&path, seconds) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("synthetic_trace: {path}: {e}");
            ExitCode::FAILURE
        }
    }
}
