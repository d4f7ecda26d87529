//! Tests of the scheduling-domain topology (kernel/sched/topology.c, v6.11), and the
//! test platforms other modules' tests build on.

use super::*;
use crate::platform::{Cluster, Cpu, PerfDomain, PowerSource};

/// A platform with the given clusters of (cpu ids, capacity).
pub(crate) fn platform(clusters: &[(&[usize], u64)]) -> Platform {
    let n: usize = clusters.iter().map(|c| c.0.len()).sum();
    let mut cpus: Vec<Option<Cpu>> = vec![None; n];
    let mut cl = Vec::new();
    let mut pds = Vec::new();
    for (i, (ids, cap)) in clusters.iter().enumerate() {
        for &id in *ids {
            cpus[id] = Some(Cpu {
                id,
                core: "test".into(),
                capacity_dmips_mhz: *cap,
                capacity: *cap,
                work_capacity: None,
                perf_domain: i,
                cluster: i,
                idle_states: vec![],
            });
        }
        cl.push(Cluster {
            id: i,
            name: format!("cluster{i}"),
            cpus: ids.to_vec(),
        });
        pds.push(PerfDomain {
            id: i,
            cpus: ids.to_vec(),
            opps: vec![],
            max_freq_khz: 1_000_000,
            transition_latency_ns: 0,
            dynamic_power_coefficient: None,
            power_source: PowerSource::None,
        });
    }
    Platform {
        name: "test".into(),
        description: String::new(),
        cpus: cpus.into_iter().map(|c| c.expect("cpu")).collect(),
        clusters: cl,
        perf_domains: pds,
        sources: vec![],
        notes: vec![],
        cpufreq_driver: Default::default(),
    }
}

pub(crate) fn juno() -> Platform {
    platform(&[(&[0, 3, 4, 5], 446), (&[1, 2], 1024)])
}

const BASE: u32 = SD_BALANCE_NEWIDLE | SD_BALANCE_EXEC | SD_BALANCE_FORK | SD_WAKE_AFFINE;

#[test]
fn juno_domains() {
    let d = SchedDomains::build(&juno(), LbVersion::V5_10, 0);
    assert!(d.sched_asym_cpucap_active);
    let c0 = d.domains(0);
    assert_eq!(c0.len(), 2);
    // MC: the LITTLE cluster, symmetric, PREFER_SIBLING cleared by the asym parent.
    assert_eq!(c0[0].name, "MC");
    assert_eq!(c0[0].span.to_string(), "0,3-5");
    assert_eq!(c0[0].flags, BASE | SD_SHARE_LLC);
    assert_eq!((c0[0].min_interval, c0[0].max_interval), (4, 8));
    assert_eq!((c0[0].imbalance_pct, c0[0].cache_nice_tries), (117, 1));
    assert_eq!(c0[0].busy_factor, 16);
    // Groups start at the CPU and wrap: 0, 3, 4, 5.
    let spans: Vec<String> = c0[0].groups.iter().map(|g| g.span.to_string()).collect();
    assert_eq!(spans, ["0", "3", "4", "5"]);
    // PKG: all CPUs, both capacities present -> ASYM | ASYM_FULL; not LLC: 117, 1.
    assert_eq!(c0[1].name, "PKG");
    assert_eq!(c0[1].span.to_string(), "0-5");
    assert_eq!(
        c0[1].flags,
        BASE | SD_PREFER_SIBLING | SD_ASYM_CPUCAPACITY | SD_ASYM_CPUCAPACITY_FULL
    );
    assert_eq!((c0[1].min_interval, c0[1].max_interval), (6, 12));
    assert_eq!((c0[1].imbalance_pct, c0[1].cache_nice_tries), (117, 1));
    // PKG groups of CPU 0: its cluster first, then the big cluster; group flags are
    // the MC flags (without PREFER_SIBLING).
    let g = &c0[1].groups;
    assert_eq!(g.len(), 2);
    assert_eq!(g[0].span.to_string(), "0,3-5");
    assert_eq!(g[1].span.to_string(), "1-2");
    assert_eq!(g[1].flags, BASE | SD_SHARE_LLC);
    // Capacities: 4 × 446 = 1784 and 2 × 1024 = 2048.
    assert_eq!(d.sgc[g[0].sgc].capacity, 1784);
    assert_eq!(d.sgc[g[1].sgc].capacity, 2048);
    assert_eq!(d.sgc[g[1].sgc].min_capacity, 1024);
    assert_eq!(d.sgc[g[0].sgc].max_capacity, 446);
    // CPU 2's PKG groups start with its own cluster, and share the sgc with CPU 0's.
    let g2 = &d.domains(2)[1].groups;
    assert_eq!(g2[0].span.to_string(), "1-2");
    assert_eq!(g2[0].sgc, g[1].sgc);
    // Shortcuts.
    assert_eq!(d.sd_llc[0], Some(0));
    assert_eq!(d.sd_llc_size[0], 4);
    assert_eq!(d.sd_llc_id[4], 0);
    assert_eq!(d.sd_llc_id[2], 1);
    assert_eq!(d.sd_asym_cpucapacity[0], Some(1));
    assert_eq!(d.sd_asym_packing[0], None);
}

#[test]
fn hikey960_and_v5_9_constants() {
    let p = platform(&[(&[0, 1, 2, 3], 462), (&[4, 5, 6, 7], 1024)]);
    let d = SchedDomains::build(&p, LbVersion::V5_9, 100);
    let c5 = d.domains(5);
    assert_eq!(c5[0].span.to_string(), "4-7");
    let spans: Vec<String> = c5[0].groups.iter().map(|g| g.span.to_string()).collect();
    assert_eq!(spans, ["5", "6", "7", "4"]);
    // v5.9: busy_factor 32, default imbalance_pct 125 at PKG, LLC keeps 117.
    assert_eq!((c5[0].busy_factor, c5[0].imbalance_pct), (32, 117));
    assert_eq!((c5[1].busy_factor, c5[1].imbalance_pct), (32, 125));
    assert_eq!((c5[1].min_interval, c5[1].max_interval), (8, 16));
    assert_eq!(c5[1].last_balance, 100);
    assert_eq!(d.sgc[c5[1].groups[1].sgc].capacity, 4 * 462);
}

#[test]
fn symmetric_two_clusters_keep_prefer_sibling_and_no_asym() {
    let p = platform(&[(&[0, 1, 2, 3], 1024), (&[4, 5, 6, 7], 1024)]);
    let d = SchedDomains::build(&p, LbVersion::V5_10, 0);
    assert!(!d.sched_asym_cpucap_active);
    let c0 = d.domains(0);
    assert_eq!(c0[0].flags, BASE | SD_SHARE_LLC | SD_PREFER_SIBLING);
    assert_eq!(c0[1].flags, BASE | SD_PREFER_SIBLING);
    assert_eq!(c0[1].groups[1].flags & SD_PREFER_SIBLING, SD_PREFER_SIBLING);
    assert_eq!(d.sd_asym_cpucapacity[0], None);
    assert_eq!(d.sgc[c0[1].groups[1].sgc].capacity, 4096);
}

#[test]
fn single_cluster_has_only_mc_and_single_cpu_cluster_degenerates() {
    let p = platform(&[(&[0, 1, 2, 3], 1024)]);
    let d = SchedDomains::build(&p, LbVersion::V5_10, 0);
    assert_eq!(d.domains(0).len(), 1);
    assert_eq!(d.domains(0)[0].name, "MC");
    // A one-CPU cluster: its MC spans one CPU and is removed; PKG becomes the base and
    // its first group's flags are cleared (the kernel's loop), others keep MC's flags.
    let p = platform(&[(&[0, 1, 2], 512), (&[3], 1024)]);
    let d = SchedDomains::build(&p, LbVersion::V5_10, 0);
    let c3 = d.domains(3);
    assert_eq!(c3.len(), 1);
    assert_eq!(c3[0].name, "PKG");
    assert_eq!(c3[0].groups[0].flags, 0);
    assert_eq!(c3[0].groups[1].span.to_string(), "0-2");
    assert_eq!(c3[0].groups[1].flags, BASE | SD_SHARE_LLC);
    assert_eq!(d.sd_llc[3], None);
    assert_eq!(d.sd_asym_cpucapacity[3], Some(0));
    assert_eq!(d.domains(0).len(), 2);
}

#[test]
fn describe_is_kernel_like() {
    let d = SchedDomains::build(&juno(), LbVersion::V5_10, 0);
    let s = d.describe();
    assert!(s.contains("CPU1 attaching sched-domain(s):"), "{s}");
    assert!(s.contains(" domain-0: span=1-2 level=MC"), "{s}");
    assert!(s.contains("groups: 1:{ span=1 }, 2:{ span=2 }"), "{s}");
    assert!(
        s.contains("groups: 1:{ span=1-2 cap=2048 }, 0:{ span=0,3-5 cap=1784 }"),
        "{s}"
    );
    assert!(
        s.contains("SD_ASYM_CPUCAPACITY|SD_ASYM_CPUCAPACITY_FULL"),
        "{s}"
    );
}

#[test]
fn intervals_and_newidle_cost() {
    assert_eq!(msecs_to_jiffies(4, 250), 1);
    assert_eq!(msecs_to_jiffies(5, 250), 2);
    assert_eq!(msecs_to_jiffies(64, 250), 16);
    let mut d = SchedDomains::build(&juno(), LbVersion::V5_10, 0);
    let sd = &mut d.cpus[0][0];
    assert!(!sd.update_newidle_cost(1000, 10, 250));
    assert_eq!(sd.max_newidle_lb_cost, 1000);
    // Not yet a second later: no decay. Then 1000 * 253 / 256 = 988.
    assert!(!sd.update_newidle_cost(0, 260, 250));
    assert!(sd.update_newidle_cost(0, 261, 250));
    assert_eq!(sd.max_newidle_lb_cost, 988);
}
