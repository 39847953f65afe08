//! Running one system call inside a stopped thread, as if the program had made it. Used to
//! put back what the kernel changes behind the program's back (the SIGTRAP disposition) and
//! to install seccomp filters for caught system calls (`catch`), also in fork children.
//!
//! No code is written: any `0f 05` byte pair in executable memory is a `syscall` instruction
//! when jumped to, so the thread's rip is pointed at one, the call runs between its
//! PTRACE_SYSCALL entry and exit stops, and every register is put back. Arguments that need
//! memory live on the thread's own stack below its red zone, saved and restored around the
//! call, so other threads (which may be running) never see anything change.

use super::Inferior;
use crate::maps;
use crate::os::memory::ProcMem;
use crate::os::regs::RawRegs;
use crate::os::wait::{wait, WaitEvent, WaitOutcome};
use crate::os::{procfs, ptrace, OsError, Tid};

/// The x86-64 ABI lets a function use 128 bytes below rsp without moving it.
const RED_ZONE: u64 = 128;

impl Inferior {
    /// An address holding the bytes `0f 05`, found once per image (the vDSO first: it is small
    /// and always has its system-call fallbacks). A fork child has the same one.
    pub(super) fn syscall_gadget(&mut self) -> Result<u64, OsError> {
        if let Some(at) = self.syscall_gadget {
            return Ok(at);
        }
        let text = procfs::maps_text(self.pid).map_err(|err| OsError::Io {
            what: "reading the memory map",
            err,
        })?;
        let mut code: Vec<maps::MapEntry> = maps::parse_maps(&text)
            .into_iter()
            .filter(|m| m.perms.exec && m.path.as_deref() != Some("[vsyscall]"))
            .collect();
        code.sort_by_key(|m| m.path.as_deref() != Some("[vdso]"));
        for m in code {
            let mut addr = m.start;
            while addr < m.end {
                let len = (m.end - addr).min(64 * 1024) as usize;
                let mut buf = vec![0u8; len + 1];
                let n = self.read_memory_partial(addr, &mut buf);
                if let Some(i) = buf[..n].windows(2).position(|w| w == [0x0f, 0x05]) {
                    self.syscall_gadget = Some(addr + i as u64);
                    return Ok(addr + i as u64);
                }
                if n == 0 {
                    break;
                }
                addr += len as u64;
            }
        }
        Err(OsError::Injected(
            "no syscall instruction in the program's executable memory".into(),
        ))
    }

    /// Makes system call `nr` in stopped thread `tid`. `scratch` is copied onto the thread's
    /// stack first and read back after; `args` gets its address. Returns the raw result.
    pub(super) fn inject_syscall(
        &mut self,
        tid: Tid,
        nr: u64,
        scratch: &mut [u8],
        args: impl FnOnce(u64) -> [u64; 6],
    ) -> Result<i64, OsError> {
        let bytes = scratch.to_vec();
        let (ret, back) = self.inject_syscall_with(tid, nr, bytes.len(), |at| (bytes, args(at)))?;
        scratch.copy_from_slice(&back);
        Ok(ret)
    }

    /// Like [`inject_syscall`](Self::inject_syscall), with scratch bytes made once their
    /// address is known (`build(at)` gives `len` bytes and the arguments); returns the result
    /// and the scratch bytes after the call.
    pub(super) fn inject_syscall_with(
        &mut self,
        tid: Tid,
        nr: u64,
        len: usize,
        build: impl FnOnce(u64) -> (Vec<u8>, [u64; 6]),
    ) -> Result<(i64, Vec<u8>), OsError> {
        // Resuming a signal-delivery-stop to run the call would drop its signal (and
        // re-sending it later would make a second one); resuming a thread inside a system
        // call finishes that call first, with the injected registers.
        self.forbid_if_read_only("run a system call in the program")?;
        if !self.injectable(tid) {
            return Err(OsError::Injected(format!(
                "thread {tid} cannot run an injected system call now (it is inside a system call or about to receive a signal)"
            )));
        }
        let gadget = self.syscall_gadget()?;
        let saved = *self.regs(tid)?;
        let result = run_syscall(tid, &self.mem, gadget, &saved, nr, len, build);
        if let Some(t) = self.threads.get_mut(&tid) {
            t.regs = Some(restartable(&saved));
        }
        match result? {
            (Injected::Returned(ret), back) => Ok((ret, back)),
            (Injected::Signal(signal), _) => {
                // Kept for the thread's next resume; the call is given up.
                self.hold_signal(tid, signal);
                Err(OsError::Injected(format!(
                    "injected system call interrupted by {}",
                    crate::os::signals::signal_name(signal)
                )))
            }
        }
    }
}

/// How an injected call ended.
pub(super) enum Injected {
    Returned(i64),
    /// A signal arrived first: the call was given up; the signal is the caller's to deliver.
    Signal(i32),
}

/// Runs system call `nr` in stopped thread `tid` (of the process whose memory is `mem`, with
/// registers `saved`) through the `syscall` instruction at `gadget`. `build(at)` gives the
/// `len` scratch bytes put on the thread's stack at `at` and the call's arguments. Whatever
/// happens, the thread gets its registers and stack bytes back.
pub(super) fn run_syscall(
    tid: Tid,
    mem: &ProcMem,
    gadget: u64,
    saved: &RawRegs,
    nr: u64,
    len: usize,
    build: impl FnOnce(u64) -> (Vec<u8>, [u64; 6]),
) -> Result<(Injected, Vec<u8>), OsError> {
    let at = (saved.rsp - RED_ZONE - len as u64) & !15;
    let (scratch, a) = build(at);
    let mut stack = vec![0u8; scratch.len()];
    mem.read(at, &mut stack)?;
    mem.write(at, &scratch)?;
    let mut regs = *saved;
    regs.rip = gadget;
    regs.rax = nr;
    regs.orig_rax = u64::MAX;
    (regs.rdi, regs.rsi, regs.rdx, regs.r10, regs.r8, regs.r9) =
        (a[0], a[1], a[2], a[3], a[4], a[5]);
    let result = ptrace::set_regs(tid, &regs).and_then(|()| run_to_exit(tid));
    let mut back = vec![0u8; scratch.len()];
    let _ = mem.read(at, &mut back);
    let _ = mem.write(at, &stack);
    let _ = ptrace::set_regs(tid, &restartable(saved));
    Ok((result?, back))
}

/// The kernel's restart codes (ERESTARTSYS, ERESTARTNOINTR, ERESTARTNOHAND) and
/// ERESTART_RESTARTBLOCK, and `restart_syscall`'s number.
const RESTART: [i64; 3] = [-512, -513, -514];
const RESTART_BLOCK: i64 = -516;
const NR_RESTART_SYSCALL: u64 = 219;

/// Registers to put back after an injected call. A thread stopped inside an interrupted
/// system call holds a restart code in rax, and the kernel turns it into a restart only on
/// the way out of the stop it was interrupted for; after the injected call that way is
/// gone, and the program would see the code as an errno (`read` failing with 512). So the
/// restart is made here, as the kernel would have made it: the `syscall` instruction again,
/// with its number (or `restart_syscall`'s) in rax.
fn restartable(saved: &RawRegs) -> RawRegs {
    let mut regs = *saved;
    let code = saved.rax as i64;
    if (saved.orig_rax as i64) < 0 || saved.rip < 2 {
        return regs;
    }
    if RESTART.contains(&code) {
        regs.rax = saved.orig_rax;
    } else if code == RESTART_BLOCK {
        regs.rax = NR_RESTART_SYSCALL;
    } else {
        return regs;
    }
    regs.rip -= 2;
    regs.orig_rax = u64::MAX;
    regs
}

/// From the entry stop to the exit stop of the injected call.
fn run_to_exit(tid: Tid) -> Result<Injected, OsError> {
    for _ in 0..2 {
        ptrace::syscall_step(tid, 0)?;
        loop {
            match wait(tid, false)? {
                WaitOutcome::Event(WaitEvent::SyscallStop { .. }) => break,
                // scry's own seccomp filter traces this call (it is caught): go on to its
                // exit without a report.
                WaitOutcome::Event(WaitEvent::Seccomp { .. }) => ptrace::syscall_step(tid, 0)?,
                // An interrupt that was still pending (the thread stopped at a system call's
                // exit before it): taken on the way to the call.
                WaitOutcome::Event(WaitEvent::EventStop { .. }) => ptrace::syscall_step(tid, 0)?,
                WaitOutcome::Event(WaitEvent::Signal { signal, .. }) => {
                    return Ok(Injected::Signal(signal));
                }
                WaitOutcome::Event(e) if e.is_gone() => {
                    return Err(OsError::Injected("the thread exited".into()));
                }
                WaitOutcome::Event(_) => {
                    return Err(OsError::Injected(
                        "unexpected stop in an injected call".into(),
                    ))
                }
                WaitOutcome::Interrupted | WaitOutcome::NothingYet => {}
            }
        }
    }
    Ok(Injected::Returned(ptrace::get_regs(tid)?.rax as i64))
}

/// mmap, mprotect and munmap, and the flags a restored mapping is made with.
pub(super) const SYS_MMAP: u64 = 9;
pub(super) const SYS_MPROTECT: u64 = 10;
pub(super) const SYS_MUNMAP: u64 = 11;
pub(super) const PROT_READ: u64 = 1;
pub(super) const PROT_WRITE: u64 = 2;
pub(super) const MAP_PRIVATE: u64 = 0x02;
pub(super) const MAP_ANONYMOUS: u64 = 0x20;
/// Fails rather than replace anything mapped there.
pub(super) const MAP_FIXED_NOREPLACE: u64 = 0x10_0000;

impl Inferior {
    /// Maps `len` bytes of private anonymous memory at `addr` again, puts `data` at
    /// `addr + data_at` and gives it protection `prot` (a recording going back past the
    /// munmap that took it away). Nothing already mapped there is touched.
    pub(crate) fn restore_mapping(
        &mut self,
        addr: u64,
        len: u64,
        prot: u64,
        data_at: u64,
        data: &[u8],
    ) -> Result<(), OsError> {
        let tid = self.injectable_thread().ok_or_else(|| {
            OsError::Injected("no thread can run the mmap that gives the memory back".into())
        })?;
        let flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE;
        let rw = PROT_READ | PROT_WRITE;
        let got = self.inject_syscall(tid, SYS_MMAP, &mut [], |_| {
            [addr, len, rw, flags, u64::MAX, 0]
        })?;
        if got as u64 != addr {
            if got >= 0 {
                // Placed elsewhere (a kernel without MAP_FIXED_NOREPLACE): not what was asked.
                let _ = self
                    .inject_syscall(tid, SYS_MUNMAP, &mut [], |_| [got as u64, len, 0, 0, 0, 0]);
            }
            return Err(OsError::Injected(format!(
                "the memory at {addr:#x} cannot be mapped again (mmap gave {got})"
            )));
        }
        if !data.is_empty() {
            self.mem.write(addr + data_at, data)?;
        }
        if prot != rw {
            self.inject_syscall(tid, SYS_MPROTECT, &mut [], |_| [addr, len, prot, 0, 0, 0])?;
        }
        Ok(())
    }

    /// Unmaps `[addr, addr + len)` (a recording replaying a munmap).
    pub(crate) fn unmap(&mut self, addr: u64, len: u64) -> Result<(), OsError> {
        let tid = self.injectable_thread().ok_or_else(|| {
            OsError::Injected("no thread can run the munmap a replay makes".into())
        })?;
        let ret = self.inject_syscall(tid, SYS_MUNMAP, &mut [], |_| [addr, len, 0, 0, 0, 0])?;
        if ret != 0 {
            return Err(OsError::Injected(format!(
                "munmap({addr:#x}, {len}) failed: {ret}"
            )));
        }
        Ok(())
    }
}
