//! Core files: reading the ELF core a crashed process left (or one `gcore()` wrote) and
//! writing one of a stopped process. Pure logic over bytes and files: nothing here traces a
//! process or knows the session. The session reads a core through the same questions it asks
//! a live process (threads, registers, memory, mappings; see `session::backend`).
//!
//! - `elf`: ELF64 headers and notes, read and written; build ids.
//! - `layout`: the kernel's note structures (prstatus, prpsinfo, siginfo, NT_FILE).
//! - `notes`: a core's notes sorted into threads and process facts.
//! - `image`: a core file opened: segments, notes, what is damaged or missing.
//! - `files`: the mapped files found on this machine (sysroot, solib folders, build ids).
//! - `memory`: the process's memory from the core and, where it left pages out, the files.
//! - `process`: all of it as a process that never runs again.
//! - `writer`: a core of a live process, laid out as the kernel does.

pub mod elf;
pub mod files;
pub mod image;
pub mod layout;
pub mod memory;
pub mod notes;
pub mod process;
pub mod writer;

pub use files::FileSearch;
pub use image::{ByteSource, CoreImage};
pub use layout::SigInfo;
pub use memory::{Gap, MemoryError};
pub use process::CoreProcess;
