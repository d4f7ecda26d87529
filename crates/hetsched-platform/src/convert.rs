//! Validation of a [`PlatformFile`] and derivation of the engine's [`Platform`]:
//! capacities the kernel's way, OPP power from explicit µW, the dynamic-power coefficient,
//! or an assumed model.

use std::collections::{BTreeMap, BTreeSet};

use hetsched_core::platform::{
    topology_normalize_cpu_scale, Cluster, Cpu, IdleLevel, IdleState, Opp, PerfDomain, Platform,
    PowerSource, SCHED_CAPACITY_SCALE,
};

use crate::format::{AssumedPowerFile, IdleLevelFile, PerfDomainFile, PlatformFile};
use crate::locate::Seg;

/// Largest logical CPU id + 1 accepted: 256, what the engine's CPU masks hold
/// (`hetsched_core::sched::cpuset::MAX_CPUS`; the kernel's `NR_CPUS` goes higher).
pub(crate) const MAX_CPUS: usize = 256;
/// Largest frequency accepted, in kHz (100 GHz).
const MAX_KHZ: u64 = 100_000_000;
/// Largest voltage accepted, in µV (10 V).
const MAX_UV: u64 = 10_000_000;
/// Largest `capacity-dmips-mhz` accepted.
const MAX_DMIPS: u64 = 1_000_000;
/// Largest dynamic-power coefficient accepted.
const MAX_DPC: u64 = 1_000_000;
/// `EM_MAX_POWER` (include/linux/energy_model.h, v5.19+): 64 W per CPU, in µW.
pub(crate) const EM_MAX_POWER: u64 = 64_000_000;

/// A validation failure: the path of the offending item and what is wrong.
#[derive(Debug)]
pub(crate) struct Invalid {
    pub(crate) path: Vec<Seg>,
    pub(crate) message: String,
}

type Res<T> = Result<T, Invalid>;

fn fail<T>(path: Vec<Seg>, message: impl Into<String>) -> Res<T> {
    Err(Invalid {
        path,
        message: message.into(),
    })
}

fn key(k: &str) -> Seg {
    Seg::Key(k.to_string())
}

fn pd_path(i: usize) -> Vec<Seg> {
    vec![key("perf_domains"), Seg::Index(i)]
}

fn sub(mut base: Vec<Seg>, more: &[Seg]) -> Vec<Seg> {
    base.extend_from_slice(more);
    base
}

/// `0-3,5` style CPU list.
pub(crate) fn cpu_list(cpus: &[usize]) -> String {
    let mut sorted = cpus.to_vec();
    sorted.sort_unstable();
    let mut parts = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let start = sorted[i];
        let mut end = start;
        while i + 1 < sorted.len() && sorted[i + 1] == end + 1 {
            i += 1;
            end = sorted[i];
        }
        parts.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
        i += 1;
    }
    parts.join(",")
}

/// Kernel EM power: `floor(C × mV × mV × MHz / 1e6)` (drivers/opp/of.c `_get_power()`,
/// v5.19+), with `mV = µV / 1000` and `MHz = kHz / 1000`, both truncated as the kernel does.
pub(crate) fn dpc_power_uw(c: u64, uv: u64, khz: u64) -> u128 {
    let mv = u128::from(uv / 1000);
    let mhz = u128::from(khz / 1000);
    u128::from(c) * mv * mv * mhz / 1_000_000
}

/// Validate `file` and derive the platform.
pub(crate) fn build(file: &PlatformFile) -> Res<Platform> {
    if file.name.trim().is_empty() {
        return fail(vec![key("name")], "the platform name must not be empty");
    }
    if file.perf_domains.is_empty() {
        return fail(
            vec![key("perf_domains")],
            "at least one perf domain is required",
        );
    }

    // CPUs -> (perf domain, index in its list), perf-domain checks.
    let mut owner: BTreeMap<usize, (usize, usize)> = BTreeMap::new();
    let mut pd_names: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, pd) in file.perf_domains.iter().enumerate() {
        let p = pd_path(i);
        if pd.name.trim().is_empty() {
            return fail(
                sub(p, &[key("name")]),
                "the perf domain name must not be empty",
            );
        }
        if let Some(other) = pd_names.insert(pd.name.as_str(), i) {
            return fail(
                sub(p, &[key("name")]),
                format!(
                    "duplicate perf domain name `{}` (also perf_domains[{other}])",
                    pd.name
                ),
            );
        }
        if pd.core.trim().is_empty() {
            return fail(sub(p, &[key("core")]), "the core name must not be empty");
        }
        if pd.cpus.is_empty() {
            return fail(
                sub(p, &[key("cpus")]),
                "a perf domain needs at least one CPU",
            );
        }
        for (j, &c) in pd.cpus.iter().enumerate() {
            let cp = sub(p.clone(), &[key("cpus"), Seg::Index(j)]);
            if c >= MAX_CPUS {
                return fail(
                    cp,
                    format!(
                        "CPU {c} is out of range: logical CPU ids are 0..{MAX_CPUS} (hetsched simulates up to {MAX_CPUS} CPUs)"
                    ),
                );
            }
            if let Some(&(other, _)) = owner.get(&c) {
                let msg = if other == i {
                    format!("CPU {c} is listed twice in perf domain `{}`", pd.name)
                } else {
                    format!(
                        "CPU {c} is already in perf domain `{}`; a CPU belongs to exactly one perf domain",
                        file.perf_domains[other].name
                    )
                };
                return fail(cp, msg);
            }
            owner.insert(c, (i, j));
        }
        check_opps(pd, &p)?;
        if let Some(d) = pd.capacity_dmips_mhz {
            if !(1..=MAX_DMIPS).contains(&d) {
                return fail(
                    sub(p, &[key("capacity_dmips_mhz")]),
                    format!("capacity_dmips_mhz {d} is out of range: expected 1..={MAX_DMIPS}"),
                );
            }
        }
        if let Some(d) = pd.work_dmips_mhz {
            if !(1..=MAX_DMIPS).contains(&d) {
                return fail(
                    sub(p, &[key("work_dmips_mhz")]),
                    format!("work_dmips_mhz {d} is out of range: expected 1..={MAX_DMIPS}"),
                );
            }
        }
        if let Some(c) = pd.dynamic_power_coefficient {
            if !(1..=MAX_DPC).contains(&c) {
                return fail(
                    sub(p, &[key("dynamic_power_coefficient")]),
                    format!(
                        "dynamic_power_coefficient {c} is out of range: expected 1..={MAX_DPC} µW/MHz/V²"
                    ),
                );
            }
        }
        let mut seen = BTreeSet::new();
        for (j, s) in pd.idle_states.iter().enumerate() {
            let sp = sub(p.clone(), &[key("idle_states"), Seg::Index(j)]);
            if !file.idle_states.contains_key(s) {
                let known: Vec<&str> = file.idle_states.keys().map(String::as_str).collect();
                let known = if known.is_empty() {
                    "none are defined; add a top-level `idle_states` map".to_string()
                } else {
                    format!("defined: {}", known.join(", "))
                };
                return fail(sp, format!("unknown idle state `{s}` ({known})"));
            }
            if !seen.insert(s.as_str()) {
                return fail(sp, format!("idle state `{s}` is listed twice"));
            }
        }
    }

    // Numbering 0..n-1 without gaps.
    let nr_cpus = owner.len();
    if let Some((&max_cpu, &(pd_i, j))) = owner.iter().next_back() {
        if max_cpu + 1 != nr_cpus {
            let gap = (0..=max_cpu).find(|c| !owner.contains_key(c)).unwrap_or(0);
            return fail(
                sub(pd_path(pd_i), &[key("cpus"), Seg::Index(j)]),
                format!(
                    "CPU numbering has a gap: CPU {gap} is in no perf domain but CPU {max_cpu} exists; number the CPUs 0..{} without gaps",
                    nr_cpus.saturating_sub(1)
                ),
            );
        }
    }

    // capacity-dmips-mhz: all or none.
    let with_dmips = file
        .perf_domains
        .iter()
        .position(|pd| pd.capacity_dmips_mhz.is_some());
    let without_dmips = file
        .perf_domains
        .iter()
        .position(|pd| pd.capacity_dmips_mhz.is_none());
    if let (Some(a), Some(b)) = (with_dmips, without_dmips) {
        return fail(
            pd_path(b),
            format!(
                "capacity_dmips_mhz is given for perf domain `{}` but not for `{}`; give it for every domain or none (with partial information the kernel falls back to 1024 for all CPUs)",
                file.perf_domains[a].name, file.perf_domains[b].name
            ),
        );
    }

    // Capacities (arch_topology.c topology_normalize_cpu_scale, freq_ref = cpuinfo.max_freq).
    let max_freqs: Vec<u64> = file.perf_domains.iter().map(max_freq_khz).collect();
    let raw: Vec<(u64, u64)> = (0..nr_cpus)
        .map(|c| {
            let pd_i = owner.get(&c).map_or(0, |&(i, _)| i);
            let dmips = file.perf_domains[pd_i]
                .capacity_dmips_mhz
                .unwrap_or(SCHED_CAPACITY_SCALE);
            (dmips, max_freqs[pd_i])
        })
        .collect();
    let derived = topology_normalize_cpu_scale(&raw);
    // Work speeds (hetsched's `work_dmips_mhz`) on the same scale: the capacity formula
    // with the work's DMIPS/MHz in the numerator and the capacities' denominator.
    let capacity_scale = raw.iter().map(|&(d, f)| d * f).max().unwrap_or(1).max(1);
    let mut work_caps = vec![None; nr_cpus];
    for (c, wc) in work_caps.iter_mut().enumerate() {
        let pd_i = owner.get(&c).map_or(0, |&(i, _)| i);
        if let Some(wd) = file.perf_domains[pd_i].work_dmips_mhz {
            let w = ((wd * max_freqs[pd_i]) << 10) / capacity_scale;
            if w == 0 {
                return fail(
                    sub(pd_path(pd_i), &[key("work_dmips_mhz")]),
                    format!("work_dmips_mhz {wd} gives CPU {c} a work speed of 0 (below 1/1024 of the largest CPU's capacity)"),
                );
            }
            *wc = Some(w);
        }
    }
    for (c, &cap) in derived.iter().enumerate() {
        if cap == 0 {
            let pd_i = owner.get(&c).map_or(0, |&(i, _)| i);
            return fail(
                pd_path(pd_i),
                format!(
                    "CPU {c} would get capacity 0 (capacity_dmips_mhz × max frequency is below 1/1024 of the largest CPU's)"
                ),
            );
        }
    }
    let mut notes = file.notes.clone();
    let capacities = match &file.capacity_override {
        None => derived.clone(),
        Some(ov) => {
            let op = vec![key("capacity_override")];
            if ov.len() != nr_cpus {
                return fail(
                    op,
                    format!(
                        "capacity_override has {} entries but the platform has {nr_cpus} CPUs; give one capacity per CPU, in CPU order",
                        ov.len()
                    ),
                );
            }
            for (c, &cap) in ov.iter().enumerate() {
                if !(1..=SCHED_CAPACITY_SCALE).contains(&cap) {
                    return fail(
                        sub(op, &[Seg::Index(c)]),
                        format!("capacity {cap} of CPU {c} is out of range: expected 1..=1024"),
                    );
                }
            }
            for pd in &file.perf_domains {
                let first = pd.cpus[0];
                for &c in &pd.cpus[1..] {
                    if ov[c] != ov[first] {
                        return fail(
                            sub(op, &[Seg::Index(c)]),
                            format!(
                                "CPU {c} has capacity {} but CPU {first} of the same perf domain `{}` has {}; the CPUs of a perf domain share one capacity",
                                ov[c], pd.name, ov[first]
                            ),
                        );
                    }
                }
            }
            notes.push(format!(
                "capacity_override: capacities {:?} replace the derived {:?} (capacity-dmips-mhz × cpuinfo.max_freq, topology_normalize_cpu_scale)",
                ov, derived
            ));
            ov.clone()
        }
    };

    // Clusters.
    let clusters = build_clusters(file, nr_cpus)?;
    let mut cluster_of = vec![0usize; nr_cpus];
    for cl in &clusters {
        for &c in &cl.cpus {
            cluster_of[c] = cl.id;
        }
    }

    // Idle states.
    let idle_of = |pd: &PerfDomainFile| -> Vec<IdleState> {
        pd.idle_states
            .iter()
            .filter_map(|n| {
                file.idle_states.get(n).map(|s| IdleState {
                    name: n.clone(),
                    level: match s.level {
                        IdleLevelFile::Cpu => IdleLevel::Cpu,
                        IdleLevelFile::Cluster => IdleLevel::Cluster,
                    },
                    entry_latency_us: s.entry_us,
                    exit_latency_us: s.exit_us,
                    min_residency_us: s.min_residency_us,
                    power_uw: s.power_uw,
                })
            })
            .collect()
    };

    // Perf domains with their power.
    let mut perf_domains = Vec::with_capacity(file.perf_domains.len());
    for (i, pd) in file.perf_domains.iter().enumerate() {
        let (powers, power_source, note) = pd_power(pd, &pd_path(i), max_freqs[i])?;
        if let Some(n) = note {
            notes.push(n);
        }
        let mut cpus = pd.cpus.clone();
        cpus.sort_unstable();
        perf_domains.push(PerfDomain {
            id: i,
            cpus,
            opps: pd
                .opps
                .iter()
                .zip(powers)
                .map(|(o, p)| Opp {
                    freq_khz: o.khz,
                    microvolt: o.uv,
                    power_uw: p,
                })
                .collect(),
            max_freq_khz: max_freqs[i],
            transition_latency_ns: pd.transition_latency_ns,
            dynamic_power_coefficient: pd.dynamic_power_coefficient,
            power_source,
        });
    }

    let cpus = (0..nr_cpus)
        .map(|c| {
            let pd_i = owner.get(&c).map_or(0, |&(i, _)| i);
            let pd = &file.perf_domains[pd_i];
            Cpu {
                id: c,
                core: pd.core.clone(),
                capacity_dmips_mhz: pd.capacity_dmips_mhz.unwrap_or(SCHED_CAPACITY_SCALE),
                capacity: capacities[c],
                work_capacity: work_caps[c],
                perf_domain: pd_i,
                cluster: cluster_of[c],
                idle_states: idle_of(pd),
            }
        })
        .collect();

    Ok(Platform {
        name: file.name.clone(),
        description: file.description.clone(),
        cpus,
        clusters,
        perf_domains,
        sources: file
            .sources
            .iter()
            .cloned()
            .chain(
                file.provenance
                    .iter()
                    .map(|(k, v)| format!("provenance: {k} ← {v}")),
            )
            .collect(),
        notes,
        cpufreq_driver: file.cpufreq_driver.unwrap_or_default(),
    })
}

/// `cpuinfo.max_freq`: the cap if given (validated to be an OPP), else the highest OPP.
fn max_freq_khz(pd: &PerfDomainFile) -> u64 {
    pd.max_freq_khz
        .or_else(|| pd.opps.last().map(|o| o.khz))
        .unwrap_or(1)
}

fn check_opps(pd: &PerfDomainFile, p: &[Seg]) -> Res<()> {
    let op = sub(p.to_vec(), &[key("opps")]);
    if pd.opps.is_empty() {
        return fail(op, "the OPP table is empty; give at least one {khz: ...}");
    }
    let mut prev: Option<u64> = None;
    for (j, o) in pd.opps.iter().enumerate() {
        let jp = sub(op.clone(), &[Seg::Index(j)]);
        if !(1..=MAX_KHZ).contains(&o.khz) {
            return fail(
                sub(jp, &[key("khz")]),
                format!(
                    "frequency {} kHz is out of range: expected 1..={MAX_KHZ}",
                    o.khz
                ),
            );
        }
        if let Some(pf) = prev {
            if o.khz <= pf {
                return fail(
                    jp,
                    format!(
                        "OPPs must be in strictly ascending frequency: {} kHz follows {pf} kHz",
                        o.khz
                    ),
                );
            }
        }
        prev = Some(o.khz);
        if let Some(uv) = o.uv {
            if !(1..=MAX_UV).contains(&uv) {
                return fail(
                    sub(jp, &[key("uv")]),
                    format!("voltage {uv} µV is out of range: expected 1..={MAX_UV}"),
                );
            }
        }
    }
    if let Some(m) = pd.max_freq_khz {
        if !pd.opps.iter().any(|o| o.khz == m) {
            let list: Vec<String> = pd.opps.iter().map(|o| o.khz.to_string()).collect();
            return fail(
                sub(p.to_vec(), &[key("max_freq_khz")]),
                format!(
                    "max_freq_khz {m} is not one of the OPP frequencies ({})",
                    list.join(", ")
                ),
            );
        }
    }
    Ok(())
}

fn build_clusters(file: &PlatformFile, nr_cpus: usize) -> Res<Vec<Cluster>> {
    let Some(list) = &file.clusters else {
        return Ok(file
            .perf_domains
            .iter()
            .enumerate()
            .map(|(i, pd)| {
                let mut cpus = pd.cpus.clone();
                cpus.sort_unstable();
                Cluster {
                    id: i,
                    name: pd.name.clone(),
                    cpus,
                }
            })
            .collect());
    };
    let base = vec![key("clusters")];
    if list.is_empty() {
        return fail(
            base,
            "clusters is empty; leave it out for one cluster per perf domain",
        );
    }
    let mut seen_cpu: BTreeMap<usize, usize> = BTreeMap::new();
    let mut names: BTreeSet<&str> = BTreeSet::new();
    let mut out = Vec::new();
    for (i, cl) in list.iter().enumerate() {
        let p = sub(base.clone(), &[Seg::Index(i)]);
        if cl.name.trim().is_empty() || !names.insert(cl.name.as_str()) {
            return fail(
                sub(p, &[key("name")]),
                format!("cluster name `{}` is empty or used twice", cl.name),
            );
        }
        if cl.cpus.is_empty() {
            return fail(sub(p, &[key("cpus")]), "a cluster needs at least one CPU");
        }
        for (j, &c) in cl.cpus.iter().enumerate() {
            let cp = sub(p.clone(), &[key("cpus"), Seg::Index(j)]);
            if c >= nr_cpus {
                return fail(
                    cp,
                    format!(
                        "CPU {c} is not in any perf domain (the CPUs are 0..{})",
                        nr_cpus.saturating_sub(1)
                    ),
                );
            }
            if let Some(other) = seen_cpu.insert(c, i) {
                return fail(
                    cp,
                    format!(
                        "CPU {c} is already in cluster `{}`; a CPU belongs to exactly one cluster",
                        list[other].name
                    ),
                );
            }
        }
        let mut cpus = cl.cpus.clone();
        cpus.sort_unstable();
        out.push(Cluster {
            id: i,
            name: cl.name.clone(),
            cpus,
        });
    }
    if let Some(missing) = (0..nr_cpus).find(|c| !seen_cpu.contains_key(c)) {
        return fail(
            base,
            format!("CPU {missing} is in no cluster; every CPU of a perf domain must be in exactly one cluster"),
        );
    }
    Ok(out)
}

type PowerOut = (Vec<Option<u64>>, PowerSource, Option<String>);

fn pd_power(pd: &PerfDomainFile, p: &[Seg], max_khz: u64) -> Res<PowerOut> {
    let op = |j: usize| sub(p.to_vec(), &[key("opps"), Seg::Index(j)]);
    let n = pd.opps.len();
    let n_uw = pd.opps.iter().filter(|o| o.uw.is_some()).count();
    if n_uw > 0 && n_uw < n {
        let j = pd.opps.iter().position(|o| o.uw.is_none()).unwrap_or(0);
        return fail(
            op(j),
            "this OPP has no uw but others of the domain do; give uw for every OPP or for none",
        );
    }
    let check_range = |j: usize, pw: u128, what: &str| -> Res<u64> {
        match u64::try_from(pw) {
            Ok(v) if (1..=EM_MAX_POWER).contains(&v) => Ok(v),
            _ => fail(
                op(j),
                format!(
                    "{what} power {pw} µW is outside the energy model's range 1..={EM_MAX_POWER} µW (EM_MAX_POWER)"
                ),
            ),
        }
    };
    if n_uw == n {
        if pd.assumed_power.is_some() {
            return fail(
                sub(p.to_vec(), &[key("assumed_power")]),
                "assumed_power cannot be combined with explicit uw on the OPPs; remove one",
            );
        }
        let mut out = Vec::with_capacity(n);
        for (j, o) in pd.opps.iter().enumerate() {
            out.push(Some(check_range(
                j,
                u128::from(o.uw.unwrap_or(0)),
                "explicit",
            )?));
        }
        return Ok((out, PowerSource::Explicit, None));
    }
    let all_uv = pd.opps.iter().all(|o| o.uv.is_some());
    if let Some(a) = &pd.assumed_power {
        return assumed_power(pd, a, p, max_khz, all_uv, &check_range);
    }
    match pd.dynamic_power_coefficient {
        Some(c) if all_uv => {
            let mut out = Vec::with_capacity(n);
            for (j, o) in pd.opps.iter().enumerate() {
                let pw = dpc_power_uw(c, o.uv.unwrap_or(0), o.khz);
                out.push(Some(check_range(j, pw, "dynamic-power-coefficient")?));
            }
            Ok((out, PowerSource::DynamicPowerCoefficient, None))
        }
        _ => Ok((vec![None; n], PowerSource::None, None)),
    }
}

/// Linear interpolation on a validated, ascending voltage curve; constant outside it.
fn curve_uv(curve: &[(u64, u64)], khz: u64) -> u64 {
    let Some(&(f0, v0)) = curve.first() else {
        return 0;
    };
    if khz <= f0 {
        return v0;
    }
    for w in curve.windows(2) {
        let ((fa, va), (fb, vb)) = (w[0], w[1]);
        if khz <= fb {
            let (fa, va, fb, vb, f) = (
                i128::from(fa),
                i128::from(va),
                i128::from(fb),
                i128::from(vb),
                i128::from(khz),
            );
            let v = va + (vb - va) * (f - fa) / (fb - fa);
            return u64::try_from(v).unwrap_or(0);
        }
    }
    curve.last().map_or(0, |&(_, v)| v)
}

fn assumed_power(
    pd: &PerfDomainFile,
    a: &AssumedPowerFile,
    p: &[Seg],
    max_khz: u64,
    all_uv: bool,
    check_range: &dyn Fn(usize, u128, &str) -> Res<u64>,
) -> Res<PowerOut> {
    let ap = sub(p.to_vec(), &[key("assumed_power")]);
    if a.basis.trim().is_empty() {
        return fail(
            sub(ap, &[key("basis")]),
            "basis must say why the assumed numbers are plausible",
        );
    }
    if pd.dynamic_power_coefficient.is_some() && all_uv {
        return fail(
            ap,
            "assumed_power is not needed: the power follows from dynamic_power_coefficient and the OPP voltages; remove it",
        );
    }
    if a.dynamic_power_coefficient.is_some() && a.max_uw.is_some() {
        return fail(
            ap,
            "give either dynamic_power_coefficient or max_uw in assumed_power, not both",
        );
    }
    if a.max_uw.is_some() && pd.dynamic_power_coefficient.is_some() {
        return fail(
            sub(ap, &[key("max_uw")]),
            "max_uw conflicts with the domain's dynamic_power_coefficient; remove one",
        );
    }
    let coefficient = a.dynamic_power_coefficient.or(pd.dynamic_power_coefficient);
    if coefficient.is_none() && a.max_uw.is_none() {
        return fail(
            ap,
            "assumed_power needs dynamic_power_coefficient (here or on the domain) or max_uw",
        );
    }
    if let Some(c) = coefficient {
        if !(1..=MAX_DPC).contains(&c) {
            return fail(
                sub(ap, &[key("dynamic_power_coefficient")]),
                format!("dynamic_power_coefficient {c} is out of range: expected 1..={MAX_DPC}"),
            );
        }
    }
    if let Some(m) = a.max_uw {
        if !(1..=EM_MAX_POWER).contains(&m) {
            return fail(
                sub(ap, &[key("max_uw")]),
                format!("max_uw {m} is out of range: expected 1..={EM_MAX_POWER}"),
            );
        }
    }
    let mut curve: Vec<(u64, u64)> = Vec::new();
    if let Some(points) = &a.voltage_curve {
        let cp = sub(ap.clone(), &[key("voltage_curve")]);
        if points.is_empty() {
            return fail(cp, "voltage_curve needs at least one {khz, uv} point");
        }
        for (j, pt) in points.iter().enumerate() {
            let jp = sub(cp.clone(), &[Seg::Index(j)]);
            if !(1..=MAX_KHZ).contains(&pt.khz) || !(1..=MAX_UV).contains(&pt.uv) {
                return fail(
                    jp,
                    format!("point {{khz: {}, uv: {}}} is out of range (khz 1..={MAX_KHZ}, uv 1..={MAX_UV})", pt.khz, pt.uv),
                );
            }
            if let Some(&(pf, _)) = curve.last() {
                if pt.khz <= pf {
                    return fail(jp, "voltage_curve points must have strictly ascending khz");
                }
            }
            curve.push((pt.khz, pt.uv));
        }
    } else if let Some(o) = pd.opps.iter().find(|o| o.uv.is_none()) {
        return fail(
            ap,
            format!(
                "voltage_curve is required: the OPP at {} kHz has no uv",
                o.khz
            ),
        );
    }
    let volts: Vec<u64> = pd
        .opps
        .iter()
        .map(|o| o.uv.unwrap_or_else(|| curve_uv(&curve, o.khz)))
        .collect();
    // f·V² in the kernel's integer units (MHz, mV).
    let fv2: Vec<u128> = pd
        .opps
        .iter()
        .zip(&volts)
        .map(|(o, &uv)| {
            let mv = u128::from(uv / 1000);
            mv * mv * u128::from(o.khz / 1000)
        })
        .collect();
    let mut out = Vec::with_capacity(pd.opps.len());
    let model = if let Some(c) = coefficient {
        for (j, &x) in fv2.iter().enumerate() {
            out.push(Some(check_range(
                j,
                u128::from(c) * x / 1_000_000,
                "assumed",
            )?));
        }
        format!("P = C·V²·f with C = {c} µW/MHz/V²")
    } else {
        let max_uw = a.max_uw.unwrap_or(1);
        let top = pd
            .opps
            .iter()
            .position(|o| o.khz == max_khz)
            .unwrap_or(pd.opps.len() - 1);
        let top_fv2 = fv2[top];
        if top_fv2 == 0 {
            return fail(
                ap,
                "cannot scale max_uw: the voltage or frequency at max frequency rounds to 0",
            );
        }
        for (j, &x) in fv2.iter().enumerate() {
            out.push(Some(check_range(
                j,
                u128::from(max_uw) * x / top_fv2,
                "assumed",
            )?));
        }
        format!("P ∝ V²·f scaled to {max_uw} µW at {max_khz} kHz")
    };
    let vdesc = if all_uv {
        "voltages from the OPP table".to_string()
    } else {
        let pts: Vec<String> = curve
            .iter()
            .map(|(f, v)| format!("{} MHz→{} mV", f / 1000, v / 1000))
            .collect();
        format!("assumed voltage curve {}", pts.join(", "))
    };
    let note = format!(
        "perf domain `{}` (CPUs {}): OPP power is ASSUMED: {model}, {vdesc}. Basis: {}",
        pd.name,
        cpu_list(&pd.cpus),
        a.basis.trim()
    );
    Ok((out, PowerSource::Assumed, Some(note)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dpc_power_matches_kernel_integer_form() {
        // hi3660 A53 @ 533 MHz, 700 mV, C = 110: 110*700*700*533/1e6 = 28728.7 -> 28728.
        assert_eq!(dpc_power_uw(110, 700_000, 533_000), 28_728);
    }

    #[test]
    fn curve_interpolates_and_clamps() {
        let c = [(1000, 600_000), (2000, 1_000_000)];
        assert_eq!(curve_uv(&c, 500), 600_000);
        assert_eq!(curve_uv(&c, 1500), 800_000);
        assert_eq!(curve_uv(&c, 3000), 1_000_000);
    }

    #[test]
    fn cpu_list_compresses_runs() {
        assert_eq!(cpu_list(&[0, 3, 4, 5]), "0,3-5");
        assert_eq!(cpu_list(&[2, 1]), "1-2");
    }
}
