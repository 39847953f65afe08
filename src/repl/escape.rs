//! What a response may not contain: a line a harness would take for the end of the response,
//! and (on a terminal) control sequences from the target that would drive the terminal.
//!
//! **Status lines.** A harness reads until a line that starts with the marker (`;; `), so a
//! line of the body that starts with the marker (the target printed `;; ok`, a thread named
//! itself so, a script printed it) would end the response early and shift every later answer.
//! Such a line is sent with a backslash in front: `\;; ok`. A line that already starts with
//! backslashes and then the marker gets one more, so the escaping can be undone exactly (drop
//! one backslash from every line matching `^\\+MARKER`). Blanks (space, tab, `\r`) between
//! the line's start and the marker count as nothing: a client that trims lines would take
//! ` ;; ok` for a status line too, so it is sent as `\ ;; ok` (undone by the same rule with
//! blanks allowed before the marker).
//!
//! **Terminals.** Target bytes could carry escape sequences (retitle the window, move the
//! cursor, rewrite what was printed). At a terminal every C0 control but tab and newline, DEL,
//! and the C1 controls (U+0080..U+009F, which some terminals also obey) are shown as `\xNN`
//! (`\u{NN}` for C1); pipes get the bytes as they are.

/// `body` with every line that starts with `marker` (after any backslashes) escaped.
pub(super) fn guard_status_lines(body: &str, marker: &str) -> String {
    if !body.contains(marker) {
        return body.to_string();
    }
    let mut out = String::with_capacity(body.len() + 16);
    for line in body.split_inclusive('\n') {
        // Blanks before the marker too: a client that trims lines would see it start one.
        if line
            .trim_start_matches('\\')
            .trim_start_matches([' ', '\t', '\r'])
            .starts_with(marker)
        {
            out.push('\\');
        }
        out.push_str(line);
    }
    out
}

/// `text` with terminal control characters made visible.
pub(super) fn neutralize_controls(text: &str) -> String {
    let harmless = |c: char| c == '\n' || c == '\t' || !(c.is_control());
    if text.chars().all(harmless) {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            c if harmless(c) => out.push(c),
            c if (c as u32) < 0x80 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blanks_before_the_marker_do_not_hide_a_status_line() {
        let body = " ;; ok\n\t;; error\n\r;; ok\n  x ;;\n";
        let guarded = guard_status_lines(body, ";;");
        assert_eq!(guarded, "\\ ;; ok\n\\\t;; error\n\\\r;; ok\n  x ;;\n");
        assert!(guarded.lines().all(|l| !l.trim_start().starts_with(";;")));
    }

    #[test]
    fn forged_status_lines_are_escaped_reversibly() {
        let body = "a\n;; ok\n;;\n\\;; error\n x ;; ok\n";
        let guarded = guard_status_lines(body, ";;");
        assert_eq!(guarded, "a\n\\;; ok\n\\;;\n\\\\;; error\n x ;; ok\n");
        // No line of the guarded body starts with the marker.
        assert!(guarded.lines().all(|l| !l.starts_with(";;")));
        // Undoing: one backslash off every line that is backslashes then the marker.
        let undone: String = guarded
            .split_inclusive('\n')
            .map(|l| match l.strip_prefix('\\') {
                Some(rest) if rest.trim_start_matches('\\').starts_with(";;") => rest,
                _ => l,
            })
            .collect();
        assert_eq!(undone, body);
        assert_eq!(guard_status_lines("--m ok", "--m"), "\\--m ok");
        assert_eq!(guard_status_lines("plain\n", ";;"), "plain\n");
    }

    #[test]
    fn terminal_controls_are_shown_not_obeyed() {
        assert_eq!(
            neutralize_controls("\x1b]0;owned\x07red\x1b[31m\tok\n\r\u{9b}2J é"),
            "\\x1b]0;owned\\x07red\\x1b[31m\tok\n\\x0d\\u{9b}2J é"
        );
        assert_eq!(neutralize_controls("plain\ttext\n"), "plain\ttext\n");
    }
}
