//! Errors of the rt-app reader: each one names the file, line and column, and what would
//! have been accepted there.

use std::fmt;

/// Displays a string taken from the input with control characters escaped (`\n`, `\t`,
/// `\u{1b}`), so an error stays on one line whatever the file contains.
pub(crate) struct Esc<'a>(pub(crate) &'a str);

impl fmt::Display for Esc<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for c in self.0.chars() {
            if c.is_control() {
                write!(f, "{}", c.escape_debug())?;
            } else {
                write!(f, "{c}")?;
            }
        }
        Ok(())
    }
}

/// A position in a named source: `FILE:LINE:COL`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// File name (or any origin given to [`crate::parse_str`]).
    pub origin: String,
    /// 1-based line.
    pub line: u32,
    /// 1-based column, in characters.
    pub col: u32,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", Esc(&self.origin), self.line, self.col)
    }
}

/// Why an rt-app file was rejected. Every variant displays as one line starting with
/// `FILE:LINE:COL:`; the consequence is always the same: no workload is produced.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RtappError {
    /// The file could not be read.
    #[error("{}:1:1: cannot read the file: {}", Esc(.path), Esc(.reason))]
    Io {
        /// The path.
        path: String,
        /// The operating-system error.
        reason: String,
    },
    /// The text is not JSON that json-c (non-strict) accepts.
    #[error("{at}: expected {} (rt-app/json-c: {jsonc})", Esc(.expected))]
    Syntax {
        /// Where the tokener stopped.
        at: Location,
        /// What would have been accepted.
        expected: String,
        /// json-c's message for the same failure.
        jsonc: &'static str,
    },
    /// A mandatory key is missing (rt-app: `Key … not found` / `Error while parsing config`).
    #[error("{at}: missing mandatory key `{}` in {}", Esc(.key), Esc(.within))]
    MissingKey {
        /// The object lacking the key.
        at: Location,
        /// The key.
        key: String,
        /// What the object is ("the top-level object", …).
        within: String,
    },
    /// A key has a value of the wrong JSON type (rt-app: `Invalid type for key …` or
    /// `Unknown or mismatch … event type`).
    #[error("{at}: `{}` expects {}, found {}", Esc(.key), Esc(.expected), Esc(.found))]
    WrongType {
        /// The value.
        at: Location,
        /// The key (as written).
        key: String,
        /// What would be accepted.
        expected: String,
        /// The JSON type found.
        found: String,
    },
    /// A value has the right type but is out of range or not one of the accepted names.
    #[error("{at}: `{}`: {}", Esc(.key), Esc(.message))]
    InvalidValue {
        /// The value.
        at: Location,
        /// The key (as written).
        key: String,
        /// What is wrong and what would be accepted.
        message: String,
    },
    /// A phase (or a task without `phases`) has no event (rt-app: `No events found.
    /// Task must have events or it's useless`).
    #[error("{at}: {} has no event; expected at least one of run, runtime, sleep, timer, lock, unlock, wait, signal, broad, sync, suspend, resume, mem, memrun, iorun, yield, barrier, fork, sem_post, sem_wait", Esc(.what))]
    NoEvents {
        /// The phase or task.
        at: Location,
        /// `phase "p1" of task "t"`.
        what: String,
    },
    /// `resume`/`fork` names a task that does not exist.
    #[error("{at}: `{}` names unknown task \"{}\"; expected one of: {}", Esc(.key), Esc(.target), Esc(.known))]
    UnknownTask {
        /// The event.
        at: Location,
        /// The event key.
        key: String,
        /// The name written.
        target: String,
        /// The task names of the file.
        known: String,
    },
    /// A mutex locked in a phase is still held when the phase ends.
    #[error("{at}: mutex \"{}\" is locked here but never unlocked in {}; expected a matching `unlock` later in the same phase", Esc(.mutex), Esc(.what))]
    UnbalancedLock {
        /// The `lock` event.
        at: Location,
        /// The mutex.
        mutex: String,
        /// `phase "p1" of task "t"`.
        what: String,
    },
}

impl RtappError {
    /// Where the error is, when it has a position in the source.
    pub fn location(&self) -> Option<&Location> {
        match self {
            RtappError::Io { .. } => None,
            RtappError::Syntax { at, .. }
            | RtappError::MissingKey { at, .. }
            | RtappError::WrongType { at, .. }
            | RtappError::InvalidValue { at, .. }
            | RtappError::NoEvents { at, .. }
            | RtappError::UnknownTask { at, .. }
            | RtappError::UnbalancedLock { at, .. } => Some(at),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_strings_cannot_break_the_line() {
        let e = RtappError::UnknownTask {
            at: Location {
                origin: "w.json".into(),
                line: 3,
                col: 5,
            },
            key: "resume".into(),
            target: "a\nb".into(),
            known: "x\ty".into(),
        };
        let s = e.to_string();
        assert!(!s.contains('\n') && !s.contains('\t'), "{s}");
        assert!(s.contains(r#""a\nb""#), "{s}");
    }
}
