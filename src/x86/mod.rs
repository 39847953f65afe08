//! x86-64 machine code: disassembly, which instruction made a data access, and how to run
//! a displaced copy of an instruction. Pure (bytes in, answers out) and at the bottom of the
//! house beside `maps`, so both `symbols` (disassembly for names and unwinding) and the
//! native backend (`inferior`, displaced steps) use it without one importing the other.

pub(crate) mod culprit;
pub(crate) mod disasm;
pub(crate) mod displace;
pub(crate) mod probe;
pub(crate) mod probe_cover;
pub(crate) mod stores;

pub use disasm::{disassemble, Insn};
