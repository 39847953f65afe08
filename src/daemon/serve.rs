//! The session daemon: `scry session __serve NAME ...`, started by `scry session start`.
//!
//! It tells the starting client how the start went with one line on its stdout (`ok<TAB>first
//! stop line` or `error<TAB>message`), then points stdout at /dev/null; its stderr is the log
//! file next to the socket. The main thread owns ptrace and the JavaScript engine and answers
//! requests in the order they arrive; the accept thread and the connection threads only move
//! bytes between sockets and the main thread.

use std::io::{Read, Write};
use std::net::Shutdown;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::wire::{self, Verb};
use super::{paths, StartArgs};
use crate::launch::{open, positive_secs, release, Opened};
use crate::repl::Repl;

/// How often the idle main thread looks for a termination signal.
const POLL: Duration = Duration::from_millis(200);
/// A request larger than this is refused.
const MAX_REQUEST: u64 = 64 * 1024 * 1024;
/// A client that connects and sends nothing is dropped after this long.
const READ_TIMEOUT: Duration = Duration::from_secs(120);
/// A reply nobody reads is abandoned after this long.
const WRITE_TIMEOUT: Duration = Duration::from_secs(30);
/// How often a connection says the daemon is alive while its request waits or runs.
const ALIVE_EVERY: Duration = Duration::from_secs(1);
/// At exit, how long the last reply may take to reach its client.
const LAST_WRITE: Duration = Duration::from_secs(5);

/// A response on its way back to a connection thread, which acknowledges once it is written.
type Answer = Sender<(String, bool)>;

enum Request {
    Eval {
        chunk: String,
        answer: Answer,
        written: Receiver<()>,
    },
    Stop {
        answer: Answer,
        written: Receiver<()>,
    },
}

/// What `session list` shows, kept up to date by the main thread and read by connection
/// threads (so `info` is answered even while a chunk runs).
struct Info {
    name: String,
    target_pid: Option<i32>,
    program: String,
    live: bool,
    /// The session reads a core file.
    core: bool,
    busy: bool,
    last_active: Instant,
}

impl Info {
    /// `name pid target_pid program state idle`, tab-separated.
    fn row(&self) -> String {
        let state = if self.busy {
            "busy"
        } else if self.live {
            "live"
        } else if self.core {
            "core"
        } else {
            "ended"
        };
        let idle = if self.busy {
            0
        } else {
            self.last_active.elapsed().as_secs()
        };
        let target = self
            .target_pid
            .map_or_else(|| "-".to_string(), |p| p.to_string());
        let program = self.program.replace(['\t', '\n'], " ");
        format!(
            "{}\t{}\t{target}\t{program}\t{state}\t{idle}",
            self.name,
            std::process::id()
        )
    }

    fn update(&mut self, repl: &Repl) {
        let (pid, program, live, core) = repl.engine().with_session(|s| {
            (
                s.pid(),
                s.program().map(str::to_string),
                s.is_live() && s.pid().is_some(),
                s.core_name().is_some(),
            )
        });
        self.core = core;
        if pid.is_some() {
            self.target_pid = pid;
        }
        if let Some(program) = program {
            self.program = program;
        }
        self.live = live;
        self.busy = false;
        self.last_active = Instant::now();
    }
}

fn lock(info: &Mutex<Info>) -> MutexGuard<'_, Info> {
    info.lock().unwrap_or_else(|e| e.into_inner())
}

/// Removes the socket and the log when the session ends.
struct Files {
    socket: PathBuf,
    log: Option<PathBuf>,
}

impl Drop for Files {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.socket);
        if let Some(log) = &self.log {
            let _ = std::fs::remove_file(log);
        }
    }
}

/// The one line that tells `session start` how the start went.
fn tell_client(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
    drop(out);
    // The client stops reading after this line; nothing else of the daemon goes to stdout.
    if let Ok(null) = std::fs::File::options().write(true).open("/dev/null") {
        let _ = nix::unistd::dup2_stdout(&null);
    }
}

/// Why the session ended.
enum End {
    Stop(Answer, Receiver<()>),
    Idle,
    Signal(i32),
    ListenerGone,
}

pub(super) fn serve(args: &StartArgs) -> ExitCode {
    // Out of the starting shell's session and process group: its Ctrl-C and hangup are not
    // ours.
    let _ = nix::unistd::setsid();
    crate::session::install_signal_handling(false);
    let (listener, opened, files, idle) = match set_up(args) {
        Ok(parts) => parts,
        Err(message) => {
            tell_client(&format!("error\t{}", message.replace('\n', " ")));
            return ExitCode::from(2);
        }
    };
    let (mut repl, first) = (opened.repl, opened.first_stop);
    // One line: the first stop and the orientation below it travel with `\n` (and tabs)
    // escaped; the view's URL and a warning about its address ride along after tabs.
    let view = match (&opened.view_url, &opened.view_warning) {
        (Some(url), Some(warning)) => format!("\t{url}\t{warning}"),
        (Some(url), None) => format!("\t{url}"),
        _ => String::new(),
    };
    tell_client(&format!(
        "ok\t{}{view}",
        first
            .replace('\\', "\\\\")
            .replace('\n', "\\n")
            .replace('\t', "\\t")
    ));
    eprintln!("scry session {}: {first}", args.name);
    if let Some(url) = &opened.view_url {
        eprintln!("scry session {}: view at {url}", args.name);
    }

    let info = Arc::new(Mutex::new(Info {
        name: args.name.clone(),
        target_pid: None,
        program: String::new(),
        live: true,
        core: false,
        busy: false,
        last_active: Instant::now(),
    }));
    lock(&info).update(&repl);
    let (requests, inbox) = mpsc::channel();
    {
        let info = info.clone();
        std::thread::spawn(move || accept_loop(listener, requests, info));
    }

    let mut last_written: Option<Receiver<()>> = None;
    let end = loop {
        if let Some(sig) = crate::session::termination() {
            break End::Signal(sig);
        }
        let idle_for = lock(&info).last_active.elapsed();
        let Some(left) = idle.checked_sub(idle_for).filter(|d| !d.is_zero()) else {
            break End::Idle;
        };
        match inbox.recv_timeout(left.min(POLL)) {
            Ok(Request::Eval {
                chunk,
                answer,
                written,
            }) => {
                lock(&info).busy = true;
                let response = repl.respond(&wire::normalize_chunk(&chunk));
                lock(&info).update(&repl);
                match response {
                    Some((body, ok)) => {
                        let _ = answer.send((body, ok));
                        last_written = Some(written);
                    }
                    // `:quit` ends the session like `session stop`.
                    None => break End::Stop(answer, written),
                }
            }
            Ok(Request::Stop { answer, written }) => break End::Stop(answer, written),
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => break End::ListenerGone,
        }
    };

    let released = release(&mut repl);
    drop(files);
    let code = match end {
        End::Stop(answer, written) => {
            eprintln!("scry session {}: stopped: {released}", args.name);
            let _ = answer.send((format!("{released}\n"), true));
            last_written = Some(written);
            ExitCode::SUCCESS
        }
        End::Idle => {
            eprintln!(
                "scry session {}: no eval for {}s: ended ({released})",
                args.name,
                idle.as_secs_f64()
            );
            ExitCode::SUCCESS
        }
        End::Signal(sig) => {
            eprintln!(
                "scry session {}: ended by signal {sig} ({released})",
                args.name
            );
            ExitCode::from(128 + sig as u8)
        }
        End::ListenerGone => {
            eprintln!(
                "scry session {}: the socket stopped accepting ({released})",
                args.name
            );
            ExitCode::from(1)
        }
    };
    // The last answer is written by its connection thread; let it get out before exiting.
    if let Some(written) = last_written {
        let _ = written.recv_timeout(LAST_WRITE);
    }
    code
}

type Parts = (UnixListener, Opened, Files, Duration);

fn set_up(args: &StartArgs) -> Result<Parts, String> {
    let config = args.options.config()?;
    let idle = positive_secs(args.idle_timeout, "idle-timeout", crate::session::MAX_IDLE)?;
    let socket = paths::socket_path(&args.name)?;
    let listener = UnixListener::bind(&socket).map_err(|e| {
        if e.kind() == std::io::ErrorKind::AddrInUse {
            format!("session {} exists", args.name)
        } else {
            format!("cannot listen on {}: {e}", socket.display())
        }
    })?;
    // From here on the socket is ours to remove, whatever happens.
    let files = Files {
        socket: socket.clone(),
        log: paths::log_path(&args.name).ok(),
    };
    std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o600))
        .map_err(|e| format!("cannot chmod {}: {e}", socket.display()))?;
    let opened = open(config, &args.target()?, args.options.view.as_deref())?;
    Ok((listener, opened, files, idle))
}

fn accept_loop(listener: UnixListener, requests: Sender<Request>, info: Arc<Mutex<Info>>) {
    crate::os::timer::block_signals_in_helper_thread();
    for stream in listener.incoming() {
        let Ok(stream) = stream else { continue };
        let requests = requests.clone();
        let info = info.clone();
        std::thread::spawn(move || {
            crate::os::timer::block_signals_in_helper_thread();
            connection(stream, requests, &info);
        });
    }
}

/// One request: read it whole, have it answered, write the answer.
fn connection(mut stream: UnixStream, requests: Sender<Request>, info: &Mutex<Info>) {
    let _ = stream.set_read_timeout(Some(READ_TIMEOUT));
    let _ = stream.set_write_timeout(Some(WRITE_TIMEOUT));
    let mut bytes = Vec::new();
    if (&stream)
        .take(MAX_REQUEST + 1)
        .read_to_end(&mut bytes)
        .is_err()
    {
        return;
    }
    let send = |stream: &mut UnixStream, body: &str, ok: bool| {
        let _ = stream.write_all(wire::reply(body, ok).as_bytes());
        let _ = stream.shutdown(Shutdown::Both);
    };
    if bytes.len() as u64 > MAX_REQUEST {
        let message = format!("error: a chunk holds at most {MAX_REQUEST} bytes");
        return send(&mut stream, &message, false);
    }
    let (verb, alive, payload) = match wire::parse_request(&bytes) {
        Ok(request) => request,
        Err(message) => return send(&mut stream, &format!("error: {message}"), false),
    };
    let (answer, answered) = mpsc::channel();
    let (done, written) = mpsc::channel();
    let request = match verb {
        Verb::Info => {
            let row = lock(info).row();
            return send(&mut stream, &row, true);
        }
        Verb::Eval => Request::Eval {
            chunk: payload,
            answer,
            written,
        },
        Verb::Stop => Request::Stop { answer, written },
    };
    if requests.send(request).is_err() {
        return;
    }
    // While the main thread works, a dot a second says this daemon is not frozen.
    if alive {
        let _ = write!(stream, "{}", std::process::id());
    }
    let answer = loop {
        match answered.recv_timeout(ALIVE_EVERY) {
            Ok(answer) => break Some(answer),
            Err(RecvTimeoutError::Timeout) => {
                if alive && stream.write_all(b".").is_err() {
                    break None;
                }
            }
            Err(RecvTimeoutError::Disconnected) => break None,
        }
    };
    if alive {
        let _ = stream.write_all(b"\n");
    }
    // No answer (the session ended first): the connection closes without a status line.
    if let Some((body, ok)) = answer {
        send(&mut stream, &body, ok);
        let _ = done.send(());
    }
}
