//! The built-in platform presets, embedded from `presets/platforms/*.yaml` so that the
//! binary needs no files.

/// `(name, YAML text)` of every preset, in the order `hetsched platforms list` shows them.
pub(crate) const PRESETS: &[(&str, &str)] = &[
    (
        "juno_r0",
        include_str!("../../../presets/platforms/juno_r0.yaml"),
    ),
    (
        "hikey960",
        include_str!("../../../presets/platforms/hikey960.yaml"),
    ),
    ("tc2", include_str!("../../../presets/platforms/tc2.yaml")),
    (
        "rk3399",
        include_str!("../../../presets/platforms/rk3399.yaml"),
    ),
    (
        "exynos5800",
        include_str!("../../../presets/platforms/exynos5800.yaml"),
    ),
    (
        "m1pro",
        include_str!("../../../presets/platforms/m1pro.yaml"),
    ),
    (
        "orion_o6",
        include_str!("../../../presets/platforms/orion_o6.yaml"),
    ),
    (
        "hikey620",
        include_str!("../../../presets/platforms/hikey620.yaml"),
    ),
];

/// The preset names, in [`PRESETS`] order.
pub(crate) const NAMES: &[&str] = &[
    "juno_r0",
    "hikey960",
    "tc2",
    "rk3399",
    "exynos5800",
    "m1pro",
    "orion_o6",
    "hikey620",
];

/// The YAML text of preset `name`.
pub(crate) fn text(name: &str) -> Option<&'static str> {
    PRESETS.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
}
