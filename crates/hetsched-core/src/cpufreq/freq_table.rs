//! A policy's frequency table and `__cpufreq_driver_target()`'s resolution of a target
//! frequency with a relation (include/linux/cpufreq.h, drivers/cpufreq/cpufreq.c, v6.11:
//! `__resolve_freq()`, `cpufreq_frequency_table_target()`, `cpufreq_table_find_index_al()`,
//! `_ah()`, `_ac()` for the ascending tables every platform here has).
//!
//! The `E` relations (`CPUFREQ_RELATION_LE`/`HE`/`CE`) skip the OPPs the Energy Model marks
//! inefficient when the table has any (`policy->efficiencies_available`, set by
//! `em_cpufreq_update_efficiencies()`), and fall back to every OPP when the efficient
//! choice is outside the policy's limits.

use crate::energy::em::EmPerfDomain;
use crate::platform::PerfDomain;

/// `CPUFREQ_RELATION_*`: how a target frequency maps to an OPP.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Relation {
    /// `CPUFREQ_RELATION_L`: the lowest frequency at or above the target.
    L,
    /// `CPUFREQ_RELATION_H`: the highest frequency at or below the target.
    H,
    /// `CPUFREQ_RELATION_C`: the closest frequency (the lower one on a tie, v4.20+).
    C,
    /// `CPUFREQ_RELATION_C` as v4.4's `cpufreq_frequency_table_target()` resolves it: the
    /// closest frequency, the higher one on a tie.
    CHigh,
}

/// A policy's frequency table (`policy->freq_table`, ascending) and its limits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FreqTable {
    /// (kHz, inefficient) of the usable OPPs, ascending.
    opps: Vec<(u64, bool)>,
    /// `policy->min` (kHz).
    pub min: u64,
    /// `policy->max` (kHz).
    pub max: u64,
}

impl FreqTable {
    /// The usable OPPs of `pd` (up to `cpuinfo.max_freq`), marked inefficient where the
    /// registered Energy Model skips them; the limits are the whole range.
    pub fn new(pd: &PerfDomain, em: Option<&EmPerfDomain>) -> FreqTable {
        let ineff = |khz: u64| {
            em.filter(|e| e.skip_inefficiencies)
                .is_some_and(|e| e.table.iter().any(|s| s.frequency == khz && s.inefficient))
        };
        let opps: Vec<(u64, bool)> = pd
            .usable_opps()
            .iter()
            .map(|o| (o.freq_khz, ineff(o.freq_khz)))
            .collect();
        let min = opps.first().map_or(pd.max_freq_khz, |o| o.0);
        let max = opps.last().map_or(pd.max_freq_khz, |o| o.0);
        FreqTable { opps, min, max }
    }

    /// `cpuinfo.min_freq` (kHz).
    pub fn cpuinfo_min(&self) -> u64 {
        self.opps.first().map_or(self.min, |o| o.0)
    }

    /// `cpuinfo.max_freq` (kHz).
    pub fn cpuinfo_max(&self) -> u64 {
        self.opps.last().map_or(self.max, |o| o.0)
    }

    /// The frequencies, ascending (kHz).
    pub fn freqs(&self) -> impl Iterator<Item = u64> + '_ {
        self.opps.iter().map(|o| o.0)
    }

    /// `__resolve_freq(policy, target, relation)`: the target clamped to the limits, then
    /// `cpufreq_frequency_table_target()`; `efficient` is the relation's `E` flag.
    pub fn resolve(&self, target: u64, relation: Relation, efficient: bool) -> u64 {
        let target = target.clamp(self.min, self.max);
        let efficiencies = efficient && self.opps.iter().any(|o| o.1);
        let idx = self.find(target, relation, efficiencies);
        let in_limits =
            |i: Option<usize>| i.is_some_and(|i| (self.min..=self.max).contains(&self.opps[i].0));
        let idx = if !in_limits(idx) && efficiencies {
            self.find(target, relation, false)
        } else {
            idx
        };
        idx.map_or(target, |i| self.opps[i].0)
    }

    /// `cpufreq_table_find_index_{al,ah,ac}()` over the (efficient) entries.
    fn find(&self, target: u64, relation: Relation, efficiencies: bool) -> Option<usize> {
        let entries = self
            .opps
            .iter()
            .enumerate()
            .filter(|(_, o)| !(efficiencies && o.1));
        let mut best: Option<usize> = None;
        for (idx, &(freq, _)) in entries {
            match relation {
                Relation::L => {
                    if freq >= target {
                        return Some(idx);
                    }
                }
                Relation::H | Relation::C | Relation::CHigh => {
                    if freq == target {
                        return Some(idx);
                    }
                    if freq > target {
                        let Some(b) = best else {
                            return Some(idx); // no frequency below the target
                        };
                        let (below, above) = (target - self.opps[b].0, freq - target);
                        if (relation == Relation::C && below > above)
                            || (relation == Relation::CHigh && below >= above)
                        {
                            return Some(idx);
                        }
                        return Some(b);
                    }
                }
            }
            best = Some(idx);
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(f: &[u64], ineff: &[u64]) -> FreqTable {
        FreqTable {
            opps: f.iter().map(|&k| (k, ineff.contains(&k))).collect(),
            min: f[0],
            max: *f.last().unwrap(),
        }
    }

    #[test]
    fn relations_l_h_c() {
        let t = table(&[500, 1000, 1500, 2000], &[]);
        assert_eq!(t.resolve(1200, Relation::L, false), 1500);
        assert_eq!(t.resolve(1200, Relation::H, false), 1000);
        assert_eq!(t.resolve(1200, Relation::C, false), 1000);
        assert_eq!(t.resolve(1300, Relation::C, false), 1500);
        // a tie goes to the lower frequency
        assert_eq!(t.resolve(1250, Relation::C, false), 1000);
        assert_eq!(t.resolve(1250, Relation::CHigh, false), 1500);
        assert_eq!(t.resolve(1200, Relation::CHigh, false), 1000);
        assert_eq!(t.resolve(100, Relation::H, false), 500);
        assert_eq!(t.resolve(9000, Relation::L, false), 2000);
        assert_eq!(t.resolve(1000, Relation::H, false), 1000);
    }

    #[test]
    fn efficient_relations_skip_inefficient_opps_within_limits() {
        let mut t = table(&[500, 1000, 1500, 2000], &[1000]);
        assert_eq!(t.resolve(700, Relation::L, true), 1500);
        assert_eq!(t.resolve(700, Relation::L, false), 1000);
        assert_eq!(t.resolve(1200, Relation::H, true), 500);
        // the efficient choice outside the limits: every OPP again
        t.max = 1000;
        assert_eq!(t.resolve(700, Relation::L, true), 1000);
    }
}
