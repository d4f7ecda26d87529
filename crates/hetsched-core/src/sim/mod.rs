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

mod balance;
pub mod energy;
pub mod program;
pub mod sync;
mod wake;

use crate::engine::{EventQueue, Rng};
use crate::metrics::{CpuMetrics, MetricsSink, TaskMetrics};
use crate::options::{MarkerChoice, Options, OptionsError, Settings};
use crate::pelt::{self, CfsRqState, SeState, UtilEstVersion, DO_ATTACH, DO_DETACH, UPDATE_TG};
use crate::platform::Platform;
use crate::policy::{CpuView, Migration, MigrationReason};
use crate::sched::capacity::{scale_rt_capacity, CpuCapacity};
use crate::sched::fair::{CfsRq, FairVariant, SchedEntity};
use crate::sched::rt::{self as rtq, DlEntity, DlRq, RtRq};
use crate::sched::{CpuSet, LoadWeight};
use crate::time::{Nanos, NSEC_PER_SEC};
use crate::trace::{Ctx, Interest, RtappMarker, TaskRef, TraceEvent, TraceSink};
use crate::workload::{Calibration, Event, FtraceCategories, SchedPolicy, Span, Workload};
use program::{Op, Pc, Step, TimerState};
use serde::Serialize;
use std::collections::BTreeMap;
use sync::{Kind, Resources, Retry, WaitOn};

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
    /// The run stopped: a deadlock or a program that cannot advance.
    #[error("{0}: {1}")]
    Runtime(String, String),
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
    /// Fair wake-up and fork placements by the reason `select_task_rq_fair()` chose the
    /// CPU (`target_idle`, `idle_capacity_fit`, `slow_path`, …).
    pub placements: BTreeMap<&'static str, u64>,
    /// Run-time diagnostics (a deadlock in a run with a duration).
    pub warnings: Vec<String>,
    /// Engine statistics.
    pub engine: EngineStats,
    /// Over-utilisation of the root domain (always present; zeros when EAS is off).
    pub overutilized: energy::OverutilizedStats,
    /// Energy per CPU, per performance domain and over time.
    pub energy: energy::EnergyResult,
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
    /// A throttled deadline task's replenishment timer (`dl_task_timer()`).
    DlReplenish { tid: u32, gen: u32 },
    /// A slow-path frequency transition of a performance domain completes.
    FreqApply { pd: u32 },
    /// The end of the run.
    End,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TState {
    Runnable,
    Sleeping,
    Dead,
}

/// Scheduling class a thread is in now (`p->sched_class`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Class {
    Fair,
    Rt,
    Dl,
}

#[derive(Debug, Clone)]
struct Thread {
    pid: u32,
    comm: String,
    /// The comm it has before renaming itself: the creating thread's (`rt-app` for the
    /// main thread).
    comm0: String,
    task: usize,
    policy: SchedPolicy,
    nice: i32,
    /// `p->normal_prio`: 99 - rt_priority for RT, 120 + nice for fair, -1 for DL.
    normal_prio: i32,
    /// `p->prio`: `normal_prio`, or the top PI waiter's when boosted.
    eff_prio: i32,
    class: Class,
    rt_key: (i32, i64),
    rr_slice: Nanos,
    dl: DlEntity,
    dl_key: (Nanos, u64),
    dl_gen: u32,
    /// What it is blocked on (for wake-ups and the deadlock report).
    wait_on: WaitOn,
    /// What it must redo when it runs again after a wake-up.
    retry: Retry,
    /// Events stepped at the current instant (a spin guard).
    spin: u32,
    spin_at: Nanos,
    /// `sched_yield()` asked for a reschedule; the program continues after it.
    yielded: bool,
    /// Blocked on a resource (counted in `nr_res_blocked`).
    res_blocked: bool,
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
    /// `wakee_flips`, `wakee_flip_decay_ts`, `last_wakee` (`record_wakee()`).
    wakee: crate::policy::select_fair::WakeeState,
    /// `p->recent_used_cpu`.
    recent_used_cpu: usize,
    /// ENQUEUE_MIGRATED for its next enqueue: it changed CPU since it was last queued
    /// (`WF_MIGRATED` in `try_to_wake_up()`, `TASK_ON_RQ_MIGRATING` in `activate_task()`).
    enqueue_migrated: bool,
    /// Effective clamps `[UCLAMP_MIN, UCLAMP_MAX]` (`uclamp_eff_value()`).
    uclamp: [u64; 2],
    /// The clamps counted in the rq's buckets while runnable (`uclamp_se.active`).
    uclamp_on: Option<[u64; 2]>,
}

impl Thread {
    /// `p->prio` as tracepoints print it.
    fn prio(&self) -> i32 {
        self.eff_prio
    }
}

/// `normal_prio` and class for a policy and rt-app `priority`.
fn class_of(policy: SchedPolicy, nice: i32, rt_priority: i32) -> (Class, i32) {
    match policy {
        SchedPolicy::Fifo | SchedPolicy::Rr => (Class::Rt, rtq::rt_prio(rt_priority)),
        SchedPolicy::Deadline => (Class::Dl, -1),
        _ => (Class::Fair, 120 + nice),
    }
}

#[derive(Debug, Clone)]
struct Rq {
    cfs: CfsRq,
    rt: RtRq,
    dl: DlRq,
    curr: Option<usize>,
    clock: pelt::PeltClock,
    avg_rt: pelt::SchedAvg,
    avg_dl: pelt::SchedAvg,
    cap: u64,
    /// Speed of the work at fmax, capacity scale ([`crate::platform::Cpu::work_capacity`]).
    work_cap: u64,
    freq_khz: u64,
    max_freq_khz: u64,
    freq_scale: u64,
    seg_start: Nanos,
    op_gen: u32,
    next_balance: Nanos,
    need_resched: bool,
    /// Start of the deadline task's unaccounted run (`dl_se` exec start).
    seg_start_dl: Nanos,
    /// `rq->has_blocked_load`: an idle CPU whose averages still decay.
    has_blocked_load: bool,
    /// `rq->last_blocked_load_update_tick` (jiffies).
    last_blocked_load_update_tick: u64,
    /// `rq->avg_idle` and `rq->idle_stamp` (newidle balance gating).
    avg_idle: u64,
    idle_stamp: Nanos,
    /// The previous task was moved away by a stopper; the next `__schedule()` switches
    /// from it without putting it back.
    prev_moved: bool,
}

/// `capacity_of()` and friends of an rq: the original capacity less RT and DL pressure
/// (`scale_rt_capacity()`; no IRQ time, no thermal or cpufreq pressure).
fn rq_capacity(rq: &Rq) -> CpuCapacity {
    CpuCapacity {
        orig: rq.cap,
        capacity: scale_rt_capacity(rq.cap, 0, 0, rq.avg_rt.util_avg, rq.avg_dl.util_avg, 0),
        hw_pressure: 0,
        cpufreq_pressure: 0,
    }
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
fn g_overutilized(i: &Interest) -> bool {
    i.overutilized
}

const PID_BASE: u32 = 1000;
/// Simulated uptime when the workload starts. The kernel treats a PELT
/// `last_update_time` of 0 as "not attached yet", so no clock may start at 0; traces
/// therefore begin at 1.000000, like a trace taken one second after boot.
pub const BOOT_OFFSET: Nanos = NSEC_PER_SEC;
/// How long before the start every CPU has been idle (`rq->idle_stamp`).
const IDLE_BEFORE_START_NS: Nanos = 1_000_000;
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
    /// `NOHZ_*_KICK` flags of the pending kick (`nohz_flags(ilb_cpu)`).
    nohz_kick_flags: u32,
    /// `nohz.has_blocked`: some idle CPU may still have blocked load to decay.
    nohz_has_blocked: bool,
    /// `nohz.next_blocked` in jiffies: the next blocked-load update of idle CPUs is due.
    nohz_next_blocked_j: u64,
    alive: usize,
    nr_idle: usize,
    nr_overloaded: usize,
    /// Affinity each phase applies: its `cpus`, else the task's, else all CPUs.
    phase_affinity: Vec<Vec<CpuSet>>,
    /// CPUs whose tick is armed. Ticks fire on a global grid (`sched_skew_tick=0`), so
    /// every armed tick is at the same time, `tick_at`; they run before other events at
    /// that time, in CPU order. Kept out of the event heap: it is most of the events.
    tick_pending: CpuSet,
    tick_at: Nanos,
    /// rt-app's named resources.
    res: Resources,
    /// Per task, phase and event: the resource indices the event uses.
    ev_slots: Vec<Vec<Vec<(usize, usize)>>>,
    unique_counts: Vec<usize>,
    /// Per task: threads forked from it so far (rt-app's `res.fork.nforks`).
    fork_counts: BTreeMap<(usize, usize), u32>,
    /// Threads blocked on a resource (not in a timed sleep): a deadlock when it equals
    /// the number alive.
    nr_res_blocked: usize,
    /// Scheduling domains (`build_sched_domains()`), with the balancer's per-domain state.
    doms: crate::sched::topology::SchedDomains,
    lb: crate::policy::lb::LoadBalancer,
    /// The balancer view's per-pass memo (sim/balance.rs).
    lb_scratch: balance::LbScratch,
    /// Per thread: `p->max_allowed_capacity` and the affinity it was computed for.
    max_cap_memo: Vec<(CpuSet, u64)>,
    /// Some thread may have `SCHED_IDLE` (`sched_idle_cpu()` is false on every CPU if not).
    idle_policy_possible: bool,
    lbp: crate::policy::lb::LbParams,
    /// The same domains as placement reads them.
    sdt: crate::policy::domains::SdTopology,
    /// Each CPU's idle task's `record_wakee()` state (timer wake-ups while idle).
    idle_wakee: Vec<crate::policy::select_fair::WakeeState>,
    /// Fair placements by `select_task_rq_fair()` reason (indexed by `WakeReason as
    /// usize`; named in the result).
    placements: [u64; crate::policy::select_fair::WakeReason::ALL.len()],
    /// `distribute_cpu_mask_prev` of `cpumask_any_and_distribute()`.
    distribute_prev: usize,
    /// `rq->misfit_task_load` per CPU.
    misfit: Vec<u64>,
    /// `rq->active_balance` per CPU.
    active_balance: Vec<bool>,
    /// Position of each task in its rq's `cfs_tasks` list (larger = nearer the head).
    cfs_stamp: Vec<u64>,
    stamp_ctr: u64,
    /// `rd->overloaded`.
    rd_overload: bool,
    /// `nohz.next_balance` in jiffies.
    nohz_next_balance_j: u64,
    /// A run-time error that ends the run (deadlock, livelock).
    fatal: Option<String>,
    /// Run-time diagnostics that do not stop a run with a duration.
    warnings: Vec<String>,
    has_duration: bool,
    deadlock_reported: bool,
    /// EAS, schedutil and uclamp state (sim/energy.rs).
    en: energy::EnergyState,
}

fn span_at(w: &Workload, span: Span) -> String {
    format!(
        "{}:{}:{}",
        w.source.as_deref().unwrap_or(&w.name),
        span.line,
        span.col
    )
}

/// rt-app's thread name: `<task>-<index>` with the global thread index
/// (`thread_data_set_unique_name()`; forks add `-<nforks:04>`). Spaces become `_`.
pub fn thread_comm(task: &str, index: u32) -> String {
    format!("{task}-{index}").replace(' ', "_")
}

/// `TASK_COMM_LEN - 1`: the longest name `pthread_setname_np()` accepts. A longer name
/// fails with ERANGE and the thread keeps the comm it inherited (`rt-app`), as on a
/// board; hetsched does the same and warns before the run.
pub const COMM_MAX: usize = 15;

/// The thread names rt-app would fail to set (longer than [`COMM_MAX`]), in thread order.
pub fn overlong_thread_names(w: &Workload) -> Vec<String> {
    let mut ind = 0u32;
    let mut out = Vec::new();
    for t in &w.tasks {
        for _ in 0..t.instances {
            let n = thread_comm(&t.name, ind);
            if n.len() > COMM_MAX {
                out.push(n);
            }
            ind += 1;
        }
    }
    out
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
        }
        check_locking(w, t)?;
    }
    Ok(())
}

/// Checks, before the run, what rt-app would only find by hanging: per task, walking its
/// phases in order, a `lock` of a mutex the thread already holds (self-deadlock), an
/// `unlock` or a `wait`/`sync` without holding the mutex, a phase that loops while its
/// lock set changes, and a lock still held when the task's program ends.
fn check_locking(w: &Workload, t: &crate::workload::TaskSpec) -> Result<(), RunError> {
    let mut held: Vec<&str> = Vec::new();
    let err = |span: Span, msg: String| RunError::Workload {
        at: span_at(w, span),
        msg,
    };
    for ph in &t.phases {
        let at_start = held.clone();
        for e in &ph.events {
            match &e.event {
                Event::Lock { mutex } => {
                    if held.contains(&mutex.as_str()) {
                        return Err(err(e.span, format!("task `{}` locks mutex `{mutex}` it already holds: the thread would deadlock on itself; expected an unlock first", t.name)));
                    }
                    held.push(mutex);
                }
                Event::Unlock { mutex } => match held.iter().position(|m| m == mutex) {
                    Some(i) => {
                        held.remove(i);
                    }
                    None => {
                        return Err(err(e.span, format!("task `{}` unlocks mutex `{mutex}` it does not hold; expected a lock of `{mutex}` before", t.name)))
                    }
                },
                Event::Wait { mutex, .. } | Event::Sync { mutex, .. }
                    if !held.contains(&mutex.as_str()) =>
                {
                    return Err(err(e.span, format!("task `{}` waits with mutex `{mutex}` it does not hold (pthread_cond_wait needs it locked); expected a lock of `{mutex}` before", t.name)));
                }
                _ => {}
            }
        }
        if ph.loop_count > 1 && held != at_start {
            return Err(err(t.span, format!("task `{}`: phase `{}` loops {} times but does not release what it locks (held after one iteration: {}); its second iteration would deadlock", t.name, ph.name, ph.loop_count, held.join(", "))));
        }
    }
    if let Some(m) = held.first() {
        return Err(err(t.span, format!("task `{}` ends its phases still holding mutex `{m}`: a lock never unlocked; expected an unlock of `{m}`", t.name)));
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
    sim.has_duration = duration.is_some();
    let user_interest: Vec<Interest> = sinks.iter().map(|s| s.interest()).collect();
    let metrics = MetricsSink::with_energy(sim.en.meter(&spec.platform, sim.t0));
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
    if let Some(msg) = sim.fatal.take() {
        return Err(RunError::Runtime(
            w.source.clone().unwrap_or_else(|| w.name.clone()),
            msg,
        ));
    }
    let (tasks, cpus) = out.metrics.results();
    let settings_hash = format!("{:016x}", sim.s.hash());
    let end_now = sim.q.now();
    let energy = match out.metrics.energy() {
        Some(m) => energy::EnergyResult::from_meter(m, &spec.platform, sim.t0, sim.en.bucket_ns),
        None => energy::EnergyResult::from_meter(
            &sim.en.meter(&spec.platform, sim.t0),
            &spec.platform,
            sim.t0,
            sim.en.bucket_ns,
        ),
    };
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
        // the reasons that occurred, by name
        placements: crate::policy::select_fair::WakeReason::ALL
            .iter()
            .filter(|&&r| sim.placements[r as usize] > 0)
            .map(|&r| (r.as_str(), sim.placements[r as usize]))
            .collect(),
        engine: EngineStats {
            events: sim.q.processed(),
            context_switches: sim.switches,
        },
        settings: sim.s.clone(),
        warnings: std::mem::take(&mut sim.warnings),
        overutilized: sim.overutilized_stats(end_now),
        energy,
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
                    rt: RtRq::default(),
                    dl: DlRq::default(),
                    curr: None,
                    clock: pelt::PeltClock::default(),
                    avg_rt: pelt::SchedAvg::default(),
                    avg_dl: pelt::SchedAvg::default(),
                    cap: p.cpus[c].capacity,
                    work_cap: p.cpus[c].work_capacity(),
                    freq_khz: s.fixed_freq_khz[p.cpus[c].perf_domain],
                    max_freq_khz: pd.max_freq_khz,
                    freq_scale: 1024,
                    seg_start: 0,
                    op_gen: 0,
                    next_balance: 0,
                    need_resched: false,
                    seg_start_dl: 0,
                    // idle since boot: nohz_balance_enter_idle() marked its blocked load
                    has_blocked_load: true,
                    last_blocked_load_update_tick: 0,
                    avg_idle: 2 * crate::sched::SYSCTL_SCHED_MIGRATION_COST,
                    // Every CPU went idle (through a newidle pass) 1 ms before the workload
                    // starts, as on a booted board: `sched_balance_find_dst_group_cpu()`
                    // only picks idle CPUs with a non-zero `idle_stamp`.
                    idle_stamp: BOOT_OFFSET - IDLE_BEFORE_START_NS,
                    prev_moved: false,
                }
            })
            .collect();
        // The reference's work speed (its capacity unless the platform gives
        // `work_dmips_mhz`): rt-app calibrates on the loop it runs.
        let cap_ref = match w.calibration {
            Calibration::Cpu(c) => p.cpus[c].work_capacity(),
            Calibration::PLoadNs(_) => {
                let max = p.max_capacity();
                p.cpus
                    .iter()
                    .find(|c| c.capacity == max)
                    .map_or(max, |c| c.work_capacity())
            }
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
        // Synchronisation resources, resolved per event like rt-app's parser does.
        let mut res = Resources::default();
        let mut ev_slots = Vec::new();
        for t in &w.tasks {
            let mut per_task = Vec::new();
            for ph in &t.phases {
                let mut per_phase = Vec::new();
                for e in &ph.events {
                    per_phase.push(match &e.event {
                        Event::Lock { mutex } | Event::Unlock { mutex } => {
                            (res.get(Kind::Mutex, mutex), 0)
                        }
                        Event::Wait { cond, mutex } | Event::Sync { cond, mutex } => {
                            (res.get(Kind::Cond, cond), res.get(Kind::Mutex, mutex))
                        }
                        Event::Signal { cond } | Event::Broad { cond } => {
                            (res.get(Kind::Cond, cond), 0)
                        }
                        Event::Barrier { name } => {
                            let b = res.get(Kind::Barrier, name);
                            // rt-app counts one user per reference of every thread
                            res.barriers[b].participants += i64::from(t.instances);
                            (b, 0)
                        }
                        Event::SemPost { sem } | Event::SemWait { sem } => {
                            (res.get(Kind::Sem, sem), 0)
                        }
                        Event::Suspend { name } | Event::Resume { name } => {
                            (res.get(Kind::Suspend, name), 0)
                        }
                        Event::Fork { task } => {
                            (w.tasks.iter().position(|x| &x.name == task).unwrap_or(0), 0)
                        }
                        _ => (0, 0),
                    });
                }
                per_task.push(per_phase);
            }
            ev_slots.push(per_task);
        }
        for b in &mut res.barriers {
            b.waiting = b.participants - 1;
        }
        let view = (0..n)
            .map(|c| CpuView {
                idle: true,
                nr_running: 0,
                cluster: p.cpus[c].cluster,
                capacity: p.cpus[c].capacity,
            })
            .collect();
        let (s_version, s_misfit, s_hz, s_tick) = (
            s.options.balance.version,
            s.options.balance.misfit,
            s.options.sched.hz,
            s.tick_ns,
        );
        let s_sis_util = s.options.fair.sis_util;
        let doms = crate::sched::topology::SchedDomains::build(p, s_version, BOOT_OFFSET / s_tick);
        let sdt = crate::policy::domains::SdTopology::from_sched_domains(&doms);
        let en = energy::EnergyState::new(p, w, &s, BOOT_OFFSET, end);
        let mut sim = Sim {
            en,
            p,
            w,
            ue_ver: s.options.pelt.util_est_version,
            s,
            q: EventQueue::default(),
            rng: Rng::new(spec.seed),
            threads: Vec::new(),
            ents: Vec::new(),
            rqs,
            res,
            ev_slots,
            unique_counts,
            fork_counts: BTreeMap::new(),
            nr_res_blocked: 0,
            doms,
            sdt,
            idle_wakee: vec![Default::default(); n],
            placements: [0; crate::policy::select_fair::WakeReason::ALL.len()],
            distribute_prev: n - 1,
            lb: crate::policy::lb::LoadBalancer::new(),
            lb_scratch: balance::LbScratch::default(),
            max_cap_memo: Vec::new(),
            idle_policy_possible: wake::workload_may_use_idle_policy(w),
            lbp: crate::policy::lb::LbParams {
                sis_util: s_sis_util,
                ..crate::policy::lb::LbParams::new(s_version, s_misfit, u64::from(s_hz), n)
            },
            misfit: vec![0; n],
            active_balance: vec![false; n],
            cfs_stamp: Vec::new(),
            stamp_ctr: 0,
            rd_overload: false,
            nohz_next_balance_j: 0,
            fatal: None,
            warnings: Vec::new(),
            has_duration: false,
            deadlock_reported: false,
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
            nohz_kick_flags: 0,
            nohz_has_blocked: true,
            nohz_next_blocked_j: 0,
            alive: 0,
            nr_idle: n,
            nr_overloaded: 0,
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
        };
        let mut ind = 0u32;
        for (ti, t) in w.tasks.iter().enumerate() {
            for _ in 0..t.instances {
                sim.spawn_thread(ti, thread_comm(&t.name, ind));
                ind += 1;
            }
        }
        sim
    }

    /// `create_thread()` of rt-app: a thread of task `ti` named `comm`, not started.
    fn spawn_thread(&mut self, ti: usize, comm: String) -> usize {
        let (w, s) = (self.w, &self.s);
        let t = &w.tasks[ti];
        let n = self.p.nr_cpus();
        let policy = t.attrs.policy.unwrap_or(w.default_policy);
        let prio_attr = t.attrs.priority;
        let nice = if policy.is_fair() {
            prio_attr.unwrap_or(0).clamp(-20, 19)
        } else {
            0
        };
        let (class, normal_prio) = class_of(policy, nice, prio_attr.unwrap_or(10));
        let affinity = t
            .attrs
            .cpus
            .as_ref()
            .map_or(CpuSet::first_n(n), |c| CpuSet::from_cpus(c));
        let tid = self.threads.len();
        let dl = {
            let rt = t.attrs.dl_runtime_us.unwrap_or(0);
            let period = t.attrs.dl_period_us.unwrap_or(rt);
            let dl = t.attrs.dl_deadline_us.unwrap_or(period);
            DlEntity::new(program::us(rt), program::us(dl), program::us(period))
        };
        // pthread_setname_np() fails for names over 15 characters: keep the old comm
        let (comm, renamed) = if comm.len() > COMM_MAX {
            ("rt-app".to_string(), true)
        } else {
            (comm, false)
        };
        self.threads.push(Thread {
            pid: PID_BASE + 1 + tid as u32,
            comm,
            comm0: "rt-app".into(),
            task: ti,
            policy,
            nice,
            normal_prio,
            eff_prio: normal_prio,
            class,
            rt_key: (0, 0),
            rr_slice: rtq::RR_TIMESLICE_NS,
            dl,
            dl_key: (0, 0),
            dl_gen: 0,
            wait_on: WaitOn::Nothing,
            retry: Retry::None,
            spin: 0,
            spin_at: 0,
            yielded: false,
            res_blocked: false,
            affinity,
            state: TState::Sleeping,
            cpu: 0,
            pc: Pc::default(),
            op: Op::Step,
            wake_gen: 0,
            t_first: 0,
            renamed,
            started: false,
            timer_wait: None,
            unique_timers: vec![TimerState::default(); self.unique_counts[ti]],
            loop_start: 0,
            run_ns: 0,
            op_start: 0,
            wu_lat_ns: 0,
            slack_ns: 0,
            done_loops: false,
            wakee: Default::default(),
            recent_used_cpu: 0,
            enqueue_migrated: false,
            uclamp: energy::task_uclamp(class == Class::Rt, t.attrs.util_min, t.attrs.util_max),
            uclamp_on: None,
        });
        // v6.12+ custom slices (`fair.custom_slice`); v6.11 keeps sysctl_sched_base_slice
        let slice = t
            .attrs
            .dl_runtime_us
            .filter(|_| policy.is_fair() && s.options.fair.custom_slice)
            .map(|us| (us * 1000).clamp(100_000, 100_000_000))
            .unwrap_or(s.fair.base_slice);
        self.cfs_stamp.push(0);
        self.ents.push(SchedEntity::new(
            LoadWeight::for_nice(nice, policy == SchedPolicy::Idle),
            slice,
        ));
        tid
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
            comm: if t.renamed { &t.comm } else { &t.comm0 },
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

    /// `update_rt_rq_load_avg()` / `update_dl_rq_load_avg()` (kernel/sched/pelt.c, v6.11)
    /// of `cpu`'s RT or DL signal at its PELT clock, with the `pelt_rt_tp` / `pelt_dl_tp`
    /// tracepoint (`sched_pelt_rt` / `sched_pelt_dl`) when the signal was updated.
    fn update_class_pelt(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        rt: bool,
        running: bool,
        now: Nanos,
    ) -> bool {
        let rq = &mut self.rqs[cpu];
        let pnow = rq.clock.now();
        let updated = if rt {
            pelt::update_rt_rq_load_avg(&mut rq.avg_rt, pnow, running)
        } else {
            pelt::update_dl_rq_load_avg(&mut rq.avg_dl, pnow, running)
        };
        if updated && out.any.signals && self.s.options.trace.signals {
            let rq = &self.rqs[cpu];
            let (a, cpu32) = (if rt { &rq.avg_rt } else { &rq.avg_dl }, cpu as u32);
            let (load, rbl_load, util) = (a.load_avg, a.runnable_avg, a.util_avg);
            let ev = if rt {
                TraceEvent::SchedPeltRt {
                    cpu: cpu32,
                    load,
                    rbl_load,
                    util,
                }
            } else {
                TraceEvent::SchedPeltDl {
                    cpu: cpu32,
                    load,
                    rbl_load,
                    util,
                }
            };
            out.emit(&self.ctx(cpu, now), &ev, g_signals);
        }
        updated
    }

    /// The RT signal of `cpu` ([`Sim::update_class_pelt`]).
    fn update_rt_pelt(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        running: bool,
        now: Nanos,
    ) -> bool {
        self.update_class_pelt(out, cpu, true, running, now)
    }

    /// The DL signal of `cpu` ([`Sim::update_class_pelt`]).
    fn update_dl_pelt(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        running: bool,
        now: Nanos,
    ) -> bool {
        self.update_class_pelt(out, cpu, false, running, now)
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
        let util_change = pelt::update_load_avg(
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
        if util_change {
            // cfs_rq_util_change() -> cpufreq_update_util(rq, 0), after the PELT
            // tracepoints fired in ___update_load_avg()
            self.cpufreq_update_util(out, cpu, 0, now);
        }
    }

    /// `update_other_load_avgs()` + the blocked cfs_rq decay of an rq.
    fn update_blocked_averages(&mut self, out: &mut Out<'_, '_>, cpu: usize, now: Nanos) {
        let st = self.cfs_state(cpu);
        // update_other_load_avgs(): the running class's signal counts as running
        let class = self.rqs[cpu].curr.map(|c| self.threads[c].class);
        let mut decayed = self.update_rt_pelt(out, cpu, class == Some(Class::Rt), now);
        decayed |= self.update_dl_pelt(out, cpu, class == Some(Class::Dl), now);
        let rq = &mut self.rqs[cpu];
        let pnow = rq.clock.now();
        let before = rq.cfs.avg.last_update_time;
        decayed |= pelt::update_cfs_rq_load_avg(
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
        // update_blocked_load_tick(), update_blocked_load_status(): nothing left to decay
        // once the cfs_rq (cfs_rq_has_blocked()) and the other classes'
        // (others_have_blocked()) averages are zero
        let jiffies = self.jiffies(now);
        let rq = &mut self.rqs[cpu];
        rq.last_blocked_load_update_tick = jiffies;
        let blocked = rq.cfs.avg.load_avg != 0
            || rq.cfs.avg.util_avg != 0
            || rq.avg_rt.util_avg != 0
            || rq.avg_dl.util_avg != 0;
        if !blocked {
            rq.has_blocked_load = false;
        }
        if decayed {
            self.cpufreq_update_util(out, cpu, 0, now);
        }
    }

    // ----------------------------------------------------------------- work accounting

    /// Work done on `cpu` in `dt` ns: `dt × capacity × f / fmax` (capacity-ns), with the
    /// CPU's work speed ([`crate::platform::Cpu::work_capacity`], the capacity unless the
    /// platform gives `work_dmips_mhz`) as the capacity.
    fn work_in(&self, cpu: usize, dt: Nanos) -> u128 {
        let rq = &self.rqs[cpu];
        let fmax = rq.max_freq_khz.max(1);
        // u64 when the product fits (always, for realistic spans): a u128 division is slow
        match dt
            .checked_mul(rq.work_cap)
            .and_then(|v| v.checked_mul(rq.freq_khz))
        {
            Some(v) => u128::from(v / fmax),
            None => {
                u128::from(dt) * u128::from(rq.work_cap) * u128::from(rq.freq_khz)
                    / u128::from(fmax)
            }
        }
    }

    /// Wall time to do `work` on `cpu` (rounded up).
    fn time_for(&self, cpu: usize, work: u128) -> Nanos {
        let rq = &self.rqs[cpu];
        let den = rq.work_cap * rq.freq_khz;
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

    /// `update_curr()` of `cpu`'s fair queue, with its verdict: EEVDF's `update_deadline()`
    /// calls `resched_curr()` when curr has used up its request and others are queued
    /// (kernel/sched/fair.c, v6.11). Every caller outside the tick goes through here, so an
    /// expired slice is noticed at the next enqueue or dequeue on the CPU, not the next tick.
    fn update_curr_fair_resched(&mut self, cpu: usize, now: Nanos) {
        let fair = self.s.fair;
        let (rq, ents) = (&mut self.rqs[cpu], &mut self.ents);
        if rq.cfs.update_curr(ents, now, &fair).1 {
            self.set_resched(cpu);
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
        let idle = rq.curr.is_none()
            && rq.cfs.nr_running == 0
            && rq.rt.nr_running() == 0
            && rq.dl.nr_running() == 0;
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
    #[allow(dead_code)]
    fn rd_overloaded(&self) -> bool {
        self.rd_overload
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
                        self.try_to_wake_up(out, tid, now, None);
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
                    let flags = std::mem::take(&mut self.nohz_kick_flags);
                    if self.s.options.balance.enabled {
                        self.nohz_idle_balance(out, flags, now);
                    }
                }
                Ev::DlReplenish { tid, gen } => {
                    if self.threads[tid as usize].dl_gen == gen {
                        self.dl_replenish(out, tid as usize, now);
                    }
                }
                Ev::FreqApply { pd } => self.freq_apply_event(out, pd as usize, now),
                Ev::End => {
                    self.finish(out, now);
                    return;
                }
            }
            self.drain_resched(out, now);
            if self.alive > 0 && self.nr_res_blocked == self.alive {
                self.check_deadlock(now);
            }
            if self.fatal.is_some() {
                self.finish(out, now);
                return;
            }
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
            self.wake_up_new_task(out, tid, now, None);
        }
    }

    /// `wake_up_new_task()`: fork placement, `post_init_entity_util_avg()`, enqueue with
    /// ENQUEUE_INITIAL, `sched_wakeup_new`, preemption check.
    fn wake_up_new_task(
        &mut self,
        out: &mut Out<'_, '_>,
        tid: usize,
        now: Nanos,
        parent_cpu: Option<usize>,
    ) {
        // select_task_rq(p, task_cpu(p), WF_FORK): the parent's CPU (CPU 0 for the
        // threads rt-app's main thread creates at start).
        let from = parent_cpu.unwrap_or(0);
        self.threads[tid].recent_used_cpu = from;
        let cpu = if self.threads[tid].class == Class::Fair {
            let placed =
                self.select_task_rq_fair(tid, from, from, crate::policy::select_fair::WF_FORK, now);
            self.placements[placed.reason as usize] += 1;
            placed.cpu
        } else {
            self.select_task_rq_other(tid, from)
        };
        self.threads[tid].cpu = cpu;
        // Threads created at start share t_zero; a forked thread also starts from t_zero
        // (rt-app's thread_body(): t_first = t_zero), plus its delay.
        let start = if parent_cpu.is_some() { self.t0 } else { now };
        self.threads[tid].t_first =
            start + program::us(self.w.tasks[self.threads[tid].task].delay_us);
        self.update_rq_clock(cpu, now);
        if self.threads[tid].class == Class::Fair {
            // post_init_entity_util_avg() (v6.11): only a fair task gets an initial util
            let cfs_avg = self.rqs[cpu].cfs.avg;
            let (cap, weight) = (self.rqs[cpu].cap, self.ents[tid].load.weight);
            pelt::post_init_entity_util_avg(&mut self.ents[tid].avg, cap, &cfs_avg, weight);
        }
        self.enqueue_task(out, cpu, tid, now, true);
        if out.any.sched {
            let ev = TraceEvent::SchedWakeupNew {
                task: self.tref(tid),
                target_cpu: cpu as u32,
            };
            out.emit(&self.ctx(parent_cpu.unwrap_or(cpu), now), &ev, g_sched);
        }
        self.wakeup_preempt(cpu, tid);
    }

    /// `try_to_wake_up()` for a sleeping thread. `waker` is the CPU whose current task
    /// wakes it (a futex wake-up), whose context the `sched_wakeup` event carries; a timer
    /// wake-up is traced on the target CPU.
    fn try_to_wake_up(
        &mut self,
        out: &mut Out<'_, '_>,
        tid: usize,
        now: Nanos,
        waker: Option<usize>,
    ) {
        let prev = self.threads[tid].cpu;
        let cpu = match self.threads[tid].class {
            Class::Fair => {
                // A futex wake-up runs on the waker's CPU; a timer's on the sleeper's.
                let this_cpu = waker.unwrap_or(prev);
                let wf = crate::policy::select_fair::WF_TTWU;
                let placed = self.select_task_rq_fair(tid, prev, this_cpu, wf, now);
                self.placements[placed.reason as usize] += 1;
                placed.cpu
            }
            _ => self.select_task_rq_other(tid, prev),
        };
        if cpu != prev {
            self.migrate_sleeping(out, tid, prev, cpu, now);
            self.migrations[MigrationReason::WakeUp as usize] += 1;
        }
        self.threads[tid].wait_on = WaitOn::Nothing;
        if std::mem::take(&mut self.threads[tid].res_blocked) {
            self.nr_res_blocked -= 1;
        }
        self.update_rq_clock(cpu, now);
        self.enqueue_task(out, cpu, tid, now, false);
        if out.any.sched {
            let ev = TraceEvent::SchedWakeup {
                task: self.tref(tid),
                target_cpu: cpu as u32,
            };
            out.emit(&self.ctx(waker.unwrap_or(cpu), now), &ev, g_sched);
        }
        self.wakeup_preempt(cpu, tid);
    }

    /// Running priority of `cpu` for RT/DL placement: the current task's `prio` (a DL task
    /// counts as -1), 140 when idle (`cpupri` `CPUPRI_IDLE` ranks below normal).
    fn running_prio(&self, cpu: usize) -> i32 {
        match self.rqs[cpu].curr {
            None if self.view[cpu].idle => 140,
            None => 139,
            Some(c) => match self.threads[c].class {
                Class::Fair => 120,
                _ => self.threads[c].eff_prio,
            },
        }
    }

    /// `select_task_rq_rt()` / `select_task_rq_dl()` (kernel/sched/rt.c, deadline.c,
    /// v6.11), reduced: stay on the previous CPU unless what runs there would keep the
    /// task waiting (an RT task of higher or equal priority, an earlier deadline, or a
    /// pinned RT task); then `find_lowest_rq()`: the allowed CPU running the
    /// lowest-priority work (idle first), preferring the previous CPU, then the lowest
    /// number. Capacity fitness and the push/pull balancer are the RT work's.
    fn select_task_rq_other(&self, tid: usize, prev: usize) -> usize {
        let aff = self.threads[tid].affinity;
        let p = &self.threads[tid];
        let blocked = |cpu: usize| -> bool {
            let rq = &self.rqs[cpu];
            match p.class {
                Class::Dl => rq.dl.earliest().is_some_and(|d| d <= p.dl.deadline),
                _ => {
                    rq.dl.nr_running() > 0
                        || rq.curr.is_some_and(|c| {
                            let ct = &self.threads[c];
                            ct.class != Class::Fair
                                && (ct.eff_prio <= p.eff_prio || ct.affinity.weight() < 2)
                        })
                }
            }
        };
        if aff.contains(prev) && !blocked(prev) {
            return prev;
        }
        let best = aff
            .iter()
            .filter(|&c| c < self.p.nr_cpus())
            .max_by_key(|&c| (self.running_prio(c), c == prev, std::cmp::Reverse(c)));
        match best {
            Some(c) if self.running_prio(c) > p.eff_prio || !aff.contains(prev) => c,
            _ => prev,
        }
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
        // migrate_task_rq_fair() (v6.11; the CFS option: v6.5)
        let last = self.rqs[from].cfs.avg.last_update_time;
        let w = self.ents[tid].load.weight;
        pelt::remove_entity_load_avg(
            &mut self.rqs[from].cfs.removed,
            &mut self.ents[tid].avg,
            last,
            w,
        );
        // migrate_se_pelt_lag(): off an idle CPU, whose clock may be stale, the blocked
        // averages are decayed further to the estimated now.
        if self.s.options.pelt.migrate_pelt_lag
            && self.rqs[from].curr.is_none()
            && !pelt::load_avg_is_decayed(&self.ents[tid].avg)
        {
            let est = self.rqs[from].clock.migrate_lag_now(last, now);
            pelt::update_load_avg_blocked_se(&mut self.ents[tid].avg, est, w);
        }
        self.ents[tid].avg.last_update_time = 0;
        if self.s.fair.variant == FairVariant::Cfs && self.threads[tid].class == Class::Fair {
            // v6.5: a waking task's vruntime is made relative to its old queue here and
            // absolute on the new one in enqueue_entity() (ENQUEUE_MIGRATED).
            let min = self.rqs[from].cfs.min_vruntime;
            let e = &mut self.ents[tid];
            e.vruntime = e.vruntime.wrapping_sub(min);
        }
        self.threads[tid].enqueue_migrated = true;
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

    /// `enqueue_task()`: the class's enqueue.
    fn enqueue_task(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        tid: usize,
        now: Nanos,
        initial: bool,
    ) {
        self.uclamp_inc(cpu, tid);
        match self.threads[tid].class {
            Class::Fair => self.enqueue_fair(out, cpu, tid, now, initial),
            Class::Rt => {
                self.threads[tid].enqueue_migrated = false;
                // enqueue_task_rt(): a woken task goes to the tail of its priority
                let prio = self.threads[tid].eff_prio;
                self.threads[tid].rt_key = self.rqs[cpu].rt.enqueue(tid, prio, false);
                self.threads[tid].state = TState::Runnable;
                self.threads[tid].cpu = cpu;
                self.refresh_view(cpu);
            }
            Class::Dl => {
                self.threads[tid].enqueue_migrated = false;
                // enqueue_task_dl(): ENQUEUE_WAKEUP → update_dl_entity(); a new task
                // starts its first period (setup_new_dl_entity()).
                let t = &mut self.threads[tid];
                if initial || t.dl.deadline == 0 {
                    t.dl.new_period(now);
                } else if t.state != TState::Runnable {
                    t.dl.update_at_wakeup(now);
                }
                let d = t.dl.deadline;
                t.dl_key = self.rqs[cpu].dl.enqueue(tid, d);
                t.state = TState::Runnable;
                t.cpu = cpu;
                self.refresh_view(cpu);
            }
        }
        // add_nr_running() (kernel/sched/sched.h, v6.11), for every class: a second
        // runnable task overloads the root domain (set_rd_overloaded()).
        let rq = &self.rqs[cpu];
        if rq.cfs.nr_running as usize + rq.rt.nr_running() + rq.dl.nr_running() >= 2 {
            self.rd_overload = true;
        }
        if self.threads[tid].class != Class::Fair {
            // enqueue_top_rt_rq() / add_running_bw() -> cpufreq_update_util(rq, 0)
            self.cpufreq_update_util(out, cpu, 0, now);
        }
    }

    /// `dequeue_task()`: the class's dequeue.
    fn dequeue_task(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        tid: usize,
        now: Nanos,
        sleep: bool,
    ) {
        self.uclamp_dec(cpu, tid);
        match self.threads[tid].class {
            Class::Fair => self.dequeue_fair(out, cpu, tid, now, sleep),
            Class::Rt => {
                let key = self.threads[tid].rt_key;
                self.rqs[cpu].rt.dequeue(tid, key);
                self.refresh_view(cpu);
            }
            Class::Dl => {
                let key = self.threads[tid].dl_key;
                self.rqs[cpu].dl.dequeue(tid, key);
                self.refresh_view(cpu);
            }
        }
        if self.threads[tid].class != Class::Fair {
            // dequeue_top_rt_rq() / sub_running_bw() -> cpufreq_update_util(rq, 0)
            self.cpufreq_update_util(out, cpu, 0, now);
        }
    }

    /// `enqueue_task_fair()`: util_est, PELT (attach), placement, queueing.
    fn enqueue_fair(
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
        self.update_curr_fair_resched(cpu, now);
        self.update_load_avg(out, cpu, tid, UPDATE_TG | DO_ATTACH, now);
        let migrated = std::mem::take(&mut self.threads[tid].enqueue_migrated);
        // ENQUEUE_WAKEUP: a sleeping task, not a new one nor a queued one moving or
        // being re-queued (a balancer move, an affinity or priority change).
        let wakeup = !initial && self.threads[tid].state != TState::Runnable;
        let (rq, ents) = (&mut self.rqs[cpu], &mut self.ents);
        if fair.variant == FairVariant::Cfs && self.threads[tid].state == TState::Runnable {
            // a migrating queued task: make its relative vruntime absolute here
            rq.cfs.cfs_migrate_in(ents, tid);
        } else {
            if fair.variant == FairVariant::Cfs && migrated {
                // v6.5 enqueue_entity(): renorm for ENQUEUE_MIGRATED, then place_entity()
                rq.cfs.cfs_migrate_in(ents, tid);
            }
            // ENQUEUE_INITIAL: wake_up_new_task() passes it from v6.12 (fair.enqueue_initial);
            // the CFS rules' `initial` is the fork-time placement (START_DEBIT).
            let enqueue_initial = initial
                && (fair.variant == FairVariant::Cfs || self.s.options.fair.enqueue_initial);
            rq.cfs.place_entity(ents, tid, enqueue_initial, &fair);
        }
        if migrated {
            // enqueue_entity(): "Entity has migrated, no longer consider this task hot"
            ents[tid].exec_start = 0;
        }
        rq.cfs.enqueue_entity(ents, tid);
        self.threads[tid].state = TState::Runnable;
        self.threads[tid].cpu = cpu;
        // account_entity_enqueue(): at the head of cfs_tasks
        self.stamp_ctr += 1;
        self.cfs_stamp[tid] = self.stamp_ctr;
        self.refresh_view(cpu);
        // enqueue_task_fair() (v6.11): `task_new = !(flags & ENQUEUE_WAKEUP)`; only a
        // wake-up checks the overutilized status.
        if wakeup {
            self.check_update_overutilized_status(out, cpu, now);
        }
    }

    /// `dequeue_task_fair()`. `sleep` is DEQUEUE_SLEEP; otherwise a migration (DO_DETACH).
    fn dequeue_fair(
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
        self.update_curr_fair_resched(cpu, now);
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

    /// `wakeup_preempt()`: reschedule `cpu` if idle, if `tid`'s class is above curr's
    /// (`sched_class_above()`), or if curr's class says so: a higher RT priority
    /// (`wakeup_preempt_rt()`), an earlier deadline (`wakeup_preempt_dl()`), or the fair
    /// class's rule (`check_preempt_wakeup_fair()`).
    fn wakeup_preempt(&mut self, cpu: usize, tid: usize) {
        match self.rqs[cpu].curr {
            None => self.set_resched(cpu),
            Some(c) => {
                let (cc, pc) = (self.threads[c].class, self.threads[tid].class);
                if pc != cc {
                    if pc > cc {
                        self.set_resched(cpu);
                    }
                    return;
                }
                match pc {
                    Class::Rt => {
                        if self.threads[tid].eff_prio < self.threads[c].eff_prio {
                            self.set_resched(cpu);
                        }
                    }
                    Class::Dl => {
                        if self.threads[tid].dl.deadline < self.threads[c].dl.deadline {
                            self.set_resched(cpu);
                        }
                    }
                    Class::Fair => {
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
        }
    }

    /// Puts the thread to sleep until `at` (it is curr on `cpu`), or until another
    /// thread wakes it when `at` is `None`.
    fn block(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        tid: usize,
        now: Nanos,
        at: Option<Nanos>,
    ) {
        self.update_rq_clock(cpu, now);
        if self.threads[tid].class == Class::Dl {
            self.update_curr_dl(cpu, tid, now);
        }
        if !(self.threads[tid].class == Class::Dl && self.threads[tid].dl.throttled) {
            self.dequeue_task(out, cpu, tid, now, true);
        }
        let t = &mut self.threads[tid];
        t.state = TState::Sleeping;
        t.wake_gen = t.wake_gen.wrapping_add(1);
        let gen = t.wake_gen;
        if let Some(at) = at {
            self.q.push(
                at,
                Ev::Wake {
                    tid: tid as u32,
                    gen,
                },
            );
        } else {
            self.threads[tid].res_blocked = true;
            self.nr_res_blocked += 1;
        }
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
        let class = self.threads[curr].class;
        // task_tick_rt() / task_tick_dl() update their class's signal (v6.11); the tick of
        // a fair task leaves them to the class hooks and update_other_load_avgs().
        match class {
            Class::Rt => self.update_rt_pelt(out, cpu, true, now),
            Class::Dl => self.update_dl_pelt(out, cpu, true, now),
            Class::Fair => false,
        };
        match class {
            Class::Fair => {
                // task_tick_fair() -> entity_tick()
                let fair = self.s.fair;
                let (rq, ents) = (&mut self.rqs[cpu], &mut self.ents);
                let (_, resched) = rq.cfs.update_curr(ents, now, &fair);
                self.update_load_avg(out, cpu, curr, UPDATE_TG, now);
                let tick_preempt = self.rqs[cpu].cfs.check_preempt_tick(&self.ents, &fair);
                if resched || tick_preempt {
                    self.set_resched(cpu);
                }
            }
            Class::Rt => {
                // task_tick_rt(): SCHED_RR uses up its time slice one jiffy at a time and
                // goes to the tail of its list when others share its priority.
                if self.threads[curr].policy == SchedPolicy::Rr {
                    let tick = self.s.tick_ns;
                    let t = &mut self.threads[curr];
                    t.rr_slice = t.rr_slice.saturating_sub(tick);
                    if t.rr_slice == 0 {
                        t.rr_slice = rtq::RR_TIMESLICE_NS;
                        let (prio, key) = (t.eff_prio, t.rt_key);
                        let rt = &mut self.rqs[cpu].rt;
                        if rt.iter().filter(|&x| x != curr).count() > 0 {
                            rt.dequeue(curr, key);
                            self.threads[curr].rt_key = rt.enqueue(curr, prio, false);
                            self.set_resched(cpu);
                        }
                    }
                }
            }
            Class::Dl => {
                // task_tick_dl() -> update_curr_dl(); with HRTICK off the overrun is seen here
                self.update_curr_dl(cpu, curr, now);
                if let Some(e) = self.rqs[cpu].dl.earliest() {
                    if e < self.threads[curr].dl.deadline {
                        self.set_resched(cpu);
                    }
                }
            }
        }
        // task_tick_fair(): update_misfit_status(curr, rq)
        if class == Class::Fair {
            self.update_misfit(cpu, Some(curr), now);
            self.check_update_overutilized_status(out, cpu, now);
        }
        // sched_balance_trigger() and nohz_balancer_kick()
        if self.s.options.balance.enabled {
            self.balance_tick(out, cpu, now);
        }
    }

    // ----------------------------------------------------------------- balancing

    /// `detach_task()` + `attach_task()`: moves a queued task.
    fn move_queued(&mut self, out: &mut Out<'_, '_>, m: Migration, now: Nanos) {
        self.update_rq_clock(m.src, now);
        self.dequeue_task(out, m.src, m.task, now, false);
        self.trace_migrate(out, m.task, m.src, m.dst, m.dst, now);
        self.threads[m.task].enqueue_migrated = true;
        self.update_rq_clock(m.dst, now);
        self.enqueue_task(out, m.dst, m.task, now, false);
        self.migrations[m.reason as usize] += 1;
        self.wakeup_preempt(m.dst, m.task);
    }

    /// `set_cpus_allowed_ptr()` → `migration_cpu_stop()`: the running task left its
    /// allowed CPUs; it is moved to the CPU `select_fallback_rq()` would choose. Called
    /// from `__schedule()`, which then switches away from it.
    fn move_off_disallowed(&mut self, out: &mut Out<'_, '_>, cpu: usize, tid: usize, now: Nanos) {
        // __set_cpus_allowed_ptr_locked(): dest_cpu = cpumask_any_and_distribute(), the
        // next allowed CPU after the one it returned last (lib/cpumask.c, v6.11).
        let aff = self.threads[tid].affinity;
        let n = self.p.nr_cpus();
        let start = (self.distribute_prev + 1) % n.max(1);
        let dst = (0..n)
            .map(|i| (start + i) % n)
            .find(|&c| aff.contains(c))
            .unwrap_or(cpu);
        self.distribute_prev = dst;
        let m = Migration {
            task: tid,
            src: cpu,
            dst,
            reason: MigrationReason::Affinity,
        };
        self.detach_running(out, m, now);
    }

    /// A stopper moves `cpu`'s running task (`migration_cpu_stop()` /
    /// `active_load_balance_cpu_stop()`); the CPU reschedules from it.
    fn move_running(&mut self, out: &mut Out<'_, '_>, m: Migration, now: Nanos) {
        self.update_rq_clock(m.src, now);
        if self.threads[m.task].class == Class::Fair {
            let fair = self.s.fair;
            let (rq, ents) = (&mut self.rqs[m.src], &mut self.ents);
            rq.cfs.update_curr(ents, now, &fair);
        }
        self.detach_running(out, m, now);
        self.rqs[m.src].prev_moved = true;
        self.set_resched(m.src);
    }

    fn detach_running(&mut self, out: &mut Out<'_, '_>, m: Migration, now: Nanos) {
        let (cpu, tid) = (m.src, m.task);
        self.account_op(cpu, now);
        if self.threads[tid].class == Class::Fair {
            self.update_load_avg(out, cpu, tid, 0, now);
            let (rq, ents) = (&mut self.rqs[cpu], &self.ents);
            rq.cfs.put_prev_entity(ents, tid);
        }
        self.rqs[cpu].curr = None;
        self.move_queued(out, m, now);
        // the CPU switches away from the moved task
        self.rqs[cpu].curr = Some(tid);
    }

    // ----------------------------------------------------------------- __schedule()

    /// `pick_next_task()`: the classes in order, deadline, RT, fair.
    fn pick_next(&self, cpu: usize) -> Option<usize> {
        let rq = &self.rqs[cpu];
        rq.dl
            .pick()
            .or_else(|| rq.rt.pick())
            .or_else(|| rq.cfs.pick_next(&self.ents, &self.s.fair))
    }

    /// `update_curr_dl()`: charges the running deadline task's budget; throttles it when
    /// spent (`dl_runtime_exceeded()` → `start_dl_timer()`).
    fn update_curr_dl(&mut self, cpu: usize, tid: usize, now: Nanos) {
        let dt = now.saturating_sub(self.rqs[cpu].seg_start_dl);
        self.rqs[cpu].seg_start_dl = now;
        let t = &mut self.threads[tid];
        t.dl.runtime -= dt as i64;
        if t.dl.runtime <= 0 && !t.dl.throttled && t.state == TState::Runnable {
            t.dl.throttled = true;
            t.dl_gen = t.dl_gen.wrapping_add(1);
            let (gen, at) = (t.dl_gen, t.dl.next_period().max(now));
            let key = t.dl_key;
            self.rqs[cpu].dl.dequeue(tid, key);
            self.refresh_view(cpu);
            self.q.push(
                at,
                Ev::DlReplenish {
                    tid: tid as u32,
                    gen,
                },
            );
            self.set_resched(cpu);
        }
    }

    /// `dl_task_timer()`: replenish a throttled deadline task and queue it again.
    fn dl_replenish(&mut self, out: &mut Out<'_, '_>, tid: usize, now: Nanos) {
        let _ = out;
        let t = &mut self.threads[tid];
        if !t.dl.throttled {
            return;
        }
        t.dl.replenish(now);
        if t.state != TState::Runnable || t.class != Class::Dl {
            return;
        }
        let cpu = t.cpu;
        let d = t.dl.deadline;
        self.threads[tid].dl_key = self.rqs[cpu].dl.enqueue(tid, d);
        self.refresh_view(cpu);
        if self.rqs[cpu].curr != Some(tid) {
            self.wakeup_preempt(cpu, tid);
        }
    }

    fn schedule(&mut self, out: &mut Out<'_, '_>, cpu: usize, now: Nanos) {
        let fair = self.s.fair;
        self.update_rq_clock(cpu, now);
        self.account_op(cpu, now);
        let prev = self.rqs[cpu].curr;
        let mut prev_moved = std::mem::take(&mut self.rqs[cpu].prev_moved);
        if let Some(p) = prev.filter(|_| !prev_moved) {
            match self.threads[p].class {
                Class::Fair if self.ents[p].on_rq => {
                    let (rq, ents) = (&mut self.rqs[cpu], &mut self.ents);
                    rq.cfs.update_curr(ents, now, &fair);
                    if !self.threads[p].affinity.contains(cpu) {
                        self.move_off_disallowed(out, cpu, p, now);
                        prev_moved = true;
                    }
                }
                Class::Dl => self.update_curr_dl(cpu, p, now),
                _ => {}
            }
            if !prev_moved
                && self.threads[p].class != Class::Fair
                && self.threads[p].state == TState::Runnable
                && self.queued_other(cpu, p)
                && !self.threads[p].affinity.contains(cpu)
            {
                self.move_off_disallowed(out, cpu, p, now);
                prev_moved = true;
            }
        }
        let mut next = self.pick_next(cpu);
        if !prev_moved && next.is_some() && next == prev {
            // Same task: no switch; its armed op completion still holds (same rate). A
            // task that yielded with nobody to yield to goes on with its program.
            if let Some(n) = next {
                if std::mem::take(&mut self.threads[n].yielded) {
                    self.step_program(out, cpu, n, now);
                }
            }
            return;
        }
        if let Some(p) = prev.filter(|_| !prev_moved) {
            match self.threads[p].class {
                Class::Fair => {
                    if self.ents[p].on_rq {
                        // put_prev_entity(): PELT update while it ran, back into the queue
                        self.update_load_avg(out, cpu, p, 0, now);
                    }
                    let (rq, ents) = (&mut self.rqs[cpu], &self.ents);
                    rq.cfs.put_prev_entity(ents, p);
                }
                // put_prev_task_rt() / put_prev_task_dl(): the class signal while running
                Class::Rt => {
                    self.update_rt_pelt(out, cpu, true, now);
                }
                Class::Dl => {
                    self.update_dl_pelt(out, cpu, true, now);
                }
            }
        }
        if next.is_none() && self.s.options.balance.enabled {
            // pick_next_task_fair() found nothing: update_misfit_status(NULL), then
            // sched_balance_newidle() (v6.11): past its gate (rd->overloaded, avg_idle) the
            // blocked averages, then the domains; nothing pulled: nohz_newidle_balance()
            let pulled = if self.newidle_gate_open(cpu) {
                self.update_blocked_averages(out, cpu, now);
                self.newidle_balance(out, cpu, now)
            } else {
                self.newidle_balance(out, cpu, now) // updates next_balance only
            };
            if pulled {
                next = self.pick_next(cpu);
            } else {
                self.nohz_newidle_balance(out, cpu, now);
            }
        }
        if next.is_none() {
            self.rqs[cpu].idle_stamp = now;
            // nohz_balance_enter_idle(): the CPU's blocked load is to be decayed by others
            self.rqs[cpu].has_blocked_load = true;
            self.nohz_has_blocked = true;
            // nohz_balance_enter_idle() sets nohz.needs_update, and the next kick's
            // NOHZ_NEXT_KICK pulls nohz.next_balance in to this CPU's next_balance; done
            // here at once (a simplification: the kernel waits for a busy CPU's tick).
            let nb = self.rqs[cpu].next_balance;
            self.nohz_next_balance_j = self.nohz_next_balance_j.min(nb);
        } else if self.rqs[cpu].idle_stamp != 0 && prev.is_none() {
            // ttwu_do_activate()'s avg_idle update when leaving idle
            let rq = &mut self.rqs[cpu];
            let delta = now - rq.idle_stamp;
            let max = 2 * crate::sched::SYSCTL_SCHED_MIGRATION_COST;
            if rq.avg_idle > max {
                rq.avg_idle = max;
            } else {
                let diff = delta as i64 - rq.avg_idle as i64;
                rq.avg_idle = (rq.avg_idle as i64 + diff / 8) as u64;
            }
            rq.idle_stamp = 0;
        }
        self.rqs[cpu].op_gen = self.rqs[cpu].op_gen.wrapping_add(1);
        if let Some(n) = next {
            match self.threads[n].class {
                Class::Fair => {
                    // set_next_entity(); the task moves to the head of cfs_tasks
                    self.update_load_avg(out, cpu, n, UPDATE_TG, now);
                    let (rq, ents) = (&mut self.rqs[cpu], &mut self.ents);
                    rq.cfs.set_next_entity(ents, n, now);
                    self.stamp_ctr += 1;
                    self.cfs_stamp[n] = self.stamp_ctr;
                    self.update_misfit(cpu, Some(n), now);
                }
                // set_next_task_rt(): rq->curr was not RT until now
                Class::Rt => {
                    let running = prev.is_some_and(|p| self.threads[p].class == Class::Rt);
                    self.update_rt_pelt(out, cpu, running, now);
                }
                Class::Dl => {
                    let running = prev.is_some_and(|p| self.threads[p].class == Class::Dl);
                    self.update_dl_pelt(out, cpu, running, now);
                    self.rqs[cpu].seg_start_dl = now;
                }
            }
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

    /// Whether non-fair `tid` is queued on `cpu`'s RT or DL queue.
    fn queued_other(&self, cpu: usize, tid: usize) -> bool {
        match self.threads[tid].class {
            Class::Rt => self.rqs[cpu].rt.iter().any(|t| t == tid),
            Class::Dl => !self.threads[tid].dl.throttled,
            Class::Fair => false,
        }
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
                self.en.idle_calls[cpu] += 1;
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
                    oldcomm: &t.comm0,
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
                self.block(out, cpu, tid, now, Some(t_first));
                return;
            }
        }
        if !self.do_retry(out, tid) {
            self.block(out, cpu, tid, now, None);
            return;
        }
        let w = self.w;
        loop {
            // Spin guard: a program that steps forever without time passing.
            let th = &mut self.threads[tid];
            if th.spin_at == now {
                th.spin += 1;
                if th.spin > 1_000_000 {
                    let msg = format!(
                        "thread {} executed 1000000 events at {} s without time passing (a loop with no run, sleep or blocking event)",
                        th.comm,
                        crate::time::fmt_ftrace_ts(now)
                    );
                    self.fail(msg);
                    return;
                }
            } else {
                th.spin_at = now;
                th.spin = 0;
            }
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
                        self.block(out, cpu, tid, now, Some(at));
                        return;
                    }
                    Some(Step::Exit) => {
                        self.exit(out, cpu, tid, now);
                        return;
                    }
                    Some(Step::Block) => {
                        self.block(out, cpu, tid, now, None);
                        return;
                    }
                    Some(Step::Yield) => {
                        self.threads[tid].yielded = true;
                        self.set_resched(cpu);
                        return;
                    }
                    None => {
                        if self.fatal.is_some() {
                            return;
                        }
                        continue;
                    }
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
            self.set_task_uclamp(tid, attrs.util_min, attrs.util_max);
            if let Some(pol) = attrs.policy {
                self.set_policy(out, tid, pol, attrs.priority);
            } else if let Some(prio) = attrs.priority {
                if self.threads[tid].policy.is_fair() {
                    self.set_user_nice(out, tid, prio);
                } else if self.threads[tid].class == Class::Rt {
                    let pol = self.threads[tid].policy;
                    self.set_policy(out, tid, pol, Some(prio));
                }
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
    /// `set_user_nice()` (kernel/sched/syscalls.c, v6.11): a new nice value; for a fair
    /// task, the weight through [`Sim::reweight_fair`].
    fn set_user_nice(&mut self, out: &mut Out<'_, '_>, tid: usize, nice: i32) {
        let nice = nice.clamp(-20, 19);
        if self.threads[tid].nice == nice {
            return;
        }
        self.threads[tid].nice = nice;
        if !self.threads[tid].policy.is_fair() {
            return; // p->static_prio only: it applies when the task becomes fair
        }
        let t = &mut self.threads[tid];
        let old_prio = t.eff_prio;
        let boosted = t.eff_prio != t.normal_prio;
        t.normal_prio = 120 + nice;
        if !boosted {
            t.eff_prio = t.normal_prio; // effective_prio()
        }
        self.reweight_fair(out, tid, old_prio);
    }

    /// The weight of fair `tid` follows its policy and nice, as `set_user_nice()` and
    /// `__sched_setscheduler()` change it (v6.11): `dequeue_task(DEQUEUE_SAVE)` (util_est,
    /// `update_curr()`, PELT, the lag), `put_prev_task()`, `set_load_weight()` →
    /// `reweight_task()` → `reweight_entity()` (the lag scaled to the new weight, the
    /// load average recomputed), `enqueue_task(ENQUEUE_RESTORE)` (`place_entity()` keeps
    /// the lag and takes a new deadline), `set_next_task()`, `prio_changed_fair()`.
    fn reweight_fair(&mut self, out: &mut Out<'_, '_>, tid: usize, old_prio: i32) {
        let t = &self.threads[tid];
        let lw = LoadWeight::for_nice(t.nice, t.policy == SchedPolicy::Idle);
        let old_w = self.ents[tid].load.weight;
        if t.class != Class::Fair || lw == self.ents[tid].load {
            self.ents[tid].load = lw;
            return;
        }
        let now = self.q.now();
        let cpu = t.cpu;
        let fair = self.s.fair;
        let queued = self.ents[tid].on_rq;
        let running = self.rqs[cpu].curr == Some(tid);
        self.update_rq_clock(cpu, now);
        if queued {
            if self.s.options.pelt.util_est {
                let a = self.ents[tid].avg;
                pelt::util_est_dequeue(&mut self.rqs[cpu].cfs.avg, &a, self.ue_ver);
            }
            self.update_curr_fair_resched(cpu, now);
            self.update_load_avg(out, cpu, tid, UPDATE_TG, now);
            let (rq, ents) = (&mut self.rqs[cpu], &mut self.ents);
            rq.cfs.dequeue_entity(ents, tid, false, &fair);
        }
        if running {
            let (rq, ents) = (&mut self.rqs[cpu], &self.ents);
            rq.cfs.put_prev_entity(ents, tid);
        }
        {
            let (rq, e) = (&mut self.rqs[cpu], &mut self.ents[tid]);
            e.vlag = (i128::from(e.vlag) * i128::from(old_w) / i128::from(lw.weight)) as i64;
            pelt::reweight_entity_load_avg(&mut rq.cfs.avg, &mut e.avg, old_w, lw.weight);
            e.load = lw;
        }
        if queued {
            if self.s.options.pelt.util_est {
                let a = self.ents[tid].avg;
                pelt::util_est_enqueue(&mut self.rqs[cpu].cfs.avg, &a, self.ue_ver);
            }
            self.update_curr_fair_resched(cpu, now);
            self.update_load_avg(out, cpu, tid, UPDATE_TG | DO_ATTACH, now);
            let (rq, ents) = (&mut self.rqs[cpu], &mut self.ents);
            if fair.variant == FairVariant::Cfs {
                rq.cfs.cfs_migrate_in(ents, tid); // v6.5: renorm without ENQUEUE_WAKEUP
            } else {
                rq.cfs.place_entity(ents, tid, false, &fair);
            }
            rq.cfs.enqueue_entity(ents, tid);
        }
        if running {
            let (rq, ents) = (&mut self.rqs[cpu], &mut self.ents);
            rq.cfs.set_next_entity(ents, tid, now);
        }
        self.refresh_view(cpu);
        // prio_changed_fair(): the running task reschedules when its priority dropped; a
        // queued one is checked against curr.
        if queued && self.rqs[cpu].cfs.nr_running > 1 {
            if running {
                if self.threads[tid].eff_prio > old_prio {
                    self.set_resched(cpu);
                }
            } else {
                self.wakeup_preempt(cpu, tid);
            }
        }
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
        out: &mut Out<'_, '_>,
        cpu: usize,
        tid: usize,
        pc: Pc,
        ev: &Event,
        now: Nanos,
    ) -> Option<Step> {
        let task = self.threads[tid].task;
        let (ra, rb) = self.ev_slots[task][pc.phase][pc.event];
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
                let slot = self.timer_slots[task][pc.phase][pc.event];
                let t_first = self.threads[tid].t_first;
                let st = match slot {
                    Some(TimerSlot::Unique(i)) => &mut self.threads[tid].unique_timers[i],
                    Some(TimerSlot::Shared(i)) => &mut self.shared_timers[i],
                    None => return None,
                };
                let (t_next, slack) =
                    program::timer_next(st, t_first, program::us(period_us), mode, now);
                if self.w.cumulative_slack {
                    self.threads[tid].slack_ns += slack;
                } else {
                    self.threads[tid].slack_ns = slack;
                }
                if now < t_next {
                    Some(Step::SleepUntil {
                        at: t_next,
                        timer: true,
                    })
                } else {
                    // a missed timer: rt-app resets wu_latency
                    self.threads[tid].wu_lat_ns = 0;
                    None
                }
            }
            Event::Lock { .. } => self.mutex_lock(out, tid, ra),
            Event::Unlock { .. } => {
                self.mutex_unlock(out, cpu, tid, ra, now);
                None
            }
            Event::Wait { .. } => Some(self.cond_wait(out, cpu, tid, ra, rb, now)),
            Event::Signal { .. } => {
                self.cond_wake(out, cpu, ra, false, now);
                None
            }
            Event::Broad { .. } => {
                self.cond_wake(out, cpu, ra, true, now);
                None
            }
            Event::Sync { .. } => {
                self.cond_wake(out, cpu, ra, false, now);
                Some(self.cond_wait(out, cpu, tid, ra, rb, now))
            }
            Event::Barrier { .. } => {
                let prio = self.threads[tid].eff_prio;
                let b = &mut self.res.barriers[ra];
                if b.waiting <= 0 {
                    // everyone else is waiting: pthread_cond_broadcast()
                    let woken = b.waiters.drain();
                    for w in woken {
                        self.threads[w].retry = Retry::Barrier(ra);
                        self.try_to_wake_up(out, w, now, Some(cpu));
                    }
                    None
                } else {
                    b.waiting -= 1;
                    b.waiters.push(tid, prio);
                    self.threads[tid].wait_on = WaitOn::Barrier(ra);
                    Some(Step::Block)
                }
            }
            Event::Suspend { .. } => {
                let prio = self.threads[tid].eff_prio;
                self.res.suspends[ra].waiters.push(tid, prio);
                self.threads[tid].wait_on = WaitOn::Suspend(ra);
                Some(Step::Block)
            }
            Event::Resume { .. } => {
                let woken = self.res.suspends[ra].waiters.drain();
                for w in woken {
                    self.try_to_wake_up(out, w, now, Some(cpu));
                }
                None
            }
            Event::SemPost { .. } => {
                let sem = &mut self.res.sems[ra];
                sem.value += 1;
                if let Some(w) = sem.waiters.pop() {
                    self.threads[w].retry = Retry::Sem(ra);
                    self.try_to_wake_up(out, w, now, Some(cpu));
                }
                None
            }
            Event::SemWait { .. } => (!self.sem_wait(tid, ra)).then_some(Step::Block),
            Event::Yield => {
                self.sched_yield(cpu, tid, now);
                Some(Step::Yield)
            }
            Event::Fork { .. } => {
                self.fork(out, cpu, tid, ra, now);
                None
            }
            Event::Mem { .. } | Event::Iorun { .. } | Event::Memrun { .. } => {
                let ns = program::cpu_work_ns(ev).unwrap_or(0);
                if ns == 0 {
                    return None;
                }
                let work = u128::from(ns) * u128::from(self.cap_ref);
                self.threads[tid].op = Op::Run { work, us: 0 };
                Some(Step::Compute)
            }
        }
    }

    // ----------------------------------------------------------------- rt-app resources

    /// Ends the run with a diagnostic.
    fn fail(&mut self, msg: String) {
        if self.fatal.is_none() {
            self.fatal = Some(msg);
        }
    }

    /// What a woken thread redoes first; false if it must block again.
    fn do_retry(&mut self, out: &mut Out<'_, '_>, tid: usize) -> bool {
        match std::mem::replace(&mut self.threads[tid].retry, Retry::None) {
            Retry::None => true,
            Retry::Lock(m) => self.mutex_lock(out, tid, m).is_none(),
            Retry::Barrier(b) => {
                self.res.barriers[b].waiting += 1;
                true
            }
            Retry::Sem(si) => self.sem_wait(tid, si),
        }
    }

    /// `sem_wait()`: take one unit, or queue `tid` (false: it must block).
    fn sem_wait(&mut self, tid: usize, si: usize) -> bool {
        let prio = self.threads[tid].eff_prio;
        let sem = &mut self.res.sems[si];
        if sem.value > 0 {
            sem.value -= 1;
            true
        } else {
            sem.waiters.push(tid, prio);
            self.threads[tid].wait_on = WaitOn::Sem(si);
            false
        }
    }

    /// `pthread_mutex_lock()`: `None` if taken, `Some(Block)` if `tid` now waits.
    fn mutex_lock(&mut self, out: &mut Out<'_, '_>, tid: usize, m: usize) -> Option<Step> {
        if self.res.try_lock(m, tid) {
            return None;
        }
        let prio = self.threads[tid].eff_prio;
        self.res.mutexes[m].waiters.push(tid, prio);
        self.threads[tid].wait_on = WaitOn::Mutex(m);
        if self.w.pi_enabled {
            // rt_mutex_adjust_prio_chain(): boost the owner, and whoever it waits for
            let mut owner = self.res.mutexes[m].owner;
            let mut depth = 0;
            while let Some(o) = owner {
                if !self.pi_adjust(out, o) || depth > 1024 {
                    break;
                }
                depth += 1;
                owner = match self.threads[o].wait_on {
                    WaitOn::Mutex(m2) => self.res.mutexes[m2].owner,
                    _ => None,
                };
            }
        }
        Some(Step::Block)
    }

    /// `pthread_mutex_unlock()` by `tid` on `cpu`.
    fn mutex_unlock(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        tid: usize,
        m: usize,
        now: Nanos,
    ) {
        if self.res.mutexes[m].owner != Some(tid) {
            return; // validated before the run; a normal mutex ignores it
        }
        let pi = self.w.pi_enabled;
        if let Some(w) = self.res.unlock(m, pi) {
            self.threads[w].retry = if pi { Retry::None } else { Retry::Lock(m) };
            self.threads[w].wait_on = WaitOn::Nothing;
            if pi {
                self.pi_adjust(out, w);
            }
            self.try_to_wake_up(out, w, now, Some(cpu));
        }
        if pi {
            self.pi_adjust(out, tid);
        }
    }

    /// `pthread_cond_wait(cond, mutex)`: release the mutex, queue, block.
    fn cond_wait(
        &mut self,
        out: &mut Out<'_, '_>,
        cpu: usize,
        tid: usize,
        c: usize,
        m: usize,
        now: Nanos,
    ) -> Step {
        self.mutex_unlock(out, cpu, tid, m, now);
        let prio = self.threads[tid].eff_prio;
        let cond = &mut self.res.conds[c];
        cond.waiters.push(tid, prio);
        cond.mutex_of.insert(tid, m);
        self.threads[tid].wait_on = WaitOn::Cond(c, m);
        Step::Block
    }

    /// `pthread_cond_signal()` / `_broadcast()` from the task running on `cpu`. A woken
    /// waiter reacquires its mutex; with PI it is requeued onto the mutex when the mutex
    /// is held (`FUTEX_CMP_REQUEUE_PI`), so it wakes only when handed the lock.
    fn cond_wake(&mut self, out: &mut Out<'_, '_>, cpu: usize, c: usize, all: bool, now: Nanos) {
        let woken = if all {
            self.res.conds[c].waiters.drain()
        } else {
            self.res.conds[c].waiters.pop().into_iter().collect()
        };
        for w in woken {
            let m = self.res.conds[c].mutex_of.remove(&w).unwrap_or(0);
            if self.w.pi_enabled {
                if self.res.try_lock(m, w) {
                    self.threads[w].retry = Retry::None;
                    self.try_to_wake_up(out, w, now, Some(cpu));
                } else {
                    let prio = self.threads[w].eff_prio;
                    self.res.mutexes[m].waiters.push(w, prio);
                    self.threads[w].wait_on = WaitOn::Mutex(m);
                    if let Some(o) = self.res.mutexes[m].owner {
                        self.pi_adjust(out, o);
                    }
                }
            } else {
                self.threads[w].retry = Retry::Lock(m);
                self.try_to_wake_up(out, w, now, Some(cpu));
            }
        }
    }

    /// `rt_mutex_adjust_prio()` + `rt_mutex_setprio()`: `tid` runs at the best of its
    /// own priority and its top PI waiter's. Returns whether its priority changed.
    /// Deadline boosting is not modelled (a DL waiter boosts to RT priority 0).
    fn pi_adjust(&mut self, out: &mut Out<'_, '_>, tid: usize) -> bool {
        let threads = &self.threads;
        let top = self
            .res
            .top_pi_waiter_prio(tid, |w| threads[w].eff_prio.max(0));
        let t = &self.threads[tid];
        if t.class == Class::Dl {
            return false;
        }
        let new = top.map_or(t.normal_prio, |p| p.min(t.normal_prio));
        if new == t.eff_prio {
            return false;
        }
        self.set_prio(out, tid, new);
        true
    }

    /// Changes a thread's effective priority and, with it, its class (a fair task
    /// boosted below `MAX_RT_PRIO` runs in the RT class), as `rt_mutex_setprio()` does:
    /// dequeue, put_prev, change, enqueue, set_next, then preemption checks.
    fn set_prio(&mut self, out: &mut Out<'_, '_>, tid: usize, prio: i32) {
        let now = self.q.now();
        let old_class = self.threads[tid].class;
        let base = if self.threads[tid].policy.is_fair() {
            Class::Fair
        } else {
            Class::Rt
        };
        let new_class = if prio < rtq::MAX_RT_PRIO {
            Class::Rt
        } else {
            base
        };
        let cpu = self.threads[tid].cpu;
        let queued = self.threads[tid].state == TState::Runnable;
        let running = self.rqs[cpu].curr == Some(tid);
        if !queued {
            self.threads[tid].eff_prio = prio;
            self.threads[tid].class = new_class;
            return;
        }
        self.update_rq_clock(cpu, now);
        self.account_op(cpu, now);
        match old_class {
            Class::Fair => {
                self.update_curr_fair_resched(cpu, now);
                if running {
                    self.update_load_avg(out, cpu, tid, 0, now);
                    let (rq, ents) = (&mut self.rqs[cpu], &self.ents);
                    rq.cfs.put_prev_entity(ents, tid);
                }
                if new_class != Class::Fair {
                    self.dequeue_fair(out, cpu, tid, now, false);
                }
            }
            _ => self.dequeue_task(out, cpu, tid, now, false),
        }
        let deboost = prio > self.threads[tid].eff_prio;
        self.threads[tid].eff_prio = prio;
        self.threads[tid].class = new_class;
        match new_class {
            Class::Fair => {
                if old_class != Class::Fair {
                    self.enqueue_fair(out, cpu, tid, now, false);
                }
                if running {
                    self.update_load_avg(out, cpu, tid, UPDATE_TG, now);
                    let (rq, ents) = (&mut self.rqs[cpu], &mut self.ents);
                    rq.cfs.set_next_entity(ents, tid, now);
                }
            }
            _ => {
                // a deboosted task goes to the head of its new list (ENQUEUE_HEAD)
                self.threads[tid].rt_key = self.rqs[cpu].rt.enqueue(tid, prio, deboost);
                self.threads[tid].state = TState::Runnable;
                self.refresh_view(cpu);
            }
        }
        if running {
            self.set_resched(cpu);
        } else {
            self.wakeup_preempt(cpu, tid);
        }
    }

    /// `sched_setscheduler()` at a phase start (rt-app's `set_thread_param()`): between
    /// the fair policies by nice, into or out of SCHED_FIFO/RR by priority. A switch to
    /// or from SCHED_DEADLINE at a phase is not modelled (it keeps its class).
    fn set_policy(
        &mut self,
        out: &mut Out<'_, '_>,
        tid: usize,
        pol: SchedPolicy,
        prio: Option<i32>,
    ) {
        let t = &self.threads[tid];
        if t.class == Class::Dl || pol == SchedPolicy::Deadline {
            return;
        }
        if pol.is_fair() {
            // __sched_setscheduler(): the policy and static priority, then the weight
            let nice = prio.unwrap_or(t.nice).clamp(-20, 19);
            self.threads[tid].policy = pol;
            self.threads[tid].nice = nice;
            self.threads[tid].normal_prio = 120 + nice;
            self.set_prio(out, tid, 120 + nice);
            let prio = self.threads[tid].eff_prio;
            self.reweight_fair(out, tid, prio);
        } else {
            let p = rtq::rt_prio(prio.unwrap_or(10));
            self.threads[tid].policy = pol;
            self.threads[tid].normal_prio = p;
            self.set_prio(out, tid, p);
        }
    }

    /// `sched_yield()`: `yield_task_fair()` (v6.6+: push the deadline one slice out),
    /// `yield_task_rt()` (tail of its list), `yield_task_dl()` (give up the budget).
    fn sched_yield(&mut self, cpu: usize, tid: usize, now: Nanos) {
        match self.threads[tid].class {
            Class::Fair => {
                if self.rqs[cpu].cfs.nr_running <= 1 {
                    return;
                }
                self.update_curr_fair_resched(cpu, now);
                let e = &mut self.ents[tid];
                e.deadline = e
                    .deadline
                    .wrapping_add(crate::sched::calc_delta_fair(e.slice, &e.load));
            }
            Class::Rt => {
                let (prio, key) = (self.threads[tid].eff_prio, self.threads[tid].rt_key);
                let rt = &mut self.rqs[cpu].rt;
                rt.dequeue(tid, key);
                self.threads[tid].rt_key = rt.enqueue(tid, prio, false);
            }
            Class::Dl => {
                self.update_curr_dl(cpu, tid, now);
                let t = &mut self.threads[tid];
                if !t.dl.throttled {
                    t.dl.runtime = 0;
                    self.update_curr_dl(cpu, tid, now);
                }
            }
        }
    }

    /// rt-app's `fork` event: a new thread of task `ti`, named
    /// `<task>-<index>-<nforks:04>`, started at once from the parent's CPU.
    fn fork(&mut self, out: &mut Out<'_, '_>, cpu: usize, parent: usize, ti: usize, now: Nanos) {
        let n = self.fork_counts_of(parent, ti);
        if n >= program::FORKS_LIMIT {
            let name = self.threads[parent].comm.clone();
            self.fail(format!(
                "thread {name} reached rt-app's fork limit ({}) forking task `{}`",
                program::FORKS_LIMIT,
                self.w.tasks[ti].name
            ));
            return;
        }
        let ind = self.threads.len();
        let comm = format!("{}-{}-{:04}", self.w.tasks[ti].name, ind, n);
        let tid = self.spawn_thread(ti, comm);
        let parent_comm = self.threads[parent].comm.clone();
        self.threads[tid].comm0 = parent_comm.clone();
        if self.threads[tid].renamed {
            // the rename failed: it keeps the parent's comm
            self.threads[tid].comm = parent_comm;
        }
        self.alive += 1;
        self.wake_up_new_task(out, tid, now, Some(cpu));
    }

    fn fork_counts_of(&mut self, parent: usize, ti: usize) -> u32 {
        let c = self.fork_counts.entry((parent, ti)).or_insert(0);
        let n = *c;
        *c += 1;
        n
    }

    /// When no thread can run again (none runnable, none in a timed sleep, no timer
    /// pending), the blocked ones form a deadlock: name them and what they wait for.
    fn check_deadlock(&mut self, now: Nanos) {
        if self.fatal.is_some() || self.alive == 0 || self.deadlock_reported {
            return;
        }
        let mut blocked = Vec::new();
        for t in &self.threads {
            match t.state {
                TState::Dead => {}
                TState::Runnable => return,
                TState::Sleeping => match t.wait_on {
                    WaitOn::Nothing => return,
                    w => blocked.push((t.comm.clone(), w)),
                },
            }
        }
        if blocked.is_empty() {
            return;
        }
        let what = |w: WaitOn| -> String {
            let owner = |m: usize| {
                self.res.mutexes[m].owner.map_or_else(
                    || "free".to_string(),
                    |o| format!("held by {}", self.threads[o].comm),
                )
            };
            match w {
                WaitOn::Mutex(m) => format!("mutex `{}` ({})", self.res.mutexes[m].name, owner(m)),
                WaitOn::Cond(c, _) => format!(
                    "condition `{}` (no thread left to signal it)",
                    self.res.conds[c].name
                ),
                WaitOn::Barrier(b) => {
                    let bar = &self.res.barriers[b];
                    format!(
                        "barrier `{}` ({} of {} participants arrived)",
                        bar.name,
                        bar.waiters.len(),
                        bar.participants
                    )
                }
                WaitOn::Suspend(si) => format!("a resume \"{}\"", self.res.suspends[si].name),
                WaitOn::Sem(si) => format!("semaphore `{}` (value 0)", self.res.sems[si].name),
                WaitOn::Nothing => String::new(),
            }
        };
        let list: Vec<String> = blocked
            .iter()
            .map(|(c, w)| format!("{c} waits for {}", what(*w)))
            .collect();
        let msg = format!(
            "deadlock at {} s: every remaining thread is blocked: {}",
            crate::time::fmt_ftrace_ts(now),
            list.join("; ")
        );
        self.deadlock_reported = true;
        if self.has_duration {
            // rt-app would sit blocked until the duration ends and its shutdown wakes
            // everyone: the run goes on, idle, and the report is a warning
            self.warnings.push(msg);
        } else {
            self.fail(msg);
        }
    }
}
