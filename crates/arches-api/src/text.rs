//! Text that reaches a terminal or a log: the one rule for showing names
//! and messages that came from users (job and reservation names, `mschedctl
//! -A` messages, checkjob messages, host names...).
//!
//! Control characters (C0, DEL, C1) and the Unicode bidirectional
//! overrides are shown escaped — `\n`, `\r`, `\t`, `\xHH` for the other C0
//! characters and DEL, `\u{HHHH}` for C1 and bidi controls — so that a
//! hostile name can neither drive the terminal (ANSI sequences, bells,
//! carriage returns that overwrite a line) nor forge extra lines of output
//! or of the log. Everything else, backslashes included, is left as is.
//!
//! The client library applies [`escape`] to every string of every answer
//! (`arches-client`), and the daemon to every user-supplied string it logs.

use std::borrow::Cow;

/// Whether `c` is shown escaped by [`escape`].
pub fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}'
        )
}

/// Whether `s` holds a character [`escape`] would change.
pub fn needs_escape(s: &str) -> bool {
    s.chars().any(is_unsafe)
}

/// `s` with every control character escaped (see the module).
pub fn escape(s: &str) -> Cow<'_, str> {
    escape_with(s, false)
}

/// Like [`escape`] but keeps line feeds: for multi-line messages (error
/// texts made of several lines).
pub fn escape_keep_newlines(s: &str) -> Cow<'_, str> {
    escape_with(s, true)
}

fn escape_with(s: &str, keep_newlines: bool) -> Cow<'_, str> {
    let unsafe_char = |c: char| is_unsafe(c) && !(keep_newlines && c == '\n');
    if !s.chars().any(unsafe_char) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if !unsafe_char(c) {
            out.push(c);
            continue;
        }
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x80 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push_str(&format!("\\u{{{:04x}}}", c as u32)),
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_is_borrowed_unchanged() {
        for s in ["", "job-1", "Hello wörld", "C:\\path", "日本語"] {
            assert!(matches!(escape(s), Cow::Borrowed(t) if t == s), "{s}");
            assert!(!needs_escape(s));
        }
    }

    #[test]
    fn control_characters_are_escaped() {
        assert_eq!(escape("a\x1b[31mred"), "a\\x1b[31mred");
        assert_eq!(
            escape("l1\nl2\r\t\x07\x00\x7f"),
            "l1\\nl2\\r\\t\\x07\\x00\\x7f"
        );
        assert_eq!(escape("c1\u{85}\u{9b}"), "c1\\u{0085}\\u{009b}");
        assert_eq!(escape("bidi\u{202e}gpj.exe"), "bidi\\u{202e}gpj.exe");
        assert_eq!(escape_keep_newlines("a\nb\x1b"), "a\nb\\x1b");
        assert!(needs_escape("x\u{2066}"));
    }

    #[test]
    fn escaped_text_has_no_control_characters() {
        let all: String = (0u32..0x3000).filter_map(char::from_u32).collect();
        assert!(!needs_escape(&escape(&all)));
    }
}
