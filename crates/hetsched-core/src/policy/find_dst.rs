//! The fork/exec slow path of the fair class: `sched_balance_find_dst_cpu()`,
//! `sched_balance_find_dst_group()` and `sched_balance_find_dst_group_cpu()` (called
//! `find_idlest_cpu()`, `find_idlest_group()`, `find_idlest_group_cpu()` before v6.10), with
//! `update_sg_wakeup_stats()`, `group_classify()` and `update_pick_idlest()`
//! (kernel/sched/fair.c, v6.11; the same code since the v5.5 rework).
//!
//! Simplified: group capacities (`sgc->capacity`, `sgc->max_capacity`) are the current sum
//! and maximum of `capacity_of()` over the group, where the kernel uses the values cached at
//! the last `update_group_capacity()`; `sg_imbalanced()` (set by load balancing when affinity
//! blocked it) is taken as false; no NUMA branch (no `SD_NUMA` on the modelled platforms);
//! no core-scheduling cookies.

use super::domains::{SdTopology, SD_ASYM_CPUCAPACITY};
use super::fair_wake::{effective_flags, FairWakeTask, FairWakeView, WakeCtx};
use crate::options::WakeupVariant;
use crate::platform::SCHED_CAPACITY_SCALE;
use crate::policy::lb::stats::GroupLoad;
use crate::sched::capacity::task_fits_cpu;
use crate::sched::{CpuSet, NICE_0_LOAD};

pub use crate::policy::lb::GroupType;

/// `struct sg_lb_stats` as `update_sg_wakeup_stats()` fills it (p left out).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SgWakeupStats {
    /// `avg_load` (only for fully-busy and overloaded groups; `u32::MAX` for "none yet").
    pub avg_load: u64,
    /// `group_load`: Σ `cpu_load_without()`.
    pub group_load: u64,
    /// `group_util`: Σ `cpu_util_without()`.
    pub group_util: u64,
    /// `group_runnable`: Σ `cpu_runnable_without()`.
    pub group_runnable: u64,
    /// `sum_nr_running` without p.
    pub sum_nr_running: u32,
    /// `sum_h_nr_running` without p.
    pub sum_h_nr_running: u32,
    /// `idle_cpus` (idle once p is gone).
    pub idle_cpus: u32,
    /// `group_weight`.
    pub group_weight: u32,
    /// `group_capacity` (Σ `capacity_of()`).
    pub group_capacity: u64,
    /// `sgc->max_capacity` (max `capacity_of()`).
    pub max_capacity: u64,
    /// `group_misfit_task_load`: 1 in an asymmetric domain when no CPU of the group fits p.
    pub group_misfit_task_load: u64,
    /// The classification.
    pub group_type: GroupType,
}

fn group_load(s: &SgWakeupStats) -> GroupLoad {
    GroupLoad {
        sum_nr_running: s.sum_nr_running,
        group_weight: s.group_weight,
        group_capacity: s.group_capacity,
        group_util: s.group_util,
        group_runnable: s.group_runnable,
    }
}

/// `group_has_capacity(imbalance_pct, sgs)` (v6.11).
pub fn group_has_capacity(imbalance_pct: u64, s: &SgWakeupStats) -> bool {
    group_load(s).has_capacity(imbalance_pct)
}

/// `group_is_overloaded(imbalance_pct, sgs)` (v6.11).
pub fn group_is_overloaded(imbalance_pct: u64, s: &SgWakeupStats) -> bool {
    group_load(s).is_overloaded(imbalance_pct)
}

/// `group_classify()` (v6.11) for the wakeup path: overloaded, else misfit, else fully busy
/// when it has no capacity left, else has spare (imbalanced, asym-packing and SMT-balance
/// are load-balance-only).
pub fn group_classify(imbalance_pct: u64, s: &SgWakeupStats) -> GroupType {
    if group_is_overloaded(imbalance_pct, s) {
        return GroupType::Overloaded;
    }
    if s.group_misfit_task_load != 0 {
        return GroupType::MisfitTask;
    }
    if !group_has_capacity(imbalance_pct, s) {
        return GroupType::FullyBusy;
    }
    GroupType::HasSpare
}

/// `update_sg_wakeup_stats(sd, group, sgs, p)` (v6.11).
pub fn update_sg_wakeup_stats<V: FairWakeView + ?Sized>(
    view: &V,
    group: &CpuSet,
    sd_flags: u32,
    imbalance_pct: u32,
    task: &FairWakeTask,
    uclamp_used: bool,
) -> SgWakeupStats {
    let mut s = SgWakeupStats {
        avg_load: 0,
        group_load: 0,
        group_util: 0,
        group_runnable: 0,
        sum_nr_running: 0,
        sum_h_nr_running: 0,
        idle_cpus: 0,
        group_weight: group.weight() as u32,
        group_capacity: 0,
        max_capacity: 0,
        // Assume that the task can't fit any CPU of the group.
        group_misfit_task_load: u64::from(sd_flags & SD_ASYM_CPUCAPACITY != 0),
        group_type: GroupType::HasSpare,
    };
    for i in group.iter() {
        s.group_load += view.cpu_load_without(i);
        s.group_util += view.cpu_util_without(i);
        s.group_runnable += view.cpu_runnable_without(i);
        let local = u32::from(view.task_running_on_cpu(i));
        s.sum_h_nr_running += view.h_nr_running(i).saturating_sub(local);
        let nr_running = view.nr_running(i).saturating_sub(local);
        s.sum_nr_running += nr_running;
        if nr_running == 0 && view.idle_cpu_without(i) {
            s.idle_cpus += 1;
        }
        let cap = view.capacity(i);
        if sd_flags & SD_ASYM_CPUCAPACITY != 0
            && s.group_misfit_task_load != 0
            && task_fits_cpu(
                task.util_est,
                task.uclamp_min,
                task.uclamp_max,
                &cap,
                uclamp_used,
            )
        {
            s.group_misfit_task_load = 0;
        }
        s.group_capacity += cap.capacity;
        s.max_capacity = s.max_capacity.max(cap.capacity);
    }
    s.group_type = group_classify(u64::from(imbalance_pct), &s);
    if matches!(s.group_type, GroupType::FullyBusy | GroupType::Overloaded) {
        s.avg_load = s.group_load * SCHED_CAPACITY_SCALE / s.group_capacity.max(1);
    }
    s
}

/// `update_pick_idlest(idlest, idlest_sgs, group, sgs)` (v6.11): whether `sgs` is idler.
pub fn update_pick_idlest(idlest: &SgWakeupStats, sgs: &SgWakeupStats) -> bool {
    if sgs.group_type < idlest.group_type {
        return true;
    }
    if sgs.group_type > idlest.group_type {
        return false;
    }
    match sgs.group_type {
        GroupType::Overloaded | GroupType::FullyBusy => idlest.avg_load > sgs.avg_load,
        GroupType::Imbalanced | GroupType::AsymPacking | GroupType::SmtBalance => false,
        GroupType::MisfitTask => idlest.max_capacity < sgs.max_capacity,
        GroupType::HasSpare => {
            if idlest.idle_cpus > sgs.idle_cpus {
                return false;
            }
            !(idlest.idle_cpus == sgs.idle_cpus && idlest.group_util <= sgs.group_util)
        }
    }
}

/// `sched_balance_find_dst_group(sd, p, this_cpu)` (v6.11): the idlest allowed group of the
/// domain, or `None` to stay in the local group. Returns the group's span.
pub fn sched_balance_find_dst_group<V: FairWakeView + ?Sized>(
    view: &V,
    groups: &[CpuSet],
    sd_flags: u32,
    imbalance_pct: u32,
    task: &FairWakeTask,
    this_cpu: usize,
    uclamp_used: bool,
) -> Option<CpuSet> {
    let mut idlest: Option<CpuSet> = None;
    let mut idlest_sgs = SgWakeupStats {
        avg_load: u64::from(u32::MAX),
        group_load: 0,
        group_util: 0,
        group_runnable: 0,
        sum_nr_running: 0,
        sum_h_nr_running: 0,
        idle_cpus: 0,
        group_weight: 0,
        group_capacity: 0,
        max_capacity: 0,
        group_misfit_task_load: 0,
        group_type: GroupType::Overloaded,
    };
    let mut local_sgs = None;
    for g in groups {
        // Skip over this group if it has no CPUs allowed.
        if g.and(task.allowed).is_empty() {
            continue;
        }
        let sgs = update_sg_wakeup_stats(view, g, sd_flags, imbalance_pct, task, uclamp_used);
        if g.contains(this_cpu) {
            local_sgs = Some(sgs);
        } else if update_pick_idlest(&idlest_sgs, &sgs) {
            idlest = Some(*g);
            idlest_sgs = sgs;
        }
    }
    // There is no idlest group to push tasks to.
    let idlest = idlest?;
    // The local group has been skipped because of CPU affinity.
    let Some(local) = local_sgs else {
        return Some(idlest);
    };
    // If the local group is idler than the idlest group, don't push the task.
    if local.group_type < idlest_sgs.group_type {
        return None;
    }
    // If the local group is busier, push the task.
    if local.group_type > idlest_sgs.group_type {
        return Some(idlest);
    }
    match local.group_type {
        GroupType::Overloaded | GroupType::FullyBusy => {
            // Allowed imbalance based on load.
            let imbalance = NICE_0_LOAD * u64::from(imbalance_pct.saturating_sub(100)) / 100;
            // If the local group is less loaded than the idlest group, don't push.
            if idlest_sgs.avg_load >= local.avg_load + imbalance {
                return None;
            }
            if 100 * local.avg_load <= u64::from(imbalance_pct) * idlest_sgs.avg_load {
                return None;
            }
        }
        GroupType::Imbalanced | GroupType::AsymPacking | GroupType::SmtBalance => return None,
        GroupType::MisfitTask => {
            // Select the group with the highest max capacity.
            if local.max_capacity >= idlest_sgs.max_capacity {
                return None;
            }
        }
        GroupType::HasSpare => {
            // Select the group with the highest number of idle CPUs.
            if local.idle_cpus >= idlest_sgs.idle_cpus {
                return None;
            }
        }
    }
    Some(idlest)
}

/// `sched_balance_find_dst_group_cpu(group, p, this_cpu)` (v6.11): a SCHED_IDLE CPU at once;
/// else the idle CPU in the shallowest idle state (most recently idled among equals); else the
/// least-loaded (`cpu_load()`) allowed CPU, `this_cpu` if none is lower than `u64::MAX`.
pub fn sched_balance_find_dst_group_cpu<V: FairWakeView + ?Sized>(
    view: &V,
    group: &CpuSet,
    allowed: &CpuSet,
    this_cpu: usize,
) -> usize {
    // Check if we have any choice.
    if group.weight() == 1 {
        return group.first().unwrap_or(this_cpu);
    }
    let mut min_load = u64::MAX;
    let mut min_exit_latency = u32::MAX;
    let mut latest_idle_timestamp = 0u64;
    let mut least_loaded_cpu = this_cpu;
    let mut shallowest_idle_cpu: Option<usize> = None;
    for i in group.and(allowed).iter() {
        if view.sched_idle_cpu(i) {
            return i;
        }
        if view.available_idle_cpu(i) {
            let idle = view.idle_exit_latency(i);
            let stamp = view.idle_stamp(i);
            match idle {
                Some(lat) if lat < min_exit_latency => {
                    // Priority to the smallest exit latency, whatever the timestamp.
                    min_exit_latency = lat;
                    latest_idle_timestamp = stamp;
                    shallowest_idle_cpu = Some(i);
                }
                _ if (idle.is_none() || idle == Some(min_exit_latency))
                    && stamp > latest_idle_timestamp =>
                {
                    // Equal or no idle state: the most recently idled CPU.
                    latest_idle_timestamp = stamp;
                    shallowest_idle_cpu = Some(i);
                }
                _ => {}
            }
        } else if shallowest_idle_cpu.is_none() {
            let load = view.cpu_load(i);
            if load < min_load {
                min_load = load;
                least_loaded_cpu = i;
            }
        }
    }
    shallowest_idle_cpu.unwrap_or(least_loaded_cpu)
}

/// `sched_balance_find_dst_cpu(sd, p, cpu, prev_cpu, sd_flag)` (v6.11): walk down from `sd`
/// (`level` of `cpu`'s domains) choosing the idlest group and its idlest CPU; when the CPU
/// changes, continue in the new CPU's domains below the current level.
#[allow(clippy::too_many_arguments)] // the kernel's signature plus the inputs it reads
pub fn sched_balance_find_dst_cpu<V: FairWakeView + ?Sized>(
    view: &V,
    topo: &SdTopology,
    variant: WakeupVariant,
    ctx: &WakeCtx,
    task: &FairWakeTask,
    cpu: usize,
    level: usize,
    sd_flag: u32,
) -> usize {
    let mut cpu = cpu;
    let mut new_cpu = cpu;
    let Some(top) = topo.domains(cpu).get(level) else {
        return task.prev_cpu;
    };
    if top.span.and(task.allowed).is_empty() {
        return task.prev_cpu;
    }
    // p's util is synced with prev's rq by the caller unless SD_BALANCE_FORK.
    let mut sd = Some(level);
    while let Some(l) = sd {
        let child = l.checked_sub(1);
        let flags = effective_flags(topo, cpu, l, variant);
        if flags & sd_flag == 0 {
            sd = child;
            continue;
        }
        let d = &topo.domains(cpu)[l];
        let Some(group) = sched_balance_find_dst_group(
            view,
            &d.groups,
            flags,
            d.imbalance_pct,
            task,
            cpu,
            ctx.uclamp_used,
        ) else {
            sd = child;
            continue;
        };
        new_cpu = sched_balance_find_dst_group_cpu(view, &group, task.allowed, cpu);
        if new_cpu == cpu {
            // Now try balancing at a lower domain level of 'cpu'.
            sd = child;
            continue;
        }
        // Now try balancing at a lower domain level of 'new_cpu'.
        cpu = new_cpu;
        let weight = d.span.weight();
        sd = None;
        for (l2, tmp) in topo.domains(cpu).iter().enumerate() {
            if weight <= tmp.span.weight() {
                break;
            }
            if effective_flags(topo, cpu, l2, variant) & sd_flag != 0 {
                sd = Some(l2);
            }
        }
    }
    new_cpu
}
