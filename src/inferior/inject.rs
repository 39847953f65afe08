//! Running one system call inside a stopped thread, as if the program had made it. Used to
//! put back what the kernel changes behind the program's back (the SIGTRAP disposition).
//!
//! No code is written: any `0f 05` byte pair in executable memory is a `syscall` instruction
//! when jumped to, so the thread's rip is pointed at one, the call runs between its
//! PTRACE_SYSCALL entry and exit stops, and every register is put back. Arguments that need
//! memory live on the thread's own stack below its red zone, saved and restored around the
//! call, so other threads (which may be running) never see anything change.

use super::thread::StopKind;
use super::Inferior;
use crate::os::maps;
use crate::os::wait::{wait, WaitEvent, WaitOutcome};
use crate::os::{procfs, ptrace, OsError, Tid};

/// The x86-64 ABI lets a function use 128 bytes below rsp without moving it.
const RED_ZONE: u64 = 128;

impl Inferior {
    /// An address holding the bytes `0f 05`, found once per image (the vDSO first: it is small
    /// and always has its system-call fallbacks).
    fn syscall_gadget(&mut self) -> Result<u64, OsError> {
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
        Err(OsError::Spawn(
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
        // Resuming a signal-delivery-stop to run the call would drop its signal (and
        // re-sending it later would make a second one).
        if self
            .threads
            .get(&tid)
            .is_some_and(|t| t.stop_kind == StopKind::Signal && t.pending_signal != 0)
        {
            return Err(OsError::Spawn(format!(
                "thread {tid} is about to receive a signal"
            )));
        }
        let gadget = self.syscall_gadget()?;
        let saved = *self.regs(tid)?;
        let at = (saved.rsp - RED_ZONE - scratch.len() as u64) & !15;
        let mut stack = vec![0u8; scratch.len()];
        self.mem.read(at, &mut stack)?;
        self.mem.write(at, scratch)?;
        let mut regs = saved;
        let a = args(at);
        regs.rip = gadget;
        regs.rax = nr;
        regs.orig_rax = u64::MAX;
        (regs.rdi, regs.rsi, regs.rdx, regs.r10, regs.r8, regs.r9) =
            (a[0], a[1], a[2], a[3], a[4], a[5]);
        ptrace::set_regs(tid, &regs)?;
        let result = self.run_injected(tid);
        // Whatever happened, the thread gets its registers and stack back.
        let _ = self.mem.read(at, scratch);
        let _ = self.mem.write(at, &stack);
        let _ = ptrace::set_regs(tid, &saved);
        if let Some(t) = self.threads.get_mut(&tid) {
            t.regs = Some(saved);
        }
        result
    }

    /// From the entry stop to the exit stop of the injected call.
    fn run_injected(&mut self, tid: Tid) -> Result<i64, OsError> {
        for _ in 0..2 {
            ptrace::syscall_step(tid, 0)?;
            loop {
                match wait(tid, false)? {
                    WaitOutcome::Event(WaitEvent::SyscallStop { .. }) => break,
                    WaitOutcome::Event(WaitEvent::Signal { signal, .. }) => {
                        // A signal arrived first: keep it for the thread's next resume and
                        // give up on this call (the program state is restored by the caller).
                        self.hold_signal(tid, signal);
                        return Err(OsError::Spawn(format!(
                            "injected system call interrupted by {}",
                            crate::os::signals::signal_name(signal)
                        )));
                    }
                    WaitOutcome::Event(e) if e.is_gone() => {
                        return Err(OsError::Spawn("the thread exited".into()));
                    }
                    WaitOutcome::Event(_) => {
                        return Err(OsError::Spawn("unexpected stop in an injected call".into()))
                    }
                    WaitOutcome::Interrupted | WaitOutcome::NothingYet => {}
                }
            }
        }
        Ok(ptrace::get_regs(tid)?.rax as i64)
    }
}
