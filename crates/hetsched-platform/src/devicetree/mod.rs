//! Device-tree import: a board's `.dts` (preprocessed and compiled as the kernel build
//! does) or `.dtb` → the YAML platform model ([`PlatformFile`]) with the provenance of every
//! number.
//!
//! What is read, as the kernel reads it (v6.11):
//! - `/cpus` CPU nodes (`device_type = "cpu"`, not `status = "disabled"`), numbered in
//!   tree order with the boot CPU first (`arch/arm64/kernel/smp.c:
//!   of_parse_and_init_cpus()`; the boot CPU is the first node unless the overlay names it);
//! - `/cpus/cpu-map` (`drivers/base/arch_topology.c: parse_dt_topology()`): sockets,
//!   clusters (the innermost cluster holding cores is the LLC group), cores, threads;
//! - `capacity-dmips-mhz` (`topology_parse_cpu_capacity()`: all CPUs or none, else every
//!   CPU is 1024); capacity itself is derived by [`crate::parse_str`] as
//!   `topology_normalize_cpu_scale()` (v6.8+) does, with `capacity_freq_ref` =
//!   `cpuinfo.max_freq`;
//! - `operating-points-v2` tables (`drivers/opp/of.c`): `opp-hz` (first value),
//!   `opp-microvolt` (1 cell, or 3 = target/min/max: the target), `opp-microwatt`,
//!   `clock-latency-ns` (the maximum is `cpuinfo.transition_latency`), `turbo-mode` (a
//!   boost OPP: above `cpuinfo.max_freq` while boost is off), `opp-suspend` (recorded),
//!   `opp-shared` (one policy for the CPUs sharing the table; otherwise one per CPU);
//!   legacy `operating-points` pairs and the CPU's `clock-latency` (then every CPU is in
//!   one policy, as cpufreq-dt's fallback does);
//! - `performance-domains` (Apple; Qualcomm's `qcom,freq-domain` alike): CPUs with the
//!   same specifier are one policy;
//! - `dynamic-power-coefficient` of the policy's first CPU (`dev_pm_opp_of_register_em()`
//!   reads it from `policy->cpu`);
//! - idle states from `cpu-idle-states`, or the PSCI hierarchy (`power-domains` →
//!   `domain-idle-states`; a parent domain's states are cluster states):
//!   `entry-latency-us`, `exit-latency-us`, `min-residency-us`, `arm,psci-suspend-param`.
//!
//! What a tree does not carry (OPPs that SCPI/SCMI firmware provides, idle-state power, the
//! cpufreq driver) is reported as missing; an overlay YAML ([`Overlay`]) supplies it, and
//! the result's `provenance` says, per number, which tree node or overlay file it came from.
//! Every error is one line naming the node. Nothing here panics on bad input.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::error::{one_line, PlatformError};
use crate::format::{
    ClusterFile, IdleLevelFile, IdleStateFile, OppFile, PerfDomainFile, PlatformFile,
};

mod blob;
mod dtc;
mod overlay;

use blob::{err, Tree};
pub use dtc::{compile_dts, default_includes};
pub use overlay::{read_overlay, Imported, Overlay, OverlayDomain, OverlayIdle};

/// Read `path` (`.dts` compiled with `includes`, else a blob) and import it.
pub fn import_path(
    path: &Path,
    includes: &[PathBuf],
    overlay: Option<(&Overlay, &str)>,
) -> Result<Imported, PlatformError> {
    let origin = path.display().to_string();
    let is_dts = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("dts") || e.eq_ignore_ascii_case("dtsi"));
    let blob = if is_dts {
        compile_dts(path, &default_includes(path, includes))?
    } else {
        std::fs::read(path).map_err(|e| PlatformError::Io {
            path: origin.clone(),
            message: one_line(&e.to_string()),
        })?
    };
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "board".into());
    import_blob(&blob, &origin, &stem, overlay)
}

struct CpuNode {
    node: usize,
    logical: usize,
}

/// One policy being built.
struct Domain {
    cpus: Vec<usize>,
    key: String,
}

/// Import a flattened device tree. `origin` names it in errors and provenance; `stem`
/// becomes the platform's name.
pub fn import_blob(
    blob: &[u8],
    origin: &str,
    stem: &str,
    overlay: Option<(&Overlay, &str)>,
) -> Result<Imported, PlatformError> {
    let t = Tree::parse(blob, origin)?;
    let default_ov = Overlay::default();
    let (ov, ov_origin) = overlay.unwrap_or((&default_ov, ""));
    let mut prov: BTreeMap<String, String> = BTreeMap::new();
    let mut missing: Vec<String> = Vec::new();
    let at = |n: usize, prop: &str| format!("{origin}:{} {prop}", t.path(n));
    let ovp = |key: &str| format!("overlay {ov_origin}: {key}");

    // --- CPUs, numbered as arm64 does ---
    let cpus_node = t
        .find("/cpus")
        .ok_or_else(|| err(origin, "/", "no /cpus node"))?;
    let mut cpu_nodes: Vec<usize> = t.nodes[cpus_node]
        .children
        .iter()
        .copied()
        .filter(|&c| t.string(c, "device_type").as_deref() == Some("cpu") && !t.disabled(c))
        .collect();
    if cpu_nodes.is_empty() {
        return Err(err(origin, "/cpus", "no CPU node (device_type = \"cpu\")"));
    }
    if let Some(boot) = &ov.boot_cpu {
        let i = cpu_nodes
            .iter()
            .position(|&c| &t.nodes[c].name == boot || t.path(c) == boot)
            .ok_or_else(|| {
                err(
                    ov_origin,
                    "boot_cpu",
                    format!("`{boot}` is not a CPU node of /cpus"),
                )
            })?;
        let b = cpu_nodes.remove(i);
        cpu_nodes.insert(0, b);
    }
    let cpus: Vec<CpuNode> = cpu_nodes
        .iter()
        .enumerate()
        .map(|(logical, &node)| CpuNode { node, logical })
        .collect();
    let logical_of = |node: usize| cpus.iter().find(|c| c.node == node).map(|c| c.logical);

    // --- cpu-map: sockets, clusters ---
    let mut clusters: Vec<(String, Vec<usize>, usize)> = Vec::new(); // name, cpus, node
    let mut sockets: BTreeSet<String> = BTreeSet::new();
    let mut seen_cpu: BTreeMap<usize, String> = BTreeMap::new();
    let mut topo_note = None;
    match t.child(cpus_node, "cpu-map") {
        Some(map) => walk_map(
            &t,
            map,
            "",
            origin,
            &logical_of,
            &mut clusters,
            &mut sockets,
            &mut seen_cpu,
        )?,
        None if cpus.iter().all(|c| is_arm32_core(&t, c.node)) => {
            // 32-bit Arm without cpu-map: arch/arm/kernel/topology.c store_cpu_topology()
            // (v6.11) takes the cluster from MPIDR affinity level 1, which `reg` holds.
            for c in &cpus {
                let reg = t.u32(c.node, "reg").ok_or_else(|| {
                    err(origin, t.path(c.node), "CPU node without reg (its MPIDR)")
                })?;
                let aff1 = (reg >> 8) & 0xff;
                let name = format!("cluster{aff1}");
                match clusters.iter_mut().find(|x| x.0 == name) {
                    Some(x) => x.1.push(c.logical),
                    None => clusters.push((name, vec![c.logical], c.node)),
                }
                seen_cpu.insert(c.logical, t.path(c.node).to_string());
            }
            topo_note = Some("No cpu-map: 32-bit Arm cores, so clusters come from MPIDR affinity level 1 in each CPU's reg, as arch/arm/kernel/topology.c store_cpu_topology() (v6.11) does.".to_string());
        }
        None => {
            return Err(err(
                origin,
                "/cpus",
                "no cpu-map node: the kernel (drivers/base/arch_topology.c parse_dt_topology) needs it to know the clusters",
            ))
        }
    }
    for c in &cpus {
        if !seen_cpu.contains_key(&c.logical) {
            return Err(err(
                origin,
                t.path(c.node),
                "this CPU is in no cpu-map cluster",
            ));
        }
    }
    let cluster_of: BTreeMap<usize, usize> = clusters
        .iter()
        .enumerate()
        .flat_map(|(i, (_, cs, _))| cs.iter().map(move |&c| (c, i)))
        .collect();

    // --- perf domains ---
    let any_v1 = cpus.iter().any(|c| t.has(c.node, "operating-points"));
    let mut domains: Vec<Domain> = Vec::new();
    let mut domain_why: Vec<String> = Vec::new();
    for c in &cpus {
        let n = c.node;
        let pd_prop = ["performance-domains", "qcom,freq-domain"]
            .into_iter()
            .find_map(|p| t.cells(n, p).map(|c| (p, c)));
        let key = if let Some((prop, pd)) = pd_prop {
            if let Some(&ph) = pd.first() {
                t.phandle(n, prop, ph, origin)?;
            }
            format!("pd:{pd:?}")
        } else if let Some(ph) = t.u32(n, "operating-points-v2") {
            let table = t.phandle(n, "operating-points-v2", ph, origin)?;
            if t.has(table, "opp-shared") {
                format!("opp:{table}")
            } else {
                format!("cpu:{}", c.logical)
            }
        } else if any_v1 {
            // cpufreq-dt (v6.11, dt_cpufreq_early_init()): without operating-points-v2
            // every CPU shares one policy.
            String::from("v1:all")
        } else {
            // No OPPs in the tree: firmware (SCPI, SPC) provides them per cluster.
            format!(
                "cluster:{}",
                cluster_of.get(&c.logical).copied().unwrap_or(0)
            )
        };
        match domains.iter_mut().find(|d| d.key == key) {
            Some(d) => d.cpus.push(c.logical),
            None => domains.push(Domain {
                cpus: vec![c.logical],
                key,
            }),
        }
    }
    let mut pds: Vec<PerfDomainFile> = Vec::new();
    let mut used_names: BTreeSet<String> = BTreeSet::new();
    let all_dmips = cpus.iter().all(|c| t.has(c.node, "capacity-dmips-mhz"));
    let any_dmips = cpus.iter().any(|c| t.has(c.node, "capacity-dmips-mhz"));
    let mut notes: Vec<String> = topo_note.into_iter().collect();
    if any_dmips && !all_dmips {
        notes.push("Some CPU nodes lack capacity-dmips-mhz: as the kernel does (topology_parse_cpu_capacity(): partial information), every CPU gets 1024.".into());
    }
    let mut idle_states: BTreeMap<String, IdleStateFile> = BTreeMap::new();
    let mut idle_names: BTreeMap<usize, String> = BTreeMap::new();
    for (di, d) in domains.iter().enumerate() {
        let first = cpus[d.cpus[0]].node;
        let cl: BTreeSet<usize> = d
            .cpus
            .iter()
            .filter_map(|c| cluster_of.get(c).copied())
            .collect();
        let mut name = if cl.len() == 1 {
            let ci = *cl.iter().next().unwrap_or(&0);
            if clusters[ci].1 == d.cpus {
                clusters[ci].0.clone()
            } else {
                format!("{}-cpu{}", clusters[ci].0, d.cpus[0])
            }
        } else {
            cl.iter()
                .map(|&i| clusters[i].0.as_str())
                .collect::<Vec<_>>()
                .join("+")
        };
        if !used_names.insert(name.clone()) {
            name = format!("pd{di}");
            used_names.insert(name.clone());
        }
        let pp = |k: &str| format!("perf_domains.{name}.{k}");
        domain_why.push(format!(
            "{name}: CPUs {:?} ({})",
            d.cpus,
            match d.key.split(':').next().unwrap_or("") {
                "pd" => "same performance-domains / qcom,freq-domain",
                "opp" => "operating-points-v2 table with opp-shared",
                "cluster" =>
                    "no OPP table: one policy per cpu-map cluster, as SCPI/SPC firmware drivers do",
                _ => "OPP table not shared: a policy per CPU",
            }
        ));
        let core = t
            .string(first, "compatible")
            .map(|s| s.rsplit(',').next().unwrap_or(&s).to_string())
            .unwrap_or_else(|| "unknown".into());
        prov.insert(pp("core"), at(first, "compatible"));
        // capacity-dmips-mhz: equal within the domain
        let mut dmips = None;
        if all_dmips {
            let v: BTreeSet<u32> = d
                .cpus
                .iter()
                .filter_map(|&c| t.u32(cpus[c].node, "capacity-dmips-mhz"))
                .collect();
            if v.len() > 1 {
                return Err(err(
                    origin,
                    t.path(first),
                    format!("CPUs {:?} share a cpufreq policy but have different capacity-dmips-mhz {v:?}; hetsched models one per perf domain", d.cpus),
                ));
            }
            dmips = v.first().map(|&x| u64::from(x));
            prov.insert(pp("capacity_dmips_mhz"), at(first, "capacity-dmips-mhz"));
        }
        // dynamic-power-coefficient of the policy's first CPU
        let mut dpc = t.u32(first, "dynamic-power-coefficient").map(u64::from);
        if dpc.is_some() {
            prov.insert(
                pp("dynamic_power_coefficient"),
                at(first, "dynamic-power-coefficient"),
            );
        } else {
            missing.push(format!(
                "{}: no dynamic-power-coefficient on {}",
                pp("dynamic_power_coefficient"),
                t.path(first)
            ));
        }
        // OPPs
        let mut opps: Vec<OppFile> = Vec::new();
        let mut latency: Option<u64> = None;
        let mut max_freq: Option<u64> = None;
        if let Some(ph) = t.u32(first, "operating-points-v2") {
            let table = t.phandle(first, "operating-points-v2", ph, origin)?;
            let mut rows: Vec<(u64, OppFile, usize, bool)> = Vec::new();
            for &o in &t.nodes[table].children {
                if t.disabled(o) {
                    continue;
                }
                let hz = t.cells(o, "opp-hz").ok_or_else(|| {
                    err(
                        origin,
                        t.path(o),
                        "OPP without opp-hz (drivers/opp/of.c needs it)",
                    )
                })?;
                if hz.len() < 2 {
                    return Err(err(
                        origin,
                        t.path(o),
                        "opp-hz must be a 64-bit value (/bits/ 64 <…>)",
                    ));
                }
                let khz = ((u64::from(hz[0]) << 32) | u64::from(hz[1])) / 1000;
                let uv = t
                    .cells(o, "opp-microvolt")
                    .and_then(|v| v.first().copied())
                    .filter(|&v| v > 0)
                    .map(u64::from);
                let uw = t.u32(o, "opp-microwatt").map(u64::from);
                if let Some(l) = t.u32(o, "clock-latency-ns") {
                    latency = Some(latency.map_or(u64::from(l), |x: u64| x.max(u64::from(l))));
                }
                let turbo = t.has(o, "turbo-mode");
                rows.push((khz, OppFile { khz, uv, uw }, o, turbo));
            }
            if rows.is_empty() {
                return Err(err(origin, t.path(table), "OPP table with no OPP node"));
            }
            rows.sort_by_key(|r| r.0);
            for (i, (khz, opp, o, turbo)) in rows.iter().enumerate() {
                if i > 0 && rows[i - 1].0 == *khz {
                    return Err(err(origin, t.path(*o), format!("two OPPs at {khz} kHz")));
                }
                let base = format!("perf_domains.{name}.opps[{khz}kHz]");
                prov.insert(format!("{base}.khz"), at(*o, "opp-hz"));
                if opp.uv.is_some() {
                    prov.insert(format!("{base}.uv"), at(*o, "opp-microvolt"));
                }
                if opp.uw.is_some() {
                    prov.insert(format!("{base}.uw"), at(*o, "opp-microwatt"));
                }
                if *turbo {
                    prov.insert(
                        format!("{base}.turbo"),
                        at(
                            *o,
                            "turbo-mode (boost OPP: above cpuinfo.max_freq while boost is off)",
                        ),
                    );
                }
                if t.has(*o, "opp-suspend") {
                    prov.insert(
                        format!("{base}.suspend"),
                        at(
                            *o,
                            "opp-suspend (the OPP used for system suspend; not simulated)",
                        ),
                    );
                }
                opps.push(opp.clone());
            }
            let boost: Vec<u64> = rows.iter().filter(|r| r.3).map(|r| r.0).collect();
            if !boost.is_empty() {
                let top = rows.iter().filter(|r| !r.3).map(|r| r.0).max();
                if let Some(top) = top {
                    if Some(&top) != rows.last().map(|r| &r.0) {
                        max_freq = Some(top);
                        prov.insert(
                            pp("max_freq_khz"),
                            format!(
                                "{origin}:{} highest OPP without turbo-mode (cpufreq boost off)",
                                t.path(table)
                            ),
                        );
                    }
                }
            }
            if latency.is_some() {
                prov.insert(
                    pp("transition_latency_ns"),
                    at(table, "max clock-latency-ns of its OPPs"),
                );
            }
        } else if let Some((first, v)) = d.cpus.iter().find_map(|&c| {
            t.cells(cpus[c].node, "operating-points")
                .map(|v| (cpus[c].node, v))
        }) {
            if v.len() < 2 || v.len() % 2 != 0 {
                return Err(err(
                    origin,
                    t.path(first),
                    "operating-points must be <kHz µV> pairs",
                ));
            }
            let mut rows: Vec<(u64, u64)> = v
                .chunks_exact(2)
                .map(|p| (u64::from(p[0]), u64::from(p[1])))
                .collect();
            rows.sort_unstable();
            for (khz, uv) in rows {
                let base = format!("perf_domains.{name}.opps[{khz}kHz]");
                prov.insert(format!("{base}.khz"), at(first, "operating-points"));
                if uv > 0 {
                    prov.insert(format!("{base}.uv"), at(first, "operating-points"));
                }
                opps.push(OppFile {
                    khz,
                    uv: (uv > 0).then_some(uv), // 0 µV: not given (ux500)
                    uw: None,
                });
            }
            if let Some(l) = t.u32(first, "clock-latency") {
                latency = Some(u64::from(l));
                prov.insert(pp("transition_latency_ns"), at(first, "clock-latency"));
            }
        }
        // overlay
        let od = ov.perf_domains.get(&name);
        if let Some(od) = od {
            if let Some(o) = &od.opps {
                opps = o.clone();
                prov.retain(|k, _| !k.starts_with(&format!("perf_domains.{name}.opps[")));
                prov.insert(pp("opps"), ovp(&format!("perf_domains.{name}.opps")));
            }
            if let Some(l) = od.transition_latency_ns {
                latency = Some(l);
                prov.insert(
                    pp("transition_latency_ns"),
                    ovp(&format!("perf_domains.{name}.transition_latency_ns")),
                );
            }
            if let Some(c) = od.dynamic_power_coefficient {
                dpc = Some(c);
                missing.retain(|m| !m.starts_with(&pp("dynamic_power_coefficient")));
                prov.insert(
                    pp("dynamic_power_coefficient"),
                    ovp(&format!("perf_domains.{name}.dynamic_power_coefficient")),
                );
            }
            if let Some(c) = od.capacity_dmips_mhz {
                dmips = Some(c);
                prov.insert(
                    pp("capacity_dmips_mhz"),
                    ovp(&format!("perf_domains.{name}.capacity_dmips_mhz")),
                );
            }
            if let Some(m) = od.max_freq_khz {
                max_freq = Some(m);
                prov.insert(
                    pp("max_freq_khz"),
                    ovp(&format!("perf_domains.{name}.max_freq_khz")),
                );
            }
            if od.assumed_power.is_some() {
                prov.insert(
                    pp("assumed_power"),
                    ovp(&format!("perf_domains.{name}.assumed_power")),
                );
            }
        }
        if opps.is_empty() {
            missing.push(format!(
                "{}: no OPP table in the tree for {} (firmware-provided, e.g. SCPI) (required)",
                pp("opps"),
                t.path(first)
            ));
        }
        if latency.is_none() {
            missing.push(format!(
                "{}: no clock-latency-ns (required)",
                pp("transition_latency_ns")
            ));
        }
        // idle states
        let mut names: Vec<String> = Vec::new();
        for (state, level, from) in idle_of(&t, first, origin)? {
            let nm = match idle_names.get(&state) {
                Some(n) => n.clone(),
                None => {
                    let mut nm = t.nodes[state].name.clone();
                    let mut k = 1;
                    while idle_states.contains_key(&nm) {
                        nm = format!("{}-{k}", t.nodes[state].name);
                        k += 1;
                    }
                    let get = |p: &str| {
                        t.u32(state, p).map(u64::from).ok_or_else(|| {
                            err(origin, t.path(state), format!("idle state without {p}"))
                        })
                    };
                    let st = IdleStateFile {
                        level,
                        entry_us: get("entry-latency-us")?,
                        exit_us: get("exit-latency-us")?,
                        min_residency_us: get("min-residency-us")?,
                        power_uw: ov.idle_states.get(&nm).map(|o| o.power_uw),
                    };
                    let ip = format!("idle_states.{nm}");
                    prov.insert(
                        format!("{ip}.level"),
                        format!("{origin}:{} {from}", t.path(state)),
                    );
                    for (k, p) in [
                        ("entry_us", "entry-latency-us"),
                        ("exit_us", "exit-latency-us"),
                        ("min_residency_us", "min-residency-us"),
                    ] {
                        prov.insert(format!("{ip}.{k}"), at(state, p));
                    }
                    if let Some(p) = t.u32(state, "arm,psci-suspend-param") {
                        prov.insert(
                            format!("{ip}.psci_suspend_param"),
                            format!(
                                "{origin}:{} arm,psci-suspend-param = {p:#010x}",
                                t.path(state)
                            ),
                        );
                    }
                    if st.power_uw.is_some() {
                        prov.insert(
                            format!("{ip}.power_uw"),
                            ovp(&format!("idle_states.{nm}.power_uw")),
                        );
                    } else {
                        missing.push(format!(
                            "{ip}.power_uw: idle-state power is not in device trees"
                        ));
                    }
                    idle_states.insert(nm.clone(), st);
                    idle_names.insert(state, nm.clone());
                    nm
                }
            };
            if !names.contains(&nm) {
                names.push(nm);
            }
        }
        pds.push(PerfDomainFile {
            name,
            cpus: d.cpus.clone(),
            core,
            capacity_dmips_mhz: dmips,
            work_dmips_mhz: None,
            dynamic_power_coefficient: dpc,
            transition_latency_ns: latency.unwrap_or(0),
            max_freq_khz: max_freq,
            opps,
            idle_states: names,
            assumed_power: od.and_then(|o| o.assumed_power.clone()),
        });
    }
    for k in ov.perf_domains.keys() {
        if !pds.iter().any(|p| &p.name == k) {
            return Err(err(
                ov_origin,
                &format!("perf_domains.{k}"),
                format!(
                    "no imported perf domain of that name (imported: {})",
                    pds.iter()
                        .map(|p| p.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
    }
    for k in ov.idle_states.keys() {
        if !idle_states.contains_key(k) {
            return Err(err(
                ov_origin,
                &format!("idle_states.{k}"),
                "no imported idle state of that name",
            ));
        }
    }
    pds.sort_by_key(|p| p.cpus[0]);
    let model = t
        .find("/")
        .and_then(|r| t.string(r, "model"))
        .unwrap_or_else(|| stem.to_string());
    let mut sources = vec![format!(
        "{origin}: imported by `hetsched platforms import` (cpus, cpu-map, OPPs, capacity-dmips-mhz, dynamic-power-coefficient, idle states); provenance lists each number's node"
    )];
    if sockets.len() > 1 {
        notes.push(format!("cpu-map has {} sockets ({}); hetsched models clusters only (cluster names carry the socket)", sockets.len(), sockets.iter().cloned().collect::<Vec<_>>().join(", ")));
    }
    notes.push(format!("perf domains: {}", domain_why.join("; ")));
    sources.extend(ov.sources.iter().cloned());
    notes.extend(ov.notes.iter().cloned());
    if ov.cpufreq_driver.is_some() {
        prov.insert("cpufreq_driver".into(), ovp("cpufreq_driver"));
    } else if !pds.iter().all(|p| {
        prov.contains_key(&format!(
            "perf_domains.{}.opps[{}kHz].khz",
            p.name,
            p.opps.first().map_or(0, |o| o.khz)
        ))
    }) {
        // firmware OPPs: the driver is not the generic one, and the tree does not say which
        missing.push("cpufreq_driver: the tree has no OPP table, so the driver is firmware's (scpi, vexpress-spc, scmi); default cpufreq-dt".into());
    }
    let apple = cpus.iter().any(|c| t.has(c.node, "performance-domains"))
        && pds.iter().any(|p| domains_key_is_pd(&domains, &p.cpus));
    let cpufreq_driver = ov.cpufreq_driver.or(if apple {
        prov.insert(
            "cpufreq_driver".into(),
            format!("{origin}: performance-domains (apple-soc-cpufreq)"),
        );
        Some(hetsched_core::platform::CpufreqDriver::AppleSoc)
    } else {
        None
    });
    let file = PlatformFile {
        name: ov.name.clone().unwrap_or_else(|| stem.to_string()),
        description: ov.description.clone().unwrap_or(model),
        sources,
        notes,
        cpufreq_driver,
        perf_domains: pds,
        clusters: Some(
            clusters
                .iter()
                .map(|(n, cs, _)| ClusterFile {
                    name: n.clone(),
                    cpus: cs.clone(),
                })
                .collect(),
        ),
        idle_states,
        capacity_override: ov.capacity_override.clone(),
        provenance: prov,
    };
    Ok(Imported { file, missing })
}

fn domains_key_is_pd(domains: &[Domain], cpus: &[usize]) -> bool {
    domains
        .iter()
        .any(|d| d.cpus == cpus && d.key.starts_with("pd:"))
}

#[allow(clippy::too_many_arguments)] // a recursive walk carrying its accumulators
fn walk_map(
    t: &Tree,
    n: usize,
    prefix: &str,
    origin: &str,
    logical_of: &dyn Fn(usize) -> Option<usize>,
    clusters: &mut Vec<(String, Vec<usize>, usize)>,
    sockets: &mut BTreeSet<String>,
    seen: &mut BTreeMap<usize, String>,
) -> Result<(), PlatformError> {
    let mut leaf_cpus: Vec<usize> = Vec::new();
    for &c in &t.nodes[n].children {
        let nm = &t.nodes[c].name;
        if nm.starts_with("socket") {
            sockets.insert(nm.clone());
            walk_map(
                t,
                c,
                &format!("{prefix}{nm}-"),
                origin,
                logical_of,
                clusters,
                sockets,
                seen,
            )?;
        } else if nm.starts_with("cluster") {
            walk_map(
                t,
                c,
                &format!("{prefix}{nm}-"),
                origin,
                logical_of,
                clusters,
                sockets,
                seen,
            )?;
        } else if nm.starts_with("core") {
            let mut leaves = vec![c];
            let threads: Vec<usize> = t.nodes[c]
                .children
                .iter()
                .copied()
                .filter(|&x| t.nodes[x].name.starts_with("thread"))
                .collect();
            if !threads.is_empty() {
                leaves = threads;
            }
            for l in leaves {
                let ph = t
                    .u32(l, "cpu")
                    .ok_or_else(|| err(origin, t.path(l), "cpu-map entry without `cpu = <&…>`"))?;
                let cpu = t.phandle(l, "cpu", ph, origin)?;
                // A disabled CPU is left out, as the kernel does (of_cpu_node_to_id fails).
                if let Some(lc) = logical_of(cpu) {
                    if let Some(prev) = seen.insert(lc, t.path(l).to_string()) {
                        return Err(err(
                            origin,
                            t.path(l),
                            format!("CPU {} is already in cpu-map at {prev}", t.path(cpu)),
                        ));
                    }
                    leaf_cpus.push(lc);
                }
            }
        }
    }
    if !leaf_cpus.is_empty() {
        if prefix.is_empty() {
            return Err(err(
                origin,
                t.path(n),
                "cores directly under cpu-map: they must be in a cluster",
            ));
        }
        leaf_cpus.sort_unstable();
        clusters.push((prefix.trim_end_matches('-').to_string(), leaf_cpus, n));
    }
    Ok(())
}

/// A CPU's idle states, shallowest first, with their level and how it was decided.
fn idle_of(
    t: &Tree,
    cpu: usize,
    origin: &str,
) -> Result<Vec<(usize, IdleLevelFile, String)>, PlatformError> {
    let mut out = Vec::new();
    if let Some(list) = t.cells(cpu, "cpu-idle-states") {
        for ph in list {
            let s = t.phandle(cpu, "cpu-idle-states", ph, origin)?;
            let (level, why) = flat_level(t, s);
            out.push((s, level, why));
        }
        return Ok(out);
    }
    // PSCI hierarchy: the CPU's power domain, then its parents.
    let mut pd = t.u32(cpu, "power-domains").map(|ph| (ph, cpu));
    let mut depth = 0;
    while let Some((ph, from)) = pd {
        let dom = t.phandle(from, "power-domains", ph, origin)?;
        if let Some(states) = t.cells(dom, "domain-idle-states") {
            for sph in states {
                let s = t.phandle(dom, "domain-idle-states", sph, origin)?;
                let (level, why) = if depth == 0 {
                    (
                        IdleLevelFile::Cpu,
                        format!("in the CPU's PSCI domain {}", t.path(dom)),
                    )
                } else {
                    (
                        IdleLevelFile::Cluster,
                        format!("in parent PSCI domain {}", t.path(dom)),
                    )
                };
                out.push((s, level, why));
            }
        }
        depth += 1;
        if depth > 8 {
            break;
        }
        pd = t.u32(dom, "power-domains").map(|ph| (ph, dom));
    }
    Ok(out)
}

/// The level of a flat `cpu-idle-states` entry: PSCI's original power-state format has
/// the power level in bits 25:24 (0 = core), else the node name says `cluster`.
fn flat_level(t: &Tree, s: usize) -> (IdleLevelFile, String) {
    if let Some(p) = t.u32(s, "arm,psci-suspend-param") {
        let lvl = (p >> 24) & 3;
        let l = if lvl > 0 {
            IdleLevelFile::Cluster
        } else {
            IdleLevelFile::Cpu
        };
        return (
            l,
            format!("arm,psci-suspend-param power level {lvl} (bits 25:24)"),
        );
    }
    if t.nodes[s].name.contains("cluster") {
        (
            IdleLevelFile::Cluster,
            "node name contains `cluster`".into(),
        )
    } else {
        (
            IdleLevelFile::Cpu,
            "node name (no psci-suspend-param)".into(),
        )
    }
}

/// Whether a CPU node is a 32-bit-only Arm core (`arm,cortex-a5/7/8/9/12/15/17`).
fn is_arm32_core(t: &Tree, n: usize) -> bool {
    t.string(n, "compatible").is_some_and(|c| {
        matches!(
            c.as_str(),
            "arm,cortex-a5"
                | "arm,cortex-a7"
                | "arm,cortex-a8"
                | "arm,cortex-a9"
                | "arm,cortex-a12"
                | "arm,cortex-a15"
                | "arm,cortex-a17"
        )
    })
}

/// Whether a platform argument names a device tree (`.dts`, `.dtb`).
pub fn is_device_tree(name: &str) -> bool {
    let l = name.to_ascii_lowercase();
    l.ends_with(".dts") || l.ends_with(".dtb")
}

/// Render an imported platform as YAML (the `-o` file), with a header saying where it
/// came from and what is missing.
pub fn to_yaml(imp: &Imported) -> Result<String, PlatformError> {
    let body = serde_yaml::to_string(&imp.file).map_err(|e| PlatformError::Io {
        path: imp.file.name.clone(),
        message: one_line(&e.to_string()),
    })?;
    let mut s = String::from("# Imported by `hetsched platforms import`; `provenance` names each number's tree node or overlay.\n");
    for m in &imp.missing {
        s.push_str(&format!("# missing: {m}\n"));
    }
    s.push_str(&body);
    Ok(s)
}
