//! Every file of rt-app's example corpus (tests/rtapp-examples, from rt-app's
//! doc/examples) either runs for its duration on hikey960 and juno_r0, or is rejected
//! exactly where rt-app rejects it.

// Test helpers panic on unexpected failures by design.
#![allow(clippy::unwrap_used)]

use hetsched::hetsched_core::options::Options;
use hetsched::hetsched_core::{run, RunSpec};
use std::path::{Path, PathBuf};

const NS: u64 = 1_000_000_000;

fn corpus() -> Vec<PathBuf> {
    fn walk(d: &Path, out: &mut Vec<PathBuf>) {
        let mut entries: Vec<_> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|e| e == "json") {
                out.push(p);
            }
        }
    }
    let mut v = Vec::new();
    walk(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/rtapp-examples"),
        &mut v,
    );
    v
}

/// Files rt-app itself rejects, with where and why (rt-app's own message in the comment).
fn expected_rejection(name: &str) -> Option<&'static str> {
    match name {
        // json-c: "object property name separator ':' expected"
        "video-long.json" | "video-short.json" => Some(":6:13: expected ':' after object key"),
        // rt-app: "Critical: No tasks section" (merge.py fragments, not workloads)
        "global.json" | "resources.json" => Some(":1:1: missing mandatory key `tasks`"),
        // legacy grammar: `lock_order` matches the `lock` prefix and is not a string:
        // rt-app's parse_task_event_data() goes to unknown_event and exits
        "thread0.json" | "thread1.json" | "thread2.json" | "thread3.json" => {
            Some(":7:25: `lock_order` expects a string")
        }
        _ => None,
    }
}

#[test]
fn corpus_runs_or_is_rejected_where_rt_app_rejects_it() {
    let files = corpus();
    assert!(files.len() >= 28, "{} files", files.len());
    let mut ran = 0;
    for f in &files {
        let name = f.file_name().unwrap().to_str().unwrap();
        let parsed = hetsched::hetsched_rtapp::read_file(f, &Default::default());
        match (expected_rejection(name), parsed) {
            (Some(at), Err(e)) => assert!(e.to_string().contains(at), "{name}: {e}"),
            (Some(_), Ok(_)) => panic!("{name}: accepted, rt-app rejects it"),
            (None, Err(e)) => panic!("{name}: rejected: {e}"),
            (None, Ok(w)) => {
                for platform in ["hikey960", "juno_r0"] {
                    let spec = RunSpec {
                        platform: hetsched::load_platform(platform).unwrap(),
                        workload: w.clone(),
                        options: Options::default(),
                        seed: 3,
                        duration_ns: Some(2 * NS),
                    };
                    let r =
                        run(&spec, &mut []).unwrap_or_else(|e| panic!("{name} on {platform}: {e}"));
                    // it ran: some CPU time was used, and the run lasted its duration
                    // unless every thread finished earlier
                    let cpu: f64 = r.tasks.iter().map(|t| t.cpu_time_s).sum();
                    assert!(cpu > 0.0, "{name} on {platform}: no CPU time");
                    assert!(r.duration_s <= 2.0 + 1e-9);
                    ran += 1;
                }
            }
        }
    }
    assert!(ran >= 2 * 20, "{ran} runs");
}
