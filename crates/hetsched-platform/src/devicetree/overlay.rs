//! What a user adds to an imported tree ([`Overlay`], read from YAML) and what an import
//! returns ([`Imported`]: the platform file, what the tree lacked, the provenance).

use std::collections::BTreeMap;
use std::path::Path;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::{one_line, PlatformError, SourcePos};
use crate::format::{AssumedPowerFile, OppFile, PlatformFile};

/// What a user adds to an imported tree: numbers the tree lacks (firmware OPPs, transition
/// latency, idle-state power, the cpufreq driver) or corrections. Unknown keys are rejected.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Overlay {
    /// Replaces the imported name.
    #[serde(default)]
    pub name: Option<String>,
    /// Replaces the imported description.
    #[serde(default)]
    pub description: Option<String>,
    /// The boot CPU (a `/cpus` child's node name, e.g. `cpu@100`): it becomes logical CPU 0
    /// and the others follow in tree order, as arm64 numbers them. Default: the first node.
    #[serde(default)]
    pub boot_cpu: Option<String>,
    /// The cpufreq driver (`scpi`, `vexpress-spc`, …); the tree does not say.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub cpufreq_driver: Option<hetsched_core::platform::CpufreqDriver>,
    /// Extra sources and notes, appended.
    #[serde(default)]
    pub sources: Vec<String>,
    /// Notes, appended.
    #[serde(default)]
    pub notes: Vec<String>,
    /// Per imported perf-domain name: the keys to set.
    #[serde(default)]
    pub perf_domains: BTreeMap<String, OverlayDomain>,
    /// Per imported idle-state name: its power.
    #[serde(default)]
    pub idle_states: BTreeMap<String, OverlayIdle>,
    /// As in the platform format.
    #[serde(default)]
    pub capacity_override: Option<Vec<u64>>,
}

/// The keys an overlay may set on one perf domain.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OverlayDomain {
    /// OPP table (replaces the tree's).
    #[serde(default)]
    pub opps: Option<Vec<OppFile>>,
    /// `cpuinfo.transition_latency` in ns.
    #[serde(default)]
    pub transition_latency_ns: Option<u64>,
    /// `dynamic-power-coefficient`.
    #[serde(default)]
    pub dynamic_power_coefficient: Option<u64>,
    /// `capacity-dmips-mhz`.
    #[serde(default)]
    pub capacity_dmips_mhz: Option<u64>,
    /// `cpuinfo.max_freq` cap.
    #[serde(default)]
    pub max_freq_khz: Option<u64>,
    /// An assumed power model (see the platform format).
    #[serde(default)]
    pub assumed_power: Option<AssumedPowerFile>,
}

/// The keys an overlay may set on one idle state.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OverlayIdle {
    /// Power in µW while in the state.
    pub power_uw: u64,
}

/// An imported platform: the model, and what the tree lacked that no overlay supplied.
#[derive(Debug, Clone)]
pub struct Imported {
    /// The platform file, with `provenance` filled in.
    pub file: PlatformFile,
    /// Numbers the tree lacks, one line each (`perf_domains.cluster0.opps: no OPP table
    /// (firmware-provided?)`). Those that the format requires make [`Imported::check`] fail.
    pub missing: Vec<String>,
}

impl Imported {
    /// Fail with one line listing the required numbers that neither tree nor overlay gave.
    pub fn check(&self, origin: &str) -> Result<(), PlatformError> {
        let required: Vec<&String> = self
            .missing
            .iter()
            .filter(|m| m.contains("(required)"))
            .collect();
        if required.is_empty() {
            return Ok(());
        }
        Err(PlatformError::Invalid {
            at: SourcePos {
                origin: origin.to_string(),
                line_column: None,
            },
            message: one_line(&format!(
                "the tree lacks {}; supply them with an overlay (hetsched platforms import {origin} --overlay extra.yaml, docs/platform-format.md \"Device trees\")",
                required.iter().map(|s| s.replace(" (required)", "")).collect::<Vec<_>>().join("; ")
            )),
        })
    }
}

/// Read an overlay YAML file.
pub fn read_overlay(path: &Path) -> Result<Overlay, PlatformError> {
    let origin = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| PlatformError::Io {
        path: origin.clone(),
        message: one_line(&e.to_string()),
    })?;
    crate::error::check_yaml_depth(&text, &origin)?;
    serde_yaml::from_str(&text).map_err(|e| crate::error::from_yaml(&origin, &e))
}
