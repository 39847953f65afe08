//! The inspection context: what reading the stopped target needs, borrowed in one piece.
//! Values, frames, thread-locals and unwinding read through an [`Inspection`] and nothing
//! else of the session: the process as [`ProcessView`] (live, a core, a remote stub: they
//! read alike), its symbols, and the selected thread's thread pointer (where thread-locals
//! live). It borrows; it never runs, writes or changes what it reads.

use super::backend::ProcessView;
use super::memory_was;
use super::tls;
use super::*;
use crate::symbols::dwarf::pretty::Pretty;
use crate::symbols::dwarf::Target;
use crate::symbols::LoadedModule;

/// The stopped target as reading sees it (see the module's doc).
#[derive(Clone, Copy)]
pub(super) struct Inspection<'a> {
    pub(super) process: &'a dyn ProcessView,
    pub(super) store: &'a SymbolStore,
    /// The selected thread's fs_base; 0 where it cannot be read (then no thread-local is).
    pub(super) fs_base: u64,
    /// Memory as it was, in force while a watch hit's old side is printed.
    pub(super) memory_was: &'a memory_was::MemoryWasSlot,
}

impl Session {
    /// The selected thread's thread pointer, read for this stop (0 where there is none).
    pub(super) fn thread_pointer(&mut self) -> u64 {
        self.regs().map_or(0, |r| r.fs_base)
    }

    /// Reading the stopped target through the thread pointer `fs_base` (`thread_pointer`,
    /// read first: the registers are a `&mut` read, the inspection a shared borrow).
    pub(super) fn inspect(&self, fs_base: u64) -> Result<Inspection<'_>> {
        Ok(Inspection {
            process: self.targets.view_ref()?,
            store: &self.symbols,
            fs_base,
            memory_was: &self.memory_was,
        })
    }
}

impl<'a> Inspection<'a> {
    /// Fills `buf` from `addr`, or says it could not.
    pub(super) fn read(&self, addr: u64, buf: &mut [u8]) -> bool {
        if let Some(was) = self.memory_was.borrow().as_ref() {
            return was.read(addr, buf);
        }
        self.process.read_memory(addr, buf).is_ok()
    }

    /// Where `module`'s TLS block is in the selected thread (see `tls::tls_block`).
    pub(super) fn tls_block(&self, module: &LoadedModule) -> Option<u64> {
        tls::tls_block(self.process, self.store, module, self.fs_base)
    }

    /// The memory and names values of `module`'s DWARF read, printed through `pretty`.
    pub(super) fn values(
        self,
        module: Option<&'a LoadedModule>,
        pretty: Option<&'a dyn Pretty>,
    ) -> MemTarget<'a> {
        MemTarget {
            ins: self,
            module,
            pretty,
        }
    }

    /// The selected thread's physical frames (no inlined rows) from its registers `regs`,
    /// and why the walk stopped early, if it did.
    pub(super) fn physical_frames(
        &self,
        regs: &RawRegs,
        max_frames: usize,
    ) -> (Vec<unwind::Frame>, Option<String>) {
        let mut frame0 = UnwindRegs::default();
        let values = [
            regs.rax, regs.rdx, regs.rcx, regs.rbx, regs.rsi, regs.rdi, regs.rbp, regs.rsp,
            regs.r8, regs.r9, regs.r10, regs.r11, regs.r12, regs.r13, regs.r14, regs.r15, regs.rip,
        ];
        // The order above is DWARF's register numbering (0 = rax, 1 = rdx, ...).
        for (dwarf, value) in values.into_iter().enumerate() {
            frame0.set_at(dwarf as u16, value, unwind::Loc::Live);
        }
        let read = |addr: u64, buf: &mut [u8]| self.read(addr, buf);
        let (mut frames, mut stopped) =
            unwind::unwind(self.store, &frame0, &read, &UnwindLimits { max_frames });
        // A makecontext stack begins at glibc's trampoline: what lies past it is no caller
        // (the walk would read the task's unused stack as frames). The stack ends there, as
        // a thread's ends at its start routine: cleanly, no note.
        let bottom = frames.iter().skip(1).position(|f| {
            self.store
                .symbol_at(RuntimeAddr(f.pc))
                .is_some_and(|(_, s, off)| off == 0 && &*s.name == "__start_context")
        });
        if let Some(i) = bottom {
            frames.truncate(i + 2);
            stopped = None;
        }
        (frames, stopped)
    }
}

/// Target memory and names, as values read them; with the module whose DWARF describes the
/// value, where its static members are stored.
pub(super) struct MemTarget<'a> {
    ins: Inspection<'a>,
    module: Option<&'a LoadedModule>,
    pretty: Option<&'a dyn Pretty>,
}

impl Target for MemTarget<'_> {
    fn read(&self, addr: u64, buf: &mut [u8]) -> bool {
        self.ins.read(addr, buf)
    }

    fn symbolize(&self, addr: u64) -> Option<String> {
        // Symbols only: `<[stack]+0x20818>` after a pointer says nothing its value does not.
        self.ins.store.symbol_name(RuntimeAddr(addr))
    }

    fn load_bias(&self) -> Option<u64> {
        self.module.map(|m| m.bias.0)
    }

    fn tls_address(&self, offset: u64) -> Option<u64> {
        let block = self.ins.tls_block(self.module?)?;
        Some(block.wrapping_add(offset))
    }

    fn pretty(&self) -> Option<&dyn Pretty> {
        self.pretty
    }
}
