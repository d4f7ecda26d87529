//! A sweep's section (`hetsched sweep -o DIR`): the table grouped by the swept
//! parameters and each metric plotted against each of them.

use super::svg::{self, num};
use super::{heads, table};
use crate::sweep;
use std::fmt::Write;

/// The rows grouped by the swept parameters (the seed left out): each group's size and
/// its metrics' means over the seeds, as `hetsched sweep` prints them; failed points
/// listed under it.
fn sweep_table(t: &sweep::Table, swept: &[usize]) -> String {
    let groups = t.groups(swept);
    let idx = sweep::summary_metrics();
    let mut head: Vec<String> = swept.iter().map(|&c| t.columns[c].clone()).collect();
    head.push("points".into());
    head.extend(
        idx.iter()
            .map(|&i| format!("{} (mean)", sweep::METRICS[i].0)),
    );
    let rows: Vec<Vec<String>> = groups
        .iter()
        .map(|(k, rs)| {
            let mut row = k.clone();
            row.push(rs.len().to_string());
            for &i in &idx {
                row.push(sweep::mean(rs, i).map_or_else(|| "–".into(), num));
            }
            row
        })
        .collect();
    let mut s = table(&head, &rows, swept.len());
    let failed: Vec<Vec<String>> = t
        .rows
        .iter()
        .filter_map(|r| {
            r.error
                .as_ref()
                .map(|e| vec![r.index.to_string(), r.hash.clone(), e.clone()])
        })
        .collect();
    if !failed.is_empty() {
        s.push_str("<h3>Failed points</h3>");
        s.push_str(&table(&heads(&["index", "hash", "error"]), &failed, 3));
    }
    s
}

pub(super) fn sweep_section(t: &sweep::Table) -> String {
    let mut s = String::new();
    let failed = t.rows.iter().filter(|r| r.error.is_some()).count();
    let _ = write!(
        s,
        "<p>{} points, {} failed. Means over seeds; plots show each seed and the spread.</p>",
        t.rows.len(),
        failed
    );
    let swept = t.swept();
    s.push_str(&sweep_table(t, &swept));
    const SHOWN: &[&str] = &[
        "completion_max_s",
        "latency_p99_max_us",
        "energy",
        "overutilized_pct",
        "migrations",
    ];
    for &pc in &swept {
        let xs: Vec<String> = {
            let mut v: Vec<String> = Vec::new();
            for r in &t.rows {
                let x = sweep::experiment::set_text(&r.params[pc]);
                if !v.contains(&x) {
                    v.push(x);
                }
            }
            v
        };
        for m in SHOWN {
            let Some(mi) = sweep::METRICS.iter().position(|(n, _)| n == m) else {
                continue;
            };
            // series: the other swept parameters' values
            let mut series: Vec<(String, Vec<Vec<f64>>)> = Vec::new();
            for r in &t.rows {
                let Some(val) = r.metrics[mi] else { continue };
                let key: Vec<String> = swept
                    .iter()
                    .filter(|&&c| c != pc)
                    .map(|&c| {
                        format!(
                            "{}={}",
                            t.columns[c],
                            sweep::experiment::set_text(&r.params[c])
                        )
                    })
                    .collect();
                let key = if key.is_empty() {
                    "all".to_string()
                } else {
                    key.join(", ")
                };
                let xi = xs
                    .iter()
                    .position(|x| *x == sweep::experiment::set_text(&r.params[pc]))
                    .unwrap_or(0);
                let e = match series.iter().position(|s| s.0 == key) {
                    Some(i) => i,
                    None => {
                        series.push((key, vec![Vec::new(); xs.len()]));
                        series.len() - 1
                    }
                };
                series[e].1[xi].push(val);
            }
            if series.iter().all(|s| s.1.iter().all(Vec::is_empty)) {
                continue;
            }
            s.push_str(&svg::strips(
                &format!(
                    "{m} against {} (each dot a seed; the bar: the mean)",
                    t.columns[pc]
                ),
                m,
                &xs,
                &series,
            ));
        }
    }
    s
}
