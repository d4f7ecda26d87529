//! How much to move and from where: `calculate_imbalance()`, `sibling_imbalance()`,
//! `sched_balance_find_src_group()` (`find_busiest_group()` before v6.10) and
//! `sched_balance_find_src_rq()` (`find_busiest_queue()`) (kernel/sched/fair.c, v6.11).

use super::stats::{update_sd_lb_stats, SdLbStats, SgLbStats};
use super::{
    check_cpu_capacity, Env, GroupType, LbDecision, LbEnv, LbParams, MigrationType, RootDomainState,
};
use crate::platform::SCHED_CAPACITY_SCALE;
use crate::sched::capacity_greater;
use crate::sched::topology::{SchedDomains, SD_ASYM_CPUCAPACITY, SD_SHARE_LLC};

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

/// `calculate_imbalance(env, sds)`: sets `e.migration_type` and `e.imbalance`.
pub(crate) fn calculate_imbalance(doms: &SchedDomains, e: &mut Env, sds: &mut SdLbStats) {
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
/// The misfit check comes before the EAS bail-out (`!is_rd_overutilized && rd->pd`) as
/// in the mainline source read (≈v6.19); older kernels bailed out first.
pub(crate) fn sched_balance_find_src_group(
    env: &impl LbEnv,
    doms: &mut SchedDomains,
    rd: &RootDomainState,
    p: &LbParams,
    e: &mut Env,
    jiffies: u64,
    dec: &mut LbDecision,
) -> Option<usize> {
    let mut sds = update_sd_lb_stats(env, doms, p, e, jiffies, dec);
    let Some(busiest_idx) = sds.busiest else {
        e.imbalance = 0;
        return None;
    };
    let busiest = sds.busiest_stat;
    let imbalance_pct = doms.cpus[e.this_cpu][e.level].imbalance_pct;
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
    calculate_imbalance(doms, e, &mut sds);
    if e.imbalance != 0 {
        Some(busiest_idx)
    } else {
        None
    }
}

/// `sched_balance_find_src_rq(env, group)`: the busiest runqueue of the busiest group for
/// the migration type (no NUMA classification, no asym packing).
pub(crate) fn sched_balance_find_src_rq(
    env: &impl LbEnv,
    doms: &SchedDomains,
    _p: &LbParams,
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
                let util = rq.util_cfs_boost;
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
