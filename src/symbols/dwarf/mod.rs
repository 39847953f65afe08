//! The DWARF reader: source lines, inlined-call chains and variables of one image's debug
//! sections (its own, or a separate debug file's: the caller chooses the bytes), in link-time
//! addresses. Parsed lazily by whoever holds a `DwarfInfo`.

mod info;
pub mod lines;
mod nesting;
pub(crate) mod reader;
pub mod vars;

pub use info::DwarfInfo;
pub use lines::Location;
pub use vars::{ValueKind, VarLocation, Variable};
