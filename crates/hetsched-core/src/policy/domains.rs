//! The minimal sched-domain input that placement reads: per CPU, its domains bottom-up
//! (span, `SD_*` flags, `imbalance_pct`, groups), and what the kernel derives from them once
//! (`sd_llc`, `sd_llc_size`, `sd_llc_id`, `sd_asym_cpucapacity`, the
//! `sched_asym_cpucapacity` static key) in `update_top_cache_domain()` and
//! `asym_cpu_capacity_scan()` (kernel/sched/topology.c, v6.11).
//!
//! The full topology (degeneration rules, group capacities, balance intervals) belongs to
//! `sched/topology.rs`; this struct is deliberately small so that it can be filled from it.
//! [`SdTopology::from_sched_domains`] fills it from the engine's domains;
//! [`SdTopology::from_clusters`] builds the usual arm64 two-level (MC = cluster, PKG = all)
//! hierarchy for unit tests.

use crate::sched::CpuSet;

pub use crate::sched::topology::{
    SD_ASYM_CPUCAPACITY, SD_ASYM_CPUCAPACITY_FULL, SD_ASYM_PACKING, SD_BALANCE_EXEC,
    SD_BALANCE_FORK, SD_BALANCE_NEWIDLE, SD_BALANCE_WAKE, SD_CLUSTER, SD_NUMA, SD_OVERLAP,
    SD_PREFER_SIBLING, SD_SERIALIZE, SD_SHARE_CPUCAPACITY, SD_SHARE_LLC, SD_WAKE_AFFINE,
};

/// One sched domain of one CPU, as placement sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DomainInfo {
    /// `sched_domain_span(sd)`.
    pub span: CpuSet,
    /// `sd->flags` (the `SD_*` constants of this module).
    pub flags: u32,
    /// `sd->imbalance_pct` (117 by default since v5.10, 110 at SMT level).
    pub imbalance_pct: u32,
    /// The spans of `sd->groups`, in the kernel's list order: the group holding the CPU
    /// first, then the others as `build_sched_groups()` meets them walking the span from the
    /// CPU (`for_each_cpu_wrap`). Group capacities are read from the live per-CPU
    /// `capacity_of()` values by the users.
    pub groups: Vec<CpuSet>,
}

/// Per-CPU domain hierarchies plus the derived per-CPU pointers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SdTopology {
    per_cpu: Vec<Vec<DomainInfo>>,
    llc: Vec<Option<usize>>,
    /// `per_cpu(sd_llc_size)` and `per_cpu(sd_llc_id)` as `update_top_cache_domain()`
    /// stores them: the weight and first CPU of `sd_llc` (1 and the CPU itself without
    /// one), derived once from the domains, which do not change afterwards.
    llc_size: Vec<usize>,
    llc_id: Vec<usize>,
    asym: Vec<Option<usize>>,
    asym_active: bool,
}

impl SdTopology {
    /// Takes each CPU's domains bottom-up (index 0 = lowest level; degenerate levels already
    /// removed) and derives `sd_llc` (highest domain with `SD_SHARE_LLC`),
    /// `sd_asym_cpucapacity` (lowest domain with `SD_ASYM_CPUCAPACITY_FULL`) and
    /// `sched_asym_cpucap_active()` (any domain with `SD_ASYM_CPUCAPACITY`).
    pub fn new(per_cpu: Vec<Vec<DomainInfo>>) -> SdTopology {
        let llc: Vec<Option<usize>> = per_cpu
            .iter()
            .map(|ds| ds.iter().rposition(|d| d.flags & SD_SHARE_LLC != 0))
            .collect();
        let llc_span = |cpu: usize| llc[cpu].and_then(|l| per_cpu[cpu].get(l)).map(|d| d.span);
        let llc_size = (0..per_cpu.len())
            .map(|cpu| llc_span(cpu).map_or(1, |s| s.weight()))
            .collect();
        let llc_id = (0..per_cpu.len())
            .map(|cpu| llc_span(cpu).and_then(|s| s.first()).unwrap_or(cpu))
            .collect();
        let asym = per_cpu
            .iter()
            .map(|ds| {
                ds.iter()
                    .position(|d| d.flags & SD_ASYM_CPUCAPACITY_FULL != 0)
            })
            .collect();
        let asym_active = per_cpu
            .iter()
            .flatten()
            .any(|d| d.flags & SD_ASYM_CPUCAPACITY != 0);
        SdTopology {
            per_cpu,
            llc,
            llc_size,
            llc_id,
            asym,
            asym_active,
        }
    }

    /// The arm64 default hierarchy for CPUs grouped in LLC clusters (`cluster_of[cpu]`):
    /// MC = the cluster (`SD_SHARE_LLC`), PKG = all CPUs, both with the `sd_init()` defaults
    /// of v5.10+ (NEWIDLE|EXEC|FORK|WAKE_AFFINE|PREFER_SIBLING, `imbalance_pct` 117), the
    /// asymmetry flags of `asym_cpu_capacity_classify()` (v5.14+), single-CPU levels and a
    /// PKG equal to MC removed as `sd_degenerate()` / `sd_parent_degenerate()` do.
    /// Simplified: `SD_PREFER_SIBLING` is not cleared below an asymmetric domain (placement
    /// does not read it).
    pub fn from_clusters(cluster_of: &[usize], capacities: &[u64]) -> SdTopology {
        let n = cluster_of.len().min(capacities.len());
        let all = CpuSet::first_n(n);
        let mut all_caps: Vec<u64> = capacities[..n].to_vec();
        all_caps.sort_unstable();
        all_caps.dedup();
        let classify = |span: &CpuSet| -> u32 {
            let mut caps: Vec<u64> = span.iter().map(|c| capacities[c]).collect();
            caps.sort_unstable();
            caps.dedup();
            match caps.len() {
                0 | 1 => 0,
                k if k == all_caps.len() => SD_ASYM_CPUCAPACITY | SD_ASYM_CPUCAPACITY_FULL,
                _ => SD_ASYM_CPUCAPACITY,
            }
        };
        let base = SD_BALANCE_NEWIDLE
            | SD_BALANCE_EXEC
            | SD_BALANCE_FORK
            | SD_WAKE_AFFINE
            | SD_PREFER_SIBLING;
        let per_cpu = (0..n)
            .map(|cpu| {
                let mut levels = Vec::new();
                let mc_span = CpuSet::from_cpus(
                    &(0..n)
                        .filter(|&c| cluster_of[c] == cluster_of[cpu])
                        .collect::<Vec<_>>(),
                );
                if mc_span.weight() > 1 {
                    levels.push(DomainInfo {
                        span: mc_span,
                        flags: base | SD_SHARE_LLC | classify(&mc_span),
                        imbalance_pct: 117,
                        groups: wrap_order(&mc_span, cpu, n)
                            .into_iter()
                            .map(|c| CpuSet::from_cpus(&[c]))
                            .collect(),
                    });
                }
                if all != mc_span && n > 1 {
                    let mut groups: Vec<CpuSet> = Vec::new();
                    for c in wrap_order(&all, cpu, n) {
                        if groups.iter().any(|g| g.contains(c)) {
                            continue;
                        }
                        let g: Vec<usize> =
                            (0..n).filter(|&x| cluster_of[x] == cluster_of[c]).collect();
                        groups.push(CpuSet::from_cpus(&g));
                    }
                    levels.push(DomainInfo {
                        span: all,
                        flags: base | classify(&all),
                        imbalance_pct: 117,
                        groups,
                    });
                }
                levels
            })
            .collect();
        SdTopology::new(per_cpu)
    }

    /// The placement view of the full topology built by `build_sched_domains()`
    /// ([`crate::sched::topology::SchedDomains`]): the same spans, flags, `imbalance_pct` and
    /// group order, so that wake-up and fork placement walk exactly the domains the load
    /// balancer uses.
    pub fn from_sched_domains(d: &crate::sched::topology::SchedDomains) -> SdTopology {
        let per_cpu = d
            .cpus
            .iter()
            .map(|levels| {
                levels
                    .iter()
                    .map(|sd| DomainInfo {
                        span: sd.span,
                        flags: sd.flags,
                        imbalance_pct: sd.imbalance_pct as u32,
                        groups: sd.groups.iter().map(|g| g.span).collect(),
                    })
                    .collect()
            })
            .collect();
        SdTopology::new(per_cpu)
    }

    /// Number of CPUs.
    pub fn nr_cpus(&self) -> usize {
        self.per_cpu.len()
    }

    /// `for_each_domain(cpu, sd)`: the CPU's domains, bottom-up.
    pub fn domains(&self, cpu: usize) -> &[DomainInfo] {
        self.per_cpu.get(cpu).map_or(&[], |v| v.as_slice())
    }

    /// `per_cpu(sd_llc, cpu)`: the highest domain sharing the last-level cache.
    pub fn sd_llc(&self, cpu: usize) -> Option<&DomainInfo> {
        let lvl = (*self.llc.get(cpu)?)?;
        self.per_cpu[cpu].get(lvl)
    }

    /// `per_cpu(sd_llc_size, cpu)`: weight of `sd_llc`, 1 without one (kept since
    /// [`SdTopology::new`], as the kernel keeps it: a wake-up reads it in `wake_wide()`).
    pub fn sd_llc_size(&self, cpu: usize) -> usize {
        let size = self.llc_size.get(cpu).copied().unwrap_or(1);
        debug_assert_eq!(size, self.sd_llc(cpu).map_or(1, |d| d.span.weight()));
        size
    }

    /// `per_cpu(sd_llc_id, cpu)`: first CPU of `sd_llc`, the CPU itself without one (kept
    /// since [`SdTopology::new`]; `cpus_share_cache()` compares two).
    pub fn sd_llc_id(&self, cpu: usize) -> usize {
        let id = self.llc_id.get(cpu).copied().unwrap_or(cpu);
        debug_assert_eq!(
            id,
            self.sd_llc(cpu).and_then(|d| d.span.first()).unwrap_or(cpu)
        );
        id
    }

    /// `cpus_share_cache(this_cpu, that_cpu)`.
    pub fn cpus_share_cache(&self, a: usize, b: usize) -> bool {
        a == b || self.sd_llc_id(a) == self.sd_llc_id(b)
    }

    /// `per_cpu(sd_asym_cpucapacity, cpu)`: the lowest domain with
    /// `SD_ASYM_CPUCAPACITY_FULL`.
    pub fn sd_asym_cpucapacity(&self, cpu: usize) -> Option<&DomainInfo> {
        let lvl = (*self.asym.get(cpu)?)?;
        self.per_cpu[cpu].get(lvl)
    }

    /// `sched_asym_cpucap_active()`: some domain has `SD_ASYM_CPUCAPACITY`.
    pub fn asym_cpucap_active(&self) -> bool {
        self.asym_active
    }
}

/// `for_each_cpu_wrap(cpu, mask, start)`: the CPUs of `mask` from `start` upwards, then from
/// 0 up to `start` (a `start ≥ nr_cpus` begins at 0).
pub fn wrap_order(mask: &CpuSet, start: usize, nr_cpus: usize) -> Vec<usize> {
    let start = if start >= nr_cpus { 0 } else { start };
    mask.iter()
        .filter(|&c| c >= start)
        .chain(mask.iter().filter(|&c| c < start))
        .collect()
}

/// Allocation-free [`wrap_order`] for hot paths.
pub fn for_each_cpu_wrap(
    mask: &CpuSet,
    start: usize,
    nr_cpus: usize,
) -> impl Iterator<Item = usize> + '_ {
    let start = if start >= nr_cpus { 0 } else { start };
    // the CPUs from `start` up, then those below it: each bit visited once
    let below = CpuSet::first_n(start);
    mask.andnot(&below)
        .into_cpus()
        .chain(mask.and(&below).into_cpus())
}

/// The position (from 1) of `cpu`, a member of `mask`, in
/// [`for_each_cpu_wrap`]`(mask, start, nr_cpus)`: how many CPUs that walk visits up to it.
pub fn wrap_position(mask: &CpuSet, start: usize, cpu: usize, nr_cpus: usize) -> usize {
    let start = if start >= nr_cpus { 0 } else { start };
    let below = CpuSet::first_n(start);
    let upto = mask.and(&CpuSet::first_n(cpu + 1));
    if cpu >= start {
        upto.andnot(&below).weight()
    } else {
        mask.andnot(&below).weight() + upto.weight()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrap_position_counts_the_walk() {
        let mut mask = CpuSet::first_n(10);
        mask.clear(3);
        mask.clear(7);
        for start in 0..11 {
            for (i, cpu) in wrap_order(&mask, start, 10).into_iter().enumerate() {
                assert_eq!(wrap_position(&mask, start, cpu, 10), i + 1);
            }
        }
    }

    #[test]
    fn hikey960_like() {
        let t = SdTopology::from_clusters(
            &[0, 0, 0, 0, 1, 1, 1, 1],
            &[462, 462, 462, 462, 1024, 1024, 1024, 1024],
        );
        assert!(t.asym_cpucap_active());
        assert_eq!(t.domains(5).len(), 2);
        assert_eq!(t.sd_llc_size(5), 4);
        assert_eq!(t.sd_llc_id(5), 4);
        assert!(t.cpus_share_cache(4, 7));
        assert!(!t.cpus_share_cache(3, 4));
        let asym = t.sd_asym_cpucapacity(1).unwrap();
        assert_eq!(asym.span.weight(), 8);
        assert_eq!(asym.flags & SD_SHARE_LLC, 0);
        // Groups of CPU 5's PKG domain: its own cluster first.
        assert_eq!(
            t.domains(5)[1].groups,
            vec![
                CpuSet::from_cpus(&[4, 5, 6, 7]),
                CpuSet::from_cpus(&[0, 1, 2, 3])
            ]
        );
        // MC groups of CPU 6 in wrap order 6, 7, 4, 5.
        let mc: Vec<usize> = t.domains(6)[0]
            .groups
            .iter()
            .filter_map(|g| g.first())
            .collect();
        assert_eq!(mc, vec![6, 7, 4, 5]);
    }

    #[test]
    fn dynamiq_single_cluster_carries_asym() {
        let t = SdTopology::from_clusters(&[0, 0, 0], &[300, 300, 1024]);
        assert_eq!(t.domains(0).len(), 1);
        let d = &t.domains(0)[0];
        assert_ne!(d.flags & SD_ASYM_CPUCAPACITY_FULL, 0);
        assert_ne!(d.flags & SD_SHARE_LLC, 0);
        assert!(t.sd_asym_cpucapacity(2).is_some());
    }

    #[test]
    fn symmetric_has_no_asym() {
        let t = SdTopology::from_clusters(&[0, 0, 1, 1], &[1024; 4]);
        assert!(!t.asym_cpucap_active());
        assert!(t.sd_asym_cpucapacity(0).is_none());
        assert_eq!(wrap_order(&CpuSet::first_n(4), 3, 4), vec![3, 0, 1, 2]);
        // for_each_cpu_wrap(): the mask's CPUs ≥ start ascending, then those < start
        // (start ≥ nr_cpus counts as 0), across word boundaries
        let m = CpuSet::from_cpus(&[1, 5, 63, 64, 65, 130, 200, 255]);
        let wrap = |start: usize, n: usize| for_each_cpu_wrap(&m, start, n).collect::<Vec<_>>();
        assert_eq!(wrap(64, 256), vec![64, 65, 130, 200, 255, 1, 5, 63]);
        assert_eq!(wrap(6, 256), vec![63, 64, 65, 130, 200, 255, 1, 5]);
        assert_eq!(wrap(0, 256), vec![1, 5, 63, 64, 65, 130, 200, 255]);
        assert_eq!(wrap(255, 256), vec![255, 1, 5, 63, 64, 65, 130, 200]);
        assert_eq!(wrap(300, 256), vec![1, 5, 63, 64, 65, 130, 200, 255]);
        assert_eq!(wrap_order(&CpuSet::first_n(4), 4, 4), vec![0, 1, 2, 3]);
    }
}
