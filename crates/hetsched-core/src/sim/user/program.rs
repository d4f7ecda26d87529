//! rt-app thread programs: the position of a thread in its task's phases and the meaning of
//! each event (rt-app's `src/rt-app.c:run_event()` and `thread_body()`).

use crate::time::{Nanos, NSEC_PER_USEC};
use crate::workload::{Event, MemrunType, TaskSpec, TimerMode};

/// Where a thread is in its program.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Pc {
    /// Iteration of the phase list (`thread_loop`).
    pub thread_loop: u64,
    /// Phase index.
    pub phase: usize,
    /// Iteration within the phase.
    pub phase_loop: u64,
    /// Next event index within the phase.
    pub event: usize,
    /// Whether the `rtapp_loop event=start` of the current iteration was written.
    pub loop_started: bool,
}

/// What a thread does when it is on a CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// Between events: step the program.
    Step,
    /// `run`: remaining work in capacity-ns (ns at capacity 1024 × 1024).
    Run {
        /// Remaining work.
        work: u128,
        /// Configured µs (for rt-app's stats).
        us: u64,
    },
    /// `runtime`: remaining wall-clock ns.
    Runtime {
        /// Remaining ns.
        ns: u64,
    },
}

/// What stepping a program asks of the scheduler.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Start consuming CPU (the op was set).
    Compute,
    /// Block until the absolute time; `timer` is the timer's `t_next` for wake-up latency.
    SleepUntil {
        /// Wake-up time.
        at: Nanos,
        /// Set for timers: the deadline measured against.
        timer: bool,
    },
    /// The thread has finished all its loops.
    Exit,
    /// Blocked on a resource until another thread wakes it.
    Block,
    /// `sched_yield()`: give the CPU up, stay runnable, continue after.
    Yield,
}

/// Bytes per ns the calibration reference CPU writes with `memset()` (4 GB/s), the
/// documented cost model of rt-app's `mem` and `memrun` read/write events.
pub const MEM_BYTES_PER_NS: u64 = 4;
/// ns per dependent load of a `memrun` pointer chase on the reference CPU (a DRAM miss).
pub const CHASE_NS_PER_ACCESS: u64 = 80;
/// ns per `write()` of up to `mem_buffer_size` bytes to `io_device` (`/dev/null`).
pub const IO_NS_PER_WRITE: u64 = 1_000;
/// rt-app's default `mem_buffer_size` (4 MiB).
pub const MEM_BUFFER_SIZE: u64 = 4 << 20;
/// rt-app's `FORKS_LIMIT`: forks per forking thread and task.
pub const FORKS_LIMIT: u32 = 1024;

/// Reference-CPU ns of work of the events that only use the CPU: `mem` (memset of the
/// per-thread buffer in `mem_buffer_size` chunks), `iorun` (writes to the io device) and
/// `memrun` (read/write at memset bandwidth; `chase` one dependent load per 64-byte
/// stride). The work scales with capacity and frequency like `run`; real memory-bound
/// code scales less, which this model does not capture.
pub fn cpu_work_ns(e: &Event) -> Option<u64> {
    match e {
        Event::Mem { bytes } => Some(bytes / MEM_BYTES_PER_NS),
        Event::Iorun { bytes } => Some(bytes.div_ceil(MEM_BUFFER_SIZE) * IO_NS_PER_WRITE),
        Event::Memrun { kind, size, count } => Some(match kind {
            MemrunType::Chase => size / 64 * count * CHASE_NS_PER_ACCESS,
            _ => size.saturating_mul(*count) / MEM_BYTES_PER_NS,
        }),
        _ => None,
    }
}

/// State of one timer (per thread for `unique*` names, shared otherwise).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TimerState {
    /// Next expiry (absolute ns); 0 before first use.
    pub t_next: Nanos,
    /// Whether the timer was used.
    pub started: bool,
}

/// A thread's `unique*` timers, by slot: the first inline (a thread usually has one),
/// so stepping a periodic thread does not follow a pointer to its timer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UniqueTimers {
    first: TimerState,
    rest: Vec<TimerState>,
}

impl UniqueTimers {
    /// `n` unused timers.
    pub fn new(n: usize) -> UniqueTimers {
        UniqueTimers {
            first: TimerState::default(),
            rest: vec![TimerState::default(); n.saturating_sub(1)],
        }
    }

    /// The timer of slot `i`.
    #[inline]
    pub fn get_mut(&mut self, i: usize) -> &mut TimerState {
        match i.checked_sub(1) {
            None => &mut self.first,
            Some(j) => &mut self.rest[j],
        }
    }
}

/// Computes a timer's next expiry per rt-app: first use starts at `t_first`; each use adds
/// the period; a missed expiry resets to now in relative mode. Returns `(t_next, slack_ns)`.
pub fn timer_next(
    st: &mut TimerState,
    t_first: Nanos,
    period_ns: Nanos,
    mode: TimerMode,
    now: Nanos,
) -> (Nanos, i64) {
    if !st.started {
        st.started = true;
        st.t_next = t_first;
    }
    st.t_next += period_ns;
    let slack = st.t_next as i64 - now as i64;
    if now > st.t_next && mode == TimerMode::Relative {
        st.t_next = now;
    }
    (st.t_next, slack)
}

/// The configured run (µs) and period (µs) of one iteration of a phase, as rt-app's
/// `c_run` / `c_period` statistics count them.
pub fn configured_run_period(task: &TaskSpec, phase: usize) -> (i64, i64) {
    let mut run = 0i64;
    let mut period = 0i64;
    for e in &task.phases[phase].events {
        match &e.event {
            Event::Run { us } | Event::Runtime { us } => run += *us as i64,
            Event::Timer { period_us, .. } => period += *period_us as i64,
            _ => {}
        }
    }
    (run, period)
}

/// Converts µs to ns.
pub fn us(v: u64) -> Nanos {
    v.saturating_mul(NSEC_PER_USEC)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unique_timers_by_slot() {
        let mut t = UniqueTimers::new(3);
        for i in 0..3 {
            t.get_mut(i).t_next = 10 * i as Nanos + 1;
        }
        let got: Vec<Nanos> = (0..3).map(|i| t.get_mut(i).t_next).collect();
        assert_eq!(got, [1, 11, 21]);
    }

    #[test]
    fn relative_timer_resets_on_miss() {
        let mut st = TimerState::default();
        let (t, slack) = timer_next(&mut st, 1000, 100, TimerMode::Relative, 1000);
        assert_eq!((t, slack), (1100, 100));
        // missed by 50
        let (t, slack) = timer_next(&mut st, 1000, 100, TimerMode::Relative, 1250);
        assert_eq!((t, slack), (1250, -50));
        let (t, _) = timer_next(&mut st, 1000, 100, TimerMode::Relative, 1260);
        assert_eq!(t, 1350);
    }

    #[test]
    fn absolute_timer_keeps_grid() {
        let mut st = TimerState::default();
        timer_next(&mut st, 0, 100, TimerMode::Absolute, 0);
        let (t, slack) = timer_next(&mut st, 0, 100, TimerMode::Absolute, 250);
        assert_eq!((t, slack), (200, -50));
        let (t, _) = timer_next(&mut st, 0, 100, TimerMode::Absolute, 250);
        assert_eq!(t, 300);
    }
}
