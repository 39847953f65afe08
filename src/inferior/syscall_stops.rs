//! Syscall stops as they arrive: which ones are caught calls to report (at entry, at exit,
//! or both), and how a thread goes on (PTRACE_SYSCALL while its exit is awaited or in
//! PTRACE_SYSCALL mode, PTRACE_CONT otherwise, so an uncaught call never stops twice).
//!
//! Each call is seen at one entry stop: its seccomp stop when scry's filter traces it, else
//! (PTRACE_SYSCALL mode) its syscall-entry stop. What its pointer arguments point to is read
//! there, before the call can change it, and kept until its exit is reported.

use super::catch::{CatchMode, Pending};
use super::{Inferior, Stop};
use crate::os::ptrace::{self, SyscallPoint};
use crate::os::seccomp::SCRY_DATA;
use crate::os::syscalls::flags::is_restart;
use crate::os::syscalls::render;
use crate::os::{OsError, Tid};

/// What the kernel runs to go on with a call interrupted by ERESTART_RESTARTBLOCK.
const NR_RESTART_SYSCALL: u64 = 219;
/// How a signal handler returns: its exit restores the interrupted registers.
const NR_RT_SIGRETURN: u64 = 15;

impl Inferior {
    /// A syscall-stop or seccomp stop of `tid` (marked stopped by the caller): the stop to
    /// report when it is a caught call, else `None` and the caller lets the thread go on.
    pub(super) fn syscall_stop(&mut self, tid: Tid) -> Result<Option<Stop>, OsError> {
        let info = match ptrace::syscall_info(tid) {
            Ok(info) => info,
            // Gone under us: its exit report is on its way.
            Err(e) if e.is_gone() => return Ok(None),
            Err(e) => return Err(e),
        };
        self.sigaction_syscall(tid, &info.point);
        match info.point {
            SyscallPoint::Exit { ret } => Ok(self.syscall_exit(tid, ret, info.ip)),
            SyscallPoint::Entry { nr, args } => {
                self.catch.at_entry.insert(tid);
                Ok(self.syscall_entry(tid, nr, args, info.ip, false))
            }
            // A filter of the program's own asked for its tracer: the call runs, as a
            // tracer that does not care would let it.
            SyscallPoint::Seccomp { data, .. } if data != SCRY_DATA => {
                self.catch.at_entry.insert(tid);
                Ok(None)
            }
            SyscallPoint::Seccomp { nr, args, .. } => {
                self.catch.at_entry.insert(tid);
                Ok(self.syscall_entry(tid, nr, args, info.ip, true))
            }
            SyscallPoint::None => Ok(None),
        }
    }

    fn syscall_exit(&mut self, tid: Tid, ret: i64, ip: u64) -> Option<Stop> {
        if !self.catch.awaiting.contains_key(&tid) {
            // The handler that interrupted a call returns to just after the call's
            // instruction with no restart to come: the call ends with what it gives back
            // (EINTR), as the program sees it.
            let ended = self
                .catch
                .interrupted
                .get(&tid)
                .is_some_and(|p| p.sigreturn && p.ip == ip && !is_restart(ret));
            if !ended {
                return None;
            }
            let p = self.catch.interrupted.remove(&tid)?;
            return self.exit_stop(tid, p, ret);
        }
        if is_restart(ret) {
            // Not the end yet: the kernel runs the call again (scry's own interrupt does
            // this to a blocking call, and the program never sees it), or a handler runs
            // and the call returns EINTR after it.
            let mut p = self.catch.awaiting.remove(&tid)?;
            p.restarting = true;
            p.sigreturn = false;
            self.catch.interrupted.insert(tid, p);
            return None;
        }
        let p = self.catch.awaiting.remove(&tid)?;
        self.exit_stop(tid, p, ret)
    }

    /// The exit of a caught call, when its exit is wanted.
    fn exit_stop(&mut self, tid: Tid, p: Pending, ret: i64) -> Option<Stop> {
        if !self.catch.exit.contains(p.nr) {
            return None;
        }
        self.catch.last.insert(tid, p.captured);
        Some(Stop::Syscall {
            tid,
            nr: p.nr,
            args: p.args,
            ret: Some(ret),
        })
    }

    fn syscall_entry(
        &mut self,
        tid: Tid,
        nr: u64,
        args: [u64; 6],
        ip: u64,
        seccomp: bool,
    ) -> Option<Stop> {
        if let Some(p) = self.catch.interrupted.get_mut(&tid) {
            if p.ip == ip && (nr == p.nr || nr == NR_RESTART_SYSCALL) {
                // The interrupted call, run again: one call, reported once at its exit.
                let p = self.catch.interrupted.remove(&tid)?;
                self.catch.awaiting.insert(tid, p);
                return None;
            }
            // A handler runs: its own calls, then its rt_sigreturn.
            p.sigreturn = nr == NR_RT_SIGRETURN;
        }
        if let Some(p) = self.catch.awaiting.get(&tid) {
            let same = p.ip == ip && (nr == p.nr || (p.restarting && nr == NR_RESTART_SYSCALL));
            if same {
                // The call whose exit is awaited, seen again: its seccomp stop after its
                // PTRACE_SYSCALL entry stop, or its restart.
                return None;
            }
            // It ended without an exit stop (a signal handler ran instead of the restart,
            // or the thread was single-stepped past it).
            self.catch.awaiting.remove(&tid);
        }
        let counted = if seccomp {
            self.catch.mode != CatchMode::Ptrace
        } else {
            self.catch.mode == CatchMode::Ptrace
        };
        if !counted {
            return None;
        }
        let want_entry = self.catch.entry.contains(nr);
        let want_exit = self.catch.exit.contains(nr);
        if !want_entry && !want_exit {
            return None;
        }
        let captured = render::capture_entry(nr, &args, &mut |addr, buf| {
            self.read_memory_partial(addr, buf)
        });
        if want_exit {
            self.catch.awaiting.insert(
                tid,
                Pending {
                    nr,
                    ip,
                    args,
                    captured: captured.clone(),
                    restarting: false,
                    sigreturn: false,
                },
            );
        }
        if !want_entry {
            return None;
        }
        self.catch.last.insert(tid, captured);
        Some(Stop::Syscall {
            tid,
            nr,
            args,
            ret: None,
        })
    }

    /// Resumes `tid` (with `sig`) the way caught system calls need: PTRACE_SYSCALL when its
    /// call's exit is awaited or every call is traced that way, PTRACE_CONT otherwise.
    pub(super) fn resume_request(&mut self, tid: Tid, sig: i32) -> Result<(), OsError> {
        self.catch.at_entry.remove(&tid);
        if let Some(t) = self.threads.get_mut(&tid) {
            t.stepped = false;
        }
        if self.catch.mode == CatchMode::Ptrace
            || self.sigaction.follows(tid)
            || self.catch.awaiting.contains_key(&tid)
            || self.catch.interrupted.contains_key(&tid)
        {
            ptrace::syscall_step(tid, sig)
        } else {
            ptrace::cont(tid, sig)
        }
    }
}
