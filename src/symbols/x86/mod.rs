//! x86-64 machine code: disassembly, and which instruction made a data access.

pub mod culprit;
pub mod disasm;
pub mod displace;

pub use disasm::{disassemble, Insn};
