//! Text from outside (a config, a replay script) read with bounds: no line longer than
//! [`MAX_LINE`], so that a file without newlines (`/dev/zero`) is refused at once instead of
//! filling the memory, and invisible characters shown escaped when input is echoed in a message.

use std::io::Read;

/// The longest line read: 64 KiB.
pub const MAX_LINE: usize = 64 * 1024;

/// Why text was not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TextError {
    /// A line (1-based) longer than [`MAX_LINE`] bytes.
    LineTooLong {
        line: usize,
    },
    /// The text is longer than allowed; `line` is where it was cut.
    TooBig {
        line: usize,
        max: usize,
    },
    /// Not UTF-8 from this line and column (1-based) on.
    NotUtf8 {
        line: usize,
        col: usize,
    },
    Io(String),
}

impl TextError {
    /// The line, or the line and column, then what is wrong: `12: ...`, `3:7: ...`.
    pub fn at_line(&self) -> String {
        match self {
            TextError::LineTooLong { line } => format!(
                "{line}: the line is longer than {} KiB (refused; is this a text file?)",
                MAX_LINE / 1024
            ),
            TextError::TooBig { line, max } => {
                format!("{line}: longer than {} KiB in all (refused)", max / 1024)
            }
            TextError::NotUtf8 { line, col } => {
                format!("{line}:{col}: not UTF-8 text from here on")
            }
            TextError::Io(e) => format!(" cannot read: {e}"),
        }
    }
}

/// Reads UTF-8 text of at most `max` bytes with no line longer than [`MAX_LINE`]; reading stops
/// at the first line too long.
pub fn read_text(mut r: impl Read, max: usize) -> Result<String, TextError> {
    let mut bytes: Vec<u8> = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    let (mut line, mut line_len) = (1usize, 0usize);
    loop {
        let n = match r.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(TextError::Io(e.to_string())),
        };
        for &b in &buf[..n] {
            if b == b'\n' {
                line += 1;
                line_len = 0;
            } else {
                line_len += 1;
                if line_len > MAX_LINE {
                    return Err(TextError::LineTooLong { line });
                }
            }
        }
        if bytes.len() + n > max {
            return Err(TextError::TooBig { line, max });
        }
        bytes.extend_from_slice(&buf[..n]);
    }
    String::from_utf8(bytes).map_err(|e| {
        let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line = valid.iter().filter(|b| **b == b'\n').count() + 1;
        let start = valid.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
        // The prefix is valid UTF-8 by construction.
        let col = std::str::from_utf8(&valid[start..]).map_or(1, |s| s.chars().count() + 1);
        TextError::NotUtf8 { line, col }
    })
}

/// Characters that print as nothing or turn the text round: control characters, bidi
/// overrides and isolates, zero-width characters.
pub fn invisible(c: char) -> bool {
    (c.is_control() && c != '\n')
        || matches!(c,
            '\u{200b}'..='\u{200f}'
            | '\u{202a}'..='\u{202e}'
            | '\u{2060}'..='\u{2069}'
            | '\u{061c}'
            | '\u{feff}')
}

/// The longest message shown; the rest is cut (a message echoes at most a line of input).
pub const MAX_SHOWN: usize = 2000;

/// A message as it is shown: invisible characters written as `\u{202e}` (`\t` for a tab), and
/// cut after [`MAX_SHOWN`] characters.
pub fn shown(msg: &str) -> String {
    let mut out = String::with_capacity(msg.len().min(MAX_SHOWN + 16));
    for (i, c) in msg.chars().enumerate() {
        if i == MAX_SHOWN {
            out.push('…');
            break;
        }
        match c {
            '\t' => out.push_str("\\t"),
            c if invisible(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_line_is_refused_with_its_number() {
        let text = format!("a\nb\n{}\n", "x".repeat(MAX_LINE + 1));
        assert_eq!(
            read_text(text.as_bytes(), usize::MAX),
            Err(TextError::LineTooLong { line: 3 })
        );
        let ok = format!("{}\n", "x".repeat(MAX_LINE));
        assert_eq!(read_text(ok.as_bytes(), usize::MAX).unwrap(), ok);
    }

    #[test]
    fn endless_input_without_newlines_is_refused() {
        let zeros = std::io::repeat(0);
        assert_eq!(
            read_text(zeros, usize::MAX),
            Err(TextError::LineTooLong { line: 1 })
        );
    }

    #[test]
    fn bad_utf8_is_placed() {
        let bytes = b"ok\nab\xffc\n";
        assert_eq!(
            read_text(&bytes[..], usize::MAX),
            Err(TextError::NotUtf8 { line: 2, col: 3 })
        );
    }

    #[test]
    fn invisible_characters_are_shown_escaped() {
        assert_eq!(
            shown("bad '\u{202e}e4\u{0}\u{200b}'\tx"),
            "bad '\\u{202e}e4\\u{0}\\u{200b}'\\tx"
        );
        assert_eq!(shown("line 1: ok\nnext"), "line 1: ok\nnext");
        assert!(shown(&"y".repeat(5000)).chars().count() <= MAX_SHOWN + 1);
    }
}
