//! Tests of the fair run queue (EEVDF and CFS; kernel/sched/fair.c, v6.11).

use super::*;

fn params(variant: FairVariant) -> FairParams {
    FairParams {
        variant,
        base_slice: 3_000_000,
        run_to_parity: true,
        place_lag: true,
        place_deadline_initial: true,
        wakeup_preemption: true,
        sched_latency: 24_000_000,
        min_granularity: 3_000_000,
        wakeup_granularity: 4_000_000,
        nr_latency: 8,
        gentle_fair_sleepers: true,
        start_debit: true,
        tick_slice_cap: true,
        cfs_base_slice: true,
        idle_min_granularity: true,
        tick_nsec: 4_000_000,
    }
}

fn ent(nice: i32, p: &FairParams) -> SchedEntity {
    SchedEntity::new(LoadWeight::for_nice(nice, false), p.base_slice)
}

/// `dequeue_entity()` with DEQUEUE_SAVE and no DEQUEUE_MOVE (`set_user_nice()` of the
/// running task) leaves min_vruntime where it was, so CFS puts the entity back at its
/// own vruntime; with DEQUEUE_MOVE min_vruntime advances to the queue's leftmost and
/// the entity comes back behind it (kernel/sched/fair.c, v6.11: "we'll be penalized").
#[test]
fn a_save_without_move_does_not_advance_min_vruntime() {
    let p = params(FairVariant::Cfs);
    let restored = |save_only: bool| {
        let mut ents = vec![ent(0, &p), ent(0, &p)];
        let mut rq = CfsRq::default();
        ents[0].vruntime = 1_000;
        ents[1].vruntime = 5_000;
        rq.enqueue_entity(&mut ents, 0);
        rq.enqueue_entity(&mut ents, 1);
        rq.set_next_entity(&mut ents, 0, 0);
        rq.update_min_vruntime(&ents);
        assert_eq!(rq.min_vruntime, 1_000);
        rq.dequeue_entity(&mut ents, 0, false, save_only, &p);
        rq.put_prev_entity(&ents, 0);
        rq.cfs_migrate_in(&mut ents, 0);
        (rq.min_vruntime, ents[0].vruntime)
    };
    assert_eq!(restored(true), (1_000, 1_000));
    assert_eq!(restored(false), (5_000, 5_000));
}

/// Of queued entities with equal keys the one enqueued first is picked, as the
/// kernel's tree walk finds it (`rb_add_cached()` puts an equal key to the right), even
/// after a dequeue of another entity; and curr loses a tie to the queue.
#[test]
fn equal_keys_pick_the_first_enqueued() {
    for variant in [FairVariant::Eevdf, FairVariant::Cfs] {
        let p = params(variant);
        let mut ents = vec![ent(0, &p), ent(0, &p), ent(0, &p), ent(0, &p)];
        for e in &mut ents {
            e.vruntime = 1_000;
            e.deadline = 4_000;
        }
        // 0 leaves first, so a swap-remove would move 2 ahead of 1
        ents[0].vruntime = 900;
        ents[0].deadline = 3_000;
        let mut rq = CfsRq {
            min_vruntime: 900,
            ..CfsRq::default()
        };
        for i in 0..3 {
            rq.enqueue_entity(&mut ents, i);
        }
        rq.dequeue_entity(&mut ents, 0, true, false, &p);
        assert_eq!(rq.pick_next(&ents, &p), Some(1), "{variant:?}");
        // curr of equal key loses to the leftmost
        rq.enqueue_entity(&mut ents, 3);
        rq.set_next_entity(&mut ents, 3, 0);
        ents[3].vlag = 0; // not a protected slice (RUN_TO_PARITY)
        assert_eq!(rq.pick_next(&ents, &p), Some(1), "{variant:?}");
    }
}

/// `check_preempt_wakeup_fair()` (v6.11) returns before its SCHED_IDLE rule when
/// WAKEUP_PREEMPTION is off: a SCHED_IDLE curr is then not preempted either.
#[test]
fn without_wakeup_preemption_an_idle_policy_curr_is_not_preempted() {
    let mut p = params(FairVariant::Eevdf);
    let mut ents = vec![ent(0, &p), ent(0, &p)];
    let mut rq = CfsRq::default();
    rq.enqueue_entity(&mut ents, 0);
    rq.set_next_entity(&mut ents, 0, 0);
    rq.enqueue_entity(&mut ents, 1);
    assert!(rq.check_preempt_wakeup(&ents, 1, true, false, true, &p));
    p.wakeup_preemption = false;
    assert!(!rq.check_preempt_wakeup(&ents, 1, true, false, true, &p));
}

/// Runs `n` entities round-robin by the EEVDF rules with a tick; returns exec times.
fn simulate(variant: FairVariant, nices: &[i32], ticks: u64) -> Vec<u64> {
    let p = params(variant);
    let mut ents: Vec<SchedEntity> = nices.iter().map(|&n| ent(n, &p)).collect();
    let mut rq = CfsRq::default();
    for i in 0..ents.len() {
        rq.place_entity(&mut ents, i, true, &p);
        rq.enqueue_entity(&mut ents, i);
    }
    let mut now = 0;
    let first = rq.pick_next(&ents, &p).unwrap();
    rq.set_next_entity(&mut ents, first, now);
    for _ in 0..ticks {
        now += p.tick_nsec;
        let (_, resched) = rq.update_curr(&mut ents, now, &p);
        let resched = resched || rq.check_preempt_tick(&ents, &p);
        if resched {
            let c = rq.curr.unwrap();
            rq.put_prev_entity(&ents, c);
            let n = rq.pick_next(&ents, &p).unwrap();
            rq.set_next_entity(&mut ents, n, now);
        }
    }
    ents.iter().map(|e| e.sum_exec_runtime).collect()
}

#[test]
fn eevdf_shares_by_weight() {
    let t = simulate(FairVariant::Eevdf, &[0, 0, 0], 3000);
    let total: u64 = t.iter().sum();
    for x in &t {
        let share = *x as f64 / total as f64;
        assert!((share - 1.0 / 3.0).abs() < 0.01, "{t:?}");
    }
    // nice 0 vs nice 5: weights 1024 vs 335
    let t = simulate(FairVariant::Eevdf, &[0, 5], 5000);
    let share = t[0] as f64 / (t[0] + t[1]) as f64;
    assert!((share - 1024.0 / 1359.0).abs() < 0.02, "{t:?} {share}");
}

#[test]
fn cfs_shares_by_weight() {
    let t = simulate(FairVariant::Cfs, &[0, 0], 3000);
    let share = t[0] as f64 / (t[0] + t[1]) as f64;
    assert!((share - 0.5).abs() < 0.01, "{t:?}");
    let t = simulate(FairVariant::Cfs, &[0, 5], 5000);
    let share = t[0] as f64 / (t[0] + t[1]) as f64;
    assert!((share - 1024.0 / 1359.0).abs() < 0.03, "{t:?} {share}");
}

#[test]
fn avg_vruntime_rounds_down_and_eligibility_is_exact() {
    let p = params(FairVariant::Eevdf);
    let mut ents = vec![ent(0, &p), ent(0, &p)];
    let mut rq = CfsRq {
        min_vruntime: 100,
        ..CfsRq::default()
    };
    ents[0].vruntime = 100;
    ents[1].vruntime = 103;
    rq.enqueue_entity(&mut ents, 0);
    rq.enqueue_entity(&mut ents, 1);
    assert_eq!(rq.avg_vruntime(&ents), 101); // (0 + 3)/2 = 1.5 -> 1
    assert!(rq.entity_eligible(&ents, 0));
    assert!(!rq.entity_eligible(&ents, 1));
    // a queued entity's vruntime moves only through the queue (avg_vruntime_sub/add)
    rq.dequeue_entity(&mut ents, 1, true, false, &p);
    ents[1].vruntime = 97;
    rq.enqueue_entity(&mut ents, 1);
    assert_eq!(rq.avg_vruntime(&ents), 98); // (0 - 3)/2 = -1.5 -> -2
}

#[test]
fn lag_is_preserved_across_placement() {
    let p = params(FairVariant::Eevdf);
    let mut ents = vec![ent(0, &p), ent(0, &p), ent(0, &p)];
    let mut rq = CfsRq::default();
    for i in 0..3 {
        rq.place_entity(&mut ents, i, true, &p);
        if i == 2 {
            ents[2].vruntime = ents[2].vruntime.wrapping_sub(1000);
        }
        rq.enqueue_entity(&mut ents, i);
    }
    rq.dequeue_entity(&mut ents, 2, true, false, &p);
    let lag = ents[2].vlag;
    assert!(lag > 0);
    rq.place_entity(&mut ents, 2, false, &p);
    rq.enqueue_entity(&mut ents, 2);
    let v = rq.avg_vruntime(&ents);
    let lag_after = v.wrapping_sub(ents[2].vruntime) as i64;
    assert!((lag_after - lag).abs() <= 1, "{lag} vs {lag_after}");
}

/// `check_preempt_tick()` of v6.3–v6.5 caps the ideal runtime at `sysctl_sched_latency`;
/// v6.2 and earlier do not. A nice −20 curr with eight nice 19 tasks (nine > nr_latency)
/// gets a slice of 26.96 ms (period 9 × 3 ms), above the 24 ms latency: after 25 ms
/// the capped tick reschedules, the uncapped one does not (curr's vruntime has moved
/// only 25 ms × 1024 / 88761 ≈ 0.29 ms past the others').
#[test]
fn the_cfs_tick_caps_the_slice_at_the_latency_from_v6_3() {
    let resched = |cap: bool| {
        let p = FairParams {
            tick_slice_cap: cap,
            ..params(FairVariant::Cfs)
        };
        let mut ents = vec![ent(-20, &p)];
        ents.extend((0..8).map(|_| ent(19, &p)));
        let mut rq = CfsRq::default();
        for i in 0..ents.len() {
            rq.enqueue_entity(&mut ents, i);
        }
        rq.set_next_entity(&mut ents, 0, 0);
        assert!(rq.sched_slice(&ents, 0, &p) > p.sched_latency);
        rq.update_curr(&mut ents, 25_000_000, &p);
        rq.check_preempt_tick(&ents, &p)
    };
    assert!(resched(true), "v6.3-v6.5: 25 ms > min(26.96 ms, 24 ms)");
    assert!(!resched(false), "v6.2 and earlier: 25 ms < 26.96 ms");
}

/// CFS `sched_slice()` floors the slice at `sysctl_sched_min_granularity` from v5.12
/// (BASE_SLICE); v5.11 and earlier give a light entity its share of the period alone.
/// A nice 19 curr (weight 15) beside a nice 0 task: 24 ms × 15 / 1039 = 0.35 ms, or
/// 3 ms with the floor. After 1 ms the tick reschedules it without the floor (1 ms >
/// 0.35 ms), not with it (1 ms < 3 ms, and under the minimum granularity).
#[test]
fn the_cfs_slice_has_the_min_granularity_floor_from_v5_12() {
    let resched = |floor: bool| {
        let p = FairParams {
            cfs_base_slice: floor,
            ..params(FairVariant::Cfs)
        };
        let mut ents = vec![ent(19, &p), ent(0, &p)];
        let mut rq = CfsRq::default();
        for i in 0..ents.len() {
            rq.enqueue_entity(&mut ents, i);
        }
        rq.set_next_entity(&mut ents, 0, 0);
        let slice = rq.sched_slice(&ents, 0, &p);
        rq.update_curr(&mut ents, 1_000_000, &p);
        (slice, rq.check_preempt_tick(&ents, &p))
    };
    let (slice, tick) = resched(false);
    assert_eq!(slice, 346_487, "v5.11 and earlier: 24 ms × 15 / 1039");
    assert!(tick);
    assert_eq!(
        resched(true),
        (3_000_000, false),
        "v5.12-v6.5: the 3 ms floor"
    );
}

/// A SCHED_IDLE entity (`se_is_idle()`).
fn idle_ent(p: &FairParams) -> SchedEntity {
    SchedEntity {
        idle: true,
        ..SchedEntity::new(LoadWeight::for_nice(0, true), p.base_slice)
    }
}

/// CFS `sched_slice()` (v5.16–v6.5) floors a SCHED_IDLE entity beside a non-idle one at
/// `sysctl_sched_idle_min_granularity` (0.75 ms, unscaled), not the scaled minimum
/// granularity (3 ms here); v5.15 and earlier use the latter. Its share of the period is
/// 24 ms × 3 / 1027 = 70 µs, so the floor decides: after 1 ms as curr the tick
/// reschedules it (1 ms > 0.75 ms) only with the SCHED_IDLE floor. On a queue of
/// SCHED_IDLE entities only (`sched_idle_cfs_rq()`) the floor stays 3 ms: nine of them
/// share a 27 ms period, 3 ms less `__calc_delta()`'s few ns, raised to 3 ms.
#[test]
fn a_sched_idle_cfs_slice_has_the_idle_min_granularity_floor_from_v5_16() {
    let run = |rule: bool, others: Vec<bool>| {
        let p = FairParams {
            idle_min_granularity: rule,
            ..params(FairVariant::Cfs)
        };
        let mut ents = vec![idle_ent(&p)];
        ents.extend(
            others
                .iter()
                .map(|&i| if i { idle_ent(&p) } else { ent(0, &p) }),
        );
        let mut rq = CfsRq::default();
        for i in 0..ents.len() {
            rq.enqueue_entity(&mut ents, i);
        }
        rq.set_next_entity(&mut ents, 0, 0);
        assert_eq!(rq.sched_idle_cfs_rq(&ents), others.iter().all(|&i| i));
        let slice = rq.sched_slice(&ents, 0, &p);
        rq.update_curr(&mut ents, 1_000_000, &p);
        (slice, rq.check_preempt_tick(&ents, &p))
    };
    assert_eq!(run(true, vec![false]), (750_000, true), "v5.16-v6.5");
    assert_eq!(
        run(false, vec![false]),
        (3_000_000, false),
        "v5.15 and earlier"
    );
    assert_eq!(run(true, vec![true; 8]).0, 3_000_000, "all SCHED_IDLE");
}

/// CFS `place_entity()` (v5.16–v6.5) credits a waking SCHED_IDLE entity
/// `sysctl_sched_min_granularity` / 2 (GENTLE_FAIR_SLEEPERS) below `min_vruntime`, not
/// `sysctl_sched_latency` / 2: 1.5 ms instead of 12 ms here. A normal entity keeps 12 ms.
#[test]
fn a_waking_sched_idle_cfs_entity_gets_the_min_granularity_credit_from_v5_16() {
    let placed = |rule: bool, idle: bool| {
        let p = FairParams {
            idle_min_granularity: rule,
            ..params(FairVariant::Cfs)
        };
        let mut ents = vec![if idle { idle_ent(&p) } else { ent(0, &p) }];
        let mut rq = CfsRq {
            min_vruntime: 100_000_000,
            ..CfsRq::default()
        };
        rq.place_entity(&mut ents, 0, false, &p);
        rq.min_vruntime - ents[0].vruntime
    };
    assert_eq!(placed(true, true), 1_500_000, "v5.16-v6.5");
    assert_eq!(placed(false, true), 12_000_000, "v5.15 and earlier");
    assert_eq!(placed(true, false), 12_000_000);
}

/// CFS `task_fork_fair()` (v3.10–v6.5): the child starts at its parent's vruntime,
/// placed at least at `min_vruntime` + `sched_vslice()` of the parent's queue with the
/// child added (three nice 0 tasks: 24 ms / 3), and is left relative to that queue's
/// `min_vruntime` for the target's to be added at the enqueue.
#[test]
fn a_cfs_child_is_placed_at_fork_from_its_parents_vruntime() {
    let p = params(FairVariant::Cfs);
    let child_on = |parent_v: u64| {
        let mut ents = vec![ent(0, &p), ent(0, &p), ent(0, &p)];
        ents[0].vruntime = parent_v;
        ents[1].vruntime = 26_000_000;
        let mut parent_rq = CfsRq {
            min_vruntime: 26_000_000,
            ..CfsRq::default()
        };
        parent_rq.enqueue_entity(&mut ents, 0);
        parent_rq.enqueue_entity(&mut ents, 1);
        parent_rq.set_next_entity(&mut ents, 0, 0);
        parent_rq.task_fork_fair(&mut ents, 2, &p);
        let rel = ents[2].vruntime;
        let target = CfsRq {
            min_vruntime: 100_000_000,
            ..CfsRq::default()
        };
        target.cfs_migrate_in(&mut ents, 2);
        (rel, ents[2].vruntime)
    };
    // a parent 14 ms ahead: the child at its vruntime
    assert_eq!(child_on(40_000_000), (14_000_000, 114_000_000));
    // a parent 2 ms ahead: START_DEBIT's 8 ms (less 2 ns: `__calc_delta()`'s
    // fixed point)
    assert_eq!(child_on(28_000_000), (7_999_998, 107_999_998));
}
