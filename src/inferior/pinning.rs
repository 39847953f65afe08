//! Same-core placement for runs of single steps, invisible to the program.
//!
//! Every ptrace stop is a round trip between scry and the traced thread; on different cores
//! each one also pays a cross-CPU wake-up, which on small VMs costs more than the stop itself
//! (see `os::affinity`). Pinning both to one core makes a run of steps several times faster.
//! But a CPU mask is program-visible state: a program reads it (`nproc`,
//! `sched_getaffinity`, `/proc/self/status`) and sets it. So scry pins the target only while
//! it executes instructions that cannot look: a single step of anything but a system call.
//! Before a `syscall` (or `int 0x80`, `sysenter`) is stepped, the program's own mask is back;
//! nothing else can read or change a mask, new threads are only made by system calls, and
//! the other threads of the program are stopped while one is stepped. A `cont()` never pins
//! the program at all: it runs freely and could look at any moment.

use super::Inferior;
use crate::os::{affinity, Tid};

pub(super) struct Pinning {
    cpu: usize,
    /// scry's own mask before the run (scry's placement is its own business).
    ours: affinity::Affinity,
    /// The stepped thread, its own mask, and whether it is pinned right now.
    tid: Tid,
    theirs: affinity::Affinity,
    target_pinned: bool,
}

/// `syscall`, `sysenter`, `int 0x80`: the instructions through which a program could see or
/// change its CPU mask.
fn enters_kernel(bytes: &[u8; 2]) -> bool {
    matches!(bytes, [0x0f, 0x05] | [0x0f, 0x34] | [0xcd, 0x80])
}

impl Inferior {
    /// Before single-stepping `tid` at `pc`: the target runs on scry's core unless the
    /// instruction is a system call, which runs under the program's own mask.
    pub(super) fn place_for_step(&mut self, tid: Tid, pc: u64) {
        if self.pinning.as_ref().is_some_and(|p| p.tid != tid) {
            self.unpin();
        }
        if self.pinning.is_none() && !self.start_pinning(tid) {
            return;
        }
        let mut insn = [0u8; 2];
        let syscall = self.read_memory(pc, &mut insn).is_err() || enters_kernel(&insn);
        let Some(pin) = self.pinning.as_mut() else {
            return;
        };
        if syscall && pin.target_pinned {
            affinity::set(tid, &pin.theirs);
            pin.target_pinned = false;
        } else if !syscall && !pin.target_pinned {
            pin.target_pinned = affinity::set(tid, &affinity::only(pin.cpu));
        }
    }

    fn start_pinning(&mut self, tid: Tid) -> bool {
        let (Some(cpu), Some(ours)) = (affinity::current_cpu(), affinity::get(0)) else {
            return false;
        };
        let Some(theirs) = affinity::get(tid) else {
            return false;
        };
        // Only a core the program was allowed on: never widen what it may use.
        if !theirs.allows(cpu) || !affinity::set(0, &affinity::only(cpu)) {
            return false;
        }
        self.pinning = Some(Pinning {
            cpu,
            ours,
            tid,
            theirs,
            target_pinned: false,
        });
        true
    }

    /// Gives the program its own mask back (before it runs freely) and scry its own.
    pub(super) fn unpin(&mut self) {
        let Some(pin) = self.pinning.take() else {
            return;
        };
        if pin.target_pinned && !self.dead {
            affinity::set(pin.tid, &pin.theirs);
        }
        affinity::set(0, &pin.ours);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn system_call_instructions_are_recognised() {
        assert!(enters_kernel(&[0x0f, 0x05]));
        assert!(enters_kernel(&[0xcd, 0x80]));
        assert!(enters_kernel(&[0x0f, 0x34]));
        assert!(!enters_kernel(&[0x0f, 0x1f]));
        assert!(!enters_kernel(&[0xcd, 0x03]));
    }
}
