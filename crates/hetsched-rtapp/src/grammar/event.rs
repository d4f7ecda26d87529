//! rt-app's events (`parse_task_event_data()` of src/rt-app_parse_config.c): a phase's
//! event keys, in document order, each to an [`Event`] with its resources resolved.

use super::*;

impl Reader<'_> {
    pub(super) fn events(
        &mut self,
        obj: Obj<'_>,
        task: &str,
        phase: &str,
    ) -> Result<Vec<EventSpec>> {
        let mut out = Vec::new();
        for m in obj.members {
            if let Some(prefix) = event_prefix(&m.key) {
                let event = self.event(prefix, m, task)?;
                out.push(EventSpec {
                    event,
                    key: m.key.clone(),
                    span: m.key_span,
                });
            }
        }
        if out.is_empty() {
            return Err(RtappError::NoEvents {
                at: self.loc(obj.span),
                what: if phase == "phase0" {
                    format!("task \"{task}\"")
                } else {
                    format!("phase \"{phase}\" of task \"{task}\"")
                },
            });
        }
        Ok(out)
    }

    pub(super) fn event(&mut self, prefix: &str, m: &Member, task: &str) -> Result<Event> {
        let us = "an integer number of microseconds";
        let name = |r: &Self, what: &str| -> Result<String> {
            r.string(m, &format!("a string ({what})"))
                .map(str::to_string)
        };
        Ok(match prefix {
            "run" => Event::Run {
                us: self.nonneg(m, us)?,
            },
            "runtime" => Event::Runtime {
                us: self.nonneg(m, us)?,
            },
            "sleep" => Event::Sleep {
                us: self.nonneg(m, us)?,
            },
            "mem" => Event::Mem {
                bytes: self.nonneg(m, "an integer number of bytes")?,
            },
            "iorun" => Event::Iorun {
                bytes: self.nonneg(m, "an integer number of bytes")?,
            },
            "lock" => Event::Lock {
                mutex: name(self, "mutex name")?,
            },
            "unlock" => Event::Unlock {
                mutex: name(self, "mutex name")?,
            },
            "signal" => Event::Signal {
                cond: name(self, "condition name")?,
            },
            "broad" => Event::Broad {
                cond: name(self, "condition name")?,
            },
            "barrier" => Event::Barrier {
                name: name(self, "barrier name")?,
            },
            "fork" => Event::Fork {
                task: name(self, "task name")?,
            },
            "resume" => Event::Resume {
                name: name(self, "the name a `suspend` waits on")?,
            },
            "sem_post" => Event::SemPost {
                sem: name(self, "semaphore name")?,
            },
            "sem_wait" => Event::SemWait {
                sem: name(self, "semaphore name")?,
            },
            "suspend" => {
                let s = name(self, "the name resumes refer to, normally the task's own")?;
                self.suspends
                    .push((task.to_string(), s.clone(), m.key_span));
                Event::Suspend { name: s }
            }
            "yield" => Event::Yield,
            "wait" | "sync" => {
                let obj = self.object(m, "an object {\"ref\": condition, \"mutex\": mutex}")?;
                self.warn_keys(obj, &format!("`{}`", m.key), &|k| {
                    matches!(k, "ref" | "mutex")
                });
                let cond = self.ref_or_unknown(obj, m, "ref")?;
                let mutex = self.ref_or_unknown(obj, m, "mutex")?;
                if prefix == "wait" {
                    Event::Wait { cond, mutex }
                } else {
                    Event::Sync { cond, mutex }
                }
            }
            "timer" => {
                let obj = self.object(m, "an object {\"ref\": name, \"period\": µs, \"mode\": \"relative\"|\"absolute\"}")?;
                self.warn_keys(obj, &format!("`{}`", m.key), &|k| {
                    matches!(k, "ref" | "period" | "mode")
                });
                let name = self.ref_or_unknown(obj, m, "ref")?;
                let period_us = match obj.get("period") {
                    Some(p) => self.nonneg(p, us)?,
                    None => {
                        self.warn(
                            m.value.span,
                            format!("`{}` has no `period`: rt-app uses 0", m.key),
                        );
                        0
                    }
                };
                let mode = match obj.get("mode") {
                    None => TimerMode::Relative,
                    Some(md) => {
                        let s = self.string(md, "\"relative\" or \"absolute\"")?;
                        if s.starts_with("absolute") {
                            TimerMode::Absolute
                        } else {
                            if !s.starts_with("relative") {
                                self.warn(
                                    md.value.span,
                                    format!("timer mode \"{s}\" read as \"relative\""),
                                );
                            }
                            TimerMode::Relative
                        }
                    }
                };
                Event::Timer {
                    name,
                    period_us,
                    mode,
                }
            }
            "memrun" => {
                let obj = self.object(
                    m,
                    "an object {\"type\": read|write|chase, \"size\": bytes, \"count\": n}",
                )?;
                self.warn_keys(obj, &format!("`{}`", m.key), &|k| {
                    matches!(k, "type" | "size" | "count" | "stride" | "pattern" | "ref")
                });
                let kind = match obj.get("type") {
                    Some(t) => match self.string(t, "\"read\", \"write\" or \"chase\"")? {
                        "read" => MemrunType::Read,
                        "write" => MemrunType::Write,
                        "chase" => MemrunType::Chase,
                        other => {
                            return Err(self.invalid(
                                t.value.span,
                                "type",
                                format!("unknown memrun type \"{other}\"; expected \"read\", \"write\" or \"chase\""),
                            ))
                        }
                    },
                    None => {
                        return Err(RtappError::MissingKey {
                            at: self.loc(obj.span),
                            key: "type".into(),
                            within: format!("`{}`", m.key),
                        })
                    }
                };
                let size = match obj.get("size") {
                    Some(s) => self.nonneg(s, "an integer number of bytes")?,
                    None => {
                        return Err(RtappError::MissingKey {
                            at: self.loc(obj.span),
                            key: "size".into(),
                            within: format!("`{}`", m.key),
                        })
                    }
                };
                let count = match obj.get("count") {
                    Some(c) => self.nonneg(c, "an integer number of passes")?,
                    None => 1,
                };
                for key in ["stride", "pattern", "ref"] {
                    if let Some(x) = obj.get(key) {
                        self.warn(
                            x.key_span,
                            format!("memrun `{key}` is not modelled and is ignored"),
                        );
                    }
                }
                Event::Memrun { kind, size, count }
            }
            _ => return Err(self.invalid(m.key_span, &m.key, "unknown event".into())),
        })
    }

    /// `get_string_value_from(obj, key, TRUE, "unknown")`.
    pub(super) fn ref_or_unknown(
        &mut self,
        obj: Obj<'_>,
        parent: &Member,
        key: &str,
    ) -> Result<String> {
        match obj.get(key) {
            Some(m) => Ok(self.string(m, "a string")?.to_string()),
            None => {
                self.warn(
                    obj.span,
                    format!("`{}` has no `{key}`: rt-app uses \"unknown\"", parent.key),
                );
                Ok("unknown".into())
            }
        }
    }
}
