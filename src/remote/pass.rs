//! Passing a hardware breakpoint without taking it out. When an instruction breakpoint in a
//! debug register fires, the Linux kernel sets the thread's EFLAGS.RF, which lets the
//! instruction run once without faulting again. A stub that runs the program on the real
//! CPU and leaves the registers alone (gdbserver) passes the site on the next continue by
//! itself, so stepping off it (`z`, a step, `Z`: a round trip more per hit) is not needed.
//!
//! Whether the stub behaves so is not assumed from its name or features: an emulator's
//! stub (QEMU) checks its breakpoints itself and traps again at once, and a step proves
//! nothing there (QEMU's single-step skips breakpoints). The first hit of a connection is
//! therefore a test of the very thing relied on: a continue with the site in and a second
//! hardware breakpoint on the next instruction. Stopping there, the site was passed; stopping
//! at the site again, it was not (nothing ran: the instruction does not branch, so the thread
//! cannot have come back). Anything else decides nothing, and the stop is reported.

use std::time::Instant;

use super::reply::Reply;
use super::run::{Event, Probe};
use super::Remote;
use crate::inferior::PassFn;
use crate::os::{OsError, Tid};

const SIGTRAP: u8 = 5;

impl Remote {
    /// The continue that tests whether the stub passes the site at `addr` that `tid` rests
    /// on (see the module doc).
    pub(super) fn probe_rf(
        &mut self,
        tid: Tid,
        addr: u64,
        deadline: Instant,
        pass: PassFn,
    ) -> Result<Probe, OsError> {
        // A signal handed on with the continue could run a handler that comes to the site
        // itself: a real hit there would look like the trap again. No test then.
        // Nor while system calls are caught: a call's stop nobody asked for would end the
        // test's continue without a verdict.
        if !self.pending.is_empty() || self.catch.is_active() {
            return Ok(Probe::Skipped);
        }
        let mut code = [0u8; 16];
        let n = self.read_partial(addr, &mut code);
        let Some(len) = crate::x86::disasm::falls_through(&code[..n], addr) else {
            return Ok(Probe::Skipped);
        };
        let next = addr + len as u64;
        if self.sites.contains_key(&next) {
            return Ok(Probe::Skipped);
        }
        let mark = self.site_packet('Z', next, true);
        if self.request_ok(mark.as_bytes()).is_err() {
            return Ok(Probe::Skipped);
        }
        let action = self.cont_action();
        self.forget_state();
        let ran = self.run_packet(&[], &action, deadline);
        // The mark goes whatever happened, unless the process went with it.
        let ended = matches!(ran, Ok((Reply::Exited { .. } | Reply::Killed { .. }, _, _)));
        if !ended {
            self.request_ok(self.site_packet('z', next, true).as_bytes())?;
            // Another thread may have reached it too: its hit is still on its way.
            self.note_lifted(next);
        }
        let (reply, interrupt, _) = ran?;
        if let Reply::Stopped {
            signal: SIGTRAP,
            thread,
            expedited,
            ..
        } = &reply
        {
            let stopped = thread
                .filter(|t| t.tid > 0)
                .map_or(self.selected, |t| t.tid as Tid);
            self.note_expedited_pc(stopped, expedited);
            let pc = self.pc_of(stopped)?;
            if pc == next {
                if stopped != tid {
                    // Another thread jumped to the mark: nothing learnt, and this stop is
                    // scry's. Stepping off it is the way from now on.
                    self.rf_passes = Some(false);
                    return Ok(Probe::Trapped);
                }
                self.rf_passes = Some(true);
                return Ok(Probe::Passed);
            }
            if pc == addr && stopped == tid {
                self.rf_passes = Some(false);
                return Ok(Probe::Trapped);
            }
        }
        match self.classify(reply, interrupt, None, pass)? {
            Event::Report(stop) => Ok(Probe::Report(stop)),
            // Not met: no call is caught during a test.
            Event::Ignore => Ok(Probe::Passed),
            Event::Pass(t, sig) => {
                // A signal to hand on: the run goes on with it (the site may be passed or
                // not: the next hit tests again).
                self.pending.insert(t, sig);
                Ok(Probe::Passed)
            }
        }
    }
}
