//! The session socket's wire format, one request per connection:
//!
//! ```text
//! client:  VERB [" alive"] "\n" PAYLOAD   then shuts down its write half
//!          eval  PAYLOAD is the chunk (JavaScript or a :command), any bytes
//!          info  no payload: one tab-separated line about the session
//!          stop  no payload: end the session
//! daemon:  [ALIVE] BODY STATUS         then closes
//!          BODY is empty or ends with "\n"; STATUS is the line ";; ok" or ";; error"
//!          ALIVE (only when asked for): the daemon's pid in decimal, then one "." per second
//!          while the request waits or runs, then "\n"
//! ```
//!
//! A connection closed without a status line means the session ended while answering.
//! `alive` lets a client tell a long chunk (dots keep coming) from a daemon that is frozen
//! (stopped by a signal: nothing comes).

use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verb {
    Eval,
    Info,
    Stop,
}

impl Verb {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Verb::Eval => "eval",
            Verb::Info => "info",
            Verb::Stop => "stop",
        }
    }
}

impl fmt::Display for Verb {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The bytes of a request; `alive` asks for the ALIVE prefix.
pub(crate) fn request(verb: Verb, payload: &str, alive: bool) -> Vec<u8> {
    let flag = if alive { " alive" } else { "" };
    format!("{verb}{flag}\n{payload}").into_bytes()
}

/// A request's verb, whether it asked for the ALIVE prefix, and its payload.
pub(crate) fn parse_request(bytes: &[u8]) -> Result<(Verb, bool, String), String> {
    let text = String::from_utf8_lossy(bytes);
    let (head, payload) = text.split_once('\n').unwrap_or((&text, ""));
    let (verb, alive) = match head.strip_suffix(" alive") {
        Some(verb) => (verb, true),
        None => (head, false),
    };
    let verb = match verb {
        "eval" => Verb::Eval,
        "info" => Verb::Info,
        "stop" => Verb::Stop,
        other => return Err(format!("unknown request '{other}': eval, info or stop")),
    };
    Ok((verb, alive, payload.to_string()))
}

/// How far a reply with the ALIVE prefix got: the daemon's pid once known, and whether the
/// prefix is complete (then the rest is the reply proper).
pub(crate) fn parse_alive(bytes: &[u8]) -> (Option<u32>, Option<&[u8]>) {
    let digits = bytes.iter().take_while(|b| b.is_ascii_digit()).count();
    let pid = std::str::from_utf8(&bytes[..digits])
        .ok()
        .and_then(|d| d.parse().ok())
        .filter(|_| digits < bytes.len());
    let rest = &bytes[digits..];
    let dots = rest.iter().take_while(|b| **b == b'.').count();
    match rest.get(dots) {
        Some(b'\n') => (pid, Some(&rest[dots + 1..])),
        _ => (pid, None),
    }
}

/// A reply: the body, then the status line.
pub(crate) fn reply(body: &str, ok: bool) -> String {
    let mut text = body.to_string();
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(if ok { ";; ok\n" } else { ";; error\n" });
    text
}

/// A reply's body and status; `None` when the status line is missing (the session ended
/// before it answered).
pub(crate) fn parse_reply(bytes: &[u8]) -> Option<(String, bool)> {
    let text = String::from_utf8_lossy(bytes);
    for (status, ok) in [(";; ok\n", true), (";; error\n", false)] {
        if let Some(body) = text.strip_suffix(status) {
            if body.is_empty() || body.ends_with('\n') {
                return Some((body.to_string(), ok));
            }
        }
    }
    None
}

/// The chunk stdin mode would read from `text`: every line with its line ending removed
/// (`\r` too) and `\n` put back, the last line included.
pub(crate) fn normalize_chunk(text: &str) -> String {
    let mut lines: Vec<&str> = text.split('\n').collect();
    if text.ends_with('\n') || text.is_empty() {
        lines.pop();
    }
    let mut chunk = String::with_capacity(text.len() + 1);
    for line in lines {
        chunk.push_str(line.trim_end_matches('\r'));
        chunk.push('\n');
    }
    chunk
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::repl::framing::ChunkReader;

    #[test]
    fn chunks_match_the_pipe_reader() {
        for text in ["", "\n", "a", "a\n", "a\r\nb", "x\n\n", "1\r\r\n2\n"] {
            // What a harness writes for this chunk: the text, a newline if it lacks one, `;;`.
            let framed = if text.is_empty() || text.ends_with('\n') {
                format!("{text};;\n")
            } else {
                format!("{text}\n;;\n")
            };
            let mut reader = ChunkReader::new(framed.as_bytes(), ";;");
            assert_eq!(reader.next_chunk(), Some(normalize_chunk(text)), "{text:?}");
        }
    }

    #[test]
    fn replies_round_trip() {
        for (body, ok) in [("", true), ("x\n", false), ("a\nb\n", true)] {
            assert_eq!(
                parse_reply(reply(body, ok).as_bytes()),
                Some((body.to_string(), ok))
            );
        }
        assert_eq!(parse_reply(b"partial output"), None);
        assert_eq!(parse_reply(b"x;; ok\n"), None);
    }

    #[test]
    fn requests_round_trip() {
        let bytes = request(Verb::Eval, "cont()\n", false);
        assert_eq!(
            parse_request(&bytes).unwrap(),
            (Verb::Eval, false, "cont()\n".into())
        );
        let bytes = request(Verb::Stop, "", true);
        assert_eq!(
            parse_request(&bytes).unwrap(),
            (Verb::Stop, true, "".into())
        );
        assert_eq!(parse_request(b"info").unwrap().0, Verb::Info);
        assert!(parse_request(b"bogus\n").is_err());
    }

    #[test]
    fn alive_prefixes() {
        assert_eq!(parse_alive(b""), (None, None));
        assert_eq!(parse_alive(b"123"), (None, None));
        assert_eq!(parse_alive(b"123.."), (Some(123), None));
        assert_eq!(
            parse_alive(b"123..\nbody;; ok\n"),
            (Some(123), Some(&b"body;; ok\n"[..]))
        );
        assert_eq!(parse_alive(b"7\n"), (Some(7), Some(&b""[..])));
    }
}
