//! Writing workloads: a human summary ([`describe`]) and strict rt-app JSON
//! ([`to_rtapp_json`]).

use std::collections::HashSet;
use std::fmt::Write as _;

use hetsched_core::workload::{
    Calibration, Event, FtraceCategories, MemrunType, Phase, SchedAttrs, TaskSpec, TimerMode,
    Workload,
};

use crate::grammar::{event_prefix, PHASE_LOOP_FOREVER};

fn ftrace_list(f: &FtraceCategories) -> String {
    let cats: Vec<&str> = [
        (f.main, "main"),
        (f.task, "task"),
        (f.loop_, "loop"),
        (f.event, "event"),
        (f.stats, "stats"),
    ]
    .iter()
    .filter(|(on, _)| *on)
    .map(|(_, n)| *n)
    .collect();
    if cats.is_empty() {
        "none".into()
    } else {
        cats.join(",")
    }
}

fn calibration_str(c: Calibration) -> String {
    match c {
        Calibration::Cpu(n) => format!("CPU{n}"),
        Calibration::PLoadNs(p) => format!("pLoad {p} ns/loop"),
    }
}

fn loops(n: u64) -> String {
    if n == PHASE_LOOP_FOREVER {
        "forever".into()
    } else {
        n.to_string()
    }
}

fn attrs_str(a: &SchedAttrs) -> String {
    let mut parts = Vec::new();
    if let Some(p) = a.policy {
        parts.push(p.as_str().to_string());
    }
    if let Some(p) = a.priority {
        parts.push(format!("priority {p}"));
    }
    if let Some(c) = &a.cpus {
        parts.push(format!("cpus {c:?}"));
    }
    if let Some(u) = a.util_min {
        parts.push(format!("util_min {u}"));
    }
    if let Some(u) = a.util_max {
        parts.push(format!("util_max {u}"));
    }
    if let Some(r) = a.dl_runtime_us {
        parts.push(format!(
            "dl {r}/{}/{} µs",
            a.dl_deadline_us.unwrap_or(0),
            a.dl_period_us.unwrap_or(0)
        ));
    }
    if let Some(t) = &a.taskgroup {
        parts.push(format!("taskgroup {t}"));
    }
    if parts.is_empty() {
        "-".into()
    } else {
        parts.join(", ")
    }
}

fn event_str(e: &Event) -> String {
    match e {
        Event::Run { us } => format!("run {us}"),
        Event::Runtime { us } => format!("runtime {us}"),
        Event::Sleep { us } => format!("sleep {us}"),
        Event::Timer {
            name,
            period_us,
            mode,
        } => format!(
            "timer {name}/{period_us}{}",
            if *mode == TimerMode::Absolute {
                " abs"
            } else {
                ""
            }
        ),
        Event::Lock { mutex } => format!("lock {mutex}"),
        Event::Unlock { mutex } => format!("unlock {mutex}"),
        Event::Wait { cond, mutex } => format!("wait {cond}/{mutex}"),
        Event::Signal { cond } => format!("signal {cond}"),
        Event::Broad { cond } => format!("broad {cond}"),
        Event::Sync { cond, mutex } => format!("sync {cond}/{mutex}"),
        Event::Barrier { name } => format!("barrier {name}"),
        Event::Suspend { name } => format!("suspend {name}"),
        Event::Resume { name } => format!("resume {name}"),
        Event::SemPost { sem } => format!("sem_post {sem}"),
        Event::SemWait { sem } => format!("sem_wait {sem}"),
        Event::Yield => "yield".into(),
        Event::Fork { task } => format!("fork {task}"),
        Event::Mem { bytes } => format!("mem {bytes}"),
        Event::Iorun { bytes } => format!("iorun {bytes}"),
        Event::Memrun { kind, size, count } => format!("memrun {kind:?} {size}x{count}"),
    }
}

fn run_us(p: &Phase) -> u64 {
    p.events
        .iter()
        .map(|e| match e.event {
            Event::Run { us } => us,
            _ => 0,
        })
        .fold(0u64, u64::saturating_add)
}

/// A human summary of a workload, for `hetsched validate W.json`: global settings,
/// then per task its instances, loops, attributes and phases (loops, events in order,
/// total `run` work per phase iteration and per task loop), then the warnings.
pub fn describe(w: &Workload) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "workload {}{}",
        w.name,
        w.source
            .as_deref()
            .map(|p| format!(" ({p})"))
            .unwrap_or_default()
    );
    let _ = writeln!(
        s,
        "  duration: {}",
        w.duration_s
            .map(|d| format!("{d} s"))
            .unwrap_or_else(|| "until every task ends".into())
    );
    let _ = writeln!(s, "  calibration: {}", calibration_str(w.calibration));
    let _ = writeln!(
        s,
        "  default policy: {}, pi_enabled: {}, cumulative_slack: {}",
        w.default_policy.as_str(),
        w.pi_enabled,
        w.cumulative_slack
    );
    let _ = writeln!(s, "  ftrace: {}", ftrace_list(&w.ftrace));
    let threads: u64 = w.tasks.iter().map(|t| u64::from(t.instances)).sum();
    let _ = writeln!(s, "  tasks: {} ({threads} threads at start)", w.tasks.len());
    for t in &w.tasks {
        let _ = writeln!(
            s,
            "  task {} (line {}): instances {}, loop {}, delay {} µs, attrs: {}",
            t.name,
            t.span.line,
            t.instances,
            if t.loop_count < 0 {
                "forever".into()
            } else {
                t.loop_count.to_string()
            },
            t.delay_us,
            attrs_str(&t.attrs)
        );
        let mut per_loop: Option<u64> = Some(0);
        for p in &t.phases {
            let r = run_us(p);
            per_loop = per_loop.and_then(|acc| {
                if p.loop_count == PHASE_LOOP_FOREVER && r > 0 {
                    None
                } else {
                    Some(acc.saturating_add(r.saturating_mul(p.loop_count.min(u64::MAX / 2))))
                }
            });
            let _ = writeln!(
                s,
                "    phase {}: loop {}, {} events, run {} µs per iteration, attrs: {}",
                p.name,
                loops(p.loop_count),
                p.events.len(),
                r,
                attrs_str(&p.attrs)
            );
            let evs: Vec<String> = p.events.iter().map(|e| event_str(&e.event)).collect();
            let _ = writeln!(s, "      {}", evs.join(", "));
        }
        let _ = writeln!(
            s,
            "    run work per task loop: {}",
            per_loop
                .map(|u| format!("{u} µs"))
                .unwrap_or_else(|| "unbounded (a phase loops forever)".into())
        );
    }
    let _ = writeln!(s, "  warnings: {}", w.warnings.len());
    for m in &w.warnings {
        let _ = writeln!(s, "    {m}");
    }
    s
}

fn q(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

/// Unique key in `used`, renamed as doc/workgen does (`run` → `run1`, `run2`…).
fn unique(key: &str, used: &mut HashSet<String>, curid: &mut u32) -> String {
    let mut k = key.to_string();
    if used.contains(&k) {
        k = format!("{key}{curid}");
        while used.contains(&k) {
            *curid += 1;
            k = format!("{key}{curid}");
        }
    }
    used.insert(k.clone());
    k
}

fn write_attrs(out: &mut Vec<(String, String)>, a: &SchedAttrs, skip_cpus: bool) {
    if let Some(p) = a.policy {
        out.push(("policy".into(), q(p.as_str())));
    }
    if let Some(p) = a.priority {
        out.push(("priority".into(), p.to_string()));
    }
    if let (Some(c), false) = (&a.cpus, skip_cpus) {
        let list: Vec<String> = c.iter().map(|c| c.to_string()).collect();
        out.push(("cpus".into(), format!("[{}]", list.join(", "))));
    }
    if let Some(u) = a.util_min {
        out.push(("util_min".into(), u.to_string()));
    }
    if let Some(u) = a.util_max {
        out.push(("util_max".into(), u.to_string()));
    }
    if let Some(v) = a.dl_runtime_us {
        out.push(("dl-runtime".into(), v.to_string()));
    }
    if let Some(v) = a.dl_period_us {
        out.push(("dl-period".into(), v.to_string()));
    }
    if let Some(v) = a.dl_deadline_us {
        out.push(("dl-deadline".into(), v.to_string()));
    }
    if let Some(t) = &a.taskgroup {
        out.push(("taskgroup".into(), q(t)));
    }
}

fn event_value(e: &Event, _task: &str) -> String {
    match e {
        Event::Run { us } | Event::Runtime { us } | Event::Sleep { us } => us.to_string(),
        Event::Mem { bytes } | Event::Iorun { bytes } => bytes.to_string(),
        Event::Lock { mutex } | Event::Unlock { mutex } => q(mutex),
        Event::Signal { cond } | Event::Broad { cond } => q(cond),
        Event::Barrier { name } => q(name),
        Event::Fork { task } => q(task),
        Event::Resume { name } | Event::Suspend { name } => q(name),
        Event::SemPost { sem } | Event::SemWait { sem } => q(sem),
        Event::Yield => q(""),
        Event::Wait { cond, mutex } | Event::Sync { cond, mutex } => {
            format!("{{ \"ref\": {}, \"mutex\": {} }}", q(cond), q(mutex))
        }
        Event::Timer {
            name,
            period_us,
            mode,
        } => format!(
            "{{ \"ref\": {}, \"period\": {period_us}, \"mode\": {} }}",
            q(name),
            q(match mode {
                TimerMode::Relative => "relative",
                TimerMode::Absolute => "absolute",
            })
        ),
        Event::Memrun { kind, size, count } => format!(
            "{{ \"type\": {}, \"size\": {size}, \"count\": {count} }}",
            q(match kind {
                MemrunType::Read => "read",
                MemrunType::Write => "write",
                MemrunType::Chase => "chase",
            })
        ),
    }
}

fn object(out: &mut String, indent: usize, members: &[(String, String)]) {
    out.push_str("{\n");
    for (i, (k, v)) in members.iter().enumerate() {
        let _ = write!(out, "{}{}: {}", "\t".repeat(indent + 1), q(k), v);
        out.push_str(if i + 1 < members.len() { ",\n" } else { "\n" });
    }
    let _ = write!(out, "{}}}", "\t".repeat(indent));
}

fn nested(indent: usize, members: &[(String, String)]) -> String {
    let mut s = String::new();
    object(&mut s, indent, members);
    s
}

fn phase_json(t: &TaskSpec, p: &Phase, indent: usize) -> String {
    let mut m: Vec<(String, String)> = Vec::new();
    let l = if p.loop_count == PHASE_LOOP_FOREVER {
        "-1".to_string()
    } else {
        p.loop_count.to_string()
    };
    m.push(("loop".into(), l));
    // A phase whose cpus equal the task's inherits them in rt-app anyway.
    write_attrs(&mut m, &p.attrs, p.attrs.cpus == t.attrs.cpus);
    let mut used: HashSet<String> = m.iter().map(|(k, _)| k.clone()).collect();
    let mut curid = 1;
    for e in &p.events {
        let canonical = e.event.key();
        let key = if event_prefix(&e.key) == Some(canonical) {
            e.key.as_str()
        } else {
            canonical
        };
        let key = unique(key, &mut used, &mut curid);
        m.push((key, event_value(&e.event, &t.name)));
    }
    nested(indent, &m)
}

/// Writes `w` as strict rt-app JSON (no comments, no trailing commas, no repeated keys),
/// deterministic byte for byte. Every task is written with `phases`; repeated event keys
/// of a phase are renamed as doc/workgen does (`run`, `run1`, …), so rt-app reads them
/// all. `parse_str(to_rtapp_json(w))` gives `w` back up to spans, warnings and such
/// renamed keys.
///
/// Not expressible in rt-app JSON, and so not written: a phase with `cpus: None` in a
/// task whose `cpus` is set (rt-app would inherit the task's), and a `suspend` whose
/// name differs from its task (the model has no such name).
pub fn to_rtapp_json(w: &Workload) -> String {
    let mut g: Vec<(String, String)> = Vec::new();
    g.push((
        "duration".into(),
        w.duration_s.map(|d| d.to_string()).unwrap_or("-1".into()),
    ));
    g.push((
        "calibration".into(),
        match w.calibration {
            Calibration::Cpu(n) => q(&format!("CPU{n}")),
            Calibration::PLoadNs(p) => p.to_string(),
        },
    ));
    g.push(("default_policy".into(), q(w.default_policy.as_str())));
    g.push(("pi_enabled".into(), w.pi_enabled.to_string()));
    g.push(("cumulative_slack".into(), w.cumulative_slack.to_string()));
    g.push(("ftrace".into(), q(&ftrace_list(&w.ftrace))));

    let mut used = HashSet::new();
    let mut curid = 1;
    let mut tasks: Vec<(String, String)> = Vec::new();
    for t in &w.tasks {
        let mut m: Vec<(String, String)> = Vec::new();
        m.push(("instance".into(), t.instances.to_string()));
        m.push(("loop".into(), t.loop_count.max(-1).to_string()));
        if t.delay_us != 0 {
            m.push(("delay".into(), t.delay_us.to_string()));
        }
        write_attrs(&mut m, &t.attrs, false);
        let mut pused = HashSet::new();
        let mut pcur = 1;
        let phases: Vec<(String, String)> = t
            .phases
            .iter()
            .map(|p| (unique(&p.name, &mut pused, &mut pcur), phase_json(t, p, 4)))
            .collect();
        m.push(("phases".into(), nested(3, &phases)));
        tasks.push((unique(&t.name, &mut used, &mut curid), nested(2, &m)));
    }
    let root = vec![
        ("global".to_string(), nested(1, &g)),
        ("tasks".to_string(), nested(1, &tasks)),
    ];
    let mut s = nested(0, &root);
    s.push('\n');
    s
}
