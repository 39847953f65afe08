//! Resuming and stopping: single steps, continues, and the all-stop discipline.

use std::time::{Duration, Instant};

use super::sites::INT3;
use super::thread::{RunState, StopKind, Thread};
use super::{displaced, FollowFork, Inferior, NonStop, Stop};
use crate::os::ptrace::{self, SI_KERNEL};
use crate::os::wait::{wait, WaitEvent, WaitOutcome};
use crate::os::{interrupt, procfs, OsError, Tid};

/// What to do with threads other than the one an event came from.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
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

/// How a wait ended.
enum Waited {
    Event(WaitEvent),
    Deadline,
    /// scry itself got SIGINT/SIGTERM/SIGHUP.
    Signalled,
}

/// How long stop-all waits before asking whether a silent thread is stuck in the kernel.
const STUCK_AFTER: Duration = Duration::from_millis(300);

/// The signals that put a process into a job-control stop.
fn is_stop_signal(sig: i32) -> bool {
    matches!(
        sig,
        libc::SIGSTOP | libc::SIGTSTP | libc::SIGTTIN | libc::SIGTTOU
    )
}

/// Signals for which `pass(sig)` is true are delivered without a stop.
pub type PassFn<'a> = &'a dyn Fn(i32) -> bool;

impl Inferior {
    /// Arms the deadline for a run of steps or a continue; [`disarm`](Self::disarm) ends it.
    pub fn arm(&mut self, deadline: Instant) {
        self.run_deadline = Some(deadline);
        self.alarm
            .arm(deadline.saturating_duration_since(Instant::now()));
        if !self.dead {
            self.guard_sigtrap();
        }
    }

    /// Ends a run: every thread stopped (see [`all_stop`](Self::all_stop)), the deadline
    /// and any placement undone.
    pub fn disarm(&mut self, pass: PassFn) {
        let _ = self.all_stop(pass);
        self.run_deadline = None;
        self.trap_guard = None;
        self.alarm.disarm();
        self.unpin();
    }

    /// Steps the selected thread by one instruction; the others stay stopped.
    pub fn step(&mut self, deadline: Instant, pass: PassFn) -> Result<Stop, OsError> {
        self.all_stop(pass)?;
        if let Some(stop) = self.next_queued() {
            return Ok(stop);
        }
        let tid = self.selected;
        let pc = self.pc(tid)?;
        self.place_for_step(tid, pc);
        let stop = self.step_thread(tid, deadline, pass)?;
        self.settle(stop, pass)
    }

    /// Stops every thread if a stop was reported with only its own thread stopped (see
    /// [`NonStop`]): what every inspection of other threads and every end of a run needs.
    pub fn all_stop(&mut self, pass: PassFn) -> Result<(), OsError> {
        if self.partial.take().is_some() && !self.dead {
            self.stop_all(pass)?;
        }
        Ok(())
    }

    /// A stop was reported with only its thread stopped.
    pub fn is_partial(&self) -> bool {
        self.partial.is_some()
    }

    /// Ends a run on `stop`: every other thread stopped, the stopping thread selected, and a
    /// thread at a reported breakpoint marked as parked there.
    fn settle(&mut self, stop: Stop, pass: PassFn) -> Result<Stop, OsError> {
        if self.dead {
            return Ok(stop);
        }
        self.stop_all(pass)?;
        self.mark_event_thread(&stop);
        Ok(stop)
    }

    /// The oldest stop kept while everything was stopped, its thread selected: what is read
    /// at a stop (registers, the instruction of a watch hit) is that thread's.
    fn next_queued(&mut self) -> Option<Stop> {
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
        if self.dead || !nonstop.covers(&stop, self.rendezvous) {
            return self.settle(stop, pass);
        }
        self.mark_event_thread(&stop);
        self.partial = stop.tid();
        Ok(stop)
    }

    /// Resumes every thread until something worth reporting happens or `deadline` passes.
    pub fn cont(
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
                return self.settle(stop, pass);
            }
        }
        self.stop_all(pass)?;
        if let Some(stop) = self.next_queued() {
            return Ok(stop);
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
        self.run_until_event(deadline, pass, nonstop)
    }

    fn run_until_event(
        &mut self,
        deadline: Instant,
        pass: PassFn,
        nonstop: NonStop,
    ) -> Result<Stop, OsError> {
        loop {
            let event = match self.next_event_or_signal(deadline, true)? {
                Waited::Event(event) => event,
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

    fn resume(&mut self, tid: Tid) -> Result<(), OsError> {
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
    fn step_thread(&mut self, tid: Tid, deadline: Instant, pass: PassFn) -> Result<Stop, OsError> {
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
    fn step_raw(
        &mut self,
        tid: Tid,
        deadline: Instant,
        pass: PassFn,
        lifted: bool,
    ) -> Result<Stop, OsError> {
        let from = self.pc(tid)?;
        let sig = self.take_signal(tid);
        self.single_step(tid, sig)?;
        self.mark(tid, RunState::Running, StopKind::Event);
        // A passing signal that arrives while the int3 is out waits until the instruction
        // under it has run: delivered now, the handler would return onto the re-armed int3
        // and the breakpoint would count a second hit for one arrival.
        let mut deferred = 0;
        let stop = self.step_loop(tid, from, deadline, pass, lifted, &mut deferred)?;
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
            let event = match self.next_event_or_signal(deadline, true)? {
                Waited::Event(event) => event,
                Waited::Deadline => {
                    self.stop_all(pass)?;
                    return Ok(Stop::Timeout { tid });
                }
                Waited::Signalled => {
                    self.stop_all(pass)?;
                    return Ok(Stop::Interrupted { tid });
                }
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
                                regs.eflags |= 1 << 16;
                                self.set_regs(tid, &regs)?;
                                self.single_step(tid, 0)?;
                                self.mark(tid, RunState::Running, StopKind::Event);
                                continue;
                            }
                            Some(stop) => return Ok(stop),
                            None => {}
                        }
                        let pc = self.pc(tid)?;
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

    fn collect_stops(&mut self, hard: Instant, pass: PassFn) -> Result<(), OsError> {
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
    fn hold_stop(&mut self, stop: Stop) {
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
    fn mark_stuck(&mut self, all: bool) {
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
    fn forget_zombies(&mut self) {
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

    /// Waits for the next event from any thread; `None` when the deadline passed first.
    fn next_event(&mut self, deadline: Instant) -> Result<Option<WaitEvent>, OsError> {
        Ok(match self.next_event_or_signal(deadline, false)? {
            Waited::Event(e) => Some(e),
            Waited::Deadline | Waited::Signalled => None,
        })
    }

    /// Like [`next_event`](Self::next_event), and when `user` is set a SIGINT/SIGTERM to
    /// scry also ends the wait.
    fn next_event_or_signal(&mut self, deadline: Instant, user: bool) -> Result<Waited, OsError> {
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
            match wait(-1, false) {
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

    /// Books one wait event. Returns the stop to report, if it is one.
    fn handle(
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
                Ok(None)
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

    /// A thread held at an interrupt stop with a hardware trap still queued (it hit an int3
    /// or a watchpoint just as it was interrupted: the kernel reports the interrupt first).
    /// Left so, its pc would sit past an int3 that may be gone by the time it runs, and the
    /// trap would reach the program (its handler, or its death) after a breakpoint was
    /// removed or at detach. So it is let go at once to take the trap: the next report is
    /// that SIGTRAP, before any instruction of the program's, booked like any other (the pc
    /// rewound, the watch hit queued). True when it was let go.
    fn flush_trap(&mut self, tid: Tid) -> Result<bool, OsError> {
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

    /// A signal the user lets through without a stop: delivered now while running, held
    /// for the thread's next resume otherwise.
    fn pass_signal(&mut self, tid: Tid, signal: i32, mode: Mode) -> Result<Option<Stop>, OsError> {
        if mode == Mode::Running {
            self.deliver_signal(tid, signal)?;
            self.mark(tid, RunState::Running, StopKind::Event);
        } else {
            self.hold_signal(tid, signal);
        }
        Ok(None)
    }

    fn continue_or_hold(&mut self, tid: Tid, mode: Mode) -> Result<(), OsError> {
        self.continue_or_hold_as(tid, mode, StopKind::Event)
    }

    /// Like [`continue_or_hold`](Self::continue_or_hold) for a stop of `kind`.
    fn continue_or_hold_as(&mut self, tid: Tid, mode: Mode, kind: StopKind) -> Result<(), OsError> {
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

    fn thread_gone(&mut self, tid: Tid, stop: Stop, mode: Mode) -> Option<Stop> {
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
    fn is_early_child(&self, event: &WaitEvent) -> bool {
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
    fn release_child(&mut self, child: Tid, shared_memory: bool) -> Result<(), OsError> {
        // The child starts in a stop of its own; it must be collected before it can be let go.
        if !self.collect_child(child) {
            return Ok(());
        }
        let sites: Vec<(u64, u8)> = self
            .sites
            .addrs()
            .into_iter()
            .filter_map(|a| Some((a, self.sites.original(a)?)))
            .collect();
        if shared_memory {
            for (addr, orig) in &sites {
                let _ = self.mem.write(*addr, &[*orig]);
            }
            self.lifted_for_vfork = sites.iter().map(|(a, _)| *a).collect();
        } else if !sites.is_empty() {
            if let Ok(child_mem) = crate::os::memory::ProcMem::open(child) {
                for (addr, orig) in &sites {
                    let _ = child_mem.write(*addr, &[*orig]);
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
    fn restore_lifted_sites(&mut self) {
        for addr in std::mem::take(&mut self.lifted_for_vfork) {
            if self.sites.contains(addr) {
                let _ = self.mem.write(addr, &[INT3]);
            }
        }
    }

    /// exec replaced the image: old breakpoint bytes, threads and the mem fd are stale.
    fn after_exec(&mut self) -> Result<(), OsError> {
        self.sites = Default::default();
        // exec emptied the debug registers too.
        self.hw_sites.clear();
        self.watch = Default::default();
        self.dr7 = 0;
        self.scratch = None;
        self.partial = None;
        self.rendezvous = None;
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
