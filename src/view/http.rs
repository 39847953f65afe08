//! Just enough HTTP/1.1 for a view-only page: read one request head (bounded in size and
//! time, parsed by `httparse`), write one response, close. No bodies are read: nothing a
//! browser sends can carry code or commands.

use std::io::{Read, Write};

/// A request head larger than this is refused.
const MAX_HEAD: usize = 8 * 1024;

#[derive(Debug, PartialEq)]
pub(super) struct Request {
    pub method: String,
    /// The path without the query string.
    pub path: String,
}

#[derive(Debug, PartialEq)]
pub(super) enum BadRequest {
    /// The client closed, timed out or sent nothing usable: no answer is owed.
    Gone,
    /// The head is malformed or too large (status and reason).
    Refused(u16, &'static str),
}

/// Reads a request head from `stream`.
pub(super) fn read_request(stream: &mut impl Read) -> Result<Request, BadRequest> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    loop {
        let n = match stream.read(&mut chunk) {
            Ok(0) | Err(_) => return Err(BadRequest::Gone),
            Ok(n) => n,
        };
        buf.extend_from_slice(&chunk[..n]);
        let mut headers = [httparse::EMPTY_HEADER; 64];
        let mut req = httparse::Request::new(&mut headers);
        match req.parse(&buf) {
            Ok(httparse::Status::Complete(_)) => {
                let method = req.method.unwrap_or("").to_string();
                let target = req.path.unwrap_or("/");
                let path = target.split(['?', '#']).next().unwrap_or("/").to_string();
                return Ok(Request { method, path });
            }
            Ok(httparse::Status::Partial) if buf.len() < MAX_HEAD => {}
            Ok(httparse::Status::Partial) | Err(httparse::Error::TooManyHeaders) => {
                return Err(BadRequest::Refused(431, "request header too large"));
            }
            Err(_) => return Err(BadRequest::Refused(400, "malformed request")),
        }
    }
}

/// Headers every response carries: nothing is cached (the URL holds a secret), nothing is
/// sniffed, nothing leaks in a Referer, and the page runs only its own script.
const COMMON: &str = "Cache-Control: no-store\r\n\
X-Content-Type-Options: nosniff\r\n\
Referrer-Policy: no-referrer\r\n\
X-Frame-Options: DENY\r\n\
Content-Security-Policy: default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; \
img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'\r\n\
Connection: close\r\n";

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        302 => "Found",
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        431 => "Request Header Fields Too Large",
        503 => "Service Unavailable",
        _ => "Error",
    }
}

/// Writes a whole response. `head_only` for HEAD requests.
pub(super) fn respond(
    stream: &mut impl Write,
    status: u16,
    content_type: &str,
    extra: &str,
    body: &[u8],
    head_only: bool,
) -> std::io::Result<()> {
    let head = format!(
        "HTTP/1.1 {status} {}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n{extra}{COMMON}\r\n",
        reason(status),
        body.len()
    );
    stream.write_all(head.as_bytes())?;
    if !head_only {
        stream.write_all(body)?;
    }
    stream.flush()
}

/// A short plain-text error response.
pub(super) fn error(stream: &mut impl Write, status: u16, message: &str) -> std::io::Result<()> {
    let body = format!("{status} {}: {message}\n", reason(status));
    let extra = if status == 405 {
        "Allow: GET, HEAD\r\n"
    } else {
        ""
    };
    respond(
        stream,
        status,
        "text/plain; charset=utf-8",
        extra,
        body.as_bytes(),
        false,
    )
}

/// The head of an event stream (the body follows as events, until either side closes).
pub(super) fn start_event_stream(stream: &mut impl Write) -> std::io::Result<()> {
    let head = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream; charset=utf-8\r\n{COMMON}\r\nretry: 1000\n\n"
    );
    stream.write_all(head.as_bytes())?;
    stream.flush()
}

/// Compares a secret without stopping at the first difference.
pub(super) fn same_secret(given: &str, secret: &str) -> bool {
    let (a, b) = (given.as_bytes(), secret.as_bytes());
    let mut diff = a.len() ^ b.len();
    for (i, byte) in b.iter().enumerate() {
        diff |= usize::from(a.get(i).copied().unwrap_or(0) ^ byte);
    }
    diff == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heads_parse_and_bound() {
        let mut ok: &[u8] = b"GET /abc/events?x=1 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
        assert_eq!(
            read_request(&mut ok),
            Ok(Request {
                method: "GET".into(),
                path: "/abc/events".into()
            })
        );
        let mut garbage: &[u8] = b"\x00\x01\x02 nonsense\r\n\r\n";
        assert_eq!(
            read_request(&mut garbage),
            Err(BadRequest::Refused(400, "malformed request"))
        );
        let big = format!("GET / HTTP/1.1\r\nX: {}\r\n", "a".repeat(MAX_HEAD));
        let mut big = big.as_bytes();
        assert!(matches!(
            read_request(&mut big),
            Err(BadRequest::Refused(431, _))
        ));
        let mut cut: &[u8] = b"GET / HT";
        assert_eq!(read_request(&mut cut), Err(BadRequest::Gone));
        assert!(same_secret("abc", "abc"));
        assert!(!same_secret("abd", "abc"));
        assert!(!same_secret("ab", "abc"));
        assert!(!same_secret("abcd", "abc"));
    }
}
