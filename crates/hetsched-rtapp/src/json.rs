//! A lenient JSON reader with json-c's non-strict leniency and exact positions.
//!
//! rt-app reads its configuration with json-c's `json_object_from_file`, i.e. the json-c
//! tokener in **non-strict** mode. This reader accepts what that tokener accepts and
//! reports what it rejects, at the character where it stops, with the json-c message:
//!
//! * C comments `/* … */` and `// …` wherever whitespace is allowed;
//! * trailing commas in objects and arrays (`[1, 2,]`, `{"a": 1,}`);
//! * single-quoted strings (`'abc'`), case-insensitive `true`/`false`/`null`,
//!   `NaN` and `Infinity` (json-c non-strict extensions);
//! * integers (i64; larger ones become floats) and floats;
//! * at most [`MAX_DEPTH`] nested arrays/objects (json-c's default tokener depth);
//! * anything after the top-level value is ignored, as json-c does (with a warning).
//!
//! Objects are kept as an **ordered list of members**, so repeated keys stay separate
//! entries in source order (what `doc/workgen` relies on); [`collapse_duplicates`]
//! reproduces json-c's own behaviour (last value wins, at the first key's position).
//!
//! The reader is a recursive descent over `char`s; it never panics, whatever the input.

use hetsched_core::workload::Span;

/// json-c's default maximum nesting depth (`JSON_TOKENER_DEFAULT_DEPTH`).
pub const MAX_DEPTH: usize = 32;

/// A JSON value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// `null`.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// An integer that fits in i64.
    Int(i64),
    /// A number with a fraction or exponent, or an integer too large for i64.
    Float(f64),
    /// A string.
    Str(String),
    /// An array.
    Array(Vec<Node>),
    /// An object, as an ordered list of members (duplicates kept).
    Object(Vec<Member>),
}

impl Value {
    /// The JSON type name, for messages ("an integer", "a string", …).
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "a boolean",
            Value::Int(_) => "an integer",
            // 2⁶³ and beyond: an integer literal too large for i64 is read as a float
            Value::Float(f) if f.fract() == 0.0 && f.abs() >= 9.223_372_036_854_776e18 => {
                "an integer beyond the 64-bit range"
            }
            Value::Float(_) => "a float",
            Value::Str(_) => "a string",
            Value::Array(_) => "an array",
            Value::Object(_) => "an object",
        }
    }
}

/// A value with the position of its first character.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    /// The value.
    pub value: Value,
    /// Where the value starts.
    pub span: Span,
}

/// One `key: value` member of an object.
#[derive(Debug, Clone, PartialEq)]
pub struct Member {
    /// The key.
    pub key: String,
    /// Where the key starts (its opening quote).
    pub key_span: Span,
    /// The value.
    pub value: Node,
}

/// A syntax error: where the reader stopped, what it expected, and json-c's message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonError {
    /// 1-based line.
    pub line: u32,
    /// 1-based column, in characters.
    pub col: u32,
    /// What would have been accepted here, e.g. `':' after object key`.
    pub expected: String,
    /// The json-c tokener message for the same failure.
    pub jsonc: &'static str,
}

/// A parsed document: the top-level value and reader warnings.
#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    /// The top-level value.
    pub root: Node,
    /// Warnings (ignored trailing content).
    pub warnings: Vec<String>,
}

/// Parses `text` with json-c's non-strict leniency. Duplicate keys are kept in order.
pub fn parse(text: &str) -> Result<Document, JsonError> {
    let mut p = Parser {
        chars: text.chars().collect(),
        pos: 0,
        line: 1,
        col: 1,
    };
    p.skip_ws()?;
    if p.peek().is_none() {
        return Err(p.err("a JSON value", "unexpected end of data"));
    }
    let root = p.value(0)?;
    let mut warnings = Vec::new();
    // json-c stops at the end of the first complete value and ignores the rest; a
    // comment or whitespace after it is the common case and deserves no warning.
    match p.skip_ws() {
        Ok(()) if p.peek().is_none() => {}
        _ => warnings.push(format!(
            "{}:{}: content after the top-level value is ignored (as json-c does)",
            p.line, p.col
        )),
    }
    Ok(Document { root, warnings })
}

/// Every repeated key of every object of `node`, in document order: the key of the
/// object's parent member (`""` at the top), the repeated key, where its first
/// occurrence in that object is, and where this repetition is.
pub fn repeated_keys(node: &Node) -> Vec<RepeatedKey> {
    fn walk(n: &Node, parent: &str, out: &mut Vec<RepeatedKey>) {
        match &n.value {
            Value::Array(items) => items.iter().for_each(|i| walk(i, parent, out)),
            Value::Object(members) => {
                for (i, m) in members.iter().enumerate() {
                    if let Some(first) = members[..i].iter().find(|f| f.key == m.key) {
                        out.push(RepeatedKey {
                            parent: parent.to_string(),
                            key: m.key.clone(),
                            first: first.key_span,
                            at: m.key_span,
                        });
                    }
                    walk(&m.value, &m.key, out);
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(node, "", &mut out);
    out
}

/// A repeated key of one object (see [`repeated_keys`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepeatedKey {
    /// The key of the member whose value is the object (`""` for the top level).
    pub parent: String,
    /// The repeated key.
    pub key: String,
    /// Its first occurrence in the object.
    pub first: Span,
    /// This repetition.
    pub at: Span,
}

/// Rewrites every object of `node` the way json-c stores it: for a repeated key, the
/// value of the last occurrence is kept at the position of the first.
pub fn collapse_duplicates(node: &mut Node) {
    match &mut node.value {
        Value::Array(items) => items.iter_mut().for_each(collapse_duplicates),
        Value::Object(members) => {
            let mut out: Vec<Member> = Vec::with_capacity(members.len());
            for mut m in std::mem::take(members) {
                collapse_duplicates(&mut m.value);
                if let Some(first) = out.iter_mut().find(|f| f.key == m.key) {
                    first.value = m.value;
                } else {
                    out.push(m);
                }
            }
            *members = out;
        }
        _ => {}
    }
}

struct Parser {
    chars: Vec<char>,
    pos: usize,
    line: u32,
    col: u32,
}

impl Parser {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn peek_at(&self, off: usize) -> Option<char> {
        self.chars.get(self.pos + off).copied()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += 1;
        if c == '\n' {
            self.line += 1;
            self.col = 1;
        } else {
            self.col += 1;
        }
        Some(c)
    }

    fn span(&self) -> Span {
        Span {
            line: self.line,
            col: self.col,
        }
    }

    fn err(&self, expected: &str, jsonc: &'static str) -> JsonError {
        self.err_at(self.span(), expected, jsonc)
    }

    fn err_at(&self, at: Span, expected: &str, jsonc: &'static str) -> JsonError {
        JsonError {
            line: at.line,
            col: at.col,
            expected: expected.to_string(),
            jsonc,
        }
    }

    /// Skips whitespace and C/C++ comments.
    fn skip_ws(&mut self) -> Result<(), JsonError> {
        loop {
            match self.peek() {
                Some(c) if c.is_whitespace() => {
                    self.bump();
                }
                Some('/') => match self.peek_at(1) {
                    Some('*') => {
                        self.bump();
                        self.bump();
                        loop {
                            match self.bump() {
                                None => {
                                    return Err(self
                                        .err("'*/' closing the comment", "unexpected end of data"))
                                }
                                Some('*') if self.peek() == Some('/') => {
                                    self.bump();
                                    break;
                                }
                                Some(_) => {}
                            }
                        }
                    }
                    Some('/') => {
                        while let Some(c) = self.bump() {
                            if c == '\n' {
                                break;
                            }
                        }
                    }
                    _ => {
                        self.bump();
                        return Err(self.err("'*' or '/' starting a comment", "expected comment"));
                    }
                },
                _ => return Ok(()),
            }
        }
    }

    fn value(&mut self, depth: usize) -> Result<Node, JsonError> {
        let span = self.span();
        let value = match self.peek() {
            None => return Err(self.err("a JSON value", "unexpected end of data")),
            Some('{') => {
                self.check_depth(depth)?;
                self.object(depth + 1)?
            }
            Some('[') => {
                self.check_depth(depth)?;
                self.array(depth + 1)?
            }
            Some(q @ ('"' | '\'')) => Value::Str(self.string(q)?),
            Some(c) if c == '-' || c.is_ascii_digit() => self.number()?,
            Some(c) if c.is_ascii_alphabetic() => self.word()?,
            Some(_) => {
                return Err(self.err(
                    "a JSON value (object, array, string, number, true, false or null)",
                    "unexpected character",
                ))
            }
        };
        Ok(Node { value, span })
    }

    fn check_depth(&self, depth: usize) -> Result<(), JsonError> {
        if depth >= MAX_DEPTH {
            Err(self.err(
                &format!("at most {MAX_DEPTH} nested arrays/objects"),
                "nesting too deep",
            ))
        } else {
            Ok(())
        }
    }

    fn object(&mut self, depth: usize) -> Result<Value, JsonError> {
        self.bump(); // '{'
        let mut members = Vec::new();
        loop {
            self.skip_ws()?;
            match self.peek() {
                Some('}') => {
                    self.bump();
                    return Ok(Value::Object(members));
                }
                Some(q @ ('"' | '\'')) => {
                    let key_span = self.span();
                    let key = self.string(q)?;
                    self.skip_ws()?;
                    match self.peek() {
                        Some(':') => {
                            self.bump();
                        }
                        None => {
                            return Err(self.err("':' after object key", "unexpected end of data"))
                        }
                        Some(_) => {
                            return Err(self.err(
                                "':' after object key",
                                "object property name separator ':' expected",
                            ))
                        }
                    }
                    self.skip_ws()?;
                    let value = self.value(depth)?;
                    members.push(Member {
                        key,
                        key_span,
                        value,
                    });
                    self.skip_ws()?;
                    match self.peek() {
                        Some(',') => {
                            self.bump();
                        }
                        Some('}') => {}
                        None => {
                            return Err(
                                self.err("',' or '}' after object value", "unexpected end of data")
                            )
                        }
                        Some(_) => {
                            return Err(self.err(
                                "',' or '}' after object value",
                                "object value separator ',' expected",
                            ))
                        }
                    }
                }
                None => {
                    return Err(self.err("a quoted object key or '}'", "unexpected end of data"))
                }
                Some(_) => {
                    return Err(self.err(
                        "a quoted object key or '}'",
                        "quoted object property name expected",
                    ))
                }
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<Value, JsonError> {
        self.bump(); // '['
        let mut items = Vec::new();
        loop {
            self.skip_ws()?;
            if self.peek() == Some(']') {
                self.bump();
                return Ok(Value::Array(items));
            }
            items.push(self.value(depth)?);
            self.skip_ws()?;
            match self.peek() {
                Some(',') => {
                    self.bump();
                }
                Some(']') => {}
                None => {
                    return Err(self.err("',' or ']' after array value", "unexpected end of data"))
                }
                Some(_) => {
                    return Err(self.err(
                        "',' or ']' after array value",
                        "array value separator ',' expected",
                    ))
                }
            }
        }
    }

    fn string(&mut self, quote: char) -> Result<String, JsonError> {
        self.bump(); // opening quote
        let mut s = String::new();
        loop {
            match self.bump() {
                None => {
                    return Err(self.err(
                        &format!("{quote} closing the string"),
                        "unexpected end of data",
                    ))
                }
                Some(c) if c == quote => return Ok(s),
                Some('\\') => {
                    let at = self.span();
                    match self.bump() {
                        None => {
                            return Err(self.err("an escape character", "unexpected end of data"))
                        }
                        Some('"') => s.push('"'),
                        Some('\'') => s.push('\''),
                        Some('\\') => s.push('\\'),
                        Some('/') => s.push('/'),
                        Some('b') => s.push('\u{8}'),
                        Some('f') => s.push('\u{c}'),
                        Some('n') => s.push('\n'),
                        Some('r') => s.push('\r'),
                        Some('t') => s.push('\t'),
                        Some('u') => {
                            let hi = self.hex4()?;
                            let c = if (0xD800..0xDC00).contains(&hi)
                                && self.peek() == Some('\\')
                                && self.peek_at(1) == Some('u')
                            {
                                self.bump();
                                self.bump();
                                let lo = self.hex4()?;
                                if (0xDC00..0xE000).contains(&lo) {
                                    char::from_u32(0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00))
                                } else {
                                    None
                                }
                            } else {
                                char::from_u32(hi)
                            };
                            s.push(c.unwrap_or('\u{FFFD}'));
                        }
                        Some(_) => {
                            return Err(self.err_at(
                                at,
                                "one of \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX",
                                "invalid string sequence",
                            ))
                        }
                    }
                }
                Some(c) => s.push(c),
            }
        }
    }

    fn hex4(&mut self) -> Result<u32, JsonError> {
        let mut v = 0u32;
        for _ in 0..4 {
            let at = self.span();
            match self.bump() {
                Some(c) => match c.to_digit(16) {
                    Some(d) => v = v * 16 + d,
                    None => {
                        return Err(self.err_at(
                            at,
                            "four hex digits after \\u",
                            "invalid string sequence",
                        ))
                    }
                },
                None => return Err(self.err("four hex digits after \\u", "unexpected end of data")),
            }
        }
        Ok(v)
    }

    fn number(&mut self) -> Result<Value, JsonError> {
        let start = self.span();
        let mut text = String::new();
        if self.peek() == Some('-') {
            text.push('-');
            self.bump();
            if self.peek().is_some_and(|c| c.is_ascii_alphabetic()) {
                return match self.word()? {
                    Value::Float(f) if f.is_infinite() => Ok(Value::Float(-f)),
                    _ => Err(self.err_at(start, "a number", "number expected")),
                };
            }
        }
        while let Some(c) = self.peek() {
            if c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '+' | '-') {
                text.push(c);
                self.bump();
            } else {
                break;
            }
        }
        let is_float = text.contains(['.', 'e', 'E']);
        let digits_ok = text
            .trim_start_matches('-')
            .starts_with(|c: char| c.is_ascii_digit());
        if !digits_ok {
            return Err(self.err_at(start, "a number", "number expected"));
        }
        if !is_float {
            if let Ok(i) = text.parse::<i64>() {
                return Ok(Value::Int(i));
            }
        }
        match text.parse::<f64>() {
            Ok(f) => Ok(Value::Float(f)),
            Err(_) => Err(self.err_at(start, "a number", "number expected")),
        }
    }

    fn word(&mut self) -> Result<Value, JsonError> {
        let start = self.span();
        let mut w = String::new();
        while let Some(c) = self.peek() {
            if c.is_ascii_alphabetic() {
                w.push(c);
                self.bump();
            } else {
                break;
            }
        }
        let lower = w.to_ascii_lowercase();
        match lower.as_str() {
            "true" => Ok(Value::Bool(true)),
            "false" => Ok(Value::Bool(false)),
            "null" => Ok(Value::Null),
            "nan" => Ok(Value::Float(f64::NAN)),
            "infinity" => Ok(Value::Float(f64::INFINITY)),
            _ if lower.starts_with('n') => Err(self.err_at(start, "null", "null expected")),
            _ if lower.starts_with('t') || lower.starts_with('f') => {
                Err(self.err_at(start, "true or false", "boolean expected"))
            }
            _ => Err(self.err_at(
                start,
                "a JSON value (object, array, string, number, true, false or null)",
                "unexpected character",
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(text: &str) -> Node {
        match parse(text) {
            Ok(d) => d.root,
            Err(e) => panic!("{text}: {e:?}"),
        }
    }

    fn bad(text: &str) -> JsonError {
        match parse(text) {
            Ok(d) => panic!("{text}: accepted as {:?}", d.root),
            Err(e) => e,
        }
    }

    #[test]
    fn comments_and_trailing_commas() {
        let n = ok("/* c */ { // x\n \"a\" : [1, 2,], 'b': -3.5e1, }");
        let Value::Object(m) = n.value else {
            panic!("not an object")
        };
        assert_eq!(m.len(), 2);
        assert_eq!(
            m[0].value.value,
            Value::Array(vec![
                Node {
                    value: Value::Int(1),
                    span: Span { line: 2, col: 9 }
                },
                Node {
                    value: Value::Int(2),
                    span: Span { line: 2, col: 12 }
                }
            ])
        );
        assert_eq!(m[1].key, "b");
        assert_eq!(m[1].value.value, Value::Float(-35.0));
        assert_eq!(m[0].key_span, Span { line: 2, col: 2 });
    }

    #[test]
    fn duplicates_kept_then_collapsed() {
        let mut n = ok(r#"{"run": 1, "x": 2, "run": 3}"#);
        let Value::Object(m) = &n.value else { panic!() };
        assert_eq!(m.len(), 3);
        collapse_duplicates(&mut n);
        let Value::Object(m) = &n.value else { panic!() };
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].key, "run");
        assert_eq!(m[0].value.value, Value::Int(3));
        assert_eq!(m[0].key_span, Span { line: 1, col: 2 });
    }

    #[test]
    fn literals_and_escapes() {
        assert_eq!(ok("TRUE").value, Value::Bool(true));
        assert_eq!(ok("Null").value, Value::Null);
        assert_eq!(
            ok(r#""a\n\u00e9\ud83d\ude00""#).value,
            Value::Str("a\né😀".into())
        );
        assert_eq!(ok("99999999999999999999").value, Value::Float(1e20));
        assert_eq!(ok("-Infinity").value, Value::Float(f64::NEG_INFINITY));
    }

    #[test]
    fn errors_name_what_was_expected() {
        let e = bad("{\n  \"suspend\",\n}");
        assert_eq!((e.line, e.col), (2, 12));
        assert_eq!(e.jsonc, "object property name separator ':' expected");
        assert_eq!(e.expected, "':' after object key");
        let e = bad("[1 2]");
        assert_eq!(
            (e.line, e.col, e.jsonc),
            (1, 4, "array value separator ',' expected")
        );
        let e = bad("{1: 2}");
        assert_eq!(
            (e.col, e.jsonc),
            (2, "quoted object property name expected")
        );
        let e = bad("{\"a\": 1 \"b\": 2}");
        assert_eq!((e.col, e.jsonc), (9, "object value separator ',' expected"));
        let e = bad("{\"a\": tru}");
        assert_eq!((e.col, e.jsonc), (7, "boolean expected"));
        let e = bad("{\"a\": /x }");
        assert_eq!(e.jsonc, "expected comment");
        let e = bad("{\"a\": \"\\q\"}");
        assert_eq!((e.col, e.jsonc), (9, "invalid string sequence"));
        let e = bad("{\"a\": [1,");
        assert_eq!(e.jsonc, "unexpected end of data");
        assert_eq!(bad("").jsonc, "unexpected end of data");
        assert_eq!(bad("/* open").jsonc, "unexpected end of data");
    }

    #[test]
    fn depth_is_limited_like_json_c() {
        let deep_ok = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert!(parse(&deep_ok).is_ok());
        let too_deep = format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
        assert_eq!(bad(&too_deep).jsonc, "nesting too deep");
        // Far deeper input must not overflow the stack.
        assert!(parse(&"[".repeat(1_000_000)).is_err());
    }

    #[test]
    fn trailing_content_is_ignored_with_a_warning() {
        let d = match parse("{} // end\n") {
            Ok(d) => d,
            Err(e) => panic!("{e:?}"),
        };
        assert!(d.warnings.is_empty());
        let d = match parse("{} x") {
            Ok(d) => d,
            Err(e) => panic!("{e:?}"),
        };
        assert_eq!(d.warnings.len(), 1);
    }
}
