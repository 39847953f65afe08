//! Waiting for the next event of any traced thread: until a deadline, a user's interrupt
//! or a continue's tick, polling first where that brings a stop back sooner.

use std::time::Instant;

use super::{Inferior, PassFn, Stop};
use crate::os::wait::{wait, WaitEvent, WaitOutcome};
use crate::os::{interrupt, OsError, Tid};

/// How a wait ended.
pub(super) enum Waited {
    Event(WaitEvent),
    Deadline,
    /// scry itself got SIGINT/SIGTERM/SIGHUP.
    Signalled,
}

/// How long a continue's wait polls before it sleeps (see `os::wait::wait_briefly`).
const SPIN: std::time::Duration = std::time::Duration::from_micros(200);

/// Whether scry may run on another CPU than its tracee, where polling pays (decided once:
/// scry's own mask, as it was started).
static POLL_FIRST: std::sync::LazyLock<bool> =
    std::sync::LazyLock::new(crate::os::affinity::several_cpus);

impl Inferior {
    /// The next event while `tid` runs, or the stop that ends the wait: every thread
    /// stopped at the deadline (`Timeout`) or at the user's interrupt (`Interrupted`).
    pub(super) fn event_of(
        &mut self,
        tid: Tid,
        deadline: Instant,
        pass: PassFn,
    ) -> Result<Result<WaitEvent, Stop>, OsError> {
        let end = match self.next_event_or_signal(deadline, true)? {
            Waited::Event(event) => return Ok(Ok(event)),
            Waited::Deadline => Stop::Timeout { tid },
            Waited::Signalled => Stop::Interrupted { tid },
        };
        self.stop_all(pass)?;
        Ok(Err(end))
    }

    /// Waits for the next event from any thread; `None` when the deadline passed first.
    pub(super) fn next_event(&mut self, deadline: Instant) -> Result<Option<WaitEvent>, OsError> {
        Ok(match self.next_event_or_signal(deadline, false)? {
            Waited::Event(e) => Some(e),
            Waited::Deadline | Waited::Signalled => None,
        })
    }

    /// Like [`next_event`](Self::next_event), and when `user` is set a SIGINT/SIGTERM to
    /// scry also ends the wait.
    pub(super) fn next_event_or_signal(
        &mut self,
        deadline: Instant,
        user: bool,
    ) -> Result<Waited, OsError> {
        if let Some(event) = self.take_kept() {
            return Ok(Waited::Event(event));
        }
        loop {
            if user && interrupt::pending() {
                return Ok(Waited::Signalled);
            }
            // The alarm only ends a wait that blocks: with events always queued (hundreds of
            // threads hitting a logpoint), `wait` never sleeps, the alarm's EINTR never
            // comes, and without this look at the clock a run would outlive its deadline.
            if user && Instant::now() >= deadline {
                return Ok(Waited::Deadline);
            }
            // A stop comes back soonest to a waiter that is still running: on a VM, the
            // wake-up of a sleeping tracer costs more than the stop (see `os::wait`).
            if user && self.pinning.is_none() && *POLL_FIRST {
                if let Ok(WaitOutcome::Event(event)) = crate::os::wait::wait_briefly(SPIN) {
                    if !self.owns(&event) {
                        super::tree::keep(event);
                        continue;
                    }
                    return Ok(Waited::Event(event));
                }
            }
            match wait(-1, false) {
                Ok(WaitOutcome::Event(event)) if !self.owns(&event) => super::tree::keep(event),
                Ok(WaitOutcome::Event(event)) => return Ok(Waited::Event(event)),
                Ok(WaitOutcome::Interrupted) => {
                    if user && interrupt::pending() {
                        return Ok(Waited::Signalled);
                    }
                    if Instant::now() >= deadline {
                        return Ok(Waited::Deadline);
                    }
                }
                Ok(WaitOutcome::NothingYet) => {}
                Err(OsError::Ptrace {
                    errno: nix::Error::ECHILD,
                    ..
                }) => {
                    // Nothing left to wait for: the process is gone and was reaped.
                    self.dead = true;
                    return Ok(Waited::Event(WaitEvent::Killed {
                        tid: self.pid,
                        signal: libc::SIGKILL,
                    }));
                }
                Err(e) => return Err(e),
            }
        }
    }
}
