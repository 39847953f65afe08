//! scry: a Linux x86-64 debugger scripted in JavaScript, built for LLM agents.
//!
//! # Layers, top to bottom
//!
//! | layer | owns | uses |
//! |---|---|---|
//! | `repl`, `daemon`, `mcp` | framing chunks and answers; named sessions; the MCP server | launch, script, session, os (signal masks of helper threads) |
//! | `launch` | the options every front door shares; session + engine + REPL from them; letting the target go | script, session, remote, repl, view |
//! | `script` | the only rquickjs user: the JS API, listeners, printers, stop lines | runner, session (and its `vocabulary`), symbols, view |
//! | `runner` | run control: `cont`, `step(n)`, `next`, `finish`; calls the front end back for listeners' verdicts | session, symbols (an instruction's type) |
//! | `session` | the facade: breakpoints, watchpoints, catches, tracepoints and their records, symbols of the process, stops described, recording and moving along it | its `Target` trait (live backends), `ProcessView` (live or core), inferior (only to make one), corefile, symbols, history, x86, os |
//! | `remote` | the GDB-remote backend: a client of gdbserver-like stubs, implementing `session`'s `Target` | session (its traits), inferior (the raw stop types), maps, os (registers' layout, errors) |
//! | `inferior` | the native backend: threads, sites, stop/resume over ptrace, probes' memory and jumps | os, x86 (the relocator of displaced steps) |
//! | `corefile` | reading and writing core files | os (register and thread types, opening files) |
//! | `symbols` | pure: ELF, DWARF, CFI; bytes in, answers out (files through an opener the session installs: the os layer's mmap) | maps, x86 |
//! | `view` | the live page: knows neither JavaScript nor ptrace | os (signal masks) |
//! | `os` | the only ptrace, libc and `unsafe` | - |
//! | `maps` | the text of `/proc/PID/maps` parsed, one description of a mapping for all | - |
//! | `x86` | pure: disassembly, the instruction behind a data access, what an instruction stores, displaced-step plans, tracepoint trampolines | - |
//! | `history` | pure: a recording's log of steps (registers, stores, old and new) and what system calls write | - |
//!
//! The session never names the native backend but where it makes one (`spawn`, `attach`):
//! everything else it asks of a live process goes through `session`'s `Target` trait, which
//! the GDB-remote backend (`remote`, made by `launch`) implements too, and a recording's
//! replay next. A core file is read through
//! `ProcessView` only, and the session refuses, naming the core, what would run or write it.
//!
//! # The life of a `cont()`, for a newcomer
//!
//! 1. **Chunk.** `repl` reads JavaScript up to a `;;` line and hands it to `script`, which
//!    evaluates it in QuickJS under the script budget.
//! 2. **Binding.** The prelude's `cont(opts)` checks its arguments and calls the native
//!    `run_cont` (`script/native/runs.rs`) with the listener dispatcher; the native builds a
//!    `runner::Front` over the session and calls `runner::cont`.
//! 3. **Runner.** `runner` arms the deadline (`Session::arm`) and loops over legs: each leg is
//!    `Session::cont` (or `Session::step` for `step`/`next`/`finish`), which asks the backend
//!    (`Target::cont`) to resume and wait.
//! 4. **Backend.** The native backend resumes every thread with ptrace, waits, stops the
//!    others (all-stop), undoes its int3 and returns a raw `inferior::Stop`. While
//!    tracepoints' probes are in the program the wait gives way every 5 ms (`Stop::Tick`,
//!    nothing stopped): the session reads the rings and the runner hands the records to the
//!    `trace` listeners (`Front::trace`) before it waits again.
//! 5. **Stop.** The session takes what is its own business (the loader's rendezvous: new
//!    libraries, breakpoints re-armed; libc's `sigaction`) and goes on; anything else becomes
//!    a `StopInfo` (its `StopKind` with what only that kind carries, thread, pc, source).
//! 6. **Listeners.** If a listener of that event exists, the runner hands the stop to the
//!    front end (`Front::event`), which runs the JS listeners with the session lent to them
//!    and answers a `Verdict`: go on (the next leg) or stop here.
//! 7. **Stop line.** The run ends: the runner takes its temporary breakpoints out and stops
//!    every thread again; the session describes the stop (`Session::describe`: function,
//!    `file:line`, notes) and `script` prints it as the chunk's answer, e.g.
//!    `breakpoint 1 at 0x401136 work+0x6 loop.c:8`, then `;; ok`.

#![warn(unreachable_pub)]

pub(crate) mod cli;
pub mod corefile;
pub(crate) mod daemon;
pub(crate) mod history;
pub(crate) mod inferior;
pub(crate) mod launch;
pub mod maps;
pub(crate) mod mcp;
pub(crate) mod os;
pub(crate) mod remote;
pub(crate) mod repl;
pub(crate) mod runner;
pub(crate) mod script;
pub(crate) mod session;
pub mod symbols;
pub(crate) mod view;
pub(crate) mod x86;

/// What the `scry` binary wires together (and the JS API table its tests check): the one
/// door out of the crate besides the pure `symbols`, `corefile` and `maps`. Everything else
/// is `pub(crate)`, so the compiler keeps the layers' insides to the crate.
pub mod entry {
    pub use crate::cli::parse_failure;
    pub use crate::daemon::main as daemon_main;
    pub use crate::launch::{start, Opened, Target, TargetOptions};
    pub use crate::mcp::main as mcp_main;
    pub use crate::os::alloc::HugeBlocks;
    pub use crate::os::protect_self;
    pub use crate::repl::{for_terminal, stdin_is_terminal, Stdin};
    pub use crate::script::api;
    pub use crate::session::install_signal_handling;
    pub use crate::session::syscalls::keeper_main;
    pub use crate::session::termination;
    pub use crate::view::View;
}
