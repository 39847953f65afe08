//! Keeping the program's SIGTRAP disposition. Every trap scry causes (an int3 of its own, a
//! single step, a watchpoint) reaches the program as a forced SIGTRAP, and the kernel forces
//! it the hard way: if the program ignores SIGTRAP, or blocks it in that thread, the handler
//! is reset to SIG_DFL and the signal unblocked. Without a fix, a program that ignores SIGTRAP
//! and later raises it would be killed under scry. So when a run starts with SIGTRAP ignored
//! or blocked anywhere, scry notes the disposition and the masks, and after each trap of its
//! own it puts them back: the mask with PTRACE_SETSIGMASK, the disposition with an injected
//! `rt_sigaction`. A program with a SIGTRAP handler is watched the same way, since a thread
//! running that handler blocks SIGTRAP: after each trap of scry's the handler's presence is
//! checked, and a handler the kernel took away is put back with the thread's mask.
//!
//! A disposition the program sets in the middle of a run is learnt as it is set: scry keeps a
//! breakpoint of its own at libc's `__libc_sigaction` (where `signal()`, `sigaction()` and
//! `sigset()` all go). A thread that enters it for SIGTRAP with a new action runs on under
//! PTRACE_SYSCALL until its `rt_sigaction` call returns: the action is read at the call's
//! entry and taken as the guard's at its exit, and no trap of scry's comes in between (a
//! syscall-stop is not a signal, so the kernel resets nothing). A thread single-stepped over
//! the call's `syscall` instruction is handled the same way around the step. A raw
//! `syscall(SYS_rt_sigaction, ...)` outside libc, or a mask blocked in the middle of a run,
//! is seen at the next run.

use std::collections::HashMap;

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

/// Following the program's own `rt_sigaction(SIGTRAP, act, ...)` calls (see the module doc).
#[derive(Default)]
pub(super) struct SigactionWatch {
    /// scry's breakpoint at libc's `__libc_sigaction`, once libc is loaded.
    pub(super) site: Option<u64>,
    /// Threads inside `__libc_sigaction` for SIGTRAP with a new action, run under
    /// PTRACE_SYSCALL: the action the call is installing, once its entry was seen.
    threads: HashMap<Tid, Watched>,
}

#[derive(Default)]
struct Watched {
    action: Option<[u8; KERNEL_SIGACTION]>,
    /// System calls seen so far: a function that makes no rt_sigaction call after a few
    /// (a failed check in libc) is not followed further.
    calls: u32,
}

impl SigactionWatch {
    pub(super) fn follows(&self, tid: Tid) -> bool {
        self.threads.contains_key(&tid)
    }

    pub(super) fn forget(&mut self) {
        *self = Self::default();
    }
}

/// Calls a watched thread may make before its rt_sigaction without being let go.
const WATCHED_CALLS: u32 = 4;

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
        // With a handler, the kernel took it away exactly when SIGTRAP was blocked in
        // `tid` (inside the program's handler, or blocked by the program): that says it,
        // whatever the mask was when the run began or the handler was entered (a handler
        // that has returned unblocked it again, and blocking it anew after a later trap of
        // scry's left SIGTRAP blocked in a thread the program had it unblocked in). Without
        // one, nothing tells, and the mask the run began with is taken.
        let blocked = if guard.caught {
            procfs::status_text(self.pid)
                .and_then(|s| procfs::signal_set(&s, "SigCgt"))
                .is_some_and(|cgt| cgt & SIGTRAP_BIT == 0)
        } else {
            guard.blocked.contains(&tid)
        };
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
            // Once per run, not once per trap or thread (a logpoint in twelve threads said
            // it twelve times on one stop line).
            const SAID: &str = "a trap of scry's in thread ";
            if !self.catch.warnings.iter().any(|w| w.starts_with(SAID)) {
                self.catch.warnings.push(format!(
                    "{SAID}{tid} made the kernel reset the program's SIGTRAP disposition to the default (it was ignored or blocked there), and {why}"
                ));
            }
        }
    }
}

impl Inferior {
    /// Puts scry's breakpoint on libc's `__libc_sigaction` (see the module doc).
    pub(crate) fn watch_sigaction(&mut self, addr: u64) -> Result<(), OsError> {
        if self.sigaction.site == Some(addr) {
            return Ok(());
        }
        self.insert_site(addr)?;
        self.sigaction.site = Some(addr);
        Ok(())
    }

    pub(crate) fn sigaction_site(&self) -> Option<u64> {
        self.sigaction.site
    }

    /// `tid` trapped at scry's breakpoint on `__libc_sigaction`: followed to its
    /// rt_sigaction call when it sets a new SIGTRAP action (rdi, rsi: signal and action).
    pub(super) fn entered_sigaction(&mut self, tid: Tid) {
        let Ok(regs) = self.regs(tid) else {
            return;
        };
        if regs.rdi == libc::SIGTRAP as u64 && regs.rsi != 0 {
            self.sigaction.threads.insert(tid, Watched::default());
        }
    }

    /// A syscall-stop of a thread followed into `__libc_sigaction`: the action read at the
    /// call's entry, the guard brought up to date at its exit.
    pub(super) fn sigaction_syscall(&mut self, tid: Tid, point: &ptrace::SyscallPoint) {
        let Some(watched) = self.sigaction.threads.get_mut(&tid) else {
            return;
        };
        match *point {
            ptrace::SyscallPoint::Entry { nr, args } => {
                watched.calls += 1;
                if nr == NR_RT_SIGACTION && args[0] == libc::SIGTRAP as u64 && args[1] != 0 {
                    let mut action = [0u8; KERNEL_SIGACTION];
                    if self.read_memory(args[1], &mut action).is_ok() {
                        // Re-borrowed: the read above needs `self` whole.
                        if let Some(w) = self.sigaction.threads.get_mut(&tid) {
                            w.action = Some(action);
                        }
                    }
                } else if watched.calls > WATCHED_CALLS {
                    self.sigaction.threads.remove(&tid);
                }
            }
            ptrace::SyscallPoint::Exit { ret } => {
                if let Some(action) = watched.action {
                    self.sigaction.threads.remove(&tid);
                    if ret == 0 {
                        self.sigtrap_action_set(tid, action);
                    }
                }
            }
            _ => {}
        }
    }

    /// Before a single step of `tid`: the action it installs when the instruction is the
    /// `syscall` of an `rt_sigaction(SIGTRAP, act, ...)`.
    pub(super) fn sigaction_in_step(&mut self, tid: Tid) -> Option<[u8; KERNEL_SIGACTION]> {
        // Every step asks: three compares of the cached registers, no copy, no read.
        let regs = self.regs(tid).ok()?;
        if regs.rax != NR_RT_SIGACTION || regs.rdi != libc::SIGTRAP as u64 || regs.rsi == 0 {
            return None;
        }
        let (rip, act) = (regs.rip, regs.rsi);
        let mut insn = [0u8; 2];
        self.read_memory(rip, &mut insn).ok()?;
        if insn != [0x0f, 0x05] {
            return None;
        }
        let mut action = [0u8; KERNEL_SIGACTION];
        self.read_memory(act, &mut action).ok()?;
        Some(action)
    }

    /// After the single step that ran `rt_sigaction(SIGTRAP, action, ...)` in `tid`: the
    /// step's trap came after the call, so the kernel may have reset the new action already;
    /// it is taken as the guard's and put back.
    pub(super) fn sigaction_stepped(&mut self, tid: Tid, action: [u8; KERNEL_SIGACTION]) {
        self.sigaction.threads.remove(&tid);
        let ok = self.regs(tid).is_ok_and(|r| r.rax == 0);
        if ok {
            self.sigtrap_action_set(tid, action);
            self.after_our_trap(tid);
        }
    }

    /// The program has just set SIGTRAP's action to `action` in `tid`: the guard keeps it
    /// for the rest of the run (the threads blocked at the run's start stay as they were).
    fn sigtrap_action_set(&mut self, tid: Tid, action: [u8; KERNEL_SIGACTION]) {
        let handler = u64::from_ne_bytes(action[..8].try_into().unwrap_or_default());
        let ignored = handler == libc::SIG_IGN as u64;
        let caught = handler != libc::SIG_IGN as u64 && handler != libc::SIG_DFL as u64;
        let mut blocked = self
            .trap_guard
            .take()
            .map(|g| g.blocked)
            .unwrap_or_default();
        if !blocked.contains(&tid) && ptrace::get_sigmask(tid).is_ok_and(|m| m & SIGTRAP_BIT != 0) {
            blocked.push(tid);
        }
        if !ignored && !caught && blocked.is_empty() {
            return;
        }
        self.trap_guard = Some(TrapGuard {
            action: Some(action),
            ignored,
            caught,
            blocked,
        });
    }

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
