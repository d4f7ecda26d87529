//! Built-in workload generators: the benchmarks the reference experiments ran
//! (`sysbench-cpu`, `stress-ng-cpu`, `hackbench`) and LISA's periodic rt-app task
//! (`periodic`), written as the core [`Workload`] model so that they validate, print
//! ([`crate::describe`]) and write as rt-app JSON ([`crate::to_rtapp_json`]) like any
//! file.
//!
//! They live in the rt-app crate because they produce exactly what its reader produces
//! and use its writer; a separate crate would add plumbing and nothing else.
//!
//! # Specs
//!
//! A workload argument `gen:NAME[:k=v,k=v…]` names a generator and its parameters
//! ([`from_spec`]); several generators joined by `+` run side by side in one workload
//! (`gen:sysbench-cpu:name=big,threads=2,requests=250,pin=[1,2]+sysbench-cpu:threads=4,requests=1000`).
//! [`GENERATORS`] lists each generator with its parameters and defaults.
//!
//! # Conventions
//!
//! * `run` work is in µs on the calibration reference, and every generator writes an
//!   integer `calibration` ([`GEN_PLOAD_NS`]), so the reference is the biggest CPU
//!   (capacity 1024) at its maximum frequency: LISA's convention for duty cycles, and
//!   the experiments' for sysbench requests.
//! * Threads are named `<task>-<index>` by rt-app; generators check every thread name
//!   fits the kernel's 15-character comm and that task names are unique.
//! * Positions: a generated workload's `source` is its spec; the `cpus` attribute's span
//!   points at the `cpus=`/`pin=` parameter (line 1, its column in the spec), every
//!   other span at the generator's name, so the engine's errors read
//!   `gen:…:1:COL: …` like a file's.

pub mod hackbench;
pub mod params;
pub mod periodic;
pub mod stress_ng;
pub mod sysbench;

use hetsched_core::text::one_line;
use std::collections::BTreeSet;
use std::fmt::Write as _;

use hetsched_core::workload::{
    Calibration, Event, EventSpec, Phase, SchedAttrs, Span, TaskSpec, Workload,
};

pub use params::{Param, Params};

/// The integer `calibration` generated workloads carry: any integer pLoad makes the
/// reference of `run` the biggest CPU at its maximum frequency (see
/// [`Calibration::PLoadNs`]); the value itself only matters to a real rt-app, which
/// LISA gives the smallest pLoad it measured on the board (the biggest CPU's).
pub const GEN_PLOAD_NS: u64 = 100;

/// The kernel's comm length (`TASK_COMM_LEN` − 1), which rt-app's thread names must fit.
pub const TASK_COMM_MAX_LEN: usize = 15;

/// A generator's parameters were not valid: one line naming the generator, the
/// parameter and what was expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("gen:{}: {}", one_line(.generator), one_line(.message))]
pub struct GenError {
    /// The generator (or the spec, when no generator could be named).
    pub generator: String,
    /// What was wrong and what was expected.
    pub message: String,
}

impl GenError {
    /// An error of generator `generator`.
    pub fn new(generator: &str, message: impl Into<String>) -> GenError {
        GenError {
            generator: generator.to_string(),
            message: message.into(),
        }
    }
}

/// One parameter of a generator, for `hetsched gen --list` and the README.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParamSpec {
    /// The key.
    pub name: &'static str,
    /// The default, as written (`-` = none).
    pub default: &'static str,
    /// What it means.
    pub help: &'static str,
}

/// A generator: name, one-line summary, parameters, and how it builds a workload.
#[derive(Debug, Clone, Copy)]
pub struct GeneratorInfo {
    /// Name in `gen:NAME`.
    pub name: &'static str,
    /// One line: what it models.
    pub summary: &'static str,
    /// Accepted parameters.
    pub params: &'static [ParamSpec],
    build: fn(Params) -> Result<Workload, GenError>,
}

/// Every generator, in `--list` order.
pub const GENERATORS: &[GeneratorInfo] = &[
    GeneratorInfo {
        name: sysbench::NAME,
        summary: sysbench::SUMMARY,
        params: sysbench::PARAMS,
        build: sysbench::build,
    },
    GeneratorInfo {
        name: stress_ng::NAME,
        summary: stress_ng::SUMMARY,
        params: stress_ng::PARAMS,
        build: stress_ng::build,
    },
    GeneratorInfo {
        name: hackbench::NAME,
        summary: hackbench::SUMMARY,
        params: hackbench::PARAMS,
        build: hackbench::build,
    },
    GeneratorInfo {
        name: periodic::NAME,
        summary: periodic::SUMMARY,
        params: periodic::PARAMS,
        build: periodic::build,
    },
];

fn find(name: &str) -> Result<&'static GeneratorInfo, GenError> {
    GENERATORS.iter().find(|g| g.name == name).ok_or_else(|| {
        let names: Vec<&str> = GENERATORS.iter().map(|g| g.name).collect();
        GenError::new(
            name,
            format!("unknown generator; expected one of: {}", names.join(", ")),
        )
    })
}

/// Runs generator `name` with `key=value` parameters (as `hetsched gen NAME k=v…` and
/// Python's `generate(name, **params)` give them). The workload's `source` is the
/// equivalent spec `gen:NAME:k=v,…`.
pub fn generate(name: &str, params: &[(String, String)]) -> Result<Workload, GenError> {
    let mut spec = format!("gen:{name}");
    if !params.is_empty() {
        spec.push(':');
        let kv: Vec<String> = params.iter().map(|(k, v)| format!("{k}={v}")).collect();
        spec.push_str(&kv.join(","));
    }
    from_spec(&spec)
}

/// Splits at `sep` outside brackets, with the 0-based char offset of each piece.
fn split_top(s: &str, sep: char) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut cur = String::new();
    let mut start = 0;
    for (i, c) in s.chars().enumerate() {
        match c {
            '[' => depth += 1,
            ']' => depth -= 1,
            _ => {}
        }
        if c == sep && depth == 0 {
            out.push((start, std::mem::take(&mut cur)));
            start = i + 1;
        } else {
            cur.push(c);
        }
    }
    out.push((start, cur));
    out
}

/// Builds the workload of a spec `gen:NAME[:k=v,…][+NAME[:k=v,…]…]` (the `gen:` prefix
/// is optional). Parts joined by `+` are combined with [`combine`].
pub fn from_spec(spec: &str) -> Result<Workload, GenError> {
    let (body, offset) = match spec.strip_prefix("gen:") {
        Some(b) => (b, 4usize),
        None => (spec, 0),
    };
    let mut parts = Vec::new();
    for (start, part) in split_top(body, '+') {
        let col0 = (offset + start + 1) as u32;
        let (name, rest) = match part.split_once(':') {
            Some((n, r)) => (n.trim(), Some(r)),
            None => (part.trim(), None),
        };
        if name.is_empty() {
            return Err(GenError::new(
                spec,
                "expected a generator name after `gen:` or `+`, for example gen:hackbench",
            ));
        }
        let g = find(name)?;
        let items = match rest {
            Some(r) => params::split(g.name, r, col0 + name.chars().count() as u32 + 1)?,
            None => Vec::new(),
        };
        let p = Params::new(g.name, g.params, items)?;
        let cpus_col = p.col("cpus").or(p.col("pin"));
        let mut w = (g.build)(p)?;
        place(&mut w, col0, cpus_col);
        parts.push(w);
    }
    let mut w = if parts.len() == 1 {
        parts.pop().unwrap_or_default()
    } else {
        combine(parts)?
    };
    let threads: u64 = w.tasks.iter().map(|t| u64::from(t.instances)).sum();
    if threads > crate::MAX_THREADS {
        return Err(GenError::new(
            body,
            format!(
                "{threads} threads: at most {} threads per run (Linux's default pid_max)",
                crate::MAX_THREADS
            ),
        ));
    }
    w.source = Some(spec.to_string());
    Ok(w)
}

/// Points every span of `w` at column `col` of line 1, and `cpus` spans at `cpus_col`.
fn place(w: &mut Workload, col: u32, cpus_col: Option<u32>) {
    let at = Span { line: 1, col };
    let cpus_at = Span {
        line: 1,
        col: cpus_col.unwrap_or(col),
    };
    for t in &mut w.tasks {
        t.span = at;
        if t.attrs.cpus.is_some() {
            t.attrs.cpus_span = Some(cpus_at);
        }
        for p in &mut t.phases {
            if p.attrs.cpus.is_some() {
                p.attrs.cpus_span = Some(cpus_at);
            }
            for e in &mut p.events {
                e.span = at;
            }
        }
    }
}

/// Several generated workloads side by side in one: tasks in order, names joined by `+`.
/// Task names must differ (give the generators different `name=`); the workload ends
/// when all tasks end (every generator here is finite).
pub fn combine(parts: Vec<Workload>) -> Result<Workload, GenError> {
    let name: Vec<String> = parts.iter().map(|w| w.name.clone()).collect();
    let name = name.join("+");
    let mut out = Workload {
        name: name.clone(),
        calibration: Calibration::PLoadNs(GEN_PLOAD_NS),
        ..Workload::default()
    };
    let mut seen = BTreeSet::new();
    for w in parts {
        if w.calibration != out.calibration {
            return Err(GenError::new(
                &name,
                format!("{} has another calibration; cannot combine", w.name),
            ));
        }
        out.duration_s = match (out.duration_s, w.duration_s) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        for t in w.tasks {
            if !seen.insert(t.name.clone()) {
                return Err(GenError::new(
                    &name,
                    format!(
                        "task name `{}` is used by two generators; give them different name= values",
                        t.name
                    ),
                ));
            }
            out.tasks.push(t);
        }
        out.warnings.extend(w.warnings);
    }
    Ok(out)
}

/// The text of `hetsched gen --list`: each generator, its summary and parameters.
pub fn list() -> String {
    let mut s = String::new();
    for g in GENERATORS {
        let _ = writeln!(s, "{}: {}", g.name, g.summary);
        let w = g.params.iter().map(|p| p.name.len()).max().unwrap_or(0);
        for p in g.params {
            let _ = writeln!(
                s,
                "  {:w$}  {} (default: {})",
                p.name,
                p.help,
                p.default,
                w = w
            );
        }
        s.push('\n');
    }
    s
}

/// A phase of events (keys as rt-app's canonical names; spans set by [`from_spec`]).
pub(crate) fn phase(
    name: &str,
    loop_count: u64,
    cpus: Option<Vec<usize>>,
    events: Vec<Event>,
) -> Phase {
    Phase {
        name: name.to_string(),
        loop_count,
        attrs: SchedAttrs {
            cpus,
            ..SchedAttrs::default()
        },
        events: events
            .into_iter()
            .map(|event| EventSpec {
                key: event.key().to_string(),
                event,
                span: Span { line: 1, col: 1 },
            })
            .collect(),
    }
}

/// A task whose phases run once (`loop: 1`). As the reader does, each phase's `cpus`
/// is a copy of the task's unless the phase sets its own.
pub(crate) fn task(
    name: String,
    instances: u32,
    attrs: SchedAttrs,
    phases: Vec<Phase>,
) -> TaskSpec {
    let phases = phases
        .into_iter()
        .map(|mut p| {
            if p.attrs.cpus.is_none() {
                p.attrs.cpus = attrs.cpus.clone();
            }
            p
        })
        .collect();
    TaskSpec {
        name,
        instances,
        loop_count: 1,
        delay_us: 0,
        attrs,
        phases,
        span: Span { line: 1, col: 1 },
    }
}

/// A workload of `tasks` with the generators' conventions.
pub(crate) fn workload(gen: &str, tasks: Vec<TaskSpec>) -> Workload {
    Workload {
        name: gen.to_string(),
        source: Some(format!("gen:{gen}")),
        duration_s: None,
        calibration: Calibration::PLoadNs(GEN_PLOAD_NS),
        tasks,
        ..Workload::default()
    }
}

/// Checks that every thread name `<task>-<index>` fits the 15-character comm and that
/// task names are unique; `name_param` is the parameter that sets the names.
pub(crate) fn check_names(gen: &str, w: &Workload, name_param: &str) -> Result<(), GenError> {
    let mut seen = BTreeSet::new();
    for t in &w.tasks {
        let last = format!("{}-{}", t.name, t.instances.saturating_sub(1));
        if last.chars().count() > TASK_COMM_MAX_LEN {
            return Err(GenError::new(
                gen,
                format!(
                    "{name_param}: thread name `{last}` has {} characters; expected at most {TASK_COMM_MAX_LEN} (the kernel's comm), so use a shorter {name_param}",
                    last.chars().count()
                ),
            ));
        }
        if !seen.insert(t.name.as_str()) {
            return Err(GenError::new(
                gen,
                format!("task name `{}` is generated twice", t.name),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// Generators refuse more threads than a run may start (`crate::MAX_THREADS`) before
    /// building them (`groups=100000` aborted on allocation).
    #[test]
    fn generated_threads_are_bounded_by_pid_max() {
        let e = from_spec("gen:hackbench:groups=100000")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("4000000 threads") && e.contains("at most 32768"),
            "{e}"
        );
        let e = from_spec("gen:periodic:tasks=20000,name=a+periodic:tasks=20000,name=b")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("gen:periodic:tasks=20000,name=a+") && e.contains("40000 threads"),
            "{e}"
        );
        assert!(from_spec("gen:hackbench:groups=819").is_ok());
    }

    #[test]
    fn unknown_generator_lists_the_known_ones() {
        let e = from_spec("gen:nosuch").unwrap_err().to_string();
        assert!(e.starts_with("gen:nosuch: unknown generator"), "{e}");
        for g in GENERATORS {
            assert!(e.contains(g.name), "{e}");
        }
    }

    #[test]
    fn unknown_and_repeated_parameters_are_named() {
        let e = from_spec("gen:hackbench:grups=2").unwrap_err().to_string();
        assert!(
            e.contains("unknown parameter `grups`") && e.contains("groups"),
            "{e}"
        );
        let e = from_spec("gen:hackbench:groups=2,groups=3")
            .unwrap_err()
            .to_string();
        assert!(e.contains("`groups` is given twice"), "{e}");
        let e = from_spec("gen:hackbench:groups").unwrap_err().to_string();
        assert!(e.contains("expected key=value"), "{e}");
    }

    #[test]
    fn combined_specs_keep_tasks_in_order_and_reject_clashes() {
        let w = from_spec(
            "gen:sysbench-cpu:name=big,threads=2,requests=250,pin=[1,2]+sysbench-cpu:threads=4,requests=1000",
        )
        .unwrap();
        let names: Vec<&str> = w.tasks.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["big_0", "big_1", "sysbench"]);
        assert_eq!(w.tasks[2].instances, 4);
        assert_eq!(w.name, "sysbench-cpu+sysbench-cpu");
        // The pinned tasks' cpus span points at `pin=`: "gen:" (4) + "sysbench-cpu:" (13)
        // + "name=big," (9) + "threads=2," (10) + "requests=250," (13) = 49 characters
        // before it, so column 50.
        assert_eq!(w.tasks[0].attrs.cpus_span, Some(Span { line: 1, col: 50 }));
        let e = from_spec("gen:sysbench-cpu+sysbench-cpu")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("task name `sysbench` is used by two generators"),
            "{e}"
        );
    }

    /// Tasks with positions and written keys cleared: what must survive a round trip.
    fn meaning(w: &Workload) -> Vec<TaskSpec> {
        let mut tasks = w.tasks.clone();
        for t in &mut tasks {
            t.span = Span::default();
            t.attrs.cpus_span = None;
            for p in &mut t.phases {
                p.attrs.cpus_span = None;
                for e in &mut p.events {
                    e.span = Span::default();
                    e.key.clear();
                }
            }
        }
        tasks
    }

    #[test]
    fn every_generator_round_trips_through_rtapp_json() {
        for spec in [
            "gen:sysbench-cpu:threads=3,events=10,pin=[1,-,2],nice=-3",
            "gen:sysbench-cpu:threads=2,requests=7,cpus=[0-3,5]",
            "gen:stress-ng-cpu:workers=3,timeout=2s,cpus=4-5",
            "gen:hackbench:groups=2,loops=3,fds=4",
            "gen:periodic:duty=5,period=16ms,duration=10s,tasks=2",
            "gen:periodic:run=6ms,period=33ms,loops=300,policy=fifo,priority=50,cpus=0,delay=1ms",
            "gen:periodic:duty=100,period=1s,duration=10s,name=tskbusy+periodic:duty=5,name=tsk_a",
        ] {
            let w = from_spec(spec).unwrap();
            let json = crate::to_rtapp_json(&w);
            // Strict JSON: a plain JSON parser reads it too.
            let _: serde_json::Value = serde_json::from_str(&json).unwrap();
            let back = crate::parse_str(&json, "<generated>", &Default::default()).unwrap();
            assert_eq!(meaning(&back), meaning(&w), "{spec}\n{json}");
            assert_eq!(back.calibration, Calibration::PLoadNs(GEN_PLOAD_NS));
            assert_eq!(back.duration_s, w.duration_s);
            assert!(back.warnings.is_empty(), "{:?}", back.warnings);
        }
    }

    #[test]
    fn list_names_every_parameter() {
        let l = list();
        for g in GENERATORS {
            assert!(l.contains(&format!("{}: ", g.name)));
            for p in g.params {
                assert!(l.contains(&format!("  {}", p.name)), "{}", p.name);
            }
        }
    }
}
