//! Response size caps: a response longer than the limit is cut at a line boundary when one is
//! near, and the rest is kept for `:more` instead of being lost.

/// Splits `text` into what is shown now and what is kept for later.
pub(super) fn split(text: &str, limit: usize) -> (&str, &str) {
    if text.len() <= limit {
        return (text, "");
    }
    let mut cut = limit;
    while cut > 0 && !text.is_char_boundary(cut) {
        cut -= 1;
    }
    // Prefer ending on a whole line if that loses less than a quarter of the budget.
    if let Some(nl) = text[..cut].rfind('\n') {
        if nl + 1 >= cut - cut / 4 {
            cut = nl + 1;
        }
    }
    text.split_at(cut)
}

/// A failed chunk's body split into what it printed and the error that ended it (from its
/// last line starting `error: ` to the end), when that error is at most `max` bytes.
pub(super) fn error_tail(body: &str, max: usize) -> (&str, &str) {
    let at = if body.starts_with("error: ") {
        Some(0)
    } else {
        body.rfind("\nerror: ").map(|i| i + 1)
    };
    match at {
        Some(i) if body.len() - i <= max => body.split_at(i),
        _ => (body, ""),
    }
}

/// An ok chunk's body split into what it printed and its value (printed last, from
/// `value_at`), when the value is at most `max` bytes and something comes before it.
pub(super) fn value_tail(body: &str, value_at: Option<usize>, max: usize) -> (&str, &str) {
    match value_at {
        Some(i)
            if i > 0 && i <= body.len() && body.is_char_boundary(i) && body.len() - i <= max =>
        {
            body.split_at(i)
        }
        _ => (body, ""),
    }
}

pub(super) fn cut_note(shown: usize, rest: usize, marker: &str) -> String {
    let _ = marker;
    format!("[scry: response cut after {shown} bytes; {rest} more bytes: send :more to read them]")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_error_is_the_tail() {
        assert_eq!(
            error_tail("a\nb\nerror: boom\n    at x\n", 100),
            ("a\nb\n", "error: boom\n    at x\n")
        );
        assert_eq!(error_tail("error: x\n", 100), ("", "error: x\n"));
        assert_eq!(error_tail("no error here\n", 100), ("no error here\n", ""));
        assert_eq!(error_tail("a\nerror: long\n", 3), ("a\nerror: long\n", ""));
    }

    #[test]
    fn the_value_is_the_tail() {
        assert_eq!(
            value_tail("a\nb\nstop\n", Some(4), 100),
            ("a\nb\n", "stop\n")
        );
        assert_eq!(value_tail("stop\n", Some(0), 100), ("stop\n", ""));
        assert_eq!(value_tail("a\nlong\n", Some(2), 3), ("a\nlong\n", ""));
        assert_eq!(value_tail("a\n", None, 100), ("a\n", ""));
    }

    #[test]
    fn cuts_on_lines_and_chars() {
        assert_eq!(split("short", 10), ("short", ""));
        assert_eq!(split("aaaa\nbbbb\ncccc\n", 12), ("aaaa\nbbbb\n", "cccc\n"));
        assert_eq!(split("éé", 3), ("é", "é"));
        assert_eq!(split("abcdefgh", 4), ("abcd", "efgh"));
    }
}
