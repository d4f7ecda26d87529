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
use crate::workload::{SchedAttrs, TaskSpec};
use std::collections::HashMap;

/// One event of a phase, resolved.
#[derive(Debug, Clone, Copy)]
pub(in crate::sim) struct FlatEvent<'w> {
    /// The event; `None` for the sentinel after a phase's last event (the iteration
    /// ends).
    pub(in crate::sim) ev: Option<&'w Event>,
    /// The resources it uses (indices in `Resources`: a mutex, condition, barrier,
    /// semaphore or suspend point, and a condition's mutex); the task a `fork` creates.
    pub(in crate::sim) ra: usize,
    pub(in crate::sim) rb: usize,
    /// Where a `timer` event's state lives.
    pub(in crate::sim) timer: Option<TimerSlot>,
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
                            Some(TimerSlot::Unique(*uniq.entry(name.as_str()).or_insert(l)))
                        }
                        Event::Timer { name, .. } => {
                            let l = shared.len();
                            Some(TimerSlot::Shared(*shared.entry(name.as_str()).or_insert(l)))
                        }
                        _ => None,
                    };
                    let (ra, rb) = resources_of(w, t, &e.event, res);
                    prog.events.push(FlatEvent {
                        ev: Some(&e.event),
                        ra,
                        rb,
                        timer,
                    });
                }
                prog.events.push(FlatEvent {
                    ev: None,
                    ra: 0,
                    rb: 0,
                    timer: None,
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
            let _ = write!(key, "{:?} {} {} {:?};", e.ev, e.ra, e.rb, e.timer);
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
    pub(in crate::sim) fn event(&self, at: Cursor) -> FlatEvent<'w> {
        self.events[at.event as usize]
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

    /// Back to the first event of its phase (the phase's next iteration).
    pub(in crate::sim) fn rewind(&mut self, prog: &FlatProgram<'_>) {
        self.event = prog.phases[self.phase as usize].first;
    }

    /// To the first event of the next phase of `task`'s program, or of its first phase
    /// after its last.
    pub(in crate::sim) fn next_phase(&mut self, prog: &FlatProgram<'_>, task: FlatTask) {
        self.phase += 1;
        if self.phase >= task.first + task.nr_phases {
            self.phase = task.first;
        }
        self.rewind(prog);
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
