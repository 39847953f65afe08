//! Floating-point and vector registers of a stopped thread: read on demand (one
//! PTRACE_GETREGSET per question, nothing cached across a resume), written back whole.

use super::*;
use crate::os::fpregs::FpRegs;

/// DWARF register numbers of the x86-64 psABI for the floating-point and vector state.
const DWARF_XMM0: u16 = 17;
const DWARF_ST0: u16 = 33;
const DWARF_MXCSR: u16 = 64;

impl Session {
    /// The floating-point and vector state of `tid` (the selected thread when `None`).
    pub fn fp_regs(&mut self, tid: Option<Tid>) -> Result<FpRegs> {
        let process = self.targets.view()?;
        let tid = tid.unwrap_or_else(|| process.selected());
        Ok(process.fp_regs(tid)?)
    }

    /// Writes the selected thread's floating-point and vector state (as read by `fp_regs`
    /// and edited).
    pub fn set_fp_regs(&mut self, regs: &FpRegs) -> Result<()> {
        self.check_writable("write a register")?;
        let process = self.targets.live()?;
        let tid = process.selected();
        process.regs(tid)?;
        process.set_fp_regs(tid, regs)?;
        self.wrote_into_program("a vector register");
        Ok(())
    }

    /// The bytes of DWARF register `dwarf` of thread `tid`, for readers of DWARF locations:
    /// 17-32 are xmm0-15 (16 bytes), 33-40 st0-7 (10 bytes, the 80-bit format), 64 mxcsr
    /// (4 bytes). `None` for every other number (general registers come from the frame's
    /// unwound registers instead). These are the thread's current values, which are a
    /// caller frame's too only where the callee left them alone: the ABI preserves none of
    /// them across calls.
    pub fn vector_reg(&mut self, tid: Tid, dwarf: u16) -> Result<Option<Vec<u8>>> {
        let n = |base: u16| usize::from(dwarf - base);
        let bytes = match dwarf {
            DWARF_XMM0..=32 => self
                .fp_regs(Some(tid))?
                .xmm(n(DWARF_XMM0))
                .map(|b| b.to_vec()),
            DWARF_ST0..=40 => self
                .fp_regs(Some(tid))?
                .st(n(DWARF_ST0))
                .map(|b| b.to_vec()),
            DWARF_MXCSR => Some(self.fp_regs(Some(tid))?.mxcsr().to_le_bytes().to_vec()),
            _ => None,
        };
        Ok(bytes)
    }
}
