//! Thin, typed wrappers over the ptrace requests scry uses. Every call names the thread it
//! failed on, because "ESRCH" alone tells a user nothing.

use nix::sys::ptrace::{self, Options};
use nix::unistd::Pid;

use super::regs::RawRegs;
use super::{OsError, Tid};

fn pid(tid: Tid) -> Pid {
    Pid::from_raw(tid)
}

/// A resume request that carries a signal number as the kernel takes it: any of 1-64.
/// (nix's typed `Signal` has no real-time signals, and converting through it silently
/// dropped every signal from 32 up.)
fn resume_with(
    request: libc::c_uint,
    what: &'static str,
    tid: Tid,
    sig: i32,
) -> Result<(), OsError> {
    // SAFETY: a resume request takes no pointers; `data` is the signal number (0 = none).
    let rc = unsafe {
        libc::ptrace(
            request,
            tid,
            std::ptr::null_mut::<libc::c_void>(),
            sig as libc::c_long as *mut libc::c_void,
        )
    };
    if rc == -1 {
        Err(OsError::Ptrace {
            what,
            tid,
            errno: nix::Error::last(),
        })
    } else {
        Ok(())
    }
}

fn err(what: &'static str, tid: Tid) -> impl FnOnce(nix::Error) -> OsError {
    move |errno| OsError::Ptrace { what, tid, errno }
}

/// Options every traced thread carries. EXITKILL only for processes scry spawned: an attached
/// process must outlive a crashed debugger.
pub(crate) fn trace_options(kill_on_exit: bool) -> Options {
    // Fork and vfork children are traced only long enough to take scry's int3 bytes out of
    // them (they inherit copies) and are then let go.
    let mut opts = Options::PTRACE_O_TRACECLONE
        | Options::PTRACE_O_TRACEEXEC
        | Options::PTRACE_O_TRACEFORK
        | Options::PTRACE_O_TRACEVFORK
        | Options::PTRACE_O_TRACEVFORKDONE
        // System-call stops (injected calls, caught system calls) report SIGTRAP|0x80, never
        // to be confused with a trap of the program's.
        | Options::PTRACE_O_TRACESYSGOOD;
    if kill_on_exit {
        opts |= Options::PTRACE_O_EXITKILL;
    }
    opts
}

/// Adds PTRACE_O_TRACESECCOMP to a stopped tracee's options (threads and children it
/// creates later inherit them): its seccomp filter's SECCOMP_RET_TRACE then stops it for
/// scry. Set only once scry has installed a filter: without the option a trace filter's
/// calls fail with ENOSYS, which is what a program with such a filter of its own expects.
pub(crate) fn enable_seccomp_stops(tid: Tid, kill_on_exit: bool) -> Result<(), OsError> {
    let options = trace_options(kill_on_exit) | Options::PTRACE_O_TRACESECCOMP;
    ptrace::setoptions(pid(tid), options).map_err(err("setoptions", tid))
}

pub(crate) fn seize(tid: Tid, options: Options) -> Result<(), OsError> {
    ptrace::seize(pid(tid), options).map_err(err("seize", tid))
}

pub(crate) fn interrupt(tid: Tid) -> Result<(), OsError> {
    ptrace::interrupt(pid(tid)).map_err(err("interrupt", tid))
}

pub(crate) fn cont(tid: Tid, sig: i32) -> Result<(), OsError> {
    resume_with(libc::PTRACE_CONT, "cont", tid, sig)
}

pub(crate) fn single_step(tid: Tid, sig: i32) -> Result<(), OsError> {
    resume_with(libc::PTRACE_SINGLESTEP, "singlestep", tid, sig)
}

/// Resumes to the next system-call entry or exit stop.
pub(crate) fn syscall_step(tid: Tid, sig: i32) -> Result<(), OsError> {
    resume_with(libc::PTRACE_SYSCALL, "syscall", tid, sig)
}

/// The thread's blocked-signal mask, bit n-1 for signal n.
pub(crate) fn get_sigmask(tid: Tid) -> Result<u64, OsError> {
    let mut mask = 0u64;
    // SAFETY: PTRACE_GETSIGMASK writes `addr` (= 8, the size of a kernel sigset) bytes into
    // the u64 we own.
    let rc = unsafe {
        libc::ptrace(
            libc::PTRACE_GETSIGMASK,
            tid,
            std::mem::size_of::<u64>(),
            &mut mask as *mut u64,
        )
    };
    if rc == -1 {
        return Err(OsError::Ptrace {
            what: "getsigmask",
            tid,
            errno: nix::Error::last(),
        });
    }
    Ok(mask)
}

pub(crate) fn set_sigmask(tid: Tid, mask: u64) -> Result<(), OsError> {
    // SAFETY: PTRACE_SETSIGMASK reads 8 bytes from the u64 we own.
    let rc = unsafe {
        libc::ptrace(
            libc::PTRACE_SETSIGMASK,
            tid,
            std::mem::size_of::<u64>(),
            &mask as *const u64,
        )
    };
    if rc == -1 {
        return Err(OsError::Ptrace {
            what: "setsigmask",
            tid,
            errno: nix::Error::last(),
        });
    }
    Ok(())
}

/// Lets a tracee in group-stop wait for SIGCONT like an untraced stopped process, while its
/// tracer may still interrupt it (only for PTRACE_SEIZE'd tracees in a group-stop).
pub(crate) fn listen(tid: Tid) -> Result<(), OsError> {
    resume_with(libc::PTRACE_LISTEN, "listen", tid, 0)
}

pub(crate) fn detach(tid: Tid, sig: i32) -> Result<(), OsError> {
    resume_with(libc::PTRACE_DETACH, "detach", tid, sig)
}

pub(crate) fn get_regs(tid: Tid) -> Result<RawRegs, OsError> {
    ptrace::getregs(pid(tid)).map_err(err("getregs", tid))
}

pub(crate) fn set_regs(tid: Tid, regs: &RawRegs) -> Result<(), OsError> {
    ptrace::setregs(pid(tid), *regs).map_err(err("setregs", tid))
}

pub(crate) fn event_msg(tid: Tid) -> Result<u64, OsError> {
    ptrace::getevent(pid(tid))
        .map(|v| v as u64)
        .map_err(err("geteventmsg", tid))
}

/// What a signal stop carries beyond its number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SigInfo {
    pub signo: i32,
    pub code: i32,
    /// `si_addr`: meaningful for SIGSEGV, SIGBUS, SIGILL, SIGFPE and hardware traps.
    pub addr: u64,
}

/// si_code for a trap raised by the kernel itself, which is how an `int3` reports.
pub(crate) const SI_KERNEL: i32 = 0x80;
pub(crate) const TRAP_BRKPT: i32 = 1;
pub(crate) const TRAP_TRACE: i32 = 2;
pub(crate) const TRAP_HWBKPT: i32 = 4;

pub(crate) fn sig_info(tid: Tid) -> Result<SigInfo, OsError> {
    let info = ptrace::getsiginfo(pid(tid)).map_err(err("getsiginfo", tid))?;
    // SAFETY: si_addr reads the union's fault-address member; for signals that do not set it
    // the value is unspecified but still a plain integer, and callers only trust it for the
    // signals that carry one.
    let addr = unsafe { info.si_addr() } as u64;
    Ok(SigInfo {
        signo: info.si_signo,
        code: info.si_code,
        addr,
    })
}

/// The SIGTRAP waiting in `tid`'s own queue, if one is (not the process's shared queue:
/// every trap the CPU raises is queued on its thread). A thread can hold one while it
/// reports something else: the kernel takes a PTRACE_INTERRUPT before the signals pending,
/// so a thread that hit an int3 just as it was interrupted stops with its pc past the int3
/// and the trap still to come.
pub(crate) fn pending_trap(tid: Tid) -> Result<Option<SigInfo>, OsError> {
    // struct ptrace_peeksiginfo_args { u64 off; u32 flags; s32 nr; }; flags 0 = the thread's
    // private queue. A siginfo is 128 bytes: signo at 0, code at 8, the fault address at 16.
    const SIGINFO: usize = 128;
    const MAX: usize = 8;
    let args: [u64; 2] = [0, (MAX as u64) << 32];
    let mut infos = [[0u8; SIGINFO]; MAX];
    // SAFETY: the kernel reads the 16-byte argument block and writes at most `nr` (= MAX)
    // siginfos into the buffer we own.
    let n = unsafe {
        libc::ptrace(
            libc::PTRACE_PEEKSIGINFO,
            tid,
            args.as_ptr(),
            infos.as_mut_ptr(),
        )
    };
    if n < 0 {
        return Err(OsError::Ptrace {
            what: "peeksiginfo",
            tid,
            errno: nix::Error::last(),
        });
    }
    let field =
        |b: &[u8; SIGINFO], at: usize| i32::from_ne_bytes(b[at..at + 4].try_into().unwrap());
    Ok(infos[..(n as usize).min(MAX)]
        .iter()
        .find(|b| field(b, 0) == libc::SIGTRAP)
        .map(|b| SigInfo {
            signo: libc::SIGTRAP,
            code: field(b, 8),
            addr: u64::from_ne_bytes(b[16..24].try_into().unwrap()),
        }))
}

/// Writes one byte of a stopped tracee's memory with PTRACE_PEEKDATA/POKEDATA, a word read and
/// written back: no file descriptor needed, for when none is left to open its
/// `/proc/PID/mem` (a fork bomb) and a byte of scry's must still come out.
pub(crate) fn poke_byte(tid: Tid, addr: u64, byte: u8) -> Result<(), OsError> {
    let word_at = addr & !7;
    let shift = (addr - word_at) * 8;
    let word = ptrace::read(pid(tid), word_at as ptrace::AddressType)
        .map_err(err("peekdata", tid))? as u64;
    let word = (word & !(0xff << shift)) | (u64::from(byte) << shift);
    ptrace::write(
        pid(tid),
        word_at as ptrace::AddressType,
        word as libc::c_long,
    )
    .map_err(err("pokedata", tid))
}

/// Byte offset of debug register `index` inside `struct user`.
fn debugreg_offset(index: usize) -> usize {
    std::mem::offset_of!(libc::user, u_debugreg) + 8 * index
}

pub(crate) fn read_debugreg(tid: Tid, index: usize) -> Result<u64, OsError> {
    ptrace::read_user(pid(tid), debugreg_offset(index) as ptrace::AddressType)
        .map(|v| v as u64)
        .map_err(err("peekuser", tid))
}

pub(crate) fn write_debugreg(tid: Tid, index: usize, value: u64) -> Result<(), OsError> {
    ptrace::write_user(
        pid(tid),
        debugreg_offset(index) as ptrace::AddressType,
        value as libc::c_long,
    )
    .map_err(err("pokeuser", tid))
}

/// Sends `sig` to one thread of a thread group.
pub(crate) fn tgkill(tgid: Tid, tid: Tid, sig: i32) -> Result<(), OsError> {
    // SAFETY: a plain syscall with integer arguments.
    let rc = unsafe { libc::syscall(libc::SYS_tgkill, tgid, tid, sig) };
    if rc == 0 {
        Ok(())
    } else {
        Err(OsError::Ptrace {
            what: "tgkill",
            tid,
            errno: nix::Error::last(),
        })
    }
}

pub(crate) fn kill_process(pid_: Tid, sig: i32) -> Result<(), OsError> {
    // SAFETY: a plain syscall with integer arguments.
    let rc = unsafe { libc::kill(pid_, sig) };
    if rc == 0 {
        Ok(())
    } else {
        Err(OsError::Ptrace {
            what: "kill",
            tid: pid_,
            errno: nix::Error::last(),
        })
    }
}

/// Where in a system call a syscall-stop or seccomp stop is (PTRACE_GET_SYSCALL_INFO).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SyscallPoint {
    /// Entry (PTRACE_SYSCALL) or a seccomp stop: about to run.
    Entry {
        nr: u64,
        args: [u64; 6],
    },
    Seccomp {
        nr: u64,
        args: [u64; 6],
        data: u32,
    },
    Exit {
        ret: i64,
    },
    /// Not in a system call stop.
    None,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SyscallInfo {
    pub point: SyscallPoint,
    /// The instruction after the `syscall`.
    pub ip: u64,
}

const PTRACE_GET_SYSCALL_INFO: libc::c_uint = 0x420e;

/// What system call a stopped thread is at, and where.
pub(crate) fn syscall_info(tid: Tid) -> Result<SyscallInfo, OsError> {
    // struct ptrace_syscall_info: op (u8), pad, arch (u32), ip, sp, then the union at 24:
    // entry {nr, args[6]}, exit {rval (s64), is_error (u8)}, seccomp {nr, args[6], ret_data}.
    let mut raw = [0u64; 11];
    // SAFETY: the kernel writes at most `addr` (= 88) bytes into the buffer we own.
    let rc = unsafe {
        libc::ptrace(
            PTRACE_GET_SYSCALL_INFO,
            tid,
            std::mem::size_of_val(&raw),
            raw.as_mut_ptr(),
        )
    };
    if rc == -1 {
        return Err(OsError::Ptrace {
            what: "get_syscall_info",
            tid,
            errno: nix::Error::last(),
        });
    }
    let op = raw[0] as u8;
    let args = [raw[4], raw[5], raw[6], raw[7], raw[8], raw[9]];
    let point = match op {
        1 => SyscallPoint::Entry { nr: raw[3], args },
        2 => SyscallPoint::Exit { ret: raw[3] as i64 },
        3 => SyscallPoint::Seccomp {
            nr: raw[3],
            args,
            data: raw[10] as u32,
        },
        _ => SyscallPoint::None,
    };
    Ok(SyscallInfo { point, ip: raw[1] })
}
