//! A step by lines that a signal interrupts, over a stub: the handler runs through at full
//! speed, the thread alone, back to where the signal came, as the local backend runs it
//! (gdb's step-resume breakpoint). Stepped into instead, every `next()` in a program with a
//! periodic SIGALRM ended in its handler, and the program made no progress.

use std::time::Instant;

use super::reply::Reply;
use super::run::Event;
use super::{Remote, HW_SLOTS};
use crate::inferior::{PassFn, Stop};
use crate::os::{OsError, Tid};

/// Rounds of a run-through at most (the handler's run, each signal that comes meanwhile,
/// each return to the place deeper in the stack, as a handler running the interrupted code
/// again makes): past them the step goes on from where the thread is.
const MAX_RETURNS: usize = 8;

impl Remote {
    /// Delivers `signal` to `tid` and runs it alone until it is back at its pc with its
    /// stack as it was: `None` then (the step goes on from there), or the stop that came
    /// first (a breakpoint in the handler, the end), reported as it is.
    pub(super) fn run_handler_through(
        &mut self,
        tid: Tid,
        signal: i32,
        deadline: Instant,
        pass: PassFn,
    ) -> Result<Option<Stop>, OsError> {
        let regs = self.registers_of(tid)?;
        let (pc, sp) = (regs.rip, regs.rsp);
        // An int3 of scry's there already is the way back. Else one is put there: a debug
        // register at pc may be passed on the way back, the flags the signal frame restores
        // carrying the RF of a hit there (the program then ran on to its end); a debug
        // register only where memory is not to be written.
        let mut temporary = None;
        if self.sites.get(&pc).is_none_or(|s| s.hardware) {
            let hardware = self.read_only;
            let placed = (!hardware || self.hw_slots_used() < HW_SLOTS)
                && self
                    .request_ok(self.site_packet('Z', pc, hardware).as_bytes())
                    .is_ok();
            if !placed {
                // No way back to watch for: the step delivers the signal and goes into the
                // handler, as before.
                self.pending.insert(tid, signal);
                return Ok(None);
            }
            temporary = Some((pc, hardware));
        }
        let thread = self.thread_id(tid);
        // The signal the next round delivers: the first, then any that comes meanwhile.
        let mut deliver = Some(signal);
        let mut result = Ok(None);
        for _ in 0..MAX_RETURNS {
            let action = match deliver.take().and_then(|s| self.numbering().to_wire(s)) {
                Some(wire) => format!("vCont;C{wire:02x}:{thread}"),
                None => format!("vCont;c:{thread}"),
            };
            self.forget_state();
            let (reply, interrupt, _) = match self.run_packet(&[], &action, deadline) {
                Ok(r) => r,
                Err(e) => {
                    result = Err(e);
                    break;
                }
            };
            let at_place = match &reply {
                Reply::Stopped {
                    signal: 5,
                    thread,
                    expedited,
                    ..
                } if thread.is_none_or(|t| t.tid <= 0 || t.tid as Tid == tid) => {
                    self.note_expedited_pc(tid, expedited);
                    self.pc_of(tid).ok() == Some(pc)
                }
                _ => false,
            };
            if at_place {
                if self.registers_of(tid).is_ok_and(|r| r.rsp == sp) {
                    break;
                }
                // Back at the place, deeper in the stack: on round.
                continue;
            }
            match self.classify(reply, interrupt, Some(tid), pass) {
                Ok(Event::Report(stop)) => {
                    result = Ok(Some(stop));
                    break;
                }
                // Another signal for the program: the next round delivers it.
                Ok(Event::Pass(t, sig)) if t == tid => deliver = Some(sig),
                Ok(Event::Pass(t, sig)) => {
                    self.pending.insert(t, sig);
                }
                Ok(Event::Ignore) => {}
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
        // Rounds used up with a signal not yet delivered: the step delivers it.
        if let Some(sig) = deliver {
            self.pending.insert(tid, sig);
        }
        if let Some((addr, hardware)) = temporary {
            if self.ended.is_none() {
                self.request_ok(self.site_packet('z', addr, hardware).as_bytes())?;
                self.note_lifted(addr);
            }
        }
        result
    }
}
