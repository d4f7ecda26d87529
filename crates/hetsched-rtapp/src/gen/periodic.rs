//! `periodic`: LISA's `RTAPhase(prop_wload=PeriodicWload(duty_cycle_pct, period,
//! duration))` (lisa/wlgen/rta.py, LISA 3.x), written as LISA writes it.
//!
//! # What LISA writes (`PeriodicWload.to_events`)
//!
//! * `run = duty_cycle_pct × period / 100`, `loop = ⌊duration / period⌋`, and the phase
//!   `{"loop": loop, "run": run, "timer": {"ref": "unique", "period": period}}` — `run`
//!   before `timer`, a per-thread (`unique`) timer in rt-app's default relative mode.
//!   With `guaranteed_time='sleep'` the timer is a `sleep` of `period − run` instead.
//! * duty 0 %: one `sleep` of `duration`; duty 100 %: one `run` of `duration`.
//! * Times are converted with `_to_us(s) = ceil(s × 1e6)`.
//! * Errors: `period > duration`, duty outside 0..100.
//! * The duty cycle is "when executing on the fastest CPU at max frequency": the run is
//!   work on that reference, which is what the generators' integer calibration means.
//!
//! Here times are integers (µs) and duty cycles exact decimals (thousandths of a percent),
//! so `run = ⌈duty × period / 100⌉` is computed exactly; LISA computes it in floating
//! point and can land 1 µs higher when the product is not representable.
//!
//! # Additions
//!
//! For the schedfreq experiment's rows, `run` (a duration, instead of `duty`) and `loops`
//! (instead of `duration`) give the table's figures directly; `run` always writes the
//! `run` + `timer` pair, even when it equals the period. `tasks` is rt-app's `instance`
//! (threads `<name>-<i>`, each with its own timer). LISA also writes `cpus` (all CPUs
//! when unset) in every phase; this generator writes it only when given, which rt-app
//! reads the same way.

use hetsched_core::workload::{Event, SchedAttrs, SchedPolicy, TimerMode, Workload};

use super::params::Params;
use super::{check_names, phase, task, workload, GenError, ParamSpec};

/// Generator name.
pub const NAME: &str = "periodic";
/// One-line summary.
pub const SUMMARY: &str =
    "LISA's PeriodicWload: run a duty cycle of each period (run + unique timer), for a duration";
/// Parameters.
pub const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "duty",
        default: "10",
        help: "duty cycle in % of the period, on the biggest CPU at fmax (LISA duty_cycle_pct)",
    },
    ParamSpec {
        name: "run",
        default: "-",
        help: "work per period as a duration at fmax on the biggest CPU (instead of duty)",
    },
    ParamSpec {
        name: "period",
        default: "16ms",
        help: "period (bare number = seconds)",
    },
    ParamSpec {
        name: "duration",
        default: "1s",
        help: "how long; loops = floor(duration / period)",
    },
    ParamSpec {
        name: "loops",
        default: "-",
        help: "number of periods (instead of duration)",
    },
    ParamSpec {
        name: "tasks",
        default: "1",
        help: "number of identical threads (rt-app instance)",
    },
    ParamSpec {
        name: "guaranteed",
        default: "period",
        help: "period: unique timer (LISA's default); sleep: sleep period - run",
    },
    ParamSpec {
        name: "cpus",
        default: "all",
        help: "affinity (taskset -c list: 1, 0-3, [0-3,5])",
    },
    ParamSpec {
        name: "policy",
        default: "SCHED_OTHER",
        help: "SCHED_OTHER, SCHED_BATCH, SCHED_IDLE, SCHED_FIFO or SCHED_RR (or other, fifo…)",
    },
    ParamSpec {
        name: "priority",
        default: "0 / 10",
        help: "rt-app priority: nice for fair policies, RT priority 1..99 for FIFO/RR",
    },
    ParamSpec {
        name: "nice",
        default: "0",
        help: "nice value (fair policies; same as priority)",
    },
    ParamSpec {
        name: "delay",
        default: "0",
        help: "initial delay (rt-app delay)",
    },
    ParamSpec {
        name: "name",
        default: "periodic",
        help: "task name",
    },
];

/// The work of each period.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Work {
    /// Duty cycle in thousandths of a percent (12.5 % = 12 500).
    DutyMilliPct(u64),
    /// µs of work on the reference.
    RunUs(u64),
}

/// How long the task runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Length {
    /// Duration in µs: ⌊duration / period⌋ periods.
    DurationUs(u64),
    /// Number of periods.
    Loops(u64),
}

/// What the wait part guarantees (LISA's `guaranteed_time`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Guaranteed {
    /// The period: a `unique` timer.
    Period,
    /// The sleep time: `sleep` of period − run.
    Sleep,
}

/// One periodic task (possibly several identical threads).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Periodic {
    /// Task name.
    pub name: String,
    /// Threads (rt-app instance).
    pub tasks: u32,
    /// Work per period.
    pub work: Work,
    /// Period in µs.
    pub period_us: u64,
    /// How long.
    pub length: Length,
    /// Timer or sleep.
    pub guaranteed: Guaranteed,
    /// Affinity; `None` = all CPUs.
    pub cpus: Option<Vec<usize>>,
    /// Policy; `None` = the workload's default (SCHED_OTHER).
    pub policy: Option<SchedPolicy>,
    /// rt-app priority (nice or RT priority).
    pub priority: Option<i32>,
    /// Initial delay in µs.
    pub delay_us: u64,
}

impl Default for Periodic {
    fn default() -> Self {
        Periodic {
            name: "periodic".into(),
            tasks: 1,
            work: Work::DutyMilliPct(10_000),
            period_us: 16_000,
            length: Length::DurationUs(1_000_000),
            guaranteed: Guaranteed::Period,
            cpus: None,
            policy: None,
            priority: None,
            delay_us: 0,
        }
    }
}

/// ⌈a × b / c⌉ without overflow (c > 0).
fn mul_div_ceil(a: u64, b: u64, c: u64) -> u64 {
    let n = u128::from(a) * u128::from(b);
    let c = u128::from(c);
    u64::try_from(n.div_ceil(c)).unwrap_or(u64::MAX)
}

impl Periodic {
    /// The events of the phase and its loop count, as LISA's `to_events` + `loopify`.
    pub fn events(&self) -> Result<(u64, Vec<Event>), GenError> {
        let err = |m: String| Err(GenError::new(NAME, m));
        let p = self.period_us;
        if p == 0 {
            return err("period=0: expected a positive duration".into());
        }
        let (duration, loops) = match self.length {
            Length::DurationUs(d) => {
                if p > d {
                    return err(format!(
                        "period={p}us is longer than duration={d}us; expected period ≤ duration"
                    ));
                }
                (d, d / p)
            }
            Length::Loops(0) => return err("loops=0: expected at least 1".into()),
            Length::Loops(n) => (n.saturating_mul(p), n),
        };
        let timer = Event::Timer {
            name: "unique".into(),
            period_us: p,
            mode: TimerMode::Relative,
        };
        let run = match self.work {
            Work::DutyMilliPct(d) if d > 100_000 => {
                return err(format!(
                    "duty={}.{:03}: expected a percentage from 0 to 100",
                    d / 1000,
                    d % 1000
                ))
            }
            Work::DutyMilliPct(0) => return Ok((1, vec![Event::Sleep { us: duration }])),
            Work::DutyMilliPct(100_000) => return Ok((1, vec![Event::Run { us: duration }])),
            // run = duty% × period, exactly, rounded up as LISA's _to_us().
            Work::DutyMilliPct(d) => mul_div_ceil(d, p, 100_000),
            Work::RunUs(0) => return err("run=0: expected a positive duration".into()),
            Work::RunUs(r) if r > p => {
                return err(format!(
                    "run={r}us is longer than period={p}us; expected run ≤ period"
                ))
            }
            Work::RunUs(r) => r,
        };
        let wait = match self.guaranteed {
            Guaranteed::Period => timer,
            Guaranteed::Sleep => Event::Sleep { us: p - run },
        };
        Ok((loops, vec![Event::Run { us: run }, wait]))
    }

    /// The workload, after checking the parameters.
    pub fn workload(&self) -> Result<Workload, GenError> {
        if self.tasks == 0 {
            return Err(GenError::new(NAME, "tasks=0: expected at least 1"));
        }
        let policy = self.policy.unwrap_or_default();
        if policy == SchedPolicy::Deadline {
            return Err(GenError::new(
                NAME,
                "policy=SCHED_DEADLINE: expected SCHED_OTHER, SCHED_BATCH, SCHED_IDLE, SCHED_FIFO or SCHED_RR (deadline tasks need dl-runtime/dl-period: write the JSON)",
            ));
        }
        if let Some(pr) = self.priority {
            let (lo, hi, what) = if policy.is_fair() {
                (-20, 19, "a nice value")
            } else {
                (1, 99, "an RT priority")
            };
            if !(lo..=hi).contains(&pr) {
                return Err(GenError::new(
                    NAME,
                    format!(
                        "priority={pr}: expected {what} from {lo} to {hi} for {}",
                        policy.as_str()
                    ),
                ));
            }
        }
        let (loops, events) = self.events()?;
        let attrs = SchedAttrs {
            policy: self.policy,
            priority: self.priority,
            cpus: self.cpus.clone(),
            ..SchedAttrs::default()
        };
        let mut t = task(
            self.name.clone(),
            self.tasks,
            attrs,
            vec![phase("periodic", loops, None, events)],
        );
        t.delay_us = self.delay_us;
        let w = workload(NAME, vec![t]);
        check_names(NAME, &w, "name")?;
        Ok(w)
    }
}

/// Reads the parameters and builds the workload.
pub(crate) fn build(mut p: Params) -> Result<Workload, GenError> {
    let d = Periodic::default();
    let both = |a: &str, b: &str| {
        GenError::new(
            NAME,
            format!("{a} and {b} are both given; expected one of them"),
        )
    };
    if p.has("duty") && p.has("run") {
        return Err(both("duty", "run"));
    }
    if p.has("duration") && p.has("loops") {
        return Err(both("duration", "loops"));
    }
    if p.has("priority") && p.has("nice") {
        return Err(both("priority", "nice"));
    }
    let work = match p.duration_us("run")? {
        Some(r) => Work::RunUs(r),
        None => p.percent_milli("duty")?.map_or(d.work, Work::DutyMilliPct),
    };
    let length = match p.u64_in("loops", 1, u64::MAX / 2)? {
        Some(n) => Length::Loops(n),
        None => p
            .duration_us("duration")?
            .map_or(d.length, Length::DurationUs),
    };
    let policy = p.policy("policy")?;
    let nice = p.i64_in("nice", -20, 19)?;
    if nice.is_some() && !policy.unwrap_or_default().is_fair() {
        return Err(GenError::new(
            NAME,
            "nice: expected a fair policy (SCHED_OTHER, SCHED_BATCH, SCHED_IDLE); use priority for FIFO/RR",
        ));
    }
    let priority = match nice {
        Some(n) => Some(n),
        None => p.i64_in("priority", -20, 99)?,
    };
    let s = Periodic {
        name: p.name("name")?.unwrap_or(d.name),
        tasks: p
            .u64_in("tasks", 1, crate::MAX_THREADS)?
            .map_or(d.tasks, |v| v as u32),
        work,
        period_us: p.duration_us("period")?.unwrap_or(d.period_us),
        length,
        guaranteed: match p.choice("guaranteed", &["period", "sleep"])? {
            Some("sleep") => Guaranteed::Sleep,
            _ => Guaranteed::Period,
        },
        cpus: p.cpus("cpus")?,
        policy,
        priority: priority.map(|v| v as i32),
        delay_us: match p.raw("delay") {
            None => 0,
            Some(v) => super::params::parse_duration_us(&v).ok_or_else(|| {
                GenError::new(
                    NAME,
                    format!("delay={v}: expected a duration with an optional unit us, ms or s"),
                )
            })?,
        },
    };
    p.finish()?;
    s.workload()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::gen::from_spec;

    fn events(spec: &str) -> (u64, Vec<Event>) {
        let w = from_spec(spec).unwrap();
        let p = &w.tasks[0].phases[0];
        (
            p.loop_count,
            p.events.iter().map(|e| e.event.clone()).collect(),
        )
    }

    fn timer(period_us: u64) -> Event {
        Event::Timer {
            name: "unique".into(),
            period_us,
            mode: TimerMode::Relative,
        }
    }

    #[test]
    fn duty_cycle_as_lisa_writes_it() {
        // The overutilized experiment's tsk_a: 5 % of 16 ms for 10 s. LISA: run =
        // ceil(5 × 0.016 / 100 × 1e6) = 800 µs, loop = floor(10 / 0.016) = 625.
        assert_eq!(
            events("gen:periodic:duty=5,period=16ms,duration=10s"),
            (625, vec![Event::Run { us: 800 }, timer(16_000)])
        );
        // 12.5 % of 1 ms = 125 µs; 33.333 % of 10 ms = 3333.3 → 3334 µs (rounded up).
        assert_eq!(
            events("gen:periodic:duty=12.5,period=1ms,duration=1s").1[0],
            Event::Run { us: 125 }
        );
        assert_eq!(
            events("gen:periodic:duty=33.333,period=10ms,duration=1s").1[0],
            Event::Run { us: 3334 }
        );
    }

    #[test]
    fn zero_and_full_duty_are_single_events() {
        // tskbusy: 100 % duty, period 1 s, 10 s → one run of 10 s.
        assert_eq!(
            events("gen:periodic:duty=100,period=1s,duration=10s"),
            (1, vec![Event::Run { us: 10_000_000 }])
        );
        assert_eq!(
            events("gen:periodic:duty=0,period=1s,duration=10s"),
            (1, vec![Event::Sleep { us: 10_000_000 }])
        );
    }

    #[test]
    fn run_and_loops_give_the_schedfreq_rows() {
        // Row 6/33/300: 6 ms of work each 33 ms period, 300 times, SCHED_FIFO on CPU 0.
        let w = from_spec("gen:periodic:run=6ms,period=33ms,loops=300,policy=fifo,cpus=0").unwrap();
        let t = &w.tasks[0];
        assert_eq!(t.attrs.policy, Some(SchedPolicy::Fifo));
        assert_eq!(t.attrs.cpus, Some(vec![0]));
        assert_eq!(t.phases[0].loop_count, 300);
        assert_eq!(t.phases[0].events[0].event, Event::Run { us: 6000 });
        assert_eq!(t.phases[0].events[1].event, timer(33_000));
        // guaranteed=sleep: sleep period − run = 27 ms.
        assert_eq!(
            events("gen:periodic:run=6ms,period=33ms,loops=3,guaranteed=sleep").1[1],
            Event::Sleep { us: 27_000 }
        );
    }

    #[test]
    fn tasks_are_instances_with_unique_timers() {
        let w = from_spec("gen:periodic:tasks=4,name=tsk,nice=-5,delay=2ms").unwrap();
        let t = &w.tasks[0];
        assert_eq!((t.instances, t.loop_count, t.delay_us), (4, 1, 2000));
        assert_eq!(t.attrs.priority, Some(-5));
        // Default 10 % of 16 ms = 1600 µs, for floor(1 s / 16 ms) = 62 periods.
        assert_eq!(t.phases[0].loop_count, 62);
        assert_eq!(t.phases[0].events[0].event, Event::Run { us: 1600 });
    }

    #[test]
    fn bad_parameters_are_one_line_errors() {
        for (spec, want) in [
            (
                "gen:periodic:duty=101",
                "duty=101: expected a percentage from 0 to 100",
            ),
            (
                "gen:periodic:period=2s,duration=1s",
                "period=2000000us is longer than duration=1000000us",
            ),
            (
                "gen:periodic:run=20ms,period=10ms",
                "run=20000us is longer than period=10000us",
            ),
            ("gen:periodic:duty=5,run=1ms", "duty and run are both given"),
            (
                "gen:periodic:loops=3,duration=1s",
                "duration and loops are both given",
            ),
            (
                "gen:periodic:policy=fifo,priority=0",
                "priority=0: expected an RT priority from 1 to 99 for SCHED_FIFO",
            ),
            (
                "gen:periodic:policy=fifo,nice=1",
                "nice: expected a fair policy",
            ),
            (
                "gen:periodic:policy=rt",
                "policy=rt: expected one of SCHED_OTHER",
            ),
            (
                "gen:periodic:guaranteed=maybe",
                "guaranteed=maybe: expected one of period, sleep",
            ),
            (
                "gen:periodic:period=16",
                "period=16000000us is longer than duration=1000000us",
            ),
        ] {
            let e = from_spec(spec).unwrap_err().to_string();
            assert!(e.starts_with("gen:periodic: "), "{e}");
            assert!(e.contains(want), "{spec}: {e}");
        }
    }
}
