//! The session: the facade the script layer calls. It turns raw stops into [`StopInfo`]s
//! and answers every question about the target, made of owned parts, each a type of its own:
//!
//! | part | type (file) | owns |
//! |---|---|---|
//! | `targets` | `Targets` (targets.rs) | the live process or the core, held fork children, how the last one ended |
//! | `symbols` | `SymbolStore` (symbols) | the modules' ELF and DWARF |
//! | `points` | `Points` (breakpoints.rs, watchpoints.rs, syscalls.rs) | what the user asked to stop at |
//! | `output` | `ProgramOutput` (capture.rs) | the program's output and its pumps |
//! | `at_stop` | `StopState` (stop_state.rs) | what scripts read here (`prev`), the step's start, the stop's signal, notes waiting |
//! | `tree` | `TreeRun` (tree_state.rs) | a run of the whole process tree |
//! | `signals` | `SignalPolicy` (signal_policy.rs) | which signals stop, thread events |
//! | `loader` | `LoaderWatch` (dynamic.rs) | the dynamic loader followed, the module list's freshness |
//! | `timeline` | `Timeline` (recording/) | the recording and the direction of runs |
//! | `tracing` | `Tracing` (tracepoints/) | tracepoints' probes and their records |
//!
//! Reading (values, frames, globals, thread-locals, unwinding) goes through one borrow of
//! the process and its symbols, [`inspection::Inspection`]; running, through the backend's
//! [`target::Target`].

pub(crate) mod backend;
pub(crate) mod breakpoints;
pub(crate) mod capture;
mod config;
pub(crate) mod dynamic;
mod error;
mod file_scope;
mod fpu;
mod frame_view;
mod gcore;
mod globals;
mod inspect;
mod inspection;
mod lookup;
mod memory_was;
mod overview;
mod panels;
mod past;
mod placement;
mod points;
mod postmortem;
mod processes;
mod recording;
mod replay;
mod return_value;
mod run;
mod signal_policy;
mod snapshot;
pub(crate) mod stack;
pub(crate) mod stop;
mod stop_state;
mod supported;
pub(crate) mod syscalls;
mod tailcalls;
pub(crate) mod target;
mod targets;
mod threads;
pub(crate) mod tls;
mod tracepoints;
mod tree;
mod tree_nonstop;
mod tree_sites;
mod tree_state;
mod typed_value;
mod typed_views;
mod value_ops;
mod values;
mod watch_culprit;
pub(crate) mod watchpoints;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

pub(crate) use crate::inferior::{FollowFork, NonStop, Origin, Stop as RawStop};
use crate::inferior::{Inferior, Stop, WatchSlot};
use crate::maps;
use crate::os::debugregs;
use crate::os::regs::{self, RawRegs};
use crate::os::spawn::{resolve_program, SpawnRequest};
use crate::os::{procfs, signals, Tid};
use crate::symbols::unwind::{self, FrameSource, UnwindLimits, UnwindRegs};
use crate::symbols::{RuntimeAddr, SymbolStore};
use crate::x86::{culprit, disassemble, Insn};

use backend::ProcessView;
use breakpoints::BreakpointTable;
pub(crate) use breakpoints::{Breakpoint, BreakpointRef};
use capture::ProgramOutput;
pub(crate) use config::{seconds, Config, SpawnSpec, SyscallFilter, MAX_DEADLINE, MAX_IDLE};
pub(crate) use error::SessionError;
pub(crate) use gcore::GcoreOptions;
pub(crate) use lookup::check_debug_dirs;
pub(crate) use overview::Overview;
pub(crate) use recording::DEFAULT_LIMIT as DEFAULT_RECORD_LIMIT;
pub(crate) use run::Leg;
pub(crate) use signal_policy::SignalMode;
pub(crate) use stop::{
    short_file, BreakpointHit, Reason, ReturnValue, Shown, StopInfo, StopKind, WatchReport,
};
use target::Target;
use targets::{Live, Targets};
pub(crate) use threads::FrameRow;
pub(crate) use tracepoints::{probe_cond, RegValue, TraceMode, TraceRecord, Want};
pub(crate) use typed_value::TypedValue;
use watchpoints::{WatchKind, WatchScope, WatchTable, Watchpoint};

pub(crate) type Result<T> = std::result::Result<T, SessionError>;

/// The machine's vocabulary the script layer speaks, through the facade (it imports neither
/// `os` nor `inferior`): register names, signal names, the x87 and FP register formats, how
/// a system call is caught, a decoded system call argument.
pub(crate) mod vocabulary {
    pub(crate) use crate::inferior::CatchMode;
    pub(crate) use crate::os::fpregs::{f64_to_f80, f80_to_f64, FpRegs};
    pub(crate) use crate::os::regs::{self, REGISTER_NAMES};
    pub(crate) use crate::os::signals;
    pub(crate) use crate::os::syscalls::render::Value as SyscallArg;
}

/// The aligned pieces, one debug register each, a watch of `[addr, addr + len)` takes.
pub(crate) fn watch_pieces(addr: u64, len: u64) -> std::result::Result<Vec<(u64, u64)>, String> {
    debugregs::pieces(addr, len)
}

/// SIGINT/SIGTERM/SIGHUP reached scry and the current command should end.
pub(crate) fn signal_pending() -> bool {
    crate::os::interrupt::pending()
}

/// The signal that asked scry to end (SIGTERM, SIGHUP, or SIGINT in pipe mode).
pub fn termination() -> Option<i32> {
    crate::os::interrupt::termination()
}

/// Consumes a Ctrl-C at a terminal.
pub(crate) fn take_interrupt() -> bool {
    crate::os::interrupt::take_interrupt()
}

/// Installs scry's own SIGINT/SIGTERM/SIGHUP handling (see `os::interrupt`).
/// Outside a terminal, also starts the guardian that resumes scry if the program stops it
/// (see `os::guardian`).
pub fn install_signal_handling(interactive: bool) {
    crate::os::interrupt::install(interactive);
    if !interactive {
        crate::os::guardian::start();
    }
}

/// `loop.c:15` or `src/app/main.rs:120`: a file name (it has a dot or a slash) and a line
/// (0 included, so that it can be refused by name rather than taken for a module).
pub(crate) fn source_line_expr(expr: &str) -> Option<(&str, u32)> {
    let (file, line) = expr.trim().rsplit_once(':')?;
    let line: u32 = line.parse().ok()?;
    (file.contains('.') || file.contains('/')).then_some((file, line))
}

/// What the user asked to stop at, kept across processes (each new image gets them armed
/// again): one owner, so a process that starts, execs or is selected finds them in one place.
#[derive(Default)]
struct Points {
    breakpoints: BreakpointTable,
    watchpoints: WatchTable,
    /// `syscall.catch()`es.
    syscalls: syscalls::SyscallCatches,
    /// The last breakpoint set on a name had more functions than it takes: said once at
    /// its `set` (see `Session::take_sites_cut`).
    sites_cut: Option<String>,
}

pub struct Session {
    pub config: Config,
    /// The live process or the core, the fork children held, how the last process ended.
    targets: Targets,
    symbols: SymbolStore,
    /// What the user asked to stop at: breakpoints, watchpoints, caught system calls.
    points: Points,
    /// The program's output: the buffer `output()` reads and the pumps that fill it.
    output: ProgramOutput,
    /// What is known of the stop the process is in: what scripts read (for `prev`), where
    /// the step began, its signal, the notes waiting for a stop to be shown.
    at_stop: stop_state::StopState,
    /// A run of the whole process tree: its anchor, its notes, the other images' sites,
    /// what runs on between legs.
    tree: tree_state::TreeRun,
    /// Which signals stop and whether thread events do.
    signals: signal_policy::SignalPolicy,
    /// Stops listeners decide on: reported with only their thread stopped.
    nonstop: NonStop,
    /// The loader followed (its `_r_debug`, the library changes waiting for listeners) and
    /// when the module list was last read.
    loader: dynamic::LoaderWatch,
    /// The recording, where the process is along it, and which way runs go.
    timeline: recording::Timeline,
    /// Tracepoints, and the records read from them (see `tracepoints`).
    tracing: tracepoints::Tracing,
    /// Memory as it was before a watch hit, while its old side is printed (see
    /// `as_memory_was`).
    memory_was: memory_was::MemoryWasSlot,
}

/// The os layer's read-only mapping, as the symbol layer reads files (it maps none itself).
struct MappedBytes(crate::os::mapped::MappedFile);

impl crate::symbols::elf::FileBytes for MappedBytes {
    fn bytes(&self) -> &[u8] {
        self.0.bytes()
    }

    fn release(&self, range: std::ops::Range<usize>) {
        self.0.release(range)
    }
}

fn map_file(path: &std::path::Path) -> anyhow::Result<Box<dyn crate::symbols::elf::FileBytes>> {
    let mapped = crate::os::mapped::MappedFile::open_regular(path)?;
    Ok(Box::new(MappedBytes(mapped)))
}

impl Session {
    pub fn new(config: Config) -> Self {
        // Executables, libraries and debug files are mapped, not read (hundreds of MB, of
        // which a session touches a fraction).
        crate::symbols::elf::install_file_opener(map_file);
        let output = ProgramOutput::new(config.capture_limit);
        Session {
            config,
            targets: Targets::default(),
            symbols: SymbolStore::new(),
            points: Points::default(),
            output,
            at_stop: Default::default(),
            tree: Default::default(),
            signals: Default::default(),
            nonstop: NonStop::default(),
            loader: Default::default(),
            timeline: Default::default(),
            tracing: Default::default(),
            memory_was: Default::default(),
        }
    }

    /// Sends the program's output also to `tee` as it arrives (the live view).
    pub fn set_output_tee(&mut self, tee: Option<capture::Tee>) {
        self.output.set_tee(tee);
    }

    // ---- process lifecycle -------------------------------------------------------------

    pub fn is_live(&self) -> bool {
        self.targets.is_live()
    }

    pub fn pid(&self) -> Option<Tid> {
        match &self.targets.core {
            Some(c) => Some(c.process.pid()),
            None => self.targets.live.as_ref().map(|t| t.process.pid()),
        }
    }

    pub fn program(&self) -> Option<&str> {
        match &self.targets.core {
            Some(c) => Some(c.program.as_str()),
            None => self.targets.live.as_ref().map(|t| t.program.as_str()),
        }
    }

    /// The latest process (live or not): its pid, its program, and how it ended if it did.
    pub fn last_process(&self) -> Option<(Tid, &str, Option<std::borrow::Cow<'_, str>>)> {
        // The live process may have changed under the same session: a followed fork child,
        // a new image after exec.
        if let Some(t) = self.targets.live.as_ref().filter(|t| !t.process.is_dead()) {
            return Some((t.process.pid(), t.program.as_str(), None));
        }
        let (pid, program) = self.targets.last_process.as_ref()?;
        let ended = (!self.is_live() && self.targets.core.is_none()).then(|| {
            match self.targets.ended_now() {
                Some(how) => std::borrow::Cow::Owned(how),
                None => std::borrow::Cow::Borrowed("ended"),
            }
        });
        Some((*pid, program.as_str(), ended))
    }

    pub fn origin(&self) -> Option<Origin> {
        self.targets.live.as_ref().map(|t| t.process.origin())
    }

    /// An error when a live or held process is still under control (a new one may not
    /// replace it).
    pub(crate) fn ensure_no_target(&self) -> Result<()> {
        if let Some(t) = self.targets.held.first() {
            return Err(SessionError::Invalid(format!(
                "process {} is still held; kill() or detach() it first",
                t.process.pid()
            )));
        }
        match &self.targets.live {
            Some(t) if !t.process.is_dead() => Err(SessionError::Invalid(format!(
                "process {} is still live; kill() or detach() it first",
                t.process.pid()
            ))),
            _ => Ok(()),
        }
    }

    /// `spawn()` with nothing: the latest spawn's program, arguments and settings again.
    pub fn spawn_again(&mut self) -> Result<StopInfo> {
        let spec = self.targets.last_spawn.clone().ok_or_else(|| {
            SessionError::Invalid(
                "spawn(): nothing was spawned in this session yet: spawn(path, ...args)".into(),
            )
        })?;
        self.spawn(spec)
    }

    pub fn spawn(&mut self, spec: SpawnSpec) -> Result<StopInfo> {
        let again = spec.clone();
        // Spawning again is starting over (gdb's `run` on a live program): a process scry
        // spawned itself, alone, is killed first and the new stop says so. An attached or a
        // held one is someone's to keep: an error, as before.
        let mut killed = None;
        let alone_and_ours = self.targets.held.is_empty()
            && self.origin() == Some(Origin::Spawned)
            && self.is_live();
        if alone_and_ours {
            killed = self.pid();
            self.kill()?;
        }
        self.ensure_no_target()?;
        let path = resolve_program(&spec.program).ok_or_else(|| {
            SessionError::Invalid(format!("spawn: no such program '{}'", spec.program))
        })?;
        supported::check_program(&path).map_err(|why| {
            SessionError::Invalid(format!("spawn: cannot debug {}: {why}", path.display()))
        })?;
        let (euid, egid) = crate::os::effective_ids();
        let mut argv = vec![spec.program.clone()];
        argv.extend(spec.args.iter().cloned());
        let mut env: Vec<(String, String)> = std::env::vars().collect();
        for (key, value) in &spec.env {
            env.retain(|(k, _)| k != key);
            if let Some(v) = value {
                env.push((key.clone(), v.clone()));
            }
        }
        let request = SpawnRequest {
            path,
            argv,
            env: env.into_iter().map(|(k, v)| format!("{k}={v}")).collect(),
            cwd: spec.cwd.clone(),
            stdin: spec.stdin.clone(),
            disable_aslr: !self.config.aslr,
            own_terminal: crate::os::pty::stdin_is_terminal(),
        };
        self.output.restart(self.config.capture_limit);
        let at_loader = spec.at_loader.unwrap_or(self.config.stop_at_loader);
        let (inferior, output, stop) = Inferior::spawn(&request, at_loader, self.config.read_only)?;
        self.output.pump_pipe(output.output);
        if let Some(tty) = output.tty {
            self.output.pump_terminal(tty.master, tty.hold);
        }
        let pid = inferior.pid();
        let mut info = self.start_target(Box::new(inferior), spec.program, stop)?;
        // A script's interpreter is known only now.
        if let Some(exe) = procfs::exe_path(pid) {
            if let Err(why) = supported::check_program(&exe) {
                let _ = self.kill();
                return Err(SessionError::Invalid(format!(
                    "spawn: cannot debug {}: {why}",
                    exe.display()
                )));
            }
        }
        info.notes
            .extend(supported::privilege_note(&request.path, euid, egid));
        if let Some(old) = killed {
            info.notes.push(format!(
                "the previous process {old} was killed to start this one"
            ));
        }
        self.targets.last_spawn = Some(again);
        Ok(info)
    }

    pub fn attach(&mut self, pid: Tid) -> Result<StopInfo> {
        self.ensure_no_target()?;
        if let Some(exe) = procfs::exe_path(pid) {
            supported::check_program(&exe).map_err(|why| {
                SessionError::Invalid(format!("attach: cannot debug process {pid}: {why}"))
            })?;
        }
        let (mut inferior, stop) = Inferior::attach(pid)?;
        inferior.read_only = self.config.read_only;
        let program = procfs::exe_path(pid)
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        self.start_target(Box::new(inferior), program, stop)
    }

    /// Takes a process another backend made (a GDB-remote stub's), stopped at `stop`.
    pub(crate) fn adopt(&mut self, mut process: Box<dyn Target>, stop: Stop) -> Result<StopInfo> {
        self.ensure_no_target()?;
        process.set_read_only(self.config.read_only);
        let program = process
            .exe_path()
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        self.start_target(process, program, stop)
    }

    fn start_target(
        &mut self,
        process: Box<dyn Target>,
        program: String,
        stop: Stop,
    ) -> Result<StopInfo> {
        self.targets.last_process = Some((process.pid(), program.clone()));
        self.targets.kept_children = false;
        // A new process has none of the last one's probes.
        self.forget_tracepoints();
        self.targets.live = Some(Live::new(process, program));
        self.targets.core = None;
        self.targets.ended = None;
        self.at_stop.snapshot = Default::default();
        self.symbols = self.symbols.renewed();
        self.loader.forget_changes();
        self.refresh_symbols();
        self.rearm();
        self.follow_loader();
        self.finish_stop(stop)
    }

    pub fn detach(&mut self) -> Result<StopInfo> {
        if self.targets.live.is_none() && self.targets.held.is_empty() {
            return Err(self.targets.no_process());
        }
        // Every process stopped and cleaned first (a listener may detach mid-run).
        self.settle_tree()?;
        let mut notes = Vec::new();
        if self.targets.live.is_some() {
            self.return_to_present()?;
        }
        if self.targets.live.is_some() {
            // Taken out of the program, kept as breakpoints are (counts and all) for the
            // next attach or spawn: a detach deleted every one.
            notes.extend(self.lift_tracepoints());
        }
        if let Some(target) = self.targets.live.as_mut() {
            // An error leaves the process traced and stopped as it was (a refusal changes
            // nothing; `kill()` still ends it).
            notes.extend(target.process.detach()?);
            self.targets.live = None;
            self.targets.ended = Some("detached".into());
            self.forget_process();
        }
        // Held processes carry none of scry's bytes; each is let go as it is.
        notes.extend(self.detach_held()?);
        Ok(StopInfo {
            notes,
            ..StopInfo::new(StopKind::Detached)
        })
    }

    /// Kills the selected process and every held one.
    pub fn kill(&mut self) -> Result<StopInfo> {
        if self.config.read_only && self.targets.core.is_none() {
            return Err(SessionError::Invalid(
                "read-only session: cannot kill the program (--read-only leaves its life as it is; detach() lets it go)".into(),
            ));
        }
        let Some(mut target) = self.targets.live.take() else {
            if self.targets.held.is_empty() {
                return Err(self.targets.no_process());
            }
            self.release_held(true);
            self.targets.ended = Some("killed by SIGKILL".into());
            return Ok(StopInfo::new(StopKind::Killed {
                signal: libc::SIGKILL,
            }));
        };
        let stop = target.process.kill()?;
        self.release_held(true);
        self.forget_process();
        self.finish_stop(stop)
    }

    /// For a process about to exit: lets go of the symbol tables without freeing them one
    /// allocation at a time (for a 200 MB program that took a third of a short session);
    /// the kernel takes the whole heap back at once. Never for a session that lives on.
    pub fn abandon_symbols_at_exit(&mut self) {
        std::mem::forget(std::mem::replace(&mut self.symbols, SymbolStore::new()));
    }

    /// Ends the session's hold on the target the way its origin asks: a spawned process is
    /// killed, an attached one detached and left running.
    pub fn release(&mut self) {
        let _ = self.settle_tree();
        self.targets.core = None;
        if self
            .targets
            .live
            .as_ref()
            .is_some_and(|t| t.process.origin() == Origin::Attached)
        {
            self.remove_all_tracepoints();
        }
        if let Some(mut target) = self.targets.live.take() {
            // The end of a session takes back what it started, read-only or not.
            target.process.set_read_only(false);
            let _ = match target.process.origin() {
                Origin::Spawned => target.process.kill().map(|_| ()),
                Origin::Attached => target.process.detach().map(drop),
            };
        }
        self.release_held(false);
        self.output.leave_to_keeper();
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.release();
    }
}
