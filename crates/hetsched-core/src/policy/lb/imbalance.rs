//! How much to move and from where: `calculate_imbalance()`, `sibling_imbalance()`,
//! `sched_balance_find_src_group()` (`find_busiest_group()` before v6.10) and
//! `sched_balance_find_src_rq()` (`find_busiest_queue()`) (kernel/sched/fair.c, v6.11),
//! with the v4.20 `find_busiest_group()`, `calculate_imbalance()`,
//! `fix_small_imbalance()` and `find_busiest_queue()` behind [`LbVersion::V4_20`].

use super::stats::{
    init_sd_lb_stats, update_sd_lb_stats, GroupSums, SdLbOutcome, SdLbStats, SgLbStats,
};
use super::{
    check_cpu_capacity, CpuIdleType, Env, GroupType, LbDecision, LbEnv, LbParams, MigrationType,
    RootDomainState,
};
use crate::platform::SCHED_CAPACITY_SCALE;
use crate::sched::capacity_greater;
use crate::sched::topology::{LbVersion, SchedDomains, SD_ASYM_CPUCAPACITY, SD_SHARE_LLC};

/// `sibling_imbalance(env, sds, busiest, local)`: the number of tasks to move so that
/// `nr_running / cores` is the same in both groups (rounded), or 2 to use an empty group.
pub fn sibling_imbalance(
    dst_idle: bool,
    ncores_busiest: u32,
    ncores_local: u32,
    busiest: &SgLbStats,
    local: &SgLbStats,
) -> i64 {
    if !dst_idle || busiest.sum_nr_running == 0 {
        return 0;
    }
    let (nb, nl) = (i64::from(ncores_busiest), i64::from(ncores_local));
    if nb == nl {
        // lsub_positive
        return (i64::from(busiest.sum_nr_running) - i64::from(local.sum_nr_running)).max(0);
    }
    // Balance such that nr_running/ncores ratio are same on both groups
    let mut imbalance =
        (nl * i64::from(busiest.sum_nr_running) - nb * i64::from(local.sum_nr_running)).max(0);
    // Normalize imbalance and do rounding on normalization
    imbalance = 2 * imbalance + nl + nb;
    imbalance /= nl + nb;
    // Take advantage of resource in an empty sched group
    if imbalance <= 1 && local.sum_nr_running == 0 && busiest.sum_nr_running > 1 {
        imbalance = 2;
    }
    imbalance
}

fn sibling_imb(doms: &SchedDomains, e: &Env, sds: &SdLbStats) -> i64 {
    let sd = &doms.cpus[e.this_cpu][e.level];
    let nb = sds.busiest.map_or(0, |b| sd.groups[b].cores);
    let nl = sd.groups[sds.local].cores;
    sibling_imbalance(e.idle.is_idle(), nb, nl, &sds.busiest_stat, &sds.local_stat)
}

/// `scale_load_down(NICE_0_LOAD)`.
const NICE_0_LOAD_DOWN: u64 = 1024;

/// `fix_small_imbalance(env, sds)` (kernel/sched/fair.c, v4.20): when the computed
/// imbalance is below one busiest task's load, move one task (`busiest->load_per_task`)
/// if that narrows the `avg_load` gap enough or raises the capacity used. `dst_load_per_task`
/// is `cpu_avg_load_per_task(env->dst_cpu)`. Unsigned long arithmetic as in the kernel.
pub fn fix_small_imbalance(
    local: &mut SgLbStats,
    busiest: &SgLbStats,
    dst_load_per_task: u64,
    imbalance: &mut i64,
) {
    let scale = SCHED_CAPACITY_SCALE;
    let mut imbn = 2u64;
    if local.sum_nr_running == 0 {
        local.load_per_task = dst_load_per_task;
    } else if busiest.load_per_task > local.load_per_task {
        imbn = 1;
    }
    let bcap = busiest.group_capacity.max(1);
    let lcap = local.group_capacity.max(1);
    let scaled_busy_load_per_task = busiest.load_per_task * scale / bcap;
    if busiest.avg_load.wrapping_add(scaled_busy_load_per_task)
        >= local
            .avg_load
            .wrapping_add(scaled_busy_load_per_task.wrapping_mul(imbn))
    {
        *imbalance = busiest.load_per_task as i64;
        return;
    }
    // OK, we don't have enough imbalance to justify moving tasks, however we may be able
    // to increase total CPU capacity used by moving them.
    let mut capa_now = bcap.wrapping_mul(busiest.load_per_task.min(busiest.avg_load));
    capa_now = capa_now.wrapping_add(lcap.wrapping_mul(local.load_per_task.min(local.avg_load)));
    capa_now /= scale;
    let mut capa_move = 0u64;
    // Amount of load we'd subtract
    if busiest.avg_load > scaled_busy_load_per_task {
        capa_move = bcap.wrapping_mul(
            busiest
                .load_per_task
                .min(busiest.avg_load - scaled_busy_load_per_task),
        );
    }
    // Amount of load we'd add
    let tmp = if busiest.avg_load.wrapping_mul(bcap) < busiest.load_per_task * scale {
        busiest.avg_load.wrapping_mul(bcap) / lcap
    } else {
        busiest.load_per_task * scale / lcap
    };
    capa_move = capa_move
        .wrapping_add(lcap.wrapping_mul(local.load_per_task.min(local.avg_load.wrapping_add(tmp))));
    capa_move /= scale;
    // Move if we gain throughput
    if capa_move > capa_now {
        *imbalance = busiest.load_per_task as i64;
    }
}

/// `calculate_imbalance(env, sds)` (kernel/sched/fair.c, v4.20): the load to move to
/// bring both groups towards the domain's `avg_load`, not below the busiest group's
/// capacity when both are overloaded (`load_above_capacity`), at least the misfit load
/// for a misfit group, falling back to [`fix_small_imbalance`]. Always `migrate_load`.
pub fn calculate_imbalance_v4_20(sds: &mut SdLbStats, dst_load_per_task: u64, imbalance: &mut i64) {
    let scale = SCHED_CAPACITY_SCALE;
    let busiest = &mut sds.busiest_stat;
    if busiest.group_type == GroupType::Imbalanced {
        // In the group_imb case we cannot rely on group-wide averages.
        busiest.load_per_task = busiest.load_per_task.min(sds.avg_load);
    }
    let busiest = sds.busiest_stat;
    let local = &mut sds.local_stat;
    // Avg load of busiest sg can be less and avg load of local sg can be greater than avg
    // load across all sgs of sd.
    if busiest.group_type != GroupType::MisfitTask
        && (busiest.avg_load <= sds.avg_load || local.avg_load >= sds.avg_load)
    {
        *imbalance = 0;
        fix_small_imbalance(local, &busiest, dst_load_per_task, imbalance);
        return;
    }
    let mut load_above_capacity = u64::MAX;
    // If there aren't any idle CPUs, avoid creating some.
    if busiest.group_type == GroupType::Overloaded && local.group_type == GroupType::Overloaded {
        load_above_capacity = u64::from(busiest.sum_nr_running) * scale;
        if load_above_capacity > busiest.group_capacity {
            load_above_capacity -= busiest.group_capacity;
            load_above_capacity = load_above_capacity.wrapping_mul(NICE_0_LOAD_DOWN);
            load_above_capacity /= busiest.group_capacity.max(1);
        } else {
            load_above_capacity = u64::MAX;
        }
    }
    // The minimum possible imbalance that brings neither group past the average.
    let max_pull = busiest
        .avg_load
        .wrapping_sub(sds.avg_load)
        .min(load_above_capacity);
    let a = max_pull.wrapping_mul(busiest.group_capacity);
    let b = sds
        .avg_load
        .wrapping_sub(local.avg_load)
        .wrapping_mul(local.group_capacity);
    // env->imbalance is a long.
    *imbalance = (a.min(b) / scale) as i64;
    // Boost imbalance to allow misfit task to be balanced.
    if busiest.group_type == GroupType::MisfitTask {
        *imbalance = (*imbalance).max(busiest.group_misfit_task_load as i64);
    }
    // Below one task's load nothing may move: think about bumping it (the long is
    // compared as unsigned long with load_per_task).
    if (*imbalance as u64) < busiest.load_per_task {
        fix_small_imbalance(local, &busiest, dst_load_per_task, imbalance);
    }
}

/// `calculate_imbalance(env, sds)`: sets `e.migration_type` and `e.imbalance`. v4.20:
/// [`calculate_imbalance_v4_20`] with `migrate_load`.
pub(crate) fn calculate_imbalance(
    doms: &SchedDomains,
    p: &LbParams,
    dst_load_per_task: u64,
    e: &mut Env,
    sds: &mut SdLbStats,
) {
    if p.version == LbVersion::V4_20 {
        e.migration_type = MigrationType::Load;
        calculate_imbalance_v4_20(sds, dst_load_per_task, &mut e.imbalance);
        return;
    }
    let sd_flags = doms.cpus[e.this_cpu][e.level].flags;
    let busiest = sds.busiest_stat;
    if busiest.group_type == GroupType::MisfitTask {
        if sd_flags & SD_ASYM_CPUCAPACITY != 0 {
            // Set imbalance to allow misfit tasks to be balanced.
            e.migration_type = MigrationType::Misfit;
            e.imbalance = 1;
        } else {
            // Set load imbalance to allow moving task from cpu with reduced capacity.
            e.migration_type = MigrationType::Load;
            e.imbalance = busiest.group_misfit_task_load as i64;
        }
        return;
    }
    if busiest.group_type == GroupType::AsymPacking {
        e.migration_type = MigrationType::Task;
        e.imbalance = i64::from(busiest.sum_h_nr_running);
        return;
    }
    if matches!(
        busiest.group_type,
        GroupType::SmtBalance | GroupType::Imbalanced
    ) {
        e.migration_type = MigrationType::Task;
        e.imbalance = 1;
        return;
    }
    // Try to use spare capacity of local group without overloading it or emptying busiest.
    if sds.local_stat.group_type == GroupType::HasSpare {
        let local = sds.local_stat;
        if busiest.group_type > GroupType::FullyBusy && sd_flags & SD_SHARE_LLC == 0 {
            // If busiest is overloaded, try to fill spare capacity.
            e.migration_type = MigrationType::Util;
            e.imbalance = (local.group_capacity.max(local.group_util) - local.group_util) as i64;
            // The local CPU is (newly) idle and the busiest group has a waiting task.
            if e.idle.is_idle() && e.imbalance == 0 {
                e.migration_type = MigrationType::Task;
                e.imbalance = 1;
            }
            return;
        }
        let sd = &doms.cpus[e.this_cpu][e.level];
        let busiest_weight = sds.busiest.map_or(0, |b| sd.groups[b].group_weight);
        e.migration_type = MigrationType::Task;
        if busiest_weight == 1 || sds.prefer_sibling {
            // When prefer sibling, evenly spread running tasks on groups.
            e.imbalance = sibling_imb(doms, e, sds);
        } else {
            // If there is no overload, we just want to even the number of idle CPUs.
            e.imbalance = (i64::from(local.idle_cpus) - i64::from(busiest.idle_cpus)).max(0);
        }
        // Number of tasks to move to restore balance
        e.imbalance >>= 1;
        return;
    }
    // Local is fully busy but has to take more load to relieve the busiest group.
    if sds.local_stat.group_type < GroupType::Overloaded {
        let local = &mut sds.local_stat;
        local.avg_load = local.group_load * SCHED_CAPACITY_SCALE / local.group_capacity.max(1);
        if local.avg_load >= busiest.avg_load {
            e.imbalance = 0;
            return;
        }
        sds.avg_load = sds.total_load * SCHED_CAPACITY_SCALE / sds.total_capacity.max(1);
        if sds.local_stat.avg_load >= sds.avg_load {
            e.imbalance = 0;
            return;
        }
    }
    // Both groups are or will become overloaded: move the smaller of the two distances
    // to the domain average (unsigned long arithmetic, as in the kernel).
    let local = sds.local_stat;
    e.migration_type = MigrationType::Load;
    let a = busiest
        .avg_load
        .wrapping_sub(sds.avg_load)
        .wrapping_mul(busiest.group_capacity);
    let b = sds
        .avg_load
        .wrapping_sub(local.avg_load)
        .wrapping_mul(local.group_capacity);
    e.imbalance = (a.min(b) / SCHED_CAPACITY_SCALE) as i64;
}

/// `sched_balance_find_src_group(env)`: the busiest group's index if there is an imbalance
/// worth fixing (with `e.imbalance` set), following the decision matrix of fair.c.
///
/// The misfit check comes before the EAS bail-out (`!is_rd_overutilized && rd->pd`), as in
/// 6.11.11, and the bail-out reads the overutilized flag the stats pass has just set.
///
/// v4.20 (`find_busiest_group()`, no EAS): nothing to pull from an empty busiest group;
/// forced for `group_imbalanced`, for an idle dst whose local group has capacity when
/// the busiest has none, and for `group_misfit_task`; otherwise balanced when the local
/// `avg_load` reaches the busiest's or the domain's, when an idle dst (`CPU_IDLE`) sees
/// a busiest group that is not overloaded with at most one idle CPU fewer than local,
/// or (newly idle or busy dst) when the busiest is within `imbalance_pct` of local.
///
/// `sums` is the pass's buffer for the groups' per-CPU sums ([`LbEnv::sum_groups`]).
#[allow(clippy::too_many_arguments)]
pub(crate) fn sched_balance_find_src_group(
    env: &impl LbEnv,
    doms: &mut SchedDomains,
    rd: &RootDomainState,
    p: &LbParams,
    e: &mut Env,
    jiffies: u64,
    dec: &mut LbDecision,
    sums: &mut Vec<GroupSums>,
) -> Option<usize> {
    let mut sds = init_sd_lb_stats();
    if update_sd_lb_stats(env, doms, rd, p, e, jiffies, dec, &mut sds, sums)
        == SdLbOutcome::Balanced
    {
        // the EAS bail-out below, certain before the groups' statistics
        e.imbalance = 0;
        return None;
    }
    // update_sd_lb_stats() has already called set_rd_overutilized() (v6.11): the EAS
    // bail-out below reads the value this pass wrote.
    let rd = &RootDomainState {
        overutilized: dec.rd_overutilized.unwrap_or(rd.overutilized),
        ..*rd
    };
    let Some(busiest_idx) = sds.busiest else {
        e.imbalance = 0;
        return None;
    };
    let busiest = sds.busiest_stat;
    let imbalance_pct = doms.cpus[e.this_cpu][e.level].imbalance_pct;
    if p.version == LbVersion::V4_20 {
        let local = sds.local_stat;
        sds.avg_load = SCHED_CAPACITY_SCALE * sds.total_load / sds.total_capacity.max(1);
        let force = 'decide: {
            // There is no busy sibling group to pull tasks from
            if busiest.sum_nr_running == 0 {
                break 'decide false;
            }
            if busiest.group_type == GroupType::Imbalanced {
                break 'decide true;
            }
            // When dst_cpu is idle, prevent SMP nice and/or asymmetric group capacities
            // from resulting in underutilization due to avg_load.
            if e.idle.is_idle()
                && super::stats::group_has_capacity_v4_20(imbalance_pct, &local)
                && busiest.group_no_capacity
            {
                break 'decide true;
            }
            // Misfit tasks should be dealt with regardless of the avg load
            if busiest.group_type == GroupType::MisfitTask {
                break 'decide true;
            }
            if local.avg_load >= busiest.avg_load || local.avg_load >= sds.avg_load {
                break 'decide false;
            }
            if e.idle == CpuIdleType::Idle {
                // Balanced unless the difference in idle CPUs is greater than 1.
                if busiest.group_type != GroupType::Overloaded
                    && local.idle_cpus <= busiest.idle_cpus + 1
                {
                    break 'decide false;
                }
            } else if 100 * busiest.avg_load <= imbalance_pct * local.avg_load {
                break 'decide false;
            }
            true
        };
        if !force {
            e.imbalance = 0;
            return None;
        }
        e.src_grp_type = busiest.group_type;
        let dst_load_per_task = env.with_cpu(e.dst_cpu, |d| {
            // cpu_avg_load_per_task()
            if d.h_nr_running == 0 {
                0
            } else {
                d.load / u64::from(d.h_nr_running)
            }
        });
        calculate_imbalance(doms, p, dst_load_per_task, e, &mut sds);
        return (e.imbalance != 0).then_some(busiest_idx);
    }
    let force = 'decide: {
        // Misfit tasks should be dealt with regardless of the avg load
        if busiest.group_type == GroupType::MisfitTask {
            break 'decide true;
        }
        if !rd.is_overutilized() {
            break 'decide false;
        }
        // ASYM feature bypasses nice load balance check; imbalanced groups too.
        if matches!(
            busiest.group_type,
            GroupType::AsymPacking | GroupType::Imbalanced
        ) {
            break 'decide true;
        }
        let local = sds.local_stat;
        // If the local group is busier than the selected busiest group don't pull.
        if local.group_type > busiest.group_type {
            break 'decide false;
        }
        // When groups are overloaded, use the avg_load to ensure fairness between tasks.
        if local.group_type == GroupType::Overloaded {
            if local.avg_load >= busiest.avg_load {
                break 'decide false;
            }
            sds.avg_load = sds.total_load * SCHED_CAPACITY_SCALE / sds.total_capacity.max(1);
            if local.avg_load >= sds.avg_load {
                break 'decide false;
            }
            if 100 * busiest.avg_load <= imbalance_pct * local.avg_load {
                break 'decide false;
            }
        }
        // Try to move all excess tasks to a sibling domain of the busiest group's child.
        if sds.prefer_sibling
            && local.group_type == GroupType::HasSpare
            && sibling_imb(doms, e, &sds) > 1
        {
            break 'decide true;
        }
        if busiest.group_type != GroupType::Overloaded {
            // Busy dst: let another idle CPU pull.
            if !e.idle.is_idle() {
                break 'decide false;
            }
            let busiest_weight = doms.cpus[e.this_cpu][e.level].groups[busiest_idx].group_weight;
            // No imbalance of idle CPUs worth more than one.
            if busiest_weight > 1 && local.idle_cpus <= busiest.idle_cpus + 1 {
                break 'decide false;
            }
            // busiest doesn't have any tasks waiting to run
            if busiest.sum_h_nr_running == 1 {
                break 'decide false;
            }
        }
        true
    };
    if !force {
        e.imbalance = 0;
        return None;
    }
    calculate_imbalance(doms, p, 0, e, &mut sds);
    if e.imbalance != 0 {
        Some(busiest_idx)
    } else {
        None
    }
}

/// `sched_balance_find_src_rq(env, group)`: the busiest runqueue of the busiest group for
/// the migration type (no NUMA classification, no asym packing).
///
/// v4.20 (`find_busiest_queue()`): for a misfit group the runqueue with the biggest
/// `misfit_task_load`; otherwise the largest `weighted_cpuload / capacity_of`, skipping a
/// bigger-capacity CPU with one task (asymmetric domains) and a single task heavier than
/// the imbalance on a CPU without reduced capacity (`rq->nr_running`, all classes).
pub(crate) fn sched_balance_find_src_rq(
    env: &impl LbEnv,
    doms: &SchedDomains,
    p: &LbParams,
    e: &Env,
    group: usize,
) -> Option<usize> {
    let sd = &doms.cpus[e.this_cpu][e.level];
    let span = sd.groups[group].span.and(&e.cpus);
    let dst_cap = env.cpu(e.dst_cpu).cap.capacity;
    let mut busiest = None;
    let (mut busiest_util, mut busiest_load, mut busiest_capacity, mut busiest_nr) =
        (0u64, 0u64, 1u64, 0u32);
    for i in span.iter() {
        let rq = env.cpu(i);
        if p.version == LbVersion::V4_20 {
            // For ASYM_CPUCAPACITY domains with misfit tasks, seek the "biggest" one.
            if e.src_grp_type == GroupType::MisfitTask {
                if rq.misfit_task_load > busiest_load {
                    busiest_load = rq.misfit_task_load;
                    busiest = Some(i);
                }
                continue;
            }
            let capacity = rq.cap.capacity;
            // Don't pick a CPU that could lead to active balancing high->low capacity.
            if sd.flags & SD_ASYM_CPUCAPACITY != 0 && dst_cap < capacity && rq.nr_running == 1 {
                continue;
            }
            let wl = rq.load;
            // imbalance (a long) compared as unsigned long.
            if rq.nr_running == 1
                && wl > e.imbalance as u64
                && !check_cpu_capacity(&rq, sd.imbalance_pct)
            {
                continue;
            }
            // max(wl_i / capacity_i), cross-multiplied.
            if wl * busiest_capacity > busiest_load * capacity {
                busiest_load = wl;
                busiest_capacity = capacity;
                busiest = Some(i);
            }
            continue;
        }
        let nr_running = rq.h_nr_running;
        if nr_running == 0 {
            continue;
        }
        let capacity = rq.cap.capacity;
        // For ASYM_CPUCAPACITY domains, don't pick a CPU that could eventually lead to
        // active balancing high->low capacity.
        if sd.flags & SD_ASYM_CPUCAPACITY != 0
            && !capacity_greater(dst_cap, capacity)
            && nr_running == 1
        {
            continue;
        }
        match e.migration_type {
            MigrationType::Load => {
                let load = rq.load;
                if nr_running == 1
                    && load as i64 > e.imbalance
                    && !check_cpu_capacity(&rq, sd.imbalance_pct)
                {
                    continue;
                }
                // max(load_i / capacity_i), cross-multiplied.
                if load * busiest_capacity > busiest_load * capacity {
                    busiest_load = load;
                    busiest_capacity = capacity;
                    busiest = Some(i);
                }
            }
            MigrationType::Util => {
                // cpu_util_cfs_boost() from v6.5 (runnable boosting, 7d0583cf9ec7; the
                // `v6.6` balancer), cpu_util() before (v5.10)
                let util = if p.version >= LbVersion::V6_6 {
                    rq.util_cfs_boost
                } else {
                    rq.util_cfs
                };
                if nr_running <= 1 {
                    continue;
                }
                if busiest_util < util {
                    busiest_util = util;
                    busiest = Some(i);
                }
            }
            MigrationType::Task => {
                if busiest_nr < nr_running {
                    busiest_nr = nr_running;
                    busiest = Some(i);
                }
            }
            MigrationType::Misfit => {
                // Simply seek the "biggest" misfit task.
                if rq.misfit_task_load > busiest_load {
                    busiest_load = rq.misfit_task_load;
                    busiest = Some(i);
                }
            }
        }
    }
    busiest
}
