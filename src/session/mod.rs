//! The session: the facade the script layer calls. It owns the inferior, the symbol store,
//! the user's breakpoints and the captured output, turns raw stops into [`StopInfo`]s, and
//! keeps the per-stop snapshot that scripts see as `prev`.

pub mod breakpoints;
pub mod capture;
mod error;
mod snapshot;
pub mod stack;
pub mod stop;
pub mod tls;
pub mod watchpoints;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::inferior::{Inferior, Origin, Stop, WatchSlot};
use crate::os::debugregs;
use crate::os::regs::{self, RawRegs};
use crate::os::spawn::{resolve_program, SpawnRequest};
use crate::os::{maps, procfs, signals, OsError, Tid};
use crate::symbols::disasm::{disassemble, Insn};
use crate::symbols::unwind::{self, FrameSource, UnwindLimits, UnwindRegs};
use crate::symbols::{culprit, RuntimeAddr, SymbolStore};

use breakpoints::BreakpointTable;
pub use breakpoints::{Breakpoint, BreakpointRef};
use capture::{Capture, Pump, SharedCapture};
pub use error::SessionError;
use snapshot::Snapshot;
pub use stop::{Reason, StopInfo, WatchReport};
use watchpoints::{WatchKind, WatchTable, Watchpoint};

pub type Result<T> = std::result::Result<T, SessionError>;

/// SIGINT/SIGTERM/SIGHUP reached scry and the current command should end.
pub fn signal_pending() -> bool {
    crate::os::interrupt::pending()
}

/// The signal that asked scry to end (SIGTERM, SIGHUP, or SIGINT in pipe mode).
pub fn termination() -> Option<i32> {
    crate::os::interrupt::termination()
}

/// Consumes a Ctrl-C at a terminal.
pub fn take_interrupt() -> bool {
    crate::os::interrupt::take_interrupt()
}

/// Installs scry's own SIGINT/SIGTERM/SIGHUP handling (see `os::interrupt`).
pub fn install_signal_handling(interactive: bool) {
    crate::os::interrupt::install(interactive)
}

/// Session-wide settings; scripts change them through `config`.
#[derive(Debug, Clone)]
pub struct Config {
    /// Default deadline of `continue()` and `step()`.
    pub timeout: Duration,
    /// Budget of JavaScript execution per chunk.
    pub script_timeout: Duration,
    /// Bytes of one response before it is cut.
    pub output_limit: usize,
    /// Bytes of target output kept for `output()`.
    pub capture_limit: usize,
    /// Leave address-space randomisation on for spawned programs.
    pub aslr: bool,
    /// Refuse memory and register writes and signal injection.
    pub read_only: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            timeout: Duration::from_secs(10),
            script_timeout: Duration::from_secs(5),
            output_limit: 32 * 1024,
            capture_limit: 1024 * 1024,
            aslr: false,
            read_only: false,
        }
    }
}

/// What `spawn()` was asked for.
#[derive(Debug, Clone, Default)]
pub struct SpawnSpec {
    pub program: String,
    pub args: Vec<String>,
    /// Added to (or, with `None`, removed from) scry's own environment.
    pub env: Vec<(String, Option<String>)>,
    pub cwd: Option<PathBuf>,
    pub stdin: Option<Vec<u8>>,
}

/// `loop.c:15` or `src/app/main.rs:120`: a file name (it has a dot or a slash) and a line.
fn source_line_expr(expr: &str) -> Option<(&str, u32)> {
    let (file, line) = expr.trim().rsplit_once(':')?;
    let line: u32 = line.parse().ok().filter(|n| *n > 0)?;
    (file.contains('.') || file.contains('/')).then_some((file, line))
}

/// DWARF register numbers 0..=16 by name (x86-64 psABI order).
const DWARF_NAMES: [&str; 17] = [
    "rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp", "r8", "r9", "r10", "r11", "r12", "r13",
    "r14", "r15", "rip",
];

/// One row of `state.unwind()`: a physical frame, or a call inlined into one.
#[derive(Debug, Clone)]
pub struct FrameRow {
    pub frame: usize,
    pub pc: u64,
    pub sp: u64,
    pub symbol: Option<String>,
    pub file: Option<String>,
    pub line: Option<u32>,
    pub inlined: bool,
    /// Registers known in this frame (callee-saved ones in callers), by name.
    pub regs: Vec<(&'static str, u64)>,
    /// How the frame was found: `regs` (frame 0), `cfi`, `fp` (frame pointers), `signal`.
    pub source: &'static str,
}

/// `state.source()`: the file, pc's line, and the numbered lines around it.
pub struct SourceView {
    pub path: String,
    pub line: u32,
    pub rows: Vec<(u32, String)>,
}

/// One row of `thread.list()`.
#[derive(Debug, Clone)]
pub struct ThreadRow {
    pub tid: Tid,
    pub name: String,
    pub state: String,
    pub pc: u64,
    pub symbol: Option<String>,
    pub selected: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignalMode {
    Stop,
    Pass,
}

struct Target {
    inferior: Inferior,
    program: String,
}

pub struct Session {
    pub config: Config,
    target: Option<Target>,
    symbols: SymbolStore,
    last_maps_refresh: Option<Instant>,
    breakpoints: BreakpointTable,
    watchpoints: WatchTable,
    capture: SharedCapture,
    pumps: Vec<Pump>,
    /// How the last process ended, for "no live process (...)".
    ended: Option<String>,
    snapshot: Snapshot,
    signal_modes: [SignalMode; 65],
    thread_events: bool,
}

impl Session {
    pub fn new(config: Config) -> Self {
        let capture = Arc::new(Mutex::new(Capture::new(config.capture_limit)));
        let mut signal_modes = [SignalMode::Stop; 65];
        for (sig, mode) in signal_modes.iter_mut().enumerate() {
            if signals::passes_silently(sig as i32) {
                *mode = SignalMode::Pass;
            }
        }
        Session {
            config,
            target: None,
            symbols: SymbolStore::new(),
            last_maps_refresh: None,
            breakpoints: BreakpointTable::default(),
            watchpoints: WatchTable::default(),
            capture,
            pumps: Vec::new(),
            ended: None,
            snapshot: Snapshot::default(),
            signal_modes,
            thread_events: false,
        }
    }

    // ---- process lifecycle -------------------------------------------------------------

    pub fn is_live(&self) -> bool {
        self.target.as_ref().is_some_and(|t| !t.inferior.is_dead())
    }

    pub fn pid(&self) -> Option<Tid> {
        self.target.as_ref().map(|t| t.inferior.pid())
    }

    pub fn program(&self) -> Option<&str> {
        self.target.as_ref().map(|t| t.program.as_str())
    }

    pub fn origin(&self) -> Option<Origin> {
        self.target.as_ref().map(|t| t.inferior.origin())
    }

    fn ensure_no_target(&self) -> Result<()> {
        match &self.target {
            Some(t) if !t.inferior.is_dead() => Err(SessionError::Invalid(format!(
                "process {} is still live; kill() or detach() it first",
                t.inferior.pid()
            ))),
            _ => Ok(()),
        }
    }

    pub fn spawn(&mut self, spec: SpawnSpec) -> Result<StopInfo> {
        self.ensure_no_target()?;
        let path = resolve_program(&spec.program).ok_or_else(|| {
            SessionError::Invalid(format!("spawn: no such program '{}'", spec.program))
        })?;
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
        };
        *self.capture.lock().expect("capture lock") = Capture::new(self.config.capture_limit);
        let (inferior, output, stop) = Inferior::spawn(&request)?;
        self.pumps = vec![
            Pump::start(output.stdout, self.capture.clone()),
            Pump::start(output.stderr, self.capture.clone()),
        ];
        self.start_target(inferior, spec.program, stop)
    }

    pub fn attach(&mut self, pid: Tid) -> Result<StopInfo> {
        self.ensure_no_target()?;
        let (inferior, stop) = Inferior::attach(pid)?;
        let program = procfs::exe_path(pid)
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        self.start_target(inferior, program, stop)
    }

    fn start_target(
        &mut self,
        inferior: Inferior,
        program: String,
        stop: Stop,
    ) -> Result<StopInfo> {
        self.target = Some(Target { inferior, program });
        self.ended = None;
        self.snapshot = Snapshot::default();
        self.symbols = SymbolStore::new();
        self.refresh_symbols();
        self.rearm();
        self.finish_stop(stop)
    }

    pub fn detach(&mut self) -> Result<StopInfo> {
        let mut target = self.target.take().ok_or_else(|| self.no_process())?;
        let result = target.inferior.detach();
        self.ended = Some("detached".into());
        self.forget_process();
        result?;
        Ok(StopInfo {
            reason: Some(Reason::Detached),
            ..Default::default()
        })
    }

    pub fn kill(&mut self) -> Result<StopInfo> {
        let mut target = self.target.take().ok_or_else(|| self.no_process())?;
        let stop = target.inferior.kill()?;
        self.forget_process();
        self.finish_stop(stop)
    }

    /// Ends the session's hold on the target the way its origin asks: a spawned process is
    /// killed, an attached one detached and left running.
    pub fn release(&mut self) {
        if let Some(mut target) = self.target.take() {
            let _ = match target.inferior.origin() {
                Origin::Spawned => target.inferior.kill().map(|_| ()),
                Origin::Attached => target.inferior.detach(),
            };
        }
    }

    // ---- running -----------------------------------------------------------------------

    /// Arms the deadline for a run (one continue or a batch of steps).
    pub fn arm(&mut self, deadline: Instant) -> Result<()> {
        self.inferior_for_run()?.arm(deadline);
        Ok(())
    }

    pub fn disarm(&mut self) {
        if let Some(t) = &mut self.target {
            t.inferior.disarm();
        }
    }

    /// One instruction on the selected thread, without describing the stop: for batches.
    pub fn step_raw(&mut self, deadline: Instant) -> Result<Stop> {
        let modes = self.signal_modes;
        let pass = move |sig: i32| modes.get(sig as usize) == Some(&SignalMode::Pass);
        let stop = self.inferior_for_run()?.step(deadline, &pass)?;
        self.after_raw(stop);
        Ok(stop)
    }

    /// One step, booked but not described (see [`describe`](Self::describe)): per-event
    /// work stays minimal when listeners run at every stop.
    pub fn step(&mut self, deadline: Instant) -> Result<StopInfo> {
        let stop = self.step_raw(deadline)?;
        self.book_stop(stop)
    }

    pub fn cont(&mut self, deadline: Instant) -> Result<StopInfo> {
        let modes = self.signal_modes;
        let pass = move |sig: i32| modes.get(sig as usize) == Some(&SignalMode::Pass);
        loop {
            let stop = self.inferior_for_run()?.cont(deadline, &pass)?;
            self.after_raw(stop);
            let info = self.book_stop(stop)?;
            // A watch hit nobody reports (a write on a read watch) is not a stop.
            if matches!(stop, Stop::Watchpoint { .. }) && info.reason() != Reason::Watchpoint {
                continue;
            }
            return Ok(info);
        }
    }

    /// Bookkeeping every stop needs, even one nobody looks at: the snapshot rotates.
    fn after_raw(&mut self, stop: Stop) {
        self.snapshot.rotate();
        if let Stop::Exec { .. } = stop {
            // The old image is gone with every int3 and debug register in it.
            self.forget_process();
            self.symbols = SymbolStore::new();
            self.refresh_symbols();
            self.rearm();
        }
    }

    /// Turns a raw stop into the user's view of it, counting breakpoint hits.
    pub fn finish_stop(&mut self, stop: Stop) -> Result<StopInfo> {
        let mut info = self.book_stop(stop)?;
        self.describe(&mut info);
        Ok(info)
    }

    /// What a stop needs only when someone reads its line: the symbol, whether to show the
    /// thread, and the output waiting in `output()`.
    pub fn describe(&mut self, info: &mut StopInfo) {
        self.find_culprit(info);
        if let Some(pc) = info.pc {
            info.symbol = self.symbolize(pc);
            // Where in the source, like a debugger's stop message. Not at the entry stop:
            // `_start` has no lines, and looking would parse the program's DWARF before
            // anyone asked for it.
            if info.reason() != Reason::Entry {
                info.source = self.source_position(pc);
            }
        }
        info.show_tid = self
            .target
            .as_ref()
            .is_some_and(|t| t.inferior.thread_ids().len() > 1);
        self.settle_output();
        info.unread_output = self.capture.lock().map(|c| c.unread()).unwrap_or(0);
    }

    /// Books a stop: its reason and pc, breakpoint hit counts, watchpoint values.
    pub fn book_stop(&mut self, stop: Stop) -> Result<StopInfo> {
        let mut info = StopInfo {
            tid: stop.tid(),
            ..Default::default()
        };
        info.reason = Some(match stop {
            Stop::Entry { .. } => Reason::Entry,
            Stop::Attached { .. } => Reason::Attached,
            Stop::Step { .. } => Reason::Step,
            Stop::Breakpoint { addr, .. } => {
                if let Some(bp) = self.breakpoints.hit(addr) {
                    info.breakpoint_id = Some(bp.id);
                    info.breakpoint_name = bp.name.clone();
                }
                Reason::Breakpoint
            }
            Stop::Signal {
                signal, fault_addr, ..
            } => {
                info.signal = Some(signal);
                if signals::has_fault_addr(signal) {
                    info.fault_addr = Some(fault_addr);
                }
                Reason::Signal
            }
            Stop::Timeout { .. } => Reason::Timeout,
            Stop::Interrupted { .. } => Reason::Interrupted,
            Stop::Exec { .. } => Reason::Exec,
            Stop::ThreadExit { .. } => Reason::ThreadExit,
            Stop::ThreadStart { .. } => Reason::ThreadStart,
            Stop::Watchpoint { slots, .. } => match self.watch_hit(slots)? {
                Some(report) => {
                    info.watch = Some(report);
                    Reason::Watchpoint
                }
                None => Reason::Step,
            },
            Stop::Exited { code } => {
                info.exit_code = Some(code);
                Reason::Exited
            }
            Stop::Killed { signal } => {
                info.signal = Some(signal);
                Reason::Killed
            }
        });
        // A process can die while its other threads are being stopped: the stops before its
        // end are still reported, without a pc.
        let dead = self.target.as_ref().is_none_or(|t| t.inferior.is_dead());
        if stop.is_final() {
            self.ended = info.ending();
            self.target = None;
            self.forget_process();
        } else if !dead {
            info.pc = Some(self.pc()?);
        }
        Ok(info)
    }

    /// The signal the selected thread stopped with will not be delivered.
    pub fn suppress_signal(&mut self) -> Result<()> {
        self.check_writable("suppress a signal")?;
        let inferior = self.inferior()?;
        let tid = inferior.selected();
        inferior.clear_pending_signal(tid);
        Ok(())
    }

    /// Thread creation and exit become stops during `cont()` (for `thread` listeners).
    pub fn set_thread_events(&mut self, on: bool) {
        self.thread_events = on;
        if let Some(t) = &mut self.target {
            t.inferior.report_threads = on;
        }
    }

    pub fn signal_mode(&mut self, signal: i32, mode: SignalMode) -> Result<()> {
        let slot = self
            .signal_modes
            .get_mut(signal as usize)
            .filter(|_| signal > 0)
            .ok_or_else(|| SessionError::Invalid(format!("no signal {signal}")))?;
        *slot = mode;
        Ok(())
    }

    // ---- registers and memory ----------------------------------------------------------

    fn no_process(&self) -> SessionError {
        SessionError::NoProcess(self.ended.clone())
    }

    fn inferior(&mut self) -> Result<&mut Inferior> {
        match &mut self.target {
            Some(t) if !t.inferior.is_dead() => Ok(&mut t.inferior),
            _ => Err(SessionError::NoProcess(self.ended.clone())),
        }
    }

    /// The inferior for resuming: a process that died while being stopped may still have
    /// stops to report (the thread events before its end, then the end itself).
    fn inferior_for_run(&mut self) -> Result<&mut Inferior> {
        match &mut self.target {
            Some(t) if !t.inferior.is_dead() || t.inferior.has_queued() => Ok(&mut t.inferior),
            _ => Err(SessionError::NoProcess(self.ended.clone())),
        }
    }

    pub fn selected_tid(&mut self) -> Result<Tid> {
        Ok(self.inferior()?.selected())
    }

    /// The selected thread's registers (one GETREGS per stop), noted for `prev`.
    pub fn regs(&mut self) -> Result<RawRegs> {
        let inferior = self.inferior()?;
        let tid = inferior.selected();
        let regs = *inferior.regs(tid)?;
        self.snapshot.note_regs(&regs);
        Ok(regs)
    }

    pub fn pc(&mut self) -> Result<u64> {
        Ok(self.regs()?.rip)
    }

    pub fn set_register(&mut self, name: &str, value: u64) -> Result<()> {
        self.check_writable("write a register")?;
        let index = regs::register_index(name)
            .ok_or_else(|| SessionError::Invalid(format!("no register '{name}'")))?;
        let mut raw = self.regs()?;
        regs::set_register(&mut raw, index, value);
        let inferior = self.inferior()?;
        let tid = inferior.selected();
        inferior.set_regs(tid, &raw)?;
        self.snapshot.note_regs(&raw);
        Ok(())
    }

    pub fn read_memory(&mut self, addr: u64, len: usize) -> Result<Vec<u8>> {
        let mut buf = vec![0u8; len];
        self.inferior()?.read_memory(addr, &mut buf)?;
        self.snapshot.note_memory(addr, &buf);
        Ok(buf)
    }

    /// Reads up to `max` bytes, stopping early at unmapped memory (for strings).
    pub fn read_memory_partial(&mut self, addr: u64, max: usize) -> Result<Vec<u8>> {
        let mut buf = vec![0u8; max];
        let n = self.inferior()?.read_memory_partial(addr, &mut buf);
        if n == 0 && max > 0 {
            return Err(crate::os::OsError::Unmapped { addr, len: max }.into());
        }
        buf.truncate(n);
        Ok(buf)
    }

    pub fn write_memory(&mut self, addr: u64, bytes: &[u8]) -> Result<()> {
        self.check_writable("write memory")?;
        self.inferior()?.write_memory(addr, bytes)?;
        Ok(())
    }

    fn check_writable(&self, what: &str) -> Result<()> {
        if self.config.read_only {
            return Err(SessionError::Invalid(format!(
                "read-only session: cannot {what}"
            )));
        }
        Ok(())
    }

    pub fn prev_regs(&self) -> Option<&RawRegs> {
        self.snapshot.prev_regs()
    }

    pub fn prev_memory(&self, addr: u64, len: usize) -> Option<Vec<u8>> {
        self.snapshot.prev_memory(addr, len)
    }

    pub fn output(&mut self) -> String {
        self.settle_output();
        self.capture
            .lock()
            .map(|mut c| c.take())
            .unwrap_or_default()
    }

    /// Lets the pipe pumps catch up with what the stopped target has written.
    fn settle_output(&self) {
        for pump in &self.pumps {
            pump.settle(Duration::from_millis(100));
        }
    }

    pub fn thread_ids(&mut self) -> Result<Vec<Tid>> {
        Ok(self.inferior()?.thread_ids())
    }

    // ---- threads, stacks, thread-locals ------------------------------------------------------

    pub fn thread_list(&mut self) -> Result<Vec<ThreadRow>> {
        let pid = self.pid().unwrap_or(0);
        let tids = self.inferior()?.thread_ids();
        let selected = self.inferior()?.selected();
        let mut rows = Vec::with_capacity(tids.len());
        for tid in tids {
            let regs = *self.inferior()?.regs(tid)?;
            let state = self
                .syscall_state(&regs)
                .unwrap_or_else(|| "stopped".into());
            rows.push(ThreadRow {
                tid,
                name: procfs::thread_name(pid, tid).unwrap_or_default(),
                state,
                pc: regs.rip,
                symbol: self.symbolize(regs.rip),
                selected: tid == selected,
            });
        }
        Ok(rows)
    }

    /// `in futex` when the thread was stopped inside a system call (pc right after a
    /// `syscall` instruction and orig_rax holding its number).
    fn syscall_state(&mut self, regs: &RawRegs) -> Option<String> {
        if (regs.orig_rax as i64) < 0 || regs.rip < 2 {
            return None;
        }
        let mut insn = [0u8; 2];
        self.inferior()
            .ok()?
            .read_memory(regs.rip - 2, &mut insn)
            .ok()?;
        (insn == [0x0f, 0x05]).then(|| format!("in {}", crate::os::syscalls::name(regs.orig_rax)))
    }

    pub fn select_thread(&mut self, tid: Tid) -> Result<()> {
        let inferior = self.inferior()?;
        if inferior.select(tid) {
            Ok(())
        } else {
            Err(SessionError::Invalid(format!(
                "no thread {tid}; threads: {}",
                inferior
                    .thread_ids()
                    .iter()
                    .map(|t| t.to_string())
                    .collect::<Vec<_>>()
                    .join(" ")
            )))
        }
    }

    /// Bounds of the stack that holds the selected thread's sp.
    pub fn stack(&mut self) -> Result<stack::StackBounds> {
        let sp = self.regs()?.rsp;
        let pid = self.pid().unwrap_or(0);
        let text = procfs::maps_text(pid).map_err(|err| OsError::Io {
            what: "read /proc/PID/maps",
            err,
        })?;
        let limit = std::fs::read_to_string(format!("/proc/{pid}/limits"))
            .ok()
            .and_then(|l| stack::parse_stack_limit(&l));
        stack::stack_bounds(&maps::parse_maps(&text), sp, limit)
            .ok_or_else(|| SessionError::Invalid(format!("sp {sp:#x} is not inside any mapping")))
    }

    /// Address and size of thread-local `name` in the selected thread.
    pub fn thread_local(&mut self, name: &str) -> Result<(u64, u64)> {
        if self.symbols.tls_symbol(name).is_none() {
            self.refresh_symbols_on_miss();
        }
        let (module_path, bias, sym_offset, size, exe_tls) = {
            let (module, sym) = self.symbols.tls_symbol(name).ok_or_else(|| {
                SessionError::Invalid(format!(
                    "no thread-local variable '{name}' in the executable or its start-up libraries"
                ))
            })?;
            let exe_tls = if module.is_exe {
                module.image.tls.as_ref().map(|t| (t.memsz, t.align))
            } else {
                None
            };
            (
                module.path.clone(),
                module.bias.0,
                sym.addr.0,
                sym.size,
                exe_tls,
            )
        };
        let modid = self
            .tls_module_order()
            .iter()
            .position(|b| *b == bias)
            .map(|i| i as u64 + 1)
            .or(exe_tls.map(|_| 1));
        let fs_base = self.regs()?.fs_base;
        let tid = self.selected_tid()?;
        if let Some(modid) = modid {
            let dtv = self.read_u64(fs_base + tls::TCB_DTV_OFFSET)?;
            let block = self.read_u64(dtv + tls::DTV_ENTRY_SIZE * modid)?;
            if block != tls::DTV_UNALLOCATED && block != 0 {
                return Ok((block + sym_offset, size));
            }
        }
        if let Some((memsz, align)) = exe_tls {
            return Ok((tls::exe_block(fs_base, memsz, align) + sym_offset, size));
        }
        Err(SessionError::Invalid(format!(
            "the TLS block of {module_path} is not allocated in thread {tid} (a library loaded with dlopen gets it on first use)"
        )))
    }

    fn read_u64(&mut self, addr: u64) -> Result<u64> {
        let b = self.read_memory(addr, 8)?;
        Ok(u64::from_le_bytes(b.try_into().expect("8 bytes")))
    }

    /// Load biases of the modules with a TLS segment, in link-map order (their module ids are
    /// 1, 2, ...). Read from the dynamic loader's `_r_debug`; empty for a static program.
    fn tls_module_order(&mut self) -> Vec<u64> {
        let Ok(r_debug) = self.resolve("_r_debug") else {
            return Vec::new();
        };
        let Ok(mut map) = self.read_u64(r_debug + tls::R_DEBUG_MAP_OFFSET) else {
            return Vec::new();
        };
        let mut order = Vec::new();
        let mut seen = 0;
        while map != 0 && seen < 4096 {
            seen += 1;
            let Ok(l_addr) = self.read_u64(map) else {
                break;
            };
            let has_tls = self
                .symbols
                .modules()
                .iter()
                .any(|m| m.bias.0 == l_addr && m.image.tls.is_some());
            if has_tls {
                order.push(l_addr);
            }
            match self.read_u64(map + tls::LINK_MAP_NEXT_OFFSET) {
                Ok(next) => map = next,
                Err(_) => break,
            }
        }
        order
    }

    /// The selected thread's call stack from CFI (frame-pointer fallback), innermost first,
    /// with inlined calls as frames of their own; and why it ended early, if it did.
    /// Like a debugger's backtrace, the listing ends at `main` unless `past_main`: the C
    /// runtime's start-up frames below it are rarely what anyone looks for.
    pub fn unwind(
        &mut self,
        max_frames: usize,
        past_main: bool,
    ) -> Result<(Vec<FrameRow>, Option<String>)> {
        let regs = self.regs()?;
        let mut frame0 = UnwindRegs::default();
        for (dwarf, value) in [
            (0, regs.rax),
            (1, regs.rdx),
            (2, regs.rcx),
            (3, regs.rbx),
            (4, regs.rsi),
            (5, regs.rdi),
            (6, regs.rbp),
            (7, regs.rsp),
            (8, regs.r8),
            (9, regs.r9),
            (10, regs.r10),
            (11, regs.r11),
            (12, regs.r12),
            (13, regs.r13),
            (14, regs.r14),
            (15, regs.r15),
            (16, regs.rip),
        ] {
            frame0.set(dwarf, value);
        }
        let (frames, stopped) = {
            let inferior = &self
                .target
                .as_ref()
                .ok_or_else(|| self.no_process())?
                .inferior;
            let read = |addr: u64, buf: &mut [u8]| inferior.read_memory(addr, buf).is_ok();
            unwind::unwind(&self.symbols, &frame0, &read, &UnwindLimits { max_frames })
        };
        let mut rows = Vec::with_capacity(frames.len());
        for frame in &frames {
            let symbol = self.symbolize_frame(frame.pc, frame.lookup_pc());
            let locations = self.symbols.locations(RuntimeAddr(frame.lookup_pc()));
            let regs: Vec<(&'static str, u64)> = DWARF_NAMES
                .iter()
                .enumerate()
                .filter_map(|(n, name)| frame.regs.get(n as u16).map(|v| (*name, v)))
                .collect();
            let base = FrameRow {
                frame: 0,
                pc: frame.pc,
                sp: frame.sp,
                symbol: symbol.clone(),
                file: None,
                line: None,
                inlined: false,
                regs,
                source: match frame.source {
                    FrameSource::Regs => "regs",
                    FrameSource::Cfi => "cfi",
                    FrameSource::FramePointer => "fp",
                    FrameSource::SignalFrame => "signal",
                },
            };
            if locations.is_empty() {
                rows.push(FrameRow {
                    frame: rows.len(),
                    ..base
                });
                continue;
            }
            for loc in &locations {
                // An inlined call has no symbol of its own: its function is its name.
                let symbol = if loc.inlined {
                    loc.function.clone()
                } else {
                    symbol.clone()
                };
                rows.push(FrameRow {
                    frame: rows.len(),
                    symbol,
                    file: loc.file.clone(),
                    line: loc.line,
                    inlined: loc.inlined,
                    ..base.clone()
                });
            }
        }
        if !past_main {
            let is_main = |r: &FrameRow| {
                !r.inlined
                    && r.symbol
                        .as_deref()
                        .is_some_and(|s| s.split('+').next() == Some("main"))
            };
            if let Some(at) = rows.iter().position(is_main) {
                rows.truncate(at + 1);
                return Ok((rows, None));
            }
        }
        Ok((rows, stopped))
    }

    /// `loop.c:15` for an address (the innermost inlined position), if line tables say.
    pub fn source_position(&self, pc: u64) -> Option<String> {
        let loc = self.symbols.locations(RuntimeAddr(pc)).into_iter().next()?;
        let file = loc.file?;
        let short = file.rsplit('/').next().unwrap_or(&file).to_string();
        Some(match loc.line {
            Some(n) => format!("{short}:{n}"),
            None => short,
        })
    }

    /// Source lines around the selected thread's pc.
    pub fn source_lines(&mut self, context: u32) -> Result<SourceView> {
        let pc = self.pc()?;
        let loc = self
            .symbols
            .locations(RuntimeAddr(pc))
            .into_iter()
            .next()
            .filter(|l| l.file.is_some() && l.line.is_some())
            .ok_or_else(|| SessionError::Invalid(format!("no line information for {pc:#x}")))?;
        let (path, line) = (loc.file.unwrap_or_default(), loc.line.unwrap_or(0));
        let text = std::fs::read_to_string(&path).map_err(|e| {
            SessionError::Invalid(format!("{path}:{line}: cannot read the source: {e}"))
        })?;
        let first = line.saturating_sub(context).max(1);
        let rows = text
            .lines()
            .enumerate()
            .map(|(i, l)| (i as u32 + 1, l))
            .filter(|(n, _)| *n >= first && *n <= line + context)
            .map(|(n, l)| (n, l.chars().take(200).collect()))
            .collect();
        Ok(SourceView { path, line, rows })
    }

    /// `main+0x1f` for a return address: named by the call (`lookup`, one byte back) so a
    /// call at the very end of a function is not attributed to the next one.
    fn symbolize_frame(&mut self, pc: u64, lookup: u64) -> Option<String> {
        if pc == lookup {
            return self.symbolize(pc);
        }
        let (module, sym, _) = self.symbols.symbol_at(RuntimeAddr(lookup))?;
        let start = module.bias.to_runtime(sym.addr).0;
        let name = sym.display_name();
        Some(match pc - start {
            0 => name.into_owned(),
            off => format!("{name}+{off:#x}"),
        })
    }

    // ---- symbols -----------------------------------------------------------------------

    fn refresh_symbols(&mut self) {
        let Some(pid) = self.pid() else { return };
        let Ok(text) = procfs::maps_text(pid) else {
            return;
        };
        let entries = maps::parse_maps(&text);
        let exe = procfs::exe_path(pid);
        let root = format!("/proc/{pid}/root");
        self.symbols
            .refresh(&entries, exe.as_deref(), &|m: &maps::MapEntry| {
                let path = m.path.clone().unwrap_or_default();
                let rooted = PathBuf::from(format!("{root}{path}"));
                if rooted.exists() {
                    rooted
                } else {
                    PathBuf::from(path)
                }
            });
        self.last_maps_refresh = Some(Instant::now());
    }

    /// Re-reads the module list when an address or name is unknown, at most twice a second.
    fn refresh_symbols_on_miss(&mut self) -> bool {
        let stale = self
            .last_maps_refresh
            .is_none_or(|t| t.elapsed() > Duration::from_millis(500));
        if stale && self.is_live() {
            self.refresh_symbols();
            return true;
        }
        false
    }

    pub fn symbolize(&mut self, addr: u64) -> Option<String> {
        if let Some(s) = self.symbols.symbolize(RuntimeAddr(addr)) {
            return Some(s);
        }
        if self.symbols.module_at(RuntimeAddr(addr)).is_none() && self.refresh_symbols_on_miss() {
            return self.symbols.symbolize(RuntimeAddr(addr));
        }
        None
    }

    /// `main`, `main+0x10`, `libc.so.6:puts`, `0x401136`.
    pub fn resolve(&mut self, expr: &str) -> Result<u64> {
        if let Some((file, line)) = source_line_expr(expr) {
            return self.symbols.line_address(file, line).map(|a| a.0).ok_or_else(|| {
                SessionError::Invalid(format!(
                    "no code for {file}:{line} in the line tables (is the program built with -g, and is the line inside a function?)"
                ))
            });
        }
        match self.symbols.resolve(expr) {
            Ok(addr) => Ok(addr.0),
            Err(_) if self.refresh_symbols_on_miss() => Ok(self.symbols.resolve(expr)?.0),
            Err(e) => Err(e.into()),
        }
    }

    /// The size of a plain symbol name (no offset), for default watch lengths.
    pub fn symbol_size(&self, name: &str) -> Option<u64> {
        self.symbols.lookup(name).map(|(_, sym, _)| sym.size)
    }

    pub fn symbol_store(&self) -> &SymbolStore {
        &self.symbols
    }

    pub fn disasm(&mut self, addr: u64, count: usize) -> Result<Vec<Insn>> {
        // x86 instructions are at most 15 bytes.
        let want = count.saturating_mul(15).min(64 * 1024);
        let bytes = self.read_memory_partial(addr, want)?;
        let store = &self.symbols;
        let resolver = |a: u64| store.symbolize(RuntimeAddr(a));
        Ok(disassemble(&bytes, addr, count, &resolver))
    }

    /// The process is gone (or replaced): breakpoints and watchpoints wait for the next one.
    fn forget_process(&mut self) {
        self.breakpoints.disarm_all();
        self.watchpoints.disarm_all();
    }

    /// Arms every waiting breakpoint and watchpoint in the new process, resolving what the
    /// user wrote again (a symbol may have moved). One that cannot be armed stays waiting.
    fn rearm(&mut self) {
        for i in 0..self.breakpoints.list().len() {
            let spec = self.breakpoints.list()[i].spec.clone();
            let Ok(addr) = self.resolve(&spec) else {
                continue;
            };
            let Ok(inferior) = self.inferior() else {
                return;
            };
            if inferior.insert_site(addr).is_ok() {
                let bp = &mut self.breakpoints.list_mut()[i];
                bp.addr = addr;
                bp.armed = true;
                bp.hits = 0;
            }
        }
        for i in 0..self.watchpoints.list().len() {
            let w = self.watchpoints.list()[i].clone();
            let Ok(addr) = self.resolve(&w.spec) else {
                continue;
            };
            let Ok(last) = self.read_memory(addr, w.len as usize) else {
                continue;
            };
            let Ok(inferior) = self.inferior() else {
                return;
            };
            let Some(slot) = inferior.free_watch_slot() else {
                continue;
            };
            let watch = WatchSlot {
                addr,
                len: w.len,
                access: w.kind.hardware(),
            };
            if debugregs::validate(addr, w.len, watch.access).is_ok()
                && inferior.set_watch(slot, watch).is_ok()
            {
                let wp = &mut self.watchpoints.list_mut()[i];
                *wp = Watchpoint {
                    addr,
                    slot,
                    last,
                    armed: true,
                    hits: 0,
                    ..w
                };
            }
        }
    }

    // ---- watchpoints -------------------------------------------------------------------

    /// Arms a hardware watchpoint on every thread. The value there now is the "before" of
    /// the first hit.
    pub fn watchpoint_set(
        &mut self,
        addr: u64,
        kind: WatchKind,
        len: u64,
        name: Option<String>,
        spec: String,
    ) -> Result<u32> {
        if let Some(n) = &name {
            if self.watchpoints.name_taken(n) {
                return Err(SessionError::Invalid(format!(
                    "a watchpoint named '{n}' exists already"
                )));
            }
        }
        debugregs::validate(addr, len, kind.hardware()).map_err(SessionError::Invalid)?;
        let last = self.read_memory(addr, len as usize)?;
        let inferior = self.inferior()?;
        let Some(slot) = inferior.free_watch_slot() else {
            let ids: Vec<String> = self
                .watchpoints
                .list()
                .iter()
                .filter(|w| w.armed)
                .map(|w| w.id.to_string())
                .collect();
            return Err(SessionError::Invalid(format!(
                "all 4 hardware watchpoint slots are in use (watchpoints {}); remove one first",
                ids.join(", ")
            )));
        };
        inferior.set_watch(
            slot,
            WatchSlot {
                addr,
                len,
                access: kind.hardware(),
            },
        )?;
        Ok(self.watchpoints.add(Watchpoint {
            id: 0,
            addr,
            len,
            kind,
            name,
            hits: 0,
            slot,
            last,
            spec,
            armed: true,
        }))
    }

    pub fn watchpoint_remove(&mut self, r: BreakpointRef) -> Result<()> {
        let found = self.watchpoints.remove_by(|w| match &r {
            BreakpointRef::Id(id) => w.id == *id,
            BreakpointRef::Name(n) => w.name.as_deref() == Some(*n),
        });
        let w = found.ok_or_else(|| {
            SessionError::Invalid(match &r {
                BreakpointRef::Id(id) => format!("no watchpoint {id}"),
                BreakpointRef::Name(n) => format!("no watchpoint named '{n}'"),
            })
        })?;
        if w.armed {
            if let Ok(inferior) = self.inferior() {
                inferior.clear_watch(w.slot);
            }
        }
        Ok(())
    }

    pub fn watchpoints(&self) -> &[Watchpoint] {
        self.watchpoints.list()
    }

    /// Books the hits of the fired slots; describes the first one a user sees.
    fn watch_hit(&mut self, slots: u8) -> Result<Option<WatchReport>> {
        let mut report = None;
        for slot in 0..debugregs::SLOTS {
            if slots & (1 << slot) == 0 {
                continue;
            }
            let Some(w) = self
                .watchpoints
                .list()
                .iter()
                .find(|w| w.slot == slot)
                .cloned()
            else {
                continue;
            };
            let now = self.read_memory(w.addr, w.len as usize)?;
            let Some(hit) = self.watchpoints.hit(slot, now) else {
                continue;
            };
            if report.is_none() {
                // The culprit instruction is found when someone asks (see `find_culprit`).
                report = Some(WatchReport {
                    id: hit.id,
                    name: w.name.clone(),
                    is_write: hit.is_write,
                    addr: w.addr,
                    len: w.len,
                    old: hit.old,
                    new: hit.new,
                    ..WatchReport::default()
                });
            }
        }
        Ok(report)
    }

    /// Finds the instruction that made a watchpoint's access, once, while the target is still
    /// at that stop (decoding it costs more than the stop itself, so only on demand).
    pub fn find_culprit(&mut self, info: &mut StopInfo) {
        let Some(w) = info.watch.as_mut() else { return };
        if w.culprit_searched || !self.is_live() {
            return;
        }
        w.culprit_searched = true;
        let (addr, len) = (w.addr, w.len);
        if let Ok((insn_addr, insn_text)) = self.culprit(addr, len) {
            let insn_symbol = insn_addr.and_then(|a| self.symbolize(a));
            if let Some(w) = info.watch.as_mut() {
                (w.insn_addr, w.insn_text, w.insn_symbol) = (insn_addr, insn_text, insn_symbol);
            }
        }
    }

    /// The instruction that made the access: the trap leaves pc just past it.
    fn culprit(&mut self, addr: u64, len: u64) -> Result<(Option<u64>, Option<String>)> {
        let regs = self.regs()?;
        let pc = regs.rip;
        let from = pc.saturating_sub(culprit::MAX_INSN as u64);
        let mut code = vec![0u8; (pc - from) as usize];
        let inferior = self.inferior()?;
        // The bytes right before pc may start on an unmapped page: keep what is readable.
        let mut skip = 0;
        while skip < code.len()
            && inferior
                .read_memory(from + skip as u64, &mut code[skip..])
                .is_err()
        {
            skip += 1;
        }
        let code = &code[skip..];
        let reg = |r: iced_x86::Register| register_value(&regs, r);
        let Some(start) = culprit::accessing_instruction(code, pc, (addr, len), &reg) else {
            return Ok((None, None));
        };
        let text = self.disasm(start, 1)?.into_iter().next().map(|i| i.text);
        Ok((Some(start), text))
    }

    // ---- breakpoints -------------------------------------------------------------------

    pub fn breakpoint_set(&mut self, addr: u64, name: Option<String>, spec: String) -> Result<u32> {
        if let Some(n) = &name {
            if self.breakpoints.name_taken(n) {
                return Err(SessionError::Invalid(format!(
                    "a breakpoint named '{n}' exists already"
                )));
            }
        }
        self.inferior()?.insert_site(addr).map_err(|e| match e {
            crate::os::OsError::Unmapped { .. } | crate::os::OsError::Unwritable { .. } => {
                SessionError::Invalid(format!(
                    "cannot set a breakpoint at {addr:#x}: address not mapped"
                ))
            }
            other => other.into(),
        })?;
        Ok(self.breakpoints.add(addr, name, spec))
    }

    /// A breakpoint site of scry's own (`finish()` uses one at the return address): not a
    /// user breakpoint and not listed. Removing it keeps a user breakpoint at the same place.
    pub fn temp_site(&mut self, addr: u64, on: bool) -> Result<()> {
        let user = self
            .breakpoints
            .list()
            .iter()
            .any(|b| b.armed && b.addr == addr);
        let inferior = self.inferior()?;
        if on {
            inferior.insert_site(addr)?;
        } else if !user {
            inferior.remove_site(addr)?;
        }
        Ok(())
    }

    pub fn breakpoint_remove(&mut self, r: BreakpointRef) -> Result<Breakpoint> {
        let what = match &r {
            BreakpointRef::Id(id) => format!("no breakpoint {id}"),
            BreakpointRef::Name(n) => format!("no breakpoint named '{n}'"),
        };
        let (bp, shared) = self
            .breakpoints
            .remove(&r)
            .ok_or(SessionError::Invalid(what))?;
        if bp.armed && !shared {
            if let Ok(inferior) = self.inferior() {
                inferior.remove_site(bp.addr)?;
            }
        }
        Ok(bp)
    }

    pub fn breakpoints(&self) -> &[Breakpoint] {
        self.breakpoints.list()
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.release();
    }
}

/// A 64-bit register's value for address arithmetic in the disassembler.
fn register_value(regs: &RawRegs, r: iced_x86::Register) -> Option<u64> {
    use iced_x86::Register as X;
    Some(match r.full_register() {
        X::RAX => regs.rax,
        X::RBX => regs.rbx,
        X::RCX => regs.rcx,
        X::RDX => regs.rdx,
        X::RSI => regs.rsi,
        X::RDI => regs.rdi,
        X::RBP => regs.rbp,
        X::RSP => regs.rsp,
        X::R8 => regs.r8,
        X::R9 => regs.r9,
        X::R10 => regs.r10,
        X::R11 => regs.r11,
        X::R12 => regs.r12,
        X::R13 => regs.r13,
        X::R14 => regs.r14,
        X::R15 => regs.r15,
        X::RIP => regs.rip,
        X::FS => regs.fs_base,
        X::GS => regs.gs_base,
        X::ES | X::CS | X::SS | X::DS => 0,
        _ => return None,
    })
}
