//! Energy-aware scheduling: the Energy Model, EAS wake-up placement, the over-utilisation
//! ("tipping point") state and energy accounting for results.
//!
//! - [`em`]: the Energy Model per performance domain (`kernel/power/energy_model.c`).
//! - [`eas`]: `em_cpu_energy()`, `compute_energy()`, `find_energy_efficient_cpu()` and the
//!   conditions under which the kernel enables EAS (`kernel/sched/fair.c`,
//!   `kernel/sched/topology.c`).
//! - [`overutilized`]: `cpu_overutilized()` and the root-domain flag bookkeeping.
//! - [`accounting`]: energy of a run from OPP and idle-state residencies, with an
//!   energy-over-time sampler (reporting only; the kernel does not do this).
//!
//! Everything here is pure logic over plain values or a small view trait
//! ([`eas::EasView`]); the engine owns the state and calls these functions from the
//! kernel's hook points, which each module's documentation lists.

pub mod accounting;
pub mod eas;
pub mod em;
mod fits;
pub mod overutilized;

pub use fits::util_fits_cpu;
