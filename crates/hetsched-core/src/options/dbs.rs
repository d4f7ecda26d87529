//! `[cpufreq.ondemand]` and `[cpufreq.conservative]`: the dbs governors' tunables, each
//! with its sysfs name, its v6.11 default and the range its sysfs store accepts
//! (drivers/cpufreq/cpufreq_ondemand.c, cpufreq_conservative.c, cpufreq_governor.c).
//! Values the kernel would clamp silently (`powersave_bias` above 1000, `freq_step` above
//! 100) or refuse are rejected here with the range.

use super::OptionsError;
use crate::cpufreq::{conservative, dbs, ondemand};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Which ondemand: how it samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, Default)]
pub enum OndemandVersion {
    /// v4.7+ (v6.11 read): samples from the scheduler's `cpufreq_update_util()` hook once
    /// `sampling_rate` has passed, its work in the sampling CPU's kworker.
    #[default]
    #[serde(rename = "v4_7")]
    V4_7,
    /// v4.4 (the scheduler-driven frequency series' era): a deferrable delayed work per
    /// CPU of the policy, re-armed on a jiffy grid of the sampling period
    /// (`delay_for_sampling_rate()`), evaluating the policy at most every half period
    /// (`need_load_eval()`), the previous load reused after a long wall-time window, the
    /// closest OPP chosen upwards on a tie, and `sampling_rate` defaulting to
    /// `max(10 ms, 20 × latency, 1000 × latency)`.
    #[serde(rename = "v4_4")]
    V4_4,
}

/// `[cpufreq.ondemand]` (`/sys/devices/system/cpu/cpufreq/ondemand/`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct OndemandOptions {
    /// Which kernel's ondemand (`v4_7`: v4.7 and later, the default; `v4_4`); the kernel
    /// profile sets it.
    pub version: OndemandVersion,
    /// `sampling_rate` (µs), at least `2 × TICK_NSEC / 1000` (8000 at HZ=250). Unset =
    /// `cpufreq_dbs_governor_init()`'s `max(2 ticks, cpufreq_policy_transition_delay_us())`
    /// (the transition delay as `cpufreq.rate_limit_default` picks it); with `v4_4`,
    /// `max(min_sampling_rate, 1000 × latency)`.
    pub sampling_rate: Option<u64>,
    /// `up_threshold` (%), 1–100: a load above it goes to the maximum. Default 95
    /// (`MICRO_FREQUENCY_UP_THRESHOLD`: NOHZ idle accounting; 80 without).
    pub up_threshold: u64,
    /// `sampling_down_factor`, 1–100000: the sampling period is this many times longer
    /// while at the maximum.
    pub sampling_down_factor: u64,
    /// `powersave_bias` (‰), 0–1000: the target is lowered by it and realised by
    /// alternating between the two OPPs around it.
    pub powersave_bias: u64,
    /// `io_is_busy`: iowait counts as busy (default off: `should_io_be_busy()` is on only
    /// for Intel Core 2 and later). The engine has no iowait, so it changes nothing yet.
    pub io_is_busy: bool,
    /// `ignore_nice_load`: run time of nice > 0 tasks counts as idle.
    pub ignore_nice_load: bool,
}

impl Default for OndemandOptions {
    fn default() -> Self {
        OndemandOptions {
            version: OndemandVersion::V4_7,
            sampling_rate: None,
            up_threshold: u64::from(ondemand::MICRO_FREQUENCY_UP_THRESHOLD),
            sampling_down_factor: 1,
            powersave_bias: 0,
            io_is_busy: false,
            ignore_nice_load: false,
        }
    }
}

/// `[cpufreq.conservative]` (`/sys/devices/system/cpu/cpufreq/conservative/`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct ConservativeOptions {
    /// `sampling_rate` (µs), as ondemand's.
    pub sampling_rate: Option<u64>,
    /// `up_threshold` (%): above `down_threshold`, at most 100. Default 80.
    pub up_threshold: u64,
    /// `down_threshold` (%): at least 1, below `up_threshold`. Default 20.
    pub down_threshold: u64,
    /// `freq_step` (% of the maximum frequency per step), 0–100; 0 never changes the
    /// frequency. Default 5.
    pub freq_step: u64,
    /// `sampling_down_factor`, 1–10: samples between two steps down.
    pub sampling_down_factor: u64,
    /// `ignore_nice_load`.
    pub ignore_nice_load: bool,
}

impl Default for ConservativeOptions {
    fn default() -> Self {
        ConservativeOptions {
            sampling_rate: None,
            up_threshold: u64::from(conservative::DEF_FREQUENCY_UP_THRESHOLD),
            down_threshold: u64::from(conservative::DEF_FREQUENCY_DOWN_THRESHOLD),
            freq_step: u64::from(conservative::DEF_FREQUENCY_STEP),
            sampling_down_factor: 1,
            ignore_nice_load: false,
        }
    }
}

fn check(key: &'static str, v: u64, lo: u64, hi: u64, what: &str) -> Result<(), OptionsError> {
    if (lo..=hi).contains(&v) {
        return Ok(());
    }
    Err(OptionsError::Invalid {
        key,
        msg: format!("{v} is out of range; expected {what}"),
    })
}

fn check_sampling_rate(
    key: &'static str,
    v: Option<u64>,
    tick_ns: u64,
) -> Result<(), OptionsError> {
    let Some(v) = v else { return Ok(()) };
    let min = dbs::dbs_min_sampling_interval_us(tick_ns);
    check(
        key,
        v,
        min,
        u64::from(u32::MAX),
        &format!("{min} (2 ticks) to 4294967295 µs"),
    )
}

impl OndemandOptions {
    /// The ranges of the sysfs stores.
    pub fn validate(&self, tick_ns: u64) -> Result<(), OptionsError> {
        check_sampling_rate(
            "cpufreq.ondemand.sampling_rate",
            self.sampling_rate,
            tick_ns,
        )?;
        check(
            "cpufreq.ondemand.up_threshold",
            self.up_threshold,
            1,
            100,
            "1 to 100 (%)",
        )?;
        let max = u64::from(ondemand::MAX_SAMPLING_DOWN_FACTOR);
        check(
            "cpufreq.ondemand.sampling_down_factor",
            self.sampling_down_factor,
            1,
            max,
            "1 to 100000",
        )?;
        check(
            "cpufreq.ondemand.powersave_bias",
            self.powersave_bias,
            0,
            1000,
            "0 to 1000 (‰)",
        )
    }
}

impl ConservativeOptions {
    /// The ranges of the sysfs stores.
    pub fn validate(&self, tick_ns: u64) -> Result<(), OptionsError> {
        check_sampling_rate(
            "cpufreq.conservative.sampling_rate",
            self.sampling_rate,
            tick_ns,
        )?;
        let down = self.down_threshold;
        check(
            "cpufreq.conservative.down_threshold",
            down,
            1,
            99,
            "1 to 99 (%), below up_threshold",
        )?;
        let what = format!("{} to 100 (%), above down_threshold ({down})", down + 1);
        check(
            "cpufreq.conservative.up_threshold",
            self.up_threshold,
            down + 1,
            100,
            &what,
        )?;
        check(
            "cpufreq.conservative.freq_step",
            self.freq_step,
            0,
            100,
            "0 to 100 (%)",
        )?;
        let max = u64::from(conservative::MAX_SAMPLING_DOWN_FACTOR);
        check(
            "cpufreq.conservative.sampling_down_factor",
            self.sampling_down_factor,
            1,
            max,
            "1 to 10",
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TICK: u64 = 4_000_000;

    #[test]
    fn defaults_are_the_v6_11_ones_and_valid() {
        let od = OndemandOptions::default();
        assert_eq!(
            (od.up_threshold, od.sampling_down_factor, od.powersave_bias),
            (95, 1, 0)
        );
        assert!(od.validate(TICK).is_ok());
        let cs = ConservativeOptions::default();
        assert_eq!(
            (cs.up_threshold, cs.down_threshold, cs.freq_step),
            (80, 20, 5)
        );
        assert!(cs.validate(TICK).is_ok());
    }

    #[test]
    fn out_of_range_tunables_are_rejected_with_the_range() {
        let od = OndemandOptions {
            sampling_rate: Some(7_999),
            ..OndemandOptions::default()
        };
        let e = od.validate(TICK).unwrap_err().to_string();
        assert!(
            e.contains("cpufreq.ondemand.sampling_rate") && e.contains("8000"),
            "{e}"
        );
        let od = OndemandOptions {
            powersave_bias: 1001,
            ..OndemandOptions::default()
        };
        assert!(od.validate(TICK).is_err());
        let cs = ConservativeOptions {
            up_threshold: 20,
            ..ConservativeOptions::default()
        };
        let e = cs.validate(TICK).unwrap_err().to_string();
        assert!(e.contains("above down_threshold (20)"), "{e}");
        let cs = ConservativeOptions {
            sampling_down_factor: 11,
            ..ConservativeOptions::default()
        };
        assert!(cs.validate(TICK).is_err());
    }
}
