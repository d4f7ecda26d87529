//! The rt-app grammar: a parsed JSON document → [`Workload`], with rt-app's meaning.
//!
//! Modelled on `src/rt-app_parse_config.c` of scheduler-tools/rt-app (`parse_global`,
//! `parse_task_data`, `parse_task_phase_data`, `parse_task_event_data`,
//! `parse_sched_data`, `parse_cpuset_data`, `parse_taskgroup_data`) and on
//! `set_thread_affinity()` / `thread_body()` in `src/rt-app.c` for the meaning of
//! `cpus` and `loop`. Where rt-app would exit with `EXIT_INV_CONFIG` (or fail at run
//! time on a value it could have checked), this module returns an [`RtappError`];
//! where rt-app silently ignores something, it adds a warning to `Workload::warnings`.

use std::collections::{HashMap, HashSet};

use hetsched_core::workload::{
    Calibration, Event, EventSpec, FtraceCategories, MemrunType, Phase, SchedAttrs, SchedPolicy,
    Span, TaskSpec, TimerMode, Workload,
};

use crate::error::{Location, RtappError};
use crate::json::{Member, Node, Value};
use crate::DuplicateKeys;

mod event;

/// `Phase::loop_count` of a phase that never ends: rt-app's phase `loop` ≤ 0 (the phase
/// counter is compared with `==` after an increment, so it never matches).
pub const PHASE_LOOP_FOREVER: u64 = u64::MAX;

/// rt-app's event keys, in the order rt-app matches them by prefix (`strncmp`).
/// `runtime` comes before `run` and `memrun` before `mem`, so that the longer name wins.
pub const EVENT_PREFIXES: [&str; 20] = [
    "lock", "unlock", "wait", "signal", "broad", "sync", "sleep", "runtime", "run", "timer",
    "suspend", "resume", "memrun", "mem", "iorun", "yield", "barrier", "fork", "sem_post",
    "sem_wait",
];

/// The event a key stands for: the first of [`EVENT_PREFIXES`] that `key` starts with
/// (`run0` → `run`, `sleep-1` → `sleep`, `runtime2` → `runtime`), or `None`.
pub fn event_prefix(key: &str) -> Option<&'static str> {
    EVENT_PREFIXES.iter().copied().find(|p| key.starts_with(p))
}

const GLOBAL_KEYS: [&str; 13] = [
    "duration",
    "calibration",
    "default_policy",
    "pi_enabled",
    "ftrace",
    "cumulative_slack",
    "lock_pages",
    "logdir",
    "log_basename",
    "log_size",
    "gnuplot",
    "io_device",
    "mem_buffer_size",
];

const ATTR_KEYS: [&str; 11] = [
    "policy",
    "priority",
    "cpus",
    "nodes_membind",
    "util_min",
    "util_max",
    "dl-runtime",
    "dl-period",
    "dl-deadline",
    "taskgroup",
    "loop",
];

const TASK_ONLY_KEYS: [&str; 6] = [
    "instance", "delay", "phases", "runtime", "period", "deadline",
];

/// Policies rt-app's `string_to_policy()` accepts.
const POLICIES: &str = "SCHED_OTHER, SCHED_IDLE, SCHED_RR, SCHED_FIFO, SCHED_DEADLINE";

type Result<T> = std::result::Result<T, RtappError>;

/// Converts a parsed document into a workload.
pub(crate) struct Reader<'a> {
    origin: &'a str,
    mode: DuplicateKeys,
    warnings: Vec<String>,
    /// `(task, suspend name, span)` for every `suspend` event.
    suspends: Vec<(String, String, Span)>,
    /// Threads the tasks read so far start (their `instance`s).
    threads: u64,
}

/// A view on an object: its members and where it starts.
#[derive(Clone, Copy)]
struct Obj<'n> {
    members: &'n [Member],
    span: Span,
}

impl<'n> Obj<'n> {
    /// The member rt-app reads for `key`. In `Ordered` mode (doc/workgen), later
    /// duplicates are renamed by workgen and so ignored: the first one is read. In
    /// `JsonC` mode the object is already collapsed.
    fn get(&self, key: &str) -> Option<&'n Member> {
        self.members.iter().find(|m| m.key == key)
    }
}

impl<'a> Reader<'a> {
    pub(crate) fn new(origin: &'a str, mode: DuplicateKeys) -> Self {
        Reader {
            origin,
            mode,
            warnings: Vec::new(),
            suspends: Vec::new(),
            threads: 0,
        }
    }

    fn loc(&self, span: Span) -> Location {
        Location {
            origin: self.origin.to_string(),
            line: span.line,
            col: span.col,
        }
    }

    fn warn(&mut self, span: Span, msg: impl AsRef<str>) {
        self.warnings.push(format!(
            "{}:{}:{}: {}",
            self.origin,
            span.line,
            span.col,
            msg.as_ref()
        ));
    }

    fn wrong_type(&self, m: &Member, expected: &str) -> RtappError {
        RtappError::WrongType {
            at: self.loc(m.value.span),
            key: m.key.clone(),
            expected: expected.to_string(),
            found: m.value.value.type_name().to_string(),
        }
    }

    fn invalid(&self, span: Span, key: &str, message: String) -> RtappError {
        RtappError::InvalidValue {
            at: self.loc(span),
            key: key.to_string(),
            message,
        }
    }

    fn object<'n>(&self, m: &'n Member, expected: &str) -> Result<Obj<'n>> {
        match &m.value.value {
            Value::Object(members) => Ok(Obj {
                members,
                span: m.value.span,
            }),
            _ => Err(self.wrong_type(m, expected)),
        }
    }

    /// `json_object_get_int()`: an integer, saturated to the C `int` rt-app stores.
    fn int(&mut self, m: &Member, expected: &str) -> Result<i64> {
        match m.value.value {
            Value::Int(i) => {
                let c = i.clamp(i64::from(i32::MIN), i64::from(i32::MAX));
                if c != i {
                    self.warn(
                        m.value.span,
                        format!(
                            "`{}`: {i} saturated to {c} (rt-app reads a 32-bit int)",
                            m.key
                        ),
                    );
                }
                Ok(c)
            }
            _ => Err(self.wrong_type(m, expected)),
        }
    }

    fn nonneg(&mut self, m: &Member, expected: &str) -> Result<u64> {
        let v = self.int(m, expected)?;
        u64::try_from(v).map_err(|_| {
            self.invalid(
                m.value.span,
                &m.key,
                format!("negative value {v}; expected {expected} ≥ 0"),
            )
        })
    }

    fn boolean(&self, m: &Member) -> Result<bool> {
        match m.value.value {
            Value::Bool(b) => Ok(b),
            _ => Err(self.wrong_type(m, "true or false")),
        }
    }

    fn string<'n>(&self, m: &'n Member, expected: &str) -> Result<&'n str> {
        match &m.value.value {
            Value::Str(s) => Ok(s),
            _ => Err(self.wrong_type(m, expected)),
        }
    }

    /// Warns about keys that rt-app does not read, and (in `Ordered` mode) about
    /// repeated non-event keys, of which only the first is read.
    fn warn_keys(&mut self, obj: Obj<'_>, what: &str, known: &dyn Fn(&str) -> bool) {
        let mut seen = HashSet::new();
        for m in obj.members {
            if !known(&m.key) {
                self.warn(
                    m.key_span,
                    format!(
                        "key `{}` in {what} is ignored (rt-app does not read it)",
                        m.key
                    ),
                );
            } else if self.mode == DuplicateKeys::Ordered
                && event_prefix(&m.key).is_none()
                && !seen.insert(m.key.as_str())
            {
                self.warn(
                    m.key_span,
                    format!(
                        "repeated key `{}` in {what} is ignored: the first one is read \
                         (doc/workgen renames it; use DuplicateKeys::JsonC for json-c's last-wins)",
                        m.key
                    ),
                );
            }
        }
    }

    /// doc/workgen's renaming of repeated keys of one object (`heavy1` → `heavy11`).
    fn workgen_names(&mut self, members: &[Member], what: &str) -> Vec<String> {
        let mut seen: HashSet<String> = HashSet::new();
        let mut curid = 1u32;
        let mut out = Vec::with_capacity(members.len());
        for m in members {
            let mut name = m.key.clone();
            if seen.contains(&name) {
                name = format!("{}{curid}", m.key);
                while seen.contains(&name) {
                    curid += 1;
                    name = format!("{}{curid}", m.key);
                }
                self.warn(
                    m.key_span,
                    format!(
                        "repeated {what} name \"{}\" renamed \"{name}\" (as doc/workgen does)",
                        m.key
                    ),
                );
            }
            seen.insert(name.clone());
            out.push(name);
        }
        out
    }

    pub(crate) fn workload(mut self, root: &Node) -> Result<Workload> {
        let Value::Object(members) = &root.value else {
            return Err(RtappError::WrongType {
                at: self.loc(root.span),
                key: "(top level)".into(),
                expected: "an object with `tasks` (and optionally `global`)".into(),
                found: root.value.type_name().into(),
            });
        };
        let top = Obj {
            members,
            span: root.span,
        };
        self.warn_keys(top, "the top-level object", &|k| {
            matches!(k, "global" | "tasks" | "resources")
        });

        let name = std::path::Path::new(self.origin)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut w = Workload {
            name,
            source: Some(self.origin.to_string()),
            ..Workload::default()
        };

        if let Some(g) = top.get("global") {
            self.global(g, &mut w)?;
        }
        if let Some(r) = top.get("resources") {
            self.warn(
                r.key_span,
                "legacy `resources` section ignored (rt-app creates resources from the events)",
            );
        }
        let Some(tasks) = top.get("tasks") else {
            return Err(RtappError::MissingKey {
                at: self.loc(top.span),
                key: "tasks".into(),
                within: "the top-level object".into(),
            });
        };
        let tasks_obj = self.object(tasks, "an object of tasks")?;
        if tasks_obj.members.is_empty() {
            self.warn(tasks_obj.span, "`tasks` is empty: no thread will run");
        }
        let names = self.workgen_names(tasks_obj.members, "task");
        for (m, name) in tasks_obj.members.iter().zip(names) {
            // a control character would be written raw into the trace's comm fields and
            // split its lines (the kernel copies the name as given)
            if let Some(c) = name.chars().find(|c| c.is_control()) {
                return Err(self.invalid(
                    m.key_span,
                    &name.escape_default().to_string(),
                    format!(
                        "task name contains the control character U+{:04X}; thread names appear in trace lines",
                        u32::from(c)
                    ),
                ));
            }
            let t = self.task(name, m, w.default_policy)?;
            w.tasks.push(t);
        }
        self.check(&w)?;
        w.warnings = self.warnings;
        Ok(w)
    }

    fn global(&mut self, g: &Member, w: &mut Workload) -> Result<()> {
        let Value::Object(members) = &g.value.value else {
            // rt-app looks keys up in a non-object and finds none: all defaults.
            self.warn(
                g.value.span,
                format!(
                    "`global` is {}, not an object: rt-app uses every default",
                    g.value.value.type_name()
                ),
            );
            return Ok(());
        };
        let obj = Obj {
            members,
            span: g.value.span,
        };
        self.warn_keys(obj, "`global`", &|k| GLOBAL_KEYS.contains(&k));

        if let Some(m) = obj.get("duration") {
            let d = self.int(m, "an integer number of seconds (-1 = until the tasks end)")?;
            w.duration_s = u64::try_from(d).ok().filter(|d| *d > 0);
        }
        for key in ["gnuplot", "lock_pages"] {
            if let Some(m) = obj.get(key) {
                self.boolean(m)?;
            }
        }
        if let Some(m) = obj.get("pi_enabled") {
            w.pi_enabled = self.boolean(m)?;
        }
        if let Some(m) = obj.get("cumulative_slack") {
            w.cumulative_slack = self.boolean(m)?;
        }
        if let Some(m) = obj.get("default_policy") {
            w.default_policy = self.policy(m)?;
        }
        if let Some(m) = obj.get("calibration") {
            w.calibration = self.calibration(m)?;
            w.calibration_span = Some(m.value.span);
        }
        if let Some(m) = obj.get("log_size") {
            match &m.value.value {
                Value::Int(_) => {}
                Value::Str(s) if matches!(s.as_str(), "file" | "disable" | "auto") => {}
                Value::Str(s) => self.warn(
                    m.value.span,
                    format!("`log_size` \"{s}\" is not file/disable/auto; rt-app ignores it"),
                ),
                _ => {
                    return Err(self.wrong_type(
                        m,
                        "an integer (MB) or one of \"file\", \"disable\", \"auto\"",
                    ))
                }
            }
        }
        for key in ["logdir", "log_basename", "io_device"] {
            if let Some(m) = obj.get(key) {
                if !matches!(m.value.value, Value::Str(_) | Value::Null) {
                    return Err(self.wrong_type(m, "a string"));
                }
            }
        }
        if let Some(m) = obj.get("mem_buffer_size") {
            self.nonneg(m, "an integer number of bytes")?;
        }
        if let Some(m) = obj.get("ftrace") {
            w.ftrace = self.ftrace(m)?;
        }
        Ok(())
    }

    fn calibration(&mut self, m: &Member) -> Result<Calibration> {
        match &m.value.value {
            Value::Int(_) => {
                let p = self.nonneg(m, "an integer pLoad in ns per loop")?;
                if p == 0 {
                    self.warn(
                        m.value.span,
                        "`calibration` 0 makes rt-app calibrate on CPU0 (same as \"CPU0\")",
                    );
                    Ok(Calibration::Cpu(0))
                } else {
                    Ok(Calibration::PLoadNs(p))
                }
            }
            Value::Str(s) => {
                // rt-app: sscanf(str, "CPU%d").
                let digits: String = s
                    .strip_prefix("CPU")
                    .unwrap_or("")
                    .chars()
                    .take_while(|c| c.is_ascii_digit())
                    .collect();
                match digits.parse::<usize>() {
                    Ok(cpu) => {
                        if s.len() != 3 + digits.len() {
                            self.warn(
                                m.value.span,
                                format!("`calibration` \"{s}\" read as \"CPU{cpu}\""),
                            );
                        }
                        Ok(Calibration::Cpu(cpu))
                    }
                    Err(_) => Err(self.invalid(
                        m.value.span,
                        &m.key,
                        format!("\"{s}\" is not a CPU; expected \"CPUn\" (e.g. \"CPU0\") or an integer pLoad in ns"),
                    )),
                }
            }
            _ => Err(self.wrong_type(m, "\"CPUn\" or an integer pLoad in ns")),
        }
    }

    fn ftrace(&mut self, m: &Member) -> Result<FtraceCategories> {
        match &m.value.value {
            Value::Bool(b) => {
                self.warn(
                    m.value.span,
                    "boolean `ftrace` is deprecated in rt-app; true enables every category",
                );
                Ok(if *b {
                    FtraceCategories::ALL
                } else {
                    FtraceCategories::default()
                })
            }
            Value::Str(s) => {
                let mut f = FtraceCategories::default();
                for cat in s.split(',').map(str::trim).filter(|c| !c.is_empty()) {
                    match cat {
                        "main" => f.main = true,
                        "task" => f.task = true,
                        "loop" => f.loop_ = true,
                        "event" => f.event = true,
                        "stats" => f.stats = true,
                        "none" => f = FtraceCategories::default(),
                        "attrs" => self.warn(
                            m.value.span,
                            "ftrace category `attrs` (rtapp_attrs) is not modelled and is ignored",
                        ),
                        other => {
                            return Err(self.invalid(
                                m.value.span,
                                &m.key,
                                format!("unknown category \"{other}\"; expected a comma list of main, task, loop, event, stats, or \"none\""),
                            ))
                        }
                    }
                }
                Ok(f)
            }
            _ => Err(self.wrong_type(
                m,
                "a comma list of main, task, loop, event, stats (or \"none\")",
            )),
        }
    }

    fn policy(&mut self, m: &Member) -> Result<SchedPolicy> {
        let s = self.string(m, &format!("a policy name ({POLICIES})"))?;
        match SchedPolicy::parse(s) {
            Some(SchedPolicy::Batch) => {
                self.warn(
                    m.value.span,
                    "SCHED_BATCH is not accepted by upstream rt-app's string_to_policy(); hetsched accepts it as an extension",
                );
                Ok(SchedPolicy::Batch)
            }
            Some(p) => Ok(p),
            None => Err(self.invalid(
                m.value.span,
                &m.key,
                format!("unknown policy \"{s}\"; expected one of {POLICIES}"),
            )),
        }
    }

    /// `parse_cpuset_data`, `parse_sched_data`, `parse_taskgroup_data` (and the ignored
    /// `parse_numa_data`) on a task or phase object.
    fn attrs(&mut self, obj: Obj<'_>, task_level: bool) -> Result<SchedAttrs> {
        let mut a = SchedAttrs::default();
        if let Some(m) = obj.get("cpus") {
            a.cpus = Some(self.cpus(m)?);
            a.cpus_span = Some(m.key_span);
        }
        if let Some(m) = obj.get("nodes_membind") {
            self.warn(
                m.key_span,
                "`nodes_membind` is accepted and ignored (no NUMA model)",
            );
        }
        if let Some(m) = obj.get("policy") {
            if matches!(m.value.value, Value::Null) {
                self.warn(m.value.span, "`policy` null is ignored");
            } else {
                a.policy = Some(self.policy(m)?);
            }
        }
        if let Some(m) = obj.get("priority") {
            a.priority = Some(self.int(
                m,
                "an integer (nice for fair policies, RT priority for FIFO/RR)",
            )? as i32);
        }
        let dl = |r: &mut Self, key: &str| -> Result<u64> {
            match obj.get(key) {
                Some(m) => r.nonneg(m, "an integer number of microseconds"),
                None => Ok(0),
            }
        };
        let mut runtime = dl(self, "dl-runtime")?;
        let mut period = match obj.get("dl-period") {
            Some(m) => self.nonneg(m, "an integer number of microseconds")?,
            None => runtime,
        };
        let mut deadline = match obj.get("dl-deadline") {
            Some(m) => self.nonneg(m, "an integer number of microseconds")?,
            None => period,
        };
        if task_level {
            // Legacy thread grammar (`def_policy != same`): exact keys only.
            if runtime == 0 {
                if let Some(m) = obj.get("runtime") {
                    runtime = self.nonneg(m, "an integer number of microseconds")?;
                    if runtime != 0 {
                        self.warn(
                            m.key_span,
                            "task-level `runtime` is read by rt-app as the legacy `dl-runtime` \
                             (DEADLINE runtime / custom fair slice from v6.12, `fair.custom_slice`); write `dl-runtime` to make it explicit",
                        );
                    }
                }
            }
            if period == 0 {
                period = match obj.get("period") {
                    Some(m) => self.nonneg(m, "an integer number of microseconds")?,
                    None => runtime,
                };
            }
            if deadline == 0 {
                deadline = match obj.get("deadline") {
                    Some(m) => self.nonneg(m, "an integer number of microseconds")?,
                    None => period,
                };
            }
        }
        a.dl_runtime_us = (runtime != 0).then_some(runtime);
        a.dl_period_us = (period != 0).then_some(period);
        a.dl_deadline_us = (deadline != 0).then_some(deadline);

        let clamp = |r: &mut Self, key: &str| -> Result<Option<(i32, Span)>> {
            let Some(m) = obj.get(key) else {
                return Ok(None);
            };
            let v = r.int(m, "an integer 0..=1024, or -1")?;
            if !(-1..=1024).contains(&v) {
                return Err(r.invalid(
                    m.value.span,
                    key,
                    format!("{v} is out of range; expected 0..=1024, or -1"),
                ));
            }
            Ok(Some((v as i32, m.value.span)))
        };
        let umin = clamp(self, "util_min")?;
        let umax = clamp(self, "util_max")?;
        if let (Some((lo, span)), Some((hi, _))) = (umin, umax) {
            if lo >= 0 && hi >= 0 && lo > hi {
                return Err(self.invalid(
                    span,
                    "util_min",
                    format!("util_min {lo} > util_max {hi}; expected util_min ≤ util_max"),
                ));
            }
        }
        a.util_min = umin.map(|u| u.0);
        a.util_max = umax.map(|u| u.0);

        if let Some(m) = obj.get("taskgroup") {
            let tg = self.string(m, "a taskgroup path starting with '/'")?;
            if !tg.is_empty() {
                if !tg.starts_with('/') {
                    return Err(self.invalid(
                        m.value.span,
                        "taskgroup",
                        format!("\"{tg}\" does not start with '/'; expected a path like \"/tg1\""),
                    ));
                }
                a.taskgroup = Some(tg.to_string());
            }
        }
        Ok(a)
    }

    fn cpus(&mut self, m: &Member) -> Result<Vec<usize>> {
        let Value::Array(items) = &m.value.value else {
            return Err(self.wrong_type(m, "an array of CPU numbers"));
        };
        if items.is_empty() {
            return Err(self.invalid(
                m.value.span,
                "cpus",
                "empty affinity (rt-app's pthread_setaffinity_np would fail); expected at least one CPU number".into(),
            ));
        }
        let mut out = Vec::with_capacity(items.len());
        for it in items {
            match it.value {
                Value::Int(i) => match usize::try_from(i) {
                    Ok(c) => out.push(c),
                    Err(_) => {
                        return Err(self.invalid(
                            it.span,
                            "cpus",
                            format!("CPU {i} is negative; expected a CPU number ≥ 0"),
                        ))
                    }
                },
                _ => {
                    return Err(RtappError::WrongType {
                        at: self.loc(it.span),
                        key: "cpus".into(),
                        expected: "an array of non-negative integer CPU numbers".into(),
                        found: it.value.type_name().into(),
                    })
                }
            }
        }
        Ok(out)
    }

    /// Maps rt-app's phase `loop` onto `Phase::loop_count`.
    fn phase_loop(&mut self, m: Option<&Member>) -> Result<u64> {
        let Some(m) = m else {
            return Ok(1);
        };
        let l = self.int(m, "an integer number of iterations")?;
        if l >= 1 {
            return Ok(l as u64);
        }
        if l != -1 {
            self.warn(
                m.value.span,
                format!("phase `loop` {l}: rt-app never ends such a phase (same as -1)"),
            );
        }
        Ok(PHASE_LOOP_FOREVER)
    }

    fn task(&mut self, name: String, m: &Member, default_policy: SchedPolicy) -> Result<TaskSpec> {
        let obj = self.object(m, "an object (the task's keys and events or `phases`)")?;
        let attrs = self.attrs(obj, true)?;
        let delay_us = match obj.get("delay") {
            Some(d) => self.nonneg(d, "an integer number of microseconds")?,
            None => 0,
        };
        let (instances, at) = match obj.get("instance") {
            Some(i) => (
                self.nonneg(i, "an integer number of threads")?,
                i.value.span,
            ),
            None => (1, m.key_span),
        };
        if self.threads + instances > crate::MAX_THREADS {
            return Err(self.invalid(
                at,
                "instance",
                format!(
                    "{instances} threads, {} in all: at most {} threads per run (Linux's default pid_max)",
                    self.threads + instances,
                    crate::MAX_THREADS
                ),
            ));
        }
        self.threads += instances;
        let instances = instances as u32; // ≤ MAX_THREADS
        let mut phases = Vec::new();
        let loop_count;
        if let Some(pm) = obj.get("phases") {
            let pobj = self.object(pm, "an object of phases")?;
            self.warn_keys(obj, &format!("task \"{name}\""), &|k| {
                ATTR_KEYS.contains(&k) || TASK_ONLY_KEYS.contains(&k)
            });
            for m in obj.members {
                if event_prefix(&m.key).is_some() && m.key != "runtime" {
                    self.warn(
                        m.key_span,
                        format!(
                            "event `{}` at task level is ignored because task \"{name}\" has `phases`",
                            m.key
                        ),
                    );
                }
            }
            if pobj.members.is_empty() {
                return Err(RtappError::NoEvents {
                    at: self.loc(pobj.span),
                    what: format!("task \"{name}\" (empty `phases`)"),
                });
            }
            let names = self.workgen_names(pobj.members, "phase");
            for (pm, pname) in pobj.members.iter().zip(names) {
                let phobj = self.object(pm, "an object (the phase's keys and events)")?;
                self.warn_keys(
                    phobj,
                    &format!("phase \"{pname}\" of task \"{name}\""),
                    &|k| ATTR_KEYS.contains(&k) || event_prefix(k).is_some(),
                );
                let loop_count = self.phase_loop(phobj.get("loop"))?;
                let pattrs = self.attrs(phobj, false)?;
                let events = self.events(phobj, &name, &pname)?;
                phases.push(Phase {
                    name: pname,
                    loop_count,
                    attrs: pattrs,
                    events,
                });
            }
            loop_count = match obj.get("loop") {
                Some(l) => self.int(l, "an integer number of iterations (-1 = forever)")?,
                None => -1,
            };
        } else {
            self.warn_keys(obj, &format!("task \"{name}\""), &|k| {
                ATTR_KEYS.contains(&k) || TASK_ONLY_KEYS.contains(&k) || event_prefix(k).is_some()
            });
            // One phase made of the task's own events; `loop` loops that phase and the
            // thread runs it once; without `loop` the thread loops forever.
            let l = obj.get("loop");
            let ploop = self.phase_loop(l)?;
            let events = self.events(obj, &name, "phase0")?;
            phases.push(Phase {
                name: "phase0".into(),
                loop_count: ploop,
                attrs: SchedAttrs::default(),
                events,
            });
            loop_count = if l.is_some() { 1 } else { -1 };
        }
        let loop_count = if loop_count < 0 {
            -1
        } else {
            if loop_count == 0 {
                self.warn(
                    m.key_span,
                    format!("task \"{name}\" has `loop` 0: its threads run no phase"),
                );
            }
            loop_count
        };

        // rt-app's set_thread_affinity(): phase cpus, else task cpus, else the default
        // (inherited) affinity. The reader resolves the first two into the phase.
        for p in &mut phases {
            if p.attrs.cpus.is_none() && attrs.cpus.is_some() {
                p.attrs.cpus = attrs.cpus.clone();
                p.attrs.cpus_span = attrs.cpus_span;
            }
        }
        self.check_policy_chain(obj, &name, &attrs, &phases, default_policy)?;
        Ok(TaskSpec {
            name,
            instances,
            loop_count,
            delay_us,
            attrs,
            phases,
            span: m.key_span,
        })
    }

    /// rt-app's `check_taskgroup_policy_dep()`, and the priority ranges that
    /// `setpriority()` / `pthread_setschedparam()` would refuse at run time. The
    /// policy in force is followed through the phases as rt-app applies them.
    fn check_policy_chain(
        &self,
        obj: Obj<'_>,
        task: &str,
        attrs: &SchedAttrs,
        phases: &[Phase],
        default_policy: SchedPolicy,
    ) -> Result<()> {
        let mut policy = default_policy;
        let mut in_group = false;
        let levels = std::iter::once((attrs, None))
            .chain(phases.iter().enumerate().map(|(i, p)| (&p.attrs, Some(i))));
        for (a, phase) in levels {
            if let Some(p) = a.policy {
                policy = p;
            }
            in_group |= a.taskgroup.is_some();
            let where_ = match phase {
                None => format!("task \"{task}\""),
                Some(i) => format!("phase \"{}\" of task \"{task}\"", phases[i].name),
            };
            let span_of = |key: &str| -> Span {
                let s = match phase {
                    None => obj.get(key).map(|m| m.value.span),
                    Some(i) => self.phase_span(obj, i, key),
                };
                s.unwrap_or(obj.span)
            };
            if let Some(pr) = a.priority {
                let (ok, range) = match policy {
                    SchedPolicy::Other | SchedPolicy::Batch => {
                        ((-20..=19).contains(&pr), "a nice value -20..=19")
                    }
                    SchedPolicy::Fifo | SchedPolicy::Rr => {
                        ((1..=99).contains(&pr), "an RT priority 1..=99")
                    }
                    SchedPolicy::Idle | SchedPolicy::Deadline => (true, ""),
                };
                if !ok {
                    return Err(self.invalid(
                        span_of("priority"),
                        "priority",
                        format!(
                            "{pr} in {where_} with {}; expected {range}",
                            policy.as_str()
                        ),
                    ));
                }
            }
            if in_group && !policy.is_fair() {
                return Err(self.invalid(
                    span_of(if a.taskgroup.is_some() {
                        "taskgroup"
                    } else {
                        "policy"
                    }),
                    "taskgroup",
                    format!(
                        "{where_} runs {} in a taskgroup; expected SCHED_OTHER or SCHED_IDLE \
                         (rt-app: No taskgroup support for policy)",
                        policy.as_str()
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The span of `key` in the `idx`-th phase of a task object.
    fn phase_span(&self, obj: Obj<'_>, idx: usize, key: &str) -> Option<Span> {
        let Value::Object(ph) = &obj.get("phases")?.value.value else {
            return None;
        };
        let Value::Object(p) = &ph.get(idx)?.value.value else {
            return None;
        };
        p.iter().find(|m| m.key == key).map(|m| m.value.span)
    }

    /// Checks across tasks: `resume`/`fork` targets, and locks left held at the end of
    /// a phase.
    fn check(&mut self, w: &Workload) -> Result<()> {
        let tasks: HashSet<&str> = w.tasks.iter().map(|t| t.name.as_str()).collect();
        let suspend_names: HashMap<&str, &str> = self
            .suspends
            .iter()
            .map(|(t, s, _)| (s.as_str(), t.as_str()))
            .collect();
        let known = || {
            w.tasks
                .iter()
                .map(|t| t.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut warnings = Vec::new();
        for t in &w.tasks {
            for p in &t.phases {
                let mut held: Vec<(&str, Span)> = Vec::new();
                for e in &p.events {
                    match &e.event {
                        Event::Fork { task } if !tasks.contains(task.as_str()) => {
                            return Err(RtappError::UnknownTask {
                                at: self.loc(e.span),
                                key: e.key.clone(),
                                target: task.clone(),
                                known: known(),
                            });
                        }
                        Event::Resume { name } if !suspend_names.contains_key(name.as_str()) => {
                            warnings.push((e.span, format!(
                                "`resume` \"{name}\" matches no `suspend` \"{name}\": rt-app broadcasts to nobody"
                            )));
                        }
                        Event::Lock { mutex } => held.push((mutex, e.span)),
                        Event::Unlock { mutex } => {
                            if let Some(i) = held.iter().rposition(|(m, _)| m == mutex) {
                                held.remove(i);
                            }
                        }
                        _ => {}
                    }
                }
                if let Some((mutex, span)) = held.first() {
                    return Err(RtappError::UnbalancedLock {
                        at: self.loc(*span),
                        mutex: mutex.to_string(),
                        what: if p.name == "phase0" {
                            format!("task \"{}\"", t.name)
                        } else {
                            format!("phase \"{}\" of task \"{}\"", p.name, t.name)
                        },
                    });
                }
            }
        }
        // rt-app names threads `<task>-<global index>`; pthread_setname_np() refuses
        // names over 15 characters and the thread stays `rt-app`.
        let mut ind = 0u32;
        for t in &w.tasks {
            for _ in 0..t.instances {
                let n = format!("{}-{ind}", t.name);
                if n.len() > 15 {
                    warnings.push((t.span, format!(
                        "thread name \"{n}\" is {} characters: pthread_setname_np() fails (ERANGE, over 15) and the thread keeps the comm \"rt-app\", as on a board; use a task name of at most {} characters",
                        n.len(),
                        15usize.saturating_sub(n.len() - t.name.len())
                    )));
                }
                ind += 1;
            }
        }
        for (span, msg) in warnings {
            self.warn(span, msg);
        }
        Ok(())
    }
}
