//! Keeping the program's SIGTRAP disposition. Every trap scry causes (an int3 of its own, a
//! single step, a watchpoint) reaches the program as a forced SIGTRAP, and the kernel forces
//! it the hard way: if the program ignores SIGTRAP, or blocks it in that thread, the handler
//! is reset to SIG_DFL and the signal unblocked. Without a fix, a program that ignores SIGTRAP
//! and later raises it would be killed under scry. So when a run starts with SIGTRAP ignored
//! or blocked anywhere, scry notes the disposition and the masks, and after each trap of its
//! own it puts them back: the mask with PTRACE_SETSIGMASK, the disposition with an injected
//! `rt_sigaction`. A program with a SIGTRAP handler is watched the same way, since a thread
//! running that handler blocks SIGTRAP: after each trap of scry's the handler's presence is
//! checked, and a handler the kernel took away is put back with the thread's mask. Any
//! other disposition the program changes in the middle of a run is seen at the next run.

use super::Inferior;
use crate::os::{procfs, ptrace, OsError, Tid};

const SIGTRAP_BIT: u64 = 1 << (libc::SIGTRAP - 1);
const NR_RT_SIGACTION: u64 = 13;
/// `struct kernel_sigaction` on x86-64: handler, flags, restorer, an 8-byte mask.
const KERNEL_SIGACTION: usize = 32;

pub(super) struct TrapGuard {
    /// The disposition to put back where the kernel reset it, if it can be reset.
    action: Option<[u8; KERNEL_SIGACTION]>,
    ignored: bool,
    /// The program has a SIGTRAP handler: a thread that blocks SIGTRAP later in the run
    /// (one running that handler, which blocks its own signal) has it reset by the next trap
    /// of scry's there. Seen as the handler gone from `SigCgt` after such a trap.
    caught: bool,
    /// Threads that had SIGTRAP blocked when the run began.
    blocked: Vec<Tid>,
}

impl Inferior {
    /// At the start of a run: is the program's SIGTRAP disposition one the kernel would
    /// change? Costs one status read and a mask read per thread.
    pub(super) fn guard_sigtrap(&mut self) {
        self.trap_guard = None;
        let Some(status) = procfs::status_text(self.pid) else {
            return;
        };
        let ignored = procfs::signal_set(&status, "SigIgn").unwrap_or(0) & SIGTRAP_BIT != 0;
        let caught = procfs::signal_set(&status, "SigCgt").unwrap_or(0) & SIGTRAP_BIT != 0;
        let blocked: Vec<Tid> = self
            .thread_ids()
            .into_iter()
            .filter(|&t| ptrace::get_sigmask(t).is_ok_and(|m| m & SIGTRAP_BIT != 0))
            .collect();
        if !ignored && !caught && blocked.is_empty() {
            return;
        }
        // A handler is reset only where SIGTRAP is blocked; an ignored one everywhere.
        let action = if ignored || caught {
            self.read_sigtrap_action().or_else(|| {
                // No thread could run the call (each is about to receive a signal): an
                // ignored disposition is the whole of what matters.
                ignored.then(|| {
                    let mut ign = [0u8; KERNEL_SIGACTION];
                    ign[..8].copy_from_slice(&(libc::SIG_IGN as u64).to_ne_bytes());
                    ign
                })
            })
        } else {
            None
        };
        self.trap_guard = Some(TrapGuard {
            action,
            ignored,
            caught,
            blocked,
        });
    }

    /// The current SIGTRAP action, read with an injected `rt_sigaction` in any thread that
    /// can run one.
    fn read_sigtrap_action(&mut self) -> Option<[u8; KERNEL_SIGACTION]> {
        for tid in self.thread_ids() {
            if !self.injectable(tid) {
                continue;
            }
            let mut old = [0u8; KERNEL_SIGACTION];
            let rc = self.inject_syscall(tid, NR_RT_SIGACTION, &mut old, |at| {
                [libc::SIGTRAP as u64, 0, at, 8, 0, 0]
            });
            if matches!(rc, Ok(0)) {
                return Some(old);
            }
        }
        None
    }

    /// After a trap scry caused in `tid`: puts back what the forced SIGTRAP changed.
    pub(super) fn after_our_trap(&mut self, tid: Tid) {
        let Some(guard) = &self.trap_guard else {
            return;
        };
        let action = guard.action;
        // A default disposition reset to the default is unchanged.
        let was_default = !guard.ignored && !guard.caught;
        // A thread that blocked SIGTRAP since the run began (inside the program's handler):
        // the kernel took the handler away, which says the signal was blocked there.
        let blocked = guard.blocked.contains(&tid)
            || (guard.caught
                && procfs::status_text(self.pid)
                    .and_then(|s| procfs::signal_set(&s, "SigCgt"))
                    .is_some_and(|cgt| cgt & SIGTRAP_BIT == 0));
        let reset = guard.ignored || blocked;
        if blocked {
            if let Ok(mask) = ptrace::get_sigmask(tid) {
                let _ = ptrace::set_sigmask(tid, mask | SIGTRAP_BIT);
            }
        }
        let restored = match (reset, action) {
            (false, _) => true,
            (true, Some(mut action)) => self
                .inject_syscall(tid, NR_RT_SIGACTION, &mut action, |at| {
                    [libc::SIGTRAP as u64, at, 0, 8, 0, 0]
                })
                .is_ok(),
            (true, None) => was_default,
        };
        if !restored {
            // Said, never silent: the program will find SIG_DFL where it set its own.
            let why = if self.read_only {
                "a read-only session cannot put it back"
            } else {
                "scry could not put it back"
            };
            let note = format!(
                "a trap of scry's in thread {tid} made the kernel reset the program's SIGTRAP disposition to the default (it was ignored or blocked there), and {why}"
            );
            if !self.catch.warnings.contains(&note) {
                self.catch.warnings.push(note);
            }
        }
    }
}

impl Inferior {
    /// Resumes `tid` delivering `sig`. A SIGTRAP the program has a handler for is delivered
    /// with a single step, which stops at the handler's first instruction with a plain ptrace
    /// stop (no trap, so nothing is reset): there the guard learns the handler and the mask
    /// the handler runs with (SIGTRAP blocked), before a breakpoint of scry's in the handler
    /// would make the kernel take the handler away.
    pub(super) fn deliver_signal(&mut self, tid: Tid, sig: i32) -> Result<(), OsError> {
        let caught = sig == libc::SIGTRAP
            && procfs::status_text(self.pid)
                .and_then(|s| procfs::signal_set(&s, "SigCgt"))
                .is_some_and(|cgt| cgt & SIGTRAP_BIT != 0);
        if !caught {
            return self.resume_request(tid, sig);
        }
        self.single_step(tid, sig)?;
        self.entering_handler(tid);
        Ok(())
    }

    /// `tid` was just resumed into the program's SIGTRAP handler by a single step.
    pub(super) fn entering_handler(&mut self, tid: Tid) {
        if let Some(t) = self.threads.get_mut(&tid) {
            t.entering_handler = true;
        }
    }

    /// At the end of a step of scry's in `tid`: if it was the one into the program's
    /// SIGTRAP handler, the guard is brought up to date.
    pub(super) fn after_step_trap(&mut self, tid: Tid) {
        let entered = self
            .threads
            .get_mut(&tid)
            .is_some_and(|t| std::mem::take(&mut t.entering_handler));
        if entered {
            self.guard_sigtrap();
        }
    }
}
