//! The Energy Model (EM) of CPU performance domains, built as
//! `em_dev_register_perf_domain()` → `em_create_perf_table()` → `em_init_performance()` →
//! `em_compute_costs()` build it (kernel/power/energy_model.c, v6.9–v6.11), with the older
//! cost form (v5.19–v6.8) as an option.
//!
//! One [`EmPerfDomain`] per cpufreq policy ([`crate::platform::PerfDomain`]). Power comes
//! from the platform: explicit per-OPP µW (`opp-microwatt`, `_get_dt_power()`), the
//! dynamic-power coefficient (`dev_pm_opp_calc_power()`, µW since v5.19), or an assumed
//! model, which is labelled ([`EnergyModel::assumed`]) so every report can say so.
//! Idle-state power is not part of the kernel's EM; it is kept for reported energy only
//! ([`super::accounting`]).

use crate::platform::{Platform, PowerSource};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `EM_MAX_POWER` (include/linux/energy_model.h, v5.19+): 64 W per CPU, in µW.
pub const EM_MAX_POWER: u64 = 64_000_000;
/// `EM_MAX_COMPLEXITY` (kernel/sched/topology.c, v5.0–v6.9): bound on
/// `nr_pd × (nr_cpus + nr_perf_states)` for EAS to start.
pub const EM_MAX_COMPLEXITY: u64 = 2048;

/// Which form of the EM cost and of `em_cpu_energy()` to use (`eas.em_version`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, Default)]
pub enum EmVersion {
    /// v6.9+ ("PM: EM: Optimize em_cpu_energy() and remove division", commit 1b600da51073,
    /// with the v6.9-rc3 fix that removed its extra headroom): `performance` per state,
    /// `cost = 10 × power / performance`, `energy = cost × Σutil`, state chosen by
    /// `performance ≥ max_util`.
    #[default]
    #[serde(rename = "v6_9")]
    V6_9,
    /// v5.19–v6.8: `cost = fmax × power / freq`, state chosen by frequency
    /// `ref × max_util / scale_cpu`, `energy = cost × Σutil / scale_cpu`.
    #[serde(rename = "v5_x")]
    V5,
}

/// One performance state (`struct em_perf_state`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct EmPerfState {
    /// `performance`: CPU capacity at this frequency, `scale_cpu × freq / fmax` (v6.9+;
    /// computed for both versions, used only by v6.9).
    pub performance: u64,
    /// `frequency` in kHz.
    pub frequency: u64,
    /// `power` in µW (or abstract units when the model is assumed).
    pub power: u64,
    /// `cost` in the form of [`EmPerfDomain::version`].
    pub cost: u64,
    /// `EM_PERF_STATE_INEFFICIENT`: a faster state is as cheap or cheaper.
    pub inefficient: bool,
}

/// One performance domain of the EM (`struct em_perf_domain`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EmPerfDomain {
    /// Index of the platform performance domain (cpufreq policy).
    pub pd: usize,
    /// CPUs of the domain (`em_span_cpus`), ascending.
    pub cpus: Vec<usize>,
    /// States, ascending frequency.
    pub table: Vec<EmPerfState>,
    /// `min_perf_state` (v6.12+ frequency limits; 0 here).
    pub min_perf_state: usize,
    /// `max_perf_state` (last state here).
    pub max_perf_state: usize,
    /// `EM_PERF_DOMAIN_SKIP_INEFFICIENCIES`: set when some state is inefficient (the
    /// cpufreq table is then marked too, `em_cpufreq_update_efficiencies()`).
    pub skip_inefficiencies: bool,
    /// `arch_scale_cpu_capacity()` of the domain's CPUs (all equal).
    pub scale_cpu: u64,
    /// Cost form.
    pub version: EmVersion,
    /// The power numbers are assumed, not published (labelled in every report).
    pub assumed: bool,
    /// [`EmPerfDomain::em_pd_get_efficient_state`] of every `max_util` from 0 to the
    /// highest state's performance, by `max_util`, computed once when the domain is
    /// registered (the walk of the states is a pure function of the table, which does not
    /// change afterwards); a `max_util` past its end, or a domain built otherwise (empty),
    /// walks the states. Not serialised.
    #[serde(skip)]
    efficient_state: Vec<u16>,
}

/// Why a performance domain has no EM (the kernel's `dev_err()` reasons, and the cases
/// where `dev_pm_opp_of_register_em()` registers nothing).
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum EmError {
    /// No `opp-microwatt`, no dynamic-power coefficient, no assumed model.
    #[error("perf domain {pd} (CPUs {cpus}) has no power data (no opp-microwatt, no dynamic-power-coefficient with OPP voltages, no assumed_power)")]
    NoPower {
        /// Domain index.
        pd: usize,
        /// CPU list, e.g. `0,3-5`.
        cpus: String,
    },
    /// No usable OPP.
    #[error("perf domain {pd}: no OPP at or below cpuinfo.max_freq")]
    NoStates {
        /// Domain index.
        pd: usize,
    },
    /// `EM: non-increasing freq`.
    #[error("perf domain {pd}: EM: non-increasing freq: {khz} kHz")]
    NonIncreasingFreq {
        /// Domain index.
        pd: usize,
        /// The offending frequency.
        khz: u64,
    },
    /// `EM: invalid power` (0 or above `EM_MAX_POWER`).
    #[error(
        "perf domain {pd}: EM: invalid power: {uw} µW at {khz} kHz (expected 1..={EM_MAX_POWER})"
    )]
    InvalidPower {
        /// Domain index.
        pd: usize,
        /// Frequency.
        khz: u64,
        /// Power.
        uw: u64,
    },
    /// `EM: CPUs of … must have the same capacity`.
    #[error("perf domain {pd}: EM: CPUs of {cpus} must have the same capacity")]
    CapacityMismatch {
        /// Domain index.
        pd: usize,
        /// CPU list.
        cpus: String,
    },
    /// A state's `performance` rounds to 0 (the kernel would divide by zero).
    #[error(
        "perf domain {pd}: performance of {khz} kHz rounds to 0 (capacity too small for this OPP)"
    )]
    ZeroPerformance {
        /// Domain index.
        pd: usize,
        /// Frequency.
        khz: u64,
    },
}

/// The EM of a platform: one entry per performance domain (`None` where the domain has no
/// EM, with the reason in [`EnergyModel::missing`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EnergyModel {
    /// Per platform performance domain.
    pub pds: Vec<Option<EmPerfDomain>>,
    /// Why each missing domain has no EM.
    #[serde(skip)]
    pub missing: Vec<EmError>,
    /// Some domain's power is assumed: energies are in abstract units, not joules.
    pub assumed: bool,
}

/// Kernel EM power from the dynamic-power coefficient, `dev_pm_opp_calc_power()`
/// (drivers/opp/of.c, v6.5+; `_get_power()` v5.19–v6.4): `C × mV × mV × MHz / 10⁶` µW
/// with `mV = µV / 1000` and `MHz = Hz / 10⁶`, each truncated, in u64.
pub fn dev_pm_opp_calc_power(c: u64, microvolt: u64, khz: u64) -> u64 {
    let mv = microvolt / 1000;
    let mhz = (khz * 1000) / 1_000_000;
    c.saturating_mul(mv).saturating_mul(mv).saturating_mul(mhz) / 1_000_000
}

fn cpu_list(cpus: &[usize]) -> String {
    cpus.iter()
        .map(|c| c.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// `em_compute_costs()` (kernel/power/energy_model.c, v6.9): walk the states from the
/// highest down, computing `cost` and marking a state inefficient when its cost is not
/// lower than the lowest cost seen above it. Returns whether any state is inefficient.
///
/// v6.9: `cost = power × 10 / performance`; v5.19–v6.8: `cost = fmax × power / freq`
/// (`div64_u64`; before v5.19 the same with mW power scaled by 1000).
pub fn em_compute_costs(table: &mut [EmPerfState], version: EmVersion) -> bool {
    let fmax = table.last().map_or(1, |s| s.frequency.max(1));
    let mut prev_cost = u64::MAX;
    let mut any = false;
    for s in table.iter_mut().rev() {
        s.cost = match version {
            EmVersion::V6_9 => (s.power * 10) / s.performance.max(1),
            EmVersion::V5 => {
                ((u128::from(fmax) * u128::from(s.power)) / u128::from(s.frequency.max(1))) as u64
            }
        };
        if s.cost >= prev_cost {
            s.inefficient = true;
            any = true;
        } else {
            s.inefficient = false;
            prev_cost = s.cost;
        }
    }
    any
}

/// `em_dev_register_perf_domain()` for one cpufreq policy (kernel/power/energy_model.c,
/// v6.9): checks the CPUs share one capacity, builds the table from the usable OPPs
/// (`em_create_perf_table()`: increasing frequency, power in `1..=EM_MAX_POWER`),
/// `em_init_performance()` (`performance = scale_cpu × freq / fmax`) and
/// [`em_compute_costs`].
///
/// Simplification: the states are the OPPs at or below `cpuinfo.max_freq`, where the
/// kernel's table also holds the `turbo-mode` OPPs (docs/kernel-mapping.md, "Known
/// differences not fixed yet"); per-OPP power missing but a dynamic-power coefficient and voltages present
/// is derived with [`dev_pm_opp_calc_power`].
pub fn em_dev_register_perf_domain(
    platform: &Platform,
    pd_index: usize,
    version: EmVersion,
) -> Result<EmPerfDomain, EmError> {
    let Some(pd) = platform.perf_domains.get(pd_index) else {
        return Err(EmError::NoStates { pd: pd_index });
    };
    let cpus = pd.cpus.clone();
    let caps: Vec<u64> = cpus
        .iter()
        .filter_map(|&c| platform.cpus.get(c).map(|cpu| cpu.capacity))
        .collect();
    let scale_cpu = caps.first().copied().unwrap_or(0);
    if caps.iter().any(|&c| c != scale_cpu) {
        return Err(EmError::CapacityMismatch {
            pd: pd_index,
            cpus: cpu_list(&cpus),
        });
    }
    if pd.power_source == PowerSource::None {
        return Err(EmError::NoPower {
            pd: pd_index,
            cpus: cpu_list(&cpus),
        });
    }
    let opps = pd.usable_opps();
    if opps.is_empty() {
        return Err(EmError::NoStates { pd: pd_index });
    }
    let fmax = opps.last().map_or(1, |o| o.freq_khz.max(1));
    let mut table = Vec::with_capacity(opps.len());
    let mut prev_freq = 0;
    for o in opps {
        let power = match (o.power_uw, pd.dynamic_power_coefficient, o.microvolt) {
            (Some(p), _, _) => p,
            (None, Some(c), Some(uv)) => dev_pm_opp_calc_power(c, uv, o.freq_khz),
            _ => {
                return Err(EmError::NoPower {
                    pd: pd_index,
                    cpus: cpu_list(&cpus),
                })
            }
        };
        if o.freq_khz <= prev_freq {
            return Err(EmError::NonIncreasingFreq {
                pd: pd_index,
                khz: o.freq_khz,
            });
        }
        if power == 0 || power > EM_MAX_POWER {
            return Err(EmError::InvalidPower {
                pd: pd_index,
                khz: o.freq_khz,
                uw: power,
            });
        }
        prev_freq = o.freq_khz;
        let performance = scale_cpu * o.freq_khz / fmax;
        if performance == 0 && version == EmVersion::V6_9 {
            return Err(EmError::ZeroPerformance {
                pd: pd_index,
                khz: o.freq_khz,
            });
        }
        table.push(EmPerfState {
            performance,
            frequency: o.freq_khz,
            power,
            cost: 0,
            inefficient: false,
        });
    }
    let skip_inefficiencies = em_compute_costs(&mut table, version);
    let max_perf_state = table.len() - 1;
    let mut em = EmPerfDomain {
        pd: pd_index,
        cpus,
        table,
        min_perf_state: 0,
        max_perf_state,
        skip_inefficiencies,
        scale_cpu,
        version,
        assumed: pd.power_source == PowerSource::Assumed,
        efficient_state: Vec::new(),
    };
    em.efficient_state = em.efficient_states();
    Ok(em)
}

impl EnergyModel {
    /// Registers every performance domain of `platform` (what `dev_pm_opp_of_register_em()`
    /// does for each cpufreq policy at boot).
    pub fn build(platform: &Platform, version: EmVersion) -> EnergyModel {
        let mut pds = Vec::with_capacity(platform.perf_domains.len());
        let mut missing = Vec::new();
        for i in 0..platform.perf_domains.len() {
            match em_dev_register_perf_domain(platform, i, version) {
                Ok(pd) => pds.push(Some(pd)),
                Err(e) => {
                    missing.push(e);
                    pds.push(None);
                }
            }
        }
        let assumed = pds.iter().flatten().any(|pd| pd.assumed);
        EnergyModel {
            pds,
            missing,
            assumed,
        }
    }

    /// `em_cpu_get(cpu)`: the EM domain spanning `cpu`.
    pub fn em_cpu_get(&self, cpu: usize) -> Option<&EmPerfDomain> {
        self.pds.iter().flatten().find(|pd| pd.cpus.contains(&cpu))
    }
}

impl EmPerfDomain {
    /// `em_pd_get_efficient_state()` (include/linux/energy_model.h, v6.9+): the lowest
    /// state in `[min_perf_state, max_perf_state]` whose `performance ≥ max_util`, skipping
    /// inefficient states when the domain skips them; `max_perf_state` if none.
    /// Read from the states' lookup by `max_util` built at registration (debug builds
    /// assert it equals the walk).
    pub fn em_pd_get_efficient_state(&self, max_util: u64) -> usize {
        let i = usize::try_from(max_util)
            .ok()
            .and_then(|u| self.efficient_state.get(u))
            .map_or_else(
                || self.first_state(|s| s.performance >= max_util),
                |&i| usize::from(i),
            );
        debug_assert_eq!(i, self.first_state(|s| s.performance >= max_util));
        i
    }

    /// [`EmPerfDomain::efficient_state`]: the walk's state for every `max_util` from 0 to
    /// the highest state's performance (empty if a state index does not fit 16 bits).
    fn efficient_states(&self) -> Vec<u16> {
        let top = self.table.iter().map(|s| s.performance).max().unwrap_or(0);
        if self.table.len() > usize::from(u16::MAX) || top > 1 << 16 {
            return Vec::new();
        }
        (0..=top)
            .map(|u| {
                let i = self.first_state(|s| s.performance >= u);
                u16::try_from(i).unwrap_or(u16::MAX)
            })
            .collect()
    }

    /// The v5.x–v6.8 lookup: the lowest (efficient) state with `frequency ≥ freq`.
    pub fn em_pd_get_efficient_state_freq(&self, freq: u64) -> usize {
        self.first_state(|s| s.frequency >= freq)
    }

    fn first_state(&self, ok: impl Fn(&EmPerfState) -> bool) -> usize {
        let hi = self.max_perf_state.min(self.table.len().saturating_sub(1));
        let lo = self.min_perf_state;
        // the states lo..=hi as one slice (none when lo > hi), walked without an index
        let states = self.table.get(lo..=hi).unwrap_or(&[]);
        for (k, s) in states.iter().enumerate() {
            if ok(s) {
                if self.skip_inefficiencies && s.inefficient {
                    continue;
                }
                return lo + k;
            }
        }
        hi
    }

    /// Index of the state of frequency `khz` (exact), else the lowest state above it, else
    /// the highest state.
    pub fn state_of_freq(&self, khz: u64) -> usize {
        self.table
            .iter()
            .position(|s| s.frequency >= khz)
            .unwrap_or(self.table.len().saturating_sub(1))
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::platform::{Cluster, Cpu, Opp, PerfDomain};

    /// A juno_r0-like platform: LITTLE PD 0 = CPUs 0,3,4,5 (cap 446), big PD 1 = CPUs 1,2
    /// (cap 1024), OPP power from juno_r0.yaml.
    pub(crate) fn juno() -> Platform {
        let little = [
            (450_000, 33_000),
            (575_000, 46_000),
            (700_000, 61_000),
            (775_000, 76_000),
            (850_000, 93_000),
        ];
        let big = [
            (450_000, 168_000),
            (625_000, 251_000),
            (800_000, 359_000),
            (950_000, 479_000),
            (1_100_000, 616_000),
        ];
        let opps = |t: &[(u64, u64)]| {
            t.iter()
                .map(|&(f, p)| Opp {
                    freq_khz: f,
                    microvolt: None,
                    power_uw: Some(p),
                })
                .collect::<Vec<_>>()
        };
        let cpu = |id: usize, big: bool| Cpu {
            id,
            core: if big { "cortex-a57" } else { "cortex-a53" }.into(),
            capacity_dmips_mhz: if big { 1024 } else { 578 },
            capacity: if big { 1024 } else { 446 },
            work_capacity: None,
            perf_domain: usize::from(big),
            cluster: usize::from(big),
            idle_states: vec![],
        };
        Platform {
            name: "juno-test".into(),
            description: String::new(),
            cpus: vec![
                cpu(0, false),
                cpu(1, true),
                cpu(2, true),
                cpu(3, false),
                cpu(4, false),
                cpu(5, false),
            ],
            clusters: vec![
                Cluster {
                    id: 0,
                    name: "little".into(),
                    cpus: vec![0, 3, 4, 5],
                },
                Cluster {
                    id: 1,
                    name: "big".into(),
                    cpus: vec![1, 2],
                },
            ],
            perf_domains: vec![
                PerfDomain {
                    id: 0,
                    cpus: vec![0, 3, 4, 5],
                    opps: opps(&little),
                    max_freq_khz: 850_000,
                    transition_latency_ns: 1_000_000,
                    dynamic_power_coefficient: None,
                    power_source: PowerSource::Explicit,
                },
                PerfDomain {
                    id: 1,
                    cpus: vec![1, 2],
                    opps: opps(&big),
                    max_freq_khz: 1_100_000,
                    transition_latency_ns: 1_000_000,
                    dynamic_power_coefficient: None,
                    power_source: PowerSource::Explicit,
                },
            ],
            sources: vec![],
            notes: vec![],
            cpufreq_driver: Default::default(),
        }
    }

    fn col(pd: &EmPerfDomain, f: impl Fn(&EmPerfState) -> u64) -> Vec<u64> {
        pd.table.iter().map(f).collect()
    }

    #[test]
    fn juno_little_v6_9_table() {
        let em = EnergyModel::build(&juno(), EmVersion::V6_9);
        let pd = em.pds[0].as_ref().unwrap();
        // performance = 446 × f / 850000, truncated: 200.7e6/850e3 = 236.1 → 236,
        // 256.45e6/850e3 = 301.7 → 301, 312.2e6/850e3 = 367.3 → 367, 345.65e6/850e3 = 406.6 → 406.
        assert_eq!(col(pd, |s| s.performance), vec![236, 301, 367, 406, 446]);
        // cost = 10 × P / perf: 330000/236 = 1398.3, 460000/301 = 1528.2, 610000/367 = 1662.1,
        // 760000/406 = 1871.9, 930000/446 = 2085.2.
        assert_eq!(col(pd, |s| s.cost), vec![1398, 1528, 1662, 1871, 2085]);
        assert!(!pd.skip_inefficiencies);
        assert!(!em.assumed);
        let big = em.pds[1].as_ref().unwrap();
        // 1024 × f / 1.1e6: 418.9, 581.8, 744.7, 884.4, 1024.
        assert_eq!(col(big, |s| s.performance), vec![418, 581, 744, 884, 1024]);
        // 1680000/418 = 4019.1, 2510000/581 = 4320.1, 3590000/744 = 4825.3,
        // 4790000/884 = 5418.6, 6160000/1024 = 6015.6.
        assert_eq!(col(big, |s| s.cost), vec![4019, 4320, 4825, 5418, 6015]);
    }

    #[test]
    fn juno_little_v5_table() {
        let em = EnergyModel::build(&juno(), EmVersion::V5);
        let pd = em.pds[0].as_ref().unwrap();
        // cost = 850000 × P / f: 62333.3, 68000, 74071.4, 83354.8, 93000.
        assert_eq!(col(pd, |s| s.cost), vec![62333, 68000, 74071, 83354, 93000]);
    }

    #[test]
    fn inefficient_state_is_marked_and_skipped() {
        let mut p = juno();
        // cap 1024, f = 0.5/1/1.5/2 GHz → perf 256/512/768/1024;
        // P = 100/400/450/800 mW → cost 3906/7812/5859/7812. Walking down: 7812 kept,
        // 5859 kept, 7812 ≥ 5859 → state 1 inefficient, 3906 kept.
        p.perf_domains[1].opps = [
            (500_000, 100_000),
            (1_000_000, 400_000),
            (1_500_000, 450_000),
            (2_000_000, 800_000),
        ]
        .iter()
        .map(|&(f, w)| Opp {
            freq_khz: f,
            microvolt: None,
            power_uw: Some(w),
        })
        .collect();
        p.perf_domains[1].max_freq_khz = 2_000_000;
        let em = EnergyModel::build(&p, EmVersion::V6_9);
        let pd = em.pds[1].as_ref().unwrap();
        assert_eq!(col(pd, |s| s.cost), vec![3906, 7812, 5859, 7812]);
        assert_eq!(
            pd.table.iter().map(|s| s.inefficient).collect::<Vec<_>>(),
            vec![false, true, false, false]
        );
        assert!(pd.skip_inefficiencies);
        // max_util 300: state 1 (perf 512) would do, but it is inefficient → state 2.
        assert_eq!(pd.em_pd_get_efficient_state(300), 2);
        assert_eq!(pd.em_pd_get_efficient_state(200), 0);
        assert_eq!(pd.em_pd_get_efficient_state(2000), 3);
    }

    #[test]
    fn dpc_power_matches_kernel_integer_form() {
        // hi3660 A53: C = 110, 700 mV, 533 MHz: 110 × 700 × 700 × 533 / 1e6 = 28728.7 → 28728.
        assert_eq!(dev_pm_opp_calc_power(110, 700_000, 533_000), 28_728);
    }

    #[test]
    fn missing_power_is_reported() {
        let mut p = juno();
        p.perf_domains[0].power_source = PowerSource::None;
        let em = EnergyModel::build(&p, EmVersion::V6_9);
        assert!(em.pds[0].is_none());
        assert_eq!(
            em.missing[0].to_string(),
            "perf domain 0 (CPUs 0,3,4,5) has no power data (no opp-microwatt, no dynamic-power-coefficient with OPP voltages, no assumed_power)"
        );
        assert!(em.em_cpu_get(1).is_some());
        assert!(em.em_cpu_get(0).is_none());
    }
}
