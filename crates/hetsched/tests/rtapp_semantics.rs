//! rt-app's synchronisation events, forks, timers and per-phase affinity, checked from the
//! trace: who blocks, who wakes whom (the context of `sched_wakeup`), and when.

// Test helpers panic on unexpected failures by design.
#![allow(clippy::unwrap_used)]

use hetsched::hetsched_core::options::Options;
use hetsched::hetsched_core::trace::TraceSink;
use hetsched::hetsched_core::{run, RunError, RunResult, RunSpec};
use hetsched::hetsched_trace::FtraceTextSink;

const MS: u64 = 1_000_000;
/// The tests here are about rt-app's semantics and their timing at a fixed frequency: the performance governor keeps
/// every CPU at its highest OPP (the default, schedutil with EAS, is tested in eas.rs and
/// fidelity.rs).
const FIXED_FREQ: &str = "cpufreq.governor=performance";
/// rt-app's main thread creates the threads and they start in the same instant, 0: no
/// `create_thread()` or start work (its timing is tests/startup.rs). Each thread still
/// sleeps at rt-app's start barrier at 0 until the last one is created, which
/// [`wakeups_of`] and [`blocks_of`] leave out.
const INSTANT_START: [&str; 2] = ["rtapp.create_thread_us=0", "rtapp.thread_start_us=0"];

fn spec(platform: &str, json: &str, ms: u64) -> RunSpec {
    let mut s = spec_open(platform, json);
    s.duration_ns = Some(ms * MS);
    s
}

/// No duration: the run lasts until every thread has exited.
fn spec_open(platform: &str, json: &str) -> RunSpec {
    RunSpec {
        platform: hetsched::load_platform(platform).unwrap(),
        workload: hetsched::hetsched_rtapp::parse_str(json, "t.json", &Default::default()).unwrap(),
        options: Options::default()
            .apply_sets(&[FIXED_FREQ])
            .and_then(|o| o.apply_sets(&INSTANT_START))
            .unwrap(),
        seed: 1,
        duration_ns: None,
    }
}

fn traced(platform: &str, json: &str, ms: u64) -> (RunResult, Vec<String>) {
    let s = spec(platform, json, ms);
    let mut sink = FtraceTextSink::new(Vec::new());
    let r = {
        let mut sinks: [&mut dyn TraceSink; 1] = [&mut sink];
        run(&s, &mut sinks).unwrap()
    };
    let text = String::from_utf8(sink.into_inner().unwrap()).unwrap();
    (r, text.lines().map(str::to_string).collect())
}

/// Timestamp (µs after the 1 s start) of a trace line.
fn t_us(line: &str) -> i64 {
    let ts = line.split(']').nth(1).unwrap().trim();
    let ts = ts.split(':').next().unwrap();
    let (s, us) = ts.split_once('.').unwrap();
    (s.parse::<i64>().unwrap() - 1) * 1_000_000 + us.parse::<i64>().unwrap()
}

/// The first line containing all of `parts`, after line `from`.
fn find(lines: &[String], from: usize, parts: &[&str]) -> Option<usize> {
    (from..lines.len()).find(|&i| parts.iter().all(|p| lines[i].contains(p)))
}

/// The context comm of each `sched_wakeup` of `comm`, and when, in order (after the
/// start barrier). A futex wake-up onto an idle CPU is activated there by the wakelist's
/// IPI (v6.11 `ttwu_queue_cond()`), so it carries `<idle>`: the waker is told by the
/// time.
fn wakeups_of(lines: &[String], comm: &str) -> Vec<(String, i64)> {
    let pat = format!("sched_wakeup:         comm={comm} ");
    lines
        .iter()
        .filter(|l| l.contains(&pat) && t_us(l) > 0)
        .map(|l| {
            let who = l.trim_start().split(' ').next().unwrap();
            let who = who.rsplit_once('-').unwrap().0.to_string();
            (who, t_us(l))
        })
        .collect()
}

/// When `comm` switched out blocked (prev_state=1), after the start barrier.
fn blocks_of(lines: &[String], comm: &str) -> Vec<i64> {
    let pat = format!("prev_comm={comm} ");
    lines
        .iter()
        .filter(|l| l.contains(&pat) && l.contains("prev_state=1") && t_us(l) > 0)
        .map(|l| t_us(l))
        .collect()
}

#[test]
fn mutex_contention_unlock_wakes_the_waiter() {
    // a holds m for 10 ms; b asks for it at 1 ms, blocks, and is woken by a's unlock.
    let json = r#"{"tasks": {
        "a": {"cpus": [4], "loop": 1, "lock": "m", "runtime": 10000, "unlock": "m", "sleep": 5000},
        "b": {"cpus": [5], "loop": 1, "delay": 1000, "lock": "m", "run": 1000, "unlock": "m"}
    }}"#;
    let (_, lines) = traced("hikey960", json, 50);
    let b_blocks = blocks_of(&lines, "b-1");
    // b sleeps for its delay at 0, then blocks on the mutex at 1 ms
    assert!(b_blocks.contains(&1000), "{b_blocks:?}");
    let w = wakeups_of(&lines, "b-1");
    // a's unlock on CPU 4 wakes b on idle CPU 5: activated there, from the wakelist
    assert_eq!(w.last().unwrap(), &("<idle>".to_string(), 10_000), "{w:?}");
}

#[test]
fn priority_inheritance_boosts_the_owner_only_with_pi_enabled() {
    // low (nice 0) holds m on CPU 0 shared with a hog; hi (FIFO 50) blocks on m.
    let json = |pi: bool| {
        format!(
            r#"{{"global": {{"pi_enabled": {pi}}}, "tasks": {{
        "low": {{"cpus": [0], "loop": 1, "lock": "m", "run": 20000, "unlock": "m"}},
        "hog": {{"cpus": [0], "loop": -1, "run": 100000}},
        "hi": {{"cpus": [4], "policy": "SCHED_FIFO", "priority": 50, "loop": 1,
                "delay": 1000, "lock": "m", "run": 1000, "unlock": "m"}}
    }}}}"#
        )
    };
    let (_, with_pi) = traced("hikey960", &json(true), 200);
    let (_, without) = traced("hikey960", &json(false), 200);
    // boosted to RT priority 49 (99 - 50) from 1 ms, low keeps CPU 0 until it unlocks
    // at 20 ms: the hog first runs then (after the start barrier); without PI the hog
    // shares CPU 0 before that
    let hog_first = |lines: &[String]| {
        lines
            .iter()
            .filter(|l| l.contains("sched_switch") && l.contains("next_pid=1002"))
            .map(|l| t_us(l))
            .find(|&t| t > 0)
            .unwrap()
    };
    assert_eq!(hog_first(&with_pi), 20_000);
    assert!(hog_first(&without) < 20_000);
    assert!(with_pi
        .iter()
        .any(|l| l.contains("sched_process_exit:   comm=low-0") && l.contains("prio=120")));
    // and hi gets the lock sooner: low no longer shares CPU 0 with the hog
    let hi_wake = |lines: &[String]| wakeups_of(lines, "hi-2").last().unwrap().1;
    assert!(
        hi_wake(&with_pi) < hi_wake(&without),
        "{} vs {}",
        hi_wake(&with_pi),
        hi_wake(&without)
    );
}

#[test]
fn condition_signal_wakes_the_waiter_and_it_reacquires_the_mutex() {
    let json = r#"{"tasks": {
        "waiter": {"cpus": [1], "loop": 1, "lock": "m", "wait": {"ref": "c", "mutex": "m"},
                   "run": 1000, "unlock": "m"},
        "sig": {"cpus": [2], "loop": 1, "sleep": 5000, "lock": "m", "signal": "c",
                "run": 2000, "unlock": "m"}
    }}"#;
    let (_, lines) = traced("hikey960", json, 50);
    let w = wakeups_of(&lines, "waiter-0");
    // woken by the signal at 5 ms, then again by the unlock at 7 ms (it retried the
    // mutex the signaller still held)
    assert_eq!(
        w,
        vec![("<idle>".to_string(), 5000), ("<idle>".to_string(), 7000)]
    );
    assert!(blocks_of(&lines, "waiter-0").contains(&5000));
}

#[test]
fn a_lost_signal_is_reported_as_a_deadlock() {
    // the signal comes before anyone waits: rt-app's waiter would hang forever
    let json = r#"{"tasks": {
        "waiter": {"loop": 1, "sleep": 5000, "lock": "m", "wait": {"ref": "c", "mutex": "m"},
                   "unlock": "m"},
        "sig": {"loop": 1, "lock": "m", "signal": "c", "unlock": "m"}
    }}"#;
    // without a duration the run could never end: an error
    let e = run(&spec_open("hikey960", json), &mut []).unwrap_err();
    assert!(matches!(e, RunError::Runtime(..)));
    let msg = e.to_string();
    assert!(
        msg.contains("deadlock at 1.005000 s") && msg.contains("waiter-0 waits for condition `c`"),
        "{msg}"
    );
    // with a duration rt-app would idle until it ends: the run completes with a warning
    let r = run(&spec("hikey960", json, 1000), &mut []).unwrap();
    assert_eq!(r.duration_s, 1.0);
    assert_eq!(r.warnings.len(), 1);
    assert!(r.warnings[0].contains("waiter-0 waits for condition `c`"));
}

#[test]
fn lock_order_inversion_names_both_threads_and_mutexes() {
    let json = r#"{"tasks": {
        "a": {"loop": 1, "lock": "m1", "run": 1000, "lock1": "m2", "unlock": "m2", "unlock1": "m1"},
        "b": {"loop": 1, "lock": "m2", "run": 1000, "lock1": "m1", "unlock": "m1", "unlock1": "m2"}
    }}"#;
    let e = run(&spec_open("juno_r0", json), &mut [])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("a-0 waits for mutex `m2` (held by b-1)")
            && e.contains("b-1 waits for mutex `m1` (held by a-0)"),
        "{e}"
    );
}

#[test]
fn unbalanced_locking_is_rejected_before_the_run() {
    let json = r#"{"tasks": {"a": {"loop": 1, "unlock": "m", "run": 10}}}"#;
    let e = run(&spec("juno_r0", json, 10), &mut [])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("t.json:1:") && e.contains("unlocks mutex `m` it does not hold"),
        "{e}"
    );
    let json = r#"{"tasks": {"a": {"loop": 1, "run": 10, "wait": {"ref": "c", "mutex": "m"}}}}"#;
    let e = run(&spec("juno_r0", json, 10), &mut [])
        .unwrap_err()
        .to_string();
    assert!(e.contains("waits with mutex `m` it does not hold"), "{e}");
}

#[test]
fn barrier_releases_when_the_last_participant_arrives() {
    // rt-app's tutorial example 7, on the LITTLE CPUs of juno: the sequence its comment
    // describes, to the microsecond (runtime is wall time, whatever the CPU).
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/rtapp-examples/tutorial/example7.json"
    ))
    .unwrap();
    let (_, lines) = traced("juno_r0", &text, 7);
    // task1 reaches FIRST at 2 ms and waits; task0 arrives at 3 ms and wakes it
    assert_eq!(blocks_of(&lines, "task1-1")[0], 2000);
    assert_eq!(
        wakeups_of(&lines, "task1-1")[0],
        ("<idle>".to_string(), 3000)
    );
    // task0 reaches SECOND at 5 ms and waits; task1 arrives at 6 ms and wakes it
    assert!(blocks_of(&lines, "task0-0").contains(&5000));
    assert!(wakeups_of(&lines, "task0-0").contains(&("<idle>".to_string(), 6000)));
}

#[test]
fn suspend_resume_pair_by_name_and_semaphores_count() {
    let json = r#"{"tasks": {
        "ctl": {"cpus": [4], "loop": 3, "runtime": 1000, "resume": "wk", "sem_post": "s", "sleep": 4000},
        "wk": {"cpus": [5], "loop": -1, "suspend": "wk", "run": 500},
        "cons": {"cpus": [6], "loop": -1, "sem_wait": "s", "runtime": 200}
    }}"#;
    let (r, lines) = traced("hikey960", json, 30);
    let w: Vec<i64> = wakeups_of(&lines, "wk-1").iter().map(|x| x.1).collect();
    assert_eq!(w, vec![1000, 6000, 11000]);
    assert!(wakeups_of(&lines, "wk-1").iter().all(|x| x.0 == "<idle>"));
    let c: Vec<i64> = wakeups_of(&lines, "cons-2").iter().map(|x| x.1).collect();
    assert_eq!(c, vec![1000, 6000, 11000]);
    let cons = r.tasks.iter().find(|t| t.comm == "cons-2").unwrap();
    // one 200 µs run per post: the semaphore counts
    assert!(
        (cons.cpu_time_s - 3.0 * 200e-6).abs() < 1e-9,
        "{}",
        cons.cpu_time_s
    );
}

#[test]
fn fork_creates_named_threads_from_the_parent() {
    let json = r#"{"tasks": {
        "parent": {"loop": 2, "fork": "child", "run": 1000, "sleep": 10000},
        "child": {"instance": 0, "loop": 1, "run": 2000}
    }}"#;
    let (r, lines) = traced("juno_r0", json, 50);
    let names: Vec<&str> = r.tasks.iter().map(|t| t.comm.as_str()).collect();
    assert_eq!(names, ["parent-0", "child-1-0000", "child-2-0001"]);
    // the child is created by the parent (sched_wakeup_new in its context) and renames
    // itself from the parent's comm
    let i = find(
        &lines,
        0,
        &["parent-0-1001", "sched_wakeup_new", "pid=1002"],
    )
    .unwrap();
    assert!(find(
        &lines,
        i,
        &["task_rename", "oldcomm=parent-0 newcomm=child-1-0000"]
    )
    .is_some());
}

#[test]
fn timers_unique_and_shared_and_their_slack() {
    let json = r#"{"global": {"ftrace": "stats"}, "tasks": {
        "u": {"cpus": [4], "loop": 3, "run": 3000, "timer": {"ref": "unique", "period": 10000}},
        "s1": {"cpus": [5], "loop": 2, "run": 1000, "timer": {"ref": "shared", "period": 10000}},
        "s2": {"cpus": [6], "loop": 2, "run": 1000, "timer": {"ref": "shared", "period": 10000}}
    }}"#;
    let (_, lines) = traced(
        "hikey960",
        &json.replace(
            "{\"global\": {",
            "{\"global\": {\"calibration\": \"CPU4\", ",
        ),
        100,
    );
    let slacks = |comm: &str| -> Vec<i64> {
        lines
            .iter()
            .filter(|l| l.contains(&format!(" {comm}-")) && l.contains("rtapp_stats"))
            .map(|l| {
                let f = l.split("slack=").nth(1).unwrap();
                f.split(' ').next().unwrap().parse().unwrap()
            })
            .collect()
    };
    // run 3 ms of work on a big CPU at fmax, period 10 ms: 7 ms of slack each loop
    assert_eq!(slacks("u-0"), vec![7000, 7000, 7000]);
    // a shared timer advances once per use by any thread: s1 and s2 both use it at 1 ms,
    // the first takes t_next = 10 ms, the second 20 ms
    let (a, b) = (slacks("s1-1"), slacks("s2-2"));
    assert_eq!(a[0] + b[0], 9000 + 19000, "{a:?} {b:?}");
}

#[test]
fn per_phase_affinity_resets_to_all_cpus() {
    // rt-app resets cpus to "all" for a phase that does not set them
    let json = r#"{"tasks": {"t": {"loop": 1, "phases": {
        "p0": {"cpus": [1], "run": 5000},
        "p1": {"run": 5000, "cpus": [7]},
        "p2": {"run": 5000}
    }}}}"#;
    let (r, _) = traced("hikey960", json, 100);
    let t = &r.tasks[0];
    let on = |cpu: usize| t.residency_s.get(cpu).copied().unwrap_or(0.0);
    assert!(on(1) > 0.0 && on(7) > 0.0, "{:?}", t.residency_s);
}

#[test]
fn fifo_preempts_fair_and_yield_hands_over() {
    let json = r#"{"tasks": {
        "fair": {"cpus": [0], "loop": 1, "run": 10000},
        "rt": {"cpus": [0], "policy": "SCHED_FIFO", "priority": 10, "loop": 1,
               "delay": 2000, "run": 1000},
        "y1": {"cpus": [3], "loop": 1, "run": 1000, "yield": "", "run1": 1000},
        "y2": {"cpus": [3], "loop": 1, "run": 1000}
    }}"#;
    let (_, lines) = traced("hikey960", json, 50);
    // the RT task preempts the fair one at 2 ms (prev_state 0: preempted)
    let i = find(
        &lines,
        0,
        &["prev_comm=fair-0", "prev_state=0", "next_comm=rt-1"],
    )
    .unwrap();
    assert_eq!(t_us(&lines[i]), 2000);
    assert!(lines[i].contains("next_prio=89"));
    // y1 yields after its first run: y2 runs before y1's second run completes
    let y = find(
        &lines,
        0,
        &["prev_comm=y1-2", "prev_state=0", "next_pid=1004"],
    );
    assert!(y.is_some());
}

/// The wake-ups of the two tests below (their documentation says what happens).
fn wake_up_scenario() -> Vec<String> {
    let json = r#"{"tasks": {
        "ctl": {"cpus": [4], "loop": 1, "sleep": 2000, "resume": "near", "resume": "far",
                "resume": "idle", "resume": "mover", "run": 100},
        "near": {"cpus": [5], "loop": 1, "suspend": "near", "run": 100},
        "far": {"cpus": [0], "loop": 1, "suspend": "far", "run": 100},
        "idle": {"cpus": [6], "loop": 1, "suspend": "idle", "run": 100},
        "mover": {"cpus": [7], "loop": 1, "suspend": "mover", "run": 100},
        "hog5": {"cpus": [5], "loop": 1, "delay": 500, "runtime": 5000},
        "hog0": {"cpus": [0], "loop": 1, "delay": 500, "runtime": 5000},
        "hog7": {"cpus": [7], "loop": 1, "delay": 500, "runtime": 5000}
    }}"#;
    // mover may run anywhere after its start: widen its affinity once it has slept
    let json = json.replace(
        r#""mover": {"cpus": [7], "loop": 1, "suspend": "mover""#,
        r#""mover": {"loop": 1, "phases": {"p0": {"cpus": [7], "run": 10}, "p1": {"cpus": [4, 5, 6, 7], "suspend": "mover", "run": 100}}"#,
    );
    traced("hikey960", &json, 10).1
}

/// The contexts of a wake-up's events (v6.11 `try_to_wake_up()`): `sched_migrate_task`
/// comes from the waking CPU (`set_task_cpu()` runs there); `sched_wakeup` from the CPU
/// that activates the task — the target, from its wakelist, when it is idle or in
/// another cluster (`ttwu_queue_cond()`: no shared cache), else the waker itself. On
/// hikey960 (CPUs 0–3 and 4–7 share their cluster's cache), `ctl` on CPU 4 resumes
/// `near` (CPU 5, busy with `hog5`: activated by `ctl`), `far` (CPU 0, busy with `hog0`:
/// activated there, in `hog0`'s context) and `idle` (CPU 6, idle: activated there by
/// `<idle>`); `mover` slept on CPU 7, which `hog7` took meanwhile, so its wake-up moves it
/// to an idle CPU of the cluster, traced from `ctl` on CPU 4.
#[test]
fn wake_up_events_carry_the_waker_or_the_activating_cpu() {
    let lines = wake_up_scenario();
    let ctx_of = |comm: &str, event: &str| -> (String, String) {
        let pat = format!("{event}:");
        let l = lines
            .iter()
            .find(|l| l.contains(&pat) && l.contains(&format!("comm={comm} ")) && t_us(l) >= 2000)
            .unwrap_or_else(|| panic!("no {event} of {comm}"));
        let head = l.trim_start();
        let who = head.split(' ').next().unwrap().rsplit_once('-').unwrap().0;
        let cpu = &l[l.find('[').unwrap() + 1..l.find(']').unwrap()];
        (who.to_string(), cpu.to_string())
    };
    let s = |a: &str, b: &str| (a.to_string(), b.to_string());
    assert_eq!(ctx_of("near-1", "sched_wakeup"), s("ctl-0", "004"));
    assert_eq!(ctx_of("far-2", "sched_wakeup"), s("hog0-6", "000"));
    assert_eq!(ctx_of("idle-3", "sched_wakeup"), s("<idle>", "006"));
    assert_eq!(ctx_of("mover-4", "sched_migrate_task"), s("ctl-0", "004"));
}

/// `sched_waking` (v6.11 `try_to_wake_up()` → `trace_sched_waking()`): traced by the
/// waking CPU before the placement, `target_cpu` the CPU the task last ran on. In
/// [`wake_up_scenario`] the wake-up of each of `ctl`'s four resumes is traced by `ctl` on
/// CPU 4 with the CPU its task last switched out on, and `mover`'s comes before its
/// migration. Every
/// `sched_wakeup` of the run has its `sched_waking`, at the same time, for the same pid.
#[test]
fn sched_waking_is_the_wakers_before_the_placement() {
    let lines = wake_up_scenario();
    let after = |l: &String| t_us(l) >= 2000;
    let waking = |comm: &str| {
        (0..lines.len())
            .find(|&i| {
                lines[i].contains("sched_waking:")
                    && lines[i].contains(&format!("comm={comm} "))
                    && after(&lines[i])
            })
            .unwrap_or_else(|| panic!("no sched_waking of {comm}"))
    };
    for comm in ["near-1", "far-2", "idle-3", "mover-4"] {
        let i = waking(comm);
        let l = &lines[i];
        assert!(l.trim_start().starts_with("ctl-0-"), "{l}");
        assert!(l.contains("[004]"), "{l}");
        // the CPU it last ran on: where it last switched out
        let out = (0..i)
            .rev()
            .find(|&j| {
                lines[j].contains("sched_switch:")
                    && lines[j].contains(&format!("prev_comm={comm} "))
            })
            .unwrap();
        let cpu = &lines[out][lines[out].find('[').unwrap() + 1..lines[out].find(']').unwrap()];
        assert!(l.ends_with(&format!("target_cpu={cpu}")), "{l}");
    }
    let migrate = (0..lines.len())
        .find(|&i| {
            lines[i].contains("sched_migrate_task:")
                && lines[i].contains("comm=mover-4 ")
                && after(&lines[i])
        })
        .unwrap();
    assert!(waking("mover-4") < migrate);
    let key = |l: &String| {
        let pid = l.split(" pid=").nth(1).unwrap().split(' ').next().unwrap();
        (t_us(l), pid.to_string())
    };
    let wakings: std::collections::HashSet<_> = lines
        .iter()
        .filter(|l| l.contains("sched_waking:"))
        .map(key)
        .collect();
    let wakeups: Vec<_> = lines
        .iter()
        .filter(|l| l.contains("sched_wakeup:"))
        .collect();
    assert!(wakeups.len() >= 4);
    for l in wakeups {
        assert!(wakings.contains(&key(l)), "no sched_waking for {l}");
    }
}
