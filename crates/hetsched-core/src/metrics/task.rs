//! A task's accumulators in the metrics sink, laid out by how often the event stream
//! touches them: [`TaskClock`] holds what every wake-up and switch reads and writes, in
//! one cache line (the sink keeps them in an array of their own); [`Residency`], the
//! running time per CPU, is charged only when the task stops running on a CPU other
//! than the one it last stopped on, the running time on that one being pending in the
//! clock.

use crate::time::Nanos;

/// No timestamp (`None`): simulated times never reach `Nanos::MAX`.
pub(super) const NEVER: Nanos = Nanos::MAX;
/// No CPU.
const NO_CPU: u32 = u32::MAX;

/// The per-event timestamps and counters of one task.
#[derive(Debug, Clone, Copy)]
#[repr(C, align(64))]
pub(super) struct TaskClock {
    /// When it was switched in on `running_cpu`; [`NEVER`] when it is not running.
    pub(super) running_since: Nanos,
    /// Since when it has been runnable but not running, or [`NEVER`].
    pub(super) runnable_since: Nanos,
    /// Its last wake-up not yet followed by a switch-in, or [`NEVER`].
    pub(super) woken_at: Nanos,
    /// Time runnable but not running.
    pub(super) wait: Nanos,
    /// Number of wake-ups.
    pub(super) wakeups: u64,
    /// Its first wake-up, or [`NEVER`].
    pub(super) start: Nanos,
    /// Running time on `res_cpu` not yet in its [`Residency`].
    res_ns: Nanos,
    /// The CPU it was switched in on.
    pub(super) running_cpu: u32,
    /// The CPU it last stopped running on ([`NO_CPU`] before).
    res_cpu: u32,
}

impl Default for TaskClock {
    fn default() -> TaskClock {
        TaskClock {
            running_since: NEVER,
            runnable_since: NEVER,
            woken_at: NEVER,
            wait: 0,
            wakeups: 0,
            start: NEVER,
            res_ns: 0,
            running_cpu: NO_CPU,
            res_cpu: NO_CPU,
        }
    }
}

impl TaskClock {
    /// It stops running at `now` (switched out, or the end of the run): the time since
    /// its switch-in is charged to its CPU, `res` receiving what was pending on another
    /// CPU.
    #[inline]
    pub(super) fn stop_running(&mut self, now: Nanos, res: &mut Residency) {
        if self.running_since == NEVER {
            return;
        }
        let d = now - std::mem::replace(&mut self.running_since, NEVER);
        if self.running_cpu == self.res_cpu {
            self.res_ns += d;
        } else {
            if self.res_cpu != NO_CPU {
                res.add(self.res_cpu, self.res_ns);
            }
            self.res_cpu = self.running_cpu;
            self.res_ns = d;
        }
    }

    /// It stops waiting (switched in, or the end of the run) at `now`: the time since it
    /// became runnable is charged to its wait time.
    #[inline]
    pub(super) fn stop_waiting(&mut self, now: Nanos) {
        let r = std::mem::replace(&mut self.runnable_since, NEVER);
        if r != NEVER {
            self.wait += now - r;
        }
    }

    /// Running time per CPU, with what is pending.
    pub(super) fn residency(&self, res: &Residency) -> Vec<Nanos> {
        let mut v = res.per_cpu.clone();
        if self.res_cpu != NO_CPU {
            v[self.res_cpu as usize] += self.res_ns;
        }
        v
    }
}

/// A task's running time per CPU. Dense: on the 256-CPU `large` benchmark a task runs
/// on 147 CPUs on average, where a sparse map would be no smaller.
#[derive(Debug, Clone, Default)]
pub(super) struct Residency {
    /// ns by CPU.
    per_cpu: Vec<Nanos>,
}

impl Residency {
    /// Nothing on any of `nr_cpus` CPUs.
    pub(super) fn new(nr_cpus: usize) -> Residency {
        Residency {
            per_cpu: vec![0; nr_cpus],
        }
    }

    /// Adds `ns` of running time on `cpu`.
    fn add(&mut self, cpu: u32, ns: Nanos) {
        self.per_cpu[cpu as usize] += ns;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Charges on several CPUs, in any order, give each CPU the sum of its own.
    #[test]
    fn residency_is_charged_to_each_cpu() {
        let mut clock = TaskClock::default();
        let mut res = Residency::new(8);
        let mut want = vec![0; 8];
        let mut now = 1_000;
        for (i, cpu) in [3u32, 3, 5, 0, 5, 5, 7, 3].into_iter().enumerate() {
            clock.running_since = now;
            clock.running_cpu = cpu;
            now += 100 * (i as Nanos + 1);
            clock.stop_running(now, &mut res);
            want[cpu as usize] += 100 * (i as Nanos + 1);
            now += 50;
            clock.stop_running(now, &mut res); // not running: nothing
        }
        assert_eq!(clock.residency(&res), want);
        assert_eq!(std::mem::size_of::<TaskClock>(), 64);
    }
}
