//! Group statistics and classification: `update_sg_lb_stats()`, `group_classify()`,
//! `update_sd_pick_busiest()`, `update_sd_lb_stats()` (kernel/sched/fair.c, v6.11; the
//! pre-rework v4.20 rules behind [`LbVersion::V4_20`]).
//!
//! v4.20 has four group types, `group_other` < `group_misfit_task` < `group_imbalanced` <
//! `group_overloaded`; `group_other` is [`GroupType::HasSpare`] here (both are the zero
//! value a fresh `sd_lb_stats` starts the busiest group with), so the ordering tests
//! read the same. Its load is `source_load()`/`target_load()` of the `busy_idx`/
//! `idle_idx` decayed `cpu_load[]` on `weighted_cpuload()` (`runnable_load_avg`); the model
//! has neither: it uses `LbCpu::load` (the root cfs_rq `load_avg`, blocked load included,
//! i.e. load index 0 on the v6 signal).

use super::{
    check_cpu_capacity, CpuIdleType, Env, GroupType, LbCpu, LbEnv, LbParams, RootDomainState,
};
use crate::platform::SCHED_CAPACITY_SCALE;
use crate::sched::topology::{
    LbVersion, SchedDomain, SchedDomains, SchedGroup, SchedGroupCapacity, SD_ASYM_CPUCAPACITY,
    SD_PREFER_SIBLING, SD_SHARE_CPUCAPACITY,
};
use crate::sched::CpuSet;
use crate::sched::{capacity_greater, fits_capacity};

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
    /// v4.20 `sum_weighted_load`: Σ `weighted_cpuload()` (here Σ `LbCpu::load`).
    pub sum_weighted_load: u64,
    /// v4.20 `load_per_task` = `sum_weighted_load / sum_nr_running`.
    pub load_per_task: u64,
    /// v4.20 `group_no_capacity` (`group_is_overloaded()`, or forced by prefer-sibling).
    pub group_no_capacity: bool,
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
    /// `group_has_capacity(env, sgs)` of kernel/sched/fair.c v4.20 (until v5.6): fewer
    /// tasks than CPUs, or utilisation below capacity by `imbalance_pct` (no runnable
    /// test, which v5.7 added).
    pub fn has_capacity_v4_20(&self, imbalance_pct: u64) -> bool {
        if self.sum_nr_running < self.group_weight {
            return true;
        }
        self.group_capacity * 100 > self.group_util * imbalance_pct
    }

    /// `group_is_overloaded(env, sgs)` of kernel/sched/fair.c v4.20: more tasks than CPUs
    /// and utilisation above capacity by `imbalance_pct`.
    pub fn is_overloaded_v4_20(&self, imbalance_pct: u64) -> bool {
        if self.sum_nr_running <= self.group_weight {
            return false;
        }
        self.group_capacity * 100 < self.group_util * imbalance_pct
    }

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

/// `group_has_capacity(env, sgs)` of v4.20 (see [`GroupLoad::has_capacity_v4_20`]).
pub fn group_has_capacity_v4_20(imbalance_pct: u64, sgs: &SgLbStats) -> bool {
    group_load(sgs).has_capacity_v4_20(imbalance_pct)
}

/// `group_is_overloaded(imbalance_pct, sgs)`.
pub fn group_is_overloaded(imbalance_pct: u64, sgs: &SgLbStats) -> bool {
    group_load(sgs).is_overloaded(imbalance_pct)
}

/// `group_classify(group, sgs)` of kernel/sched/fair.c v4.20: `group_overloaded` when
/// `group_no_capacity`, `group_imbalanced`, `group_misfit_task`, else `group_other`
/// ([`GroupType::HasSpare`]).
pub fn group_classify_v4_20(sg_imbalanced: bool, sgs: &SgLbStats) -> GroupType {
    if sgs.group_no_capacity {
        return GroupType::Overloaded;
    }
    if sg_imbalanced {
        return GroupType::Imbalanced;
    }
    if sgs.group_misfit_task_load != 0 {
        return GroupType::MisfitTask;
    }
    GroupType::HasSpare
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

/// What `update_sg_lb_stats()` (kernel/sched/fair.c, v6.11; the v5.5+ rules) gathers from
/// the CPUs of a group before it applies what the balance is (its domain level, whether the
/// group is the local one, `env->idle`, the domain's `SD_ASYM_CPUCAPACITY`): the sums and
/// counts, and the candidates for the two flags and for `group_misfit_task_load`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GroupSums {
    /// Σ `cpu_load`.
    pub group_load: u64,
    /// Σ `cpu_util_cfs`.
    pub group_util: u64,
    /// Σ `cpu_runnable`.
    pub group_runnable: u64,
    /// Σ `rq->nr_running`.
    pub sum_nr_running: u32,
    /// Σ `cfs.h_nr_running`.
    pub sum_h_nr_running: u32,
    /// CPUs with `nr_running == 0` and `idle_cpu()`.
    pub idle_cpus: u32,
    /// Some CPU is `cpu_overutilized()`.
    pub overutilized: bool,
    /// Some CPU has `nr_running > 1` (the root domain's overload indicator).
    pub overloaded: bool,
    /// The largest `rq->misfit_task_load` of the CPUs not counted idle (0 if none).
    pub misfit_load: u64,
    /// The largest `cpu_load` of the CPUs not counted idle whose single CFS task runs on a
    /// reduced capacity (`sched_reduced_capacity()` at the `imbalance_pct` the sums were
    /// gathered with; 0 if none).
    pub reduced_load: u64,
}

impl GroupSums {
    /// One CPU of `update_sg_lb_stats()`'s per-CPU loop (v6.11) with the domain's
    /// `imbalance_pct` (for `sched_reduced_capacity()`).
    #[inline(always)]
    pub fn add_cpu(&mut self, rq: &LbCpu, imbalance_pct: u64) {
        let s = self;
        s.group_load += rq.load;
        s.group_util += rq.util_cfs;
        s.group_runnable += rq.runnable;
        s.sum_h_nr_running += rq.h_nr_running;
        let nr_running = rq.nr_running;
        s.sum_nr_running += nr_running;
        s.overutilized |= rq.overutilized;
        // No need to call idle_cpu() if nr_running is not 0
        if nr_running == 0 && rq.idle {
            s.idle_cpus += 1;
            // Idle cpu can't have misfit task
            return;
        }
        s.overloaded |= nr_running > 1;
        s.misfit_load = s.misfit_load.max(rq.misfit_task_load);
        if rq.h_nr_running == 1 && check_cpu_capacity(rq, imbalance_pct) {
            s.reduced_load = s.reduced_load.max(rq.load);
        }
    }
}

/// The per-CPU loop of `update_sg_lb_stats()` (v6.11) over the CPUs in both `span` and
/// `cpus`, independent of the balance it serves ([`GroupSums`]); `imbalance_pct` is the
/// domain's, for `sched_reduced_capacity()`.
pub fn sum_group_cpus(
    env: &(impl LbEnv + ?Sized),
    span: &CpuSet,
    cpus: &CpuSet,
    imbalance_pct: u64,
) -> GroupSums {
    let mut s = GroupSums::default();
    env.for_each_cpu_and(span, cpus, |rq| s.add_cpu(rq, imbalance_pct));
    s
}

/// `update_sg_lb_stats()` (kernel/sched/fair.c, v6.11): statistics of `group` for the
/// balance `e`, written into `sgs` (cleared first, as the kernel's `memset()`). Sets
/// `sg_overloaded` (root level: a CPU with more than one task, or any misfit) and
/// `sg_overutilized`. With `p.misfit` off, no misfit load is gathered (pre-misfit kernel).
///
/// v4.20 ([`LbVersion::V4_20`]): `sum_nr_running` counts `cfs.h_nr_running`, misfit load
/// is gathered in every group (the local one too) and never from reduced capacity,
/// `avg_load` and `load_per_task` are always computed, `group_no_capacity` =
/// `group_is_overloaded()` and the v4.20 `group_classify()`. (v4.20 has no
/// `overutilized`; the flag is still reported for the engine.)
///
/// `sums` is what the per-CPU loop gathers for `group` when [`update_sd_lb_stats`] ran
/// the loops of all groups first ([`LbEnv::sum_groups`]); `None`: the loop runs here
/// (v6.11: [`LbEnv::group_sums`] or [`sum_group_cpus`]; v4.20 has its own).
///
/// `sd` is `env->sd` (`e`'s domain) and `balancing_at_rd` whether it is the root domain
/// (no parent), which the caller reads once per pass; `sgc` is `group->sgc`, which it
/// reads once per group for this function and [`update_sd_pick_busiest`].
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(crate) fn update_sg_lb_stats(
    env: &impl LbEnv,
    sd: &SchedDomain,
    balancing_at_rd: bool,
    p: &LbParams,
    e: &Env,
    group: &SchedGroup,
    sgc: &SchedGroupCapacity,
    local_group: bool,
    sums: Option<&GroupSums>,
    sgs: &mut SgLbStats,
    sg_overloaded: &mut bool,
    sg_overutilized: &mut bool,
) {
    let legacy = p.version == LbVersion::V4_20;
    *sgs = SgLbStats::default();
    if legacy {
        env.for_each_cpu_and(&group.span, &e.cpus, |rq| {
            sgs.group_load += rq.load;
            sgs.group_util += rq.util_cfs;
            sgs.sum_nr_running += rq.h_nr_running;
            sgs.sum_h_nr_running += rq.h_nr_running;
            if rq.overutilized {
                *sg_overutilized = true;
            }
            // Only read at the root domain (rd->overload).
            if balancing_at_rd && rq.nr_running > 1 {
                *sg_overloaded = true;
            }
            sgs.sum_weighted_load += rq.load;
            if rq.nr_running == 0 && rq.idle {
                sgs.idle_cpus += 1;
            }
            if sd.flags & SD_ASYM_CPUCAPACITY != 0
                && p.misfit
                && sgs.group_misfit_task_load < rq.misfit_task_load
            {
                sgs.group_misfit_task_load = rq.misfit_task_load;
                *sg_overloaded = true;
            }
        });
    } else {
        // The per-CPU loop (`sum_group_cpus()`), or its sums as the engine keeps them for a
        // group none of whose CPUs changed, or as `update_sd_lb_stats()` gathered them for
        // every group first; then what this balance makes of them.
        let sums = match sums {
            Some(s) => *s,
            None => env
                .group_sums(group, &e.cpus, sd.imbalance_pct)
                .unwrap_or_else(|| sum_group_cpus(env, &group.span, &e.cpus, sd.imbalance_pct)),
        };
        sgs.group_load = sums.group_load;
        sgs.group_util = sums.group_util;
        sgs.group_runnable = sums.group_runnable;
        sgs.sum_h_nr_running = sums.sum_h_nr_running;
        sgs.sum_nr_running = sums.sum_nr_running;
        sgs.idle_cpus = sums.idle_cpus;
        if sums.overutilized {
            *sg_overutilized = true;
        }
        // Overload indicator is only updated at root domain
        if balancing_at_rd && sums.overloaded {
            *sg_overloaded = true;
        }
        if !local_group {
            if sd.flags & SD_ASYM_CPUCAPACITY != 0 {
                if p.misfit && sums.misfit_load > 0 {
                    sgs.group_misfit_task_load = sums.misfit_load;
                    *sg_overloaded = true;
                }
            } else if e.idle.is_idle() {
                // sched_reduced_capacity(): a task on a CPU with reduced capacity.
                sgs.group_misfit_task_load = sums.reduced_load;
            }
        }
    }
    if legacy {
        // Adjust by relative CPU capacity of the group
        sgs.group_capacity = sgc.capacity;
        sgs.avg_load = sgs.group_load * SCHED_CAPACITY_SCALE / sgs.group_capacity.max(1);
        if sgs.sum_nr_running != 0 {
            sgs.load_per_task = sgs.sum_weighted_load / u64::from(sgs.sum_nr_running);
        }
        sgs.group_weight = group.group_weight;
        sgs.group_no_capacity = group_load(sgs).is_overloaded_v4_20(sd.imbalance_pct);
        sgs.group_type = group_classify_v4_20(sgc.imbalance, sgs);
        return;
    }
    sgs.group_capacity = sgc.capacity;
    sgs.group_weight = group.group_weight;
    sgs.group_type = group_classify(sd.imbalance_pct, sgc.imbalance, sgs);
    // Computing avg_load makes sense only when group is overloaded
    if sgs.group_type == GroupType::Overloaded {
        sgs.avg_load = sgs.group_load * SCHED_CAPACITY_SCALE / sgs.group_capacity.max(1);
    }
}

/// `update_sd_pick_busiest()`: whether the group whose statistics are `sgs` (and whose
/// `sched_group_capacity` is `sgc`) is busier than the current busiest. Without SMT the
/// `smt_balance` and SMT tie-break branches never apply.
///
/// v4.20: a misfit group is skipped unless the local group has a bigger maximum capacity
/// (`group_smaller_max_cpu_capacity()`, margin 1280/1024) and `group_has_capacity()`;
/// then group type, then `avg_load`; with asymmetric capacity a group with no more tasks
/// than CPUs and a bigger minimum capacity than the local one is not pulled from
/// (`group_smaller_min_cpu_capacity()`), and of two misfit groups the bigger misfit
/// load wins. No asym packing. `dst_cap` is `capacity_of(env->dst_cpu)`, which no group's
/// statistics change: the caller reads it once per pass, as it reads `sd` (`env->sd`);
/// `sgc` is the group's `sg->sgc`, read once per group (see [`update_sg_lb_stats`]).
#[inline(always)]
pub(crate) fn update_sd_pick_busiest(
    doms: &SchedDomains,
    sd: &SchedDomain,
    p: &LbParams,
    sds: &SdLbStats,
    sgc: &SchedGroupCapacity,
    sgs: &SgLbStats,
    dst_cap: u64,
) -> bool {
    let busiest = &sds.busiest_stat;
    if p.version == LbVersion::V4_20 {
        let local_sgc = &doms.sgc[sd.groups[sds.local].sgc];
        // Don't try to pull misfit tasks we can't help.
        if sgs.group_type == GroupType::MisfitTask
            && (!fits_capacity(sgc.max_capacity, local_sgc.max_capacity)
                || !group_load(&sds.local_stat).has_capacity_v4_20(sd.imbalance_pct))
        {
            return false;
        }
        if sgs.group_type > busiest.group_type {
            return true;
        }
        if sgs.group_type < busiest.group_type {
            return false;
        }
        if sgs.avg_load <= busiest.avg_load {
            return false;
        }
        if sd.flags & SD_ASYM_CPUCAPACITY == 0 {
            return true;
        }
        // Candidate sg has no more than one task per CPU and has higher per-CPU capacity.
        if sgs.sum_nr_running <= sgs.group_weight
            && fits_capacity(local_sgc.min_capacity, sgc.min_capacity)
        {
            return false;
        }
        // If we have more than one misfit sg go with the biggest misfit.
        if sgs.group_type == GroupType::MisfitTask
            && sgs.group_misfit_task_load < busiest.group_misfit_task_load
        {
            return false;
        }
        return true;
    }
    // Make sure that there is at least one task to pull
    if sgs.sum_h_nr_running == 0 {
        return false;
    }
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

/// `init_sd_lb_stats(sds)` (kernel/sched/fair.c, v6.11): a fresh `sd_lb_stats`, whose
/// busiest statistics start with `idle_cpus = UINT_MAX` and `group_type = group_has_spare`
/// (the `busiest_stat` every group is compared with).
pub(crate) fn init_sd_lb_stats() -> SdLbStats {
    SdLbStats {
        busiest_stat: SgLbStats {
            idle_cpus: u32::MAX,
            group_type: GroupType::HasSpare,
            ..SgLbStats::default()
        },
        ..SdLbStats::default()
    }
}

/// What [`update_sd_lb_stats`] found before `sched_balance_find_src_group()` reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SdLbOutcome {
    /// `sds` holds every group's statistics and the busiest group.
    Stats,
    /// The domain is balanced whatever the groups' statistics say (see
    /// [`eas_balanced`]): they were not built, `sds` stays as
    /// [`init_sd_lb_stats`] left it, and `sched_balance_find_src_group()` goes to
    /// `out_balanced`.
    Balanced,
}

/// `update_sd_lb_stats()`: statistics of every group of the domain into `sds`, the busiest
/// group, and the root-domain flag updates (written into `dec`). As the kernel, `sds` is
/// the caller's, fresh from [`init_sd_lb_stats`] (`sched_balance_find_src_group()`
/// initialises it once), and each group's statistics are written in place: the local
/// group's into `sds.local_stat`, the others' into one scratch copied to
/// `sds.busiest_stat` when picked.
///
/// v6.11: the per-CPU loops of all groups run first ([`LbEnv::sum_groups`], into `sums`),
/// then each group's `update_sg_lb_stats()` in order. The kernel runs each group's loop
/// inside its `update_sg_lb_stats()`, but a loop reads only the CPUs' state, which no
/// step of this function writes (`update_group_capacity()` comes before either), so the
/// sums are the same. When the sums alone show that `sched_balance_find_src_group()`
/// goes to `out_balanced` whatever the busiest group ([`eas_balanced`]: EAS on, the root
/// domain not overutilised after this pass, no group that could be `group_misfit_task`),
/// the groups' statistics are not built ([`SdLbOutcome::Balanced`]); the root-domain
/// flags and `sum_util` (the only outputs the kernel keeps from them then) are the sums'.
/// Debug builds build them anyway and assert the same flags and `sum_util`, and a
/// busiest group that is not `group_misfit_task`, if any.
#[allow(clippy::too_many_arguments)]
pub(crate) fn update_sd_lb_stats(
    env: &impl LbEnv,
    doms: &mut SchedDomains,
    rd: &RootDomainState,
    p: &LbParams,
    e: &Env,
    jiffies: u64,
    dec: &mut super::LbDecision,
    sds: &mut SdLbStats,
    sums: &mut Vec<GroupSums>,
) -> SdLbOutcome {
    debug_assert_eq!(*sds, init_sd_lb_stats());
    // The local group's capacity is refreshed (newidle: only when due).
    let local_sgc = doms.cpus[e.this_cpu][e.level].groups[0].sgc;
    if e.idle != CpuIdleType::NewlyIdle || jiffies >= doms.sgc[local_sgc].next_update {
        // `msecs_to_jiffies(sd->balance_interval)` clamped to `[1,
        // max_load_balance_interval]` is `get_sd_balance_interval(sd, 0)`, which the domain
        // keeps
        let sd = &mut doms.cpus[e.this_cpu][e.level];
        let interval = super::sd_balance_interval(sd, false, p);
        debug_assert_eq!(
            interval,
            crate::sched::topology::msecs_to_jiffies(sd.balance_interval, p.hz)
                .clamp(1, p.max_load_balance_interval.max(1))
        );
        doms.update_group_capacity(
            e.this_cpu,
            e.level,
            &|c| env.update_cpu_capacity(c),
            jiffies,
            interval,
        );
    }
    let doms_ro: &SchedDomains = doms;
    // `env->sd`, and whether it is the root domain, read once for the pass
    let chain = &doms_ro.cpus[e.this_cpu][..];
    let sd = &chain[e.level];
    let at_rd = e.level + 1 == chain.len();
    let legacy = p.version == LbVersion::V4_20;
    let mut outcome = SdLbOutcome::Stats;
    // `rd->overutilized` as this pass finds it: a pass redone after an all-pinned one
    // (sched_balance_rq()'s `redo`) reads what the first pass's set_rd_overutilized() left
    let rd = &RootDomainState {
        overutilized: dec.rd_overutilized.unwrap_or(rd.overutilized),
        ..*rd
    };
    let flags = if legacy || !eas_may_balance(at_rd, rd) {
        update_sd_groups(env, doms_ro, chain, p, e, sds, None)
    } else {
        env.sum_groups(&sd.groups, &e.cpus, sd.imbalance_pct, sums);
        match eas_balanced(sd, at_rd, rd, p, e, sums) {
            Some(flags) => {
                outcome = SdLbOutcome::Balanced;
                if cfg!(debug_assertions) {
                    let mut full = init_sd_lb_stats();
                    let f = update_sd_groups(env, doms_ro, chain, p, e, &mut full, Some(sums));
                    debug_assert_eq!(f, flags, "the sums' flags differ from the groups'");
                    debug_assert!(
                        full.busiest_stat.group_type != GroupType::MisfitTask,
                        "a misfit busiest group in a domain taken as balanced"
                    );
                }
                flags
            }
            None => update_sd_groups(env, doms_ro, chain, p, e, sds, Some(sums)),
        }
    };
    let SdFlags {
        sg_overloaded,
        sg_overutilized,
        sum_util,
    } = flags;
    if at_rd {
        dec.rd_overloaded = Some(sg_overloaded);
        dec.rd_overutilized = Some(sg_overutilized);
    } else if sg_overutilized {
        dec.rd_overutilized = Some(true);
    }
    if p.sis_util {
        let newidle = e.idle == CpuIdleType::NewlyIdle;
        crate::policy::select_fair::update_llc_idle_cpu_scan(
            doms,
            (e.this_cpu, e.level),
            e.dst_cpu,
            newidle,
            sum_util,
        );
    }
    outcome
}

/// What `update_sd_lb_stats()` keeps of its groups besides `sds`: `sg_overloaded`,
/// `sg_overutilized` and `sum_util`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct SdFlags {
    sg_overloaded: bool,
    sg_overutilized: bool,
    sum_util: u64,
}

/// `update_sd_lb_stats()`'s loop over the domain's groups: each group's
/// `update_sg_lb_stats()` (from its `sums`, v6.11; `None`: v4.20), the busiest group
/// (`update_sd_pick_busiest()`) and the totals, into `sds`.
#[inline(always)]
fn update_sd_groups(
    env: &impl LbEnv,
    doms_ro: &SchedDomains,
    chain: &[SchedDomain],
    p: &LbParams,
    e: &Env,
    sds: &mut SdLbStats,
    sums: Option<&[GroupSums]>,
) -> SdFlags {
    let mut sg_overloaded = false;
    let mut sg_overutilized = false;
    let mut sum_util = 0u64;
    let sd = &chain[e.level];
    let balancing_at_rd = e.level + 1 == chain.len();
    // v4.20 `prefer_sibling`: the child domain (`env->sd->child`) has SD_PREFER_SIBLING.
    let legacy_prefer_sibling = p.version == LbVersion::V4_20
        && e.level > 0
        && chain[e.level - 1].flags & SD_PREFER_SIBLING != 0;
    let dst_cap = env.with_cpu(e.dst_cpu, |d| d.cap.capacity);
    let mut tmp_sgs = SgLbStats::default();
    for (gi, sg) in sd.groups.iter().enumerate() {
        let local_group = sg.span.contains(e.dst_cpu);
        let sums = sums.and_then(|s| s.get(gi));
        let sgc = &doms_ro.sgc[sg.sgc];
        let sgs = if local_group {
            sds.local = gi;
            update_sg_lb_stats(
                env,
                sd,
                balancing_at_rd,
                p,
                e,
                sg,
                sgc,
                true,
                sums,
                &mut sds.local_stat,
                &mut sg_overloaded,
                &mut sg_overutilized,
            );
            &sds.local_stat
        } else {
            let sgs = &mut tmp_sgs;
            update_sg_lb_stats(
                env,
                sd,
                balancing_at_rd,
                p,
                e,
                sg,
                sgc,
                false,
                sums,
                sgs,
                &mut sg_overloaded,
                &mut sg_overutilized,
            );
            // v4.20: when the child domain prefers siblings, lower the capacity of a
            // group with at least two tasks more than a local group that has capacity.
            if legacy_prefer_sibling
                && group_load(&sds.local_stat).has_capacity_v4_20(sd.imbalance_pct)
                && sgs.sum_nr_running > sds.local_stat.sum_nr_running + 1
            {
                sgs.group_no_capacity = true;
                sgs.group_type = group_classify_v4_20(sgc.imbalance, sgs);
            }
            if update_sd_pick_busiest(doms_ro, sd, p, sds, sgc, sgs, dst_cap) {
                sds.busiest = Some(gi);
                sds.busiest_stat = *sgs;
            }
            &tmp_sgs
        };
        sds.total_load += sgs.group_load;
        sds.total_capacity += sgs.group_capacity;
        sum_util += sgs.group_util;
    }
    if let Some(b) = sds.busiest {
        sds.prefer_sibling = sd.groups[b].flags & SD_PREFER_SIBLING != 0;
    }
    SdFlags {
        sg_overloaded,
        sg_overutilized,
        sum_util,
    }
}

/// Whether [`eas_balanced`] may hold, before the sums: EAS is on, and below the root
/// domain `rd->overutilized` is clear (this pass can only set it there).
fn eas_may_balance(at_rd: bool, rd: &RootDomainState) -> bool {
    rd.eas && (!rd.overutilized || at_rd)
}

/// Whether the EAS bail-out of `sched_balance_find_src_group()` (kernel/sched/fair.c,
/// v6.11: `!is_rd_overutilized(rd) && rd->pd` → `out_balanced`, past the
/// `group_misfit_task` test that comes before it) is certain from the domain's per-CPU
/// sums alone (v6.11 rules; `sums` one entry per group), before any group's
/// statistics; then `update_sd_lb_stats()`'s flags and `sum_util`, as its groups would
/// give them.
///
/// Certain when EAS is on (`rd->pd`), `rd->overutilized` stays clear after this pass
/// (at the root domain it becomes `sg_overutilized`; below it is only ever set, so it
/// must be clear already), and no group other than the local one gets a
/// `group_misfit_task_load` (`update_sg_lb_stats()`: a misfit load at an
/// `SD_ASYM_CPUCAPACITY` domain with misfit handling on, else a reduced-capacity load
/// when the balancing CPU is idle). `group_classify()` then gives no group
/// `group_misfit_task`, so whatever `update_sd_pick_busiest()` picks (or nothing), the
/// function goes to `out_balanced` with `env->imbalance = 0`. Without a misfit load,
/// `sg_overloaded` is the root domain's CPUs' `nr_running > 1`.
fn eas_balanced(
    sd: &SchedDomain,
    at_rd: bool,
    rd: &RootDomainState,
    p: &LbParams,
    e: &Env,
    sums: &[GroupSums],
) -> Option<SdFlags> {
    debug_assert!(eas_may_balance(at_rd, rd));
    let asym = sd.flags & SD_ASYM_CPUCAPACITY != 0;
    let mut f = SdFlags::default();
    for (sg, s) in sd.groups.iter().zip(sums) {
        if s.overutilized {
            return None;
        }
        let misfit = if asym {
            p.misfit && s.misfit_load > 0
        } else {
            e.idle.is_idle() && s.reduced_load != 0
        };
        if misfit && !sg.span.contains(e.dst_cpu) {
            return None;
        }
        f.sg_overloaded |= at_rd && s.overloaded;
        f.sum_util += s.group_util;
    }
    Some(f)
}
