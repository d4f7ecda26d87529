//! Metrics computed in one pass over the event stream: a [`TraceSink`] like any other.
//!
//! Per task: CPU time, wait time (runnable but not running), wake-up latency percentiles
//! (wake-up to first switch-in), completion time, migrations, residency per CPU. Per CPU:
//! busy and idle time, time per OPP, time per idle state. Everything is accumulated in
//! integer nanoseconds; floats appear only in the [`RunResult`] written at the end.
//!
//! Memory does not grow with simulated time: the wake-up latencies go into a
//! [`LatencyHistogram`] (log-bucketed, exact below 1,024 ns, percentiles within 1/512 of
//! the exact value above), and everything else is a counter or a per-CPU, per-OPP or
//! per-idle-state accumulator.
//!
//! With [`MetricsSink::with_energy`] the same events also feed an [`EnergyMeter`]: each
//! CPU's time busy at each frequency and in each idle state (from `cpu_frequency`,
//! `cpu_idle` and the idle↔busy `sched_switch`es).
//!
//! [`RunResult`]: crate::sim::RunResult
//! [`TraceSink`]: crate::trace::TraceSink

mod events;
mod task;

use crate::energy::accounting::EnergyMeter;
use crate::time::{Nanos, NSEC_PER_SEC, NSEC_PER_USEC};
use serde::{Deserialize, Serialize};
use std::cmp::Ordering;
use std::collections::BTreeMap;
use task::{Residency, TaskClock, NEVER};

/// rt-app's main thread's pid; the workload's threads follow it, and lower pids are
/// kernel threads (`migration/N`, `sugov:N`).
pub const FIRST_USER_PID: u32 = 1000;

/// Wake-up latency summary in µs. In results the percentiles come from a
/// [`LatencyHistogram`]: exact below 1,024 ns, within 1/512 of the exact nearest rank
/// above; count, mean and maximum are exact.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct LatencyStats {
    /// Number of wake-ups measured.
    pub count: u64,
    /// Mean (exact).
    pub mean: f64,
    /// Median (nearest rank; within 1/512, see [`LatencyHistogram`]).
    pub p50: f64,
    /// 90th percentile (nearest rank; within 1/512).
    pub p90: f64,
    /// 99th percentile (nearest rank; within 1/512).
    pub p99: f64,
    /// Maximum (exact).
    pub max: f64,
}

impl LatencyStats {
    /// Summarises latencies given in ns (sorted in place), exactly: the reference
    /// [`LatencyHistogram::stats`] is within 1/512 of.
    pub fn from_ns(v: &mut [Nanos]) -> LatencyStats {
        if v.is_empty() {
            return LatencyStats::default();
        }
        v.sort_unstable();
        let rank = |p: u64| -> f64 {
            let n = v.len() as u64;
            let idx = (p * n).div_ceil(100).clamp(1, n) - 1;
            v[idx as usize] as f64 / NSEC_PER_USEC as f64
        };
        let sum: u128 = v.iter().map(|&x| u128::from(x)).sum();
        LatencyStats {
            count: v.len() as u64,
            mean: (sum as f64 / v.len() as f64) / NSEC_PER_USEC as f64,
            p50: rank(50),
            p90: rank(90),
            p99: rank(99),
            max: *v.last().unwrap_or(&0) as f64 / NSEC_PER_USEC as f64,
        }
    }
}

/// Sub-bucket bits of [`LatencyHistogram`]: values below 2^10 ns fall in buckets of
/// width 1 (exact); each range [2^e, 2^(e+1)) above is cut into 2^9 = 512 buckets of
/// width 2^(e-9), so a bucket is never wider than 1/512 of its lower bound.
pub const LATENCY_HIST_BITS: u32 = 10;
const HALF: usize = 1 << (LATENCY_HIST_BITS - 1);
/// Buckets are allocated in pages of 16, only where a value fell.
const PAGE_BITS: u32 = 4;
const PAGE: usize = 1 << PAGE_BITS;

/// The bucket index of `v` ns (the tests' name for [`bucket_and_offset`]'s index).
#[cfg(test)]
fn bucket_of(v: Nanos) -> usize {
    bucket_and_offset(v).0
}

/// The bucket index of `v` ns: `v` itself below 2^[`LATENCY_HIST_BITS`]; above, the
/// power of two and the next `LATENCY_HIST_BITS - 1` bits of `v` (HDR-histogram layout).
/// And the offset of `v` from the bucket's lowest value ([`latency_bucket_bounds`]),
/// which is the low `shift` bits the index drops: the bucket starts at
/// `(v >> shift) << shift` (`shift` 0, offset 0, below 2^10 ns).
///
/// `v | 2^9` has the power of two of `v` from 2^10 up, and 2^9 below: the shift is that
/// power less 9 with no clamp at 0 (the same index and offset as
/// `(63 - (v | 1).leading_zeros()).saturating_sub(9)`, which debug builds check).
#[inline]
fn bucket_and_offset(v: Nanos) -> (usize, Nanos) {
    let log2 = 63 - (v | HALF as Nanos).leading_zeros();
    let shift = log2 - (LATENCY_HIST_BITS - 1);
    debug_assert_eq!(
        shift,
        (63 - (v | 1).leading_zeros()).saturating_sub(LATENCY_HIST_BITS - 1)
    );
    let i = ((shift as usize) << (LATENCY_HIST_BITS - 1)) + (v >> shift) as usize;
    (i, v & ((1 << shift) - 1))
}

/// The values of bucket `i`: its lowest value `lo` and its width `w`, the bucket being
/// `lo ..= lo + (w - 1)` (`w` is 1 below 2^10 ns and at most `lo / 512` above; the top
/// bucket ends at `u64::MAX`, so its end is not representable as `lo + w`).
pub fn latency_bucket_bounds(i: usize) -> (Nanos, Nanos) {
    if i < 2 * HALF {
        return (i as Nanos, 1);
    }
    let shift = (i / HALF - 1) as u32;
    let sub = (i - ((shift as usize) << (LATENCY_HIST_BITS - 1))) as Nanos;
    (sub << shift, 1 << shift)
}

#[derive(Debug, Clone, Default)]
struct HistPage {
    /// Samples in each bucket, modulo 2^32 (the wraps are in `LatencyHistogram::wraps`).
    count: [u32; PAGE],
    /// Sum of the offsets from the bucket's lowest value of the values that fell in it,
    /// ns (saturating: it would take over 2^64 / width samples in one bucket).
    sum: [u64; PAGE],
}

/// Wake-up latencies of one task in memory that does not grow with the number of
/// samples: exact count, sum (so the mean) and maximum, and a log-bucketed histogram for
/// the percentiles.
///
/// Buckets: width 1 ns below 1,024 ns; above, 512 buckets per power of two, so a bucket
/// `[lo, hi)` has `hi - lo <= lo / 512`. Each bucket keeps its count and the sum of its
/// values' offsets from `lo` (which cannot overflow before 2^64 / width samples, and
/// saturates then). A percentile (nearest rank, as [`LatencyStats::from_ns`]) is the mean of the
/// values in the bucket that holds the rank, rounded to the ns: exact below 1,024 ns and
/// whenever that bucket's values are all equal, and otherwise within 1/512 (0.2 %) of the
/// exact percentile, as both lie in the same bucket. Memory: 192-byte pages of 16 buckets,
/// allocated where a value fell, and an index of 8 bytes per page; at most 1,792 pages
/// whatever the values (u64 ns). The count is the sum of the buckets' counts (not kept
/// beside them: one add fewer per sample).
#[derive(Debug, Clone, Default)]
pub struct LatencyHistogram {
    sum: u128,
    max: Nanos,
    pages: Vec<Option<Box<HistPage>>>,
    /// Bucket index → how many times its 32-bit count wrapped (2^32 samples in one
    /// bucket: in practice never).
    wraps: BTreeMap<usize, u64>,
}

impl LatencyHistogram {
    /// An empty histogram.
    pub fn new() -> LatencyHistogram {
        LatencyHistogram::default()
    }

    /// Adds one latency, ns.
    #[inline]
    pub fn record(&mut self, v: Nanos) {
        self.sum += u128::from(v);
        self.max = self.max.max(v);
        let (i, off) = bucket_and_offset(v);
        debug_assert_eq!(off, v - latency_bucket_bounds(i).0);
        let (p, o) = (i >> PAGE_BITS, i & (PAGE - 1));
        let page = match self.pages.get_mut(p) {
            Some(Some(page)) => page,
            _ => self.new_page(p),
        };
        page.sum[o] = page.sum[o].saturating_add(off);
        // the 32-bit count wraps to 0 after 2^32 samples: one test of the result
        let c = page.count[o].wrapping_add(1);
        page.count[o] = c;
        if c == 0 {
            self.count_wrapped(i);
        }
    }

    /// Bucket `i`'s 32-bit count wrapped: 2^32 samples more in `wraps`.
    #[cold]
    #[inline(never)]
    fn count_wrapped(&mut self, i: usize) {
        *self.wraps.entry(i).or_default() += 1;
    }

    /// Page `p`, allocated: the first value to fall in it.
    #[cold]
    #[inline(never)]
    fn new_page(&mut self, p: usize) -> &mut HistPage {
        if p >= self.pages.len() {
            self.pages.resize_with(p + 1, || None);
        }
        self.pages[p].get_or_insert_with(Box::default)
    }

    /// Samples in bucket `i` of page `page`.
    fn bucket_count(&self, page: &HistPage, i: usize) -> u64 {
        let c = u64::from(page.count[i & (PAGE - 1)]);
        if self.wraps.is_empty() {
            c
        } else {
            c + (self.wraps.get(&i).copied().unwrap_or(0) << 32)
        }
    }

    /// Number of values recorded: the sum of the buckets' counts.
    pub fn count(&self) -> u64 {
        self.pages
            .iter()
            .enumerate()
            .filter_map(|(p, page)| Some((p, page.as_deref()?)))
            .map(|(p, page)| {
                (0..PAGE)
                    .map(|o| self.bucket_count(page, (p << PAGE_BITS) + o))
                    .sum::<u64>()
            })
            .sum()
    }

    /// Bytes held by the buckets (pages and their index).
    pub fn heap_bytes(&self) -> usize {
        self.pages.capacity() * std::mem::size_of::<Option<Box<HistPage>>>()
            + self.pages.iter().flatten().count() * std::mem::size_of::<HistPage>()
    }

    /// The summary in µs: count, mean and maximum exact, percentiles as described on
    /// [`LatencyHistogram`].
    pub fn stats(&self) -> LatencyStats {
        let n = self.count();
        if n == 0 {
            return LatencyStats::default();
        }
        let ranks = [50u64, 90, 99].map(|p| (p * n).div_ceil(100).clamp(1, n));
        let mut pct = [0.0f64; 3];
        let mut k = 0;
        let mut seen = 0u64;
        'pages: for (p, page) in self.pages.iter().enumerate() {
            let Some(page) = page else {
                continue;
            };
            for (o, &sum) in page.sum.iter().enumerate() {
                let c = self.bucket_count(page, (p << PAGE_BITS) + o);
                if c == 0 {
                    continue;
                }
                seen += c;
                while k < ranks.len() && seen >= ranks[k] {
                    // The bucket's mean to the nearest ns: exact when its values are
                    // equal, and in the bucket (its values are whole ns).
                    let (lo, w) = latency_bucket_bounds((p << PAGE_BITS) + o);
                    let off = (u128::from(sum) + u128::from(c / 2)) / u128::from(c);
                    let ns = lo + (off.min(u128::from(w - 1)) as Nanos);
                    pct[k] = ns as f64 / NSEC_PER_USEC as f64;
                    k += 1;
                }
                if k == ranks.len() {
                    break 'pages;
                }
            }
        }
        LatencyStats {
            count: n,
            mean: (self.sum as f64 / n as f64) / NSEC_PER_USEC as f64,
            p50: pct[0],
            p90: pct[1],
            p99: pct[2],
            max: self.max as f64 / NSEC_PER_USEC as f64,
        }
    }
}

/// Metrics of one task (thread).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TaskMetrics {
    /// pid.
    pub pid: u32,
    /// comm.
    pub comm: String,
    /// Time running, s.
    pub cpu_time_s: f64,
    /// Time runnable but not running, s.
    pub wait_time_s: f64,
    /// Number of wake-ups (including the first).
    pub wakeups: u64,
    /// Wake-up latency (wake-up to running), µs.
    pub wakeup_latency_us: LatencyStats,
    /// First wake-up, s from the start of the run.
    pub start_s: f64,
    /// Exit minus first wake-up, s; `null` when the task had not finished at the end.
    pub completion_s: Option<f64>,
    /// Number of migrations.
    pub migrations: u64,
    /// Running time per CPU, s.
    pub residency_s: Vec<f64>,
}

/// Metrics of one CPU.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CpuMetrics {
    /// CPU number.
    pub cpu: u32,
    /// Time running a task, s.
    pub busy_s: f64,
    /// Time idle, s.
    pub idle_s: f64,
    /// Time at each frequency (kHz → s), busy or idle.
    pub freq_residency_s: BTreeMap<u64, f64>,
    /// Time in each idle state (index → s); index 0 is WFI.
    pub idle_state_residency_s: BTreeMap<u32, f64>,
}

/// [`MetricsSink::results`]: the tasks in pid order, split at [`FIRST_USER_PID`], and
/// the CPUs in CPU order.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricsResults {
    /// The workload's threads (pid above [`FIRST_USER_PID`]).
    pub tasks: Vec<TaskMetrics>,
    /// The kernel threads (pid below [`FIRST_USER_PID`]: `sugov:N`, `migration/N`). Their
    /// CPU time is in the CPUs' busy time.
    pub kernel_threads: Vec<TaskMetrics>,
    /// rt-app's main thread (pid [`FIRST_USER_PID`]), when it ran. Its CPU time is in the
    /// CPUs' busy time.
    pub main_thread: Option<TaskMetrics>,
    /// Per CPU.
    pub cpus: Vec<CpuMetrics>,
}

/// What the sink keeps of a task beside its [`TaskClock`].
#[derive(Debug, Default)]
struct TaskAcc {
    pid: u32,
    comm: String,
    latency: LatencyHistogram,
    exit: Option<Nanos>,
    migrations: u64,
    residency: Residency,
}

/// A CPU's accumulators. Its busy time is not among them: it is the sum of the tasks'
/// running time on the CPU (their [`Residency`], charged at the same switches), added
/// up once for the results (`MetricsSink::all_results`); debug builds also keep it here,
/// as the switches charged it before, and check the two equal.
#[derive(Debug, Default, Clone)]
struct CpuAcc {
    /// Debug builds: time running a task, and since when it runs one.
    #[cfg(debug_assertions)]
    busy: Nanos,
    #[cfg(debug_assertions)]
    busy_since: Option<Nanos>,
    freq: u64,
    freq_since: Nanos,
    /// Time per frequency (kHz, ns), in the order the frequencies were first charged: a
    /// CPU has a few OPPs, and a short vector is searched faster than a map (the results
    /// sort them, as the map did).
    freq_res: Vec<(u64, Nanos)>,
    idle_state: Option<u32>,
    idle_since: Nanos,
    /// Time per idle state index.
    idle_res: Vec<Nanos>,
    /// Energy accounting: start of the current busy or idle interval, and whether busy.
    e_since: Nanos,
    e_busy: bool,
    /// The meter charges the CPU's busy intervals ([`EnergyMeter::charges_busy`]: its
    /// domain has an EM), fixed at [`TraceSink::begin`]: a busy interval of a CPU without
    /// one is not handed to [`EnergyMeter::busy`], which would return at once.
    ///
    /// [`TraceSink::begin`]: crate::trace::TraceSink::begin
    busy_em: bool,
}

/// `MetricsSink::by_pid`'s entry of a pid not met yet: no index of `clocks` (a sink would
/// need 2^32 − 1 tasks to reach it).
const NO_TASK: u32 = u32::MAX;

/// Wake-up latencies [`MetricsSink`] buffers before adding them to the histograms.
const LATENCY_BATCH: usize = 256;

/// [`MetricsSink`]'s wake-up latencies not yet in their task's histogram: the first
/// `len` of `buf`. A fixed array, so that a push's index is in range by the test of a
/// full buffer alone (a `Vec` tested its capacity again).
#[derive(Debug)]
struct LatencyBuffer {
    len: usize,
    buf: Box<[(u32, Nanos); LATENCY_BATCH]>,
}

impl Default for LatencyBuffer {
    fn default() -> LatencyBuffer {
        LatencyBuffer {
            len: 0,
            buf: Box::new([(0, 0); LATENCY_BATCH]),
        }
    }
}

/// The metrics sink.
#[derive(Debug, Default)]
pub struct MetricsSink {
    start: Nanos,
    end: Nanos,
    nr_cpus: usize,
    tasks: Vec<TaskAcc>,
    /// The tasks' per-event fields, by the same index as `tasks`.
    clocks: Vec<TaskClock>,
    /// Wake-up latencies not yet in their task's histogram: `(task index, ns)`, added in
    /// batches of [`LATENCY_BATCH`] (a batch's updates are independent of one another, so
    /// the processor overlaps their cache misses over the tasks' histograms).
    latencies: LatencyBuffer,
    /// pid → index in `tasks` and `clocks` ([`NO_TASK`] = unknown): pids are small and
    /// dense.
    by_pid: Vec<u32>,
    cpus: Vec<CpuAcc>,
    energy: Option<EnergyMeter>,
}

impl MetricsSink {
    /// A new sink.
    pub fn new() -> MetricsSink {
        MetricsSink::default()
    }

    /// A sink that also meters energy.
    pub fn with_energy(meter: EnergyMeter) -> MetricsSink {
        MetricsSink {
            energy: Some(meter),
            ..MetricsSink::default()
        }
    }

    /// The energy meter, when the sink has one.
    pub fn energy(&self) -> Option<&EnergyMeter> {
        self.energy.as_ref()
    }

    /// The index of task `pid` in `tasks` and `clocks`, a new task named `comm` the
    /// first time.
    #[inline]
    fn index(&mut self, pid: u32, comm: &str) -> usize {
        self.index_of(pid, || comm)
    }

    /// [`MetricsSink::index`] with the comm returned by `comm`, called only for a task
    /// met for the first time.
    ///
    /// An unknown pid's [`NO_TASK`] is no index of `clocks`, so the test that the index
    /// is one also tells a known task: the caller's `clocks[i]` that follows needs no
    /// other test.
    #[inline(always)]
    fn index_of<'a>(&mut self, pid: u32, comm: impl FnOnce() -> &'a str) -> usize {
        match self.by_pid.get(pid as usize) {
            Some(&i) if (i as usize) < self.clocks.len() => i as usize,
            _ => self.add_task(pid, comm()),
        }
    }

    /// A task not seen before: its accumulators, and its index.
    #[cold]
    #[inline(never)]
    fn add_task(&mut self, pid: u32, comm: &str) -> usize {
        let p = pid as usize;
        if p >= self.by_pid.len() {
            self.by_pid.resize(p + 1, NO_TASK);
        }
        self.tasks.push(TaskAcc {
            pid,
            comm: comm.to_string(),
            residency: Residency::new(self.nr_cpus),
            ..TaskAcc::default()
        });
        self.clocks.push(TaskClock::default());
        debug_assert!(
            self.clocks.len() == self.tasks.len() && self.tasks.len() <= NO_TASK as usize
        );
        self.by_pid[p] = (self.tasks.len() - 1) as u32;
        self.tasks.len() - 1
    }

    /// Adds the buffered wake-up latencies to their tasks' histograms.
    fn flush_latencies(&mut self) {
        let b = &mut self.latencies;
        for &(i, v) in &b.buf[..b.len] {
            self.tasks[i as usize].latency.record(v);
        }
        b.len = 0;
    }

    /// The results, after [`TraceSink::end`]: every task's built once, split by pid as
    /// [`RunResult`] reports them.
    ///
    /// [`RunResult`]: crate::sim::RunResult
    /// [`TraceSink::end`]: crate::trace::TraceSink::end
    pub fn results(&self) -> MetricsResults {
        let (all, cpus) = self.all_results();
        let mut r = MetricsResults {
            tasks: Vec::new(),
            kernel_threads: Vec::new(),
            main_thread: None,
            cpus,
        };
        for t in all {
            match t.pid.cmp(&FIRST_USER_PID) {
                Ordering::Less => r.kernel_threads.push(t),
                Ordering::Equal => r.main_thread = Some(t),
                Ordering::Greater => r.tasks.push(t),
            }
        }
        r
    }

    /// Every task's results in pid order, and every CPU's.
    fn all_results(&self) -> (Vec<TaskMetrics>, Vec<CpuMetrics>) {
        debug_assert!(self.latencies.len == 0, "results before the end of the run");
        let s = |ns: Nanos| ns as f64 / NSEC_PER_SEC as f64;
        let mut tasks: Vec<TaskMetrics> = self
            .tasks
            .iter()
            .zip(&self.clocks)
            .map(|(t, c)| {
                let residency = c.residency(&t.residency);
                let start = (c.start != NEVER).then_some(c.start);
                TaskMetrics {
                    pid: t.pid,
                    comm: t.comm.clone(),
                    cpu_time_s: s(residency.iter().sum()),
                    wait_time_s: s(c.wait),
                    wakeups: c.wakeups,
                    wakeup_latency_us: t.latency.stats(),
                    start_s: s(start.unwrap_or(self.start) - self.start),
                    completion_s: match (start, t.exit) {
                        (Some(a), Some(b)) => Some(s(b - a)),
                        _ => None,
                    },
                    migrations: t.migrations,
                    residency_s: residency.iter().map(|&x| s(x)).collect(),
                }
            })
            .collect();
        tasks.sort_by_key(|t| t.pid);
        let total = self.end - self.start;
        // each CPU's busy time: its tasks' running time on it (every switch-out charges
        // both the same interval since the switch-in)
        let mut busy = vec![0; self.cpus.len()];
        for (t, c) in self.tasks.iter().zip(&self.clocks) {
            for (b, r) in busy.iter_mut().zip(c.residency(&t.residency)) {
                *b += r;
            }
        }
        let cpus = self
            .cpus
            .iter()
            .zip(busy)
            .enumerate()
            .map(|(i, (c, busy))| CpuMetrics {
                cpu: i as u32,
                busy_s: {
                    #[cfg(debug_assertions)]
                    debug_assert_eq!(busy, c.busy, "CPU {i}'s busy time");
                    s(busy)
                },
                idle_s: s(total.saturating_sub(busy)),
                freq_residency_s: c.freq_res.iter().map(|&(k, v)| (k, s(v))).collect(),
                idle_state_residency_s: c
                    .idle_res
                    .iter()
                    .enumerate()
                    .filter(|(_, &v)| v > 0)
                    .map(|(k, &v)| (k as u32, s(v)))
                    .collect(),
            })
            .collect();
        (tasks, cpus)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_nearest_rank() {
        let mut v: Vec<Nanos> = (1..=100).map(|x| x * 1000).collect();
        let s = LatencyStats::from_ns(&mut v);
        assert_eq!(s.p50, 50.0);
        assert_eq!(s.p90, 90.0);
        assert_eq!(s.p99, 99.0);
        assert_eq!(s.max, 100.0);
        assert_eq!(s.count, 100);
        assert_eq!(LatencyStats::from_ns(&mut []).count, 0);
        assert_eq!(LatencyHistogram::new().stats(), LatencyStats::default());
    }

    /// A fixed xorshift generator: deterministic random data without a dependency.
    struct XorShift(u64);
    impl XorShift {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
    }

    #[test]
    fn bucket_bounds_hold_their_values_within_1_512() {
        let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
        let mut values: Vec<Nanos> = (0..5000).collect();
        values.extend((0..64).flat_map(|s| [1u64 << s, (1u64 << s) - 1, (1u64 << s) + 1]));
        values.extend((0..100_000).map(|_| rng.next() >> (rng.next() % 64)));
        values.push(u64::MAX);
        for v in values {
            let i = bucket_of(v);
            let (lo, w) = latency_bucket_bounds(i);
            assert!(lo <= v && v - lo < w, "{v} in bucket {i} [{lo}, +{w})");
            assert!(w == 1 || w <= lo / 512, "{v}: [{lo}, +{w})");
            if v < 1024 {
                assert_eq!(w, 1);
            }
            assert!(i < 1792 * PAGE);
        }
    }

    /// On random data of several shapes the histogram's count, mean and maximum are the
    /// exact ones, and each percentile is within 1/512 of the exact nearest rank (exact
    /// below 1,024 ns).
    #[test]
    fn percentiles_within_1_512_of_exact_on_random_data() {
        let mut rng = XorShift(20261126);
        for case in 0..60u64 {
            let n = 1 + (rng.next() % 50_000) as usize;
            let v: Vec<Nanos> = (0..n)
                .map(|_| match case % 4 {
                    // uniform below 2^k ns, k from 4 to 33
                    0 => rng.next() % (1u64 << (4 + case % 30)),
                    // log-uniform from 1 ns to about 1 s
                    1 => rng.next() >> (34 + rng.next() % 30),
                    // a few repeated values and a tail, as a simulator's latencies
                    2 => {
                        [0, 0, 0, 1_500, 4_630_578, 3_907_835][(rng.next() % 6) as usize]
                            + if rng.next() % 10 == 0 {
                                rng.next() % 50_000_000
                            } else {
                                0
                            }
                    }
                    // small values only: the exact range
                    _ => rng.next() % 1024,
                })
                .collect();
            let mut h = LatencyHistogram::new();
            for &x in &v {
                h.record(x);
            }
            let got = h.stats();
            let want = LatencyStats::from_ns(&mut v.clone());
            assert_eq!(got.count, want.count);
            assert_eq!(got.mean, want.mean);
            assert_eq!(got.max, want.max);
            for (g, w) in [
                (got.p50, want.p50),
                (got.p90, want.p90),
                (got.p99, want.p99),
            ] {
                let (g, w) = (g * 1000.0, w * 1000.0); // ns
                if w < 1024.0 {
                    assert_eq!(g, w, "case {case}: exact below 1024 ns");
                } else {
                    assert!((g - w).abs() <= w / 512.0 + 1e-6, "case {case}: {g} vs {w}");
                }
            }
        }
    }

    /// A bucket's 32-bit count wraps into `wraps`: the ranks still see every sample.
    #[test]
    fn bucket_counts_past_2_pow_32() {
        let mut h = LatencyHistogram::new();
        h.record(5_000);
        let (p, o) = (bucket_of(5_000) >> PAGE_BITS, bucket_of(5_000) & (PAGE - 1));
        // As if u32::MAX samples of 5 µs had been recorded.
        h.pages[p].as_mut().unwrap().count[o] = u32::MAX;
        let off5 = 5_000 - latency_bucket_bounds(bucket_of(5_000)).0;
        h.pages[p].as_mut().unwrap().sum[o] = off5 * u64::from(u32::MAX);
        h.sum = 5_000 * u128::from(u32::MAX);
        for _ in 0..10 {
            h.record(5_000);
        }
        let n5 = u64::from(u32::MAX) + 10;
        assert_eq!(h.wraps.get(&bucket_of(5_000)), Some(&1));
        assert_eq!(h.count(), n5);
        // And u32::MAX / 10 samples of 2 ms, so that p99 is one of them.
        h.record(2_000_000);
        let (p, o) = (
            bucket_of(2_000_000) >> PAGE_BITS,
            bucket_of(2_000_000) & (PAGE - 1),
        );
        let m = u32::MAX / 10;
        h.pages[p].as_mut().unwrap().count[o] = m;
        let off2 = 2_000_000 - latency_bucket_bounds(bucket_of(2_000_000)).0;
        h.pages[p].as_mut().unwrap().sum[o] = off2 * u64::from(m);
        h.sum = 5_000 * u128::from(n5) + 2_000_000 * u128::from(m);
        let s = h.stats();
        assert_eq!(s.count, n5 + u64::from(m));
        assert_eq!((s.p50, s.p90, s.p99, s.max), (5.0, 5.0, 2000.0, 2000.0));
    }

    /// Equal values in a bucket give the exact value, whatever the bucket's width.
    #[test]
    fn equal_values_give_exact_percentiles() {
        let mut h = LatencyHistogram::new();
        for _ in 0..1000 {
            h.record(4_630_578);
        }
        h.record(10_474_322);
        let s = h.stats();
        assert_eq!((s.p50, s.p99, s.max), (4630.578, 4630.578, 10474.322));
    }

    /// The memory does not grow with the number of samples: 100 times more samples of the
    /// same values hold the same pages; and it is bounded whatever the values.
    #[test]
    fn memory_does_not_grow_with_samples() {
        let mut rng = XorShift(7);
        let set: Vec<Nanos> = (0..5000).map(|_| rng.next() % 50_000_000).collect();
        let mut h = LatencyHistogram::new();
        for &x in &set {
            h.record(x);
        }
        let once = h.heap_bytes();
        for _ in 0..99 {
            for &x in &set {
                h.record(x);
            }
        }
        assert_eq!(h.heap_bytes(), once);
        assert_eq!(h.count(), 500_000);
        let mut all = LatencyHistogram::new();
        for _ in 0..200_000 {
            all.record(rng.next() >> (rng.next() % 64));
        }
        all.record(u64::MAX);
        let bound = 1792 * (8 + std::mem::size_of::<HistPage>()) + 1792 * 8;
        assert!(all.heap_bytes() <= bound, "{} > {bound}", all.heap_bytes());
    }
}
