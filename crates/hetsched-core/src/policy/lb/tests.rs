//! Unit tests of the load balancer. Expected values are derived by hand from the kernel
//! formulas quoted in each test.

use super::detach::{detach_tasks, shr_bound};
use super::misfit::{
    max_allowed_capacity, nohz_balancer_kick, nohz_balancer_kick_with,
    overloaded_on_add_nr_running, update_misfit_status, NewidleCost, NohzKickInput,
    NOHZ_BALANCE_KICK, NOHZ_STATS_KICK,
};
use super::stats::{group_classify, SgLbStats};
use super::*;
use crate::policy::MigrationReason;
use crate::sched::capacity::CpuCapacity;
use crate::sched::topology::tests::{juno, platform};
use crate::sched::topology::{LbVersion, SchedDomains};

const NOW: u64 = 10_000_000_000;

fn caps(c: u64) -> CpuCapacity {
    CpuCapacity {
        orig: c,
        capacity: c,
        hw_pressure: 0,
        cpufreq_pressure: 0,
    }
}

fn idle_cpu(cap: u64) -> LbCpu {
    LbCpu {
        idle: true,
        cap: caps(cap),
        clock_task: NOW,
        ..LbCpu::default()
    }
}

/// A busy CPU: `nr` fair tasks, each of load 1024, util saturating the capacity.
fn busy(c: &mut LbCpu, nr: u32, util: u64) {
    c.idle = false;
    c.nr_running = nr;
    c.h_nr_running = nr;
    c.load = 1024 * u64::from(nr);
    c.util_cfs = util;
    c.util_cfs_boost = util;
    c.runnable = util;
}

fn task(id: usize, h_load: u64, util: u64, running: bool, hot: bool, n: usize) -> LbTask {
    LbTask {
        id,
        h_load,
        util_est: util,
        uclamp_min: 0,
        uclamp_max: 1024,
        cpus_allowed: CpuSet::first_n(n),
        running,
        exec_start: if hot { NOW - 100_000 } else { 0 },
        ..LbTask::default()
    }
}

fn sym8() -> SchedDomains {
    SchedDomains::build(
        &platform(&[(&[0, 1, 2, 3], 1024), (&[4, 5, 6, 7], 1024)]),
        LbVersion::V5_10,
        0,
    )
}

fn params(n: usize) -> LbParams {
    LbParams::new(LbVersion::V5_10, true, 250, n)
}

const RD: RootDomainState = RootDomainState {
    overloaded: true,
    overutilized: false,
    eas: false,
};

/// One `sched_balance_rq()` pass of `dst` at the PKG level (1) at jiffies 0.
#[allow(clippy::too_many_arguments)]
fn pkg_pass(
    lb: &mut LoadBalancer,
    env: &LbSnapshot,
    doms: &mut SchedDomains,
    rd: &RootDomainState,
    p: &LbParams,
    dst: usize,
    idle: CpuIdleType,
    reason: MigrationReason,
) -> LbDecision {
    lb.sched_balance_rq(env, doms, rd, p, dst, 1, idle, 0, reason)
}

#[test]
fn classification() {
    // weight 4, capacity 4096, imbalance_pct 117.
    let g = |nr: u32, util: u64, runnable: u64| SgLbStats {
        sum_nr_running: nr,
        group_weight: 4,
        group_capacity: 4096,
        group_util: util,
        group_runnable: runnable,
        ..SgLbStats::default()
    };
    // 5 > 4 tasks and 4096*100 = 409600 < 3600*117 = 421200: overloaded.
    assert_eq!(
        group_classify(117, false, &g(5, 3600, 3600)),
        GroupType::Overloaded
    );
    // 5 tasks but util 1000 and runnable 1000 are low: not overloaded; has capacity
    // since 409600 > 1000*117: has_spare even with more tasks than CPUs.
    assert_eq!(
        group_classify(117, false, &g(5, 1000, 1000)),
        GroupType::HasSpare
    );
    // 4 tasks: 409600 > 3000*117 = 351000 -> has_spare; 409600 > 3600*117 false -> fully_busy.
    assert_eq!(
        group_classify(117, false, &g(4, 3000, 3000)),
        GroupType::HasSpare
    );
    assert_eq!(
        group_classify(117, false, &g(4, 3600, 3000)),
        GroupType::FullyBusy
    );
    // runnable pressure: 4096*117 = 479232 < 4800*100 -> no capacity.
    assert_eq!(
        group_classify(117, false, &g(4, 100, 4800)),
        GroupType::FullyBusy
    );
    // affinity imbalance wins over misfit, overload wins over both.
    let mut m = g(2, 500, 500);
    m.group_misfit_task_load = 700;
    assert_eq!(group_classify(117, false, &m), GroupType::MisfitTask);
    assert_eq!(group_classify(117, true, &m), GroupType::Imbalanced);
    assert_eq!(
        group_classify(117, true, &g(5, 3600, 3600)),
        GroupType::Overloaded
    );
}

/// Juno: a big unpinned task runs alone on LITTLE CPU 0; big CPU 2 runs a pinned task;
/// big CPU 1 is idle and balances PKG.
fn juno_misfit_env(misfit_load: u64) -> LbSnapshot {
    let mut cpus: Vec<LbCpu> = [446, 1024, 1024, 446, 446, 446]
        .iter()
        .map(|&c| idle_cpu(c))
        .collect();
    busy(&mut cpus[0], 1, 446);
    cpus[0].load = 900;
    cpus[0].misfit_task_load = misfit_load;
    busy(&mut cpus[2], 1, 1024);
    let mut tasks = vec![Vec::new(); 6];
    tasks[0].push(task(10, 900, 700, true, true, 6));
    let mut pinned = task(11, 1024, 1024, true, true, 6);
    pinned.cpus_allowed = CpuSet::from_cpus(&[2]);
    tasks[2].push(pinned);
    LbSnapshot { cpus, tasks }
}

#[test]
fn misfit_status() {
    let p = params(6);
    let t = task(1, 0, 600, true, false, 6);
    // 600*1280 = 768000 >= 446*1024 = 456704: does not fit; h_load 0 -> max(0, 1) = 1.
    assert_eq!(
        update_misfit_status(Some((&t, 1024)), &caps(446), true, &p),
        Some(1)
    );
    let t = task(1, 800, 600, true, false, 6);
    assert_eq!(
        update_misfit_status(Some((&t, 1024)), &caps(446), true, &p),
        Some(800)
    );
    // Already on the biggest allowed capacity, or fits (356*1280 < 456704), or idle.
    assert_eq!(
        update_misfit_status(Some((&t, 1024)), &caps(1024), true, &p),
        Some(0)
    );
    let small = task(1, 800, 356, true, false, 6);
    assert_eq!(
        update_misfit_status(Some((&small, 1024)), &caps(446), true, &p),
        Some(0)
    );
    assert_eq!(update_misfit_status(None, &caps(446), true, &p), Some(0));
    // Pinned to one CPU: never misfit. Symmetric system: field untouched.
    let mut pinned = t;
    pinned.cpus_allowed = CpuSet::from_cpus(&[0]);
    assert_eq!(
        update_misfit_status(Some((&pinned, 446)), &caps(446), true, &p),
        Some(0)
    );
    assert_eq!(
        update_misfit_status(Some((&t, 1024)), &caps(446), false, &p),
        None
    );
    // Pre-misfit kernel.
    let old = LbParams::new(LbVersion::V5_10, false, 250, 6);
    assert_eq!(
        update_misfit_status(Some((&t, 1024)), &caps(446), true, &old),
        Some(0)
    );
    // max_allowed_capacity over the affinity.
    let orig = [446, 1024, 1024, 446, 446, 446];
    assert_eq!(
        max_allowed_capacity(&CpuSet::from_cpus(&[0, 3]), &orig),
        446
    );
    assert_eq!(max_allowed_capacity(&CpuSet::first_n(6), &orig), 1024);
}

#[test]
fn misfit_active_balance_to_idle_big_cpu() {
    let mut doms = SchedDomains::build(&juno(), LbVersion::V5_10, 0);
    let p = params(6);
    let env = juno_misfit_env(900);
    let mut lb = LoadBalancer::new();
    let rd = RootDomainState::default();
    let d = lb.sched_balance_rq(
        &env,
        &mut doms,
        &rd,
        &p,
        1,
        1,
        CpuIdleType::Idle,
        0,
        MigrationReason::Periodic,
    );
    // The LITTLE group is group_misfit_task (load 900): capacity_greater(1024, 446) and the
    // local group has spare -> busiest; calculate_imbalance: migrate_misfit, imbalance 1.
    assert_eq!(d.migration_type, MigrationType::Misfit);
    assert_eq!(d.imbalance, 1);
    assert_eq!(d.busiest, Some(0));
    // CPU 0 has a single (running) task: nothing detached, the stopper must push it.
    assert_eq!(d.outcome, LbOutcome::Failed);
    assert_eq!(
        d.active,
        Some(ActiveBalance {
            src: 0,
            dst: 1,
            reason: MigrationReason::Misfit
        })
    );
    // Misfit failures do not count; the interval is reset to min_interval (6 ms).
    assert_eq!(doms.cpus[1][1].nr_balance_failed, 0);
    assert_eq!(doms.cpus[1][1].balance_interval, 6);
    // Root level: the misfit sets the overload flag.
    assert_eq!(d.rd_overloaded, Some(true));

    // The stopper on CPU 0 (stopper current: nr_running 2, the task now queued) pushes it.
    let mut at_stop = env.clone();
    at_stop.cpus[0].nr_running = 2;
    at_stop.tasks[0][0].running = false;
    let m = lb
        .active_load_balance_cpu_stop(&at_stop, &mut doms, &p, 0, 1, MigrationReason::Misfit)
        .expect("pushed");
    assert_eq!((m.task, m.src, m.dst), (10, 0, 1));
}

#[test]
fn no_misfit_balance_in_pre_misfit_kernel() {
    let mut doms = SchedDomains::build(&juno(), LbVersion::V5_10, 0);
    let p = LbParams::new(LbVersion::V5_10, false, 250, 6);
    // update_misfit_status() yields 0 with misfit off.
    let env = juno_misfit_env(0);
    let mut lb = LoadBalancer::new();
    let d = pkg_pass(
        &mut lb,
        &env,
        &mut doms,
        &RootDomainState::default(),
        &p,
        1,
        CpuIdleType::Idle,
        MigrationReason::Periodic,
    );
    // Both groups have spare; no PREFER_SIBLING at PKG (asym); local idle 1 <= remote
    // idle 3 + 1 -> balanced.
    assert_eq!(d.outcome, LbOutcome::NoBusyGroup);
    assert_eq!(d.active, None);
    // Balanced periodic pass: interval doubles 6 -> 12.
    assert_eq!(doms.cpus[1][1].balance_interval, 12);
}

/// Eight CPUs of capacity 1024: CPU 0 idle, CPUs 1–3 one light task each (util 300),
/// CPUs 4–7 idle for the caller to fill.
fn light_local_cluster() -> Vec<LbCpu> {
    let mut cpus: Vec<LbCpu> = (0..8).map(|_| idle_cpu(1024)).collect();
    for c in &mut cpus[1..4] {
        busy(c, 1, 300);
    }
    cpus
}

/// CPUs 1–3 light, CPU 4 with three tasks (40 cold, 41 cache hot, 42 running), CPUs
/// 5–7 full: CPU 0's package pass pulls from CPU 4.
fn overloaded_group() -> LbSnapshot {
    let mut cpus = light_local_cluster();
    busy(&mut cpus[4], 3, 1024);
    for c in &mut cpus[5..8] {
        busy(c, 1, 1024);
    }
    let mut tasks = vec![Vec::new(); 8];
    tasks[4] = vec![
        task(40, 1024, 340, false, false, 8),
        task(41, 1024, 340, false, true, 8),
        task(42, 1024, 340, true, true, 8),
    ];
    LbSnapshot { cpus, tasks }
}

#[test]
fn migrate_util_from_overloaded_group() {
    let mut doms = sym8();
    let p = params(8);
    let env = overloaded_group();
    let mut lb = LoadBalancer::new();
    let d = pkg_pass(
        &mut lb,
        &env,
        &mut doms,
        &RD,
        &p,
        0,
        CpuIdleType::Idle,
        MigrationReason::Periodic,
    );
    // Remote: 6 tasks on 4 CPUs, util 4096: 409600 < 4096*117 -> overloaded. Local: 3
    // tasks -> has_spare, util 900. PKG is not LLC: migrate_util,
    // imbalance = max(4096, 900) - 900 = 3196.
    assert_eq!(d.migration_type, MigrationType::Util);
    assert_eq!(d.imbalance, 3196);
    assert_eq!(d.busiest, Some(4));
    // Task 40 (cold, util 340 <= 3196) moves; 41 is cache hot (nr_balance_failed 0 is not
    // > cache_nice_tries 1); 42 runs. loop_max = min(32, 3) = 3.
    assert_eq!(d.outcome, LbOutcome::Moved);
    let moved: Vec<(usize, usize, usize)> =
        lb.moves().iter().map(|m| (m.task, m.src, m.dst)).collect();
    assert_eq!(moved, [(40, 4, 0)]);
    // Skipped tasks rotated to the head: tail-first order is now 41, 42.
    let (cpu, order) = lb.src_cfs_order().expect("src");
    assert_eq!(cpu, 4);
    assert_eq!(order.collect::<Vec<_>>(), [41, 42]);
    assert_eq!(doms.cpus[0][1].balance_interval, 8);
    assert_eq!(d.rd_overloaded, Some(true));
}

/// `find_busiest_queue()`'s `migrate_util` read: `cpu_util_cfs_boost()` from v6.5 (the
/// `v6.6` and `v6.11` balancers), `cpu_util()` in v5.10. CPU 4 has three tasks, util 600
/// but runnable 1024; CPU 5 two tasks of util 900: the boosted read takes CPU 4, the
/// plain one CPU 5.
#[test]
fn migrate_util_reads_the_runnable_boost_from_v6_5() {
    let mut cpus = light_local_cluster();
    busy(&mut cpus[4], 3, 600);
    cpus[4].util_cfs_boost = 1024;
    cpus[4].runnable = 1024;
    busy(&mut cpus[5], 2, 900);
    for c in &mut cpus[6..8] {
        busy(c, 1, 1024);
    }
    let mut tasks = vec![Vec::new(); 8];
    tasks[4] = vec![
        task(40, 1024, 200, false, false, 8),
        task(41, 1024, 200, false, false, 8),
        task(42, 1024, 200, true, false, 8),
    ];
    tasks[5] = vec![
        task(50, 1024, 450, false, false, 8),
        task(51, 1024, 450, true, false, 8),
    ];
    let env = LbSnapshot { cpus, tasks };
    for (version, busiest) in [
        (LbVersion::V5_10, 5),
        (LbVersion::V6_6, 4),
        (LbVersion::V6_11, 4),
    ] {
        let mut doms = SchedDomains::build(
            &platform(&[(&[0, 1, 2, 3], 1024), (&[4, 5, 6, 7], 1024)]),
            version,
            0,
        );
        let p = LbParams::new(version, true, 250, 8);
        let mut lb = LoadBalancer::new();
        let d = pkg_pass(
            &mut lb,
            &env,
            &mut doms,
            &RD,
            &p,
            0,
            CpuIdleType::Idle,
            MigrationReason::Periodic,
        );
        assert_eq!(d.migration_type, MigrationType::Util, "{version:?}");
        assert_eq!(d.busiest, Some(busiest), "{version:?}");
    }
}

/// A newidle balance that stops at its gate runs no pass, so the balancer has no busiest
/// runqueue whose `cfs_tasks` order the engine would mirror (v6.11
/// `sched_balance_newidle()` touches no list then). Before, the previous pass's order
/// stayed, and the engine stamped that CPU's tasks again after every gated newidle,
/// reordering them against the tasks queued there since.
#[test]
fn a_gated_newidle_balance_leaves_no_source_order() {
    let mut doms = sym8();
    let p = params(8);
    let env = overloaded_group();
    let mut lb = LoadBalancer::new();
    pkg_pass(
        &mut lb,
        &env,
        &mut doms,
        &RD,
        &p,
        0,
        CpuIdleType::Idle,
        MigrationReason::Periodic,
    );
    assert!(lb.src_cfs_order().is_some());
    let calm = RootDomainState {
        overloaded: false,
        ..RD
    };
    let gated = lb.sched_balance_newidle_gate(&mut doms, &calm, &p, 0, u64::MAX, 0);
    assert!(gated.is_some());
    assert!(lb.moves().is_empty());
    assert!(lb.src_cfs_order().is_none());
}

fn spare_env(pin_x_to: Option<&[usize]>) -> LbSnapshot {
    let mut cpus: Vec<LbCpu> = (0..8).map(|_| idle_cpu(1024)).collect();
    busy(&mut cpus[0], 2, 800);
    busy(&mut cpus[1], 1, 400);
    let mut tasks = vec![Vec::new(); 8];
    let mut x = task(1, 512, 300, false, false, 8);
    if let Some(c) = pin_x_to {
        x.cpus_allowed = CpuSet::from_cpus(c);
    }
    tasks[0] = vec![x, task(2, 512, 500, true, true, 8)];
    tasks[1] = vec![task(3, 512, 400, true, true, 8)];
    LbSnapshot { cpus, tasks }
}

#[test]
fn migrate_task_with_prefer_sibling_and_dst_pinned_retry() {
    let p = params(8);
    // Remote group 0-3: 3 tasks, has_spare; local 4-7 idle. Symmetric: PREFER_SIBLING;
    // sibling_imbalance = 3 - 0 = 3 > 1 -> force; migrate_task, imbalance 3 >> 1 = 1.
    // Busiest runqueue: most CFS tasks -> CPU 0.
    let mut doms = sym8();
    let mut lb = LoadBalancer::new();
    let env = spare_env(None);
    let d = pkg_pass(
        &mut lb,
        &env,
        &mut doms,
        &RD,
        &p,
        4,
        CpuIdleType::Idle,
        MigrationReason::NohzIdle,
    );
    assert_eq!((d.migration_type, d.imbalance), (MigrationType::Task, 1));
    assert_eq!(d.busiest, Some(0));
    let m = lb.moves();
    assert_eq!(m.len(), 1);
    assert_eq!((m[0].task, m[0].src, m[0].dst), (1, 0, 4));
    assert_eq!(m[0].reason, MigrationReason::NohzIdle);

    // Task 1 only allowed on CPUs 5-6: LBF_DST_PINNED picks CPU 5 (first of the local
    // group allowed) and the retry moves it there.
    let mut doms = sym8();
    let env = spare_env(Some(&[5, 6]));
    let d = pkg_pass(
        &mut lb,
        &env,
        &mut doms,
        &RD,
        &p,
        4,
        CpuIdleType::Idle,
        MigrationReason::Periodic,
    );
    assert_eq!(d.outcome, LbOutcome::Moved);
    let m = lb.moves();
    assert_eq!((m[0].task, m[0].src, m[0].dst), (1, 0, 5));
    // the first detach_tasks() call detached nothing: one batch, of the retry
    assert_eq!(lb.batch_ends(), [1]);
}

#[test]
fn pinned_failures_lead_to_active_balance() {
    let p = params(8);
    let mut doms = sym8();
    let mut lb = LoadBalancer::new();
    // Task 1 pinned to CPU 0: never movable; task 2 runs. Each periodic pass fails:
    // nr_balance_failed 1, 2, 3, 4; migrate_task needs > cache_nice_tries + 2 = 3.
    let env = spare_env(Some(&[0]));
    for i in 1..=4u32 {
        let d = pkg_pass(
            &mut lb,
            &env,
            &mut doms,
            &RD,
            &p,
            4,
            CpuIdleType::Idle,
            MigrationReason::Periodic,
        );
        assert_eq!(d.outcome, LbOutcome::Failed);
        assert_eq!(doms.cpus[4][1].nr_balance_failed, i);
        if i < 4 {
            assert_eq!(d.active, None, "pass {i}");
        } else {
            assert_eq!(
                d.active,
                Some(ActiveBalance {
                    src: 0,
                    dst: 4,
                    reason: MigrationReason::Active
                })
            );
        }
    }
    // Newidle failures do not count.
    let d = pkg_pass(
        &mut lb,
        &env,
        &mut doms,
        &RD,
        &p,
        4,
        CpuIdleType::NewlyIdle,
        MigrationReason::Newidle,
    );
    assert_eq!(d.outcome, LbOutcome::Failed);
    assert_eq!(doms.cpus[4][1].nr_balance_failed, 4);
}

#[test]
fn migrate_load_between_overloaded_groups() {
    let p = params(8);
    let mut doms = sym8();
    let mut cpus: Vec<LbCpu> = (0..8).map(|_| idle_cpu(1024)).collect();
    busy(&mut cpus[0], 3, 1024);
    for c in &mut cpus[1..4] {
        busy(c, 2, 1024);
    }
    busy(&mut cpus[4], 2, 1024);
    for c in &mut cpus[5..8] {
        busy(c, 1, 1024);
    }
    let mut tasks = vec![Vec::new(); 8];
    tasks[0] = vec![
        task(1, 1024, 340, false, false, 8),
        task(2, 1024, 340, false, false, 8),
        task(3, 1024, 340, true, true, 8),
    ];
    let env = LbSnapshot { cpus, tasks };
    let mut lb = LoadBalancer::new();
    let d = pkg_pass(
        &mut lb,
        &env,
        &mut doms,
        &RD,
        &p,
        4,
        CpuIdleType::NotIdle,
        MigrationReason::Periodic,
    );
    // local avg = 5120*1024/4096 = 1280, busiest avg = 9216*1024/4096 = 2304,
    // domain avg = 14336*1024/8192 = 1792; 100*2304 > 117*1280.
    // imbalance = min(512*4096, 512*4096) / 1024 = 2048; busiest rq: max load/capacity = CPU 0.
    assert_eq!((d.migration_type, d.imbalance), (MigrationType::Load, 2048));
    assert_eq!(d.busiest, Some(0));
    // 1024 <= 2048 -> move (imbalance 1024), 1024 <= 1024 -> move (imbalance 0), stop.
    let ids: Vec<usize> = lb.moves().iter().map(|m| m.task).collect();
    assert_eq!(ids, [1, 2]);
    // one detach_tasks() call, then one attach_tasks()
    assert_eq!(lb.batch_ends(), [2]);
}

#[test]
fn should_we_balance_and_intervals() {
    let p = params(8);
    let mut doms = sym8();
    let mut lb = LoadBalancer::new();
    let env = spare_env(None);
    // CPU 5 is idle but CPU 4 is the first idle CPU of the local group.
    let d = pkg_pass(
        &mut lb,
        &env,
        &mut doms,
        &RD,
        &p,
        5,
        CpuIdleType::Idle,
        MigrationReason::Periodic,
    );
    assert_eq!(d.outcome, LbOutcome::NotBalancer);
    assert!(!d.continue_balancing);
    // Balanced pass doubles 8 -> 16, then stays at max_interval 16.
    assert_eq!(doms.cpus[5][1].balance_interval, 16);
    pkg_pass(
        &mut lb,
        &env,
        &mut doms,
        &RD,
        &p,
        5,
        CpuIdleType::Idle,
        MigrationReason::Periodic,
    );
    assert_eq!(doms.cpus[5][1].balance_interval, 16);

    // get_sd_balance_interval, HZ 250, 8 CPUs: max = 250*8/10 = 200 jiffies.
    // v5.10 busy: 8 ms * 16 = 128 ms = 32 jiffies, minus 1 = 31. Idle: 8 ms = 2 jiffies.
    assert_eq!(get_sd_balance_interval(8, 16, true, &p), 31);
    assert_eq!(get_sd_balance_interval(8, 16, false, &p), 2);
    // v5.9 busy: 8 ms * 32 = 256 ms = 64 jiffies, no adjustment.
    let old = LbParams::new(LbVersion::V5_9, true, 250, 8);
    assert_eq!(get_sd_balance_interval(8, 32, true, &old), 64);
    // HZ 1000, 2 CPUs: 16 ms * 32 = 512 jiffies, clamped to max = 1000*2/10 = 200.
    let fast = LbParams::new(LbVersion::V5_9, true, 1000, 2);
    assert_eq!(get_sd_balance_interval(16, 32, true, &fast), 200);
}

fn detach_env(level_failed: u32, version: LbVersion) -> (SchedDomains, LbParams, Env) {
    let mut doms = sym8();
    doms.cpus[4][1].nr_balance_failed = level_failed;
    let p = LbParams::new(version, true, 250, 8);
    let e = Env {
        this_cpu: 4,
        level: 1,
        src_cpu: 0,
        dst_cpu: 4,
        dst_grpmask: CpuSet::from_cpus(&[4, 5, 6, 7]),
        new_dst_cpu: 4,
        idle: CpuIdleType::NotIdle,
        imbalance: 2048,
        cpus: CpuSet::first_n(8),
        flags: LBF_ALL_PINNED,
        loop_: 0,
        loop_break: SCHED_NR_MIGRATE_BREAK,
        loop_max: 32,
        migration_type: MigrationType::Load,
        src_grp_type: GroupType::HasSpare,
    };
    (doms, p, e)
}

fn run_detach(
    lb: &mut LoadBalancer,
    tasks: Vec<LbTask>,
    failed: u32,
    version: LbVersion,
    tweak: impl FnOnce(&mut Env),
) -> (Vec<usize>, Env) {
    let (doms, p, mut e) = detach_env(failed, version);
    tweak(&mut e);
    let mut cpus: Vec<LbCpu> = (0..8).map(|_| idle_cpu(1024)).collect();
    let n = tasks.len() as u32;
    busy(&mut cpus[0], n, 1024);
    let env = LbSnapshot {
        cpus,
        tasks: vec![tasks],
    };
    lb.list.clear();
    lb.moves.clear();
    for i in 0..env.nr_cfs_tasks(0) {
        lb.list.push_back(env.cfs_task(0, i));
    }
    let mut nr = n;
    detach_tasks(
        lb,
        &env,
        &doms,
        &p,
        &mut e,
        &mut nr,
        MigrationReason::Periodic,
    );
    (lb.moves().iter().map(|m| m.task).collect(), e)
}

#[test]
fn detach_v5_9_vs_v5_10_load_test() {
    let mut lb = LoadBalancer::new();
    let big = || {
        vec![
            task(1, 3000, 900, false, false, 8),
            task(2, 100, 50, true, false, 8),
        ]
    };
    // v5.9: 3000/2 = 1500 <= 2048 -> detached.
    let (m, e) = run_detach(&mut lb, big(), 0, LbVersion::V5_9, |_| {});
    assert_eq!(m, [1]);
    assert_eq!(e.imbalance, 2048 - 3000);
    // v5.10, no failure: 3000 >> 0 = 3000 > 2048 -> skipped.
    let (m, _) = run_detach(&mut lb, big(), 0, LbVersion::V5_10, |_| {});
    assert!(m.is_empty());
    // v5.10 after one failure: 3000 >> 1 = 1500 <= 2048 -> detached.
    let (m, _) = run_detach(&mut lb, big(), 1, LbVersion::V5_10, |_| {});
    assert_eq!(m, [1]);
    assert_eq!(shr_bound(3000, 100), 0);
}

#[test]
fn detach_respects_affinity_hotness_and_loop_max() {
    let mut lb = LoadBalancer::new();
    // Affinity: task 1 allowed only on CPU 2 (not in the local group): SOME_PINNED, no
    // alternative dst; task 2 is allowed -> ALL_PINNED cleared; task 3 running.
    let mut t1 = task(1, 100, 50, false, false, 8);
    t1.cpus_allowed = CpuSet::from_cpus(&[2]);
    let tasks = vec![
        t1,
        task(2, 100, 50, false, true, 8),
        task(3, 100, 50, true, false, 8),
    ];
    let (m, e) = run_detach(&mut lb, tasks.clone(), 0, LbVersion::V5_10, |_| {});
    // Task 2 is hot and nr_balance_failed 0 <= cache_nice_tries 1: nothing moves.
    assert!(m.is_empty());
    assert_ne!(e.flags & LBF_SOME_PINNED, 0);
    assert_eq!(e.flags & (LBF_DST_PINNED | LBF_ALL_PINNED), 0);
    // After 2 failures (> cache_nice_tries) the hot task goes.
    let (m, _) = run_detach(&mut lb, tasks, 2, LbVersion::V5_10, |_| {});
    assert_eq!(m, [2]);
    // loop_max: 40 cold tasks, migrate_task with imbalance 100: exactly 32 examined and
    // detached (loop 33 > loop_max 32 stops before LBF_NEED_BREAK).
    let many: Vec<LbTask> = (0..40).map(|i| task(i, 10, 5, false, false, 8)).collect();
    let (m, e) = run_detach(&mut lb, many, 0, LbVersion::V5_10, |e| {
        e.migration_type = MigrationType::Task;
        e.imbalance = 100;
        e.loop_max = 32;
    });
    assert_eq!(m.len(), 32);
    assert_eq!(e.imbalance, 68);
    assert_eq!(e.flags & LBF_NEED_BREAK, 0);
    // An idle dst never takes the last task: with 2 tasks, one can go.
    let two = vec![
        task(1, 10, 5, false, false, 8),
        task(2, 10, 5, false, false, 8),
    ];
    let (m, _) = run_detach(&mut lb, two, 0, LbVersion::V5_10, |e| {
        e.migration_type = MigrationType::Task;
        e.imbalance = 5;
        e.idle = CpuIdleType::Idle;
    });
    assert_eq!(m, [1]);
}

#[test]
fn misfit_detach_takes_only_non_fitting_tasks() {
    let mut lb = LoadBalancer::new();
    // On a 1024 CPU: util 900 does not fit (900*1280 = 1152000 >= 1048576), 500 fits.
    let tasks = vec![
        task(1, 100, 500, false, false, 8),
        task(2, 100, 900, false, false, 8),
    ];
    let (m, e) = run_detach(&mut lb, tasks, 0, LbVersion::V5_10, |e| {
        e.migration_type = MigrationType::Misfit;
        e.imbalance = 1;
    });
    assert_eq!(m, [2]);
    assert_eq!(e.imbalance, 0);
}

#[test]
fn nohz_kick_decisions() {
    let base = NohzKickInput {
        nr_running: 1,
        h_nr_running: 1,
        cap: caps(446),
        base_imbalance_pct: Some(117),
        has_asym_cpucapacity: true,
        misfit_task_load: 900,
        llc_nr_busy: Some(1),
        ..NohzKickInput::default()
    };
    let kick = NOHZ_STATS_KICK | NOHZ_BALANCE_KICK;
    assert_eq!(nohz_balancer_kick(&base, true), kick);
    // Pre-misfit kernel: the asym block is absent; one busy CPU in the LLC: no kick.
    assert_eq!(nohz_balancer_kick(&base, false), 0);
    // No misfit: an asym CPU never reaches the LLC test.
    let calm = NohzKickInput {
        misfit_task_load: 0,
        llc_nr_busy: Some(3),
        ..base
    };
    assert_eq!(nohz_balancer_kick(&calm, true), 0);
    assert_eq!(nohz_balancer_kick(&calm, false), kick);
    // The engine's form counts the LLC's busy CPUs only where the kernel reads them: an
    // asymmetric CPU with misfit handling never does.
    let never = || -> Option<u32> { panic!("nr_busy_cpus read") };
    assert_eq!(nohz_balancer_kick_with(&calm, true, never), 0);
    assert_eq!(nohz_balancer_kick_with(&calm, false, || Some(3)), kick);
    assert_eq!(nohz_balancer_kick_with(&calm, false, || Some(1)), 0);
    // Two tasks always kick; reduced capacity (300*117 < 446*100) kicks.
    assert_eq!(
        nohz_balancer_kick(
            &NohzKickInput {
                nr_running: 2,
                ..calm
            },
            true
        ),
        kick
    );
    let mut reduced = calm;
    reduced.cap.capacity = 300;
    assert_eq!(nohz_balancer_kick(&reduced, true), kick);
    // Not due / nobody idle.
    assert_eq!(
        nohz_balancer_kick(
            &NohzKickInput {
                before_next_balance: true,
                ..base
            },
            true
        ),
        0
    );
    assert_eq!(
        nohz_balancer_kick(
            &NohzKickInput {
                no_idle_cpus: true,
                ..base
            },
            true
        ),
        0
    );
    assert!(overloaded_on_add_nr_running(1, 2));
    assert!(!overloaded_on_add_nr_running(2, 3));
}

/// `nohz_balancer_kick()` (v6.11) returns before the blocked-load test when no CPU is
/// tickless idle: not even a stats-only kick, which would clear `nohz.has_blocked` and
/// push `nohz.next_blocked` 32 ms out while no CPU's blocked load was updated.
#[test]
fn no_idle_cpu_means_no_stats_kick() {
    let stats_due = NohzKickInput {
        blocked_load_due: true,
        before_next_balance: true,
        ..NohzKickInput::default()
    };
    assert_eq!(nohz_balancer_kick(&stats_due, true), NOHZ_STATS_KICK);
    let nobody_idle = NohzKickInput {
        no_idle_cpus: true,
        ..stats_due
    };
    assert_eq!(nohz_balancer_kick(&nobody_idle, true), 0);
    assert_eq!(nohz_balancer_kick(&nobody_idle, false), 0);
}

#[test]
fn newidle_gating() {
    let free = NewidleCost {
        base_ns: 0,
        per_cpu_ns: 0,
    };
    let p = params(8);
    let mut doms = sym8();
    let mut lb = LoadBalancer::new();
    let env = spare_env(None);
    // Root domain not overloaded: no balance at all.
    let not_over = RootDomainState {
        overloaded: false,
        ..RD
    };
    let o = lb.sched_balance_newidle(&env, &mut doms, &not_over, &p, 4, 1_000_000, free, 0);
    assert_eq!((o.domains_tried, o.pulled), (0, 0));
    // Overloaded: MC (4-7) has nothing to pull, PKG pulls task 1 (stop after it). Each
    // domain's cost grows with its span: 10 + 10 × 4 µs for MC, 10 + 10 × 8 µs for PKG.
    let cost = NewidleCost {
        base_ns: 10_000,
        per_cpu_ns: 10_000,
    };
    let o = lb.sched_balance_newidle(&env, &mut doms, &RD, &p, 4, 1_000_000, cost, 0);
    assert_eq!((o.domains_tried, o.pulled), (2, 1));
    assert_eq!(lb.moves()[0].reason, MigrationReason::Newidle);
    assert_eq!(doms.cpus[4][0].max_newidle_lb_cost, 50_000);
    assert_eq!(doms.cpus[4][1].max_newidle_lb_cost, 90_000);
    assert_eq!(o.cost, 140_000);
    // avg_idle below the base domain's cost: skipped.
    let o = lb.sched_balance_newidle(&env, &mut doms, &RD, &p, 4, 40_000, cost, 0);
    assert_eq!(o.domains_tried, 0);
    // avg_idle covers MC (50 µs) but not MC's cost plus PKG's (50 + 90 µs): PKG, where
    // the task to pull is, is not balanced.
    let o = lb.sched_balance_newidle(&env, &mut doms, &RD, &p, 4, 100_000, cost, 0);
    assert_eq!((o.domains_tried, o.pulled, o.cost), (1, 0, 50_000));
}

#[test]
fn v4_20_group_capacity_and_classification() {
    use super::stats::{group_classify_v4_20, GroupLoad};
    // A LITTLE cluster of juno: 4 CPUs of capacity 446 (group_capacity 1784), PKG
    // imbalance_pct 125 (v4.20 sd_init).
    let g = |nr: u32, util: u64, runnable: u64| GroupLoad {
        sum_nr_running: nr,
        group_weight: 4,
        group_capacity: 1784,
        group_util: util,
        group_runnable: runnable,
    };
    // 5 tasks, util 1784: 5 > 4 and 1784*100 = 178400 < 1784*125 = 223000 -> overloaded,
    // and no capacity (5 >= 4, 178400 <= 223000).
    assert!(g(5, 1784, 0).is_overloaded_v4_20(125));
    assert!(!g(5, 1784, 0).has_capacity_v4_20(125));
    // 4 hogs on 4 CPUs: not overloaded (4 <= 4) and no capacity (4 >= 4, util saturated):
    // v4.20 has no fully-busy type, the group is group_other.
    assert!(!g(4, 1784, 0).is_overloaded_v4_20(125));
    assert!(!g(4, 1784, 0).has_capacity_v4_20(125));
    // 5 tasks at util 1400: 178400 < 175000 fails -> not overloaded; v4.20 ignores the
    // runnable sum (v6.11: 1784*125 = 223000 < 3000*100 would make it overloaded).
    assert!(!g(5, 1400, 3000).is_overloaded_v4_20(125));
    assert!(g(5, 1400, 3000).is_overloaded(125));
    assert!(g(5, 1400, 3000).has_capacity_v4_20(125)); // 178400 > 175000
    assert!(g(3, 1784, 0).has_capacity_v4_20(125)); // 3 < 4

    // group_classify(): no_capacity, then sgc->imbalance, then misfit, else group_other.
    let mut s = SgLbStats {
        group_no_capacity: true,
        group_misfit_task_load: 900,
        ..SgLbStats::default()
    };
    assert_eq!(group_classify_v4_20(true, &s), GroupType::Overloaded);
    s.group_no_capacity = false;
    assert_eq!(group_classify_v4_20(true, &s), GroupType::Imbalanced);
    assert_eq!(group_classify_v4_20(false, &s), GroupType::MisfitTask);
    s.group_misfit_task_load = 0;
    assert_eq!(group_classify_v4_20(false, &s), GroupType::HasSpare);
}

#[test]
fn v4_20_fix_small_imbalance() {
    use super::imbalance::fix_small_imbalance;
    // busiest: load_per_task 1024, capacity 1784, avg_load 1763; local: one task of 1024,
    // capacity 2048, avg_load 512. scaled_busy_load_per_task = 1024*1024/1784 = 587;
    // imbn = 2 (1024 > 1024 is false); 1763 + 587 = 2350 >= 512 + 2*587 = 1686: move one
    // task, imbalance = 1024.
    let busiest = SgLbStats {
        load_per_task: 1024,
        group_capacity: 1784,
        avg_load: 1763,
        sum_nr_running: 3,
        ..SgLbStats::default()
    };
    let mut local = SgLbStats {
        load_per_task: 1024,
        group_capacity: 2048,
        avg_load: 512,
        sum_nr_running: 1,
        ..SgLbStats::default()
    };
    let mut imb = 0;
    fix_small_imbalance(&mut local, &busiest, 0, &mut imb);
    assert_eq!(imb, 1024);
    // busiest avg 600 (capacity 2048: scaled 512), local avg 500 (capacity 2048):
    // 600 + 512 = 1112 < 500 + 1024; capa_now = (2048*600 + 2048*500)/1024 = 2200;
    // capa_move = 2048*min(1024, 600-512) + 2048*min(1024, 500 + 1048576/2048) = 180224 +
    // 2072576 -> 2200: no throughput gain, the imbalance stays 0.
    let busiest = SgLbStats {
        avg_load: 600,
        group_capacity: 2048,
        ..busiest
    };
    local.avg_load = 500;
    let mut imb = 0;
    fix_small_imbalance(&mut local, &busiest, 0, &mut imb);
    assert_eq!(imb, 0);
    // An empty local group takes cpu_avg_load_per_task(dst_cpu).
    local.sum_nr_running = 0;
    fix_small_imbalance(&mut local, &busiest, 77, &mut imb);
    assert_eq!(local.load_per_task, 77);
}

/// juno_r0 with one 1024-load hog on each LITTLE CPU (0, 3, 4, 5) and both bigs idle.
fn juno_four_hogs(misfit_load: u64) -> LbSnapshot {
    let mut cpus: Vec<LbCpu> = [446, 1024, 1024, 446, 446, 446]
        .iter()
        .map(|&c| idle_cpu(c))
        .collect();
    let mut tasks = vec![Vec::new(); 6];
    for (k, c) in [0usize, 3, 4, 5].into_iter().enumerate() {
        busy(&mut cpus[c], 1, 446);
        // CPU 0 carries the biggest misfit load.
        cpus[c].misfit_task_load = if c == 0 { misfit_load } else { misfit_load / 2 };
        tasks[c].push(task(20 + k, 1024, 446, true, true, 6));
    }
    LbSnapshot { cpus, tasks }
}

#[test]
fn v4_20_tip_needs_failures_before_active_balance() {
    // Before the misfit series (misfit off), v4.20 balancer, CPU 1 balancing PKG idle.
    let mut doms = SchedDomains::build(&juno(), LbVersion::V4_20, 0);
    assert_eq!(doms.cpus[1][1].imbalance_pct, 125);
    let p = LbParams::new(LbVersion::V4_20, false, 250, 6);
    let env = juno_four_hogs(0);
    let mut lb = LoadBalancer::new();
    let run = |lb: &mut LoadBalancer, doms: &mut SchedDomains| {
        pkg_pass(
            lb,
            &env,
            doms,
            &RootDomainState::default(),
            &p,
            1,
            CpuIdleType::Idle,
            MigrationReason::Periodic,
        )
    };
    let d = run(&mut lb, &mut doms);
    // LITTLE group: load 4096, capacity 1784, avg_load 4096*1024/1784 = 2351, 4 tasks on
    // 4 CPUs -> group_other; local (bigs): avg_load 0, 2 idle CPUs. Domain avg_load =
    // 1024*4096/(2048+1784) = 1094. CPU_IDLE: 2 idle <= 0 + 1 fails -> not balanced.
    // calculate_imbalance: max_pull = 2351 - 1094 = 1257; min(1257*1784 = 2242488,
    // 1094*2048 = 2240512)/1024 = 2188.
    assert_eq!(d.migration_type, MigrationType::Load);
    assert_eq!(d.imbalance, 2188);
    // find_busiest_queue: wl 1024 <= 2188 so no skip; equal 1024/446 ratios -> first CPU.
    assert_eq!(d.busiest, Some(0));
    // One running task: nothing detached; no reduced capacity, no misfit, 1 failure <= 3.
    assert_eq!(d.outcome, LbOutcome::Failed);
    assert_eq!(d.active, None);
    assert_eq!(doms.cpus[1][1].nr_balance_failed, 1);
    // The fourth failure (> cache_nice_tries + 2 = 3) starts an active balance, sets
    // nr_balance_failed to cache_nice_tries + 1 = 2 and doubles the interval 6 -> 12.
    doms.cpus[1][1].nr_balance_failed = 3;
    let d = run(&mut lb, &mut doms);
    assert_eq!(
        d.active,
        Some(ActiveBalance {
            src: 0,
            dst: 1,
            reason: MigrationReason::Active
        })
    );
    assert_eq!(doms.cpus[1][1].nr_balance_failed, 2);
    assert_eq!(doms.cpus[1][1].balance_interval, 12);

    // One hog moved to CPU 1: bigs 1 idle CPU, LITTLEs 1 idle CPU; CPU 2 balances.
    let mut moved = env.clone();
    moved.cpus[0] = idle_cpu(446);
    moved.tasks[0].clear();
    busy(&mut moved.cpus[1], 1, 1024);
    moved.tasks[1].push(task(20, 1024, 1024, true, true, 6));
    let d = pkg_pass(
        &mut lb,
        &moved,
        &mut doms,
        &RootDomainState::default(),
        &p,
        2,
        CpuIdleType::Idle,
        MigrationReason::Periodic,
    );
    // local avg 1024*1024/2048 = 512 < busiest 3072*1024/1784 = 1763 and < domain 1094,
    // but CPU_IDLE with busiest not overloaded and 1 <= 1 + 1 idle CPUs: balanced.
    assert_eq!(d.outcome, LbOutcome::NoBusyGroup);
    // Newly idle instead uses imbalance_pct: 100*1763 > 125*512 -> imbalance computed.
    let d = pkg_pass(
        &mut lb,
        &moved,
        &mut doms,
        &RootDomainState::default(),
        &p,
        2,
        CpuIdleType::NewlyIdle,
        MigrationReason::Newidle,
    );
    // max_pull = 1763 - 1094 = 669; min(669*1784 = 1193496, (1094-512)*2048 = 1191936)
    // /1024 = 1164 >= load_per_task 1024; the single running hogs cannot be detached.
    assert_eq!(d.imbalance, 1164);
    assert_eq!(d.outcome, LbOutcome::Failed);
}

#[test]
fn v4_20_misfit_forces_balance_and_active_push() {
    let mut doms = SchedDomains::build(&juno(), LbVersion::V4_20, 0);
    let p = LbParams::new(LbVersion::V4_20, true, 250, 6);
    let env = juno_four_hogs(1024);
    let mut lb = LoadBalancer::new();
    let d = pkg_pass(
        &mut lb,
        &env,
        &mut doms,
        &RootDomainState::default(),
        &p,
        1,
        CpuIdleType::Idle,
        MigrationReason::Periodic,
    );
    // group_misfit_task (max misfit load 1024): 446*1280 = 570880 < 1024*1024, and the
    // local group has capacity (0 < 2) -> busiest, forced. The imbalance is the same
    // avg_load distance as above, 2188 = max(2188, 1024), migrate_load.
    assert_eq!(d.migration_type, MigrationType::Load);
    assert_eq!(d.imbalance, 2188);
    // find_busiest_queue picks the biggest misfit load: CPU 0 (1024 vs 512).
    assert_eq!(d.busiest, Some(0));
    // need_active_balance: src_grp_type == group_misfit_task on the first failure.
    assert_eq!(
        d.active,
        Some(ActiveBalance {
            src: 0,
            dst: 1,
            reason: MigrationReason::Misfit
        })
    );
    // v4.20 counts the failure (1), then forces migration: cache_nice_tries + 1 = 2.
    assert_eq!(doms.cpus[1][1].nr_balance_failed, 2);
    assert_eq!(d.rd_overloaded, Some(true));
}

#[test]
fn the_stats_pass_sets_overutilized_before_the_eas_bail_out_reads_it() {
    // v6.11 update_sd_lb_stats() calls set_rd_overutilized() (root level: the stats'
    // value) before sched_balance_find_src_group() tests `!is_rd_overutilized() && rd->pd`:
    // an overutilized CPU the stats find is balanced in the same pass, not the next.
    let p = params(8);
    let mut doms = sym8();
    let mut lb = LoadBalancer::new();
    let mut env = spare_env(None);
    env.cpus[0].overutilized = true;
    let eas = RootDomainState {
        overloaded: true,
        overutilized: false,
        eas: true,
    };
    let d = pkg_pass(
        &mut lb,
        &env,
        &mut doms,
        &eas,
        &p,
        4,
        CpuIdleType::Idle,
        MigrationReason::NohzIdle,
    );
    assert_eq!(d.rd_overutilized, Some(true));
    assert_eq!(lb.moves().len(), 1, "{d:?}");
    // Nothing overutilized: EAS keeps the balancer out.
    let env = spare_env(None);
    let d = pkg_pass(
        &mut lb,
        &env,
        &mut doms,
        &eas,
        &p,
        4,
        CpuIdleType::Idle,
        MigrationReason::NohzIdle,
    );
    assert_eq!(d.rd_overutilized, Some(false));
    assert!(lb.moves().is_empty(), "{d:?}");
}

#[test]
fn detach_era_rules_v5_9_waiver_and_util_before_v6_8() {
    let mut lb = LoadBalancer::new();
    // task 2 runs (not detachable): detach_tasks() needs two tasks on the source
    let heavy = || {
        vec![
            task(1, 5000, 900, false, false, 8),
            task(2, 100, 50, true, false, 8),
        ]
    };
    // v5.9: 5000/2 = 2500 > 2048 -> skipped while nr_balance_failed <= cache_nice_tries (1),
    // detached once it is 2 (v5.5-v5.9 waive the test).
    let (m, _) = run_detach(&mut lb, heavy(), 1, LbVersion::V5_9, |_| {});
    assert!(m.is_empty());
    let (m, _) = run_detach(&mut lb, heavy(), 2, LbVersion::V5_9, |_| {});
    assert_eq!(m, [1]);
    // v4.20 never waives it.
    let (m, _) = run_detach(&mut lb, heavy(), 2, LbVersion::V4_20, |_| {});
    assert!(m.is_empty());
    // migrate_util: util 900 > imbalance 600. v6.6 (before shr_bound) skips it whatever
    // the failures; v6.11 compares 900 >> 1 = 450 after one failure and detaches.
    let util = |e: &mut Env| {
        e.migration_type = MigrationType::Util;
        e.imbalance = 600;
    };
    let (m, _) = run_detach(&mut lb, heavy(), 1, LbVersion::V6_6, util);
    assert!(m.is_empty());
    let (m, _) = run_detach(&mut lb, heavy(), 1, LbVersion::V5_10, util);
    assert!(m.is_empty());
    let (m, _) = run_detach(&mut lb, heavy(), 1, LbVersion::V6_11, util);
    assert_eq!(m, [1]);
}

#[test]
fn need_active_balance_for_any_migration_type_before_v5_12() {
    // After cache_nice_tries + 2 = 3 failures: v5.5-v5.11 ask the stopper whatever the
    // migration type; v5.12+ (imbalanced_active_balance()) only for migrate_task.
    let env = spare_env(None);
    for (version, load, task) in [
        (LbVersion::V5_9, true, true),
        (LbVersion::V5_10, true, true),
        (LbVersion::V6_6, false, true),
        (LbVersion::V6_11, false, true),
    ] {
        let (mut doms, p, mut e) = detach_env(4, version);
        doms.cpus[4][1].nr_balance_failed = 4;
        e.migration_type = MigrationType::Load;
        assert_eq!(
            need_active_balance(&env, &doms, &p, &e),
            load,
            "{version:?} load"
        );
        e.migration_type = MigrationType::Task;
        assert_eq!(
            need_active_balance(&env, &doms, &p, &e),
            task,
            "{version:?} task"
        );
        doms.cpus[4][1].nr_balance_failed = 3;
        assert!(
            !need_active_balance(&env, &doms, &p, &e),
            "{version:?} 3 failures"
        );
    }
}

/// EAS on, `rd->overutilized` clear at entry, balancing below the root domain: the first
/// pass finds CPU 0 overutilized (setting the flag, v6.11 `set_rd_overutilized()`) with
/// every task pinned to it, and redoes without CPU 0. The redo reads the flag set, so no
/// EAS bail-out: it pulls from CPU 1, as v6.11 does. (The pass's shortcut from the
/// per-CPU sums once read the flag as it was at entry and stopped as balanced.)
#[test]
fn a_redo_after_an_all_pinned_pass_reads_the_overutilized_flag_it_set() {
    let p = params(8);
    let mut doms = sym8();
    let mut lb = LoadBalancer::new();
    let mut cpus: Vec<LbCpu> = (0..8).map(|_| idle_cpu(1024)).collect();
    busy(&mut cpus[0], 3, 1000);
    cpus[0].overutilized = true;
    busy(&mut cpus[1], 2, 1000);
    let mut tasks = vec![Vec::new(); 8];
    let pin0 = |id, running| {
        let mut t = task(id, 1024, 300, running, false, 8);
        t.cpus_allowed = CpuSet::from_cpus(&[0]);
        t
    };
    tasks[0] = vec![pin0(1, false), pin0(2, false), pin0(3, true)];
    tasks[1] = vec![
        task(4, 1024, 500, false, false, 8),
        task(5, 1024, 500, true, false, 8),
    ];
    let env = LbSnapshot { cpus, tasks };
    let rd = RootDomainState {
        overloaded: true,
        overutilized: false,
        eas: true,
    };
    // the MC level (0), below the root domain, for CPU 3
    let d = lb.sched_balance_rq(
        &env,
        &mut doms,
        &rd,
        &p,
        3,
        0,
        CpuIdleType::Idle,
        0,
        MigrationReason::Periodic,
    );
    let moved: Vec<(usize, usize, usize)> =
        lb.moves().iter().map(|m| (m.task, m.src, m.dst)).collect();
    assert_eq!(moved, [(4, 1, 3)], "{d:?}");
    assert_eq!(d.rd_overutilized, Some(true));
}
