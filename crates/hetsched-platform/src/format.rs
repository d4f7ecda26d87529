//! The YAML platform format: the serde structures a platform file is read into.
//!
//! These types are the *file* shape (what a SoC engineer writes); [`crate::parse_str`]
//! validates them and derives the [`hetsched_core::platform::Platform`] the engine reads.
//! Unknown keys are rejected everywhere. `docs/platform-format.md` describes the format
//! with an example; [`crate::platform_schema`] prints its JSON schema.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};

/// A platform description file (`presets/platforms/NAME.yaml`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PlatformFile {
    /// Short platform name, e.g. `hikey960`.
    pub name: String,
    /// One-line description: SoC, board and core mix.
    pub description: String,
    /// Where the numbers come from (kernel file and version, seed document), one entry per
    /// group of facts.
    #[serde(default)]
    pub sources: Vec<String>,
    /// Documented deviations and assumptions. The loader appends its own notes (capacity
    /// override, assumed power models).
    #[serde(default)]
    pub notes: Vec<String>,
    /// The cpufreq driver (`scaling_driver`): `cpufreq-dt` (default, the generic
    /// device-tree driver), `scpi`, `vexpress-spc`, `scmi` or `apple-soc`. It decides
    /// whether schedutil can switch frequency in scheduler context (fast switch: `scmi`,
    /// `apple-soc`) or through its kthread.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub cpufreq_driver: Option<hetsched_core::platform::CpufreqDriver>,
    /// Performance (frequency) domains: one per cpufreq policy. Every logical CPU
    /// `0..N-1` appears in exactly one of them; a domain's CPUs need not be contiguous.
    pub perf_domains: Vec<PerfDomainFile>,
    /// Clusters (CPUs sharing a last-level cache, the device tree's `cpu-map` clusters).
    /// Optional: by default every perf domain is one cluster of the same name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clusters: Option<Vec<ClusterFile>>,
    /// Idle states by name (the device tree's `idle-states` node), referred to from
    /// `perf_domains[*].idle_states`. WFI (cpuidle state 0) is implicit and not listed.
    #[serde(
        default,
        deserialize_with = "unique_map",
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    pub idle_states: BTreeMap<String, IdleStateFile>,
    /// Capacities per logical CPU (index = CPU id) that replace the derived ones, e.g. the
    /// `cpu_capacity` values a seed reports from a live system (ACPI/CPPC boots). Each in
    /// `1..=1024`, equal within a perf domain. A note records the replacement.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity_override: Option<Vec<u64>>,
    /// Where each number came from, by key (`perf_domains.cluster0.opps[408000kHz].uv`):
    /// a device-tree node and property, or an overlay file. Written by
    /// `hetsched platforms import`; `platforms show` prints it.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub provenance: BTreeMap<String, String>,
}

/// One performance domain (cpufreq policy) with its CPUs, core type and OPP table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PerfDomainFile {
    /// Name, unique in the file (e.g. the device tree's `cluster0`).
    pub name: String,
    /// Logical CPU ids of this domain (`policy->related_cpus`).
    pub cpus: Vec<usize>,
    /// Micro-architecture of these CPUs, e.g. `cortex-a53`.
    pub core: String,
    /// `capacity-dmips-mhz` of the CPU nodes. Give it for every domain or for none (then
    /// every CPU gets 1024, as the kernel does).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity_dmips_mhz: Option<u64>,
    /// hetsched's own, not the kernel's: the DMIPS/MHz at which the tasks' *work* runs on
    /// these CPUs (rt-app `run`, the generators' requests), when a workload's speed ratio
    /// between core types is not the device tree's Dhrystone-based one. The kernel never
    /// sees it (capacity, PELT, EAS and the balancer keep `capacity_dmips_mhz`). Default:
    /// `capacity_dmips_mhz` (work runs at capacity).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work_dmips_mhz: Option<u64>,
    /// `dynamic-power-coefficient` (µW/MHz/V²) of the CPU nodes, when the device tree has
    /// one. With OPP voltages it gives the energy model: µW = C × V² × f(MHz).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dynamic_power_coefficient: Option<u64>,
    /// `cpuinfo.transition_latency` in ns (`clock-latency-ns` of the OPPs).
    pub transition_latency_ns: u64,
    /// `cpuinfo.max_freq` in kHz when lower than the highest OPP (a board or firmware cap).
    /// Must be one of the OPP frequencies. Capacities and EM performance use it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_freq_khz: Option<u64>,
    /// OPP table, strictly ascending frequency.
    pub opps: Vec<OppFile>,
    /// Names of this domain's CPUs' idle states (keys of the top-level `idle_states`),
    /// shallowest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub idle_states: Vec<String>,
    /// An assumed power model for domains without published power data. Every OPP power it
    /// produces is labelled assumed (`PowerSource::Assumed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub assumed_power: Option<AssumedPowerFile>,
}

/// One operating performance point.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OppFile {
    /// Frequency in kHz (`opp-hz` / 1000).
    pub khz: u64,
    /// Voltage in µV (first cell of `opp-microvolt`), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uv: Option<u64>,
    /// Power in µW (`opp-microwatt`, or a published table). Give it for every OPP of the
    /// domain or for none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uw: Option<u64>,
}

/// An assumed power model: P = C × V² × f(MHz) (the kernel's formula) with an assumed
/// coefficient and, for OPPs without a voltage, an assumed voltage curve.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AssumedPowerFile {
    /// Why these numbers are plausible (required; shown in the platform's notes).
    pub basis: String,
    /// Assumed coefficient C in µW/MHz/V². Default: the domain's
    /// `dynamic_power_coefficient`. Not together with `max_uw`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dynamic_power_coefficient: Option<u64>,
    /// Assumed per-CPU power in µW at `cpuinfo.max_freq`; C is solved from it. Not together
    /// with `dynamic_power_coefficient`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_uw: Option<u64>,
    /// Assumed voltage as a function of frequency: points `{khz, uv}` with ascending `khz`,
    /// linearly interpolated between points and held constant outside them. Used only for
    /// OPPs without `uv`; required when some OPP has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub voltage_curve: Option<Vec<VoltagePoint>>,
}

/// One point of an assumed voltage curve.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VoltagePoint {
    /// Frequency in kHz.
    pub khz: u64,
    /// Voltage in µV.
    pub uv: u64,
}

/// A cluster: CPUs sharing a last-level cache.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClusterFile {
    /// Name, unique in the file (`cluster0`).
    pub name: String,
    /// Logical CPU ids.
    pub cpus: Vec<usize>,
}

/// Whether an idle state powers down one CPU or a whole cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum IdleLevelFile {
    /// A per-CPU state (`cpu-sleep-*`).
    Cpu,
    /// A cluster state (`cluster-sleep-*`), reached when all CPUs of the cluster are in it.
    Cluster,
}

/// One idle state (`idle-states` child node of the device tree).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IdleStateFile {
    /// CPU or cluster state.
    pub level: IdleLevelFile,
    /// `entry-latency-us`.
    pub entry_us: u64,
    /// `exit-latency-us`.
    pub exit_us: u64,
    /// `min-residency-us`.
    pub min_residency_us: u64,
    /// Power in µW while in this state. Device trees do not carry it; leave it out when
    /// unknown (the model then has no idle power for the state).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power_uw: Option<u64>,
}

/// Deserialize a map, rejecting duplicate keys (serde's `BTreeMap` keeps the last one).
fn unique_map<'de, D>(deserializer: D) -> Result<BTreeMap<String, IdleStateFile>, D::Error>
where
    D: Deserializer<'de>,
{
    struct V;
    impl<'de> serde::de::Visitor<'de> for V {
        type Value = BTreeMap<String, IdleStateFile>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a map from idle-state name to idle state")
        }
        fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok(BTreeMap::new())
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(
            self,
            mut map: A,
        ) -> Result<Self::Value, A::Error> {
            let mut out = BTreeMap::new();
            while let Some((k, v)) = map.next_entry::<String, IdleStateFile>()? {
                if out.contains_key(&k) {
                    return Err(serde::de::Error::custom(format_args!(
                        "duplicate idle state `{k}`"
                    )));
                }
                out.insert(k, v);
            }
            Ok(out)
        }
    }
    deserializer.deserialize_any(V)
}
