//! The workload model: tasks made of phases made of events, with rt-app's meaning.
//!
//! This is what the rt-app reader (`hetsched-rtapp`) and the built-in generators produce,
//! and what the engine runs. Durations are kept in the units rt-app uses (µs) so that a
//! workload printed back reads like its source; the engine converts to ns.

use serde::{Deserialize, Serialize};

/// A position in a source file (1-based line and column), for diagnostics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Span {
    /// 1-based line.
    pub line: u32,
    /// 1-based column (in characters).
    pub col: u32,
}

/// Scheduling policy (`SCHED_*` in include/uapi/linux/sched.h).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum SchedPolicy {
    /// `SCHED_OTHER` (fair class, EEVDF or CFS).
    #[default]
    #[serde(rename = "SCHED_OTHER")]
    Other,
    /// `SCHED_BATCH` (fair class, never preempts on wake-up).
    #[serde(rename = "SCHED_BATCH")]
    Batch,
    /// `SCHED_IDLE` (fair class, weight 3).
    #[serde(rename = "SCHED_IDLE")]
    Idle,
    /// `SCHED_FIFO` (RT class).
    #[serde(rename = "SCHED_FIFO")]
    Fifo,
    /// `SCHED_RR` (RT class).
    #[serde(rename = "SCHED_RR")]
    Rr,
    /// `SCHED_DEADLINE`.
    #[serde(rename = "SCHED_DEADLINE")]
    Deadline,
}

impl SchedPolicy {
    /// The rt-app / kernel spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            SchedPolicy::Other => "SCHED_OTHER",
            SchedPolicy::Batch => "SCHED_BATCH",
            SchedPolicy::Idle => "SCHED_IDLE",
            SchedPolicy::Fifo => "SCHED_FIFO",
            SchedPolicy::Rr => "SCHED_RR",
            SchedPolicy::Deadline => "SCHED_DEADLINE",
        }
    }

    /// Parses the rt-app spelling (`SCHED_OTHER`, …).
    pub fn parse(s: &str) -> Option<SchedPolicy> {
        Some(match s {
            "SCHED_OTHER" => SchedPolicy::Other,
            "SCHED_BATCH" => SchedPolicy::Batch,
            "SCHED_IDLE" => SchedPolicy::Idle,
            "SCHED_FIFO" => SchedPolicy::Fifo,
            "SCHED_RR" => SchedPolicy::Rr,
            "SCHED_DEADLINE" => SchedPolicy::Deadline,
            _ => return None,
        })
    }

    /// Whether the policy belongs to the fair class.
    pub fn is_fair(self) -> bool {
        matches!(
            self,
            SchedPolicy::Other | SchedPolicy::Batch | SchedPolicy::Idle
        )
    }
}

/// Scheduling attributes settable at task or phase level. A phase applies only those it
/// sets, except `cpus`, which rt-app resets to "all CPUs" for a phase that does not set it
/// when the task or an earlier phase did.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SchedAttrs {
    /// `policy`.
    pub policy: Option<SchedPolicy>,
    /// `priority`: nice for fair policies, RT priority for FIFO/RR.
    pub priority: Option<i32>,
    /// `cpus`: affinity mask as a list of CPU numbers.
    pub cpus: Option<Vec<usize>>,
    /// Where `cpus` was written, to report an impossible affinity precisely.
    pub cpus_span: Option<Span>,
    /// `util_min` (uclamp), −1 = reset.
    pub util_min: Option<i32>,
    /// `util_max` (uclamp), −1 = reset.
    pub util_max: Option<i32>,
    /// `dl-runtime` µs (also the custom fair slice since v6.12).
    pub dl_runtime_us: Option<u64>,
    /// `dl-period` µs.
    pub dl_period_us: Option<u64>,
    /// `dl-deadline` µs.
    pub dl_deadline_us: Option<u64>,
    /// `taskgroup` path.
    pub taskgroup: Option<String>,
}

/// Timer mode (`mode` of the `timer` event).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TimerMode {
    /// On a missed deadline, restart the grid from now (rt-app's default).
    #[default]
    Relative,
    /// Keep the grid: later timers may be missed too.
    Absolute,
}

/// `memrun` access type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MemrunType {
    /// Reads.
    Read,
    /// Writes.
    Write,
    /// Pointer chasing.
    Chase,
}

/// One event of a phase, in rt-app's meaning.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Event {
    /// `run`: a fixed amount of work: what `us` µs of the calibrated loop takes on the
    /// calibration reference. Wall time scales with capacity × frequency.
    Run {
        /// µs on the calibration reference.
        us: u64,
    },
    /// `runtime`: busy for `us` µs of wall time, whatever the CPU.
    Runtime {
        /// µs of wall time.
        us: u64,
    },
    /// `sleep`: relative sleep.
    Sleep {
        /// µs.
        us: u64,
    },
    /// `timer`: periodic absolute wake-up.
    Timer {
        /// Timer name; names starting with `unique` are per thread.
        name: String,
        /// Period in µs.
        period_us: u64,
        /// Relative or absolute.
        mode: TimerMode,
    },
    /// `lock` a mutex.
    Lock {
        /// Mutex name.
        mutex: String,
    },
    /// `unlock` a mutex.
    Unlock {
        /// Mutex name.
        mutex: String,
    },
    /// `wait` on a condition (releases the mutex while waiting).
    Wait {
        /// Condition name.
        cond: String,
        /// Mutex name.
        mutex: String,
    },
    /// `signal` a condition (one waiter).
    Signal {
        /// Condition name.
        cond: String,
    },
    /// `broad`: broadcast a condition (all waiters).
    Broad {
        /// Condition name.
        cond: String,
    },
    /// `sync`: lock, signal, wait, unlock.
    Sync {
        /// Condition name.
        cond: String,
        /// Mutex name.
        mutex: String,
    },
    /// `barrier`: wait until every participant has reached it.
    Barrier {
        /// Barrier name.
        name: String,
    },
    /// `suspend`: wait on the condition named `name` until a `resume` of that name.
    /// rt-app names it by the string (normally the suspending task's own name).
    Suspend {
        /// The name `resume` events refer to.
        name: String,
    },
    /// `resume`: broadcast the suspend condition `name` (every thread suspended on it
    /// wakes; nobody suspended, nothing happens).
    Resume {
        /// The suspend name.
        name: String,
    },
    /// `sem_post`.
    SemPost {
        /// Semaphore name.
        sem: String,
    },
    /// `sem_wait`.
    SemWait {
        /// Semaphore name.
        sem: String,
    },
    /// `yield` (`sched_yield()`).
    Yield,
    /// `fork` a new thread of the named task.
    Fork {
        /// Task name.
        task: String,
    },
    /// `mem`: touch `bytes` of the thread's buffer; modelled as documented CPU work.
    Mem {
        /// Bytes.
        bytes: u64,
    },
    /// `iorun`: write `bytes` to the io device; modelled as documented CPU work.
    Iorun {
        /// Bytes.
        bytes: u64,
    },
    /// `memrun`: memory access pattern; modelled as documented CPU work.
    Memrun {
        /// Access type.
        kind: MemrunType,
        /// Bytes.
        size: u64,
        /// Number of passes.
        count: u64,
    },
}

impl Event {
    /// rt-app's event type id (`enum resource_t` in src/rt-app_types.h), as printed in
    /// `rtapp_event: type=`.
    pub fn rtapp_type_id(&self) -> u32 {
        // enum resource_t: unknown 0, mutex 1, wait 2, signal 3, broadcast 4, sleep 5,
        // run 6, sig_and_wait 7, lock 8, unlock 9, timer 10, timer_unique 11, suspend 12,
        // resume 13, mem 14, iorun 15, runtime 16, yield 17, barrier 18, fork 19.
        // sem_post, sem_wait and memrun are newer than every rt-app copy read; they take
        // the next ids.
        match self {
            Event::Wait { .. } => 2,
            Event::Signal { .. } => 3,
            Event::Broad { .. } => 4,
            Event::Sleep { .. } => 5,
            Event::Run { .. } => 6,
            Event::Sync { .. } => 7,
            Event::Lock { .. } => 8,
            Event::Unlock { .. } => 9,
            Event::Timer { name, .. } if name.starts_with("unique") => 11,
            Event::Timer { .. } => 10,
            Event::Suspend { .. } => 12,
            Event::Resume { .. } => 13,
            Event::Mem { .. } => 14,
            Event::Iorun { .. } => 15,
            Event::Runtime { .. } => 16,
            Event::Yield => 17,
            Event::Barrier { .. } => 18,
            Event::Fork { .. } => 19,
            Event::SemPost { .. } => 20,
            Event::SemWait { .. } => 21,
            Event::Memrun { .. } => 22,
        }
    }

    /// rt-app's key for this event kind.
    pub fn key(&self) -> &'static str {
        match self {
            Event::Run { .. } => "run",
            Event::Runtime { .. } => "runtime",
            Event::Sleep { .. } => "sleep",
            Event::Timer { .. } => "timer",
            Event::Lock { .. } => "lock",
            Event::Unlock { .. } => "unlock",
            Event::Wait { .. } => "wait",
            Event::Signal { .. } => "signal",
            Event::Broad { .. } => "broad",
            Event::Sync { .. } => "sync",
            Event::Barrier { .. } => "barrier",
            Event::Suspend { .. } => "suspend",
            Event::Resume { .. } => "resume",
            Event::SemPost { .. } => "sem_post",
            Event::SemWait { .. } => "sem_wait",
            Event::Yield => "yield",
            Event::Fork { .. } => "fork",
            Event::Mem { .. } => "mem",
            Event::Iorun { .. } => "iorun",
            Event::Memrun { .. } => "memrun",
        }
    }
}

/// An event with the place it was written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EventSpec {
    /// The event.
    pub event: Event,
    /// The key as written (`run0`, `sleep-1`).
    pub key: String,
    /// Where it was written.
    pub span: Span,
}

/// One phase: events run `loop_count` times, with optional attribute changes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Phase {
    /// Phase name (the key in `phases`, or `phase0` for a task without phases).
    pub name: String,
    /// Number of iterations of the phase (≥ 1; rt-app's default is 1).
    pub loop_count: u64,
    /// Attributes applied when the phase starts.
    pub attrs: SchedAttrs,
    /// Events in JSON order.
    pub events: Vec<EventSpec>,
}

/// One task (a `tasks` entry): `instances` threads each running the phases.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskSpec {
    /// Task name (the key in `tasks`). Threads are named `<name>-<index>`.
    pub name: String,
    /// Number of threads (`instance`, default 1; 0 = none started, only forkable).
    pub instances: u32,
    /// How many times the phase list runs; −1 = forever (until the workload duration).
    pub loop_count: i64,
    /// Initial delay in µs, from the common start.
    pub delay_us: u64,
    /// Task-level attributes.
    pub attrs: SchedAttrs,
    /// Phases, in order.
    pub phases: Vec<Phase>,
    /// Where the task was written.
    pub span: Span,
}

/// How `run` durations translate into work (`global.calibration`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Calibration {
    /// `"CPUn"`: `run` N µs is what N µs takes on CPU n at its maximum frequency.
    Cpu(usize),
    /// Integer pLoad (ns per loop): the reference is the biggest CPU at its maximum frequency.
    PLoadNs(u64),
}

impl Default for Calibration {
    fn default() -> Self {
        Calibration::Cpu(0)
    }
}

/// rt-app ftrace marker categories (`global.ftrace`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct FtraceCategories {
    /// `main`: rtapp_main.
    pub main: bool,
    /// `task`: rtapp_task.
    pub task: bool,
    /// `loop`: rtapp_loop.
    pub loop_: bool,
    /// `event`: rtapp_event.
    pub event: bool,
    /// `stats`: rtapp_stats.
    pub stats: bool,
}

impl FtraceCategories {
    /// All categories on.
    pub const ALL: FtraceCategories = FtraceCategories {
        main: true,
        task: true,
        loop_: true,
        event: true,
        stats: true,
    };

    /// Whether any category is on.
    pub fn any(&self) -> bool {
        self.main || self.task || self.loop_ || self.event || self.stats
    }
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// A whole workload: the `global` section and the tasks.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Workload {
    /// Name (file stem or generator name).
    pub name: String,
    /// Source file, when read from one.
    pub source: Option<String>,
    /// `global.duration` in seconds; `None` = until every task ends.
    pub duration_s: Option<u64>,
    /// `global.calibration`.
    pub calibration: Calibration,
    /// Where `global.calibration`'s value was written, when read from a file (for the
    /// error naming a CPU the platform lacks; not serialised).
    #[serde(skip)]
    pub calibration_span: Option<Span>,
    /// `global.default_policy`.
    pub default_policy: SchedPolicy,
    /// `global.pi_enabled`.
    pub pi_enabled: bool,
    /// `global.cumulative_slack`.
    pub cumulative_slack: bool,
    /// `global.ftrace`.
    pub ftrace: FtraceCategories,
    /// Tasks, in JSON order.
    pub tasks: Vec<TaskSpec>,
    /// How many of the last [`Workload::tasks`] are the system's background activity
    /// rather than rt-app's threads (the noise model's, crate::noise): they exist before
    /// rt-app starts and are not created, counted or joined by its main thread.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub system_tasks: usize,
    /// Warnings from reading (ignored keys, legacy sections).
    pub warnings: Vec<String>,
}

impl Workload {
    /// Index of the first of the system's background tasks in [`Workload::tasks`]
    /// (`tasks.len()` when there are none): the tasks before it are rt-app's.
    pub fn first_system_task(&self) -> usize {
        self.tasks.len() - self.system_tasks.min(self.tasks.len())
    }
}
