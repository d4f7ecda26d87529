//! `stress-ng-cpu`: `stress-ng --cpu X --timeout T`, X workers that are always running
//! for T seconds, unpinned unless `cpus` is given.
//!
//! # Model
//!
//! Each worker is one thread whose single phase is `runtime: T` — rt-app's busy loop
//! until T µs of *wall* time have passed, whatever the CPU and however often it is
//! preempted — which is what `--timeout` does (an alarm after T seconds of wall time).
//! The workers' bogo-ops (the work done) are not modelled: a `runtime` does no fixed
//! amount of work, and the experiments that run stress-ng measure the scheduler's
//! state (overutilized time), not throughput. The workload is finite: it ends at T.
//! stress-ng's `--cpu 0` (one worker per online CPU) needs the platform, which a
//! generator does not know: give the count.

use hetsched_core::workload::{Event, SchedAttrs, Workload};

use super::params::Params;
use super::{check_names, phase, task, workload, GenError, ParamSpec};

/// Generator name.
pub const NAME: &str = "stress-ng-cpu";
/// One-line summary.
pub const SUMMARY: &str = "stress-ng --cpu X --timeout T: X always-running workers for T";
/// Parameters.
pub const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "workers",
        default: "1",
        help: "number of workers (stress-ng --cpu X; 0 = per CPU is not supported)",
    },
    ParamSpec {
        name: "timeout",
        default: "60s",
        help: "how long they run, wall time (stress-ng --timeout; bare number = seconds)",
    },
    ParamSpec {
        name: "cpus",
        default: "all",
        help: "affinity of every worker (taskset -c list: 1, 0-3, [0-3,5])",
    },
    ParamSpec {
        name: "nice",
        default: "0",
        help: "nice value of the workers (-20..19)",
    },
    ParamSpec {
        name: "name",
        default: "stress-ng",
        help: "task name",
    },
];

/// One `stress-ng --cpu X --timeout T`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StressNgCpu {
    /// Task name; workers are its instances `<name>-<i>`.
    pub name: String,
    /// Workers.
    pub workers: u32,
    /// Timeout in µs of wall time.
    pub timeout_us: u64,
    /// Affinity; `None` = all CPUs.
    pub cpus: Option<Vec<usize>>,
    /// Nice value.
    pub nice: Option<i32>,
}

impl Default for StressNgCpu {
    fn default() -> Self {
        StressNgCpu {
            name: "stress-ng".into(),
            workers: 1,
            timeout_us: 60_000_000,
            cpus: None,
            nice: None,
        }
    }
}

impl StressNgCpu {
    /// The workload, after checking the parameters.
    pub fn workload(&self) -> Result<Workload, GenError> {
        if self.workers == 0 {
            return Err(GenError::new(
                NAME,
                "workers=0: expected at least 1 (stress-ng's one-per-CPU needs the platform; give the count)",
            ));
        }
        if self.timeout_us == 0 {
            return Err(GenError::new(
                NAME,
                "timeout=0: expected a positive duration",
            ));
        }
        if let Some(n) = self.nice {
            if !(-20..=19).contains(&n) {
                return Err(GenError::new(NAME, format!("nice={n}: expected -20..19")));
            }
        }
        let attrs = SchedAttrs {
            priority: self.nice,
            cpus: self.cpus.clone(),
            ..SchedAttrs::default()
        };
        let t = task(
            self.name.clone(),
            self.workers,
            attrs,
            vec![phase(
                "cpu",
                1,
                None,
                vec![Event::Runtime {
                    us: self.timeout_us,
                }],
            )],
        );
        let w = workload(NAME, vec![t]);
        check_names(NAME, &w, "name")?;
        Ok(w)
    }
}

/// Reads the parameters and builds the workload.
pub(crate) fn build(mut p: Params) -> Result<Workload, GenError> {
    let d = StressNgCpu::default();
    let s = StressNgCpu {
        workers: match p.u64_in("workers", 0, crate::MAX_THREADS)? {
            Some(0) => 0,
            Some(n) => n as u32,
            None => d.workers,
        },
        timeout_us: p.duration_us("timeout")?.unwrap_or(d.timeout_us),
        cpus: p.cpus("cpus")?,
        nice: p.i64_in("nice", -20, 19)?.map(|n| n as i32),
        name: p.name("name")?.unwrap_or(d.name),
    };
    p.finish()?;
    s.workload()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::gen::from_spec;

    #[test]
    fn workers_run_for_the_timeout() {
        let w = from_spec("gen:stress-ng-cpu:workers=3,timeout=60").unwrap();
        assert_eq!(w.tasks.len(), 1);
        let t = &w.tasks[0];
        assert_eq!(
            (t.name.as_str(), t.instances, t.loop_count),
            ("stress-ng", 3, 1)
        );
        assert_eq!(t.phases[0].loop_count, 1);
        // 60 s of wall time = 60 000 000 µs of `runtime`, unpinned.
        assert_eq!(
            t.phases[0].events[0].event,
            Event::Runtime { us: 60_000_000 }
        );
        assert_eq!(t.attrs.cpus, None);
        let w = from_spec("gen:stress-ng-cpu:timeout=1.5s,cpus=4-5").unwrap();
        assert_eq!(
            w.tasks[0].phases[0].events[0].event,
            Event::Runtime { us: 1_500_000 }
        );
        assert_eq!(w.tasks[0].attrs.cpus, Some(vec![4, 5]));
    }

    #[test]
    fn bad_parameters_are_one_line_errors() {
        for (spec, want) in [
            (
                "gen:stress-ng-cpu:workers=0",
                "workers=0: expected at least 1",
            ),
            (
                "gen:stress-ng-cpu:timeout=soon",
                "timeout=soon: expected a positive duration",
            ),
            (
                "gen:stress-ng-cpu:timeout=0s",
                "timeout=0s: expected a positive duration",
            ),
            // The last thread is "stress-ng-x-32767": 11 + 1 + 5 characters.
            (
                "gen:stress-ng-cpu:workers=32768,name=stress-ng-x",
                "thread name `stress-ng-x-32767` has 17 characters",
            ),
            ("gen:stress-ng-cpu:workers=32769", "workers=32769"),
        ] {
            let e = from_spec(spec).unwrap_err().to_string();
            assert!(e.contains(want), "{spec}: {e}");
        }
    }
}
