//! Stepping one thread past its breakpoint while the other threads run (see
//! `x86::displace` for the plan). The int3 stays in memory the whole time, so no
//! other thread can slip through; the instruction is emulated, or a copy of it runs in a
//! scratch area: the program's entry point, whose code never runs again once the program has
//! started (the bytes there are put back after each use, so nothing of the file changes).

use super::thread::{RunState, StopKind};
use super::{Inferior, Stop};
use crate::os::regs::RawRegs;
use crate::os::wait::{wait, WaitEvent, WaitOutcome};
use crate::os::{procfs, ptrace, OsError, Tid};
use crate::x86::displace::{self, After, Effect, Gpr, StepOver};

/// Room for one copied instruction (at most 15 bytes, a rewritten one a byte more).
const SCRATCH_LEN: u64 = 32;

/// How a step over a breakpoint ended.
pub(super) enum Outcome {
    /// The thread is past the instruction, stopped, ready to be resumed.
    Done,
    /// Only a step in place (int3 lifted, every other thread stopped) will do.
    InPlace,
    /// Something else happened meanwhile: report it.
    Stopped(Stop),
}

impl Inferior {
    /// Steps `tid`, stopped at the breakpoint site `pc`, past the instruction under it.
    pub(super) fn step_over_displaced(
        &mut self,
        tid: Tid,
        pc: u64,
        pass: super::PassFn,
    ) -> Result<Outcome, OsError> {
        let Some(scratch) = self.scratch_area(pc) else {
            return Ok(Outcome::InPlace);
        };
        let mut code = [0u8; 16];
        let n = self.read_code_partial(pc, &mut code);
        let plan = displace::plan(&code[..n], pc, scratch);
        if crate::os::wait::trace_enabled() {
            eprintln!("scry: step over {pc:#x}: {plan:?}");
        }
        match plan {
            StepOver::InPlace => Ok(Outcome::InPlace),
            StepOver::Emulate(effect) => {
                self.emulate(tid, effect)?;
                Ok(Outcome::Done)
            }
            StepOver::Displace { code, load, after } => {
                self.run_displaced(tid, scratch, &code, load, after, pass)
            }
        }
    }

    /// The scratch area: the program's entry point, when it is code and no breakpoint sits
    /// in it. Not when the breakpoint being stepped over is itself there.
    fn scratch_area(&mut self, pc: u64) -> Option<u64> {
        if self.scratch.is_none() {
            self.scratch = Some(procfs::entry_point(self.pid).unwrap_or(0));
        }
        let at = self.scratch.filter(|&a| a != 0)?;
        let end = at + SCRATCH_LEN;
        let clash =
            (at..end).contains(&pc) || self.sites.addrs().iter().any(|s| (at..end).contains(s));
        (!clash).then_some(at)
    }

    fn emulate(&mut self, tid: Tid, effect: Effect) -> Result<(), OsError> {
        let mut regs = *self.regs(tid)?;
        match effect {
            Effect::Jump(to) => regs.rip = to,
            Effect::Branch { cond, target, next } => {
                regs.rip = if cond.holds(regs.eflags) {
                    target
                } else {
                    next
                };
            }
            Effect::Call { target, ret } => {
                regs.rsp -= 8;
                self.mem.write(regs.rsp, &ret.to_le_bytes())?;
                regs.rip = target;
            }
            Effect::Return { extra } => {
                let mut ret = [0u8; 8];
                self.mem.read(regs.rsp, &mut ret)?;
                regs.rip = u64::from_le_bytes(ret);
                regs.rsp += 8 + extra;
            }
            Effect::Push { reg, next } => {
                let value = gpr(&regs, reg);
                regs.rsp -= 8;
                self.mem.write(regs.rsp, &value.to_le_bytes())?;
                regs.rip = next;
            }
        }
        self.set_regs(tid, &regs)
    }

    fn run_displaced(
        &mut self,
        tid: Tid,
        scratch: u64,
        code: &[u8],
        load: Option<(Gpr, u64)>,
        after: After,
        pass: super::PassFn,
    ) -> Result<Outcome, OsError> {
        let original = *self.regs(tid)?;
        let mut saved = vec![0u8; code.len()];
        self.mem.read(scratch, &mut saved)?;
        self.mem.write(scratch, code)?;
        let mut regs = original;
        regs.rip = scratch;
        if let Some((reg, value)) = load {
            set_gpr(&mut regs, reg, value);
        }
        let result = self
            .set_regs(tid, &regs)
            .and_then(|()| self.single_step_copy(tid, scratch, after));
        let _ = self.mem.write(scratch, &saved);
        let (mut now, deferred) = match result {
            Ok(Some(done)) => done,
            Ok(None) => {
                // Gone meanwhile: its end is on its way through the event loop.
                return Ok(Outcome::Done);
            }
            Err(e) => {
                // Put the thread back where it was, as if nothing had run.
                let _ = self.set_regs(tid, &original);
                return Err(e);
            }
        };
        match after {
            After::Continue { next } => now.rip = next,
            After::Jumped => {}
            After::Called { ret } => self.mem.write(now.rsp, &ret.to_le_bytes())?,
        }
        if let Some((reg, _)) = load {
            set_gpr(&mut now, reg, gpr(&original, reg));
        }
        self.set_regs(tid, &now)?;
        // The single step was a trap of scry's: the program's SIGTRAP disposition is put back.
        self.after_our_trap(tid);
        // A data watchpoint the copy triggered is reported like any other.
        let slots = self.take_watch_hits(tid)?;
        if slots != 0 {
            if deferred != 0 {
                self.hold_signal(tid, deferred);
            }
            return Ok(Outcome::Stopped(Stop::Watchpoint { tid, slots }));
        }
        if deferred != 0 {
            self.hold_signal(tid, deferred);
            if !pass(deferred) {
                let info = ptrace::sig_info(tid).ok();
                return Ok(Outcome::Stopped(Stop::Signal {
                    tid,
                    signal: deferred,
                    code: info.map_or(0, |i| i.code),
                    fault_addr: info.map_or(0, |i| i.addr),
                }));
            }
        }
        Ok(Outcome::Done)
    }

    /// Single-steps the copy until it has finished (a `rep` string instruction stays at the
    /// copy's start until its last round). A signal that arrives first waits until the
    /// instruction has run (delivered then, its handler would return onto the int3 and count
    /// a second hit for one arrival). Returns the registers and that signal; `None` when the
    /// thread is gone.
    fn single_step_copy(
        &mut self,
        tid: Tid,
        scratch: u64,
        after: After,
    ) -> Result<Option<(RawRegs, i32)>, OsError> {
        let mut deferred = 0;
        loop {
            self.single_step(tid, 0)?;
            self.mark_running_raw(tid);
            let event = loop {
                match wait(tid, false)? {
                    WaitOutcome::Event(e) => break e,
                    WaitOutcome::Interrupted | WaitOutcome::NothingYet => {}
                }
            };
            match event {
                WaitEvent::Signal {
                    signal: libc::SIGTRAP,
                    ..
                } => {
                    self.mark_stopped_raw(tid);
                    let regs = *self.regs(tid)?;
                    let repeating = matches!(after, After::Continue { .. }) && regs.rip == scratch;
                    if !repeating {
                        return Ok(Some((regs, deferred)));
                    }
                }
                WaitEvent::Signal { signal, .. } => {
                    self.mark_stopped_raw(tid);
                    if deferred == 0 {
                        deferred = signal;
                    }
                }
                e if e.is_gone() => {
                    // Keep the end for the event loop to report.
                    if let Some(stop) = self.handle_gone(e) {
                        self.queued.push_back(stop);
                    }
                    return Ok(None);
                }
                // A stale interrupt or a group-stop: the copy has not run yet.
                _ => self.mark_stopped_raw(tid),
            }
        }
    }

    fn mark_running_raw(&mut self, tid: Tid) {
        if let Some(t) = self.threads.get_mut(&tid) {
            t.state = RunState::Running;
            t.regs = None;
        }
    }

    fn mark_stopped_raw(&mut self, tid: Tid) {
        if let Some(t) = self.threads.get_mut(&tid) {
            t.state = RunState::Stopped;
            t.stop_kind = StopKind::Event;
            t.regs = None;
        }
    }
}

/// A general-purpose register of `regs` by hardware number.
fn gpr(regs: &RawRegs, n: Gpr) -> u64 {
    match n {
        0 => regs.rax,
        1 => regs.rcx,
        2 => regs.rdx,
        3 => regs.rbx,
        4 => regs.rsp,
        5 => regs.rbp,
        6 => regs.rsi,
        7 => regs.rdi,
        8 => regs.r8,
        9 => regs.r9,
        10 => regs.r10,
        11 => regs.r11,
        12 => regs.r12,
        13 => regs.r13,
        14 => regs.r14,
        _ => regs.r15,
    }
}

fn set_gpr(regs: &mut RawRegs, n: Gpr, value: u64) {
    let slot = match n {
        0 => &mut regs.rax,
        1 => &mut regs.rcx,
        2 => &mut regs.rdx,
        3 => &mut regs.rbx,
        4 => &mut regs.rsp,
        5 => &mut regs.rbp,
        6 => &mut regs.rsi,
        7 => &mut regs.rdi,
        8 => &mut regs.r8,
        9 => &mut regs.r9,
        10 => &mut regs.r10,
        11 => &mut regs.r11,
        12 => &mut regs.r12,
        13 => &mut regs.r13,
        14 => &mut regs.r14,
        _ => &mut regs.r15,
    };
    *slot = value;
}
