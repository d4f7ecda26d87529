//! What the fair class's placement reads, shared by the fast path
//! ([`super::select_fair`]) and the slow path ([`super::find_dst`]): the `WF_*` wake flags,
//! the per-CPU view the engine implements ([`FairWakeView`]), the task ([`FairWakeTask`]),
//! the waker's context ([`WakeCtx`]) and the domain flags as a placement variant sees them
//! ([`effective_flags`]). Kept apart so that neither path imports the other's module.

use super::domains::{DomainInfo, SdTopology, SD_ASYM_CPUCAPACITY, SD_BALANCE_WAKE};
use crate::options::WakeupVariant;
use crate::sched::capacity::CpuCapacity;
use crate::sched::CpuSet;

/// `WF_EXEC` (kernel/sched/sched.h, v6.11): wakeup after exec; maps to `SD_BALANCE_EXEC`.
pub const WF_EXEC: u32 = 0x02;
/// `WF_FORK`: wakeup after fork; maps to `SD_BALANCE_FORK`.
pub const WF_FORK: u32 = 0x04;
/// `WF_TTWU`: a wakeup; maps to `SD_BALANCE_WAKE`.
pub const WF_TTWU: u32 = 0x08;
/// `WF_SYNC`: the waker goes to sleep after the wakeup.
pub const WF_SYNC: u32 = 0x10;
/// `WF_MIGRATED`: internal use, the task got migrated.
pub const WF_MIGRATED: u32 = 0x20;
/// `WF_CURRENT_CPU`: prefer to move the wakee to the current CPU.
pub const WF_CURRENT_CPU: u32 = 0x40;

/// Per-CPU facts the fair placement reads. "Without p" values leave out the contribution of
/// the task being placed (the engine builds the view for that task).
pub trait FairWakeView {
    /// `available_idle_cpu(cpu)`: idle (idle task current, nothing queued, no pending
    /// wakeup) and not a preempted vCPU.
    fn available_idle_cpu(&self, cpu: usize) -> bool;
    /// `sched_idle_cpu(cpu)`: only `SCHED_IDLE` tasks are runnable (v5.4+; the engine's
    /// view answers false where `sched.sched_idle_cpu` is off, as for v4.20 and earlier).
    fn sched_idle_cpu(&self, cpu: usize) -> bool;
    /// `rq->nr_running` (all classes).
    fn nr_running(&self, cpu: usize) -> u32;
    /// `rq->cfs.h_nr_running`.
    fn h_nr_running(&self, cpu: usize) -> u32;
    /// `cpu_load(rq)` = `cfs_rq_load_avg(&rq->cfs)`.
    fn cpu_load(&self, cpu: usize) -> u64;
    /// `arch_scale_cpu_capacity()`, `capacity_of()` and the pressures.
    fn capacity(&self, cpu: usize) -> CpuCapacity;
    /// `sd_llc_shared(cpu)->nr_idle_scan` as last written by `update_idle_cpu_scan()`;
    /// `None` when SIS_UTIL is off (scan the whole LLC).
    fn nr_idle_scan(&self, cpu: usize) -> Option<u32>;
    /// `cpu_load_without(rq, p)`.
    fn cpu_load_without(&self, cpu: usize) -> u64;
    /// `cpu_util_without(cpu, p)` (= `cpu_util(cpu, p, -1, 0)`).
    fn cpu_util_without(&self, cpu: usize) -> u64;
    /// `cpu_runnable_without(rq, p)`.
    fn cpu_runnable_without(&self, cpu: usize) -> u64;
    /// `task_running_on_cpu(cpu, p)`: p is queued on this CPU and has PELT history.
    fn task_running_on_cpu(&self, cpu: usize) -> bool;
    /// `idle_cpu_without(cpu, p)`: curr is idle or p, and no wakeup is pending.
    fn idle_cpu_without(&self, cpu: usize) -> bool;
    /// Exit latency of the idle state the CPU is in (`idle_get_state(rq)->exit_latency`),
    /// `None` when not in a cpuidle state.
    fn idle_exit_latency(&self, cpu: usize) -> Option<u32>;
    /// `rq->idle_stamp`: when the CPU went idle (ns; 0 when busy).
    fn idle_stamp(&self, cpu: usize) -> u64;
    /// A superset of the CPUs where [`Self::available_idle_cpu`] or
    /// [`Self::sched_idle_cpu`] may hold: the wake-up scans test only these, in the
    /// kernel's order, so they choose the same CPU. Every CPU by default.
    fn idle_candidates(&self) -> CpuSet {
        CpuSet::first_n(crate::sched::cpuset::MAX_CPUS)
    }
}

/// The task being placed. It borrows p's affinity (`p->cpus_ptr`, as the kernel's pointer)
/// rather than copying its words at every placement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FairWakeTask<'a> {
    /// Task id (for `last_wakee`).
    pub id: usize,
    /// `prev_cpu` (`task_cpu(p)`; the parent's CPU at fork).
    pub prev_cpu: usize,
    /// `p->cpus_ptr`.
    pub allowed: &'a CpuSet,
    /// `task_util_est(p)` after `sync_entity_load_avg()` with prev's rq.
    pub util_est: u64,
    /// `uclamp_eff_value(p, UCLAMP_MIN)`.
    pub uclamp_min: u64,
    /// `uclamp_eff_value(p, UCLAMP_MAX)`.
    pub uclamp_max: u64,
    /// `task_h_load(p)` (= `se.avg.load_avg` without task groups) as p's last PELT update
    /// left it: for a sleeper, its dequeue.
    pub load: u64,
    /// `task_h_load(p)` after `sync_entity_load_avg()` with prev's cfs_rq (the same as
    /// [`Self::load`] when p has no PELT history there).
    pub synced_load: u64,
    /// `p->wakee_flips`.
    pub wakee_flips: u32,
    /// `p->recent_used_cpu`.
    pub recent_used_cpu: usize,
    /// `WF_*` flags of this call.
    pub wake_flags: u32,
}

impl FairWakeTask<'_> {
    /// `task_h_load(p)` as `wake_affine_weight()` reads it (kernel/sched/fair.c, v6.11):
    /// `select_task_rq_fair()` does not sync p before `wake_affine()`, so it is the load
    /// p's last update left ([`Self::load`], from before the sleep) unless something on the
    /// way (`find_energy_efficient_cpu()`, or v5.6's `wake_cap()`) has `synced` p.
    pub fn h_load(&self, synced: bool) -> u64 {
        if synced {
            self.synced_load
        } else {
            self.load
        }
    }
}

/// The waker and the call's context.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WakeCtx {
    /// `smp_processor_id()`: the CPU doing the wakeup (or fork/exec).
    pub this_cpu: usize,
    /// `task_h_load(current)`, used by sync wakeups in `wake_affine_weight()` (and read
    /// nowhere else: the engine leaves it 0 for a placement without `WF_SYNC`).
    pub current_load: u64,
    /// `current->flags & PF_EXITING`.
    pub current_exiting: bool,
    /// `is_per_cpu_kthread(current) && in_task()` (false for wakeups from interrupts).
    pub current_per_cpu_kthread: bool,
    /// `jiffies` now (for `record_wakee()`'s decay).
    pub jiffies: u64,
    /// `HZ`.
    pub hz: u64,
    /// `uclamp_is_used()`.
    pub uclamp_used: bool,
    /// The caller's EAS gate: `sched_energy_enabled() && !is_rd_overutilized()`. When set,
    /// the `feec` closure given to `select_task_rq_fair()` is tried first on wakeups.
    pub try_feec: bool,
    /// The engine's `find_energy_efficient_cpu()`, when tried, gets past its `rd->pd` and
    /// `sd_asym_cpucapacity` checks to `sync_entity_load_avg(&p->se)`, whatever it returns.
    pub feec_syncs: bool,
}

/// The domain flags as the variant sees them: with `wake_cap` (v4.14–v5.6 `sd_init()`),
/// an `SD_ASYM_CPUCAPACITY` domain and every domain below it also had `SD_BALANCE_WAKE`.
pub fn effective_flags(topo: &SdTopology, cpu: usize, level: usize, variant: WakeupVariant) -> u32 {
    effective_flags_in(topo.domains(cpu), level, variant)
}

/// [`effective_flags`] of the `level`-th of `ds`, a CPU's domains
/// ([`SdTopology::domains`]), for a caller that walks them.
#[inline(always)]
pub fn effective_flags_in(ds: &[DomainInfo], level: usize, variant: WakeupVariant) -> u32 {
    let Some(d) = ds.get(level) else { return 0 };
    let mut f = d.flags;
    if variant == WakeupVariant::WakeCap
        && ds[level..]
            .iter()
            .any(|a| a.flags & SD_ASYM_CPUCAPACITY != 0)
    {
        f |= SD_BALANCE_WAKE;
    }
    f
}
