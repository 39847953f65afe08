//! The OS layer: the only place that speaks ptrace, libc and `unsafe`. Everything above sees
//! typed requests and results.

pub(crate) mod affinity;
pub(crate) mod alloc;
pub(crate) mod debugregs;
pub(crate) mod files;
pub(crate) mod fpregs;
pub(crate) mod guardian;
pub(crate) mod inherited;
pub(crate) mod interrupt;
pub(crate) mod keeper;
pub(crate) mod mapped;
pub(crate) mod memory;
pub(crate) mod pipe;
pub(crate) mod procfs;
pub(crate) mod ptrace;
pub(crate) mod pty;
pub(crate) mod regs;
pub(crate) mod seccomp;
pub(crate) mod shared;
pub(crate) mod signals;
pub(crate) mod spawn;
pub(crate) mod stdin;
pub(crate) mod syscalls;
pub(crate) mod timer;
pub(crate) mod wait;

use std::fmt;

/// A kernel thread id (a process id is its leader's tid).
pub(crate) type Tid = i32;

/// Makes scry unattachable by the programs it debugs: a process that is not dumpable can be
/// ptrace-attached only by one with CAP_SYS_PTRACE (a program that attached to its debugger
/// would stop it and deadlock the session). It also means scry leaves no core dump. Called
/// first thing in every process of scry's binary (exec resets it).
pub fn protect_self() {
    // SAFETY: a prctl with integer arguments on the calling process.
    unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) };
}

/// scry's effective user and group ids (what a spawned program runs as).
pub(crate) fn effective_ids() -> (u32, u32) {
    // SAFETY: geteuid and getegid have no preconditions and cannot fail.
    unsafe { (libc::geteuid(), libc::getegid()) }
}

#[derive(Debug)]
pub enum OsError {
    Ptrace {
        what: &'static str,
        tid: Tid,
        errno: nix::Error,
    },
    Io {
        what: &'static str,
        err: std::io::Error,
    },
    Unmapped {
        addr: u64,
        len: usize,
    },
    Unwritable {
        addr: u64,
        len: usize,
    },
    /// Starting or attaching to a process failed.
    Spawn(String),
    /// The session is read-only: this would change the program.
    ReadOnly(String),
    /// A thread that cannot be read now (stuck in the kernel, or running inside a listener).
    ThreadUnavailable(String),
    /// No debug register is free (breakpoints in a read-only session, watchpoints).
    DebugRegisters(String),
    /// A system call the debugger makes the program run (seccomp, mmap) did not complete.
    Injected(String),
    /// The keeper process that serves a detached program's caught system calls.
    Keeper(String),
    /// A core file lacks what was asked.
    Core(String),
    /// A GDB-remote stub failed, refused, or is gone.
    Remote(String),
}

impl fmt::Display for OsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OsError::Ptrace { what, tid, errno } => {
                write!(f, "ptrace {what} on thread {tid} failed: {}", errno.desc())
            }
            OsError::Io { what, err } => write!(f, "{what}: {err}"),
            OsError::Unmapped { addr, len } => {
                write!(
                    f,
                    "cannot read {len} byte{} at {addr:#x}: address not mapped",
                    plural(*len)
                )
            }
            OsError::Unwritable { addr, len } => {
                write!(
                    f,
                    "cannot write {len} byte{} at {addr:#x}: address not mapped",
                    plural(*len)
                )
            }
            OsError::Spawn(msg)
            | OsError::ReadOnly(msg)
            | OsError::ThreadUnavailable(msg)
            | OsError::DebugRegisters(msg)
            | OsError::Injected(msg)
            | OsError::Keeper(msg)
            | OsError::Remote(msg)
            | OsError::Core(msg) => write!(f, "{msg}"),
        }
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

impl std::error::Error for OsError {}

impl OsError {
    /// The thread or process is gone (ESRCH): callers treat this as "it exited under us".
    pub fn is_gone(&self) -> bool {
        matches!(
            self,
            OsError::Ptrace {
                errno: nix::Error::ESRCH,
                ..
            }
        )
    }
}
