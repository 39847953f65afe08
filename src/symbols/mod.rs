//! Symbols: what the files of a process say about its code. Pure: paths, bytes and addresses
//! in, answers out. Nothing here sees a pid or ptrace; the caller supplies maps snapshots and
//! memory bytes.
//!
//! Layers, each using only those below it:
//! - `store`: the modules of one process (maps snapshots, load biases) and, per file, the
//!   lazily read DWARF and unwind tables; answers in runtime addresses.
//! - `dwarf` (source lines, variables) and `unwind` (CFI, the stack walk): readers of one
//!   ELF image's tables, in link-time addresses.
//! - `elf`: one ELF file, its sections and symbol tables, names and demangling.
//! - `addr`, `error`, `x86`: typed addresses, lookup errors, machine-code decoding.

pub mod addr;
pub mod dwarf;
pub mod elf;
pub mod error;
pub mod store;
pub mod unwind;

#[cfg(test)]
mod testutil;

pub use crate::x86::{disassemble, Insn};
pub use addr::{FileAddr, LoadBias, RuntimeAddr};
pub use dwarf::Location;
pub use elf::{ElfImage, LoadSegment, SegFlags, SymKind, Symbol, SymbolIndex, TlsSegment};
pub use error::SymbolError;
pub use store::{LoadedModule, ModuleFile, SymbolStore};
pub use unwind::{unwind, Frame, FrameSource, UnwindLimits, UnwindRegs};
