//! The experiment file of `hetsched sweep` (TOML): what is crossed with what.
//!
//! ```toml
//! name = "misfit-vs-governor"
//! platforms = ["hikey960", "rk3399"]
//! workloads = ["demo", "gen:periodic:duty=30,tasks=4"]
//! seeds = [1, 2, 3]                  # or { from = 1, to = 10 }
//! noise = true
//!
//! [grid]
//! "balance.misfit" = [true, false]
//! "cpufreq.governor" = ["performance", "schedutil"]
//! ```
//!
//! Every top-level list (`platforms`, `workloads`, `kernels`, `seeds`) and every `[grid]`
//! key is a dimension; the points are their cross product. The keys of one `[[zip]]`
//! table advance together (one dimension). `[set]` holds options every point gets.
//! docs/sweeps.md is the reference; [`schema`] prints the JSON schema.
//!
//! Errors are one line, `FILE:LINE:COL: what is wrong and what is accepted`, from the
//! spans the `toml` crate gives; nothing reachable from the file panics.

use crate::Error;
use hetsched_core::noise::NoiseConfig;
use hetsched_core::options::Options;
use hetsched_core::time::Nanos;
use serde::de::{MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::Value;
use std::fmt;
use std::path::{Path, PathBuf};
use toml::Spanned;

/// At most this many values in one range, and points in one experiment.
pub const MAX_POINTS: usize = 1_000_000;

/// An experiment file could not be read: `at` is `FILE:LINE:COL` (or `FILE`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{at}: {msg}")]
pub struct ExperimentError {
    /// `FILE:LINE:COL`, or `FILE` where there is no position.
    pub at: String,
    /// What is wrong, and what would be accepted.
    pub msg: String,
}

/// One swept dimension: a `[grid]` key (one key), a `[[zip]]` table (its keys advancing
/// together), or a top-level list.
#[derive(Debug, Clone, PartialEq)]
pub struct Dim {
    /// Column names (option keys, or `platform`, `workload`, `kernel`, `seed`).
    pub keys: Vec<String>,
    /// The values: one row per step, one value per key.
    pub rows: Vec<Vec<Value>>,
}

/// A parsed, checked experiment.
#[derive(Debug, Clone, PartialEq)]
pub struct Experiment {
    /// `name`, or the file's stem.
    pub name: String,
    /// Platforms as written (presets or YAML paths).
    pub platforms: Vec<String>,
    /// Where each platform is loaded from (an absolute path for a file, looked up in the
    /// experiment file's directory first; a preset's name).
    pub platform_sources: Vec<String>,
    /// Workloads as written.
    pub workloads: Vec<String>,
    /// Where each workload is loaded from.
    pub workload_sources: Vec<String>,
    /// `kernels` (empty: not swept).
    pub kernels: Vec<String>,
    /// `seeds` (default `[0]`).
    pub seeds: Vec<u64>,
    /// The noise model (`noise = true` or a table), seeded with each point's seed.
    pub noise: Option<NoiseConfig>,
    /// `duration` (default: each workload's own).
    pub duration: Option<Nanos>,
    /// `[set]`: `key=value` options every point gets.
    pub set: Vec<String>,
    /// `[grid]` keys, then `[[zip]]` tables, in file order.
    pub dims: Vec<Dim>,
}

/// A table with its keys in file order and their spans.
#[derive(Debug, Default)]
struct Entries(Vec<(Spanned<String>, Spanned<toml::Value>)>);

impl<'de> Deserialize<'de> for Entries {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Entries;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a table of option keys (\"balance.misfit\" = [true, false])")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Entries, A::Error> {
                let mut out = Vec::new();
                while let Some(k) = map.next_key::<Spanned<String>>()? {
                    out.push((k, map.next_value()?));
                }
                Ok(Entries(out))
            }
        }
        d.deserialize_map(V)
    }
}

/// The file as written (the schema's source of truth).
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "hetsched experiment (hetsched sweep)")]
struct RawExperiment {
    /// Name of the experiment (default: the file's stem).
    #[schemars(with = "Option<String>")]
    name: Option<Spanned<String>>,
    /// Platforms: preset names or YAML files (a path is taken relative to the experiment
    /// file's directory when it exists there).
    #[schemars(with = "Vec<String>")]
    platforms: Spanned<Vec<Spanned<String>>>,
    /// Workloads: rt-app JSON files, shipped workload names, or `gen:` specs.
    #[schemars(with = "Vec<String>")]
    workloads: Spanned<Vec<Spanned<String>>>,
    /// Kernel profiles (the `kernel` option), swept.
    #[schemars(with = "Option<Vec<String>>")]
    kernels: Option<Spanned<Vec<Spanned<String>>>>,
    /// Seeds: a list of integers ≥ 0 or a range `{ from = 1, to = 10 }` (inclusive;
    /// default `[0]`). Each point's engine seed, and its noise seed with `noise`.
    #[schemars(with = "Option<SchemaValues>")]
    seeds: Option<Spanned<toml::Value>>,
    /// The noise model: `true` (the defaults), `false`, or a table of its fields
    /// (`start_jitter_us`, `work_jitter_ppm`, `background`, `kthreads`).
    #[schemars(with = "Option<SchemaNoise>")]
    noise: Option<Spanned<toml::Value>>,
    /// Simulated duration of every point (`"2s"`, `"500ms"`; default: the workload's).
    #[schemars(with = "Option<String>")]
    duration: Option<Spanned<String>>,
    /// Options every point gets: `"sched.hz" = 1000` (an array is the option's value).
    #[schemars(with = "Option<std::collections::BTreeMap<String, serde_json::Value>>")]
    set: Option<Entries>,
    /// Options swept, each crossed with everything else: a list of values, a range
    /// `{ from, to, step }` (integers, inclusive), or one value.
    #[schemars(with = "Option<std::collections::BTreeMap<String, SchemaValues>>")]
    grid: Option<Entries>,
    /// Groups of options that advance together: in each table every key has a list of
    /// the same length (or a range), and step i takes the i-th value of each.
    #[schemars(with = "Option<Vec<std::collections::BTreeMap<String, SchemaValues>>>")]
    zip: Option<Vec<Entries>>,
}

/// Values of a swept key (schema only).
#[allow(dead_code, reason = "describes the format for the JSON schema")]
#[derive(schemars::JsonSchema)]
#[serde(untagged)]
enum SchemaValues {
    /// The values, in order.
    List(Vec<serde_json::Value>),
    /// Integers `from`, `from + step`, … up to `to` inclusive.
    Range {
        /// First value.
        from: i64,
        /// Last value (inclusive).
        to: i64,
        /// Step (default 1, > 0).
        step: Option<i64>,
    },
    /// One value.
    One(serde_json::Value),
}

/// `noise` (schema only).
#[allow(dead_code, reason = "describes the format for the JSON schema")]
#[derive(schemars::JsonSchema)]
#[serde(untagged)]
enum SchemaNoise {
    /// On with the defaults, or off.
    On(bool),
    /// On with these parameters (`start_jitter_us`, `work_jitter_ppm`, `background`,
    /// `kthreads`; docs/experiments.md).
    Config(std::collections::BTreeMap<String, serde_json::Value>),
}

/// The JSON schema of the experiment file (`hetsched schema experiment`).
pub fn schema() -> String {
    let schema = schemars::schema_for!(RawExperiment);
    serde_json::to_string_pretty(&schema).unwrap_or_default()
}

/// Reads and checks an experiment file.
pub fn read_file(path: &Path) -> Result<Experiment, Error> {
    let text = std::fs::read_to_string(path).map_err(|err| Error::Io {
        path: path.display().to_string(),
        err,
    })?;
    let origin = path.display().to_string();
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
    parse_str(&text, &origin, &stem, &base)
}

/// Parses experiment text. `origin` names it in messages, `default_name` is the name
/// when the text gives none, and relative platform and workload paths are looked up in
/// `base` first.
pub fn parse_str(
    text: &str,
    origin: &str,
    default_name: &str,
    base: &Path,
) -> Result<Experiment, Error> {
    Ok(Parser { text, origin }.parse(default_name, base)?)
}

struct Parser<'a> {
    text: &'a str,
    origin: &'a str,
}

impl Parser<'_> {
    /// `FILE:LINE:COL` of byte `offset` (1-based line and column, the column in
    /// characters).
    fn at(&self, offset: usize) -> String {
        let offset = offset.min(self.text.len());
        let before = self.text.get(..offset).unwrap_or_default();
        let line = before.matches('\n').count() + 1;
        let col = before
            .rsplit('\n')
            .next()
            .unwrap_or_default()
            .chars()
            .count()
            + 1;
        format!("{}:{line}:{col}", self.origin)
    }

    fn err<T>(
        &self,
        span: std::ops::Range<usize>,
        msg: impl Into<String>,
    ) -> Result<T, ExperimentError> {
        Err(ExperimentError {
            at: self.at(span.start),
            msg: msg.into(),
        })
    }

    fn parse(&self, default_name: &str, base: &Path) -> Result<Experiment, ExperimentError> {
        let raw: RawExperiment = toml::from_str(self.text).map_err(|e| {
            let msg = e
                .message()
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .collect::<Vec<_>>()
                .join("; ");
            ExperimentError {
                at: e
                    .span()
                    .map_or_else(|| self.origin.to_string(), |s| self.at(s.start)),
                msg: hint(&msg),
            }
        })?;
        let name = match raw.name {
            Some(n) if n.get_ref().trim().is_empty() => {
                return self.err(n.span(), "name: expected a non-empty string")
            }
            Some(n) => n.into_inner(),
            None => default_name.to_string(),
        };

        let platforms = self.non_empty("platforms", &raw.platforms)?;
        let mut platform_sources = Vec::new();
        for p in raw.platforms.get_ref() {
            let src = source_in(base, p.get_ref(), false);
            if let Err(e) = crate::load_platform(&src) {
                return self.err(p.span(), format!("platforms: {e}"));
            }
            platform_sources.push(src);
        }
        let workloads = self.non_empty("workloads", &raw.workloads)?;
        let mut workload_sources = Vec::new();
        for w in raw.workloads.get_ref() {
            let src = source_in(base, w.get_ref(), true);
            if let Err(e) = crate::load_workload(&src, &Default::default()) {
                return self.err(w.span(), format!("workloads: {e}"));
            }
            workload_sources.push(src);
        }

        let mut swept: Vec<String> = vec!["platform".into(), "workload".into(), "seed".into()];
        let kernels = match &raw.kernels {
            None => Vec::new(),
            Some(k) => {
                let list = self.non_empty("kernels", k)?;
                for (v, s) in list.iter().zip(k.get_ref()) {
                    self.check_option("kernel", v, s.span(), None, "kernels")?;
                }
                swept.push("kernel".into());
                list
            }
        };

        let seeds = match &raw.seeds {
            None => vec![0],
            Some(s) => {
                let vals = self.values("seeds", s)?;
                let mut out = Vec::new();
                for v in vals {
                    match v.as_u64() {
                        Some(n) => out.push(n),
                        None => {
                            return self.err(
                                s.span(),
                                format!("seeds: `{v}` is not a seed; expected integers ≥ 0"),
                            )
                        }
                    }
                }
                out
            }
        };

        let noise = match &raw.noise {
            None => None,
            Some(n) => match n.get_ref() {
                toml::Value::Boolean(true) => Some(NoiseConfig::default()),
                toml::Value::Boolean(false) => None,
                toml::Value::Table(t) => {
                    let json = toml_to_json(&toml::Value::Table(t.clone()));
                    let cfg: NoiseConfig = serde_json::from_value(json)
                        .map_err(|e| ExperimentError {
                            at: self.at(n.span().start),
                            msg: format!("noise: {e} (expected start_jitter_us, work_jitter_ppm, background, kthreads)"),
                        })?;
                    if let Err(m) = cfg.validate() {
                        return self.err(n.span(), format!("noise: {m}"));
                    }
                    Some(cfg)
                }
                _ => {
                    return self.err(
                        n.span(),
                        "noise: expected true, false or a table of the noise model's fields",
                    )
                }
            },
        };

        let duration = match &raw.duration {
            None => None,
            Some(d) => match crate::parse_duration(d.get_ref()) {
                Ok(ns) => Some(ns),
                Err(crate::Error::Duration(_, why)) => {
                    return self.err(d.span(), format!("duration `{}`: {why}", d.get_ref()))
                }
                Err(e) => return self.err(d.span(), e.to_string()),
            },
        };

        let mut set = Vec::new();
        for (k, v) in raw.set.iter().flat_map(|e| &e.0) {
            self.new_key(&mut swept, k)?;
            let value = self.option_value(k.get_ref(), v)?;
            let text = set_text(&value);
            self.check_option(k.get_ref(), &text, v.span(), Some(k.span()), "set")?;
            set.push(format!("{}={text}", k.get_ref()));
        }

        let mut dims = Vec::new();
        for (k, v) in raw.grid.iter().flat_map(|e| &e.0) {
            self.new_key(&mut swept, k)?;
            let vals = self.values(k.get_ref(), v)?;
            for x in &vals {
                self.check_option(k.get_ref(), &set_text(x), v.span(), Some(k.span()), "grid")?;
            }
            dims.push(Dim {
                keys: vec![k.get_ref().clone()],
                rows: vals.into_iter().map(|x| vec![x]).collect(),
            });
        }
        for table in raw.zip.iter().flatten() {
            let mut keys = Vec::new();
            let mut cols: Vec<Vec<Value>> = Vec::new();
            for (k, v) in &table.0 {
                self.new_key(&mut swept, k)?;
                let vals = self.values(k.get_ref(), v)?;
                for x in &vals {
                    self.check_option(k.get_ref(), &set_text(x), v.span(), Some(k.span()), "zip")?;
                }
                if let Some(first) = cols.first() {
                    if first.len() != vals.len() {
                        return self.err(
                            v.span(),
                            format!(
                                "zip: `{}` has {} values but `{}` has {}; the keys of one [[zip]] table need as many values each",
                                k.get_ref(),
                                vals.len(),
                                keys.first().map_or("", |s: &String| s.as_str()),
                                first.len()
                            ),
                        );
                    }
                }
                keys.push(k.get_ref().clone());
                cols.push(vals);
            }
            let n = cols.first().map_or(0, Vec::len);
            if n == 0 {
                continue;
            }
            let rows = (0..n)
                .map(|i| cols.iter().map(|c| c[i].clone()).collect())
                .collect();
            dims.push(Dim { keys, rows });
        }

        let total = [
            platforms.len(),
            workloads.len(),
            kernels.len().max(1),
            seeds.len(),
        ]
        .into_iter()
        .chain(dims.iter().map(|d| d.rows.len()))
        .try_fold(1usize, |a, n| a.checked_mul(n))
        .filter(|&n| n <= MAX_POINTS);
        if total.is_none() {
            return Err(ExperimentError {
                at: self.origin.to_string(),
                msg: format!("more than {MAX_POINTS} points; split the experiment"),
            });
        }

        Ok(Experiment {
            name,
            platforms,
            platform_sources,
            workloads,
            workload_sources,
            kernels,
            seeds,
            noise,
            duration,
            set,
            dims,
        })
    }

    fn non_empty(
        &self,
        what: &str,
        list: &Spanned<Vec<Spanned<String>>>,
    ) -> Result<Vec<String>, ExperimentError> {
        if list.get_ref().is_empty() {
            return self.err(list.span(), format!("{what}: expected at least one"));
        }
        Ok(list.get_ref().iter().map(|s| s.get_ref().clone()).collect())
    }

    /// A key used once only across `kernels`, `[set]`, `[grid]` and `[[zip]]`.
    fn new_key(&self, seen: &mut Vec<String>, k: &Spanned<String>) -> Result<(), ExperimentError> {
        let key = k.get_ref();
        if key == "kernel" && seen.iter().any(|s| s == "kernel") {
            return self.err(
                k.span(),
                "`kernel` is given twice (the top-level `kernels` list and here); keep one",
            );
        }
        if seen.iter().any(|s| s == key) {
            return self.err(
                k.span(),
                format!("`{key}` is given twice; each option appears once across [set], [grid] and [[zip]]"),
            );
        }
        seen.push(key.clone());
        Ok(())
    }

    /// An option's value in `[set]`: a string, number, boolean or array.
    fn option_value(&self, key: &str, v: &Spanned<toml::Value>) -> Result<Value, ExperimentError> {
        match v.get_ref() {
            toml::Value::Table(_) | toml::Value::Datetime(_) => self.err(
                v.span(),
                format!("`{key}`: expected a string, number, boolean or array"),
            ),
            x => Ok(toml_to_json(x)),
        }
    }

    /// The values of a swept key: an array, a range table, or one value.
    fn values(&self, key: &str, v: &Spanned<toml::Value>) -> Result<Vec<Value>, ExperimentError> {
        match v.get_ref() {
            toml::Value::Array(a) if a.is_empty() => {
                self.err(v.span(), format!("`{key}`: expected at least one value"))
            }
            toml::Value::Array(a) => {
                if a.iter()
                    .any(|x| matches!(x, toml::Value::Table(_) | toml::Value::Datetime(_)))
                {
                    return self.err(
                        v.span(),
                        format!("`{key}`: expected a list of strings, numbers, booleans or arrays"),
                    );
                }
                Ok(a.iter().map(toml_to_json).collect())
            }
            toml::Value::Table(t) => {
                let get = |k: &str| t.get(k);
                if let Some(bad) = t
                    .keys()
                    .find(|k| !["from", "to", "step"].contains(&k.as_str()))
                {
                    return self.err(
                        v.span(),
                        format!("`{key}`: unknown range field `{bad}`; a range is {{ from = A, to = B, step = S }} (integers, inclusive)"),
                    );
                }
                let int = |k: &str| match get(k) {
                    Some(toml::Value::Integer(i)) => Ok(Some(*i)),
                    None => Ok(None),
                    Some(_) => Err(format!("`{key}`: range `{k}` must be an integer")),
                };
                let (from, to, step) = match (int("from"), int("to"), int("step")) {
                    (Ok(Some(f)), Ok(Some(t)), Ok(s)) => (f, t, s.unwrap_or(1)),
                    (Err(m), _, _) | (_, Err(m), _) | (_, _, Err(m)) => return self.err(v.span(), m),
                    _ => {
                        return self.err(
                            v.span(),
                            format!("`{key}`: a range needs `from` and `to` ({{ from = 1, to = 10, step = 1 }})"),
                        )
                    }
                };
                if step <= 0 {
                    return self.err(
                        v.span(),
                        format!("`{key}`: range step {step}: expected > 0"),
                    );
                }
                if to < from {
                    return self.err(v.span(), format!("`{key}`: range to {to} < from {from}"));
                }
                let n = (i128::from(to) - i128::from(from)) / i128::from(step) + 1;
                if n > MAX_POINTS as i128 {
                    return self.err(
                        v.span(),
                        format!("`{key}`: range of {n} values; at most {MAX_POINTS}"),
                    );
                }
                Ok((0..n as i64)
                    .map(|i| Value::from(from + i * step))
                    .collect())
            }
            toml::Value::Datetime(_) => self.err(
                v.span(),
                format!("`{key}`: expected a list of values, a range or one value"),
            ),
            x => Ok(vec![toml_to_json(x)]),
        }
    }

    /// `key=value` is a valid option on its own (its value's span for the message).
    fn check_option(
        &self,
        key: &str,
        value: &str,
        span: std::ops::Range<usize>,
        key_span: Option<std::ops::Range<usize>>,
        section: &str,
    ) -> Result<(), ExperimentError> {
        match Options::default().apply_sets(&[format!("{key}={value}")]) {
            Ok(_) => Ok(()),
            Err(e) => {
                let msg = e.to_string();
                let msg = msg.strip_prefix("--set ").unwrap_or(&msg);
                // an unknown key is the key's fault, a bad value the value's
                let span = if msg.contains("unknown field") || msg.contains("is not a section") {
                    key_span.unwrap_or(span)
                } else {
                    span
                };
                self.err(span, format!("{section}: {msg}"))
            }
        }
    }
}

/// A shorter hint for serde's messages about this format.
fn hint(msg: &str) -> String {
    if msg.starts_with("unknown field") {
        format!("{msg} (option keys go in [set], [grid] or [[zip]])")
    } else {
        msg.to_string()
    }
}

/// A TOML value as JSON (datetimes as strings).
fn toml_to_json(v: &toml::Value) -> Value {
    match v {
        toml::Value::String(s) => Value::from(s.as_str()),
        toml::Value::Integer(i) => Value::from(*i),
        toml::Value::Float(f) => {
            serde_json::Number::from_f64(*f).map_or(Value::Null, Value::Number)
        }
        toml::Value::Boolean(b) => Value::from(*b),
        toml::Value::Datetime(d) => Value::from(d.to_string()),
        toml::Value::Array(a) => Value::Array(a.iter().map(toml_to_json).collect()),
        toml::Value::Table(t) => Value::Object(
            t.iter()
                .map(|(k, v)| (k.clone(), toml_to_json(v)))
                .collect(),
        ),
    }
}

/// The text of `key=<text>` for an option value: a string as it is, anything else as JSON.
pub fn set_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Where `name` is loaded from: the absolute path of `base/name` when that file exists
/// (and `name` is not a generator spec), else of `name` when it is a file, else `name`
/// as written (a preset).
fn source_in(base: &Path, name: &str, workload: bool) -> String {
    if workload && name.starts_with("gen:") {
        return name.to_string();
    }
    let here: PathBuf = base.join(name);
    let found = if Path::new(name).is_relative() && here.is_file() {
        Some(here)
    } else {
        Some(PathBuf::from(name)).filter(|p| p.is_file())
    };
    // absolute, so that a worker in another directory (a Ray task) reads the same file
    match found.map(|p| std::path::absolute(&p).unwrap_or(p)) {
        Some(p) => p.display().to_string(),
        None => name.to_string(),
    }
}
