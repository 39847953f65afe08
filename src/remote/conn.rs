//! One connection to a stub: packets out and replies in over TCP, acknowledgements until
//! no-ack mode is agreed, and a bound on every wait. A stub that closes the connection,
//! stops answering or sends garbage makes the connection broken, with the reason kept for
//! every later call (scry stays usable; the target is lost).

use std::io::{ErrorKind, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use super::packet::{self, Scan};
use crate::os::OsError;

/// How long a stub may take to answer a request that does not run the program.
pub(crate) const REPLY_WAIT: Duration = Duration::from_secs(5);

pub(crate) struct Conn {
    stream: TcpStream,
    /// Bytes received and not yet taken as a packet.
    inbox: Vec<u8>,
    /// Acknowledgements are still exchanged (until `QStartNoAckMode` is accepted).
    acks: bool,
    addr: String,
    /// Why the connection cannot be used any more.
    broken: Option<String>,
}

impl Conn {
    /// Connects to `addr` (`host:port`) within `within`.
    pub(crate) fn connect(addr: &str, within: Duration) -> Result<Conn, OsError> {
        let remote = |why: String| OsError::Remote(format!("cannot connect to {addr}: {why}"));
        let candidates = addr
            .to_socket_addrs()
            .map_err(|e| remote(format!("{e} (expected HOST:PORT)")))?;
        let mut last = None;
        for candidate in candidates {
            match TcpStream::connect_timeout(&candidate, within) {
                Ok(stream) => {
                    // Packets are small and each waits for its answer: no Nagle delay.
                    let _ = stream.set_nodelay(true);
                    return Ok(Conn {
                        stream,
                        inbox: Vec::new(),
                        acks: true,
                        addr: addr.to_string(),
                        broken: None,
                    });
                }
                Err(e) => last = Some(e),
            }
        }
        Err(remote(last.map_or("no address".into(), |e| e.to_string())))
    }

    pub(crate) fn addr(&self) -> &str {
        &self.addr
    }

    /// The stub agreed to `QStartNoAckMode`.
    pub(crate) fn stop_acks(&mut self) {
        self.acks = false;
    }

    /// Marks the connection broken and says why, naming the stub.
    fn fail(&mut self, why: String) -> OsError {
        let text = format!("remote stub at {}: {why}", self.addr);
        self.broken = Some(text.clone());
        let _ = self.stream.shutdown(std::net::Shutdown::Both);
        OsError::Remote(text)
    }

    /// The reason the connection is broken, as an error, if it is.
    pub(crate) fn check(&self) -> Result<(), OsError> {
        match &self.broken {
            Some(why) => Err(OsError::Remote(format!("{why} (the connection is closed)"))),
            None => Ok(()),
        }
    }

    /// Why the connection broke, naming the stub.
    pub(crate) fn broken_reason(&self) -> Option<String> {
        self.broken.clone()
    }

    pub(crate) fn is_broken(&self) -> bool {
        self.broken.is_some()
    }

    fn write_all(&mut self, bytes: &[u8]) -> Result<(), OsError> {
        if let Err(e) = self.stream.write_all(bytes) {
            return Err(self.fail(format!("cannot send: {e}")));
        }
        Ok(())
    }

    /// Sends one packet; with acknowledgements on, resends it on a `-` (three times at most).
    pub(crate) fn send(&mut self, payload: &[u8]) -> Result<(), OsError> {
        self.check()?;
        if crate::os::wait::trace_enabled() {
            eprintln!("scry: remote <- {}", traced(payload));
        }
        let frame = packet::frame(payload);
        for _ in 0..3 {
            self.write_all(&frame)?;
            if !self.acks {
                return Ok(());
            }
            match self.wait_ack(Instant::now() + REPLY_WAIT)? {
                true => return Ok(()),
                false => continue,
            }
        }
        Err(self.fail(format!(
            "refused the packet {} three times",
            preview(payload)
        )))
    }

    /// The interrupt byte: the stub stops the program and answers with a stop reply.
    pub(crate) fn interrupt(&mut self) -> Result<(), OsError> {
        self.check()?;
        self.write_all(&[0x03])
    }

    /// Reads more bytes, waiting until `until`; false at the deadline.
    fn fill(&mut self, until: Instant) -> Result<bool, OsError> {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(false);
        }
        let _ = self.stream.set_read_timeout(Some(left));
        let mut chunk = [0u8; 64 * 1024];
        match self.stream.read(&mut chunk) {
            Ok(0) => Err(self.fail("closed the connection".into())),
            Ok(n) => {
                self.inbox.extend_from_slice(&chunk[..n]);
                Ok(true)
            }
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => Ok(false),
            Err(e) if e.kind() == ErrorKind::Interrupted => Ok(true),
            Err(e) => Err(self.fail(format!("cannot receive: {e}"))),
        }
    }

    /// Waits for the acknowledgement of a packet just sent: true for `+`, false for `-`.
    fn wait_ack(&mut self, until: Instant) -> Result<bool, OsError> {
        loop {
            if let Some(&b) = self.inbox.first() {
                match b {
                    b'+' => {
                        self.inbox.remove(0);
                        return Ok(true);
                    }
                    b'-' => {
                        self.inbox.remove(0);
                        return Ok(false);
                    }
                    // A reply before the `+` (some stubs skip it): it waits in the inbox.
                    b'$' => return Ok(true),
                    _ => {
                        self.inbox.remove(0);
                        continue;
                    }
                }
            }
            if !self.fill(until)? {
                return Err(self.fail(format!(
                    "did not acknowledge a packet within {} s",
                    REPLY_WAIT.as_secs()
                )));
            }
        }
    }

    /// The next packet, or `None` if none came by `until`.
    pub(crate) fn wait_packet(&mut self, until: Instant) -> Result<Option<Vec<u8>>, OsError> {
        self.check()?;
        loop {
            match packet::scan(&self.inbox) {
                Scan::Packet {
                    payload,
                    sum_ok,
                    used,
                } => {
                    self.inbox.drain(..used);
                    if self.acks {
                        if !sum_ok {
                            self.write_all(b"-")?;
                            continue;
                        }
                        self.write_all(b"+")?;
                    }
                    if crate::os::wait::trace_enabled() {
                        eprintln!("scry: remote -> {}", traced(&payload));
                    }
                    return Ok(Some(payload));
                }
                Scan::Skip { used, .. } => {
                    self.inbox.drain(..used);
                    continue;
                }
                Scan::TooLong => {
                    return Err(self.fail(format!(
                        "sent a packet longer than {} MiB",
                        packet::MAX_REPLY >> 20
                    )))
                }
                Scan::Incomplete => {}
            }
            if !self.fill(until)? {
                return Ok(None);
            }
        }
    }

    /// Sends a request and returns its reply (console output the stub sends first is
    /// dropped); a stub that does not answer within [`REPLY_WAIT`] breaks the connection.
    pub(crate) fn request(&mut self, payload: &[u8]) -> Result<Vec<u8>, OsError> {
        self.send(payload)?;
        self.answer(payload)
    }

    /// Whether packets may be sent before the answers to the earlier ones (no-ack mode: the
    /// stub reads and answers them in order). With acknowledgements a sender waits for
    /// each `+`, and an answer arriving meanwhile would be taken for garbage.
    pub(crate) fn pipelines(&self) -> bool {
        !self.acks
    }

    /// The answer to `payload`, sent already (see [`Self::request`]).
    pub(crate) fn answer(&mut self, payload: &[u8]) -> Result<Vec<u8>, OsError> {
        let until = Instant::now() + REPLY_WAIT;
        loop {
            match self.wait_packet(until)? {
                Some(reply) if is_console_output(&reply) => continue,
                // A stub that sends a stop in answer to a request not answered with one
                // reports threads' stops on its own, and every answer after it is in doubt:
                // said at once, not waited out.
                Some(reply) if !answered_by_a_stop(payload) && is_stop_reply(&reply) => {
                    return Err(self.fail(format!(
                        "sent a stop reply ({}) in answer to {}: it reports threads' stops on its own (as QEMU's user-mode stub does with several threads), which scry cannot follow",
                        preview(&reply),
                        preview(payload)
                    )))
                }
                Some(reply) => return Ok(reply),
                None => {
                    return Err(self.fail(format!(
                        "no answer to {} within {} s",
                        preview(payload),
                        REPLY_WAIT.as_secs()
                    )))
                }
            }
        }
    }

    /// A request whose reply must be `OK`; an error reply is the stub's refusal, named.
    pub(crate) fn request_ok(&mut self, payload: &[u8]) -> Result<(), OsError> {
        let reply = self.request(payload)?;
        if reply == b"OK" {
            return Ok(());
        }
        Err(refusal(payload, &reply))
    }
}

/// A stub's answer to a request it did not carry out, as an error naming the packet.
pub(crate) fn refusal(payload: &[u8], reply: &[u8]) -> OsError {
    let what = if reply.is_empty() {
        "does not support it".to_string()
    } else {
        format!("answered {}", preview(reply))
    };
    OsError::Remote(format!("the stub refused {}: {what}", preview(payload)))
}

/// An `O` packet: console output in hex (never `OK`, whose `K` is no hex digit).
/// A packet as `SCRY_TRACE=1` logs it: its first 120 bytes.
fn traced(payload: &[u8]) -> String {
    String::from_utf8_lossy(&payload[..payload.len().min(120)]).into_owned()
}

/// Whether a stop reply is `payload`'s answer in all-stop mode: `?`, a run (`vRun`) or an
/// attach (`vAttach`). Resumes are waited for elsewhere (`run_packet`).
fn answered_by_a_stop(payload: &[u8]) -> bool {
    payload == b"?" || payload.starts_with(b"vRun;") || payload.starts_with(b"vAttach;")
}

/// `T`/`S` and a signal's two hex digits: a stop reply, never another request's answer
/// (those are hex data, `OK`, `E..`, `l`/`m` chunks, `F..`, `QC`, feature lists).
fn is_stop_reply(reply: &[u8]) -> bool {
    reply.len() >= 3
        && matches!(reply[0], b'T' | b'S')
        && reply[1..3].iter().all(u8::is_ascii_hexdigit)
}

fn is_console_output(reply: &[u8]) -> bool {
    reply.len() > 1
        && reply[0] == b'O'
        && reply.len() % 2 == 1
        && reply[1..].iter().all(u8::is_ascii_hexdigit)
}

/// A packet's first bytes for a message (a packet may carry binary data or be huge).
pub(crate) fn preview(payload: &[u8]) -> String {
    let end = payload
        .iter()
        .position(|&b| b == b':' || b == b',' || b == b';' || !b.is_ascii_graphic())
        .unwrap_or(payload.len())
        .min(24);
    let head = String::from_utf8_lossy(&payload[..end.max(1).min(payload.len())]);
    format!("'{head}'")
}
