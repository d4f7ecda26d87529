//! PELT (per-entity load tracking) with the kernel's fixed-point arithmetic.
//!
//! Placeholder: filled in by the PELT work (see the module plan in lib.rs).
