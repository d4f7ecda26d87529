//! Errors of the platform readers: one line each, naming the file, line and column.

use std::fmt;

/// A position in a platform source: the origin (file path or `preset:NAME`) and, when
/// known, the 1-based line and column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourcePos {
    /// File path, or `presets/platforms/NAME.yaml` for an embedded preset.
    pub origin: String,
    /// 1-based line and column, when known.
    pub line_column: Option<(usize, usize)>,
}

impl fmt::Display for SourcePos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line_column {
            Some((line, column)) => write!(f, "{}:{line}:{column}", self.origin),
            None => f.write_str(&self.origin),
        }
    }
}

/// Why a platform could not be loaded. `Display` is always one line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlatformError {
    /// The name is not a built-in preset (and, for [`crate::load`], not an existing file).
    /// Consequence: nothing is loaded; the message lists the valid preset names.
    #[error("unknown platform `{name}`: not a preset ({}) nor an existing file", valid.join(", "))]
    UnknownPreset {
        /// The name asked for.
        name: String,
        /// The valid preset names.
        valid: Vec<String>,
    },
    /// The file could not be read (missing, unreadable, not UTF-8).
    #[error("{path}: cannot read platform file: {message}")]
    Io {
        /// The path given.
        path: String,
        /// The operating system's reason.
        message: String,
    },
    /// The text is not valid YAML, or does not have the format's shape (unknown or missing
    /// key, wrong type). The position is the parser's.
    #[error("{at}: {message}")]
    Syntax {
        /// Where.
        at: SourcePos,
        /// What was found and what was expected.
        message: String,
    },
    /// The file has the right shape but describes an impossible platform (a CPU in two
    /// perf domains, a gap in CPU numbering, descending OPPs, …). The position is that of
    /// the offending item.
    #[error("{at}: {message}")]
    Invalid {
        /// Where.
        at: SourcePos,
        /// What is wrong and what would be accepted.
        message: String,
    },
}

impl PlatformError {
    /// The position of a syntax or validation error, if any.
    pub fn position(&self) -> Option<&SourcePos> {
        match self {
            PlatformError::Syntax { at, .. } | PlatformError::Invalid { at, .. } => Some(at),
            _ => None,
        }
    }
}

/// Make a message one line: newlines and runs of whitespace become single spaces.
pub(crate) fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Turn a serde_yaml error into a [`PlatformError::Syntax`] with its position.
pub(crate) fn from_yaml(origin: &str, err: &serde_yaml::Error) -> PlatformError {
    let mut message = err.to_string();
    let line_column = err.location().map(|l| (l.line(), l.column()));
    if let Some((line, column)) = line_column {
        let suffix = format!(" at line {line} column {column}");
        if let Some(i) = message.find(&suffix) {
            message.replace_range(i..i + suffix.len(), "");
        }
    }
    PlatformError::Syntax {
        at: SourcePos {
            origin: origin.to_string(),
            line_column,
        },
        message: one_line(&message),
    }
}

/// The deepest flow nesting (`[` and `{`) a platform file may have. serde_yaml's parser
/// does not return on 100,000 nested flow brackets; no platform needs more than a few.
pub(crate) const MAX_YAML_FLOW_DEPTH: usize = 64;

/// Refuses YAML whose flow collections nest deeper than [`MAX_YAML_FLOW_DEPTH`], at the
/// opening bracket that goes past it, before any parser sees it: one linear pass that
/// skips quoted scalars and comments.
pub(crate) fn check_yaml_depth(text: &str, origin: &str) -> Result<(), PlatformError> {
    let (mut depth, mut line, mut col) = (0usize, 1usize, 0usize);
    let mut quote: Option<char> = None;
    let mut comment = false;
    let mut prev = '\n';
    for c in text.chars() {
        if c == '\n' {
            line += 1;
            col = 0;
            comment = false;
            prev = c;
            continue;
        }
        col += 1;
        if comment {
            continue;
        }
        match quote {
            Some(q) => {
                if c == q && !(q == '"' && prev == '\\') {
                    quote = None;
                }
            }
            None => match c {
                '"' | '\'' => quote = Some(c),
                '#' if prev.is_whitespace() => comment = true,
                '[' | '{' => {
                    depth += 1;
                    if depth > MAX_YAML_FLOW_DEPTH {
                        return Err(PlatformError::Syntax {
                            at: SourcePos {
                                origin: origin.to_string(),
                                line_column: Some((line, col)),
                            },
                            message: format!(
                                "flow collections nested deeper than {MAX_YAML_FLOW_DEPTH} levels"
                            ),
                        });
                    }
                }
                ']' | '}' => depth = depth.saturating_sub(1),
                _ => {}
            },
        }
        prev = c;
    }
    Ok(())
}
