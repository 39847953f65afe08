//! Threads that vanish under a run: a thread scry holds stopped is taken away only by the
//! whole process's end (`exit_group`, a fatal signal) or by an exec (which ends every thread
//! but the one that made it), and a ptrace call on it then fails with ESRCH. That is no
//! error of the run: the events saying what happened wait in waitpid, and the run reports
//! them (`exited with code 42`, the exec). It was the error `ptrace setregs on thread N
//! failed: No such process`, and every call after it failed the same way.

use std::time::Instant;

use super::thread::RunState;
use super::*;

impl Inferior {
    /// `run`'s stop; where a ptrace call found a thread gone, the stop the process's own
    /// events say instead (see the module's doc).
    pub(super) fn unless_vanished(
        &mut self,
        deadline: Instant,
        pass: PassFn,
        nonstop: NonStop,
        run: impl FnOnce(&mut Self) -> Result<Stop, OsError>,
    ) -> Result<Stop, OsError> {
        let gone = match run(self) {
            // A thread's exit: the thread read next is the one selected now. A step of a
            // thread that called exit() ends so, and the main thread is selected, already
            // taken by the same exit_group.
            Ok(stop @ Stop::ThreadExit { .. }) if !self.dead => {
                let selected = self.selected;
                match self.regs(selected) {
                    Err(e) if e.is_gone() => e,
                    _ => return Ok(stop),
                }
            }
            Ok(stop) if stop_of_thread(&stop).is_none() => return Ok(stop),
            // The process ended while a thread's stop was being made (its other threads
            // stopped): the end is what happened, and nothing of the stop can be read any
            // more (it was `breakpoint 1` with no pc, the exit one call later). A thread's
            // exit reported on the way stays: it happened, and a listener counts it.
            Ok(stop) if self.dead => return Ok(self.take_end().unwrap_or(stop)),
            // The stop's thread is gone too (the process ended after it stopped): its
            // registers are read first.
            Ok(stop) => match stop_of_thread(&stop).map(|t| self.regs(t).map(|_| ())) {
                Some(Err(e)) if e.is_gone() => e,
                _ => return Ok(stop),
            },
            Err(e) if e.is_gone() && self.dead => {
                if crate::os::wait::trace_enabled() {
                    eprintln!("scry: {e} after the process's end");
                }
                return self.take_end().ok_or(e);
            }
            Err(e) if e.is_gone() => e,
            Err(e) => return Err(e),
        };
        if crate::os::wait::trace_enabled() {
            eprintln!("scry: {gone}: waiting for the process's own events");
        }
        self.after_vanished(deadline, pass, nonstop)
    }

    /// The process's end, queued while a stop was being made.
    fn take_end(&mut self) -> Option<Stop> {
        let at = self
            .queued
            .iter()
            .position(|s| matches!(s, Stop::Exited { .. } | Stop::Killed { .. }))?;
        self.queued.remove(at)
    }

    /// Every thread is taken as running (the ones still there are woken by the run's
    /// deadline, at worst), nothing half done is kept, and the run waits for the events.
    fn after_vanished(
        &mut self,
        deadline: Instant,
        pass: PassFn,
        nonstop: NonStop,
    ) -> Result<Stop, OsError> {
        self.partial = None;
        for t in self.threads.values_mut() {
            t.state = RunState::Running;
            t.regs = None;
        }
        if let Some(stop) = self.next_queued() {
            return Ok(stop);
        }
        self.run_until_event(deadline, pass, nonstop)
    }
}

/// The thread a stop leaves stopped for the user to read (a thread's exit or start is no
/// such stop: the one is gone, the other may run on).
fn stop_of_thread(stop: &Stop) -> Option<Tid> {
    match *stop {
        Stop::Step { tid }
        | Stop::Timeout { tid }
        | Stop::Interrupted { tid }
        | Stop::Breakpoint { tid, .. }
        | Stop::Signal { tid, .. }
        | Stop::Watchpoint { tid, .. } => Some(tid),
        _ => None,
    }
}
