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
//! per event (the task map grows once per task). As protobuf's generated code does
//! (`ByteSize()`, then `SerializeWithCachedSizes()`), an event's body is sized first and
//! then written once, in place in its CPU's bundle, behind lengths of their true width:
//! one function per event writes its fields, run over a byte counter and then over the
//! buffer. Constant parts (a generic event's name, its fields' names and keys) are
//! constant arrays, copied whole.
//!
//! The same events give the same bytes: packets are written in a fixed order and no map
//! is iterated.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, IoSlice, Write};
use std::path::Path;

use hetsched_core::time::Nanos;
use hetsched_core::trace::{Ctx, Interest, TaskRef, TraceEvent, TraceSink};

use crate::fmt;
use crate::ftrace::{format_marker, wanted};
use crate::proto::{
    key1, push_bytes, push_key, push_str, push_uint, push_varint, varint_len, Enc, Out, Sizer,
    WT_LEN,
};

/// Bytes of events a CPU collects before they become one `FtraceEventBundle` packet.
pub const BUNDLE_BYTES: usize = 16 * 1024;
/// Bytes of packets buffered before they are handed to the writer.
const FLUSH_THRESHOLD: usize = 256 * 1024;
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

/// The field number of `ev` in `FtraceEvent`: its typed message, or `generic`.
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

/// Key of `GenericFtraceEvent.field` (a `Field` message).
const FIELD_KEY: u8 = key1(generic::FIELD, WT_LEN);

/// `GenericFtraceEvent.event_name` as a constant: its key, length and bytes.
const fn name_field<const N: usize>(name: &str) -> [u8; N] {
    let b = name.as_bytes();
    assert!(N == b.len() + 2 && b.len() < 0x80, "a one-byte length");
    let mut a = [0u8; N];
    a[0] = key1(generic::EVENT_NAME, WT_LEN);
    // Below 0x80 by the assertion.
    a[1] = b.len() as u8;
    let mut i = 0;
    while i < b.len() {
        a[2 + i] = b[i];
        i += 1;
    }
    a
}

/// The head of a `Field`, as a constant: its key and a placeholder for its length, then
/// `name`'s key, length and bytes, then the key of its value (`value_key`), whose varint
/// or length follows.
const fn field_head<const N: usize>(name: &str, value_key: u8) -> [u8; N] {
    let b = name.as_bytes();
    assert!(N == b.len() + 5 && b.len() < 0x80, "a one-byte length");
    let mut a = [0u8; N];
    a[0] = FIELD_KEY;
    a[2] = key1(generic::NAME, WT_LEN);
    // Below 0x80 by the assertion.
    a[3] = b.len() as u8;
    let mut i = 0;
    while i < b.len() {
        a[4 + i] = b[i];
        i += 1;
    }
    a[N - 1] = value_key;
    a
}

/// A whole `Field` with a constant string value, as a constant: its key and length, then
/// `name`'s key, length and bytes, then `value`'s.
const fn const_field<const N: usize>(name: &str, value: &str) -> [u8; N] {
    let (n, v) = (name.as_bytes(), value.as_bytes());
    assert!(
        N == n.len() + v.len() + 6 && N - 2 < 0x80,
        "one-byte lengths"
    );
    let mut a = [0u8; N];
    a[0] = FIELD_KEY;
    // Below 0x80 by the assertion, and so are both lengths within.
    a[1] = (N - 2) as u8;
    a[2] = key1(generic::NAME, WT_LEN);
    a[3] = n.len() as u8;
    let mut i = 0;
    while i < n.len() {
        a[4 + i] = n[i];
        i += 1;
    }
    a[4 + n.len()] = key1(generic::STR_VALUE, WT_LEN);
    a[5 + n.len()] = v.len() as u8;
    let mut i = 0;
    while i < v.len() {
        a[6 + n.len() + i] = v[i];
        i += 1;
    }
    a
}

/// The constant `Field` of a string literal name with a string literal value.
macro_rules! const_field {
    ($name:literal, $value:literal) => {{
        const F: [u8; $name.len() + $value.len() + 6] = const_field($name, $value);
        &F
    }};
}

/// The constant `event_name` field of a generic event named by a string literal.
macro_rules! name {
    ($name:literal) => {{
        const F: [u8; $name.len() + 2] = name_field($name);
        &F
    }};
}

/// The constant head of a `Field` named by a string literal whose value is a
/// `uint_value` (`u`), an `int_value` (`i`) or a `str_value` (`s`).
macro_rules! head {
    ($name:literal, u) => {
        head!($name, key1(generic::UINT_VALUE, 0))
    };
    ($name:literal, i) => {
        head!($name, key1(generic::INT_VALUE, 0))
    };
    ($name:literal, s) => {
        head!($name, key1(generic::STR_VALUE, WT_LEN))
    };
    ($name:literal, $key:expr) => {{
        const H: [u8; $name.len() + 5] = field_head($name, $key);
        &H
    }};
}

/// A generic event's `Field` with an unsigned value (`head!(name, u)`).
#[inline(always)]
fn gu<O: Out, const N: usize>(o: &mut O, head: &[u8; N], v: u64) {
    o.short_message(head, v);
}

/// A generic event's `Field` with a signed value (`head!(name, i)`): the bits of a
/// negative value, sign-extended to 64, are its encoding.
#[inline(always)]
fn gi<O: Out, const N: usize>(o: &mut O, head: &[u8; N], v: i64) {
    gu(o, head, v as u64);
}

/// A generic event's `Field` with a string value (`head!(name, s)`).
#[inline(always)]
fn gs<O: Out, const N: usize>(o: &mut O, head: &[u8; N], v: &[u8]) {
    let len = v.len();
    // The head's own key and length byte are not part of the length.
    let field_len = N - 2 + varint_len(len as u64) + len;
    if field_len < 0x80 {
        let mut h = *head;
        // Below 0x80.
        h[1] = field_len as u8;
        o.fixed(&h);
    } else {
        o.byte(head[0]);
        o.varint(field_len as u64);
        o.bytes(&head[2..]);
    }
    o.varint(len as u64);
    o.bytes(v);
}

/// `comm` (string) and `pid` (unsigned), as the text trace prints a task.
#[inline(always)]
fn g_task<O: Out>(o: &mut O, t: &TaskRef<'_>) {
    gs(o, head!("comm", s), t.comm.as_bytes());
    gu(o, head!("pid", u), u64::from(t.pid));
}

/// A typed message's string field `field` (below 16).
#[inline(always)]
fn t_str<O: Out>(o: &mut O, field: u32, s: &str) {
    o.byte(key1(field, WT_LEN));
    o.varint(s.len() as u64);
    o.bytes(s.as_bytes());
}

/// A typed message's signed (`int32`/`int64`) field `field` (below 16).
#[inline(always)]
fn t_int<O: Out>(o: &mut O, field: u32, v: i64) {
    o.byte(key1(field, 0));
    // Two's complement over 64 bits: -1 is ten bytes.
    o.varint(v as u64);
}

/// A typed message's unsigned field `field` (below 16).
#[inline(always)]
fn t_uint<O: Out>(o: &mut O, field: u32, v: u64) {
    o.byte(key1(field, 0));
    o.varint(v);
}

/// `comm`/`pid`/`prio` at field numbers 1, 2, 3 (sched_wakeup(_new),
/// sched_migrate_task).
#[inline(always)]
fn typed_task<O: Out>(o: &mut O, t: &TaskRef<'_>) {
    t_str(o, 1, t.comm);
    t_int(o, 2, i64::from(t.pid));
    t_int(o, 3, i64::from(t.prio));
}

/// Whether the body of `ev` holds text formatted beforehand into a scratch buffer
/// ([`format_text`]).
#[inline(always)]
fn has_text(ev: &TraceEvent<'_>) -> bool {
    matches!(
        ev,
        TraceEvent::Print(_) | TraceEvent::SchedOverutilized { .. }
    )
}

/// Formats the text part of `ev` into `text` (cleared first): a print's `buf`, which ends
/// in `\n` as the kernel's tracing_mark_write() stores it, or `sched_overutilized`'s
/// `span=0x…` value (`%*pb` of the root domain's span, `nr_cpus` wide as in the text
/// trace). Other events leave `text` as it is.
fn format_text(text: &mut Vec<u8>, nr_cpus: usize, ev: &TraceEvent<'_>) {
    match *ev {
        TraceEvent::Print(marker) => {
            text.clear();
            fmt::append(text, |c| {
                format_marker(c, &marker);
                c.byte(b'\n');
            });
        }
        TraceEvent::SchedOverutilized { span, .. } => {
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
        }
        _ => {}
    }
}

/// Writes the body of `ev` (the message at field [`field_of`]`(ev)` of `FtraceEvent`) to
/// `o`: run with a [`Sizer`] for its length, then with an [`Enc`] to write it. `text`
/// holds what [`format_text`] made of `ev` if [`has_text`]`(ev)`.
#[inline(always)]
fn encode_body<O: Out>(o: &mut O, text: &[u8], ev: &TraceEvent<'_>) {
    match *ev {
        TraceEvent::SchedSwitch {
            prev,
            prev_state,
            next,
        } => {
            t_str(o, 1, prev.comm);
            t_int(o, 2, i64::from(prev.pid));
            t_int(o, 3, i64::from(prev.prio));
            t_int(o, 4, i64::from(prev_state));
            t_str(o, 5, next.comm);
            t_int(o, 6, i64::from(next.pid));
            t_int(o, 7, i64::from(next.prio));
        }
        TraceEvent::SchedWaking { task, target_cpu }
        | TraceEvent::SchedWakeup { task, target_cpu }
        | TraceEvent::SchedWakeupNew { task, target_cpu } => {
            typed_task(o, &task);
            t_int(o, 5, i64::from(target_cpu));
        }
        TraceEvent::SchedMigrateTask {
            task,
            orig_cpu,
            dest_cpu,
        } => {
            typed_task(o, &task);
            t_int(o, 4, i64::from(orig_cpu));
            t_int(o, 5, i64::from(dest_cpu));
        }
        TraceEvent::TaskRename {
            pid,
            oldcomm,
            newcomm,
        } => {
            t_int(o, 1, i64::from(pid));
            t_str(o, 2, oldcomm);
            t_str(o, 3, newcomm);
            t_int(o, 4, 0);
        }
        TraceEvent::SchedProcessExit { task } => {
            t_str(o, 1, task.comm);
            t_int(o, 2, i64::from(task.pid));
            t_int(o, 4, i64::from(task.prio));
        }
        TraceEvent::SchedPiSetprio {
            task,
            oldprio,
            newprio,
        } => {
            t_str(o, 1, task.comm);
            t_int(o, 2, i64::from(newprio));
            t_int(o, 3, i64::from(oldprio));
            t_int(o, 4, i64::from(task.pid));
        }
        TraceEvent::CpuFrequency { cpu_id, state } => {
            t_uint(o, 1, state);
            t_uint(o, 2, u64::from(cpu_id));
        }
        TraceEvent::CpuIdle { cpu_id, state } => {
            // uint32 in the tracepoint and the message: −1 is 4294967295, as in the text.
            t_uint(o, 1, u64::from(state as u32));
            t_uint(o, 2, u64::from(cpu_id));
        }
        TraceEvent::Print(_) => {
            // PrintFtraceEvent.buf = 2.
            o.byte(key1(2, WT_LEN));
            o.varint(text.len() as u64);
            o.bytes(text);
        }
        TraceEvent::SchedHmpMigrate { task, dest, force } => {
            o.fixed(name!("sched_hmp_migrate"));
            g_task(o, &task);
            gu(o, head!("dest", u), u64::from(dest));
            gu(o, head!("force", u), u64::from(force));
        }
        TraceEvent::SchedTaskRunnableRatio { task, ratio } => {
            o.fixed(name!("sched_task_runnable_ratio"));
            g_task(o, &task);
            gu(o, head!("ratio", u), ratio);
        }
        TraceEvent::CpufreqInteractiveLoadeval {
            cpu_id,
            load,
            curtarg,
            curactual,
            newtarg,
            kind,
        } => {
            let name = kind.name();
            o.byte(key1(generic::EVENT_NAME, WT_LEN));
            o.varint(name.len() as u64);
            o.bytes(name.as_bytes());
            gu(o, head!("cpu", u), u64::from(cpu_id));
            gu(o, head!("load", u), load);
            gu(o, head!("cur", u), curtarg);
            gu(o, head!("actual", u), curactual);
            gu(o, head!("targ", u), newtarg);
        }
        TraceEvent::CpufreqInteractiveSetspeed {
            cpu_id,
            targfreq,
            actualfreq,
        } => {
            o.fixed(name!("cpufreq_interactive_setspeed"));
            gu(o, head!("cpu", u), u64::from(cpu_id));
            gu(o, head!("targ", u), targfreq);
            gu(o, head!("actual", u), actualfreq);
        }
        TraceEvent::CpufreqInteractiveBoost { s } => {
            o.fixed(name!("cpufreq_interactive_boost"));
            gs(o, head!("s", s), s.as_bytes());
        }
        TraceEvent::CpufreqInteractiveUnboost { s } => {
            o.fixed(name!("cpufreq_interactive_unboost"));
            gs(o, head!("s", s), s.as_bytes());
        }
        TraceEvent::CpufreqSchedRequestOpp {
            cpu,
            capacity,
            freq_new,
            requested_freq,
        } => {
            o.fixed(name!("cpufreq_sched_request_opp"));
            gu(o, head!("cpu", u), u64::from(cpu));
            gu(o, head!("capacity", u), capacity);
            gu(o, head!("freq_new", u), freq_new);
            gu(o, head!("requested_freq", u), requested_freq);
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
            o.fixed(name!("cpufreq_sched_update_capacity"));
            gu(o, head!("cpu", u), u64::from(cpu));
            gu(o, head!("set_cap", u), u64::from(request));
            gu(o, head!("cfs", u), cfs);
            gu(o, head!("rt", u), rt);
            gu(o, head!("dl", u), dl);
            gu(o, head!("old_tot", u), total);
            gu(o, head!("new_tot", u), new_total);
        }
        TraceEvent::CpufreqSchedThrottled { rem } => {
            o.fixed(name!("cpufreq_sched_throttled"));
            gi(o, head!("rem", i), rem);
        }
        TraceEvent::SchedPeltSe {
            cpu,
            task,
            load,
            rbl_load,
            util,
            update_time,
        } => {
            o.fixed(name!("sched_pelt_se"));
            gu(o, head!("cpu", u), u64::from(cpu));
            o.fixed(const_field!("path", "(null)"));
            g_task(o, &task);
            gu(o, head!("load", u), load);
            gu(o, head!("rbl_load", u), rbl_load);
            gu(o, head!("util", u), util);
            gu(o, head!("update_time", u), update_time);
        }
        TraceEvent::SchedPeltCfs {
            cpu,
            load,
            rbl_load,
            util,
            update_time,
        } => {
            o.fixed(name!("sched_pelt_cfs"));
            gu(o, head!("cpu", u), u64::from(cpu));
            o.fixed(const_field!("path", "/"));
            gu(o, head!("load", u), load);
            gu(o, head!("rbl_load", u), rbl_load);
            gu(o, head!("util", u), util);
            gu(o, head!("update_time", u), update_time);
        }
        TraceEvent::SchedPeltRt {
            cpu,
            load,
            rbl_load,
            util,
        } => {
            o.fixed(name!("sched_pelt_rt"));
            gu(o, head!("cpu", u), u64::from(cpu));
            gu(o, head!("load", u), load);
            gu(o, head!("rbl_load", u), rbl_load);
            gu(o, head!("util", u), util);
        }
        TraceEvent::SchedPeltDl {
            cpu,
            load,
            rbl_load,
            util,
        } => {
            o.fixed(name!("sched_pelt_dl"));
            gu(o, head!("cpu", u), u64::from(cpu));
            gu(o, head!("load", u), load);
            gu(o, head!("rbl_load", u), rbl_load);
            gu(o, head!("util", u), util);
        }
        TraceEvent::SchedUtilEstSe {
            cpu,
            task,
            enqueued,
            ewma,
            util,
        } => {
            o.fixed(name!("sched_util_est_se"));
            gu(o, head!("cpu", u), u64::from(cpu));
            o.fixed(const_field!("path", "(null)"));
            g_task(o, &task);
            gu(o, head!("enqueued", u), enqueued);
            gu(o, head!("ewma", u), ewma);
            gu(o, head!("util", u), util);
        }
        TraceEvent::SchedUtilEstCfs {
            cpu,
            enqueued,
            ewma,
            util,
        } => {
            o.fixed(name!("sched_util_est_cfs"));
            gu(o, head!("cpu", u), u64::from(cpu));
            o.fixed(const_field!("path", "/"));
            gu(o, head!("enqueued", u), enqueued);
            gu(o, head!("ewma", u), ewma);
            gu(o, head!("util", u), util);
        }
        TraceEvent::SchedCpuCapacity {
            cpu,
            capacity,
            capacity_orig,
            capacity_curr,
        } => {
            o.fixed(name!("sched_cpu_capacity"));
            gu(o, head!("cpu", u), u64::from(cpu));
            gu(o, head!("capacity", u), capacity);
            gu(o, head!("capacity_orig", u), capacity_orig);
            gu(o, head!("capacity_curr", u), capacity_curr);
        }
        TraceEvent::SchedOverutilized { overutilized, .. } => {
            o.fixed(name!("sched_overutilized"));
            gu(o, head!("overutilized", u), u64::from(overutilized));
            gs(o, head!("span", s), text);
        }
    }
}

/// Bytes a [`Bundle`] keeps free past an event: an [`Enc`] writes a varint of three bytes
/// or more as ten bytes and the cached [`Head`] as [`HEAD_BYTES`] (keeping their own
/// lengths), so they need not be written byte by byte near the end.
const SLACK: usize = 32;

/// Room for an `FtraceEvent`'s `timestamp` and `pid` fields: two one-byte keys and two
/// varints, and room for the ten-byte window in which a long varint is written.
const HEAD_BYTES: usize = 24;

/// An `FtraceEvent`'s `timestamp` and `pid` fields, encoded: the same for every event of
/// a CPU while its time and current task stay, as they do for the several events of one
/// update (a task's and its queue's PELT and util_est).
#[derive(Debug, Clone, Copy, Default)]
struct Head {
    /// The bytes, `len` of them meaningful.
    bytes: [u8; HEAD_BYTES],
    /// 0 before the first event (a head takes at least four bytes).
    len: usize,
    ts: Nanos,
    pid: u32,
}

impl Head {
    /// The head of an event at `ctx`.
    fn of(ctx: &Ctx<'_>) -> Head {
        let mut bytes = [0u8; HEAD_BYTES];
        let mut e = Enc::new(&mut bytes);
        e.byte(key1(ev::TIMESTAMP, 0));
        e.varint(ctx.ts);
        e.byte(key1(ev::PID, 0));
        e.varint(u64::from(ctx.pid));
        let len = e.pos();
        Head {
            bytes,
            len,
            ts: ctx.ts,
            pid: ctx.pid,
        }
    }
}

/// One CPU's `FtraceEventBundle.event` fields not yet written: `buf[..used]`. The rest of
/// `buf` is room (zeroed when allocated, then scratch), so an event is written in place
/// without a `Vec` capacity check or length update per byte.
#[derive(Debug, Default)]
struct Bundle {
    buf: Vec<u8>,
    used: usize,
    /// The last event's timestamp and pid fields.
    head: Head,
}

impl Bundle {
    /// The events written and not yet flushed.
    fn events(&self) -> &[u8] {
        &self.buf[..self.used]
    }

    /// Appends the `FtraceEventBundle.event` field of `ev` at `ctx` and returns the bytes
    /// now held. `text` is what [`format_text`] made of `ev` if [`has_text`]`(ev)`.
    ///
    /// The body's length is counted first ([`Sizer`]), so both lengths in front of it
    /// are written at their true widths and every byte once ([`Enc`]).
    #[inline(always)]
    fn push(&mut self, ctx: &Ctx<'_>, ev: &TraceEvent<'_>, text: &[u8]) -> usize {
        let mut size = Sizer::default();
        encode_body(&mut size, text, ev);
        let body_len = size.0 as u64;
        let tag_key = (u64::from(field_of(ev)) << 3) | WT_LEN;
        if self.head.len == 0 || self.head.ts != ctx.ts || self.head.pid != ctx.pid {
            self.head = Head::of(ctx);
        }
        debug_assert_eq!(self.head.bytes, Head::of(ctx).bytes, "a stale head");
        let head = self.head;
        // FtraceEvent: timestamp and pid, then the body behind its key and length.
        let len = (head.len + varint_len(tag_key) + varint_len(body_len)) as u64 + body_len;
        let total = 1 + varint_len(len) + len as usize;
        let end = self.used + total;
        if self.buf.len() < end + SLACK {
            self.grow(end + SLACK);
        }
        let mut e = Enc::new(&mut self.buf[self.used..end + SLACK]);
        e.byte(key1(bundle::EVENT, WT_LEN));
        e.varint(len);
        e.fixed_prefix(&head.bytes, head.len);
        e.varint(tag_key);
        e.varint(body_len);
        encode_body(&mut e, text, ev);
        debug_assert_eq!(e.pos(), total, "Sizer and Enc disagree");
        self.used = end;
        end
    }

    /// Grows the room to at least `len` bytes, and to a bundle's worth at first.
    #[cold]
    #[inline(never)]
    fn grow(&mut self, len: usize) {
        self.buf.resize(len.max(BUNDLE_BYTES + 1024), 0);
    }
}

/// A bundle's events handed to the writer from the bundle's own buffer: `events[..len]`,
/// after the bytes of the output buffer up to `after`.
#[derive(Debug)]
struct Segment {
    after: usize,
    events: Vec<u8>,
    len: usize,
}

/// Bundles of fewer event bytes are copied into the output buffer rather than handed over
/// (the few at the end of a run, or of a short one).
const COPY_BYTES: usize = 4096;

/// Pieces of output given to one `write_vectored` call: below Linux's `IOV_MAX` (1024).
const MAX_SLICES: usize = 64;

/// Pieces of output gathered for `write_vectored` calls of up to [`MAX_SLICES`] each.
struct Gather<'a, W: Write> {
    out: &'a mut W,
    slices: [IoSlice<'a>; MAX_SLICES],
    n: usize,
    /// The first error; later pieces are dropped.
    result: io::Result<()>,
}

impl<'a, W: Write> Gather<'a, W> {
    /// Adds `piece`, writing the pieces gathered first if there is no room for it.
    fn push(&mut self, piece: &'a [u8]) {
        if piece.is_empty() || self.result.is_err() {
            return;
        }
        if self.n == MAX_SLICES {
            self.result = write_all_vectored(self.out, &mut self.slices[..self.n]);
            self.n = 0;
        }
        self.slices[self.n] = IoSlice::new(piece);
        self.n += 1;
    }

    /// Writes the pieces left; returns the first error.
    fn finish(mut self) -> io::Result<()> {
        if self.result.is_ok() && self.n > 0 {
            self.result = write_all_vectored(self.out, &mut self.slices[..self.n]);
        }
        self.result
    }
}

/// Writes all of `slices`, as `Write::write_all` does for one (a write of 0 bytes is an
/// error, an interrupted one is retried).
fn write_all_vectored<W: Write>(out: &mut W, mut slices: &mut [IoSlice<'_>]) -> io::Result<()> {
    while !slices.is_empty() {
        match out.write_vectored(slices) {
            Ok(0) => {
                return Err(io::Error::new(
                    io::ErrorKind::WriteZero,
                    "failed to write whole buffer",
                ))
            }
            Ok(n) => IoSlice::advance_slices(&mut slices, n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// A [`TraceSink`] that writes a Perfetto protobuf trace, as described in the
/// [module documentation](self).
///
/// Packets are encoded into internal buffers without allocating per event and handed to
/// the writer in blocks of about 256 KiB (one `write_vectored` call each: a full CPU
/// bundle is handed over from its own buffer, not copied), so `W` need not be buffered. Error handling is
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
    /// Pending output: the bytes of `Trace.packet` fields but for the events of the
    /// bundles in `segments`, which go between the pieces of `buf` that `segments` marks.
    buf: Vec<u8>,
    /// Pending output, in order after the bytes of `buf` before each.
    segments: Vec<Segment>,
    /// Bytes of events in `segments`.
    segment_bytes: usize,
    /// Bundle buffers written out, to reuse.
    spare: Vec<Vec<u8>>,
    /// Per CPU, the encoded `FtraceEventBundle.event` fields not yet written.
    cpus: Vec<Bundle>,
    /// Scratch: a message to nest (a clock, a process-tree entry).
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
    /// `interest == Interest::ALL`: every event is written, `record` skips `wanted`.
    all: bool,
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
            segments: Vec::new(),
            segment_bytes: 0,
            spare: Vec::new(),
            cpus: Vec::new(),
            body: Vec::new(),
            text: Vec::new(),
            packet: Vec::new(),
            nested: Vec::new(),
            tgid: BTreeMap::new(),
            current: Vec::new(),
            interest: Interest::ALL,
            all: true,
            nr_cpus: 0,
            error: None,
        }
    }

    /// Restricts the sink to the given event groups. Events outside them are skipped even
    /// if the engine sends them.
    pub fn with_interest(mut self, interest: Interest) -> Self {
        self.interest = interest;
        self.all = interest == Interest::ALL;
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
        if self.buf.len() + self.segment_bytes >= FLUSH_THRESHOLD {
            self.write_buf();
        }
    }

    /// Writes CPU `cpu`'s pending events as one `FtraceEventBundle` packet: its head
    /// into the output buffer, then the events, whole, from the bundle's own buffer
    /// (handed over, a spare one taking its place) or, if fewer than [`COPY_BYTES`],
    /// copied.
    fn flush_bundle(&mut self, cpu: usize) {
        let Some(used) = self.cpus.get(cpu).map(|b| b.used) else {
            return;
        };
        if used == 0 {
            return;
        }
        let cpu_field = 1 + varint_len(cpu as u64);
        let bundle_len = cpu_field + used;
        let seq_field = 1 + varint_len(SEQUENCE_ID);
        let packet_len = 1 + varint_len(bundle_len as u64) + bundle_len + seq_field;
        push_key(&mut self.buf, trace::PACKET, WT_LEN);
        push_varint(&mut self.buf, packet_len as u64);
        push_key(&mut self.buf, packet::FTRACE_EVENTS, WT_LEN);
        push_varint(&mut self.buf, bundle_len as u64);
        push_uint(&mut self.buf, bundle::CPU, cpu as u64);
        let b = &mut self.cpus[cpu];
        if used < COPY_BYTES {
            self.buf.extend_from_slice(b.events());
        } else {
            let room = self.spare.pop().unwrap_or_default();
            let events = std::mem::replace(&mut b.buf, room);
            self.segments.push(Segment {
                after: self.buf.len(),
                events,
                len: used,
            });
            self.segment_bytes += used;
        }
        b.used = 0;
        push_uint(
            &mut self.buf,
            packet::TRUSTED_PACKET_SEQUENCE_ID,
            SEQUENCE_ID,
        );
        if self.buf.len() + self.segment_bytes >= FLUSH_THRESHOLD {
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

    /// Hands the pending output to the writer, in `write_vectored` calls of up to
    /// [`MAX_SLICES`] pieces; records an error instead of returning it. The bundle
    /// buffers written become spares.
    fn write_buf(&mut self) {
        if self.buf.is_empty() && self.segments.is_empty() {
            return;
        }
        if self.error.is_none() {
            if let Some(out) = self.out.as_mut() {
                let mut g = Gather {
                    out,
                    slices: [IoSlice::new(&[]); MAX_SLICES],
                    n: 0,
                    result: Ok(()),
                };
                let mut start = 0;
                for seg in &self.segments {
                    g.push(&self.buf[start..seg.after]);
                    g.push(&seg.events[..seg.len]);
                    start = seg.after;
                }
                g.push(&self.buf[start..]);
                if let Err(e) = g.finish() {
                    self.error = Some(e);
                }
            }
        }
        self.buf.clear();
        self.spare.extend(self.segments.drain(..).map(|s| s.events));
        self.segment_bytes = 0;
    }
}

impl<W: Write> TraceSink for PerfettoSink<W> {
    fn interest(&self) -> Interest {
        self.interest
    }

    /// Writes the clock snapshot: BOOTTIME and MONOTONIC both at `start_ns`.
    fn begin(&mut self, nr_cpus: usize, start_ns: Nanos) {
        self.nr_cpus = nr_cpus;
        self.cpus.resize_with(nr_cpus, Bundle::default);
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
        debug_assert_eq!(self.all, self.interest == Interest::ALL);
        if self.error.is_some() || (!self.all && !wanted(&self.interest, ev)) {
            return;
        }
        self.track_tasks(ctx, ev);
        let cpu = ctx.cpu as usize;
        if self.cpus.len() <= cpu {
            self.cpus.resize_with(cpu + 1, Bundle::default);
        }
        if has_text(ev) {
            format_text(&mut self.text, self.nr_cpus, ev);
        }
        if self.cpus[cpu].push(ctx, ev, &self.text) >= BUNDLE_BYTES {
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

/// The writers' test sequence of events (`tests/common`), for the tests below.
#[cfg(test)]
#[path = "../tests/common/mod.rs"]
#[allow(dead_code, unreachable_pub, missing_docs)]
mod test_feed;

#[cfg(test)]
mod tests {
    //! Every event's bytes against a reference encoder: the writer's former one, which
    //! encodes each body into its own `Vec` and nests it behind its length (no sizes
    //! computed ahead), over the writers' test sequence (every event and marker) and
    //! edge cases (long strings, negative and 64-bit values, every varint width).

    use super::*;
    use crate::ftrace::event_name;
    use crate::proto::push_int;
    use hetsched_core::trace::{Interest, RtappMarker};

    use super::test_feed as common;

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
    fn ref_typed_task(body: &mut Vec<u8>, t: &TaskRef<'_>) {
        push_str(body, 1, t.comm);
        push_int(body, 2, i64::from(t.pid));
        push_int(body, 3, i64::from(t.prio));
    }

    /// Encodes the body of `ev` into `body` and returns its field number in `FtraceEvent`.
    /// `nr_cpus` sets the width of `sched_overutilized`'s span as in the text trace.
    fn ref_body(
        body: &mut Vec<u8>,
        text: &mut Vec<u8>,
        nr_cpus: usize,
        ev: &TraceEvent<'_>,
    ) -> u32 {
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
                ref_typed_task(body, &task);
                push_int(body, 5, i64::from(target_cpu));
                return ev::SCHED_WAKING;
            }
            TraceEvent::SchedWakeup { task, target_cpu } => {
                ref_typed_task(body, &task);
                push_int(body, 5, i64::from(target_cpu));
                return ev::SCHED_WAKEUP;
            }
            TraceEvent::SchedWakeupNew { task, target_cpu } => {
                ref_typed_task(body, &task);
                push_int(body, 5, i64::from(target_cpu));
                return ev::SCHED_WAKEUP_NEW;
            }
            TraceEvent::SchedMigrateTask {
                task,
                orig_cpu,
                dest_cpu,
            } => {
                ref_typed_task(body, &task);
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
            TraceEvent::CpufreqInteractiveBoost { s }
            | TraceEvent::CpufreqInteractiveUnboost { s } => {
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

    /// The reference encoding of `ev`'s `FtraceEventBundle.event` field at `ctx`.
    fn reference(ctx: &Ctx<'_>, ev: &TraceEvent<'_>, nr_cpus: usize) -> Vec<u8> {
        let mut body = Vec::new();
        let mut text = Vec::new();
        let tag = ref_body(&mut body, &mut text, nr_cpus, ev);
        assert_eq!(tag, field_of(ev));
        let mut event = Vec::new();
        push_uint(&mut event, ev::TIMESTAMP, ctx.ts);
        push_uint(&mut event, ev::PID, u64::from(ctx.pid));
        push_bytes(&mut event, tag, &body);
        let mut out = Vec::new();
        push_bytes(&mut out, bundle::EVENT, &event);
        out
    }

    /// A sink that checks each event's bytes from [`Bundle::push`] against
    /// [`reference`].
    #[derive(Default)]
    struct Check {
        nr_cpus: usize,
        text: Vec<u8>,
        events: usize,
    }

    impl TraceSink for Check {
        fn interest(&self) -> Interest {
            Interest::ALL
        }
        fn begin(&mut self, nr_cpus: usize, _: Nanos) {
            self.nr_cpus = nr_cpus;
        }
        fn record(&mut self, ctx: &Ctx<'_>, ev: &TraceEvent<'_>) {
            if has_text(ev) {
                format_text(&mut self.text, self.nr_cpus, ev);
            }
            // Twice into one bundle: the second event is written after the first's.
            let mut b = Bundle::default();
            let one = b.push(ctx, ev, &self.text);
            assert_eq!(b.push(ctx, ev, &self.text), 2 * one);
            let want = reference(ctx, ev, self.nr_cpus);
            assert_eq!(&b.events()[..one], want, "{ev:?}");
            assert_eq!(&b.events()[one..], want, "{ev:?}");
            self.events += 1;
        }
    }

    #[test]
    fn every_event_encodes_as_the_reference() {
        let mut check = Check::default();
        common::feed(&mut check);
        assert!(check.events >= 30);
        check.begin(3, 0);
        let long = "c".repeat(200);
        let longer = "d".repeat(20_000);
        let span = [u64::MAX, 5];
        for (comm, pid, prio) in [
            ("", 0, 0),
            ("x", 127, -1),
            ("small-0", 128, 120),
            (long.as_str(), u32::MAX, i32::MIN),
            (longer.as_str(), 16_384, i32::MAX),
        ] {
            let task = TaskRef { comm, pid, prio };
            for v in [
                0,
                1,
                127,
                128,
                16_383,
                16_384,
                2_097_151,
                2_097_152,
                1 << 35,
                (1 << 56) - 1,
                1 << 56,
                (1 << 63) - 1,
                1 << 63,
                u64::MAX,
            ] {
                let s = v as i64;
                let w = v as u32;
                let ctx = Ctx {
                    ts: v,
                    cpu: 1,
                    comm,
                    pid: w,
                };
                let events = [
                    TraceEvent::SchedSwitch {
                        prev: task,
                        prev_state: w,
                        next: task,
                    },
                    TraceEvent::SchedWaking {
                        task,
                        target_cpu: w,
                    },
                    TraceEvent::SchedWakeupNew {
                        task,
                        target_cpu: w,
                    },
                    TraceEvent::SchedMigrateTask {
                        task,
                        orig_cpu: w,
                        dest_cpu: w,
                    },
                    TraceEvent::TaskRename {
                        pid: w,
                        oldcomm: comm,
                        newcomm: comm,
                    },
                    TraceEvent::SchedProcessExit { task },
                    TraceEvent::SchedPiSetprio {
                        task,
                        oldprio: s as i32,
                        newprio: prio,
                    },
                    TraceEvent::CpuFrequency {
                        cpu_id: w,
                        state: v,
                    },
                    TraceEvent::CpuIdle {
                        cpu_id: w,
                        state: s as i32,
                    },
                    TraceEvent::CpufreqSchedThrottled { rem: s },
                    TraceEvent::SchedPeltSe {
                        cpu: w,
                        task,
                        load: v,
                        rbl_load: v,
                        util: v,
                        update_time: v,
                    },
                    TraceEvent::SchedUtilEstSe {
                        cpu: w,
                        task,
                        enqueued: v,
                        ewma: v,
                        util: v,
                    },
                    TraceEvent::SchedHmpMigrate {
                        task,
                        dest: w,
                        force: w,
                    },
                    TraceEvent::SchedTaskRunnableRatio { task, ratio: v },
                    TraceEvent::CpufreqSchedUpdateCapacity {
                        cpu: w,
                        request: v & 1 == 1,
                        cfs: v,
                        rt: v,
                        dl: v,
                        total: v,
                        new_total: v,
                    },
                    TraceEvent::SchedOverutilized {
                        overutilized: true,
                        span: &span,
                    },
                    TraceEvent::Print(RtappMarker::Main {
                        event: comm,
                        data: s,
                    }),
                ];
                for ev in &events {
                    check.record(&ctx, ev);
                }
            }
        }
    }

    /// A writer that takes at most 7 bytes a call, and of one slice only.
    struct Trickle(Vec<u8>);

    impl Write for Trickle {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            let n = buf.len().min(7);
            self.0.extend_from_slice(&buf[..n]);
            Ok(n)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn short_writes_give_the_same_bytes() {
        // Enough events for full bundles handed over whole, several output blocks, and
        // small bundles copied at the end.
        fn feed_many(sink: &mut dyn TraceSink) {
            sink.begin(3, 0);
            for i in 0..60_000u64 {
                let task = TaskRef {
                    comm: "small-0",
                    pid: 1000 + (i % 5) as u32,
                    prio: 120,
                };
                let ctx = Ctx {
                    ts: 1_000_000 + i * 10,
                    cpu: (i % 3) as u32,
                    comm: task.comm,
                    pid: task.pid,
                };
                sink.record(
                    &ctx,
                    &TraceEvent::SchedUtilEstSe {
                        cpu: ctx.cpu,
                        task,
                        enqueued: i,
                        ewma: i / 2,
                        util: i % 1024,
                    },
                );
            }
            sink.end(2_000_000);
        }
        let mut a = PerfettoSink::new(Vec::new());
        feed_many(&mut a);
        let a = a.into_inner().expect("Vec writer");
        let mut b = PerfettoSink::new(Trickle(Vec::new()));
        feed_many(&mut b);
        let b = b.into_inner().expect("Trickle writer").0;
        assert!(a.len() > 40 * BUNDLE_BYTES, "{} bytes", a.len());
        assert!(a == b, "{} and {} bytes differ", a.len(), b.len());
    }

    #[test]
    fn varint_lengths_as_the_reference() {
        for shift in 0..64 {
            for v in [1u64 << shift, (1u64 << shift) - 1, (1u64 << shift) + 1] {
                let mut want = Vec::new();
                push_varint(&mut want, v);
                let mut s = Sizer::default();
                s.varint(v);
                assert_eq!(s.0, want.len(), "{v}");
                let mut buf = [0u8; 32];
                let mut e = Enc::new(&mut buf);
                e.varint(v);
                assert_eq!(&buf[..want.len()], want, "{v}");
                // At the end of the room too.
                let mut buf = vec![0u8; want.len()];
                let mut e = Enc::new(&mut buf);
                e.varint(v);
                assert_eq!(e.pos(), want.len());
                assert_eq!(buf, want, "{v}");
            }
        }
    }
}
