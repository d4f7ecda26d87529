//! The ondemand governor (drivers/cpufreq/cpufreq_ondemand.c, v6.11): `od_dbs_update()`,
//! `od_update()`, `dbs_freq_increase()` and `generic_powersave_bias_target()` on the dbs
//! framework ([`super::dbs`]).
//!
//! At each sample: a load above `up_threshold` goes to `policy->max` (RELATION_HE), and
//! the sampling period is multiplied by `sampling_down_factor` while there; otherwise the
//! frequency is proportional to the load, `cpuinfo.min + load × (cpuinfo.max −
//! cpuinfo.min) / 100`, to the closest OPP (RELATION_CE). `powersave_bias` (per mille)
//! lowers the target and realises the average by alternating between the two OPPs around
//! it within one sampling period (`OD_SUB_SAMPLE`).

use super::dbs::{DbsCpuInput, PolicyDbs};
use super::freq_table::Relation;

/// `DEF_FREQUENCY_UP_THRESHOLD`: `up_threshold` without NOHZ idle micro-accounting.
pub const DEF_FREQUENCY_UP_THRESHOLD: u32 = 80;
/// `MICRO_FREQUENCY_UP_THRESHOLD`: `od_init()`'s `up_threshold` when
/// `get_cpu_idle_time_us()` works (NOHZ idle accounting, as here).
pub const MICRO_FREQUENCY_UP_THRESHOLD: u32 = 95;
/// `MAX_SAMPLING_DOWN_FACTOR`.
pub const MAX_SAMPLING_DOWN_FACTOR: u32 = 100_000;

/// `od_dbs_info->sample_type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SampleType {
    /// `OD_NORMAL_SAMPLE`.
    Normal,
    /// `OD_SUB_SAMPLE`: the low half of a powersave-bias period.
    Sub,
}

/// `struct od_policy_dbs_info` + `od_dbs_tuners`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OdPolicy {
    /// The framework's state.
    pub dbs: PolicyDbs,
    /// `powersave_bias` (‰).
    pub powersave_bias: u32,
    sample_type: SampleType,
    freq_lo: u64,
    freq_lo_delay_us: u64,
    freq_hi_delay_us: u64,
}

impl OdPolicy {
    /// `od_start()`: a normal sample first, no powersave-bias low frequency.
    pub fn new(dbs: PolicyDbs, powersave_bias: u32) -> OdPolicy {
        OdPolicy {
            dbs,
            powersave_bias,
            sample_type: SampleType::Normal,
            freq_lo: 0,
            freq_lo_delay_us: 0,
            freq_hi_delay_us: 0,
        }
    }

    /// `od_dbs_update()` at `now`: the frequency to set (`None`: unchanged) and the delay
    /// (µs) to the next sample.
    pub fn dbs_update(&mut self, now: u64, inputs: &[DbsCpuInput]) -> (Option<u64>, u64) {
        let sample_type = self.sample_type;
        self.sample_type = SampleType::Normal;
        if sample_type == SampleType::Sub && self.dbs.sample_delay_ns > 0 {
            let f = self.dbs.driver_target(self.freq_lo, Relation::H, true);
            return (f, self.freq_lo_delay_us);
        }
        let f = self.od_update(now, inputs);
        if self.freq_lo != 0 {
            self.sample_type = SampleType::Sub;
            return (f, self.freq_hi_delay_us);
        }
        let d = &self.dbs;
        (f, u64::from(d.data.sampling_rate) * u64::from(d.rate_mult))
    }

    /// `od_update()`.
    fn od_update(&mut self, now: u64, inputs: &[DbsCpuInput]) -> Option<u64> {
        let load = self.dbs.dbs_update(now, inputs);
        self.freq_lo = 0;
        if load > self.dbs.data.up_threshold {
            if self.dbs.cur < self.dbs.table.max {
                self.dbs.rate_mult = self.dbs.data.sampling_down_factor;
            }
            return self.dbs_freq_increase(self.dbs.table.max);
        }
        let (min_f, max_f) = (self.dbs.table.cpuinfo_min(), self.dbs.table.cpuinfo_max());
        // unsigned int arithmetic, as the kernel's
        let mut freq_next =
            (min_f as u32).wrapping_add(load.wrapping_mul((max_f - min_f) as u32) / 100) as u64;
        self.dbs.rate_mult = 1;
        if self.powersave_bias != 0 {
            freq_next = self.powersave_bias_target(freq_next, Relation::L);
        }
        let closest = if self.dbs.data.v4_4 {
            Relation::CHigh
        } else {
            Relation::C
        };
        self.dbs.driver_target(freq_next, closest, true)
    }

    /// `dbs_freq_increase()`.
    fn dbs_freq_increase(&mut self, freq: u64) -> Option<u64> {
        if self.powersave_bias != 0 {
            let f = self.powersave_bias_target(freq, Relation::H);
            return self.dbs.driver_target(f, Relation::L, true);
        }
        if self.dbs.cur == self.dbs.table.max {
            return None;
        }
        self.dbs.driver_target(freq, Relation::H, true)
    }

    /// `generic_powersave_bias_target()`: the higher of the two OPPs around the biased
    /// target, with `freq_lo` and the split of the sampling period between them.
    fn powersave_bias_target(&mut self, freq_next: u64, relation: Relation) -> u64 {
        let t = &self.dbs.table;
        let freq_req = t.resolve(freq_next, relation, true);
        let freq_reduc = freq_req * u64::from(self.powersave_bias) / 1000;
        let freq_avg = freq_req - freq_reduc;
        let freq_lo = t.resolve(freq_avg, Relation::H, true);
        let freq_hi = t.resolve(freq_avg, Relation::L, true);
        if freq_hi == freq_lo {
            self.freq_lo = 0;
            self.freq_lo_delay_us = 0;
            return freq_lo;
        }
        // unsigned int arithmetic, as the kernel's
        let rate = self.dbs.data.sampling_rate;
        let (avg, lo, hi) = (freq_avg as u32, freq_lo as u32, freq_hi as u32);
        let delay_hi_us = (avg - lo).wrapping_mul(rate).wrapping_add((hi - lo) / 2) / (hi - lo);
        self.freq_hi_delay_us = u64::from(delay_hi_us);
        self.freq_lo = freq_lo;
        self.freq_lo_delay_us = u64::from(rate.wrapping_sub(delay_hi_us));
        freq_hi
    }
}

#[cfg(test)]
mod tests {
    use super::super::dbs::{DbsData, PolicyDbs};
    use super::*;

    fn od(cur: u64, bias: u32, sdf: u32) -> OdPolicy {
        let data = DbsData {
            sampling_rate: 20_000,
            up_threshold: 95,
            sampling_down_factor: sdf,
            ignore_nice_load: false,
            io_is_busy: false,
            v4_4: false,
        };
        let inputs = [DbsCpuInput::default(); 2];
        OdPolicy::new(
            PolicyDbs::start(data, super::super::dbs::tests::table(), cur, 0, &inputs),
            bias,
        )
    }

    fn idle(us: [u64; 2]) -> [DbsCpuInput; 2] {
        us.map(|u| DbsCpuInput {
            idle_ns: u * 1000,
            nice_ns: 0,
        })
    }

    #[test]
    fn above_up_threshold_jumps_to_max_and_applies_sampling_down_factor() {
        let mut p = od(500_000, 0, 10);
        // 20 ms window, CPU 1 idle 0.5 ms: 97 % > 95
        let (f, delay) = p.dbs_update(20_000_000, &idle([20_000, 500]));
        assert_eq!(f, Some(2_000_000));
        assert_eq!(p.dbs.rate_mult, 10);
        assert_eq!(delay, 200_000);
        p.dbs.cur = 2_000_000;
        // already at max: no request, rate_mult stays
        let (f, _) = p.dbs_update(220_000_000, &idle([220_000, 500]));
        assert_eq!(f, None);
        assert_eq!(p.dbs.rate_mult, 10);
    }

    #[test]
    fn below_it_the_frequency_is_proportional_to_the_load_closest_opp() {
        let mut p = od(2_000_000, 0, 1);
        // 50 %: 500 + 0.5 × 1500 = 1250 MHz → closest is 1000 (a tie goes low); 60 %: 1400 → 1500
        let (f, delay) = p.dbs_update(20_000_000, &idle([10_000, 20_000]));
        assert_eq!((f, delay), (Some(1_000_000), 20_000));
        p.dbs.cur = 1_000_000;
        let (f, _) = p.dbs_update(40_000_000, &idle([18_000, 40_000]));
        assert_eq!(f, Some(1_500_000));
    }

    #[test]
    fn powersave_bias_alternates_between_the_opps_around_the_target() {
        // bias 200 ‰ at 60 % load: 1400 → closest-low 1500 (L) → avg 1200 between 1000 and 1500
        let mut p = od(500_000, 200, 1);
        let (f, delay) = p.dbs_update(20_000_000, &idle([8_000, 20_000]));
        assert_eq!(f, Some(1_500_000));
        // hi for (1200 − 1000) / (1500 − 1000) of 20 ms = 8 ms, then lo for 12 ms
        assert_eq!(delay, 8_000);
        p.dbs.cur = 1_500_000;
        p.dbs.sample_delay_ns = 8_000_000;
        let (f, delay) = p.dbs_update(28_000_000, &idle([8_000, 28_000]));
        assert_eq!((f, delay), (Some(1_000_000), 12_000));
    }
}
