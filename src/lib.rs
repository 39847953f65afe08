//! scry: a Linux x86-64 debugger scripted in JavaScript, built for LLM agents.
//!
//! Layers, top to bottom: `repl` (framing, output), `script` (the only rquickjs user; it
//! reaches the machine only through `session`, whose `vocabulary` names what it needs),
//! `runner` (run control: `cont`, `step`, `finish`, `next`, calling the script back for
//! listeners' verdicts), `session` (the facade scripts and the runner call), `inferior` (threads, breakpoints, stop/resume),
//! `os` (the only ptrace/unsafe code). `symbols` is pure and used by session and script;
//! `corefile` (reading and writing core files) is pure too, beside `inferior` under session.
//! `daemon` (named sessions) and `mcp` (the MCP server) sit beside `repl`: they host engines
//! and answer chunks through [`repl::Repl::respond`]. `view` (the live page) knows neither
//! JavaScript nor ptrace: session fills in what it shows, script drives its `dom` model, and
//! its server threads only read what the engine publishes. `maps` (the text of
//! `/proc/PID/maps` parsed) is pure and at the bottom: every layer that reads a process's
//! layout (live or from a core) shares its one description of a mapping, so `symbols` needs
//! nothing of `os` to build its module list.

pub mod cli;
pub mod corefile;
pub mod daemon;
pub mod inferior;
pub mod maps;
pub mod mcp;
pub mod os;
pub mod repl;
pub(crate) mod runner;
pub mod script;
pub mod session;
pub mod symbols;
pub mod view;
