//! [`ColumnSink`]: the events a run emits kept in memory as columns, one table per event
//! name, for DataFrames (`hs.run(..., keep_trace=True)` in the Python package); and
//! [`read_text`], which reads an ftrace text trace [`FtraceTextSink`](crate::FtraceTextSink)
//! wrote into the same tables.
//!
//! The tables hold the events of [`SCHEMA`] (scheduling, frequency and idle, PELT and
//! util_est, capacity, overutilized, HMP): the ones the Python frames are built from.
//! Each table has the columns
//!
//! * `__ts`: timestamp in ns, truncated to the µs as the text trace prints it (so the
//!   tables of a run and of its text trace are the same);
//! * `__cpu`, `__pid`: the CPU the event was recorded on and the task current on it (the
//!   `COMM-PID [CPU]` header of a text line);
//! * `__seq`: the event's position among the kept events of the run (all tables), which
//!   orders events of equal timestamps as they were emitted;
//! * the event's fields, with the text's names and in its order: integers as `i64`,
//!   strings as indices into one string table ([`Columns::strings`]).
//!
//! Values are those the text trace prints: `cpu_idle`'s `state` is −1 on exit (the text's
//! 4294967295 read back as the `s32` the kernel's tracepoint holds), `sched_overutilized`'s
//! `span` is the text's `%*pb` string.

use std::collections::HashMap;
use std::io::{self, BufRead};

use hetsched_core::time::{Nanos, NSEC_PER_SEC, NSEC_PER_USEC};
use hetsched_core::trace::{Ctx, Interest, TraceEvent, TraceSink};

use crate::fmt;

/// The type of a field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// An integer (`i64`).
    Int,
    /// A string (an index into [`Columns::strings`]).
    Str,
}

const I: Kind = Kind::Int;
const S: Kind = Kind::Str;

/// The kept events and their fields, in the text trace's order.
pub const SCHEMA: &[(&str, &[(&str, Kind)])] = &[
    (
        "sched_switch",
        &[
            ("prev_comm", S),
            ("prev_pid", I),
            ("prev_prio", I),
            ("prev_state", I),
            ("next_comm", S),
            ("next_pid", I),
            ("next_prio", I),
        ],
    ),
    (
        "sched_waking",
        &[("comm", S), ("pid", I), ("prio", I), ("target_cpu", I)],
    ),
    (
        "sched_wakeup",
        &[("comm", S), ("pid", I), ("prio", I), ("target_cpu", I)],
    ),
    (
        "sched_wakeup_new",
        &[("comm", S), ("pid", I), ("prio", I), ("target_cpu", I)],
    ),
    (
        "sched_migrate_task",
        &[
            ("comm", S),
            ("pid", I),
            ("prio", I),
            ("orig_cpu", I),
            ("dest_cpu", I),
        ],
    ),
    (
        "sched_process_exit",
        &[("comm", S), ("pid", I), ("prio", I)],
    ),
    (
        "sched_pi_setprio",
        &[("comm", S), ("pid", I), ("oldprio", I), ("newprio", I)],
    ),
    (
        "task_rename",
        &[
            ("pid", I),
            ("oldcomm", S),
            ("newcomm", S),
            ("oom_score_adj", I),
        ],
    ),
    ("cpu_frequency", &[("state", I), ("cpu_id", I)]),
    ("cpu_idle", &[("state", I), ("cpu_id", I)]),
    (
        "sched_pelt_se",
        &[
            ("cpu", I),
            ("path", S),
            ("comm", S),
            ("pid", I),
            ("load", I),
            ("rbl_load", I),
            ("util", I),
            ("update_time", I),
        ],
    ),
    (
        "sched_pelt_cfs",
        &[
            ("cpu", I),
            ("path", S),
            ("load", I),
            ("rbl_load", I),
            ("util", I),
            ("update_time", I),
        ],
    ),
    (
        "sched_pelt_rt",
        &[("cpu", I), ("load", I), ("rbl_load", I), ("util", I)],
    ),
    (
        "sched_pelt_dl",
        &[("cpu", I), ("load", I), ("rbl_load", I), ("util", I)],
    ),
    (
        "sched_util_est_se",
        &[
            ("cpu", I),
            ("path", S),
            ("comm", S),
            ("pid", I),
            ("enqueued", I),
            ("ewma", I),
            ("util", I),
        ],
    ),
    (
        "sched_util_est_cfs",
        &[
            ("cpu", I),
            ("path", S),
            ("enqueued", I),
            ("ewma", I),
            ("util", I),
        ],
    ),
    (
        "sched_cpu_capacity",
        &[
            ("cpu", I),
            ("capacity", I),
            ("capacity_orig", I),
            ("capacity_curr", I),
        ],
    ),
    ("sched_overutilized", &[("overutilized", I), ("span", S)]),
    (
        "sched_hmp_migrate",
        &[("comm", S), ("pid", I), ("dest", I), ("force", I)],
    ),
];

/// The index of `name` in [`SCHEMA`].
fn table_index(name: &str) -> Option<usize> {
    SCHEMA.iter().position(|(n, _)| *n == name)
}

/// One event table: the common columns and the fields (all `i64`; a string field holds
/// its index in [`Columns::strings`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Table {
    /// `__ts`: ns, truncated to the µs.
    pub ts: Vec<i64>,
    /// `__cpu`.
    pub cpu: Vec<i64>,
    /// `__pid`.
    pub pid: Vec<i64>,
    /// `__seq`.
    pub seq: Vec<i64>,
    /// The fields, in [`SCHEMA`] order.
    pub fields: Vec<Vec<i64>>,
}

/// A field's value while a row is built.
#[derive(Debug, Clone, Copy)]
enum Val<'a> {
    I(i64),
    S(&'a str),
}

/// The tables of a run or of a text trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Columns {
    /// One table per [`SCHEMA`] entry, in its order.
    pub tables: Vec<Table>,
    /// The string table.
    pub strings: Vec<String>,
    /// The CPU count (`begin()`, or the text's `# cpus=N`; 0 when unknown).
    pub nr_cpus: usize,
    /// The timestamp of the last event of any kind (kept or not), ns truncated to the µs;
    /// 0 without events.
    pub end_ns: i64,
    index: HashMap<String, i64>,
    next_seq: i64,
}

impl Default for Columns {
    fn default() -> Self {
        Columns {
            tables: SCHEMA
                .iter()
                .map(|(_, f)| Table {
                    fields: vec![Vec::new(); f.len()],
                    ..Table::default()
                })
                .collect(),
            strings: Vec::new(),
            nr_cpus: 0,
            end_ns: 0,
            index: HashMap::new(),
            next_seq: 0,
        }
    }
}

impl Columns {
    /// The table of event `name`, if it is in [`SCHEMA`].
    pub fn table(&self, name: &str) -> Option<&Table> {
        table_index(name).map(|i| &self.tables[i])
    }

    /// Number of rows over all tables.
    pub fn len(&self) -> usize {
        self.tables.iter().map(|t| t.ts.len()).sum()
    }

    /// No rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn intern(&mut self, s: &str) -> i64 {
        if let Some(&i) = self.index.get(s) {
            return i;
        }
        let i = self.strings.len() as i64;
        self.strings.push(s.to_owned());
        self.index.insert(s.to_owned(), i);
        i
    }

    /// Appends a row to table `t`; `vals` are in [`SCHEMA`] order.
    fn push(&mut self, t: usize, ts: Nanos, cpu: u32, pid: u32, vals: &[Val<'_>]) {
        debug_assert_eq!(vals.len(), SCHEMA[t].1.len(), "{}", SCHEMA[t].0);
        let seq = self.next_seq;
        self.next_seq += 1;
        let codes: Vec<i64> = vals
            .iter()
            .map(|v| match *v {
                Val::I(x) => x,
                Val::S(s) => self.intern(s),
            })
            .collect();
        let table = &mut self.tables[t];
        table.ts.push(ts_us_ns(ts));
        table.cpu.push(i64::from(cpu));
        table.pid.push(i64::from(pid));
        table.seq.push(seq);
        for (col, v) in table.fields.iter_mut().zip(codes) {
            col.push(v);
        }
    }
}

/// `ts` truncated to the µs, as the text trace prints it.
fn ts_us_ns(ts: Nanos) -> i64 {
    ((ts / NSEC_PER_USEC) * NSEC_PER_USEC) as i64
}

fn u(v: u64) -> Val<'static> {
    Val::I(v as i64)
}

/// A [`TraceSink`] keeping the events of [`SCHEMA`] as [`Columns`].
///
/// ```
/// use hetsched_core::trace::{Ctx, TaskRef, TraceEvent, TraceSink};
/// use hetsched_trace::ColumnSink;
///
/// let mut sink = ColumnSink::new();
/// sink.begin(8, 0);
/// let task = TaskRef { comm: "small-0", pid: 1000, prio: 120 };
/// let ctx = Ctx { ts: 100_000_000_123, cpu: 0, comm: "<idle>", pid: 0 };
/// sink.record(&ctx, &TraceEvent::SchedWakeup { task, target_cpu: 3 });
/// let cols = sink.finish();
/// let t = cols.table("sched_wakeup").unwrap();
/// assert_eq!(t.ts, [100_000_000_000]);
/// assert_eq!(t.fields[3], [3]);
/// assert_eq!(cols.strings[t.fields[0][0] as usize], "small-0");
/// ```
#[derive(Debug, Default)]
pub struct ColumnSink {
    cols: Columns,
    buf: Vec<u8>,
}

impl ColumnSink {
    /// An empty sink.
    pub fn new() -> Self {
        ColumnSink::default()
    }

    /// The tables.
    pub fn finish(self) -> Columns {
        self.cols
    }
}

impl TraceSink for ColumnSink {
    fn interest(&self) -> Interest {
        // every group, for `end_ns`: the last event may be one that is not kept
        Interest::ALL
    }

    fn begin(&mut self, nr_cpus: usize, _start_ns: Nanos) {
        self.cols.nr_cpus = nr_cpus;
    }

    fn record(&mut self, ctx: &Ctx<'_>, ev: &TraceEvent<'_>) {
        use TraceEvent as E;
        use Val::S as s;
        self.cols.end_ns = self.cols.end_ns.max(ts_us_ns(ctx.ts));
        let p = |x: u32| Val::I(i64::from(x));
        let i = |x: i32| Val::I(i64::from(x));
        // the `%*pb` span as the text trace prints it
        let mut span = String::new();
        if let E::SchedOverutilized { span: words, .. } = *ev {
            self.buf.clear();
            self.buf.extend_from_slice(b"0x");
            let nr_bits = if self.cols.nr_cpus == 0 {
                words.len() * 64
            } else {
                self.cols.nr_cpus
            };
            fmt::append(&mut self.buf, |c| c.cpumask(words, nr_bits));
            span = String::from_utf8_lossy(&self.buf).into_owned();
        }
        let (name, vals): (&str, Vec<Val<'_>>) = match *ev {
            E::SchedSwitch {
                prev,
                prev_state,
                next,
            } => (
                "sched_switch",
                vec![
                    s(prev.comm),
                    p(prev.pid),
                    i(prev.prio),
                    p(prev_state),
                    s(next.comm),
                    p(next.pid),
                    i(next.prio),
                ],
            ),
            E::SchedWaking { task, target_cpu } => (
                "sched_waking",
                vec![s(task.comm), p(task.pid), i(task.prio), p(target_cpu)],
            ),
            E::SchedWakeup { task, target_cpu } => (
                "sched_wakeup",
                vec![s(task.comm), p(task.pid), i(task.prio), p(target_cpu)],
            ),
            E::SchedWakeupNew { task, target_cpu } => (
                "sched_wakeup_new",
                vec![s(task.comm), p(task.pid), i(task.prio), p(target_cpu)],
            ),
            E::SchedMigrateTask {
                task,
                orig_cpu,
                dest_cpu,
            } => (
                "sched_migrate_task",
                vec![
                    s(task.comm),
                    p(task.pid),
                    i(task.prio),
                    p(orig_cpu),
                    p(dest_cpu),
                ],
            ),
            E::SchedProcessExit { task } => (
                "sched_process_exit",
                vec![s(task.comm), p(task.pid), i(task.prio)],
            ),
            E::SchedPiSetprio {
                task,
                oldprio,
                newprio,
            } => (
                "sched_pi_setprio",
                vec![s(task.comm), p(task.pid), i(oldprio), i(newprio)],
            ),
            E::TaskRename {
                pid,
                oldcomm,
                newcomm,
            } => (
                "task_rename",
                vec![p(pid), s(oldcomm), s(newcomm), Val::I(0)],
            ),
            E::CpuFrequency { cpu_id, state } => ("cpu_frequency", vec![u(state), p(cpu_id)]),
            E::CpuIdle { cpu_id, state } => ("cpu_idle", vec![i(state), p(cpu_id)]),
            E::SchedPeltSe {
                cpu,
                task,
                load,
                rbl_load,
                util,
                update_time,
            } => (
                "sched_pelt_se",
                vec![
                    p(cpu),
                    s("(null)"),
                    s(task.comm),
                    p(task.pid),
                    u(load),
                    u(rbl_load),
                    u(util),
                    u(update_time),
                ],
            ),
            E::SchedPeltCfs {
                cpu,
                load,
                rbl_load,
                util,
                update_time,
            } => (
                "sched_pelt_cfs",
                vec![
                    p(cpu),
                    s("/"),
                    u(load),
                    u(rbl_load),
                    u(util),
                    u(update_time),
                ],
            ),
            E::SchedPeltRt {
                cpu,
                load,
                rbl_load,
                util,
            } => ("sched_pelt_rt", vec![p(cpu), u(load), u(rbl_load), u(util)]),
            E::SchedPeltDl {
                cpu,
                load,
                rbl_load,
                util,
            } => ("sched_pelt_dl", vec![p(cpu), u(load), u(rbl_load), u(util)]),
            E::SchedUtilEstSe {
                cpu,
                task,
                enqueued,
                ewma,
                util,
            } => (
                "sched_util_est_se",
                vec![
                    p(cpu),
                    s("(null)"),
                    s(task.comm),
                    p(task.pid),
                    u(enqueued),
                    u(ewma),
                    u(util),
                ],
            ),
            E::SchedUtilEstCfs {
                cpu,
                enqueued,
                ewma,
                util,
            } => (
                "sched_util_est_cfs",
                vec![p(cpu), s("/"), u(enqueued), u(ewma), u(util)],
            ),
            E::SchedCpuCapacity {
                cpu,
                capacity,
                capacity_orig,
                capacity_curr,
            } => (
                "sched_cpu_capacity",
                vec![p(cpu), u(capacity), u(capacity_orig), u(capacity_curr)],
            ),
            E::SchedOverutilized { overutilized, .. } => (
                "sched_overutilized",
                vec![Val::I(i64::from(overutilized)), s(&span)],
            ),
            E::SchedHmpMigrate { task, dest, force } => (
                "sched_hmp_migrate",
                vec![s(task.comm), p(task.pid), p(dest), p(force)],
            ),
            _ => return,
        };
        if let Some(t) = table_index(name) {
            self.cols.push(t, ctx.ts, ctx.cpu, ctx.pid, &vals);
        }
    }
}

/// An error of [`read_text`]: the line (1-based) and what is wrong.
#[derive(Debug)]
pub enum ReadError {
    /// The file could not be read.
    Io(io::Error),
    /// A line is not what the text writer writes.
    Line(usize, String),
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::Io(e) => write!(f, "{e}"),
            ReadError::Line(n, why) => write!(f, "line {n}: {why}"),
        }
    }
}

impl std::error::Error for ReadError {}

/// Reads an ftrace text trace written by [`FtraceTextSink`](crate::FtraceTextSink) into
/// [`Columns`]: the same tables as a [`ColumnSink`] on the same run. Events outside
/// [`SCHEMA`] are skipped; a line of a kept event whose fields do not read is an error.
pub fn read_text(mut r: impl BufRead) -> Result<Columns, ReadError> {
    let mut cols = Columns::default();
    // ` name=` of every field, made once
    let keys: Vec<Vec<String>> = SCHEMA
        .iter()
        .map(|(_, f)| f.iter().map(|(name, _)| format!(" {name}=")).collect())
        .collect();
    let mut line = String::new();
    for n in 0.. {
        line.clear();
        if r.read_line(&mut line).map_err(ReadError::Io)? == 0 {
            break;
        }
        let line = line.trim_end_matches(['\n', '\r']);
        let bad = |why: &str| ReadError::Line(n + 1, why.to_string());
        if let Some(rest) = line.strip_prefix('#') {
            if let Some(c) = rest.trim().strip_prefix("cpus=") {
                cols.nr_cpus = c.trim().parse().map_err(|_| bad("bad `# cpus=`"))?;
            }
            continue;
        }
        if line.trim().is_empty() {
            continue;
        }
        // `COMM-PID [CPU] SECS.USECS: NAME: FIELDS`; COMM may hold `-` and spaces.
        // the first ` [` followed by digits and `]` (a comm may hold ` [` itself)
        let open = line
            .match_indices(" [")
            .map(|(i, _)| i)
            .find(|&i| {
                let rest = &line[i + 2..];
                rest.find(']')
                    .is_some_and(|j| j > 0 && rest[..j].bytes().all(|b| b.is_ascii_digit()))
            })
            .ok_or_else(|| bad("no ` [CPU]`"))?;
        let head = line[..open].trim_start();
        let dash = head.rfind('-').ok_or_else(|| bad("no `COMM-PID`"))?;
        let pid: u32 = head[dash + 1..]
            .trim()
            .parse()
            .map_err(|_| bad("bad pid"))?;
        let rest = &line[open + 2..];
        let close = rest.find(']').ok_or_else(|| bad("no `]`"))?;
        let cpu: u32 = rest[..close].parse().map_err(|_| bad("bad CPU"))?;
        let rest = rest[close + 1..].trim_start();
        let colon = rest.find(": ").ok_or_else(|| bad("no timestamp"))?;
        let ts = parse_ts(&rest[..colon]).ok_or_else(|| bad("bad timestamp"))?;
        cols.end_ns = cols.end_ns.max(ts_us_ns(ts));
        let rest = &rest[colon + 2..];
        let colon = rest.find(':').ok_or_else(|| bad("no event name"))?;
        let name = &rest[..colon];
        let Some(t) = table_index(name) else {
            continue;
        };
        let body = &rest[colon + 1..];
        let schema = SCHEMA[t].1;
        let mut at = 0;
        let mut raw: Vec<&str> = Vec::with_capacity(schema.len());
        for (k, (field, _)) in schema.iter().enumerate() {
            let key = &keys[t][k];
            let start = body[at..]
                .find(key.as_str())
                .map(|p| at + p + key.len())
                .ok_or_else(|| bad(&format!("{name}: no `{field}=`")))?;
            let end = match keys[t].get(k + 1) {
                Some(next) => body[start..]
                    .find(next.as_str())
                    .map(|p| start + p)
                    .ok_or_else(|| bad(&format!("{name}: no `{}`", next.trim_start())))?,
                None => body.len(),
            };
            raw.push(&body[start..end]);
            at = end;
        }
        let mut vals: Vec<Val<'_>> = Vec::with_capacity(schema.len());
        for ((field, kind), v) in schema.iter().zip(&raw) {
            vals.push(match kind {
                Kind::Str => Val::S(v),
                Kind::Int => {
                    let x: i64 = if let Ok(x) = v.parse::<i64>() {
                        x
                    } else {
                        return Err(bad(&format!("{name}: {field}={v} is not an integer")));
                    };
                    // cpu_idle's state is an s32 printed as u32 (4294967295 = −1)
                    if name == "cpu_idle" && *field == "state" {
                        Val::I(i64::from(x as u32 as i32))
                    } else {
                        Val::I(x)
                    }
                }
            });
        }
        cols.push(t, ts, cpu, pid, &vals);
    }
    Ok(cols)
}

/// `SECS.USECS` as ns.
fn parse_ts(s: &str) -> Option<Nanos> {
    let (secs, us) = s.trim().split_once('.')?;
    if us.len() != 6 {
        return None;
    }
    let secs: u64 = secs.parse().ok()?;
    let us: u64 = us.parse().ok()?;
    secs.checked_mul(NSEC_PER_SEC)?
        .checked_add(us * NSEC_PER_USEC)
}

#[cfg(test)]
mod tests {
    use super::*;
    use hetsched_core::trace::TaskRef;

    fn all_events(sink: &mut dyn TraceSink) {
        let a = TaskRef {
            comm: "a [b]-1",
            pid: 1001,
            prio: 120,
        };
        let b = TaskRef {
            comm: "<idle>",
            pid: 0,
            prio: 120,
        };
        let ctx = |ts, cpu| Ctx {
            ts,
            cpu,
            comm: "a [b]-1",
            pid: 1001,
        };
        sink.begin(6, 0);
        let evs = [
            TraceEvent::TaskRename {
                pid: 1001,
                oldcomm: "rt-app",
                newcomm: "a [b]-1",
            },
            TraceEvent::SchedWakeupNew {
                task: a,
                target_cpu: 2,
            },
            TraceEvent::SchedSwitch {
                prev: b,
                prev_state: 0,
                next: a,
            },
            TraceEvent::SchedMigrateTask {
                task: a,
                orig_cpu: 2,
                dest_cpu: 5,
            },
            TraceEvent::CpuFrequency {
                cpu_id: 5,
                state: 2_362_000,
            },
            TraceEvent::CpuIdle {
                cpu_id: 5,
                state: -1,
            },
            TraceEvent::SchedPeltSe {
                cpu: 5,
                task: a,
                load: 10,
                rbl_load: 11,
                util: 12,
                update_time: 1_000_123_456,
            },
            TraceEvent::SchedUtilEstCfs {
                cpu: 5,
                enqueued: 3,
                ewma: 3,
                util: 4,
            },
            TraceEvent::SchedOverutilized {
                overutilized: true,
                span: &[0x3f],
            },
            TraceEvent::SchedHmpMigrate {
                task: a,
                dest: 4,
                force: 3,
            },
            TraceEvent::SchedProcessExit { task: a },
            TraceEvent::CpufreqSchedThrottled { rem: 5 },
        ];
        for (k, ev) in evs.iter().enumerate() {
            sink.record(&ctx(1_000_000_000 + 1_234_567 * k as u64, k as u32 % 6), ev);
        }
        sink.end(2_000_000_000);
    }

    #[test]
    fn text_reads_back_to_the_same_columns() {
        let mut mem = ColumnSink::new();
        all_events(&mut mem);
        let mem = mem.finish();
        let mut text = crate::FtraceTextSink::new(Vec::new());
        all_events(&mut text);
        let bytes = text.into_inner().unwrap();
        let read = read_text(&bytes[..]).unwrap();
        assert_eq!(read.nr_cpus, 6);
        assert_eq!(mem.len(), 11, "every kept event, not the throttled one");
        assert_eq!(
            mem.end_ns,
            1_000_000_000 + 13_580_000,
            "the throttled one's time"
        );
        assert_eq!(read, mem);
        let idle = mem.table("cpu_idle").unwrap();
        assert_eq!(idle.fields[0], [-1]);
        let ou = mem.table("sched_overutilized").unwrap();
        assert_eq!(mem.strings[ou.fields[1][0] as usize], "0x3f");
        let pelt = mem.table("sched_pelt_se").unwrap();
        assert_eq!(pelt.ts, [1_007_407_000]);
        assert_eq!(pelt.fields[7], [1_000_123_456]);
    }

    #[test]
    fn bad_lines_name_their_line() {
        let text = "# tracer: nop\n#\n\
            x-1 [000]     1.000000: cpu_frequency:        state=abc cpu_id=0\n";
        let e = read_text(text.as_bytes()).unwrap_err().to_string();
        assert_eq!(e, "line 3: cpu_frequency: state=abc is not an integer");
        let e = read_text("garbage\n".as_bytes()).unwrap_err().to_string();
        assert!(e.starts_with("line 1: "), "{e}");
    }
}
