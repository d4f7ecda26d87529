//! PELT (per-entity load tracking) and util_est with the kernel's fixed-point arithmetic.
//!
//! A pure mechanism module: no scheduling policy, no I/O, no floating point. Every
//! function models one kernel function (cited in its doc comment with the version read)
//! and keeps the kernel's integer widths: `util_sum` is `u32` and wraps like the
//! kernel's, `decay_load()` keeps the high part of an exact 64×32-bit product
//! (`mul_u64_u32_shr`), `max_t(u32, ..)` truncates both operands to 32 bits, and so on.
//!
//! Sources read (torvalds/linux and LKML patches, via the reference corpus):
//! `kernel/sched/pelt.c` (≈v6.14, identical to v6.8 in the parts modelled except the
//! `h_nr_running` → `h_nr_runnable` rename), `kernel/sched/pelt.h` (v5.x..v6.8),
//! `kernel/sched/sched-pelt.h`, and the v6.8 `kernel/sched/fair.c` functions
//! `attach_entity_load_avg()`, `detach_entity_load_avg()`, `dequeue_load_avg()`,
//! `update_cfs_rq_load_avg()`, `post_init_entity_util_avg()` and `util_est_update()`
//! (the v6.8 form from commit "sched/fair: Simplify util_est", the v5.13–v6.7 form
//! from the lines that commit removed).
//!
//! # How the engine uses this module
//!
//! State per CPU (rq): one [`PeltClock`], `avg_rt`/`avg_dl`/`cfs` [`SchedAvg`]s and one
//! [`RemovedLoad`] for the root cfs_rq. State per task: one [`SchedAvg`] (its
//! `util_est` field holds the task's [`UtilEst`]). "`now`" below is always
//! [`PeltClock::now`] of the task's rq, read *after* [`PeltClock::update`].
//! Inputs describe the state *before* the event changes it (as in the kernel, where the
//! PELT update happens before `se->on_rq` / `cfs_rq->load` / `h_nr_running` change).
//!
//! | Event (spec §13) | Calls, in this order |
//! |---|---|
//! | Any rq clock update (every event on that CPU) | [`PeltClock::update`]`(t, curr_is_idle, arch_scale_cpu_capacity, arch_scale_freq_capacity)` with the class that ran during the elapsed interval |
//! | Tick on a busy CPU | clock update; [`update_rt_rq_load_avg`]`(rt, now, curr is RT)`, [`update_dl_rq_load_avg`]`(dl, now, curr is DL)` (`update_other_load_avgs`); if curr is CFS: [`update_load_avg`]`(now, cfs, removed, cfs_state, curr, SeState{on_rq, runnable, running: true}, UPDATE_TG)` |
//! | Fork | [`init_entity_runnable_average`]; after the CPU is chosen [`post_init_entity_util_avg`]; then the enqueue below (its `last_update_time == 0`, so `DO_ATTACH` attaches it) |
//! | Wake-up that changes CPU (`migrate_task_rq_fair`, task not on a rq) | [`remove_entity_load_avg`]`(old_removed, se, old_cfs.last_update_time, weight)` then `se.last_update_time = 0` |
//! | Enqueue (`enqueue_task_fair`) | [`util_est_enqueue`] first (before any frequency update); then [`update_load_avg`] with `SeState{on_rq: false, ..}`, the cfs_rq state without the task, flags `UPDATE_TG \| DO_ATTACH`; then add the weight / `h_nr` |
//! | Dequeue to sleep (`dequeue_task_fair`, `DEQUEUE_SLEEP`) | [`util_est_dequeue`]; [`update_load_avg`] with `SeState{on_rq: true, running: is curr, ..}` and the cfs_rq state still including the task, flags `UPDATE_TG`; remove weight / `h_nr`; finally [`util_est_update`]`(se, task_sleep = true, ..)` |
//! | Dequeue for an on-rq migration (load balance `detach_task`) | [`util_est_dequeue`]; [`update_load_avg`] with flags `UPDATE_TG \| DO_DETACH`; `se.last_update_time = 0`; no `util_est_update` (not a sleep); on the destination the enqueue row attaches it |
//! | Context switch | `put_prev_entity` (prev still queued): [`update_load_avg`] with `running: true`, flags 0; `set_next_entity`: [`update_load_avg`] with `running: false`, `UPDATE_TG` (zero elapsed time, so inputs hardly matter) |
//! | CPU runs out of work (`pick_next_task_fair` idle path) | [`PeltClock::update_idle`]`(cfs.util_sum + rt.util_sum + dl.util_sum)` before entering idle |
//! | Blocked-load decay of an idle CPU (§1.9) | clock update with `idle = true`; [`update_rt_rq_load_avg`]/[`update_dl_rq_load_avg`] with `running = false`; [`update_cfs_rq_load_avg`] with zero weight |
//! | Reading a blocked task's signals (wake-up placement, `sync_entity_load_avg`) | [`sync_entity_load_avg`]`(se, its cfs.last_update_time, weight)` |
//! | Frequency change | nothing here; the next [`PeltClock::update`] uses the new `freq_scale` |
//!
//! [`update_load_avg`] returns `true` when the root cfs_rq signal changed (decayed,
//! attached or detached): the kernel then calls `cfs_rq_util_change()` →
//! `cpufreq_update_util()`.
//!
//! Not modelled: task groups (`propagate_entity_load_avg`, `update_tg_load_avg`,
//! group-entity weights), CFS bandwidth throttling (`cfs_rq_clock_pelt` equals
//! `rq_clock_pelt` here), IRQ/steal time in `clock_task` and `avg_irq`, the hardware
//! pressure signal, and `migrate_se_pelt_lag()` (the estimate of decay missed by an
//! idle source CPU).

use crate::platform::{SCHED_CAPACITY_SCALE, SCHED_CAPACITY_SHIFT};

/// `LOAD_AVG_PERIOD` (kernel/sched/sched-pelt.h): `y^LOAD_AVG_PERIOD = 1/2`.
pub const LOAD_AVG_PERIOD: u64 = 32;
/// `LOAD_AVG_MAX` (kernel/sched/sched-pelt.h): the converged maximum of
/// `1024 * Σ y^n` under the kernel's integer arithmetic.
pub const LOAD_AVG_MAX: u64 = 47742;
/// `PELT_MIN_DIVIDER` (kernel/sched/pelt.h): `LOAD_AVG_MAX - 1024`.
pub const PELT_MIN_DIVIDER: u64 = LOAD_AVG_MAX - 1024;

/// `runnable_avg_yN_inv[]` (kernel/sched/sched-pelt.h, unchanged since v4.x):
/// `floor((2^32 - 1) * y^n)` for `n = 0..31`.
pub const RUNNABLE_AVG_Y_N_INV: [u32; 32] = [
    0xffff_ffff,
    0xfa83_b2da,
    0xf525_7d14,
    0xefe4_b99a,
    0xeac0_c6e6,
    0xe5b9_06e6,
    0xe0cc_deeb,
    0xdbfb_b796,
    0xd744_fcc9,
    0xd2a8_1d91,
    0xce24_8c14,
    0xc9b9_bd85,
    0xc567_2a10,
    0xc12c_4cc9,
    0xbd08_a39e,
    0xb8fb_af46,
    0xb504_f333,
    0xb123_f581,
    0xad58_3ee9,
    0xa9a1_5ab4,
    0xa5fe_d6a9,
    0xa270_4302,
    0x9ef5_325f,
    0x9b8d_39b9,
    0x9837_f050,
    0x94f4_efa8,
    0x91c3_d373,
    0x8ea4_398a,
    0x8b95_c1e3,
    0x8898_0e80,
    0x85aa_c367,
    0x82cd_8698,
];

/// `UTIL_AVG_UNCHANGED` (include/linux/sched.h, MSB since v5.13): set in a task's
/// util_est by `util_est_update()`, cleared when its PELT averages are recomputed.
pub const UTIL_AVG_UNCHANGED: u32 = 0x8000_0000;
/// `UTIL_EST_WEIGHT_SHIFT` (include/linux/sched.h): EWMA weight `w = 1/4`.
pub const UTIL_EST_WEIGHT_SHIFT: u32 = 2;
/// `UTIL_EST_MARGIN` (kernel/sched/fair.c): `SCHED_CAPACITY_SCALE / 100` = 10.
pub const UTIL_EST_MARGIN: u64 = SCHED_CAPACITY_SCALE / 100;

/// `UPDATE_TG` flag of `update_load_avg()` (kernel/sched/fair.c, v6.8). Task-group
/// propagation is not modelled, so it has no effect here; accepted for fidelity.
pub const UPDATE_TG: u32 = 0x1;
/// `SKIP_AGE_LOAD` flag of `update_load_avg()` (kernel/sched/fair.c, v6.8): do not
/// age the entity's own signals.
pub const SKIP_AGE_LOAD: u32 = 0x2;
/// `DO_ATTACH` flag of `update_load_avg()` (kernel/sched/fair.c, v6.8): attach the
/// entity when its `last_update_time` is 0 (new or migrated task).
pub const DO_ATTACH: u32 = 0x4;
/// `DO_DETACH` flag of `update_load_avg()` (kernel/sched/fair.c, v6.8): detach the
/// entity (on-rq migration).
pub const DO_DETACH: u32 = 0x8;

/// `cap_scale(v, s)` (kernel/sched/sched.h): `(v * s) >> SCHED_CAPACITY_SHIFT`, with
/// the kernel's wrapping 64-bit multiply.
#[inline]
fn cap_scale(v: u64, s: u64) -> u64 {
    v.wrapping_mul(s) >> SCHED_CAPACITY_SHIFT
}

/// Models `kernel/sched/pelt.c:decay_load()` (v6.8): `val * y^n`.
///
/// Returns 0 for `n > LOAD_AVG_PERIOD * 63`; halves once per full 32 periods, then
/// multiplies by `runnable_avg_yN_inv[n % 32]` keeping the high 64 bits of the exact
/// product (`mul_u64_u32_shr`, computed here in `u128`, so it never overflows).
/// Note: `decay_load(1024, 32) == 511`, not 512, because `y^0` is `0xffffffff / 2^32`.
pub fn decay_load(val: u64, n: u64) -> u64 {
    Decay::new(n).apply(val)
}

/// [`decay_load`]`(·, n)` for one `n`, its shift and multiplier computed once for the five
/// values one [`SchedAvg::accumulate_sum`] decays by the same number of periods.
#[derive(Debug, Clone, Copy)]
struct Decay {
    /// `n / LOAD_AVG_PERIOD`: whole half-lives (at most 63).
    shift: u32,
    /// `runnable_avg_yN_inv[n % LOAD_AVG_PERIOD]`, or 0 when `n > LOAD_AVG_PERIOD * 63`
    /// (everything decays to 0).
    inv: u32,
}

impl Decay {
    #[inline]
    fn new(n: u64) -> Decay {
        if n > LOAD_AVG_PERIOD * 63 {
            return Decay { shift: 0, inv: 0 };
        }
        Decay {
            shift: (n / LOAD_AVG_PERIOD) as u32,
            // n % 32 < 32, so the index is in bounds.
            inv: RUNNABLE_AVG_Y_N_INV[(n % LOAD_AVG_PERIOD) as usize],
        }
    }

    /// `decay_load(val, n)`: `mul_u64_u32_shr(val >> shift, inv, 32)`.
    #[inline]
    fn apply(self, val: u64) -> u64 {
        ((u128::from(val >> self.shift) * u128::from(self.inv)) >> 32) as u64
    }
}

/// Models `kernel/sched/pelt.c:__accumulate_pelt_segments()` (v6.8): the contribution
/// `d1 y^p + 1024 Σ_{n=1}^{p-1} y^n + d3` of a delta spanning `periods` boundaries,
/// in the kernel's `u32` arithmetic.
pub fn accumulate_pelt_segments(periods: u64, d1: u32, d3: u32) -> u32 {
    pelt_segments(Decay::new(periods), d1, d3)
}

/// [`accumulate_pelt_segments`] with the decay of its `periods` given.
#[inline]
fn pelt_segments(decay: Decay, d1: u32, d3: u32) -> u32 {
    let c1 = decay.apply(u64::from(d1)) as u32;
    let c2 = LOAD_AVG_MAX
        .wrapping_sub(decay.apply(LOAD_AVG_MAX))
        .wrapping_sub(1024) as u32;
    c1.wrapping_add(c2).wrapping_add(d3)
}

/// A task's util_est (`struct util_est`, include/linux/sched.h).
///
/// * v6.8+ ([`UtilEstVersion::V6_8`]): the kernel has a single `unsigned int util_est`;
///   it lives in `ewma` (flag [`UTIL_AVG_UNCHANGED`] included) and `enqueued` stays 0.
/// * v5.13–v6.7 ([`UtilEstVersion::V5_13`]): `{enqueued, ewma}`; the flag lives in
///   `enqueued`.
/// * For a cfs_rq, `enqueued` holds the rq sum (`cfs_rq->avg.util_est` in v6.8,
///   `cfs_rq->avg.util_est.enqueued` before) for both versions.
///
/// The flag is kept exactly where the kernel keeps it; [`cfs_se_util_change`] clears
/// it in both fields, which is harmless because the other field never has the MSB set.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UtilEst {
    /// v6.8: `se.avg.util_est` (with flag); older: `util_est.ewma`.
    pub ewma: u32,
    /// Older form: `util_est.enqueued` (with flag); cfs_rq: the enqueued sum.
    pub enqueued: u32,
}

/// Which kernel generation of util_est to model (see [`util_est_update`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub enum UtilEstVersion {
    /// v6.8+: single EWMA with the flag in its MSB; fast-up unconditional.
    #[default]
    #[serde(rename = "v6_8", alias = "V6_8", alias = "v6.8")]
    V6_8,
    /// v5.13–v6.7: `{enqueued, ewma}`, flag in `enqueued`'s MSB, `UTIL_EST_FASTUP`
    /// a feature (default on).
    #[serde(rename = "v5_13", alias = "V5_13", alias = "v5.13")]
    V5_13,
}

/// `struct sched_avg` (include/linux/sched.h, v6.8), with `util_est` as [`UtilEst`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SchedAvg {
    /// `last_update_time` in PELT-clock ns (advanced in 1024 ns units); 0 marks a
    /// new or migrated entity waiting to be attached.
    pub last_update_time: u64,
    /// `load_sum`: Σ of `load * contrib` (unweighted for entities: `load` is 0/1).
    pub load_sum: u64,
    /// `runnable_sum`: Σ of `(runnable * contrib) << 10`.
    pub runnable_sum: u64,
    /// `util_sum` (`u32` in the kernel): Σ of `contrib << 10` while running.
    pub util_sum: u32,
    /// `period_contrib`: 1024-ns units already accumulated in the current period.
    pub period_contrib: u32,
    /// `load_avg`: `weight * load_sum / divider`.
    pub load_avg: u64,
    /// `runnable_avg`: `runnable_sum / divider`.
    pub runnable_avg: u64,
    /// `util_avg`: `util_sum / divider`.
    pub util_avg: u64,
    /// `util_est` (tasks: estimate + flag; cfs_rq: sum of enqueued tasks' estimates).
    pub util_est: UtilEst,
}

impl SchedAvg {
    /// Models `kernel/sched/pelt.h:get_pelt_divider()` (v6.8):
    /// `PELT_MIN_DIVIDER + period_contrib`.
    pub fn get_pelt_divider(&self) -> u64 {
        PELT_MIN_DIVIDER + u64::from(self.period_contrib)
    }

    /// Every sum and average is zero (`util_est` aside).
    #[inline]
    pub fn is_null(&self) -> bool {
        (self.load_sum
            | self.runnable_sum
            | u64::from(self.util_sum)
            | self.load_avg
            | self.runnable_avg
            | self.util_avg)
            == 0
    }

    /// [`SchedAvg::update_load_sum`]`(now, 0, 0, 0)` then, when it returns true,
    /// [`SchedAvg::update_load_avg`] of a signal that [`SchedAvg::is_null`]: only
    /// `last_update_time` and `period_contrib` move as they would there (the time in
    /// 1024-ns units, the periods crossed and the remainder of `accumulate_sum()`), and
    /// the same value is returned; the sums and averages stay zero.
    #[inline]
    pub fn age_null(&mut self, now: u64) -> bool {
        debug_assert!(self.is_null());
        #[cfg(debug_assertions)]
        let mut full = *self;
        #[cfg(debug_assertions)]
        let want = full.update_load_sum(now, 0, 0, 0) && {
            full.update_load_avg(1);
            true
        };
        let delta = now.wrapping_sub(self.last_update_time);
        let crossed = if (delta as i64) < 0 {
            self.last_update_time = now;
            false
        } else if delta >> 10 == 0 {
            false
        } else {
            let delta = delta >> 10;
            self.last_update_time = self.last_update_time.wrapping_add(delta << 10);
            let d = delta.wrapping_add(u64::from(self.period_contrib));
            self.period_contrib = (d % 1024) as u32;
            d / 1024 != 0
        };
        #[cfg(debug_assertions)]
        {
            assert_eq!(crossed, want);
            assert_eq!(*self, full);
        }
        crossed
    }

    /// Models `kernel/sched/pelt.c:accumulate_sum()` (v6.8). `delta` in 1024-ns units.
    /// Returns the number of period boundaries crossed.
    #[inline(always)]
    fn accumulate_sum(&mut self, delta: u64, load: u64, runnable: u64, running: u64) -> u64 {
        // p == 0 -> delta < 1024; when p > 0 and load == 0 contrib is unused.
        let mut contrib = delta as u32;
        let mut delta = delta.wrapping_add(u64::from(self.period_contrib));
        let periods = delta / 1024;
        if periods != 0 {
            let decay = Decay::new(periods);
            self.decay_sums(decay);
            delta %= 1024;
            if load != 0 {
                contrib = pelt_segments(decay, 1024 - self.period_contrib, delta as u32);
            }
        }
        self.period_contrib = delta as u32;
        self.add_contrib(contrib, load, runnable, running);
        periods
    }

    /// `accumulate_sum()`'s step 1: the three sums decayed by `decay` (the periods crossed).
    #[inline(always)]
    fn decay_sums(&mut self, decay: Decay) {
        self.load_sum = decay.apply(self.load_sum);
        self.runnable_sum = decay.apply(self.runnable_sum);
        self.util_sum = decay.apply(u64::from(self.util_sum)) as u32;
    }

    /// `accumulate_sum()`'s step 3: `contrib` added to the sums of the inputs that are set.
    #[inline(always)]
    fn add_contrib(&mut self, contrib: u32, load: u64, runnable: u64, running: u64) {
        if load != 0 {
            self.load_sum = self
                .load_sum
                .wrapping_add(load.wrapping_mul(u64::from(contrib)));
        }
        if runnable != 0 {
            self.runnable_sum = self
                .runnable_sum
                .wrapping_add(runnable.wrapping_mul(u64::from(contrib)) << SCHED_CAPACITY_SHIFT);
        }
        if running != 0 {
            self.util_sum = self.util_sum.wrapping_add(contrib << SCHED_CAPACITY_SHIFT);
        }
    }

    /// Models `kernel/sched/pelt.c:___update_load_sum()` (v6.8).
    ///
    /// `now` is in ns of the PELT clock. `load`: weight or 0/1 (0 means "not on the
    /// rq", which also forces `runnable = running = 0`); `runnable`: count of runnable
    /// entities; `running`: 0/1. If time went backwards only `last_update_time` is
    /// resynced. Time advances in 1024-ns units, the remainder being carried in
    /// `last_update_time`. Returns true when at least one period boundary was crossed
    /// (then the caller recomputes the averages).
    #[inline(always)]
    pub fn update_load_sum(&mut self, now: u64, load: u64, runnable: u64, running: u64) -> bool {
        let delta = now.wrapping_sub(self.last_update_time);
        if (delta as i64) < 0 {
            self.last_update_time = now;
            return false;
        }
        let delta = delta >> 10;
        if delta == 0 {
            return false;
        }
        self.last_update_time = self.last_update_time.wrapping_add(delta << 10);
        let (runnable, running) = if load == 0 {
            (0, 0)
        } else {
            (runnable, running)
        };
        self.accumulate_sum(delta, load, runnable, running) != 0
    }

    /// Models `kernel/sched/pelt.c:___update_load_avg()` (v6.8): recompute the
    /// averages with `divider = get_pelt_divider()`. `load_weight` is `se_weight(se)`
    /// for a task and 1 for a cfs_rq / rt / dl signal.
    pub fn update_load_avg(&mut self, load_weight: u64) {
        let divider = self.get_pelt_divider();
        self.load_avg = load_weight.wrapping_mul(self.load_sum) / divider;
        self.runnable_avg = self.runnable_sum / divider;
        self.util_avg = u64::from(self.util_sum) / divider;
    }
}

/// Models `kernel/sched/pelt.h:cfs_se_util_change()` (v6.8; v5.13–v6.7 did the same
/// on `util_est.enqueued`): clear [`UTIL_AVG_UNCHANGED`] to report that `util_avg`
/// was recomputed. Clears the MSB of both [`UtilEst`] fields (only one can carry it).
/// Called by [`update_load_avg_se`]; the engine need not call it directly.
pub fn cfs_se_util_change(avg: &mut SchedAvg) {
    avg.util_est.ewma &= !UTIL_AVG_UNCHANGED;
    avg.util_est.enqueued &= !UTIL_AVG_UNCHANGED;
}

/// Models `kernel/sched/pelt.c:__update_load_avg_blocked_se()` (v6.8): age a task
/// that is not on any rq (`load = runnable = running = 0`). Does not touch the
/// util_est flag (as in the kernel).
pub fn update_load_avg_blocked_se(avg: &mut SchedAvg, now: u64, weight: u64) -> bool {
    if avg.update_load_sum(now, 0, 0, 0) {
        avg.update_load_avg(weight);
        return true;
    }
    false
}

/// Models `kernel/sched/pelt.c:__update_load_avg_se()` (v6.8) for a task entity:
/// inputs `!!se->on_rq`, `se_runnable(se)`, `cfs_rq->curr == se`; averages use the
/// nice weight `weight`. When the averages are recomputed, also clears
/// [`UTIL_AVG_UNCHANGED`] ([`cfs_se_util_change`]). Returns true when recomputed.
/// `runnable` is the engine's `se_runnable()` (false for a delayed-dequeued task from
/// v6.12).
pub fn update_load_avg_se(
    avg: &mut SchedAvg,
    now: u64,
    on_rq: bool,
    runnable: bool,
    running: bool,
    weight: u64,
) -> bool {
    if avg.update_load_sum(
        now,
        u64::from(on_rq),
        u64::from(runnable),
        u64::from(running),
    ) {
        avg.update_load_avg(weight);
        cfs_se_util_change(avg);
        return true;
    }
    false
}

/// Models `kernel/sched/pelt.c:__update_load_avg_cfs_rq()` (v6.8): inputs
/// `scale_load_down(cfs_rq->load.weight)` (sum of queued weights), `h_nr_running`
/// (`h_nr_runnable` from v6.14) and `cfs_rq->curr != NULL`; averages with weight 1.
pub fn update_load_avg_cfs_rq(
    avg: &mut SchedAvg,
    now: u64,
    load_weight_sum: u64,
    h_nr_runnable: u64,
    curr_running: bool,
) -> bool {
    if avg.update_load_sum(now, load_weight_sum, h_nr_runnable, u64::from(curr_running)) {
        avg.update_load_avg(1);
        return true;
    }
    false
}

/// Models `kernel/sched/pelt.c:update_rt_rq_load_avg()` (v6.8): `load = runnable =
/// running = (curr is an RT task)`.
///
/// A signal that is not running and has every sum and average at zero (the common case
/// of a CPU that has not run such a task for a while) only has its clock moved
/// ([`SchedAvg::age_null`]): the decays of zero are zero, nothing is added, and the
/// averages of zero sums are zero, so the result is the same.
pub fn update_rt_rq_load_avg(avg: &mut SchedAvg, now: u64, running: bool) -> bool {
    if !running && avg.is_null() {
        return avg.age_null(now);
    }
    let r = u64::from(running);
    if avg.update_load_sum(now, r, r, r) {
        avg.update_load_avg(1);
        return true;
    }
    false
}

/// Models `kernel/sched/pelt.c:update_dl_rq_load_avg()` (v6.8); identical to
/// [`update_rt_rq_load_avg`] with "curr is a DEADLINE task".
pub fn update_dl_rq_load_avg(avg: &mut SchedAvg, now: u64, running: bool) -> bool {
    update_rt_rq_load_avg(avg, now, running)
}

/// Models `kernel/sched/fair.c:init_entity_runnable_average()` (v6.8) for a task: all
/// zero except `load_avg = weight` ("heavy until proven otherwise").
pub fn init_entity_runnable_average(weight: u64) -> SchedAvg {
    SchedAvg {
        load_avg: weight,
        ..SchedAvg::default()
    }
}

/// Models `kernel/sched/fair.c:post_init_entity_util_avg()` (v6.8) for a fair task:
/// `cap = (cpu_scale - cfs.util_avg) / 2` (signed); if `cap > 0` the task gets
/// `cfs.util_avg * se_weight / (cfs.load_avg + 1)` capped at `cap`, or `cap` when the
/// cfs_rq has no utilization; then `runnable_avg = util_avg`. The sums are rebuilt by
/// [`attach_entity_load_avg`] at the first enqueue. (Non-fair tasks only get
/// `last_update_time` set; the engine can do that itself.)
pub fn post_init_entity_util_avg(
    se: &mut SchedAvg,
    cpu_scale: u64,
    cfs: &SchedAvg,
    se_weight: u64,
) {
    // (long)(cpu_scale - cfs_rq->avg.util_avg) / 2: signed division, truncating to 0.
    let cap = (cpu_scale.wrapping_sub(cfs.util_avg) as i64) / 2;
    if cap > 0 {
        let cap = cap as u64;
        if cfs.util_avg != 0 {
            let util = cfs.util_avg.wrapping_mul(se_weight) / cfs.load_avg.wrapping_add(1);
            se.util_avg = util.min(cap);
        } else {
            se.util_avg = cap;
        }
    }
    se.runnable_avg = se.util_avg;
}

/// `sub_positive()` (kernel/sched/fair.c) on a `u64`: subtract, clamping at 0.
#[inline]
fn sub_positive_u64(var: &mut u64, val: u64) {
    let res = var.wrapping_sub(val);
    *var = if res > *var { 0 } else { res };
}

/// `sub_positive()` (kernel/sched/fair.c) on a `u32` (`val` truncated like `typeof(*ptr)`).
#[inline]
fn sub_positive_u32(var: &mut u32, val: u64) {
    let val = val as u32;
    let res = var.wrapping_sub(val);
    *var = if res > *var { 0 } else { res };
}

/// `max_t(u32, a, b)` (include/linux/minmax.h): both operands truncated to 32 bits.
#[inline]
fn max_t_u32(a: u64, b: u64) -> u32 {
    (a as u32).max(b as u32)
}

/// Models `kernel/sched/fair.c:enqueue_load_avg()` (v6.8).
fn enqueue_load_avg(cfs: &mut SchedAvg, se: &SchedAvg, se_weight: u64) {
    cfs.load_avg = cfs.load_avg.wrapping_add(se.load_avg);
    cfs.load_sum = cfs
        .load_sum
        .wrapping_add(se_weight.wrapping_mul(se.load_sum));
}

/// Models `kernel/sched/fair.c:dequeue_load_avg()` (v6.8), including the floor
/// `load_sum >= load_avg * PELT_MIN_DIVIDER` done with `max_t(u32, ..)`.
fn dequeue_load_avg(cfs: &mut SchedAvg, se: &SchedAvg, se_weight: u64) {
    sub_positive_u64(&mut cfs.load_avg, se.load_avg);
    sub_positive_u64(&mut cfs.load_sum, se_weight.wrapping_mul(se.load_sum));
    cfs.load_sum = u64::from(max_t_u32(
        cfs.load_sum,
        cfs.load_avg.wrapping_mul(PELT_MIN_DIVIDER),
    ));
}

/// The PELT part of `kernel/sched/fair.c:reweight_entity()` (v6.11) for an entity not on
/// its queue: its load leaves the cfs_rq at the old weight (`dequeue_load_avg()`),
/// `load_avg` is recomputed from `load_sum` at the new weight, and it comes back
/// (`enqueue_load_avg()`).
pub fn reweight_entity_load_avg(cfs: &mut SchedAvg, se: &mut SchedAvg, old_w: u64, new_w: u64) {
    dequeue_load_avg(cfs, se, old_w);
    se.load_avg = new_w.wrapping_mul(se.load_sum) / se.get_pelt_divider();
    enqueue_load_avg(cfs, se, new_w);
}

/// Models `kernel/sched/fair.c:attach_entity_load_avg()` (v6.8, after commit
/// 40f5aa4c5eae "Fix attach_entity_load_avg() corner case", v5.18).
///
/// Aligns the entity's PELT window with the cfs_rq (`last_update_time`,
/// `period_contrib`), rebuilds its sums from its averages with the cfs_rq divider
/// (`load_sum = load_avg * divider / se_weight`, or 1 when that would be < 1, e.g. for
/// `load_avg == 0`), then adds averages and sums to the cfs_rq. The caller must have
/// updated the cfs_rq to `now` first ([`update_load_avg`] does).
pub fn attach_entity_load_avg(cfs: &mut SchedAvg, se: &mut SchedAvg, se_weight: u64) {
    let divider = cfs.get_pelt_divider();
    se.last_update_time = cfs.last_update_time;
    se.period_contrib = cfs.period_contrib;
    se.util_sum = se.util_avg.wrapping_mul(divider) as u32;
    se.runnable_sum = se.runnable_avg.wrapping_mul(divider);
    se.load_sum = se.load_avg.wrapping_mul(divider);
    se.load_sum = if se_weight < se.load_sum {
        se.load_sum / se_weight
    } else {
        1
    };

    enqueue_load_avg(cfs, se, se_weight);
    cfs.util_avg = cfs.util_avg.wrapping_add(se.util_avg);
    cfs.util_sum = cfs.util_sum.wrapping_add(se.util_sum);
    cfs.runnable_avg = cfs.runnable_avg.wrapping_add(se.runnable_avg);
    cfs.runnable_sum = cfs.runnable_sum.wrapping_add(se.runnable_sum);
}

/// Models `kernel/sched/fair.c:detach_entity_load_avg()` (v6.8, after "sched/pelt:
/// Relax the sync of *_sum with *_avg", v5.17): `sub_positive` of averages and sums,
/// then each sum floored at `avg * PELT_MIN_DIVIDER` (with `max_t(u32, ..)`).
/// Unlike the brief's sketch this needs `se_weight`, to subtract `se_weight * load_sum`.
pub fn detach_entity_load_avg(cfs: &mut SchedAvg, se: &SchedAvg, se_weight: u64) {
    dequeue_load_avg(cfs, se, se_weight);
    sub_positive_u64(&mut cfs.util_avg, se.util_avg);
    sub_positive_u32(&mut cfs.util_sum, u64::from(se.util_sum));
    cfs.util_sum = max_t_u32(
        u64::from(cfs.util_sum),
        cfs.util_avg.wrapping_mul(PELT_MIN_DIVIDER),
    );
    sub_positive_u64(&mut cfs.runnable_avg, se.runnable_avg);
    sub_positive_u64(&mut cfs.runnable_sum, se.runnable_sum);
    cfs.runnable_sum = u64::from(max_t_u32(
        cfs.runnable_sum,
        cfs.runnable_avg.wrapping_mul(PELT_MIN_DIVIDER),
    ));
}

/// `cfs_rq->removed` (kernel/sched/sched.h): contributions of tasks that left this
/// cfs_rq while blocked, subtracted lazily at the next [`update_cfs_rq_load_avg`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RemovedLoad {
    /// `removed.load_avg`.
    pub load_avg: u64,
    /// `removed.util_avg`.
    pub util_avg: u64,
    /// `removed.runnable_avg`.
    pub runnable_avg: u64,
    /// `removed.nr`: number of entities removed since the last update.
    pub nr: u32,
}

/// Models `kernel/sched/fair.c:sync_entity_load_avg()` (v6.8): age a blocked task to
/// its (old) cfs_rq's `last_update_time` with [`update_load_avg_blocked_se`].
pub fn sync_entity_load_avg(se: &mut SchedAvg, cfs_last_update_time: u64, weight: u64) -> bool {
    update_load_avg_blocked_se(se, cfs_last_update_time, weight)
}

/// Models `kernel/sched/fair.c:load_avg_is_decayed()` (v6.11): every sum is zero.
pub fn load_avg_is_decayed(sa: &SchedAvg) -> bool {
    sa.load_sum == 0 && sa.util_sum == 0 && sa.runnable_sum == 0
}

/// Models `kernel/sched/fair.c:remove_entity_load_avg()` (v6.8): sync the task to its
/// old cfs_rq's time, then queue its averages in `removed`. The engine then sets
/// `se.last_update_time = 0` (`migrate_task_rq_fair`).
pub fn remove_entity_load_avg(
    removed: &mut RemovedLoad,
    se: &mut SchedAvg,
    cfs_last_update_time: u64,
    weight: u64,
) {
    sync_entity_load_avg(se, cfs_last_update_time, weight);
    removed.nr += 1;
    removed.util_avg = removed.util_avg.wrapping_add(se.util_avg);
    removed.load_avg = removed.load_avg.wrapping_add(se.load_avg);
    removed.runnable_avg = removed.runnable_avg.wrapping_add(se.runnable_avg);
}

/// Models the `cfs_rq->removed` block of `kernel/sched/fair.c:update_cfs_rq_load_avg()`
/// (v6.8): with `divider = get_pelt_divider(cfs)`, `sub_positive` each average by the
/// removed amount and each sum by `removed * divider`, then floor each sum at
/// `avg * PELT_MIN_DIVIDER` (`max_t(u32, ..)`). Clears `removed`. Returns true
/// (`decayed`) when anything had been removed. Must run *before* the cfs_rq's own
/// PELT update ([`update_cfs_rq_load_avg`] does both in order).
pub fn apply_removed(cfs: &mut SchedAvg, removed: &mut RemovedLoad) -> bool {
    if removed.nr == 0 {
        return false;
    }
    let divider = cfs.get_pelt_divider();
    let taken = std::mem::take(removed);

    let r = taken.load_avg;
    sub_positive_u64(&mut cfs.load_avg, r);
    sub_positive_u64(&mut cfs.load_sum, r.wrapping_mul(divider));
    cfs.load_sum = u64::from(max_t_u32(
        cfs.load_sum,
        cfs.load_avg.wrapping_mul(PELT_MIN_DIVIDER),
    ));

    let r = taken.util_avg;
    sub_positive_u64(&mut cfs.util_avg, r);
    sub_positive_u32(&mut cfs.util_sum, r.wrapping_mul(divider));
    cfs.util_sum = max_t_u32(
        u64::from(cfs.util_sum),
        cfs.util_avg.wrapping_mul(PELT_MIN_DIVIDER),
    );

    let r = taken.runnable_avg;
    sub_positive_u64(&mut cfs.runnable_avg, r);
    sub_positive_u64(&mut cfs.runnable_sum, r.wrapping_mul(divider));
    cfs.runnable_sum = u64::from(max_t_u32(
        cfs.runnable_sum,
        cfs.runnable_avg.wrapping_mul(PELT_MIN_DIVIDER),
    ));
    true
}

/// Models `kernel/sched/fair.c:update_cfs_rq_load_avg()` (v6.8): [`apply_removed`]
/// then [`update_load_avg_cfs_rq`]. Returns `decayed`.
pub fn update_cfs_rq_load_avg(
    cfs: &mut SchedAvg,
    removed: &mut RemovedLoad,
    now: u64,
    load_weight_sum: u64,
    h_nr_runnable: u64,
    curr_running: bool,
) -> bool {
    let decayed = apply_removed(cfs, removed);
    update_load_avg_cfs_rq(cfs, now, load_weight_sum, h_nr_runnable, curr_running) | decayed
}

/// The inputs of a task entity's PELT update (what `__update_load_avg_se()` reads).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SeState {
    /// `se->on_rq` before the event.
    pub on_rq: bool,
    /// `se_runnable(se)` (= `on_rq`, false when delayed-dequeued from v6.12).
    pub runnable: bool,
    /// `cfs_rq->curr == se`.
    pub running: bool,
    /// `se_weight(se)`: nice weight (1024 for nice 0).
    pub weight: u64,
}

/// The inputs of a cfs_rq's PELT update (what `__update_load_avg_cfs_rq()` reads).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CfsRqState {
    /// `scale_load_down(cfs_rq->load.weight)`: sum of queued entities' weights.
    pub load_weight_sum: u64,
    /// `h_nr_running` (`h_nr_runnable` from v6.14).
    pub h_nr_runnable: u64,
    /// `cfs_rq->curr != NULL`.
    pub curr_running: bool,
}

/// Models `kernel/sched/fair.c:update_load_avg()` (v6.8) for a task on the root
/// cfs_rq (no task groups, so `propagate_entity_load_avg` and `update_tg_load_avg`
/// are no-ops).
///
/// 1. unless `se.last_update_time == 0` or `SKIP_AGE_LOAD`: [`update_load_avg_se`];
/// 2. [`update_cfs_rq_load_avg`] (removed load, then the cfs_rq's own signal);
/// 3. `DO_ATTACH` and `se.last_update_time == 0`: [`attach_entity_load_avg`];
///    else `DO_DETACH`: [`detach_entity_load_avg`].
///
/// Returns true when the cfs_rq signal changed (decayed, attached or detached), i.e.
/// when the kernel calls `cfs_rq_util_change()` (a cpufreq update hook).
pub fn update_load_avg(
    now: u64,
    cfs: &mut SchedAvg,
    removed: &mut RemovedLoad,
    cfs_state: CfsRqState,
    se: &mut SchedAvg,
    se_state: SeState,
    flags: u32,
) -> bool {
    let age_se = se.last_update_time != 0 && flags & SKIP_AGE_LOAD == 0;
    let decayed = if age_se
        && se.last_update_time == cfs.last_update_time
        && se.period_contrib == cfs.period_contrib
    {
        #[cfg(debug_assertions)]
        let want = {
            let (mut c, mut r, mut e) = (*cfs, *removed, *se);
            update_load_avg_se(
                &mut e,
                now,
                se_state.on_rq,
                se_state.runnable,
                se_state.running,
                se_state.weight,
            );
            let d = update_cfs_rq_load_avg(
                &mut c,
                &mut r,
                now,
                cfs_state.load_weight_sum,
                cfs_state.h_nr_runnable,
                cfs_state.curr_running,
            );
            (c, r, e, d)
        };
        let decayed = update_load_avg_aligned(now, cfs, removed, cfs_state, se, se_state);
        #[cfg(debug_assertions)]
        assert_eq!(
            (*cfs, *removed, *se, decayed),
            want,
            "the aligned update equals the entity's and the cfs_rq's own"
        );
        decayed
    } else {
        if age_se {
            update_load_avg_se(
                se,
                now,
                se_state.on_rq,
                se_state.runnable,
                se_state.running,
                se_state.weight,
            );
        }
        update_cfs_rq_load_avg(
            cfs,
            removed,
            now,
            cfs_state.load_weight_sum,
            cfs_state.h_nr_runnable,
            cfs_state.curr_running,
        )
    };
    if se.last_update_time == 0 && flags & DO_ATTACH != 0 {
        attach_entity_load_avg(cfs, se, se_state.weight);
        true
    } else if flags & DO_DETACH != 0 {
        detach_entity_load_avg(cfs, se, se_state.weight);
        true
    } else {
        decayed
    }
}

/// [`update_load_avg_se`] then [`update_cfs_rq_load_avg`] (the first two steps of
/// [`update_load_avg`]) for an entity whose `last_update_time` and `period_contrib` equal
/// its cfs_rq's: an entity updated with its cfs_rq since it was attached (which copies
/// both, `attach_entity_load_avg()`), as a task running alone on its CPU is at each tick
/// and at its dequeue. `___update_load_sum()` and `accumulate_sum()` compute the elapsed
/// 1024-ns units, the new `last_update_time` and `period_contrib`, the periods crossed,
/// their decay factor and `contrib` from those two fields and `now` alone, so the cfs_rq's
/// update takes the entity's instead of computing them again. (`contrib` is computed once
/// when either has a load, and is the same for both; with no load neither reads it.) Each
/// signal's sums and averages are its own, in the kernel's order: the entity's, then the
/// removed load ([`apply_removed`], which reads the cfs_rq's `period_contrib` before its
/// update), then the cfs_rq's. Debug builds compare the result with the two updates run
/// on their own.
#[inline(always)]
fn update_load_avg_aligned(
    now: u64,
    cfs: &mut SchedAvg,
    removed: &mut RemovedLoad,
    cfs_state: CfsRqState,
    se: &mut SchedAvg,
    se_state: SeState,
) -> bool {
    let delta = now.wrapping_sub(se.last_update_time);
    if (delta as i64) < 0 {
        // time went backwards: both resync `last_update_time` and report no decay
        se.last_update_time = now;
        let decayed = apply_removed(cfs, removed);
        cfs.last_update_time = now;
        return decayed;
    }
    let delta = delta >> 10;
    if delta == 0 {
        return apply_removed(cfs, removed);
    }
    let last_update_time = se.last_update_time.wrapping_add(delta << 10);
    se.last_update_time = last_update_time;
    // ___update_load_sum(): no load, no runnable or running contribution
    let se_load = u64::from(se_state.on_rq);
    let (se_runnable, se_running) = if se_load == 0 {
        (0, 0)
    } else {
        (u64::from(se_state.runnable), u64::from(se_state.running))
    };
    // accumulate_sum()
    let mut contrib = delta as u32;
    let mut d = delta.wrapping_add(u64::from(se.period_contrib));
    let periods = d / 1024;
    let decay = Decay::new(periods);
    if periods != 0 {
        d %= 1024;
        if se_load != 0 || cfs_state.load_weight_sum != 0 {
            contrib = pelt_segments(decay, 1024 - se.period_contrib, d as u32);
        }
        se.decay_sums(decay);
    }
    let period_contrib = d as u32;
    se.period_contrib = period_contrib;
    se.add_contrib(contrib, se_load, se_runnable, se_running);
    if periods != 0 {
        // ___update_load_avg() and cfs_se_util_change()
        se.update_load_avg(se_state.weight);
        cfs_se_util_change(se);
    }
    let decayed = apply_removed(cfs, removed);
    cfs.last_update_time = last_update_time;
    if periods != 0 {
        cfs.decay_sums(decay);
    }
    cfs.period_contrib = period_contrib;
    let cfs_load = cfs_state.load_weight_sum;
    let (cfs_runnable, cfs_running) = if cfs_load == 0 {
        (0, 0)
    } else {
        (cfs_state.h_nr_runnable, u64::from(cfs_state.curr_running))
    };
    cfs.add_contrib(contrib, cfs_load, cfs_runnable, cfs_running);
    if periods != 0 {
        cfs.update_load_avg(1);
        return true;
    }
    decayed
}

/// The PELT clock of one rq (`rq->clock_task`, `rq->clock_pelt`,
/// `rq->lost_idle_time`; kernel/sched/sched.h, pelt.h v6.8).
#[derive(Debug, Clone, Copy, Default)]
pub struct PeltClock {
    /// `rq->clock_task` (ns). Simplification: equals the rq clock (no IRQ/steal time).
    pub clock_task: u64,
    /// `rq->clock_pelt` (ns): scaled while busy, resynced to `clock_task` when idle.
    pub clock_pelt: u64,
    /// `rq->lost_idle_time` (ns): idle time not credited because the rq was saturated.
    pub lost_idle_time: u64,
    /// `rq->clock_idle`: the rq clock at its last update while idle
    /// (`_update_idle_rq_clock_pelt()`, read by `migrate_se_pelt_lag()`).
    pub clock_idle: u64,
    /// `rq->clock_pelt_idle`: `rq_clock_pelt()` at that update.
    pub clock_pelt_idle: u64,
}

impl PeltClock {
    /// Models `update_rq_clock()` → `update_rq_clock_task()` →
    /// `kernel/sched/pelt.h:update_rq_clock_pelt()` (v6.8).
    ///
    /// Advances `clock_task` to `now_task` (ignored if it would go backwards, as
    /// `update_rq_clock()` does). If `idle` (`rq->curr` is the idle task during the
    /// elapsed interval) `clock_pelt` is resynced to `clock_task`; otherwise the delta
    /// is added after `cap_scale(delta, cpu_capacity)` then
    /// `cap_scale(delta, freq_scale)` (each flooring).
    pub fn update(&mut self, now_task: u64, idle: bool, cpu_capacity: u64, freq_scale: u64) {
        if now_task < self.clock_task {
            return;
        }
        let delta = now_task - self.clock_task;
        self.clock_task = now_task;
        if idle {
            self.clock_pelt = self.clock_task;
            self.clock_idle = self.clock_task;
            self.clock_pelt_idle = self.now();
            return;
        }
        let delta = cap_scale(delta, cpu_capacity);
        let delta = cap_scale(delta, freq_scale);
        self.clock_pelt = self.clock_pelt.wrapping_add(delta);
    }

    /// Models `kernel/sched/pelt.h:update_idle_rq_clock_pelt()` (v6.8): call when the
    /// rq is about to go idle with `cfs.util_sum + rt.util_sum + dl.util_sum` (summed
    /// as `u32` in the kernel: the value is truncated to 32 bits here). If that reaches
    /// `(LOAD_AVG_MAX - 1024) * 1024 - LOAD_AVG_MAX` the rq was saturated and the lag
    /// `clock_task - clock_pelt` is added to `lost_idle_time`.
    pub fn update_idle(&mut self, util_sum_total: u64) {
        let divider = (((LOAD_AVG_MAX - 1024) << SCHED_CAPACITY_SHIFT) - LOAD_AVG_MAX) as u32;
        let util_sum = util_sum_total as u32;
        if util_sum >= divider {
            self.lost_idle_time = self
                .lost_idle_time
                .wrapping_add(self.clock_task.wrapping_sub(self.clock_pelt));
        }
        // _update_idle_rq_clock_pelt(): what migrate_se_pelt_lag() will read. (The resync
        // of clock_pelt itself is left to the next update(), which does it while idle.)
        self.clock_idle = self.clock_task;
        self.clock_pelt_idle = self.clock_task.wrapping_sub(self.lost_idle_time);
    }

    /// Models `kernel/sched/fair.c:migrate_se_pelt_lag()` (v6.11) for a task leaving this
    /// rq at a wake-up while the rq is idle: the time its blocked averages are decayed to,
    /// estimated as the kernel does from `clock_pelt_idle`, the cfs_rq's
    /// `last_update_time` `lut` and the time since `clock_idle` (`sched_clock_cpu()` is
    /// `now`). No CFS bandwidth (`throttled_pelt_idle` is 0).
    pub fn migrate_lag_now(&self, lut: u64, now: u64) -> u64 {
        let est = self.clock_pelt_idle;
        if est < lut {
            lut
        } else {
            est.wrapping_add(now.wrapping_sub(self.clock_idle))
        }
    }

    /// Models `kernel/sched/pelt.h:rq_clock_pelt()` (v6.8): `clock_pelt -
    /// lost_idle_time` (u64, wrapping like the kernel). Read it after
    /// [`PeltClock::update`]: right after [`PeltClock::update_idle`] and before the
    /// resync of the next idle update the difference may be "negative".
    pub fn now(&self) -> u64 {
        self.clock_pelt.wrapping_sub(self.lost_idle_time)
    }
}

/// Models `kernel/sched/fair.c:task_util()` (v6.8): `util_avg`.
pub fn task_util(avg: &SchedAvg) -> u64 {
    avg.util_avg
}

/// Models `kernel/sched/fair.c:task_runnable()` (v6.8): `runnable_avg`.
pub fn task_runnable(avg: &SchedAvg) -> u64 {
    avg.runnable_avg
}

mod util_est;
pub use util_est::*;

pub mod legacy;

#[cfg(test)]
mod tests;
