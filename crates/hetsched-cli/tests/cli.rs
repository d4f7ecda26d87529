//! The `hetsched` binary as a user meets it: commands, outputs, and one-line errors with
//! exit status 2.

// Test helpers panic on unexpected failures by design.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn hetsched(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hetsched"))
        .args(args)
        .output()
        .expect("run hetsched")
}

fn tmp(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("hetsched-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn err_line(o: &Output) -> String {
    assert_eq!(
        o.status.code(),
        Some(2),
        "exit status; stderr: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let e = String::from_utf8_lossy(&o.stderr).to_string();
    let lines: Vec<&str> = e.lines().collect();
    assert_eq!(lines.len(), 1, "one line: {e}");
    lines[0].to_string()
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn platforms_list_shows_eight_presets() {
    let o = hetsched(&["platforms", "list"]);
    assert!(o.status.success());
    let s = String::from_utf8_lossy(&o.stdout);
    for p in [
        "juno_r0",
        "hikey960",
        "tc2",
        "rk3399",
        "exynos5800",
        "m1pro",
        "orion_o6",
        "hikey620",
    ] {
        assert!(s.lines().any(|l| l.starts_with(p)), "{p} missing in:\n{s}");
    }
    let o = hetsched(&["platforms", "show", "hikey960"]);
    let s = String::from_utf8_lossy(&o.stdout);
    assert!(s.contains("462") && s.contains("2362000"), "{s}");
}

#[test]
fn platforms_show_domains() {
    let o = hetsched(&["platforms", "show", "juno_r0", "--domains"]);
    let s = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{s}");
    // juno_r0: LITTLE 0,3-5 (446), big 1-2 (1024): PKG groups 1784 and 2048.
    assert!(s.contains("CPU0 attaching sched-domain(s):"), "{s}");
    assert!(s.contains("domain-0: span=0,3-5 level=MC"), "{s}");
    assert!(
        s.contains("0:{ span=0,3-5 cap=1784 }, 1:{ span=1-2 cap=2048 }"),
        "{s}"
    );
    assert!(s.contains("SD_ASYM_CPUCAPACITY_FULL"), "{s}");
}

#[test]
fn unknown_platform_is_one_line_error() {
    let l = err_line(&hetsched(&["run", "-p", "nosuchboard", "-w", "demo"]));
    assert!(l.contains("nosuchboard") && l.contains("hikey960"), "{l}");
}

#[test]
fn malformed_json_names_file_line_column() {
    let p = tmp(
        "bad.json",
        "{\n  \"tasks\": {\n    \"t\" {\"run\": 1}\n  }\n}\n",
    );
    let l = err_line(&hetsched(&[
        "run",
        "-p",
        "hikey960",
        "-w",
        p.to_str().unwrap(),
        "-d",
        "1s",
    ]));
    assert!(l.contains("bad.json:3:9"), "{l}");
    assert!(l.contains("expected ':'"), "{l}");
}

#[test]
fn control_characters_in_input_keep_the_error_on_one_line() {
    let l = err_line(&hetsched(&[
        "run",
        "-p",
        "hikey960",
        "-w",
        "demo",
        "--set",
        "fair.a\nb=1",
    ]));
    assert!(l.contains(r"fair.a\nb=1"), "{l}");
}

#[test]
fn unknown_option_key_is_rejected() {
    let l = err_line(&hetsched(&[
        "run",
        "-p",
        "hikey960",
        "-w",
        "demo",
        "--set",
        "fair.nosuch=1",
    ]));
    assert!(
        l.contains("fair.nosuch=1") && l.contains("unknown field `nosuch`"),
        "{l}"
    );
}

#[test]
fn impossible_affinity_names_the_cpus_key() {
    let p = tmp(
        "aff.json",
        "{\n  \"tasks\": {\n    \"t\": {\n      \"cpus\": [0, 9],\n      \"run\": 1000\n    }\n  }\n}\n",
    );
    let l = err_line(&hetsched(&[
        "run",
        "-p",
        "hikey960",
        "-w",
        p.to_str().unwrap(),
        "-d",
        "1s",
    ]));
    assert!(l.contains("aff.json:4:"), "{l}");
    assert!(l.contains("CPU 9"), "{l}");
}

#[test]
fn bad_duration_and_missing_duration() {
    let l = err_line(&hetsched(&[
        "run", "-p", "hikey960", "-w", "demo", "-d", "soon",
    ]));
    assert!(l.contains("--duration soon"), "{l}");
    let p = tmp(
        "forever.json",
        r#"{"tasks": {"t": {"loop": -1, "run": 1000, "sleep": 1000}}}"#,
    );
    let l = err_line(&hetsched(&[
        "run",
        "-p",
        "hikey960",
        "-w",
        p.to_str().unwrap(),
    ]));
    assert!(l.contains("give a duration"), "{l}");
}

#[test]
fn rejected_rtapp_file_fails_where_json_c_fails() {
    let p = repo().join("tests/rtapp-examples/video-long.json");
    let l = err_line(&hetsched(&["validate", p.to_str().unwrap()]));
    assert!(l.contains("video-long.json:6:13"), "{l}");
}

#[test]
fn run_writes_json_and_trace() {
    let dir = std::env::temp_dir().join(format!("hetsched-cli-run-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("r.json");
    let trace = dir.join("t.txt");
    let o = hetsched(&[
        "run",
        "-p",
        "rk3399",
        "-w",
        "demo",
        "-d",
        "500ms",
        "--seed",
        "3",
        "--json",
        json.to_str().unwrap(),
        "--trace",
        trace.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let summary = String::from_utf8_lossy(&o.stdout);
    assert!(
        summary.contains("light-0") && summary.contains("migrations:"),
        "{summary}"
    );
    let r: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(r["seed"], 3);
    assert_eq!(r["platform"], "rk3399");
    assert_eq!(r["tasks"].as_array().unwrap().len(), 11);
    let t = std::fs::read_to_string(&trace).unwrap();
    assert!(t.starts_with("version = 6\ncpus=6\n"));
    assert!(t.contains("sched_switch:") && t.contains("rtapp_stats:"));
}

/// Corpus files whose events this release simulates run on several presets.
#[test]
fn rtapp_corpus_runs_on_presets() {
    let corpus = repo().join("tests/rtapp-examples");
    let files = [
        "tutorial/example1.json",
        "tutorial/example2.json",
        "tutorial/example3.json",
        "tutorial/example8.json",
        "template.json",
        "spreading-tasks.json",
    ];
    for f in files {
        for p in ["hikey960", "juno_r0", "tc2"] {
            let path = corpus.join(f);
            let o = hetsched(&[
                "run",
                "-q",
                "-p",
                p,
                "-w",
                path.to_str().unwrap(),
                "-d",
                "1s",
            ]);
            assert!(
                o.status.success(),
                "{f} on {p}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
        }
    }
}
