//! Platform readers for hetsched: the documented YAML platform format, the built-in
//! presets, and the loader that validates a description and derives the engine's
//! [`Platform`].
//!
//! A short tour:
//! - [`format`](mod@format): the file shape ([`format::PlatformFile`]); [`platform_schema`] prints its
//!   JSON schema (`hetsched schema platform`); `docs/platform-format.md` explains it.
//! - [`load`], [`load_preset`], [`load_file`], [`parse_str`]: text → validated
//!   [`Platform`]. Capacities are derived as `topology_normalize_cpu_scale()` does
//!   (capacity-dmips-mhz × `cpuinfo.max_freq`), unless `capacity_override` replaces them.
//!   OPP power comes from explicit µW, else from the dynamic-power coefficient
//!   (`floor(C × mV² × MHz / 1e6)`, drivers/opp/of.c v5.19+), else from an assumed model
//!   labelled [`PowerSource::Assumed`](hetsched_core::platform::PowerSource::Assumed).
//! - [`describe()`], [`summary_line`]: the views for `hetsched platforms show|list`.
//! - [`PlatformError`]: every error is one line naming the file, line and column.
//!
//! Nothing here panics on bad input.

mod convert;
mod describe;
pub mod devicetree;
mod error;
pub mod format;
mod locate;
mod presets;

use std::path::Path;

pub use describe::{describe, describe_domains, summary_line};
pub use error::{PlatformError, SourcePos};
pub use hetsched_core::platform::Platform;

use crate::format::PlatformFile;
use crate::locate::{locate, path_string};

/// The names of the built-in presets.
pub fn preset_names() -> &'static [&'static str] {
    presets::NAMES
}

/// The YAML text of a built-in preset, e.g. to copy and edit it.
pub fn preset_text(name: &str) -> Option<&'static str> {
    presets::text(name)
}

fn unknown(name: &str) -> PlatformError {
    PlatformError::UnknownPreset {
        name: name.to_string(),
        valid: presets::NAMES.iter().map(|s| s.to_string()).collect(),
    }
}

/// Load a built-in preset by name. An unknown name gives an error listing the valid ones.
pub fn load_preset(name: &str) -> Result<Platform, PlatformError> {
    let text = presets::text(name).ok_or_else(|| unknown(name))?;
    parse_str(text, &format!("presets/platforms/{name}.yaml"))
}

/// Load a platform from a YAML file.
pub fn load_file(path: &Path) -> Result<Platform, PlatformError> {
    let origin = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| PlatformError::Io {
        path: origin.clone(),
        message: error::one_line(&e.to_string()),
    })?;
    parse_bytes(&bytes, &origin)
}

/// [`parse_str`] of bytes: text that is not UTF-8 is refused at its first invalid byte.
pub fn parse_bytes(bytes: &[u8], origin: &str) -> Result<Platform, PlatformError> {
    let text = hetsched_core::text::utf8(bytes).map_err(|e| PlatformError::Syntax {
        at: SourcePos {
            origin: origin.to_string(),
            line_column: Some((e.line as usize, e.col as usize)),
        },
        message: format!("expected {}", e.expected()),
    })?;
    parse_str(text, origin)
}

/// Import a device tree (`.dts` compiled with cpp and dtc, or `.dtb`) and load the
/// platform it describes, failing with one line when the tree lacks a required number (an
/// overlay supplies those: `hetsched platforms import --overlay`).
pub fn load_device_tree(path: &Path) -> Result<Platform, PlatformError> {
    let origin = path.display().to_string();
    let imported = devicetree::import_path(path, &[], None)?;
    imported.check(&origin)?;
    load_imported(&imported, &origin)
}

/// Validate an imported platform and derive its [`Platform`].
pub fn load_imported(
    imported: &devicetree::Imported,
    origin: &str,
) -> Result<Platform, PlatformError> {
    let text = devicetree::to_yaml(imported)?;
    parse_str(&text, origin)
}

/// Load a preset if `name_or_path` names one, a device tree if it ends in `.dts`/`.dtb`,
/// else the YAML file at that path.
pub fn load(name_or_path: &str) -> Result<Platform, PlatformError> {
    if presets::text(name_or_path).is_some() {
        return load_preset(name_or_path);
    }
    if devicetree::is_device_tree(name_or_path) {
        return load_device_tree(Path::new(name_or_path));
    }
    let path = Path::new(name_or_path);
    let looks_like_path = name_or_path.contains(['/', '\\', '.']);
    if path.exists() || looks_like_path {
        load_file(path)
    } else {
        Err(unknown(name_or_path))
    }
}

/// Parse and validate platform YAML. `origin` names the text in errors (a file path).
pub fn parse_str(text: &str, origin: &str) -> Result<Platform, PlatformError> {
    error::check_yaml_depth(text, origin)?;
    let file: PlatformFile =
        serde_yaml::from_str(text).map_err(|e| error::from_yaml(origin, &e))?;
    convert::build(&file).map_err(|inv| {
        let path = path_string(&inv.path);
        let message = if path.is_empty() {
            inv.message
        } else {
            format!("{path}: {}", inv.message)
        };
        PlatformError::Invalid {
            at: SourcePos {
                origin: origin.to_string(),
                line_column: locate(text, &inv.path),
            },
            message: error::one_line(&message),
        }
    })
}

/// The JSON schema of the platform format, pretty-printed (`hetsched schema platform`).
pub fn platform_schema() -> String {
    let schema = schemars::schema_for!(PlatformFile);
    serde_json::to_string_pretty(&schema).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
}
