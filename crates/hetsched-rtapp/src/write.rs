//! Writing workloads: a human summary ([`describe`]) and strict rt-app JSON
//! ([`to_rtapp_json`]).

use std::collections::HashSet;
use std::fmt::Write as _;

use hetsched_core::workload::{
    Calibration, Event, FtraceCategories, MemrunType, Phase, SchedAttrs, SchedPolicy, TaskSpec,
    TimerMode, Workload,
};

use crate::grammar::{event_prefix, EVENT_PREFIXES, PHASE_LOOP_FOREVER};

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

/// Time totals of some events: `run` work (µs on the calibration reference), `runtime`
/// and `sleep` (µs of wall time), and the number of `timer` waits. `None` = unbounded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Totals {
    run: Option<u64>,
    runtime: Option<u64>,
    sleep: Option<u64>,
    timers: Option<u64>,
}

impl Totals {
    fn zero() -> Totals {
        Totals {
            run: Some(0),
            runtime: Some(0),
            sleep: Some(0),
            timers: Some(0),
        }
    }

    fn of_phase(p: &Phase) -> Totals {
        let mut t = Totals::zero();
        for e in &p.events {
            let (slot, v) = match e.event {
                Event::Run { us } => (&mut t.run, us),
                Event::Runtime { us } => (&mut t.runtime, us),
                Event::Sleep { us } => (&mut t.sleep, us),
                Event::Timer { .. } => (&mut t.timers, 1),
                _ => continue,
            };
            *slot = slot.map(|a| a.saturating_add(v));
        }
        t
    }

    /// Each total × `n`; `None` for `n` = forever makes non-zero totals unbounded.
    fn times(self, n: Option<u64>) -> Totals {
        let f = |v: Option<u64>| match (v, n) {
            (Some(0), _) => Some(0),
            (Some(v), Some(n)) => v.checked_mul(n),
            _ => None,
        };
        Totals {
            run: f(self.run),
            runtime: f(self.runtime),
            sleep: f(self.sleep),
            timers: f(self.timers),
        }
    }

    fn plus(self, o: Totals) -> Totals {
        let f = |a: Option<u64>, b: Option<u64>| a.zip(b).and_then(|(a, b)| a.checked_add(b));
        Totals {
            run: f(self.run, o.run),
            runtime: f(self.runtime, o.runtime),
            sleep: f(self.sleep, o.sleep),
            timers: f(self.timers, o.timers),
        }
    }

    fn show(self) -> String {
        let f = |v: Option<u64>, unit: &str| match v {
            Some(v) => format!("{v}{unit}"),
            None => "unbounded".into(),
        };
        format!(
            "run {}, runtime {}, sleep {}, timer waits {}",
            f(self.run, " µs"),
            f(self.runtime, " µs"),
            f(self.sleep, " µs"),
            f(self.timers, "")
        )
    }
}

/// A task's totals per task loop, per thread (× task loops) and for all its threads.
fn task_totals(t: &TaskSpec) -> (Totals, Totals, Totals) {
    let per_loop = t.phases.iter().fold(Totals::zero(), |acc, p| {
        let n = (p.loop_count != PHASE_LOOP_FOREVER).then_some(p.loop_count);
        acc.plus(Totals::of_phase(p).times(n))
    });
    let per_thread = per_loop.times(u64::try_from(t.loop_count).ok());
    let all = per_thread.times(Some(u64::from(t.instances)));
    (per_loop, per_thread, all)
}

/// `run 2, sem_post 1` — events per kind, in rt-app's key order.
fn kinds_str<'a>(events: impl Iterator<Item = &'a Event>) -> String {
    let mut counts: Vec<(&'static str, u64)> = Vec::new();
    for e in events {
        let k = e.key();
        match counts.iter_mut().find(|(n, _)| *n == k) {
            Some((_, c)) => *c += 1,
            None => counts.push((k, 1)),
        }
    }
    counts.sort_by_key(|(k, _)| EVENT_PREFIXES.iter().position(|p| p == k));
    if counts.is_empty() {
        return "none".into();
    }
    let parts: Vec<String> = counts.iter().map(|(k, c)| format!("{k} {c}")).collect();
    parts.join(", ")
}

/// Policy, priority and affinity a task's threads start with, defaults included.
fn effective_str(w: &Workload, t: &TaskSpec) -> String {
    let (policy, pdef) = match t.attrs.policy {
        Some(p) => (p, ""),
        None => (w.default_policy, " (global default)"),
    };
    let prio = match (t.attrs.priority, policy.is_fair()) {
        (Some(n), true) => format!("nice {n}"),
        (None, true) => "nice 0 (default)".into(),
        (Some(n), false) => format!("priority {n}"),
        (None, false) if policy == SchedPolicy::Deadline => "priority 0 (default)".into(),
        (None, false) => "priority 10 (rt-app default)".into(),
    };
    let aff = match &t.attrs.cpus {
        Some(c) => format!("cpus {c:?}"),
        None => "all CPUs".into(),
    };
    format!("{}{pdef}, {prio}, affinity {aff}", policy.as_str())
}

/// A human summary of a workload, for `hetsched validate`: global settings and the
/// event kinds of the whole workload; per task its instances, loops, delay, effective
/// policy, priority and affinity, other attributes; per phase its loop count, events
/// per kind and in order, and its totals per iteration; per task the totals per task
/// loop, per thread and for all its threads where finite ("unbounded" where a loop is
/// forever); then the warnings. `run` totals are work in µs on the calibration
/// reference; `runtime` and `sleep` are µs of wall time.
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
    let _ = writeln!(
        s,
        "  calibration: {} ({})",
        calibration_str(w.calibration),
        match w.calibration {
            Calibration::Cpu(n) => format!("run µs are work on CPU{n} at its maximum frequency"),
            Calibration::PLoadNs(_) =>
                "run µs are work on the biggest CPU at its maximum frequency".into(),
        }
    );
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
    let _ = writeln!(
        s,
        "  events: {}",
        kinds_str(
            w.tasks
                .iter()
                .flat_map(|t| t.phases.iter())
                .flat_map(|p| p.events.iter().map(|e| &e.event))
        )
    );
    let total = w
        .tasks
        .iter()
        .fold(Totals::zero(), |acc, t| acc.plus(task_totals(t).2));
    let _ = writeln!(s, "  all threads together: {}", total.show());
    for t in &w.tasks {
        let _ = writeln!(
            s,
            "  task {} (line {}): instances {}, loop {}, delay {} µs",
            t.name,
            t.span.line,
            t.instances,
            if t.loop_count < 0 {
                "forever".into()
            } else {
                t.loop_count.to_string()
            },
            t.delay_us,
        );
        let _ = writeln!(s, "    starts as: {}", effective_str(w, t));
        let _ = writeln!(s, "    attrs: {}", attrs_str(&t.attrs));
        for p in &t.phases {
            let _ = writeln!(
                s,
                "    phase {}: loop {}, {} events ({}), attrs: {}",
                p.name,
                loops(p.loop_count),
                p.events.len(),
                kinds_str(p.events.iter().map(|e| &e.event)),
                attrs_str(&p.attrs)
            );
            let evs: Vec<String> = p.events.iter().map(|e| event_str(&e.event)).collect();
            let _ = writeln!(s, "      {}", evs.join(", "));
            let _ = writeln!(s, "      per iteration: {}", Totals::of_phase(p).show());
        }
        let (per_loop, per_thread, all) = task_totals(t);
        let _ = writeln!(s, "    per task loop: {}", per_loop.show());
        let _ = writeln!(s, "    per thread: {}", per_thread.show());
        if t.instances > 1 {
            let _ = writeln!(s, "    all {} threads: {}", t.instances, all.show());
        }
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::gen::from_spec;

    #[test]
    fn describe_gives_totals_policy_affinity_and_kinds() {
        let d = describe(&from_spec("gen:sysbench-cpu:threads=2,requests=1000,cpus=1-2").unwrap());
        // 1000 requests × 1200 µs per thread; two threads.
        assert!(
            d.contains("    per thread: run 1200000 µs, runtime 0 µs, sleep 0 µs, timer waits 0"),
            "{d}"
        );
        assert!(d.contains("    all 2 threads: run 2400000 µs"), "{d}");
        assert!(
            d.contains("  all threads together: run 2400000 µs, runtime 0 µs"),
            "{d}"
        );
        assert!(
            d.contains(
                "starts as: SCHED_OTHER (global default), nice 0 (default), affinity cpus [1, 2]"
            ),
            "{d}"
        );
        assert!(
            d.contains("phase requests: loop 1000, 1 events (run 1)"),
            "{d}"
        );
        assert!(
            d.contains("calibration: pLoad 100 ns/loop (run µs are work on the biggest CPU"),
            "{d}"
        );

        // hackbench: receivers wait then read; senders alternate run and sem_post.
        let d = describe(&from_spec("gen:hackbench:groups=1,loops=10,fds=2").unwrap());
        // 2 receivers × (sem_wait, run) + 2 senders × 2 × (run, sem_post).
        assert!(d.contains("  events: run 6, sem_post 4, sem_wait 2"), "{d}");
        // A receiver: 2 senders × 10 loops = 20 reads of 5 µs.
        assert!(
            d.contains("phase recv: loop 20, 2 events (run 1, sem_wait 1)"),
            "{d}"
        );
        assert!(d.contains("per thread: run 100 µs"), "{d}");

        // Periodic with a forever task loop: per-iteration totals, unbounded overall.
        let w = crate::parse_str(
            r#"{"tasks": {"t": {"policy": "SCHED_FIFO", "phases": {"p": {"loop": 3, "run": 100, "timer": {"ref": "unique", "period": 1000}, "sleep": 5}}}}}"#,
            "f.json",
            &Default::default(),
        )
        .unwrap();
        let d = describe(&w);
        assert!(
            d.contains("per iteration: run 100 µs, runtime 0 µs, sleep 5 µs, timer waits 1"),
            "{d}"
        );
        assert!(
            d.contains("per task loop: run 300 µs, runtime 0 µs, sleep 15 µs, timer waits 3"),
            "{d}"
        );
        assert!(
            d.contains(
                "per thread: run unbounded, runtime 0 µs, sleep unbounded, timer waits unbounded"
            ),
            "{d}"
        );
        assert!(
            d.contains("starts as: SCHED_FIFO, priority 10 (rt-app default), affinity all CPUs"),
            "{d}"
        );
    }
}
