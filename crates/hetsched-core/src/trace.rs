//! Trace events with the kernel's tracepoint names and fields, and the sink interface.
//!
//! The engine emits one [`TraceEvent`] after every state change, like a tracepoint; sinks
//! (ftrace text, metrics, in-memory for tests) consume the stream. A run never holds its
//! whole trace in memory. Field names follow the tracepoints of
//! include/trace/events/sched.h, include/trace/events/power.h and LISA's `sched_tp` module
//! (`sched_pelt_se`, `sched_util_est_se`, `sched_cpu_capacity`, `sched_overutilized`).

use crate::time::Nanos;

/// Where and when an event happened, and which task was current on that CPU (the
/// `COMM-PID [CPU] TS:` header of an ftrace line).
#[derive(Debug, Clone, Copy)]
pub struct Ctx<'a> {
    /// Timestamp in ns.
    pub ts: Nanos,
    /// CPU the event was recorded on.
    pub cpu: u32,
    /// comm of the task current on `cpu` (`<idle>` for the idle task).
    pub comm: &'a str,
    /// pid of the task current on `cpu` (0 for idle).
    pub pid: u32,
}

/// A task as tracepoints name it.
#[derive(Debug, Clone, Copy)]
pub struct TaskRef<'a> {
    /// comm (at most 15 characters).
    pub comm: &'a str,
    /// pid.
    pub pid: u32,
    /// Kernel priority (`p->prio`): 120 + nice for fair tasks, 99 − rt_priority for RT.
    pub prio: i32,
}

/// rt-app's `trace_marker` payloads (written as `print: tracing_mark_write: …`).
#[derive(Debug, Clone, Copy)]
pub enum RtappMarker<'a> {
    /// `rtapp_main: event=start|clock_ref|end data=`.
    Main {
        /// `start`, `clock_ref` or `end`.
        event: &'a str,
        /// Payload (t_zero in µs for `clock_ref`).
        data: i64,
    },
    /// `rtapp_task: event=start|end`.
    Task {
        /// `start` or `end`.
        event: &'a str,
    },
    /// `rtapp_loop: event=start|end thread_loop= phase= phase_loop=`.
    Loop {
        /// `start` or `end`.
        event: &'a str,
        /// Iteration of the whole phase list.
        thread_loop: u64,
        /// Phase index.
        phase: u64,
        /// Iteration within the phase.
        phase_loop: u64,
    },
    /// `rtapp_event: id= type= desc=`.
    Event {
        /// Index of the event in its phase.
        id: u64,
        /// rt-app resource type id.
        type_id: u32,
        /// Event key (`run`, `sleep`, …).
        desc: &'a str,
    },
    /// `rtapp_stats: period= run= wu_lat= slack= c_period= c_run=` (µs).
    Stats {
        /// Duration of the loop iteration.
        period: i64,
        /// Time spent running.
        run: i64,
        /// Wake-up latency at the timer.
        wu_lat: i64,
        /// Slack at the timer (negative when late).
        slack: i64,
        /// Configured period (sum of timer periods).
        c_period: i64,
        /// Configured run (sum of run/runtime).
        c_run: i64,
    },
}

/// The three `loadeval` events of the interactive governor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InteractiveEval {
    /// `cpufreq_interactive_target`: a new target.
    Target,
    /// `cpufreq_interactive_already`: the target is unchanged.
    Already,
    /// `cpufreq_interactive_notyet`: a change held back.
    NotYet,
}

impl InteractiveEval {
    /// The tracepoint's name.
    pub fn name(self) -> &'static str {
        match self {
            InteractiveEval::Target => "cpufreq_interactive_target",
            InteractiveEval::Already => "cpufreq_interactive_already",
            InteractiveEval::NotYet => "cpufreq_interactive_notyet",
        }
    }
}

/// One trace event.
#[derive(Debug, Clone, Copy)]
pub enum TraceEvent<'a> {
    /// `task_rename: pid= oldcomm= newcomm= oom_score_adj=`.
    TaskRename {
        /// pid.
        pid: u32,
        /// Old name.
        oldcomm: &'a str,
        /// New name.
        newcomm: &'a str,
    },
    /// `sched_waking: comm= pid= prio= target_cpu=`: traced by the waking CPU when
    /// `try_to_wake_up()` starts, `target_cpu` the task's CPU before the wake-up's
    /// placement (`task_cpu(p)`; kernel/sched/core.c v6.11).
    SchedWaking {
        /// The task being woken.
        task: TaskRef<'a>,
        /// The CPU it last ran on.
        target_cpu: u32,
    },
    /// `sched_wakeup: comm= pid= prio= target_cpu=`.
    SchedWakeup {
        /// The woken task.
        task: TaskRef<'a>,
        /// CPU it was enqueued on.
        target_cpu: u32,
    },
    /// `sched_wakeup_new: comm= pid= prio= target_cpu=`.
    SchedWakeupNew {
        /// The new task.
        task: TaskRef<'a>,
        /// CPU it was enqueued on.
        target_cpu: u32,
    },
    /// `sched_switch: prev_comm= prev_pid= prev_prio= prev_state= next_comm= next_pid= next_prio=`.
    SchedSwitch {
        /// Outgoing task.
        prev: TaskRef<'a>,
        /// Numeric state: 0 = runnable (preempted), 1 = S, 2 = D, 16 = X (dead).
        prev_state: u32,
        /// Incoming task.
        next: TaskRef<'a>,
    },
    /// `sched_migrate_task: comm= pid= prio= orig_cpu= dest_cpu=`.
    SchedMigrateTask {
        /// The task.
        task: TaskRef<'a>,
        /// Source CPU.
        orig_cpu: u32,
        /// Destination CPU.
        dest_cpu: u32,
    },
    /// `sched_pi_setprio: comm= pid= oldprio= newprio=`: a priority-inheritance boost or
    /// its end (`rt_mutex_setprio()`).
    SchedPiSetprio {
        /// The task whose priority changes.
        task: TaskRef<'a>,
        /// Its priority before.
        oldprio: i32,
        /// Its priority now.
        newprio: i32,
    },
    /// `sched_hmp_migrate: comm= pid= dest= force=` (LSK 3.10 big.LITTLE MP): an HMP
    /// migration decided, `force` its reason (0 wakeup, 1 force, 2 offload, 3 idle pull).
    SchedHmpMigrate {
        /// The task.
        task: TaskRef<'a>,
        /// Destination CPU.
        dest: u32,
        /// `HMP_MIGRATE_WAKEUP` 0, `_FORCE` 1, `_OFFLOAD` 2, `_IDLE_PULL` 3.
        force: u32,
    },
    /// `sched_task_runnable_ratio: comm= pid= ratio=` (LSK 3.10 big.LITTLE MP): a task's
    /// `load_avg_ratio`, at each recompute (`__update_task_entity_contrib()`).
    SchedTaskRunnableRatio {
        /// The task.
        task: TaskRef<'a>,
        /// `load_avg_ratio`, 0..1023.
        ratio: u64,
    },
    /// `sched_process_exit: comm= pid= prio=`.
    SchedProcessExit {
        /// The task.
        task: TaskRef<'a>,
    },
    /// `cpu_frequency: state= cpu_id=` (kHz).
    CpuFrequency {
        /// CPU.
        cpu_id: u32,
        /// Frequency in kHz.
        state: u64,
    },
    /// `cpu_idle: state= cpu_id=`; state −1 (printed 4294967295) on exit.
    CpuIdle {
        /// CPU.
        cpu_id: u32,
        /// Idle state index, or −1 on exit.
        state: i32,
    },
    /// The interactive governor's sample (include/trace/events/cpufreq_interactive.h,
    /// class `loadeval`): `cpufreq_interactive_{target,already,notyet}: cpu= load= cur=
    /// actual= targ=`.
    CpufreqInteractiveLoadeval {
        /// Which of the three events.
        kind: InteractiveEval,
        /// CPU.
        cpu_id: u32,
        /// `cpu_load` (%).
        load: u64,
        /// `target_freq` before the sample (kHz).
        curtarg: u64,
        /// `policy->cur` (kHz).
        curactual: u64,
        /// The new target (kHz).
        newtarg: u64,
    },
    /// `cpufreq_interactive_setspeed: cpu= targ= actual=` (class `set`).
    CpufreqInteractiveSetspeed {
        /// CPU.
        cpu_id: u32,
        /// The CPU's `target_freq` (kHz).
        targfreq: u64,
        /// `policy->cur` after the change (kHz).
        actualfreq: u64,
    },
    /// `cpufreq_interactive_boost: %s` (include/trace/events/cpufreq_interactive.h):
    /// `on` from a `boost` write of a non-zero value, `pulse` from a `boostpulse` write.
    CpufreqInteractiveBoost {
        /// `on` or `pulse`.
        s: &'static str,
    },
    /// `cpufreq_interactive_unboost: %s`: `off` from a `boost` write of 0.
    CpufreqInteractiveUnboost {
        /// `off`.
        s: &'static str,
    },
    /// The `sched` governor's request (include/trace/events/cpufreq_sched.h):
    /// `cpufreq_sched_request_opp: cpu %d cap change, cluster cap request %ld => OPP %d
    /// (cur %d)`, `cur` being the previous request.
    CpufreqSchedRequestOpp {
        /// The CPU whose request changed.
        cpu: u32,
        /// The policy's highest request.
        capacity: u64,
        /// The OPP (kHz).
        freq_new: u64,
        /// The previous request (kHz).
        requested_freq: u64,
    },
    /// `cpufreq_sched_update_capacity: cpu= set_cap= cfs= rt= dl= old_tot= new_tot=`.
    CpufreqSchedUpdateCapacity {
        /// CPU.
        cpu: u32,
        /// Whether a frequency request follows.
        request: bool,
        /// The CFS request.
        cfs: u64,
        /// The RT request.
        rt: u64,
        /// The DL request.
        dl: u64,
        /// The previous total.
        total: u64,
        /// The new total.
        new_total: u64,
    },
    /// `cpufreq_sched_throttled: throttled - %d usec remaining`.
    CpufreqSchedThrottled {
        /// µs left.
        rem: i64,
    },
    /// `sched_pelt_se: cpu= path=(null) comm= pid= load= rbl_load= util= update_time=`.
    SchedPeltSe {
        /// CPU of the entity's cfs_rq.
        cpu: u32,
        /// The task.
        task: TaskRef<'a>,
        /// `load_avg`.
        load: u64,
        /// `runnable_avg`.
        rbl_load: u64,
        /// `util_avg`.
        util: u64,
        /// `last_update_time` (PELT clock, ns).
        update_time: u64,
    },
    /// `sched_pelt_cfs: cpu= path=/ load= rbl_load= util= update_time=`.
    SchedPeltCfs {
        /// CPU.
        cpu: u32,
        /// `load_avg`.
        load: u64,
        /// `runnable_avg`.
        rbl_load: u64,
        /// `util_avg`.
        util: u64,
        /// `last_update_time` (PELT clock, ns).
        update_time: u64,
    },
    /// `sched_pelt_rt: cpu= load= rbl_load= util=` (LISA's `sched_tp` module on the kernel's
    /// `pelt_rt_tp`, fired by `update_rt_rq_load_avg()` when the signal was updated).
    SchedPeltRt {
        /// CPU.
        cpu: u32,
        /// `rq->avg_rt.load_avg`.
        load: u64,
        /// `rq->avg_rt.runnable_avg`.
        rbl_load: u64,
        /// `rq->avg_rt.util_avg`.
        util: u64,
    },
    /// `sched_pelt_dl: cpu= load= rbl_load= util=` (`pelt_dl_tp`, from
    /// `update_dl_rq_load_avg()`).
    SchedPeltDl {
        /// CPU.
        cpu: u32,
        /// `rq->avg_dl.load_avg`.
        load: u64,
        /// `rq->avg_dl.runnable_avg`.
        rbl_load: u64,
        /// `rq->avg_dl.util_avg`.
        util: u64,
    },
    /// `sched_util_est_se: cpu= path=(null) comm= pid= enqueued= ewma= util=`.
    SchedUtilEstSe {
        /// CPU.
        cpu: u32,
        /// The task.
        task: TaskRef<'a>,
        /// `_task_util_est` (v6.8+: the ewma without flag; older: `enqueued`).
        enqueued: u64,
        /// EWMA.
        ewma: u64,
        /// `util_avg`.
        util: u64,
    },
    /// `sched_util_est_cfs: cpu= path=/ enqueued= ewma= util=`.
    SchedUtilEstCfs {
        /// CPU.
        cpu: u32,
        /// Root `cfs_rq->avg.util_est`.
        enqueued: u64,
        /// Same value (v6.8+ keeps one field).
        ewma: u64,
        /// Root `util_avg`.
        util: u64,
    },
    /// `sched_cpu_capacity: cpu= capacity= capacity_orig= capacity_curr=`.
    SchedCpuCapacity {
        /// CPU.
        cpu: u32,
        /// `capacity_of()`.
        capacity: u64,
        /// `arch_scale_cpu_capacity()`.
        capacity_orig: u64,
        /// Capacity at the current frequency.
        capacity_curr: u64,
    },
    /// `sched_overutilized: overutilized= span=0x…`.
    SchedOverutilized {
        /// New state.
        overutilized: bool,
        /// Root-domain span as 64-bit words, least significant first.
        span: &'a [u64],
    },
    /// `print: tracing_mark_write: rtapp_…` written by the task in the header.
    Print(RtappMarker<'a>),
}

/// Which event groups a sink wants, so the engine skips building the others.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Interest {
    /// Scheduling events (switch, wakeup, migrate, rename, exit).
    pub sched: bool,
    /// cpu_frequency, cpu_idle.
    pub power: bool,
    /// PELT, util_est and capacity signals.
    pub signals: bool,
    /// rt-app markers.
    pub markers: bool,
    /// sched_overutilized.
    pub overutilized: bool,
}

impl Interest {
    /// Everything.
    pub const ALL: Interest = Interest {
        sched: true,
        power: true,
        signals: true,
        markers: true,
        overutilized: true,
    };

    /// Union of two interests.
    pub fn union(self, o: Interest) -> Interest {
        Interest {
            sched: self.sched || o.sched,
            power: self.power || o.power,
            signals: self.signals || o.signals,
            markers: self.markers || o.markers,
            overutilized: self.overutilized || o.overutilized,
        }
    }
}

/// A consumer of the event stream.
pub trait TraceSink {
    /// Which groups of events this sink wants.
    fn interest(&self) -> Interest;
    /// Called once before the first event with the run's CPU count and start time.
    /// Task names are announced by `task_rename` events, not here.
    fn begin(&mut self, nr_cpus: usize, start_ns: Nanos) {
        let _ = (nr_cpus, start_ns);
    }
    /// One event.
    fn record(&mut self, ctx: &Ctx<'_>, ev: &TraceEvent<'_>);
    /// Two events at one context, `first` then `second`: [`TraceSink::record`] of each
    /// (the default; a sink may take both at once, as they come). The engine gives the
    /// `sched_pelt_se` and `sched_pelt_cfs` of one `update_load_avg()`, and the
    /// `sched_pelt_rt` and `sched_pelt_dl` of one `update_blocked_averages()`, so, when
    /// they go to one sink.
    fn record_pair(&mut self, ctx: &Ctx<'_>, first: &TraceEvent<'_>, second: &TraceEvent<'_>) {
        self.record(ctx, first);
        self.record(ctx, second);
    }
    /// Three events at one context: [`TraceSink::record`] of `first`, then
    /// [`TraceSink::record_pair`] of `second` and `third` (the default; a sink may take
    /// all three at once). The engine gives the `sched_util_est_cfs` of an enqueue or
    /// dequeue with the `sched_pelt_se` and `sched_pelt_cfs` of the `update_load_avg()`
    /// that follows it, so, when they go to one sink.
    fn record_triple(
        &mut self,
        ctx: &Ctx<'_>,
        first: &TraceEvent<'_>,
        second: &TraceEvent<'_>,
        third: &TraceEvent<'_>,
    ) {
        self.record(ctx, first);
        self.record_pair(ctx, second, third);
    }
    /// Called once at the end of the run with the final time.
    fn end(&mut self, end_ns: Nanos) {
        let _ = end_ns;
    }
}

/// A sink that keeps nothing.
#[derive(Debug, Default)]
pub struct NullSink;

impl TraceSink for NullSink {
    fn interest(&self) -> Interest {
        Interest::default()
    }
    fn record(&mut self, _: &Ctx<'_>, _: &TraceEvent<'_>) {}
}
