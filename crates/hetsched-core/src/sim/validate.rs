//! Checks of a workload against a platform before a run, and rt-app's thread names.

use crate::sim::*;

pub(in crate::sim) fn span_at(w: &Workload, span: Span) -> String {
    format!(
        "{}:{}:{}",
        w.source.as_deref().unwrap_or(&w.name),
        span.line,
        span.col
    )
}

/// rt-app's thread name: `<task>-<index>` with the global thread index
/// (`thread_data_set_unique_name()`; forks add `-<nforks:04>`). Spaces become `_`.
pub fn thread_comm(task: &str, index: u32) -> String {
    format!("{task}-{index}").replace(' ', "_")
}

/// `TASK_COMM_LEN - 1`: the longest name `pthread_setname_np()` accepts. A longer name
/// fails with ERANGE and the thread keeps the comm it inherited (`rt-app`), as on a
/// board; hetsched does the same and warns before the run.
pub const COMM_MAX: usize = 15;

/// The thread names rt-app would fail to set (longer than [`COMM_MAX`]), in thread order.
pub fn overlong_thread_names(w: &Workload) -> Vec<String> {
    let mut ind = 0u32;
    let mut out = Vec::new();
    for t in &w.tasks {
        for _ in 0..t.instances {
            let n = thread_comm(&t.name, ind);
            if n.len() > COMM_MAX {
                out.push(n);
            }
            ind += 1;
        }
    }
    out
}

/// Checks a workload against a platform and the engine's current coverage.
pub fn validate(w: &Workload, p: &Platform) -> Result<(), RunError> {
    let n = p.nr_cpus();
    if let Calibration::Cpu(c) = w.calibration {
        if c >= n {
            let at = match w.calibration_span {
                Some(span) => span_at(w, span),
                None => w.source.clone().unwrap_or_else(|| w.name.clone()),
            };
            return Err(RunError::Workload {
                at,
                msg: format!(
                    "global.calibration \"CPU{c}\" names a CPU that platform {} does not have (CPUs 0-{})",
                    p.name,
                    n - 1
                ),
            });
        }
    }
    let check_cpus = |attrs: &crate::workload::SchedAttrs,
                      fallback: Span|
     -> Result<(), RunError> {
        if let Some(cpus) = &attrs.cpus {
            let at = span_at(w, attrs.cpus_span.unwrap_or(fallback));
            if let Some(bad) = cpus.iter().find(|&&c| c >= n) {
                return Err(RunError::Workload {
                    at,
                    msg: format!(
                        "cpus names CPU {bad} but platform {} has CPUs 0-{}; expected CPU numbers below {n}",
                        p.name,
                        n - 1
                    ),
                });
            }
            if cpus.is_empty() {
                return Err(RunError::Workload {
                    at,
                    msg: "cpus is empty; expected at least one CPU number".into(),
                });
            }
        }
        Ok(())
    };
    for t in &w.tasks {
        check_cpus(&t.attrs, t.span)?;
        check_task(w, t)?;
        for ph in &t.phases {
            check_cpus(&ph.attrs, t.span)?;
        }
    }
    Ok(())
}

/// The checks of [`validate()`] that need no platform: every task has events, and its
/// locking can run (see `check_locking`). `hetsched validate` (through
/// `hetsched::load_workload`) applies them, so it rejects what `run` rejects, at the
/// same `file:line:col` and with the same words.
pub fn check_program(w: &Workload) -> Result<(), RunError> {
    w.tasks.iter().try_for_each(|t| check_task(w, t))
}

fn check_task(w: &Workload, t: &crate::workload::TaskSpec) -> Result<(), RunError> {
    if t.phases.is_empty() {
        return Err(RunError::Workload {
            at: span_at(w, t.span),
            msg: format!(
                "task `{}` has no events; expected at least one event",
                t.name
            ),
        });
    }
    check_locking(w, t)
}

/// Checks, before the run, what rt-app would only find by hanging: per task, walking its
/// phases in order, a `lock` of a mutex the thread already holds (self-deadlock), an
/// `unlock` or a `wait`/`sync` without holding the mutex, a phase that loops while its
/// lock set changes, and a lock still held when the task's program ends.
fn check_locking(w: &Workload, t: &crate::workload::TaskSpec) -> Result<(), RunError> {
    let mut held: Vec<&str> = Vec::new();
    let err = |span: Span, msg: String| RunError::Workload {
        at: span_at(w, span),
        msg,
    };
    for ph in &t.phases {
        let at_start = held.clone();
        for e in &ph.events {
            match &e.event {
                Event::Lock { mutex } => {
                    if held.contains(&mutex.as_str()) {
                        return Err(err(e.span, format!("task `{}` locks mutex `{mutex}` it already holds: the thread would deadlock on itself; expected an unlock first", t.name)));
                    }
                    held.push(mutex);
                }
                Event::Unlock { mutex } => match held.iter().position(|m| m == mutex) {
                    Some(i) => {
                        held.remove(i);
                    }
                    None => {
                        return Err(err(e.span, format!("task `{}` unlocks mutex `{mutex}` it does not hold; expected a lock of `{mutex}` before", t.name)))
                    }
                },
                Event::Wait { mutex, .. } | Event::Sync { mutex, .. }
                    if !held.contains(&mutex.as_str()) =>
                {
                    return Err(err(e.span, format!("task `{}` waits with mutex `{mutex}` it does not hold (pthread_cond_wait needs it locked); expected a lock of `{mutex}` before", t.name)));
                }
                _ => {}
            }
        }
        if ph.loop_count > 1 && held != at_start {
            return Err(err(t.span, format!("task `{}`: phase `{}` loops {} times but does not release what it locks (held after one iteration: {}); its second iteration would deadlock", t.name, ph.name, ph.loop_count, held.join(", "))));
        }
    }
    if let Some(m) = held.first() {
        return Err(err(t.span, format!("task `{}` ends its phases still holding mutex `{m}`: a lock never unlocked; expected an unlock of `{m}`", t.name)));
    }
    Ok(())
}
