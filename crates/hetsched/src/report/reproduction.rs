//! A reproduction's section (`hetsched reproduce NAME --json`): its criteria, its tables
//! and each experiment's own plots.

use super::svg::{self, esc};
use super::{arr, cell, f64_at, heads, table, text_at};
use serde_json::{Map, Value};
use std::fmt::Write;

fn scalar_keys(cases: &Map<String, Value>) -> Vec<String> {
    let mut keys: Vec<String> = Vec::new();
    for m in cases.values() {
        if let Some(o) = m.as_object() {
            for (k, v) in o {
                if v.is_number() && !keys.contains(k) {
                    keys.push(k.clone());
                }
            }
        }
    }
    keys
}

/// The leaves `results[variant]...[case]` whose values are metric objects, flattened as
/// `(variant, case path, metrics)`: schedfreq nests class/governor/row.
fn leaves<'a>(
    v: &'a Value,
    path: &mut Vec<String>,
    out: &mut Vec<(Vec<String>, &'a Map<String, Value>)>,
) {
    let Some(o) = v.as_object() else { return };
    if o.values().any(Value::is_number) || o.is_empty() {
        out.push((path.clone(), o));
        return;
    }
    for (k, c) in o {
        path.push(k.clone());
        leaves(c, path, out);
        path.pop();
    }
}

pub(super) fn reproduce_section(rep: &Value) -> String {
    let mut s = String::new();
    let exp = rep.get("experiment").and_then(Value::as_str).unwrap_or("?");
    let _ = write!(
        s,
        "<p>{} runs per case, base seed {}. Measured beside the series' own figures (seed).</p>",
        text_at(rep, "/runs"),
        text_at(rep, "/seed")
    );
    // criteria
    let rows: Vec<Vec<String>> = arr(rep, "criteria")
        .iter()
        .map(|c| {
            vec![
                text_at(c, "/name"),
                cell(f64_at(c, &["measured"])),
                text_at(c, "/threshold"),
                if c.get("pass").and_then(Value::as_bool) == Some(true) {
                    "PASS".into()
                } else {
                    "FAIL".into()
                },
            ]
        })
        .collect();
    s.push_str("<h3>Criteria</h3>");
    s.push_str(&table(
        &heads(&["criterion", "measured", "threshold", "verdict"]),
        &rows,
        1,
    ));
    // results beside the seed
    let empty = Value::Object(Map::new());
    let results = rep.get("results").unwrap_or(&empty);
    let seed = rep.get("seed_reference").unwrap_or(&empty);
    let mut ls = Vec::new();
    leaves(results, &mut Vec::new(), &mut ls);
    let variants: Vec<String> = results
        .as_object()
        .map(|o| o.keys().cloned().collect())
        .unwrap_or_default();
    // rows: (case path without the variant, metric)
    let mut cases: Vec<Vec<String>> = Vec::new();
    for (p, _) in &ls {
        let c = p[1..].to_vec();
        if !cases.contains(&c) {
            cases.push(c);
        }
    }
    let mut head = heads(&["case", "metric"]);
    for v in &variants {
        head.push(v.clone());
        head.push(format!("{v} (seed)"));
    }
    let mut rows = Vec::new();
    for case in &cases {
        let mut ms = Map::new();
        for v in &variants {
            let mut ptr = format!("/{}", esc_ptr(v));
            for c in case {
                ptr.push('/');
                ptr.push_str(&esc_ptr(c));
            }
            if let Some(m) = results.pointer(&ptr) {
                ms.insert(v.clone(), m.clone());
            }
        }
        for key in scalar_keys(&ms) {
            let mut row = vec![case.join(" / "), key.clone()];
            for v in &variants {
                let mut ptr = format!("/{}", esc_ptr(v));
                for c in case {
                    ptr.push('/');
                    ptr.push_str(&esc_ptr(c));
                }
                ptr.push('/');
                ptr.push_str(&esc_ptr(&key));
                row.push(cell(results.pointer(&ptr).and_then(Value::as_f64)));
                row.push(cell(seed.pointer(&ptr).and_then(Value::as_f64)));
            }
            rows.push(row);
        }
    }
    s.push_str("<h3>Results beside the seed</h3>");
    s.push_str(&table(&head, &rows, 2));
    s.push_str("<h3>Plots</h3>");
    s.push_str(&match exp {
        "misfit" => misfit_plots(results, &variants),
        "fairness" => fairness_plots(results, &variants),
        "overutilized" => overutilized_plots(results, &variants),
        "schedfreq" => schedfreq_plots(results),
        "hmp" => hmp_plots(results, &variants),
        _ => String::new(),
    });
    let notes = arr(rep, "notes");
    if !notes.is_empty() {
        s.push_str("<h3>Notes</h3><ul class=\"note\">");
        for n in notes {
            let _ = write!(s, "<li>{}</li>", esc(n.as_str().unwrap_or_default()));
        }
        s.push_str("</ul>");
    }
    s
}

fn esc_ptr(s: &str) -> String {
    s.replace('~', "~0").replace('/', "~1")
}

fn case_names(results: &Value, variants: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for v in variants {
        if let Some(o) = results.get(v).and_then(Value::as_object) {
            for k in o.keys() {
                if !out.contains(k) {
                    out.push(k.clone());
                }
            }
        }
    }
    out
}

/// misfit: every unpinned task's completion time in every run, per platform and variant.
fn misfit_plots(results: &Value, variants: &[String]) -> String {
    let cases = case_names(results, variants);
    let series: Vec<(String, Vec<Vec<f64>>)> = variants
        .iter()
        .map(|v| {
            let per_case = cases
                .iter()
                .map(|c| {
                    arr(&results[v][c], "per_run_completion_s")
                        .iter()
                        .flat_map(|run| run.as_array().cloned().unwrap_or_default())
                        .filter_map(|x| x.as_f64())
                        .collect()
                })
                .collect();
            (v.clone(), per_case)
        })
        .collect();
    svg::strips(
        "Completion time of each task in each run (the bar: the mean)",
        "completion, s",
        &cases,
        &series,
    )
}

/// fairness: the ratio's mean with ±sd and the worst run, per case and variant.
fn fairness_plots(results: &Value, variants: &[String]) -> String {
    let cases: Vec<String> = case_names(results, variants)
        .into_iter()
        .filter(|c| c.ends_with("threads"))
        .collect();
    let mut series = Vec::new();
    for v in variants {
        let avg: Vec<f64> = cases
            .iter()
            .map(|c| f64_at(results, &[v, c, "ratio_avg_pct"]).unwrap_or(f64::NAN))
            .collect();
        let wh: Vec<(f64, f64)> = cases
            .iter()
            .map(|c| {
                let a = f64_at(results, &[v, c, "ratio_avg_pct"]).unwrap_or(f64::NAN);
                let sd = f64_at(results, &[v, c, "ratio_sd_pct"]).unwrap_or(0.0);
                let worst = f64_at(results, &[v, c, "ratio_worst_pct"]).unwrap_or(a - sd);
                (worst.min(a - sd), a + sd)
            })
            .collect();
        series.push((v.clone(), avg, Some(wh)));
    }
    let mut s = svg::bars(
        "Fairness ratio: mean (bar), whisker from the worst run (or −sd) to +sd",
        "ratio %",
        &cases,
        &series,
    );
    let hb: Vec<String> = case_names(results, variants)
        .into_iter()
        .filter(|c| c.starts_with("hackbench"))
        .collect();
    if !hb.is_empty() {
        let series: Vec<svg::BarSeries> = variants
            .iter()
            .map(|v| {
                (
                    v.clone(),
                    hb.iter()
                        .map(|c| f64_at(results, &[v, c, "time_s"]).unwrap_or(f64::NAN))
                        .collect(),
                    None,
                )
            })
            .collect();
        s.push_str(&svg::bars("hackbench time", "s", &hb, &series));
    }
    s
}

/// overutilized: OU % per case and variant, and the rt-app test's residency heatmaps.
fn overutilized_plots(results: &Value, variants: &[String]) -> String {
    let cases: Vec<String> = case_names(results, variants)
        .into_iter()
        .filter(|c| !c.ends_with("rtapp"))
        .collect();
    let series: Vec<svg::BarSeries> = variants
        .iter()
        .map(|v| {
            (
                v.clone(),
                cases
                    .iter()
                    .map(|c| f64_at(results, &[v, c, "ou_pct"]).unwrap_or(f64::NAN))
                    .collect(),
                None,
            )
        })
        .collect();
    let mut s = svg::bars("Time overutilized per case", "OU %", &cases, &series);
    for v in variants {
        for c in case_names(results, variants)
            .iter()
            .filter(|c| c.ends_with("rtapp"))
        {
            let Some(res) = results[v][c].get("residency_s").and_then(Value::as_object) else {
                continue;
            };
            let tasks: Vec<String> = res.keys().cloned().collect();
            let ncpu = res
                .values()
                .map(|x| x.as_array().map_or(0, Vec::len))
                .max()
                .unwrap_or(0);
            let vals: Vec<Vec<f64>> = res
                .values()
                .map(|x| {
                    let a = x.as_array().cloned().unwrap_or_default();
                    (0..ncpu)
                        .map(|i| a.get(i).and_then(Value::as_f64).unwrap_or(0.0))
                        .collect()
                })
                .collect();
            let cols: Vec<String> = (0..ncpu).map(|i| format!("CPU{i}")).collect();
            s.push_str(&svg::heatmap(
                &format!("{c}, {v}: residency per task and CPU (s)"),
                &tasks,
                &cols,
                &vals,
                "s",
            ));
        }
    }
    s
}

/// schedfreq: per scheduling class, overruns (summed over the rows) and the mean
/// overhead per governor.
fn schedfreq_plots(results: &Value) -> String {
    let mut s = String::new();
    let Some(classes) = results.as_object() else {
        return s;
    };
    for (class, govs) in classes {
        let Some(govs) = govs.as_object() else {
            continue;
        };
        let names: Vec<String> = govs.keys().cloned().collect();
        let or: Vec<f64> = govs
            .values()
            .map(|rows| {
                rows.as_object().map_or(0.0, |r| {
                    r.values().filter_map(|m| f64_at(m, &["overruns"])).sum()
                })
            })
            .collect();
        let oh: Vec<f64> = govs
            .values()
            .map(|rows| {
                let v: Vec<f64> = rows.as_object().map_or(Vec::new(), |r| {
                    r.values()
                        .filter_map(|m| f64_at(m, &["overhead_pct"]))
                        .collect()
                });
                if v.is_empty() {
                    f64::NAN
                } else {
                    v.iter().sum::<f64>() / v.len() as f64
                }
            })
            .collect();
        s.push_str(&svg::bars(
            &format!("{class}: overruns (OR), all rows"),
            "overruns",
            &names,
            &[("OR".into(), or, None)],
        ));
        s.push_str(&svg::bars(
            &format!("{class}: overhead (OH), mean over rows"),
            "overhead %",
            &names,
            &[("OH".into(), oh, None)],
        ));
    }
    s
}

/// hmp: the distribution of each thread's execution time per run, smp against hmp.
fn hmp_plots(results: &Value, variants: &[String]) -> String {
    let threads: Vec<String> = case_names(results, variants);
    let shown: Vec<String> = if threads.iter().any(|t| t == "Display") {
        vec!["Display".into()]
    } else {
        threads.into_iter().take(1).collect()
    };
    let series: Vec<(String, Vec<Vec<f64>>)> = variants
        .iter()
        .map(|v| {
            (
                v.clone(),
                shown
                    .iter()
                    .map(|t| {
                        arr(&results[v][t], "per_run_s")
                            .iter()
                            .filter_map(Value::as_f64)
                            .collect()
                    })
                    .collect(),
            )
        })
        .collect();
    svg::strips(
        "Execution time per run (each dot a run; the bar: the mean)",
        "CPU time, s",
        &shown,
        &series,
    )
}
