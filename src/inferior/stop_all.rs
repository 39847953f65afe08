//! Stopping every thread (all-stop), and what a thread may be holding when it stops: a trap
//! still queued behind the interrupt, a breakpoint hit to undo.

use std::time::{Duration, Instant};

use super::run::Mode;
use super::PassFn;

use super::{Inferior, Stop};
use crate::os::{procfs, ptrace, OsError, Tid};

/// How long stop-all waits before asking whether a silent thread is stuck in the kernel.
const STUCK_AFTER: Duration = Duration::from_millis(300);

impl Inferior {
    /// Brings every running thread to a stop. Reports that arrive meanwhile are queued, except
    /// breakpoint hits, which are undone (pc rewound) and will simply happen again.
    pub(super) fn stop_all(&mut self, pass: PassFn) -> Result<(), OsError> {
        let running = self.running_tids();
        if running.is_empty() {
            return Ok(());
        }
        for tid in &running {
            match ptrace::interrupt(*tid) {
                Ok(()) => {}
                Err(e) if e.is_gone() => {}
                Err(e) => return Err(e),
            }
        }
        // Generous: an interrupt is answered in microseconds unless a thread is in an
        // uninterruptible sleep, and then waiting longer does not help. The alarm wakes the
        // wait every few milliseconds to look for threads that will never answer: a leader
        // that called pthread_exit stays a zombie until the whole group exits.
        let hard = Instant::now() + Duration::from_secs(5);
        self.alarm.arm(Duration::from_millis(10));
        let result = self.collect_stops(hard, pass);
        match self.run_deadline {
            Some(d) => self.alarm.arm(d.saturating_duration_since(Instant::now())),
            None => self.alarm.disarm(),
        }
        result
    }

    pub(super) fn collect_stops(&mut self, hard: Instant, pass: PassFn) -> Result<(), OsError> {
        let started = Instant::now();
        while !self.dead && !self.awaited_tids().is_empty() {
            let Some(event) = self.next_event(Instant::now() + Duration::from_millis(10))? else {
                self.forget_zombies();
                if started.elapsed() >= STUCK_AFTER {
                    self.mark_stuck(Instant::now() >= hard);
                }
                continue;
            };
            if let Some(stop) = self.handle(event, Mode::Hold, pass)? {
                self.hold_stop(stop);
            }
        }
        if !self.dead && !self.threads.contains_key(&self.selected) {
            self.forget_zombies();
        }
        if self.running_tids().is_empty() {
            // Every thread stopped with its queued traps taken: no late int3 can come.
            self.moribund.clear();
        }
        Ok(())
    }

    /// Books a stop of a thread other than the one the run is about, while everything is
    /// being held: queued for the next report, except a breakpoint hit, which was undone (pc
    /// rewound) and simply happens again when the thread runs, so a breakpoint removed
    /// meanwhile is never reported.
    pub(super) fn hold_stop(&mut self, stop: Stop) {
        match stop {
            Stop::Breakpoint { tid, .. } => {
                self.rearm_hw_hit(tid);
                if let Some(t) = self.threads.get_mut(&tid) {
                    t.rewound = true;
                }
            }
            stop => self.queued.push_back(stop),
        }
    }

    /// Threads that have not answered PTRACE_INTERRUPT: one in an uninterruptible wait
    /// (state D: a vfork parent on some kernels, I/O on a dead server) will not answer until
    /// the kernel lets it go, and waiting for it would hang the session. It is left running,
    /// marked with the reason; `all`: give up on every thread still silent (the hard limit).
    pub(super) fn mark_stuck(&mut self, all: bool) {
        for tid in self.awaited_tids() {
            let state = procfs::thread_state(self.pid, tid);
            if !all && state != Some('D') {
                continue;
            }
            let wchan = procfs::thread_wchan(self.pid, tid)
                .map(|w| format!(" in {w}"))
                .unwrap_or_default();
            let why = match state {
                Some('D') => format!("it is in an uninterruptible wait in the kernel{wchan}"),
                _ => "it did not answer PTRACE_INTERRUPT within 5 s".to_string(),
            };
            if let Some(t) = self.threads.get_mut(&tid) {
                t.stuck = Some(why);
            }
        }
    }

    /// Drops running threads that are zombies (or gone): they will not stop again. The
    /// process lives on while other threads do; its end still comes as the leader's exit.
    pub(super) fn forget_zombies(&mut self) {
        for tid in self.running_tids() {
            if matches!(
                procfs::thread_state(self.pid, tid),
                None | Some('Z') | Some('X')
            ) {
                self.threads.remove(&tid);
            }
        }
        if !self.threads.contains_key(&self.selected) {
            if let Some(&tid) = self.threads.keys().next() {
                self.selected = tid;
            }
        }
    }

    /// A thread held at an interrupt stop with a hardware trap still queued (it hit an int3
    /// or a watchpoint just as it was interrupted: the kernel reports the interrupt first).
    /// Left so, its pc would sit past an int3 that may be gone by the time it runs, and the
    /// trap would reach the program (its handler, or its death) after a breakpoint was
    /// removed or at detach. So it is let go at once to take the trap: the next report is
    /// that SIGTRAP, before any instruction of the program's, booked like any other (the pc
    /// rewound, the watch hit queued). True when it was let go.
    pub(super) fn flush_trap(&mut self, tid: Tid) -> Result<bool, OsError> {
        let pending = match ptrace::pending_trap(tid) {
            Ok(p) => p,
            Err(e) if e.is_gone() => return Ok(false),
            Err(e) => return Err(e),
        };
        // si_code > 0: raised by the CPU or the kernel, not sent by a process (those wait
        // their turn as the program's own). A blocked one would not come at once.
        let Some(info) = pending.filter(|i| i.code > 0) else {
            return Ok(false);
        };
        let _ = info;
        if ptrace::get_sigmask(tid).is_ok_and(|m| m & (1 << (libc::SIGTRAP - 1)) != 0) {
            return Ok(false);
        }
        // Plain PTRACE_CONT: the thread stops at the trap before it runs or reaches a
        // system-call stop, and how it was last resumed (a step of scry's whose trap this
        // may be, reported at the exit of the call it interrupted) must stay known.
        match ptrace::cont(tid, 0) {
            Ok(()) => {}
            Err(e) if e.is_gone() => return Ok(false),
            Err(e) => return Err(e),
        }
        if let Some(t) = self.threads.get_mut(&tid) {
            t.mark_running();
            t.flushing = true;
        }
        Ok(true)
    }
}
