//! Stack unwinding, pure: call frame information (`.eh_frame` through `.eh_frame_hdr`,
//! `.debug_frame`), signal frames, the frame-pointer fallback, and the walk that strings them
//! together. Reads one image's tables at a time; what is mapped where, and the tables of each
//! module, come from a `CodeMap` (the module store), so nothing here knows about processes.

mod cfi;
mod eh_hdr;
mod regs;
mod walk;

#[cfg(test)]
mod tests;

pub use cfi::CfiTables;
pub use regs::{Loc, MemReader, UnwindRegs, NREGS, RA, RBP, RSP};
pub use walk::{unwind, Frame, FrameSource, UnwindLimits};

use crate::symbols::addr::{LoadBias, RuntimeAddr};
use crate::symbols::elf::{ElfImage, Symbol};

/// What the walk asks about the process's code. The module store answers; a test can too.
pub trait CodeMap {
    /// The module whose mappings hold `addr`.
    fn code_at(&self, addr: RuntimeAddr) -> Option<Code<'_>>;
    /// Unwind tables from the module's separate debug file (its `.debug_frame`), asked for
    /// only where the image's own tables do not cover `addr`.
    fn separate_cfi(&self, addr: RuntimeAddr) -> Option<&CfiTables>;
    /// The function symbol covering `addr`, and the offset of `addr` into it.
    fn function_at(&self, addr: RuntimeAddr) -> Option<(&Symbol, u64)>;
    /// Where the kernel's vDSO is mapped: it has no file, so it is no module, but its unwind
    /// tables can be read from memory.
    fn vdso_range(&self) -> Option<(RuntimeAddr, RuntimeAddr)>;
}

/// One module as the walk sees it.
pub struct Code<'a> {
    pub image: &'a ElfImage,
    /// The image's unwind tables (found once per file by whoever holds the image).
    pub tables: &'a CfiTables,
    pub bias: LoadBias,
    /// File name, for messages.
    pub name: &'a str,
    /// The main executable: its entry point is the bottom of the main thread's stack.
    pub is_exe: bool,
}
