//! Trace writers for hetsched.
//!
//! The engine (`hetsched_core`) emits [`hetsched_core::trace::TraceEvent`]s to a
//! [`hetsched_core::trace::TraceSink`]; this crate turns them into files other tools read.
//!
//! * [`FtraceTextSink`]: the raw text of `trace-cmd report -R`, which LISA 3.1.0 loads
//!   with `Trace(path, plat_info, parser=TxtTraceParser.from_txt_file)` and Perfetto's
//!   systrace importer opens. The line format, field by field, is in the [`ftrace`]
//!   module documentation.
//! * [`format_event`]: the same formatting for one event into a caller's buffer.
//!
//! Golden tests (`tests/golden.rs`) pin every event's line; `tests/python/lisa/` at the
//! repository root loads a trace with LISA and checks what it derives from it.

mod fmt;
pub mod ftrace;

pub use ftrace::{event_name, format_event, FtraceTextSink};
