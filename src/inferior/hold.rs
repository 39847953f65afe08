//! Keeping both sides of a fork under control (`FollowFork::Both`, gdb's `detach-on-fork
//! off`): the parent goes on and the child is held, every thread of it in a ptrace stop,
//! until the session selects it. A held process carries none of scry's int3 bytes or debug
//! registers: the session arms its own breakpoints and watchpoints in whichever process it
//! selects, from its lists, so there is one way of arming a process (as at spawn, attach
//! and exec) and nothing to keep in step while a process waits.

use super::Inferior;
use crate::os::{OsError, Tid};

impl Inferior {
    /// At a fork event: takes `child` (already traced through PTRACE_O_TRACEFORK) as a held
    /// process of its own. Its memory is a copy of the parent's, int3 bytes included; they
    /// are written back to the original bytes. It inherits the parent's origin: a child of a
    /// spawned program is killed with it, one of an attached program detached.
    pub(super) fn hold_child(&mut self, child: Tid) -> Result<(), OsError> {
        // The child starts in a stop of its own; collect it.
        if !self.collect_child(child) {
            return Ok(());
        }
        // A fork bomb is bounded: beyond the limit, or when the system refuses what keeping
        // one more takes, the child runs untraced as it would alone, and the session says so.
        // Descriptors are kept in reserve for what every stop reads (/proc, files): a process
        // kept takes one (its memory).
        const RESERVE: u64 = 64;
        let controlled = super::tree::count();
        let room = crate::os::procfs::descriptors_left();
        let kept = if controlled >= self.process_limit {
            Err(format!(
                "{controlled} processes under control (config.max_processes)"
            ))
        } else if let Some((left, limit)) = room.filter(|r| r.0 < RESERVE) {
            Err(format!(
                "scry has {left} of {limit} file descriptors left (ulimit -n)"
            ))
        } else {
            Inferior::new(child, self.origin, &[child]).map_err(|e| e.to_string())
        };
        let mut held = match kept {
            Ok(held) => held,
            Err(why) => {
                self.let_child_go(child, false)?;
                self.let_go.push((child, why));
                return Ok(());
            }
        };
        for (addr, orig) in self.code_to_restore() {
            let _ = held.mem.write(addr, &orig);
        }
        // Debug registers are not inherited by a fork child; a seccomp filter is.
        held.catch = self.catch.inherited();
        held.follow_fork = self.follow_fork;
        held.process_limit = self.process_limit;
        self.forked.push(held);
        Ok(())
    }

    /// Fork children let go untraced since the last time this was asked, each with why.
    pub(crate) fn take_let_go(&mut self) -> Vec<(Tid, String)> {
        std::mem::take(&mut self.let_go)
    }

    /// Fork children held since the last time this was asked.
    pub(crate) fn take_forked(&mut self) -> Vec<Inferior> {
        std::mem::take(&mut self.forked)
    }

    /// Makes this process a held one: every thread stopped, scry's int3 bytes and debug
    /// registers taken out (the session arms them again when it selects it).
    pub(crate) fn hold(&mut self, pass: super::PassFn) -> Result<(), OsError> {
        self.stop_all(pass)?;
        self.partial = None;
        self.remove_all_sites();
        self.clear_all_watches();
        Ok(())
    }

    /// Gives back a stop taken from this process (the session reports another first): kept
    /// for its next run, as a stop met while stopping everything is.
    pub(crate) fn requeue(&mut self, stop: super::Stop) {
        self.hold_stop(stop);
    }

    /// The process still exists and is traced by scry (it was not killed from outside).
    pub(crate) fn still_there(&self) -> bool {
        !self.dead
            && match crate::os::procfs::thread_state(self.pid, self.pid) {
                Some(state) => !matches!(state, 'Z' | 'X'),
                // An unreadable stat is a gone process only if its /proc entry is gone: a
                // read refused for want of a descriptor (a fork bomb) is not one.
                None => crate::os::procfs::exists(self.pid),
            }
    }

    /// The number of threads scry knows in this process.
    pub(crate) fn thread_count(&self) -> usize {
        self.threads.len()
    }
}
