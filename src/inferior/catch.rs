//! Which system calls stop the program, and the machinery that makes only those stop.
//!
//! * A process scry spawned gets a seccomp filter, installed from inside the program the
//!   first time something is caught (an injected `seccomp()` with TSYNC, so every thread
//!   has it): it returns SECCOMP_RET_TRACE for the caught numbers and lets every other call
//!   run at full speed. A filter can never be removed; catching more later stacks a small
//!   filter for just the new numbers, and a number no longer caught costs one silent stop
//!   per call. A program that never catches anything carries no filter at all.
//! * An attached process (and a spawned one whose filter could not be installed) is traced
//!   with PTRACE_SYSCALL instead: two stops per system call, caught or not.
//! * When scry lets a filtered process go (`detach()`, or a fork child released untraced),
//!   the filter's TRACE would make those calls fail with ENOSYS; a second filter returning
//!   USER_NOTIF for the same numbers is stacked first and its listener handed to the keeper
//!   (`os::keeper`), which lets every such call run.

use std::collections::{BTreeMap, BTreeSet};

use super::inject::{run_syscall, Injected};
use super::thread::{RunState, StopKind};
use super::{Inferior, Origin};
use crate::os::memory::ProcMem;
use crate::os::syscalls::render::Captured;
use crate::os::syscalls::{flags, SysSet};
use crate::os::{keeper, ptrace, seccomp, OsError, Tid};

const NR_CLOSE: u64 = 3;
const NR_PRCTL: u64 = 157;
const NR_SECCOMP: u64 = 317;
const EACCES: i64 = 13;
/// The capability bit a seccomp filter needs without no_new_privs.
const CAP_SYS_ADMIN: u32 = 21;
/// Filters scry stacks in one process before it switches to PTRACE_SYSCALL (the kernel
/// caps a process's filters at 32768 instructions in all).
const MAX_FILTERS: usize = 32;

/// How caught system calls are made to stop.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum CatchMode {
    /// Nothing caught, nothing installed.
    #[default]
    Off,
    /// scry's seccomp filter stops the caught calls; the others run at full speed.
    Seccomp,
    /// PTRACE_SYSCALL: every system call stops twice.
    Ptrace,
}

/// A caught call whose exit is awaited: its arguments and what they pointed to at entry.
#[derive(Debug, Clone)]
pub(super) struct Pending {
    pub nr: u64,
    /// After its `syscall` instruction: a restart runs the same instruction again.
    pub ip: u64,
    pub args: [u64; 6],
    pub captured: Vec<(usize, Captured)>,
    /// It returned a restart code (scry interrupted it, or a signal did): the kernel runs it
    /// again, and its next entry is this call going on.
    pub restarting: bool,
    /// While interrupted: the thread's latest system call entry was `rt_sigreturn`.
    pub sigreturn: bool,
}

#[derive(Debug, Default)]
pub(super) struct Catch {
    /// What the session wants reported, by phase.
    pub entry: SysSet,
    pub exit: SysSet,
    pub mode: CatchMode,
    /// Every number a filter of scry's traces in this process.
    pub covered: SysSet,
    pub filters: usize,
    /// The wanted sets changed: the filter is brought up to date before the next run.
    pub dirty: bool,
    /// Seccomp will not do for this process (why); PTRACE_SYSCALL from now on.
    pub no_seccomp: Option<String>,
    /// Why the last attempt to install a filter was put off, shown by `syscall.list()`.
    pub note: Option<String>,
    /// An injected prctl set no_new_privs: an unprivileged program needs it for a filter.
    pub set_no_new_privs: bool,
    /// The user accepted setting no_new_privs for a filter (`config.syscall_filter =
    /// 'seccomp'`): a change the program keeps for life.
    pub no_new_privs_allowed: bool,
    pub awaiting: BTreeMap<Tid, Pending>,
    /// Caught calls whose exit returned a restart code (scry's interrupt or a signal
    /// stopped them). Either the kernel runs them again (their next entry is the same call,
    /// and they go back to `awaiting`), or a handler without SA_RESTART ran and the program
    /// sees EINTR: that result shows only at the exit of the handler's `rt_sigreturn`,
    /// which returns to just after the call's instruction with the call's result in rax.
    pub interrupted: BTreeMap<Tid, Pending>,
    /// Threads stopped at a system call's entry (seccomp or PTRACE_SYSCALL): nothing can be
    /// injected into them (resuming would run their own call).
    pub at_entry: BTreeSet<Tid>,
    /// What the latest reported syscall stop of each thread captured.
    pub last: BTreeMap<Tid, Vec<(usize, Captured)>>,
    /// Things the user should hear about at the next stop.
    pub warnings: Vec<String>,
}

/// The filter could not be installed now: `Later` tries again at the next run, `Never`
/// falls back to PTRACE_SYSCALL for good.
enum Refused {
    Later(String),
    Never(String),
}

impl Catch {
    /// What a fork child shares with its parent: the filters in its kernel state and the
    /// wanted sets (nothing of the parent's threads).
    pub(super) fn inherited(&self) -> Catch {
        Catch {
            entry: self.entry,
            exit: self.exit,
            mode: self.mode,
            covered: self.covered,
            filters: self.filters,
            no_seccomp: self.no_seccomp.clone(),
            set_no_new_privs: self.set_no_new_privs,
            no_new_privs_allowed: self.no_new_privs_allowed,
            ..Catch::default()
        }
    }
}

impl Inferior {
    /// Sets the calls to report at entry and at exit (applied before the next continue).
    pub(crate) fn set_syscall_catch(&mut self, entry: SysSet, exit: SysSet) {
        if entry != self.catch.entry || exit != self.catch.exit {
            self.catch.entry = entry;
            self.catch.exit = exit;
            self.catch.dirty = true;
        }
    }

    /// Whether scry may set the program's no_new_privs flag to install a filter.
    pub(crate) fn allow_no_new_privs(&mut self, allowed: bool) {
        self.catch.no_new_privs_allowed = allowed;
    }

    /// Caught calls stop through PTRACE_SYSCALL only: nothing is installed in the program.
    pub(crate) fn forbid_seccomp(&mut self, why: &str) {
        if self.catch.no_seccomp.is_none() && self.catch.covered.is_empty() {
            self.catch.no_seccomp = Some(why.to_string());
        }
    }

    /// How caught calls stop in this process, and why when it is not the fast way.
    pub(crate) fn syscall_catch_mode(&self) -> (CatchMode, Option<String>) {
        let why = match self.catch.mode {
            CatchMode::Seccomp if self.catch.set_no_new_privs => Some(
                "the program runs unprivileged, so scry set its no_new_privs flag, which a filter needs".into(),
            ),
            _ => self.catch.no_seccomp.clone().or(self.catch.note.clone()),
        };
        (self.catch.mode, why)
    }

    /// What the latest syscall stop of `tid` read from memory at the call's entry.
    pub(crate) fn syscall_capture(&self, tid: Tid) -> &[(usize, Captured)] {
        self.catch.last.get(&tid).map_or(&[], |v| v.as_slice())
    }

    /// Warnings about caught system calls since the last call (a fork child scry could
    /// not hand to the keeper).
    pub(crate) fn take_syscall_warnings(&mut self) -> Vec<String> {
        std::mem::take(&mut self.catch.warnings)
    }

    pub(super) fn catch_dirty(&self) -> bool {
        self.catch.dirty
    }

    /// Brings the filter (or PTRACE_SYSCALL) in line with what is caught. Every thread is
    /// stopped.
    pub(super) fn sync_catch(&mut self) -> Result<(), OsError> {
        self.catch.dirty = false;
        let live: Vec<Tid> = self.thread_ids();
        self.catch.awaiting.retain(|t, _| live.contains(t));
        self.catch.interrupted.retain(|t, _| live.contains(t));
        self.catch.last.retain(|t, _| live.contains(t));
        let wanted = self.catch.entry.union(&self.catch.exit);
        if wanted.is_empty() {
            self.catch.mode = if self.catch.covered.is_empty() {
                CatchMode::Off
            } else {
                CatchMode::Seccomp
            };
            return Ok(());
        }
        if self.origin == Origin::Attached {
            self.catch.mode = CatchMode::Ptrace;
            return Ok(());
        }
        if self.catch.no_seccomp.is_some() {
            self.catch.mode = CatchMode::Ptrace;
            return Ok(());
        }
        let missing = wanted.minus(&self.catch.covered);
        if missing.is_empty() {
            self.catch.mode = CatchMode::Seccomp;
            return Ok(());
        }
        match self.install_trace_filter(&missing) {
            Ok(()) => {
                self.catch.covered = self.catch.covered.union(&missing);
                self.catch.filters += 1;
                self.catch.mode = CatchMode::Seccomp;
                self.catch.note = None;
            }
            Err(Refused::Later(why)) => {
                // Correct meanwhile, only slower; tried again before the next run.
                self.catch.mode = CatchMode::Ptrace;
                self.catch.note = Some(why);
                self.catch.dirty = true;
            }
            Err(Refused::Never(why)) => {
                self.catch.mode = CatchMode::Ptrace;
                self.catch.no_seccomp = Some(why);
            }
        }
        Ok(())
    }

    /// A stopped thread that can run an injected call (see [`injectable`](Self::injectable)).
    /// The selected thread first.
    pub(super) fn injectable_thread(&self) -> Option<Tid> {
        std::iter::once(self.selected)
            .chain(self.threads.keys().copied())
            .find(|&tid| self.injectable(tid))
    }

    /// Whether `tid` can run an injected call: stopped between instructions or at a system
    /// call's exit, not inside a call the kernel has yet to finish (a ptrace event or a
    /// system call's entry), not about to receive a signal, not stuck.
    pub(super) fn injectable(&self, tid: Tid) -> bool {
        self.threads.get(&tid).is_some_and(|t| {
            t.state == RunState::Stopped
                && t.stuck.is_none()
                && t.stop_kind != StopKind::InSyscall
                && !(t.stop_kind == StopKind::Signal && t.pending_signal != 0)
        }) && !self.catch.at_entry.contains(&tid)
    }

    fn install_trace_filter(&mut self, set: &SysSet) -> Result<(), Refused> {
        if let Err(why) = keeper::release_supported() {
            return Err(Refused::Never(format!(
                "seccomp is not used because scry could not let the program go safely: {why}"
            )));
        }
        if self.catch.filters >= MAX_FILTERS {
            return Err(Refused::Never(format!(
                "{MAX_FILTERS} filters stacked already"
            )));
        }
        // The kernel installs a filter for a process with CAP_SYS_ADMIN or no_new_privs set.
        // Setting the flag is for life (setuid programs it starts later lose their
        // privilege, also after scry has gone), so it takes the user's word.
        let status = crate::os::procfs::status_text(self.pid).unwrap_or_default();
        let field = |key: &str| crate::os::procfs::status_field(&status, key);
        let nnp = field("NoNewPrivs").is_some_and(|v| v.trim() == "1");
        let admin = field("CapEff")
            .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
            .is_some_and(|caps| caps & (1 << CAP_SYS_ADMIN) != 0);
        if !nnp && !admin && !self.catch.no_new_privs_allowed {
            return Err(Refused::Never(
                "the program runs unprivileged, and a filter would need its no_new_privs flag set, which it keeps for life (setuid programs it starts would lose their privilege); config.syscall_filter = 'seccomp' accepts that".into(),
            ));
        }
        let Some(tid) = self.injectable_thread() else {
            return Err(Refused::Later(
                "every thread is stopped at a system call's entry; the filter waits for the next run".into(),
            ));
        };
        let kill_on_exit = self.origin == Origin::Spawned;
        for t in self.thread_ids() {
            match ptrace::enable_seccomp_stops(t, kill_on_exit) {
                Ok(()) => {}
                Err(e) if e.is_gone() => {}
                Err(e) => return Err(Refused::Later(e.to_string())),
            }
        }
        let program = seccomp::program(set, seccomp::RET_TRACE | seccomp::SCRY_DATA);
        let flags = seccomp::FLAG_TSYNC;
        let mut rc = self
            .inject_filter(tid, &program, flags)
            .map_err(|e| Refused::Later(e.to_string()))?;
        if rc == -EACCES {
            // Unprivileged: a filter needs no_new_privs (what strace --seccomp-bpf sets too).
            let set = self
                .inject_syscall(tid, NR_PRCTL, &mut [], |_| {
                    [seccomp::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0, 0]
                })
                .map_err(|e| Refused::Later(e.to_string()))?;
            if set != 0 {
                return Err(Refused::Never(format!(
                    "prctl(PR_SET_NO_NEW_PRIVS) failed: {}",
                    flags::errno_name(set).unwrap_or_default()
                )));
            }
            self.catch.set_no_new_privs = true;
            rc = self
                .inject_filter(tid, &program, flags)
                .map_err(|e| Refused::Later(e.to_string()))?;
        }
        match rc {
            0 => Ok(()),
            tid if tid > 0 => Err(Refused::Never(format!(
                "thread {tid} has a seccomp filter the others lack, so one filter cannot cover every thread"
            ))),
            err => Err(Refused::Never(format!(
                "seccomp() failed in the program: {}",
                flags::errno_name(err).unwrap_or_else(|| err.to_string())
            ))),
        }
    }

    /// Runs `seccomp(SECCOMP_SET_MODE_FILTER, flags, program)` in thread `tid`.
    fn inject_filter(
        &mut self,
        tid: Tid,
        program: &[seccomp::Insn],
        flags: u64,
    ) -> Result<i64, OsError> {
        let len = 16 + program.len() * 8;
        self.inject_syscall_with(tid, NR_SECCOMP, len, |at| {
            (
                seccomp::fprog_bytes(program, at),
                [seccomp::SET_MODE_FILTER, flags, at, 0, 0, 0],
            )
        })
        .map(|(rc, _)| rc)
    }

    /// Before scry lets this process go: its calls that scry's filter traces are passed to
    /// the keeper, which lets them run (see the module comment). An error means nothing
    /// was changed and the process must not be let go. Returns what the process keeps for
    /// life, said in a note, when it carries a filter.
    pub(super) fn release_catch(&mut self) -> Result<Option<String>, OsError> {
        self.catch.awaiting.clear();
        self.catch.interrupted.clear();
        self.catch.last.clear();
        if self.catch.covered.is_empty() {
            return Ok(None);
        }
        let refuse = |why: String| {
            OsError::Keeper(format!(
                "cannot let the process go: it carries scry's seccomp filter for caught system calls, which would then fail with ENOSYS, and {why}; kill() ends it instead"
            ))
        };
        let Some(tid) = self.injectable_thread() else {
            return Err(refuse(
                "every thread is stopped at a system call's entry (cont() to the call's exit first)".into(),
            ));
        };
        // Everything that can fail is tried before the program is changed.
        keeper::release_supported().map_err(&refuse)?;
        probe_take_fd(self.pid).map_err(|e| refuse(e.to_string()))?;
        let gadget = self.syscall_gadget().map_err(|e| refuse(e.to_string()))?;
        let covered = self.catch.covered;
        let saved = *self.regs(tid).map_err(|e| refuse(e.to_string()))?;
        let pid = self.pid;
        let result = pass_through(pid, tid, &self.mem, gadget, &saved, &covered);
        if let Some(t) = self.threads.get_mut(&tid) {
            t.regs = None;
        }
        match result.map_err(|e| refuse(e.to_string()))? {
            Ok(keeper) => Ok(Some(self.kept_for_life(keeper))),
            Err(signal) => {
                self.hold_signal(tid, signal);
                Err(refuse("a signal arrived meanwhile; try again".into()))
            }
        }
    }

    /// What a process let go with scry's filter keeps: the filter (for life), the keeper it
    /// depends on, and no_new_privs if scry set it.
    fn kept_for_life(&self, keeper: Tid) -> String {
        let shown: Vec<String> = self
            .catch
            .covered
            .iter()
            .take(4)
            .map(crate::os::syscalls::name)
            .collect();
        let more = self.catch.covered.len().saturating_sub(shown.len());
        let calls = match more {
            0 => shown.join(", "),
            n => format!("{} and {n} more", shown.join(", ")),
        };
        let nnp = if self.catch.set_no_new_privs {
            "; its no_new_privs flag, set for the filter, stays set"
        } else {
            ""
        };
        format!(
            "process {} keeps scry's seccomp filter for life: its {calls} calls now pass through keeper process {keeper}, which lives as long as the program and ignores every signal but SIGKILL (killed, those calls fail with ENOSYS){nnp}",
            self.pid
        )
    }

    /// Before scry follows a fork child and lets the parent go: the parent carries scry's
    /// filter, so its caught calls are handed to the keeper. `forker` is stopped at the fork
    /// event, inside `fork`: a call injected there would have its result overwritten by
    /// fork's, so the thread is first taken to the fork's syscall-exit stop. A failure is a
    /// warning: the parent runs on, its caught calls failing with ENOSYS.
    pub(super) fn release_before_follow(&mut self, forker: Tid) {
        if self.catch.covered.is_empty() {
            return;
        }
        let result = self
            .run_to_syscall_exit(forker)
            .and_then(|()| self.release_catch().map(drop));
        if let Err(e) = result {
            self.catch.warnings.push(format!(
                "the fork parent {} carries scry's seccomp filter and could not be handed to the keeper ({e}): its caught system calls fail with ENOSYS",
                self.pid
            ));
        }
    }

    /// Runs `tid` from a ptrace event stop inside a system call to that call's exit stop.
    fn run_to_syscall_exit(&mut self, tid: Tid) -> Result<(), OsError> {
        use crate::os::wait::{wait, WaitEvent, WaitOutcome};
        ptrace::syscall_step(tid, 0)?;
        loop {
            match wait(tid, false)? {
                WaitOutcome::Event(WaitEvent::SyscallStop { .. }) => break,
                WaitOutcome::Event(WaitEvent::Signal { signal, .. }) => {
                    self.hold_signal(tid, signal);
                    return Err(OsError::Injected("a signal arrived first".into()));
                }
                WaitOutcome::Event(e) if e.is_gone() => {
                    return Err(OsError::Injected("the parent exited".into()))
                }
                WaitOutcome::Event(_) => {
                    return Err(OsError::Injected("an unexpected stop came first".into()))
                }
                _ => {}
            }
        }
        self.mark(tid, RunState::Stopped, StopKind::Event);
        if let Some(t) = self.threads.get_mut(&tid) {
            t.regs = None;
        }
        self.selected = tid;
        Ok(())
    }

    /// A fork or vfork child, stopped at its first stop and about to be let go: it inherited
    /// scry's filter, so its caught calls are handed to the keeper too.
    pub(super) fn release_fork_child(&mut self, child: Tid) {
        if self.catch.covered.is_empty() {
            return;
        }
        let result = (|| -> Result<(), OsError> {
            probe_take_fd(child)?;
            let gadget = self.syscall_gadget()?;
            let mem = ProcMem::open(child)?;
            let saved = ptrace::get_regs(child)?;
            match pass_through(child, child, &mem, gadget, &saved, &self.catch.covered)? {
                Ok(_) => Ok(()),
                Err(signal) => {
                    // Queued again: the child gets it once let go.
                    let _ = ptrace::tgkill(child, child, signal);
                    Err(OsError::Injected("a signal arrived first".into()))
                }
            }
        })();
        if let Err(e) = result {
            self.catch.warnings.push(format!(
                "fork child {child} carries scry's seccomp filter and could not be handed to the keeper ({e}): its caught system calls fail with ENOSYS"
            ));
        }
    }
}

/// Taking an fd from process `pid` works (permissions, kernel): tried on one of its fds
/// before anything irreversible is done.
fn probe_take_fd(pid: Tid) -> Result<(), OsError> {
    let first = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .ok()
        .and_then(|d| {
            d.flatten()
                .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
                .min()
        });
    match first {
        Some(fd) => keeper::take_fd(pid, fd).map(drop),
        // No fd at all: nothing to probe with, pidfd_open alone must do.
        None => Ok(()),
    }
}

/// Stacks the USER_NOTIF twin of scry's filter in `pid` (through thread `tid`), takes its
/// listener out of the process and gives it to the keeper, whose pid it returns.
/// `Ok(Err(signal))`: a signal for the thread arrived first and nothing was changed.
fn pass_through(
    pid: Tid,
    tid: Tid,
    mem: &ProcMem,
    gadget: u64,
    saved: &crate::os::regs::RawRegs,
    covered: &SysSet,
) -> Result<Result<Tid, i32>, OsError> {
    keeper::ready()?;
    let program = seccomp::program(covered, seccomp::RET_USER_NOTIF);
    let flags = seccomp::FLAG_TSYNC | seccomp::FLAG_NEW_LISTENER | seccomp::FLAG_TSYNC_ESRCH;
    let len = 16 + program.len() * 8;
    let injected = run_syscall(tid, mem, gadget, saved, NR_SECCOMP, len, |at| {
        (
            seccomp::fprog_bytes(&program, at),
            [seccomp::SET_MODE_FILTER, flags, at, 0, 0, 0],
        )
    })?;
    let fd = match injected.0 {
        Injected::Returned(fd) if fd >= 0 => fd as i32,
        Injected::Returned(err) => {
            return Err(OsError::Keeper(format!(
                "seccomp() for the keeper failed: {}",
                flags::errno_name(err).unwrap_or_else(|| err.to_string())
            )))
        }
        Injected::Signal(signal) => return Ok(Err(signal)),
    };
    // From here on the listener must reach the keeper: without a reader the program's
    // covered calls would wait for an answer forever.
    let listener = keeper::take_fd(pid, fd);
    let _ = run_syscall(tid, mem, gadget, saved, NR_CLOSE, 0, |_| {
        (Vec::new(), [fd as u64, 0, 0, 0, 0, 0])
    });
    Ok(Ok(keeper::hand_over(listener?)?))
}
