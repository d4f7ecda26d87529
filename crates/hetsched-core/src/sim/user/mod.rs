//! User space: rt-app's threads. The interpreter of the workload's program
//! ([`program`], `interp`) and the pthread synchronisation objects ([`sync`], `futex`)
//! run as user code and enter the kernel only through system calls: block (a timed sleep
//! or a futex wait), wake, `sched_setattr`/`set_user_nice`, `clone`, `exit`,
//! `sched_yield`.

pub(in crate::sim) mod flat;
mod futex;
mod interp;
pub(in crate::sim) mod main;
pub mod program;
pub mod sync;

use crate::sim::*;

/// rt-app's thread in user space (`thread_data_t` and the state of its loop): where its
/// program is, the compute it is doing, its timers, its per-iteration statistics, and
/// what it waits for in the synchronisation model. The kernel's side of the thread is
/// `Thread` (sim/mod.rs).
#[derive(Debug, Clone)]
pub(in crate::sim) struct UserThread {
    /// The workload task it runs (index in `Workload::tasks`).
    pub(in crate::sim) task: usize,
    /// What it is blocked on (for wake-ups and the deadlock report).
    pub(in crate::sim) wait_on: WaitOn,
    /// What it must redo when it runs again after a wake-up.
    pub(in crate::sim) retry: Retry,
    /// Events stepped at the current instant (a spin guard).
    pub(in crate::sim) spin: u32,
    pub(in crate::sim) spin_at: Nanos,
    /// `sched_yield()` asked for a reschedule; the program continues after it.
    pub(in crate::sim) yielded: bool,
    pub(in crate::sim) pc: Pc,
    /// The same place in the flat program (`pc`'s phase and next event, where stepping
    /// reads them).
    pub(in crate::sim) cur: flat::Cursor,
    /// The flat phase ([`flat::Cursor::phase_index`]), one that sets no attributes, whose
    /// affinity the thread's (`Thread::affinity`) is known to equal, `u32::MAX` for none:
    /// set at a start of that phase, which found the two equal or applied the phase's
    /// (`sched_setaffinity()`); a start of a phase that sets attributes sets `u32::MAX`.
    /// Once the thread runs its program only its own phase starts change its affinity
    /// ([`Sim::sys_sched_setaffinity`], from `Sim::apply_phase()`; `sched_fork()` and the
    /// spawn set it before its first step, with this `u32::MAX`), so the two stay equal
    /// until it starts another phase, and a start of the same phase reads neither the
    /// phase nor the masks: it skips the compare `sched_setaffinity()` makes first (debug
    /// builds make it) and has no attributes to set.
    pub(in crate::sim) affinity_phase: u32,
    pub(in crate::sim) op: Op,
    pub(in crate::sim) t_first: Nanos,
    pub(in crate::sim) started: bool,
    /// Timer deadline the thread is sleeping for (wake-up latency is measured from it).
    pub(in crate::sim) timer_wait: Option<Nanos>,
    /// Unique timers, by slot.
    pub(in crate::sim) unique_timers: program::UniqueTimers,
    // rt-app per-iteration statistics
    pub(in crate::sim) loop_start: Nanos,
    pub(in crate::sim) run_ns: Nanos,
    pub(in crate::sim) op_start: Nanos,
    pub(in crate::sim) wu_lat_ns: i64,
    pub(in crate::sim) slack_ns: i64,
    pub(in crate::sim) done_loops: bool,
    /// Its task's [`flat::FlatTask::loop_limit`]: `done_loops` is set when the program's
    /// loop count reaches it.
    pub(in crate::sim) loop_limit: u64,
    /// Where it is in `thread_body()` before its program (user/main.rs).
    pub(in crate::sim) prologue: main::Prologue,
    /// rt-app's thread index (`tdata->ind`).
    pub(in crate::sim) ind: u32,
    /// Created by a `fork` event (no start barrier).
    pub(in crate::sim) forked: bool,
    /// Its task's scheduling parameters are still to be set (`set_thread_param()` after
    /// the delay).
    pub(in crate::sim) attrs_pending: bool,
    /// The task a `fork` event creates once the event's `create_thread()` work is done.
    pub(in crate::sim) pending_fork: Option<usize>,
    /// One of the system's background tasks, not rt-app's (user/main.rs): no markers.
    pub(in crate::sim) system: bool,
    /// The thread may not be [`UserThread::settled`]: set wherever one of the four fields
    /// that test reads leaves its settled value (`retry` given a wait to redo, `prologue`
    /// other than `Done`, `attrs_pending` set; `started` is false only at the start,
    /// with this set), cleared by [`Sim::step_program`] when it finds the thread settled.
    /// So a thread without it is settled, and the step's common case tests one field
    /// instead of four (debug builds test the four).
    pub(in crate::sim) maybe_unsettled: bool,
}

impl UserThread {
    /// A new thread of workload task `task` (`unique_timers`: its `unique*` timer slots;
    /// `start`: its program's start; `loop_limit`: its task's
    /// [`flat::FlatTask::loop_limit`]).
    pub(in crate::sim) fn new(
        task: usize,
        unique_timers: usize,
        start: flat::Cursor,
        loop_limit: u64,
    ) -> UserThread {
        UserThread {
            task,
            wait_on: WaitOn::Nothing,
            retry: Retry::None,
            spin: 0,
            spin_at: 0,
            yielded: false,
            pc: Pc::default(),
            cur: start,
            affinity_phase: u32::MAX,
            op: Op::Step,
            t_first: 0,
            started: false,
            timer_wait: None,
            unique_timers: program::UniqueTimers::new(unique_timers),
            loop_start: 0,
            run_ns: 0,
            op_start: 0,
            wu_lat_ns: 0,
            slack_ns: 0,
            done_loops: false,
            loop_limit,
            prologue: main::Prologue::Done,
            ind: 0,
            forked: false,
            attrs_pending: false,
            pending_fork: None,
            system: false,
            maybe_unsettled: true,
        }
    }

    /// Nothing to do before the thread's program at its next step (its prologue done, its
    /// start taken, its attributes set, no wait to redo): [`Sim::step_program`]'s test.
    #[inline(always)]
    pub(in crate::sim) fn settled(&self) -> bool {
        self.prologue == main::Prologue::Done
            && self.started
            && !self.attrs_pending
            && self.retry == Retry::None
    }

    /// The user-space side of a kernel thread: none; only `op`, the CPU time of its
    /// current piece of work, is used (sim/kthread.rs).
    pub(in crate::sim) fn kernel() -> UserThread {
        UserThread::new(0, 0, flat::Cursor::default(), u64::MAX)
    }
}
