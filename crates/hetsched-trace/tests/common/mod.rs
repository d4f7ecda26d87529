//! The fixed event sequence the writers' tests feed: every [`TraceEvent`] and
//! [`RtappMarker`] variant at least once, with their edge cases.

use hetsched_core::trace::{Ctx, RtappMarker, TaskRef, TraceEvent, TraceSink};

pub(crate) const S: u64 = 1_000_000_000;
pub(crate) const US: u64 = 1_000;

const SMALL: TaskRef<'static> = TaskRef {
    comm: "small-0",
    pid: 1000,
    prio: 120,
};
const BIG: TaskRef<'static> = TaskRef {
    comm: "big-1",
    pid: 1001,
    prio: 120,
};
/// 15 characters, the longest comm the kernel keeps.
const LONG: TaskRef<'static> = TaskRef {
    comm: "a_long_comm_15c",
    pid: 123_456,
    prio: 89,
};

fn idle(cpu: u32) -> TaskRef<'static> {
    const NAMES: [&str; 8] = [
        "swapper/0",
        "swapper/1",
        "swapper/2",
        "swapper/3",
        "swapper/4",
        "swapper/5",
        "swapper/6",
        "swapper/7",
    ];
    TaskRef {
        comm: NAMES[cpu as usize],
        pid: 0,
        prio: 120,
    }
}

fn ctx(ts: u64, cpu: u32, t: Option<TaskRef<'static>>) -> Ctx<'static> {
    match t {
        Some(t) => Ctx {
            ts,
            cpu,
            comm: t.comm,
            pid: t.pid,
        },
        None => Ctx {
            ts,
            cpu,
            comm: "<idle>",
            pid: 0,
        },
    }
}

/// Feeds the fixed sequence to `sink`: every variant at least once, with the edge cases
/// (cpu_idle −1, negative slack, prev_state 0/1/16, 6-digit pid, comm of 15 chars,
/// timestamps past 99999 s; the >32-CPU span is unit-tested in `fmt`).
pub(crate) fn feed(sink: &mut dyn TraceSink) {
    let t0 = 100 * S;
    sink.begin(8, t0);
    let ev = |sink: &mut dyn TraceSink, c: Ctx<'_>, e: TraceEvent<'_>| sink.record(&c, &e);

    ev(
        sink,
        ctx(t0, 0, None),
        TraceEvent::TaskRename {
            pid: 1000,
            oldcomm: "rt-app",
            newcomm: "small-0",
        },
    );
    ev(
        sink,
        ctx(t0, 0, None),
        TraceEvent::TaskRename {
            pid: 1001,
            oldcomm: "rt-app",
            newcomm: "big-1",
        },
    );
    ev(
        sink,
        ctx(t0, 0, None),
        TraceEvent::SchedWakeupNew {
            task: SMALL,
            target_cpu: 0,
        },
    );
    ev(
        sink,
        ctx(t0, 4, None),
        TraceEvent::SchedWakeupNew {
            task: BIG,
            target_cpu: 4,
        },
    );
    ev(
        sink,
        ctx(t0 + US, 0, None),
        TraceEvent::CpuIdle {
            cpu_id: 0,
            state: -1,
        },
    );
    ev(
        sink,
        ctx(t0 + 2 * US, 0, None),
        TraceEvent::SchedSwitch {
            prev: idle(0),
            prev_state: 0,
            next: SMALL,
        },
    );
    ev(
        sink,
        ctx(t0 + 3 * US, 0, Some(SMALL)),
        TraceEvent::Print(RtappMarker::Main {
            event: "start",
            data: 0,
        }),
    );
    ev(
        sink,
        ctx(t0 + 3 * US, 0, Some(SMALL)),
        TraceEvent::Print(RtappMarker::Main {
            event: "clock_ref",
            data: 100_000_003,
        }),
    );
    ev(
        sink,
        ctx(t0 + 4 * US, 0, Some(SMALL)),
        TraceEvent::Print(RtappMarker::Task { event: "start" }),
    );
    ev(
        sink,
        ctx(t0 + 5 * US, 0, Some(SMALL)),
        TraceEvent::Print(RtappMarker::Loop {
            event: "start",
            thread_loop: 0,
            phase: 0,
            phase_loop: 0,
        }),
    );
    ev(
        sink,
        ctx(t0 + 5 * US, 0, Some(SMALL)),
        TraceEvent::Print(RtappMarker::Event {
            id: 0,
            type_id: 4,
            desc: "run",
        }),
    );
    ev(
        sink,
        ctx(t0 + 6 * US, 0, Some(SMALL)),
        TraceEvent::SchedPeltSe {
            cpu: 0,
            task: SMALL,
            load: 512,
            rbl_load: 510,
            util: 87,
            update_time: 100_000_006_144,
        },
    );
    ev(
        sink,
        ctx(t0 + 6 * US, 0, Some(SMALL)),
        TraceEvent::SchedPeltCfs {
            cpu: 0,
            load: 520,
            rbl_load: 515,
            util: 90,
            update_time: 100_000_006_144,
        },
    );
    ev(
        sink,
        ctx(t0 + 6 * US, 0, Some(SMALL)),
        TraceEvent::SchedUtilEstSe {
            cpu: 0,
            task: SMALL,
            enqueued: 80,
            ewma: 75,
            util: 87,
        },
    );
    ev(
        sink,
        ctx(t0 + 6 * US, 0, Some(SMALL)),
        TraceEvent::SchedUtilEstCfs {
            cpu: 0,
            enqueued: 80,
            ewma: 80,
            util: 90,
        },
    );
    ev(
        sink,
        ctx(t0 + 6 * US, 0, Some(SMALL)),
        TraceEvent::SchedCpuCapacity {
            cpu: 0,
            capacity: 455,
            capacity_orig: 462,
            capacity_curr: 231,
        },
    );
    ev(
        sink,
        ctx(t0 + 7 * US, 0, Some(SMALL)),
        TraceEvent::CpuFrequency {
            cpu_id: 0,
            state: 1_844_000,
        },
    );
    // Sleeps on CPU0: prev_state 1 (S).
    ev(
        sink,
        ctx(t0 + 8 * US, 0, Some(SMALL)),
        TraceEvent::SchedSwitch {
            prev: SMALL,
            prev_state: 1,
            next: idle(0),
        },
    );
    ev(
        sink,
        ctx(t0 + 10 * US, 4, None),
        TraceEvent::SchedSwitch {
            prev: idle(4),
            prev_state: 0,
            next: BIG,
        },
    );
    ev(
        sink,
        ctx(t0 + 12 * US, 4, Some(BIG)),
        TraceEvent::SchedOverutilized {
            overutilized: true,
            span: &[0xff],
        },
    );
    ev(
        sink,
        ctx(t0 + 14 * US, 4, Some(BIG)),
        TraceEvent::SchedMigrateTask {
            task: SMALL,
            orig_cpu: 0,
            dest_cpu: 4,
        },
    );
    ev(
        sink,
        ctx(t0 + 15 * US, 4, Some(BIG)),
        TraceEvent::SchedWakeup {
            task: SMALL,
            target_cpu: 4,
        },
    );
    // Preempted: prev_state 0 (R), which LISA counts as preempted.
    ev(
        sink,
        ctx(t0 + 16 * US, 4, Some(BIG)),
        TraceEvent::SchedSwitch {
            prev: BIG,
            prev_state: 0,
            next: SMALL,
        },
    );
    ev(
        sink,
        ctx(t0 + 20 * US, 4, Some(SMALL)),
        TraceEvent::Print(RtappMarker::Stats {
            period: 16_000,
            run: 3_000,
            wu_lat: 15,
            slack: -5_000,
            c_period: 16_000,
            c_run: 3_000,
        }),
    );
    ev(
        sink,
        ctx(t0 + 20 * US, 4, Some(SMALL)),
        TraceEvent::Print(RtappMarker::Loop {
            event: "end",
            thread_loop: 0,
            phase: 0,
            phase_loop: 0,
        }),
    );
    // Sleeps again, on CPU4.
    ev(
        sink,
        ctx(t0 + 21 * US, 4, Some(SMALL)),
        TraceEvent::SchedSwitch {
            prev: SMALL,
            prev_state: 1,
            next: BIG,
        },
    );
    ev(
        sink,
        ctx(t0 + 22 * US, 0, None),
        TraceEvent::CpuIdle {
            cpu_id: 0,
            state: 0,
        },
    );
    ev(
        sink,
        ctx(t0 + 30 * US, 4, Some(BIG)),
        TraceEvent::Print(RtappMarker::Task { event: "end" }),
    );
    // Dies: prev_state 16 (X).
    ev(
        sink,
        ctx(t0 + 31 * US, 4, Some(BIG)),
        TraceEvent::SchedProcessExit { task: BIG },
    );
    ev(
        sink,
        ctx(t0 + 31 * US, 4, Some(BIG)),
        TraceEvent::SchedSwitch {
            prev: BIG,
            prev_state: 16,
            next: idle(4),
        },
    );
    ev(
        sink,
        ctx(t0 + 40 * US, 4, None),
        TraceEvent::SchedOverutilized {
            overutilized: false,
            span: &[0x0f],
        },
    );
    // Wide columns: 6-digit pid, 15-char comm, RT prio, time past 99999 s.
    let late = 123_456 * S + 789_123_999;
    ev(
        sink,
        ctx(late, 7, None),
        TraceEvent::SchedWakeup {
            task: LONG,
            target_cpu: 7,
        },
    );
    ev(
        sink,
        ctx(late, 7, None),
        TraceEvent::SchedSwitch {
            prev: idle(7),
            prev_state: 0,
            next: LONG,
        },
    );
    ev(
        sink,
        ctx(late + US, 7, Some(LONG)),
        TraceEvent::Print(RtappMarker::Main {
            event: "end",
            data: -1,
        }),
    );
    sink.end(late + 2 * US);
}
