//! Every event's bytes against a reference encoder: the writer's former one, which
//! encodes each body into its own `Vec` and nests it behind its length (no sizes
//! computed ahead), over the writers' test sequence (every event and marker) and
//! edge cases (long strings, negative and 64-bit values, every varint width).

use super::encode::*;
use super::legacy::generic;
use super::*;
use crate::fmt;
use crate::ftrace::{event_name, format_marker};
use crate::proto::{push_int, Sizer};
use hetsched_core::trace::{InteractiveEval, Interest, RtappMarker, TaskRef};
use std::io::Write;

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
fn ref_body(body: &mut Vec<u8>, text: &mut Vec<u8>, nr_cpus: usize, ev: &TraceEvent<'_>) -> u32 {
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

/// The reference encoding of `ev`'s `FtraceEventBundle.event` field at `ctx`.
fn reference(ctx: &Ctx<'_>, ev: &TraceEvent<'_>, nr_cpus: usize, dense: bool) -> Vec<u8> {
    let mut body = Vec::new();
    let mut text = Vec::new();
    let mut tag = ref_body(&mut body, &mut text, nr_cpus, ev);
    assert_eq!(tag, field_of(ev, false));
    if dense && tag == ev::GENERIC {
        let i = dense_index(ev).expect("a dense event");
        body = dense_from_generic(&body, &super::dense::EVENTS[i]);
        tag = super::dense::FIRST_ID + i as u32;
        assert_eq!(tag, field_of(ev, true));
    }
    let mut event = Vec::new();
    push_uint(&mut event, ev::TIMESTAMP, ctx.ts);
    push_uint(&mut event, ev::PID, u64::from(ctx.pid));
    push_bytes(&mut event, tag, &body);
    let mut out = Vec::new();
    push_bytes(&mut out, bundle::EVENT, &event);
    out
}

/// A varint at `b[*at..]`, `*at` moved past it.
fn read_varint(b: &[u8], at: &mut usize) -> u64 {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = b[*at];
        *at += 1;
        v |= u64::from(byte & 0x7f) << shift;
        if byte < 0x80 {
            break;
        }
    }
    v
}

/// The fields of a message: (field number, wire type, varint value or bytes).
fn read_fields(b: &[u8]) -> Vec<(u32, u64, u64, &[u8])> {
    let mut at = 0;
    let mut out = Vec::new();
    while at < b.len() {
        let key = read_varint(b, &mut at);
        let (field, wt) = ((key >> 3) as u32, key & 7);
        if wt == WT_LEN {
            let len = read_varint(b, &mut at) as usize;
            out.push((field, wt, 0, &b[at..at + len]));
            at += len;
        } else {
            assert_eq!(wt, 0, "a varint");
            out.push((field, wt, read_varint(b, &mut at), &b[..0]));
        }
    }
    out
}

/// The dense encoding of the `GenericFtraceEvent` body `generic` (the former encoder's):
/// its fields in order, numbered from 1, each with its value's bytes; and a check that
/// its name and fields' names are those of `g`, the descriptor's.
fn dense_from_generic(generic: &[u8], g: &super::dense::Generic) -> Vec<u8> {
    let fields = read_fields(generic);
    assert_eq!(fields[0].0, generic::EVENT_NAME);
    assert_eq!(fields[0].3, g.name.as_bytes());
    assert_eq!(fields.len() - 1, g.fields.len(), "{}", g.name);
    let mut body = Vec::new();
    for (n, (f, (name, ty))) in fields[1..].iter().zip(g.fields).enumerate() {
        assert_eq!(f.0, generic::FIELD);
        let parts = read_fields(f.3);
        assert_eq!((parts[0].0, parts[0].3), (generic::NAME, name.as_bytes()));
        let number = n as u32 + 1;
        match parts[1] {
            (generic::STR_VALUE, _, _, v) => {
                assert_eq!(*ty, super::dense::Ty::S, "{}.{name}", g.name);
                push_bytes(&mut body, number, v);
            }
            (generic::UINT_VALUE | generic::INT_VALUE, _, v, _) => {
                assert_ne!(*ty, super::dense::Ty::S, "{}.{name}", g.name);
                push_uint(&mut body, number, v);
            }
            other => panic!("{other:?}"),
        }
    }
    body
}

/// A sink that checks each event's bytes from [`Bundle::push`] against
/// [`reference`], each event alone in a bundle (twice: the widths of its lengths guessed
/// from nothing, then from itself) and all of them in one bundle (`all`, `want`: the
/// widths guessed from the last event of the same kind, whatever its lengths).
#[derive(Default)]
struct Check {
    /// The dense encoding of generic events ([`super::dense`]).
    dense: bool,
    nr_cpus: usize,
    text: Text,
    events: usize,
    all: Bundle,
    want: Vec<u8>,
}

impl Check {
    /// Checks the bundle of every event against the references.
    fn finish(&self) {
        assert_eq!(self.all.used, self.want.len());
        assert!(self.all.events() == self.want, "the events of one bundle");
    }
}

impl TraceSink for Check {
    fn interest(&self) -> Interest {
        Interest::ALL
    }
    fn begin(&mut self, nr_cpus: usize, _: Nanos) {
        self.nr_cpus = nr_cpus;
    }
    fn record(&mut self, ctx: &Ctx<'_>, ev: &TraceEvent<'_>) {
        // Twice into one bundle: the second event is written after the first's.
        let mut b = Bundle::default();
        let (one, _) = b.push(ctx, ev, &mut self.text, self.nr_cpus, self.dense, false);
        assert_eq!(
            b.push(ctx, ev, &mut self.text, self.nr_cpus, self.dense, false)
                .0,
            2 * one
        );
        let want = reference(ctx, ev, self.nr_cpus, self.dense);
        assert_eq!(&b.events()[..one], want, "{ev:?}");
        assert_eq!(&b.events()[one..], want, "{ev:?}");
        let kinds = b.generic_used;
        assert_eq!(
            kinds,
            dense_index(ev).filter(|_| self.dense).map_or(0, |i| 1 << i),
            "{ev:?}"
        );
        self.all
            .push(ctx, ev, &mut self.text, self.nr_cpus, self.dense, false);
        self.want.extend_from_slice(&want);
        self.events += 1;
    }
}

#[test]
fn every_event_encodes_as_the_reference() {
    every_event_encodes_as_the_reference_in(false);
}

#[test]
fn every_event_encodes_as_the_reference_in_the_dense_encoding() {
    every_event_encodes_as_the_reference_in(true);
}

fn every_event_encodes_as_the_reference_in(dense: bool) {
    let mut check = Check {
        dense,
        ..Check::default()
    };
    common::feed(&mut check);
    assert!(check.events >= 30);
    check.begin(3, 0);
    let long = "c".repeat(200);
    let longer = "d".repeat(20_000);
    let span = [u64::MAX, 5];
    // Comms of every length up to 100: events whose bound is around `short_bound()`,
    // with lengths of one byte or more.
    let sweep: Vec<String> = (2..=100).map(|n| "e".repeat(n)).collect();
    let tasks = [
        ("", 0, 0),
        ("x", 127, -1),
        ("small-0", 128, 120),
        (long.as_str(), u32::MAX, i32::MIN),
        (longer.as_str(), 16_384, i32::MAX),
    ]
    .into_iter()
    .chain(sweep.iter().map(|c| (c.as_str(), 300, 120)));
    for (comm, pid, prio) in tasks {
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
                TraceEvent::SchedPeltRt {
                    cpu: w,
                    load: v,
                    rbl_load: v,
                    util: v,
                },
                TraceEvent::SchedPeltDl {
                    cpu: w,
                    load: v,
                    rbl_load: v,
                    util: v,
                },
                TraceEvent::CpufreqInteractiveLoadeval {
                    cpu_id: w,
                    load: v,
                    curtarg: v,
                    curactual: v,
                    newtarg: v,
                    kind: [
                        InteractiveEval::Target,
                        InteractiveEval::Already,
                        InteractiveEval::NotYet,
                    ][(v % 3) as usize],
                },
                TraceEvent::CpufreqInteractiveSetspeed {
                    cpu_id: w,
                    targfreq: v,
                    actualfreq: v,
                },
                TraceEvent::CpufreqInteractiveBoost { s: "on" },
                TraceEvent::CpufreqInteractiveUnboost { s: "pulse" },
                TraceEvent::CpufreqSchedRequestOpp {
                    cpu: w,
                    capacity: v,
                    freq_new: v,
                    requested_freq: v,
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
    check.finish();
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

#[test]
fn a_pair_gives_the_bytes_of_two_records() {
    // PELT pairs over full bundles (a bundle filling at the first event of a pair or at
    // the second), a current task changing under them, and other pairs; in both layouts.
    fn feed(sink: &mut dyn TraceSink, pairs: bool) {
        sink.begin(3, 0);
        for i in 0..40_000u64 {
            let task = TaskRef {
                comm: "small-0",
                pid: 1000 + (i % 5) as u32,
                prio: 120,
            };
            let ctx = Ctx {
                ts: 1_000_000 + (i / 3) * 10,
                cpu: (i % 3) as u32,
                comm: task.comm,
                pid: if i % 7 == 0 { task.pid + 1 } else { task.pid },
            };
            let se = TraceEvent::SchedPeltSe {
                cpu: ctx.cpu,
                task,
                load: i % 2000,
                rbl_load: i % 300,
                util: i % 1024,
                update_time: 1_000_000 + (i / 2) * 1024,
            };
            let cfs = TraceEvent::SchedPeltCfs {
                cpu: ctx.cpu,
                load: i % 3000,
                rbl_load: i % 100,
                util: i % 1024,
                update_time: 1_000_000 + (i / 2) * 1024,
            };
            let other = TraceEvent::CpuIdle {
                cpu_id: ctx.cpu,
                state: -1,
            };
            let rt = TraceEvent::SchedPeltRt {
                cpu: ctx.cpu,
                load: i % 700,
                rbl_load: i % 200,
                util: i % 1024,
            };
            let dl = TraceEvent::SchedPeltDl {
                cpu: ctx.cpu,
                load: i % 500,
                rbl_load: i % 60,
                util: i % 1024,
            };
            let (first, second) = match i % 6 {
                0 | 1 => (&se, &cfs),
                2 => (&other, &cfs),
                3 => (&rt, &dl),
                4 => (&rt, &other),
                _ => (&se, &other),
            };
            if pairs {
                sink.record_pair(&ctx, first, second);
            } else {
                sink.record(&ctx, first);
                sink.record(&ctx, second);
            }
        }
        sink.end(2_000_000);
    }
    for config in [PerfettoConfig::default(), PerfettoConfig::LEGACY] {
        let mut a = PerfettoSink::with_config(Vec::new(), config);
        feed(&mut a, false);
        let a = a.into_inner().expect("Vec writer");
        let mut b = PerfettoSink::with_config(Vec::new(), config);
        feed(&mut b, true);
        let b = b.into_inner().expect("Vec writer");
        assert!(a.len() > 40 * BUNDLE_BYTES, "{} bytes", a.len());
        assert!(a == b, "{} and {} bytes differ", a.len(), b.len());
    }
}

#[test]
fn a_triple_gives_the_bytes_of_three_records() {
    // util_est/PELT triples over full bundles (a bundle filling at any of the three
    // events), a current task changing under them (announced or not), and other
    // triples; in both layouts.
    fn feed(sink: &mut dyn TraceSink, triples: bool) {
        sink.begin(3, 0);
        for i in 0..40_000u64 {
            let task = TaskRef {
                comm: "small-0",
                pid: 1000 + (i % 5) as u32,
                prio: 120,
            };
            let ctx = Ctx {
                ts: 1_000_000 + (i / 3) * 10,
                cpu: (i % 3) as u32,
                comm: task.comm,
                pid: if i % 7 == 0 {
                    task.pid + 1 + (i % 11) as u32 * 100
                } else {
                    task.pid
                },
            };
            let ue = TraceEvent::SchedUtilEstCfs {
                cpu: ctx.cpu,
                enqueued: i % 900,
                ewma: i % 900,
                util: i % 1024,
            };
            let se = TraceEvent::SchedPeltSe {
                cpu: ctx.cpu,
                task,
                load: i % 2000,
                rbl_load: i % 300,
                util: i % 1024,
                update_time: 1_000_000 + (i / 2) * 1024,
            };
            let cfs = TraceEvent::SchedPeltCfs {
                cpu: ctx.cpu,
                load: i % 3000,
                rbl_load: i % 100,
                util: i % 1024,
                update_time: 1_000_000 + (i / 2) * 1024,
            };
            let other = TraceEvent::CpuIdle {
                cpu_id: ctx.cpu,
                state: -1,
            };
            let (first, second, third) = match i % 5 {
                0..=2 => (&ue, &se, &cfs),
                3 => (&other, &se, &cfs),
                _ => (&ue, &se, &other),
            };
            if triples {
                sink.record_triple(&ctx, first, second, third);
            } else {
                sink.record(&ctx, first);
                sink.record(&ctx, second);
                sink.record(&ctx, third);
            }
        }
        sink.end(2_000_000);
    }
    for config in [PerfettoConfig::default(), PerfettoConfig::LEGACY] {
        let mut a = PerfettoSink::with_config(Vec::new(), config);
        feed(&mut a, false);
        let a = a.into_inner().expect("Vec writer");
        let mut b = PerfettoSink::with_config(Vec::new(), config);
        feed(&mut b, true);
        let b = b.into_inner().expect("Vec writer");
        assert!(a.len() > 40 * BUNDLE_BYTES, "{} bytes", a.len());
        assert!(a == b, "{} and {} bytes differ", a.len(), b.len());
    }
}
