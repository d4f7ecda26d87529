//! The platform model: CPUs, clusters, performance domains with their OPP tables, idle
//! states, and the kernel's derivation of normalised CPU capacity.
//!
//! Readers for YAML and device-tree sources live in `hetsched-platform`; this module only
//! holds the validated model the engine reads. Capacities follow
//! `drivers/base/arch_topology.c:topology_normalize_cpu_scale()` (v6.8+, with
//! `capacity_freq_ref` = the policy's `cpuinfo.max_freq`).

use serde::{Deserialize, Serialize};

/// `SCHED_CAPACITY_SHIFT` (include/linux/sched.h).
pub const SCHED_CAPACITY_SHIFT: u32 = 10;
/// `SCHED_CAPACITY_SCALE` (include/linux/sched.h).
pub const SCHED_CAPACITY_SCALE: u64 = 1 << SCHED_CAPACITY_SHIFT;

/// One operating performance point of a performance domain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Opp {
    /// Frequency in kHz (the unit of `cpufreq` and of the `cpu_frequency` tracepoint).
    pub freq_khz: u64,
    /// Supply voltage in µV (`opp-microvolt`), when known.
    pub microvolt: Option<u64>,
    /// Power in µW at this OPP, when known (explicit `opp-microwatt`, or derived from the
    /// dynamic-power-coefficient by the reader).
    pub power_uw: Option<u64>,
}

/// Whether an idle state powers down one CPU or its whole cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IdleLevel {
    /// A per-CPU state (`cpu-sleep-*`).
    Cpu,
    /// A cluster state, entered when every CPU of the cluster is in it (`cluster-sleep-*`).
    Cluster,
}

/// One idle state (`idle-states` node of the device tree, cpuidle state index ≥ 1; index 0
/// is the architectural WFI state every CPU has).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IdleState {
    /// Device-tree node name, e.g. `cpu-sleep-0`.
    pub name: String,
    /// CPU or cluster state.
    pub level: IdleLevel,
    /// `entry-latency-us`.
    pub entry_latency_us: u64,
    /// `exit-latency-us`.
    pub exit_latency_us: u64,
    /// `min-residency-us`.
    pub min_residency_us: u64,
    /// Power in µW while in this state, when known.
    pub power_uw: Option<u64>,
}

/// One CPU.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cpu {
    /// Logical CPU number.
    pub id: usize,
    /// Micro-architecture name (`cortex-a53`, `firestorm`, …).
    pub core: String,
    /// `capacity-dmips-mhz` from the device tree (1024 when absent, as the kernel assumes).
    pub capacity_dmips_mhz: u64,
    /// Normalised capacity `cpu_scale` (`arch_scale_cpu_capacity()`), 1..=1024.
    pub capacity: u64,
    /// The speed at which tasks' work runs on this CPU at its maximum frequency, on the
    /// capacity scale, when it differs from [`Cpu::capacity`] (hetsched's, not the
    /// kernel's: a workload whose speed ratio between core types is not the device tree's;
    /// the platform file's `work_dmips_mhz`). `None`: the work runs at `capacity`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work_capacity: Option<u64>,
    /// Index of this CPU's performance domain in [`Platform::perf_domains`].
    pub perf_domain: usize,
    /// Index of this CPU's cluster (cache-sharing group) in [`Platform::clusters`].
    pub cluster: usize,
    /// Idle states, shallowest first (WFI is implicit).
    pub idle_states: Vec<IdleState>,
}

/// How the power numbers of a performance domain were obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PowerSource {
    /// µW = C × V² × f\[MHz\] from `dynamic-power-coefficient` and OPP voltages
    /// (`drivers/opp/of.c:_get_power()`, v5.19+ units).
    DynamicPowerCoefficient,
    /// Explicit per-OPP power from the source (`opp-microwatt` or a published table).
    Explicit,
    /// No published data: an assumed model, labelled as assumed wherever it is shown.
    Assumed,
    /// No power data at all.
    None,
}

/// A performance (frequency) domain: the CPUs of one cpufreq policy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PerfDomain {
    /// Index in [`Platform::perf_domains`].
    pub id: usize,
    /// CPUs of this domain (`policy->related_cpus`), ascending.
    pub cpus: Vec<usize>,
    /// OPP table, ascending frequency.
    pub opps: Vec<Opp>,
    /// `cpuinfo.max_freq` in kHz, which is `capacity_freq_ref` for capacity derivation and
    /// frequency invariance. Usually the highest OPP; lower when the platform caps it.
    pub max_freq_khz: u64,
    /// `cpuinfo.transition_latency` in ns (`clock-latency-ns`).
    pub transition_latency_ns: u64,
    /// `dynamic-power-coefficient` in µW/MHz/V², when known.
    pub dynamic_power_coefficient: Option<u64>,
    /// Where the OPP powers come from.
    pub power_source: PowerSource,
}

impl PerfDomain {
    /// The OPPs usable by cpufreq: those at or below `max_freq_khz`.
    pub fn usable_opps(&self) -> &[Opp] {
        let n = self
            .opps
            .iter()
            .take_while(|o| o.freq_khz <= self.max_freq_khz)
            .count();
        &self.opps[..n]
    }

    /// Lowest usable frequency (`cpuinfo.min_freq`).
    pub fn min_freq_khz(&self) -> u64 {
        self.opps.first().map_or(self.max_freq_khz, |o| o.freq_khz)
    }

    /// `cpufreq_driver_resolve_freq()` with `CPUFREQ_RELATION_L`: the lowest OPP at or above
    /// `target_khz`, clamped to the usable range (drivers/cpufreq/cpufreq.c, v6.8).
    pub fn resolve_freq(&self, target_khz: u64) -> u64 {
        let opps = self.usable_opps();
        for o in opps {
            if o.freq_khz >= target_khz {
                return o.freq_khz;
            }
        }
        opps.last().map_or(self.max_freq_khz, |o| o.freq_khz)
    }
}

/// A group of CPUs that share a last-level cache (`cpu-map` cluster, `SD_SHARE_LLC`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cluster {
    /// Index in [`Platform::clusters`].
    pub id: usize,
    /// Name from the source (`cluster0`).
    pub name: String,
    /// CPUs of this cluster, ascending.
    pub cpus: Vec<usize>,
}

/// A validated platform.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Platform {
    /// Preset or file name.
    pub name: String,
    /// One-line description.
    pub description: String,
    /// CPUs, indexed by logical id.
    pub cpus: Vec<Cpu>,
    /// Clusters (LLC groups).
    pub clusters: Vec<Cluster>,
    /// Performance domains.
    pub perf_domains: Vec<PerfDomain>,
    /// Where each number came from (file and version), one entry per fact group.
    pub sources: Vec<String>,
    /// Documented deviations, e.g. capacities taken from a seed's live system.
    pub notes: Vec<String>,
    /// The cpufreq driver of every policy (it decides whether schedutil switches
    /// frequency in scheduler context, `policy->fast_switch_possible`).
    pub cpufreq_driver: CpufreqDriver,
}

/// A cpufreq driver, for what the governors see of it (drivers/cpufreq/, v6.11).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CpufreqDriver {
    /// `cpufreq-dt` (cpufreq-dt.c, the generic device-tree OPP driver): no `fast_switch`.
    #[default]
    CpufreqDt,
    /// `scpi-cpufreq` (scpi-cpufreq.c, Arm SCPI firmware, Juno): no `fast_switch`.
    Scpi,
    /// `vexpress-spc` (vexpress-spc-cpufreq.c, TC2): no `fast_switch`.
    VexpressSpc,
    /// `scmi-cpufreq` (scmi-cpufreq.c): `fast_switch` where the firmware provides perf
    /// fast channels (`perf_ops->fast_switch_possible()`); taken as provided.
    Scmi,
    /// `apple-soc-cpufreq` (apple-soc-cpufreq.c, M1/M2): `fast_switch`.
    AppleSoc,
}

impl CpufreqDriver {
    /// The driver's name as `scaling_driver` shows it.
    pub fn name(self) -> &'static str {
        match self {
            CpufreqDriver::CpufreqDt => "cpufreq-dt",
            CpufreqDriver::Scpi => "scpi-cpufreq",
            CpufreqDriver::VexpressSpc => "vexpress-spc",
            CpufreqDriver::Scmi => "scmi",
            CpufreqDriver::AppleSoc => "apple-cpufreq",
        }
    }

    /// `policy->fast_switch_possible`: the driver has a `fast_switch` callback (and, for
    /// SCMI, fast channels), so schedutil applies a frequency in scheduler context; else
    /// it goes through the `sugov:N` kthread and the transition latency.
    pub fn fast_switch(self) -> bool {
        matches!(self, CpufreqDriver::Scmi | CpufreqDriver::AppleSoc)
    }
}

impl Cpu {
    /// The speed of tasks' work on this CPU at its maximum frequency, capacity scale:
    /// [`Cpu::work_capacity`] if set, else [`Cpu::capacity`].
    pub fn work_capacity(&self) -> u64 {
        self.work_capacity.unwrap_or(self.capacity)
    }
}

impl Platform {
    /// A synthetic machine of `clusters` clusters of 8 CPUs, each cluster its own
    /// performance domain with one OPP and no energy model: even clusters big (capacity
    /// 1024, 2 GHz), odd clusters LITTLE (`capacity-dmips-mhz` 512 at 3/4 of the big
    /// fmax: capacity 384, 1.5 GHz). The `large` benchmark's platform (32 clusters) and
    /// tests of big balance groups are built from it.
    pub fn synthetic_clusters(name: &str, description: &str, clusters: usize) -> Platform {
        let (mut cpus, mut cls, mut pds) = (Vec::new(), Vec::new(), Vec::new());
        for cl in 0..clusters {
            let big = cl % 2 == 0;
            let ids: Vec<usize> = (cl * 8..cl * 8 + 8).collect();
            for &id in &ids {
                cpus.push(Cpu {
                    id,
                    core: if big { "big" } else { "little" }.into(),
                    capacity_dmips_mhz: if big { 1024 } else { 512 },
                    capacity: if big { 1024 } else { 384 },
                    work_capacity: None,
                    perf_domain: cl,
                    cluster: cl,
                    idle_states: vec![],
                });
            }
            let fmax = if big { 2_000_000 } else { 1_500_000 };
            pds.push(PerfDomain {
                id: cl,
                cpus: ids.clone(),
                opps: vec![Opp {
                    freq_khz: fmax,
                    microvolt: None,
                    power_uw: None,
                }],
                max_freq_khz: fmax,
                transition_latency_ns: 0,
                dynamic_power_coefficient: None,
                power_source: PowerSource::None,
            });
            cls.push(Cluster {
                id: cl,
                name: format!("cluster{cl}"),
                cpus: ids,
            });
        }
        Platform {
            name: name.into(),
            description: description.into(),
            cpus,
            clusters: cls,
            perf_domains: pds,
            sources: vec!["synthetic (benchmark input)".into()],
            notes: vec![],
            cpufreq_driver: Default::default(),
        }
    }

    /// The platform as a scheduler that knows no CPU capacities sees it
    /// (`sched.capacity_aware = false`): every CPU at capacity 1024
    /// (`capacity-dmips-mhz` absent, `arch_scale_cpu_capacity()` =
    /// `SCHED_CAPACITY_SCALE`), the work still running at each CPU's own speed.
    pub fn capacity_blind(&self) -> Platform {
        let mut p = self.clone();
        for c in &mut p.cpus {
            c.work_capacity = Some(c.work_capacity());
            c.capacity = SCHED_CAPACITY_SCALE;
            c.capacity_dmips_mhz = SCHED_CAPACITY_SCALE;
        }
        p
    }

    /// Number of CPUs.
    pub fn nr_cpus(&self) -> usize {
        self.cpus.len()
    }

    /// The largest CPU capacity on the platform.
    pub fn max_capacity(&self) -> u64 {
        self.cpus.iter().map(|c| c.capacity).max().unwrap_or(0)
    }

    /// Whether CPU capacities differ (the kernel's `sched_asym_cpucap_active()` condition).
    pub fn is_asymmetric(&self) -> bool {
        let mut caps = self.cpus.iter().map(|c| c.capacity);
        match caps.next() {
            Some(first) => caps.any(|c| c != first),
            None => false,
        }
    }

    /// The performance domain of `cpu`.
    pub fn pd_of(&self, cpu: usize) -> &PerfDomain {
        &self.perf_domains[self.cpus[cpu].perf_domain]
    }
}

/// `topology_normalize_cpu_scale()` (drivers/base/arch_topology.c, v6.8+):
/// `cpu_scale = (raw × freq_ref << 10) / max_j(raw_j × freq_ref_j)`, integer division.
///
/// `raw_and_ref` holds `(capacity-dmips-mhz, capacity_freq_ref in kHz)` per CPU.
pub fn topology_normalize_cpu_scale(raw_and_ref: &[(u64, u64)]) -> Vec<u64> {
    let capacity_scale = raw_and_ref
        .iter()
        .map(|&(raw, fref)| raw * fref)
        .max()
        .unwrap_or(1)
        .max(1);
    raw_and_ref
        .iter()
        .map(|&(raw, fref)| ((raw * fref) << SCHED_CAPACITY_SHIFT) / capacity_scale)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hikey960_capacities_match_derivation() {
        // hi3660.dtsi: A53 592 dmips/MHz @ 1844 MHz, A73 1024 @ 2362 MHz.
        let caps = topology_normalize_cpu_scale(&[(592, 1_844_000), (1024, 2_362_000)]);
        assert_eq!(caps, vec![462, 1024]);
    }

    #[test]
    fn juno_r0_little_is_446() {
        let caps = topology_normalize_cpu_scale(&[(1024, 1_100_000), (578, 850_000)]);
        assert_eq!(caps, vec![1024, 446]);
    }

    #[test]
    fn resolve_freq_is_relation_l() {
        let pd = PerfDomain {
            id: 0,
            cpus: vec![0],
            opps: [100, 200, 300]
                .iter()
                .map(|&f| Opp {
                    freq_khz: f,
                    microvolt: None,
                    power_uw: None,
                })
                .collect(),
            max_freq_khz: 300,
            transition_latency_ns: 0,
            dynamic_power_coefficient: None,
            power_source: PowerSource::None,
        };
        assert_eq!(pd.resolve_freq(150), 200);
        assert_eq!(pd.resolve_freq(200), 200);
        assert_eq!(pd.resolve_freq(10), 100);
        assert_eq!(pd.resolve_freq(1000), 300);
    }
}
