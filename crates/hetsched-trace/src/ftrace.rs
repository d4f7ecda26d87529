//! [`FtraceTextSink`]: writes the event stream as the raw text of `trace-cmd report -R`,
//! the form LISA's `TxtTraceParser` (lisa-linux 3.1.0) and Perfetto's text importer read.
//!
//! The file starts with ftrace's comment header ([`HEADER`], `# tracer: nop`, which
//! Perfetto's importer looks for), then one line per event:
//!
//! ```text
//!           <idle>-0     [000]   100.000000: sched_wakeup:         comm=small-0 pid=1000 prio=120 target_cpu=000
//! ```
//!
//! * `%16s-%-5d` comm and pid of the task current on the CPU (trace-cmd's layout), then
//!   ` [%03d] ` CPU and `%5lu.%06lu: ` timestamp (seconds, µs truncated as ftrace does);
//! * no irq-flags/preempt-count column: LISA's header regex,
//!   `^.*:?\s+COMM-PID\s+\[CPU\]\s+TS:\s+EVENT:`, does not allow one;
//! * the event name followed by `: ` and padded to 20 columns, as libtraceevent does;
//! * fields as `name=value` separated by one space, in the order of the kernel's
//!   `TP_printk` (include/trace/events/sched.h, power.h, LISA's `sched_tp` module), with
//!   numbers in decimal. `sched_switch` has no `==>` and a numeric `prev_state` (raw form:
//!   LISA counts only `prev_state=0` as preempted). `print` (trace_marker) keeps the
//!   non-raw `ip: buf` form, as `trace-cmd report` prints it and LISA requires.

use std::fs::File;
use std::io;
use std::path::Path;

use hetsched_core::time::Nanos;
use hetsched_core::trace::{Ctx, Interest, RtappMarker, TaskRef, TraceEvent, TraceSink};

use crate::background::{Block, BlockWrite};
use crate::fmt::{self, key, Cursor, Key, Line, Name, Text, LINE_ROOM};
use crate::prefix::{push_prefix, Prefixes};

/// Bytes buffered before they are handed to the writer: 256 KiB. Against 64 KiB it took
/// the `periodic-trace` benchmark's system time (505 MB to an ext4 file) from about
/// 0.28 s to 0.20 s; 1 MiB and 4 MiB gave times from 0.12 s to 0.79 s depending on the
/// page cache's state (docs/benchmarks.md).
const FLUSH_THRESHOLD: usize = 256 * 1024;
/// Size of the buffer: the threshold plus room for one long line (it grows for longer).
const BUF_CAPACITY: usize = FLUSH_THRESHOLD + 4 * 1024;
/// Column the fields start at, counted from the start of the event name (libtraceevent
/// prints `name: ` and pads short names to 20 characters).
const NAME_WIDTH: usize = 20;

/// Which [`Interest`] group an event belongs to.
pub(crate) fn wanted(interest: &Interest, ev: &TraceEvent<'_>) -> bool {
    match ev {
        TraceEvent::TaskRename { .. }
        | TraceEvent::SchedWaking { .. }
        | TraceEvent::SchedWakeup { .. }
        | TraceEvent::SchedWakeupNew { .. }
        | TraceEvent::SchedSwitch { .. }
        | TraceEvent::SchedMigrateTask { .. }
        | TraceEvent::SchedHmpMigrate { .. }
        | TraceEvent::SchedPiSetprio { .. }
        | TraceEvent::SchedProcessExit { .. } => interest.sched,
        TraceEvent::CpuFrequency { .. }
        | TraceEvent::CpuIdle { .. }
        | TraceEvent::CpufreqInteractiveLoadeval { .. }
        | TraceEvent::CpufreqInteractiveSetspeed { .. }
        | TraceEvent::CpufreqInteractiveBoost { .. }
        | TraceEvent::CpufreqInteractiveUnboost { .. }
        | TraceEvent::CpufreqSchedRequestOpp { .. }
        | TraceEvent::CpufreqSchedUpdateCapacity { .. }
        | TraceEvent::CpufreqSchedThrottled { .. } => interest.power,
        TraceEvent::SchedPeltSe { .. }
        | TraceEvent::SchedPeltCfs { .. }
        | TraceEvent::SchedPeltRt { .. }
        | TraceEvent::SchedPeltDl { .. }
        | TraceEvent::SchedUtilEstSe { .. }
        | TraceEvent::SchedUtilEstCfs { .. }
        | TraceEvent::SchedCpuCapacity { .. }
        | TraceEvent::SchedTaskRunnableRatio { .. } => interest.signals,
        TraceEvent::SchedOverutilized { .. } => interest.overutilized,
        TraceEvent::Print(_) => interest.markers,
    }
}

/// The tracepoint name of an event.
pub fn event_name(ev: &TraceEvent<'_>) -> &'static str {
    match ev {
        TraceEvent::TaskRename { .. } => "task_rename",
        TraceEvent::SchedWaking { .. } => "sched_waking",
        TraceEvent::SchedWakeup { .. } => "sched_wakeup",
        TraceEvent::SchedWakeupNew { .. } => "sched_wakeup_new",
        TraceEvent::SchedSwitch { .. } => "sched_switch",
        TraceEvent::SchedMigrateTask { .. } => "sched_migrate_task",
        TraceEvent::SchedProcessExit { .. } => "sched_process_exit",
        TraceEvent::SchedHmpMigrate { .. } => "sched_hmp_migrate",
        TraceEvent::SchedPiSetprio { .. } => "sched_pi_setprio",
        TraceEvent::SchedTaskRunnableRatio { .. } => "sched_task_runnable_ratio",
        TraceEvent::CpuFrequency { .. } => "cpu_frequency",
        TraceEvent::CpuIdle { .. } => "cpu_idle",
        TraceEvent::CpufreqInteractiveLoadeval { kind, .. } => kind.name(),
        TraceEvent::CpufreqInteractiveSetspeed { .. } => "cpufreq_interactive_setspeed",
        TraceEvent::CpufreqInteractiveBoost { .. } => "cpufreq_interactive_boost",
        TraceEvent::CpufreqInteractiveUnboost { .. } => "cpufreq_interactive_unboost",
        TraceEvent::CpufreqSchedRequestOpp { .. } => "cpufreq_sched_request_opp",
        TraceEvent::CpufreqSchedUpdateCapacity { .. } => "cpufreq_sched_update_capacity",
        TraceEvent::CpufreqSchedThrottled { .. } => "cpufreq_sched_throttled",
        TraceEvent::SchedPeltSe { .. } => "sched_pelt_se",
        TraceEvent::SchedPeltCfs { .. } => "sched_pelt_cfs",
        TraceEvent::SchedPeltRt { .. } => "sched_pelt_rt",
        TraceEvent::SchedPeltDl { .. } => "sched_pelt_dl",
        TraceEvent::SchedUtilEstSe { .. } => "sched_util_est_se",
        TraceEvent::SchedUtilEstCfs { .. } => "sched_util_est_cfs",
        TraceEvent::SchedCpuCapacity { .. } => "sched_cpu_capacity",
        TraceEvent::SchedOverutilized { .. } => "sched_overutilized",
        TraceEvent::Print(_) => "print",
    }
}

/// Appends ` name=value` for a string value; `key` is ` name=`.
#[inline(always)]
fn kv_str<T: Text>(c: &mut T, key: &Key, v: &str) {
    c.key_str(key, v.as_bytes());
}

/// The fields that open a task entity's PELT and util_est events: ` cpu=N path=(null)
/// comm=… pid=…` (a task has no cgroup path, as LISA's `sched_pelt_se` and
/// `sched_util_est_se` print it). The constant path and the next key are one key.
#[inline(always)]
fn kv_se_prefix<T: Text>(c: &mut T, cpu: u32, task: &TaskRef<'_>) {
    kv_u64(c, key!(b" cpu="), u64::from(cpu));
    kv_str(c, key!(b" path=(null) comm="), task.comm);
    kv_u64(c, key!(b" pid="), u64::from(task.pid));
}

/// Appends ` name1=value1 name2=value2` for two unsigned values under one bound check.
#[inline(always)]
fn kv_u64_2<T: Text>(c: &mut T, key1: &Key, v1: u64, key2: &Key, v2: u64) {
    c.key_u64_2(key1, v1, key2, v2);
}

/// Appends ` name=value` for an unsigned value; `key` is ` name=`.
#[inline(always)]
fn kv_u64<T: Text>(c: &mut T, key: &Key, v: u64) {
    c.key_u64(key, v);
}

/// Appends ` name=value` for a signed value; `key` is ` name=`.
#[inline(always)]
fn kv_i64<T: Text>(c: &mut T, key: &Key, v: i64) {
    c.key_i64(key, v);
}

/// Appends `comm= pid= prio=` of a task.
#[inline(always)]
fn kv_task<T: Text>(c: &mut T, t: &TaskRef<'_>) {
    kv_str(c, key!(b" comm="), t.comm);
    c.key_u64_i64(
        key!(b" pid="),
        u64::from(t.pid),
        key!(b" prio="),
        i64::from(t.prio),
    );
}

/// Appends one complete line (with its `\n`) for `ev` to `buf`, in the format described in
/// the [module documentation](self).
///
/// `nr_cpus` sets the width of `sched_overutilized`'s span (`%*pb` pads to the CPU
/// count); 0 means "the whole of the span's words".
pub fn format_event(buf: &mut Vec<u8>, nr_cpus: usize, ctx: &Ctx<'_>, ev: &TraceEvent<'_>) {
    fmt::append(buf, |c| {
        push_prefix(c, ctx);
        format_body(c, nr_cpus, ev);
    });
}

/// The name column ([`Name`], `name: ` padded to [`NAME_WIDTH`]) of an event name, a
/// constant.
macro_rules! name_col {
    ($s:literal) => {{
        const N: Name = Name::new($s.as_bytes(), NAME_WIDTH);
        &N
    }};
}

/// Appends `name: ` padded to [`NAME_WIDTH`], `name` being the column of the literal
/// [`event_name`] gives for `ev` (a constant in each arm of [`format_body`]).
#[inline(always)]
fn name<T: Text>(c: &mut T, ev: &TraceEvent<'_>, name: &Name) {
    debug_assert_eq!(name.name(), event_name(ev).as_bytes());
    c.name_col(name);
}

/// The fields of `sched_waking`, `sched_wakeup` and `sched_wakeup_new`.
#[inline(always)]
fn kv_wakeup<T: Text>(c: &mut T, task: &TaskRef<'_>, target_cpu: u32) {
    kv_task(c, task);
    c.str(b" target_cpu=");
    c.u64_zero_padded(u64::from(target_cpu), 3);
}

/// The fields of `sched_pelt_rt` and `sched_pelt_dl`.
#[inline(always)]
fn kv_pelt_rq<T: Text>(c: &mut T, cpu: u32, load: u64, rbl_load: u64, util: u64) {
    kv_u64_2(c, key!(b" cpu="), u64::from(cpu), key!(b" load="), load);
    kv_u64_2(c, key!(b" rbl_load="), rbl_load, key!(b" util="), util);
}

/// Appends a line past its prefix (`comm-pid [cpu] ts: `, [`crate::prefix`]): the event's
/// name and fields and the `\n`. The cursor is copied into a local one for the line
/// ([`Cursor::local`]), so that its position stays in a register.
fn format_body(c: &mut Cursor<'_>, nr_cpus: usize, ev: &TraceEvent<'_>) {
    c.local(|c| format_line(c, nr_cpus, ev));
}

/// [`format_body`] into a [`Line`] (no bound check per field; the caller writes the
/// line again with a [`Cursor`] if it did not end whole), on a local copy of it
/// ([`Line::local`]). Inlined into `record()`: out of line, its own saves and restores of
/// registers and the call cost about 15 instructions a line.
#[inline(always)]
fn format_body_line(l: &mut Line<'_>, nr_cpus: usize, ev: &TraceEvent<'_>) {
    l.local(|l| format_line(l, nr_cpus, ev));
}

/// [`format_body`] on the local cursor: every function it calls is inlined.
#[inline(always)]
fn format_line<T: Text>(c: &mut T, nr_cpus: usize, ev: &TraceEvent<'_>) {
    // Each arm starts with the event's name, `name: ` padded to NAME_WIDTH. The fields
    // each start with their separating space; the first one's is the space after the
    // padded name.
    match *ev {
        TraceEvent::TaskRename {
            pid,
            oldcomm,
            newcomm,
        } => {
            name(c, ev, name_col!("task_rename"));
            kv_u64(c, key!(b" pid="), u64::from(pid));
            kv_str(c, key!(b" oldcomm="), oldcomm);
            kv_str(c, key!(b" newcomm="), newcomm);
            kv_i64(c, key!(b" oom_score_adj="), 0);
        }
        TraceEvent::SchedWaking { task, target_cpu } => {
            name(c, ev, name_col!("sched_waking"));
            kv_wakeup(c, &task, target_cpu);
        }
        TraceEvent::SchedWakeup { task, target_cpu } => {
            name(c, ev, name_col!("sched_wakeup"));
            kv_wakeup(c, &task, target_cpu);
        }
        TraceEvent::SchedWakeupNew { task, target_cpu } => {
            name(c, ev, name_col!("sched_wakeup_new"));
            kv_wakeup(c, &task, target_cpu);
        }
        TraceEvent::SchedSwitch {
            prev,
            prev_state,
            next,
        } => {
            name(c, ev, name_col!("sched_switch"));
            kv_str(c, key!(b" prev_comm="), prev.comm);
            c.key_u64_i64(
                key!(b" prev_pid="),
                u64::from(prev.pid),
                key!(b" prev_prio="),
                i64::from(prev.prio),
            );
            kv_u64(c, key!(b" prev_state="), u64::from(prev_state));
            kv_str(c, key!(b" next_comm="), next.comm);
            c.key_u64_i64(
                key!(b" next_pid="),
                u64::from(next.pid),
                key!(b" next_prio="),
                i64::from(next.prio),
            );
        }
        TraceEvent::SchedMigrateTask {
            task,
            orig_cpu,
            dest_cpu,
        } => {
            name(c, ev, name_col!("sched_migrate_task"));
            kv_task(c, &task);
            kv_u64(c, key!(b" orig_cpu="), u64::from(orig_cpu));
            kv_u64(c, key!(b" dest_cpu="), u64::from(dest_cpu));
        }
        TraceEvent::SchedProcessExit { task } => {
            name(c, ev, name_col!("sched_process_exit"));
            kv_task(c, &task);
        }
        TraceEvent::SchedPiSetprio {
            task,
            oldprio,
            newprio,
        } => {
            name(c, ev, name_col!("sched_pi_setprio"));
            kv_str(c, key!(b" comm="), task.comm);
            kv_u64(c, key!(b" pid="), u64::from(task.pid));
            kv_i64(c, key!(b" oldprio="), i64::from(oldprio));
            kv_i64(c, key!(b" newprio="), i64::from(newprio));
        }
        TraceEvent::SchedHmpMigrate { task, dest, force } => {
            name(c, ev, name_col!("sched_hmp_migrate"));
            kv_str(c, key!(b" comm="), task.comm);
            kv_u64(c, key!(b" pid="), u64::from(task.pid));
            kv_u64(c, key!(b" dest="), u64::from(dest));
            kv_u64(c, key!(b" force="), u64::from(force));
        }
        TraceEvent::SchedTaskRunnableRatio { task, ratio } => {
            name(c, ev, name_col!("sched_task_runnable_ratio"));
            kv_str(c, key!(b" comm="), task.comm);
            kv_u64(c, key!(b" pid="), u64::from(task.pid));
            kv_u64(c, key!(b" ratio="), ratio);
        }
        TraceEvent::CpuFrequency { cpu_id, state } => {
            name(c, ev, name_col!("cpu_frequency"));
            kv_u64_2(
                c,
                key!(b" state="),
                state,
                key!(b" cpu_id="),
                u64::from(cpu_id),
            );
        }
        TraceEvent::CpuIdle { cpu_id, state } => {
            name(c, ev, name_col!("cpu_idle"));
            // The tracepoint stores the state in a u32: −1 reads 4294967295.
            if state == -1 {
                // The exit's (half of the lines): a constant, not ten digits.
                kv_u64(c, key!(b" state=4294967295 cpu_id="), u64::from(cpu_id));
            } else {
                kv_u64_2(
                    c,
                    key!(b" state="),
                    u64::from(state as u32),
                    key!(b" cpu_id="),
                    u64::from(cpu_id),
                );
            }
        }
        TraceEvent::CpufreqInteractiveLoadeval {
            kind,
            cpu_id,
            load,
            curtarg,
            curactual,
            newtarg,
        } => {
            c.name_padded(kind.name().as_bytes(), NAME_WIDTH);
            kv_u64(c, key!(b" cpu="), u64::from(cpu_id));
            kv_u64(c, key!(b" load="), load);
            kv_u64(c, key!(b" cur="), curtarg);
            kv_u64(c, key!(b" actual="), curactual);
            kv_u64(c, key!(b" targ="), newtarg);
        }
        TraceEvent::CpufreqInteractiveSetspeed {
            cpu_id,
            targfreq,
            actualfreq,
        } => {
            name(c, ev, name_col!("cpufreq_interactive_setspeed"));
            kv_u64(c, key!(b" cpu="), u64::from(cpu_id));
            kv_u64(c, key!(b" targ="), targfreq);
            kv_u64(c, key!(b" actual="), actualfreq);
        }
        TraceEvent::CpufreqInteractiveBoost { s } | TraceEvent::CpufreqInteractiveUnboost { s } => {
            c.name_padded(event_name(ev).as_bytes(), NAME_WIDTH);
            // TP_printk("%s", __get_str(s))
            c.byte(b' ');
            c.str(s.as_bytes());
        }
        TraceEvent::CpufreqSchedRequestOpp {
            cpu,
            capacity,
            freq_new,
            requested_freq,
        } => {
            name(c, ev, name_col!("cpufreq_sched_request_opp"));
            c.str(b" cpu ");
            c.u64(u64::from(cpu));
            c.str(b" cap change, cluster cap request ");
            c.u64(capacity);
            c.str(b" => OPP ");
            c.u64(freq_new);
            c.str(b" (cur ");
            c.u64(requested_freq);
            c.byte(b')');
        }
        TraceEvent::CpufreqSchedUpdateCapacity {
            cpu,
            request,
            cfs,
            rt,
            dl,
            total,
            new_total,
        } => {
            name(c, ev, name_col!("cpufreq_sched_update_capacity"));
            kv_u64(c, key!(b" cpu="), u64::from(cpu));
            kv_u64(c, key!(b" set_cap="), u64::from(request));
            kv_u64(c, key!(b" cfs="), cfs);
            kv_u64(c, key!(b" rt="), rt);
            kv_u64(c, key!(b" dl="), dl);
            kv_u64(c, key!(b" old_tot="), total);
            kv_u64(c, key!(b" new_tot="), new_total);
        }
        TraceEvent::CpufreqSchedThrottled { rem } => {
            name(c, ev, name_col!("cpufreq_sched_throttled"));
            c.str(b" throttled - ");
            c.i64(rem);
            c.str(b" usec remaining");
        }
        TraceEvent::SchedPeltSe {
            cpu,
            task,
            load,
            rbl_load,
            util,
            update_time,
        } => {
            name(c, ev, name_col!("sched_pelt_se"));
            kv_se_prefix(c, cpu, &task);
            kv_u64_2(c, key!(b" load="), load, key!(b" rbl_load="), rbl_load);
            kv_u64(c, key!(b" util="), util);
            c.key_u64_ns(key!(b" update_time="), update_time);
        }
        TraceEvent::SchedPeltCfs {
            cpu,
            load,
            rbl_load,
            util,
            update_time,
        } => {
            name(c, ev, name_col!("sched_pelt_cfs"));
            // `path=/` (the root cfs_rq) and the next key as one key.
            kv_u64_2(
                c,
                key!(b" cpu="),
                u64::from(cpu),
                key!(b" path=/ load="),
                load,
            );
            kv_u64_2(c, key!(b" rbl_load="), rbl_load, key!(b" util="), util);
            c.key_u64_ns(key!(b" update_time="), update_time);
        }
        TraceEvent::SchedPeltRt {
            cpu,
            load,
            rbl_load,
            util,
        } => {
            name(c, ev, name_col!("sched_pelt_rt"));
            kv_pelt_rq(c, cpu, load, rbl_load, util);
        }
        TraceEvent::SchedPeltDl {
            cpu,
            load,
            rbl_load,
            util,
        } => {
            name(c, ev, name_col!("sched_pelt_dl"));
            kv_pelt_rq(c, cpu, load, rbl_load, util);
        }
        TraceEvent::SchedUtilEstSe {
            cpu,
            task,
            enqueued,
            ewma,
            util,
        } => {
            name(c, ev, name_col!("sched_util_est_se"));
            kv_se_prefix(c, cpu, &task);
            kv_u64_2(c, key!(b" enqueued="), enqueued, key!(b" ewma="), ewma);
            kv_u64(c, key!(b" util="), util);
        }
        TraceEvent::SchedUtilEstCfs {
            cpu,
            enqueued,
            ewma,
            util,
        } => {
            name(c, ev, name_col!("sched_util_est_cfs"));
            // `path=/` (the root cfs_rq) and the next key as one key.
            kv_u64_2(
                c,
                key!(b" cpu="),
                u64::from(cpu),
                key!(b" path=/ enqueued="),
                enqueued,
            );
            kv_u64_2(c, key!(b" ewma="), ewma, key!(b" util="), util);
        }
        TraceEvent::SchedCpuCapacity {
            cpu,
            capacity,
            capacity_orig,
            capacity_curr,
        } => {
            name(c, ev, name_col!("sched_cpu_capacity"));
            kv_u64_2(
                c,
                key!(b" cpu="),
                u64::from(cpu),
                key!(b" capacity="),
                capacity,
            );
            kv_u64_2(
                c,
                key!(b" capacity_orig="),
                capacity_orig,
                key!(b" capacity_curr="),
                capacity_curr,
            );
        }
        TraceEvent::SchedOverutilized { overutilized, span } => {
            name(c, ev, name_col!("sched_overutilized"));
            kv_u64(c, key!(b" overutilized="), u64::from(overutilized));
            c.str(b" span=0x");
            let nr_bits = if nr_cpus == 0 {
                span.len() * 64
            } else {
                nr_cpus
            };
            c.cpumask(span, nr_bits);
        }
        TraceEvent::Print(marker) => {
            name(c, ev, name_col!("print"));
            c.str(b" tracing_mark_write: ");
            format_marker(c, &marker);
        }
    }
    c.byte(b'\n');
}

/// Appends the rt-app payload of a `print` line (rt-app's `log_ftrace()` strings).
/// Inlined: [`format_body`] calls it on its local cursor.
#[inline(always)]
pub(crate) fn format_marker<T: Text>(c: &mut T, m: &RtappMarker<'_>) {
    match *m {
        RtappMarker::Main { event, data } => {
            c.str(b"rtapp_main:");
            kv_str(c, key!(b" event="), event);
            kv_i64(c, key!(b" data="), data);
        }
        RtappMarker::Task { event } => {
            c.str(b"rtapp_task:");
            kv_str(c, key!(b" event="), event);
        }
        RtappMarker::Loop {
            event,
            thread_loop,
            phase,
            phase_loop,
        } => {
            c.str(b"rtapp_loop:");
            kv_str(c, key!(b" event="), event);
            kv_u64(c, key!(b" thread_loop="), thread_loop);
            kv_u64(c, key!(b" phase="), phase);
            kv_u64(c, key!(b" phase_loop="), phase_loop);
        }
        RtappMarker::Event { id, type_id, desc } => {
            c.str(b"rtapp_event:");
            kv_u64(c, key!(b" id="), id);
            kv_u64(c, key!(b" type="), u64::from(type_id));
            kv_str(c, key!(b" desc="), desc);
        }
        RtappMarker::Stats {
            period,
            run,
            wu_lat,
            slack,
            c_period,
            c_run,
        } => {
            c.str(b"rtapp_stats:");
            kv_i64(c, key!(b" period="), period);
            kv_i64(c, key!(b" run="), run);
            kv_i64(c, key!(b" wu_lat="), wu_lat);
            kv_i64(c, key!(b" slack="), slack);
            kv_i64(c, key!(b" c_period="), c_period);
            kv_i64(c, key!(b" c_run="), c_run);
        }
    }
}

/// The first line of the text trace, the kernel's own (`s_show()`, kernel/trace/trace.c,
/// `# tracer: %s` with the `nop` tracer that event tracing runs under).
///
/// Perfetto's trace processor takes a file as ftrace text ("systrace") when
/// `# tracer` occurs in its first 64 bytes (`GuessTraceType()`,
/// src/trace_processor/util/trace_type.cc, `kGuessTraceMaxLookahead` = 64 in
/// trace_type.h); a first line `version = 6`, which trace-cmd report prints, made it an
/// unknown type. Its systrace tokenizer skips lines starting with `#` and accepts lines
/// without the irq-flags column (systrace_line_tokenizer.cc).
pub const HEADER: &str = "# tracer: nop\n";

/// Appends the header: [`HEADER`] and `#` (`s_show()`), then the column legend as ftrace
/// writes it with the `irq-info` option off (`trace_default_header()` →
/// `print_func_help_header()`, kernel/trace/trace.c v5.10+), with
/// the CPU count that trace-cmd report gives as `cpus=N` in a comment line of its own
/// (ftrace gives it as `#P:N` on its `entries-in-buffer` line, whose counts a stream
/// cannot know when it starts).
fn push_header(c: &mut Cursor<'_>, nr_cpus: usize) {
    c.str(HEADER.as_bytes());
    c.str(b"#\n# cpus=");
    c.u64(nr_cpus as u64);
    c.str(
        b"\n#\n#           TASK-PID     CPU#     TIMESTAMP  FUNCTION\n\
          #              | |         |         |         |\n",
    );
}

/// A [`TraceSink`] that writes ftrace text in the `trace-cmd report -R` form.
///
/// Lines are formatted into an internal 256 KiB buffer without allocating and handed to
/// the writer in large blocks ([`BlockWrite`]: any [`std::io::Write`] writes the buffer's
/// bytes; a [`BackgroundWriter`](crate::BackgroundWriter) takes the buffer itself to its
/// thread and gives another back), so `W` need not be buffered. The first I/O error is kept
/// (see [`take_error`](Self::take_error)); output stops after it. Call
/// [`flush`](Self::flush) or [`into_inner`](Self::into_inner) at the end to see errors:
/// dropping the sink flushes on a best-effort basis and ignores them, as
/// [`std::io::BufWriter`] does.
///
/// ```
/// use hetsched_core::trace::{Ctx, TaskRef, TraceEvent, TraceSink};
/// use hetsched_trace::FtraceTextSink;
///
/// let mut sink = FtraceTextSink::new(Vec::new());
/// sink.begin(8, 0);
/// let task = TaskRef { comm: "small-0", pid: 1000, prio: 120 };
/// let ctx = Ctx { ts: 100_000_000_000, cpu: 0, comm: "<idle>", pid: 0 };
/// sink.record(&ctx, &TraceEvent::SchedWakeup { task, target_cpu: 0 });
/// let text = String::from_utf8(sink.into_inner().unwrap()).unwrap();
/// assert_eq!(
///     text.lines().last().unwrap(),
///     "          <idle>-0     [000]   100.000000: sched_wakeup:         \
///      comm=small-0 pid=1000 prio=120 target_cpu=000"
/// );
/// ```
#[derive(Debug)]
pub struct FtraceTextSink<W: BlockWrite> {
    /// The destination; `None` only after `into_inner` took it.
    out: Option<W>,
    /// Pending output, `buf[..filled]`; the bytes past it are the lines' scratch
    /// ([`Cursor`]).
    buf: Vec<u8>,
    /// Bytes of pending output.
    filled: usize,
    /// Event groups written.
    interest: Interest,
    /// `interest == Interest::ALL`: every event is written, `record` skips [`wanted`].
    all: bool,
    /// CPU count given to `begin` (0 before).
    nr_cpus: usize,
    /// Each CPU's last line prefix.
    prefixes: Prefixes,
    /// First I/O error; output stops once set.
    error: Option<io::Error>,
    /// `all` and no `error`: `record` writes the event with no other test (one test
    /// per line where `error` and `all` were two). Kept by [`Self::sync_pass`] at every
    /// change of either.
    pass: bool,
}

impl FtraceTextSink<File> {
    /// Creates (truncates) the file at `path` and writes the trace to it.
    pub fn create(path: impl AsRef<Path>) -> io::Result<Self> {
        Ok(Self::new(File::create(path)?))
    }
}

impl<W: BlockWrite> FtraceTextSink<W> {
    /// A sink writing every event group to `writer`.
    pub fn new(writer: W) -> Self {
        FtraceTextSink {
            out: Some(writer),
            buf: vec![0; BUF_CAPACITY],
            filled: 0,
            interest: Interest::ALL,
            all: true,
            nr_cpus: 0,
            prefixes: Prefixes::default(),
            error: None,
            pass: true,
        }
    }

    /// Recomputes `pass` after a change of `all` or `error`.
    fn sync_pass(&mut self) {
        self.pass = self.all && self.error.is_none();
    }

    /// Restricts the sink to the given event groups (e.g. `--trace-events sched,power`).
    /// Events outside them are skipped even if the engine sends them.
    pub fn with_interest(mut self, interest: Interest) -> Self {
        self.interest = interest;
        self.all = interest == Interest::ALL;
        self.sync_pass();
        self
    }

    /// The writer.
    pub fn get_ref(&self) -> Option<&W> {
        self.out.as_ref()
    }

    /// Takes the first I/O error met so far, if any. Output stopped at that error.
    pub fn take_error(&mut self) -> Option<io::Error> {
        let e = self.error.take();
        self.sync_pass();
        e
    }

    /// Writes the buffered lines out and flushes the writer. Returns the first error met,
    /// including one from an earlier write (which is then taken).
    pub fn flush(&mut self) -> io::Result<()> {
        self.write_buf();
        if self.error.is_none() {
            if let Some(out) = self.out.as_mut() {
                if let Err(e) = out.flush_blocks() {
                    self.error = Some(e);
                }
            }
        }
        self.sync_pass();
        let e = self.error.take();
        self.sync_pass();
        match e {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Flushes and returns the writer, or the first I/O error met.
    pub fn into_inner(mut self) -> io::Result<W> {
        self.flush()?;
        self.out
            .take()
            .ok_or_else(|| io::Error::other("FtraceTextSink: writer already taken"))
    }

    /// Hands the buffer to the writer; records an error instead of returning it.
    fn write_buf(&mut self) {
        if self.filled == 0 {
            return;
        }
        if self.error.is_none() {
            if let Some(out) = self.out.as_mut() {
                // the buffer handed over whole; the block given back is the next buffer
                let mut block = Block {
                    bytes: std::mem::take(&mut self.buf),
                    len: self.filled,
                    inserts: Vec::new(),
                };
                let result = out.write_block(&mut block);
                self.buf = block.bytes;
                if self.buf.len() < BUF_CAPACITY {
                    self.buf.resize(BUF_CAPACITY, 0);
                }
                if let Err(e) = result {
                    self.error = Some(e);
                }
            }
        }
        self.filled = 0;
        self.sync_pass();
    }

    /// Writes the line of `ev` with a [`Cursor`], into a grown buffer if needed: it did
    /// not end whole in a [`Line`] (a line of [`fmt::line::LINE_MAX`] bytes or more, a string
    /// longer than a `Line` copies, a prefix the cache does not keep) or the buffer had
    /// not [`LINE_ROOM`] bytes past the pending output (the prefix cache, updated by the
    /// first try, gives the same prefix).
    #[cold]
    #[inline(never)]
    fn record_grown(&mut self, ctx: &Ctx<'_>, ev: &TraceEvent<'_>) {
        let nr_cpus = self.nr_cpus;
        let prefixes = &mut self.prefixes;
        self.filled = fmt::write_at(&mut self.buf, self.filled, |c| {
            prefixes.push(c, ctx);
            format_body(c, nr_cpus, ev);
        });
    }

    /// Writes the buffer out once it passes the threshold.
    fn maybe_write(&mut self) {
        if self.filled >= FLUSH_THRESHOLD {
            self.write_buf();
        }
    }
}

impl<W: BlockWrite> TraceSink for FtraceTextSink<W> {
    fn interest(&self) -> Interest {
        self.interest
    }

    /// Writes the header: see [`HEADER`].
    fn begin(&mut self, nr_cpus: usize, _start_ns: Nanos) {
        self.nr_cpus = nr_cpus;
        self.filled = fmt::write_at(&mut self.buf, self.filled, |c| push_header(c, nr_cpus));
    }

    fn record(&mut self, ctx: &Ctx<'_>, ev: &TraceEvent<'_>) {
        debug_assert_eq!(self.all, self.interest == Interest::ALL);
        debug_assert_eq!(self.pass, self.all && self.error.is_none(), "pass");
        if !self.pass && (self.error.is_some() || !wanted(&self.interest, ev)) {
            return;
        }
        let nr_cpus = self.nr_cpus;
        let prefixes = &mut self.prefixes;
        let at = self.filled;
        // The line in a `Line` of the LINE_ROOM bytes past the pending output (the
        // buffer keeps more than that past its threshold).
        let written = match self
            .buf
            .get_mut(at..)
            .and_then(|b| b.first_chunk_mut::<LINE_ROOM>())
        {
            Some(room) => {
                let mut l = Line::new(room);
                prefixes.push_line(&mut l, ctx);
                format_body_line(&mut l, nr_cpus, ev);
                l.len()
            }
            None => None,
        };
        match written {
            Some(n) => self.filled = at + n,
            None => self.record_grown(ctx, ev),
        }
        self.maybe_write();
    }

    /// Writes out the buffered lines and flushes the writer; an error is kept for
    /// [`take_error`](FtraceTextSink::take_error).
    fn end(&mut self, _end_ns: Nanos) {
        self.write_buf();
        if self.error.is_none() {
            if let Some(out) = self.out.as_mut() {
                if let Err(e) = out.flush_blocks() {
                    self.error = Some(e);
                }
            }
        }
        self.sync_pass();
    }
}

impl<W: BlockWrite> Drop for FtraceTextSink<W> {
    /// Best-effort flush, errors ignored (use `flush`/`into_inner` to see them).
    fn drop(&mut self) {
        self.write_buf();
        if let Some(out) = self.out.as_mut() {
            let _ = out.flush_blocks();
        }
    }
}
