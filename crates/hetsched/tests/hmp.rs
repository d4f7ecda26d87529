//! HMP task placement (seed 001; LSK 3.10 big.LITTLE MP, `hmp.enabled`) in the engine,
//! read from the trace on tc2 (CPUs 0–1 Cortex-A15, 2–4 Cortex-A7): fork boost, down- and
//! up-migration at wake-up with `sched_hmp_migrate`, the priority filter.

// Tests panic on unexpected failures by design.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::{field, t_us, traced};

/// `sched_hmp_migrate` lines of `comm`: (time µs, dest CPU, reason).
fn hmp_moves(lines: &[String], comm: &str) -> Vec<(i64, u32, u32)> {
    lines
        .iter()
        .filter(|l| l.contains("sched_hmp_migrate:") && field(l, "comm") == comm)
        .map(|l| {
            let dest = field(l, "dest").parse().unwrap();
            let force = field(l, "force").parse().unwrap();
            (t_us(l), dest, force)
        })
        .collect()
}

/// CPU the first `sched_switch` into `comm` at or after `from_us` runs on.
fn runs_on_after(lines: &[String], comm: &str, from_us: i64) -> u32 {
    let l = lines
        .iter()
        .find(|l| {
            l.contains("sched_switch:") && field(l, "next_comm") == comm && t_us(l) >= from_us
        })
        .expect("it runs");
    let cpu = &l[l.find('[').unwrap() + 1..l.find(']').unwrap()];
    cpu.parse().unwrap()
}

/// A light periodic phase (1 ms every 16 ms) then a heavy one (11 ms of work at a big
/// CPU's speed every 32 ms: 26 ms of a LITTLE's, so that it still sleeps there; HMP moves
/// tasks at wake-ups in what is modelled so far).
const LIGHT_THEN_HEAVY: &str = r#"{ "global": { "duration": 1, "calibration": "CPU0" },
  "tasks": { "t": { "phases": {
    "light": { "loop": 20, "run": 1000, "timer": { "ref": "t", "period": 16000 } },
    "heavy": { "loop": -1, "run": 11000, "timer": { "ref": "t", "period": 32000 } } } } } }"#;

/// A new task starts on a big CPU (fork boost: a saturated history), a light one goes down
/// to a LITTLE at a wake-up once its boosted ratio fell under `hmp_down_threshold` (512),
/// and goes back up at a wake-up, to an idle big CPU, once its ratio reached
/// `hmp_up_threshold` (700); each move is a `sched_hmp_migrate` with reason 0 (wakeup).
#[test]
fn a_task_goes_down_when_light_and_up_when_heavy() {
    let sets = [
        "hmp.enabled=true",
        "cpufreq.governor=performance",
        "rtapp.main_thread=false",
    ];
    let (_, lines) = traced("tc2", LIGHT_THEN_HEAVY, 1000, &sets);
    let first = lines
        .iter()
        .find(|l| l.contains("sched_wakeup_new:") && field(l, "pid") == "1001")
        .unwrap();
    assert!(
        field(first, "target_cpu").parse::<u32>().unwrap() <= 1,
        "{first}"
    );
    let moves = hmp_moves(&lines, "t-0");
    let down = moves.iter().find(|m| m.1 >= 2).expect("t goes down");
    assert_eq!(down.2, 0);
    // a boosted ratio of 1023 needs about 32 ms of decay to fall under 512
    assert!((25_000..120_000).contains(&down.0), "down at {} µs", down.0);
    let up = moves
        .iter()
        .find(|m| m.1 <= 1 && m.0 > 320_000)
        .expect("t goes up in its heavy phase");
    assert_eq!(up.2, 0);
    // the light phase ends at 320 ms; 26 ms runs in 32 lift the ratio past 700 in a few periods
    assert!(up.0 < 500_000, "up at {} µs", up.0);
    assert!(runs_on_after(&lines, "t-0", up.0) <= 1);
    // no HMP move without HMP
    let (_, plain) = traced("tc2", LIGHT_THEN_HEAVY, 1000, &sets[1..]);
    assert!(hmp_moves(&plain, "t-0").is_empty());
}

/// The priority filter (`CONFIG_SCHED_HMP_PRIO_FILTER`, nice ≥ 5 by default) keeps a heavy
/// nice-10 task from going up at its wake-ups; without the filter it goes up.
#[test]
fn the_priority_filter_keeps_nice_tasks_slow() {
    let json = LIGHT_THEN_HEAVY.replace(
        r#""tasks": { "t": {"#,
        r#""tasks": { "t": { "priority": 10,"#,
    );
    let ups = |filter: &str| {
        let sets = [
            "hmp.enabled=true",
            "cpufreq.governor=performance",
            "rtapp.main_thread=false",
            filter,
        ];
        let (_, lines) = traced("tc2", &json, 1000, &sets);
        hmp_moves(&lines, "t-0")
            .into_iter()
            .filter(|m| m.1 <= 1)
            .count()
    };
    assert_eq!(ups("hmp.prio_filter=true"), 0);
    assert!(ups("hmp.prio_filter=false") >= 1);
}

/// HMP needs two capacity classes: on a symmetric platform it is refused with one line.
#[test]
fn hmp_on_a_symmetric_platform_is_refused() {
    use hetsched::hetsched_core::options::{Options, Settings};
    let options = Options::default()
        .apply_sets(&["hmp.enabled=true"])
        .unwrap();
    let p = hetsched::load_platform("hikey620").unwrap();
    let e = Settings::resolve(&options, &p).unwrap_err().to_string();
    assert!(
        e.contains("hmp.enabled") && e.contains("one capacity"),
        "{e}"
    );
}

/// The CPU of a `sched_migrate_task` line's context (`[00N]`).
fn ctx_cpu(l: &str) -> u32 {
    l[l.find('[').unwrap() + 1..l.find(']').unwrap()]
        .parse()
        .unwrap()
}

/// Forced up-migration (LSK 3.10 `hmp_force_up_migration()` in its idle-pull form): a task
/// that turns CPU-bound on a LITTLE never wakes up again, so the wake-up path cannot move
/// it; once its ratio passes 700, the rebalance softirq asks an idle A15 to pull it
/// (`hmp_idle_pull()`, `sched_hmp_migrate` reason 3), and the LITTLE's stopper moves it.
#[test]
fn a_busy_task_on_a_little_is_pulled_up_by_an_idle_big_cpu() {
    let json = r#"{ "global": { "duration": 1, "calibration": "CPU0" },
      "tasks": { "t": { "loop": 1, "phases": {
        "light": { "loop": 20, "run": 1000, "timer": { "ref": "t", "period": 16000 } },
        "busy": { "run": 300000 } } } } }"#;
    let sets = [
        "hmp.enabled=true",
        "cpufreq.governor=performance",
        "rtapp.main_thread=false",
    ];
    let (r, lines) = traced("tc2", json, 1000, &sets);
    let pulled = hmp_moves(&lines, "t-0")
        .into_iter()
        .find(|m| m.2 == 3)
        .expect("t is pulled up");
    assert!(pulled.1 <= 1, "{pulled:?}");
    // the busy phase starts at 320 ms; about 56 ms to reach 700, then a rebalance
    assert!((340_000..520_000).contains(&pulled.0), "{pulled:?}");
    let moved = lines
        .iter()
        .find(|l| {
            l.contains("sched_migrate_task:") && field(l, "comm") == "t-0" && t_us(l) >= pulled.0
        })
        .unwrap();
    assert!(moved.contains("migration/"), "{moved}");
    assert!(ctx_cpu(moved) >= 2, "{moved}");
    assert_eq!(field(moved, "dest_cpu"), pulled.1.to_string());
    assert!(r.migrations["hmp_idle_pull"] >= 1, "{:?}", r.migrations);
}

/// `hmp_idle_pull()` from `idle_balance()` (LSK 3.10): an A15 going idle takes the heaviest
/// eligible task of the A7s at once. Hogs pinned to both A15s leave the CPU-bound `t`
/// (started on the A7s) on an A7 (no idle A15 to go up to); when the hog on CPU 1 ends,
/// CPU 1 pulls `t`.
#[test]
fn a_big_cpu_going_idle_pulls_the_heaviest_little_task() {
    let json = r#"{ "global": { "duration": 1, "calibration": "CPU0" },
      "tasks": {
        "h0": { "cpus": [0], "loop": -1, "run": 100000 },
        "h1": { "cpus": [1], "loop": 1, "run": 200000 },
        "t": { "phases": {
                 "p1": { "cpus": [2, 3, 4], "run": 1000 },
                 "p2": { "cpus": [1, 2, 3, 4], "loop": -1, "run": 100000 } } } } }"#;
    let sets = [
        "hmp.enabled=true",
        "cpufreq.governor=performance",
        "rtapp.main_thread=false",
    ];
    let (_, lines) = traced("tc2", json, 400, &sets);
    let h1_ends = lines
        .iter()
        .find(|l| l.contains("sched_process_exit:") && field(l, "comm") == "h1-1")
        .map(|l| t_us(l))
        .expect("h1 ends");
    let pulled = hmp_moves(&lines, "t-2")
        .into_iter()
        .find(|m| m.2 == 3)
        .expect("t is pulled by CPU 1");
    assert_eq!(pulled.1, 1);
    assert!(
        (h1_ends..h1_ends + 100).contains(&pulled.0),
        "{pulled:?}, h1 ends at {h1_ends}"
    );
}

/// `kernel=v3.10` (`sched.capacity_aware` off): the scheduler sees tc2's CPUs alike, so a
/// CPU-bound task forked onto an A7 is never moved up by misfit (there is none) while the
/// work still runs at the A7's speed; with `hmp.enabled` on top, HMP moves it up.
#[test]
fn the_v3_10_baseline_is_capacity_blind_and_hmp_moves_up() {
    let json = r#"{ "global": { "duration": 1, "calibration": "CPU0" },
      "tasks": { "t": { "phases": {
        "p1": { "cpus": [2], "run": 1000 },
        "p2": { "cpus": [0, 1, 2, 3, 4], "run": 300000 } } } } }"#;
    let on_big = |sets: &[&str]| {
        let (r, lines) = traced("tc2", json, 400, sets);
        let t = r.tasks.iter().find(|t| t.comm == "t-0").unwrap();
        let big: f64 = t.residency_s[..2].iter().sum();
        (big, lines)
    };
    let base = [
        "kernel=v3.10",
        "cpufreq.governor=performance",
        "rtapp.main_thread=false",
    ];
    let (smp, lines) = on_big(&base);
    assert_eq!(smp, 0.0, "smp moved it to an A15");
    // the work runs at the A7's speed: 300 ms of A15 work is not done in 400 ms
    assert!(!lines
        .iter()
        .any(|l| l.contains("sched_process_exit:") && field(l, "comm") == "t-0"));
    let (hmp, _) = on_big(&[base[0], base[1], base[2], "hmp.enabled=true"]);
    assert!(hmp > 0.1, "{hmp} s on the A15s under HMP");
    // capacity-aware v6.11 (misfit) moves it too
    let (mainline, _) = on_big(&base[1..]);
    assert!(mainline > 0.1, "{mainline} s on the A15s under v6.11");
}

/// `hmp_offload_down()` (LSK 3.10, "Basic global balancing support for HMP"): four
/// CPU-bound tasks all start on the two A15s (fork boost); a saturated A15 whose task gets
/// at most 75 % of its runnable time offloads it to an idle A7 from the rebalance softirq
/// (`sched_hmp_migrate` reason 2), so each task ends up with a CPU of its own.
#[test]
fn a_saturated_fast_domain_offloads_to_idle_little_cpus() {
    let json = r#"{ "global": { "duration": 1, "calibration": "CPU0" },
      "tasks": { "t": { "instance": 4, "loop": -1, "run": 100000 } } }"#;
    let sets = [
        "hmp.enabled=true",
        "cpufreq.governor=performance",
        "rtapp.main_thread=false",
    ];
    let (r, lines) = traced("tc2", json, 1000, &sets);
    assert!(r.migrations["hmp_offload"] >= 1, "{:?}", r.migrations);
    let offloads: Vec<_> = (0..4)
        .flat_map(|i| hmp_moves(&lines, &format!("t-{i}")))
        .filter(|m| m.2 == 2)
        .collect();
    assert!(offloads.iter().all(|m| m.1 >= 2), "{offloads:?}");
    // each task's CPU: where it spent most of the second
    let mut home: Vec<usize> = r
        .tasks
        .iter()
        .filter(|t| t.comm.starts_with("t-"))
        .map(|t| {
            let (cpu, s) = t
                .residency_s
                .iter()
                .enumerate()
                .fold((0, 0.0), |b, (c, &s)| if s > b.1 { (c, s) } else { b });
            assert!(s > 0.9, "{} {:?}", t.comm, t.residency_s);
            cpu
        })
        .collect();
    home.sort_unstable();
    home.dedup();
    assert_eq!(home.len(), 4, "{home:?}");
}

/// More than two capacity classes: orion_o6 has five (279, 866, 905, 984, 1024) in one
/// cluster, so HMP's domains are the classes, fastest first. A CPU-bound task released from
/// an A520 climbs one domain at a time (`hmp_up_migration()` → `hmp_select_faster_cpu()`
/// picks from `hmp_faster_domain()`, the next one up), each step a forced up-migration in
/// its idle-pull form (`sched_hmp_migrate` reason 3), to a 1024 CPU. The only scheduling
/// domain spans every class, so HMP turns its balancing off; it still paces the rebalance
/// softirq that runs `hmp_force_up_migration()`.
#[test]
fn a_busy_task_climbs_the_domains_of_a_five_class_platform() {
    let json = r#"{ "global": { "duration": 3, "calibration": "CPU0" },
      "tasks": { "h": { "phases": {
        "pin": { "cpus": [1], "loop": 1, "run": 200000 },
        "free": { "cpus": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11], "loop": -1,
                  "run": 100000 } } } } }"#;
    let sets = [
        "hmp.enabled=true",
        "cpufreq.governor=performance",
        "rtapp.main_thread=false",
    ];
    let (_, lines) = traced("orion_o6", json, 3000, &sets);
    let moves = hmp_moves(&lines, "h-0");
    let caps = [1024, 279, 279, 279, 279, 905, 905, 866, 866, 984, 984, 1024];
    let climb: Vec<u32> = moves.iter().map(|m| caps[m.1 as usize]).collect();
    assert_eq!(climb, [866, 905, 984, 1024], "{moves:?}");
    assert!(moves.iter().all(|m| m.2 == 3), "{moves:?}");
    // released at 733 ms (200 ms of work at 279/1024 speed), at the top within half a second
    assert!(moves[3].0 < 1_300_000, "{moves:?}");
}
