//! The live view: a page on a local HTTP port showing the session to a person who watches the
//! agent work, and the script area scripts draw into with `dom`.
//!
//! Threads: the server (an accept thread, one thread per connection) only reads the
//! [`board`] the engine publishes to; the engine's thread (the ptrace thread) writes it with a
//! few pointer copies under a lock nobody holds across a socket, so no browser can slow a
//! run down. This module knows nothing of JavaScript or ptrace: the session fills in
//! [`panels::Panels`], the script layer drives [`dom::DomModel`].

mod base64;
pub(crate) mod board;
pub(crate) mod canvas;
pub(crate) mod dom;
mod events;
mod http;
pub(crate) mod panels;
pub(crate) mod sanitize;
mod server;

use std::io::Read;
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::time::Duration;

pub(crate) use board::{Publication, Publisher, Shared};
pub(crate) use panels::Status;

/// An open view: its server runs until this is dropped.
pub struct View {
    url: String,
    local: SocketAddr,
    shared: Arc<Shared>,
    warning: Option<String>,
}

/// `PORT`, `ADDR:PORT`, `[V6ADDR]:PORT` or `localhost:PORT`; a bare port is on 127.0.0.1.
pub(crate) fn parse_addr(spec: &str) -> Result<SocketAddr, String> {
    let spec = spec.trim();
    let bad = || {
        format!(
            "--view {spec:?}: expected PORT or ADDR:PORT (e.g. 0, 8080, 127.0.0.1:8080, [::1]:0)"
        )
    };
    if let Ok(port) = spec.parse::<u16>() {
        return Ok(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port));
    }
    if let Some(port) = spec.strip_prefix("localhost:") {
        let port = port.parse::<u16>().map_err(|_| bad())?;
        return Ok(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port));
    }
    spec.parse::<SocketAddr>().map_err(|_| bad())
}

/// Sixteen random bytes from the kernel, as hex.
fn new_token() -> Result<String, String> {
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .map_err(|e| format!("view: cannot read /dev/urandom for a token: {e}"))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

impl View {
    /// Binds `spec` (see [`parse_addr`]) and starts serving.
    pub fn open(spec: &str) -> Result<View, String> {
        let addr = parse_addr(spec)?;
        let token = new_token()?;
        let listener =
            TcpListener::bind(addr).map_err(|e| format!("view: cannot listen on {addr}: {e}"))?;
        let local = listener
            .local_addr()
            .map_err(|e| format!("view: cannot read the bound address: {e}"))?;
        let warning = (!local.ip().is_loopback()).then(|| {
            format!(
                "warning: the view listens on {local}, beyond this machine: anyone who can reach \
                 it and has the URL (its token) can watch this session"
            )
        });
        let host = match local.ip() {
            IpAddr::V6(ip) => format!("[{ip}]"),
            IpAddr::V4(ip) => ip.to_string(),
        };
        let url = format!("http://{host}:{}/{token}/", local.port());
        let shared = Arc::new(Shared::default());
        let server = server::Server {
            listener,
            token,
            shared: shared.clone(),
        };
        std::thread::Builder::new()
            .name("scry-view-accept".into())
            .spawn(move || server.run())
            .map_err(|e| format!("view: cannot start the server thread: {e}"))?;
        Ok(View {
            url,
            local,
            shared,
            warning,
        })
    }

    /// The page's address, token included.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// What to tell the user about the address it listens on (a non-loopback one).
    pub fn warning(&self) -> Option<&str> {
        self.warning.as_deref()
    }

    pub fn publisher(&self) -> Publisher {
        Publisher::new(self.shared.clone())
    }

    /// Where the capture threads append the program's output.
    pub fn shared(&self) -> Arc<Shared> {
        self.shared.clone()
    }
}

impl Drop for View {
    fn drop(&mut self) {
        self.shared.close(Status {
            running: false,
            label: "session ended".into(),
        });
        // Let the open pages hear it before the process may exit (briefly: a page that does
        // not read is not waited for).
        let deadline = std::time::Instant::now() + Duration::from_millis(300);
        while self.shared.watchers() > 0 && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        // Wake the accept loop so it sees the end and lets the port go.
        let ip = match self.local.ip() {
            IpAddr::V4(ip) if ip.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
            IpAddr::V6(ip) if ip.is_unspecified() => IpAddr::V6(std::net::Ipv6Addr::LOCALHOST),
            ip => ip,
        };
        let _ = TcpStream::connect_timeout(
            &SocketAddr::new(ip, self.local.port()),
            Duration::from_millis(200),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses() {
        assert_eq!(parse_addr("0").unwrap().to_string(), "127.0.0.1:0");
        assert_eq!(parse_addr("8080").unwrap().to_string(), "127.0.0.1:8080");
        assert_eq!(
            parse_addr("localhost:9").unwrap().to_string(),
            "127.0.0.1:9"
        );
        assert_eq!(parse_addr("0.0.0.0:80").unwrap().to_string(), "0.0.0.0:80");
        assert_eq!(parse_addr("[::1]:0").unwrap().to_string(), "[::1]:0");
        assert!(parse_addr("70000").is_err());
        assert!(parse_addr("example.com:80").is_err());
        assert!(parse_addr("").is_err());
        let t = new_token().unwrap();
        assert_eq!(t.len(), 32);
        assert_ne!(t, new_token().unwrap());
    }
}
