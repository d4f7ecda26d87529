//! Group statistics and classification: `update_sg_lb_stats()`, `group_classify()`,
//! `update_sd_pick_busiest()`, `update_sd_lb_stats()` (kernel/sched/fair.c, v6.11).

use super::{check_cpu_capacity, CpuIdleType, Env, GroupType, LbEnv, LbParams};
use crate::platform::SCHED_CAPACITY_SCALE;
use crate::sched::capacity_greater;
use crate::sched::topology::{
    SchedDomains, SchedGroup, SD_ASYM_CPUCAPACITY, SD_PREFER_SIBLING, SD_SHARE_CPUCAPACITY,
};

/// `struct sg_lb_stats`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SgLbStats {
    /// `avg_load` (only computed for overloaded groups, and for local when needed).
    pub avg_load: u64,
    /// Σ `cpu_load`.
    pub group_load: u64,
    /// `sgc->capacity`.
    pub group_capacity: u64,
    /// Σ `cpu_util_cfs`.
    pub group_util: u64,
    /// Σ `cpu_runnable`.
    pub group_runnable: u64,
    /// Σ `rq->nr_running`.
    pub sum_nr_running: u32,
    /// Σ `cfs.h_nr_running`.
    pub sum_h_nr_running: u32,
    /// Idle CPUs.
    pub idle_cpus: u32,
    /// `group_weight`.
    pub group_weight: u32,
    /// Classification.
    pub group_type: GroupType,
    /// Largest misfit load of the group (or reduced-capacity load without asymmetry).
    pub group_misfit_task_load: u64,
}

/// `struct sd_lb_stats` (group references are indices into the domain's groups).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SdLbStats {
    /// Busiest group.
    pub busiest: Option<usize>,
    /// Local group (always 0: the first group contains the balancing CPU).
    pub local: usize,
    /// Σ group loads.
    pub total_load: u64,
    /// Σ group capacities.
    pub total_capacity: u64,
    /// Domain average load (computed on demand).
    pub avg_load: u64,
    /// The busiest group's child domain prefers siblings.
    pub prefer_sibling: bool,
    /// Busiest group statistics.
    pub busiest_stat: SgLbStats,
    /// Local group statistics.
    pub local_stat: SgLbStats,
}

/// The numbers `group_has_capacity()` and `group_is_overloaded()` read, shared by the
/// balancer's `sg_lb_stats` and the wake-up path's statistics.
#[derive(Debug, Clone, Copy)]
pub struct GroupLoad {
    /// `sum_nr_running`.
    pub sum_nr_running: u32,
    /// `group_weight`.
    pub group_weight: u32,
    /// `group_capacity`.
    pub group_capacity: u64,
    /// `group_util`.
    pub group_util: u64,
    /// `group_runnable`.
    pub group_runnable: u64,
}

impl GroupLoad {
    /// `group_has_capacity(imbalance_pct, sgs)` (kernel/sched/fair.c, v6.11).
    pub fn has_capacity(&self, imbalance_pct: u64) -> bool {
        if self.sum_nr_running < self.group_weight {
            return true;
        }
        if self.group_capacity * imbalance_pct < self.group_runnable * 100 {
            return false;
        }
        self.group_capacity * 100 > self.group_util * imbalance_pct
    }

    /// `group_is_overloaded(imbalance_pct, sgs)` (kernel/sched/fair.c, v6.11).
    pub fn is_overloaded(&self, imbalance_pct: u64) -> bool {
        if self.sum_nr_running <= self.group_weight {
            return false;
        }
        if self.group_capacity * 100 < self.group_util * imbalance_pct {
            return true;
        }
        self.group_capacity * imbalance_pct < self.group_runnable * 100
    }
}

fn group_load(sgs: &SgLbStats) -> GroupLoad {
    GroupLoad {
        sum_nr_running: sgs.sum_nr_running,
        group_weight: sgs.group_weight,
        group_capacity: sgs.group_capacity,
        group_util: sgs.group_util,
        group_runnable: sgs.group_runnable,
    }
}

/// `group_has_capacity(imbalance_pct, sgs)`.
pub fn group_has_capacity(imbalance_pct: u64, sgs: &SgLbStats) -> bool {
    group_load(sgs).has_capacity(imbalance_pct)
}

/// `group_is_overloaded(imbalance_pct, sgs)`.
pub fn group_is_overloaded(imbalance_pct: u64, sgs: &SgLbStats) -> bool {
    group_load(sgs).is_overloaded(imbalance_pct)
}

/// `group_classify(imbalance_pct, group, sgs)`; `sg_imbalanced` is `sgc->imbalance`.
/// No asym packing and no SMT balance on these topologies.
pub fn group_classify(imbalance_pct: u64, sg_imbalanced: bool, sgs: &SgLbStats) -> GroupType {
    if group_is_overloaded(imbalance_pct, sgs) {
        return GroupType::Overloaded;
    }
    if sg_imbalanced {
        return GroupType::Imbalanced;
    }
    if sgs.group_misfit_task_load != 0 {
        return GroupType::MisfitTask;
    }
    if !group_has_capacity(imbalance_pct, sgs) {
        return GroupType::FullyBusy;
    }
    GroupType::HasSpare
}

/// `update_sg_lb_stats()`: statistics of `group` for the balance `e`. Sets
/// `sg_overloaded` (root level: a CPU with more than one task, or any misfit) and
/// `sg_overutilized`. With `p.misfit` off, no misfit load is gathered (pre-misfit kernel).
#[allow(clippy::too_many_arguments)]
pub(crate) fn update_sg_lb_stats(
    env: &impl LbEnv,
    doms: &SchedDomains,
    p: &LbParams,
    e: &Env,
    group: &SchedGroup,
    local_group: bool,
    sg_overloaded: &mut bool,
    sg_overutilized: &mut bool,
) -> SgLbStats {
    let chain = &doms.cpus[e.this_cpu];
    let sd = &chain[e.level];
    let balancing_at_rd = e.level + 1 == chain.len();
    let mut sgs = SgLbStats::default();
    for i in group.span.and(&e.cpus).iter() {
        env.with_cpu(i, |rq| {
            sgs.group_load += rq.load;
            sgs.group_util += rq.util_cfs;
            sgs.group_runnable += rq.runnable;
            sgs.sum_h_nr_running += rq.h_nr_running;
            let nr_running = rq.nr_running;
            sgs.sum_nr_running += nr_running;
            if rq.overutilized {
                *sg_overutilized = true;
            }
            // No need to call idle_cpu() if nr_running is not 0
            if nr_running == 0 && rq.idle {
                sgs.idle_cpus += 1;
                // Idle cpu can't have misfit task
                return;
            }
            // Overload indicator is only updated at root domain
            if balancing_at_rd && nr_running > 1 {
                *sg_overloaded = true;
            }
            if local_group {
                return;
            }
            if sd.flags & SD_ASYM_CPUCAPACITY != 0 {
                if p.misfit && sgs.group_misfit_task_load < rq.misfit_task_load {
                    sgs.group_misfit_task_load = rq.misfit_task_load;
                    *sg_overloaded = true;
                }
            } else if e.idle.is_idle()
                && rq.h_nr_running == 1
                && check_cpu_capacity(rq, sd.imbalance_pct)
            {
                // sched_reduced_capacity(): a task on a CPU with reduced capacity.
                if sgs.group_misfit_task_load < rq.load {
                    sgs.group_misfit_task_load = rq.load;
                }
            }
        });
    }
    let sgc = &doms.sgc[group.sgc];
    sgs.group_capacity = sgc.capacity;
    sgs.group_weight = group.group_weight;
    sgs.group_type = group_classify(sd.imbalance_pct, sgc.imbalance, &sgs);
    // Computing avg_load makes sense only when group is overloaded
    if sgs.group_type == GroupType::Overloaded {
        sgs.avg_load = sgs.group_load * SCHED_CAPACITY_SCALE / sgs.group_capacity.max(1);
    }
    sgs
}

/// `update_sd_pick_busiest()`: whether `sg` (with `sgs`) is busier than the current
/// busiest. Without SMT the `smt_balance` and SMT tie-break branches never apply.
pub(crate) fn update_sd_pick_busiest(
    env: &impl LbEnv,
    doms: &SchedDomains,
    e: &Env,
    sds: &SdLbStats,
    sg: &SchedGroup,
    sgs: &SgLbStats,
) -> bool {
    let sd = &doms.cpus[e.this_cpu][e.level];
    let busiest = &sds.busiest_stat;
    let sgc = &doms.sgc[sg.sgc];
    // Make sure that there is at least one task to pull
    if sgs.sum_h_nr_running == 0 {
        return false;
    }
    let dst_cap = env.cpu(e.dst_cpu).cap.capacity;
    // Don't try to pull misfit tasks we can't help.
    if sd.flags & SD_ASYM_CPUCAPACITY != 0
        && sgs.group_type == GroupType::MisfitTask
        && (!capacity_greater(dst_cap, sgc.max_capacity)
            || sds.local_stat.group_type != GroupType::HasSpare)
    {
        return false;
    }
    if sgs.group_type > busiest.group_type {
        return true;
    }
    if sgs.group_type < busiest.group_type {
        return false;
    }
    match sgs.group_type {
        GroupType::Overloaded => return sgs.avg_load > busiest.avg_load,
        GroupType::Imbalanced | GroupType::AsymPacking => return false,
        GroupType::MisfitTask => {
            return sgs.group_misfit_task_load > busiest.group_misfit_task_load
        }
        GroupType::SmtBalance | GroupType::FullyBusy => {
            if sgs.avg_load < busiest.avg_load {
                return false;
            }
            if sgs.avg_load == busiest.avg_load {
                let busiest_smt = sds
                    .busiest
                    .is_some_and(|b| sd.groups[b].flags & SD_SHARE_CPUCAPACITY != 0);
                if busiest_smt {
                    return false;
                }
            }
        }
        GroupType::HasSpare => {
            if sgs.idle_cpus > busiest.idle_cpus
                || (sgs.idle_cpus == busiest.idle_cpus
                    && sgs.sum_nr_running <= busiest.sum_nr_running)
            {
                return false;
            }
        }
    }
    // Candidate sg has no more than one task per CPU and has higher per-CPU capacity.
    if sd.flags & SD_ASYM_CPUCAPACITY != 0
        && sgs.group_type <= GroupType::FullyBusy
        && capacity_greater(sgc.min_capacity, dst_cap)
    {
        return false;
    }
    true
}

/// `update_sd_lb_stats()`: statistics of every group of the domain, the busiest group,
/// and the root-domain flag updates (written into `dec`).
pub(crate) fn update_sd_lb_stats(
    env: &impl LbEnv,
    doms: &mut SchedDomains,
    p: &LbParams,
    e: &Env,
    jiffies: u64,
    dec: &mut super::LbDecision,
) -> SdLbStats {
    let mut sds = SdLbStats {
        busiest_stat: SgLbStats {
            idle_cpus: u32::MAX,
            group_type: GroupType::HasSpare,
            ..SgLbStats::default()
        },
        ..SdLbStats::default()
    };
    // The local group's capacity is refreshed (newidle: only when due).
    let local_sgc = doms.cpus[e.this_cpu][e.level].groups[0].sgc;
    if e.idle != CpuIdleType::NewlyIdle || jiffies >= doms.sgc[local_sgc].next_update {
        doms.update_group_capacity(
            e.this_cpu,
            e.level,
            &|c| env.cpu(c).cap.capacity,
            jiffies,
            p.hz,
            p.max_load_balance_interval,
        );
    }
    let mut sg_overloaded = false;
    let mut sg_overutilized = false;
    let doms_ro: &SchedDomains = doms;
    let sd = &doms_ro.cpus[e.this_cpu][e.level];
    for (gi, sg) in sd.groups.iter().enumerate() {
        let local_group = sg.span.contains(e.dst_cpu);
        let sgs = update_sg_lb_stats(
            env,
            doms_ro,
            p,
            e,
            sg,
            local_group,
            &mut sg_overloaded,
            &mut sg_overutilized,
        );
        if local_group {
            sds.local = gi;
            sds.local_stat = sgs;
        } else if update_sd_pick_busiest(env, doms_ro, e, &sds, sg, &sgs) {
            sds.busiest = Some(gi);
            sds.busiest_stat = sgs;
        }
        sds.total_load += sgs.group_load;
        sds.total_capacity += sgs.group_capacity;
    }
    if let Some(b) = sds.busiest {
        sds.prefer_sibling = sd.groups[b].flags & SD_PREFER_SIBLING != 0;
    }
    if e.level + 1 == doms_ro.cpus[e.this_cpu].len() {
        dec.rd_overloaded = Some(sg_overloaded);
        dec.rd_overutilized = Some(sg_overutilized);
    } else if sg_overutilized {
        dec.rd_overutilized = Some(true);
    }
    sds
}
