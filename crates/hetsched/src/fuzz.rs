//! The entry points of the fuzz targets (`fuzz/`, cargo-fuzz) and of the stable test that
//! replays their corpus and every crash kept (`tests/fuzz_corpus.rs`): one function per
//! input class, reading arbitrary bytes as that input the way the CLI does, and
//! panicking only when a property of issue 20 fails:
//!
//! * no panic, whatever the bytes;
//! * every error is one line (`hetsched: error: …` is printed from its Display);
//! * an error about a file names it, and with `LINE:COL` where the file is text.
//!
//! Inputs that read correctly go one step further (what `validate` and `run` do next):
//! an rt-app workload is checked against a preset and, when small, simulated for 2 ms
//! under a policy chosen by its bytes; a platform is described and resolved with default
//! options; a noise configuration is applied to a workload.

use hetsched_core::noise::apply_noise;
use hetsched_core::options::{Options, Settings};
use hetsched_core::platform::Platform;
use hetsched_core::time::NSEC_PER_MSEC;
use hetsched_core::workload::Workload;
use hetsched_core::RunSpec;
use hetsched_rtapp::{DuplicateKeys, ReadOptions};
use std::sync::OnceLock;

/// A target's entry point: reads the bytes, panics only when a property fails.
pub type Entry = fn(&[u8]);

/// The fuzz targets: the directory name under `fuzz/corpus/` and the entry point.
pub const TARGETS: &[(&str, Entry)] = &[
    ("rtapp", rtapp),
    ("platform", platform),
    ("options", options),
    ("gen", generator),
    ("noise", noise),
    ("devicetree", devicetree),
];

/// The origin the rt-app target's input is named by in messages.
pub const RTAPP_ORIGIN: &str = "fuzz.json";
/// The origin of the platform target's input.
pub const PLATFORM_ORIGIN: &str = "fuzz.yaml";
/// The origin of the noise target's input.
pub const NOISE_ORIGIN: &str = "fuzz-noise.json";
/// The origin of the device-tree target's input.
pub const DTB_ORIGIN: &str = "fuzz.dtb";

/// Workloads at most this many threads and events are simulated by [`rtapp`].
const RUN_MAX_THREADS: u64 = 64;
const RUN_MAX_EVENTS: usize = 4096;

fn hikey960() -> &'static Platform {
    static P: OnceLock<Platform> = OnceLock::new();
    P.get_or_init(|| {
        hetsched_platform::load_preset("hikey960")
            .unwrap_or_else(|e| panic!("preset hikey960: {e}"))
    })
}

/// Asserts that `msg` is one line.
fn one_line(msg: &str) {
    assert!(
        !msg.contains(['\n', '\r']),
        "an error or warning on more than one line: {msg:?}"
    );
}

/// Asserts that `msg` is one line starting `ORIGIN:LINE:COL: `.
fn positioned(msg: &str, origin: &str) {
    one_line(msg);
    let ok = msg
        .strip_prefix(origin)
        .and_then(|r| r.strip_prefix(':'))
        .and_then(|r| {
            let (line, r) = r.split_once(':')?;
            let (col, r) = r.split_once(':')?;
            let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
            (digits(line) && digits(col) && r.starts_with(' ')).then_some(())
        })
        .is_some();
    assert!(ok, "an error without `{origin}:LINE:COL: `: {msg:?}");
}

/// The rt-app reader (`validate`, `run`): both duplicate-key modes; a workload read is
/// checked as `run` checks it against hikey960, and a small one is run for 2 ms.
pub fn rtapp(data: &[u8]) {
    for mode in [DuplicateKeys::Ordered, DuplicateKeys::JsonC] {
        let opts = ReadOptions {
            duplicate_keys: mode,
        };
        match hetsched_rtapp::parse_bytes(data, RTAPP_ORIGIN, &opts) {
            Err(e) => positioned(&e.to_string(), RTAPP_ORIGIN),
            Ok(w) => {
                w.warnings.iter().for_each(|m| one_line(m));
                let _ = hetsched_rtapp::describe(&w);
                run_small(w, data.len());
            }
        }
    }
}

/// What `run` does with a workload read: the platform-free checks, the checks against
/// the platform, and for a small workload a 2 ms run under a policy picked by `pick`.
fn run_small(w: Workload, pick: usize) {
    let p = hikey960();
    let checked =
        hetsched_core::sim::check_program(&w).and_then(|()| hetsched_core::sim::validate(&w, p));
    if let Err(e) = checked {
        positioned(&e.to_string(), RTAPP_ORIGIN);
        return;
    }
    let threads: u64 = w.tasks.iter().map(|t| u64::from(t.instances)).sum();
    let events: usize = w
        .tasks
        .iter()
        .flat_map(|t| &t.phases)
        .map(|ph| ph.events.len())
        .sum();
    if threads > RUN_MAX_THREADS || events > RUN_MAX_EVENTS {
        return;
    }
    let variants = crate::policy_variants();
    let (_, sets) = &variants[pick % variants.len()];
    let options = Options::default()
        .apply_sets(sets)
        .unwrap_or_else(|e| panic!("{sets:?}: {e}"));
    let spec = RunSpec {
        platform: p.clone(),
        workload: w,
        options,
        seed: pick as u64,
        duration_ns: Some(2 * NSEC_PER_MSEC),
    };
    if let Err(e) = hetsched_core::run(&spec, &mut []) {
        let msg = e.to_string();
        one_line(&msg);
        assert!(msg.starts_with(RTAPP_ORIGIN), "{msg:?}");
    }
}

/// The platform reader (YAML): a platform read is described and resolved with default
/// options.
pub fn platform(data: &[u8]) {
    match hetsched_platform::parse_bytes(data, PLATFORM_ORIGIN) {
        Err(e) => {
            let msg = e.to_string();
            if matches!(e, hetsched_platform::PlatformError::Syntax { .. }) {
                positioned(&msg, PLATFORM_ORIGIN);
            } else {
                one_line(&msg);
                assert!(msg.starts_with(PLATFORM_ORIGIN), "{msg:?}");
            }
        }
        Ok(p) => {
            let _ = hetsched_platform::describe(&p);
            let _ = hetsched_platform::describe_domains(&p);
            if let Err(e) = Settings::resolve(&Options::default(), &p) {
                one_line(&e.to_string());
            }
        }
    }
}

/// `--set KEY=VALUE` (one per line of the input), then the options resolved against
/// hikey960.
pub fn options(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return; // the command line is text (clap refuses other arguments)
    };
    let sets: Vec<&str> = text.split('\n').collect();
    match Options::default().apply_sets(&sets) {
        Err(e) => {
            let msg = e.to_string();
            one_line(&msg);
            assert!(
                msg.starts_with("--set ") || msg.starts_with("option "),
                "{msg:?}"
            );
        }
        Ok(o) => {
            if let Err(e) = Settings::resolve(&o, hikey960()) {
                one_line(&e.to_string());
            }
        }
    }
}

/// Generator specs (`gen:NAME:k=v,…+…`): a workload generated must pass the checks `run`
/// applies without a platform.
pub fn generator(data: &[u8]) {
    let Ok(spec) = std::str::from_utf8(data) else {
        return;
    };
    match hetsched_rtapp::gen::from_spec(spec) {
        Err(e) => {
            let msg = e.to_string();
            one_line(&msg);
            assert!(msg.starts_with("gen:"), "{msg:?}");
        }
        Ok(w) => {
            if let Err(e) = hetsched_core::sim::check_program(&w) {
                panic!("{spec:?} generated a workload run refuses: {e}");
            }
        }
    }
}

/// The noise configuration file (`reproduce --noise`): one read is applied to a
/// two-task workload.
pub fn noise(data: &[u8]) {
    match crate::parse_noise_config(data, NOISE_ORIGIN) {
        Err(e) => positioned(&e.to_string(), NOISE_ORIGIN),
        Ok(cfg) => {
            static W: OnceLock<Workload> = OnceLock::new();
            let w = W.get_or_init(|| {
                hetsched_rtapp::gen::from_spec("gen:periodic:tasks=2")
                    .unwrap_or_else(|e| panic!("{e}"))
            });
            let _ = apply_noise(w, &cfg, 8, data.len() as u64);
        }
    }
}

/// The device-tree importer (`.dtb` bytes, `platforms import`): a tree imported must load
/// as a platform or fail on one line naming the file.
pub fn devicetree(data: &[u8]) {
    use hetsched_platform::devicetree;
    let loaded = devicetree::import_blob(data, DTB_ORIGIN, "fuzz", None).and_then(|imp| {
        imp.check(DTB_ORIGIN)?;
        let p = hetsched_platform::load_imported(&imp, DTB_ORIGIN)?;
        devicetree::to_yaml(&imp)?;
        Ok(p)
    });
    match loaded {
        Err(e) => {
            let msg = e.to_string();
            one_line(&msg);
            assert!(msg.starts_with(DTB_ORIGIN), "{msg:?}");
        }
        Ok(p) => {
            let _ = hetsched_platform::describe(&p);
        }
    }
}
