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
//!   governors', HMP's) with the text trace's fields, names and values, as Perfetto v59's
//!   traced_probes writes an event it has no message for ([`PerfettoConfig`]): by default
//!   under a field number of its own, its fields numbered, each bundle ending with the
//!   descriptors of the events it holds (`dense`); or, in the legacy layout, as a
//!   `GenericFtraceEvent` (unsigned as `uint_value`, signed as `int_value`, strings,
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
//! This module has the sink, its bundles and its output; `encode` has the field numbers
//! and each event's body; `dense` the v59 layout's event table and descriptors; `head`
//! an event's cached timestamp and pid fields; `window` the encoders an event is written
//! with; `tests` checks every event against the former encoder.
//!
//! Encoding is by hand (the crate's `proto` module): no protobuf compiler, no allocation
//! per event (the task map grows once per task). An event is written once, in place in
//! its CPU's bundle, behind lengths of their true (minimal) width, without being sized
//! first as protobuf's generated code does (`ByteSize()`, then
//! `SerializeWithCachedSizes()`): its body goes where the widths of the last event of the
//! same kind put it, and is moved in the rare case its own lengths are of other widths
//! (`window`). One match arm per event writes its fields over an upper bound of their
//! length (whether they fit in a window of the buffer) and then over the buffer
//! (`Bundle::push`). Constant parts (a generic event's name, its fields' names and keys)
//! are constant arrays, copied whole.
//!
//! The same events give the same bytes: packets are written in a fixed order and no map
//! is iterated.

use std::collections::BTreeMap;
use std::fs::File;
use std::io;
use std::path::Path;

use hetsched_core::time::Nanos;
use hetsched_core::trace::{Ctx, Interest, TraceEvent, TraceSink};

use crate::background::{Block, BlockWrite, Insert};
use crate::ftrace::wanted;
use crate::proto::{
    key1, push_bytes, push_key, push_str, push_uint, push_varint, varint_at, varint_len, Enc, Kept,
    Out, WT_LEN,
};

/// Bytes of events a CPU collects before they become one `FtraceEventBundle` packet.
pub const BUNDLE_BYTES: usize = 16 * 1024;
/// Bytes of a bundle's buffer (at least; an event too long for a window may grow it):
/// the most bytes it holds before an event (fewer than [`BUNDLE_BYTES`]), and a window.
const ROOM: usize = BUNDLE_BYTES + WIN + WIN_TAIL;
const _: () = assert!(BUNDLE_BYTES.is_power_of_two(), "an event's start masked");
const _: () = assert!(
    dense::EVENTS.len() <= 32,
    "a bit each in Bundle::generic_used"
);
/// Bytes of packets buffered before they are handed to the writer.
const FLUSH_THRESHOLD: usize = 256 * 1024;
/// Capacity of the output buffer: the threshold, a bundle's packet and room to spare.
const BUF_CAPACITY: usize = FLUSH_THRESHOLD + BUNDLE_BYTES + 1024;
/// The one packet sequence this writer produces (`trusted_packet_sequence_id`).
const SEQUENCE_ID: u64 = 1;

mod dense;
#[macro_use]
mod legacy;
mod encode;
mod event_bundle;
mod head;
mod window;

use encode::{bundle, clock, packet, ps, trace, Text};
use head::{Head, HEAD_BYTES, HEAD_MAX};
use window::{Win, WIN, WIN_TAIL};

use event_bundle::{short_bound, Bundle, PREFIX_BYTES};

/// Bundles of fewer event bytes are copied into the output buffer rather than handed over
/// (the few at the end of a run, or of a short one).
const COPY_BYTES: usize = 4096;

/// Pids below this are marked in [`Groups`]'s bits (512 KiB of them at most).
const KNOWN_PIDS: u32 = 1 << 22;

/// The thread group of every task announced, by pid, and, for pids below
/// [`KNOWN_PIDS`], one bit per pid saying whether it is there: the test of
/// `note_running()` at every change of a CPU's current task is a bit's, not a search of
/// the map. The bits are always those of the map's keys (debug builds compare them).
#[derive(Debug, Default)]
struct Groups {
    tgid: BTreeMap<u32, u32>,
    /// Bit `pid % 64` of word `pid / 64`: `pid` is a key of `tgid` (words past the end
    /// are zero).
    known: Vec<u64>,
}

impl Groups {
    /// Whether `pid` is announced.
    #[inline(always)]
    fn contains(&self, pid: u32) -> bool {
        let known = if pid < KNOWN_PIDS {
            self.known
                .get((pid / 64) as usize)
                .is_some_and(|w| w >> (pid % 64) & 1 != 0)
        } else {
            self.tgid.contains_key(&pid)
        };
        debug_assert_eq!(known, self.tgid.contains_key(&pid), "pid {pid}");
        known
    }

    /// The thread group of `pid`, if announced.
    fn get(&self, pid: u32) -> Option<u32> {
        self.tgid.get(&pid).copied()
    }

    /// Records `pid` in group `tgid`.
    fn insert(&mut self, pid: u32, tgid: u32) {
        self.tgid.insert(pid, tgid);
        if pid < KNOWN_PIDS {
            let w = (pid / 64) as usize;
            if self.known.len() <= w {
                self.known.resize(w + 1, 0);
            }
            self.known[w] |= 1 << (pid % 64);
        }
    }
}

/// What the trace's recording config asks of traced_probes, as far as it changes the
/// file: named after `FtraceConfig`'s fields (protos/perfetto/config/ftrace/
/// ftrace_config.proto). The default is what Perfetto v59's traced_probes records when
/// the config leaves them unset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PerfettoConfig {
    /// `denser_generic_event_encoding` (perfetto v50+, read by trace processor since v52;
    /// traced_probes' default since v53): an event
    /// with no message of its own in Perfetto is written under a field number of its
    /// own with its fields numbered, and each bundle holding such events carries their
    /// descriptors (module `dense`). Off, each is a `GenericFtraceEvent` naming every
    /// field, as traced_probes wrote them before.
    pub denser_generic_event_encoding: bool,
}

impl Default for PerfettoConfig {
    fn default() -> Self {
        PerfettoConfig {
            denser_generic_event_encoding: true,
        }
    }
}

impl PerfettoConfig {
    /// What traced_probes before v53 recorded by default (and trace processors before v52
    /// read): every event with no message of its own
    /// as a `GenericFtraceEvent`.
    pub const LEGACY: PerfettoConfig = PerfettoConfig {
        denser_generic_event_encoding: false,
    };
}

/// A [`TraceSink`] that writes a Perfetto protobuf trace, as described in the
/// [module documentation](self).
///
/// Packets are encoded into internal buffers without allocating per event and handed to
/// the writer in blocks of about 256 KiB ([`BlockWrite`]: a full CPU bundle is handed
/// over in its own buffer, not copied; any [`std::io::Write`] writes a block in
/// `write_vectored` calls; a [`BackgroundWriter`](crate::BackgroundWriter) takes the
/// buffers themselves to its thread and gives others back), so `W` need not be
/// buffered. Error handling is
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
pub struct PerfettoSink<W: BlockWrite> {
    /// The destination; `None` only after `into_inner` took it.
    out: Option<W>,
    /// Pending output: the bytes of `Trace.packet` fields but for the events of the
    /// bundles in `segments`, which go between the pieces of `buf` that `segments` marks.
    buf: Vec<u8>,
    /// Pending output, in order, each after the bytes of `buf` before its `at`.
    segments: Vec<Insert>,
    /// Bytes of events in `segments`.
    segment_bytes: usize,
    /// Bundle buffers written out, to reuse.
    spare: Vec<Vec<u8>>,
    /// Per CPU, the encoded `FtraceEventBundle.event` fields not yet written.
    cpus: Vec<Bundle>,
    /// Scratch: a message to nest (a clock, a process-tree entry).
    body: Vec<u8>,
    /// Scratch: a print's text, the last overutilized span's.
    text: Text,
    /// Scratch: one `TracePacket`.
    packet: Vec<u8>,
    /// Scratch: a packet's nested message.
    nested: Vec<u8>,
    /// Thread group of every task announced, by pid.
    tgid: Groups,
    /// Event groups written.
    interest: Interest,
    /// No error met (`error` is `None`) and `interest == Interest::ALL`: `record` writes
    /// every event without testing either ([`PerfettoSink::error_changed`]).
    fast: bool,
    /// CPU count given to `begin` (0 before).
    nr_cpus: usize,
    /// `config.denser_generic_event_encoding`.
    dense: bool,
    /// With `dense`, each event kind's `generic_event_descriptors` field
    /// ([`dense::descriptors`]).
    descriptors: Vec<Vec<u8>>,
    /// First I/O error; output stops once set.
    error: Option<io::Error>,
}

impl PerfettoSink<File> {
    /// Creates (truncates) the file at `path` and writes the trace to it.
    pub fn create(path: impl AsRef<Path>) -> io::Result<Self> {
        Ok(Self::new(File::create(path)?))
    }
}

impl<W: BlockWrite> PerfettoSink<W> {
    /// A sink writing every event group to `writer`, as Perfetto v59's traced_probes
    /// does by default ([`PerfettoConfig::default`]).
    pub fn new(writer: W) -> Self {
        Self::with_config(writer, PerfettoConfig::default())
    }

    /// A sink writing every event group to `writer` as `config` says.
    pub fn with_config(writer: W, config: PerfettoConfig) -> Self {
        let dense = config.denser_generic_event_encoding;
        PerfettoSink {
            out: Some(writer),
            buf: Vec::with_capacity(BUF_CAPACITY),
            segments: Vec::new(),
            segment_bytes: 0,
            spare: Vec::new(),
            cpus: Vec::new(),
            body: Vec::new(),
            text: Text::default(),
            packet: Vec::new(),
            nested: Vec::new(),
            tgid: Groups::default(),
            interest: Interest::ALL,
            fast: true,
            nr_cpus: 0,
            dense,
            descriptors: if dense {
                dense::descriptors()
            } else {
                Vec::new()
            },
            error: None,
        }
    }

    /// Restricts the sink to the given event groups. Events outside them are skipped even
    /// if the engine sends them.
    pub fn with_interest(mut self, interest: Interest) -> Self {
        self.interest = interest;
        self.error_changed();
        self
    }

    /// The writer.
    pub fn get_ref(&self) -> Option<&W> {
        self.out.as_ref()
    }

    /// Takes the first I/O error met so far, if any. Output stopped at that error.
    pub fn take_error(&mut self) -> Option<io::Error> {
        let e = self.error.take();
        self.error_changed();
        e
    }

    /// Sets `fast` anew after `error` or `interest` changed.
    fn error_changed(&mut self) {
        self.fast = self.error.is_none() && self.interest == Interest::ALL;
    }

    /// Writes every buffered event and packet out and flushes the writer. Returns the
    /// first error met, including one from an earlier write (which is then taken).
    pub fn flush(&mut self) -> io::Result<()> {
        self.flush_bundles();
        self.write_buf();
        if self.error.is_none() {
            if let Some(out) = self.out.as_mut() {
                if let Err(e) = out.flush_blocks() {
                    self.error = Some(e);
                }
            }
        }
        let e = self.error.take();
        self.error_changed();
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
        let used_kinds = self.cpus[cpu].generic_used;
        let descriptors_len: usize = (0..dense::EVENTS.len())
            .filter(|i| used_kinds >> i & 1 != 0)
            .map(|i| self.descriptors[i].len())
            .sum();
        let cpu_field = 1 + varint_len(cpu as u64);
        let bundle_len = cpu_field + used + descriptors_len;
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
            self.segments.push(Insert {
                at: self.buf.len(),
                bytes: events,
                len: used,
            });
            self.segment_bytes += used;
        }
        b.used = 0;
        b.generic_used = 0;
        // After the events, as traced_probes' `Bundler::FinalizeAndRunSymbolizer()`
        // writes them.
        for (i, d) in self.descriptors.iter().enumerate() {
            if used_kinds >> i & 1 != 0 {
                self.buf.extend_from_slice(d);
            }
        }
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

    /// [`TraceSink::record`] of an event on a CPU past those `begin()` gave: its bundle
    /// (and those below it) made first.
    #[cold]
    #[inline(never)]
    fn record_new_cpu(&mut self, ctx: &Ctx<'_>, ev: &TraceEvent<'_>) {
        self.cpus.resize_with(ctx.cpu as usize + 1, Bundle::default);
        self.record(ctx, ev);
    }

    /// Announces `pid` as the leader of its own group if it is not known yet.
    fn note_running(&mut self, ts: Nanos, pid: u32, comm: &str) {
        if pid != 0 && !self.tgid.contains(pid) {
            self.tgid.insert(pid, pid);
            self.announce(ts, pid, pid, comm, true);
        }
    }

    /// Announces the task `ev` names if it is not known yet, or renamed (the second part
    /// of keeping the process tree up to date: see the module documentation). Called
    /// for the events [`Bundle::push`] says may name one, after the event is in its
    /// CPU's bundle and before that bundle is flushed: the bundle's bytes and the output
    /// buffer, where a `ProcessTree` packet goes, are apart, so the output is that of
    /// announcing first.
    fn track_event(&mut self, ctx: &Ctx<'_>, ev: &TraceEvent<'_>) {
        match *ev {
            TraceEvent::SchedWakeupNew { task, .. }
                if task.pid != 0 && !self.tgid.contains(task.pid) =>
            {
                let tgid = match self.tgid.get(ctx.pid) {
                    Some(g) if ctx.pid != 0 => g,
                    _ => task.pid,
                };
                self.tgid.insert(task.pid, tgid);
                self.announce(ctx.ts, task.pid, tgid, task.comm, tgid == task.pid);
            }
            TraceEvent::SchedSwitch { next, .. } => {
                self.note_running(ctx.ts, next.pid, next.comm);
            }
            TraceEvent::TaskRename { pid, newcomm, .. } if pid != 0 => match self.tgid.get(pid) {
                Some(tgid) => self.announce(ctx.ts, pid, tgid, newcomm, false),
                None => {
                    self.tgid.insert(pid, pid);
                    self.announce(ctx.ts, pid, pid, newcomm, true);
                }
            },
            _ => {}
        }
    }

    /// Hands the pending output to the writer as one [`Block`] (the output buffer, the
    /// bundle buffers as its inserts); records an error instead of returning it. The
    /// block given back becomes the output buffer and its bundle buffers spares.
    fn write_buf(&mut self) {
        if self.buf.is_empty() && self.segments.is_empty() {
            return;
        }
        if self.error.is_none() {
            if let Some(out) = self.out.as_mut() {
                let mut block = Block {
                    len: self.buf.len(),
                    bytes: std::mem::take(&mut self.buf),
                    inserts: std::mem::take(&mut self.segments),
                };
                let result = out.write_block(&mut block);
                self.buf = block.bytes;
                self.segments = block.inserts;
                if self.buf.capacity() == 0 {
                    self.buf.reserve(BUF_CAPACITY);
                }
                if let Err(e) = result {
                    self.error = Some(e);
                    self.error_changed();
                }
            }
        }
        self.buf.clear();
        self.spare.extend(self.segments.drain(..).map(|s| s.bytes));
        self.segment_bytes = 0;
    }
}

impl<W: BlockWrite> TraceSink for PerfettoSink<W> {
    fn interest(&self) -> Interest {
        self.interest
    }

    /// Writes the clock snapshot: BOOTTIME and MONOTONIC both at `start_ns`.
    fn begin(&mut self, nr_cpus: usize, start_ns: Nanos) {
        self.nr_cpus = nr_cpus;
        self.cpus.resize_with(nr_cpus, Bundle::default);
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

    /// Announces the task current on `ctx`'s CPU if it is not the one last seen there
    /// (`Bundle::current`) and not known yet (the first part of keeping the process tree
    /// up to date: see the module documentation), then writes the event in the CPU's
    /// bundle, the bundle looked up once.
    fn record(&mut self, ctx: &Ctx<'_>, ev: &TraceEvent<'_>) {
        debug_assert_eq!(
            self.fast,
            self.error.is_none() && self.interest == Interest::ALL
        );
        if !self.fast && (self.error.is_some() || !wanted(&self.interest, ev)) {
            return;
        }
        let cpu = ctx.cpu as usize;
        let Some(mut b) = self.cpus.get_mut(cpu) else {
            self.record_new_cpu(ctx, ev);
            return;
        };
        if b.current != ctx.pid {
            b.current = ctx.pid;
            if ctx.pid != 0 && !self.tgid.contains(ctx.pid) {
                self.note_running(ctx.ts, ctx.pid, ctx.comm);
                b = &mut self.cpus[cpu];
            }
        }
        let (held, names) = b.push(ctx, ev, &mut self.text, self.nr_cpus, self.dense, false);
        if names {
            self.track_event(ctx, ev);
        }
        if held >= BUNDLE_BYTES {
            self.flush_bundle(cpu);
        }
    }

    /// The `sched_pelt_se` and `sched_pelt_cfs` of one update, or the `sched_pelt_rt` and
    /// `sched_pelt_dl` of one `update_blocked_averages()`, with every event written
    /// and the CPU's current task announced already (the common case), in one pass
    /// of `record()`'s entry: the bundle looked up once, each event written in it
    /// (the bundle flushed as soon as it is full, as after each `record()`). Any other
    /// pair is two `record()`s.
    fn record_pair(&mut self, ctx: &Ctx<'_>, first: &TraceEvent<'_>, second: &TraceEvent<'_>) {
        let cpu = ctx.cpu as usize;
        if let (TraceEvent::SchedPeltSe { .. }, TraceEvent::SchedPeltCfs { .. })
        | (TraceEvent::SchedPeltRt { .. }, TraceEvent::SchedPeltDl { .. }) = (first, second)
        {
            debug_assert_eq!(
                self.fast,
                self.error.is_none() && self.interest == Interest::ALL
            );
            // The current task changed, its pid known (no announcement): `record()` would
            // only note it.
            if let Some(b) = self.cpus.get_mut(cpu).filter(|b| {
                self.fast && (b.current == ctx.pid || ctx.pid == 0 || self.tgid.contains(ctx.pid))
            }) {
                b.current = ctx.pid;
                // Neither names a task (`names` is false).
                let (held, _) = b.push(ctx, first, &mut self.text, self.nr_cpus, self.dense, false);
                if held < BUNDLE_BYTES {
                    // The head the first event set.
                    let (held, _) =
                        b.push(ctx, second, &mut self.text, self.nr_cpus, self.dense, true);
                    if held >= BUNDLE_BYTES {
                        self.flush_bundle(cpu);
                    }
                } else {
                    self.flush_bundle(cpu);
                    self.record(ctx, second);
                }
                return;
            }
        }
        self.record(ctx, first);
        self.record(ctx, second);
    }

    /// The `sched_util_est_cfs` of an enqueue or dequeue with the `sched_pelt_se` and
    /// `sched_pelt_cfs` of its PELT update, with every event written and the CPU's
    /// current task announced already, in one pass of `record()`'s entry, as
    /// [`record_pair`](TraceSink::record_pair) does a pair (the bundle flushed as soon as
    /// it is full, the rest then written by `record()`). Any other triple is three
    /// `record()`s (the bytes of the default's `record()` and `record_pair()`).
    fn record_triple(
        &mut self,
        ctx: &Ctx<'_>,
        first: &TraceEvent<'_>,
        second: &TraceEvent<'_>,
        third: &TraceEvent<'_>,
    ) {
        let cpu = ctx.cpu as usize;
        if let (
            TraceEvent::SchedUtilEstCfs { .. },
            TraceEvent::SchedPeltSe { .. },
            TraceEvent::SchedPeltCfs { .. },
        ) = (first, second, third)
        {
            debug_assert_eq!(
                self.fast,
                self.error.is_none() && self.interest == Interest::ALL
            );
            // As in `record_pair()`.
            if let Some(b) = self.cpus.get_mut(cpu).filter(|b| {
                self.fast && (b.current == ctx.pid || ctx.pid == 0 || self.tgid.contains(ctx.pid))
            }) {
                b.current = ctx.pid;
                // None names a task (`names` is false).
                let (held, _) = b.push(ctx, first, &mut self.text, self.nr_cpus, self.dense, false);
                if held >= BUNDLE_BYTES {
                    // Two `record()`s, not `record_pair()`: the same bytes, and in debug
                    // builds (whose frames keep every inlined event's locals apart) a
                    // stack of this frame and one `record()`'s only.
                    self.flush_bundle(cpu);
                    self.record(ctx, second);
                    self.record(ctx, third);
                    return;
                }
                // The head the first event set, for both.
                let (held, _) = b.push(ctx, second, &mut self.text, self.nr_cpus, self.dense, true);
                if held >= BUNDLE_BYTES {
                    self.flush_bundle(cpu);
                    self.record(ctx, third);
                    return;
                }
                let (held, _) = b.push(ctx, third, &mut self.text, self.nr_cpus, self.dense, true);
                if held >= BUNDLE_BYTES {
                    self.flush_bundle(cpu);
                }
                return;
            }
        }
        // (Three `record()`s: the bytes of `record_pair()`, on a shallower debug stack.)
        self.record(ctx, first);
        self.record(ctx, second);
        self.record(ctx, third);
    }

    /// Writes every CPU's pending events and flushes the writer; an error is kept for
    /// [`take_error`](PerfettoSink::take_error).
    fn end(&mut self, _end_ns: Nanos) {
        self.flush_bundles();
        self.write_buf();
        if self.error.is_none() {
            if let Some(out) = self.out.as_mut() {
                if let Err(e) = out.flush_blocks() {
                    self.error = Some(e);
                    self.error_changed();
                }
            }
        }
    }
}

impl<W: BlockWrite> Drop for PerfettoSink<W> {
    /// Best-effort flush, errors ignored (use `flush`/`into_inner` to see them).
    fn drop(&mut self) {
        if self.out.is_some() {
            self.flush_bundles();
            self.write_buf();
            if let Some(out) = self.out.as_mut() {
                let _ = out.flush_blocks();
            }
        }
    }
}

/// The writers' test sequence of events (`tests/common`), for the tests below.
#[cfg(test)]
#[path = "../../tests/common/mod.rs"]
#[allow(dead_code, unreachable_pub, missing_docs)]
mod test_feed;

#[cfg(test)]
mod tests;
