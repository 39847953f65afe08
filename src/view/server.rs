//! The HTTP server: an accept thread and one thread per connection, on std::net. Every path
//! starts with the session's token; there are four of them under it (the page, its script,
//! its style sheet, the event stream), all GET, none reading a body or touching the target.

use std::collections::VecDeque;
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::board::{Cursor, Shared, MIN_INTERVAL};
use super::events;
use super::http::{self, BadRequest};

const PAGE: &str = include_str!("page/index.html");
const SCRIPT: &str = include_str!("page/view.js");
const STYLE: &str = include_str!("page/view.css");

/// Connections served at once; more are told to come back later.
const MAX_CONNECTIONS: usize = 32;
/// Connections that have not yet shown the token, at most: beyond that the oldest of them
/// is closed for the new one, so connections opened and left silent (without the token,
/// nobody's page) can never keep the real page out.
const MAX_UNPROVEN: usize = 8;
/// How long a client may take to send its whole request head.
const HEAD_DEADLINE: Duration = Duration::from_secs(2);
/// A page that stops reading is dropped after this long (its thread, never the engine, waits).
const WRITE_TIMEOUT: Duration = Duration::from_secs(10);
/// A comment line this often keeps proxies from closing an idle stream and finds dead peers.
const KEEPALIVE: Duration = Duration::from_secs(15);

pub(super) struct Server {
    pub listener: TcpListener,
    pub token: String,
    pub shared: Arc<Shared>,
}

/// A connection counted while it lives.
struct Slot(Arc<AtomicUsize>);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// The connections that have not shown the token yet, oldest first: a handle to close each.
#[derive(Default)]
struct Unproven {
    next: u64,
    waiting: VecDeque<(u64, TcpStream)>,
}

type SharedUnproven = Arc<Mutex<Unproven>>;

impl Unproven {
    /// Books connection `stream`; closes the oldest unproven one when there are too many, or
    /// when every slot is taken (`full`). Returns its number, or `None` when nothing could be
    /// made room for.
    fn admit(&mut self, stream: &TcpStream, full: bool) -> Option<u64> {
        if self.waiting.len() >= MAX_UNPROVEN || full {
            let (_, oldest) = self.waiting.pop_front()?;
            let _ = oldest.shutdown(Shutdown::Both);
        }
        let handle = stream.try_clone().ok()?;
        self.next += 1;
        self.waiting.push_back((self.next, handle));
        Some(self.next)
    }

    fn proven(&mut self, id: u64) {
        self.waiting.retain(|(n, _)| *n != id);
    }
}

/// The request head must come whole before a deadline, however slowly it trickles.
struct Deadlined<'a> {
    stream: &'a mut TcpStream,
    deadline: Instant,
}

impl Read for Deadlined<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let left = self.deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(std::io::ErrorKind::TimedOut.into());
        }
        self.stream.set_read_timeout(Some(left))?;
        self.stream.read(buf)
    }
}

impl Server {
    pub(super) fn run(self) {
        crate::os::timer::block_signals_in_helper_thread();
        let token: Arc<str> = self.token.into();
        let active = Arc::new(AtomicUsize::new(0));
        let unproven: SharedUnproven = Arc::default();
        for stream in self.listener.incoming() {
            if self.shared.is_closed() {
                break;
            }
            let mut stream = match stream {
                Ok(s) => s,
                Err(_) => {
                    // Out of descriptors and the like: do not spin.
                    std::thread::sleep(Duration::from_millis(50));
                    continue;
                }
            };
            let full = active.load(Ordering::Relaxed) >= MAX_CONNECTIONS;
            let admitted = unproven
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .admit(&stream, full);
            let Some(id) = admitted else {
                let _ = stream.set_write_timeout(Some(Duration::from_secs(1)));
                let _ = http::error(&mut stream, 503, "too many connections");
                continue;
            };
            active.fetch_add(1, Ordering::Relaxed);
            let slot = Slot(active.clone());
            let (token, shared, unproven) = (token.clone(), self.shared.clone(), unproven.clone());
            let spawned = std::thread::Builder::new()
                .name("scry-view".into())
                .spawn(move || {
                    crate::os::timer::block_signals_in_helper_thread();
                    let _slot = slot;
                    serve(stream, &token, &shared, &|| {
                        unproven
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .proven(id)
                    });
                    unproven
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .proven(id);
                });
            if spawned.is_err() {
                std::thread::sleep(Duration::from_millis(50));
            }
        }
    }
}

/// `proven`: called once the request has shown the token.
fn serve(mut stream: TcpStream, token: &str, shared: &Arc<Shared>, proven: &dyn Fn()) {
    let _ = stream.set_write_timeout(Some(WRITE_TIMEOUT));
    let _ = stream.set_nodelay(true);
    let head = http::read_request(&mut Deadlined {
        stream: &mut stream,
        deadline: Instant::now() + HEAD_DEADLINE,
    });
    let request = match head {
        Ok(r) => r,
        Err(BadRequest::Gone) => return,
        Err(BadRequest::Refused(status, why)) => {
            let _ = http::error(&mut stream, status, why);
            return;
        }
    };
    let path = request.path.strip_prefix('/').unwrap_or(&request.path);
    let (given, rest) = match path.split_once('/') {
        Some((given, rest)) => (given, Some(rest)),
        None => (path, None),
    };
    if !http::same_secret(given, token) {
        let _ = http::error(
            &mut stream,
            403,
            "this page needs the URL scry printed, with its token",
        );
        return;
    }
    proven();
    let head_only = request.method == "HEAD";
    if request.method != "GET" && !head_only {
        let _ = http::error(&mut stream, 405, "the view is read-only: GET only");
        return;
    }
    let asset = |stream: &mut TcpStream, kind: &str, body: &str| {
        http::respond(stream, 200, kind, "", body.as_bytes(), head_only)
    };
    let _ = match rest {
        None => http::respond(
            &mut stream,
            302,
            "text/plain",
            &format!("Location: /{token}/\r\n"),
            b"",
            head_only,
        ),
        Some("") | Some("index.html") => asset(&mut stream, "text/html; charset=utf-8", PAGE),
        Some("view.js") => asset(&mut stream, "text/javascript; charset=utf-8", SCRIPT),
        Some("view.css") => asset(&mut stream, "text/css; charset=utf-8", STYLE),
        Some("events") if !head_only => {
            stream_events(&mut stream, shared);
            Ok(())
        }
        Some(_) => http::error(&mut stream, 404, "no such page"),
    };
}

/// Sends the current state, then whatever changes, at most one update per [`MIN_INTERVAL`]
/// (changes in between are coalesced: the page gets the latest state of each thing). Ends
/// when the page goes away, stops reading, or the session ends.
fn stream_events(stream: &mut TcpStream, shared: &Arc<Shared>) {
    let _watching = shared.watch();
    if http::start_event_stream(stream).is_err() {
        return;
    }
    let mut cursor = Cursor::default();
    loop {
        let Some(update) = shared.changes(&mut cursor, KEEPALIVE) else {
            return;
        };
        let sent = Instant::now();
        let text = if update.is_empty() {
            ": keep-alive\n\n".to_string()
        } else {
            events::render(&update)
        };
        if stream
            .write_all(text.as_bytes())
            .and_then(|_| stream.flush())
            .is_err()
        {
            return;
        }
        if update.closed {
            return;
        }
        if let Some(rest) = MIN_INTERVAL.checked_sub(sent.elapsed()) {
            std::thread::sleep(rest);
        }
    }
}
