//! A run's section: its summary tables (from `hetsched run --json`) and, when the result
//! holds a [`timeline`], the per-CPU Gantt chart and the frequency,
//! utilization, overutilized and energy plots.

use super::svg::{self, colour, num, Chart};
use super::{arr, cell, f64_at, heads, table, text_at, timeline};
use serde_json::Value;
use std::fmt::Write;

pub(super) fn run_section(r: &Value) -> String {
    let mut s = String::new();
    let text = |k: &str| {
        r.get(k)
            .map(|v| v.as_str().map_or(v.to_string(), String::from))
            .unwrap_or_default()
    };
    let kernel = r
        .pointer("/settings/options/kernel")
        .map(|v| v.as_str().map_or(v.to_string(), String::from))
        .unwrap_or_default();
    s.push_str(&table(
        &heads(&[
            "platform",
            "workload",
            "kernel",
            "seed",
            "duration s",
            "energy",
            "overutilized %",
            "OU triggers",
            "context switches",
        ]),
        &[vec![
            text("platform"),
            text("workload"),
            kernel,
            text("seed"),
            cell(f64_at(r, &["duration_s"])),
            format!(
                "{} {}",
                cell(f64_at(r, &["energy", "total"])),
                text_at(r, "/energy/units")
            ),
            cell(f64_at(r, &["overutilized", "pct"])),
            cell(f64_at(r, &["overutilized", "triggers"])),
            cell(f64_at(r, &["engine", "context_switches"])),
        ]],
        3,
    ));
    let tasks = arr(r, "tasks");
    s.push_str("<h3>Tasks</h3>");
    let rows: Vec<Vec<String>> = tasks
        .iter()
        .map(|t| {
            vec![
                text_at(t, "/comm"),
                text_at(t, "/pid"),
                cell(f64_at(t, &["cpu_time_s"])),
                cell(f64_at(t, &["wait_time_s"])),
                cell(f64_at(t, &["wakeup_latency_us", "mean"])),
                cell(f64_at(t, &["wakeup_latency_us", "p99"])),
                cell(f64_at(t, &["completion_s"])),
                cell(f64_at(t, &["migrations"])),
            ]
        })
        .collect();
    s.push_str(&table(
        &heads(&[
            "task",
            "pid",
            "CPU s",
            "wait s",
            "latency mean µs",
            "latency p99 µs",
            "completion s",
            "migrations",
        ]),
        &rows,
        1,
    ));
    let cpus = arr(r, "cpus");
    let rows: Vec<Vec<String>> = cpus
        .iter()
        .map(|c| {
            vec![
                text_at(c, "/cpu"),
                cell(f64_at(c, &["busy_s"])),
                cell(f64_at(c, &["idle_s"])),
                c.get("freq_residency_s")
                    .and_then(Value::as_object)
                    .map(|m| {
                        m.iter()
                            .filter(|(_, v)| v.as_f64().unwrap_or(0.0) > 0.0)
                            .map(|(k, v)| {
                                format!(
                                    "{} MHz {} s",
                                    num(k.parse::<f64>().unwrap_or(0.0) / 1000.0),
                                    num(v.as_f64().unwrap_or(0.0))
                                )
                            })
                            .collect::<Vec<_>>()
                            .join(", ")
                    })
                    .unwrap_or_default(),
            ]
        })
        .collect();
    s.push_str("<h3>CPUs</h3>");
    s.push_str(&table(
        &heads(&["CPU", "busy s", "idle s", "time per frequency"]),
        &rows,
        0,
    ));

    let pd_of: Vec<usize> = arr(&r["energy"], "cpus")
        .iter()
        .map(|c| c.get("pd").and_then(Value::as_u64).unwrap_or(0) as usize)
        .collect();
    let comm_of = |pid: u64| {
        tasks
            .iter()
            .find(|t| t.get("pid").and_then(Value::as_u64) == Some(pid))
            .map(|t| text_at(t, "/comm"))
    };
    match r.get("timeline").and_then(|t| serde_json::from_value::<TimelineView>(t.clone()).ok()) {
        Some(tl) => {
            s.push_str("<h3>Timeline</h3>");
            s.push_str(&gantt(&tl));
            s.push_str(&freq_plot(&tl, &pd_of));
            s.push_str(&util_plot(&tl, &tasks));
            s.push_str(&ou_plot(&tl));
            let _ = write!(
                s,
                "<p class=\"note\">Downsampled to {} buckets of {} ms (at most {}; docs/report.md): per bucket the task that ran longest (its opacity the busy fraction), the mean frequency, the highest util.</p>",
                tl.buckets,
                num(tl.bucket_s * 1e3),
                timeline::MAX_BUCKETS
            );
        }
        None => s.push_str(
            "<p class=\"note\">This result has no timeline: run with <code>hetsched run --timeline --json …</code> (or <code>--report</code>) for the per-CPU Gantt, frequency, utilization and overutilized plots.</p>",
        ),
    }
    // residency heatmap from the result's per-task residency
    let ncpu = cpus.len();
    let rows: Vec<String> = tasks.iter().map(|t| text_at(t, "/comm")).collect();
    let vals: Vec<Vec<f64>> = tasks
        .iter()
        .map(|t| {
            let v: Vec<f64> = arr(t, "residency_s")
                .iter()
                .map(|x| x.as_f64().unwrap_or(0.0))
                .collect();
            (0..ncpu)
                .map(|c| v.get(c).copied().unwrap_or(0.0))
                .collect()
        })
        .collect();
    let cols: Vec<String> = (0..ncpu).map(|c| format!("CPU{c}")).collect();
    if !rows.is_empty() {
        s.push_str(&svg::heatmap(
            "Residency: running time per task and CPU (s)",
            &rows,
            &cols,
            &vals,
            "s",
        ));
    }
    s.push_str(&energy_plot(r));
    let _ = comm_of;
    s
}

/// The timeline as the report reads it back from JSON.
#[derive(Debug, serde::Deserialize)]
struct TimelineView {
    bucket_s: f64,
    buckets: usize,
    comms: std::collections::BTreeMap<u32, String>,
    cpus: Vec<CpuView>,
    tasks: Vec<TaskView>,
    overutilized: Vec<f64>,
}

#[derive(Debug, serde::Deserialize)]
struct CpuView {
    cpu: usize,
    task: Vec<u32>,
    busy: Vec<f64>,
    freq_khz: Vec<u64>,
    idle_deep: Vec<f64>,
    util: Vec<u64>,
}

#[derive(Debug, serde::Deserialize)]
struct TaskView {
    pid: u32,
    comm: String,
    util: Vec<u64>,
    util_est: Vec<u64>,
}

fn gantt(tl: &TimelineView) -> String {
    let n = tl.cpus.len().max(1);
    let t1 = tl.buckets as f64 * tl.bucket_s;
    let mut c = Chart::new(
        "Per-CPU timeline: tasks (colour), frequency (grey strip: darker is faster), deep idle (hatched)",
        "time, s",
        "",
        (0.0, t1),
        (0.0, n as f64),
        (n as f64 * 28.0).max(60.0),
    );
    c.x_ticks();
    // colours by pid, in pid order
    let pids: Vec<u32> = tl.comms.keys().copied().collect();
    let col = |pid: u32| colour(pids.iter().position(|p| *p == pid).unwrap_or(0));
    let fmax = tl
        .cpus
        .iter()
        .flat_map(|c| c.freq_khz.iter())
        .copied()
        .max()
        .unwrap_or(1)
        .max(1);
    let mut used = std::collections::BTreeSet::new();
    for cpu in &tl.cpus {
        let y = (n - 1 - cpu.cpu) as f64;
        c.raw(&format!(
            "<text class=\"yt\" x=\"66\" y=\"{:.1}\">CPU{}</text>",
            c.py(y + 0.5) + 4.0,
            cpu.cpu
        ));
        // merge equal neighbouring buckets into one mark
        let mut i = 0;
        while i < cpu.task.len() {
            let (pid, busy) = (cpu.task[i], (cpu.busy[i] * 10.0).round());
            let mut j = i + 1;
            while j < cpu.task.len() && cpu.task[j] == pid && (cpu.busy[j] * 10.0).round() == busy {
                j += 1;
            }
            let (a, b) = (i as f64 * tl.bucket_s, j as f64 * tl.bucket_s);
            if pid != 0 {
                used.insert(pid);
                let name = tl.comms.get(&pid).map_or("?", |s| s.as_str());
                c.rect(
                    (a, b),
                    (y + 0.3, y + 0.95),
                    col(pid),
                    (busy / 10.0).max(0.15),
                    &format!(
                        "CPU{} {}–{} s: {name} ({pid}), busy {}%",
                        cpu.cpu,
                        num(a),
                        num(b),
                        num(busy * 10.0)
                    ),
                );
            }
            i = j;
        }
        let mut i = 0;
        while i < cpu.freq_khz.len() {
            let f = cpu.freq_khz[i];
            let mut j = i + 1;
            while j < cpu.freq_khz.len() && cpu.freq_khz[j] == f {
                j += 1;
            }
            if f > 0 {
                let (a, b) = (i as f64 * tl.bucket_s, j as f64 * tl.bucket_s);
                c.rect(
                    (a, b),
                    (y + 0.08, y + 0.25),
                    "#555",
                    0.1 + 0.8 * f as f64 / fmax as f64,
                    &format!(
                        "CPU{} {}–{} s: {} MHz",
                        cpu.cpu,
                        num(a),
                        num(b),
                        num(f as f64 / 1000.0)
                    ),
                );
            }
            i = j;
        }
        let mut i = 0;
        while i < cpu.idle_deep.len() {
            if cpu.idle_deep[i] < 0.5 {
                i += 1;
                continue;
            }
            let mut j = i + 1;
            while j < cpu.idle_deep.len() && cpu.idle_deep[j] >= 0.5 {
                j += 1;
            }
            let (a, b) = (i as f64 * tl.bucket_s, j as f64 * tl.bucket_s);
            c.rect(
                (a, b),
                (y + 0.3, y + 0.95),
                "url(#hatch)",
                1.0,
                &format!(
                    "CPU{} {}–{} s: mostly in a deep idle state",
                    cpu.cpu,
                    num(a),
                    num(b)
                ),
            );
            i = j;
        }
    }
    c.raw("<defs><pattern id=\"hatch\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\"><path d=\"M0 6L6 0\" stroke=\"#bbb\"/></pattern></defs>");
    for pid in &used {
        c.legend(tl.comms.get(pid).map_or("?", |s| s.as_str()), col(*pid));
    }
    c.finish()
}

fn freq_plot(tl: &TimelineView, pd_of: &[usize]) -> String {
    let t1 = tl.buckets as f64 * tl.bucket_s;
    let mut pds: Vec<(usize, usize)> = Vec::new(); // (pd, first cpu)
    for cpu in &tl.cpus {
        let pd = pd_of.get(cpu.cpu).copied().unwrap_or(cpu.cpu);
        if !pds.iter().any(|p| p.0 == pd) {
            pds.push((pd, cpu.cpu));
        }
    }
    let y = svg::range(
        tl.cpus
            .iter()
            .flat_map(|c| c.freq_khz.iter().map(|f| *f as f64 / 1000.0)),
        true,
    );
    let mut c = Chart::new(
        "Frequency per performance domain (mean per bucket)",
        "time, s",
        "MHz",
        (0.0, t1),
        y,
        180.0,
    );
    c.x_ticks();
    for (k, (pd, cpu)) in pds.iter().enumerate() {
        let Some(s) = tl.cpus.iter().find(|c| c.cpu == *cpu) else {
            continue;
        };
        let pts: Vec<(f64, f64)> = s
            .freq_khz
            .iter()
            .enumerate()
            .filter(|(_, f)| **f > 0)
            .map(|(i, f)| (i as f64 * tl.bucket_s, *f as f64 / 1000.0))
            .collect();
        let name = format!("pd{pd} (CPU{cpu})");
        c.line(&pts, colour(k), true, &name);
        c.legend(&name, colour(k));
    }
    c.finish()
}

fn util_plot(tl: &TimelineView, tasks: &[Value]) -> String {
    let t1 = tl.buckets as f64 * tl.bucket_s;
    // the six workload tasks with the most CPU time, then every CPU
    let mut ranked: Vec<(f64, u32)> = tasks
        .iter()
        .filter_map(|t| {
            Some((
                t.get("cpu_time_s")?.as_f64()?,
                t.get("pid")?.as_u64()? as u32,
            ))
        })
        .collect();
    ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let chosen: Vec<&TaskView> = ranked
        .iter()
        .filter_map(|(_, pid)| tl.tasks.iter().find(|t| t.pid == *pid))
        .filter(|t| t.util.iter().any(|u| *u > 0))
        .take(6)
        .collect();
    let mut out = String::new();
    let mut c = Chart::new(
        "util_avg (solid) and util_est (dotted) of the busiest tasks (max per bucket)",
        "time, s",
        "util (of 1024)",
        (0.0, t1),
        (0.0, 1100.0),
        200.0,
    );
    c.x_ticks();
    for (k, t) in chosen.iter().enumerate() {
        let pts = |v: &[u64]| -> Vec<(f64, f64)> {
            v.iter()
                .enumerate()
                .map(|(i, u)| (i as f64 * tl.bucket_s, *u as f64))
                .collect()
        };
        c.line(
            &pts(&t.util),
            colour(k),
            true,
            &format!("{} util_avg", t.comm),
        );
        c.raw("<g stroke-dasharray=\"2 2\">");
        c.line(
            &pts(&t.util_est),
            colour(k),
            true,
            &format!("{} util_est", t.comm),
        );
        c.raw("</g>");
        c.legend(&t.comm, colour(k));
    }
    out.push_str(&c.finish());
    let mut c = Chart::new(
        "util_avg of each CPU's cfs_rq (max per bucket)",
        "time, s",
        "util (of 1024)",
        (0.0, t1),
        (0.0, 1100.0),
        200.0,
    );
    c.x_ticks();
    for (k, cpu) in tl.cpus.iter().enumerate() {
        let pts: Vec<(f64, f64)> = cpu
            .util
            .iter()
            .enumerate()
            .map(|(i, u)| (i as f64 * tl.bucket_s, *u as f64))
            .collect();
        let name = format!("CPU{}", cpu.cpu);
        c.line(&pts, colour(k), true, &name);
        c.legend(&name, colour(k));
    }
    out.push_str(&c.finish());
    out
}

fn ou_plot(tl: &TimelineView) -> String {
    let t1 = tl.buckets as f64 * tl.bucket_s;
    let mut c = Chart::new(
        "Overutilized: fraction of each bucket the root domain was overutilized",
        "time, s",
        "fraction",
        (0.0, t1),
        (0.0, 1.05),
        80.0,
    );
    c.x_ticks();
    let mut i = 0;
    let v = &tl.overutilized;
    while i < v.len() {
        if v[i] <= 0.0 {
            i += 1;
            continue;
        }
        let q = (v[i] * 20.0).round();
        let mut j = i + 1;
        while j < v.len() && v[j] > 0.0 && (v[j] * 20.0).round() == q {
            j += 1;
        }
        let (a, b) = (i as f64 * tl.bucket_s, j as f64 * tl.bucket_s);
        c.rect(
            (a, b),
            (0.0, v[i]),
            "#c62828",
            0.8,
            &format!(
                "{}–{} s: overutilized {}%",
                num(a),
                num(b),
                num(v[i] * 100.0)
            ),
        );
        i = j;
    }
    c.legend("overutilized", "#c62828");
    c.finish()
}

fn energy_plot(r: &Value) -> String {
    let series = arr(&r["energy"], "series");
    if series.is_empty() {
        return String::new();
    }
    let bucket = f64_at(r, &["energy", "bucket_s"]).unwrap_or(1.0).max(1e-9);
    let npd = series.iter().map(|p| arr(p, "pd").len()).max().unwrap_or(0);
    let units = text_at(r, "/energy/units");
    let t1 = series
        .iter()
        .filter_map(|p| f64_at(p, &["t_s"]))
        .fold(0.0, f64::max)
        + bucket;
    let y = svg::range(
        series
            .iter()
            .flat_map(|p| arr(p, "pd").into_iter().filter_map(|v| v.as_f64()))
            .map(|e| e / bucket),
        true,
    );
    let mut c = Chart::new(
        &format!(
            "Power per performance domain (energy per {} s bucket ÷ bucket; {units})",
            num(bucket)
        ),
        "time, s",
        "power",
        (0.0, t1),
        y,
        180.0,
    );
    c.x_ticks();
    for pd in 0..npd {
        let pts: Vec<(f64, f64)> = series
            .iter()
            .filter_map(|p| {
                Some((
                    f64_at(p, &["t_s"])?,
                    arr(p, "pd").get(pd)?.as_f64()? / bucket,
                ))
            })
            .collect();
        let name = format!("pd{pd}");
        c.line(&pts, colour(pd), true, &name);
        c.legend(&name, colour(pd));
    }
    c.finish()
}
