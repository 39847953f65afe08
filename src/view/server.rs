//! The HTTP server: an accept thread and one thread per connection, on std::net. Every path
//! starts with the session's token; there are four of them under it (the page, its script,
//! its style sheet, the event stream), all GET, none reading a body or touching the target.

use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::board::{Cursor, Shared, MIN_INTERVAL};
use super::events;
use super::http::{self, BadRequest};

const PAGE: &str = include_str!("page/index.html");
const SCRIPT: &str = include_str!("page/view.js");
const STYLE: &str = include_str!("page/view.css");

/// Connections served at once; more are told to come back later.
const MAX_CONNECTIONS: usize = 32;
/// How long a client may take to send its request head.
const READ_TIMEOUT: Duration = Duration::from_secs(5);
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

impl Server {
    pub fn run(self) {
        crate::os::timer::block_signals_in_helper_thread();
        let token: Arc<str> = self.token.into();
        let active = Arc::new(AtomicUsize::new(0));
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
            if active.fetch_add(1, Ordering::Relaxed) >= MAX_CONNECTIONS {
                active.fetch_sub(1, Ordering::Relaxed);
                let _ = stream.set_write_timeout(Some(Duration::from_secs(1)));
                let _ = http::error(&mut stream, 503, "too many connections");
                continue;
            }
            let slot = Slot(active.clone());
            let (token, shared) = (token.clone(), self.shared.clone());
            let spawned = std::thread::Builder::new()
                .name("scry-view".into())
                .spawn(move || {
                    crate::os::timer::block_signals_in_helper_thread();
                    let _slot = slot;
                    serve(stream, &token, &shared);
                });
            if spawned.is_err() {
                std::thread::sleep(Duration::from_millis(50));
            }
        }
    }
}

fn serve(mut stream: TcpStream, token: &str, shared: &Arc<Shared>) {
    let _ = stream.set_read_timeout(Some(READ_TIMEOUT));
    let _ = stream.set_write_timeout(Some(WRITE_TIMEOUT));
    let _ = stream.set_nodelay(true);
    let request = match http::read_request(&mut stream) {
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
