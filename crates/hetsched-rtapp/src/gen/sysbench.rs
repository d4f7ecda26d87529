//! `sysbench-cpu`: `sysbench cpu run` (sysbench 0.4 `--test=cpu`), a fixed amount of CPU
//! work per request (event), each worker thread taking requests until the count is done.
//!
//! # Model
//!
//! A request (sysbench's *event*: finding the primes up to `--cpu-max-prime`) is one
//! `run` of `request_us` µs on the reference (capacity 1024 at its maximum frequency;
//! default 1200 µs, the figure the misfit experiment uses), so its wall time scales with
//! capacity × frequency. A thread is a phase of one `run` looping once per request; the
//! task ends after its last request.
//!
//! # Counts
//!
//! sysbench's `--events` (0.4: `--max-requests`) is the total over all the process's
//! threads, taken from a shared counter: a fast thread takes more. `events=N` splits
//! N statically (thread i gets ⌊N/threads⌋, the first N mod threads one more), which is
//! exact for one thread — the misfit experiment runs one single-threaded sysbench per
//! CPU — and an approximation otherwise. `requests=N` gives each thread N requests.
//!
//! # Placement
//!
//! `cpus` is the process's affinity (`taskset -c`), `pin` one CPU (or `-`) per thread.
//! Threads with the same count and affinity are one task with `instance` = threads,
//! named `<name>-<i>` by rt-app; otherwise one task per thread, `<name>_<i>`.

use hetsched_core::workload::{Event, SchedAttrs, Workload};

use super::params::Params;
use super::{check_names, phase, task, workload, GenError, ParamSpec};

/// Generator name.
pub const NAME: &str = "sysbench-cpu";
/// One-line summary.
pub const SUMMARY: &str =
    "sysbench cpu run: threads doing a fixed number of fixed-work requests, then exiting";
/// Parameters.
pub const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "threads",
        default: "1",
        help: "worker threads (sysbench --threads / --num-threads)",
    },
    ParamSpec {
        name: "events",
        default: "10000",
        help: "requests in total over the threads, split evenly (sysbench --events / 0.4 --max-requests, whose default is 10000)",
    },
    ParamSpec {
        name: "requests",
        default: "-",
        help: "requests per thread (instead of events)",
    },
    ParamSpec {
        name: "request_us",
        default: "1200",
        help: "work per request, µs at capacity 1024 and fmax",
    },
    ParamSpec {
        name: "cpus",
        default: "all",
        help: "affinity of every thread (taskset -c list: 1, 0-3, [0-3,5])",
    },
    ParamSpec {
        name: "pin",
        default: "-",
        help: "one CPU per thread, - = not pinned: [1,2,-,-]",
    },
    ParamSpec {
        name: "nice",
        default: "0",
        help: "nice value of the threads (-20..19)",
    },
    ParamSpec {
        name: "name",
        default: "sysbench",
        help: "task name",
    },
];

/// How many requests the threads do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Requests {
    /// Each thread does this many.
    PerThread(u64),
    /// This many in total (sysbench's `--events`), split evenly.
    Total(u64),
}

/// One `sysbench cpu run` process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SysbenchCpu {
    /// Task name.
    pub name: String,
    /// Worker threads.
    pub threads: u32,
    /// Request count.
    pub requests: Requests,
    /// Work per request, µs on the reference.
    pub request_us: u64,
    /// Affinity of every thread (`taskset -c`); `None` = all CPUs.
    pub cpus: Option<Vec<usize>>,
    /// One CPU (or none) per thread; overrides `cpus` where set.
    pub pin: Option<Vec<Option<usize>>>,
    /// Nice value.
    pub nice: Option<i32>,
}

impl Default for SysbenchCpu {
    fn default() -> Self {
        SysbenchCpu {
            name: "sysbench".into(),
            threads: 1,
            requests: Requests::Total(10_000),
            request_us: 1200,
            cpus: None,
            pin: None,
            nice: None,
        }
    }
}

impl SysbenchCpu {
    /// Requests of each thread.
    pub fn per_thread(&self) -> Vec<u64> {
        let n = u64::from(self.threads);
        (0..n)
            .map(|i| match self.requests {
                Requests::PerThread(r) => r,
                Requests::Total(t) => t / n + u64::from(i < t % n),
            })
            .collect()
    }

    /// The workload, after checking the parameters.
    pub fn workload(&self) -> Result<Workload, GenError> {
        let err = |m: String| GenError::new(NAME, m);
        if self.threads == 0 {
            return Err(err("threads=0: expected at least 1".into()));
        }
        if self.request_us == 0 {
            return Err(err("request_us=0: expected at least 1 µs".into()));
        }
        match self.requests {
            Requests::PerThread(0) => return Err(err("requests=0: expected at least 1".into())),
            Requests::Total(t) if t < u64::from(self.threads) => {
                return Err(err(format!(
                    "events={t}: expected at least one per thread ({})",
                    self.threads
                )))
            }
            _ => {}
        }
        if let Some(pin) = &self.pin {
            if pin.len() != self.threads as usize {
                return Err(err(format!(
                    "pin: {} entries for threads={}; expected one CPU or - per thread",
                    pin.len(),
                    self.threads
                )));
            }
        }
        if let Some(n) = self.nice {
            if !(-20..=19).contains(&n) {
                return Err(err(format!("nice={n}: expected -20..19")));
            }
        }
        let counts = self.per_thread();
        let affinity: Vec<Option<Vec<usize>>> = (0..self.threads as usize)
            .map(|i| match self.pin.as_ref().and_then(|p| p[i]) {
                Some(c) => Some(vec![c]),
                None => self.cpus.clone(),
            })
            .collect();
        let attrs = |cpus: Option<Vec<usize>>| SchedAttrs {
            priority: self.nice,
            cpus,
            ..SchedAttrs::default()
        };
        let make = |count: u64| {
            phase(
                "requests",
                count,
                None,
                vec![Event::Run {
                    us: self.request_us,
                }],
            )
        };
        let uniform =
            counts.iter().all(|&c| c == counts[0]) && affinity.iter().all(|a| *a == affinity[0]);
        let tasks = if uniform {
            vec![task(
                self.name.clone(),
                self.threads,
                attrs(affinity[0].clone()),
                vec![make(counts[0])],
            )]
        } else {
            counts
                .iter()
                .zip(affinity)
                .enumerate()
                .map(|(i, (&c, a))| task(format!("{}_{i}", self.name), 1, attrs(a), vec![make(c)]))
                .collect()
        };
        let w = workload(NAME, tasks);
        check_names(NAME, &w, "name")?;
        Ok(w)
    }
}

/// Reads the parameters and builds the workload.
pub(crate) fn build(mut p: Params) -> Result<Workload, GenError> {
    let d = SysbenchCpu::default();
    let threads = p
        .u64_in("threads", 1, 4096)?
        .map_or(d.threads, |v| v as u32);
    let requests = match (p.has("events"), p.has("requests")) {
        (true, true) => {
            return Err(GenError::new(
                NAME,
                "events and requests are both given; expected one (events = total, requests = per thread)",
            ))
        }
        (_, true) => Requests::PerThread(p.u64_in("requests", 1, u64::MAX / 2)?.unwrap_or(1)),
        _ => p
            .u64_in("events", 1, u64::MAX / 2)?
            .map_or(d.requests, Requests::Total),
    };
    let s = SysbenchCpu {
        name: p.name("name")?.unwrap_or(d.name),
        threads,
        requests,
        request_us: p
            .u64_in("request_us", 1, u64::MAX / 2)?
            .unwrap_or(d.request_us),
        cpus: p.cpus("cpus")?,
        pin: p.pin_list("pin")?,
        nice: p.i64_in("nice", -20, 19)?.map(|n| n as i32),
    };
    p.finish()?;
    s.workload()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::gen::from_spec;

    fn run_total(w: &Workload) -> u64 {
        w.tasks
            .iter()
            .map(|t| {
                let per_thread: u64 = t
                    .phases
                    .iter()
                    .map(|p| {
                        p.loop_count
                            * p.events
                                .iter()
                                .map(|e| match e.event {
                                    Event::Run { us } => us,
                                    _ => 0,
                                })
                                .sum::<u64>()
                    })
                    .sum();
                per_thread * u64::from(t.instances)
            })
            .sum()
    }

    #[test]
    fn one_thread_does_n_requests_of_fixed_work() {
        let w = from_spec("gen:sysbench-cpu:requests=1000").unwrap();
        assert_eq!(w.tasks.len(), 1);
        let t = &w.tasks[0];
        assert_eq!(
            (t.name.as_str(), t.instances, t.loop_count),
            ("sysbench", 1, 1)
        );
        assert_eq!(t.phases.len(), 1);
        assert_eq!(t.phases[0].loop_count, 1000);
        assert_eq!(t.phases[0].events.len(), 1);
        assert_eq!(t.phases[0].events[0].event, Event::Run { us: 1200 });
        // 1000 requests × 1200 µs = 1.2 s of work at capacity 1024, fmax.
        assert_eq!(run_total(&w), 1_200_000);
        assert_eq!(w.duration_s, None);
        assert_eq!(t.attrs.cpus, None);
    }

    #[test]
    fn events_are_a_total_split_over_threads() {
        // 10 events over 4 threads: 3, 3, 2, 2 (sysbench's total, split statically).
        let w = from_spec("gen:sysbench-cpu:threads=4,events=10,request_us=100").unwrap();
        let loops: Vec<u64> = w.tasks.iter().map(|t| t.phases[0].loop_count).collect();
        assert_eq!(loops, [3, 3, 2, 2]);
        assert_eq!(w.tasks[0].name, "sysbench_0");
        assert_eq!(run_total(&w), 1000);
        // An even split is one task with four instances.
        let w = from_spec("gen:sysbench-cpu:threads=4,events=8").unwrap();
        assert_eq!(w.tasks.len(), 1);
        assert_eq!(w.tasks[0].instances, 4);
        assert_eq!(run_total(&w), 8 * 1200);
        // The default is sysbench 0.4's --max-requests=10000.
        let w = from_spec("gen:sysbench-cpu").unwrap();
        assert_eq!(run_total(&w), 10_000 * 1200);
    }

    #[test]
    fn pin_and_cpus_set_affinity_per_thread() {
        let w = from_spec("gen:sysbench-cpu:threads=3,requests=5,cpus=[0-3],pin=[1,-,2]").unwrap();
        let aff: Vec<Option<Vec<usize>>> = w.tasks.iter().map(|t| t.attrs.cpus.clone()).collect();
        assert_eq!(aff, [Some(vec![1]), Some(vec![0, 1, 2, 3]), Some(vec![2])]);
        // Each phase carries its task's affinity, as the reader resolves it.
        assert!(w
            .tasks
            .iter()
            .all(|t| t.phases[0].attrs.cpus == t.attrs.cpus));
    }

    #[test]
    fn bad_parameters_are_one_line_errors() {
        for (spec, want) in [
            (
                "gen:sysbench-cpu:threads=0",
                "threads=0: expected an integer from 1 to 4096",
            ),
            (
                "gen:sysbench-cpu:events=2,threads=3",
                "events=2: expected at least one per thread (3)",
            ),
            (
                "gen:sysbench-cpu:events=2,requests=3",
                "events and requests are both given",
            ),
            (
                "gen:sysbench-cpu:threads=2,pin=[1]",
                "pin: 1 entries for threads=2",
            ),
            ("gen:sysbench-cpu:cpus=x", "cpus=x: expected a CPU list"),
            (
                "gen:sysbench-cpu:nice=20",
                "nice=20: expected an integer from -20 to 19",
            ),
            (
                "gen:sysbench-cpu:name=averyveryverylongname",
                "name: thread name `averyveryverylongname-0` has 23 characters",
            ),
        ] {
            let e = from_spec(spec).unwrap_err().to_string();
            assert!(e.starts_with("gen:sysbench-cpu: "), "{e}");
            assert!(e.contains(want), "{spec}: {e}");
            assert!(!e.contains('\n'));
        }
    }
}
