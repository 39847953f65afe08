//! The target's stdout and stderr, captured into one bounded buffer so they can never mix with
//! the protocol on scry's own stdout. When the buffer is full the oldest bytes go: the most
//! recent output is what explains the current stop.

use std::collections::VecDeque;
use std::io::Read;
use std::os::fd::OwnedFd;
use std::sync::{Arc, Mutex};

pub struct Capture {
    bytes: VecDeque<u8>,
    limit: usize,
    dropped: u64,
}

impl Capture {
    pub fn new(limit: usize) -> Self {
        Capture {
            bytes: VecDeque::new(),
            limit: limit.max(1),
            dropped: 0,
        }
    }

    pub fn push(&mut self, data: &[u8]) {
        self.bytes.extend(data);
        let excess = self.bytes.len().saturating_sub(self.limit);
        if excess > 0 {
            self.bytes.drain(..excess);
            self.dropped += excess as u64;
        }
    }

    pub fn unread(&self) -> usize {
        self.bytes.len()
    }

    /// Everything captured since the last take, as text (invalid UTF-8 shown as U+FFFD), with a
    /// first line saying how much was dropped if the buffer overflowed.
    pub fn take(&mut self) -> String {
        let bytes: Vec<u8> = self.bytes.drain(..).collect();
        let mut text = String::new();
        if self.dropped > 0 {
            text.push_str(&format!(
                "[scry: {} earlier bytes of target output were dropped]\n",
                self.dropped
            ));
            self.dropped = 0;
        }
        text.push_str(&String::from_utf8_lossy(&bytes));
        text
    }
}

pub type SharedCapture = Arc<Mutex<Capture>>;

/// Drains `fd` into `capture` on a helper thread until the write end closes.
pub fn pump(fd: OwnedFd, capture: SharedCapture) {
    std::thread::spawn(move || {
        crate::os::timer::block_alarm_in_this_thread();
        let mut file = std::fs::File::from(fd);
        let mut buf = [0u8; 8192];
        loop {
            match file.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    if let Ok(mut c) = capture.lock() {
                        c.push(&buf[..n]);
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_tail_and_says_so() {
        let mut c = Capture::new(4);
        c.push(b"abcdef");
        assert_eq!(c.unread(), 4);
        assert_eq!(
            c.take(),
            "[scry: 2 earlier bytes of target output were dropped]\ncdef"
        );
        assert_eq!(c.take(), "");
        c.push(b"\xffok");
        assert_eq!(c.take(), "\u{fffd}ok");
    }
}
