//! Expected values come from `tools/pelt_reference.py`, an independent Python
//! implementation of the same kernel integer arithmetic. Regenerate with
//! `python3 tools/pelt_reference.py` (section numbers below match its output).

use super::*;
use proptest::prelude::*;

const MS: u64 = 1_000_000;
const NICE_0: u64 = 1024;

/// Mirror of `periodic()` in tools/pelt_reference.py: wake at `k * period` (rq was
/// idle), ticks at multiples of `tick` strictly inside the run, sleep at
/// `k * period + run` (never when `run >= period`). Samples `(util, load, runnable)`
/// of the task at the given times, and at the last wake / last sleep.
struct Periodic {
    se: SchedAvg,
    cfs: SchedAvg,
    clock: PeltClock,
    last_wake: (u64, u64, u64),
    last_sleep: (u64, u64, u64),
    samples: Vec<(u64, u64, u64)>,
}

fn snap(se: &SchedAvg) -> (u64, u64, u64) {
    (se.util_avg, se.load_avg, se.runnable_avg)
}

fn run_periodic(
    cap: u64,
    freq: u64,
    run: u64,
    period: u64,
    tick: u64,
    end: u64,
    sample_at: &[u64],
) -> Periodic {
    let mut events: Vec<(u64, u8)> = Vec::new();
    let mut k = 0;
    while k * period < end {
        let w = k * period;
        events.push((w, 0));
        let s = w + run;
        let mut t = (w / tick + 1) * tick;
        while t < s.min(end + 1) && t <= end {
            events.push((t, 1));
            t += tick;
        }
        if run < period && s <= end {
            events.push((s, 2));
        }
        if run >= period {
            break;
        }
        k += 1;
    }
    events.sort_unstable();
    let mut p = Periodic {
        se: SchedAvg::default(),
        cfs: SchedAvg::default(),
        clock: PeltClock::default(),
        last_wake: (0, 0, 0),
        last_sleep: (0, 0, 0),
        samples: Vec::new(),
    };
    let mut si = 0;
    for &(t, kind) in &events {
        while si < sample_at.len() && sample_at[si] < t {
            p.samples.push(snap(&p.se));
            si += 1;
        }
        match kind {
            0 => {
                p.clock.update(t, true, cap, freq);
                let now = p.clock.now();
                update_load_avg_se(&mut p.se, now, false, false, false, NICE_0);
                update_load_avg_cfs_rq(&mut p.cfs, now, 0, 0, false);
                p.last_wake = snap(&p.se);
            }
            1 => {
                p.clock.update(t, false, cap, freq);
                let now = p.clock.now();
                update_load_avg_se(&mut p.se, now, true, true, true, NICE_0);
                update_load_avg_cfs_rq(&mut p.cfs, now, NICE_0, 1, true);
            }
            _ => {
                p.clock.update(t, false, cap, freq);
                let now = p.clock.now();
                update_load_avg_se(&mut p.se, now, true, true, true, NICE_0);
                update_load_avg_cfs_rq(&mut p.cfs, now, NICE_0, 1, true);
                p.last_sleep = snap(&p.se);
                p.clock.update_idle(u64::from(p.cfs.util_sum));
            }
        }
    }
    while si < sample_at.len() {
        p.samples.push(snap(&p.se));
        si += 1;
    }
    p
}

// ---- 1. decay_load / table sanity --------------------------------------------

#[test]
fn pelt_decay_load_values() {
    // Kernel arithmetic: y^0 is 0xffffffff/2^32, so one half-life of 1024 gives 511.
    assert_eq!(decay_load(1024, 32), 511);
    assert_eq!(decay_load(LOAD_AVG_MAX, 1), 46718);
    assert_eq!(decay_load(LOAD_AVG_MAX, 1), LOAD_AVG_MAX - 1024);
    assert_eq!(decay_load(1 << 40, 5), 986_651_747_840);
    assert_eq!(decay_load(1000, 100), 114);
    assert_eq!(decay_load(u64::MAX, 31), 9_425_337_582_549_467_135);
    assert_eq!(decay_load(123_456_789, 2016), 0);
    assert_eq!(decay_load(123_456_789, 2017), 0);
    assert_eq!(decay_load(u64::MAX, 2016), 0);
    assert_eq!(decay_load(7, 0), 6);
}

#[test]
fn pelt_load_avg_max_converges() {
    // Documentation/scheduler/sched-pelt.c:calc_converged_max(): max = max*y + 1024
    // with y_inv = runnable_avg_yN_inv[1].
    let mut max = 1024u64;
    let mut steps = 0;
    loop {
        let next = decay_load(max, 1) + 1024;
        if next == max {
            break;
        }
        max = next;
        steps += 1;
        assert!(steps < 10_000);
    }
    assert_eq!(max, LOAD_AVG_MAX);
    // The table is strictly decreasing and halves over one period.
    for w in RUNNABLE_AVG_Y_N_INV.windows(2) {
        assert!(w[0] > w[1]);
    }
    assert_eq!(RUNNABLE_AVG_Y_N_INV[16], 0xb504_f333); // 2^32 / sqrt(2)
}

#[test]
fn pelt_accumulate_segments_values() {
    assert_eq!(accumulate_pelt_segments(1, 1024, 0), 1002);
    assert_eq!(accumulate_pelt_segments(1, 24, 1000), 1023);
    assert_eq!(accumulate_pelt_segments(5, 100, 200), 4166);
    assert_eq!(accumulate_pelt_segments(40, 500, 3), 26858);
    assert_eq!(accumulate_pelt_segments(3000, 1, 1), 46719);
}

#[test]
fn pelt_update_load_sum_units_and_backwards_time() {
    let mut a = SchedAvg::default();
    // < 1024 ns: nothing happens.
    assert!(!a.update_load_sum(1023, 1, 1, 1));
    assert_eq!(a.last_update_time, 0);
    // 1 ms = 976 units + 576 ns remainder kept in last_update_time.
    assert!(!a.update_load_sum(MS, 1, 1, 1));
    assert_eq!(a.last_update_time, 976 * 1024);
    assert_eq!(a.period_contrib, 976);
    assert_eq!(a.util_sum, 976 << 10);
    assert_eq!(a.load_sum, 976);
    // Backwards: resync only.
    assert!(!a.update_load_sum(5, 1, 1, 1));
    assert_eq!(a.last_update_time, 5);
    assert_eq!(a.period_contrib, 976);
    // load == 0 forces runnable = running = 0.
    let mut b = SchedAvg::default();
    b.update_load_sum(2048 * 1024, 0, 1, 1);
    assert_eq!((b.load_sum, b.runnable_sum, b.util_sum), (0, 0, 0));
    assert_eq!(b.get_pelt_divider(), PELT_MIN_DIVIDER);
}

// ---- 2. always-running task ----------------------------------------------------

#[test]
fn pelt_always_running_ramp() {
    let times: Vec<u64> = [1, 8, 32, 64, 100, 345].iter().map(|t| t * MS).collect();
    // (util_avg, load_avg, runnable_avg) at 1, 8, 32, 64, 100, 345 ms.
    let expect_tick_1ms = [
        (0, 0, 0),
        (156, 155, 156),
        (495, 495, 495),
        (751, 750, 751),
        (894, 894, 894),
        (1023, 1023, 1023),
    ];
    let expect_tick_4ms = [
        (0, 0, 0),
        (156, 156, 156),
        (495, 495, 495),
        (751, 750, 751),
        (894, 894, 894),
        (1023, 1023, 1023),
    ];
    for (tick, expect) in [(MS, expect_tick_1ms), (4 * MS, expect_tick_4ms)] {
        let p = run_periodic(1024, 1024, 1 << 40, 1 << 40, tick, 345 * MS, &times);
        assert_eq!(p.samples, expect.to_vec(), "tick {tick}");
        assert_eq!(p.cfs.util_avg, 1023);
        assert_eq!(p.cfs.util_avg, p.se.util_avg);
        assert_eq!(p.clock.lost_idle_time, 0);
    }
}

// ---- 3. 50 % duty task ---------------------------------------------------------

#[test]
fn pelt_half_duty_16ms_converged() {
    for tick in [MS, 4 * MS] {
        let p = run_periodic(1024, 1024, 8 * MS, 16 * MS, tick, 1016 * MS, &[]);
        assert_eq!(p.last_wake, (469, 469, 469), "min, tick {tick}");
        assert_eq!(p.last_sleep, (554, 554, 554), "max, tick {tick}");
        assert_eq!(p.cfs.util_avg, 554);
        assert_eq!(p.clock.lost_idle_time, 0);
        // mean of the swing ≈ 50 %
        assert_eq!((p.last_wake.0 + p.last_sleep.0) / 2, 511);
    }
}

// ---- 4. invariance through the PELT clock --------------------------------------

#[test]
fn pelt_half_duty_capacity_and_frequency_invariance() {
    // (cap, freq) -> (min, max, clock_pelt at the end)
    let cases = [
        (446, 1024, 195, 252, 1_011_484_374u64),
        (1024, 512, 225, 288, 1_012_000_000),
        (446, 512, 95, 112, 1_009_742_186),
    ];
    for (cap, freq, min, max, clock_pelt) in cases {
        let p = run_periodic(cap, freq, 8 * MS, 16 * MS, 4 * MS, 1016 * MS, &[]);
        assert_eq!(p.last_wake, (min, min, min), "cap {cap} freq {freq}");
        assert_eq!(p.last_sleep, (max, max, max), "cap {cap} freq {freq}");
        assert_eq!(p.clock.clock_pelt, clock_pelt);
        assert_eq!(p.clock.lost_idle_time, 0);
        // ≈ duty * cap/1024 * freq/1024
        let target = 512 * cap * freq / (1024 * 1024);
        assert!(
            (min..=max).contains(&target),
            "{target} not in {min}..={max}"
        );
    }
}

#[test]
fn pelt_lost_idle_time_when_saturated() {
    let mut p = run_periodic(446, 1024, 1 << 40, 1 << 40, 4 * MS, 500 * MS, &[]);
    assert_eq!(p.se.util_avg, 1012);
    assert_eq!(p.se.util_sum, 48_028_992);
    assert_eq!(p.se.period_contrib, 701);
    assert_eq!(p.clock.clock_task, 500 * MS);
    assert_eq!(p.clock.clock_pelt, 217_773_375);
    assert_eq!(p.cfs.util_sum, 48_028_992);
    p.clock.update_idle(u64::from(p.cfs.util_sum));
    assert_eq!(p.clock.lost_idle_time, 282_226_625);
    // After the idle resync, only the real idle time (10 ms) is credited.
    p.clock.update(510 * MS, true, 446, 1024);
    assert_eq!(p.clock.now(), 217_773_375 + 10 * MS);
    // A non-saturated rq loses nothing.
    let mut c = PeltClock {
        clock_task: 100,
        clock_pelt: 40,
        ..Default::default()
    };
    c.update_idle(47_791_489);
    assert_eq!(c.lost_idle_time, 0);
    c.update_idle(47_791_490);
    assert_eq!(c.lost_idle_time, 60);
}

#[test]
fn pelt_clock_update_rules() {
    let mut c = PeltClock::default();
    c.update(10_000, false, 512, 512);
    assert_eq!((c.clock_task, c.clock_pelt), (10_000, 2_500));
    c.update(9_000, true, 512, 512); // backwards: ignored
    assert_eq!((c.clock_task, c.clock_pelt), (10_000, 2_500));
    c.update(10_000, true, 512, 512); // zero delta while idle: resync
    assert_eq!(c.clock_pelt, 10_000);
    c.update(10_003, false, 1000, 1000); // floors twice: 3*1000>>10 = 2, 2*1000>>10 = 1
    assert_eq!(c.clock_pelt, 10_001);
}

// ---- 5. util_est ---------------------------------------------------------------

/// (ewma, enqueued, util_avg, runnable_avg, capacity) -> (ewma, enqueued) after a
/// sleep dequeue; from section 5 of tools/pelt_reference.py.
type UeCase = (u32, u32, u64, u64, u64, u32, u32);

fn check_ue(ver: UtilEstVersion, cases: &[UeCase]) {
    for &(ew, en, util, runnable, cap, ew2, en2) in cases {
        let mut a = SchedAvg {
            util_avg: util,
            runnable_avg: runnable,
            ..SchedAvg::default()
        };
        a.util_est = match ver {
            UtilEstVersion::V6_8 => UtilEst {
                ewma: ew | (en & UTIL_AVG_UNCHANGED),
                enqueued: 0,
            },
            UtilEstVersion::V5_13 => UtilEst {
                ewma: ew,
                enqueued: en,
            },
        };
        util_est_update(&mut a, true, ver, cap);
        assert_eq!(
            a.util_est,
            UtilEst {
                ewma: ew2,
                enqueued: en2
            },
            "{ver:?} case {:?}",
            (ew, en, util, runnable, cap)
        );
    }
}

const F: u32 = UTIL_AVG_UNCHANGED;

#[test]
fn pelt_util_est_v6_8_rules() {
    check_ue(
        UtilEstVersion::V6_8,
        &[
            (0, 0, 300, 300, 1024, 300 | F, 0),         // instant rise
            (300, 300, 295, 295, 1024, 300 | F, 0),     // within margin: keep, flag set
            (300, 300, 200, 200, 1024, 275 | F, 0),     // 1/4 decay: (1200-100)>>2
            (300, 300, 200, 400, 1024, 300 | F, 0),     // runnable filter: keep
            (300, 300, 200, 205, 1024, 275 | F, 0),     // runnable within margin: decay
            (900, 900, 500, 500, 446, 900, 0),          // util > capacity: return, no flag
            (300, 300 | F, 100, 100, 1024, 300 | F, 0), // flag set: unchanged
            (300, 290, 295, 295, 1024, 300 | F, 0),
            (301, 250, 293, 293, 1024, 301 | F, 0), // diff 8 < 10: keep
        ],
    );
    // Not a sleep: nothing.
    let mut a = SchedAvg {
        util_avg: 500,
        ..SchedAvg::default()
    };
    util_est_update(&mut a, false, UtilEstVersion::V6_8, 1024);
    assert_eq!(a.util_est, UtilEst::default());
}

#[test]
fn pelt_util_est_v5_13_rules() {
    check_ue(
        UtilEstVersion::V5_13,
        &[
            (0, 0, 300, 300, 1024, 300, 300 | F),     // fast-up
            (300, 300, 295, 295, 1024, 300, 300),     // both within margin: return
            (300, 300, 200, 200, 1024, 275, 200 | F), // 1/4 decay
            (300, 300, 200, 400, 1024, 275, 200 | F), // no runnable filter before v6.7
            (300, 300, 200, 205, 1024, 275, 200 | F),
            (900, 900, 500, 500, 446, 900, 900), // util > capacity: return
            (300, 300 | F, 100, 100, 1024, 300, 300 | F),
            (300, 290, 295, 295, 1024, 300, 290), // both within margin: return
            (301, 250, 293, 293, 1024, 301, 293 | F), // ewma within, enqueued moved: done
        ],
    );
    let feats = UtilEstFeatures {
        fastup: false,
        ..UtilEstFeatures::kernel_default(UtilEstVersion::V5_13)
    };
    let mut a = SchedAvg {
        util_avg: 250,
        runnable_avg: 250,
        ..SchedAvg::default()
    };
    a.util_est = UtilEst {
        ewma: 300,
        enqueued: 300,
    };
    util_est_update_with(&mut a, true, UtilEstVersion::V5_13, feats, 1024);
    assert_eq!(
        a.util_est,
        UtilEst {
            ewma: 287,
            enqueued: 250 | F
        }
    );
    let mut a = SchedAvg {
        util_avg: 400,
        runnable_avg: 400,
        ..SchedAvg::default()
    };
    a.util_est = UtilEst {
        ewma: 300,
        enqueued: 300,
    };
    util_est_update_with(&mut a, true, UtilEstVersion::V5_13, feats, 1024);
    assert_eq!(
        a.util_est,
        UtilEst {
            ewma: 325,
            enqueued: 400 | F
        }
    );
}

#[test]
fn pelt_util_est_flag_cleared_by_recompute_and_rq_sum() {
    let mut se = SchedAvg::default();
    se.util_est.ewma = 300 | F;
    // No period crossed: flag stays.
    update_load_avg_se(&mut se, 500 * 1024, true, true, true, NICE_0);
    assert_eq!(se.util_est.ewma, 300 | F);
    // Period crossed: flag cleared.
    assert!(update_load_avg_se(
        &mut se,
        2000 * 1024,
        true,
        true,
        true,
        NICE_0
    ));
    assert_eq!(se.util_est.ewma, 300);
    // Blocked updates do not clear it.
    se.util_est.ewma |= F;
    assert!(update_load_avg_blocked_se(&mut se, 5000 * 1024, NICE_0));
    assert_eq!(se.util_est.ewma, 300 | F);
    assert_eq!(task_util_est_raw(&se.util_est, UtilEstVersion::V6_8), 300);
    let old = UtilEst {
        ewma: 120,
        enqueued: 200 | F,
    };
    assert_eq!(task_util_est_raw(&old, UtilEstVersion::V5_13), 200);

    let mut cfs = SchedAvg::default();
    util_est_enqueue(&mut cfs, &se, UtilEstVersion::V6_8);
    util_est_enqueue(&mut cfs, &se, UtilEstVersion::V6_8);
    assert_eq!(cfs_rq_util_est(&cfs), 600);
    let big = SchedAvg {
        util_est: UtilEst {
            ewma: 1000,
            enqueued: 0,
        },
        ..SchedAvg::default()
    };
    util_est_dequeue(&mut cfs, &big, UtilEstVersion::V6_8);
    assert_eq!(cfs_rq_util_est(&cfs), 0); // floored at 0
    let t = SchedAvg {
        util_avg: 50,
        util_est: UtilEst {
            ewma: 40,
            enqueued: 0,
        },
        ..SchedAvg::default()
    };
    assert_eq!(task_util_est(&t, UtilEstVersion::V6_8), 50);
}

// ---- 6. attach / detach / removed / post_init ----------------------------------

fn converged_cfs() -> SchedAvg {
    run_periodic(1024, 1024, 8 * MS, 16 * MS, 4 * MS, 1016 * MS, &[]).cfs
}

#[test]
fn pelt_attach_detach_removed() {
    let mut cfs = converged_cfs();
    let before = SchedAvg {
        last_update_time: 1_015_999_488,
        load_sum: 26_420_800,
        runnable_sum: 26_420_800,
        util_sum: 26_420_800,
        period_contrib: 955,
        load_avg: 554,
        runnable_avg: 554,
        util_avg: 554,
        util_est: UtilEst::default(),
    };
    assert_eq!(cfs, before);

    let mut mig = SchedAvg {
        load_avg: 700,
        util_avg: 300,
        runnable_avg: 350,
        ..SchedAvg::default()
    };
    attach_entity_load_avg(&mut cfs, &mut mig, NICE_0);
    assert_eq!(
        (
            mig.last_update_time,
            mig.period_contrib,
            mig.load_sum,
            mig.runnable_sum,
            mig.util_sum
        ),
        (1_015_999_488, 955, 32_588, 16_685_550, 14_301_900)
    );
    assert_eq!(
        (
            cfs.load_sum,
            cfs.runnable_sum,
            cfs.util_sum,
            cfs.load_avg,
            cfs.runnable_avg,
            cfs.util_avg
        ),
        (59_790_912, 43_106_350, 40_722_700, 1254, 904, 854)
    );
    detach_entity_load_avg(&mut cfs, &mig, NICE_0);
    assert_eq!(cfs, before);

    let mut removed = RemovedLoad {
        load_avg: 600,
        util_avg: 500,
        runnable_avg: 600,
        nr: 2,
    };
    assert!(apply_removed(&mut cfs, &mut removed));
    assert_eq!(
        (
            cfs.load_sum,
            cfs.runnable_sum,
            cfs.util_sum,
            cfs.load_avg,
            cfs.runnable_avg,
            cfs.util_avg
        ),
        (0, 0, 2_584_300, 0, 0, 54)
    );
    assert_eq!(removed.nr, 0);
    assert!(!apply_removed(&mut cfs, &mut removed));
    // The floor: util_sum is never below util_avg * PELT_MIN_DIVIDER.
    assert!(u64::from(cfs.util_sum) >= cfs.util_avg * PELT_MIN_DIVIDER);

    // A zero-load entity gets load_sum 1 (40f5aa4c5eae corner case).
    let mut c2 = SchedAvg {
        period_contrib: 100,
        ..SchedAvg::default()
    };
    let mut z = SchedAvg::default();
    attach_entity_load_avg(&mut c2, &mut z, NICE_0);
    assert_eq!((z.load_sum, z.period_contrib, c2.load_sum), (1, 100, 1024));
}

#[test]
fn pelt_detach_floors_sums() {
    // Rounding can leave se sums above the cfs sums: the floor keeps cfs consistent.
    let mut cfs = SchedAvg {
        util_avg: 10,
        util_sum: 100,
        runnable_avg: 10,
        runnable_sum: 100,
        ..SchedAvg::default()
    };
    let se = SchedAvg {
        util_avg: 4,
        util_sum: 1000,
        runnable_avg: 4,
        runnable_sum: 1000,
        ..SchedAvg::default()
    };
    detach_entity_load_avg(&mut cfs, &se, NICE_0);
    assert_eq!(cfs.util_avg, 6);
    assert_eq!(u64::from(cfs.util_sum), 6 * PELT_MIN_DIVIDER);
    assert_eq!(cfs.runnable_sum, 6 * PELT_MIN_DIVIDER);
}

#[test]
fn pelt_post_init_entity_util_avg() {
    // (cpu_scale, cfs util_avg, cfs load_avg, weight) -> util
    let cases = [
        (1024, 0, 0, 1024, 512),
        (1024, 400, 800, 1024, 312),
        (1024, 100, 2000, 1024, 51),
        (446, 500, 1000, 1024, 0),
        (446, 300, 100, 1024, 73),
        (1024, 1023, 0, 1024, 0),
    ];
    for (cpu_scale, cu, cl, w, expect) in cases {
        let cfs = SchedAvg {
            util_avg: cu,
            load_avg: cl,
            ..SchedAvg::default()
        };
        let mut se = init_entity_runnable_average(w);
        assert_eq!(se.load_avg, w);
        post_init_entity_util_avg(&mut se, cpu_scale, &cfs, w);
        assert_eq!(
            (se.util_avg, se.runnable_avg),
            (expect, expect),
            "{cpu_scale} {cu} {cl}"
        );
    }
}

#[test]
fn pelt_update_load_avg_attach_then_migrate_away() {
    let mut cfs = SchedAvg::default();
    let mut removed = RemovedLoad::default();
    let mut se = init_entity_runnable_average(NICE_0);
    post_init_entity_util_avg(&mut se, 1024, &cfs, NICE_0);
    let st = SeState {
        on_rq: false,
        runnable: false,
        running: false,
        weight: NICE_0,
    };
    // First enqueue at 10 ms: last_update_time == 0, DO_ATTACH attaches.
    let changed = update_load_avg(
        10 * MS,
        &mut cfs,
        &mut removed,
        CfsRqState::default(),
        &mut se,
        st,
        UPDATE_TG | DO_ATTACH,
    );
    assert!(changed);
    assert_eq!(se.last_update_time, cfs.last_update_time);
    assert_eq!(
        (cfs.util_avg, cfs.load_avg, cfs.runnable_avg),
        (512, 1024, 512)
    );
    // Leaves while blocked: removed, then subtracted at the next cfs update.
    remove_entity_load_avg(&mut removed, &mut se, cfs.last_update_time, NICE_0);
    se.last_update_time = 0;
    assert_eq!(removed.nr, 1);
    assert!(update_cfs_rq_load_avg(
        &mut cfs,
        &mut removed,
        10 * MS,
        0,
        0,
        false
    ));
    assert_eq!((cfs.util_avg, cfs.load_avg, cfs.runnable_avg), (0, 0, 0));
    // Enqueued on another CPU: attached there with the destination's window.
    let mut dst = SchedAvg {
        last_update_time: 7 * 1024,
        period_contrib: 7,
        ..SchedAvg::default()
    };
    let mut dst_removed = RemovedLoad::default();
    let synced = se;
    update_load_avg(
        7 * 1024,
        &mut dst,
        &mut dst_removed,
        CfsRqState::default(),
        &mut se,
        st,
        UPDATE_TG | DO_ATTACH,
    );
    assert_eq!((se.last_update_time, se.period_contrib), (7 * 1024, 7));
    assert_eq!(dst.util_avg, synced.util_avg);
    assert_eq!(dst.load_avg, synced.load_avg);
}

// ---- properties ----------------------------------------------------------------

proptest! {
    #[test]
    fn prop_util_avg_bounded(steps in prop::collection::vec((1u64..40_000_000, 0u8..3), 1..200)) {
        // state 0: sleeping, 1: runnable waiting, 2: running
        let mut se = SchedAvg::default();
        let mut now = 0u64;
        for (dt, st) in steps {
            now += dt;
            update_load_avg_se(&mut se, now, st > 0, st > 0, st == 2, NICE_0);
            prop_assert!(se.util_avg <= 1024, "util {}", se.util_avg);
            prop_assert!(se.runnable_avg <= 1024);
            prop_assert!(se.load_avg <= 1024);
            prop_assert!(se.runnable_avg >= se.util_avg);
            prop_assert!(se.runnable_sum >= u64::from(se.util_sum));
        }
    }

    /// An entity updated with its cfs_rq (the same `last_update_time` and
    /// `period_contrib`, as after its attach) takes `update_load_avg()`'s aligned path:
    /// the same signals and result as `__update_load_avg_se()` then
    /// `update_cfs_rq_load_avg()` run on their own, over steps below, across and far
    /// beyond a period, back in time, with and without load on either side, removed
    /// load, and the cfs_rq updated alone in between (which leaves the aligned path).
    #[test]
    fn prop_update_load_avg_aligned_equals_separate(
        steps in prop::collection::vec(
            (-3_000i64..40_000_000, 0u8..3, 0u64..4, any::<bool>(), 0u8..8),
            1..120,
        ),
    ) {
        let mut cfs = SchedAvg::default();
        let mut removed = RemovedLoad::default();
        let mut se = init_entity_runnable_average(NICE_0);
        post_init_entity_util_avg(&mut se, 1024, &cfs, NICE_0);
        let mut now = 5 * MS;
        let first = SeState { on_rq: false, runnable: false, running: false, weight: NICE_0 };
        update_load_avg(now, &mut cfs, &mut removed, CfsRqState::default(), &mut se, first, UPDATE_TG | DO_ATTACH);
        for (dt, st, others, curr, extra) in steps {
            now = now.wrapping_add(dt as u64);
            let se_state = SeState { on_rq: st > 0, runnable: st > 0, running: st == 2, weight: NICE_0 };
            let cfs_state = CfsRqState {
                load_weight_sum: u64::from(st > 0) * NICE_0 + others * 335,
                h_nr_runnable: u64::from(st > 0) + others,
                curr_running: st == 2 || curr,
            };
            if extra == 0 {
                removed.nr += 1;
                removed.load_avg += 100;
                removed.util_avg += 50;
                removed.runnable_avg += 60;
            }
            let (mut c, mut r, mut e) = (cfs, removed, se);
            update_load_avg_se(&mut e, now, se_state.on_rq, se_state.runnable, se_state.running, NICE_0);
            let want = update_cfs_rq_load_avg(&mut c, &mut r, now, cfs_state.load_weight_sum, cfs_state.h_nr_runnable, cfs_state.curr_running);
            let got = update_load_avg(now, &mut cfs, &mut removed, cfs_state, &mut se, se_state, UPDATE_TG);
            prop_assert_eq!((cfs, removed, se, got), (c, r, e, want));
            if extra == 1 {
                // the cfs_rq alone (another entity's update, a blocked decay)
                now += 3_000;
                update_cfs_rq_load_avg(&mut cfs, &mut removed, now, cfs_state.load_weight_sum, 1, false);
            }
        }
    }

    #[test]
    fn prop_decay_load_monotone(val in any::<u64>(), n in 0u64..2100, m in 0u64..2100, d in any::<u64>()) {
        let (lo, hi) = if n <= m { (n, m) } else { (m, n) };
        prop_assert!(decay_load(val, hi) <= decay_load(val, lo));
        prop_assert!(decay_load(val, n) <= val);
        let v2 = val.saturating_add(d);
        prop_assert!(decay_load(val, n) <= decay_load(v2, n));
    }

    #[test]
    fn prop_pelt_clock_never_ahead(steps in prop::collection::vec((1u64..10_000_000, any::<bool>(), 1u64..=1024, 1u64..=1024), 1..100)) {
        let mut c = PeltClock::default();
        let mut t = 0;
        for (dt, idle, cap, freq) in steps {
            t += dt;
            let before = c.now();
            c.update(t, idle, cap, freq);
            prop_assert!(c.clock_pelt <= c.clock_task);
            prop_assert!(c.now() >= before);
        }
    }
}

/// An RT/DL signal at zero and not running ages by its clock alone: the same
/// `last_update_time`, `period_contrib` and result as the full `___update_load_sum()` +
/// `___update_load_avg()` over steps below, across and far beyond a period, and back in
/// time; a running update leaves the shortcut.
#[test]
fn a_null_rq_signal_ages_as_the_full_update() {
    let (mut short, mut full) = (SchedAvg::default(), SchedAvg::default());
    let mut now = 5_000u64;
    for step in [
        0u64,
        1,
        1023,
        1024,
        700,
        5_000,
        1 << 20,
        3,
        40_000_000,
        999,
        2048,
    ] {
        now += step;
        let a = update_rt_rq_load_avg(&mut short, now, false);
        let b = full.update_load_sum(now, 0, 0, 0) && {
            full.update_load_avg(1);
            true
        };
        assert_eq!((a, short), (b, full), "step {step}");
        assert!(short.is_null());
    }
    // time going backwards resyncs the clock only
    assert!(!update_dl_rq_load_avg(&mut short, now - 10_000, false));
    assert_eq!(short.last_update_time, now - 10_000);
    // running: the signal grows
    assert!(update_rt_rq_load_avg(&mut short, now + 2 * MS, true));
    assert!(!short.is_null());
}
