//! Policies: they read a view of the scheduler state and return decisions with reasons;
//! the engine applies and traces them. Built-in policies are enum variants (no dynamic
//! dispatch on hot paths).

pub mod dl;
pub mod domains;
pub mod fair_wake;
pub mod find_dst;
pub mod hmp;
pub mod lb;
pub mod rt;
pub mod select_fair;

use crate::sched::CpuSet;
use serde::{Deserialize, Serialize};

/// Why a task moved to another CPU (counted in the results).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MigrationReason {
    /// Wake-up or fork placement chose another CPU.
    WakeUp,
    /// Periodic load balance (`sched_balance_rq` from the tick softirq).
    Periodic,
    /// Newidle balance (`sched_balance_newidle`).
    Newidle,
    /// Idle balance on behalf of tickless idle CPUs (nohz kick).
    NohzIdle,
    /// Active balance through the stopper.
    Active,
    /// Misfit migration.
    Misfit,
    /// The task's affinity no longer allows its CPU (`set_cpus_allowed_ptr()`).
    Affinity,
    /// The RT class pushed a queued RT task to a CPU running lower-priority work
    /// (`push_rt_task()`).
    RtPush,
    /// The RT class pulled a queued RT task to a CPU about to run lower-priority work
    /// (`pull_rt_task()`).
    RtPull,
    /// The deadline class pushed a queued deadline task to a CPU where it is the earliest
    /// deadline (`push_dl_task()`).
    DlPush,
    /// The deadline class pulled a queued deadline task to a CPU where it is the earliest
    /// deadline (`pull_dl_task()`).
    DlPull,
    /// HMP: a faster CPU pulled the heaviest eligible task of the slower domain
    /// (`hmp_idle_pull()`, after going idle or on `hmp_force_up_migration()`'s request).
    HmpIdlePull,
    /// HMP: a saturated faster domain offloaded a task to an idle slower CPU
    /// (`hmp_offload_down()`).
    HmpOffload,
}

impl MigrationReason {
    /// All reasons, in result order.
    pub const ALL: [MigrationReason; 13] = [
        MigrationReason::WakeUp,
        MigrationReason::Periodic,
        MigrationReason::Newidle,
        MigrationReason::NohzIdle,
        MigrationReason::Active,
        MigrationReason::Misfit,
        MigrationReason::Affinity,
        MigrationReason::RtPush,
        MigrationReason::RtPull,
        MigrationReason::DlPush,
        MigrationReason::DlPull,
        MigrationReason::HmpIdlePull,
        MigrationReason::HmpOffload,
    ];

    /// snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            MigrationReason::WakeUp => "wake_up",
            MigrationReason::Periodic => "periodic",
            MigrationReason::Newidle => "newidle",
            MigrationReason::NohzIdle => "nohz_idle",
            MigrationReason::Active => "active",
            MigrationReason::Misfit => "misfit",
            MigrationReason::Affinity => "affinity",
            MigrationReason::RtPush => "rt_push",
            MigrationReason::RtPull => "rt_pull",
            MigrationReason::DlPush => "dl_push",
            MigrationReason::DlPull => "dl_pull",
            MigrationReason::HmpIdlePull => "hmp_idle_pull",
            MigrationReason::HmpOffload => "hmp_offload",
        }
    }
}

/// Per-CPU facts a policy may read.
#[derive(Debug, Clone, Copy)]
pub struct CpuView {
    /// Nothing runs (the idle task is current and nothing is queued).
    pub idle: bool,
    /// Fair tasks queued or running (`cfs.h_nr_runnable`).
    pub nr_running: u32,
    /// Cluster (LLC) index.
    pub cluster: usize,
    /// `arch_scale_cpu_capacity()`.
    pub capacity: u64,
}

/// A task to move.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Migration {
    /// Task index.
    pub task: usize,
    /// From.
    pub src: usize,
    /// To.
    pub dst: usize,
    /// Why.
    pub reason: MigrationReason,
}

/// Affinity helper: whether `cpu` is allowed.
pub fn allowed(mask: &CpuSet, cpu: usize) -> bool {
    mask.contains(cpu)
}
