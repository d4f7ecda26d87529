//! Fuzz target `devicetree`: [`hetsched::fuzz::devicetree`] on every input (no panic; errors on one
//! line, positioned where the input is a file).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| hetsched::fuzz::devicetree(data));
