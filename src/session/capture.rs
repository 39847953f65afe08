//! The target's stdout and stderr, captured into one bounded buffer so they can never mix with
//! the protocol on scry's own stdout. When the buffer is full the oldest bytes go: the most
//! recent output is what explains the current stop.

use std::collections::VecDeque;
use std::fs::File;
use std::io::Read;
use std::os::fd::OwnedFd;
use std::sync::{Arc, Mutex, Weak};

use crate::os::pipe::{is_hung_up, pending_bytes, readable_within, wait_readable};

/// How long a stop waits for a terminal's output still on its way (see `Pump::settle`).
const TERMINAL_LAG_MS: i32 = 5;

/// Where else the output goes as it arrives (the live view).
pub(crate) type Tee = Arc<dyn Fn(&[u8]) + Send + Sync>;

pub(crate) struct Capture {
    bytes: VecDeque<u8>,
    limit: usize,
    dropped: u64,
    tee: Option<Tee>,
}

impl Capture {
    pub(crate) fn new(limit: usize) -> Self {
        Capture {
            bytes: VecDeque::new(),
            limit: limit.max(1),
            dropped: 0,
            tee: None,
        }
    }

    /// Empty again for a new process (the tee stays).
    pub(crate) fn restart(&mut self, limit: usize) {
        let tee = self.tee.take();
        *self = Capture::new(limit);
        self.tee = tee;
    }

    pub(crate) fn set_tee(&mut self, tee: Option<Tee>) {
        self.tee = tee;
    }

    pub(crate) fn push(&mut self, data: &[u8]) {
        if let Some(tee) = &self.tee {
            tee(data);
        }
        self.bytes.extend(data);
        let excess = self.bytes.len().saturating_sub(self.limit);
        if excess > 0 {
            self.bytes.drain(..excess);
            self.dropped += excess as u64;
        }
    }

    pub(crate) fn unread(&self) -> usize {
        self.bytes.len()
    }

    /// Everything captured since the last take, as text (invalid UTF-8 shown as `\xNN`, as
    /// `memory(a).str()` shows it), with a
    /// first line saying how much was dropped if the buffer overflowed.
    pub(crate) fn take(&mut self) -> String {
        let bytes: Vec<u8> = self.bytes.drain(..).collect();
        let mut text = String::new();
        if self.dropped > 0 {
            text.push_str(&format!(
                "[scry: {} earlier bytes of target output were dropped]\n",
                self.dropped
            ));
            self.dropped = 0;
        }
        text.push_str(&escape_invalid_utf8(&bytes));
        text
    }
}

/// Target strings are bytes: valid UTF-8 passes through, anything else shows as `\xNN`.
pub(crate) fn escape_invalid_utf8(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    let mut rest = bytes;
    loop {
        match std::str::from_utf8(rest) {
            Ok(s) => {
                out.push_str(s);
                return out;
            }
            Err(e) => {
                let (good, bad) = rest.split_at(e.valid_up_to());
                out.push_str(std::str::from_utf8(good).unwrap_or_default());
                let n = e.error_len().unwrap_or(bad.len()).max(1);
                for b in &bad[..n] {
                    out.push_str(&format!("\\x{b:02x}"));
                }
                rest = &bad[n..];
            }
        }
    }
}

pub(crate) type SharedCapture = Arc<Mutex<Capture>>;

/// A pipe being drained on a helper thread (so a chatty target never blocks on a full pipe),
/// and what it takes to know the drain has caught up.
pub(crate) struct Pump {
    file: Arc<File>,
    /// Kept open for as long as the pump (a terminal's other end; see `os::pty`).
    _hold: Option<OwnedFd>,
    /// Held by the helper thread from taking bytes out of the pipe until they are in the
    /// buffer: once `settle` holds it and the pipe is empty, every byte written is captured.
    draining: Arc<Mutex<()>>,
}

impl Pump {
    /// Drains a program's terminal (`master`, with scry's `hold` on the other end) into
    /// `capture`, as its stdout.
    pub(crate) fn start_terminal(master: OwnedFd, hold: OwnedFd, capture: SharedCapture) -> Pump {
        let mut pump = Pump::start(master, capture);
        pump._hold = Some(hold);
        pump
    }

    /// Drains `fd` into `capture` until the write end closes.
    pub(crate) fn start(fd: OwnedFd, capture: SharedCapture) -> Pump {
        let file = Arc::new(File::from(fd));
        let draining = Arc::new(Mutex::new(()));
        let (reader, lock) = (file.clone(), draining.clone());
        std::thread::spawn(move || {
            crate::os::timer::block_signals_in_helper_thread();
            let mut buf = [0u8; 8192];
            loop {
                // Wait without consuming, so no byte is ever out of the pipe and not yet in
                // the buffer while the lock is free; and never block in read() holding the
                // lock (settle may have taken the bytes poll saw).
                wait_readable(&*reader);
                let held = lock.lock().unwrap_or_else(|e| e.into_inner());
                let pending = pending_bytes(&*reader);
                if pending == 0 {
                    drop(held);
                    if is_hung_up(&*reader) {
                        break;
                    }
                    continue;
                }
                let want = pending.min(buf.len());
                match (&*reader).read(&mut buf[..want]) {
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
        Pump {
            file,
            _hold: None,
            draining,
        }
    }

    /// Moves every byte written to the pipe so far into the buffer, so a stop never reports
    /// less output than the program wrote before it. It reads the pipe itself under the
    /// lock instead of waiting for the helper thread, which a loaded machine may not schedule
    /// for a long time. Bounded: a released child could write forever.
    pub(crate) fn settle(&self, capture: &SharedCapture) {
        let _held = self.draining.lock().unwrap_or_else(|e| e.into_inner());
        let mut buf = [0u8; 8192];
        for round in 0..128 {
            let mut pending = pending_bytes(&*self.file);
            // A terminal's output reaches its other end a moment after the write (the kernel
            // moves it on a worker): what the program wrote just before the stop is given
            // that moment to arrive.
            if pending == 0
                && round == 0
                && self._hold.is_some()
                && readable_within(&*self.file, TERMINAL_LAG_MS)
            {
                pending = pending_bytes(&*self.file);
            }
            if pending == 0 {
                return;
            }
            let want = pending.min(buf.len());
            match (&*self.file).read(&mut buf[..want]) {
                Ok(n) if n > 0 => {
                    if let Ok(mut c) = capture.lock() {
                        c.push(&buf[..n]);
                    }
                }
                _ => return,
            }
        }
    }
}

/// The program's output as the session keeps it: the buffer `output()` drains and the pumps
/// that fill it from the program's pipe or terminal. One owner, so starting a process, a
/// stop's count of unread bytes and `output()` cannot disagree about which buffer is live.
pub(crate) struct ProgramOutput {
    capture: SharedCapture,
    pumps: Vec<Pump>,
    /// Every pipe and terminal pumped in this session: an earlier process's pump runs on
    /// until its writers have closed it (a detached program writes on).
    pumped: Vec<Weak<File>>,
}

impl ProgramOutput {
    pub(crate) fn new(limit: usize) -> Self {
        ProgramOutput {
            capture: Arc::new(Mutex::new(Capture::new(limit))),
            pumps: Vec::new(),
            pumped: Vec::new(),
        }
    }

    /// Sends the output also to `tee` as it arrives (the live view).
    pub(crate) fn set_tee(&self, tee: Option<Tee>) {
        if let Ok(mut c) = self.capture.lock() {
            c.set_tee(tee);
        }
    }

    /// A new process: the buffer starts over, holding at most `limit` bytes, and the last
    /// process's pumps are let go.
    pub(crate) fn restart(&mut self, limit: usize) {
        self.capture.lock().expect("capture lock").restart(limit);
        self.pumps.clear();
    }

    /// Starts pumping the program's output pipe.
    pub(crate) fn pump_pipe(&mut self, fd: OwnedFd) {
        self.add(Pump::start(fd, self.capture.clone()));
    }

    fn add(&mut self, pump: Pump) {
        self.pumped.retain(|p| p.strong_count() > 0);
        self.pumped.push(Arc::downgrade(&pump.file));
        self.pumps.push(pump);
    }

    /// The end of the session: every pipe or terminal a process still writes to (a
    /// detached program, a daemon it started) goes to the keeper, which reads it from now
    /// on. Without a reader, the program's next write would kill it with SIGPIPE once scry
    /// exits (a terminal would hang up). What they write from now on is dropped: nobody is
    /// left to read it. Nothing is captured after this.
    pub(crate) fn leave_to_keeper(&mut self) {
        // A terminal's own hold on its other end goes first, so a program gone is a hang-up.
        self.pumps.clear();
        for file in std::mem::take(&mut self.pumped) {
            let Some(file) = file.upgrade() else {
                continue;
            };
            if is_hung_up(&*file) {
                continue;
            }
            if let Ok(fd) = file.try_clone() {
                let _ = crate::os::keeper::keep_reading(fd.into());
            }
        }
    }

    /// Starts pumping the program's terminal (`hold` keeps its slave side open).
    pub(crate) fn pump_terminal(&mut self, master: OwnedFd, hold: OwnedFd) {
        self.add(Pump::start_terminal(master, hold, self.capture.clone()));
    }

    /// Lets the pumps catch up with what the stopped program has written.
    pub(crate) fn settle(&self) {
        for pump in &self.pumps {
            pump.settle(&self.capture);
        }
    }

    /// What was not read yet, read now.
    pub(crate) fn take(&self) -> String {
        self.capture
            .lock()
            .map(|mut c| c.take())
            .unwrap_or_default()
    }

    /// Bytes waiting to be read.
    pub(crate) fn unread(&self) -> usize {
        self.capture.lock().map(|c| c.unread()).unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalid_utf8_is_escaped() {
        assert_eq!(escape_invalid_utf8(b"ok\xff\xfeend"), "ok\\xff\\xfeend");
        assert_eq!(escape_invalid_utf8("é".as_bytes()), "é");
    }

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
        assert_eq!(c.take(), "\\xffok");
    }
}
