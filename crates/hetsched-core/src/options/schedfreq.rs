//! `[cpufreq.sched]`: the tunables of the 2016 series' `sched` governor (seed 004, RFCv7:
//! `throttle_nsec` under the policy's `sched_freq` sysfs group) and the scheduler sysctl it
//! reads RT demand through (`sched_time_avg_ms`).

use super::OptionsError;
use crate::cpufreq::schedfreq::SYSCTL_SCHED_TIME_AVG_MS;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `[cpufreq.sched]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct SchedGovOptions {
    /// `throttle_nsec`: no new transition for this long after one (ns). Default 0 (RFCv7
    /// made throttling optional; the Android backports used the transition latency).
    pub throttle_nsec: u64,
    /// `sysctl_sched_time_avg` (ms): `rt_avg` halves every half of it. Default 1000 (v4.4);
    /// the seed's measurements used 50.
    pub sched_time_avg_ms: u64,
}

impl Default for SchedGovOptions {
    fn default() -> Self {
        SchedGovOptions {
            throttle_nsec: 0,
            sched_time_avg_ms: SYSCTL_SCHED_TIME_AVG_MS,
        }
    }
}

impl SchedGovOptions {
    /// `sched_time_avg_ms` must be positive (the sysctl's `proc_dointvec_minmax` floor, 1).
    pub fn validate(&self) -> Result<(), OptionsError> {
        if !(1..=u64::from(u32::MAX)).contains(&self.sched_time_avg_ms) {
            return Err(OptionsError::Invalid {
                key: "cpufreq.sched.sched_time_avg_ms",
                msg: format!(
                    "{} is out of range; expected 1 to 4294967295 ms",
                    self.sched_time_avg_ms
                ),
            });
        }
        if self.throttle_nsec > u64::from(u32::MAX) {
            return Err(OptionsError::Invalid {
                key: "cpufreq.sched.throttle_nsec",
                msg: format!(
                    "{} is out of range; expected 0 to 4294967295 ns",
                    self.throttle_nsec
                ),
            });
        }
        Ok(())
    }
}
