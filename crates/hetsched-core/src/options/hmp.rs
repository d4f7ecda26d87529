//! `[hmp]`: ARM's big.LITTLE MP task placement (seed 001; LSK 3.10 `CONFIG_SCHED_HMP`,
//! `crate::policy::hmp`), its sysfs tunables (`/sys/kernel/hmp/*`) and Kconfig choices,
//! with the defaults of Linaro's LSK 3.10 tree and its `big-LITTLE-MP.conf`.

use super::OptionsError;
use crate::policy::hmp::HmpTunables;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `[hmp]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct HmpOptions {
    /// HMP placement on (platforms with two or more capacity classes): each fair task's
    /// `load_avg_ratio` is tracked as LSK 3.10 tracks it (`pelt::legacy`), and wake-up and
    /// fork placement moves a task up to an idle CPU of the faster domain when its ratio
    /// reaches `up_threshold`, down below `down_threshold`, and keeps it in its domain
    /// otherwise (`select_task_rq_fair()`'s HMP part, `sched_hmp_migrate` reason 0); the
    /// rebalance softirq's forced up-migration and a faster CPU's idle pull (reason 3);
    /// the offload of a saturated fast domain to idle slow CPUs (reason 2); no load
    /// balancing across its domains. Default off.
    pub enabled: bool,
    /// `hmp_up_threshold` (sysfs `up_threshold`, 0–1024). Default 700.
    pub up_threshold: u64,
    /// `hmp_down_threshold` (sysfs `down_threshold`, 0–1024). Default 512 (LSK 3.10; the
    /// 2013 Samsung copies used 256).
    pub down_threshold: u64,
    /// `hmp_next_up_threshold`: time in 1024-ns units after a task's up-migration before
    /// another (no sysfs). Default 4096 (≈ 4.2 ms).
    pub next_up_threshold: u64,
    /// `hmp_next_down_threshold`, the same for down-migrations. Default 4096.
    pub next_down_threshold: u64,
    /// `CONFIG_SCHED_HMP_PRIO_FILTER`: tasks of nice `prio_filter_nice` or above never go
    /// up at wake-up or by the forced up-migration (idle pull ignores it, as in LSK 3.10)
    /// and may always go down. Default on: the seed's RFC has it as its patch 4
    /// ("Introduce priority-based task migration filter"); Linaro's later
    /// big-LITTLE-MP.conf left it off.
    pub prio_filter: bool,
    /// `CONFIG_SCHED_HMP_PRIO_FILTER_VAL` (nice, −20–19). Default 5 (Kconfig).
    pub prio_filter_nice: i32,
    /// `hmp_packing_enabled` (`CONFIG_SCHED_HMP_LITTLE_PACKING`, sysfs `packing_enable`):
    /// light tasks going down fill the first slow CPU with room. Default on
    /// (big-LITTLE-MP.conf).
    pub packing: bool,
    /// `hmp_full_threshold` (sysfs `packing_limit`): a slow CPU takes a packed task while
    /// its ratio plus the task's stays within it. Default 650 (the Kconfig help's
    /// "NICE_0_LOAD × 9/8" disagrees with the code, which is followed here).
    pub full_threshold: u64,
    /// `CONFIG_HMP_FREQUENCY_INVARIANT_SCALE` (sysfs `frequency_invariant_load_scale`): the
    /// ratio's sums scaled by each CPU's `cur/max` frequency (1 under performance and
    /// powersave). Default on.
    pub freq_invariant: bool,
    /// New user tasks start with a saturated history on a big CPU
    /// (`hmp_task_should_forkboost()`). Default on (LSK; Samsung and Huawei trees turned
    /// it off).
    pub fork_boost: bool,
}

impl Default for HmpOptions {
    fn default() -> Self {
        let t = HmpTunables::default();
        HmpOptions {
            enabled: false,
            up_threshold: t.up_threshold,
            down_threshold: t.down_threshold,
            next_up_threshold: t.next_up_threshold,
            next_down_threshold: t.next_down_threshold,
            prio_filter: t.prio_filter,
            prio_filter_nice: t.up_prio - 120,
            packing: t.packing,
            full_threshold: t.full_threshold,
            freq_invariant: true,
            fork_boost: true,
        }
    }
}

impl HmpOptions {
    /// The policy's tunables.
    pub fn tunables(&self) -> HmpTunables {
        HmpTunables {
            up_threshold: self.up_threshold,
            down_threshold: self.down_threshold,
            next_up_threshold: self.next_up_threshold,
            next_down_threshold: self.next_down_threshold,
            prio_filter: self.prio_filter,
            up_prio: 120 + self.prio_filter_nice,
            packing: self.packing,
            full_threshold: self.full_threshold,
        }
    }

    /// The sysfs ranges (`hmp_theshold_from_sysfs()`: 0–1024) and nice's; HMP needs two
    /// or more capacity classes (`capacity_classes` of the platform).
    pub fn validate(&self, capacity_classes: usize) -> Result<(), OptionsError> {
        let bad = |key, msg: String| Err(OptionsError::Invalid { key, msg });
        for (key, v) in [
            ("hmp.up_threshold", self.up_threshold),
            ("hmp.down_threshold", self.down_threshold),
        ] {
            if v > 1024 {
                return bad(key, format!("{v} is out of range; expected 0 to 1024"));
            }
        }
        for (key, v) in [
            ("hmp.next_up_threshold", self.next_up_threshold),
            ("hmp.next_down_threshold", self.next_down_threshold),
            ("hmp.full_threshold", self.full_threshold),
        ] {
            if v > u64::from(u32::MAX) {
                return bad(
                    key,
                    format!("{v} is out of range; expected 0 to 4294967295"),
                );
            }
        }
        if !(-20..=19).contains(&self.prio_filter_nice) {
            return bad(
                "hmp.prio_filter_nice",
                format!(
                    "{} is out of range; expected -20 to 19",
                    self.prio_filter_nice
                ),
            );
        }
        if self.enabled && capacity_classes < 2 {
            return bad(
                "hmp.enabled",
                "HMP places tasks between CPUs of different capacities; this platform has one capacity".into(),
            );
        }
        Ok(())
    }
}
