//! The per-entity load tracking of v3.8–v3.10 (Paul Turner's series, kernel/sched/fair.c)
//! with the additions of ARM's big.LITTLE MP patch set (Linaro LSK 3.10,
//! `CONFIG_SCHED_HMP`): the unweighted `load_avg_ratio` (0..1023) HMP places tasks by,
//! `usage_avg_sum`, the frequency-invariant scaling of the sums
//! (`CONFIG_HMP_FREQUENCY_INVARIANT_SCALE`) and the saturated history a new task starts
//! with (`hmp_task_should_forkboost()`).
//!
//! Sources read: vanilla v3.10.4 and v3.8.13 kernel/sched/fair.c (identical in what is
//! modelled here), and the LSK 3.10 big.LITTLE MP fair.c, core.c and
//! include/linux/sched.h as carried unmodified by tinalinux/linux-3.10 @46f73ef4 (the
//! functions are named on each item). Pure arithmetic, the kernel's integer widths: the
//! sums are `u32`, `decay_load()` multiplies in `u64`.
//!
//! Unlike today's PELT ([`super`]): the period is not carried as `period_contrib` but as
//! `runnable_avg_period % 1024`, sub-µs remainders are dropped at each update, the
//! contribution of whole periods comes from `runnable_avg_yN_sum[]`, and the averages are
//! `sum / (period + 1)` over the task's history (a young task's ratio is an average of a
//! short window).

use super::{LOAD_AVG_MAX, LOAD_AVG_PERIOD, RUNNABLE_AVG_Y_N_INV};

/// `LOAD_AVG_MAX_N` (v3.10): the number of full periods to reach [`LOAD_AVG_MAX`].
pub const LOAD_AVG_MAX_N: u64 = 345;

/// `runnable_avg_yN_sum[]` (v3.10): `Σ_{k=1..n} 1024·y^k`, floored, for n = 0..32.
pub const RUNNABLE_AVG_Y_N_SUM: [u32; 33] = [
    0, 1002, 1982, 2941, 3880, 4798, 5697, 6576, 7437, 8279, 9103, 9909, 10698, 11470, 12226,
    12966, 13690, 14398, 15091, 15769, 16433, 17082, 17718, 18340, 18949, 19545, 20128, 20698,
    21256, 21802, 22336, 22859, 23371,
];

/// `NICE_0_LOAD` of v3.10 (`SCHED_LOAD_RESOLUTION` 0): the ratio's full scale.
pub const NICE_0_LOAD: u64 = 1024;

/// The frequency scale of a CPU at its policy's maximum (`SCHED_FREQSCALE_SHIFT` 10).
pub const FREQSCALE_ONE: u64 = 1024;

/// `decay_load(val, n)` (kernel/sched/fair.c, v3.10): `val · y^n`, rounded down; `val`
/// unchanged for `n` = 0 (unlike today's, which multiplies by `y^0 = 0xffffffff/2^32`).
pub fn decay_load(val: u64, n: u64) -> u64 {
    if n == 0 {
        return val;
    }
    if n > LOAD_AVG_PERIOD * 63 {
        return 0;
    }
    let (mut val, mut local_n) = (val, n);
    if local_n >= LOAD_AVG_PERIOD {
        val >>= local_n / LOAD_AVG_PERIOD;
        local_n %= LOAD_AVG_PERIOD;
    }
    val.wrapping_mul(u64::from(RUNNABLE_AVG_Y_N_INV[local_n as usize])) >> 32
}

/// `__compute_runnable_contrib(n)` (v3.10): `Σ_{k=1..n} 1024·y^k`, from the table for
/// `n` ≤ 32, by halving per 32 periods beyond, [`LOAD_AVG_MAX`] from
/// [`LOAD_AVG_MAX_N`] on.
pub fn compute_runnable_contrib(n: u64) -> u32 {
    if n <= LOAD_AVG_PERIOD {
        return RUNNABLE_AVG_Y_N_SUM[n as usize];
    }
    if n >= LOAD_AVG_MAX_N {
        return LOAD_AVG_MAX as u32;
    }
    let full = u64::from(RUNNABLE_AVG_Y_N_SUM[LOAD_AVG_PERIOD as usize]);
    let (mut contrib, mut n) = (0u64, n);
    loop {
        contrib = contrib / 2 + full;
        n -= LOAD_AVG_PERIOD;
        if n <= LOAD_AVG_PERIOD {
            break;
        }
    }
    (decay_load(contrib, n) + u64::from(RUNNABLE_AVG_Y_N_SUM[n as usize])) as u32
}

/// `cpufreq_calc_scale(min, max, curr)` (LSK 3.10 fair.c, the frequency-invariant load
/// scale): `curr / (max >> 10)` in kHz, ≈ 1024·f/fmax of the CPU's own policy (a LITTLE
/// CPU at its maximum is 1024; `min` is unused, as in the source).
pub fn cpufreq_calc_scale(_min_khz: u64, max_khz: u64, curr_khz: u64) -> u64 {
    match max_khz >> 10 {
        0 => FREQSCALE_ONE,
        m => curr_khz / m,
    }
}

/// `struct sched_avg` of the LSK 3.10 big.LITTLE MP tree (include/linux/sched.h), for a
/// task entity: the decayed sums, their averages, and the times of its last HMP moves.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LegacyAvg {
    /// `runnable_avg_sum`: decayed time runnable (queued or running).
    pub runnable_avg_sum: u32,
    /// `runnable_avg_period`: decayed time tracked (never frequency-scaled).
    pub runnable_avg_period: u32,
    /// `usage_avg_sum`: decayed time running (`cfs_rq->curr == se`).
    pub usage_avg_sum: u32,
    /// `last_runnable_update` (ns of the rq's `clock_task`).
    pub last_runnable_update: u64,
    /// `load_avg_contrib`: `sum · weight / (period + 1)`.
    pub load_avg_contrib: u64,
    /// `load_avg_ratio`: `sum · 1024 / (period + 1)`, 0..1023, the load HMP reads.
    pub load_avg_ratio: u64,
    /// `hmp_last_up_migration` (ns; 0: never).
    pub hmp_last_up_migration: u64,
    /// `hmp_last_down_migration` (ns; 0: never).
    pub hmp_last_down_migration: u64,
}

impl LegacyAvg {
    /// `__sched_fork()` (LSK 3.10 core.c): an empty history, or with
    /// `hmp_task_should_forkboost()` (a task whose parent is not init or kthreadd) a
    /// saturated one at 100 %: ratio 1023, contribution `1023 · weight`, every sum at
    /// [`LOAD_AVG_MAX`]; `now` starts its clock (`enqueue_entity_load_avg()` of a new task).
    pub fn new_task(boost: bool, weight: u64, now: u64) -> LegacyAvg {
        let mut a = LegacyAvg {
            last_runnable_update: now,
            ..LegacyAvg::default()
        };
        if boost {
            let max = LOAD_AVG_MAX as u32;
            a.load_avg_ratio = 1023;
            a.load_avg_contrib = 1023 * weight;
            a.runnable_avg_period = max;
            a.runnable_avg_sum = max;
            a.usage_avg_sum = max;
        }
        a
    }

    /// `__update_entity_runnable_avg(now, sa, runnable, running, cpu)` (LSK 3.10
    /// fair.c; vanilla v3.10 without `running`, `usage_avg_sum` and `curr_scale`): the
    /// time since the last update, in 1024-ns units (remainders dropped), added to the
    /// sums (scaled by `curr_scale`/1024, the CPU's frequency scale or 1024) and the
    /// period, decayed per full 1024-unit period crossed. Returns whether a period
    /// boundary was crossed (the averages are then recomputed by the caller).
    pub fn update_runnable_avg(
        &mut self,
        now: u64,
        runnable: bool,
        running: bool,
        curr_scale: u64,
    ) -> bool {
        let delta = now.wrapping_sub(self.last_runnable_update);
        if (delta as i64) < 0 {
            self.last_runnable_update = now;
            return false;
        }
        let mut delta = delta >> 10;
        if delta == 0 {
            return false;
        }
        self.last_runnable_update = now;
        let scaled = |d: u64| ((d * curr_scale) >> 10) as u32;
        let mut decayed = false;
        let delta_w = u64::from(self.runnable_avg_period % 1024);
        if delta + delta_w >= 1024 {
            decayed = true;
            let delta_w = 1024 - delta_w;
            if runnable {
                self.runnable_avg_sum = self.runnable_avg_sum.wrapping_add(scaled(delta_w));
            }
            if running {
                self.usage_avg_sum = self.usage_avg_sum.wrapping_add(scaled(delta_w));
            }
            self.runnable_avg_period = self.runnable_avg_period.wrapping_add(delta_w as u32);
            delta -= delta_w;
            let periods = delta / 1024;
            delta %= 1024;
            let decay = |v: u32| decay_load(u64::from(v), periods + 1) as u32;
            self.runnable_avg_sum = decay(self.runnable_avg_sum);
            self.runnable_avg_period = decay(self.runnable_avg_period);
            self.usage_avg_sum = decay(self.usage_avg_sum);
            let c = compute_runnable_contrib(periods);
            if runnable {
                self.runnable_avg_sum = self.runnable_avg_sum.wrapping_add(scaled(u64::from(c)));
            }
            if running {
                self.usage_avg_sum = self.usage_avg_sum.wrapping_add(scaled(u64::from(c)));
            }
            self.runnable_avg_period = self.runnable_avg_period.wrapping_add(c);
        }
        if runnable {
            self.runnable_avg_sum = self.runnable_avg_sum.wrapping_add(scaled(delta));
        }
        if running {
            self.usage_avg_sum = self.usage_avg_sum.wrapping_add(scaled(delta));
        }
        self.runnable_avg_period = self.runnable_avg_period.wrapping_add(delta as u32);
        decayed
    }

    /// `__update_task_entity_contrib(se)` (LSK 3.10 fair.c): `load_avg_contrib = sum ·
    /// weight / (period + 1)` and `load_avg_ratio = sum · NICE_0_LOAD / (period + 1)`, in
    /// `u32` arithmetic as the kernel's (`weight` is `scale_load_down(se->load.weight)`).
    pub fn update_task_entity_contrib(&mut self, weight: u64) {
        let period = self.runnable_avg_period.wrapping_add(1).max(1);
        let contrib = self.runnable_avg_sum.wrapping_mul(weight as u32) / period;
        self.load_avg_contrib = u64::from(contrib);
        let ratio = self.runnable_avg_sum.wrapping_mul(NICE_0_LOAD as u32) / period;
        self.load_avg_ratio = u64::from(ratio);
    }

    /// `update_entity_load_avg(se, …)` for a task (LSK 3.10 fair.c): the sums brought to
    /// `now`, and the contribution and ratio recomputed when a period boundary was
    /// crossed (only then). Returns the ratio's change, for `rq->avg.load_avg_ratio`.
    pub fn update_entity_load_avg(
        &mut self,
        now: u64,
        runnable: bool,
        running: bool,
        curr_scale: u64,
        weight: u64,
    ) -> i64 {
        if !self.update_runnable_avg(now, runnable, running, curr_scale) {
            return 0;
        }
        let old = self.load_avg_ratio;
        self.update_task_entity_contrib(weight);
        self.load_avg_ratio as i64 - old as i64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 1024-ns units in one PELT period, in ns.
    const PERIOD_NS: u64 = 1024 * 1024;

    #[test]
    fn decay_keeps_val_at_zero_periods_and_halves_per_32() {
        assert_eq!(decay_load(47742, 0), 47742);
        // halved per 32 periods, then × y^0 = 0xffffffff / 2^32 (one less)
        assert_eq!(decay_load(1 << 20, 32), (1 << 19) - 1);
        assert_eq!(decay_load(1 << 20, 64), (1 << 18) - 1);
        assert_eq!(decay_load(u64::from(u32::MAX), 2017), 0);
    }

    #[test]
    fn runnable_contrib_is_the_table_then_converges_to_load_avg_max() {
        for n in 0..=32 {
            assert_eq!(
                compute_runnable_contrib(n),
                RUNNABLE_AVG_Y_N_SUM[n as usize]
            );
        }
        let mut last = 0;
        for n in 1..LOAD_AVG_MAX_N {
            let c = compute_runnable_contrib(n);
            assert!(c >= last && u64::from(c) <= LOAD_AVG_MAX, "n={n}: {c}");
            last = c;
        }
        // the kernel's series flattens (floored halvings) and jumps to LOAD_AVG_MAX at 345
        assert_eq!(compute_runnable_contrib(318), compute_runnable_contrib(317));
        assert_eq!(compute_runnable_contrib(344), 46714);
        assert_eq!(u64::from(compute_runnable_contrib(345)), LOAD_AVG_MAX);
        assert_eq!(u64::from(compute_runnable_contrib(400)), LOAD_AVG_MAX);
        // 64 periods: the first 32 halved, plus 32 more
        assert_eq!(
            compute_runnable_contrib(64),
            (decay_load(23371, 32) + 23371) as u32
        );
    }

    /// Runs `a` for `ms` ms in 1 ms steps (`runnable`), updating the ratio at each.
    fn run(a: &mut LegacyAvg, now: &mut u64, ms: u64, runnable: bool, scale: u64) {
        for _ in 0..ms {
            *now += PERIOD_NS;
            a.update_entity_load_avg(*now, runnable, runnable, scale, 1024);
        }
    }

    #[test]
    fn a_saturated_history_crosses_700_after_about_53_periods() {
        // A long-idle task (period saturated, sum 0) starts to run all the time.
        let mut a = LegacyAvg::new_task(false, 1024, 0);
        let mut now = 0;
        run(&mut a, &mut now, 1000, false, FREQSCALE_ONE);
        assert_eq!(a.load_avg_ratio, 0);
        let mut n = 0;
        while a.load_avg_ratio < 700 {
            run(&mut a, &mut now, 1, true, FREQSCALE_ONE);
            n += 1;
        }
        assert!((52..=55).contains(&n), "700 after {n} periods");
        run(&mut a, &mut now, 1000, true, FREQSCALE_ONE);
        assert!(a.load_avg_ratio >= 1000, "{}", a.load_avg_ratio);
        // and falls below 512 about 32 periods after it stops
        let mut n = 0;
        while a.load_avg_ratio >= 512 {
            run(&mut a, &mut now, 1, false, FREQSCALE_ONE);
            n += 1;
        }
        assert!((31..=34).contains(&n), "512 after {n} idle periods");
    }

    #[test]
    fn a_young_task_reads_its_short_history() {
        let mut a = LegacyAvg::new_task(false, 1024, 0);
        let mut now = 0;
        run(&mut a, &mut now, 2, true, FREQSCALE_ONE);
        assert!(a.load_avg_ratio >= 1000, "{}", a.load_avg_ratio);
        let mut b = LegacyAvg::new_task(false, 1024, 0);
        let mut now = 0;
        run(&mut b, &mut now, 2, false, FREQSCALE_ONE);
        assert_eq!(b.load_avg_ratio, 0);
    }

    #[test]
    fn frequency_invariance_scales_the_sums_not_the_period() {
        let mut a = LegacyAvg::new_task(false, 1024, 0);
        let mut now = 0;
        run(&mut a, &mut now, 2000, true, 512);
        assert!(
            (500..=512).contains(&a.load_avg_ratio),
            "{}",
            a.load_avg_ratio
        );
        assert_eq!(cpufreq_calc_scale(500_000, 1_000_000, 500_000), 512);
        // max >> 10 truncates: at the maximum the scale can exceed 1024
        assert_eq!(cpufreq_calc_scale(0, 1_000_000, 1_000_000), 1024);
        assert_eq!(cpufreq_calc_scale(0, 1_048_575, 1_048_575), 1025);
    }

    #[test]
    fn a_boosted_new_task_starts_saturated_and_decays_with_the_half_life() {
        let mut a = LegacyAvg::new_task(true, 1024, 0);
        assert_eq!((a.load_avg_ratio, a.load_avg_contrib), (1023, 1023 * 1024));
        let mut now = 0;
        run(&mut a, &mut now, 32, false, FREQSCALE_ONE);
        assert!(
            (500..=520).contains(&a.load_avg_ratio),
            "{}",
            a.load_avg_ratio
        );
    }

    #[test]
    fn sub_unit_remainders_are_dropped_at_each_update() {
        let mut a = LegacyAvg::new_task(false, 1024, 0);
        // 1500 ns: one 1024-ns unit, the 476 ns left are lost
        a.update_runnable_avg(1500, true, true, FREQSCALE_ONE);
        assert_eq!((a.runnable_avg_sum, a.runnable_avg_period), (1, 1));
        assert_eq!(a.last_runnable_update, 1500);
        // going back in time only resets the clock
        assert!(!a.update_runnable_avg(1000, true, true, FREQSCALE_ONE));
        assert_eq!(a.last_runnable_update, 1000);
    }
}
