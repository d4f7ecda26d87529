//! Generator parameters: the `k=v,k=v` list of a `gen:NAME:…` spec, read with typed
//! getters that check each value and say, in one line, which parameter was wrong and what
//! was expected.
//!
//! Syntax of a value:
//!
//! * integers: `1000`; durations: `16ms`, `500us`, `2.5s`, or a bare number of seconds
//!   (LISA's and stress-ng's unit); percentages: `5`, `12.5` (at most 3 decimals);
//! * CPU lists: taskset's `-c` form, bracketed when it contains commas: `1`, `0-3`,
//!   `[0-3,5]`;
//! * per-thread lists: `[1,2,-,-]` (`-` = not pinned).
//!
//! Commas inside `[…]` do not separate parameters.

use std::collections::BTreeSet;

use hetsched_core::workload::SchedPolicy;

use super::{GenError, ParamSpec};

/// One `key=value` with the 1-based column of its key in the spec (for diagnostics).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Param {
    /// The key.
    pub key: String,
    /// The value as written.
    pub value: String,
    /// 1-based column of the key in the whole spec string (0 when not from a spec).
    pub col: u32,
}

/// Splits `k=v,k=v` at commas outside brackets. `col0` is the 1-based column of the
/// first character of `text` in the whole spec.
pub(crate) fn split(gen: &str, text: &str, col0: u32) -> Result<Vec<Param>, GenError> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut start = 0usize;
    let chars: Vec<char> = text.chars().collect();
    let mut push = |from: usize, to: usize| -> Result<(), GenError> {
        let item: String = chars[from..to].iter().collect();
        if item.trim().is_empty() {
            return Ok(());
        }
        let col = col0 + from as u32;
        match item.split_once('=') {
            Some((k, v)) if !k.trim().is_empty() => {
                out.push(Param {
                    key: k.trim().to_string(),
                    value: v.trim().to_string(),
                    col,
                });
                Ok(())
            }
            _ => Err(GenError::new(
                gen,
                format!("`{item}`: expected key=value (for example threads=4)"),
            )),
        }
    };
    for (i, c) in chars.iter().enumerate() {
        match c {
            '[' => depth += 1,
            ']' => depth -= 1,
            ',' if depth == 0 => {
                push(start, i)?;
                start = i + 1;
            }
            _ => {}
        }
    }
    if depth != 0 {
        return Err(GenError::new(gen, "unbalanced `[`/`]` in the parameters"));
    }
    push(start, chars.len())?;
    Ok(out)
}

/// The parameters given to one generator, consumed by typed getters; [`Params::finish`]
/// rejects keys no getter asked for.
#[derive(Debug)]
pub struct Params {
    gen: &'static str,
    specs: &'static [ParamSpec],
    items: Vec<Param>,
    used: BTreeSet<String>,
}

impl Params {
    /// The parameters `items` for generator `gen`, whose accepted keys are `specs`.
    /// A key given twice is an error.
    pub fn new(
        gen: &'static str,
        specs: &'static [ParamSpec],
        items: Vec<Param>,
    ) -> Result<Params, GenError> {
        let mut seen = BTreeSet::new();
        for p in &items {
            if !specs.iter().any(|s| s.name == p.key) {
                let known: Vec<&str> = specs.iter().map(|s| s.name).collect();
                return Err(GenError::new(
                    gen,
                    format!(
                        "unknown parameter `{}`; expected one of: {}",
                        p.key,
                        known.join(", ")
                    ),
                ));
            }
            if !seen.insert(p.key.clone()) {
                return Err(GenError::new(
                    gen,
                    format!("parameter `{}` is given twice", p.key),
                ));
            }
        }
        Ok(Params {
            gen,
            specs,
            items,
            used: BTreeSet::new(),
        })
    }

    /// The generator's name.
    pub fn generator(&self) -> &'static str {
        self.gen
    }

    fn err(&self, key: &str, value: &str, expected: &str) -> GenError {
        GenError::new(self.gen, format!("{key}={value}: expected {expected}"))
    }

    /// The raw value of `key`, if given.
    pub fn raw(&mut self, key: &str) -> Option<String> {
        debug_assert!(self.specs.iter().any(|s| s.name == key), "{key}");
        self.used.insert(key.to_string());
        self.items
            .iter()
            .find(|p| p.key == key)
            .map(|p| p.value.clone())
    }

    /// Whether `key` was given.
    pub fn has(&self, key: &str) -> bool {
        self.items.iter().any(|p| p.key == key)
    }

    /// The 1-based column of `key` in the spec, if given there.
    pub fn col(&self, key: &str) -> Option<u32> {
        self.items
            .iter()
            .find(|p| p.key == key)
            .map(|p| p.col)
            .filter(|&c| c > 0)
    }

    /// An integer in `min..=max`.
    pub fn u64_in(&mut self, key: &str, min: u64, max: u64) -> Result<Option<u64>, GenError> {
        let Some(v) = self.raw(key) else {
            return Ok(None);
        };
        match v.parse::<u64>() {
            Ok(n) if (min..=max).contains(&n) => Ok(Some(n)),
            _ => Err(self.err(
                key,
                &v,
                &if max == u64::MAX {
                    format!("an integer ≥ {min}")
                } else {
                    format!("an integer from {min} to {max}")
                },
            )),
        }
    }

    /// A signed integer in `min..=max`.
    pub fn i64_in(&mut self, key: &str, min: i64, max: i64) -> Result<Option<i64>, GenError> {
        let Some(v) = self.raw(key) else {
            return Ok(None);
        };
        match v.parse::<i64>() {
            Ok(n) if (min..=max).contains(&n) => Ok(Some(n)),
            _ => Err(self.err(key, &v, &format!("an integer from {min} to {max}"))),
        }
    }

    /// A duration in µs (`16ms`, `500us`, `2.5s`, bare = seconds), at least 1 µs.
    pub fn duration_us(&mut self, key: &str) -> Result<Option<u64>, GenError> {
        let Some(v) = self.raw(key) else {
            return Ok(None);
        };
        parse_duration_us(&v)
            .filter(|&d| d > 0)
            .map(Some)
            .ok_or_else(|| {
                self.err(
                    key,
                    &v,
                    "a positive duration with an optional unit us, ms or s (bare number = seconds), for example 16ms",
                )
            })
    }

    /// A percentage 0..=100 with up to 3 decimals, as thousandths of a percent.
    pub fn percent_milli(&mut self, key: &str) -> Result<Option<u64>, GenError> {
        let Some(v) = self.raw(key) else {
            return Ok(None);
        };
        parse_fixed3(v.trim_end_matches('%'))
            .filter(|&m| m <= 100_000)
            .map(Some)
            .ok_or_else(|| self.err(key, &v, "a percentage from 0 to 100 (up to 3 decimals)"))
    }

    /// A CPU list (`1`, `0-3`, `[0-3,5]`), sorted and deduplicated, not empty.
    pub fn cpus(&mut self, key: &str) -> Result<Option<Vec<usize>>, GenError> {
        let Some(v) = self.raw(key) else {
            return Ok(None);
        };
        let inner = strip_brackets(&v);
        parse_cpu_list(inner)
            .map(Some)
            .ok_or_else(|| self.err(key, &v, "a CPU list such as 1, 0-3 or [0-3,5]"))
    }

    /// A per-thread list of CPUs or `-` (not pinned): `[1,2,-,-]`.
    pub fn pin_list(&mut self, key: &str) -> Result<Option<Vec<Option<usize>>>, GenError> {
        let Some(v) = self.raw(key) else {
            return Ok(None);
        };
        let bad = || {
            self.err(
                key,
                &v,
                "one CPU number or - per thread, in brackets: [1,2,-,-]",
            )
        };
        let inner = strip_brackets(&v);
        let mut out = Vec::new();
        for item in inner.split(',') {
            let item = item.trim();
            if item == "-" {
                out.push(None);
            } else {
                out.push(Some(item.parse::<usize>().map_err(|_| bad())?));
            }
        }
        Ok(Some(out))
    }

    /// A scheduling policy: `SCHED_FIFO`, `fifo`, `other`…
    pub fn policy(&mut self, key: &str) -> Result<Option<SchedPolicy>, GenError> {
        let Some(v) = self.raw(key) else {
            return Ok(None);
        };
        let up = v.to_ascii_uppercase();
        let full = if up.starts_with("SCHED_") {
            up
        } else {
            format!("SCHED_{up}")
        };
        SchedPolicy::parse(&full).map(Some).ok_or_else(|| {
            self.err(
                key,
                &v,
                "one of SCHED_OTHER, SCHED_BATCH, SCHED_IDLE, SCHED_FIFO, SCHED_RR, SCHED_DEADLINE (or other, fifo…)",
            )
        })
    }

    /// A name usable as an rt-app task name: `[A-Za-z0-9_-]+`.
    pub fn name(&mut self, key: &str) -> Result<Option<String>, GenError> {
        let Some(v) = self.raw(key) else {
            return Ok(None);
        };
        if !v.is_empty()
            && v.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            Ok(Some(v))
        } else {
            Err(self.err(key, &v, "a name of letters, digits, _ and -"))
        }
    }

    /// One of `choices`.
    pub fn choice(
        &mut self,
        key: &str,
        choices: &[&'static str],
    ) -> Result<Option<&'static str>, GenError> {
        let Some(v) = self.raw(key) else {
            return Ok(None);
        };
        choices
            .iter()
            .copied()
            .find(|c| *c == v)
            .map(Some)
            .ok_or_else(|| self.err(key, &v, &format!("one of {}", choices.join(", "))))
    }

    /// Fails if a given key was never read (a parameter the generator does not use in
    /// this combination).
    pub fn finish(self) -> Result<(), GenError> {
        if let Some(p) = self.items.iter().find(|p| !self.used.contains(&p.key)) {
            return Err(GenError::new(
                self.gen,
                format!("parameter `{}` is not used here", p.key),
            ));
        }
        Ok(())
    }
}

fn strip_brackets(v: &str) -> &str {
    v.strip_prefix('[')
        .and_then(|s| s.strip_suffix(']'))
        .unwrap_or(v)
}

/// `12.5` → 12500 (thousandths), exact; at most 3 decimals.
fn parse_fixed3(s: &str) -> Option<u64> {
    let (int, frac) = s.split_once('.').unwrap_or((s, ""));
    if int.is_empty() && frac.is_empty() || frac.len() > 3 {
        return None;
    }
    if !int.chars().all(|c| c.is_ascii_digit()) || !frac.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let i: u64 = if int.is_empty() { 0 } else { int.parse().ok()? };
    let mut f: u64 = if frac.is_empty() {
        0
    } else {
        frac.parse().ok()?
    };
    for _ in frac.len()..3 {
        f *= 10;
    }
    i.checked_mul(1000)?.checked_add(f)
}

/// `16ms` → 16000; `2.5s` → 2500000; `7` → 7000000 (seconds). Exact decimal arithmetic,
/// no floats; a result below 1 µs is rejected by the caller (fractions of a µs truncate).
pub(crate) fn parse_duration_us(s: &str) -> Option<u64> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let scale: u64 = match unit.trim() {
        "s" | "" => 1_000_000,
        "ms" => 1_000,
        "us" | "µs" => 1,
        _ => return None,
    };
    let (int, frac) = num.split_once('.').unwrap_or((num, ""));
    if int.is_empty() && frac.is_empty() || frac.len() > 9 {
        return None;
    }
    let i: u64 = if int.is_empty() { 0 } else { int.parse().ok()? };
    let f: u64 = if frac.is_empty() {
        0
    } else {
        let f: u64 = frac.parse().ok()?;
        f.checked_mul(scale)? / 10u64.pow(frac.len() as u32)
    };
    i.checked_mul(scale)?.checked_add(f)
}

/// taskset's list form: `0-3,5` → `[0,1,2,3,5]`. Sorted, deduplicated, not empty; at most
/// 4096 CPUs.
pub(crate) fn parse_cpu_list(s: &str) -> Option<Vec<usize>> {
    let mut set = BTreeSet::new();
    for item in s.split(',') {
        let item = item.trim();
        let (a, b) = match item.split_once('-') {
            Some((a, b)) => (a.trim().parse::<usize>().ok()?, b.trim().parse().ok()?),
            None => {
                let c = item.parse::<usize>().ok()?;
                (c, c)
            }
        };
        if a > b || b >= 4096 {
            return None;
        }
        set.extend(a..=b);
    }
    if set.is_empty() {
        None
    } else {
        Some(set.into_iter().collect())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn durations_are_exact() {
        assert_eq!(parse_duration_us("16ms"), Some(16_000));
        assert_eq!(parse_duration_us("2.5s"), Some(2_500_000));
        assert_eq!(parse_duration_us("7"), Some(7_000_000));
        assert_eq!(parse_duration_us("500us"), Some(500));
        assert_eq!(parse_duration_us("0.0005"), Some(500));
        assert_eq!(parse_duration_us("1h"), None);
        assert_eq!(parse_duration_us(""), None);
    }

    #[test]
    fn cpu_lists() {
        assert_eq!(parse_cpu_list("0-3,5"), Some(vec![0, 1, 2, 3, 5]));
        assert_eq!(parse_cpu_list("2,1,2"), Some(vec![1, 2]));
        assert_eq!(parse_cpu_list("3-1"), None);
        assert_eq!(parse_cpu_list("x"), None);
    }

    #[test]
    fn split_respects_brackets_and_columns() {
        // "gen:x:" is 6 characters, so the parameters start at column 7.
        let p = split("x", "a=1,cpus=[0-3,5],b=2", 7).unwrap();
        assert_eq!(p.len(), 3);
        assert_eq!(p[1].key, "cpus");
        assert_eq!(p[1].value, "[0-3,5]");
        assert_eq!(p[1].col, 11);
        assert_eq!(p[2].col, 24);
        assert!(split("x", "a", 1).is_err());
        assert!(split("x", "a=[1", 1).is_err());
    }

    #[test]
    fn percent_thousandths() {
        assert_eq!(parse_fixed3("12.5"), Some(12_500));
        assert_eq!(parse_fixed3("100"), Some(100_000));
        assert_eq!(parse_fixed3("0.001"), Some(1));
        assert_eq!(parse_fixed3("0.0001"), None);
    }
}
