//! Symbols: ELF files, their symbol tables, the modules of one process and disassembly.
//! Pure: paths, bytes and addresses in, answers out. Nothing here sees a pid or ptrace; the
//! caller supplies maps snapshots and memory bytes.

pub mod addr;
mod cfi;
pub mod culprit;
pub mod demangle;
pub mod disasm;
mod dwarf_reader;
mod eh_hdr;
pub mod elf;
pub mod error;
mod expr;
mod fuzzy;
pub mod index;
pub mod lines;
mod names;
mod sections;
pub mod store;
pub mod symbol;
mod symtab;
pub mod unwind;
pub mod vars;

#[cfg(test)]
mod testutil;
#[cfg(test)]
mod unwind_tests;

pub use addr::{FileAddr, LoadBias, RuntimeAddr};
pub use disasm::{disassemble, Insn};
pub use elf::{ElfImage, LoadSegment, SegFlags, TlsSegment};
pub use error::SymbolError;
pub use index::SymbolIndex;
pub use lines::Location;
pub use store::{LoadedModule, SymbolStore};
pub use symbol::{SymKind, Symbol};
pub use unwind::{unwind, Frame, FrameSource, UnwindLimits, UnwindRegs};
