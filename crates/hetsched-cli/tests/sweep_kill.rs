//! `hetsched sweep` killed with SIGKILL halfway, then rerun: the final table is byte for
//! byte the table of an uninterrupted run, and the rerun runs exactly the missing points.

// Test helpers panic on unexpected failures by design.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// 2 platforms × 2 governors × 10 seeds = 40 points.
const EXPERIMENT: &str = r#"name = "kill-test"
platforms = ["hikey960", "rk3399"]
workloads = ["demo"]
seeds = { from = 1, to = 10 }
noise = true
duration = "3s"

[grid]
"cpufreq.governor" = ["performance", "schedutil"]
"#;

fn fresh_dir(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("sweep-kill-{name}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn sweep(exp: &Path, out: &Path, jobs: &str) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_hetsched"));
    c.args(["sweep", exp.to_str().unwrap(), "-o", out.to_str().unwrap()])
        .args(["--jobs", jobs]);
    c
}

/// Complete result files (the temporary ones start with a dot).
fn results(out: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(out.join("points"))
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".json") && !n.starts_with('.'))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// "… N run now, M already done; …" of the CLI's closing line.
fn ran(stderr: &[u8]) -> (usize, usize) {
    let s = String::from_utf8_lossy(stderr);
    let line = s
        .lines()
        .find(|l| l.contains(" run now, "))
        .unwrap_or_else(|| panic!("{s}"));
    let num = |before: &str| -> usize {
        let head = line.split(before).next().unwrap();
        head.rsplit(' ').next().unwrap().parse().unwrap()
    };
    (num(" run now"), num(" already done"))
}

#[test]
fn sigkill_midway_then_resume_gives_the_uninterrupted_table() {
    let dir = fresh_dir("root");
    let exp = dir.join("exp.toml");
    std::fs::write(&exp, EXPERIMENT).unwrap();

    // the reference: one uninterrupted run
    let reference = dir.join("reference");
    let o = sweep(&exp, &reference, "2").output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(ran(&o.stderr), (40, 0));
    let table = std::fs::read(reference.join("table.csv")).unwrap();
    assert_eq!(String::from_utf8_lossy(&table).lines().count(), 41);

    // the same sweep, killed once some but not all of its points are written
    let killed = dir.join("killed");
    let mut child = sweep(&exp, &killed, "2")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    loop {
        let n = results(&killed).len();
        if n >= 10 {
            break;
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "the sweep ended before it could be killed ({n} points written)"
        );
        assert!(start.elapsed() < Duration::from_secs(300), "no progress");
        std::thread::sleep(Duration::from_millis(2));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let done = results(&killed);
    assert!(
        (10..40).contains(&done.len()),
        "killed midway: {} of 40 written",
        done.len()
    );
    assert!(!killed.join("table.csv").exists());
    // what was written is complete and correct
    for f in &done {
        assert_eq!(
            std::fs::read(killed.join("points").join(f)).unwrap(),
            std::fs::read(reference.join("points").join(f)).unwrap(),
            "{f}"
        );
    }

    // resume: only the missing points run, and the table is the reference's
    let o = sweep(&exp, &killed, "2").output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(ran(&o.stderr), (40 - done.len(), done.len()));
    assert_eq!(std::fs::read(killed.join("table.csv")).unwrap(), table);
    assert_eq!(results(&killed), results(&reference));
    let stray: Vec<_> = std::fs::read_dir(killed.join("points"))
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with('.'))
        .collect();
    assert!(stray.is_empty(), "temporary files left: {stray:?}");
    // and the summary goes to stdout
    assert!(String::from_utf8_lossy(&o.stdout).contains("sweep kill-test: 40 points"));
}

#[test]
fn bad_experiment_is_one_line_with_line_and_column() {
    let dir = fresh_dir("bad");
    let exp = dir.join("bad.toml");
    std::fs::write(
        &exp,
        "platforms = [\"hikey960\"]\nworkloads = [\"demo\"]\n[grid]\n\"balance.misfit\" = [true, \"maybe\"]\n",
    )
    .unwrap();
    let o = sweep(&exp, &dir.join("out"), "1").output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(
        e.starts_with(&format!(
            "hetsched: error: {}:4:20: grid: balance.misfit=maybe:",
            exp.display()
        )),
        "{e}"
    );
    let o = Command::new(env!("CARGO_BIN_EXE_hetsched"))
        .args(["schema", "experiment"])
        .output()
        .unwrap();
    assert!(o.status.success());
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v["properties"]["grid"].is_object());
}
