//! Following a fork child instead of the parent (gdb's `follow-fork-mode child`): the case
//! of a server whose forked worker crashes. At the fork event the child is already traced
//! (PTRACE_O_TRACEFORK) and holds a copy of the parent's memory, int3 bytes included, so
//! every breakpoint applies to it as it is. The parent is cleaned (its int3 bytes and debug
//! registers taken out) and let go; the child becomes the process scry debugs.

use super::thread::Thread;
use super::Inferior;
use crate::os::memory::ProcMem;
use crate::os::{ptrace, OsError, Tid};

impl Inferior {
    /// At `parent_tid`'s fork event: switches to the child. Every thread of the parent is
    /// stopped, cleaned and detached.
    pub(super) fn follow_child(
        &mut self,
        parent_tid: Tid,
        child: Tid,
        pass: super::PassFn,
    ) -> Result<(), OsError> {
        // The child starts in a stop of its own; collect it.
        if !self.collect_child(child) {
            return Ok(());
        }
        let parent = self.pid;
        if let Some(t) = self.threads.get_mut(&parent_tid) {
            t.mark_stopped(super::thread::StopKind::Event);
        }
        self.stop_all(pass)?;
        self.release_before_follow(parent_tid);
        // The parent leaves with its own code back and no watchpoints of scry's.
        let sites: Vec<u64> = self.sites.addrs();
        for addr in &sites {
            if let Some(orig) = self.sites.original(*addr) {
                if self.int3_in_memory(*addr) {
                    let _ = self.mem.write(*addr, &[orig]);
                }
            }
        }
        let watching = self.dr7 != 0;
        for tid in self.thread_ids() {
            if watching {
                let _ = ptrace::write_debugreg(tid, crate::os::debugregs::DR7, 0);
            }
            let sig = self.take_signal(tid);
            match ptrace::detach(tid, sig) {
                Ok(()) => {}
                Err(e) if e.is_gone() => {}
                Err(e) => return Err(e),
            }
        }
        super::tree::unregister(parent);
        super::tree::register(child);
        self.pid = child;
        self.threads.clear();
        self.threads.insert(child, Thread::new_stopped(child));
        self.selected = child;
        self.mem = ProcMem::open(child)?;
        self.queued.clear();
        self.partial = None;
        self.syscall_gadget = None;
        if watching {
            self.program_debugregs(child)?;
        }
        self.followed = Some((parent, child));
        Ok(())
    }

    /// The fork scry followed since the last time this was asked: (parent, child).
    pub(crate) fn take_followed(&mut self) -> Option<(Tid, Tid)> {
        self.followed.take()
    }
}
