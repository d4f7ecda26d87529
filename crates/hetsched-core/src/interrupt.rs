//! A process-wide request to stop, set from a signal handler (the CLI's SIGINT/SIGTERM)
//! and polled by the simulation loop every [`POLL_EVERY`] events: a run that sees it
//! stops and [`crate::run`] returns [`crate::RunError::Interrupted`]. Nothing in the
//! library sets it; without a request a run is unchanged to the byte.

use std::sync::atomic::{AtomicI32, Ordering};

/// The signal number asked to stop (0: none).
static SIGNAL: AtomicI32 = AtomicI32::new(0);

/// How many events the loop processes between two looks at the request (a power of two:
/// the test is a mask and a relaxed load, well under a nanosecond per event).
pub const POLL_EVERY: u64 = 1 << 12;

/// Asks every running simulation to stop because of `signal` (the first request wins).
/// Async-signal-safe: one atomic operation.
pub fn request(signal: i32) {
    let _ = SIGNAL.compare_exchange(0, signal, Ordering::Relaxed, Ordering::Relaxed);
}

/// The signal that asked to stop, if any.
pub fn requested() -> Option<i32> {
    match SIGNAL.load(Ordering::Relaxed) {
        0 => None,
        s => Some(s),
    }
}

/// The signal's name: `SIGINT`, `SIGTERM`, `SIGHUP`, or `signal N`.
pub fn signal_name(signal: i32) -> String {
    match signal {
        1 => "SIGHUP".into(),
        2 => "SIGINT".into(),
        15 => "SIGTERM".into(),
        n => format!("signal {n}"),
    }
}
