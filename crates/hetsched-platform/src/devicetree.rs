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
use std::process::Command;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::{one_line, PlatformError, SourcePos};
use crate::format::{
    AssumedPowerFile, ClusterFile, IdleLevelFile, IdleStateFile, OppFile, PerfDomainFile,
    PlatformFile,
};

/// A node of the flattened tree, with its full path.
#[derive(Debug, Clone)]
struct Node {
    path: String,
    name: String,
    props: Vec<(String, Vec<u8>)>,
    children: Vec<usize>,
}

/// The whole tree, read once from the blob into an arena.
#[derive(Debug)]
struct Tree {
    nodes: Vec<Node>,
    phandles: BTreeMap<u32, usize>,
}

fn err(origin: &str, node: &str, message: impl Into<String>) -> PlatformError {
    PlatformError::Invalid {
        at: SourcePos {
            origin: origin.to_string(),
            line_column: None,
        },
        message: one_line(&format!("{node}: {}", message.into())),
    }
}

impl Tree {
    fn parse(blob: &[u8], origin: &str) -> Result<Tree, PlatformError> {
        // The fdt crate indexes the blob without bounds checks in places (a corrupt blob
        // panics it), so the structure is checked first.
        check_blob(blob).map_err(|m| {
            err(
                origin,
                "/",
                format!("not a valid flattened device tree: {m}"),
            )
        })?;
        let fdt = fdt::Fdt::new(blob)
            .map_err(|e| err(origin, "/", format!("not a flattened device tree: {e:?}")))?;
        let root = fdt
            .find_node("/")
            .ok_or_else(|| err(origin, "/", "the tree has no root node"))?;
        let mut tree = Tree {
            nodes: Vec::new(),
            phandles: BTreeMap::new(),
        };
        tree.add(root, String::from("/"), 0);
        Ok(tree)
    }

    fn add(&mut self, n: fdt::node::FdtNode<'_, '_>, path: String, depth: usize) -> usize {
        let id = self.nodes.len();
        let props: Vec<(String, Vec<u8>)> = n
            .properties()
            .map(|p| (p.name.to_string(), p.value.to_vec()))
            .collect();
        for (k, v) in &props {
            if (k == "phandle" || k == "linux,phandle") && v.len() == 4 {
                self.phandles
                    .insert(u32::from_be_bytes([v[0], v[1], v[2], v[3]]), id);
            }
        }
        self.nodes.push(Node {
            path: path.clone(),
            name: if depth == 0 {
                String::from("/")
            } else {
                n.name.to_string()
            },
            props,
            children: Vec::new(),
        });
        if depth < 64 {
            for c in n.children() {
                let cp = if path == "/" {
                    format!("/{}", c.name)
                } else {
                    format!("{path}/{}", c.name)
                };
                let cid = self.add(c, cp, depth + 1);
                self.nodes[id].children.push(cid);
            }
        }
        id
    }

    fn prop(&self, n: usize, name: &str) -> Option<&[u8]> {
        self.nodes[n]
            .props
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_slice())
    }

    fn has(&self, n: usize, name: &str) -> bool {
        self.prop(n, name).is_some()
    }

    fn cells(&self, n: usize, name: &str) -> Option<Vec<u32>> {
        self.prop(n, name).map(|v| {
            v.chunks_exact(4)
                .map(|c| u32::from_be_bytes([c[0], c[1], c[2], c[3]]))
                .collect()
        })
    }

    fn u32(&self, n: usize, name: &str) -> Option<u32> {
        self.cells(n, name).and_then(|c| c.first().copied())
    }

    fn string(&self, n: usize, name: &str) -> Option<String> {
        self.prop(n, name).map(|v| {
            let first = v.split(|&b| b == 0).next().unwrap_or(&[]);
            String::from_utf8_lossy(first).into_owned()
        })
    }

    fn child(&self, n: usize, name: &str) -> Option<usize> {
        self.nodes[n]
            .children
            .iter()
            .copied()
            .find(|&c| self.nodes[c].name == name)
    }

    fn find(&self, path: &str) -> Option<usize> {
        self.nodes.iter().position(|n| n.path == path)
    }

    fn path(&self, n: usize) -> &str {
        &self.nodes[n].path
    }

    fn disabled(&self, n: usize) -> bool {
        self.string(n, "status")
            .is_some_and(|s| s != "okay" && s != "ok")
    }

    /// Follow a phandle, or say which node points to nowhere.
    fn phandle(
        &self,
        from: usize,
        prop: &str,
        ph: u32,
        origin: &str,
    ) -> Result<usize, PlatformError> {
        self.phandles.get(&ph).copied().ok_or_else(|| {
            err(
                origin,
                self.path(from),
                format!(
                    "`{prop}` refers to phandle {ph:#x}, which no node has (a phandle to nowhere)"
                ),
            )
        })
    }
}

fn be32(b: &[u8], at: usize) -> Option<u32> {
    b.get(at..at.checked_add(4)?)
        .map(|x| u32::from_be_bytes([x[0], x[1], x[2], x[3]]))
}

/// Check a flattened device tree's header and walk its structure block (devicetree
/// specification v0.4, chapter 5): every offset in bounds, names and property names
/// NUL-terminated UTF-8, nodes balanced, ending in FDT_END.
fn check_blob(b: &[u8]) -> Result<(), String> {
    let h = |i: usize| be32(b, i * 4).map(|v| v as usize).ok_or("truncated header");
    if h(0)? != 0xd00d_feed {
        return Err("bad magic".into());
    }
    let total = h(1)?;
    let (off_struct, off_strings, version) = (h(2)?, h(3)?, h(5)?);
    let (size_strings, size_struct) = (h(8)?, h(9)?);
    if total > b.len() || version < 17 {
        return Err(format!(
            "total size {total} > {} bytes, or version {version} < 17",
            b.len()
        ));
    }
    let end_struct = off_struct.checked_add(size_struct).filter(|&e| e <= total);
    let end_strings = off_strings
        .checked_add(size_strings)
        .filter(|&e| e <= total);
    let (Some(end_struct), Some(end_strings)) = (end_struct, end_strings) else {
        return Err("a block lies outside the blob".into());
    };
    let strings = &b[off_strings..end_strings];
    let cstr = |bytes: &[u8]| -> Option<usize> {
        let n = bytes.iter().position(|&c| c == 0)?;
        std::str::from_utf8(&bytes[..n]).ok().map(|_| n)
    };
    let mut at = off_struct;
    // per open node: whether a child node has been seen (the fdt crate panics on a
    // property after a child, which the format forbids, and on FDT_NOP between them)
    let mut open: Vec<bool> = Vec::new();
    let pad = |x: usize| x.checked_add(3).map(|y| y & !3);
    loop {
        let tok = be32(&b[..end_struct], at).ok_or("structure block ends without FDT_END")?;
        at += 4;
        match tok {
            1 => {
                let n = cstr(&b[at..end_struct]).ok_or("bad node name")?;
                at = pad(at + n + 1).ok_or("overflow")?;
                if let Some(seen_child) = open.last_mut() {
                    *seen_child = true;
                }
                open.push(false);
            }
            2 => {
                open.pop().ok_or("unbalanced FDT_END_NODE")?;
            }
            3 if open.last() == Some(&true) => {
                return Err(format!(
                    "a property after a child node at offset {} (properties come first)",
                    at - 4
                ))
            }
            3 => {
                let len = be32(&b[..end_struct], at).ok_or("truncated property")? as usize;
                let nameoff = be32(&b[..end_struct], at + 4).ok_or("truncated property")? as usize;
                strings
                    .get(nameoff..)
                    .and_then(cstr)
                    .ok_or("bad property name offset")?;
                let end = (at + 8).checked_add(len).filter(|&e| e <= end_struct);
                at = pad(end.ok_or("property value outside the structure block")?)
                    .ok_or("overflow")?;
            }
            4 => {
                return Err(format!(
                    "FDT_NOP at offset {} (not supported; dtc does not write it)",
                    at - 4
                ))
            }
            9 if open.is_empty() => return Ok(()),
            _ => return Err(format!("bad token {tok:#x} at offset {}", at - 4)),
        }
        if at > end_struct {
            return Err("structure block overrun".into());
        }
    }
}

/// What a user adds to an imported tree: numbers the tree lacks (firmware OPPs, transition
/// latency, idle-state power, the cpufreq driver) or corrections. Unknown keys are rejected.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Overlay {
    /// Replaces the imported name.
    #[serde(default)]
    pub name: Option<String>,
    /// Replaces the imported description.
    #[serde(default)]
    pub description: Option<String>,
    /// The boot CPU (a `/cpus` child's node name, e.g. `cpu@100`): it becomes logical CPU 0
    /// and the others follow in tree order, as arm64 numbers them. Default: the first node.
    #[serde(default)]
    pub boot_cpu: Option<String>,
    /// The cpufreq driver (`scpi`, `vexpress-spc`, …); the tree does not say.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub cpufreq_driver: Option<hetsched_core::platform::CpufreqDriver>,
    /// Extra sources and notes, appended.
    #[serde(default)]
    pub sources: Vec<String>,
    /// Notes, appended.
    #[serde(default)]
    pub notes: Vec<String>,
    /// Per imported perf-domain name: the keys to set.
    #[serde(default)]
    pub perf_domains: BTreeMap<String, OverlayDomain>,
    /// Per imported idle-state name: its power.
    #[serde(default)]
    pub idle_states: BTreeMap<String, OverlayIdle>,
    /// As in the platform format.
    #[serde(default)]
    pub capacity_override: Option<Vec<u64>>,
}

/// The keys an overlay may set on one perf domain.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OverlayDomain {
    /// OPP table (replaces the tree's).
    #[serde(default)]
    pub opps: Option<Vec<OppFile>>,
    /// `cpuinfo.transition_latency` in ns.
    #[serde(default)]
    pub transition_latency_ns: Option<u64>,
    /// `dynamic-power-coefficient`.
    #[serde(default)]
    pub dynamic_power_coefficient: Option<u64>,
    /// `capacity-dmips-mhz`.
    #[serde(default)]
    pub capacity_dmips_mhz: Option<u64>,
    /// `cpuinfo.max_freq` cap.
    #[serde(default)]
    pub max_freq_khz: Option<u64>,
    /// An assumed power model (see the platform format).
    #[serde(default)]
    pub assumed_power: Option<AssumedPowerFile>,
}

/// The keys an overlay may set on one idle state.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OverlayIdle {
    /// Power in µW while in the state.
    pub power_uw: u64,
}

/// An imported platform: the model, and what the tree lacked that no overlay supplied.
#[derive(Debug, Clone)]
pub struct Imported {
    /// The platform file, with `provenance` filled in.
    pub file: PlatformFile,
    /// Numbers the tree lacks, one line each (`perf_domains.cluster0.opps: no OPP table
    /// (firmware-provided?)`). Those that the format requires make [`Imported::check`] fail.
    pub missing: Vec<String>,
}

impl Imported {
    /// Fail with one line listing the required numbers that neither tree nor overlay gave.
    pub fn check(&self, origin: &str) -> Result<(), PlatformError> {
        let required: Vec<&String> = self
            .missing
            .iter()
            .filter(|m| m.contains("(required)"))
            .collect();
        if required.is_empty() {
            return Ok(());
        }
        Err(PlatformError::Invalid {
            at: SourcePos {
                origin: origin.to_string(),
                line_column: None,
            },
            message: one_line(&format!(
                "the tree lacks {}; supply them with an overlay (hetsched platforms import {origin} --overlay extra.yaml, docs/platform-format.md \"Device trees\")",
                required.iter().map(|s| s.replace(" (required)", "")).collect::<Vec<_>>().join("; ")
            )),
        })
    }
}

/// Directories to search for `#include`s and `/include/`s of `dts`: the extra ones given,
/// the file's own directory, and, inside a kernel source tree, `scripts/dtc/include-prefixes`
/// and `include` (found by walking up from the file).
pub fn default_includes(dts: &Path, extra: &[PathBuf]) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = extra.to_vec();
    let dir = dts.parent().map(Path::to_path_buf).unwrap_or_default();
    let dir = if dir.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        dir
    };
    dirs.push(dir.clone());
    let mut anc = Some(dir.as_path());
    while let Some(a) = anc {
        let prefixes = a.join("scripts/dtc/include-prefixes");
        if prefixes.is_dir() {
            dirs.push(prefixes);
            dirs.push(a.join("include"));
            break;
        }
        anc = a.parent();
    }
    dirs
}

/// Compile a `.dts` to a blob as the kernel build does (scripts/Makefile.lib, v6.11):
/// `cpp -nostdinc -I<dirs> -undef -D__DTS__ -x assembler-with-cpp`, then
/// `dtc -O dtb -b 0 -i <dirs>`.
pub fn compile_dts(dts: &Path, includes: &[PathBuf]) -> Result<Vec<u8>, PlatformError> {
    let origin = dts.display().to_string();
    let io = |m: String| PlatformError::Io {
        path: origin.clone(),
        message: one_line(&m),
    };
    if !dts.is_file() {
        return Err(io("no such file".into()));
    }
    let mut cpp = Command::new("cpp");
    cpp.arg("-nostdinc");
    for d in includes {
        cpp.arg("-I").arg(d);
    }
    // Line markers kept: dtc reads them, so its errors name the source file and line.
    cpp.args(["-undef", "-D__DTS__", "-x", "assembler-with-cpp"]);
    cpp.arg(dts);
    let pre = cpp.output().map_err(|e| {
        io(format!(
            "cannot run cpp ({e}): install it (Debian: apt-get install cpp) or give a .dtb"
        ))
    })?;
    if !pre.status.success() {
        return Err(io(format!(
            "cpp failed: {}",
            first_line(&String::from_utf8_lossy(&pre.stderr))
        )));
    }
    let mut dtc = Command::new("dtc");
    dtc.args(["-q", "-I", "dts", "-O", "dtb", "-b", "0"]);
    for d in includes {
        dtc.arg("-i").arg(d);
    }
    dtc.arg("-");
    dtc.stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = dtc.spawn().map_err(|e| {
        io(format!(
            "cannot run dtc ({e}): install it (Debian: apt-get install device-tree-compiler) or give a .dtb"
        ))
    })?;
    let input = pre.stdout;
    let mut stdin = child.stdin.take();
    let writer = std::thread::spawn(move || {
        use std::io::Write as _;
        if let Some(s) = stdin.as_mut() {
            let _ = s.write_all(&input);
        }
        drop(stdin);
    });
    let out = child
        .wait_with_output()
        .map_err(|e| io(format!("dtc failed: {e}")))?;
    let _ = writer.join();
    if !out.status.success() {
        return Err(io(format!(
            "dtc failed: {}",
            first_line(&String::from_utf8_lossy(&out.stderr))
        )));
    }
    Ok(out.stdout)
}

fn first_line(s: &str) -> String {
    s.lines()
        .find(|l| l.contains("rror"))
        .or_else(|| s.lines().next())
        .unwrap_or("")
        .trim()
        .to_string()
}

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

/// Read an overlay YAML file.
pub fn read_overlay(path: &Path) -> Result<Overlay, PlatformError> {
    let origin = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| PlatformError::Io {
        path: origin.clone(),
        message: one_line(&e.to_string()),
    })?;
    crate::error::check_yaml_depth(&text, &origin)?;
    serde_yaml::from_str(&text).map_err(|e| crate::error::from_yaml(&origin, &e))
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
