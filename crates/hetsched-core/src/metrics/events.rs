//! How [`MetricsSink`] reads the event stream: one method per tracepoint it uses
//! (`sched_wakeup`, `sched_switch`, `sched_migrate_task`, `sched_process_exit`,
//! `task_rename`, `cpu_frequency`, `cpu_idle`), and [`TraceSink::record`] an inline
//! dispatch to them. Inlined where the engine emits an event, whose kind is known there,
//! the dispatch folds away: the event kinds the metrics ignore cost them nothing, and the
//! fields they do not read (priorities, the current task on the CPU) are not loaded for
//! them.

use super::task::NEVER;
use super::{CpuAcc, EnergyMeter, MetricsSink, LATENCY_BATCH};
use crate::time::Nanos;
use crate::trace::{Ctx, Interest, TaskRef, TraceEvent, TraceSink};

impl CpuAcc {
    /// Charges the time at the current frequency up to `now`.
    fn close_freq(&mut self, now: Nanos) {
        if self.freq != 0 {
            let d = now - self.freq_since;
            match self.freq_res.iter_mut().find(|e| e.0 == self.freq) {
                Some(e) => e.1 += d,
                None => self.freq_res.push((self.freq, d)),
            }
        }
    }

    /// Leaves the current idle state, if any, at `now`, charging its time.
    fn close_idle(&mut self, now: Nanos) {
        if let Some(s) = self.idle_state.take() {
            let s = s as usize;
            if s >= self.idle_res.len() {
                self.idle_res.resize(s + 1, 0);
            }
            self.idle_res[s] += now - self.idle_since;
        }
    }
}

impl MetricsSink {
    /// The event groups the metrics read: scheduling and power (see the module's
    /// documentation for the events).
    pub const INTEREST: Interest = Interest {
        sched: true,
        power: true,
        signals: false,
        markers: false,
        overutilized: false,
    };

    /// Charges `cpu`'s current interval (busy at its frequency, or idle in its idle state)
    /// up to `now` to the energy meter. An empty interval (a switch's `cpu_idle` and
    /// `sched_switch` at the same time) charges nothing: the meter ignores `to <= from`.
    fn energy_flush(&mut self, cpu: usize, now: Nanos) {
        Self::energy_flush_of(self.energy.as_mut(), &mut self.cpus[cpu], cpu, now);
    }

    /// [`MetricsSink::energy_flush`] of `cpu`, whose accumulator `c` the caller holds.
    #[inline(always)]
    fn energy_flush_of(energy: Option<&mut EnergyMeter>, c: &mut CpuAcc, cpu: usize, now: Nanos) {
        let Some(m) = energy else {
            return;
        };
        if c.e_since == now {
            return;
        }
        if c.e_busy {
            debug_assert_eq!(c.busy_em, m.charges_busy(cpu));
            if c.busy_em {
                m.busy(cpu, c.freq, c.e_since, now);
            }
        } else {
            m.idle(cpu, c.idle_state.unwrap_or(0) as usize, c.e_since, now);
        }
        c.e_since = now;
    }

    /// `sched_wakeup` or `sched_wakeup_new` of `task` at `now`.
    #[inline]
    fn sched_wakeup(&mut self, task: TaskRef<'_>, now: Nanos) {
        self.sched_wakeup_of(task.pid, || task.comm, now);
    }

    /// `sched_wakeup` of the task `pid` at `now`, its comm returned by `comm`, called only
    /// for a task met for the first time: the engine without a user sink hands the
    /// event's fields over this way (`Out::emit_with_metrics` in the simulator), so that
    /// the wake-up does not load the name.
    #[inline]
    pub(crate) fn sched_wakeup_of<'a>(
        &mut self,
        pid: u32,
        comm: impl FnOnce() -> &'a str,
        now: Nanos,
    ) {
        let i = self.index_of(pid, comm);
        let c = &mut self.clocks[i];
        if c.start == NEVER {
            c.start = now;
        }
        c.wakeups += 1;
        c.woken_at = now;
        c.runnable_since = now;
    }

    /// `sched_switch` from `prev` (left in `prev_state`) to `next` on `cpu` at `now`:
    /// [`MetricsSink::sched_switch_of`] of the two tasks' pids and comms.
    #[inline(always)]
    fn sched_switch(
        &mut self,
        cpu: usize,
        now: Nanos,
        prev: TaskRef<'_>,
        prev_state: u32,
        next: TaskRef<'_>,
    ) {
        self.sched_switch_of(
            cpu,
            now,
            (prev.pid, || prev.comm),
            prev_state,
            (next.pid, || next.comm),
        );
    }

    /// `sched_switch` from `prev` (left in `prev_state`) to `next` on `cpu` at `now`, each
    /// task given as its pid (0: the idle task, which the metrics skip) and a function
    /// that returns its comm, called only for a task met for the first time: the engine
    /// without a user sink hands the event's fields over this way (`Out::emit_with_metrics`
    /// in the simulator), so that the switch does not load the two names it would read
    /// only then.
    ///
    /// The tasks' indices are found first (a task met for the first time is added, prev
    /// before next, as when each was found where it is used): [`MetricsSink::index_of`]
    /// touches neither the CPUs' accumulators nor the meter. The CPU's accumulator is
    /// read only at a switch between a task and the idle task, where the meter's
    /// interval ends: the CPU's busy time is its tasks' running time, which the tasks'
    /// clocks charge (see `CpuAcc`).
    ///
    /// Always inlined: the context switch emits the event at two sites (with and without
    /// user sinks), and out of line it would take the event's fields from memory.
    #[inline(always)]
    pub(crate) fn sched_switch_of<'p, 'n>(
        &mut self,
        cpu: usize,
        now: Nanos,
        prev: (u32, impl FnOnce() -> &'p str),
        prev_state: u32,
        next: (u32, impl FnOnce() -> &'n str),
    ) {
        let prev_i = (prev.0 != 0).then(|| self.index_of(prev.0, prev.1));
        let next_i = (next.0 != 0).then(|| self.index_of(next.0, next.1));
        if prev_i.is_some() != next_i.is_some() {
            let c = &mut self.cpus[cpu];
            Self::energy_flush_of(self.energy.as_mut(), c, cpu, now);
            c.e_busy = next_i.is_some();
        }
        #[cfg(debug_assertions)]
        {
            // the busy time as the switches charged it (see `CpuAcc`)
            let c = &mut self.cpus[cpu];
            if prev_i.is_some() {
                if let Some(b) = c.busy_since.take() {
                    c.busy += now - b;
                }
            }
            if next_i.is_some() {
                c.busy_since = Some(now);
            }
        }
        if let Some(i) = prev_i {
            let k = &mut self.clocks[i];
            k.stop_running(now, &mut self.tasks[i].residency);
            if prev_state == 0 {
                k.runnable_since = now;
            }
        }
        if let Some(i) = next_i {
            let k = &mut self.clocks[i];
            k.running_since = now;
            k.running_cpu = cpu as u32;
            k.stop_waiting(now);
            let w = std::mem::replace(&mut k.woken_at, NEVER);
            if w != NEVER {
                if self.latencies.len >= LATENCY_BATCH {
                    self.flush_latencies();
                }
                let b = &mut self.latencies;
                b.buf[b.len] = (i as u32, now - w);
                b.len += 1;
            }
        }
    }

    /// `sched_migrate_task` of `task`.
    #[inline]
    fn sched_migrate_task(&mut self, task: TaskRef<'_>) {
        let i = self.index(task.pid, task.comm);
        self.tasks[i].migrations += 1;
    }

    /// `sched_process_exit` of `task` at `now`.
    fn sched_process_exit(&mut self, task: TaskRef<'_>, now: Nanos) {
        let i = self.index(task.pid, task.comm);
        self.tasks[i].exit = Some(now);
    }

    /// `task_rename` of `pid` to `newcomm`.
    fn task_rename(&mut self, pid: u32, newcomm: &str) {
        let i = self.index(pid, newcomm);
        self.tasks[i].comm = newcomm.to_string();
    }

    /// `cpu_frequency`: `cpu` runs at `khz` from `now`.
    fn cpu_frequency(&mut self, cpu: usize, khz: u64, now: Nanos) {
        self.energy_flush(cpu, now);
        let c = &mut self.cpus[cpu];
        c.close_freq(now);
        c.freq = khz;
        c.freq_since = now;
    }

    /// `cpu_idle`: `cpu` enters idle state `state` at `now`, or leaves idle (−1).
    ///
    /// Out of line, and without a call on its common path: entering idle just after the
    /// switch to the idle task (the interval to charge is empty and no idle state is
    /// open) it only opens the state; otherwise [`MetricsSink::cpu_idle_charge`] charges
    /// the interval and closes the state, as it would have charged and closed nothing,
    /// handed the CPU's accumulator and the meter this function found (not looked up
    /// again).
    #[inline(never)]
    fn cpu_idle(&mut self, cpu: usize, state: i32, now: Nanos) {
        let c = &mut self.cpus[cpu];
        if c.idle_state.is_none() && (c.e_since == now || self.energy.is_none()) {
            if state >= 0 {
                c.idle_state = Some(state as u32);
                c.idle_since = now;
            }
            return;
        }
        Self::cpu_idle_charge(c, cpu, state, now, &mut self.energy);
    }

    /// [`MetricsSink::cpu_idle`] with an interval to charge or an idle state to close, on
    /// `cpu`'s accumulator `c` and the sink's meter `energy` (given last, the other
    /// arguments in the registers `cpu_idle` received them in).
    ///
    /// The state is closed and opened first, then the interval charged to the meter
    /// (`energy_flush`, with the meter's `idle` inlined: this is where idle intervals end),
    /// from the fields read before: the sink's residency and the meter are separate, so the
    /// order changes nothing, and the meter's calls are then tail calls.
    ///
    /// The state's residency slot exists (a state met for the first time is given one by
    /// [`MetricsSink::cpu_idle_grow`], out of line), so that its only calls are tail calls
    /// and it saves no registers.
    #[inline(never)]
    fn cpu_idle_charge(
        c: &mut CpuAcc,
        cpu: usize,
        state: i32,
        now: Nanos,
        energy: &mut Option<EnergyMeter>,
    ) {
        let (since, busy, freq, open) = (c.e_since, c.e_busy, c.freq, c.idle_state);
        if let Some(s) = open {
            if s as usize >= c.idle_res.len() {
                return Self::cpu_idle_grow(c, cpu, state, now, energy);
            }
            // `close_idle`, its slot there
            c.idle_state = None;
            c.idle_res[s as usize] += now - c.idle_since;
        }
        if state >= 0 {
            c.idle_state = Some(state as u32);
            c.idle_since = now;
        }
        let Some(m) = energy.as_mut() else {
            return;
        };
        if since == now {
            return;
        }
        c.e_since = now;
        if busy {
            m.busy(cpu, freq, since, now);
        } else {
            m.idle_inline(cpu, open.unwrap_or(0) as usize, since, now);
        }
    }

    /// [`MetricsSink::cpu_idle_charge`] closing an idle state that has no residency slot
    /// yet: the slots up to it are added (as `close_idle` would), then the charge.
    #[cold]
    #[inline(never)]
    fn cpu_idle_grow(
        c: &mut CpuAcc,
        cpu: usize,
        state: i32,
        now: Nanos,
        energy: &mut Option<EnergyMeter>,
    ) {
        if let Some(s) = c.idle_state {
            c.idle_res.resize(c.idle_res.len().max(s as usize + 1), 0);
        }
        Self::cpu_idle_charge(c, cpu, state, now, energy);
    }
}

impl TraceSink for MetricsSink {
    fn interest(&self) -> Interest {
        MetricsSink::INTEREST
    }

    fn begin(&mut self, nr_cpus: usize, start_ns: Nanos) {
        self.nr_cpus = nr_cpus;
        self.start = start_ns;
        self.end = start_ns;
        self.cpus = (0..nr_cpus)
            .map(|cpu| CpuAcc {
                freq_since: start_ns,
                idle_since: start_ns,
                e_since: start_ns,
                busy_em: self.energy.as_ref().is_some_and(|m| m.charges_busy(cpu)),
                ..CpuAcc::default()
            })
            .collect();
    }

    /// Always inlined: see the module's documentation.
    #[inline(always)]
    fn record(&mut self, ctx: &Ctx<'_>, ev: &TraceEvent<'_>) {
        let now = ctx.ts;
        match *ev {
            TraceEvent::SchedWakeup { task, .. } | TraceEvent::SchedWakeupNew { task, .. } => {
                self.sched_wakeup(task, now);
            }
            TraceEvent::SchedSwitch {
                prev,
                prev_state,
                next,
            } => self.sched_switch(ctx.cpu as usize, now, prev, prev_state, next),
            TraceEvent::SchedMigrateTask { task, .. } => self.sched_migrate_task(task),
            TraceEvent::SchedProcessExit { task } => self.sched_process_exit(task, now),
            TraceEvent::TaskRename { pid, newcomm, .. } => self.task_rename(pid, newcomm),
            TraceEvent::CpuFrequency { cpu_id, state } => {
                self.cpu_frequency(cpu_id as usize, state, now);
            }
            TraceEvent::CpuIdle { cpu_id, state } => self.cpu_idle(cpu_id as usize, state, now),
            _ => {}
        }
    }

    fn end(&mut self, end_ns: Nanos) {
        self.end = end_ns;
        self.flush_latencies();
        for (t, c) in self.tasks.iter_mut().zip(&mut self.clocks) {
            c.stop_running(end_ns, &mut t.residency);
            c.stop_waiting(end_ns);
        }
        for cpu in 0..self.cpus.len() {
            self.energy_flush(cpu, end_ns);
        }
        for c in &mut self.cpus {
            #[cfg(debug_assertions)]
            if let Some(b) = c.busy_since.take() {
                c.busy += end_ns - b;
            }
            c.close_freq(end_ns);
            c.close_idle(end_ns);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(pid: u32, comm: &str) -> TaskRef<'_> {
        TaskRef {
            comm,
            pid,
            prio: 120,
        }
    }

    fn at(ts: Nanos, cpu: u32) -> Ctx<'static> {
        Ctx {
            ts,
            cpu,
            comm: "<idle>",
            pid: 0,
        }
    }

    /// A short stream through every event the sink reads, and one it ignores: the
    /// results a task, a kernel thread and the CPUs get from it.
    #[test]
    fn one_task_through_each_event() {
        let (idle, t, k) = (
            task(0, "swapper/0"),
            task(1001, "rt-app"),
            task(10, "sugov:0"),
        );
        let sw = |prev, prev_state, next| TraceEvent::SchedSwitch {
            prev,
            prev_state,
            next,
        };
        let freq = |state| TraceEvent::CpuFrequency { cpu_id: 0, state };
        let cpu_idle = |state| TraceEvent::CpuIdle { cpu_id: 0, state };
        let stream = [
            (at(0, 0), freq(500_000)),
            (at(0, 0), cpu_idle(1)),
            (
                at(10, 1),
                TraceEvent::SchedWakeupNew {
                    task: t,
                    target_cpu: 0,
                },
            ),
            (
                at(10, 1),
                TraceEvent::SchedPiSetprio {
                    task: t,
                    oldprio: 120,
                    newprio: 98,
                },
            ),
            (at(15, 0), cpu_idle(-1)),
            (at(15, 0), sw(idle, 0, t)),
            (
                at(20, 0),
                TraceEvent::TaskRename {
                    pid: 1001,
                    oldcomm: "rt-app",
                    newcomm: "task-0",
                },
            ),
            (at(30, 0), freq(1_000_000)),
            (
                at(40, 0),
                TraceEvent::SchedWakeup {
                    task: k,
                    target_cpu: 0,
                },
            ),
            (at(40, 0), sw(t, 0, k)),
            (at(45, 0), sw(k, 1, t)),
            (
                at(60, 0),
                TraceEvent::SchedMigrateTask {
                    task: t,
                    orig_cpu: 0,
                    dest_cpu: 1,
                },
            ),
            (at(60, 0), sw(t, 16, idle)),
            (at(60, 0), TraceEvent::SchedProcessExit { task: t }),
        ];
        let mut m = MetricsSink::new();
        m.begin(2, 0);
        for (ctx, ev) in &stream {
            m.record(ctx, ev);
        }
        m.end(100);
        let r = m.results();
        let ns = |x: f64| (x * 1e9).round() as u64;
        let [t] = &r.tasks[..] else {
            panic!("{:?}", r.tasks)
        };
        assert_eq!((t.pid, t.comm.as_str()), (1001, "task-0"));
        assert_eq!((ns(t.cpu_time_s), ns(t.wait_time_s)), (40, 10));
        assert_eq!(
            (t.wakeups, t.migrations, t.wakeup_latency_us.count),
            (1, 1, 1)
        );
        assert_eq!((ns(t.start_s), t.completion_s.map(ns)), (10, Some(50)));
        assert_eq!(
            t.residency_s.iter().map(|&x| ns(x)).collect::<Vec<_>>(),
            [40, 0]
        );
        let [k] = &r.kernel_threads[..] else {
            panic!("{:?}", r.kernel_threads)
        };
        assert_eq!(
            (k.comm.as_str(), ns(k.cpu_time_s), k.wakeups),
            ("sugov:0", 5, 1)
        );
        assert!(r.main_thread.is_none());
        let c = &r.cpus[0];
        assert_eq!((ns(c.busy_s), ns(c.idle_s)), (45, 55));
        let freq: Vec<_> = c
            .freq_residency_s
            .iter()
            .map(|(&f, &s)| (f, ns(s)))
            .collect();
        assert_eq!(freq, [(500_000, 30), (1_000_000, 70)]);
        assert_eq!(c.idle_state_residency_s.get(&1).copied().map(ns), Some(15));
        assert_eq!(ns(r.cpus[1].busy_s), 0);
    }
}
