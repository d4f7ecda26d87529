//! Human-readable views of a platform: the `hetsched platforms show` table and the
//! one-line `hetsched platforms list` summary.

use std::fmt::Write as _;

use hetsched_core::platform::{IdleLevel, IdleState, Platform, PowerSource};

use crate::convert::cpu_list;

/// Capacities in CPU order, run-length compressed: `462×4 1024×4`.
fn capacity_runs(p: &Platform) -> String {
    let mut runs: Vec<(u64, usize)> = Vec::new();
    for c in &p.cpus {
        match runs.last_mut() {
            Some((cap, n)) if *cap == c.capacity => *n += 1,
            _ => runs.push((c.capacity, 1)),
        }
    }
    runs.iter()
        .map(|&(cap, n)| {
            if n == 1 {
                cap.to_string()
            } else {
                format!("{cap}×{n}")
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn power_source_label(s: PowerSource) -> &'static str {
    match s {
        PowerSource::DynamicPowerCoefficient => "dynamic-power-coefficient × V² × f (DT)",
        PowerSource::Explicit => "explicit per-OPP power from a published table",
        PowerSource::Assumed => "ASSUMED (no published data; see notes)",
        PowerSource::None => "none (no power data)",
    }
}

/// The scheduling domains the kernel would build for `p` (`hetsched platforms show NAME
/// --domains`), in the style of `sched_domain_debug()`, for the v5.10+ balancer.
pub fn describe_domains(p: &Platform) -> String {
    let doms = hetsched_core::sched::topology::SchedDomains::build(
        p,
        hetsched_core::sched::topology::LbVersion::default(),
        0,
    );
    let mut s = format!(
        "Scheduling domains (kernel/sched/topology.c, v6.11; sched_asym_cpucapacity {}):\n",
        if doms.sched_asym_cpucap_active {
            "on"
        } else {
            "off"
        }
    );
    s.push_str(&doms.describe());
    s
}

/// One line for `hetsched platforms list`: name, CPU count, capacities, description.
pub fn summary_line(p: &Platform) -> String {
    let assumed = if p
        .perf_domains
        .iter()
        .any(|d| d.power_source == PowerSource::Assumed)
    {
        " [power assumed]"
    } else {
        ""
    };
    format!(
        "{:<12} {:>2} CPUs  capacities {:<28} {}{}",
        p.name,
        p.nr_cpus(),
        capacity_runs(p),
        p.description,
        assumed
    )
}

fn idle_line(s: &IdleState) -> String {
    let level = match s.level {
        IdleLevel::Cpu => "cpu",
        IdleLevel::Cluster => "cluster",
    };
    let power = s
        .power_uw
        .map_or_else(|| "power unknown".to_string(), |w| format!("{w} µW"));
    format!(
        "{} ({level}): entry {} µs, exit {} µs, min residency {} µs, {power}",
        s.name, s.entry_latency_us, s.exit_latency_us, s.min_residency_us
    )
}

/// The table for `hetsched platforms show NAME`: CPUs (id, core, cluster, perf domain,
/// capacity, dmips), each perf domain's OPP table (kHz, µV, µW, EM performance
/// `cap × f / fmax`, EM cost `10 × P / perf` of v6.9+), transition latency, idle states,
/// sources and notes. Assumed power models are labelled.
pub fn describe(p: &Platform) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "{}: {}", p.name, p.description);
    let _ = writeln!(
        s,
        "{} CPUs, {} clusters, {} perf domains, {}",
        p.nr_cpus(),
        p.clusters.len(),
        p.perf_domains.len(),
        if p.is_asymmetric() {
            "asymmetric capacities"
        } else {
            "symmetric capacities"
        }
    );
    if p.perf_domains
        .iter()
        .any(|d| d.power_source == PowerSource::Assumed)
    {
        let _ = writeln!(s, "power model: assumed (for at least one perf domain)");
    }
    let _ = writeln!(s);
    let _ = writeln!(
        s,
        "{:>4}  {:<14} {:<16} {:>4}  {:>8}  {:>9}",
        "CPU", "core", "cluster", "pd", "capacity", "dmips/MHz"
    );
    for c in &p.cpus {
        let cl = p.clusters.get(c.cluster).map_or("?", |cl| cl.name.as_str());
        let _ = writeln!(
            s,
            "{:>4}  {:<14} {:<16} {:>4}  {:>8}  {:>9}",
            c.id,
            c.core,
            format!("{} {}", c.cluster, cl),
            c.perf_domain,
            c.capacity,
            c.capacity_dmips_mhz
        );
    }
    let work: Vec<String> = p
        .cpus
        .iter()
        .filter_map(|c| c.work_capacity.map(|w| format!("CPU {} {w}", c.id)))
        .collect();
    if !work.is_empty() {
        let _ = writeln!(
            s,
            "work speed (work_dmips_mhz; hetsched's, the kernel sees the capacities): {}",
            work.join(", ")
        );
    }
    let d = p.cpufreq_driver;
    let _ = writeln!(
        s,
        "cpufreq driver {}: schedutil {}",
        d.name(),
        if d.fast_switch() {
            "switches in scheduler context (fast switch)"
        } else {
            "switches through its sugov:N kthread (no fast switch)"
        }
    );
    for pd in &p.perf_domains {
        let first = pd.cpus.first().and_then(|&c| p.cpus.get(c));
        let cap = first.map_or(0, |c| c.capacity);
        let core = first.map_or("?", |c| c.core.as_str());
        let _ = writeln!(s);
        let _ = writeln!(
            s,
            "perf domain {} ({core}, CPUs {}): capacity {cap}, cpuinfo.max_freq {} kHz, transition latency {} ns",
            pd.id,
            cpu_list(&pd.cpus),
            pd.max_freq_khz,
            pd.transition_latency_ns
        );
        let dpc = pd.dynamic_power_coefficient.map_or_else(String::new, |c| {
            format!(", dynamic-power-coefficient {c} µW/MHz/V²")
        });
        let _ = writeln!(s, "  power: {}{dpc}", power_source_label(pd.power_source));
        let _ = writeln!(
            s,
            "  {:>10}  {:>9}  {:>9}  {:>5}  {:>6}",
            "kHz", "µV", "µW", "perf", "cost"
        );
        // EM performance and cost (kernel/power/energy_model.c, v6.9+), over usable OPPs.
        let fmax = pd.max_freq_khz.max(1);
        let rows: Vec<(u64, Option<u64>)> = pd
            .opps
            .iter()
            .map(|o| {
                let perf = cap * o.freq_khz / fmax;
                let cost = match (o.power_uw, perf) {
                    (Some(w), perf) if perf > 0 => Some(w * 10 / perf),
                    _ => None,
                };
                (perf, cost)
            })
            .collect();
        // Inefficient: a faster usable OPP costs the same or less.
        let usable = pd.usable_opps().len();
        let mut inefficient = vec![false; rows.len()];
        let mut min_cost: Option<u64> = None;
        for i in (0..usable).rev() {
            if let Some(c) = rows[i].1 {
                if min_cost.is_some_and(|m| c >= m) {
                    inefficient[i] = true;
                }
                min_cost = Some(min_cost.map_or(c, |m| m.min(c)));
            }
        }
        for (i, o) in pd.opps.iter().enumerate() {
            let opt = |v: Option<u64>| v.map_or_else(|| "-".to_string(), |x| x.to_string());
            let flag = if i >= usable {
                "  above cpuinfo.max_freq, unused"
            } else if inefficient[i] {
                "  inefficient"
            } else {
                ""
            };
            let (perf, cost) = rows[i];
            let _ = writeln!(
                s,
                "  {:>10}  {:>9}  {:>9}  {:>5}  {:>6}{flag}",
                o.freq_khz,
                opt(o.microvolt),
                opt(o.power_uw),
                if i < usable {
                    perf.to_string()
                } else {
                    "-".to_string()
                },
                if i < usable {
                    opt(cost)
                } else {
                    "-".to_string()
                },
            );
        }
        let idle = first.map(|c| c.idle_states.as_slice()).unwrap_or(&[]);
        if idle.is_empty() {
            let _ = writeln!(s, "  idle states: WFI only");
        } else {
            let _ = writeln!(s, "  idle states (after WFI):");
            for st in idle {
                let _ = writeln!(s, "    {}", idle_line(st));
            }
        }
    }
    if !p.sources.is_empty() {
        let _ = writeln!(s);
        let _ = writeln!(s, "sources:");
        for src in &p.sources {
            let _ = writeln!(s, "  - {src}");
        }
    }
    if !p.notes.is_empty() {
        let _ = writeln!(s);
        let _ = writeln!(s, "notes:");
        for n in &p.notes {
            let _ = writeln!(s, "  - {n}");
        }
    }
    s
}
