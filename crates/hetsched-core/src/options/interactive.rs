//! `[cpufreq.interactive]`: the interactive governor's tunables with their AOSP defaults
//! (drivers/cpufreq/cpufreq_interactive.c, android-3.10 era; the android-4.4-era form has
//! the same defaults) and which form runs. The AOSP sysfs stores check
//! nothing but the number format; values that cannot work here (a zero `timer_rate`, a
//! load of 0 or above 100, a malformed frequency list) are rejected with one line.

use super::OptionsError;
use crate::cpufreq::interactive as ia;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `[cpufreq.interactive]` (`/sys/devices/system/cpu/cpufreq/interactive/`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct InteractiveOptions {
    /// Which AOSP form: `android_3_10` (default, read in 96boards/linux@48033bd6) or `android_4_4` (the android-4.4-era form, read in
    /// NotKit/kernel-4.4-alps@ed9efc79 without its MediaTek `#ifdef`s: load relative to
    /// `policy->cur`, no jump from below `hispeed_freq` above it, the policy's validate
    /// times, the timer always re-armed, only `IDLE_END`, a boost that sets no floor and
    /// `boost=0` ending a pulse).
    pub version: ia::InteractiveVersion,
    /// `timer_rate` (µs): the sampling period of each CPU's deferrable timer. Default 20000.
    pub timer_rate: u64,
    /// `timer_slack` (µs): how long after `timer_rate` an idle CPU above the minimum
    /// frequency is woken to re-evaluate (a normal timer); negative: never. Default 80000.
    pub timer_slack: i64,
    /// `go_hispeed_load` (%): a load at or above it jumps to `hispeed_freq`. Default 99.
    pub go_hispeed_load: u64,
    /// `hispeed_freq` (kHz); 0 = each policy's maximum (as at `GOV_START`). Default 0.
    pub hispeed_freq: u64,
    /// `target_loads`: `[load, freq, load, …]` — the load (%) aimed at below the first
    /// frequency (kHz), and from each listed frequency on. Default `[90]`.
    pub target_loads: Vec<u64>,
    /// `above_hispeed_delay`: `[delay, freq, delay, …]` (µs): how long a frequency at or
    /// above `hispeed_freq` is held before going higher. Default `[20000]`.
    pub above_hispeed_delay: Vec<u64>,
    /// `min_sample_time` (µs): how long a frequency is held before going lower. Default
    /// 80000.
    pub min_sample_time: u64,
    /// `boost` as the governor starts (written before `GOV_START`: no trace, no raise):
    /// every sample is treated as at `go_hispeed_load`. Default false. Writes during the
    /// run are `boost_at_us`.
    pub boost: bool,
    /// `io_is_busy` (the engine has no iowait, so it changes nothing yet).
    pub io_is_busy: bool,
    /// `boostpulse_duration` (µs, 0 to 2147483647: the kernel's `int`): how long a
    /// `boostpulse` write boosts. Default 80000 (`DEFAULT_MIN_SAMPLE_TIME`).
    pub boostpulse_duration: u64,
    /// Writes to `boostpulse`, as Android's PowerHAL makes on input events: the times (µs
    /// after the workload's start) at which one is made. Each sets `boostpulse_endtime =
    /// now + boostpulse_duration`, traces `cpufreq_interactive_boost: pulse` and calls
    /// `cpufreq_interactive_boost()`. No writer thread is modelled: the write takes no CPU
    /// time and is made on CPU 0 (its trace lines carry CPU 0's current task). Default
    /// none.
    pub boostpulse_at_us: Vec<u64>,
    /// Writes to `boost` during the run: `[[time µs after the workload's start, value], …]`
    /// with value 1 (`cpufreq_interactive_boost: on` and `cpufreq_interactive_boost()`) or
    /// 0 (`cpufreq_interactive_unboost: off`), made on CPU 0 like `boostpulse_at_us`; at
    /// equal times they come before the `boostpulse` writes. Default none.
    pub boost_at_us: Vec<[u64; 2]>,
}

impl Default for InteractiveOptions {
    fn default() -> Self {
        let t = ia::InteractiveTunables::default();
        InteractiveOptions {
            version: ia::InteractiveVersion::Android3_10,
            timer_rate: t.timer_rate,
            timer_slack: t.timer_slack,
            go_hispeed_load: t.go_hispeed_load,
            hispeed_freq: t.hispeed_freq,
            target_loads: t.target_loads,
            above_hispeed_delay: t.above_hispeed_delay,
            min_sample_time: t.min_sample_time,
            boost: t.boost,
            io_is_busy: t.io_is_busy,
            boostpulse_duration: t.boostpulse_duration,
            boostpulse_at_us: Vec::new(),
            boost_at_us: Vec::new(),
        }
    }
}

fn invalid(key: &'static str, msg: String) -> OptionsError {
    OptionsError::Invalid { key, msg }
}

/// `get_tokenized_data()`'s shape: an odd count, `value [freq value]…`, frequencies rising.
fn check_list(
    key: &'static str,
    l: &[u64],
    value_ok: impl Fn(u64) -> bool,
    what: &str,
) -> Result<(), OptionsError> {
    if l.len() % 2 == 0 {
        return Err(invalid(
            key,
            format!(
                "{} values given; expected an odd count: value [freq value]…",
                l.len()
            ),
        ));
    }
    for (i, &v) in l.iter().enumerate() {
        if i % 2 == 0 && !value_ok(v) {
            return Err(invalid(
                key,
                format!("{v} is out of range; expected {what}"),
            ));
        }
        if i % 2 == 1 && i >= 3 && v <= l[i - 2] {
            return Err(invalid(
                key,
                format!(
                    "frequency {v} kHz follows {} kHz; expected rising frequencies",
                    l[i - 2]
                ),
            ));
        }
    }
    Ok(())
}

impl InteractiveOptions {
    /// Checks the values, one line each.
    pub fn validate(&self) -> Result<(), OptionsError> {
        if !(1..=u64::from(u32::MAX)).contains(&self.timer_rate) {
            return Err(invalid(
                "cpufreq.interactive.timer_rate",
                format!(
                    "{} is out of range; expected 1 to 4294967295 µs",
                    self.timer_rate
                ),
            ));
        }
        if !(1..=100).contains(&self.go_hispeed_load) {
            return Err(invalid(
                "cpufreq.interactive.go_hispeed_load",
                format!(
                    "{} is out of range; expected 1 to 100 (%)",
                    self.go_hispeed_load
                ),
            ));
        }
        check_list(
            "cpufreq.interactive.target_loads",
            &self.target_loads,
            |v| (1..=100).contains(&v),
            "a load of 1 to 100 (%)",
        )?;
        check_list(
            "cpufreq.interactive.above_hispeed_delay",
            &self.above_hispeed_delay,
            |v| v <= u64::from(u32::MAX),
            "a delay of at most 4294967295 µs",
        )?;
        if self.boostpulse_duration > i32::MAX as u64 {
            return Err(invalid(
                "cpufreq.interactive.boostpulse_duration",
                format!(
                    "{} is out of range; expected 0 to 2147483647 µs",
                    self.boostpulse_duration
                ),
            ));
        }
        if let Some([t, v]) = self.boost_at_us.iter().find(|w| w[1] > 1) {
            return Err(invalid(
                "cpufreq.interactive.boost_at_us",
                format!("[{t}, {v}]: the value {v} is out of range; expected 0 or 1"),
            ));
        }
        Ok(())
    }

    /// The governor's tunables.
    pub fn tunables(&self) -> ia::InteractiveTunables {
        ia::InteractiveTunables {
            timer_rate: self.timer_rate,
            timer_slack: self.timer_slack,
            go_hispeed_load: self.go_hispeed_load,
            hispeed_freq: self.hispeed_freq,
            target_loads: self.target_loads.clone(),
            above_hispeed_delay: self.above_hispeed_delay.clone(),
            min_sample_time: self.min_sample_time,
            boost: self.boost,
            io_is_busy: self.io_is_busy,
            boostpulse_duration: self.boostpulse_duration,
            boostpulse_endtime: 0,
            boosted: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_validate_and_bad_lists_do_not() {
        assert!(InteractiveOptions::default().validate().is_ok());
        let o = InteractiveOptions {
            target_loads: vec![85, 1_000_000],
            ..InteractiveOptions::default()
        };
        assert!(o.validate().unwrap_err().to_string().contains("odd count"));
        let o = InteractiveOptions {
            target_loads: vec![85, 1_000_000, 90, 900_000, 95],
            ..InteractiveOptions::default()
        };
        assert!(o.validate().unwrap_err().to_string().contains("rising"));
        let o = InteractiveOptions {
            target_loads: vec![0],
            ..InteractiveOptions::default()
        };
        assert!(o.validate().is_err());
        let o = InteractiveOptions {
            boostpulse_duration: 1 << 31,
            ..InteractiveOptions::default()
        };
        let e = o.validate().unwrap_err().to_string();
        assert!(
            e.contains("boostpulse_duration") && !e.contains('\n'),
            "{e}"
        );
        let o = InteractiveOptions {
            boost_at_us: vec![[1000, 1], [2000, 2]],
            ..InteractiveOptions::default()
        };
        let e = o.validate().unwrap_err().to_string();
        assert!(e.contains("expected 0 or 1"), "{e}");
        let o = InteractiveOptions {
            boostpulse_at_us: vec![0, u64::MAX],
            boost_at_us: vec![[5, 0], [u64::MAX, 1]],
            ..InteractiveOptions::default()
        };
        assert!(o.validate().is_ok());
    }
}
