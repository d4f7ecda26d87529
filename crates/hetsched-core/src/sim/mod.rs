//! The simulator: one run is a pure function of its [`RunSpec`]: [`run`].
//!
//! This module is the engine's `kernel/sched/sched.h`: the task (`Thread`, the
//! `task_struct` fields the scheduler reads), the runqueue (`Rq`), the whole state of a
//! run (`Sim`), and the run's result. The code is split the way the kernel splits it:
//!
//! - `core/`: `kernel/sched/core.c`: `try_to_wake_up()`, `wake_up_new_task()`,
//!   `__schedule()`, `sched_tick()`, migration and the stopper, and the system calls;
//! - `class/`: the scheduling classes (fair, RT, deadline) behind their hooks;
//! - `load_avg`, `balance`, `energy`: PELT updates, the load balancer, EAS with
//!   overutilized and uclamp, and the cpufreq hooks (`cpufreq_update_util()`);
//! - `user/`: rt-app in user space (its program interpreter and the futex-level
//!   synchronisation), which enters the kernel only through system calls;
//! - `machine`: the hardware and the event loop: CPUs doing work at their frequency, the
//!   tick's timer, the end of the run; `tracepoints`: where events go.
//!
//! The order of operations at each hook follows `kernel/sched/core.c` and
//! `kernel/sched/fair.c` (v6.11): `try_to_wake_up()` → `select_task_rq()` →
//! `migrate_task_rq_fair()` → `enqueue_task_fair()` (util_est, PELT with attach,
//! `place_entity()`) → `wakeup_preempt()`; `sched_tick()` → `update_curr()`, PELT, tick
//! preemption, `sched_balance_trigger()`; `__schedule()` → `dequeue_task_fair()` (PELT,
//! util_est update) → `pick_next_task_fair()` (newidle balance when empty) →
//! `sched_switch`.

mod balance;
mod class;
mod core;
mod cpufreq;
mod dbs_v44;
pub mod energy;
mod hmp;
mod init;
mod interactive;
mod kthread;
mod load_avg;
mod machine;
mod nohz;
mod schedfreq;
mod timer;
mod tracepoints;
pub mod user;
mod validate;

use crate::engine::{EventQueue, Rng};
use crate::metrics::{CpuMetrics, MetricsResults, MetricsSink, TaskMetrics};
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
use class::Class;
use init::dl_entity_of;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use tracepoints::*;
use user::program::{self, Op, Pc, Step, TimerState};
use user::sync::{Kind, Resources, Retry, WaitOn, WaitQueue};
pub use validate::{check_program, overlong_thread_names, thread_comm, validate, COMM_MAX};

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
    /// The run was asked to stop ([`crate::interrupt`]); the signal's number.
    #[error("interrupted by {}", crate::interrupt::signal_name(*.0))]
    Interrupted(i32),
    /// No duration was given and some task never ends.
    #[error("{0}: the workload has no global.duration and task `{1}` loops forever; give a duration (--duration 10s)")]
    NoDuration(String, String),
}

/// Results of a run.
#[derive(Debug, Clone, Serialize, Deserialize)]
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
    /// Per kernel thread (`sugov:N`): they run beside the workload and their CPU time is
    /// in the CPUs' busy time.
    pub kernel_threads: Vec<TaskMetrics>,
    /// rt-app's main thread (pid 1000, comm `rt-app`), which creates the workload's
    /// threads and waits for them (`rtapp.main_thread`); not a workload task. Its CPU
    /// time is in the CPUs' busy time. `null` with `rtapp.main_thread = false`.
    pub main_thread: Option<TaskMetrics>,
    /// Per CPU.
    pub cpus: Vec<CpuMetrics>,
    /// Migrations by reason.
    pub migrations: BTreeMap<String, u64>,
    /// Fair wake-up and fork placements by the reason `select_task_rq_fair()` chose the
    /// CPU (`target_idle`, `idle_capacity_fit`, `slow_path`, …).
    pub placements: BTreeMap<String, u64>,
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
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EngineStats {
    /// Events processed.
    pub events: u64,
    /// Context switches.
    pub context_switches: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ev {
    /// The workload starts: rt-app's main thread runs (or every thread is created, with
    /// `rtapp.main_thread = false`).
    Start,
    /// A thread's sleep or timer expired.
    Wake { tid: u32, gen: u32 },
    /// The current op of a CPU's task completes.
    OpDone { cpu: u32, gen: u32 },
    /// Idle balance on behalf of tickless idle CPUs.
    NohzKick,
    /// A throttled deadline task's replenishment timer (`dl_task_timer()`).
    DlReplenish { tid: u32, gen: u32 },
    /// A blocked deadline task's inactive timer at its 0-lag time (`inactive_task_timer()`).
    DlInactive { tid: u32, gen: u32 },
    /// A slow-path frequency transition of a performance domain completes.
    FreqApply { pd: u32 },
    /// The governor's irq_work of a performance domain's policy, raised on `cpu`: it wakes
    /// the policy's kthread (`sugov_irq_work()` → `kthread_queue_work()`).
    IrqWork { pd: u32, cpu: u32 },
    /// RT_PUSH_IPI: an overloaded CPU is asked to push its RT tasks (`rto_push_irq_work_func()`).
    RtPushIpi { cpu: u32 },
    /// HMP: `hmp_force_up_migration()`'s IPI to an idle faster CPU (`wake_for_idle_pull`),
    /// whose softirq runs `hmp_idle_pull()`.
    HmpIdlePull { cpu: u32 },
    /// The RT bandwidth period timer (`sched_rt_period_timer()`).
    RtPeriod,
    /// A normal (not deferrable) kernel timer of `cpu` expires: a tickless idle CPU wakes
    /// for its softirq (sim/timer.rs).
    TimerIrq { cpu: u32 },
    /// A write to the interactive governor's `boost` or `boostpulse` sysfs file
    /// (`cpufreq.interactive.boost_at_us` / `boostpulse_at_us`, sim/interactive.rs): the
    /// `i`-th of the run's writes.
    InteractiveWrite { i: u32 },
    /// The end of the run.
    End,
}

/// A CPU's time accounting: `get_cpu_idle_time_us()`'s idle sleep time (tick-sched.c) and
/// `kcpustat_cpu(cpu).cpustat[CPUTIME_NICE]`.
#[derive(Debug, Clone, Copy, Default)]
struct CpuStat {
    /// Idle time of finished idle periods (ns).
    idle_sleeptime: Nanos,
    /// The current idle period's start.
    idle_entry: Option<Nanos>,
    /// Run time of tasks with nice > 0, finished stretches (ns).
    nice_time: Nanos,
    /// The running nice task's start.
    nice_entry: Option<Nanos>,
}

/// A `struct balance_callback` (kernel/sched/sched.h, v6.11) a class hook queued under
/// the rq lock (`queue_balance_callback()`), run when the operation ends
/// (`balance_callbacks()`, core/prio.rs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BalanceCallback {
    /// `push_rt_tasks(rq)` of this CPU (`rt_queue_push_tasks()`).
    PushRt(usize),
    /// `pull_rt_task(rq)` of this CPU (`rt_queue_pull_task()`).
    PullRt(usize),
    /// `push_dl_tasks(rq)` of this CPU (`deadline_queue_push_tasks()`).
    PushDl(usize),
    /// `pull_dl_task(rq)` of this CPU (`deadline_queue_pull_task()`).
    PullDl(usize),
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
    /// The comm the tracepoints show for it ([`tracepoints::task_ref`]): the one it has
    /// before renaming itself, the creating thread's (`rt-app` for the main thread); once
    /// `renamed`, `comm` (kept equal: debug builds assert it), so that a task's reference
    /// takes it without testing `renamed`.
    comm0: String,
    policy: SchedPolicy,
    nice: i32,
    /// `p->normal_prio`: 99 - rt_priority for RT, 120 + nice for fair, -1 for DL.
    normal_prio: i32,
    /// `p->prio`: `normal_prio`, or the top PI waiter's when boosted.
    eff_prio: i32,
    class: Class,
    rt_key: (i32, i64),
    /// `p->rt.time_slice`: the SCHED_RR slice left, in jiffies.
    rr_slice: u32,
    dl: DlEntity,
    dl_key: (Nanos, u64),
    dl_gen: u32,
    /// The generation of the inactive timer (`dl_se->inactive_timer`, `Ev::DlInactive`): a
    /// cancel moves it on.
    dl_inactive_gen: u32,
    /// `hrtimer_active(&dl_se->inactive_timer)`: armed and not yet fired or cancelled.
    dl_inactive_active: bool,
    /// Blocked on a resource (counted in `nr_res_blocked`).
    res_blocked: bool,
    affinity: CpuSet,
    /// Moves on at each change of `affinity`: the key of the thread's
    /// `max_allowed_capacity` memo ([`Sim::max_allowed_capacity`]).
    affinity_gen: u32,
    state: TState,
    cpu: usize,
    wake_gen: u32,
    renamed: bool,
    /// `wakee_flips`, `wakee_flip_decay_ts`, `last_wakee` (`record_wakee()`).
    wakee: crate::policy::select_fair::WakeeState,
    /// `p->recent_used_cpu`.
    recent_used_cpu: usize,
    /// ENQUEUE_MIGRATED for its next enqueue: it changed CPU since it was last queued
    /// (`WF_MIGRATED` in `try_to_wake_up()`, `TASK_ON_RQ_MIGRATING` in `activate_task()`).
    enqueue_migrated: bool,
    /// CFS rules: `task_fork_fair()` placed it on its parent's queue, relative to that
    /// queue's `min_vruntime`; its first enqueue renormalises it instead of placing it.
    cfs_fork_placed: bool,
    /// A kernel thread: a CPU's stopper or a policy's `sugov:N`.
    kthread: Option<kthread::KthreadKind>,
    /// The user-defined clamp requests `p->uclamp_req[]` (`None`: not user-defined, the
    /// class's default: `uclamp_min` 1024 for RT, 0 otherwise; `uclamp_max` 1024).
    uclamp_req: [Option<i32>; 2],
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
    /// `rq->max_idle_balance_cost`: the cap of `avg_idle` is twice it (ns).
    max_idle_balance_cost: u64,
    /// The stopper queued on this rq (`rq->stop` when runnable).
    stop: Option<usize>,
    /// `rt_rq->rt_time`: RT run time in the current bandwidth period (ns).
    rt_time: u64,
    /// `rt_rq->rt_runtime` (ns): this CPU's share of the bandwidth, which RT_RUNTIME_SHARE
    /// moves between CPUs; [`RUNTIME_INF`] without a limit.
    rt_runtime: u64,
    /// The value this CPU last gave `cpupri_set()` (kernel `prio`; `MAX_RT_PRIO` for
    /// CPUPRI_HIGHER): the RT class's highest priority at its changes, CPUPRI_HIGHER from a
    /// deadline task's arrival on an rq without one (`inc_dl_deadline()`), the RT value
    /// again when the last deadline task leaves (`dec_dl_deadline()`).
    cpupri: i32,
    /// `rt_rq->rt_throttled`: the RT class is out of runtime until the period timer.
    rt_throttled: bool,
    /// `curr->se.exec_start` of a running RT task (`update_curr_rt()`).
    rt_exec_start: Nanos,
    /// `rq->cpu_capacity` (`capacity_of()`): `scale_rt_capacity()` as the last
    /// `update_cpu_capacity()` computed it, at balance time (kernel/sched/fair.c, v6.11).
    /// A `Cell`: the balancer updates it through its read-only view of the engine.
    cpu_capacity: std::cell::Cell<u64>,
    /// `update_cpu_capacity()` ran since the engine last traced `sched_cpu_capacity`.
    cpu_capacity_updated: std::cell::Cell<bool>,
}

/// `capacity_of()` and friends of an rq: the original capacity, and the capacity left to
/// CFS as the last `update_cpu_capacity()` cached it (`rq->cpu_capacity`; no thermal or
/// cpufreq pressure).
fn rq_capacity(rq: &Rq) -> CpuCapacity {
    CpuCapacity {
        orig: rq.cap,
        capacity: rq.cpu_capacity.get(),
        hw_pressure: 0,
        cpufreq_pressure: 0,
    }
}

/// `scale_rt_capacity(cpu)` (kernel/sched/fair.c, v6.11) of an rq now: the original
/// capacity less RT and DL pressure (no IRQ time), at least 1 (`update_cpu_capacity()`).
fn rq_scale_rt_capacity(rq: &Rq) -> u64 {
    scale_rt_capacity(rq.cap, 0, 0, rq.avg_rt.util_avg, rq.avg_dl.util_avg, 0).max(1)
}

/// Where a timer event's state lives: a slot of the shared timers, or of the thread's
/// `unique*` timers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TimerSlot {
    Shared(u32),
    Unique(u32),
}

const PID_BASE: u32 = crate::metrics::FIRST_USER_PID;
/// The pid of the first kernel thread the engine creates (the stoppers, then `sugov:N`).
const KTHREAD_PID_BASE: u32 = 10;
/// Simulated uptime when the workload starts. The kernel treats a PELT
/// `last_update_time` of 0 as "not attached yet", so no clock may start at 0; traces
/// therefore begin at 1.000000, like a trace taken one second after boot.
pub const BOOT_OFFSET: Nanos = NSEC_PER_SEC;
/// How long before the start every CPU has been idle (`rq->idle_stamp`).
const IDLE_BEFORE_START_NS: Nanos = 1_000_000;
/// `RUNTIME_INF`: no RT bandwidth limit.
const RUNTIME_INF: u64 = u64::MAX;
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
    /// rt-app's per-thread state in user space, by thread id (user/).
    uthreads: Vec<user::UserThread>,
    ents: Vec<SchedEntity>,
    rqs: Vec<Rq>,
    resched: Vec<usize>,
    /// The balance callbacks queued by the operation in progress.
    balance_callbacks: Vec<BalanceCallback>,
    /// HMP placement (`hmp.enabled`, sim/hmp.rs).
    hmp: Option<hmp::HmpState>,
    shared_timers: Vec<TimerState>,
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
    /// The CPUs whose `rq->curr` is the idle task, kept at each context switch: a
    /// superset of the idle CPUs the wake-up scans look for (`available_idle_cpu()`
    /// also needs an empty runqueue).
    idle_curr: CpuSet,
    nr_overloaded: usize,
    /// CPUs whose tick is armed. Ticks fire on a global grid (`sched_skew_tick=0`), so
    /// every armed tick is at the same time, `tick_at`; they run before other events at
    /// that time, in CPU order. Kept out of the event heap: it is most of the events.
    tick_pending: CpuSet,
    tick_at: Nanos,
    /// rt-app's named resources.
    res: Resources,
    /// The workload's programs, laid out for the interpreter (user/flat.rs).
    prog: user::flat::FlatProgram<'w>,
    /// Per task: threads forked from it so far (rt-app's `res.fork.nforks`).
    fork_counts: BTreeMap<(usize, usize), u32>,
    /// Threads blocked on a resource (not in a timed sleep): a deadlock when it equals
    /// the number alive.
    nr_res_blocked: usize,
    /// Scheduling domains (`build_sched_domains()`), with the balancer's per-domain state.
    doms: crate::sched::topology::SchedDomains,
    lb: crate::policy::lb::LoadBalancer,
    /// The balancer's per-CPU values kept across passes, and its per-pass memo
    /// (sim/balance/env.rs).
    lb_scratch: balance::LbScratch,
    /// Per thread: `p->max_allowed_capacity` and `p->nr_cpus_allowed == 1`, with the
    /// `affinity_gen` of the affinity they were computed for (`None`: not computed).
    max_cap_memo: Vec<Option<(u32, u64, bool)>>,
    /// `jiffies` at the time of the event being run (`now / TICK_NSEC`), which
    /// [`Sim::jiffies`] returns: the engine's loop advances it when an event or a tick
    /// reaches `jiffy_end` ([`Sim::set_clock`]).
    jiffy: u64,
    /// The first nanosecond of the jiffy after `jiffy`.
    jiffy_end: Nanos,
    /// Some thread may have `SCHED_IDLE` (`sched_idle_cpu()` is false on every CPU if not).
    idle_policy_possible: bool,
    /// The placement's `sched_feat()`s and variant (`FairWakeParams::from_options()` of
    /// the `[fair]` options, which do not change during a run): built once, not at each
    /// wake-up.
    wake_params: crate::policy::select_fair::FairWakeParams,
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
    /// `def_rt_bandwidth.rt_period_active`: the RT period timer is armed.
    rt_period_active: bool,
    /// The RT period timer's `hrtimer_get_expires()`: its next firing, or where the last
    /// one left it (one period after it) when it went idle; 0 before its first start.
    rt_period_expires: Nanos,
    /// Each CPU's `distribute_cpu_mask_prev` for `find_lowest_rq()`.
    rt_distribute_prev: Vec<usize>,
    /// `rq->misfit_task_load` per CPU.
    misfit: Vec<u64>,
    /// `rq->active_balance` per CPU.
    active_balance: Vec<bool>,
    /// Position of each task in its rq's `cfs_tasks` list (larger = nearer the head).
    cfs_stamp: Vec<u64>,
    stamp_ctr: u64,
    /// `rd->overloaded`.
    rd_overload: bool,
    /// `rd->dl_bw.total_bw`: the admitted SCHED_DEADLINE bandwidth (`BW_SHIFT` units).
    dl_total_bw: u64,
    /// `nohz.next_balance` in jiffies.
    nohz_next_balance_j: u64,
    /// A run-time error that ends the run (deadlock, livelock).
    fatal: Option<String>,
    /// Run-time diagnostics that do not stop a run with a duration.
    warnings: Vec<String>,
    has_duration: bool,
    deadlock_reported: bool,
    /// EAS and uclamp state (sim/energy.rs).
    en: energy::EnergyState,
    /// Per-CPU time accounting the dbs governors and interactive read (`kcpustat`, NOHZ
    /// idle time); kept only with one of them ([`Sim::cpustat_read`]).
    cpustat: Vec<CpuStat>,
    /// Each CPU's pending kernel timers (sim/timer.rs).
    timers: Vec<Vec<timer::KTimer>>,
    /// The cpufreq policies and their governors (sim/cpufreq.rs).
    cpufreq: cpufreq::CpufreqState,
    /// Each CPU's stopper thread `migration/N` (class/stop.rs).
    stoppers: Vec<usize>,
    /// Each CPU's queued stopper work (`cpu_stopper.works`).
    stop_work: Vec<Vec<class::StopWork>>,
    /// rt-app's main thread (user/main.rs), from the start; `None` with
    /// `rtapp.main_thread = false`.
    rtapp_main: Option<user::main::RtappMain>,
    /// rt-app's `threads_barrier`.
    start_barrier: user::main::StartBarrier,
    /// rt-app's `t_zero`: when the thread of index 0 started (`None` before).
    t_zero: Option<Nanos>,
    /// The workload's threads in creation order (rt-app's thread index).
    user_tids: Vec<usize>,
    /// Threads of the system's background tasks (`Workload::system_tasks`).
    nr_system: usize,
    /// rt-app's threads created at the start (the other tasks' instances).
    nr_start_threads: usize,
}

/// Runs one simulation: `run(settings, seed) -> RunResult`, streaming events to `sinks`.
pub fn run(spec: &RunSpec, sinks: &mut [&mut dyn TraceSink]) -> Result<RunResult, RunError> {
    let settings = Settings::resolve(&spec.options, &spec.platform)?;
    validate(&spec.workload, &spec.platform)?;
    // `sched.capacity_aware = false`: the scheduler sees every CPU at 1024
    let blind;
    let spec = if spec.options.sched.capacity_aware {
        spec
    } else {
        blind = RunSpec {
            platform: spec.platform.capacity_blind(),
            ..spec.clone()
        };
        &blind
    };
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
    let any = user_interest
        .iter()
        .fold(MetricsSink::INTEREST, |a, b| a.union(*b));
    let first = user_interest.first().copied().unwrap_or_default();
    let mut out = Out {
        metrics,
        user: sinks,
        user_interest,
        any,
        first,
        held_ue: None,
    };
    sim.run(&mut out);
    if let Some(signal) = crate::interrupt::requested() {
        return Err(RunError::Interrupted(signal));
    }
    if let Some(msg) = sim.fatal.take() {
        return Err(RunError::Runtime(
            w.source.clone().unwrap_or_else(|| w.name.clone()),
            msg,
        ));
    }
    let MetricsResults {
        tasks,
        kernel_threads,
        main_thread,
        cpus,
    } = out.metrics.results();
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
        kernel_threads,
        main_thread,
        cpus,
        migrations: MigrationReason::ALL
            .iter()
            .map(|&r| (r.as_str().to_string(), sim.migrations[r as usize]))
            .collect(),
        // the reasons that occurred, by name
        placements: crate::policy::select_fair::WakeReason::ALL
            .iter()
            .filter(|&&r| sim.placements[r as usize] > 0)
            .map(|&r| (r.as_str().to_string(), sim.placements[r as usize]))
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
