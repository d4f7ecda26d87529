//! The workload's programs laid out flat for the interpreter (user/interp.rs): every
//! task's phases in one array and every phase's events in another, each event with its
//! resources and timer resolved (as rt-app's parser resolves them by name) and each phase
//! with the affinity and attributes it applies. Stepping a thread reads a few entries of
//! these dense arrays instead of following the workload's nested vectors and the
//! per-task tables beside them: on a workload of thousands of tasks each level was a
//! cache miss. Tasks whose programs are equal share one ([`FlatProgram::share`]).
//!
//! A thread keeps its place as a [`Cursor`], the indices of its phase and next event in
//! these arrays; every phase's events end with a sentinel entry, so stepping reads one
//! entry, without the task and phase the event was reached through.

use crate::sim::*;
use crate::workload::{SchedAttrs, TaskSpec, TimerMode};
use std::collections::HashMap;

/// One event of a phase, resolved.
#[derive(Debug, Clone, Copy)]
pub(in crate::sim) struct FlatEvent<'w> {
    /// What the step does at it, decoded.
    pub(in crate::sim) act: Act,
    /// The event; `None` for the sentinel after a phase's last event (the iteration
    /// ends).
    pub(in crate::sim) ev: Option<&'w Event>,
    /// The resources it uses (indices in `Resources`: a mutex, condition, barrier,
    /// semaphore or suspend point, and a condition's mutex); the task a `fork` creates.
    pub(in crate::sim) ra: usize,
    pub(in crate::sim) rb: usize,
}

/// What the step ([`Sim::step_program`]) does at an entry of the events array, decoded
/// when the program is laid out: the common events' parameters as the step uses them (in
/// ns, a timer's state resolved) and, at a phase's sentinel, where its next iteration
/// starts. Every field is a function of the workload's event and the layout: the step
/// reads one entry instead of the event, its slot and the phase and task it is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::sim) enum Act {
    /// The sentinel after a phase's last event: the iteration ends. The phase's
    /// iteration count, its first event (the next iteration's start), the start of the
    /// next phase of the task's program ([`Cursor`]; the first phase after the last) and
    /// whether this phase is the last (the program's loop ends with it).
    End {
        loop_count: u64,
        first: u32,
        next: Cursor,
        last: bool,
    },
    /// `run`: `us` µs of the reference's work, `ns` = `program::us(us)`.
    Run { us: u64, ns: u64 },
    /// `runtime`: `ns` (`program::us(us)`) of wall time.
    Runtime { ns: u64 },
    /// `sleep`: `ns` (`program::us(us)`).
    Sleep { ns: u64 },
    /// `timer`: its period in ns (`program::us(period_us)`), its mode and where its
    /// state lives.
    Timer {
        period_ns: u64,
        mode: TimerMode,
        slot: TimerSlot,
    },
    /// Any other event: `Sim::do_event()`.
    Other,
}

/// The [`Act`] of the workload's event `e`, whose timer (if it is one) is in `timer`.
fn act_of(e: &Event, timer: Option<TimerSlot>) -> Act {
    match (e, timer) {
        (Event::Run { us }, _) => Act::Run {
            us: *us,
            ns: program::us(*us),
        },
        (Event::Runtime { us }, _) => Act::Runtime {
            ns: program::us(*us),
        },
        (Event::Sleep { us }, _) => Act::Sleep {
            ns: program::us(*us),
        },
        (
            Event::Timer {
                period_us, mode, ..
            },
            Some(slot),
        ) => Act::Timer {
            period_ns: program::us(*period_us),
            mode: *mode,
            slot,
        },
        _ => Act::Other,
    }
}

/// One phase of a task: its events and what it applies when an iteration starts.
#[derive(Debug, Clone, Copy)]
pub(in crate::sim) struct FlatPhase<'w> {
    /// Its first event in `FlatProgram::events`; its last is followed by a sentinel.
    first: u32,
    /// Iterations of the phase.
    pub(in crate::sim) loop_count: u64,
    /// The affinity it applies: its `cpus`, else the task's, else all CPUs.
    pub(in crate::sim) affinity: CpuSet,
    /// Whether it sets any of `policy`, `priority`, `util_min`, `util_max` (else its
    /// `sched_setattr()` calls change nothing and are skipped).
    pub(in crate::sim) sets_attrs: bool,
    /// The attributes it sets (`sched_setattr()`); `attrs` for the deadline parameters.
    pub(in crate::sim) policy: Option<SchedPolicy>,
    pub(in crate::sim) priority: Option<i32>,
    pub(in crate::sim) util_min: Option<i32>,
    pub(in crate::sim) util_max: Option<i32>,
    pub(in crate::sim) attrs: &'w SchedAttrs,
}

/// One task: its phases and loops.
#[derive(Debug, Clone, Copy)]
pub(in crate::sim) struct FlatTask {
    /// Its phases: `FlatProgram::phases[first..first + len]`.
    first: u32,
    /// Number of phases.
    pub(in crate::sim) nr_phases: u32,
    /// rt-app's `loop` of the task (negative: forever).
    pub(in crate::sim) loop_count: i64,
    /// Number of `unique*` timer slots of each of its threads.
    pub(in crate::sim) unique_timers: u32,
}

impl FlatTask {
    /// The number of loops of the program after which a thread of the task is done
    /// (rt-app's `loop`), `u64::MAX` for a task that loops forever (a negative `loop`: a
    /// thread never reaches `u64::MAX` loops).
    pub(in crate::sim) fn loop_limit(self) -> u64 {
        u64::try_from(self.loop_count).unwrap_or(u64::MAX)
    }
}

/// Where a thread is in the flat program: its phase and its next event (indices in
/// `FlatProgram::phases` and `FlatProgram::events`; the next event is the phase's
/// sentinel when the iteration's events are done).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(in crate::sim) struct Cursor {
    phase: u32,
    event: u32,
}

/// The workload's programs, flat.
#[derive(Debug, Clone, Default)]
pub(in crate::sim) struct FlatProgram<'w> {
    tasks: Vec<FlatTask>,
    phases: Vec<FlatPhase<'w>>,
    events: Vec<FlatEvent<'w>>,
    /// Number of shared (not `unique*`) timers.
    pub(in crate::sim) nr_shared_timers: usize,
}

/// A `u32` index of the flat arrays.
fn idx(n: usize) -> u32 {
    u32::try_from(n).expect("workload program larger than 2^32 entries")
}

impl<'w> FlatProgram<'w> {
    /// Lays out `w`'s programs for a platform of `nr_cpus` CPUs. Timers: shared names get
    /// global slots, `unique*` names per-thread slots; synchronisation resources are
    /// resolved into `res` per event, like rt-app's parser does.
    pub(in crate::sim) fn new(w: &'w Workload, nr_cpus: usize, res: &mut Resources) -> Self {
        let mut prog = FlatProgram::default();
        let mut shared: BTreeMap<&str, usize> = BTreeMap::new();
        let mut programs: HashMap<String, u32> = HashMap::new();
        for t in &w.tasks {
            let mut uniq: BTreeMap<&str, usize> = BTreeMap::new();
            let first = idx(prog.phases.len());
            let first_event_of_task = prog.events.len();
            for ph in &t.phases {
                let first_event = idx(prog.events.len());
                for e in &ph.events {
                    let timer = match &e.event {
                        Event::Timer { name, .. } if name.starts_with("unique") => {
                            let l = uniq.len();
                            Some(TimerSlot::Unique(idx(*uniq
                                .entry(name.as_str())
                                .or_insert(l))))
                        }
                        Event::Timer { name, .. } => {
                            let l = shared.len();
                            Some(TimerSlot::Shared(idx(*shared
                                .entry(name.as_str())
                                .or_insert(l))))
                        }
                        _ => None,
                    };
                    let (ra, rb) = resources_of(w, t, &e.event, res);
                    prog.events.push(FlatEvent {
                        act: act_of(&e.event, timer),
                        ev: Some(&e.event),
                        ra,
                        rb,
                    });
                }
                // the sentinel: its `Act::End` is completed below, once the task's phases
                // are laid out
                prog.events.push(FlatEvent {
                    act: Act::Other,
                    ev: None,
                    ra: 0,
                    rb: 0,
                });
                let affinity = ph
                    .attrs
                    .cpus
                    .as_ref()
                    .or(t.attrs.cpus.as_ref())
                    .map_or(CpuSet::first_n(nr_cpus), |c| CpuSet::from_cpus(c));
                let a = &ph.attrs;
                prog.phases.push(FlatPhase {
                    first: first_event,
                    loop_count: ph.loop_count,
                    affinity,
                    sets_attrs: a.policy.is_some()
                        || a.priority.is_some()
                        || a.util_min.is_some()
                        || a.util_max.is_some(),
                    policy: ph.attrs.policy,
                    priority: ph.attrs.priority,
                    util_min: ph.attrs.util_min,
                    util_max: ph.attrs.util_max,
                    attrs: &ph.attrs,
                });
            }
            prog.end_phases(first);
            let first = prog.share(first, first_event_of_task, &mut programs);
            prog.tasks.push(FlatTask {
                first,
                nr_phases: idx(t.phases.len()),
                loop_count: t.loop_count,
                unique_timers: idx(uniq.len()),
            });
        }
        prog.nr_shared_timers = shared.len();
        prog
    }

    /// Writes the `Act::End` of the sentinels of the task's phases, `phases[first..]`
    /// (the task's, just laid out): a phase's next is the one after it, or the task's
    /// first after its last.
    fn end_phases(&mut self, first: u32) {
        let n = self.phases.len();
        for i in first as usize..n {
            let ph = self.phases[i];
            let last = i + 1 == n;
            let next = if last { first as usize } else { i + 1 };
            let next = Cursor {
                phase: idx(next),
                event: self.phases[next].first,
            };
            // the sentinel ends the phase's events: just before the next phase's first,
            // or at the end of the array for the task's last phase
            let end = if last {
                self.events.len() - 1
            } else {
                self.phases[i + 1].first as usize - 1
            };
            debug_assert!(self.events[end].ev.is_none(), "not a sentinel");
            self.events[end].act = Act::End {
                loop_count: ph.loop_count,
                first: ph.first,
                next,
                last,
            };
        }
    }

    /// Shares a task's program with an earlier task whose phases and events are the same
    /// (generated workloads repeat a few programs over thousands of tasks, and a shared
    /// one stays in cache): the task's entries, from `first` (phases) and `first_event`
    /// (events) to the ends of the arrays, are dropped when an equal program is already
    /// laid out, whose first phase is returned; otherwise `first`.
    fn share(
        &mut self,
        first: u32,
        first_event: usize,
        programs: &mut HashMap<String, u32>,
    ) -> u32 {
        use std::fmt::Write;
        let mut key = String::new();
        for ph in &self.phases[first as usize..] {
            let _ = write!(
                key,
                "{} {} {:?} {:?} {:?} {:?} {:?} {:?};",
                ph.first as usize - first_event,
                ph.loop_count,
                ph.affinity,
                ph.policy,
                ph.priority,
                ph.util_min,
                ph.util_max,
                ph.attrs
            );
        }
        for e in &self.events[first_event..] {
            // the sentinels' `Act::End` holds absolute indices, which differ between
            // equal programs; it is a function of the phases' keys above
            let act = match e.act {
                Act::End { .. } => None,
                act => Some(act),
            };
            let _ = write!(key, "{:?} {} {} {:?};", e.ev, e.ra, e.rb, act);
        }
        match programs.get(&key) {
            Some(&shared) => {
                self.phases.truncate(first as usize);
                self.events.truncate(first_event);
                shared
            }
            None => {
                programs.insert(key, first);
                first
            }
        }
    }

    /// Task `task`.
    #[inline]
    pub(in crate::sim) fn task(&self, task: usize) -> FlatTask {
        self.tasks[task]
    }

    /// The start of task `task`'s program: its first phase, its first event.
    pub(in crate::sim) fn start(&self, task: usize) -> Cursor {
        let phase = self.tasks[task].first;
        Cursor {
            phase,
            event: self.phases[phase as usize].first,
        }
    }

    /// The phase `at` is in.
    #[inline]
    pub(in crate::sim) fn phase(&self, at: Cursor) -> &FlatPhase<'w> {
        &self.phases[at.phase as usize]
    }

    /// The next event at `at` (the phase's sentinel after its last).
    #[inline]
    pub(in crate::sim) fn event(&self, at: Cursor) -> &FlatEvent<'w> {
        &self.events[at.event as usize]
    }
}

impl Cursor {
    /// The index of its phase in `FlatProgram::phases`.
    #[inline]
    pub(in crate::sim) fn phase_index(self) -> u32 {
        self.phase
    }

    /// Past the event it points to (not past a sentinel: the caller read a `Some`).
    #[inline]
    pub(in crate::sim) fn advance(&mut self) {
        self.event += 1;
    }

    /// Back to `first`, the first event of its phase (the phase's next iteration).
    #[inline]
    pub(in crate::sim) fn rewind(&mut self, first: u32) {
        self.event = first;
    }

    /// The start of the next phase of `task`'s program, or of its first phase after its
    /// last, computed (debug builds check [`Act::End`]'s `next` against it).
    pub(in crate::sim) fn next_phase(self, prog: &FlatProgram<'_>, task: FlatTask) -> Cursor {
        let mut phase = self.phase + 1;
        if phase >= task.first + task.nr_phases {
            phase = task.first;
        }
        Cursor {
            phase,
            event: prog.phases[phase as usize].first,
        }
    }
}

/// The resources event `e` of task `t` uses, resolved in `res` (`(0, 0)` for none).
fn resources_of(w: &Workload, t: &TaskSpec, e: &Event, res: &mut Resources) -> (usize, usize) {
    match e {
        Event::Lock { mutex } | Event::Unlock { mutex } => (res.get(Kind::Mutex, mutex), 0),
        Event::Wait { cond, mutex } | Event::Sync { cond, mutex } => {
            (res.get(Kind::Cond, cond), res.get(Kind::Mutex, mutex))
        }
        Event::Signal { cond } | Event::Broad { cond } => (res.get(Kind::Cond, cond), 0),
        Event::Barrier { name } => {
            let b = res.get(Kind::Barrier, name);
            // rt-app counts one user per reference of every thread
            res.barriers[b].participants += i64::from(t.instances);
            (b, 0)
        }
        Event::SemPost { sem } | Event::SemWait { sem } => (res.get(Kind::Sem, sem), 0),
        Event::Suspend { name } | Event::Resume { name } => (res.get(Kind::Suspend, name), 0),
        Event::Fork { task } => (w.tasks.iter().position(|x| &x.name == task).unwrap_or(0), 0),
        _ => (0, 0),
    }
}
