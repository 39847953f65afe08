//! Run control: what `cont()`, `step(n)`, `finish()` and `next()` do to the target, owned by
//! the Rust core. A run is a loop of legs (one instruction, or a continue up to the next
//! event) over the session; between legs it decides, from lines, frames and the stack, where
//! the run ends.
//!
//! The front end (the script layer) is called back through [`Front`] for every event its
//! listeners may decide on (BugStalker's hook): the run hands it the stop and goes on or ends
//! by its verdict. The front end never steers the loop itself, and the loop never knows what
//! a listener is: it knows only events, verdicts and the session. A second backend (a remote
//! stub, a recording) gets the same stepping through the same session calls.
//!
//! What this is not: a scheduler across processes (the selected process runs, the others
//! stay as they are), nor a place that describes stops for users (the session does).

mod finish;
mod laps;
mod next;

use std::time::Instant;

use crate::session::{
    Leg, Reason, ReturnValue, Session, SessionError, StopInfo, StopKind, TypedValue,
};

pub(crate) use finish::{finish, reverse_finish};
pub(crate) use next::next;

/// Events a front end's listeners may decide on, one per listener type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Event {
    Step,
    Breakpoint,
    Watchpoint,
    Signal,
    Syscall,
    Thread,
    Library,
    Exit,
    /// Tracepoint records (never a stop: the program ran on).
    Trace,
}

impl Event {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Event::Step => "step",
            Event::Breakpoint => "breakpoint",
            Event::Watchpoint => "watchpoint",
            Event::Signal => "signal",
            Event::Syscall => "syscall",
            Event::Thread => "thread",
            Event::Library => "library",
            Event::Exit => "exit",
            Event::Trace => "trace",
        }
    }

    /// The event a stop is for its listeners, if any listens for its kind.
    fn of(reason: Reason) -> Option<Event> {
        Some(match reason {
            Reason::Breakpoint => Event::Breakpoint,
            Reason::Watchpoint => Event::Watchpoint,
            Reason::Signal => Event::Signal,
            Reason::Syscall => Event::Syscall,
            Reason::ThreadStart | Reason::ThreadExit => Event::Thread,
            Reason::Library => Event::Library,
            Reason::Exited | Reason::Killed => Event::Exit,
            _ => return None,
        })
    }
}

/// What the front end's listeners said about an event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    Stop,
    Continue,
    /// Nobody decided: the run does what it would do with no listener.
    Unsaid,
}

/// Why a run ended before it could say how.
#[derive(Debug)]
pub(crate) enum RunError {
    Session(SessionError),
    /// The front end failed (a listener threw, the script's budget ran out): the front end
    /// keeps its own error and reports it; the run only cleaned up.
    Front,
}

impl From<SessionError> for RunError {
    fn from(e: SessionError) -> Self {
        RunError::Session(e)
    }
}

pub(crate) type RunResult<T> = std::result::Result<T, RunError>;

/// The front end a run calls back. The session is lent for one call at a time, so a listener
/// the front end runs inside [`event`](Front::event) can use the session itself.
pub(crate) trait Front {
    /// Runs `f` on the session.
    fn session<R>(&self, f: impl FnOnce(&mut Session) -> R) -> RunResult<R>;

    /// Whether any listener would see events of this kind (the others are not handed over).
    fn listens(&self, event: Event) -> bool;

    /// Hands a stop to the listeners of `event`; the latest leg's stop is `stop`.
    /// `stop` may be relabelled by the front (the breakpoint that fired, of several at one
    /// address).
    fn event(&self, event: Event, stop: &mut StopInfo) -> RunResult<Verdict>;

    /// Each leg's stop as it comes (booked, not described).
    fn leg(&self, stop: &StopInfo);

    /// A batch of quiet steps made progress (the live view may show it).
    fn stepping(&self, done: u64, asked: u64);

    /// The latest leg's stop as the front end keeps it (a listener may have found more of it,
    /// such as a watchpoint's culprit).
    fn latest(&self) -> Option<StopInfo>;

    /// Hands tracepoint records to the `trace` listeners; `Stop` when one asked for a stop
    /// (the id of its tracepoint with it).
    fn trace(&self, records: Vec<crate::session::TraceRecord>) -> RunResult<Option<u32>>;

    /// A session call that may fail.
    fn call<R>(&self, f: impl FnOnce(&mut Session) -> crate::session::Result<R>) -> RunResult<R> {
        Ok(self.session(f)??)
    }
}

/// How a run ended: its stop, described, and for `finish()` an aggregate the function
/// returned (which only the front end can print, through its printers).
pub(crate) struct RunEnd {
    pub stop: StopInfo,
    pub returned_aggregate: Option<TypedValue>,
}

/// What the last stop of a run is, for its description.
#[derive(Clone, Copy)]
enum EndAs {
    /// As it came.
    Plain,
    /// A step(n) batch: how many of how many steps were made.
    Steps(u64, u64),
    /// The end of a `next()`, with this many innermost inlined calls shown as not entered.
    Step(Option<usize>),
    /// The end of a `finish()` of the function at this pc.
    Finish(u64),
    /// The end of a `finish()` out of an inlined call, with this many innermost inlined
    /// calls beginning at the stop shown as not entered: no value (nothing returned one).
    FinishInlined(Option<usize>),
}

/// What a stop at the catch site was to a run over a call (see [`Run::caught`]).
enum Caught {
    /// Not at the catch site.
    No,
    /// Another thread's handler, or one inside the call: the run goes on.
    Deeper,
    /// The exception was caught in the frame or an outer one: now in its handler.
    Handler,
    /// Another stop ended the run on the way into the handler.
    Ended(Box<StopInfo>),
}

/// What one instruction of a line stepper did.
enum Stepped {
    /// The instruction ran (a call as a whole, to its return).
    On(crate::symbols::Insn),
    /// Another stop ended the run (boxed: a stop is ten times an instruction's size).
    Ended(Box<StopInfo>),
}

/// One run in progress: the front end and the deadline every leg keeps.
struct Run<'f, F: Front> {
    front: &'f F,
    deadline: Instant,
    /// scry's own breakpoints in the target for this run (return addresses).
    temp_sites: Vec<u64>,
    /// Where C++ catch handlers and Rust's catch_unwind begin (see
    /// [`catch_sites`](Self::catch_sites)), once looked up.
    catch_sites: Option<Vec<u64>>,
}

impl<'f, F: Front> Run<'f, F> {
    /// Arms the deadline. Every run ends through [`finish_run`], whatever way it ends.
    fn begin(front: &'f F, deadline: Instant) -> RunResult<Self> {
        front.call(|s| s.arm(deadline))?;
        Ok(Run {
            front,
            deadline,
            temp_sites: Vec::new(),
            catch_sites: None,
        })
    }

    /// One instruction on the selected thread.
    fn step(&self) -> RunResult<StopInfo> {
        let deadline = self.deadline;
        self.leg(|s| s.step(deadline))
    }

    /// One instruction of a step by lines: a signal handler it would enter runs through.
    fn line_step(&self) -> RunResult<StopInfo> {
        let deadline = self.deadline;
        self.leg(|s| s.line_step(deadline))
    }

    /// Runs to the next event. While tracepoints' probes are in the program, the wait gives
    /// way every few milliseconds and their records go to the listeners, the program
    /// running on; a listener that asks for a stop ends the leg with every thread stopped.
    fn cont(&self) -> RunResult<StopInfo> {
        let deadline = self.deadline;
        loop {
            let leg = self.front.session(|s| s.cont_leg(deadline))??;
            let asked = self.deliver_traces()?;
            match leg {
                Leg::Stop(mut stop) => {
                    if let Some(id) = asked {
                        // Read only when the program had already come to this stop.
                        stop.notes.push(format!(
                            "tracepoint {id}'s listener asked for a stop; the program had reached this one first"
                        ));
                    }
                    self.front.leg(&stop);
                    return Ok(*stop);
                }
                Leg::Tick => {
                    if let Some(id) = asked {
                        let stop = self.front.call(|s| s.trace_stop(id))?;
                        self.front.leg(&stop);
                        return Ok(stop);
                    }
                }
            }
        }
    }

    /// The records read from the probes so far, to the listeners: the id of a tracepoint
    /// whose listener asked for a stop.
    fn deliver_traces(&self) -> RunResult<Option<u32>> {
        let mut asked = None;
        if !self.front.listens(Event::Trace) {
            return Ok(None);
        }
        loop {
            let batch = self.front.session(|s| s.take_trace_records(4096))?;
            if batch.is_empty() {
                return Ok(asked);
            }
            if let Some(id) = self.front.trace(batch)? {
                asked.get_or_insert(id);
            }
        }
    }

    fn leg(
        &self,
        f: impl FnOnce(&mut Session) -> crate::session::Result<StopInfo>,
    ) -> RunResult<StopInfo> {
        let stop = self.front.session(f)??;
        self.front.leg(&stop);
        Ok(stop)
    }

    fn event(&self, event: Event, stop: &mut StopInfo) -> RunResult<Verdict> {
        if self.front.listens(event) {
            self.front.event(event, stop)
        } else {
            Ok(Verdict::Unsaid)
        }
    }

    /// What a run does with a stop that is not its own business: thread events and library
    /// changes go on unless a listener stops them; a breakpoint, watchpoint, signal or system
    /// call goes on when a listener lets it through; anything else ends the run. True when
    /// the run goes on.
    fn keep_going(&self, stop: &mut StopInfo) -> RunResult<bool> {
        let reason = stop.reason();
        let Some(event) = Event::of(reason) else {
            return Ok(false);
        };
        let verdict = self.event(event, stop)?;
        Ok(match event {
            Event::Thread | Event::Library => verdict != Verdict::Stop,
            Event::Exit => false,
            _ => verdict == Verdict::Continue,
        })
    }

    /// Puts one of scry's own breakpoints at `addr` for the rest of this run.
    fn temp_site(&mut self, addr: u64) -> RunResult<()> {
        self.front.call(|s| s.temp_site(addr, true))?;
        self.temp_sites.push(addr);
        Ok(())
    }

    /// Takes the breakpoint at `addr` out again (a process that ended meanwhile has none).
    fn drop_temp_site(&mut self, addr: u64) {
        if let Some(i) = self.temp_sites.iter().position(|a| *a == addr) {
            self.temp_sites.swap_remove(i);
            let _ = self.front.session(|s| s.temp_site(addr, false));
        }
    }

    /// Executes the selected thread's next instruction, a call as a whole (run at full speed
    /// to its return address).
    fn step_over(&mut self) -> RunResult<Stepped> {
        let insn = self.next_insn()?;
        self.step_over_insn(insn)
    }

    /// The selected thread's next instruction, decoded.
    fn next_insn(&self) -> RunResult<crate::symbols::Insn> {
        self.front.call(|s| {
            let pc = s.pc()?;
            let insns = s.disasm(pc, 1)?;
            insns.into_iter().next().ok_or_else(|| {
                SessionError::Invalid(format!("cannot decode an instruction at {pc:#x}"))
            })
        })
    }

    /// `step_over` of `insn`, the next instruction already decoded.
    fn step_over_insn(&mut self, insn: crate::symbols::Insn) -> RunResult<Stepped> {
        if insn.mnemonic == "call" {
            let ret = insn.addr + insn.len as u64;
            if let Some(stop) = self.over_call(ret)? {
                return Ok(Stepped::Ended(Box::new(stop)));
            }
        } else {
            let mut stop = self.line_step()?;
            if stop.reason() != Reason::Step && !self.keep_going(&mut stop)? {
                return Ok(Stepped::Ended(Box::new(stop)));
            }
        }
        Ok(Stepped::On(insn))
    }

    /// Runs over the call about to be made, to its return address `ret` at full speed:
    /// `None` once it returned (the stack as high as at the call), or the stop that ended
    /// the run.
    fn over_call(&mut self, ret: u64) -> RunResult<Option<StopInfo>> {
        let sp_call = self.sp()?;
        let tid = self.front.call(|s| s.selected_tid())?;
        // Another thread returning there is not this call returning, nor is a deeper call.
        // A C++ exception the call throws and this frame (or an outer one) catches never
        // comes back to `ret`: the call is over where its handler begins. Without that,
        // next() over a call that threw ran on through the handler to the loop's next turn,
        // as if nothing had been thrown.
        self.run_until_site_or_catch(
            ret,
            |run, stop| Ok(stop.tid == Some(tid) && run.sp()? >= sp_call),
            Some((tid, sp_call)),
        )
    }

    /// Where caught exceptions go: libstdc++'s `__cxa_begin_catch`, which every C++ handler
    /// calls first, and Rust's `std::panicking::catch_unwind::cleanup` (`try::cleanup`
    /// before rustc 1.87), which `catch_unwind` calls on a panic it caught (looked up once
    /// a run; empty in a program with neither).
    pub(super) fn catch_sites(&mut self) -> RunResult<Vec<u64>> {
        if let Some(c) = &self.catch_sites {
            return Ok(c.clone());
        }
        // ABI names, looked up raw: no demangling, no module list read again on a miss
        // (a C program asks at every next()). Rust's are looked up by path only in a
        // program with Rust's `rust_eh_personality`.
        let c = self.front.session(|s| {
            let store = s.symbol_store();
            let mut sites: Vec<u64> = store
                .lookup_raw("__cxa_begin_catch")
                .map(|a| a.0)
                .into_iter()
                .collect();
            if store.lookup_raw("rust_eh_personality").is_some() {
                for path in [
                    "std::panicking::catch_unwind::cleanup",
                    "std::panicking::try::cleanup",
                ] {
                    if let Ok(Some(a)) = store.try_resolve(path) {
                        sites.push(a.0);
                        break;
                    }
                }
            }
            sites
        })?;
        self.catch_sites = Some(c.clone());
        Ok(c)
    }

    /// A stop at the catch site: thread `tid` entering a handler in the frame whose stack
    /// pointer is `sp_frame` or an outer one (an exception thrown below it is caught there)
    /// is run out of `__cxa_begin_catch`, into the handler.
    fn caught(&mut self, stop: &StopInfo, tid: i32, sp_frame: u64) -> RunResult<Caught> {
        let Some(sites) = &self.catch_sites else {
            return Ok(Caught::No);
        };
        if stop.reason() != Reason::Breakpoint || !stop.pc.is_some_and(|pc| sites.contains(&pc)) {
            return Ok(Caught::No);
        }
        let sp = self.sp()?;
        // At its entry the handler's frame is just above the return address.
        if stop.tid != Some(tid) || sp.wrapping_add(8) < sp_frame {
            return Ok(Caught::Deeper);
        }
        let back = self.front.call(|s| s.read_memory(sp, 8))?;
        let ret = u64::from_le_bytes(back.try_into().unwrap_or([0; 8]));
        match self.run_until_site(ret, |run, st| Ok(st.tid == Some(tid) && run.sp()? > sp))? {
            None => Ok(Caught::Handler),
            Some(other) => Ok(Caught::Ended(Box::new(other))),
        }
    }

    /// Runs the selected thread to `addr` (a function's body, from its entry): `None` once
    /// there, or the stop that ended the run.
    fn run_to(&mut self, addr: u64) -> RunResult<Option<StopInfo>> {
        if self.front.call(|s| s.pc())? == addr {
            return Ok(None);
        }
        let tid = self.front.call(|s| s.selected_tid())?;
        // Another thread running the same code passes by.
        self.run_until_site(addr, |_, stop| Ok(stop.tid == Some(tid)))
    }

    /// Runs at full speed to a temporary site at `addr` until `arrived` says a stop there
    /// is the one waited for: `None` then, or the stop that ended the run. Other stops there
    /// (another thread's, a deeper call's) go on unless a user's breakpoint is there too.
    fn run_until_site(
        &mut self,
        addr: u64,
        arrived: impl Fn(&Self, &StopInfo) -> RunResult<bool>,
    ) -> RunResult<Option<StopInfo>> {
        self.run_until_site_or_catch(addr, arrived, None)
    }

    /// [`run_until_site`](Self::run_until_site), and with `catch` (a thread and its frame's
    /// stack pointer) also until a C++ exception is caught in that frame or an outer one:
    /// `None` then too, the thread in the handler (see [`caught`](Self::caught)).
    fn run_until_site_or_catch(
        &mut self,
        addr: u64,
        arrived: impl Fn(&Self, &StopInfo) -> RunResult<bool>,
        catch: Option<(i32, u64)>,
    ) -> RunResult<Option<StopInfo>> {
        let handlers = match catch {
            Some(_) => self.catch_sites()?,
            None => Vec::new(),
        };
        for &c in &handlers {
            self.temp_site(c)?;
        }
        self.temp_site(addr)?;
        let outcome = (|| loop {
            let mut stop = self.cont()?;
            if stop.reason() == Reason::Breakpoint && stop.pc == Some(addr) {
                if arrived(self, &stop)? {
                    return Ok(None);
                }
                if stop.breakpoint_id().is_none() {
                    continue;
                }
            }
            if let Some((tid, sp_frame)) = catch {
                match self.caught(&stop, tid, sp_frame)? {
                    Caught::Handler => return Ok(None),
                    Caught::Ended(stop) => return Ok(Some(*stop)),
                    Caught::Deeper if stop.breakpoint_id().is_none() => continue,
                    Caught::Deeper | Caught::No => {}
                }
            }
            if !self.keep_going(&mut stop)? {
                return Ok(Some(stop));
            }
        })();
        self.drop_temp_site(addr);
        for c in handlers {
            self.drop_temp_site(c);
        }
        outcome
    }

    /// The latest leg's stop.
    fn latest(&self) -> StopInfo {
        self.front.latest().unwrap_or(StopInfo::new(StopKind::Here))
    }

    /// The selected thread's stack pointer.
    fn sp(&self) -> RunResult<u64> {
        self.front.call(|s| s.regs().map(|r| r.rsp))
    }
}

/// Ends a run however it went: scry's breakpoints out, every thread stopped again (a
/// listener may have let the others run); then the last stop described as `end` says.
fn finish_run<F: Front>(
    mut run: Run<'_, F>,
    ended: RunResult<(StopInfo, EndAs)>,
) -> RunResult<RunEnd> {
    for addr in std::mem::take(&mut run.temp_sites) {
        let _ = run.front.session(|s| s.temp_site(addr, false));
    }
    let front = run.front;
    front.session(|s| s.disarm())?;
    // What the probes wrote up to the end (a stop asked now is too late: the run ended).
    let late = run.deliver_traces()?;
    let (last, end) = ended?;
    let mut stop = front.latest().unwrap_or(last);
    if let Some(id) = late {
        stop.notes.push(format!(
            "tracepoint {id}'s listener asked for a stop; the program had reached this one first"
        ));
    }
    front.call(|s| {
        // Calls inlined at pc shown as not entered yet are left out of the stop's place.
        if let EndAs::Step(Some(n)) | EndAs::FinishInlined(Some(n)) = end {
            s.hide_inlines(n)?;
        }
        if let EndAs::Finish(_) = end {
            // Calls inlined into the caller that begin at the return address (a temporary's
            // destructor after `use(make())`) are not entered yet: the stop is the caller's,
            // on the line that made the call, as gdb shows it.
            let f = s.line_frames()?;
            if f.entries > 0 && f.entries < f.lines.len() {
                s.hide_inlines(f.entries)?;
            }
        }
        s.note_shown_regs();
        s.describe(&mut stop);
        let mut returned_aggregate = None;
        match end {
            EndAs::Plain => {}
            EndAs::Steps(done, asked) => stop.steps = Some((done, asked)),
            EndAs::Step(_) => stop.kind = StopKind::Step,
            // An inlined call has no return: nothing is known of what it gave back.
            EndAs::FinishInlined(_) => stop.kind = StopKind::Finish(ReturnValue::default()),
            EndAs::Finish(fn_pc) => returned_aggregate = s.describe_return(&mut stop, fn_pc),
        }
        Ok(RunEnd {
            stop,
            returned_aggregate,
        })
    })
}

/// `cont()`: runs until an event ends the run (or the deadline does).
pub(crate) fn cont<F: Front>(front: &F, deadline: Instant) -> RunResult<RunEnd> {
    // A user's continue runs every process of a tree (see session's `tree`).
    front.session(|s| s.set_whole_tree(true))?;
    let ended = (|| {
        let run = Run::begin(front, deadline)?;
        let ended = (|| loop {
            let mut stop = run.cont()?;
            if !run.keep_going(&mut stop)? {
                return Ok((stop, EndAs::Plain));
            }
        })();
        finish_run(run, ended)
    })();
    front.session(|s| s.set_whole_tree(false))?;
    ended
}

/// `step(n)`: `n` instructions of the selected thread, each a `step` event; a breakpoint or
/// watchpoint met on the way is one too, and ends the batch unless a listener lets it go.
pub(crate) fn step<F: Front>(front: &F, n: u64, deadline: Instant) -> RunResult<RunEnd> {
    let run = Run::begin(front, deadline)?;
    let quiet = [
        Event::Step,
        Event::Breakpoint,
        Event::Watchpoint,
        Event::Signal,
        Event::Thread,
        Event::Exit,
    ]
    .iter()
    .all(|e| !front.listens(*e));
    let ended = if quiet {
        quiet_steps(&run, n)
    } else {
        listened_steps(&run, n)
    };
    finish_run(run, ended)
}

/// Steps nobody listens to: the whole batch without a call to the front end per step, only
/// progress for the live view.
fn quiet_steps<F: Front>(run: &Run<'_, F>, n: u64) -> RunResult<(StopInfo, EndAs)> {
    let mut done = 0;
    let mut last = None;
    while done < n {
        let deadline = run.deadline;
        let stop = run.front.call(|s| s.step_raw(deadline))?;
        if matches!(
            stop,
            crate::session::RawStop::Step { .. } | crate::session::RawStop::Breakpoint { .. }
        ) {
            done += 1;
        }
        run.front.stepping(done, n);
        last = Some(stop);
        if !matches!(stop, crate::session::RawStop::Step { .. }) {
            break;
        }
    }
    let info = match last {
        Some(stop) => run.front.call(|s| s.book_stop(stop))?,
        // step(0): where the thread is.
        None => run.front.call(|s| {
            s.pc().map(|pc| StopInfo {
                pc: Some(pc),
                ..StopInfo::new(StopKind::Here)
            })
        })?,
    };
    run.front.leg(&info);
    Ok((info, EndAs::Steps(done, n)))
}

fn listened_steps<F: Front>(run: &Run<'_, F>, n: u64) -> RunResult<(StopInfo, EndAs)> {
    let mut done = 0;
    loop {
        let mut stop = run.step()?;
        let reason = stop.reason();
        let counts = matches!(
            reason,
            Reason::Step | Reason::Breakpoint | Reason::Watchpoint
        );
        let go_on = match reason {
            Reason::ThreadStart | Reason::ThreadExit => {
                run.event(Event::Thread, &mut stop)? != Verdict::Stop
            }
            _ if counts => {
                done += 1;
                if run.event(Event::Step, &mut stop)? == Verdict::Stop {
                    false
                } else if reason == Reason::Step {
                    true
                } else {
                    run.keep_going(&mut stop)?
                }
            }
            Reason::Signal => run.event(Event::Signal, &mut stop)? == Verdict::Continue,
            Reason::Exited | Reason::Killed => {
                run.event(Event::Exit, &mut stop)?;
                false
            }
            _ => false,
        };
        if !go_on || done >= n {
            return Ok((stop, EndAs::Steps(done, n)));
        }
    }
}
