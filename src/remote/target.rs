//! The remote process as the session sees every live backend ([`Target`], [`ProcessView`]).
//! What the protocol client does not do yet is a typed error naming it, never a silent
//! no-op: holding a process of a tree.

use std::path::PathBuf;
use std::time::Instant;

use super::{Remote, Site, HW_SLOTS};
use crate::inferior::{CatchMode, FollowFork, NonStop, Origin, PassFn, Stop, WatchSlot};
use crate::maps::{self, MapEntry};
use crate::os::debugregs::Access;
use crate::os::fpregs::FpRegs;
use crate::os::regs::{RawRegs, REGISTER_NAMES};
use crate::os::syscalls::render::Captured;
use crate::os::syscalls::SysSet;
use crate::os::wait::WaitEvent;
use crate::os::{OsError, Tid};
use crate::session::backend::ProcessView;
use crate::session::target::Target;

/// The `Z`/`z` type of a watchpoint: 2 write, 4 access, 1 execute (a hardware breakpoint).
pub(super) fn watch_type(access: Access) -> u8 {
    match access {
        Access::Write => 2,
        Access::ReadWrite => 4,
        Access::Execute => 1,
    }
}

/// Reads at least this big bypass the block cache.
const UNCACHED_READ: usize = 64 * 1024;

/// The most bytes of a `/proc` file read over the protocol.
const PROC_FILE_LIMIT: usize = 4 << 20;

/// What the path of a local file of another build ends with: a name no file has, so the
/// module is listed without symbols.
const OTHER_BUILD: &str = " (build id differs from the target's)";

impl Remote {
    /// `tid`'s general registers (one `g` a stop).
    pub(super) fn registers_of(&self, tid: Tid) -> Result<RawRegs, OsError> {
        let blob = self.register_blob(tid)?;
        let (regs, missing) = self.layout.raw_regs(&blob);
        if missing.contains(&"rip") || missing.contains(&"rsp") {
            return Err(OsError::ThreadUnavailable(format!(
                "the stub sent no {} for thread {tid}",
                missing.join(", ")
            )));
        }
        Ok(regs)
    }

    /// `tid`'s pc: the one its stop reply carried, else from its registers.
    pub(super) fn pc_of(&self, tid: Tid) -> Result<u64, OsError> {
        if let Some(&pc) = self.expedited_pc.borrow().get(&tid) {
            return Ok(pc);
        }
        Ok(self.registers_of(tid)?.rip)
    }

    fn unsupported(&self, what: &str) -> OsError {
        OsError::Remote(format!(
            "{what} is not supported over the remote protocol yet"
        ))
    }

    pub(super) fn hw_slots_used(&self) -> usize {
        self.sites.values().filter(|s| s.hardware).count()
            + self.watches.iter().filter(|w| w.is_some()).count()
    }
}

impl Remote {
    fn choose_local_file(&self, m: &MapEntry, path: &str) -> PathBuf {
        let candidate = self.candidate_file(path);
        let base = m.start.wrapping_sub(m.offset);
        let remote_id = crate::corefile::elf::build_id(&|at, buf| {
            self.read_partial(base.wrapping_add(at), buf) == buf.len()
        });
        let local_id = std::fs::File::open(&candidate).ok().and_then(|f| {
            use std::os::unix::fs::FileExt;
            crate::corefile::elf::build_id(&|at, buf| f.read_exact_at(buf, at).is_ok())
        });
        match (remote_id, local_id) {
            (Some(there), Some(here)) if there != here => {
                // A name no file has: the module is listed without symbols.
                PathBuf::from(format!("{}{OTHER_BUILD}", candidate.display()))
            }
            _ => candidate,
        }
    }

    fn candidate_file(&self, path: &str) -> PathBuf {
        if let Some(program) = &self.program {
            if self.exe.as_deref() == Some(std::path::Path::new(path)) {
                return program.clone();
            }
        }
        if let Some(root) = &self.sysroot {
            let rooted = root.join(path.trim_start_matches('/'));
            if rooted.exists() {
                return rooted;
            }
        }
        PathBuf::from(path)
    }
}

impl ProcessView for Remote {
    fn pid(&self) -> Tid {
        self.pid
    }

    fn thread_ids(&self) -> Vec<Tid> {
        if let Some(threads) = self.threads.borrow().as_ref() {
            return threads.clone();
        }
        let listed: Vec<Tid> = match self.list_threads() {
            Ok(list) => list.iter().map(|t| t.tid as Tid).collect(),
            Err(_) => vec![self.selected],
        };
        *self.threads.borrow_mut() = Some(listed.clone());
        listed
    }

    fn selected(&self) -> Tid {
        self.selected
    }

    fn select(&mut self, tid: Tid) -> bool {
        if !self.thread_ids().contains(&tid) {
            return false;
        }
        self.selected = tid;
        true
    }

    fn regs(&mut self, tid: Tid) -> Result<RawRegs, OsError> {
        self.registers_of(tid)
    }

    fn unknown_registers(&self) -> &[&'static str] {
        &self.unknown
    }

    fn regs_read(&self, tid: Tid) -> Option<RawRegs> {
        let blob = self.registers.borrow().get(&tid)?.clone();
        Some(self.layout.raw_regs(&blob).0)
    }

    fn fp_regs(&mut self, tid: Tid) -> Result<FpRegs, OsError> {
        let blob = self.register_blob(tid)?;
        self.layout.fp_regs(&blob).ok_or_else(|| {
            OsError::Remote(format!(
                "the stub sent no floating-point registers for thread {tid}"
            ))
        })
    }

    fn read_memory(&self, addr: u64, buf: &mut [u8]) -> Result<(), OsError> {
        if self.read_partial(addr, buf) == buf.len() {
            return Ok(());
        }
        // A stub that is gone is no unmapped address.
        self.conn.borrow().check()?;
        Err(OsError::Unmapped {
            addr,
            len: buf.len(),
        })
    }

    fn read_memory_partial(&self, addr: u64, buf: &mut [u8]) -> usize {
        // A large read (a core's mapping) is read through, not kept: the cache is for the
        // small reads a stop repeats.
        if buf.len() >= UNCACHED_READ {
            return self.read_through(addr, buf);
        }
        self.read_partial(addr, buf)
    }

    fn stuck_reason(&self, _tid: Tid) -> Option<&str> {
        None
    }

    fn is_running(&self, _tid: Tid) -> bool {
        false
    }

    /// The target machine's `/proc/PID/maps`, read through the stub (`vFile`); from what
    /// a stub without files gives otherwise (see `modules`).
    fn maps(&self) -> Result<Vec<MapEntry>, OsError> {
        match self.read_target_file(&format!("/proc/{}/maps", self.pid), PROC_FILE_LIMIT) {
            Ok(text) => Ok(maps::parse_maps(&String::from_utf8_lossy(&text))),
            Err(e) => {
                let made = self.made_maps().map_err(|_| e)?;
                self.fileless.set(true);
                Ok(made)
            }
        }
    }

    fn exe_path(&self) -> Option<PathBuf> {
        self.exe.clone()
    }

    /// The file under `--sysroot` (a copy of the target machine's files) when given and
    /// there, else the same path here; never one whose build id differs from the image in
    /// the target's memory (its symbols would be another build's: wrong names and lines).
    fn local_file(&self, m: &MapEntry) -> PathBuf {
        let path = m.path.clone().unwrap_or_default();
        if let Some(known) = self.local_files.borrow().get(&path) {
            return known.clone();
        }
        let chosen = self.choose_local_file(m, &path);
        self.local_files.borrow_mut().insert(path, chosen.clone());
        chosen
    }

    fn thread_name(&self, tid: Tid) -> Option<String> {
        let comm = self
            .read_target_file(&format!("/proc/{}/task/{tid}/comm", self.pid), 256)
            .ok()?;
        Some(String::from_utf8_lossy(&comm).trim_end().to_string())
    }

    fn stack_limit(&self) -> Option<u64> {
        let limits = self
            .read_target_file(&format!("/proc/{}/limits", self.pid), 64 * 1024)
            .ok()?;
        crate::session::stack::parse_stack_limit(&String::from_utf8_lossy(&limits))
    }

    /// The target machine's `/proc/PID/NAME` through the stub (`vFile`); `auxv` is the
    /// stub's own object (`qXfer:auxv`), which stubs without files serve too.
    fn proc_file(&self, name: &str) -> Option<Vec<u8>> {
        if name == "auxv" && self.features.auxv {
            if let Ok(bytes) = self.xfer("auxv", "") {
                return Some(bytes);
            }
        }
        self.read_target_file(&format!("/proc/{}/{name}", self.pid), PROC_FILE_LIMIT)
            .ok()
    }
}

impl Target for Remote {
    fn origin(&self) -> Origin {
        self.origin
    }

    fn problems(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .local_files
            .borrow()
            .iter()
            .filter(|(_, chosen)| chosen.to_string_lossy().ends_with(OTHER_BUILD))
            .map(|(path, _)| {
                format!("{path}: the local copy's build id differs from the target's, so its symbols are not read (give --sysroot with the target's files, or the right PROGRAM)")
            })
            .collect();
        out.sort();
        out
    }

    fn is_local(&self) -> bool {
        false
    }

    fn is_dead(&self) -> bool {
        self.ended.is_some() || self.detached || self.conn.borrow().is_broken()
    }

    fn has_queued(&self) -> bool {
        false
    }

    fn still_there(&self) -> bool {
        !self.is_dead()
    }

    fn lost(&self) -> Option<String> {
        let why = self.conn.borrow().broken_reason()?;
        (self.ended.is_none() && !self.detached)
            .then(|| format!("{why}: what became of the program is not known"))
    }

    fn thread_count(&self) -> usize {
        self.thread_ids().len()
    }

    fn set_read_only(&mut self, on: bool) {
        self.read_only = on;
    }

    fn set_report_threads(&mut self, on: bool) {
        // Not followed over a stub yet: said once, never a listener that silently hears
        // nothing (0 events where locally 40).
        let said =
            "thread listeners hear no thread starts or exits over a remote stub (not followed yet)";
        if on && !self.told_threads {
            self.told_threads = true;
            self.warnings.push(said.to_string());
        }
    }

    fn set_follow_fork(&mut self, follow: FollowFork) {
        self.forks.follow = follow;
    }

    fn set_process_limit(&mut self, _limit: usize) {}

    fn set_report_forks(&mut self, _on: bool) {}

    fn arm(&mut self, deadline: Instant) {
        self.deadline = Some(deadline);
    }

    fn disarm(&mut self, _pass: PassFn) {
        self.deadline = None;
    }

    /// The stub stops every thread at every stop (all-stop): nothing to do.
    fn all_stop(&mut self, _pass: PassFn) -> Result<(), OsError> {
        Ok(())
    }

    fn cont(
        &mut self,
        deadline: Instant,
        pass: PassFn,
        _nonstop: NonStop,
    ) -> Result<Stop, OsError> {
        self.resume(None, deadline, pass)
    }

    fn step(&mut self, deadline: Instant, pass: PassFn) -> Result<Stop, OsError> {
        self.resume(Some(self.selected), deadline, pass)
    }

    fn steps_by_lines(&mut self, on: bool) {
        self.run_handlers = on;
    }

    fn launch(&mut self, _deadline: Instant, _pass: PassFn) -> Result<Option<Stop>, OsError> {
        Err(self.unsupported("running a process tree"))
    }

    fn owns(&self, _event: &WaitEvent) -> bool {
        false
    }

    fn take_event(&mut self, _event: WaitEvent, _pass: PassFn) -> Result<Option<Stop>, OsError> {
        Ok(None)
    }

    fn clear_pending_signal(&mut self, tid: Tid) {
        self.pending.remove(&tid);
    }

    fn pending_signal(&self, tid: Tid) -> i32 {
        self.pending.get(&tid).copied().unwrap_or(0)
    }

    fn job_stopped(&self) -> Option<i32> {
        None
    }

    fn take_followed(&mut self) -> Option<(Tid, Tid)> {
        self.forks.followed.take()
    }

    fn take_forked(&mut self) -> Vec<Box<dyn Target>> {
        Vec::new()
    }

    fn take_let_go(&mut self) -> Vec<(Tid, String)> {
        Vec::new()
    }

    fn hold(&mut self, _pass: PassFn) -> Result<(), OsError> {
        Err(self.unsupported("holding a process of a tree"))
    }

    fn kill(&mut self) -> Result<Stop, OsError> {
        if self.read_only {
            return Err(OsError::ReadOnly(
                "read-only session: cannot kill the program".into(),
            ));
        }
        let stop = Stop::Killed {
            signal: libc::SIGKILL,
        };
        if self.is_dead() {
            return Ok(self.ended.unwrap_or(stop));
        }
        let ask = if self.features.multiprocess {
            format!("vKill;{:x}", self.pid)
        } else {
            "k".to_string()
        };
        // `k` has no reply (waiting for one would take the whole reply wait); a stub may
        // close the connection once its last process is gone.
        let _ = if self.features.multiprocess {
            self.request(ask.as_bytes()).map(drop)
        } else {
            self.conn.borrow_mut().send(ask.as_bytes())
        };
        self.ended = Some(stop);
        Ok(stop)
    }

    fn detach(&mut self) -> Result<Option<String>, OsError> {
        if self.is_dead() {
            return Ok(None);
        }
        for addr in self.sites.keys().copied().collect::<Vec<_>>() {
            self.remove_site_packet(addr)?;
        }
        for slot in 0..HW_SLOTS {
            self.clear_watch(slot);
        }
        let ask = if self.features.multiprocess {
            format!("D;{:x}", self.pid)
        } else {
            "D".to_string()
        };
        self.request_ok(ask.as_bytes())?;
        self.detached = true;
        Ok(None)
    }

    fn pc(&mut self, tid: Tid) -> Result<u64, OsError> {
        self.pc_of(tid)
    }

    fn set_regs_read_back(&mut self, tid: Tid, regs: &RawRegs) -> Result<RawRegs, OsError> {
        self.check_writable("write a register")?;
        let old = self.registers_of(tid)?;
        let mut blob = self.register_blob(tid)?;
        self.select_for_reading(tid)?;
        let mut changed = Vec::new();
        for (i, name) in REGISTER_NAMES.iter().enumerate() {
            let (was, now) = (
                crate::os::regs::get_register(&old, i),
                crate::os::regs::get_register(regs, i),
            );
            if was == now {
                continue;
            }
            if !self.layout.patch(&mut blob, i, now) {
                return Err(OsError::Remote(format!(
                    "the stub's register layout has no {name}"
                )));
            }
            changed.push((i, now));
        }
        if !changed.is_empty() {
            // One `G` with every register (gdbserver 13 answers no `P`); `P` for each where
            // the stub marked some register unavailable, which `G` cannot leave alone, and
            // where it refuses `G` (lldb-server 14 takes only `P`: every write failed).
            let whole = blob.iter().copied().collect::<Option<Vec<u8>>>();
            let refused = match whole {
                Some(bytes) => {
                    match self.request_ok(format!("G{}", super::packet::hex(&bytes)).as_bytes()) {
                        Ok(()) => None,
                        Err(e) => Some(Some(e)),
                    }
                }
                None => Some(None),
            };
            if let Some(mut g_error) = refused {
                for (i, now) in changed {
                    // A `G` refused and no `P` for the register, or a `P` refused too: the
                    // `G`'s answer says why.
                    match self.layout.set_packet(i, now) {
                        Some(ask) => self
                            .request_ok(ask.as_bytes())
                            .map_err(|p_error| g_error.take().unwrap_or(p_error))?,
                        None => {
                            if let Some(e) = g_error.take() {
                                return Err(e);
                            }
                        }
                    }
                }
            }
        }
        self.registers.borrow_mut().remove(&tid);
        self.expedited_pc.borrow_mut().remove(&tid);
        if self.rf_fresh.is_some_and(|(t, _)| t == tid) {
            // Its flags are what was written now: it steps off the site as usual.
            self.rf_fresh = None;
        }
        self.registers_of(tid)
    }

    fn set_fp_regs(&mut self, _tid: Tid, _regs: &FpRegs) -> Result<(), OsError> {
        Err(self.unsupported("writing floating-point and vector registers"))
    }

    fn write_memory(&mut self, addr: u64, bytes: &[u8]) -> Result<(), OsError> {
        self.check_writable("write memory")?;
        self.write_raw(addr, bytes)
    }

    fn insert_site(&mut self, addr: u64) -> Result<(), OsError> {
        if self.sites.contains_key(&addr) {
            return Ok(());
        }
        self.insert_site_packet(addr, self.read_only)
    }

    /// A debug register while one is free (the program's code stays its own), else an int3
    /// the stub writes and hides from reads.
    fn insert_user_site(&mut self, addr: u64, hardware: Option<bool>) -> Result<(), OsError> {
        if self.sites.contains_key(&addr) {
            return Ok(());
        }
        let free = self.hw_slots_used() < HW_SLOTS;
        let inserted = match hardware {
            Some(true) if !free => Err(OsError::DebugRegisters(format!(
                "no free debug register for a breakpoint at {addr:#x} ({HW_SLOTS} in all, shared with watchpoints)"
            ))),
            Some(hw) => self.insert_site_packet(addr, hw),
            None if free => match self.insert_site_packet(addr, true) {
                Ok(()) => Ok(()),
                Err(_) if !self.read_only => self.insert_site_packet(addr, false),
                Err(e) => Err(e),
            },
            None => self.insert_site_packet(addr, self.read_only),
        };
        if inserted.is_ok() && self.sites.get(&addr).is_some_and(|s| !s.hardware) {
            self.warn_unclean_forks();
        }
        inserted
    }

    fn remove_site(&mut self, addr: u64) -> Result<(), OsError> {
        if Some(addr) == self.rendezvous {
            return Ok(());
        }
        self.remove_site_packet(addr)
    }

    fn forget_site(&mut self, addr: u64) {
        self.sites.remove(&addr);
        if self.rendezvous == Some(addr) {
            self.rendezvous = None;
        }
    }

    fn site_is_hardware(&self, addr: u64) -> Option<bool> {
        self.sites.get(&addr).map(|s: &Site| s.hardware)
    }

    /// The stub keeps its breakpoints' bytes itself and shows the program's in reads.
    fn site_overwritten(&self, _addr: u64) -> bool {
        false
    }

    fn free_watch_slot(&mut self) -> Option<usize> {
        if self.hw_slots_used() >= HW_SLOTS {
            return None;
        }
        self.watches.iter().position(|w| w.is_none())
    }

    fn set_watch(&mut self, slot: usize, watch: WatchSlot) -> Result<(), OsError> {
        let kind = watch_type(watch.access);
        if slot >= HW_SLOTS {
            return Err(OsError::DebugRegisters(format!("no debug register {slot}")));
        }
        self.clear_watch(slot);
        self.request_ok(format!("Z{kind},{:x},{:x}", watch.addr, watch.len).as_bytes())?;
        self.watches[slot] = Some(watch);
        Ok(())
    }

    fn clear_watch(&mut self, slot: usize) {
        let Some(watch) = self.watches.get_mut(slot).and_then(Option::take) else {
            return;
        };
        let kind = watch_type(watch.access);
        if self.ended.is_none() {
            let _ = self.request_ok(format!("z{kind},{:x},{:x}", watch.addr, watch.len).as_bytes());
        }
    }

    fn watch_sigaction(&mut self, _addr: u64) -> Result<(), OsError> {
        // The stub, not scry, owns the debug registers' SIGTRAPs.
        Ok(())
    }

    fn sigaction_site(&self) -> Option<u64> {
        None
    }

    fn rendezvous(&self) -> Option<u64> {
        self.rendezvous
    }

    fn set_rendezvous(&mut self, addr: u64) -> Result<(), OsError> {
        if self.rendezvous == Some(addr) {
            return Ok(());
        }
        if !self.sites.contains_key(&addr) {
            self.insert_site_packet(addr, false)?;
        }
        self.rendezvous = Some(addr);
        Ok(())
    }

    fn set_syscall_catch(&mut self, entry: SysSet, exit: SysSet) {
        self.catch_syscalls(entry, exit);
    }

    fn syscall_catch_mode(&self) -> (CatchMode, Option<String>) {
        if !self.catch.is_active() || !self.features.catch_syscalls {
            return (CatchMode::Off, None);
        }
        (
            CatchMode::Ptrace,
            Some("the remote stub stops each caught call at its entry and its return (QCatchSyscalls); the others run on".into()),
        )
    }

    fn syscall_capture(&self, tid: Tid) -> &[(usize, Captured)] {
        self.syscall_captured(tid)
    }

    fn take_syscall_warnings(&mut self) -> Vec<String> {
        std::mem::take(&mut self.warnings)
    }

    fn allow_no_new_privs(&mut self, _allowed: bool) {}

    fn forbid_seccomp(&mut self, _why: &str) {}
}
