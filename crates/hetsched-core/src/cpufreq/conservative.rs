//! The conservative governor (drivers/cpufreq/cpufreq_conservative.c, v6.11):
//! `cs_dbs_update()` on the dbs framework ([`super::dbs`]). The requested frequency moves
//! by `freq_step` % of `policy->max` per sample: up when the load is above `up_threshold`
//! (RELATION_HE), down when it is below `down_threshold` after `sampling_down_factor`
//! samples (RELATION_LE), and down one step per whole idle sampling period the policy
//! slept through.

use super::dbs::{DbsCpuInput, PolicyDbs};
use super::freq_table::Relation;

/// `DEF_FREQUENCY_UP_THRESHOLD`.
pub const DEF_FREQUENCY_UP_THRESHOLD: u32 = 80;
/// `DEF_FREQUENCY_DOWN_THRESHOLD`.
pub const DEF_FREQUENCY_DOWN_THRESHOLD: u32 = 20;
/// `DEF_FREQUENCY_STEP` (%; also the step in kHz when `freq_step` % of max rounds to 0).
pub const DEF_FREQUENCY_STEP: u32 = 5;
/// `MAX_SAMPLING_DOWN_FACTOR`.
pub const MAX_SAMPLING_DOWN_FACTOR: u32 = 10;

/// `struct cs_policy_dbs_info` + `cs_dbs_tuners`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CsPolicy {
    /// The framework's state.
    pub dbs: PolicyDbs,
    /// `down_threshold` (%).
    pub down_threshold: u32,
    /// `freq_step` (% of `policy->max`).
    pub freq_step: u32,
    down_skip: u32,
    requested_freq: u64,
}

impl CsPolicy {
    /// `cs_start()`: `requested_freq` is `policy->cur`.
    pub fn new(dbs: PolicyDbs, down_threshold: u32, freq_step: u32) -> CsPolicy {
        let requested_freq = dbs.cur;
        CsPolicy {
            dbs,
            down_threshold,
            freq_step,
            down_skip: 0,
            requested_freq,
        }
    }

    /// `get_freq_step()` (kHz).
    fn get_freq_step(&self) -> u64 {
        let step = u64::from(self.freq_step) * self.dbs.table.max / 100;
        if step == 0 {
            u64::from(DEF_FREQUENCY_STEP)
        } else {
            step
        }
    }

    /// `cs_dbs_update()` at `now`: the frequency to set (`None`: unchanged) and the delay
    /// (µs) to the next sample.
    pub fn dbs_update(&mut self, now: u64, inputs: &[DbsCpuInput]) -> (Option<u64>, u64) {
        let f = self.update(now, inputs);
        (f, u64::from(self.dbs.data.sampling_rate))
    }

    fn update(&mut self, now: u64, inputs: &[DbsCpuInput]) -> Option<u64> {
        let load = self.dbs.dbs_update(now, inputs);
        let mut requested = self.requested_freq;
        if self.freq_step == 0 {
            return None;
        }
        let (min, max) = (self.dbs.table.min, self.dbs.table.max);
        if requested > max || requested < min {
            requested = self.dbs.cur;
            self.requested_freq = requested;
        }
        let freq_step = self.get_freq_step();
        if self.dbs.idle_periods < u32::MAX {
            let freq_steps = u64::from(self.dbs.idle_periods) * freq_step;
            requested = if requested > min + freq_steps {
                requested - freq_steps
            } else {
                min
            };
            self.dbs.idle_periods = u32::MAX;
        }
        if load > self.dbs.data.up_threshold {
            self.down_skip = 0;
            if requested == max {
                return None;
            }
            requested = (requested + freq_step).min(max);
            self.requested_freq = requested;
            return self.dbs.driver_target(requested, Relation::H, true);
        }
        self.down_skip += 1;
        if self.down_skip < self.dbs.data.sampling_down_factor {
            return None;
        }
        self.down_skip = 0;
        if load < self.down_threshold {
            if requested == min {
                return None;
            }
            requested = if requested > freq_step {
                requested - freq_step
            } else {
                min
            };
            self.requested_freq = requested;
            return self.dbs.driver_target(requested, Relation::L, true);
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::super::dbs::{DbsData, PolicyDbs};
    use super::*;

    fn cs(cur: u64) -> CsPolicy {
        let data = DbsData {
            sampling_rate: 20_000,
            up_threshold: 80,
            sampling_down_factor: 1,
            ignore_nice_load: false,
            io_is_busy: false,
            v4_4: false,
        };
        let inputs = [DbsCpuInput::default(); 2];
        let dbs = PolicyDbs::start(data, super::super::dbs::tests::table(), cur, 0, &inputs);
        CsPolicy::new(dbs, 20, 5)
    }

    fn idle(us: [u64; 2]) -> [DbsCpuInput; 2] {
        us.map(|u| DbsCpuInput {
            idle_ns: u * 1000,
            nice_ns: 0,
        })
    }

    #[test]
    fn steps_up_by_freq_step_of_max_and_down_below_down_threshold() {
        let mut p = cs(1_000_000);
        // busy: requested 1000 + 5 % of 2000 MHz = 1100 MHz → highest OPP at or below: 1000
        let (f, d) = p.dbs_update(20_000_000, &idle([20_000, 0]));
        assert_eq!((f, d), (None, 20_000));
        assert_eq!(p.requested_freq, 1_100_000);
        for (i, want) in [(2u64, 1_200_000), (3, 1_300_000), (4, 1_400_000)] {
            p.dbs_update(i * 20_000_000, &idle([i * 20_000, 0]));
            assert_eq!(p.requested_freq, want);
        }
        let (f, _) = p.dbs_update(100_000_000, &idle([100_000, 0]));
        assert_eq!(f, Some(1_500_000));
        p.dbs.cur = 1_500_000;
        // 10 % load < 20: down one step, to the lowest OPP at or above 1400 MHz: 1500
        let (f, _) = p.dbs_update(120_000_000, &idle([120_000, 18_000]));
        assert_eq!((f, p.requested_freq), (None, 1_400_000));
    }

    #[test]
    fn idle_periods_step_down_once_each() {
        let mut p = cs(2_000_000);
        // 100 ms all idle on both CPUs: 5 periods → 5 steps, then one more for the low load
        let (f, _) = p.dbs_update(100_000_000, &idle([100_000, 100_000]));
        assert_eq!(p.requested_freq, 2_000_000 - 6 * 100_000);
        assert_eq!(f, Some(1_500_000));
    }
}
