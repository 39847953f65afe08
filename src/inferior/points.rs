//! Where scry makes the program stop: breakpoint sites, each an int3 byte or a debug register
//! (an execute breakpoint), and hardware watchpoints in the same four debug registers, which
//! are per thread and so programmed into every thread.

use super::sites::INT3;
use super::{Inferior, Stop, WatchSlot};
use crate::os::debugregs::{self, Access};
use crate::os::{ptrace, OsError, Tid};

/// EFLAGS.RF: the next instruction runs without faulting on an instruction breakpoint.
pub(super) const RF: u64 = 1 << 16;
/// `icebp` (`int1`): the program's own debug trap.
const ICEBP: u8 = 0xf1;

impl Inferior {
    pub(crate) fn has_site(&self, addr: u64) -> bool {
        self.sites.contains(addr) || self.hw_sites.contains_key(&addr)
    }

    /// Whether the site at `addr` is a debug register (`Some(true)`) or an int3.
    pub(crate) fn site_is_hardware(&self, addr: u64) -> Option<bool> {
        if self.hw_sites.contains_key(&addr) {
            Some(true)
        } else {
            self.sites.contains(addr).then_some(false)
        }
    }

    /// A site of scry's own (the entry point, the loader's rendezvous, `finish()`'s return
    /// address): an int3, which leaves the debug registers to the user, unless the session
    /// is read-only (then a debug register). Idempotent.
    pub(crate) fn insert_site(&mut self, addr: u64) -> Result<(), OsError> {
        if self.has_site(addr) {
            return Ok(());
        }
        if self.read_only {
            return self.insert_hw_site(addr);
        }
        self.insert_int3(addr)
    }

    /// A user breakpoint's site: by default a debug register while one is free (the
    /// program's code stays its own: its reads of it, and an int3 it writes there itself,
    /// are as without scry), else an int3 (refused when read-only). `hardware`: `Some(true)`
    /// a debug register or an error, `Some(false)` an int3. Idempotent.
    pub(crate) fn insert_user_site(
        &mut self,
        addr: u64,
        hardware: Option<bool>,
    ) -> Result<(), OsError> {
        if self.has_site(addr) {
            return Ok(());
        }
        match hardware {
            Some(true) => self.insert_hw_site(addr),
            Some(false) => self.insert_int3(addr),
            None => match self.insert_hw_site(addr) {
                Ok(()) => Ok(()),
                Err(e) if self.read_only => Err(e),
                Err(_) => self.insert_int3(addr),
            },
        }
    }

    /// An execute watch on `addr` in a free debug register of every thread.
    pub(super) fn insert_hw_site(&mut self, addr: u64) -> Result<(), OsError> {
        self.refuse_inside_jump(addr)?;
        let Some(slot) = self.watch.iter().position(|w| w.is_none()) else {
            return Err(OsError::DebugRegisters(format!(
                "no free debug register for a breakpoint at {addr:#x} (4 in all, shared with watchpoints){}",
                if self.read_only {
                    ": a read-only session writes no int3"
                } else {
                    ""
                }
            )));
        };
        self.set_watch(
            slot,
            WatchSlot {
                addr,
                len: 1,
                access: Access::Execute,
            },
        )?;
        self.hw_sites.insert(addr, slot);
        Ok(())
    }

    /// Writes an int3 at `addr`.
    pub(super) fn insert_int3(&mut self, addr: u64) -> Result<(), OsError> {
        self.forbid_if_read_only("write an int3 (a breakpoint takes a debug register instead)")?;
        self.refuse_inside_jump(addr)?;
        let mut orig = [0u8];
        self.mem.read(addr, &mut orig)?;
        self.mem
            .write(addr, &[INT3])
            .map_err(|_| OsError::Unwritable { addr, len: 1 })?;
        self.sites.insert(addr, orig[0]);
        Ok(())
    }

    /// Restores the original byte at `addr`, unless the program wrote over the int3 itself:
    /// then its bytes stay (writing the stale saved byte back would corrupt its new code).
    pub(crate) fn remove_site(&mut self, addr: u64) -> Result<(), OsError> {
        // The loader's rendezvous stays while scry follows the loader, and libc's sigaction
        // while scry follows the program's SIGTRAP action.
        if Some(addr) == self.rendezvous
            || Some(addr) == self.sigaction.site
            || self.quiet_sites.contains(&addr)
        {
            return Ok(());
        }
        self.push_moribund(addr);
        if let Some(slot) = self.hw_sites.remove(&addr) {
            self.clear_watch(slot);
            return Ok(());
        }
        match self.sites.remove(addr) {
            Some(orig) if !self.dead && self.int3_in_memory(addr) => self.mem.write(addr, &[orig]),
            _ => Ok(()),
        }
    }

    /// Remembers a site removed while threads run (see `moribund`).
    pub(super) fn push_moribund(&mut self, addr: u64) {
        if self.has_site(addr) && !self.running_tids().is_empty() {
            self.moribund.push(addr);
        }
    }

    /// Puts scry's own breakpoint on the dynamic loader's rendezvous function.
    pub(crate) fn set_rendezvous(&mut self, addr: u64) -> Result<(), OsError> {
        self.insert_site(addr)?;
        self.rendezvous = Some(addr);
        Ok(())
    }

    pub(crate) fn rendezvous(&self) -> Option<u64> {
        self.rendezvous
    }

    /// Forgets the site at `addr` without writing anything: its memory is gone (the library
    /// holding it was unloaded).
    pub(crate) fn forget_site(&mut self, addr: u64) {
        if self.sigaction.site == Some(addr) {
            self.sigaction.forget();
        }
        if let Some(slot) = self.hw_sites.remove(&addr) {
            self.clear_watch(slot);
        }
        self.sites.remove(addr);
    }

    /// The int3 of the site at `addr` is still in memory (the program has not written over
    /// it). False when it cannot be read.
    pub(crate) fn int3_in_memory(&self, addr: u64) -> bool {
        let mut byte = [0u8];
        self.mem.read(addr, &mut byte).is_ok() && byte[0] == INT3
    }

    /// A site the program wrote over: it no longer stops anything.
    pub(crate) fn site_overwritten(&self, addr: u64) -> bool {
        self.sites.contains(addr) && !self.dead && !self.int3_in_memory(addr)
    }

    pub(super) fn remove_all_sites(&mut self) {
        self.rendezvous = None;
        self.sigaction.forget();
        let hw: Vec<u64> = self.hw_sites.keys().copied().collect();
        for addr in self.sites.addrs().into_iter().chain(hw) {
            let _ = self.remove_site(addr);
        }
    }

    /// A free debug register slot for a watchpoint, if any. When breakpoints hold them all,
    /// the newest such breakpoint moves to an int3 to make room (not in a read-only
    /// session, which writes no int3).
    pub(crate) fn free_watch_slot(&mut self) -> Option<usize> {
        if let Some(free) = self.watch.iter().position(|w| w.is_none()) {
            return Some(free);
        }
        if self.read_only {
            return None;
        }
        let (&addr, &slot) = self.hw_sites.iter().max_by_key(|(_, &slot)| slot)?;
        self.insert_int3(addr).ok()?;
        self.hw_sites.remove(&addr);
        self.clear_watch(slot);
        Some(slot)
    }

    /// Arms `slot` on every thread (debug registers are per thread).
    pub(crate) fn set_watch(&mut self, slot: usize, watch: WatchSlot) -> Result<(), OsError> {
        self.watch[slot] = Some(watch);
        self.dr7 = debugregs::arm(self.dr7, slot, watch.access, watch.len);
        for tid in self.thread_ids() {
            if let Err(e) = self.program_debugregs(tid) {
                self.clear_watch(slot);
                return Err(match e {
                    // The kernel shares the four registers between ptrace and perf: a program
                    // (or a profiler) holding perf hardware breakpoints leaves none free.
                    OsError::Ptrace {
                        errno: nix::Error::ENOSPC,
                        ..
                    } => OsError::DebugRegisters(format!(
                        "no free debug register in thread {tid}: all 4 are taken by someone else (perf hardware breakpoints of the program or a profiler), so no hardware watchpoint can be armed there"
                    )),
                    other => other,
                });
            }
        }
        Ok(())
    }

    pub(crate) fn clear_watch(&mut self, slot: usize) {
        self.watch[slot] = None;
        self.dr7 = debugregs::disarm(self.dr7, slot);
        for tid in self.thread_ids() {
            let _ = self.program_debugregs(tid);
        }
    }

    pub(super) fn clear_all_watches(&mut self) {
        for slot in 0..debugregs::SLOTS {
            if self.watch[slot].is_some() {
                self.clear_watch(slot);
            }
        }
    }

    /// Writes the armed slots and DR7 into one thread. DR7 goes last (and first to 0) so the
    /// CPU never sees an enabled slot with a stale address.
    ///
    /// Only the armed slots' address registers are written: the kernel backs each address
    /// register ptrace touches with a perf breakpoint that keeps its slot taken for the
    /// thread's life, so writing all four would leave the program none of its own
    /// (`perf_event_open` of a hardware breakpoint failing with ENOSPC).
    /// A thread that is gone (it exited between its stop and this write: ESRCH) has
    /// nothing to program; its exit is reported as usual, and the run goes on.
    pub(super) fn program_debugregs(&mut self, tid: Tid) -> Result<(), OsError> {
        match self.write_debugregs(tid) {
            Err(OsError::Ptrace {
                errno: nix::Error::ESRCH,
                ..
            }) => Ok(()),
            other => other,
        }
    }

    fn write_debugregs(&mut self, tid: Tid) -> Result<(), OsError> {
        ptrace::write_debugreg(tid, debugregs::DR7, 0)?;
        for (slot, watch) in self.watch.iter().enumerate() {
            if let Some(w) = watch {
                ptrace::write_debugreg(tid, slot, w.addr)?;
            }
        }
        if self.dr7 != 0 {
            ptrace::write_debugreg(tid, debugregs::DR7, self.dr7)?;
        }
        Ok(())
    }

    /// After a SIGTRAP: a hit of a breakpoint held in a debug register, when one fired at
    /// the thread's pc (the CPU stops before the instruction, so nothing is rewound), else
    /// the data watchpoints that fired (DR6, cleared for the next trap).
    pub(super) fn take_debug_trap(&mut self, tid: Tid) -> Result<Option<Stop>, OsError> {
        let slots = self.take_watch_hits(tid)?;
        if slots == 0 {
            return Ok(None);
        }
        let exec = |w: &Option<WatchSlot>| w.is_some_and(|w| w.access == Access::Execute);
        let breakpoints = (0..debugregs::SLOTS)
            .filter(|&i| slots & (1 << i) != 0 && exec(&self.watch[i]))
            .fold(0u8, |m, i| m | (1 << i));
        let data = slots & !breakpoints;
        if data != 0 {
            return Ok(Some(Stop::Watchpoint { tid, slots: data }));
        }
        let pc = self.pc(tid)?;
        if self.hw_sites.contains_key(&pc) {
            return Ok(Some(Stop::Breakpoint { tid, addr: pc }));
        }
        Ok(None)
    }

    /// After a SIGTRAP that says nothing of its cause (`TRAP_BRKPT`, the debug status empty)
    /// in a thread scry did not step: the debug exception of a breakpoint or watchpoint of
    /// scry's whose status the machine lost. Seen under KVM with many threads on few CPUs:
    /// the kernel read DR6 as 0 at the exception, took it for an `icebp` and sent a plain
    /// SIGTRAP, which delivered would kill the program. The only other exception that looks
    /// so is the program's own `icebp` (0xf1), a trap that leaves pc just past it: with that
    /// byte before pc the trap stays the program's.
    ///
    /// At a breakpoint held in a debug register it is that breakpoint's hit (the CPU faults
    /// before the instruction, nothing ran); RF is set as the kernel sets it for a hit it
    /// sees, so the thread goes on past it once. Otherwise, with data watchpoints armed, a
    /// hit of one of them: which one the status no longer says, so every armed one is
    /// looked at (the session books, of several, only a write watch whose value changed or
    /// a read one). An instruction ending in 0xf1 before pc (`mov ecx, esi`) looks like an
    /// icebp too: such a trap stays the program's (the rarer mistake of the two).
    pub(super) fn take_lost_debug_trap(
        &mut self,
        tid: Tid,
        code: i32,
    ) -> Result<Option<Stop>, OsError> {
        let stepped = self.threads.get(&tid).is_some_and(|t| t.stepped);
        if code != ptrace::TRAP_BRKPT || stepped || self.dr7 == 0 {
            return Ok(None);
        }
        let pc = self.pc(tid)?;
        // An icebp that ran there could be read there.
        let mut before = [0u8];
        let icebp = pc > 0 && self.mem.read(pc - 1, &mut before).is_ok() && before[0] == ICEBP;
        if pc == 0 || icebp {
            return Ok(None);
        }
        if crate::os::wait::trace_enabled() {
            eprintln!("scry: a debug trap without status in {tid} at {pc:#x}");
        }
        if self.hw_sites.contains_key(&pc) {
            let mut regs = *self.regs(tid)?;
            regs.eflags |= RF;
            self.set_regs(tid, &regs)?;
            return Ok(Some(Stop::Breakpoint { tid, addr: pc }));
        }
        let data = (0..debugregs::SLOTS)
            .filter(|&i| self.watch[i].is_some_and(|w| w.access != Access::Execute))
            .fold(0u8, |m, i| m | (1 << i));
        Ok((data != 0).then_some(Stop::Watchpoint { tid, slots: data }))
    }

    /// A thread on a breakpoint held in a debug register, which it has not hit (a watch
    /// trap left it there), runs the instruction when resumed, as after a hit the kernel
    /// reported: RF set, as the kernel sets it for a hit.
    pub(crate) fn take_as_hit(&mut self, tid: Tid) {
        if let Ok(&regs) = self.regs(tid) {
            if self.hw_sites.contains_key(&regs.rip) && regs.eflags & RF == 0 {
                let mut regs = regs;
                regs.eflags |= RF;
                let _ = self.set_regs(tid, &regs);
            }
        }
    }

    /// Makes a thread stopped at a breakpoint held in a debug register trap there again when
    /// it runs (its hit was undone): the CPU set RF on the hit, which would let it through.
    pub(super) fn rearm_hw_hit(&mut self, tid: Tid) {
        if let Ok(&regs) = self.regs(tid) {
            if self.hw_sites.contains_key(&regs.rip) && regs.eflags & RF != 0 {
                let mut regs = regs;
                regs.eflags &= !RF;
                let _ = self.set_regs(tid, &regs);
            }
        }
    }

    /// After a SIGTRAP: which armed slots fired (DR6), clearing DR6 for the next trap.
    pub(super) fn take_watch_hits(&mut self, tid: Tid) -> Result<u8, OsError> {
        if self.dr7 == 0 {
            return Ok(0);
        }
        let dr6 = ptrace::read_debugreg(tid, debugregs::DR6)?;
        let (slots, _) = debugregs::fired(dr6);
        if dr6 != 0 {
            ptrace::write_debugreg(tid, debugregs::DR6, 0)?;
        }
        let armed = self
            .watch
            .iter()
            .enumerate()
            .filter(|(_, w)| w.is_some())
            .fold(0u8, |m, (i, _)| m | (1 << i));
        Ok(slots & armed)
    }
}
