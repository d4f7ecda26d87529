//! Simulated time: integer nanoseconds, as `rq->clock` is in the kernel.

/// A point or span of simulated time in nanoseconds.
pub type Nanos = u64;

/// Nanoseconds per microsecond.
pub const NSEC_PER_USEC: Nanos = 1_000;
/// Nanoseconds per millisecond.
pub const NSEC_PER_MSEC: Nanos = 1_000_000;
/// Nanoseconds per second.
pub const NSEC_PER_SEC: Nanos = 1_000_000_000;

/// Formats nanoseconds as ftrace does: seconds with six decimals (`100.000002`).
pub fn fmt_ftrace_ts(ns: Nanos) -> String {
    format!(
        "{}.{:06}",
        ns / NSEC_PER_SEC,
        (ns % NSEC_PER_SEC) / NSEC_PER_USEC
    )
}
