//! `[fair]`: the fair class's tunables (kernel/sched/fair.c, features.h, and the
//! `sched_*_ns` sysctls of kernel/sysctl.c), their ranges, and the parameters the engine
//! reads from them.

use super::OptionsError;
use crate::sched::fair::{FairParams, FairVariant};
use crate::sched::sysctl_factor;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How tunables scale with the CPU count (`sysctl_sched_tunable_scaling`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, Default)]
#[serde(rename_all = "snake_case")]
pub enum TunableScaling {
    /// No scaling (factor 1).
    None,
    /// `1 + ilog2(min(ncpus, 8))` (the kernel default).
    #[default]
    Log,
    /// `min(ncpus, 8)`.
    Linear,
}

/// `[fair]`: the fair class (kernel/sched/fair.c, features.h).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct FairOptions {
    /// `eevdf` (v6.6+, default) or `cfs` (v6.5 and earlier).
    pub variant: FairVariant,
    /// `sysctl_sched_base_slice` before scaling, ns. Default 750000 (v6.6–v6.14).
    pub base_slice_ns: u64,
    /// Tunable scaling with the number of CPUs.
    pub tunable_scaling: TunableScaling,
    /// RUN_TO_PARITY (EEVDF).
    pub run_to_parity: bool,
    /// PLACE_LAG (EEVDF).
    pub place_lag: bool,
    /// PLACE_DEADLINE_INITIAL (EEVDF).
    pub place_deadline_initial: bool,
    /// WAKEUP_PREEMPTION.
    pub wakeup_preemption: bool,
    /// CFS `sysctl_sched_latency` before scaling, ns (6 ms).
    pub sched_latency_ns: u64,
    /// CFS `sysctl_sched_min_granularity` before scaling, ns (0.75 ms).
    pub min_granularity_ns: u64,
    /// CFS `sysctl_sched_wakeup_granularity` before scaling, ns (1 ms).
    pub wakeup_granularity_ns: u64,
    /// CFS GENTLE_FAIR_SLEEPERS.
    pub gentle_fair_sleepers: bool,
    /// CFS START_DEBIT.
    pub start_debit: bool,
    /// CFS `check_preempt_tick()` caps the ideal slice at `sched_latency` (v6.3–v6.5:
    /// "sched/fair: Limit sched slice duration"); off for v6.2 and earlier.
    pub tick_slice_cap: bool,
    /// CFS BASE_SLICE (kernel/sched/features.h, v5.12–v6.5, with ALT_PERIOD: "sched,fair:
    /// Alternative sched_slice()"): `sched_slice()` is never less than
    /// `sysctl_sched_min_granularity`. Off for v5.11 and earlier, whose `sched_slice()` is
    /// the weight's share of `__sched_period()` alone, however light the entity. (ALT_PERIOD's
    /// `rq->cfs.h_nr_running` is the root queue's `nr_running` without task groups.)
    pub cfs_base_slice: bool,
    /// CFS SCHED_IDLE slices (v5.16–v6.5, "sched: Reduce sched slice for SCHED_IDLE
    /// entities"): under BASE_SLICE a SCHED_IDLE entity's slice is floored at
    /// `sysctl_sched_idle_min_granularity` (0.75 ms, not scaled with the CPU count) instead
    /// of `sysctl_sched_min_granularity`, unless its queue holds SCHED_IDLE entities only
    /// (`se_is_idle(se) && !sched_idle_cfs_rq(cfs_rq)` in `sched_slice()`); and
    /// `place_entity()` credits a waking SCHED_IDLE entity `sysctl_sched_min_granularity`
    /// instead of `sysctl_sched_latency` (both halved by GENTLE_FAIR_SLEEPERS). A task's
    /// `se_is_idle()` is its SCHED_IDLE policy with `CONFIG_FAIR_GROUP_SCHED` (arm64's
    /// defconfig selects it through SCHED_AUTOGROUP; the tasks are all in the root group
    /// here); without it `se_is_idle()` is 0 and neither applies. Off for v5.15 and earlier.
    pub idle_min_granularity: bool,
    /// Wake-up placement on asymmetric systems: `v6_11` (default; `select_idle_capacity()`,
    /// v5.7+) or `wake_cap` (v4.12–v5.6: `wake_cap()` disables wake_affine for a task that
    /// does not fit the smaller of the waking and previous CPUs and sends it to the slow path).
    pub wakeup: WakeupVariant,
    /// WA_IDLE: `wake_affine()` prefers an idle waking or previous CPU.
    pub wa_idle: bool,
    /// WA_WEIGHT: `wake_affine()` compares capacity-scaled loads.
    pub wa_weight: bool,
    /// WA_BIAS: the load comparison favours prev by half of `imbalance_pct`.
    pub wa_bias: bool,
    /// SIS_UTIL: `select_idle_cpu()` scans at most `nr_idle_scan` CPUs of the LLC, from the
    /// LLC's utilization at the last periodic balance (v5.20+; off = scan the whole LLC).
    pub sis_util: bool,
    /// Custom slices (v6.12+): a fair task's `sched_attr.sched_runtime` (rt-app's
    /// `dl-runtime`, or a task-level `runtime`) is its slice, clamped to [0.1 ms, 100 ms].
    /// v6.11 and earlier ignore it for SCHED_OTHER (`se->slice = sysctl_sched_base_slice`).
    pub custom_slice: bool,
    /// EEVDF: `wake_up_new_task()` enqueues with ENQUEUE_INITIAL (v6.12+), so a new task's
    /// first deadline is half a slice out (PLACE_DEADLINE_INITIAL); v6.6–v6.11 enqueue it
    /// without, a full slice. (The CFS rules place a new task at fork, START_DEBIT.)
    pub enqueue_initial: bool,
}

/// The wake-up placement generation (`fair.wakeup`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, Default)]
pub enum WakeupVariant {
    /// v5.7+ (`select_idle_capacity()` on asymmetric systems), as in v6.11.
    #[default]
    #[serde(rename = "v6_11", alias = "v6.11")]
    V6_11,
    /// v4.12–v5.6 `wake_cap()` with `SD_BALANCE_WAKE` below asymmetric domains.
    #[serde(rename = "wake_cap")]
    WakeCap,
}

impl Default for FairOptions {
    fn default() -> Self {
        FairOptions {
            variant: FairVariant::Eevdf,
            base_slice_ns: 750_000,
            tunable_scaling: TunableScaling::Log,
            run_to_parity: true,
            place_lag: true,
            place_deadline_initial: true,
            wakeup_preemption: true,
            sched_latency_ns: 6_000_000,
            min_granularity_ns: 750_000,
            wakeup_granularity_ns: 1_000_000,
            gentle_fair_sleepers: true,
            start_debit: true,
            tick_slice_cap: true,
            cfs_base_slice: true,
            idle_min_granularity: true,
            wakeup: WakeupVariant::V6_11,
            wa_idle: true,
            wa_weight: true,
            wa_bias: true,
            sis_util: true,
            custom_slice: false,
            enqueue_initial: false,
        }
    }
}

impl FairOptions {
    /// `base_slice_ns` in 0.1–100 ms; the sysctl ranges of kernel/sysctl.c (v5.10):
    /// `sched_latency_ns` and `sched_min_granularity_ns` in 100 µs–1 s,
    /// `sched_wakeup_granularity_ns` in 0–1 s.
    pub fn validate(&self) -> Result<(), OptionsError> {
        if self.base_slice_ns < 100_000 || self.base_slice_ns > 100_000_000 {
            return Err(OptionsError::Invalid {
                key: "fair.base_slice_ns",
                msg: format!(
                    "{} is out of range; expected 100000..=100000000 ns",
                    self.base_slice_ns
                ),
            });
        }
        for (key, v, min) in [
            ("fair.sched_latency_ns", self.sched_latency_ns, 100_000),
            ("fair.min_granularity_ns", self.min_granularity_ns, 100_000),
            ("fair.wakeup_granularity_ns", self.wakeup_granularity_ns, 0),
        ] {
            if !(min..=crate::time::NSEC_PER_SEC).contains(&v) {
                return Err(OptionsError::Invalid {
                    key,
                    msg: format!("{v} is out of range; expected {min}..=1000000000 ns"),
                });
            }
        }
        Ok(())
    }

    /// The engine's fair-class parameters on `ncpus` CPUs with a tick of `tick_ns`: the
    /// slice and granularities scaled as `sysctl_sched_tunable_scaling` says.
    pub fn params(&self, ncpus: usize, tick_ns: u64) -> FairParams {
        let factor = match self.tunable_scaling {
            TunableScaling::None => 1,
            TunableScaling::Log => sysctl_factor(ncpus),
            TunableScaling::Linear => ncpus.clamp(1, 8) as u64,
        };
        FairParams {
            variant: self.variant,
            base_slice: self.base_slice_ns * factor,
            run_to_parity: self.run_to_parity,
            place_lag: self.place_lag,
            place_deadline_initial: self.place_deadline_initial,
            wakeup_preemption: self.wakeup_preemption,
            sched_latency: self.sched_latency_ns * factor,
            min_granularity: self.min_granularity_ns.max(1) * factor,
            wakeup_granularity: self.wakeup_granularity_ns * factor,
            nr_latency: (self.sched_latency_ns / self.min_granularity_ns.max(1)).max(1),
            gentle_fair_sleepers: self.gentle_fair_sleepers,
            start_debit: self.start_debit,
            tick_slice_cap: self.tick_slice_cap,
            cfs_base_slice: self.cfs_base_slice,
            idle_min_granularity: self.idle_min_granularity,
            tick_nsec: tick_ns,
        }
    }
}
