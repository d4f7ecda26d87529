//! The sampling governors against their documented algorithms (drivers/cpufreq/
//! cpufreq_ondemand.c, cpufreq_conservative.c, cpufreq_governor.c, v6.11), read from the
//! trace of small workloads on hikey960's LITTLE policy (CPUs 0–3: 533, 999, 1402, 1709
//! and 1844 MHz; transition latency 300 µs).

// Test helpers panic on unexpected failures by design.
#![allow(clippy::unwrap_used)]

mod common;

use common::t_us;
use hetsched::hetsched_core::RunResult;

fn traced(json: &str, ms: u64, sets: &[&str]) -> (RunResult, Vec<String>) {
    common::traced("hikey960", json, ms, sets)
}

fn traced_on(platform: &str, json: &str, ms: u64, sets: &[&str]) -> (RunResult, Vec<String>) {
    common::traced(platform, json, ms, sets)
}

/// (time µs, kHz) of CPU 0's `cpu_frequency` events after the initial one.
fn freqs_cpu0(lines: &[String]) -> Vec<(i64, u64)> {
    lines
        .iter()
        .filter(|l| l.contains("cpu_frequency:") && l.ends_with("cpu_id=0"))
        .map(|l| {
            let st = l.split("state=").nth(1).unwrap();
            (t_us(l), st.split(' ').next().unwrap().parse().unwrap())
        })
        .skip(1)
        .collect()
}

/// A task pinned to CPU 0 busy for `runtime_us` (wall-clock, whatever the frequency) of
/// every 20 ms: each 20 ms sample window of ondemand (sampled at the task's wake-up, the
/// first utilization update after the period) sees that share as its load.
fn duty(runtime_us: u64) -> String {
    format!(
        r#"{{ "global": {{ "duration": 1, "calibration": "CPU0" }},
      "tasks": {{ "d": {{ "cpus": [0], "loop": -1, "runtime": {runtime_us},
                        "timer": {{ "ref": "t", "period": 20000 }} }} }} }}"#
    )
}

/// ondemand below `up_threshold`: `cpuinfo.min + load × (max − min) / 100` to the closest
/// OPP. 30 % → 926.3 MHz → 999; 60 % → 1319.6 MHz → 1402; 97 % > 95 → the maximum.
#[test]
fn ondemand_sets_the_closest_opp_to_the_proportional_frequency() {
    let sets = [
        "cpufreq.governor=ondemand",
        "cpufreq.ondemand.sampling_rate=20000",
    ];
    for (runtime, want) in [(6000, 999_000), (12000, 1_402_000), (19400, 1_844_000)] {
        let (_, lines) = traced(&duty(runtime), 600, &sets);
        let f = freqs_cpu0(&lines);
        let late: Vec<u64> = f
            .iter()
            .filter(|(t, _)| *t > 200_000)
            .map(|x| x.1)
            .collect();
        let last = f.last().map_or(1_844_000, |x| x.1);
        assert_eq!(last, want, "{runtime} µs of 20 ms: {f:?}");
        assert!(
            late.iter().all(|&k| k == want),
            "{runtime} µs of 20 ms: settled changes {late:?}"
        );
    }
}

/// The samples run in the sampling CPU's kworker, at most one per `sampling_rate` per
/// policy, and each new frequency applies one transition latency (300 µs) after the
/// kworker asked for it (`__cpufreq_driver_target()` in `dbs_work_handler()`).
#[test]
fn ondemand_works_in_a_kworker_and_waits_for_the_transition() {
    let sets = ["cpufreq.governor=ondemand"];
    let (r, lines) = traced(&duty(6000), 400, &sets);
    let kw_in: Vec<i64> = lines
        .iter()
        .filter(|l| l.contains("sched_switch:") && l.contains("next_comm=kworker/0:1"))
        .map(|l| t_us(l))
        .collect();
    assert!(kw_in.len() > 10, "{kw_in:?}");
    // the default sampling_rate: max(2 ticks = 8 ms, transition delay 2 ms) = 8 ms; a work
    // that waits for a transition switches in twice
    let samples: Vec<i64> = kw_in
        .windows(2)
        .filter(|w| w[1] - w[0] > 1000)
        .map(|w| w[1])
        .collect();
    assert!(
        samples.windows(2).all(|w| w[1] - w[0] >= 8000),
        "{samples:?}"
    );
    for (t, khz) in freqs_cpu0(&lines) {
        // the kworker switches in again when the transition completes
        let asked = kw_in.iter().rev().find(|&&k| k < t).unwrap();
        assert!(
            t - asked >= 300,
            "{khz} kHz at {t} µs, kworker at {asked} µs"
        );
    }
    let kw = r
        .kernel_threads
        .iter()
        .find(|t| t.comm == "kworker/0:1")
        .unwrap();
    assert!(
        kw.cpu_time_s > 0.0 && kw.cpu_time_s < 0.01,
        "{}",
        kw.cpu_time_s
    );
}

/// conservative steps `requested_freq` by `freq_step` (5 %) of the maximum, 92.2 MHz, per
/// sample: from a light load at the minimum, a busy task climbs one OPP at a time
/// (RELATION_HE: the highest OPP at or below the request), reaching 999 MHz at the 6th
/// step and the top at the 15th ((1844 − 533) / 92.2 = 14.2), after a first sample whose
/// window is partly light; ondemand jumps there in one or two.
#[test]
fn conservative_climbs_one_freq_step_per_sample() {
    let json = r#"{ "global": { "duration": 1, "calibration": "CPU0" },
      "tasks": { "d": { "cpus": [0], "phases": {
        "light": { "loop": 25, "runtime": 500, "timer": { "ref": "t", "period": 20000 } },
        "busy": { "loop": 1, "runtime": 500000 } } } } }"#;
    let busy_from = 500_000; // 25 periods of 20 ms
    let climb = |gov: &str| {
        let g = format!("cpufreq.governor={gov}");
        let rate = format!("cpufreq.{gov}.sampling_rate=20000");
        let (_, lines) = traced(json, 1000, &[g.as_str(), rate.as_str()]);
        let f = freqs_cpu0(&lines);
        let before = f.iter().rfind(|x| x.0 < busy_from).unwrap().1;
        assert_eq!(before, 533_000, "{gov}: {f:?}");
        let up: Vec<(i64, u64)> = f.into_iter().filter(|x| x.0 >= busy_from).collect();
        let top = up.iter().find(|x| x.1 == 1_844_000).unwrap().0;
        (up, top - busy_from)
    };
    let (up, took) = climb("conservative");
    let steps: Vec<u64> = up.iter().map(|x| x.1).collect();
    assert_eq!(steps, [999_000, 1_402_000, 1_709_000, 1_844_000], "{up:?}");
    assert!(
        (15 * 20_000..=17 * 20_000).contains(&took),
        "{took} µs: {up:?}"
    );
    let (_, took) = climb("ondemand");
    assert!(took <= 2 * 20_000 + 4_000 + 300, "ondemand took {took} µs");
}

/// ondemand's `sampling_down_factor`: a sample that raises the frequency to the maximum
/// multiplies the sampling period by it (`rate_mult`, only when `policy->cur` was below the
/// maximum), so a load that falls is seen that much later.
#[test]
fn ondemand_sampling_down_factor_holds_the_maximum() {
    let json = r#"{ "global": { "duration": 1, "calibration": "CPU0" },
      "tasks": { "d": { "cpus": [0], "phases": {
        "light": { "loop": 30, "runtime": 500, "timer": { "ref": "t", "period": 10000 } },
        "busy": { "loop": 1, "runtime": 30000 },
        "after": { "loop": -1, "runtime": 500, "timer": { "ref": "t", "period": 10000 } } } } } }"#;
    let busy_end = 330_000;
    let first_drop = |sdf: &str| {
        let sets = [
            "cpufreq.governor=ondemand",
            "cpufreq.ondemand.sampling_rate=10000",
            sdf,
        ];
        let (_, lines) = traced(json, 700, &sets);
        let f = freqs_cpu0(&lines);
        let at_max = f.iter().rfind(|x| x.0 < busy_end).unwrap();
        assert_eq!(at_max.1, 1_844_000, "{f:?}");
        // from the sample that asked for the maximum (one transition latency earlier)
        f.iter().find(|x| x.0 > busy_end).unwrap().0 - (at_max.0 - 300)
    };
    // 30 ms busy: the maximum is asked for within it; samples every 10 ms see the light
    // load at most 10 ms after its end, where one sample 100 ms later sees it then (at the
    // first utilization update after the delay: the task's next wake-up, ≤ 10 ms)
    let plain = first_drop("cpufreq.ondemand.sampling_down_factor=1");
    let held = first_drop("cpufreq.ondemand.sampling_down_factor=10");
    assert!(plain < 40_000, "{plain}");
    assert!((100_000..=111_000).contains(&held), "{held}");
}

/// (time µs, event name, cpu, load, targ) of the interactive governor's `loadeval` events
/// for CPU 0.
fn ia_evals(lines: &[String]) -> Vec<(i64, String, u64, u64)> {
    lines
        .iter()
        .filter(|l| l.contains(": cpufreq_interactive_") && l.contains(" cpu=0 "))
        .filter(|l| !l.contains("setspeed"))
        .map(|l| {
            let name = l.split(": ").nth(1).unwrap().trim().to_string();
            let num = |k: &str| -> u64 {
                l.split(&format!(" {k}="))
                    .nth(1)
                    .unwrap()
                    .split(' ')
                    .next()
                    .unwrap()
                    .parse()
                    .unwrap()
            };
            (t_us(l), name, num("load"), num("targ"))
        })
        .collect()
}

/// interactive (AOSP android-3.10): a load at or above `go_hispeed_load` (99 %) goes to
/// `hispeed_freq` at once, and higher only after `above_hispeed_delay` (20 ms) at or above
/// it, each time to the lowest OPP whose load would be under `target_loads` (90 %): a full
/// load at 1402 MHz needs 1558 → 1709, at 1709 needs 1899 → 1844. Each new target is set
/// by the `cfinteractive` SCHED_FIFO thread through the driver, one transition latency
/// (300 µs) later.
#[test]
fn interactive_goes_to_hispeed_then_waits_above_hispeed_delay() {
    let json = r#"{ "global": { "duration": 1, "calibration": "CPU0" },
      "tasks": { "d": { "cpus": [0], "phases": {
        "light": { "loop": 15, "runtime": 500, "timer": { "ref": "t", "period": 20000 } },
        "busy": { "loop": 1, "runtime": 200000 } } } } }"#;
    let sets = [
        "cpufreq.governor=interactive",
        "cpufreq.interactive.hispeed_freq=1402000",
    ];
    let (r, lines) = traced(json, 500, &sets);
    let f = freqs_cpu0(&lines);
    let busy_from = 300_000;
    let before = f.iter().rfind(|x| x.0 < busy_from).unwrap().1;
    assert_eq!(before, 533_000, "{f:?}");
    let up: Vec<(i64, u64)> = f.into_iter().filter(|x| x.0 >= busy_from).collect();
    let steps: Vec<u64> = up.iter().map(|x| x.1).collect();
    assert_eq!(steps, [1_402_000, 1_709_000, 1_844_000], "{up:?}");
    // the first sample of a fully busy window: load ≥ 99 → hispeed; raises above it come
    // one above_hispeed_delay apart
    let evals = ia_evals(&lines);
    let targets: Vec<_> = evals
        .iter()
        .filter(|e| e.0 >= busy_from && e.1 == "cpufreq_interactive_target")
        .collect();
    assert!(
        targets[0].2 >= 99 && targets[0].3 == 1_402_000,
        "{targets:?}"
    );
    for w in targets.windows(2).take(2) {
        assert!(w[1].0 - w[0].0 >= 20_000, "{targets:?}");
    }
    for (change, asked) in up.iter().zip(&targets) {
        assert!(change.0 - asked.0 >= 300, "{up:?} {targets:?}");
    }
    assert!(lines
        .iter()
        .any(|l| l.contains("next_comm=cfinteractive") && l.contains("next_prio=0")));
    assert!(r
        .kernel_threads
        .iter()
        .any(|t| t.comm == "cfinteractive" && t.wakeups > 0));
}

/// interactive holds a frequency `min_sample_time` (80 ms) before lowering it: from the
/// start at the maximum (`GOV_START` validates the floor then), a light load's samples
/// every 20 ms are `notyet` until 80 ms have passed.
#[test]
fn interactive_lowers_only_after_min_sample_time() {
    let (_, lines) = traced(&duty(1000), 300, &["cpufreq.governor=interactive"]);
    let evals = ia_evals(&lines);
    let lowered = evals
        .iter()
        .find(|e| e.1 == "cpufreq_interactive_target")
        .unwrap();
    assert_eq!(lowered.3, 533_000, "{evals:?}");
    assert!(lowered.0 >= 80_000, "{evals:?}");
    let held: Vec<_> = evals.iter().filter(|e| e.0 < lowered.0).collect();
    assert!(held.len() >= 3, "{evals:?}");
    assert!(
        held.iter()
            .all(|e| e.1 == "cpufreq_interactive_notyet" && e.3 == 533_000),
        "{evals:?}"
    );
}

/// interactive's `cpu_timer` is deferrable: a CPU that idles stays unsampled. While it idles
/// above the minimum the normal slack timer, `timer_rate + timer_slack` (100 ms) after the
/// last re-arm, wakes it (here CPU 0's at 150 ms, or the idle CPUs 1–3's, armed at the
/// start, at 100 ms, whose samples wake `cfinteractive` onto CPU 0), and the overdue sample
/// runs from `<idle>` and lowers the frequency; with `timer_slack=-1` nothing wakes them
/// and the policy stays high.
#[test]
fn interactive_slack_timer_wakes_an_idle_cpu_above_the_minimum() {
    let json = r#"{ "global": { "duration": 1, "calibration": "CPU0" },
      "tasks": { "d": { "cpus": [0], "phases": {
        "busy": { "loop": 1, "runtime": 50000 },
        "rest": { "loop": 1, "sleep": 1000000 } } } } }"#;
    let (_, lines) = traced(json, 500, &["cpufreq.governor=interactive"]);
    let evals = ia_evals(&lines);
    let idle_sample = evals.iter().find(|e| e.0 > 50_000).unwrap();
    let line = lines
        .iter()
        .find(|l| {
            l.contains("cpufreq_interactive_") && l.contains(" cpu=0 ") && t_us(l) == idle_sample.0
        })
        .unwrap();
    assert!(line.trim_start().starts_with("<idle>-0"), "{line}");
    assert!((100_000..=150_000).contains(&idle_sample.0), "{evals:?}");
    assert!(freqs_cpu0(&lines)
        .iter()
        .any(|x| x.0 > 50_000 && x.1 < 1_844_000));
    let (_, lines) = traced(
        json,
        500,
        &[
            "cpufreq.governor=interactive",
            "cpufreq.interactive.timer_slack=-1",
        ],
    );
    assert!(
        freqs_cpu0(&lines).iter().all(|x| x.0 < 50_000),
        "{:?}",
        freqs_cpu0(&lines)
    );
}

/// Four light tasks, one pinned to each of the LITTLE CPUs 0–3, each busy 1 ms of every
/// 20 ms: the policy settles at its minimum (533 MHz) and every CPU wakes every 20 ms, so
/// each CPU's deferrable sample timer runs at least that often.
const LIGHT4: &str = r#"{ "global": { "duration": 1, "calibration": "CPU0" },
  "tasks": {
    "l0": { "cpus": [0], "loop": -1, "runtime": 1000, "timer": { "ref": "t0", "period": 20000 } },
    "l1": { "cpus": [1], "loop": -1, "runtime": 1000, "timer": { "ref": "t1", "period": 20000 } },
    "l2": { "cpus": [2], "loop": -1, "runtime": 1000, "timer": { "ref": "t2", "period": 20000 } },
    "l3": { "cpus": [3], "loop": -1, "runtime": 1000, "timer": { "ref": "t3", "period": 20000 } } } }"#;

/// The time (µs) of the trace line that ends with `what`, exactly once.
fn only_line_at(lines: &[String], what: &str) -> i64 {
    let at: Vec<i64> = lines
        .iter()
        .filter(|l| l.ends_with(what))
        .map(|l| t_us(l))
        .collect();
    assert_eq!(at.len(), 1, "{what}: {at:?}");
    at[0]
}

/// CPU 0's frequency changes around a boost that starts at `from` and may end from
/// `until` on, with `hispeed_freq` 1402 MHz: at the minimum before it, at `hispeed_freq`
/// within one `cfinteractive` run after it (10 µs of CPU time and the 300 µs transition),
/// never below it before `until`, and back at the minimum by `until` + `within`.
fn assert_boosted(lines: &[String], from: i64, until: i64, within: i64) {
    let f = freqs_cpu0(lines);
    let before = f.iter().rfind(|x| x.0 <= from).unwrap();
    assert_eq!(before.1, 533_000, "{f:?}");
    let after: Vec<(i64, u64)> = f.iter().copied().filter(|x| x.0 > from).collect();
    assert_eq!(after[0].1, 1_402_000, "{after:?}");
    assert!(after[0].0 - from <= 310, "{after:?}");
    assert!(
        after
            .iter()
            .filter(|x| x.0 < until)
            .all(|x| x.1 >= 1_402_000),
        "{after:?}"
    );
    let down = after.iter().find(|x| x.1 < 1_402_000).unwrap();
    assert!(
        down.0 >= until && down.0 <= until + within && down.1 == 533_000,
        "{after:?}"
    );
}

/// interactive's `boostpulse` (AOSP android-3.10 `store_boostpulse()`), written at 300 ms
/// as PowerHAL does on an input event: traced as `cpufreq_interactive_boost: pulse`,
/// `cpufreq_interactive_boost()` raises every CPU's target to `hispeed_freq` and wakes
/// `cfinteractive`, and the floor it sets (validated at the write) with the boosted
/// samples holds the policy there for `boostpulse_duration` (80 ms by default; 160 ms
/// set); the first samples after it lower it.
#[test]
fn interactive_boostpulse_holds_hispeed_for_its_duration() {
    let t = 300_000;
    for (duration, set) in [(80_000, None), (160_000, Some("160000"))] {
        let dur_set = set.map(|v| format!("cpufreq.interactive.boostpulse_duration={v}"));
        let mut sets = vec![
            "cpufreq.governor=interactive",
            "cpufreq.interactive.hispeed_freq=1402000",
            "cpufreq.interactive.boostpulse_at_us=[300000]",
        ];
        sets.extend(dur_set.as_deref());
        let (_, lines) = traced(LIGHT4, 600, &sets);
        assert_eq!(only_line_at(&lines, "cpufreq_interactive_boost: pulse"), t);
        // samples see the light load and the raised target: 1402 MHz, already there
        assert_boosted(&lines, t, t + duration, 40_000);
    }
}

/// `boost` written during the run (`store_boost()`): 1 traces `cpufreq_interactive_boost:
/// on` and boosts as a pulse does, for as long as it stays set; 0 traces
/// `cpufreq_interactive_unboost: off`, and the next samples lower the frequency (the floor
/// was validated at the write of 1, long enough before).
#[test]
fn interactive_boost_holds_hispeed_until_it_is_cleared() {
    let sets = [
        "cpufreq.governor=interactive",
        "cpufreq.interactive.hispeed_freq=1402000",
        "cpufreq.interactive.boost_at_us=[[300000,1],[500000,0]]",
    ];
    let (_, lines) = traced(LIGHT4, 700, &sets);
    assert_eq!(
        only_line_at(&lines, "cpufreq_interactive_boost: on"),
        300_000
    );
    assert_eq!(
        only_line_at(&lines, "cpufreq_interactive_unboost: off"),
        500_000
    );
    assert_boosted(&lines, 300_000, 500_000, 40_000);
}

/// The `cpufreq_interactive_setspeed` lines' (cpu, targ, actual).
fn ia_setspeeds(lines: &[String]) -> Vec<(u64, u64, u64)> {
    let num = |l: &str, k: &str| -> u64 { common::field(l, k).parse().unwrap() };
    lines
        .iter()
        .filter(|l| l.contains(": cpufreq_interactive_setspeed:"))
        .map(|l| (num(l, "cpu"), num(l, "targ"), num(l, "actual")))
        .collect()
}

/// android-4.4's interactive (`cpufreq.interactive.version=android_4_4`) never goes from
/// below `hispeed_freq` straight above it when the load is under `go_hispeed_load`: with
/// `hispeed_freq` 999 MHz and `target_loads` 50 %, a 95 % load at 533 MHz needs 1013 MHz
/// → 1402, where android-3.10 goes at once; android-4.4 stops at 999 MHz and goes higher
/// one `above_hispeed_delay` (20 ms, from the policy's hispeed time) later.
#[test]
fn interactive_android_4_4_stops_at_hispeed_on_the_way_up() {
    let json = r#"{ "global": { "duration": 1, "calibration": "CPU0" },
      "tasks": { "d": { "cpus": [0], "phases": {
        "light": { "loop": 15, "runtime": 1000, "timer": { "ref": "t", "period": 20000 } },
        "heavy": { "loop": 20, "runtime": 19000, "timer": { "ref": "t", "period": 20000 } } } } } }"#;
    for (version, jumps) in [("android_3_10", true), ("android_4_4", false)] {
        let v = format!("cpufreq.interactive.version={version}");
        let sets = [
            "cpufreq.governor=interactive",
            v.as_str(),
            "cpufreq.interactive.hispeed_freq=999000",
            "cpufreq.interactive.target_loads=[50]",
        ];
        let (_, lines) = traced(json, 700, &sets);
        let f = freqs_cpu0(&lines);
        let jump = f.windows(2).any(|w| w[0].1 < 999_000 && w[1].1 > 999_000);
        assert_eq!(jump, jumps, "{version}: {f:?}");
        assert!(f.iter().any(|x| x.0 > 300_000 && x.1 == 1_844_000), "{f:?}");
        if jumps {
            continue;
        }
        assert!(f.windows(2).any(|w| w[0].1 == 533_000 && w[1].1 == 999_000));
        let targets: Vec<_> = ia_evals(&lines)
            .into_iter()
            .filter(|e| e.0 > 300_000 && e.1 == "cpufreq_interactive_target")
            .collect();
        assert_eq!(targets[0].3, 999_000, "{targets:?}");
        assert!(targets[1].3 > 999_000, "{targets:?}");
        assert!(targets[1].0 - targets[0].0 >= 20_000, "{targets:?}");
    }
}

/// android-4.4's sample always re-arms its timer, so a CPU busy at the maximum is sampled
/// every 20 ms (android-3.10 leaves it unsampled until it idles), and each of those
/// samples validates the floor: the maximum is held `min_sample_time` (80 ms) after the
/// last, where android-3.10 lowers at the first sample after the busy time. The
/// speed-change thread's `cpufreq_interactive_adjust_cpu()` sets the policy's floor time
/// from the CPU it serves, so the idle CPU 1 woken by its slack timer at 100 ms is held
/// (`notyet`) by CPU 0's validation at 80 ms, where android-3.10 lowers it; and setspeed
/// traces the policy's `max_freq`, never below `actual`, where android-3.10 traces the
/// CPU's own target (533 MHz while the policy stays at 1844).
#[test]
fn interactive_android_4_4_rearms_at_the_maximum_and_validates_per_policy() {
    let json = r#"{ "global": { "duration": 1, "calibration": "CPU0" },
      "tasks": { "d": { "cpus": [0], "phases": {
        "light": { "loop": 15, "runtime": 500, "timer": { "ref": "t", "period": 20000 } },
        "busy": { "loop": 1, "runtime": 200000 } } } } }"#;
    for v4_4 in [false, true] {
        let v = if v4_4 { "android_4_4" } else { "android_3_10" };
        let v = format!("cpufreq.interactive.version={v}");
        let (_, lines) = traced(json, 700, &["cpufreq.governor=interactive", &v]);
        let evals = ia_evals(&lines);
        let to_max = evals
            .iter()
            .find(|e| e.0 > 300_000 && e.1 == "cpufreq_interactive_target")
            .unwrap();
        assert_eq!(to_max.3, 1_844_000, "{v}: {evals:?}");
        // the busy phase ends 200 ms after it began, about at the sample that raised
        let busy_end = to_max.0 + 200_000;
        let at_max: Vec<_> = evals
            .iter()
            .filter(|e| e.0 > to_max.0 && e.0 < busy_end)
            .collect();
        let down = freqs_cpu0(&lines)
            .into_iter()
            .find(|x| x.0 > to_max.0 && x.1 < 1_844_000)
            .unwrap();
        if v4_4 {
            assert!(at_max.len() >= 9, "{v}: {evals:?}");
            assert!(at_max.iter().all(|e| e.1 == "cpufreq_interactive_already"));
            assert!(down.0 - at_max.last().unwrap().0 >= 80_000, "{v}: {down:?}");
        } else {
            assert!(at_max.is_empty(), "{v}: {at_max:?}");
            assert!(down.0 - busy_end < 2_000, "{v}: {down:?}");
        }
        let cpu1 = lines
            .iter()
            .find(|l| l.contains(": cpufreq_interactive_") && l.contains(" cpu=1 "))
            .unwrap();
        let held = cpu1.contains("cpufreq_interactive_notyet:");
        assert_eq!(held, v4_4, "{v}: {cpu1}");
        let below = ia_setspeeds(&lines).into_iter().find(|s| s.1 < s.2);
        assert_eq!(below.is_none(), v4_4, "{v}: {below:?}");
    }
}

/// android-4.4's `cpufreq_interactive_boost()` raises the targets but sets no floor, so
/// the policy comes down as soon as the pulse ends: a 40 ms pulse, or an 80 ms one that a
/// write of `boost=0` (which sets `boostpulse_endtime` to now in android-4.4) ends at
/// 40 ms. android-3.10's boost validated a `hispeed_freq` floor at the pulse, held
/// `min_sample_time` (80 ms), and its `boost=0` leaves a pulse running.
#[test]
fn interactive_android_4_4_boost_sets_no_floor_and_boost_0_ends_a_pulse() {
    let t = 300_000;
    for (version, extra, until) in [
        (
            "android_3_10",
            "cpufreq.interactive.boostpulse_duration=40000",
            t + 80_000,
        ),
        (
            "android_4_4",
            "cpufreq.interactive.boostpulse_duration=40000",
            t + 40_000,
        ),
        (
            "android_3_10",
            "cpufreq.interactive.boost_at_us=[[340000,0]]",
            t + 80_000,
        ),
        (
            "android_4_4",
            "cpufreq.interactive.boost_at_us=[[340000,0]]",
            t + 40_000,
        ),
    ] {
        let v = format!("cpufreq.interactive.version={version}");
        let sets = [
            "cpufreq.governor=interactive",
            v.as_str(),
            "cpufreq.interactive.hispeed_freq=1402000",
            "cpufreq.interactive.boostpulse_at_us=[300000]",
            extra,
        ];
        let (_, lines) = traced(LIGHT4, 600, &sets);
        assert_eq!(only_line_at(&lines, "cpufreq_interactive_boost: pulse"), t);
        assert_boosted(&lines, t, until, 30_000);
    }
}

/// The `sched` governor's trace lines for `cpu` (`cpufreq_sched_*`).
fn sched_events<'a>(lines: &'a [String], what: &str, cpu: u32) -> Vec<&'a String> {
    let tag = format!("cpufreq_sched_{what}:");
    let c1 = format!(" cpu={cpu} ");
    let c2 = format!(" cpu {cpu} ");
    lines
        .iter()
        .filter(|l| l.contains(&tag) && (l.contains(&c1) || l.contains(&c2)))
        .collect()
}

/// The `sched` governor (seed 004, RFCv7) on exynos5800's A15 policy (200–1800 MHz in
/// 100 MHz steps, capacity 1024): every capacity total is `(cfs + rt) × 1280 / 1024 + dl`,
/// every request the lowest OPP at or above `total × 1800 MHz / 1024`, and each new OPP is
/// set by `kschedfreq:0` (SCHED_FIFO 50) one transition latency (140 µs) after it asked.
#[test]
fn sched_governor_requests_capacity_with_the_series_margin() {
    let json = r#"{ "global": { "duration": 1, "calibration": "CPU0" },
      "tasks": { "d": { "cpus": [0], "loop": -1, "run": 3000,
                        "timer": { "ref": "t", "period": 10000 } } } }"#;
    let (r, lines) = traced_on("exynos5800", json, 500, &["cpufreq.governor=sched"]);
    let field = |l: &str, k: &str| -> u64 {
        l.split(&format!(" {k}="))
            .nth(1)
            .unwrap()
            .split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    let updates = sched_events(&lines, "update_capacity", 0);
    assert!(updates.len() > 20, "{}", updates.len());
    for l in &updates {
        let (cfs, rt, dl) = (field(l, "cfs"), field(l, "rt"), field(l, "dl"));
        assert_eq!(field(l, "new_tot"), (cfs + rt) * 1280 / 1024 + dl, "{l}");
    }
    let opps: Vec<u64> = (2..=18).map(|k| k * 100_000).collect();
    let requests = sched_events(&lines, "request_opp", 0);
    for l in &requests {
        let cap: u64 = l
            .split("cluster cap request ")
            .nth(1)
            .unwrap()
            .split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        let opp: u64 = l
            .split("=> OPP ")
            .nth(1)
            .unwrap()
            .split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        let raw = (cap * 1_800_000) >> 10;
        let want = opps
            .iter()
            .copied()
            .find(|&f| f >= raw)
            .unwrap_or(1_800_000);
        assert_eq!(opp, want, "{l}");
    }
    // at each wake-up the request follows the util of a 30 % task at fmax: near
    // 0.3 × 1.25 × 1800 = 675 MHz → 700 (with PELT's ripple); while it runs slower than
    // at fmax, the tick finds its capacity short and asks for the maximum
    let wake_opps: Vec<u64> = requests
        .iter()
        .filter(|l| t_us(l) > 300_000 && !l.contains("request 1280 "))
        .map(|l| {
            l.split("=> OPP ")
                .nth(1)
                .unwrap()
                .split(' ')
                .next()
                .unwrap()
                .parse()
                .unwrap()
        })
        .collect();
    assert!(!wake_opps.is_empty());
    assert!(
        wake_opps
            .iter()
            .all(|&k| (600_000..=1_000_000).contains(&k)),
        "{wake_opps:?}"
    );
    let f = freqs_cpu0(&lines);
    let kt = r
        .kernel_threads
        .iter()
        .find(|t| t.comm == "kschedfreq:0")
        .unwrap();
    assert!(kt.wakeups > 0);
    for (t, khz) in &f {
        let asked = lines
            .iter()
            .filter(|l| l.contains("next_comm=kschedfreq:0") && t_us(l) < *t)
            .map(|l| t_us(l))
            .next_back()
            .unwrap();
        assert!(
            t - asked >= 140,
            "{khz} kHz at {t} µs, kschedfreq at {asked} µs"
        );
    }
}

/// `sched_freq_tick()`: a CPU whose current capacity is below its requests at the tick
/// asks for the maximum (its CFS request jumps to 1024), where the utilization alone would
/// take several ticks to get there.
#[test]
fn sched_governor_jumps_to_the_maximum_at_the_tick() {
    let json = r#"{ "global": { "duration": 1, "calibration": "CPU0" },
      "tasks": { "d": { "cpus": [0], "phases": {
        "light": { "loop": 20, "run": 500, "timer": { "ref": "t", "period": 10000 } },
        "busy": { "loop": 1, "run": 200000 } } } } }"#;
    let (_, lines) = traced_on("exynos5800", json, 400, &["cpufreq.governor=sched"]);
    let jump = sched_events(&lines, "update_capacity", 0)
        .into_iter()
        .find(|l| l.contains(" cfs=1024 "))
        .unwrap();
    let at = t_us(jump);
    assert!(
        at >= 200_000 && at % 4_000 == 0,
        "a tick after the busy phase starts: {jump}"
    );
    let f = freqs_cpu0(&lines);
    let top = f.iter().find(|x| x.0 >= at && x.1 == 1_800_000).unwrap();
    assert!(top.0 - at < 1_000, "{f:?}");
}

/// ondemand as v4.4 samples (`kernel=v4.4`, `cpufreq.ondemand.version=v4_4`): a deferrable
/// delayed work per CPU on the jiffy grid of the sampling period (20 ms = 5 jiffies at
/// HZ=250, `delay -= jiffies % delay`), run by the CPU's kworker; a busy CPU's work runs
/// at every multiple of 20 ms, and an idle policy takes no sample at all (its timers wait
/// for a tick), so the frequency a burst left stays.
#[test]
fn ondemand_v4_4_samples_on_the_jiffy_grid_and_not_while_idle() {
    let json = r#"{ "global": { "duration": 1, "calibration": "CPU0" },
      "tasks": { "d": { "cpus": [0], "phases": {
        "light": { "loop": 10, "runtime": 2000, "timer": { "ref": "t", "period": 20000 } },
        "busy": { "loop": 1, "runtime": 200000 },
        "rest": { "loop": 1, "sleep": 1000000 } } } } }"#;
    let sets = [
        "kernel=v4.4",
        "cpufreq.governor=ondemand",
        "cpufreq.ondemand.sampling_rate=20000",
    ];
    let (_, lines) = traced_on("exynos5800", json, 800, &sets);
    let kw: Vec<i64> = lines
        .iter()
        .filter(|l| l.contains("sched_switch:") && l.contains("next_comm=kworker/0:1"))
        .map(|l| t_us(l))
        .collect();
    // during the busy phase (200–400 ms) the work runs right after each 20 ms grid point
    let busy: Vec<i64> = kw
        .iter()
        .copied()
        .filter(|&t| (220_000..400_000).contains(&t))
        .collect();
    assert!(busy.len() >= 8, "{kw:?}");
    assert!(busy.iter().all(|t| t % 20_000 < 1_000), "{busy:?}");
    // once CPU0 rests, no more samples: the last frequency stays
    assert!(kw.iter().all(|&t| t < 420_000), "{kw:?}");
    let f = freqs_cpu0(&lines);
    assert!(f.iter().all(|x| x.0 < 420_000), "{f:?}");
    assert!(
        f.iter()
            .any(|x| (200_000..300_000).contains(&x.0) && x.1 == 1_800_000),
        "{f:?}"
    );
}

/// `cpufreq.start=min`: a dynamic governor's policies begin at their lowest OPP (a board
/// idle under its governor) instead of the highest. Under v4.4's ondemand (RT_RUNTIME_SHARE
/// on, the `v4.4` profile) a SCHED_FIFO task that cannot finish its period at that OPP never
/// sleeps, so CPU 0's `kworker/0:1` — the nice-0 thread that runs ondemand's sample — never
/// runs and nothing raises the frequency: the "regression with ondemand and RT tasks" seed
/// 004 reports. The same task as SCHED_OTHER shares the CPU with the kworker, which takes
/// its sample and jumps to the maximum.
#[test]
fn ondemand_v4_4_stays_at_fmin_under_a_fifo_task_that_never_sleeps() {
    let wl = |policy: &str| {
        format!(
            r#"{{ "global": {{ "duration": 2, "calibration": "CPU0" }},
          "tasks": {{ "w": {{ "cpus": [0], "policy": "{policy}", "loop": -1,
                            "run": 30000, "timer": {{ "ref": "t", "period": 50000 }} }} }} }}"#
        )
    };
    let sets = [
        "kernel=v4.4",
        "cpufreq.governor=ondemand",
        "cpufreq.ondemand.sampling_rate=20000",
        "trace.signals=false",
    ];
    let first = |lines: &[String]| -> u64 {
        let l = lines
            .iter()
            .find(|l| l.contains("cpu_frequency:") && l.ends_with("cpu_id=0"))
            .unwrap();
        l.split("state=")
            .nth(1)
            .unwrap()
            .split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    let (_, max_start) = traced(&wl("SCHED_OTHER"), 1000, &sets);
    assert_eq!(
        first(&max_start),
        1_844_000,
        "cpufreq.start=max is the default"
    );
    let mut min = sets.to_vec();
    min.push("cpufreq.start=min");
    let (_, fifo) = traced(&wl("SCHED_FIFO"), 1000, &min);
    assert_eq!(first(&fifo), 533_000);
    assert!(
        freqs_cpu0(&fifo).is_empty(),
        "ondemand changed CPU 0's frequency under a FIFO task that never sleeps: {:?}",
        freqs_cpu0(&fifo)
    );
    let kworker_ran = fifo
        .iter()
        .any(|l| l.contains("sched_switch:") && l.contains("next_comm=kworker/0:1"));
    assert!(!kworker_ran, "kworker/0:1 ran beside the FIFO task");
    let (_, other) = traced(&wl("SCHED_OTHER"), 1000, &min);
    let f = freqs_cpu0(&other);
    assert!(
        f.first()
            .is_some_and(|&(t, khz)| khz == 1_844_000 && t < 60_000),
        "SCHED_OTHER: ondemand's first sample should reach the maximum: {f:?}"
    );
}
