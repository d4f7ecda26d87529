//! Choosing the tasks to move: `task_hot()`, `can_migrate_task()`, `detach_tasks()`,
//! `detach_one_task()` and `active_load_balance_cpu_stop()` (kernel/sched/fair.c, v6.11;
//! the v5.9 `migrate_load` test behind [`LbVersion::V5_9`]).

use super::{
    CpuIdleType, Env, LbEnv, LbParams, LbTask, LoadBalancer, MigrationType, LBF_ACTIVE_LB,
    LBF_ALL_PINNED, LBF_DST_PINNED, LBF_NEED_BREAK, LBF_SOME_PINNED, SCHED_NR_MIGRATE_BREAK,
};
use crate::policy::{Migration, MigrationReason};
use crate::sched::capacity::task_fits_cpu;
use crate::sched::topology::{LbVersion, SchedDomains, SD_SHARE_CPUCAPACITY};

/// `shr_bound(val, shift)`: `val >> min(shift, 63)`.
pub fn shr_bound(val: u64, shift: u32) -> u64 {
    val >> shift.min(63)
}

/// `task_hot(p, env)`: whether `p` is likely cache hot on its CPU: never in SMT domains or
/// for SCHED_IDLE tasks; the next buddy is hot when the destination has tasks; otherwise
/// hot when it ran less than `sysctl_sched_migration_cost` ago (`rq_clock_task` −
/// `exec_start`).
pub(crate) fn task_hot(
    t: &LbTask,
    sd_flags: u32,
    src_clock_task: u64,
    dst_nr_running: u32,
    p: &LbParams,
) -> bool {
    if t.idle_policy {
        return false;
    }
    // SMT siblings share cache
    if sd_flags & SD_SHARE_CPUCAPACITY != 0 {
        return false;
    }
    // Buddy candidates are cache hot
    if p.cache_hot_buddy && dst_nr_running > 0 && t.next_buddy {
        return true;
    }
    if p.migration_cost == 0 {
        return false;
    }
    let delta = src_clock_task as i64 - t.exec_start as i64;
    delta < p.migration_cost as i64
}

/// `can_migrate_task(p, env)`: affinity (records `LBF_SOME_PINNED` and an alternative
/// `new_dst_cpu` with `LBF_DST_PINNED`), not running, and cold or after more than
/// `cache_nice_tries` failures. Active balance (`LBF_ACTIVE_LB`) skips the hotness test.
/// No throttling, per-CPU kthreads or NUMA locality in the model.
pub(crate) fn can_migrate_task(
    t: &LbTask,
    env: &impl LbEnv,
    doms: &SchedDomains,
    p: &LbParams,
    e: &mut Env,
) -> bool {
    // Delayed-dequeue tasks only move with their load (v6.12+; never set on v6.11).
    if t.sched_delayed && e.migration_type != MigrationType::Load {
        return false;
    }
    if !t.cpus_allowed.contains(e.dst_cpu) {
        e.flags |= LBF_SOME_PINNED;
        // Avoid computing new_dst_cpu for NEWLY_IDLE, if one was already computed in the
        // current iteration, or for an active balance.
        if e.idle == CpuIdleType::NewlyIdle || e.flags & (LBF_DST_PINNED | LBF_ACTIVE_LB) != 0 {
            return false;
        }
        // Prevent to re-select dst_cpu via env's CPUs.
        if let Some(cpu) = e.dst_grpmask.and(&e.cpus).and(&t.cpus_allowed).first() {
            e.flags |= LBF_DST_PINNED;
            e.new_dst_cpu = cpu;
        }
        return false;
    }
    // Record that we found at least one task that could run on dst_cpu
    e.flags &= !LBF_ALL_PINNED;
    if t.running {
        return false;
    }
    if e.flags & LBF_ACTIVE_LB != 0 {
        return true;
    }
    let sd = &doms.cpus[e.this_cpu][e.level];
    let hot = task_hot(
        t,
        sd.flags,
        env.cpu(e.src_cpu).clock_task,
        env.cpu(e.dst_cpu).nr_running,
        p,
    );
    !hot || sd.nr_balance_failed > sd.cache_nice_tries
}

/// `detach_tasks(env)`: walks the busiest runqueue's `cfs_tasks` from the tail, at most
/// `loop_max` tasks, detaching until the imbalance is used up. Per migration type:
/// load — skip below 16 with `LB_MIN`, skip if `load/2 > imbalance` (v5.9) or
/// `shr_bound(load, nr_balance_failed) > imbalance` (v5.10+); util — `util_est` with the
/// same relaxation (plain `util > imbalance` in v5.9); task — one each; misfit — the
/// first task that does not fit the source CPU, then stop. Skipped tasks go to the head
/// of the list. Returns the number detached; moves are appended to the balancer's list.
pub(crate) fn detach_tasks(
    lb: &mut LoadBalancer,
    env: &impl LbEnv,
    doms: &SchedDomains,
    p: &LbParams,
    e: &mut Env,
    src_nr_running: &mut u32,
    reason: MigrationReason,
) -> usize {
    // Source run queue has been emptied by another CPU.
    if *src_nr_running <= 1 {
        e.flags &= !LBF_ALL_PINNED;
        return 0;
    }
    if e.imbalance <= 0 {
        return 0;
    }
    let nr_balance_failed = doms.cpus[e.this_cpu][e.level].nr_balance_failed;
    let cache_nice_tries = doms.cpus[e.this_cpu][e.level].cache_nice_tries;
    let src = env.cpu(e.src_cpu);
    let mut detached = 0;
    while let Some(t) = lb.list.front().copied() {
        // We don't want to steal all, otherwise we may be treated likewise.
        if e.idle.is_idle() && *src_nr_running <= 1 {
            break;
        }
        e.loop_ += 1;
        // We've more or less seen every task there is, call it quits
        if e.loop_ > e.loop_max {
            break;
        }
        // take a breather every nr_migrate tasks
        if e.loop_ > e.loop_break {
            e.loop_break += SCHED_NR_MIGRATE_BREAK;
            e.flags |= LBF_NEED_BREAK;
            break;
        }
        let ok = can_migrate_task(&t, env, doms, p, e) && {
            match e.migration_type {
                MigrationType::Load => {
                    let load = t.h_load.max(1);
                    if p.lb_min && load < 16 && nr_balance_failed == 0 {
                        false
                    } else {
                        // v4.20: `load / 2 > imbalance`; v5.5–v5.9 waive it once the
                        // domain has failed more than `cache_nice_tries` times; v5.10+:
                        // `(load >> nr_balance_failed) > imbalance` (`shr_bound()` v6.8)
                        let (eff, waived) = match p.version {
                            LbVersion::V4_20 => (load / 2, false),
                            LbVersion::V5_9 => (load / 2, nr_balance_failed > cache_nice_tries),
                            _ => (shr_bound(load, nr_balance_failed), false),
                        };
                        if !waived && eff as i64 > e.imbalance {
                            false
                        } else {
                            e.imbalance -= load as i64;
                            true
                        }
                    }
                }
                MigrationType::Util => {
                    let util = t.util_est;
                    // `util > imbalance` until v6.8 added `shr_bound(util, nr_balance_failed)`
                    let eff = match p.version {
                        LbVersion::V6_11 => shr_bound(util, nr_balance_failed),
                        _ => util,
                    };
                    if eff as i64 > e.imbalance {
                        false
                    } else {
                        e.imbalance -= util as i64;
                        true
                    }
                }
                MigrationType::Task => {
                    e.imbalance -= 1;
                    true
                }
                MigrationType::Misfit => {
                    // This is not a misfit task
                    if task_fits_cpu(
                        t.util_est,
                        t.uclamp_min,
                        t.uclamp_max,
                        &src.cap,
                        p.uclamp_is_used,
                    ) {
                        false
                    } else {
                        e.imbalance = 0;
                        true
                    }
                }
            }
        };
        lb.list.pop_front();
        if !ok {
            // list_move(&p->se.group_node, tasks): to the head.
            lb.list.push_back(t);
            continue;
        }
        lb.moves.push(Migration {
            task: t.id,
            src: e.src_cpu,
            dst: e.dst_cpu,
            reason,
        });
        *src_nr_running -= 1;
        detached += 1;
        // NEWIDLE balancing is a source of latency: preemptible kernels stop here.
        if p.preemption && e.idle == CpuIdleType::NewlyIdle {
            break;
        }
        // We only want to steal up to the prescribed amount of load/util/tasks.
        if e.imbalance <= 0 {
            break;
        }
    }
    detached
}

impl LoadBalancer {
    /// `active_load_balance_cpu_stop()` run by the stopper on `busiest` for `target`
    /// (kernel/sched/fair.c, v6.11): in the lowest domain of `target` spanning `busiest`,
    /// `detach_one_task()` with `LBF_ACTIVE_LB` (cache hotness ignored) and `CPU_IDLE`.
    /// `env` must show the moment the stopper runs: the stopper is current (counted in
    /// `nr_running`) and the preempted task is queued (`running = false`). On success the
    /// domain's `nr_balance_failed` is reset. The engine clears `rq->active_balance`.
    pub fn active_load_balance_cpu_stop(
        &mut self,
        env: &impl LbEnv,
        doms: &mut SchedDomains,
        p: &LbParams,
        busiest: usize,
        target: usize,
        reason: MigrationReason,
    ) -> Option<Migration> {
        self.clear_moves();
        // Is there any task to move?
        if env.cpu(busiest).nr_running <= 1 || busiest == target {
            return None;
        }
        let level = doms
            .domains(target)
            .iter()
            .position(|sd| sd.span.contains(busiest))?;
        let sd = &doms.cpus[target][level];
        let mut e = Env {
            this_cpu: target,
            level,
            src_cpu: busiest,
            dst_cpu: target,
            dst_grpmask: sd.groups[0].balance_mask,
            new_dst_cpu: target,
            idle: CpuIdleType::Idle,
            imbalance: 0,
            cpus: sd.span,
            flags: LBF_ACTIVE_LB,
            loop_: 0,
            loop_break: SCHED_NR_MIGRATE_BREAK,
            loop_max: 0,
            migration_type: MigrationType::Load,
            src_grp_type: super::GroupType::HasSpare,
        };
        for i in 0..env.nr_cfs_tasks(busiest) {
            let t = env.cfs_task(busiest, i);
            if !can_migrate_task(&t, env, doms, p, &mut e) {
                continue;
            }
            doms.cpus[target][level].nr_balance_failed = 0;
            let m = Migration {
                task: t.id,
                src: busiest,
                dst: target,
                reason,
            };
            self.moves.push(m);
            self.batch_ends.push(1);
            return Some(m);
        }
        None
    }
}
