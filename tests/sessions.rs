//! Named sessions: `scry session start | eval | list | stop` from separate commands, each test
//! in its own runtime directory (XDG_RUNTIME_DIR) so tests never see each other's sessions.

mod common;

use std::collections::HashMap;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::{fixture, process_is_dead, table, temp_path, Scry, SCRY};

/// What one scry command did.
#[derive(Debug)]
struct Out {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// A private runtime directory; every session started in it is stopped when the test ends.
struct Runtime {
    dir: PathBuf,
    started: Vec<String>,
    /// Environment of every scry command (and so of the daemons they start).
    env: Vec<(String, String)>,
}

impl Runtime {
    fn new(tag: &str) -> Runtime {
        let dir = temp_path(tag);
        std::fs::create_dir_all(&dir).unwrap();
        Runtime {
            dir,
            started: Vec::new(),
            env: Vec::new(),
        }
    }

    fn sessions_dir(&self) -> PathBuf {
        self.dir.join("scry")
    }

    /// Runs `scry ARGS` with `stdin`, bounded by a minute.
    fn run(&self, args: &[&str], stdin: Option<&str>) -> Out {
        let mut child = Command::new(SCRY)
            .args(args)
            .env("XDG_RUNTIME_DIR", &self.dir)
            .envs(self.env.iter().cloned())
            .stdin(if stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("scry starts");
        if let Some(text) = stdin {
            let mut pipe = child.stdin.take().unwrap();
            pipe.write_all(text.as_bytes()).unwrap();
        }
        let pid = child.id();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(child.wait_with_output());
        });
        let output = match rx.recv_timeout(common::RESPONSE_TIMEOUT) {
            Ok(output) => output.expect("scry runs"),
            Err(_) => {
                let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
                panic!("scry {args:?} did not finish");
            }
        };
        Out {
            code: output.status.code(),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }

    /// `session start NAME ARGS...`, asserting success; returns the first stop line.
    fn start(&mut self, name: &str, args: &[&str]) -> String {
        let mut all = vec!["session", "start", name];
        all.extend_from_slice(args);
        let out = self.run(&all, None);
        self.started.push(name.to_string());
        assert_eq!(out.code, Some(0), "start {name}: {out:?}");
        out.stdout.trim_end().to_string()
    }

    fn eval(&self, name: &str, code: &str) -> Out {
        self.run(&["session", "eval", name, "-e", code], None)
    }

    /// An eval that must succeed; its output without the final newline.
    fn ok(&self, name: &str, code: &str) -> String {
        let out = self.eval(name, code);
        assert_eq!(out.code, Some(0), "eval {code:?}: {out:?}");
        out.stdout.trim_end_matches('\n').to_string()
    }

    /// `session list` as rows keyed by column.
    fn list(&self) -> Vec<HashMap<String, String>> {
        let out = self.run(&["session", "list"], None);
        assert_eq!(out.code, Some(0), "{out:?}");
        assert!(
            out.stdout
                .starts_with("name\tpid\ttarget_pid\tprogram\tstate\tidle\n"),
            "{out:?}"
        );
        table(&out.stdout)
    }

    fn row(&self, name: &str) -> HashMap<String, String> {
        self.list()
            .into_iter()
            .find(|r| r["name"] == name)
            .unwrap_or_else(|| panic!("no session {name} in the list"))
    }

    fn pids(&self, name: &str) -> (i32, i32) {
        let row = self.row(name);
        (
            row["pid"].parse().unwrap(),
            row["target_pid"].parse().unwrap(),
        )
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        for name in std::mem::take(&mut self.started) {
            let _ = self.run(&["session", "stop", &name], None);
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn kill(signal: &str, pid: i32) {
    Command::new("kill")
        .args([signal, &pid.to_string()])
        .status()
        .unwrap();
}

fn wait_until(what: &str, timeout: Duration, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + timeout;
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting: {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn state_lives_across_separate_commands() {
    let program = fixture("loop");
    let mut rt = Runtime::new("across");
    let first = rt.start("across", &[program.to_str().unwrap(), "3"]);
    let mut lines = first.lines();
    let stop = lines.next().unwrap();
    assert!(stop.starts_with("entry at 0x"), "{first}");
    assert!(stop.ends_with("_start"), "{first}");
    // Then the orientation: the program, its modules and debug info, and the API to start.
    let (_, target) = rt.pids("across");
    let about = lines.next().unwrap();
    assert!(
        about.starts_with(&format!("{} (pid {target}): 1 thread; ", program.display())),
        "{first}"
    );
    let module = program.file_name().unwrap().to_str().unwrap();
    assert!(
        about.contains(&format!(" modules: {module} libc.so.6 ")),
        "{first}"
    );
    assert!(
        about.contains(&format!("; debug info: {module}")),
        "{first}"
    );
    assert!(
        lines.next().unwrap().starts_with("API: breakpoint.set("),
        "{first}"
    );
    assert_eq!(lines.next(), None);

    // Only the user can reach it.
    assert_eq!(mode(&rt.sessions_dir()), 0o700);
    assert_eq!(mode(&rt.sessions_dir().join("across.sock")), 0o600);

    assert_eq!(
        rt.ok(
            "across",
            "breakpoint.set('add'); ctx.note = 'set in call 1'; 7"
        ),
        "7"
    );
    let stop = rt.ok("across", "cont()");
    assert!(stop.starts_with("breakpoint 1 at 0x"), "{stop}");
    // After add's prologue: its first body line.
    assert!(
        stop.contains(" add+0x") && stop.ends_with(" loop.c:8"),
        "{stop}"
    );
    assert_eq!(rt.ok("across", "ctx.note"), "set in call 1");
    assert_eq!(rt.ok("across", "state.registers.rdi"), "0");

    // Exit statuses: 1 for an error response (the session survives it).
    let err = rt.eval("across", "no_such_thing");
    assert_eq!(err.code, Some(1), "{err:?}");
    assert!(
        err.stdout
            .starts_with("error: ReferenceError: no_such_thing"),
        "{err:?}"
    );
    assert_eq!(
        rt.ok("across", "breakpoint.list()[0].hits"),
        "1",
        "still stopped at the first hit"
    );

    // Stdin (the default) and -f carry a chunk too.
    let out = rt.run(
        &["session", "eval", "across"],
        Some("let a = 20\r\na + 22\n"),
    );
    assert_eq!((out.code, out.stdout.as_str()), (Some(0), "42\n"));
    let file = rt.dir.join("chunk.js");
    std::fs::write(&file, "print('from a file')").unwrap();
    let out = rt.run(
        &["session", "eval", "across", "-f", file.to_str().unwrap()],
        None,
    );
    assert_eq!(out.stdout, "from a file\n");

    let row = rt.row("across");
    assert_eq!(row["state"], "live");
    assert_eq!(row["program"], program.to_str().unwrap());
    let (daemon, target) = rt.pids("across");
    assert!(!process_is_dead(daemon) && !process_is_dead(target));

    // A second start under a live name is refused.
    let again = rt.run(
        &["session", "start", "across", program.to_str().unwrap()],
        None,
    );
    assert_eq!(again.code, Some(2));
    assert!(again.stderr.contains("session across exists"), "{again:?}");

    let stopped = rt.run(&["session", "stop", "across"], None);
    assert_eq!(stopped.code, Some(0), "{stopped:?}");
    assert_eq!(stopped.stdout, "killed by SIGKILL\n");
    wait_until("the target dies", Duration::from_secs(10), || {
        process_is_dead(target)
    });
    assert!(!rt.sessions_dir().join("across.sock").exists());

    // Exit status 2: the session is gone.
    let gone = rt.eval("across", "1");
    assert_eq!(gone.code, Some(2), "{gone:?}");
    assert_eq!(gone.stdout, "");
    assert_eq!(gone.stderr.lines().count(), 1, "{gone:?}");
    assert!(rt.list().is_empty());
}

#[test]
fn a_failed_start_reports_the_error() {
    let mut rt = Runtime::new("badstart");
    let out = rt.run(&["session", "start", "bad", "/no/such/program"], None);
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(out.stderr.contains("no such program"), "{out:?}");
    assert_eq!(out.stdout, "");
    assert!(rt.list().is_empty());
    let out = rt.run(&["session", "start", "../x", "/bin/true"], None);
    assert_eq!(out.code, Some(2));
    assert!(out.stderr.contains("bad session name"), "{out:?}");
    // The name is free for a start that works.
    let program = fixture("loop");
    rt.start("bad", &[program.to_str().unwrap()]);
}

#[test]
fn concurrent_evals_are_serialized() {
    let program = fixture("loop");
    let mut rt = Runtime::new("serial");
    rt.start("serial", &[program.to_str().unwrap()]);
    // Each chunk busy-waits 300 ms between a start and an end marker.
    let chunk = "{ const t0 = Date.now(); print('start', t0); \
                 while (Date.now() - t0 < 300) {} print('end', Date.now()) }";
    let began = Instant::now();
    let outs: Vec<Out> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..2)
            .map(|_| s.spawn(|| rt.eval("serial", chunk)))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let elapsed = began.elapsed();
    let mut spans = Vec::new();
    for out in &outs {
        assert_eq!(out.code, Some(0), "{out:?}");
        let lines: Vec<&str> = out.stdout.lines().collect();
        assert_eq!(
            lines.len(),
            2,
            "one start and one end, nothing else: {out:?}"
        );
        let t = |line: &str, tag: &str| -> u64 {
            line.strip_prefix(tag)
                .unwrap_or_else(|| panic!("{line:?} should start with {tag:?}"))
                .parse()
                .unwrap()
        };
        spans.push((t(lines[0], "start "), t(lines[1], "end ")));
    }
    spans.sort();
    assert!(
        spans[0].1 <= spans[1].0,
        "the second chunk started before the first ended: {spans:?}"
    );
    assert!(
        elapsed >= Duration::from_millis(600),
        "two 300 ms chunks took {elapsed:?}"
    );
}

#[test]
fn killing_the_daemon_kills_a_spawned_target_and_frees_the_name() {
    let program = fixture("ticker");
    let mut rt = Runtime::new("sigkill");
    rt.start("crash", &[program.to_str().unwrap(), "1000"]);
    rt.ok("crash", "breakpoint.set('tick'); cont()");
    let (daemon, target) = rt.pids("crash");
    kill("-KILL", daemon);
    wait_until("the spawned target dies", Duration::from_secs(10), || {
        process_is_dead(target)
    });
    wait_until("the daemon dies", Duration::from_secs(10), || {
        process_is_dead(daemon)
    });
    // The socket file outlives the daemon, but once the dying process has closed its
    // descriptors (its threads may outlive the zombie leader briefly) nothing answers it.
    let socket = rt.sessions_dir().join("crash.sock");
    wait_until("the socket refuses", Duration::from_secs(10), || {
        matches!(std::os::unix::net::UnixStream::connect(&socket),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused)
    });
    assert!(socket.exists());
    let gone = rt.eval("crash", "1");
    assert_eq!(gone.code, Some(2), "{gone:?}");
    assert!(gone.stderr.contains("gone"), "{gone:?}");
    assert!(rt.list().is_empty(), "a dead session is not listed");
    // The stale socket does not block the name.
    rt.start("crash", &[program.to_str().unwrap(), "1000"]);
    assert_eq!(rt.row("crash")["state"], "live");
}

#[test]
fn sigterm_to_the_daemon_leaves_an_attached_target_running() {
    let mut child = common::ChildGuard(
        Command::new(fixture("ticker"))
            .arg("60")
            .stdout(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let pid = child.0.id() as i32;
    let mut rt = Runtime::new("attach");
    let first = rt.start("att", &["-p", &pid.to_string()]);
    assert!(first.starts_with("attached at "), "{first}");
    assert!(rt
        .ok("att", "breakpoint.set('tick'); cont()")
        .starts_with("breakpoint 1 at"));
    let (daemon, target) = rt.pids("att");
    assert_eq!(target, pid);
    kill("-TERM", daemon);
    wait_until("the daemon ends", Duration::from_secs(10), || {
        process_is_dead(daemon)
    });
    // Detached cleanly: not traced, no int3 left behind (it would die of SIGTRAP).
    assert_eq!(common::proc_status_field(pid, "TracerPid"), "0");
    assert!(!rt.sessions_dir().join("att.sock").exists());
    assert_eq!(child.wait_timeout(Duration::from_secs(20)).code(), Some(7));
}

#[test]
fn an_idle_session_ends_by_itself() {
    let program = fixture("loop");
    let mut rt = Runtime::new("idle");
    rt.start(
        "idle",
        &["--idle-timeout", "1", "--", program.to_str().unwrap()],
    );
    let target: i32 = rt.ok("idle", "String(status().pid)").parse().unwrap();
    wait_until("the idle session ends", Duration::from_secs(10), || {
        !rt.sessions_dir().join("idle.sock").exists()
    });
    let gone = rt.eval("idle", "1");
    assert_eq!(gone.code, Some(2), "{gone:?}");
    wait_until("the target dies", Duration::from_secs(10), || {
        process_is_dead(target)
    });
}

#[test]
fn session_eval_answers_byte_for_byte_like_stdin_mode() {
    let program = fixture("loop");
    let chunks = [
        "breakpoint.set('add')",
        "cont()",
        "state.registers.rdi",
        "print('a'); print('b'); 1 + 1",
        "no_such_call()",
        "for (let i = 0; i < 60; i++) print('line ' + i)",
        ":more",
        ":more",
        ":help",
        ":bogus",
        "breakpoint.list()",
        "state.disasm(3)",
        "undefined",
        "breakpoint.remove(1); cont()",
        "output()",
    ];
    // Stdin mode, with a small response cap so `:more` has work.
    let mut stdin_mode = Scry::start(&["--output-limit", "256", "--", program.to_str().unwrap()]);
    let expected: Vec<(String, bool)> = chunks
        .iter()
        .map(|c| {
            let r = stdin_mode.eval(c);
            (r.body, r.ok)
        })
        .collect();
    assert!(expected[6].0.starts_with("line "), "{:?}", expected[6]);

    let mut rt = Runtime::new("bytes");
    rt.start(
        "bytes",
        &["--output-limit", "256", program.to_str().unwrap()],
    );
    for (chunk, (body, ok)) in chunks.iter().zip(&expected) {
        let out = rt.eval("bytes", chunk);
        assert_eq!(&out.stdout, body, "response to {chunk:?}");
        assert_eq!(
            out.code,
            Some(if *ok { 0 } else { 1 }),
            "{chunk:?}: {out:?}"
        );
    }
}

#[test]
fn a_daemon_survives_hostile_prototype_setters() {
    let program = fixture("loop");
    let mut rt = Runtime::new("hostile");
    rt.start("hostile", &[program.to_str().unwrap(), "3"]);
    rt.ok(
        "hostile",
        "for (const k of ['pid', 'live', 'program', 'hits', 'id', 'addr', 'module', 'insn', 'insn_addr', 'reason', 'line'])
           Object.defineProperty(Object.prototype, k, {set(v) { state.pc; breakpoint.list() }, get() { return state.pc }, configurable: true}); 1",
    );
    let (daemon, target) = rt.pids("hostile");
    let status = rt.ok("hostile", "status()");
    assert!(status.contains(&format!("pid\t{target}")), "{status}");
    rt.ok("hostile", "breakpoint.set('add+0')");
    assert!(rt.ok("hostile", "breakpoint.list()").contains("\tadd\t0"));
    assert!(rt.ok("hostile", "symbols('add')").contains("\tfunc\tadd\t"));
    assert_eq!(rt.ok("hostile", "1 + 1"), "2");
    assert_eq!(rt.pids("hostile").0, daemon, "the same daemon answers");
}

/// The program sends SIGSTOP to its tracer (the daemon): the daemon's guardian resumes it and
/// the chunk answers as if nothing happened.
#[test]
fn a_program_that_stops_its_daemon_does_not_freeze_the_session() {
    let program = fixture("stop_tracer");
    let mut rt = Runtime::new("guarded");
    rt.start("guarded", &[program.to_str().unwrap()]);
    let (daemon, _) = rt.pids("guarded");
    let started = Instant::now();
    let out = rt.eval("guarded", "cont({timeout: 10}); output()");
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(
        out.stdout,
        format!("stopped tracer {daemon} and went on\n\n")
    );
    assert!(started.elapsed() < Duration::from_secs(8));
}

/// With the guardian off (`SCRY_GUARDIAN=0`), the program freezes its tracer (the daemon)
/// with SIGSTOP. `eval` notices the daemon is silent, says why, and exits 2; `--deadline`
/// cuts a long chunk short the same way.
#[test]
fn a_frozen_daemon_is_reported_not_waited_for() {
    let program = fixture("stop_tracer");
    let mut rt = Runtime::new("frozen");
    rt.env.push(("SCRY_GUARDIAN".into(), "0".into()));
    rt.start(
        "frozen",
        &["--script-timeout", "1", program.to_str().unwrap()],
    );
    let (daemon, _) = rt.pids("frozen");
    let started = Instant::now();
    let out = rt.eval("frozen", "cont()");
    let waited = started.elapsed();
    assert_eq!(out.code, Some(2), "{out:?}");
    assert_eq!(
        out.stderr.trim_end(),
        format!(
            "scry: session frozen did not answer: its daemon (pid {daemon}) is stopped (a SIGSTOP; \
             a target can send one to its tracer); `kill -CONT {daemon}` resumes it"
        )
    );
    assert!(waited < Duration::from_secs(20), "{waited:?}");
    assert_eq!(rt.row("frozen")["state"], "stopped");
    kill("-CONT", daemon);
    // Resumed, the session goes on (the chunk that was running has finished meanwhile).
    wait_until("the daemon answers again", Duration::from_secs(20), || {
        rt.eval("frozen", "1 + 1").stdout == "2\n"
    });
    let started = Instant::now();
    let out = rt.run(
        &[
            "session",
            "eval",
            "frozen",
            "--deadline",
            "0.3",
            "-e",
            "while (true) {}",
        ],
        None,
    );
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(
        out.stderr
            .starts_with("scry: session frozen did not answer within 0.3s (--deadline)"),
        "{out:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(4));
    let out = rt.run(
        &["session", "eval", "frozen", "--deadline", "0", "-e", "1"],
        None,
    );
    assert_eq!(out.code, Some(2));
    assert!(out
        .stderr
        .contains("--deadline must be a positive number of seconds"));
}
