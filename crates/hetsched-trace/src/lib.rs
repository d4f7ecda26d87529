//! Trace writers for hetsched.
//!
//! The engine (`hetsched_core`) emits [`hetsched_core::trace::TraceEvent`]s to a
//! [`hetsched_core::trace::TraceSink`]; this crate turns them into files other tools read.
//!
//! * [`FtraceTextSink`]: the raw text of `trace-cmd report -R` under the kernel's ftrace
//!   header (`# tracer: nop`), which LISA 3.1.0 loads with
//!   `Trace(path, plat_info, parser=TxtTraceParser.from_txt_file)` and Perfetto's trace
//!   processor takes as ftrace text. The line format, field by field, is in the
//!   [`ftrace`] module documentation.
//! * [`PerfettoSink`]: the same events as a Perfetto protobuf trace (`.pftrace`):
//!   `FtraceEventBundle`s per CPU, a process tree naming the tasks, a clock snapshot
//!   ([`perfetto`] module documentation).
//! * [`ColumnSink`]: the events kept in memory as columns, one table per event
//!   ([`columns`] module documentation), for DataFrames; [`read_text`] reads a text
//!   trace back into the same tables.
//! * [`format_event`]: the text formatting of one event into a caller's buffer.
//! * [`TraceFormat`]: which of the two a path asks for.
//! * [`BackgroundWriter`]: takes the sinks' full buffers ([`background::BlockWrite`]) and
//!   writes them on a thread of its own, so that the simulation does not wait for the
//!   file's writes (the CLI's trace files go through it).
//!
//! Golden tests (`tests/golden.rs`) pin every event's line; `tests/perfetto.rs` checks
//! the protobuf writer's determinism and bounded memory; `tests/python/` at the
//! repository root decodes a `.pftrace` with Perfetto's own protobuf classes and compares
//! it event by event with the text trace of the same run, and `tests/python/lisa/` loads
//! a text trace with LISA.

pub mod background;
pub mod columns;
mod fmt;
pub mod ftrace;
pub mod perfetto;
mod prefix;
mod proto;

use std::path::Path;
use std::str::FromStr;

pub use background::BackgroundWriter;
pub use columns::{read_text, ColumnSink, Columns};
pub use ftrace::{event_name, format_event, FtraceTextSink};
pub use perfetto::{PerfettoConfig, PerfettoSink};

/// The trace file formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TraceFormat {
    /// ftrace text ([`FtraceTextSink`]).
    #[default]
    Text,
    /// Perfetto protobuf as Perfetto v59's traced_probes records it by default
    /// ([`PerfettoSink`], [`PerfettoConfig::default`]).
    Perfetto,
    /// Perfetto protobuf with every event that has no message of its own as a
    /// `GenericFtraceEvent`, as traced_probes recorded it before v53
    /// ([`PerfettoConfig::LEGACY`]): for trace processors older than v52.
    PerfettoLegacy,
}

impl TraceFormat {
    /// The format a file name asks for: `.pftrace` and `.perfetto-trace` (the extensions
    /// Perfetto's UI and LISA recognise) are Perfetto, anything else text.
    pub fn from_path(path: &Path) -> TraceFormat {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name.ends_with(".pftrace") || name.ends_with(".perfetto-trace") {
            TraceFormat::Perfetto
        } else {
            TraceFormat::Text
        }
    }

    /// The name `--trace-format` takes.
    pub fn name(self) -> &'static str {
        match self {
            TraceFormat::Text => "text",
            TraceFormat::Perfetto => "perfetto",
            TraceFormat::PerfettoLegacy => "perfetto-legacy",
        }
    }

    /// The Perfetto writer's config of a Perfetto format, `None` for text.
    pub fn perfetto_config(self) -> Option<PerfettoConfig> {
        match self {
            TraceFormat::Text => None,
            TraceFormat::Perfetto => Some(PerfettoConfig::default()),
            TraceFormat::PerfettoLegacy => Some(PerfettoConfig::LEGACY),
        }
    }
}

impl FromStr for TraceFormat {
    type Err = String;

    /// `text`, `perfetto` or `perfetto-legacy`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "text" => Ok(TraceFormat::Text),
            "perfetto" => Ok(TraceFormat::Perfetto),
            "perfetto-legacy" => Ok(TraceFormat::PerfettoLegacy),
            _ => Err(format!(
                "unknown trace format `{s}`: expected `text`, `perfetto` or `perfetto-legacy`"
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_from_path_and_name() {
        assert_eq!(
            TraceFormat::from_path(Path::new("a/b.pftrace")),
            TraceFormat::Perfetto
        );
        assert_eq!(
            TraceFormat::from_path(Path::new("x.perfetto-trace")),
            TraceFormat::Perfetto
        );
        assert_eq!(
            TraceFormat::from_path(Path::new("x.txt")),
            TraceFormat::Text
        );
        assert_eq!(
            TraceFormat::from_path(Path::new("pftrace")),
            TraceFormat::Text
        );
        assert_eq!("perfetto".parse(), Ok(TraceFormat::Perfetto));
        assert_eq!("text".parse(), Ok(TraceFormat::Text));
        assert!("proto"
            .parse::<TraceFormat>()
            .unwrap_err()
            .contains("expected"));
    }
}
