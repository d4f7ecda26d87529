//! `hackbench`: `hackbench -g G -l L` (rt-tests; `perf bench sched messaging` is the same
//! program), modelled with rt-app semaphores.
//!
//! # What hackbench does
//!
//! Each of G groups has `fds` (default 20) receivers and `fds` senders, created receivers
//! first. Every sender writes L × `fds` messages of 100 bytes: for each loop, one to each
//! receiver of its group, in order (`sender()`: `for (i = 0; i < loops; i++) for (j = 0;
//! j < num_fds; j++) write(out_fds[j], …)`). Every receiver reads `fds` × L messages
//! (`num_packets = num_fds * loops`), blocking in `read()` until one arrives. Process mode
//! (default) and thread mode (`-T`), sockets (default) and pipes (`-p`) are the same
//! program apart from the channel and the address space.
//!
//! # Model (a model, not a measurement)
//!
//! Each receiver's channel is a counting semaphore (rt-app `sem_post`/`sem_wait`, initial
//! 0): a message sent is a post, a message read a wait. A sender's phase loops L times
//! over `fds` × { `run: write_us`, `sem_post: <receiver's channel>` }; a receiver's phase
//! loops `fds` × L times over { `sem_wait: <own channel>`, `run: read_us` }. So each
//! receiver is posted `fds` × L times (once per loop by each of the `fds` senders) and
//! waits exactly as often: the semaphores balance and every task ends.
//!
//! Simplified: the channel never fills (a socket or pipe buffer holds hundreds of
//! 100-byte messages; a sender that fills it blocks in hackbench, here it never does);
//! the cost of a message is a fixed amount of work on each side, not a function of the
//! size; the start barrier (all tasks ready, then one write starts them) is replaced by
//! all tasks starting at time 0.
//!
//! # Costs
//!
//! `write_us` and `read_us` are µs of work at capacity 1024 and fmax (the generators'
//! reference). The defaults, 5 µs each, are *assumed*: the order of magnitude of a
//! 100-byte write (syscall, copy, waking the reader) and read on a Cortex-A53 around
//! 1.2 GHz, not measured here. As a sanity check, `-g 1 -l 2560` is 20 × 20 × 2560 =
//! 1 024 000 messages × 10 µs = 10.24 CPU-seconds, 1.28 s on eight such CPUs if perfectly
//! spread, close to the 1.2–1.4 s the fairness series reports on its 2 × 4 A53 board.
//!
//! # Names
//!
//! Tasks are `<name>-<g>-r<i>` and `<name>-<g>-s<i>` (threads `hb-0-r3-0`: rt-app
//! appends the instance), channels `<name>-<g>-pipe<i>`. hackbench's own processes are
//! all called `hackbench`; the default prefix is `hb` because `hackbench-<g>-s<i>-0`
//! would not fit the 15-character comm.

use hetsched_core::workload::{Event, SchedAttrs, Workload};

use super::params::Params;
use super::{check_names, phase, task, workload, GenError, ParamSpec};

/// Generator name.
pub const NAME: &str = "hackbench";
/// One-line summary.
pub const SUMMARY: &str =
    "hackbench -g G -l L: groups of senders writing 100-byte messages to blocked receivers";
/// Parameters.
pub const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "groups",
        default: "10",
        help: "groups (hackbench -g)",
    },
    ParamSpec {
        name: "loops",
        default: "100",
        help: "messages each sender writes to each receiver (hackbench -l)",
    },
    ParamSpec {
        name: "fds",
        default: "20",
        help: "senders and receivers per group (hackbench -f)",
    },
    ParamSpec {
        name: "write_us",
        default: "5",
        help: "work per 100-byte write, µs at capacity 1024 and fmax (assumed)",
    },
    ParamSpec {
        name: "read_us",
        default: "5",
        help: "work per 100-byte read, µs at capacity 1024 and fmax (assumed)",
    },
    ParamSpec {
        name: "name",
        default: "hb",
        help: "prefix of task and channel names",
    },
];

/// One hackbench run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hackbench {
    /// Prefix of task and channel names.
    pub name: String,
    /// Groups (`-g`).
    pub groups: u32,
    /// Loops (`-l`).
    pub loops: u64,
    /// Senders and receivers per group (`-f`).
    pub fds: u32,
    /// Work per write, µs on the reference.
    pub write_us: u64,
    /// Work per read, µs on the reference.
    pub read_us: u64,
}

impl Default for Hackbench {
    fn default() -> Self {
        Hackbench {
            name: "hb".into(),
            groups: 10,
            loops: 100,
            fds: 20,
            write_us: 5,
            read_us: 5,
        }
    }
}

impl Hackbench {
    /// Task name of receiver `i` of group `g`.
    pub fn receiver(&self, g: u32, i: u32) -> String {
        format!("{}-{g}-r{i}", self.name)
    }

    /// Task name of sender `i` of group `g`.
    pub fn sender(&self, g: u32, i: u32) -> String {
        format!("{}-{g}-s{i}", self.name)
    }

    /// Semaphore standing for receiver `i`'s channel in group `g`.
    pub fn channel(&self, g: u32, i: u32) -> String {
        format!("{}-{g}-pipe{i}", self.name)
    }

    /// The workload, after checking the parameters.
    pub fn workload(&self) -> Result<Workload, GenError> {
        let err = |m: &str| Err(GenError::new(NAME, m));
        if self.groups == 0 {
            return err("groups=0: expected at least 1");
        }
        if self.loops == 0 {
            return err("loops=0: expected at least 1");
        }
        if self.fds == 0 {
            return err("fds=0: expected at least 1");
        }
        if self.write_us == 0 || self.read_us == 0 {
            return err("write_us and read_us: expected at least 1 µs each");
        }
        let threads = 2 * u64::from(self.groups) * u64::from(self.fds);
        if threads > crate::MAX_THREADS {
            return Err(GenError::new(
                NAME,
                format!(
                    "groups={} fds={}: {threads} threads (2 × groups × fds); at most {} threads per run (Linux's default pid_max)",
                    self.groups,
                    self.fds,
                    crate::MAX_THREADS
                ),
            ));
        }
        let Some(reads) = self.loops.checked_mul(u64::from(self.fds)) else {
            return err("loops × fds: too many messages");
        };
        let mut tasks = Vec::new();
        for g in 0..self.groups {
            for i in 0..self.fds {
                tasks.push(task(
                    self.receiver(g, i),
                    1,
                    SchedAttrs::default(),
                    vec![phase(
                        "recv",
                        reads,
                        None,
                        vec![
                            Event::SemWait {
                                sem: self.channel(g, i),
                            },
                            Event::Run { us: self.read_us },
                        ],
                    )],
                ));
            }
            let mut send = Vec::with_capacity(2 * self.fds as usize);
            for j in 0..self.fds {
                send.push(Event::Run { us: self.write_us });
                send.push(Event::SemPost {
                    sem: self.channel(g, j),
                });
            }
            for i in 0..self.fds {
                tasks.push(task(
                    self.sender(g, i),
                    1,
                    SchedAttrs::default(),
                    vec![phase("send", self.loops, None, send.clone())],
                ));
            }
        }
        let w = workload(NAME, tasks);
        check_names(NAME, &w, "name")?;
        Ok(w)
    }
}

/// Reads the parameters and builds the workload.
pub(crate) fn build(mut p: Params) -> Result<Workload, GenError> {
    let d = Hackbench::default();
    let h = Hackbench {
        groups: p
            .u64_in("groups", 1, 100_000)?
            .map_or(d.groups, |v| v as u32),
        loops: p.u64_in("loops", 1, u64::MAX / 2)?.unwrap_or(d.loops),
        fds: p.u64_in("fds", 1, 100_000)?.map_or(d.fds, |v| v as u32),
        write_us: p.u64_in("write_us", 1, u64::MAX / 2)?.unwrap_or(d.write_us),
        read_us: p.u64_in("read_us", 1, u64::MAX / 2)?.unwrap_or(d.read_us),
        name: p.name("name")?.unwrap_or(d.name),
    };
    p.finish()?;
    h.workload()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::gen::{from_spec, TASK_COMM_MAX_LEN};
    use std::collections::BTreeMap;

    /// (posts, waits) per semaphore over the whole run: events per phase iteration ×
    /// phase loops × instances.
    fn sem_balance(w: &Workload) -> BTreeMap<String, (u64, u64)> {
        let mut m: BTreeMap<String, (u64, u64)> = BTreeMap::new();
        for t in &w.tasks {
            for p in &t.phases {
                let times = p.loop_count * u64::from(t.instances);
                for e in &p.events {
                    match &e.event {
                        Event::SemPost { sem } => m.entry(sem.clone()).or_default().0 += times,
                        Event::SemWait { sem } => m.entry(sem.clone()).or_default().1 += times,
                        _ => {}
                    }
                }
            }
        }
        m
    }

    #[test]
    fn every_sender_posts_to_each_receiver_of_its_group_l_times() {
        let w = from_spec("gen:hackbench:groups=4,loops=100").unwrap();
        // 4 groups × (20 receivers + 20 senders).
        assert_eq!(w.tasks.len(), 160);
        let h = Hackbench {
            groups: 4,
            ..Hackbench::default()
        };
        for g in 0..4 {
            for i in 0..20 {
                let s = w.tasks.iter().find(|t| t.name == h.sender(g, i)).unwrap();
                assert_eq!(s.phases[0].loop_count, 100);
                let ev = &s.phases[0].events;
                assert_eq!(ev.len(), 40);
                for (j, pair) in ev.chunks(2).enumerate() {
                    assert_eq!(pair[0].event, Event::Run { us: 5 });
                    assert_eq!(
                        pair[1].event,
                        Event::SemPost {
                            sem: h.channel(g, j as u32)
                        }
                    );
                }
                let r = w.tasks.iter().find(|t| t.name == h.receiver(g, i)).unwrap();
                // 20 senders × 100 loops = 2000 reads.
                assert_eq!(r.phases[0].loop_count, 2000);
                assert_eq!(
                    r.phases[0].events[0].event,
                    Event::SemWait {
                        sem: h.channel(g, i)
                    }
                );
                assert_eq!(r.phases[0].events[1].event, Event::Run { us: 5 });
            }
        }
        // Receivers come first in each group, as hackbench creates them.
        assert_eq!(w.tasks[0].name, "hb-0-r0");
        assert_eq!(w.tasks[20].name, "hb-0-s0");
    }

    #[test]
    fn semaphores_balance() {
        let w = from_spec("gen:hackbench:groups=3,loops=7,fds=5").unwrap();
        let m = sem_balance(&w);
        // One channel per receiver: 3 groups × 5.
        assert_eq!(m.len(), 15);
        for (sem, (posts, waits)) in &m {
            // 5 senders × 7 loops each way.
            assert_eq!((*posts, *waits), (35, 35), "{sem}");
        }
    }

    #[test]
    fn names_fit_the_comm_and_are_unique() {
        let w = from_spec("gen:hackbench:groups=16,loops=1").unwrap();
        let mut names = std::collections::BTreeSet::new();
        for t in &w.tasks {
            let comm = format!("{}-0", t.name);
            assert!(comm.len() <= TASK_COMM_MAX_LEN, "{comm}");
            assert!(names.insert(comm));
        }
        // With the prefix "hackbench" even the first thread, "hackbench-0-r0-0", has 16.
        let e = from_spec("gen:hackbench:groups=16,name=hackbench")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("thread name `hackbench-0-r0-0` has 16 characters"),
            "{e}"
        );
    }

    #[test]
    fn work_totals() {
        // Per group: 20 senders × 100 loops × 20 writes × 5 µs + 20 receivers × 2000 reads
        // × 5 µs = 200 000 + 200 000 µs.
        let w = from_spec("gen:hackbench:groups=2").unwrap();
        let total: u64 = w
            .tasks
            .iter()
            .flat_map(|t| t.phases.iter())
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
        assert_eq!(total, 2 * 400_000);
    }

    #[test]
    fn bad_parameters_are_one_line_errors() {
        for (spec, want) in [
            (
                "gen:hackbench:groups=0",
                "groups=0: expected an integer from 1 to 100000",
            ),
            ("gen:hackbench:loops=-1", "loops=-1: expected an integer"),
            ("gen:hackbench:fds=x", "fds=x: expected an integer"),
            ("gen:hackbench:name=a.b", "name=a.b: expected a name"),
        ] {
            let e = from_spec(spec).unwrap_err().to_string();
            assert!(e.starts_with("gen:hackbench: "), "{e}");
            assert!(e.contains(want), "{spec}: {e}");
        }
    }
}
