//! The text of a chunk's response while it is made, bounded.

/// The text of one response while a chunk runs. Past `hard_cap` bytes nothing more is kept,
/// only counted: a `print` loop cannot exhaust scry's memory.
#[derive(Default)]
pub(super) struct Response {
    pub text: String,
    pub dropped: u64,
    /// Where the chunk's value (its completion, printed last) begins in `text`.
    pub value_at: Option<usize>,
}

pub(super) const RESPONSE_HARD_CAP: usize = 8 * 1024 * 1024;

impl Response {
    pub(super) fn push_line(&mut self, line: &str) {
        let room = RESPONSE_HARD_CAP.saturating_sub(self.text.len());
        if line.len() < room {
            self.text.push_str(line);
            self.text.push('\n');
        } else {
            let mut cut = room;
            while cut > 0 && !line.is_char_boundary(cut) {
                cut -= 1;
            }
            self.text.push_str(&line[..cut]);
            self.dropped += (line.len() - cut + 1) as u64;
        }
    }
}
