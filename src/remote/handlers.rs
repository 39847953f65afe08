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

/// Rounds of the handler coming back to the same place deeper in the stack (a handler that
/// runs the interrupted code again) before the step gives up and steps into it.
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
        let Some(wire) = self.numbering().to_wire(signal) else {
            return Ok(None);
        };
        // An int3 of scry's there already is the way back.
        let mut temporary = None;
        if self.sites.get(&pc).is_none_or(|s| s.hardware) {
            // An int3: a debug register at pc may be passed on the way back, the flags the
            // signal frame restores carrying the RF of a hit there (the program then ran
            // on to its end). One only where memory is not to be written.
            let hardware = self.read_only && self.hw_slots_used() < HW_SLOTS;
            self.request_ok(self.site_packet('Z', pc, hardware).as_bytes())?;
            temporary = Some((pc, hardware));
        }
        let thread = self.thread_id(tid);
        let mut action = format!("vCont;C{wire:02x}:{thread}");
        let mut result = Ok(None);
        for _ in 0..MAX_RETURNS {
            self.forget_state();
            let ran = self.run_packet(&[], &action, deadline);
            let (reply, interrupt, _) = match ran {
                Ok(r) => r,
                Err(e) => {
                    result = Err(e);
                    break;
                }
            };
            let back = match &reply {
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
            if back && self.registers_of(tid).is_ok_and(|r| r.rsp == sp) {
                break;
            }
            if !back {
                result = match self.classify(reply, interrupt, Some(tid), pass) {
                    Ok(Event::Report(stop)) => Ok(Some(stop)),
                    // Another passed signal: the next round delivers it.
                    Ok(Event::Pass(t, sig)) if t == tid => match self.numbering().to_wire(sig) {
                        Some(w) => {
                            action = format!("vCont;C{w:02x}:{thread}");
                            continue;
                        }
                        None => Ok(None),
                    },
                    Ok(Event::Pass(t, sig)) => {
                        self.pending.insert(t, sig);
                        Ok(None)
                    }
                    Ok(Event::Ignore) => {
                        action = format!("vCont;c:{thread}");
                        continue;
                    }
                    Err(e) => Err(e),
                };
                break;
            }
            // Back at the place, deeper in the stack: on round.
            action = format!("vCont;c:{thread}");
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
