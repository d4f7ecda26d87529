//! Input text: bytes checked as UTF-8 with the position of the first invalid byte, for
//! the readers' one-line `FILE:LINE:COL:` errors (rt-app JSON, platform YAML, noise files).

/// Where a text stops being UTF-8.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotUtf8 {
    /// 1-based line of the invalid byte.
    pub line: u32,
    /// 1-based column (in characters) of the invalid byte.
    pub col: u32,
    /// The invalid byte.
    pub byte: u8,
}

impl NotUtf8 {
    /// What was expected there: `UTF-8 text (byte 0xff is not valid UTF-8 here)`.
    pub fn expected(&self) -> String {
        format!(
            "UTF-8 text (byte 0x{:02x} is not valid UTF-8 here)",
            self.byte
        )
    }
}

/// `bytes` as text, or the position of their first invalid byte.
pub fn utf8(bytes: &[u8]) -> Result<&str, NotUtf8> {
    std::str::from_utf8(bytes).map_err(|e| {
        // valid UTF-8 up to here: count lines and characters
        let before = std::str::from_utf8(&bytes[..e.valid_up_to()]).unwrap_or_default();
        let line = before.matches('\n').count() + 1;
        let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        NotUtf8 {
            line: u32::try_from(line).unwrap_or(u32::MAX),
            col: u32::try_from(col).unwrap_or(u32::MAX),
            byte: bytes[e.valid_up_to()],
        }
    })
}

/// `s` with its control characters escaped (`\n`, `\0`, `\u{1b}`): text from the input
/// quoted in a message keeps the message on one line.
pub fn one_line(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c.is_control() {
            out.extend(c.escape_debug());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn control_characters_are_escaped() {
        assert_eq!(super::one_line("a\nb\0c\té"), "a\\nb\\0c\\té");
    }

    #[test]
    fn first_invalid_byte_is_located() {
        assert_eq!(super::utf8(b"ab\ncd"), Ok("ab\ncd"));
        let e = super::utf8(b"ab\n\xc3\xa9x\xffy").err();
        assert_eq!(e.map(|e| (e.line, e.col, e.byte)), Some((2, 3, 0xff)));
    }
}
