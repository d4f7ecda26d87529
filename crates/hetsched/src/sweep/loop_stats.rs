//! rt-app's per-loop statistics in sweep points: the `rtapp_stats` markers (rt-app's log,
//! one line per loop: run µs, slack µs) of one task's threads, gathered during a point's
//! run ([`LoopStatsSink`]) and kept in its result file as `"loop_stats"`
//! ([`super::PointSpec::loop_stats_of`]), for measurements that read them
//! (`reproduce schedfreq`).

use super::{io, point_path};
use crate::Error;
use serde_json::Value;
use std::path::Path;

/// The per-loop statistics kept in point `hash`'s result file (`loop_stats_of`).
pub fn read_loop_stats(dir: &Path, hash: &str) -> Result<Vec<(i64, i64)>, Error> {
    let path = point_path(dir, hash);
    let text = std::fs::read_to_string(&path).map_err(io(&path))?;
    let bad = |m: String| Error::Reproduce(format!("{}: {m}", path.display()));
    let v: Value = serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
    if let Some(e) = v.get("error").and_then(Value::as_str) {
        return Err(bad(e.to_string()));
    }
    serde_json::from_value(v.get("loop_stats").cloned().unwrap_or(Value::Null))
        .map_err(|e| bad(format!("\"loop_stats\": {e}")))
}

/// rt-app's per-loop statistics (`rtapp_stats` markers: run µs, slack µs per loop) of
/// the threads of one task of the workload (comm `<task>-<index>`).
#[derive(Debug, Default)]
pub struct LoopStatsSink {
    task: String,
    /// `(run µs, slack µs)` per loop, in trace order.
    pub loops: Vec<(i64, i64)>,
}

impl LoopStatsSink {
    /// A sink for the threads of task `task`.
    pub fn new(task: &str) -> LoopStatsSink {
        LoopStatsSink {
            task: task.to_string(),
            loops: Vec::new(),
        }
    }
}

impl hetsched_core::trace::TraceSink for LoopStatsSink {
    fn interest(&self) -> hetsched_core::trace::Interest {
        hetsched_core::trace::Interest {
            markers: true,
            ..Default::default()
        }
    }

    fn record(
        &mut self,
        ctx: &hetsched_core::trace::Ctx<'_>,
        ev: &hetsched_core::trace::TraceEvent<'_>,
    ) {
        use hetsched_core::trace::{RtappMarker, TraceEvent};
        if let TraceEvent::Print(RtappMarker::Stats { run, slack, .. }) = ev {
            let task = ctx.comm.rsplit_once('-').map_or(ctx.comm, |(t, _)| t);
            if task == self.task {
                self.loops.push((*run, *slack));
            }
        }
    }
}
