//! Scheduling domains and groups built from a [`Platform`] the way
//! `build_sched_domains()` / `sd_init()` / `asym_cpu_capacity_classify()` /
//! `cpu_attach_domain()` (kernel/sched/topology.c, v6.11) build them for arm64 without SMT.
//!
//! Topology levels, bottom-up: `MC` (the CPUs sharing a last-level cache: one platform
//! cluster, `SD_SHARE_LLC`) and `PKG` (all CPUs). The kernel's `CLS` level is not built:
//! on these platforms the cluster and the LLC are the same CPUs, and arm64's
//! `cpu_clustergroup_mask()` then returns the SMT mask, so `CLS` spans one CPU and always
//! degenerates. Like the kernel, domain construction for a CPU stops at the first level
//! that spans every CPU, and degenerate domains are removed with `sd_degenerate()` /
//! `sd_parent_degenerate()` (including the kernel's quirk of clearing the flags of only the
//! first group when a base domain is removed).
//!
//! Domains are per CPU (each CPU owns its copy with its own balance state); group
//! capacities (`struct sched_group_capacity`) are shared between the CPUs that see the same
//! group, as in the kernel, and live in [`SchedDomains::sgc`].

use std::fmt::{self, Write as _};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::CpuSet;
use crate::platform::{Platform, SCHED_CAPACITY_SCALE};

/// Balance when about to become idle.
pub const SD_BALANCE_NEWIDLE: u32 = 0x0001;
/// Balance on exec.
pub const SD_BALANCE_EXEC: u32 = 0x0002;
/// Balance on fork, clone.
pub const SD_BALANCE_FORK: u32 = 0x0004;
/// Balance on wakeup.
pub const SD_BALANCE_WAKE: u32 = 0x0008;
/// Consider waking task on waking CPU.
pub const SD_WAKE_AFFINE: u32 = 0x0010;
/// Domain members have different CPU capacities.
pub const SD_ASYM_CPUCAPACITY: u32 = 0x0020;
/// Domain members span all the CPU capacity values of the root domain.
pub const SD_ASYM_CPUCAPACITY_FULL: u32 = 0x0040;
/// Domain members share CPU capacity (SMT).
pub const SD_SHARE_CPUCAPACITY: u32 = 0x0080;
/// Domain members share a CPU cluster (`CLS`).
pub const SD_CLUSTER: u32 = 0x0100;
/// Domain members share the last-level cache (`SD_SHARE_PKG_RESOURCES` before v6.10).
pub const SD_SHARE_LLC: u32 = 0x0200;
/// Only a single load balancing instance.
pub const SD_SERIALIZE: u32 = 0x0400;
/// Place busy tasks earlier in the domain.
pub const SD_ASYM_PACKING: u32 = 0x0800;
/// Prefer to place tasks in a sibling domain.
pub const SD_PREFER_SIBLING: u32 = 0x1000;
/// Sched groups of this level overlap.
pub const SD_OVERLAP: u32 = 0x2000;
/// Cross-node balancing.
pub const SD_NUMA: u32 = 0x4000;

const SDF_SHARED_CHILD: u8 = 0x1;
const SDF_SHARED_PARENT: u8 = 0x2;
const SDF_NEEDS_GROUPS: u8 = 0x4;

/// `include/linux/sched/sd_flags.h` (v6.11): flag, name, meta flags, in bit order.
pub const SD_FLAGS: [(u32, &str, u8); 15] = [
    (
        SD_BALANCE_NEWIDLE,
        "SD_BALANCE_NEWIDLE",
        SDF_SHARED_CHILD | SDF_NEEDS_GROUPS,
    ),
    (
        SD_BALANCE_EXEC,
        "SD_BALANCE_EXEC",
        SDF_SHARED_CHILD | SDF_NEEDS_GROUPS,
    ),
    (
        SD_BALANCE_FORK,
        "SD_BALANCE_FORK",
        SDF_SHARED_CHILD | SDF_NEEDS_GROUPS,
    ),
    (
        SD_BALANCE_WAKE,
        "SD_BALANCE_WAKE",
        SDF_SHARED_CHILD | SDF_NEEDS_GROUPS,
    ),
    (SD_WAKE_AFFINE, "SD_WAKE_AFFINE", SDF_SHARED_CHILD),
    (
        SD_ASYM_CPUCAPACITY,
        "SD_ASYM_CPUCAPACITY",
        SDF_SHARED_PARENT | SDF_NEEDS_GROUPS,
    ),
    (
        SD_ASYM_CPUCAPACITY_FULL,
        "SD_ASYM_CPUCAPACITY_FULL",
        SDF_SHARED_PARENT | SDF_NEEDS_GROUPS,
    ),
    (
        SD_SHARE_CPUCAPACITY,
        "SD_SHARE_CPUCAPACITY",
        SDF_SHARED_CHILD | SDF_NEEDS_GROUPS,
    ),
    (SD_CLUSTER, "SD_CLUSTER", SDF_NEEDS_GROUPS),
    (
        SD_SHARE_LLC,
        "SD_SHARE_LLC",
        SDF_SHARED_CHILD | SDF_NEEDS_GROUPS,
    ),
    (
        SD_SERIALIZE,
        "SD_SERIALIZE",
        SDF_SHARED_PARENT | SDF_NEEDS_GROUPS,
    ),
    (SD_ASYM_PACKING, "SD_ASYM_PACKING", SDF_NEEDS_GROUPS),
    (SD_PREFER_SIBLING, "SD_PREFER_SIBLING", SDF_NEEDS_GROUPS),
    (
        SD_OVERLAP,
        "SD_OVERLAP",
        SDF_SHARED_PARENT | SDF_NEEDS_GROUPS,
    ),
    (SD_NUMA, "SD_NUMA", SDF_SHARED_PARENT | SDF_NEEDS_GROUPS),
];

/// `SD_DEGENERATE_GROUPS_MASK`: the flags with `SDF_NEEDS_GROUPS`.
pub const SD_DEGENERATE_GROUPS_MASK: u32 = {
    let mut m = 0;
    let mut i = 0;
    while i < SD_FLAGS.len() {
        if SD_FLAGS[i].2 & SDF_NEEDS_GROUPS != 0 {
            m |= SD_FLAGS[i].0;
        }
        i += 1;
    }
    m
};

/// `SD_SHARED_CHILD_MASK`: the flags with `SDF_SHARED_CHILD`.
const SD_SHARED_CHILD_MASK: u32 = {
    let mut m = 0;
    let mut i = 0;
    while i < SD_FLAGS.len() {
        if SD_FLAGS[i].2 & SDF_SHARED_CHILD != 0 {
            m |= SD_FLAGS[i].0;
        }
        i += 1;
    }
    m
};

/// The flag names of `flags`, in bit order, joined with `|` (as `/proc/sys/kernel/
/// sched_domain/*/flags` lists them, with the v6.10+ name `SD_SHARE_LLC`).
pub fn sd_flag_names(flags: u32) -> String {
    let mut s = String::new();
    for (f, name, _) in SD_FLAGS {
        if flags & f != 0 {
            if !s.is_empty() {
                s.push('|');
            }
            s.push_str(name);
        }
    }
    s
}

/// Which load balancer: before or after Vincent Guittot's fairness series (v5.10,
/// spec §6.9). Switches four things together: the `migrate_load` detach test
/// (`load/2 > imbalance` vs `(load >> nr_balance_failed) > imbalance`), the default
/// `imbalance_pct` (125 vs 117 at non-LLC levels), the busy interval adjustment (−1 jiffy)
/// and `busy_factor` (32 vs 16).
///
/// [`LbVersion::V4_20`] goes further back, before his v5.5 "rework load_balance" series:
/// the `avg_load`/`load_per_task` balancer (`group_other`/`group_no_capacity`,
/// `fix_small_imbalance()`, load-only migration) with the v4.20 misfit additions; it has
/// the v5.9 values for everything above. Versions are ordered, so `version >= V5_10`
/// tests keep their meaning.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema, Default,
)]
pub enum LbVersion {
    /// v4.20: the balancer before the v5.5 rework (see `policy::lb`), misfit included.
    #[serde(rename = "v4.20")]
    V4_20,
    /// v5.5 to v5.9: the reworked balancer before the fairness series.
    #[serde(rename = "v5.9")]
    V5_9,
    /// v5.10 and v5.11: the fairness series; active balance for any migration type after
    /// `cache_nice_tries + 2` failures; `util > imbalance` for `migrate_util`.
    #[serde(rename = "v5.10")]
    V5_10,
    /// v5.12 to v6.7: the failure-count active balance only for `migrate_task`
    /// (`imbalanced_active_balance()`, v5.12); `migrate_util` still without `shr_bound`,
    /// and `find_busiest_queue()` reading it with the runnable boost (v6.5, so as v6.5–v6.7
    /// there).
    #[serde(rename = "v6.6")]
    V6_6,
    /// v6.8 and later (the v6.11 default): `migrate_util` compares
    /// `shr_bound(util, nr_balance_failed)`.
    #[default]
    #[serde(rename = "v6.11")]
    V6_11,
}

/// `struct sched_group_capacity`: shared by every CPU that sees the group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SchedGroupCapacity {
    /// `sgc->id`: the group's first CPU.
    pub id: usize,
    /// Sum of the group's CFS capacities (`capacity_of`).
    pub capacity: u64,
    /// Smallest per-CPU capacity in the group.
    pub min_capacity: u64,
    /// Largest per-CPU capacity in the group.
    pub max_capacity: u64,
    /// `next_update` in jiffies (newidle balance refreshes the capacity only after it).
    pub next_update: u64,
    /// `sgc->imbalance`: a lower level failed to balance because of affinity.
    pub imbalance: bool,
}

/// `struct sched_group`: one child domain's worth of CPUs inside a domain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchedGroup {
    /// `sched_group_span()`.
    pub span: CpuSet,
    /// `group_balance_mask()`: equal to the span for non-overlapping groups.
    pub balance_mask: CpuSet,
    /// The flags of the child domain this group stands for (`sg->flags`).
    pub flags: u32,
    /// `group_weight`.
    pub group_weight: u32,
    /// `cores` (equal to the weight without SMT).
    pub cores: u32,
    /// Index of the shared capacity in [`SchedDomains::sgc`].
    pub sgc: usize,
}

/// `struct sched_domain` of one CPU at one level, with its balance state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchedDomain {
    /// Topology level name (`MC`, `PKG`; `DIE` before v6.7).
    pub name: &'static str,
    /// `sched_domain_span()`.
    pub span: CpuSet,
    /// `span_weight`.
    pub span_weight: u32,
    /// `SD_*` flags.
    pub flags: u32,
    /// Groups; the first contains the owning CPU (`sd->groups`).
    pub groups: Vec<SchedGroup>,
    /// `min_interval` in ms (= span weight).
    pub min_interval: u64,
    /// `max_interval` in ms (= 2 × span weight).
    pub max_interval: u64,
    /// `busy_factor` (16; 32 before v5.10).
    pub busy_factor: u64,
    /// `imbalance_pct`.
    pub imbalance_pct: u64,
    /// `cache_nice_tries`.
    pub cache_nice_tries: u32,
    /// `balance_interval` in ms (starts at the span weight).
    pub balance_interval: u64,
    /// `nr_balance_failed`.
    pub nr_balance_failed: u32,
    /// `last_balance` in jiffies.
    pub last_balance: u64,
    /// `max_newidle_lb_cost` in ns.
    pub max_newidle_lb_cost: u64,
    /// `last_decay_max_lb_cost` in jiffies.
    pub last_decay_max_lb_cost: u64,
    /// `SD_LOAD_BALANCE` (v2.6–v5.7): the periodic, idle and newidle balancers visit this
    /// level. Always set, except on the levels HMP keeps its domains apart at
    /// (`CONFIG_DISABLE_CPU_SCHED_DOMAIN_BALANCE`: `0*SD_LOAD_BALANCE` on the
    /// cluster-spanning level of LSK 3.10's arm topology).
    pub load_balance: bool,
    /// The engine's memo of `get_sd_balance_interval()` for this domain (not domain state:
    /// equal in every comparison).
    pub interval_memo: IntervalMemo,
}

/// `get_sd_balance_interval(sd, cpu_busy)` of one domain as the engine keeps it
/// ([`crate::policy::lb::sd_balance_interval`], read by `sched_balance_domains()` and by
/// `sched_balance_newidle()`'s `update_next_balance()`): per `cpu_busy`, the result and the
/// `balance_interval` it was computed at. The other inputs (`busy_factor`, `HZ`, the
/// version, `max_load_balance_interval`) are fixed for a run, so while `balance_interval`
/// is unchanged the kept result is the function's. Not part of the domain's state: any two
/// memos compare equal.
#[derive(Debug, Clone, Copy)]
pub struct IntervalMemo {
    /// Per `cpu_busy`: the `balance_interval` the result was computed at (`u64::MAX`:
    /// none; `balance_interval` is at most `max_interval` ms).
    key: [u64; 2],
    /// Per `cpu_busy`: the interval in jiffies.
    interval: [u64; 2],
}

impl Default for IntervalMemo {
    fn default() -> Self {
        IntervalMemo {
            key: [u64::MAX; 2],
            interval: [0; 2],
        }
    }
}

impl PartialEq for IntervalMemo {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for IntervalMemo {}

impl IntervalMemo {
    /// The kept interval for `cpu_busy` at `balance_interval`, if any.
    #[inline(always)]
    pub fn get(&self, cpu_busy: bool, balance_interval: u64) -> Option<u64> {
        let b = usize::from(cpu_busy);
        (self.key[b] == balance_interval).then_some(self.interval[b])
    }

    /// Keeps `interval` for `cpu_busy` at `balance_interval`.
    #[inline(always)]
    pub fn set(&mut self, cpu_busy: bool, balance_interval: u64, interval: u64) {
        let b = usize::from(cpu_busy);
        self.key[b] = balance_interval;
        self.interval[b] = interval;
    }
}

impl SchedDomain {
    /// `update_newidle_cost(sd, cost)` (kernel/sched/fair.c, v6.11): track the largest
    /// newidle balance cost, decaying it by 253/256 at most once a second (`hz` jiffies).
    /// Returns whether it decayed.
    pub fn update_newidle_cost(&mut self, cost: u64, jiffies: u64, hz: u64) -> bool {
        let next_decay = self.last_decay_max_lb_cost + hz;
        if cost > self.max_newidle_lb_cost {
            self.max_newidle_lb_cost = cost;
            self.last_decay_max_lb_cost = jiffies;
        } else if jiffies > next_decay {
            self.max_newidle_lb_cost = self.max_newidle_lb_cost * 253 / 256;
            self.last_decay_max_lb_cost = jiffies;
            return true;
        }
        false
    }

    /// Index of the group containing `cpu`.
    pub fn group_of(&self, cpu: usize) -> Option<usize> {
        self.groups.iter().position(|g| g.span.contains(cpu))
    }
}

/// The scheduling domains of every CPU, the shared group capacities and the per-CPU
/// shortcut pointers (`sd_llc`, `sd_asym_cpucapacity`, `sd_asym_packing`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchedDomains {
    /// Per CPU, its domains bottom-up (index = level after degeneration).
    pub cpus: Vec<Vec<SchedDomain>>,
    /// Shared group capacities.
    pub sgc: Vec<SchedGroupCapacity>,
    /// `sd_llc`: level of the highest domain with `SD_SHARE_LLC`, per CPU.
    pub sd_llc: Vec<Option<usize>>,
    /// `sd_llc_size`.
    pub sd_llc_size: Vec<u32>,
    /// `sd_llc_id`: first CPU of the LLC domain (the CPU itself without one).
    pub sd_llc_id: Vec<usize>,
    /// `sd_llc_shared(cpu)->nr_idle_scan`, indexed by `sd_llc_id` (meaningful only for
    /// CPUs with an `sd_llc`): the SIS_UTIL scan bound written by
    /// [`crate::policy::select_fair::update_llc_idle_cpu_scan`]. It starts at the LLC's weight, the value
    /// the periodic balance of an idle LLC writes: the simulation starts on an idle,
    /// booted system (the kernel's `__sdt_alloc()` zeroes it at a rebuild, which lasts
    /// until the LLC domain's first periodic balance).
    pub nr_idle_scan: Vec<u32>,
    /// `sd_asym_cpucapacity`: level of the lowest domain with `SD_ASYM_CPUCAPACITY_FULL`.
    pub sd_asym_cpucapacity: Vec<Option<usize>>,
    /// `sd_asym_packing`: level of the highest domain with `SD_ASYM_PACKING` (never set on
    /// these platforms).
    pub sd_asym_packing: Vec<Option<usize>>,
    /// `sched_asym_cpucap_active()`: some domain has `SD_ASYM_CPUCAPACITY`.
    pub sched_asym_cpucap_active: bool,
    /// The balancer version the domains were initialised for.
    pub version: LbVersion,
}

/// One topology level (`struct sched_domain_topology_level`).
struct TopologyLevel {
    name: &'static str,
    /// `tl->sd_flags()`.
    flags: u32,
}

const TOPOLOGY: [TopologyLevel; 2] = [
    // cpu_coregroup_mask / cpu_core_flags
    TopologyLevel {
        name: "MC",
        flags: SD_SHARE_LLC,
    },
    // cpu_cpu_mask
    TopologyLevel {
        name: "PKG",
        flags: 0,
    },
];

fn tl_mask(p: &Platform, tl: usize, cpu: usize) -> CpuSet {
    match tl {
        0 => CpuSet::from_cpus(&p.clusters[p.cpus[cpu].cluster].cpus),
        _ => CpuSet::first_n(p.nr_cpus()),
    }
}

/// `asym_cpu_capacity_classify(sd_span, cpu_map)` (kernel/sched/topology.c, v6.11).
/// `caps` is `asym_cap_list`: one span per distinct capacity (empty when symmetric).
fn asym_cpu_capacity_classify(sd_span: &CpuSet, cpu_map: &CpuSet, caps: &[CpuSet]) -> u32 {
    let mut count = 0;
    let mut miss = 0;
    for span in caps {
        if sd_span.intersects(span) {
            count += 1;
        } else if cpu_map.intersects(span) {
            miss += 1;
        }
    }
    if count < 2 {
        return 0;
    }
    if miss > 0 {
        return SD_ASYM_CPUCAPACITY;
    }
    SD_ASYM_CPUCAPACITY | SD_ASYM_CPUCAPACITY_FULL
}

/// `sd_init()` without the child update (kernel/sched/topology.c, v6.11; v5.9 values
/// for `LbVersion::V5_9` and `LbVersion::V4_20`; the v4.20 `busy_idx`/`idle_idx` load
/// indexes are not modelled).
fn sd_init(
    tl: &TopologyLevel,
    span: CpuSet,
    cpu_map: &CpuSet,
    caps: &[CpuSet],
    version: LbVersion,
    jiffies: u64,
) -> SchedDomain {
    let sd_weight = span.weight() as u64;
    let (busy_factor, imbalance_pct) = match version {
        LbVersion::V4_20 | LbVersion::V5_9 => (32, 125),
        LbVersion::V5_10 | LbVersion::V6_6 | LbVersion::V6_11 => (16, 117),
    };
    let mut sd = SchedDomain {
        name: tl.name,
        span,
        span_weight: sd_weight as u32,
        flags: SD_BALANCE_NEWIDLE
            | SD_BALANCE_EXEC
            | SD_BALANCE_FORK
            | SD_WAKE_AFFINE
            | SD_PREFER_SIBLING
            | tl.flags,
        groups: Vec::new(),
        min_interval: sd_weight,
        max_interval: 2 * sd_weight,
        busy_factor,
        imbalance_pct,
        cache_nice_tries: 0,
        balance_interval: sd_weight,
        nr_balance_failed: 0,
        last_balance: jiffies,
        max_newidle_lb_cost: 0,
        last_decay_max_lb_cost: jiffies,
        load_balance: true,
        interval_memo: IntervalMemo::default(),
    };
    sd.flags |= asym_cpu_capacity_classify(&sd.span, cpu_map, caps);
    if sd.flags & SD_SHARE_CPUCAPACITY != 0 {
        sd.imbalance_pct = 110;
    } else if sd.flags & SD_SHARE_LLC != 0 {
        sd.imbalance_pct = 117;
        sd.cache_nice_tries = 1;
    } else {
        sd.cache_nice_tries = 1;
    }
    sd
}

/// `sd_degenerate()` (kernel/sched/topology.c, v6.11).
fn sd_degenerate(sd: &SchedDomain) -> bool {
    if sd.span_weight == 1 {
        return true;
    }
    // Following flags need at least 2 groups
    if sd.flags & SD_DEGENERATE_GROUPS_MASK != 0 && sd.groups.len() > 1 {
        return false;
    }
    // Following flags don't use groups
    if sd.flags & SD_WAKE_AFFINE != 0 {
        return false;
    }
    true
}

/// `sd_parent_degenerate()` (kernel/sched/topology.c, v6.11).
fn sd_parent_degenerate(sd: &SchedDomain, parent: &SchedDomain) -> bool {
    if sd_degenerate(parent) {
        return true;
    }
    if sd.span != parent.span {
        return false;
    }
    let mut pflags = parent.flags;
    // Flags needing groups don't count if only 1 group in parent
    if parent.groups.len() == 1 {
        pflags &= !SD_DEGENERATE_GROUPS_MASK;
    }
    !sd.flags & pflags == 0
}

impl SchedDomains {
    /// `build_sched_domains()` for every CPU of `p` as one root domain, at time `jiffies`
    /// (kernel/sched/topology.c, v6.11), with the `sd_init()` constants of `version`.
    pub fn build(p: &Platform, version: LbVersion, jiffies: u64) -> SchedDomains {
        let n = p.nr_cpus();
        let cpu_map = CpuSet::first_n(n);
        // asym_cpu_capacity_scan(): distinct capacities, descending; symmetric -> empty.
        let mut caps: Vec<(u64, CpuSet)> = Vec::new();
        for c in &p.cpus {
            match caps.iter_mut().find(|(cap, _)| *cap == c.capacity) {
                Some((_, s)) => s.set(c.id),
                None => caps.push((c.capacity, CpuSet::from_cpus(&[c.id]))),
            }
        }
        caps.sort_by_key(|c| std::cmp::Reverse(c.0));
        if caps.len() == 1 {
            caps.clear();
        }
        let cap_spans: Vec<CpuSet> = caps.iter().map(|(_, s)| *s).collect();

        // Domains per CPU per topology level (before degeneration); `tls[cpu][k]` is
        // the index into TOPOLOGY of chain element k.
        let mut chains: Vec<Vec<SchedDomain>> = Vec::with_capacity(n);
        let mut has_asym = false;
        for cpu in 0..n {
            let mut chain: Vec<SchedDomain> = Vec::new();
            for (t, tl) in TOPOLOGY.iter().enumerate() {
                let mut span = tl_mask(p, t, cpu).and(&cpu_map);
                if let Some(child) = chain.last() {
                    // build_sched_domain(): a domain always spans its child.
                    span = span.or(&child.span);
                }
                let sd = sd_init(tl, span, &cpu_map, &cap_spans, version, jiffies);
                // Don't attempt to spread across CPUs of different capacities.
                if sd.flags & SD_ASYM_CPUCAPACITY != 0 {
                    has_asym = true;
                    if let Some(child) = chain.last_mut() {
                        child.flags &= !SD_PREFER_SIBLING;
                    }
                }
                let full = sd.span == cpu_map;
                chain.push(sd);
                if full {
                    break;
                }
            }
            chains.push(chain);
        }

        // build_sched_groups() + get_group(): groups are the child domains' spans.
        let mut sgc: Vec<SchedGroupCapacity> = Vec::new();
        let mut sgc_key: Vec<(usize, usize)> = Vec::new();
        let mut groups_all: Vec<Vec<Vec<SchedGroup>>> = Vec::with_capacity(n);
        for cpu in 0..n {
            let mut per_level = Vec::with_capacity(chains[cpu].len());
            for k in 0..chains[cpu].len() {
                let span = chains[cpu][k].span;
                let mut covered = CpuSet::EMPTY;
                let mut groups = Vec::new();
                // for_each_cpu_wrap(i, span, cpu)
                let order = span
                    .iter()
                    .filter(|&i| i >= cpu)
                    .chain(span.iter().filter(|&i| i < cpu));
                for i in order {
                    if covered.contains(i) {
                        continue;
                    }
                    let (gspan, gflags) = if k > 0 {
                        let child = &chains[i][k - 1];
                        (child.span, child.flags)
                    } else {
                        (CpuSet::from_cpus(&[i]), 0)
                    };
                    covered = covered.or(&gspan);
                    let first = gspan.first().unwrap_or(i);
                    let idx = match sgc_key.iter().position(|&key| key == (k, first)) {
                        Some(idx) => idx,
                        None => {
                            let w = gspan.weight() as u64;
                            sgc.push(SchedGroupCapacity {
                                id: first,
                                capacity: SCHED_CAPACITY_SCALE * w,
                                min_capacity: SCHED_CAPACITY_SCALE,
                                max_capacity: SCHED_CAPACITY_SCALE,
                                next_update: jiffies,
                                imbalance: false,
                            });
                            sgc_key.push((k, first));
                            sgc.len() - 1
                        }
                    };
                    let w = gspan.weight() as u32;
                    groups.push(SchedGroup {
                        span: gspan,
                        balance_mask: gspan,
                        flags: gflags,
                        group_weight: w,
                        cores: w,
                        sgc: idx,
                    });
                }
                per_level.push(groups);
            }
            groups_all.push(per_level);
        }
        for (chain, groups) in chains.iter_mut().zip(groups_all) {
            for (sd, g) in chain.iter_mut().zip(groups) {
                sd.groups = g;
            }
        }

        let mut doms = SchedDomains {
            cpus: Vec::with_capacity(n),
            sgc,
            sd_llc: vec![None; n],
            sd_llc_size: vec![1; n],
            sd_llc_id: (0..n).collect(),
            nr_idle_scan: vec![0; n],
            sd_asym_cpucapacity: vec![None; n],
            sd_asym_packing: vec![None; n],
            sched_asym_cpucap_active: has_asym,
            version,
        };

        // init_sched_groups_capacity(): CPUs in descending order, each domain bottom-up,
        // the group's balance CPU updates the capacity (capacity_of = original capacity at
        // boot; no RT/IRQ pressure yet).
        for cpu in (0..n).rev() {
            for k in 0..chains[cpu].len() {
                let balance_cpu = chains[cpu][k].groups[0].balance_mask.first();
                if balance_cpu == Some(cpu) {
                    Self::update_group_capacity_in(&mut doms.sgc, &chains[cpu], k, cpu, &|c| {
                        p.cpus[c].capacity
                    });
                }
            }
        }

        // cpu_attach_domain(): remove degenerate domains.
        for mut chain in chains {
            let mut tmp = 0;
            while tmp + 1 < chain.len() {
                if sd_parent_degenerate(&chain[tmp], &chain[tmp + 1]) {
                    let parent = chain.remove(tmp + 1);
                    let tflags = chain[tmp].flags;
                    if let Some(gp) = chain.get_mut(tmp + 1) {
                        gp.groups[0].flags = tflags;
                    }
                    // Transfer SD_PREFER_SIBLING down in case of a degenerate parent.
                    if parent.flags & SD_PREFER_SIBLING != 0 {
                        chain[tmp].flags |= SD_PREFER_SIBLING;
                    }
                } else {
                    tmp += 1;
                }
            }
            if chain.first().is_some_and(sd_degenerate) {
                chain.remove(0);
                if let Some(sd) = chain.first_mut() {
                    // The kernel's loop clears only the first group's flags.
                    sd.groups[0].flags = 0;
                }
            }
            doms.cpus.push(chain);
        }

        // update_top_cache_domain()
        for cpu in 0..n {
            let chain = &doms.cpus[cpu];
            let mut llc = None;
            for (k, sd) in chain.iter().enumerate() {
                if sd.flags & SD_SHARE_LLC != 0 {
                    llc = Some(k);
                    continue;
                }
                if SD_SHARE_LLC & SD_SHARED_CHILD_MASK != 0 {
                    break;
                }
            }
            if let Some(k) = llc {
                doms.sd_llc_size[cpu] = chain[k].span_weight;
                doms.sd_llc_id[cpu] = chain[k].span.first().unwrap_or(cpu);
                doms.nr_idle_scan[doms.sd_llc_id[cpu]] = chain[k].span_weight;
            }
            doms.sd_llc[cpu] = llc;
            doms.sd_asym_cpucapacity[cpu] = chain
                .iter()
                .position(|sd| sd.flags & SD_ASYM_CPUCAPACITY_FULL != 0);
            doms.sd_asym_packing[cpu] =
                chain.iter().rposition(|sd| sd.flags & SD_ASYM_PACKING != 0);
        }
        doms
    }

    /// `READ_ONCE(per_cpu(sd_llc_shared, cpu)->nr_idle_scan)`; `None` without an LLC
    /// domain (`sd_llc_shared` is NULL: `select_idle_cpu()` scans without a bound).
    pub fn nr_idle_scan(&self, cpu: usize) -> Option<u32> {
        self.sd_llc.get(cpu)?.as_ref()?;
        self.nr_idle_scan.get(*self.sd_llc_id.get(cpu)?).copied()
    }

    /// Number of CPUs.
    pub fn nr_cpus(&self) -> usize {
        self.cpus.len()
    }

    /// The domains of `cpu`, bottom-up (empty for a CPU attached to the null domain).
    pub fn domains(&self, cpu: usize) -> &[SchedDomain] {
        self.cpus.get(cpu).map_or(&[], |v| v.as_slice())
    }

    /// `update_group_capacity(sd, cpu)` (kernel/sched/fair.c, v6.11) for `cpu`'s domain at
    /// `level`: the base level takes `capacity_of(cpu)` (`update_cpu_capacity()`; the
    /// engine computes it with [`super::capacity::scale_rt_capacity`]); higher levels sum
    /// the child's groups. Also sets the group's `next_update` to `jiffies` + `interval`,
    /// the domain's balance interval in jiffies (`msecs_to_jiffies(sd->balance_interval)`
    /// clamped to `[1, max_load_balance_interval]`, which the caller reads from the
    /// domain's kept interval).
    pub fn update_group_capacity(
        &mut self,
        cpu: usize,
        level: usize,
        capacity_of: &dyn Fn(usize) -> u64,
        jiffies: u64,
        interval: u64,
    ) {
        let Some(chain) = self.cpus.get(cpu) else {
            return;
        };
        let Some(sd) = chain.get(level) else {
            return;
        };
        let sgc = sd.groups[0].sgc;
        self.sgc[sgc].next_update = jiffies + interval;
        Self::update_group_capacity_in(&mut self.sgc, chain, level, cpu, capacity_of);
    }

    fn update_group_capacity_in(
        sgcs: &mut [SchedGroupCapacity],
        chain: &[SchedDomain],
        level: usize,
        cpu: usize,
        capacity_of: &dyn Fn(usize) -> u64,
    ) {
        let sdg = chain[level].groups[0].sgc;
        if level == 0 {
            let c = capacity_of(cpu).max(1);
            sgcs[sdg].capacity = c;
            sgcs[sdg].min_capacity = c;
            sgcs[sdg].max_capacity = c;
            return;
        }
        let (mut capacity, mut min_c, mut max_c) = (0u64, u64::MAX, 0u64);
        for g in &chain[level - 1].groups {
            let s = &sgcs[g.sgc];
            capacity += s.capacity;
            min_c = min_c.min(s.min_capacity);
            max_c = max_c.max(s.max_capacity);
        }
        sgcs[sdg].capacity = capacity;
        sgcs[sdg].min_capacity = min_c;
        sgcs[sdg].max_capacity = max_c;
    }

    /// `sched_domain_debug()`-style description of every CPU's domains (the
    /// `hetsched platforms show NAME --domains` text).
    pub fn describe(&self) -> String {
        let mut s = String::new();
        for cpu in 0..self.nr_cpus() {
            let _ = write!(s, "{}", CpuDomains { doms: self, cpu });
        }
        s
    }
}

/// `msecs_to_jiffies(m)` for HZ dividing 1000 or not: rounds up (include/linux/jiffies.h).
pub fn msecs_to_jiffies(ms: u64, hz: u64) -> u64 {
    (ms * hz).div_ceil(1000)
}

/// Display of one CPU's domains in the style of `sched_domain_debug()`
/// (kernel/sched/topology.c), plus the balance parameters of
/// `/sys/kernel/debug/sched/domains/cpuN/domainM/`.
pub struct CpuDomains<'a> {
    /// The domains.
    pub doms: &'a SchedDomains,
    /// The CPU.
    pub cpu: usize,
}

impl fmt::Display for CpuDomains<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let chain = self.doms.domains(self.cpu);
        if chain.is_empty() {
            return writeln!(f, "CPU{} attaching NULL sched-domain.", self.cpu);
        }
        writeln!(f, "CPU{} attaching sched-domain(s):", self.cpu)?;
        for (level, sd) in chain.iter().enumerate() {
            let pad = " ".repeat(level);
            writeln!(
                f,
                "{pad} domain-{level}: span={} level={}",
                sd.span, sd.name
            )?;
            write!(f, "{pad}  groups:")?;
            for (i, g) in sd.groups.iter().enumerate() {
                let sgc = &self.doms.sgc[g.sgc];
                write!(f, " {}:{{ span={}", sgc.id, g.span)?;
                if sgc.capacity != SCHED_CAPACITY_SCALE {
                    write!(f, " cap={}", sgc.capacity)?;
                }
                write!(f, " }}")?;
                if i + 1 < sd.groups.len() {
                    write!(f, ",")?;
                }
            }
            writeln!(f)?;
            writeln!(f, "{pad}  flags: {}", sd_flag_names(sd.flags))?;
            writeln!(
                f,
                "{pad}  min_interval={} max_interval={} busy_factor={} imbalance_pct={} cache_nice_tries={}",
                sd.min_interval, sd.max_interval, sd.busy_factor, sd.imbalance_pct, sd.cache_nice_tries
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
pub(crate) mod tests;
