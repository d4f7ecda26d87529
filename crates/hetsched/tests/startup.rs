//! How a run starts (issue 22): rt-app's main thread (pid 1000, comm `rt-app`) runs from
//! the start, creates the workload's threads one after another in file order
//! (`create_thread()` → `pthread_create()` → `clone()`, src/rt-app.c), each placed by the
//! kernel's fork placement from the main thread's CPU (`wake_up_new_task()` →
//! `select_task_rq_fair(WF_FORK)` → `sched_balance_find_dst_cpu()`) with the initial
//! utilization of `post_init_entity_util_avg()` on the CPU chosen (kernel/sched/core.c,
//! fair.c, v6.11); the threads wait for one another at rt-app's start barrier, then set
//! their own parameters; the main thread waits for them (`pthread_join()`) and exits.
//!
//! Most tests run on `tests/data/qemu_2b2l.yaml`, the platform of the comparison in issue
//! 22: LITTLE CPUs 0–1 (capacity 446), big CPUs 2–3 (1024), the same work speed on all,
//! one frequency.

// Test helpers panic on unexpected failures by design.
#![allow(clippy::unwrap_used)]

use hetsched::hetsched_core::options::Options;
use hetsched::hetsched_core::trace::TraceSink;
use hetsched::hetsched_core::workload::Event;
use hetsched::hetsched_core::{run, RunError, RunResult, RunSpec};
use hetsched::hetsched_trace::FtraceTextSink;

const QEMU: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/qemu_2b2l.yaml");

fn spec(platform: &str, json: &str, sets: &[&str]) -> RunSpec {
    let sets: Vec<&str> = ["cpufreq.governor=performance"]
        .into_iter()
        .chain(sets.iter().copied())
        .collect();
    RunSpec {
        platform: hetsched::load_platform(platform).unwrap(),
        workload: hetsched::hetsched_rtapp::parse_str(json, "t.json", &Default::default()).unwrap(),
        options: Options::default().apply_sets(&sets).unwrap(),
        seed: 1,
        duration_ns: None,
    }
}

fn traced(s: &RunSpec) -> (RunResult, Vec<String>) {
    let mut sink = FtraceTextSink::new(Vec::new());
    let r = {
        let mut sinks: [&mut dyn TraceSink; 1] = [&mut sink];
        run(s, &mut sinks).unwrap()
    };
    let text = String::from_utf8(sink.into_inner().unwrap()).unwrap();
    let lines = text
        .lines()
        .filter(|l| l.contains(": ") && !l.starts_with('#'))
        .map(str::to_string)
        .collect();
    (r, lines)
}

/// Timestamp in µs after the 1 s start.
fn t_us(line: &str) -> i64 {
    let ts = line.split(']').nth(1).unwrap().trim();
    let ts = ts.split(':').next().unwrap();
    let (s, us) = ts.split_once('.').unwrap();
    (s.parse::<i64>().unwrap() - 1) * 1_000_000 + us.parse::<i64>().unwrap()
}

/// `key=` field of a trace line.
fn field<'a>(line: &'a str, key: &str) -> &'a str {
    let at = line.find(&format!(" {key}=")).unwrap() + key.len() + 2;
    line[at..].split(' ').next().unwrap()
}

/// The context of a trace line: `(comm, pid, cpu)`.
fn ctx(line: &str) -> (String, u32, usize) {
    let head = line.split('[').next().unwrap().trim();
    let (comm, pid) = head.rsplit_once('-').unwrap();
    let cpu = line.split('[').nth(1).unwrap()[..3].parse().unwrap();
    (comm.to_string(), pid.parse().unwrap(), cpu)
}

fn is(line: &str, event: &str) -> bool {
    line.contains(&format!(" {event}:"))
}

/// `util` of the first `sched_pelt_se` of `pid`: its initial utilization.
fn first_util(lines: &[String], pid: u32) -> (usize, u64) {
    let l = lines
        .iter()
        .find(|l| is(l, "sched_pelt_se") && field(l, "pid") == pid.to_string())
        .unwrap();
    (
        field(l, "cpu").parse().unwrap(),
        field(l, "util").parse().unwrap(),
    )
}

const FOUR: &str = r#"{ "global": { "calibration": 1000, "ftrace": "main,task" },
  "tasks": {
    "a": { "instance": 2, "loop": 3, "run": 1000, "sleep": 1000 },
    "b": { "loop": 3, "run": 1000, "sleep": 1000 },
    "c": { "loop": 3, "run": 1000, "sleep": 1000 } } }"#;

/// The main thread as a board's trace shows it: `rt-app` (pid 1000) starts on the first
/// big CPU (an integer calibration: `rtapp.main_cpu` unset), writes `rtapp_main:
/// event=start`, forks the four threads in file order (`a-0`, `a-1`, `b-2`, `c-3`, pids
/// 1001–1004), one every 50 µs of its CPU work (`rtapp.create_thread_us`), each
/// `sched_wakeup_new` in its context on its CPU; it then waits in `pthread_join()` for
/// thread 0, is woken by thread 0's exit, writes `rtapp_main: event=end` and exits last.
/// It is not a workload task in the results.
#[test]
fn the_main_thread_creates_the_threads_in_file_order_and_joins_them() {
    let (r, lines) = traced(&spec(QEMU, FOUR, &["trace.signals=false"]));
    let sched: Vec<&String> = lines
        .iter()
        .filter(|l| !is(l, "cpu_idle") && !is(l, "cpu_frequency"))
        .collect();
    // the run begins with the main thread on CPU 2
    assert!(is(sched[0], "sched_wakeup_new"), "{}", sched[0]);
    assert_eq!(
        (field(sched[0], "comm"), field(sched[0], "pid")),
        ("rt-app", "1000")
    );
    assert_eq!(field(sched[0], "target_cpu"), "002");
    assert!(is(sched[1], "sched_switch") && field(sched[1], "next_pid") == "1000");
    assert_eq!(ctx(sched[1]).2, 2);
    assert!(sched[2].contains("rtapp_main: event=start"));
    assert_eq!(ctx(sched[2]), ("rt-app".to_string(), 1000, 2));
    // the forks: from the main thread on CPU 2, in file order, 50 µs apart
    let forks: Vec<(i64, String, u32)> = lines
        .iter()
        .filter(|l| is(l, "sched_wakeup_new") && field(l, "pid") != "1000")
        .map(|l| {
            assert_eq!(ctx(l), ("rt-app".to_string(), 1000, 2), "{l}");
            assert_eq!(field(l, "comm"), "rt-app");
            (t_us(l), field(l, "pid").to_string(), 0)
        })
        .map(|(t, pid, _)| (t, pid.clone(), pid.parse().unwrap()))
        .collect();
    let times: Vec<i64> = forks.iter().map(|f| f.0).collect();
    assert_eq!(times, [50, 100, 150, 200]);
    let renames: Vec<(u32, String)> = lines
        .iter()
        .filter(|l| is(l, "task_rename"))
        .map(|l| {
            assert_eq!(field(l, "oldcomm"), "rt-app");
            (
                field(l, "pid").parse().unwrap(),
                field(l, "newcomm").to_string(),
            )
        })
        .collect();
    let want: Vec<(u32, String)> = [(1001, "a-0"), (1002, "a-1"), (1003, "b-2"), (1004, "c-3")]
        .iter()
        .map(|&(p, c)| (p, c.to_string()))
        .collect();
    assert_eq!(renames, want);
    // after the last fork the main thread sleeps in pthread_join()
    let sleeps = lines.iter().find(|l| {
        is(l, "sched_switch") && field(l, "prev_pid") == "1000" && field(l, "prev_state") == "1"
    });
    assert_eq!(t_us(sleeps.unwrap()), 200);
    // thread 0's exit wakes it (mm_release() → futex wake), before its sched_process_exit
    let woken = lines
        .iter()
        .position(|l| is(l, "sched_wakeup") && field(l, "pid") == "1000")
        .unwrap();
    // thread 0 exits on a LITTLE; the main thread's big CPU 2 is idle and shares no
    // cache with it: activated there from its wakelist (`ttwu_queue_cond()`)
    assert_eq!(ctx(&lines[woken]), ("<idle>".to_string(), 0, 2));
    let exit0 = lines
        .iter()
        .position(|l| is(l, "sched_process_exit") && field(l, "pid") == "1001")
        .unwrap();
    assert!(woken < exit0);
    for pid in 1002..=1004 {
        let exit = lines
            .iter()
            .position(|l| is(l, "sched_process_exit") && field(l, "pid") == pid.to_string())
            .unwrap();
        assert!(exit <= exit0, "thread {pid} exits after thread 0 here");
    }
    // the main thread's end marker and exit close the run
    let last: Vec<&&String> = sched.iter().rev().take(3).collect();
    assert!(is(last[0], "sched_switch") && field(last[0], "prev_state") == "16");
    assert!(is(last[1], "sched_process_exit") && field(last[1], "pid") == "1000");
    assert!(last[2].contains("rtapp_main: event=end"));
    // results: the main thread apart from the workload's tasks
    let pids: Vec<u32> = r.tasks.iter().map(|t| t.pid).collect();
    assert_eq!(pids, [1001, 1002, 1003, 1004]);
    let main = r.main_thread.as_ref().unwrap();
    assert_eq!((main.pid, main.comm.as_str()), (1000, "rt-app"));
    // 4 × 50 µs of creation on a big CPU
    assert!(
        (main.cpu_time_s - 200e-6).abs() < 1e-9,
        "{}",
        main.cpu_time_s
    );
    assert!(main.completion_s.is_some());
}

/// `sched_balance_find_dst_cpu()` from the main thread's big CPU 2 (v6.11): at the PKG
/// level the LITTLE group has two idle CPUs and the local big group one (CPU 2 runs the
/// main thread), so `sched_balance_find_dst_group()` returns the LITTLE group and the
/// first thread lands on CPU 0, the first of two idle CPUs with the same `idle_stamp`.
/// `post_init_entity_util_avg()` on CPU 0, whose cfs_rq has no utilization, gives it half
/// CPU 0's capacity, 446 / 2 = 223. The next thread comes when the first sleeps at the
/// start barrier: CPU 0 is idle again and has the latest `idle_stamp`, so it lands there
/// too, with `util = 223 × 1024 / (1024 + 1) = 222` capped at `(446 − 223) / 2 = 111`;
/// and so on, halving. From a LITTLE main thread (`rtapp.main_cpu=0`) the big group is
/// the idlest: the first thread lands on CPU 2 with 1024 / 2 = 512.
#[test]
fn the_first_forks_land_where_find_dst_cpu_puts_them_with_post_init_util() {
    let (_, lines) = traced(&spec(QEMU, FOUR, &[]));
    let utils: Vec<(usize, u64)> = (1001..=1004).map(|p| first_util(&lines, p)).collect();
    assert_eq!(utils, [(0, 223), (0, 111), (0, 56), (0, 28)]);
    let (_, lines) = traced(&spec(QEMU, FOUR, &["rtapp.main_cpu=0"]));
    assert_eq!(first_util(&lines, 1000), (0, 223));
    let utils: Vec<(usize, u64)> = (1001..=1004).map(|p| first_util(&lines, p)).collect();
    assert_eq!(utils, [(2, 512), (2, 256), (2, 128), (2, 64)]);
    // the main thread itself starts as a new task on its CPU: half the big's capacity
    let (_, lines) = traced(&spec(QEMU, FOUR, &[]));
    assert_eq!(first_util(&lines, 1000), (2, 512));
}

/// Where the main thread starts: with `"calibration": "CPUn"` rt-app pins itself to CPU n
/// to calibrate and its restored affinity leaves it there (`main()`); with an integer
/// pLoad, the first CPU of the highest capacity; `rtapp.main_cpu` overrides both and must
/// name a CPU of the platform.
#[test]
fn the_main_thread_starts_on_the_calibration_cpu_or_the_first_big() {
    let main_cpu = |json: &str, sets: &[&str]| {
        let (_, lines) = traced(&spec("hikey960", json, sets));
        let l = lines
            .iter()
            .find(|l| is(l, "sched_wakeup_new") && field(l, "pid") == "1000")
            .unwrap()
            .clone();
        field(&l, "target_cpu").parse::<usize>().unwrap()
    };
    let w = |calibration: &str| {
        format!(
            r#"{{ "global": {{ "calibration": {calibration} }}, "tasks": {{ "t": {{ "loop": 1, "run": 100 }} }} }}"#
        )
    };
    assert_eq!(main_cpu(&w(r#""CPU1""#), &[]), 1);
    assert_eq!(main_cpu(&w("500"), &[]), 4);
    assert_eq!(main_cpu(&w("500"), &["rtapp.main_cpu=6"]), 6);
    let s = spec("hikey960", &w("500"), &["rtapp.main_cpu=8"]);
    match run(&s, &mut []) {
        Err(RunError::Options(e)) => assert!(e.to_string().contains("rtapp.main_cpu"), "{e}"),
        other => panic!("{other:?}"),
    }
}

/// rt-app's `threads_barrier`: each thread created at the start runs its start work
/// (`rtapp.thread_start_us`, 10 µs), thread 0 reads `t_zero` (`rtapp_main:
/// event=clock_ref`), and each sleeps at the barrier until the last one arrives and wakes
/// the others, in the order they arrived, from its CPU; only then does any thread write
/// `rtapp_task: event=start`. Timers count from `t_zero`: with a 10 ms period the first
/// wake-ups are at `t_zero` + 10 ms, not at the barrier's release.
#[test]
fn the_threads_wait_at_the_start_barrier_and_count_from_t_zero() {
    let json = r#"{ "global": { "calibration": 1000, "ftrace": "main,task", "duration": 1 },
      "tasks": { "p": { "instance": 3, "loop": 3, "run": 500,
                        "timer": { "ref": "unique", "period": 10000 } } } }"#;
    let (_, lines) = traced(&spec(QEMU, json, &["trace.signals=false"]));
    let clock_ref = lines
        .iter()
        .find(|l| l.contains("event=clock_ref"))
        .unwrap();
    assert_eq!(ctx(clock_ref).1, 1001);
    let t_zero = t_us(clock_ref);
    assert_eq!(t_zero, 60, "thread 0: forked at 50 µs, 10 µs of start work");
    assert_eq!(field(clock_ref, "data"), (1_000_000 + t_zero).to_string());
    // threads 0 and 1 sleep at the barrier; thread 2 arrives last and wakes them
    for pid in ["1001", "1002"] {
        assert!(lines.iter().any(|l| {
            is(l, "sched_switch")
                && field(l, "prev_pid") == pid
                && field(l, "prev_state") == "1"
                && t_us(l) < 200
        }));
    }
    // (woken onto idle CPUs, each is activated there from its wakelist: `<idle>`)
    let release: Vec<&String> = lines
        .iter()
        .filter(|l| is(l, "sched_wakeup") && t_us(l) > 60)
        .take(2)
        .collect();
    let woken: Vec<&str> = release.iter().map(|l| field(l, "pid")).collect();
    assert_eq!(woken, ["1001", "1002"]);
    let migrations: Vec<(u32, &str)> = lines
        .iter()
        .filter(|l| is(l, "sched_migrate_task") && t_us(l) == t_us(release[0]))
        .map(|l| (ctx(l).1, field(l, "pid")))
        .collect();
    // a wake-up's migration is traced by the waker, thread 2
    assert!(migrations.iter().all(|m| m.0 == 1003), "{migrations:?}");
    let at = t_us(release[0]);
    assert_eq!(at, 160, "thread 2: forked at 150 µs, 10 µs of start work");
    let first_start = lines
        .iter()
        .find(|l| l.contains("rtapp_task: event=start"))
        .unwrap();
    assert_eq!(t_us(first_start), at);
    // the first timer expiry of each thread: t_zero + 10 ms
    for pid in ["1001", "1002", "1003"] {
        let w = lines
            .iter()
            .find(|l| is(l, "sched_wakeup") && field(l, "pid") == pid && t_us(l) > at)
            .unwrap();
        assert_eq!(t_us(w), t_zero + 10_000, "{w}");
    }
}

/// A thread is a copy of the thread that creates it (`copy_process()`, `sched_fork()`):
/// forked by the main thread it is SCHED_OTHER (prio 120) with every CPU allowed, so a
/// SCHED_FIFO task pinned to a LITTLE is placed by the fair fork placement (and given a
/// fair initial utilization) like any other, and becomes FIFO (prio 89) and moves to its
/// CPU only after the barrier, when rt-app's `set_thread_param()` and
/// `set_thread_affinity()` run: its running thread is moved by the stopper. With
/// `rtapp.main_thread=false` it is created FIFO and on its CPU at once.
#[test]
fn threads_start_with_the_main_threads_parameters_and_set_their_own() {
    let json = r#"{ "global": { "calibration": 1000, "duration": 1 },
      "tasks": { "f": { "policy": "SCHED_FIFO", "priority": 10, "cpus": [1], "loop": 2,
                        "run": 1000, "sleep": 1000 } } }"#;
    let (_, lines) = traced(&spec(QEMU, json, &[]));
    let new = lines
        .iter()
        .find(|l| is(l, "sched_wakeup_new") && field(l, "pid") == "1001")
        .unwrap();
    assert_eq!(field(new, "prio"), "120");
    assert_eq!(field(new, "target_cpu"), "000");
    assert!(lines
        .iter()
        .any(|l| is(l, "sched_pelt_se") && field(l, "pid") == "1001"));
    let moved = lines
        .iter()
        .find(|l| is(l, "sched_migrate_task") && field(l, "pid") == "1001")
        .unwrap();
    assert_eq!(ctx(moved).0, "migration/0");
    assert_eq!(
        (field(moved, "prio"), field(moved, "dest_cpu")),
        ("89", "1")
    );
    // the old start: created FIFO on CPU 1
    let (_, lines) = traced(&spec(QEMU, json, &["rtapp.main_thread=false"]));
    let new = lines.iter().find(|l| is(l, "sched_wakeup_new")).unwrap();
    assert_eq!(
        (
            field(new, "pid"),
            field(new, "prio"),
            field(new, "target_cpu")
        ),
        ("1001", "89", "001")
    );
}

/// `rtapp.main_thread=false` is the start before issue 22: no main thread in the trace or
/// the results, every thread created at the start from CPU 0 in the same instant, the
/// `rtapp_main` markers written from CPU 0.
#[test]
fn without_the_main_thread_every_thread_is_created_at_once() {
    let (r, lines) = traced(&spec(QEMU, FOUR, &["rtapp.main_thread=false"]));
    assert!(r.main_thread.is_none());
    assert!(!lines.iter().any(|l| l.contains("pid=1000 ")));
    let new: Vec<i64> = lines
        .iter()
        .filter(|l| is(l, "sched_wakeup_new"))
        .map(|l| t_us(l))
        .collect();
    assert_eq!(new, [0, 0, 0, 0]);
    let start = lines
        .iter()
        .find(|l| l.contains("rtapp_main: event=start"))
        .unwrap();
    assert_eq!(ctx(start), ("rt-app".to_string(), 1000, 0));
}

/// A `fork` event is `create_thread()` in the forking thread: 50 µs of its CPU work
/// (`rtapp.create_thread_us`), then the clone from its CPU; the child is a copy of its
/// parent (here SCHED_FIFO 10: an RT task, so no fair initial utilization, placed by
/// `select_task_rq_rt()`) and does not wait at the start barrier. A SCHED_DEADLINE thread
/// cannot fork (`sched_fork()` returns -EAGAIN) and rt-app exits.
#[test]
fn a_fork_event_creates_a_copy_of_its_thread() {
    let json = r#"{ "global": { "calibration": 1000, "duration": 1 },
      "tasks": {
        "p": { "policy": "SCHED_FIFO", "priority": 10, "cpus": [3], "loop": 1,
               "phases": { "a": { "run": 1000 }, "b": { "fork": "k", "run": 1000 } } },
        "k": { "instance": 0, "loop": 1, "run": 1000 } } }"#;
    let (_, lines) = traced(&spec(QEMU, json, &["trace.signals=false"]));
    // p runs alone on a big CPU from its first switch-in: 10 µs of start work, phase a's
    // 1000 µs, then the fork's 50 µs of create_thread()
    let p_starts = lines
        .iter()
        .find(|l| is(l, "sched_switch") && field(l, "next_pid") == "1001")
        .map(|l| t_us(l))
        .unwrap();
    let new = lines
        .iter()
        .find(|l| is(l, "sched_wakeup_new") && field(l, "pid") == "1002")
        .unwrap();
    assert_eq!(ctx(new), ("p-0".to_string(), 1001, 3));
    assert_eq!(field(new, "prio"), "89");
    assert_eq!(t_us(new), p_starts + 10 + 1000 + 50, "{new}");
    let renamed = lines
        .iter()
        .find(|l| is(l, "task_rename") && field(l, "pid") == "1002")
        .unwrap();
    assert_eq!(field(renamed, "newcomm"), "k-1-0000");
    let dl = r#"{ "global": { "calibration": 1000, "duration": 1 },
      "tasks": {
        "p": { "policy": "SCHED_DEADLINE", "dl-runtime": 2000, "dl-period": 10000,
               "loop": 1, "fork": "k" },
        "k": { "instance": 0, "loop": 1, "run": 1000 } } }"#;
    match run(&spec(QEMU, dl, &[]), &mut []) {
        Err(RunError::Runtime(_, msg)) => assert!(msg.contains("EAGAIN"), "{msg}"),
        other => panic!("{other:?}"),
    }
}

/// The same spec twice gives the same bytes with the main thread, on a workload with
/// forks, barriers and the noise model's per-task offsets.
#[test]
fn the_start_up_is_deterministic() {
    let json = r#"{ "global": { "duration": 1, "calibration": "CPU0" },
      "tasks": {
        "a": { "instance": 3, "loop": -1, "run": 2000, "timer": { "ref": "unique", "period": 8000 } },
        "b": { "delay": 3000, "loop": -1, "barrier": "x", "run": 3000, "sleep": 2000 },
        "c": { "loop": -1, "barrier": "x", "run": 1000, "fork": "d", "sleep": 20000 },
        "d": { "instance": 0, "loop": 1, "run": 500 } } }"#;
    let bytes = || {
        let s = spec("hikey960", json, &[]);
        let mut sink = FtraceTextSink::new(Vec::new());
        let r = {
            let mut sinks: [&mut dyn TraceSink; 1] = [&mut sink];
            run(&s, &mut sinks).unwrap()
        };
        (
            sink.into_inner().unwrap(),
            serde_json::to_string(&r).unwrap(),
        )
    };
    assert_eq!(bytes(), bytes());
}

/// The noise model's background tasks are the system's (issue 22): they exist before
/// rt-app starts, asleep, and first wake on their own CPUs at their random phase
/// (`sched_waking` and `sched_wakeup` from the CPU they are named after — a pinned
/// `kthread<N>` on CPU N),
/// never forked by rt-app's main thread, never at its start barrier, writing no rt-app
/// markers; the main thread creates and joins only its own four threads and exits while
/// the background runs on. Their pids are the ones they had as rt-app's threads (after
/// the threads created at the start), and a `fork` event's thread comes after them.
#[test]
fn the_background_exists_before_rt_app_and_is_not_its_threads() {
    use hetsched::hetsched_core::noise::{apply_noise, NoiseConfig};
    let mut s = spec(QEMU, FOUR, &["trace.signals=false"]);
    s.workload = apply_noise(&s.workload, &NoiseConfig::default(), 4, 5);
    assert_eq!(s.workload.system_tasks, 8);
    let (r, lines) = traced(&s);
    let forked: Vec<u32> = lines
        .iter()
        .filter(|l| is(l, "sched_wakeup_new"))
        .map(|l| field(l, "pid").parse().unwrap())
        .collect();
    assert_eq!(forked, [1000, 1001, 1002, 1003, 1004]);
    let delays: Vec<u64> = s.workload.tasks[3..].iter().map(|t| t.delay_us).collect();
    for (k, delay) in delays.iter().enumerate() {
        let pid = 1005 + k as u32;
        let mut own = lines
            .iter()
            .filter(|l| field_opt(l, "pid") == Some(pid.to_string()) || ctx(l).1 == pid);
        // `sched_waking` from the CPU it last ran on, then `sched_wakeup`
        let waking = own.next().unwrap();
        assert!(is(waking, "sched_waking"), "{waking}");
        assert_eq!(t_us(waking), *delay as i64, "{waking}");
        assert_eq!(ctx(waking).2, k % 4, "{waking}");
        let first = own.next().unwrap();
        assert!(is(first, "sched_wakeup"), "{first}");
        assert_eq!(t_us(first), *delay as i64, "{first}");
        let name = if k < 4 { "bgnoise" } else { "kthread" };
        assert_eq!(field(first, "comm"), format!("{name}{}", k % 4));
        if k >= 4 {
            assert_eq!(field(first, "target_cpu"), format!("{:03}", k % 4));
        }
        assert!(
            !lines.iter().any(|l| is(l, "print") && ctx(l).1 == pid),
            "no rt-app marker from {pid}"
        );
    }
    let comms: Vec<(u32, &str)> = r.tasks.iter().map(|t| (t.pid, t.comm.as_str())).collect();
    assert_eq!(
        comms[4..],
        [
            (1005, "bgnoise0"),
            (1006, "bgnoise1"),
            (1007, "bgnoise2"),
            (1008, "bgnoise3"),
            (1009, "kthread0"),
            (1010, "kthread1"),
            (1011, "kthread2"),
            (1012, "kthread3")
        ]
    );
    // the main thread joins its own threads only: it exits before the background ends
    let main_exit = lines
        .iter()
        .position(|l| is(l, "sched_process_exit") && field(l, "pid") == "1000")
        .unwrap();
    let bg_after = lines[main_exit..]
        .iter()
        .filter(|l| is(l, "sched_switch") && field(l, "next_comm").starts_with("bgnoise"))
        .count();
    assert!(bg_after > 0, "the background runs on after rt-app exits");
}

fn field_opt(line: &str, key: &str) -> Option<String> {
    let at = line.find(&format!(" {key}="))? + key.len() + 2;
    line[at..].split(' ').next().map(str::to_string)
}

/// The CPUs have been idle for different times when rt-app starts (issue 22): each went
/// idle when the system task that last ran there ended, one period before its first
/// activation (`rq->idle_stamp`, stamped by `sched_balance_newidle()`, v6.11), so
/// `sched_balance_find_dst_group_cpu()` sends the first thread to the LITTLE CPU idled
/// most recently, which the noise seed decides. Before, every CPU had the same stamp and
/// the first thread landed on CPU 0 for every seed.
#[test]
fn the_first_thread_lands_on_the_most_recently_idled_little() {
    use hetsched::hetsched_core::noise::{apply_noise, NoiseConfig};
    let cfg = NoiseConfig::default();
    let mut seen = [0usize; 2];
    for seed in 0..12 {
        let mut s = spec(QEMU, FOUR, &[]);
        s.workload = apply_noise(&s.workload, &cfg, 4, seed);
        let system = &s.workload.tasks[s.workload.first_system_task()..];
        // a background activation within the creation would stamp its CPU again
        if system.iter().any(|t| t.delay_us < 2_000) {
            continue;
        }
        // µs before the start that CPU c went idle: its system tasks' latest end
        let idle_for = |c: usize| {
            system
                .iter()
                .filter(|t| t.name == format!("bgnoise{c}") || t.name == format!("kthread{c}"))
                .map(|t| {
                    let (run, period) = match t.phases[0].events.as_slice() {
                        [r, p] => match (&r.event, &p.event) {
                            (Event::Run { us }, Event::Timer { period_us, .. }) => {
                                (*us, *period_us)
                            }
                            _ => unreachable!("the noise model's program"),
                        },
                        _ => unreachable!("the noise model's program"),
                    };
                    let before = period - t.delay_us;
                    if before > run {
                        before - run
                    } else {
                        before
                    }
                })
                .min()
                .unwrap()
        };
        let (a, b) = (idle_for(0), idle_for(1));
        if a == b {
            continue;
        }
        let want = if a < b { 0 } else { 1 };
        let (_, lines) = traced(&s);
        assert_eq!(
            first_util(&lines, 1001).0,
            want,
            "seed {seed}: idle for {a} and {b} µs"
        );
        seen[want] += 1;
    }
    assert!(
        seen[0] > 0 && seen[1] > 0,
        "both LITTLEs over the seeds: {seen:?}"
    );
}
