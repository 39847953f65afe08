//! waitpid, decoded into the stop kinds ptrace distinguishes.

use super::{OsError, Tid};

const PTRACE_EVENT_FORK: i32 = 1;
const PTRACE_EVENT_VFORK: i32 = 2;
const PTRACE_EVENT_CLONE: i32 = 3;
const PTRACE_EVENT_EXEC: i32 = 4;
const PTRACE_EVENT_VFORK_DONE: i32 = 5;
const PTRACE_EVENT_EXIT: i32 = 6;
const PTRACE_EVENT_SECCOMP: i32 = 7;
const PTRACE_EVENT_STOP: i32 = 128;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WaitEvent {
    Exited {
        tid: Tid,
        code: i32,
    },
    Killed {
        tid: Tid,
        signal: i32,
    },
    /// A system-call entry or exit stop (PTRACE_SYSCALL with TRACESYSGOOD).
    SyscallStop {
        tid: Tid,
    },
    /// A seccomp filter returned SECCOMP_RET_TRACE: the system call is about to run.
    Seccomp {
        tid: Tid,
    },
    /// Signal-delivery-stop: the only stop whose signal is passed on when resumed.
    Signal {
        tid: Tid,
        signal: i32,
    },
    /// PTRACE_EVENT_STOP. With SIGTRAP it is a PTRACE_INTERRUPT (or a new thread's first stop);
    /// with SIGSTOP/SIGTSTP/SIGTTIN/SIGTTOU it is a group-stop.
    EventStop {
        tid: Tid,
        signal: i32,
    },
    Clone {
        tid: Tid,
    },
    Fork {
        tid: Tid,
    },
    Vfork {
        tid: Tid,
    },
    VforkDone {
        tid: Tid,
    },
    Exec {
        tid: Tid,
    },
    ExitEvent {
        tid: Tid,
    },
    Other {
        tid: Tid,
        status: i32,
    },
}

impl WaitEvent {
    pub(crate) fn tid(&self) -> Tid {
        match *self {
            WaitEvent::Exited { tid, .. }
            | WaitEvent::Killed { tid, .. }
            | WaitEvent::Signal { tid, .. }
            | WaitEvent::SyscallStop { tid }
            | WaitEvent::Seccomp { tid }
            | WaitEvent::EventStop { tid, .. }
            | WaitEvent::Clone { tid }
            | WaitEvent::Fork { tid }
            | WaitEvent::Vfork { tid }
            | WaitEvent::VforkDone { tid }
            | WaitEvent::Exec { tid }
            | WaitEvent::ExitEvent { tid }
            | WaitEvent::Other { tid, .. } => tid,
        }
    }

    /// The thread no longer exists.
    pub(crate) fn is_gone(&self) -> bool {
        matches!(self, WaitEvent::Exited { .. } | WaitEvent::Killed { .. })
    }
}

/// Decodes a raw wait status (pure, so it can be tested without a process).
pub(crate) fn decode(tid: Tid, status: i32) -> WaitEvent {
    if libc::WIFEXITED(status) {
        return WaitEvent::Exited {
            tid,
            code: libc::WEXITSTATUS(status),
        };
    }
    if libc::WIFSIGNALED(status) {
        return WaitEvent::Killed {
            tid,
            signal: libc::WTERMSIG(status),
        };
    }
    if !libc::WIFSTOPPED(status) {
        return WaitEvent::Other { tid, status };
    }
    let signal = libc::WSTOPSIG(status);
    let event = (status >> 16) & 0xff;
    match event {
        0 if signal == libc::SIGTRAP | 0x80 => WaitEvent::SyscallStop { tid },
        0 => WaitEvent::Signal { tid, signal },
        PTRACE_EVENT_STOP => WaitEvent::EventStop { tid, signal },
        PTRACE_EVENT_CLONE => WaitEvent::Clone { tid },
        PTRACE_EVENT_FORK => WaitEvent::Fork { tid },
        PTRACE_EVENT_VFORK => WaitEvent::Vfork { tid },
        PTRACE_EVENT_VFORK_DONE => WaitEvent::VforkDone { tid },
        PTRACE_EVENT_EXEC => WaitEvent::Exec { tid },
        PTRACE_EVENT_EXIT => WaitEvent::ExitEvent { tid },
        PTRACE_EVENT_SECCOMP => WaitEvent::Seccomp { tid },
        _ => WaitEvent::Other { tid, status },
    }
}

/// `SCRY_TRACE=1` prints every wait event on stderr: a diagnostic for scry's developers.
pub(crate) fn trace_enabled() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("SCRY_TRACE").is_some_and(|v| v != "0"))
}

/// Why a wait returned without an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WaitOutcome {
    Event(WaitEvent),
    /// A signal (the deadline timer) interrupted the wait.
    Interrupted,
    /// WNOHANG and nothing was ready.
    NothingYet,
}

/// Waits for any traced thread (`tid = -1`) or one thread. `__WALL` so that threads (clone
/// children) are reported too.
pub(crate) fn wait(tid: Tid, nohang: bool) -> Result<WaitOutcome, OsError> {
    let mut status = 0;
    let flags = libc::__WALL | if nohang { libc::WNOHANG } else { 0 };
    // SAFETY: waitpid writes one int through the pointer we own.
    let rc = unsafe { libc::waitpid(tid, &mut status, flags) };
    if rc > 0 {
        let event = decode(rc, status);
        if trace_enabled() {
            eprintln!("scry: wait: {event:?}");
        }
        return Ok(WaitOutcome::Event(event));
    }
    if rc == 0 {
        return Ok(WaitOutcome::NothingYet);
    }
    match nix::Error::last() {
        nix::Error::EINTR => Ok(WaitOutcome::Interrupted),
        errno => Err(OsError::Ptrace {
            what: "waitpid",
            tid,
            errno,
        }),
    }
}

/// Polls for any traced thread's event for at most `max`, yielding the CPU between polls,
/// before the caller blocks in [`wait`]. Measured on a 2-vCPU VM: a continue's int3 round
/// trip (a logpoint) between a tracer and a tracee on different cores is dominated by the
/// tracer's own wake-up from a blocking waitpid; polling for 200 us took 50,000 logpoint
/// hits from 8.0-9.1 s to 4.9-5.0 s. Yielding, not spinning: a tracee that shares the CPU
/// (both pinned) runs at once. `NothingYet` when nothing came.
pub(crate) fn wait_briefly(max: std::time::Duration) -> Result<WaitOutcome, OsError> {
    let until = std::time::Instant::now() + max;
    loop {
        match wait(-1, true)? {
            WaitOutcome::NothingYet => {}
            other => return Ok(other),
        }
        if std::time::Instant::now() >= until {
            return Ok(WaitOutcome::NothingYet);
        }
        // SAFETY: no arguments, no memory.
        unsafe { libc::sched_yield() };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_ptrace_statuses() {
        // Layout: (event << 16) | (stopsig << 8) | 0x7f for stops.
        let stop = |sig: i32, ev: i32| (ev << 16) | (sig << 8) | 0x7f;
        assert_eq!(
            decode(7, stop(11, 0)),
            WaitEvent::Signal { tid: 7, signal: 11 }
        );
        assert_eq!(decode(7, stop(5, 3)), WaitEvent::Clone { tid: 7 });
        assert_eq!(decode(7, stop(0x85, 0)), WaitEvent::SyscallStop { tid: 7 });
        assert_eq!(decode(7, stop(5, 4)), WaitEvent::Exec { tid: 7 });
        assert_eq!(decode(7, stop(5, 7)), WaitEvent::Seccomp { tid: 7 });
        assert_eq!(
            decode(7, stop(19, 128)),
            WaitEvent::EventStop { tid: 7, signal: 19 }
        );
        assert_eq!(decode(7, 3 << 8), WaitEvent::Exited { tid: 7, code: 3 });
        assert_eq!(decode(7, 9), WaitEvent::Killed { tid: 7, signal: 9 });
    }
}
