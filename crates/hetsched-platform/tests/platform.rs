//! Integration tests of the platform loader: presets, derivations, errors, robustness.

use hetsched_core::platform::{Platform, PowerSource};
use hetsched_platform::{
    describe, load, load_file, load_preset, parse_str, platform_schema, preset_names, preset_text,
    summary_line, PlatformError,
};
use proptest::prelude::*;

fn caps(p: &Platform) -> Vec<u64> {
    p.cpus.iter().map(|c| c.capacity).collect()
}

fn preset(name: &str) -> Platform {
    match load_preset(name) {
        Ok(p) => p,
        Err(e) => panic!("preset {name} failed to load: {e}"),
    }
}

#[test]
fn every_preset_loads_and_is_consistent() {
    assert_eq!(preset_names().len(), 8);
    for name in preset_names() {
        let p = preset(name);
        assert_eq!(&p.name, name, "YAML name must equal the preset name");
        assert!(!p.sources.is_empty(), "{name}: sources");
        for (i, c) in p.cpus.iter().enumerate() {
            assert_eq!(c.id, i);
            assert!(p.perf_domains[c.perf_domain].cpus.contains(&i));
            assert!(p.clusters[c.cluster].cpus.contains(&i));
            assert!((1..=1024).contains(&c.capacity));
        }
        assert_eq!(p.max_capacity(), 1024, "{name}");
        for pd in &p.perf_domains {
            assert!(!pd.opps.is_empty());
            assert!(pd.opps.windows(2).all(|w| w[0].freq_khz < w[1].freq_khz));
            assert!(pd.opps.iter().any(|o| o.freq_khz == pd.max_freq_khz));
            let first = p.cpus[pd.cpus[0]].capacity;
            assert!(pd.cpus.iter().all(|&c| p.cpus[c].capacity == first));
            if pd.power_source != PowerSource::None {
                assert!(pd.opps.iter().all(|o| o.power_uw.is_some()), "{name}");
            }
        }
        assert!(!describe(&p).is_empty());
        let line = summary_line(&p);
        assert!(!line.contains('\n') && line.starts_with(name));
    }
}

#[test]
fn capacities_match_the_kernel_derivation_and_seeds() {
    assert_eq!(
        caps(&preset("hikey960")),
        [462, 462, 462, 462, 1024, 1024, 1024, 1024]
    );
    // LISA Juno r0 numbering: A53 = 0,3,4,5; A57 = 1,2.
    let juno = preset("juno_r0");
    assert_eq!(caps(&juno), [446, 1024, 1024, 446, 446, 446]);
    assert_eq!(juno.cpus[0].core, "cortex-a53");
    assert_eq!(juno.cpus[1].core, "cortex-a57");
    assert_eq!(
        juno.perf_domains[juno.cpus[3].perf_domain].cpus,
        [0, 3, 4, 5]
    );
    // rk3399 derives 381 (the seed's live system reports 384; documented in notes).
    let rk = preset("rk3399");
    assert_eq!(caps(&rk), [381, 381, 381, 381, 1024, 1024]);
    assert!(rk.notes.iter().any(|n| n.contains("384")));
    assert_eq!(caps(&preset("tc2")), [1024, 1024, 430, 430, 430]);
    // Exynos 5800 with the A15 capped at 1.8 GHz and Peach Pi's A7 at 1.3 GHz: A7 389.
    let ex = preset("exynos5800");
    assert_eq!(caps(&ex), [1024, 1024, 1024, 1024, 389, 389, 389, 389]);
    assert_eq!(ex.perf_domains[0].max_freq_khz, 1_800_000);
    assert_eq!(ex.perf_domains[0].resolve_freq(u64::MAX), 1_800_000);
    assert_eq!(ex.perf_domains[0].min_freq_khz(), 200_000);
    // Overrides.
    assert_eq!(
        caps(&preset("m1pro")),
        [485, 485, 1024, 1024, 1024, 1024, 1024, 1024]
    );
    let o6 = preset("orion_o6");
    assert_eq!(
        caps(&o6),
        [1024, 279, 279, 279, 279, 905, 905, 866, 866, 984, 984, 1024]
    );
    assert!(o6.notes.iter().any(|n| n.starts_with("capacity_override")));
    // HiKey620: symmetric, one perf domain over two clusters.
    let hk = preset("hikey620");
    assert_eq!(caps(&hk), [1024; 8]);
    assert!(!hk.is_asymmetric());
    assert_eq!(hk.perf_domains.len(), 1);
    assert_eq!(hk.clusters.len(), 2);
}

/// `em_derived` power columns of shared/platforms/sources.yaml; rk3399's at 408 and 600 MHz
/// are recomputed for mainline rk3399-opp.dtsi's 825000 µV (sources.yaml used the vendor
/// tree's 800000): floor(C × 825² × MHz / 1e6).
#[test]
fn em_power_equals_sources_em_derived() {
    let cases: [(&str, &[&[u64]]); 2] = [
        (
            "hikey960",
            &[
                &[28728, 70329, 124918, 187990, 245436],
                &[243358, 500192, 804127, 1161600, 1571911],
            ],
        ),
        (
            "rk3399",
            &[
                &[27769, 40837, 58956, 86247, 120000, 179212],
                &[
                    121075, 178051, 242150, 336483, 472188, 648630, 848316, 1130112,
                ],
            ],
        ),
    ];
    for (name, want) in cases {
        let p = preset(name);
        for (pd, w) in p.perf_domains.iter().zip(want) {
            assert_eq!(pd.power_source, PowerSource::DynamicPowerCoefficient);
            let got: Vec<u64> = pd.opps.iter().map(|o| o.power_uw.unwrap_or(0)).collect();
            assert_eq!(&got, w, "{name} pd {}", pd.id);
        }
    }
    // EM performance column (cap × f / fmax) of em_derived for hikey960's A53.
    let p = preset("hikey960");
    let pd = &p.perf_domains[0];
    let perf: Vec<u64> = pd
        .opps
        .iter()
        .map(|o| 462 * o.freq_khz / pd.max_freq_khz)
        .collect();
    assert_eq!(perf, [133, 250, 351, 428, 462]);
    assert!(!describe(&p).contains("  inefficient"));
    assert!(describe(&preset("rk3399")).contains("inefficient"));
}

#[test]
fn power_sources_are_labelled() {
    let src = |n: &str| -> Vec<PowerSource> {
        preset(n)
            .perf_domains
            .iter()
            .map(|d| d.power_source)
            .collect()
    };
    assert_eq!(src("juno_r0"), [PowerSource::Explicit; 2]);
    assert_eq!(src("tc2"), [PowerSource::Explicit; 2]);
    assert_eq!(src("hikey620"), [PowerSource::DynamicPowerCoefficient]);
    assert_eq!(src("exynos5800"), [PowerSource::Assumed; 2]);
    assert_eq!(src("m1pro"), [PowerSource::Assumed; 3]);
    assert_eq!(src("orion_o6"), [PowerSource::Assumed; 5]);
    let m1 = preset("m1pro");
    assert!(describe(&m1).contains("power model: assumed"));
    assert!(summary_line(&m1).contains("[power assumed]"));
    // max_uw scaling hits the top OPP exactly.
    assert_eq!(
        m1.perf_domains[1].opps.last().and_then(|o| o.power_uw),
        Some(4_000_000)
    );
    // Exynos A15 with the TC2 coefficient and DT volts: 990 × 1237² × 1800 / 1e6.
    let ex = preset("exynos5800");
    let top = ex.perf_domains[0]
        .usable_opps()
        .last()
        .and_then(|o| o.power_uw);
    assert_eq!(top, Some(990 * 1237 * 1237 * 1800 / 1_000_000));
    assert!(ex.perf_domains[0]
        .opps
        .iter()
        .all(|o| o.microvolt.is_some()));
    // Assumed voltages are not reported as DT voltages.
    assert!(m1.perf_domains[0]
        .opps
        .iter()
        .all(|o| o.microvolt.is_none()));
}

#[test]
fn schema_is_valid_json_with_the_top_level_keys() {
    let s = platform_schema();
    let v: serde_json::Value = serde_json::from_str(&s).expect("schema is JSON");
    let props = &v["properties"];
    for k in [
        "name",
        "perf_domains",
        "idle_states",
        "capacity_override",
        "clusters",
    ] {
        assert!(props.get(k).is_some(), "schema lacks {k}");
    }
}

#[test]
fn load_accepts_names_and_paths_and_rejects_unknown_names() {
    assert!(load("hikey960").is_ok());
    let err = load_preset("hikey970").expect_err("unknown");
    let msg = err.to_string();
    assert!(msg.contains("hikey970") && msg.contains("juno_r0") && msg.contains("orion_o6"));
    assert!(matches!(
        load("nosuchboard"),
        Err(PlatformError::UnknownPreset { .. })
    ));
    let dir = std::env::temp_dir().join(format!("hetsched-platform-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("tmp dir");
    let path = dir.join("mine.yaml");
    std::fs::write(&path, preset_text("tc2").expect("tc2")).expect("write");
    let p = load(path.to_str().expect("utf-8 path")).expect("loads from a path");
    assert_eq!(p.name, "tc2");
    let missing = dir.join("missing.yaml");
    let e = load_file(&missing).expect_err("missing file");
    assert!(matches!(e, PlatformError::Io { .. }));
    assert!(e.to_string().starts_with(&missing.display().to_string()));
    let _ = std::fs::remove_dir_all(&dir);
}

const SMALL: &str = "\
name: small
description: test
perf_domains:
  - name: little
    cpus: [0, 1]
    core: a53
    capacity_dmips_mhz: 500
    transition_latency_ns: 1000
    opps:
      - {khz: 500000, uv: 800000}
      - {khz: 1000000, uv: 900000}
  - name: big
    cpus: [2]
    core: a73
    capacity_dmips_mhz: 1024
    transition_latency_ns: 1000
    opps:
      - {khz: 1000000, uv: 800000}
";

/// Parse `text`, expect an error, and check it is one line at `line:column`.
fn err_at(text: &str, line: usize, column: usize, needle: &str) {
    let e = match parse_str(text, "x.yaml") {
        Ok(_) => panic!("expected an error containing {needle:?}"),
        Err(e) => e,
    };
    let msg = e.to_string();
    assert!(!msg.contains('\n'), "multi-line error: {msg}");
    let prefix = format!("x.yaml:{line}:{column}: ");
    assert!(msg.starts_with(&prefix), "want {prefix}, got: {msg}");
    assert!(msg.contains(needle), "want {needle:?} in: {msg}");
}

/// A platform holds at most 256 CPUs, what the engine's CPU masks hold: CPU 256 is refused
/// at its position (257–4,096 CPUs were accepted here and panicked in the engine).
#[test]
fn cpus_beyond_256_are_refused_at_their_id() {
    err_at(
        &SMALL.replace("    cpus: [2]\n", "    cpus: [2, 256]\n"),
        13,
        15,
        "CPU 256 is out of range: logical CPU ids are 0..256",
    );
    let ids: Vec<String> = (2..256).map(|c| c.to_string()).collect();
    let ok = SMALL.replace(
        "    cpus: [2]\n",
        &format!("    cpus: [{}]\n", ids.join(", ")),
    );
    assert_eq!(parse_str(&ok, "x.yaml").expect("valid").cpus.len(), 256);
}

#[test]
fn small_example_loads() {
    let p = parse_str(SMALL, "x.yaml").expect("valid");
    assert_eq!(caps(&p), [500, 500, 1024]);
    assert_eq!(p.clusters.len(), 2);
}

#[test]
fn work_dmips_mhz_sets_the_work_speed_not_the_capacity() {
    // little: 500 DMIPS/MHz at 1 GHz → capacity 500; its work at 750 → (750 << 10) / 1024.
    let text = SMALL.replace(
        "    capacity_dmips_mhz: 500\n",
        "    capacity_dmips_mhz: 500\n    work_dmips_mhz: 750\n",
    );
    let p = parse_str(&text, "x.yaml").expect("valid");
    assert_eq!(caps(&p), [500, 500, 1024]);
    let work: Vec<u64> = p.cpus.iter().map(|c| c.work_capacity()).collect();
    assert_eq!(work, [750, 750, 1024]);
    assert_eq!(p.cpus[2].work_capacity, None);
    // Without it the work runs at the capacity.
    let p = parse_str(SMALL, "x.yaml").expect("valid");
    assert!(p.cpus.iter().all(|c| c.work_capacity.is_none()));
    assert_eq!(p.cpus[0].work_capacity(), 500);
    // Out of range: one line, at the value.
    err_at(
        &SMALL.replace(
            "    capacity_dmips_mhz: 500\n",
            "    capacity_dmips_mhz: 500\n    work_dmips_mhz: 0\n",
        ),
        8,
        21,
        "work_dmips_mhz 0 is out of range",
    );
    // The shipped sysbench Juno: A53 work at 844 → 652, capacity still 446.
    let root = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/platforms/juno_r0-sysbench.yaml"
    );
    let j = load(root).expect("docs/platforms/juno_r0-sysbench.yaml loads");
    assert_eq!(j.cpus[0].capacity, 446);
    assert_eq!(j.cpus[0].work_capacity, Some(652));
    assert_eq!(j.cpus[1].work_capacity(), 1024);
}

#[test]
fn malformed_inputs_give_one_line_errors_with_position() {
    // Unknown key (typo).
    err_at(
        &SMALL.replace("    core: a73", "    cpu: a73"),
        14,
        5,
        "unknown field `cpu`",
    );
    // Wrong type.
    err_at(
        &SMALL.replace("cpus: [2]", "cpus: two"),
        13,
        11,
        "invalid type",
    );
    // Missing key.
    err_at(
        &SMALL.replace(
            "    transition_latency_ns: 1000\n    opps:\n      - {khz: 1000000, uv: 800000}\n",
            "    opps:\n      - {khz: 1000000, uv: 800000}\n",
        ),
        12,
        5,
        "missing field `transition_latency_ns`",
    );
    // YAML syntax error.
    err_at("name: x\n\tdescription: y\n", 2, 1, "tab character");
    // A CPU in two perf domains: points at the second listing.
    err_at(
        &SMALL.replace("cpus: [2]", "cpus: [1]"),
        13,
        12,
        "CPU 1 is already in perf domain `little`",
    );
    // A gap in CPU numbering.
    err_at(
        &SMALL.replace("cpus: [2]", "cpus: [3]"),
        13,
        12,
        "gap: CPU 2",
    );
    // OPPs not ascending: points at the offending OPP.
    err_at(
        &SMALL.replace("{khz: 1000000, uv: 900000}", "{khz: 400000, uv: 900000}"),
        11,
        9,
        "strictly ascending",
    );
    // Empty OPP table.
    err_at(
        &SMALL.replace(
            "    opps:\n      - {khz: 1000000, uv: 800000}\n",
            "    opps: []\n",
        ),
        17,
        11,
        "OPP table is empty",
    );
    // capacity_override length mismatch.
    err_at(
        &format!("{SMALL}capacity_override: [1, 2]\n"),
        19,
        20,
        "2 entries but the platform has 3 CPUs",
    );
    // capacity_override differing within a perf domain.
    err_at(
        &format!("{SMALL}capacity_override: [300, 301, 1024]\n"),
        19,
        26,
        "share one capacity",
    );
    // Cluster inconsistent with the CPUs.
    err_at(
        &format!(
            "{SMALL}clusters:\n  - {{name: a, cpus: [0, 1]}}\n  - {{name: b, cpus: [1, 2]}}\n"
        ),
        21,
        22,
        "already in cluster `a`",
    );
    err_at(
        &format!("{SMALL}clusters:\n  - {{name: a, cpus: [0, 1]}}\n"),
        20,
        3,
        "CPU 2 is in no cluster",
    );
    // Unknown idle state.
    err_at(
        &SMALL.replace(
            "    core: a53\n",
            "    core: a53\n    idle_states: [deep]\n",
        ),
        7,
        19,
        "unknown idle state `deep`",
    );
    // max_freq_khz not an OPP.
    err_at(
        &SMALL.replace(
            "    core: a53\n",
            "    core: a53\n    max_freq_khz: 700000\n",
        ),
        7,
        19,
        "not one of the OPP frequencies",
    );
    // capacity_dmips_mhz on some domains only.
    err_at(
        &SMALL.replace("    capacity_dmips_mhz: 1024\n", ""),
        12,
        5,
        "capacity_dmips_mhz is given for perf domain `little` but not for `big`",
    );
    // Partial uw.
    err_at(
        &SMALL.replace(
            "{khz: 500000, uv: 800000}",
            "{khz: 500000, uv: 800000, uw: 5}",
        ),
        11,
        9,
        "give uw for every OPP",
    );
    // Negative number.
    err_at(
        &SMALL.replace(
            "transition_latency_ns: 1000\n    opps:\n      - {khz: 1000000",
            "transition_latency_ns: -1\n    opps:\n      - {khz: 1000000",
        ),
        16,
        28,
        "expected u64",
    );
    // Assumed power without a voltage source.
    err_at(
        &SMALL.replace(
            "      - {khz: 1000000, uv: 800000}\n",
            "      - {khz: 1000000}\n    assumed_power: {basis: guess, max_uw: 1000}\n",
        ),
        19,
        20,
        "voltage_curve is required",
    );
    // Duplicate idle state.
    err_at(
        &format!("{SMALL}idle_states:\n  s: {{level: cpu, entry_us: 1, exit_us: 1, min_residency_us: 1}}\n  s: {{level: cpu, entry_us: 1, exit_us: 1, min_residency_us: 1}}\n"),
        20,
        3,
        "duplicate idle state",
    );
    // Not a mapping at all / empty.
    assert!(parse_str("", "x.yaml").is_err());
    assert!(parse_str("- 1\n", "x.yaml").is_err());
}

#[test]
fn assumed_power_curve_and_explicit_power() {
    let text = SMALL
        .replace("      - {khz: 500000, uv: 800000}\n      - {khz: 1000000, uv: 900000}\n",
            "      - {khz: 500000}\n      - {khz: 1000000}\n    assumed_power:\n      basis: test\n      dynamic_power_coefficient: 100\n      voltage_curve: [{khz: 500000, uv: 500000}, {khz: 1000000, uv: 1000000}]\n")
        .replace("      - {khz: 1000000, uv: 800000}\n", "      - {khz: 1000000, uw: 1234}\n");
    let p = parse_str(&text, "x.yaml").expect("valid");
    let little: Vec<Option<u64>> = p.perf_domains[0].opps.iter().map(|o| o.power_uw).collect();
    // 100 × 500² × 500 / 1e6 = 12500; 100 × 1000² × 1000 / 1e6 = 100000.
    assert_eq!(little, [Some(12_500), Some(100_000)]);
    assert_eq!(p.perf_domains[0].power_source, PowerSource::Assumed);
    assert_eq!(p.perf_domains[1].power_source, PowerSource::Explicit);
    assert!(p
        .notes
        .iter()
        .any(|n| n.contains("ASSUMED") && n.contains("test")));
    // No power data at all.
    let none = SMALL
        .replace("uv: 800000", "uv: 1")
        .replace(", uv: 900000", "");
    let p = parse_str(&none, "x.yaml").expect("valid");
    assert_eq!(p.perf_domains[0].power_source, PowerSource::None);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// Random byte mutations of a preset never panic; errors stay one line.
    #[test]
    fn mutated_presets_never_panic(
        which in 0usize..8,
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>(), 0u8..3), 1..6),
    ) {
        let name = preset_names()[which];
        let mut bytes = preset_text(name).unwrap_or_default().as_bytes().to_vec();
        for (idx, b, kind) in edits {
            if bytes.is_empty() { break; }
            let i = idx.index(bytes.len());
            match kind {
                0 => bytes[i] = b,
                1 => { bytes.remove(i); }
                _ => bytes.insert(i, b),
            }
        }
        let text = String::from_utf8_lossy(&bytes);
        if let Err(e) = parse_str(&text, "m.yaml") {
            let msg = e.to_string();
            prop_assert!(!msg.contains('\n'));
            prop_assert!(msg.starts_with("m.yaml"));
        }
    }

    /// Digit mutations keep the YAML valid and exercise the semantic checks.
    #[test]
    fn mutated_numbers_never_panic(
        which in 0usize..8,
        edits in proptest::collection::vec((any::<prop::sample::Index>(), b'0'..=b'9'), 1..8),
    ) {
        let name = preset_names()[which];
        let mut bytes = preset_text(name).unwrap_or_default().as_bytes().to_vec();
        let digits: Vec<usize> = bytes.iter().enumerate().filter(|(_, b)| b.is_ascii_digit()).map(|(i, _)| i).collect();
        for (idx, d) in edits {
            let i = digits[idx.index(digits.len())];
            bytes[i] = d;
        }
        let text = String::from_utf8_lossy(&bytes);
        if let Ok(p) = parse_str(&text, "m.yaml") {
            let _ = describe(&p);
            let _ = summary_line(&p);
        }
    }
}

#[test]
fn presets_name_their_cpufreq_driver_and_whether_it_fast_switches() {
    use hetsched_core::platform::CpufreqDriver;
    let want = [
        ("juno_r0", CpufreqDriver::Scpi, false),
        ("hikey960", CpufreqDriver::CpufreqDt, false),
        ("hikey620", CpufreqDriver::CpufreqDt, false),
        ("rk3399", CpufreqDriver::CpufreqDt, false),
        ("exynos5800", CpufreqDriver::CpufreqDt, false),
        ("tc2", CpufreqDriver::VexpressSpc, false),
        ("m1pro", CpufreqDriver::AppleSoc, true),
        ("orion_o6", CpufreqDriver::Scmi, true),
    ];
    for (name, driver, fast) in want {
        let p = preset(name);
        assert_eq!(p.cpufreq_driver, driver, "{name}");
        assert_eq!(p.cpufreq_driver.fast_switch(), fast, "{name}");
        assert!(describe(&p).contains(p.cpufreq_driver.name()), "{name}");
    }
    // a file without the key gets the generic device-tree driver; a wrong name is an error
    let text = preset_text("hikey960").unwrap();
    let without: String = text
        .lines()
        .filter(|l| !l.starts_with("cpufreq_driver:"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(
        parse_str(&without, "x.yaml").unwrap().cpufreq_driver,
        CpufreqDriver::CpufreqDt
    );
    let bad = text.replace("cpufreq_driver: cpufreq-dt", "cpufreq_driver: intel");
    let e = parse_str(&bad, "x.yaml").unwrap_err().to_string();
    assert!(e.starts_with("x.yaml:6:17: "), "{e}");
    assert!(e.contains("`apple-soc`"), "{e}");
}
