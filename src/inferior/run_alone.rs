//! One thread run alone, every other one stopped, until it reaches an address where scry
//! puts a site of its own for the while: a recorder's `rep` string instruction in one go, a
//! signal handler run through during a step by lines (see `handlers`).

use std::time::Instant;

use super::run::Mode;
use super::thread::{RunState, StopKind};
use super::{Inferior, PassFn, Stop};
use crate::os::{OsError, Tid};

impl Inferior {
    /// Runs the selected thread alone (every other one stays stopped) until it reaches
    /// `addr`, where scry puts a site of its own for the while: a recorder runs a `rep`
    /// string instruction so in one go (single-stepped, the CPU traps after every element).
    /// `None` when the thread cannot start so (it rests on a site, or has a signal to take):
    /// the caller steps instead.
    pub(crate) fn run_thread_to(
        &mut self,
        addr: u64,
        deadline: Instant,
        pass: PassFn,
    ) -> Result<Option<Stop>, OsError> {
        self.all_stop(pass)?;
        if self.has_queued() {
            return Ok(self.next_queued());
        }
        let tid = self.selected;
        let pc = self.pc(tid)?;
        if self.has_site(pc) || self.pending_signal(tid) != 0 || self.has_site(addr) {
            return Ok(None);
        }
        self.insert_site(addr)?;
        let ran = self.run_alone_to(tid, addr, 0, deadline, pass);
        let _ = self.remove_site(addr);
        let stop = ran?;
        self.settle(stop, pass).map(Some)
    }

    /// Resumes `tid` alone, delivering `sig` (0: none), until it reaches `addr` (a site is
    /// there): `Stop::Step` then, or the stop that came first.
    pub(super) fn run_alone_to(
        &mut self,
        tid: Tid,
        addr: u64,
        sig: i32,
        deadline: Instant,
        pass: PassFn,
    ) -> Result<Stop, OsError> {
        self.resume_request(tid, sig)?;
        self.mark(tid, RunState::Running, StopKind::Event);
        loop {
            let event = match self.event_of(tid, deadline, pass)? {
                Ok(event) => event,
                Err(stop) => return Ok(stop),
            };
            let mine = event.tid() == tid;
            match self.handle(event, Mode::Hold, pass)? {
                Some(Stop::Breakpoint { tid: t, addr: at }) if t == tid && at == addr => {
                    return Ok(Stop::Step { tid });
                }
                Some(stop) if mine || stop.is_final() => return Ok(stop),
                Some(stop) => self.hold_stop(stop),
                None if !self.threads.contains_key(&tid) => return Ok(Stop::ThreadExit { tid }),
                // Let through (a stale interrupt, a passing event): on it goes.
                None if mine
                    && self
                        .threads
                        .get(&tid)
                        .is_some_and(|t| t.state != RunState::Running) =>
                {
                    self.resume_request(tid, 0)?;
                    self.mark(tid, RunState::Running, StopKind::Event);
                }
                None => {}
            }
        }
    }
}
