//! rt-app JSON workloads for hetsched: read every file rt-app accepts, with rt-app's
//! meaning, reject what it rejects with `FILE:LINE:COL`, and write workloads back.
//!
//! # Tour
//!
//! * [`json`]: a hand-written lenient JSON reader with json-c's non-strict leniency
//!   (comments, trailing commas, …) that keeps objects as ordered member lists, so that
//!   repeated keys stay separate entries.
//! * `grammar` (private): the rt-app grammar → [`Workload`], following
//!   `src/rt-app_parse_config.c`; see [`event_prefix`] for event-key matching.
//! * [`parse_str`] / [`read_file`]: the entry points; [`describe`] for
//!   `hetsched validate`; [`to_rtapp_json`] to write a workload as strict rt-app JSON.
//! * [`gen`]: built-in workload generators (`gen:sysbench-cpu:threads=4,…`).
//!
//! # Mapping decisions
//!
//! * **Repeated keys.** [`DuplicateKeys::Ordered`] (default) reads a file the way
//!   `doc/workgen` makes rt-app run it: every repeated *event* key is its own event, in
//!   order (`run, resume, run, suspend`); repeated task/phase names are renamed as
//!   workgen does (`heavy1` → `heavy11`); for repeated attribute keys (`loop`, `cpus`…)
//!   the first is read (workgen renames the others, which rt-app then ignores).
//!   [`DuplicateKeys::JsonC`] reproduces rt-app run directly: json-c keeps the last
//!   value at the position of the first.
//! * **`loop`.** With `phases`: `TaskSpec::loop_count` = task `loop` (default −1 =
//!   forever; any negative value is stored as −1), `Phase::loop_count` = phase `loop`
//!   (default 1). Without `phases`, the task's own events form one phase named
//!   `phase0`; if `loop` is present that phase loops `loop` times and the thread runs it
//!   once (`TaskSpec::loop_count` = 1), otherwise the phase runs once per thread loop
//!   and the thread loops forever (`TaskSpec::loop_count` = −1). A phase `loop` ≤ 0
//!   never ends in rt-app (its counter is compared with `==` after an increment): it is
//!   stored as [`PHASE_LOOP_FOREVER`] (`u64::MAX`).
//! * **`cpus`.** rt-app's `set_thread_affinity()` uses the phase's `cpus`, else the
//!   task's `cpus`, else the thread's default (inherited, normally all CPUs). The reader
//!   resolves this: each `Phase::attrs.cpus` holds the phase's own `cpus` or, failing
//!   that, a copy of the task's (with the task's `cpus_span`); `None` means the default
//!   affinity (all CPUs). The engine applies `phase.attrs.cpus.unwrap_or(all)` at every
//!   phase start.
//! * **Other attributes** are kept as written (`None` = not set): a task without
//!   `policy` runs `Workload::default_policy`; a missing `priority` means rt-app's
//!   default for the policy (nice 0 for OTHER/IDLE, 10 for FIFO/RR, 0 for DEADLINE). A
//!   phase applies only what it sets. `dl-period` defaults to `dl-runtime` and
//!   `dl-deadline` to `dl-period`; the reader stores these effective values. At task
//!   level the legacy `runtime`/`period`/`deadline` keys are read as fallbacks, exactly
//!   as rt-app does — including a task-level `runtime` *event* of a task without
//!   `phases` (a warning says so).
//! * **Ignored with a warning**: unknown keys (rt-app ignores them silently), legacy
//!   `resources`, `nodes_membind`, the `attrs` ftrace category, `memrun` stride/pattern/
//!   ref. Accepted and ignored silently: `lock_pages`, `logdir`, `log_basename`,
//!   `log_size`, `gnuplot`, `io_device`, `mem_buffer_size` (type-checked as rt-app does).

pub mod error;
pub mod gen;
mod grammar;
pub mod json;
mod write;

use std::path::Path;

pub use error::{Location, RtappError};

/// The most threads a workload starts: 32 768, Linux's default `pid_max`
/// (`PID_MAX_DEFAULT`, include/linux/threads.h), which bounds the threads a board runs.
pub const MAX_THREADS: u64 = 32_768;
pub use grammar::{event_prefix, EVENT_PREFIXES, PHASE_LOOP_FOREVER};
use hetsched_core::workload::Workload;
pub use write::{describe, to_rtapp_json};

/// How repeated keys in one JSON object are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DuplicateKeys {
    /// Keep every occurrence in order, as `doc/workgen` makes rt-app run such files:
    /// each repeated event key is its own event (default).
    #[default]
    Ordered,
    /// json-c's behaviour (rt-app run on the file directly): the last value wins, kept
    /// at the position of the first occurrence.
    JsonC,
}

/// Options of the reader.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ReadOptions {
    /// How repeated keys are read; default [`DuplicateKeys::Ordered`].
    pub duplicate_keys: DuplicateKeys,
}

/// Parses rt-app JSON `text`; `origin` names it in errors and warnings (a file path, or
/// e.g. `"<generated>"`). The workload's `name` is the file stem of `origin`.
pub fn parse_str(text: &str, origin: &str, opts: &ReadOptions) -> Result<Workload, RtappError> {
    let doc = json::parse(text).map_err(|e| RtappError::Syntax {
        at: Location {
            origin: origin.to_string(),
            line: e.line,
            col: e.col,
        },
        expected: e.expected,
        jsonc: e.jsonc,
    })?;
    let mut root = doc.root;
    // Repeated keys: json-c drops all but the last value; in `Ordered` mode a repeated
    // event key is its own event (repeated attribute keys are reported by the grammar).
    let repeated: Vec<String> = json::repeated_keys(&root)
        .into_iter()
        .filter_map(|json::RepeatedKey { parent, key, first, at }| match opts.duplicate_keys {
            DuplicateKeys::JsonC => Some(format!(
                "{origin}:{}:{}: repeated key `{key}`: json-c keeps this value at the first one's position ({}:{}) and drops the earlier value",
                at.line, at.col, first.line, first.col
            )),
            // Repeated task and phase names are renamed by the grammar, which says so.
            DuplicateKeys::Ordered if parent == "tasks" || parent == "phases" => None,
            DuplicateKeys::Ordered => event_prefix(&key).map(|_| format!(
                "{origin}:{}:{}: repeated event key `{key}` (first at {}:{}) is its own event, in order, as doc/workgen renames it; --duplicate-keys jsonc reads it as rt-app on the raw file (last value wins)",
                at.line, at.col, first.line, first.col
            )),
        })
        .collect();
    if opts.duplicate_keys == DuplicateKeys::JsonC {
        json::collapse_duplicates(&mut root);
    }
    let mut w = grammar::Reader::new(origin, opts.duplicate_keys).workload(&root)?;
    let mut warnings: Vec<String> = doc
        .warnings
        .into_iter()
        .map(|m| format!("{origin}:{m}"))
        .collect();
    warnings.extend(repeated);
    warnings.append(&mut w.warnings);
    // keys and names from the input may hold control characters: one line each
    w.warnings = warnings
        .into_iter()
        .map(|m| error::Esc(&m).to_string())
        .collect();
    Ok(w)
}

/// Reads and parses an rt-app JSON file. A file that is not UTF-8 is refused at its first
/// invalid byte (JSON text is UTF-8, RFC 8259 §8.1; json-c passes such bytes through into
/// names, which hetsched would otherwise have to replace silently).
pub fn read_file(path: &Path, opts: &ReadOptions) -> Result<Workload, RtappError> {
    let origin = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| RtappError::Io {
        path: origin.clone(),
        reason: e.to_string(),
    })?;
    parse_bytes(&bytes, &origin, opts)
}

/// [`parse_str`] of bytes: text that is not UTF-8 is refused at its first invalid byte.
pub fn parse_bytes(bytes: &[u8], origin: &str, opts: &ReadOptions) -> Result<Workload, RtappError> {
    let text = hetsched_core::text::utf8(bytes).map_err(|e| RtappError::Syntax {
        at: error::Location {
            origin: origin.to_string(),
            line: e.line,
            col: e.col,
        },
        expected: e.expected(),
        jsonc: "json-c passes invalid UTF-8 through; hetsched refuses it",
    })?;
    parse_str(text, origin, opts)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn repeated_keys_are_reported_in_both_modes() {
        // `run` at column 18 and again at column 41; a repeated phase name is the
        // grammar's to report (renamed), not repeated here.
        let text = r#"{"tasks": {"t": {"run": 10, "sleep": 1, "run": 5}}}"#;
        let w = parse_str(text, "d.json", &ReadOptions::default()).unwrap();
        assert_eq!(w.warnings.len(), 1, "{:?}", w.warnings);
        assert!(w.warnings[0]
            .starts_with("d.json:1:41: repeated event key `run` (first at 1:18) is its own event"));
        assert_eq!(w.tasks[0].phases[0].events.len(), 3);
        let jsonc = ReadOptions {
            duplicate_keys: DuplicateKeys::JsonC,
        };
        let w = parse_str(text, "d.json", &jsonc).unwrap();
        assert_eq!(w.warnings.len(), 1, "{:?}", w.warnings);
        assert!(
            w.warnings[0].contains("json-c keeps this value at the first one's position (1:18)")
        );
        assert_eq!(w.tasks[0].phases[0].events.len(), 2);
        let phases = r#"{"tasks": {"t": {"phases": {"p": {"run": 1}, "p": {"run": 2}}}}}"#;
        let w = parse_str(phases, "p.json", &ReadOptions::default()).unwrap();
        assert_eq!(w.warnings.len(), 1, "{:?}", w.warnings);
        assert!(w.warnings[0].contains("renamed"), "{:?}", w.warnings);
    }
}
