//! The encoding of one event: Perfetto's field numbers for the messages the writer
//! emits and each event's body, in the dense layout or the legacy one (whose constant
//! field heads are built in [`super::legacy`])
//! (`Bundle::push()`: one match on the event, each arm bounding its body and then
//! writing it once; see the parent module).

use hetsched_core::trace::{Ctx, InteractiveEval, TaskRef, TraceEvent};

use crate::fmt;
use crate::ftrace::{event_name, format_marker};
use crate::proto::{key1, Enc, Out, Sizer, WT_LEN};

use super::dense::{self, FIRST_ID};
use super::legacy::{
    const_field, field_head, fixed_with, g_task, generic, gi, gs, gu, join, name_cpu_field,
    name_field,
};
use super::window::{Bound, Put, Win, WIN};
use super::{short_bound, Bundle, PREFIX_BYTES};

/// `Trace` (trace.proto).
pub(super) mod trace {
    /// `repeated TracePacket packet = 1`.
    pub(in crate::perfetto) const PACKET: u32 = 1;
}

/// `TracePacket` (trace_packet.proto).
pub(super) mod packet {
    /// `FtraceEventBundle ftrace_events = 1`.
    pub(in crate::perfetto) const FTRACE_EVENTS: u32 = 1;
    /// `ProcessTree process_tree = 2`.
    pub(in crate::perfetto) const PROCESS_TREE: u32 = 2;
    /// `ClockSnapshot clock_snapshot = 6`.
    pub(in crate::perfetto) const CLOCK_SNAPSHOT: u32 = 6;
    /// `uint64 timestamp = 8`.
    pub(in crate::perfetto) const TIMESTAMP: u32 = 8;
    /// `uint32 trusted_packet_sequence_id = 10`.
    pub(in crate::perfetto) const TRUSTED_PACKET_SEQUENCE_ID: u32 = 10;
}

/// `ClockSnapshot` and `BuiltinClock` (clock_snapshot.proto, builtin_clock.proto).
pub(super) mod clock {
    /// `repeated Clock clocks = 1`.
    pub(in crate::perfetto) const CLOCKS: u32 = 1;
    /// `BuiltinClock primary_trace_clock = 2`.
    pub(in crate::perfetto) const PRIMARY_TRACE_CLOCK: u32 = 2;
    /// `Clock.clock_id = 1`.
    pub(in crate::perfetto) const CLOCK_ID: u32 = 1;
    /// `Clock.timestamp = 2`.
    pub(in crate::perfetto) const TIMESTAMP: u32 = 2;
    /// `BUILTIN_CLOCK_MONOTONIC`.
    pub(in crate::perfetto) const MONOTONIC: u64 = 3;
    /// `BUILTIN_CLOCK_BOOTTIME`, the clock ftrace events are in by default.
    pub(in crate::perfetto) const BOOTTIME: u64 = 6;
}

/// `ProcessTree` (ps/process_tree.proto).
pub(super) mod ps {
    /// `repeated Process processes = 1`.
    pub(in crate::perfetto) const PROCESSES: u32 = 1;
    /// `repeated Thread threads = 2`.
    pub(in crate::perfetto) const THREADS: u32 = 2;
    /// `Process.pid = 1`.
    pub(in crate::perfetto) const PROCESS_PID: u32 = 1;
    /// `Process.cmdline = 3` (repeated string).
    pub(in crate::perfetto) const PROCESS_CMDLINE: u32 = 3;
    /// `Thread.tid = 1`.
    pub(in crate::perfetto) const THREAD_TID: u32 = 1;
    /// `Thread.name = 2`.
    pub(in crate::perfetto) const THREAD_NAME: u32 = 2;
    /// `Thread.tgid = 3`.
    pub(in crate::perfetto) const THREAD_TGID: u32 = 3;
}

/// `FtraceEventBundle` (ftrace/ftrace_event_bundle.proto).
pub(super) mod bundle {
    /// `uint32 cpu = 1`.
    pub(in crate::perfetto) const CPU: u32 = 1;
    /// `repeated FtraceEvent event = 2`.
    pub(in crate::perfetto) const EVENT: u32 = 2;
}

/// `FtraceEvent` (ftrace/ftrace_event.proto): common fields and the `event` oneof.
pub(super) mod ev {
    /// `uint64 timestamp = 1` (ns).
    pub(in crate::perfetto) const TIMESTAMP: u32 = 1;
    /// `uint32 pid = 2`: the task current on the CPU.
    pub(in crate::perfetto) const PID: u32 = 2;
    pub(in crate::perfetto) const PRINT: u32 = 3;
    pub(in crate::perfetto) const SCHED_SWITCH: u32 = 4;
    pub(in crate::perfetto) const CPU_FREQUENCY: u32 = 11;
    pub(in crate::perfetto) const CPU_IDLE: u32 = 13;
    pub(in crate::perfetto) const SCHED_WAKEUP: u32 = 17;
    pub(in crate::perfetto) const SCHED_WAKING: u32 = 20;
    pub(in crate::perfetto) const SCHED_WAKEUP_NEW: u32 = 114;
    pub(in crate::perfetto) const TASK_RENAME: u32 = 236;
    pub(in crate::perfetto) const SCHED_PROCESS_EXIT: u32 = 238;
    pub(in crate::perfetto) const GENERIC: u32 = 327;
    pub(in crate::perfetto) const SCHED_PI_SETPRIO: u32 = 353;
    pub(in crate::perfetto) const SCHED_MIGRATE_TASK: u32 = 491;
}

/// The index in [`dense::EVENTS`] of `ev`, if it is one of them (an event with no typed
/// message), by its name ([`event_name`]).
pub(super) fn dense_index(ev: &TraceEvent<'_>) -> Option<usize> {
    let name = event_name(ev);
    dense::EVENTS.iter().position(|g| g.name == name)
}

/// The field number of `ev` in `FtraceEvent`: its typed message, or, for an event with
/// none, `generic` or, with `dense`, its own ([`dense`]).
pub(super) fn field_of(ev: &TraceEvent<'_>, dense: bool) -> u32 {
    if dense {
        if let Some(i) = dense_index(ev) {
            // Below 19.
            return FIRST_ID + i as u32;
        }
    }
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

/// Field 2 of a dense task event, `path` = `(null)` (a task's, as the text has it).
const NULL_PATH: [u8; 8] = [key1(2, WT_LEN), 6, b'(', b'n', b'u', b'l', b'l', b')'];

/// Field 2 of a dense queue event, `path` = `/` (the root group's).
const ROOT_PATH: [u8; 3] = [key1(2, WT_LEN), 1, b'/'];

/// `N` bytes: field 1 (`cpu`) of a CPU below 128, its value a placeholder, then `rest`.
const fn cpu_then<const R: usize, const N: usize>(rest: [u8; R]) -> [u8; N] {
    assert!(N == 2 + R, "the key, the CPU and the rest");
    let mut a = [0u8; N];
    a[0] = key1(1, 0);
    let mut i = 0;
    while i < R {
        a[2 + i] = rest[i];
        i += 1;
    }
    a
}

/// Field 1 (`cpu`) of a CPU below 128, then [`NULL_PATH`]: one constant.
const CPU_NULL_PATH: [u8; 10] = cpu_then(NULL_PATH);

/// Field 1 (`cpu`) of a CPU below 128, then [`ROOT_PATH`]: one constant.
const CPU_ROOT_PATH: [u8; 5] = cpu_then(ROOT_PATH);

/// Field 1, `cpu`, then `path` (`path_field`, or `cpu_path` with the CPU's byte set: one
/// constant written at once, for a CPU below 128, a one-byte varint).
#[inline(always)]
fn dense_cpu_path<O: Put, const P: usize, const N: usize>(
    o: &mut O,
    cpu: u32,
    path_field: &[u8; P],
    cpu_path: &[u8; N],
) {
    debug_assert!(cpu_path[2..] == path_field[..] && cpu_path[0] == key1(1, 0));
    if cpu < 0x80 {
        let mut c = *cpu_path;
        // Below 0x80: its one-byte varint.
        c[1] = cpu as u8;
        o.fixed(&c);
    } else {
        t_int(o, 1, i64::from(cpu));
        o.fixed(path_field);
    }
}

/// Fields 1 to 4 of a dense task event of LISA's (`sched_pelt_se`, `sched_util_est_se`):
/// `cpu`, `path`, `comm`, `pid`.
#[inline(always)]
fn dense_task<O: Put>(o: &mut O, cpu: u32, t: TaskRef<'_>) {
    dense_cpu_path(o, cpu, &NULL_PATH, &CPU_NULL_PATH);
    t_str(o, 3, t.comm);
    t_int(o, 4, i64::from(t.pid));
}

/// Fields 1 and 2 of a dense queue event of LISA's (`sched_pelt_cfs`,
/// `sched_util_est_cfs`): `cpu`, `path`.
#[inline(always)]
fn dense_root<O: Put>(o: &mut O, cpu: u32) {
    dense_cpu_path(o, cpu, &ROOT_PATH, &CPU_ROOT_PATH);
}

/// A typed message's string field `field` (below 16).
#[inline(always)]
pub(super) fn t_str<O: Put>(o: &mut O, field: u32, s: &str) {
    o.key_bytes(key1(field, WT_LEN), s.as_bytes());
}

/// A typed message's signed (`int32`/`int64`) field `field` (below 16).
#[inline(always)]
pub(super) fn t_int<O: Put>(o: &mut O, field: u32, v: i64) {
    // Two's complement over 64 bits: -1 is ten bytes.
    o.key_varint(key1(field, 0), v as u64);
}

/// A typed message's unsigned field `field` (below 16).
#[inline(always)]
pub(super) fn t_uint<O: Put>(o: &mut O, field: u32, v: u64) {
    o.key_varint(key1(field, 0), v);
}

/// `comm`/`pid`/`prio` at field numbers 1, 2, 3 (sched_wakeup(_new),
/// sched_migrate_task).
#[inline(always)]
pub(super) fn typed_task<O: Put>(o: &mut O, t: TaskRef<'_>) {
    t_str(o, 1, t.comm);
    t_int(o, 2, i64::from(t.pid));
    t_int(o, 3, i64::from(t.prio));
}

/// The fields of `sched_waking`, `sched_wakeup` and `sched_wakeup_new`: the task's,
/// then `target_cpu` at 5.
#[inline(always)]
pub(super) fn typed_wakeup<O: Put>(o: &mut O, t: TaskRef<'_>, target_cpu: u32) {
    typed_task(o, t);
    t_int(o, 5, i64::from(target_cpu));
}

/// Scratch for the text parts of events ([`format_text`]): a print's `buf`, and the last
/// `sched_overutilized` span's `0x…` value, kept with the span and width it was formatted
/// from (consecutive overutilized events mostly name the same span, the root domain's).
#[derive(Debug, Default)]
pub(super) struct Text {
    /// A print's `buf`.
    print: Vec<u8>,
    /// `span`'s `0x…`, `span_bits` wide, when `span_bits` is `Some`.
    span_text: Vec<u8>,
    /// The span words `span_text` was formatted from.
    span: Vec<u64>,
    /// The width `span_text` was formatted at; `None` before the first span.
    span_bits: Option<usize>,
}

/// Formats `span` as `sched_overutilized`'s `span=0x…` value (`%*pb` of the root
/// domain's span, `nr_bits` wide) into `text` (cleared first).
fn format_span(text: &mut Vec<u8>, span: &[u64], nr_bits: usize) {
    text.clear();
    fmt::append(text, |c| {
        c.str(b"0x");
        c.cpumask(span, nr_bits);
    });
}

/// The text part of `ev`: a print's `buf`, which ends in `\n` as the kernel's
/// tracing_mark_write() stores it, or `sched_overutilized`'s `span=0x…` value (`%*pb` of
/// the root domain's span, `nr_cpus` wide as in the text trace), formatted into `text`
/// (a span only if it is not the one formatted last). Other events give nothing.
pub(super) fn format_text<'t>(text: &'t mut Text, nr_cpus: usize, ev: &TraceEvent<'_>) -> &'t [u8] {
    match *ev {
        TraceEvent::Print(marker) => {
            text.print.clear();
            fmt::append(&mut text.print, |c| {
                format_marker(c, &marker);
                c.byte(b'\n');
            });
            &text.print
        }
        TraceEvent::SchedOverutilized { span, .. } => {
            let nr_bits = if nr_cpus == 0 {
                span.len() * 64
            } else {
                nr_cpus
            };
            if text.span_bits != Some(nr_bits) || text.span[..] != span[..] {
                format_span(&mut text.span_text, span, nr_bits);
                text.span.clear();
                text.span.extend_from_slice(span);
                text.span_bits = Some(nr_bits);
            }
            debug_assert!(
                {
                    let mut anew = Vec::new();
                    format_span(&mut anew, span, nr_bits);
                    anew == text.span_text
                },
                "a stale span"
            );
            &text.span_text
        }
        _ => &[],
    }
}

/// Appends the `FtraceEventBundle.event` field of `ev` at `ctx` to the bundle and returns
/// the bytes it now holds and whether `ev` may name a task the process tree does not know
/// (`sched_switch`'s next, `sched_wakeup_new`, `task_rename`), with one match on the
/// event's kind: each arm bounds its body ([`Bound`]) and writes it behind the typed
/// message's field number ([`field_of`]) in a window of the bundle ([`Win`],
/// [`Bundle::open_win`], [`Bundle::close_win`]), or, if too long for one, through an
/// [`Enc`] ([`Bundle::put_long`]): passes of the same fields (the `put!` macro pastes
/// them; debug builds also size them with a [`Sizer`] and check the event's length).
/// `text` is scratch: a print's `buf` and an overutilized span are formatted into it
/// first ([`format_text`]). With `head_set` (a constant at each call), the caller knows
/// the bundle's head to be `ctx`'s already (the second event of a pair), which is then
/// not tested.
impl Bundle {
    #[inline(always)]
    pub(super) fn push(
        &mut self,
        ctx: &Ctx<'_>,
        ev: &TraceEvent<'_>,
        text: &mut Text,
        nr_cpus: usize,
        dense: bool,
        head_set: bool,
    ) -> (usize, bool) {
        // Every arm's head, set before the event's fields are read: the call that sets
        // a new one (one event in four) comes before them, which then stay in registers
        // (read in each arm, they were kept on the stack across it).
        let head = if head_set {
            debug_assert!(
                self.head.ts == ctx.ts && self.head.pid == ctx.pid,
                "a head not set"
            );
            &self.head
        } else {
            Bundle::head_at(&mut self.head, ctx)
        };
        /// Writes the body `$body` of the message at field `$field` of `FtraceEvent`,
        /// `$o` being the [`Out`] in it, an event of kind `$kind` (its index in
        /// [`Widths`](super::Widths)): in a window if its bound ([`Bound`]) fits one,
        /// through an [`Enc`] out of line otherwise.
        macro_rules! put {
            ($names:expr, $field:expr, $kind:expr, |$o:ident| $body:expr) => {{
                debug_assert_eq!($field, field_of(ev, dense), "the arm's field number");
                let mut bound = Bound::default();
                {
                    let $o = &mut bound;
                    $body;
                }
                let guess = &mut self.widths.0[$kind];
                let end = if bound.0 <= short_bound($field) {
                    // Both lengths one byte whatever the values (a constant test for an
                    // event of fixed fields): no guess read or kept.
                    let (mut win, pre) =
                        Bundle::open_win(&mut self.buf, self.used, head, $field, [1, 1]);
                    {
                        let $o: &mut Win<'_> = &mut win;
                        $body;
                    }
                    let (w, pos) = win.into_parts();
                    self.used + Bundle::close_short(w, head, $field, pre, pos - pre)
                } else if bound.0 <= WIN - PREFIX_BYTES {
                    let (mut win, pre) =
                        Bundle::open_win(&mut self.buf, self.used, head, $field, *guess);
                    {
                        let $o: &mut Win<'_> = &mut win;
                        $body;
                    }
                    let (w, pos) = win.into_parts();
                    self.used + Bundle::close_win(w, head, $field, guess, pre, pos - pre)
                } else {
                    Bundle::put_long(
                        &mut self.buf,
                        self.used,
                        head,
                        $field,
                        guess,
                        bound.0,
                        |$o: &mut Enc<'_>| {
                            $body;
                        },
                    )
                };
                debug_assert!(
                    {
                        let mut size = Sizer::default();
                        {
                            let $o = &mut size;
                            $body;
                        }
                        let len = usize::from(head.len)
                            + crate::proto::varint_len((u64::from($field) << 3) | WT_LEN)
                            + crate::proto::varint_len(size.0 as u64)
                            + size.0;
                        size.0 <= bound.0
                            && end - self.used == 1 + crate::proto::varint_len(len as u64) + len
                    },
                    "Sizer, Bound and the encoder disagree"
                );
                self.used = end;
                (end, $names)
            }};
        }
        /// Event `$i` of [`dense::EVENTS`] in the dense encoding: [`put!`] at its own
        /// field number, its fields numbered from 1 (typed-message keys), its kind noted
        /// for the bundle's descriptors.
        macro_rules! dense {
            ($i:expr, $kind:expr, |$o:ident| $body:expr) => {{
                let i = $i;
                self.generic_used |= 1 << i;
                // Below 19.
                put!(false, FIRST_ID + i as u32, $kind, |$o| $body)
            }};
        }
        /// The index of a dense event named by a string literal, as a constant.
        macro_rules! idx {
            ($name:literal) => {{
                const I: usize = dense::index($name);
                I
            }};
        }
        match *ev {
            TraceEvent::SchedSwitch {
                prev,
                prev_state,
                next,
            } => {
                put!(true, ev::SCHED_SWITCH, 0, |o| {
                    t_str(o, 1, prev.comm);
                    t_int(o, 2, i64::from(prev.pid));
                    t_int(o, 3, i64::from(prev.prio));
                    t_int(o, 4, i64::from(prev_state));
                    t_str(o, 5, next.comm);
                    t_int(o, 6, i64::from(next.pid));
                    t_int(o, 7, i64::from(next.prio));
                })
            }
            TraceEvent::SchedWaking { task, target_cpu } => {
                put!(false, ev::SCHED_WAKING, 1, |o| typed_wakeup(
                    o, task, target_cpu
                ))
            }
            TraceEvent::SchedWakeup { task, target_cpu } => {
                put!(false, ev::SCHED_WAKEUP, 2, |o| typed_wakeup(
                    o, task, target_cpu
                ))
            }
            TraceEvent::SchedWakeupNew { task, target_cpu } => {
                put!(true, ev::SCHED_WAKEUP_NEW, 3, |o| typed_wakeup(
                    o, task, target_cpu
                ))
            }
            TraceEvent::SchedMigrateTask {
                task,
                orig_cpu,
                dest_cpu,
            } => {
                put!(false, ev::SCHED_MIGRATE_TASK, 4, |o| {
                    typed_task(o, task);
                    t_int(o, 4, i64::from(orig_cpu));
                    t_int(o, 5, i64::from(dest_cpu));
                })
            }
            TraceEvent::TaskRename {
                pid,
                oldcomm,
                newcomm,
            } => {
                put!(true, ev::TASK_RENAME, 5, |o| {
                    t_int(o, 1, i64::from(pid));
                    t_str(o, 2, oldcomm);
                    t_str(o, 3, newcomm);
                    t_int(o, 4, 0);
                })
            }
            TraceEvent::SchedProcessExit { task } => {
                put!(false, ev::SCHED_PROCESS_EXIT, 6, |o| {
                    t_str(o, 1, task.comm);
                    t_int(o, 2, i64::from(task.pid));
                    t_int(o, 4, i64::from(task.prio));
                })
            }
            TraceEvent::SchedPiSetprio {
                task,
                oldprio,
                newprio,
            } => {
                put!(false, ev::SCHED_PI_SETPRIO, 7, |o| {
                    t_str(o, 1, task.comm);
                    t_int(o, 2, i64::from(newprio));
                    t_int(o, 3, i64::from(oldprio));
                    t_int(o, 4, i64::from(task.pid));
                })
            }
            TraceEvent::CpuFrequency { cpu_id, state } => {
                put!(false, ev::CPU_FREQUENCY, 8, |o| {
                    t_uint(o, 1, state);
                    t_uint(o, 2, u64::from(cpu_id));
                })
            }
            TraceEvent::CpuIdle { cpu_id, state } => {
                put!(false, ev::CPU_IDLE, 9, |o| {
                    // uint32 in the tracepoint and the message: −1 is 4294967295, as in the text.
                    if state == -1 {
                        // The exit's (half of the events): a constant, no five-byte
                        // varint to encode.
                        const EXIT: [u8; 6] = {
                            let mut a = [0xff; 6];
                            a[0] = key1(1, 0);
                            // u32::MAX: four groups of seven ones, then 0x0f.
                            a[5] = 0x0f;
                            a
                        };
                        o.fixed(&EXIT);
                    } else {
                        t_uint(o, 1, u64::from(state as u32));
                    }
                    t_uint(o, 2, u64::from(cpu_id));
                })
            }
            TraceEvent::Print(_) => {
                let text = format_text(text, nr_cpus, ev);
                put!(false, ev::PRINT, 10, |o| {
                    // PrintFtraceEvent.buf = 2.
                    o.key_bytes(key1(2, WT_LEN), text);
                })
            }
            TraceEvent::SchedHmpMigrate { task, dest, force } => {
                if dense {
                    dense!(idx!("sched_hmp_migrate"), 11, |o| {
                        t_str(o, 1, task.comm);
                        t_int(o, 2, i64::from(task.pid));
                        t_int(o, 3, i64::from(dest));
                        t_int(o, 4, i64::from(force));
                    })
                } else {
                    put!(false, ev::GENERIC, 11, |o| {
                        o.fixed(name!("sched_hmp_migrate"));
                        g_task(o, task);
                        gu(o, head!("dest", u), u64::from(dest));
                        gu(o, head!("force", u), u64::from(force));
                    })
                }
            }
            TraceEvent::SchedTaskRunnableRatio { task, ratio } => {
                if dense {
                    dense!(idx!("sched_task_runnable_ratio"), 12, |o| {
                        t_str(o, 1, task.comm);
                        t_int(o, 2, i64::from(task.pid));
                        t_uint(o, 3, ratio);
                    })
                } else {
                    put!(false, ev::GENERIC, 12, |o| {
                        o.fixed(name!("sched_task_runnable_ratio"));
                        g_task(o, task);
                        gu(o, head!("ratio", u), ratio);
                    })
                }
            }
            TraceEvent::CpufreqInteractiveLoadeval {
                cpu_id,
                load,
                curtarg,
                curactual,
                newtarg,
                kind,
            } => {
                if dense {
                    let i = match kind {
                        InteractiveEval::Target => idx!("cpufreq_interactive_target"),
                        InteractiveEval::Already => idx!("cpufreq_interactive_already"),
                        InteractiveEval::NotYet => idx!("cpufreq_interactive_notyet"),
                    };
                    dense!(i, 13, |o| {
                        t_uint(o, 1, u64::from(cpu_id));
                        t_uint(o, 2, load);
                        t_uint(o, 3, curtarg);
                        t_uint(o, 4, curactual);
                        t_uint(o, 5, newtarg);
                    })
                } else {
                    put!(false, ev::GENERIC, 13, |o| {
                        let name = kind.name();
                        o.key_bytes(key1(generic::EVENT_NAME, WT_LEN), name.as_bytes());
                        gu(o, head!("cpu", u), u64::from(cpu_id));
                        gu(o, head!("load", u), load);
                        gu(o, head!("cur", u), curtarg);
                        gu(o, head!("actual", u), curactual);
                        gu(o, head!("targ", u), newtarg);
                    })
                }
            }
            TraceEvent::CpufreqInteractiveSetspeed {
                cpu_id,
                targfreq,
                actualfreq,
            } => {
                if dense {
                    dense!(idx!("cpufreq_interactive_setspeed"), 14, |o| {
                        t_uint(o, 1, u64::from(cpu_id));
                        t_uint(o, 2, targfreq);
                        t_uint(o, 3, actualfreq);
                    })
                } else {
                    put!(false, ev::GENERIC, 14, |o| {
                        name_cpu!(o, "cpufreq_interactive_setspeed", cpu_id);
                        gu(o, head!("targ", u), targfreq);
                        gu(o, head!("actual", u), actualfreq);
                    })
                }
            }
            TraceEvent::CpufreqInteractiveBoost { s } => {
                if dense {
                    dense!(idx!("cpufreq_interactive_boost"), 15, |o| t_str(o, 1, s))
                } else {
                    put!(false, ev::GENERIC, 15, |o| {
                        o.fixed(name!("cpufreq_interactive_boost"));
                        gs(o, head!("s", s), s.as_bytes());
                    })
                }
            }
            TraceEvent::CpufreqInteractiveUnboost { s } => {
                if dense {
                    dense!(idx!("cpufreq_interactive_unboost"), 16, |o| t_str(o, 1, s))
                } else {
                    put!(false, ev::GENERIC, 16, |o| {
                        o.fixed(name!("cpufreq_interactive_unboost"));
                        gs(o, head!("s", s), s.as_bytes());
                    })
                }
            }
            TraceEvent::CpufreqSchedRequestOpp {
                cpu,
                capacity,
                freq_new,
                requested_freq,
            } => {
                if dense {
                    dense!(idx!("cpufreq_sched_request_opp"), 17, |o| {
                        t_uint(o, 1, u64::from(cpu));
                        t_uint(o, 2, capacity);
                        t_uint(o, 3, freq_new);
                        t_uint(o, 4, requested_freq);
                    })
                } else {
                    put!(false, ev::GENERIC, 17, |o| {
                        name_cpu!(o, "cpufreq_sched_request_opp", cpu);
                        gu(o, head!("capacity", u), capacity);
                        gu(o, head!("freq_new", u), freq_new);
                        gu(o, head!("requested_freq", u), requested_freq);
                    })
                }
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
                if dense {
                    dense!(idx!("cpufreq_sched_update_capacity"), 18, |o| {
                        t_uint(o, 1, u64::from(cpu));
                        t_uint(o, 2, u64::from(request));
                        t_uint(o, 3, cfs);
                        t_uint(o, 4, rt);
                        t_uint(o, 5, dl);
                        t_uint(o, 6, total);
                        t_uint(o, 7, new_total);
                    })
                } else {
                    put!(false, ev::GENERIC, 18, |o| {
                        name_cpu!(o, "cpufreq_sched_update_capacity", cpu);
                        gu(o, head!("set_cap", u), u64::from(request));
                        gu(o, head!("cfs", u), cfs);
                        gu(o, head!("rt", u), rt);
                        gu(o, head!("dl", u), dl);
                        gu(o, head!("old_tot", u), total);
                        gu(o, head!("new_tot", u), new_total);
                    })
                }
            }
            TraceEvent::CpufreqSchedThrottled { rem } => {
                if dense {
                    dense!(idx!("cpufreq_sched_throttled"), 19, |o| t_int(o, 1, rem))
                } else {
                    put!(false, ev::GENERIC, 19, |o| {
                        o.fixed(name!("cpufreq_sched_throttled"));
                        gi(o, head!("rem", i), rem);
                    })
                }
            }
            TraceEvent::SchedPeltSe {
                cpu,
                task,
                load,
                rbl_load,
                util,
                update_time,
            } => {
                if dense {
                    dense!(idx!("sched_pelt_se"), 20, |o| {
                        dense_task(o, cpu, task);
                        t_uint(o, 5, load);
                        t_uint(o, 6, rbl_load);
                        t_uint(o, 7, util);
                        o.key_varint_kept(key1(8, 0), update_time, &mut self.update_time);
                    })
                } else {
                    put!(false, ev::GENERIC, 20, |o| {
                        name_cpu_gs!(
                            o,
                            "sched_pelt_se",
                            cpu,
                            "(null)",
                            "comm",
                            task.comm.as_bytes()
                        );
                        gu(o, head!("pid", u), u64::from(task.pid));
                        gu(o, head!("load", u), load);
                        gu(o, head!("rbl_load", u), rbl_load);
                        gu(o, head!("util", u), util);
                        o.short_message_kept(
                            head!("update_time", u),
                            update_time,
                            &mut self.update_time,
                        );
                    })
                }
            }
            TraceEvent::SchedPeltCfs {
                cpu,
                load,
                rbl_load,
                util,
                update_time,
            } => {
                if dense {
                    dense!(idx!("sched_pelt_cfs"), 21, |o| {
                        dense_root(o, cpu);
                        t_uint(o, 3, load);
                        t_uint(o, 4, rbl_load);
                        t_uint(o, 5, util);
                        o.key_varint_kept(key1(6, 0), update_time, &mut self.update_time);
                    })
                } else {
                    put!(false, ev::GENERIC, 21, |o| {
                        name_cpu_gu!(o, "sched_pelt_cfs", cpu, "/", "load", load);
                        gu(o, head!("rbl_load", u), rbl_load);
                        gu(o, head!("util", u), util);
                        o.short_message_kept(
                            head!("update_time", u),
                            update_time,
                            &mut self.update_time,
                        );
                    })
                }
            }
            TraceEvent::SchedPeltRt {
                cpu,
                load,
                rbl_load,
                util,
            } => {
                if dense {
                    dense!(idx!("sched_pelt_rt"), 22, |o| {
                        t_int(o, 1, i64::from(cpu));
                        t_uint(o, 2, load);
                        t_uint(o, 3, rbl_load);
                        t_uint(o, 4, util);
                    })
                } else {
                    put!(false, ev::GENERIC, 22, |o| {
                        name_cpu_gu!(o, "sched_pelt_rt", cpu, "", "load", load);
                        gu(o, head!("rbl_load", u), rbl_load);
                        gu(o, head!("util", u), util);
                    })
                }
            }
            TraceEvent::SchedPeltDl {
                cpu,
                load,
                rbl_load,
                util,
            } => {
                if dense {
                    dense!(idx!("sched_pelt_dl"), 23, |o| {
                        t_int(o, 1, i64::from(cpu));
                        t_uint(o, 2, load);
                        t_uint(o, 3, rbl_load);
                        t_uint(o, 4, util);
                    })
                } else {
                    put!(false, ev::GENERIC, 23, |o| {
                        name_cpu_gu!(o, "sched_pelt_dl", cpu, "", "load", load);
                        gu(o, head!("rbl_load", u), rbl_load);
                        gu(o, head!("util", u), util);
                    })
                }
            }
            TraceEvent::SchedUtilEstSe {
                cpu,
                task,
                enqueued,
                ewma,
                util,
            } => {
                if dense {
                    dense!(idx!("sched_util_est_se"), 24, |o| {
                        dense_task(o, cpu, task);
                        t_uint(o, 5, enqueued);
                        t_uint(o, 6, ewma);
                        t_uint(o, 7, util);
                    })
                } else {
                    put!(false, ev::GENERIC, 24, |o| {
                        name_cpu_gs!(
                            o,
                            "sched_util_est_se",
                            cpu,
                            "(null)",
                            "comm",
                            task.comm.as_bytes()
                        );
                        gu(o, head!("pid", u), u64::from(task.pid));
                        gu(o, head!("enqueued", u), enqueued);
                        gu(o, head!("ewma", u), ewma);
                        gu(o, head!("util", u), util);
                    })
                }
            }
            TraceEvent::SchedUtilEstCfs {
                cpu,
                enqueued,
                ewma,
                util,
            } => {
                if dense {
                    dense!(idx!("sched_util_est_cfs"), 25, |o| {
                        dense_root(o, cpu);
                        t_uint(o, 3, enqueued);
                        t_uint(o, 4, ewma);
                        t_uint(o, 5, util);
                    })
                } else {
                    put!(false, ev::GENERIC, 25, |o| {
                        name_cpu_gu!(o, "sched_util_est_cfs", cpu, "/", "enqueued", enqueued);
                        gu(o, head!("ewma", u), ewma);
                        gu(o, head!("util", u), util);
                    })
                }
            }
            TraceEvent::SchedCpuCapacity {
                cpu,
                capacity,
                capacity_orig,
                capacity_curr,
            } => {
                if dense {
                    dense!(idx!("sched_cpu_capacity"), 26, |o| {
                        t_int(o, 1, i64::from(cpu));
                        t_uint(o, 2, capacity);
                        t_uint(o, 3, capacity_orig);
                        t_uint(o, 4, capacity_curr);
                    })
                } else {
                    put!(false, ev::GENERIC, 26, |o| {
                        name_cpu_gu!(o, "sched_cpu_capacity", cpu, "", "capacity", capacity);
                        gu(o, head!("capacity_orig", u), capacity_orig);
                        gu(o, head!("capacity_curr", u), capacity_curr);
                    })
                }
            }
            TraceEvent::SchedOverutilized { overutilized, .. } => {
                let text = format_text(text, nr_cpus, ev);
                if dense {
                    dense!(idx!("sched_overutilized"), 27, |o| {
                        t_int(o, 1, i64::from(overutilized));
                        o.key_bytes(key1(2, WT_LEN), text);
                    })
                } else {
                    put!(false, ev::GENERIC, 27, |o| {
                        o.fixed(name!("sched_overutilized"));
                        gu(o, head!("overutilized", u), u64::from(overutilized));
                        gs(o, head!("span", s), text);
                    })
                }
            }
        }
    }
}
