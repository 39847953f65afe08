//! The DWARF reader: source lines, inlined-call chains and variables of one image's debug
//! sections (its own, or a separate debug file's: the caller chooses the bytes), in link-time
//! addresses. Parsed lazily by whoever holds a `DwarfInfo`.
//!
//! Types and values: `tree` reads `.debug_info` one unit and one DIE at a time and keeps
//! what is built over it (`indexes`), `types` is what a type is, `type_read` reads types
//! from their DIEs and `type_name` spells them, `value` is a typed value, `access` reads one
//! and reaches its parts through a `Target` (`value_error` says why it cannot; `rust` knows
//! Rust's standard layouts, `statics` C++ static members, `fields` the order members print
//! in), `render` prints values, through the front end's printers where one claims the type
//! (`pretty` is that boundary, `for_printers` what printers ask of values), `location`
//! evaluates location expressions and lists against a frame, `scope` finds the function,
//! inlined calls and blocks at a pc, `frame` gives a scope's variables their values,
//! `callsite` recovers entry values, `prologue` says where a function's body begins, `stmt`
//! reads line rows with their `is_stmt` flags as gdb does (`units` says which units hold an
//! address), `names` finds globals and types by name (`source_file` narrows them to one
//! file), `inlined` finds the copies of a function inlined into its callers, `path` parses
//! the C-like paths scripts write.

pub mod access;
pub mod callsite;
pub mod fields;
pub mod for_printers;
pub mod frame;
mod indexes;
mod info;
pub mod inlined;
pub mod lines;
pub mod location;
pub mod names;
mod nesting;
pub mod path;
pub mod pretty;
pub mod prologue;
pub mod query;
pub(crate) mod reader;
pub mod render;
pub(crate) mod returns;
pub mod rust;
mod rust_returns;
pub mod scope;
pub mod source_file;
pub mod statics;
mod stmt;
pub mod tailcall;
pub mod target;
pub mod tree;
pub mod type_name;
mod type_read;
pub mod type_spec;
pub mod types;
mod units;
pub mod value;
pub(crate) mod value_error;

pub use frame::FrameVar;
pub use info::DwarfInfo;
pub use lines::Location;
pub use location::{Gone, Place};
pub use render::{Limits, Plain, TooLarge, MAX_PLAIN_TEXT, MAX_PLAIN_VALUES};
pub(crate) use rust_returns::mangled_by_rustc;
pub use tailcall::TailCallFrame;
pub use target::Target;
pub use types::{Kind, Type, TypeId};
pub use value::{Scalar, Value};
