//! A signal handler run through during a step by lines. A step that delivers a signal the
//! program handles (`SIGALRM` from a timer, a `SIGSEGV` passed on) stops at the handler's
//! first instruction: the kernel builds the signal frame and the trap flag fires there.
//! `next()` then went on stepping inside the handler, stopped on its lines, and ended in
//! `__restore_rt` with no line at all. gdb's rule instead (a "step-resume breakpoint" at the
//! interrupted pc): the thread runs the handler at full speed, alone, until it is back where
//! it was interrupted, and the step goes on from there as if no signal had come. A
//! breakpoint inside the handler still stops there.
//!
//! Only steps by lines ask for this (`run_handlers`); an instruction step (`step()`, a
//! `step` listener, a recording) sees the handler's instructions one by one.

use std::time::Instant;

use super::sites::INT3;
use super::thread::{RunState, StopKind};
use super::{Inferior, PassFn, Stop};
use crate::os::{procfs, ptrace, OsError, Tid};

impl Inferior {
    /// Delivers `sig` to `tid`, which is at `from`, and runs its handler through to `from`
    /// again: `Some(Ok(None))` once back there (the signal taken; the step then executes
    /// the instruction at `from`), `Some(Ok(Some(stop)))` when another stop came first (a
    /// breakpoint in the handler, the program's end). `None` when the signal runs no
    /// handler of the program's here (ignored, default, blocked) or `from` cannot take a
    /// site of scry's (the program wrote over one there): the step delivers it as before.
    /// `lifted`: a breakpoint at `from` has its int3 taken out for the step.
    pub(super) fn run_handler_through(
        &mut self,
        tid: Tid,
        sig: i32,
        from: u64,
        lifted: bool,
        deadline: Instant,
        pass: PassFn,
    ) -> Option<Result<Option<Stop>, OsError>> {
        if !self.handles(tid, sig) {
            return None;
        }
        let original = self.sites.original(from);
        if original.is_some() && !lifted {
            return None;
        }
        // The handler returns (through sigreturn) to `from`, not yet executed: a site there
        // ends the run, scry's own int3 for the while, the user's int3 put back, or the
        // user's debug register. That one fires only with the resume flag clear in the
        // flags the signal frame saves (the kernel sets it at a hit, so the instruction runs
        // on resuming, and sigreturn would bring it back).
        let hardware = original.is_none() && self.has_site(from);
        let placed = match original {
            None if hardware => self.clear_resume_flag(tid).is_ok(),
            None => self.insert_site(from).is_ok(),
            Some(_) => self.mem.write(from, &[INT3]).is_ok(),
        };
        if !placed {
            return None;
        }
        let ran = self.run_alone_to(tid, from, sig, deadline, pass);
        match original {
            None if hardware => {}
            None => {
                let _ = self.remove_site(from);
            }
            Some(byte) => {
                let _ = self.mem.write(from, &[byte]);
            }
        }
        Some(ran.map(|stop| match stop {
            Stop::Step { .. } => None,
            other => Some(other),
        }))
    }

    fn clear_resume_flag(&mut self, tid: Tid) -> Result<(), OsError> {
        let mut regs = *self.regs(tid)?;
        regs.eflags &= !super::points::RF;
        self.set_regs(tid, &regs)
    }

    /// `signal` arrived for `tid` while it steps the instruction at `from`: stepping by
    /// lines, its handler runs through to where it came (the instruction not run yet, or
    /// run: a system call). `Some(Ok(None))`: the step goes on (resumed); `Some(Ok(Some))`:
    /// it ends with that stop; `None`: not stepping by lines, or no handler to run through,
    /// and the step delivers the signal.
    pub(super) fn signal_in_line_step(
        &mut self,
        tid: Tid,
        signal: i32,
        from: u64,
        deadline: Instant,
        pass: PassFn,
    ) -> Option<Result<Option<Stop>, OsError>> {
        if !self.run_handlers {
            return None;
        }
        self.mark(tid, RunState::Stopped, StopKind::Event);
        let at = match self.pc(tid) {
            Ok(at) => at,
            Err(e) => return Some(Err(e)),
        };
        let ran = self.run_handler_through(tid, signal, at, false, deadline, pass)?;
        Some((|| {
            if let Some(stop) = ran? {
                return Ok(Some(stop));
            }
            if at != from {
                return Ok(Some(Stop::Step { tid }));
            }
            self.single_step(tid, 0)?;
            self.mark(tid, RunState::Running, StopKind::Event);
            Ok(None)
        })())
    }

    /// Whether delivering `sig` to `tid` now runs a handler of the program's: caught
    /// (`SigCgt`, the process's dispositions) and not blocked by the thread.
    fn handles(&self, tid: Tid, sig: i32) -> bool {
        if !(1..=64).contains(&sig) {
            return false;
        }
        let bit = 1u64 << (sig - 1);
        let caught = procfs::status_text(self.pid)
            .and_then(|s| procfs::signal_set(&s, "SigCgt"))
            .is_some_and(|c| c & bit != 0);
        caught && ptrace::get_sigmask(tid).is_ok_and(|m| m & bit == 0)
    }
}
