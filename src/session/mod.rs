//! The session: the facade the script layer calls. It owns the inferior, the symbol store,
//! the user's breakpoints and the captured output, turns raw stops into [`StopInfo`]s, and
//! keeps the per-stop snapshot that scripts see as `prev`.

pub mod breakpoints;
pub mod capture;
mod error;
mod snapshot;
pub mod stop;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::inferior::{Inferior, Origin, Stop};
use crate::os::regs::{self, RawRegs};
use crate::os::spawn::{resolve_program, SpawnRequest};
use crate::os::{maps, procfs, signals, Tid};
use crate::symbols::disasm::{disassemble, Insn};
use crate::symbols::{RuntimeAddr, SymbolStore};

use breakpoints::BreakpointTable;
pub use breakpoints::{Breakpoint, BreakpointRef};
use capture::{Capture, SharedCapture};
pub use error::SessionError;
use snapshot::Snapshot;
pub use stop::{Reason, StopInfo};

pub type Result<T> = std::result::Result<T, SessionError>;

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
    capture: SharedCapture,
    /// How the last process ended, for "no live process (...)".
    ended: Option<String>,
    snapshot: Snapshot,
    signal_modes: [SignalMode; 65],
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
            capture,
            ended: None,
            snapshot: Snapshot::default(),
            signal_modes,
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
        capture::pump(output.stdout, self.capture.clone());
        capture::pump(output.stderr, self.capture.clone());
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
        self.breakpoints.clear();
        self.snapshot = Snapshot::default();
        self.symbols = SymbolStore::new();
        self.refresh_symbols();
        self.finish_stop(stop)
    }

    pub fn detach(&mut self) -> Result<StopInfo> {
        let mut target = self.target.take().ok_or_else(|| self.no_process())?;
        let result = target.inferior.detach();
        self.ended = Some("detached".into());
        self.breakpoints.clear();
        result?;
        Ok(StopInfo {
            reason: Some(Reason::Detached),
            ..Default::default()
        })
    }

    pub fn kill(&mut self) -> Result<StopInfo> {
        let mut target = self.target.take().ok_or_else(|| self.no_process())?;
        let stop = target.inferior.kill()?;
        self.breakpoints.clear();
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
        self.inferior()?.arm(deadline);
        Ok(())
    }

    pub fn disarm(&mut self) {
        if let Some(t) = &self.target {
            t.inferior.disarm();
        }
    }

    /// One instruction on the selected thread, without describing the stop: for batches.
    pub fn step_raw(&mut self, deadline: Instant) -> Result<Stop> {
        let modes = self.signal_modes;
        let pass = move |sig: i32| modes.get(sig as usize) == Some(&SignalMode::Pass);
        let stop = self.inferior()?.step(deadline, &pass)?;
        self.after_raw(stop);
        Ok(stop)
    }

    pub fn step(&mut self, deadline: Instant) -> Result<StopInfo> {
        let stop = self.step_raw(deadline)?;
        self.finish_stop(stop)
    }

    pub fn cont(&mut self, deadline: Instant) -> Result<StopInfo> {
        let modes = self.signal_modes;
        let pass = move |sig: i32| modes.get(sig as usize) == Some(&SignalMode::Pass);
        let stop = self.inferior()?.cont(deadline, &pass)?;
        self.after_raw(stop);
        self.finish_stop(stop)
    }

    /// Bookkeeping every stop needs, even one nobody looks at: the snapshot rotates.
    fn after_raw(&mut self, stop: Stop) {
        self.snapshot.rotate();
        if let Stop::Exec { .. } = stop {
            self.breakpoints.clear();
            self.symbols = SymbolStore::new();
            self.refresh_symbols();
        }
    }

    /// Turns a raw stop into the user's view of it, counting breakpoint hits.
    pub fn finish_stop(&mut self, stop: Stop) -> Result<StopInfo> {
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
            Stop::Exec { .. } => Reason::Exec,
            Stop::ThreadExit { .. } => Reason::ThreadExit,
            Stop::Exited { code } => {
                info.exit_code = Some(code);
                Reason::Exited
            }
            Stop::Killed { signal } => {
                info.signal = Some(signal);
                Reason::Killed
            }
        });
        if stop.is_final() {
            self.ended = info.ending();
            self.target = None;
            self.breakpoints.clear();
        } else {
            let pc = self.pc()?;
            info.pc = Some(pc);
            info.symbol = self.symbolize(pc);
            info.show_tid = self
                .target
                .as_ref()
                .is_some_and(|t| t.inferior.thread_ids().len() > 1);
        }
        info.unread_output = self.capture.lock().map(|c| c.unread()).unwrap_or(0);
        Ok(info)
    }

    /// The signal the selected thread stopped with will not be delivered.
    pub fn suppress_signal(&mut self) -> Result<()> {
        let inferior = self.inferior()?;
        let tid = inferior.selected();
        inferior.clear_pending_signal(tid);
        Ok(())
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
        self.capture
            .lock()
            .map(|mut c| c.take())
            .unwrap_or_default()
    }

    pub fn thread_ids(&mut self) -> Result<Vec<Tid>> {
        Ok(self.inferior()?.thread_ids())
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
        match self.symbols.resolve(expr) {
            Ok(addr) => Ok(addr.0),
            Err(_) if self.refresh_symbols_on_miss() => Ok(self.symbols.resolve(expr)?.0),
            Err(e) => Err(e.into()),
        }
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

    pub fn breakpoint_remove(&mut self, r: BreakpointRef) -> Result<Breakpoint> {
        let what = match &r {
            BreakpointRef::Id(id) => format!("no breakpoint {id}"),
            BreakpointRef::Name(n) => format!("no breakpoint named '{n}'"),
        };
        let (bp, shared) = self
            .breakpoints
            .remove(&r)
            .ok_or(SessionError::Invalid(what))?;
        if !shared {
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
