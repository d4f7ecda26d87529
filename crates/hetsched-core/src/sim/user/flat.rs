//! The workload's programs laid out flat for the interpreter (user/interp.rs): every
//! task's phases in one array and every phase's events in another, each event with its
//! resources and timer resolved (as rt-app's parser resolves them by name) and each phase
//! with the affinity and attributes it applies. Stepping a thread reads a few entries of
//! these dense arrays instead of following the workload's nested vectors and the
//! per-task tables beside them: on a workload of thousands of tasks each level was a
//! cache miss. Tasks whose programs are equal share one ([`FlatProgram::share`]).

use crate::sim::*;
use crate::workload::{SchedAttrs, TaskSpec};
use std::collections::HashMap;

/// One event of a phase, resolved.
#[derive(Debug, Clone, Copy)]
pub(in crate::sim) struct FlatEvent<'w> {
    /// The event.
    pub(in crate::sim) ev: &'w Event,
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
    /// Its events: `FlatProgram::events[first..first + len]`.
    first: u32,
    len: u32,
    /// Iterations of the phase.
    pub(in crate::sim) loop_count: u64,
    /// The affinity it applies: its `cpus`, else the task's, else all CPUs.
    pub(in crate::sim) affinity: CpuSet,
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
                        ev: &e.event,
                        ra,
                        rb,
                        timer,
                    });
                }
                let affinity = ph
                    .attrs
                    .cpus
                    .as_ref()
                    .or(t.attrs.cpus.as_ref())
                    .map_or(CpuSet::first_n(nr_cpus), |c| CpuSet::from_cpus(c));
                prog.phases.push(FlatPhase {
                    first: first_event,
                    len: idx(ph.events.len()),
                    loop_count: ph.loop_count,
                    affinity,
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
                "{}+{} {} {:?} {:?} {:?} {:?} {:?} {:?};",
                ph.first as usize - first_event,
                ph.len,
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

    /// Phase `phase` of task `task`.
    #[inline]
    pub(in crate::sim) fn phase(&self, task: usize, phase: usize) -> FlatPhase<'w> {
        let t = &self.tasks[task];
        debug_assert!(phase < t.nr_phases as usize);
        self.phases[t.first as usize + phase]
    }

    /// Event `event` of phase `phase` of task `task`, or `None` past the phase's last.
    #[inline]
    pub(in crate::sim) fn event(
        &self,
        task: usize,
        phase: usize,
        event: usize,
    ) -> Option<FlatEvent<'w>> {
        let t = &self.tasks[task];
        debug_assert!(phase < t.nr_phases as usize);
        let ph = &self.phases[t.first as usize + phase];
        (event < ph.len as usize).then(|| self.events[ph.first as usize + event])
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
