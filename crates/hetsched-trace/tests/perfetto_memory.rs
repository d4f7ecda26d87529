//! The Perfetto writer streams: the heap it holds does not grow with the trace's length,
//! and bytes reach the writer while events are still coming. Measured with a counting
//! global allocator (this test binary's own, one test so nothing else allocates at the
//! same time) over a writer that only counts bytes.

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::{self, Write};
use std::sync::atomic::{AtomicUsize, Ordering};

use hetsched_core::trace::{Ctx, TaskRef, TraceEvent, TraceSink};
use hetsched_trace::perfetto::BUNDLE_BYTES;
use hetsched_trace::PerfettoSink;

/// Bytes allocated and not yet freed, and the highest value since the last reset.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded to `System` unchanged; only counters are added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let live = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
        PEAK.fetch_max(live, Ordering::Relaxed);
        // SAFETY: the caller's contract is passed on to `System`.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size > layout.size() {
            let live = LIVE.fetch_add(new_size - layout.size(), Ordering::Relaxed)
                + (new_size - layout.size());
            PEAK.fetch_max(live, Ordering::Relaxed);
        } else {
            LIVE.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
        }
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// A writer that keeps only a count of the bytes it was given.
struct CountingWriter<'a>(&'a AtomicUsize);

impl Write for CountingWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.fetch_add(buf.len(), Ordering::Relaxed);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

const NR_CPUS: usize = 4;

/// Runs `n` events through a sink over a counting writer; returns (heap peak above the
/// level before the sink existed, bytes written before `end`, bytes written in all).
fn run(n: u64) -> (usize, usize, usize) {
    let written = AtomicUsize::new(0);
    let base = LIVE.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let mut sink = PerfettoSink::new(CountingWriter(&written));
    sink.begin(NR_CPUS, 0);
    const COMMS: [&str; 4] = ["small-0", "big-1", "mid-2", "rt-app"];
    for i in 0..n {
        let cpu = (i % NR_CPUS as u64) as u32;
        let task = TaskRef {
            comm: COMMS[cpu as usize],
            pid: 1000 + cpu,
            prio: 120,
        };
        let ctx = Ctx {
            ts: 1_000_000_000 + i * 1_000,
            cpu,
            comm: task.comm,
            pid: task.pid,
        };
        let ev = match i % 3 {
            0 => TraceEvent::SchedWakeup {
                task,
                target_cpu: cpu,
            },
            1 => TraceEvent::SchedPeltSe {
                cpu,
                task,
                load: i % 1024,
                rbl_load: i % 1000,
                util: i % 900,
                update_time: i * 1_000,
            },
            _ => TraceEvent::CpuFrequency {
                cpu_id: cpu,
                state: 500_000 + i % 7,
            },
        };
        sink.record(&ctx, &ev);
    }
    let before_end = written.load(Ordering::Relaxed);
    sink.end(n * 1_000);
    assert!(sink.take_error().is_none());
    let peak = PEAK.load(Ordering::Relaxed) - base;
    drop(sink);
    (peak, before_end, written.load(Ordering::Relaxed))
}

#[test]
fn memory_does_not_grow_with_trace_length() {
    let (peak_short, _, total_short) = run(20_000);
    let (peak_long, before_end, total_long) = run(1_000_000);
    eprintln!(
        "heap peak: {peak_short} B for 20,000 events, {peak_long} B for 1,000,000 \
         ({total_long} B written, {} B of it at the end)",
        total_long - before_end
    );
    // Fifty times the events, fifty times the bytes …
    assert!(
        total_long > 40 * total_short,
        "{total_long} vs {total_short}"
    );
    // … written as they came: what was still held at the end is at most a bundle per CPU
    // and the 256 KiB of pending output.
    let bound = NR_CPUS * (BUNDLE_BYTES + 1024) + 256 * 1024 + BUNDLE_BYTES + 1024;
    assert!(
        total_long - before_end <= bound,
        "{} held at end",
        total_long - before_end
    );
    // … with the same heap: buffers sized once, nothing per event.
    assert!(peak_long <= 1 << 20, "peak {peak_long} B");
    assert!(
        peak_long <= peak_short + 4096,
        "peak {peak_long} B vs {peak_short} B"
    );
}
