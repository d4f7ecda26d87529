//! Kernel profiles (`kernel = "v6.11"`): which option values each modelled release sets
//! ([`KernelProfile::switches`]), the profile's full options, the Markdown table of
//! docs/kernel-profiles.md, and how options set beside a profile survive a change of it.

use super::Options;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Copies into `target` every leaf where `changed` differs from `base` (the options a user
/// set away from a profile's values).
pub(super) fn overlay_changes(base: &mut Value, changed: &Value, target: &mut Value) {
    match (base, changed, target) {
        (Value::Object(b), Value::Object(c), Value::Object(t)) => {
            for (k, cv) in c {
                if k == "kernel" {
                    continue;
                }
                match (b.get_mut(k), t.get_mut(k)) {
                    (Some(bv), Some(tv)) => overlay_changes(bv, cv, tv),
                    (_, Some(tv)) => *tv = cv.clone(),
                    _ => {}
                }
            }
        }
        (b, c, t) => {
            if *b != *c {
                *t = c.clone();
            }
        }
    }
}

/// A kernel release whose version-dependent behaviour the options reproduce (`kernel`).
///
/// A profile sets every switch whose kernel behaviour changed between the releases
/// modelled; [`KernelProfile::switches`] lists them (docs/kernel-profiles.md is that
/// table). Not modelled in any profile: DELAY_DEQUEUE and PREEMPT_SHORT (v6.12+), so the
/// `v6.12` and `v6.17` profiles are EEVDF as of v6.11 with those releases' other changes.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    JsonSchema,
    Default,
)]
pub enum KernelProfile {
    /// v3.10: the scheduler HMP (seed 001) was built on and compared with (`smp`): every
    /// CPU alike to the scheduler (`sched.capacity_aware` off), PELT not
    /// frequency-invariant, CFS, no util_est, misfit or EAS. An approximation: the load balancer and wake-up are v4.20's, run on equal
    /// capacities (v3.10's own `find_busiest_group()` is not modelled).
    #[serde(rename = "v3.10")]
    V3_10,
    /// v4.4: the era of the scheduler-driven frequency selection series (seed 004): the
    /// v4.20 mechanics without util_est (v4.17) and misfit balancing (v4.20). An
    /// approximation: the capacity-aware wake-up (`wake_cap()`, v4.12) and the balancer are
    /// v4.20's.
    #[serde(rename = "v4.4")]
    V4_4,
    /// v4.20: CFS, `wake_cap()`, the pre-rework balancer, no EAS in mainline (v5.0).
    #[serde(rename = "v4.20")]
    V4_20,
    /// v5.9: the balancer before Vincent Guittot's fairness series.
    #[serde(rename = "v5.9")]
    V5_9,
    /// v5.10: the fairness series.
    #[serde(rename = "v5.10")]
    V5_10,
    /// v6.6: the first EEVDF release.
    #[serde(rename = "v6.6")]
    V6_6,
    /// v6.11 (the default).
    #[default]
    #[serde(rename = "v6.11")]
    V6_11,
    /// v6.12: custom slices, ENQUEUE_INITIAL for new tasks, the 1.5 × latency rate limit.
    #[serde(rename = "v6.12")]
    V6_12,
    /// v6.17: the mainline the overutilized series (2025) was written against; base slice
    /// 0.7 ms (v6.15+).
    #[serde(rename = "v6.17")]
    V6_17,
}

impl KernelProfile {
    /// Every profile, oldest first.
    pub const ALL: [KernelProfile; 9] = [
        KernelProfile::V3_10,
        KernelProfile::V4_4,
        KernelProfile::V4_20,
        KernelProfile::V5_9,
        KernelProfile::V5_10,
        KernelProfile::V6_6,
        KernelProfile::V6_11,
        KernelProfile::V6_12,
        KernelProfile::V6_17,
    ];

    /// The profile's name (`v6.11`).
    pub fn name(self) -> &'static str {
        match self {
            KernelProfile::V3_10 => "v3.10",
            KernelProfile::V4_4 => "v4.4",
            KernelProfile::V4_20 => "v4.20",
            KernelProfile::V5_9 => "v5.9",
            KernelProfile::V5_10 => "v5.10",
            KernelProfile::V6_6 => "v6.6",
            KernelProfile::V6_11 => "v6.11",
            KernelProfile::V6_12 => "v6.12",
            KernelProfile::V6_17 => "v6.17",
        }
    }

    /// The version-dependent options and the value this profile gives each, with the
    /// kernel change that decides it. Options not listed are the same in every profile.
    pub fn switches(self) -> Vec<(&'static str, Value, &'static str)> {
        use serde_json::json;
        use KernelProfile::*;
        let at_least = |v: KernelProfile| self >= v;
        vec![
            (
                "fair.variant",
                json!(if at_least(V6_6) { "eevdf" } else { "cfs" }),
                "EEVDF replaced the CFS rules in v6.6",
            ),
            (
                "fair.tick_slice_cap",
                json!(at_least(V6_6)),
                "CFS check_preempt_tick() caps the slice at sched_latency: v6.3-v6.5 (the CFS rules of the v6.x profiles)",
            ),
            (
                "fair.cfs_base_slice",
                json!(at_least(V6_6)),
                "CFS sched_slice() floored at min_granularity (BASE_SLICE): v5.12 (the CFS rules of the v6.x profiles)",
            ),
            (
                "fair.idle_min_granularity",
                json!(at_least(V6_6)),
                "CFS SCHED_IDLE slice floor sysctl_sched_idle_min_granularity and sleeper credit: v5.16 (the CFS rules of the v6.x profiles)",
            ),
            (
                "fair.base_slice_ns",
                json!(if at_least(V6_17) { 700_000 } else { 750_000 }),
                "sysctl_sched_base_slice 0.75 ms, 0.7 ms from v6.15",
            ),
            (
                "fair.custom_slice",
                json!(at_least(V6_12)),
                "sched_attr.sched_runtime as a fair slice: v6.12",
            ),
            (
                "fair.enqueue_initial",
                json!(at_least(V6_12)),
                "wake_up_new_task() with ENQUEUE_INITIAL: v6.12",
            ),
            (
                "sched.repick",
                json!(if at_least(V6_12) { "v6_12" } else { "v6_11" }),
                "put_prev_set_next_task() skips a re-picked task: v6.12",
            ),
            (
                "fair.wakeup",
                json!(if at_least(V5_9) { "v6_11" } else { "wake_cap" }),
                "wake_cap() v4.12-v5.6, select_idle_capacity() from v5.7",
            ),
            ("fair.sis_util", json!(at_least(V6_6)), "SIS_UTIL: v6.0"),
            ("pelt.util_est", json!(at_least(V4_20)), "util_est: v4.17"),
            (
                "cpufreq.ondemand.version",
                json!(if at_least(V4_20) { "v4_7" } else { "v4_4" }),
                "dbs samples from cpufreq_update_util(): v4.7",
            ),
            (
                "sched.rt_runtime_share",
                json!(!at_least(V5_10)),
                "RT_RUNTIME_SHARE off by default: v5.10",
            ),
            (
                "sched.avg_idle",
                json!(if at_least(V4_4) { "v3_13" } else { "v3_10" }),
                "avg_idle capped after the update, at 2 x max_idle_balance_cost: v3.13",
            ),
            (
                "sched.sched_idle_cpu",
                json!(at_least(V5_9)),
                "sched_idle_cpu(): wake-up fallback v5.4, as idle and the balance rules v5.6",
            ),
            (
                "sched.dl_scale_invariant",
                json!(at_least(V4_20)),
                "update_curr_dl() charges the CBS budget scaled by frequency and capacity: v4.16",
            ),
            (
                "balance.misfit",
                json!(at_least(V4_20)),
                "misfit balancing: v4.20",
            ),
            (
                "pelt.util_est_version",
                json!(if at_least(V6_11) { "v6_8" } else { "v5_13" }),
                "util_est as one EWMA with flag: v6.8",
            ),
            (
                "pelt.migrate_pelt_lag",
                json!(at_least(V6_6)),
                "migrate_se_pelt_lag(): v6.0",
            ),
            (
                "balance.version",
                json!(match self {
                    V3_10 | V4_4 | V4_20 => "v4.20",
                    V5_9 => "v5.9",
                    V5_10 => "v5.10",
                    V6_6 => "v6.6",
                    _ => "v6.11",
                }),
                "rework v5.5, fairness v5.10, active balance v5.12, shr_bound v6.8",
            ),
            (
                "pelt.frequency_invariance",
                json!(at_least(V4_4)),
                "frequency-invariant PELT on arm (arch_scale_freq_capacity); 3.x tracked load at the running frequency",
            ),
            (
                "sched.capacity_aware",
                json!(at_least(V4_4)),
                "CPU capacities from the DT (arm cpu_efficiency, arm64 capacity-dmips-mhz v4.10); seed 001's 3.x baseline saw every CPU alike",
            ),
            (
                "eas.mode",
                json!(if at_least(V5_9) { "auto" } else { "off" }),
                "EAS in mainline from v5.0",
            ),
            (
                "eas.em_version",
                json!(if at_least(V6_11) { "v6_9" } else { "v5_x" }),
                "EM cost 10 x P / perf: v6.9",
            ),
            (
                "eas.feec_energy_margin",
                json!(!at_least(V6_6)),
                "feec's 1/16 saving rule v5.0-v5.17",
            ),
            (
                "eas.runnable_boost",
                json!(at_least(V6_6)),
                "eenv_pd_max_util() reads cpu_util(.., boost=1): v6.5",
            ),
            (
                "eas.em_max_complexity",
                json!(!at_least(V6_11)),
                "EM_MAX_COMPLEXITY: in v6.6, gone by v6.11",
            ),
            (
                "cpufreq.schedutil_version",
                json!(if at_least(V6_11) { "v6_8" } else { "v5_x" }),
                "sugov_effective_cpu_perf() in schedutil and EAS's estimate: v6.8",
            ),
            (
                "cpufreq.schedutil_cfs_util",
                json!(if at_least(V6_6) { "boost" } else { "cfs" }),
                "sugov_get_util() reads cpu_util_cfs_boost(): v6.5",
            ),
            (
                "cpufreq.rate_limit_default",
                json!(if at_least(V6_12) {
                    "v6_12"
                } else if at_least(V6_11) {
                    "v6_9"
                } else {
                    "v4_14"
                }),
                "transition delay: 10 ms cap to v6.8, 2 ms v6.9-v6.11, 1.5 x latency v6.12",
            ),
        ]
    }

    /// The table of what every profile sets (Markdown: `hetsched schema kernels`, and
    /// docs/kernel-profiles.md, which a test keeps equal to it).
    pub fn table() -> String {
        let mut out = String::from("| option |");
        for k in KernelProfile::ALL {
            out.push_str(&format!(" {} |", k.name()));
        }
        out.push_str(" what decides it |\n|---|");
        for _ in KernelProfile::ALL {
            out.push_str("---|");
        }
        out.push_str("---|\n");
        let rows = KernelProfile::V6_11.switches();
        for (i, (key, _, why)) in rows.iter().enumerate() {
            out.push_str(&format!("| `{key}` |"));
            for k in KernelProfile::ALL {
                let v = &k.switches()[i].1;
                let v = v.as_str().map_or_else(|| v.to_string(), str::to_string);
                out.push_str(&format!(" {v} |"));
            }
            out.push_str(&format!(" {why} |\n"));
        }
        out
    }

    /// Every option at this profile's values.
    pub fn options(self) -> Options {
        let mut tree = serde_json::to_value(Options::v6_11()).unwrap_or_default();
        for (key, value, _) in self.switches() {
            let mut node = &mut tree;
            for part in key.split('.') {
                node = &mut node[part];
            }
            *node = value;
        }
        tree["kernel"] = serde_json::to_value(self).unwrap_or_default();
        serde_json::from_value(tree).unwrap_or_else(|_| Options::v6_11())
    }
}
