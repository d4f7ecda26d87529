//! Device-tree import: hand-written fixtures (tests/dt/, good trees and each malformed
//! case), then the kernel's own trees of real boards (Debian linux-source, fetched once
//! into .cache/linux-dts/ by tools/linux-dts.sh) compared with the presets.

use std::path::{Path, PathBuf};
use std::process::Command;

use hetsched_platform::devicetree::{self, Overlay};
use hetsched_platform::{load_imported, load_preset, Platform};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/dt")
        .join(name)
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// dtc and cpp are needed to compile a .dts; tools/linux-dts.sh installs them.
fn have_dtc() -> bool {
    let ok = |c: &str| {
        Command::new(c)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if ok("dtc") && ok("cpp") {
        return true;
    }
    let _ = Command::new("bash")
        .arg(repo().join("tools/linux-dts.sh"))
        .output();
    ok("dtc") && ok("cpp")
}

fn import(name: &str) -> Result<Platform, String> {
    let p = fixture(name);
    let imp = devicetree::import_path(&p, &[], None).map_err(|e| e.to_string())?;
    imp.check(&p.display().to_string())
        .map_err(|e| e.to_string())?;
    load_imported(&imp, name).map_err(|e| e.to_string())
}

#[test]
fn good_tree_gives_the_kernel_view() {
    if !have_dtc() {
        eprintln!("skipped: dtc/cpp missing and not installable (tools/linux-dts.sh)");
        return;
    }
    let p = import("good.dts").expect("good.dts imports");
    // 512 × 1000 MHz (the turbo 1.2 GHz OPP is boost) vs 1024 × 2000 MHz: 256.
    let caps: Vec<u64> = p.cpus.iter().map(|c| c.capacity).collect();
    assert_eq!(caps, [256, 256, 1024, 1024]);
    assert_eq!(p.perf_domains.len(), 2);
    let little = &p.perf_domains[0];
    assert_eq!(little.cpus, [0, 1]);
    assert_eq!(little.max_freq_khz, 1_000_000);
    assert_eq!(little.opps.len(), 3);
    assert_eq!(little.transition_latency_ns, 60_000); // the largest clock-latency-ns
    assert_eq!(little.dynamic_power_coefficient, Some(100)); // policy->cpu's (cpu@0)
                                                             // floor(100 × 800² × 500 / 1e6) = 32000 µW
    assert_eq!(little.opps[0].power_uw, Some(32_000));
    let big = &p.perf_domains[1];
    // 3-cell opp-microvolt: the target; sorted by frequency; the disabled OPP left out
    let v: Vec<(u64, Option<u64>)> = big.opps.iter().map(|o| (o.freq_khz, o.microvolt)).collect();
    assert_eq!(
        v,
        [(1_000_000, Some(900_000)), (2_000_000, Some(1_100_000))]
    );
    assert_eq!(p.clusters.len(), 2);
    let idle: Vec<(&str, u64, u64, u64)> = p.cpus[0]
        .idle_states
        .iter()
        .map(|s| {
            (
                s.name.as_str(),
                s.entry_latency_us,
                s.exit_latency_us,
                s.min_residency_us,
            )
        })
        .collect();
    assert_eq!(
        idle,
        [
            ("cpu-sleep", 40, 100, 150),
            ("cluster-sleep", 500, 1000, 2500)
        ]
    );
    assert_eq!(p.cpus[2].idle_states.len(), 1);
    // provenance is printed by `platforms show`
    let shown = hetsched_platform::describe(&p);
    assert!(
        shown.contains("provenance: perf_domains.cluster1.opps[2000000kHz].uv ←"),
        "{shown}"
    );
    assert!(
        shown.contains("/opp-table-1/opp-2000 opp-microvolt"),
        "{shown}"
    );
    assert!(shown.contains("opp-table-0/opp-500 opp-suspend"), "{shown}");
}

#[test]
fn dtb_reads_the_same_as_dts() {
    if !have_dtc() {
        eprintln!("skipped: dtc/cpp missing");
        return;
    }
    let src = fixture("good.dts");
    let blob =
        devicetree::compile_dts(&src, &devicetree::default_includes(&src, &[])).expect("compiles");
    let dir = std::env::temp_dir().join(format!("hetsched-dt-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let dtb = dir.join("good.dtb");
    std::fs::write(&dtb, &blob).expect("write dtb");
    let a = devicetree::import_path(&src, &[], None).expect("dts");
    let b = devicetree::import_path(&dtb, &[], None).expect("dtb");
    assert_eq!(a.file.perf_domains, b.file.perf_domains);
    assert_eq!(a.file.idle_states, b.file.idle_states);
    // --platform board.dtb loads directly
    let p = hetsched_platform::load(&dtb.display().to_string()).expect("load dtb");
    assert_eq!(p.cpus.len(), 4);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn performance_domains_sockets_and_psci_hierarchy() {
    if !have_dtc() {
        eprintln!("skipped: dtc/cpp missing");
        return;
    }
    let p = import("apple.dts").expect("apple.dts imports");
    assert_eq!(
        p.perf_domains.len(),
        2,
        "performance-domains group the CPUs"
    );
    assert_eq!(p.perf_domains[0].cpus, [0, 1]);
    // 714 × 972 MHz vs 1024 × 3228 MHz
    assert_eq!(
        p.cpus[0].capacity,
        ((714 * 972_000u64) << 10) / (1024 * 3_228_000)
    );
    assert_eq!(p.perf_domains[0].transition_latency_ns, 22_000);
    assert_eq!(
        p.cpufreq_driver,
        hetsched_core::platform::CpufreqDriver::AppleSoc
    );
    assert_eq!(p.clusters[0].name, "socket0-cluster0");
    let lv: Vec<_> = p.cpus[0].idle_states.iter().map(|s| s.level).collect();
    assert_eq!(
        lv,
        [
            hetsched_core::platform::IdleLevel::Cpu,
            hetsched_core::platform::IdleLevel::Cluster
        ]
    );
    assert!(p.cpus[2].idle_states.is_empty());
}

#[test]
fn legacy_operating_points_and_mpidr_clusters() {
    if !have_dtc() {
        eprintln!("skipped: dtc/cpp missing");
        return;
    }
    let p = import("legacy.dts").expect("legacy.dts imports");
    assert_eq!(p.cpus.len(), 3, "the disabled CPU is left out");
    let cl: Vec<&[usize]> = p.clusters.iter().map(|c| c.cpus.as_slice()).collect();
    assert_eq!(cl, [&[0, 1][..], &[2][..]]);
    assert_eq!(p.perf_domains.len(), 1);
    assert_eq!(p.perf_domains[0].cpus, [0, 1, 2]);
    let v: Vec<(u64, Option<u64>)> = p.perf_domains[0]
        .opps
        .iter()
        .map(|o| (o.freq_khz, o.microvolt))
        .collect();
    assert_eq!(v, [(400_000, None), (800_000, Some(1_100_000))]);
    assert_eq!(p.perf_domains[0].transition_latency_ns, 61_036);
}

#[test]
fn malformed_trees_get_one_line_naming_the_node() {
    if !have_dtc() {
        eprintln!("skipped: dtc/cpp missing");
        return;
    }
    for (file, node, what) in [
        ("no-cpu-map.dts", "/cpus:", "no cpu-map"),
        ("opp-no-hz.dts", "/opp-table-0/opp-500:", "without opp-hz"),
        ("bad-phandle.dts", "/cpus/cpu@200:", "phandle 0x4242"),
    ] {
        let e = import(file).expect_err(file);
        assert!(!e.contains('\n'), "{file}: one line: {e}");
        assert!(e.contains(node) && e.contains(what), "{file}: {e}");
    }
    // not a tree at all, and a missing file
    let e = devicetree::import_blob(b"not a dtb", "x.dtb", "x", None).expect_err("garbage");
    assert!(
        e.to_string()
            .starts_with("x.dtb: /: not a valid flattened device tree: bad magic"),
        "{e}"
    );
    let e = hetsched_platform::load("no/such/board.dts").expect_err("missing");
    assert!(e.to_string().contains("no such file"), "{e}");
}

#[test]
fn corrupt_blobs_are_errors_not_panics() {
    if !have_dtc() {
        eprintln!("skipped: dtc/cpp missing");
        return;
    }
    let src = fixture("good.dts");
    let blob =
        devicetree::compile_dts(&src, &devicetree::default_includes(&src, &[])).expect("compiles");
    // every truncation, and 2000 copies with 1–4 bytes overwritten (a fixed LCG)
    let mut cases: Vec<Vec<u8>> = (0..blob.len()).map(|n| blob[..n].to_vec()).collect();
    let mut x: u64 = 20_261_126;
    let mut next = || {
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (x >> 33) as usize
    };
    for _ in 0..2000 {
        let mut b = blob.clone();
        for _ in 0..=next() % 4 {
            let i = next() % b.len();
            b[i] = next() as u8;
        }
        cases.push(b);
    }
    for c in &cases {
        if let Err(e) = devicetree::import_blob(c, "x.dtb", "x", None) {
            assert!(!e.to_string().contains('\n'));
        }
    }
}

#[test]
fn overlay_supplies_and_is_recorded() {
    if !have_dtc() {
        eprintln!("skipped: dtc/cpp missing");
        return;
    }
    let ov: Overlay = serde_yaml::from_str(
        "boot_cpu: cpu@200\nidle_states: {cpu-sleep: {power_uw: 5}}\nperf_domains: {cluster1: {transition_latency_ns: 7}}\n",
    )
    .expect("overlay");
    let src = fixture("good.dts");
    let imp = devicetree::import_path(&src, &[], Some((&ov, "ov.yaml"))).expect("import");
    let p = load_imported(&imp, "good.dts").expect("load");
    // the boot CPU is logical 0, the others follow in tree order
    assert_eq!(p.cpus[0].core, "cortex-a78");
    assert_eq!(p.cpus[1].core, "cortex-a55");
    let big = p
        .perf_domains
        .iter()
        .find(|d| d.cpus.contains(&0))
        .expect("pd");
    assert_eq!(big.transition_latency_ns, 7);
    assert_eq!(
        imp.file.provenance["perf_domains.cluster1.transition_latency_ns"],
        "overlay ov.yaml: perf_domains.cluster1.transition_latency_ns"
    );
    assert_eq!(p.cpus[0].idle_states[0].power_uw, Some(5));
    // an overlay key that names nothing imported is an error
    let bad: Overlay =
        serde_yaml::from_str("perf_domains: {nope: {transition_latency_ns: 1}}").expect("overlay");
    let e = devicetree::import_path(&src, &[], Some((&bad, "ov.yaml"))).expect_err("unknown");
    assert!(e.to_string().contains("perf_domains.nope"), "{e}");
}

// ---- Real boards: the kernel's own trees, compared with the presets ----

/// The unpacked kernel tree, fetched on first use; `None` (the tests skip, saying why) only
/// when it cannot be downloaded.
fn linux_tree() -> Option<PathBuf> {
    let out = Command::new("bash")
        .arg(repo().join("tools/linux-dts.sh"))
        .output()
        .ok()?;
    let root = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    if root.join("ok").is_file() {
        Some(root)
    } else {
        eprintln!(
            "skipped: the kernel's device trees could not be fetched: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
        None
    }
}

fn import_board(root: &Path, rel: &str, overlay: Option<&str>) -> Platform {
    let path = root.join(rel);
    let ov = overlay.map(|o| devicetree::read_overlay(&repo().join(o)).expect("overlay"));
    let imp = devicetree::import_path(&path, &[], ov.as_ref().map(|o| (o, "overlay")))
        .unwrap_or_else(|e| panic!("{rel}: {e}"));
    imp.check(rel).unwrap_or_else(|e| panic!("{e}"));
    load_imported(&imp, rel).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// The numbers a preset and an import must share: per CPU (core, dmips, capacity,
/// cluster members, idle states) and per perf domain (CPUs, OPPs, power, latency).
fn numbers(p: &Platform) -> String {
    let mut s = String::new();
    for c in &p.cpus {
        let idle: Vec<_> = c
            .idle_states
            .iter()
            .map(|i| {
                (
                    i.level,
                    i.entry_latency_us,
                    i.exit_latency_us,
                    i.min_residency_us,
                )
            })
            .collect();
        s.push_str(&format!(
            "cpu{} {} dmips {} cap {} cluster {:?} idle {:?}\n",
            c.id, c.core, c.capacity_dmips_mhz, c.capacity, p.clusters[c.cluster].cpus, idle
        ));
    }
    for d in &p.perf_domains {
        s.push_str(&format!(
            "pd {:?} max {} lat {} dpc {:?} {:?}\n",
            d.cpus,
            d.max_freq_khz,
            d.transition_latency_ns,
            d.dynamic_power_coefficient,
            d.power_source
        ));
        for o in &d.opps {
            s.push_str(&format!(
                "  {} {:?} {:?}\n",
                o.freq_khz, o.microvolt, o.power_uw
            ));
        }
    }
    s
}

#[test]
fn real_boards_match_the_presets() {
    let Some(root) = linux_tree() else { return };
    // (tree, overlay, preset): imports whose numbers the presets must equal exactly
    for (rel, ov, preset) in [
        (
            "arch/arm64/boot/dts/arm/juno.dts",
            Some("presets/overlays/juno_r0.yaml"),
            "juno_r0",
        ),
        (
            "arch/arm64/boot/dts/hisilicon/hi3660-hikey960.dts",
            None,
            "hikey960",
        ),
        (
            "arch/arm64/boot/dts/hisilicon/hi6220-hikey.dts",
            None,
            "hikey620",
        ),
        (
            "arch/arm64/boot/dts/rockchip/rk3399-firefly.dts",
            None,
            "rk3399",
        ),
        (
            "arch/arm/boot/dts/arm/vexpress-v2p-ca15_a7.dts",
            Some("presets/overlays/tc2.yaml"),
            "tc2",
        ),
    ] {
        let a = import_board(&root, rel, ov);
        let b = load_preset(preset).expect("preset");
        assert_eq!(numbers(&a), numbers(&b), "{rel} against preset {preset}");
    }
}

#[test]
fn real_boards_with_hand_written_preset_numbers() {
    let Some(root) = linux_tree() else { return };
    // exynos5800-peach-pi: the tree's tables and capacities; the preset adds assumed power
    // and seed 004's 1.8 GHz cap on the A15, so compare what the tree gives.
    let a = import_board(
        &root,
        "arch/arm/boot/dts/samsung/exynos5800-peach-pi.dts",
        None,
    );
    let b = load_preset("exynos5800").expect("preset");
    for (x, y) in a.perf_domains.iter().zip(&b.perf_domains) {
        assert_eq!(x.cpus, y.cpus);
        assert_eq!(x.transition_latency_ns, y.transition_latency_ns);
        let fx: Vec<_> = x.opps.iter().map(|o| (o.freq_khz, o.microvolt)).collect();
        let fy: Vec<_> = y.opps.iter().map(|o| (o.freq_khz, o.microvolt)).collect();
        assert_eq!(fx, fy, "exynos5800 OPPs of CPUs {:?}", x.cpus);
    }
    // Peach Pi deletes the A7's 1.4 GHz OPP: the A7's cpuinfo.max_freq is 1.3 GHz.
    assert_eq!(a.perf_domains[1].max_freq_khz, 1_300_000);
    assert_eq!(a.cpus[4].capacity_dmips_mhz, 539);
    assert_eq!(
        a.cpus[4].capacity,
        ((539 * 1_300_000u64) << 10) / (1024 * 2_000_000)
    );

    // Apple t6000 (M1 Pro 10-core, MacBook Pro 14"): the m1pro preset is the 8-core bin
    // (2 E + 3 + 3 P), so compare per-core-type numbers: dmips, OPP frequencies, latency.
    let a = import_board(&root, "arch/arm64/boot/dts/apple/t6000-j314s.dts", None);
    let b = load_preset("m1pro").expect("preset");
    assert_eq!(a.cpus.len(), 10);
    assert_eq!(a.perf_domains.len(), 3);
    assert_eq!(
        a.cpufreq_driver,
        hetsched_core::platform::CpufreqDriver::AppleSoc
    );
    for core in ["icestorm", "firestorm"] {
        let x = a
            .perf_domains
            .iter()
            .find(|d| a.cpus[d.cpus[0]].core == core)
            .expect(core);
        let y = b
            .perf_domains
            .iter()
            .find(|d| b.cpus[d.cpus[0]].core == core)
            .expect(core);
        let fx: Vec<_> = x.opps.iter().map(|o| o.freq_khz).collect();
        let fy: Vec<_> = y.opps.iter().map(|o| o.freq_khz).collect();
        assert_eq!(fx, fy, "{core} OPP frequencies");
        assert_eq!(x.transition_latency_ns, y.transition_latency_ns, "{core}");
        assert_eq!(
            a.cpus[x.cpus[0]].capacity_dmips_mhz, b.cpus[y.cpus[0]].capacity_dmips_mhz,
            "{core}"
        );
    }
}
