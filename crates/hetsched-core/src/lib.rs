//! hetsched-core: the simulation engine and the kernel mechanisms it models.
//!
//! A tour:
//! - [`time`]: integer-nanosecond time.
//! - [`text`]: input bytes as UTF-8, with the position of the first invalid byte.
//! - [`engine`]: the event queue and the run's seeded RNG.
//! - [`platform`]: CPUs, clusters, performance domains, OPPs, capacity derivation.
//! - [`workload`]: tasks, phases and events with rt-app's meaning.
//! - [`noise`]: the seeded noise model for repeated runs (a workload transform).
//! - [`pelt`]: PELT and util_est with the kernel's fixed-point arithmetic.
//! - [`energy`]: the Energy Model, EAS placement (`find_energy_efficient_cpu`), over-utilisation
//!   and energy accounting.
//! - [`cpufreq`]: `effective_cpu_util()` and the schedutil governor.
//! - [`sched`]: weights, fixed-point helpers, CPU masks, the fair class (EEVDF / CFS).
//! - [`policy`]: placement and balancing decisions (read a view, return decisions).
//! - [`options`]: user options and their resolution into [`options::Settings`].
//! - [`trace`]: trace events (kernel tracepoint names and fields) and sinks.
//! - [`metrics`]: the metrics sink and result types.
//! - [`interrupt`]: the process-wide stop request (SIGINT/SIGTERM) the run loop polls.
//! - [`sim`]: the simulator; [`sim::run`] is the one call everything else builds on.

pub mod cpufreq;
pub mod energy;
pub mod engine;
pub mod interrupt;
pub mod metrics;
pub mod noise;
pub mod options;
pub mod pelt;
pub mod platform;
pub mod policy;
pub mod sched;
pub mod sim;
pub mod text;
pub mod time;
pub mod trace;
pub mod workload;

pub use sim::{run, RunError, RunResult, RunSpec};
