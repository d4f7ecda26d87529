//! [`PerfettoSink`]: writes the event stream as a Perfetto protobuf trace (`.pftrace`),
//! the form `traced_probes` records on a device: a `Trace` made of `TracePacket`s.
//!
//! * one `ClockSnapshot` packet first (BOOTTIME and MONOTONIC both at the run's start, so
//!   the ftrace events' BOOTTIME timestamps and the text trace's MONOTONIC ones are the
//!   same instants in trace processor);
//! * `FtraceEventBundle` packets, one CPU each, holding that CPU's events in the order the
//!   engine emitted them. Each CPU's events collect in a buffer of at most
//!   [`BUNDLE_BYTES`] that becomes a packet when full, and at the end of the run (CPUs in
//!   order), so memory stays bounded whatever the trace length;
//! * typed ftrace messages where Perfetto has one (`sched_switch`, `sched_waking`,
//!   `sched_wakeup`, `sched_wakeup_new`, `sched_migrate_task`, `task_rename`, `sched_process_exit`,
//!   `sched_pi_setprio`, `cpu_frequency`, `cpu_idle`, and `print` for rt-app's
//!   `trace_marker` lines, whose `buf` ends in `\n` as the kernel stores it and whose `ip`
//!   is left unset); every other event (PELT, util_est, capacity, overutilized, the
//!   governors', HMP's) as a `GenericFtraceEvent` whose fields are the text trace's, with
//!   the same names and values (unsigned as `uint_value`, signed as `int_value`, strings,
//!   including `span=0x…`, as `str_value`);
//! * `ProcessTree` packets naming the tasks, each at the time it is first known: a task
//!   created by `sched_wakeup_new` is a thread of the thread group of the task current on
//!   the CPU that created it (rt-app's threads are threads of rt-app's main thread); any
//!   other task (rt-app's main thread, kernel threads) first seen running leads its own
//!   group; `task_rename` re-announces the thread with its new name.
//!
//! Field numbers are Perfetto's (`protos/perfetto/trace/trace.proto`, `trace_packet.proto`,
//! `clock_snapshot.proto`, `ps/process_tree.proto`, `ftrace/ftrace_event_bundle.proto`,
//! `ftrace/ftrace_event.proto`, `ftrace/sched.proto`, `ftrace/power.proto`,
//! `ftrace/task.proto`, `ftrace/ftrace.proto`, `ftrace/generic.proto`), read in
//! google/perfetto at commit 038b48ca70d1 (ftrace_event.proto ends at field 539) and
//! checked against the message descriptors of Perfetto v59.1: the `perfetto_trace_pb2`
//! of PyPI `perfetto` 0.59.1 (built from v59.1; its prebuilt manifests name v59.1),
//! which `tests/python/test_perfetto_trace.py` decodes with.
//! Encoding is by hand (the crate's `proto` module): no protobuf compiler, no allocation
//! per event (the task map grows once per task).
//!
//! The same events give the same bytes: packets are written in a fixed order and no map
//! is iterated.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, Write};
use std::path::Path;

use hetsched_core::time::Nanos;
use hetsched_core::trace::{Ctx, Interest, TaskRef, TraceEvent, TraceSink};

use crate::fmt;
use crate::ftrace::{event_name, format_marker, wanted};
use crate::proto::{
    push_bytes, push_int, push_key, push_str, push_uint, push_varint, varint_len, WT_LEN,
};

/// Bytes of events a CPU collects before they become one `FtraceEventBundle` packet.
pub const BUNDLE_BYTES: usize = 16 * 1024;
/// Bytes of packets buffered before they are handed to the writer.
const FLUSH_THRESHOLD: usize = 64 * 1024;
/// The one packet sequence this writer produces (`trusted_packet_sequence_id`).
const SEQUENCE_ID: u64 = 1;

/// `Trace` (trace.proto).
mod trace {
    /// `repeated TracePacket packet = 1`.
    pub(super) const PACKET: u32 = 1;
}

/// `TracePacket` (trace_packet.proto).
mod packet {
    /// `FtraceEventBundle ftrace_events = 1`.
    pub(super) const FTRACE_EVENTS: u32 = 1;
    /// `ProcessTree process_tree = 2`.
    pub(super) const PROCESS_TREE: u32 = 2;
    /// `ClockSnapshot clock_snapshot = 6`.
    pub(super) const CLOCK_SNAPSHOT: u32 = 6;
    /// `uint64 timestamp = 8`.
    pub(super) const TIMESTAMP: u32 = 8;
    /// `uint32 trusted_packet_sequence_id = 10`.
    pub(super) const TRUSTED_PACKET_SEQUENCE_ID: u32 = 10;
}

/// `ClockSnapshot` and `BuiltinClock` (clock_snapshot.proto, builtin_clock.proto).
mod clock {
    /// `repeated Clock clocks = 1`.
    pub(super) const CLOCKS: u32 = 1;
    /// `BuiltinClock primary_trace_clock = 2`.
    pub(super) const PRIMARY_TRACE_CLOCK: u32 = 2;
    /// `Clock.clock_id = 1`.
    pub(super) const CLOCK_ID: u32 = 1;
    /// `Clock.timestamp = 2`.
    pub(super) const TIMESTAMP: u32 = 2;
    /// `BUILTIN_CLOCK_MONOTONIC`.
    pub(super) const MONOTONIC: u64 = 3;
    /// `BUILTIN_CLOCK_BOOTTIME`, the clock ftrace events are in by default.
    pub(super) const BOOTTIME: u64 = 6;
}

/// `ProcessTree` (ps/process_tree.proto).
mod ps {
    /// `repeated Process processes = 1`.
    pub(super) const PROCESSES: u32 = 1;
    /// `repeated Thread threads = 2`.
    pub(super) const THREADS: u32 = 2;
    /// `Process.pid = 1`.
    pub(super) const PROCESS_PID: u32 = 1;
    /// `Process.cmdline = 3` (repeated string).
    pub(super) const PROCESS_CMDLINE: u32 = 3;
    /// `Thread.tid = 1`.
    pub(super) const THREAD_TID: u32 = 1;
    /// `Thread.name = 2`.
    pub(super) const THREAD_NAME: u32 = 2;
    /// `Thread.tgid = 3`.
    pub(super) const THREAD_TGID: u32 = 3;
}

/// `FtraceEventBundle` (ftrace/ftrace_event_bundle.proto).
mod bundle {
    /// `uint32 cpu = 1`.
    pub(super) const CPU: u32 = 1;
    /// `repeated FtraceEvent event = 2`.
    pub(super) const EVENT: u32 = 2;
}

/// `FtraceEvent` (ftrace/ftrace_event.proto): common fields and the `event` oneof.
mod ev {
    /// `uint64 timestamp = 1` (ns).
    pub(super) const TIMESTAMP: u32 = 1;
    /// `uint32 pid = 2`: the task current on the CPU.
    pub(super) const PID: u32 = 2;
    pub(super) const PRINT: u32 = 3;
    pub(super) const SCHED_SWITCH: u32 = 4;
    pub(super) const CPU_FREQUENCY: u32 = 11;
    pub(super) const CPU_IDLE: u32 = 13;
    pub(super) const SCHED_WAKEUP: u32 = 17;
    pub(super) const SCHED_WAKING: u32 = 20;
    pub(super) const SCHED_WAKEUP_NEW: u32 = 114;
    pub(super) const TASK_RENAME: u32 = 236;
    pub(super) const SCHED_PROCESS_EXIT: u32 = 238;
    pub(super) const GENERIC: u32 = 327;
    pub(super) const SCHED_PI_SETPRIO: u32 = 353;
    pub(super) const SCHED_MIGRATE_TASK: u32 = 491;
}

/// `GenericFtraceEvent` (ftrace/generic.proto).
mod generic {
    /// `string event_name = 1`.
    pub(super) const EVENT_NAME: u32 = 1;
    /// `repeated Field field = 2`.
    pub(super) const FIELD: u32 = 2;
    /// `Field.name = 1`.
    pub(super) const NAME: u32 = 1;
    /// `Field.str_value = 3`.
    pub(super) const STR_VALUE: u32 = 3;
    /// `Field.int_value = 4` (int64).
    pub(super) const INT_VALUE: u32 = 4;
    /// `Field.uint_value = 5` (uint64).
    pub(super) const UINT_VALUE: u32 = 5;
}

/// A `GenericFtraceEvent` under construction: fields are appended to its body with
/// their lengths computed, not encoded apart and copied.
struct Generic<'a> {
    body: &'a mut Vec<u8>,
}

impl Generic<'_> {
    fn begin(&mut self, name: &str) {
        push_str(self.body, generic::EVENT_NAME, name);
    }
    /// Opens a `Field` whose value, key included, takes `value_len` bytes, and writes its
    /// name. Every `Field` number is below 16: one-byte keys.
    #[inline(always)]
    fn field(&mut self, name: &str, value_len: usize) {
        let len = 1 + varint_len(name.len() as u64) + name.len() + value_len;
        push_key(self.body, generic::FIELD, WT_LEN);
        push_varint(self.body, len as u64);
        push_str(self.body, generic::NAME, name);
    }
    #[inline(always)]
    fn u(&mut self, name: &str, v: u64) {
        self.field(name, 1 + varint_len(v));
        push_uint(self.body, generic::UINT_VALUE, v);
    }
    #[inline(always)]
    fn i(&mut self, name: &str, v: i64) {
        // The bits of a negative value, sign-extended, are its encoding.
        self.field(name, 1 + varint_len(v as u64));
        push_int(self.body, generic::INT_VALUE, v);
    }
    #[inline(always)]
    fn s(&mut self, name: &str, v: &[u8]) {
        self.field(name, 1 + varint_len(v.len() as u64) + v.len());
        push_bytes(self.body, generic::STR_VALUE, v);
    }
    /// `comm` (string) and `pid` (unsigned), as the text trace prints a task.
    #[inline(always)]
    fn task(&mut self, t: &TaskRef<'_>) {
        self.s("comm", t.comm.as_bytes());
        self.u("pid", u64::from(t.pid));
    }
}

/// Appends `comm`/`pid`/`prio` at field numbers 1, 2, 3 (sched_wakeup(_new),
/// sched_migrate_task).
fn typed_task(body: &mut Vec<u8>, t: &TaskRef<'_>) {
    push_str(body, 1, t.comm);
    push_int(body, 2, i64::from(t.pid));
    push_int(body, 3, i64::from(t.prio));
}

/// The field number of `ev` in `FtraceEvent`: its typed message, or `generic`. What
/// [`encode_body`] returns, known before the body is written (checked against it in
/// debug builds).
fn field_of(ev: &TraceEvent<'_>) -> u32 {
    match ev {
        TraceEvent::SchedSwitch { .. } => ev::SCHED_SWITCH,
        TraceEvent::SchedWaking { .. } => ev::SCHED_WAKING,
        TraceEvent::SchedWakeup { .. } => ev::SCHED_WAKEUP,
        TraceEvent::SchedWakeupNew { .. } => ev::SCHED_WAKEUP_NEW,
        TraceEvent::SchedMigrateTask { .. } => ev::SCHED_MIGRATE_TASK,
        TraceEvent::TaskRename { .. } => ev::TASK_RENAME,
        TraceEvent::SchedProcessExit { .. } => ev::SCHED_PROCESS_EXIT,
        TraceEvent::SchedPiSetprio { .. } => ev::SCHED_PI_SETPRIO,
        TraceEvent::CpuFrequency { .. } => ev::CPU_FREQUENCY,
        TraceEvent::CpuIdle { .. } => ev::CPU_IDLE,
        TraceEvent::Print(_) => ev::PRINT,
        _ => ev::GENERIC,
    }
}

/// Encodes the body of `ev` into `body` and returns its field number in `FtraceEvent`.
/// `nr_cpus` sets the width of `sched_overutilized`'s span as in the text trace.
fn encode_body(body: &mut Vec<u8>, text: &mut Vec<u8>, nr_cpus: usize, ev: &TraceEvent<'_>) -> u32 {
    match *ev {
        TraceEvent::SchedSwitch {
            prev,
            prev_state,
            next,
        } => {
            push_str(body, 1, prev.comm);
            push_int(body, 2, i64::from(prev.pid));
            push_int(body, 3, i64::from(prev.prio));
            push_int(body, 4, i64::from(prev_state));
            push_str(body, 5, next.comm);
            push_int(body, 6, i64::from(next.pid));
            push_int(body, 7, i64::from(next.prio));
            return ev::SCHED_SWITCH;
        }
        TraceEvent::SchedWaking { task, target_cpu } => {
            typed_task(body, &task);
            push_int(body, 5, i64::from(target_cpu));
            return ev::SCHED_WAKING;
        }
        TraceEvent::SchedWakeup { task, target_cpu } => {
            typed_task(body, &task);
            push_int(body, 5, i64::from(target_cpu));
            return ev::SCHED_WAKEUP;
        }
        TraceEvent::SchedWakeupNew { task, target_cpu } => {
            typed_task(body, &task);
            push_int(body, 5, i64::from(target_cpu));
            return ev::SCHED_WAKEUP_NEW;
        }
        TraceEvent::SchedMigrateTask {
            task,
            orig_cpu,
            dest_cpu,
        } => {
            typed_task(body, &task);
            push_int(body, 4, i64::from(orig_cpu));
            push_int(body, 5, i64::from(dest_cpu));
            return ev::SCHED_MIGRATE_TASK;
        }
        TraceEvent::TaskRename {
            pid,
            oldcomm,
            newcomm,
        } => {
            push_int(body, 1, i64::from(pid));
            push_str(body, 2, oldcomm);
            push_str(body, 3, newcomm);
            push_int(body, 4, 0);
            return ev::TASK_RENAME;
        }
        TraceEvent::SchedProcessExit { task } => {
            push_str(body, 1, task.comm);
            push_int(body, 2, i64::from(task.pid));
            push_int(body, 4, i64::from(task.prio));
            return ev::SCHED_PROCESS_EXIT;
        }
        TraceEvent::SchedPiSetprio {
            task,
            oldprio,
            newprio,
        } => {
            push_str(body, 1, task.comm);
            push_int(body, 2, i64::from(newprio));
            push_int(body, 3, i64::from(oldprio));
            push_int(body, 4, i64::from(task.pid));
            return ev::SCHED_PI_SETPRIO;
        }
        TraceEvent::CpuFrequency { cpu_id, state } => {
            push_uint(body, 1, state);
            push_uint(body, 2, u64::from(cpu_id));
            return ev::CPU_FREQUENCY;
        }
        TraceEvent::CpuIdle { cpu_id, state } => {
            // uint32 in the tracepoint and the message: −1 is 4294967295, as in the text.
            push_uint(body, 1, u64::from(state as u32));
            push_uint(body, 2, u64::from(cpu_id));
            return ev::CPU_IDLE;
        }
        TraceEvent::Print(marker) => {
            // PrintFtraceEvent.buf = 2; the kernel's tracing_mark_write() ends it in '\n'.
            text.clear();
            fmt::append(text, |c| {
                format_marker(c, &marker);
                c.byte(b'\n');
            });
            push_bytes(body, 2, text);
            return ev::PRINT;
        }
        _ => {}
    }
    let mut g = Generic { body };
    g.begin(event_name(ev));
    match *ev {
        TraceEvent::SchedHmpMigrate { task, dest, force } => {
            g.task(&task);
            g.u("dest", u64::from(dest));
            g.u("force", u64::from(force));
        }
        TraceEvent::SchedTaskRunnableRatio { task, ratio } => {
            g.task(&task);
            g.u("ratio", ratio);
        }
        TraceEvent::CpufreqInteractiveLoadeval {
            cpu_id,
            load,
            curtarg,
            curactual,
            newtarg,
            ..
        } => {
            g.u("cpu", u64::from(cpu_id));
            g.u("load", load);
            g.u("cur", curtarg);
            g.u("actual", curactual);
            g.u("targ", newtarg);
        }
        TraceEvent::CpufreqInteractiveSetspeed {
            cpu_id,
            targfreq,
            actualfreq,
        } => {
            g.u("cpu", u64::from(cpu_id));
            g.u("targ", targfreq);
            g.u("actual", actualfreq);
        }
        TraceEvent::CpufreqInteractiveBoost { s } | TraceEvent::CpufreqInteractiveUnboost { s } => {
            g.s("s", s.as_bytes());
        }
        TraceEvent::CpufreqSchedRequestOpp {
            cpu,
            capacity,
            freq_new,
            requested_freq,
        } => {
            g.u("cpu", u64::from(cpu));
            g.u("capacity", capacity);
            g.u("freq_new", freq_new);
            g.u("requested_freq", requested_freq);
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
            g.u("cpu", u64::from(cpu));
            g.u("set_cap", u64::from(request));
            g.u("cfs", cfs);
            g.u("rt", rt);
            g.u("dl", dl);
            g.u("old_tot", total);
            g.u("new_tot", new_total);
        }
        TraceEvent::CpufreqSchedThrottled { rem } => g.i("rem", rem),
        TraceEvent::SchedPeltSe {
            cpu,
            task,
            load,
            rbl_load,
            util,
            update_time,
        } => {
            g.u("cpu", u64::from(cpu));
            g.s("path", b"(null)");
            g.task(&task);
            g.u("load", load);
            g.u("rbl_load", rbl_load);
            g.u("util", util);
            g.u("update_time", update_time);
        }
        TraceEvent::SchedPeltCfs {
            cpu,
            load,
            rbl_load,
            util,
            update_time,
        } => {
            g.u("cpu", u64::from(cpu));
            g.s("path", b"/");
            g.u("load", load);
            g.u("rbl_load", rbl_load);
            g.u("util", util);
            g.u("update_time", update_time);
        }
        TraceEvent::SchedPeltRt {
            cpu,
            load,
            rbl_load,
            util,
        }
        | TraceEvent::SchedPeltDl {
            cpu,
            load,
            rbl_load,
            util,
        } => {
            g.u("cpu", u64::from(cpu));
            g.u("load", load);
            g.u("rbl_load", rbl_load);
            g.u("util", util);
        }
        TraceEvent::SchedUtilEstSe {
            cpu,
            task,
            enqueued,
            ewma,
            util,
        } => {
            g.u("cpu", u64::from(cpu));
            g.s("path", b"(null)");
            g.task(&task);
            g.u("enqueued", enqueued);
            g.u("ewma", ewma);
            g.u("util", util);
        }
        TraceEvent::SchedUtilEstCfs {
            cpu,
            enqueued,
            ewma,
            util,
        } => {
            g.u("cpu", u64::from(cpu));
            g.s("path", b"/");
            g.u("enqueued", enqueued);
            g.u("ewma", ewma);
            g.u("util", util);
        }
        TraceEvent::SchedCpuCapacity {
            cpu,
            capacity,
            capacity_orig,
            capacity_curr,
        } => {
            g.u("cpu", u64::from(cpu));
            g.u("capacity", capacity);
            g.u("capacity_orig", capacity_orig);
            g.u("capacity_curr", capacity_curr);
        }
        TraceEvent::SchedOverutilized { overutilized, span } => {
            g.u("overutilized", u64::from(overutilized));
            // The text's `span=0x…` value, `%*pb` of the root domain's span.
            text.clear();
            let nr_bits = if nr_cpus == 0 {
                span.len() * 64
            } else {
                nr_cpus
            };
            fmt::append(text, |c| {
                c.str(b"0x");
                c.cpumask(span, nr_bits);
            });
            g.s("span", text);
        }
        // Typed above.
        TraceEvent::SchedSwitch { .. }
        | TraceEvent::SchedWaking { .. }
        | TraceEvent::SchedWakeup { .. }
        | TraceEvent::SchedWakeupNew { .. }
        | TraceEvent::SchedMigrateTask { .. }
        | TraceEvent::TaskRename { .. }
        | TraceEvent::SchedProcessExit { .. }
        | TraceEvent::SchedPiSetprio { .. }
        | TraceEvent::CpuFrequency { .. }
        | TraceEvent::CpuIdle { .. }
        | TraceEvent::Print(_) => {}
    }
    ev::GENERIC
}

/// A [`TraceSink`] that writes a Perfetto protobuf trace, as described in the
/// [module documentation](self).
///
/// Packets are encoded into internal buffers without allocating per event and handed to
/// the writer in blocks of about 64 KiB, so `W` need not be buffered. Error handling is
/// [`FtraceTextSink`](crate::FtraceTextSink)'s: the first I/O error is kept and stops
/// output; [`flush`](Self::flush) or [`into_inner`](Self::into_inner) report it. Events
/// still buffered per CPU are written by `end` (the engine calls it at the end of a run),
/// `flush` and `into_inner`.
///
/// ```
/// use hetsched_core::trace::{Ctx, TaskRef, TraceEvent, TraceSink};
/// use hetsched_trace::PerfettoSink;
///
/// let mut sink = PerfettoSink::new(Vec::new());
/// sink.begin(8, 1_000_000_000);
/// let task = TaskRef { comm: "small-0", pid: 1000, prio: 120 };
/// let ctx = Ctx { ts: 1_000_000_000, cpu: 0, comm: "<idle>", pid: 0 };
/// sink.record(&ctx, &TraceEvent::SchedWakeup { task, target_cpu: 0 });
/// sink.end(2_000_000_000);
/// let bytes = sink.into_inner().unwrap();
/// assert_eq!(bytes[0], 0x0a); // Trace.packet, field 1, length-delimited
/// ```
#[derive(Debug)]
pub struct PerfettoSink<W: Write> {
    /// The destination; `None` only after `into_inner` took it.
    out: Option<W>,
    /// Pending output (whole `Trace.packet` fields).
    buf: Vec<u8>,
    /// Per CPU, the encoded `FtraceEventBundle.event` fields not yet written.
    cpus: Vec<Vec<u8>>,
    /// Scratch: a message to nest (the body of an event of 128 bytes or more, a clock, a
    /// process-tree entry).
    body: Vec<u8>,
    /// Scratch: a print's text, an overutilized span.
    text: Vec<u8>,
    /// Scratch: one `TracePacket`.
    packet: Vec<u8>,
    /// Scratch: a packet's nested message.
    nested: Vec<u8>,
    /// Thread group of every task announced, by pid.
    tgid: BTreeMap<u32, u32>,
    /// Per CPU, the pid last seen current there, announced already: most events need no
    /// look-up in `tgid`.
    current: Vec<u32>,
    /// Event groups written.
    interest: Interest,
    /// CPU count given to `begin` (0 before).
    nr_cpus: usize,
    /// First I/O error; output stops once set.
    error: Option<io::Error>,
}

impl PerfettoSink<File> {
    /// Creates (truncates) the file at `path` and writes the trace to it.
    pub fn create(path: impl AsRef<Path>) -> io::Result<Self> {
        Ok(Self::new(File::create(path)?))
    }
}

impl<W: Write> PerfettoSink<W> {
    /// A sink writing every event group to `writer`.
    pub fn new(writer: W) -> Self {
        PerfettoSink {
            out: Some(writer),
            buf: Vec::with_capacity(FLUSH_THRESHOLD + BUNDLE_BYTES + 1024),
            cpus: Vec::new(),
            body: Vec::new(),
            text: Vec::new(),
            packet: Vec::new(),
            nested: Vec::new(),
            tgid: BTreeMap::new(),
            current: Vec::new(),
            interest: Interest::ALL,
            nr_cpus: 0,
            error: None,
        }
    }

    /// Restricts the sink to the given event groups. Events outside them are skipped even
    /// if the engine sends them.
    pub fn with_interest(mut self, interest: Interest) -> Self {
        self.interest = interest;
        self
    }

    /// The writer.
    pub fn get_ref(&self) -> Option<&W> {
        self.out.as_ref()
    }

    /// Takes the first I/O error met so far, if any. Output stopped at that error.
    pub fn take_error(&mut self) -> Option<io::Error> {
        self.error.take()
    }

    /// Writes every buffered event and packet out and flushes the writer. Returns the
    /// first error met, including one from an earlier write (which is then taken).
    pub fn flush(&mut self) -> io::Result<()> {
        self.flush_bundles();
        self.write_buf();
        if self.error.is_none() {
            if let Some(out) = self.out.as_mut() {
                if let Err(e) = out.flush() {
                    self.error = Some(e);
                }
            }
        }
        match self.error.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Flushes and returns the writer, or the first I/O error met.
    pub fn into_inner(mut self) -> io::Result<W> {
        self.flush()?;
        self.out
            .take()
            .ok_or_else(|| io::Error::other("PerfettoSink: writer already taken"))
    }

    /// Appends `self.packet` (plus the sequence id) as one `Trace.packet`.
    fn emit_packet(&mut self) {
        push_uint(
            &mut self.packet,
            packet::TRUSTED_PACKET_SEQUENCE_ID,
            SEQUENCE_ID,
        );
        push_bytes(&mut self.buf, trace::PACKET, &self.packet);
        if self.buf.len() >= FLUSH_THRESHOLD {
            self.write_buf();
        }
    }

    /// Writes CPU `cpu`'s pending events as one `FtraceEventBundle` packet, straight
    /// into the output buffer (lengths computed, not copied through scratch buffers).
    fn flush_bundle(&mut self, cpu: usize) {
        let Some(events) = self.cpus.get(cpu) else {
            return;
        };
        if events.is_empty() {
            return;
        }
        let cpu_field = 1 + varint_len(cpu as u64);
        let bundle_len = cpu_field + events.len();
        let seq_field = 1 + varint_len(SEQUENCE_ID);
        let packet_len = 1 + varint_len(bundle_len as u64) + bundle_len + seq_field;
        push_key(&mut self.buf, trace::PACKET, WT_LEN);
        push_varint(&mut self.buf, packet_len as u64);
        push_key(&mut self.buf, packet::FTRACE_EVENTS, WT_LEN);
        push_varint(&mut self.buf, bundle_len as u64);
        push_uint(&mut self.buf, bundle::CPU, cpu as u64);
        self.buf.extend_from_slice(events);
        push_uint(
            &mut self.buf,
            packet::TRUSTED_PACKET_SEQUENCE_ID,
            SEQUENCE_ID,
        );
        self.cpus[cpu].clear();
        if self.buf.len() >= FLUSH_THRESHOLD {
            self.write_buf();
        }
    }

    /// Writes every CPU's pending events, CPUs in order.
    fn flush_bundles(&mut self) {
        for cpu in 0..self.cpus.len() {
            self.flush_bundle(cpu);
        }
    }

    /// Writes a `ProcessTree` packet at `ts` for thread `pid` named `name` in group
    /// `tgid`; with `leader`, the group's `Process` too (its cmdline the name).
    fn announce(&mut self, ts: Nanos, pid: u32, tgid: u32, name: &str, leader: bool) {
        self.nested.clear();
        if leader {
            self.body.clear();
            push_uint(&mut self.body, ps::PROCESS_PID, u64::from(pid));
            push_str(&mut self.body, ps::PROCESS_CMDLINE, name);
            push_bytes(&mut self.nested, ps::PROCESSES, &self.body);
        }
        self.body.clear();
        push_uint(&mut self.body, ps::THREAD_TID, u64::from(pid));
        push_str(&mut self.body, ps::THREAD_NAME, name);
        push_uint(&mut self.body, ps::THREAD_TGID, u64::from(tgid));
        push_bytes(&mut self.nested, ps::THREADS, &self.body);
        self.packet.clear();
        push_uint(&mut self.packet, packet::TIMESTAMP, ts);
        push_bytes(&mut self.packet, packet::PROCESS_TREE, &self.nested);
        self.emit_packet();
    }

    /// Announces `pid` as the leader of its own group if it is not known yet.
    fn note_running(&mut self, ts: Nanos, pid: u32, comm: &str) {
        if pid != 0 && !self.tgid.contains_key(&pid) {
            self.tgid.insert(pid, pid);
            self.announce(ts, pid, pid, comm, true);
        }
    }

    /// Keeps the process tree up to date with `ev` (see the module documentation).
    fn track_tasks(&mut self, ctx: &Ctx<'_>, ev: &TraceEvent<'_>) {
        let current = self.current.get_mut(ctx.cpu as usize);
        if current.as_deref() != Some(&ctx.pid) {
            if let Some(c) = current {
                *c = ctx.pid;
            }
            self.note_running(ctx.ts, ctx.pid, ctx.comm);
        }
        match *ev {
            TraceEvent::SchedWakeupNew { task, .. }
                if task.pid != 0 && !self.tgid.contains_key(&task.pid) =>
            {
                let tgid = match self.tgid.get(&ctx.pid) {
                    Some(&g) if ctx.pid != 0 => g,
                    _ => task.pid,
                };
                self.tgid.insert(task.pid, tgid);
                self.announce(ctx.ts, task.pid, tgid, task.comm, tgid == task.pid);
            }
            TraceEvent::SchedSwitch { next, .. } => {
                self.note_running(ctx.ts, next.pid, next.comm);
            }
            TraceEvent::TaskRename { pid, newcomm, .. } if pid != 0 => match self.tgid.get(&pid) {
                Some(&tgid) => self.announce(ctx.ts, pid, tgid, newcomm, false),
                None => {
                    self.tgid.insert(pid, pid);
                    self.announce(ctx.ts, pid, pid, newcomm, true);
                }
            },
            _ => {}
        }
    }

    /// Hands the buffer to the writer; records an error instead of returning it.
    fn write_buf(&mut self) {
        if self.buf.is_empty() {
            return;
        }
        if self.error.is_none() {
            if let Some(out) = self.out.as_mut() {
                if let Err(e) = out.write_all(&self.buf) {
                    self.error = Some(e);
                }
            }
        }
        self.buf.clear();
    }
}

impl<W: Write> TraceSink for PerfettoSink<W> {
    fn interest(&self) -> Interest {
        self.interest
    }

    /// Writes the clock snapshot: BOOTTIME and MONOTONIC both at `start_ns`.
    fn begin(&mut self, nr_cpus: usize, start_ns: Nanos) {
        self.nr_cpus = nr_cpus;
        self.cpus.resize_with(nr_cpus, Vec::new);
        self.current.resize(nr_cpus, 0);
        self.nested.clear();
        for id in [clock::BOOTTIME, clock::MONOTONIC] {
            self.body.clear();
            push_uint(&mut self.body, clock::CLOCK_ID, id);
            push_uint(&mut self.body, clock::TIMESTAMP, start_ns);
            push_bytes(&mut self.nested, clock::CLOCKS, &self.body);
        }
        push_uint(
            &mut self.nested,
            clock::PRIMARY_TRACE_CLOCK,
            clock::BOOTTIME,
        );
        self.packet.clear();
        push_uint(&mut self.packet, packet::TIMESTAMP, start_ns);
        push_bytes(&mut self.packet, packet::CLOCK_SNAPSHOT, &self.nested);
        self.emit_packet();
    }

    fn record(&mut self, ctx: &Ctx<'_>, ev: &TraceEvent<'_>) {
        if self.error.is_some() || !wanted(&self.interest, ev) {
            return;
        }
        self.track_tasks(ctx, ev);
        let cpu = ctx.cpu as usize;
        if self.cpus.len() <= cpu {
            self.cpus.resize_with(cpu + 1, Vec::new);
        }
        // The FtraceEvent, its body encoded in place in the CPU's buffer: both lengths get
        // one byte, filled in once the body is written; an event of 128 bytes or more
        // (rare: a long print) is written again with its lengths' true widths.
        let pid = u64::from(ctx.pid);
        let tag = field_of(ev);
        let out = &mut self.cpus[cpu];
        let start = out.len();
        push_key(out, bundle::EVENT, WT_LEN);
        let len_at = out.len();
        out.push(0);
        push_uint(out, ev::TIMESTAMP, ctx.ts);
        push_uint(out, ev::PID, pid);
        push_key(out, tag, WT_LEN);
        let body_len_at = out.len();
        out.push(0);
        let encoded = encode_body(out, &mut self.text, self.nr_cpus, ev);
        debug_assert_eq!(encoded, tag, "field_of() disagrees with encode_body()");
        let body_len = out.len() - (body_len_at + 1);
        let len = out.len() - (len_at + 1);
        if len < 0x80 {
            // body_len < len: both fit in their byte.
            out[len_at] = len as u8;
            out[body_len_at] = body_len as u8;
        } else {
            self.body.clear();
            self.body.extend_from_slice(&out[body_len_at + 1..]);
            out.truncate(start);
            let len = 1
                + varint_len(ctx.ts)
                + 1
                + varint_len(pid)
                + varint_len((u64::from(tag) << 3) | WT_LEN)
                + varint_len(body_len as u64)
                + body_len;
            push_key(out, bundle::EVENT, WT_LEN);
            push_varint(out, len as u64);
            push_uint(out, ev::TIMESTAMP, ctx.ts);
            push_uint(out, ev::PID, pid);
            push_bytes(out, tag, &self.body);
        }
        if self.cpus[cpu].len() >= BUNDLE_BYTES {
            self.flush_bundle(cpu);
        }
    }

    /// Writes every CPU's pending events and flushes the writer; an error is kept for
    /// [`take_error`](PerfettoSink::take_error).
    fn end(&mut self, _end_ns: Nanos) {
        self.flush_bundles();
        self.write_buf();
        if self.error.is_none() {
            if let Some(out) = self.out.as_mut() {
                if let Err(e) = out.flush() {
                    self.error = Some(e);
                }
            }
        }
    }
}

impl<W: Write> Drop for PerfettoSink<W> {
    /// Best-effort flush, errors ignored (use `flush`/`into_inner` to see them).
    fn drop(&mut self) {
        if self.out.is_some() {
            self.flush_bundles();
            self.write_buf();
            if let Some(out) = self.out.as_mut() {
                let _ = out.flush();
            }
        }
    }
}
