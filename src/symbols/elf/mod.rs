//! One ELF file as a debugger needs it: segments, sections, the symbol tables with their
//! names (raw, demangled, bare paths) and PLT entries, all in link-time addresses; and a
//! separate debug file's bytes and symbols. Knows nothing of DWARF, unwind tables or
//! processes.

mod compressed;
mod debug_image;
mod debuglink;
pub mod demangle;
mod file;
pub(crate) mod fuzzy;
pub mod image;
pub mod index;
mod names;
mod plt;
pub(crate) mod sections;
pub mod short_name;
pub mod symbol;
mod symtab;

pub use debug_image::DebugImage;
pub use debuglink::{crc32, DebugLink};
pub use file::{install_file_opener, Bytes, FileBytes, FileOpener, SharedBytes};
pub use image::{ElfImage, LoadSegment, MappedImage, SegFlags, TlsSegment};
pub use index::SymbolIndex;
pub use symbol::{SymKind, Symbol};
