//! One ELF file as a debugger needs it: segments, sections, the symbol tables with their
//! names (raw, demangled, bare paths), all in link-time addresses. Knows nothing of DWARF,
//! unwind tables or processes.

pub mod demangle;
pub(crate) mod fuzzy;
pub mod image;
pub mod index;
mod names;
pub(crate) mod sections;
pub mod symbol;
mod symtab;

pub use image::{ElfImage, LoadSegment, SegFlags, SharedBytes, TlsSegment};
pub use index::SymbolIndex;
pub use symbol::{SymKind, Symbol};
