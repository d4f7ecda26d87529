//! The simulator: runqueues, tasks running rt-app programs, the scheduler's event hooks
//! (wake-up, tick, context switch, block, migration) in the kernel's order, and the
//! governors. One run is a pure function of its [`RunSpec`]: [`run`].
//!
//! The order of operations at each hook follows the event-hook checklist of
//! `kernel/sched/core.c` and `kernel/sched/fair.c` (v6.11): `try_to_wake_up()` →
//! `select_task_rq()` → `migrate_task_rq_fair()` → `enqueue_task_fair()` (util_est, PELT
//! with attach, `place_entity()`) → `wakeup_preempt()`; `sched_tick()` → `update_curr()`,
//! PELT, tick preemption, `sched_balance_trigger()`; `__schedule()` → `dequeue_task_fair()`
//! (PELT, util_est update) → `pick_next_task_fair()` (newidle balance when empty) →
//! `sched_switch`.

pub mod program;

use crate::engine::{EventQueue, Rng};
use crate::metrics::{CpuMetrics, MetricsSink, TaskMetrics};
use crate::options::{MarkerChoice, Options, OptionsError, Settings};
use crate::pelt::{self, CfsRqState, SeState, UtilEstVersion, DO_ATTACH, DO_DETACH, UPDATE_TG};
use crate::platform::Platform;
use crate::policy::{balance, placement, CpuView, Migration, MigrationReason, SchedView};
use crate::sched::fair::{CfsRq, FairVariant, SchedEntity};
use crate::sched::{CpuSet, LoadWeight};
use crate::time::{Nanos, NSEC_PER_MSEC, NSEC_PER_SEC};
use crate::trace::{Ctx, Interest, RtappMarker, TaskRef, TraceEvent, TraceSink};
use crate::workload::{Calibration, Event, FtraceCategories, SchedPolicy, Span, Workload};
use program::{Op, Pc, Step, TimerState};
use serde::Serialize;
use std::collections::BTreeMap;

/// Everything a run needs.
#[derive(Debug, Clone)]
pub struct RunSpec {
    /// The platform.
    pub platform: Platform,
    /// The workload.
    pub workload: Workload,
    /// Options (resolved against the platform before the run).
    pub options: Options,
    /// Seed of the run's RNG.
    pub seed: u64,
    /// Simulated duration; overrides the workload's `global.duration`.
    pub duration_ns: Option<Nanos>,
}

/// Why a run could not start.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// Bad options.
    #[error(transparent)]
    Options(#[from] OptionsError),
    /// The workload cannot run on this platform or with this engine; `at` is
    /// `file:line:col` of the offending item.
    #[error("{at}: {msg}")]
    Workload {
        /// `file:line:col`.
        at: String,
        /// What is wrong and what would be accepted.
        msg: String,
    },
    /// No duration was given and some task never ends.
    #[error("{0}: the workload has no global.duration and task `{1}` loops forever; give a duration (--duration 10s)")]
    NoDuration(String, String),
}

/// Results of a run.
#[derive(Debug, Clone, Serialize)]
pub struct RunResult {
    /// hetsched version that produced it.
    pub hetsched_version: String,
    /// The run's seed.
    pub seed: u64,
    /// Platform name.
    pub platform: String,
    /// Workload name.
    pub workload: String,
    /// FNV-1a 64 of the resolved settings, hex.
    pub settings_hash: String,
    /// The resolved settings.
    pub settings: Settings,
    /// Simulated time, s.
    pub duration_s: f64,
    /// Per task.
    pub tasks: Vec<TaskMetrics>,
    /// Per CPU.
    pub cpus: Vec<CpuMetrics>,
    /// Migrations by reason.
    pub migrations: BTreeMap<&'static str, u64>,
    /// Engine statistics.
    pub engine: EngineStats,
}

/// Engine statistics (deterministic: no wall-clock numbers).
#[derive(Debug, Clone, Serialize)]
pub struct EngineStats {
    /// Events processed.
    pub events: u64,
    /// Context switches.
    pub context_switches: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    /// The workload starts: threads are created.
    Start,
    /// A thread's sleep or timer expired.
    Wake { tid: u32, gen: u32 },
    /// The current op of a CPU's task completes.
    OpDone { cpu: u32, gen: u32 },
    /// Idle balance on behalf of tickless idle CPUs.
    NohzKick,
    /// The end of the run.
    End,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TState {
    Runnable,
    Sleeping,
    Dead,
}

#[derive(Debug, Clone)]
struct Thread {
    pid: u32,
    comm: String,
    task: usize,
    policy: SchedPolicy,
    nice: i32,
    affinity: CpuSet,
    state: TState,
    cpu: usize,
    pc: Pc,
    op: Op,
    wake_gen: u32,
    t_first: Nanos,
    renamed: bool,
    started: bool,
    /// Timer deadline the thread is sleeping for (wake-up latency is measured from it).
    timer_wait: Option<Nanos>,
    /// Unique timers, by slot.
    unique_timers: Vec<TimerState>,
    // rt-app per-iteration statistics
    loop_start: Nanos,
    run_ns: Nanos,
    op_start: Nanos,
    wu_lat_ns: i64,
    slack_ns: i64,
    done_loops: bool,
}

impl Thread {
    fn prio(&self) -> i32 {
        120 + self.nice
    }
}

#[derive(Debug, Clone)]
struct Rq {
    cfs: CfsRq,
    curr: Option<usize>,
    clock: pelt::PeltClock,
    avg_rt: pelt::SchedAvg,
    avg_dl: pelt::SchedAvg,
    cap: u64,
    freq_khz: u64,
    max_freq_khz: u64,
    freq_scale: u64,
    seg_start: Nanos,
    op_gen: u32,
    next_balance: Nanos,
    need_resched: bool,
}

/// Where a timer event's state lives.
#[derive(Debug, Clone, Copy)]
enum TimerSlot {
    Shared(usize),
    Unique(usize),
}

struct Out<'a, 'b> {
    metrics: MetricsSink,
    metrics_interest: Interest,
    user: &'a mut [&'b mut dyn TraceSink],
    user_interest: Vec<Interest>,
    any: Interest,
}

impl Out<'_, '_> {
    #[inline]
    fn emit(&mut self, ctx: &Ctx<'_>, ev: &TraceEvent<'_>, group: fn(&Interest) -> bool) {
        if group(&self.metrics_interest) {
            self.metrics.record(ctx, ev);
        }
        for (s, i) in self.user.iter_mut().zip(self.user_interest.iter()) {
            if group(i) {
                s.record(ctx, ev);
            }
        }
    }
}

fn g_sched(i: &Interest) -> bool {
    i.sched
}
fn g_power(i: &Interest) -> bool {
    i.power
}
fn g_signals(i: &Interest) -> bool {
    i.signals
}
fn g_markers(i: &Interest) -> bool {
    i.markers
}

const PID_BASE: u32 = 1000;
/// Simulated uptime when the workload starts. The kernel treats a PELT
/// `last_update_time` of 0 as "not attached yet", so no clock may start at 0; traces
/// therefore begin at 1.000000, like a trace taken one second after boot.
pub const BOOT_OFFSET: Nanos = NSEC_PER_SEC;
const TASK_RUNNING: u32 = 0;
const TASK_INTERRUPTIBLE: u32 = 1;
const EXIT_DEAD: u32 = 16;

struct Sim<'w> {
    p: &'w Platform,
    w: &'w Workload,
    s: Settings,
    q: EventQueue<Ev>,
    #[allow(dead_code)] // owned by the run for policies that draw from it
    rng: Rng,
    threads: Vec<Thread>,
    ents: Vec<SchedEntity>,
    rqs: Vec<Rq>,
    resched: Vec<usize>,
    shared_timers: Vec<TimerState>,
    timer_slots: Vec<Vec<Vec<Option<TimerSlot>>>>,
    cap_ref: u64,
    markers: FtraceCategories,
    end: Nanos,
    t0: Nanos,
    idle_names: Vec<String>,
    migrations: [u64; MigrationReason::ALL.len()],
    switches: u64,
    ue_ver: UtilEstVersion,
    view: Vec<CpuView>,
    nohz_kick_pending: bool,
    alive: usize,
    nr_idle: usize,
    nr_overloaded: usize,
    nohz_next_balance: Nanos,
    /// Affinity each phase applies: its `cpus`, else the task's, else all CPUs.
    phase_affinity: Vec<Vec<CpuSet>>,
    /// CPUs whose tick is armed. Ticks fire on a global grid (`sched_skew_tick=0`), so
    /// every armed tick is at the same time, `tick_at`; they run before other events at
    /// that time, in CPU order. Kept out of the event heap: it is most of the events.
    tick_pending: CpuSet,
    tick_at: Nanos,
}

fn span_at(w: &Workload, span: Span) -> String {
    format!(
        "{}:{}:{}",
        w.source.as_deref().unwrap_or(&w.name),
        span.line,
        span.col
    )
}

/// rt-app's thread name: `<task>-<index>`, cut to the kernel's 15-character comm.
pub fn thread_comm(task: &str, index: u32) -> String {
    let mut s = format!("{task}-{index}");
    s = s.replace(' ', "_");
    if s.len() > 15 {
        let mut cut = 15;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        s.truncate(cut);
    }
    s
}

/// Checks a workload against a platform and the engine's current coverage.
pub fn validate(w: &Workload, p: &Platform) -> Result<(), RunError> {
    let n = p.nr_cpus();
    if let Calibration::Cpu(c) = w.calibration {
        if c >= n {
            return Err(RunError::Workload {
                at: w.source.clone().unwrap_or_else(|| w.name.clone()),
                msg: format!(
                    "global.calibration \"CPU{c}\" names a CPU that platform {} does not have (CPUs 0-{})",
                    p.name,
                    n - 1
                ),
            });
        }
    }
    let check_cpus = |attrs: &crate::workload::SchedAttrs,
                      fallback: Span|
     -> Result<(), RunError> {
        if let Some(cpus) = &attrs.cpus {
            let at = span_at(w, attrs.cpus_span.unwrap_or(fallback));
            if let Some(bad) = cpus.iter().find(|&&c| c >= n) {
                return Err(RunError::Workload {
                    at,
                    msg: format!(
                        "cpus names CPU {bad} but platform {} has CPUs 0-{}; expected CPU numbers below {n}",
                        p.name,
                        n - 1
                    ),
                });
            }
            if cpus.is_empty() {
                return Err(RunError::Workload {
                    at,
                    msg: "cpus is empty; expected at least one CPU number".into(),
                });
            }
        }
        Ok(())
    };
    for t in &w.tasks {
        check_cpus(&t.attrs, t.span)?;
        let check_policy = |pol: Option<SchedPolicy>, span: Span| -> Result<(), RunError> {
            match pol {
                Some(pl) if !pl.is_fair() => Err(RunError::Workload {
                    at: span_at(w, span),
                    msg: format!(
                        "policy {} is not simulated yet (the RT and deadline classes come in a later release); expected SCHED_OTHER, SCHED_BATCH or SCHED_IDLE",
                        pl.as_str()
                    ),
                }),
                _ => Ok(()),
            }
        };
        check_policy(t.attrs.policy.or(Some(w.default_policy)), t.span)?;
        if t.phases.is_empty() {
            return Err(RunError::Workload {
                at: span_at(w, t.span),
                msg: format!(
                    "task `{}` has no events; expected at least one event",
                    t.name
                ),
            });
        }
        for ph in &t.phases {
            check_cpus(&ph.attrs, t.span)?;
            check_policy(ph.attrs.policy, t.span)?;
            for e in &ph.events {
                match e.event {
                    Event::Run { .. }
                    | Event::Runtime { .. }
                    | Event::Sleep { .. }
                    | Event::Timer { .. } => {}
                    ref other => {
                        return Err(RunError::Workload {
                            at: span_at(w, e.span),
                            msg: format!(
                                "event `{}` is read but not simulated yet in this release; supported: run, runtime, sleep, timer",
                                other.key()
                            ),
                        })
                    }
                }
            }
        }
    }
    Ok(())
}

/// Runs one simulation: `run(settings, seed) -> RunResult`, streaming events to `sinks`.
pub fn run(spec: &RunSpec, sinks: &mut [&mut dyn TraceSink]) -> Result<RunResult, RunError> {
    let settings = Settings::resolve(&spec.options, &spec.platform)?;
    validate(&spec.workload, &spec.platform)?;
    let w = &spec.workload;
    let duration = match (spec.duration_ns, w.duration_s) {
        (Some(d), _) => Some(d),
        (None, Some(s)) if s > 0 => Some(s * NSEC_PER_SEC),
        _ => None,
    };
    let end = match duration {
        Some(d) => d,
        None => {
            let forever = |t: &&crate::workload::TaskSpec| {
                t.instances > 0
                    && (t.loop_count < 0 || t.phases.iter().any(|p| p.loop_count == u64::MAX))
            };
            if let Some(t) = w.tasks.iter().find(forever) {
                return Err(RunError::NoDuration(
                    w.source.clone().unwrap_or_else(|| w.name.clone()),
                    t.name.clone(),
                ));
            }
            // Tasks end by themselves: bound the run generously and stop when all exit.
            3600 * NSEC_PER_SEC
        }
    };
    let mut sim = Sim::new(spec, settings, BOOT_OFFSET + end);
    let user_interest: Vec<Interest> = sinks.iter().map(|s| s.interest()).collect();
    let metrics = MetricsSink::new();
    let metrics_interest = metrics.interest();
    let any = user_interest
        .iter()
        .fold(metrics_interest, |a, b| a.union(*b));
    let mut out = Out {
        metrics,
        metrics_interest,
        user: sinks,
        user_interest,
        any,
    };
    sim.run(&mut out);
    let (tasks, cpus) = out.metrics.results();
    let settings_hash = format!("{:016x}", sim.s.hash());
    Ok(RunResult {
        hetsched_version: env!("CARGO_PKG_VERSION").to_string(),
        seed: spec.seed,
        platform: spec.platform.name.clone(),
        workload: w.name.clone(),
        settings_hash,
        duration_s: (sim.q.now() - sim.t0) as f64 / NSEC_PER_SEC as f64,
        tasks,
        cpus,
        migrations: MigrationReason::ALL
            .iter()
            .map(|&r| (r.as_str(), sim.migrations[r as usize]))
            .collect(),
        engine: EngineStats {
            events: sim.q.processed(),
            context_switches: sim.switches,
        },
        settings: sim.s.clone(),
    })
}

impl<'w> Sim<'w> {
    fn new(spec: &'w RunSpec, s: Settings, end: Nanos) -> Sim<'w> {
        let p = &spec.platform;
        let w = &spec.workload;
        let n = p.nr_cpus();
        let rqs = (0..n)
            .map(|c| {
                let pd = p.pd_of(c);
                Rq {
                    cfs: CfsRq::default(),
                    curr: None,
                    clock: pelt::PeltClock::default(),
                    avg_rt: pelt::SchedAvg::default(),
                    avg_dl: pelt::SchedAvg::default(),
                    cap: p.cpus[c].capacity,
                    freq_khz: s.fixed_freq_khz[p.cpus[c].perf_domain],
                    max_freq_khz: pd.max_freq_khz,
                    freq_scale: 1024,
                    seg_start: 0,
                    op_gen: 0,
                    next_balance: 0,
                    need_resched: false,
                }
            })
            .collect();
        let cap_ref = match w.calibration {
            Calibration::Cpu(c) => p.cpus[c].capacity,
            Calibration::PLoadNs(_) => p.max_capacity(),
        };
        let markers = match s.options.trace.rtapp_markers {
            MarkerChoice::Workload => w.ftrace,
            MarkerChoice::All => FtraceCategories::ALL,
            MarkerChoice::None => FtraceCategories::default(),
        };
        // Timer slots: shared names get global slots, `unique*` names per-thread slots.
        let mut shared: BTreeMap<&str, usize> = BTreeMap::new();
        let mut timer_slots = Vec::new();
        let mut unique_counts = Vec::new();
        for t in &w.tasks {
            let mut uniq: BTreeMap<&str, usize> = BTreeMap::new();
            let mut per_task = Vec::new();
            for ph in &t.phases {
                let mut per_phase = Vec::new();
                for e in &ph.events {
                    per_phase.push(match &e.event {
                        Event::Timer { name, .. } if name.starts_with("unique") => {
                            let l = uniq.len();
                            Some(TimerSlot::Unique(*uniq.entry(name.as_str()).or_insert(l)))
                        }
                        Event::Timer { name, .. } => {
                            let l = shared.len();
                            Some(TimerSlot::Shared(*shared.entry(name.as_str()).or_insert(l)))
                        }
                        _ => None,
                    });
                }
                per_task.push(per_phase);
            }
            timer_slots.push(per_task);
            unique_counts.push(uniq.len());
        }
        let all = CpuSet::first_n(n);
        let mut threads = Vec::new();
        let mut ents = Vec::new();
        for (ti, t) in w.tasks.iter().enumerate() {
            for i in 0..t.instances {
                let policy = t.attrs.policy.unwrap_or(w.default_policy);
                let nice = if policy.is_fair() {
                    t.attrs.priority.unwrap_or(0).clamp(-20, 19)
                } else {
                    0
                };
                let affinity = t.attrs.cpus.as_ref().map_or(all, |c| CpuSet::from_cpus(c));
                let tid = threads.len();
                threads.push(Thread {
                    pid: PID_BASE + 1 + tid as u32,
                    comm: thread_comm(&t.name, i),
                    task: ti,
                    policy,
                    nice,
                    affinity,
                    state: TState::Sleeping,
                    cpu: 0,
                    pc: Pc::default(),
                    op: Op::Step,
                    wake_gen: 0,
                    t_first: 0,
                    renamed: false,
                    started: false,
                    timer_wait: None,
                    unique_timers: vec![TimerState::default(); unique_counts[ti]],
                    loop_start: 0,
                    run_ns: 0,
                    op_start: 0,
                    wu_lat_ns: 0,
                    slack_ns: 0,
                    done_loops: false,
                });
                let slice = t
                    .attrs
                    .dl_runtime_us
                    .filter(|_| policy.is_fair())
                    .map(|us| (us * 1000).clamp(100_000, 100_000_000))
                    .unwrap_or(s.fair.base_slice);
                ents.push(SchedEntity::new(
                    LoadWeight::for_nice(nice, policy == SchedPolicy::Idle),
                    slice,
                ));
            }
        }
        let view = (0..n)
            .map(|c| CpuView {
                idle: true,
                nr_running: 0,
                cluster: p.cpus[c].cluster,
                capacity: p.cpus[c].capacity,
            })
            .collect();
        Sim {
            p,
            w,
            ue_ver: s.options.pelt.util_est_version,
            s,
            q: EventQueue::default(),
            rng: Rng::new(spec.seed),
            threads,
            ents,
            rqs,
            resched: Vec::new(),
            shared_timers: vec![TimerState::default(); shared.len()],
            timer_slots,
            cap_ref,
            markers,
            end,
            t0: BOOT_OFFSET,
            idle_names: (0..n).map(|c| format!("swapper/{c}")).collect(),
            migrations: [0; MigrationReason::ALL.len()],
            switches: 0,
            view,
            nohz_kick_pending: false,
            alive: 0,
            nr_idle: n,
            nr_overloaded: 0,
            nohz_next_balance: 0,
            phase_affinity: w
                .tasks
                .iter()
                .map(|t| {
                    t.phases
                        .iter()
                        .map(|ph| {
                            ph.attrs
                                .cpus
                                .as_ref()
                                .or(t.attrs.cpus.as_ref())
                                .map_or(CpuSet::first_n(n), |c| CpuSet::from_cpus(c))
                        })
                        .collect()
                })
                .collect(),
            tick_pending: CpuSet::EMPTY,
            tick_at: 0,
        }
    }

    // ----------------------------------------------------------------- tracing helpers

    fn ctx(&self, cpu: usize, now: Nanos) -> Ctx<'_> {
        match self.rqs[cpu].curr {
            Some(t) => Ctx {
                ts: now,
                cpu: cpu as u32,
                comm: &self.threads[t].comm,
                pid: self.threads[t].pid,
            },
            None => Ctx {
                ts: now,
                cpu: cpu as u32,
                comm: "<idle>",
                pid: 0,
            },
        }
    }

    /// The task as tracepoints see it: `rt-app` until the thread renamed itself.
    fn tref(&self, tid: usize) -> TaskRef<'_> {
        let t = &self.threads[tid];
        TaskRef {
            comm: if t.renamed { &t.comm } else { "rt-app" },
            pid: t.pid,
            prio: t.prio(),
        }
    }

    fn marker(&self, out: &mut Out<'_, '_>, tid: usize, now: Nanos, m: RtappMarker<'_>) {
        if !out.any.markers {
            return;
        }
        let t = &self.threads[tid];
        let ctx = Ctx {
            ts: now,
            cpu: t.cpu as u32,
            comm: &t.comm,
            pid: t.pid,
        };
        out.emit(&ctx, &TraceEvent::Print(m), g_markers);
    }

    fn trace_pelt_se(&self, out: &mut Out<'_, '_>, cpu: usize, tid: usize, now: Nanos) {
        if !out.any.signals || !self.s.options.trace.signals {
            return;
        }
        let a = &self.ents[tid].avg;
        let ev = TraceEvent::SchedPeltSe {
            cpu: cpu as u32,
            task: self.tref(tid),
            load: a.load_avg,
            rbl_load: a.runnable_avg,
            util: a.util_avg,
            update_time: a.last_update_time,
        };
        out.emit(&self.ctx(cpu, now), &ev, g_signals);
    }

    fn trace_pelt_cfs(&self, out: &mut Out<'_, '_>, cpu: usize, now: Nanos) {
        if !out.any.signals || !self.s.options.trace.signals {
            return;
        }
        let a = &self.rqs[cpu].cfs.avg;
        let ev = TraceEvent::SchedPeltCfs {
            cpu: cpu as u32,
            load: a.load_avg,
            rbl_load: a.runnable_avg,
            util: a.util_avg,
            update_time: a.last_update_time,
        };
        out.emit(&self.ctx(cpu, now), &ev, g_signals);
    }

    fn trace_util_est(&self, out: &mut Out<'_, '_>, cpu: usize, tid: Option<usize>, now: Nanos) {
        if !out.any.signals || !self.s.options.trace.signals || !self.s.options.pelt.util_est {
            return;
        }
        let ctx = self.ctx(cpu, now);
        if let Some(tid) = tid {
            let a = &self.ents[tid].avg;
            let ue = pelt::task_util_est_raw(&a.util_est, self.ue_ver);
            let ewma = u64::from(a.util_est.ewma & !pelt::UTIL_AVG_UNCHANGED);
            let ev = TraceEvent::SchedUtilEstSe {
                cpu: cpu as u32,
                task: self.tref(tid),
                enqueued: ue,
                ewma,
                util: a.util_avg,
            };
            out.emit(&ctx, &ev, g_signals);
        }
        let c = &self.rqs[cpu].cfs.avg;
        let ue = pelt::cfs_rq_util_est(c);
        let ev = TraceEvent::SchedUtilEstCfs {
            cpu: cpu as u32,
            enqueued: ue,
            ewma: ue,
            util: c.util_avg,
        };
        out.emit(&ctx, &ev, g_signals);
    }

    fn trace_capacity(&self, out: &mut Out<'_, '_>, cpu: usize, now: Nanos) {
        if !out.any.signals || !self.s.options.trace.signals {
            return;
        }
        let rq = &self.rqs[cpu];
        let ev = TraceEvent::SchedCpuCapacity {
            cpu: cpu as u32,
            capacity: rq.cap,
            capacity_orig: rq.cap,
            capacity_curr: rq.cap * rq.freq_khz / rq.max_freq_khz.max(1),
        };
        out.emit(&self.ctx(cpu, now), &ev, g_signals);
    }

    // ----------------------------------------------------------------- clocks and PELT

    /// `update_rq_clock()`: advances the task clock and the PELT clock of `cpu`.
    fn update_rq_clock(&mut self, cpu: usize, now: Nanos) {
        let rq = &mut self.rqs[cpu];
        rq.clock
            .update(now, rq.curr.is_none(), rq.cap, rq.freq_scale);
    }

    fn cfs_state(&self, cpu: usize) -> CfsRqState {
        let c = &self.rqs[cpu].cfs;
        CfsRqState {
            load_weight_sum: c.load_weight,
            h_nr_runnable: u64::from(c.nr_running),
            curr_running: c.curr.is_some(),
        }
    }

    /// `update_load_avg(cfs_rq, se, flags)` for task `tid` on `cpu`, tracing what changed.
    fn update_load_avg(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        tid: usize,
        flags: u32,
        now: Nanos,
    ) {
        let pnow = self.rqs[cpu].clock.now();
        {
            // Fast path, exactly equivalent: less than one PELT unit (1024 ns) elapsed for
            // both the entity and the cfs_rq, no removed load and nothing to attach or
            // detach: ___update_load_sum() would return at once for both.
            let e = &self.ents[tid].avg;
            let c = &self.rqs[cpu].cfs;
            let attach = flags & DO_ATTACH != 0 && e.last_update_time == 0;
            if !attach
                && flags & DO_DETACH == 0
                && c.removed.nr == 0
                && e.last_update_time != 0
                && pnow.wrapping_sub(e.last_update_time) < 1024
                && pnow.wrapping_sub(c.avg.last_update_time) < 1024
            {
                return;
            }
        }
        let cfs_state = self.cfs_state(cpu);
        let e = &self.ents[tid];
        let se_state = SeState {
            on_rq: e.on_rq,
            runnable: e.on_rq,
            running: self.rqs[cpu].cfs.curr == Some(tid),
            weight: e.load.weight,
        };
        let before_se = self.ents[tid].avg.last_update_time;
        let before_cfs = self.rqs[cpu].cfs.avg.last_update_time;
        let rq = &mut self.rqs[cpu];
        let e = &mut self.ents[tid];
        pelt::update_load_avg(
            pnow,
            &mut rq.cfs.avg,
            &mut rq.cfs.removed,
            cfs_state,
            &mut e.avg,
            se_state,
            flags,
        );
        if self.ents[tid].avg.last_update_time != before_se {
            self.trace_pelt_se(out, cpu, tid, now);
        }
        if self.rqs[cpu].cfs.avg.last_update_time != before_cfs {
            self.trace_pelt_cfs(out, cpu, now);
        }
    }

    /// `update_other_load_avgs()` + the blocked cfs_rq decay of an rq.
    fn update_blocked_averages(&mut self, out: &mut Out<'_, '_>, cpu: usize, now: Nanos) {
        let st = self.cfs_state(cpu);
        let rq = &mut self.rqs[cpu];
        let pnow = rq.clock.now();
        pelt::update_rt_rq_load_avg(&mut rq.avg_rt, pnow, false);
        pelt::update_dl_rq_load_avg(&mut rq.avg_dl, pnow, false);
        let before = rq.cfs.avg.last_update_time;
        pelt::update_cfs_rq_load_avg(
            &mut rq.cfs.avg,
            &mut rq.cfs.removed,
            pnow,
            st.load_weight_sum,
            st.h_nr_runnable,
            st.curr_running,
        );
        if self.rqs[cpu].cfs.avg.last_update_time != before {
            self.trace_pelt_cfs(out, cpu, now);
        }
    }

    // ----------------------------------------------------------------- work accounting

    /// Work done on `cpu` in `dt` ns: `dt × capacity × f / fmax` (capacity-ns).
    fn work_in(&self, cpu: usize, dt: Nanos) -> u128 {
        let rq = &self.rqs[cpu];
        let fmax = rq.max_freq_khz.max(1);
        // u64 when the product fits (always, for realistic spans): a u128 division is slow
        match dt
            .checked_mul(rq.cap)
            .and_then(|v| v.checked_mul(rq.freq_khz))
        {
            Some(v) => u128::from(v / fmax),
            None => {
                u128::from(dt) * u128::from(rq.cap) * u128::from(rq.freq_khz) / u128::from(fmax)
            }
        }
    }

    /// Wall time to do `work` on `cpu` (rounded up).
    fn time_for(&self, cpu: usize, work: u128) -> Nanos {
        let rq = &self.rqs[cpu];
        let den = rq.cap * rq.freq_khz;
        if den == 0 {
            return u64::MAX / 4;
        }
        let fmax = rq.max_freq_khz.max(1);
        if let Some(num) = u64::try_from(work).ok().and_then(|w| w.checked_mul(fmax)) {
            return num.div_ceil(den).min(u64::MAX / 4);
        }
        let num = work * u128::from(fmax);
        num.div_ceil(u128::from(den)).min(u128::from(u64::MAX / 4)) as u64
    }

    /// Charges the progress of curr's op since the last accounting.
    fn account_op(&mut self, cpu: usize, now: Nanos) {
        let Some(tid) = self.rqs[cpu].curr else {
            return;
        };
        let dt = now.saturating_sub(self.rqs[cpu].seg_start);
        self.rqs[cpu].seg_start = now;
        if dt == 0 {
            return;
        }
        let done = self.work_in(cpu, dt);
        match &mut self.threads[tid].op {
            Op::Run { work, .. } => *work = work.saturating_sub(done),
            Op::Runtime { ns } => *ns = ns.saturating_sub(dt),
            Op::Step => {}
        }
    }

    /// Arms the completion event of curr's op.
    fn arm_op(&mut self, cpu: usize, now: Nanos) {
        let Some(tid) = self.rqs[cpu].curr else {
            return;
        };
        self.rqs[cpu].op_gen = self.rqs[cpu].op_gen.wrapping_add(1);
        let gen = self.rqs[cpu].op_gen;
        let dt = match self.threads[tid].op {
            Op::Run { work, .. } => self.time_for(cpu, work),
            Op::Runtime { ns } => ns,
            Op::Step => 0,
        };
        self.q.push(
            now.saturating_add(dt),
            Ev::OpDone {
                cpu: cpu as u32,
                gen,
            },
        );
    }

    fn ensure_tick(&mut self, cpu: usize, now: Nanos) {
        if self.tick_pending.contains(cpu) {
            return;
        }
        let tick = self.s.tick_ns;
        let next = (now / tick + 1) * tick;
        if self.tick_pending.is_empty() {
            self.tick_at = next;
        }
        debug_assert_eq!(self.tick_at, next, "ticks share one grid point");
        self.tick_pending.set(cpu);
    }

    /// Runs every armed tick at `tick_at`, in CPU order, each followed by the
    /// reschedules it asked for.
    fn run_ticks(&mut self, out: &mut Out<'_, '_>) {
        let now = self.tick_at;
        let due = self.tick_pending;
        self.tick_pending = CpuSet::EMPTY;
        self.tick_at = now + self.s.tick_ns;
        self.q.advance_to(now);
        self.q.count_external(due.weight() as u64);
        for cpu in due.iter() {
            self.tick(out, cpu, now);
            self.drain_resched(out, now);
        }
    }

    fn drain_resched(&mut self, out: &mut Out<'_, '_>, now: Nanos) {
        while let Some(cpu) = self.resched.pop() {
            self.rqs[cpu].need_resched = false;
            self.schedule(out, cpu, now);
        }
    }

    fn set_resched(&mut self, cpu: usize) {
        if !self.rqs[cpu].need_resched {
            self.rqs[cpu].need_resched = true;
            self.resched.push(cpu);
        }
    }

    /// Keeps the policy view and the root-domain counters in step with `cpu`'s rq.
    fn refresh_view(&mut self, cpu: usize) {
        let rq = &self.rqs[cpu];
        let idle = rq.curr.is_none() && rq.cfs.nr_running == 0;
        let nr = rq.cfs.nr_running;
        let v = &mut self.view[cpu];
        self.nr_idle = self.nr_idle + usize::from(idle) - usize::from(v.idle);
        self.nr_overloaded =
            self.nr_overloaded + usize::from(nr >= 2) - usize::from(v.nr_running >= 2);
        v.idle = idle;
        v.nr_running = nr;
    }

    /// `rd->overloaded`: some rq has more than one runnable task
    /// (`sched_update_overloaded` / `add_nr_running`, kernel/sched/sched.h).
    fn rd_overloaded(&self) -> bool {
        self.nr_overloaded > 0
    }

    // ----------------------------------------------------------------- main loop

    fn run(&mut self, out: &mut Out<'_, '_>) {
        let n = self.p.nr_cpus();
        for s in out.user.iter_mut() {
            s.begin(n, self.t0);
        }
        out.metrics.begin(n, self.t0);
        // Frequencies are set by the governor before the workload starts.
        for cpu in 0..n {
            let f = self.rqs[cpu].freq_khz;
            let fmax = self.rqs[cpu].max_freq_khz.max(1);
            self.rqs[cpu].freq_scale = if self.s.options.pelt.frequency_invariance {
                (f << 10) / fmax
            } else {
                1024
            };
            if out.any.power {
                let ev = TraceEvent::CpuFrequency {
                    cpu_id: cpu as u32,
                    state: f,
                };
                out.emit(&self.ctx(cpu, self.t0), &ev, g_power);
                let ev = TraceEvent::CpuIdle {
                    cpu_id: cpu as u32,
                    state: 0,
                };
                out.emit(&self.ctx(cpu, self.t0), &ev, g_power);
            }
            self.trace_capacity(out, cpu, self.t0);
        }
        if self.markers.main {
            let ctx = Ctx {
                ts: self.t0,
                cpu: 0,
                comm: "rt-app",
                pid: PID_BASE,
            };
            out.emit(
                &ctx,
                &TraceEvent::Print(RtappMarker::Main {
                    event: "start",
                    data: 0,
                }),
                g_markers,
            );
            out.emit(
                &ctx,
                &TraceEvent::Print(RtappMarker::Main {
                    event: "clock_ref",
                    data: (self.t0 / 1000) as i64,
                }),
                g_markers,
            );
        }
        self.q.push(self.t0, Ev::Start);
        self.q.push(self.end, Ev::End);
        loop {
            if !self.tick_pending.is_empty() && self.q.peek_time().is_none_or(|t| self.tick_at <= t)
            {
                self.run_ticks(out);
                continue;
            }
            let Some((now, ev)) = self.q.pop() else { break };
            match ev {
                Ev::Start => self.start_threads(out, now),
                Ev::Wake { tid, gen } => {
                    let tid = tid as usize;
                    if self.threads[tid].wake_gen == gen
                        && self.threads[tid].state == TState::Sleeping
                    {
                        self.try_to_wake_up(out, tid, now, false);
                    }
                }
                Ev::OpDone { cpu, gen } => {
                    let cpu = cpu as usize;
                    if self.rqs[cpu].op_gen == gen {
                        self.op_done(out, cpu, now);
                    }
                }
                Ev::NohzKick => {
                    self.nohz_kick_pending = false;
                    self.nohz_next_balance = now + self.p.nr_cpus() as u64 * NSEC_PER_MSEC;
                    self.nohz_idle_balance(out, now);
                }
                Ev::End => {
                    self.finish(out, now);
                    return;
                }
            }
            self.drain_resched(out, now);
            if self.alive == 0 && !self.threads.is_empty() {
                self.finish(out, now);
                return;
            }
        }
    }

    fn finish(&mut self, out: &mut Out<'_, '_>, now: Nanos) {
        if self.markers.main {
            let ctx = Ctx {
                ts: now,
                cpu: 0,
                comm: "rt-app",
                pid: PID_BASE,
            };
            out.emit(
                &ctx,
                &TraceEvent::Print(RtappMarker::Main {
                    event: "end",
                    data: 0,
                }),
                g_markers,
            );
        }
        out.metrics.end(now);
        for s in out.user.iter_mut() {
            s.end(now);
        }
    }

    // ----------------------------------------------------------------- thread lifecycle

    fn start_threads(&mut self, out: &mut Out<'_, '_>, now: Nanos) {
        self.alive = self.threads.len();
        for tid in 0..self.threads.len() {
            self.wake_up_new_task(out, tid, now);
        }
    }

    /// `wake_up_new_task()`: fork placement, `post_init_entity_util_avg()`, enqueue with
    /// ENQUEUE_INITIAL, `sched_wakeup_new`, preemption check.
    fn wake_up_new_task(&mut self, out: &mut Out<'_, '_>, tid: usize, now: Nanos) {
        // Fork balancing (sched_balance_find_dst_cpu, reduced): the allowed CPU with the
        // fewest runnable tasks, lowest id first.
        let aff = self.threads[tid].affinity;
        let cpu = aff
            .iter()
            .min_by_key(|&c| (self.view[c].nr_running + u32::from(!self.view[c].idle), c))
            .unwrap_or(0);
        self.threads[tid].cpu = cpu;
        self.threads[tid].t_first =
            now + program::us(self.w.tasks[self.threads[tid].task].delay_us);
        self.update_rq_clock(cpu, now);
        let cfs_avg = self.rqs[cpu].cfs.avg;
        let (cap, weight) = (self.rqs[cpu].cap, self.ents[tid].load.weight);
        pelt::post_init_entity_util_avg(&mut self.ents[tid].avg, cap, &cfs_avg, weight);
        self.enqueue_task(out, cpu, tid, now, true);
        if out.any.sched {
            let ev = TraceEvent::SchedWakeupNew {
                task: TaskRef {
                    comm: "rt-app",
                    pid: self.threads[tid].pid,
                    prio: self.threads[tid].prio(),
                },
                target_cpu: cpu as u32,
            };
            out.emit(&self.ctx(cpu, now), &ev, g_sched);
        }
        self.wakeup_preempt(cpu, tid);
    }

    /// `try_to_wake_up()` for a sleeping thread.
    fn try_to_wake_up(&mut self, out: &mut Out<'_, '_>, tid: usize, now: Nanos, _sync: bool) {
        let prev = self.threads[tid].cpu;
        let aff = self.threads[tid].affinity;
        let view = SchedView { cpus: &self.view };
        let pl = placement::select_task_rq_baseline(&view, &aff, prev);
        let cpu = pl.cpu;
        if cpu != prev {
            self.migrate_sleeping(out, tid, prev, cpu, now);
            self.migrations[MigrationReason::WakeUp as usize] += 1;
        }
        self.update_rq_clock(cpu, now);
        self.enqueue_task(out, cpu, tid, now, false);
        if out.any.sched {
            let ev = TraceEvent::SchedWakeup {
                task: self.tref(tid),
                target_cpu: cpu as u32,
            };
            out.emit(&self.ctx(cpu, now), &ev, g_sched);
        }
        self.wakeup_preempt(cpu, tid);
    }

    /// `migrate_task_rq_fair()` for a task that is not on a runqueue.
    fn migrate_sleeping(
        &mut self,
        out: &mut Out<'_, '_>,
        tid: usize,
        from: usize,
        to: usize,
        now: Nanos,
    ) {
        let last = self.rqs[from].cfs.avg.last_update_time;
        let w = self.ents[tid].load.weight;
        pelt::remove_entity_load_avg(
            &mut self.rqs[from].cfs.removed,
            &mut self.ents[tid].avg,
            last,
            w,
        );
        self.ents[tid].avg.last_update_time = 0;
        self.trace_migrate(out, tid, from, to, to, now);
        self.threads[tid].cpu = to;
    }

    fn trace_migrate(
        &self,
        out: &mut Out<'_, '_>,
        tid: usize,
        from: usize,
        to: usize,
        on: usize,
        now: Nanos,
    ) {
        if out.any.sched {
            let ev = TraceEvent::SchedMigrateTask {
                task: self.tref(tid),
                orig_cpu: from as u32,
                dest_cpu: to as u32,
            };
            out.emit(&self.ctx(on, now), &ev, g_sched);
        }
    }

    /// `enqueue_task_fair()`: util_est, PELT (attach), placement, queueing.
    fn enqueue_task(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        tid: usize,
        now: Nanos,
        initial: bool,
    ) {
        let fair = self.s.fair;
        if self.s.options.pelt.util_est {
            let a = self.ents[tid].avg;
            pelt::util_est_enqueue(&mut self.rqs[cpu].cfs.avg, &a, self.ue_ver);
            self.trace_util_est(out, cpu, None, now);
        }
        // update_curr() of the queue's current entity before placement.
        let (rq, ents) = (&mut self.rqs[cpu], &mut self.ents);
        rq.cfs.update_curr(ents, now, &fair);
        self.update_load_avg(out, cpu, tid, UPDATE_TG | DO_ATTACH, now);
        let (rq, ents) = (&mut self.rqs[cpu], &mut self.ents);
        if fair.variant == FairVariant::Cfs && self.threads[tid].state == TState::Runnable {
            // a migrating queued task: make its relative vruntime absolute here
            rq.cfs.cfs_migrate_in(ents, tid);
        } else {
            rq.cfs.place_entity(ents, tid, initial, &fair);
        }
        rq.cfs.enqueue_entity(ents, tid);
        self.threads[tid].state = TState::Runnable;
        self.threads[tid].cpu = cpu;
        self.refresh_view(cpu);
    }

    /// `dequeue_task_fair()`. `sleep` is DEQUEUE_SLEEP; otherwise a migration (DO_DETACH).
    fn dequeue_task(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        tid: usize,
        now: Nanos,
        sleep: bool,
    ) {
        let fair = self.s.fair;
        if self.s.options.pelt.util_est {
            let a = self.ents[tid].avg;
            pelt::util_est_dequeue(&mut self.rqs[cpu].cfs.avg, &a, self.ue_ver);
        }
        let (rq, ents) = (&mut self.rqs[cpu], &mut self.ents);
        rq.cfs.update_curr(ents, now, &fair);
        let flags = if sleep {
            UPDATE_TG
        } else {
            UPDATE_TG | DO_DETACH
        };
        self.update_load_avg(out, cpu, tid, flags, now);
        let (rq, ents) = (&mut self.rqs[cpu], &mut self.ents);
        rq.cfs.dequeue_entity(ents, tid, sleep, &fair);
        if !sleep {
            self.ents[tid].avg.last_update_time = 0;
        }
        if self.s.options.pelt.util_est {
            pelt::util_est_update(
                &mut self.ents[tid].avg,
                sleep,
                self.ue_ver,
                self.rqs[cpu].cap,
            );
            self.trace_util_est(out, cpu, Some(tid), now);
        }
        self.refresh_view(cpu);
    }

    /// `wakeup_preempt()`: reschedule `cpu` if idle, or if the fair class says so.
    fn wakeup_preempt(&mut self, cpu: usize, tid: usize) {
        match self.rqs[cpu].curr {
            None => self.set_resched(cpu),
            Some(c) => {
                let curr_idle = self.threads[c].policy == SchedPolicy::Idle;
                let wp = self.threads[tid].policy;
                let fair = self.s.fair;
                if self.rqs[cpu].cfs.check_preempt_wakeup(
                    &self.ents,
                    tid,
                    curr_idle,
                    wp == SchedPolicy::Idle,
                    wp == SchedPolicy::Other,
                    &fair,
                ) {
                    self.set_resched(cpu);
                }
            }
        }
    }

    /// Puts the thread to sleep until `at` (it is curr on `cpu`).
    fn block(&mut self, out: &mut Out<'_, '_>, cpu: usize, tid: usize, now: Nanos, at: Nanos) {
        self.update_rq_clock(cpu, now);
        self.dequeue_task(out, cpu, tid, now, true);
        let t = &mut self.threads[tid];
        t.state = TState::Sleeping;
        t.wake_gen = t.wake_gen.wrapping_add(1);
        let gen = t.wake_gen;
        self.q.push(
            at,
            Ev::Wake {
                tid: tid as u32,
                gen,
            },
        );
        self.set_resched(cpu);
    }

    fn exit(&mut self, out: &mut Out<'_, '_>, cpu: usize, tid: usize, now: Nanos) {
        self.update_rq_clock(cpu, now);
        self.dequeue_task(out, cpu, tid, now, true);
        self.threads[tid].state = TState::Dead;
        self.alive -= 1;
        if self.markers.task {
            self.marker(out, tid, now, RtappMarker::Task { event: "end" });
        }
        if out.any.sched {
            let ev = TraceEvent::SchedProcessExit {
                task: self.tref(tid),
            };
            out.emit(&self.ctx(cpu, now), &ev, g_sched);
        }
        self.set_resched(cpu);
    }

    // ----------------------------------------------------------------- the tick

    /// `sched_tick()` on a busy CPU; idle CPUs have stopped their tick.
    fn tick(&mut self, out: &mut Out<'_, '_>, cpu: usize, now: Nanos) {
        let Some(curr) = self.rqs[cpu].curr else {
            return; // tick stopped when the CPU went idle (tickless idle)
        };
        self.ensure_tick(cpu, now);
        self.update_rq_clock(cpu, now);
        {
            let rq = &mut self.rqs[cpu];
            let pnow = rq.clock.now();
            pelt::update_rt_rq_load_avg(&mut rq.avg_rt, pnow, false);
            pelt::update_dl_rq_load_avg(&mut rq.avg_dl, pnow, false);
        }
        // task_tick_fair() -> entity_tick()
        let fair = self.s.fair;
        let (rq, ents) = (&mut self.rqs[cpu], &mut self.ents);
        let (_, resched) = rq.cfs.update_curr(ents, now, &fair);
        self.update_load_avg(out, cpu, curr, UPDATE_TG, now);
        let tick_preempt = self.rqs[cpu].cfs.check_preempt_tick(&self.ents, &fair);
        if resched || tick_preempt {
            self.set_resched(cpu);
        }
        // sched_balance_trigger()
        if self.s.options.balance.enabled {
            if now >= self.rqs[cpu].next_balance {
                let busy_factor = 16;
                let interval = self.p.nr_cpus() as u64 * NSEC_PER_MSEC * busy_factor;
                self.rqs[cpu].next_balance = now + interval;
                self.try_pull(out, cpu, now, MigrationReason::Periodic);
            }
            // nohz_balancer_kick(): an overloaded queue while some CPU sleeps tickless.
            // Rate-limited like nohz.next_balance: idle CPUs balance at most once per
            // idle balance interval (the domain weight in ms).
            if self.rqs[cpu].cfs.nr_running >= 2
                && !self.nohz_kick_pending
                && self.nr_idle > 0
                && now >= self.nohz_next_balance
            {
                self.nohz_kick_pending = true;
                self.q.push(now, Ev::NohzKick);
            }
        }
    }

    // ----------------------------------------------------------------- balancing

    fn movable_from(&self, src: usize, dst: usize) -> Option<usize> {
        // detach_tasks() walks the tail of cfs_tasks (least recently run first); here the
        // queued (not running) task that ran least recently and may run on dst.
        self.rqs[src]
            .cfs
            .queue
            .iter()
            .copied()
            .filter(|&t| self.threads[t].affinity.contains(dst))
            .min_by_key(|&t| (self.ents[t].exec_start, t))
    }

    fn try_pull(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        now: Nanos,
        reason: MigrationReason,
    ) -> bool {
        let view = SchedView { cpus: &self.view };
        let m = balance::find_pull(&view, cpu, reason, |src| self.movable_from(src, cpu));
        match m {
            Some(m) => {
                self.move_queued(out, m, now);
                true
            }
            None => false,
        }
    }

    /// Idle balance run for every tickless idle CPU.
    fn nohz_idle_balance(&mut self, out: &mut Out<'_, '_>, now: Nanos) {
        for cpu in 0..self.p.nr_cpus() {
            if self.view[cpu].idle {
                self.update_rq_clock(cpu, now);
                self.update_blocked_averages(out, cpu, now);
                if self.try_pull(out, cpu, now, MigrationReason::NohzIdle) {
                    self.set_resched(cpu);
                }
            }
        }
    }

    /// `detach_task()` + `attach_task()`: moves a queued task.
    fn move_queued(&mut self, out: &mut Out<'_, '_>, m: Migration, now: Nanos) {
        self.update_rq_clock(m.src, now);
        self.dequeue_task(out, m.src, m.task, now, false);
        self.trace_migrate(out, m.task, m.src, m.dst, m.dst, now);
        self.update_rq_clock(m.dst, now);
        self.enqueue_task(out, m.dst, m.task, now, false);
        self.migrations[m.reason as usize] += 1;
        self.wakeup_preempt(m.dst, m.task);
    }

    /// `set_cpus_allowed_ptr()` → `migration_cpu_stop()`: the running task left its
    /// allowed CPUs; it is moved to the CPU `select_fallback_rq()` would choose.
    fn move_off_disallowed(&mut self, out: &mut Out<'_, '_>, cpu: usize, tid: usize, now: Nanos) {
        let aff = self.threads[tid].affinity;
        let view = SchedView { cpus: &self.view };
        let dst = placement::select_task_rq_baseline(&view, &aff, cpu).cpu;
        self.account_op(cpu, now);
        self.update_load_avg(out, cpu, tid, 0, now);
        let (rq, ents) = (&mut self.rqs[cpu], &self.ents);
        rq.cfs.put_prev_entity(ents, tid);
        self.rqs[cpu].curr = None;
        self.move_queued(
            out,
            Migration {
                task: tid,
                src: cpu,
                dst,
                reason: MigrationReason::Affinity,
            },
            now,
        );
        // the CPU switches away from the moved task
        self.rqs[cpu].curr = Some(tid);
    }

    // ----------------------------------------------------------------- __schedule()

    fn schedule(&mut self, out: &mut Out<'_, '_>, cpu: usize, now: Nanos) {
        let fair = self.s.fair;
        self.update_rq_clock(cpu, now);
        self.account_op(cpu, now);
        let prev = self.rqs[cpu].curr;
        let mut prev_moved = false;
        if let Some(p) = prev {
            if self.ents[p].on_rq {
                let (rq, ents) = (&mut self.rqs[cpu], &mut self.ents);
                rq.cfs.update_curr(ents, now, &fair);
                if !self.threads[p].affinity.contains(cpu) {
                    self.move_off_disallowed(out, cpu, p, now);
                    prev_moved = true;
                }
            }
        }
        let mut next = self.rqs[cpu].cfs.pick_next(&self.ents, &fair);
        if !prev_moved && next.is_some() && next == prev {
            // Same task: no switch; its armed op completion still holds (same rate).
            return;
        }
        if let Some(p) = prev.filter(|_| !prev_moved) {
            if self.ents[p].on_rq {
                // put_prev_entity(): PELT update while it was running, back into the queue
                self.update_load_avg(out, cpu, p, 0, now);
            }
            let (rq, ents) = (&mut self.rqs[cpu], &self.ents);
            rq.cfs.put_prev_entity(ents, p);
        }
        if next.is_none() && self.s.options.balance.enabled && self.rd_overloaded() {
            // sched_balance_newidle(): skipped unless the root domain is overloaded
            self.update_blocked_averages(out, cpu, now);
            if self.try_pull(out, cpu, now, MigrationReason::Newidle) {
                next = self.rqs[cpu].cfs.pick_next(&self.ents, &fair);
            }
        }
        self.rqs[cpu].op_gen = self.rqs[cpu].op_gen.wrapping_add(1);
        if let Some(n) = next {
            // set_next_entity()
            self.update_load_avg(out, cpu, n, UPDATE_TG, now);
            let (rq, ents) = (&mut self.rqs[cpu], &mut self.ents);
            rq.cfs.set_next_entity(ents, n, now);
        } else {
            // update_idle_rq_clock_pelt() before entering idle
            let rq = &mut self.rqs[cpu];
            let total = u64::from(rq.cfs.avg.util_sum)
                + u64::from(rq.avg_rt.util_sum)
                + u64::from(rq.avg_dl.util_sum);
            rq.clock.update_idle(total);
        }
        self.context_switch(out, cpu, prev, next, now);
    }

    fn context_switch(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        prev: Option<usize>,
        next: Option<usize>,
        now: Nanos,
    ) {
        self.switches += 1;
        if prev.is_none() && out.any.power {
            // leaving idle
            let ev = TraceEvent::CpuIdle {
                cpu_id: cpu as u32,
                state: -1,
            };
            out.emit(&self.ctx(cpu, now), &ev, g_power);
        }
        if out.any.sched {
            let idle = |c: usize| TaskRef {
                comm: &self.idle_names[c],
                pid: 0,
                prio: 120,
            };
            let name_of = |t: usize| self.tref(t);
            let prev_state = match prev {
                None => TASK_RUNNING,
                Some(p) => match self.threads[p].state {
                    TState::Runnable => TASK_RUNNING,
                    TState::Sleeping => TASK_INTERRUPTIBLE,
                    TState::Dead => EXIT_DEAD,
                },
            };
            let ev = TraceEvent::SchedSwitch {
                prev: prev.map_or_else(|| idle(cpu), name_of),
                prev_state,
                next: next.map_or_else(|| idle(cpu), name_of),
            };
            out.emit(&self.ctx(cpu, now), &ev, g_sched);
        }
        self.rqs[cpu].curr = next;
        self.rqs[cpu].seg_start = now;
        self.refresh_view(cpu);
        match next {
            Some(n) => {
                self.ensure_tick(cpu, now);
                self.resume_thread(out, cpu, n, now);
            }
            None => {
                if out.any.power {
                    let ev = TraceEvent::CpuIdle {
                        cpu_id: cpu as u32,
                        state: 0,
                    };
                    out.emit(&self.ctx(cpu, now), &ev, g_power);
                }
            }
        }
    }

    /// A thread got the CPU: finish the rename, measure timer wake-up latency, then
    /// continue its op or its program.
    fn resume_thread(&mut self, out: &mut Out<'_, '_>, cpu: usize, tid: usize, now: Nanos) {
        if !self.threads[tid].renamed {
            self.threads[tid].renamed = true;
            if out.any.sched {
                let t = &self.threads[tid];
                let ev = TraceEvent::TaskRename {
                    pid: t.pid,
                    oldcomm: "rt-app",
                    newcomm: &t.comm,
                };
                out.emit(&self.ctx(cpu, now), &ev, g_sched);
            }
        }
        if let Some(t_next) = self.threads[tid].timer_wait.take() {
            self.threads[tid].wu_lat_ns += now as i64 - t_next as i64;
        }
        match self.threads[tid].op {
            Op::Step => self.step_program(out, cpu, tid, now),
            _ => self.arm_op(cpu, now),
        }
    }

    /// The current op of `cpu`'s task has completed.
    fn op_done(&mut self, out: &mut Out<'_, '_>, cpu: usize, now: Nanos) {
        self.update_rq_clock(cpu, now);
        self.account_op(cpu, now);
        let Some(tid) = self.rqs[cpu].curr else {
            return;
        };
        let finished = match self.threads[tid].op {
            Op::Run { work, .. } => work == 0,
            Op::Runtime { ns } => ns == 0,
            Op::Step => true,
        };
        if !finished {
            self.arm_op(cpu, now);
            return;
        }
        let t = &mut self.threads[tid];
        t.run_ns += now - t.op_start;
        t.op = Op::Step;
        self.step_program(out, cpu, tid, now);
    }

    // ----------------------------------------------------------------- rt-app programs

    /// Executes the thread's program until it computes, sleeps or exits. The thread is
    /// curr on `cpu`.
    fn step_program(&mut self, out: &mut Out<'_, '_>, cpu: usize, tid: usize, now: Nanos) {
        if !self.threads[tid].started {
            self.threads[tid].started = true;
            if self.markers.task {
                self.marker(out, tid, now, RtappMarker::Task { event: "start" });
            }
            let t_first = self.threads[tid].t_first;
            if t_first > now {
                self.block(out, cpu, tid, now, t_first);
                return;
            }
        }
        let w = self.w;
        loop {
            let th = &self.threads[tid];
            if th.done_loops {
                self.exit(out, cpu, tid, now);
                return;
            }
            let task = &w.tasks[th.task];
            let pc = th.pc;
            let phase = &task.phases[pc.phase];
            if !pc.loop_started {
                self.begin_iteration(out, cpu, tid, now);
            }
            if pc.event < phase.events.len() {
                let ev = &phase.events[pc.event].event;
                self.threads[tid].pc.event += 1;
                if self.markers.event {
                    self.marker(
                        out,
                        tid,
                        now,
                        RtappMarker::Event {
                            id: pc.event as u64,
                            type_id: ev.rtapp_type_id(),
                            desc: ev.key(),
                        },
                    );
                }
                match self.do_event(out, cpu, tid, pc, ev, now) {
                    Some(Step::Compute) => {
                        self.threads[tid].op_start = now;
                        self.rqs[cpu].seg_start = now;
                        self.arm_op(cpu, now);
                        return;
                    }
                    Some(Step::SleepUntil { at, timer }) => {
                        if timer {
                            self.threads[tid].timer_wait = Some(at);
                        }
                        self.block(out, cpu, tid, now, at);
                        return;
                    }
                    Some(Step::Exit) => {
                        self.exit(out, cpu, tid, now);
                        return;
                    }
                    None => continue,
                }
            }
            self.end_iteration(out, tid, now);
        }
    }

    fn begin_iteration(&mut self, out: &mut Out<'_, '_>, cpu: usize, tid: usize, now: Nanos) {
        let w = self.w;
        let th = &mut self.threads[tid];
        th.pc.loop_started = true;
        th.loop_start = now;
        th.run_ns = 0;
        th.wu_lat_ns = 0;
        if !w.cumulative_slack {
            th.slack_ns = 0;
        }
        let pc = th.pc;
        let task = &w.tasks[th.task];
        if pc.phase_loop == 0 {
            // A phase applies the attributes it sets; cpus reset to the task's (or all).
            let attrs = &task.phases[pc.phase].attrs;
            let aff = self.phase_affinity[th.task][pc.phase];
            if let Some(nice) = attrs.priority {
                self.set_nice(cpu, tid, nice);
            }
            if aff != self.threads[tid].affinity {
                self.threads[tid].affinity = aff;
                if !aff.contains(cpu) {
                    // set_cpus_allowed_ptr(): the running task is moved off by the
                    // stopper; here it is re-queued at once on an allowed CPU.
                    self.set_resched(cpu);
                    self.threads[tid].pc.loop_started = true;
                }
            }
        }
        if self.markers.loop_ {
            self.marker(
                out,
                tid,
                now,
                RtappMarker::Loop {
                    event: "start",
                    thread_loop: pc.thread_loop,
                    phase: pc.phase as u64,
                    phase_loop: pc.phase_loop,
                },
            );
        }
    }

    /// `reweight_task()` simplified: new weight; EEVDF deadline recomputed from the slice.
    fn set_nice(&mut self, cpu: usize, tid: usize, nice: i32) {
        let nice = nice.clamp(-20, 19);
        if self.threads[tid].nice == nice || !self.threads[tid].policy.is_fair() {
            return;
        }
        let lw = LoadWeight::for_nice(nice, self.threads[tid].policy == SchedPolicy::Idle);
        let e = &mut self.ents[tid];
        if e.on_rq {
            self.rqs[cpu].cfs.load_weight =
                self.rqs[cpu].cfs.load_weight - e.load.weight + lw.weight;
        }
        e.load = lw;
        e.deadline = e
            .vruntime
            .wrapping_add(crate::sched::calc_delta_fair(e.slice, &lw));
        self.threads[tid].nice = nice;
    }

    fn end_iteration(&mut self, out: &mut Out<'_, '_>, tid: usize, now: Nanos) {
        let w = self.w;
        let th = &self.threads[tid];
        let pc = th.pc;
        let task = &w.tasks[th.task];
        if self.markers.loop_ {
            self.marker(
                out,
                tid,
                now,
                RtappMarker::Loop {
                    event: "end",
                    thread_loop: pc.thread_loop,
                    phase: pc.phase as u64,
                    phase_loop: pc.phase_loop,
                },
            );
        }
        if self.markers.stats {
            let (c_run, c_period) = program::configured_run_period(task, pc.phase);
            let th = &self.threads[tid];
            self.marker(
                out,
                tid,
                now,
                RtappMarker::Stats {
                    period: ((now - th.loop_start) / 1000) as i64,
                    run: (th.run_ns / 1000) as i64,
                    wu_lat: th.wu_lat_ns / 1000,
                    slack: th.slack_ns / 1000,
                    c_period,
                    c_run,
                },
            );
        }
        let th = &mut self.threads[tid];
        let mut pc = th.pc;
        pc.event = 0;
        pc.loop_started = false;
        pc.phase_loop += 1;
        if pc.phase_loop >= task.phases[pc.phase].loop_count {
            pc.phase_loop = 0;
            pc.phase += 1;
            if pc.phase >= task.phases.len() {
                pc.phase = 0;
                pc.thread_loop += 1;
                if task.loop_count >= 0 && pc.thread_loop >= task.loop_count as u64 {
                    th.done_loops = true;
                }
            }
        }
        th.pc = pc;
    }

    fn do_event(
        &mut self,
        _out: &mut Out<'_, '_>,
        _cpu: usize,
        tid: usize,
        pc: Pc,
        ev: &Event,
        now: Nanos,
    ) -> Option<Step> {
        match *ev {
            Event::Run { us } => {
                let work = u128::from(program::us(us)) * u128::from(self.cap_ref);
                self.threads[tid].op = Op::Run { work, us };
                Some(Step::Compute)
            }
            Event::Runtime { us } => {
                self.threads[tid].op = Op::Runtime {
                    ns: program::us(us),
                };
                Some(Step::Compute)
            }
            Event::Sleep { us } => Some(Step::SleepUntil {
                at: now + program::us(us),
                timer: false,
            }),
            Event::Timer {
                period_us, mode, ..
            } => {
                let task = self.threads[tid].task;
                let slot = self.timer_slots[task][pc.phase][pc.event];
                let t_first = self.threads[tid].t_first;
                let st = match slot {
                    Some(TimerSlot::Unique(i)) => &mut self.threads[tid].unique_timers[i],
                    Some(TimerSlot::Shared(i)) => &mut self.shared_timers[i],
                    None => return None,
                };
                let (t_next, slack) =
                    program::timer_next(st, t_first, program::us(period_us), mode, now);
                self.threads[tid].slack_ns += slack;
                if now < t_next {
                    Some(Step::SleepUntil {
                        at: t_next,
                        timer: true,
                    })
                } else {
                    None
                }
            }
            _ => None,
        }
    }
}
