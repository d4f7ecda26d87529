//! Integration tests: the rt-app example corpus, error messages, round-trip, no-panic.

use std::path::{Path, PathBuf};

use hetsched_core::workload::{Event, Span, TimerMode, Workload};
use hetsched_rtapp::{
    describe, parse_str, read_file, to_rtapp_json, DuplicateKeys, ReadOptions, RtappError,
    PHASE_LOOP_FOREVER,
};
use proptest::prelude::*;

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/rtapp-examples")
}

fn corpus_files() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for d in ["", "tutorial", "cpufreq_governor_efficiency", "merge"] {
        let Ok(rd) = std::fs::read_dir(corpus_dir().join(d)) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.extension().is_some_and(|x| x == "json") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

fn rel(p: &Path) -> String {
    p.strip_prefix(corpus_dir())
        .map(|r| r.display().to_string())
        .unwrap_or_default()
}

fn read(rel: &str, mode: DuplicateKeys) -> Workload {
    let p = corpus_dir().join(rel);
    match read_file(
        &p,
        &ReadOptions {
            duplicate_keys: mode,
        },
    ) {
        Ok(w) => w,
        Err(e) => panic!("{rel}: {e}"),
    }
}

fn err(text: &str) -> RtappError {
    match parse_str(text, "t.json", &ReadOptions::default()) {
        Ok(w) => panic!("accepted: {w:?}"),
        Err(e) => e,
    }
}

fn events(w: &Workload, task: &str, phase: usize) -> Vec<Event> {
    let t = w.tasks.iter().find(|t| t.name == task).expect("task");
    t.phases[phase]
        .events
        .iter()
        .map(|e| e.event.clone())
        .collect()
}

fn keys(w: &Workload, task: &str, phase: usize) -> Vec<String> {
    let t = w.tasks.iter().find(|t| t.name == task).expect("task");
    t.phases[phase]
        .events
        .iter()
        .map(|e| e.key.clone())
        .collect()
}

/// What rt-app does with each corpus file (checked against rt-app's parser source).
#[test]
fn corpus_results() {
    let files = corpus_files();
    assert_eq!(files.len(), 28, "the corpus has 28 files");
    for f in &files {
        let r = rel(f);
        let res = read_file(f, &ReadOptions::default());
        let expected_err: Option<&str> = match r.as_str() {
            // The obsolete bare `"suspend",`: json-c stops at the ',' on line 6.
            "video-long.json" | "video-short.json" => Some(
                ":6:13: expected ':' after object key (rt-app/json-c: object property name separator ':' expected)",
            ),
            // Fragments for doc/merge.py: rt-app exits on them too.
            "merge/global.json" | "merge/resources.json" => {
                Some(":1:1: missing mandatory key `tasks` in the top-level object")
            }
            // `lock_order` matches the `lock` prefix: rt-app's "Unknown or mismatch
            // lock_order event type".
            "merge/thread0.json" | "merge/thread1.json" | "merge/thread2.json"
            | "merge/thread3.json" => {
                Some(":7:25: `lock_order` expects a string (mutex name), found an array")
            }
            _ => None,
        };
        match (res, expected_err) {
            (Ok(w), None) => {
                assert!(!w.tasks.is_empty(), "{r}");
                assert!(!describe(&w).is_empty());
            }
            (Err(e), Some(suffix)) => {
                let msg = e.to_string();
                assert!(msg.ends_with(suffix), "{r}: {msg}");
                assert!(msg.starts_with(&f.display().to_string()), "{msg}");
                assert!(!msg.contains('\n'));
            }
            (Ok(_), Some(s)) => panic!("{r}: accepted, expected {s}"),
            (Err(e), None) => panic!("{r}: {e}"),
        }
    }
}

#[test]
fn video_fails_where_json_c_fails() {
    // Line 6 is three tabs, `"suspend"` (cols 4-12) and the ',' at col 13 where json-c
    // wants ':'.
    let text = std::fs::read_to_string(corpus_dir().join("video-short.json")).expect("read");
    let line6 = text.lines().nth(5).expect("line 6");
    assert_eq!(line6, "\t\t\t\"suspend\",");
    let e = parse_str(&text, "video-short.json", &ReadOptions::default()).expect_err("fails");
    assert_eq!(
        e.to_string(),
        "video-short.json:6:13: expected ':' after object key (rt-app/json-c: object property name separator ':' expected)"
    );
}

#[test]
fn duplicate_keys_kept_in_order() {
    let w = read("mp3-short.json", DuplicateKeys::Ordered);
    assert_eq!(keys(&w, "AudioOut", 0), ["run", "resume", "run", "suspend"]);
    assert_eq!(
        events(&w, "AudioOut", 0),
        [
            Event::Run { us: 275 },
            Event::Resume {
                name: "AudioTrack".into()
            },
            Event::Run { us: 4725 },
            Event::Suspend {
                name: "AudioOut".into()
            }
        ]
    );
    // Flat task with `loop: -1`: the phase loops forever, the thread runs it once.
    let t = &w.tasks[1];
    assert_eq!(
        (t.loop_count, t.phases[0].loop_count),
        (1, PHASE_LOOP_FOREVER)
    );
    // OMXCall: lock, wait, unlock, run, lock, signal, unlock.
    assert_eq!(events(&w, "OMXCall", 0).len(), 7);
}

#[test]
fn json_c_mode_collapses_duplicates() {
    let w = read("mp3-short.json", DuplicateKeys::JsonC);
    // json-c: last value at the first position.
    assert_eq!(
        events(&w, "AudioOut", 0),
        [
            Event::Run { us: 4725 },
            Event::Resume {
                name: "AudioTrack".into()
            },
            Event::Suspend {
                name: "AudioOut".into()
            }
        ]
    );
    let w = read("spreading-tasks.json", DuplicateKeys::JsonC);
    let names: Vec<&str> = w.tasks[1].phases.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["light1", "heavy1", "light2"]);
    // Under json-c OMXCall loses its second lock/unlock: lock, wait, unlock, run, signal.
    let w = read("mp3-short.json", DuplicateKeys::JsonC);
    assert_eq!(
        keys(&w, "OMXCall", 0),
        ["lock", "wait", "unlock", "run", "signal"]
    );
}

#[test]
fn spreading_tasks_duplicate_phase_name() {
    let w = read("spreading-tasks.json", DuplicateKeys::Ordered);
    let t = &w.tasks[1];
    let names: Vec<&str> = t.phases.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["light1", "heavy1", "light2", "heavy11"]);
    let loops: Vec<u64> = t.phases.iter().map(|p| p.loop_count).collect();
    assert_eq!(loops, [900, 600, 300, 600]);
    assert!(w.warnings.iter().any(|m| m.contains("renamed \"heavy11\"")));
    assert!(matches!(
        &t.phases[0].events[1].event,
        Event::Timer { name, period_us: 10000, mode: TimerMode::Relative } if name == "unique"
    ));
    assert_eq!(t.phases[0].events[1].event.rtapp_type_id(), 11);
}

#[test]
fn example9_instance_zero_and_fork() {
    let w = read("tutorial/example9.json", DuplicateKeys::Ordered);
    let counts: Vec<u32> = w.tasks.iter().map(|t| t.instances).collect();
    assert_eq!(counts, [1, 0, 1]);
    assert_eq!(
        events(&w, "thread3", 1)[0],
        Event::Fork {
            task: "thread2".into()
        }
    );
    // `phases` without task `loop`: forever; thread3 sets loop 1.
    assert_eq!(w.tasks[0].loop_count, -1);
    assert_eq!(w.tasks[2].loop_count, 1);
    assert_eq!(w.ftrace, Default::default());
}

#[test]
fn example7_barriers_and_runtime_prefixes() {
    let w = read("tutorial/example7.json", DuplicateKeys::Ordered);
    assert_eq!(
        keys(&w, "task0", 0),
        [
            "runtime1", "sleep1", "barrier1", "runtime2", "barrier2", "runtime3", "sleep3",
            "barrier3"
        ]
    );
    let ev = events(&w, "task1", 0);
    assert_eq!(ev[0], Event::Runtime { us: 2000 });
    assert_eq!(
        ev[1],
        Event::Barrier {
            name: "FIRST".into()
        }
    );
    // `runtime1` is an event, not the legacy task-level `runtime` (exact key only).
    assert_eq!(w.tasks[0].attrs.dl_runtime_us, None);
}

#[test]
fn template_and_example1_comments() {
    let w = read("template.json", DuplicateKeys::Ordered);
    assert_eq!(w.duration_s, Some(6));
    assert_eq!(w.tasks[0].span, Span { line: 11, col: 3 });
    assert_eq!(w.tasks[0].phases[0].events.len(), 3);
    let w = read("tutorial/example1.json", DuplicateKeys::Ordered);
    assert!(w.ftrace.main && w.ftrace.task && w.ftrace.loop_ && w.ftrace.event);
    assert!(!w.ftrace.stats);
    assert_eq!(
        events(&w, "thread0", 0),
        [Event::Run { us: 20000 }, Event::Sleep { us: 80000 }]
    );
    assert_eq!(
        w.tasks[0].phases[0].events[0].span,
        Span { line: 9, col: 4 }
    );
    assert!(w.warnings.is_empty(), "{:?}", w.warnings);
}

#[test]
fn cpus_resolution_example8() {
    let w = read("tutorial/example8.json", DuplicateKeys::Ordered);
    let t = &w.tasks[0];
    let cpus: Vec<Option<Vec<usize>>> = t.phases.iter().map(|p| p.attrs.cpus.clone()).collect();
    assert_eq!(cpus, [Some(vec![0]), Some(vec![1]), Some(vec![2])]);
    // phase3 inherits the task's `cpus`, with the task's span.
    assert_eq!(t.phases[2].attrs.cpus_span, t.attrs.cpus_span);
    assert_eq!(t.attrs.cpus_span, Some(Span { line: 10, col: 4 }));
}

#[test]
fn globals_dvfs_and_custom_slice() {
    let w = read(
        "cpufreq_governor_efficiency/dvfs.json",
        DuplicateKeys::Ordered,
    );
    assert_eq!(
        w.calibration,
        hetsched_core::workload::Calibration::PLoadNs(128)
    );
    assert_eq!(w.duration_s, None);
    let w = read("custom-slice.json", DuplicateKeys::Ordered);
    assert_eq!(w.tasks[0].attrs.dl_runtime_us, Some(100_000));
    assert_eq!(w.tasks[1].attrs.dl_period_us, Some(200_000));
    assert_eq!(w.tasks[1].attrs.dl_deadline_us, Some(200_000));
}

#[test]
fn prefix_matching() {
    use hetsched_rtapp::event_prefix;
    assert_eq!(event_prefix("run0"), Some("run"));
    assert_eq!(event_prefix("runtime"), Some("runtime"));
    assert_eq!(event_prefix("sleep-1"), Some("sleep"));
    assert_eq!(event_prefix("timer_a"), Some("timer"));
    assert_eq!(event_prefix("memrun1"), Some("memrun"));
    assert_eq!(event_prefix("mem1"), Some("mem"));
    assert_eq!(event_prefix("unlock2"), Some("unlock"));
    assert_eq!(event_prefix("loop"), None);
    let w = parse_str(
        r#"{"tasks": {"t": {"loop": 2, "run0": 1, "sleep-1": 2, "timer_a": {"ref": "x", "period": 3, "mode": "absolute"}, "runtime9": 4, "frob": 1}}}"#,
        "p.json",
        &ReadOptions::default(),
    )
    .expect("parses");
    assert_eq!(
        events(&w, "t", 0),
        [
            Event::Run { us: 1 },
            Event::Sleep { us: 2 },
            Event::Timer {
                name: "x".into(),
                period_us: 3,
                mode: TimerMode::Absolute
            },
            Event::Runtime { us: 4 }
        ]
    );
    assert_eq!(
        (w.tasks[0].loop_count, w.tasks[0].phases[0].loop_count),
        (1, 2)
    );
    assert_eq!(w.warnings.len(), 1);
    assert!(w.warnings[0].starts_with("p.json:1:"), "{}", w.warnings[0]);
    assert!(w.warnings[0].contains("`frob`"));
}

#[test]
fn error_messages() {
    let e = err("{ \"global\": {} }");
    assert_eq!(
        e.to_string(),
        "t.json:1:1: missing mandatory key `tasks` in the top-level object"
    );
    let e = err("{\"tasks\": {\n  \"t\": {\"run\": \"10\"}}}");
    assert_eq!(
        e.to_string(),
        "t.json:2:16: `run` expects an integer number of microseconds, found a string"
    );
    let e = err("{\"tasks\": {\n  \"t\": {\"run\": 1,\n   \"fork\": \"nobody\"}}}");
    assert_eq!(
        e.to_string(),
        "t.json:3:4: `fork` names unknown task \"nobody\"; expected one of: t"
    );
    let e = err("{\"tasks\": {\"t\": {\"fork\": \"x\"}, \"u\": {\"run\": 1}}}");
    assert!(
        e.to_string()
            .starts_with("t.json:1:18: `fork` names unknown task \"x\""),
        "{e}"
    );
    let e = err("{\"tasks\": {\"t\": {\"lock\": \"m\", \"run\": 1}}}");
    assert!(
        e.to_string()
            .starts_with("t.json:1:18: mutex \"m\" is locked here but never unlocked"),
        "{e}"
    );
    let e = err("{\"tasks\": {\"t\": {\"sleep\": -5}}}");
    assert_eq!(
        e.to_string(),
        "t.json:1:27: `sleep`: negative value -5; expected an integer number of microseconds ≥ 0"
    );
    let e = err("{\"tasks\": {\"t\": {\"policy\": \"SCHED_FOO\", \"run\": 1}}}");
    assert!(
        e.to_string().starts_with(
            "t.json:1:28: `policy`: unknown policy \"SCHED_FOO\"; expected one of SCHED_OTHER"
        ),
        "{e}"
    );
    let e = err("{\"tasks\": {\"t\": {\"util_min\": 800, \"util_max\": 100, \"run\": 1}}}");
    assert!(
        e.to_string()
            .starts_with("t.json:1:30: `util_min`: util_min 800 > util_max 100"),
        "{e}"
    );
    let e = err("{\"tasks\": {\"t\": {\"cpus\": [0, -1], \"run\": 1}}}");
    assert!(
        e.to_string()
            .starts_with("t.json:1:30: `cpus`: CPU -1 is negative"),
        "{e}"
    );
    let e = err("{\"tasks\": {\"t\": {\"cpus\": 1, \"run\": 1}}}");
    assert_eq!(
        e.to_string(),
        "t.json:1:26: `cpus` expects an array of CPU numbers, found an integer"
    );
    let e = err("{\"tasks\": {\"t\": {\"cpus\": [\"1\"], \"run\": 1}}}");
    assert!(
        e.to_string()
            .starts_with("t.json:1:27: `cpus` expects an array of non-negative integer"),
        "{e}"
    );
    let e = err("{\"tasks\": {\"t\": {\"timer\": 5}}}");
    assert!(
        e.to_string()
            .starts_with("t.json:1:27: `timer` expects an object {\"ref\""),
        "{e}"
    );
    let e = err("{\"tasks\": {\"t\": {\"wait\": \"q\"}}}");
    assert!(e.to_string().contains("`wait` expects an object"), "{e}");
    let e = err("{\"tasks\": {\"t\": {\"loop\": 3}}}");
    assert!(
        e.to_string()
            .starts_with("t.json:1:17: task \"t\" has no event"),
        "{e}"
    );
    let e = err("{\"tasks\": {\"t\": {\"phases\": {\"p\": {\"loop\": 3}}}}}");
    assert!(
        e.to_string()
            .starts_with("t.json:1:34: phase \"p\" of task \"t\" has no event"),
        "{e}"
    );
    let e = err("{\"global\": {\"ftrace\": \"main,bogus\"}, \"tasks\": {\"t\": {\"run\": 1}}}");
    assert!(e.to_string().contains("unknown category \"bogus\""), "{e}");
    let e = err("{\"tasks\": {\"t\": {\"policy\": \"SCHED_FIFO\", \"priority\": 0, \"run\": 1}}}");
    assert!(
        e.to_string().contains("expected an RT priority 1..=99"),
        "{e}"
    );
    let e = err(
        "{\"tasks\": {\"t\": {\"policy\": \"SCHED_FIFO\", \"taskgroup\": \"/a\", \"run\": 1}}}",
    );
    assert!(e.to_string().contains("No taskgroup support"), "{e}");
    let e = err("{\"tasks\": {\"t\": {\"run\": 1.5}}}");
    assert!(e.to_string().ends_with("found a float"), "{e}");
    let e = err("[1]");
    assert!(
        e.to_string()
            .starts_with("t.json:1:1: `(top level)` expects an object"),
        "{e}"
    );
    let e = err("{\"tasks\": {\"t\": {\"run\": 1}},,}");
    assert!(
        e.to_string()
            .contains("quoted object property name expected"),
        "{e}"
    );
    for e in [
        err("{\"tasks\": {\"t\": {\"run\": 1}}"),
        err("{\"tasks\": {\"t\": {\"suspend\", \"run\": 1}}}"),
    ] {
        assert_eq!(e.to_string().lines().count(), 1);
        assert!(e.location().is_some());
    }
}

#[test]
fn resume_pairs_with_suspend_by_name() {
    // browser files: BrowserDisplay suspends on "Browser", BrowserMain resumes "Browser":
    // rt-app pairs them by that string, so there is nothing to warn about.
    let w = read("browser-short.json", DuplicateKeys::Ordered);
    assert!(
        !w.warnings
            .iter()
            .any(|m| m.contains("matches no `suspend`")),
        "{:?}",
        w.warnings
    );
    assert!(w.warnings.iter().any(|m| m.contains("`frag`")));
    // A resume nobody suspends on is a broadcast to nobody: a warning, not an error.
    let w = parse_str(
        "{\"tasks\": {\"t\": {\"run\": 1, \"resume\": \"nobody\"}}}",
        "t.json",
        &ReadOptions::default(),
    )
    .expect("accepted");
    assert!(w
        .warnings
        .iter()
        .any(|m| m.contains("`resume` \"nobody\" matches no `suspend`")));
}

/// Whether the reader warned that a `suspend` name differs from its task's name, which
/// the model cannot express (so the written JSON resumes names nobody suspends on).
fn lost_suspend_names(w: &Workload) -> bool {
    w.warnings
        .iter()
        .any(|m| m.contains("hetsched's model pairs suspend"))
}

/// Strips what the round trip does not keep: spans, warnings, renamed duplicate keys.
fn normalised(w: &Workload) -> Workload {
    let mut w = w.clone();
    w.warnings.clear();
    w.calibration_span = None;
    for t in &mut w.tasks {
        t.span = Span::default();
        t.attrs.cpus_span = None;
        for p in &mut t.phases {
            p.attrs.cpus_span = None;
            for e in &mut p.events {
                e.span = Span::default();
                e.key.clear();
            }
        }
    }
    w
}

#[test]
fn round_trip() {
    for f in corpus_files() {
        let Ok(w) = read_file(&f, &ReadOptions::default()) else {
            continue;
        };
        let origin = f.display().to_string();
        if lost_suspend_names(&w) {
            // The model has no suspend name (see the crate docs): only the browser
            // files use names other than the task's own.
            assert!(origin.contains("browser-"), "{origin}");
            continue;
        }
        let json = to_rtapp_json(&w);
        let back = match parse_str(&json, &origin, &ReadOptions::default()) {
            Ok(b) => b,
            Err(e) => panic!("{origin}: {e}\n{json}"),
        };
        assert_eq!(normalised(&back), normalised(&w), "{origin}\n{json}");
        // The keys written are unique per object and keep the original prefix.
        for (t, bt) in w.tasks.iter().zip(&back.tasks) {
            for (p, bp) in t.phases.iter().zip(&bt.phases) {
                for (e, be) in p.events.iter().zip(&bp.events) {
                    assert!(be.key.starts_with(&e.key), "{} vs {}", be.key, e.key);
                }
            }
        }
        // Strict: json-c's collapse changes nothing, and the output is stable.
        let strict = parse_str(
            &json,
            &origin,
            &ReadOptions {
                duplicate_keys: DuplicateKeys::JsonC,
            },
        )
        .expect("strict");
        assert_eq!(normalised(&strict), normalised(&w));
        assert_eq!(to_rtapp_json(&back), json, "{origin}");
        let unexpected: Vec<_> = back
            .warnings
            .iter()
            .filter(|m| !m.contains("pthread_setname_np"))
            .collect();
        assert!(unexpected.is_empty(), "{origin}: {unexpected:?}");
    }
}

#[test]
fn deterministic() {
    let a = to_rtapp_json(&read("browser-long.json", DuplicateKeys::Ordered));
    let b = to_rtapp_json(&read("browser-long.json", DuplicateKeys::Ordered));
    assert_eq!(a, b);
    assert_eq!(
        describe(&read("mp3-long.json", DuplicateKeys::Ordered)),
        describe(&read("mp3-long.json", DuplicateKeys::Ordered))
    );
}

fn corpus_texts() -> Vec<String> {
    corpus_files()
        .iter()
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let text = String::from_utf8_lossy(&bytes);
        for mode in [DuplicateKeys::Ordered, DuplicateKeys::JsonC] {
            if let Err(e) = parse_str(&text, "r.json", &ReadOptions { duplicate_keys: mode }) {
                prop_assert!(!e.to_string().contains('\n'));
            }
        }
    }

    #[test]
    fn corpus_mutations_never_panic(
        file in 0usize..28,
        edits in proptest::collection::vec((any::<prop::sample::Index>(), 0u8..4, any::<char>()), 1..8),
    ) {
        let texts = corpus_texts();
        let mut chars: Vec<char> = texts[file % texts.len()].chars().collect();
        for (idx, op, c) in edits {
            if chars.is_empty() {
                chars.push(c);
                continue;
            }
            let i = idx.index(chars.len());
            match op {
                0 => chars[i] = c,
                1 => { chars.remove(i); }
                2 => chars.insert(i, c),
                _ => {
                    // Replace with a structural character json-c cares about.
                    const S: [char; 10] = ['{', '}', '[', ']', ',', ':', '"', '/', '*', '-'];
                    chars[i] = S[(c as usize) % S.len()];
                }
            }
        }
        let text: String = chars.into_iter().collect();
        for mode in [DuplicateKeys::Ordered, DuplicateKeys::JsonC] {
            match parse_str(&text, "m.json", &ReadOptions { duplicate_keys: mode }) {
                Ok(w) if lost_suspend_names(&w) => {
                    let _ = (describe(&w), to_rtapp_json(&w));
                }
                Ok(w) => {
                    let _ = describe(&w);
                    let json = to_rtapp_json(&w);
                    prop_assert!(parse_str(&json, "m.json", &ReadOptions::default()).is_ok(), "{}", json);
                }
                Err(e) => prop_assert!(!e.to_string().contains('\n')),
            }
        }
    }
}

/// A run starts at most `MAX_THREADS` threads (Linux's default pid_max): one `instance`
/// over it, or the tasks together, is refused at its position, before anything is built
/// (2³¹ instances made `validate` allocate without bound).
#[test]
fn threads_over_pid_max_are_refused_at_their_instance() {
    let e = err(r#"{ "tasks": { "t": { "instance": 2147483647, "run": 100 } } }"#).to_string();
    assert!(
        e.starts_with("t.json:1:33: `instance`: 2147483647 threads") && e.contains("at most 32768"),
        "{e}"
    );
    let e = err(r#"{ "tasks": { "a": { "instance": 30000, "run": 100 },
                   "b": { "instance": 2768, "run": 100 },
                   "c": { "run": 100 } } }"#)
    .to_string();
    assert!(
        e.starts_with("t.json:3:20:") && e.contains("32769 in all"),
        "{e}"
    );
    let ok = r#"{ "tasks": { "a": { "instance": 32767, "run": 100 }, "c": { "run": 100 } } }"#;
    let w = parse_str(ok, "t.json", &ReadOptions::default()).unwrap();
    assert_eq!(w.tasks.iter().map(|t| t.instances).sum::<u32>(), 32_768);
}

/// A task name with a newline or a NUL would split the trace's lines: refused at its key.
#[test]
fn control_characters_in_task_names_are_refused() {
    for (text, code) in [
        ("{ \"tasks\": { \"a\\nb\": { \"run\": 100 } } }", "000A"),
        ("{ \"tasks\": { \"a\\u0000b\": { \"run\": 100 } } }", "0000"),
    ] {
        let e = err(text).to_string();
        assert!(e.starts_with("t.json:1:14:"), "{e}");
        assert!(e.contains(&format!("U+{code}")), "{e}");
        assert!(!e.contains('\n') && !e.contains('\0'), "{e:?}");
    }
}
