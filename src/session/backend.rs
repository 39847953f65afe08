//! What the session reads from: a live process (the inferior, over ptrace) or a core file.
//! Both answer the same questions (threads, registers, memory, mappings, the files behind
//! them), so `state`, unwinding, thread-locals, locals and typed values are written once
//! against [`ProcessView`] and do not care which one they read. Running, writing and
//! breakpoints are the live backend's ([`super::target::Target`], `Session::live`), which a
//! core refuses.

use std::path::PathBuf;

use crate::corefile::{CoreProcess, Gap, MemoryError};
use crate::inferior::Inferior;
use crate::maps::{self, MapEntry};
use crate::os::fpregs::{self, FpRegs};
use crate::os::regs::RawRegs;
use crate::os::{procfs, OsError, Tid};

use super::stack;

/// A stopped process, live or post-mortem, as inspection sees it.
pub(crate) trait ProcessView {
    fn pid(&self) -> Tid;
    /// Every thread, in a stable order.
    fn thread_ids(&self) -> Vec<Tid>;
    /// The thread `state` shows.
    fn selected(&self) -> Tid;
    /// Selects `tid`; false when there is no such thread.
    fn select(&mut self, tid: Tid) -> bool;
    /// A thread's general registers.
    fn regs(&mut self, tid: Tid) -> Result<RawRegs, OsError>;
    /// A thread's general registers if this stop already read them, without reading them
    /// (over a remote protocol a read is a round trip).
    fn regs_read(&self, tid: Tid) -> Option<RawRegs>;
    /// General registers this target cannot give (a remote stub's description lacks them:
    /// lldb-server 14 sends no fs_base or orig_rax). They read as 0 in `regs()` and are
    /// said unavailable wherever they would be shown or used.
    fn unknown_registers(&self) -> &[&'static str] {
        &[]
    }
    /// A thread's floating-point and vector registers (read anew on each call).
    fn fp_regs(&mut self, tid: Tid) -> Result<FpRegs, OsError>;
    /// Fills `buf` from `addr` (the program's own bytes: breakpoints hidden), or fails whole.
    fn read_memory(&self, addr: u64, buf: &mut [u8]) -> Result<(), OsError>;
    /// Reads up to `buf.len()` bytes, stopping at the first unreadable one; the count.
    fn read_memory_partial(&self, addr: u64, buf: &mut [u8]) -> usize;
    /// Why a thread could not be stopped (its registers cannot be read), if it could not.
    fn stuck_reason(&self, tid: Tid) -> Option<&str>;
    /// The thread runs while a listener decides on another thread's stop (non-stop).
    fn is_running(&self, tid: Tid) -> bool;
    /// The mappings, as `/proc/PID/maps` lists them.
    fn maps(&self) -> Result<Vec<MapEntry>, OsError>;
    /// The executable's path as the process maps it.
    fn exe_path(&self) -> Option<PathBuf>;
    /// Where to read the file behind a mapping from.
    fn local_file(&self, mapping: &MapEntry) -> PathBuf;
    fn thread_name(&self, tid: Tid) -> Option<String>;
    /// The soft RLIMIT_STACK in bytes, when known.
    fn stack_limit(&self) -> Option<u64>;
    /// A file of the process's `/proc` directory as its kernel shows it (`stat`, `status`,
    /// `comm`, `cmdline`, `auxv`), for a core of it; `None` where there is none.
    fn proc_file(&self, name: &str) -> Option<Vec<u8>> {
        let _ = name;
        None
    }
}

impl ProcessView for Inferior {
    fn pid(&self) -> Tid {
        Inferior::pid(self)
    }

    fn thread_ids(&self) -> Vec<Tid> {
        Inferior::thread_ids(self)
    }

    fn selected(&self) -> Tid {
        Inferior::selected(self)
    }

    fn select(&mut self, tid: Tid) -> bool {
        Inferior::select(self, tid)
    }

    fn regs(&mut self, tid: Tid) -> Result<RawRegs, OsError> {
        Inferior::regs(self, tid).copied()
    }

    fn regs_read(&self, tid: Tid) -> Option<RawRegs> {
        Inferior::regs_read(self, tid)
    }

    fn fp_regs(&mut self, tid: Tid) -> Result<FpRegs, OsError> {
        // Proves the thread is known and stopped (a stuck thread's registers cannot be read).
        Inferior::regs(self, tid)?;
        fpregs::get(tid)
    }

    fn read_memory(&self, addr: u64, buf: &mut [u8]) -> Result<(), OsError> {
        Inferior::read_memory(self, addr, buf)
    }

    fn read_memory_partial(&self, addr: u64, buf: &mut [u8]) -> usize {
        Inferior::read_memory_partial(self, addr, buf)
    }

    fn stuck_reason(&self, tid: Tid) -> Option<&str> {
        Inferior::stuck_reason(self, tid)
    }

    fn is_running(&self, tid: Tid) -> bool {
        Inferior::is_running(self, tid)
    }

    fn maps(&self) -> Result<Vec<MapEntry>, OsError> {
        let text = procfs::maps_text(self.pid()).map_err(|err| OsError::Io {
            what: "read /proc/PID/maps",
            err,
        })?;
        Ok(maps::parse_maps(&text))
    }

    fn exe_path(&self) -> Option<PathBuf> {
        procfs::exe_path(self.pid())
    }

    /// The file as the process sees it (through its root, which may be a chroot or another
    /// mount namespace), else the path as it is here.
    fn local_file(&self, m: &MapEntry) -> PathBuf {
        if m.is_deleted() {
            // The path names another file now (or none): only the mapped one will do.
            return procfs::unlinked_file(self.pid(), m.start, m.end, &m.dev, m.inode)
                .unwrap_or_else(|| PathBuf::from(m.path.clone().unwrap_or_default()));
        }
        let path = m.path.clone().unwrap_or_default();
        let rooted = PathBuf::from(format!("/proc/{}/root{path}", self.pid()));
        if rooted.exists() {
            rooted
        } else {
            PathBuf::from(path)
        }
    }

    fn thread_name(&self, tid: Tid) -> Option<String> {
        procfs::thread_name(self.pid(), tid)
    }

    fn stack_limit(&self) -> Option<u64> {
        std::fs::read_to_string(format!("/proc/{}/limits", self.pid()))
            .ok()
            .and_then(|l| stack::parse_stack_limit(&l))
    }

    fn proc_file(&self, name: &str) -> Option<Vec<u8>> {
        procfs::read(self.pid(), name)
    }
}

/// A core's memory errors in the words of a live process's where they mean the same.
fn memory_error(e: MemoryError) -> OsError {
    match e.gap {
        Gap::Unmapped => OsError::Unmapped {
            addr: e.addr,
            len: e.len,
        },
        _ => OsError::Core(e.to_string()),
    }
}

impl ProcessView for CoreProcess {
    fn pid(&self) -> Tid {
        CoreProcess::pid(self)
    }

    fn thread_ids(&self) -> Vec<Tid> {
        CoreProcess::thread_ids(self)
    }

    fn selected(&self) -> Tid {
        CoreProcess::selected(self)
    }

    fn select(&mut self, tid: Tid) -> bool {
        CoreProcess::select(self, tid)
    }

    fn regs(&mut self, tid: Tid) -> Result<RawRegs, OsError> {
        CoreProcess::regs(self, tid).copied().map_err(OsError::Core)
    }

    fn regs_read(&self, tid: Tid) -> Option<RawRegs> {
        CoreProcess::regs(self, tid).ok().copied()
    }

    /// From NT_X86_XSTATE (the same layout ptrace gives), else NT_FPREGSET.
    fn fp_regs(&mut self, tid: Tid) -> Result<FpRegs, OsError> {
        CoreProcess::regs(self, tid).map_err(OsError::Core)?;
        let regs = match self.fp_area(tid) {
            Some((area, true)) => FpRegs::from_xsave(area.to_vec()),
            Some((area, false)) => FpRegs::from_fxsave(area.to_vec()),
            None => None,
        };
        regs.ok_or_else(|| {
            OsError::Core(format!(
                "the core {} holds no floating-point registers for thread {tid}",
                self.name()
            ))
        })
    }

    fn read_memory(&self, addr: u64, buf: &mut [u8]) -> Result<(), OsError> {
        self.memory().read(addr, buf).map_err(memory_error)
    }

    fn read_memory_partial(&self, addr: u64, buf: &mut [u8]) -> usize {
        self.memory().read_partial(addr, buf)
    }

    fn stuck_reason(&self, _tid: Tid) -> Option<&str> {
        None
    }

    fn is_running(&self, _tid: Tid) -> bool {
        false
    }

    fn maps(&self) -> Result<Vec<MapEntry>, OsError> {
        Ok(CoreProcess::maps(self))
    }

    fn exe_path(&self) -> Option<PathBuf> {
        CoreProcess::exe_path(self).map(PathBuf::from)
    }

    fn local_file(&self, m: &MapEntry) -> PathBuf {
        self.local_path(m.file_path().unwrap_or_default())
    }

    fn thread_name(&self, tid: Tid) -> Option<String> {
        CoreProcess::thread_name(self, tid)
    }

    fn stack_limit(&self) -> Option<u64> {
        None
    }
}
