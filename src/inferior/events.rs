//! Booking what a wait reports: a thread's trap, signal, ptrace event or end becomes a stop
//! to report or is dealt with on the spot (new threads, forks, exec, system calls).

use super::run::Mode;
use super::sites::INT3;
use super::thread::{RunState, StopKind, Thread};
use super::PassFn;
use super::{FollowFork, Inferior, Stop};
use crate::os::ptrace::{self, SI_KERNEL};
use crate::os::wait::{wait, WaitEvent, WaitOutcome};
use crate::os::{procfs, OsError, Tid};

/// The signals that put a process into a job-control stop.
fn is_stop_signal(sig: i32) -> bool {
    matches!(
        sig,
        libc::SIGSTOP | libc::SIGTSTP | libc::SIGTTIN | libc::SIGTTOU
    )
}

impl Inferior {
    /// Books one wait event. Returns the stop to report, if it is one.
    pub(super) fn handle(
        &mut self,
        event: WaitEvent,
        mode: Mode,
        pass: PassFn,
    ) -> Result<Option<Stop>, OsError> {
        let tid = event.tid();
        if self.is_early_child(&event) {
            self.early_children.push(tid);
            return Ok(None);
        }
        // A thread let go to take a queued trap is flushed once: if it comes back at an
        // interrupt again, the trap is not coming.
        let flushed = self
            .threads
            .get_mut(&tid)
            .is_some_and(|t| std::mem::take(&mut t.flushing));
        if let Some(t) = self.threads.get_mut(&tid) {
            // Any report but a group-stop means the thread is out of it (SIGCONT came).
            t.group_stop = match event {
                WaitEvent::EventStop { signal, .. } if is_stop_signal(signal) => Some(signal),
                _ => None,
            };
            // An interrupt may come before a resumed thread ran anything; any other report
            // means it did, so an undone hit is behind it (it hit again, or its int3 went).
            if !matches!(event, WaitEvent::EventStop { .. }) {
                t.rewound = false;
            }
        }
        match event {
            WaitEvent::Exited { code, .. } => {
                Ok(self.thread_gone(tid, Stop::Exited { code }, mode))
            }
            WaitEvent::Killed { signal, .. } => {
                Ok(self.thread_gone(tid, Stop::Killed { signal }, mode))
            }
            WaitEvent::Signal {
                signal: libc::SIGTRAP,
                ..
            } => {
                self.mark(tid, RunState::Stopped, StopKind::Event);
                let info = ptrace::sig_info(tid)?;
                if info.code == SI_KERNEL {
                    let pc = self.pc(tid)?;
                    if pc > 0 && self.sites.contains(pc - 1) {
                        self.set_pc(tid, pc - 1)?;
                        self.after_our_trap(tid);
                        if self.sigaction.site == Some(pc - 1) {
                            self.entered_sigaction(tid);
                        }
                        return Ok(Some(Stop::Breakpoint { tid, addr: pc - 1 }));
                    }
                    if pc > 0 && self.moribund.contains(&(pc - 1)) && !self.int3_in_memory(pc - 1) {
                        // The int3 of a breakpoint removed since: undone, as if never hit.
                        if crate::os::wait::trace_enabled() {
                            eprintln!("scry: late trap of removed site {:#x} in {tid}", pc - 1);
                        }
                        self.set_pc(tid, pc - 1)?;
                        self.after_our_trap(tid);
                        self.continue_or_hold(tid, mode)?;
                        return Ok(None);
                    }
                }
                if let Some(stop) = self.take_debug_trap(tid)? {
                    self.after_our_trap(tid);
                    return Ok(Some(stop));
                }
                if let Some(stop) = self.take_lost_debug_trap(tid, info.code)? {
                    self.after_our_trap(tid);
                    return Ok(Some(stop));
                }
                // A trap of the debug hardware or of ptrace itself that is scry's (a single
                // step finishing late, at the exit of a system call that was interrupted, or
                // a hit of a watchpoint removed since): never delivered.
                if self.trap_is_ours(tid, info.code) {
                    self.after_our_trap(tid);
                    self.after_step_trap(tid);
                    self.continue_or_hold(tid, mode)?;
                    return Ok(None);
                }
                if pass(libc::SIGTRAP) {
                    return self.pass_signal(tid, libc::SIGTRAP, mode);
                }
                self.hold_signal(tid, libc::SIGTRAP);
                Ok(Some(Stop::Signal {
                    tid,
                    signal: libc::SIGTRAP,
                    code: info.code,
                    fault_addr: info.addr,
                }))
            }
            WaitEvent::Signal { signal, .. } => {
                if pass(signal) {
                    return self.pass_signal(tid, signal, mode);
                }
                let info = ptrace::sig_info(tid)?;
                self.hold_signal(tid, signal);
                Ok(Some(Stop::Signal {
                    tid,
                    signal,
                    code: info.code,
                    fault_addr: info.addr,
                }))
            }
            WaitEvent::Clone { .. } => {
                let new_tid = ptrace::event_msg(tid)? as Tid;
                // The new thread reports its own first stop; until then it counts as running.
                // Its debug registers start empty and are armed at that first stop.
                let fresh = !self.threads.contains_key(&new_tid);
                let thread = self.threads.entry(new_tid).or_insert_with(|| {
                    let mut t = Thread::new_stopped(new_tid);
                    t.mark_running();
                    t
                });
                if fresh {
                    thread.fresh = true;
                }
                let announce =
                    self.report_threads && !std::mem::replace(&mut thread.announced, true);
                self.continue_or_hold_as(tid, mode, StopKind::InSyscall)?;
                Ok(announce.then_some(Stop::ThreadStart { tid: new_tid }))
            }
            WaitEvent::Exec { .. } => {
                self.after_exec()?;
                Ok(Some(Stop::Exec { tid: self.pid }))
            }
            WaitEvent::Fork { .. } if self.follow_fork == FollowFork::Both => {
                let child = ptrace::event_msg(tid)? as Tid;
                self.hold_child(child)?;
                self.continue_or_hold_as(tid, mode, StopKind::InSyscall)?;
                Ok(self.report_forks.then_some(Stop::Forked { tid }))
            }
            WaitEvent::Fork { .. } if self.follow_fork == FollowFork::Child => {
                let child = ptrace::event_msg(tid)? as Tid;
                self.follow_child(tid, child, pass)?;
                self.continue_or_hold(child, mode)?;
                Ok(None)
            }
            WaitEvent::Fork { .. } | WaitEvent::Vfork { .. } => {
                let child = ptrace::event_msg(tid)? as Tid;
                let shared_memory = matches!(event, WaitEvent::Vfork { .. });
                self.release_child(child, shared_memory)?;
                self.continue_or_hold_as(tid, mode, StopKind::InSyscall)?;
                Ok(None)
            }
            WaitEvent::VforkDone { .. } => {
                // The vfork child has exec'd or exited: the memory is the parent's alone again.
                self.restore_lifted_sites();
                self.continue_or_hold_as(tid, mode, StopKind::InSyscall)?;
                Ok(None)
            }
            WaitEvent::SyscallStop { .. } | WaitEvent::Seccomp { .. } => {
                self.mark(tid, RunState::Stopped, StopKind::Event);
                if let Some(stop) = self.syscall_stop(tid)? {
                    return Ok(Some(stop));
                }
                self.continue_or_hold(tid, mode)?;
                Ok(None)
            }
            WaitEvent::EventStop { signal, .. } => {
                let fresh = self.threads.get(&tid).is_none_or(|t| t.fresh);
                self.mark(tid, RunState::Stopped, StopKind::Event);
                if fresh {
                    if let Some(t) = self.threads.get_mut(&tid) {
                        t.fresh = false;
                    }
                    if self.dr7 != 0 {
                        self.program_debugregs(tid)?;
                    }
                }
                if mode == Mode::Hold
                    && signal == libc::SIGTRAP
                    && !flushed
                    && self.flush_trap(tid)?
                {
                    return Ok(None);
                }
                self.continue_or_hold(tid, mode)?;
                Ok(None)
            }
            _ => {
                self.continue_or_hold(tid, mode)?;
                Ok(None)
            }
        }
    }

    /// A signal the user lets through without a stop: delivered now while running, held
    /// for the thread's next resume otherwise.
    pub(super) fn pass_signal(
        &mut self,
        tid: Tid,
        signal: i32,
        mode: Mode,
    ) -> Result<Option<Stop>, OsError> {
        if mode == Mode::Running {
            self.deliver_signal(tid, signal)?;
            self.mark(tid, RunState::Running, StopKind::Event);
        } else {
            self.hold_signal(tid, signal);
        }
        Ok(None)
    }

    pub(super) fn continue_or_hold(&mut self, tid: Tid, mode: Mode) -> Result<(), OsError> {
        self.continue_or_hold_as(tid, mode, StopKind::Event)
    }

    /// Like [`continue_or_hold`](Self::continue_or_hold) for a stop of `kind`.
    pub(super) fn continue_or_hold_as(
        &mut self,
        tid: Tid,
        mode: Mode,
        kind: StopKind,
    ) -> Result<(), OsError> {
        self.mark(tid, RunState::Stopped, kind);
        if mode == Mode::Running {
            self.resume(tid)?;
        }
        Ok(())
    }

    /// Books the end of a thread reported outside the event loop.
    pub(super) fn handle_gone(&mut self, event: WaitEvent) -> Option<Stop> {
        match event {
            WaitEvent::Exited { tid, code } => {
                self.thread_gone(tid, Stop::Exited { code }, Mode::Hold)
            }
            WaitEvent::Killed { tid, signal } => {
                self.thread_gone(tid, Stop::Killed { signal }, Mode::Hold)
            }
            _ => None,
        }
    }

    pub(super) fn thread_gone(&mut self, tid: Tid, stop: Stop, mode: Mode) -> Option<Stop> {
        // A process scry no longer follows (a parent let go at a fork) is still its child.
        if self.threads.remove(&tid).is_none() && tid != self.pid {
            return None;
        }
        if tid == self.pid {
            self.dead = true;
            self.threads.clear();
            return Some(stop);
        }
        if self.selected == tid {
            self.selected = if self.threads.contains_key(&self.pid) {
                self.pid
            } else {
                self.threads.keys().next().copied().unwrap_or(self.pid)
            };
        }
        let _ = mode;
        self.report_threads.then_some(Stop::ThreadExit { tid })
    }

    /// The first stop of a fork child that came before its parent's fork event (the kernel
    /// does not order the two): a stop of a tid that is neither a known thread nor a thread
    /// of this process. It must stay stopped until the fork event says what becomes of it;
    /// taken for a new thread, it would be resumed with scry's int3 bytes in its memory.
    pub(super) fn is_early_child(&self, event: &WaitEvent) -> bool {
        let tid = event.tid();
        !event.is_gone()
            && tid != self.pid
            && !self.threads.contains_key(&tid)
            && !procfs::has_task(self.pid, tid)
    }

    /// Collects the first stop of the fork child `child` (reported before or after its
    /// parent's fork event). False when it is already gone.
    pub(super) fn collect_child(&mut self, child: Tid) -> bool {
        if let Some(i) = self.early_children.iter().position(|&t| t == child) {
            self.early_children.swap_remove(i);
            return true;
        }
        // Another process's wait may have taken it (a tree run: every process waits on -1).
        if let Some(e) = super::tree::take_kept_of(child) {
            return !e.is_gone();
        }
        loop {
            match wait(child, false) {
                Ok(WaitOutcome::Event(e)) if e.is_gone() => return false,
                Ok(WaitOutcome::Event(_)) => return true,
                Ok(_) => {}
                Err(_) => return false,
            }
        }
    }

    /// Lets a fork or vfork child go without scry's int3 bytes in it. A forked child has a
    /// copy of the memory: its copy is cleaned. A vfork child shares the parent's memory
    /// until it execs or exits, so the bytes come out of that shared memory and go back in at
    /// VFORK_DONE (while the vfork lasts, other threads of the parent miss breakpoints).
    pub(super) fn release_child(&mut self, child: Tid, shared_memory: bool) -> Result<(), OsError> {
        // The child starts in a stop of its own; it must be collected before it can be let go.
        if !self.collect_child(child) {
            return Ok(());
        }
        self.let_child_go(child, shared_memory)
    }

    /// Lets a collected fork or vfork child go, cleaned (see `release_child`).
    pub(super) fn let_child_go(&mut self, child: Tid, shared_memory: bool) -> Result<(), OsError> {
        let sites: Vec<(u64, Vec<u8>)> = self.code_to_restore();
        if shared_memory {
            // A vfork child shares the memory: the int3s come out while it runs (a jump
            // stays: its trampoline records the child's hits like any thread's).
            for addr in self.sites.addrs() {
                if let Some(orig) = self.sites.original(addr) {
                    let _ = self.mem.write(addr, &[orig]);
                }
            }
            self.lifted_for_vfork = self.sites.addrs();
        } else if !sites.is_empty() {
            match crate::os::memory::ProcMem::open(child) {
                Ok(child_mem) => {
                    for (addr, orig) in &sites {
                        let _ = child_mem.write(*addr, orig);
                    }
                }
                // No descriptor left (a fork bomb): a word at a time through ptrace, since a
                // child let go with an int3 of scry's in it dies of SIGTRAP.
                Err(_) => {
                    for (addr, orig) in &sites {
                        for (i, b) in orig.iter().enumerate() {
                            let _ = ptrace::poke_byte(child, addr + i as u64, *b);
                        }
                    }
                }
            }
        }
        // It inherited scry's seccomp filter, if there is one.
        self.release_fork_child(child);
        match ptrace::detach(child, 0) {
            Ok(()) => Ok(()),
            Err(e) if e.is_gone() => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Puts back the int3 bytes a vfork took out of the shared memory.
    pub(super) fn restore_lifted_sites(&mut self) {
        for addr in std::mem::take(&mut self.lifted_for_vfork) {
            if self.sites.contains(addr) {
                let _ = self.mem.write(addr, &[INT3]);
            }
        }
    }

    /// exec replaced the image: old breakpoint bytes, threads and the mem fd are stale.
    pub(super) fn after_exec(&mut self) -> Result<(), OsError> {
        self.sites = Default::default();
        self.jumps = Default::default();
        self.quiet_sites.clear();
        // exec emptied the debug registers too.
        self.hw_sites.clear();
        self.watch = Default::default();
        self.dr7 = 0;
        self.scratch = None;
        self.partial = None;
        self.rendezvous = None;
        self.sigaction.forget();
        self.moribund.clear();
        self.syscall_gadget = None;
        self.trap_guard = None;
        self.threads.clear();
        // Stopped inside execve, which finishes when the thread is resumed.
        let mut leader = Thread::new_stopped(self.pid);
        leader.stop_kind = StopKind::InSyscall;
        self.threads.insert(self.pid, leader);
        self.selected = self.pid;
        self.mem = crate::os::memory::ProcMem::open(self.pid)?;
        Ok(())
    }
}
