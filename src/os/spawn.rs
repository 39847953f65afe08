//! Starting a program under ptrace. The child stops itself before exec so the parent can
//! PTRACE_SEIZE it (SEIZE, not TRACEME, so PTRACE_INTERRUPT works later) and set options; the
//! exec then arrives as PTRACE_EVENT_EXEC. An exec failure travels back over a CLOEXEC pipe.

use std::ffi::CString;
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

use nix::fcntl::OFlag;
use nix::unistd::{fork, pipe2, ForkResult};

use super::wait::{wait, WaitEvent, WaitOutcome};
use super::{ptrace, OsError, Tid};

pub(crate) struct SpawnRequest {
    pub path: PathBuf,
    /// Full argv, argv[0] included.
    pub argv: Vec<String>,
    /// Final environment as `KEY=VALUE` strings.
    pub env: Vec<String>,
    pub cwd: Option<PathBuf>,
    /// Bytes the target reads on stdin; `None` gives it /dev/null.
    pub stdin: Option<Vec<u8>>,
    pub disable_aslr: bool,
    /// Give the program a terminal of its own (a pty) as its controlling terminal: scry runs
    /// at one. Either way the program leads a new session, so it never reaches scry's.
    pub own_terminal: bool,
}

pub(crate) struct Spawned {
    pub pid: Tid,
    /// The read end of the one pipe the program's stdout and stderr both write to: one pipe,
    /// so what is read comes in the order it was written (two pipes drained apart cannot
    /// say which of two close writes came first).
    pub output: OwnedFd,
    /// Its terminal, when it got one (`own_terminal`).
    pub tty: Option<super::pty::Pty>,
}

fn cstring(s: &[u8], what: &str) -> Result<CString, OsError> {
    CString::new(s).map_err(|_| OsError::Spawn(format!("{what} contains a NUL byte")))
}

fn pipe() -> Result<(OwnedFd, OwnedFd), OsError> {
    pipe2(OFlag::O_CLOEXEC).map_err(|e| OsError::Spawn(format!("pipe: {e}")))
}

/// Forks, execs and seizes `req.path`; returns with the new process in its exec stop.
pub(crate) fn spawn_traced(req: &SpawnRequest) -> Result<Spawned, OsError> {
    // Everything the child touches is prepared before fork: after fork only async-signal-safe
    // calls are allowed.
    let path = cstring(req.path.as_os_str().as_bytes(), "program path")?;
    let argv: Vec<CString> = req
        .argv
        .iter()
        .map(|a| cstring(a.as_bytes(), "an argument"))
        .collect::<Result<_, _>>()?;
    let env: Vec<CString> = req
        .env
        .iter()
        .map(|e| cstring(e.as_bytes(), "an environment entry"))
        .collect::<Result<_, _>>()?;
    let cwd = match &req.cwd {
        Some(dir) => Some(cstring(dir.as_os_str().as_bytes(), "cwd")?),
        None => None,
    };
    let mut argv_ptrs: Vec<*const libc::c_char> = argv.iter().map(|a| a.as_ptr()).collect();
    argv_ptrs.push(std::ptr::null());
    let mut env_ptrs: Vec<*const libc::c_char> = env.iter().map(|e| e.as_ptr()).collect();
    env_ptrs.push(std::ptr::null());

    let inherited = super::inherited::Inherited::at_start();
    let tty = if req.own_terminal {
        Some(super::pty::Pty::open()?)
    } else {
        None
    };
    let tty_path = tty.as_ref().map(|t| t.slave.clone());
    let (out_r, out_w) = pipe()?;
    let (exec_r, exec_w) = pipe()?;
    let (stdin_child, stdin_feed): (OwnedFd, Option<OwnedFd>) = match &req.stdin {
        Some(_) => {
            let (r, w) = pipe()?;
            (r, Some(w))
        }
        None => {
            let null =
                File::open("/dev/null").map_err(|e| OsError::Spawn(format!("/dev/null: {e}")))?;
            (null.into(), None)
        }
    };

    // SAFETY: the child only calls async-signal-safe functions (dup2, chdir, personality,
    // raise, execve, write, _exit, signal, sigprocmask, prctl, setsid, open, ioctl) on memory prepared above.
    let fork_result = unsafe { fork() }.map_err(|e| OsError::Spawn(format!("fork: {e}")))?;
    let child = match fork_result {
        ForkResult::Child => unsafe {
            // A session of its own (and so a process group of its own): scry's terminal is
            // not its controlling terminal, a terminal of its own may be.
            super::pty::new_session(tty_path.as_ref());
            // scry's own dispositions (Rust's runtime ignores SIGPIPE; scry catches SIGINT,
            // SIGTERM, SIGHUP, SIGALRM) and mask are not the program's: it gets what scry
            // inherited, SIG_IGN included (exec keeps an ignored disposition).
            inherited.apply_in_child();
            // scry is not dumpable (see `protect_self`), and a fork inherits that until exec:
            // the child must be seizable before it execs.
            libc::prctl(libc::PR_SET_DUMPABLE, 1, 0, 0, 0);
            libc::dup2(stdin_child.as_raw_fd(), 0);
            libc::dup2(out_w.as_raw_fd(), 1);
            libc::dup2(out_w.as_raw_fd(), 2);
            if let Some(dir) = &cwd {
                if libc::chdir(dir.as_ptr()) != 0 {
                    report_and_exit(exec_w.as_raw_fd(), STAGE_CHDIR);
                }
            }
            if req.disable_aslr {
                let current = libc::personality(0xffff_ffff);
                libc::personality(
                    (current as libc::c_ulong) | libc::ADDR_NO_RANDOMIZE as libc::c_ulong,
                );
            }
            libc::raise(libc::SIGSTOP);
            libc::execve(path.as_ptr(), argv_ptrs.as_ptr(), env_ptrs.as_ptr());
            report_and_exit(exec_w.as_raw_fd(), STAGE_EXEC);
        },
        ForkResult::Parent { child } => child.as_raw(),
    };
    drop((out_w, exec_w, stdin_child));

    let setup = seize_through_exec(child);
    if setup.is_err() {
        // Dead children close their end of the report pipe, so reading it cannot block.
        let _ = ptrace::kill_process(child, libc::SIGKILL);
        reap(child);
    }
    // The child reports a failed chdir or exec (stage, errno) on the CLOEXEC pipe; an exec
    // that worked closed it empty.
    let mut report = [0u8; 8];
    let mut exec_r = File::from(exec_r);
    if let Ok(8) = exec_r.read(&mut report) {
        let stage = i32::from_ne_bytes(report[..4].try_into().expect("4 bytes"));
        let errno = i32::from_ne_bytes(report[4..].try_into().expect("4 bytes"));
        let _ = ptrace::kill_process(child, libc::SIGKILL);
        reap(child);
        return Err(exec_error(req, stage, errno));
    }
    setup?;
    if let (Some(feed), Some(bytes)) = (stdin_feed, req.stdin.clone()) {
        // A writer thread: a large stdin must not block scry while the target is stopped.
        std::thread::spawn(move || {
            super::timer::block_signals_in_helper_thread();
            let _ = File::from(feed).write_all(&bytes);
        });
    }
    Ok(Spawned {
        pid: child,
        output: out_r,
        tty,
    })
}

const STAGE_CHDIR: i32 = 1;
const STAGE_EXEC: i32 = 2;

unsafe fn report_and_exit(fd: libc::c_int, stage: i32) -> ! {
    let errno = *libc::__errno_location();
    let mut bytes = [0u8; 8];
    bytes[..4].copy_from_slice(&stage.to_ne_bytes());
    bytes[4..].copy_from_slice(&errno.to_ne_bytes());
    libc::write(fd, bytes.as_ptr().cast(), 8);
    libc::_exit(127);
}

fn exec_error(req: &SpawnRequest, stage: i32, errno: i32) -> OsError {
    let reason = std::io::Error::from_raw_os_error(errno);
    match (stage, &req.cwd) {
        (STAGE_CHDIR, Some(cwd)) => {
            OsError::Spawn(format!("cannot chdir to {}: {reason}", cwd.display()))
        }
        _ => OsError::Spawn(format!("cannot execute {}: {reason}", req.path.display())),
    }
}

fn seize_through_exec(child: Tid) -> Result<(), OsError> {
    let mut status = 0;
    // SAFETY: waiting for our own child to reach its self-inflicted SIGSTOP.
    let rc = unsafe { libc::waitpid(child, &mut status, libc::WUNTRACED) };
    if rc != child || !libc::WIFSTOPPED(status) {
        return Err(OsError::Spawn(
            "the child did not reach its pre-exec stop".into(),
        ));
    }
    ptrace::seize(child, ptrace::trace_options(true))?;
    ptrace::kill_process(child, libc::SIGCONT)?;
    loop {
        let event = match wait(child, false)? {
            WaitOutcome::Event(event) => event,
            WaitOutcome::Interrupted | WaitOutcome::NothingYet => continue,
        };
        match event {
            WaitEvent::Exec { .. } => return Ok(()),
            // The group-stop we were seized in, and the SIGCONT that ends it, are our own doing:
            // swallow them so the program never sees them.
            WaitEvent::EventStop { .. } => ptrace::cont(child, 0)?,
            WaitEvent::Signal { signal, .. }
                if signal == libc::SIGCONT || signal == libc::SIGSTOP =>
            {
                ptrace::cont(child, 0)?
            }
            WaitEvent::Signal { signal, .. } => ptrace::cont(child, signal)?,
            // Exec failed: the errno pipe says why.
            WaitEvent::Exited { .. } | WaitEvent::Killed { .. } => return Ok(()),
            _ => ptrace::cont(child, 0)?,
        }
    }
}

fn reap(pid: Tid) {
    let mut status = 0;
    // SAFETY: reaping our own child.
    unsafe {
        libc::waitpid(pid, &mut status, libc::__WALL);
    }
}

/// Finds `program` on PATH the way a shell would, unless it already names a path.
pub(crate) fn resolve_program(program: &str) -> Option<PathBuf> {
    if program.contains('/') {
        let p = PathBuf::from(program);
        return p.exists().then_some(p);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|p| p.is_file())
}
