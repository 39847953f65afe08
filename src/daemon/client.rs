//! The client side of named sessions: `scry session start | eval | list | stop`.
//!
//! Exit statuses: `eval` gives 0 for an `ok` response and 1 for `error`; every command gives 2
//! when the session cannot be reached (no socket, connection refused, the daemon died while
//! answering, the daemon froze, `--deadline` passed) or could not be started, with one line on
//! stderr.
//!
//! **Deadlines.** What a chunk may legitimately take has no useful bound (`config.timeout` per
//! run, any number of runs), so `eval` and `stop` wait as long as the daemon shows it is alive
//! (the wire's ALIVE dots, one a second) and give up after [`SILENCE`] without a byte: a
//! daemon stopped by a signal (a target can SIGSTOP its tracer) sends nothing. `--deadline
//! SECS` caps the whole wait as well.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::Shutdown;
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use super::paths;
use super::wire::{self, Verb};

/// `session list` waits this long for one session's `info`.
const INFO_TIMEOUT: Duration = Duration::from_secs(5);
/// `eval` and `stop` give up on a daemon silent for this long.
pub(super) const SILENCE: Duration = Duration::from_secs(10);

fn fail(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("scry: {message}");
    ExitCode::from(2)
}

/// Whether a socket file has a daemon behind it.
enum Probe {
    Live,
    /// The file exists but nothing listens (the daemon died): it was removed.
    Stale,
    Absent,
}

fn probe(socket: &Path) -> Result<Probe, String> {
    if std::fs::symlink_metadata(socket).is_err() {
        return Ok(Probe::Absent);
    }
    match UnixStream::connect(socket) {
        Ok(stream) => {
            // A polite request, so the daemon's log shows no garbage.
            let _ = exchange(stream, Verb::Info, "", Some(INFO_TIMEOUT));
            Ok(Probe::Live)
        }
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
            remove_stale(socket);
            Ok(Probe::Stale)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Probe::Absent),
        Err(e) => Err(format!("cannot reach {}: {e}", socket.display())),
    }
}

fn remove_stale(socket: &Path) {
    let _ = std::fs::remove_file(socket);
    let _ = std::fs::remove_file(socket.with_extension("log"));
}

/// Sends one request on `stream` and reads the whole reply; `None` when the reply has no
/// status line (the session ended first).
fn exchange(
    mut stream: UnixStream,
    verb: Verb,
    payload: &str,
    timeout: Option<Duration>,
) -> Option<(String, bool)> {
    let _ = stream.set_read_timeout(timeout);
    stream
        .write_all(&wire::request(verb, payload, false))
        .ok()?;
    stream.shutdown(Shutdown::Write).ok()?;
    let mut bytes = Vec::new();
    stream.read_to_end(&mut bytes).ok()?;
    wire::parse_reply(&bytes)
}

/// Sends one request asking for ALIVE dots and reads the reply while the daemon shows it is
/// alive: the body and status, or why there is none.
fn exchange_alive(
    mut stream: UnixStream,
    verb: Verb,
    payload: &str,
    name: &str,
    deadline: Option<Duration>,
) -> Result<(String, bool), String> {
    let started = Instant::now();
    // The daemon's pid from the kernel (a frozen daemon cannot say it).
    let peer = peer_pid(&stream);
    let _ = stream.set_read_timeout(Some(Duration::from_millis(250)));
    let gone = || format!("session {name} ended before it answered");
    stream
        .write_all(&wire::request(verb, payload, true))
        .map_err(|_| gone())?;
    stream.shutdown(Shutdown::Write).map_err(|_| gone())?;
    let mut bytes = Vec::new();
    let mut last_sign = Instant::now();
    let mut buf = [0u8; 64 * 1024];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                bytes.extend_from_slice(&buf[..n]);
                last_sign = Instant::now();
            }
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock
                        | std::io::ErrorKind::TimedOut
                        | std::io::ErrorKind::Interrupted
                ) => {}
            Err(_) => return Err(gone()),
        }
        let (pid, done) = wire::parse_alive(&bytes);
        if last_sign.elapsed() > SILENCE {
            return Err(frozen(name, pid.or(peer)));
        }
        if done.is_some() {
            // The reply proper is coming: no deadline cuts it off now.
            continue;
        }
        if let Some(limit) = deadline.filter(|d| started.elapsed() > *d) {
            return Err(format!(
                "session {name} did not answer within {}s (--deadline); the chunk may still be \
                 running (`scry session list` says busy)",
                limit.as_secs_f64()
            ));
        }
    }
    match wire::parse_alive(&bytes) {
        (_, Some(reply)) => wire::parse_reply(reply).ok_or_else(gone),
        _ => Err(gone()),
    }
}

/// The pid of the process at the other end of a Unix socket (SO_PEERCRED).
fn peer_pid(stream: &UnixStream) -> Option<u32> {
    nix::sys::socket::getsockopt(stream, nix::sys::socket::sockopt::PeerCredentials)
        .ok()
        .map(|c| c.pid() as u32)
}

/// The state letter of a process in /proc (`R`, `S`, `T` for stopped...).
fn process_state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = stat.rsplit_once(')')?;
    rest.trim_start().chars().next()
}

/// Why a daemon that went silent is silent, as far as /proc can tell.
fn frozen(name: &str, pid: Option<u32>) -> String {
    let silent = SILENCE.as_secs();
    let Some(pid) = pid else {
        return format!("session {name} did not answer: its daemon sent nothing for {silent}s");
    };
    match process_state(pid) {
        Some('T' | 't') => format!(
            "session {name} did not answer: its daemon (pid {pid}) is stopped (a SIGSTOP; a \
             target can send one to its tracer); `kill -CONT {pid}` resumes it"
        ),
        _ => format!(
            "session {name} did not answer: its daemon (pid {pid}) showed no sign of life for \
             {silent}s"
        ),
    }
}

/// Connects to session `name`, or says why not (and removes a dead session's socket).
fn connect(name: &str) -> Result<UnixStream, ExitCode> {
    let socket = paths::socket_path(name).map_err(fail)?;
    match UnixStream::connect(&socket) {
        Ok(stream) => Ok(stream),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(fail(format!(
            "no session {name} (start one with: scry session start {name} PROGRAM)"
        ))),
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
            remove_stale(&socket);
            Err(fail(format!("session {name} is gone (its daemon died)")))
        }
        Err(e) => Err(fail(format!("cannot reach session {name}: {e}"))),
    }
}

/// `session start NAME ...`: `words` are the arguments after `start`, handed to the daemon.
pub(super) fn start(name: &str, words: &[String]) -> ExitCode {
    let (socket, log) = match (paths::socket_path(name), paths::log_path(name)) {
        (Ok(socket), Ok(log)) => (socket, log),
        (Err(e), _) | (_, Err(e)) => return fail(e),
    };
    match probe(&socket) {
        Ok(Probe::Live) => return fail(format!("session {name} exists")),
        Ok(Probe::Stale | Probe::Absent) => {}
        Err(e) => return fail(e),
    }
    let log_file = match std::fs::File::options()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&log)
    {
        Ok(file) => file,
        Err(e) => return fail(format!("cannot create {}: {e}", log.display())),
    };
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => return fail(format!("cannot find the scry executable: {e}")),
    };
    let mut daemon = match Command::new(exe)
        .arg("session")
        .arg("__serve")
        .args(words)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(log_file)
        .spawn()
    {
        Ok(child) => child,
        Err(e) => return fail(format!("cannot start the session daemon: {e}")),
    };
    let mut line = String::new();
    if let Some(out) = daemon.stdout.take() {
        let _ = BufReader::new(out).read_line(&mut line);
    }
    match line.trim_end_matches('\n').split_once('\t') {
        Some(("ok", rest)) => {
            // The daemon runs on; it is not waited for.
            let mut fields = rest.split('\t');
            println!("{}", unescape_lines(fields.next().unwrap_or_default()));
            // The live view's URL, and a warning when it is reachable from other machines.
            if let Some(url) = fields.next() {
                if let Some(warning) = fields.next() {
                    eprintln!("scry: {warning}");
                }
                eprintln!("scry: view at {url}");
            }
            ExitCode::SUCCESS
        }
        Some(("error", message)) => {
            let _ = daemon.wait();
            fail(message)
        }
        _ => {
            let _ = daemon.wait();
            let logged = std::fs::read_to_string(&log).unwrap_or_default();
            fail(format!(
                "the session daemon ended before it was ready: {}",
                logged.trim().lines().last().unwrap_or("(nothing logged)")
            ))
        }
    }
}

/// The daemon's start line with its `\n` and `\\` escapes undone.
fn unescape_lines(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match (c, chars.clone().next()) {
            ('\\', Some('n')) => {
                out.push('\n');
                chars.next();
            }
            ('\\', Some('\\')) => {
                out.push('\\');
                chars.next();
            }
            ('\\', Some('t')) => {
                out.push('\t');
                chars.next();
            }
            _ => out.push(c),
        }
    }
    out
}

/// `session eval NAME [-e CODE | -f FILE] [--deadline SECS]`: one chunk, its response on
/// stdout.
pub(super) fn eval(
    name: &str,
    code: Option<String>,
    file: Option<String>,
    deadline: Option<Duration>,
) -> ExitCode {
    let chunk = match (code, file) {
        (Some(code), _) => code,
        (None, Some(file)) => match std::fs::read(&file) {
            Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
            Err(e) => return fail(format!("cannot read {file}: {e}")),
        },
        (None, None) => {
            let mut bytes = Vec::new();
            if let Err(e) = std::io::stdin().read_to_end(&mut bytes) {
                return fail(format!("cannot read stdin: {e}"));
            }
            String::from_utf8_lossy(&bytes).into_owned()
        }
    };
    let stream = match connect(name) {
        Ok(stream) => stream,
        Err(code) => return code,
    };
    let (body, ok) = match exchange_alive(stream, Verb::Eval, &chunk, name, deadline) {
        Ok(reply) => reply,
        Err(why) => return fail(why),
    };
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(body.as_bytes());
    let _ = out.flush();
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// `session stop NAME [--deadline SECS]`.
pub(super) fn stop(name: &str, deadline: Option<Duration>) -> ExitCode {
    let stream = match connect(name) {
        Ok(stream) => stream,
        Err(code) => return code,
    };
    match exchange_alive(stream, Verb::Stop, "", name, deadline) {
        Ok((body, _)) => {
            print!("{body}");
            ExitCode::SUCCESS
        }
        Err(why) => fail(why),
    }
}

/// `session list`: a header and one tab-separated row per live session.
pub(super) fn list() -> ExitCode {
    let dir = match paths::runtime_dir() {
        Ok(dir) => dir,
        Err(e) => return fail(e),
    };
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok())
                .filter_map(|e| {
                    let name = e.file_name().to_string_lossy().into_owned();
                    name.strip_suffix(".sock").map(str::to_string)
                })
                .filter(|name| paths::check_name(name).is_ok())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    let mut out = String::from("name\tpid\ttarget_pid\tprogram\tstate\tidle\n");
    for name in names {
        let socket = dir.join(format!("{name}.sock"));
        match UnixStream::connect(&socket) {
            Ok(stream) => {
                let peer = peer_pid(&stream);
                match exchange(stream, Verb::Info, "", Some(INFO_TIMEOUT)) {
                    Some((row, true)) => out.push_str(&row),
                    _ => {
                        let state = match peer.and_then(process_state) {
                            Some('T' | 't') => "stopped",
                            _ => "unresponsive",
                        };
                        let pid = peer.map_or_else(|| "-".to_string(), |p| p.to_string());
                        out.push_str(&format!("{name}\t{pid}\t-\t-\t{state}\t-\n"));
                    }
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => remove_stale(&socket),
            Err(_) => {}
        }
    }
    print!("{out}");
    ExitCode::SUCCESS
}
