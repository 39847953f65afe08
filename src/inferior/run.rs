//! Resuming and stopping: single steps, continues, and the all-stop discipline.

use std::time::Instant;

use super::sites::INT3;
use super::thread::{RunState, StopKind, Thread};
use super::waiting::Waited;
use super::{displaced, Inferior, NonStop, Stop};
use crate::os::ptrace;
use crate::os::wait::WaitEvent;
use crate::os::{OsError, Tid};

/// What to do with threads other than the one an event came from.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    /// Everything is running: an event that is not a stop resumes its thread at once.
    Running,
    /// Threads that stop stay stopped (stepping one thread, or stopping all).
    Hold,
}

/// How the thread of a stop reported alone went on.
enum GoOn {
    Resumed,
    /// Its instruction can only be stepped in place: every thread must stop first.
    InPlace,
    Stopped(Stop),
}

use super::PassFn;

impl Inferior {
    /// Arms the deadline for a run of steps or a continue; [`disarm`](Self::disarm) ends it.
    pub(crate) fn arm(&mut self, deadline: Instant) {
        self.run_deadline = Some(deadline);
        self.alarm
            .arm(deadline.saturating_duration_since(Instant::now()));
        if !self.dead {
            self.guard_sigtrap();
        }
    }

    /// From now on a continue's wait gives way at `at` (`Stop::Tick`), the program running
    /// on: the session reads what its probes wrote meanwhile. `None`: no ticks.
    pub(crate) fn set_tick(&mut self, at: Option<Instant>) {
        self.tick = at;
    }

    /// A site the session handles itself and lets go at once (see `quiet_sites`).
    pub(crate) fn set_quiet_site(&mut self, addr: u64, on: bool) {
        if on {
            self.quiet_sites.insert(addr);
        } else {
            self.quiet_sites.remove(&addr);
        }
    }

    /// Ends a run: every thread stopped (see [`all_stop`](Self::all_stop)), the deadline
    /// and any placement undone.
    pub(crate) fn disarm(&mut self, pass: PassFn) {
        let _ = self.all_stop(pass);
        self.run_deadline = None;
        self.trap_guard = None;
        self.alarm.disarm();
        self.unpin();
    }

    /// Steps the selected thread by one instruction; the others stay stopped.
    pub(crate) fn step(&mut self, deadline: Instant, pass: PassFn) -> Result<Stop, OsError> {
        // A step given less time than the run (a recorder trying a system call that may
        // block) needs the alarm sooner: a blocked wait ends only when it fires.
        let sooner = self.run_deadline.is_some_and(|run| deadline < run);
        if sooner {
            self.alarm
                .arm(deadline.saturating_duration_since(Instant::now()));
        }
        let stop = self.unless_vanished(deadline, pass, NonStop::default(), |me| {
            me.step_within(deadline, pass)
        });
        if let Some(run) = self.run_deadline.filter(|_| sooner) {
            self.alarm
                .arm(run.saturating_duration_since(Instant::now()));
        }
        stop
    }

    fn step_within(&mut self, deadline: Instant, pass: PassFn) -> Result<Stop, OsError> {
        self.all_stop(pass)?;
        if let Some(stop) = self.next_queued() {
            return Ok(stop);
        }
        let tid = self.selected;
        let pc = self.pc(tid)?;
        self.place_for_step(tid, pc);
        let stop = match self.jump_covering(pc) {
            // A user's step at a tracepoint's jump steps the program's own instruction.
            Some(site) => self.step_lifting_jump(tid, site, deadline, pass)?,
            None => self.step_thread(tid, deadline, pass)?,
        };
        self.settle(stop, pass)
    }

    /// Launched for a run of the tree and not stopped by [`all_stop`](Self::all_stop) since.
    pub(crate) fn is_launched(&self) -> bool {
        self.launched && !self.dead
    }

    /// Stops every thread if a stop was reported with only its own thread stopped (see
    /// [`NonStop`]) or the process was launched in a run of the tree: what every inspection
    /// of other threads and every end of a run needs.
    pub(crate) fn all_stop(&mut self, pass: PassFn) -> Result<(), OsError> {
        let ticked = std::mem::take(&mut self.ticked);
        let launched = std::mem::take(&mut self.launched);
        if (self.partial.take().is_some() || launched || ticked) && !self.dead {
            self.stop_all(pass)?;
        }
        Ok(())
    }

    /// Ends a run on `stop`: every other thread stopped, the stopping thread selected, and a
    /// thread at a reported breakpoint marked as parked there.
    pub(super) fn settle(&mut self, stop: Stop, pass: PassFn) -> Result<Stop, OsError> {
        if self.dead {
            return Ok(stop);
        }
        self.stop_all(pass)?;
        self.mark_event_thread(&stop);
        Ok(stop)
    }

    /// The oldest stop kept while everything was stopped, its thread selected: what is read
    /// at a stop (registers, the instruction of a watch hit) is that thread's.
    pub(super) fn next_queued(&mut self) -> Option<Stop> {
        let stop = self.queued.pop_front()?;
        self.mark_event_thread(&stop);
        Some(stop)
    }

    fn mark_event_thread(&mut self, stop: &Stop) {
        if let Some(tid) = stop.tid() {
            self.select(tid);
        }
        if let Stop::Breakpoint { tid, addr } = *stop {
            if let Some(t) = self.threads.get_mut(&tid) {
                t.parked_at = Some(addr);
            }
        }
    }

    /// Hands a stop of a continue to the caller: with only its own thread stopped when
    /// listeners will decide whether the run goes on (`nonstop`), else with every thread
    /// stopped.
    fn report(&mut self, stop: Stop, nonstop: NonStop, pass: PassFn) -> Result<Stop, OsError> {
        let own = |a: u64| {
            Some(a) == self.rendezvous
                || Some(a) == self.sigaction.site
                || self.quiet_sites.contains(&a)
        };
        if self.dead || !nonstop.covers(&stop, own) {
            return self.settle(stop, pass);
        }
        self.mark_event_thread(&stop);
        self.partial = stop.tid();
        Ok(stop)
    }

    /// Resumes every thread until something worth reporting happens or `deadline` passes.
    pub(crate) fn cont(
        &mut self,
        deadline: Instant,
        pass: PassFn,
        nonstop: NonStop,
    ) -> Result<Stop, OsError> {
        self.unless_vanished(deadline, pass, nonstop, |me| {
            me.cont_from_stop(deadline, pass, nonstop)
        })
    }

    fn cont_from_stop(
        &mut self,
        deadline: Instant,
        pass: PassFn,
        nonstop: NonStop,
    ) -> Result<Stop, OsError> {
        if self.catch_dirty() && !self.dead {
            // Which system calls stop changed: every thread stops while the filter is set.
            self.all_stop(pass)?;
            self.sync_catch()?;
        }
        // The program runs freely and may look at its CPU mask at any moment.
        self.unpin();
        if std::mem::take(&mut self.ticked) {
            // Everything still runs since the last tick: only the wait goes on.
            return self.run_until_event(deadline, pass, nonstop);
        }
        if let Some(tid) = self.partial.take() {
            // Only the last event's thread is stopped: it goes on alone, past its breakpoint
            // without lifting the int3, and nothing else is touched.
            match self.go_on_alone(tid, pass)? {
                GoOn::Resumed => {}
                GoOn::Stopped(stop) => return self.report(stop, nonstop, pass),
                GoOn::InPlace => {
                    self.stop_all(pass)?;
                    return self.cont_all(deadline, pass, nonstop);
                }
            }
            if let Some(stop) = self.queued.pop_front() {
                return self.report(stop, nonstop, pass);
            }
            return self.run_until_event(deadline, pass, nonstop);
        }
        if let Some(stop) = self.next_queued() {
            return Ok(stop);
        }
        self.cont_all(deadline, pass, nonstop)
    }

    /// Continues from a stop of every thread.
    fn cont_all(
        &mut self,
        deadline: Instant,
        pass: PassFn,
        nonstop: NonStop,
    ) -> Result<Stop, OsError> {
        if let Some(stop) = self.resume_all(deadline, pass)? {
            return Ok(stop);
        }
        self.run_until_event(deadline, pass, nonstop)
    }

    /// Resumes every thread for a run of the whole process tree, which waits for the events
    /// of every process itself (see [`take_event`](Self::take_event)): a stop that comes
    /// before everything runs (one kept from before, a step over a breakpoint that ends at
    /// another) is returned instead, with every thread stopped.
    pub(crate) fn launch(
        &mut self,
        deadline: Instant,
        pass: PassFn,
    ) -> Result<Option<Stop>, OsError> {
        if self.dead {
            // It ended while it was being stopped: its end is the stop.
            return Ok(self.next_queued());
        }
        if self.catch_dirty() {
            self.all_stop(pass)?;
            self.sync_catch()?;
        }
        self.unpin();
        self.all_stop(pass)?;
        if let Some(stop) = self.next_queued() {
            return Ok(Some(stop));
        }
        self.launched = true;
        self.resume_all(deadline, pass)
    }

    /// Books an event of this process that a run of the whole tree waited for: the stop to
    /// report, with every thread of the process stopped, or `None` when its thread went on.
    pub(crate) fn take_event(
        &mut self,
        event: WaitEvent,
        pass: PassFn,
    ) -> Result<Option<Stop>, OsError> {
        match self.handle(event, Mode::Running, pass)? {
            Some(stop) => self.settle(stop, pass).map(Some),
            None => Ok(None),
        }
    }

    /// Steps the threads parked on breakpoints past them, then resumes every thread; a stop
    /// met on the way is returned, settled.
    fn resume_all(&mut self, deadline: Instant, pass: PassFn) -> Result<Option<Stop>, OsError> {
        // A thread parked on a breakpoint it reported must first execute the original
        // instruction, alone; so must the selected thread if the user moved it onto one.
        // Threads whose hit was undone while everything stopped are resumed onto the int3
        // and hit it again, so no hit is lost or counted twice.
        for tid in self.thread_ids() {
            let Some(t) = self.threads.get(&tid) else {
                continue;
            };
            if t.state != RunState::Stopped {
                continue;
            }
            if !self.jumps.is_empty() {
                if let Some(stop) = self.leave_jump_bytes(tid, deadline, pass)? {
                    return self.settle(stop, pass).map(Some);
                }
            }
            let Some(t) = self.threads.get(&tid) else {
                continue;
            };
            let (parked_at, rewound) = (t.parked_at, t.rewound);
            // Only these two can need a step-over: no register read for the other threads.
            if parked_at.is_none() && (tid != self.selected || rewound) {
                continue;
            }
            let pc = self.pc(tid)?;
            let over =
                parked_at == Some(pc) || (tid == self.selected && !rewound && self.has_site(pc));
            if !over {
                continue;
            }
            let stop = self.step_thread(tid, deadline, pass)?;
            if !matches!(stop, Stop::Step { .. }) {
                return self.settle(stop, pass).map(Some);
            }
        }
        self.stop_all(pass)?;
        if let Some(stop) = self.next_queued() {
            return Ok(Some(stop));
        }
        for tid in self.thread_ids() {
            if self
                .threads
                .get(&tid)
                .is_some_and(|t| t.state == RunState::Stopped)
            {
                self.resume(tid)?;
            }
        }
        Ok(None)
    }

    pub(super) fn run_until_event(
        &mut self,
        deadline: Instant,
        pass: PassFn,
        nonstop: NonStop,
    ) -> Result<Stop, OsError> {
        let until = self.tick.filter(|t| *t < deadline);
        if let Some(t) = until {
            self.alarm.arm(t.saturating_duration_since(Instant::now()));
        }
        loop {
            let event = match self.next_event_or_signal(until.unwrap_or(deadline), true)? {
                Waited::Event(event) => event,
                Waited::Deadline if until.is_some_and(|_| Instant::now() < deadline) => {
                    self.ticked = true;
                    return Ok(Stop::Tick);
                }
                Waited::Deadline => {
                    self.stop_all(pass)?;
                    return Ok(Stop::Timeout {
                        tid: self.inspectable_thread(),
                    });
                }
                Waited::Signalled => {
                    self.stop_all(pass)?;
                    return Ok(Stop::Interrupted {
                        tid: self.inspectable_thread(),
                    });
                }
            };
            if let Some(stop) = self.handle(event, Mode::Running, pass)? {
                return self.report(stop, nonstop, pass);
            }
        }
    }

    /// Lets the thread of a stop reported alone go on: past the breakpoint it stopped at (by
    /// emulation or a displaced copy, see `displaced`), then resumed.
    fn go_on_alone(&mut self, tid: Tid, pass: PassFn) -> Result<GoOn, OsError> {
        let Some(t) = self.threads.get(&tid) else {
            return Ok(GoOn::Resumed);
        };
        if t.state != RunState::Stopped {
            return Ok(GoOn::Resumed);
        }
        let parked_at = t.parked_at;
        let pc = self.pc(tid)?;
        if self.jump_covering(pc).is_some_and(|site| site != pc) {
            // In the middle of a tracepoint's jump (the user stepped there): the original
            // bytes go back for its steps out, which the other threads must not see.
            return Ok(GoOn::InPlace);
        }
        if (parked_at == Some(pc) || self.has_site(pc)) && self.int3_in_memory(pc) {
            match self.step_over_displaced(tid, pc, pass)? {
                displaced::Outcome::Done => {}
                displaced::Outcome::InPlace => {
                    if let Some(t) = self.threads.get_mut(&tid) {
                        t.parked_at = Some(pc);
                    }
                    return Ok(GoOn::InPlace);
                }
                displaced::Outcome::Stopped(stop) => return Ok(GoOn::Stopped(stop)),
            }
        }
        if self.threads.contains_key(&tid) {
            self.resume(tid)?;
        }
        Ok(GoOn::Resumed)
    }

    /// The thread a stop of the whole process names: the selected one, unless it is stuck in
    /// the kernel and another one stopped.
    fn inspectable_thread(&self) -> Tid {
        let stopped = |t: &&Thread| t.state == RunState::Stopped;
        match self.threads.get(&self.selected) {
            Some(t) if t.stuck.is_some() => self
                .threads
                .values()
                .find(stopped)
                .map_or(self.selected, |t| t.tid),
            _ => self.selected,
        }
    }

    pub(super) fn resume(&mut self, tid: Tid) -> Result<(), OsError> {
        let sig = self.take_signal(tid);
        let group_stopped = self
            .threads
            .get(&tid)
            .is_some_and(|t| t.group_stop.is_some());
        // A job-control stop outlives the debugger's resume: the thread waits for SIGCONT
        // (PTRACE_CONT would make it run while its process is stopped).
        let resumed = if group_stopped && sig == 0 {
            ptrace::listen(tid).or_else(|_| self.resume_request(tid, 0))
        } else if sig != 0 {
            self.deliver_signal(tid, sig)
        } else {
            self.resume_request(tid, 0)
        };
        match resumed {
            Ok(()) => {}
            // Exiting under us: its exit report is on its way.
            Err(e) if e.is_gone() => {}
            Err(e) => return Err(e),
        }
        if let Some(thread) = self.threads.get_mut(&tid) {
            thread.mark_running();
        }
        Ok(())
    }

    /// PTRACE_SINGLESTEP, remembered: the trap it ends with is scry's.
    pub(super) fn single_step(&mut self, tid: Tid, sig: i32) -> Result<(), OsError> {
        ptrace::single_step(tid, sig)?;
        if let Some(t) = self.threads.get_mut(&tid) {
            t.stepped = true;
        }
        Ok(())
    }

    /// Whether a SIGTRAP with positive `code` (raised by the CPU or the kernel, not sent by
    /// a process) that is not an int3 is one of scry's: the end of its single step, or a
    /// watch hit of its debug registers (also one of a watchpoint removed since). Every other
    /// one is the program's: its own trap flag or `icebp` when scry did not step the thread,
    /// a perf event with sigtrap (TRAP_PERF), a branch trap.
    pub(super) fn trap_is_ours(&self, tid: Tid, code: i32) -> bool {
        match code {
            // A signal delivered by a step stops at its handler with code SIGTRAP.
            ptrace::TRAP_TRACE | ptrace::TRAP_BRKPT | libc::SIGTRAP => {
                self.threads.get(&tid).is_some_and(|t| t.stepped)
            }
            ptrace::TRAP_HWBKPT => true,
            _ => false,
        }
    }

    pub(super) fn take_signal(&mut self, tid: Tid) -> i32 {
        match self.threads.get_mut(&tid) {
            Some(t) if t.stop_kind == StopKind::Signal => std::mem::take(&mut t.pending_signal),
            _ => 0,
        }
    }

    /// Steps one thread, lifting a breakpoint under its pc for that one instruction.
    pub(super) fn step_thread(
        &mut self,
        tid: Tid,
        deadline: Instant,
        pass: PassFn,
    ) -> Result<Stop, OsError> {
        let pc = self.pc(tid)?;
        // A site the program wrote over holds its own code now: step that, and leave it.
        let lifted = self.sites.original(pc).filter(|_| self.int3_in_memory(pc));
        if let Some(orig) = lifted {
            self.mem.write(pc, &[orig])?;
        }
        let result = self.step_raw(tid, deadline, pass, lifted.is_some());
        if let Some(orig) = lifted {
            // Re-armed only over the byte it lifted: an instruction that rewrote its own
            // site leaves the program's code in place (the site then reads as overwritten).
            let mut now = [0u8];
            let untouched = self.mem.read(pc, &mut now).is_ok() && now[0] == orig;
            if untouched && !self.dead && self.sites.contains(pc) {
                let _ = self.mem.write(pc, &[INT3]);
            }
        }
        result
    }

    /// `lifted`: the instruction under a breakpoint is being executed with the int3 taken out.
    pub(super) fn step_raw(
        &mut self,
        tid: Tid,
        deadline: Instant,
        pass: PassFn,
        lifted: bool,
    ) -> Result<Stop, OsError> {
        let from = self.pc(tid)?;
        let sigaction = self.sigaction_in_step(tid);
        let mut sig = self.take_signal(tid);
        if sig != 0 && self.run_handlers {
            if let Some(ran) = self.run_handler_through(tid, sig, from, lifted, deadline, pass) {
                match ran? {
                    Some(stop) => return Ok(stop),
                    None => sig = 0,
                }
            }
        }
        self.single_step(tid, sig)?;
        self.mark(tid, RunState::Running, StopKind::Event);
        // A passing signal that arrives while the int3 is out waits until the instruction
        // under it has run: delivered now, the handler would return onto the re-armed int3
        // and the breakpoint would count a second hit for one arrival.
        let mut deferred = 0;
        let stop = self.step_loop(tid, from, deadline, pass, lifted, &mut deferred)?;
        if let (Some(action), Stop::Step { .. }) = (sigaction, stop) {
            self.sigaction_stepped(tid, action);
        }
        if deferred != 0 && !self.dead && self.threads.contains_key(&tid) {
            let pending = self
                .threads
                .get(&tid)
                .map(|t| t.pending_signal)
                .unwrap_or(0);
            if pending == 0 {
                self.hold_signal(tid, deferred);
            }
        }
        Ok(stop)
    }

    /// `from`: where the step began.
    fn step_loop(
        &mut self,
        tid: Tid,
        from: u64,
        deadline: Instant,
        pass: PassFn,
        lifted: bool,
        deferred: &mut i32,
    ) -> Result<Stop, OsError> {
        loop {
            let event = match self.event_of(tid, deadline, pass)? {
                Ok(event) => event,
                Err(stop) => return Ok(stop),
            };
            if event.tid() != tid || event.is_gone() {
                if let Some(stop) = self.handle(event, Mode::Hold, pass)? {
                    if stop.is_final() || event.tid() == tid {
                        return Ok(stop);
                    }
                    self.hold_stop(stop);
                }
                if !self.threads.contains_key(&tid) {
                    return Ok(Stop::ThreadExit { tid });
                }
                continue;
            }
            match event {
                WaitEvent::Signal {
                    signal: libc::SIGTRAP,
                    ..
                } => {
                    let info = ptrace::sig_info(tid)?;
                    // The trap flag firing (or a watch hit on the way): the step is done.
                    // SI_KERNEL is an int3; si_code <= 0 a SIGTRAP sent by a process; a
                    // perf event's trap the program's. Those are handled like any trap of
                    // the program's own.
                    if self.trap_is_ours(tid, info.code) {
                        self.mark(tid, RunState::Stopped, StopKind::Event);
                        self.after_our_trap(tid);
                        self.after_step_trap(tid);
                        match self.take_debug_trap(tid)? {
                            // A breakpoint in a debug register at the instruction being
                            // stepped: the CPU stops before it runs; with RF set the step
                            // goes through (a step from a breakpoint is not its hit).
                            Some(Stop::Breakpoint { addr, .. }) if addr == from => {
                                let mut regs = *self.regs(tid)?;
                                regs.eflags |= super::points::RF;
                                self.set_regs(tid, &regs)?;
                                self.single_step(tid, 0)?;
                                self.mark(tid, RunState::Running, StopKind::Event);
                                continue;
                            }
                            Some(stop) => return Ok(stop),
                            None => {}
                        }
                        let pc = self.pc(tid)?;
                        if self.sigaction.site == Some(pc) {
                            // Stepped onto libc's sigaction: followed as a hit would be.
                            self.entered_sigaction(tid);
                        }
                        return Ok(if self.has_site(pc) {
                            Stop::Breakpoint { tid, addr: pc }
                        } else {
                            Stop::Step { tid }
                        });
                    }
                    return Ok(self
                        .handle(event, Mode::Hold, pass)?
                        .unwrap_or(Stop::Step { tid }));
                }
                WaitEvent::Signal { signal, .. } if pass(signal) && lifted => {
                    *deferred = signal;
                    self.single_step(tid, 0)?;
                }
                WaitEvent::Signal { signal, .. } if pass(signal) => {
                    // Stepping by lines, a handler of the program's runs through to where
                    // the signal came (the instruction not run yet, or run: a system call).
                    if let Some(ran) = self.signal_in_line_step(tid, signal, from, deadline, pass) {
                        match ran? {
                            Some(stop) => return Ok(stop),
                            None => continue,
                        }
                    }
                    // Delivered as part of this step: the step ends at the handler's entry.
                    self.single_step(tid, signal)?;
                    if signal == libc::SIGTRAP {
                        self.entering_handler(tid);
                    }
                }
                WaitEvent::Signal { .. } | WaitEvent::Exec { .. } => {
                    return Ok(self
                        .handle(event, Mode::Hold, pass)?
                        .unwrap_or(Stop::Step { tid }));
                }
                WaitEvent::Clone { .. }
                | WaitEvent::Fork { .. }
                | WaitEvent::Vfork { .. }
                | WaitEvent::VforkDone { .. } => {
                    self.handle(event, Mode::Hold, pass)?;
                    self.single_step(tid, 0)?;
                    self.mark(tid, RunState::Running, StopKind::Event);
                }
                // A stale PTRACE_INTERRUPT or a group-stop: the instruction has not run yet.
                _ => {
                    self.single_step(tid, 0)?;
                }
            }
        }
    }

    pub(super) fn mark(&mut self, tid: Tid, state: RunState, kind: StopKind) {
        let thread = self
            .threads
            .entry(tid)
            .or_insert_with(|| Thread::new_stopped(tid));
        match state {
            RunState::Running => thread.mark_running(),
            RunState::Stopped => thread.mark_stopped(kind),
        }
    }

    pub(super) fn hold_signal(&mut self, tid: Tid, signal: i32) {
        self.mark(tid, RunState::Stopped, StopKind::Signal);
        if let Some(thread) = self.threads.get_mut(&tid) {
            thread.pending_signal = signal;
        }
    }
}
