//! hetsched-core: the simulation engine and the kernel mechanisms it models.
//!
//! A tour:
//! - [`time`]: integer-nanosecond time.
//! - [`platform`]: CPUs, clusters, performance domains, OPPs, capacity derivation.
//! - [`workload`]: tasks, phases and events with rt-app's meaning.
//! - [`pelt`]: PELT and util_est with the kernel's fixed-point arithmetic.
//! - [`trace`]: trace events (kernel tracepoint names and fields) and sinks.

pub mod pelt;
pub mod platform;
pub mod time;
pub mod trace;
pub mod workload;
